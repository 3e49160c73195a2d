import Capture
import Foundation
import PipelineFile

enum RecordCommand {
    static let help = """
        usage: capture record -o PATH [-i INPUT] [--audio INPUT | --no-audio] [--duration D] [--size WxH] [--framerate N]
                              [--overwrite] [--pre-roll D [--start-after T]] [--encoder auto|ENCODER]

        Records a movie, like AVCaptureMovieFileOutput: MP4 (H.264 + AAC) by default; the extension of PATH
        chooses the container (.mp4 .mkv .webm .mov). Without --duration it records until Ctrl-C, then
        finishes the file. Files are written in fragments under a temporary name (.capture-PID-...) next
        to PATH, which they take once they hold a playable frame: a killed process leaves a file that
        plays up to its last fragment, or (killed before the first) no file at all.
          -o, --output PATH   the movie; %d patterns take the next free number; an existing file is an
                              error unless --overwrite, which replaces it whole once the new movie plays
                              (a name another writer took meanwhile moves on to PATH-1 ...)
          -i, --input INPUT   the camera (default: the first camera, else the test pattern)
          --audio INPUT       the microphone (default: the default microphone when there is one)
          --no-audio          no sound track
          --duration D        stop after D (2.5, "500ms", "2s", "1.5m"); the file ends exactly there
          --size WxH          the movie's frame size
          --framerate N       the movie's frame rate
          --pre-roll D        keep the last D (up to 60 s) encoded in memory: the file begins D before the
                              recording starts, within one second (a key frame a second); video only. The
                              recording starts after --start-after T, else when the process gets SIGUSR1
                              (kill -USR1 PID). --duration counts the whole file, the pre-roll included
          --start-after T     start the recording T after the camera (with or without --pre-roll)
          --encoder E         the H.264 encoder: auto (default: a hardware encoder that passes a one-frame
                              trial, else x264enc, else openh264enc; capture devices shows the choice) or
                              vah264enc, vaapih264enc, v4l2h264enc, x264enc, openh264enc
        A progress line (elapsed time, size) is shown when stderr is a terminal.
        """

    static let spec = Arguments.Spec(
        options: ["output", "input", "audio", "duration", "size", "framerate", "pre-roll", "start-after", "encoder"],
        flags: ["no-audio", "overwrite"], aliases: ["o": "output", "i": "input"])

    struct Options {
        var location: String
        var input = "default"
        /// The microphone asked for; nil: the default one when there is one.
        var audio: String?
        var noAudio = false
        var duration: Duration?
        var size: Size?
        var frameRate: FrameRate?
        var overwrite = false
        var preRoll: Duration?
        var startAfter: Duration?
        var encoder: H264EncoderPreference = .automatic
    }

    static func parse(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, spec)
        try parsed.noPositionals()
        guard let location = parsed.value("output") else { throw Arguments.UsageError(description: "-o PATH is required") }
        if parsed.flag("no-audio") && parsed.value("audio") != nil {
            throw Arguments.UsageError(description: "--audio and --no-audio exclude each other")
        }
        let frameRate = try parsed.value("framerate").map { text throws(Arguments.UsageError) -> FrameRate in
            guard let value = Double(text), value > 0, value <= 240 else {
                throw Arguments.UsageError(description: "--framerate must be a number of frames per second up to 240, not '\(text)'")
            }
            return FrameRate(value)
        }
        let preRoll = try parsed.duration("pre-roll")
        if let preRoll, preRoll > .seconds(60) { throw Arguments.UsageError(description: "--pre-roll is at most 60 s") }
        if preRoll != nil && parsed.value("audio") != nil { throw Arguments.UsageError(description: "--pre-roll records video only; leave out --audio") }
        return Options(
            location: location, input: parsed.value("input") ?? "default", audio: parsed.value("audio"), noAudio: parsed.flag("no-audio") || preRoll != nil,
            duration: try parsed.duration("duration"), size: try parsed.size("size"), frameRate: frameRate, overwrite: parsed.flag("overwrite"),
            preRoll: preRoll, startAfter: try parsed.duration("start-after", zero: true), encoder: try encoderOption(parsed))
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try parse(arguments)
        let (location, duration, size, frameRate) = (options.location, options.duration, options.size, options.frameRate)
        let session = CaptureSession(name: "capture-record")
        let camera = try CaptureDevice.resolve(options.input)
        try session.addInput(CaptureDeviceInput(device: camera, name: "camera"))
        if !options.noAudio {
            let explicit = options.audio
            do throws(CaptureError) {
                let microphone = try CaptureDevice.resolve(explicit ?? "default-audio")
                guard microphone.mediaType == .audio else {
                    throw .deviceMediaMismatch(id: microphone.uniqueID, expected: .audio, actual: microphone.mediaType)
                }
                try session.addInput(CaptureDeviceInput(device: microphone, name: "microphone"))
            } catch {
                guard explicit == nil, case .noDeviceAvailable = error else { throw error }
                printError("no microphone found on this machine: recording without sound (use --audio test-tone for a test tone)")
            }
        }
        try session.setSessionPreset(SessionPreset.serving(size))
        var settings = MovieSettings()
        settings.size = size
        settings.frameRate = frameRate
        settings.maxRecordedDuration = duration
        settings.overwritesExistingFile = options.overwrite
        settings.preRoll = options.preRoll
        settings.encoder = options.encoder
        let movie = CaptureMovieFileOutput(name: "movie", settings: settings)
        try session.addOutput(movie)
        try await session.startRunning()
        // One handler for SIGINT/SIGTERM: before the trigger it ends the run (no file), after it the
        // recording.
        let phase = Locked(RecordPhase.waiting)
        let stop = GracefulStop {
            let recording = phase.withLock { phase -> Bool in
                if phase == .waiting { phase = .cancelled }
                return phase == .recording
            }
            if recording { Task { _ = try? await movie.stopRecording() } }
        }
        if options.preRoll != nil || options.startAfter != nil {
            // The trigger: a time, or SIGUSR1.
            guard await waitForTrigger(after: options.startAfter, phase: phase) else {
                stop.cancel()
                await session.stopRunning()
                return ExitCode.success
            }
        } else {
            phase.value = .recording
        }

