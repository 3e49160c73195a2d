import Capture
import CaptureControl
import Foundation

/// Options for reading a `.pipeline` file.
public struct ParseOptions: Sendable {
    /// `--set NAME.KEY=VALUE` overrides, applied to the statement declaring NAME (or to the `session`
    /// statement for `session.preset=...`) before the file is checked.
    public var overrides: [String]
    /// The directory relative `file:` devices resolve against. Nil: the directory of the file (or the
    /// current directory for text without a file).
    public var baseDirectory: String?
    /// Whether `file:` devices must exist (the only device check done without touching a device).
    public var checksFileDevices: Bool

    /// Options for a read; by default no overrides, paths relative to the file, and `file:` devices checked.
    public init(overrides: [String] = [], baseDirectory: String? = nil, checksFileDevices: Bool = true) {
        self.overrides = overrides
        self.baseDirectory = baseDirectory
        self.checksFileDevices = checksFileDevices
    }
}

extension PipelineDocument {
    /// Reads and checks `.pipeline` text. Every error of the file is reported, in source order.
    /// - Parameters:
    ///   - text: The file's text.
    ///   - file: The name diagnostics use (and, when it is a path, where relative paths resolve).
    ///   - options: Where relative paths resolve and whether `file:` devices must exist.
    public static func parse(_ text: String, file: String = "<input>", options: ParseOptions = ParseOptions()) throws(PipelineDiagnostics) -> PipelineDocument {
        var checker = Checker(file: file, options: options)
        return try checker.run(text: text)
    }

    /// Reads and checks a `.pipeline` file. A file that cannot be read, or that is not UTF-8, is reported
    /// as a diagnostic too.
    public static func load(path: String, options: ParseOptions = ParseOptions()) throws(PipelineDiagnostics) -> PipelineDocument {
        func refuse(_ message: String) -> PipelineDiagnostics {
            PipelineDiagnostics([Diagnostic(location: SourceLocation(file: path, line: 0, column: 0), message: message, sourceLine: "")])
        }
        var info = stat()
        if stat(path, &info) == 0 {
            switch info.st_mode & S_IFMT {
            case S_IFREG:
                guard Int(info.st_size) <= PipelineFileLimits.maximumFileBytes else {
                    throw refuse(
                        "the file has \(info.st_size) bytes; a .pipeline file may have at most \(PipelineFileLimits.maximumFileBytes) (use repeat for long scenarios)"
                    )
                }
            case S_IFDIR: throw refuse("it is a directory, not a .pipeline file")
            case S_IFCHR, S_IFBLK: throw refuse("it is a device, not a .pipeline file")
            case S_IFIFO, S_IFSOCK: throw refuse("it is a pipe or a socket, not a .pipeline file")
            default: break
            }
        }
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            let reason = (error as NSError).localizedFailureReason ?? (error as NSError).localizedDescription
            throw PipelineDiagnostics([
                Diagnostic(
                    location: SourceLocation(file: path, line: 0, column: 0),
                    message: "cannot read the file: \(reason)", sourceLine: "")
            ])
        }
        return try parse(bytes: [UInt8](data), file: path, options: options)
    }

    /// Reads and checks `.pipeline` bytes as a file holds them: more than
    /// `PipelineFileLimits.maximumFileBytes`, or bytes that are not UTF-8, are a diagnostic.
    public static func parse(bytes: [UInt8], file: String = "<input>", options: ParseOptions = ParseOptions()) throws(PipelineDiagnostics) -> PipelineDocument {
        guard bytes.count <= PipelineFileLimits.maximumFileBytes else {
            throw PipelineDiagnostics([
                Diagnostic(
                    location: SourceLocation(file: file, line: 0, column: 0),
                    message:
                        "the file has \(bytes.count) bytes; a .pipeline file may have at most \(PipelineFileLimits.maximumFileBytes) (use repeat for long scenarios)",
                    sourceLine: "")
            ])
        }
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw PipelineDiagnostics([invalidUTF8(bytes, file: file)])
        }
        return try parse(text, file: file, options: options)
    }

    /// Where the first invalid UTF-8 sequence is.
    static func invalidUTF8(_ bytes: [UInt8], file: String) -> Diagnostic {
        var line = 1, lineStart = 0
        var iterator = bytes.makeIterator()
        var decoder = UTF8()
        var offset = 0
        var column = 1
        loop: while true {
            let before = offset
            switch decoder.decode(&iterator) {
            case .scalarValue(let scalar):
                offset += String(scalar).utf8.count
                if scalar == "\n" { line += 1; lineStart = offset; column = 1 } else { column += 1 }
            case .emptyInput:
                break loop
            case .error:
                var end = before
                while end < bytes.count && bytes[end] != UInt8(ascii: "\n") { end += 1 }
                let text = String(decoding: bytes[lineStart..<end], as: UTF8.self)
                return Diagnostic(
                    location: SourceLocation(file: file, line: line, column: column),
                    message: "the file is not valid UTF-8 (byte 0x\(String(bytes[before], radix: 16, uppercase: true)) at offset \(before)); save it as UTF-8",
                    sourceLine: text)
            }
        }
        return Diagnostic(location: SourceLocation(file: file, line: 0, column: 0), message: "the file is not valid UTF-8", sourceLine: "")
    }
}

