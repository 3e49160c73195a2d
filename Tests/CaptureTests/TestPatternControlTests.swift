import CaptureTestSupport
import Foundation
import Testing

@testable import Capture

/// What a frame looked like: its time and a few colour figures (0...255).
struct FrameLook: Sendable {
    var time: Double
    var width: Int
    var height: Int
    var mean: (r: Double, g: Double, b: Double)
    /// The pixel near the left edge, a fifth of the way down.
    var leftEdge: (r: Int, g: Int, b: Int)
    var luma: Double { 0.299 * mean.r + 0.587 * mean.g + 0.114 * mean.b }

    init(_ frame: VideoFrame) {
        time = frame.timestamp
        width = frame.width
        height = frame.height
        var sums = (0, 0, 0)
        frame.withUnsafePlane(0) { bytes, stride in
            for y in Swift.stride(from: 0, to: frame.height, by: 4) {
                for x in Swift.stride(from: 0, to: frame.width, by: 4) {
                    let at = y * stride + x * 4
                    sums.0 += Int(bytes[at]); sums.1 += Int(bytes[at + 1]); sums.2 += Int(bytes[at + 2])
                }
            }
        }
        let count = Double(((frame.height + 3) / 4) * ((frame.width + 3) / 4))
        mean = (Double(sums.0) / count, Double(sums.1) / count, Double(sums.2) / count)
        let pixel = frame.pixel(x: 4, y: frame.height / 5)
        leftEdge = (Int(pixel[0]), Int(pixel[1]), Int(pixel[2]))
    }
}

/// The test pattern's simulated controls, end to end: a running session, the device API, and the
/// frames' pixels. Each test uses a test pattern of its own id, so other suites' frames never change.
@Suite(.serialized) struct TestPatternControlTests {
    /// A running session on `device` with an RGBx frames output whose frames are summarised as they come.
    final class Watched: Sendable {
        let session = CaptureSession()
        let looks = Locked<[FrameLook]>([])
        private let task: Locked<Task<Void, Never>?> = Locked(nil)

        init(_ device: CaptureDevice) async throws {
            try session.addInput(CaptureDeviceInput(device: device, name: "camera"))
            try session.setSessionPreset(.vga640x480)
            let frames = CaptureVideoDataOutput(name: "frames")
            frames.pixelFormat = "RGBx"
            frames.size = Size(width: 320, height: 240)
            try session.addOutput(frames)
            let stream = frames.frames()
            task.value = Task { [looks] in
                for await frame in stream { looks.withLock { $0.append(FrameLook(frame)) } }
            }
            try await session.startRunning()
            #expect(await waitUntil { looks.value.count >= 15 })
        }

        /// The frames seen before and from a change's first frame (a little after it, once some came).
        func split(at stamp: FrameStamp) async throws -> (before: [FrameLook], after: [FrameLook]) {
            let time = (stamp.presentationTime.map { Double($0.components.attoseconds) / 1e18 + Double($0.components.seconds) }) ?? 0
            // A few frames from the change's first one on have been seen.
            #expect(await waitUntil { looks.value.filter { $0.time >= time - 1e-6 }.count >= 10 })
            let all = looks.value
            return (all.filter { $0.time < time - 1e-6 }, all.filter { $0.time >= time - 1e-6 })
        }

        func stop() async {
            await session.stopRunning()
            task.value?.cancel()
        }
    }

