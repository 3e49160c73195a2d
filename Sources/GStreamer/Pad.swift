import CGStreamer
import CGStreamerShim

/// What a pad probe callback asks GStreamer to do next.
public enum PadProbeReturn: Sendable {
    /// Let the data pass; for blocking probes, keep blocking.
    case ok
    /// Drop the data.
    case drop
    /// Remove this probe.
    case remove
    /// Let the data pass even though the probe is blocking.
    case pass

    var gst: GstPadProbeReturn {
        switch self {
        case .ok: GST_PAD_PROBE_OK
        case .drop: GST_PAD_PROBE_DROP
        case .remove: GST_PAD_PROBE_REMOVE
        case .pass: GST_PAD_PROBE_PASS
        }
    }
}

/// Which data a pad probe sees.
public struct PadProbeType: OptionSet, Sendable {
    /// The `GstPadProbeType` bits.
    public let rawValue: UInt32
    /// Makes a set from `GstPadProbeType` bits.
    public init(rawValue: UInt32) { self.rawValue = rawValue }
    /// The probe fires when the pad is idle: no data is flowing through it (`GST_PAD_PROBE_TYPE_IDLE`).
    public static let idle = PadProbeType(rawValue: GST_PAD_PROBE_TYPE_IDLE.rawValue)
    /// The probe blocks the data flow until the callback returns something other than `ok`
    /// (`GST_PAD_PROBE_TYPE_BLOCK`).
    public static let block = PadProbeType(rawValue: GST_PAD_PROBE_TYPE_BLOCK.rawValue)
    /// Buffers (`GST_PAD_PROBE_TYPE_BUFFER`).
    public static let buffer = PadProbeType(rawValue: GST_PAD_PROBE_TYPE_BUFFER.rawValue)
    /// Buffer lists (`GST_PAD_PROBE_TYPE_BUFFER_LIST`).
    public static let bufferList = PadProbeType(rawValue: GST_PAD_PROBE_TYPE_BUFFER_LIST.rawValue)
    /// Events going downstream (caps, segment, EOS ...) (`GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM`).
    public static let eventDownstream = PadProbeType(rawValue: GST_PAD_PROBE_TYPE_EVENT_DOWNSTREAM.rawValue)
    /// Events going upstream (RECONFIGURE, QoS, seeks ...), seen on the pad that pushes them.
    public static let eventUpstream = PadProbeType(rawValue: GST_PAD_PROBE_TYPE_EVENT_UPSTREAM.rawValue)
    /// Blocks on everything going downstream: buffers, buffer lists and events
    /// (`GST_PAD_PROBE_TYPE_BLOCK_DOWNSTREAM`).
    public static let blockDownstream = PadProbeType(rawValue: GST_PAD_PROBE_TYPE_BLOCK_DOWNSTREAM.rawValue)
}

/// What a probe callback is shown. Valid only during the callback.
public struct PadProbeInfo {
    let info: UnsafeMutablePointer<GstPadProbeInfo>

    /// True when the probe fires for a buffer.
    public var isBuffer: Bool { info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_BUFFER.rawValue != 0 }
    /// True when the probe fires because the pad is idle.
    public var isIdle: Bool { info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_IDLE.rawValue != 0 }

    /// The buffer, when the probe fires for one.
    public var buffer: BufferView? {
        guard isBuffer, let data = info.pointee.data else { return nil }
        return BufferView(buffer: data.assumingMemoryBound(to: GstBuffer.self))
    }

    /// The event type, when the probe fires for an event.
    public var eventType: GstEventType? {
        guard info.pointee.type.rawValue & GST_PAD_PROBE_TYPE_EVENT_BOTH.rawValue != 0,
            let data = info.pointee.data
        else { return nil }
        return data.assumingMemoryBound(to: GstEvent.self).pointee.type
    }

    /// True for the end-of-stream event.
    public var isEOS: Bool { eventType == GST_EVENT_EOS }
    /// True for the event that starts a stream (sent again by a source that replaces another).
    public var isStreamStart: Bool { eventType == GST_EVENT_STREAM_START }

    /// The caps a CAPS event carries, when the probe fires for one. The corresponding C function is
    /// `gst_event_parse_caps`.
    public var eventCaps: Caps? {
        guard eventType == GST_EVENT_CAPS, let data = info.pointee.data else { return nil }
        var caps: UnsafeMutablePointer<GstCaps>?
        gst_event_parse_caps(data.assumingMemoryBound(to: GstEvent.self), &caps)
        guard let caps else { return nil }
        gst_mini_object_ref(UnsafeMutableRawPointer(caps).assumingMemoryBound(to: GstMiniObject.self))
        return Caps(owning: caps)
    }

