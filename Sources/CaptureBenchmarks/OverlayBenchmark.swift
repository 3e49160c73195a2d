import Capture
import CaptureTestSupport
import Foundation
import GStreamer

extension Benchmarks {
    /// What a text + PNG overlay on the preview costs at 720p30: CPU time per frame of the session with
    /// the overlays minus the same session without, against what GStreamer's own overlay elements
    /// (`textoverlay` + `gdkpixbufoverlay`, what a user would otherwise reach for) cost in gst-launch-1.0
    /// running the same compiled pipeline. The four runs alternate in one process, `seconds` each.
    static func overlayCost(seconds: Double, log: @Sendable (String) -> Void) async throws -> [BenchmarkResult] {
        // A folder of its own (creating it fails if it exists), removed with what it made in it.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("capture-bench-overlay-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: false)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let logo = directory + "/logo.png"
        let made = try ChildProcess(["convert", "-size", "160x80", "xc:rgba(200,30,30,0.8)", "PNG32:" + logo]).finish()
        guard made.status == 0 else { throw BenchmarkError("ImageMagick could not make the logo: \(made.error)") }
        let text = "Flash Auto  Rear Camera"

        func session(overlays: Bool) throws -> (CaptureSession, GapMeter) {
            let meter = GapMeter()
            let session = try Self.session(preset: .hd1280x720, meter: meter)
            if overlays, let preview = session.output(named: "preview") {
                try preview.addOverlay(CaptureOverlay(name: "text", content: .text(text, style: .init(size: 0.05)), position: .topLeft))
                try preview.addOverlay(CaptureOverlay(name: "logo", content: .image(path: logo), position: .topRight))
            }
            return (session, meter)
        }

        /// CPU seconds per frame of a session in its steady state.
        func ours(overlays: Bool) async throws -> (perFrame: Double, frames: Int) {
            let (session, meter) = try session(overlays: overlays)
            try await session.startRunning()
            try await Task.sleep(for: .seconds(1))
            let before = cpuSeconds(RUSAGE_SELF), frames = meter.count
            try await Task.sleep(for: .seconds(seconds))
            let cpu = cpuSeconds(RUSAGE_SELF) - before, delivered = meter.count - frames
            await session.stopRunning()
            return (cpu / Double(max(delivered, 1)), delivered)
        }

        /// CPU seconds per frame of gst-launch-1.0 running the compiled pipeline, the preview's overlay
        /// element replaced by GStreamer's overlay elements (or passed through).
        func peer(overlays: Bool) async throws -> Double {
            let (session, _) = try session(overlays: false)
            var launch = try session.compile().gstLaunchCommand
            if overlays {
                let elements =
                    "textoverlay text=\"\(text)\" font-desc=\"Sans 26\" shaded-background=true valignment=top halignment=left"
                    + " ! gdkpixbufoverlay location=\(logo) offset-x=-180 offset-y=20"
                launch = launch.replacingOccurrences(of: "overlaycomposition name=preview_overlay", with: elements)
            }
            let child = try ChildProcess(["/bin/sh", "-c", "exec " + launch], discardOutput: true)
            try await Task.sleep(for: .seconds(1))
            let before = child.cpuSecondsSoFar ?? 0
            let start = ContinuousClock.now
            try await Task.sleep(for: .seconds(seconds))
            let cpu = (child.cpuSecondsSoFar ?? before) - before, wall = (ContinuousClock.now - start).seconds
            child.signal(SIGINT)
            _ = await child.ended()
            // The pipeline runs at 30 fps on the test pattern's clock.
            return cpu / (wall * 30)
        }

        log("overlay cost: the session without, with, then gst-launch-1.0 without, with (\(seconds) s each) ...")
        let plain = try await ours(overlays: false)
        let drawn = try await ours(overlays: true)
        let peerPlain = try await peer(overlays: false)
        let peerDrawn = try await peer(overlays: true)
        let ourCost = (drawn.perFrame - plain.perFrame) * 1000, peerCost = (peerDrawn - peerPlain) * 1000
        return [
            BenchmarkResult(
                name: "text + PNG overlay on a 720p30 preview: CPU per frame", value: ourCost, unit: "ms",
                peer: "textoverlay + gdkpixbufoverlay in gst-launch-1.0", peerValue: peerCost,
                note:
                    "difference with the same pipeline without overlays; ours \(String(format: "%.3f", plain.perFrame * 1000)) -> \(String(format: "%.3f", drawn.perFrame * 1000)) ms per frame (\(plain.frames), \(drawn.frames) frames), gst-launch \(String(format: "%.3f", peerPlain * 1000)) -> \(String(format: "%.3f", peerDrawn * 1000)) ms"
            )
        ]
    }
}
