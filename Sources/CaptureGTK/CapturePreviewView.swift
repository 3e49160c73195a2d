import CGtk
import CGtkShim
import Capture
import Foundation
import Synchronization

/// A frame as it reached the view, for logs and measurements.
public struct PreviewFrameArrival: Sendable {
    /// The preview's frame counter (from 0).
    public var sequence: Int
    /// The frame's presentation time on the session clock, in seconds.
    public var timestamp: Double
    /// When the frame reached the view, on the monotonic clock, in seconds.
    public var arrival: Double
    /// The frame's size in pixels.
    public var width: Int, height: Int
}

/// How a `CapturePreviewView` hands its frames to GTK (see the view's documentation).
public enum PreviewFramePath: String, Sendable {
    /// A `GdkMemoryTexture` over the frame's own mapped buffer (GTK's GL and Vulkan renderers, Wayland).
    case texture
    /// An image the X server shares, the frame copied into it once (GTK's cairo renderer on X11).
    case sharedImage = "shared-image"
}

/// A GTK 4 widget showing a `CaptureVideoPreviewOutput` live, as `AVCaptureVideoPreviewLayer` sits in
/// a view: the view is the preview's renderer, keeps the preview's `viewSize` equal to its allocated
/// size in device pixels, and shows each frame in a paintable of its own. Gravity and mirroring are
/// the preview's (`videoGravity`, `connection.isMirrored`): the frames arrive already at the view's
/// size with them applied.
///
/// How a frame reaches the screen depends on GTK's renderer for the window:
/// - GL or Vulkan (a GPU): the frame is a `GdkMemoryTexture` over its own mapped buffer, which the
///   renderer uploads (no pixel copy on the way);
/// - cairo (GTK's software renderer, `GSK_RENDERER=cairo`, the one to use without a GPU) on X11: the
///   frame is copied once into an image the X server shares (MIT-SHM), which GTK paints into the
///   window. A texture would cost more there: GTK's cairo renderer copies a texture into a new image
///   for every frame, and uploads it through the X connection. The view then also keeps glibc's heap
///   from returning GTK's frame-sized blocks to the kernel between frames (`mallopt`): GTK allocates
///   and frees two window-sized images per frame, and mapping them again costs more than drawing.
///
/// ```swift
/// let preview = CaptureVideoPreviewOutput(name: "preview")
/// let view = CapturePreviewView(preview: preview)   // on GTK's thread; before the session starts
/// try session.addOutput(preview)
/// container.append(view.widget)
/// ```
///
/// Frames arrive on a GStreamer streaming thread; the view keeps only the newest one not yet shown
/// and shows it on GTK's main thread (an idle source, `GTK.invoke`), where the texture is made. A frame's
/// buffer stays mapped until GTK lets go of its texture (the next frame replaces it). Keep the view
/// alive while the session runs: the preview holds its renderer weakly.
public final class CapturePreviewView: CapturePreviewRenderer, @unchecked Sendable {
    // @unchecked: `pending` and the arrival handler are behind `Locked`, the counters are atomics; every other stored property
    // is read and written on GTK's main thread only (the initializer, the tick and the show callbacks
    // are all there).

    /// The preview output the view shows.
    public let preview: CaptureVideoPreviewOutput
    /// The GtkPicture the frames are shown in (GTK's main thread only).
    nonisolated(unsafe) private let picture: UnsafeMutablePointer<GtkWidget>
    /// The picture's paintable: each frame as a texture or a shared image (main thread).
    nonisolated(unsafe) private let paintable: OpaquePointer
    /// Two images the X server shares, written in turn (one may still be drawn while the next is
    /// written), for GTK's cairo renderer on X11 (main thread).
    nonisolated(unsafe) private var sharedImages: [OpaquePointer] = []
    nonisolated(unsafe) private var nextSharedImage = 0
    private let pending = Locked<Pending>(Pending())
    private let shown = Atomic<Int>(0)
    private let dropped = Atomic<Int>(0)
    private let arrivals = Locked<(@Sendable (PreviewFrameArrival) -> Void)?>(nil)
    private let lastPath = Locked<PreviewFramePath?>(nil)
    /// The size last given to the preview, in device pixels (main thread).
    nonisolated(unsafe) private var lastSize: Size?
    /// Called on GTK's main thread after a frame is shown (main thread).
    nonisolated(unsafe) private var shownHandler: (@MainActor (PreviewFrameArrival) -> Void)?

