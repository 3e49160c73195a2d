import CaptureTestSupport
import Foundation
import Testing

/// The times (seconds) ffprobe shows a file's video frames at, in the order they are shown.
private func frameTimes(_ path: String) throws -> [Double] {
    let result = try tool(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "frame=pts_time", "-of", "csv=p=0", path])
    #expect(result.status == 0, "\(result.output)")
    return result.output.split(whereSeparator: \.isNewline).compactMap { Double($0.split(separator: ",").first ?? "") }
}

/// A file's duration as ffprobe reads it (seconds).
private func probedDuration(_ path: String) throws -> Double {
    let result = try tool(["ffprobe", "-v", "error", "-show_entries", "format=duration", "-of", "csv=p=0", path])
    return Double(result.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
}

/// The seconds `capture trim` prints for the new file ("cut.mp4  2.500 s (asked ...").
private func printedDuration(_ output: String) -> Double? {
    guard let range = output.range(of: #"  ([0-9.]+) s \(asked"#, options: .regularExpression) else { return nil }
    return Double(output[range].split(separator: " ").first ?? "")
}

/// Makes a source with FFmpeg (testsrc: every frame differs) and checks it was made.
private func makeSource(_ path: String, _ arguments: [String]) throws {
    let result = try tool(["ffmpeg", "-nostdin", "-v", "error", "-y"] + arguments + [path])
    #expect(result.status == 0, "\(result.output)")
}

/// A 320x240 30 fps H.264 + AAC source of `seconds`, its encoder's `x264-params` given.
private func makeH264Source(_ path: String, seconds: Int, x264: String) throws {
    try makeSource(
        path,
        [
            "-f", "lavfi", "-i", "testsrc=size=320x240:rate=30:duration=\(seconds)", "-f", "lavfi", "-i", "sine=sample_rate=48000:duration=\(seconds)",
            "-c:v", "libx264", "-preset", "veryfast", "-pix_fmt", "yuv420p", "-x264-params", x264, "-c:a", "aac",
        ])
}

/// The three exact trims of issue 24 that exited 0 with a wrong file.
@Suite("capture trim (frame-exact)", .serialized) struct TrimCommandTests {
    /// B-frames, a range ending on a keyframe: every frame of the range (it was 73 of 75, the last two
    /// outside the MP4's edit list).
    @Test func aRangeEndingOnAKeyframeKeepsItsLastFrames() throws {
        let scratch = try Scratch()
        let movie = scratch.file("b.mp4")
        try makeH264Source(movie, seconds: 4, x264: "bframes=2:keyint=30:min-keyint=30:scenecut=0")
        let trimmed = try capture(["trim", movie, "--from", "0.5", "--to", "3", "--exact", "-o", scratch.file("cut.mp4")])
        #expect(trimmed.status == 0, "\(trimmed.error)")
        let times = try frameTimes(scratch.file("cut.mp4"))
        #expect(times.count == 75)
        #expect(abs((times.last ?? 0) - 74.0 / 30) < 0.002)
        let duration = try probedDuration(scratch.file("cut.mp4"))
        #expect(abs(duration - 2.5) < 0.01)
        #expect(abs((printedDuration(trimmed.output) ?? 0) - duration) < 0.005, "\(trimmed.output)")
    }

    /// Frames at 5 fps with a gap: the range keeps its last 0.5 s (it came out 2.2 s long) and only its
    /// own frames, each at its time.
    @Test func aVariableFrameRateKeepsTheWholeRange() throws {
        let scratch = try Scratch()
        let movie = scratch.file("vfr.mp4")
        try makeSource(
            movie,
            [
                "-f", "lavfi", "-i", "testsrc=size=320x240:rate=5:duration=5", "-f", "lavfi", "-i", "sine=sample_rate=48000:duration=5",
                "-vf", "select='not(between(t,2.1,2.9))'", "-fps_mode", "passthrough", "-c:v", "libx264", "-preset", "veryfast",
                "-pix_fmt", "yuv420p", "-x264-params", "bframes=0:keyint=4:min-keyint=4:scenecut=0", "-c:a", "aac", "-shortest",
            ])
        let trimmed = try capture(["trim", movie, "--from", "1.5", "--to", "4.2", "--exact", "-o", scratch.file("cut.mp4")])
        #expect(trimmed.status == 0, "\(trimmed.error)")
        // The source's frames at 1.6, 1.8, 2.0, 3.0 ... 4.0 s, shown 1.5 s earlier.
        let expected = [1.6, 1.8, 2.0, 3.0, 3.2, 3.4, 3.6, 3.8, 4.0].map { $0 - 1.5 }
        let times = try frameTimes(scratch.file("cut.mp4"))
        #expect(times.count == expected.count, "\(times)")
        for (time, wanted) in zip(times, expected) { #expect(abs(time - wanted) < 0.002, "\(times)") }
        let duration = try probedDuration(scratch.file("cut.mp4"))
        #expect(abs(duration - 2.7) < 0.03)
        #expect(abs((printedDuration(trimmed.output) ?? 0) - duration) < 0.005, "\(trimmed.output)")
    }

    /// A range shorter than a frame (with sound) is refused: exit 65, the file and the range named,
    /// nothing written (it wrote a file with an empty sound track FFmpeg could not open).
    @Test func aRangeShorterThanAFrameIsRefused() throws {
        let scratch = try Scratch()
        let movie = scratch.file("clip.mp4")
        try makeH264Source(movie, seconds: 2, x264: "bframes=3")
        let refused = try capture(["trim", movie, "--from", "1.01", "--to", "1.02", "--exact", "-o", scratch.file("out/cut.mp4")])
        #expect(refused.status == 65, "\(refused.output) \(refused.error)")
        #expect(refused.error.contains("clip.mp4") && refused.error.contains("1.01 s to 1.02 s"), "\(refused.error)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("out")))
        let left = try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.hasPrefix(".capture-") }
        #expect(left.isEmpty)
    }

    /// Issue 29: frame-exact is the default (as UIVideoEditorController and AVAssetExportSession cut):
    /// 1.5 -> 4 s of a file with a keyframe every 2 s gives 2.5 s, where the keyframe copy gave 3.03 s.
    /// `--fast` is the keyframe copy (from the keyframe at or before 1.5 s: 0 s), `--exact` the default
    /// spelled out, and both together a usage error.
    @Test func frameExactIsTheDefaultAndFastCopiesFromAKeyframe() throws {
        let scratch = try Scratch()
        let movie = scratch.file("gop.mp4")
        try makeH264Source(movie, seconds: 6, x264: "bframes=0:keyint=60:min-keyint=60:scenecut=0")
        let exact = try capture(["trim", movie, "--from", "1.5", "--to", "4", "-o", scratch.file("exact.mp4"), "--json"])
        #expect(exact.status == 0, "\(exact.error)")
        #expect(exact.output.contains("\"mode\": \"exact\""), "\(exact.output)")
        let exactDuration = try probedDuration(scratch.file("exact.mp4"))
        #expect(abs(exactDuration - 2.5) <= 1.0 / 30 + 0.001, "\(exactDuration)")
        #expect(try frameTimes(scratch.file("exact.mp4")).count == 75)

        let fast = try capture(["trim", movie, "--from", "1.5", "--to", "4", "-o", scratch.file("fast.mp4"), "--fast", "--json"])
        #expect(fast.status == 0, "\(fast.error)")
        #expect(fast.output.contains("\"mode\": \"keyframe\"") && fast.output.contains("\"strategy\": \"copy\""), "\(fast.output)")
        // From the keyframe at 0 s (keyframes at 0, 2, 4 s) to 4 s.
        let fastDuration = try probedDuration(scratch.file("fast.mp4"))
        #expect(fastDuration > 3.9, "\(fastDuration)")

        let spelled = try capture(["trim", movie, "--from", "1.5", "--to", "4", "-o", scratch.file("spelled.mp4"), "--exact"])
        #expect(spelled.status == 0, "\(spelled.error)")
        let spelledDuration = try probedDuration(scratch.file("spelled.mp4"))
        #expect(abs(spelledDuration - 2.5) <= 1.0 / 30 + 0.001)
        let both = try capture(["trim", movie, "--from", "1.5", "--to", "4", "-o", scratch.file("both.mp4"), "--exact", "--fast"])
        #expect(both.status == 64 && both.error.contains("--fast"), "\(both.error)")
        #expect(!FileManager.default.fileExists(atPath: scratch.file("both.mp4")))
    }
}