    /// True for the upstream event asking a source to negotiate its caps again (what a tee sends when a
    /// branch joins or leaves).
    public var isReconfigure: Bool { eventType == GST_EVENT_RECONFIGURE }
}

/// A read-only view of a buffer, valid only where it is handed out.
public struct BufferView {
    /// The underlying `GstBuffer`; the view holds no reference on it.
    public let buffer: UnsafeMutablePointer<GstBuffer>

    /// Presentation timestamp in nanoseconds, nil when unset.
    public var pts: UInt64? {
        let value = Self.header(of: buffer) { UInt64($0.pointee.pts) }
        return value == UInt64.max ? nil : value
    }
    /// The buffer's duration in nanoseconds, nil when unset.
    public var duration: UInt64? {
        let value = Self.header(of: buffer) { UInt64($0.pointee.duration) }
        return value == UInt64.max ? nil : value
    }
    /// The media-specific offset; for V4L2 sources, the driver's frame sequence number.
    public var offset: UInt64 { Self.header(of: buffer) { UInt64($0.pointee.offset) } }
    /// True when the buffer starts after a gap in the stream (`GST_BUFFER_FLAG_DISCONT`).
    public var isDiscont: Bool {
        Self.header(of: buffer) { $0.pointee.mini_object.flags & GST_BUFFER_FLAG_DISCONT.rawValue != 0 }
    }

    /// True when the buffer cannot be decoded on its own: not a keyframe (`GST_BUFFER_FLAG_DELTA_UNIT`).
    public var isDeltaUnit: Bool {
        Self.header(of: buffer) { $0.pointee.mini_object.flags & GST_BUFFER_FLAG_DELTA_UNIT.rawValue != 0 }
    }

    /// Every read or write of a buffer's header fields by this package goes through here. A buffer
    /// passes between threads only through GStreamer's hand-offs (a queue's GMutex, the buffer's
    /// reference count and its pool's queue: atomics in code ThreadSanitizer does not instrument), and
    /// a thread writes into one only once it holds the only reference (`setBufferTimestamps`). The
    /// acquire and release on the buffer's address show ThreadSanitizer those hand-offs between one
    /// access of ours and the next, whichever thread makes it.
    static func header<T>(of buffer: UnsafeMutablePointer<GstBuffer>, _ access: (UnsafeMutablePointer<GstBuffer>) -> T) -> T {
        capture_tsan_acquire(buffer)
        defer { capture_tsan_release(buffer) }
        return access(buffer)
    }
    /// The buffer's size in bytes. The corresponding C function is `gst_buffer_get_size`.
    public var size: Int { Int(gst_buffer_get_size(buffer)) }

    /// Maps the buffer for reading for the duration of the closure.
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R? {
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_READ) != 0 else { return nil }
        defer { gst_buffer_unmap(buffer, &map) }
        return try body(UnsafeRawBufferPointer(start: map.data, count: Int(map.size)))
    }
}

/// The closure behind a probe, kept alive until GStreamer destroys the probe.
private final class ProbeBox {
    let body: @Sendable (Pad, PadProbeInfo) -> PadProbeReturn
    init(_ body: @escaping @Sendable (Pad, PadProbeInfo) -> PadProbeReturn) { self.body = body }
}

/// Called on a streaming thread: kept out of any actor, it only runs the Sendable closure.
private let probeTrampoline: GstPadProbeCallback = { pad, info, userData in
    guard let pad, let info, let userData else { return GST_PAD_PROBE_OK }
    capture_tsan_acquire(userData)  // the box came through the pad's object lock (see addProbe)
    let box = Unmanaged<ProbeBox>.fromOpaque(userData).takeUnretainedValue()
    let wrapped = Pad(borrowing: UnsafeMutableRawPointer(pad).assumingMemoryBound(to: GstObject.self))
    return box.body(wrapped, PadProbeInfo(info: info)).gst
}

private let probeDestroy: GDestroyNotify = { userData in
    guard let userData else { return }
    Unmanaged<ProbeBox>.fromOpaque(userData).release()
}

