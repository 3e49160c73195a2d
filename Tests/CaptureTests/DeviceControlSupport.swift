import Foundation

@testable import Capture

/// A device described in memory: its controls, the writes it received in order, and a switch that
/// makes it vanish (every call then fails with ENODEV, as an unplugged camera's node does).
final class DescribedDeviceControls: ControlBackend {
    private struct State {
        var controls: [DeviceControl]
        var writes: [ControlWrite] = []
        var vanished = false
        /// errno a write of that control id fails with.
        var refusals: [UInt32: Int32] = [:]
    }
    private let state: Locked<State>
    private let size: Size?

    init(_ controls: [DeviceControl], frameSize: Size? = Size(width: 640, height: 480)) {
        state = Locked(State(controls: controls))
        size = frameSize
    }

    var appliesInSession: Bool { false }
    /// What was written, `key=value`, in order.
    var writes: [String] { state.value.writes.map(\.description) }
    func vanish() { state[\.vanished] = true }
    func refuse(_ id: UInt32, with code: Int32) { state.withLock { $0.refusals[id] = code } }

    func controls() throws(V4L2Errno) -> [DeviceControl] {
        let current = state.value
        if current.vanished { throw V4L2Errno(code: ENODEV) }
        return current.controls
    }

    func write(_ write: ControlWrite) throws(V4L2Errno) {
        let refusal: Int32? = state.withLock { state in
            if state.vanished { return ENODEV }
            if let code = state.refusals[write.id] { return code }
            state.writes.append(write)
            if case .integer(let value) = write.value, let index = state.controls.firstIndex(where: { $0.id == write.id }),
                state.controls[index].kind != .button
            {
                state.controls[index].value = value
            }
            return nil
        }
        if let refusal { throw V4L2Errno(code: refusal) }
    }

    func frameSize() -> Size? { size }
}

/// Control descriptions of the devices the tests describe (ids and names as V4L2 gives them).
enum DescribedDevices {
    static func control(
        _ id: UInt32, _ name: String, _ kind: DeviceControl.Kind, _ minimum: Int64, _ maximum: Int64, _ value: Int64?,
        step: UInt64 = 1, items: [Int64: String] = [:], flags: UInt32 = 0
    ) -> DeviceControl {
        DeviceControl(
            id: id, name: name, kind: kind, minimum: minimum, maximum: maximum, step: step, defaultValue: value ?? 0, value: value,
            isReadOnly: false, menuItems: items, flags: flags)
    }

    /// A UVC webcam: automatic/manual focus with a lens position, aperture-priority exposure with a
    /// manual time, gain, dynamic frame rate, automatic white balance with a temperature, zoom 100-500.
    static let webcam: [DeviceControl] = [
        control(0x0098_0900, "Brightness", .integer, 0, 255, 128),
        control(0x0098_090c, "White Balance, Automatic", .boolean, 0, 1, 1),
        control(0x0098_0913, "Gain", .integer, 0, 255, 0),
        control(0x0098_0918, "Power Line Frequency", .menu, 0, 2, 2, items: [0: "Disabled", 1: "50 Hz", 2: "60 Hz"]),
        control(0x0098_091a, "White Balance Temperature", .integer, 2800, 6500, 4000, flags: 0x0010),
        control(0x009a_0901, "Auto Exposure", .menu, 0, 3, 3, items: [1: "Manual Mode", 3: "Aperture Priority Mode"]),
        control(0x009a_0902, "Exposure Time, Absolute", .integer, 3, 2047, 250),
        control(0x009a_0903, "Exposure, Dynamic Framerate", .boolean, 0, 1, 0),
        control(0x009a_090a, "Focus, Absolute", .integer, 0, 250, 0, step: 5),
        control(0x009a_090c, "Focus, Automatic Continuous", .boolean, 0, 1, 1),
        control(0x009a_090d, "Zoom, Absolute", .integer, 100, 500, 100),
    ]

    /// A phone-style sensor: a flash LED with torch, one-shot autofocus, an exposure bias menu, preset
    /// white balance with a one-shot balance, analogue gain, and a region of interest.
    static let sensor: [DeviceControl] = [
        control(0x0098_090d, "Do White Balance", .button, 0, 0, nil),
        control(0x009a_0901, "Auto Exposure", .menu, 0, 1, 0, items: [0: "Auto Mode", 1: "Manual Mode"]),
        control(0x009a_0902, "Exposure Time, Absolute", .integer, 1, 10000, 100),
        control(0x009a_090a, "Focus, Absolute", .integer, 0, 1023, 512),
        control(0x009a_0913, "Auto Exposure, Bias", .integerMenu, 0, 4, 2, items: [0: "-2000", 1: "-1000", 2: "0", 3: "1000", 4: "2000"]),
        control(0x009a_0914, "White Balance, Auto & Preset", .menu, 0, 2, 1, items: [0: "Manual", 1: "Auto", 2: "Incandescent"]),
        control(0x009a_091c, "Auto Focus, Start", .button, 0, 0, nil),
        control(0x009c_0901, "LED Mode", .menu, 0, 2, 0, items: [0: "Off", 1: "Flash", 2: "Torch"]),
        control(0x009c_0903, "Strobe", .button, 0, 0, nil),
        control(0x009c_0904, "Stop Strobe", .button, 0, 0, nil),
        control(0x009c_0908, "Torch Intensity", .integer, 0, 100, 0),
        control(0x009e_0903, "Analogue Gain", .integer, 0, 240, 16),
        control(0x0098_1ae1, "Region of Interest Rectangle", .rectangle, 0, 0, nil),
        control(0x0098_1ae2, "Region of Interest Auto Ctrls", .bitmask, 0, 0xff, 0),
    ]

    /// vivid's controls: user-class ones only.
    static let vivid: [DeviceControl] = [
        control(0x0098_0900, "Brightness", .integer, 0, 255, 128),
        control(0x0098_0901, "Contrast", .integer, 0, 255, 128),
        control(0x0098_0902, "Saturation", .integer, 0, 255, 128),
        control(0x0098_0903, "Hue", .integer, -128, 128, 0),
        control(0x0098_0912, "Gain, Automatic", .boolean, 0, 1, 1),
        control(0x0098_0913, "Gain", .integer, 0, 255, 100, flags: 0x0090),
        control(0x0098_0914, "Horizontal Flip", .boolean, 0, 1, 0),
        control(0x0098_0915, "Vertical Flip", .boolean, 0, 1, 0),
    ]

    /// A device of these tests alone, with its own controls (the hub is process-wide).
    static func device(
        _ id: String, _ controls: [DeviceControl], kind: DeviceKind = .system(factory: "fakesrc", properties: [:])
    )
        -> (CaptureDevice, DescribedDeviceControls)
    {
        let backend = DescribedDeviceControls(controls)
        DeviceControlHub.shared.install(backend, for: id)
        let device = CaptureDevice(
            uniqueID: id, localizedName: "Described camera \(id)", mediaType: .video,
            formats: CaptureDevice.testPattern.formats, kind: kind)
        return (device, backend)
    }

    /// The test pattern under an id of one test: its simulated controls are that test's alone (other
    /// suites read the frames of `test-pattern` and must not see them change).
    static func testPattern(_ id: String) -> CaptureDevice {
        CaptureDevice(
            uniqueID: id, localizedName: "Test pattern of \(id)", mediaType: .video, formats: CaptureDevice.testPattern.formats,
            kind: .testPattern, controls: TestPatternControls.descriptions)
    }
}
