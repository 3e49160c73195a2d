#ifndef CAPTURE_CGSTREAMER_H
#define CAPTURE_CGSTREAMER_H
#include <gst/gst.h>
#include <gst/app/gstappsink.h>
#include <gst/app/gstappsrc.h>
#include <gst/video/video.h>
#include <gst/pbutils/pbutils.h>
#include <gst/check/gsttestclock.h>
#endif
