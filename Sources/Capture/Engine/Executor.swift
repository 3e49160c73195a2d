import Foundation
import GStreamer
import Synchronization

/// Something the engine saw that the session must act on.
enum EngineIncident: Sendable {
    /// An input's source failed (device gone, read error ...).
    case sourceFailed(input: String, error: CaptureError, disconnected: Bool)
    /// An output's branch failed; the rest of the session can go on.
    case branchFailed(output: String, error: CaptureError)
    /// Every source ended (a `file:` input reached its end).
    case endOfStream
    /// An error no input or output owns.
    case pipelineFailed(CaptureError)
}

/// The running GStreamer pipeline of a session, and the executor of the edits `EditPlanner` plans:
/// it builds the parts of a compiled graph (one bin per input, a tee, one bin per output), applies
/// edits behind pad probes while the pipeline plays, and reports what the pipeline says.
///
/// Threading (see docs/architecture.md): `start`, `apply` and `stop` are called by the session's
/// command queue only, one at a time. The bus sync handler and the pad probes run on GStreamer's
/// threads: they read lock-protected maps, fulfil promises and post events, and never block; what
/// needs the device (an ioctl) is handed to the incident queue.
final class PipelineExecutor: Sendable {
    let pipeline: Pipeline
    private let bus: Bus
    /// Which input or output a bus message belongs to (its bins are registered as they are built).
    let router = BusRouter()
    /// Where bus errors that need a look at the device are turned into incidents (off GStreamer's threads).
    private let incidentQueue = DispatchQueue(label: "capture.executor.incidents")

    private struct SourceInstance {
        var segment: SourceSegment
        var bin: Bin
        var tee: Element
        /// The source as the device controls see it (cameras and the test pattern).
        var tap: SourceTap?
    }
    private struct BranchLink {
        var input: String
        var teePad: Pad
        var sinkPad: Pad
    }
    private struct BranchInstance {
        var segment: BranchSegment
        var bin: Bin
        var links: [BranchLink]
        /// The output the branch belongs to; nil for a shared encoder (it belongs to its readers).
        var output: CaptureOutput?
        /// A shared encoder's tee (in the pipeline), which its readers' chains are linked to.
        var tee: Element?
    }
    private struct State {
        var sources: [String: SourceInstance] = [:]
        var branches: [String: BranchInstance] = [:]
        var order: [String] = []
        var stopping = false
        var qosDropped: [String: UInt64] = [:]
        /// Inputs whose source sent end-of-stream (a `file:` input at its end).
        var endedInputs: Set<String> = []
        /// Branches whose sinks have all received end-of-stream (their files are finished).
        var finishedBranches: Set<String> = []
        /// Shared encoders that produced nothing while a leaving recording waited for their last
        /// frames (their camera failed): their other readers do not wait again.
        var stalledEncoders: Set<String> = []
    }
    private let state = Locked(State())

    private struct Waiter {
        let match: @Sendable (Message) -> Result<Message, CaptureError>?
        let promise: Promise<Message>
    }
    private let waiters = Locked<[Int: Waiter]>([:])
    private let nextWaiter = Atomic<Int>(0)

    private let postEvent: @Sendable (SessionEvent.Kind) -> Void
    private let incident: @Sendable (EngineIncident) -> Void
    let stateTimeout: Duration
    /// How long a draining branch may go without a frame moving through it, and how long in all.
    let drainTimeout: Duration
    let drainLimit: Duration

    init(
        name: String, stateTimeout: Duration = .seconds(10), drainTimeout: Duration = .seconds(5), drainLimit: Duration = .seconds(120),
        post: @escaping @Sendable (SessionEvent.Kind) -> Void, incident: @escaping @Sendable (EngineIncident) -> Void
    ) throws(CaptureError) {
        do {
            pipeline = try Pipeline.make(name: name)
        } catch {
            throw CaptureError(error, object: "the session pipeline")
        }
        bus = pipeline.bus
        postEvent = post
        self.incident = incident
        self.stateTimeout = stateTimeout
        self.drainTimeout = drainTimeout
        self.drainLimit = drainLimit
        bus.setSyncHandler { [weak self] message in self?.handle(message) }
    }

    deinit {
        for tap in state.withLock({ $0.sources.values.compactMap(\.tap?.id) }) { DeviceControlHub.shared.detach(tap) }
        _ = try? pipeline.setState(.null)
        bus.setFlushing(true)
        bus.removeSyncHandler()
    }

