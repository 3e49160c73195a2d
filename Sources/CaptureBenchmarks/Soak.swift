import Capture
import CaptureTestSupport
import Foundation

/// This process's resident memory, open descriptors and threads, from /proc/self.
public struct ProcessUsage: Sendable {
    public var residentKiB: Int
    public var descriptors: Int
    public var threads: Int

    /// Hands the allocator's free pages back to the system (glibc's `malloc_trim(0)`), so that the
    /// resident size read next is memory the process holds, not memory glibc keeps for reuse. Looked up
    /// at run time: it is not part of the C library's Swift module. False when it is not there.
    @discardableResult
    public static func returnFreeMemory() -> Bool {
        typealias Trim = @convention(c) (Int) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "malloc_trim") else { return false }
        _ = unsafeBitCast(symbol, to: Trim.self)(0)
        return true
    }

    public static func now() -> ProcessUsage {
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .flatMap { Int($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") } ?? 0
        }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        return ProcessUsage(residentKiB: field("VmRSS"), descriptors: descriptors, threads: field("Threads"))
    }
}

/// What one soak run saw: per cycle, the process's resident memory, open descriptors and threads, and
/// whether every step kept its deadline; every file it recorded was decoded afterwards.
public struct SoakReport: Codable, Sendable {
    public struct Sample: Codable, Sendable {
        public var cycle: Int
        public var residentKiB: Int
        /// Resident memory once the allocator has handed its free pages back (`malloc_trim`): what the
        /// process holds.
        public var heldKiB: Int?
        public var descriptors: Int
        public var threads: Int
        public var seconds: Double
    }
    public var cycles: Int
    public var samples: [Sample]
    /// Steps that missed their deadline or failed, with what they were.
    public var failures: [String]
    /// Files recorded, and those that did not decode.
    public var movies: Int
    public var brokenMovies: [String]
    public var photos: Int
    /// Camera switches made while recording.
    public var switches: Int = 0

    /// Resident memory growth from cycle 100 (or the first tenth) to the end, in KiB.
    public var residentGrowthKiB: Int {
        guard let last = samples.last, let base = baseline else { return 0 }
        return last.residentKiB - base.residentKiB
    }
    /// The same growth of held memory (after `malloc_trim`), when it was measured.
    public var heldGrowthKiB: Int? {
        guard let last = samples.last?.heldKiB, let base = baseline?.heldKiB else { return nil }
        return last - base
    }
    public var descriptorGrowth: Int { (samples.last?.descriptors ?? 0) - (baseline?.descriptors ?? 0) }
    public var threadGrowth: Int { (samples.last?.threads ?? 0) - (baseline?.threads ?? 0) }
    public var baseline: Sample? {
        let from = min(100, max(1, cycles / 10))
        return samples.first { $0.cycle >= from }
    }

    /// The targets: no failure, every file plays, memory growth under 5 MB from cycle 100 on,
    /// descriptors and threads flat. Memory is the memory held (after the allocator handed back its free
    /// pages) when that was measured: what glibc keeps cached for reuse is not the framework's.
    public var passed: Bool {
        failures.isEmpty && brokenMovies.isEmpty && (heldGrowthKiB ?? residentGrowthKiB) < 5 * 1024 && descriptorGrowth <= 0 && threadGrowth <= 2
    }
}