        let finished = FinishSignal()
        let url: URL
        do {
            url = try await movie.startRecording(to: location, delegate: finished)
        } catch {
            await session.stopRunning()
            throw error
        }
        let showProgress = isatty(STDERR_FILENO) == 1
        let progress = Task {
            while !Task.isCancelled && movie.isRecording {
                if showProgress {
                    let seconds = movie.recordedDuration.components.seconds
                    let text = String(
                        format: "\rrecording %@  %02lld:%02lld  %.1f MB ", url.lastPathComponent, seconds / 60, seconds % 60,
                        Double(movie.recordedFileSize) / 1_000_000)
                    FileHandle.standardError.write(Data(text.utf8))
                }
                try? await Task.sleep(for: .milliseconds(250))
            }
        }
        let result = await finished.wait()
        progress.cancel()
        stop.cancel()
        if showProgress { FileHandle.standardError.write(Data("\n".utf8)) }
        await session.stopRunning()
        let seconds = result.duration.seconds
        emit(String(format: "%@  %.2f s  %lld bytes%@", result.location, seconds, result.fileSize, result.success ? "" : "  (incomplete)"))
        if let error = result.error, !result.success { printError(error.description) }
        return result.success ? ExitCode.success : ExitCode.failure
    }
}

/// `--encoder auto|NAME` of `capture record` and `capture stream`.
func encoderOption(_ parsed: Arguments) throws(Arguments.UsageError) -> H264EncoderPreference {
    guard let text = parsed.value("encoder") else { return .automatic }
    guard let preference = H264EncoderPreference(text) else {
        throw Arguments.UsageError(description: "--encoder must be auto, \(H264Encoder.allCases.map(\.rawValue).joined(separator: ", ")), not '\(text)'")
    }
    return preference
}

/// Where `capture record` is: waiting for its trigger, stopped before it, recording.
enum RecordPhase: Sendable { case waiting, cancelled, recording }

extension RecordCommand {
    /// Waits `delay`, or (without one) for SIGUSR1, then moves `phase` to recording; false when
    /// SIGINT/SIGTERM (the run's handler) cancelled it first.
    static func waitForTrigger(after delay: Duration?, phase: Locked<RecordPhase>) async -> Bool {
        let fire: @Sendable () -> Void = { phase.withLock { if $0 == .waiting { $0 = .recording } } }
        var source: DispatchSourceSignal?
        if let delay {
            Task {
                try? await Task.sleep(for: delay)
                fire()
            }
        } else {
            signal(SIGUSR1, SIG_IGN)
            let signals = DispatchSource.makeSignalSource(signal: SIGUSR1, queue: .global())
            signals.setEventHandler(handler: fire)
            signals.resume()
            source = signals
            printError("pre-roll: the camera runs; send SIGUSR1 (kill -USR1 \(getpid())) to start the recording")
        }
        while phase.value == .waiting { try? await Task.sleep(for: .milliseconds(20)) }
        source?.cancel()
        return phase.value == .recording
    }
}

/// Waits for the end of a recording, whatever ends it (duration, Ctrl-C, a device lost).
final class FinishSignal: CaptureFileOutputRecordingDelegate, @unchecked Sendable {
    private let state = Locked<(result: MovieRecordingResult?, waiter: CheckedContinuation<MovieRecordingResult, Never>?)>((nil, nil))

    func fileOutput(_ output: CaptureMovieFileOutput, didFinishRecordingTo fileURL: URL, result: MovieRecordingResult) {
        let waiting = state.withLock { state -> CheckedContinuation<MovieRecordingResult, Never>? in
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiting?.resume(returning: result)
    }

    func wait() async -> MovieRecordingResult {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state -> MovieRecordingResult? in
                if let result = state.result { return result }
                state.waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
