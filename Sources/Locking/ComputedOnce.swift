import Dispatch

/// A value computed once per process, on the first caller's thread and with no lock held: a slow
/// computation (the H.264 encoder trials, up to 5 s each) must not run under a lock, and callers that
/// come while it runs wait for its result instead of each running it again.
///
/// `keep` decides whether a result is remembered; one that is not (made before GStreamer could start)
/// is handed to its caller and to those waiting, and the next caller computes again.
package final class ComputedOnce<Value: Sendable>: Sendable {
    private enum State: Sendable {
        case idle
        /// Being computed; the group is left when the result is known.
        case computing(DispatchGroup, result: Locked<Value?>)
        case made(Value)
    }

    /// What a caller does once it has looked at the state.
    private enum Step { case known(Value), wait(DispatchGroup, Locked<Value?>), make(DispatchGroup, Locked<Value?>) }

    private let state = Locked<State>(.idle)

    /// Nothing computed yet.
    package init() {}

    /// The value: the remembered one, else the result of the computation running now (waited for),
    /// else `make()` run on this thread, outside the lock.
    package func value(_ make: () -> Value, keep: (Value) -> Bool = { _ in true }) -> Value {
        let step: Step = state.withLock { state in
            switch state {
            case .made(let value): return .known(value)
            case .computing(let group, let result): return .wait(group, result)
            case .idle:
                let group = DispatchGroup()
                let result = Locked<Value?>(nil)
                group.enter()
                state = .computing(group, result: result)
                return .make(group, result)
            }
        }
        switch step {
        case .known(let value):
            return value
        case .wait(let group, let result):
            group.wait()
            if let made = result.value { return made }
            return value(make, keep: keep)
        case .make(let group, let result):
            let made = make()
            result.value = made
            state.withLock { $0 = keep(made) ? .made(made) : .idle }
            group.leave()
            return made
        }
    }
}
