import Capture
import CaptureMQTT
import Foundation
import GStreamer
import PipelineFile

/// Writes a line to stdout at once (events must stream through pipes).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// `run`, `validate` and `compile`: thin fronts of PipelineFile and Capture.
enum PipelineCommands {
    static let runHelp = """
        usage: capture run FILE.pipeline [--json] [--duration D] [--output-dir DIR] [--set NAME.KEY=VALUE]... [--no-keys]
                           [--events mqtt://HOST[:PORT]/PREFIX [--mqtt-user U --mqtt-password-file F] [--mqtt-cafile F] ...]

        Runs a session and its scenario (docs/pipeline-format.md), reporting events as they happen.
          --json            one JSON object per event on stdout
          --duration D      stop gracefully after D (2.5, "500ms", "2s", "1.5m"); files without actions run
                            until SIGINT/SIGTERM or this limit
          --output-dir DIR  relative output locations resolve against DIR (made when missing) instead of the
                            current directory; what the file reads (overlay images, file: inputs) still
                            resolves against the file's own directory
          --set N.K=V       override a key of the declaration named N (session.preset=... for the session)
          --no-keys         do not read keys from the terminal
        \(MQTTArguments.help)
        \(RemoteAccessArguments.help)
        On a terminal, single keys act like a camera app's buttons: space takes a photo, f cycles the flash
        mode, c switches the camera, r starts or stops recording, q stops the run (h shows them).
        SIGINT/SIGTERM stop gracefully (recordings are finalized) and exit 0; a second one exits 130 at once.
        Exit: 0 ok, 1 an action failed or an expectation failed, 65 invalid file, 69 device/plugin unavailable.
        """

    static let validateHelp = """
        usage: capture validate FILE.pipeline...

        Parses and compiles each file and checks that every GStreamer element its session needs is installed.
        Touches no device: real cameras and microphones are stood in for by the virtual devices.
        Exit: 0 all valid, 65 a file is invalid, 69 an element is missing.
        """

    static let compileHelp = """
        usage: capture compile FILE.pipeline [--dot FILE] [--png FILE] [--set NAME.KEY=VALUE]...

        Prints every pipeline the file's session runs, built from the same values as the running graph:
          - the session: a gst-launch-1.0 command line, runnable as printed;
          - while its movie outputs record (their branch is added only then): the same command with the
            recording branches, after a `#` line;
          - each photo output's encoder pipeline (appsrc ! ... ! appsink, one per shot settings), as a
            `#` line: it is fed frames by the session and is not runnable alone.
          --dot FILE   write the fullest graph (the session while recording) in graphviz form
          --png FILE   draw that graph (needs graphviz's dot)
        """

    static func load(_ path: String, overrides: [String] = []) -> Result<PipelineDocument, PipelineDiagnostics> {
        Result { () throws(PipelineDiagnostics) in try PipelineDocument.load(path: path, options: ParseOptions(overrides: overrides)) }
    }

    // MARK: run

    static let runSpec = Arguments.Spec(
        options: Set(["duration", "output-dir", "set"]).union(MQTTArguments.options).union(RemoteAccessArguments.options),
        flags: Set(["json", "no-keys"]).union(MQTTArguments.flags))
    static let validateSpec = Arguments.Spec(options: ["set"])
    static let compileSpec = Arguments.Spec(options: ["dot", "png", "set"])

    /// What `run`, `validate` and `compile` take: .pipeline files, `--set` overrides and their own options.
    struct Options {
        var files: [String]
        var overrides: [String]
        var duration: Duration?
        var outputDirectory: String?
        var json = false
        var keys = true
        var dot: String?
        var png: String?
        var events: MQTTArguments.Parsed?
        var remoteAccess = RemoteAccess.outputFolderOnly
    }

