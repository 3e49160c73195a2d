import Capture
import Foundation
import Testing

@testable import PipelineFile

@Suite("Reading .pipeline files")
struct ParserTests {
    @Test func contractExampleModel() throws {
        let document = try parsed(contractExample, file: "recipe.pipeline")
        #expect(document.session.preset == .hd1280x720)
        #expect(document.inputs == [InputDeclaration(name: "camera", device: "default")])
        #expect(
            document.outputs == [
                OutputDeclaration(name: "photo", settings: .photo(PhotoOutputSettings(codec: .jpeg, quality: 90, location: "IMG_%04d.jpg"))),
                OutputDeclaration(name: "preview", settings: .preview(PreviewOutputSettings())),
            ])
        let actions = document.scenario.map(\.action)
        #expect(
            actions == [
                .start,
                .capturePhoto(PhotoCaptureRequest(output: "photo")),
                .wait(.event(EventMatcher(event: "photo-saved"), count: nil, timeout: nil)),
                .configuration(
                    ConfigurationBlock(steps: [
                        ScenarioStep(.removeOutput(name: "photo")),
                        ScenarioStep(.addInput(InputDeclaration(name: "mic", device: "default-audio"))),
                        ScenarioStep(.addOutput(OutputDeclaration(name: "movie", settings: .movie(MovieOutputSettings(location: "clip.mp4"))))),
                    ])),
                .startRecording(output: "movie", location: nil),
                .wait(.duration(.seconds(3))),
                .stopRecording(output: "movie"),
                .wait(.event(EventMatcher(event: "recording-finished"), count: nil, timeout: nil)),
                .stop,
                .expect(Expectation(EventMatcher(event: "photo-saved"), .exactly(1))),
                .expect(Expectation(EventMatcher(event: "recording-finished"), .exactly(1))),
            ])
        #expect(document.expectations.count == 2)
        #expect(!document.isFreeRunning)
        #expect(document.sourcePath == "recipe.pipeline")
    }

    @Test func configureDeviceTakesTheExtensionKeys() throws {
        let document = try parsed(
            """
            input, name=camera, device=test-pattern
            start
            configure-device, input=camera, lens-position=0.25, white-balance-temperature=3200, exposure-duration="10ms", gain=4, controls={ "brightness=200", "power_line_frequency=50 Hz" }
            configure-device, input=camera, controls="zoom_absolute=150"
            """)
        #expect(
            document.scenario.map(\.action) == [
                .start,
                .configureDevice(
                    DeviceConfiguration(
                        input: "camera", lensPosition: 0.25, exposureDuration: .milliseconds(10), gain: 4,
                        whiteBalanceTemperature: 3200,
                        controls: [
                            ControlAssignment(key: "brightness", value: "200"),
                            ControlAssignment(key: "power_line_frequency", value: "50 Hz"),
                        ])),
                .configureDevice(DeviceConfiguration(input: "camera", controls: [ControlAssignment(key: "zoom_absolute", value: "150")])),
            ])
    }

    @Test func configureDeviceRefusesSettingsThatContradictTheirModeAndBadControls() {
        let text = diagnostics(
            """
            input, name=camera, device=test-pattern
            start
            configure-device, input=camera, focus-mode=continuous, lens-position=0.5
            configure-device, input=camera, exposure-mode=locked, gain=2
            configure-device, input=camera, white-balance-mode=continuous, white-balance-temperature=3000
            configure-device, input=camera, torch-mode=off, torch-level=0.5
            configure-device, input=camera, controls={ "Brightness 200", 5 }
            configure-device, input=camera, white-balance-temperature=100
            """)
        #expect(text.contains("test.pipeline:3:56: error: lens-position sets focus-mode=locked; it cannot go with focus-mode=continuous"))
        #expect(text.contains("test.pipeline:4:55: error: gain sets exposure-mode=custom; it cannot go with exposure-mode=locked"))
        #expect(text.contains("white-balance-temperature sets white-balance-mode=locked; it cannot go with white-balance-mode=continuous"))
        #expect(text.contains("torch-level sets torch-mode=on; it cannot go with torch-mode=off"))
        #expect(text.contains("each item of controls must be \"KEY=VALUE\" in double quotes"))
        #expect(text.contains("white-balance-temperature must be an integer from 1000 to 40000"))
    }

    @Test func locationsOfStatementsBlocksAndCommits() throws {
        let document = try parsed(contractExample, file: "recipe.pipeline")
        #expect(document.session.location == SourceLocation(file: "recipe.pipeline", line: 2, column: 1))
        #expect(document.outputs[1].location?.line == 5)
        #expect(document.scenario[0].location?.line == 7)
        guard case .configuration(let block) = document.scenario[3].action else {
            Issue.record("expected a configuration block")
            return
        }
        #expect(document.scenario[3].location?.line == 10)
        #expect(block.commitLocation?.line == 14)
        #expect(block.steps.map { $0.location?.line } == [11, 12, 13])
    }

    @Test func commentsQuotesContinuationsAndLineEndings() throws {
        let text =
            "input, name=camera, \\\r\n   device=test-pattern   # the camera\r\n"
            + "output, name=preview, kind=preview;\r\n"
            + "overlay, output=preview, text=\"# is text, \\\"quoted\\\"\" # a comment\r\n"
            + "\r\n   # only a comment\r\n"
        let document = try parsed(text)
        #expect(document.inputs == [InputDeclaration(name: "camera", device: "test-pattern")])
        #expect(document.overlays.first?.fields.text == "# is text, \"quoted\"")
        #expect(document.inputs[0].location == SourceLocation(file: "test.pipeline", line: 1, column: 1))
        // A key on a continuation line is located on its own line.
        let statement = try #require(statements(text).first)
        #expect(statement.location(of: "device") == SourceLocation(file: "test.pipeline", line: 2, column: 4))
    }

    @Test func valuesAreReadAsWritten() throws {
        let text = #"""
            input, name=camera, device=test-pattern
            output, name=movie, kind=movie, bitrate="2.5Mbps", max-duration="1.5m", max-file-size=7000000000, min-free-disk-space="1KiB", fragment-interval=0.25
            output, name=preview, kind=preview
            start
            wait, duration="500ms"
            wait, duration=2
            wait, event=code-detected, value=0123, type=ean-13
            wait, event=code-detected, value="90", count=2, timeout="1h"
            start, expect-error=true
            start, expect-error=device-busy
            start, expect-error=false
            """#
        let document = try parsed(text)
        guard case .movie(let movie) = document.outputs[0].settings else {
            Issue.record("expected a movie output")
            return
        }
        #expect(movie.bitrate == 2_500_000)
        #expect(movie.maxDuration == .seconds(90))
        #expect(movie.maxFileSize == 7_000_000_000)
        #expect(movie.minFreeDiskSpace == 1024)
        #expect(movie.fragmentInterval == .milliseconds(250))
        let steps = document.scenario
        #expect(steps[1].action == .wait(.duration(.milliseconds(500))))
        #expect(steps[2].action == .wait(.duration(.seconds(2))))
        // Unquoted words keep their spelling (0123 is not the integer 123); quoted text stays text.
        #expect(steps[3].action == .wait(.event(EventMatcher(event: "code-detected", type: "ean-13", value: "0123"), count: nil, timeout: nil)))
        #expect(steps[4].action == .wait(.event(EventMatcher(event: "code-detected", value: "90"), count: 2, timeout: .seconds(3600))))
        #expect(steps[5].expectedError == .any)
        #expect(steps[6].expectedError == .named("device-busy"))
        #expect(steps[7].expectedError == nil)
    }

    /// A metadata output's keys reach `CaptureMetadataOutput`; `discard-late-frames` is true unless given.
    @Test func metadataKeysReachTheOutput() throws {
        for (key, discards) in [("", true), (", discard-late-frames=false", false), (", discard-late-frames=true", true)] {
            let text = "input, name=camera, device=test-pattern\noutput, name=codes, kind=metadata, delivery=every-frame\(key)\n"
            let session = try SessionBuilder(document: parsed(text)).makeSession().session
            let codes = try #require(session.output(named: "codes") as? CaptureMetadataOutput)
            #expect(codes.discardsLateFrames == discards, "\(key)")
            #expect(codes.delivery == .everyFrame)
        }
        let bad = "input, name=camera, device=test-pattern\noutput, name=codes, kind=metadata, discard-late-frames=sometimes\n"
        #expect(diagnostics(bad).contains("discard-late-frames"))
    }

    @Test func everyFeatureParses() throws {
        let document = try parsed(everyFeature, options: ParseOptions(checksFileDevices: false))
        #expect(document.inputs.map(\.name) == ["camera", "mic", "replay"])
        #expect(
            document.inputs[0].options == InputOptions(pattern: "ball", size: Size(width: 1280, height: 720), frameRate: FrameRate(30), failAfterFrames: 500))
        #expect(document.inputs[2].frameRate == FrameRate(30000, 1001))
        #expect(document.outputs.map(\.kind) == [.photo, .movie, .metadata, .frames, .preview])
        #expect(document.outputs[0].connection == ConnectionSettings(input: "camera", rotation: 90, isMirrored: true))
        #expect(
            document.outputs[2].settings
                == .metadata(
                    MetadataOutputSettings(
                        types: [.qr, .ean13, .code128], rectOfInterest: NormalizedRect(x: 0, y: 0.25, width: 1, height: 0.5), backend: .zbar,
                        delivery: .everyFrame, discardLateFrames: false)))
        #expect(document.overlays[0].fields.text == #"Hello, "world" # not a comment"#)
        guard case .repeat(let count, let steps) = document.scenario[10].action else {
            Issue.record("expected a repeat, got \(document.scenario[10].action)")
            return
        }
        #expect(count == 2)
        #expect(steps.map(\.action.statementName) == ["begin-configuration", "wait", "remove-output"])
        // Repeated statements are located inside the repeat line, where each is written.
        #expect(steps.map { $0.location?.line } == [30, 30, 30])
        #expect(steps[1].location?.column == 127)
    }

    @Test func overridesApplyBeforeChecking() throws {
        let text = "input, name=camera, device=default\noutput, name=frames, kind=frames, location=\"f/%03d.png\"\n"
        let options = ParseOptions(overrides: [
            "camera.device=test-pattern", "camera.pattern=snow", "session.preset=vga640x480",
            "frames.location=my frames/%04d.jpg", "frames.max-rate=2",
        ])
        let document = try parsed(text, options: options)
        #expect(document.inputs == [InputDeclaration(name: "camera", device: "test-pattern", pattern: "snow")])
        #expect(document.session.preset == .vga640x480)
        #expect(document.outputs[0].settings == .frames(FramesOutputSettings(location: "my frames/%04d.jpg", maxRate: 2)))
    }

    @Test func fileDevicesResolveAgainstTheFilesDirectory() throws {
        let directory = try TemporaryDirectory()
        #expect(FileManager.default.createFile(atPath: directory.path("clip.mp4"), contents: Data()))
        let file = directory.path("replay.pipeline")
        try "input, name=replay, device=file:clip.mp4\n".write(toFile: file, atomically: true, encoding: .utf8)
        let document = try PipelineDocument.load(path: file)
        #expect(document.inputs[0].device == "file:clip.mp4")
        #expect(document.inputs[0].isVirtualDevice == true)
        let builder = SessionBuilder(document: document, outputDirectory: "/out")
        #expect(builder.resolvedDeviceSpec("file:clip.mp4") == "file:" + directory.path("clip.mp4"))
        #expect(builder.resolvedOutputLocation("shots/%03d.png") == "/out/shots/%03d.png")
        // Outputs never go next to the file: without an output directory, into the current one.
        #expect(SessionBuilder(document: document).resolvedOutputLocation("a.png") == FileManager.default.currentDirectoryPath + "/a.png")
        #expect(builder.resolvedOutputLocation("/abs/a.png") == "/abs/a.png")
        // Elsewhere, the same relative path does not exist.
        let moved = diagnostics("input, name=replay, device=file:clip.mp4\n", file: "/nonexistent-dir/replay.pipeline")
        #expect(moved.contains("does not exist (no media file at /nonexistent-dir/clip.mp4)"))
    }

    @Test func unreadableAndNonUTF8Files() throws {
        do {
            _ = try PipelineDocument.load(path: "/nonexistent/x.pipeline")
            Issue.record("a missing file parsed")
        } catch {
            #expect(error.rendered.hasPrefix("/nonexistent/x.pipeline: error: cannot read the file"))
        }
        let directory = try TemporaryDirectory()
        let file = directory.path("latin1.pipeline")
        let bytes: [UInt8] = Array("input, name=camera, device=test-pattern\noverlay, output=camera, text=\"caf".utf8) + [0xE9] + Array("\"\n".utf8)
        #expect(FileManager.default.createFile(atPath: file, contents: Data(bytes)))
        do {
            _ = try PipelineDocument.load(path: file)
            Issue.record("a Latin-1 file parsed")
        } catch {
            #expect(error.diagnostics.count == 1)
            #expect(error.diagnostics[0].location == SourceLocation(file: file, line: 2, column: 34))
            #expect(error.diagnostics[0].message.hasPrefix("the file is not valid UTF-8 (byte 0xE9"))
        }
    }

    @Test func freeRunningFiles() throws {
        #expect(try parsed("input, name=camera, device=test-pattern\n").isFreeRunning)
        #expect(try parsed("input, name=camera, device=test-pattern\nexpect, event=session-started, count=1\n").isFreeRunning)
        #expect(try !parsed("input, name=camera, device=test-pattern\nstart\n").isFreeRunning)
        // An empty file could never run anything: it is refused instead of idling until Ctrl-C.
        #expect(throws: PipelineDiagnostics.self) { try PipelineDocument.parse("", file: "empty.pipeline") }
    }

    @Test func eventMatching() {
        let matcher = EventMatcher(event: "frame-saved", output: "frames")
        #expect(matcher.matches(name: "frame-saved", fields: [("output", .string("frames")), ("location", .string("x"))]))
        #expect(!matcher.matches(name: "frame-saved", fields: [("output", .string("other"))]))
        #expect(!matcher.matches(name: "frame-dropped", fields: [("output", .string("frames"))]))
        #expect(EventMatcher(event: "x", value: "5").matches(name: "x", fields: [("value", .int(5))]))
        #expect(Expectation(matcher, .atLeast(2)).isSatisfied(bySeeing: 3))
        #expect(!Expectation(matcher, .exactly(2)).isSatisfied(bySeeing: 3))
    }

    @Test func suggestions() {
        #expect(Suggest.closest(to: "wiat", in: Vocabulary.statements) == "wait")
        #expect(Suggest.closest(to: "captur-photo", in: Vocabulary.statements) == "capture-photo")
        #expect(Suggest.closest(to: "zzz", in: Vocabulary.statements) == nil)
        #expect(Suggest.editDistance("kitten", "sitting") == 3)
    }

    /// The statements of a text, as read (before the checks).
    func statements(_ text: String) -> [Statement] {
        SourceSplitter.statements(of: SourceText(name: "test.pipeline", text: text)).compactMap { logical in
            if case .statement(let statement) = StatementReader.read(logical, isKnown: { _ in true }) { return statement }
            return nil
        }
    }
}