/// What the checker knows about a declared input.
struct InputInfo {
    var media: MediaType?
    var location: SourceLocation
}

/// What the checker knows about a declared output.
struct OutputInfo {
    var kind: OutputKind?
    var location: SourceLocation
}

/// The inputs and outputs in the session at a point of the scenario.
struct NameState {
    var inputs: [String: InputInfo] = [:]
    var outputs: [String: OutputInfo] = [:]
    var removed: [String: SourceLocation] = [:]

    func declaration(of name: String) -> SourceLocation? {
        inputs[name]?.location ?? outputs[name]?.location
    }
}

/// Reads statements into a `PipelineDocument`, collecting every diagnostic.
struct Checker {
    let file: String
    let options: ParseOptions
    var sink = DiagnosticSink()

    // Declarations.
    var session: SessionSettings?
    var inputs: [InputDeclaration] = []
    var outputs: [OutputDeclaration] = []
    var overlays: [OverlayDeclaration] = []
    var declared = NameState()
    var firstAction: SourceLocation?

    // The simulated session while the scenario is read.
    var state = NameState()
    /// The simulated session as each open configuration block found it: a block whose commit is
    /// expected to fail leaves the session as it was.
    var blockStates: [NameState] = []
    /// What `pick-from-library` statements picked so far, by name: the kind when known, and where.
    var picks: [String: (kind: MediaLibrary.MediaKind?, location: SourceLocation)] = [:]
    /// Every input and output name the file declares or adds, with where first.
    var everyName: [String: SourceLocation] = [:]
    /// Checks that need the whole file.
    var outputMentions: [(name: String, location: SourceLocation, statement: String)] = []
    var inputPriorityKeys: [(key: String, location: SourceLocation)] = []
    var presets: [SessionPreset] = []
    var overlayTargets: [(output: String, location: SourceLocation)] = []
    var outputInputs: [(output: String, input: String, location: SourceLocation)] = []
    var testPatternInputs: [(name: String, size: Size?, rate: FrameRate?, location: SourceLocation)] = []

    init(file: String, options: ParseOptions) {
        self.file = file
        self.options = options
    }

    mutating func error(_ message: String, at location: SourceLocation) {
        sink.error(message, at: location)
    }

    /// The directory relative device paths resolve against.
    var baseDirectory: String {
        if let base = options.baseDirectory { return base }
        if file.hasPrefix("<") { return FileManager.default.currentDirectoryPath }
        let directory = (file as NSString).deletingLastPathComponent
        return directory.isEmpty ? FileManager.default.currentDirectoryPath : directory
    }

