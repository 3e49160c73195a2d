import CaptureTestSupport
import Foundation
import Testing

@testable import Capture

/// Switching cameras on a running session: the new camera takes the old one's place in the pipeline,
/// the outputs go on (a recording in the same file, a preview that resumes within a few frames), and a
/// camera that cannot start leaves the old one running. Frames are checked with FFmpeg and ImageMagick.
@Suite struct CameraSwitchTests {
    /// The test pattern's colour bars (mean about 0.5) and its ball on black (mean under 0.15).
    static func bars(_ name: String = "back") throws -> CaptureDeviceInput {
        try CaptureDeviceInput(device: .testPattern, name: name, options: InputOptions(pattern: "smpte"))
    }
    static func ball(_ name: String = "front", size: Size? = nil) throws -> CaptureDeviceInput {
        try CaptureDeviceInput(device: .testPattern, name: name, options: InputOptions(pattern: "ball", size: size))
    }

    /// The mean brightness (0-1) of the frame of a movie at a time, read by FFmpeg and ImageMagick.
    static func brightness(of movie: String, at seconds: Double, in directory: TemporaryDirectory) throws -> Double {
        let image = directory.path("frame-\(seconds).png")
        let extracted = try run(["ffmpeg", "-v", "error", "-y", "-ss", String(seconds), "-i", movie, "-frames:v", "1", image])
        #expect(extracted.status == 0, "\(extracted.output)")
        let mean = try run(["convert", image, "-colorspace", "Gray", "-format", "%[fx:mean]", "info:"])
        return Double(mean.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// Every video frame's time in a movie, in order.
    static func frameTimes(_ movie: String) throws -> [Double] {
        let result = try run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "packet=pts_time", "-of", "csv=p=0", movie])
        return result.output.split(separator: "\n").compactMap { Double($0) }.sorted()
    }

    /// `sharing`: a stream of the same picture runs too, and the recording reads its encoder (which
    /// stays across the switch: one encode before and after).
    @Test(arguments: [false, true])
    func aRecordingGoesOnInTheSameFileAcrossACameraSwitch(sharing: Bool) async throws {
        let directory = try TemporaryDirectory()
        let session = CaptureSession()
        try session.setSessionPreset(.cif352x288)
        let back = try Self.bars()
        try session.addInput(back)
        try session.addInput(CaptureDeviceInput(device: .testTone, name: "mic"))
        let frames = CaptureVideoDataOutput(name: "frames")
        let movie = CaptureMovieFileOutput(name: "movie")
        try session.addOutput(frames)
        try session.addOutput(movie)
        if sharing { try session.addOutput(try CaptureStreamOutput(name: "live", serve: "rtsp://127.0.0.1:\(freeLoopbackPort())/live")) }
        func encoders() -> Int { session.runningElementFactories.filter { $0 == "x264enc" }.count }
        let events = session.events()
        try await session.startRunning()
        let location = directory.path("switch.mp4")
        _ = try await movie.startRecording(to: location)
        #expect(encoders() == 1)
        #expect(await movie.waitUntilRecorded(.seconds(1.5)))
        // The front camera is smaller: the movie scales it to its own size.
        let front = try Self.ball(size: Size(width: 160, height: 120))
        try await session.replaceInput(back, with: front)
        #expect(session.inputs.map(\.name) == ["front", "mic"])
        let frame = await firstFrame(frames)
        #expect(frame.map { ($0.width, $0.height) } ?? (0, 0) == (352, 288), "the frames output keeps the session's size")
        #expect(encoders() == 1)
        // A later commit finds every branch as it runs: nothing is rebuilt, the recording goes on.
        let laterEvents = session.events()
        session.beginConfiguration()
        try await session.commitConfiguration()
        let later = await firstEvent(laterEvents) { event -> ConfigurationReport? in
            if case .configurationCommitted(let report) = event.kind, report.swappedInputs.isEmpty { return report } else { return nil }
        }
        #expect(later.map { $0.updatedOutputs.isEmpty && $0.removedOutputs.isEmpty && $0.addedOutputs.isEmpty } == true, "\(String(describing: later))")
        #expect(movie.isRecording && encoders() == 1)
        #expect(await movie.waitUntilRecorded(movie.recordedDuration + .seconds(1.5)))
        let result = try await movie.stopRecording()
        await session.stopRunning()
        #expect(result.success, "\(String(describing: result.error))")

        let report = await firstEvent(events) { event -> ConfigurationReport? in
            if case .configurationCommitted(let report) = event.kind, !report.swappedInputs.isEmpty { return report } else { return nil }
        }
        #expect(report?.swappedInputs == ["back": "front"] && report?.removedOutputs.isEmpty == true, "\(String(describing: report))")
        let probed = try ProbedMovie(location, countFrames: true)
        #expect(probed.video?.width == 352 && probed.video?.height == 288)
        // The file holds what the recorder reported (the sleeps above may take longer on a busy machine).
        #expect(abs(probed.duration - result.duration.seconds) < 0.3, "file \(probed.duration) s, reported \(result.duration)")
        let times = try Self.frameTimes(location)
        let longestGap = zip(times, times.dropFirst()).map { $1 - $0 }.max() ?? 0
        #expect(longestGap < 0.5, "the switch costs a few frames at most: longest gap \(longestGap) s")
        #expect(try Self.brightness(of: location, at: 0.5, in: directory) > 0.35, "bars before the switch")
        #expect(try Self.brightness(of: location, at: probed.duration - 0.4, in: directory) < 0.2, "the ball after it")
        let decoded = try run(["ffmpeg", "-v", "error", "-i", location, "-f", "null", "-"])
        #expect(decoded.status == 0 && decoded.output.isEmpty, "\(decoded.output)")
    }

