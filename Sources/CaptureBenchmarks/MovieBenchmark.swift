import Capture
import Foundation

extension Benchmarks {
    /// A 720p30 H.264 + AAC recording of `seconds`: CPU use of the whole process and frames dropped
    /// (frames in the file against the frames 30 fps gives for the recorded duration).
    static func movie(seconds: Double) async throws -> [BenchmarkResult] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("capture-bench-movie-\(getpid())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let session = CaptureSession(name: "bench-movie")
        // "ball" moves like a scene does; "snow" (noise) would be the encoder's worst case.
        try session.addInput(CaptureDeviceInput(device: .testPattern, name: "camera", options: InputOptions(pattern: "ball")))
        try session.addInput(CaptureDeviceInput(device: .testTone, name: "microphone"))
        try session.setSessionPreset(.hd1280x720)
        var settings = MovieSettings()
        settings.maxRecordedDuration = .seconds(seconds)
        let movie = CaptureMovieFileOutput(name: "movie", settings: settings)
        try session.addOutput(movie)
        try session.addOutput(CaptureVideoPreviewOutput(name: "preview", sink: .none))
        try await session.startRunning()
        let before = cpuSeconds(RUSAGE_SELF)
        let start = ContinuousClock.now
        _ = try await movie.startRecording(to: directory.appendingPathComponent("bench.mp4").path)
        while movie.isRecording { try await Task.sleep(for: .milliseconds(100)) }
        let wall = (ContinuousClock.now - start).seconds
        let cpu = (cpuSeconds(RUSAGE_SELF) - before) / wall
        await session.stopRunning()
        guard let result = movie.lastRecording else { return [] }
        let expected = Int((result.duration.seconds * 30).rounded())
        return [
            BenchmarkResult(
                name: "720p30 H.264 + AAC recording, \(Int(seconds)) s: CPU use", value: cpu * 100, unit: "% of one core",
                note: "real time if below 200% on 2 cores; \(result.fileSize / 1_000_000) MB written"),
            BenchmarkResult(
                name: "720p30 H.264 + AAC recording, \(Int(seconds)) s: frames dropped", value: Double(max(0, expected - result.videoFrameCount)),
                unit: "frames", note: "\(result.videoFrameCount) of \(expected) frames in the file, success=\(result.success)"),
        ]
    }
}
