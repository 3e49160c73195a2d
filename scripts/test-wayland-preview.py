#!/usr/bin/python3
"""The preview in a Wayland surface the application owns, checked by the compositor's pixels.

Starts a weston of its own (headless backend, pixman renderer, --debug for its screenshooter and its
scene-graph stream) on a private socket in a private XDG_RUNTIME_DIR, and runs examples/gtk-preview
--wayland-surface under it on the test pattern (SMPTE bars, 1280x720): GTK 4 on Wayland hands its
toplevel's wl_surface and wl_display to the preview, which draws through waylandsink into a subsurface
at the content area's rectangle (GTK's client-side decorations put it below the header bar and inside
the shadow's margins). Nothing is read through the project's code:

- where the window and the preview's subsurfaces are: weston's own scene graph (`weston-debug
  scene-graph`, the views' positions on the output);
- what is on screen: weston's screenshooter (`weston-screenshooter`, the output's pixels as the
  compositor composed them), read with PIL.

The checks: the seven bars in order where the arithmetic of a 16:9 frame in the area puts them, black
bars above and below for resize-aspect, the header bar (not video) just above the area; a resized
window is followed (new area, new bars); resize-aspect-fill covers the whole area (no black rows, the
first bar cropped); the preview removed from the running session leaves no subsurface and GTK's own
black area, and added again draws at the same area; `quit` ends the program with status 0. Then
CaptureGTK's CapturePreviewView in GTK 4 on Wayland (gtk-preview without --wayland-surface): its frames
reach GTK as textures, and weston's screen shows the seven bars in order inside the window.

  scripts/test-wayland-preview.py [BIN_DIR]      (default: .build/debug)

Prints 'N passed, N failed' and exits 1 when a check failed.
"""
import glob
import os
import queue
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from PIL import Image

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BIN = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, ".build", "debug"))
EXAMPLE = os.path.join(BIN, "gtk-preview")
OUT = os.path.join(ROOT, ".build", "wayland-preview-test")
TIMEOUT = 20  # seconds any one answer, picture or program may take
SCREEN = (1024, 768)
FRAME = (1280, 720)  # the test pattern at the example's preset
# SMPTE bars (videotestsrc's top two thirds), left to right, as (red, green, blue) on or off.
BARS = [(1, 1, 1), (1, 1, 0), (0, 1, 1), (0, 1, 0), (1, 0, 1), (1, 0, 0), (0, 0, 1)]

passed = failed = 0


def check(name, ok, detail=""):
    global passed, failed
    if ok:
        passed += 1
        print(f"  ok    {name}")
    else:
        failed += 1
        print(f"  FAIL  {name}: {detail}")


