import CaptureTestSupport
import Foundation
import Testing

@Suite(.serialized) struct StreamCommandTests {
    @Test func servesAStreamThatFFprobeReadsAtTheAskedSize() throws {
        let url = "rtsp://127.0.0.1:\(freeLoopbackPort())/live"
        let child = try ChildProcess([captureBinary, "stream", "-i", "test-pattern", "--serve", url, "--size", "640x480", "--duration", "30", "--json"])
        // Bounded: ffprobe retries until the server answers (the release binary starts in well under a second).
        var probe = (status: Int32(1), output: "")
        for _ in 0..<20 {
            probe = try tool([
                "timeout", "20", "ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-select_streams", "v:0",
                "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", url,
            ])
            if probe.status == 0 { break }
            usleep(250_000)
        }
        child.signal(SIGINT)
        let result = child.finish()
        #expect(probe.output.trimmingCharacters(in: .whitespacesAndNewlines) == "h264,640,480")
        #expect(result.status == 0, "\(result.error)")
        let lines = result.output.split(separator: "\n")
        #expect(lines.contains { $0.contains("\"event\": \"stream-ready\"") && $0.contains(url) })
        #expect(lines.contains { $0.contains("\"event\": \"stream-client-connected\"") })
        #expect(result.error.contains("frames"))
    }

    /// `--record`: the same picture recorded while it is served, from the stream's encoder.
    @Test func recordsWhatItServes() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("capture-stream-record-\(getpid())").path
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = folder + "/clip.mp4"
        let url = "rtsp://127.0.0.1:\(freeLoopbackPort())/live"
        let result = try capture(["stream", "-i", "test-pattern", "--serve", url, "--size", "640x480", "--record", file, "--duration", "3", "--json"])
        #expect(result.status == 0, "\(result.error)")
        #expect(result.output.contains("\"event\": \"recording-finished\"") && result.output.contains("\"success\": true"), "\(result.output)")
        let probe = try tool([
            "ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height,nb_read_frames",
            "-of", "csv=p=0", file,
        ])
        let fields = probe.output.trimmingCharacters(in: .whitespacesAndNewlines).split(separator: ",")
        #expect(fields.prefix(3).joined(separator: ",") == "h264,640,480", "\(probe.output)")
        #expect((fields.last.flatMap { Int($0) } ?? 0) >= 60, "\(probe.output)")
        // An existing file is never overwritten.
        let again = try capture(["stream", "-i", "test-pattern", "--serve", url, "--record", file, "--duration", "1"])
        #expect(again.status != 0 && again.error.contains("clip.mp4"), "\(again.error)")
    }

    @Test(arguments: [
        (["stream", "-i", "test-pattern"], Int32(64), "--serve URL or --publish URL is required"),
        (["stream", "--serve", "rtsp://127.0.0.1:8554/a", "--publish", "srt://127.0.0.1:9000"], 64, "exclude each other"),
        (["stream", "--serve", "rtsp://127.0.0.1:8554/a", "--audio-codec", "mp3", "--audio", "test-tone"], 64, "aac or opus"),
        (["stream", "-i", "test-pattern", "--serve", "rtsp://127.0.0.1:8554/$(reboot)"], 65, "the path may hold only"),
        (["stream", "-i", "test-pattern", "--publish", "srt://127.0.0.1:9000?mode=rendezvous"], 65, "mode must be caller or listener"),
        (["stream", "-i", "test-pattern", "--serve", "srt://127.0.0.1:9000"], 65, "serve= takes an rtsp:// URL"),
    ])
    func refusesWhatItCannotUse(_ arguments: [String], _ status: Int32, _ message: String) throws {
        let result = try capture(arguments)
        #expect(result.status == status)
        #expect(result.error.contains(message), "\(result.error)")
    }
}
