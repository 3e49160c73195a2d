#!/usr/bin/env bash
# Runs inside the vivid VM (see scripts/test-hardware.sh): checks of the real V4L2 path.
set -uo pipefail
work=${1:?work directory}
bin=${CAPTURE_BIN:?}
passed=0 failed=0
only=${CAPTURE_HARDWARE_ONLY:-}   # a regular expression: run only the checks whose name matches
skip=${CAPTURE_HARDWARE_SKIP:-}   # a regular expression: leave out the checks whose name matches
check() {  # check NAME COMMAND...
  local name=$1; shift
  if [[ -n $only && ! $name =~ $only ]]; then return 0; fi
  if [[ -n $skip && $name =~ $skip ]]; then return 0; fi
  local log="$work/$(echo "$name" | tr -c 'a-zA-Z0-9' '_').log" began=$SECONDS
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1)); echo "ok    $name ($((SECONDS - began)) s)"; grep '^note: ' "$log" | sed 's/^note: /      /'
  else
    failed=$((failed + 1)); echo "FAIL  $name ($((SECONDS - began)) s)"; sed 's/^/      /' "$log" | tail -20
  fi
}
[[ ${CAPTURE_IN_VM:-} == 1 && -e /dev/video0 ]] || { echo "not in the vivid VM (no /dev/video0)"; exit 69; }
vivid=/sys/bus/platform/drivers/vivid
repo=$PWD
# Debian's Python, the one the install step provides packages for. A python3 found first on the PATH
# may be a version manager's shim (pyenv's is a shell script that runs more processes): in the emulated
# guest it took 4-8 s to start, against 0.4-0.9 s for /usr/bin/python3, and the checks start it 13 times.
python3() { /usr/bin/python3 "$@"; }

when() {  # when FILE PATTERN [SECONDS]: waits until FILE has a line matching PATTERN
  local deadline=$((SECONDS + ${3:-30}))
  until grep -q -- "$2" "$1" 2>/dev/null; do
    ((SECONDS < deadline)) || { echo "no '$2' in $1 within ${3:-30} s"; return 1; }
    sleep 0.2
  done
}
node_is() {  # node_is present|absent: waits (10 s at most) for /dev/video0 to appear or disappear
  for _ in $(seq 50); do
    if [[ $1 == present ]]; then [[ -e /dev/video0 ]] && return 0; else [[ -e /dev/video0 ]] || return 0; fi
    sleep 0.2
  done
  echo "/dev/video0 is not $1"; return 1
}
unplug() { echo vivid.0 > $vivid/unbind && node_is absent; }
replug() { [[ -e /dev/video0 ]] || { echo vivid.0 > $vivid/bind && node_is present && udevadm settle --timeout=20 2>/dev/null; true; }; }
event_lines() {  # event_lines FILE EVENT: the JSON lines of one event
  grep "\"event\": \"$2\"" "$1"
}
# Frames the session itself dropped for an output (reason late/out-of-buffers), as opposed to frames
# the driver never delivered (reason driver: under TCG vivid misses frames whenever the guest is busy).
session_drops() {  # session_drops FILE OUTPUT
  event_lines "$1" frame-dropped | grep "\"output\": \"$2\"" | grep -vc '"reason": "driver"'
}
driver_drops() {  # driver_drops FILE OUTPUT
  event_lines "$1" frame-dropped | grep "\"output\": \"$2\"" | grep -c '"reason": "driver"'
}

devices_json() {
  "$bin" devices --json > "$work/devices.json" &&
  python3 - "$work/devices.json" <<'PY'
import json, sys
devices = json.load(open(sys.argv[1]))
vivid = [d for d in devices if d["id"] == "/dev/video0"]
assert vivid, f"no /dev/video0 in {[d['id'] for d in devices]}"
d = vivid[0]
assert d["name"] == "vivid", d["name"]
sizes = {(f["width"], f["height"]) for f in d["formats"]}
assert (640, 480) in sizes and (1280, 720) in sizes, sizes
keys = {c["key"] for c in d["controls"]}
for key in ["brightness", "contrast", "saturation", "hue", "gain", "horizontal_flip", "vertical_flip"]:
    assert key in keys, f"control {key} missing: {sorted(keys)}"
brightness = [c for c in d["controls"] if c["key"] == "brightness"][0]
assert brightness["minimum"] == 0 and brightness["maximum"] == 255 and brightness["value"] is not None
PY
}
check "capture devices --json lists vivid with formats and controls" devices_json