    private struct Pending {
        var frame: VideoFrame?
        var arrival = PreviewFrameArrival(sequence: 0, timestamp: 0, arrival: 0, width: 0, height: 0)
        var scheduled = false
    }

    /// A view showing `preview`, which it becomes the renderer of. Call on GTK's main thread, before
    /// the session with the preview starts or commits (the renderer takes effect then).
    @MainActor
    public init(preview: CaptureVideoPreviewOutput) {
        self.preview = preview
        // The view owns a reference of its own (the picture's floating one is sunk here): the picture
        // outlives a window destroyed while frames are still on their way to it.
        let picture = gtk_picture_new()!
        g_object_ref_sink(picture)
        gtk_picture_set_can_shrink(OpaquePointer(picture), 1)
        // The frames come at the view's size with the gravity applied: fill, nothing more to fit.
        gtk_picture_set_content_fit(OpaquePointer(picture), GTK_CONTENT_FIT_FILL)
        let paintable = capture_gtk_frame_paintable_new()!
        gtk_picture_set_paintable(OpaquePointer(picture), paintable)
        self.picture = picture
        self.paintable = paintable
        let widget = Widget(picture).expand().style("capture-preview")
        preview.renderer = self
        // Follows the allocation: the preview's view size is the widget's size in device pixels.
        widget.onTick { [weak self] in
            guard let self else { return false }
            self.followSize()
            return true
        }
        followSize()
    }

    deinit {
        // GTK objects are released on GTK's thread; the last reference to the view may go elsewhere.
        nonisolated(unsafe) let picture = picture
        nonisolated(unsafe) let paintable = paintable
        nonisolated(unsafe) let sharedImages = sharedImages
        GTK.invoke {
            g_object_unref(picture)
            g_object_unref(UnsafeMutableRawPointer(paintable))
            sharedImages.forEach { cairo_surface_destroy($0) }
        }
    }

    /// The widget to put in a container.
    @MainActor public var widget: Widget { Widget(picture) }

    /// How the video fills the view (the preview's `videoGravity`).
    public var videoGravity: VideoGravity {
        get { preview.videoGravity }
        set { preview.videoGravity = newValue }
    }

    /// Whether the video is shown mirrored (the preview's connection; applies at the next commit).
    public var isMirrored: Bool {
        get { preview.connection.isMirrored }
        set { preview.connection.isMirrored = newValue }
    }

    /// How the last frame shown reached GTK; nil before the first. The shared images are several
    /// times cheaper where GTK draws in software; a texture where it has a GPU.
    public var framePath: PreviewFramePath? { lastPath.value }

    /// Frames shown so far.
    public var shownFrameCount: Int { shown.load(ordering: .relaxed) }
    /// Frames that arrived while a newer one replaced them before GTK could show them.
    public var droppedFrameCount: Int { dropped.load(ordering: .relaxed) }

    /// Called on the streaming thread with each frame as it arrives (before it is shown; must return
    /// at once): frame logs, gap measurements.
    public func onArrival(_ handler: (@Sendable (PreviewFrameArrival) -> Void)?) { arrivals.withLock { $0 = handler } }

    /// Called on GTK's main thread after each frame is shown.
    @MainActor public func onShown(_ handler: (@MainActor (PreviewFrameArrival) -> Void)?) { shownHandler = handler }

    /// The camera's normalized point shown at the widget's point `x`, `y` (logical pixels), for
    /// tap-to-focus: the preview's `captureDevicePointConverted(fromLayerPoint:)`.
    @MainActor public func devicePoint(x: Double, y: Double) -> NormalizedPoint {
        let scale = Double(widget.scaleFactor)
        return preview.captureDevicePointConverted(fromLayerPoint: ViewPoint(x: x * scale, y: y * scale))
    }

    /// Tells the preview the widget's size when it changed.
    @MainActor private func followSize() {
        let (width, height) = widget.allocatedSize
        let scale = widget.scaleFactor
        guard width > 1, height > 1 else { return }
        let size = Size(width: width * scale, height: height * scale)
        guard size != lastSize else { return }
        lastSize = size
        preview.viewSize = size
    }

    // MARK: Frames

    /// The renderer's call, on the streaming thread: keeps the newest frame and asks GTK's thread to
    /// show it (once per pending frame).
    public func previewOutput(_ output: CaptureVideoPreviewOutput, render frame: VideoFrame) {
        let arrival = PreviewFrameArrival(
            sequence: frame.sequence, timestamp: frame.timestamp, arrival: GTK.monotonicSeconds(), width: frame.width, height: frame.height)
        arrivals.withLock { $0?(arrival) }
        let schedule = pending.withLock { pending -> Bool in
            if pending.frame != nil { dropped.add(1, ordering: .relaxed) }
            pending.frame = frame
            pending.arrival = arrival
            defer { pending.scheduled = true }
            return !pending.scheduled
        }
        guard schedule else { return }
        GTK.invoke { [weak self] in self?.showPending() }
    }

