#!/usr/bin/python3
"""Opens the rendered API reference in headless Chromium, as a reader would.

    scripts/check-docs-browser.py DOCS_DIR      (what scripts/make-docs.sh wrote, e.g. .build/docs)

Serves DOCS_DIR on 127.0.0.1 (a free port, this process only), then with Chromium and chromedriver
(Debian's `chromium`, `chromium-driver`, `python3-selenium`, started by scripts/headless_chromium.py so
that no host name has to resolve): the index lists every module; each module's landing page renders its
title and its topics; a type page (CaptureSession) renders its title and declaration; every link of the
landing pages answers. Exit 0 when all hold, 1 otherwise.
"""
import functools
import http.server
import sys
import threading
import urllib.error
import urllib.parse
import urllib.request

from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

import headless_chromium

MODULES = ["Capture", "CaptureControl", "PipelineFile", "GStreamer", "Barcodes", "CaptureGTK"]


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *arguments):
        pass


def main(directory):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(Quiet, directory=directory))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    # Not Selenium's chromedriver service: it waits for chromedriver at "localhost", which does not
    # resolve on a machine without /etc/hosts (a clean Debian 12 root); see headless_chromium.py.
    try:
        browser = headless_chromium.start(["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1280,900"])
    except headless_chromium.Unavailable as error:
        server.shutdown()
        print(f"check-docs-browser: {error}", file=sys.stderr)
        return 1
    browser.set_page_load_timeout(60)
    failures = []
    try:
        browser.get(base + "/index.html")
        listed = [link.text for link in browser.find_elements(By.TAG_NAME, "a")]
        for module in MODULES:
            if module not in listed:
                failures.append(f"index.html does not link {module}")

        def rendered_title(path):
            browser.get(base + path)
            WebDriverWait(browser, 30).until(lambda b: b.find_elements(By.CSS_SELECTOR, "h1") and b.find_element(By.CSS_SELECTOR, "h1").text.strip())
            return browser.find_element(By.CSS_SELECTOR, "h1").text.strip()

        checked = 0
        for module in MODULES:
            path = f"/{module}/documentation/{module.lower()}/"
            title = rendered_title(path)
            if title != module:
                failures.append(f"{path} shows the title {title!r}, not {module!r}")
            topics = browser.find_elements(By.CSS_SELECTOR, ".topic a, .link-block a, a.link")
            links = sorted({a.get_attribute("href") for a in topics if a.get_attribute("href")})
            if not links:
                failures.append(f"{path} lists no topics")
            for link in links:
                if not link.startswith(base):
                    continue
                try:
                    with urllib.request.urlopen(link, timeout=10) as answer:
                        checked += answer.status == 200
                except urllib.error.URLError as error:
                    failures.append(f"{path}: the link {link} does not answer ({error})")
        title = rendered_title("/Capture/documentation/capture/capturesession")
        if title != "CaptureSession":
            failures.append(f"the CaptureSession page shows {title!r}")
        declaration = browser.find_elements(By.CSS_SELECTOR, ".declaration, pre")
        if not any("class CaptureSession" in element.text for element in declaration):
            failures.append("the CaptureSession page has no declaration")
        article = rendered_title("/Capture/documentation/capture/comingfromavfoundation")
        if article != "Coming from AVFoundation":
            failures.append(f"the migration article shows {article!r}")
        print(f"check-docs-browser: {len(MODULES)} landing pages, the CaptureSession page and the migration article rendered; {checked} links answered")
    finally:
        browser.quit()
        server.shutdown()
    for failure in failures:
        print("check-docs-browser: " + failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: check-docs-browser.py DOCS_DIR", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
