#!/usr/bin/env bash
# Runs sessions under GStreamer's leaks tracer: every GstObject and GstMiniObject the project made
# must be released by the time GStreamer shuts down.
set -uo pipefail
bin=${1:-.build/release/capture}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
status=0
for file in Pipelines/scenarios/live-reconfiguration.pipeline Pipelines/default.pipeline Pipelines/scenarios/image-multiple-sizes.pipeline Pipelines/scenarios/device-lost.pipeline Pipelines/camera-manager.pipeline; do
  [[ -f $file ]] || continue
  args=(run "$file" --output-dir "$out")
  grep -qE '^[[:space:]]*start[[:space:]]*(#.*)?$' "$file" || args+=(--duration 2)
  log="$out/leaks.log"
  GST_TRACERS=leaks GST_DEBUG='GST_TRACER:7' GST_DEBUG_NO_COLOR=1 timeout 300 "$bin" "${args[@]}" >"$out/stdout" 2>"$log"
  code=$?
  alive=$(grep -c 'object-alive, type-name=(string)[A-Za-z]' "$log" || true)
  if ((code != 0)); then
    echo "FAIL  $file exited $code under the leaks tracer"; tail -5 "$log"; status=1
  elif ((alive > 0)); then
    echo "FAIL  $file: $alive GStreamer objects still alive at shutdown:"
    grep 'object-alive, type-name=(string)[A-Za-z]' "$log" | sed 's/.*type-name=(string)\([^,]*\).*description=(string)\([^,]*\),.*/\1 \2/' | sort | uniq -c | sort -rn | head -20
    status=1
  else
    echo "ok    $file: no GStreamer object leaked"
  fi
done
exit $status
