import Capture

extension DeviceConfiguration {
    /// Applies the settings to a device through the public Capture API, in a fixed order: focus (point,
    /// then mode or lens position), exposure (point, then mode or custom duration and gain, then bias),
    /// white balance (mode or temperature), torch, flash, zoom, low-light boost, then `controls` in the
    /// order written. The caller holds the device's configuration lock. Stops at the first error (the
    /// settings before it stay applied); returns the changes made.
    public func apply(to device: CaptureDevice) throws(CaptureError) -> [DeviceChange] {
        var changes: [DeviceChange] = []
        if let focusPoint { changes.append(try device.setFocusPointOfInterest(focusPoint)) }
        if let lensPosition {
            changes.append(try device.setFocusModeLocked(lensPosition: lensPosition))
        } else if let focusMode {
            changes.append(try device.setFocusMode(focusMode))
        }
        if let exposurePoint { changes.append(try device.setExposurePointOfInterest(exposurePoint)) }
        if exposureDuration != nil || gain != nil {
            changes.append(try device.setExposureModeCustom(duration: exposureDuration, gain: gain.map(Int64.init)))
        } else if let exposureMode {
            changes.append(try device.setExposureMode(exposureMode))
        }
        if let exposureBias { changes.append(try device.setExposureTargetBias(exposureBias)) }
        if let whiteBalanceTemperature {
            changes.append(try device.setWhiteBalanceTemperature(Int64(whiteBalanceTemperature)))
        } else if let whiteBalanceMode {
            changes.append(try device.setWhiteBalanceMode(whiteBalanceMode))
        }
        if let torchLevel, torchMode ?? .on == .on {
            changes.append(try device.setTorchModeOn(level: torchLevel))
        } else if let torchMode {
            changes.append(try device.setTorchMode(torchMode))
        }
        if let flashMode { changes.append(try device.setFlashMode(flashMode)) }
        if let zoom { changes.append(try device.setVideoZoomFactor(zoom)) }
        if let lowLightBoost { changes.append(try device.setAutomaticallyEnablesLowLightBoostWhenAvailable(lowLightBoost)) }
        for control in controls { changes.append(try device.setValue(control.value, forControl: control.key)) }
        return changes
    }
}

/// A `KEY=VALUE` setting that does not read: what is wrong with it.
public struct DeviceSettingError: Error, Hashable, Sendable, CustomStringConvertible {
    /// The setting as written.
    public var setting: String
    /// What is wrong, and what would be right.
    public var message: String

    /// The setting and what is wrong with it: `SETTING: MESSAGE`.
    public var description: String { "\(setting): \(message)" }
}

extension DeviceConfiguration {
    /// Reads one setting written `KEY=VALUE`, as `capture controls` takes it: a `configure-device` key
    /// (`zoom=2`, `focus-mode=continuous`, `exposure-duration=0.01`, `focus-point=0.5,0.5`) with the
    /// value grammar of `.pipeline` files, or any other word as a control's key (`brightness=200`,
    /// `power_line_frequency=50 Hz`), like an item of `controls=`. The result's input is `camera`.
    public static func parse(setting: String) throws(DeviceSettingError) -> DeviceConfiguration {
        guard let equals = setting.firstIndex(of: "="), equals != setting.startIndex else {
            throw DeviceSettingError(setting: setting, message: "a setting is KEY=VALUE, like zoom=2 or brightness=200")
        }
        let key = String(setting[..<equals])
        let value = String(setting[setting.index(after: equals)...])
        let field: String
        if Vocabulary.deviceSettingKeys.contains(key), key != "controls" {
            let parts = value.split(separator: ",", omittingEmptySubsequences: false)
            if key.hasSuffix("-point"), parts.count == 2 {
                field = "\(key)=< \(parts[0]), \(parts[1]) >"
            } else if !value.isEmpty, value.utf8.allSatisfy(Lexer.isStringByte) {
                field = "\(key)=\(value)"
            } else {
                field = "\(key)=\(PipelineWriter.word(value))"
            }
        } else {
            field = "controls=\(PipelineWriter.word(setting))"
        }
        let text = "input, name=camera, device=test-pattern\nstart\nconfigure-device, input=camera, \(field)\n"
        let document: PipelineDocument
        do {
            document = try PipelineDocument.parse(text, file: "setting")
        } catch {
            throw DeviceSettingError(setting: setting, message: error.diagnostics.map(\.message).joined(separator: "; "))
        }
        guard case .configureDevice(let configuration)? = document.scenario.last?.action else {
            throw DeviceSettingError(setting: setting, message: "not a device setting")
        }
        return configuration
    }
}
