import Foundation
import Testing

@testable import Capture

/// The owner's command queue (and a photo output's encoding queue) runs its operations on a thread of
/// its own: what they block on (GStreamer's state changes open the camera, a photo is synced to disk)
/// never holds one of the cooperative pool's threads, whoever asked (an HTTP request, an MQTT command).
@Suite struct CommandQueueTests {
    @Test func operationsRunInOrderOnTheQueuesThread() async throws {
        let queue = CommandQueue(name: "test-queue")
        let order = Locked<[Int]>([])
        let elsewhere = Locked(0)
        for index in 0..<50 {
            queue.submit {
                if !queue.isCurrentThread { elsewhere.withLock { $0 += 1 } }
                await Task.yield()  // a suspension in an operation: it resumes on the queue's thread
                if !queue.isCurrentThread { elsewhere.withLock { $0 += 1 } }
                order.withLock { $0.append(index) }
            }
        }
        let last = try await queue.run { () async throws(CaptureError) in queue.isCurrentThread }
        #expect(order.value == Array(0..<50))
        #expect(elsewhere.value == 0 && last, "\(elsewhere.value) of 100 steps ran off the queue's thread")
    }

    /// More queues blocked at once than the pool has threads: work on the pool still runs. (On the
    /// pool, as before, the blocked operations held every thread until the watchdog let them go.)
    @Test func blockedOperationsHoldNoThreadOfThePool() async {
        let width = ProcessInfo.processInfo.activeProcessorCount + 1
        let queues = (0..<width).map { CommandQueue(name: "test-blocked-\($0)") }
        let release = DispatchSemaphore(value: 0)
        let entered = DispatchSemaphore(value: 0)
        for queue in queues {
            queue.submit {
                entered.signal()
                release.wait()
            }
        }
        // A watchdog off the pool lets the operations go after 20 s, so a regression fails instead of
        // hanging: it waits for the test's answer as an event (a semaphore), bounded by those 20 s.
        let answered = DispatchSemaphore(value: 0), fired = Locked(false)
        let watchdog = Thread {
            let everyoneIn = (0..<width).allSatisfy { _ in entered.wait(timeout: .now() + 20) == .success }
            if !everyoneIn || answered.wait(timeout: .now() + 20) == .timedOut { fired.value = true }
            for _ in 0..<width { release.signal() }
        }
        watchdog.start()
        let value = await Task.detached { 42 }.value
        answered.signal()
        #expect(value == 42)
        #expect(!fired.value, "the pool was held until the watchdog let the operations go")
    }

    /// The owner's calls to its engine (where an executor sets the pipeline's state and edits it) run on
    /// the session's queue's thread, whoever called: here a start, a commit and a stop from the test's
    /// task.
    @Test func theOwnersEngineCallsRunOnTheSessionsThread() async throws {
        let owner = try OwnerTableTests.Owner()
        let queue = owner.session.queue
        owner.engines.queueThread.value = { queue.isCurrentThread }
        try await owner.session.startRunning()
        owner.session.beginConfiguration()
        try owner.session.addOutput(CapturePhotoOutput(name: "photo"))
        try await owner.session.commitConfiguration()
        await owner.session.stopRunning()
        #expect(owner.calls.count == 3)
        #expect(owner.engines.onQueueThread == [true, true, true])
    }
}
