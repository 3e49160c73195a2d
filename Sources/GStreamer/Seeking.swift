import CGStreamer
import CGStreamerShim

/// How a seek lands: GStreamer's `GstSeekFlags`, the ones a file editor needs.
public struct SeekFlags: OptionSet, Sendable {
    /// The `GstSeekFlags` bits.
    public let rawValue: UInt32
    /// Makes a set from `GstSeekFlags` bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// Throws away what is queued downstream, so the new position plays at once.
    public static let flush = SeekFlags(rawValue: GST_SEEK_FLAG_FLUSH.rawValue)
    /// Decode from the keyframe before the position and drop what comes before it: the exact frame.
    public static let accurate = SeekFlags(rawValue: GST_SEEK_FLAG_ACCURATE.rawValue)
    /// Land on a keyframe (with `snapBefore` / `snapNearest`: which one); the segment starts there.
    public static let keyUnit = SeekFlags(rawValue: GST_SEEK_FLAG_KEY_UNIT.rawValue)
    /// With `keyUnit`: land on the keyframe at or before the position (`GST_SEEK_FLAG_SNAP_BEFORE`).
    public static let snapBefore = SeekFlags(rawValue: GST_SEEK_FLAG_SNAP_BEFORE.rawValue)
    /// With `keyUnit`: land on the keyframe nearest the position (`GST_SEEK_FLAG_SNAP_NEAREST`).
    public static let snapNearest = SeekFlags(rawValue: GST_SEEK_FLAG_SNAP_NEAREST.rawValue)

    var gst: GstSeekFlags { GstSeekFlags(rawValue: rawValue) }
}

extension PadProbeType {
    /// Flush events (FLUSH_START, FLUSH_STOP), which the other event types leave out.
    public static let eventFlush = PadProbeType(rawValue: GST_PAD_PROBE_TYPE_EVENT_FLUSH.rawValue)
}

extension PadProbeInfo {
    /// True for the FLUSH_STOP that ends a flushing seek's flush: what follows is the new position.
    public var isFlushStop: Bool { eventType == GST_EVENT_FLUSH_STOP }
}

extension Element {
    /// Asks for a time segment `start ..< stop` (nanoseconds; `stop` nil: to the end), played at
    /// `rate` (negative: backwards, from `stop` down to `start`). Returns false when no element
    /// upstream could seek. The corresponding C function is `gst_element_seek`.
    @discardableResult
    public func seek(start: UInt64, stop: UInt64? = nil, rate: Double = 1.0, flags: SeekFlags) -> Bool {
        gst_element_seek(
            element, rate, GST_FORMAT_TIME, flags.gst, GST_SEEK_TYPE_SET, gint64(start),
            stop == nil ? GST_SEEK_TYPE_NONE : GST_SEEK_TYPE_SET, stop.map { gint64($0) } ?? -1) != 0
    }

    /// The stream's duration in nanoseconds, when an element knows it. The corresponding C function is
    /// `gst_element_query_duration`.
    public var duration: UInt64? {
        var value: gint64 = -1
        guard gst_element_query_duration(element, GST_FORMAT_TIME, &value) != 0, value >= 0 else { return nil }
        return UInt64(value)
    }

    /// Waits (at most `timeout` nanoseconds) for the element to finish a state change that went
    /// asynchronous; returns the state it is in, or nil when the change failed or did not finish in
    /// time. The corresponding C function is `gst_element_get_state`.
    public func waitForState(timeout: UInt64) -> ElementState? {
        var current = GST_STATE_VOID_PENDING
        var pending = GST_STATE_VOID_PENDING
        let result = gst_element_get_state(element, &current, &pending, GstClockTime(timeout))
        guard result == GST_STATE_CHANGE_SUCCESS || result == GST_STATE_CHANGE_NO_PREROLL else { return nil }
        return ElementState(current)
    }

    /// The sample an appsink holds after prerolling (the frame at the position it is paused on),
    /// waiting at most `timeout` nanoseconds. The corresponding C function is
    /// `gst_app_sink_try_pull_preroll`.
    public func pullPreroll(timeout: UInt64) -> Sample? {
        let sink = UnsafeMutableRawPointer(element).assumingMemoryBound(to: GstAppSink.self)
        guard let sample = gst_app_sink_try_pull_preroll(sink, GstClockTime(timeout)) else { return nil }
        return Sample(owning: sample)
    }
}

