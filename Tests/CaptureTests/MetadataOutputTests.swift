import CaptureTestSupport
import Foundation
import Testing

@testable import Capture

/// `CaptureMetadataOutput` on the live engine: the corpus video replayed through `file:`.
@Suite struct MetadataOutputTests {
    /// Every type, in every variant of the corpus, through the whole path: file, decoder, grey
    /// branch, worker, tracker, delegate, AsyncSequence and session events.
    @Test func everyTypeIsReadFromTheVideoWithItsValueAndCorners() async throws {
        let corpus = try await BarcodeFixtures.standard()
        let run = try await scan(corpus.video)
        let codes = run.delegateCodes
        var failures: [String] = []
        var missed: [String] = []
        for type in MetadataObjectType.allCases {
            let scenes = corpus.scenes.filter { $0.codes.contains { $0.type == type } }
            let read = scenes.filter { scene in codes.contains { $0.type == type && $0.stringValue == scene.codes[0].value } }
            if read.isEmpty { failures.append("\(type): not read in any of its \(scenes.count) scenes") }
            missed += scenes.filter { !read.contains($0) }.map(\.name)
        }
        for code in codes {
            // The right value, in the scene that shows it, with corners that enclose it.
            guard let scene = corpus.scene(atFrame: corpus.frame(at: code.timestamp)),
                let truth = scene.codes.first(where: { $0.type == code.type && $0.value == code.stringValue })
            else {
                failures.append("false read: \(code) at \(code.timestamp) s")
                continue
            }
            let enclosure = Enclosure(read: code.corners, truth: truth.corners, frame: corpus.frameSize)
            if !enclosure.encloses { failures.append("\(scene.name): corners \(enclosure)") }
            #expect(code.bounds.x <= code.corners.map(\.x).min()! && code.bounds.width > 0)
        }
        // Once per appearance: every scene shows its code for two frames, and it is reported once.
        let keys = codes.map { "\($0.type) \($0.stringValue)" }
        #expect(keys.count == Set(keys).count, "a code was reported twice in one appearance")
        // The three ways out agree.
        #expect(run.detectedEvents.count == codes.count)
        #expect(run.streamCodes.map(\.stringValue) == codes.map(\.stringValue))
        if let event = run.detectedEvents.first, let code = codes.first {
            #expect(event.output == "codes")
            #expect(event.field("type") == .string(code.type.rawValue))
            #expect(event.field("value") == .string(code.stringValue))
            #expect(event.field("corners") == .array(code.corners.map { .array([.double($0.x), .double($0.y)]) }))
        }
        // Late frames not discarded: every frame of the clip (10 a second, under the 15 a second limit)
        // reached the decoder and was decoded.
        let frameCount = corpus.scenes.map(\.frames.count).reduce(0, +)
        #expect(run.output.receivedFrameCount == frameCount)
        #expect(run.output.decodedFrameCount == frameCount)
        #expect(run.output.droppedFrameCount == 0)
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
        let total = corpus.scenes.filter { !$0.codes.isEmpty }.count
        print(
            "metadata output: \(total - missed.count)/\(total) scenes read from the video; missed: \(missed); frames decoded \(run.output.decodedFrameCount), dropped \(run.output.droppedFrameCount)"
        )
    }

    /// Two codes side by side; a rect of interest over one half reports only the code in it, with
    /// corners in coordinates of the whole frame.
    @Test func theRectOfInterestExcludesCodesOutsideIt() async throws {
        let left = BarcodeCorpus.CodeSpec(type: .qr, serial: 100, modulePixels: 4, center: NormalizedPoint(x: 0.25, y: 0.5))
        let right = BarcodeCorpus.CodeSpec(type: .dataMatrix, serial: 100, modulePixels: 4, center: NormalizedPoint(x: 0.75, y: 0.5))
        let corpus = try await BarcodeFixtures.corpus("pair", [BarcodeCorpus.SceneSpec(name: "pair", codes: [left, right], frames: 8)])
        let qr = corpus.scenes[0].codes[0], matrix = corpus.scenes[0].codes[1]

        let leftRun = try await scan(corpus.video) { $0.rectOfInterest = NormalizedRect(x: 0, y: 0, width: 0.5, height: 1) }
        #expect(leftRun.delegateCodes.map(\.stringValue) == [qr.value])
        if let code = leftRun.delegateCodes.first {
            #expect(Enclosure(read: code.corners, truth: qr.corners, frame: corpus.frameSize).encloses)
        }
        let rightRun = try await scan(corpus.video) { $0.rectOfInterest = NormalizedRect(x: 0.5, y: 0, width: 0.5, height: 1) }
        #expect(rightRun.delegateCodes.map(\.stringValue) == [matrix.value])
        if let code = rightRun.delegateCodes.first {
            #expect(code.corners.allSatisfy { $0.x > 0.5 })
            #expect(Enclosure(read: code.corners, truth: matrix.corners, frame: corpus.frameSize).encloses)
        }
    }

