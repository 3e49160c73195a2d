import Testing

@testable import Capture

/// The planner's table: every kind of difference between a running graph and a target, the edits it
/// gives and their order. No GStreamer: graphs are values.
@Suite struct EditPlannerTests {
    static func format(_ width: Int, _ height: Int, output: Size? = nil) -> ResolvedFormat {
        let device = DeviceFormat(mediaSubtype: "video/x-raw", pixelFormat: "YUY2", size: Size(width: width, height: height), frameRates: [FrameRate(30, 1)])
        return ResolvedFormat(device: device, frameRate: FrameRate(30, 1), outputSize: output ?? Size(width: width, height: height))
    }

    static func camera(_ name: String = "camera", device: String = "/dev/video0", format: ResolvedFormat = format(1280, 720)) -> SourceSegment {
        SourceSegment(
            input: name, media: .video, device: device,
            elements: [
                ElementSpec("v4l2src", name: "\(name)_source", [("device", device)]),
                ElementSpec("capsfilter", name: "\(name)_format", [("caps", GraphCompiler.deviceCaps(format))]),
            ], format: format)
    }

    static func microphone() -> SourceSegment {
        SourceSegment(input: "mic", media: .audio, device: "test-tone", elements: [ElementSpec("audiotestsrc", name: "mic_source")])
    }

    static func preview(size: String = "1280x720", input: String = "camera", sink: String = "fakesink") -> BranchSegment {
        BranchSegment(
            output: "preview", kind: "preview",
            chains: [
                Chain(
                    input: input,
                    elements: [
                        ElementSpec("queue", name: "preview_queue"),
                        .capsFilter(name: "preview_size", caps: "video/x-raw,\(size)"),
                        ElementSpec(sink, name: "preview_sink"),
                    ])
            ])
    }

    static func movie() -> BranchSegment {
        BranchSegment(
            output: "movie", kind: "movie",
            chains: [
                Chain(input: nil, elements: [ElementSpec("mp4mux", name: "movie_mux"), ElementSpec("filesink", name: "movie_sink", [("location", "a.mp4")])]),
                Chain(input: "camera", elements: [ElementSpec("queue", name: "movie_queue"), ElementSpec("x264enc", name: "movie_encode")], into: "movie_mux"),
                Chain(
                    input: "mic", elements: [ElementSpec("queue", name: "movie_audio_queue"), ElementSpec("voaacenc", name: "movie_audio_encode")],
                    into: "movie_mux"),
            ], writesFile: true)
    }

    static func graph(_ sources: [SourceSegment], _ branches: [BranchSegment]) -> CompiledGraph {
        CompiledGraph(sources: sources, branches: branches)
    }

    @Test func theSameGraphNeedsNoEdit() {
        let running = Self.graph([Self.camera()], [Self.preview()])
        let plan = EditPlanner.plan(running: running, target: running)
        #expect(plan.edits.isEmpty)
        #expect(plan.report.isEmpty)
    }

    @Test func startingIsAddingEverySourceThenEveryBranch() {
        let target = Self.graph([Self.camera(), Self.microphone()], [Self.preview(), Self.movie()])
        let plan = EditPlanner.plan(running: Self.graph([], []), target: target)
        #expect(plan.edits == [.addSource(Self.camera()), .addSource(Self.microphone()), .addBranch(Self.preview()), .addBranch(Self.movie())])
        #expect(plan.report.addedInputs == ["camera", "mic"] && plan.report.addedOutputs == ["preview", "movie"])
    }

    @Test func anOutputThatLeavesIsRemovedAndDrainedWhenItWritesAFile() {
        let running = Self.graph([Self.camera(), Self.microphone()], [Self.preview(), Self.movie()])
        let plan = EditPlanner.plan(running: running, target: Self.graph([Self.camera(), Self.microphone()], [Self.preview()]))
        #expect(plan.edits == [.removeBranch(output: "movie", drain: true)])
        #expect(plan.report.removedOutputs == ["movie"])
        let gone = EditPlanner.plan(running: running, target: Self.graph([Self.camera(), Self.microphone()], [Self.movie()]))
        #expect(gone.edits == [.removeBranch(output: "preview", drain: false)])
    }

    @Test func onlyLivePropertiesChangedIsAnUpdateInPlace() {
        let running = Self.graph([Self.camera()], [Self.preview()])
        let target = Self.graph([Self.camera()], [Self.preview(size: "640x360")])
        let plan = EditPlanner.plan(running: running, target: target)
        #expect(plan.edits == [.updateBranch(Self.preview(size: "640x360"))])
        #expect(plan.report.updatedOutputs == ["preview"] && plan.report.restartedInputs.isEmpty)
    }

