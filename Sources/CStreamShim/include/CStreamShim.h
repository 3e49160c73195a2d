// C helpers of the stream output: GStreamer's RTSP server (a media factory whose media is built in
// code, never parsed from text), fed encoded samples by the session, and srtsink's caller signals.
// Every symbol is prefixed `capture_` and each says why it exists.
#ifndef CAPTURE_STREAM_SHIM_H
#define CAPTURE_STREAM_SHIM_H

#include <gst/gst.h>

/// A client started (`connected` 1) or stopped (0) reading a mount, or an SRT caller came or went.
/// Called on the RTSP server's own thread (or srtsink's): must not block.
typedef void (*capture_stream_peer_callback)(void *context, int connected, const char *address);

typedef struct CaptureRTSPServer CaptureRTSPServer;
typedef struct CaptureRTSPMount CaptureRTSPMount;

/// Why: the RTSP server needs a GLib main loop of its own (its sockets are GSources); this starts one
/// on a thread of its own, listening on `address`:`port` (0: any free port). Returns NULL and sets
/// `*error_message` (free with g_free) when the address cannot be bound.
CaptureRTSPServer *capture_rtsp_server_start(const char *address, int port, char **error_message);

/// The port the server listens on.
int capture_rtsp_server_port(CaptureRTSPServer *server);

/// Closes every client, stops the server's thread and frees it. Its mounts must be removed first.
void capture_rtsp_server_stop(CaptureRTSPServer *server);

/// Why: the media of a mount is built in code (a GstRTSPMediaFactory subclass whose create_element makes
/// `appsrc name=videosrc ! rtph264pay name=pay0`, and with `audio` 1 (AAC) or 2 (Opus)
/// `appsrc name=audiosrc ! rtpmp4gpay|rtpopuspay name=pay1`), shared by every client of the path.
/// `callback` learns of clients that play the path; `destroy` releases `context` when the mount goes.
/// Returns NULL when the path is already mounted.
CaptureRTSPMount *capture_rtsp_mount_add(CaptureRTSPServer *server, const char *path, int audio,
                                         capture_stream_peer_callback callback, void *context,
                                         GDestroyNotify destroy);

/// Unmounts the path, closes the clients that read it and frees the mount.
void capture_rtsp_mount_remove(CaptureRTSPMount *mount);

/// Hands an encoded sample (`stream` 0: video, 1: audio) to every media of the mount (the clients'),
/// retimed onto the media's running time. A media that has just started waits for a key frame. Returns 1 when a media
/// waits for a video key frame (the caller asks its encoder for one), else 0.
int capture_rtsp_mount_push(CaptureRTSPMount *mount, GstSample *sample, int stream);

/// The number of medias (client groups) the mount feeds now.
int capture_rtsp_mount_media_count(CaptureRTSPMount *mount);

/// Why: g_signal_connect is a macro, and srtsink's "caller-added"/"caller-removed" carry a
/// GSocketAddress. Reports each caller of an srtsink in listener mode to `callback`.
void capture_srt_watch_callers(GstElement *srtsink, capture_stream_peer_callback callback, void *context,
                               GDestroyNotify destroy);

#endif
