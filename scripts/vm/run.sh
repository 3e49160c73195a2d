#!/usr/bin/env bash
# scripts/vm/run.sh - run one command inside a qemu VM that has a real V4L2 device (the kernel's
# vivid driver) and sees the host's file system. See docs/real-v4l2-tier.md.
#
#   scripts/vm/run.sh [--timeout SECONDS] [--mem MB] [--cpus N] [--share DIR]... [--no-share-cwd]
#                     [--keep] -- COMMAND [ARGS...]
#
# The guest boots Debian's own kernel (cached by setup.sh, which this script runs first), with the
# host's / shared read-only over 9p under a tmpfs overlay (the guest may write anywhere; those writes
# vanish with the VM), vivid loaded as one webcam-like capture node (/dev/video0), and udev running.
# COMMAND runs in the caller's current directory with PATH, HOME, the caller's GST_* and CAPTURE_*
# variables and CAPTURE_IN_VM=1. Its stdout/stderr stream to this script's stdout/stderr as it runs.
#
# --timeout (default 600) bounds the VM: boot and command; a guest still running then is killed.
# --mem (default 2048) and --cpus (default 2) size the guest. --keep keeps the run folder.
#
# Writes that must reach the host go to a read-write share: the current directory is one by default
# (--no-share-cwd to turn that off); --share DIR adds more (same path in the guest).
#
# Exit code: COMMAND's exit code; 69 when the VM could not give one (qemu missing, no kernel,
# boot failure, timeout), always with a loud message on stderr. Never 0 unless COMMAND exited 0.
#
# Environment:
#   CAPTURE_VM_ACCEL    auto (default: KVM only if /dev/kvm works and a cached probe boot succeeded),
#                       tcg, or kvm
#   CAPTURE_VM_CACHE    cache folder (setup.sh; default $HOME/.cache/capture-vm)
#   CAPTURE_VM_TIMEOUT / CAPTURE_VM_MEM / CAPTURE_VM_CPUS   defaults for --timeout/--mem/--cpus
#   CAPTURE_VM_VIVID_OPTS  vivid module parameters (default: n_devs=1 node_types=0x1 num_inputs=1
#                       input_types=0x0)
#   CAPTURE_VM_ENV      extra variable names to pass into the guest, space separated
#   CAPTURE_VM_UDEV     0 = do not start udev;  CAPTURE_VM_UDEV_TRIGGER=all = coldplug every device
#   CAPTURE_VM_TMPFS_TMP  1 = empty tmpfs on /tmp (default: the host's /tmp through the overlay)
#   CAPTURE_VM_APPEND   extra kernel command line parameters
#   CAPTURE_VM_VERBOSE  1 = show the guest console and a timing summary on stderr
#   CAPTURE_VM_RETRIES  new boots after a qemu crash before the command started (default 2)
#   CAPTURE_VM_KEEP     1 = keep the run folder (console.log, stdout, stderr, timings), like --keep
set -euo pipefail

HERE="$(cd "$(dirname "$(readlink -f "${BASH_SOURCE[0]}")")" && pwd)"
EX_UNAVAILABLE=69

TIMEOUT="${CAPTURE_VM_TIMEOUT:-600}"
MEM="${CAPTURE_VM_MEM:-2048}"
CPUS="${CAPTURE_VM_CPUS:-2}"
SHARE_CWD=1
KEEP="${CAPTURE_VM_KEEP:-0}"
VERBOSE="${CAPTURE_VM_VERBOSE:-0}"
SHARE_ARGS=()