    @Test func brightnessZoomAndWhiteBalanceChangeTheFramesFromTheFrameReported() async throws {
        let device = DescribedDevices.testPattern("test-pattern-controls-e2e")
        let watched = try await Watched(device)
        try device.lockForConfiguration(holder: "the test")
        defer { device.unlockForConfiguration() }
        let events = watched.session.events()

        // Brightness: videobalance in the source segment, set while the pattern streams.
        let brighter = try device.setValue(220, forControl: "brightness")
        let bright = try #require(await brighter.firstFrame())
        #expect(bright.input == "camera" && bright.framesBefore == 0)
        let (dim, lit) = try await watched.split(at: bright)
        let before = try #require(dim.last), after = try #require(lit.first)
        print(
            "measured: brightness 128 -> 220: mean luma \(Int(before.luma)) -> \(Int(after.luma)) at frame \(bright.sequence ?? 0), \(bright.latency) after the change"
        )
        #expect(dim.allSatisfy { $0.luma < before.luma + 5 })
        #expect(lit.allSatisfy { $0.luma > before.luma + 40 })

        // Zoom: the crop of the centre, scaled back: the left edge shows the second bar (yellow: no
        // blue) instead of the first (white); the size the branches see never changes.
        let zooming = try device.setVideoZoomFactor(2)
        let zoomed = try #require(await zooming.firstFrame())
        let (wide, tele) = try await watched.split(at: zoomed)
        let edgeBefore = try #require(wide.last).leftEdge, edgeAfter = try #require(tele.first).leftEdge
        print("measured: zoom 1 -> 2: left edge RGB \(edgeBefore) -> \(edgeAfter) at frame \(zoomed.sequence ?? 0)")
        #expect(edgeBefore.b > 200 && edgeAfter.b < 100 && edgeAfter.r > 200)
        #expect(tele.allSatisfy { $0.leftEdge.b < 100 })
        #expect(device.videoZoomFactor == 2)
        #expect((wide + tele).allSatisfy { $0.width == 320 && $0.height == 240 })
        let tap = try #require(DeviceControlHub.shared.streamingTaps(of: device.uniqueID).first)
        #expect(tap.formatsAfterZoom.count == 1, "\(tap.formatsAfterZoom)")

        // White balance: locked at 2800 K on the simulated 6500 K scene turns the frames blue.
        try device.setValue(0, forControl: "white_balance_automatic")
        let cooling = try device.setWhiteBalanceTemperature(2800)
        #expect(device.whiteBalanceMode == .locked && device.whiteBalanceTemperature == 2800)
        let cooled = try #require(await cooling.firstFrame())
        let (neutral, blue) = try await watched.split(at: cooled)
        let n = try #require(neutral.last), b = try #require(blue.first)
        print("measured: white balance auto -> 2800 K: mean R,B \(Int(n.mean.r)),\(Int(n.mean.b)) -> \(Int(b.mean.r)),\(Int(b.mean.b))")
        #expect(b.mean.b - b.mean.r > n.mean.b - n.mean.r + 40)
        #expect(tap.formatsAfterZoom.count == 1)

        // Every change posted device-configured in the session; nothing restarted or failed.
        await watched.stop()
        let seen = await collectEvents(events, until: { $0.name == "session-stopped" })
        let configured = seen.filter { $0.name == "device-configured" }.map { $0.field("change")?.description ?? "" }
        #expect(configured == ["brightness=220", "zoom=2", "white_balance_automatic=0", "white-balance-temperature=2800"])
        #expect(!seen.contains { $0.name == "runtime-error" || $0.name == "configuration-committed" })
        #expect(DeviceControlHub.shared.streamingTaps(of: device.uniqueID).isEmpty)
    }

    /// A device's settings outlive a restart of its source: the new elements take them before they run.
    @Test func aRestartedSourceKeepsTheDevicesSettings() async throws {
        let device = DescribedDevices.testPattern("test-pattern-controls-restart")
        try device.lockForConfiguration(holder: "the test")
        try device.setValue(40, forControl: "brightness")
        device.unlockForConfiguration()
        let watched = try await Watched(device)
        let first = try #require(watched.looks.value.last)
        // A device format change restarts the source (a new bin).
        let events = watched.session.events()
        try watched.session.setSessionPreset(.hd1280x720)
        let committed = await collectEvents(events, until: { $0.name == "configuration-committed" })
        #expect(committed.last?.field("restarted")?.description.hasPrefix("camera: device format changed") == true)
        let seenAtCommit = watched.looks.value.count
        #expect(await waitUntil { watched.looks.value.count >= seenAtCommit + 20 })
        let later = try #require(watched.looks.value.last)
        print("measured: brightness 40 across a restart: mean luma \(Int(first.luma)), then \(Int(later.luma))")
        #expect(first.luma < 60 && later.luma < 60)
        await watched.stop()
    }