    @Test func aCameraThatCannotStartLeavesTheOldOneRunning() async throws {
        let session = CaptureSession()
        try session.setSessionPreset(.cif352x288)
        let back = try Self.bars()
        try session.addInput(back)
        let frames = CaptureVideoDataOutput(name: "frames")
        try session.addOutput(frames)
        try await session.startRunning()
        // A device node that is no camera: v4l2src cannot open it.
        let format = DeviceFormat(mediaSubtype: "video/x-raw", pixelFormat: "YUY2", size: Size(width: 352, height: 288), frameRates: [FrameRate(30)])
        let broken = CaptureDevice(
            uniqueID: "/dev/zero", localizedName: "Not a camera", mediaType: .video, formats: [format],
            kind: .system(factory: "v4l2src", properties: ["device": "/dev/zero"]))
        let front = try CaptureDeviceInput(device: broken, name: "front")
        await #expect(throws: CaptureError.self) { try await session.replaceInput(back, with: front) }
        #expect(session.inputs.map(\.name) == ["back"], "the old input stays")
        #expect(session.isRunning)
        let frame = await firstFrame(frames)
        #expect(frame != nil, "the old camera still streams")
        await session.stopRunning()
    }

    @Test func switchCameraPicksTheOppositeThenTheNextCamera() throws {
        let format = DeviceFormat(mediaSubtype: "video/x-raw", pixelFormat: "YUY2", size: Size(width: 640, height: 480), frameRates: [FrameRate(30)])
        func camera(_ id: String, _ position: DevicePosition) -> CaptureDevice {
            CaptureDevice(
                uniqueID: id, localizedName: id, mediaType: .video, position: position, formats: [format],
                kind: .system(factory: "v4l2src", properties: ["device": id]))
        }
        let front = camera("/dev/video0", .front), back = camera("/dev/video2", .back), usb = camera("/dev/video4", .external)
        let all = [front, back, usb, .testPattern, .testTone]
        #expect(CaptureDevice.camera(after: front, among: all) == back)
        #expect(CaptureDevice.camera(after: back, among: all) == front)
        #expect(CaptureDevice.camera(after: usb, among: all) == .testPattern, "no opposite: the next camera")
        #expect(CaptureDevice.camera(after: .testPattern, among: all) == front, "wrapping around")
        #expect(CaptureDevice.camera(after: front, position: .external, among: all) == usb)
        #expect(CaptureDevice.camera(after: .testPattern, among: [.testPattern, .testTone]) == nil, "no other camera")
    }

