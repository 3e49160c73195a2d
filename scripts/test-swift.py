#!/usr/bin/env python3
"""The Swift suites in lanes: `make test-swift`.

Most of the suites wait on live pipelines (a recording of a second, a stream that reconnects), not on
the CPU, so a few processes side by side finish sooner than one. Each lane is the test binary itself
(`swift test` would hold the build folder's lock) run with --no-parallel on a set of whole suites,
spread by the seconds each suite took (scripts/test-swift-times.json; a suite not listed counts 1 s).
A suite's tests still run one at a time, as they always have: only whole suites run beside each other.

Usage: test-swift.py [BINARY]   (default .build/debug/CapturePackageTests.xctest)
Environment: CAPTURE_TEST_LANES (default 3), CAPTURE_TEST_FILTER (a regular expression: only the
suites it matches), CAPTURE_TEST_LANE_TIMEOUT (seconds, default 1200: a lane still running then is
killed and fails, naming the test it was in).
Exit status: 0 when every lane passed, 1 when a test failed or a lane ended without its summary.
"""
import json
import os
import re
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
binary = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, ".build/debug/CapturePackageTests.xctest")
lanes = max(1, int(os.environ.get("CAPTURE_TEST_LANES", "3")))
lane_timeout = float(os.environ.get("CAPTURE_TEST_LANE_TIMEOUT", "1200"))
only = re.compile(os.environ.get("CAPTURE_TEST_FILTER", ".*"))
out = os.path.join(root, ".build/test-lanes")
os.makedirs(out, exist_ok=True)

listed = subprocess.run([binary, "--testing-library", "swift-testing", "--list-tests"], capture_output=True, text=True, check=True)
suites = sorted({line.split("/")[0] for line in listed.stdout.splitlines() if "/" in line and only.search(line)})
if not suites:
    sys.exit("test-swift: no suite matches")
with open(os.path.join(root, "scripts/test-swift-times.json")) as file:
    weights = json.load(file)

# Greedy: the heaviest suite first, each to the lane with the fewest seconds so far.
plan = [[] for _ in range(lanes)]
load = [0.0] * lanes
for suite in sorted(suites, key=lambda name: -weights.get(name, 1.0)):
    lane = load.index(min(load))
    plan[lane].append(suite)
    load[lane] += weights.get(suite, 1.0)

started = time.monotonic()
running = []
for index, members in enumerate(plan):
    if not members:
        continue
    pattern = "^(" + "|".join(re.escape(name) for name in members) + ")/"
    xml = os.path.join(out, f"lane-{index + 1}.xml")
    log = open(os.path.join(out, f"lane-{index + 1}.log"), "w")
    if os.path.exists(xml):
        os.remove(xml)
    process = subprocess.Popen(
        [binary, "--testing-library", "swift-testing", "--no-parallel", "--filter", pattern, "--xunit-output", xml],
        stdout=log, stderr=subprocess.STDOUT)
    running.append((index + 1, members, xml, log, process, time.monotonic()))

failed = False
total_tests = total_failures = 0
def last_started(path):
    """The last test a lane's log says it started (what a hung or crashed lane was doing)."""
    with open(path, errors="replace") as file:
        started = [line.strip() for line in file if " started." in line and "Test " in line]
    return started[-1] if started else "none"


# Each lane's own time: the moment it ended, not the moment its turn to be read came.
ended_at = {}
while len(ended_at) < len(running) and time.monotonic() - started < lane_timeout:
    for lane, _, _, _, process, _ in running:
        if lane not in ended_at and process.poll() is not None:
            ended_at[lane] = time.monotonic()
    time.sleep(0.2)  # the runner's own pacing between polls of its children
for lane, members, xml, log, process, begun in running:
    if process.poll() is None:
        process.kill()
        process.wait()
        print(f"test-swift: lane {lane} ran longer than {lane_timeout:.0f} s and was stopped; last: {last_started(log.name)}")
    status = process.returncode
    log.close()
    seconds = ended_at.get(lane, time.monotonic()) - begun
    tests = failures = 0
    failing = []
    try:
        cases = list(ET.parse(xml).getroot().iter("testcase")) if os.path.exists(xml) else []
    except ET.ParseError:  # a lane that was killed leaves its report unfinished
        cases = []
    for case in cases:
        tests += 1
        if case.find("failure") is not None:
            failures += 1
            failing.append(f"{case.get('classname')}/{case.get('name')}")
    ended = status == 0 or failures > 0
    print(f"test-swift: lane {lane}: {tests} tests in {len(members)} suites, {failures} failed, exit {status}, {seconds:.0f} s")
    for name in failing:
        print(f"test-swift:   failed: {name}")
    if status != 0:
        failed = True
        if not ended:
            print(f"test-swift:   the lane ended without a failing test (a crash?), in {last_started(log.name)}: see {log.name}")
    total_tests += tests
    total_failures += failures
print(f"test-swift: {total_tests} tests, {total_failures} failed, in {time.monotonic() - started:.0f} s on {len(running)} lanes (logs in {out})")
sys.exit(1 if failed else 0)
