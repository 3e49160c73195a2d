import Capture
import Foundation

enum PhotoCommand {
    static let help = """
        usage: capture photo [-i INPUT] [-o PATH] [--size WxH] [--codec jpeg|png] [--quality N] [--count N]
                             [--interval SECONDS] [--crop X,Y,W,H] [--zero-shutter-lag] [--json]

        Takes photos with a still-image output, like AVCapturePhotoOutput, and prints where each was saved.
          -i, --input INPUT     the camera (default: the first camera, else the test pattern)
          -o, --output PATH     where to save; %d patterns number files (default IMG_%04d.jpg / .png);
                                an existing file is never overwritten: the next free number is used
          --size WxH            the photo's size (default: the session preset's size)
          --codec jpeg|png      default jpeg
          --quality N           JPEG quality 1-100 (default 90)
          --count N             how many photos (default 1)
          --interval SECONDS    time between photos (default 0: one per frame)
          --crop X,Y,W,H        a crop of the frame in normalized coordinates (0-1)
          --zero-shutter-lag    take the frame nearest the request from a small ring of recent frames
          --json                one JSON object per photo on stdout
        SIGINT/SIGTERM: the photo being taken is saved, no other is started; every line printed so far is
        written (standard output is line-buffered) and the exit status is 130 (SIGINT) or 143 (SIGTERM).
        """

    static let spec = Arguments.Spec(
        options: ["input", "output", "size", "codec", "quality", "count", "interval", "crop"],
        flags: ["zero-shutter-lag", "json"], aliases: ["i": "input", "o": "output"])

    struct Options {
        var input = "default"
        var location: String
        var size: Size?
        var codec = PhotoCodec.jpeg
        var quality = 90
        var count = 1
        var interval = Duration.zero
        var crop: NormalizedRect?
        var zeroShutterLag = false
        var json = false
    }

    static func parse(_ arguments: [String]) throws(Arguments.UsageError) -> Options {
        let parsed = try Arguments(arguments, spec)
        try parsed.noPositionals()
        let codec =
            try parsed.value("codec").map { text throws(Arguments.UsageError) -> PhotoCodec in
                guard let codec = PhotoCodec(rawValue: text) else { throw Arguments.UsageError(description: "--codec must be jpeg or png, not '\(text)'") }
                return codec
            } ?? .jpeg
        return Options(
            input: parsed.value("input") ?? "default", location: parsed.value("output") ?? "IMG_%04d.\(codec.fileExtension)",
            size: try parsed.size("size"), codec: codec, quality: try parsed.int("quality", range: 1...100) ?? 90,
            count: try parsed.int("count", range: 1...10_000) ?? 1, interval: try parsed.duration("interval", zero: true) ?? .zero,
            crop: try parsed.normalizedRect("crop"), zeroShutterLag: parsed.flag("zero-shutter-lag"), json: parsed.flag("json"))
    }

    static func run(_ arguments: [String]) async throws -> Int32 {
        let options = try parse(arguments)
        let (codec, size, quality, count, interval, crop, location) = (
            options.codec, options.size, options.quality, options.count,
            options.interval, options.crop, options.location
        )
        let device = try CaptureDevice.resolve(options.input)
        let session = CaptureSession(name: "capture-photo")
        try session.addInput(CaptureDeviceInput(device: device, name: "camera"))
        try session.setSessionPreset(SessionPreset.serving(size))
        let photo = CapturePhotoOutput(name: "photo")
        photo.defaults.zeroShutterLag = options.zeroShutterLag
        try session.addOutput(photo)
        // A device that fails after starting (busy, unplugged) stops the session: that error, not the
        // photo request's, is what to report.
        let deviceError = SessionErrorWatch(session)
        try await session.startRunning()
        // SIGINT/SIGTERM: the photo being taken is finished, no other is started, the session stops
        // and the command exits 130 (SIGINT) or 143 (SIGTERM) with every line it printed written.
        let stopAsked = Locked(false)
        let signals = GracefulStop(saying: "stopping after the photo being taken; press Ctrl-C again to quit at once") {
            stopAsked.value = true
        }
        defer { signals.cancel() }
        var failures = 0
        var status = ExitCode.success
        for index in 0..<count {
            if index > 0 && interval > .zero {
                // The interval, cut short by a stop.
                let end = ContinuousClock.now + interval
                while !stopAsked.value, ContinuousClock.now < end {
                    try await Task.sleep(for: min(.milliseconds(50), end - ContinuousClock.now))
                }
            }
            if stopAsked.value { break }
            do throws(CaptureError) {
                let shot = try await photo.capturePhoto(with: PhotoSettings(codec: codec, quality: quality, size: size, crop: crop, location: location))
                if options.json {
                    let fields: [(String, EventValue)] = [
                        ("location", .string(shot.location ?? "")), ("width", .int(shot.width)),
                        ("height", .int(shot.height)), ("time", .double(shot.timestamp)),
                    ]
                    print("{" + fields.map { "\(EventValue.string($0.0).json): \($0.1.json)" }.joined(separator: ", ") + "}")
                } else {
                    print("\(shot.location ?? "-")  \(shot.width)x\(shot.height)")
                }
            } catch {
                failures += 1
                if deviceError.first == nil, case .notRunning = error { try? await Task.sleep(for: .milliseconds(300)) }
                if let cause = deviceError.first {
                    printError(cause.description)
                    status = CommandLineTool.exitCode(for: cause)
                    break
                }
                printError(error.description)
                status = max(status, CommandLineTool.exitCode(for: error))
                if case .notRunning = error { break }
            }
        }
        await session.stopRunning()
        if let interrupted = signals.interruptedStatus { return interrupted }
        return failures == 0 ? ExitCode.success : max(status, ExitCode.failure)
    }
}

/// Remembers the first runtime error a session posts.
final class SessionErrorWatch: @unchecked Sendable {
    // `error` is locked; `task` is set once in init.
    private let error = Locked<CaptureError?>(nil)
    private var task: Task<Void, Never>?

    init(_ session: CaptureSession) {
        let events = session.events()
        task = Task { [weak self] in
            for await event in events {
                if case .runtimeError(let error) = event.kind {
                    self?.error.withLock { first in if first == nil { first = error } }
                }
            }
        }
    }

    deinit { task?.cancel() }

    var first: CaptureError? { error.value }
}
