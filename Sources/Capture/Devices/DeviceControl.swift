import CV4L2

/// A control a device reports (brightness, contrast, gain, flips ...), as V4L2 describes it.
public struct DeviceControl: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Codable {
        case integer, boolean, menu, button, integer64, string, bitmask, integerMenu = "integer-menu", other
    }
    public var id: UInt32
    public var name: String
    public var kind: Kind
    public var minimum: Int64
    public var maximum: Int64
    public var step: UInt64
    public var defaultValue: Int64
    /// The current value, when the device lets it be read.
    public var value: Int64?
    public var isReadOnly: Bool
    /// For menu controls: index -> item name.
    public var menuItems: [Int64: String]

    /// A stable lower-case key for the control ("brightness", "horizontal_flip").
    public var key: String {
        var key = ""
        for character in name.lowercased() {
            if character.isLetter || character.isNumber { key.append(character) }
            else if !key.hasSuffix("_") { key.append("_") }
        }
        return key.trimmingCharacters(in: CharacterSet(charactersIn: "_"))
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
        let fd = capture_v4l2_open(devicePath)
        guard fd >= 0 else { return [] }
        defer { capture_v4l2_close(fd) }
        var controls: [DeviceControl] = []
        var previous: UInt32 = 0
        var raw = capture_v4l2_control()
        while capture_v4l2_next_control(fd, previous, &raw) == 1 {
            previous = raw.id
            let name = withUnsafeBytes(of: raw.name) { bytes in
                String(decoding: bytes.prefix { $0 != 0 }, as: UTF8.self)
            }
            let kind: Kind = switch raw.type {
            case 1: .integer
            case 2: .boolean
            case 3: .menu
            case 4: .button
            case 5: .integer64
            case 7: .string
            case 8: .bitmask
            case 9: .integerMenu
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
            }
            controls.append(DeviceControl(id: raw.id, name: name, kind: kind, minimum: raw.minimum, maximum: raw.maximum,
                                          step: raw.step, defaultValue: raw.default_value,
                                          value: raw.has_value != 0 ? (kind == .bitmask ? Int64(UInt32(truncatingIfNeeded: raw.value)) : raw.value) : nil,
                                          isReadOnly: raw.flags & 0x0004 != 0, menuItems: items))
        }
        return controls
    }
}

import Foundation
