import Foundation
import GStreamer
import Synchronization

/// Where a preview goes.
public enum PreviewSink: String, Sendable, CaseIterable {
    /// A window when a display exists, else nothing (the session still runs).
    case auto
    /// A window; refused when there is no display.
    case window
    /// No window (frames are consumed and discarded).
    case none
}

/// Draws a preview's frames in a toolkit's view, as CaptureGTK's `CapturePreviewView` does: the view
/// is the preview's `renderer`, and tells the preview its size (`viewSize`).
public protocol CapturePreviewRenderer: AnyObject, Sendable {
    /// Called on the preview's streaming thread with each frame: BGRA, already at the view's size with
    /// the gravity applied (bars or crop included), the frame's own buffer mapped, not a copy. Must
    /// return at once: hand the frame to the toolkit's thread and keep it only until the next one.
    func previewOutput(_ output: CaptureVideoPreviewOutput, render frame: VideoFrame)
}

/// The live preview, like `AVCaptureVideoPreviewLayer`: in GStreamer's own window when a display
/// exists, in a window the application owns (an X11 window, `setWindowHandle`, or a Wayland surface,
/// `setWaylandSurface`), or in a toolkit's view (`renderer`),
/// filling it as `videoGravity` says and mirrored as its connection says. Points of the view convert
/// to the camera's normalized points and back (`captureDevicePointConverted(fromLayerPoint:)`), for
/// tap-to-focus and rect-of-interest.
public final class CaptureVideoPreviewOutput: CaptureOutput, @unchecked Sendable {
    // @unchecked: a subclass of CaptureOutput (a class Swift cannot check); every setting is behind `Locked`.
    private struct Settings {
        var sink: PreviewSink
        var windowHandle: UInt?
        /// The application's Wayland surface and where in it the preview draws (its size is `viewSize`).
        var wayland: WaylandSurface?
        var surfaceOrigin = (x: 0, y: 0)
        var areaApplied: (@Sendable (SurfaceRect) -> Void)?
        var gravity = VideoGravity.resizeAspect
        var viewSize: Size?
        weak var renderer: CapturePreviewRenderer?
        var hasRenderer = false
        /// The frame size and connection of the running branch (set when a configuration is applied).
        var frameSize: Size?
    }
    private let settings: Locked<Settings>
    /// The application's X11 window while the branch draws into it.
    private let x11Window = Locked<X11Window?>(nil)
    private let rendered = Atomic<Int>(0)

    /// A preview output named `name` showing its frames where `sink` says (a window when a display exists, by default).
    public init(name: String = "preview", sink: PreviewSink = .auto) {
        settings = Locked(Settings(sink: sink))
        super.init(name: name)
    }

    /// `preview`.
    public override var kind: String { "preview" }

    /// Where the preview goes when it has neither a window handle nor a renderer: a window, or nowhere.
    public var sink: PreviewSink {
        get { settings[\.sink] }
        set { settings[\.sink] = newValue }
    }

    /// True when a display (X11 or Wayland) is available to show a window.
    public static var hasDisplay: Bool {
        let environment = ProcessInfo.processInfo.environment
        return !(environment["DISPLAY"] ?? "").isEmpty || !(environment["WAYLAND_DISPLAY"] ?? "").isEmpty
    }

    /// Whether this preview shows a window when it runs (its own, or the application's).
    public var showsWindow: Bool {
        let current = settings.value
        if current.windowHandle != nil || current.wayland != nil { return true }
        if current.hasRenderer { return false }
        switch current.sink {
        case .auto: return Self.hasDisplay
        case .window: return true
        case .none: return false
        }
    }

    // MARK: The view

    /// The X11 window the preview draws into, as the application gave it; nil: none.
    public var windowHandle: UInt? { settings[\.windowHandle] }

