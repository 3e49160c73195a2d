import Capture
import Testing

@testable import PipelineFile

@Suite("Writing documents back as .pipeline text")
struct RoundTripTests {
    /// Text -> document -> text -> document: equal documents, and the written text is a fixed point.
    func assertRoundTrip(_ document: PipelineDocument, options: ParseOptions = ParseOptions(checksFileDevices: false)) throws {
        let text = document.pipelineText
        let reread = try parsed(text, file: "written.pipeline", options: options)
        #expect(reread == document, "written as:\n\(text)")
        #expect(reread.pipelineText == text)
    }

    @Test func contractExampleRoundTrips() throws {
        try assertRoundTrip(parsed(contractExample))
    }

    @Test func everyStatementAndKeyRoundTrips() throws {
        try assertRoundTrip(parsed(everyFeature, options: ParseOptions(checksFileDevices: false)))
    }

    @Test func writtenTextOfTheContractExample() throws {
        #expect(
            try parsed(contractExample).pipelineText == #"""
                session, preset=hd1280x720
                input, name=camera, device=default
                output, name=photo, kind=photo, codec=jpeg, quality=90, location="IMG_%04d.jpg"
                output, name=preview, kind=preview

                start
                capture-photo, output=photo
                wait, event=photo-saved
                begin-configuration
                    remove-output, name=photo
                    add-input, name=mic, device=default-audio
                    add-output, name=movie, kind=movie, location=clip.mp4
                commit-configuration
                start-recording, output=movie
                wait, duration=3
                stop-recording, output=movie
                wait, event=recording-finished
                stop
                expect, event=photo-saved, count=1
                expect, event=recording-finished, count=1

                """#)
    }

    /// A document built in Swift, with strings that need quoting and values at the edges of their grammars.
    @Test func swiftValuesWithAwkwardStrings() throws {
        let texts = ["true", "90", "0123", "", "a \"quoted\" \\ path", "héllo wörld", "inf", "1/2", "x,y=z", "{ list }", "tab\there", "#hash"]
        var document = PipelineDocument(
            session: SessionSettings(preset: .inputPriority),
            inputs: [
                InputDeclaration(
                    name: "camera", device: "test-pattern", pattern: "smpte75", size: Size(width: 640, height: 480),
                    frameRate: FrameRate(25), failAfterFrames: 3)
            ],
            outputs: [
                OutputDeclaration(
                    name: "frames", rotation: 270, mirrored: false,
                    settings: .frames(FramesOutputSettings(location: "out dir/%03d.jpg", maxRate: 0.5))),
                OutputDeclaration(
                    name: "movie",
                    settings: .movie(
                        MovieOutputSettings(
                            bitrate: 800_123, maxDuration: .nanoseconds(1_500_000_001), maxFileSize: 3_000_000_000_000, minFreeDiskSpace: 1023,
                            fragmentInterval: .milliseconds(1500)))),
            ],
            overlays: texts.enumerated().map { OverlayDeclaration(name: "text\($0.offset)", outputs: ["frames"], fields: OverlayFields(text: $0.element)) }
                + [
                    OverlayDeclaration(
                        name: "shapes", outputs: ["frames", "movie"],
                        fields: OverlayFields(
                            polygon: [NormalizedPoint(x: 0.1, y: 0.2), NormalizedPoint(x: 0.5, y: 0.25), NormalizedPoint(x: 0.3, y: 1)],
                            color: OverlayColor(parsing: "#ff000080"), background: OverlayColor(red: 0, green: 0, blue: 0, alpha: 0),
                            lineWidth: 0.01, fill: .yellow, position: .point(x: 0.25, y: 0.75), alpha: 0.5)),
                    OverlayDeclaration(
                        name: "clock", outputs: ["frames"], fields: OverlayFields(clock: .running, font: "DejaVu Sans Mono", size: 0.1, position: .bottomRight)),
                ])
        document.scenario = [
            ScenarioStep(.start),
            ScenarioStep(.wait(.duration(.zero))),
            ScenarioStep(
                .wait(.event(EventMatcher(event: "code-detected", output: "frames", type: "qr", value: texts[4]), count: 7, timeout: .milliseconds(1)))),
            ScenarioStep(
                .repeat(
                    count: 3,
                    steps: [
                        ScenarioStep(
                            .repeat(
                                count: 2,
                                steps: [ScenarioStep(.wait(.event(EventMatcher(event: "frame-saved", value: "say \"hi\""), count: nil, timeout: nil)))])),
                        ScenarioStep(
                            .configuration(ConfigurationBlock(steps: [ScenarioStep(.setPreset(.low))], commitExpectedError: .named("configuration-rejected")))),
                        ScenarioStep(
                            .capturePhoto(PhotoCaptureRequest(output: "photo", location: "p.png", count: 2, interval: .seconds(1), flashMode: .on)),
                            expectedError: .any),
                    ])),
            ScenarioStep(
                .configuration(
                    ConfigurationBlock(steps: [
                        ScenarioStep(
                            .addOutput(
                                OutputDeclaration(
                                    name: "photo",
                                    settings: .photo(
                                        PhotoOutputSettings(codec: .png, location: "p.png", size: Size(width: 8, height: 8), zeroShutterLag: false)))))
                    ]))),
            ScenarioStep(
                .addOverlay(OverlayDeclaration(name: "logo", outputs: ["preview"], fields: OverlayFields(image: "logo.png", width: 0.2, position: .topRight)))),
            ScenarioStep(.setOverlay(OverlayDeclaration(name: "text1", outputs: [], fields: OverlayFields(text: "Flash: {flash-mode}", color: .red)))),
            ScenarioStep(.removeOverlay(name: "logo", outputs: ["preview", "movie"])),
            ScenarioStep(.toggleFlash(output: nil)), ScenarioStep(.toggleFlash(output: "photo"), expectedError: .any),
            ScenarioStep(.switchCamera(position: .front)), ScenarioStep(.switchCamera(position: nil)),
            ScenarioStep(.expect(Expectation(EventMatcher(event: "frame-saved", value: texts[0]), .atLeast(1)))),
        ]
        try assertRoundTrip(document)
    }

    @Test func documentOfAConfiguredSession() throws {
        let session = CaptureSession()
        try session.addInput(
            CaptureDeviceInput(
                device: .testPattern, name: "camera",
                options: InputOptions(pattern: "ball", failAfterFrames: 100)))
        try session.setSessionPreset(.vga640x480)
        let frames = CaptureVideoDataOutput(name: "frames")
        frames.maxFrameRate = 5
        frames.size = Size(width: 320, height: 240)
        try session.addOutput(frames)
        let preview = CaptureVideoPreviewOutput(name: "preview", sink: .none)
        preview.connection = ConnectionSettings(input: "camera", rotation: 90, isMirrored: true)
        try session.addOutput(preview)
        try session.addOutput(CaptureImageSequenceOutput(name: "stills", location: "/tmp/stills/%04d.png", maxFrameRate: 1))
        let photo = CapturePhotoOutput(name: "photo")
        var defaults = CapturePhotoOutput.Defaults()
        defaults.codec = .png
        defaults.location = "shots/IMG_%03d.png"
        defaults.zeroShutterLag = true
        photo.defaults = defaults
        try session.addOutput(photo)

        let document = try PipelineDocument(session: session)
        #expect(
            document.pipelineText == #"""
                session, preset=vga640x480
                input, name=camera, device=test-pattern, pattern=ball, fail-after=100
                output, name=frames, kind=frames, max-rate=5.0, size=320x240
                output, name=preview, kind=preview, input=camera, rotation=90, mirrored=true, sink=none
                output, name=stills, kind=frames, location="/tmp/stills/%04d.png", max-rate=1.0
                output, name=photo, kind=photo, codec=png, location="shots/IMG_%03d.png", zero-shutter-lag=true

                """#)
        try assertRoundTrip(document)

        // And back: the document builds the same session (less the photo output, not built yet).
        var buildable = document
        buildable.outputs.removeLast()
        let (rebuilt, notes) = try SessionBuilder(document: parsed(buildable.pipelineText)).makeSession()
        #expect(notes.isEmpty)
        #expect(try PipelineDocument(session: rebuilt) == buildable)
        #expect(rebuilt.outputs.map { type(of: $0) == CaptureImageSequenceOutput.self } == [false, false, true])
        #expect(rebuilt.output(named: "preview")?.connection == ConnectionSettings(input: "camera", rotation: 90, isMirrored: true))
    }

    @Test func valueGrammarsRoundTrip() {
        for nanoseconds: Int64 in [0, 1, 999, 1_000_000, 1_500_000_000, 2_000_000_000, 86_400_000_000_000, 123_456_789_012] {
            let duration = Duration.nanoseconds(nanoseconds)
            #expect(ValueSyntax.duration(ValueSyntax.write(duration)) == duration)
        }
        for bytes: Int64 in [0, 1, 999, 1000, 1024, 50_000_000, 3_000_000_000, 5_000_000_000_001] {
            #expect(ValueSyntax.byteSize(ValueSyntax.write(bytes: bytes)) == bytes)
        }
        for bits in [1, 999, 128_000, 4_000_000, 2_500_001, 3_000_000_000] {
            #expect(ValueSyntax.bitrate(ValueSyntax.write(bitrate: bits)) == bits)
        }
        for rate in [FrameRate(30), FrameRate(30000, 1001), FrameRate(25, 2)] {
            #expect(ValueSyntax.frameRate(ValueSyntax.write(rate)) == rate)
        }
        #expect(ValueSyntax.frameRate(.fraction(60, 2)) == FrameRate(30))
        #expect(ValueSyntax.frameRate(.double(29.97)) == FrameRate(2997, 100))
        #expect(ValueSyntax.duration(.string("1.5m")) == .seconds(90))
        #expect(ValueSyntax.duration(.double(.infinity)) == nil)
        #expect(ValueSyntax.byteSize(.string("1.5GB")) == 1_500_000_000)
        #expect(ValueSyntax.byteSize(.string("2mib")) == 2_097_152)
        #expect(ValueSyntax.hasNumberPattern("IMG_%04d.jpg"))
        #expect(!ValueSyntax.hasNumberPattern("100%%.png"))
    }
}

/// The preview's view keys: a window id in either spelling, the gravity, the view's size, and what
/// each refuses.
@Suite struct PreviewKeysTests {
    @Test func aWindowIdReadsInHexOrDecimal() throws {
        for spelling in ["0x1e00007", "31457287"] {
            let document = try parsed("input, name=camera, device=test-pattern\noutput, name=preview, kind=preview, window=\(spelling), gravity=resize")
            guard case .preview(let settings) = try #require(document.outputs.first).settings else {
                Issue.record("not a preview")
                return
            }
            #expect(settings.window == 0x1e0_0007)
            #expect(settings.gravity == .resize)
            // Written back as xwininfo prints it (quoted: unquoted, GStreamer would read a number).
            #expect(document.pipelineText.contains(#"window="0x1e00007""#))
            #expect(try parsed(document.pipelineText) == document)
        }
    }

    @Test func badViewKeysAreRefusedByName() {
        for (line, message) in [
            ("window=0", "window must be an X11 window id"),
            ("window=0xzz", "window must be an X11 window id"),
            ("window=-5", "window must be an X11 window id"),
            ("gravity=aspect", "gravity must be resize-aspect, resize-aspect-fill or resize"),
            ("size=big", "size"),
        ] {
            let text = "input, name=camera, device=test-pattern\noutput, name=preview, kind=preview, \(line)"
            do {
                _ = try PipelineDocument.parse(text, file: "view.pipeline", options: ParseOptions())
                Issue.record("\(line) was accepted")
            } catch {
                #expect(error.rendered.contains(message), "\(line): \(error.rendered)")
            }
        }
    }
}
