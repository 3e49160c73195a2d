import CGtk
import Foundation

// A small, typed layer over the parts of GTK 4 a camera app needs: hops onto GTK's main thread,
// signals and shortcuts with Swift closures, timers and tick callbacks, and widget helpers.
//
// Threading: GTK runs on the process's main thread, inside its own main loop. Swift's MainActor
// executor on Linux is the main dispatch queue, which GTK's loop does not drain, so this layer hops
// with an idle source on GTK's main context (`GTK.invoke`) rather than `Task { @MainActor in }`, and every closure
// it calls back runs on the main thread, checked with `MainActor.assumeIsolated`. The C callbacks are
// file-scope, non-isolated functions: GLib may call them from any thread (GTK.invoke's from a
// GStreamer streaming thread).

/// A Swift value kept alive behind a C `gpointer` (released by the C side's destroy notify).
final class Box<Value> {
    let value: Value
    init(_ value: Value) { self.value = value }

    /// A retained pointer to a new box holding `value`.
    static func retained(_ value: Value) -> gpointer { Unmanaged.passRetained(Box(value)).toOpaque() }

    /// The value behind a pointer `retained` gave.
    static func value(_ pointer: gpointer?) -> Value { Unmanaged<Box<Value>>.fromOpaque(pointer!).takeUnretainedValue().value }
}

/// Releases a box handed to GLib (its `GDestroyNotify`).
let releaseBox: GDestroyNotify = { pointer in if let pointer { Unmanaged<AnyObject>.fromOpaque(pointer).release() } }

/// A GLib closure-notify that releases a box (for `g_signal_connect_data`).
private let releaseSignalBox: GClosureNotify = { data, _ in if let data { Unmanaged<AnyObject>.fromOpaque(data).release() } }

/// The closure types the C callbacks call.
typealias MainAction = @MainActor () -> Void
typealias MainCheck = @MainActor () -> Bool
typealias PointAction = @MainActor (_ presses: Int, _ x: Double, _ y: Double) -> Void
typealias DragAction = @MainActor (_ phase: DragPhase, _ x: Double, _ y: Double) -> Void

private let invokeCallback: GSourceFunc = { data in
    let action = Box<@Sendable @MainActor () -> Void>.value(data)
    MainActor.assumeIsolated { action() }
    return 0  // G_SOURCE_REMOVE
}

private let repeatingCallback: GSourceFunc = { data in
    let action = Box<MainCheck>.value(data)
    return MainActor.assumeIsolated { action() } ? 1 : 0
}

private let signalCallback: @convention(c) (gpointer?, gpointer?) -> Void = { _, data in
    let action = Box<MainAction>.value(data)
    MainActor.assumeIsolated { action() }
}

private let notifyCallback: @convention(c) (gpointer?, gpointer?, gpointer?) -> Void = { _, _, data in
    let action = Box<MainAction>.value(data)
    MainActor.assumeIsolated { action() }
}

private let pressedCallback: @convention(c) (gpointer?, gint, gdouble, gdouble, gpointer?) -> Void = { _, presses, x, y, data in
    let action = Box<PointAction>.value(data)
    MainActor.assumeIsolated { action(Int(presses), x, y) }
}

private let dragBeginCallback: @convention(c) (gpointer?, gdouble, gdouble, gpointer?) -> Void = { _, x, y, data in
    let action = Box<DragAction>.value(data)
    MainActor.assumeIsolated { action(.began, x, y) }
}

private let dragUpdateCallback: @convention(c) (gpointer?, gdouble, gdouble, gpointer?) -> Void = { _, x, y, data in
    let action = Box<DragAction>.value(data)
    MainActor.assumeIsolated { action(.moved, x, y) }
}

private let dragEndCallback: @convention(c) (gpointer?, gdouble, gdouble, gpointer?) -> Void = { _, x, y, data in
    let action = Box<DragAction>.value(data)
    MainActor.assumeIsolated { action(.ended, x, y) }
}

private let shortcutCallback: GtkShortcutFunc = { _, _, data in
    let action = Box<MainCheck>.value(data)
    return MainActor.assumeIsolated { action() } ? 1 : 0
}

private let tickCallback: GtkTickCallback = { _, _, data in
    let action = Box<MainCheck>.value(data)
    return MainActor.assumeIsolated { action() } ? 1 : 0
}

