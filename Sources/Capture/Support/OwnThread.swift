import Foundation

/// Runs `work`, which blocks (waits for a thread or a process, sleeps), on a thread of its own and
/// returns its result: the awaiting task holds none of the Swift cooperative pool's few threads while
/// the work waits (docs/architecture.md, "Locks and waits").
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}
