import Capture
import Foundation

/// Exit codes of the contract.
package enum ExitCode {
    package static let success: Int32 = 0
    package static let failure: Int32 = 1
    package static let usage: Int32 = 64
    package static let dataError: Int32 = 65
    package static let unavailable: Int32 = 69
    package static let internalError: Int32 = 70
    package static let interrupted: Int32 = 130
}

package enum CommandLineTool {
    static let version = CaptureVersion.string

    /// The CLI's command table, in the order `capture --help` lists them; each spec is the one the
    /// command's parser reads.
    package static let commands: [Command] = [
        Command("devices", "list video and audio capture devices (real ones, then the virtual test-pattern and test-tone)", DevicesCommand.spec) {
            arguments throws(Arguments.UsageError) in _ = try DevicesCommand.parse(arguments)
        },
        Command("run", "run a .pipeline file: its session and scenario, reporting events", PipelineCommands.runSpec) {
            arguments throws(Arguments.UsageError) in _ = try PipelineCommands.parseRun(arguments)
        },
        Command("validate", "check .pipeline files: parse, compile, and check every GStreamer element is installed", PipelineCommands.validateSpec) {
            arguments throws(Arguments.UsageError) in _ = try PipelineCommands.parseValidate(arguments)
        },
        Command(
            "compile", "print every pipeline a .pipeline file's session runs, as gst-launch-1.0 lines (--dot, --png)", PipelineCommands.compileSpec
        ) { arguments throws(Arguments.UsageError) in _ = try PipelineCommands.parseCompile(arguments) },
        Command("photo", "take photos", PhotoCommand.spec) { arguments throws(Arguments.UsageError) in _ = try PhotoCommand.parse(arguments) },
        Command("record", "record a movie", RecordCommand.spec) { arguments throws(Arguments.UsageError) in _ = try RecordCommand.parse(arguments) },
        Command("scan", "print barcodes as they are detected", ScanCommand.spec) {
            arguments throws(Arguments.UsageError) in _ = try ScanCommand.parse(arguments)
        },
        Command("thumbnail", "the frame of a video at a time, like AVAssetImageGenerator", ThumbnailCommand.spec) {
            arguments throws(Arguments.UsageError) in _ = try ThumbnailCommand.parse(arguments)
        },
        Command("trim", "a trimmed copy of a video, like UIVideoEditorController", TrimCommand.spec) {
            arguments throws(Arguments.UsageError) in _ = try TrimCommand.parse(arguments)
        },
        Command("library", "the saved photos/videos album", LibraryCommand.spec) {
            arguments throws(Arguments.UsageError) in _ = try LibraryCommand.parse(arguments)
        },
        Command("controls", "read a device's controls and features, or set them under its configuration lock", ControlsCommand.spec) {
            arguments throws(Arguments.UsageError) in _ = try ControlsCommand.parse(arguments)
        },
        Command("stream", "a live H.264 stream: served over RTSP, or published over RTSP or SRT", StreamCommand.spec) {
            arguments throws(Arguments.UsageError) in _ = try StreamCommand.parse(arguments)
        },
        Command("serve", "run a session and serve a web app and HTTP API for it (live preview, shutter, recording, gallery)", ServeCommand.spec) {
            arguments throws(Arguments.UsageError) in _ = try ServeCommand.parse(arguments)
        },
        Command("bench", "the performance benchmarks, side by side with the peers (run by capture-dev)", BenchCommand.spec, parse: nil),
        Command("soak", "the long run: still -> video -> still cycles, memory and descriptors watched (run by capture-dev)", SoakCommand.spec, parse: nil),
        Command("completions", "print a bash, zsh or fish completion script", ManualCommand.spec) {
            arguments throws(Arguments.UsageError) in _ = try ManualCommand.parse("completions", arguments)
        },
        Command("manual", "print the manual page (roff): what `man capture` shows", ManualCommand.spec) {
            arguments throws(Arguments.UsageError) in _ = try ManualCommand.parse("manual", arguments)
        },
    ]

    static func run(_ arguments: [String], developerCommands: [String: DeveloperCommand]) async -> Int32 {
        guard let command = arguments.first else {
            printError("no command given")
            print(usage)
            return ExitCode.usage
        }
        let rest = Array(arguments.dropFirst())
        switch command {
        case "--version", "version":
            print("capture \(version) (GStreamer \(gstreamerVersion))")
            return ExitCode.success
        case "--help", "-h", "help":
            if let topic = rest.first, let help = helpText(topic) { print(help) } else { print(usage) }
            return ExitCode.success
        default:
            break
        }
        if rest.contains("--help") || rest.contains("-h") {
            guard let help = helpText(command) else { return unknownCommand(command) }
            print(help)
            return ExitCode.success
        }
        do {
            switch command {
            case "devices": return try await DevicesCommand.run(rest)
            case "bench", "soak":
                guard let developerCommand = developerCommands[command] else { return DeveloperCommands.handOff(command) }
                return try await developerCommand(rest)
            case "photo": return try await PhotoCommand.run(rest)
            case "run": return try await PipelineCommands.run(rest)
            case "record": return try await RecordCommand.run(rest)
            case "scan": return try await ScanCommand.run(rest)
            case "validate": return try PipelineCommands.validate(rest)
            case "compile": return try PipelineCommands.compile(rest)
            case "controls": return try await ControlsCommand.run(rest)
            case "stream": return try await StreamCommand.run(rest)
            case "completions", "manual": return try ManualCommand.run(command, rest)
            case "thumbnail":
                Interrupt.discardOnSignal()
                return try await ThumbnailCommand.run(rest)
            case "trim":
                Interrupt.discardOnSignal()
                return try await TrimCommand.run(rest)
            case "library":
                Interrupt.discardOnSignal()
                return try await LibraryCommand.run(rest)
            case "serve": return try await ServeCommand.run(rest)
            default:
                if let pending = commands.first(where: { $0.name == command }) {
                    printError("`capture \(pending.name)` is not available yet in this version of capture")
                    return ExitCode.unavailable
                }
                return unknownCommand(command)
            }
        } catch let error as Arguments.UsageError {
            printError("\(error.description); see `capture \(command) --help`")
            return ExitCode.usage
        } catch let error as CaptureError {
            printError(error.description)
            return exitCode(for: error)
        } catch {
            printError("\(error)")
            return ExitCode.internalError
        }
    }

    static func unknownCommand(_ command: String) -> Int32 {
        printError("unknown command '\(command)'; the commands are: \(commands.map(\.name).joined(separator: ", "))")
        return ExitCode.usage
    }

    /// The contract's exit code for a library error.
    static func exitCode(for error: CaptureError) -> Int32 {
        switch error {
        case .deviceNotFound, .deviceBusy, .deviceStartFailed, .permissionDenied, .noDeviceAvailable, .elementMissing, .deviceDisconnected:
            return ExitCode.unavailable
        case .invalidConfiguration, .presetNotSupported, .duplicateName, .unknownInput, .unknownOutput, .configurationRejected,
            .noVideoInput, .deviceMediaMismatch, .notAMediaFile, .invalidLocation, .invalidPhotoSettings, .invalidMovieSettings,
            .unknownControl, .controlOutOfRange, .invalidStreamUrl, .invalidStreamSettings, .invalidMqttUrl, .invalidMqttOptions, .videoNotCompatible,
            .timeOutOfRange, .invalidTimeRange, .noFrameInRange:
            return ExitCode.dataError
        case .controlNotSupported, .flashNotSupported, .deviceLocked:
            return ExitCode.unavailable
        default:
            return ExitCode.failure
        }
    }

    static var gstreamerVersion: String { GStreamerInfo.version }

    static var usage: String {
        let width = commands.map(\.name.count).max() ?? 8
        let lines = commands.map { "  \($0.name.padding(toLength: width + 2, withPad: " ", startingAt: 0))\($0.summary)" }
        return """
            usage: capture COMMAND [OPTIONS]

            AVFoundation-style camera capture on GStreamer.

            Commands:
            \(lines.joined(separator: "\n"))

            INPUT (for -i and device= in .pipeline files): default, default-audio, test-pattern, test-tone,
            file:PATH, /dev/videoN, or a device id printed by `capture devices`.

            Every command has --help. `capture --version` prints the version.
            Exit codes: 0 success, 1 runtime failure or failed expect, 64 usage, 65 invalid .pipeline or data,
            69 device/plugin/service unavailable, 70 internal error, 130 interrupted.
            """
    }

    static func helpText(_ command: String) -> String? {
        switch command {
        case "devices":
            return DevicesCommand.help
        case "photo":
            return PhotoCommand.help
        case "run":
            return PipelineCommands.runHelp
        case "record":
            return RecordCommand.help
        case "scan":
            return ScanCommand.help
        case "validate":
            return PipelineCommands.validateHelp
        case "compile":
            return PipelineCommands.compileHelp
        case "soak":
            return SoakCommand.help
        case "controls":
            return ControlsCommand.help
        case "stream":
            return StreamCommand.help
        case "completions":
            return ManualCommand.completionsHelp
        case "manual":
            return ManualCommand.manualHelp
        case "thumbnail":
            return ThumbnailCommand.help
        case "trim":
            return TrimCommand.help
        case "library":
            return LibraryCommand.help
        case "serve":
            return ServeCommand.help
        case "bench":
            return BenchCommand.help
        default:
            guard let entry = commands.first(where: { $0.name == command }) else { return nil }
            return "usage: capture \(entry.name) ...\n\n\(entry.summary) (see docs/cli.md)."
        }
    }
}

/// Writes one line to stderr.
package func printError(_ message: String) {
    FileHandle.standardError.write(Data("capture: \(message)\n".utf8))
}