usage() {
    sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "${BASH_SOURCE[0]}" >&2
    exit 2
}
say() { [[ "$VERBOSE" == 1 ]] && echo "[capture-vm] $*" >&2; return 0; }
RUNDIR=""
fail() {  # fail MESSAGE: the VM could not run the command - make it impossible to miss.
    {
        echo
        echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
        echo "!!! capture-vm run.sh FAILED: $*"
        echo "!!! The command did NOT run to completion in the vivid VM (exit $EX_UNAVAILABLE)."
        if [[ -n "$RUNDIR" && -s "$RUNDIR/share/init-error" ]]; then
            echo "!!! guest said: $(tr '\n' ' ' < "$RUNDIR/share/init-error")"
        fi
        if [[ -n "$RUNDIR" && -s "$RUNDIR/console.log" ]]; then
            echo "!!! last lines of the guest console:"
            tail -n 25 "$RUNDIR/console.log" | tr -d '\r' | sed 's/^/!!!   /'
        fi
        echo "!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!!"
        echo
    } >&2
    exit "$EX_UNAVAILABLE"
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --timeout) TIMEOUT="${2:?--timeout needs seconds}"; shift 2 ;;
        --mem) MEM="${2:?--mem needs MB}"; shift 2 ;;
        --cpus) CPUS="${2:?--cpus needs a number}"; shift 2 ;;
        --share) SHARE_ARGS+=("${2:?--share needs a folder}"); shift 2 ;;
        --no-share-cwd) SHARE_CWD=0; shift ;;
        --keep) KEEP=1; shift ;;
        -h|--help) usage ;;
        --) shift; break ;;
        *) echo "run.sh: unknown option $1 (the command goes after --)" >&2; usage ;;
    esac
done
[[ $# -gt 0 ]] || usage
[[ "$TIMEOUT" =~ ^[0-9]+$ && "$MEM" =~ ^[0-9]+$ && "$CPUS" =~ ^[0-9]+$ ]] ||
    { echo "run.sh: --timeout, --mem and --cpus take whole numbers" >&2; exit 2; }
T_START=$(date +%s.%N)

# --- cache (kernel, initramfs, layer): setup.sh is a no-op when it is already there ----------------
"$HERE/setup.sh" || fail "scripts/vm/setup.sh could not prepare the VM (see above)"
CACHE="${CAPTURE_VM_CACHE:-${HOME:-/root}/.cache/capture-vm}"
# shellcheck source=/dev/null
source "$CACHE/vm.env" || fail "no $CACHE/vm.env after setup.sh"
QEMU="$(command -v qemu-system-x86_64 || true)"
[[ -n "$QEMU" ]] || fail "qemu-system-x86_64 not found (package qemu-system-x86)"

# The guest sees the host's GStreamer registry cache through the overlay; make sure it is current,
# otherwise every guest rebuilds it (~11 s under TCG) and throws it away.
timeout 180 gst-inspect-1.0 > /dev/null 2>&1 || true

# --- accelerator -------------------------------------------------------------------------------------
# KVM is ~10x faster but /dev/kvm may exist and still not boot a stock kernel (nested software
# hypervisors), so "auto" uses it only after a probe boot worked; the verdict is cached per host
# kernel, qemu and guest kernel, so the probe costs one boot once.
kvm_usable() {
    [[ -r /dev/kvm && -w /dev/kvm ]] || return 1
    local key probe="$CACHE/kvm-probe" verdict
    key="$(uname -r) $("$QEMU" --version | head -n1) $CAPVM_KVER"
    if [[ -f "$probe" && "$(sed -n 1p "$probe")" == "$key" ]]; then
        [[ "$(sed -n 2p "$probe")" == ok ]]; return
    fi
    say "probing KVM with a test boot (once)"
    # A working KVM runs `true` in ~2 s; a broken one hangs silently (seen: nested hypervisor).
    if CAPTURE_VM_ACCEL=kvm CAPTURE_VM_VERBOSE=0 CAPTURE_VM_KEEP=0 timeout 40 \
            "$HERE/run.sh" --timeout 15 --no-share-cwd -- true > /dev/null 2>&1; then
        verdict=ok
    else
        verdict=fail
    fi
    printf '%s\n%s\n' "$key" "$verdict" > "$probe"
    [[ $verdict == ok ]]
}
case "${CAPTURE_VM_ACCEL:-auto}" in
    kvm) ACCEL=kvm ;;
    tcg) ACCEL=tcg ;;
    auto) if kvm_usable; then ACCEL=kvm; else ACCEL=tcg; fi ;;
    *) fail "CAPTURE_VM_ACCEL must be auto, tcg or kvm" ;;
esac
if [[ $ACCEL == kvm ]]; then
    ACCEL_ARGS=(-accel kvm -cpu host)
