import Capture

/// Every event a run has seen, in order, with waiters for "N matching events have been seen".
/// Counts are cumulative since the run started: a waiter registered after some matching events
/// counts those too.
final class EventLog: Sendable {
    enum WaitOutcome: Sendable, Equatable {
        case reached
        case timedOut(seen: Int)
        case cancelled
    }

    private struct Waiter {
        let matcher: EventMatcher
        let target: Int
        var seen: Int
        let continuation: CheckedContinuation<WaitOutcome, Never>
    }

    private enum Slot {
        /// Allocated, not yet waiting (a timeout or cancellation arriving now is kept for later).
        case unregistered
        case early(WaitOutcome)
        case waiting(Waiter)
    }

    private struct State {
        var events: [(name: String, fields: [(String, EventValue)])] = []
        var slots: [Int: Slot] = [:]
        var nextID = 0
    }

    private let state = Locked(State())

    func append(name: String, fields: [(String, EventValue)]) {
        let ready: [(CheckedContinuation<WaitOutcome, Never>)] = state.withLock { state in
            state.events.append((name, fields))
            var ready: [CheckedContinuation<WaitOutcome, Never>] = []
            for (id, slot) in state.slots {
                guard case .waiting(var waiter) = slot, waiter.matcher.matches(name: name, fields: fields) else { continue }
                waiter.seen += 1
                if waiter.seen >= waiter.target {
                    state.slots[id] = nil
                    ready.append(waiter.continuation)
                } else {
                    state.slots[id] = .waiting(waiter)
                }
            }
            return ready
        }
        for continuation in ready { continuation.resume(returning: .reached) }
    }

    /// How many events so far match.
    func count(_ matcher: EventMatcher) -> Int {
        state.withLock { state in state.events.reduce(0) { $0 + (matcher.matches(name: $1.name, fields: $1.fields) ? 1 : 0) } }
    }

    /// Waits until `target` matching events have been seen since the run started; nil timeout waits
    /// until cancelled.
    func wait(for matcher: EventMatcher, count target: Int, timeout: Duration?) async -> WaitOutcome {
        let id = state.withLock { state -> Int in
            state.nextID += 1
            state.slots[state.nextID] = .unregistered
            return state.nextID
        }
        let timer = timeout.map { timeout in
            Task { [weak self] in
                try? await Task.sleep(for: timeout)
                guard !Task.isCancelled, let self else { return }
                self.resolve(id, .timedOut(seen: self.count(matcher)))
            }
        }
        defer { timer?.cancel() }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<WaitOutcome, Never>) in
                let immediate: WaitOutcome? = state.withLock { state in
                    switch state.slots[id] {
                    case .early(let outcome):
                        state.slots[id] = nil
                        return outcome
                    case .unregistered:
                        let seen = state.events.reduce(0) { $0 + (matcher.matches(name: $1.name, fields: $1.fields) ? 1 : 0) }
                        if seen >= target {
                            state.slots[id] = nil
                            return .reached
                        }
                        state.slots[id] = .waiting(Waiter(matcher: matcher, target: target, seen: seen, continuation: continuation))
                        return nil
                    case .waiting, nil:
                        return .cancelled
                    }
                }
                if let immediate { continuation.resume(returning: immediate) }
            }
        } onCancel: {
            self.resolve(id, .cancelled)
        }
    }

    /// Ends a wait early (timeout or cancellation); a wait that is not registered yet gets it when it registers.
    private func resolve(_ id: Int, _ outcome: WaitOutcome) {
        let continuation: CheckedContinuation<WaitOutcome, Never>? = state.withLock { state in
            switch state.slots[id] {
            case .unregistered:
                state.slots[id] = .early(outcome)
                return nil
            case .waiting(let waiter):
                state.slots[id] = nil
                return waiter.continuation
            case .early, nil:
                return nil
            }
        }
        continuation?.resume(returning: outcome)
    }
}
