import Capture
import CaptureTestSupport
import Foundation
import GStreamer

/// Collects what a metadata output reports, with the wall-clock time of each report.
final class CodeLog: CaptureMetadataOutputObjectsDelegate, @unchecked Sendable {
    private let codes = Locked<[(MetadataMachineReadableCodeObject, ContinuousClock.Instant)]>([])
    func metadataOutput(_ output: CaptureMetadataOutput, didOutput objects: [MetadataMachineReadableCodeObject]) {
        let now = ContinuousClock.now
        codes.withLock { $0 += objects.map { ($0, now) } }
    }
    var all: [(code: MetadataMachineReadableCodeObject, at: ContinuousClock.Instant)] { codes.value }
}

/// One read by a scanner under test: what it says it read, in which frame.
struct Sighting {
    var type: MetadataObjectType?
    var value: String
    var frame: Int
    /// For the metadata output: milliseconds from the presentation of the frame read to the delegate call.
    var delay: Double?
}

/// How a scanner did on the corpus, type by type.
struct ScanScore {
    var name: String
    /// Scenes of each type where the code was read with its value.
    var found: [MetadataObjectType: Int] = [:]
    var scenes: [MetadataObjectType: Int] = [:]
    /// Frames from a code's first frame to the frame it was first read in.
    var latencies: [MetadataObjectType: [Int]] = [:]
    /// Milliseconds from a code's first frame on screen to its report (the metadata output only).
    var delays: [Double] = []
    /// Distinct wrong reads: (scene, type, value) that match no code in view.
    var falseReads: [String] = []
    /// Set when the scanner could not run (its element is missing, or it crashed).
    var failure: String?

    func recall(_ type: MetadataObjectType) -> Double {
        guard let total = scenes[type], total > 0 else { return 0 }
        return Double(found[type] ?? 0) / Double(total)
    }

    var allLatencies: [Int] { latencies.values.flatMap { $0 } }
}

extension Benchmarks {
    /// Recall per type, false reads and detection latency of `CaptureMetadataOutput` on the barcode
    /// corpus (every type, 9 variants: sizes, turns, blur, perspective, inverted, glare; a scene of
    /// four codes; H.264 at 30 fps, 5 frames a
    /// scene, so that scenes start on odd and even frames), against GStreamer's `zbar` and `zxing` elements on the same video in the same run.
    ///
    /// The output runs as in an app: live, paced by the clock (`file:`), default settings (both
    /// decoders, at most 15 frames a second decoded, late frames dropped). The elements see every
    /// frame, as fast as they can (`sync=false`), which is their best case.
    static func barcode(log: @Sendable (String) -> Void) async throws -> [BenchmarkResult] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("capture-barcode-corpus").path
        log("barcode corpus (zint, qrencode, ImageMagick; cached in \(directory)) ...")
        let scenes = BarcodeCorpus.standard(
            framesPerScene: 5, variants: BarcodeCorpus.standardVariants + BarcodeCorpus.hardVariants, several: true)
        let corpus = try BarcodeCorpus.make(scenes, in: directory, frameRate: 30)
        log("scanning \(corpus.frameCount) frames (\(corpus.frameCount / corpus.frameRate) s) with CaptureMetadataOutput ...")
        let (oursSightings, output) = try await scanWithOutput(corpus)
        let ours = score("CaptureMetadataOutput", oursSightings, corpus)
        log("the same video through the zbar and zxing elements ...")
        let zbar = peerScore("zbar element", ["zbar"], corpus)
        let zxing = peerScore("zxing element (try-rotate)", ["zxing", "try-rotate=true"], corpus)