    func post(_ kind: SessionEvent.Kind) { postEvent(kind) }

    /// The compiled graph the pipeline runs now.
    var current: CompiledGraph {
        state.withLock { state in
            CompiledGraph(
                sources: state.order.compactMap { state.sources[$0]?.segment },
                branches: state.order.compactMap { state.branches[$0]?.segment })
        }
    }

    /// Device formats of the running inputs.
    var runningFormats: [String: ResolvedFormat] {
        state.withLock { $0.sources.compactMapValues { $0.segment.format } }
    }

    // MARK: Lifecycle

    /// Builds the whole graph and brings the pipeline to PLAYING, awaiting the bus.
    func start(_ graph: CompiledGraph, outputs: [String: CaptureOutput]) async throws(CaptureError) {
        let plan = EditPlanner.plan(running: CompiledGraph(sources: [], branches: []), target: graph)
        if graph.sources.contains(where: \.dropsReconfigure) {
            // pipewiresrc would otherwise be the pipeline's clock: a clock that starts at the monotonic
            // time plus an offset its element takes from its last reading, so a source swapped in later
            // or a clock read before the stream negotiated puts the frames seconds away from the running
            // time. Its buffers carry monotonic timestamps (the V4L2 driver's), which the system clock keeps.
            // (A PipeWire camera that joins a running session later runs on that session's clock: the
            // system clock too, unless a microphone source provides one.)
            pipeline.useSystemClock()
        }
        _ = try await execute(plan, order: graph, outputs: outputs, live: false)
        let ticket = expect { [pipeline] message in
            if message.kind == .stateChanged, message.sourceObject == pipeline.pointer, message.stateChange?.new == .playing {
                return .success(message)
            }
            return nil
        }
        defer { stopWaiting(for: ticket) }
        do {
            try pipeline.setState(.playing)
        } catch {
            // The reason is on the bus already (posted during the state change); give it a moment.
            var reason = CaptureError.pipelineBuildFailed(object: "the session", reason: error.description)
            do {
                _ = try await ticket.value(timeout: .milliseconds(500), timeoutError: reason)
            } catch let posted {
                reason = posted
            }
            await teardown()
            throw reason
        }
        do {
            _ = try await ticket.value(timeout: stateTimeout, timeoutError: .startTimedOut(seconds: stateTimeout.seconds))
        } catch {
            await teardown()
            // What the message could not say, the device can (asked here, on the session's task).
            let device = graph.sources.first { $0.media == .video }?.device
            throw ErrorMapper.refined(error, device: device)
        }
    }

    /// Finalizes files (EOS through the pipeline when a branch writes one), then stops and releases
    /// every element.
    func stop() async {
        let writers = state.withLock { state -> [String] in
            state.stopping = true
            return state.order.filter { state.branches[$0]?.segment.writesFile == true }
        }
        // Each file-writing branch is drained on its own (EOS through it, bounded wait), which works
        // whether or not its sources can still push: a failed camera cannot carry an EOS any more.
        for name in writers { try? await removeBranch(name) }
        await teardown()
    }

    private func teardown() async {
        let (outputs, taps) = state.withLock { state in
            defer { state.branches.removeAll(); state.sources.removeAll(); state.order.removeAll() }
            return (state.branches.values.compactMap(\.output), state.sources.values.compactMap(\.tap?.id))
        }
        for tap in taps { DeviceControlHub.shared.detach(tap) }
        for output in outputs { output.detach() }
        _ = try? pipeline.setState(.null)
        router.removeAll()
        // Fail whatever still waits on this pipeline.
        let pending = waiters.withLock { waiters in
            defer { waiters.removeAll() }
            return Array(waiters.values)
        }
        for waiter in pending { waiter.promise.fail(.notRunning(object: "the session")) }
    }

    // MARK: Live reconfiguration

    /// Applies the edits that turn the running graph into `target`, keeping everything that does not
    /// change flowing; returns what changed.
    func apply(_ target: CompiledGraph, outputs: [String: CaptureOutput]) async throws(CaptureError) -> ConfigurationReport {
        let plan = EditPlanner.plan(running: current, target: target)
        return try await execute(plan, order: target, outputs: outputs, live: true)
    }

