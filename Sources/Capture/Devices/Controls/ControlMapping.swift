import Foundation

/// The pure mapping between AVFoundation's device features and V4L2 controls: control descriptions
/// in, capabilities, settings and control writes out. No device is touched here, so the table tests of
/// `ControlMappingTests` run on described devices.
enum ControlMapping {
    /// The largest digital zoom of the crop in the source segment.
    static let cropZoomLimit = 8.0
    /// How long a one-shot mode runs its automatic mode before it locks.
    static let settleTime = Duration.seconds(1)

    // MARK: Capabilities

    /// What a device with these controls can do. `cropZoom`: the session can zoom by cropping (a camera
    /// without a zoom control).
    static func capabilities(of controls: [DeviceControl], cropZoom: Bool) -> DeviceCapabilities {
        let c = Controls(controls)
        var caps = DeviceCapabilities()
        let focusAuto = c.settable(V4L2Control.focusAuto) != nil
        let focusAbsolute = c.settable(V4L2Control.focusAbsolute) != nil
        if focusAuto || focusAbsolute { caps.focusModes.insert(.locked) }
        if focusAuto { caps.focusModes.insert(.continuousAutoFocus) }
        if focusAuto || c.settable(V4L2Control.autoFocusStart) != nil { caps.focusModes.insert(.autoFocus) }
        caps.isLockingFocusWithCustomLensPositionSupported = focusAbsolute
        if c.settable(V4L2Control.regionOfInterestRect) != nil, let auto = c.settable(V4L2Control.regionOfInterestAuto) {
            caps.isFocusPointOfInterestSupported = auto.maximum & V4L2Control.roiAutoFocus != 0
            caps.isExposurePointOfInterestSupported = auto.maximum & V4L2Control.roiAutoExposure != 0
        }

        let exposureAbsolute = c.settable(V4L2Control.exposureAbsolute)
        let gain = c.settable(V4L2Control.gain) ?? c.settable(V4L2Control.analogueGain)
        if let auto = c.settable(V4L2Control.exposureAuto) {
            let automatic = automaticExposureItem(auto) != nil
            let manual = auto.hasItem(V4L2Control.exposureManualMode)
            if automatic { caps.exposureModes.insert(.continuousAutoExposure) }
            if manual { caps.exposureModes.insert(.locked) }
            if automatic && manual { caps.exposureModes.insert(.autoExpose) }
            if manual && (exposureAbsolute != nil || gain != nil) { caps.exposureModes.insert(.custom) }
        } else if exposureAbsolute != nil {
            caps.exposureModes.formUnion([.locked, .custom])
        }
        if let exposureAbsolute {
            caps.exposureDurationRange = exposureDuration(exposureAbsolute.minimum)...exposureDuration(exposureAbsolute.maximum)
        }
        if let gain { caps.gainRange = gain.minimum...gain.maximum }
        if let bias = c.settable(V4L2Control.exposureBias) {
            let values = biasValues(bias).map(\.ev)
            if let low = values.min(), let high = values.max() { caps.exposureTargetBiasRange = low...high }
        }

        let whiteBalanceAuto = c.settable(V4L2Control.whiteBalanceAutomatic) != nil
        let preset = c.settable(V4L2Control.presetWhiteBalance)
        let continuous = whiteBalanceAuto || preset?.hasItem(1) == true
        if continuous { caps.whiteBalanceModes.insert(.continuousAutoWhiteBalance) }
        if whiteBalanceAuto || preset?.hasItem(0) == true { caps.whiteBalanceModes.insert(.locked) }
        if continuous || c.settable(V4L2Control.doWhiteBalance) != nil { caps.whiteBalanceModes.insert(.autoWhiteBalance) }
        if let temperature = c.settable(V4L2Control.whiteBalanceTemperature) {
            caps.whiteBalanceTemperatureRange = temperature.minimum...temperature.maximum
        }

        if let led = c.settable(V4L2Control.flashLEDMode) {
            caps.hasTorch = led.hasItem(V4L2Control.ledTorch)
            caps.hasFlash = led.hasItem(V4L2Control.ledFlash) && c.settable(V4L2Control.flashStrobe) != nil
        }
        caps.isLowLightBoostSupported = c.settable(V4L2Control.exposureAutoPriority) != nil
        if let zoom = c.settable(V4L2Control.zoomAbsolute), zoom.maximum > zoom.minimum {
            caps.zoom = .control
            caps.maxZoomFactor = zoomFactor(zoom.maximum, of: zoom)
        } else if cropZoom {
            caps.zoom = .crop
            caps.maxZoomFactor = cropZoomLimit
        }
        return caps
    }

