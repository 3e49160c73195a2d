import Foundation

/// Where a session learns about devices: hot-plug events, the devices there now, whether a V4L2
/// node answers. Production asks the device registry and the kernel; tests give their own.
struct DeviceSource: Sendable {
    /// A new subscription to hot-plug events.
    var events: @Sendable () -> AsyncStream<DeviceEvent>
    /// Starts whatever produces the events (the device monitor), when it does not run yet.
    var startMonitor: @Sendable () -> Void
    /// The real devices of the machine now.
    var devices: @Sendable () -> [CaptureDevice]
    /// True when the V4L2 node at that path answers.
    var isPresent: @Sendable (String) -> Bool

    /// The machine's devices, through the process-wide device registry.
    static let system = DeviceSource(
        events: { DeviceRegistry.shared.events.stream() }, startMonitor: { DeviceRegistry.shared.startIfNeeded() },
        devices: { DeviceRegistry.shared.realDevices }, isPresent: { DeviceControl.isPresent(devicePath: $0) })
}

/// What happens to a running session that its user did not ask for: the engine's incidents, the
/// devices that go and come back (the device watch), and the wait for a reconnecting input's device.
/// The owner holds one; it changes the session only through the owner's lifecycle and commands.
final class SessionSupervisor: Sendable {
    let devices: DeviceSource
    /// The owner's clock: the wait for a device looks again after `pollInterval` on it.
    let clock: any Clock<Duration>
    /// How often a wait for a reconnecting device looks whether it is back.
    let pollInterval = Duration.milliseconds(500)
    private let deviceWatch = Locked<Task<Void, Never>?>(nil)

    init(devices: DeviceSource, clock: any Clock<Duration>) {
        self.devices = devices
        self.clock = clock
    }

    deinit { deviceWatch.value?.cancel() }

    // MARK: Incidents

    /// An incident of the engine `engineID`; one from an engine that is gone (delivered late, after
    /// a stop and a new start) says nothing about the one that runs now.
    func handle(_ incident: EngineIncident, from engineID: Int, in session: CaptureSession) {
        guard session.state.withLock({ $0.engineID == engineID }) else { return }
        switch incident {
        case .sourceFailed(let input, let error, let disconnected):
            // After the first failure of a source, its other elements' follow-up errors say nothing new.
            guard
                session.state.withLock({ state in
                    if case .running = state.lifecycle { return true }
                    return false
                })
            else { return }
            let device = session.configuration.inputs.first { $0.name == input }?.device.uniqueID ?? input
            session.post(.runtimeError(error))
            interrupt(device: device, reason: disconnected ? .deviceDisconnected : .deviceError, in: session)
        case .branchFailed(let output, let error):
            session.configuration.outputs.first { $0.name == output }?.branchFailed(error)
            session.post(.runtimeError(error))
            Task { await session.stopRunning() }
        case .pipelineFailed(let error):
            session.post(.runtimeError(error))
            Task { await session.stopRunning() }
        case .endOfStream:
            let device = session.configuration.inputs.first?.device.uniqueID ?? "input"
            interrupt(device: device, reason: .endOfStream, in: session)
        }
    }

    /// Posts `interrupted` once, then stops the session (finalizing recordings). When the device went
    /// away and its input reconnects, the session then waits for the device to come back.
    func interrupt(device: String, reason: InterruptionReason, in session: CaptureSession) {
        let first = session.state.withLock { state -> Bool in
            guard case .running(let engine) = state.lifecycle else { return false }
            state.lifecycle = .interrupted(device: device, engine: engine, reconnection: nil)
            return true
        }
        guard first else { return }
        session.post(.interrupted(reason, device: device))
        let configuration = session.configuration
        let reconnects =
            reason == .deviceDisconnected
            && configuration.inputs.contains { $0.device.uniqueID == device && $0.options.reconnects }
        guard reconnects else {
            Task { await session.stopRunning() }
            return
        }
        // Note what was recording, then stop and wait for the device.
        let lost = configuration.inputs.first { $0.device.uniqueID == device }
        let recordings = configuration.outputs.compactMap { $0 as? CaptureMovieFileOutput }.compactMap { movie in
            movie.outputFileURL.map { (movie, $0.path) }
        }
        // Listen now: the device may come back before the session has stopped.
        let events = devices.events()
        let task = Task {
            await session.stop()
            if let lost { await self.awaitReconnection(of: lost, events: events, recordings: recordings, in: session) }
        }
        session.state.withLock { $0.lifecycle = $0.lifecycle.waiting(task) }
    }

    // MARK: Reconnection

