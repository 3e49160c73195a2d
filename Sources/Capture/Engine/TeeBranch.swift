import GStreamer

/// One link of a branch to a tee: an input's or a shared encoder's.
struct BranchLink {
    var input: String
    /// The tee's request pad the branch reads.
    var teePad: Pad
    /// The branch bin's ghost sink pad for `input`.
    var sinkPad: Pad
}

/// How a branch hangs off the graph's tees while the pipeline plays: linked to a new request pad of
/// each tee it reads (the tee's pad held while it is linked), a shared encoder's own tee after its
/// last element, and unlinked again at an idle moment. The other branches of a tee never stop.
enum TeeBranch {
    /// Links each of a branch's sink pads to a new request pad of the tee that feeds its input. The
    /// tee's new pad is blocked while it is linked, so the first buffer follows the sticky events.
    /// Typed errors: `unknownInput` (no tee feeds it), or the link's failure, naming `object`.
    static func link(_ pads: [(input: String, pad: Pad)], object: String, tee: (String) -> Element?) throws(CaptureError) -> [BranchLink] {
        var links: [BranchLink] = []
        for (input, sinkPad) in pads {
            guard let tee = tee(input) else { throw .unknownInput(name: input) }
            do {
                let teePad = try tee.requestPad("src_%u")
                let probe = teePad.addProbe(.blockDownstream) { _, _ in .ok }
                defer { teePad.removeProbe(probe) }
                try teePad.link(to: sinkPad)
                links.append(BranchLink(input: input, teePad: teePad, sinkPad: sinkPad))
            } catch {
                throw CaptureError(error, object: object)
            }
        }
        return links
    }

    /// A shared encoder's tee, `OUTPUT_tee`: added to the pipeline beside the inputs' tees and fed by
    /// the branch's last element, so that its readers' chains link to it. The encoder's input is kept
    /// on one stream of running time (`ContinuousTime`), whatever camera feeds it.
    static func outputTee(of bin: Bin, segment: BranchSegment, in pipeline: Pipeline, running: Bool) throws(GStreamerError) -> Element {
        guard let last = segment.chains.last?.elements.last, let target = bin.child(named: last.name)?.staticPad("src") else {
            throw GStreamerError.noSuchPad(element: segment.output, pad: "src")
        }
        let source = try bin.addGhostPad(name: "src", target: target)
        let tee = try Element.make("tee", name: "\(segment.output)_tee")
        try tee.set("allow-not-linked", "true")
        try pipeline.add(tee)
        guard let teeSink = tee.staticPad("sink") else { throw GStreamerError.noSuchPad(element: "\(segment.output)_tee", pad: "sink") }
        try source.link(to: teeSink)
        if running { try tee.syncStateWithParent() }
        if let first = segment.chains.first?.elements.first, let pad = bin.child(named: first.name)?.staticPad("src") {
            let time = ContinuousTime()
            pad.addProbe([.buffer, .eventDownstream]) { _, info in time.probe(info) }
        }
        return tee
    }

    /// Unlinks a branch's link from its tee when the tee's pad is idle (bounded: after 2 s it is
    /// unlinked anyway), and gives the pad back to the tee.
    static func unlink(_ link: BranchLink, from tee: Element?, output name: String) async {
        let unlinked = Promise<Void>()
        let sinkPad = link.sinkPad
        link.teePad.addProbe(.idle) { pad, _ in
            pad.unlink(from: sinkPad)
            unlinked.succeed(())
            return .remove
        }
        _ = try? await unlinked.value(timeout: .seconds(2), timeoutError: .timedOut(waitingFor: "output '\(name)' to be unlinked", seconds: 2))
        if !unlinked.isFulfilled { link.teePad.unlink(from: sinkPad) }
        tee?.releaseRequestPad(link.teePad)
    }

    /// A reader of a shared encoder (a recording) leaves with every frame that was captured before it
    /// was asked to: those still inside the encoder (its queue and its thread) come out after the
    /// moment of the request. Frames pass the reader's tee pad until the first one captured at or
    /// after `time` (pipeline running time; an encoder's output timestamps are read through its
    /// segment, x264enc's start an hour in); that one and any later are dropped until the pad is
    /// unlinked (the probe goes with the pad, released just after). A bounded wait: an encoder that no
    /// longer produces (its camera failed) holds the removal up for half a second, once; returns false
    /// then.
    static func takeEncodedFrames(until time: UInt64, from pad: Pad) async -> Bool {
        guard let segment = pad.currentSegment, segment.isTime else { return true }
        let reached = Promise<Void>()
        pad.addProbe(.buffer) { _, info in
            guard let pts = info.buffer?.pts, let running = segment.runningTime(of: pts), running >= time else { return .ok }
            reached.succeed(())
            return .drop
        }
        return (try? await reached.value(timeout: .milliseconds(500), timeoutError: .timedOut(waitingFor: "the shared encoder's last frame", seconds: 0.5)))
            != nil
    }
}
