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
from selenium.webdriver.common.by import By

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


def wait_for(what, condition, timeout=30.0, interval=0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(interval)
    fail(f"gave up waiting for {what} after {timeout:.0f} s")


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
    time.sleep(2)
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
