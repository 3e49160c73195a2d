/// Device configuration, like AVFoundation's: `lockForConfiguration()`, then the focus, exposure,
/// white balance, torch, flash, low-light and zoom settings, then `unlockForConfiguration()`.
///
/// - The lock is exclusive within the process: while one holder has it, another
///   `lockForConfiguration()` fails with `device-locked`, naming the holder. Changing a setting without
///   the lock is `device-not-locked`.
/// - Every `is...Supported` answer and every getter reads the device's controls now (V4L2 controls for
///   a camera, the simulated ones of the test pattern); a device without the control behind a feature
///   says unsupported, and setting it is `control-not-supported`, naming the device and the control.
/// - Changes apply while the device streams. Each setter returns a `DeviceChange`, whose
///   `firstFrame()` is the first frame that carries the change in each session streaming the device;
///   such a session also posts `device-configured`.
/// - Unknown controls, values out of range, a refused write or a device that went away are typed
///   errors naming the device and the control; a session streaming the device keeps running.
extension CaptureDevice {
    private var hub: DeviceControlHub { .shared }

    // MARK: The lock

    /// Takes the device's configuration lock. `holder` names the taker in the error a second taker
    /// gets (default: the file and line of the call).
    public func lockForConfiguration(holder: String? = nil, file: String = #fileID, line: Int = #line) throws(CaptureError) {
        try hub.lock(uniqueID, holder: holder ?? "\(file):\(line)")
    }

    /// Gives the lock back (whoever took it; nothing happens when it is not held).
    public func unlockForConfiguration() {
        hub.unlock(uniqueID)
    }

    /// Who holds the configuration lock, or nil.
    public var configurationLockHolder: String? { hub.holder(of: uniqueID) }

    // MARK: What the device can do, and its settings now

    /// What the device can do, read from its controls now.
    public var capabilities: DeviceCapabilities { hub.capabilities(of: self) }

    /// The device's settings, read from its controls now.
    public var settings: DeviceSettings { hub.settings(of: self) }

    /// The device's controls with their current values, read now (`capture controls`).
    public func currentControls() throws(CaptureError) -> [DeviceControl] { try hub.controls(of: self) }

    // MARK: Focus

    /// True when the device's controls allow the focus mode (`focus_automatic_continuous`, `auto_focus_start`, `focus_absolute`).
    public func isFocusModeSupported(_ mode: FocusMode) -> Bool { capabilities.focusModes.contains(mode) }
    /// True when the device can focus on a point (a region of interest control with automatic focus).
    public var isFocusPointOfInterestSupported: Bool { capabilities.isFocusPointOfInterestSupported }
    /// True when the lens can be locked at a position (`focus_absolute`).
    public var isLockingFocusWithCustomLensPositionSupported: Bool { capabilities.isLockingFocusWithCustomLensPositionSupported }
    /// The focus mode now: `continuousAutoFocus` while `focus_automatic_continuous` is on, else `locked`.
    public var focusMode: FocusMode { settings.focusMode }
    /// 0 (nearest) ... 1 (furthest); nil when the device has no `focus_absolute` control.
    public var lensPosition: Double? { settings.lensPosition }
    /// The last point set (0.5, 0.5 until then).
    public var focusPointOfInterest: NormalizedPoint { hub.points(of: uniqueID).focus }

    /// `continuousAutoFocus` writes `focus_automatic_continuous` 1, `locked` 0; `autoFocus` presses
    /// `auto_focus_start`, or runs the continuous mode for a second and locks.
    @discardableResult
    public func setFocusMode(_ mode: FocusMode) throws(CaptureError) -> DeviceChange {
        try hub.apply(.focusMode(mode), to: self)
    }

    /// Locks the focus at a lens position (0 nearest ... 1 furthest) through `focus_absolute`.
    @discardableResult
    public func setFocusModeLocked(lensPosition: Double) throws(CaptureError) -> DeviceChange {
        try hub.apply(.lensPosition(lensPosition), to: self)
    }

    /// Where to focus (0...1, origin top left), through the device's region of interest control.
    @discardableResult
    public func setFocusPointOfInterest(_ point: NormalizedPoint) throws(CaptureError) -> DeviceChange {
        try hub.apply(.focusPoint(point, frame: nil), to: self)
    }

    // MARK: Exposure

