import Foundation
import GStreamer

/// A capture session, like `AVCaptureSession`: inputs and outputs compiled into one GStreamer
/// pipeline. `commitConfiguration()` on a running session edits the live pipeline: only the
/// difference is applied, and the camera keeps streaming.
///
/// ```swift
/// let session = CaptureSession()
/// try session.addInput(CaptureDeviceInput(deviceID: "default"))
/// try session.setSessionPreset(.hd1280x720)
/// let photos = CapturePhotoOutput(name: "photo")
/// try session.addOutput(photos)
/// try await session.startRunning()
/// let photo = try await photos.capturePhoto(with: PhotoSettings(location: "IMG_%04d.jpg"))
/// await session.stopRunning()
/// ```
public final class CaptureSession: Sendable {
    private struct State {
        /// The configuration as the user set it.
        var committed = SessionConfiguration()
        /// What the running pipeline was last built from (rolled back to when a live edit fails).
        var applied = SessionConfiguration()
        /// The graph that runs (what a failed edit goes back to), and the context each output's branch
        /// in it was described with (what a recording command describes a movie branch from).
        var appliedGraph: CompiledGraph?
        var appliedContexts: [String: BranchContext] = [:]
        /// Counts changes of `committed`: a failed apply puts `committed` back only when no later
        /// change is queued behind it.
        var commitSerial = 0
        /// Identifies the running executor: incidents of an earlier one (delivered late, after a stop
        /// and a new start) are dropped.
        var engineID = 0
        /// The recordings of movie outputs, by output name: the owner's runtime state, compiled into
        /// each movie output's context.
        var recordings: [String: RecordingRequest] = [:]
        /// Counts what changed the running graph (commits, recordings): a compilation made before a
        /// change is made again.
        var generation = 0
        var pending: SessionConfiguration?
        var depth = 0
        var running = false
        var engine: PipelineExecutor?
        var interruptedDevice: String?
        var deviceWatch: Task<Void, Never>?
        /// Waiting for a reconnecting input's device to come back.
        var reconnection: Task<Void, Never>?
        weak var delegate: CaptureSessionDelegate?

        /// The sources of the running graph (none when the session is not running).
        var streamingSources: [SourceSegment] { engine == nil ? [] : appliedGraph?.sources ?? [] }
    }
    private let state = Locked(State())
    /// Held by whatever changes the configuration, from reading it to making the result `committed`:
    /// a block's begin, its outermost commit, and a change outside a block (checks, compilation and
    /// commit). Without it a block begun on one task while another task's commit compiles starts from
    /// the configuration before that commit, and its own commit would undo it. Taken before `state`.
    /// (It holds an Int no one reads: a `Locked(())`, nothing stored, makes a debug build under
    /// ThreadSanitizer report a "Swift access race" between two correctly locked uses; a 20-line
    /// program with two threads and the same lock class shows it too, and not with an Int.)
    private let configurationLock = Locked(0)
    /// The one owner of the running graph: lifecycle, commits and recording commands run here, one at
    /// a time, in the order they were asked for.
    private let queue = CommandQueue()
    private let hub = Broadcaster<SessionEvent>()
    private let delegateQueue = DispatchQueue(label: "capture.session.delegate")
    /// The session's name (the pipeline's name in GStreamer's debug output).
    public let name: String
    /// How long `startRunning` waits for the pipeline to play, and stopping waits for files to finish.
    public let stateTimeout: Duration
    /// How long stopping, or removing an output, waits for an output finishing its file while no
    /// frame moves through it (an encoder still working through frames it was given is waited for),
    /// before it reports the file as possibly incomplete.
    public let drainTimeout: Duration
    /// How long finishing one output's file may take in all, however busy its encoder still is.
    public let drainLimit: Duration

    /// A session with no inputs and no outputs, not running.
    /// - Parameters:
    ///   - name: The pipeline's name in GStreamer's debug output.
    ///   - stateTimeout: How long `startRunning()` waits for the pipeline to play.
    ///   - drainTimeout: How long stopping waits for an output to finish its file while nothing
    ///     moves through it.
    ///   - drainLimit: How long finishing one output's file may take in all (at least `drainTimeout`).
    public init(
        name: String = "capture-session", stateTimeout: Duration = .seconds(10), drainTimeout: Duration = .seconds(5),
        drainLimit: Duration = .seconds(120)
    ) {
        self.name = name
        self.stateTimeout = stateTimeout
        self.drainTimeout = drainTimeout
        self.drainLimit = max(drainLimit, drainTimeout)
    }

    deinit {
        state.withLock {
            $0.deviceWatch?.cancel(); $0.reconnection?.cancel()
        }
        hub.finish()
    }

    // MARK: Events

    /// The session's events, in order. Each call makes a new subscriber; nothing is dropped.
    public func events() -> AsyncStream<SessionEvent> { hub.stream() }

    /// Receives every event on the session's delegate queue.
    public var delegate: CaptureSessionDelegate? {
        get { state.withLock { $0.delegate } }
        set { state.withLock { $0.delegate = newValue } }
    }

