import Capture
import Foundation

/// The value grammars of the format: durations, sizes, byte sizes, bit rates, frame rates. Each
/// reader returns nil for a value that does not fit; each writer gives back a value the reader reads
/// to the same result.
enum ValueSyntax {
    // MARK: Numbers

    static func number(_ value: PipelineValue) -> Double? {
        switch value {
        case .int(let number): return Double(number)
        case .double(let number): return number.isFinite ? number : nil
        default: return nil
        }
    }

    /// An integer, also from a double that holds a whole number (GStreamer reads integers beyond
    /// 32 bits as doubles).
    static func integer(_ value: PipelineValue) -> Int? {
        switch value {
        case .int(let number): return number
        case .double(let number):
            guard number.isFinite, number == number.rounded(), abs(number) < 9e15 else { return nil }
            return Int(number)
        default: return nil
        }
    }

    /// A number followed by a unit ("1.5m", "50MB"): the number and the unit, or nil.
    static func splitUnit(_ text: String) -> (Double, String)? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        var numberEnd = trimmed.startIndex
        var sawDigit = false
        while numberEnd < trimmed.endIndex, trimmed[numberEnd].isASCII, trimmed[numberEnd].isNumber || trimmed[numberEnd] == "." {
            if trimmed[numberEnd].isNumber { sawDigit = true }
            numberEnd = trimmed.index(after: numberEnd)
        }
        guard sawDigit, let number = Double(trimmed[..<numberEnd]), number.isFinite else { return nil }
        let unit = trimmed[numberEnd...].trimmingCharacters(in: .whitespaces)
        return (number, unit)
    }

    // MARK: Durations

    /// The longest duration the format takes (about 31 years): keeps nanoseconds in 64 bits.
    static let maxSeconds = 1e9

    /// A number of seconds (`2.5`) or a string with a unit (`"500ms"`, `"2s"`, `"1.5m"`, `"1h"`).
    static func duration(_ value: PipelineValue) -> Duration? {
        let seconds: Double
        switch value {
        case .int, .double:
            guard let number = number(value) else { return nil }
            seconds = number
        case .string(let text):
            guard let (number, unit) = splitUnit(text) else { return nil }
            switch unit {
            case "ms": seconds = number / 1000
            case "s", "": seconds = number
            case "m", "min": seconds = number * 60
            case "h": seconds = number * 3600
            default: return nil
            }
        default:
            return nil
        }
        guard seconds >= 0, seconds <= maxSeconds else { return nil }
        return .nanoseconds(Int64((seconds * 1e9).rounded()))
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(nanoseconds(duration)) / 1e9
    }

    /// Whole seconds as an integer, whole milliseconds as `"NNNms"`, anything finer as seconds.
    static func write(_ duration: Duration) -> PipelineValue {
        let nanoseconds = nanoseconds(duration)
        if nanoseconds % 1_000_000_000 == 0, nanoseconds / 1_000_000_000 <= Int64(Int32.max) {
            return .int(Int(nanoseconds / 1_000_000_000))
        }
        if nanoseconds % 1_000_000 == 0 { return .string("\(nanoseconds / 1_000_000)ms") }
        return .double(Double(nanoseconds) / 1e9)
    }

    /// "2.5 s", "500 ms" (for messages).
    static func describe(_ duration: Duration) -> String {
        let nanoseconds = nanoseconds(duration)
        if nanoseconds < 1_000_000_000 && nanoseconds % 1_000_000 == 0 { return "\(nanoseconds / 1_000_000) ms" }
        return String(format: "%g s", Double(nanoseconds) / 1e9)
    }

    // MARK: Sizes

    /// The largest width or height the format takes.
    static let maxDimension = 16384

    /// `"1280x720"`.
    static func size(_ value: PipelineValue) -> Size? {
        guard case .string(let text) = value, let size = Size(parsing: text),
            size.width <= maxDimension, size.height <= maxDimension
        else { return nil }
        return size
    }

    static func write(_ size: Size) -> PipelineValue { .string(size.description) }

    // MARK: Byte sizes

    static let byteUnits: [String: Double] = [
        "b": 1, "k": 1e3, "kb": 1e3, "m": 1e6, "mb": 1e6, "g": 1e9, "gb": 1e9, "t": 1e12, "tb": 1e12,
        "kib": 1024, "mib": 1_048_576, "gib": 1_073_741_824, "tib": 1_099_511_627_776,
    ]
    /// The largest byte size the format takes (1 EB): keeps arithmetic in 64 bits.
    static let maxBytes = 1e18

    /// An integer number of bytes or a string with a unit: `"50MB"` (KB/MB/GB/TB are powers of 1000,
    /// KiB/MiB/GiB/TiB powers of 1024; the case of the unit does not matter).
    static func byteSize(_ value: PipelineValue) -> Int64? {
        let bytes: Double
        switch value {
        case .int, .double:
            guard let whole = integer(value) else { return nil }
            bytes = Double(whole)
        case .string(let text):
            guard let (number, unit) = splitUnit(text) else { return nil }
            guard let factor = unit.isEmpty ? 1 : byteUnits[unit.lowercased()] else { return nil }
            bytes = (number * factor).rounded()
        default:
            return nil
        }
        guard bytes >= 0, bytes <= maxBytes else { return nil }
        return Int64(bytes)
    }

    static func write(bytes: Int64) -> PipelineValue {
        for (unit, factor) in [("TB", Int64(1_000_000_000_000)), ("GB", 1_000_000_000), ("MB", 1_000_000), ("KB", 1000)]
        where bytes >= factor && bytes % factor == 0 {
            return .string("\(bytes / factor)\(unit)")
        }
        return bytes <= Int64(Int32.max) ? .int(Int(bytes)) : .string("\(bytes)B")
    }

    // MARK: Bit rates

    static let bitrateUnits: [String: Double] = [
        "": 1, "bps": 1, "k": 1e3, "kbps": 1e3, "kbit/s": 1e3, "m": 1e6, "mbps": 1e6, "mbit/s": 1e6, "g": 1e9, "gbps": 1e9,
    ]

    /// Bits per second: an integer, or a string with a unit (`"4Mbps"`, `"800kbps"`, `"2M"`).
    static func bitrate(_ value: PipelineValue) -> Int? {
        let bits: Double
        switch value {
        case .int, .double:
            guard let whole = integer(value) else { return nil }
            bits = Double(whole)
        case .string(let text):
            guard let (number, unit) = splitUnit(text), let factor = bitrateUnits[unit.lowercased()] else { return nil }
            bits = (number * factor).rounded()
        default:
            return nil
        }
        guard bits >= 1, bits <= 1e11 else { return nil }
        return Int(bits)
    }

    static func write(bitrate: Int) -> PipelineValue {
        if bitrate % 1_000_000 == 0 { return .string("\(bitrate / 1_000_000)Mbps") }
        if bitrate % 1000 == 0 { return .string("\(bitrate / 1000)kbps") }
        return bitrate <= Int(Int32.max) ? .int(bitrate) : .string("\(bitrate)bps")
    }

    // MARK: Frame rates

    /// `30`, `29.97`, `30000/1001` (a fraction), or the same in a string. Reduced to lowest terms.
    static func frameRate(_ value: PipelineValue) -> FrameRate? {
        var rate: FrameRate
        switch value {
        case .int, .double:
            guard let number = number(value), number > 0, number <= 1000 else { return nil }
            rate = FrameRate(number)
        case .fraction(let numerator, let denominator):
            guard numerator > 0, denominator > 0 else { return nil }
            rate = FrameRate(numerator, denominator)
        case .string(let text):
            let parts = text.split(separator: "/")
            if parts.count == 2, let numerator = Int(parts[0]), let denominator = Int(parts[1]), numerator > 0, denominator > 0 {
                rate = FrameRate(numerator, denominator)
            } else if let number = Double(text), number.isFinite, number > 0 {
                rate = FrameRate(number)
            } else {
                return nil
            }
        default:
            return nil
        }
        guard rate.value > 0, rate.value <= 1000 else { return nil }
        return reduced(rate)
    }

    static func reduced(_ rate: FrameRate) -> FrameRate {
        var a = abs(rate.numerator), b = abs(rate.denominator)
        while b != 0 { (a, b) = (b, a % b) }
        let divisor = max(a, 1)
        return FrameRate(rate.numerator / divisor, rate.denominator / divisor)
    }

    static func write(_ rate: FrameRate) -> PipelineValue {
        let rate = reduced(rate)
        return rate.denominator == 1 ? .int(rate.numerator) : .fraction(rate.numerator, rate.denominator)
    }

    // MARK: Normalized geometry

    /// The numbers of a list or array (`< 0.0, 0.25, 1.0, 0.5 >`), or nil when an item is not a number.
    static func numbers(_ value: PipelineValue) -> [Double]? {
        switch value {
        case .array(let items), .list(let items):
            let numbers = items.compactMap(number)
            return numbers.count == items.count ? numbers : nil
        default:
            return nil
        }
    }

    static func rect(_ value: PipelineValue) -> NormalizedRect? {
        guard let numbers = numbers(value), numbers.count == 4, numbers.allSatisfy({ (0...1).contains($0) }) else { return nil }
        let rect = NormalizedRect(x: numbers[0], y: numbers[1], width: numbers[2], height: numbers[3])
        guard rect.width > 0, rect.height > 0, rect.x + rect.width <= 1 + 1e-9, rect.y + rect.height <= 1 + 1e-9 else { return nil }
        return rect
    }

    static func point(_ value: PipelineValue) -> NormalizedPoint? {
        guard let numbers = numbers(value), numbers.count == 2, numbers.allSatisfy({ (0...1).contains($0) }) else { return nil }
        return NormalizedPoint(x: numbers[0], y: numbers[1])
    }

    /// `< x0, y0, x1, y1 ... >`: points in normalized coordinates (an even count of numbers, each 0-1).
    static func points(_ value: PipelineValue) -> [NormalizedPoint]? {
        guard let numbers = numbers(value), !numbers.isEmpty, numbers.count % 2 == 0, numbers.allSatisfy({ (0...1).contains($0) }) else { return nil }
        return stride(from: 0, to: numbers.count, by: 2).map { NormalizedPoint(x: numbers[$0], y: numbers[$0 + 1]) }
    }

    static func write(_ points: [NormalizedPoint]) -> PipelineValue {
        .array(points.flatMap { [PipelineValue.double($0.x), .double($0.y)] })
    }

    static func write(_ rect: NormalizedRect) -> PipelineValue {
        .array([.double(rect.x), .double(rect.y), .double(rect.width), .double(rect.height)])
    }

    static func write(_ point: NormalizedPoint) -> PipelineValue {
        .array([.double(point.x), .double(point.y)])
    }

    // MARK: Files

    /// True when a location holds a printf-style number (`%d`, `%05d`).
    static func hasNumberPattern(_ location: String) -> Bool {
        let scalars = Array(location.unicodeScalars)
        var index = 0
        while index < scalars.count {
            if scalars[index] == "%" {
                var next = index + 1
                if next < scalars.count && scalars[next] == "%" { index = next + 1; continue }
                while next < scalars.count && ("0"..."9").contains(scalars[next]) { next += 1 }
                if next < scalars.count && (scalars[next] == "d" || scalars[next] == "u" || scalars[next] == "i") { return true }
            }
            index += 1
        }
        return false
    }

    static func pathExtension(_ location: String) -> String {
        (location as NSString).pathExtension.lowercased()
    }
}

/// The value grammars of the format, for command-line options that take the same values.
public enum PipelineValues {
    /// The longest duration a value may give, in seconds.
    public static var maximumSeconds: Double { ValueSyntax.maxSeconds }

    /// A duration as in `.pipeline` files: `2.5`, `"500ms"`, `"2s"`, `"1.5m"` (a bare number is seconds;
    /// the units are `ms`, `s`, `m` or `min`, and `h`).
    /// - Parameter text: The duration as written.
    /// - Returns: The duration, or nil when the text is not one, is negative or is longer than
    ///   `maximumSeconds`.
    public static func duration(_ text: String) -> Duration? {
        if let number = Double(text) { return ValueSyntax.duration(.double(number)) }
        return ValueSyntax.duration(.string(text))
    }
}
