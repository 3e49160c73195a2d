import Foundation
import GStreamer

/// The executor's inputs: each input's bin and tee, built, restarted, swapped for another device's
/// and removed while the branches that read the tee stay linked; and what the sources' pads tell.
extension PipelineExecutor {
    func addSource(_ segment: SourceSegment, running: Bool) throws(CaptureError) {
        try plugSource(segment, into: nil, running: running)
    }

    /// Builds an input's bin and links it into its tee: a new tee (added to the pipeline) or, for a
    /// restart, the tee its branches stay linked to. `running`: synced to the playing pipeline.
    private func plugSource(_ segment: SourceSegment, into existingTee: Element?, running: Bool) throws(CaptureError) {
        let object = "input '\(segment.input)'"
        let bin: Bin
        let tee: Element
        do {
            bin = try BinBuilder.bin(named: "input-\(segment.input)", chains: [Chain(input: nil, elements: segment.elements)])
            guard let last = segment.elements.last, let pad = bin.child(named: last.name)?.staticPad("src") else {
                throw GStreamerError.noSuchPad(element: segment.input, pad: "src")
            }
            try bin.addGhostPad(name: "src", target: pad)
            if let existingTee {
                tee = existingTee
            } else {
                tee = try Element.make("tee", name: segment.teeName)
                try tee.set("allow-not-linked", "true")
                try pipeline.add(tee)
            }
            try pipeline.add(bin)
            guard let binPad = bin.staticPad("src"), let teePad = tee.staticPad("sink") else {
                throw GStreamerError.noSuchPad(element: segment.input, pad: "src")
            }
            try binPad.link(to: teePad)
        } catch let error as GStreamerError {
            throw CaptureError(error, object: object)
        } catch {
            throw .pipelineBuildFailed(object: object, reason: "\(error)")
        }
        // The device's current settings (simulated controls, crop zoom) are on the elements before they run.
        let tap = SourceTap(segment: segment, bin: bin, post: postEvent)
        if let tap, let device = segment.captureDevice { DeviceControlHub.shared.attach(tap, device: device) }
        state.withLock { state in
            state.sources[segment.input] = SourceInstance(segment: segment, bin: bin, tee: tee, tap: tap)
            state.endedInputs.remove(segment.input)
            if !state.order.contains(segment.input) { state.order.append(segment.input) }
        }
        router.register(bin, for: .input(segment.input))
        guardReconfigure(bin, segment: segment)
        watchEndOfStream(bin, input: segment.input)
        watchFrameSequence(bin, segment: segment)
        guard running else { return }
        if !segment.isLive, let offset = pipeline.runningTime {
            // A file starts at time zero: shift it onto the running pipeline's timeline.
            bin.staticPad("src")?.setOffset(Int64(offset))
        }
        do {
            if existingTee == nil { try tee.syncStateWithParent() }
            try bin.syncStateWithParent()
        } catch {
            throw CaptureError(error, object: object)
        }
    }

    /// Keeps RECONFIGURE events away from a source that restarts its stream on one (pipewiresrc, see
    /// `SourceSegment.dropsReconfigure`): a probe on the pad linked to the source's own pad drops them
    /// before they reach it (on the source's pad it would be too late: GStreamer flags the pad on arrival,
    /// before probes run). Live edits then leave the stream and its timestamps alone.
    private func guardReconfigure(_ bin: Bin, segment: SourceSegment) {
        guard segment.dropsReconfigure, segment.elements.count > 1,
            let pad = bin.child(named: segment.elements[1].name)?.staticPad("sink")
        else { return }
        pad.addProbe(.eventUpstream) { _, info in info.isReconfigure ? .drop : .ok }
    }

    /// Follows the end of stream of a source (a file that reached its end): when every input has ended,
    /// the session is told. EOS the engine sends itself (stopping) does not count.
    private func watchEndOfStream(_ bin: Bin, input: String) {
        bin.staticPad("src")?.addProbe(.eventDownstream) { [weak self] _, info in
            guard info.isEOS, let self else { return .ok }
            let allEnded = self.state.withLock { state -> Bool in
                guard !state.stopping else { return false }
                state.endedInputs.insert(input)
                return state.sources.keys.allSatisfy { state.endedInputs.contains($0) }
            }
            // Through the incident queue, behind any error the source posted before its end of stream.
            if allEnded { self.incidentQueue.async { [incident = self.incident] in incident(.endOfStream) } }
            return .ok
        }
    }

    /// Follows the frame sequence numbers a V4L2 driver stamps on its buffers (the buffer offset, which
    /// pipewiresrc fills from PipeWire's buffer header, the driver's number for a V4L2 node): a gap
    /// means the driver dropped frames before they reached the session. Every output fed by that input
    /// is told (`CaptureOutput.sourceDroppedFrames`), once per missing frame.
    private func watchFrameSequence(_ bin: Bin, segment: SourceSegment) {
        guard segment.deliversDriverFrames, let device = segment.elements.first,
            let pad = bin.child(named: device.name)?.staticPad("src")
        else { return }
        let last = Locked<UInt64>(UInt64.max)
        let input = segment.input
        pad.addProbe(.buffer) { [weak self] _, info in
            guard let offset = info.buffer?.offset, let self else { return .ok }
            let previous = last.withLock { value in
                defer { value = offset }; return value
            }
            if let missing = FrameSequence.missing(previous: previous, current: offset), missing > 0 {
                self.framesLost(input: input, count: missing)
            }
            return .ok
        }
    }