    static func parseRun(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, runSpec)
        guard parsed.positionals.count == 1 else {
            throw Arguments.UsageError(description: parsed.positionals.isEmpty ? "which .pipeline file?" : "one .pipeline file at a time")
        }
        return Options(
            files: parsed.positionals, overrides: parsed.all("set"), duration: try parsed.duration("duration", zero: true),
            outputDirectory: parsed.value("output-dir"), json: parsed.flag("json"), keys: !parsed.flag("no-keys"),
            events: try MQTTArguments.parse(parsed), remoteAccess: try RemoteAccessArguments.parse(parsed))
    }

    static func parseValidate(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, validateSpec)
        guard !parsed.positionals.isEmpty else { throw Arguments.UsageError(description: "which .pipeline files?") }
        return Options(files: parsed.positionals, overrides: parsed.all("set"))
    }

    static func parseCompile(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, compileSpec)
        guard parsed.positionals.count == 1 else { throw Arguments.UsageError(description: "one .pipeline file, please") }
        return Options(files: parsed.positionals, overrides: parsed.all("set"), dot: parsed.value("dot"), png: parsed.value("png"))
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try parseRun(arguments)
        let duration = options.duration
        let document: PipelineDocument
        switch load(options.files[0], overrides: options.overrides) {
        case .success(let loaded): document = loaded
        case .failure(let diagnostics):
            FileHandle.standardError.write(Data(diagnostics.rendered.utf8))
            return ExitCode.dataError
        }
        let outputDirectory = options.outputDirectory.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
        if let outputDirectory {
            try? FileManager.default.createDirectory(atPath: outputDirectory, withIntermediateDirectories: true)
        }
        let runner = ScenarioRunner(
            document: document,
            options: ScenarioRunner.Options(durationLimit: duration, outputDirectory: outputDirectory, remoteAccess: options.remoteAccess))
        let json = options.json
        var publisher: MQTTEventPublisher?
        if let events = options.events {
            do throws(CaptureError) { publisher = try MQTTArguments.start(events, runner: runner) } catch {
                printError(error.description)
                return CommandLineTool.exitCode(for: error)
            }
        }
        let signals = GracefulStop { runner.requestStop() }
        let keys = options.keys && !json ? TerminalKeys.start(for: runner) : nil
        let result = await runner.run { [publisher] event in
            publisher?.publish(name: event.name, json: event.jsonLine)
            if case .notice(let text) = event.kind {
                printError(text)
            } else {
                emit(json ? event.jsonLine : event.readableLine)
            }
        }
        signals.cancel()
        keys?.stop()
        await publisher?.stop()
        if !json {
            for failed in result.failedExpectations { printError("expectation failed: \(failed.description)") }
            if let failure = result.failure, !failure.expected { printError(failure.description) }
        }
        if result.ending == .setupFailed, let failure = result.failure {
            // The same exit as `validate` for the same file: 69 for what is missing, 65 for what is wrong.
            if unavailableErrors.contains(failure.errorName) { return ExitCode.unavailable }
            if invalidInputErrors.contains(failure.errorName) { return ExitCode.dataError }
        }
        return result.exitCode
    }

    /// Setup errors that mean the file itself is wrong (exit 65, as `validate` says).
    static let invalidInputErrors: Set<String> = [
        "invalid-configuration", "invalid-location", "invalid-photo-settings", "invalid-movie-settings", "preset-not-supported",
        "duplicate-name", "unknown-input", "unknown-output", "no-video-input", "configuration-rejected",
        "unknown-metadata-object-type", "metadata-object-type-not-available", "device-media-mismatch", "not-a-media-file",
        "invalid-overlay", "overlay-image-unreadable", "unknown-overlay",
    ]

    /// Errors that mean "a device, plugin or service is unavailable" (exit 69).
    static let unavailableErrors: Set<String> = [
        "device-not-found", "device-busy", "permission-denied", "no-device-available", "element-missing",
        "unknown-font",
    ]

    // MARK: validate

    static func validate(_ arguments: [String]) throws -> Int32 {
        let options = try parseValidate(arguments)
        var status = ExitCode.success
        for path in options.files {
            let document: PipelineDocument
            switch load(path, overrides: options.overrides) {
            case .success(let loaded): document = loaded
            case .failure(let diagnostics):
                FileHandle.standardError.write(Data(diagnostics.rendered.utf8))
                status = max(status, ExitCode.dataError)
                continue
            }
            var offline = document
            for index in offline.inputs.indices where offline.inputs[index].isVirtualDevice != true {
                offline.inputs[index].device =
                    offline.inputs[index].knownMedia == .audio || offline.inputs[index].device == "default-audio" ? "test-tone" : "test-pattern"
            }
            switch compilePipelines(offline, path: path) {
            case .failure(let failure): status = max(status, failure.code)
            case .success(let pipelines):
                // The fullest graph: movie outputs' encoders and muxers are checked too.
                let graph = pipelines.fullest
                let missing = graph.requiredFactories.filter { !GStreamer.hasElement($0) }
                if missing.isEmpty {
                    emit("\(path): ok (\(graph.sources.count) inputs, \(graph.branches.count) outputs, \(graph.requiredFactories.count) elements installed)")
                } else {
                    printError("\(path): these GStreamer elements are not installed: \(missing.joined(separator: ", ")); run `make install-deps`")
                    status = max(status, ExitCode.unavailable)
                }
            }
        }
        return status
    }

    /// Builds the document's session and compiles every pipeline it runs, reporting setup errors at
    /// their lines.
    static func compilePipelines(_ document: PipelineDocument, path: String) -> Result<SessionPipelines, ExitStatus> {
        do throws(SessionSetupError) {
            let (session, notes) = try SessionBuilder(document: document).makeSession()
            for note in notes { printError(note) }
            do throws(CaptureError) {
                return .success(try session.compilePipelines())
            } catch {
                printError("\(path): \(error.description)")
                return .failure(ExitStatus(code: unavailableErrors.contains(error.name) ? ExitCode.unavailable : ExitCode.dataError))
            }
        } catch {
            let lines = (try? String(contentsOfFile: path, encoding: .utf8))?.components(separatedBy: "\n") ?? []
            if let location = error.location {
                let source = location.line >= 1 && location.line <= lines.count ? lines[location.line - 1] : ""
                let diagnostic = Diagnostic(location: location, message: "\(error.statement): \(error.error.description)", sourceLine: source)
                FileHandle.standardError.write(Data((diagnostic.rendered + "\n").utf8))
            } else {
                printError("\(path): \(error.description)")
            }
            return .failure(ExitStatus(code: unavailableErrors.contains(error.error.name) ? ExitCode.unavailable : ExitCode.dataError))
        }
    }

    // MARK: compile

    static func compile(_ arguments: [String]) throws -> Int32 {
        let options = try parseCompile(arguments)
        let path = options.files[0]
        let document: PipelineDocument
        switch load(path, overrides: options.overrides) {
        case .success(let loaded): document = loaded
        case .failure(let diagnostics):
            FileHandle.standardError.write(Data(diagnostics.rendered.utf8))
            return ExitCode.dataError
        }
        let pipelines: SessionPipelines
        switch compilePipelines(document, path: path) {
        case .success(let compiled): pipelines = compiled
        case .failure(let failure): return failure.code
        }
        emit(pipelines.text)
        let graph = pipelines.fullest
        let encoders = H264Encoder.allCases.filter { graph.requiredFactories.contains($0.rawValue) }
        if !encoders.isEmpty {
            // Which H.264 encoder the branches use, and what the automatic choice found here.
            emit("# H.264 encoder: \(encoders.map(\.rawValue).joined(separator: ", ")); automatic choice on this machine: \(H264EncoderSelection.current)")
        }
        guard options.dot != nil || options.png != nil else { return ExitCode.success }
        let dot: String
        do throws(CaptureError) {
            dot = try graph.dot()
        } catch {
            printError("could not build the graph to draw it: \(error)")
            return ExitCode.unavailable
        }
        if let dotPath = options.dot {
            do { try dot.write(toFile: dotPath, atomically: true, encoding: .utf8) } catch {
                printError("cannot write \(dotPath): \(error.localizedDescription)")
                return ExitCode.failure
            }
        }
        if let pngPath = options.png {
            let source = FileManager.default.temporaryDirectory.appendingPathComponent("capture-\(getpid()).dot").path
            try? dot.write(toFile: source, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(atPath: source) }
            return drawPNG(dotFile: source, to: pngPath)
        }
        return ExitCode.success
    }

    /// Graphviz's `dot` (found in PATH, started without a shell, its output discarded) draws the graph
    /// in the dot file as a PNG.
    static func drawPNG(dotFile source: String, to pngPath: String) -> Int32 {
        let folders = (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
        guard let dot = folders.map({ "\($0)/dot" }).first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            printError("graphviz's `dot` is not installed; run `make install-deps`")
            return ExitCode.unavailable
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: dot)
        process.arguments = ["-Tpng", source, "-o", pngPath]
        process.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        process.standardError = errors
        do { try process.run() } catch {
            printError("cannot start \(dot): \(error.localizedDescription)")
            return ExitCode.unavailable
        }
        let message = errors.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationReason == .exit, process.terminationStatus == 0 else {
            printError("dot failed: \(String(decoding: message, as: UTF8.self))")
            return ExitCode.failure
        }
        return ExitCode.success
    }
}

