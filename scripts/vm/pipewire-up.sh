#!/usr/bin/env bash
# scripts/vm/pipewire-up.sh - start a PipeWire daemon and WirePlumber as the current user (root in the
# vivid VM) without a systemd user session, logind or a D-Bus session bus, and wait until PipeWire
# shows a camera (a node of media.class Video/Source).
#
#   env=$(scripts/vm/pipewire-up.sh [--timeout SECONDS] [--sources N]) && eval "$env"
#   (not `eval "$(...)"` alone: that hides a failure, eval of nothing succeeds)
#
# stdout: one line, `export XDG_RUNTIME_DIR=...`, for the caller to eval: clients (gst-launch-1.0,
# pipewiresrc, GStreamer's pipewire device provider, capture) find the daemon's socket there.
# stderr: what was started and the Video/Source nodes found (object.serial, node.name, object.path,
# node.description).
#
# --timeout (default 20) bounds the wait for the daemons and the nodes; --sources (default 1) is how
# many Video/Source nodes to wait for (0: only wait until WirePlumber is connected).
# Exit code: 0 when the nodes are there; 1 with a message and the daemons' log tails otherwise (the
# daemons it started are stopped again); 69 when PipeWire or WirePlumber is not installed.
#
# The runtime directory is $XDG_RUNTIME_DIR when set, else /run/user/$UID. The daemons' logs and
# process ids go there (pipewire.log, wireplumber.log, capture-pipewire.pids); scripts/vm/pipewire-down.sh
# stops them.
#
# WirePlumber 0.4 (Debian 12) needs three settings to run without a desktop session, written as Lua
# fragments into a config directory of its own (XDG_CONFIG_HOME for the wireplumber process only):
#   - the Bluetooth monitor off: its logind plugin fails without systemd-logind ("failed to start
#     systemd logind monitor") and WirePlumber then exits ("disconnected from pipewire");
#   - alsa.reserve off and the flatpak portal off: both need a D-Bus session bus ("Error acquiring bus
#     address: Cannot autolaunch D-Bus without X11 $DISPLAY"), and WirePlumber exits without one.
# The V4L2 monitor itself needs udev only (scripts/vm/run.sh starts it).
set -euo pipefail

timeout=20
sources=1
while [[ $# -gt 0 ]]; do
    case "$1" in
        --timeout) timeout=${2:?--timeout needs seconds}; shift 2 ;;
        --sources) sources=${2:?--sources needs a number}; shift 2 ;;
        -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0" >&2; exit 0 ;;
        *) echo "pipewire-up: unknown argument $1" >&2; exit 2 ;;
    esac
done

say() { echo "pipewire-up: $*" >&2; }
for tool in pipewire wireplumber pw-cli; do
    command -v "$tool" >/dev/null || { say "$tool is not installed (scripts/install-deps.sh)"; exit 69; }
done

dir=${XDG_RUNTIME_DIR:-/run/user/$(id -u)}
mkdir -p "$dir" && chmod 700 "$dir"
export XDG_RUNTIME_DIR=$dir
pids=$dir/capture-pipewire.pids
started_at=$SECONDS
deadline=$((SECONDS + timeout))

started=()
fail() {
    say "FAILED: $*"
    for log in "$dir/pipewire.log" "$dir/wireplumber.log"; do
        [[ -s $log ]] && { say "last lines of $log:"; tail -n 15 "$log" | sed 's/^/    /' >&2; }
    done
    for pid in "${started[@]}"; do kill "$pid" 2>/dev/null || true; done
    exit 1
}
alive() { [[ -n ${1:-} ]] && kill -0 "$1" 2>/dev/null; }

pipewire_pid="" wireplumber_pid=""
if [[ -s $pids ]]; then read -r pipewire_pid wireplumber_pid < "$pids" || true; fi

if alive "$pipewire_pid"; then
    say "pipewire already running (pid $pipewire_pid)"
