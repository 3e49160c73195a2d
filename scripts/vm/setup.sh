#!/usr/bin/env bash
# scripts/vm/setup.sh - prepare the "real V4L2" test tier (see docs/real-v4l2-tier.md).
#
# Makes sure the host has what run.sh needs, then builds a cache with:
#   * Debian's own kernel (linux-image-amd64's real package), unpacked - never installed on the host -
#     as an uncompressed vmlinux (PVH entry: boots ~2x faster under TCG) or the bzImage as fallback;
#   * a "layer" directory that run.sh stacks over the host's / inside the guest: the kernel's modules
#     (depmod'ed) and the udev package (+ any library it needs that the host lacks), laid out the way
#     the host's / is laid out (merged /usr), so the guest looks as if both were installed;
#   * a tiny busybox-static initramfs holding the modules for virtio, 9p, overlayfs and vivid (with
#     their dependencies resolved by `modprobe --show-depends`) and the /init that mounts everything.
#
# Idempotent: when the cache is complete and was built by this very version of this script, it only
# checks the host packages (one dpkg-query) and exits. Only Debian's package registry is used.
#
# Environment:
#   CAPTURE_VM_CACHE       cache folder (default: $HOME/.cache/capture-vm)
#   CAPTURE_VM_KERNEL_PKG  kernel package to use (default: what linux-image-amd64 depends on)
#   CAPTURE_VM_NO_VMLINUX  1 = boot the bzImage, do not extract vmlinux
#   CAPTURE_VM_QUIET       1 = print nothing but errors
#
# Exit codes: 0 ready, 69 (EX_UNAVAILABLE) the tier cannot be prepared on this machine.
set -euo pipefail

SELF="$(readlink -f "${BASH_SOURCE[0]}")"
CACHE="${CAPTURE_VM_CACHE:-${HOME:-/root}/.cache/capture-vm}"
STAMP="$CACHE/vm.env"

# Host packages run.sh/selftest.sh use. gstreamer1.0-plugins-good brings v4l2src;
# xz-utils/zstd/gzip decompress the kernel payload; util-linux gives flock.
HOST_PKGS=(qemu-system-x86 busybox-static kmod v4l-utils gstreamer1.0-plugins-base-apps
           gstreamer1.0-plugins-good cpio xz-utils zstd gzip coreutils util-linux)

say() { [[ "${CAPTURE_VM_QUIET:-0}" == 1 ]] || echo "[capture-vm setup] $*" >&2; }
die() {
    {
        echo
        echo "!!! capture-vm setup FAILED: $*"
        echo "!!! The real-V4L2 (vivid in qemu) tier is NOT available on this machine."
        echo
    } >&2
    exit 69
}

# ---------------------------------------------------------------------------------------------
# Host packages
# ---------------------------------------------------------------------------------------------
missing_host_pkgs() {
    # dpkg-query prints one "<pkg> <status>" line per known package; unknown ones go to stderr.
    local installed
    installed="$(dpkg-query -W -f='${Package} ${db:Status-Abbrev}\n' "${HOST_PKGS[@]}" 2>/dev/null |
                 awk '$2 == "ii" {print $1}')" || true
    local p
    for p in "${HOST_PKGS[@]}"; do
        grep -qxF "$p" <<<"$installed" || echo "$p"
    done
}

APT_UPDATED=0
apt_update_once() {
    [[ $APT_UPDATED == 1 ]] && return 0
    APT_UPDATED=1
    say "apt-get update"
    timeout 600 apt-get -q -o Acquire::http::Timeout=30 -o DPkg::Lock::Timeout=120 update >&2 ||
        say "apt-get update failed (continuing with the lists we have)"
}

