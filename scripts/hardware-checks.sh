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

echo "hardware: $passed passed, $failed failed"
((failed == 0))