/// The soak: on one running session, `cycles` times a still -> video -> still cycle (a photo; the
/// microphone and a movie output join in one configuration block; 1 s recorded; back in one block;
/// a photo) and an output added and removed. Every step has a deadline. Not part of `make test`:
/// `make soak` runs it (1,000 cycles, about half an hour).
public enum Soak {
    public static func run(cycles: Int, directory: String, log: @Sendable (String) -> Void = { _ in }) async throws -> SoakReport {
        let session = CaptureSession(name: "soak")
        // Two cameras to switch between while recording: the test pattern's bars and its ball.
        var camera = try CaptureDeviceInput(device: .testPattern, name: "back", options: InputOptions(pattern: "smpte"))
        try session.addInput(camera)
        try session.setSessionPreset(.hd1280x720)
        let preview = CaptureVideoPreviewOutput(name: "preview", sink: .none)
        let photo = CapturePhotoOutput(name: "photo")
        try session.addOutput(preview)
        try session.addOutput(photo)
        try await session.startRunning()
        var report = SoakReport(cycles: cycles, samples: [], failures: [], movies: 0, brokenMovies: [], photos: 0)
        var movies: [String] = []
        let started = ContinuousClock.now
        for cycle in 1...cycles {
            do {
                try await step("photo \(cycle)a") { () async throws(CaptureError) in
                    _ = try await photo.capturePhoto(with: PhotoSettings(location: "\(directory)/photo_\(cycle)a.jpg"))
                }
                let microphone = try CaptureDeviceInput(device: .testTone, name: "mic")
                let movie = CaptureMovieFileOutput(name: "movie")
                try await step("to video \(cycle)") { () async throws(CaptureError) in
                    session.beginConfiguration()
                    try session.removeOutput(photo)
                    try session.addInput(microphone)
                    try session.addOutput(movie)
                    try await session.commitConfiguration()
                }
                let location = "\(directory)/movie_\(cycle).mp4"
                try await step("record \(cycle)") { () async throws(CaptureError) in
                    _ = try await movie.startRecording(to: location)
                }
                try await Task.sleep(for: .seconds(0.5))
                let other = try CaptureDeviceInput(
                    device: .testPattern, name: camera.name == "back" ? "front" : "back",
                    options: InputOptions(pattern: camera.name == "back" ? "ball" : "smpte"))
                try await step("switch camera \(cycle)") { [camera] () async throws(CaptureError) in
                    try await session.replaceInput(camera, with: other)
                }
                camera = other
                report.switches += 1
                try await Task.sleep(for: .seconds(0.5))
                try await step("stop recording \(cycle)") { () async throws(CaptureError) in
                    let result = try await movie.stopRecording()
                    if !result.success { throw result.error ?? .recordingFailed(output: "movie", location: location, reason: "not complete") }
                }
                movies.append(location)
                try await step("to photo \(cycle)") { () async throws(CaptureError) in
                    session.beginConfiguration()
                    try session.removeOutput(movie)
                    try session.removeInput(microphone)
                    try session.addOutput(photo)
                    try await session.commitConfiguration()
                }
                try await step("photo \(cycle)b") { () async throws(CaptureError) in
                    _ = try await photo.capturePhoto(with: PhotoSettings(location: "\(directory)/photo_\(cycle)b.jpg"))
                }
                report.photos += 2
                let extra = CaptureVideoDataOutput(name: "extra")
                try await step("add and remove \(cycle)") { () async throws(CaptureError) in
                    session.beginConfiguration()
                    try session.addOutput(extra)
                    try await session.commitConfiguration()
                    session.beginConfiguration()
                    try session.removeOutput(extra)
                    try await session.commitConfiguration()
                }
            } catch {
                report.failures.append("cycle \(cycle): \(error)")
                if report.failures.count >= 5 { break }
            }
            report.samples.append(sample(cycle: cycle, since: started))
            if cycle % 50 == 0 || cycle == cycles {
                let last = report.samples[report.samples.count - 1]
                log("cycle \(cycle): \(last.residentKiB / 1024) MiB resident, \(last.descriptors) descriptors, \(last.threads) threads")
            }
        }
        await session.stopRunning()
        report.movies = movies.count
        for movie in movies where !decodes(movie) { report.brokenMovies.append(movie) }
        return report
    }