else
    # thread=multi: one host thread per vCPU. -cpu max: every instruction TCG can emulate, so host
    # binaries that picked e.g. AVX2 code paths at build or run time work in the guest.
    # shellcheck disable=SC2054  # the comma belongs to the -accel value
    ACCEL_ARGS=(-accel tcg,thread=multi -cpu max)
fi

# --- run folder: host-only files + the "share" folder the guest writes its results into ------------
RUNDIR="$(mktemp -d "${TMPDIR:-/tmp}/capture-vm.XXXXXX")"
SHARE="$RUNDIR/share"
mkdir -p "$SHARE"
PIDS=()
cleanup() {
    local p
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    if [[ "$KEEP" == 1 ]]; then echo "[capture-vm] run folder kept: $RUNDIR" >&2
    else rm -rf "$RUNDIR"; fi
}
trap cleanup EXIT
trap 'fail "interrupted"' INT TERM HUP

# qemu's option parser splits on commas; a comma inside a value is written twice.
qarg() { printf '%s' "${1//,/,,}"; }

# Read-write shares: unique real paths, parents before children (they are mounted in this order).
declare -A SEEN=()
SHARE_DIRS=()
add_share() {
    local d
    d="$(realpath -e "$1" 2>/dev/null)" || fail "--share $1: no such folder"
    [[ -d "$d" ]] || fail "--share $1: not a folder"
    if [[ "$d" == / ]]; then
        echo "[capture-vm] not sharing / read-write (the whole host); use --share on a sub-folder" >&2
        return
    fi
    [[ -n "${SEEN[$d]:-}" ]] && return
    SEEN[$d]=1
    SHARE_DIRS+=("$d")
}
[[ $SHARE_CWD == 1 ]] && add_share "$PWD"
for s in "${SHARE_ARGS[@]}"; do add_share "$s"; done
mapfile -t SHARE_DIRS < <(for d in "${SHARE_DIRS[@]}"; do printf '%s\t%s\n' "${#d}" "$d"; done |
                          sort -n | cut -f2-)

VIRTFS=(
    -virtfs "local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap"
    -virtfs "local,path=$(qarg "$CAPVM_LAYER"),mount_tag=capvmlayer,security_model=none,readonly=on,multidevs=remap"
    -virtfs "local,path=$(qarg "$SHARE"),mount_tag=capvmres,security_model=none,multidevs=remap"
)
for i in "${!SHARE_DIRS[@]}"; do
    VIRTFS+=(-virtfs "local,path=$(qarg "${SHARE_DIRS[i]}"),mount_tag=capvmsh$i,security_model=none,multidevs=remap")
done

# Environment of the command: explicit, so the guest behaves like the caller's shell where it matters.
GUEST_ENV=()
want_var() {
    case "$1" in
        PATH|HOME|USER|LOGNAME|SHELL|TERM|LANG|LANGUAGE|LC_*|TZ|TMPDIR|XDG_CACHE_HOME|XDG_CONFIG_HOME| \
        XDG_DATA_HOME|GST_*|CAPTURE_*) return 0 ;;
    esac
    [[ " ${CAPTURE_VM_ENV:-} " == *" $1 "* ]]
}
while IFS= read -r name; do
    want_var "$name" && GUEST_ENV+=("$name=${!name}")
done < <(compgen -e)
[[ -n "${HOME:-}" ]] || GUEST_ENV+=("HOME=/root")
[[ -n "${PATH:-}" ]] || GUEST_ENV+=("PATH=/usr/local/bin:/usr/bin:/bin:/usr/local/sbin:/usr/sbin:/sbin")
GUEST_ENV+=("CAPTURE_IN_VM=1")

