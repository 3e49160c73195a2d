import CaptureTestSupport
import Foundation

@testable import Barcodes
@testable import Capture

/// Runs blocking work on a thread of its own and awaits it: long synchronous work (drawing a corpus,
/// decoding a hundred stills) must not hold one of the few threads of the Dispatch pool, which runs
/// Swift's tasks on Linux and which the sessions of the other tests need for their events. The thread
/// runs at the priority of the metadata output's decoder (nice +5): decoding stills in one test does
/// not starve the live decoding of another.
func offPool<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread {
            BarcodeWorker.lowerPriority()
            continuation.resume(with: Result { try work() })
        }.start()
    }
}

/// The barcode corpora of the tests, made once per test run (and reused across runs: the corpus
/// directory is keyed by its definition). Tests that need the same corpus await the same making.
actor BarcodeFixtures {
    static let directory = FileManager.default.temporaryDirectory.appendingPathComponent("capture-barcode-corpus").path
    private static let shared = BarcodeFixtures()
    private var corpora: [String: Task<BarcodeCorpus, any Error>] = [:]

    /// Every type in every standard variant, two frames per scene at 10 fps.
    static func standard() async throws -> BarcodeCorpus {
        try await corpus("standard", BarcodeCorpus.standard(framesPerScene: 2))
    }

    /// Makes (or loads) a corpus once per process.
    static func corpus(
        _ name: String, _ scenes: [BarcodeCorpus.SceneSpec], frameSize: Size = Size(width: 640, height: 480),
        frameRate: Int = 10
    ) async throws -> BarcodeCorpus {
        try await shared.corpus(name, scenes, frameSize: frameSize, frameRate: frameRate)
    }

    private func corpus(_ name: String, _ scenes: [BarcodeCorpus.SceneSpec], frameSize: Size, frameRate: Int) async throws -> BarcodeCorpus {
        if let making = corpora[name] { return try await making.value }
        let directory = Self.directory
        let making = Task {
            try await offPool { try BarcodeCorpus.make(scenes, in: directory, frameSize: frameSize, frameRate: frameRate) }
        }
        corpora[name] = making
        return try await making.value
    }
}

/// How well a read's corners match a drawn code.
struct Enclosure: CustomStringConvertible {
    /// The read's centre lies inside the drawn code.
    let centerInside: Bool
    /// The farthest corner of the read outside the drawn code, in pixels (0: all inside).
    let overshoot: Double
    /// How much of the drawn code's area the read's quadrilateral covers (0...1).
    let coverage: Double

    /// The corners enclose the code: centred on it, not beyond it by more than a few pixels or 6% of
    /// its size, and covering most of it (a linear code's drawn image includes quiet zones).
    var encloses: Bool { centerInside && overshoot <= slack && coverage >= 0.5 }
    let slack: Double

    var description: String {
        String(format: "centre inside %@, overshoot %.1f px (allowed %.1f), coverage %.0f%%", centerInside ? "yes" : "no", overshoot, slack, coverage * 100)
    }

    init(read: [NormalizedPoint], truth: [NormalizedPoint], frame: Size) {
        func pixels(_ points: [NormalizedPoint]) -> [PixelPoint] {
            points.map { PixelPoint(x: $0.x * Double(frame.width), y: $0.y * Double(frame.height)) }
        }
        let r = pixels(read), t = pixels(truth)
        let center = r.reduce(PixelPoint(x: 0, y: 0), +) * (1 / Double(r.count))
        centerInside = BarcodeGeometry.contains(t, center)
        // Signed distance outside each edge of the (convex) drawn quadrilateral.
        let clockwise = Enclosure.area(t) > 0
        var worst = 0.0
        for point in r {
            for index in t.indices {
                let a = t[index], b = t[(index + 1) % t.count]
                let edge = b - a
                let outside = (clockwise ? -1.0 : 1.0) * edge.cross(point - a) / edge.length
                worst = max(worst, outside)
            }
        }
        overshoot = worst
        let size = max((t[1] - t[0]).length, (t[3] - t[0]).length)
        slack = max(4, 0.06 * size)
        coverage = Enclosure.intersectionArea(r, t) / abs(Enclosure.area(t))
    }

    /// Shoelace area (positive when clockwise on screen, y down).
    static func area(_ polygon: [PixelPoint]) -> Double {
        var sum = 0.0
        for index in polygon.indices {
            sum += polygon[index].cross(polygon[(index + 1) % polygon.count])
        }
        return sum / 2
    }

