import Foundation
import Testing

@testable import Capture

@Suite(.serialized) struct FaultTests {
    @Test func deviceErrorMidRunInterruptsAndStops() async throws {
        let session = CaptureSession()
        let input = try CaptureDeviceInput(device: .testPattern, name: "camera", options: InputOptions(failAfterFrames: 15))
        try session.addInput(input)
        try session.setSessionPreset(.cif352x288)
        try session.addOutput(CaptureVideoDataOutput(name: "frames"))
        let events = session.events()
        try await session.startRunning()
        let seen = await collectEvents(events, until: { $0.name == "session-stopped" })
        // Hot-plug events of the machine (other tests fake them process-wide) are not this session's story.
        let names = seen.map(\.name).filter { !$0.hasPrefix("device-") }
        #expect(names == ["session-started", "runtime-error", "interrupted", "session-stopped"], "\(names)")
        if let interrupted = seen.first(where: { $0.name == "interrupted" }) {
            #expect(interrupted.field("reason") == .string("device-error"))
            #expect(interrupted.field("device") == .string("test-pattern"))
        }
        #expect(!session.isRunning)
    }

    @Test func fileDeviceReachingItsEndInterruptsWithEndOfStream() async throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("clip.mp4")
        try makeVideoFile(path, seconds: 1)
        let device = try CaptureDevice.file(path)
        #expect(device.formats.first?.size == Size(width: 320, height: 240))
        let session = CaptureSession()
        try session.addInput(CaptureDeviceInput(device: device, name: "clip"))
        let frames = CaptureVideoDataOutput(name: "frames")
        try session.addOutput(frames)
        let events = session.events()
        let start = ContinuousClock.now
        try await session.startRunning()
        let seen = await collectEvents(events, until: { $0.name == "session-stopped" })
        let elapsed = ContinuousClock.now - start
        // The lifecycle, in order; a frame the unread frames output lost on a busy machine is reported
        // too (frame-dropped), which is right and not what this test is about.
        #expect(seen.map(\.name).filter { !$0.hasPrefix("device-") && $0 != "frame-dropped" } == ["session-started", "interrupted", "session-stopped"])
        #expect(seen.first { $0.name == "interrupted" }?.field("reason") == .string("end-of-stream"))
        // Replayed at its own rate: 30 frames of a 1 s clip take about a second, not a burst.
        #expect(elapsed > .milliseconds(800))
        #expect(frames.deliveredFrameCount >= 25)
    }

    @Test func missingDevicesAreTypedErrors() {
        #expect(throws: CaptureError.deviceNotFound(id: "/dev/video99")) { _ = try CaptureDevice.resolve("/dev/video99") }
        #expect(throws: CaptureError.deviceNotFound(id: "no-such-camera")) { _ = try CaptureDeviceInput(deviceID: "no-such-camera") }
        #expect(throws: CaptureError.deviceNotFound(id: "file:/nonexistent.mp4")) { _ = try CaptureDevice.resolve("file:/nonexistent.mp4") }
        let message = CaptureError.deviceNotFound(id: "cam").description
        #expect(message.contains("capture devices"))
    }

    /// `default` is the first camera, as `AVCaptureDevice.default(for:)`; without one it is an error that
    /// says how to run on the test pattern, never the test pattern itself.
    @Test func defaultIsTheFirstCameraOrNoDeviceAvailable() throws {
        if let camera = CaptureDevice.default(for: .video) {
            #expect(camera.mediaType == .video && !camera.isVirtual)
            #expect(try CaptureDevice.resolve("default") == camera)
            #expect(try CaptureDeviceInput(deviceID: "default").device == camera)
        } else {
            #expect(throws: CaptureError.noDeviceAvailable(media: .video)) { _ = try CaptureDevice.resolve("default") }
            #expect(throws: CaptureError.noDeviceAvailable(media: .video)) { _ = try CaptureDeviceInput(deviceID: "default") }
            #expect(throws: CaptureError.noDeviceAvailable(media: .video)) { _ = try CaptureDevice(uniqueID: "default-video") }
        }
        #expect(CaptureDevice.default(for: .video)?.isVirtual != true)
        #expect(CaptureDevice.default(for: .audio)?.isVirtual != true)
        let message = CaptureError.noDeviceAvailable(media: .video).description
        #expect(message.contains("test-pattern") && message.contains("fallback=test-pattern") && message.contains("capture devices"))
        #expect(CaptureError.noDeviceAvailable(media: .audio).description.contains("--audio test-tone"))
        #expect(CaptureError.noDeviceAvailable(media: .video).name == "no-device-available")
    }
}