    func post(_ kind: SessionEvent.Kind) {
        let event = SessionEvent(kind)
        hub.post(event)
        if let delegate = state.withLock({ $0.delegate }) {
            delegateQueue.async { delegate.captureSession(self, didPost: event) }
        }
    }

    // MARK: State

    /// True from the `session-started` event until the session stops (by `stopRunning()`, an error or an interruption).
    public var isRunning: Bool { state.withLock { $0.running } }

    /// The factory names of every element of the running pipeline (none when stopped): what tests and
    /// diagnostics count (one H.264 encoder for a stream and a recording of the same picture).
    var runningElementFactories: [String] { state.withLock { $0.engine }?.pipeline.elementFactoryNames ?? [] }
    /// True between an `interrupted` event and the matching `interruption-ended`.
    public var isInterrupted: Bool { state.withLock { $0.interruptedDevice != nil } }
    /// True inside a `beginConfiguration()`/`commitConfiguration()` block.
    public var isConfiguring: Bool { state.withLock { $0.depth > 0 } }

    private var configuration: SessionConfiguration {
        state.withLock { $0.pending ?? $0.committed }
    }

    /// The session's inputs, with the changes of an open configuration block.
    public var inputs: [CaptureDeviceInput] { configuration.inputs }
    /// The session's outputs, with the changes of an open configuration block.
    public var outputs: [CaptureOutput] { configuration.outputs }
    /// The session's preset (`high` until one is set), with the changes of an open configuration block.
    public var sessionPreset: SessionPreset { configuration.preset }

    // MARK: Presets

    /// True when every video input can serve the preset (natively or by scaling down).
    public func canSetSessionPreset(_ preset: SessionPreset) -> Bool {
        configuration.inputs.filter { $0.mediaType == .video }.allSatisfy { input in
            (try? FormatSelector.resolve(
                preset: preset, formats: input.device.formats, inputName: input.name,
                requestedSize: input.options.size, requestedRate: input.options.frameRate)) != nil
        }
    }

    /// Sets the first preset of the list every input can serve ("photo, else high") and returns it;
    /// when none can be, the error of the first one (naming the input that cannot serve it).
    @discardableResult
    public func setSessionPreset(_ preset: SessionPreset, fallbacks: [SessionPreset]) throws(CaptureError) -> SessionPreset {
        var firstError: CaptureError?
        for candidate in [preset] + fallbacks {
            do {
                try setSessionPreset(candidate)
                return candidate
            } catch {
                if firstError == nil { firstError = error }
            }
        }
        throw firstError ?? .invalidConfiguration(object: "the session", reason: "no preset given")
    }

    /// Sets the preset; a preset an input cannot serve is a typed error naming the input.
    public func setSessionPreset(_ preset: SessionPreset) throws(CaptureError) {
        try edit(
            checking: { configuration throws(CaptureError) in
                for input in configuration.inputs where input.mediaType == .video {
                    _ = try FormatSelector.resolve(
                        preset: preset, formats: input.device.formats, inputName: input.name,
                        requestedSize: input.options.size, requestedRate: input.options.frameRate)
                }
            }
        ) { $0.preset = preset }
    }

    // MARK: Inputs and outputs

    /// True when ``addInput(_:)`` would take the input: not in the session already, its name not taken, its device node there and openable.
    public func canAddInput(_ input: CaptureDeviceInput) -> Bool {
        (try? Self.validateAdd(input, to: configuration)) != nil
    }

    /// Adds an input. Inside a configuration block it waits for the commit; outside, the session's
    /// configuration is checked at once and, on a running session, the input is added to the live pipeline.
    /// - Throws: `inputAlreadyInSession`, `duplicateName`, `deviceNotFound` or `permissionDenied` for its
    ///   device node, or the error that makes the new configuration invalid.
    public func addInput(_ input: CaptureDeviceInput) throws(CaptureError) {
        try edit(checking: { configuration throws(CaptureError) in try Self.validateAdd(input, to: configuration) }) { $0.inputs.append(input) }
    }

    /// Removes an input; outputs it fed stop receiving its frames.
    /// - Throws: `unknownInput` when the input is not in the session, or the error that makes the new configuration invalid.
    public func removeInput(_ input: CaptureDeviceInput) throws(CaptureError) {
        try edit(
            checking: { configuration throws(CaptureError) in
                guard configuration.inputs.contains(where: { $0 === input }) else { throw .unknownInput(name: input.name) }
            }
        ) { $0.inputs.removeAll { $0 === input } }
    }

