import Capture
import Foundation

/// Exit codes of the contract.
enum ExitCode {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 64
    static let dataError: Int32 = 65
    static let unavailable: Int32 = 69
    static let internalError: Int32 = 70
    static let interrupted: Int32 = 130
}

enum CommandLineTool {
    static let version = CaptureVersion.string

    static let commands: [(name: String, summary: String)] = [
        ("devices", "list video and audio capture devices (real ones, then the virtual test-pattern and test-tone)"),
        ("run", "run a .pipeline file: its session and scenario, reporting events"),
        ("validate", "check .pipeline files: parse, compile, and check every GStreamer element is installed"),
        ("compile", "print every pipeline a .pipeline file's session runs, as gst-launch-1.0 lines (--dot, --png)"),
        ("photo", "take photos"),
        ("record", "record a movie"),
        ("scan", "print barcodes as they are detected"),
        ("thumbnail", "the frame of a video at a time, like AVAssetImageGenerator"),
        ("trim", "a trimmed copy of a video, like UIVideoEditorController"),
        ("library", "the saved photos/videos album"),
        ("controls", "read a device's controls and features, or set them under its configuration lock"),
        ("stream", "a live H.264 stream: served over RTSP, or published over RTSP or SRT"),
        ("serve", "run a session and serve a web app and HTTP API for it (live preview, shutter, recording, gallery)"),
        ("bench", "the performance benchmarks, side by side with the peers"),
        ("soak", "the long run: still -> video -> still cycles, memory and descriptors watched"),
        ("completions", "print a bash, zsh or fish completion script"),
        ("manual", "print the manual page (roff): what `man capture` shows"),
    ]

    static func run(_ arguments: [String]) async -> Int32 {
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
            case "bench": return try await BenchCommand.run(rest)
            case "soak": return try await SoakCommand.run(rest)
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
            return """
                usage: capture bench [--json] [--only NAME[,NAME]] [--seconds S] [-i INPUT] [--cycles N] [--plot-data FILE.json]
                                     [--streams N] [--stream-seconds S] [--stream-pattern smpte|ball|snow]

                Runs the performance benchmarks, each side by side with its peer in the same run:
                  startup        startRunning() to the first frame delivered to Swift
                  live-edit-gap  the largest frame gap on a running output while another output is added and removed,
                                 against the gap of a stopRunning + startRunning rebuild
                  cpu            CPU use of a session against gst-launch-1.0 running the same compiled pipeline
                  overlay        CPU per frame of a text + PNG overlay on a 720p30 preview, against textoverlay +
                                 gdkpixbufoverlay in gst-launch-1.0 (each the difference with the same pipeline without)
                  photo          shot-to-save and shot-to-shot against camerabin, shutter lag with/without zero-shutter-lag
                  movie          CPU use and dropped frames of a 720p30 H.264 + AAC recording (--movie-seconds, default 60)
                  mode-switch    photo -> video (1 s recording) -> photo on one running session, against camerabin and
                                 against a stopRunning + reconfigure + startRunning rebuild: the largest preview frame gap
                                 by arrival and by buffer timestamps, and the frames lost
                  streaming      N sessions (--streams, default 8) each serving a 640x480 30 fps test pattern over RTSP
                                 to an ffmpeg reader and publishing its events to a Mosquitto broker on 127.0.0.1, for
                                 --stream-seconds (default 60): CPU per stream, frames not handed on, bit rate, events
                                 delivered against published (needs mosquitto, mosquitto-clients and ffmpeg);
                                 --stream-pattern: smpte (still bars, default), ball (motion), snow (noise: the dearest)
                  --seconds S    how long the CPU benchmark runs each side (default 5)
                  -i INPUT       the camera of the startup, live-edit-gap and mode-switch benchmarks (default: test-pattern;
                                 a real camera shows what a rebuild costs when its driver stops and starts streaming)
                  --cycles N     mode-switch cycles on each side, 1 to 10 (default 3); the figures are their median
                  --plot-data F  mode-switch writes one cycle of each side (the frame intervals over time) to F as JSON;
                                 scripts/plot-mode-switch.py draws it
                """
        default:
            guard let entry = commands.first(where: { $0.name == command }) else { return nil }
            return "usage: capture \(entry.name) ...\n\n\(entry.summary) (see docs/cli.md)."
        }
    }
}

/// Writes one line to stderr.
func printError(_ message: String) {
    FileHandle.standardError.write(Data("capture: \(message)\n".utf8))
}
