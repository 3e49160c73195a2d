import CGStreamer

extension Element {
    /// True when the element draws into a window an application gives it (`GstVideoOverlay`:
    /// ximagesink, xvimagesink, glimagesink).
    public var drawsIntoWindows: Bool {
        g_type_check_instance_is_a(UnsafeMutableRawPointer(element).assumingMemoryBound(to: GTypeInstance.self), gst_video_overlay_get_type()) != 0
    }

    /// Makes the element draw into the native window `handle` (an X11 window id) instead of a window
    /// of its own. Call it before the element needs a window (when it posts `prepare-window-handle`,
    /// or before READY). Returns false when the element cannot draw into a given window.
    /// The corresponding C function is `gst_video_overlay_set_window_handle`.
    @discardableResult
    public func setWindowHandle(_ handle: UInt) -> Bool {
        guard drawsIntoWindows else { return false }
        gst_video_overlay_set_window_handle(OpaquePointer(element), guintptr(handle))
        return true
    }

    /// Asks the element to draw its last frame again (after the window was uncovered or resized).
    /// The corresponding C function is `gst_video_overlay_expose`.
    public func exposeWindow() {
        guard drawsIntoWindows else { return }
        gst_video_overlay_expose(OpaquePointer(element))
    }
}

extension Message {
    /// True for the element message a video sink posts when it needs a window to draw into
    /// (`prepare-window-handle`); the application's answer is `Element.setWindowHandle`.
    /// The corresponding C function is `gst_is_video_overlay_prepare_window_handle_message`.
    public var asksForWindowHandle: Bool {
        gst_is_video_overlay_prepare_window_handle_message(message) != 0
    }
}

extension Message {
    /// The element that posted the message (a new reference), or nil when an object that is not an
    /// element posted it (a bus, a pad).
    public var sourceElement: Element? {
        guard let source = message.pointee.src,
            g_type_check_instance_is_a(UnsafeMutableRawPointer(source).assumingMemoryBound(to: GTypeInstance.self), gst_element_get_type()) != 0
        else { return nil }
        return Element.borrow(UnsafeMutableRawPointer(source).assumingMemoryBound(to: GstElement.self))
    }
}

extension Element {
    /// Tells the element where in its window to draw, in the window's own coordinates (for a Wayland
    /// surface: surface-local, logical pixels). waylandsink needs it once it has a window and before
    /// its first frame, and follows a new one at once; X11 sinks fill their whole window without it.
    /// Returns false when the element does not draw into a given window.
    /// The corresponding C function is `gst_video_overlay_set_render_rectangle`.
    @discardableResult
    public func setRenderRectangle(x: Int, y: Int, width: Int, height: Int) -> Bool {
        guard drawsIntoWindows else { return false }
        return gst_video_overlay_set_render_rectangle(OpaquePointer(element), Int32(x), Int32(y), Int32(width), Int32(height)) != 0
    }

    /// Gives the element a context of `type` whose structure holds one pointer, `field` (an
    /// application's native display for a sink: waylandsink asks for `GstWlDisplayHandleContextType`
    /// with its `wl_display*` in `display`). The context is persistent: it stays across state changes.
    /// The element keeps no reference to what `pointer` points at; the caller keeps it alive.
    /// The corresponding C functions are `gst_context_new`, `gst_structure_set_value` and
    /// `gst_element_set_context`.
    public func setContext(_ type: String, field: String, pointer: UnsafeMutableRawPointer) {
        guard let context = gst_context_new(type, 1) else { return }
        var value = GValue()
        g_value_init(&value, g_type_from_name("gpointer"))
        g_value_set_pointer(&value, pointer)
        gst_structure_set_value(gst_context_writable_structure(context), field, &value)
        g_value_unset(&value)
        gst_element_set_context(element, context)
        gst_mini_object_unref(UnsafeMutableRawPointer(context).assumingMemoryBound(to: GstMiniObject.self))
    }
}

extension Message {
    /// The context type an element asks the application for (`need-context`: waylandsink's
    /// `GstWlDisplayHandleContextType`, GL's `gst.gl.GLDisplay` ...), or nil for any other message.
    /// The application answers on the asking thread with `Element.setContext` on `sourceElement`.
    /// The corresponding C function is `gst_message_parse_context_type`.
    public var neededContextType: String? {
        guard message.pointee.type == GST_MESSAGE_NEED_CONTEXT else { return nil }
        var type: UnsafePointer<gchar>? = nil
        guard gst_message_parse_context_type(message, &type) != 0, let type else { return nil }
        return String(cString: type)
    }
}
