import CGStreamer
import CGStreamerShim

/// One picture of an overlay composition: premultiplied BGRA pixels (cairo's ARGB32 on a
/// little-endian machine) placed at a position of the frame, with an opacity applied to all of it.
public struct OverlayPicture: Sendable {
    /// `stride * height` bytes, rows top to bottom, each pixel B, G, R, A with the colour already
    /// multiplied by the alpha.
    public var pixels: [UInt8]
    /// The picture's width in pixels.
    public var width: Int
    /// The picture's height in pixels.
    public var height: Int
    /// Bytes per row of `pixels`; at least `width * 4`.
    public var stride: Int
    /// Where the picture's top-left corner goes on the frame, in pixels (may be partly outside).
    public var x: Int
    /// The row of the frame the picture's top edge goes on, in pixels (see `x`).
    public var y: Int
    /// Multiplies every pixel's alpha: 0 transparent, 1 as drawn.
    public var opacity: Double

    /// Makes a picture from its pixels and placement.
    /// - Parameters:
    ///   - pixels: `stride * height` bytes of premultiplied BGRA, rows top to bottom.
    ///   - width: The width in pixels.
    ///   - height: The height in pixels.
    ///   - stride: Bytes per row; at least `width * 4`.
    ///   - x: The column of the frame the top-left corner goes on.
    ///   - y: The row of the frame the top-left corner goes on.
    ///   - opacity: Multiplies every pixel's alpha: 0 transparent, 1 (the default) as drawn.
    public init(pixels: [UInt8], width: Int, height: Int, stride: Int, x: Int, y: Int, opacity: Double = 1) {
        self.pixels = pixels
        self.width = width
        self.height = height
        self.stride = stride
        self.x = x
        self.y = y
        self.opacity = opacity
    }
}

/// A `GstVideoOverlayComposition`: pictures blended on a video frame by `overlaycomposition` (or
/// attached to it for a sink that blends itself). Immutable once made; any thread may hand it out.
public final class OverlayComposition: @unchecked Sendable {
    // @unchecked: the composition is never changed after init; mini-object reference counting is atomic.
    let composition: OpaquePointer

    /// A composition of the pictures, in order (later ones on top); nil when there is none or one has
    /// no pixels. The corresponding C functions are `gst_video_overlay_rectangle_new_raw` and
    /// `gst_video_overlay_composition_new` / `_add_rectangle`.
    public init?(_ pictures: [OverlayPicture]) {
        var made: OpaquePointer?
        for picture in pictures {
            guard picture.width > 0, picture.height > 0, picture.stride >= picture.width * 4,
                picture.pixels.count >= picture.stride * picture.height
            else { continue }
            guard let rectangle = Self.rectangle(picture) else { continue }
            if let made {
                gst_video_overlay_composition_add_rectangle(made, rectangle)
            } else {
                made = gst_video_overlay_composition_new(rectangle)
            }
            // The composition holds its own reference.
            gst_mini_object_unref(UnsafeMutableRawPointer(rectangle).assumingMemoryBound(to: GstMiniObject.self))
        }
        guard let made else { return nil }
        composition = made
    }

    deinit { gst_mini_object_unref(UnsafeMutableRawPointer(composition).assumingMemoryBound(to: GstMiniObject.self)) }

    private static func rectangle(_ picture: OverlayPicture) -> OpaquePointer? {
        let size = picture.stride * picture.height
        guard let buffer = gst_buffer_new_allocate(nil, gsize(size), nil) else { return nil }
        _ = picture.pixels.withUnsafeBytes { bytes in gst_buffer_fill(buffer, 0, bytes.baseAddress, gsize(size)) }
        var offsets: [gsize] = [0, 0, 0, 0]
        var strides: [gint] = [gint(picture.stride), 0, 0, 0]
        // BGRA is GST_VIDEO_OVERLAY_COMPOSITION_FORMAT_RGB on a little-endian machine (the macro picks
        // ARGB on a big-endian one, where cairo's ARGB32 is laid out as A, R, G, B).
        let format = UInt32(1).littleEndian == 1 ? GST_VIDEO_FORMAT_BGRA : GST_VIDEO_FORMAT_ARGB
        gst_buffer_add_video_meta_full(
            buffer, GST_VIDEO_FRAME_FLAG_NONE, format, guint(picture.width), guint(picture.height), 1,
            &offsets, &strides)
        let rectangle = gst_video_overlay_rectangle_new_raw(
            buffer, gint(picture.x), gint(picture.y), guint(picture.width), guint(picture.height),
            GST_VIDEO_OVERLAY_FORMAT_FLAG_PREMULTIPLIED_ALPHA)
        gst_mini_object_unref(UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: GstMiniObject.self))
        if let rectangle, picture.opacity < 1 {
            gst_video_overlay_rectangle_set_global_alpha(rectangle, Float(max(0, picture.opacity)))
        }
        return rectangle
    }

    /// A new reference for a caller that takes ownership (the "draw" signal's return value).
    fileprivate func retainedPointer() -> OpaquePointer {
        gst_mini_object_ref(UnsafeMutableRawPointer(composition).assumingMemoryBound(to: GstMiniObject.self))
        return composition
    }
}