controls_vivid() {
  cd "$work" || return 1
  # What vivid can do: its user controls are settable; the camera-class features it lacks are
  # unsupported; the zoom is the session's crop.
  "$bin" controls -i /dev/video0 --json > controls.json || { cat controls.json; return 1; }
  python3 - controls.json <<'PY' || return 1
import json, sys
report = json.load(open(sys.argv[1]))
features = report["features"]
lacking = ["focus-mode", "focus-point", "lens-position", "exposure-mode", "exposure-point", "exposure-duration",
           "exposure-bias", "white-balance-mode", "white-balance-temperature", "flash", "torch", "low-light-boost"]
for name in lacking:
    assert features[name] == "unsupported", (name, features[name])
assert features["zoom"] == "1-8 (crop)", features["zoom"]
settable = {c["key"] for c in report["controls"] if c["settable"]}
for key in ["brightness", "contrast", "saturation", "hue", "gain", "horizontal_flip", "vertical_flip"]:
    assert key in settable, (key, sorted(settable))
print("note: unsupported on vivid: " + ", ".join(lacking) + "; zoom " + features["zoom"] + "; gain " + features["gain"])
PY
  # Set while streaming: brightness (the driver's control, read back with v4l2-ctl while the session
  # runs) and the crop zoom, mid-stream; every frame saved small, to see the change in the pixels.
  printf '%s\n' 'session, preset=vga640x480' 'input, name=camera, device=/dev/video0' \
    'output, name=frames, kind=frames, location="bright/%04d.png", size=160x120' \
    'start' 'wait, event=frame-saved, count=5, timeout=60' 'configure-device, input=camera, controls={ "brightness=220" }' \
    'wait, event=device-configured, timeout=20' 'wait, duration=3' 'configure-device, input=camera, zoom=2' \
    'wait, event=device-configured, count=2, timeout=20' 'wait, duration=2' \
    'configure-device, input=camera, focus-mode=continuous, expect-error=control-not-supported' \
    'configure-device, input=camera, exposure-mode=custom, exposure-duration="10ms", expect-error=control-not-supported' \
    'configure-device, input=camera, white-balance-mode=locked, expect-error=control-not-supported' \
    'configure-device, input=camera, torch-mode=on, expect-error=control-not-supported' \
    'configure-device, input=camera, low-light-boost=true, expect-error=control-not-supported' \
    'configure-device, input=camera, flash-mode=on, expect-error=flash-not-supported' \
    'configure-device, input=camera, controls={ "brightness=256" }, expect-error=control-out-of-range' \
    'stop' 'expect, event=device-configured, count=2' 'expect, event=runtime-error, count=0' > controls.pipeline
  mkdir -p bright
  "$bin" run controls.pipeline --json > controls-run.json 2>&1 & runner=$!
  readback=none
  when controls-run.json device-configured 60 && readback=$(v4l2-ctl -d /dev/video0 --get-ctrl brightness)
  wait $runner; ran=$?
  v4l2-ctl -d /dev/video0 -c brightness=128
  echo "note: v4l2-ctl --get-ctrl brightness while the session streams: $readback"
  grep -E 'device-configured|expectation-failed|"expected": false' controls-run.json | sed 's/^/note: /'
  ((ran == 0)) && [[ $readback == "brightness: 220" ]] || return 1
  python3 - controls-run.json <<'PY'
import json, subprocess, sys
events = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
saved = [e for e in events if e["event"] == "frame-saved"]
changes = [e for e in events if e["event"] == "device-configured"]
bright, zoom = changes
# Every saved frame's mean luma and the colour of one pixel near its left edge, in two ImageMagick
# runs over all the files (one run per file took minutes in the emulated guest); a line per file, in order.
def per_file(*operations):
    out = subprocess.check_output(["convert", *[e["location"] for e in saved], *operations, "info:"], text=True)
    lines = [line for line in out.split("\n") if line]
    assert len(lines) == len(saved), (len(lines), len(saved))
    return lines
means = [int(v) for v in per_file("-colorspace", "gray", "-format", "%[fx:int(255*mean)]\n")]
edges = [tuple(int(v) for v in line.split()) for line in per_file("-crop", "1x1+2+30", "-format", "%[fx:int(255*r)] %[fx:int(255*g)] %[fx:int(255*b)]\n")]
looks = [(e["time"], (mean, edge)) for e, mean, edge in zip(saved, means, edges)]
made = bright["time"] - bright["latency"]
before = [l for t, l in looks if t < made]
after = [l for t, l in looks if bright["time"] + 1.0 < t < zoom["time"] - zoom["latency"]]
zoomed = [l for t, l in looks if t > zoom["time"] + 1.0]
dim = max(l[0] for l in before)
lit = min(l[0] for l in after + zoomed)
print(f"note: brightness 128 -> 220: frame {bright.get('frame')}, {bright['frames-before']} frame(s) before it, "
      f"{bright['latency'] * 1000:.0f} ms after the write; mean luma of the saved frames {dim} (brightest before) -> {lit} (darkest after)")
# The first saved frame that is bright, against the frame the event named: files are numbered in
# arrival order, the driver's sequence counts the frames it dropped too.
threshold = (dim + lit) / 2
first = next(i for i, (t, l) in enumerate(looks) if l[0] > threshold)
drops = sum(1 for e in events if e["event"] == "frame-dropped" and e.get("output") == "frames" and e["time"] <= bright["time"])
expected = bright.get("frame", 0) - drops
print(f"note: first bright file #{first}; the event's frame {bright.get('frame')} minus {drops} dropped before it = file #{expected}")
# The frame reported carries the change, and no frame before the ones that arrived after the write
# (frames-before: stamped before it, so not promised) does. Files map onto the driver's sequence only
# while no frame was lost before the change (under TCG vivid drops many): checked then, said always.
if drops == 0:
    assert expected - bright["frames-before"] <= first <= expected, (first, expected, bright["frames-before"])
else:
    print(f"note: {drops} frames lost before the change: files and driver sequence numbers do not map exactly; not checked")
edge_before = after[-1][1]
edge_after = zoomed[-1][1]
print(f"note: zoom 1 -> 2 (crop): frame {zoom.get('frame')}, {zoom['frames-before']} frame(s) before it; left edge RGB {edge_before} -> {edge_after}")
assert lit > dim + 30, (dim, lit)
assert sum(abs(a - b) for a, b in zip(edge_before, edge_after)) > 100, (edge_before, edge_after)
PY
}
check "vivid controls: brightness and the crop zoom set while streaming (read back with v4l2-ctl, seen in the pixels, first frame reported); camera-class features unsupported" controls_vivid

photo_vga() {
  cd "$work" && "$bin" photo -i /dev/video0 --size 640x480 -o vivid.jpg &&
  [[ $(identify -format '%m %w %h' vivid.jpg) == "JPEG 640 480" ]]
}
check "a photo from /dev/video0 at 640x480 decodes" photo_vga

movie_vga() {
  cd "$work" && "$bin" record -i /dev/video0 --no-audio --size 640x480 --duration 2 -o vivid.mp4 > record.out || return 1
  sed 's/^/note: capture record: /' record.out
  out=$(ffprobe -v error -show_entries stream=codec_name,width,height,avg_frame_rate:format=duration -of csv=p=0 vivid.mp4) &&
  echo "note: ffprobe: $(echo $out)" && grep -q "h264,640,480,25/1" <<<"$out" &&
  # The file lasts what `capture record` said it recorded (to the report's hundredth: it reports where
  # the file's video ends), and never more than the 2 s asked for (a late frame in the last slot once
  # made it 2.04 s). How much of the 2 s the camera delivered is not asserted: under TCG x264enc
  # encodes about 3 frames a second at 640x480, the recording branch holds the camera's buffers
  # back meanwhile, and the driver drops frames, at times all of those just before the 2 s mark (the
  # file then ends at the last frame it delivered; seen: 0.87 s).
  python3 -c "
import sys
file, told = float(sys.argv[1]), float(sys.argv[2])
assert abs(file - told) <= 0.011, (file, told)
assert 0 < told <= 2.005, told" "$(tail -1 <<<"$out")" "$(grep -o '[0-9.]* s ' record.out | head -1 | tr -d ' s')"
}
check "a 2 s movie from /dev/video0: H.264 640x480 at 25 fps, lasting what the recorder reported (2 s unless the driver dropped the last frames)" movie_vga

compile_presets() {
  for preset in vga640x480 hd1280x720 cif352x288; do
    printf 'session, preset=%s\ninput, name=camera, device=/dev/video0\noutput, name=p, kind=preview, sink=none\n' "$preset" > "$work/p.pipeline"
    "$bin" compile "$work/p.pipeline" | tee -a "$work/compile.txt" || return 1
  done
  grep -q "width=640,height=480,framerate=25/1" "$work/compile.txt" &&
  grep -q "width=1280,height=720,framerate=25/2" "$work/compile.txt" &&
  printf 'session, preset=hd4K3840x2160\ninput, name=camera, device=/dev/video0, size="640x480"\n' > "$work/q.pipeline" &&
  ! "$bin" compile "$work/q.pipeline"
}
check "presets resolve to formats vivid offers (720p at 12.5 fps), a size it lacks is refused" compile_presets

