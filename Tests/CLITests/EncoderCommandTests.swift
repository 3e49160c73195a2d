import CaptureTestSupport
import Foundation
import Testing

/// The H.264 encoder choice as the CLI shows it and takes it.
@Suite struct EncoderCommandTests {
    @Test func devicesAndCompileShowTheChoice() throws {
        let devices = try capture(["devices"])
        #expect(devices.status == 0)
        #expect(devices.output.split(separator: "\n").contains { $0.hasPrefix("H.264 encoder: ") })
        let scratch = try Scratch()
        try scratch.write(
            "forced.pipeline",
            """
            input, name=camera, device=test-pattern
            output, name=movie, kind=movie, location="m.mp4", encoder=openh264enc
            output, name=live, kind=stream, serve="rtsp://127.0.0.1:8554/live"

            """)
        let compiled = try capture(["compile", scratch.file("forced.pipeline")])
        #expect(compiled.status == 0, "\(compiled.error)")
        #expect(compiled.output.contains("openh264enc name=movie_encode"))
        #expect(compiled.output.contains("# H.264 encoder: "))
        try scratch.write(
            "bad.pipeline",
            """
            input, name=camera, device=test-pattern
            output, name=movie, kind=movie, encoder=fastest

            """)
        let bad = try capture(["validate", scratch.file("bad.pipeline")])
        #expect(bad.status == 65)
        #expect(bad.error.contains("encoder must be auto"))
    }

    @Test func recordTakesAForcedEncoder() throws {
        let scratch = try Scratch()
        let result = try capture([
            "record", "-o", scratch.file("o.mp4"), "-i", "test-pattern", "--size", "352x288", "--duration", "1",
            "--encoder", "openh264enc",
        ])
        #expect(result.status == 0, "\(result.error)")
        let probe = try tool([
            "ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name", "-of", "csv=p=0", scratch.file("o.mp4"),
        ])
        #expect(probe.output.trimmingCharacters(in: .whitespacesAndNewlines) == "h264")
        let bad = try capture(["record", "-o", scratch.file("x.mp4"), "-i", "test-pattern", "--encoder", "fastest"])
        #expect(bad.status == 64)
        #expect(bad.error.contains("--encoder must be auto"))
    }
}
