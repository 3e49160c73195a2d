#ifndef CAPTURE_CMOSQUITTO_H
#define CAPTURE_CMOSQUITTO_H
// libmosquitto (Debian's libmosquitto-dev): the MQTT client behind `--events mqtt://...`.
#include <mosquitto.h>
#endif