presets_run() {
  cd "$work" || return 1
  # One running session walks through every preset (set-preset live: scaled in place when the device
  # format can serve it, else the device restarts at a format it offers); a photo at each proves the
  # stream flows at the preset's size. Any not-negotiated stall fails the wait.
  local presets=(low medium cif352x288 vga640x480 hd1280x720 hd1920x1080 hd4K3840x2160 photo high)
  {
    printf 'session, preset=low\ninput, name=camera, device=/dev/video0\noutput, name=photo, kind=photo, location="preset_%%d.jpg"\nstart\n'
    local n=0
    for preset in "${presets[@]}"; do
      n=$((n + 1))
      printf 'set-preset, preset=%s\ncapture-photo, output=photo\nwait, event=photo-saved, count=%d, timeout=60\n' "$preset" "$n"
    done
    printf 'stop\nexpect, event=interrupted, count=0\nexpect, event=runtime-error, count=0\n'
  } > presets.pipeline
  "$bin" run presets.pipeline --json > presets.json 2>&1; ran=$?
  grep -E 'configuration-committed|photo-saved|error|expectation-failed' presets.json
  ((ran == 0)) || return 1
  python3 - "${presets[@]}" <<'PY'
import json, subprocess, sys
presets = sys.argv[1:]
fixed = {"low": (192, 144), "medium": (480, 360), "cif352x288": (352, 288), "vga640x480": (640, 480),
         "hd1280x720": (1280, 720), "hd1920x1080": (1920, 1080), "hd4K3840x2160": (3840, 2160), "photo": (3840, 2160)}
saved = [json.loads(line) for line in open("presets.json") if '"photo-saved"' in line]
assert len(saved) == len(presets), len(saved)
for preset, event in zip(presets, saved):
    size = tuple(int(v) for v in subprocess.check_output(["identify", "-format", "%w %h", event["location"]]).split())
    assert size == (event["width"], event["height"]), (preset, size, event)
    assert preset not in fixed or size == fixed[preset], (preset, size)
    print(f"note: {preset}: {size[0]}x{size[1]}")
PY
}
check "every session preset runs live on vivid at the size it promises (scaled or device restarted), no stall" presets_run

busy() {
  cd "$work" && "$bin" record -i /dev/video0 --no-audio --duration 4 -o busy1.mp4 & first=$!
  sleep 2
  "$bin" photo -i /dev/video0 -o busy.jpg > "$work/busy.out" 2>&1; code=$?
  wait $first
  sed "s/^/note: exit $code: /" "$work/busy.out"
  [[ $code == 1 || $code == 69 ]] && grep -qi "busy" "$work/busy.out"
}
check "a second process on the busy device gets a typed device-busy error, not a hang" busy

streamon_error() {
  v4l2-ctl -d /dev/video0 -c inject_vidioc_streamon_error=1 || true
  "$bin" photo -i /dev/video0 -o never.jpg > "$work/streamon.out" 2>&1; code=$?
  sed "s/^/note: exit $code: /" "$work/streamon.out"
  [[ $code == 69 ]] && ! [[ -e never.jpg ]] && grep -q "could not start streaming" "$work/streamon.out"
}
check "inject_vidioc_streamon_error at start: a typed device-start-failed error, no hang" streamon_error

disconnect_mid_recording() {
  cd "$work" && printf 'session, preset=vga640x480\ninput, name=camera, device=/dev/video0\noutput, name=movie, kind=movie, location="cut.mp4"\nstart\nstart-recording, output=movie\nwait, event=interrupted, timeout=20\nwait, event=session-stopped\nexpect, event=recording-finished, count=1\n' > cut.pipeline
  "$bin" run cut.pipeline --json > cut.json 2>&1 & runner=$!
  when cut.json recording-started 60 && sleep 1.5 && v4l2-ctl -d /dev/video0 -c disconnect=1
  wait $runner
  sed 's/^/note: /' cut.json | grep -E 'interrupted|recording-finished|runtime-error'
  grep -q '"event": "interrupted"' cut.json && grep -q '"success": true' cut.json &&
  ffmpeg -v error -i cut.mp4 -f null - && ffprobe -v error -show_entries format=duration -of csv=p=0 cut.mp4 | sed 's/^/note: cut.mp4 duration: /'
}
check "disconnect=1 mid-recording: interrupted, the recording finishes with success=true and plays" disconnect_mid_recording


hotplug_events() {
  cd "$work" || return 1
  # A session on the test pattern sees the camera come and go without being interrupted; so does
  # `capture devices --watch`, with no session at all.
  printf 'session\ninput, name=pattern, device=test-pattern\noutput, name=p, kind=preview, sink=none\nstart\nwait, event=device-disconnected, timeout=60\nwait, event=device-connected, timeout=60\nstop\nexpect, event=interrupted, count=0\n' > plug.pipeline
  "$bin" devices --watch --json --count 2 --timeout 90 > watch.json 2> watch.err & watcher=$!
  "$bin" run plug.pipeline --json > plug.json 2>&1 & runner=$!
  when watch.err watching 30 && when plug.json session-started 60 || return 1
  sleep 3   # the session starts its device monitor in the background once it runs
  unplug && sleep 1 && replug || return 1
  wait $watcher; watched=$?
  wait $runner; ran=$?
  sed 's/^/note: watch: /' watch.json; sed 's/^/note: session: /' plug.json | grep device-
  ((watched == 0 && ran == 0)) &&
  [[ $(sed -n 1p watch.json) == *'"event": "device-disconnected"'*'"device": "/dev/video0"'* ]] &&
  [[ $(sed -n 2p watch.json) == *'"event": "device-connected"'*'"device": "/dev/video0"'* ]] &&
  event_lines plug.json device-disconnected | grep -q '/dev/video0' &&
  event_lines plug.json device-connected | grep -q '/dev/video0'
}
check "hot-unplug (sysfs unbind) posts device-disconnected, replug (bind) device-connected" hotplug_events

unplug_mid_recording() {
  cd "$work" || return 1
  printf 'session, preset=vga640x480\ninput, name=camera, device=/dev/video0\noutput, name=movie, kind=movie, location="unplugged.mp4"\nstart\nstart-recording, output=movie\nwait, event=session-stopped, timeout=60\nexpect, event=interrupted, count=1\nexpect, event=recording-finished, count=1\n' > unplugged.pipeline
  "$bin" run unplugged.pipeline --json > unplugged.json 2>&1 & runner=$!
  when unplugged.json recording-started 60 && sleep 1.5 && unplug || { replug; return 1; }
  wait $runner; ran=$?
  replug || return 1
  sed 's/^/note: /' unplugged.json | grep -E 'runtime-error|interrupted|recording-finished'
  ((ran == 0)) &&
  event_lines unplugged.json interrupted | grep -q '"reason": "device-disconnected", "device": "/dev/video0"' &&
  event_lines unplugged.json recording-finished | grep -q '"success": true' &&
  ffmpeg -v error -i unplugged.mp4 -f null - &&
  ffprobe -v error -show_entries stream=codec_name,width,height:format=duration -of csv=p=0 unplugged.mp4 | sed 's/^/note: unplugged.mp4: /'
}
check "hot-unplug mid-recording: interrupted (device-disconnected), the recording finishes with success=true and plays" unplug_mid_recording

