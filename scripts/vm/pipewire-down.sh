#!/usr/bin/env bash
# scripts/vm/pipewire-down.sh - stop the WirePlumber and PipeWire daemons that scripts/vm/pipewire-up.sh
# started (their process ids are in $XDG_RUNTIME_DIR/capture-pipewire.pids, default /run/user/$UID).
# Stops WirePlumber first, then PipeWire; SIGKILL for one still there after 5 s. Exit 0 when neither
# runs any more (or none was started).
set -uo pipefail

dir=${XDG_RUNTIME_DIR:-/run/user/$(id -u)}
pids=$dir/capture-pipewire.pids
[[ -s $pids ]] || { echo "pipewire-down: nothing to stop ($pids missing)" >&2; exit 0; }
read -r pipewire_pid wireplumber_pid < "$pids"

stop() {  # stop NAME PID
    local name=$1 pid=$2
    [[ -n $pid ]] && kill -0 "$pid" 2>/dev/null || return 0
    # Only a process that still is the daemon (a pid may have been reused).
    [[ $(cat "/proc/$pid/comm" 2>/dev/null) == "$name" ]] || return 0
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || { echo "pipewire-down: stopped $name ($pid)" >&2; return 0; }; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null
    echo "pipewire-down: $name ($pid) did not stop within 5 s: killed" >&2
}
stop wireplumber "$wireplumber_pid"
stop pipewire "$pipewire_pid"
rm -f "$pids"
