import Foundation

/// An application's Wayland surface, as a preview draws into it: the surface (a `struct wl_surface *`)
/// and the display connection it was made on (a `struct wl_display *`), both the application's own,
/// as a toolkit gives them (GTK 4: `gdk_wayland_surface_get_wl_surface` and
/// `gdk_wayland_display_get_wl_display`).
///
/// The preview never owns them: waylandsink makes a subsurface of the surface, on its own event queue
/// of the same connection, so the application's event loop is left alone. Keep both alive until the
/// session stops or the preview is removed.
public struct WaylandSurface: Hashable, @unchecked Sendable, CustomStringConvertible {
    // @unchecked: two addresses, never dereferenced here; libwayland-client's proxies may be used from
    // any thread (waylandsink sends its requests from the streaming thread on a queue of its own).
    /// The application's display connection, a `struct wl_display *`.
    public let display: UnsafeMutableRawPointer
    /// The surface the preview draws into, a `struct wl_surface *` made on `display`.
    public let surface: UnsafeMutableRawPointer

    /// The surface `surface` on the display connection `display`.
    public init(display: UnsafeMutableRawPointer, surface: UnsafeMutableRawPointer) {
        self.display = display
        self.surface = surface
    }

    /// `wl_surface@0x55d0c8e1a2b0 on wl_display@0x55d0c8e00010`.
    public var description: String { "wl_surface@\(surface) on wl_display@\(display)" }
}

/// A rectangle of a surface in the surface's own coordinates (whole logical pixels from its top-left
/// corner), like a render rectangle: where a preview draws in a Wayland surface.
public struct SurfaceRect: Hashable, Sendable, CustomStringConvertible {
    /// The left edge, in pixels from the surface's left edge.
    public var x: Int
    /// The top edge, in pixels from the surface's top edge.
    public var y: Int
    /// The width in pixels.
    public var width: Int
    /// The height in pixels.
    public var height: Int

    /// A rectangle whose top-left corner is at `x`, `y` of the surface, `width` by `height` pixels.
    public init(x: Int, y: Int, width: Int, height: Int) {
        self.x = x
        self.y = y
        self.width = width
        self.height = height
    }

    /// The rectangle of a widget laid out in a toolkit's window, in the coordinates of the window's
    /// surface: `origin` is the widget's top-left corner in the window's coordinates, and
    /// `surfaceOffset` where the window's own origin lies in its surface: the margins a toolkit's
    /// client-side decorations leave around the window for its shadow (GTK 4:
    /// `gtk_native_get_surface_transform`; zero when the window is maximized, fullscreen or decorated
    /// by the compositor). Fractional positions (a widget at half a pixel) are rounded to the nearest
    /// whole pixel, the size is kept.
    public init(origin: ViewPoint, surfaceOffset: ViewPoint, size: Size) {
        self.init(
            x: Int((origin.x + surfaceOffset.x).rounded()), y: Int((origin.y + surfaceOffset.y).rounded()),
            width: size.width, height: size.height)
    }

    /// `width` by `height`.
    public var size: Size { Size(width: width, height: height) }

    /// Whether the rectangle covers no pixel.
    public var isEmpty: Bool { width <= 0 || height <= 0 }

    /// The same rectangle at another size, its top-left corner kept.
    public func resized(to size: Size) -> SurfaceRect { SurfaceRect(x: x, y: y, width: size.width, height: size.height) }

    /// `640x360+0+46` (width x height + x + y, as X11 geometry strings read).
    public var description: String { "\(width)x\(height)\(x < 0 ? "" : "+")\(x)\(y < 0 ? "" : "+")\(y)" }
}
