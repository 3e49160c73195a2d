import Capture
import CaptureTestSupport
import Foundation

extension Benchmarks {
    /// Thumbnail and trim times on a 60 s 720p30 H.264 + AAC file (made by gst-launch-1.0, a keyframe
    /// every 2 s), each against the same job done by the `ffmpeg` command line, side by side in one
    /// run; the median of 3 runs of each. Wall-clock time of the whole job (our API call / the ffmpeg
    /// process, start to exit).
    static func editing(log: @Sendable (String) -> Void) async throws -> [BenchmarkResult] {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("capture-bench-editing-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let movie = "\(folder)/source.mp4"
        log("editing: making a 60 s 720p30 file ...")
        let made = try ChildProcess([
            "gst-launch-1.0", "-q", "videotestsrc", "num-buffers=1800", "pattern=ball", "!", "video/x-raw,width=1280,height=720,framerate=30/1", "!",
            "timeoverlay", "!", "x264enc", "speed-preset=ultrafast", "key-int-max=60", "!", "h264parse", "!", "mp4mux", "name=m", "!",
            "filesink", "location=\(movie)", "audiotestsrc", "num-buffers=2812", "!", "audio/x-raw,rate=48000", "!", "voaacenc", "!", "aacparse", "!", "m.",
        ]).finish()
        guard made.status == 0 else { throw CaptureError.pipelineBuildFailed(object: "the editing benchmark's file", reason: made.error) }

        var index = 0
        func ours(_ job: () async throws -> Void) async throws -> Double {
            let start = ContinuousClock.now
            try await job()
            return (ContinuousClock.now - start).milliseconds
        }
        func ffmpeg(_ arguments: [String]) throws -> Double {
            let start = ContinuousClock.now
            let result = try ChildProcess(["ffmpeg", "-v", "error", "-y"] + arguments).finish()
            guard result.status == 0 else { throw CaptureError.editingFailed(path: movie, reason: "ffmpeg: \(result.error)") }
            return (ContinuousClock.now - start).milliseconds
        }
        func next(_ ext: String) -> String { index += 1; return "\(folder)/out-\(index).\(ext)" }

        var results: [BenchmarkResult] = []
        let jobs: [(name: String, ours: () async throws -> Void, peer: String, ffmpeg: () -> [String])] = [
            (
                "thumbnail at 30 s, exact frame (JPEG)",
                { _ = try await AssetImageGenerator(videoAt: movie).saveImage(at: .seconds(30), to: next("jpg")) },
                "ffmpeg -ss 30 -i F -frames:v 1 out.jpg", { ["-ss", "30", "-i", movie, "-frames:v", "1", next("jpg")] }
            ),
            (
                "thumbnail at 30 s, nearest keyframe (JPEG)",
                {
                    var generator = AssetImageGenerator(videoAt: movie); generator.tolerance = .keyframe;
                    _ = try await generator.saveImage(at: .seconds(30), to: next("jpg"))
                },
                "ffmpeg -skip_frame nokey -ss 30 -i F -frames:v 1 out.jpg",
                { ["-skip_frame", "nokey", "-ss", "30", "-i", movie, "-frames:v", "1", next("jpg")] }
            ),
            (
                "trim 10-40 s at keyframes (stream copy)",
                { _ = try await VideoEditor.trim(videoAt: movie, from: 10, to: 40, saveTo: next("mp4"), mode: .keyframe) },
                "ffmpeg -ss 10 -to 40 -i F -c copy out.mp4",
                { ["-ss", "10", "-to", "40", "-i", movie, "-c", "copy", next("mp4")] }
            ),
            // Between keyframes (every 2 s): ours re-encodes 10.5-12 s and 38-39.5 s, copies 12-38 s and
            // re-encodes the sound; ffmpeg's command line re-encodes the whole range.
            (
                "trim 10.5-39.5 s exact (edges re-encoded, H.264 veryfast + AAC)",
                { _ = try await VideoEditor.trim(videoAt: movie, from: 10.5, to: 39.5, saveTo: next("mp4"), mode: .exact) },
                "ffmpeg -ss 10.5 -to 39.5 -i F -c:v libx264 -preset veryfast -c:a aac out.mp4",
                { ["-ss", "10.5", "-to", "39.5", "-i", movie, "-c:v", "libx264", "-preset", "veryfast", "-c:a", "aac", next("mp4")] }
            ),
        ]
        for job in jobs {
            log("editing: \(job.name) ...")
            var mine: [Double] = [], theirs: [Double] = []
            for _ in 0..<3 {
                mine.append(try await ours(job.ours))
                theirs.append(try ffmpeg(job.ffmpeg()))
            }
            results.append(
                BenchmarkResult(
                    name: "\(job.name), 60 s 720p30 file", value: median(mine), unit: "ms", peer: job.peer,
                    peerValue: median(theirs), note: "median of 3, wall clock of the whole job"))
        }
        return results
    }
}