    /// Makes the preview draw into the application's X11 window `handle` (a window id, as GTK's
    /// `gdk_x11_surface_get_xid`, Xlib or `xwininfo` give it), filling it as `videoGravity` says and
    /// following its size as it changes; nil goes back to `sink`. The window's size is read now (it
    /// becomes `viewSize`); the display is the one `DISPLAY` names. Takes effect at the next commit
    /// (or start); keep the window until the session stops or the preview is removed (a window destroyed
    /// before that ends the preview's drawing with a runtime error; the session goes on). Throws when the
    /// display cannot be opened or has no such window. X11 only: under Wayland, give the application's
    /// surface (`setWaylandSurface`) or use a renderer. A window handle replaces a Wayland surface.
    public func setWindowHandle(_ handle: UInt?) throws(CaptureError) {
        guard let handle else {
            settings.withLock { $0.windowHandle = nil }
            return
        }
        let size = try X11Window.size(of: handle)
        settings.withLock {
            $0.windowHandle = handle
            $0.wayland = nil
            $0.viewSize = size
        }
    }

    /// The application's Wayland surface the preview draws into, as the application gave it; nil: none.
    public var waylandSurface: WaylandSurface? { settings[\.wayland] }

    /// Where in the application's Wayland surface the preview draws, in the surface's coordinates: its
    /// size is `viewSize`. nil without a Wayland surface.
    public var surfaceArea: SurfaceRect? {
        let current = settings.value
        guard current.wayland != nil, let size = current.viewSize else { return nil }
        return SurfaceRect(x: current.surfaceOrigin.x, y: current.surfaceOrigin.y, width: size.width, height: size.height)
    }

    /// Makes the preview draw into the application's Wayland surface, in the rectangle `area` of it
    /// (surface coordinates: a toolkit's client-side decorations put the window's content at an offset,
    /// `SurfaceRect(origin:surfaceOffset:size:)`), filling it as `videoGravity` says; nil goes back to
    /// `sink` (`area` is then ignored). `area`'s size becomes `viewSize`, and the frames are made at that
    /// size.
    ///
    /// Wayland lets nobody but the surface's owner watch its size: when the application lays the view
    /// out again, it says so with `setSurfaceArea(_:)` (or `viewSize`, which keeps the area's corner),
    /// and a running preview follows from its next frame, with nothing restarted. The sink is
    /// waylandsink (`gstreamer1.0-plugins-bad`): it makes a subsurface of `surface` on the application's
    /// display connection (given to it as the `GstWlDisplayHandleContextType` context when it asks) and
    /// draws only there; the application's own drawing and input stay its own. Takes effect at the next
    /// commit (or start); keep the surface and the display alive until the session stops or the preview
    /// is removed. Throws when `area` is empty. A Wayland surface replaces an X11 window handle.
    public func setWaylandSurface(_ surface: WaylandSurface?, area: SurfaceRect) throws(CaptureError) {
        guard let surface else {
            settings.withLock { $0.wayland = nil }
            return
        }
        guard !area.isEmpty else {
            throw .invalidConfiguration(object: "\(description) \(surface)", reason: "the area \(area) it should draw in is empty")
        }
        settings.withLock {
            $0.wayland = surface
            $0.windowHandle = nil
            $0.surfaceOrigin = (area.x, area.y)
            $0.viewSize = area.size
        }
    }

    /// Called on the preview's streaming thread each time it gives the sink a new `surfaceArea` (its first
    /// one, before the first frame, then after each `setSurfaceArea`), with that area. Wayland applies a
    /// subsurface's position with its parent's next commit, so the application commits its surface
    /// then: GTK, a redraw of the window (`gtk_widget_queue_draw`) on GTK's thread; until then the
    /// preview's new size is shown at the old corner. Must return at once.
    public var surfaceAreaApplied: (@Sendable (SurfaceRect) -> Void)? {
        get { settings[\.areaApplied] }
        set { settings[\.areaApplied] = newValue }
    }

