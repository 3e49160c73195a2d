import Foundation
import GStreamer

/// What a movie output does on GStreamer's streaming threads while it records: the gate at the head
/// of each chain (file time, pauses, the end of the time line) and the count of what reaches the file.
extension CaptureMovieFileOutput {

    /// The gate at the head of each chain (on `gatePad`): turns timestamps into file time (origin,
    /// pauses), drops what the time line leaves out, and replaces the stream's segment with one
    /// starting at 0. `encoded`: a gate on encoded frames (a shared encoder's), where a key frame is
    /// asked for: the file starts at one, and goes on at one after a pause.
    func gate(_ info: PadProbeInfo, media: MovieTimeline.Media, recording: MovieRecording, at gatePad: Pad, encoded: Bool) -> PadProbeReturn {
        let pad = encoded ? gatePad : nil
        if info.isEOS {
            // The video lasts what was recorded: after a gap in the camera's frames, a copy of the last
            // one goes ahead of the end of the stream (MovieTimeline.closingFrameTime). The end of the
            // stream is on this pad already, so the copy is handed to the next element directly, on
            // this pad's streaming thread.
            let closing = recording.state.withLock { state -> Buffer? in
                defer { state.lastVideoFrame = nil }
                guard media == .video else { return nil }
                let time = state.timeline.closingFrameTime
                let copy = time.flatMap { state.lastVideoFrame?.retimed(pts: $0) }
                // What the recording reports is where the file's video ends, with the copy or without.
                state.timeline.endVideo(closedAt: copy == nil ? nil : time)
                return copy
            }
            if let closing { gatePad.peer?.chain(closing) }
            return .ok
        }
        // A source that replaces another (a camera switch) starts a new stream with a new segment: its
        // times keep being read through that segment, but the encoder goes on with the one continuous,
        // zero-based stream it started with (a second segment would reset the frame-rate element's
        // count and restart the file's times).
        if info.isStreamStart {
            return recording.state.withLock { $0.segments[media] != nil } ? .drop : .ok
        }
        if let segment = info.segment {
            let repeated = recording.state.withLock { state -> Bool in
                defer { state.segments[media] = segment }
                return state.segments[media] != nil
            }
            if repeated { return .drop }
            info.replaceSegment(with: .zeroBasedTime)
            return .ok
        }
        guard let buffer = info.buffer else { return .ok }
        guard let pts = buffer.pts else { return .drop }
        if let pad {
            enum Wait { case none, drop, ask }
            let wait = recording.state.withLock { state -> Wait in
                guard state.awaitingKeyFrame else { return .none }
                if !buffer.isDeltaUnit {
                    state.awaitingKeyFrame = false
                    return .none
                }
                // While paused or stopping nothing is asked: the encoder is the stream's too, and every
                // key frame costs it. The first frame after a pause asks once.
                if state.timeline.isPaused {
                    // Captured during the pause (one was left out at the gate before this wait began).
                    state.timeline.videoFramesDroppedWhilePaused += 1
                    return .drop
                }
                if state.keyFrameRequested || state.timeline.cutoff != nil { return .drop }
                state.keyFrameRequested = true
                return .ask
            }
            switch wait {
            case .none:
                break
            case .drop:
                return .drop
            case .ask:
                // Upstream from the queue's sink pad, through the tee, to the encoder.
                if let sink = pad.parentElement?.staticPad("sink") { sink.pushKeyFrameRequest() }
                return .drop
            }
        }
        let hadDTS = buffer.dts != nil
        let duration = buffer.duration
        enum Outcome { case keep(UInt64, first: UInt64?), drop, limit }
        let outcome = recording.state.withLock { state -> Outcome in
            let running: UInt64?
            if let segment = state.segments[media] { running = segment.runningTime(of: pts) } else { running = pts }
            guard let running else { return .drop }
            let first = state.timeline.videoFrames == 0
            switch state.timeline.decide(media, at: running, duration: duration) {
            case .keep(let time):
                if media == .video && first { state.firstTimestamp = running }
                return .keep(time, first: media == .video && first ? running : nil)
            case .drop:
                if pad != nil && !state.awaitingKeyFrame {
                    // Paused (or not started): what comes next starts at a key frame.
                    state.awaitingKeyFrame = true
                    state.keyFrameRequested = false
                }
                return .drop
            case .limitReached:
                guard !state.limitHit else { return .drop }
                state.limitHit = true
                return .limit
            }
        }
        switch outcome {
        case .keep(let time, let first):
            info.setBufferTimestamps(pts: time, dts: hadDTS ? time : nil)
            if media == .video, !encoded, let kept = info.buffer {
                recording.state.withLock { state in
                    if state.timeline.resamples { state.lastVideoFrame = Buffer(kept) }
                }
            }
            if let first {
                let seconds = Double(first) / 1e9
                emit(.recordingStarted(output: name, location: recording.location, firstTimestamp: seconds))
                delegateQueue.async { recording.delegate?.fileOutput(self, didStartRecordingTo: recording.url, firstTimestamp: seconds) }
            }
            return .ok
        case .drop:
            return .drop
        case .limit:
            let limit = recording.settings.maxRecordedDuration ?? .zero
            stopInBackground(recording, error: .maximumDurationReached(output: name, seconds: limit.seconds))
            return .drop
        }
    }

    /// Counts encoded bytes; stops the recording before the file would outgrow `maxRecordedFileSize`.
    func count(_ info: PadProbeInfo, recording: MovieRecording) {
        guard let buffer = info.buffer else { return }
        let size = Int64(buffer.size)
        let limit = recording.settings.maxRecordedFileSize
        let hit = recording.state.withLock { state -> Bool in
            state.mediaBytes += size
            guard let limit, !state.limitHit else { return false }
            // Stop one frame early: the encoders still hold a frame or two, and the muxer adds its index.
            let frame = state.timeline.videoFrames > 0 ? state.mediaBytes / Int64(state.timeline.videoFrames) : 0
            guard MovieRecording.estimatedFileSize(mediaBytes: state.mediaBytes + 2 * frame) >= limit else { return false }
            state.limitHit = true
            state.timeline.stopAtLatest()
            return true
        }
        if hit, let limit { stopInBackground(recording, error: .maximumFileSizeReached(output: name, bytes: limit)) }
    }

    func stopInBackground(_ recording: MovieRecording, error: CaptureError) {
        Task { _ = await self.stop(recording, error: error, requested: false) }
    }
}
