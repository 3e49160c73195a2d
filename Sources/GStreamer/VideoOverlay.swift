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