    /// Waits for the input's device to come back (at its id, or, for a camera whose node comes back
    /// under another number, at the same `stableID`), then starts the session again with the input on
    /// the device as it came back, posts `resumed`, and records on in a new numbered file where a
    /// recording was interrupted. Looks every `pollInterval` of the owner's clock; ends when the user
    /// stops the session.
    private func awaitReconnection(
        of input: CaptureDeviceInput, events: AsyncStream<DeviceEvent>,
        recordings: [(CaptureMovieFileOutput, String)], in session: CaptureSession
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
            session.state.withLock { $0.lifecycle = $0.lifecycle.waiting(nil) }
        }
        var reported = false
        while !Task.isCancelled {
            if let back = Self.returned(lost, announced: announced.value, devices: devices) {
                do throws(CaptureError) {
                    if back.uniqueID != lost.uniqueID, let current = session.input(named: input.name) {
                        let moved = try CaptureDeviceInput(device: back, name: input.name, options: input.options)
                        try session.removeInput(current)
                        try session.addInput(moved)
                    }
                    try await session.start(endingReconnection: false)
                    session.post(.resumed(device: back.uniqueID))
                    for (movie, previous) in recordings {
                        do throws(CaptureError) {
                            _ = try await movie.startRecording(to: FileNaming.nextFree(previous))
                        } catch {
                            session.post(.runtimeError(error))
                        }
                    }
                    return
                } catch {
                    // Back in the list but not ready yet (still settling, busy): say it once, look again.
                    if !reported { session.post(.runtimeError(error)) }
                    reported = true
                }
            }
            try? await clock.sleep(for: pollInterval)
        }
    }

    /// The device as it is back, if it is. A V4L2 camera is back when its node answers again (at its
    /// path, or at another node with the same `stableID`); any other device when the device monitor
    /// has announced it again since it went.
    static func returned(_ lost: CaptureDevice, announced: CaptureDevice?, devices source: DeviceSource) -> CaptureDevice? {
        guard lost.uniqueID.hasPrefix("/dev/video") else { return announced }
        let devices = source.devices()
        if source.isPresent(lost.uniqueID), let same = devices.first(where: { $0.uniqueID == lost.uniqueID }) { return same }
        guard lost.stableID != lost.uniqueID else { return nil }
        return devices.first {
            $0.stableID == lost.stableID && $0.mediaType == lost.mediaType && $0.uniqueID.hasPrefix("/dev/video") && source.isPresent($0.uniqueID)
        }
    }

    /// The same device, or the same device under another node.
    static func matches(_ device: CaptureDevice, _ lost: CaptureDevice) -> Bool {
        device.uniqueID == lost.uniqueID || (lost.stableID != lost.uniqueID && device.stableID == lost.stableID)
    }

    // MARK: Device watch

    /// Follows hot-plug while the session runs: a device of the session that disappears interrupts it;
    /// the device that interrupted it coming back ends the interruption (unless a reconnection waits for
    /// it: the session's `resumed` ends that one).
    func watchDevices(for session: CaptureSession) {
        let events = devices.events()
        // A session on virtual devices has not needed the device monitor yet: start it without holding
        // up the start (hot-plug events are the session's to report whatever its inputs are).
        let startMonitor = devices.startMonitor
        // It blocks while GStreamer loads the device providers' plugins: a thread of its own.
        Thread.detachNewThread { startMonitor() }
        let task = Task { [weak self, weak session] in
            for await event in events {
                // A watch ended (the session stopped) before this task first ran still has the events
                // posted since its stream was made, and an ended stream hands out what it holds: none
                // of them is the session's to report any more. (The owner table test saw a reconnecting
                // session report the device's return as `device-connected` from its previous run.)
                guard !Task.isCancelled, let self, let session else { return }
                switch event {
                case .connected(let device):
                    session.post(.deviceConnected(device))
                    let ended = session.state.withLock { state -> Bool in
                        guard case .interrupted(let lost, let engine, .none) = state.lifecycle, lost == device.uniqueID else { return false }
                        state.lifecycle = engine.map { .running($0) } ?? .idle
                        return true
                    }
                    if ended { session.post(.interruptionEnded) }
                case .disconnected(let device):
                    session.post(.deviceDisconnected(device))
                    if session.configuration.inputs.contains(where: { $0.device.uniqueID == device.uniqueID }) {
                        self.interrupt(device: device.uniqueID, reason: .deviceDisconnected, in: session)
                    }
                }
            }
        }
        deviceWatch.withLock { watch in
            watch?.cancel()
            watch = task
        }
    }

    /// Ends the device watch (the session stops).
    func stopWatching() {
        deviceWatch.withLock { watch in
            watch?.cancel()
            watch = nil
        }
    }
}