    private func framesLost(input: String, count: Int) {
        let outputs = state.withLock { state in
            let fed = state.branches.values.filter { branch in branch.links.contains { $0.input == input } }
            // The readers of a shared encoder the input feeds miss the same frames.
            let encoders = Set(fed.filter(\.segment.providesInput).map(\.segment.output))
            let readers = state.branches.values.filter { branch in branch.links.contains { encoders.contains($0.input) } }
            return (fed + readers).compactMap(\.output)
        }
        for output in outputs { output.sourceDroppedFrames(count) }
    }

    /// Blocks a source's output, then stops and releases it. The tee and its branches stay.
    private func detachSourceBin(_ input: String) async throws(CaptureError) -> SourceInstance? {
        guard let instance = state.withLock({ $0.sources[input] }), let pad = instance.bin.staticPad("src") else { return nil }
        if let tap = instance.tap { DeviceControlHub.shared.detach(tap.id) }
        let blocked = Promise<Void>()
        let probe = pad.addProbe(.blockDownstream) { _, _ in
            blocked.succeed(())
            return .ok
        }
        // A source that produces nothing (already failed) never blocks; that is fine too.
        _ = try? await blocked.value(timeout: .seconds(2), timeoutError: .timedOut(waitingFor: "input '\(input)' to stop pushing", seconds: 2))
        // Stopping the source waits for its streaming thread, and a thread held by the block above is
        // only let go when the bin's own pads are deactivated, after its children: stopping a blocked
        // source deadlocks. So the block becomes a drop first: the thread goes on, nothing it pushes
        // leaves the bin, and the source stops.
        let drop = pad.addProbe([.buffer, .bufferList, .eventDownstream]) { _, _ in .drop }
        pad.removeProbe(probe)
        instance.bin.setLockedState(true)
        _ = try? instance.bin.setState(.null)
        pad.removeProbe(drop)
        if let teeSink = instance.tee.staticPad("sink") { pad.unlink(from: teeSink) }
        pipeline.remove(instance.bin)
        return instance
    }

    func restartSource(_ segment: SourceSegment) async throws(CaptureError) {
        try await swapSource(from: segment.input, to: segment)
    }

    /// A camera switch (or a restart of one input with new settings): the old source leaves the tee
    /// its branches are linked to and the new one starts into it; the branches read the new input from
    /// then on, their links untouched. When the new source fails or sends no frame within
    /// `startTimeout`, it leaves and the old one is put back.
    func swapSource(from old: String, to segment: SourceSegment) async throws(CaptureError) {
        guard let previous = try await detachSourceBin(old) else {
            if old != segment.input { try addSource(segment, running: true) }
            return
        }
        router.unregister(.input(old))
        rename(old, to: segment.input)
        do {
            try await startSource(segment, into: previous.tee)
        } catch {
            _ = try? await detachSourceBin(segment.input)
            router.unregister(.input(segment.input))
            rename(segment.input, to: old)
            try? plugSource(previous.segment, into: previous.tee, running: true)
            throw error
        }
    }

    /// How long a swapped-in source has to send its first frame.
    static let startTimeout = Duration.seconds(5)

    /// Plugs a source into an existing tee on the playing pipeline and waits for its first buffer; an
    /// error it posts meanwhile is the failure (and is not reported again as an incident).
    private func startSource(_ segment: SourceSegment, into tee: Element) async throws(CaptureError) {
        let started = Promise<Void>()
        let input = segment.input
        let ticket = expect(failOnError: false) { [weak self] message in
            guard message.kind == .error, let self, case .input(input)? = self.router.owner(of: message) else { return nil }
            let error = self.captureError(for: message)
            started.fail(error)
            return .failure(error)
        }
        defer { stopWaiting(for: ticket) }
        try plugSource(segment, into: tee, running: true)
        guard let pad = state.withLock({ $0.sources[input]?.bin.staticPad("src") }) else { return }
        let probe = pad.addProbe(.buffer) { _, _ in
            started.succeed(())
            return .remove
        }
        do {
            try await started.value(
                timeout: Self.startTimeout,
                timeoutError: .deviceStartFailed(id: segment.device, detail: "it sent no frame within \(Int(Self.startTimeout.seconds)) s"))
        } catch {
            pad.removeProbe(probe)
            throw error
        }
    }

    /// An input's place in the running graph under another name: its source entry, and every branch
    /// link and branch segment that read it.
    private func rename(_ old: String, to new: String) {
        guard old != new else { return }
        state.withLock { state in
            if let instance = state.sources.removeValue(forKey: old) { state.sources[new] = instance }
            if state.endedInputs.remove(old) != nil { state.endedInputs.insert(new) }
            state.order = state.order.map { $0 == old ? new : $0 }
            for name in Array(state.branches.keys) {
                // A branch that reads the input, or a shared encoder that reads it (its readers know
                // which input their encoder reads).
                guard var branch = state.branches[name], branch.segment.inputs.contains(old) || branch.segment.reads.contains(where: { $0.input == old })
                else { continue }
                branch.segment = branch.segment.reading([old: new])
                branch.links = branch.links.map { link in
                    var link = link
                    if link.input == old { link.input = new }
                    return link
                }
                state.branches[name] = branch
            }
        }
    }

    func removeSource(_ input: String) async throws(CaptureError) {
        guard let instance = try await detachSourceBin(input) else { return }
        _ = try? instance.tee.setState(.null)
        pipeline.remove(instance.tee)
        state.withLock { state in
            state.sources[input] = nil
            state.endedInputs.remove(input)
            state.order.removeAll { $0 == input }
        }
        router.unregister(.input(input))
    }
}
