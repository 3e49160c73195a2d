#include "CaptureWebRTC.h"
#include "CGStreamerShim.h"  // capture_tsan_release / capture_tsan_acquire
#define GST_USE_UNSTABLE_API
#include <gst/webrtc/webrtc.h>
#include <gst/sdp/sdp.h>
#include <gst/video/video.h>

/// A promise waited for with a deadline (gst_promise_wait has none).
typedef struct {
    GMutex lock;
    GCond changed;
    gboolean done;
} Waiter;

/// The waiter's lock, taken and let go so that ThreadSanitizer sees the hand-off: GMutex and GCond
/// wait on futexes of their own, which it does not intercept, so `done`, written by webrtcbin's thread
/// under the lock and read by the waiting one under it, looked like a race.
static void waiter_locked(Waiter *waiter) {
    g_mutex_lock(&waiter->lock);
    capture_tsan_acquire(&waiter->lock);
}

static void waiter_unlocked(Waiter *waiter) {
    capture_tsan_release(&waiter->lock);
    g_mutex_unlock(&waiter->lock);
}

static void waiter_changed(GstPromise *promise, gpointer data) {
    (void)promise;
    Waiter *waiter = data;
    waiter_locked(waiter);
    waiter->done = TRUE;
    g_cond_broadcast(&waiter->changed);
    waiter_unlocked(waiter);
}

static void waiter_free(gpointer data) {
    Waiter *waiter = data;
    g_mutex_clear(&waiter->lock);
    g_cond_clear(&waiter->changed);
    g_free(waiter);
}

/// Emits `signal` with `argument` (may be NULL: create-offer's options) and a promise; waits for the
/// reply. Returns the reply (owned by the promise, which is returned in `*out_promise` to unref) or
/// NULL with `*error` set.
static const GstStructure *emit_and_wait(GstElement *webrtc, const char *signal, gpointer argument, guint timeout_ms,
                                         GstPromise **out_promise, char **error) {
    Waiter *waiter = g_new0(Waiter, 1);
    g_mutex_init(&waiter->lock);
    g_cond_init(&waiter->changed);
    GstPromise *promise = gst_promise_new_with_change_func(waiter_changed, waiter, waiter_free);
    g_signal_emit_by_name(webrtc, signal, argument, promise);
    gint64 deadline = g_get_monotonic_time() + (gint64)timeout_ms * 1000;
    waiter_locked(waiter);
    while (!waiter->done) {
        // The wait lets go of the lock and takes it again.
        capture_tsan_release(&waiter->lock);
        gboolean woken = g_cond_wait_until(&waiter->changed, &waiter->lock, deadline);
        capture_tsan_acquire(&waiter->lock);
        if (!woken) break;
    }
    gboolean done = waiter->done;
    waiter_unlocked(waiter);
    *out_promise = promise;
    if (!done) {
        gst_promise_interrupt(promise);
        *error = g_strdup_printf("%s: no answer within %u ms", signal, timeout_ms);
        return NULL;
    }
    if (gst_promise_wait(promise) != GST_PROMISE_RESULT_REPLIED) {
        *error = g_strdup_printf("%s: the promise was not answered", signal);
        return NULL;
    }
    const GstStructure *reply = gst_promise_get_reply(promise);
    if (reply != NULL && gst_structure_has_field(reply, "error")) {
        GError *failure = NULL;
        gst_structure_get(reply, "error", G_TYPE_ERROR, &failure, NULL);
        *error = g_strdup_printf("%s: %s", signal, failure != NULL ? failure->message : "failed");
        if (failure != NULL) g_error_free(failure);
        return NULL;
    }
    return reply;
}

gboolean capture_webrtc_create_offer(GstElement *webrtc, guint timeout_ms, char **error) {
    GstPromise *promise = NULL;
    const GstStructure *reply = emit_and_wait(webrtc, "create-offer", NULL, timeout_ms, &promise, error);
    GstWebRTCSessionDescription *offer = NULL;
    if (reply != NULL) gst_structure_get(reply, "offer", GST_TYPE_WEBRTC_SESSION_DESCRIPTION, &offer, NULL);
    gst_promise_unref(promise);
    if (reply == NULL) return FALSE;
    if (offer == NULL) {
        *error = g_strdup("create-offer: the reply holds no offer");
        return FALSE;
    }
    GstPromise *set = NULL;
    const GstStructure *done = emit_and_wait(webrtc, "set-local-description", offer, timeout_ms, &set, error);
    gboolean ok = done != NULL || *error == NULL;
    gst_promise_unref(set);
    gst_webrtc_session_description_free(offer);
    return ok;
}

gboolean capture_webrtc_set_remote_answer(GstElement *webrtc, const char *sdp, guint timeout_ms, char **error) {
    GstSDPMessage *message = NULL;
    if (gst_sdp_message_new_from_text(sdp, &message) != GST_SDP_OK || message == NULL || gst_sdp_message_medias_len(message) == 0) {
        if (message != NULL) gst_sdp_message_free(message);
        *error = g_strdup("the answer is not an SDP description with a media section");
        return FALSE;
    }
    GstWebRTCSessionDescription *answer = gst_webrtc_session_description_new(GST_WEBRTC_SDP_TYPE_ANSWER, message);
    GstPromise *promise = NULL;
    const GstStructure *reply = emit_and_wait(webrtc, "set-remote-description", answer, timeout_ms, &promise, error);
    gboolean ok = reply != NULL || *error == NULL;
    gst_promise_unref(promise);
    gst_webrtc_session_description_free(answer);
    return ok;
}

char *capture_webrtc_local_sdp(GstElement *webrtc) {
    GstWebRTCSessionDescription *description = NULL;
    g_object_get(webrtc, "local-description", &description, NULL);
    if (description == NULL) return NULL;
    char *text = gst_sdp_message_as_text(description->sdp);
    gst_webrtc_session_description_free(description);
    return text;
}

int capture_webrtc_ice_gathering_state(GstElement *webrtc) {
    GstWebRTCICEGatheringState state = GST_WEBRTC_ICE_GATHERING_STATE_NEW;
    g_object_get(webrtc, "ice-gathering-state", &state, NULL);
    return (int)state;
}

int capture_webrtc_connection_state(GstElement *webrtc) {
    GstWebRTCPeerConnectionState state = GST_WEBRTC_PEER_CONNECTION_STATE_NEW;
    g_object_get(webrtc, "connection-state", &state, NULL);
    return (int)state;
}

gboolean capture_webrtc_pad_configure(GstPad *pad, const char *caps) {
    GstCaps *preferences = gst_caps_from_string(caps);
    if (preferences == NULL) return FALSE;
    GObject *transceiver = NULL;
    g_object_get(pad, "transceiver", &transceiver, NULL);
    if (transceiver == NULL) {
        gst_caps_unref(preferences);
        return FALSE;
    }
    g_object_set(transceiver, "direction", GST_WEBRTC_RTP_TRANSCEIVER_DIRECTION_SENDONLY, "codec-preferences", preferences, NULL);
    gst_caps_unref(preferences);
    g_object_unref(transceiver);
    return TRUE;
}

gboolean capture_pad_request_key_frame(GstPad *pad) {
    GstEvent *event = gst_video_event_new_upstream_force_key_unit(GST_CLOCK_TIME_NONE, TRUE, 0);
    return gst_pad_send_event(pad, event);
}