    // MARK: Settings

    /// The settings the controls' current values say.
    static func settings(of controls: [DeviceControl]) -> DeviceSettings {
        let c = Controls(controls)
        var settings = DeviceSettings()
        if let auto = c[V4L2Control.focusAuto], auto.value == 1 { settings.focusMode = .continuousAutoFocus }
        if let focus = c[V4L2Control.focusAbsolute], let value = focus.value, focus.maximum > focus.minimum {
            settings.lensPosition = Double(focus.maximum - value) / Double(focus.maximum - focus.minimum)
        }
        if let auto = c[V4L2Control.exposureAuto], let value = auto.value {
            settings.exposureMode = value == V4L2Control.exposureManualMode ? .locked : .continuousAutoExposure
        } else if c[V4L2Control.exposureAbsolute] != nil {
            settings.exposureMode = .locked
        }
        settings.exposureDuration = c[V4L2Control.exposureAbsolute]?.value.map(exposureDuration)
        settings.gain = (c[V4L2Control.gain] ?? c[V4L2Control.analogueGain])?.value
        if let bias = c[V4L2Control.exposureBias], let index = bias.value {
            settings.exposureTargetBias = biasValues(bias).first { $0.index == index }?.ev
        }
        if let auto = c[V4L2Control.whiteBalanceAutomatic], let value = auto.value {
            settings.whiteBalanceMode = value == 1 ? .continuousAutoWhiteBalance : .locked
        } else if let preset = c[V4L2Control.presetWhiteBalance], let value = preset.value {
            settings.whiteBalanceMode = value == 0 ? .locked : .continuousAutoWhiteBalance
        }
        settings.whiteBalanceTemperature = c[V4L2Control.whiteBalanceTemperature]?.value
        if let led = c[V4L2Control.flashLEDMode], led.value == V4L2Control.ledTorch { settings.torchMode = .on }
        if let intensity = c[V4L2Control.flashTorchIntensity], let value = intensity.value, intensity.maximum > intensity.minimum {
            settings.torchLevel = Double(value - intensity.minimum) / Double(intensity.maximum - intensity.minimum)
        }
        settings.automaticallyEnablesLowLightBoostWhenAvailable = c[V4L2Control.exposureAutoPriority]?.value.map { $0 != 0 }
        if let zoom = c[V4L2Control.zoomAbsolute], let value = zoom.value, zoom.maximum > zoom.minimum {
            settings.zoomFactor = zoomFactor(value, of: zoom)
        }
        return settings
    }

    // MARK: Plans