def start_weston(runtime, socket_name, log):
    """weston on `socket_name`, once it says it is ready: its systemd-notify module sends READY=1 to the
    datagram socket NOTIFY_SOCKET names, after its Wayland socket is listening. Raises RuntimeError when
    it does not within TIMEOUT seconds."""
    notify_path = os.path.join(runtime, "notify")
    notify = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    notify.bind(notify_path)
    environment = dict(os.environ, XDG_RUNTIME_DIR=runtime, NOTIFY_SOCKET=notify_path)
    environment.pop("WAYLAND_DISPLAY", None)
    environment.pop("DISPLAY", None)
    server = subprocess.Popen(
        ["weston", "--backend=headless-backend.so", "--use-pixman", f"--socket={socket_name}",
         f"--width={SCREEN[0]}", f"--height={SCREEN[1]}", "--idle-time=0", "--debug", "--modules=systemd-notify.so"],
        env=environment, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + TIMEOUT
    try:
        while True:
            ready, _, _ = select.select([notify], [], [], max(0, deadline - time.monotonic()))
            if not ready:
                raise RuntimeError(f"weston did not say it was ready within {TIMEOUT} s (see {log.name})")
            if b"READY=1" in notify.recv(4096):
                break
    except BaseException:
        stop(server)
        raise
    finally:
        notify.close()
    if not os.path.exists(os.path.join(runtime, socket_name)):
        stop(server)
        raise RuntimeError(f"weston is ready but its socket {socket_name} is missing")
    return server


def stop(process):
    """Ends a process started in its own group, and everything it started (weston's shell clients)."""
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
            process.wait(timeout=5)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()


class Example:
    """gtk-preview --wayland-surface, driven through its stdin; its stdout read on a thread into a queue,
    so that every answer is awaited with a time limit."""

    def __init__(self, environment, log, *arguments, surface=True):
        self.process = subprocess.Popen(
            [EXAMPLE, "--input", "test-pattern", "--preset", "hd1280x720", *(["--wayland-surface"] if surface else []), "--seconds", "120",
             *arguments],
            env=environment, cwd=environment["XDG_RUNTIME_DIR"], text=True, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=log, start_new_session=True)
        self.lines = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.process.stdout:
            self.lines.put(line.strip())
        self.lines.put(None)

    def answer(self, prefix):
        """The next line starting with `prefix`, within TIMEOUT seconds."""
        deadline = time.monotonic() + TIMEOUT
        while True:
            try:
                line = self.lines.get(timeout=max(0.01, deadline - time.monotonic()))
            except queue.Empty:
                raise RuntimeError(f"no '{prefix}' from the example within {TIMEOUT} s")
            if line is None:
                raise RuntimeError(f"the example ended before saying '{prefix}' (exit {self.process.wait()})")
            if line.startswith(prefix):
                return line

    def send(self, command):
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()


def area_of(line):
    """`showing 640x443+14+49` -> (x, y, w, h) in the surface's coordinates."""
    match = re.fullmatch(r"showing (\d+)x(\d+)\+(-?\d+)\+(-?\d+)", line)
    if not match:
        raise RuntimeError(f"not an area: {line}")
    w, h, x, y = (int(value) for value in match.groups())
    return (x, y, w, h)


def scene(environment):
    """weston's scene graph: the views of the window titled 'Camera preview', as (role, x1, y1, x2, y2),
    the toplevel first, then its subsurfaces."""
    dump = subprocess.run(["weston-debug", "scene-graph"], env=environment, capture_output=True, text=True, timeout=TIMEOUT).stdout
    views, inside = [], False
    for line in dump.splitlines():
        header = re.match(r"\s*View \d+ \(role ([^,]+),.*", line)
        if header:
            role = header.group(1)
            inside = ("'Camera preview'" in line) or (inside and role == "wl_subsurface")
            current = role
            continue
        if line.startswith("Layer"):
            inside = False
        position = re.match(r"\s*position: \((-?\d+), (-?\d+)\) -> \((-?\d+), (-?\d+)\)", line)
        if inside and position:
            views.append((current, *(int(value) for value in position.groups())))
    return views


def screenshot(environment, name):
    """The output's pixels as weston composed them (weston-screenshooter writes a PNG into its working
    folder), saved as OUT/name.png."""
    folder = tempfile.mkdtemp(dir=environment["XDG_RUNTIME_DIR"])
    try:
        subprocess.run(["weston-screenshooter"], env=environment, cwd=folder, capture_output=True, timeout=TIMEOUT, check=True)
        shots = glob.glob(os.path.join(folder, "*.png"))
        if len(shots) != 1:
            raise RuntimeError(f"weston-screenshooter wrote {len(shots)} pictures")
        picture = Image.open(shots[0]).convert("RGB")
        picture.load()
        picture.save(os.path.join(OUT, name.replace(" ", "-") + ".png"))
        return picture
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def bits(pixel):
    """Each channel on (> 120) or off (< 60); None for anything in between."""
    if any(60 <= channel <= 120 for channel in pixel):
        return None
    return tuple(1 if channel > 120 else 0 for channel in pixel)


def black(pixel):
    return sum(pixel) < 40


def expected_video(area, gravity):
    """Where the 1280x720 frame lies on screen in `area` (screen coordinates): the largest 16:9 rectangle
    inside it for resize-aspect, the smallest covering it for resize-aspect-fill, centered."""
    x, y, w, h = area
    scale = (min if gravity == "resize-aspect" else max)(w / FRAME[0], h / FRAME[1])
    vw, vh = FRAME[0] * scale, FRAME[1] * scale
    return (x + (w - vw) / 2, y + (h - vh) / 2, vw, vh)


def shows(area, gravity):
    """A test of a picture: the seven bars in order at their places inside `area` (2 pixels of margin
    at their edges for rounding), black rows just inside the area's top and bottom edges where the frame
    does not reach (resize-aspect); when it covers the area (resize-aspect-fill), the bars reach its top
    row and its left and right edges (2 pixels in). And no video just above the area (GTK's header bar)."""
    x, y, w, h = area
    vx, vy, vw, vh = expected_video(area, gravity)

    def test(picture):
        problems = []
        rows = [int(vy + vh / 3)]  # a third down the frame: the bars
        if gravity == "resize-aspect-fill":
            rows.append(y + 1)
        for row in rows:
            for index, colour in enumerate(BARS):
                left, right = max(x, vx + vw * index / 7) + 2, min(x + w, vx + vw * (index + 1) / 7) - 3
                if right <= left:
                    continue  # cropped away
                for column in (int(left), int((left + right) / 2), int(right)):
                    if bits(picture.getpixel((column, row))) != colour:
                        problems.append(f"bar {index + 1} at ({column}, {row}) is {picture.getpixel((column, row))}")
        if gravity == "resize-aspect" and vy - y >= 3:
            for edge in [y + 1, y + h - 2]:
                for column in [x + 3, x + w // 2, x + w - 4]:
                    if not black(picture.getpixel((column, edge))):
                        problems.append(f"({column}, {edge}) not black: {picture.getpixel((column, edge))}")
        above = picture.getpixel((x + w // 2, y - 3))
        if black(above) or bits(above) in BARS[1:]:
            problems.append(f"above the area ({x + w // 2}, {y - 3}) is {above}, not the header bar")
        return problems
    return test


def until(environment, name, test):
    """Screenshots until `test` finds nothing wrong, at most TIMEOUT seconds (a frame reaches the screen
    at the compositor's next repaint after the sink committed it). Returns the last problems."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        problems = test(screenshot(environment, name))
        if not problems or time.monotonic() >= deadline:
            return problems
        time.sleep(0.1)


def placed(environment, area):
    """The window's view and its subsurfaces as weston has them, once a subsurface covers exactly
    `area` (surface coordinates) of the window (the position applies with GTK's next commit): returns
    the area in screen coordinates, or raises with what the scene graph said."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        views = scene(environment)
        toplevel = [view for view in views if view[0] == "xdg_toplevel"]
        if toplevel:
            _, wx, wy, _, _ = toplevel[0]
            x, y, w, h = area
            expected = (wx + x, wy + y, wx + x + w, wy + y + h)
            if any(view[0] == "wl_subsurface" and tuple(view[1:]) == expected for view in views):
                return (wx + x, wy + y, w, h)
        if time.monotonic() >= deadline:
            raise RuntimeError(f"no subsurface at the area {area} of the window; weston's views: {views}")
        time.sleep(0.1)


def bars_in_a_row(picture, box):
    """The first row inside `box` (x1, y1, x2, y2, screen coordinates) where the seven bars appear left
    to right, each at least 20 pixels wide, else None."""
    x1, y1, x2, y2 = box
    for row in range(max(0, y1), min(picture.height, y2), 4):
        runs, column = [], max(0, x1)
        while column < min(picture.width, x2):
            colour, start = bits(picture.getpixel((column, row))), column
            while column < min(picture.width, x2) and bits(picture.getpixel((column, row))) == colour:
                column += 1
            if column - start >= 20 and not black(picture.getpixel((start, row))):
                runs.append(colour)
        for first in range(len(runs) - len(BARS) + 1):
            if runs[first:first + len(BARS)] == BARS:
                return row
    return None


def view_on_wayland(environment, log):
    """CapturePreviewView (no --wayland-surface) in GTK 4 on Wayland: the frames reach GTK as textures
    (the shared images are X11's) and the window shows the bars."""
    # No stdin commands without --wayland-surface: it ends by itself after 8 s (a later --seconds wins).
    example = Example(environment, log, "--size", "640x480", "--gravity", "resize-aspect", "--seconds", "8", surface=False)
    try:
        line = example.answer("showing")
        check("CapturePreviewView on Wayland: a frame at the view's size, as a texture", line.endswith("(texture)"), line)
        deadline = time.monotonic() + TIMEOUT
        while True:
            views = [view for view in scene(environment) if view[0] == "xdg_toplevel"]
            row = bars_in_a_row(screenshot(environment, "view on wayland"), tuple(views[0][1:])) if views else None
            if row is not None or time.monotonic() >= deadline:
                break
            time.sleep(0.1)
        check("... and weston's screen shows the seven bars in order inside the window", row is not None, f"window views: {views}")
        shown = example.answer("shown")
        status = example.process.wait(timeout=TIMEOUT)
        check("... it ends after its seconds with status 0, its last frame a texture too", status == 0 and "(texture)" in shown, f"exit {status}: {shown}")
    finally:
        stop(example.process)


def alarm(_signal, _frame):
    raise RuntimeError("the whole run took more than 180 s")


def unplaced(environment):
    """None once weston shows the window without any subsurface (within TIMEOUT seconds), else the views."""
    deadline = time.monotonic() + TIMEOUT
    while True:
        views = scene(environment)
        if views and not any(view[0] == "wl_subsurface" for view in views):
            return None
        if time.monotonic() >= deadline:
            return views
        time.sleep(0.1)


def main():
    signal.signal(signal.SIGALRM, alarm)
    signal.alarm(180)
    os.makedirs(OUT, exist_ok=True)
    runtime = tempfile.mkdtemp(prefix="capture-wayland-")
    os.chmod(runtime, 0o700)
    socket_name = f"capture-test-{os.getpid()}"
    weston_log = open(os.path.join(OUT, "weston.log"), "w")
    example_log = open(os.path.join(OUT, "gtk-preview.log"), "w")
    server = example = None
    try:
        server = start_weston(runtime, socket_name, weston_log)
        environment = dict(os.environ, XDG_RUNTIME_DIR=runtime, WAYLAND_DISPLAY=socket_name, GDK_BACKEND="wayland",
                           GTK_A11Y="none", GSK_RENDERER="cairo", GST_DEBUG="2", GST_DEBUG_NO_COLOR="1")
        environment.pop("DISPLAY", None)
        print(f"Wayland preview: weston {SCREEN[0]}x{SCREEN[1]} headless (pixman), gtk-preview --wayland-surface, the test pattern")

        example = Example(environment, example_log, "--size", "640x480", "--gravity", "resize-aspect")
        area = area_of(example.answer("showing"))
        check("the area is below the header bar and inside the shadow's margins",
              area[0] > 0 and area[1] > area[0] and area[2] <= 640 and area[3] < 480, f"{area}")
        on_screen = placed(environment, area)
        check("weston has a subsurface of the window exactly at the area", True)
        problems = until(environment, "aspect 640x480", shows(on_screen, "resize-aspect"))
        check(f"resize-aspect: the bars in order, black rows at the area's top and bottom ({area[2]}x{area[3]})", not problems, "; ".join(problems[:6]))

        example.send("resize 500 400")
        resized = area_of(example.answer("showing"))
        check("a resized window gives the preview a new area", resized[2:] != area[2:] and resized[:2] == area[:2], f"{area} -> {resized}")
        on_screen = placed(environment, resized)
        problems = until(environment, "aspect 500x400", shows(on_screen, "resize-aspect"))
        check(f"... followed without a restart: the bars and black rows in {resized[2]}x{resized[3]}", not problems, "; ".join(problems[:6]))

        example.send("gravity resize-aspect-fill")
        example.answer("gravity resize-aspect-fill")
        problems = until(environment, "fill 500x400", shows(on_screen, "resize-aspect-fill"))
        check("resize-aspect-fill on the running session: the whole area, the first bar cropped", not problems, "; ".join(problems[:6]))

        # The preview leaves the running session (its branch and the sink's subsurfaces go, GTK's black
        # area shows), then joins it again: a branch added to the live pipeline, whose sink asks for the
        # display while it is synced to the pipeline's state.
        example.send("remove")
        answer = example.answer(("removed", "refused"))
        check("the preview leaves the running session", answer == "removed", answer)
        gone = unplaced(environment)
        check("... and weston has no subsurface of the window left", gone is None, f"{gone}")
        problems = until(environment, "removed", lambda picture: [
            f"({c}, {r}) not black: {picture.getpixel((c, r))}"
            for c in (on_screen[0] + 5, on_screen[0] + on_screen[2] // 2) for r in (on_screen[1] + 5, on_screen[1] + on_screen[3] // 3)
            if not black(picture.getpixel((c, r)))])
        check("... the area shows the app's own black drawing", not problems, "; ".join(problems[:6]))
        example.send("add")
        answer = example.answer(("added", "refused"))
        check("the preview joins the running session again", answer == "added", answer)
        again = area_of(example.answer("showing"))
        on_screen = placed(environment, again)
        problems = until(environment, "added again", shows(on_screen, "resize-aspect-fill"))
        check("... and draws into the surface again, at the same area, with its gravity", again == resized and not problems,
              f"{again}; " + "; ".join(problems[:6]))

        example.send("quit")
        try:
            status = example.process.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            status = "still running"
        check("quit ends the program with status 0", status == 0, f"exit {status}")

        view_on_wayland(environment, example_log)
    except (RuntimeError, subprocess.SubprocessError, OSError) as error:
        check("the run", False, str(error))
    finally:
        if example:
            stop(example.process)
        if server:
            stop(server)
        weston_log.close()
        example_log.close()
        shutil.rmtree(runtime, ignore_errors=True)
    print(f"wayland preview: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
