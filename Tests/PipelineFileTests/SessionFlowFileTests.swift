import Capture
import CaptureControl
import CaptureTestSupport
import Foundation
import Testing

@testable import PipelineFile

/// Issue #29 in `.pipeline` files: `default` and its fallback, a failed configuration block, picking
/// from the album, where outputs go and `overwrite=`.
@Suite("Issue 29: defaults, blocks, picks, outputs", .serialized)
struct SessionFlowFileTests {
    static let photoMode = """
        session, preset=cif352x288
        input, name=camera, device=test-pattern
        output, name=preview, kind=preview, sink=none
        output, name=photo, kind=photo, location="shot_%03d.jpg"

        """

    /// The recipe 9-7 block with a microphone that is not there.
    static let missingMicrophoneBlock = """
        begin-configuration
        remove-output, name=photo
        add-input, name=microphone, device="pulse:no-such-microphone", media=audio
        add-output, name=movie, kind=movie, location="clip.mp4"
        """

    // MARK: Item 1

    @Test func defaultWithoutACameraIsAnErrorAndTheFallbackSaysItStoodIn() async throws {
        guard CaptureDevice.default(for: .video) == nil else { return }  // a machine with a camera opens it
        let directory = try TemporaryDirectory()
        let bare = ScenarioRunner(
            document: try parsed("input, name=camera, device=default\noutput, name=preview, kind=preview, sink=none\n"),
            options: ScenarioRunner.Options(durationLimit: .seconds(1), outputDirectory: directory.path))
        let failed = await bare.run()
        #expect(failed.ending == .setupFailed && failed.exitCode == 1)
        #expect(failed.failure?.errorName == "no-device-available" && failed.failure?.action == "input")
        #expect(failed.failure?.message.contains("fallback=test-pattern") == true)

        let text = "input, name=camera, device=default, fallback=test-pattern\noutput, name=preview, kind=preview, sink=none\n"
        let fallback = ScenarioRunner(
            document: try parsed(text), options: ScenarioRunner.Options(durationLimit: .seconds(1), outputDirectory: directory.path))
        let result = await fallback.run()
        #expect(result.exitCode == 0)
        let notices = result.events.compactMap { event -> String? in if case .notice(let text) = event.kind { text } else { nil } }
        #expect(
            notices == [
                "input 'camera': no-device-available: no video capture device is available on this machine, so there is no default one; using the fallback 'test-pattern'"
            ])
        #expect(result.events.contains { $0.name == "session-started" })
    }

    /// `--set camera.device=test-pattern` on a file that falls back to the test pattern (make run's, the
    /// recipes', capture serve's) names the device outright: the fallback is moot, not an error.
    @Test func anOverrideMayNameTheFallbackItself() throws {
        let text = "input, name=camera, device=default, fallback=test-pattern\noutput, name=preview, kind=preview, sink=none\n"
        let document = try parsed(text, options: ParseOptions(overrides: ["camera.device=test-pattern"]))
        #expect(document.inputs[0].device == "test-pattern" && document.inputs[0].fallback == "test-pattern")
        #expect(diagnostics("input, name=camera, device=test-pattern, fallback=test-pattern\n").contains("the fallback is the device itself"))
    }

    // MARK: Item 4

    @Test func aBlockExpectedToFailLeavesTheCheckersSessionAsItWas() throws {
        let valid =
            Self.photoMode + "start\n" + Self.missingMicrophoneBlock + "\ncommit-configuration, expect-error=device-not-found\ncapture-photo, output=photo\n"
        let document = try parsed(valid)
        guard case .configuration(let block) = document.scenario[1].action else {
            Issue.record("no block: \(document.scenario)")
            return
        }
        #expect(block.commitExpectedError == .named("device-not-found") && block.steps.count == 3)
        // Without expect-error the block is expected to succeed: the photo output is gone after it.
        let invalid = Self.photoMode + "start\n" + Self.missingMicrophoneBlock + "\ncommit-configuration\ncapture-photo, output=photo\n"
        #expect(diagnostics(invalid).contains("output 'photo' was removed at 7:1"))
        // The movie output the failed block would have added is not in the session after it.
        let movie = Self.photoMode + "start\n" + Self.missingMicrophoneBlock + "\ncommit-configuration, expect-error=true\nstart-recording, output=movie\n"
        #expect(diagnostics(movie).contains("no output named 'movie'"))
    }

    @Test func aFailedStatementDropsTheBlockAndTheScenarioGoesOnWhenTheCommitExpectsIt() async throws {
        let directory = try TemporaryDirectory()
        let text =
            Self.photoMode + "start\n" + Self.missingMicrophoneBlock + """

                commit-configuration, expect-error=device-not-found
                capture-photo, output=photo
                stop
                expect, event=photo-saved, count=1
                expect, event=configuration-committed, count=0
                """
        let runner = ScenarioRunner(
            document: try parsed(text), options: ScenarioRunner.Options(durationLimit: .seconds(30), outputDirectory: directory.path))
        let result = await runner.run()
        #expect(result.exitCode == 0, "\(result.failure?.description ?? "") \(result.failedExpectations)")
        let failures = result.events.compactMap { event -> ActionFailure? in if case .actionFailed(let failure) = event.kind { failure } else { nil } }
        #expect(failures.count == 1)
        #expect(failures.first?.expected == true && failures.first?.action == "add-input" && failures.first?.location?.line == 8)
        #expect(failures.first?.errorName == "device-not-found" && failures.first?.message.contains("the configuration block was dropped") == true)
        #expect(try ChildProcess(["identify", "-format", "%wx%h %m", directory.path("shot_001.jpg")]).finish().output == "352x288 JPEG")
        #expect(!FileManager.default.fileExists(atPath: directory.path("clip.mp4")))
    }

    @Test func anUnexpectedFailureInABlockStopsTheScenarioWithTheSessionAsItWas() async throws {
        let directory = try TemporaryDirectory()
        let text =
            Self.photoMode + "start\n" + Self.missingMicrophoneBlock + "\ncommit-configuration, expect-error=no-device-available\ncapture-photo, output=photo\n"
        let runner = ScenarioRunner(
            document: try parsed(text), options: ScenarioRunner.Options(durationLimit: .seconds(30), outputDirectory: directory.path))
        let result = await runner.run()
        #expect(result.exitCode == 1 && result.ending == .actionFailed)
        #expect(result.failure?.action == "add-input" && result.failure?.location?.line == 8 && result.failure?.expected == false)
        #expect(result.failure?.message.hasSuffix("(commit-configuration's expect-error wanted no-device-available)") == true)
        // The block never reached the session: the photo output is still there, nothing was committed.
        #expect(runner.session?.outputs.map(\.name) == ["preview", "photo"])
        #expect(!result.events.contains { $0.name == "configuration-committed" })
    }

    // MARK: Item 5

    @Test func picksAreCheckedBeforeUse() {
        let base = Self.photoMode
        #expect(diagnostics(base + "start\npick-from-library, name=clip, kind=video\ntrim-video, picked=clip, from=0, to=1, location=\"t.mp4\"\n") == "")
        #expect(
            diagnostics(base + "start\ntrim-video, picked=clip, from=0, to=1, location=\"t.mp4\"\n").contains("nothing is picked as 'clip' before this line"))
        #expect(
            diagnostics(base + "start\npick-from-library, name=shot, kind=photo\ngenerate-thumbnail, picked=shot, at=1, location=\"t.jpg\"\n")
                .contains("generate-thumbnail reads a video; 'shot' is the photo picked at 6:1"))
        #expect(
            diagnostics(base + "start\npick-from-library, name=shot, file=\"IMG_0001.jpg\"\ntrim-video, picked=shot, from=0, to=1, location=\"t.mp4\"\n")
                .contains("'shot' is the photo picked"))
        #expect(diagnostics(base + "start\npick-from-library, name=x, kind=video, file=\"a.jpg\"\n").contains("file 'a.jpg' is a photo but kind is video"))
        #expect(diagnostics(base + "start\npick-from-library, name=x, file=\"../a.mp4\"\n").contains("not a path"))
        #expect(diagnostics(base + "start\npick-from-library, kind=video\n").contains("name"))
        #expect(
            diagnostics(base + "start\npick-from-library, name=c, kind=video\ntrim-video, picked=c, input=\"a.mp4\", from=0, to=1, location=\"t.mp4\"\n")
                .contains("give one of input=, recording= and picked="))
    }

    @Test func aPickWritesBackAsItReads() throws {
        let text =
            Self.photoMode
            + "start\npick-from-library, name=clip, kind=video, file=\"a.mp4\"\ngenerate-thumbnail, picked=clip, at=\"50%\", location=\"t.jpg\"\n"
        let document = try parsed(text)
        #expect(try parsed(document.pipelineText) == document)
        #expect(document.pipelineText.contains("pick-from-library, name=clip, kind=video, file=a.mp4"))
        #expect(document.pipelineText.contains("generate-thumbnail, picked=clip"))
        guard case .pickFromLibrary(let pick) = document.scenario[1].action else {
            Issue.record("not a pick: \(document.scenario[1])")
            return
        }
        #expect(pick == LibraryPick(name: "clip", kind: .video, file: "a.mp4"))
        #expect(try document.scenario[1].action.command(builder: SessionBuilder(document: document))?.name == "pick-from-library")
    }

    // MARK: Item 6

    @Test func outputsGoToTheCurrentDirectoryAndInputsResolveAgainstTheFile() throws {
        let text = "input, name=camera, device=\"file:clip.mp4\"\noutput, name=photo, kind=photo, location=\"a.jpg\"\n"
        let document = try parsed(text, file: "/nonexistent/shipped/p.pipeline", options: ParseOptions(checksFileDevices: false))
        let builder = SessionBuilder(document: document)
        let current = FileManager.default.currentDirectoryPath
        #expect(builder.outputFolder == current)
        #expect(builder.resolvedOutputLocation("a.jpg") == current + "/a.jpg")
        #expect(builder.resolvedDeviceSpec("file:clip.mp4") == "file:/nonexistent/shipped/clip.mp4")
        #expect(builder.resolvedInputPath("logo.png") == "/nonexistent/shipped/logo.png")
        #expect(SessionBuilder(document: document, outputDirectory: "/tmp/out").resolvedOutputLocation("a.jpg") == "/tmp/out/a.jpg")
    }

    @Test func overwriteIsAKeyOfPhotoAndMovieOutputs() throws {
        let text = """
            input, name=camera, device=test-pattern
            output, name=photo, kind=photo, location="a.jpg", overwrite=true
            output, name=movie, kind=movie, location="a.mp4", overwrite=true
            output, name=keep, kind=photo, location="b.jpg"

            """
        let document = try parsed(text)
        #expect(try parsed(document.pipelineText) == document)
        let builder = SessionBuilder(document: document)
        let photo = try #require(try builder.makeOutput(document.outputs[0]) as? CapturePhotoOutput)
        let movie = try #require(try builder.makeOutput(document.outputs[1]) as? CaptureMovieFileOutput)
        let keep = try #require(try builder.makeOutput(document.outputs[2]) as? CapturePhotoOutput)
        #expect(photo.defaults.overwritesExistingFile && movie.settings.overwritesExistingFile && !keep.defaults.overwritesExistingFile)
        #expect(
            diagnostics("input, name=camera, device=test-pattern\noutput, name=p, kind=photo, location=\"n_%d.jpg\", overwrite=true\n")
                .contains("overwrite=true replaces the file at a plain location"))
        #expect(diagnostics("input, name=camera, device=test-pattern\noutput, name=f, kind=frames, overwrite=true\n").contains("overwrite"))
    }
}
