// C helpers for the few GStreamer/GLib entry points Swift cannot import:
// function-like macros (G_OBJECT_TYPE_NAME, GST_IS_BIN ...) and GType-based GValue handling.
// Every symbol is prefixed `capture_` and each says why it exists.
#ifndef CAPTURE_GSTREAMER_SHIM_H
#define CAPTURE_GSTREAMER_SHIM_H

#include <gst/gst.h>

/// Why: G_OBJECT_TYPE_NAME is a macro. Returns the GType name of any GObject instance.
const char *capture_object_type_name(gpointer object);

/// Why: GST_IS_BIN is a macro over G_TYPE_CHECK_INSTANCE_TYPE.
gboolean capture_object_is_bin(gpointer object);

/// Why: G_OBJECT_GET_CLASS is a macro. TRUE when the object has a property of that name.
gboolean capture_object_has_property(gpointer object, const char *name);

/// Why: reading a property needs its GType (G_PARAM_SPEC_VALUE_TYPE, a macro) to initialise the GValue.
/// Returns the property's value serialized the way gst-launch writes it (caller frees with g_free),
/// or NULL when the property does not exist or cannot be serialized.
char *capture_object_get_property_string(gpointer object, const char *name);

/// Why: setting a property needs its GType (G_PARAM_SPEC_VALUE_TYPE, a macro) to build the GValue.
/// Sets a property from text, typed by the property's own spec: a string property takes the text as it
/// is (no unquoting, no escapes), any other type is deserialized (gst_value_deserialize_with_pspec:
/// numbers, booleans, enum nicks, flags, caps, fractions). Returns 1 when set, 0 when the property does
/// not exist, -1 when the text is not a value of the property's type (nothing is set then).
int capture_object_set_property_from_string(gpointer object, const char *name, const char *text);

/// Why: g_object_get is variadic. Reads an integer-like property (int, uint, int64, uint64, enum, bool).
gboolean capture_object_get_property_int64(gpointer object, const char *name, gint64 *out);

/// Why: GST_ELEMENT_FACTORY_KLASS / metadata are macros; returns the element's klass string
/// ("Source/Video", ...) from its factory, or NULL.
const char *capture_element_klass(GstElement *element);

/// Why: GST_MESSAGE_SRC_NAME is a macro.
const char *capture_message_src_name(GstMessage *message);


/// Why: g_object_set is variadic and G_IS_PARAM_SPEC_OBJECT / G_OBJECT_TYPE are macros. Sets an
/// object-typed property (camerabin's "viewfinder-sink", "camera-source" ...) to `value`; the owner
/// takes its own reference. Returns 0 when set, 1 when there is no such property, 2 when the property
/// does not hold objects of value's type.
int capture_object_set_object(gpointer object, const char *name, gpointer value);



/// Why: g_signal_emit_by_name is variadic. Emits an action signal that takes no arguments and
/// returns nothing (camerabin's "start-capture").
void capture_emit_action_signal(gpointer object, const char *signal);

/// Why: g_object_get is variadic and GST_IS_BIN a macro. The last sample a sink keeps (its
/// "last-sample" property; for a bin such as autovideosink, that of the first sink inside that has
/// one), with a reference for the caller, or NULL when there is none.
GstSample *capture_element_last_sample(gpointer element);

/// Why: ThreadSanitizer cannot see GLib's GMutex (on Linux it locks with an atomic instruction and
/// futex system calls, never through pthread), and GStreamer hands our callbacks' user data to its
/// threads under GMutex-based locks (a pad's or a bus's object lock, GSignal's lock). These two tell
/// ThreadSanitizer about such a hand-off: `release` on the registering thread before the user data
/// goes to GStreamer, `acquire` on the thread that got it back from GStreamer, both on the user data's
/// address. They compile to calls into ThreadSanitizer only in a build with `--sanitize=thread`, and
/// to nothing otherwise.
void capture_tsan_release(const void *address);
void capture_tsan_acquire(const void *address);
/// Why: Swift 6 cannot name glibc's `stdout` (a mutable global). Makes standard output line-buffered,
/// so a process stopped by a signal (or killed) has written every whole line it printed.
void capture_stdout_line_buffered(void);

#endif

/// Why: a GLogFunc is a C callback registered once (g_once). Drops the GStreamer-Video CRITICAL "gst_video_format_to_string: assertion 'format !=
/// GST_VIDEO_FORMAT_UNKNOWN' failed" (raised by GStreamer's pipewire device provider for each format
/// GStreamer has no name for); every other message of that domain goes to GLib's default handler.
/// Installed once per process; later calls do nothing.
void capture_ignore_unknown_video_format_criticals(void);
#include "CaptureWebRTC.h"
#include "CaptureSamples.h"
