import Capture
import CaptureControl
import CaptureMQTT
import CaptureServer
import Foundation
import PipelineFile

/// `capture serve`: a session, the web app and the HTTP API (CaptureServer does the work).
enum ServeCommand {
    static let help = """
        usage: capture serve [FILE.pipeline] [--listen ADDR:PORT] [--token-file F] [--output-dir DIR] [--json]
                             [--duration D] [--set NAME.KEY=VALUE]... [--audio INPUT] [--preview-size WxH] [--clock]
                             [--events mqtt://HOST[:PORT]/PREFIX [--mqtt-... options]]

        Runs a session and serves a web app for it: the live preview, the shutter, recording, the photo/video
        mode switch, codes as they are detected, the camera's toggles and a gallery with downloads; and the
        HTTP API behind it, with the session's events as server-sent events (docs/serve.md).
          FILE              the session (default: Pipelines/serve.pipeline's, built in: the first camera or the
                            test pattern, a photo output, a metadata output); a file without actions
          --listen A:P      where to listen (default 127.0.0.1:8080; port 0 picks a free one). On any address
                            but loopback every request must carry the token
          --token-file F    the token (Authorization: Bearer T, or ?token=T) is the file's first line; the
                            environment's CAPTURE_TOKEN gives it too. Generated and printed on stderr when
                            listening beyond loopback without one; when given, required on loopback too
          --token T         the token on the command line (every local user sees it in ps: prefer the file)
          --output-dir DIR  where photos and movies go, the folder the gallery lists (default ./capture-media)
          --json            the session's events on stdout, one JSON object per line (as capture run --json)
          --duration D      stop after D
          --set N.K=V       override a key of the file's declaration named N
          --audio INPUT     the microphone video mode records (default: none, or the file's audio input)
          --preview-size S  the web preview's size (default 640x360)
          --clock           draw the time (with milliseconds) on the web preview
          --library         the gallery also lists the saved photos album (capture library path), its
                            photos and videos downloadable; the output folder is listed either way
        \(RemoteAccessArguments.help)
        \(MQTTArguments.help)
        SIGINT/SIGTERM stop gracefully (recordings are finalized).
        Exit: 0 ok, 64 usage, 65 invalid file, 69 device or address unavailable.
        """

    static let spec = Arguments.Spec(
        options: Set(["listen", "token", "token-file", "output-dir", "duration", "set", "audio", "preview-size"]).union(MQTTArguments.options)
            .union(RemoteAccessArguments.options),
        flags: Set(["json", "clock", "library"]).union(MQTTArguments.flags))

    struct Options {
        var file: String?
        var listen = ListenAddress(host: "127.0.0.1", port: 8080)
        var token: String?
        var outputDirectory = "capture-media"
        var json = false
        var duration: Duration?
        var overrides: [String] = []
        var audio: String?
        var previewSize = Size(width: 640, height: 360)
        var clock = false
        var library = false
        var events: MQTTArguments.Parsed?
        var remoteAccess = RemoteAccess.outputFolderOnly
    }