    /// A photo with the flash on fires the device's flash controls before its frame and puts them back
    /// after; without flash nothing is written. (A described flash camera streaming the test pattern.)
    @Test func aPhotoWithFlashDrivesTheFlashControlsAroundItsFrame() async throws {
        let (device, backend) = DescribedDevices.device("fake:flash-camera", DescribedDevices.sensor, kind: .testPattern)
        let session = CaptureSession()
        try session.addInput(CaptureDeviceInput(device: device, name: "camera"))
        try session.setSessionPreset(.cif352x288)
        let photo = CapturePhotoOutput(name: "photo")
        try session.addOutput(photo)
        try await session.startRunning()
        #expect(Set(photo.supportedFlashModes) == [.off, .on, .auto])
        let shot = try await photo.capturePhoto(with: PhotoSettings(flashMode: .on))
        #expect(shot.resolvedSettings.flashMode == .on)
        #expect(await waitUntil { backend.writes.count >= 4 })  // the LED is put back off the streaming thread
        #expect(backend.writes == ["led_mode=1", "strobe=1", "stop_strobe=1", "led_mode=0"])
        _ = try await photo.capturePhoto(with: PhotoSettings(flashMode: .off))
        #expect(backend.writes.count == 4)
        // A flash that cannot fire (the device went away) fails the shot with a typed error; the
        // session keeps running.
        backend.vanish()
        await #expect(throws: CaptureError.self) { try await photo.capturePhoto(with: PhotoSettings(flashMode: .on)) }
        #expect(session.isRunning)
        await session.stopRunning()
    }

    /// Issue 29: `auto` fires only when the scene needs it. A flash camera streaming the black test
    /// pattern fires (the LED written, the resolved settings and the JPEG's EXIF Flash tag say so, read
    /// by exiftool); streaming white it does not fire and writes nothing. A camera without a flash
    /// reports `auto` unsupported and never fires.
    @Test(arguments: [("black", true), ("white", false)])
    func autoFlashFiresOnlyInTheDark(pattern: String, fires: Bool) async throws {
        let (device, backend) = DescribedDevices.device("fake:flash-\(pattern)", DescribedDevices.sensor, kind: .testPattern)
        let session = CaptureSession()
        try session.addInput(CaptureDeviceInput(device: device, name: "camera", options: InputOptions(pattern: pattern)))
        try session.setSessionPreset(.cif352x288)
        let photo = CapturePhotoOutput(name: "photo")
        try session.addOutput(photo)
        try await session.startRunning()
        #expect(device.isFlashModeSupported(.auto))
        let directory = try TemporaryDirectory()
        let shot = try await photo.capturePhoto(with: PhotoSettings(flashMode: .auto, location: directory.path("auto.jpg")))
        #expect(shot.resolvedSettings.flashMode == .auto && shot.resolvedSettings.isFlashEnabled == fires)
        #expect(shot.metadata["Flash"] == (fires ? "fired" : "did not fire"))
        let exif = try run(["exiftool", "-s3", "-Flash", try #require(shot.location)])
        #expect(exif.output.trimmingCharacters(in: .whitespacesAndNewlines) == (fires ? "Auto, Fired" : "Auto, Did not fire"), "\(exif.output)")
        if fires {
            #expect(await waitUntil { backend.writes.count >= 4 })
            #expect(backend.writes == ["led_mode=1", "strobe=1", "stop_strobe=1", "led_mode=0"])
        } else {
            #expect(backend.writes.isEmpty)
        }
        await session.stopRunning()

        // Without a flash (the test pattern itself, black): auto is unsupported and never fires.
        let plain = CaptureSession()
        try plain.addInput(CaptureDeviceInput(device: DescribedDevices.testPattern("flashless-\(pattern)"), options: InputOptions(pattern: pattern)))
        try plain.setSessionPreset(.cif352x288)
        let plainPhoto = CapturePhotoOutput(name: "photo")
        try plain.addOutput(plainPhoto)
        try await plain.startRunning()
        #expect(plainPhoto.supportedFlashModes == [.off])
        let unlit = try await plainPhoto.capturePhoto(with: PhotoSettings(flashMode: .auto))
        #expect(unlit.resolvedSettings.flashMode == .off && !unlit.resolvedSettings.isFlashEnabled)
        await plain.stopRunning()
    }

    /// The changes of a device that streams nowhere report no frame; a device streaming in two sessions
    /// reports one first frame per session.
    @Test func firstFramesPerStreamingSession() async throws {
        let device = DescribedDevices.testPattern("test-pattern-controls-two")
        try device.lockForConfiguration(holder: "the test")
        defer { device.unlockForConfiguration() }
        let nowhere = try device.setValue(130, forControl: "brightness")
        #expect(!nowhere.isStreaming)
        #expect(await nowhere.firstFrames(timeout: .milliseconds(200)).isEmpty)
        let one = try await Watched(device), two = try await Watched(device)
        let change = try device.setValue(140, forControl: "contrast")
        let stamps = await change.firstFrames()
        #expect(stamps.count == 2)
        await one.stop()
        await two.stop()
    }
}