    @Test func replaceInputRefusesWhatCannotReplace() async throws {
        let session = CaptureSession()
        let back = try Self.bars()
        try session.addInput(back)
        try session.addOutput(CaptureVideoPreviewOutput(name: "preview", sink: .none))
        let microphone = try CaptureDeviceInput(device: .testTone, name: "mic")
        await #expect(throws: CaptureError.self) { try await session.replaceInput(back, with: microphone) }
        await #expect(throws: CaptureError.self) { try await session.replaceInput(try Self.ball("ghost"), with: try Self.ball()) }
        await #expect(throws: CaptureError.self) { try await session.replaceInput(back, with: try Self.ball("preview")) }
        #expect(session.inputs.map(\.name) == ["back"])
        // Not running: the switch is a configuration change.
        try await session.replaceInput(back, with: try Self.ball("back"))
        #expect(session.inputs.first?.options.pattern == "ball")
    }
}

/// The first event of a stream that `match` turns into a value, waiting at most `timeout`.
func firstEvent<T: Sendable>(
    _ events: AsyncStream<SessionEvent>, timeout: Duration = .seconds(2),
    _ match: @escaping @Sendable (SessionEvent) -> T?
) async -> T? {
    await withTaskGroup(of: T?.self) { group in
        group.addTask {
            for await event in events { if let value = match(event) { return value } }
            return nil
        }
        group.addTask {
            try? await Task.sleep(for: timeout)
            return nil
        }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

/// The camera manager's set-up: a preset with a fallback, and the access check an app falls back from.
@Suite struct FallbackAPITests {
    @Test func theFirstPresetTheInputsServeIsSet() throws {
        let format = DeviceFormat(mediaSubtype: "video/x-raw", pixelFormat: "YUY2", size: Size(width: 640, height: 480), frameRates: [FrameRate(30)])
        let small = CaptureDevice(uniqueID: "small", localizedName: "Small camera", mediaType: .video, formats: [format], kind: .testPattern)
        let session = CaptureSession()
        try session.addInput(CaptureDeviceInput(device: small, name: "camera"))
        #expect(!session.canSetSessionPreset(.hd1920x1080))
        #expect(try session.setSessionPreset(.hd1920x1080, fallbacks: [.hd1280x720, .high]) == .high)
        #expect(session.sessionPreset == .high)
        #expect(throws: CaptureError.self) { try session.setSessionPreset(.hd1920x1080, fallbacks: [.hd1280x720]) }
        #expect(session.sessionPreset == .high, "a refused list changes nothing")
    }

    @Test func deviceNodesAreCheckedBeforeAnythingStarts() {
        #expect(CaptureDeviceInput.nodePath("hw:1,0") == "/dev/snd/pcmC1D0c")
        #expect(CaptureDeviceInput.nodePath("plughw:0,2") == "/dev/snd/pcmC0D2c")
        #expect(CaptureDeviceInput.nodePath("default") == nil && CaptureDeviceInput.nodePath("hw:Loopback,0") == nil)
        let missing = CaptureDevice(
            uniqueID: "hw:9,9", localizedName: "Missing microphone", mediaType: .audio, formats: [],
            kind: .system(factory: "alsasrc", properties: ["device": "hw:9,9"]))
        #expect(throws: CaptureError.deviceNotFound(id: "hw:9,9")) { try CaptureDeviceInput.checkAccess(missing) }
        #expect(CaptureError.permissionDenied(id: "mic", path: "/dev/snd/pcmC0D0c").meansDeviceUnusable)
        #expect(!CaptureError.invalidConfiguration(object: "x", reason: "y").meansDeviceUnusable)
    }
}
