import Foundation
import Testing
@testable import Capture
import GStreamer

/// Collects frames' arrival for gap measurements.
final class FrameCounter: CaptureVideoDataOutputDelegate, @unchecked Sendable {
    private let lock = NSLock()
    private var arrivals: [ContinuousClock.Instant] = []
    func videoDataOutput(_ output: CaptureVideoDataOutput, didOutput frame: VideoFrame) {
        lock.withLock { arrivals.append(.now) }
    }
    var count: Int { lock.withLock { arrivals.count } }
    var largestGap: Duration {
        lock.withLock {
            zip(arrivals, arrivals.dropFirst()).map { $1 - $0 }.max() ?? .zero
        }
    }
}

func makeSession(preset: SessionPreset = .vga640x480, pattern: String? = nil) throws -> (CaptureSession, CaptureDeviceInput) {
    let session = CaptureSession()
    try session.setSessionPreset(preset)
    let input = try CaptureDeviceInput(device: .testPattern, name: "camera", options: InputOptions(pattern: pattern))
    try session.addInput(input)
    try session.setSessionPreset(preset)
    return (session, input)
}

func firstFrame(_ output: CaptureVideoDataOutput, timeout: Duration = .seconds(5)) async -> VideoFrame? {
    let stream = output.frames()
    return await withTaskGroup(of: VideoFrame?.self) { group in
        group.addTask { for await frame in stream { return frame }; return nil }
        group.addTask { try? await Task.sleep(for: timeout); return nil }
        let first = await group.next() ?? nil
        group.cancelAll()
        return first
    }
}

@Suite(.serialized) struct SessionTests {
    @Test func twoOutputsRun() async throws {
        let (session, _) = try makeSession()
        let frames = CaptureVideoDataOutput(name: "frames")
        frames.pixelFormat = "RGBx"
        try session.addOutput(frames)
        try session.addOutput(CaptureVideoPreviewOutput(name: "preview", sink: .none))
        try await session.startRunning()
        #expect(session.isRunning)
        let frame = try #require(await firstFrame(frames))
        #expect(frame.width == 640 && frame.height == 480)
        #expect(frame.pixelFormat == "RGBx")
        // The SMPTE pattern's first bar (left) is white-ish grey (192,192,192).
        let pixel = Array(frame.pixel(x: 10, y: 10))
        #expect(pixel[0] > 150 && pixel[1] > 150 && pixel[2] > 150)
        await session.stopRunning()
        #expect(!session.isRunning)
    }
}
