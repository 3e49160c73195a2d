import Capture
import CaptureTestSupport
import Foundation

/// What one soak run saw: per cycle, the process's resident memory, open descriptors and threads, and
/// whether every step kept its deadline; every file it recorded was decoded afterwards.
public struct SoakReport: Codable, Sendable {
    public struct Sample: Codable, Sendable {
        public var cycle: Int
        public var residentKiB: Int
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

    /// Resident memory growth from cycle 100 (or the first tenth) to the end, in KiB.
    public var residentGrowthKiB: Int {
        guard let last = samples.last, let base = baseline else { return 0 }
        return last.residentKiB - base.residentKiB
    }
    public var descriptorGrowth: Int { (samples.last?.descriptors ?? 0) - (baseline?.descriptors ?? 0) }
    public var threadGrowth: Int { (samples.last?.threads ?? 0) - (baseline?.threads ?? 0) }
    public var baseline: Sample? {
        let from = min(100, max(1, cycles / 10))
        return samples.first { $0.cycle >= from }
    }

    /// The targets of the issue: no failure, every file plays, memory growth under 5 MB from cycle
    /// 100 on, descriptors and threads flat.
    public var passed: Bool {
        failures.isEmpty && brokenMovies.isEmpty && residentGrowthKiB < 5 * 1024 && descriptorGrowth <= 0 && threadGrowth <= 2
    }
}

/// The soak: on one running session, `cycles` times a still -> video -> still cycle (a photo; the
/// microphone and a movie output join in one configuration block; 1 s recorded; back in one block;
/// a photo) and an output added and removed. Every step has a deadline. Not part of `make test`:
/// `make soak` runs it (1,000 cycles, about half an hour).
public enum Soak {
    public static func run(cycles: Int, directory: String, log: @Sendable (String) -> Void = { _ in }) async throws -> SoakReport {
        let session = CaptureSession(name: "soak")
        try session.addInput(CaptureDeviceInput(device: .testPattern, name: "camera"))
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
                try await Task.sleep(for: .seconds(1))
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
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            status.split(separator: "\n").first { $0.hasPrefix(name + ":") }
                .flatMap { Int($0.dropFirst(name.count + 1).trimmingCharacters(in: .whitespaces).split(separator: " ").first ?? "") } ?? 0
        }
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd").count) ?? 0
        let elapsed = ContinuousClock.now - start
        return SoakReport.Sample(cycle: cycle, residentKiB: field("VmRSS"), descriptors: descriptors, threads: field("Threads"),
                                 seconds: Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }

    /// True when ffmpeg decodes the whole file without an error.
    static func decodes(_ path: String) -> Bool {
        guard let result = try? ChildProcess(["ffmpeg", "-v", "error", "-i", path, "-f", "null", "-"]).finish() else { return false }
        return result.status == 0 && result.error.isEmpty
    }
}
