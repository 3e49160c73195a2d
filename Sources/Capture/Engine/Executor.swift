import Foundation
import GStreamer

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
    let incidentQueue = DispatchQueue(label: "capture.executor.incidents")

    struct SourceInstance {
        var segment: SourceSegment
        var bin: Bin
        var tee: Element
        /// The source as the device controls see it (cameras and the test pattern).
        var tap: SourceTap?
    }
    struct BranchInstance {
        var segment: BranchSegment
        var bin: Bin
        var links: [BranchLink]
        /// The output the branch belongs to; nil for a shared encoder (it belongs to its readers).
        var output: CaptureOutput?
        /// A shared encoder's tee (in the pipeline), which its readers' chains are linked to.
        var tee: Element?
    }
    struct State {
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
    let state = Locked(State())

    /// The waits on the pipeline's bus (`expect`).
    private let waiters = BusWaiters<Result<Message, CaptureError>>()

    let postEvent: @Sendable (SessionEvent.Kind) -> Void
    let incident: @Sendable (EngineIncident) -> Void
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
            message.isStateChange(of: pipeline, to: .playing) ? .success(message) : nil
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
            return state.order.filter { state.branches[$0]?.segment.drains == true }
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
        waiters.cancelAll(answering: .failure(.notRunning(object: "the session")))
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

    // MARK: Branches

    /// A tee branches are linked to: an input's, or a shared encoder's.
    func tee(feeding input: String) -> Element? {
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
            // A shared encoder: its last element feeds a tee in the pipeline, beside the inputs' tees.
            if segment.providesInput { sharedTee = try TeeBranch.outputTee(of: bin, segment: segment, in: pipeline, running: running) }
        } catch let error as GStreamerError {
            throw CaptureError(error, object: object)
        } catch {
            throw .pipelineBuildFailed(object: object, reason: "\(error)")
        }
        router.register(bin, for: .output(segment.output), output: output)
        let encoders = state.withLock { state in segment.reads.compactMap { state.branches[$0.name]?.bin } }
        output?.attach(BranchHandle(bin: bin, output: segment.output, engine: self, sharedEncoders: encoders))
        watchQueueOverruns(bin, segment: segment)
        if running {
            do { try bin.syncStateWithParent() } catch { throw CaptureError(error, object: object) }
        }
        let links = try TeeBranch.link(pads, object: object) { tee(feeding: $0) }
        state.withLock { state in
            state.branches[segment.output] = BranchInstance(segment: segment, bin: bin, links: links, output: output, tee: sharedTee)
            if !state.order.contains(segment.output) { state.order.append(segment.output) }
        }
    }

    /// A leaky queue at the head of a branch drops its oldest frame when a new one arrives while it is
    /// full: the output's consumer is behind. Each such frame is reported as `frame-dropped` (reason
    /// `late`) so that a slow output is never silent about what it missed. Only branches that report
    /// late frames (`BranchSegment.reportsLateFrames`: previews and frames outputs, which show or hand
    /// over every frame); a metadata output skips frames by design and a photo output takes one on request.
    private func watchQueueOverruns(_ bin: Bin, segment: BranchSegment) {
        guard segment.reportsLateFrames else { return }
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
                await !TeeBranch.takeEncodedFrames(until: removedAt, from: link.teePad)
            {
                state.withLock { _ = $0.stalledEncoders.insert(link.input) }
            }
            await TeeBranch.unlink(link, from: tee(feeding: link.input), output: name)
        }
        if instance.segment.drains {
            let bin = instance.bin
            let ticket = expect(failOnError: false) { message in
                message.isForwardedEndOfStream(from: bin) ? .success(message) : nil
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
                    timeoutError: .timedOut(waitingFor: "output '\(name)' to finish", seconds: drainTimeout.seconds))) == nil
            {
                postEvent(
                    .runtimeError(
                        .streamingFailed(
                            element: instance.output?.description ?? name,
                            message:
                                instance.segment.writesFile
                                ? "did not finish writing (no frame moved through it for \(drainTimeout.seconds) s, or \(drainLimit.seconds) s passed); the file may be incomplete"
                                : "did not take its last frames (no frame moved through it for \(drainTimeout.seconds) s, or \(drainLimit.seconds) s passed)",
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
    func expect(failOnError: Bool = true, _ match: @escaping @Sendable (Message) -> Result<Message, CaptureError>?) -> Promise<Message> {
        let promise = Promise<Message>()
        // Any error while waiting fails the wait with the error it means.
        let matchOrFail: @Sendable (Message) -> Result<Message, CaptureError>? = { [weak self] message in
            if let result = match(message) { return result }
            if failOnError, message.kind == .error, let self { return .failure(self.captureError(for: message)) }
            return nil
        }
        waiters.register(for: promise, match: matchOrFail) { promise.fulfill($0) }
        return promise
    }

    /// Forgets a waiter that is no longer awaited (its wait timed out, or what it waited for came
    /// another way), so that nothing it holds outlives the wait.
    func stopWaiting(for promise: Promise<Message>) {
        waiters.cancel(promise)
    }

    /// Runs on the thread that posted the message: match waiters, route, return.
    private func handle(_ message: Message) {
        let answered = waiters.dispatch(message)
        switch message.kind {
        case .error:
            if answered > 0 { return }  // a waiter (start) reports it
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
            if message.asksForWindowHandle, let sink = message.sourceElement {
                output.prepareWindow(sink)
                return
            }
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
            // An element asks for a context (waylandsink: the application's Wayland display), on its own
            // thread and before it goes on: the output of its branch answers now or never.
            // The router knows the output from the moment its bin is registered: a branch added to a
            // running session asks while it is synced to the pipeline's state, before it is recorded.
            guard let type = message.neededContextType, let element = message.sourceElement, let output = router.output(of: message) else { return }
            output.provideContext(type, to: element)
        }
    }

    /// The device id of an input (nil for outputs and the pipeline).
    func device(of owner: ErrorMapper.Owner?) -> String? {
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