    /// Replaces an input by another in one configuration block (the front/back camera toggle). Outputs
    /// the old input fed go on with the new one: the preview resumes within a few frames and a
    /// recording goes on in the same file at the same size (scaled when the new camera's frames
    /// differ). When the new input cannot be added, or its device does not start, the old input stays
    /// and the error says why. The new input may have the old one's name.
    public func replaceInput(_ old: CaptureDeviceInput, with new: CaptureDeviceInput) async throws(CaptureError) {
        guard old.device.mediaType == new.device.mediaType else {
            throw .deviceMediaMismatch(id: new.device.uniqueID, expected: old.device.mediaType, actual: new.device.mediaType)
        }
        let check = { (current: SessionConfiguration) throws(CaptureError) -> Void in
            guard current.inputs.contains(where: { $0 === old }) else { throw .unknownInput(name: old.name) }
            if current.inputs.contains(where: { $0 === new }) { throw .inputAlreadyInSession(name: new.name) }
            if current.inputs.contains(where: { $0 !== old && $0.name == new.name }) || current.outputs.contains(where: { $0.name == new.name }) {
                throw .duplicateName(kind: "input", name: new.name)
            }
            try CaptureDeviceInput.checkAccess(new.device)
        }
        // Refused at once when it cannot be made (no block is opened), then checked again inside the
        // block, with no other change between that check and the edit.
        try check(configuration)
        beginConfiguration()
        do {
            try edit(checking: check) { configuration in
                if let index = configuration.inputs.firstIndex(where: { $0 === old }) { configuration.inputs[index] = new }
            }
        } catch {
            try? await commitConfiguration()
            throw error
        }
        try await commitConfiguration()
    }

    /// Switches the session's camera: to the device at `position` when one is given, else to the one
    /// at the opposite position (front and back), else to the next camera of the machine (real ones,
    /// then the test pattern). The new input keeps the old one's name and options; returns it.
    @discardableResult
    public func switchCamera(to position: DevicePosition? = nil) async throws(CaptureError) -> CaptureDeviceInput {
        guard let current = configuration.inputs.first(where: { $0.device.mediaType == .video }) else { throw .noVideoInput(output: "the session") }
        guard let device = CaptureDevice.camera(after: current.device, position: position) else {
            throw .noDeviceAvailable(media: .video)
        }
        let next = try CaptureDeviceInput(device: device, name: current.name, options: current.options)
        try await replaceInput(current, with: next)
        return next
    }

    /// True when ``addOutput(_:)`` would take the output: not in this session or another one, its name not taken.
    public func canAddOutput(_ output: CaptureOutput) -> Bool {
        (try? validateAdd(output, to: configuration)) != nil
    }

    /// Adds an output. Inside a configuration block it waits for the commit; outside, the session's
    /// configuration is checked at once and, on a running session, the output's branch is added to the live pipeline.
    /// - Throws: `outputAlreadyInSession`, `outputInAnotherSession`, `duplicateName`, or the error that
    ///   makes the new configuration invalid (`noVideoInput` ...).
    public func addOutput(_ output: CaptureOutput) throws(CaptureError) {
        var claimed = false
        try edit(
            checking: { configuration throws(CaptureError) in
                try self.validateAdd(output, to: configuration)
                claimed = output.ownerState.withLock { owner in
                    guard owner.id == nil else { return false }
                    owner = WeakSession(self)
                    return true
                }
                // Taken by another session between the check and here.
                if output.ownerState.value.id != ObjectIdentifier(self) { throw .outputInAnotherSession(name: output.name) }
            },
            failed: { if claimed { output.ownerState.value = WeakSession(nil) } }
        ) { $0.outputs.append(output) }
    }

    /// Removes an output; on a running session its branch leaves the live pipeline (a file it writes is finished first).
    /// - Throws: `unknownOutput` when the output is not in the session, or the error that makes the new configuration invalid.
    public func removeOutput(_ output: CaptureOutput) throws(CaptureError) {
        try edit(
            checking: { configuration throws(CaptureError) in
                guard configuration.outputs.contains(where: { $0 === output }) else { throw .unknownOutput(name: output.name) }
            },
            done: { inBlock in
                // Outside a block it has left: it may join another session (a block's commit frees it).
                if !inBlock { output.ownerState.value = WeakSession(nil) }
            }
        ) { $0.outputs.removeAll { $0 === output } }
    }

    /// The input or output of that name.
    public func input(named name: String) -> CaptureDeviceInput? { configuration.inputs.first { $0.name == name } }
    /// The output of that name, or nil.
    public func output(named name: String) -> CaptureOutput? { configuration.outputs.first { $0.name == name } }

    private static func validateAdd(_ input: CaptureDeviceInput, to current: SessionConfiguration) throws(CaptureError) {
        if current.inputs.contains(where: { $0 === input }) { throw .inputAlreadyInSession(name: input.name) }
        if current.inputs.contains(where: { $0.name == input.name }) || current.outputs.contains(where: { $0.name == input.name }) {
            throw .duplicateName(kind: "input", name: input.name)
        }
        try CaptureDeviceInput.checkAccess(input.device)
    }

    private func validateAdd(_ output: CaptureOutput, to current: SessionConfiguration) throws(CaptureError) {
        if current.outputs.contains(where: { $0 === output }) { throw .outputAlreadyInSession(name: output.name) }
        if let owner = output.ownerState.value.id, owner != ObjectIdentifier(self) { throw .outputInAnotherSession(name: output.name) }
        if current.outputs.contains(where: { $0.name == output.name }) || current.inputs.contains(where: { $0.name == output.name }) {
            throw .duplicateName(kind: "output", name: output.name)
        }
    }

