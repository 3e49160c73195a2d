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
    /// Video frames captured during a pause that reached the gate and were left out. Frames reach the
    /// gate in capture order, so once one captured after the pause did, every frame captured before it
    /// was decided: what a test waits for instead of a duration. (An encoded branch that waits for a
    /// key frame after the pause leaves out the frames before it itself, and counts them here too.)
    var videoFramesDroppedWhilePaused = 0
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
    /// The frame-rate element after the gate, as it sees the kept frames (nil: the branch has none).
    private var resampler: SteadyRate?

    init(maxDuration: UInt64? = nil) {
        self.maxDuration = maxDuration
    }

    /// True when a frame-rate element follows the gate (`resample(to:)`).
    var resamples: Bool { resampler != nil }

    /// The branch makes the kept frames a steady `rate` (videorate) before the encoder.
    mutating func resample(to rate: FrameRate) {
        if resampler?.rate != rate { resampler = SteadyRate(rate: rate) }
    }

    /// When the video would end short of `recordedDuration`, the file time at which a copy of the last
    /// kept frame must follow it (just after it) for the file to last what was recorded; nil when the
    /// file ends right without one.
    ///
    /// videorate shows each frame from half-way after the one before it, and at the end of the stream it
    /// sends the frame it holds once, one output frame long. After a gap in the camera's frames (the
    /// driver dropped some, or an emulated machine stalled) the last frame so comes out at half the gap,
    /// and the file ends there: 2.72 s instead of 3.07 s recorded, when the last frame came 0.72 s
    /// after the one before. A copy 1 ns after it makes videorate show the last frame up to its own
    /// time, and end one output frame later. Chosen only when that ends nearer what was recorded, and
    /// never past the maximum duration.
    var closingFrameTime: UInt64? { closing?.time }

    /// The copy that closes the file (`closingFrameTime`) and where the video then ends.
    private var closing: (time: UInt64, end: UInt64)? {
        guard !videoEnded, let resampler, let last = resampler.held else { return nil }
        let without = resampler.endOfStream
        var closed = resampler
        closed.frame(at: last + 1)
        let with = closed.endOfStream
        let distance = { (end: UInt64) in end > videoEnd ? end - videoEnd : videoEnd - end }
        guard distance(with) < distance(without), with <= (maxDuration ?? UInt64.max) else { return nil }
        return (last + 1, with)
    }

    /// The video's end of stream reached the gate (`endVideo(closedAt:)`).
    private(set) var videoEnded = false

    /// The video's end of stream reached the gate, after the closing copy at `time` or without one (nil:
    /// none was due, or the frame to copy was already let go). From then on `recordedDuration` is where
    /// the file's video ends.
    mutating func endVideo(closedAt time: UInt64?) {
        guard !videoEnded else { return }
        videoEnded = true
        if let time { resampler?.frame(at: time) }
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
        if pauses.contains(where: { time >= $0.start && time < ($0.end ?? UInt64.max) }) {
            if media == .video { videoFramesDroppedWhilePaused += 1 }
            return .drop
        }
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
        // Behind a frame-rate element a frame fills the slot it lands in: one whose slot would end past
        // the maximum would make the file longer than that (at 25 fps with a 3 s limit, a frame at
        // 2.995 s after one at 2.96 s fills the 3.00 s slot, to 3.04 s). The first frame is always kept.
        if media == .video, let maxDuration, videoFrames > 0, var probe = resampler {
            probe.frame(at: fileTime)
            if probe.endOfStream > maxDuration { stop(at: time); return .limitReached }
        }
        latest = max(latest, time)
        switch media {
        case .video:
            videoFrames += 1
            // A frame whose duration the source left unset shows for one frame of the rate the branch
            // makes.
            videoEnd = max(videoEnd, fileTime + (duration ?? resampler?.slotLength ?? 0))
            resampler?.frame(at: fileTime)
        case .audio:
            audioBuffers += 1
        }
        return .keep(fileTime)
    }

    /// Recorded media time so far: where the file's video ends if the recording ends now. Behind a
    /// frame-rate element that is the end of its last output frame (with the closing copy when one is
    /// sent), which is the file's length to the nanosecond: the camera's last frame can end up to half
    /// a frame earlier or later than that (its own timestamp and duration are not on the grid). Without
    /// one, the end of the last recorded video frame.
    var recordedDuration: UInt64 {
        guard let resampler, resampler.held != nil else { return videoEnd }
        return videoEnded ? resampler.endOfStream : closing?.end ?? resampler.endOfStream
    }
}

/// What videorate (GStreamer 1.22, `skip-to-first`, forward playback) makes of a stream of frames: the
/// output grid starts at the first frame's time and has a slot every 1/rate seconds; a slot shows the
/// frame held while it is at least as near as the newer one; a frame older than the one held is
/// dropped; at the end of the stream the held frame is sent once. Pure arithmetic, to tell where the
/// file's video will end.
struct SteadyRate: Sendable, Equatable {
    let rate: FrameRate
    /// Time of the grid's first slot (the first frame's).
    private var base: UInt64 = 0
    /// Index of the next output slot.
    private var slot: UInt64 = 0
    /// Time of the frame videorate holds (the newest it took).
    private(set) var held: UInt64?

    init(rate: FrameRate) {
        self.rate = rate
    }

    /// The length of one output frame (the first slot's; later ones differ by the rounding alone).
    var slotLength: UInt64 { time(ofSlot: 1) - time(ofSlot: 0) }

    /// Start of slot `index`, as videorate computes it (rounded down to the nanosecond).
    private func time(ofSlot index: UInt64) -> UInt64 {
        let (numerator, denominator) = (UInt64(max(rate.numerator, 1)), UInt64(max(rate.denominator, 1)))
        let (high, low) = index.multipliedFullWidth(by: denominator * 1_000_000_000)
        return base + numerator.dividingFullWidth((high, low)).quotient
    }

    /// A frame at `moment` arrives.
    mutating func frame(at moment: UInt64) {
        guard let previous = held else {
            base = moment
            slot = 0
            held = moment
            return
        }
        guard moment >= previous else { return }
        var nearer: Bool
        repeat {
            let next = time(ofSlot: slot)
            let fromHeld = next > previous ? next - previous : previous - next
            let fromNew = next > moment ? next - moment : moment - next
            if fromHeld <= fromNew { slot += 1 }
            nearer = fromHeld < fromNew
        } while nearer
        held = moment
    }

    /// Where the video ends when the stream ends now: the held frame is sent once, one slot long.
    var endOfStream: UInt64 {
        held == nil ? 0 : time(ofSlot: slot + 1)
    }
}