        var results: [BenchmarkResult] = []
        var recallMet = true
        for type in MetadataObjectType.allCases {
            let peers = [zbar, zxing].filter { $0.failure == nil }
            let best = peers.max { $0.recall(type) < $1.recall(type) }
            let total = ours.scenes[type] ?? 0
            func count(_ score: ScanScore) -> String { score.failure == nil ? "\(score.found[type] ?? 0)/\(total)" : "n/a" }
            if let best, ours.recall(type) < best.recall(type) { recallMet = false }
            let latency = (ours.latencies[type] ?? []).max().map { "max latency \($0) frames" } ?? "not read"
            results.append(
                BenchmarkResult(
                    name: "recall \(type.rawValue)", value: ours.recall(type) * 100, unit: "%",
                    peer: best.map { "best element (\($0.name))" }, peerValue: best.map { $0.recall(type) * 100 },
                    note: "ours \(count(ours)), zbar element \(count(zbar)), zxing element \(count(zxing)); \(latency)"))
        }
        func falseNote(_ score: ScanScore) -> String {
            score.failure ?? (score.falseReads.isEmpty ? "none" : score.falseReads.prefix(3).joined(separator: "; "))
        }
        results.append(
            BenchmarkResult(
                name: "false reads (distinct wrong type/value per scene)", value: Double(ours.falseReads.count), unit: "reads",
                peer: "zbar element", peerValue: Double(zbar.falseReads.count),
                note: "zxing element: \(zxing.falseReads.count); ours: \(falseNote(ours)); zbar: \(falseNote(zbar)); zxing: \(falseNote(zxing))"))
        let ourLatencies = ours.allLatencies.map(Double.init)
        let peerLatencies = (zbar.allLatencies + zxing.allLatencies).map(Double.init)
        results.append(
            BenchmarkResult(
                name: "detection latency, frames from a code's first frame to the frame read (median)", value: median(ourLatencies), unit: "frames",
                peer: "zbar and zxing elements (every frame decoded)", peerValue: median(peerLatencies),
                note:
                    "ours: max \(Int(ourLatencies.max() ?? 0)), mean \(String(format: "%.2f", ourLatencies.reduce(0, +) / Double(max(ourLatencies.count, 1)))); at \(corpus.frameRate) fps"
            ))
        let frameInterval = 1000 / Double(corpus.frameRate)
        results.append(
            BenchmarkResult(
                name: "detection delay, a code's first frame on screen to the delegate call (median)", value: median(ours.delays), unit: "ms",
                note: String(
                    format: "max %.0f ms = %.1f frames at %d fps; includes waiting for a frame the rate limit lets through and decoding it",
                    ours.delays.max() ?? 0, (ours.delays.max() ?? 0) / frameInterval, corpus.frameRate)))
        let latencyMet = (ourLatencies.max() ?? 0) <= 2
        results.append(
            BenchmarkResult(
                name: "frames decoded by the metadata output", value: Double(output.decoded), unit: "frames",
                note: "\(output.dropped) dropped as late, of \(output.received) that reached it (rate limit \(output.rateLimit) fps)"))
        results.append(contentsOf: try decodeTimes(corpus))
        for size in [Size(width: 1280, height: 720), Size(width: 1920, height: 1080)] {
            log("throughput at \(size): ours on the stills, the elements on the video ...")
            results.append(contentsOf: try throughput(at: size, in: directory))
        }
        log("a live 1080p30 stream through the metadata output ...")
        results.append(contentsOf: try await live(at: Size(width: 1920, height: 1080), in: directory))
        log("what each decoder reads that the other misses ...")
        results.append(contentsOf: try complement(corpus))
        let verdict = [
            recallMet ? "recall >= best element on every type" : "recall below the best element on some type",
            ours.falseReads.isEmpty ? "zero false reads" : "\(ours.falseReads.count) false reads",
            latencyMet ? "latency <= 2 frames" : "latency above 2 frames",
        ]
        results.append(
            BenchmarkResult(
                name: "barcode targets met", value: Double([recallMet, ours.falseReads.isEmpty, latencyMet].filter { $0 }.count),
                unit: "of 3", note: verdict.joined(separator: ", ")))
        return results
    }

    /// Milliseconds to read one frame of the corpus (the scenes' stills), with each backend.
    static func decodeTimes(_ corpus: BarcodeCorpus) throws -> [BenchmarkResult] {
        let images = try corpus.scenes.map { try GrayImage(contentsOfPGM: $0.imagePath) }
        var medians: [CaptureMetadataOutput.Backend: (median: Double, max: Double)] = [:]
        for backend in CaptureMetadataOutput.Backend.allCases {
            let reader = try BarcodeReader(backend: backend)
            var times: [Double] = []
            for image in images {
                let start = ContinuousClock.now
                _ = reader.read(image)
                times.append((ContinuousClock.now - start).milliseconds)
            }
            medians[backend] = (median(times), times.max() ?? 0)
        }
        // The loop above measured each of the three backends.
        let auto = medians[.auto]!, zbar = medians[.zbar]!, zxing = medians[.zxing]!
        return [
            BenchmarkResult(
                name: "decode time per \(corpus.frameSize) frame, both decoders (median of \(images.count) scenes)", value: auto.median, unit: "ms",
                note: String(
                    format: "max %.1f ms; zbar alone %.1f ms (max %.1f), zxing-cpp alone %.1f ms (max %.1f); frame interval %.1f ms",
                    auto.max, zbar.median, zbar.max, zxing.median, zxing.max, 1000 / Double(corpus.frameRate)))
        ]
    }

    /// Frames decoded per CPU-second at `size` (one core's worth), ours against the zbar and zxing
    /// elements, on the same scenes: every type small and tilted, and the distractors, 30 fps.
    /// Ours reads the scenes' stills with `BarcodeReader` as the metadata output's worker reads a
    /// stream's frames, and as stills, and with zbar alone, its CPU time taken from the process; the elements read the
    /// H.264 video in gst-launch-1.0, whose CPU time without the element (decoding, conversion) is
    /// measured alone and taken off, so that both sides count decoding codes only.
    static func throughput(at size: Size, in directory: String) throws -> [BenchmarkResult] {
        let scenes = throughputScenes
        let corpus = try BarcodeCorpus.make(scenes, in: directory, frameSize: size, frameRate: 30)
        let images = try corpus.scenes.map { try GrayImage(contentsOfPGM: $0.imagePath) }
        /// `stream`: each frame read as the metadata output reads a stream's frames (the quick look and
        /// one costlier pass in turn); else as a still (every pass).
        func ours(_ backend: CaptureMetadataOutput.Backend, stream: Bool = false) throws -> (perCPUSecond: Double, perSecond: Double, recall: Double) {
            let reader = try BarcodeReader(backend: backend)
            var found = 0, total = 0, number = 0
            let cpu = processCPUSeconds(), wall = ContinuousClock.now
            // Each still as often as the video shows it: the same frames the elements see.
            for (scene, image) in zip(corpus.scenes, images) {
                var seen: [MetadataMachineReadableCodeObject] = []
                for _ in 0..<scene.frameCount {
                    seen += reader.read(
                        cropped: image, origin: (0, 0), frame: (image.width, image.height), timestamp: 0, frameNumber: stream ? number : nil)
                    number += 1
                }
                total += scene.codes.count
                found += scene.codes.filter { code in seen.contains { Self.reads(Sighting(type: $0.type, value: $0.stringValue, frame: 0), code) } }.count
            }
            let cpuSeconds = processCPUSeconds() - cpu, seconds = (ContinuousClock.now - wall).seconds
            return (Double(corpus.frameCount) / cpuSeconds, Double(corpus.frameCount) / seconds, Double(found) / Double(max(total, 1)))
        }
        let both = try ours(.auto, stream: true), still = try ours(.auto), zbarAlone = try ours(.zbar)
        let baseline = gstCPUSeconds([], corpus)
        func peer(_ element: [String]) -> (perCPUSecond: Double?, recall: Double?, note: String) {
            guard let baseline, let cpu = gstCPUSeconds(element, corpus) else { return (nil, nil, "did not run") }
            let score = peerScore(element[0], element, corpus)
            let recall = Double(score.found.values.reduce(0, +)) / Double(max(score.scenes.values.reduce(0, +), 1))
            return (Double(corpus.frameCount) / max(cpu - baseline, 0.001), recall, String(format: "%.2f CPU-s with, %.2f without", cpu, baseline))
        }
        let zbar = peer(["zbar"]), zxing = peer(["zxing", "try-rotate=true"])
        func fps(_ value: Double?) -> String { value.map { String(format: "%.0f", $0) } ?? "n/a" }
        func percent(_ value: Double?) -> String { value.map { String(format: "%.0f %%", $0 * 100) } ?? "n/a" }
        let best = [zbar.perCPUSecond, zxing.perCPUSecond].compactMap { $0 }.max()
        return [
            BenchmarkResult(
                name: "frames decoded per CPU-second at \(size.width)x\(size.height), as a stream's frames", value: both.perCPUSecond, unit: "fps",
                peer: "faster element", peerValue: best,
                note:
                    "as stills (every pass) \(fps(still.perCPUSecond)) fps, zbar alone \(fps(zbarAlone.perCPUSecond)) fps; zbar element \(fps(zbar.perCPUSecond)), zxing element \(fps(zxing.perCPUSecond)) (\(zbar.note); \(zxing.note)); \(corpus.frameCount) frames, wall \(fps(both.perSecond)) fps on both cores"
            ),
            BenchmarkResult(
                name: "recall at \(size.width)x\(size.height) as a stream's frames (small and tilted codes of every type)", value: both.recall * 100,
                unit: "%",
                peer: "zxing element", peerValue: zxing.recall.map { $0 * 100 },
                note:
                    "as stills \(percent(still.recall)), zbar alone \(percent(zbarAlone.recall)), zbar element \(percent(zbar.recall)); ours on the stills, the elements on the H.264 video"
            ),
        ]
    }

    /// The scenes of the throughput and live runs: every type small and tilted, and the distractors.
    static let throughputScenes = BarcodeCorpus.standard(framesPerScene: 5, variants: ["small", "tilted"])

    /// The metadata output as an app runs it, default settings, on a `file:` stream of `size` at 30 fps
    /// played in real time: frames decoded a second, dropped as late (the worker never queues), the
    /// process's CPU (H.264 decoding of the stream included) and the delay from a code's first frame
    /// to its report.
    static func live(at size: Size, in directory: String) async throws -> [BenchmarkResult] {
        let corpus = try BarcodeCorpus.make(throughputScenes, in: directory, frameSize: size, frameRate: 30)
        let cpu = processCPUSeconds(), wall = ContinuousClock.now
        let (sightings, output) = try await scanWithOutput(corpus)
        let cpuSeconds = processCPUSeconds() - cpu, seconds = (ContinuousClock.now - wall).seconds
        let score = score("CaptureMetadataOutput", sightings, corpus)
        let found = score.found.values.reduce(0, +), total = score.scenes.values.reduce(0, +)
        let clip = Double(corpus.frameCount) / Double(corpus.frameRate)
        return [
            BenchmarkResult(
                name: "live \(size.width)x\(size.height) at 30 fps: frames decoded a second", value: Double(output.decoded) / clip, unit: "fps",
                note: String(
                    format:
                        "%d decoded, %d dropped as late of %d (rate limit %d fps); process CPU %.0f %% of one core over %.1f s (H.264 decoding included); delay median %.0f ms, max %.0f ms; %d of %d codes read",
                    output.decoded, output.dropped, output.received, output.rateLimit, cpuSeconds / seconds * 100, seconds,
                    median(score.delays), score.delays.max() ?? 0, found, total))
        ]
    }

    /// Codes of the corpus's stills one decoder alone reads and the other alone misses, by type: what
    /// zbar still adds beside zxing-cpp 3 under `auto`.
    static func complement(_ corpus: BarcodeCorpus) throws -> [BenchmarkResult] {
        let zbar = try BarcodeReader(backend: .zbar), zxing = try BarcodeReader(backend: .zxing)
        var zbarOnly: [String] = [], zxingOnly = 0
        for scene in corpus.scenes where !scene.codes.isEmpty {
            let image = try GrayImage(contentsOfPGM: scene.imagePath)
            let a = zbar.read(image), b = zxing.read(image)
            for code in scene.codes {
                let byZbar = a.contains { Self.reads(Sighting(type: $0.type, value: $0.stringValue, frame: 0), code) }
                let byZxing = b.contains { Self.reads(Sighting(type: $0.type, value: $0.stringValue, frame: 0), code) }
                if byZbar && !byZxing { zbarOnly.append(scene.name) }
                if byZxing && !byZbar { zxingOnly += 1 }
            }
        }
        return [
            BenchmarkResult(
                name: "codes zbar reads that zxing-cpp misses (corpus stills)", value: Double(zbarOnly.count), unit: "codes",
                note: "\(zbarOnly.isEmpty ? "none" : zbarOnly.joined(separator: ", ")); zxing-cpp reads \(zxingOnly) that zbar misses")
        ]
    }

    /// CPU time of gst-launch-1.0 decoding the corpus video through `element` (none: the baseline).
    static func gstCPUSeconds(_ element: [String], _ corpus: BarcodeCorpus) -> Double? {
        let arguments =
            ["gst-launch-1.0", "-q", "filesrc", "location=\(corpus.video)", "!", "decodebin", "!", "videoconvert", "!"]
            + (element.isEmpty ? [] : element + ["!"]) + ["fakesink", "sync=false"]
        guard let result = try? ChildProcess(arguments).finish(), result.status == 0 else { return nil }
        return result.cpuSeconds
    }

    /// CPU seconds this process has used, all threads.
    static func processCPUSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
    }

    /// Replays the corpus through `file:` into a `CaptureMetadataOutput`, until the file ends.
    static func scanWithOutput(_ corpus: BarcodeCorpus) async throws -> ([Sighting], (decoded: Int, dropped: Int, received: Int, rateLimit: Int)) {
        let session = CaptureSession(name: "bench-barcode")
        try session.addInput(CaptureDeviceInput(deviceID: "file:\(corpus.video)", name: "clip"))
        let output = CaptureMetadataOutput(name: "codes")
        let codes = CodeLog()
        output.setMetadataObjectsDelegate(codes)
        try session.addOutput(output)
        let events = session.events()
        try await session.startRunning()
        let deadline = ContinuousClock.now + .seconds(Double(corpus.frameCount) / Double(corpus.frameRate) + 30)
        // The file plays on the pipeline clock from its start: frame time t is shown at start + t.
        var started: ContinuousClock.Instant?
        for await event in events {
            if event.name == "session-started" { started = event.instant }
            if event.name == "session-stopped" || ContinuousClock.now > deadline { break }
        }
        await session.stopRunning()
        try await Task.sleep(for: .milliseconds(200))
        let sightings = codes.all.map { entry in
            Sighting(
                type: entry.code.type, value: entry.code.stringValue, frame: corpus.frame(at: entry.code.timestamp),
                delay: started.map { (entry.at - $0).milliseconds - entry.code.timestamp * 1000 })
        }
        return (sightings, (output.decodedFrameCount, output.droppedFrameCount, output.receivedFrameCount, Int(output.maxFrameRate ?? 0)))
    }

    /// Runs a GStreamer barcode element over the corpus with gst-launch-1.0 (a child process: a
    /// decoder that aborts takes only itself down) and scores its `barcode` messages.
    static func peerScore(_ name: String, _ element: [String], _ corpus: BarcodeCorpus) -> ScanScore {
        let arguments =
            ["gst-launch-1.0", "-m", "filesrc", "location=\(corpus.video)", "!", "decodebin", "!", "videoconvert", "!"]
            + element + ["!", "fakesink", "sync=false"]
        let result: (status: Int32, output: String, error: String, cpuSeconds: Double)
        do { result = try ChildProcess(arguments).finish() } catch {
            return ScanScore(name: name, failure: "could not start gst-launch-1.0: \(error)")
        }
        guard result.status == 0 else {
            var failed = score(name, [], corpus)
            failed.failure = "gst-launch-1.0 exited with \(result.status): \(result.error.suffix(200))"
            return failed
        }
        var sightings: [Sighting] = []
        for line in result.output.split(separator: "\n") {
            guard let start = line.range(of: "(element): barcode,") else { continue }
            let text = String(line[line.index(start.lowerBound, offsetBy: "(element): ".count)...])
            guard let (structure, _) = Structure.parse(text), let kind = structure.string("type"), let symbol = structure.string("symbol"),
                let timestamp = structure.uint64("timestamp")
            else { continue }
            sightings.append(Sighting(type: elementType(kind), value: symbol, frame: corpus.frame(at: Double(timestamp) / 1e9)))
        }
        return score(name, sightings, corpus)
    }

    /// The symbology of a zbar or zxing element's `type` field.
    static func elementType(_ name: String) -> MetadataObjectType? {
        let key = name.lowercased().filter { $0.isLetter || $0.isNumber }
        let table: [String: MetadataObjectType] = [
            "qrcode": .qr, "microqrcode": .microQR, "aztec": .aztec, "pdf417": .pdf417, "datamatrix": .dataMatrix,
            "ean8": .ean8, "ean13": .ean13, "upca": .upcA, "upce": .upcE, "code39": .code39, "code93": .code93,
            "code128": .code128, "itf": .interleaved2of5, "i25": .interleaved2of5, "itf14": .itf14, "codabar": .codabar,
            "databar": .gs1DataBar, "databarexp": .gs1DataBarExpanded, "databarexpanded": .gs1DataBarExpanded,
            "databarlimited": .gs1DataBarLimited, "databarltd": .gs1DataBarLimited, "micropdf417": .microPDF417,
        ]
        return table[key]
    }

    /// True when a sighting reads `code`. Representations that differ only by convention count: a
    /// UPC-A reported as an EAN-13 with a leading 0, Codabar without its start/stop characters,
    /// DataBar with its application identifier (01) or GS1 parentheses and separators. A decoder that
    /// cannot tell Code 39 with a check character from Code 39, or ITF-14 from ITF, reads the code
    /// when it reads its value.
    static func reads(_ sighting: Sighting, _ code: BarcodeCorpus.Code) -> Bool {
        func plain(_ value: String, _ type: MetadataObjectType) -> String {
            switch type {
            case .codabar: return value.trimmingCharacters(in: CharacterSet(charactersIn: "ABCDabcd"))
            case .gs1DataBar, .gs1DataBarLimited:
                return value.count == 16 && value.hasPrefix("01") ? String(value.dropFirst(2)) : value
            case .gs1DataBarExpanded: return value.filter { $0.isLetter || $0.isNumber }
            default: return value
            }
        }
        guard let type = sighting.type else { return false }
        if type.family == code.type.family { return plain(sighting.value, code.type) == plain(code.value, code.type) }
        if type == .ean13 && code.type == .upcA { return sighting.value == "0" + code.value }
        return false
    }

    /// Scores sightings against the corpus's truth.
    static func score(_ name: String, _ sightings: [Sighting], _ corpus: BarcodeCorpus) -> ScanScore {
        var score = ScanScore(name: name)
        var first: [String: Int] = [:]
        var wrong = Set<String>()
        for sighting in sightings {
            guard let scene = corpus.scene(atFrame: sighting.frame) else { continue }
            if let code = scene.codes.first(where: { reads(sighting, $0) }) {
                let key = "\(scene.name)|\(code.value)"
                first[key] = min(first[key] ?? Int.max, sighting.frame - scene.firstFrame)
                if let delay = sighting.delay {
                    score.delays.append(delay + Double(sighting.frame - scene.firstFrame) * 1000 / Double(corpus.frameRate))
                }
            } else {
                wrong.insert("\(scene.name): \(sighting.type?.rawValue ?? "?") \"\(sighting.value)\"")
            }
        }
        for scene in corpus.scenes {
            for code in scene.codes {
                score.scenes[code.type, default: 0] += 1
                if let latency = first["\(scene.name)|\(code.value)"] {
                    score.found[code.type, default: 0] += 1
                    score.latencies[code.type, default: []].append(latency)
                }
            }
        }
        score.falseReads = wrong.sorted()
        return score
    }
}