@Suite struct ConfigurationErrorTests {
    @Test func startInsideConfigurationIsAnError() async throws {
        let (session, _) = try makeSession()
        session.beginConfiguration()
        await #expect(throws: CaptureError.startInsideConfiguration) { try await session.startRunning() }
        try await session.commitConfiguration()
        await #expect(throws: CaptureError.commitWithoutBegin) { try await session.commitConfiguration() }
    }

    @Test func oneOutputCannotJoinTwoSessions() throws {
        let (first, _) = try makeSession()
        let (second, _) = try makeSession()
        let output = CaptureVideoDataOutput(name: "frames")
        try first.addOutput(output)
        #expect(!second.canAddOutput(output))
        #expect(throws: CaptureError.outputInAnotherSession(name: "frames")) { try second.addOutput(output) }
        #expect(throws: CaptureError.outputAlreadyInSession(name: "frames")) { try first.addOutput(output) }
        try first.removeOutput(output)
        try second.addOutput(output)
    }

    @Test func duplicateNamesAreRefused() throws {
        let (session, _) = try makeSession()
        try session.addOutput(CaptureVideoDataOutput(name: "frames"))
        #expect(throws: CaptureError.duplicateName(kind: "output", name: "frames")) {
            try session.addOutput(CaptureVideoDataOutput(name: "frames"))
        }
        #expect(throws: CaptureError.duplicateName(kind: "output", name: "camera")) {
            try session.addOutput(CaptureVideoDataOutput(name: "camera"))
        }
    }

    @Test func presetsAreAnsweredFromTheDeviceFormats() throws {
        let directory = try TemporaryDirectory()
        let path = directory.path("small.mp4")
        try makeVideoFile(path, seconds: 1)
        let session = CaptureSession()
        try session.addInput(CaptureDeviceInput(deviceID: "file:\(path)", name: "clip"))
        #expect(session.canSetSessionPreset(.low))  // 192x144: scaled down from 320x240
        #expect(session.canSetSessionPreset(.photo))
        #expect(!session.canSetSessionPreset(.hd1280x720))  // upscaling is refused
        #expect(throws: CaptureError.self) { try session.setSessionPreset(.hd1280x720) }
        try session.setSessionPreset(.low)
        let graph = try session.compile()
        #expect(graph.sources[0].format?.outputSize == Size(width: 192, height: 144))
        #expect(graph.sources[0].format?.isScaled == true)
    }

    @Test func aRejectedBlockChangesNothing() async throws {
        let (session, _) = try makeSession()
        let good = CaptureVideoDataOutput(name: "good")
        let bad = CaptureVideoDataOutput(name: "bad")
        bad.pixelFormat = "NOT-A-FORMAT"
        session.beginConfiguration()
        try session.addOutput(good)
        try session.addOutput(bad)
        await #expect(throws: CaptureError.self) { try await session.commitConfiguration() }
        #expect(session.outputs.isEmpty)
        // Both outputs are free again.
        let (other, _) = try makeSession()
        try other.addOutput(good)
    }

    @Test func allErrorsOfABlockAreReported() async throws {
        let (session, _) = try makeSession()
        let first = CaptureVideoDataOutput(name: "first")
        first.connection = ConnectionSettings(input: "nope")
        let second = CaptureVideoDataOutput(name: "second")
        second.connection = ConnectionSettings(rotation: 45)
        session.beginConfiguration()
        try session.addOutput(first)
        try session.addOutput(second)
        do {
            try await session.commitConfiguration()
            Issue.record("commit should fail")
        } catch {
            guard case .configurationRejected(let errors) = error else { Issue.record("\(error)"); return }
            #expect(errors.count == 2)
            #expect(errors.contains(.unknownInput(name: "nope")))
        }
    }
}

