// webrtcbin's action signals take and give GstPromise and GstWebRTCSessionDescription values, and the
// states it reports are enum properties: the plumbing is C, a few functions with Swift wrappers in
// Sources/GStreamer/WebRTC.swift. The webrtc and sdp headers stay in webrtc.c.
#ifndef CAPTURE_WEBRTC_SHIM_H
#define CAPTURE_WEBRTC_SHIM_H

#include <gst/gst.h>

/// Why: "create-offer" and "set-local-description" are action signals answered through a GstPromise
/// (g_signal_emit_by_name is variadic). Creates an offer and makes it the local description, waiting
/// for each promise up to `timeout_ms`. On failure returns FALSE and sets `*error` (g_free it).
gboolean capture_webrtc_create_offer(GstElement *webrtc, guint timeout_ms, char **error);

/// Why: "set-remote-description" takes a GstWebRTCSessionDescription built from a GstSDPMessage.
/// Parses `sdp` as an answer and sets it, waiting for the promise up to `timeout_ms`. On failure
/// returns FALSE and sets `*error` (g_free it).
gboolean capture_webrtc_set_remote_answer(GstElement *webrtc, const char *sdp, guint timeout_ms, char **error);

/// Why: "local-description" is a boxed GstWebRTCSessionDescription. Its SDP text (g_free it), or NULL.
char *capture_webrtc_local_sdp(GstElement *webrtc);

/// Why: "ice-gathering-state" and "connection-state" are enum properties. Their values as ints
/// (GstWebRTCICEGatheringState: 0 new, 1 gathering, 2 complete; GstWebRTCPeerConnectionState:
/// 0 new, 1 connecting, 2 connected, 3 disconnected, 4 failed, 5 closed).
int capture_webrtc_ice_gathering_state(GstElement *webrtc);
int capture_webrtc_connection_state(GstElement *webrtc);

/// Why: a sink pad's transceiver is an object property with an enum "direction" and boxed
/// "codec-preferences". Makes the pad's transceiver send-only (a viewer receives, never sends) and
/// offering exactly `caps` (so that the offer does not wait for the first buffer). FALSE when the caps
/// do not parse or the pad has no transceiver.
gboolean capture_webrtc_pad_configure(GstPad *pad, const char *caps);

/// Why: gst_video_event_new_upstream_force_key_unit builds the event; sent upstream from `pad` so that
/// the encoder makes a key frame now (a viewer that joins starts decoding at once).
gboolean capture_pad_request_key_frame(GstPad *pad);

#endif