    /// The writes a request needs on a device with these controls, or the typed error that names the
    /// device and the control it lacks or the range a value leaves.
    static func plan(_ request: ControlRequest, controls: [DeviceControl], device: String, cropZoom: Bool) throws(CaptureError) -> ControlPlan {
        let c = Controls(controls)
        var plan = ControlPlan(summary: request.summary)
        func require(_ id: UInt32, _ key: String, for feature: String) throws(CaptureError) -> DeviceControl {
            guard let control = c.settable(id) else {
                throw .controlNotSupported(
                    device: device, control: feature, reason: c[id] == nil ? "it has no \(key) control" : "its \(key) control is read-only")
            }
            return control
        }
        func unit(_ value: Double, _ name: String, _ range: ClosedRange<Double>, open lower: Bool = false) throws(CaptureError) {
            guard range.contains(value), !(lower && value == range.lowerBound), value.isFinite else {
                throw .controlOutOfRange(
                    device: device, control: name, value: format(value),
                    range: lower
                        ? "above \(format(range.lowerBound)), up to \(format(range.upperBound))" : "\(format(range.lowerBound)) to \(format(range.upperBound))")
            }
        }
        switch request {
        case .focusMode(let mode):
            let auto = c.settable(V4L2Control.focusAuto)
            switch mode {
            case .continuousAutoFocus:
                plan.writes = [ControlWrite(try require(V4L2Control.focusAuto, "focus_automatic_continuous", for: "focus-mode=continuous"), 1)]
            case .locked:
                if let auto {
                    plan.writes = [ControlWrite(auto, 0)]
                } else {
                    _ = try require(V4L2Control.focusAbsolute, "focus_automatic_continuous or focus_absolute", for: "focus-mode=locked")
                }
            case .autoFocus:
                if let start = c.settable(V4L2Control.autoFocusStart) {
                    plan.writes = (auto.map { [ControlWrite($0, 0)] } ?? []) + [ControlWrite(start, 1)]
                } else {
                    let auto = try require(V4L2Control.focusAuto, "auto_focus_start or focus_automatic_continuous", for: "focus-mode=auto")
                    plan.writes = [ControlWrite(auto, 1)]
                    plan.afterSettling = [ControlWrite(auto, 0)]
                }
            }
        case .lensPosition(let position):
            let focus = try require(V4L2Control.focusAbsolute, "focus_absolute", for: "lens-position")
            try unit(position, "lens-position", 0...1)
            let value = focus.maximum - Int64((position * Double(focus.maximum - focus.minimum)).rounded())
            plan.writes = (c.settable(V4L2Control.focusAuto).map { [ControlWrite($0, 0)] } ?? []) + [ControlWrite(focus, focus.aligned(value))]
        case .focusPoint(let point, let frame), .exposurePoint(let point, let frame):
            let isFocus: Bool
            if case .focusPoint = request { isFocus = true } else { isFocus = false }
            let feature = isFocus ? "focus-point" : "exposure-point"
            let rect = try require(V4L2Control.regionOfInterestRect, "region_of_interest_rectangle", for: feature)
            let auto = try require(V4L2Control.regionOfInterestAuto, "region_of_interest_auto_controls", for: feature)
            let bit = isFocus ? V4L2Control.roiAutoFocus : V4L2Control.roiAutoExposure
            guard auto.maximum & bit != 0 else {
                throw .controlNotSupported(device: device, control: feature, reason: "its region of interest does not drive \(isFocus ? "focus" : "exposure")")
            }
            try unit(point.x, "\(feature) x", 0...1)
            try unit(point.y, "\(feature) y", 0...1)
            guard let frame else { throw .controlFailed(device: device, control: feature, reason: "the size of its current format is unknown") }
            plan.writes = [
                ControlWrite(id: rect.id, key: rect.key, value: regionOfInterest(around: point, in: frame)),
                ControlWrite(auto, (auto.value ?? 0) | bit),
            ]
        case .exposureMode(let mode):
            if mode == .custom || mode == .locked, c.settable(V4L2Control.exposureAuto) == nil {
                _ = try require(V4L2Control.exposureAbsolute, "auto_exposure or exposure_time_absolute", for: "exposure-mode=\(mode.rawValue)")
                break
            }
            let auto = try require(V4L2Control.exposureAuto, "auto_exposure", for: "exposure-mode=\(mode.rawValue)")
            let automatic = automaticExposureItem(auto)
            switch mode {
            case .continuousAutoExposure:
                guard let automatic else {
                    throw .controlNotSupported(device: device, control: "exposure-mode=continuous", reason: "its auto_exposure has no automatic mode")
                }
                plan.writes = [ControlWrite(auto, automatic)]
            case .locked, .custom:
                guard auto.hasItem(V4L2Control.exposureManualMode) else {
                    throw .controlNotSupported(device: device, control: "exposure-mode=\(mode.rawValue)", reason: "its auto_exposure has no manual mode")
                }
                plan.writes = [ControlWrite(auto, V4L2Control.exposureManualMode)]
            case .autoExpose:
                guard let automatic, auto.hasItem(V4L2Control.exposureManualMode) else {
                    throw .controlNotSupported(device: device, control: "exposure-mode=auto", reason: "its auto_exposure lacks an automatic or a manual mode")
                }
                plan.writes = [ControlWrite(auto, automatic)]
                plan.afterSettling = [ControlWrite(auto, V4L2Control.exposureManualMode)]
            }
        case .customExposure(let duration, let gain):
            guard capabilities(of: controls, cropZoom: cropZoom).exposureModes.contains(.custom) else {
                throw .controlNotSupported(device: device, control: "exposure-mode=custom", reason: "it has no auto_exposure or exposure_time_absolute control")
            }
            if let auto = c.settable(V4L2Control.exposureAuto) {
                guard auto.hasItem(V4L2Control.exposureManualMode) else {
                    throw .controlNotSupported(device: device, control: "exposure-mode=custom", reason: "its auto_exposure has no manual mode")
                }
                plan.writes.append(ControlWrite(auto, V4L2Control.exposureManualMode))
            }
            if let duration {
                let exposure = try require(V4L2Control.exposureAbsolute, "exposure_time_absolute", for: "exposure-duration")
                let units = Int64((duration.seconds * 10_000).rounded())
                guard (exposure.minimum...exposure.maximum).contains(units) else {
                    throw .controlOutOfRange(
                        device: device, control: "exposure-duration", value: "\(format(duration.seconds)) s",
                        range:
                            "\(format(exposureDuration(exposure.minimum).seconds)) to \(format(exposureDuration(exposure.maximum).seconds)) s (exposure_time_absolute \(exposure.minimum)-\(exposure.maximum), units of 100 µs)"
                    )
                }
                plan.writes.append(ControlWrite(exposure, units))
            }
            if let gain {
                guard let control = c.settable(V4L2Control.gain) ?? c.settable(V4L2Control.analogueGain) else {
                    throw .controlNotSupported(device: device, control: "gain", reason: "it has no gain or analogue_gain control")
                }
                try checkRange(gain, control, device: device)
                plan.writes.append(ControlWrite(control, gain))
            }
        case .exposureBias(let ev):
            let bias = try require(V4L2Control.exposureBias, "auto_exposure_bias", for: "exposure-bias")
            let values = biasValues(bias)
            guard let low = values.map(\.ev).min(), let high = values.map(\.ev).max(), ev >= low - 1e-9, ev <= high + 1e-9 else {
                throw .controlOutOfRange(
                    device: device, control: "exposure-bias", value: "\(format(ev)) EV",
                    range: values.isEmpty ? "the device lists no bias" : "\(format(values.map(\.ev).min() ?? 0)) to \(format(values.map(\.ev).max() ?? 0)) EV")
            }
            // The nearest bias the device offers.
            if let nearest = values.min(by: { abs($0.ev - ev) < abs($1.ev - ev) }) { plan.writes = [ControlWrite(bias, nearest.index)] }
        case .whiteBalanceMode(let mode):
            let auto = c.settable(V4L2Control.whiteBalanceAutomatic)
            let preset = c.settable(V4L2Control.presetWhiteBalance)
            func automatic(_ on: Bool) throws(CaptureError) -> ControlWrite {
                if let auto { return ControlWrite(auto, on ? 1 : 0) }
                if let preset, preset.hasItem(on ? 1 : 0) { return ControlWrite(preset, on ? 1 : 0) }
                throw .controlNotSupported(
                    device: device, control: "white-balance-mode=\(mode.rawValue)",
                    reason: c[V4L2Control.whiteBalanceAutomatic] == nil && preset == nil
                        ? "it has no white_balance_automatic control" : "its white balance cannot be switched \(on ? "on" : "off")")
            }
            switch mode {
            case .continuousAutoWhiteBalance: plan.writes = [try automatic(true)]
            case .locked: plan.writes = [try automatic(false)]
            case .autoWhiteBalance:
                if let once = c.settable(V4L2Control.doWhiteBalance) {
                    plan.writes = (auto.map { [ControlWrite($0, 0)] } ?? []) + [ControlWrite(once, 1)]
                } else {
                    plan.writes = [try automatic(true)]
                    plan.afterSettling = [try automatic(false)]
                }
            }
        case .whiteBalanceTemperature(let kelvin):
            let temperature = try require(V4L2Control.whiteBalanceTemperature, "white_balance_temperature", for: "white-balance-temperature")
            try checkRange(kelvin, temperature, device: device, name: "white-balance-temperature")
            if let auto = c.settable(V4L2Control.whiteBalanceAutomatic) {
                plan.writes.append(ControlWrite(auto, 0))
            } else if let preset = c.settable(V4L2Control.presetWhiteBalance), preset.hasItem(0) {
                plan.writes.append(ControlWrite(preset, 0))
            }
            plan.writes.append(ControlWrite(temperature, temperature.aligned(kelvin)))
        case .torch(let mode, let level):
            guard mode != .auto else {
                throw .controlNotSupported(device: device, control: "torch-mode=auto", reason: "V4L2 has no automatic torch")
            }
            let led = try require(V4L2Control.flashLEDMode, "flash_led_mode", for: "torch-mode=\(mode.rawValue)")
            guard led.hasItem(V4L2Control.ledTorch) else {
                throw .controlNotSupported(device: device, control: "torch-mode=\(mode.rawValue)", reason: "its flash_led_mode has no torch mode")
            }
            if mode == .off {
                plan.writes = [ControlWrite(led, V4L2Control.ledNone)]
                break
            }
            plan.writes = [ControlWrite(led, V4L2Control.ledTorch)]
            if let level {
                try unit(level, "torch-level", 0...1, open: true)
                if let intensity = c.settable(V4L2Control.flashTorchIntensity) {
                    let value = intensity.minimum + Int64((level * Double(intensity.maximum - intensity.minimum)).rounded())
                    plan.writes.append(ControlWrite(intensity, intensity.aligned(value)))
                }
            }
        case .flashMode(let mode):
            if mode != .off, !capabilities(of: controls, cropZoom: cropZoom).hasFlash { throw .flashNotSupported(device: device) }
            plan.flashMode = mode
        case .flashFire:
            guard capabilities(of: controls, cropZoom: cropZoom).hasFlash, let led = c.settable(V4L2Control.flashLEDMode),
                let strobe = c.settable(V4L2Control.flashStrobe)
            else { throw .flashNotSupported(device: device) }
            plan.writes = [ControlWrite(led, V4L2Control.ledFlash), ControlWrite(strobe, 1)]
        case .flashRelease(let ledMode):
            if let stop = c.settable(V4L2Control.flashStrobeStop) { plan.writes.append(ControlWrite(stop, 1)) }
            if let led = c.settable(V4L2Control.flashLEDMode) { plan.writes.append(ControlWrite(led, ledMode)) }
        case .lowLightBoost(let on):
            let priority = try require(V4L2Control.exposureAutoPriority, "exposure_dynamic_framerate", for: "low-light-boost")
            plan.writes = [ControlWrite(priority, on ? 1 : 0)]
        case .zoom(let factor):
            let caps = capabilities(of: controls, cropZoom: cropZoom)
            guard caps.zoom != .none else {
                throw .controlNotSupported(device: device, control: "zoom", reason: "it has no zoom_absolute control and is not a camera the session can crop")
            }
            try unit(factor, "zoom", 1...caps.maxZoomFactor)
            if caps.zoom == .crop {
                plan.cropZoom = factor
                plan.summary += " (crop)"
            } else if let zoom = c.settable(V4L2Control.zoomAbsolute) {
                plan.writes = [ControlWrite(zoom, zoom.aligned(zoomValue(factor, of: zoom)))]
            }
        case .control(let key, let value):
            guard let control = controls.first(where: { $0.key == key }) else {
                throw .unknownControl(device: device, control: key, known: controls.map(\.key))
            }
            try check(value, for: control, device: device)
            plan.writes = [ControlWrite(control, control.kind == .button ? 1 : value)]
        }
        return plan
    }