    @Test func aStructuralChangeRebuildsTheBranchOnly() {
        let running = Self.graph([Self.camera()], [Self.preview()])
        let target = Self.graph([Self.camera()], [Self.preview(sink: "autovideosink")])
        let plan = EditPlanner.plan(running: running, target: target)
        #expect(plan.edits == [.removeBranch(output: "preview", drain: false), .addBranch(Self.preview(sink: "autovideosink"))])
        #expect(plan.report.updatedOutputs == ["preview"] && plan.report.addedOutputs.isEmpty && plan.report.removedOutputs.isEmpty)
    }

    @Test func aNewDeviceFormatRestartsThatSourceAloneAndItsBranchesStay() {
        let running = Self.graph([Self.camera(), Self.microphone()], [Self.preview(), Self.movie()])
        let bigger = Self.camera(format: Self.format(1920, 1080))
        let plan = EditPlanner.plan(running: running, target: Self.graph([bigger, Self.microphone()], [Self.preview(), Self.movie()]))
        #expect(plan.edits.count == 1)
        guard case .restartSource(let segment, let reason)? = plan.edits.first else { Issue.record("\(plan.edits)"); return }
        #expect(segment == bigger)
        #expect(reason.hasPrefix("device format changed from"))
        #expect(plan.report.restartedInputs["camera"] == reason)
    }

    @Test func anotherDeviceRestartsTheSourceAndSaysWhy() {
        let running = Self.graph([Self.camera()], [Self.preview()])
        let front = Self.camera(device: "/dev/video2")
        let plan = EditPlanner.plan(running: running, target: Self.graph([front], [Self.preview()]))
        #expect(plan.edits == [.restartSource(front, reason: "device changed from /dev/video0 to /dev/video2")])
    }

    @Test func aSmallerOutputSizeTheDeviceFormatServesTouchesNoDevice() {
        let running = Self.graph([Self.camera()], [Self.preview()])
        let scaled = Self.camera(format: Self.format(1280, 720, output: Size(width: 640, height: 360)))
        let plan = EditPlanner.plan(running: running, target: Self.graph([scaled], [Self.preview(size: "640x360")]))
        #expect(plan.edits == [.retargetSource(scaled), .updateBranch(Self.preview(size: "640x360"))])
        #expect(plan.report.restartedInputs.isEmpty)
    }

    @Test func anInputThatLeavesTakesItsBranchesFirst() {
        let running = Self.graph([Self.camera(), Self.microphone()], [Self.preview(), Self.movie()])
        let plan = EditPlanner.plan(running: running, target: Self.graph([Self.camera()], [Self.preview()]))
        // The movie reads the microphone: it is finished before the microphone goes.
        #expect(plan.edits == [.removeBranch(output: "movie", drain: true), .removeSource(input: "mic")])
        #expect(plan.report.removedInputs == ["mic"] && plan.report.removedOutputs == ["movie"])
    }

    @Test func aBranchWhoseInputLeavesIsRemovedEvenIfUnchanged() {
        let running = Self.graph([Self.camera(), Self.camera("front", device: "/dev/video2")], [Self.preview(input: "front")])
        let plan = EditPlanner.plan(running: running, target: Self.graph([Self.camera()], [Self.preview(input: "front")]))
        // The branch still names 'front' (the compiler would have refused it); the planner never leaves
        // a branch linked to a tee that goes.
        #expect(plan.edits.first == .removeBranch(output: "preview", drain: false))
        #expect(plan.edits.contains(.removeSource(input: "front")))
    }

    @Test func switchingPhotoToVideoInOneBlock() {
        let photo = BranchSegment(
            output: "photo", kind: "photo",
            chains: [
                Chain(
                    input: "camera",
                    elements: [
                        ElementSpec("queue", name: "photo_queue"), ElementSpec("appsink", name: "photo_sink"),
                    ])
            ])
        let running = Self.graph([Self.camera()], [Self.preview(), photo])
        let target = Self.graph([Self.camera(), Self.microphone()], [Self.preview(), Self.movie()])
        let plan = EditPlanner.plan(running: running, target: target)
        // Photo out, microphone in, movie in; the camera and the preview untouched.
        #expect(plan.edits == [.removeBranch(output: "photo", drain: false), .addSource(Self.microphone()), .addBranch(Self.movie())])
        #expect(plan.report == ConfigurationReport(addedInputs: ["mic"], addedOutputs: ["movie"], removedOutputs: ["photo"]))
    }

    // MARK: Camera switches

    static func movie(camera: String) -> BranchSegment { movie().reading(["camera": camera]) }

