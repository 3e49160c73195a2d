#!/usr/bin/env bash
# Builds the Debian package of the capture tool: a release build with the Swift runtime linked in
# (a machine without a Swift toolchain runs it), staged under /usr by scripts/install.sh, depending on
# the runtime packages scripts/install-deps.sh names. Fails when the binary links a library that no
# package of that list provides, so the list cannot fall behind the code.
#   scripts/make-deb.sh        -> .build/deb/capture_VERSION_ARCH.deb
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
SWIFT=${SWIFT:-swift}
version=$(sed -n 's/.*static let string = "\(.*\)".*/\1/p' Sources/Capture/Support/Version.swift)
[[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+([.~+-][0-9A-Za-z.~+-]*)?$ ]] || { echo "make-deb: no version in Version.swift" >&2; exit 65; }
arch=$(dpkg --print-architecture)
build=.build/deb
"$SWIFT" build -c release --product capture --static-swift-stdlib --build-path "$build" >&2
binary="$build/release/capture"

# The package ships capture only. The benchmarks, the soak runs, the fuzzer and their test fixtures are
# in capture-dev (`capture bench` and `capture soak` hand over to it, and say it is missing when it is):
# none of their code may be linked into capture. Their names stand spelt out in the symbols.
nm "$binary" > "$build/symbols"
if grep -q -E 'TestSupport|Benchmarks|BarcodeCorpus|Fuzz|capture_dev' "$build/symbols"; then
  echo "make-deb: $binary links test or benchmark code:" >&2
  grep -E 'TestSupport|Benchmarks|BarcodeCorpus|Fuzz|capture_dev' "$build/symbols" | head -3 >&2
  exit 70
fi

# The runtime list must cover every library the binary links directly.
mapfile -t runtime < <(bash scripts/install-deps.sh --runtime)
missing=()
while IFS= read -r library; do
  [[ -n "$library" ]] || continue
  owner=$(dpkg -S "$(readlink -f "$library")" 2>/dev/null | head -1 | cut -d: -f1) || true
  [[ -n "$owner" ]] || owner=$(dpkg -S "$library" 2>/dev/null | head -1 | cut -d: -f1) || true
  [[ -n "$owner" ]] || { missing+=("$library (no package owns it)"); continue; }
  printf '%s\n' "${runtime[@]}" | grep -qx "$owner" || missing+=("$library (package $owner)")
done < <(
  # The libraries the binary itself names (NEEDED); what they need in turn comes with their packages.
  resolved=$(ldd "$binary")
  for needed in $(objdump -p "$binary" | awk '/NEEDED/ { print $2 }'); do
    awk -v name="$needed" '$1 == name && $3 ~ /^\// { print $3 }' <<<"$resolved"
  done | sort -u
)
if ((${#missing[@]})); then
  printf 'make-deb: the binary links libraries whose packages scripts/install-deps.sh does not name in runtime=():\n' >&2
  printf '  %s\n' "${missing[@]}" >&2
  exit 65
fi

# Stage under /usr (a folder of the build's own) and describe the package.
stage="$build/package"
rm -rf "$stage"
mkdir -p "$stage/DEBIAN"
bash scripts/install.sh "$binary" /usr "$stage" > "$build/files"
# The maintainer is whoever the repository's commits name (DEB_MAINTAINER overrides).
maintainer=${DEB_MAINTAINER:-$(git log -1 --format='%an <%ae>' 2>/dev/null || true)}
[[ -n "$maintainer" ]] || { echo "make-deb: set DEB_MAINTAINER=\"Name <email>\"" >&2; exit 64; }
depends=$(printf '%s\n' "${runtime[@]}" | paste -sd, - | sed 's/,/, /g')
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat > "$stage/DEBIAN/control" <<CONTROL
Package: capture
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $size
Depends: $depends
Section: video
Priority: optional
Description: AVFoundation-style camera capture on GStreamer
 Camera capture for Linux with the model of Apple's capture APIs: a session
 of inputs and outputs compiled into a GStreamer pipeline that is edited live
 while the camera streams. The capture tool runs declarative .pipeline files
 and takes photos, records movies, scans codes and drives camera controls.
CONTROL
output="$build/capture_${version}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$output" >&2
echo "$output"