    /// Runs one step with a deadline (the session's own waits are bounded; this bounds the step).
    static func step(_ name: String, deadline: Duration = .seconds(15), _ body: @escaping @Sendable () async throws(CaptureError) -> Void) async throws {
        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { try await body() }
            group.addTask {
                try await Task.sleep(for: deadline)
                throw BenchmarkError("\(name) did not finish within \(deadline)")
            }
            defer { group.cancelAll() }
            try await group.next()
        }
    }

    /// This process's resident memory, descriptors and threads now.
    static func sample(cycle: Int, since start: ContinuousClock.Instant) -> SoakReport.Sample {
        let usage = ProcessUsage.now()
        let held = ProcessUsage.returnFreeMemory() ? ProcessUsage.now().residentKiB : nil
        return SoakReport.Sample(
            cycle: cycle, residentKiB: usage.residentKiB, heldKiB: held, descriptors: usage.descriptors, threads: usage.threads,
            seconds: (ContinuousClock.now - start).seconds)
    }

    /// True when ffmpeg decodes the whole file without an error.
    static func decodes(_ path: String) -> Bool {
        guard let result = try? ChildProcess(["ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"]).finish() else { return false }
        return result.status == 0 && result.error.isEmpty
    }
}

/// What a long recording showed: frames the framework lost, the file's streams measured with
/// ffprobe, the photos taken beside it, the barcode branch's work, and memory sampled through the run.
public struct RecordingSoakReport: Codable, Sendable {
    public struct Sample: Codable, Sendable {
        public var seconds: Double
        public var residentKiB: Int
        public var descriptors: Int
        public var threads: Int
    }
    public var requestedSeconds: Double
    public var location: String
    public var recordedSeconds: Double
    public var fileBytes: Int64
    /// `frame-dropped` events of the session, by output and reason ("movie late": 3).
    public var drops: [String: Int]
    public var photos: Int
    /// Camera switches made while recording.
    public var switches: Int = 0
    public var photoFailures: [String]
    /// Frames the barcode branch received and decoded (it skips frames while its decoder is busy, by design).
    public var metadataReceived: Int
    public var metadataDecoded: Int
    /// The file as ffprobe reads it: video frames, the time from the first frame to the last one's
    /// end, the longest gap between two frames, and the audio stream's span.
    public var videoFrames: Int
    public var videoSpan: Double
    public var longestVideoGap: Double
    public var audioSpan: Double
    /// The requested frame rate.
    public var frameRate: Double
    /// How far the two streams' timestamps moved apart from what they carry: at each video frame, the
    /// frame's timestamp minus where its count puts it (frames since the first / rate), against the same
    /// for the audio packet at that time (its timestamp minus the samples before it / sample rate). The
    /// largest difference over the recording, in seconds; a lost frame or lost samples show as a step.
    public var drift: Double
    /// Frames the span should hold at the frame rate minus those there.
    public var missingFrames: Int { max(0, Int((videoSpan * frameRate).rounded()) - videoFrames) }
    public var decodes: Bool
    public var samples: [Sample]
    public var failures: [String]

    /// Resident memory growth from the sample nearest five minutes in (or a tenth of the run) to the end, in KiB.
    public var residentGrowthKiB: Int {
        let from = min(300, requestedSeconds / 10)
        guard let base = samples.first(where: { $0.seconds >= from }), let last = samples.last else { return 0 }
        return last.residentKiB - base.residentKiB
    }

    /// The targets: nothing failed, no frame lost by the framework or missing from the file, drift
    /// under one frame, the file decodes, memory growth under 5 MB.
    public var passed: Bool {
        failures.isEmpty && photoFailures.isEmpty && drops.isEmpty && missingFrames == 0 && frameRate > 0
            && drift < 1 / frameRate && decodes && residentGrowthKiB < 5 * 1024
    }
}

