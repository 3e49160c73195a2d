#ifndef CAPTURE_CZBAR_H
#define CAPTURE_CZBAR_H
#include <zbar.h>
#endif