    /// Moves or resizes the rectangle of the application's Wayland surface the preview draws in (after
    /// the application laid its view out again), in the surface's coordinates. A running preview
    /// follows from its next frame: the frames are made at the new size, with the gravity, and the sink
    /// draws them at the new place, with nothing restarted. Throws when the preview has no Wayland
    /// surface or `area` is empty.
    public func setSurfaceArea(_ area: SurfaceRect) throws(CaptureError) {
        guard !area.isEmpty else {
            throw .invalidConfiguration(object: description, reason: "the surface area \(area) is empty")
        }
        let hasSurface = settings.withLock { current -> Bool in
            guard current.wayland != nil else { return false }
            current.surfaceOrigin = (area.x, area.y)
            current.viewSize = area.size
            return true
        }
        guard hasSurface else {
            throw .invalidConfiguration(object: description, reason: "a surface area needs a Wayland surface first (setWaylandSurface)")
        }
        applyGeometry()
    }

    /// How the video fills the view, like `AVCaptureVideoPreviewLayer.videoGravity`: `resizeAspect`
    /// (the default: the whole frame, with bars), `resizeAspectFill` (the whole view, cropped) or
    /// `resize` (stretched). Applies to a window handle, a renderer or a `viewSize`; a running preview
    /// changes from its next frame, with nothing restarted.
    public var videoGravity: VideoGravity {
        get { settings[\.gravity] }
        set {
            settings[\.gravity] = newValue
            applyGeometry()
        }
    }

    /// The size of the view the preview fills, in pixels, like the layer's bounds: set by the
    /// application (or by its renderer) when the view is laid out, followed from the window itself for
    /// an X11 window handle, the size of `surfaceArea` for a Wayland surface (a new size keeps the
    /// area's corner; nil or an empty size leaves the area as it is). nil: the preview keeps the
    /// session's size and the sink scales. A running preview changes from its next frame, with nothing
    /// restarted.
    public var viewSize: Size? {
        get { settings[\.viewSize] }
        set {
            let size = newValue.flatMap { $0.width > 0 && $0.height > 0 ? $0 : nil }
            settings.withLock { current in
                if current.wayland != nil && size == nil { return }
                current.viewSize = size
            }
            applyGeometry()
        }
    }

    /// Draws the frames in a toolkit's view instead of a window (held weakly). Adding or removing a
    /// renderer takes effect at the next commit (or start); the renderer may change at any time.
    public var renderer: CapturePreviewRenderer? {
        get { settings[\.renderer] }
        set {
            settings.withLock {
                $0.renderer = newValue
                $0.hasRenderer = newValue != nil
            }
        }
    }

    /// Frames handed to the renderer so far.
    public var renderedFrameCount: Int { rendered.load(ordering: .relaxed) }

    /// Where the video lies in the view and how points convert, for the running branch (nil before a
    /// configuration with this preview was applied, or without a view size).
    public var geometry: PreviewGeometry? {
        let current = settings.value
        guard let frame = current.frameSize, let view = current.viewSize else { return nil }
        return Self.geometry(current, frame: frame, view: view, connection: connection)
    }

    private static func geometry(_ current: Settings, frame: Size, view: Size, connection: ConnectionSettings) -> PreviewGeometry {
        PreviewGeometry(frameSize: frame, viewSize: view, gravity: current.gravity, rotation: connection.rotation, isMirrored: connection.isMirrored)
    }

    /// The camera's normalized point shown at `point` of the view (gravity, rotation and mirroring
    /// undone), for `focusPointOfInterest` and the like; `captureDevicePointConverted(fromLayerPoint:)`.
    /// Without a view size the view is taken to be the frame itself.
    public func captureDevicePointConverted(fromLayerPoint point: ViewPoint) -> NormalizedPoint {
        viewGeometry.devicePoint(fromViewPoint: point)
    }

    /// The view's point showing the camera's normalized `point`; `layerPointConverted(fromCaptureDevicePoint:)`.
    public func layerPointConverted(fromCaptureDevicePoint point: NormalizedPoint) -> ViewPoint {
        viewGeometry.viewPoint(fromDevicePoint: point)
    }

