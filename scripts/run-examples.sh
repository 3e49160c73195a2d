#!/usr/bin/env bash
# Runs every program under examples/ on the virtual devices (test pattern, test tone, a file) and checks
# what it prints and what it writes, with independent tools (ImageMagick's identify, ffprobe).
#   scripts/run-examples.sh [BIN_DIR]     (default: .build/debug, where `swift build` puts them)
# Fails when an example has no check here, so a new example cannot go untested.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$(cd "${1:-$root/.build/debug}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
passed=0 failed=0

# run NAME ARGS...: runs the example in its own folder; its output is in $work/NAME/out.txt. Its photo
# library (the saved photos album) is $work/NAME/Pictures and Videos, never the user's own.
run() {
  local name=$1; shift
  mkdir -p "$work/$name"
  (cd "$work/$name" && CAPTURE_PICTURES_DIR="$work/$name/Pictures" CAPTURE_VIDEOS_DIR="$work/$name/Videos" \
    timeout 120 "$bin/$name" "$@" >>out.txt 2>&1)
}
# seconds FILE: the duration ffprobe reads.
seconds() { ffprobe -v error -show_entries format=duration -of csv=p=0 "$1"; }
# near VALUE TARGET TOLERANCE: |VALUE - TARGET| <= TOLERANCE.
near() { awk -v v="$1" -v t="$2" -v e="$3" 'BEGIN { d = v - t; if (d < 0) d = -d; exit !(d <= e) }' || { echo "      $1 is not within $3 of $2"; return 1; }; }
# said NAME REGEX: the example printed a line matching REGEX.
said() { grep -qE "$2" "$work/$1/out.txt" || { echo "      expected a line matching /$2/"; return 1; }; }
# image FILE WxH FORMAT: ImageMagick reads FILE as a FORMAT image of that size.
image() {
  local got
  got=$(identify -format '%wx%h %m' "$1" 2>&1) || { echo "      identify cannot read $1: $got"; return 1; }
  [[ "$got" == "$2 $3" ]] || { echo "      $1 is '$got', expected '$2 $3'"; return 1; }
}
# movie FILE MIN_SECONDS STREAMS: ffprobe reads FILE, its streams are STREAMS (e.g. "h264 aac"), it lasts
# at least MIN_SECONDS.
movie() {
  local codecs duration
  codecs=$(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$1" | sort | tr '\n' ' ' | sed 's/ $//')
  [[ "$codecs" == "$3" ]] || { echo "      $1 has streams '$codecs', expected '$3'"; return 1; }
  duration=$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$1")
  awk -v d="$duration" -v m="$2" 'BEGIN { exit !(d + 0 >= m + 0) }' || { echo "      $1 lasts $duration s, expected >= $2"; return 1; }
  # The whole file decodes.
  ffmpeg -v error -i "$1" -f null - 2>"$work/decode.txt" && [[ ! -s "$work/decode.txt" ]] ||
    { echo "      $1 does not decode cleanly: $(head -3 "$work/decode.txt")"; return 1; }
}

check_take_picture() {
  run take-picture --allow-test-pattern picture.jpg &&
    said take-picture '^Took a 3840x2160 picture with Test Pattern' &&
    said take-picture '^Edited 2160x2160 \(crop 2160x2160 at 840,0\), saved to the album: .*/Pictures/IMG_0001.jpg' &&
    image "$work/take-picture/picture.jpg" 3840x2160 JPEG &&
    image "$work/take-picture/Pictures/IMG_0001.jpg" 2160x2160 JPEG
}
check_camera_preview() {
  run camera-preview 2 test-pattern &&
    said camera-preview 'previewing (headless|in a window) for 2.0 s' &&
    said camera-preview '^preview showed [1-9][0-9]+ frames'
}
check_record_video() {
  # Without --allow-test-pattern the first camera records; a machine without one says so (exit 1) and
  # records nothing: "default" is never the test pattern.
  run record-video 1 camera.mp4; local status=$?
  ((status == 0)) || { ((status == 1)) && said record-video '^Error: Camera Unavailable .*--allow-test-pattern' && [[ ! -e "$work/record-video/camera.mp4" ]]; } || return 1
  run record-video 2 movie.mp4 --allow-test-pattern &&
    said record-video '^Video saved: .*movie.mp4, 2\.[0-9]+ seconds' &&
    said record-video '^Saved to the album: .*/Videos/movie.mp4' &&
    movie "$work/record-video/movie.mp4" 1.8 "aac h264" &&
    cmp -s "$work/record-video/movie.mp4" "$work/record-video/Videos/movie.mp4" || { echo "      the album's copy differs"; return 1; }
}
check_still_image() {
  run still-image 3 stills --allow-test-pattern &&
    said still-image '^Image saved: stills/still_003.jpg \(1280x720\)' &&
    image "$work/still-image/stills/still_001.jpg" 1280x720 JPEG &&
    image "$work/still-image/stills/still_003.jpg" 1280x720 JPEG
}
check_video_mode_switch() {
  run video-mode-switch --test-tone --allow-test-pattern &&
    said video-mode-switch '^photo mode: took mode_photo_002.jpg' &&
    said video-mode-switch '^video mode: recorded .*mode_video_2.mp4' &&
    image "$work/video-mode-switch/mode_photo_001.jpg" 1280x720 JPEG &&
    movie "$work/video-mode-switch/mode_video_1.mp4" 0.8 "aac h264" &&
    movie "$work/video-mode-switch/mode_video_2.mp4" 0.8 "aac h264"
}
check_scan_codes() {
  run scan-codes "file:$root/Pipelines/media/codes.mp4" 5 &&
    said scan-codes '^qr: https://example.org/capture$' &&
    said scan-codes '^upc-e: 01234565$'
}

check_custom_overlay() {
  run custom-overlay --allow-test-pattern picture.jpg &&
    said custom-overlay '^Flash button: Flash (On|Auto)' &&
    said custom-overlay '^Saved the viewfinder with its buttons to viewfinder.png' &&
    said custom-overlay '^Took a 640x480 picture with Test Pattern' &&
    image "$work/custom-overlay/viewfinder.png" 640x480 PNG &&
    image "$work/custom-overlay/picture.jpg" 640x480 JPEG &&
    # The flash button's box covers the top-left corner of the viewfinder (grey over the SMPTE bars'
    # white: darker) and not of the picture, which has the bars as they are.
    local shown taken
    shown=$(convert "$work/custom-overlay/viewfinder.png" -crop 60x20+14+14 -format '%[fx:int(255*mean)]' info:) &&
    taken=$(convert "$work/custom-overlay/picture.jpg" -crop 60x20+14+14 -format '%[fx:int(255*mean)]' info:) &&
    { (( taken - shown >= 25 )) || { echo "      the viewfinder's corner ($shown) is not darker than the picture's ($taken)"; return 1; }; }
}
check_camera_manager() {
  run camera-manager --allow-test-pattern manager.jpg &&
    said camera-manager '^white balance: white-balance-mode=continuous' &&
    said camera-manager '^low light boost: not supported by Test Pattern' &&
    said camera-manager '^focus: not supported by Test Pattern' &&
    said camera-manager '^torch: not supported by Test Pattern' &&
    said camera-manager '^zoom: zoom=2 \(from frame [0-9]+, 0 frame\(s\) before it\)' &&
    said camera-manager '^Took a 1280x720 picture with Test Pattern .*, flash off' &&
    said camera-manager '^Switched to Test Pattern .*\(ball\) and took a 1280x720 picture' &&
    image "$work/camera-manager/switched-manager.jpg" 1280x720 JPEG &&
    image "$work/camera-manager/manager.jpg" 1280x720 JPEG &&
    # Zoomed 2x on the SMPTE bars: the left edge shows the second bar (yellow: red high, blue low), not
    # the first (white).
    local edge
    edge=$(convert "$work/camera-manager/manager.jpg" -crop 1x1+8+100 -format '%[fx:int(255*r)] %[fx:int(255*b)]' info:) &&
    awk -v e="$edge" 'BEGIN { split(e, v, " "); exit !(v[1] > 200 && v[2] < 100) }' ||
    { echo "      the photo's left edge is '$edge' (red blue), expected yellow from the 2x zoom"; return 1; }
}

check_edit_video() {
  run edit-video --no-recording; [[ $? -eq 1 ]] && said edit-video '^Error: No Video Recorded Yet' || return 1
  run edit-video --allow-test-pattern &&
    said edit-video '^Edited (.*/)?edited.mp4: 2\.0[0-9] s \(exact\)' &&
    said edit-video '^Edited .*/edited-1.mp4: 1\.0[0-9] s \(exact\)' &&
    movie "$work/edit-video/edited.mp4" 1.9 "aac h264" && near "$(seconds "$work/edit-video/edited.mp4")" 2 0.034 &&
    movie "$work/edit-video/edited-1.mp4" 0.9 "aac h264" && near "$(seconds "$work/edit-video/edited-1.mp4")" 1 0.034 &&
    cmp -s "$work/edit-video/edited-1.mp4" "$work/edit-video/Videos/edited-1.mp4" || { echo "      the album's copy differs"; return 1; }
}
check_video_thumbnail() {
  run video-thumbnail 2 --allow-test-pattern &&
    said video-thumbnail '^Thumbnail .*thumbnail.jpg: 640x480 at ' &&
    said video-thumbnail '^Video Saved: ' &&
    image "$work/video-thumbnail/thumbnail.jpg" 640x480 JPEG &&
    movie "$work/video-thumbnail/Videos/movie.mp4" 1.8 "h264" &&
    # The frame at half the duration, as FFmpeg decodes it there.
    local half rmse
    half=$(awk -v d="$(ffprobe -v error -select_streams v -show_entries stream=duration -of csv=p=0 "$work/video-thumbnail/movie.mp4")" 'BEGIN { printf "%.3f", d / 2 }') &&
    ffmpeg -v error -y -ss "$half" -i "$work/video-thumbnail/movie.mp4" -frames:v 1 "$work/video-thumbnail/ffmpeg.png" &&
    rmse=$(compare -metric RMSE "$work/video-thumbnail/thumbnail.jpg" "$work/video-thumbnail/ffmpeg.png" null: 2>&1 | sed 's/.*(\(.*\))/\1/'; true) &&
    awk -v r="$rmse" 'BEGIN { exit !(r < 0.05) }' || { echo "      the thumbnail differs from FFmpeg's frame at $half s (RMSE $rmse)"; return 1; }
}
# Seed 003: an empty album has nothing to pick; then the camera source fills it (an edited 480x480
# picture, a 2 s video) and the library source picks them, makes a thumbnail and a 1 s exact trim.
check_photo_library() {
  run photo-library library; [[ $? -eq 1 ]] && said photo-library '^Library: nothing to pick \(the album has no photo \(looked in .*/Pictures\)' || return 1
  run photo-library --allow-test-pattern &&
    said photo-library '^Camera: took a 640x480 picture, saved the 480x480 edit to .*/Pictures/IMG_0001.jpg' &&
    said photo-library '^Camera: recorded 2\.[0-9] s, saved to .*/Videos/photo-library-clip.mp4' &&
    said photo-library '^Library: picked the photo .*/Pictures/IMG_0001.jpg: 480x480' &&
    said photo-library '^Library: picked the video .*/Videos/photo-library-clip.mp4' &&
    said photo-library '^Library: picked by name .*/Videos/photo-library-clip.mp4' &&
    image "$work/photo-library/Pictures/IMG_0001.jpg" 480x480 JPEG &&
    image "$work/photo-library/picked-thumbnail.jpg" 640x480 JPEG &&
    movie "$work/photo-library/Videos/photo-library-clip.mp4" 1.8 "h264" &&
    near "$(seconds "$work/photo-library/picked-trimmed.mp4")" 1 0.034
}
check_camera_roll_app() {
  run camera-roll-app roll; [[ $? -eq 1 ]] && said camera-roll-app '^The camera roll is empty' || return 1
  run camera-roll-app camera --allow-test-pattern &&
    said camera-roll-app '^Saved to the camera roll: .*/Pictures/IMG_0001.jpg' &&
    image "$work/camera-roll-app/Pictures/IMG_0001.jpg" 1280x720 JPEG &&
    run camera-roll-app roll && said camera-roll-app '^Picked .*/Pictures/IMG_0001.jpg: 1280x720' || return 1
  # A camera roll that cannot be written: the save fails, and says so.
  : >"$work/camera-roll-app/blocker"
  (cd "$work/camera-roll-app" && CAPTURE_PICTURES_DIR="$work/camera-roll-app/blocker/Pictures" timeout 120 "$bin/camera-roll-app" camera --allow-test-pattern >>out.txt 2>&1)
  [[ $? -eq 1 ]] && said camera-roll-app '^Save failed: Failed to save image \(cannot write to '
}
# The preview in the application's own X11 window, under an X server of its own (xvfb-run): the
# window's pixels are checked gravity by gravity in scripts/test-window-preview.py; here, the story runs.
check_window_preview() {
  run_in_x window-preview --input test-pattern --size 640x480 --seconds 1 &&
    said window-preview '^window 0x[0-9a-f]+ 640x480' &&
    said window-preview '^showing view 640x480 gravity resize-aspect video 0 60 640 360' &&
    said window-preview '^stopped'
}
# The same preview in a GTK 4 window (CaptureGTK's view); its pixels are checked in
# scripts/test-window-preview.py.
check_gtk_preview() {
  run_in_x gtk-preview --input test-pattern --size 640x480 --seconds 1 &&
    said gtk-preview '^showing 640x480' &&
    said gtk-preview '^view 640x480 gravity resize-aspect video 0 60 640 360' &&
    said gtk-preview '^shown [1-9][0-9]* frames'
}
# The desktop camera app runs on the test pattern until it is stopped; its frame log shows the preview
# ran. Its screens, keys and files are checked in scripts/test-camera-app.py, by real X input.
check_camera_app() {
  mkdir -p "$work/camera-app"
  (cd "$work/camera-app" && CAPTURE_PICTURES_DIR="$work/camera-app/Pictures" CAPTURE_VIDEOS_DIR="$work/camera-app/Videos" GSK_RENDERER=cairo GTK_A11Y=none \
    xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" timeout 6 "$bin/camera-app" --input test-pattern --output-dir "$work/camera-app/work" \
    --log-frames "$work/camera-app/frames.log" >>out.txt 2>&1)
  [[ $? -eq 124 ]] || { echo "      camera-app ended before it was stopped: $(tail -3 "$work/camera-app/out.txt")"; return 1; }
  local frames
  frames=$(grep -c . "$work/camera-app/frames.log" 2>/dev/null || echo 0)
  ((frames >= 30)) || { echo "      the preview logged $frames frames in 6 s"; return 1; }
}
# run_in_x NAME ARGS...: `run`, with a virtual X server for the example's windows.
run_in_x() {
  local name=$1; shift
  mkdir -p "$work/$name"
  (cd "$work/$name" && CAPTURE_PICTURES_DIR="$work/$name/Pictures" CAPTURE_VIDEOS_DIR="$work/$name/Videos" GSK_RENDERER=cairo \
    timeout 120 xvfb-run -a -s "-screen 0 1280x800x24 -nolisten tcp" "$bin/$name" "$@" >>out.txt 2>&1)
}

for dir in "$root"/examples/*/; do
  name=$(basename "$dir")
  check="check_${name//-/_}"
  if ! declare -F "$check" >/dev/null; then
    echo "FAIL  examples/$name: scripts/run-examples.sh has no check for it"
    failed=$((failed + 1))
    continue
  fi
  if [[ ! -x "$bin/$name" ]]; then
    echo "FAIL  examples/$name: not built ($bin/$name)"
    failed=$((failed + 1))
    continue
  fi
  if report=$($check 2>&1); then
    passed=$((passed + 1))
    echo "ok    examples/$name"
  else
    failed=$((failed + 1))
    echo "FAIL  examples/$name"
    [[ -n "$report" ]] && echo "$report"
    sed 's/^/      | /' "$work/$name/out.txt" 2>/dev/null | tail -20
  fi
done
echo "examples: $passed passed, $failed failed"
((failed == 0))
