import CV4L2
import Foundation

/// A control a device reports (brightness, contrast, gain, flips ...), as V4L2 describes it.
public struct DeviceControl: Sendable, Hashable, Codable {
    /// The control's V4L2 type: what its value is.
    public enum Kind: String, Sendable, Codable {
        /// `integer`, `boolean`, `menu` (an index into named items), `button` (an action, no value),
        /// `integer64`, `string`, `bitmask`, `integerMenu` (an index into numbers), `rectangle`, and `other`
        /// for a type the library does not know.
        case integer, boolean, menu, button, integer64, string, bitmask, integerMenu = "integer-menu", rectangle, other
    }
    /// The V4L2 control ID (`V4L2_CID_*`).
    public var id: UInt32
    /// The control's name as the driver gives it ("Brightness", "Horizontal Flip").
    public var name: String
    /// What kind of value the control holds.
    public var kind: Kind
    /// The smallest value the control takes.
    public var minimum: Int64
    /// The largest value the control takes.
    public var maximum: Int64
    /// The step between the values the control takes.
    public var step: UInt64
    /// The value the driver sets by default.
    public var defaultValue: Int64
    /// The current value, when the device lets it be read.
    public var value: Int64?
    /// True when the driver says the control can be read but not written.
    public var isReadOnly: Bool
    /// For menu controls: index -> item name; for integer menus: index -> the item's value, as text.
    public var menuItems: [Int64: String]
    /// The V4L2 control flags (`V4L2_CTRL_FLAG_*`): inactive, volatile, grabbed ...
    public var flags: UInt32 = 0

    /// False while the control has no effect (a manual value while its automatic mode is on).
    public var isInactive: Bool { flags & 0x0010 != 0 }
    /// True when a value can be written: not read-only, and of a kind that holds a number.
    public var isSettable: Bool {
        !isReadOnly && flags & 0x0001 == 0 && [.integer, .boolean, .menu, .button, .integer64, .bitmask, .integerMenu, .rectangle].contains(kind)
    }

    /// A stable lower-case key for the control ("brightness", "horizontal_flip").
    public var key: String {
        var key = ""
        for character in name.lowercased() {
            if character.isLetter || character.isNumber { key.append(character) } else if !key.hasSuffix("_") { key.append("_") }
        }
        return key.trimmingCharacters(in: CharacterSet(charactersIn: "_"))
    }

    /// Lets go of a V4L2 node that was removed (unplugged, its driver unbound) while this process held
    /// it: every descriptor still open on the old node is pointed at /dev/null, its number kept, so the
    /// driver can bind again under the same name. GStreamer 1.22's v4l2src keeps one such descriptor
    /// (its buffer pool's copy) after it has stopped on a vanished device, even once the pipeline is
    /// gone, and the camera came back as /dev/video1. Returns how many were let go.
    @discardableResult
    static func releaseVanished(devicePath: String) -> Int {
        max(0, Int(capture_v4l2_release_vanished(devicePath)))
    }

    /// True when another handle is streaming from the V4L2 node (it cannot take a format now).
    public static func isBusy(devicePath: String) -> Bool {
        capture_v4l2_is_busy(devicePath) == 1
    }

    /// Whether a V4L2 node is there and answers (false once it is unplugged or its driver disconnected it).
    public static func isPresent(devicePath: String) -> Bool {
        capture_v4l2_is_present(devicePath) == 1
    }

    /// Reads every control of a V4L2 device node. Returns an empty list when the node cannot be opened.
    public static func read(devicePath: String) -> [DeviceControl] {
        (try? readAll(devicePath: devicePath)) ?? []
    }

    /// Reads every control of a V4L2 device node; throws the errno when the node cannot be opened or
    /// stops answering (ENOENT, ENODEV once it is unplugged).
    static func readAll(devicePath: String) throws(V4L2Errno) -> [DeviceControl] {
        let fd = capture_v4l2_open(devicePath)
        guard fd >= 0 else { throw V4L2Errno(code: -fd) }
        defer { capture_v4l2_close(fd) }
        var controls: [DeviceControl] = []
        var previous: UInt32 = 0
        var raw = capture_v4l2_control()
        while true {
            let found = capture_v4l2_next_control(fd, previous, &raw)
            if found < 0 { throw V4L2Errno(code: -found) }
            guard found == 1 else { break }
            previous = raw.id
            let name = withUnsafeBytes(of: raw.name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            let kind: Kind =
                switch raw.type {
                case 1: .integer
                case 2: .boolean
                case 3: .menu
                case 4: .button
                case 5: .integer64
                case 7: .string
                case 8: .bitmask
                case 9: .integerMenu
                case 0x0107: .rectangle
                default: .other
                }
            var items: [Int64: String] = [:]
            if kind == .menu, raw.maximum - raw.minimum < 256 {
                var buffer = [CChar](repeating: 0, count: 64)
                for index in raw.minimum...raw.maximum where index >= 0 {
                    if capture_v4l2_menu_item(fd, raw.id, UInt32(index), &buffer, Int32(buffer.count)) == 1 {
                        items[index] = String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
                    }
                }
            } else if kind == .integerMenu, raw.maximum - raw.minimum < 256 {
                var value: Int64 = 0
                for index in raw.minimum...raw.maximum where index >= 0 {
                    if capture_v4l2_integer_menu_item(fd, raw.id, UInt32(index), &value) == 1 { items[index] = String(value) }
                }
            }
            controls.append(
                DeviceControl(
                    id: raw.id, name: name, kind: kind, minimum: raw.minimum, maximum: raw.maximum,
                    step: raw.step, defaultValue: raw.default_value,
                    value: raw.has_value != 0 ? (kind == .bitmask ? Int64(UInt32(truncatingIfNeeded: raw.value)) : raw.value) : nil,
                    isReadOnly: raw.flags & 0x0004 != 0, menuItems: items, flags: raw.flags))
        }
        return controls
    }
}

/// An errno a V4L2 ioctl (or opening the node) failed with.
struct V4L2Errno: Error, Equatable, Sendable {
    var code: Int32

    /// The node is gone: unplugged, or its driver disconnected it.
    var meansGone: Bool { code == ENOENT || code == ENODEV || code == ENXIO }

    var description: String { "\(String(cString: strerror(code))) (errno \(code))" }
}
