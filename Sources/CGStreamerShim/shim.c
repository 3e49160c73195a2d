#include "CGStreamerShim.h"
#include <string.h>
#include <stdio.h>

const char *capture_object_type_name(gpointer object) {
    return G_OBJECT_TYPE_NAME(object);
}

gboolean capture_object_is_bin(gpointer object) {
    return GST_IS_BIN(object);
}

gboolean capture_object_has_property(gpointer object, const char *name) {
    return g_object_class_find_property(G_OBJECT_GET_CLASS(object), name) != NULL;
}

char *capture_object_get_property_string(gpointer object, const char *name) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(object), name);
    if (spec == NULL) return NULL;
    GValue value = G_VALUE_INIT;
    g_value_init(&value, G_PARAM_SPEC_VALUE_TYPE(spec));
    g_object_get_property(G_OBJECT(object), name, &value);
    char *result;
    if (G_VALUE_HOLDS_STRING(&value)) {
        result = g_value_dup_string(&value);
    } else {
        result = gst_value_serialize(&value);
    }
    g_value_unset(&value);
    return result;
}

int capture_object_set_property_from_string(gpointer object, const char *name, const char *text) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(object), name);
    if (spec == NULL) return 0;
    GValue value = G_VALUE_INIT;
    g_value_init(&value, G_PARAM_SPEC_VALUE_TYPE(spec));
    gboolean ok;
    if (G_VALUE_HOLDS_STRING(&value)) {
        g_value_set_string(&value, text);
        ok = TRUE;
    } else {
        ok = gst_value_deserialize_with_pspec(&value, text, spec);
    }
    if (ok) g_object_set_property(G_OBJECT(object), name, &value);
    g_value_unset(&value);
    return ok ? 1 : -1;
}

gboolean capture_object_get_property_int64(gpointer object, const char *name, gint64 *out) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(object), name);
    if (spec == NULL) return FALSE;
    GValue value = G_VALUE_INIT;
    g_value_init(&value, G_PARAM_SPEC_VALUE_TYPE(spec));
    g_object_get_property(G_OBJECT(object), name, &value);
    gboolean ok = TRUE;
    if (G_VALUE_HOLDS_INT(&value)) *out = g_value_get_int(&value);
    else if (G_VALUE_HOLDS_UINT(&value)) *out = g_value_get_uint(&value);
    else if (G_VALUE_HOLDS_INT64(&value)) *out = g_value_get_int64(&value);
    else if (G_VALUE_HOLDS_UINT64(&value)) *out = (gint64)g_value_get_uint64(&value);
    else if (G_VALUE_HOLDS_BOOLEAN(&value)) *out = g_value_get_boolean(&value);
    else if (G_VALUE_HOLDS_ENUM(&value)) *out = g_value_get_enum(&value);
    else if (G_VALUE_HOLDS_LONG(&value)) *out = g_value_get_long(&value);
    else if (G_VALUE_HOLDS_ULONG(&value)) *out = (gint64)g_value_get_ulong(&value);
    else ok = FALSE;
    g_value_unset(&value);
    return ok;
}

const char *capture_element_klass(GstElement *element) {
    GstElementFactory *factory = gst_element_get_factory(element);
    if (factory == NULL) return NULL;
    return gst_element_factory_get_metadata(factory, GST_ELEMENT_METADATA_KLASS);
}

const char *capture_message_src_name(GstMessage *message) {
    return GST_MESSAGE_SRC_NAME(message);
}


int capture_object_set_object(gpointer object, const char *name, gpointer value) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(object), name);
    if (spec == NULL) return 1;
    if (!G_IS_PARAM_SPEC_OBJECT(spec) || !g_type_is_a(G_OBJECT_TYPE(value), G_PARAM_SPEC_VALUE_TYPE(spec))) return 2;
    g_object_set(G_OBJECT(object), name, value, NULL);
    return 0;
}

void capture_emit_action_signal(gpointer object, const char *signal) {
    g_signal_emit_by_name(object, signal, NULL);
}

// SwiftPM compiles this file with -fsanitize=thread when it builds with --sanitize=thread.
#if defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CAPTURE_TSAN 1
#endif
#endif

#ifdef CAPTURE_TSAN
// ThreadSanitizer's annotation entry points (its runtime defines them).
void __tsan_acquire(void *address);
void __tsan_release(void *address);

void capture_tsan_release(const void *address) {
    __tsan_release((void *)address);
}

void capture_tsan_acquire(const void *address) {
    __tsan_acquire((void *)address);
}
#else
void capture_tsan_release(const void *address) {
    (void)address;
}

void capture_tsan_acquire(const void *address) {
    (void)address;
}
#endif

static void capture_unknown_video_format_filter(const gchar *domain, GLogLevelFlags level, const gchar *message, gpointer data) {
  (void) data;
  if (message && strstr(message, "gst_video_format_to_string") && strstr(message, "GST_VIDEO_FORMAT_UNKNOWN")) return;
  g_log_default_handler(domain, level, message, NULL);
}

void capture_ignore_unknown_video_format_criticals(void) {
  static gsize installed = 0;
  if (g_once_init_enter(&installed)) {
    g_log_set_handler("GStreamer-Video", G_LOG_LEVEL_CRITICAL, capture_unknown_video_format_filter, NULL);
    g_once_init_leave(&installed, 1);
  }
}

GstSample *capture_element_last_sample(gpointer element) {
    GParamSpec *spec = g_object_class_find_property(G_OBJECT_GET_CLASS(element), "last-sample");
    if (spec != NULL && spec->value_type == GST_TYPE_SAMPLE) {
        GstSample *sample = NULL;
        g_object_get(G_OBJECT(element), "last-sample", &sample, NULL);
        if (sample != NULL) return sample;
    }
    if (!GST_IS_BIN(element)) return NULL;
    // A bin that wraps its sink (autovideosink): the first sink inside that keeps a last sample.
    GstSample *found = NULL;
    GstIterator *iterator = gst_bin_iterate_sinks(GST_BIN(element));
    GValue item = G_VALUE_INIT;
    while (found == NULL && gst_iterator_next(iterator, &item) == GST_ITERATOR_OK) {
        found = capture_element_last_sample(g_value_get_object(&item));
        g_value_reset(&item);
    }
    g_value_unset(&item);
    gst_iterator_free(iterator);
    return found;
}

void capture_stdout_line_buffered(void) {
    setvbuf(stdout, NULL, _IOLBF, 0);
}