    /// True when the device's controls allow the exposure mode (`auto_exposure`, `exposure_time_absolute`, gain).
    public func isExposureModeSupported(_ mode: ExposureMode) -> Bool { capabilities.exposureModes.contains(mode) }
    /// True when the device can meter on a point (a region of interest control with automatic exposure).
    public var isExposurePointOfInterestSupported: Bool { capabilities.isExposurePointOfInterestSupported }
    /// The exposure mode now: `locked` while `auto_exposure` is manual (or the device has only a manual exposure), else `continuousAutoExposure`.
    public var exposureMode: ExposureMode { settings.exposureMode }
    /// The last metering point set (0.5, 0.5 until then).
    public var exposurePointOfInterest: NormalizedPoint { hub.points(of: uniqueID).exposure }
    /// The exposure now (`exposure_time_absolute`), when the device says.
    public var exposureDuration: Duration? { settings.exposureDuration }
    /// The shortest custom exposure (`exposure_time_absolute`), nil without that control.
    public var minExposureDuration: Duration? { capabilities.exposureDurationRange?.lowerBound }
    /// The longest custom exposure (`exposure_time_absolute`), nil without that control.
    public var maxExposureDuration: Duration? { capabilities.exposureDurationRange?.upperBound }
    /// The gain now, in the gain control's units.
    public var gain: Int64? { settings.gain }
    /// The automatic exposure's target bias now, in EV (`auto_exposure_bias`), nil without that control.
    public var exposureTargetBias: Double? { settings.exposureTargetBias }
    /// The lowest target bias the device offers, in EV.
    public var minExposureTargetBias: Double? { capabilities.exposureTargetBiasRange?.lowerBound }
    /// The highest target bias the device offers, in EV.
    public var maxExposureTargetBias: Double? { capabilities.exposureTargetBiasRange?.upperBound }

    /// `continuousAutoExposure` sets `auto_exposure` to its automatic mode, `locked` and `custom` to
    /// manual (keeping the exposure); `autoExpose` runs the automatic mode for a second, then locks.
    @discardableResult
    public func setExposureMode(_ mode: ExposureMode) throws(CaptureError) -> DeviceChange {
        try hub.apply(.exposureMode(mode), to: self)
    }

    /// A custom exposure: manual mode, then the duration (`exposure_time_absolute`, 100 µs units) and
    /// the gain (`gain` or `analogue_gain`, in its units) given; nil keeps the current one.
    @discardableResult
    public func setExposureModeCustom(duration: Duration?, gain: Int64? = nil) throws(CaptureError) -> DeviceChange {
        try hub.apply(.customExposure(duration: duration, gain: gain), to: self)
    }

    /// Where to meter (0...1, origin top left), through the device's region of interest control.
    @discardableResult
    public func setExposurePointOfInterest(_ point: NormalizedPoint) throws(CaptureError) -> DeviceChange {
        try hub.apply(.exposurePoint(point, frame: nil), to: self)
    }

    /// The automatic exposure's target bias in EV (`auto_exposure_bias`: the nearest bias it offers).
    @discardableResult
    public func setExposureTargetBias(_ bias: Double) throws(CaptureError) -> DeviceChange {
        try hub.apply(.exposureBias(bias), to: self)
    }

    // MARK: White balance

    /// True when the device's controls allow the white balance mode (`white_balance_automatic`, `white_balance_preset`, `do_white_balance`).
    public func isWhiteBalanceModeSupported(_ mode: WhiteBalanceMode) -> Bool { capabilities.whiteBalanceModes.contains(mode) }
    /// The white balance mode now: `continuousAutoWhiteBalance` while the automatic white balance is on, else `locked`.
    public var whiteBalanceMode: WhiteBalanceMode { settings.whiteBalanceMode }
    /// Kelvin, when the device has `white_balance_temperature`.
    public var whiteBalanceTemperature: Int64? { settings.whiteBalanceTemperature }

    /// `continuousAutoWhiteBalance` turns the automatic white balance on, `locked` off; `autoWhiteBalance`
    /// balances once (`do_white_balance`), or runs the automatic mode for a second and locks.
    /// - Throws: `deviceNotLocked` without the configuration lock, `controlNotSupported` when the device
    ///   cannot take the mode, `controlFailed` when the driver refuses the write.
    @discardableResult
    public func setWhiteBalanceMode(_ mode: WhiteBalanceMode) throws(CaptureError) -> DeviceChange {
        try hub.apply(.whiteBalanceMode(mode), to: self)
    }

    /// Locks the white balance at a temperature in kelvin.
    @discardableResult
    public func setWhiteBalanceTemperature(_ kelvin: Int64) throws(CaptureError) -> DeviceChange {
        try hub.apply(.whiteBalanceTemperature(kelvin), to: self)
    }

    // MARK: Flash and torch

    /// True when the device has a flash LED with a strobe (`flash_led_mode` with a flash item,
    /// `flash_strobe`).
    public var hasFlash: Bool { capabilities.hasFlash }
    /// True for `off` always, and for `on` and `auto` when the device has a flash.
    public func isFlashModeSupported(_ mode: FlashMode) -> Bool { mode == .off || hasFlash }
    /// The flash mode photos of this device use when their settings do not say (`.off` until set).
    public var flashMode: FlashMode { hub.flashMode(of: uniqueID) }