    /// A code held in view is reported once; shown, hidden and shown again, twice.
    @Test func aCodeIsReportedOncePerAppearance() async throws {
        let corpus = try await BarcodeFixtures.corpus("appearances", Self.appearances)
        let value = corpus.scenes[0].codes[0].value
        let run = try await scan(corpus.video) { output in
            try output.setMetadataObjectTypes([.code128, .ean13])
            output.disappearanceFrames = 2
        }
        let reports = run.delegateCodes.filter { $0.stringValue == value }
        #expect(reports.count == 2, "\(run.delegateCodes)")
        // The second report is from the second appearance.
        if reports.count == 2 {
            #expect(corpus.scenes[0].frames.contains(corpus.frame(at: reports[0].timestamp)))
            #expect(corpus.scenes[2].frames.contains(corpus.frame(at: reports[1].timestamp)))
        }
        #expect(run.delegateCodes.filter { $0.type == .ean13 }.count == 1)
        // It left while hidden (the second loss, when the EAN-13 replaces it, is reported only if the clip
        // runs on for the disappearance interval after it, which a loaded machine does not guarantee).
        #expect((1...2).contains(run.lostCodes.filter { $0.stringValue == value }.count))
        #expect(run.detectedEvents.count == run.delegateCodes.count)
    }

    /// As on iOS (`delivery = .everyFrame`): one delegate call per decoded frame with codes, whose
    /// corners follow the code as it moves across the frame, then one empty list when it has left;
    /// the `codes-in-frame` events say the same, and `code-detected` still comes once.
    @Test func everyFrameDeliveryFollowsTheCodeAndEndsWithAnEmptyList() async throws {
        let places = [0.3, 0.5, 0.7]
        let scenes =
            places.enumerated().map { index, x in
                BarcodeCorpus.SceneSpec(
                    name: "at-\(index)",
                    codes: [BarcodeCorpus.CodeSpec(type: .qr, serial: 300, modulePixels: 4, center: NormalizedPoint(x: x, y: 0.5))], frames: 10)
            } + [BarcodeCorpus.SceneSpec(name: "gone", codes: [], frames: 15)]
        let corpus = try await BarcodeFixtures.corpus("moving", scenes)
        let value = corpus.scenes[0].codes[0].value
        let run = try await scan(corpus.video) { $0.delivery = .everyFrame }
        let calls = run.delegateCalls
        let filled = calls.filter { !$0.isEmpty }
        // Every list holds the one code, at the place of the scene its frame belongs to.
        var centers: [(scene: Int, x: Double)] = []
        for list in filled {
            #expect(list.map(\.stringValue) == [value], "\(list)")
            guard let code = list.first, let scene = corpus.scenes.firstIndex(where: { $0.frames.contains(corpus.frame(at: code.timestamp)) })
            else { continue }
            #expect(scene < places.count, "a code in the empty scene at \(code.timestamp) s")
            if scene < places.count {
                #expect(abs(code.center.x - places[scene]) < 0.05, "scene \(scene): centre \(code.center)")
                centers.append((scene, code.center.x))
            }
        }
        // Read in each of the three places, moving right over time.
        #expect(Set(centers.map(\.scene)) == [0, 1, 2], "\(centers)")
        #expect(centers.map(\.x) == centers.map(\.x).sorted())
        // Then exactly one empty list, last.
        #expect(calls.last?.isEmpty == true, "\(calls.map(\.count))")
        #expect(calls.filter(\.isEmpty).count == 1, "\(calls.map(\.count))")
        // The events: a codes-in-frame per delegate call (the empty list owed when the session stops
        // before a code-free frame was decoded has no event), the code detected once.
        let frameEvents = run.events.filter { $0.name == "codes-in-frame" }
        #expect(frameEvents.count == calls.count || frameEvents.count == calls.count - 1)
        #expect(frameEvents.first?.field("count") == .int(1))
        #expect(run.detectedEvents.count == 1)
    }

