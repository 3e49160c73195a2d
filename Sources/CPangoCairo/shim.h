#ifndef CAPTURE_CPANGOCAIRO_H
#define CAPTURE_CPANGOCAIRO_H
// Cairo (2D drawing into premultiplied ARGB pixels) and Pango (text layout, fonts through fontconfig):
// what overlays are drawn with.
#include <cairo.h>
#include <pango/pangocairo.h>
#endif
