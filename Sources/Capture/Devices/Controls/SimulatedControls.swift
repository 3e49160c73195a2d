import Foundation

/// What a session's source segment does to the frames of a device whose controls it simulates (the
/// test pattern) or whose zoom it crops: the values of its `videobalance`, of its white-balance cast
/// and of its crop.
struct SourceEffects: Hashable, Sendable {
    /// videobalance: brightness -1...1, contrast 0...2, saturation 0...2, hue -1...1.
    var brightness = 0.0
    var contrast = 1.0
    var saturation = 1.0
    var hue = 0.0
    var cast = WhiteBalanceCast.neutral
    /// 1 is no zoom.
    var zoom = 1.0
}

/// The colour cast of a white balance set for another light than the scene's: a camera balanced for
/// a warmer light than the scene's (a lower temperature) makes the picture bluer, for a colder one
/// oranger. `warmth` is -1 (2800 K on a 6500 K scene: blue) ... 0 (neutral) ... +1 (orange).
struct WhiteBalanceCast: Hashable, Sendable {
    var warmth: Double
    static let neutral = WhiteBalanceCast(warmth: 0)
    var isNeutral: Bool { abs(warmth) < 0.001 }

    /// The chroma shift at full warmth, in 8-bit code values.
    static let chromaShift = 48.0

    /// The cast of a white balance locked at `kelvin` on the simulated 6500 K scene.
    init(kelvin: Int64) { warmth = max(-1, min(1, Double(kelvin - 6500) / 3700)) }
    init(warmth: Double) { self.warmth = warmth }

    /// Shifts the colours of one raw frame in place: the chroma planes of I420/YV12/NV12/NV21, the chroma
    /// bytes of YUY2/UYVY/YVYU, the red and blue bytes of 32-bit RGB. Other formats are left alone.
    func apply(to bytes: UnsafeMutableRawBufferPointer, layout: VideoLayoutInfo) {
        guard !isNeutral, let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let blueShift = Int((-warmth * Self.chromaShift).rounded())  // U (Cb)
        let redShift = Int((warmth * Self.chromaShift).rounded())  // V (Cr)
        let blueTable = Self.table(adding: blueShift), redTable = Self.table(adding: redShift)
        let count = bytes.count
        let width = layout.width, height = layout.height
        func plane(_ index: Int, rows: Int, columns: Int, step: Int, first: Int, table: [UInt8]) {
            guard index < layout.offsets.count else { return }
            for row in 0..<rows {
                let start = layout.offsets[index] + row * layout.strides[index] + first
                var column = 0
                while column < columns {
                    let at = start + column * step
                    guard at < count else { return }
                    base[at] = table[Int(base[at])]
                    column += 1
                }
            }
        }
        let chromaWidth = (width + 1) / 2, chromaHeight = (height + 1) / 2
        switch layout.format {
        case "I420":
            plane(1, rows: chromaHeight, columns: chromaWidth, step: 1, first: 0, table: blueTable)
            plane(2, rows: chromaHeight, columns: chromaWidth, step: 1, first: 0, table: redTable)
        case "YV12":
            plane(1, rows: chromaHeight, columns: chromaWidth, step: 1, first: 0, table: redTable)
            plane(2, rows: chromaHeight, columns: chromaWidth, step: 1, first: 0, table: blueTable)
        case "NV12", "NV21":
            let (uFirst, vFirst) = layout.format == "NV12" ? (0, 1) : (1, 0)
            plane(1, rows: chromaHeight, columns: chromaWidth, step: 2, first: uFirst, table: blueTable)
            plane(1, rows: chromaHeight, columns: chromaWidth, step: 2, first: vFirst, table: redTable)
        case "YUY2", "UYVY", "YVYU":
            let (uFirst, vFirst) = layout.format == "YUY2" ? (1, 3) : layout.format == "UYVY" ? (0, 2) : (3, 1)
            plane(0, rows: height, columns: chromaWidth, step: 4, first: uFirst, table: blueTable)
            plane(0, rows: height, columns: chromaWidth, step: 4, first: vFirst, table: redTable)
        case "RGBx", "RGBA", "BGRx", "BGRA", "xRGB", "ARGB", "xBGR", "ABGR":
            let redGain = Self.gainTable(1 + 0.35 * warmth), blueGain = Self.gainTable(1 - 0.35 * warmth)
            let red = layout.format.firstIndex(of: "R").map { layout.format.distance(from: layout.format.startIndex, to: $0) } ?? 0
            let blue = layout.format.firstIndex(of: "B").map { layout.format.distance(from: layout.format.startIndex, to: $0) } ?? 2
            plane(0, rows: height, columns: width, step: 4, first: red, table: redGain)
            plane(0, rows: height, columns: width, step: 4, first: blue, table: blueGain)
        default:
            return
        }
    }