    // MARK: Reading

    mutating func run(text: String) throws(PipelineDiagnostics) -> PipelineDocument {
        let lines = text.utf8.reduce(into: 1) { count, byte in if byte == UInt8(ascii: "\n") { count += 1 } }
        guard lines <= PipelineFileLimits.maximumLines else {
            throw PipelineDiagnostics([
                Diagnostic(
                    location: SourceLocation(file: file, line: 0, column: 0),
                    message:
                        "the file has \(lines) lines; a .pipeline file may have at most \(PipelineFileLimits.maximumLines) (use repeat for long scenarios)",
                    sourceLine: "")
            ])
        }
        let source = SourceText(name: file, text: text)
        sink.register(source)
        var statements: [Statement] = []
        for logical in SourceSplitter.statements(of: source) {
            if let statement = read(logical) { statements.append(statement) }
        }
        if !options.overrides.isEmpty {
            let overrideSource = SourceText(name: "--set", lines: options.overrides)
            sink.register(overrideSource)
            var applier = OverrideApplier(statements: statements, source: overrideSource)
            statements = applier.apply()
            for (message, location) in applier.problems { error(message, at: location) }
        }
        let scenario = check(statements)
        if inputs.isEmpty && sink.isEmpty && !statements.contains(where: { $0.name == "add-input" }) {
            // Nothing could ever run: say so instead of idling until Ctrl-C.
            error(
                "the file declares no input; a session needs one, e.g. input, name=camera, device=default",
                at: statements.first?.location ?? SourceLocation(file: file, line: 1, column: 1))
        }
        guard sink.isEmpty else { throw PipelineDiagnostics(sink.sorted) }
        return PipelineDocument(
            session: session ?? SessionSettings(), inputs: inputs, outputs: outputs, overlays: overlays,
            scenario: scenario, sourcePath: file.hasPrefix("<") ? nil : file)
    }

    /// Reads one logical statement; unknown statements are reported here.
    mutating func read(_ logical: LogicalStatement) -> Statement? {
        switch StatementReader.read(logical, isKnown: Vocabulary.statements.contains) {
        case .error(let message, let location):
            error(message, at: location)
            return nil
        case .statement(let statement):
            guard Vocabulary.statements.contains(statement.name) else {
                error(
                    "unknown statement '\(statement.name)'\(Suggest.didYouMean(statement.name, Vocabulary.statements)); known statements: declarations \(Vocabulary.declarations.joined(separator: ", ")); actions \(Vocabulary.actions.joined(separator: ", "))",
                    at: statement.location)
                return nil
            }
            return statement
        }
    }

    // MARK: The file

    mutating func check(_ statements: [Statement]) -> [ScenarioStep] {
        collectNames(statements)
        var sequence = SequenceBuilder()
        for statement in statements {
            if Vocabulary.declarations.contains(statement.name) {
                if let firstAction {
                    let hint =
                        statement.name == "input" || statement.name == "output"
                        ? "; to add one while the session runs, use add-\(statement.name) inside begin-configuration/commit-configuration"
                        : ""
                    error(
                        "'\(statement.name)' declaration after the first action (at \(firstAction.lineColumn)): declarations come first\(hint)",
                        at: statement.location)
                }
                declare(statement)
            } else {
                if firstAction == nil {
                    firstAction = statement.location
                    state = declared
                }
                act(statement, into: &sequence, repeatDepth: 0)
            }
        }
        if firstAction == nil { state = declared }
        let steps = finish(sequence)
        checkWholeFile()
        return steps
    }

    /// Names declared or added anywhere (top level; names added inside repeats join as they are read).
    mutating func collectNames(_ statements: [Statement]) {
        for statement in statements where ["input", "output", "add-input", "add-output"].contains(statement.name) {
            if let field = statement.field("name"), everyName[field.value.description] == nil {
                everyName[field.value.description] = statement.location
            }
        }
    }

