#if canImport(Glibc)
    import Glibc
#endif

/// A value behind a lock: the one lock of the package, for every piece of state more than one thread
/// touches (model objects' settings, the owner's state, what GStreamer's threads read and write).
/// `package`: every module of the package uses it through this target (`Locking`, re-exported by
/// Capture, so that a module importing Capture has it).
///
/// Why a `pthread_mutex_t` and not `Synchronization.Mutex`: on Linux, `Mutex` locks and unlocks with
/// futex system calls of its own (FUTEX_LOCK_PI), which ThreadSanitizer does not intercept, so under
/// `make tsan` every value handed from one thread to another through a `Mutex` looked like a data race.
/// ThreadSanitizer intercepts `pthread_mutex_lock`/`unlock`: it sees each hand-off, and reports lock
/// order inversions as well. Uncontended, either costs one atomic operation to lock and one to unlock.
///
/// The mutex has an allocation of its own: a pthread mutex must not move once initialised, and a stored
/// property of a Swift class has no address Swift promises to keep.
package final class Locked<Value: Sendable>: @unchecked Sendable {
    // @unchecked: `stored` is read and written only between `pthread_mutex_lock(mutex)` and
    // `pthread_mutex_unlock(mutex)`; `mutex` itself is set once, in init.
    private let mutex: UnsafeMutablePointer<pthread_mutex_t>
    private var stored: Value

    package init(_ value: Value) {
        stored = value
        mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        let status = pthread_mutex_init(mutex, nil)
        precondition(status == 0, "pthread_mutex_init failed (\(status))")
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with the lock held. `body` must not take this lock again, await, or call into
    /// GStreamer where it can re-enter (docs/architecture.md, "Concurrency").
    package func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        // A default mutex fails to lock only when it was never initialised, which init rules out.
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&stored)
    }

    package var value: Value {
        get { withLock { $0 } }
        set { withLock { $0 = newValue } }
    }

    /// One field of the value, read or written under the lock: `settings[\.size]`.
    package subscript<Field: Sendable>(_ field: WritableKeyPath<Value, Field>) -> Field {
        get { withLock { $0[keyPath: field] } }
        set { withLock { $0[keyPath: field] = newValue } }
    }
}
