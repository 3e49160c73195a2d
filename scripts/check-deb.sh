#!/usr/bin/env bash
# Installs the Debian package in a clean Debian 12 root and checks it as a user would, then removes it:
#   scripts/check-deb.sh [.build/capture_VERSION_ARCH.deb]      (as root; builds the package when not given)
# In the clean root: `apt install ./capture_*.deb` (its dependencies from the mirror), `capture --version`,
# `capture photo -i test-pattern -o x.jpg` (a JPEG of the asked size), `capture stream --serve ... --record`
# (the RTSP server library), `man capture`, the completions, `capture bench` saying that the developer
# executable is not packaged,
# where each shell looks, the example files; then `apt remove capture` and no file of the package left.
set -euo pipefail
[[ $(id -u) == 0 ]] || { echo "check-deb: needs root (chroot and mounts)" >&2; exit 69; }
root=$(cd "$(dirname "$0")/.." && pwd)
deb=${1:-}
if [[ -z "$deb" ]]; then deb=$(cd "$root" && bash scripts/make-deb.sh | tail -1); deb="$root/$deb"; fi
[[ -f "$deb" ]] || { echo "check-deb: no package at $deb" >&2; exit 66; }
command -v mmdebstrap >/dev/null || DEBIAN_FRONTEND=noninteractive apt-get install -y -qq mmdebstrap >/dev/null
tar=/tmp/check-deb-bookworm.tar
mirror=$(grep -h "^URIs:" /etc/apt/sources.list.d/*.sources 2>/dev/null | head -1 | awk '{print $2}')
[[ -n "$mirror" ]] || mirror=$(grep -h "^deb " /etc/apt/sources.list 2>/dev/null | head -1 | awk '{print $2}')
if [[ ! -s $tar ]]; then
  echo "check-deb: making a clean Debian 12 root (about a minute)" >&2
  mmdebstrap --variant=apt --include=ca-certificates,man-db,file bookworm "$tar" "$mirror" >/tmp/check-deb-mmdebstrap.log 2>&1
fi
chroot_dir=$(mktemp -d /tmp/check-deb-root.XXXXXX)
cleanup() {
  for mount in proc sys dev; do umount -l "$chroot_dir/$mount" 2>/dev/null || true; done
  rm -rf --one-file-system "$chroot_dir"
}
trap cleanup EXIT
tar -xf "$tar" -C "$chroot_dir"
mount -t proc proc "$chroot_dir/proc"; mount --rbind /sys "$chroot_dir/sys"; mount --rbind /dev "$chroot_dir/dev"
cp /etc/resolv.conf "$chroot_dir/etc/resolv.conf"
cp "$deb" "$chroot_dir/tmp/"
name=$(basename "$deb")
chroot "$chroot_dir" /bin/bash -euo pipefail -c "
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq ./tmp/$name >/tmp/apt.log 2>&1 || { tail -20 /tmp/apt.log; exit 1; }
  echo \"check-deb: installed \$(dpkg-query -W -f='\${Package} \${Version}' capture) with \$(apt-cache depends capture | grep -c Depends) dependencies\"
  capture --version
  cd /tmp && capture photo -i test-pattern -o x.jpg --size 640x480 >/dev/null
  file x.jpg | grep -q 'JPEG image data.*640x480' || { file x.jpg; echo 'check-deb: the photo is not a 640x480 JPEG'; exit 1; }
  echo 'check-deb: capture photo wrote a 640x480 JPEG'
  # The stream output's libraries (RTSP server) and a recording from its encoder, on 127.0.0.1.
  capture stream -i test-pattern --serve rtsp://127.0.0.1:18554/check --record s.mp4 --duration 2 >/dev/null 2>/tmp/stream.log ||
    { cat /tmp/stream.log; echo 'check-deb: capture stream failed'; exit 1; }
  file s.mp4 | grep -q 'ISO Media' || { file s.mp4; echo 'check-deb: capture stream --record wrote no MP4'; exit 1; }
  echo 'check-deb: capture stream served RTSP and recorded an MP4 from the same encoder'
  MANPAGER=cat man capture | grep -q 'capture - AVFoundation-style camera capture' || { echo 'check-deb: man capture does not show the page'; exit 1; }
  echo 'check-deb: man capture shows the page'
  for file in /usr/share/bash-completion/completions/capture /usr/share/zsh/vendor-completions/_capture /usr/share/fish/vendor_completions.d/capture.fish /usr/share/capture/Pipelines/default.pipeline; do
    [[ -s \$file ]] || { echo \"check-deb: missing \$file\"; exit 1; }
  done
  capture validate /usr/share/capture/Pipelines/take-picture.pipeline >/dev/null
  echo 'check-deb: completions and example files in place; an installed example validates'
  # The package ships capture only: bench and soak run in capture-dev, built from the source tree.
  status=0; capture bench --only startup 2>/tmp/bench.err || status=\$?
  [[ \$status == 69 ]] && grep -q 'product capture-dev' /tmp/bench.err || { cat /tmp/bench.err; echo \"check-deb: capture bench exited \$status\"; exit 1; }
  echo 'check-deb: capture bench says capture-dev is not installed and how to build it (exit 69)'
  dpkg -L capture | sort > /tmp/files
  apt-get remove -y -qq capture >/dev/null
  left=0
  while IFS= read -r path; do [[ -f \$path ]] && { echo \"check-deb: left behind: \$path\"; left=1; }; done < /tmp/files
  [[ \$left == 0 ]] || exit 1
  hash -r; ! command -v capture >/dev/null || { echo 'check-deb: capture is still on the PATH'; exit 1; }
  echo \"check-deb: apt remove left none of the package's \$(grep -c . /tmp/files) paths\"
"
echo "check-deb: $name passed"
