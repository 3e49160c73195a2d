import CaptureTestSupport
import Foundation
import Testing

@testable import Capture

/// Frames a branch loses are reported, never silent: a preview whose sink cannot keep up loses frames
/// at its leaky head queue, one `frame-dropped` (late) each; a preview that keeps up reports none.
@Suite struct DropReportingTests {
    /// 45 frames of a 30 fps live source into one preview branch whose consumer takes `perFrame`
    /// microseconds: what was reported once the last frame reached the sink (the end of stream).
    func drops(perFrame microseconds: Int) async throws -> (late: Int, other: Int) {
        let seen = Locked<[FrameDropReason]>([])
        let ended = Locked(false)
        let engine = try PipelineExecutor(
            name: "drops",
            post: { kind in
                if case .frameDropped(let output, let reason) = kind, output == "view" { seen.withLock { $0.append(reason) } }
            },
            incident: { incident in
                if case .endOfStream = incident { ended.value = true }
            })
        let source = SourceSegment(
            input: "camera", media: .video, device: "test-pattern",
            elements: [
                ElementSpec("videotestsrc", name: "camera_source", [("is-live", "true"), ("num-buffers", "45")]),
                .capsFilter(name: "camera_caps", caps: "video/x-raw,width=160,height=120,framerate=30/1"),
            ])
        let branch = BranchSegment(
            output: "view", kind: "preview",
            chains: [
                Chain(
                    input: "camera",
                    elements: [
                        ElementSpec(
                            "queue", name: "view_queue", [("max-size-buffers", "2"), ("max-size-bytes", "0"), ("max-size-time", "0"), ("leaky", "downstream")]),
                        ElementSpec("identity", name: "view_consumer", [("sleep-time", "\(microseconds)")]),
                        ElementSpec("fakesink", name: "view_sink", [("sync", "false"), ("async", "false")]),
                    ])
            ], reportsLateFrames: true)
        let output = CaptureVideoPreviewOutput(name: "view", sink: .none)
        try await engine.start(CompiledGraph(sources: [source], branches: [branch]), outputs: ["view": output])
        // A drop is reported on the streaming thread as the queue drops it, before the end of stream
        // that follows the last frame reaches the sink.
        #expect(await waitUntil { ended.value }, "the 45 frames reached the sink")
        await engine.stop()
        let reasons = seen.withLock { $0 }
        return (reasons.filter { $0 == .lateData }.count, reasons.filter { $0 != .lateData }.count)
    }

    @Test func aSlowPreviewReportsEachFrameItLoses() async throws {
        // 100 ms per frame against 33 ms between frames: about two frames of three are lost.
        let slow = try await drops(perFrame: 100_000)
        #expect(slow.late >= 5, "\(slow)")
        #expect(slow.other == 0)
    }

    @Test func aPreviewThatKeepsUpReportsNothing() async throws {
        let fast = try await drops(perFrame: 0)
        // None on a quiet machine; one busy elsewhere can starve even an idle consumer for a frame or
        // two, and those are real losses, reported as such (the slow preview above loses two in three).
        #expect(fast.late <= 2 && fast.other == 0, "\(fast)")
    }
}
