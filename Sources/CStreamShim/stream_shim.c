#include "CStreamShim.h"

#include <gio/gio.h>
#include <gst/app/gstappsrc.h>
#include <gst/rtsp-server/rtsp-server.h>
#include <gst/video/video.h>
#include <string.h>

#include "CGStreamerShim.h"  // capture_tsan_release / capture_tsan_acquire

// MARK: The server

// Lifetimes. GStreamer's RTSP server does not serve its clients on the thread that accepts them: each
// client runs on a thread of the server's GstRTSPThreadPool (a GThreadPool, "pool-..." threads, with a
// main loop per client), and a client's "closed" signal comes from there when its watch goes, which
// can be after the server was stopped (stopping closes the clients; it neither joins nor drains those
// threads). So every signal handler's data is reference-counted: a client's handlers hold a reference
// on the CaptureRTSPServer (dropped when the handler goes with the client), the media factory's and a
// media's handlers hold one on the CaptureRTSPMount, and a stopped server answers no client.

struct CaptureRTSPServer {
    GstRTSPServer *server;
    GMainContext *context;
    GMainLoop *loop;
    GSource *source;
    GThread *thread;
    GMutex lock;
    gboolean stopped;    // under `lock`: set by capture_rtsp_server_stop; no client is reported after
    GHashTable *mounts;  // path -> CaptureRTSPMount* (the table holds a reference), under `lock`
};

typedef struct {
    GstRTSPMedia *media;     // not owned: removed from the list when the media is unprepared
    GstElement *video;       // owned
    GstElement *audio;       // owned, or NULL
    gboolean needs_key;      // nothing sent yet: the first video buffer must be a key frame
    gint64 offset;           // session running time -> the media's (G_MININT64: not known yet)
} Receiver;

struct CaptureRTSPMount {
    CaptureRTSPServer *server;  // a reference
    char *path;
    int audio;
    GMutex lock;
    GPtrArray *receivers;    // Receiver*, under `lock`
    capture_stream_peer_callback callback;
    void *context;
    GDestroyNotify destroy;
    GstRTSPMediaFactory *factory;
};

static void receiver_free(gpointer data) {
    Receiver *receiver = data;
    gst_clear_object(&receiver->video);
    gst_clear_object(&receiver->audio);
    g_free(receiver);
}

static void server_clear(CaptureRTSPServer *server) {
    g_mutex_clear(&server->lock);
}

/// A mount's or a server's lock, taken and let go so that ThreadSanitizer sees the hand-off: GMutex
/// locks with futexes of its own, which it does not intercept, so what one thread wrote under the lock
/// and another read under it (a receiver added by the media's thread, then fed by a streaming thread;
/// `stopped`, set by the owner and read by a client's thread) looked like races.
static void locked(GMutex *lock) {
    g_mutex_lock(lock);
    capture_tsan_acquire(lock);
}

static void unlocked(GMutex *lock) {
    capture_tsan_release(lock);
    g_mutex_unlock(lock);
}

static CaptureRTSPServer *server_ref(CaptureRTSPServer *server) { return g_atomic_rc_box_acquire(server); }
static void server_unref(gpointer server) { g_atomic_rc_box_release_full(server, (GDestroyNotify)server_clear); }
static void server_unref_closure(gpointer server, GClosure *closure) { (void)closure; server_unref(server); }

static void mount_clear(CaptureRTSPMount *mount) {
    if (mount->destroy && mount->context) mount->destroy(mount->context);
    g_ptr_array_unref(mount->receivers);
    g_mutex_clear(&mount->lock);
    g_free(mount->path);
    server_unref(mount->server);
}

static CaptureRTSPMount *mount_ref(CaptureRTSPMount *mount) { return g_atomic_rc_box_acquire(mount); }
static void mount_unref(gpointer mount) { g_atomic_rc_box_release_full(mount, (GDestroyNotify)mount_clear); }
static void mount_unref_closure(gpointer mount, GClosure *closure) { (void)closure; mount_unref(mount); }

static gpointer server_thread(gpointer data) {
    CaptureRTSPServer *server = data;
    g_main_context_push_thread_default(server->context);
    g_main_loop_run(server->loop);
    g_main_context_pop_thread_default(server->context);
    return NULL;
}

