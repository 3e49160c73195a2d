/// Focus modes, like `AVCaptureDevice.FocusMode`. The raw values are the `.pipeline` spellings
/// (`configure-device, focus-mode=`).
public enum FocusMode: String, Sendable, CaseIterable, Hashable, Codable {
    /// The lens stays where it is (or where `setFocusModeLocked(lensPosition:)` put it).
    case locked
    /// Focuses once, then locks.
    case autoFocus = "auto"
    /// Keeps focusing as the scene changes.
    case continuousAutoFocus = "continuous"
}

/// Exposure modes, like `AVCaptureDevice.ExposureMode`.
public enum ExposureMode: String, Sendable, CaseIterable, Hashable, Codable {
    /// The exposure stays where it is.
    case locked
    /// Exposes once, then locks.
    case autoExpose = "auto"
    /// Keeps adjusting the exposure.
    case continuousAutoExposure = "continuous"
    /// The duration and gain given by `setExposureModeCustom(duration:gain:)`.
    case custom
}

/// White balance modes, like `AVCaptureDevice.WhiteBalanceMode`.
public enum WhiteBalanceMode: String, Sendable, CaseIterable, Hashable, Codable {
    /// The white balance stays where it is (or at the temperature `setWhiteBalanceTemperature` gave).
    case locked
    /// Balances once, then locks.
    case autoWhiteBalance = "auto"
    /// Keeps balancing.
    case continuousAutoWhiteBalance = "continuous"
}

/// Torch modes, like `AVCaptureDevice.TorchMode`.
public enum TorchMode: String, Sendable, CaseIterable, Hashable, Codable {
    /// `off`: the torch is off; `on`: it is lit (`flash_led_mode` torch); `auto`: lit when the scene is
    /// dark, which no V4L2 device offers (never supported here).
    case off, on, auto
}

/// How a device zooms: with its own zoom control, or by a crop and a scale in the session's source
/// segment (a digital zoom, changed live without renegotiating the camera's format).
public enum ZoomMethod: Sendable, Hashable, CustomStringConvertible {
    /// The device's `zoom_absolute` control.
    case control
    /// videocrop + videoscale in the source segment.
    case crop
    /// Neither (not a camera).
    case none

    /// `control`, `crop` or `none`, as `capture devices` prints it.
    public var description: String {
        switch self {
        case .control: "control"
        case .crop: "crop"
        case .none: "none"
        }
    }
}

/// What a device can do, read from its controls (`ControlMapping.capabilities(of:)`): the answers of
/// AVFoundation's `is...Supported`.
public struct DeviceCapabilities: Sendable, Hashable {
    /// The focus modes the device's controls allow.
    public var focusModes: Set<FocusMode> = []
    /// True when the device can focus on a point (a region of interest control with automatic focus).
    public var isFocusPointOfInterestSupported = false
    /// True when the lens can be locked at a position (`focus_absolute`).
    public var isLockingFocusWithCustomLensPositionSupported = false
    /// The exposure modes the device's controls allow.
    public var exposureModes: Set<ExposureMode> = []
    /// True when the device can meter on a point (a region of interest control with automatic exposure).
    public var isExposurePointOfInterestSupported = false
    /// The shortest and longest custom exposure (`exposure_time_absolute`).
    public var exposureDurationRange: ClosedRange<Duration>?
    /// The gain control's range, in its own units (`gain` or `analogue_gain`).
    public var gainRange: ClosedRange<Int64>?
    /// The exposure target bias the device offers, in EV (`auto_exposure_bias`).
    public var exposureTargetBiasRange: ClosedRange<Double>?
    /// The white balance modes the device's controls allow.
    public var whiteBalanceModes: Set<WhiteBalanceMode> = []
    /// Kelvin (`white_balance_temperature`).
    public var whiteBalanceTemperatureRange: ClosedRange<Int64>?
    /// True when the device has a flash LED with a strobe (`flash_led_mode` with a flash item, `flash_strobe`).
    public var hasFlash = false
    /// True when the device's `flash_led_mode` has a torch item.
    public var hasTorch = false
    /// True when the device may lower its frame rate to expose longer (`exposure_dynamic_framerate`).
    public var isLowLightBoostSupported = false
    /// How the device zooms: its own control, a crop in the session, or not at all.
    public var zoom: ZoomMethod = .none
    /// 1 without zoom.
    public var maxZoomFactor: Double = 1

    /// A device that can do nothing: no modes, no ranges, no flash, torch or zoom.
    public init() {}