/// An owned `GstPad`.
public final class Pad: GObjectRef, @unchecked Sendable {
    // @unchecked: as GObjectRef (GstObject references and properties are thread-safe); no Swift state.
    /// The underlying `GstPad`.
    public var pad: UnsafeMutablePointer<GstPad> {
        UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GstPad.self)
    }

    /// The element that owns this pad (for a ghost pad, the bin).
    public var parentElement: Element? {
        gst_pad_get_parent_element(pad).map { Element(full: UnsafeMutableRawPointer($0).assumingMemoryBound(to: GstObject.self)) }
    }

    /// The pad this one is linked to, or nil when it is not linked. The corresponding C function is
    /// `gst_pad_get_peer`.
    public var peer: Pad? {
        gst_pad_get_peer(pad).map { Pad(full: UnsafeMutableRawPointer($0).assumingMemoryBound(to: GstObject.self)) }
    }

    /// True when the pad is linked to another. The corresponding C function is `gst_pad_is_linked`.
    public var isLinked: Bool { gst_pad_is_linked(pad) != 0 }

    /// Links this (source) pad to a sink pad. The corresponding C function is `gst_pad_link`.
    public func link(to sink: Pad) throws(GStreamerError) {
        let result = gst_pad_link(pad, sink.pad)
        guard result == GST_PAD_LINK_OK else {
            let reason = String(cString: gst_pad_link_get_name(result))
            throw .linkFailed(from: "\(parentElement?.name ?? "?"):\(name)", to: "\(sink.parentElement?.name ?? "?"):\(sink.name)", reason: reason)
        }
    }

    /// Unlinks this (source) pad from a sink pad. The corresponding C function is `gst_pad_unlink`.
    @discardableResult
    public func unlink(from sink: Pad) -> Bool {
        gst_pad_unlink(pad, sink.pad) != 0
    }

    /// Installs a probe. The closure runs on whatever thread pushes data (a streaming thread, or the
    /// caller's for an idle probe on an idle pad): it must not block or touch actor-isolated state.
    /// The corresponding C function is `gst_pad_add_probe`.
    @discardableResult
    public func addProbe(_ type: PadProbeType, _ body: @escaping @Sendable (Pad, PadProbeInfo) -> PadProbeReturn) -> UInt {
        let box = Unmanaged.passRetained(ProbeBox(body)).toOpaque()
        // GStreamer stores the probe and its streaming threads find it under the pad's object lock, a
        // GMutex ThreadSanitizer cannot see; this and the trampoline's acquire show it the hand-off.
        capture_tsan_release(box)
        return UInt(gst_pad_add_probe(pad, GstPadProbeType(type.rawValue), probeTrampoline, box, probeDestroy))
    }

    /// Removes a probe `addProbe(_:_:)` installed, by the id it returned. The corresponding C function is
    /// `gst_pad_remove_probe`.
    public func removeProbe(_ id: UInt) {
        gst_pad_remove_probe(pad, gulong(id))
    }

    /// Hands a buffer to this sink pad as its peer's push would (its probes run, then its element's
    /// chain function), on the caller's thread. The caller must be the one that pushes into this pad
    /// (its peer's streaming thread, e.g. from a probe on the peer): two threads never push into one
    /// pad at once. True when the element took it (GST_FLOW_OK). The corresponding C function is
    /// `gst_pad_chain`.
    @discardableResult
    public func chain(_ buffer: Buffer) -> Bool {
        gst_mini_object_ref(UnsafeMutableRawPointer(buffer.buffer).assumingMemoryBound(to: GstMiniObject.self))
        return gst_pad_chain(pad, buffer.buffer) == GST_FLOW_OK
    }

    /// Sends an EOS event into this pad. The corresponding C function is `gst_pad_send_event`.
    @discardableResult
    public func sendEOS() -> Bool {
        gst_pad_send_event(pad, gst_event_new_eos()) != 0
    }

    /// The caps currently negotiated on the pad.
    public var currentCaps: Caps? {
        gst_pad_get_current_caps(pad).map { Caps(owning: $0) }
    }
}

extension Pad {
    /// The caps the pad can produce or accept now. The corresponding C function is `gst_pad_query_caps`.
    public func queryCaps() -> Caps? {
        gst_pad_query_caps(pad, nil).map { Caps(owning: $0) }
    }
}

extension Pad {
    /// Shifts the running time of everything passing the pad (used to bring a non-live source added
    /// to a running pipeline onto the pipeline's timeline). The corresponding C function is
    /// `gst_pad_set_offset`.
    public func setOffset(_ nanoseconds: Int64) {
        gst_pad_set_offset(pad, gint64(nanoseconds))
    }
}
