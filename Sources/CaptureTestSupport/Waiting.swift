import Capture

/// Waits until `condition` holds, reading it every `every`; the wait ends at the first read that sees the
/// state, however loaded the machine, and returns false only when `timeout` passed first. The timeout
/// bounds a hang; it is never a speed claim, so make it generous. This is how a test waits for a state
/// that posts no event it can await (a count reached, a file grown, another process's output); nothing
/// is ever counted after a fixed sleep.
public func waitUntil(
    timeout: Duration = .seconds(30), every: Duration = .milliseconds(10), _ condition: () throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else { return try condition() }
        try? await Task.sleep(for: every)  // paces the reads only; nothing is counted after it
    }
    return true
}

extension CaptureMovieFileOutput {
    /// Waits until the recording holds at least `duration` of media (`recordedDuration`, pauses excluded):
    /// a test that needs "a recording of 800 ms" waits for the media, not for 800 ms of the wall clock,
    /// which a loaded machine fills with fewer frames. False when no recording runs any more or
    /// `timeout` (a bound for a hang) passed first.
    public func waitUntilRecorded(_ duration: Duration, timeout: Duration = .seconds(30)) async -> Bool {
        await waitUntil(timeout: timeout) { !isRecording || recordedDuration >= duration } && recordedDuration >= duration
    }
}

extension CaptureVideoDataOutput {
    /// Waits until `count` more frames came out of this output's branch. A test that must show that
    /// nothing happens (a finished file stays closed, a paused recording stays still) lets frames
    /// flow through the session instead of letting time pass: the frames prove the pipeline moved on,
    /// however loaded the machine. False when `timeout` (a bound for a hang) passed first.
    public func waitForFrames(_ count: Int, timeout: Duration = .seconds(30)) async -> Bool {
        let stream = frames()
        return await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                var seen = 0
                for await _ in stream {
                    seen += 1
                    if seen >= count { return true }
                }
                return false
            }
            group.addTask {
                try? await Task.sleep(for: timeout)  // the hang bound only
                return false
            }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
    }
}
