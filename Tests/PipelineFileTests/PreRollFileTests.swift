import Capture
import CaptureTestSupport
import Foundation
import Testing

@testable import PipelineFile

@Suite("pre-roll in .pipeline files", .serialized)
struct PreRollFileTests {
    static let text = """
        session, preset=cif352x288
        input, name=camera, device=test-pattern
        output, name=movie, kind=movie, location="pre.mp4", pre-roll=2s
        start
        wait, duration=4
        start-recording, output=movie
        wait, duration=1
        stop-recording, output=movie
        wait, event=recording-finished

        """

    @Test func preRollRoundTripsAndReachesTheMovieSettings() throws {
        let document = try parsed(Self.text, file: "pre.pipeline")
        guard case .movie(let movie) = document.outputs.first?.settings else { Issue.record("no movie output"); return }
        #expect(movie.preRoll == .seconds(2))
        #expect(try parsed(document.pipelineText, file: "again.pipeline") == document)
        #expect(throws: PipelineDiagnostics.self) { try PipelineDocument.parse(Self.text.replacingOccurrences(of: "pre-roll=2s", with: "pre-roll=soon")) }
    }

    /// A recording started 4 s in holds the 2 s before it (ffprobe counts the frames).
    @Test func aScenarioRecordingBeginsBeforeItsStartRecording() async throws {
        let directory = try TemporaryDirectory()
        let runner = ScenarioRunner(
            document: try parsed(Self.text, file: "pre.pipeline"),
            options: ScenarioRunner.Options(durationLimit: .seconds(30), outputDirectory: directory.path))
        let result = await runner.run()
        #expect(result.exitCode == 0, "\(String(describing: result.failure))")
        let probe = try ChildProcess([
            "ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries", "stream=nb_read_frames",
            "-of", "csv=p=0", directory.path("pre.mp4"),
        ]).finish()
        let frames = Int(probe.output.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        // 1 s after the start, 2 to 3 s before it.
        #expect(frames >= 85 && frames <= 125, "\(frames) frames")
    }
}