private let drawCallback: GtkDrawingAreaDrawFunc = { _, cairo, width, height, data in
    guard let cairo else { return }
    nonisolated(unsafe) let context = cairo  // the GTK thread's own drawing context
    let draw = Box<@MainActor (OpaquePointer, Int, Int) -> Void>.value(data)
    MainActor.assumeIsolated { draw(context, Int(width), Int(height)) }
}

/// Where a drag is.
public enum DragPhase: Sendable {
    /// The button went down at the start point.
    case began
    /// The pointer moved; the point is the offset from the start.
    case moved
    /// The button went up; the point is the offset from the start.
    case ended
}

/// GTK's main thread and loop.
public enum GTK {
    /// Runs `body` on GTK's main thread, from any thread, at the loop's next turn (before redraws).
    ///
    /// An idle source on the default main context, not `g_main_context_invoke`: that one runs the
    /// function in the calling thread whenever it can acquire the context, which it can whenever the
    /// main thread is between two iterations of the loop (seen: a session's start finishing on a
    /// pool thread while the app was still building its window ran the callback there).
    public static func invoke(_ body: @escaping @Sendable @MainActor () -> Void) {
        g_idle_add_full(0, invokeCallback, Box<@Sendable @MainActor () -> Void>.retained(body), releaseBox)
    }

    /// Calls `body` every `milliseconds` on the main thread while it returns true; returns the source id.
    @discardableResult
    @MainActor public static func every(milliseconds: Int, _ body: @escaping @MainActor () -> Bool) -> UInt32 {
        g_timeout_add_full(0, guint(milliseconds), repeatingCallback, Box<MainCheck>.retained(body), releaseBox)
    }

    /// Stops a timer `every` started.
    @MainActor public static func cancel(_ source: UInt32) { g_source_remove(source) }

    /// Runs GTK's main loop until `isDone` says so (checked after each event).
    @MainActor public static func run(until isDone: @MainActor () -> Bool) {
        while !isDone() { g_main_context_iteration(nil, 1) }
    }

    /// Runs `work` off the main thread (a detached task), then `then` with its result on GTK's main
    /// thread: how a GTK app calls the session's async API.
    public static func perform<Value: Sendable, Failure: Error>(
        _ work: @escaping @Sendable () async throws(Failure) -> Value, then: @escaping @Sendable @MainActor (Result<Value, Failure>) -> Void
    ) {
        Task.detached {
            let result: Result<Value, Failure>
            do throws(Failure) { result = .success(try await work()) } catch { result = .failure(error) }
            invoke { then(result) }
        }
    }

    /// Seconds on the monotonic clock (what frame arrivals are stamped with).
    public static func monotonicSeconds() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }
}

/// A GTK widget, by its pointer: used on the main thread only.
@MainActor
public struct Widget {
    /// The GtkWidget.
    public let pointer: UnsafeMutablePointer<GtkWidget>