    @Test func aCameraReplacedInOneBlockIsASwapAndItsBranchesStayLinked() {
        let running = Self.graph([Self.camera(), Self.microphone()], [Self.preview(), Self.movie()])
        let front = Self.camera("front", device: "/dev/video2", format: Self.format(640, 480, output: Size(width: 1280, height: 720)))
        let plan = EditPlanner.plan(
            running: running, target: Self.graph([front, Self.microphone()], [Self.preview(input: "front"), Self.movie(camera: "front")]))
        // The recording and the preview are not touched: the new source starts into the old one's tee.
        #expect(plan.edits == [.swapSource(from: "camera", to: front)])
        #expect(plan.report.swappedInputs == ["camera": "front"])
        #expect(plan.report.removedInputs == ["camera"] && plan.report.addedInputs == ["front"] && plan.report.removedOutputs.isEmpty)
    }

    @Test func aBranchThatChangesWithTheSwapIsRebuiltAfterIt() {
        let running = Self.graph([Self.camera()], [Self.preview()])
        let front = Self.camera("front", device: "/dev/video2")
        let shown = Self.preview(input: "front", sink: "ximagesink")
        let plan = EditPlanner.plan(running: running, target: Self.graph([front], [shown]))
        #expect(plan.edits == [.removeBranch(output: "preview", drain: false), .swapSource(from: "camera", to: front), .addBranch(shown)])
    }

    @Test func inputsOfAnotherMediaAreNeverPaired() {
        let running = Self.graph([Self.camera(), Self.microphone()], [Self.preview()])
        let front = Self.camera("front", device: "/dev/video2")
        // The microphone leaves and a second camera comes: nothing is swapped.
        let plan = EditPlanner.plan(running: running, target: Self.graph([Self.camera(), front], [Self.preview()]))
        #expect(plan.edits == [.removeSource(input: "mic"), .addSource(front)])
        #expect(plan.report.swappedInputs.isEmpty)
    }

    @Test func twoCamerasReplacedArePairedInOrder() {
        let running = Self.graph([Self.camera("a", device: "/dev/video0"), Self.camera("b", device: "/dev/video2")], [])
        let c = Self.camera("c", device: "/dev/video4"), d = Self.camera("d", device: "/dev/video6")
        let plan = EditPlanner.plan(running: running, target: Self.graph([c, d], []))
        #expect(plan.edits == [.swapSource(from: "a", to: c), .swapSource(from: "b", to: d)])
    }

    @Test func aCameraRemovedWithoutAReplacementTakesItsBranches() {
        let running = Self.graph([Self.camera(), Self.camera("front", device: "/dev/video2")], [Self.preview(input: "front")])
        let plan = EditPlanner.plan(running: running, target: Self.graph([Self.camera()], []))
        #expect(plan.edits == [.removeBranch(output: "preview", drain: false), .removeSource(input: "front")])
    }

    // MARK: Shared encoders

    static func encoder(keyInterval: Int = 30) -> SharedEncoder {
        SharedEncoder(
            owner: "live", input: "camera",
            head: [
                ElementSpec("queue", name: "live_h264_queue", [("max-size-buffers", "8")]), .capsFilter(name: "live_h264_size", caps: "video/x-raw,640x480"),
            ],
            overlay: ElementSpec("overlaycomposition", name: "live_overlay"), rate: FrameRate(30, 1), encoder: .x264enc, bitRate: 900_000,
            keyInterval: keyInterval)
    }

    /// A reader of `encoder` (a stream's appsink, or a recording's muxer and file).
    static func reader(_ name: String, of encoder: SharedEncoder, writesFile: Bool = false) -> BranchSegment {
        var chains = [Chain(input: encoder.name, elements: [ElementSpec("queue", name: "\(name)_queue"), ElementSpec("h264parse", name: "\(name)_parse")])]
        if writesFile {
            chains[0].into = "\(name)_mux"
            chains.insert(Chain(input: nil, elements: [ElementSpec("mp4mux", name: "\(name)_mux"), ElementSpec("filesink", name: "\(name)_sink")]), at: 0)
        } else {
            chains[0].elements.append(ElementSpec("appsink", name: "\(name)_sink"))
        }
        var branch = BranchSegment(output: name, kind: writesFile ? "movie" : "stream", chains: chains, writesFile: writesFile)
        branch.reads = [encoder]
        return branch
    }

    @Test func aRecordingThatReadsAStreamsEncoderOnlyAddsItsBranch() {
        let encoder = Self.encoder()
        let running = Self.graph([Self.camera()], GraphCompiler.withSharedEncoders([Self.reader("live", of: encoder)]))
        #expect(running.branches.map(\.output) == [encoder.name, "live"])
        let target = Self.graph(
            [Self.camera()], GraphCompiler.withSharedEncoders([Self.reader("live", of: encoder), Self.reader("movie", of: encoder, writesFile: true)]))
        let plan = EditPlanner.plan(running: running, target: target)
        // The encoder's queue stops dropping (a file reads it) in place; the stream is not touched.
        #expect(plan.edits == [.updateBranch(target.branches[0]), .addBranch(target.branches[2])])
        #expect(target.branches[0].chains[0].elements[0].liveProperties == [.init("leaky", "no")])
        #expect(running.branches[0].chains[0].elements[0].liveProperties == [.init("leaky", "downstream")])
        #expect(plan.report.addedOutputs == ["movie"] && plan.report.updatedOutputs.isEmpty)
    }