    /// On GTK's thread: the newest frame is shown, in a shared image under GTK's cairo renderer on X11,
    /// as a texture over its own mapped bytes otherwise.
    @MainActor private func showPending() {
        let (frame, arrival) = pending.withLock { pending in
            defer {
                pending.frame = nil
                pending.scheduled = false
            }
            return (pending.frame, pending.arrival)
        }
        guard let frame, frame.pixelFormat == "BGRA" || frame.pixelFormat == "BGRx", frame.width > 0, frame.height > 0 else { return }
        if let image = sharedImage(width: frame.width, height: frame.height) {
            Self.copy(frame, into: image)
            capture_gtk_frame_paintable_show_surface(paintable, image)
            lastPath.value = .sharedImage
        } else {
            guard let texture = Self.texture(of: frame) else { return }
            capture_gtk_frame_paintable_show_texture(paintable, OpaquePointer(texture))
            g_object_unref(texture)
            lastPath.value = .texture
        }
        shown.add(1, ordering: .relaxed)
        shownHandler?(arrival)
    }

    /// The next shared image of that size, when GTK draws the view with its cairo renderer on X11;
    /// nil otherwise (another renderer, Wayland, the view not yet in a window).
    @MainActor private func sharedImage(width: Int, height: Int) -> OpaquePointer? {
        guard capture_gtk_renders_with_cairo(picture) != 0 else { return nil }
        if let first = sharedImages.first, cairo_image_surface_get_width(first) != width || cairo_image_surface_get_height(first) != height {
            sharedImages.forEach { cairo_surface_destroy($0) }
            sharedImages = []
        }
        if sharedImages.isEmpty {
            guard let first = capture_gtk_x11_shared_image(picture, gint(width), gint(height)) else { return nil }
            guard let second = capture_gtk_x11_shared_image(picture, gint(width), gint(height)) else {
                cairo_surface_destroy(first)
                return nil
            }
            sharedImages = [first, second]
            _ = Self.allocationsKept
        }
        nextSharedImage = (nextSharedImage + 1) % sharedImages.count
        return sharedImages[nextSharedImage]
    }

    /// Set once, the first time a view draws through GTK's cairo renderer.
    private static let allocationsKept: Void = capture_gtk_keep_frame_sized_allocations()

    /// Copies the frame's pixels into the image, once the X server no longer reads it.
    @MainActor private static func copy(_ frame: VideoFrame, into image: OpaquePointer) {
        cairo_surface_flush(image)
        guard let data = cairo_image_surface_get_data(image) else { return }
        let imageStride = Int(cairo_image_surface_get_stride(image))
        let rowBytes = min(frame.width * 4, imageStride)
        frame.withUnsafePlane(0) { plane, stride in
            guard let source = plane.baseAddress else { return }
            if stride == imageStride && plane.count >= stride * frame.height {
                memcpy(data, source, stride * frame.height)
            } else {
                for row in 0..<frame.height where (row * stride + rowBytes) <= plane.count {
                    memcpy(data + row * imageStride, source + row * stride, rowBytes)
                }
            }
        }
        cairo_surface_mark_dirty(image)
    }

    /// A memory texture over the frame's first plane. The frame (and so its mapped buffer) is kept in
    /// a box the texture's bytes release when GTK frees them.
    @MainActor private static func texture(of frame: VideoFrame) -> gpointer? {
        let box = Box<VideoFrame>.retained(frame)
        // The plane's pointer outlives the closure: the frame holds its buffer mapped for as long as
        // the box lives, and the box lives until the bytes are freed.
        let (bytes, stride) = frame.withUnsafePlane(0) { plane, stride in
            (g_bytes_new_with_free_func(plane.baseAddress, gsize(plane.count), releaseBox, box), stride)
        }
        guard let bytes else { return nil }
        defer { g_bytes_unref(bytes) }
        return gdk_memory_texture_new(gint(frame.width), gint(frame.height), GDK_MEMORY_B8G8R8A8_PREMULTIPLIED, bytes, gsize(stride)).map {
            UnsafeMutableRawPointer($0)
        }
    }
}
