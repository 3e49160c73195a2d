import Capture
import CaptureTestSupport
import Foundation
import Testing

/// ffprobe's view of a file (independent of the project's code).
func probe(_ path: String) throws -> (duration: Double, streams: [String]) {
    let result = try tool(["ffprobe", "-v", "error", "-show_entries", "stream=codec_name:format=duration", "-of", "csv=p=0", path])
    let lines = result.output.split(separator: "\n").map(String.init)
    let duration = lines.compactMap(Double.init).first ?? 0
    return (duration, lines.filter { Double($0) == nil })
}

@Suite struct RecordCommandTests {
    @Test func recordsForTheGivenDuration() throws {
        let scratch = try Scratch()
        let result = try capture(
            ["record", "-o", "clip.mp4", "-i", "test-pattern", "--audio", "test-tone", "--duration", "1.5", "--size", "320x240"], in: scratch.path)
        #expect(result.status == 0, "\(result.error)")
        #expect(!result.error.contains("recording clip.mp4"), "no progress line when stderr is not a terminal")
        let file = try probe(scratch.file("clip.mp4"))
        #expect(abs(file.duration - 1.5) <= 1.0 / 30.0 + 0.001, "duration \(file.duration)")
        #expect(file.streams == ["h264", "aac"])
        let existing = try capture(["record", "-o", "clip.mp4", "-i", "test-pattern", "--no-audio", "--duration", "0.5"], in: scratch.path)
        #expect(existing.status == 1 && existing.error.contains("already exists"))
        #expect(try capture(["record", "-i", "test-pattern"], in: scratch.path).status == 64)
        #expect(try capture(["record", "-o", "x.mp4", "--audio", "test-tone", "--no-audio"], in: scratch.path).status == 64)
    }

    @Test func sigintFinishesTheFile() async throws {
        let scratch = try Scratch()
        let child = try ChildProcess(["/bin/sh", "-c", "cd \"$0\" && exec \"$1\" record -o take.mkv -i test-pattern --no-audio", scratch.path, captureBinary])
        // The file being written holds a second of frames (read by ffprobe), however slow the start.
        #expect(await waitUntil(timeout: .seconds(60), every: .milliseconds(200)) { videoPacketsOnDisk(scratch.file("take.mkv")) >= 30 })
        child.signal(SIGINT)
        let result = child.finish()
        #expect(result.status == 0, "\(result.error)")
        let file = try probe(scratch.file("take.mkv"))
        #expect(file.duration > 0.8, "\(file.duration)")
        #expect(file.streams == ["h264"])
    }

    @Test func aKilledRecordingStillPlays() async throws {
        let scratch = try Scratch()
        let child = try ChildProcess([
            "/bin/sh", "-c", "cd \"$0\" && exec \"$1\" record -o killed.mp4 -i test-pattern --audio test-tone", scratch.path, captureBinary,
        ])
        // Two one-second fragments are on disk (read by ffprobe) before the kill.
        #expect(await waitUntil(timeout: .seconds(60), every: .milliseconds(200)) { videoPacketsOnDisk(scratch.file("killed.mp4")) >= 45 })
        child.signal(SIGKILL)
        _ = child.finish()
        // Fragments of one second: what was written before the kill plays.
        let file = try probe(scratch.file("killed.mp4"))
        #expect(file.duration >= 1.0, "\(file.duration)")
        let decode = try tool(["ffmpeg", "-v", "error", "-i", scratch.file("killed.mp4"), "-f", "null", "-"])
        #expect(decode.status == 0, "\(decode.output)")
    }
}

/// The video packets ffprobe reads in a file another process is writing (0 when there is none yet or it
/// cannot be read yet): how a test waits for a recording of another process to hold some frames.
func videoPacketsOnDisk(_ path: String) -> Int {
    guard FileManager.default.fileExists(atPath: path),
        let result = try? tool([
            "ffprobe", "-v", "quiet", "-select_streams", "v:0", "-count_packets", "-show_entries", "stream=nb_read_packets", "-of", "csv=p=0", path,
        ])
    else { return 0 }
    return Int(result.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
}
