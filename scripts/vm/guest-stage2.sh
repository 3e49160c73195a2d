#!/bin/bash
# scripts/vm/guest-stage2.sh - second stage of the capture VM's boot; runs INSIDE the guest as PID 1.
#
# run.sh copies this file into the run's results share; the initramfs /init (built by setup.sh) mounts
# the host's / (read-only 9p + tmpfs overlay + the cache's layer with the kernel modules and udev),
# loads vivid, mounts /run, devpts, /dev/shm and the run's read-write shares, sets up lo and the
# serial ports, then switch_roots into `bash /run/capture-vm/stage2.sh`. This script:
#   starts udev (GstDeviceMonitor's v4l2 provider lists nothing without it), runs the job's command in
#   its working directory with the job's environment, streams its stdout/stderr to the host (serial
#   ports ttyS1/ttyS2) while saving them in the results share, writes its exit code, and powers off.
# Every external program costs ~50 ms under TCG, so this script uses as few as it can.
#
# No `set -e` on purpose: this is PID 1 - if it exits the kernel panics and the host learns nothing.
# Every failure is handled explicitly and ends in power-off, with a reason in the results share.
set -uo pipefail

R=/run/capture-vm
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

uptime_s() { local u _; read -r u _ < /proc/uptime; echo "$u"; }
mark() {  # timestamps (guest uptime) for run.sh's timing summary
    local u; u="$(uptime_s)"
    echo "$1 $u" >> "$R/timings"
    echo "capture-vm stage2: $1 at ${u}s"
}
power_off() {
    sync
    echo o > /proc/sysrq-trigger   # ACPI power-off: qemu exits
    sleep 3
    echo b > /proc/sysrq-trigger   # qemu runs with -no-reboot: a reboot also ends it
    sleep 60
}
fatal() {
    echo "capture-vm stage2: FATAL: $*"
    echo "stage2: $*" >> "$R/init-error"
    power_off
}

# shellcheck source=/dev/null
source "$R/job.env" || fatal "cannot read $R/job.env"
mark stage2-start

# --- udev ----------------------------------------------------------------------------------------
# From the udev package unpacked in the cache layer. SYSTEMD_IGNORE_CHROOT: udevd refuses to run when
# it thinks it is in a chroot, and the checks are confused by this root.
if [[ "${CAPVM_UDEV:-1}" == 1 ]]; then
    SYSTEMD_IGNORE_CHROOT=1 "$CAPVM_UDEVD" --daemon || fatal "systemd-udevd --daemon failed"
    # Only the media devices by default: triggering everything makes udev load modules for every
    # emulated device (ata, serio, ...), which costs seconds under TCG and is of no use to the tests.
    # Devices appearing later (vivid unbind/bind, hot-plug) get their events as usual.
    if [[ "${CAPVM_UDEV_TRIGGER:-media}" == all ]]; then
        "$CAPVM_UDEVADM" trigger --action=add --type=subsystems
        "$CAPVM_UDEVADM" trigger --action=add --type=devices
    else
        "$CAPVM_UDEVADM" trigger --action=add --subsystem-match=video4linux --subsystem-match=media
    fi
    "$CAPVM_UDEVADM" settle --timeout=60 || echo "capture-vm stage2: warning: udevadm settle timed out"
    mark udev-settled
fi

# --- the command ---------------------------------------------------------------------------------
cd "$CAPVM_CWD" || fatal "cannot cd to $CAPVM_CWD"
tee "$R/stdout" < /run/capvm-out > /dev/ttyS1 & tee_out=$!
tee "$R/stderr" < /run/capvm-err > /dev/ttyS2 & tee_err=$!

mark command-start
# Like `env -i VAR=... COMMAND` without the extra exec: a subshell drops every exported variable,
# exports the job's, and becomes the command.
(
    while IFS= read -r v; do unset "$v"; done < <(compgen -e)
    export "${CAPVM_ENV[@]}" PWD="$CAPVM_CWD"
    exec "${CAPVM_CMD[@]}"
) < /dev/null > /run/capvm-out 2> /run/capvm-err
rc=$?
mark command-end

# A command may leave background processes holding its stdout open; do not wait for them forever.
for ((n = 0; n < 50; n++)); do
    kill -0 "$tee_out" 2>/dev/null || kill -0 "$tee_err" 2>/dev/null || break
    sleep 0.1
done
kill "$tee_out" "$tee_err" 2>/dev/null
wait "$tee_out" "$tee_err" 2>/dev/null

echo "$rc" > "$R/exit-code"
echo "capture-vm stage2: command exited with $rc"
power_off
