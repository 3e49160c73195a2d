#!/usr/bin/python3
"""The preview in a window the application owns, checked by the window's pixels under a real X server:
a plain X11 window given to the preview, and a GTK 4 window with CaptureGTK's view.

Runs examples/window-preview (a plain Xlib window whose id is handed to the preview) under its own Xvfb
on the test pattern (SMPTE bars, 1280x720), and reads the window with ImageMagick's `import`, not with
the project's code. For each gravity the edges of the picture are where the arithmetic of a 16:9 frame
in that window puts them: black bars above and below for resize-aspect, the first bar cropped for
resize-aspect-fill, the whole window stretched for resize; mirroring swaps the bars; a resized window
and a gravity changed on the running session are followed.

  scripts/test-window-preview.py [BIN_DIR]      (default: .build/debug)

Prints 'N passed, N failed' and exits 1 when a check failed.
"""
import io
import os
import subprocess
import sys
import time

from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import xvfb  # noqa: E402 (scripts/xvfb.py: an X server of our own)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "debug"))
EXAMPLE = os.path.join(BIN, "window-preview")
OUT = os.path.join(ROOT, ".build", "window-preview-test")
TIMEOUT = 20  # seconds any one answer or picture may take

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"  ok    {name}")
    else:
        failed += 1
        print(f"  FAIL  {name}: {detail}")


