// C helpers for CaptureGTK: a GObject type (a GdkPaintable Swift cannot subclass) and the X11 and
// allocator calls GTK 4's software renderer needs to show camera frames cheaply. Every symbol is
// prefixed `capture_gtk_` and each says why it exists.
#ifndef CAPTURE_GTK_SHIM_H
#define CAPTURE_GTK_SHIM_H

#include <gtk/gtk.h>

/// Why: a GdkPaintable is a GObject interface, which Swift cannot implement. A paintable showing
/// camera frames: either a GdkTexture (what GTK's GL and Vulkan renderers upload) or a cairo image
/// surface (what its cairo renderer paints without a copy). Its intrinsic size is the frame's.
GdkPaintable *capture_gtk_frame_paintable_new(void);

/// Shows `texture` (the paintable keeps a reference; NULL shows nothing) and invalidates the contents,
/// and the size when it changed.
void capture_gtk_frame_paintable_show_texture(GdkPaintable *paintable, GdkTexture *texture);

/// Shows the cairo image surface `surface` (the paintable keeps a reference; its pixels must not be
/// written while GTK may draw them: flush it first, as the X11 shared images need).
void capture_gtk_frame_paintable_show_surface(GdkPaintable *paintable, cairo_surface_t *surface);

/// Why: GSK_IS_CAIRO_RENDERER is a macro. TRUE when `widget` is in a window GTK draws with its cairo
/// (software) renderer.
gboolean capture_gtk_renders_with_cairo(GtkWidget *widget);

/// Why: GDK's X11 calls and cairo-xlib are outside what CGtk imports. A `width` x `height` RGB24
/// image in memory the X server shares (MIT-SHM), for `widget`'s X11 display: GTK's cairo renderer
/// paints it into the window without uploading its pixels through the socket or copying them into an
/// intermediate image. NULL when the widget is not realized on an X11 display; a plain image surface
/// when the display has no shared memory. Release with cairo_surface_destroy.
cairo_surface_t *capture_gtk_x11_shared_image(GtkWidget *widget, int width, int height);

/// Why: glibc's heap returns a freed block over 128 KiB to the kernel at once and grows again on the
/// next frame. GTK 4's cairo renderer allocates and frees two window-sized images for every frame it
/// draws; at 30 frames a second the page faults of mapping them again cost more than the drawing.
/// Keeps blocks up to 32 MiB in the heap and freed memory up to 128 MiB before trimming (mallopt).
void capture_gtk_keep_frame_sized_allocations(void);

#endif
