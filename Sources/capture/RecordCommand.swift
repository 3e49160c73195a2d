import Capture
import Foundation
import PipelineFile

enum RecordCommand {
    static let help = """
    usage: capture record -o PATH [-i INPUT] [--audio INPUT | --no-audio] [--duration D] [--size WxH] [--framerate N]
                          [--overwrite]

    Records a movie, like AVCaptureMovieFileOutput: MP4 (H.264 + AAC) by default; the extension of PATH
    chooses the container (.mp4 .mkv .webm .mov). Without --duration it records until Ctrl-C, then
    finishes the file. Files are written in fragments: even a killed process leaves a playable file.
      -o, --output PATH   the movie; %d patterns take the next free number; an existing file is an
                          error unless --overwrite
      -i, --input INPUT   the camera (default: the first camera, else the test pattern)
      --audio INPUT       the microphone (default: the default microphone when there is one)
      --no-audio          no sound track
      --duration D        stop after D (2.5, "500ms", "2s", "1.5m"); the file ends exactly there
      --size WxH          the movie's frame size
      --framerate N       the movie's frame rate
    A progress line (elapsed time, size) is shown when stderr is a terminal.
    """

    static let spec = Arguments.Spec(options: ["output", "input", "audio", "duration", "size", "framerate"],
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
    }

    static func parse(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, spec)
        try parsed.noPositionals()
        guard let location = parsed.value("output") else { throw Arguments.UsageError(description: "-o PATH is required") }
        if parsed.flag("no-audio") && parsed.value("audio") != nil {
            throw Arguments.UsageError(description: "--audio and --no-audio exclude each other")
        }
        let frameRate = try parsed.value("framerate").map { text throws(Arguments.UsageError) -> FrameRate in
            guard let value = Double(text), value > 0, value <= 240 else { throw Arguments.UsageError(description: "--framerate must be a number of frames per second up to 240, not '\(text)'") }
            return FrameRate(value)
        }
        return Options(location: location, input: parsed.value("input") ?? "default", audio: parsed.value("audio"), noAudio: parsed.flag("no-audio"),
                       duration: try parsed.duration("duration"), size: try parsed.size("size"), frameRate: frameRate, overwrite: parsed.flag("overwrite"))
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try parse(arguments)
        let (location, duration, size, frameRate) = (options.location, options.duration, options.size, options.frameRate)
        let session = CaptureSession(name: "capture-record")
        let (camera, note) = try CaptureDevice.resolve(options.input)
        if let note { printError(note) }
        try session.addInput(CaptureDeviceInput(device: camera, name: "camera"))
        if !options.noAudio {
            let explicit = options.audio
            do throws(CaptureError) {
                let (microphone, micNote) = try CaptureDevice.resolve(explicit ?? "default-audio")
                if let micNote { printError(micNote) }
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
        let movie = CaptureMovieFileOutput(name: "movie", settings: settings)
        try session.addOutput(movie)
        try await session.startRunning()

        let finished = FinishSignal()
        let url: URL
        do {
            url = try await movie.startRecording(to: location, delegate: finished)
        } catch {
            await session.stopRunning()
            throw error
        }
        let stop = GracefulStop { Task { _ = try? await movie.stopRecording() } }
        let showProgress = isatty(STDERR_FILENO) == 1
        let progress = Task {
            while !Task.isCancelled && movie.isRecording {
                if showProgress {
                    let seconds = movie.recordedDuration.components.seconds
                    let text = String(format: "\rrecording %@  %02lld:%02lld  %.1f MB ", url.lastPathComponent, seconds / 60, seconds % 60,
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

/// Waits for the end of a recording, whatever ends it (duration, Ctrl-C, a device lost).
final class FinishSignal: CaptureFileOutputRecordingDelegate, @unchecked Sendable {
    // NSLock guards both fields.
    private let lock = NSLock()
    private var result: MovieRecordingResult?
    private var waiter: CheckedContinuation<MovieRecordingResult, Never>?

    func fileOutput(_ output: CaptureMovieFileOutput, didFinishRecordingTo fileURL: URL, result: MovieRecordingResult) {
        let waiting = lock.withLock { () -> CheckedContinuation<MovieRecordingResult, Never>? in
            self.result = result
            defer { waiter = nil }
            return waiter
        }
        waiting?.resume(returning: result)
    }

    func wait() async -> MovieRecordingResult {
        await withCheckedContinuation { continuation in
            let ready = lock.withLock { () -> MovieRecordingResult? in
                if let result { return result }
                waiter = continuation
                return nil
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