    mutating func finish(_ sequence: SequenceBuilder) -> [ScenarioStep] {
        var sequence = sequence
        for open in sequence.openBlocks {
            error("begin-configuration is never committed: add commit-configuration after the block's statements", at: open)
            blockStates.removeLast()
        }
        return sequence.close()
    }

    mutating func checkWholeFile() {
        // Outputs' inputs and overlays' outputs may be declared in any order among the declarations.
        for (output, input, location) in outputInputs {
            if let info = declared.inputs[input] {
                if info.media == .audio {
                    error(
                        "output '\(output)' takes its frames from input '\(input)', which is an audio input (declared at \(info.location.lineColumn)); name a video input",
                        at: location)
                }
            } else {
                error(undeclared("input", input, in: declared), at: location)
            }
        }
        for (output, location) in overlayTargets {
            if let info = declared.outputs[output] {
                if info.kind == .metadata {
                    error("an overlay draws on a video output; '\(output)' is a metadata output (declared at \(info.location.lineColumn))", at: location)
                }
            } else if !(output == "preview" && declared.outputs.values.contains { $0.kind == .preview }) {
                error(undeclared("output", output, in: declared), at: location)
            }
        }
        for (name, location, statement) in outputMentions where everyName[name] == nil {
            let known = everyName.keys.sorted()
            error(
                "\(statement) names output '\(name)', which the file never declares or adds\(Suggest.didYouMean(name, known))\(known.isEmpty ? "" : "; names in this file: " + known.joined(separator: ", "))",
                at: location)
        }
        if !presets.contains(.inputPriority) {
            let current = session?.preset?.rawValue ?? "high"
            for (key, location) in inputPriorityKeys {
                error(
                    "\(key) applies only with the input-priority preset (session, preset=input-priority); with preset \(current) the preset chooses the device format",
                    at: location)
            }
        }
        // The test pattern's formats are known: check the presets against them without touching a device.
        for input in testPatternInputs {
            var checked = Set<SessionPreset>()
            func resolve(_ preset: SessionPreset) throws(CaptureError) {
                _ = try FormatSelector.resolve(
                    preset: preset, formats: CaptureDevice.testPattern.formats, inputName: input.name,
                    requestedSize: preset == .inputPriority ? input.size : nil,
                    requestedRate: preset == .inputPriority ? input.rate : nil)
            }
            for preset in presets.isEmpty ? [session?.preset ?? .high] : presets where checked.insert(preset).inserted {
                do {
                    try resolve(preset)
                } catch {
                    // The session's preset may fall back to another one.
                    if preset == session?.preset, let fallback = session?.fallbackPreset, (try? resolve(fallback)) != nil { continue }
                    self.error(error.description, at: input.location)
                }
            }
        }
    }

    /// "no input named 'x'; did you mean 'y'? (declared inputs: ...)".
    func undeclared(_ kind: String, _ name: String, in names: NameState) -> String {
        let same = kind == "input" ? names.inputs.keys.sorted() : names.outputs.keys.sorted()
        let other = kind == "input" ? names.outputs : [:]
        if kind == "output", names.inputs[name] != nil { return "'\(name)' is an input, not an output" }
        if other[name] != nil { return "'\(name)' is an output, not an input" }
        let list = same.isEmpty ? "the session has no \(kind)s" : "\(kind)s: " + same.joined(separator: ", ")
        return "no \(kind) named '\(name)'\(Suggest.didYouMean(name, same)); \(list)"
    }
}

/// Bounds on what a `.pipeline` file may be, so that a huge or endless file is refused at once instead
/// of filling memory.
public enum PipelineFileLimits {
    /// The largest file read, in bytes.
    public static let maximumFileBytes = 1 << 20
    /// The most lines a file may have.
    public static let maximumLines = 20_000
    /// The most diagnostics printed for one file; the rest are counted.
    public static let maximumDiagnosticsShown = 50
}