    private static func table(adding shift: Int) -> [UInt8] {
        (0..<256).map { UInt8(clamping: $0 + shift) }
    }

    private static func gainTable(_ gain: Double) -> [UInt8] {
        (0..<256).map { UInt8(clamping: Int((Double($0) * gain).rounded())) }
    }
}

/// The layout of a raw frame the cast needs (a copy of GStreamer's `VideoLayout`, so the cast can be
/// tested without GStreamer).
struct VideoLayoutInfo: Hashable, Sendable {
    var format: String
    var width: Int
    var height: Int
    var strides: [Int]
    var offsets: [Int]
}

/// The controls the test pattern simulates, so the device API can be exercised end to end without a
/// camera. They carry the V4L2 ids and names of the real controls, and the session's source segment
/// makes them visible in the frames:
///
/// | control | range (default) | in the frames |
/// | --- | --- | --- |
/// | `brightness` | 0-255 (128) | videobalance brightness (v - 128) / 128 |
/// | `contrast` | 0-255 (128) | videobalance contrast v / 128 |
/// | `saturation` | 0-255 (128) | videobalance saturation v / 128 |
/// | `hue` | -180-180 (0) | videobalance hue v / 180 |
/// | `white_balance_automatic` | boolean (1) | off: the temperature below applies |
/// | `white_balance_temperature` | 2800-10000 K (6500) | a colour cast for a 6500 K scene: bluer below, oranger above |
/// | `zoom_absolute` | 100-800 (100) | a crop of the centre scaled back to the frame size: v / 100 times |
///
/// Each device id has its own values (the process's `test-pattern`, or a test's own id).
final class TestPatternControls: ControlBackend {
    private let values = Locked<[UInt32: Int64]>([:])

    static let descriptions: [DeviceControl] = [
        control(V4L2Control.brightness, "Brightness", .integer, 0, 255, 128),
        control(V4L2Control.contrast, "Contrast", .integer, 0, 255, 128),
        control(V4L2Control.saturation, "Saturation", .integer, 0, 255, 128),
        control(V4L2Control.hue, "Hue", .integer, -180, 180, 0),
        control(V4L2Control.whiteBalanceAutomatic, "White Balance, Automatic", .boolean, 0, 1, 1),
        control(V4L2Control.whiteBalanceTemperature, "White Balance Temperature", .integer, 2800, 10000, 6500, step: 10),
        control(V4L2Control.zoomAbsolute, "Zoom, Absolute", .integer, 100, 800, 100),
    ]

    private static func control(
        _ id: UInt32, _ name: String, _ kind: DeviceControl.Kind, _ minimum: Int64, _ maximum: Int64,
        _ value: Int64, step: UInt64 = 1
    ) -> DeviceControl {
        DeviceControl(
            id: id, name: name, kind: kind, minimum: minimum, maximum: maximum, step: step, defaultValue: value, value: value,
            isReadOnly: false, menuItems: [:])
    }

    var appliesInSession: Bool { true }

    func controls() throws(V4L2Errno) -> [DeviceControl] {
        let current = values.withLock { $0 }
        return Self.descriptions.map { description in
            var control = description
            control.value = current[control.id] ?? control.defaultValue
            // A manual temperature has no effect while the automatic white balance is on.
            if control.id == V4L2Control.whiteBalanceTemperature, (current[V4L2Control.whiteBalanceAutomatic] ?? 1) != 0 { control.flags |= 0x0010 }
            return control
        }
    }

    func write(_ write: ControlWrite) throws(V4L2Errno) {
        guard case .integer(let value) = write.value, let control = Self.descriptions.first(where: { $0.id == write.id }) else {
            throw V4L2Errno(code: EINVAL)
        }
        guard (control.minimum...control.maximum).contains(value) else { throw V4L2Errno(code: ERANGE) }
        values.withLock { $0[write.id] = control.aligned(value) }
    }

    func frameSize() -> Size? { nil }

    /// What the source segment does to the frames with the current values.
    var effects: SourceEffects {
        let current = values.withLock { $0 }
        func value(_ id: UInt32) -> Int64 { current[id] ?? Self.descriptions.first { $0.id == id }?.defaultValue ?? 0 }
        var effects = SourceEffects()
        effects.brightness = Double(value(V4L2Control.brightness) - 128) / 128
        effects.contrast = Double(value(V4L2Control.contrast)) / 128
        effects.saturation = Double(value(V4L2Control.saturation)) / 128
        effects.hue = Double(value(V4L2Control.hue)) / 180
        effects.cast = value(V4L2Control.whiteBalanceAutomatic) != 0 ? .neutral : WhiteBalanceCast(kelvin: value(V4L2Control.whiteBalanceTemperature))
        effects.zoom = Double(value(V4L2Control.zoomAbsolute)) / 100
        return effects
    }
}
