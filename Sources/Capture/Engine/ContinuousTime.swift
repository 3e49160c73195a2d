import GStreamer

/// Turns what a tee carries across camera switches into one stream on the pipeline's running time,
/// for a shared encoder's head.
///
/// A source that replaces another (a camera switch) starts a new stream: a new stream-start and a new
/// segment, with timestamps that start again. An encoder that saw them would restart its own
/// timestamps, and a recording reading its encoded frames would see time go back. Here the first
/// segment is replaced by a zero-based one, later ones are dropped, and every frame is stamped with
/// its running time (through the segment it came in), so the encoder sees one stream whose time
/// never goes back.
final class ContinuousTime: Sendable {
    private let segment = Locked<Segment?>(nil)

    /// The pad probe (downstream buffers and events).
    func probe(_ info: PadProbeInfo) -> PadProbeReturn {
        if info.isStreamStart { return segment.withLock { $0 != nil } ? .drop : .ok }
        if let next = info.segment {
            let repeated = segment.withLock { current -> Bool in
                defer { current = next }
                return current != nil
            }
            if repeated { return .drop }
            info.replaceSegment(with: .zeroBasedTime)
            return .ok
        }
        guard let buffer = info.buffer, let pts = buffer.pts else { return .ok }
        guard let running = segment.withLock({ $0 })?.runningTime(of: pts) else { return .drop }
        info.setBufferTimestamps(pts: running, dts: nil)
        return .ok
    }
}
