#ifndef CAPTURE_CGSTRTSPSERVER_H
#define CAPTURE_CGSTRTSPSERVER_H
#include <gst/rtsp-server/rtsp-server.h>
#endif
