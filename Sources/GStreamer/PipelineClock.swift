import CGStreamer

/// A GStreamer clock: what a pipeline's live sources wait on for each frame and its sinks for each
/// buffer's time. A pipeline runs on GStreamer's system clock (`Pipeline/useSystemClock()`) unless it is
/// given another one with `Pipeline/use(_:)`, such as a `TestClock`, which moves only when told.
public class PipelineClock: GObjectRef, @unchecked Sendable {
    // @unchecked: GstClock is thread-safe (its time and its waits are guarded by GStreamer's own locks).

    /// The clock as a `GstClock`.
    public var clock: UnsafeMutablePointer<GstClock> { UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstClock.self) }

    /// The clock's time now, in nanoseconds. The corresponding C function is `gst_clock_get_time`.
    public var time: UInt64 { UInt64(gst_clock_get_time(clock)) }
}

/// A clock that moves only when a test tells it to (GStreamer's `GstTestClock`, of gst/check): every
/// wait on it blocks until the test releases it (`advance(to:)`, `crank()`). A live source on a
/// pipeline that uses it makes the frames of exactly the time the test gives, however loaded the
/// machine: "700 ms of a 30 fps camera" is 22 frames (0 to 700 ms), made in the time the machine takes
/// to make them, not in 700 ms of the wall clock.
///
/// Its waits block the calling thread: call them from a thread of the test's own (or a synchronous
/// test), never from a task of the Swift cooperative pool that the pipeline's work may need.
public final class TestClock: PipelineClock, @unchecked Sendable {
    // @unchecked: as PipelineClock.

    /// Makes a test clock that stands at `startTime` (nanoseconds) until it is moved.
    /// The corresponding C function is `gst_test_clock_new_with_start_time`.
    /// - Parameter startTime: The clock's time until it is moved, in nanoseconds.
    /// - Throws: `GStreamerError.initializationFailed` when GStreamer cannot be initialised.
    public static func make(startTime: UInt64 = 0) throws(GStreamerError) -> TestClock {
        try GStreamer.initialize()
        // gst_test_clock_new_with_start_time never returns NULL: it aborts when it cannot allocate.
        let made = gst_test_clock_new_with_start_time(GstClockTime(startTime))!
        return TestClock(floating: UnsafeMutableRawPointer(made).assumingMemoryBound(to: GstObject.self))
    }

    private var testClock: UnsafeMutablePointer<GstTestClock> { UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstTestClock.self) }

    /// Runs the pipeline up to `time` (nanoseconds): each wait on the clock (a live source's next
    /// frame, a syncing sink's buffer) whose time is at most `time` is released in the order of their
    /// times, the clock standing at each in turn, until what waits next waits for later; the clock then
    /// stands at `time`. A wait is released only once something waits: a live source makes exactly the
    /// frames of the span, and when this returns the frames before its next wait have been pushed.
    /// Blocks the calling thread. The corresponding C functions are
    /// `gst_test_clock_timed_wait_for_multiple_pending_ids`, `gst_test_clock_set_time` and
    /// `gst_test_clock_process_next_clock_id`.
    /// - Parameters:
    ///   - time: The clock time to run up to, in nanoseconds.
    ///   - timeout: How long to wait for something to wait on the clock (a bound for a hang).
    /// - Returns: The number of waits released.
    @discardableResult public func advance(to time: UInt64, timeout: Duration = .seconds(10)) -> Int {
        var released = 0
        while let next = waitForWait(timeout: timeout), next <= time {
            if next > self.time { gst_test_clock_set_time(testClock, GstClockTime(next)) }
            if let id = gst_test_clock_process_next_clock_id(testClock) {
                gst_clock_id_unref(id)
                released += 1
            }
        }
        if time > self.time { gst_test_clock_set_time(testClock, GstClockTime(time)) }
        return released
    }

    /// Runs the pipeline for `delta` more: `advance(to:)` the clock's time plus `delta`.
    /// - Parameters:
    ///   - delta: How much longer to run.
    ///   - timeout: How long to wait for something to wait on the clock (a bound for a hang).
    /// - Returns: The number of waits released.
    @discardableResult public func advance(by delta: Duration, timeout: Duration = .seconds(10)) -> Int {
        advance(to: time + UInt64(max(0, Self.nanoseconds(delta))), timeout: timeout)
    }

    /// Waits until something waits on the clock (a live source for its next frame, a sink for a
    /// buffer's time) and returns the earliest time waited for, in nanoseconds, or nil when nothing
    /// waited within `timeout` (a bound for a hang, not a measure). Blocks the calling thread.
    /// The corresponding C functions are `gst_test_clock_timed_wait_for_multiple_pending_ids` and
    /// `gst_test_clock_get_next_entry_time`.
    /// - Parameter timeout: How long to wait (a bound for a hang).
    /// - Returns: The earliest time waited for, in nanoseconds; nil when nothing waited.
    public func waitForWait(timeout: Duration = .seconds(10)) -> UInt64? {
        let milliseconds = UInt32(clamping: Self.nanoseconds(timeout) / 1_000_000)
        guard gst_test_clock_timed_wait_for_multiple_pending_ids(testClock, 1, milliseconds, nil) != 0 else { return nil }
        let next = gst_test_clock_get_next_entry_time(testClock)
        return next == GstClockTime.max ? nil : UInt64(next)
    }

    /// Waits until something waits on the clock, then moves the clock to the time it waits for and
    /// releases it: one frame of a live source, one buffer of a syncing sink. Blocks the calling thread.
    /// The corresponding C function is `gst_test_clock_crank`.
    /// - Returns: false when the clock had to go backwards to release it (the wait was late).
    @discardableResult public func crank() -> Bool {
        gst_test_clock_crank(testClock) != 0
    }

    private static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

extension Pipeline {
    /// Makes the pipeline run on `clock` (a `TestClock` in a test) whatever clock its elements provide.
    /// The corresponding C function is `gst_pipeline_use_clock`.
    /// - Parameter clock: The clock the pipeline runs on from its next start.
    public func use(_ clock: PipelineClock) {
        gst_pipeline_use_clock(UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstPipeline.self), clock.clock)
    }
}