    /// Applies an edit: inside a configuration block to the pending configuration; outside, validated
    /// at once and, on a running session, applied to the live pipeline in the background (failures
    /// are posted as `runtime-error`). `checking` sees the configuration the edit changes (the
    /// pending one inside a block) and throws to refuse it; nothing else changes the configuration
    /// between the check and the edit. `done` (told whether the edit waits in a block) and `failed`
    /// run under the same lock, after the edit or its refusal. The live edit is queued under the
    /// lock too, so the pipeline follows commits in the order they were made.
    private func edit(
        checking check: (SessionConfiguration) throws(CaptureError) -> Void = { _ in },
        done: (_ inBlock: Bool) -> Void = { _ in },
        failed: () -> Void = {},
        _ change: (inout SessionConfiguration) -> Void
    ) throws(CaptureError) {
        enum Next { case pending, offline(SessionConfiguration), live(SessionConfiguration) }
        let environment = CompileEnvironment.current  // before the lock: its first gathering runs the encoder trials
        try configurationLock.withLock { _ throws(CaptureError) in
            do throws(CaptureError) {
                try check(configuration)
                let next: Next = state.withLock { state in
                    if var pending = state.pending {
                        change(&pending)
                        state.pending = pending
                        return .pending
                    }
                    var copy = state.committed
                    change(&copy)
                    return state.running ? .live(copy) : .offline(copy)
                }
                switch next {
                case .pending:
                    break
                case .offline(let candidate):
                    _ = try GraphCompiler.compile(candidate, environment: environment)
                    commit(candidate)
                case .live(let candidate):
                    let compiled = try compileForRunningGraph(candidate, environment: environment)
                    // Reads and later edits see the change at once; the pipeline follows in order.
                    let serial = commit(candidate)
                    queue.submit {
                        do throws(CaptureError) { try await self.applyLive(candidate, serial: serial, compiled: compiled) } catch {
                            self.post(.runtimeError(error))
                        }
                    }
                }
                if case .pending = next { done(true) } else { done(false) }
            } catch {
                failed()
                throw error
            }
        }
    }

    // MARK: Configuration blocks

    /// Starts a configuration block; blocks nest. Nothing changes until the outermost commit.
    ///
    /// The block is the session's, as in AVFoundation, not the calling task's: blocks begun on several
    /// tasks at once nest into one, and every change made in them is applied (or refused) together at
    /// the outermost commit, whichever task makes it. An inner commit returns at once.
    public func beginConfiguration() {
        configurationLock.withLock { _ in
            state.withLock { state in
                if state.depth == 0 { state.pending = state.committed }
                state.depth += 1
            }
        }
    }

    /// Ends a configuration block. At the outermost commit the whole block is validated and applied
    /// atomically (on a running session, as live edits of the pipeline), or rejected as a whole.
    public func commitConfiguration() async throws(CaptureError) {
        enum Step { case inner, offline, live(Task<Result<Void, CaptureError>, Never>) }
        // The block's configuration, checked, made `committed` and (on a running session) queued
        // before a block begun meanwhile reads it or a later commit is queued.
        var previous = SessionConfiguration()
        var candidate = SessionConfiguration()
        let environment = CompileEnvironment.current  // before the lock: its first gathering runs the encoder trials
        do {
            let step: Step = try configurationLock.withLock { _ throws(CaptureError) -> Step in
                let taken = try state.withLock { state throws(CaptureError) -> (SessionConfiguration, SessionConfiguration, running: Bool)? in
                    guard state.depth > 0 else { throw .commitWithoutBegin }
                    state.depth -= 1
                    if state.depth > 0 { return nil }
                    defer { state.pending = nil }
                    return (state.committed, state.pending ?? state.committed, state.running)
                }
                guard let taken else { return .inner }
                (previous, candidate) = (taken.0, taken.1)
                if taken.running {
                    let compiled = try compileForRunningGraph(candidate, environment: environment)
                    let serial = commit(candidate)
                    let applying = candidate
                    return .live(queue.enqueue { () async throws(CaptureError) in try await self.applyLive(applying, serial: serial, compiled: compiled) })
                }
                _ = try GraphCompiler.compile(candidate, environment: environment)
                commit(candidate)
                return .offline
            }
            switch step {
            case .inner:
                return
            case .offline:
                post(.configurationCommitted(ConfigurationReport(offline: true)))
            case .live(let applying):
                try await applying.value.get()
            }
            // Outputs that left the session may join another one.
            releaseOutputs(previous.outputs.filter { output in !candidate.outputs.contains { $0 === output } })
        } catch {
            // Outputs the refused block added are free again.
            releaseOutputs(candidate.outputs.filter { output in !previous.outputs.contains { $0 === output } })
            throw error
        }
    }

    /// Frees outputs for other sessions, those of them that are not in the session's configuration
    /// now (a later change may have added one again).
    private func releaseOutputs(_ outputs: [CaptureOutput]) {
        guard !outputs.isEmpty else { return }
        configurationLock.withLock { _ in
            let current = configuration
            for output in outputs where !current.outputs.contains(where: { $0 === output }) {
                output.ownerState.value = WeakSession(nil)
            }
        }
    }

