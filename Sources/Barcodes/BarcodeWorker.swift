import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A thread of its own that runs jobs one after another, for decoding barcodes.
///
/// Not a Dispatch queue: decoding a frame keeps a CPU busy for tens of milliseconds, and on a machine
/// with two cores the global Dispatch pool (which also runs Swift concurrency's tasks on Linux) has
/// two threads. The thread runs at a lower priority (nice +5), so that the pipeline's streaming
/// threads (preview, recording) win when the CPU is short.
package final class BarcodeWorker: @unchecked Sendable {
    // @unchecked: `jobs` and `stopped` are read and written only with `condition` locked.
    private let condition = NSCondition()
    private var jobs: [@Sendable () -> Void] = []
    private var stopped = false

    /// Starts the thread; it runs until `stop()`.
    package init(name: String) {
        let thread = Thread { [self] in run() }
        thread.name = name
        thread.start()
    }

    /// Runs `job` after the jobs before it.
    package func async(_ job: @escaping @Sendable () -> Void) {
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    /// Lets the thread finish the jobs it has, then end.
    package func stop() {
        condition.lock()
        stopped = true
        condition.signal()
        condition.unlock()
    }

    private func run() {
        Self.lowerPriority()
        while true {
            condition.lock()
            while jobs.isEmpty && !stopped { condition.wait() }
            if jobs.isEmpty {
                condition.unlock()
                return
            }
            let job = jobs.removeFirst()
            condition.unlock()
            job()
        }
    }

    /// Nice +5 for the calling thread (on Linux the nice value is per thread; `who` 0 is the caller).
    /// Threads it starts inherit it. The corresponding C function is `setpriority`.
    package static func lowerPriority() {
        #if canImport(Glibc)
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 5)
        #endif
    }

    /// Runs `second` on this worker's thread while `first` runs on the calling one, and returns both
    /// results (the two decoders of one frame, at once). The calling thread must not be this worker's.
    package func both<A, B: Sendable>(_ first: () -> A, _ second: @escaping @Sendable () -> B) -> (A, B) {
        let slot = Slot<B>()
        let done = DispatchSemaphore(value: 0)
        async {
            slot.put(second())
            done.signal()
        }
        let a = first()
        done.wait()
        guard let b = slot.take() else { preconditionFailure("the worker signalled without a result") }
        return (a, b)
    }
}

/// One value handed from the worker's thread to the thread that waits for it. No lock: the semaphore
/// of `both` orders the two sides (a `Synchronization.Mutex` here would add nothing, and on Linux
/// ThreadSanitizer cannot see one; it does see the semaphore).
private final class Slot<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `put` runs on the worker before it signals `done`, `take` on the caller after it
    // waited for `done`; each runs once, never both at a time.
    private var value: Value?
    func put(_ newValue: Value) { value = newValue }
    func take() -> Value? { value.take() }
}
