/// The shape of a statement as written: where its name, keys and values are. GStreamer's structure
/// parser reads the values; this lexer follows the same grammar so that every key and value keeps
/// its column, and so that a statement GStreamer rejects gets a precise, located message.
struct RawStatement: Sendable {
    var name: String
    var nameOffset: Int
    var fields: [RawField]
}

struct RawField: Sendable {
    var key: String
    var keyOffset: Int
    var value: RawValue
}

struct RawValue: Sendable {
    enum Body: Sendable {
        /// A plain or double-quoted scalar; `source` is the exact text, quotes included.
        case scalar(source: String, quoted: Bool)
        /// `{ }` list, `< >` array or `[ ]` range.
        case list(open: UInt8, items: [RawValue])
    }
    /// Where the value starts (its type prefix when it has one).
    var offset: Int
    /// Where the value proper starts (after any `(type)` prefix).
    var bodyOffset: Int
    /// One past the value's last byte.
    var end: Int
    var typePrefix: String?
    var body: Body

    var isQuoted: Bool {
        if case .scalar(_, true) = body { return true }
        return false
    }
}

struct SyntaxError: Error, Sendable {
    var offset: Int
    var message: String
}

enum Lexer {
    /// Type prefixes a `.pipeline` value may carry: the simple types. Others (caps, structures,
    /// buffers, dates ...) have no meaning in a pipeline file.
    static let allowedTypes: Set<String> = [
        "string", "str", "s", "int", "i", "int64", "uint", "uint64", "double", "d", "float", "f",
        "boolean", "bool", "b", "fraction",
    ]
    /// How deep lists may nest.
    static let maxDepth = 8