ensure_host_pkgs() {
    local missing
    mapfile -t missing < <(missing_host_pkgs)
    [[ ${#missing[@]} -eq 0 ]] && return 0
    [[ $(id -u) -eq 0 ]] || die "missing packages (${missing[*]}) and not root to apt-get install them"
    say "installing host packages: ${missing[*]}"
    local apt=(timeout 1200 env DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends
               -o Acquire::http::Timeout=30 -o DPkg::Lock::Timeout=120 install)
    # A fresh machine may have no (or stale) package lists: update once and retry.
    "${apt[@]}" "${missing[@]}" >&2 || { apt_update_once; "${apt[@]}" "${missing[@]}" >&2; } ||
        die "apt-get install ${missing[*]} failed"
}

# ---------------------------------------------------------------------------------------------
# Fast path: cache complete and built by this exact script => nothing to do.
# ---------------------------------------------------------------------------------------------
# The stamp names the script version and the choices that change the build.
SCRIPT_SUM="$(sha256sum "$SELF" | cut -c1-16)-vmlinux${CAPTURE_VM_NO_VMLINUX:-0}-${CAPTURE_VM_KERNEL_PKG:-default}"
cache_ok() {
    [[ -f "$STAMP" ]] || return 1
    local CAPVM_FORMAT="" CAPVM_KERNEL="" CAPVM_INITRD="" CAPVM_LAYER=""
    # shellcheck disable=SC1090
    source "$STAMP" || return 1
    [[ "$CAPVM_FORMAT" == "$SCRIPT_SUM" && -f "$CAPVM_KERNEL" && -f "$CAPVM_INITRD" && -d "$CAPVM_LAYER" ]]
}

ensure_host_pkgs
if cache_ok; then
    exit 0
fi

mkdir -p "$CACHE"
# Two run.sh started at once must not build the cache twice.
exec 9>"$CACHE/.lock"
timeout 1800 flock 9 || die "could not lock $CACHE/.lock"
cache_ok && exit 0

say "building the VM cache in $CACHE (one time, ~20 s)"
T0=$SECONDS

# ---------------------------------------------------------------------------------------------
# Downloads (apt-get download only: Debian's registry is the one network source we may use)
# ---------------------------------------------------------------------------------------------
DEBS="$CACHE/debs"
mkdir -p "$DEBS"

# apt_download PKG [VERSION]: fetch PKG's .deb into $DEBS unless a copy is already there; print its path.
apt_download() {
    local pkg="$1" ver="${2:-}" f spec="$1"
    [[ -n "$ver" ]] && spec="$pkg=$ver"
    # Reuse a cached .deb (any version when none was asked for), so a rebuild works offline.
    for f in "$DEBS/${pkg}_"*.deb; do
        [[ -f "$f" ]] || continue
        if [[ -z "$ver" || "$(dpkg-deb -f "$f" Version)" == "$ver" ]]; then echo "$f"; return 0; fi
    done
    local dl=(timeout 900 apt-get -q -o APT::Sandbox::User=root -o Acquire::http::Timeout=30 download "$spec")
    ( cd "$DEBS" && "${dl[@]}" >&2 ) || { apt_update_once; ( cd "$DEBS" && "${dl[@]}" >&2 ); } ||
        die "apt-get download $spec failed (is Debian's package registry reachable?)"
    for f in "$DEBS/${pkg}_"*.deb; do
        [[ -f "$f" ]] || continue
        if [[ -z "$ver" || "$(dpkg-deb -f "$f" Version)" == "$ver" ]]; then echo "$f"; return 0; fi
    done
    die "apt-get download $spec left no .deb in $DEBS"
}

# The meta package linux-image-amd64 only depends on the versioned package that holds the kernel.
kernel_pkg() {
    if [[ -n "${CAPTURE_VM_KERNEL_PKG:-}" ]]; then echo "$CAPTURE_VM_KERNEL_PKG"; return; fi
    local dep
    dep="$(apt-cache depends linux-image-amd64 2>/dev/null |
           sed -n 's/^ *Depends: <\{0,1\}\(linux-image-[0-9][^ >]*\)>\{0,1\}$/\1/p' | head -n1)" || true
    if [[ -z "$dep" ]]; then
        apt_update_once
        dep="$(apt-cache depends linux-image-amd64 2>/dev/null |
               sed -n 's/^ *Depends: <\{0,1\}\(linux-image-[0-9][^ >]*\)>\{0,1\}$/\1/p' | head -n1)" || true
    fi
    if [[ -z "$dep" ]]; then
        # Offline rebuild: fall back to a kernel .deb we downloaded before.
        local f
        f="$(ls -1 "$DEBS"/linux-image-[0-9]*.deb 2>/dev/null | sort -V | tail -n1)" || true
        [[ -n "$f" ]] && dep="$(dpkg-deb -f "$f" Package)"
    fi
    [[ -n "$dep" ]] || die "cannot resolve the kernel package behind linux-image-amd64 (apt-cache depends)"
    echo "$dep"
}

# What installing udev on THIS host would bring in: udev itself plus whatever it needs that the host
# lacks or has in another version (libudev1 must match udev exactly). apt's simulation answers that
# exactly, with versions; nothing is installed.
udev_pkgs() {
    local out
    out="$(apt-get -s -q install --no-install-recommends udev 2>/dev/null)" ||
        { apt_update_once; out="$(apt-get -s -q install --no-install-recommends udev 2>/dev/null)"; } ||
        out=""
    if [[ -z "$out" ]] && dpkg-query -W -f='${db:Status-Abbrev}' udev 2>/dev/null | grep -q '^ii'; then
        echo "udev $(dpkg-query -W -f='${Version}' udev)"   # already installed: reuse the same version
        return
    fi
    sed -n 's/^Inst \([^ ]*\) \(\[[^]]*\] \)\{0,1\}(\([^ ]*\) .*/\1 \3/p' <<<"$out"
}

KPKG="$(kernel_pkg)"
say "kernel package: $KPKG"
KDEB="$(apt_download "$KPKG")"
UDEV_DEBS=()
while read -r pkg ver; do
    [[ -n "$pkg" ]] || continue
    UDEV_DEBS+=("$(apt_download "$pkg" "$ver")")
done < <(udev_pkgs)
[[ ${#UDEV_DEBS[@]} -gt 0 ]] || UDEV_DEBS+=("$(apt_download udev)")
say "udev packages: $(printf '%s ' "${UDEV_DEBS[@]##*/}")"

# ---------------------------------------------------------------------------------------------
# Unpack into a fresh build folder; the finished pieces are renamed into place at the end.
# ---------------------------------------------------------------------------------------------
BUILD="$CACHE/build.$$"
rm -rf "$CACHE"/build.*
mkdir -p "$BUILD/layer"
trap 'rm -rf "$BUILD"' EXIT

for deb in "$KDEB" "${UDEV_DEBS[@]}"; do
    dpkg-deb -x "$deb" "$BUILD/layer" || die "dpkg-deb -x $deb failed"
done

# The layer is stacked ABOVE the host's / in the guest's overlayfs. A real directory in an upper layer
# hides a symlink of the same name below it, so a package's lib/ (Debian 12 packages still ship /lib)
# would hide the host's /lib -> usr/lib symlink and break every program. Move every directory whose
# host counterpart is a symlink to where that symlink points (e.g. lib/ -> usr/lib/, var/run -> run).
normalize_layout() {
    local root="$1" d rel tgt again=1
    while [[ $again == 1 ]]; do
        again=0
        while IFS= read -r -d '' d; do
            rel="${d#"$root"/}"
            if [[ -L "/$rel" ]]; then
                tgt="$(realpath -m "/$rel")"; tgt="${tgt#/}"
                mkdir -p "$root/$tgt"
                cp -al "$d/." "$root/$tgt/"   # hard links: instant, same file system
                rm -rf "$d"
                again=1
                break
            fi
        done < <(find "$root" -mindepth 1 -type d -print0)
    done
}
normalize_layout "$BUILD/layer"

# Kernel version from the package's contents, never hard-coded.
# Where the host's /lib/modules really is (usr/lib/modules on merged /usr), as seen in the layer;
# depmod/modprobe -b/-d want the folder that holds lib/modules.
MODDIR="$BUILD/layer/$(realpath -m /lib/modules | cut -c2-)"
MODBASE="${MODDIR%/lib/modules}"
KVER="$(ls -1 "$MODBASE/lib/modules" 2>/dev/null | head -n1)"
[[ -n "$KVER" && -d "$MODBASE/lib/modules/$KVER/kernel" ]] || die "no lib/modules/<version> in $KDEB"
say "kernel version: $KVER"
depmod -b "$MODBASE" "$KVER" || die "depmod -b $MODBASE $KVER failed"

# Kernel image out of the layer (the guest does not need /boot).
BZIMAGE="$BUILD/layer/boot/vmlinuz-$KVER"
[[ -f "$BZIMAGE" ]] || die "no boot/vmlinuz-$KVER in $KDEB"
mv "$BZIMAGE" "$BUILD/vmlinuz-$KVER"
cp "$BUILD/layer/boot/config-$KVER" "$BUILD/config-$KVER" 2>/dev/null || true
rm -rf "$BUILD/layer/boot"

# udev must be runnable inside the guest: its binaries with the layer's libraries over the host's.
# systemd-udevd is a symlink to udevadm (it acts by argv[0]), absolute, so test the target's name.
UDEVD="" UDEVADM=""
for c in usr/lib/systemd/systemd-udevd lib/systemd/systemd-udevd; do
    [[ -e "$BUILD/layer/$c" || -L "$BUILD/layer/$c" ]] && { UDEVD="$c"; break; }
done
for c in usr/bin/udevadm bin/udevadm; do
    [[ -f "$BUILD/layer/$c" ]] && { UDEVADM="$c"; break; }
done
[[ -n "$UDEVD" && -n "$UDEVADM" ]] || die "systemd-udevd/udevadm not found in the udev package"
LIBPATH="$(find "$BUILD/layer" -name '*.so*' -printf '%h\n' 2>/dev/null | sort -u | paste -sd:)"
if ldd_out="$(LD_LIBRARY_PATH="$LIBPATH" ldd "$BUILD/layer/$UDEVADM" 2>&1)"; then
    if grep -q 'not found' <<<"$ldd_out"; then
        die "systemd-udevd lacks libraries: $(grep 'not found' <<<"$ldd_out" | tr -s ' \t\n' ' ')"
    fi
fi

# ---------------------------------------------------------------------------------------------
# vmlinux: the bzImage's payload, decompressed. The x86 boot header tells where it is:
# setup_sects @0x1f1, payload_offset @0x248 and payload_length @0x24c (boot protocol >= 2.08).
# qemu boots an ELF vmlinux through its PVH note (CONFIG_PVH=y), skipping the real-mode setup and
# the self-decompression, which costs seconds under TCG.
# ---------------------------------------------------------------------------------------------
le32() { od -An -tu4 -j "$2" -N4 "$1" | tr -d ' '; }
extract_vmlinux() {
    local bz="$1" out="$2" ss po pl start magic
    ss="$(od -An -tu1 -j $((0x1f1)) -N1 "$bz" | tr -d ' ')"; [[ "$ss" == 0 ]] && ss=4
    po="$(le32 "$bz" $((0x248)))"; pl="$(le32 "$bz" $((0x24c)))"
    [[ -n "$po" && -n "$pl" && "$pl" -gt 0 ]] || return 1
    start=$(( (ss + 1) * 512 + po ))
    tail -c +$((start + 1)) "$bz" | head -c "$pl" > "$out.payload"
    magic="$(od -An -tx1 -N6 "$out.payload" | tr -d ' \n')"
    # Every format is followed by the 4-byte uncompressed size, hence the tolerance of trailing data.
    case "$magic" in
        1f8b*)         gzip -dc "$out.payload" > "$out" 2>/dev/null || true ;;
        fd377a585a00)  xz -dc --single-stream "$out.payload" > "$out" ;;
        28b52ffd*)     zstd -dcq "$out.payload" > "$out" 2>/dev/null || true ;;
        02214c18*)     lz4 -dcq "$out.payload" > "$out" 2>/dev/null || true ;;
        5d00*)         xz -dc --format=lzma "$out.payload" > "$out" 2>/dev/null || true ;;
        425a68*)       bzip2 -dc "$out.payload" > "$out" 2>/dev/null || true ;;
        *)             say "unknown kernel compression (magic $magic)"; return 1 ;;
    esac
    local want have
    want="$(tail -c 4 "$out.payload" | od -An -tu4 | tr -d ' ')"
    have="$(stat -c %s "$out")"
    rm -f "$out.payload"
    [[ "$(od -An -c -N4 "$out" | tr -d ' ')" == '177ELF' && "$have" == "$want" ]]
}

