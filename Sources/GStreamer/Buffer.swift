import CGStreamer

/// An owned reference to a `GstBuffer` (kept, e.g., in a zero-shutter-lag ring).
/// Buffers are immutable while shared, so holding and reading one from any thread is safe.
public final class Buffer: @unchecked Sendable {
    let buffer: UnsafeMutablePointer<GstBuffer>

    /// Takes a new reference on a borrowed buffer.
    public init(_ view: BufferView) {
        gst_mini_object_ref(UnsafeMutableRawPointer(view.buffer).assumingMemoryBound(to: GstMiniObject.self))
        buffer = view.buffer
    }

    /// Takes over a reference the caller owns.
    private init(owning buffer: UnsafeMutablePointer<GstBuffer>) {
        self.buffer = buffer
    }

    deinit { gst_mini_object_unref(UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: GstMiniObject.self)) }

    /// A view of the buffer, to read its timestamps and data.
    public var view: BufferView { BufferView(buffer: buffer) }

    /// A new buffer with this one's memory, flags and metas but its own presentation time (no decoding
    /// time): the same picture again, at another moment. No byte is copied. The corresponding C
    /// function is `gst_buffer_copy`.
    public func retimed(pts: UInt64) -> Buffer {
        // gst_buffer_copy returns a new buffer, never NULL.
        let copy = gst_buffer_copy(buffer)!
        BufferView.header(of: copy) { header in
            header.pointee.pts = GstClockTime(pts)
            header.pointee.dts = GstClockTime(UInt64.max)
        }
        return Buffer(owning: copy)
    }
}

extension PadProbeInfo {
    /// Replaces the buffer passing the probe with another one (the old one is released). Used to send
    /// an earlier frame downstream in its place.
    public func replaceBuffer(with replacement: Buffer) {
        guard isBuffer, let old = info.pointee.data else { return }
        gst_mini_object_ref(UnsafeMutableRawPointer(replacement.buffer).assumingMemoryBound(to: GstMiniObject.self))
        info.pointee.data = UnsafeMutableRawPointer(replacement.buffer)
        gst_mini_object_unref(old.assumingMemoryBound(to: GstMiniObject.self))
    }
}

extension PadProbeInfo {
    /// Lends the bytes of the buffer passing the probe for writing: the buffer is made writable first
    /// (copied when someone else holds it; the copy replaces it downstream). Nothing happens when it
    /// cannot be mapped. The corresponding C functions are `gst_mini_object_make_writable` and
    /// `gst_buffer_map` with `GST_MAP_WRITE`.
    public func withWritableBytes(_ body: (UnsafeMutableRawBufferPointer) -> Void) {
        guard isBuffer, let data = info.pointee.data else { return }
        let writable = gst_mini_object_make_writable(data.assumingMemoryBound(to: GstMiniObject.self))
        guard let writable else { return }
        info.pointee.data = UnsafeMutableRawPointer(writable)
        let buffer = UnsafeMutableRawPointer(writable).assumingMemoryBound(to: GstBuffer.self)
        var map = GstMapInfo()
        guard gst_buffer_map(buffer, &map, GST_MAP_WRITE) != 0 else { return }
        defer { gst_buffer_unmap(buffer, &map) }
        body(UnsafeMutableRawBufferPointer(start: map.data, count: Int(map.size)))
    }
}

extension Element {
    /// Replaces the tags a tag-setting element (jifmux, mp4mux ...) writes, from a serialized tag list
    /// (`taglist, title=(string)"x", geo-location-latitude=(double)48.1`). Returns false when the element
    /// does not set tags or the list does not parse. The corresponding C functions are
    /// `gst_tag_list_new_from_string` and `gst_tag_setter_merge_tags`.
    @discardableResult
    public func setTags(_ serialized: String) -> Bool {
        guard g_type_check_instance_is_a(UnsafeMutablePointer<GTypeInstance>(OpaquePointer(element)), gst_tag_setter_get_type()) != 0,
            let list = gst_tag_list_new_from_string(serialized)
        else { return false }
        defer { gst_mini_object_unref(UnsafeMutableRawPointer(list).assumingMemoryBound(to: GstMiniObject.self)) }
        let setter = OpaquePointer(element)
        gst_tag_setter_reset_tags(setter)
        gst_tag_setter_merge_tags(setter, list, GST_TAG_MERGE_REPLACE)
        return true
    }
}

/// A buffer held and mapped for reading for as long as this object lives: its bytes can be read from
/// any thread, any number of times, without a copy.
///
/// While it lives, the buffer is not given back to its pool: a consumer that keeps many of them keeps
/// the producer's buffers (a V4L2 driver's pool copies once it runs low). Copy what is kept for long.
public final class MappedBuffer: @unchecked Sendable {
    // @unchecked: the mapping is read-only and never changes until deinit unmaps it; GstBuffer
    // reference counting is atomic.
    private let buffer: UnsafeMutablePointer<GstBuffer>
    private let map: UnsafeMutablePointer<GstMapInfo>

    /// Takes a reference on the buffer and maps it for reading; nil when it cannot be mapped.
    /// The corresponding C function is `gst_buffer_map`.
    public init?(_ view: BufferView) {
        map = .allocate(capacity: 1)
        map.initialize(to: GstMapInfo())
        guard gst_buffer_map(view.buffer, map, GST_MAP_READ) != 0 else {
            map.deallocate()
            return nil
        }
        gst_mini_object_ref(UnsafeMutableRawPointer(view.buffer).assumingMemoryBound(to: GstMiniObject.self))
        buffer = view.buffer
    }

    deinit {
        gst_buffer_unmap(buffer, map)
        map.deallocate()
        gst_mini_object_unref(UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: GstMiniObject.self))
    }

    /// The mapped bytes; valid while this object lives.
    public var bytes: UnsafeRawBufferPointer { UnsafeRawBufferPointer(start: map.pointee.data, count: Int(map.pointee.size)) }
}