    /// Wraps a widget pointer (a GtkWidget or a subclass).
    public init<T>(_ pointer: UnsafeMutablePointer<T>) { self.pointer = UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: GtkWidget.self) }
    /// Wraps a widget pointer of an opaque type (GtkPicture, GtkBox ...).
    public init(_ pointer: OpaquePointer) { self.pointer = UnsafeMutablePointer<GtkWidget>(pointer) }

    /// The widget as another GTK type's pointer (for the type's own functions).
    public func cast<T>(_: T.Type = T.self) -> UnsafeMutablePointer<T> { UnsafeMutableRawPointer(pointer).assumingMemoryBound(to: T.self) }
    /// The widget as an opaque pointer (for the functions of types Swift sees as opaque).
    public var opaque: OpaquePointer { OpaquePointer(pointer) }
    /// The widget as a gpointer (for GObject functions).
    public var object: gpointer { UnsafeMutableRawPointer(pointer) }

    // MARK: Properties

    /// Whether the widget is shown.
    public var isVisible: Bool {
        get { gtk_widget_get_visible(pointer) != 0 }
        nonmutating set { gtk_widget_set_visible(pointer, newValue ? 1 : 0) }
    }
    /// Whether the widget reacts to input.
    public var isSensitive: Bool {
        get { gtk_widget_get_sensitive(pointer) != 0 }
        nonmutating set { gtk_widget_set_sensitive(pointer, newValue ? 1 : 0) }
    }
    /// The tooltip.
    public func tooltip(_ text: String) -> Widget {
        gtk_widget_set_tooltip_text(pointer, text)
        return self
    }
    /// Adds a CSS class.
    @discardableResult
    public func style(_ names: String...) -> Widget {
        for name in names { gtk_widget_add_css_class(pointer, name) }
        return self
    }
    /// Removes a CSS class.
    public func unstyle(_ name: String) { gtk_widget_remove_css_class(pointer, name) }
    /// Where the widget sits in a larger allocation.
    @discardableResult
    public func align(_ horizontal: GtkAlign, _ vertical: GtkAlign) -> Widget {
        gtk_widget_set_halign(pointer, horizontal)
        gtk_widget_set_valign(pointer, vertical)
        return self
    }
    /// Whether the widget takes extra space.
    @discardableResult
    public func expand(_ horizontal: Bool = true, _ vertical: Bool = true) -> Widget {
        gtk_widget_set_hexpand(pointer, horizontal ? 1 : 0)
        gtk_widget_set_vexpand(pointer, vertical ? 1 : 0)
        return self
    }
    /// Margins on every side.
    @discardableResult
    public func margin(_ pixels: Int) -> Widget {
        gtk_widget_set_margin_start(pointer, gint(pixels))
        gtk_widget_set_margin_end(pointer, gint(pixels))
        gtk_widget_set_margin_top(pointer, gint(pixels))
        gtk_widget_set_margin_bottom(pointer, gint(pixels))
        return self
    }
    /// A minimum size.
    @discardableResult
    public func size(_ width: Int, _ height: Int) -> Widget {
        gtk_widget_set_size_request(pointer, gint(width), gint(height))
        return self
    }
    /// The allocated width and height, in logical pixels.
    public var allocatedSize: (width: Int, height: Int) { (Int(gtk_widget_get_width(pointer)), Int(gtk_widget_get_height(pointer))) }
    /// Device pixels per logical pixel.
    public var scaleFactor: Int { Int(gtk_widget_get_scale_factor(pointer)) }
    /// Redraws the widget.
    public func redraw() { gtk_widget_queue_draw(pointer) }
    /// Whether the widget can take the keyboard focus (off: keys go to the window's shortcuts).
    public func focusable(_ on: Bool) -> Widget {
        gtk_widget_set_focusable(pointer, on ? 1 : 0)
        gtk_widget_set_focus_on_click(pointer, on ? 1 : 0)
        return self
    }

    // MARK: Signals and gestures

    /// Calls `action` on a signal whose handler takes only the instance (`clicked`, `toggled`,
    /// `value-changed`, `close-request` handlers returning nothing ...).
    @discardableResult
    public func on(_ signal: String, _ action: @escaping @MainActor () -> Void) -> Widget {
        GObject.connect(object, signal, action)
        return self
    }

    /// Calls `action` with the press count and the point (widget coordinates) on a primary click.
    @discardableResult
    public func onClick(_ action: @escaping @MainActor (_ presses: Int, _ x: Double, _ y: Double) -> Void) -> Widget {
        let gesture = gtk_gesture_click_new()!
        g_signal_connect_data(
            UnsafeMutableRawPointer(gesture), "pressed", unsafeBitCast(pressedCallback, to: GCallback.self), Box<PointAction>.retained(action),
            releaseSignalBox, GConnectFlags(0))
        gtk_widget_add_controller(pointer, gesture)
        return self
    }

    /// Calls `action` as a primary-button drag begins (the start point), moves and ends (offsets).
    @discardableResult
    public func onDrag(_ action: @escaping @MainActor (_ phase: DragPhase, _ x: Double, _ y: Double) -> Void) -> Widget {
        let gesture = gtk_gesture_drag_new()!
        for (signal, callback) in [("drag-begin", dragBeginCallback), ("drag-update", dragUpdateCallback), ("drag-end", dragEndCallback)] {
            g_signal_connect_data(
                UnsafeMutableRawPointer(gesture), signal, unsafeBitCast(callback, to: GCallback.self), Box<DragAction>.retained(action),
                releaseSignalBox, GConnectFlags(0))
        }
        gtk_widget_add_controller(pointer, gesture)
        return self
    }

    /// Calls `body` before each frame the widget's frame clock paints, while it returns true.
    public func onTick(_ body: @escaping @MainActor () -> Bool) {
        gtk_widget_add_tick_callback(pointer, tickCallback, Box<MainCheck>.retained(body), releaseBox)
    }
}

/// GObject helpers.
public enum GObject {
    /// Connects a signal whose handler takes only the instance (and the user data).
    @MainActor public static func connect(_ object: gpointer, _ signal: String, _ action: @escaping @MainActor () -> Void) {
        g_signal_connect_data(
            object, signal, unsafeBitCast(signalCallback, to: GCallback.self), Box<MainAction>.retained(action), releaseSignalBox, GConnectFlags(0))
    }