# Files the guest reads: boot.conf (busybox /init), job.env and stage2.sh (bash stage2).
{
    printf 'VIVID_OPTS=%q\n' "${CAPTURE_VM_VIVID_OPTS:-n_devs=1 node_types=0x1 num_inputs=1 input_types=0x0}"
    printf 'TMPFS_TMP=%q\n' "${CAPTURE_VM_TMPFS_TMP:-0}"
    printf 'NSHARES=%d\n' "${#SHARE_DIRS[@]}"
    for i in "${!SHARE_DIRS[@]}"; do
        printf 'SHARE_TAG_%d=capvmsh%d SHARE_PATH_%d=%q\n' "$i" "$i" "$i" "${SHARE_DIRS[i]}"
    done
} > "$SHARE/boot.conf"
cp "$HERE/guest-stage2.sh" "$SHARE/stage2.sh"
# shellcheck disable=SC2034  # used through declare -p
{
    CAPVM_CWD="$PWD"
    CAPVM_ENV=("${GUEST_ENV[@]}")
    CAPVM_CMD=("$@")
    CAPVM_UDEV="${CAPTURE_VM_UDEV:-1}"
    CAPVM_UDEV_TRIGGER="${CAPTURE_VM_UDEV_TRIGGER:-media}"
    declare -p CAPVM_CWD CAPVM_ENV CAPVM_CMD CAPVM_UDEV CAPVM_UDEV_TRIGGER CAPVM_UDEVD CAPVM_UDEVADM
} > "$SHARE/job.env"

# Kernel command line. mitigations=off: TCG's "max" CPU does not claim to be immune to Meltdown & co,
# and page-table isolation makes every syscall flush the emulated TLB (much slower, nothing to protect).
# tsc=reliable: TCG's TSC is the host clock, the same for all vCPUs, but the kernel calls it unstable
# and falls back to the emulated HPET (no vDSO: every clock_gettime becomes a syscall + MMIO exit).
# pci=noacpi: interpreting ACPI's PCI interrupt routing costs ~0.25 s per virtio device under TCG.
# cryptomgr.notests: the crypto self-tests cost 0.3 s. All three save ~1.5 s of boot.
APPEND="console=ttyS0,115200 panic=-1 quiet loglevel=4 mitigations=off 8250.nr_uarts=4 rdinit=/init"
APPEND+=" tsc=reliable pci=noacpi cryptomgr.notests"
APPEND+="${CAPTURE_VM_APPEND:+ $CAPTURE_VM_APPEND}"

QEMU_CMD=(
    "$QEMU" -name capture-vm -machine pc "${ACCEL_ARGS[@]}" -smp "$CPUS" -m "$MEM"
    -nodefaults -no-user-config -display none -no-reboot
    -kernel "$CAPVM_KERNEL" -initrd "$CAPVM_INITRD" -append "$APPEND"
    -chardev "file,id=con,path=$(qarg "$RUNDIR/console.log")" -serial chardev:con
    -chardev "file,id=out,path=$(qarg "$RUNDIR/out.fifo")" -serial chardev:out
    -chardev "file,id=err,path=$(qarg "$RUNDIR/err.fifo")" -serial chardev:err
    "${VIRTFS[@]}"
)
# Output streaming: ttyS1 -> our stdout, ttyS2 -> our stderr, through fifos read by cat. ttyS0 (kernel
# console, init messages) goes to console.log, shown with CAPTURE_VM_VERBOSE=1 or when things fail.
mkfifo "$RUNDIR/out.fifo" "$RUNDIR/err.fifo"
QPID=""
boot_once() {  # one qemu run with the remaining time budget; sets QRC
    local budget="$1" cat_out cat_err tail_pid=""
    rm -f "$SHARE/timings" "$SHARE/init-error" "$SHARE/stdout" "$SHARE/stderr" "$SHARE/exit-code"
    : > "$RUNDIR/console.log"
    cat "$RUNDIR/out.fifo" & cat_out=$!; PIDS+=("$cat_out")
    cat "$RUNDIR/err.fifo" >&2 & cat_err=$!; PIDS+=("$cat_err")
    # timeout(1) puts qemu in its own process group and kills it (SIGKILL 10 s after SIGTERM) when the
    # guest hangs; our INT/TERM trap kills timeout, which passes the signal on to qemu.
    timeout -k 10 "$budget" "${QEMU_CMD[@]}" < /dev/null > "$RUNDIR/qemu.log" 2>&1 & QPID=$!
    PIDS+=("$QPID")
    if [[ "$VERBOSE" == 1 ]]; then   # tail ends by itself with qemu (--pid), then sed with tail
        tail -s 0.1 -n +1 -f --pid="$QPID" "$RUNDIR/console.log" 2>/dev/null | sed -u 's/\r$//; s/^/[guest] /' >&2 &
        tail_pid=$!
    fi
    set +e
    wait "$QPID"; QRC=$?
    set -e
    # cat gets EOF when qemu closes the fifo; if qemu never opened it (died early) cat is still
    # blocked in open(): give it a moment to drain, then stop it.
    for ((n = 0; n < 40; n++)); do
        kill -0 "$cat_out" 2>/dev/null || kill -0 "$cat_err" 2>/dev/null || break
        sleep 0.05
    done
    kill "$cat_out" "$cat_err" 2>/dev/null || true
    [[ -n "$tail_pid" ]] && wait "$tail_pid" 2>/dev/null
    return 0
}