extension Soak {
    /// One recording of `seconds` at 720p30 (test pattern and test tone) with a barcode branch reading
    /// the same frames and a photo every `photoInterval`; memory sampled every 10 s; the file measured
    /// and decoded at the end. `make soak-recording` runs an hour.
    public static func recording(
        seconds: Double, photoInterval: Double = 10, directory: String,
        log: @Sendable (String) -> Void = { _ in }
    ) async throws -> RecordingSoakReport {
        let session = CaptureSession(name: "soak-recording")
        try session.addInput(CaptureDeviceInput(device: .testPattern, name: "camera", options: InputOptions(pattern: "ball", frameRate: FrameRate(30))))
        try session.addInput(CaptureDeviceInput(device: .testTone, name: "microphone"))
        try session.setSessionPreset(.hd1280x720)
        let movie = CaptureMovieFileOutput(name: "movie")
        let metadata = CaptureMetadataOutput(name: "barcodes")
        let photo = CapturePhotoOutput(name: "photo")
        try session.addOutput(movie)
        try session.addOutput(metadata)
        try session.addOutput(photo)
        let drops = Locked<[String: Int]>([:])
        let events = session.events()
        let watcher = Task {
            for await event in events {
                if case .frameDropped(let output, let reason) = event.kind { drops.withLock { $0["\(output) \(reason.rawValue)", default: 0] += 1 } }
            }
        }
        try await session.startRunning()
        let location = FileNaming.nextFree("\(directory)/recording-%d.mp4")
        var report = RecordingSoakReport(
            requestedSeconds: seconds, location: location, recordedSeconds: 0, fileBytes: 0, drops: [:], photos: 0,
            photoFailures: [], metadataReceived: 0, metadataDecoded: 0, videoFrames: 0, videoSpan: 0,
            longestVideoGap: 0, audioSpan: 0, frameRate: 30, drift: 0, decodes: false, samples: [], failures: [])
        let started = ContinuousClock.now
        func elapsed() -> Double { (ContinuousClock.now - started).seconds }
        do {
            try await step("start recording") { () async throws(CaptureError) in _ = try await movie.startRecording(to: location) }
            var nextPhoto = photoInterval, nextSample = 0.0, nextLog = 60.0
            while elapsed() < seconds {
                let now = elapsed()
                if now >= nextSample {
                    let sample = Soak.sample(cycle: 0, since: started)
                    report.samples.append(.init(seconds: now, residentKiB: sample.residentKiB, descriptors: sample.descriptors, threads: sample.threads))
                    nextSample += 10
                }
                if now >= nextLog, let last = report.samples.last {
                    log("\(Int(now)) s: \(last.residentKiB / 1024) MiB resident, \(report.photos) photos, drops \(drops.withLock { $0 })")
                    nextLog += 60
                }
                if now >= nextPhoto {
                    let index = report.photos + report.photoFailures.count + 1
                    do {
                        try await step("photo \(index)") { () async throws(CaptureError) in
                            _ = try await photo.capturePhoto(with: PhotoSettings(location: "\(directory)/photo_%04d.jpg"))
                        }
                        report.photos += 1
                    } catch { report.photoFailures.append("photo \(index) at \(Int(now)) s: \(error)") }
                    nextPhoto += photoInterval
                }
                try await Task.sleep(for: .milliseconds(200))
            }
            try await step("stop recording", deadline: .seconds(60)) { () async throws(CaptureError) in
                let result = try await movie.stopRecording()
                if !result.success { throw result.error ?? .recordingFailed(output: "movie", location: location, reason: "not complete") }
            }
        } catch {
            report.failures.append("\(error)")
        }
        report.metadataReceived = metadata.receivedFrameCount
        report.metadataDecoded = metadata.decodedFrameCount
        await session.stopRunning()
        watcher.cancel()
        report.drops = drops.withLock { $0 }
        report.recordedSeconds = elapsed()
        report.fileBytes = (try? FileManager.default.attributesOfItem(atPath: location)[.size] as? Int64) ?? 0
        log("measuring \(location) with ffprobe and decoding it")
        measure(location, into: &report)
        report.decodes = decodes(location)
        return report
    }

