"""Headless Chromium driven by Selenium, on a machine that may not resolve the name "localhost".

Used by scripts/test-browser.py (and through it scripts/bench-serve.py) and scripts/check-docs-browser.py.

Two connections are made by name when Selenium runs chromedriver the usual way: Selenium (4.8, Debian 12)
waits for and talks to chromedriver at http://localhost:PORT, and chromedriver opens Chromium's DevTools
WebSocket at ws://localhost:PORT, resolving the name with getaddrinfo(). A clean Debian 12 root made by
mmdebstrap has no /etc/hosts: glibc then asks the DNS server for "localhost", gets no address, and the
session fails with "session not created from disconnected: unable to connect to renderer". So here no
name is resolved and nothing on the machine is changed:
  - chromedriver is started here with --port=0 (it listens on the loopback interface only, on a port it
    picks and prints) and is spoken to at 127.0.0.1;
  - Chromium is started with --remote-debugging-pipe: chromedriver drives it over a pipe pair instead of a
    DevTools TCP port, so there is no DevTools server and no WebSocket to reach.
"""
import atexit
import re
import shutil
import subprocess
import tempfile
import time

from selenium import webdriver


class Unavailable(Exception):
    """chromedriver did not start, or did not say which port it listens on."""


def _stop(process):
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=10)


def start(arguments, timeout=30.0):
    """A Selenium session of Chromium started with `arguments` (and --remote-debugging-pipe).

    The caller quits the session; chromedriver is stopped when this process exits. Raises Unavailable
    (with chromedriver's output) when chromedriver exits or has not listened within `timeout` seconds.
    """
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    chromedriver = shutil.which("chromedriver") or "/usr/bin/chromedriver"
    output = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen([chromedriver, "--port=0"], stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT)
    atexit.register(_stop, process)
    deadline = time.monotonic() + timeout
    while True:
        output.seek(0)
        said = output.read()
        match = re.search(r"started successfully on port (\d+)", said)
        if match:
            port = int(match.group(1))
            break
        if process.poll() is not None:
            raise Unavailable(f"chromedriver exited with {process.returncode}: {said.strip()}")
        if time.monotonic() >= deadline:
            raise Unavailable(f"chromedriver did not listen within {timeout:.0f} s: {said.strip()}")
        time.sleep(0.1)
    options = webdriver.ChromeOptions()
    for argument in list(arguments) + ["--remote-debugging-pipe"]:
        options.add_argument(argument)
    options.binary_location = chromium
    return webdriver.Remote(command_executor=f"http://127.0.0.1:{port}", options=options)