    /// Sets the flash mode photos of this device use when their settings do not say; nothing is written to the device until a photo fires the flash.
    /// - Throws: `deviceNotLocked` without the configuration lock, `flashNotSupported` for `on` or `auto` on a device without a flash.
    @discardableResult
    public func setFlashMode(_ mode: FlashMode) throws(CaptureError) -> DeviceChange {
        try hub.apply(.flashMode(mode), to: self)
    }

    /// True when the device's `flash_led_mode` has a torch item.
    public var hasTorch: Bool { capabilities.hasTorch }
    /// True for `off` and `on` when the device has a torch; never for `auto` (V4L2 has no automatic torch).
    public func isTorchModeSupported(_ mode: TorchMode) -> Bool { mode != .auto && hasTorch }
    /// The torch mode now: `on` while `flash_led_mode` is on its torch item, else `off`.
    public var torchMode: TorchMode { settings.torchMode }
    /// 0...1 of `flash_torch_intensity`, when the device has it.
    public var torchLevel: Double? { settings.torchLevel }

    /// Turns the torch on or off through `flash_led_mode`.
    /// - Throws: `deviceNotLocked` without the configuration lock, `controlNotSupported` for `auto` or a
    ///   device without a torch, `controlFailed` when the driver refuses the write.
    @discardableResult
    public func setTorchMode(_ mode: TorchMode) throws(CaptureError) -> DeviceChange {
        try hub.apply(.torch(mode, level: nil), to: self)
    }

    /// Turns the torch on at a level above 0, up to 1 (`flash_torch_intensity` across its range).
    @discardableResult
    public func setTorchModeOn(level: Double) throws(CaptureError) -> DeviceChange {
        try hub.apply(.torch(.on, level: level), to: self)
    }

    // MARK: Low light

    /// True when the device may lower its frame rate to expose longer (`exposure_dynamic_framerate`).
    public var isLowLightBoostSupported: Bool { capabilities.isLowLightBoostSupported }
    /// True while the device may lower its frame rate to expose longer (`exposure_dynamic_framerate` on); false without that control.
    public var automaticallyEnablesLowLightBoostWhenAvailable: Bool { settings.automaticallyEnablesLowLightBoostWhenAvailable ?? false }

    /// Lets the device lower its frame rate in low light, or not (`exposure_dynamic_framerate`).
    /// - Throws: `deviceNotLocked` without the configuration lock, `controlNotSupported` without that
    ///   control, `controlFailed` when the driver refuses the write.
    @discardableResult
    public func setAutomaticallyEnablesLowLightBoostWhenAvailable(_ enabled: Bool) throws(CaptureError) -> DeviceChange {
        try hub.apply(.lowLightBoost(enabled), to: self)
    }

    // MARK: Zoom

    /// 1 is no zoom: the device's `zoom_absolute` when it has one, otherwise the crop of the session.
    public var videoZoomFactor: Double { settings.zoomFactor ?? 1 }
    /// The largest zoom factor: the `zoom_absolute` maximum, 8 for a crop zoom, 1 when the device cannot zoom.
    public var maxAvailableVideoZoomFactor: Double { capabilities.maxZoomFactor }

    /// Zooms: with `zoom_absolute` when the device has it, else by a crop of the frame's centre scaled
    /// back to its size in every session streaming the device (changed live; the format after the crop
    /// stays the same).
    @discardableResult
    public func setVideoZoomFactor(_ factor: Double) throws(CaptureError) -> DeviceChange {
        try hub.apply(.zoom(factor), to: self)
    }

    // MARK: Any control

    /// A control's current value, by key (`brightness`, `gain`, `power_line_frequency` ...).
    public func value(ofControl key: String) throws(CaptureError) -> Int64 {
        let controls = try hub.controls(of: self, for: key)
        guard let control = controls.first(where: { $0.key == key }) else {
            throw .unknownControl(device: uniqueID, control: key, known: controls.map(\.key))
        }
        guard let value = control.value else {
            throw .controlNotSupported(device: uniqueID, control: key, reason: "its value cannot be read (a \(control.kind.rawValue) control)")
        }
        return value
    }

    /// Sets a control by key, checked against its range (or its menu items).
    @discardableResult
    public func setValue(_ value: Int64, forControl key: String) throws(CaptureError) -> DeviceChange {
        try hub.apply(.control(key: key, value: value), to: self)
    }

    /// Sets a control by key from text: a number, `true`/`false`, or a menu item's name.
    @discardableResult
    public func setValue(_ text: String, forControl key: String) throws(CaptureError) -> DeviceChange {
        if configurationLockHolder == nil { throw .deviceNotLocked(device: uniqueID, control: key) }
        let controls = try hub.controls(of: self, for: key)
        guard let control = controls.first(where: { $0.key == key }) else {
            throw .unknownControl(device: uniqueID, control: key, known: controls.map(\.key))
        }
        return try setValue(ControlMapping.value(text, for: control, device: uniqueID), forControl: key)
    }
}
