#!/usr/bin/env bash
# Installs every Debian package the build, the runtime and the tests need, when missing, then builds
# zxing-cpp 3 from source once (scripts/build-zxing.sh).
# Idempotent: a machine that has everything installs nothing (and runs no apt-get update).
#   scripts/install-deps.sh              install what is missing
#   scripts/install-deps.sh --runtime    print the packages an installed `capture` needs, one per line
#                                        (the Debian package's dependencies: scripts/make-deb.sh)
set -euo pipefail

# What the installed tool needs at run time: the shared libraries the binary links (the Swift runtime
# is linked into it; scripts/make-deb.sh checks this list against the libraries it finds), the
# GStreamer elements sessions are compiled into, and a font for overlay texts.
runtime=(
  libc6
  libgcc-s1
  libstdc++6
  libglib2.0-0
  libgstreamer1.0-0
  libgstreamer-plugins-base1.0-0
  libgstreamer-plugins-bad1.0-0
  libzbar0
  libcairo2
  libpango-1.0-0
  libpangocairo-1.0-0
  libharfbuzz0b
  libx11-6                # a preview drawn into an application's X11 window follows the window's size
  libgstrtspserver-1.0-0  # the stream output serves RTSP
  libmosquitto1           # events and commands over MQTT
  gstreamer1.0-plugins-base
  gstreamer1.0-plugins-good
  gstreamer1.0-plugins-bad
  gstreamer1.0-plugins-ugly
  gstreamer1.0-libav
  gstreamer1.0-alsa
  gstreamer1.0-pulseaudio
  gstreamer1.0-x
  gstreamer1.0-pipewire
  gstreamer1.0-nice       # webrtcbin's ICE (capture serve's WebRTC preview)
  gstreamer1.0-rtsp       # rtspclientsink (publishing over RTSP); srtsink comes with plugins-bad
  fonts-dejavu-core
)
if [[ "${1:-}" == "--runtime" ]]; then
  printf '%s\n' "${runtime[@]}"
  exit 0
fi

packages=(
  # Build: C headers and pkg-config files behind the Swift module maps.
  pkg-config
  libgstreamer1.0-dev
  libgstreamer-plugins-base1.0-dev
  libgstreamer-plugins-bad1.0-dev
  libzbar-dev
  # zxing-cpp 3 is built from source (scripts/build-zxing.sh, run below): Debian 12's 1.4 reads less.
  cmake
  g++
  python3-pip             # pip download: zxing-cpp's source distribution from PyPI
  libgstrtspserver-1.0-dev  # the stream output serves RTSP with GStreamer's RTSP server library
  libmosquitto-dev        # events and commands over MQTT (CaptureMQTT)
  libpango1.0-dev         # overlays are drawn with Cairo and Pango (pkg-config pangocairo)
  libx11-dev              # the preview in an application's X11 window (pkg-config x11)
  libgtk-4-dev            # CaptureGTK, the preview as a GTK 4 widget, and examples/camera-app (pkg-config gtk4)
  # Runtime: the tools beside the elements (the elements themselves are in runtime=() above).
  gstreamer1.0-tools
  gstreamer1.0-plugins-base-apps
  # Cameras through PipeWire: pipewiresrc and GStreamer's pipewire device provider, and the daemons
  # the hardware tier starts inside its VM (scripts/vm/pipewire-up.sh; this script starts nothing).
  # Without a running daemon the provider finds nothing and V4L2 cameras are listed as before.
  pipewire
  wireplumber
  # Tests and tools: independent checkers of what the project writes, graph drawing.
  ffmpeg
  zbar-tools
  imagemagick
  python3                 # the hardware tier's checks parse JSON and timestamps with it
  libimage-exiftool-perl
  zint
  qrencode
  graphviz
  v4l-utils
  procps
  curl                    # the capture serve CLI tests talk to the server with it
  # The stream tests' receivers: an RTSP RECORD server (Python + GStreamer's RTSP server library),
  # SRT tools; ffmpeg (above) reads served streams and listens for SRT.
  python3-gi
  gir1.2-gst-rtsp-server-1.0
  srt-tools
  # The MQTT tests: a broker on 127.0.0.1 and mosquitto_sub / mosquitto_pub to read and command.
  mosquitto
  mosquitto-clients
  # capture serve: WebRTC's ICE (nicesrc/nicesink for webrtcbin), and the browser test (headless
  # Chromium driven by Selenium, screenshots read with Pillow).
  chromium
  chromium-driver
  python3-selenium
  python3-pil
  # The desktop tests: a real X server without a screen, real input events through it, GTK 4's
  # GStreamer media backend for the camera app's video player.
  xvfb
  xauth                   # xvfb-run (the window-preview example's check in scripts/run-examples.sh)
  xdotool
  x11-utils
  libgtk-4-media-gstreamer
  gstreamer1.0-gtk3       # gtksink: the GTK 3 peer of `capture bench --only preview`
  weston                  # the Wayland preview test: a headless compositor, its screenshooter and scene graph
)

missing=()
for package in "${packages[@]}" "${runtime[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$package" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$package")
done

if ((${#missing[@]} == 0)); then
  exec bash "$(dirname "$0")/build-zxing.sh"
fi

echo "install-deps: installing ${missing[*]}" >&2
sudo=""
if [[ $(id -u) -ne 0 ]]; then
  command -v sudo >/dev/null || { echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2; exit 69; }
  sudo="sudo"
fi
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
# Build GStreamer's plugin registry once, so the first session does not pay for it.
gst-inspect-1.0 >/dev/null 2>&1 || true
# zxing-cpp 3, once (nothing to do when /usr/local/zxing-cpp-VERSION holds it).
exec bash "$(dirname "$0")/build-zxing.sh"