/// The mount a client's request path reads (a reference), or NULL (also once the server was stopped).
static CaptureRTSPMount *mount_for_path(CaptureRTSPServer *server, const char *path) {
    CaptureRTSPMount *found = NULL;
    locked(&server->lock);
    if (server->stopped) {
        unlocked(&server->lock);
        return NULL;
    }
    GHashTableIter iter;
    gpointer key, value;
    g_hash_table_iter_init(&iter, server->mounts);
    while (g_hash_table_iter_next(&iter, &key, &value)) {
        const char *mounted = key;
        size_t length = strlen(mounted);
        if (strncmp(path, mounted, length) == 0 && (path[length] == '\0' || path[length] == '/')) {
            found = mount_ref(value);
            break;
        }
    }
    unlocked(&server->lock);
    return found;
}

/// Runs on the client's thread (a thread of the server's thread pool).
static void report_client(CaptureRTSPServer *server, GstRTSPClient *client, int connected) {
    capture_tsan_acquire(server);  // the handler's data came through GSignal's lock (see on_client_connected)
    const char *path = g_object_get_data(G_OBJECT(client), "capture-path");
    const char *address = g_object_get_data(G_OBJECT(client), "capture-address");
    if (!path) return;
    CaptureRTSPMount *mount = mount_for_path(server, path);
    if (!mount) return;
    locked(&mount->lock);
    if (mount->callback) {
        capture_tsan_acquire(mount->context);  // handed over by capture_rtsp_mount_add, under mount->lock since
        mount->callback(mount->context, connected, address ? address : "");
    }
    unlocked(&mount->lock);
    mount_unref(mount);
}

static void on_play_request(GstRTSPClient *client, GstRTSPContext *ctx, gpointer data) {
    if (g_object_get_data(G_OBJECT(client), "capture-path") || !ctx || !ctx->uri) return;
    GstRTSPConnection *connection = gst_rtsp_client_get_connection(client);
    const char *ip = connection ? gst_rtsp_connection_get_ip(connection) : NULL;
    g_object_set_data_full(G_OBJECT(client), "capture-address", g_strdup(ip ? ip : ""), g_free);
    g_object_set_data_full(G_OBJECT(client), "capture-path", g_strdup(ctx->uri->abspath), g_free);
    report_client(data, client, 1);
}

static void on_client_closed(GstRTSPClient *client, gpointer data) { report_client(data, client, 0); }

/// Runs on the server's thread. The client's handlers run on the client's thread, possibly after the
/// server was stopped: each holds a reference on the server, dropped when the client goes.
static void on_client_connected(GstRTSPServer *rtsp, GstRTSPClient *client, gpointer data) {
    (void)rtsp;
    CaptureRTSPServer *server = data;
    capture_tsan_acquire(server);
    capture_tsan_release(server);
    g_signal_connect_data(client, "play-request", G_CALLBACK(on_play_request), server_ref(server), server_unref_closure, 0);
    g_signal_connect_data(client, "closed", G_CALLBACK(on_client_closed), server_ref(server), server_unref_closure, 0);
}

CaptureRTSPServer *capture_rtsp_server_start(const char *address, int port, char **error_message) {
    CaptureRTSPServer *server = g_atomic_rc_box_new0(CaptureRTSPServer);
    server->server = gst_rtsp_server_new();
    gst_rtsp_server_set_address(server->server, address);
    char service[16];
    g_snprintf(service, sizeof service, "%d", port);
    gst_rtsp_server_set_service(server->server, service);
    GError *error = NULL;
    server->source = gst_rtsp_server_create_source(server->server, NULL, &error);
    if (!server->source) {
        if (error_message) *error_message = g_strdup(error ? error->message : "the server could not listen");
        g_clear_error(&error);
        g_object_unref(server->server);
        g_atomic_rc_box_release(server);
        return NULL;
    }
    g_mutex_init(&server->lock);
    server->mounts = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, mount_unref);
    // The server's thread reads `server` as the handler's data (GSignal's lock, then the thread's start).
    capture_tsan_release(server);
    g_signal_connect(server->server, "client-connected", G_CALLBACK(on_client_connected), server);
    server->context = g_main_context_new();
    server->loop = g_main_loop_new(server->context, FALSE);
    g_source_attach(server->source, server->context);
    server->thread = g_thread_new("capture-rtsp", server_thread, server);
    return server;
}

int capture_rtsp_server_port(CaptureRTSPServer *server) { return gst_rtsp_server_get_bound_port(server->server); }

static GstRTSPFilterResult close_every_client(GstRTSPServer *rtsp, GstRTSPClient *client, gpointer data) {
    (void)rtsp; (void)client; (void)data;
    return GST_RTSP_FILTER_REMOVE;
}

