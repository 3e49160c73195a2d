import Foundation

/// The V4L2 control ids the mapping reads and writes (linux/v4l2-controls.h). The UVC region of
/// interest is a driver control of newer kernels (linux/uvcvideo.h, `V4L2_CID_USER_UVC_BASE + 1/2`).
enum V4L2Control {
    static let brightness: UInt32 = 0x0098_0900
    static let contrast: UInt32 = 0x0098_0901
    static let saturation: UInt32 = 0x0098_0902
    static let hue: UInt32 = 0x0098_0903
    static let whiteBalanceAutomatic: UInt32 = 0x0098_090c
    static let doWhiteBalance: UInt32 = 0x0098_090d
    static let gain: UInt32 = 0x0098_0913
    static let whiteBalanceTemperature: UInt32 = 0x0098_091a
    static let exposureAuto: UInt32 = 0x009a_0901
    static let exposureAbsolute: UInt32 = 0x009a_0902
    /// `exposure_dynamic_framerate`: the device may lower the frame rate to expose longer (low light).
    static let exposureAutoPriority: UInt32 = 0x009a_0903
    static let focusAbsolute: UInt32 = 0x009a_090a
    static let focusAuto: UInt32 = 0x009a_090c
    static let zoomAbsolute: UInt32 = 0x009a_090d
    /// An integer menu of biases in 1/1000 EV.
    static let exposureBias: UInt32 = 0x009a_0913
    static let presetWhiteBalance: UInt32 = 0x009a_0914
    static let autoFocusStart: UInt32 = 0x009a_091c
    static let flashLEDMode: UInt32 = 0x009c_0901
    static let flashStrobe: UInt32 = 0x009c_0903
    static let flashStrobeStop: UInt32 = 0x009c_0904
    static let flashTorchIntensity: UInt32 = 0x009c_0908
    static let analogueGain: UInt32 = 0x009e_0903
    static let regionOfInterestRect: UInt32 = 0x0098_1ae1
    static let regionOfInterestAuto: UInt32 = 0x0098_1ae2

    /// `auto_exposure` menu items.
    static let exposureAutoMode: Int64 = 0, exposureManualMode: Int64 = 1, exposureAperturePriorityMode: Int64 = 3
    /// `flash_led_mode` menu items.
    static let ledNone: Int64 = 0, ledFlash: Int64 = 1, ledTorch: Int64 = 2
    /// Bits of the region of interest's automatic controls.
    static let roiAutoExposure: Int64 = 1 << 0, roiAutoFocus: Int64 = 1 << 3
}

/// A value written to one control.
struct ControlWrite: Hashable, Sendable, CustomStringConvertible {
    enum Value: Hashable, Sendable {
        case integer(Int64)
        /// A rectangle control, in pixels of the current format.
        case rect(left: Int32, top: Int32, width: UInt32, height: UInt32)
    }
    var id: UInt32
    var key: String
    var value: Value

    init(_ control: DeviceControl, _ value: Int64) {
        id = control.id
        key = control.key
        self.value = .integer(value)
    }

    init(id: UInt32, key: String, value: Value) {
        self.id = id
        self.key = key
        self.value = value
    }

    var description: String {
        switch value {
        case .integer(let number): "\(key)=\(number)"
        case .rect(let left, let top, let width, let height): "\(key)=\(width)x\(height)@\(left),\(top)"
        }
    }
}

/// What a setting asks of a device.
enum ControlRequest: Hashable, Sendable {
    case focusMode(FocusMode)
    case lensPosition(Double)
    case focusPoint(NormalizedPoint, frame: Size?)
    case exposureMode(ExposureMode)
    case customExposure(duration: Duration?, gain: Int64?)
    case exposurePoint(NormalizedPoint, frame: Size?)
    case exposureBias(Double)
    case whiteBalanceMode(WhiteBalanceMode)
    case whiteBalanceTemperature(Int64)
    case torch(TorchMode, level: Double?)
    /// The flash mode photos use by default: checked, nothing written.
    case flashMode(FlashMode)
    /// Fires the flash for a photo (LED in flash mode, strobe).
    case flashFire
    /// After the photo's frame: the strobe stops and the LED goes back to `ledMode`.
    case flashRelease(ledMode: Int64)
    case lowLightBoost(Bool)
    case zoom(Double)
    /// Any control by its key (`brightness`, `gain` ...).
    case control(key: String, value: Int64)

