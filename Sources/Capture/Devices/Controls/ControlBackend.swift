import CV4L2
import Foundation

/// Where a device's controls are read and written: a V4L2 node, the test pattern's simulated controls,
/// or (in tests) a described device in memory. Errors are errnos, as the driver gives them.
protocol ControlBackend: Sendable {
    /// The controls with their current values.
    func controls() throws(V4L2Errno) -> [DeviceControl]
    /// Writes one control.
    func write(_ write: ControlWrite) throws(V4L2Errno)
    /// The size of the device's current format, when it says (regions of interest are in its pixels).
    func frameSize() -> Size?
    /// True when a write changes the frames through the session's elements (simulated controls), false
    /// when the driver changes them.
    var appliesInSession: Bool { get }
}

/// The controls of a V4L2 node, through the ioctls of CV4L2. Each call opens the node and closes it,
/// so a node that went away answers ENOENT/ENODEV; the streaming handle (v4l2src's) is another one, and
/// V4L2 lets any handle set controls while it streams.
struct V4L2NodeControls: ControlBackend {
    let path: String

    var appliesInSession: Bool { false }

    func controls() throws(V4L2Errno) -> [DeviceControl] {
        try DeviceControl.readAll(devicePath: path)
    }

    func write(_ write: ControlWrite) throws(V4L2Errno) {
        let result: Int32
        switch write.value {
        case .integer(let value): result = capture_v4l2_set_control(path, write.id, value)
        case .rect(let left, let top, let width, let height): result = capture_v4l2_set_rect_control(path, write.id, left, top, width, height)
        }
        if result < 0 { throw V4L2Errno(code: -result) }
    }

    func frameSize() -> Size? {
        var width: UInt32 = 0, height: UInt32 = 0
        guard capture_v4l2_format_size(path, &width, &height) == 0, width > 0, height > 0 else { return nil }
        return Size(width: Int(width), height: Int(height))
    }
}