else
    [[ -S $dir/pipewire-0 ]] && pw-cli info 0 >/dev/null 2>&1 &&
        fail "another PipeWire daemon already serves $dir/pipewire-0"
    rm -f "$dir/pipewire-0" "$dir/pipewire-0.lock" "$dir/pipewire-0-manager" "$dir/pipewire-0-manager.lock"
    pipewire > "$dir/pipewire.log" 2>&1 < /dev/null &
    pipewire_pid=$!
    started+=("$pipewire_pid")
    say "started pipewire (pid $pipewire_pid, log $dir/pipewire.log)"
fi
until [[ -S $dir/pipewire-0 ]]; do
    alive "$pipewire_pid" || fail "pipewire exited"
    ((SECONDS < deadline)) || fail "no socket $dir/pipewire-0 within $timeout s"
    sleep 0.1
done

if alive "$wireplumber_pid"; then
    say "wireplumber already running (pid $wireplumber_pid)"
else
    config=$dir/capture-wireplumber
    mkdir -p "$config/wireplumber/main.lua.d" "$config/wireplumber/bluetooth.lua.d"
    cat > "$config/wireplumber/main.lua.d/80-capture-no-session.lua" <<'LUA'
-- No D-Bus session bus here: no ALSA device reservation, no flatpak portal permissions.
alsa_monitor.properties["alsa.reserve"] = false
default_access.properties["enable-flatpak-portal"] = false
LUA
    cat > "$config/wireplumber/bluetooth.lua.d/80-capture-no-session.lua" <<'LUA'
-- No systemd-logind (seat) and no system bus here: no Bluetooth monitor.
bluez_monitor.enabled = false
LUA
    XDG_CONFIG_HOME=$config wireplumber > "$dir/wireplumber.log" 2>&1 < /dev/null &
    wireplumber_pid=$!
    started+=("$wireplumber_pid")
    say "started wireplumber (pid $wireplumber_pid, log $dir/wireplumber.log, config $config/wireplumber)"
fi
echo "$pipewire_pid $wireplumber_pid" > "$pids"

# One `pw-cli ls` (pw-dump | python3 costs seconds in the TCG guest): "wireplumber" when WirePlumber is
# a client of the daemon, then the Video/Source nodes as
# "serial<TAB>node.name<TAB>object.path<TAB>node.description" lines.
snapshot() {
    pw-cli ls 2>/dev/null | awk '
        function flush() {
            if (type ~ /:Client\// && p["application.name"] == "WirePlumber") wireplumber = 1
            if (type ~ /:Node\// && p["media.class"] == "Video/Source")
                nodes = nodes p["object.serial"] "\t" p["node.name"] "\t" p["object.path"] "\t" p["node.description"] "\n"
            delete p
        }
        /^\tid [0-9]+, type / { flush(); type = $4; next }
        /=/ { key = $1; value = $0; sub(/^[^=]*= "?/, "", value); sub(/"$/, "", value); p[key] = value }
        END { flush(); if (wireplumber) print "wireplumber"; printf "%s", nodes }'
}

found=""
while :; do
    alive "$pipewire_pid" || fail "pipewire exited"
    alive "$wireplumber_pid" || fail "wireplumber exited"
    snap=$(snapshot)
    if [[ $snap == wireplumber* ]]; then
        found=$(sed 1d <<<"$snap")
        (( $(grep -c . <<<"$found") >= sources )) && break
    fi
    ((SECONDS < deadline)) ||
        fail "$(grep -c . <<<"$found") Video/Source node(s) within $timeout s, $sources expected (is udev running? is there a /dev/video*?)"
    sleep 0.3
done

say "PipeWire $(pipewire --version | sed -n 's/^Linked with libpipewire //p') and WirePlumber $(wireplumber --version | sed -n 's/^Linked with libwireplumber //p') up in $dir after $((SECONDS - started_at)) s"
if [[ -n $found ]]; then
    say "Video/Source nodes (object.serial, node.name, object.path, node.description):"
    sed 's/^/    /' <<<"$found" >&2
fi
echo "export XDG_RUNTIME_DIR=$dir"