    /// Calls `action` when a property changes (`notify::NAME`).
    @MainActor public static func onNotify(_ object: gpointer, _ property: String, _ action: @escaping @MainActor () -> Void) {
        g_signal_connect_data(
            object, "notify::\(property)", unsafeBitCast(notifyCallback, to: GCallback.self), Box<MainAction>.retained(action), releaseSignalBox,
            GConnectFlags(0))
    }
}

// MARK: Widgets

/// Builders for the widgets the app is made of.
@MainActor
public enum Make {
    /// A label.
    public static func label(_ text: String, style: String? = nil) -> Widget {
        let label = Widget(gtk_label_new(text)!)
        if let style { label.style(style) }
        return label
    }

    /// Changes a label's text.
    public static func setText(_ label: Widget, _ text: String) { gtk_label_set_text(label.opaque, text) }

    /// A button with a text (or an icon name when `icon` is true), calling `action` when clicked.
    public static func button(_ text: String, icon: Bool = false, _ action: @escaping @MainActor () -> Void) -> Widget {
        let button = Widget(icon ? gtk_button_new_from_icon_name(text)! : gtk_button_new_with_label(text)!)
        // Buttons do not take the focus: the window's shortcuts keep every key.
        return button.focusable(false).on("clicked", action)
    }

    /// Changes a button's label.
    public static func setButtonText(_ button: Widget, _ text: String) { gtk_button_set_label(button.cast(GtkButton.self), text) }

    /// A horizontal or vertical box of `children`.
    public static func box(_ orientation: GtkOrientation, spacing: Int = 6, _ children: [Widget]) -> Widget {
        let box = Widget(gtk_box_new(orientation, gint(spacing))!)
        for child in children { gtk_box_append(box.cast(), child.pointer) }
        return box
    }

    /// Adds a child at the end of a box.
    public static func append(_ box: Widget, _ child: Widget) { gtk_box_append(box.cast(), child.pointer) }

    /// An overlay: `child` with `overlays` on top of it.
    public static func overlay(_ child: Widget, _ overlays: [Widget]) -> Widget {
        let overlay = Widget(gtk_overlay_new()!)
        gtk_overlay_set_child(overlay.opaque, child.pointer)
        for over in overlays { gtk_overlay_add_overlay(overlay.opaque, over.pointer) }
        return overlay
    }

    /// A picture of a file (scaled to fit, aspect kept).
    public static func picture(file: String? = nil) -> Widget {
        let picture = Widget(gtk_picture_new()!)
        gtk_picture_set_can_shrink(picture.opaque, 1)
        gtk_picture_set_content_fit(picture.opaque, GTK_CONTENT_FIT_CONTAIN)
        if let file { setPicture(picture, file: file) }
        return picture
    }

    /// A video file in a picture (it shrinks with the window, unlike GtkVideo, whose minimum size is
    /// the video's) with GTK's media controls under it; the stream plays once prepared when
    /// `autoplay`. Returns the box and the stream (GTK's GStreamer media backend).
    public static func video(file: String, autoplay: Bool) -> (widget: Widget, stream: UnsafeMutablePointer<GtkMediaStream>) {
        let stream = gtk_media_file_new_for_filename(file)!
        let picture = Widget(gtk_picture_new_for_paintable(OpaquePointer(stream))!).expand()
        gtk_picture_set_can_shrink(picture.opaque, 1)
        gtk_picture_set_content_fit(picture.opaque, GTK_CONTENT_FIT_CONTAIN)
        let controls = Widget(gtk_media_controls_new(stream)!)
        if autoplay { GObject.onNotify(stream, "prepared") { gtk_media_stream_play(stream) } }
        g_object_unref(stream)  // the picture and the controls hold it
        return (box(GTK_ORIENTATION_VERTICAL, spacing: 0, [picture, controls]).expand(), stream)
    }

    /// Shows a file in a picture.
    public static func setPicture(_ picture: Widget, file: String) { gtk_picture_set_filename(picture.opaque, file) }

    /// A thumbnail: an image fitted (aspect kept) into a `size` by `size` square.
    public static func thumbnail(size: Int) -> Widget {
        let image = Widget(gtk_image_new()!)
        gtk_image_set_pixel_size(image.opaque, gint(size))
        return image
    }

    /// Shows a file in a thumbnail.
    public static func setThumbnail(_ thumbnail: Widget, file: String) { gtk_image_set_from_file(thumbnail.opaque, file) }

