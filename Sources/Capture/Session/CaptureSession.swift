import Foundation
import GStreamer
import Synchronization

/// A capture session, like `AVCaptureSession`: inputs and outputs compiled into one GStreamer
/// pipeline. `commitConfiguration()` on a running session edits the live pipeline: only the
/// difference is applied, and the camera keeps streaming.
public final class CaptureSession: Sendable {
    private struct State {
        /// The configuration as the user set it.
        var committed = SessionConfiguration()
        /// What the running pipeline was last built from (rolled back to when a live edit fails).
        var applied = SessionConfiguration()
        var pending: SessionConfiguration?
        var depth = 0
        var running = false
        var engine: PipelineExecutor?
        var interruptedDevice: String?
        var deviceWatch: Task<Void, Never>?
        weak var delegate: CaptureSessionDelegate?
    }
    private let state = Mutex(State())
    private let executor = SerialExecutor()
    private let hub = Broadcaster<SessionEvent>()
    private let delegateQueue = DispatchQueue(label: "capture.session.delegate")
    /// The session's name (the pipeline's name in GStreamer's debug output).
    public let name: String
    /// How long `startRunning` waits for the pipeline to play, and stopping waits for files to finish.
    public let stateTimeout: Duration
    public let drainTimeout: Duration

    public init(name: String = "capture-session", stateTimeout: Duration = .seconds(10), drainTimeout: Duration = .seconds(5)) {
        self.name = name
        self.stateTimeout = stateTimeout
        self.drainTimeout = drainTimeout
    }