    // MARK: Generic controls

    /// Refuses a value the control cannot take, naming the device, the control and its range.
    static func check(_ value: Int64, for control: DeviceControl, device: String) throws(CaptureError) {
        guard control.isSettable, control.kind != .rectangle else {
            let why =
                control.isReadOnly
                ? "it is read-only"
                : control.kind == .rectangle
                    ? "a rectangle is set through focus-point or exposure-point" : "a \(control.kind.rawValue) control cannot be set by value"
            throw .controlNotSupported(device: device, control: control.key, reason: why)
        }
        switch control.kind {
        case .button:
            return
        case .boolean:
            guard value == 0 || value == 1 else {
                throw .controlOutOfRange(device: device, control: control.key, value: String(value), range: "0 or 1 (false or true)")
            }
        case .menu, .integerMenu:
            guard control.hasItem(value) else {
                throw .controlOutOfRange(device: device, control: control.key, value: String(value), range: "one of \(menuDescription(control))")
            }
        case .bitmask:
            guard value >= 0, value & ~control.maximum == 0 else {
                throw .controlOutOfRange(device: device, control: control.key, value: String(value), range: "a mask of the bits of \(control.maximum)")
            }
        default:
            try checkRange(value, control, device: device)
        }
    }

    /// Reads a control value written as text: a number, `true`/`false` for a boolean, or a menu item's
    /// name (`"50 Hz"`, case does not matter).
    static func value(_ text: String, for control: DeviceControl, device: String) throws(CaptureError) -> Int64 {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let number = Int64(trimmed) { return number }
        if let number = Double(trimmed), number == number.rounded(), abs(number) < 1e15 { return Int64(number) }
        if control.kind == .boolean {
            switch trimmed.lowercased() {
            case "true", "on", "yes": return 1
            case "false", "off", "no": return 0
            default: break
            }
        }
        if control.kind == .menu, let item = control.menuItems.first(where: { $0.value.lowercased() == trimmed.lowercased() }) {
            return item.key
        }
        let accepted =
            switch control.kind {
            case .boolean: "true, false, 0 or 1"
            case .menu: "a number or a menu item: \(menuDescription(control))"
            default: "an integer"
            }
        throw .controlOutOfRange(device: device, control: control.key, value: "'\(text)'", range: accepted)
    }