    /// The camera's normalized rectangle a rectangle of the view shows, for a metadata output's
    /// `rectOfInterest`; `metadataOutputRectConverted(fromLayerRect:)`.
    public func metadataOutputRectConverted(fromLayerRect rect: ViewRect) -> NormalizedRect {
        viewGeometry.deviceRect(fromViewRect: rect)
    }

    /// The view's rectangle showing the camera's normalized `rect` (a detected code's bounds);
    /// `layerRectConverted(fromMetadataOutputRect:)`.
    public func layerRectConverted(fromMetadataOutputRect rect: NormalizedRect) -> ViewRect {
        viewGeometry.viewRect(fromDeviceRect: rect)
    }

    /// The geometry, or the frame shown 1:1 when no view size is known.
    private var viewGeometry: PreviewGeometry {
        if let geometry { return geometry }
        let current = settings.value
        let frame = current.frameSize ?? current.viewSize ?? Size(width: 1, height: 1)
        let shown = PreviewGeometry(frameSize: frame, viewSize: frame, rotation: connection.rotation).shownFrameSize
        return Self.geometry(current, frame: frame, view: current.viewSize ?? shown, connection: connection)
    }

    // MARK: Snapshot

    /// What the preview shows now, overlays included, as an image file's bytes (PNG or JPEG) at the
    /// preview's size: the viewfinder as the user sees it, whether or not a window shows it.
    /// Throws `notRunning` before the preview has shown a frame.
    public func snapshot(codec: PhotoCodec = .png) throws(CaptureError) -> [UInt8] {
        guard let sink = handleState.value?.element("\(name)_sink"), let sample = sink.lastSample else {
            throw .notRunning(object: description)
        }
        let image: Sample
        do { image = try sample.converted(to: codec == .png ? "image/png" : "image/jpeg") } catch {
            throw .pipelineBuildFailed(object: "\(description) snapshot", reason: error.description)
        }
        guard let bytes = image.view.buffer?.withBytes({ Array($0) }), !bytes.isEmpty else {
            throw .pipelineBuildFailed(object: "\(description) snapshot", reason: "the encoder gave no bytes")
        }
        return bytes
    }

    // MARK: The branch

    /// The frame size a branch described with `context` receives (before rotation).
    private static func frameSize(_ context: BranchContext) -> Size? {
        context.outputSize ?? context.videoInput?.format?.outputSize
    }

    /// The scaled size (before rotation) and the box of the branch, for the settings and frame size.
    private static func layout(_ current: Settings, frame: Size?, connection: ConnectionSettings) -> (size: Size?, box: (Int, Int, Int, Int)) {
        guard let frame, let view = current.viewSize else { return (frame, (0, 0, 0, 0)) }
        let geometry = Self.geometry(current, frame: frame, view: view, connection: connection)
        let scaled = geometry.scaledSize
        let unrotated = connection.rotation == 90 || connection.rotation == 270 ? Size(width: scaled.height, height: scaled.width) : scaled
        return (unrotated, geometry.box)
    }

    /// videobox's borders, in the order `boxProperties` gives their values.
    private static let boxPropertyNames = ["left", "right", "top", "bottom"]

    private static func boxProperties(_ box: (Int, Int, Int, Int)) -> [(String, String)] {
        Array(zip(boxPropertyNames, ["\(box.0)", "\(box.1)", "\(box.2)", "\(box.3)"]))
    }