    static func parse(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, spec)
        guard parsed.positionals.count <= 1 else { throw Arguments.UsageError(description: "one .pipeline file at most") }
        var options = Options(
            file: parsed.positionals.first, token: parsed.value("token"), json: parsed.flag("json"),
            duration: try parsed.duration("duration"), overrides: parsed.all("set"), audio: parsed.value("audio"),
            clock: parsed.flag("clock"), library: parsed.flag("library"), events: try MQTTArguments.parse(parsed))
        if let listen = parsed.value("listen") {
            do throws(ServerError) { options.listen = try ListenAddress(parsing: listen) } catch {
                throw Arguments.UsageError(description: "--listen: \(error.description)")
            }
        }
        if options.token == nil, let file = parsed.value("token-file") {
            options.token = try Self.token(fromFile: file)
        } else if options.token != nil, parsed.value("token-file") != nil {
            throw Arguments.UsageError(description: "give the token once: --token or --token-file")
        } else if options.token == nil, let token = ProcessInfo.processInfo.environment["CAPTURE_TOKEN"], !token.isEmpty {
            options.token = token
        }
        let library = parsed.flag("library")
        options.remoteAccess = try RemoteAccessArguments.parse(parsed, album: library ? MediaLibrary.user() : nil)
        if let token = options.token, token.isEmpty || token.count > 256 || !token.utf8.allSatisfy({ $0 > 32 && $0 < 127 }) {
            throw Arguments.UsageError(description: "--token takes 1-256 visible ASCII characters without spaces")
        }
        if let directory = parsed.value("output-dir") {
            guard !directory.isEmpty else { throw Arguments.UsageError(description: "--output-dir needs a folder") }
            options.outputDirectory = directory
        }
        if let size = try parsed.size("preview-size") {
            guard (16...3840).contains(size.width), (16...2160).contains(size.height) else {
                throw Arguments.UsageError(description: "--preview-size must be from 16x16 to 3840x2160")
            }
            options.previewSize = size
        }
        return options
    }

    /// The first line of a token file (as mosquitto_pub reads a password file).
    static func token(fromFile path: String) throws(Arguments.UsageError) -> String {
        guard let data = FileManager.default.contents(atPath: path), let text = String(data: data, encoding: .utf8) else {
            throw Arguments.UsageError(description: "--token-file: cannot read \(FileNaming.printable(path))")
        }
        // At the newline scalar: "\r\n" is one Character, so a CRLF file split as Characters kept its
        // line ending in the token.
        let line = text.unicodeScalars.split(separator: "\n", maxSplits: 1, omittingEmptySubsequences: false).first.map(String.init) ?? ""
        let token = line.hasSuffix("\r") ? String(line.unicodeScalars.dropLast()) : line
        guard !token.isEmpty else { throw Arguments.UsageError(description: "--token-file: the first line of \(FileNaming.printable(path)) is empty") }
        return token
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try parse(arguments)
        let document: PipelineDocument
        do throws(PipelineDiagnostics) {
            if let file = options.file {
                document = try PipelineDocument.load(path: file, options: ParseOptions(overrides: options.overrides))
            } else {
                document = try PipelineDocument.parse(
                    CaptureWebServer.defaultPipeline, file: "serve.pipeline", options: ParseOptions(overrides: options.overrides))
            }
        } catch {
            FileHandle.standardError.write(Data(error.rendered.utf8))
            return ExitCode.dataError
        }
        guard document.isFreeRunning else {
            printError("\(options.file ?? "the file"): capture serve runs a session without a scenario; remove its actions (the page and the API act on it)")
            return ExitCode.dataError
        }
        let directory = URL(fileURLWithPath: options.outputDirectory).standardizedFileURL.path
        let runner = ScenarioRunner(
            document: document,
            options: ScenarioRunner.Options(
                durationLimit: options.duration, outputDirectory: directory,
                outlivesSession: true, remoteAccess: options.remoteAccess, videoMode: CaptureWebServer.Names.videoMode(microphone: options.audio)))
        var configuration = CaptureWebServer.Configuration(
            mediaDirectory: directory, listen: options.listen, token: options.token, previewSize: options.previewSize)
        if options.clock {
            configuration.previewOverlays = [CaptureOverlay(name: "clock", content: .clock(.milliseconds), position: .bottomRight)]
        }
        let server: CaptureWebServer
        do throws(ServerError) {
            let album = MediaLibrary.user()
            let catalog: MediaCatalog? =
                options.library
                ? CombinedMediaCatalog(outputFolder: directory, albumPictures: album.picturesFolder, albumVideos: album.videosFolder) : nil
            server = try CaptureWebServer(controller: { [weak runner] in runner?.controller }, configuration: configuration, catalog: catalog)
            try server.start()
        } catch {
            printError(error.description)
            return error.name == "invalid-overlay" ? ExitCode.dataError : ExitCode.unavailable
        }
        if server.tokenWasGenerated, let token = server.token { printError("token: \(token)") }
        printError("serving \(server.url) (media in \(directory))")
        let json = options.json
        var publisher: MQTTEventPublisher?
        if let events = options.events {
            do throws(CaptureError) { publisher = try MQTTArguments.start(events, runner: runner) } catch {
                await onOwnThread { server.stop() }  // it waits (bounded) for its threads
                printError(error.description)
                return CommandLineTool.exitCode(for: error)
            }
        }
        let signals = GracefulStop { runner.requestStop() }
        let result = await runner.run { [publisher] event in
            server.publish(jsonLine: event.jsonLine)
            publisher?.publish(name: event.name, json: event.jsonLine)
            if case .notice(let text) = event.kind {
                printError(text)
            } else if json {
                emit(event.jsonLine)
            }
        }
        signals.cancel()
        await onOwnThread { server.stop() }  // it waits (bounded) for its threads
        await publisher?.stop()
        if let failure = result.failure, !failure.expected { printError(failure.description) }
        if result.ending == .setupFailed, let failure = result.failure {
            if PipelineCommands.unavailableErrors.contains(failure.errorName) { return ExitCode.unavailable }
            if PipelineCommands.invalidInputErrors.contains(failure.errorName) { return ExitCode.dataError }
        }
        return result.exitCode
    }
}