/// What an `overlaycomposition` element tells its draw function about the frame to draw on.
public struct OverlayFrame: Sendable {
    /// The frame's width in pixels.
    public var width: Int
    /// The frame's height in pixels.
    public var height: Int
    /// The frame's running time in nanoseconds, when it has a timestamp.
    public var runningTime: UInt64?
}

private final class OverlayDrawBox {
    let draw: @Sendable (OverlayFrame) -> OverlayComposition?
    init(_ draw: @escaping @Sendable (OverlayFrame) -> OverlayComposition?) { self.draw = draw }
}

/// Runs on the element's streaming thread for every frame; returns a composition the element owns.
private let overlayDrawTrampoline: @convention(c) (UnsafeMutablePointer<GstElement>?, OpaquePointer?, gpointer?) -> OpaquePointer? = { _, sample, userData in
    guard let sample, let userData, let caps = gst_sample_get_caps(sample), let structure = gst_caps_get_structure(caps, 0) else { return nil }
    var width: gint = 0, height: gint = 0
    guard gst_structure_get_int(structure, "width", &width) != 0, gst_structure_get_int(structure, "height", &height) != 0,
        width > 0, height > 0
    else { return nil }
    var runningTime: UInt64?
    if let buffer = gst_sample_get_buffer(sample), let segment = gst_sample_get_segment(sample) {
        // Through the buffer's annotated header: the gate of a recording further down may retime this
        // buffer once it is the only holder, and the queue between hands it over with a GMutex.
        let pts = BufferView.header(of: buffer) { $0.pointee.pts }
        if pts != guint64.max {
            let time = gst_segment_to_running_time(segment, GST_FORMAT_TIME, pts)
            if time != guint64.max { runningTime = UInt64(time) }
        }
    }
    capture_tsan_acquire(userData)  // the box came through GSignal's lock (see onOverlayDraw)
    let box = Unmanaged<OverlayDrawBox>.fromOpaque(userData).takeUnretainedValue()
    return box.draw(OverlayFrame(width: Int(width), height: Int(height), runningTime: runningTime))?.retainedPointer()
}

private let overlayDrawDestroy: GClosureNotify = { userData, _ in
    guard let userData else { return }
    Unmanaged<OverlayDrawBox>.fromOpaque(userData).release()
}

extension Element {
    /// Supplies an `overlaycomposition` element's pictures: `draw` is called on the streaming thread
    /// for every frame, with the frame's size, and returns what to blend on it (nil: the frame passes
    /// untouched). It must be quick and must not block; it is released with the element. The
    /// corresponding C function is `g_signal_connect_data` on "draw".
    ///
    /// An element takes one draw function: later calls do nothing (two would each hand the element a
    /// composition and one would be lost).
    public func onOverlayDraw(_ draw: @escaping @Sendable (OverlayFrame) -> OverlayComposition?) {
        guard g_object_get_data(raw.assumingMemoryBound(to: GObject.self), "capture-overlay-draw") == nil else { return }
        g_object_set_data(raw.assumingMemoryBound(to: GObject.self), "capture-overlay-draw", raw)
        let box = Unmanaged.passRetained(OverlayDrawBox(draw)).toOpaque()
        capture_tsan_release(box)  // see onPadAdded: GSignal's lock is a GMutex ThreadSanitizer cannot see
        let callback = unsafeBitCast(overlayDrawTrampoline, to: GCallback.self)
        g_signal_connect_data(raw, "draw", callback, box, overlayDrawDestroy, GConnectFlags(rawValue: 0))
    }
}
