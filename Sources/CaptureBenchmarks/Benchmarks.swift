import Capture
import CaptureTestSupport
import Foundation
import GStreamer

/// One measured figure, with the peer it is compared with (measured in the same run).
public struct BenchmarkResult: Codable, Sendable {
    public var name: String
    public var value: Double
    public var unit: String
    public var peer: String?
    public var peerValue: Double?
    public var note: String?

    /// value / peerValue (lower is better for times).
    public var ratio: Double? {
        guard let peerValue, peerValue > 0 else { return nil }
        return value / peerValue
    }

    public init(name: String, value: Double, unit: String, peer: String? = nil, peerValue: Double? = nil, note: String? = nil) {
        self.name = name
        self.value = value
        self.unit = unit
        self.peer = peer
        self.peerValue = peerValue
        self.note = note
    }
}

/// Counts frame arrivals and remembers the largest gap between two of them.
final class GapMeter: CaptureVideoDataOutputDelegate, @unchecked Sendable {
    private struct Arrivals {
        var last: ContinuousClock.Instant?
        var largest: Duration = .zero
        var first: ContinuousClock.Instant?
        var frames = 0
    }
    private let arrivals = Locked(Arrivals())

    func videoDataOutput(_ output: CaptureVideoDataOutput, didOutput frame: VideoFrame) {
        let now = ContinuousClock.now
        arrivals.withLock { arrivals in
            if let last = arrivals.last { arrivals.largest = max(arrivals.largest, now - last) }
            if arrivals.first == nil { arrivals.first = now }
            arrivals.last = now
            arrivals.frames += 1
        }
    }

    func reset() { arrivals.value = Arrivals() }
    var largestGap: Duration { arrivals.value.largest }
    var firstArrival: ContinuousClock.Instant? { arrivals.value.first }
    var lastArrival: ContinuousClock.Instant? { arrivals.value.last }
    var count: Int { arrivals.value.frames }
}

/// The benchmarks of `capture bench`. Each compares the project with a peer in the same run.
public enum Benchmarks {
    public static let names = ["startup", "live-edit-gap", "cpu", "overlay", "photo", "movie", "barcode", "mode-switch", "editing", "streaming", "preview"]

    /// `input` is the camera of the startup, live-edit-gap and mode-switch benchmarks (a real device
    /// shows what a rebuild costs when the driver has to stop and start streaming); the others use the
    /// test pattern. `cycles` is how many photo -> video -> photo cycles mode-switch runs on each side;
    /// `plotDataPath`, when set, is where it writes one cycle's frame intervals of each side (JSON).
    public static func run(
        only: Set<String> = [], seconds: Double = 5, movieSeconds: Double = 60, input: CaptureDevice = .testPattern,
        cycles: Int = 3, plotDataPath: String? = nil, streams: Int = 8, streamSeconds: Double = 60, streamPattern: String = "smpte",
        log: @Sendable (String) -> Void = { _ in }
    ) async throws -> [BenchmarkResult] {
        var results: [BenchmarkResult] = []
        if only.isEmpty || only.contains("startup") {
            log("startup to first frame (\(input.uniqueID)) ...")
            results.append(try await startupToFirstFrame(input: input))
        }
        if only.isEmpty || only.contains("live-edit-gap") {
            log("frame gap while another output is added and removed (\(input.uniqueID)) ...")
            results.append(contentsOf: try await liveEditGap(input: input))
        }
        if only.isEmpty || only.contains("cpu") {
            log("CPU time of a session against gst-launch-1.0 (\(seconds) s each) ...")
            results.append(try await cpuTime(seconds: seconds, log: log))
        }
        if only.isEmpty || only.contains("overlay") {
            results.append(contentsOf: try await overlayCost(seconds: seconds, log: log))
        }
        if only.isEmpty || only.contains("movie") {
            log("720p30 H.264 + AAC recording for \(Int(movieSeconds)) s ...")
            results.append(contentsOf: try await movie(seconds: movieSeconds))
        }
        if only.isEmpty || only.contains("photo") {
            log("photo shot-to-save and shot-to-shot against camerabin ...")
            results.append(contentsOf: try await photo())
        }
        if only.isEmpty || only.contains("barcode") {
            results.append(contentsOf: try await barcode(log: log))
        }
        if only.isEmpty || only.contains("mode-switch") {
            results.append(contentsOf: try await modeSwitch(input: input, cycles: min(max(cycles, 1), 10), plotDataPath: plotDataPath, log: log))
        }
        if only.isEmpty || only.contains("editing") {
            results.append(contentsOf: try await editing(log: log))
        }
        if only.isEmpty || only.contains("streaming") {
            results.append(contentsOf: try await streaming(sessions: streams, seconds: streamSeconds, pattern: streamPattern, log: log))
            results.append(contentsOf: try await sharedEncoder(seconds: min(streamSeconds, 10), pattern: streamPattern, log: log))
        }
        if only.isEmpty || only.contains("preview") {
            results.append(contentsOf: try await previewWindow(seconds: max(seconds, 5), log: log))
        }
        return results
    }

    static func session(preset: SessionPreset, meter: GapMeter, input: CaptureDevice = .testPattern) throws -> CaptureSession {
        let session = CaptureSession(name: "bench")
        try session.addInput(CaptureDeviceInput(device: input, name: "camera"))
        try session.setSessionPreset(preset)
        let frames = CaptureVideoDataOutput(name: "frames")
        frames.delegate = meter
        try session.addOutput(frames)
        try session.addOutput(CaptureVideoPreviewOutput(name: "preview", sink: .none))
        return session
    }