replug_resumes() {
  cd "$work" || return 1
  printf 'session, preset=vga640x480\ninput, name=camera, device=/dev/video0, reconnect=true\noutput, name=movie, kind=movie, location="replug.mp4"\nstart\nstart-recording, output=movie\nwait, event=resumed, timeout=60\nwait, duration=1.5\nstop-recording, output=movie\nstop\nexpect, event=interrupted, count=1\nexpect, event=resumed, count=1\nexpect, event=recording-finished, count=2\n' > replug.pipeline
  "$bin" run replug.pipeline --json > replug.json 2>&1 & runner=$!
  # Unplugged while recording, plugged back once the session stopped. By then the process holds nothing
  # of the removed node (GStreamer's v4l2src kept its buffer pool's descriptor open; the session lets it
  # go when it stops), so the driver binds again as /dev/video0, and the session opens it there.
  when replug.json recording-started 60 && sleep 1.5 && unplug && when replug.json session-stopped 30 || { replug; kill $runner; return 1; }
  held=$(ls -l /proc/$runner/fd 2>/dev/null | grep -c '/dev/video.* (deleted)')
  echo "note: descriptors on the removed node after session-stopped: $held"
  echo vivid.0 > $vivid/bind || { replug; kill $runner; return 1; }
  wait $runner; ran=$?
  # Put the camera back at /dev/video0 for the checks that follow.
  [[ -e /dev/video0 ]] || { echo vivid.0 > $vivid/unbind; sleep 0.5; replug; }
  sed 's/^/note: /' replug.json | grep -E 'interrupted|resumed|recording-finished|session-'
  ((ran == 0 && held == 0)) &&
  event_lines replug.json resumed | grep -q '"device": "/dev/video0"' &&
  for file in replug.mp4 replug-1.mp4; do
    ffmpeg -v error -i $file -f null - && ffprobe -v error -show_entries format=duration -of csv=p=0 $file | sed "s/^/note: $file lasts /" || return 1
  done
}
check "replug with reconnect=true: the session resumes by itself and the recording goes on in replug-1.mp4" replug_resumes

controls_vanish() {
  cd "$work" || return 1
  # The camera goes while a session holds it; configure-device then takes the lock and its writes fail
  # with a typed error naming the device and the control.
  printf '%s\n' 'session, preset=vga640x480' 'input, name=camera, device=/dev/video0' 'output, name=p, kind=preview, sink=none' \
    'start' 'wait, event=interrupted, timeout=60' \
    'configure-device, input=camera, controls={ "brightness=10" }, expect-error=control-failed' \
    'configure-device, input=camera, zoom=2, expect-error=control-failed' 'stop' > vanish.pipeline
  "$bin" run vanish.pipeline --json > vanish.json 2>&1 & runner=$!
  when vanish.json session-started 60 && sleep 1 && unplug || { replug; kill $runner; return 1; }
  wait $runner; ran=$?
  replug || return 1
  event_lines vanish.json action-failed | sed 's/^/note: /'
  ((ran == 0)) &&
  event_lines vanish.json action-failed | grep -q '"error": "control-failed", "message": "the device .\/dev\/video0. did not take brightness: the device was disconnected'
}
check "a camera that vanishes while configured: control-failed naming the device and the control, the run goes on" controls_vanish

fatal_streaming_error() {
  cd "$work" || return 1
  printf 'session, preset=vga640x480\ninput, name=camera, device=/dev/video0\noutput, name=p, kind=preview, sink=none\nstart\nwait, event=session-stopped, timeout=60\nexpect, event=runtime-error, count=1\nexpect, event=interrupted, count=1\n' > fatal.pipeline
  "$bin" run fatal.pipeline --json > fatal.json 2>&1 & runner=$!
  when fatal.json session-started 60 && sleep 1 && v4l2-ctl -d /dev/video0 -c inject_fatal_streaming_error=1
  wait $runner; ran=$?
  sed 's/^/note: /' fatal.json | grep -E 'runtime-error|interrupted|session-stopped'
  ((ran == 0)) &&
  event_lines fatal.json runtime-error | grep -q '"message": "/dev/video0 ' &&
  event_lines fatal.json interrupted | grep -q '"reason": "device-error", "device": "/dev/video0"' &&
  event_lines fatal.json session-stopped | grep -q .
}
check "inject_fatal_streaming_error: runtime-error naming the device, the session stops cleanly" fatal_streaming_error

dropped_buffers() {
  cd "$work" || return 1
  v4l2-ctl -d /dev/video0 -c percentage_of_dropped_buffers=20 || return 1
  printf 'session, preset=vga640x480\ninput, name=camera, device=/dev/video0\noutput, name=frames, kind=frames\noutput, name=movie, kind=movie, location="dropping.mp4"\nstart\nstart-recording, output=movie\nwait, duration=4\nstop-recording, output=movie\nstop\nexpect, event=recording-finished, count=1\n' > dropping.pipeline
  "$bin" run dropping.pipeline --json > dropping.json 2>&1; ran=$?
  v4l2-ctl -d /dev/video0 -c percentage_of_dropped_buffers=0
  grep -v frame-dropped dropping.json
  for output in frames movie; do
    echo "note: $output: $(driver_drops dropping.json $output) frame-dropped events with reason driver, $(session_drops dropping.json $output) with another reason"
    (($(driver_drops dropping.json $output) >= 5)) || return 1
  done
  ((ran == 0)) || return 1
  # The recording keeps its timestamps: the file lasts as long as the recording did, at a steady 25 fps
  # (the movie branch repeats the previous frame where the driver dropped one).
  recorded=$(event_lines dropping.json recording-finished | sed 's/.*"duration": \([0-9.]*\).*/\1/')
  ffprobe -v error -select_streams v -show_entries packet=pts_time -of csv=p=0 dropping.mp4 | sort -n > pts.txt
  python3 - "$recorded" pts.txt <<'PY'
import sys
recorded = float(sys.argv[1])
pts = [float(line) for line in open(sys.argv[2]) if line.strip()]
span = pts[-1] - pts[0] + 0.04
steps = [b - a for a, b in zip(pts, pts[1:])]
print(f"note: recorded {recorded:.3f} s, file {span:.3f} s in {len(pts)} frames, largest step {max(steps) * 1000:.1f} ms")
# A steady 25 fps with the dropped frames' places filled, and time not squeezed: the file lasts what the
# recorder counted, within a frame or so (without kept timestamps 20 % fewer frames would make a file
# 20 % shorter, ~0.8 s here). A last frame that came after a gap used to be sent once at half the gap,
# and the file ended up to 0.5 s short (3.16 s against 3.705 s); a copy of it now closes the file.
assert abs(len(pts) - span * 25) <= 1, (len(pts), span)
assert abs(span - recorded) <= 0.021, (span, recorded)
assert max(steps) <= 0.041, max(steps)
PY
}
check "percentage_of_dropped_buffers=20: frame-dropped (driver) on each output, the recording keeps its timestamps" dropped_buffers