    /// A compilation of `configuration` against the running graph (its device formats and
    /// recordings), and the generation it was made at.
    private func compileForRunningGraph(
        _ configuration: SessionConfiguration, environment: CompileEnvironment
    ) throws(CaptureError) -> (Compilation, generation: Int) {
        let (formats, recordings, generation, streaming) = state.withLock {
            ($0.engine?.runningFormats ?? [:], $0.recordings, $0.generation, $0.streamingSources)
        }
        return (
            try GraphCompiler.compile(configuration, environment: environment, recordings: recordings, running: formats, streaming: streaming),
            generation
        )
    }

    /// Makes `candidate` the committed configuration; returns its serial.
    @discardableResult
    private func commit(_ candidate: SessionConfiguration) -> Int {
        state.withLock { state in
            state.committed = candidate
            state.commitSerial += 1
            return state.commitSerial
        }
    }

    /// Applies a configuration to the running pipeline. Runs on the command queue. `compiled` is used
    /// when nothing changed the running graph since it was made (a commit compiles once); otherwise the
    /// configuration is compiled again against what runs now. On any failure the session keeps running
    /// as it was, and `committed` goes back to what runs unless a later change is queued (`serial`).
    private func applyLive(_ candidate: SessionConfiguration, serial: Int, compiled: (Compilation, generation: Int)? = nil) async throws(CaptureError) {
        guard let engine = state.withLock({ $0.engine }) else { return }  // stopped meanwhile: applies at the next start
        let (formats, recordings, generation, streaming) = state.withLock {
            ($0.engine?.runningFormats ?? [:], $0.recordings, $0.generation, $0.streamingSources)
        }
        do throws(CaptureError) {
            let compilation: Compilation
            if let compiled, compiled.generation == generation, compiled.0.runningFormats == formats {
                compilation = compiled.0
            } else {
                compilation = try GraphCompiler.compile(
                    candidate, environment: .current, recordings: recordings, running: formats, streaming: streaming)
            }
            try Self.prepare(candidate.outputs, for: compilation.graph)
            do throws(CaptureError) {
                let report = try await engine.apply(compilation.graph, outputs: Self.byName(candidate.outputs))
                applied(candidate, compilation)
                post(.configurationCommitted(report))
            } catch {
                await rollBack(engine)
                throw error
            }
        } catch {
            state.withLock { state in
                if state.commitSerial == serial { state.committed = state.applied }
            }
            throw error
        }
    }

    /// After a failed edit: the graph that ran before is put back, so the session keeps running as it
    /// was; a recording the failed edit finished does not come back (its file is complete).
    private func rollBack(_ engine: PipelineExecutor) async {
        let (previous, graph) = state.withLock { state -> (SessionConfiguration, CompiledGraph?) in
            let ended = state.recordings.filter { $0.value.recording.hasEnded }.map(\.key)
            for name in ended { state.recordings[name] = nil }
            state.appliedGraph?.branches.removeAll { ended.contains($0.output) }
            if let branches = state.appliedGraph?.branches { state.appliedGraph?.branches = GraphCompiler.withSharedEncoders(branches) }
            state.generation += 1
            return (state.applied, state.appliedGraph)
        }
        if let graph { _ = try? await engine.apply(graph, outputs: Self.byName(previous.outputs)) }
    }

    /// Records what runs now, and tells every output the context its branch runs with. A recording
    /// keeps the branch it was first applied with; one whose branch is not in the graph (its output
    /// left, its connection was disabled, an input it reads went) has been finished and is forgotten.
    private func applied(_ configuration: SessionConfiguration, _ compilation: Compilation) {
        state.withLock { state in
            var recordings: [String: RecordingRequest] = [:]
            for (name, request) in state.recordings {
                guard let branch = compilation.graph.branches.first(where: { $0.output == name }), !request.recording.hasEnded else { continue }
                // The branch as compiled: the one first applied, reading the inputs that replaced its own.
                recordings[name] = RecordingRequest(recording: request.recording, branch: branch)
            }
            state.applied = configuration
            state.appliedGraph = compilation.graph
            state.appliedContexts = compilation.contexts
            state.recordings = recordings
            state.generation += 1
        }
        for output in configuration.outputs { output.configurationApplied(compilation.contexts[output.name]) }
    }

    /// Lets each output with a branch in `graph` make what it needs outside the pipeline.
    private static func prepare(_ outputs: [CaptureOutput], for graph: CompiledGraph) throws(CaptureError) {
        for output in outputs where graph.branches.contains(where: { $0.output == output.name }) {
            try output.prepareToRun()
        }
    }

