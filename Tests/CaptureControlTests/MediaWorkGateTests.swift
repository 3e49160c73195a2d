import Capture
import CaptureControl
import Foundation
import Testing

/// The bound on the media work remote callers get: one job runs, a few wait their turn in order, the
/// rest are refused at once as `busy`; every slot is given back, also by a job that failed.
@Suite struct MediaWorkGateTests {
    /// A job that runs until the test lets it end, and says when it started.
    final class HeldJob: Sendable {
        let started: AsyncStream<Int>
        private let startedContinuation: AsyncStream<Int>.Continuation
        private let release = Locked<[Int: CheckedContinuation<Void, Never>]>([:])

        init() { (started, startedContinuation) = AsyncStream.makeStream() }

        func run(_ number: Int) async {
            await withCheckedContinuation { continuation in
                release.withLock { $0[number] = continuation }
                startedContinuation.yield(number)
            }
        }

        func finish(_ number: Int) { release.withLock { $0.removeValue(forKey: number) }?.resume() }
    }

    @Test(.timeLimit(.minutes(1))) func oneRunsTwoWaitTheRestAreRefusedAndTurnsComeInOrder() async throws {
        let gate = MediaWorkGate(running: 1, waiting: 2)
        let job = HeldJob()
        var started = job.started.makeAsyncIterator()
        let first = Task { try await gate.run("the test's work") { () async throws(CaptureError) in await job.run(1) } }
        #expect(await started.next() == 1)
        let second = Task { try await gate.run("the test's work") { () async throws(CaptureError) in await job.run(2) } }
        let third = Task { try await gate.run("the test's work") { () async throws(CaptureError) in await job.run(3) } }
        // The two waiting: a fourth is refused at once, and runs nothing.
        await gate.queueReaches(2)
        #expect(gate.queued == 2)
        do throws(CaptureError) {
            try await gate.run("the test's work") { () async throws(CaptureError) in Issue.record("a refused job ran") }
            Issue.record("a fourth job was let in")
        } catch {
            #expect(error.name == "busy" && error.description.contains("the test's work is busy"), "\(error)")
        }
        job.finish(1)
        try await first.value
        #expect(await started.next() == 2)
        job.finish(2)
        try await second.value
        #expect(await started.next() == 3)
        job.finish(3)
        try await third.value
        // All slots back: a job runs at once.
        try await gate.run("the test's work") { () async throws(CaptureError) in }
    }

    @Test func aFailedJobGivesItsSlotBack() async throws {
        let gate = MediaWorkGate(running: 1, waiting: 0)
        await #expect(throws: CaptureError.self) {
            try await gate.run("the test's work") { () async throws(CaptureError) in throw .notRunning(object: "test") }
        }
        try await gate.run("the test's work") { () async throws(CaptureError) in }
    }
}
