#!/usr/bin/python3
"""The desktop camera app (examples/camera-app), end to end under Xvfb.

Usage: scripts/test-camera-app.py [PATH-TO-camera-app] (default .build/debug/camera-app)

Starts its own X server (Xvfb on a display number it picks itself, scripts/xvfb.py), runs the app on the test pattern with GTK's
cairo renderer, and drives it only with real input events sent through the X server (xdotool key,
mousemove, click): no call into the app. What it checks is read from screenshots (ImageMagick's
`import -window root`, pixels compared), from the files the app writes (identify, ffprobe) and from
the app's event log (stdout) and frame log (--log-frames: one line per preview frame as it arrives,
with its monotonic arrival time, which judges the preview's gaps). Screenshots are saved in
.build/camera-app-test/ for people to look at. Every wait is bounded; Xvfb and the app are killed at
the end, also on failure. Prints 'N passed, N failed' and exits non-zero on any failure.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xvfb  # noqa: E402 (scripts/xvfb.py: an X server of our own)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHOTS = os.path.join(ROOT, ".build", "camera-app-test")
APP = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "debug", "camera-app"))
TOTAL_SECONDS = 300
MAX_GAP = 0.100

results = []  # (name, ok, detail)
processes = []  # started processes, killed at the end


def check(name, ok, detail=""):
    results.append((name, bool(ok), detail))
    print(("PASS " if ok else "FAIL ") + name + (f": {detail}" if detail else ""), flush=True)
    return bool(ok)


def run(args, timeout=30, **kwargs):
    return subprocess.run(args, capture_output=True, text=True, timeout=timeout, **kwargs)


# MARK: X server and input


def start_xvfb():
    server, display = xvfb.start("1280x800x24", timeout=10)
    processes.append(server)
    return display


class Display:
    def __init__(self, name):
        self.env = dict(os.environ, DISPLAY=name)
        self.origin = (0, 0)

    def xdotool(self, *args):
        return run(["xdotool", *args], timeout=10, env=self.env)

    def key(self, *keys):
        for key in keys:
            self.xdotool("key", key)
            time.sleep(0.15)

    def click(self, x, y):
        self.xdotool("mousemove", str(self.origin[0] + x), str(self.origin[1] + y))
        time.sleep(0.1)
        self.xdotool("click", "1")

    def find_window(self, title, timeout=15):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = self.xdotool("search", "--name", f"^{title}$")
            ids = found.stdout.split()
            if ids:
                geometry = self.xdotool("getwindowgeometry", ids[-1]).stdout
                match = re.search(r"Position: (\d+),(\d+)", geometry)
                if match:
                    self.origin = (int(match.group(1)), int(match.group(2)))
                # Keys go to the window under the pointer (no window manager): keep it inside.
                self.xdotool("mousemove", str(self.origin[0] + 480), str(self.origin[1] + 300))
                return True
            time.sleep(0.2)
        return False

    def screenshot(self, name):
        path = os.path.join(SHOTS, name + ".png")
        run(["import", "-window", "root", path], timeout=20, env=self.env)
        return Image(path, self.origin)

    def screenshot_until(self, name, test, timeout=15):
        """Screenshots until `test(image)` holds, at most `timeout` seconds, and returns the last one:
        a check of the screen waits for the state it checks (the app draws when GTK's frame clock
        says), it does not sleep and look once."""
        deadline = time.monotonic() + timeout
        while True:
            shot = self.screenshot(name)
            if test(shot) or time.monotonic() > deadline:
                return shot
            time.sleep(0.1)


class Image:
    """A screenshot's pixels (read through ImageMagick as PPM), in window coordinates."""

    def __init__(self, path, origin):
        self.path = path
        self.origin = origin
        data = subprocess.run(["convert", path, "ppm:-"], capture_output=True, timeout=20).stdout
        header = re.match(rb"P6\s+(\d+)\s+(\d+)\s+(\d+)\s", data)
        self.width, self.height = int(header.group(1)), int(header.group(2))
        self.pixels = data[header.end():]

    def pixel(self, x, y):
        x, y = x + self.origin[0], y + self.origin[1]
        index = (y * self.width + x) * 3
        return tuple(self.pixels[index:index + 3])

    def region(self, x0, y0, x1, y1, step=2):
        return [self.pixel(x, y) for y in range(y0, y1, step) for x in range(x0, x1, step)]