    override func describeBranch(_ context: BranchContext) throws(CaptureError) -> BranchSegment? {
        let current = settings.value
        let drawsIntoWindow = current.windowHandle != nil || current.wayland != nil
        let fitsView = drawsIntoWindow || current.hasRenderer || current.viewSize != nil
        if !fitsView && current.sink == .window && !Self.hasDisplay {
            throw .invalidConfiguration(object: description, reason: "sink=window needs a display (DISPLAY or WAYLAND_DISPLAY); use sink=auto to run headless")
        }
        if drawsIntoWindow && current.hasRenderer {
            throw .invalidConfiguration(
                object: description, reason: "a preview draws either into the application's window (or Wayland surface) or through a renderer, not both")
        }
        guard fitsView else {
            var elements = try context.videoHead(leaky: true, maxBuffers: 2)
            if showsWindow {
                elements.append(ElementSpec("autovideosink", name: "\(name)_sink"))
            } else {
                elements.append(ElementSpec("fakesink", name: "\(name)_sink", [("sync", "true"), ("async", "false"), ("enable-last-sample", "true")]))
            }
            return BranchSegment(
                output: name, kind: kind, chains: [Chain(input: context.videoInput?.input, elements: elements)], reportsLateFrames: true)
        }
        // Fitted to a view: scaled (square pixels), turned and mirrored, overlays drawn, then padded with
        // black bars or cropped to exactly the view's size by `videobox`. The scale's caps and the box
        // are live properties: a resize or a gravity change sets them in place.
        let layout = Self.layout(current, frame: Self.frameSize(context), connection: context.connection)
        var elements = try context.videoHead(
            leaky: true, maxBuffers: 2, size: layout.size, format: current.hasRenderer ? "BGRA" : nil, squarePixels: true)
        elements.append(ElementSpec("videobox", name: "\(name)_box", live: Self.boxProperties(layout.box)))
        if !current.hasRenderer {
            // The box keeps the branch's format (a sink's format, BGRx for ximagesink, comes from this
            // conversion): left to convert itself, videobox took 64 % of a window preview's CPU.
            elements.append(ElementSpec("videoconvert", name: "\(name)_sinkconvert"))
        }
        if current.windowHandle != nil {
            // handle-events=false: the application's window keeps its own input events.
            elements.append(ElementSpec("ximagesink", name: "\(name)_sink", [("handle-events", "false"), ("enable-last-sample", "true")]))
        } else if current.wayland != nil {
            // A subsurface of the application's surface, on its display connection (`provideContext`);
            // the frames are already the area's size, so the sink's own centering changes nothing.
            elements.append(ElementSpec("waylandsink", name: "\(name)_sink", [("enable-last-sample", "true")]))
        } else if current.hasRenderer {
            elements.append(
                ElementSpec(
                    "appsink", name: "\(name)_sink",
                    [("sync", "false"), ("async", "false"), ("max-buffers", "1"), ("drop", "true"), ("wait-on-eos", "false"), ("enable-last-sample", "true")]))
        } else if showsWindow {
            elements.append(ElementSpec("autovideosink", name: "\(name)_sink"))
        } else {
            elements.append(ElementSpec("fakesink", name: "\(name)_sink", [("sync", "true"), ("async", "false"), ("enable-last-sample", "true")]))
        }
        return BranchSegment(
            output: name, kind: kind, chains: [Chain(input: context.videoInput?.input, elements: elements)], reportsLateFrames: true)
    }

    override func configurationApplied(_ context: BranchContext?) {
        settings.withLock { $0.frameSize = context.flatMap(Self.frameSize) }
        // A view size set while the configuration was applied found no frame size to fit: whichever of
        // the size, the frame size and the first frame comes last writes the geometry.
        applyGeometry()
    }

