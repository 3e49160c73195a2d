/// A place in a `.pipeline` source: the file name, a 1-based line and a 1-based column.
/// Columns count Unicode scalars, so a caret printed under the column lines up with the text.
public struct SourceLocation: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The file as it was named to the parser (or `--set` for command-line overrides).
    public var file: String
    /// 1-based (0: the file as a whole).
    public var line: Int
    /// 1-based, in Unicode scalars.
    public var column: Int

    /// A location.
    public init(file: String, line: Int, column: Int) {
        self.file = file
        self.line = line
        self.column = column
    }

    /// `FILE:LINE:COLUMN`.
    public var description: String { "\(file):\(line):\(column)" }

    /// `LINE:COLUMN`, as used inside messages about the same file ("first declared at 3:1").
    public var lineColumn: String { "\(line):\(column)" }

    /// Source order within a file (line, then column).
    public static func < (lhs: SourceLocation, rhs: SourceLocation) -> Bool {
        (lhs.line, lhs.column) < (rhs.line, rhs.column)
    }
}

/// A stored value that takes no part in equality or hashing: two documents are equal when they mean
/// the same session and scenario, wherever their statements were written.
@propertyWrapper
public struct IgnoredInEquality<Value: Sendable>: Hashable, Sendable {
    /// The stored value.
    public var wrappedValue: Value

    /// Wraps a value.
    public init(wrappedValue: Value) { self.wrappedValue = wrappedValue }

    /// Always true: the wrapped value takes no part in equality.
    public static func == (lhs: Self, rhs: Self) -> Bool { true }
    /// Adds nothing: the wrapped value takes no part in hashing.
    public func hash(into hasher: inout Hasher) {}
}

/// The text of one source (a file, or the `--set` overrides), split into lines for diagnostics.
struct SourceText: Sendable {
    let name: String
    let lines: [String]

    init(name: String, text: String) {
        self.name = name
        // Split on the scalar: "\r\n" is one Character, so splitting the String would miss it.
        var lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false).map { line -> String in
            var line = String(String.UnicodeScalarView(line))
            if line.unicodeScalars.last == "\r" { line.unicodeScalars.removeLast() }
            return line
        }
        if lines.last == "" && lines.count > 1 { lines.removeLast() }
        self.lines = lines
    }

    init(name: String, lines: [String]) {
        self.name = name
        self.lines = lines
    }

    func line(_ number: Int) -> String {
        number >= 1 && number <= lines.count ? lines[number - 1] : ""
    }
}

/// One statement of a source after comments and continuations are removed: its bytes, and for every
/// byte the place it came from.
struct LogicalStatement: Sendable {
    var bytes: [UInt8]
    /// The source position of each byte (same count as `bytes`).
    var positions: [SourceLocation]
    /// Where a position past the end points to (the end of the statement's last line).
    var endPosition: SourceLocation

    var text: String { String(decoding: bytes, as: UTF8.self) }

    func location(at offset: Int) -> SourceLocation {
        offset >= 0 && offset < positions.count ? positions[offset] : endPosition
    }

    /// The statement's first position.
    var start: SourceLocation { positions.first ?? endPosition }
}

enum SourceSplitter {
    /// Splits a source into logical statements: `#` comments (outside double quotes) and blank lines
    /// are dropped, and a line ending in `\` continues on the next line.
    static func statements(of source: SourceText) -> [LogicalStatement] {
        var result: [LogicalStatement] = []
        var bytes: [UInt8] = []
        var positions: [SourceLocation] = []
        var inQuote = false
        var lastPosition = SourceLocation(file: source.name, line: 1, column: 1)

        func flush() {
            // Trim surrounding whitespace; an empty statement is a blank or comment-only line.
            var start = 0, end = bytes.count
            while start < end && isSpace(bytes[start]) { start += 1 }
            while end > start && isSpace(bytes[end - 1]) { end -= 1 }
            if start < end {
                result.append(
                    LogicalStatement(
                        bytes: Array(bytes[start..<end]), positions: Array(positions[start..<end]),
                        endPosition: lastPosition))
            }
            bytes.removeAll(keepingCapacity: true)
            positions.removeAll(keepingCapacity: true)
            inQuote = false
        }

        for (index, line) in source.lines.enumerated() {
            let number = index + 1
            let lineBytes = Array(line.utf8)
            let columns = scalarColumns(lineBytes)
            var cut = lineBytes.count
            var escaped = false
            for (offset, byte) in lineBytes.enumerated() {
                if inQuote {
                    if escaped { escaped = false } else if byte == UInt8(ascii: "\\") { escaped = true } else if byte == UInt8(ascii: "\"") { inQuote = false }
                } else if byte == UInt8(ascii: "\"") {
                    inQuote = true
                } else if byte == UInt8(ascii: "#") {
                    cut = offset
                    break
                }
            }
            var end = cut
            while end > 0 && (lineBytes[end - 1] == UInt8(ascii: " ") || lineBytes[end - 1] == UInt8(ascii: "\t")) { end -= 1 }
            let continues = end > 0 && lineBytes[end - 1] == UInt8(ascii: "\\")
            let contentEnd = continues ? end - 1 : cut
            for offset in 0..<contentEnd {
                bytes.append(lineBytes[offset])
                positions.append(SourceLocation(file: source.name, line: number, column: columns[offset]))
            }
            lastPosition = SourceLocation(file: source.name, line: number, column: (columns.last ?? 0) + 1)
            if continues {
                // The backslash becomes a separating space, located where the backslash was.
                bytes.append(UInt8(ascii: " "))
                positions.append(SourceLocation(file: source.name, line: number, column: columns[end - 1]))
            } else {
                flush()
            }
        }
        flush()
        return result
    }

    /// The 1-based column of every byte of a UTF-8 line (continuation bytes share their scalar's column).
    static func scalarColumns(_ bytes: [UInt8]) -> [Int] {
        var columns: [Int] = []
        columns.reserveCapacity(bytes.count)
        var column = 0
        for byte in bytes {
            if byte & 0xC0 != 0x80 { column += 1 }
            columns.append(max(column, 1))
        }
        return columns
    }

    static func isSpace(_ byte: UInt8) -> Bool {
        byte == 0x20 || (byte >= 0x09 && byte <= 0x0D)
    }
}
