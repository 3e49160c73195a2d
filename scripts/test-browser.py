#!/usr/bin/python3
"""The web app of `capture serve` in a real browser: headless Chromium driven by Selenium.

Starts `capture serve` on 127.0.0.1 (a free port) with the test pattern and a clock drawn on the web
preview, then for each transport (WebRTC, then MJPEG with ?mjpeg=1):
  - opens the page and waits for the preview to play;
  - takes two screenshots of it a moment apart: the pixels differ (the clock moves) and the test
    pattern's colours are there;
  - presses the shutter: the photo shows in the gallery and is on disk (a JPEG ImageMagick reads);
  - switches to video mode while counting the preview's frames: frames keep coming through the switch
    and the preview is not black after it;
  - records about two seconds, then downloads the movie through the gallery's link: ffprobe reads a
    video stream from it;
  - switches back to photo mode.
Then the camera roll (MJPEG): the crop step after the shot (original and edited file, sizes by ImageMagick's
identify), a photo picked from the album grid and cropped by a drag, then cancelled (no new file), a movie
picked and trimmed frame-exactly (the range's end frames previewed without a file; cancel writes nothing;
Save's copy measured with ffprobe: within a frame of the range), and a thumbnail at a chosen time.
Nothing is timed against a bound; every wait is bounded and says what it waited for when it gives up.

usage: scripts/test-browser.py [CAPTURE_BINARY]
"""
import io
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

from PIL import Image, ImageChops, ImageStat
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

import headless_chromium

BINARY = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else ".build/release/capture")
TRANSPORTS = [("", "webrtc"), ("?mjpeg=1", "mjpeg")]
PIPELINE = """session, preset=vga640x480
input, name=camera, device=test-pattern
output, name=photo, kind=photo, codec=jpeg, quality=90, location="IMG_%04d.jpg"
output, name=codes, kind=metadata
"""


def fail(message):
    print(f"test-browser: FAIL: {message}", file=sys.stderr)
    sys.exit(1)


def wait_for(what, condition, timeout=30.0, interval=0.2, detail=None):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = condition()
        except StaleElementReferenceException:
            # The page replaced an element while the condition read it (the grid re-renders as its
            # filter changes): not there yet, look again.
            value = None
        if value:
            return value
        time.sleep(interval)
    fail(f"gave up waiting for {what} after {timeout:.0f} s" + (f" ({detail()})" if detail else ""))


def start_server(folder):
    pipeline = os.path.join(folder, "browser.pipeline")
    with open(pipeline, "w") as handle:
        handle.write(PIPELINE)
    log = open(os.path.join(folder, "serve.log"), "w+")
    process = subprocess.Popen([BINARY, "serve", pipeline, "--listen", "127.0.0.1:0", "--output-dir", os.path.join(folder, "media"),
                                "--clock", "--json"], stdout=open(os.path.join(folder, "events.jsonl"), "w"), stderr=log)

    def address():
        log.seek(0)
        match = re.search(r"serving (http://127\.0\.0\.1:\d+/)", log.read())
        if process.poll() is not None:
            fail(f"capture serve exited with {process.returncode}: {open(log.name).read()}")
        return match.group(1) if match else None
    return process, wait_for("capture serve to listen", address), log


def server_status(base):
    """The server's /api/status (what the page renders), read beside the page."""
    with urllib.request.urlopen(base + "api/status", timeout=10) as response:
        return json.loads(response.read())


def browser():
    # chromedriver spoken to at 127.0.0.1 and Chromium driven over a pipe: no name is resolved (a clean
    # Debian 12 root has no /etc/hosts, so "localhost" does not resolve there); see headless_chromium.py.
    try:
        return headless_chromium.start(["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900",
                                        "--autoplay-policy=no-user-gesture-required", "--disable-features=WebRtcHideLocalIpsWithMdns",
                                        "--use-fake-ui-for-media-stream", "--disable-gpu", "--no-first-run", "--disable-extensions"])
    except headless_chromium.Unavailable as error:
        fail(str(error))


def preview_image(driver):
    stage = driver.find_element(By.ID, "stage")
    return Image.open(io.BytesIO(stage.screenshot_as_png)).convert("RGB")