# qemu 7.2's TCG occasionally crashes (SIGSEGV/SIGABRT) early in the boot (seen about once in 40
# boots on this kind of machine; known TCG races fixed in later qemu). Before the command has started
# a new boot is safe, so such a crash is retried (CAPTURE_VM_RETRIES times, default 2) within the
# same --timeout budget. After the command started nothing is retried: it may have had side effects.
RETRIES="${CAPTURE_VM_RETRIES:-2}"
attempt=0
T_BOOT0=$(date +%s.%N)   # --timeout bounds the VM (all boots + the command); setup has its own limits
T_QEMU=$T_BOOT0
while :; do
    attempt=$((attempt + 1))
    left=$(awk -v t="$TIMEOUT" -v s="$T_BOOT0" -v n="$(date +%s.%N)" 'BEGIN { l = int(t - (n - s)); print (l < 1 ? 1 : l) }')
    say "booting $(basename "$CAPVM_KERNEL") ($ACCEL, ${CPUS} vCPU, ${MEM} MB, ${left}s left of --timeout ${TIMEOUT})"
    T_QEMU=$(date +%s.%N)
    boot_once "$left"
    [[ -s "$SHARE/exit-code" ]] && break
    crashed=0
    case $QRC in 134|135|136|139) crashed=1 ;; esac   # SIGABRT, SIGBUS, SIGFPE, SIGSEGV
    if [[ $crashed == 1 ]] && ! grep -q command-start "$SHARE/timings" 2>/dev/null &&
            [[ $attempt -le $RETRIES ]]; then
        echo "[capture-vm] warning: qemu crashed during boot (exit $QRC, attempt $attempt); booting again" >&2
        sed 's/^/[capture-vm]   qemu: /' "$RUNDIR/qemu.log" >&2 || true
        continue
    fi
    break
done
T_END=$(date +%s.%N)

if [[ -s "$SHARE/exit-code" ]]; then
    RC="$(tr -dc '0-9' < "$SHARE/exit-code")"
    [[ -n "$RC" ]] || fail "unreadable exit code in the results share"
    if [[ "$VERBOSE" == 1 && -f "$SHARE/timings" ]]; then
        awk -v qemu_start="$T_QEMU" -v t_start="$T_START" -v t_end="$T_END" '
            { t[$1] = $2 }
            END {
                printf "[capture-vm] timings: boot to stage2 %.2fs, udev %.2fs, boot to command %.2fs, command %.2fs, qemu total %.2fs, run.sh total %.2fs\n",
                    t["stage2-start"], (t["udev-settled"] ? t["udev-settled"] - t["stage2-start"] : 0),
                    t["command-start"], t["command-end"] - t["command-start"],
                    t_end - qemu_start, t_end - t_start
            }' "$SHARE/timings" >&2
    fi
    exit "$RC"
fi

if [[ $QRC -eq 124 || $QRC -eq 137 ]]; then
    fail "timeout: the VM did not finish within ${TIMEOUT}s (--timeout)$(
        grep -q command-start "$SHARE/timings" 2>/dev/null && echo '; the command had started and hung')"
fi
if [[ -s "$RUNDIR/qemu.log" ]]; then
    sed 's/^/[qemu] /' "$RUNDIR/qemu.log" >&2
fi
fail "the VM stopped (qemu exit $QRC, attempt $attempt) without reporting the command's exit code"