    static func checkRange(_ value: Int64, _ control: DeviceControl, device: String, name: String? = nil) throws(CaptureError) {
        guard (control.minimum...control.maximum).contains(value) else {
            throw .controlOutOfRange(
                device: device, control: name ?? control.key, value: String(value),
                range: "\(control.minimum) to \(control.maximum)" + (control.step > 1 ? " in steps of \(control.step)" : ""))
        }
    }

    static func menuDescription(_ control: DeviceControl) -> String {
        control.menuItems.isEmpty
            ? "\(control.minimum) to \(control.maximum)"
            : control.menuItems.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: ", ")
    }

    // MARK: Units

    /// `exposure_time_absolute` counts 100 µs.
    static func exposureDuration(_ units: Int64) -> Duration { .microseconds(units * 100) }

    /// The zoom factor a `zoom_absolute` value means: value / minimum when the minimum is above 0 (UVC
    /// cameras commonly count 100 = 1x), else 1x-4x across the range. The unit is the device's; the raw
    /// control stays reachable by its key.
    static func zoomFactor(_ value: Int64, of control: DeviceControl) -> Double {
        if control.minimum > 0 { return Double(value) / Double(control.minimum) }
        return 1 + 3 * Double(value - control.minimum) / Double(control.maximum - control.minimum)
    }

    static func zoomValue(_ factor: Double, of control: DeviceControl) -> Int64 {
        let value =
            control.minimum > 0
            ? factor * Double(control.minimum)
            : Double(control.minimum) + (factor - 1) / 3 * Double(control.maximum - control.minimum)
        return min(control.maximum, max(control.minimum, Int64(value.rounded())))
    }

    /// The biases an `auto_exposure_bias` integer menu offers: index and EV (its items count 1/1000 EV).
    static func biasValues(_ control: DeviceControl) -> [(index: Int64, ev: Double)] {
        control.menuItems.compactMap { index, text in Int64(text).map { (index, Double($0) / 1000) } }.sorted { $0.index < $1.index }
    }

    /// The automatic item of an `auto_exposure` menu: the fully automatic mode, else aperture priority
    /// (what UVC cameras call automatic).
    static func automaticExposureItem(_ control: DeviceControl) -> Int64? {
        [V4L2Control.exposureAutoMode, V4L2Control.exposureAperturePriorityMode].first(where: control.hasItem)
    }

    /// A region of interest an eighth of the frame wide and high around a point, inside the frame.
    static func regionOfInterest(around point: NormalizedPoint, in frame: Size) -> ControlWrite.Value {
        let width = max(1, frame.width / 8), height = max(1, frame.height / 8)
        let left = min(frame.width - width, max(0, Int((point.x * Double(frame.width)).rounded()) - width / 2))
        let top = min(frame.height - height, max(0, Int((point.y * Double(frame.height)).rounded()) - height / 2))
        return .rect(left: Int32(left), top: Int32(top), width: UInt32(width), height: UInt32(height))
    }

    /// A number without trailing zeros: 2, 0.5, -1.5.
    static func format(_ value: Double) -> String {
        value == value.rounded() && abs(value) < 1e15 ? String(Int64(value)) : String(format: "%g", value)
    }
}

/// Controls by id, for the mapping.
private struct Controls {
    let byID: [UInt32: DeviceControl]
    init(_ controls: [DeviceControl]) { byID = Dictionary(controls.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first }) }
    subscript(_ id: UInt32) -> DeviceControl? { byID[id] }
    /// The control when the device has it and it can be written.
    func settable(_ id: UInt32) -> DeviceControl? { byID[id].flatMap { $0.isSettable ? $0 : nil } }
}
