#define _GNU_SOURCE  // dup3
#include "CV4L2.h"
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/videodev2.h>

/// One control's current value through VIDIOC_S_EXT_CTRLS or VIDIOC_G_EXT_CTRLS. 0 or -errno.
static int current_value(int fd, unsigned long request, struct v4l2_ext_control *control) {
    struct v4l2_ext_controls controls;
    memset(&controls, 0, sizeof controls);
    controls.which = V4L2_CTRL_WHICH_CUR_VAL;
    controls.count = 1;
    controls.controls = control;
    return ioctl(fd, request, &controls) < 0 ? -errno : 0;
}

int capture_v4l2_open(const char *path) {
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    return fd < 0 ? -errno : fd;
}

void capture_v4l2_close(int fd) { if (fd >= 0) close(fd); }

int capture_v4l2_release_vanished(const char *path) {
    char wanted[PATH_MAX + 16];
    if (snprintf(wanted, sizeof wanted, "%s (deleted)", path) >= (int)sizeof wanted) return -ENAMETOOLONG;
    DIR *fds = opendir("/proc/self/fd");
    if (!fds) return -errno;
    int released = 0;
    struct dirent *entry;
    while ((entry = readdir(fds))) {
        char *end;
        long fd = strtol(entry->d_name, &end, 10);
        if (*end != '\0' || end == entry->d_name || fd == dirfd(fds)) continue;
        char link[64], target[PATH_MAX + 16];
        snprintf(link, sizeof link, "/proc/self/fd/%ld", fd);
        ssize_t length = readlink(link, target, sizeof target - 1);
        if (length < 0) continue;
        target[length] = '\0';
        if (strcmp(target, wanted) != 0) continue;
        int null = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (null < 0) break;
        // The number stays taken (its owner may close it later, closing /dev/null then); the removed
        // node's file is let go.
        if (dup3(null, (int)fd, O_CLOEXEC) == (int)fd) released++;
        close(null);
    }
    closedir(fds);
    return released;
}

int capture_v4l2_next_control(int fd, uint32_t previous, capture_v4l2_control *out) {
    struct v4l2_query_ext_ctrl query;
    for (;;) {
        memset(&query, 0, sizeof query);
        query.id = previous | V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND;
        if (ioctl(fd, VIDIOC_QUERY_EXT_CTRL, &query) < 0) {
            return errno == EINVAL ? 0 : -errno;
        }
        previous = query.id;
        if (query.type == V4L2_CTRL_TYPE_CTRL_CLASS || (query.flags & V4L2_CTRL_FLAG_DISABLED)) continue;
        break;
    }
    memset(out, 0, sizeof *out);
    out->id = query.id;
    out->type = query.type;
    strncpy(out->name, query.name, sizeof out->name - 1);
    out->minimum = query.minimum;
    out->maximum = query.maximum;
    out->step = query.step;
    out->default_value = query.default_value;
    out->flags = query.flags;
    if (query.type != V4L2_CTRL_TYPE_BUTTON && !(query.flags & V4L2_CTRL_FLAG_WRITE_ONLY) &&
        !(query.flags & V4L2_CTRL_FLAG_HAS_PAYLOAD)) {
        struct v4l2_ext_control control;
        memset(&control, 0, sizeof control);
        control.id = query.id;
        if (current_value(fd, VIDIOC_G_EXT_CTRLS, &control) == 0) {
            out->value = query.type == V4L2_CTRL_TYPE_INTEGER64 ? control.value64 : control.value;
            out->has_value = 1;
        }
    }
    return 1;
}

int capture_v4l2_is_busy(const char *path) {
    int fd = capture_v4l2_open(path);
    if (fd < 0) return fd;
    struct v4l2_format format;
    memset(&format, 0, sizeof format);
    format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    int busy = 0;
    if (ioctl(fd, VIDIOC_G_FMT, &format) == 0 && ioctl(fd, VIDIOC_S_FMT, &format) < 0 && errno == EBUSY) busy = 1;
    close(fd);
    return busy;
}

int capture_v4l2_is_present(const char *path) {
    int fd = capture_v4l2_open(path);
    if (fd < 0) return 0;
    struct v4l2_capability capability;
    memset(&capability, 0, sizeof capability);
    int present = ioctl(fd, VIDIOC_QUERYCAP, &capability) == 0;
    close(fd);
    return present;
}


int capture_v4l2_menu_item(int fd, uint32_t id, uint32_t index, char *name, int name_size) {
    struct v4l2_querymenu menu;
    memset(&menu, 0, sizeof menu);
    menu.id = id;
    menu.index = index;
    if (ioctl(fd, VIDIOC_QUERYMENU, &menu) < 0) return 0;
    strncpy(name, (const char *)menu.name, name_size - 1);
    name[name_size - 1] = 0;
    return 1;
}

int capture_v4l2_integer_menu_item(int fd, uint32_t id, uint32_t index, int64_t *value) {
    struct v4l2_querymenu menu;
    memset(&menu, 0, sizeof menu);
    menu.id = id;
    menu.index = index;
    if (ioctl(fd, VIDIOC_QUERYMENU, &menu) < 0) return 0;
    *value = menu.value;
    return 1;
}

/// Opens a node read-write (a control write needs it) and asks the control's type.
/// Returns the descriptor, or -errno (the node is closed then).
static int open_control(const char *path, uint32_t id, struct v4l2_query_ext_ctrl *query) {
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) return -errno;
    memset(query, 0, sizeof *query);
    query->id = id;
    if (ioctl(fd, VIDIOC_QUERY_EXT_CTRL, query) < 0) {
        int error = -errno;
        close(fd);
        return error;
    }
    return fd;
}

int capture_v4l2_set_control(const char *path, uint32_t id, int64_t value) {
    struct v4l2_query_ext_ctrl query;
    int fd = open_control(path, id, &query);
    if (fd < 0) return fd;
    struct v4l2_ext_control control;
    memset(&control, 0, sizeof control);
    control.id = id;
    if (query.type == V4L2_CTRL_TYPE_INTEGER64) control.value64 = value;
    else control.value = (int32_t)value;
    int result = current_value(fd, VIDIOC_S_EXT_CTRLS, &control);
    close(fd);
    return result;
}

int capture_v4l2_set_rect_control(const char *path, uint32_t id, int32_t left, int32_t top, uint32_t width, uint32_t height) {
    struct v4l2_query_ext_ctrl query;
    int fd = open_control(path, id, &query);
    if (fd < 0) return fd;
    struct v4l2_rect rect = { .left = left, .top = top, .width = width, .height = height };
    struct v4l2_ext_control control;
    memset(&control, 0, sizeof control);
    control.id = id;
    control.size = sizeof rect;
    control.ptr = &rect;
    int result = current_value(fd, VIDIOC_S_EXT_CTRLS, &control);
    close(fd);
    return result;
}

int capture_v4l2_format_size(const char *path, uint32_t *width, uint32_t *height) {
    int fd = capture_v4l2_open(path);
    if (fd < 0) return fd;
    struct v4l2_format format;
    memset(&format, 0, sizeof format);
    format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    int result = ioctl(fd, VIDIOC_G_FMT, &format) < 0 ? -errno : 0;
    if (result == 0) {
        *width = format.fmt.pix.width;
        *height = format.fmt.pix.height;
    }
    close(fd);
    return result;
}