    private static func byName(_ outputs: [CaptureOutput]) -> [String: CaptureOutput] {
        Dictionary(outputs.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    // MARK: Recording commands

    /// Adds a recording's branch to the running graph: the owner's command behind
    /// `CaptureMovieFileOutput.startRecording`. Returns once the branch runs. Only that branch changes:
    /// it is described from the context the output was last applied with, and nothing else is compiled
    /// (settings of other outputs changed since the last commit wait for the next one).
    func startRecording(_ recording: MovieRecording, for output: CaptureMovieFileOutput) async throws(CaptureError) {
        try await queue.run { () async throws(CaptureError) in
            let (engine, configuration, graph, appliedContext) = self.state.withLock { state in
                (state.running ? state.engine : nil, state.applied, state.appliedGraph, state.appliedContexts[output.name])
            }
            guard let engine, let graph, configuration.outputs.contains(where: { $0 === output }) else {
                throw .notRunning(object: output.description)
            }
            guard var context = appliedContext else {
                throw .invalidMovieSettings(output: output.name, reason: "its connection is disabled, so it has nothing to record")
            }
            context.recording = RecordingRequest(recording: recording, branch: nil)
            guard let branch = try output.describeBranch(context) else {
                throw .invalidMovieSettings(output: output.name, reason: "it has no branch to record with")
            }
            var target = graph
            target.branches.removeAll { $0.output == output.name }
            target.branches.append(branch)
            // A recording that reads a stream's encoder changes how that encoder's queue behaves.
            target.branches = GraphCompiler.withSharedEncoders(target.branches)
            do throws(CaptureError) {
                _ = try await engine.apply(target, outputs: Self.byName(configuration.outputs))
            } catch {
                await self.rollBack(engine)
                throw error
            }
            self.state.withLock { state in
                state.recordings[output.name] = RecordingRequest(recording: recording, branch: branch)
                state.appliedGraph = target
                state.appliedContexts[output.name] = context
                state.generation += 1
            }
        }
    }

    /// Removes a recording's branch from the running graph, which finishes its file (the end of the
    /// stream goes through it first): the owner's command behind `stopRecording` and the limits. Only
    /// that branch changes.
    func stopRecording(for output: String) async {
        _ = try? await queue.run { () async throws(CaptureError) in
            let (engine, configuration, graph, request) = self.state.withLock { state in
                (state.running ? state.engine : nil, state.applied, state.appliedGraph, state.recordings[output])
            }
            guard request != nil else { return }
            guard let engine, var target = graph else {
                self.state.withLock { _ = $0.recordings.removeValue(forKey: output) }
                return
            }
            target.branches.removeAll { $0.output == output }
            // A shared encoder the recording was the last to read leaves with it.
            target.branches = GraphCompiler.withSharedEncoders(target.branches)
            _ = try await engine.apply(target, outputs: Self.byName(configuration.outputs))
            self.state.withLock { state in
                state.recordings[output] = nil
                state.appliedGraph = target
                state.appliedContexts[output]?.recording = nil
                state.generation += 1
            }
        }
    }

    // MARK: Compilation

    /// The session compiled to GStreamer terms, without running it.
    public func compile() throws(CaptureError) -> CompiledGraph {
        let environment = CompileEnvironment.current
        let (formats, recordings) = state.withLock { ($0.engine?.runningFormats ?? [:], $0.recordings) }
        return try GraphCompiler.compile(configuration, environment: environment, recordings: recordings, running: formats).graph
    }

    /// Every pipeline the session runs: the session graph, the graph while its movie outputs record,
    /// and each photo output's encoder pipeline (what `capture compile` prints).
    public func compilePipelines() throws(CaptureError) -> SessionPipelines {
        let environment = CompileEnvironment.current
        let configuration = self.configuration
        let (running, recordings) = state.withLock { ($0.engine?.runningFormats ?? [:], $0.recordings) }
        let session = try GraphCompiler.compile(configuration, environment: environment, recordings: recordings, running: running).graph
        let allMovies = configuration.outputs.compactMap { $0 as? CaptureMovieFileOutput }
        // Pre-roll movies keep one branch all the time; their files are written by pipelines of their own.
        let movies = allMovies.filter { $0.settings.effectivePreRoll == nil }
        let recording = movies.filter { !$0.isRecording && !($0.settings.location ?? "").isEmpty }.map(\.name)
        let withoutLocation = movies.filter { !$0.isRecording && ($0.settings.location ?? "").isEmpty }.map(\.name)
        let whileRecording =
            recording.isEmpty
            ? nil
            : try GraphCompiler.compile(
                configuration, environment: environment, recordings: recordings, running: running, assumingRecording: true
            ).graph
        var encoders: [SessionPipelines.PhotoEncoderPipeline] = []
        for case let photo as CapturePhotoOutput in configuration.outputs {
            if let launch = try photo.encoderLaunch(in: session) {
                encoders.append(.init(output: photo.name, launchDescription: launch))
            }
        }
        var pipelines = SessionPipelines(
            session: session, whileRecording: whileRecording, recordingOutputs: recording,
            outputsWithoutLocation: withoutLocation, photoEncoders: encoders)
        pipelines.streams = configuration.outputs.compactMap { $0 as? CaptureStreamOutput }
            .map { .init(output: $0.name, launchDescription: $0.streamLaunchDescription) }
        pipelines.preRollRecorders = allMovies.compactMap { movie in
            movie.settings.effectivePreRoll.map { .init(output: movie.name, preRoll: $0, launchDescription: movie.preRollLaunchDescription) }
        }
        return pipelines
    }

    // MARK: Running

    /// Builds the pipeline and starts it; returns when it plays. Typed errors: device busy, not found,
    /// permission denied, format not negotiated, start timed out ...
    public func startRunning() async throws(CaptureError) {
        if state.withLock({ $0.depth > 0 }) { throw .startInsideConfiguration }
        try await queue.run { () async throws(CaptureError) in
            if self.state.withLock({ $0.running }) { return }
            let (configuration, serial) = self.state.withLock { ($0.committed, $0.commitSerial) }
            let compilation = try GraphCompiler.compile(configuration, environment: .current)
            let engineID = self.state.withLock { state in
                state.engineID += 1
                return state.engineID
            }
            let engine = try PipelineExecutor(
                name: self.name, stateTimeout: self.stateTimeout, drainTimeout: self.drainTimeout, drainLimit: self.drainLimit,
                post: { [weak self] kind in self?.post(kind) },
                incident: { [weak self] incident in self?.handle(incident, from: engineID) })
            try Self.prepare(configuration.outputs, for: compilation.graph)
            try await engine.start(compilation.graph, outputs: Self.byName(configuration.outputs))
            // Under the configuration lock: a change committed before this saw a stopped session and
            // is applied below; one after it sees a running session and queues its own live edit.
            let (latest, latestSerial) = self.configurationLock.withLock { _ in
                self.state.withLock { state in
                    state.engine = engine
                    state.running = true
                    state.interruptedDevice = nil
                    return (state.committed, state.commitSerial)
                }
            }
            self.applied(configuration, compilation)
            self.watchDevices()
            self.post(.sessionStarted)
            // A change committed while the pipeline started (to a session not yet running) is applied now.
            if latestSerial != serial {
                do throws(CaptureError) { try await self.applyLive(latest, serial: latestSerial) } catch { self.post(.runtimeError(error)) }
            }
        }
    }

    /// Stops the session: recordings are finalized first. Returns when everything is released.
    public func stopRunning() async {
        // The user's stop also ends a wait for a reconnecting device.
        state.withLock { state in
            state.reconnection?.cancel()
            state.reconnection = nil
        }
        await stop()
    }

    /// True while the session, stopped because a reconnecting input's device went away, waits for it.
    public var isAwaitingReconnection: Bool { state.withLock { $0.reconnection != nil && !$0.running } }

    /// Stops through the command queue, leaving a wait for a reconnecting device as it is.
    private func stop() async {
        _ = try? await queue.run { () async throws(CaptureError) in
            await self.stopNow()
        }
    }

    private func stopNow() async {
        guard
            let engine = state.withLock({ state -> PipelineExecutor? in
                defer { state.engine = nil; state.running = false }
                return state.running ? state.engine : nil
            })
        else { return }
        state.withLock {
            $0.deviceWatch?.cancel(); $0.deviceWatch = nil
        }
        // Files are finished first (each recording branch drained), then everything is released.
        await engine.stop()
        // A camera node that vanished under the session: what GStreamer still holds of it is let go.
        if let lost = state.withLock({ $0.interruptedDevice }), lost.hasPrefix("/dev/video") {
            DeviceControl.releaseVanished(devicePath: lost)
        }
        state.withLock { state in
            state.recordings.removeAll()
            state.appliedGraph = nil
            state.generation += 1
        }
        post(.sessionStopped)
    }

    /// An incident of the executor `engineID`; one from an executor that is gone (delivered late, after
    /// a stop and a new start) says nothing about the one that runs now.
    private func handle(_ incident: EngineIncident, from engineID: Int) {
        guard state.withLock({ $0.engineID == engineID }) else { return }
        switch incident {
        case .sourceFailed(let input, let error, let disconnected):
            // After the first failure of a source, its other elements' follow-up errors say nothing new.
            guard state.withLock({ $0.running && $0.interruptedDevice == nil }) else { return }
            let device = configuration.inputs.first { $0.name == input }?.device.uniqueID ?? input
            post(.runtimeError(error))
            interrupt(device: device, reason: disconnected ? .deviceDisconnected : .deviceError)
        case .branchFailed(let output, let error):
            configuration.outputs.first { $0.name == output }?.branchFailed(error)
            post(.runtimeError(error))
            Task { await self.stopRunning() }
        case .pipelineFailed(let error):
            post(.runtimeError(error))
            Task { await self.stopRunning() }
        case .endOfStream:
            let device = configuration.inputs.first?.device.uniqueID ?? "input"
            interrupt(device: device, reason: .endOfStream)
        }
    }

    /// Posts `interrupted` once, then stops the session (finalizing recordings). When the device went
    /// away and its input reconnects, the session then waits for the device to come back.
    private func interrupt(device: String, reason: InterruptionReason) {
        let first = state.withLock { state -> Bool in
            guard state.running, state.interruptedDevice == nil else { return false }
            state.interruptedDevice = device
            return true
        }
        guard first else { return }
        post(.interrupted(reason, device: device))
        let configuration = self.configuration
        let reconnects =
            reason == .deviceDisconnected
            && configuration.inputs.contains { $0.device.uniqueID == device && $0.options.reconnects }
        guard reconnects else {
            Task { await self.stopRunning() }
            return
        }
        // Note what was recording, then stop and wait for the device.
        let lost = configuration.inputs.first { $0.device.uniqueID == device }
        let recordings = configuration.outputs.compactMap { $0 as? CaptureMovieFileOutput }.compactMap { movie in
            movie.outputFileURL.map { (movie, $0.path) }
        }
        // Listen now: the device may come back before the session has stopped.
        let events = DeviceRegistry.shared.events.stream()
        let task = Task {
            await self.stop()
            if let lost { await self.awaitReconnection(of: lost, events: events, recordings: recordings) }
        }
        state.withLock { $0.reconnection = task }
    }

    /// Waits for the input's device to come back (at its id, or, for a camera whose node comes back
    /// under another number, at the same `stableID`), then starts the session again with the input on
    /// the device as it came back, posts `resumed`, and records on in a new numbered file where a
    /// recording was interrupted. Looks twice a second; ends when the user stops the session.
    private func awaitReconnection(
        of input: CaptureDeviceInput, events: AsyncStream<DeviceEvent>,
        recordings: [(CaptureMovieFileOutput, String)]
    ) async {
        let lost = input.device
        // What the device monitor says of the device since it went: back once it says connected.
        let announced = Locked<CaptureDevice?>(nil)
        let listener = Task {
            for await event in events {
                switch event {
                case .connected(let device) where Self.matches(device, lost): announced.value = device
                case .disconnected(let device) where Self.matches(device, lost): announced.value = nil
                default: break
                }
            }
        }
        defer {
            listener.cancel()
            state.withLock { $0.reconnection = nil }
        }
        var reported = false
        while !Task.isCancelled {
            if let back = Self.returned(lost, announced: announced.value) {
                do throws(CaptureError) {
                    if back.uniqueID != lost.uniqueID, let current = self.input(named: input.name) {
                        let moved = try CaptureDeviceInput(device: back, name: input.name, options: input.options)
                        try removeInput(current)
                        try addInput(moved)
                    }
                    try await startRunning()
                    post(.resumed(device: back.uniqueID))
                    for (movie, previous) in recordings {
                        do throws(CaptureError) {
                            _ = try await movie.startRecording(to: FileNaming.nextFree(previous))
                        } catch {
                            post(.runtimeError(error))
                        }
                    }
                    return
                } catch {
                    // Back in the list but not ready yet (still settling, busy): say it once, look again.
                    if !reported { post(.runtimeError(error)) }
                    reported = true
                }
            }
            try? await Task.sleep(for: .milliseconds(500))
        }
    }

    /// The device as it is back, if it is. A V4L2 camera is back when its node answers again (at its
    /// path, or at another node with the same `stableID`); any other device when the device monitor
    /// has announced it again since it went.
    private static func returned(_ lost: CaptureDevice, announced: CaptureDevice?) -> CaptureDevice? {
        let devices = DeviceRegistry.shared.realDevices
        if lost.uniqueID.hasPrefix("/dev/video") {
            if DeviceControl.isPresent(devicePath: lost.uniqueID), let same = devices.first(where: { $0.uniqueID == lost.uniqueID }) { return same }
            guard lost.stableID != lost.uniqueID else { return nil }
            return devices.first {
                $0.stableID == lost.stableID && $0.mediaType == lost.mediaType && $0.uniqueID.hasPrefix("/dev/video")
                    && DeviceControl.isPresent(devicePath: $0.uniqueID)
            }
        }
        return announced
    }

    /// The same device, or the same device under another node.
    private static func matches(_ device: CaptureDevice, _ lost: CaptureDevice) -> Bool {
        device.uniqueID == lost.uniqueID || (lost.stableID != lost.uniqueID && device.stableID == lost.stableID)
    }

    /// Follows hot-plug while running: a device of this session that disappears interrupts it.
    private func watchDevices() {
        let events = DeviceRegistry.shared.events.stream()
        // A session on virtual devices has not needed the device monitor yet: start it without holding
        // up the start (hot-plug events are the session's to report whatever its inputs are).
        Task.detached { DeviceRegistry.shared.startIfNeeded() }
        let task = Task { [weak self] in
            for await event in events {
                guard let self else { return }
                switch event {
                case .connected(let device):
                    self.post(.deviceConnected(device))
                    let ended = self.state.withLock { state -> Bool in
                        guard state.interruptedDevice == device.uniqueID else { return false }
                        state.interruptedDevice = nil
                        return true
                    }
                    if ended { self.post(.interruptionEnded) }
                case .disconnected(let device):
                    self.post(.deviceDisconnected(device))
                    if self.configuration.inputs.contains(where: { $0.device.uniqueID == device.uniqueID }) {
                        self.interrupt(device: device.uniqueID, reason: .deviceDisconnected)
                    }
                }
            }
        }
        state.withLock { $0.deviceWatch = task }
    }
}