    deinit {
        state.withLock { $0.deviceWatch?.cancel() }
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

    public var isRunning: Bool { state.withLock { $0.running } }
    /// True between an `interrupted` event and the matching `interruption-ended`.
    public var isInterrupted: Bool { state.withLock { $0.interruptedDevice != nil } }
    public var isConfiguring: Bool { state.withLock { $0.depth > 0 } }

    private var configuration: SessionConfiguration {
        state.withLock { $0.pending ?? $0.committed }
    }

    public var inputs: [CaptureDeviceInput] { configuration.inputs }
    public var outputs: [CaptureOutput] { configuration.outputs }
    public var sessionPreset: SessionPreset { configuration.preset }

    // MARK: Presets

    /// True when every video input can serve the preset (natively or by scaling down).
    public func canSetSessionPreset(_ preset: SessionPreset) -> Bool {
        configuration.inputs.filter { $0.mediaType == .video }.allSatisfy { input in
            (try? FormatSelector.resolve(preset: preset, formats: input.device.formats, inputName: input.name,
                                         requestedSize: input.options.size, requestedRate: input.options.frameRate)) != nil
        }
    }

    /// Sets the preset; a preset an input cannot serve is a typed error naming the input.
    public func setSessionPreset(_ preset: SessionPreset) throws(CaptureError) {
        for input in configuration.inputs where input.mediaType == .video {
            _ = try FormatSelector.resolve(preset: preset, formats: input.device.formats, inputName: input.name,
                                           requestedSize: input.options.size, requestedRate: input.options.frameRate)
        }
        try edit { $0.preset = preset }
    }

    // MARK: Inputs and outputs

    public func canAddInput(_ input: CaptureDeviceInput) -> Bool {
        (try? validateAdd(input)) != nil
    }

    public func addInput(_ input: CaptureDeviceInput) throws(CaptureError) {
        try validateAdd(input)
        try edit { $0.inputs.append(input) }
    }

    public func removeInput(_ input: CaptureDeviceInput) throws(CaptureError) {
        guard configuration.inputs.contains(where: { $0 === input }) else { throw .unknownInput(name: input.name) }
        try edit { $0.inputs.removeAll { $0 === input } }
    }

    public func canAddOutput(_ output: CaptureOutput) -> Bool {
        (try? validateAdd(output)) != nil
    }

    public func addOutput(_ output: CaptureOutput) throws(CaptureError) {
        try validateAdd(output)
        output.ownerState.value = WeakSession(self)
        do {
            try edit { $0.outputs.append(output) }
        } catch {
            output.ownerState.value = WeakSession(nil)
            throw error
        }
    }

    public func removeOutput(_ output: CaptureOutput) throws(CaptureError) {
        guard configuration.outputs.contains(where: { $0 === output }) else { throw .unknownOutput(name: output.name) }
        try edit { $0.outputs.removeAll { $0 === output } }
        if !configuration.outputs.contains(where: { $0 === output }) && state.withLock({ $0.depth == 0 }) {
            output.ownerState.value = WeakSession(nil)
        }
    }

    /// The input or output of that name.
    public func input(named name: String) -> CaptureDeviceInput? { configuration.inputs.first { $0.name == name } }
    public func output(named name: String) -> CaptureOutput? { configuration.outputs.first { $0.name == name } }

    private func validateAdd(_ input: CaptureDeviceInput) throws(CaptureError) {
        let current = configuration
        if current.inputs.contains(where: { $0 === input }) { throw .inputAlreadyInSession(name: input.name) }
        if current.inputs.contains(where: { $0.name == input.name }) || current.outputs.contains(where: { $0.name == input.name }) {
            throw .duplicateName(kind: "input", name: input.name)
        }
        try CaptureDeviceInput.checkAccess(input.device)
    }

    private func validateAdd(_ output: CaptureOutput) throws(CaptureError) {
        let current = configuration
        if current.outputs.contains(where: { $0 === output }) { throw .outputAlreadyInSession(name: output.name) }
        if let owner = output.ownerState.value.id, owner != ObjectIdentifier(self) { throw .outputInAnotherSession(name: output.name) }
        if current.outputs.contains(where: { $0.name == output.name }) || current.inputs.contains(where: { $0.name == output.name }) {
            throw .duplicateName(kind: "output", name: output.name)
        }
    }

    /// Applies an edit: inside a configuration block to the pending configuration; outside, validated
    /// at once and, on a running session, applied to the live pipeline in the background (failures
    /// are posted as `runtime-error`).
    private func edit(_ change: (inout SessionConfiguration) -> Void) throws(CaptureError) {
        enum Next { case pending, offline(SessionConfiguration), live(SessionConfiguration) }
        let next: Next = state.withLock { state in
            if state.pending != nil {
                change(&state.pending!)
                return .pending
            }
            var copy = state.committed
            change(&copy)
            return state.running ? .live(copy) : .offline(copy)
        }
        switch next {
        case .pending:
            return
        case .offline(let candidate):
            _ = try GraphCompiler.compile(candidate)
            state.withLock { $0.committed = candidate }
        case .live(let candidate):
            _ = try GraphCompiler.compile(candidate, running: state.withLock { $0.engine?.runningFormats } ?? [:])
            // Reads and later edits see the change at once; the pipeline follows in order.
            state.withLock { $0.committed = candidate }
            Task {
                do throws(CaptureError) { try await self.applyLive(candidate) } catch { self.post(.runtimeError(error)) }
            }
        }
    }

    // MARK: Configuration blocks

    /// Starts a configuration block; blocks nest. Nothing changes until the outermost commit.
    public func beginConfiguration() {
        state.withLock { state in
            if state.depth == 0 { state.pending = state.committed }
            state.depth += 1
        }
    }

    /// Ends a configuration block. At the outermost commit the whole block is validated and applied
    /// atomically (on a running session, as live edits of the pipeline), or rejected as a whole.
    public func commitConfiguration() async throws(CaptureError) {
        enum Step { case inner, apply(SessionConfiguration, SessionConfiguration) }
        let step: Step = try state.withLock { state throws(CaptureError) -> Step in
            guard state.depth > 0 else { throw .commitWithoutBegin }
            state.depth -= 1
            if state.depth > 0 { return .inner }
            let pending = state.pending ?? state.committed
            state.pending = nil
            return .apply(state.committed, pending)
        }
        guard case .apply(let previous, let candidate) = step else { return }
        do {
            if isRunning {
                _ = try GraphCompiler.compile(candidate, running: state.withLock { $0.engine?.runningFormats } ?? [:])
                state.withLock { $0.committed = candidate }
                try await applyLive(candidate)
            } else {
                _ = try GraphCompiler.compile(candidate)
                state.withLock { $0.committed = candidate }
                post(.configurationCommitted(ConfigurationReport(offline: true)))
            }
            // Outputs that left the session may join another one.
            for output in previous.outputs where !candidate.outputs.contains(where: { $0 === output }) {
                output.ownerState.value = WeakSession(nil)
            }
        } catch {
            for output in candidate.outputs where !previous.outputs.contains(where: { $0 === output }) {
                output.ownerState.value = WeakSession(nil)
            }
            throw error
        }
    }

    private func applyLive(_ candidate: SessionConfiguration, announce: Bool = true) async throws(CaptureError) {
        try await executor.run { () async throws(CaptureError) in
            guard let engine = self.state.withLock({ $0.engine }) else {
                _ = try GraphCompiler.compile(candidate)
                self.state.withLock { $0.committed = candidate }
                return
            }
            let graph = try GraphCompiler.compile(candidate, running: engine.runningFormats)
            let previous = self.state.withLock { $0.applied }
            let outputs = Dictionary(uniqueKeysWithValues: candidate.outputs.map { ($0.name, $0) })
            do throws(CaptureError) {
                let report = try await engine.apply(graph, outputs: outputs)
                self.state.withLock { $0.applied = candidate }
                if announce { self.post(.configurationCommitted(report)) }
            } catch {
                // Put the previous graph back so the session keeps running as it was.
                if let old = try? GraphCompiler.compile(previous, running: engine.runningFormats) {
                    _ = try? await engine.apply(old, outputs: Dictionary(uniqueKeysWithValues: previous.outputs.map { ($0.name, $0) }))
                }
                self.state.withLock { $0.committed = previous }
                throw error
            }
        }
    }

    /// Recompiles the committed configuration and applies the difference to the running pipeline.
    /// Outputs call this when their own state changes their branch (a recording starts or stops).
    func reapply() async throws(CaptureError) {
        try await applyLive(state.withLock { $0.committed }, announce: false)
    }

    // MARK: Compilation

    /// The session compiled to GStreamer terms, without running it.
    public func compile() throws(CaptureError) -> CompiledGraph {
        try GraphCompiler.compile(configuration, running: state.withLock { $0.engine?.runningFormats } ?? [:])
    }

    /// Every pipeline the session runs: the session graph, the graph while its movie outputs record,
    /// and each photo output's encoder pipeline (what `capture compile` prints).
    public func compilePipelines() throws(CaptureError) -> SessionPipelines {
        let configuration = self.configuration
        let running = state.withLock { $0.engine?.runningFormats } ?? [:]
        let session = try GraphCompiler.compile(configuration, running: running)
        let movies = configuration.outputs.compactMap { $0 as? CaptureMovieFileOutput }
        let recording = movies.filter { !$0.isRecording && !($0.settings.location ?? "").isEmpty }.map(\.name)
        let withoutLocation = movies.filter { !$0.isRecording && ($0.settings.location ?? "").isEmpty }.map(\.name)
        let whileRecording = recording.isEmpty ? nil : try GraphCompiler.compile(configuration, running: running, assumingRecording: true)
        var encoders: [SessionPipelines.PhotoEncoderPipeline] = []
        for case let photo as CapturePhotoOutput in configuration.outputs {
            if let launch = try photo.encoderLaunch(in: session) {
                encoders.append(.init(output: photo.name, launchDescription: launch))
            }
        }
        return SessionPipelines(session: session, whileRecording: whileRecording, recordingOutputs: recording,
                                outputsWithoutLocation: withoutLocation, photoEncoders: encoders)
    }

    // MARK: Running

    /// Builds the pipeline and starts it; returns when it plays. Typed errors: device busy, not found,
    /// permission denied, format not negotiated, start timed out ...
    public func startRunning() async throws(CaptureError) {
        if state.withLock({ $0.depth > 0 }) { throw .startInsideConfiguration }
        try await executor.run { () async throws(CaptureError) in
            if self.state.withLock({ $0.running }) { return }
            let configuration = self.state.withLock { $0.committed }
            let graph = try GraphCompiler.compile(configuration)
            let engine = try PipelineExecutor(
                name: self.name, stateTimeout: self.stateTimeout, drainTimeout: self.drainTimeout,
                post: { [weak self] kind in self?.post(kind) },
                incident: { [weak self] incident in self?.handle(incident) })
            try await engine.start(graph, outputs: Dictionary(uniqueKeysWithValues: configuration.outputs.map { ($0.name, $0) }))
            self.state.withLock { state in
                state.engine = engine
                state.applied = configuration
                state.running = true
                state.interruptedDevice = nil
            }
            self.watchDevices()
            self.post(.sessionStarted)
        }
    }

    /// Stops the session: recordings are finalized first. Returns when everything is released.
    public func stopRunning() async {
        _ = try? await executor.run { () async throws(CaptureError) in
            await self.stopNow()
        }
    }

    private func stopNow() async {
        guard let engine = state.withLock({ state -> PipelineExecutor? in
            defer { state.engine = nil; state.running = false }
            return state.running ? state.engine : nil
        }) else { return }
        state.withLock { $0.deviceWatch?.cancel(); $0.deviceWatch = nil }
        await engine.stop()
        post(.sessionStopped)
    }

    private func handle(_ incident: EngineIncident) {
        switch incident {
        case .sourceFailed(let input, let error, let disconnected):
            // After the first failure of a source, its other elements' follow-up errors say nothing new.
            guard state.withLock({ $0.running && $0.interruptedDevice == nil }) else { return }
            let device = configuration.inputs.first { $0.name == input }?.device.uniqueID ?? input
            post(.runtimeError(error))
            interrupt(device: device, reason: disconnected ? .deviceDisconnected : .deviceError)
        case .branchFailed(_, let error), .pipelineFailed(let error):
            post(.runtimeError(error))
            Task { await self.stopRunning() }
        case .endOfStream:
            let device = configuration.inputs.first?.device.uniqueID ?? "input"
            interrupt(device: device, reason: .endOfStream)
        }
    }

    /// Posts `interrupted` once, then stops the session (finalizing recordings).
    private func interrupt(device: String, reason: InterruptionReason) {
        let first = state.withLock { state -> Bool in
            guard state.running, state.interruptedDevice == nil else { return false }
            state.interruptedDevice = device
            return true
        }
        guard first else { return }
        post(.interrupted(reason, device: device))
        Task { await self.stopRunning() }
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