static gboolean quit_loop(gpointer data) {
    g_main_loop_quit(data);
    return G_SOURCE_REMOVE;
}

void capture_rtsp_server_stop(CaptureRTSPServer *server) {
    // From now on a client's late "closed" (on its own thread) finds no mount.
    locked(&server->lock);
    server->stopped = TRUE;
    GHashTable *mounts = server->mounts;
    server->mounts = NULL;
    unlocked(&server->lock);
    gst_rtsp_server_client_filter(server->server, close_every_client, NULL);
    g_source_destroy(server->source);
    g_source_unref(server->source);
    // Quit from inside the loop, so that a loop that has not started running yet still ends.
    GSource *quit = g_idle_source_new();
    g_source_set_callback(quit, quit_loop, server->loop, NULL);
    g_source_attach(quit, server->context);
    g_source_unref(quit);
    g_thread_join(server->thread);
    g_signal_handlers_disconnect_by_data(server->server, server);
    g_object_unref(server->server);
    g_main_loop_unref(server->loop);
    g_main_context_unref(server->context);
    g_hash_table_unref(mounts);
    // The struct (its lock and `stopped`) stays until the last client's handlers are gone.
    server_unref(server);
}

// MARK: The media factory, built in code

typedef struct {
    GstRTSPMediaFactory parent;
    CaptureRTSPMount *mount;  // not owned: the mount owns the factory's registration
    int audio;
} CaptureMediaFactory;

typedef struct {
    GstRTSPMediaFactoryClass parent_class;
} CaptureMediaFactoryClass;

G_DEFINE_TYPE(CaptureMediaFactory, capture_media_factory, GST_TYPE_RTSP_MEDIA_FACTORY)

static GstElement *make_appsrc(const char *name) {
    GstElement *source = gst_element_factory_make("appsrc", name);
    if (!source) return NULL;
    // Live, in time (the samples are retimed onto the media's running time); never blocks the session:
    // when the clients cannot keep up, the oldest data goes.
    g_object_set(source, "is-live", TRUE, "format", GST_FORMAT_TIME, "block", FALSE,
                 "max-bytes", (guint64)(4 << 20), NULL);
    gst_util_set_object_arg(G_OBJECT(source), "leaky-type", "downstream");
    return source;
}

static GstElement *factory_create_element(GstRTSPMediaFactory *factory, const GstRTSPUrl *url) {
    (void)url;
    CaptureMediaFactory *self = (CaptureMediaFactory *)factory;
    capture_tsan_acquire(self);  // set up by capture_rtsp_mount_add
    GstElement *bin = gst_bin_new(NULL);
    GstElement *video = make_appsrc("videosrc");
    GstElement *pay = gst_element_factory_make("rtph264pay", "pay0");
    if (!video || !pay) goto failed;
    // No SPS/PPS of the payloader's own: the samples are whole access units from h264parse
    // config-interval=-1, which puts SPS/PPS once in front of each key frame. rtph264pay's
    // config-interval=-1 inserts them before every IDR *slice*: a key frame of several slices (x264's
    // sliced threads under tune=zerolatency, one slice per thread) came out as SPS PPS slice SPS PPS
    // slice..., which ffmpeg-based readers (ffmpeg, VLC, MediaMTX, Frigate) split into several
    // pictures of one slice each: every key frame was "corrupt", half of it concealed.
    g_object_set(pay, "pt", 96, "config-interval", 0, NULL);
    gst_bin_add_many(GST_BIN(bin), video, pay, NULL);
    if (!gst_element_link(video, pay)) goto failed_added;
    if (self->audio) {
        GstElement *audio = make_appsrc("audiosrc");
        GstElement *audio_pay = gst_element_factory_make(self->audio == 1 ? "rtpmp4gpay" : "rtpopuspay", "pay1");
        if (!audio || !audio_pay) {
            if (audio) gst_object_unref(gst_object_ref_sink(audio));
            if (audio_pay) gst_object_unref(gst_object_ref_sink(audio_pay));
            goto failed_added;
        }
        g_object_set(audio_pay, "pt", 97, NULL);
        gst_bin_add_many(GST_BIN(bin), audio, audio_pay, NULL);
        if (!gst_element_link(audio, audio_pay)) goto failed_added;
    }
    return bin;
failed:
    if (video) gst_object_unref(gst_object_ref_sink(video));
    if (pay) gst_object_unref(gst_object_ref_sink(pay));
failed_added:
    gst_object_unref(gst_object_ref_sink(bin));
    return NULL;
}