/// A command's exit status carried as an error.
struct ExitStatus: Error {
    let code: Int32
}

/// SIGINT/SIGTERM: the first asks for a graceful stop, a second one exits 130 at once (the
/// temporary files of what was in flight removed, what was printed flushed).
final class GracefulStop: @unchecked Sendable {
    // `sources` is only touched at init and cancel, from the command's task; `state` is locked.
    private var sources: [DispatchSourceSignal] = []
    private struct State {
        var signalsSeen = 0
        var firstSignal: Int32?
        var stop: (@Sendable () -> Void)?
    }
    private let state: Locked<State>
    private let message: String

    init(
        saying message: String = "stopping (recordings are being finalized); press Ctrl-C again to quit at once",
        _ stop: @escaping @Sendable () -> Void
    ) {
        state = Locked(State(stop: stop))
        self.message = message
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { [weak self] in self?.received(number) }
            source.resume()
            sources.append(source)
        }
    }

    /// The first signal received (SIGINT or SIGTERM); nil while none was.
    var signalReceived: Int32? { state.value.firstSignal }

    /// The exit status of a command a signal stopped: 128 + the signal's number (130 for SIGINT,
    /// 143 for SIGTERM); nil while none was received.
    var interruptedStatus: Int32? { signalReceived.map { 128 + $0 } }

    private func received(_ number: Int32) {
        let (seen, action) = state.withLock { state -> (Int, (@Sendable () -> Void)?) in
            state.signalsSeen += 1
            if state.firstSignal == nil { state.firstSignal = number }
            return (state.signalsSeen, state.stop)
        }
        guard seen == 1 else { Interrupt.exitNow(ExitCode.interrupted) }
        printError(message)
        action?()
    }

    /// Stops listening and lets go of the stop action (and what it holds). SIGINT and SIGTERM stay
    /// ignored: the command is finishing, and a signal arriving now (a second Ctrl-C a moment late)
    /// must not kill it before it prints its result and exits with its own status.
    func cancel() {
        for source in sources { source.cancel() }
        sources.removeAll()
        state.withLock { $0.stop = nil }
    }
}