    /// The features as `capture devices` and `capture controls` print them, one `name: value` each.
    public var summary: [(String, String)] {
        func modes<Mode: RawRepresentable & CaseIterable & Hashable>(_ set: Set<Mode>) -> String where Mode.RawValue == String {
            let names = Mode.allCases.filter(set.contains).map(\.rawValue)
            return names.isEmpty ? "unsupported" : names.joined(separator: ", ")
        }
        var lines: [(String, String)] = [
            ("focus-mode", modes(focusModes)),
            ("focus-point", isFocusPointOfInterestSupported ? "supported" : "unsupported"),
            ("lens-position", isLockingFocusWithCustomLensPositionSupported ? "supported" : "unsupported"),
            ("exposure-mode", modes(exposureModes)),
            ("exposure-point", isExposurePointOfInterestSupported ? "supported" : "unsupported"),
        ]
        lines.append(
            (
                "exposure-duration",
                exposureDurationRange.map { "\(ControlMapping.format($0.lowerBound.seconds))-\(ControlMapping.format($0.upperBound.seconds)) s" }
                    ?? "unsupported"
            ))
        lines.append(("gain", gainRange.map { "\($0.lowerBound)-\($0.upperBound)" } ?? "unsupported"))
        lines.append(
            (
                "exposure-bias",
                exposureTargetBiasRange.map { "\(ControlMapping.format($0.lowerBound)) to \(ControlMapping.format($0.upperBound)) EV" } ?? "unsupported"
            ))
        lines.append(("white-balance-mode", modes(whiteBalanceModes)))
        lines.append(("white-balance-temperature", whiteBalanceTemperatureRange.map { "\($0.lowerBound)-\($0.upperBound) K" } ?? "unsupported"))
        lines.append(("flash", hasFlash ? "supported" : "unsupported"))
        lines.append(("torch", hasTorch ? "supported" : "unsupported"))
        lines.append(("low-light-boost", isLowLightBoostSupported ? "supported" : "unsupported"))
        lines.append(("zoom", zoom == .none ? "unsupported" : "1-\(ControlMapping.format(maxZoomFactor)) (\(zoom))"))
        return lines
    }
}

/// The first frame that carries a change of a device's settings, as one streaming input saw it.
public struct FrameStamp: Sendable, Hashable {
    /// The session input streaming the device.
    public var input: String
    /// The frame's sequence number: the driver's for a V4L2 camera, the frame count for the test pattern.
    public var sequence: UInt64?
    /// The frame's presentation timestamp (running time of its session).
    public var presentationTime: Duration?
    /// Frames that arrived after the change was made but were stamped before it. The frame itself is
    /// promised to carry the change; these are not promised either way (a driver that stamps the start
    /// of a frame and fills it at its end may have filled the last of them with the new value).
    public var framesBefore: Int
    /// From the change to the arrival of this frame.
    public var latency: Duration
}

/// A change made to a device's settings: what was written, and, when the device streams in a session
/// of this process, the first frame that carries it (like the `syncTime` AVFoundation hands to
/// `setFocusModeLocked(lensPosition:completionHandler:)`).
public struct DeviceChange: Sendable {
    /// The device's unique id.
    public let device: String
    /// What was set, readable: `brightness=200`, `zoom=2 (crop)`, `focus-mode=continuous`.
    public let summary: String
    /// How the first frame is recognised: for a driver's control, the first frame the driver captured
    /// after the write (its timestamp); for a simulated control or the crop zoom, the first frame that
    /// passes the session's element after the property was set.
    let waits: [Promise<FrameStamp>]

    init(device: String, summary: String, waits: [Promise<FrameStamp>] = []) {
        self.device = device
        self.summary = summary
        self.waits = waits
    }

    /// True when the device streams in a session of this process, so a first frame will be reported.
    public var isStreaming: Bool { !waits.isEmpty }

    /// The first frame with the change, in each session input streaming the device (empty when none
    /// streams it, or when no frame came within `timeout`).
    public func firstFrames(timeout: Duration = .seconds(3)) async -> [FrameStamp] {
        var stamps: [FrameStamp] = []
        for wait in waits {
            if let stamp = try? await wait.value(
                timeout: timeout, timeoutError: .timedOut(waitingFor: "the first frame after \(summary)", seconds: timeout.seconds))
            {
                stamps.append(stamp)
            }
        }
        return stamps
    }

    /// The first frame with the change, in the first input streaming the device; nil when none does or
    /// no frame came within `timeout`.
    public func firstFrame(timeout: Duration = .seconds(3)) async -> FrameStamp? {
        await firstFrames(timeout: timeout).first
    }
}
