import Capture
import Foundation
import Testing

@testable import PipelineFile

@Suite("kind=stream in .pipeline files")
struct StreamOutputFileTests {
    @Test func streamOutputsReadIntoTheirSettingsAndBuildCaptureStreamOutputs() throws {
        let document = try parsed(
            """
            input, name=camera, device=test-pattern
            input, name=mic, device=test-tone
            output, name=live, kind=stream, serve="rtsp://127.0.0.1:8554/live", audio-codec=opus
            output, name=up, kind=stream, publish="srt://127.0.0.1:9000?mode=listener&latency=120", bitrate="2Mbps", size=640x480
            """)
        #expect(
            document.outputs.map(\.settings) == [
                .stream(StreamOutputSettings(serve: "rtsp://127.0.0.1:8554/live", audioCodec: .opus)),
                .stream(
                    StreamOutputSettings(
                        publish: "srt://127.0.0.1:9000?mode=listener&latency=120", bitrate: 2_000_000,
                        size: Size(width: 640, height: 480))),
            ])
        let session = try SessionBuilder(document: document).makeSession().session
        let live = try #require(session.output(named: "live") as? CaptureStreamOutput)
        #expect(live.destination == .serve(try StreamURL("rtsp://127.0.0.1:8554/live")))
        #expect(live.settings.audioCodec == .opus)
        let up = try #require(session.output(named: "up") as? CaptureStreamOutput)
        guard case .publish(let url) = up.destination else { Issue.record("not published"); return }
        #expect(url.srtMode == .listener && url.latencyMilliseconds == 120 && url.port == 9000)
        #expect(up.settings.bitRate == 2_000_000 && up.settings.size == Size(width: 640, height: 480))
        // Written back, the file reads back the same.
        #expect(try parsed(document.pipelineText).outputs == document.outputs)
        #expect(try PipelineDocument(session: session).outputs.map(\.kind) == [.stream, .stream])
    }

    @Test func invalidStreamStatementsAreReportedAtTheirKey() {
        let text = diagnostics(
            """
            input, name=camera, device=test-pattern
            output, name=a, kind=stream
            output, name=b, kind=stream, serve="rtsp://127.0.0.1:8554/a", publish="srt://127.0.0.1:9000"
            output, name=c, kind=stream, serve="srt://127.0.0.1:9000"
            output, name=d, kind=stream, publish="rtsp://127.0.0.1:8554/a;reboot"
            output, name=e, kind=stream, publish="srt://127.0.0.1:9000?exec=x"
            output, name=f, kind=stream, serve="rtsp://127.0.0.1:8554/f", bitrate=10
            output, name=g, kind=stream, serve="rtsp://127.0.0.1:8554/g", location="x.mp4"
            """)
        #expect(text.contains("test.pipeline:2:1: error: a stream output needs serve="))
        #expect(text.contains("test.pipeline:3:") && text.contains("serve and publish exclude each other"))
        #expect(text.contains("test.pipeline:4:") && text.contains("serve= takes an rtsp:// URL"))
        #expect(text.contains("test.pipeline:5:") && text.contains("the path may hold only"))
        #expect(text.contains("test.pipeline:6:") && text.contains("'exec' is not an SRT option"))
        #expect(text.contains("test.pipeline:7:") && text.contains("bitrate must be from 10000"))
        #expect(text.contains("test.pipeline:8:") && text.contains("location"))
    }

    @Test func streamEventsCanBeWaitedForAndExpected() throws {
        let document = try parsed(
            """
            input, name=camera, device=test-pattern
            output, name=live, kind=stream, serve="rtsp://127.0.0.1:8554/live"
            start
            wait, event=stream-ready, output=live
            stop
            expect, event=stream-client-connected, count=0
            expect, event=stream-disconnected, count=0
            """)
        #expect(document.expectations.count == 2)
    }
}
