#!/usr/bin/python3
"""Benchmark of `capture serve` in headless Chromium (measured, never asserted).

1. Latency, per transport (WebRTC, MJPEG): the page records, for every frame it shows, its clock at
   display minus the frame's capture time on the server's clock (WebRTC: the RTP timestamp, which is the
   frame's running time at 90 kHz, against the pipeline's clock epoch; MJPEG: each part's X-Capture-Time).
   Same machine, same wall clock, loopback: glass-to-glass but for a real sensor's exposure and readout
   (the test pattern's frame exists at its timestamp). Median and p95 over --seconds.
2. Several viewers at once: N WebRTC viewers (separate browser windows) and one MJPEG client that never
   reads, while a recording runs for --seconds: per viewer frames shown and largest gap, the session's
   frame-dropped events by output, the movie's frames counted by ffprobe against its duration, and the
   capture process's CPU.

usage: scripts/bench-serve.py [CAPTURE_BINARY] [--seconds S] [--viewers N] [--json FILE]
"""
import argparse
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from importlib import import_module
browser_test = import_module("test-browser")

PIPELINE = """session, preset=hd1280x720
input, name=camera, device=test-pattern
output, name=photo, kind=photo, codec=jpeg, quality=90, location="IMG_%04d.jpg"
"""


def percentile(values, fraction):
    ordered = sorted(values)
    if not ordered:
        return None
    return ordered[min(len(ordered) - 1, int(round(fraction * (len(ordered) - 1))))]


def cpu_seconds(pid):
    with open(f"/proc/{pid}/stat") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def post(base, path, body=None):
    data = json.dumps(body or {}).encode()
    request = urllib.request.Request(base.rstrip("/") + path, data=data, method="POST", headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read() or b"{}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("binary", nargs="?", default=".build/release/capture")
    parser.add_argument("--seconds", type=float, default=10)
    parser.add_argument("--viewers", type=int, default=5)
    parser.add_argument("--json")
    options = parser.parse_args()
    browser_test.BINARY = os.path.abspath(options.binary)
    browser_test.PIPELINE = PIPELINE
    folder = tempfile.mkdtemp(prefix="capture-bench-serve-")
    process, base, log = browser_test.start_server(folder)
    events_path = os.path.join(folder, "events.jsonl")
    report = {"seconds": options.seconds, "viewers": options.viewers, "latency": {}}
    driver = None
    try:
        driver = browser_test.browser()
        for query, transport in [("", "webrtc"), ("?mjpeg=1", "mjpeg")]:
            driver.get(base + query)
            browser_test.wait_for(f"{transport} to play", lambda: driver.execute_script(
                "return window.captureStats.frames > 10 && window.captureStats.transport === arguments[0]", transport))
            time.sleep(2)
            driver.execute_script("window.captureStats.reset()")
            time.sleep(options.seconds)
            stats = driver.execute_script("return {frames: window.captureStats.frames, gap: window.captureStats.maxGapMs, latencies: window.captureStats.latencies}")
            values = stats["latencies"]
            report["latency"][transport] = {"frames": stats["frames"], "samples": len(values), "median_ms": percentile(values, 0.5),
                                            "p95_ms": percentile(values, 0.95), "max_gap_ms": stats["gap"]}
            print(f"bench-serve: {transport}: {len(values)} frames, latency median {percentile(values, 0.5):.1f} ms, "
                  f"p95 {percentile(values, 0.95):.1f} ms, largest gap {stats['gap']:.0f} ms")
        driver.get("about:blank")
        time.sleep(2)

        # Several viewers, one stalled client, and a recording.
        windows = [driver.current_window_handle]
        for _ in range(options.viewers - 1):
            driver.switch_to.new_window("window")
            windows.append(driver.current_window_handle)
        for handle in windows:
            driver.switch_to.window(handle)
            driver.get(base)
        for handle in windows:
            driver.switch_to.window(handle)
            browser_test.wait_for("a viewer to play", lambda: driver.execute_script(
                "return window.captureStats.frames > 10 && window.captureStats.transport === 'webrtc'"), timeout=60)
        port = int(re.search(r":(\d+)/", base).group(1))
        stalled = socket.create_connection(("127.0.0.1", port))
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stalled.sendall(f"GET /stream.mjpeg HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
        post(base, "/api/mode", {"mode": "video"})
        for handle in windows:
            driver.switch_to.window(handle)
            driver.execute_script("window.captureStats.reset()")
        with open(events_path) as handle:
            events_before = len(handle.read())
        cpu_before, wall_before = cpu_seconds(process.pid), time.monotonic()
        post(base, "/api/recording/start")
        time.sleep(options.seconds)
        post(base, "/api/recording/stop")
        cpu = (cpu_seconds(process.pid) - cpu_before) / (time.monotonic() - wall_before)
        viewers = []
        for handle in windows:
            driver.switch_to.window(handle)
            stats = driver.execute_script("return {frames: window.captureStats.frames, gap: window.captureStats.maxGapMs, latencies: window.captureStats.latencies}")
            viewers.append({"frames": stats["frames"], "max_gap_ms": stats["gap"], "latency_median_ms": percentile(stats["latencies"], 0.5)})
        stalled.close()
        time.sleep(1)
        movies = sorted(name for name in os.listdir(os.path.join(folder, "media")) if name.endswith(".mp4"))
        movie = os.path.join(folder, "media", movies[-1])
        probe = subprocess.run(["ffprobe", "-v", "error", "-count_frames", "-select_streams", "v:0", "-show_entries",
                                "stream=nb_read_frames,r_frame_rate:format=duration", "-of", "json", movie], capture_output=True, text=True)
        info = json.loads(probe.stdout)
        frames = int(info["streams"][0]["nb_read_frames"])
        duration = float(info["format"]["duration"])
        numerator, denominator = (int(x) for x in info["streams"][0]["r_frame_rate"].split("/"))
        with open(events_path) as handle:
            lines = handle.read()[events_before:].splitlines()
        drops = {}
        for line in lines:
            if line.startswith("{") and '"frame-dropped"' in line:
                event = json.loads(line)
                key = f"{event.get('output')} ({event.get('reason')})"
                drops[key] = drops.get(key, 0) + 1
        report["viewers_run"] = {"viewers": viewers, "movie_frames": frames, "movie_duration": duration,
                                 "movie_expected_frames": round(duration * numerator / denominator), "frame_dropped": drops, "cpu_cores": cpu}
        print(f"bench-serve: {options.viewers} WebRTC viewers + 1 stalled MJPEG client, {options.seconds:.0f} s recording:")
        for index, viewer in enumerate(viewers):
            print(f"  viewer {index + 1}: {viewer['frames']} frames, largest gap {viewer['max_gap_ms']:.0f} ms, latency median {viewer['latency_median_ms'] or 0:.1f} ms")
        print(f"  movie: {frames} frames in {duration:.2f} s (expected {report['viewers_run']['movie_expected_frames']})")
        print(f"  frame-dropped events by output: {drops or 'none'}")
        print(f"  capture process CPU: {cpu:.2f} cores")
    finally:
        if driver is not None:
            driver.quit()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=30)
        shutil.rmtree(folder, ignore_errors=True)
    if options.json:
        with open(options.json, "w") as handle:
            json.dump(report, handle, indent=2)


if __name__ == "__main__":
    main()