    /// The test patterns hold no code: decoding a few frames of each reads nothing.
    @Test(arguments: ["smpte", "ball", "snow", "checkers-8", "zone-plate", "spokes", "pinwheel", "bar"])
    func theTestPatternsGiveNoFalseReads(_ pattern: String) async throws {
        let session = CaptureSession(name: "pattern-codes")
        try session.addInput(CaptureDeviceInput(deviceID: "test-pattern", name: "pattern", options: InputOptions(pattern: pattern)))
        let output = CaptureMetadataOutput(name: "codes")
        let recorder = CodeRecorder()
        output.setMetadataObjectsDelegate(recorder)
        try session.addOutput(output)
        try await session.startRunning()
        let decoded = await waitUntil(timeout: .seconds(30)) { output.decodedFrameCount >= 6 }
        await session.stopRunning()
        #expect(decoded, "only \(output.decodedFrameCount) frames decoded")
        #expect(recorder.detected.isEmpty, "\(pattern): \(recorder.detected)")
        #expect(output.visibleMetadataObjects.isEmpty)
    }

    /// Scanning is just another branch: it goes on while a movie records and a photo is taken.
    @Test func scanningGoesOnWhileRecordingAndTakingPhotos() async throws {
        let corpus = try await BarcodeFixtures.corpus("appearances", Self.appearances)
        let directory = try TemporaryDirectory()
        let session = CaptureSession(name: "scan-record-test")
        try session.addInput(CaptureDeviceInput(deviceID: "file:\(corpus.video)", name: "clip"))
        let codes = CaptureMetadataOutput(name: "codes")
        codes.disappearanceFrames = 2
        // The recording and the photo wait for the decoder too: every frame is decoded, so the count
        // of appearances does not depend on the load.
        codes.discardsLateFrames = false
        let recorder = CodeRecorder()
        codes.setMetadataObjectsDelegate(recorder)
        let movie = CaptureMovieFileOutput(name: "movie")
        let photo = CapturePhotoOutput(name: "photo")
        try session.addOutput(codes)
        try session.addOutput(movie)
        try session.addOutput(photo)
        let events = session.events()
        try await session.startRunning()
        _ = try await movie.startRecording(to: URL(fileURLWithPath: directory.path("clip.mp4")))
        _ = try await photo.capturePhoto(with: PhotoSettings(location: directory.path("shot.jpg")))
        // A bound for a hang: every frame is decoded, so on a busy machine the clip plays slower.
        let seen = await collectEvents(events, until: { $0.name == "session-stopped" }, timeout: .seconds(300))
        await session.stopRunning()
        let value = corpus.scenes[0].codes[0].value
        // The delegate queue runs behind the events.
        #expect(await waitUntil(timeout: .seconds(10)) { recorder.detected.filter { $0.stringValue == value }.count >= 2 })
        #expect(recorder.detected.filter { $0.stringValue == value }.count == 2)
        #expect(seen.contains { $0.name == "photo-saved" })
        #expect(seen.contains { $0.name == "recording-finished" })
        #expect(FileManager.default.fileExists(atPath: directory.path("shot.jpg")))
        #expect(FileManager.default.fileExists(atPath: directory.path("clip.mp4")))
    }

    /// A Code 128 in view for 2 s, gone for 1.2 s, back for 0.8 s, then an EAN-13 in its place for
    /// 3 s. Chosen when these tests let the decoder skip frames while it was busy (they now decode
    /// every frame): with the whole suite running on two cores, 1.2 s of EAN-13 at the clip's end was
    /// once not decoded in time before the end of the clip stopped the session.
    static let appearances: [BarcodeCorpus.SceneSpec] = {
        let code = BarcodeCorpus.CodeSpec(type: .code128, serial: 200, modulePixels: 3)
        let other = BarcodeCorpus.CodeSpec(type: .ean13, serial: 200, modulePixels: 3)
        return [
            BarcodeCorpus.SceneSpec(name: "held", codes: [code], frames: 20),
            BarcodeCorpus.SceneSpec(name: "hidden", codes: [], frames: 12),
            BarcodeCorpus.SceneSpec(name: "back", codes: [code], frames: 8),
            BarcodeCorpus.SceneSpec(name: "replaced", codes: [other], frames: 30),
        ]
    }()