    /// A recording already on disk measured like the long recording's: frames, spans, the longest gap,
    /// the A/V drift (at `frameRate`), and whether FFmpeg decodes it.
    public static func measure(recording location: String, frameRate: Double = 30) -> RecordingSoakReport {
        var report = RecordingSoakReport(
            requestedSeconds: 0, location: location, recordedSeconds: 0,
            fileBytes: (try? FileManager.default.attributesOfItem(atPath: location)[.size] as? Int64) ?? 0,
            drops: [:], photos: 0, photoFailures: [], metadataReceived: 0, metadataDecoded: 0, videoFrames: 0,
            videoSpan: 0, longestVideoGap: 0, audioSpan: 0, frameRate: frameRate, drift: 0, decodes: false,
            samples: [], failures: [])
        measure(location, into: &report)
        report.decodes = decodes(location)
        return report
    }

    /// Reads every packet's time of both streams with ffprobe: frames, spans, the longest gap, the drift.
    static func measure(_ location: String, into report: inout RecordingSoakReport) {
        /// Packet times in the stream's own ticks (exact: ffprobe's decimal seconds are rounded to
        /// microseconds, which adds up to tens of milliseconds over an hour of audio packets).
        func packets(_ stream: String) -> [(pts: Double, duration: Double?)] {
            guard
                let base = try? ChildProcess([
                    "ffprobe", "-v", "error", "-select_streams", stream, "-show_entries", "stream=time_base",
                    "-of", "csv=p=0", location,
                ]).finish(), base.status == 0
            else { return [] }
            let fraction = base.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "/").compactMap { Double($0) }
            guard fraction.count == 2, fraction[1] > 0 else { return [] }
            let tick = fraction[0] / fraction[1]
            guard
                let result = try? ChildProcess([
                    "ffprobe", "-v", "error", "-select_streams", stream, "-show_entries", "packet=pts,duration",
                    "-of", "csv=p=0", location,
                ]).finish(), result.status == 0
            else { return [] }
            return result.output.split(separator: "\n").compactMap { line in
                let fields = line.split(separator: ",")
                guard let pts = fields.first.flatMap({ Int64($0) }) else { return nil }
                return (Double(pts) * tick, fields.count > 1 ? Int64(fields[1]).map { Double($0) * tick } : nil)
            }.sorted { $0.pts < $1.pts }
        }
        let video = packets("v:0"), audio = packets("a:0")
        report.videoFrames = video.count
        guard let firstVideo = video.first, let lastVideo = video.last else { return }
        let interval = 1 / report.frameRate
        // The last frame lasts one frame interval (a fragmented file may not say its duration).
        report.videoSpan = lastVideo.pts - firstVideo.pts + interval
        report.longestVideoGap = zip(video, video.dropFirst()).map { $1.pts - $0.pts }.max() ?? 0
        guard let firstAudio = audio.first, let lastAudio = audio.last else { return }
        // A packet without a duration (the first AAC one) lasts what most others do.
        let typical = audio.compactMap(\.duration).sorted().dropFirst(audio.count / 2).first ?? 0
        report.audioSpan = lastAudio.pts + (lastAudio.duration ?? typical) - firstAudio.pts
        var audioIndex = 0, samplesTime = 0.0, drift = 0.0
        for (index, frame) in video.enumerated() {
            while audioIndex + 1 < audio.count, audio[audioIndex + 1].pts <= frame.pts {
                samplesTime += audio[audioIndex].duration ?? typical
                audioIndex += 1
            }
            let videoOffset = frame.pts - (firstVideo.pts + Double(index) * interval)
            let audioOffset = audio[audioIndex].pts - (firstAudio.pts + samplesTime)
            drift = max(drift, abs(videoOffset - audioOffset))
        }
        report.drift = drift
    }
}