    /// Applies a plan's edits in order. `live`: the pipeline plays, so new parts are synced to its state.
    private func execute(
        _ plan: EditPlan, order target: CompiledGraph, outputs: [String: CaptureOutput], live: Bool
    ) async throws(CaptureError) -> ConfigurationReport {
        for edit in plan.edits {
            switch edit {
            case .removeBranch(let output, _):
                try await removeBranch(output)
            case .removeSource(let input):
                try await removeSource(input)
            case .restartSource(let segment, _):
                try await restartSource(segment)
            case .swapSource(let old, let segment):
                try await swapSource(from: old, to: segment)
            case .retargetSource(let segment):
                state.withLock { $0.sources[segment.input]?.segment = segment }
            case .addSource(let segment):
                try addSource(segment, running: live)
            case .addBranch(let segment):
                let output = outputs[segment.output]
                guard output != nil || segment.providesInput else { throw .unknownOutput(name: segment.output) }
                try addBranch(segment, output: output, running: live)
            case .updateBranch(let segment):
                try updateLiveProperties(segment)
            }
        }
        state.withLock { state in
            state.order = target.sources.map(\.input) + target.branches.map(\.output)
        }
        return plan.report
    }

    // MARK: Sources

    private func addSource(_ segment: SourceSegment, running: Bool) throws(CaptureError) {
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

    private func restartSource(_ segment: SourceSegment) async throws(CaptureError) {
        try await swapSource(from: segment.input, to: segment)
    }

    /// A camera switch (or a restart of one input with new settings): the old source leaves the tee
    /// its branches are linked to and the new one starts into it; the branches read the new input from
    /// then on, their links untouched. When the new source fails or sends no frame within
    /// `startTimeout`, it leaves and the old one is put back.
    private func swapSource(from old: String, to segment: SourceSegment) async throws(CaptureError) {
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

    private func removeSource(_ input: String) async throws(CaptureError) {
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

    // MARK: Branches

    /// A tee branches are linked to: an input's, or a shared encoder's.
    private func tee(feeding input: String) -> Element? {
        state.withLock { $0.sources[input]?.tee ?? $0.branches[input]?.tee }
    }

    private func addBranch(_ segment: BranchSegment, output: CaptureOutput?, running: Bool) throws(CaptureError) {
        let object = output?.description ?? "the shared encoder '\(segment.output)'"
        let bin: Bin
        var pads: [(input: String, pad: Pad)] = []
        var sharedTee: Element?
        do {
            bin = try BinBuilder.bin(named: "output-\(segment.output)", chains: segment.chains)
            // Lets the engine see the EOS of each sink inside (files are finished) as a forwarded message.
            try bin.set("message-forward", "true")
            for chain in segment.chains {
                guard let input = chain.input else { continue }
                guard let first = chain.elements.first, let target = bin.child(named: first.name)?.staticPad("sink") else {
                    throw GStreamerError.noSuchPad(element: segment.output, pad: "sink")
                }
                pads.append((input, try bin.addGhostPad(name: "sink_\(input)", target: target)))
            }
            try pipeline.add(bin)
            if segment.providesInput {
                // A shared encoder: its last element feeds a tee in the pipeline, beside the inputs' tees.
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
                sharedTee = tee
                // One stream on the running time for the encoder, whatever camera feeds it.
                if let first = segment.chains.first?.elements.first, let pad = bin.child(named: first.name)?.staticPad("src") {
                    let time = ContinuousTime()
                    pad.addProbe([.buffer, .eventDownstream]) { _, info in time.probe(info) }
                }
            }
        } catch let error as GStreamerError {
            throw CaptureError(error, object: object)
        } catch {
            throw .pipelineBuildFailed(object: object, reason: "\(error)")
        }
        router.register(bin, for: .output(segment.output))
        let encoders = state.withLock { state in segment.reads.compactMap { state.branches[$0.name]?.bin } }
        output?.attach(BranchHandle(bin: bin, output: segment.output, engine: self, sharedEncoders: encoders))
        watchQueueOverruns(bin, segment: segment)
        if running {
            do { try bin.syncStateWithParent() } catch { throw CaptureError(error, object: object) }
        }
        var links: [BranchLink] = []
        for (input, sinkPad) in pads {
            guard let tee = tee(feeding: input) else { throw .unknownInput(name: input) }
            do {
                let teePad = try tee.requestPad("src_%u")
                // Hold the tee's new pad while it is linked so the first buffer follows the sticky events.
                let probe = teePad.addProbe(.blockDownstream) { _, _ in .ok }
                defer { teePad.removeProbe(probe) }
                try teePad.link(to: sinkPad)
                links.append(BranchLink(input: input, teePad: teePad, sinkPad: sinkPad))
            } catch {
                throw CaptureError(error, object: object)
            }
        }
        state.withLock { state in
            state.branches[segment.output] = BranchInstance(segment: segment, bin: bin, links: links, output: output, tee: sharedTee)
            if !state.order.contains(segment.output) { state.order.append(segment.output) }
        }
    }

    /// A leaky queue at the head of a branch drops its oldest frame when a new one arrives while it is
    /// full: the output's consumer is behind. Each such frame is reported as `frame-dropped` (reason
    /// `late`) so that a slow output is never silent about what it missed. Only preview and frames
    /// outputs, which show or hand over every frame: a metadata output skips frames by design and a
    /// photo output takes one on request.
    private func watchQueueOverruns(_ bin: Bin, segment: BranchSegment) {
        // Web previews (`jpeg-preview`, `webrtc-preview`) show every frame too.
        guard segment.kind == "preview" || segment.kind == "frames" || segment.kind.hasSuffix("-preview") else { return }
        for chain in segment.chains {
            guard let head = chain.elements.first, head.factory == "queue",
                head.properties.contains(where: { $0.name == "leaky" && $0.value != "no" && $0.value != "0" }),
                let limit = head.properties.first(where: { $0.name == "max-size-buffers" }).flatMap({ Int64($0.value) }), limit > 0,
                let pad = bin.child(named: head.name)?.staticPad("sink")
            else { continue }
            let output = segment.output
            pad.addProbe(.buffer) { [weak self] pad, _ in
                // The queue is read through the pad (not captured) so the probe holds no reference to it.
                if let queue = pad.parentElement, let level = queue.int("current-level-buffers"), level >= limit {
                    self?.post(.frameDropped(output: output, reason: .lateData))
                }
                return .ok
            }
        }
    }

    /// Unlinks a branch from its tees at an idle moment, drains it when it writes a file, and
    /// releases it. The other branches never stop flowing.
    private func removeBranch(_ name: String) async throws(CaptureError) {
        guard let instance = state.withLock({ $0.branches[name] }) else { return }
        let removedAt = pipeline.runningTime
        for link in instance.links {
            if let removedAt, instance.segment.writesFile,
                state.withLock({ $0.branches[link.input]?.tee != nil && !$0.stalledEncoders.contains(link.input) }),
                await !takeEncodedFrames(until: removedAt, from: link.teePad)
            {
                state.withLock { _ = $0.stalledEncoders.insert(link.input) }
            }
            let unlinked = Promise<Void>()
            let sinkPad = link.sinkPad
            link.teePad.addProbe(.idle) { pad, _ in
                pad.unlink(from: sinkPad)
                unlinked.succeed(())
                return .remove
            }
            _ = try? await unlinked.value(timeout: .seconds(2), timeoutError: .timedOut(waitingFor: "output '\(name)' to be unlinked", seconds: 2))
            if !unlinked.isFulfilled { link.teePad.unlink(from: sinkPad) }
            if let tee = tee(feeding: link.input) { tee.releaseRequestPad(link.teePad) }
        }
        if instance.segment.writesFile {
            let bin = instance.bin
            let ticket = expect(failOnError: false) { message in
                guard message.sourceObject == bin.pointer, let inner = message.forwarded, inner.kind == .eos else { return nil }
                return .success(message)
            }
            defer { stopWaiting(for: ticket) }
            // A branch that already received its end of stream (its file input ended) is finished; the
            // waiter is registered first so that an end arriving meanwhile is not missed.
            let finished = state.withLock { $0.finishedBranches.contains(name) }
            // The end of the stream follows the frames still queued in the branch: a slow encoder
            // (a small board, an emulated machine) may take seconds to work through them. The wait
            // goes on while frames move through the branch and gives up once nothing moved for
            // `drainTimeout` (or after `drainLimit`).
            let moved = Locked(0)
            let watched = finished ? [] : Self.drainProgressPads(of: instance)
            let probes = watched.map { pad in
                pad.addProbe(.buffer) { _, _ in
                    moved.withLock { $0 += 1 }
                    return .ok
                }
            }
            defer { for (pad, probe) in zip(watched, probes) { pad.removeProbe(probe) } }
            if !finished { for link in instance.links { link.sinkPad.sendEOS() } }
            if !finished,
                (try? await ticket.value(
                    stallTimeout: drainTimeout, limit: drainLimit, progress: { moved.value },
                    timeoutError: .timedOut(waitingFor: "output '\(name)' to finish its file", seconds: drainTimeout.seconds))) == nil
            {
                postEvent(
                    .runtimeError(
                        .streamingFailed(
                            element: instance.output?.description ?? name,
                            message:
                                "did not finish writing (no frame moved through it for \(drainTimeout.seconds) s, or \(drainLimit.seconds) s passed); the file may be incomplete",
                            debug: nil)))
            }
        }
        instance.output?.detach()
        instance.bin.setLockedState(true)
        _ = try? instance.bin.setState(.null)
        pipeline.remove(instance.bin)
        if let tee = instance.tee {
            // A shared encoder leaves after its last reader (the planner orders it so): its tee goes too.
            tee.setLockedState(true)
            _ = try? tee.setState(.null)
            pipeline.remove(tee)
        }
        state.withLock { state in
            state.branches[name] = nil
            state.finishedBranches.remove(name)
            state.stalledEncoders.remove(name)
            state.order.removeAll { $0 == name }
        }
        router.unregister(.output(name))
    }

    /// Where frames leave the first and the last element of each chain of a branch (a queue, an
    /// encoder into the muxer, the muxer itself): a buffer through any of them is a drain moving on.
    /// One frame taken from the queue may keep the encoder busy for long (a frame-rate element fills a
    /// gap of the camera's with copies, each encoded), so its output counts too.
    private static func drainProgressPads(of instance: BranchInstance) -> [Pad] {
        instance.segment.chains.flatMap { chain in
            [chain.elements.first, chain.elements.count > 1 ? chain.elements.last : nil].compactMap { element in
                element.flatMap { instance.bin.child(named: $0.name)?.staticPad("src") }
            }
        }
    }

    /// A reader of a shared encoder (a recording) leaves with every frame that was captured before it
    /// was asked to: those still inside the encoder (its queue and its thread) come out after the
    /// moment of the request. Frames pass the reader's tee pad until the first one captured at or
    /// after `time` (pipeline running time; an encoder's output timestamps are read through its
    /// segment, x264enc's start an hour in); that one and any later are dropped until the pad is
    /// unlinked (the probe goes with the pad, released just after). A bounded wait: an encoder that no
    /// longer produces (its camera failed) holds the removal up for half a second, once; returns false
    /// then.
    private func takeEncodedFrames(until time: UInt64, from pad: Pad) async -> Bool {
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

    private func updateLiveProperties(_ segment: BranchSegment) throws(CaptureError) {
        guard let instance = state.withLock({ $0.branches[segment.output] }) else { return }
        for element in segment.allElements where !element.liveProperties.isEmpty {
            guard let live = instance.bin.child(named: element.name) else { continue }
            for property in element.liveProperties where live.string(property.name) != property.value {
                do { try live.set(property.name, property.value) } catch {
                    throw CaptureError(error, object: instance.output?.description ?? segment.output)
                }
            }
        }
        state.withLock { $0.branches[segment.output]?.segment = segment }
    }

    // MARK: Bus

    /// Registers a waiter BEFORE the action that produces the awaited message. With `failOnError`, any
    /// error message fails the wait; a drain passes false: a dying source posts errors while the file
    /// is still being finished, and the timeout bounds the wait anyway.
    private func expect(failOnError: Bool = true, _ match: @escaping @Sendable (Message) -> Result<Message, CaptureError>?) -> Promise<Message> {
        let id = nextWaiter.add(1, ordering: .relaxed).newValue
        let promise = Promise<Message>()
        // Any error while waiting fails the wait with the error it means.
        let matchOrFail: @Sendable (Message) -> Result<Message, CaptureError>? = { [weak self] message in
            if let result = match(message) { return result }
            if failOnError, message.kind == .error, let self { return .failure(self.captureError(for: message)) }
            return nil
        }
        waiters.withLock { $0[id] = Waiter(match: matchOrFail, promise: promise) }
        return promise
    }

    /// Forgets a waiter that is no longer awaited (its wait timed out, or what it waited for came
    /// another way), so that nothing it holds outlives the wait.
    private func stopWaiting(for promise: Promise<Message>) {
        waiters.withLock { waiters in waiters = waiters.filter { $0.value.promise !== promise } }
    }

    /// Runs on the thread that posted the message: match waiters, route, return.
    private func handle(_ message: Message) {
        let matched: [(Promise<Message>, Result<Message, CaptureError>)] = waiters.withLock { waiters in
            var results: [(Promise<Message>, Result<Message, CaptureError>)] = []
            for (id, waiter) in waiters {
                if let result = waiter.match(message) {
                    results.append((waiter.promise, result))
                    waiters[id] = nil
                }
            }
            return results
        }
        for (promise, result) in matched { promise.fulfill(result) }
        switch message.kind {
        case .error:
            if !matched.isEmpty { return }  // a waiter (start) reports it
            guard let busError = message.error else { return }
            let owner = router.owner(of: message)
            let device = self.device(of: owner)
            let error = ErrorMapper.map(busError, owner: owner, device: device)
            // A shared encoder that fails fails the outputs that read it (a recording's file is then
            // incomplete, and says so).
            var failedOutputs: [String] = []
            if case .output(let name)? = owner {
                failedOutputs = state.withLock { state in
                    guard state.branches[name]?.segment.providesInput == true else { return [name] }
                    return state.order.filter { reader in state.branches[reader]?.links.contains { $0.input == name } == true }
                }
            }
            // Whether the device is still there, and what a refusal means, are asked of the device (an
            // ioctl): not on this streaming thread.
            incidentQueue.async { [incident, failedOutputs] in
                switch owner {
                case .input(let name):
                    let present = device.flatMap(ErrorMapper.devicePresent)
                    let disconnected = ErrorMapper.meansDisconnection(busError, devicePresent: present)
                    incident(.sourceFailed(input: name, error: ErrorMapper.refined(error, device: device), disconnected: disconnected))
                case .output(let name):
                    for output in failedOutputs.isEmpty ? [name] : failedOutputs { incident(.branchFailed(output: output, error: error)) }
                case nil: incident(.pipelineFailed(error))
                }
            }
        case .eos:
            // Ends of stream are followed where they start, at the sources (watchEndOfStream): a pipeline
            // EOS may also come from a branch the engine drained on purpose.
            break
        case .element:
            if let inner = message.forwarded {
                if inner.kind == .eos, case .output(let name)? = router.owner(of: message) {
                    state.withLock { _ = $0.finishedBranches.insert(name) }
                }
                return
            }
            guard case .output(let name)? = router.owner(of: message), let structure = message.structure,
                let output = state.withLock({ $0.branches[name]?.output })
            else { return }
            output.handleElementMessage(structure, from: message.sourceName)
        case .qos:
            guard case .output(let name)? = router.owner(of: message), let dropped = message.qosDropped else { return }
            let increased = state.withLock { state -> Bool in
                let previous = state.qosDropped[name] ?? 0
                state.qosDropped[name] = dropped
                return dropped > previous
            }
            if increased { postEvent(.frameDropped(output: name, reason: .lateData)) }
        default:
            break
        }
    }

    /// The device id of an input (nil for outputs and the pipeline).
    private func device(of owner: ErrorMapper.Owner?) -> String? {
        guard case .input(let name)? = owner else { return nil }
        return state.withLock { $0.sources[name]?.segment.device }
    }

    /// The capture error a bus error message means (pure: no device is asked).
    func captureError(for message: Message) -> CaptureError {
        guard let error = message.error else { return .streamingFailed(element: message.sourceName, message: "unknown error", debug: nil) }
        let owner = router.owner(of: message)
        return ErrorMapper.map(error, owner: owner, device: device(of: owner))
    }
}

/// Frame sequence numbers of a capture device (V4L2 stamps each buffer's offset with the driver's
/// sequence counter).
enum FrameSequence {
    /// How many frames are missing between two consecutive buffers; nil when either carries no
    /// sequence number or the counter restarted (a new stream after the device was restarted).
    static func missing(previous: UInt64, current: UInt64) -> Int? {
        let none = UInt64.max  // GST_BUFFER_OFFSET_NONE
        guard previous != none, current != none, current > previous else { return nil }
        let gap = current - previous - 1
        // A jump this large is not a few dropped frames but a counter that does not count frames.
        return gap < 100_000 ? Int(gap) : nil
    }
}