    /// Area of the intersection of two convex polygons (Sutherland-Hodgman clipping).
    static func intersectionArea(_ subject: [PixelPoint], _ clip: [PixelPoint]) -> Double {
        let orientation: Double = area(clip) > 0 ? 1 : -1
        var output = subject
        for index in clip.indices {
            let a = clip[index], b = clip[(index + 1) % clip.count]
            func inside(_ p: PixelPoint) -> Bool { orientation * (b - a).cross(p - a) >= 0 }
            let input = output
            output = []
            guard !input.isEmpty else { break }
            for (k, current) in input.enumerated() {
                let previous = input[(k + input.count - 1) % input.count]
                let d1 = (b - a).cross(previous - a), d2 = (b - a).cross(current - a)
                func crossing() -> PixelPoint { previous + (current - previous) * (d1 / (d1 - d2)) }
                if inside(current) {
                    if !inside(previous) { output.append(crossing()) }
                    output.append(current)
                } else if inside(previous) {
                    output.append(crossing())
                }
            }
        }
        return output.count >= 3 ? abs(area(output)) : 0
    }
}

/// Collects what a metadata output's delegate receives.
final class CodeRecorder: CaptureMetadataOutputObjectsDelegate, @unchecked Sendable {
    // NSLock guards both arrays.
    private let lock = NSLock()
    private var found: [MetadataMachineReadableCodeObject] = []
    private var lost: [MetadataMachineReadableCodeObject] = []
    private var lists: [[MetadataMachineReadableCodeObject]] = []
    var detected: [MetadataMachineReadableCodeObject] { lock.withLock { found } }
    var gone: [MetadataMachineReadableCodeObject] { lock.withLock { lost } }
    /// Each `didOutput` call's list, in order.
    var calls: [[MetadataMachineReadableCodeObject]] { lock.withLock { lists } }
    func metadataOutput(_ output: CaptureMetadataOutput, didOutput objects: [MetadataMachineReadableCodeObject]) {
        lock.withLock {
            found += objects
            lists.append(objects)
        }
    }
    func metadataOutput(_ output: CaptureMetadataOutput, didLose objects: [MetadataMachineReadableCodeObject]) {
        lock.withLock { lost += objects }
    }
}

/// What a replay of a video through a metadata output produced.
struct ScanRun {
    /// The session's events, in order.
    var events: [SessionEvent]
    /// The codes as the delegate got them (new ones, and the ones that left).
    var delegateCodes: [MetadataMachineReadableCodeObject]
    var lostCodes: [MetadataMachineReadableCodeObject]
    /// Each delegate call's list (with `.everyFrame`: one a frame).
    var delegateCalls: [[MetadataMachineReadableCodeObject]]
    /// The codes as the AsyncSequence gave them.
    var streamCodes: [MetadataMachineReadableCodeObject]
    var output: CaptureMetadataOutput

    var detectedEvents: [SessionEvent] { events.filter { $0.name == "code-detected" } }
}

/// Replays a video through `file:` into a metadata output until the file ends (the output is
/// configured by `configure`). `timeout` bounds a hang: every frame is decoded, so a busy machine plays the clip slower.
func scan(_ video: String, timeout: Duration = .seconds(300), configure: (CaptureMetadataOutput) throws -> Void = { _ in }) async throws -> ScanRun {
    let session = CaptureSession(name: "scan-test")
    try session.addInput(CaptureDeviceInput(deviceID: "file:\(video)", name: "clip"))
    let output = CaptureMetadataOutput(name: "codes")
    // Every frame of the clip is decoded, however busy the machine: what is read does not depend on
    // the load (with the default, a busy machine skipped frames, and once every scene of a type).
    output.discardsLateFrames = false
    try configure(output)
    let recorder = CodeRecorder()
    output.setMetadataObjectsDelegate(recorder)
    try session.addOutput(output)
    let events = session.events()
    let stream = output.metadataObjects()
    let streamed = Locked<[MetadataMachineReadableCodeObject]>([])
    let reader = Task {
        for await code in stream { streamed.withLock { $0.append(code) } }
    }
    try await session.startRunning()
    let seen = await collectEvents(events, until: { $0.name == "session-stopped" }, timeout: timeout)
    await session.stopRunning()
    // The delegate queue and the stream run behind the events: one delegate call and one streamed
    // object for each code-detected event (bounded: a test that finds otherwise says so).
    let detected = seen.filter { $0.name == "code-detected" }.count
    let frames = seen.filter { $0.name == "codes-in-frame" }.count
    _ = await waitUntil(timeout: .seconds(10)) {
        (output.delivery == .everyFrame ? recorder.calls.count >= frames : recorder.detected.count >= detected)
            && streamed.withLock { $0.count } >= detected
    }
    reader.cancel()
    return ScanRun(
        events: seen, delegateCodes: recorder.detected, lostCodes: recorder.gone, delegateCalls: recorder.calls,
        streamCodes: streamed.withLock { $0 }, output: output)
}