still_video_still() {
  cd "$work" || return 1
  # The recipe's scenario with a second's pause before and after each configuration block, so that the
  # work around an edit stays out of the half second this check watches: on the emulated CPU the JPEG
  # encode of the photo taken right after the second commit starved the preview thread, which dropped a
  # frame 154 ms after the commit (CI, 2026-12-03; the photo was encoded from 33 ms to 830 ms after it).
  # What an edit holds or costs itself (unlinking, a branch's elements made and started) stays inside.
  sed -e 's/^begin-configuration$/wait, duration=1\n&/' -e 's/^commit-configuration$/&\nwait, duration=1/' \
    "$repo/Pipelines/scenarios/still-video-still.pipeline" > cycle.pipeline
  (($(grep -c '^wait, duration=1$' cycle.pipeline) == 4)) || { echo "the scenario has not two configuration blocks"; return 1; }
  "$bin" run cycle.pipeline --set camera.device=/dev/video0 --output-dir "$work" --json > cycle.json 2>&1; ran=$?
  grep -v frame-dropped cycle.json
  echo "note: preview: $(session_drops cycle.json preview) frames dropped by the session, $(driver_drops cycle.json preview) by the driver"
  ((ran == 0)) && ! grep -q '"restarted"' cycle.json || return 1   # the camera kept streaming
  # No preview frame is lost to an edit: none dropped by the session from half a second before either
  # commit's event to a quarter second after it (the edit runs before its event; a frame it held
  # reaches the preview within a few frames). Elsewhere (the recording's encoder starting beside the
  # preview on the emulated CPU of a busy host) a starved preview thread may drop one: shown, and the
  # edits are what this check is about.
  python3 - cycle.json <<'PY' || return 1
import json, sys
events = [json.loads(line) for line in open(sys.argv[1]) if line.startswith("{")]
commits = [e["time"] for e in events if e["event"] == "configuration-committed"]
drops = [e for e in events if e["event"] == "frame-dropped" and e.get("output") == "preview" and e.get("reason") != "driver"]
near = [d for d in drops if any(-0.5 <= d["time"] - c <= 0.25 for c in commits)]
print(f"note: session drops from 0.5 s before to 0.25 s after the {len(commits)} commits: {len(near)}; elsewhere: {len(drops) - len(near)}"
      + "".join(f" ({d['time']:.3f} s, {d.get('reason')})" for d in drops))
assert len(commits) == 2 and not near, near
PY
  for photo in cycle_1.jpg cycle_2.jpg; do [[ $(identify -format '%m %w %h' $photo) == "JPEG 640 480" ]] || return 1; done
  out=$(ffprobe -v error -show_entries stream=codec_name,width,height -of csv=p=0 cycle.mp4) && echo "$out" &&
  grep -q "h264,640,480" <<<"$out" && grep -q "aac" <<<"$out" && ffmpeg -v error -i cycle.mp4 -f null -
}
check "still -> video -> still on one running session: no device restart, no preview frame lost to the edits" still_video_still

metadata_beside_preview() {
  cd "$work" || return 1
  printf 'session, preset=vga640x480\ninput, name=camera, device=/dev/video0\noutput, name=preview, kind=preview, sink=none\noutput, name=codes, kind=metadata\nstart\nwait, duration=6\nstop\nexpect, event=runtime-error, count=0\n' > scan.pipeline
  "$bin" run scan.pipeline --json > scan.json 2>&1 || { cat scan.json; return 1; }
  echo "note: preview: $(session_drops scan.json preview) frames dropped by the session, $(driver_drops scan.json preview) by the driver, in 6 s"
  (($(session_drops scan.json preview) == 0)) || { cat scan.json; return 1; }
  "$bin" scan -i /dev/video0 --timeout 4 2> scan.err; sed 's/^capture: /note: capture scan: /' scan.err
  grep -Eq 'scanned [1-9][0-9]* of' scan.err
}
check "the metadata branch decodes the real stream while the session drops no preview frame" metadata_beside_preview

bench_live_edit() {
  cd "$work" && "$bin" bench --only startup -i /dev/video0 > startup.txt && sed 's/^/note: /' startup.txt &&
  "$bin" bench --only live-edit-gap -i /dev/video0 --json > bench.json &&
  python3 - bench.json <<'PY' &&
import json, sys
r = json.load(open(sys.argv[1]))[0]
print(f"note: {r['name']}: ours {r['value']:.1f} ms | {r['peer']}: {r['peerValue']:.1f} ms (ratio {r['value'] / r['peerValue']:.2f})")
assert r['value'] > 0 and r['peerValue'] > 0, r
PY
  cp bench.json "$work/live-edit-gap-vivid.json"
}
check "capture bench: live-edit gap against a stop+start rebuild on /dev/video0" bench_live_edit

bench_mode_switch() {
  cd "$work" && "$bin" bench --only mode-switch -i /dev/video0 --json --plot-data mode-switch-vivid-plot.json > mode-switch.json || return 1
  python3 - mode-switch.json <<'PY'
import json, sys
results = json.load(open(sys.argv[1]))
assert len(results) == 4, results
# camerabin may not finish the cycle on a loaded guest: the benchmark then reports it as failed (no
# peerValue, a note saying why) and that is shown, not failed; ours and the rebuild must have figures.
for r in results:
    peer = f"{r['peerValue']:.1f} ms" if "peerValue" in r else f"failed ({r.get('note', 'no figure')})"
    print(f"note: {r['name']}: ours {r['value']:.1f} ms | {r['peer']}: {peer}")
for r in results:
    assert r["value"] > 0, r
    assert "peerValue" in r or "camerabin" in r["peer"], r
    assert r.get("peerValue", 1) > 0, r
print(f"note: {results[0].get('note', '')}")
PY
}
check "capture bench mode-switch: photo -> video -> photo on /dev/video0 against camerabin and a stop+start rebuild" bench_mode_switch

