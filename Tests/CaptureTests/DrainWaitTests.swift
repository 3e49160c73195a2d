import Foundation
import Testing

@testable import Capture

/// The wait of a draining branch (`Promise.value(stallTimeout:limit:progress:timeoutError:)`): it goes
/// on while the work moves on, and gives up when the work stalls or the limit passes. Progress is
/// counted in reads of the progress closure, not in elapsed time, so a busy machine changes nothing.
@Suite struct DrainWaitTests {
    private let timeout = CaptureError.timedOut(waitingFor: "a test drain", seconds: 0.02)

    @Test func waitsPastManyStallTimeoutsWhileTheWorkMovesOn() async throws {
        let promise = Promise<Int>()
        let reads = Locked(0)
        // Each read sees one more frame moved; the value arrives at the sixth read, after five stall
        // timeouts in all: a plain time-out of one would have given up at the first.
        let value = try await promise.value(
            stallTimeout: .milliseconds(20), limit: .seconds(60),
            progress: {
                let count = reads.withLock { reads -> Int in
                    reads += 1
                    return reads
                }
                if count == 6 { promise.succeed(42) }
                return count
            },
            timeoutError: timeout)
        #expect(value == 42)
        #expect(reads.value == 6)
    }

    @Test func givesUpOnceNothingMovedOverOneStallTimeout() async {
        let promise = Promise<Int>()
        let reads = Locked(0)
        await #expect(throws: CaptureError.self) {
            try await promise.value(
                stallTimeout: .milliseconds(20), limit: .seconds(60),
                progress: {
                    reads.withLock { $0 += 1 }
                    return 7
                },
                timeoutError: timeout)
        }
        // One read when the wait began, one after the first stall timeout: no change, no third read.
        #expect(reads.value == 2)
        #expect(promise.isFulfilled)
    }

    @Test func givesUpAtTheLimitEvenWhileTheWorkMovesOn() async {
        let promise = Promise<Int>()
        let reads = Locked(0)
        await #expect(throws: CaptureError.self) {
            try await promise.value(
                stallTimeout: .milliseconds(10), limit: .milliseconds(50),
                progress: {
                    reads.withLock { reads -> Int in
                        reads += 1
                        return reads
                    }
                },
                timeoutError: timeout)
        }
        #expect(promise.isFulfilled)
        #expect(reads.value >= 2)
    }

    @Test func aValueThatArrivedFirstIsReturnedAtOnce() async throws {
        let promise = Promise<String>()
        promise.succeed("done")
        let value = try await promise.value(stallTimeout: .seconds(60), limit: .seconds(60), progress: { 0 }, timeoutError: timeout)
        #expect(value == "done")
    }
}
