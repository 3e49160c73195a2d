import Capture
import Foundation
import PipelineFile

enum StreamCommand {
    static let help = """
        usage: capture stream [-i INPUT] (--serve URL | --publish URL) [--audio INPUT] [--audio-codec aac|opus]
                              [--size WxH] [--bitrate N] [--record FILE] [--duration D] [--json] [--encoder auto|ENCODER]

        A live H.264 stream of a camera, served or published, until Ctrl-C (or --duration). Events (the
        stream ready, clients coming and going, a server lost and retried) are printed as they happen.
          -i, --input INPUT   the camera (default: the first camera, else the test pattern)
          --serve URL         serve rtsp://ADDRESS:PORT/PATH from this process (clients: ffplay, VLC,
                              MediaMTX, Frigate ... read that URL); ADDRESS 0.0.0.0 serves every interface
          --publish URL       send to a server: rtsp://HOST:PORT/PATH (RTSP RECORD, e.g. MediaMTX) or
                              srt://HOST:PORT[?mode=caller|listener&latency=MS&streamid=ID&passphrase=P];
                              a server that is away is retried (1 s, doubling up to 30 s)
          --audio INPUT       stream this microphone too (with --audio-codec, default aac)
          --audio-codec C     aac or opus
          --size WxH          the stream's frame size (default: the session's high preset)
          --bitrate N         video bits per second (default: about 0.1 bit per pixel per frame)
          --encoder E         the H.264 encoder: auto (a hardware one that passes a one-frame trial, else
                              x264enc, else openh264enc) or vah264enc, vaapih264enc, v4l2h264enc, x264enc, openh264enc
          --record FILE       record the same picture too (.mp4, .mkv, .mov; a numbered pattern such as
                              clip-%03d.mp4 takes the next free name): it reads the stream's encoder
                              (one encode); the file is finished when the stream stops
          --duration D        stop after D (2.5, "500ms", "2s", "1.5m")
          --json              events as JSON lines
        Exit: 0 stopped (Ctrl-C or --duration), 1 the session failed, 64 usage, 65 invalid URL or settings,
        69 input or element unavailable.
        """

    static let spec = Arguments.Spec(
        options: ["input", "serve", "publish", "audio", "audio-codec", "size", "bitrate", "record", "duration", "encoder"],
        flags: ["json"], aliases: ["i": "input"])

    enum Destination {
        case serve(String), publish(String)

        func checked() throws(CaptureError) -> StreamDestination {
            switch self {
            case .serve(let url): try .serving(url)
            case .publish(let url): try .publishing(url)
            }
        }
    }

    struct Options {
        var input = "default"
        /// The URL as given: checked when the command runs (an invalid one exits 65).
        var destination: Destination
        var audio: String?
        var settings: StreamSettings
        /// Where a recording of the same picture goes, if any.
        var record: String?
        var duration: Duration?
        var json = false
    }

    static func parse(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, spec)
        try parsed.noPositionals()
        let destination: Destination
        switch (parsed.value("serve"), parsed.value("publish")) {
        case (let url?, nil): destination = .serve(url)
        case (nil, let url?): destination = .publish(url)
        case (nil, nil): throw Arguments.UsageError(description: "--serve URL or --publish URL is required")
        default: throw Arguments.UsageError(description: "--serve and --publish exclude each other")
        }
        var settings = StreamSettings(bitRate: try parsed.int("bitrate", range: 10_000...100_000_000), size: try parsed.size("size"))
        settings.encoder = try encoderOption(parsed)
        if let codec = parsed.value("audio-codec") {
            guard let value = MovieAudioCodec(rawValue: codec), value != MovieAudioCodec.none else {
                throw Arguments.UsageError(description: "--audio-codec must be aac or opus, not '\(codec)'")
            }
            settings.audioCodec = value
        }
        let audio = parsed.value("audio")
        if audio != nil, settings.audioCodec == nil { settings.audioCodec = .aac }
        if audio == nil, settings.audioCodec != nil {
            throw Arguments.UsageError(description: "--audio-codec needs --audio INPUT (a microphone, or test-tone)")
        }
        return Options(
            input: parsed.value("input") ?? "default", destination: destination, audio: audio, settings: settings,
            record: parsed.value("record"), duration: try parsed.duration("duration"), json: parsed.flag("json"))
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try parse(arguments)
        let destination = try options.destination.checked()
        let session = CaptureSession(name: "capture-stream")
        let camera = try CaptureDevice.resolve(options.input)
        try session.addInput(CaptureDeviceInput(device: camera, name: "camera"))
        if let audio = options.audio {
            let microphone = try CaptureDevice.resolve(audio)
            guard microphone.mediaType == .audio else {
                throw CaptureError.deviceMediaMismatch(id: microphone.uniqueID, expected: .audio, actual: microphone.mediaType)
            }
            try session.addInput(CaptureDeviceInput(device: microphone, name: "microphone"))
        }
        try session.setSessionPreset(SessionPreset.serving(options.settings.size))
        let stream = CaptureStreamOutput(name: "stream", destination: destination, settings: options.settings)
        try session.addOutput(stream)
        var recording: CaptureMovieFileOutput?
        if let record = options.record {
            // The stream's size, its encoder: the recording reads the stream's encoded frames.
            let movie = CaptureMovieFileOutput(name: "recording")
            movie.settings.location = record
            movie.settings.size = options.settings.size
            movie.settings.encoder = options.settings.encoder
            if options.audio != nil { movie.settings.audioCodec = options.settings.audioCodec }
            try session.addOutput(movie)
            recording = movie
        }
        let events = session.events()
        let start = ContinuousClock.now
        let json = options.json
        let printer = Task {
            for await event in events {
                emit(json ? EventFormat.json(event, since: start) : EventFormat.readable(event, since: start))
                if event.name == "session-stopped" { break }
            }
        }
        try await session.startRunning()
        if !json, let url = stream.servedURL { printError("serving \(url)") }
        if let recording {
            do {
                let url = try await recording.startRecording()
                if !json { printError("recording \(url.path)") }
            } catch {
                await session.stopRunning()
                _ = await printer.value
                throw error
            }
        }
        let stop = GracefulStop(saying: "stopping the stream; press Ctrl-C again to quit at once") { Task { await session.stopRunning() } }
        let duration = options.duration
        await withTaskGroup(of: Void.self) { group in
            group.addTask {
                for await event in session.events() where event.name == "session-stopped" { break }
            }
            if let duration {
                group.addTask { try? await Task.sleep(for: duration) }
            }
            _ = await group.next()
            group.cancelAll()
        }
        stop.cancel()
        let wasInterrupted = session.isInterrupted
        await session.stopRunning()
        _ = await printer.value
        let sent = stream.sentFrameCount
        if sent == 0, case .publish(let url) = stream.destination {
            // Nothing reached the server: not a success, whatever the session did.
            printError("sent no frame: \(url) was never reached")
            return ExitCode.unavailable
        }
        printError(sent == 0 ? "sent no frame (no client read the stream)" : "sent \(sent) frames")
        return wasInterrupted ? ExitCode.failure : ExitCode.success
    }
}
