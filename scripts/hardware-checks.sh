#!/usr/bin/env bash
# Runs inside the vivid VM (see scripts/test-hardware.sh): checks of the real V4L2 path.
set -uo pipefail
work=${1:?work directory}
bin=${CAPTURE_BIN:?}
passed=0 failed=0
check() {  # check NAME COMMAND...
  local name=$1; shift
  local log="$work/$(echo "$name" | tr -c 'a-zA-Z0-9' '_').log"
  if "$@" >"$log" 2>&1; then
    passed=$((passed + 1)); echo "ok    $name"
  else
    failed=$((failed + 1)); echo "FAIL  $name"; sed 's/^/      /' "$log" | tail -20
  fi
}
[[ ${CAPTURE_IN_VM:-} == 1 && -e /dev/video0 ]] || { echo "not in the vivid VM (no /dev/video0)"; exit 69; }

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

photo_vga() {
  cd "$work" && "$bin" photo -i /dev/video0 --size 640x480 -o vivid.jpg &&
  [[ $(identify -format '%m %w %h' vivid.jpg) == "JPEG 640 480" ]]
}
check "a photo from /dev/video0 at 640x480 decodes" photo_vga

movie_vga() {
  cd "$work" && "$bin" record -i /dev/video0 --no-audio --size 640x480 --duration 2 -o vivid.mp4 &&
  out=$(ffprobe -v error -show_entries stream=codec_name,width,height,avg_frame_rate:format=duration -of csv=p=0 vivid.mp4) &&
  echo "$out" && grep -q "h264,640,480,25/1" <<<"$out" &&
  python3 -c "import sys; d=float(sys.argv[1]); assert abs(d-2.0) <= 0.1, d" "$(tail -1 <<<"$out")"
}
check "a 2 s movie from /dev/video0: 640x480 at 25 fps, 2 s within 0.1 s (TCG-emulated guest)" movie_vga

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

busy() {
  cd "$work" && "$bin" record -i /dev/video0 --no-audio --duration 4 -o busy1.mp4 & first=$!
  sleep 2
  "$bin" photo -i /dev/video0 -o busy.jpg > "$work/busy.out" 2>&1; code=$?
  wait $first
  cat "$work/busy.out"
  [[ $code == 1 || $code == 69 ]] && grep -qi "busy" "$work/busy.out"
}
check "a second process on the busy device gets a typed device-busy error, not a hang" busy

streamon_error() {
  v4l2-ctl -d /dev/video0 -c inject_vidioc_streamon_error=1 || true
  "$bin" photo -i /dev/video0 -o never.jpg > "$work/streamon.out" 2>&1; code=$?
  cat "$work/streamon.out"
  [[ $code != 0 ]] && ! [[ -e never.jpg ]]
}
check "inject_vidioc_streamon_error at start: a typed error, no hang" streamon_error

disconnect_mid_recording() {
  cd "$work" && printf 'session, preset=vga640x480\ninput, name=camera, device=/dev/video0\noutput, name=movie, kind=movie, location="cut.mp4"\nstart\nstart-recording, output=movie\nwait, event=interrupted, timeout=20\nwait, event=session-stopped\nexpect, event=recording-finished, count=1\n' > cut.pipeline
  ( sleep 3; v4l2-ctl -d /dev/video0 -c disconnect=1 ) &
  "$bin" run cut.pipeline --json > cut.json 2>&1
  cat cut.json | grep -E 'interrupted|recording-finished|runtime-error'
  grep -q '"event": "interrupted"' cut.json && grep -q '"success": true' cut.json &&
  ffmpeg -v error -i cut.mp4 -f null - && ffprobe -v error -show_entries format=duration -of csv=p=0 cut.mp4
}
check "disconnect=1 mid-recording: interrupted, the recording finishes with success=true and plays" disconnect_mid_recording

echo "hardware: $passed passed, $failed failed"
((failed == 0))