# --- Cameras through PipeWire ----------------------------------------------------------------------
# The first of these checks starts PipeWire and WirePlumber over vivid (scripts/vm/pipewire-up.sh); they
# are stopped after the last one. While PipeWire runs, GStreamer's device monitor lists the camera only
# through PipeWire (its provider hides the v4l2 one) and WirePlumber holds the node: these come last.
pipewire_id=""
with_pipewire() {  # starts the daemons once, then sets pipewire_id to the camera's id in `capture devices`
  if [[ -z ${XDG_RUNTIME_DIR:-} || ! -s $XDG_RUNTIME_DIR/capture-pipewire.pids ]]; then
    local env started=$EPOCHREALTIME
    env=$(bash "$repo/scripts/vm/pipewire-up.sh" --timeout 60) || return 1
    eval "$env"
    echo "note: PipeWire + WirePlumber up, camera node listed, $(elapsed_ms "$started") ms after start"
  fi
  [[ -n $pipewire_id ]] && return 0
  pipewire_id=$("$bin" devices --json 2>/dev/null | sed -n 's/^ *"id" *: *"\(pipewire:[^"]*\)".*/\1/p' | head -1)
  [[ -n $pipewire_id ]] || { echo "capture devices lists no pipewire: camera"; return 1; }
}
elapsed_ms() {  # elapsed_ms EPOCHREALTIME-AT-START
  local now=$EPOCHREALTIME
  echo $(( (${now/./} - ${1/./}) / 1000 ))
}

pipewire_devices() {
  with_pipewire || return 1
  "$bin" devices --json > "$work/pw-devices.json" 2> "$work/pw-devices.err" || { cat "$work/pw-devices.err"; return 1; }
  "$bin" devices 2>/dev/null > "$work/pw-devices.txt"
  # What a user sees: the camera's block of `capture devices` (formats cut short).
  awk '/^pipewire:/ { on = 1 } on && /^[^ ]/ && !/^pipewire:/ { on = 0 } on' "$work/pw-devices.txt" |
    awk '/format:/ { if (++f > 3) next } /control:/ { if (++c > 3) next } 1' | sed 's/^/note: /'
  # The provider's CRITICAL for each format GStreamer has no name for (84 here) is dropped.
  local criticals; criticals=$(grep -c CRITICAL "$work/pw-devices.err")
  echo "note: $criticals GStreamer-CRITICAL lines on stderr"
  ((criticals == 0)) || { grep -m 3 CRITICAL "$work/pw-devices.err"; return 1; }
  python3 - "$work/pw-devices.json" <<'PY'
import json, sys
devices = json.load(open(sys.argv[1]))
cameras = [d for d in devices if d["id"].startswith("pipewire:")]
assert len(cameras) == 1, [d["id"] for d in devices]
d = cameras[0]
# The node's name (stable across daemon restarts and replugs), not its serial.
assert d["id"] == "pipewire:v4l2_input.platform-vivid.0", d["id"]
assert d["element"] == "pipewiresrc" and d["media"] == "video" and not d["virtual"], d
assert d["properties"].get("api.v4l2.path") == "/dev/video0", d["properties"]
# The pipewire provider hides the v4l2 one: the same camera is not listed twice.
assert not [x for x in devices if x["id"].startswith("/dev/video")], [x["id"] for x in devices]
raw = [f for f in d["formats"] if f["media"] == "video/x-raw"]
assert raw and all(f["format"] for f in raw), "a raw format without a pixel format is listed"
assert all(f["frameRates"] and f["width"] for f in d["formats"])
assert {(640, 480), (1280, 720)} <= {(f["width"], f["height"]) for f in d["formats"]}
keys = {c["key"] for c in d["controls"]}
assert {"brightness", "contrast", "saturation", "hue"} <= keys, sorted(keys)
print(f"note: {d['id']}: {len(d['formats'])} formats, all with a pixel format; {len(d['controls'])} controls read through {d['properties']['api.v4l2.path']}")
PY
}
check "PipeWire: capture devices lists the camera as pipewire:<node.name> (pipewiresrc), formats without a pixel format left out, V4L2 controls" pipewire_devices

pipewire_photo() {
  with_pipewire && cd "$work" || return 1
  local started=$EPOCHREALTIME
  "$bin" photo -i "$pipewire_id" --size 640x480 -o pw-photo.jpg || return 1
  echo "note: capture photo -i $pipewire_id: $(elapsed_ms "$started") ms for the whole command"
  [[ $(identify -format '%m %w %h' pw-photo.jpg) == "JPEG 640 480" ]]
}
check "PipeWire: capture photo -i pipewire:... gives a 640x480 JPEG" pipewire_photo

pipewire_cycle() {
  with_pipewire && cd "$work" || return 1
  mkdir -p pw-cycle && cd pw-cycle || return 1
  "$bin" run "$repo/Pipelines/scenarios/still-video-still.pipeline" --set camera.device="$pipewire_id" --output-dir "$PWD" --json > cycle.json 2>&1; ran=$?
  grep -v frame-dropped cycle.json | grep -E 'configuration-committed|recording-finished|photo-saved|error|interrupted|expectation'
  # Reported, not asserted: when the TCG guest stalls, PipeWire keeps the frames the client could not
  # take in time and hands them over in a burst, which the preview's leaky queue thins out (v4l2src
  # loses them in the driver instead: driver drops).
  echo "note: preview: $(session_drops cycle.json preview) frames dropped by the session, $(driver_drops cycle.json preview) by the driver"
  # The camera kept streaming: no restart in any commit, and the movie's timestamps run on (below).
  ((ran == 0)) && ! grep -q '"restarted"' cycle.json || return 1
  for photo in cycle_1.jpg cycle_2.jpg; do [[ $(identify -format '%m %w %h' $photo) == "JPEG 640 480" ]] || return 1; done
  out=$(ffprobe -v error -show_entries stream=codec_name,width,height -of csv=p=0 cycle.mp4) &&
  grep -q "h264,640,480" <<<"$out" && grep -q "aac" <<<"$out" && ffmpeg -v error -i cycle.mp4 -f null - || return 1
  recorded=$(event_lines cycle.json recording-finished | sed 's/.*"duration": \([0-9.]*\).*/\1/')
  ffprobe -v error -show_entries format=duration -of csv=p=0 cycle.mp4 > duration.txt
  ffprobe -v error -select_streams v -show_entries packet=pts_time -of csv=p=0 cycle.mp4 | sort -n > pts.txt
  python3 - "$recorded" duration.txt pts.txt <<'PY'
import sys
recorded = float(sys.argv[1])
duration = float(open(sys.argv[2]).read())
pts = [float(line) for line in open(sys.argv[3]) if line.strip()]
steps = [b - a for a, b in zip(pts, pts[1:])]
video = pts[-1] - pts[0] + 0.04
print(f"note: recorded {recorded:.3f} s; cycle.mp4 lasts {duration:.3f} s, its video {video:.3f} s in {len(pts)} frames, first at {pts[0]:.3f} s, largest step {max(steps) * 1000:.1f} ms")
# Up to 2 s recorded (wait, duration=2; less when the driver dropped the frames just before the mark,
# as it does under TCG while x264enc, at about 3 frames a second there, holds the camera's buffers;
# a little more when the stop itself came late): a stream restarted by a RECONFIGURE, or whose
# timestamps jumped, would give a video of another length than the recorder's, a late first frame or
# a step of seconds.
assert 0 < recorded <= 3.0, recorded
assert abs(video - recorded) <= 0.1, (video, recorded)
assert max(steps) <= 0.041 and pts[0] < 0.1, (max(steps), pts[0])
PY
}
check "PipeWire: still -> video -> still through pipewiresrc: no restart, the movie's video lasts the 2 s recorded, timestamps continuous" pipewire_cycle