    override func attach(_ handle: BranchHandle) {
        super.attach(handle)
        let current = settings.value
        guard let sink = handle.element("\(name)_sink") else { return }
        if let windowHandle = current.windowHandle {
            X11Window.tolerateLoss(of: windowHandle)
            sink.setWindowHandle(windowHandle)
            watchWindow(windowHandle, sink: sink)
        } else if current.hasRenderer {
            sink.setAppSinkCallbacks(onSample: { [weak self] sample in self?.render(sample) })
        }
        // The view's geometry is written into the running branch only once its first frame reached
        // the sink: caps changed while the pipeline negotiates for the first time can leave the source
        // with caps nothing downstream takes (not-negotiated: the session stopped when a GTK view got
        // its size while the session was starting). A size or gravity set before that, while the branch
        // was built and negotiated, is written then.
        let branch = ObjectIdentifier(handle)
        handle.element("\(name)_queue")?.staticPad("src")?.addProbe(.buffer) { [weak self, weak handle] _, _ in
            if let self, let handle { self.writeGeometry(into: handle) }
            return .ok
        }
        sink.staticPad("sink")?.addProbe(.buffer) { [weak self] _, _ in
            self?.geometryQueue.async { [weak self] in
                // Only the branch attached now (a detached one's first frame changes nothing).
                guard let self, let attached = self.handleState.value, ObjectIdentifier(attached) == branch else { return }
                self.flowingBranch.value = branch
                self.applyGeometry()
            }
            return .remove
        }
    }

    override func detach() {
        x11Window.withLock { window in
            window?.stop()
            window = nil
        }
        // The next branch gets the geometry written again, whatever the last one had.
        geometryApplied.withLock { $0 = nil }
        flowingBranch.value = nil
        super.detach()
    }

    /// The sink asks for a window (ximagesink when its caps arrive, waylandsink with its first frame):
    /// the application's window, if there is one. A Wayland surface also needs the rectangle to draw
    /// in before that frame (waylandsink refuses a frame without one: "Window has no size set").
    override func prepareWindow(_ sink: Element) {
        let current = settings.value
        if let windowHandle = current.windowHandle {
            sink.setWindowHandle(windowHandle)
        } else if let surface = current.wayland, let area = surfaceArea {
            sink.setWindowHandle(UInt(bitPattern: surface.surface))
            sink.setRenderRectangle(x: area.x, y: area.y, width: area.width, height: area.height)
            current.areaApplied?(area)
        }
    }

    /// waylandsink asks for the display connection as it goes to READY (or when it is given a surface
    /// before that): the application's, the one its surface was made on. Unanswered, it would open a
    /// connection of its own, on which the application's surface does not exist.
    override func provideContext(_ type: String, to element: Element) {
        guard type == Self.waylandDisplayContext, let surface = settings[\.wayland] else { return }
        element.setContext(type, field: "display", pointer: surface.display)
    }

    /// The context type waylandsink asks for and its field (GStreamer 1.22,
    /// gst-libs/gst/wayland/gstwlcontext.h: `GST_WL_DISPLAY_HANDLE_CONTEXT_TYPE`, a pointer in `display`).
    static let waylandDisplayContext = "GstWlDisplayHandleContextType"

    /// Follows the application's window's size while the branch runs. When the window is destroyed
    /// under a running session, the sink stops drawing (its frames are dropped before it) and the
    /// session goes on, reporting a runtime error: recordings and the other outputs are not affected.
    private func watchWindow(_ windowHandle: UInt, sink: Element) {
        do {
            let watched = try X11Window(handle: windowHandle)
            if let size = try? watched.currentSize(), size != viewSize { viewSize = size }
            watched.watch(
                resized: { [weak self] size in self?.viewSize = size },
                gone: { [weak self] in
                    sink.staticPad("sink")?.addProbe(.buffer) { _, _ in .drop }
                    guard let self else { return }
                    let reason = "its window \(X11Window.hex(windowHandle)) was destroyed while the session ran"
                    self.handleState.value?.post(.runtimeError(CaptureError.invalidConfiguration(object: self.description, reason: reason)))
                })
            x11Window.withLock { $0 = watched }
        } catch {
            handleState.value?.post(.runtimeError(error))
        }
    }

