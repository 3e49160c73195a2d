import Capture

/// How much media work remote callers may have the session do at once: decoding a video's frame,
/// scaling a photo for a grid, cropping, trimming, making a thumbnail. Each is one short request that
/// costs tens to hundreds of milliseconds of CPU and a thread of its own, so without a bound a few
/// hundred small requests (64 connections of `capture serve` at a time) took both cores and 400
/// threads from the camera. At most `running` jobs run; up to `waiting` more wait their turn (a task
/// suspended, no thread held); beyond that a request is refused at once with `busy` (HTTP 503).
/// A local caller (the app itself, a `.pipeline` scenario) is never held here.
public final class MediaWorkGate: Sendable {
    private struct State {
        var running = 0
        var waiting: [CheckedContinuation<Bool, Never>] = []
        /// Who waits for the queue to reach a length (`queueReaches`), and that length.
        var watchers: [(count: Int, continuation: CheckedContinuation<Void, Never>)] = []

        /// The watchers whose length the queue has reached, taken out.
        mutating func reachedWatchers() -> [CheckedContinuation<Void, Never>] {
            let reached = watchers.filter { $0.count <= waiting.count }.map(\.continuation)
            watchers.removeAll { $0.count <= waiting.count }
            return reached
        }
    }
    private let state = Locked(State())
    /// Jobs that run at once.
    public let running: Int
    /// Jobs that may wait for their turn.
    public let waiting: Int

    /// Jobs waiting for their turn now.
    public var queued: Int { state.withLock { $0.waiting.count } }

    /// Returns once `count` jobs wait their turn (at once when they already do): what a test of the
    /// gate waits for, instead of polling `queued`.
    package func queueReaches(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.waiting.count >= count { return true }
                state.watchers.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    /// A gate letting `running` jobs run at once and `waiting` more wait.
    public init(running: Int = 1, waiting: Int = 16) {
        precondition(running > 0 && waiting >= 0, "a gate runs at least one job")
        self.running = running
        self.waiting = waiting
    }

    /// Runs `work` when its turn comes; throws `busy`, doing nothing, when the queue is full.
    @discardableResult
    public func run<T>(_ what: String, _ work: () async throws(CaptureError) -> T) async throws(CaptureError) -> T {
        try await enter(what)
        defer { leave() }
        return try await work()
    }

    private func enter(_ what: String) async throws(CaptureError) {
        // Decided under the lock with the continuation in hand: run now, wait in the queue (`leave`
        // hands its slot over), or refused.
        let admitted = await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let (decided, reached) = state.withLock { state -> (Bool?, [CheckedContinuation<Void, Never>]) in
                if state.running < running {
                    state.running += 1
                    return (true, [])
                }
                guard state.waiting.count < waiting else { return (false, []) }
                state.waiting.append(continuation)
                return (nil, state.reachedWatchers())
            }
            for watcher in reached { watcher.resume() }
            if let decided { continuation.resume(returning: decided) }
        }
        guard admitted else {
            throw .busy(what: what, reason: "\(running) media job runs for remote callers and \(waiting) wait already; ask again in a moment")
        }
    }

    private func leave() {
        let next = state.withLock { state -> CheckedContinuation<Bool, Never>? in
            if state.waiting.isEmpty {
                state.running -= 1
                return nil
            }
            return state.waiting.removeFirst()
        }
        next?.resume(returning: true)  // the slot goes to the first waiting job
    }
}
