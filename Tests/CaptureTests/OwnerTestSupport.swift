import Foundation

@testable import Capture

/// The engines a session makes, run without GStreamer: every call is recorded with the edits the
/// planner gives for it, a start or an apply can be told to fail, and incidents are emitted when the
/// test says so. One recorder serves every run of a session (each `startRunning` makes an engine).
final class EngineRecorder: Sendable {
    /// One call of the owner to an engine.
    enum Call: Equatable, Sendable {
        case start([Edit])
        case apply([Edit])
        case stop
    }

    /// Which call fails: the n-th start or apply (from 1, counted over every engine of the session).
    enum Step: Hashable, Sendable {
        case start(Int)
        case apply(Int)
    }

    struct Failure: Sendable {
        var error: CaptureError
        /// How many of the call's edits are carried out before it fails (an edit that fails half-way).
        var afterEdits: Int
    }

    private struct State {
        var calls: [Call] = []
        var failures: [Step: Failure] = [:]
        var starts = 0
        var applies = 0
        /// Calls running now, and the most that ever ran at once (the owner runs one at a time).
        var inFlight = 0
        var mostInFlight = 0
        var engines: [RecordedEngine] = []
        /// For each call, whether it ran on the owner's queue's own thread.
        var onQueueThread: [Bool] = []
    }
    private let state = Locked(State())

    /// What the session makes its engines with.
    var factory: EngineFactory {
        { [self] parameters throws(CaptureError) in
            let engine = RecordedEngine(recorder: self, parameters: parameters)
            state.withLock { $0.engines.append(engine) }
            return engine
        }
    }

    var calls: [Call] { state.withLock { $0.calls } }
    /// For each call, in order, whether it began on the owner's queue's own thread.
    var onQueueThread: [Bool] { state.withLock { $0.onQueueThread } }
    /// Tells whether a call runs on the owner's queue's thread (set by the test: `session.queue`).
    let queueThread = Locked<(@Sendable () -> Bool)?>(nil)
    var mostInFlight: Int { state.withLock { $0.mostInFlight } }
    /// The graph the latest engine runs.
    var current: CompiledGraph { state.withLock { $0.engines.last }?.current ?? CompiledGraph(sources: [], branches: []) }

    /// Makes the n-th start or apply fail with `error`, after carrying out `afterEdits` of its edits.
    func fail(_ step: Step, with error: CaptureError = EngineRecorder.failure, afterEdits: Int = 0) {
        state.withLock { $0.failures[step] = Failure(error: error, afterEdits: afterEdits) }
    }

    /// An error the tests make engines fail with.
    static let failure = CaptureError.pipelineBuildFailed(object: "the recorded engine", reason: "told to fail")

    /// Delivers an incident to the owner, as the latest engine's pipeline would.
    func emit(_ incident: EngineIncident) {
        state.withLock { $0.engines.last }?.parameters.incident(incident)
    }

    /// Delivers an incident as an earlier engine (the `index`-th made, from 0) would, late.
    func emit(_ incident: EngineIncident, fromEngine index: Int) {
        state.withLock { $0.engines[index] }.parameters.incident(incident)
    }

    /// Records a call that begins; returns the failure it was told to have.
    fileprivate func begin(_ kind: Step.Kind) -> Failure? {
        let onQueue = queueThread.value?() ?? false
        return state.withLock { state in
            state.onQueueThread.append(onQueue)
            state.inFlight += 1
            state.mostInFlight = max(state.mostInFlight, state.inFlight)
            switch kind {
            case .start:
                state.starts += 1
                return state.failures[.start(state.starts)]
            case .apply:
                state.applies += 1
                return state.failures[.apply(state.applies)]
            case .stop:
                return nil
            }
        }
    }

    fileprivate func end(_ call: Call) {
        state.withLock { state in
            state.inFlight -= 1
            state.calls.append(call)
        }
    }
}

extension EngineRecorder.Step {
    fileprivate enum Kind { case start, apply, stop }
}

/// One run's engine: follows the edits on a graph value, as the executor follows them on a pipeline.
final class RecordedEngine: PipelineEngine {
    let recorder: EngineRecorder
    let parameters: EngineParameters
    private let running = Locked(CompiledGraph(sources: [], branches: []))

    init(recorder: EngineRecorder, parameters: EngineParameters) {
        self.recorder = recorder
        self.parameters = parameters
    }

    var current: CompiledGraph { running.value }
    var runningFormats: [String: ResolvedFormat] {
        Dictionary(running.value.sources.compactMap { source in source.format.map { (source.input, $0) } }, uniquingKeysWith: { first, _ in first })
    }
    var elementFactoryNames: [String] {
        let graph = running.value
        return graph.sources.flatMap { $0.elements.map(\.factory) } + graph.branches.flatMap { $0.allElements.map(\.factory) }
    }

    func start(_ graph: CompiledGraph, outputs: [String: CaptureOutput]) async throws(CaptureError) {
        try await run(.start, target: graph) { .start($0) }
    }

