import Foundation
import GStreamer

/// A value of a statement field, typed as GStreamer's structure parser read it.
enum PipelineValue: Hashable, Sendable, CustomStringConvertible {
    case string(String)
    case int(Int)
    case double(Double)
    case bool(Bool)
    case fraction(Int, Int)
    /// `{ a, b }`.
    case list([PipelineValue])
    /// `< a, b >`.
    case array([PipelineValue])
    /// A value of a type a `.pipeline` key never takes (a range ...), with GStreamer's type name and text.
    case unsupported(type: String, text: String)

    var description: String {
        switch self {
        case .string(let value): value
        case .int(let value): String(value)
        case .double(let value): String(value)
        case .bool(let value): String(value)
        case .fraction(let numerator, let denominator): "\(numerator)/\(denominator)"
        case .list(let items): "{ " + items.map(\.description).joined(separator: ", ") + " }"
        case .array(let items): "< " + items.map(\.description).joined(separator: ", ") + " >"
        case .unsupported(_, let text): text
        }
    }
}

/// One `key=value` of a statement.
struct Field: Sendable {
    var key: String
    var value: PipelineValue
    /// The value exactly as written (quotes included).
    var text: String
    var keyLocation: SourceLocation
    var valueLocation: SourceLocation

    /// For list and array values: each item as written, where it is, and (for quoted items) the
    /// statement text it holds, located character by character (what `repeat, actions=` needs).
    var items: [Item] = []
    /// For a quoted scalar: its content as a statement, located character by character.
    var nested: LogicalStatement?
    /// True when the value was written between double quotes.
    var isQuoted = false

    struct Item: Sendable {
        var value: PipelineValue
        var text: String
        var location: SourceLocation
        var isQuoted: Bool
        var nested: LogicalStatement?
    }
}

/// A statement of a `.pipeline` file, as read: a name and fields, with where each is.
struct Statement: Sendable {
    var name: String
    /// Where the statement starts.
    var location: SourceLocation
    var fields: [Field]

    /// The field of that key (the last one when a key is given twice).
    func field(_ key: String) -> Field? { fields.last { $0.key == key } }

    /// Where a key is written, or the statement's start when it is not.
    func location(of key: String) -> SourceLocation { field(key)?.keyLocation ?? location }
}

/// Reads logical statements with GStreamer's structure parser.
enum StatementReader {
    enum Outcome {
        case statement(Statement)
        case error(String, SourceLocation)
    }

    /// Reads one statement. `knownNames` are checked before GStreamer sees the text (an unknown
    /// name is reported by the caller, with the list of known statements).
    static func read(_ logical: LogicalStatement, isKnown: (String) -> Bool) -> Outcome {
        if let problem = invalidCharacter(in: logical) { return problem }
        let (name, nameOffset) = Lexer.name(of: logical.bytes)
        guard !name.isEmpty else {
            return .error(
                "expected a statement name (like 'input' or 'start'), found '\(firstScalar(logical.bytes, at: nameOffset))'",
                logical.location(at: nameOffset))
        }
        guard isKnown(name) else {
            // The caller says which statements exist; the fields are not read.
            return .statement(Statement(name: name, location: logical.location(at: nameOffset), fields: []))
        }
        let raw: RawStatement
        do {
            raw = try Lexer.lex(logical.bytes)
        } catch {
            return .error(error.message, logical.location(at: error.offset))
        }
        let text = Lexer.gstText(name: raw.name, fields: raw.fields[...])
        guard let (structure, _) = Structure.parse(text) else {
            return diagnose(raw, logical)
        }
        var fields: [Field] = []
        for rawField in raw.fields {
            let value = typedValue(of: rawField.key, in: structure)
            var field = Field(
                key: rawField.key, value: value, text: source(of: rawField.value, logical),
                keyLocation: logical.location(at: rawField.keyOffset),
                valueLocation: logical.location(at: rawField.value.bodyOffset))
            field.isQuoted = rawField.value.isQuoted
            field.nested = nestedStatement(rawField.value, logical)
            if case .list(_, let items) = rawField.value.body {
                let typedItems: [PipelineValue]
                switch value {
                case .list(let values), .array(let values): typedItems = values
                default: typedItems = []
                }
                field.items = items.enumerated().map { index, item in
                    Field.Item(
                        value: index < typedItems.count ? typedItems[index] : itemValue(item),
                        text: source(of: item, logical), location: logical.location(at: item.bodyOffset),
                        isQuoted: item.isQuoted, nested: nestedStatement(item, logical))
                }
            }
            fields.append(field)
        }
        return .statement(Statement(name: raw.name, location: logical.location(at: raw.nameOffset), fields: fields))
    }

    /// GStreamer rejected the statement: find the first field it cannot read.
    private static func diagnose(_ raw: RawStatement, _ logical: LogicalStatement) -> Outcome {
        for count in 1...max(raw.fields.count, 1) where count <= raw.fields.count {
            let text = Lexer.gstText(name: raw.name, fields: raw.fields[0..<count])
            if Structure.parse(text) == nil {
                let field = raw.fields[count - 1]
                let written = source(of: field.value, logical)
                var message = "cannot read the value of '\(field.key)': \(written)"
                if let type = field.value.typePrefix { message += " is not a valid (\(type)) value" }
                return .error(message, logical.location(at: field.value.bodyOffset))
            }
        }
        return .error("GStreamer's structure parser cannot read this statement", logical.start)
    }