pipewire_bench() {
  with_pipewire && cd "$work" || return 1
  "$bin" bench --only startup,live-edit-gap -i "$pipewire_id" --json > pw-bench.json || return 1
  "$bin" bench --only mode-switch -i "$pipewire_id" --json > pw-mode-switch.json || return 1
  python3 - pw-bench.json pw-mode-switch.json <<'PY'
import json, sys
edits, modes = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
for r in edits + modes:
    peer = "" if "peer" not in r else f" | {r['peer']}" + (f": {r['peerValue']:.1f}" if "peerValue" in r else "")
    print(f"note: {r['name']}: ours {r['value']:.1f} {r['unit']}{peer}")
print(f"note: {modes[0].get('note', '')}")
for r in edits + modes:
    assert r["value"] > 0, r
# Timestamps stay on the running time through live edits: a stream restarted by a RECONFIGURE jumps by seconds.
stamps = [r for r in modes if "timestamp" in r["name"]]
assert stamps and all(r["value"] < 1000 for r in stamps), stamps
PY
}
check "PipeWire: capture bench startup, live-edit gap and photo -> video -> photo through pipewiresrc (no timestamp jump)" pipewire_bench

pipewire_controls() {
  with_pipewire && cd "$work" || return 1
  # The camera's V4L2 controls are set through the node behind it (api.v4l2.path) while PipeWire streams
  # it to the session; read back with v4l2-ctl.
  "$bin" controls -i "$pipewire_id" --json > pw-controls.json || { cat pw-controls.json; return 1; }
  grep -q '"key" *: *"brightness"' pw-controls.json || return 1
  printf '%s\n' 'session, preset=vga640x480' "input, name=camera, device=$pipewire_id" 'output, name=preview, kind=preview, sink=none' \
    'start' 'wait, duration=1' 'configure-device, input=camera, controls={ "brightness=220" }' \
    'wait, event=device-configured, timeout=20' 'wait, duration=2' 'stop' \
    'expect, event=device-configured, count=1' 'expect, event=runtime-error, count=0' > pw-controls.pipeline
  "$bin" run pw-controls.pipeline --json > pw-controls-run.json 2>&1 & runner=$!
  readback=none
  when pw-controls-run.json device-configured 60 && readback=$(v4l2-ctl -d /dev/video0 --get-ctrl brightness)
  wait $runner; ran=$?
  v4l2-ctl -d /dev/video0 -c brightness=128
  echo "note: v4l2-ctl --get-ctrl brightness while the session streams through PipeWire: $readback"
  grep -E 'device-configured|expectation-failed' pw-controls-run.json | sed 's/^/note: /'
  ((ran == 0)) && [[ $readback == "brightness: 220" ]]
}
check "PipeWire: a control set while the session streams through PipeWire reaches the node (brightness read back with v4l2-ctl)" pipewire_controls

pipewire_presets() {
  with_pipewire && cd "$work" || return 1
  # set-preset live: hd1280x720 needs another device format (a new pipewiresrc in the running session,
  # swapped in for the old one), low is served by scaling the running format. A photo at each.
  printf 'session, preset=vga640x480\ninput, name=camera, device=%s\noutput, name=preview, kind=preview, sink=none\noutput, name=photo, kind=photo, location="pw-preset_%%d.jpg"\nstart\ncapture-photo, output=photo\nwait, event=photo-saved, count=1, timeout=60\nset-preset, preset=hd1280x720\ncapture-photo, output=photo\nwait, event=photo-saved, count=2, timeout=60\nset-preset, preset=low\ncapture-photo, output=photo\nwait, event=photo-saved, count=3, timeout=60\nstop\nexpect, event=interrupted, count=0\nexpect, event=runtime-error, count=0\n' "$pipewire_id" > pw-presets.pipeline
  "$bin" run pw-presets.pipeline --json > pw-presets.json 2>&1; ran=$?
  grep -E 'configuration-committed|photo-saved|error|expectation-failed' pw-presets.json | sed 's/^/note: /'
  ((ran == 0)) && grep -q '"restarted"' pw-presets.json || return 1
  local expected=("640 480" "1280 720" "192 144") n=0
  for size in "${expected[@]}"; do
    n=$((n + 1))
    [[ $(identify -format '%w %h' pw-preset_$n.jpg) == "$size" ]] || { echo "pw-preset_$n.jpg is not $size"; return 1; }
  done
}
check "PipeWire: set-preset live through pipewiresrc: a new device format restarts the source alone, photos at 640x480, 1280x720, 192x144" pipewire_presets

pipewire_two_readers() {
  with_pipewire && cd "$work" || return 1
  # Two processes record the camera at once, and a third takes a photo meanwhile: PipeWire shares the
  # node (a V4L2 node opened directly would refuse the second one: device-busy).
  "$bin" record -i "$pipewire_id" --no-audio --size 640x480 --duration 3 -o pw-two-a.mp4 > pw-two-a.out 2>&1 & first=$!
  "$bin" record -i "$pipewire_id" --no-audio --size 640x480 --duration 3 -o pw-two-b.mp4 > pw-two-b.out 2>&1 & second=$!
  sleep 2
  "$bin" photo -i "$pipewire_id" --size 640x480 -o pw-two.jpg > pw-two-photo.out 2>&1; photo=$?
  wait $first; a=$?
  wait $second; b=$?
  for out in pw-two-a.out pw-two-b.out pw-two-photo.out; do grep -v -e CRITICAL -e '^$' $out | sed "s/^/note: $out: /"; done
  echo "note: exit codes: record $a, record $b, photo $photo"
  ((a == 0 && b == 0 && photo == 0)) && [[ $(identify -format '%m %w %h' pw-two.jpg) == "JPEG 640 480" ]] || return 1
  # Each movie decodes and lasts what its recorder reported (to the report's hundredth of a second: the
  # recording reports where videorate's last frame ends). Under TCG, with two encoders and a photo on
  # two virtual CPUs, the driver drops frames and a recording ends with the last frame that reached it
  # (2.28 s of the 3 s asked, once; the file then ended at 1.92 s, half-way through the gap before that
  # frame, which a copy of it now closes). Through PipeWire's jittered timestamps the report, the end
  # of the camera's last frame, was up to two frames short of the file (2.68 s against 2.76 s, CI of
  # 2026-12-04) before it said where videorate's last frame ends.
  local name duration told
  for name in pw-two-a pw-two-b; do
    ffmpeg -v error -i $name.mp4 -f null - || return 1
    duration=$(ffprobe -v error -show_entries format=duration -of csv=p=0 $name.mp4)
    told=$(grep -o '[0-9.]* s ' $name.out | head -1 | tr -d ' s')
    echo "note: $name.mp4 lasts $duration s, capture record reported $told s"
    awk -v d="$duration" -v t="$told" 'BEGIN { exit !(t >= 1.0 && t <= 3.005 && d >= t - 0.021 && d <= t + 0.021) }' || return 1
  done
}
check "PipeWire: two capture processes record the camera at once (and a third takes a photo meanwhile), all succeed" pipewire_two_readers