static void capture_media_factory_class_init(CaptureMediaFactoryClass *klass) {
    GST_RTSP_MEDIA_FACTORY_CLASS(klass)->create_element = factory_create_element;
}

static void capture_media_factory_init(CaptureMediaFactory *self) { (void)self; }

static void on_media_unprepared(GstRTSPMedia *media, gpointer data) {
    CaptureRTSPMount *mount = data;
    capture_tsan_acquire(mount);
    locked(&mount->lock);
    for (guint index = mount->receivers->len; index > 0; index--) {
        Receiver *receiver = g_ptr_array_index(mount->receivers, index - 1);
        if (receiver->media == media) g_ptr_array_remove_index(mount->receivers, index - 1);
    }
    unlocked(&mount->lock);
}

static void on_media_configure(GstRTSPMediaFactory *factory, GstRTSPMedia *media, gpointer data) {
    (void)factory;
    CaptureRTSPMount *mount = data;
    capture_tsan_acquire(mount);
    capture_tsan_release(mount);  // on to the media's thread ("unprepared")
    GstElement *element = gst_rtsp_media_get_element(media);
    if (!element) return;
    Receiver *receiver = g_new0(Receiver, 1);
    receiver->media = media;
    receiver->video = gst_bin_get_by_name(GST_BIN(element), "videosrc");
    receiver->audio = gst_bin_get_by_name(GST_BIN(element), "audiosrc");
    receiver->needs_key = TRUE;
    receiver->offset = G_MININT64;
    gst_object_unref(element);
    if (!receiver->video) { receiver_free(receiver); return; }
    // The mount outlives the media's signal: the handler is removed with the media (the reference
    // taken here is dropped by the closure's destroy notify).
    g_signal_connect_data(media, "unprepared", G_CALLBACK(on_media_unprepared), mount_ref(mount),
                          mount_unref_closure, 0);
    locked(&mount->lock);
    g_ptr_array_add(mount->receivers, receiver);
    unlocked(&mount->lock);
}

CaptureRTSPMount *capture_rtsp_mount_add(CaptureRTSPServer *server, const char *path, int audio,
                                         capture_stream_peer_callback callback, void *context,
                                         GDestroyNotify destroy) {
    locked(&server->lock);
    gboolean taken = server->stopped || g_hash_table_contains(server->mounts, path);
    unlocked(&server->lock);
    if (taken) return NULL;

    CaptureRTSPMount *mount = g_atomic_rc_box_new0(CaptureRTSPMount);
    mount->server = server_ref(server);
    mount->path = g_strdup(path);
    mount->audio = audio;
    g_mutex_init(&mount->lock);
    mount->receivers = g_ptr_array_new_with_free_func(receiver_free);
    mount->callback = callback;
    mount->context = context;
    mount->destroy = destroy;
    // `context` is read by client threads (under mount->lock, which ThreadSanitizer sees through GLib's
    // futexes only with these annotations).
    capture_tsan_release(context);
    // The mount reaches the factory's and the medias' threads through GSignal.
    capture_tsan_release(mount);

    CaptureMediaFactory *factory = g_object_new(capture_media_factory_get_type(), NULL);
    factory->mount = mount;
    factory->audio = audio;
    // Read on a server thread when a client asks for the media (through the mount points' GMutex).
    capture_tsan_release(factory);
    mount->factory = GST_RTSP_MEDIA_FACTORY(factory);
    // One media for every client of the path: one encode, whatever the number of clients.
    gst_rtsp_media_factory_set_shared(mount->factory, TRUE);
    g_signal_connect_data(factory, "media-configure", G_CALLBACK(on_media_configure), mount_ref(mount),
                          mount_unref_closure, 0);

    locked(&server->lock);
    g_hash_table_insert(server->mounts, g_strdup(path), mount_ref(mount));
    unlocked(&server->lock);
    GstRTSPMountPoints *points = gst_rtsp_server_get_mount_points(server->server);
    gst_rtsp_mount_points_add_factory(points, path, g_object_ref(mount->factory));
    g_object_unref(points);
    return mount;
}

static GstRTSPFilterResult close_clients_of_path(GstRTSPServer *rtsp, GstRTSPClient *client, gpointer data) {
    (void)rtsp;
    const char *path = g_object_get_data(G_OBJECT(client), "capture-path");
    const char *mounted = data;
    size_t length = strlen(mounted);
    if (path && strncmp(path, mounted, length) == 0 && (path[length] == '\0' || path[length] == '/')) return GST_RTSP_FILTER_REMOVE;
    return GST_RTSP_FILTER_KEEP;
}