    /// Control characters (other than tab) and NUL bytes never belong in a statement.
    private static func invalidCharacter(in logical: LogicalStatement) -> Outcome? {
        for (offset, byte) in logical.bytes.enumerated() where (byte < 0x20 && byte != 0x09) || byte == 0x7F {
            return .error(
                "control character U+\(String(byte, radix: 16, uppercase: true).leftPadded(to: 4)) in the statement; remove it",
                logical.location(at: offset))
        }
        return nil
    }

    private static func firstScalar(_ bytes: [UInt8], at offset: Int) -> String {
        guard offset < bytes.count else { return "" }
        var end = offset + 1
        while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
        return String(decoding: bytes[offset..<end], as: UTF8.self)
    }

    private static func source(of value: RawValue, _ logical: LogicalStatement) -> String {
        String(decoding: logical.bytes[value.offset..<min(value.end, logical.bytes.count)], as: UTF8.self)
    }

    /// A quoted value's content as a statement of its own, each character located where it is written.
    private static func nestedStatement(_ value: RawValue, _ logical: LogicalStatement) -> LogicalStatement? {
        guard let (bytes, offsets) = Lexer.unescape(value) else { return nil }
        return LogicalStatement(
            bytes: bytes, positions: offsets.map { logical.location(at: $0) },
            endPosition: logical.location(at: value.end - 1))
    }

    /// Reads one list item on its own (used when the list's own reading gave fewer items).
    private static func itemValue(_ item: RawValue) -> PipelineValue {
        guard let (structure, _) = Structure.parse("v, v=" + Lexer.gstText(item)) else {
            return .unsupported(type: "unreadable", text: Lexer.gstText(item))
        }
        return typedValue(of: "v", in: structure)
    }

    static func typedValue(of key: String, in structure: Structure, depth: Int = 0) -> PipelineValue {
        let type = structure.typeName(key) ?? "missing"
        let text = structure.serialized(key) ?? ""
        switch type {
        case "gchararray":
            return .string(structure.string(key) ?? "")
        case "gint":
            return structure.int(key).map(PipelineValue.int) ?? .unsupported(type: type, text: text)
        case "guint", "gint64", "guint64", "glong", "gulong":
            return Int(text).map(PipelineValue.int) ?? .unsupported(type: type, text: text)
        case "gdouble":
            return structure.double(key).map(PipelineValue.double) ?? .unsupported(type: type, text: text)
        case "gfloat":
            return Double(text).map(PipelineValue.double) ?? .unsupported(type: type, text: text)
        case "gboolean":
            return structure.bool(key).map(PipelineValue.bool) ?? .unsupported(type: type, text: text)
        case "GstFraction":
            return structure.fraction(key).map { PipelineValue.fraction($0.0, $0.1) } ?? .unsupported(type: type, text: text)
        case "GstValueList", "GstValueArray":
            guard depth < Lexer.maxDepth else { return .unsupported(type: type, text: text) }
            // Each item is serialized with its type ("(string)qr"): read it back on its own.
            let items = splitSerializedItems(text).map { item -> PipelineValue in
                guard let (inner, _) = Structure.parse("v, v=" + item) else { return .unsupported(type: "unreadable", text: item) }
                return typedValue(of: "v", in: inner, depth: depth + 1)
            }
            return type == "GstValueList" ? .list(items) : .array(items)
        default:
            return .unsupported(type: type, text: text)
        }
    }

    /// Splits the serialization of a list or array ("{ (string)a, (int)1 }") into its items.
    static func splitSerializedItems(_ text: String) -> [String] {
        var bytes = Array(text.utf8)
        guard bytes.count >= 2 else { return [] }
        bytes = Array(bytes[1..<(bytes.count - 1)])
        var items: [String] = []
        var depth = 0, start = 0, index = 0
        var inQuote = false, escaped = false
        while index < bytes.count {
            let byte = bytes[index]
            if inQuote {
                if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inQuote = false }
            } else {
                switch byte {
                case UInt8(ascii: "\""): inQuote = true
                case UInt8(ascii: "{"), UInt8(ascii: "<"), UInt8(ascii: "["), UInt8(ascii: "("): depth += 1
                case UInt8(ascii: "}"), UInt8(ascii: ">"), UInt8(ascii: "]"), UInt8(ascii: ")"): depth -= 1
                case UInt8(ascii: ",") where depth == 0:
                    items.append(String(decoding: bytes[start..<index], as: UTF8.self))
                    start = index + 1
                default: break
                }
            }
            index += 1
        }
        let last = String(decoding: bytes[start..<bytes.count], as: UTF8.self)
        if !last.allSatisfy(\.isWhitespace) || !items.isEmpty { items.append(last) }
        return items.map { $0.trimmingCharacters(in: .whitespaces) }
    }
}

extension String {
    func leftPadded(to width: Int, with pad: Character = "0") -> String {
        count >= width ? self : String(repeating: pad, count: width - count) + self
    }
}