/// How the process ends, whether its command finished or a signal stopped it: the terminal gets its
/// settings back, what was printed is flushed (standard output may be a file or a pipe), then the
/// process exits with `_exit`, without running exit handlers or the libraries' destructors.
///
/// `exit()` is not safe here: other threads may still be loading GStreamer plugins (the device
/// monitor starts in the background, an element is made on first use). glibc's `exit()` runs every
/// library's destructors and marks each library as not initialised; a plugin that `dlopen` loads at
/// that moment then runs the constructors of its dependencies again, and GObject's second type set-up
/// aborts with "cannot register existing fundamental type 'gchar'". A C program that starts a
/// GstDeviceMonitor on one thread and calls `exit()` on another aborts this way (1 run in about 2,000).
enum ProcessEnd {
    static func exit(_ status: Int32) -> Never {
        TerminalMode.leave()
        fflush(nil)
        _exit(status)
    }
}

/// How a command ends at once on a signal: the temporary files of what was in flight are removed,
/// then the process ends (`ProcessEnd`) while other threads still work.
enum Interrupt {
    static func exitNow(_ status: Int32) -> Never {
        TemporaryFiles.removeAll()
        ProcessEnd.exit(status)
    }

    /// For commands that write a file and have nothing to finish gracefully (trim, thumbnail,
    /// library): SIGINT or SIGTERM discards the file in flight and exits 130 or 143.
    static func discardOnSignal() {
        for number in [SIGINT, SIGTERM] {
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { exitNow(128 + number) }
            source.resume()
            installed.append(source)
        }
    }

    /// The signal sources, kept for the process's life (appended to once, from the command's task).
    nonisolated(unsafe) private static var installed: [DispatchSourceSignal] = []
}