    @Test func typesMustBeAvailableAndKnown() throws {
        let output = CaptureMetadataOutput(name: "codes")
        #expect(output.availableMetadataObjectTypes == MetadataObjectType.allCases)
        #expect(output.metadataObjectTypes == MetadataObjectType.allCases)
        try output.setMetadataObjectTypes([.upcE, .qr, .qr])
        #expect(output.metadataObjectTypes == [.upcE, .qr])

        // With both decoders Aztec is available; zbar alone reads none: a typed error that names it.
        try output.setMetadataObjectTypes([.aztec])
        let zbar = CaptureMetadataOutput(name: "zbar-codes", backend: .zbar)
        #expect(!zbar.availableMetadataObjectTypes.contains(.aztec))
        do {
            try zbar.setMetadataObjectTypes([.qr, .aztec])
            Issue.record("aztec is not available with zbar")
        } catch {
            #expect(error.name == "metadata-object-type-not-available")
            #expect(error.description.contains("'aztec'"))
        }
        #expect(zbar.metadataObjectTypes == zbar.availableMetadataObjectTypes)
        // Unknown names.
        #expect(throws: CaptureError.unknownMetadataObjectType(name: "qr-code", known: MetadataObjectType.allCases.map(\.rawValue))) {
            try output.setMetadataObjectTypes(named: ["ean-13", "qr-code"])
        }
        try output.setMetadataObjectTypes(named: ["ean-13", "Data-Matrix"])
        #expect(output.metadataObjectTypes == [.ean13, .dataMatrix])
        // A backend that cannot read the chosen types is refused; the backend stays.
        #expect(throws: CaptureError.self) { try output.setBackend(.zbar) }
        #expect(output.backend == .auto)
        output.resetMetadataObjectTypes()
        try output.setBackend(.zbar)
        #expect(output.metadataObjectTypes == zbar.availableMetadataObjectTypes)
    }

    @Test func settingsAreCheckedAtCommit() throws {
        let (session, _) = try makeSession()
        let output = CaptureMetadataOutput(name: "codes")
        output.rectOfInterest = NormalizedRect(x: 0.5, y: 0, width: 0.8, height: 1)
        #expect(throws: CaptureError.self) { try session.addOutput(output) }
        output.rectOfInterest = NormalizedRect(x: 0.5, y: 0, width: 0.5, height: 1)
        output.maxFrameRate = 5
        try session.addOutput(output)
        let branch = try #require(try session.compile().branches.first { $0.output == "codes" })
        let factories = branch.chains[0].elements.map(\.factory)
        #expect(factories.first == "queue" && factories.last == "appsink")
        #expect(factories.contains("videorate"))
        let queue = branch.chains[0].elements[0]
        #expect(queue.properties.contains(.init("leaky", "downstream")))
        #expect(branch.chains[0].elements.contains { $0.liveProperties.contains(.init("caps", "video/x-raw,format=GRAY8,width=640,height=480")) })
    }
}

/// The appearance logic alone, on made-up reads.
@Suite struct BarcodeTrackerTests {
    func read(_ value: String, at time: Double) -> MetadataMachineReadableCodeObject {
        MetadataMachineReadableCodeObject(
            type: .qr, stringValue: value, rawBytes: Array(value.utf8),
            corners: [NormalizedPoint(x: 0, y: 0), NormalizedPoint(x: 1, y: 0), NormalizedPoint(x: 1, y: 1), NormalizedPoint(x: 0, y: 1)],
            timestamp: time, decoders: [.zxing])
    }

    @Test func appearancesNeedFramesAndTimeAway() {
        var tracker = BarcodeTracker(disappearanceInterval: 0.5, disappearanceFrames: 3)
        var appeared: [String] = [], gone: [String] = []
        func frame(_ values: [String], _ time: Double) {
            let change = tracker.update(values.map { read($0, at: time) }, timestamp: time)
            appeared += change.appeared.map(\.stringValue)
            gone += change.gone.map(\.stringValue)
        }
        // In view for a second at 10 fps, with one frame where it was not read.
        for index in 0..<10 { frame(index == 4 ? [] : ["a"], Double(index) / 10) }
        #expect(appeared == ["a"] && gone.isEmpty)
        // Missed for 3 frames but only 0.3 s: still there.
        for index in 10..<13 { frame([], Double(index) / 10) }
        #expect(gone.isEmpty)
        // Missed for 0.5 s and more than 3 frames: gone.
        for index in 13..<16 { frame([], Double(index) / 10) }
        #expect(gone == ["a"])
        // Back: reported again; a second code at the same time is its own appearance.
        frame(["a", "b", "a"], 2.0)
        #expect(appeared == ["a", "a", "b"])
        #expect(tracker.visible.map(\.stringValue) == ["a", "b"])
        #expect(tracker.reset().count == 2)
        #expect(tracker.visible.isEmpty)
    }
}
