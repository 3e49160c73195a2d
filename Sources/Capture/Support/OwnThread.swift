import Foundation

/// Runs `work`, which blocks (waits for a thread or a process, sleeps), on a thread of its own and
/// returns its result: the awaiting task holds none of the Swift cooperative pool's few threads while
/// the work waits (docs/architecture.md, "Locks and waits").
public func onOwnThread<T: Sendable>(_ work: @escaping @Sendable () -> T) async -> T {
    await withCheckedContinuation { continuation in
        Thread { continuation.resume(returning: work()) }.start()
    }
}

/// Starts `work` as a task whose jobs run on a thread of its own, which ends with it; the thread is
/// named `name` (at most 15 bytes, as Linux keeps them). Whatever the work blocks on (a file written
/// and synced, a device opened by a state change, a media file probed) holds that thread, never one
/// of the cooperative pool's. What the work awaits elsewhere (an actor, a continuation) runs where it
/// always does; the work resumes on its thread.
@discardableResult
public func startOnOwnThread<T: Sendable>(named name: String, _ work: @escaping @Sendable () async -> T) -> Task<T, Never> {
    let executor = ThreadTaskExecutor()
    executor.runOnNewThread(named: name)
    return Task(executorPreference: executor) {
        let result = await work()
        executor.finish()
        return result
    }
}