KERNEL_NAME="vmlinuz-$KVER"
if [[ "${CAPTURE_VM_NO_VMLINUX:-0}" != 1 ]] && grep -q '^CONFIG_PVH=y' "$BUILD/config-$KVER" 2>/dev/null; then
    if extract_vmlinux "$BUILD/vmlinuz-$KVER" "$BUILD/vmlinux-$KVER"; then
        KERNEL_NAME="vmlinux-$KVER"
        rm -f "$BUILD/vmlinuz-$KVER"   # 8 MB we no longer need
    else
        say "could not extract vmlinux; booting the bzImage (slower under TCG)"
        rm -f "$BUILD/vmlinux-$KVER"
    fi
fi

# ---------------------------------------------------------------------------------------------
# initramfs: busybox-static, the modules, and /init.
# ---------------------------------------------------------------------------------------------
IRD="$BUILD/initramfs"
mkdir -p "$IRD"/{bin,dev,proc,sys,modules,lower,layer,upper,newroot,results}
BUSYBOX="$(command -v busybox || true)"
[[ -n "$BUSYBOX" ]] && file_is_static="$(ldd "$BUSYBOX" 2>&1 || true)"
[[ -n "$BUSYBOX" && "${file_is_static:-}" == *"not a dynamic executable"* ]] ||
    die "no static busybox (package busybox-static)"
