import Capture
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

    // MARK: Declarations

    mutating func declare(_ statement: Statement) {
        switch statement.name {
        case "session":
            if let previous = session {
                error("duplicate 'session' statement: first declared at \(previous.location?.lineColumn ?? "?")", at: statement.location)
            }
            checkKeys(statement, allowed: Vocabulary.sessionKeys, subject: "'session'")
            let preset = choice(statement, "preset", SessionPreset.self)
            let fallback = choice(statement, "fallback-preset", SessionPreset.self)
            if fallback != nil && statement.field("preset") == nil {
                error("fallback-preset is used when the inputs cannot serve preset=; give preset= too", at: statement.location(of: "fallback-preset"))
            }
            if let preset { presets.append(preset) }
            if session == nil { session = SessionSettings(preset: preset, fallbackPreset: fallback, location: statement.location) }
        case "input":
            if let input = readInput(statement, action: false, expectsFailure: false) {
                inputs.append(input)
                declared.inputs[input.name] = InputInfo(media: input.knownMedia, location: statement.location)
            }
        case "output":
            if let output = readOutput(statement, action: false, expectsFailure: false) {
                outputs.append(output)
                declared.outputs[output.name] = OutputInfo(kind: output.kind, location: statement.location)
            }
        case "overlay":
            if let overlay = readOverlay(statement, index: overlays.count + 1) {
                if let other = overlays.first(where: { $0.name == overlay.name && !Set($0.outputs).isDisjoint(with: overlay.outputs) }) {
                    error(
                        "an overlay named '\(overlay.name)' already draws on \(Set(other.outputs).intersection(overlay.outputs).sorted().joined(separator: ", ")) (declared at \(other.location?.lineColumn ?? "?")); give it another name=",
                        at: statement.location(of: "name"))
                } else {
                    overlays.append(overlay)
                }
            }
        default:
            break
        }
    }

    /// Claims a name for a new input or output: reports a duplicate, and where the first one is.
    mutating func claim(_ name: String, _ statement: Statement, in names: NameState) -> Bool {
        if let first = names.declaration(of: name) {
            error("duplicate name '\(name)': first declared at \(first.lineColumn); inputs and outputs need unique names", at: statement.location(of: "name"))
            return false
        }
        return true
    }

    mutating func readInput(_ statement: Statement, action: Bool, expectsFailure: Bool) -> InputDeclaration? {
        let subject = action ? "'add-input'" : "'input'"
        let errorsBefore = sink.count
        checkKeys(statement, allowed: Vocabulary.inputKeys + (action ? ["expect-error"] : []), subject: subject)
        let name = name(statement)
        if statement.field("name") == nil { missing("name", in: statement, subject: subject, hint: "a unique name, like name=camera") }
        let media = choice(statement, "media", MediaType.self)
        var device = text(statement, "device") ?? (media == .audio ? "default-audio" : "default")
        if device == "default-video" { device = "default" }
        if device.hasPrefix("file:") {
            let path = String(device.dropFirst(5))
            if path.isEmpty {
                error("device file: needs a path, like device=file:clip.mp4", at: statement.location(of: "device"))
            } else if options.checksFileDevices {
                let resolved = path.hasPrefix("/") ? path : (baseDirectory as NSString).appendingPathComponent(path)
                var isDirectory: ObjCBool = false
                if !FileManager.default.fileExists(atPath: resolved, isDirectory: &isDirectory) || isDirectory.boolValue {
                    error(
                        "the device '\(device)' does not exist (no media file at \(resolved)); run `capture devices` to list the devices of this machine, or name an existing file",
                        at: statement.location(of: "device"))
                }
            }
        }
        let probe = InputDeclaration(name: name ?? "", device: device)
        if let media, let deviceMedia = probe.knownMedia, media != deviceMedia {
            error(
                "the device '\(device)' captures \(deviceMedia.rawValue), not \(media.rawValue) (media=\(media.rawValue))", at: statement.location(of: "media"))
        }
        if statement.field("pattern") != nil && device != "test-pattern" {
            error("pattern applies only to device=test-pattern (this input's device is '\(device)')", at: statement.location(of: "pattern"))
        }
        let pattern = choice(statement, "pattern", Vocabulary.testPatterns)
        let size = size(statement, "size")
        let rate = frameRate(statement, "framerate")
        if size != nil { inputPriorityKeys.append(("size", statement.location(of: "size"))) }
        if rate != nil { inputPriorityKeys.append(("framerate", statement.location(of: "framerate"))) }
        let fallback = text(statement, "fallback")
        if let fallback {
            let other = InputDeclaration(name: "", device: fallback)
            if let deviceMedia = media ?? probe.knownMedia, let fallbackMedia = other.knownMedia, deviceMedia != fallbackMedia {
                error(
                    "the fallback '\(fallback)' captures \(fallbackMedia.rawValue), not \(deviceMedia.rawValue) like the device",
                    at: statement.location(of: "fallback"))
            }
            if fallback == device { error("the fallback is the device itself; name another device", at: statement.location(of: "fallback")) }
        }
        let failAfter = integer(statement, "fail-after", 1...Int(Int32.max))
        if failAfter != nil, probe.isVirtualDevice == false {
            error(
                "fail-after is a fault injection of the virtual devices (test-pattern, test-tone, file:) only; '\(device)' is a real device",
                at: statement.location(of: "fail-after"))
        }
        if let name, device == "test-pattern" {
            testPatternInputs.append((name, size, rate, statement.location))
        }
        guard let name else { return nil }
        let valid = sink.count == errorsBefore
        let unique = expectsFailure || claim(name, statement, in: action ? state : declared)
        guard valid, unique else {
            // Keep the name known, so later statements naming it do not add errors of their own.
            registerFailed(input: name, media: probe.knownMedia, statement, action: action, expectsFailure: expectsFailure)
            return nil
        }
        let reconnect = boolean(statement, "reconnect")
        return InputDeclaration(
            name: name, device: device, media: media, pattern: pattern, size: size, frameRate: rate,
            failAfterFrames: failAfter, reconnect: reconnect, fallback: fallback, location: statement.location)
    }

    private mutating func registerFailed(input name: String, media: MediaType?, _ statement: Statement, action: Bool, expectsFailure: Bool) {
        if action {
            if state.declaration(of: name) == nil && !expectsFailure { state.inputs[name] = InputInfo(media: media, location: statement.location) }
        } else if declared.declaration(of: name) == nil {
            declared.inputs[name] = InputInfo(media: media, location: statement.location)
        }
    }

    private mutating func registerFailed(output name: String, kind: OutputKind?, _ statement: Statement, action: Bool, expectsFailure: Bool) {
        if action {
            if state.declaration(of: name) == nil && !expectsFailure { state.outputs[name] = OutputInfo(kind: kind, location: statement.location) }
        } else if declared.declaration(of: name) == nil {
            declared.outputs[name] = OutputInfo(kind: kind, location: statement.location)
        }
    }

    mutating func readOutput(_ statement: Statement, action: Bool, expectsFailure: Bool) -> OutputDeclaration? {
        let errorsBefore = sink.count
        let kind = choice(statement, "kind", OutputKind.self)
        let name = name(statement)
        let describedName = name.map { " '\($0)'" } ?? ""
        let subject = kind.map { "\($0.rawValue) output\(describedName)" } ?? "output\(describedName)"
        // Without a readable kind, any kind's key is let through (the kind's own error says what is wrong).
        var allowed =
            kind != nil || statement.field("kind") == nil
            ? Vocabulary.outputKeys(kind)
            : Vocabulary.outputKeys(nil) + OutputKind.allCases.flatMap { Vocabulary.outputKindKeys[$0] ?? [] }
        if action { allowed.append("expect-error") }
        checkKeys(statement, allowed: allowed, subject: subject) { key in
            let owners = Vocabulary.kinds(having: key)
            guard !owners.isEmpty else { return nil }
            return "it is a key of \(Suggest.list(owners.map { "\($0.rawValue) outputs" }))"
        }
        if statement.field("name") == nil { missing("name", in: statement, subject: subject, hint: "a unique name, like name=preview") }
        if statement.field("kind") == nil {
            missing("kind", in: statement, subject: subject, hint: Suggest.list(OutputKind.allCases.map(\.rawValue)))
        }
        let input = statement.field("input") == nil ? nil : self.name(statement, "input")
        var rotation: Int?
        if let field = statement.field("rotation") {
            if let value = ValueSyntax.integer(field.value), [0, 90, 180, 270].contains(value) {
                rotation = value
            } else {
                error("rotation must be 0, 90, 180 or 270 (degrees clockwise), \(got(field, numberExpected: true))", at: field.keyLocation)
            }
        }
        let mirrored = boolean(statement, "mirrored")
        let settings = kind.flatMap { readSettings(statement, kind: $0) }
        if let name, let input {
            if action {
                if !expectsFailure { checkOutputInput(output: name, input: input, location: statement.location(of: "input")) }
            } else {
                outputInputs.append((name, input, statement.location(of: "input")))
            }
        }
        guard let name else { return nil }
        let valid = sink.count == errorsBefore
        let unique = expectsFailure || claim(name, statement, in: action ? state : declared)
        guard valid, unique, let settings else {
            registerFailed(output: name, kind: kind, statement, action: action, expectsFailure: expectsFailure)
            return nil
        }
        return OutputDeclaration(name: name, input: input, rotation: rotation, mirrored: mirrored, settings: settings, location: statement.location)
    }

    /// An added output's input must be in the session when it is added.
    mutating func checkOutputInput(output: String, input: String, location: SourceLocation) {
        if let info = state.inputs[input] {
            if info.media == .audio {
                error(
                    "output '\(output)' takes its frames from input '\(input)', which is an audio input (declared at \(info.location.lineColumn)); name a video input",
                    at: location)
            }
        } else if let removed = state.removed[input] {
            error("input '\(input)' was removed at \(removed.lineColumn); output '\(output)' cannot take its frames from it", at: location)
        } else {
            error(undeclared("input", input, in: state), at: location)
        }
    }

    mutating func readSettings(_ statement: Statement, kind: OutputKind) -> OutputSettings? {
        switch kind {
        case .photo:
            let codec = choice(statement, "codec", PhotoCodec.self)
            let quality = integer(statement, "quality", 1...100)
            let location = text(statement, "location")
            if let location {
                let pathExtension = ValueSyntax.pathExtension(location)
                let implied: PhotoCodec? = ["jpg", "jpeg"].contains(pathExtension) ? .jpeg : pathExtension == "png" ? .png : nil
                if implied == nil {
                    error("location '\(location)' must end in .jpg, .jpeg or .png", at: statement.location(of: "location"))
                } else if let codec, let implied, codec != implied {
                    error(
                        "location '\(location)' ends in .\(pathExtension) but codec is \(codec.rawValue); make them agree",
                        at: statement.location(of: "location"))
                }
            }
            if quality != nil, codec == .png {
                error("quality applies to JPEG photos only (codec is png)", at: statement.location(of: "quality"))
            }
            return .photo(
                PhotoOutputSettings(
                    codec: codec, quality: quality, location: location, size: size(statement, "size"),
                    zeroShutterLag: boolean(statement, "zero-shutter-lag"), crop: rect(statement, "crop"),
                    saveToLibrary: boolean(statement, "save-to-library")))
        case .movie:
            let location = text(statement, "location")
            let container = choice(statement, "container", MovieContainer.self)
            let videoCodec = choice(statement, "video-codec", MovieVideoCodec.self)
            let audioCodec = choice(statement, "audio-codec", MovieAudioCodec.self)
            let implied = location.flatMap { MovieContainer(pathExtension: ValueSyntax.pathExtension($0)) }
            if let location, let container, let implied, implied != container {
                error(
                    "location '\(location)' ends in .\(ValueSyntax.pathExtension(location)) but container is \(container.rawValue); make them agree",
                    at: statement.location(of: "location"))
            }
            // Capture's own table of what each container holds.
            let effective = container ?? implied ?? .mp4
            if let videoCodec, !effective.videoCodecs.contains(videoCodec) {
                error(
                    "a \(effective.rawValue) movie holds \(Suggest.list(effective.videoCodecs.map(\.rawValue))) video, not \(videoCodec.rawValue)",
                    at: statement.location(of: "video-codec"))
            }
            if let audioCodec, audioCodec != MovieAudioCodec.none, !effective.audioCodecs.contains(audioCodec) {
                error(
                    "a \(effective.rawValue) movie holds \(Suggest.list(effective.audioCodecs.map(\.rawValue))) audio, not \(audioCodec.rawValue)",
                    at: statement.location(of: "audio-codec"))
            }
            let bitrate = bitrate(statement, "bitrate")
            if let bitrate, bitrate < 1000 {
                error("bitrate must be at least 1000 bits per second, got \(statement.field("bitrate")?.text ?? "")", at: statement.location(of: "bitrate"))
            } else if bitrate != nil, (videoCodec ?? effective.defaultVideoCodec) == .mjpeg {
                error("bitrate does not apply to mjpeg video, which is quality-based; leave it out", at: statement.location(of: "bitrate"))
            }
            return .movie(
                MovieOutputSettings(
                    location: location, container: container, videoCodec: videoCodec, audioCodec: audioCodec,
                    bitrate: bitrate, maxDuration: duration(statement, "max-duration", positive: true),
                    maxFileSize: byteSize(statement, "max-file-size", positive: true),
                    minFreeDiskSpace: byteSize(statement, "min-free-disk-space", positive: false),
                    fragmentInterval: duration(statement, "fragment-interval"),
                    saveToLibrary: boolean(statement, "save-to-library"),
                    preRoll: duration(statement, "pre-roll"), encoder: encoder(statement)))
        case .metadata:
            return .metadata(
                MetadataOutputSettings(
                    types: choices(statement, "types", BarcodeType.self), rectOfInterest: rect(statement, "rect-of-interest"),
                    backend: choice(statement, "backend", MetadataBackend.self),
                    highlight: statement.field("highlight") == nil ? nil : overlayOutputs(statement, key: "highlight")))
        case .frames:
            let location = text(statement, "location")
            if let location {
                if !["png", "jpg", "jpeg"].contains(ValueSyntax.pathExtension(location)) {
                    error(
                        "location '\(location)' must end in .png, .jpg or .jpeg (the extension chooses the image format)",
                        at: statement.location(of: "location"))
                } else if !ValueSyntax.hasNumberPattern(location) {
                    error(
                        "location '\(location)' needs a %d-style pattern to number the files, like \"frames/%05d.png\"", at: statement.location(of: "location"))
                }
            }
            return .frames(
                FramesOutputSettings(
                    location: location, maxRate: number(statement, "max-rate", 0...1000, excludingLower: true, meaning: "frames per second"),
                    size: size(statement, "size")))
        case .preview:
            return .preview(PreviewOutputSettings(sink: choice(statement, "sink", PreviewSink.self)))
        case .stream:
            let serve = text(statement, "serve")
            let publish = text(statement, "publish")
            switch (statement.field("serve"), statement.field("publish")) {
            case (nil, nil):
                error(
                    "a stream output needs serve=\"rtsp://ADDRESS:PORT/PATH\" (served by this process) or publish=\"rtsp://HOST:PORT/PATH\" / \"srt://HOST:PORT\" (sent to a server)",
                    at: statement.location)
            case (.some, .some):
                error(
                    "serve and publish exclude each other: a stream output is served or published; declare two outputs for both",
                    at: statement.location(of: "publish"))
            default:
                // Capture's own check of the URL: scheme, host, port, path, query.
                do throws(CaptureError) {
                    if let serve { _ = try StreamDestination.serving(serve) }
                    if let publish { _ = try StreamDestination.publishing(publish) }
                } catch let problem {
                    error(problem.description, at: statement.location(of: serve != nil ? "serve" : "publish"))
                }
            }
            let bitrate = bitrate(statement, "bitrate")
            if let bitrate, bitrate < 10_000 || bitrate > 100_000_000 {
                error(
                    "bitrate must be from 10000 to 100000000 bits per second, got \(statement.field("bitrate")?.text ?? "")",
                    at: statement.location(of: "bitrate"))
            }
            return .stream(
                StreamOutputSettings(
                    serve: serve, publish: publish, bitrate: bitrate,
                    audioCodec: choice(statement, "audio-codec", MovieAudioCodec.self), size: size(statement, "size"),
                    encoder: encoder(statement)))
        }
    }

    /// `encoder=`: `auto` or an H.264 encoder's factory name.
    mutating func encoder(_ statement: Statement) -> H264EncoderPreference? {
        guard let field = statement.field("encoder") else { return nil }
        let text = field.value.description
        if let preference = H264EncoderPreference(text) { return preference }
        error("encoder must be auto, \(H264Encoder.allCases.map(\.rawValue).joined(separator: ", ")), got '\(text)'", at: statement.location(of: "encoder"))
        return nil
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