extension Sample {
    /// The presentation time of the sample's buffer, in nanoseconds.
    public var pts: UInt64? { view.buffer?.pts }

    /// The buffer's position in the media (its timestamp through the sample's segment: what a player
    /// shows as the time, edit lists and decoder delays taken out). The corresponding C function is
    /// `gst_segment_to_stream_time`.
    public var streamTime: UInt64? {
        guard let pts, let segment = gst_sample_get_segment(sample) else { return pts }
        let time = gst_segment_to_stream_time(segment, GST_FORMAT_TIME, guint64(pts))
        return time == guint64.max ? pts : UInt64(time)
    }

    /// The buffer's bytes, copied.
    public var bytes: [UInt8] { view.buffer?.withBytes { Array($0) } ?? [] }
}

extension Bus {
    /// Waits at most `timeout` nanoseconds for the next message of one of the kinds (others are
    /// dropped). For a bus without a sync handler, read by one thread. The corresponding C function is
    /// `gst_bus_timed_pop_filtered`.
    public func pop(timeout: UInt64, kinds: Set<PoppedKind>) -> Message? {
        var mask: Int32 = 0
        for kind in kinds { mask |= Int32(bitPattern: UInt32(truncatingIfNeeded: kind.gst.rawValue)) }
        guard let message = gst_bus_timed_pop_filtered(bus, GstClockTime(timeout), GstMessageType(rawValue: numericCast(mask))) else { return nil }
        let wrapped = Message(borrowing: message)
        gst_mini_object_unref(UnsafeMutableRawPointer(message).assumingMemoryBound(to: GstMiniObject.self))
        return wrapped
    }

    /// The message kinds `pop` can wait for.
    public enum PoppedKind: Sendable, Hashable {
        /// The kinds, each the `GstMessageType` of the same name: end of stream (`eos`), an error (`error`),
        /// a completed asynchronous state change or flushing seek (`asyncDone`), an element's state change
        /// (`stateChanged`).
        case eos, error, asyncDone, stateChanged
        var gst: GstMessageType {
            switch self {
            case .eos: GST_MESSAGE_EOS
            case .error: GST_MESSAGE_ERROR
            case .asyncDone: GST_MESSAGE_ASYNC_DONE
            case .stateChanged: GST_MESSAGE_STATE_CHANGED
            }
        }
    }
}

extension Pad {
    /// Sends a seek upstream from this pad (into the element that owns it when it is a source pad).
    /// The corresponding C functions are `gst_event_new_seek` and `gst_pad_send_event`.
    @discardableResult
    public func sendSeek(start: UInt64, stop: UInt64?, flags: SeekFlags) -> Bool {
        guard
            let event = gst_event_new_seek(
                1.0, GST_FORMAT_TIME, flags.gst, GST_SEEK_TYPE_SET, gint64(start),
                stop == nil ? GST_SEEK_TYPE_NONE : GST_SEEK_TYPE_SET, stop.map { gint64($0) } ?? -1)
        else { return false }
        return gst_pad_send_event(pad, event) != 0
    }
}

extension Pad {
    /// A timestamp of a buffer this pad passes, as a position in the media (through the pad's
    /// current segment: what a player shows as the time, edit lists taken out); nil when the pad has
    /// no time segment or the timestamp lies outside it. The corresponding C functions are
    /// `gst_pad_get_sticky_event`, `gst_event_parse_segment` and `gst_segment_to_stream_time`.
    public func streamTime(of timestamp: UInt64) -> UInt64? {
        guard let event = gst_pad_get_sticky_event(pad, GST_EVENT_SEGMENT, 0) else { return nil }
        defer { gst_mini_object_unref(UnsafeMutableRawPointer(event).assumingMemoryBound(to: GstMiniObject.self)) }
        var segment: UnsafePointer<GstSegment>?
        gst_event_parse_segment(event, &segment)
        guard let segment, segment.pointee.format == GST_FORMAT_TIME else { return nil }
        let time = gst_segment_to_stream_time(segment, GST_FORMAT_TIME, guint64(timestamp))
        return time == guint64.max ? nil : UInt64(time)
    }
}