    static func isStringByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "+"), UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "."):
            return true
        default:
            return false
        }
    }

    /// Reads only the statement name (for the known-statement check that comes before GStreamer).
    static func name(of bytes: [UInt8]) -> (name: String, offset: Int) {
        var index = 0
        while index < bytes.count && SourceSplitter.isSpace(bytes[index]) { index += 1 }
        let start = index
        while index < bytes.count && isStringByte(bytes[index]) { index += 1 }
        return (String(decoding: bytes[start..<index], as: UTF8.self), start)
    }

    static func lex(_ bytes: [UInt8]) throws(SyntaxError) -> RawStatement {
        var reader = Reader(bytes: bytes)
        return try reader.statement()
    }

    private struct Reader {
        let bytes: [UInt8]
        var index = 0

        var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipSpace() {
            while let byte = current, SourceSplitter.isSpace(byte) { index += 1 }
        }

        func describe(_ offset: Int) -> String {
            guard offset < bytes.count else { return "the end of the statement" }
            // The whole scalar at the offset (it may be several bytes).
            var end = offset + 1
            while end < bytes.count && bytes[end] & 0xC0 == 0x80 { end += 1 }
            return "'" + String(decoding: bytes[offset..<end], as: UTF8.self) + "'"
        }

        mutating func word() -> String {
            let start = index
            while let byte = current, Lexer.isStringByte(byte) { index += 1 }
            return String(decoding: bytes[start..<index], as: UTF8.self)
        }

        mutating func statement() throws(SyntaxError) -> RawStatement {
            skipSpace()
            let nameOffset = index
            let name = word()
            guard !name.isEmpty else {
                throw SyntaxError(offset: index, message: "expected a statement name (like 'input' or 'start'), found \(describe(index))")
            }
            var fields: [RawField] = []
            skipSpace()
            if try atEnd() { return RawStatement(name: name, nameOffset: nameOffset, fields: fields) }
            guard current == UInt8(ascii: ",") else {
                throw SyntaxError(
                    offset: index, message: "expected ',' after the statement name '\(name)', found \(describe(index)); write 'name, key=value, ...'")
            }
            index += 1
            while true {
                skipSpace()
                if try atEnd() { break }
                let keyOffset = index
                let key = word()
                guard !key.isEmpty else {
                    if current == UInt8(ascii: ",") {
                        throw SyntaxError(offset: index, message: "empty field: two commas in a row")
                    }
                    throw SyntaxError(offset: index, message: "expected a key (key=value), found \(describe(index))")
                }
                skipSpace()
                guard current == UInt8(ascii: "=") else {
                    throw SyntaxError(offset: index, message: "expected '=' after the key '\(key)', found \(describe(index))")
                }
                index += 1
                skipSpace()
                guard current != nil, current != UInt8(ascii: ","), current != UInt8(ascii: ";") else {
                    throw SyntaxError(offset: index, message: "missing value for the key '\(key)'")
                }
                let value = try self.value(key: key, depth: 0)
                fields.append(RawField(key: key, keyOffset: keyOffset, value: value))
                let afterValue = index
                skipSpace()
                if try atEnd() { break }
                guard current == UInt8(ascii: ",") else {
                    if afterValue == index && !value.isQuoted, case .scalar = value.body {
                        throw SyntaxError(
                            offset: index,
                            message:
                                "unexpected \(describe(index)) in the value of '\(key)': quote values that hold characters other than letters, digits and _-+/:. (\(key)=\"...\")"
                        )
                    }
                    throw SyntaxError(
                        offset: index, message: "expected ',' before \(describe(index)); quote values that contain spaces or commas (\(key)=\"...\")")
                }
                index += 1
            }
            return RawStatement(name: name, nameOffset: nameOffset, fields: fields)
        }

        /// True at the end of the statement; a ';' ends it too, and only blanks may follow one.
        mutating func atEnd() throws(SyntaxError) -> Bool {
            guard let byte = current else { return true }
            guard byte == UInt8(ascii: ";") else { return false }
            index += 1
            skipSpace()
            if current != nil {
                throw SyntaxError(offset: index, message: "one statement per line: unexpected text after ';'")
            }
            return true
        }

        mutating func value(key: String, depth: Int) throws(SyntaxError) -> RawValue {
            let start = index
            var typePrefix: String?
            if current == UInt8(ascii: "(") {
                index += 1
                skipSpace()
                let typeOffset = index
                let type = word()
                skipSpace()
                guard !type.isEmpty, current == UInt8(ascii: ")") else {
                    throw SyntaxError(offset: typeOffset, message: "expected a type name and ')' in the type of '\(key)', like (string) or (int)")
                }
                guard Lexer.allowedTypes.contains(type) else {
                    throw SyntaxError(
                        offset: typeOffset,
                        message: "unsupported type (\(type)) for '\(key)': use (string), (int), (int64), (uint), (double), (float), (boolean) or (fraction)")
                }
                index += 1
                skipSpace()
                typePrefix = type
            }
            let bodyOffset = index
            guard let byte = current else {
                throw SyntaxError(offset: index, message: "missing value for the key '\(key)'")
            }
            switch byte {
            case UInt8(ascii: "\""):
                index += 1
                var escaped = false
                while true {
                    guard let next = current else {
                        throw SyntaxError(offset: bodyOffset, message: "unterminated string in the value of '\(key)': a closing '\"' is missing")
                    }
                    index += 1
                    if escaped { escaped = false } else if next == UInt8(ascii: "\\") { escaped = true } else if next == UInt8(ascii: "\"") { break }
                }
                let source = String(decoding: bytes[bodyOffset..<index], as: UTF8.self)
                return RawValue(offset: start, bodyOffset: bodyOffset, end: index, typePrefix: typePrefix, body: .scalar(source: source, quoted: true))
            case UInt8(ascii: "{"), UInt8(ascii: "<"), UInt8(ascii: "["):
                guard depth < Lexer.maxDepth else {
                    throw SyntaxError(offset: index, message: "the value of '\(key)' nests lists more than \(Lexer.maxDepth) deep")
                }
                let close: UInt8 = byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : byte == UInt8(ascii: "<") ? UInt8(ascii: ">") : UInt8(ascii: "]")
                index += 1
                var items: [RawValue] = []
                skipSpace()
                if current == close {
                    index += 1
                } else {
                    while true {
                        skipSpace()
                        guard current != nil else {
                            throw SyntaxError(
                                offset: bodyOffset,
                                message:
                                    "unclosed '\(Character(Unicode.Scalar(byte)))' in the value of '\(key)': a closing '\(Character(Unicode.Scalar(close)))' is missing"
                            )
                        }
                        items.append(try value(key: key, depth: depth + 1))
                        skipSpace()
                        if current == close { index += 1; break }
                        guard current == UInt8(ascii: ",") else {
                            if current == nil {
                                throw SyntaxError(
                                    offset: bodyOffset,
                                    message:
                                        "unclosed '\(Character(Unicode.Scalar(byte)))' in the value of '\(key)': a closing '\(Character(Unicode.Scalar(close)))' is missing"
                                )
                            }
                            throw SyntaxError(
                                offset: index,
                                message:
                                    "expected ',' or '\(Character(Unicode.Scalar(close)))' in the value of '\(key)', found \(describe(index)); quote items that hold spaces or special characters"
                            )
                        }
                        index += 1
                    }
                }
                return RawValue(offset: start, bodyOffset: bodyOffset, end: index, typePrefix: typePrefix, body: .list(open: byte, items: items))
            default:
                let text = word()
                guard !text.isEmpty else {
                    throw SyntaxError(
                        offset: index,
                        message:
                            "unexpected \(describe(index)) in the value of '\(key)': quote values that hold characters other than letters, digits and _-+/:. (\(key)=\"...\")"
                    )
                }
                return RawValue(offset: start, bodyOffset: bodyOffset, end: index, typePrefix: typePrefix, body: .scalar(source: text, quoted: false))
            }
        }
    }

    /// The text handed to GStreamer for a value: a double-quoted value without a type is marked
    /// `(string)`, so that "90" stays the string 90 (GStreamer 1.22 would read it as an int and warn).
    static func gstText(_ value: RawValue) -> String {
        var text = ""
        if let type = value.typePrefix {
            // GStreamer's parser knows the 64-bit types by their GType names only.
            text = "(\(["int64": "gint64", "uint64": "guint64"][type] ?? type))"
        } else if value.isQuoted {
            text = "(string)"
        }
        switch value.body {
        case .scalar(let source, _):
            text += source
        case .list(let open, let items):
            let close: Character = open == UInt8(ascii: "{") ? "}" : open == UInt8(ascii: "<") ? ">" : "]"
            text += String(Character(Unicode.Scalar(open))) + " " + items.map(gstText).joined(separator: ", ") + " " + String(close)
        }
        return text
    }

    static func gstText(name: String, fields: ArraySlice<RawField>) -> String {
        ([name] + fields.map { "\($0.key)=\(gstText($0.value))" }).joined(separator: ", ")
    }

    /// The unescaped content of a quoted scalar, with for each byte its offset in the statement.
    static func unescape(_ value: RawValue) -> (bytes: [UInt8], offsets: [Int])? {
        guard case .scalar(let source, true) = value.body else { return nil }
        let raw = Array(source.utf8)
        var bytes: [UInt8] = []
        var offsets: [Int] = []
        var index = 1
        while index < raw.count - 1 {
            if raw[index] == UInt8(ascii: "\\") && index + 1 < raw.count - 1 {
                index += 1
            }
            bytes.append(raw[index])
            offsets.append(value.bodyOffset + index)
            index += 1
        }
        return (bytes, offsets)
    }
}