cp "$BUSYBOX" "$IRD/bin/busybox"

# modules.<group>: file names in load order, dependencies first, each module once.
add_modules() {
    local group="$1"; shift
    local mod line path name
    : > "$IRD/modules/$group.list"
    for mod in "$@"; do
        while read -r line; do
            case "$line" in
                builtin*) continue ;;           # compiled into this kernel, nothing to load
                insmod*) path="$(awk '{print $2}' <<<"$line")" ;;
                *) continue ;;
            esac
            name="$(basename "$path")"; name="${name%.xz}"; name="${name%.zst}"; name="${name%.gz}"
            grep -qxF "$name" "$IRD"/modules/*.list 2>/dev/null && continue
            case "$path" in   # insmod of busybox may not decompress: store plain .ko files
                *.xz)  xz -dc "$path" > "$IRD/modules/$name" ;;
                *.zst) zstd -dcq "$path" > "$IRD/modules/$name" ;;
                *.gz)  gzip -dc "$path" > "$IRD/modules/$name" ;;
                *)     cp "$path" "$IRD/modules/$name" ;;
            esac
            echo "$name" >> "$IRD/modules/$group.list"
        done < <(modprobe -d "$MODBASE" -S "$KVER" --show-depends "$mod" 2>/dev/null ||
                 die "modprobe --show-depends $mod failed for $KVER")
    done
}
add_modules base virtio_pci 9pnet_virtio 9p overlay
add_modules vivid vivid
grep -qx 'vivid.ko' "$IRD/modules/vivid.list" || die "vivid module not found in $KVER"
for m in virtio_pci.ko 9pnet_virtio.ko 9p.ko overlay.ko; do
    grep -qx "$m" "$IRD/modules/base.list" || die "module $m not found in $KVER"
done

cat > "$IRD/init" <<'INIT'
#!/bin/busybox sh
# PID 1 of the capture VM's initramfs (written by scripts/vm/setup.sh).
# Loads virtio/9p/overlay, mounts the host's / read-only (9p) under a tmpfs overlay together with the
# cache's layer (kernel modules + udev), loads vivid, prepares everything that does not need the host's
# programs (each exec of a dynamically linked host program costs ~50 ms under TCG; busybox applets are
# static and in memory), mounts the run's read-write shares, then hands over to the run's stage2 script
# (bash), which run.sh put in the results share with boot.conf and job.env.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

fatal() {
    echo "capture-vm init: FATAL: $*"
    echo "init: $*" >> /results/init-error 2>/dev/null
    sync
    echo o > /proc/sysrq-trigger; sleep 2; echo b > /proc/sysrq-trigger; sleep 10
}
load() {  # load GROUP [options for the module GROUP.ko]
    for m in $(cat /modules/$1.list); do
        opts=""; [ "$m" = "$1.ko" ] && opts="$2"
        insmod /modules/$m $opts || fatal "insmod $m $opts"
    done
}
p9() {  # p9 TAG DIR OPTIONS
    mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144,$3 "$1" "$2" || fatal "mount 9p $1 on $2"
}

load base
p9 capvmres /results cache=none
. /results/boot.conf || fatal "no boot.conf in the results share"
# The host's / and the layer never change while the guest runs: let the guest cache them.
p9 hostroot /lower ro,cache=loose
p9 capvmlayer /layer ro,cache=loose
mount -t tmpfs -o mode=0755 tmpfs /upper || fatal "tmpfs"
mkdir -p /upper/upper /upper/work
mount -t overlay overlay -o lowerdir=/layer:/lower,upperdir=/upper/upper,workdir=/upper/work /newroot ||
    fatal "overlay mount"
load vivid "$VIVID_OPTS"

# /run: fresh tmpfs as on any boot (udev keeps its database there); the results share inside it.
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /newroot/run || fatal "tmpfs /run"
mkdir -p /newroot/run/capture-vm
mount -o move /results /newroot/run/capture-vm || fatal "move results"
mkdir -p /dev/pts /dev/shm
mount -t devpts -o gid=5,mode=0620,ptmxmode=0666 devpts /dev/pts || fatal "devpts"
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm || fatal "/dev/shm"
# devtmpfs lacks these; bash process substitution and many scripts use /dev/fd.
ln -sfn /proc/self/fd /dev/fd
ln -sfn /proc/self/fd/0 /dev/stdin
ln -sfn /proc/self/fd/1 /dev/stdout
ln -sfn /proc/self/fd/2 /dev/stderr
# /tmp: the host's through the overlay by default, or an empty tmpfs.
[ "$TMPFS_TMP" = 1 ] && { mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /newroot/tmp || fatal "tmpfs /tmp"; }
hostname capture-vm
ip link set lo up    # loopback for tests that talk to localhost (no other network in the guest)
# ttyS1/ttyS2 carry the command's stdout/stderr to the host: raw (no \n -> \r\n), no echo. Serial
# ports keep their settings across opens.
stty -F /dev/ttyS1 raw -echo 115200 || fatal "stty ttyS1"
stty -F /dev/ttyS2 raw -echo 115200 || fatal "stty ttyS2"
mkfifo /newroot/run/capvm-out /newroot/run/capvm-err || fatal "mkfifo"   # stage2's tee inputs

# Read-write shares of host folders at the same path (run.sh lists parents first). cache=mmap: reads
# and writes go straight to the host (it sees every write at once), and mmap works (linkers use it).
i=0
while [ "$i" -lt "$NSHARES" ]; do
    eval "tag=\$SHARE_TAG_$i path=\$SHARE_PATH_$i"
    mkdir -p "/newroot$path" || fatal "mkdir $path"
    p9 "$tag" "/newroot$path" cache=mmap
    i=$((i + 1))
done

for d in proc sys dev; do mount -o move /$d /newroot/$d || fatal "move /$d"; done
read -r up _ < /newroot/proc/uptime
echo "init-done $up" >> /newroot/run/capture-vm/timings
for sh in /bin/bash /bin/sh; do
    [ -x /newroot$sh ] && exec switch_root /newroot $sh /run/capture-vm/stage2.sh
done
fatal "no shell in the host root"
INIT
chmod 755 "$IRD/init"
( cd "$IRD" && find . -print0 | LC_ALL=C sort -z | cpio -o -0 -H newc --quiet -R 0:0 ) \
    > "$BUILD/initramfs-$KVER.cpio" || die "cpio failed"

# ---------------------------------------------------------------------------------------------
# Commit: replace the previous cache contents, stamp last.
# ---------------------------------------------------------------------------------------------
rm -rf "$CACHE/layer" "$CACHE"/vmlinu[xz]-* "$CACHE"/initramfs-* "$CACHE"/config-* "$CACHE/kvm-probe"
mv "$BUILD/layer" "$CACHE/layer"
mv "$BUILD/$KERNEL_NAME" "$BUILD/initramfs-$KVER.cpio" "$CACHE/"
mv "$BUILD/config-$KVER" "$CACHE/" 2>/dev/null || true
cat > "$STAMP.tmp" <<EOF
# written by scripts/vm/setup.sh; sourced by run.sh
CAPVM_FORMAT=$SCRIPT_SUM
CAPVM_KVER=$KVER
CAPVM_KERNEL=$CACHE/$KERNEL_NAME
CAPVM_INITRD=$CACHE/initramfs-$KVER.cpio
CAPVM_LAYER=$CACHE/layer
CAPVM_UDEVD=/$UDEVD
CAPVM_UDEVADM=/$UDEVADM
EOF
mv "$STAMP.tmp" "$STAMP"
say "cache ready in $((SECONDS - T0)) s: $KERNEL_NAME, initramfs-$KVER.cpio, layer/"
