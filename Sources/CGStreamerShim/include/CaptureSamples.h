// Encoded samples handed from one pipeline to another: their times, key-frame flags and appsrc
// pushes. Wrapped by Sources/GStreamer/SampleTiming.swift; the RTSP shim uses the retimed push too.
#ifndef CAPTURE_SAMPLES_SHIM_H
#define CAPTURE_SAMPLES_SHIM_H

#include <gst/gst.h>

/// Why: GST_BUFFER_PTS/DTS are macros. Pushes a copy of the sample's buffer (sharing its memory) into
/// a live appsrc of another pipeline, its running time (by the sample's segment) moved onto that
/// pipeline's running time by `*offset` (set at the first sample once that pipeline has a clock; start
/// it at G_MININT64; share it between the audio and video of one receiver to keep them in sync); sets
/// the appsrc's caps first when the sample's differ.
void capture_appsrc_push_retimed(GstElement *appsrc, GstSample *sample, gint64 *offset);

/// Why: GST_BUFFER_PTS/DTS are macros. Pushes a copy of the sample's buffer (sharing its memory) into
/// an appsrc with its timestamps moved back by `shift` nanoseconds (a pre-roll recording's file starts
/// at 0); sets the appsrc's caps first when the sample's differ. Returns the GstFlowReturn.
int capture_appsrc_push_shifted(GstElement *appsrc, GstSample *sample, guint64 shift);

/// Why: GST_BUFFER_PTS is a macro. The sample's buffer's PTS, or G_MAXUINT64 (GST_CLOCK_TIME_NONE).
guint64 capture_sample_pts(GstSample *sample);

/// Why: GST_BUFFER_PTS is a macro. The running time of the sample's buffer's PTS through the sample's
/// segment (x264enc moves its timestamps by 1000 hours and its segment with them), or G_MAXUINT64.
guint64 capture_sample_running_time(GstSample *sample);

/// Why: gst_video_event_new_upstream_force_key_unit lives in gstvideo with a GstClockTime argument
/// whose "none" is a macro. Asks the encoder upstream of `pad` (a sink pad) for a key frame (with SPS/PPS).
gboolean capture_request_key_frame(GstPad *pad);

/// Why: GST_BUFFER_FLAG_IS_SET is a macro. 1 when the sample's buffer is a key frame (no DELTA_UNIT).
int capture_sample_is_key_frame(GstSample *sample);

#endif