pipewire_unplug() {
  with_pipewire && cd "$work" || return 1
  # pipewiresrc posts nothing when its node goes away: the device monitor's removal interrupts the session.
  printf 'session, preset=vga640x480\ninput, name=camera, device=%s\noutput, name=movie, kind=movie, location="pw-unplugged.mp4"\nstart\nstart-recording, output=movie\nwait, event=session-stopped, timeout=60\nexpect, event=interrupted, count=1\nexpect, event=recording-finished, count=1\n' "$pipewire_id" > pw-unplugged.pipeline
  "$bin" run pw-unplugged.pipeline --json > pw-unplugged.json 2>&1 & runner=$!
  local unplugged
  when pw-unplugged.json recording-started 60 && sleep 1.5 && unplugged=$EPOCHREALTIME && unplug ||
    { echo vivid.0 > $vivid/bind 2>/dev/null; kill $runner; return 1; }
  when pw-unplugged.json '"interrupted"' 30; echo "note: interrupted $(elapsed_ms "$unplugged") ms after the unbind"
  wait $runner; ran=$?
  # PipeWire may still hold the old node open when vivid binds again: it can come back as /dev/video1.
  echo vivid.0 > $vivid/bind || return 1
  sed 's/^/note: /' pw-unplugged.json | grep -E 'device-disconnected|runtime-error|interrupted|recording-finished|session-stopped'
  ((ran == 0)) &&
  event_lines pw-unplugged.json interrupted | grep -q "\"reason\": \"device-disconnected\", \"device\": \"$pipewire_id\"" &&
  event_lines pw-unplugged.json recording-finished | grep -q '"success": true' &&
  ffmpeg -v error -i pw-unplugged.mp4 -f null - &&
  ffprobe -v error -show_entries format=duration -of csv=p=0 pw-unplugged.mp4 | sed 's/^/note: pw-unplugged.mp4 lasts /' &&
  # The node comes back under the same name: the same id opens it again.
  bash "$repo/scripts/vm/pipewire-up.sh" --timeout 60 > /dev/null &&
  "$bin" photo -i "$pipewire_id" --size 640x480 -o pw-replugged.jpg && [[ $(identify -format '%m' pw-replugged.jpg) == JPEG ]]
}
check "PipeWire: hot-unplug mid-recording through pipewiresrc: interrupted (device-disconnected, from the device monitor), the file plays; replugged, the same id opens it" pipewire_unplug

if [[ -n ${XDG_RUNTIME_DIR:-} && -s $XDG_RUNTIME_DIR/capture-pipewire.pids ]]; then
  bash "$repo/scripts/vm/pipewire-down.sh"
  # Put the camera back at /dev/video0 (after the unplug check it may have come back as /dev/video1).
  [[ -e /dev/video0 ]] || { echo vivid.0 > $vivid/unbind; sleep 0.5; replug; }
fi
# Last, as it reloads vivid with two cameras (/dev/video0 and /dev/video1).
camera_switch() {
  modprobe -r vivid && modprobe vivid n_devs=2 node_types=0x1,0x1 num_inputs=1,1 input_types=0x0,0x0 || return 1
  for node in /dev/video0 /dev/video1; do
    for _ in $(seq 50); do [[ -e $node ]] && break; sleep 0.2; done
    [[ -e $node ]] || { echo "$node did not appear"; return 1; }
  done
  udevadm settle --timeout=20 2>/dev/null
  cat > "$work/switch.pipeline" <<END
session, preset=vga640x480
input, name=back, device=/dev/video0
output, name=preview, kind=preview, sink=none
output, name=movie, kind=movie, location="$work/switch.mp4"
start
start-recording, output=movie
wait, duration=2
begin-configuration
remove-input, name=back
add-input, name=front, device=/dev/video1
commit-configuration
wait, duration=2
stop-recording, output=movie
stop
expect, event=configuration-committed, swapped="back -> front", count=1
expect, event=recording-finished, count=1
expect, event=runtime-error, count=0
END
  "$bin" run "$work/switch.pipeline" --json > "$work/switch.json" || { tail -5 "$work/switch.json"; return 1; }
  ffmpeg -v error -i "$work/switch.mp4" -f null - 2> "$work/switch-decode.txt" && [[ ! -s $work/switch-decode.txt ]] ||
    { cat "$work/switch-decode.txt"; return 1; }
  ffprobe -v error -select_streams v:0 -show_entries packet=pts_time -of csv=p=0 "$work/switch.mp4" > "$work/switch-times.txt" &&
  python3 - "$work/switch-times.txt" "$work/switch.json" <<'PY'
import json, sys
times = sorted(float(line) for line in open(sys.argv[1]) if line.strip())
gaps = [b - a for a, b in zip(times, times[1:])]
events = [json.loads(l) for l in open(sys.argv[2]) if l.startswith("{")]
started = next(e for e in events if e["event"] == "recording-started")
committed = [e for e in events if e["event"] == "configuration-committed"][-1]
finished = next(e for e in events if e["event"] == "recording-finished")
span = times[-1] - times[0] + 0.04
before = committed["time"] - started["time"]
print(f"note: one file, {len(times)} frames over {span:.2f} s (recorded {finished['duration']:.2f} s, {before:.2f} s of it "
      f"before the switch was committed); longest gap {max(gaps) * 1000:.0f} ms ({max(gaps) * 25:.1f} frames at 25 fps); "
      f"the switch: {committed.get('swapped')}")
assert finished["success"], finished
# The file goes on past the commit (the first frame of the new camera came before the commit's event):
# frames of both cameras are in it, and it lasts what the recorder counted, within a frame or so. (It
# once ended 0.5 s short, 3.56 s against 4.06 s: the frame-rate element sent the last frame, which came
# after a gap, once at half the gap; a copy of it now closes the file.)
assert span > before + 0.2, (span, before)
assert abs(span - finished["duration"]) <= 0.05, (span, finished["duration"])
# A few frames: the old camera stops, the new one opens and streams (under TCG, slower than on hardware).
assert max(gaps) < 0.5, max(gaps)
PY
}
check "a camera switch between two vivid cameras mid-recording: one file that decodes, no gap longer than a few frames" camera_switch

echo "hardware: $passed passed, $failed failed"
((failed == 0))
