#ifndef CAPTURE_CGTKWAYLAND_H
#define CAPTURE_CGTKWAYLAND_H
// GDK's Wayland backend: a window's wl_surface and the display's wl_display, for a preview drawn into
// the application's own surface (examples/gtk-preview --wayland-surface).
#include <gtk/gtk.h>
#include <gdk/wayland/gdkwayland.h>
#endif
