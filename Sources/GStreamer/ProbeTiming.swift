import CGStreamer

/// A copy of a `GstSegment`: how a stream's buffer timestamps map to running time.
///
/// `@unchecked Sendable`: the wrapped C struct is a plain value (numbers and four reserved pointers that
/// GStreamer keeps NULL); a copy shares nothing with the pad it came from.
public struct Segment: @unchecked Sendable {
    var segment: GstSegment

    init(_ segment: GstSegment) { self.segment = segment }

    /// A TIME segment from 0 to the end of time, base 0, rate 1: running time equals the timestamp.
    /// The corresponding C function is `gst_segment_init`.
    public static var zeroBasedTime: Segment {
        var segment = GstSegment()
        gst_segment_init(&segment, GST_FORMAT_TIME)
        return Segment(segment)
    }

    /// True for a segment in TIME format (the only kind raw audio and video carry here).
    public var isTime: Bool { segment.format == GST_FORMAT_TIME }

    /// For a BYTES segment (what a muxer sends a file sink to seek in the file): the byte position the
    /// next buffer is written at; nil for other formats.
    public var byteStart: UInt64? {
        segment.format == GST_FORMAT_BYTES ? UInt64(segment.start) : nil
    }

    /// The same segment for timestamps `nanoseconds` later: its start, stop and position move by that
    /// much, so a timestamp moved as much keeps its stream and running time.
    public func delayed(by nanoseconds: UInt64) -> Segment {
        var copy = segment
        copy.start += guint64(nanoseconds)
        if copy.stop != guint64.max { copy.stop += guint64(nanoseconds) }
        if copy.position != guint64.max { copy.position += guint64(nanoseconds) }
        return Segment(copy)
    }

    /// The running time of a timestamp in this segment, or nil when it lies outside it.
    /// The corresponding C function is `gst_segment_to_running_time`.
    public func runningTime(of timestamp: UInt64) -> UInt64? {
        var copy = segment
        let value = UInt64(gst_segment_to_running_time(&copy, GST_FORMAT_TIME, GstClockTime(timestamp)))
        return value == UInt64.max ? nil : value
    }
}

extension PadProbeInfo {
    /// The segment a SEGMENT event carries, when the probe fires for one.
    /// The corresponding C function is `gst_event_parse_segment`.
    public var segment: Segment? {
        guard eventType == GST_EVENT_SEGMENT, let data = info.pointee.data else { return nil }
        var parsed: UnsafePointer<GstSegment>?
        gst_event_parse_segment(data.assumingMemoryBound(to: GstEvent.self), &parsed)
        return parsed.map { Segment($0.pointee) }
    }

    /// Replaces the SEGMENT event passing the probe with one carrying `segment` (same sequence number).
    /// Does nothing for other data. The corresponding C function is `gst_event_new_segment`.
    public func replaceSegment(with segment: Segment) {
        guard eventType == GST_EVENT_SEGMENT, let old = info.pointee.data else { return }
        var copy = segment.segment
        guard let event = gst_event_new_segment(&copy) else { return }
        let oldEvent = old.assumingMemoryBound(to: GstEvent.self)
        gst_event_set_seqnum(event, gst_event_get_seqnum(oldEvent))
        info.pointee.data = UnsafeMutableRawPointer(event)
        gst_mini_object_unref(old.assumingMemoryBound(to: GstMiniObject.self))
    }

    /// Gives the buffer passing the probe new timestamps (nil: unset). A buffer shared with other
    /// branches of a tee is copied first (its memory stays shared), so no one else sees the change.
    /// The corresponding C function is `gst_mini_object_make_writable`.
    public func setBufferTimestamps(pts: UInt64?, dts: UInt64?) {
        guard isBuffer, let data = info.pointee.data else { return }
        // gst_mini_object_make_writable returns the object or a copy of it, never NULL.
        let writable = gst_mini_object_make_writable(data.assumingMemoryBound(to: GstMiniObject.self))!
        let buffer = UnsafeMutableRawPointer(writable).assumingMemoryBound(to: GstBuffer.self)
        BufferView.header(of: buffer) { buffer in
            buffer.pointee.pts = GstClockTime(pts ?? UInt64.max)
            buffer.pointee.dts = GstClockTime(dts ?? UInt64.max)
        }
        info.pointee.data = UnsafeMutableRawPointer(buffer)
    }

    /// Gives the buffer passing the probe a new duration (nil: unset), copying it first when it is
    /// shared, like `setBufferTimestamps`. The corresponding C function is `gst_mini_object_make_writable`.
    public func setBufferDuration(_ duration: UInt64?) {
        guard isBuffer, let data = info.pointee.data else { return }
        let writable = gst_mini_object_make_writable(data.assumingMemoryBound(to: GstMiniObject.self))!
        let buffer = UnsafeMutableRawPointer(writable).assumingMemoryBound(to: GstBuffer.self)
        BufferView.header(of: buffer) { $0.pointee.duration = GstClockTime(duration ?? UInt64.max) }
        info.pointee.data = UnsafeMutableRawPointer(buffer)
    }
}

extension BufferView {
    /// Decoding timestamp in nanoseconds, nil when unset.
    public var dts: UInt64? {
        let value = Self.header(of: buffer) { UInt64($0.pointee.dts) }
        return value == UInt64.max ? nil : value
    }
}

extension Pad {
    /// The segment of the data the pad passes now (its sticky SEGMENT event), nil before one went
    /// through. The corresponding C functions are `gst_pad_get_sticky_event` and
    /// `gst_event_parse_segment`.
    public var currentSegment: Segment? {
        guard let event = gst_pad_get_sticky_event(pad, GST_EVENT_SEGMENT, 0) else { return nil }
        defer { gst_mini_object_unref(UnsafeMutableRawPointer(event).assumingMemoryBound(to: GstMiniObject.self)) }
        var parsed: UnsafePointer<GstSegment>?
        gst_event_parse_segment(event, &parsed)
        return parsed.map { Segment($0.pointee) }
    }
}