class Example:
    """The example, driven through its stdin; each command's answer is read from its stdout."""

    def __init__(self, display, *arguments):
        environment = dict(os.environ, DISPLAY=display)
        self.process = subprocess.Popen(
            [EXAMPLE, "--input", "test-pattern", *arguments], env=environment, text=True,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        self.window = self.answer("window").split()[1]
        self.showing = self.answer("showing")

    def answer(self, prefix):
        """The next line starting with `prefix` (bounded by TIMEOUT through the example's own waits)."""
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError(f"the example ended before saying '{prefix}' (exit {self.process.wait()})")
            if line.startswith(prefix):
                return line.strip()

    def ask(self, command, prefix):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()
        return self.answer(prefix)

    def picture(self):
        return window_picture(self.window)

    def close(self):
        try:
            self.ask("quit", "stopped")
        finally:
            self.process.kill()
            self.process.wait()


def window_picture(window):
    """The window's pixels as the X server has them, read by ImageMagick."""
    shot = subprocess.run(["import", "-window", window, "png:-"], env=dict(os.environ, DISPLAY=DISPLAY),
                          capture_output=True, timeout=TIMEOUT)
    return Image.open(io.BytesIO(shot.stdout)).convert("RGB")


def video_rect(line):
    """`... video X Y W H` -> (x, y, w, h)."""
    words = line.split()
    at = words.index("video")
    return tuple(int(value) for value in words[at + 1:at + 5])


def black(pixel):
    return sum(pixel) < 40


def white(pixel):
    return all(channel > 150 for channel in pixel)


def yellow(pixel):
    return pixel[0] > 150 and pixel[1] > 150 and pixel[2] < 80


def blue(pixel):
    return pixel[0] < 80 and pixel[1] < 80 and pixel[2] > 150


def until(example, name, test):
    """Takes pictures of the example's window until `test(picture)` holds, at most TIMEOUT seconds (the
    window shows the new geometry from the next frame the X server draws): the check waits for the state."""
    return until_shown(example.window, name, test)


def until_shown(window, name, test):
    deadline = time.monotonic() + TIMEOUT
    picture = window_picture(window)
    while not test(picture) and time.monotonic() < deadline:
        time.sleep(0.05)
        picture = window_picture(window)
    picture.save(os.path.join(OUT, name.replace(" ", "-") + ".png"))
    return test(picture)


def letterboxed(rect, first_bar):
    """The picture shows the bars exactly in `rect`: black rows just outside its top and bottom edges,
    colour just inside, the first bar's colour at its left edge."""
    x, y, w, h = rect

    def test(picture):
        width, height = picture.size
        columns = [x + 4, x + w // 2, x + w - 5]
        above = all(black(picture.getpixel((c, y - 3))) for c in columns) if y >= 3 else True
        below = all(black(picture.getpixel((c, y + h + 2))) for c in columns) if y + h + 2 < height else True
        top_inside = not black(picture.getpixel((x + 4, y + 3)))
        bottom_inside = not black(picture.getpixel((x + 4, y + h - 4)))
        return above and below and top_inside and bottom_inside and first_bar(picture.getpixel((x + 4, y + 10)))
    return test


os.makedirs(OUT, exist_ok=True)
server, DISPLAY = xvfb.start("1280x800x24")
try:
    print("window preview: a plain X11 window, the test pattern (1280x720), ImageMagick reads the window")

    # resize-aspect in 640x480: 640x360 centered, 60-pixel black bars above and below.
    example = Example(DISPLAY, "--size", "640x480", "--gravity", "resize-aspect")
    try:
        check("resize-aspect reports the 16:9 picture at 0,60 640x360", video_rect(example.showing) == (0, 60, 640, 360), example.showing)
        check("resize-aspect: black bars above and below, the bars in between", until(example, "aspect 640x480", letterboxed((0, 60, 640, 360), white)))
        point = example.ask("point 320 60", "point").split()
        check("the view's top edge of the picture is the camera's top middle", abs(float(point[1]) - 0.5) < 1e-6 and abs(float(point[2])) < 1e-6, " ".join(point))
        resized = example.ask("resize 480 480", "resized")
        check("a resized window is followed: 480x270 at 0,105", video_rect(resized) == (0, 105, 480, 270), resized)
        check("the resized window shows the new bars", until(example, "aspect 480x480", letterboxed((0, 105, 480, 270), white)))
        changed = example.ask("gravity resize-aspect-fill", "gravity")
        check("gravity changed on the running session: 854x480 cropped to the window", video_rect(changed) == (-187, 0, 854, 480), changed)
        check("resize-aspect-fill after the change: no bar, the first bar cropped away",
              until(example, "fill after change", lambda p: not black(p.getpixel((240, 1))) and not black(p.getpixel((240, 478))) and yellow(p.getpixel((5, 100)))))
    finally:
        example.close()

    # resize-aspect-fill in 640x480: 854x480, 107 pixels cropped on each side; the first bar (122 pixels
    # wide) keeps 15, so x=20 is already the second, yellow.
    example = Example(DISPLAY, "--size", "640x480", "--gravity", "resize-aspect-fill")
    try:
        check("resize-aspect-fill reports 854x480 at -107,0", video_rect(example.showing) == (-107, 0, 854, 480), example.showing)
        check("resize-aspect-fill: no bars, white at x=5, yellow at x=20",
              until(example, "fill 640x480", lambda p: not black(p.getpixel((320, 1))) and white(p.getpixel((5, 100))) and yellow(p.getpixel((20, 100)))))
    finally:
        example.close()

    # resize: stretched to 640x480 (bars 91 pixels wide), mirrored: blue at the left, white at the right.
    example = Example(DISPLAY, "--size", "640x480", "--gravity", "resize", "--mirrored")
    try:
        check("resize reports the whole window", video_rect(example.showing) == (0, 0, 640, 480), example.showing)
        check("resize + mirrored: no bars, blue at the left edge, white at the right, red next to blue",
              until(example, "resize mirrored", lambda p: blue(p.getpixel((5, 2))) and white(p.getpixel((634, 2)))
                    and p.getpixel((100, 2))[0] > 150 and p.getpixel((100, 2))[1] < 80))
        point = example.ask("point 5 2", "point").split()
        check("a point at the mirrored view's left edge is the camera's right edge", float(point[1]) > 0.99, " ".join(point))
    finally:
        example.close()

    # The application destroys its window while the session runs: the session goes on (the sink stops
    # drawing; Xlib's errors about the window that is gone do not end the process), then stops cleanly.
    example = Example(DISPLAY, "--size", "320x240")
    try:
        example.ask("destroy", "destroyed")
        alive = example.ask("point 160 120", "point")
        check("a window destroyed under a running session: the program goes on", alive.startswith("point"), alive)
        stopped = example.ask("quit", "stopped")
        status = example.process.wait(timeout=TIMEOUT)
        check("... and stops cleanly (exit 0)", stopped == "stopped" and status == 0, f"{stopped}, exit {status}")
    except RuntimeError as ended:
        check("a window destroyed under a running session: the program goes on and stops cleanly", False, str(ended))
    finally:
        example.process.kill()
        example.process.wait()

    # The same preview in a GTK 4 window (CaptureGTK's CapturePreviewView, examples/gtk-preview): the
    # view tells the preview its size once GTK lays it out, possibly while the session is still
    # starting; three runs, each must show the 640x360 picture between its bars. GTK's cairo renderer
    # gets the frames in images the X server shares; a fourth run asks for its GL renderer, which gets
    # them as textures (GTK falls back to cairo when the X server offers no GL).
    print("GTK 4 view: examples/gtk-preview, GSK_RENDERER=cairo, then gl")
    for run in range(4):
        renderer = "gl" if run == 3 else "cairo"
        for gravity, test in [("resize-aspect", letterboxed((0, 60, 640, 360), white)),
                              ("resize-aspect-fill", lambda p: not black(p.getpixel((320, 1))) and yellow(p.getpixel((20, 100))))]:
            if run > 0 and gravity != "resize-aspect":
                continue
            environment = dict(os.environ, DISPLAY=DISPLAY, GSK_RENDERER=renderer, GTK_A11Y="none", GST_DEBUG="2", GST_DEBUG_NO_COLOR="1")
            log = open(os.path.join(OUT, f"gtk-{gravity}-{run + 1}.log"), "w")
            program = subprocess.Popen(
                [os.path.join(BIN, "gtk-preview"), "--input", "test-pattern", "--size", "640x480", "--gravity", gravity, "--seconds", "30"],
                env=environment, text=True, stdout=subprocess.PIPE, stderr=log)
            try:
                line = program.stdout.readline()
                shown = line.startswith("showing 640x480")
                if not shown:
                    line += program.stdout.read()  # the program ended: what it said at its end
                window = subprocess.run(["xdotool", "search", "--name", "^Camera preview$"], env=environment,
                                        capture_output=True, text=True, timeout=TIMEOUT).stdout.split()
                check(f"GTK view ({renderer}), {gravity}, run {run + 1}: a frame at the window's size is shown", shown, line.strip())
                if renderer == "cairo":
                    # Under the cairo renderer on X11 the frames go through images the X server shares.
                    check(f"GTK view (cairo), {gravity}, run {run + 1}: frames reach GTK in shared images", "(shared-image)" in line, line.strip())
                check(f"GTK view ({renderer}), {gravity}, run {run + 1}: the window shows the picture as the gravity says",
                      shown and bool(window) and until_shown(window[0], f"gtk {gravity} {run + 1}", test))
            finally:
                program.kill()
                program.wait()
                log.close()
finally:
    server.kill()
    server.wait()

print(f"window preview: {passed} passed, {failed} failed")
sys.exit(1 if failed else 0)
