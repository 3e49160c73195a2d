// V4L2 control queries. Why a C target: VIDIOC_* request numbers are function-like macros (_IOWR)
// that Swift cannot import.
#ifndef CAPTURE_CV4L2_H
#define CAPTURE_CV4L2_H
#include <stdint.h>

typedef struct capture_v4l2_control {
    uint32_t id;
    uint32_t type;      // enum v4l2_ctrl_type
    char name[32];
    int64_t minimum;
    int64_t maximum;
    uint64_t step;
    int64_t default_value;
    int64_t value;       // current value (0 when it cannot be read, see has_value)
    int has_value;
    uint32_t flags;
} capture_v4l2_control;

/// Opens a device node read-only, non-blocking. Returns a file descriptor or -errno.
int capture_v4l2_open(const char *path);
void capture_v4l2_close(int fd);

/// Points every descriptor of this process still open on the removed node `path` (its /proc/self/fd
/// link reads "<path> (deleted)") at /dev/null instead, keeping each number taken. Returns how many, or
/// -errno when /proc/self/fd cannot be read.
int capture_v4l2_release_vanished(const char *path);

/// Fills `out` with the control after `previous` (0 to start). Returns 1 when a control was found,
/// 0 at the end of the list, -errno on error. Class and disabled controls are skipped.
int capture_v4l2_next_control(int fd, uint32_t previous, capture_v4l2_control *out);


/// 1 when another handle streams from the device (setting its format fails with EBUSY), 0 when not,
/// -errno when the node cannot be opened.
int capture_v4l2_is_busy(const char *path);

/// 1 when the node opens and answers VIDIOC_QUERYCAP (the device is there, even if another handle
/// streams from it), 0 when it does not (unplugged, or its driver disconnected it: ENOENT/ENODEV).
int capture_v4l2_is_present(const char *path);

/// The name of a menu item, or empty when the index is not a valid item. Returns 1 when found.
int capture_v4l2_menu_item(int fd, uint32_t id, uint32_t index, char *name, int name_size);

/// The value of an integer menu item (V4L2_CTRL_TYPE_INTEGER_MENU). Returns 1 when the index is a valid
/// item, 0 when it is not.
int capture_v4l2_integer_menu_item(int fd, uint32_t id, uint32_t index, int64_t *value);

/// Sets one control of a device node (integer, boolean, menu, integer menu, bitmask, button, 64-bit
/// integer) with VIDIOC_S_EXT_CTRLS; the control's type is asked first (VIDIOC_QUERY_EXT_CTRL) so a
/// 64-bit value goes where the driver reads it. Opens and closes the node. Returns 0, or -errno:
/// -ENOENT/-ENODEV (the node is gone), -EINVAL (no such control), -ERANGE (out of range), -EACCES
/// (read-only or inactive), -EBUSY (another handle grabbed it) ...
int capture_v4l2_set_control(const char *path, uint32_t id, int64_t value);

/// Sets a rectangle control (V4L2_CTRL_TYPE_RECT, e.g. UVC's region of interest) with
/// VIDIOC_S_EXT_CTRLS. Returns 0, or -errno.
int capture_v4l2_set_rect_control(const char *path, uint32_t id, int32_t left, int32_t top, uint32_t width, uint32_t height);

/// The size of the node's current capture format (VIDIOC_G_FMT). Returns 0, or -errno.
int capture_v4l2_format_size(const char *path, uint32_t *width, uint32_t *height);
#endif
