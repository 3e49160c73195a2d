import Dispatch
import Foundation

/// Runs the jobs of a task on the thread that calls `run()`, until `finish()`: what blocks in that task
/// (opening a file, probing a media file, listing a folder) holds that thread, never one of the Swift
/// cooperative pool's few. The HTTP server runs each request's handler on its connection's thread this
/// way; the MQTT client runs its commands on a thread of their own. Use it as a task's executor
/// preference (`Task(executorPreference:)`). A job that comes after `finish()` (none should: the task
/// has ended) goes to the global concurrent executor.
public final class ThreadTaskExecutor: TaskExecutor {
    private let jobs = Locked<(waiting: [UnownedJob], finished: Bool)>(([], false))
    private let wake = DispatchSemaphore(value: 0)
    /// The thread in `run()`, once it is there.
    private let runner = Locked<pthread_t?>(nil)

    /// An executor whose jobs wait for `run()`.
    public init() {}

    /// Queues a job of the task for `run()`'s thread; after `finish()`, hands it to the global
    /// concurrent executor instead.
    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let queued = jobs.withLock { jobs -> Bool in
            guard !jobs.finished else { return false }
            jobs.waiting.append(job)
            return true
        }
        if queued { wake.signal() } else { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }

    /// Runs the jobs as they come, on this thread, until `finish()` (called from the last of them).
    public func run() {
        runner.value = pthread_self()
        while true {  // ends with the task: its last job calls finish()
            wake.wait()
            let (batch, finished) = jobs.withLock { jobs in
                defer { jobs.waiting.removeAll() }
                return (jobs.waiting, jobs.finished)
            }
            for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
            if finished { return }
        }
    }

    /// Starts a thread named `name` (at most 15 bytes, as Linux keeps them) that runs the jobs until
    /// `finish()`. The name is set from inside: a new thread starts with its creator's.
    public func runOnNewThread(named name: String) {
        Thread {
            Thread.current.name = name
            self.run()
        }.start()
    }

    /// True when called on the thread that runs the jobs (the one in `run()`): what a test asks to
    /// know where work ran (a thread's name is no proof on Linux: a new thread starts with its
    /// creator's name, and Foundation's reads of it can lag its change).
    public var isCurrentThread: Bool {
        runner.value.map { pthread_equal($0, pthread_self()) != 0 } ?? false
    }

    /// The task has its answer: `run()` returns once the jobs queued so far have run.
    public func finish() {
        jobs.withLock { $0.finished = true }
        wake.signal()
    }
}