    @Test func theStreamLeavesAndTheRecordingKeepsItsEncoder() {
        let encoder = Self.encoder()
        let both = [Self.reader("live", of: encoder), Self.reader("movie", of: encoder, writesFile: true)]
        let running = Self.graph([Self.camera()], GraphCompiler.withSharedEncoders(both))
        let target = Self.graph([Self.camera()], GraphCompiler.withSharedEncoders([both[1]]))
        let plan = EditPlanner.plan(running: running, target: target)
        #expect(plan.edits == [.removeBranch(output: "live", drain: false)])
        #expect(plan.report.removedOutputs == ["live"])
    }

    @Test func theEncoderLeavesAfterItsLastReader() {
        let encoder = Self.encoder()
        let running = Self.graph([Self.camera()], GraphCompiler.withSharedEncoders([Self.reader("movie", of: encoder, writesFile: true)]))
        let plan = EditPlanner.plan(running: running, target: Self.graph([Self.camera()], []))
        #expect(plan.edits == [.removeBranch(output: "movie", drain: true), .removeBranch(output: encoder.name, drain: false)])
        #expect(plan.report.removedOutputs == ["movie"])
    }

    @Test func aChangedEncoderIsANewOneAndTheOldStaysForItsReaders() {
        let old = Self.encoder(), new = Self.encoder(keyInterval: 60)
        #expect(old.name != new.name)
        let running = Self.graph(
            [Self.camera()], GraphCompiler.withSharedEncoders([Self.reader("live", of: old), Self.reader("movie", of: old, writesFile: true)]))
        let target = Self.graph(
            [Self.camera()], GraphCompiler.withSharedEncoders([Self.reader("live", of: new), Self.reader("movie", of: old, writesFile: true)]))
        let plan = EditPlanner.plan(running: running, target: target)
        // The stream is rebuilt on its new encoder; the recording and the encoder it reads stay.
        // The recording's encoder first (file-writing readers keep theirs), then the stream's new one.
        #expect(target.branches.map(\.output) == [old.name, new.name, "live", "movie"])
        #expect(plan.edits == [.removeBranch(output: "live", drain: false), .addBranch(target.branches[1]), .addBranch(target.branches[2])])
    }

    /// A stream whose camera changes while a recording reads its encoder: the recording keeps the
    /// encoder it runs with, the stream gets an encoder of its own, under another name.
    @Test func theSameEncoderOnAnotherCameraGetsANameOfItsOwn() {
        let old = Self.encoder(), moved = Self.encoder().reading(["camera": "side"])
        #expect(old.name == moved.name)
        let branches = GraphCompiler.withSharedEncoders([Self.reader("live", of: moved), Self.reader("movie", of: old, writesFile: true)])
        #expect(branches.count == 4)
        let live = branches[2]
        #expect(live.output == "live")
        let own = live.reads[0]
        #expect(own.name != old.name && own.input == "side" && live.chains[0].input == own.name)
        #expect(own.elements.allSatisfy { $0.factory == "overlaycomposition" || $0.name.hasPrefix(own.name + "_") })
        #expect(branches[3].reads == [old])
        #expect(Set(branches.prefix(2).map(\.output)) == [old.name, own.name])
    }

    @Test func anEncoderWhoseInputLeavesTakesItsReadersFirst() {
        let encoder = Self.encoder()
        let running = Self.graph(
            [Self.camera()], GraphCompiler.withSharedEncoders([Self.reader("live", of: encoder), Self.reader("movie", of: encoder, writesFile: true)]))
        let plan = EditPlanner.plan(running: running, target: Self.graph([], []))
        #expect(
            plan.edits == [
                .removeBranch(output: "live", drain: false), .removeBranch(output: "movie", drain: true),
                .removeBranch(output: encoder.name, drain: false), .removeSource(input: "camera"),
            ])
    }

    @Test func aCameraSwapKeepsTheEncoderAndItsReaders() {
        let encoder = Self.encoder()
        let running = Self.graph(
            [Self.camera("front")], GraphCompiler.withSharedEncoders([Self.reader("movie", of: encoder.reading(["camera": "front"]), writesFile: true)]))
        let swapped = running.branches[1].reading(["front": "back"])
        let target = Self.graph([Self.camera("back", device: "/dev/video2")], GraphCompiler.withSharedEncoders([swapped]))
        let plan = EditPlanner.plan(running: running, target: target)
        #expect(plan.edits.count == 1)
        if case .swapSource(let from, let to)? = plan.edits.first { #expect(from == "front" && to.input == "back") } else { Issue.record("\(plan.edits)") }
    }
}