void capture_rtsp_mount_remove(CaptureRTSPMount *mount) {
    CaptureRTSPServer *server = mount->server;
    GstRTSPMountPoints *points = gst_rtsp_server_get_mount_points(server->server);
    gst_rtsp_mount_points_remove_factory(points, mount->path);
    g_object_unref(points);
    gst_rtsp_server_client_filter(server->server, close_clients_of_path, mount->path);
    locked(&mount->lock);
    g_ptr_array_set_size(mount->receivers, 0);
    mount->callback = NULL;
    unlocked(&mount->lock);
    g_signal_handlers_disconnect_matched(mount->factory, G_SIGNAL_MATCH_FUNC, 0, 0, NULL, (gpointer)on_media_configure, NULL);
    ((CaptureMediaFactory *)mount->factory)->mount = NULL;
    g_object_unref(mount->factory);
    locked(&server->lock);
    if (server->mounts) g_hash_table_remove(server->mounts, mount->path);
    unlocked(&server->lock);
    mount_unref(mount);
}

int capture_rtsp_mount_push(CaptureRTSPMount *mount, GstSample *sample, int stream) {
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    if (!buffer) return 0;
    gboolean key = !GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
    int wants_key = 0;
    locked(&mount->lock);
    for (guint index = 0; index < mount->receivers->len; index++) {
        Receiver *receiver = g_ptr_array_index(mount->receivers, index);
        if (stream == 0) {
            if (receiver->needs_key && !key) { wants_key = 1; continue; }
            receiver->needs_key = FALSE;
            capture_appsrc_push_retimed(receiver->video, sample, &receiver->offset);
        } else if (receiver->audio && !receiver->needs_key) {
            capture_appsrc_push_retimed(receiver->audio, sample, &receiver->offset);
        }
    }
    unlocked(&mount->lock);
    return wants_key;
}

int capture_rtsp_mount_media_count(CaptureRTSPMount *mount) {
    locked(&mount->lock);
    int count = (int)mount->receivers->len;
    unlocked(&mount->lock);
    return count;
}

// MARK: srtsink callers

typedef struct {
    capture_stream_peer_callback callback;
    void *context;
    GDestroyNotify destroy;
} CallerWatch;

static void caller_watch_clear(CallerWatch *watch) {
    if (watch->destroy && watch->context) watch->destroy(watch->context);
}

/// Each of the two handlers holds a reference: the watch goes with the last of them, whichever
/// order GSignal drops them in.
static void caller_watch_unref(gpointer data, GClosure *closure) {
    (void)closure;
    g_atomic_rc_box_release_full(data, (GDestroyNotify)caller_watch_clear);
}

/// Runs on srtsink's thread (its listener's, or the one that finds a caller gone).
static void report_caller(CallerWatch *watch, int added, GSocketAddress *address) {
    capture_tsan_acquire(watch);  // came through GSignal's lock (see capture_srt_watch_callers)
    capture_tsan_acquire(watch->context);
    char *text = NULL;
    if (address && G_IS_INET_SOCKET_ADDRESS(address)) {
        text = g_inet_address_to_string(g_inet_socket_address_get_address(G_INET_SOCKET_ADDRESS(address)));
    }
    watch->callback(watch->context, added, text ? text : "");
    g_free(text);
}

static void on_caller_added(GstElement *sink, gint unused, GSocketAddress *address, gpointer data) {
    (void)sink; (void)unused;
    report_caller(data, 1, address);
}

static void on_caller_removed(GstElement *sink, gint unused, GSocketAddress *address, gpointer data) {
    (void)sink; (void)unused;
    report_caller(data, 0, address);
}

void capture_srt_watch_callers(GstElement *srtsink, capture_stream_peer_callback callback, void *context,
                               GDestroyNotify destroy) {
    CallerWatch *watch = g_atomic_rc_box_new0(CallerWatch);
    watch->callback = callback;
    watch->context = context;
    watch->destroy = destroy;
    capture_tsan_release(context);
    capture_tsan_release(watch);
    g_signal_connect_data(srtsink, "caller-added", G_CALLBACK(on_caller_added), g_atomic_rc_box_acquire(watch), caller_watch_unref, 0);
    g_signal_connect_data(srtsink, "caller-removed", G_CALLBACK(on_caller_removed), watch, caller_watch_unref, 0);
}