    /// How the setting reads in messages and events: `focus-mode=continuous`, `brightness=200`.
    var summary: String {
        switch self {
        case .focusMode(let mode): "focus-mode=\(mode.rawValue)"
        case .lensPosition(let position): "lens-position=\(ControlMapping.format(position))"
        case .focusPoint(let point, _): "focus-point=<\(ControlMapping.format(point.x)), \(ControlMapping.format(point.y))>"
        case .exposureMode(let mode): "exposure-mode=\(mode.rawValue)"
        case .customExposure(let duration, let gain):
            "exposure-mode=custom" + (duration.map { " exposure-duration=\(ControlMapping.format($0.seconds))s" } ?? "") + (gain.map { " gain=\($0)" } ?? "")
        case .exposurePoint(let point, _): "exposure-point=<\(ControlMapping.format(point.x)), \(ControlMapping.format(point.y))>"
        case .exposureBias(let bias): "exposure-bias=\(ControlMapping.format(bias))"
        case .whiteBalanceMode(let mode): "white-balance-mode=\(mode.rawValue)"
        case .whiteBalanceTemperature(let kelvin): "white-balance-temperature=\(kelvin)"
        case .torch(let mode, let level): "torch-mode=\(mode.rawValue)" + (level.map { " torch-level=\(ControlMapping.format($0))" } ?? "")
        case .flashMode(let mode): "flash-mode=\(mode.rawValue)"
        case .flashFire: "flash (fire)"
        case .flashRelease: "flash (release)"
        case .lowLightBoost(let on): "low-light-boost=\(on)"
        case .zoom(let factor): "zoom=\(ControlMapping.format(factor))"
        case .control(let key, let value): "\(key)=\(value)"
        }
    }
}

/// What a device does for one request: the controls to write, in order; for the one-shot modes
/// (`autoFocus`, `autoExpose`, `autoWhiteBalance`) on a device without a one-shot trigger, what to
/// write once the automatic mode had time to settle (the mode locks, as AVFoundation's one-shot modes
/// do); a crop zoom applied in the session's source segments instead of a control; the flash mode
/// photos use.
struct ControlPlan: Hashable, Sendable {
    var summary: String
    var writes: [ControlWrite] = []
    var afterSettling: [ControlWrite] = []
    var cropZoom: Double?
    var flashMode: FlashMode?
}

/// What a device's controls say about its settings now.
public struct DeviceSettings: Sendable, Hashable {
    /// `continuousAutoFocus` while `focus_automatic_continuous` is on, else `locked`.
    public var focusMode: FocusMode = .locked
    /// 0 (nearest) ... 1 (furthest); nil without a `focus_absolute` control.
    public var lensPosition: Double?
    /// `locked` while `auto_exposure` is manual (or the device has only `exposure_time_absolute`), else `continuousAutoExposure`.
    public var exposureMode: ExposureMode = .continuousAutoExposure
    /// The exposure now (`exposure_time_absolute`); nil without it.
    public var exposureDuration: Duration?
    /// The gain now, in the control's units (`gain` or `analogue_gain`); nil without either.
    public var gain: Int64?
    /// The automatic exposure's target bias now, in EV (`auto_exposure_bias`); nil without it.
    public var exposureTargetBias: Double?
    /// `continuousAutoWhiteBalance` while the automatic white balance is on, else `locked`.
    public var whiteBalanceMode: WhiteBalanceMode = .continuousAutoWhiteBalance
    /// Kelvin (`white_balance_temperature`); nil without it.
    public var whiteBalanceTemperature: Int64?
    /// `on` while `flash_led_mode` is on its torch item, else `off`.
    public var torchMode: TorchMode = .off
    /// 0...1 of `flash_torch_intensity`; nil without it.
    public var torchLevel: Double?
    /// `exposure_dynamic_framerate`; nil without it.
    public var automaticallyEnablesLowLightBoostWhenAvailable: Bool?
    /// The zoom the device's `zoom_absolute` says; nil without it.
    public var zoomFactor: Double?

    /// The settings of a device without controls: focus locked, continuous automatic exposure and white balance, torch off.
    public init() {}
}

extension DeviceControl {
    /// True when a menu control has that item (any value in range when the items are not listed).
    func hasItem(_ index: Int64) -> Bool {
        guard kind == .menu || kind == .integerMenu else { return (minimum...maximum).contains(index) }
        return menuItems.isEmpty ? (minimum...maximum).contains(index) : menuItems[index] != nil
    }

    /// The nearest value the control's step allows.
    func aligned(_ value: Int64) -> Int64 {
        guard step > 1 else { return min(maximum, max(minimum, value)) }
        let steps = ((Double(value - minimum) / Double(step)).rounded())
        return min(maximum, max(minimum, minimum + Int64(steps) * Int64(step)))
    }
}
