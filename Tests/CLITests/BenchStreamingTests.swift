import CaptureTestSupport
import Foundation
import Testing

/// `capture bench --only streaming`, small: 2 sessions for 5 s.
@Suite struct BenchStreamingTests {
    @Test func theStreamingBenchmarkReportsItsFiguresAndDeliversEveryEvent() throws {
        let result = try capture(["bench", "--only", "streaming", "--streams", "2", "--stream-seconds", "5", "--stream-pattern", "ball"])
        #expect(result.status == 0, "\(result.error)")
        let lines = result.output.split(separator: "\n").map(String.init)
        #expect(lines.contains { $0.hasPrefix("streaming: CPU per stream (this process): ") && $0.contains("2 sessions x 640x480 30 fps test pattern 'ball'") })
        #expect(lines.contains { $0.hasPrefix("streaming: frames not handed on by the framework (all streams): ") && $0.contains("clients 1, 1") })
        #expect(lines.contains { $0.hasPrefix("streaming: video bit rate per stream: ") })
        let events = try #require(lines.first { $0.hasPrefix("streaming: events delivered: ") })
        #expect(events.contains("ratio 1.00"), "\(events)")
        let bad = try capture(["bench", "--only", "streaming", "--stream-pattern", "plaid"])
        #expect(bad.status == 64)
        #expect(bad.error.contains("--stream-pattern must be"))
    }
}
