import Capture

/// An error in a `.pipeline` file, at a place in its source. A location on line 0 is about the file
/// as a whole (it cannot be read): it renders as `FILE: error: MESSAGE`, without a source line.
public struct Diagnostic: Hashable, Sendable, CustomStringConvertible {
    /// Where the error is (a key's column for errors about a key).
    public var location: SourceLocation
    /// What is wrong, and what would be right.
    public var message: String
    /// The source line the location is on (without its line break).
    public var sourceLine: String

    /// A diagnostic at a location, with the text of its source line.
    public init(location: SourceLocation, message: String, sourceLine: String) {
        self.location = location
        self.message = message
        self.sourceLine = sourceLine
    }

    /// `FILE:LINE:COLUMN: error: MESSAGE`, the source line, and a caret under the column. Tabs before
    /// the column are kept in the caret line so the caret lines up in a terminal. Other control
    /// characters (of the file, its name or a quoted value) are escaped: a file cannot write to the
    /// terminal through its diagnostics, and one diagnostic stays three lines.
    public var rendered: String {
        let file = FileNaming.printable(location.file), message = FileNaming.printable(message)
        guard location.line > 0 else { return "\(file): error: \(message)" }
        return "\(file):\(location.line):\(location.column): error: \(message)\n\(printableSourceLine)\n\(caretLine)"
    }

    /// The source line with control characters other than tabs escaped.
    var printableSourceLine: String { sourceLine.unicodeScalars.map(Self.printable).joined() }

    static func printable(_ scalar: Unicode.Scalar) -> String {
        scalar == "\t" ? "\t" : FileNaming.printable(String(scalar))
    }

    /// The line holding the caret.
    public var caretLine: String {
        var prefix = ""
        for (index, scalar) in sourceLine.unicodeScalars.enumerated() where index < location.column - 1 {
            prefix += scalar == "\t" ? "\t" : String(repeating: " ", count: Self.printable(scalar).unicodeScalars.count)
        }
        let missing = max(0, location.column - 1 - sourceLine.unicodeScalars.count)
        return prefix + String(repeating: " ", count: missing) + "^"
    }

    /// The diagnostic as `rendered` shows it: location, message, source line and caret.
    public var description: String { rendered }
}

/// Every error found in a `.pipeline` file (a file is checked as a whole; the errors are in source
/// order). Thrown by `PipelineDocument.parse` and `PipelineDocument.load`.
public struct PipelineDiagnostics: Error, Hashable, Sendable, CustomStringConvertible {
    /// The errors, in source order (those of `--set` overrides last).
    public var diagnostics: [Diagnostic]

    /// Diagnostics, in the order given.
    public init(_ diagnostics: [Diagnostic]) { self.diagnostics = diagnostics }

    /// The diagnostics rendered, one after the other, each ending with a line break: the first
    /// `PipelineFileLimits.maximumDiagnosticsShown`, then how many more there are.
    public var rendered: String {
        let shown = diagnostics.prefix(PipelineFileLimits.maximumDiagnosticsShown).map { $0.rendered + "\n" }.joined()
        let more = diagnostics.count - PipelineFileLimits.maximumDiagnosticsShown
        return more > 0 ? shown + "... and \(more) more error\(more == 1 ? "" : "s") not shown\n" : shown
    }

    /// The diagnostics as `rendered` shows them.
    public var description: String { rendered }
}

/// Collects diagnostics while a file is read.
struct DiagnosticSink {
    private(set) var diagnostics: [Diagnostic] = []
    private var seen = Set<Diagnostic>()
    private var sources: [String: SourceText] = [:]
    private var order: [String] = []

    mutating func register(_ source: SourceText) {
        if sources[source.name] == nil { order.append(source.name) }
        sources[source.name] = source
    }

    mutating func error(_ message: String, at location: SourceLocation) {
        let line = sources[location.file]?.line(location.line) ?? ""
        let diagnostic = Diagnostic(location: location, message: message, sourceLine: line)
        // A repeated body is checked twice: report each problem once.
        if seen.insert(diagnostic).inserted { diagnostics.append(diagnostic) }
    }

    /// A sink that knows the same sources and holds no diagnostics.
    func emptyCopy() -> DiagnosticSink {
        var copy = DiagnosticSink()
        copy.sources = sources
        copy.order = order
        return copy
    }

    func contains(_ diagnostic: Diagnostic) -> Bool { seen.contains(diagnostic) }

    var isEmpty: Bool { diagnostics.isEmpty }
    var count: Int { diagnostics.count }

    /// Diagnostics of the main file first, in line/column order; then those of the overrides.
    var sorted: [Diagnostic] {
        let rank = Dictionary(uniqueKeysWithValues: order.enumerated().map { ($1, $0) })
        return diagnostics.enumerated().sorted { left, right in
            let l = (rank[left.element.location.file] ?? Int.max, left.element.location.line, left.element.location.column, left.offset)
            let r = (rank[right.element.location.file] ?? Int.max, right.element.location.line, right.element.location.column, right.offset)
            return l < r
        }.map(\.element)
    }
}