    /// Sets the running branch's scale and box for the current settings (a resize, a gravity change).
    private func applyGeometry() {
        // One at a time, each reading the settings inside: two callers (the application's thread
        // resizing, the owner's attaching the branch) would otherwise interleave their property writes,
        // and the one that read the older settings could write last (frames stayed at the session's size).
        geometryApplied.withLock { applied in
            guard let handle = handleState.value, flowingBranch.value == ObjectIdentifier(handle) else { return }
            let current = settings.value
            guard current.windowHandle != nil || current.wayland != nil || current.hasRenderer || current.viewSize != nil else { return }
            let layout = Self.layout(current, frame: current.frameSize, connection: connection)
            guard let size = layout.size else { return }
            let caps = BranchContext.scaleCaps(size: size, format: current.hasRenderer ? "BGRA" : nil, squarePixels: true)
            let box = Self.boxProperties(layout.box)
            let area =
                current.wayland != nil
                ? current.viewSize.map { SurfaceRect(x: current.surfaceOrigin.x, y: current.surfaceOrigin.y, width: $0.width, height: $0.height) } : nil
            let values = AppliedGeometry(branch: ObjectIdentifier(handle), caps: caps, box: box.map(\.1), area: area)
            guard values != applied else { return }
            // Written by the branch's own streaming thread, before its next frame (`writeGeometry`).
            pendingGeometry.value = values
            applied = values
            if current.windowHandle != nil { handle.element("\(name)_sink")?.exposeWindow() }
        }
    }

    /// On the branch's streaming thread, before a frame enters the scale: writes the newest geometry
    /// `applyGeometry` asked for into the branch. The caps filter and the box then change between two
    /// frames of the thread that negotiates with them. Written from another thread, a change could land
    /// while that thread negotiated: under load the scale's upstream conversion found no caps to agree
    /// on and the session stopped (not-negotiated), 9 starts in 30 with sizes given while it started.
    private func writeGeometry(into handle: BranchHandle) {
        let taken = pendingGeometry.withLock { pending in
            defer { pending = nil }
            return pending
        }
        guard let values = taken else { return }
        guard values.branch == ObjectIdentifier(handle) else { return }
        do throws(GStreamerError) {
            try handle.element("\(name)_size")?.set("caps", values.caps)
            if let element = handle.element("\(name)_box") {
                for (property, value) in zip(Self.boxPropertyNames, values.box) { try element.set(property, value) }
            }
            // waylandsink draws the frames of the new size at the new place from this frame on (it
            // moves and sizes its subsurface at once; the application's next commit places it).
            if let area = values.area, let sink = handle.element("\(name)_sink") {
                sink.setRenderRectangle(x: area.x, y: area.y, width: area.width, height: area.height)
                settings[\.areaApplied]?(area)
            }
        } catch {
            handle.post(.runtimeError(CaptureError(error, object: description)))
        }
    }

    /// What `applyGeometry` last set on which branch.
    private struct AppliedGeometry: Equatable {
        var branch: ObjectIdentifier
        var caps: String
        var box: [String]
        /// The rectangle of the application's Wayland surface, for waylandsink.
        var area: SurfaceRect?
    }
    private let geometryApplied = Locked<AppliedGeometry?>(nil)
    /// The geometry waiting for the branch's next frame (`writeGeometry`).
    private let pendingGeometry = Locked<AppliedGeometry?>(nil)
    /// The branch whose first frame reached the sink (its caps were negotiated): geometry is written
    /// into that branch only.
    private let flowingBranch = Locked<ObjectIdentifier?>(nil)
    /// Where a branch's first frame hands the geometry over (not the streaming thread).
    private let geometryQueue = DispatchQueue(label: "capture.preview-geometry")

    /// Runs on the streaming thread: maps the frame (no copy) and hands it to the renderer.
    private func render(_ sample: SampleView) {
        guard let renderer = settings[\.renderer], let buffer = sample.buffer, let layout = sample.videoLayout,
            let mapped = MappedBuffer(buffer)
        else { return }
        let sequence = rendered.add(1, ordering: .relaxed).oldValue
        renderer.previewOutput(self, render: VideoFrame(mapped: mapped, layout: layout, timestamp: Double(buffer.pts ?? 0) / 1e9, sequence: sequence))
    }
}