def colour_name(rgb):
    """The SMPTE bar colour a pixel is (or None)."""
    high = [value > 150 for value in rgb]
    low = [value < 90 for value in rgb]
    names = {
        (True, True, True): "white", (True, True, False): "yellow", (False, True, True): "cyan",
        (False, True, False): "green", (True, False, True): "magenta", (True, False, False): "red",
        (False, False, True): "blue",
    }
    key = tuple(high)
    if all(h or l for h, l in zip(high, low)):
        return names.get(key)
    return None


BARS = ["white", "yellow", "cyan", "green", "magenta", "red", "blue"]


def bars_in(image, x0, y0, width, height):
    """The colours of the seven top bars of a SMPTE picture shown at x0, y0 (width x height)."""
    y = y0 + int(height * 0.3)
    return [colour_name(image.pixel(x0 + int(width * (i + 0.5) / 7), y)) for i in range(7)]


def differing(a, b, box):
    pa, pb = a.region(*box), b.region(*box)
    return sum(1 for p, q in zip(pa, pb) if max(abs(p[i] - q[i]) for i in range(3)) > 40)


# MARK: The app


class App:
    def __init__(self, display, workdir, extra, name):
        self.display = display
        self.pictures = os.path.join(workdir, "Pictures")
        self.videos = os.path.join(workdir, "Videos")
        self.output = os.path.join(workdir, "out")
        self.frames = os.path.join(workdir, f"{name}-frames.log")
        self.log_path = os.path.join(SHOTS, f"{name}.log")
        for folder in (self.pictures, self.videos, self.output):
            os.makedirs(folder, exist_ok=True)
        env = dict(
            display.env, GSK_RENDERER="cairo", GDK_BACKEND="x11", NO_AT_BRIDGE="1", GTK_A11Y="none",
            CAPTURE_PICTURES_DIR=self.pictures, CAPTURE_VIDEOS_DIR=self.videos)
        self.log_file = open(self.log_path, "w")
        self.process = subprocess.Popen(
            [APP, "--output-dir", self.output, "--log-frames", self.frames, "--size", "960x600", *extra],
            stdout=self.log_file, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        processes.append(self.process)
        self.seen = 0  # events before this index were consumed

    def events(self):
        with open(self.log_path) as handle:
            lines = [line.split(None, 3) for line in handle if line.startswith("event ")]
        return [(float(parts[1]), parts[2], parts[3].strip() if len(parts) > 3 else "") for parts in lines]

    def wait(self, name, timeout=15, consume=True):
        """The next event `name` after the ones consumed: (time, fields dict, raw), or None."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            events = self.events()
            for index in range(self.seen, len(events)):
                if events[index][1] == name:
                    if consume:
                        self.seen = index + 1
                    stamp, _, raw = events[index]
                    return stamp, dict(re.findall(r'([\w-]+)=("[^"]*"|\S+)', raw)), raw
            if self.process.poll() is not None:
                return None
            time.sleep(0.05)
        return None

    def skip_to_end(self):
        self.seen = len(self.events())

    def frames_between(self, start, end):
        times = []
        with open(self.frames) as handle:
            for line in handle:
                parts = line.split()
                if len(parts) >= 4 and start <= float(parts[3]) <= end:
                    times.append(float(parts[3]))
        return times

    def stop(self):
        if self.process.poll() is None:
            self.display.key("ctrl+q")
            try:
                self.process.wait(timeout=8)
            except subprocess.TimeoutExpired:
                pass
        self.log_file.close()


def identify(path):
    out = run(["identify", "-format", "%w %h", path]).stdout.split()
    return (int(out[0]), int(out[1])) if len(out) == 2 else None


def probe(path):
    out = run(["ffprobe", "-v", "error", "-show_entries", "format=duration:stream=codec_type,codec_name",
               "-of", "default=noprint_wrappers=1", path]).stdout
    duration = re.search(r"duration=([\d.]+)", out)
    return (float(duration.group(1)) if duration else None), re.findall(r"codec_name=(\w+)", out)


def files(folder):
    return sorted(name for name in os.listdir(folder) if not name.startswith("."))


# MARK: The checks


def main_session(display, workdir):
    app = App(display, workdir, ["--input", "test-pattern"], "app")
    check("the window appears", display.find_window("Camera"))
    first = app.wait("first-frame", timeout=30)
    if not check("the preview's first frame arrives", first):
        return app
    check("the first frame already has the view's size (960x600)", first[1].get("size") == "960x600", first[2])

    # The preview: the test pattern's bars, letterboxed into the 960x600 window (960x540 at y=30).
    one = display.screenshot_until("01-preview", lambda shot: bars_in(shot, 0, 30, 960, 540) == BARS)
    bars = bars_in(one, 0, 30, 960, 540)
    check("the preview shows the SMPTE bars", bars == BARS, f"bars read {bars}")
    two = display.screenshot_until("02-preview-later", lambda shot: differing(one, shot, (730, 440, 950, 515)) > 500, timeout=5)
    moved = differing(one, two, (730, 440, 950, 515))
    check("the preview moves (the pattern's noise area changes)", moved > 500, f"{moved} pixels changed")

    # Tap to focus: the point converted through the preview's geometry (the letterbox undone).
    display.click(96, 30 + 108)
    tap = app.wait("tap")
    device = tuple(float(v) for v in tap[1]["device"].split(",")) if tap else (9, 9)
    check("a tap converts to the camera's point (0.1, 0.2)", abs(device[0] - 0.1) < 0.01 and abs(device[1] - 0.2) < 0.01, tap and tap[2])

    # The test pattern has no flash, torch or second camera: their buttons are hidden, their keys do nothing.
    app.skip_to_end()
    display.key("f", "t", "c")
    time.sleep(0.5)
    names = {event[1] for event in app.events()[app.seen:]}
    check("no flash, torch or camera switch on the test pattern", not names & {"flash", "torch", "camera"}, f"events {sorted(names)}")

    # Gravity: aspect (bars above and below), fill (the whole view), stretch, and back.
    display.key("g")
    fill = app.wait("gravity")
    filled = display.screenshot_until("02-gravity-fill", lambda shot: max(shot.pixel(200, 4)) > 60)
    display.key("g", "g")
    app.wait("gravity")
    app.wait("gravity")
    letterboxed = display.screenshot_until("02-gravity-aspect", lambda shot: max(shot.pixel(200, 4)) < 20)
    check("resize-aspect-fill fills the letterbox band, resize-aspect leaves it black",
          fill and fill[1].get("value") == "resize-aspect-fill" and max(filled.pixel(200, 4)) > 60 and max(letterboxed.pixel(200, 4)) < 20,
          f"fill {filled.pixel(200, 4)}, aspect {letterboxed.pixel(200, 4)}")

    # The view follows its window's size: frames come at the new size.
    window = display.xdotool("search", "--name", "^Camera$").stdout.split()[-1]
    display.xdotool("windowsize", window, "800", "500")

    def last_sizes():
        return [line.split()[4] for line in open(app.frames)][-3:]

    resized = display.screenshot_until("02-resized", lambda shot: last_sizes() == ["800x500"] * 3 and bars_in(shot, 0, 25, 800, 450) == BARS)
    sizes = last_sizes()
    bars = bars_in(resized, 0, 25, 800, 450)
    check("after a resize to 800x500 the frames are 800x500 and show the bars", sizes == ["800x500"] * 3 and bars == BARS, f"sizes {sizes}, bars {bars}")
    display.xdotool("windowsize", window, "960", "600")
    display.screenshot_until("02-resized-back", lambda shot: last_sizes() == ["960x600"] * 3 and bars_in(shot, 0, 30, 960, 540) == BARS)

    # No video yet (recipe 9-3's message).
    app.skip_to_end()
    display.key("x")
    message = app.wait("message")
    check("'No Video Recorded Yet' before any recording", message and "No Video Recorded Yet" in message[2], message and message[2])

    # Shutter: one photo in the album, shown in the grid.
    display.key("space")
    saved = app.wait("photo-saved", timeout=15)
    check("the shutter saves one photo to the album", saved and files(app.pictures) == ["IMG_0001.jpg"], f"{files(app.pictures)}")
    if saved:
        check("the photo is 1280x720", identify(os.path.join(app.pictures, "IMG_0001.jpg")) == (1280, 720))
    display.key("a")
    album = app.wait("album")
    grid = display.screenshot_until("03-album", lambda shot: {"yellow", "cyan", "magenta"} <= {colour_name(p) for p in shot.region(0, 50, 320, 280)})
    check("the album lists the photo", album and album[1].get("photos") == "1", album and album[2])
    colours = {colour_name(p) for p in grid.region(0, 50, 320, 280)}
    check("the grid shows the photo's thumbnail", {"yellow", "cyan", "magenta"} <= colours, f"colours {sorted(c for c in colours if c)}")
    display.key("Return")
    opened = app.wait("open")
    viewer = display.screenshot_until("04-viewer", lambda shot: bars_in(shot, 0, 48 + 6, 960, 540).count(None) <= 1)
    shown = bars_in(viewer, 0, 48 + 6, 960, 540)
    check("the viewer opens the photo", opened and shown.count(None) <= 1, f"bars read {shown}")
    display.key("Escape", "Escape")
    app.wait("page")

    # Photo -> video -> photo on the running session, recording between, without a preview gap.
    app.skip_to_end()
    display.key("v")
    begin = app.wait("mode-switch-begin")
    to_video = app.wait("mode-switch-end", timeout=15)
    check("video mode is entered", to_video and to_video[1].get("mode") == "video", to_video and to_video[2])
    display.key("r")
    started = app.wait("recording-started", timeout=15)
    check("recording starts", started)
    # Recording for a second and more, then the window while it records (the shutter turns red).
    time.sleep(1.2)
    recording = display.screenshot_until("05-recording", lambda shot: shot.pixel(480, 559)[0] > 150 and max(shot.pixel(480, 559)[1:]) < 90)
    # The picture for the README (docs/camera-app.png): the window while it records.
    run(["convert", recording.path, "-crop", "960x600+%d+%d" % display.origin, "+repage", os.path.join(SHOTS, "camera-app.png")])
    red = recording.pixel(480, 559)
    check("the shutter shows the recording (red)", red[0] > 150 and red[1] < 90 and red[2] < 90, f"pixel {red}")
    time.sleep(1.0)
    display.key("r")
    stopped = app.wait("recording-stopped", timeout=15)
    check("recording stops", stopped, stopped and stopped[2])
    display.key("v")
    to_photo = app.wait("mode-switch-end", timeout=15)
    check("photo mode is back", to_photo and to_photo[1].get("mode") == "photo", to_photo and to_photo[2])
    time.sleep(0.6)
    if begin and to_photo:
        times = app.frames_between(begin[0] - 0.5, to_photo[0] + 0.5)
        gaps = [b - a for a, b in zip(times, times[1:])]
        worst = max(gaps) if gaps else 99
        check(f"no preview gap over {int(MAX_GAP * 1000)} ms across both switches and the recording",
              len(times) > 30 and worst <= MAX_GAP, f"{len(times)} frames, largest gap {worst * 1000:.1f} ms")
    if stopped:
        path = stopped[1].get("path", "")
        duration, codecs = probe(path)
        check("the recording is a file ffprobe reads", duration and 1.5 <= duration <= 3.5 and "h264" in codecs,
              f"{os.path.basename(path)}: {duration} s, {codecs}")
        check("the recording is in the album's Videos", os.path.dirname(path) == app.videos)

    # The recording in the player (GTK's GStreamer media backend).
    if stopped:
        display.key("a")
        app.wait("album")
        display.key("Return")  # the newest item: the recording
        opened = app.wait("open")
        player = display.screenshot_until(
            "09-player", lambda shot: {"yellow", "cyan", "magenta"} <= {colour_name(p) for p in shot.region(0, 60, 960, 520, step=8)})
        colours = {colour_name(p) for p in player.region(0, 60, 960, 520, step=8)}
        check("the player shows the recording", opened and opened[1].get("kind") == "video" and {"yellow", "cyan", "magenta"} <= colours,
              f"{opened and opened[2]}; colours {sorted(c for c in colours if c)}")
        display.key("Escape", "Escape")
        app.wait("page")

    # The crop step after a shot (recipe 9-1): the original and the edited image.
    display.key("e")
    app.wait("edit-after-shot")
    display.key("space")
    crop = app.wait("crop-open", timeout=15)
    time.sleep(0.8)
    display.screenshot("06-crop")
    display.key("Return")
    cropped = app.wait("crop-saved", timeout=15)
    if check("the crop step returns both images", cropped, cropped and cropped[2]):
        original, edited = cropped[1]["original"], cropped[1]["edited"]
        check("the original keeps its size (1280x720)", identify(original) == (1280, 720), f"{original}: {identify(original)}")
        check("the edited image is the square crop (720x720)", identify(edited) == (720, 720), f"{edited}: {identify(edited)}")
        check("the shot's working file is gone", crop and not os.path.exists(crop[1].get("path", "")))
        time.sleep(0.8)
        display.screenshot("07-cropped")
        # The viewer's crop step on the 720x720 image, the rectangle drawn with the mouse: the image
        # is fitted into the area under the 48-pixel header (552x552 at x=204), the drag spans its
        # middle half.
        display.key("k")
        app.wait("crop-open")
        time.sleep(0.6)
        left, top, side = 204, 48, 552
        display.xdotool("mousemove", str(display.origin[0] + left + side // 4), str(display.origin[1] + top + side // 4))
        display.xdotool("mousedown", "1")
        for step in range(1, 6):
            offset = side // 4 + step * side // 10
            display.xdotool("mousemove", str(display.origin[0] + left + offset), str(display.origin[1] + top + offset))
            time.sleep(0.05)
        display.xdotool("mouseup", "1")
        time.sleep(0.3)
        display.screenshot("07-crop-drag")
        display.key("Return")
        dragged = app.wait("crop-saved", timeout=15)
        size = identify(dragged[1]["edited"]) if dragged else None
        check("a crop drawn with the mouse gives its size (the middle half: 360x360)",
              size and abs(size[0] - 360) <= 8 and abs(size[1] - 360) <= 8 and identify(dragged[1]["original"]) == (720, 720),
              f"edited {size}, {dragged and dragged[2]}")
        before = files(app.pictures)
        display.key("k")
        app.wait("crop-open")
        display.key("Escape")
        check("Cancel in the viewer's crop step writes nothing", app.wait("crop-cancelled") and files(app.pictures) == before)
    display.key("Escape", "Escape")
    app.wait("page")

    # Cancel in the crop step: no file at all.
    before = (files(app.pictures), files(app.videos), files(app.output))
    display.key("space")
    crop = app.wait("crop-open", timeout=15)
    display.key("Escape")
    cancelled = app.wait("crop-cancelled", timeout=10)
    after = (files(app.pictures), files(app.videos), files(app.output))
    check("Cancel after a shot leaves no file", cancelled and before == after and crop and not os.path.exists(crop[1]["path"]),
          f"before {before} after {after}")
    display.key("e")

    # Pick from the album, then Cancel: nothing chosen, nothing written.
    display.key("p")
    app.wait("album")
    time.sleep(0.6)
    display.screenshot("08-pick")
    display.key("Escape")
    check("the picker's Cancel", app.wait("pick-cancelled"))
    check("... leaves the folders as they were", (files(app.pictures), files(app.videos), files(app.output)) == after)
    display.key("p")
    app.wait("album")
    display.key("Right", "Return")
    picked = app.wait("picked")
    check("picking an item opens it", picked, picked and picked[2])
    display.key("Escape", "Escape")
    app.wait("page")

    # The trim editor over the last recording (recipe 9-3), a thumbnail at the start handle (9-8).
    if stopped:
        display.key("x")
        opened = app.wait("trim-open", timeout=10)
        length = float(opened[1]["duration"]) if opened else 0
        display.key("bracketright", "bracketright", "minus")  # start 1.0 s, end duration - 0.5 s
        time.sleep(0.8)
        display.screenshot("10-trim")
        display.key("h")
        thumb = app.wait("thumbnail", timeout=20)
        if check("a thumbnail at the chosen time", thumb, thumb and thumb[2]):
            check("the thumbnail is a 1280x720 frame at 1.0 s in the album",
                  identify(thumb[1]["path"]) == (1280, 720) and abs(float(thumb[1]["time"]) - 1.0) < 0.01
                  and os.path.dirname(thumb[1]["path"]) == app.pictures, thumb[2])
        display.key("Return")
        trimmed = app.wait("trimmed", timeout=30)
        if check("trim writes a file", trimmed, trimmed and trimmed[2]):
            wanted = (length - 0.5) - 1.0
            duration, _ = probe(trimmed[1]["library"])
            check("the trimmed copy is the range asked", duration and abs(duration - wanted) <= 0.1,
                  f"asked 1.0-{length - 0.5:.2f} s ({wanted:.2f} s), file {duration} s")
        time.sleep(1.0)
        display.screenshot("11-album-after-trim")
        display.key("Escape")
        app.wait("page")

    # Help lists the shortcuts; the picture for the README.
    display.key("F1")
    helped = display.screenshot_until("12-help", lambda shot: max(shot.pixel(480, 300)) < 80)
    centre = helped.pixel(480, 300)
    check("F1 shows the shortcuts (a dark panel over the preview)", max(centre) < 80, f"pixel {centre}")
    display.key("F1")
    time.sleep(0.6)
    display.screenshot("13-camera")
    return app


def no_camera_session(display, workdir):
    """`--input` naming no camera: 'Camera Unavailable', and the album still works."""
    app = App(display, workdir, ["--input", "/dev/video-none"], "no-camera")
    display.find_window("Camera")
    unavailable = app.wait("camera-unavailable", timeout=20)
    check("'Camera Unavailable' without a camera", unavailable, unavailable and unavailable[2])
    shot = display.screenshot_until("14-no-camera", lambda shot: sum(1 for p in shot.region(300, 280, 660, 320) if min(p) > 200) > 100)
    text = sum(1 for p in shot.region(300, 280, 660, 320) if min(p) > 200)
    check("... shown over the window, with no flash, torch or camera buttons", text > 100 and max(shot.pixel(60, 23)) < 20 and max(shot.pixel(238, 23)) < 20,
          f"{text} white text pixels, flash button pixel {shot.pixel(60, 23)}")
    display.key("a")
    album = app.wait("album")
    check("the album works without a camera", album, album and album[2])
    app.stop()


def no_microphone_session(display, workdir):
    """A microphone that is not there: video mode is refused, the app stays in photo mode."""
    app = App(display, workdir, ["--input", "test-pattern", "--microphone", "/dev/snd/none"], "no-microphone")
    display.find_window("Camera")
    if not check("the no-microphone run starts", app.wait("first-frame", timeout=30)):
        app.stop()
        return
    display.key("v")
    error = app.wait("error", timeout=15)
    ended = app.wait("mode-switch-end", timeout=2, consume=False)
    message = app.wait("message", timeout=5)
    check("no microphone: video mode is refused, photo mode stays", error and not ended, error and error[2])
    check("... saying so (Can't Access Audio)", message and "Can't Access Audio" in message[2], message and message[2])
    display.key("space")
    check("... and the shutter still works", app.wait("photo-saved", timeout=15))
    app.stop()


def main():
    os.makedirs(SHOTS, exist_ok=True)
    for name in os.listdir(SHOTS):
        os.remove(os.path.join(SHOTS, name))
    if not os.access(APP, os.X_OK):
        print(f"no app at {APP} (swift build --product camera-app)")
        return 2
    signal.signal(signal.SIGALRM, lambda *_: (_ for _ in ()).throw(TimeoutError(f"over {TOTAL_SECONDS} s")))
    signal.alarm(TOTAL_SECONDS)
    workdir = tempfile.mkdtemp(prefix="camera-app-test-")
    app = None
    try:
        display = Display(start_xvfb())
        app = main_session(display, workdir)
        app.stop()
        check("the app quits on Ctrl+Q", app.process.poll() == 0, f"exit status {app.process.poll()}")
        no_camera_session(display, os.path.join(workdir, "no-camera"))
        no_microphone_session(display, os.path.join(workdir, "no-microphone"))
    except Exception as error:  # a hang or a crash of the test itself is a failure too
        check("the test ran to its end", False, repr(error))
    finally:
        signal.alarm(0)
        for process in reversed(processes):
            if process.poll() is None:
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait(timeout=10)
        shutil.rmtree(workdir, ignore_errors=True)
    passed = sum(1 for _, ok, _ in results if ok)
    failed = len(results) - passed
    print(f"{passed} passed, {failed} failed (screenshots and logs in {os.path.relpath(SHOTS, ROOT)})")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
