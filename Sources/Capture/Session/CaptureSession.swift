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
    /// The owner's state, behind its one lock (never held across an await).
    let state = Locked(OwnerState())
    /// Held by whatever changes the configuration, from reading it to making the result `committed`:
    /// a block's begin, its outermost commit, and a change outside a block (checks, compilation and
    /// commit). Without it a block begun on one task while another task's commit compiles starts from
    /// the configuration before that commit, and its own commit would undo it. Taken before `state`.
    /// (It holds an Int no one reads: a `Locked(())`, nothing stored, makes a debug build under
    /// ThreadSanitizer report a "Swift access race" between two correctly locked uses; a 20-line
    /// program with two threads and the same lock class shows it too, and not with an Int.)
    let configurationLock = Locked(0)
    /// The one owner of the running graph: lifecycle, commits and recording commands run here, one at
    /// a time, in the order they were asked for.
    let queue = CommandQueue(name: "capture.session")
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
    /// Makes the engine of each run (a GStreamer pipeline; a recorder in the owner's tests).
    let makeEngine: EngineFactory
    /// The owner's clock (its timeouts, the wait for a reconnecting device).
    let clock: any Clock<Duration>
    /// Incidents, the device watch and reconnection.
    let supervisor: SessionSupervisor

    /// A session with no inputs and no outputs, not running.
    /// - Parameters:
    ///   - name: The pipeline's name in GStreamer's debug output.
    ///   - stateTimeout: How long `startRunning()` waits for the pipeline to play.
    ///   - drainTimeout: How long stopping waits for an output to finish its file while nothing
    ///     moves through it.
    ///   - drainLimit: How long finishing one output's file may take in all (at least `drainTimeout`).
    public convenience init(
        name: String = "capture-session", stateTimeout: Duration = .seconds(10), drainTimeout: Duration = .seconds(5),
        drainLimit: Duration = .seconds(120)
    ) {
        self.init(
            name: name, stateTimeout: stateTimeout, drainTimeout: drainTimeout, drainLimit: drainLimit, engine: PipelineExecutor.factory,
            clock: ContinuousClock(), devices: .system)
    }

    /// A session whose engine, clock and devices are given: what the owner's tests run it on.
    init(
        name: String = "capture-session", stateTimeout: Duration = .seconds(10), drainTimeout: Duration = .seconds(5),
        drainLimit: Duration = .seconds(120), engine: @escaping EngineFactory, clock: any Clock<Duration>, devices: DeviceSource
    ) {
        self.name = name
        self.stateTimeout = stateTimeout
        self.drainTimeout = drainTimeout
        self.drainLimit = max(drainLimit, drainTimeout)
        makeEngine = engine
        self.clock = clock
        supervisor = SessionSupervisor(devices: devices, clock: clock)
    }

    deinit {
        state.withLock { $0.lifecycle.reconnection?.cancel() }
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
    public var isRunning: Bool { state.withLock { $0.lifecycle.isRunning } }

    /// The factory names of every element of the running pipeline (none when stopped): what tests and
    /// diagnostics count (one H.264 encoder for a stream and a recording of the same picture).
    var runningElementFactories: [String] { state.withLock { $0.engine }?.elementFactoryNames ?? [] }
    /// True between an `interrupted` event and the matching `interruption-ended`.
    public var isInterrupted: Bool { state.withLock { $0.lifecycle.interruptedDevice != nil } }
    /// True inside a `beginConfiguration()`/`commitConfiguration()` block.
    public var isConfiguring: Bool { state.withLock { $0.depth > 0 } }

    var configuration: SessionConfiguration {
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

    static func validateAdd(_ input: CaptureDeviceInput, to current: SessionConfiguration) throws(CaptureError) {
        if current.inputs.contains(where: { $0 === input }) { throw .inputAlreadyInSession(name: input.name) }
        if current.inputs.contains(where: { $0.name == input.name }) || current.outputs.contains(where: { $0.name == input.name }) {
            throw .duplicateName(kind: "input", name: input.name)
        }
        try CaptureDeviceInput.checkAccess(input.device)
    }

    func validateAdd(_ output: CaptureOutput, to current: SessionConfiguration) throws(CaptureError) {
        if current.outputs.contains(where: { $0 === output }) { throw .outputAlreadyInSession(name: output.name) }
        if let owner = output.ownerState.value.id, owner != ObjectIdentifier(self) { throw .outputInAnotherSession(name: output.name) }
        if current.outputs.contains(where: { $0.name == output.name }) || current.inputs.contains(where: { $0.name == output.name }) {
            throw .duplicateName(kind: "output", name: output.name)
        }
    }

    // MARK: Compilation

    /// The session compiled to GStreamer terms, without running it.
    public func compile() throws(CaptureError) -> CompiledGraph {
        let configuration = self.configuration
        let environment = CompileEnvironment.current(for: configuration.outputs)
        let (formats, recordings) = state.withLock { ($0.engine?.runningFormats ?? [:], $0.recordings) }
        return try GraphCompiler.compile(configuration, environment: environment, recordings: recordings, running: formats).graph
    }

    /// Every pipeline the session runs: the session graph, the graph while its movie outputs record,
    /// and each photo output's encoder pipeline (what `capture compile` prints).
    public func compilePipelines() throws(CaptureError) -> SessionPipelines {
        let configuration = self.configuration
        let environment = CompileEnvironment.current(for: configuration.outputs)
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
    /// permission denied, format not negotiated, start timed out ... A wait for a reconnecting device
    /// ends: the session runs again.
    public func startRunning() async throws(CaptureError) {
        try await start(endingReconnection: true)
    }

    /// Starts through the command queue. `endingReconnection`: a wait for a reconnecting device is
    /// cancelled once the session runs (false when that wait is what starts it).
    func start(endingReconnection: Bool) async throws(CaptureError) {
        if state.withLock({ $0.depth > 0 }) { throw .startInsideConfiguration }
        try await queue.run { () async throws(CaptureError) in
            if self.state.withLock({ $0.lifecycle.isRunning }) { return }
            let (configuration, serial) = self.state.withLock { ($0.committed, $0.commitSerial) }
            let compilation = try GraphCompiler.compile(configuration, environment: .current(for: configuration.outputs))
            let engineID = self.state.withLock { state in
                state.engineID += 1
                return state.engineID
            }
            let engine = try self.makeEngine(
                EngineParameters(
                    name: self.name, stateTimeout: self.stateTimeout, drainTimeout: self.drainTimeout, drainLimit: self.drainLimit,
                    clock: self.clock, post: { [weak self] kind in self?.post(kind) },
                    incident: { [weak self] incident in
                        guard let self else { return }
                        self.supervisor.handle(incident, from: engineID, in: self)
                    }))
            try Self.prepare(configuration.outputs, for: compilation.graph)
            try await engine.start(compilation.graph, outputs: Self.byName(configuration.outputs))
            // Under the configuration lock: a change committed before this saw a stopped session and
            // is applied below; one after it sees a running session and queues its own live edit.
            let (latest, latestSerial, waiting) = self.configurationLock.withLock { _ in
                self.state.withLock { state in
                    let waiting = state.lifecycle.reconnection
                    state.lifecycle = .running(engine)
                    return (state.committed, state.commitSerial, waiting)
                }
            }
            if endingReconnection { waiting?.cancel() }
            self.record(.configuration(configuration, compilation))
            self.supervisor.watchDevices(for: self)
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
        let waiting = state.withLock { state in
            defer { state.lifecycle = state.lifecycle.waiting(nil) }
            return state.lifecycle.reconnection
        }
        waiting?.cancel()
        await stop()
    }

    /// True while the session, stopped because a reconnecting input's device went away, waits for it.
    public var isAwaitingReconnection: Bool {
        state.withLock { $0.lifecycle.reconnection != nil && !$0.lifecycle.isRunning }
    }

    /// Stops through the command queue, leaving a wait for a reconnecting device as it is.
    func stop() async {
        _ = try? await queue.run { () async throws(CaptureError) in
            await self.stopNow()
        }
    }

    private func stopNow() async {
        let engine = state.withLock { state in
            defer { state.lifecycle = state.lifecycle.stopped }
            return state.engine
        }
        guard let engine else { return }
        supervisor.stopWatching()
        // Files are finished first (each recording branch drained), then everything is released.
        await engine.stop()
        // A camera node that vanished under the session: what GStreamer still holds of it is let go.
        if let lost = state.withLock({ $0.lifecycle.interruptedDevice }), lost.hasPrefix("/dev/video") {
            DeviceControl.releaseVanished(devicePath: lost)
        }
        record(.stopped)
        post(.sessionStopped)
    }
}