    /// A scrolled window around `child`.
    public static func scrolled(_ child: Widget) -> Widget {
        let scrolled = Widget(gtk_scrolled_window_new()!)
        gtk_scrolled_window_set_child(scrolled.opaque, child.pointer)
        return scrolled.expand()
    }

    /// Adds a named page to a stack (`gtk_stack_new`): one page is shown at a time.
    public static func addPage(_ stack: Widget, _ name: String, _ page: Widget) { gtk_stack_add_named(stack.opaque, page.pointer, name) }

    /// Shows a stack's page.
    public static func show(_ stack: Widget, page: String) { gtk_stack_set_visible_child_name(stack.opaque, page) }

    /// A horizontal slider from `minimum` to `maximum`.
    public static func slider(_ minimum: Double, _ maximum: Double, step: Double, _ changed: @escaping @MainActor () -> Void) -> Widget {
        let scale = Widget(gtk_scale_new_with_range(GTK_ORIENTATION_HORIZONTAL, minimum, maximum, step)!)
        gtk_scale_set_digits(scale.cast(), 2)
        gtk_scale_set_draw_value(scale.cast(), 1)
        return scale.focusable(false).expand(true, false).on("value-changed", changed)
    }

    /// A slider's value.
    public static func value(_ slider: Widget) -> Double { gtk_range_get_value(slider.cast(GtkRange.self)) }
    /// Sets a slider's value and range.
    public static func setValue(_ slider: Widget, _ value: Double, range: ClosedRange<Double>? = nil) {
        if let range { gtk_range_set_range(slider.cast(GtkRange.self), range.lowerBound, range.upperBound) }
        gtk_range_set_value(slider.cast(GtkRange.self), value)
    }

    /// A drawing area drawn by `draw` (a cairo context, the width and the height).
    public static func drawing(_ draw: @escaping @MainActor (_ cairo: OpaquePointer, _ width: Int, _ height: Int) -> Void) -> Widget {
        let area = Widget(gtk_drawing_area_new()!)
        gtk_drawing_area_set_draw_func(
            area.cast(), drawCallback, Box<@MainActor (OpaquePointer, Int, Int) -> Void>.retained(draw), releaseBox)
        return area
    }

    /// Loads CSS for the whole display.
    public static func css(_ text: String) {
        let provider = gtk_css_provider_new()!
        gtk_css_provider_load_from_data(provider, text, -1)
        gtk_style_context_add_provider_for_display(gdk_display_get_default(), OpaquePointer(provider), guint(GTK_STYLE_PROVIDER_PRIORITY_APPLICATION))
    }
}

// MARK: Window and shortcuts

/// A top-level window with keyboard shortcuts.
@MainActor
public final class Window {
    /// The window widget.
    public let widget: Widget
    private let shortcuts: OpaquePointer
    /// True once the window was closed.
    public private(set) var isClosed = false

    /// A window titled `title`, `width` by `height` logical pixels.
    public init(title: String, width: Int, height: Int) {
        widget = Widget(gtk_window_new()!)
        gtk_window_set_title(widget.cast(), title)
        gtk_window_set_default_size(widget.cast(), gint(width), gint(height))
        // Shortcuts in the capture phase: they fire before any focused widget sees the key.
        shortcuts = gtk_shortcut_controller_new()!
        gtk_event_controller_set_propagation_phase(shortcuts, GTK_PHASE_CAPTURE)
        gtk_widget_add_controller(widget.pointer, shortcuts)
        widget.on("destroy") { [weak self] in self?.isClosed = true }
    }

    /// Sets the window's content.
    public func setChild(_ child: Widget) { gtk_window_set_child(widget.cast(), child.pointer) }
    /// Shows the window.
    public func present() { gtk_window_present(widget.cast()) }
    /// Closes the window.
    public func close() { gtk_window_destroy(widget.cast()) }

    /// Calls `action` when `trigger` (GTK's syntax: `space`, `<Control>q`, `F1` ...) is pressed; the
    /// action returns false to let the key go on to the focused widget.
    public func shortcut(_ trigger: String, _ action: @escaping @MainActor () -> Bool) {
        guard let parsed = gtk_shortcut_trigger_parse_string(trigger) else {
            fatalError("not a GTK shortcut trigger: \(trigger)")
        }
        let callback = gtk_callback_action_new(shortcutCallback, Box<MainCheck>.retained(action), releaseBox)
        gtk_shortcut_controller_add_shortcut(shortcuts, gtk_shortcut_new(parsed, callback))
    }
}