def saturated_colours(image):
    """The test pattern's bars: count pixels that are clearly yellow, cyan, magenta, red, green, blue."""
    small = image.resize((160, 90))
    found = set()
    for red, green, blue in small.getdata():
        high, low = max(red, green, blue), min(red, green, blue)
        if high - low < 120:
            continue
        if red > 150 and green > 150 and blue < 100:
            found.add("yellow")
        elif green > 150 and blue > 150 and red < 100:
            found.add("cyan")
        elif red > 150 and blue > 150 and green < 100:
            found.add("magenta")
        elif red > 150 and green < 100 and blue < 100:
            found.add("red")
        elif green > 150 and red < 100 and blue < 100:
            found.add("green")
        elif blue > 150 and red < 100 and green < 100:
            found.add("blue")
    return found


def check_transport(driver, base, folder, query, expected):
    print(f"test-browser: {expected}: opening the page")
    driver.get(base + query)
    wait_for(f"the {expected} preview to play", lambda: driver.execute_script(
        "return document.getElementById('stage').dataset.state === 'playing' && window.captureStats.frames > 5"))
    transport = driver.execute_script("return window.captureStats.transport")
    if transport != expected:
        fail(f"the page plays over {transport!r}, not {expected!r}")
    first = preview_image(driver)
    time.sleep(1.5)
    second = preview_image(driver)
    difference = ImageStat.Stat(ImageChops.difference(first, second)).sum
    if sum(difference) == 0:
        fail(f"{expected}: two screenshots 1.5 s apart are the same: the preview does not move")
    colours = saturated_colours(second)
    if len(colours) < 4:
        fail(f"{expected}: the test pattern's colours are not in the preview (found {sorted(colours)})")
    print(f"test-browser: {expected}: playing, moving, colours {sorted(colours)}")

    photos_before = len(driver.find_elements(By.CSS_SELECTOR, "#gallery figure[data-kind=photo]"))
    driver.find_element(By.ID, "shutter").click()
    wait_for("the photo in the gallery", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#gallery figure[data-kind=photo]")) > photos_before)
    name = driver.find_element(By.CSS_SELECTOR, "#gallery figure[data-kind=photo]").get_attribute("data-name")
    path = os.path.join(folder, "media", name)
    if not os.path.isfile(path):
        fail(f"the gallery shows {name} but {path} is not on disk")
    identify = subprocess.run(["identify", "-format", "%m %w %h", path], capture_output=True, text=True)
    if identify.returncode != 0 or not identify.stdout.startswith("JPEG 640 480"):
        fail(f"{path} is not a 640x480 JPEG: {identify.stdout} {identify.stderr}")
    print(f"test-browser: {expected}: shutter -> {name} in the gallery and on disk")

    driver.execute_script("window.captureStats.reset()")
    driver.find_element(By.ID, "mode-video").click()
    wait_for("video mode", lambda: "hidden" not in driver.find_element(By.ID, "record").get_attribute("class"))
    wait_for("frames after the mode switch", lambda: driver.execute_script("return window.captureStats.frames") > 10)
    after = preview_image(driver)
    if ImageStat.Stat(after.convert("L")).mean[0] < 20:
        fail(f"{expected}: the preview is black after the switch to video mode")
    gap = driver.execute_script("return window.captureStats.maxGapMs")
    print(f"test-browser: {expected}: video mode, frames kept coming (largest gap {gap:.0f} ms)")

    movies_before = len(driver.find_elements(By.CSS_SELECTOR, "#gallery figure[data-kind=movie]"))
    driver.find_element(By.ID, "record").click()
    wait_for("the recording to start", lambda: "recording" in driver.find_element(By.ID, "record").get_attribute("class"))
    wait_for("two seconds recorded", lambda: server_status(base).get("recordingSeconds", 0) >= 2.0)
    driver.find_element(By.ID, "record").click()
    wait_for("the movie in the gallery", lambda: len(driver.find_elements(By.CSS_SELECTOR, "#gallery figure[data-kind=movie]")) > movies_before)
    link = driver.find_element(By.CSS_SELECTOR, "#gallery figure[data-kind=movie] a.download").get_attribute("href")
    download = os.path.join(folder, "download.mp4")
    with urllib.request.urlopen(link, timeout=30) as response, open(download, "wb") as out:
        if "attachment" not in response.headers.get("Content-Disposition", ""):
            fail("the download link does not download")
        out.write(response.read())
    probe = subprocess.run(["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=codec_name,width,height:format=duration",
                            "-of", "json", download], capture_output=True, text=True)
    info = json.loads(probe.stdout or "{}")
    streams, duration = info.get("streams", []), float(info.get("format", {}).get("duration", 0))
    if probe.returncode != 0 or not streams or duration < 1.0:
        fail(f"ffprobe does not read a movie of at least a second from the download: {probe.stdout} {probe.stderr}")
    print(f"test-browser: {expected}: recorded and downloaded {streams[0].get('codec_name')} {streams[0].get('width')}x{streams[0].get('height')}, {duration:.1f} s")

    driver.find_element(By.ID, "mode-photo").click()
    wait_for("photo mode", lambda: "hidden" in driver.find_element(By.ID, "record").get_attribute("class"))
    if driver.find_element(By.ID, "error").text:
        fail(f"the page shows an error: {driver.find_element(By.ID, 'error').text}")


# --- The camera roll ------------------------------------------------------------------------------------

def media_files(folder):
    """Every file of the media folder, relative to it (temporaries included: nothing may be left)."""
    root = os.path.join(folder, "media")
    return {os.path.relpath(os.path.join(path, name), root) for path, _, names in os.walk(root) for name in names}


def page_error(driver):
    return "the page shows: " + (driver.find_element(By.ID, "error").text or "no error")


def visible(driver, element_id):
    return "hidden" not in driver.find_element(By.ID, element_id).get_attribute("class")


def attribute(driver, element_id, name):
    return driver.find_element(By.ID, element_id).get_attribute(name)


def image_size(path):
    identify = subprocess.run(["identify", "-format", "%w %h", path], capture_output=True, text=True)
    if identify.returncode != 0:
        fail(f"identify cannot read {path}: {identify.stderr}")
    width, height = identify.stdout.split()
    return int(width), int(height)


def probe(path, entries, stream="v:0"):
    result = subprocess.run(["ffprobe", "-v", "error", "-select_streams", stream, "-show_entries", entries, "-of", "json", path],
                            capture_output=True, text=True)
    if result.returncode != 0:
        fail(f"ffprobe cannot read {path}: {result.stderr}")
    return json.loads(result.stdout)


def type_number(driver, element_id, value):
    field = driver.find_element(By.ID, element_id)
    # Typed over what the field shows, as a user does (clear() would send a change of its own).
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(str(value), Keys.TAB)  # the change event comes with the blur


def loaded_width(driver, element_id):
    return driver.execute_script(f"const i = document.getElementById('{element_id}'); return i.complete ? i.naturalWidth : 0")


def pick_from_album(driver, kind, name=None):
    """Opens the album, filters it by kind, clicks the item named (or the first) and waits for the viewer."""
    driver.find_element(By.ID, "album-open").click()
    Select(driver.find_element(By.ID, "picker-kind")).select_by_value(kind)
    selector = f"#picker-grid figure[data-kind={kind}]"
    wait_for(f"the album's {kind}s", lambda: attribute(driver, "picker-grid", "data-loaded") and all(
        figure.get_attribute("data-kind") == kind for figure in driver.find_elements(By.CSS_SELECTOR, "#picker-grid figure"))
        and driver.find_elements(By.CSS_SELECTOR, selector))
    # The grid may render again while it is read (its thumbnails load): every step finds the item
    # anew by its name, and a step that met a replaced element is tried again (wait_for).
    def chosen():
        names = [f.get_attribute("data-name") for f in driver.find_elements(By.CSS_SELECTOR, selector)]
        return (name if name in names else None) if name else (names[0] if names else None)
    picked = wait_for(f"{name or 'an item'} in the album", chosen, timeout=10,
                      detail=lambda: [f.get_attribute("data-name") for f in driver.find_elements(By.CSS_SELECTOR, selector)])
    find = "return [...document.querySelectorAll(arguments[0])].find(f => f.dataset.name === arguments[1]) || null"
    wait_for(f"the grid's thumbnail of {picked}", lambda: driver.execute_script(
        find.replace("return ", "const f = ") + "; const i = f && f.querySelector('img'); "
        "return !!i && i.complete && i.naturalWidth > 0 && i.naturalWidth <= 240", selector, picked))

    def click_item():
        item = driver.execute_script(find, selector, picked)
        if item is None:
            return False
        item.click()
        return True
    wait_for(f"a click on {picked}", click_item, timeout=10)
    wait_for(f"the viewer to open {picked}", lambda: visible(driver, "viewer-sheet") and attribute(driver, "viewer-sheet", "data-name") == picked
             and not visible(driver, "picker"))
    return picked


def check_crop_after_shot(driver, folder):
    media = os.path.join(folder, "media")
    driver.find_element(By.ID, "edit-after-shot").click()
    before = media_files(folder)
    driver.find_element(By.ID, "shutter").click()
    wait_for("the crop step on the new photo", lambda: visible(driver, "crop-sheet") and attribute(driver, "crop-sheet", "data-source"))
    photo = attribute(driver, "crop-sheet", "data-source")
    if media_files(folder) - before != {photo}:
        fail(f"the shot made {sorted(media_files(folder) - before)}, not {photo}")
    for field, value in [("crop-x", 25), ("crop-y", 25), ("crop-w", 50), ("crop-h", 50)]:
        type_number(driver, field, value)
    driver.find_element(By.ID, "crop-save").click()
    wait_for("the original and the edited image", lambda: attribute(driver, "crop-result", "data-edited") and visible(driver, "crop-result")
             and loaded_width(driver, "crop-original") > 0 and loaded_width(driver, "crop-edited") > 0, detail=lambda: page_error(driver))
    edited = attribute(driver, "crop-result", "data-edited")
    if attribute(driver, "crop-result", "data-original") != photo:
        fail(f"the crop step answered another original: {attribute(driver, 'crop-result', 'data-original')}")
    if media_files(folder) - before != {photo, edited}:
        fail(f"shot and crop made {sorted(media_files(folder) - before)}, not {photo} and {edited}")
    original_size, edited_size = image_size(os.path.join(media, photo)), image_size(os.path.join(media, edited))
    if original_size != (640, 480) or edited_size != (320, 240):
        fail(f"original {original_size} and edited {edited_size}: expected 640x480 kept and a 320x240 crop")
    if (loaded_width(driver, "crop-original"), loaded_width(driver, "crop-edited")) != (640, 320):
        fail("the page does not show the original and the edited image")
    driver.find_element(By.ID, "crop-cancel").click()
    driver.find_element(By.ID, "edit-after-shot").click()
    wait_for("the crop step to close", lambda: not visible(driver, "crop-sheet"))
    print(f"test-browser: roll: shutter -> crop step -> {photo} 640x480 kept and {edited} 320x240 (identify)")
    return photo


def check_crop_cancelled(driver, folder, photo):
    picked = pick_from_album(driver, "photo", photo)
    wait_for("the picked photo in the viewer", lambda: visible(driver, "picked-photo") and loaded_width(driver, "picked-photo") == 640)
    before = media_files(folder)
    driver.find_element(By.ID, "crop-open").click()
    wait_for("the crop step", lambda: visible(driver, "crop-sheet") and loaded_width(driver, "crop-image") > 0)
    stage = driver.find_element(By.ID, "crop-stage")
    width, height = stage.size["width"], stage.size["height"]
    ActionChains(driver).move_to_element_with_offset(stage, -width // 4, -height // 4).click_and_hold().move_by_offset(width // 4, height // 4) \
        .move_by_offset(width // 8, height // 8).release().perform()
    dragged = [float(attribute(driver, field, "value")) for field in ("crop-x", "crop-y", "crop-w", "crop-h")]
    if abs(dragged[0] - 25) > 3 or abs(dragged[1] - 25) > 3 or abs(dragged[2] - 37.5) > 3 or abs(dragged[3] - 37.5) > 3:
        fail(f"the drag made the rectangle {dragged}, not about 25, 25, 37.5, 37.5 %")
    driver.find_element(By.ID, "crop-cancel").click()
    wait_for("the crop step to close", lambda: not visible(driver, "crop-sheet"))
    if media_files(folder) != before:
        fail(f"Cancel in the crop step wrote {sorted(media_files(folder) ^ before)}")
    print(f"test-browser: roll: picked {picked} from the album, dragged a crop {dragged}, cancelled: no new file")


def check_trim(driver, folder):
    media = os.path.join(folder, "media")
    start, end = 0.2, 0.9
    for attempt in ("cancel", "save"):
        movie = pick_from_album(driver, "video")
        driver.find_element(By.ID, "trim-open").click()
        wait_for("the trim editor", lambda: visible(driver, "trim-sheet") and attribute(driver, "trim-sheet", "data-source") == movie)
        before = media_files(folder)
        type_number(driver, "trim-start", start)
        type_number(driver, "trim-end", end)
        wait_for("the frames at the range's ends", lambda: attribute(driver, "trim-start-frame", "data-time") == f"{start:.3f}"
                 and attribute(driver, "trim-end-frame", "data-time") == f"{end - 0.001:.3f}")
        if media_files(folder) != before:
            fail(f"the trim editor's previews wrote {sorted(media_files(folder) ^ before)}")
        if attempt == "cancel":
            driver.find_element(By.ID, "trim-cancel").click()
            wait_for("the trim editor to close", lambda: not visible(driver, "trim-sheet"))
            if media_files(folder) != before:
                fail(f"Cancel in the trim editor wrote {sorted(media_files(folder) ^ before)}")
            print(f"test-browser: roll: trim editor on {movie}, ends previewed, cancelled: no new file")
            continue
        driver.find_element(By.ID, "trim-save").click()
        wait_for("the trimmed copy", lambda: attribute(driver, "trim-sheet", "data-result"), timeout=90, detail=lambda: page_error(driver))
        trimmed = attribute(driver, "trim-sheet", "data-result")
        if media_files(folder) - before != {trimmed}:
            fail(f"Save wrote {sorted(media_files(folder) - before)}, not {trimmed}")
        rate = probe(os.path.join(media, movie), "stream=r_frame_rate")["streams"][0]["r_frame_rate"].split("/")
        frame = float(rate[1]) / float(rate[0])
        duration = float(probe(os.path.join(media, trimmed), "format=duration")["format"]["duration"])
        if abs(duration - (end - start)) > frame + 0.001:
            fail(f"the trimmed copy lasts {duration:.4f} s, not {end - start:.3f} s within a frame ({frame:.4f} s)")
        driver.find_element(By.ID, "trim-cancel").click()
        wait_for("the trim editor to close", lambda: not visible(driver, "trim-sheet"))
        print(f"test-browser: roll: trimmed {movie} {start}-{end} s -> {trimmed}, {duration:.4f} s (ffprobe; a frame is {frame:.4f} s)")
        return movie


def check_thumbnail(driver, folder):
    media = os.path.join(folder, "media")
    movie = pick_from_album(driver, "video")
    wait_for("the player", lambda: visible(driver, "picked-video") and driver.execute_script(
        "return document.getElementById('picked-video').readyState") >= 1)
    before = media_files(folder)
    type_number(driver, "thumb-time", 0.5)
    driver.find_element(By.ID, "thumb-make").click()
    wait_for("the thumbnail", lambda: attribute(driver, "thumb-figure", "data-name") and loaded_width(driver, "thumb-result") > 0,
             detail=lambda: page_error(driver))
    name, actual = attribute(driver, "thumb-figure", "data-name"), float(attribute(driver, "thumb-figure", "data-actual-time"))
    if media_files(folder) - before != {name}:
        fail(f"the thumbnail wrote {sorted(media_files(folder) - before)}, not {name}")
    if abs(actual - 0.5) > 1 / 25 or image_size(os.path.join(media, name)) != (640, 480):
        fail(f"the thumbnail {name} is {image_size(os.path.join(media, name))} at {actual} s, not 640x480 at 0.5 s")
    driver.find_element(By.ID, "viewer-close").click()
    wait_for("the viewer to close", lambda: not visible(driver, "viewer-sheet"))
    print(f"test-browser: roll: thumbnail of {movie} at 0.5 s -> {name} (frame at {actual:.3f} s, 640x480 by identify)")


def check_camera_roll(driver, base, folder):
    driver.get(base + "?mjpeg=1")
    wait_for("the preview to play", lambda: driver.execute_script("return window.captureStats.frames > 2"))
    photo = check_crop_after_shot(driver, folder)
    check_crop_cancelled(driver, folder, photo)
    check_trim(driver, folder)
    check_thumbnail(driver, folder)
    if driver.find_element(By.ID, "error").text:
        fail(f"the page shows an error: {driver.find_element(By.ID, 'error').text}")


def main():
    if not os.access(BINARY, os.X_OK):
        fail(f"{BINARY} is not built")
    folder = tempfile.mkdtemp(prefix="capture-browser-")
    process, base, log = start_server(folder)
    driver = None
    try:
        driver = browser()
        for query, transport in TRANSPORTS:
            check_transport(driver, base, folder, query, transport)
        check_camera_roll(driver, base, folder)
    finally:
        if driver is not None:
            driver.quit()
        process.send_signal(signal.SIGTERM)
        try:
            status = process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            fail("capture serve did not stop within 30 s of SIGTERM")
        log.seek(0)
        if status != 0:
            fail(f"capture serve exited {status}: {log.read()}")
        shutil.rmtree(folder, ignore_errors=True)
    print("test-browser: ok")


if __name__ == "__main__":
    main()
