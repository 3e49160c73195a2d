#include "CGtkShim.h"

#include <malloc.h>

#ifdef GDK_WINDOWING_X11
#include <cairo-xlib.h>
#include <gdk/x11/gdkx.h>
#endif

// MARK: The frame paintable

#define CAPTURE_GTK_TYPE_FRAME_PAINTABLE (capture_gtk_frame_paintable_get_type())
G_DECLARE_FINAL_TYPE(CaptureGtkFramePaintable, capture_gtk_frame_paintable, CAPTURE_GTK, FRAME_PAINTABLE, GObject)

struct _CaptureGtkFramePaintable {
    GObject parent_instance;
    GdkTexture *texture;
    cairo_surface_t *surface;
    int width, height;
};

static void capture_gtk_frame_paintable_interface_init(GdkPaintableInterface *iface);

G_DEFINE_FINAL_TYPE_WITH_CODE(CaptureGtkFramePaintable, capture_gtk_frame_paintable, G_TYPE_OBJECT,
                              G_IMPLEMENT_INTERFACE(GDK_TYPE_PAINTABLE, capture_gtk_frame_paintable_interface_init))

static void capture_gtk_frame_paintable_snapshot(GdkPaintable *paintable, GdkSnapshot *snapshot, double width, double height) {
    CaptureGtkFramePaintable *self = CAPTURE_GTK_FRAME_PAINTABLE(paintable);
    if (self->texture) {
        gtk_snapshot_append_texture(GTK_SNAPSHOT(snapshot), self->texture, &GRAPHENE_RECT_INIT(0, 0, width, height));
    } else if (self->surface && self->width > 0 && self->height > 0) {
        cairo_t *cr = gtk_snapshot_append_cairo(GTK_SNAPSHOT(snapshot), &GRAPHENE_RECT_INIT(0, 0, width, height));
        if (width != self->width || height != self->height) cairo_scale(cr, width / self->width, height / self->height);
        cairo_set_source_surface(cr, self->surface, 0, 0);
        cairo_paint(cr);
        cairo_destroy(cr);
    }
}

static int capture_gtk_frame_paintable_get_intrinsic_width(GdkPaintable *paintable) {
    return CAPTURE_GTK_FRAME_PAINTABLE(paintable)->width;
}

static int capture_gtk_frame_paintable_get_intrinsic_height(GdkPaintable *paintable) {
    return CAPTURE_GTK_FRAME_PAINTABLE(paintable)->height;
}

static void capture_gtk_frame_paintable_interface_init(GdkPaintableInterface *iface) {
    iface->snapshot = capture_gtk_frame_paintable_snapshot;
    iface->get_intrinsic_width = capture_gtk_frame_paintable_get_intrinsic_width;
    iface->get_intrinsic_height = capture_gtk_frame_paintable_get_intrinsic_height;
}

static void capture_gtk_frame_paintable_clear(CaptureGtkFramePaintable *self) {
    g_clear_object(&self->texture);
    g_clear_pointer(&self->surface, cairo_surface_destroy);
}

static void capture_gtk_frame_paintable_finalize(GObject *object) {
    capture_gtk_frame_paintable_clear(CAPTURE_GTK_FRAME_PAINTABLE(object));
    G_OBJECT_CLASS(capture_gtk_frame_paintable_parent_class)->finalize(object);
}

static void capture_gtk_frame_paintable_class_init(CaptureGtkFramePaintableClass *klass) {
    G_OBJECT_CLASS(klass)->finalize = capture_gtk_frame_paintable_finalize;
}

static void capture_gtk_frame_paintable_init(CaptureGtkFramePaintable *self) { (void)self; }

GdkPaintable *capture_gtk_frame_paintable_new(void) {
    return GDK_PAINTABLE(g_object_new(CAPTURE_GTK_TYPE_FRAME_PAINTABLE, NULL));
}

static void capture_gtk_frame_paintable_changed(CaptureGtkFramePaintable *self, int width, int height) {
    gboolean resized = width != self->width || height != self->height;
    self->width = width;
    self->height = height;
    if (resized) gdk_paintable_invalidate_size(GDK_PAINTABLE(self));
    gdk_paintable_invalidate_contents(GDK_PAINTABLE(self));
}

void capture_gtk_frame_paintable_show_texture(GdkPaintable *paintable, GdkTexture *texture) {
    CaptureGtkFramePaintable *self = CAPTURE_GTK_FRAME_PAINTABLE(paintable);
    if (texture) g_object_ref(texture);
    capture_gtk_frame_paintable_clear(self);
    self->texture = texture;
    capture_gtk_frame_paintable_changed(self, texture ? gdk_texture_get_width(texture) : 0, texture ? gdk_texture_get_height(texture) : 0);
}

void capture_gtk_frame_paintable_show_surface(GdkPaintable *paintable, cairo_surface_t *surface) {
    CaptureGtkFramePaintable *self = CAPTURE_GTK_FRAME_PAINTABLE(paintable);
    if (surface) cairo_surface_reference(surface);
    capture_gtk_frame_paintable_clear(self);
    self->surface = surface;
    capture_gtk_frame_paintable_changed(self, surface ? cairo_image_surface_get_width(surface) : 0,
                                        surface ? cairo_image_surface_get_height(surface) : 0);
}

// MARK: The renderer and the display

gboolean capture_gtk_renders_with_cairo(GtkWidget *widget) {
    GtkNative *native = gtk_widget_get_native(widget);
    GskRenderer *renderer = native ? gtk_native_get_renderer(native) : NULL;
    return renderer != NULL && GSK_IS_CAIRO_RENDERER(renderer);
}

cairo_surface_t *capture_gtk_x11_shared_image(GtkWidget *widget, int width, int height) {
#ifdef GDK_WINDOWING_X11
    GtkNative *native = gtk_widget_get_native(widget);
    GdkSurface *surface = native ? gtk_native_get_surface(native) : NULL;
    if (surface == NULL || width <= 0 || height <= 0) return NULL;
    GdkDisplay *display = gdk_surface_get_display(surface);
    if (!GDK_IS_X11_DISPLAY(display) || !GDK_IS_X11_SURFACE(surface)) return NULL;
    Display *xdisplay = gdk_x11_display_get_xdisplay(display);
    Window window = gdk_x11_surface_get_xid(surface);
    if (window == None) return NULL;
    // Only the display matters to cairo here: the shared image belongs to the display's cairo device
    // and outlives this 1x1 handle on the window.
    cairo_surface_t *handle = cairo_xlib_surface_create(xdisplay, window, DefaultVisual(xdisplay, DefaultScreen(xdisplay)), 1, 1);
    cairo_surface_t *image = cairo_surface_create_similar_image(handle, CAIRO_FORMAT_RGB24, width, height);
    cairo_surface_destroy(handle);
    if (cairo_surface_status(image) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(image);
        return NULL;
    }
    return image;
#else
    (void)widget;
    (void)width;
    (void)height;
    return NULL;
#endif
}

void capture_gtk_keep_frame_sized_allocations(void) {
    mallopt(M_MMAP_THRESHOLD, 32 * 1024 * 1024);
    mallopt(M_TRIM_THRESHOLD, 128 * 1024 * 1024);
}
