#ifndef CAPTURE_CGTK_H
#define CAPTURE_CGTK_H
#include <gtk/gtk.h>
#endif
