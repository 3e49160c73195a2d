#!/usr/bin/env bash
# scripts/vm/selftest.sh - prove that the real-V4L2 tier works on this machine (docs/real-v4l2-tier.md).
#
# Three VM boots through run.sh:
#   A. one guest script that lists the vivid device with v4l2-ctl, finds it with gst-device-monitor-1.0
#      (needs udev), captures 25 frames of 640x480@25 with v4l2src, writes files into the shared working
#      directory and into an extra --share folder, and prints markers on stdout and stderr;
#   B. `sh -c 'exit 3'`: the command's exit code must come back as run.sh's;
#   C. a command that hangs: --timeout must kill the VM and run.sh must exit 69.
# Prints one line per check and "N passed, N failed"; exits 0 only when every check passed.
# Options: --quick skips C (the timeout check costs ~20 s).
set -euo pipefail

HERE="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
RUN="$HERE/run.sh"
QUICK=0
[[ "${1:-}" == --quick ]] && QUICK=1

PASSED=0 FAILED=0
T0=$(date +%s.%N)
check() {  # check NAME FILE-TO-SHOW-ON-FAILURE|- COMMAND...: run COMMAND, count and print the verdict
    local name="$1" file="$2"; shift 2
    if "$@"; then
        PASSED=$((PASSED + 1)); echo "PASS: $name"
    else
        FAILED=$((FAILED + 1)); echo "FAIL: $name"
        if [[ "$file" != - && -f "$file" ]]; then sed -n '1,20p' "$file" | sed 's/^/      | /'; fi
    fi
    return 0
}
elapsed() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }'; }

# Preparing the cache (first run: download + build) is not part of the checks' timings.
"$HERE/setup.sh" || { echo "FAIL: setup.sh"; echo "0 passed, 1 failed"; exit 1; }

WORK="$(mktemp -d "${TMPDIR:-/tmp}/capture-vm-selftest.XXXXXX")"
EXTRA="$(mktemp -d "${TMPDIR:-/tmp}/capture-vm-selftest-share.XXXXXX")"
trap 'rm -rf "$WORK" "$EXTRA"' EXIT
cd "$WORK"

# The guest half of run A. Each probe's output and exit code land in files of the shared working
# directory, so the host can judge them one by one.
cat > guest-checks.sh <<'EOF'
#!/bin/bash
set -u
echo "in-vm=${CAPTURE_IN_VM:-unset}" > env.txt
timeout 60 v4l2-ctl --list-devices > v4l2-list.txt 2>&1; echo $? > v4l2-list.rc
timeout 60 gst-device-monitor-1.0 Video/Source > monitor.txt 2>&1; echo $? > monitor.rc
timeout 120 gst-launch-1.0 -q v4l2src device=/dev/video0 num-buffers=25 \
    ! video/x-raw,width=640,height=480,framerate=25/1 ! fakesink > launch.txt 2>&1
echo $? > launch.rc
echo "written-in-vm $1" > vm-file.txt
echo "written-in-vm $1" > "$2/vm-share-file.txt"
echo "stdout-marker-$1"
echo "stderr-marker-$1" >&2
EOF
TOKEN="$$-$RANDOM"

# --- A ---------------------------------------------------------------------------------------------
echo "run A: vivid, udev, capture, shares (one VM boot)"
TA=$(date +%s.%N)
set +e
CAPTURE_VM_VERBOSE=0 "$RUN" --timeout 300 --share "$EXTRA" -- bash ./guest-checks.sh "$TOKEN" "$EXTRA" \
    > a.stdout 2> a.stderr
RC_A=$?
set -e
echo "      (run A took $(elapsed "$TA") s)"
check "run A: VM booted and the guest script exited 0 (got $RC_A)" a.stderr test "$RC_A" -eq 0
check "CAPTURE_IN_VM=1 inside the guest" env.txt grep -qx 'in-vm=1' env.txt
check "v4l2-ctl --list-devices shows vivid" v4l2-list.txt grep -q vivid v4l2-list.txt
monitor_ok() {
    [[ "$(cat monitor.rc 2>/dev/null)" == 0 ]] && grep -q 'device.path = /dev/video0' monitor.txt
}
check "gst-device-monitor-1.0 Video/Source lists /dev/video0 (udev running)" monitor.txt monitor_ok
check "gst-launch-1.0 v4l2src num-buffers=25 640x480@25 ! fakesink exits 0" launch.txt \
    test "$(cat launch.rc 2>/dev/null)" == 0
check "file written in the shared working directory is on the host" - \
    grep -qx "written-in-vm $TOKEN" vm-file.txt
check "file written in a --share folder is on the host" - \
    grep -qx "written-in-vm $TOKEN" "$EXTRA/vm-share-file.txt"
check "guest stdout streamed to run.sh's stdout" a.stdout grep -qx "stdout-marker-$TOKEN" a.stdout
check "guest stderr streamed to run.sh's stderr" a.stderr grep -qx "stderr-marker-$TOKEN" a.stderr

# --- B ---------------------------------------------------------------------------------------------
echo "run B: exit code pass-through"
TB=$(date +%s.%N)
set +e
"$RUN" --timeout 300 --no-share-cwd -- sh -c 'exit 3' > /dev/null 2> b.stderr
RC_B=$?
set -e
echo "      (run B took $(elapsed "$TB") s)"
check "sh -c 'exit 3' in the VM makes run.sh exit 3 (got $RC_B)" b.stderr test "$RC_B" -eq 3

# --- C ---------------------------------------------------------------------------------------------
if [[ $QUICK == 0 ]]; then
    echo "run C: a hung guest is killed by --timeout"
    TC=$(date +%s.%N)
    set +e
    "$RUN" --timeout 20 --no-share-cwd -- sleep 600 > /dev/null 2> c.stderr
    RC_C=$?
    set -e
    C_SECS="$(elapsed "$TC")"
    echo "      (run C took $C_SECS s)"
    timed_out_loudly() { [[ $RC_C -eq 69 ]] && grep -q 'FAILED: timeout' c.stderr; }
    check "--timeout 20 on 'sleep 600': run.sh exits 69 (got $RC_C) with a loud message" c.stderr \
        timed_out_loudly
    check "... and the hung VM was killed in time (took $C_SECS s)" - \
        awk -v s="$C_SECS" 'BEGIN { exit !(s < 40) }'
fi

echo "selftest total: $(elapsed "$T0") s"
echo "$PASSED passed, $FAILED failed"
[[ $FAILED -eq 0 ]]
