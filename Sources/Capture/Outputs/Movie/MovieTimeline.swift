/// The time line of one recording: which buffers go into the file and with which timestamps.
///
/// Every decision is made on running time (the pipeline clock), the same for audio and video, so the
/// two stay in sync through pauses and at the end:
/// - the first video frame sets the origin: the file starts at 0 with it, earlier audio is dropped;
/// - a pause drops everything captured between `pause(at:)` and `resume(at:)`, and every later buffer
///   is moved earlier by the paused span, so the file has no gap;
/// - a cut (`stop(at:)`, a limit) drops everything captured from then on.
///
/// A value type without GStreamer: the pad probes of a recording hold it behind a lock.
struct MovieTimeline: Sendable {
    enum Media: Sendable { case video, audio }

    /// What to do with one buffer.
    enum Decision: Equatable, Sendable {
        /// Into the file at this time (nanoseconds from the start of the file).
        case keep(UInt64)
        case drop
        /// Dropped because the maximum duration is reached: the recording must stop.
        case limitReached
    }

    private struct Pause: Sendable {
        var start: UInt64
        var end: UInt64?
    }

    /// Running time of the first recorded video frame.
    private(set) var origin: UInt64?
    private var pauses: [Pause] = []
    /// Running time from which nothing is recorded.
    private(set) var cutoff: UInt64?
    /// File time at which the recording must end (the maximum duration).
    let maxDuration: UInt64?
    /// End of the last recorded video frame, in file time.
    private(set) var videoEnd: UInt64 = 0
    /// Frames and audio buffers kept.
    private(set) var videoFrames = 0
    private(set) var audioBuffers = 0
    /// Running time of the latest buffer kept.
    private var latest: UInt64 = 0

    init(maxDuration: UInt64? = nil) {
        self.maxDuration = maxDuration
    }

    var isPaused: Bool { pauses.last.map { $0.end == nil } ?? false }

    /// Starts a pause at this running time. Returns false when already paused.
    @discardableResult
    mutating func pause(at time: UInt64) -> Bool {
        guard !isPaused else { return false }
        pauses.append(Pause(start: time))
        return true
    }

    /// Ends the pause at this running time. Returns false when not paused.
    @discardableResult
    mutating func resume(at time: UInt64) -> Bool {
        guard isPaused else { return false }
        pauses[pauses.count - 1].end = max(time, pauses[pauses.count - 1].start)
        return true
    }

    /// Nothing captured at or after this running time is recorded (the earliest cut wins).
    mutating func stop(at time: UInt64) {
        cutoff = min(cutoff ?? time, time)
    }

    /// Nothing captured from now on is recorded: cuts just after the latest buffer recorded so far.
    mutating func stopAtLatest() {
        stop(at: latest + 1)
    }

    /// Decides for a buffer captured at `time` (running time) that lasts `duration`.
    mutating func decide(_ media: Media, at time: UInt64, duration: UInt64?) -> Decision {
        if let cutoff, time >= cutoff { return .drop }
        if pauses.contains(where: { time >= $0.start && time < ($0.end ?? UInt64.max) }) { return .drop }
        if origin == nil {
            guard media == .video else { return .drop }
            origin = time
        }
        guard let origin, time >= origin else { return .drop }
        // Pauses that started after the origin and are over by now shift this buffer earlier.
        let paused = pauses.reduce(UInt64(0)) { sum, pause in
            guard pause.start >= origin, let end = pause.end, end <= time else { return sum }
            return sum + (end - pause.start)
        }
        let fileTime = time - origin - min(paused, time - origin)
        if let maxDuration, fileTime >= maxDuration {
            if media == .video { stop(at: time); return .limitReached }
            return .drop
        }
        latest = max(latest, time)
        switch media {
        case .video:
            videoFrames += 1
            videoEnd = max(videoEnd, fileTime + (duration ?? 0))
        case .audio:
            audioBuffers += 1
        }
        return .keep(fileTime)
    }

    /// Recorded media time so far: the end of the last recorded video frame.
    var recordedDuration: UInt64 { videoEnd }
}
