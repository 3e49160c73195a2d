import CaptureTestSupport
import Foundation
import Testing

@Suite(.serialized) struct StreamCommandTests {
    /// A port of 127.0.0.1 that nothing listens on now.
    func freePort() -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) } }
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    @Test func servesAStreamThatFFprobeReadsAtTheAskedSize() throws {
        let url = "rtsp://127.0.0.1:\(freePort())/live"
        let child = try ChildProcess([captureBinary, "stream", "-i", "test-pattern", "--serve", url, "--size", "640x480", "--duration", "30", "--json"])
        // Bounded: ffprobe retries until the server answers (the release binary starts in well under a second).
        var probe = (status: Int32(1), output: "")
        for _ in 0..<20 {
            probe = try tool(["timeout", "20", "ffprobe", "-v", "error", "-rtsp_transport", "tcp", "-select_streams", "v:0",
                              "-show_entries", "stream=codec_name,width,height", "-of", "csv=p=0", url])
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
