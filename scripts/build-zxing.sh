#!/usr/bin/env bash
# Builds zxing-cpp (the barcode decoder behind the Barcodes module) from source, once, and installs
# its core library with the C API into a prefix of its own (/usr/local/zxing-cpp-VERSION), with a
# pkg-config file, capture-zxing.pc, where pkg-config looks (/usr/local/lib/pkgconfig).
# Debian 12 ships zxing-cpp 1.4, which reads no Aztec code and misses codes 3.x reads; its
# libzxing-dev may stay installed beside this build: the library is linked under its own name
# (-lcapture-zxing), so the linker never takes Debian's libZXing.so for it.
#
#   scripts/build-zxing.sh            build and install when the prefix does not hold this version
#   scripts/build-zxing.sh --check    exit 0 when it does, 1 when not (builds nothing)
#
# The source is the PyPI source distribution of the zxing-cpp Python module (it holds the whole C++
# library with its CMake files); only the C++ core is built: readers, C API, static library (linked
# into the binaries, so nothing is needed at run time), no Python part, no writers, no tests.
# The download is checked against a pinned SHA-256. Environment: ZXING_PREFIX (default
# /usr/local/zxing-cpp-VERSION), ZXING_PKGCONFIG_DIR (default /usr/local/lib/pkgconfig), ZXING_JOBS
# (default: the number of CPUs).
set -euo pipefail

version=3.1.1
sha256=1051a521b21a9fe206702ad4186aeb195154e3e1badcd99576d030723f36382b
prefix="${ZXING_PREFIX:-/usr/local/zxing-cpp-$version}"
pcdir="${ZXING_PKGCONFIG_DIR:-/usr/local/lib/pkgconfig}"
jobs="${ZXING_JOBS:-$(nproc 2>/dev/null || echo 2)}"

installed() {
  [[ -f "$prefix/include/ZXing/ZXingC.h" && -f "$prefix/lib/libcapture-zxing.a" && -f "$pcdir/capture-zxing.pc" ]] &&
    grep -qx "Version: $version" "$pcdir/capture-zxing.pc" && grep -qx "prefix=$prefix" "$pcdir/capture-zxing.pc"
}

if installed; then exit 0; fi
if [[ "${1:-}" == "--check" ]]; then exit 1; fi

missing=()
command -v cmake >/dev/null || missing+=(cmake)
command -v c++ >/dev/null || missing+=("g++ (a C++20 compiler)")
if ((${#missing[@]})); then
  echo "build-zxing: zxing-cpp $version is built from source and needs: ${missing[*]}" >&2
  echo "build-zxing: install them (apt-get install cmake g++; scripts/install-deps.sh does) and run make again" >&2
  exit 69
fi
python=""
for candidate in python3 /usr/bin/python3; do
  if command -v "$candidate" >/dev/null && "$candidate" -m pip --version >/dev/null 2>&1; then python="$candidate"; break; fi
done
if [[ -z "$python" ]]; then
  echo "build-zxing: needs pip to download the zxing-cpp $version source from PyPI (apt-get install python3-pip)" >&2
  exit 69
fi

started=$SECONDS
work=$(mktemp -d "${TMPDIR:-/tmp}/capture-zxing.XXXXXX")
trap 'rm -rf "$work"' EXIT
echo "build-zxing: building zxing-cpp $version from source into $prefix (once; a few minutes)" >&2
"$python" -m pip download --quiet --no-deps --no-binary zxing-cpp "zxing-cpp==$version" -d "$work" >&2
archive="$work/zxing_cpp-$version.tar.gz"
[[ -f "$archive" ]] || { echo "build-zxing: pip did not download zxing_cpp-$version.tar.gz" >&2; exit 70; }
actual=$(sha256sum "$archive" | cut -d' ' -f1)
if [[ "$actual" != "$sha256" ]]; then
  echo "build-zxing: zxing_cpp-$version.tar.gz has SHA-256 $actual, not the pinned $sha256; not building it" >&2
  exit 70
fi
tar -xzf "$archive" -C "$work"
source="$work/zxing_cpp-$version/core"
cmake -S "$source" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
  -DCMAKE_INSTALL_LIBDIR=lib -DBUILD_SHARED_LIBS=OFF -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DZXING_READERS=ON -DZXING_WRITERS=OFF -DZXING_C_API=ON >"$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; echo "build-zxing: cmake could not configure zxing-cpp $version" >&2; exit 70; }
cmake --build "$work/build" --parallel "$jobs" >"$work/build.log" 2>&1 ||
  { tail -40 "$work/build.log" >&2; echo "build-zxing: zxing-cpp $version did not build" >&2; exit 70; }

cat >"$work/capture-zxing.pc" <<PC
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include

Name: capture-zxing
Description: zxing-cpp $version (core, readers, C API), static, built from source for Capture by scripts/build-zxing.sh
Version: $version
Libs: -L\${libdir} -lcapture-zxing -lstdc++
Cflags: -I\${includedir}
PC

writable() { local path=$1; while [[ ! -e "$path" ]]; do path=$(dirname "$path"); done; [[ -w "$path" ]]; }
sudo=""
if [[ $(id -u) -ne 0 ]] && ! { writable "$prefix" && writable "$pcdir"; }; then
  command -v sudo >/dev/null || { echo "build-zxing: need root (or sudo) to install into $prefix and $pcdir, or set ZXING_PREFIX and ZXING_PKGCONFIG_DIR" >&2; exit 69; }
  sudo="sudo"
fi
{
  $sudo cmake --install "$work/build" &&
    $sudo ln -sf libZXing.a "$prefix/lib/libcapture-zxing.a" &&
    $sudo mkdir -p "$pcdir" && $sudo install -m 644 "$work/capture-zxing.pc" "$pcdir/capture-zxing.pc"
} >"$work/install.log" 2>&1 || { cat "$work/install.log" >&2; echo "build-zxing: could not install into $prefix and $pcdir" >&2; exit 73; }
installed || { echo "build-zxing: $prefix does not hold zxing-cpp $version after installing it" >&2; exit 70; }
echo "build-zxing: zxing-cpp $version installed in $prefix in $((SECONDS - started)) s" >&2