@Suite struct CompilerTests {
    @Test func compiledGraphIsARunnableLaunchLine() throws {
        let (session, _) = try makeSession(preset: .vga640x480, pattern: "ball")
        try session.addOutput(CaptureVideoPreviewOutput(name: "preview", sink: .none))
        let frames = CaptureVideoDataOutput(name: "frames")
        frames.connection = ConnectionSettings(rotation: 90, isMirrored: true)
        try session.addOutput(frames)
        let graph = try session.compile()
        let line = graph.launchDescription
        #expect(line.hasPrefix("videotestsrc name=camera_source is-live=true pattern=ball ! capsfilter name=camera_format"))
        #expect(line.contains("tee name=camera_tee allow-not-linked=true"))
        #expect(line.contains("camera_tee. ! queue name=preview_queue"))
        #expect(line.contains("videoflip name=frames_rotate video-direction=90r"))
        #expect(line.contains("videoflip name=frames_mirror video-direction=horiz"))
        #expect(graph.requiredFactories.contains("appsink"))
        // gst-launch-1.0 itself accepts and runs the printed command (a few buffers, then EOS via -e and timeout).
        let command = graph.gstLaunchCommand.replacingOccurrences(of: "is-live=true", with: "is-live=true num-buffers=10")
        let result = try run(["sh", "-c", "timeout 20 " + command])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test func quotingOfSpecialValues() {
        #expect(ElementSpec.quote("plain/path.jpg") == "plain/path.jpg")
        #expect(ElementSpec.quote("with space.jpg") == "\"with space.jpg\"")
        #expect(ElementSpec.quote("a\"b") == "\"a\\\"b\"")
        let tokens = CompiledGraph.shellTokens("filesink location=\"a b\" ! x")
        #expect(tokens == ["filesink", "'location=\"a b\"'", "!", "x"])
    }

    @Test func formatSelectionPrefersExactThenSmallestLarger() throws {
        let formats = [
            DeviceFormat(mediaSubtype: "video/x-raw", pixelFormat: "YUY2", size: Size(width: 640, height: 480), frameRates: [FrameRate(25)]),
            DeviceFormat(mediaSubtype: "video/x-raw", pixelFormat: "YUY2", size: Size(width: 1280, height: 720), frameRates: [FrameRate(25, 2)]),
            DeviceFormat(mediaSubtype: "video/x-raw", pixelFormat: "YUY2", size: Size(width: 1920, height: 1080), frameRates: [FrameRate(5)]),
        ]
        let vga = try FormatSelector.resolve(preset: .vga640x480, formats: formats, inputName: "c")
        #expect(vga.device.size == Size(width: 640, height: 480) && !vga.isScaled)
        let cif = try FormatSelector.resolve(preset: .cif352x288, formats: formats, inputName: "c")
        #expect(cif.device.size == Size(width: 640, height: 480) && cif.isScaled)
        let high = try FormatSelector.resolve(preset: .high, formats: formats, inputName: "c")
        #expect(high.device.size == Size(width: 1920, height: 1080))
        #expect(throws: CaptureError.self) { try FormatSelector.resolve(preset: .hd4K3840x2160, formats: formats, inputName: "c") }
        let priority = try FormatSelector.resolve(
            preset: .inputPriority, formats: formats, inputName: "c",
            requestedSize: Size(width: 1280, height: 720), requestedRate: FrameRate(12.5))
        #expect(priority.frameRate == FrameRate(25, 2))
    }
}
