#ifndef CAPTURE_CX11_H
#define CAPTURE_CX11_H
#include <X11/Xlib.h>
#include <X11/Xutil.h>
#endif
