// Encoded samples handed from one pipeline to another (appsink to appsrc), their times and key-frame
// flags: what Sources/GStreamer/SampleTiming.swift wraps. The RTSP shim (CStreamShim) pushes with
// capture_appsrc_push_retimed too.
#include "CaptureSamples.h"
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>

void capture_appsrc_push_retimed(GstElement *appsrc, GstSample *sample, gint64 *offset) {
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    if (!buffer) return;
    GstCaps *caps = gst_sample_get_caps(sample);
    if (caps) {
        GstCaps *current = gst_app_src_get_caps(GST_APP_SRC(appsrc));
        if (!current || !gst_caps_is_equal(caps, current)) gst_app_src_set_caps(GST_APP_SRC(appsrc), caps);
        gst_clear_caps(&current);
    }
    GstBuffer *copy = gst_buffer_copy(buffer);
    // The receiving pipeline runs on a clock of its own: the samples keep their spacing, shifted once
    // (at the first sample after that pipeline has a clock) onto its running time.
    GstClockTime pts = GST_BUFFER_PTS(buffer);
    // From the sample's running time in the session, not its timestamp: the audio and the video share
    // `*offset`, and their timestamps are on different scales (x264enc's output segment, like any
    // GstVideoEncoder's that may reorder frames, starts at 1000 hours). Timestamps less the video's
    // offset put every audio buffer at 0: one RTP time for all of them, which readers cannot place.
    gint64 to_running = 0;
    const GstSegment *segment = gst_sample_get_segment(sample);
    guint64 running = 0;
    if (segment && segment->format == GST_FORMAT_TIME && GST_CLOCK_TIME_IS_VALID(pts) &&
        gst_segment_to_running_time_full(segment, GST_FORMAT_TIME, pts, &running) == 1) {
        to_running = (gint64)running - (gint64)pts;
    }
    GstClock *clock = gst_element_get_clock(appsrc);
    if (clock && GST_CLOCK_TIME_IS_VALID(pts)) {
        if (*offset == G_MININT64) {
            GstClockTime now = gst_clock_get_time(clock);
            GstClockTime base = gst_element_get_base_time(appsrc);
            *offset = (gint64)(now - base) - ((gint64)pts + to_running);
        }
        gint64 shifted = (gint64)pts + to_running + *offset;
        GST_BUFFER_PTS(copy) = shifted > 0 ? (GstClockTime)shifted : 0;
        if (GST_CLOCK_TIME_IS_VALID(GST_BUFFER_DTS(buffer))) {
            gint64 dts = (gint64)GST_BUFFER_DTS(buffer) + to_running + *offset;
            GST_BUFFER_DTS(copy) = dts > 0 ? (GstClockTime)dts : 0;
        }
    } else {
        GST_BUFFER_PTS(copy) = GST_CLOCK_TIME_NONE;
        GST_BUFFER_DTS(copy) = GST_CLOCK_TIME_NONE;
    }
    if (clock) gst_object_unref(clock);
    gst_app_src_push_buffer(GST_APP_SRC(appsrc), copy);
}

gboolean capture_request_key_frame(GstPad *pad) {
    GstEvent *event = gst_video_event_new_upstream_force_key_unit(GST_CLOCK_TIME_NONE, TRUE, 0);
    // Pushed from the sink pad to its peer, upstream towards the encoder.
    return gst_pad_push_event(pad, event);
}

int capture_sample_is_key_frame(GstSample *sample) {
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    return buffer && !GST_BUFFER_FLAG_IS_SET(buffer, GST_BUFFER_FLAG_DELTA_UNIT);
}

static void set_caps_from_sample(GstElement *appsrc, GstSample *sample) {
    GstCaps *caps = gst_sample_get_caps(sample);
    if (!caps) return;
    GstCaps *current = gst_app_src_get_caps(GST_APP_SRC(appsrc));
    if (!current || !gst_caps_is_equal(caps, current)) gst_app_src_set_caps(GST_APP_SRC(appsrc), caps);
    gst_clear_caps(&current);
}

int capture_appsrc_push_shifted(GstElement *appsrc, GstSample *sample, guint64 shift) {
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    if (!buffer) return GST_FLOW_ERROR;
    set_caps_from_sample(appsrc, sample);
    GstBuffer *copy = gst_buffer_copy(buffer);
    if (GST_CLOCK_TIME_IS_VALID(GST_BUFFER_PTS(buffer))) {
        GST_BUFFER_PTS(copy) = GST_BUFFER_PTS(buffer) > shift ? GST_BUFFER_PTS(buffer) - shift : 0;
    }
    if (GST_CLOCK_TIME_IS_VALID(GST_BUFFER_DTS(buffer))) {
        GST_BUFFER_DTS(copy) = GST_BUFFER_DTS(buffer) > shift ? GST_BUFFER_DTS(buffer) - shift : 0;
    }
    return gst_app_src_push_buffer(GST_APP_SRC(appsrc), copy);
}

guint64 capture_sample_pts(GstSample *sample) {
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    return buffer ? GST_BUFFER_PTS(buffer) : GST_CLOCK_TIME_NONE;
}

guint64 capture_sample_running_time(GstSample *sample) {
    GstBuffer *buffer = gst_sample_get_buffer(sample);
    if (!buffer || !GST_CLOCK_TIME_IS_VALID(GST_BUFFER_PTS(buffer))) return GST_CLOCK_TIME_NONE;
    GstSegment *segment = gst_sample_get_segment(sample);
    if (!segment || segment->format != GST_FORMAT_TIME) return GST_BUFFER_PTS(buffer);
    return gst_segment_to_running_time(segment, GST_FORMAT_TIME, GST_BUFFER_PTS(buffer));
}