    /// From `startRunning()` to the first frame delivered to Swift, median of 5 runs; the peer is a
    /// stop + start of the same session (what an app does without live reconfiguration).
    static func startupToFirstFrame(input: CaptureDevice) async throws -> BenchmarkResult {
        var times: [Double] = []
        for _ in 0..<5 {
            let meter = GapMeter()
            let session = try session(preset: input == .testPattern ? .hd1280x720 : .vga640x480, meter: meter, input: input)
            let start = ContinuousClock.now
            try await session.startRunning()
            times.append((try await firstArrival(meter) - start).milliseconds)
            await session.stopRunning()
        }
        let what = input == .testPattern ? "720p test pattern" : "\(input.uniqueID) at VGA"
        return BenchmarkResult(
            name: "startup to first frame (\(what), frames + preview)", value: median(times), unit: "ms",
            note: "median of 5")
    }

    /// The largest gap between frames on a running output while a second output is added and removed
    /// 20 times, against the gap a stop + start of the whole session leaves (the rebuild that live
    /// reconfiguration replaces).
    static func liveEditGap(input: CaptureDevice) async throws -> [BenchmarkResult] {
        let meter = GapMeter()
        let session = try session(preset: .vga640x480, meter: meter, input: input)
        try await session.startRunning()
        try await Task.sleep(for: .milliseconds(500))
        meter.reset()
        for _ in 0..<20 {
            let extra = CaptureVideoDataOutput(name: "extra")
            session.beginConfiguration()
            try session.addOutput(extra)
            try await session.commitConfiguration()
            try await Task.sleep(for: .milliseconds(100))
            session.beginConfiguration()
            try session.removeOutput(extra)
            try await session.commitConfiguration()
            try await Task.sleep(for: .milliseconds(100))
        }
        let liveGap = meter.largestGap.milliseconds
        // The device's own frame interval, measured over the same run.
        let normal =
            if meter.count > 1, let first = meter.firstArrival, let last = meter.lastArrival {
                (last - first).milliseconds / Double(meter.count - 1)
            } else { 0.0 }
        // The peer: stop and start again, timing from the last frame before to the first frame after.
        var rebuildGaps: [Double] = []
        for _ in 0..<5 {
            let before = meter.lastArrival ?? .now
            await session.stopRunning()
            meter.reset()
            try await session.startRunning()
            rebuildGaps.append((try await firstArrival(meter) - before).milliseconds)
            try await Task.sleep(for: .milliseconds(200))
        }
        await session.stopRunning()
        return [
            BenchmarkResult(
                name: "largest frame gap while an output is added/removed 20x (\(input.uniqueID), mean frame interval \(String(format: "%.1f", normal)) ms)",
                value: liveGap, unit: "ms", peer: "stopRunning + startRunning of the same session",
                peerValue: median(rebuildGaps),
                note: input.kind == .testPattern
                    ? "peer is the median of 5 rebuilds; the test pattern restarts at once, so this peer costs little here: see mode-switch, and run with -i /dev/videoN for a real camera's restart"
                    : "peer is the median of 5 rebuilds")
        ]
    }

    /// CPU seconds per second of a running session against gst-launch-1.0 running the same pipeline
    /// (printed by the compiler), one after the other on the same machine. Each is measured in its
    /// steady state: from one second after it started, for `seconds`.
    static func cpuTime(seconds: Double, log: @Sendable (String) -> Void) async throws -> BenchmarkResult {
        let meter = GapMeter()
        let session = try session(preset: .hd1280x720, meter: meter)
        let graph = try session.compile()
        try await session.startRunning()
        try await Task.sleep(for: .seconds(1))
        let before = cpuSeconds(RUSAGE_SELF)
        let frames = meter.count
        let wallStart = ContinuousClock.now
        try await Task.sleep(for: .seconds(seconds))
        let ours = (cpuSeconds(RUSAGE_SELF) - before) / (ContinuousClock.now - wallStart).seconds
        let delivered = meter.count - frames
        await session.stopRunning()

        let child = try ChildProcess(["/bin/sh", "-c", "exec " + graph.gstLaunchCommand], discardOutput: true)
        try await Task.sleep(for: .seconds(1))
        let peerBefore = child.cpuSecondsSoFar ?? 0
        let peerStart = ContinuousClock.now
        try await Task.sleep(for: .seconds(seconds))
        let peerCPU = (child.cpuSecondsSoFar ?? peerBefore) - peerBefore
        let peerWall = (ContinuousClock.now - peerStart).seconds
        child.signal(SIGINT)
        _ = await child.ended()
        return BenchmarkResult(
            name: "CPU use of a 720p30 session (frames + preview)", value: ours * 100, unit: "% of one core",
            peer: "gst-launch-1.0 with the compiled pipeline", peerValue: peerCPU / peerWall * 100,
            note: "steady state over \(Int(seconds)) s, \(delivered) frames delivered to Swift")
    }

    /// When the meter's first frame arrived, waited for at most `timeout`.
    static func firstArrival(_ meter: GapMeter, timeout: Duration = .seconds(10)) async throws -> ContinuousClock.Instant {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let first = meter.firstArrival { return first }
            try await Task.sleep(for: .milliseconds(1))
        }
        throw BenchmarkError("no frame arrived within \(timeout)")
    }

    static func cpuSeconds(_ who: __rusage_who) -> Double {
        var usage = rusage()
        getrusage(__rusage_who_t(who.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        guard !sorted.isEmpty else { return 0 }
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }
}

extension Duration {
    var milliseconds: Double { seconds * 1000 }
}