    func apply(_ target: CompiledGraph, outputs: [String: CaptureOutput]) async throws(CaptureError) -> ConfigurationReport {
        try await run(.apply, target: target) { .apply($0) }
    }

    func stop() async {
        _ = recorder.begin(.stop)
        running.value = CompiledGraph(sources: [], branches: [])
        recorder.end(.stop)
    }

    /// Plans the edits from what runs to `target`, carries them out (all, or those before the failure
    /// it was told to have), and records the call. Yields between edits, as the executor awaits its
    /// pads: two calls that the owner let overlap would interleave here.
    @discardableResult
    private func run(
        _ kind: EngineRecorder.Step.Kind, target: CompiledGraph, call: ([Edit]) -> EngineRecorder.Call
    ) async throws(CaptureError) -> ConfigurationReport {
        let failure = recorder.begin(kind)
        let plan = EditPlanner.plan(running: running.value, target: target)
        for edit in plan.edits.prefix(failure?.afterEdits ?? plan.edits.count) {
            await Task.yield()
            running.withLock { Self.carry(edit, on: &$0) }
        }
        recorder.end(call(plan.edits))
        if let failure { throw failure.error }
        running.value = target
        return plan.report
    }

    /// What one edit does to the graph that runs.
    static func carry(_ edit: Edit, on graph: inout CompiledGraph) {
        switch edit {
        case .removeBranch(let output, _): graph.branches.removeAll { $0.output == output }
        case .removeSource(let input): graph.sources.removeAll { $0.input == input }
        case .restartSource(let segment, _), .retargetSource(let segment):
            graph.sources = graph.sources.map { $0.input == segment.input ? segment : $0 }
        case .swapSource(let old, let segment): graph.sources = graph.sources.map { $0.input == old ? segment : $0 }
        case .addSource(let segment): graph.sources.append(segment)
        case .addBranch(let segment): graph.branches.append(segment)
        case .updateBranch(let segment): graph.branches = graph.branches.map { $0.output == segment.output ? segment : $0 }
        }
    }
}

/// A clock whose time moves only when the test says: `sleep` returns once `advance` passes its
/// deadline (or throws when its task is cancelled). Nothing in a test that uses it waits for real time.
final class ManualClock: Clock, Sendable {
    struct Instant: InstantProtocol {
        var offset: Duration
        func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        func duration(to other: Instant) -> Duration { other.offset - offset }
        static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
    }

    private struct Sleeper {
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }
    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Int: Sleeper] = [:]
        var cancelled: Set<Int> = []
        var nextID = 0
    }
    private let state = Locked(State())
    private let arrivals: AsyncStream<Void>
    private let arrived: AsyncStream<Void>.Continuation

    init() { (arrivals, arrived) = AsyncStream.makeStream() }

    var now: Instant { state.withLock { $0.now } }
    var minimumResolution: Duration { .zero }
    /// How many sleeps wait now.
    var sleepers: Int { state.withLock { $0.sleepers.count } }

    func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLock { state -> Result<Void, any Error>? in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) } else { arrived.yield() }
            }
        } onCancel: {
            let sleeper = state.withLock { state in
                guard let sleeper = state.sleepers.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return Sleeper?.none
                }
                return sleeper
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }

    /// Moves time on: every sleep whose deadline is passed returns.
    func advance(by duration: Duration) {
        let due = state.withLock { state in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            let due = state.sleepers.filter { $0.value.deadline <= now }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in due { continuation.resume() }
    }

    /// Advances the clock by `step` each time something sleeps on it, until the task is cancelled: time
    /// passes as fast as the code under test waits for it. (One driver per clock: it reads the arrivals.)
    func drive(by step: Duration) -> Task<Void, Never> {
        Task { [arrivals] in
            // A sleep that began before the driver started is let go too.
            if sleepers > 0 { advance(by: step) }
            for await _ in arrivals {
                advance(by: step)
            }
        }
    }

    /// Returns true once something sleeps on the clock (the code under test waits for time to pass);
    /// false when nothing did within `watchdog` of real time (a bound for a broken owner, so that the
    /// test fails instead of hanging; a working one sleeps at once).
    func untilSomethingSleeps(watchdog: Duration = .seconds(10)) async -> Bool {
        if sleepers > 0 { return true }
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask { [arrivals] in
                for await _ in arrivals where self.sleepers > 0 { return true }
                return false
            }
            group.addTask {
                // The hang bound only: the wait above ends at the event; nothing is counted after this.
                try? await Task.sleep(for: watchdog)
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}

/// Devices a test owns: hot-plug events it posts, no device monitor, no V4L2 node.
struct TestDevices {
    let events = Broadcaster<DeviceEvent>()

    var source: DeviceSource {
        DeviceSource(events: { [events] in events.stream() }, startMonitor: {}, devices: { [] }, isPresent: { _ in false })
    }
}
