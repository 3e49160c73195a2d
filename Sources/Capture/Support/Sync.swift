import Foundation
import Synchronization

/// A value that arrives once, from any thread, and can be awaited with a timeout.
/// The first `fulfill` wins; later ones are ignored.
final class Promise<Value: Sendable>: Sendable {
    private enum State {
        case pending([CheckedContinuation<Result<Value, CaptureError>, Never>])
        case done(Result<Value, CaptureError>)
    }
    private let state = Locked<State>(.pending([]))

    var isFulfilled: Bool { state.withLock { if case .done = $0 { true } else { false } } }

    func fulfill(_ result: Result<Value, CaptureError>) {
        let waiting: [CheckedContinuation<Result<Value, CaptureError>, Never>] = state.withLock { state in
            guard case .pending(let continuations) = state else { return [] }
            state = .done(result)
            return continuations
        }
        for continuation in waiting { continuation.resume(returning: result) }
    }

    func succeed(_ value: Value) { fulfill(.success(value)) }
    func fail(_ error: CaptureError) { fulfill(.failure(error)) }

    /// Waits for the value; after `timeout` the promise fails with `timeoutError`.
    func value(timeout: Duration, timeoutError: CaptureError) async throws(CaptureError) -> Value {
        let timer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            if !Task.isCancelled { self?.fail(timeoutError) }
        }
        defer { timer.cancel() }
        return try await value()
    }

    /// Waits for the value as long as the work that gives it moves on: `progress` (a count that grows
    /// while it does) is read every `stallTimeout`, and the promise fails with `timeoutError` when it
    /// did not change over one, or once `limit` has passed in all.
    func value(
        stallTimeout: Duration, limit: Duration, progress: @escaping @Sendable () -> Int, timeoutError: CaptureError
    ) async throws(CaptureError) -> Value {
        let timer = Task { [weak self] in
            let clock = ContinuousClock()
            let deadline = clock.now.advanced(by: limit)
            var seen = progress()
            while !Task.isCancelled {
                try? await Task.sleep(for: min(stallTimeout, clock.now.duration(to: deadline)))
                if Task.isCancelled { return }
                let now = progress()
                if now == seen || clock.now >= deadline {
                    self?.fail(timeoutError)
                    return
                }
                seen = now
            }
        }
        defer { timer.cancel() }
        return try await value()
    }

    private func value() async throws(CaptureError) -> Value {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Value, CaptureError>, Never>) in
            let ready: Result<Value, CaptureError>? = state.withLock { state in
                switch state {
                case .done(let result): return result
                case .pending(var continuations):
                    continuations.append(continuation)
                    state = .pending(continuations)
                    return nil
                }
            }
            if let ready { continuation.resume(returning: ready) }
        }
        return try result.get()
    }
}

/// Fan-out of values to any number of AsyncStream subscribers; nothing is dropped.
final class Broadcaster<Value: Sendable>: Sendable {
    private let subscribers = Locked<[Int: AsyncStream<Value>.Continuation]>([:])
    private let nextID = Atomic<Int>(0)

    func stream(bufferingPolicy: AsyncStream<Value>.Continuation.BufferingPolicy = .unbounded) -> AsyncStream<Value> {
        let id = nextID.add(1, ordering: .relaxed).newValue
        return AsyncStream(bufferingPolicy: bufferingPolicy) { continuation in
            subscribers.withLock { $0[id] = continuation }
            continuation.onTermination = { [weak self] _ in
                _ = self?.subscribers.withLock { $0.removeValue(forKey: id) }
            }
        }
    }

    var hasSubscribers: Bool { subscribers.withLock { !$0.isEmpty } }

    /// Yields to every subscriber; returns true when any subscriber's buffer dropped a value.
    @discardableResult
    func post(_ value: Value) -> Bool {
        let current = subscribers.withLock { Array($0.values) }
        var dropped = false
        for continuation in current {
            if case .dropped = continuation.yield(value) { dropped = true }
        }
        return dropped
    }

    func finish() {
        let current = subscribers.withLock { subscribers in
            defer { subscribers.removeAll() }
            return Array(subscribers.values)
        }
        for continuation in current { continuation.finish() }
    }
}

/// Runs async operations one at a time, in submission order: the queue of commands of a session's
/// owner (start, stop, commits, recording commands), and a photo output's encoding and writing. It has
/// no timeout of its own: every operation bounds its own waits, each with a typed error that names
/// what it waited for.
///
/// The operations run on a thread of the queue's own (named `name`), not on the cooperative pool:
/// they block in GStreamer (a state change opens the camera, negotiates and allocates its buffers) and
/// on the disk (a photo is written and synced before it gets its name), and the callers that start
/// them include remote ones (an HTTP request, an MQTT command) that must not be able to hold the
/// pool's few threads. The thread ends with the queue.
final class CommandQueue: Sendable {
    private let tail = Locked<Task<Void, Never>?>(nil)
    private let executor = ThreadTaskExecutor()

    /// A queue whose operations run on a thread named `name` (at most 15 bytes, as Linux keeps them).
    init(name: String) {
        executor.runOnNewThread(named: name)
    }

    deinit {
        executor.finish()
    }

    /// True when called on the queue's own thread.
    var isCurrentThread: Bool { executor.isCurrentThread }

    /// Enqueues an operation now, in the caller's order, without waiting for it.
    func submit(_ operation: @escaping @Sendable () async -> Void) {
        tail.withLock { tail in
            let previous = tail
            tail = Task(executorPreference: executor) {
                await previous?.value
                await operation()
            }
        }
    }

    /// Enqueues an operation and waits for its result.
    func run<T: Sendable>(_ operation: @escaping @Sendable () async throws(CaptureError) -> T) async throws(CaptureError) -> T {
        try await enqueue(operation).value.get()
    }

    /// Enqueues an operation now, in the caller's order, and returns the task that gives its result
    /// (for a caller that must enqueue under a lock and wait after releasing it).
    func enqueue<T: Sendable>(_ operation: @escaping @Sendable () async throws(CaptureError) -> T) -> Task<Result<T, CaptureError>, Never> {
        tail.withLock { tail -> Task<Result<T, CaptureError>, Never> in
            let previous = tail
            let task = Task(executorPreference: executor) { () async -> Result<T, CaptureError> in
                await previous?.value
                do throws(CaptureError) { return .success(try await operation()) } catch { return .failure(error) }
            }
            tail = Task(executorPreference: executor) { _ = await task.value }
            return task
        }
    }
}
