#!/usr/bin/env bash
# Runs every .pipeline under Pipelines/ with the virtual devices and fails if any fails.
# Files without a scenario (no `start` action) run for a few seconds, then stop gracefully.
set -uo pipefail
bin=${1:-.build/release/capture}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
passed=0 failed=0 failures=()
# check_NAME DIR: what a file's run must leave in DIR (and in its album, DIR/Pictures and DIR/Videos).
check_save_to_album() {
  [[ "$(identify -format '%wx%h %m' "$1/picture.jpg")" == "720x720 JPEG" ]] &&
    [[ "$(identify -format '%wx%h %m' "$1/Pictures/IMG_0001.jpg")" == "720x720 JPEG" ]] &&
    [[ "$(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$1/Videos/movie.mp4" | sort | tr '\n' ' ')" == "aac h264 " ]] &&
    cmp -s "$1/movie.mp4" "$1/Videos/movie.mp4"
}
# Seed 003's library flow: the picked video (the album's copy of the recording) gave a 640x480
# thumbnail and a 1.5 s trimmed copy with sound, and the album holds the photo and the video.
check_library_flow() {
  [[ "$(identify -format '%wx%h %m' "$1/picked-thumbnail.jpg")" == "640x480 JPEG" ]] &&
    [[ "$(identify -format '%wx%h %m' "$1/Pictures/IMG_0001.jpg")" == "640x480 JPEG" ]] &&
    cmp -s "$1/library-clip.mp4" "$1/Videos/library-clip.mp4" &&
    [[ "$(ffprobe -v error -show_entries stream=codec_name -of csv=p=0 "$1/picked-trimmed.mp4" | sort | tr '\n' ' ')" == "aac h264 " ]] &&
    awk -v d="$(ffprobe -v error -show_entries format=duration -of csv=p=0 "$1/picked-trimmed.mp4")" 'BEGIN { exit !(d > 1.4 && d < 1.6) }'
}
# The recording that shared the stream's encoder: H.264 at the session's size, every frame of its
# 4 s (the stream left halfway), decoded without an error.
check_stream_and_record() {
  [[ "$(ffprobe -v error -select_streams v:0 -show_entries stream=codec_name,width,height -of csv=p=0 "$1/movie.mp4")" == "h264,640,480" ]] &&
    (( $(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1/movie.mp4") >= 110 )) &&
    [[ -z "$(ffmpeg -nostdin -v error -i "$1/movie.mp4" -f null - 2>&1)" ]]
}
# Pre-roll: started at 3 s with 2 s of pre-roll and stopped 2 s later, the clip holds more than the 2 s.
check_pre_roll() {
  (( $(ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1/clip.mp4") >= 90 ))
}
# Trims: the default is frame-exact (1-3 s of the recording: 2 s within a frame at 30 fps); fast=true
# copies from a keyframe, so its copy holds at least the 1 s asked for.
probe_duration() { ffprobe -v error -select_streams v:0 -show_entries stream=duration -of csv=p=0 "$1"; }
check_edit_video() {
  awk -v d="$(probe_duration "$1/trimmed.mp4")" 'BEGIN { exit !(d > 1.966 && d < 2.034) }' &&
    awk -v d="$(probe_duration "$1/trimmed-again.mp4")" 'BEGIN { exit !(d >= 0.966) }'
}
# Orientation (issue 29): the photos keep the camera's 640x480 pixels with EXIF Orientation 6 (rotate
# 90 CW) and 5 (mirror, rotate 270 CW), the burned one is turned (480x640, orientation 1) and equals the
# mirrored one as a viewer shows it (ImageMagick's -auto-orient; the noise corner cut off); the MP4s
# keep 640x480 with a display matrix of -90 (ffprobe: rotation counter-clockwise) or 90 (mirrored:
# the mirror in the pixels), the burned one is 480x640 with none, and FFmpeg's player rotation of the
# tagged one shows what the burned one holds.
rmse_top() {
  convert "$1" -crop 480x400+0+0 +repage "$3/a.png" && convert "$2" -crop 480x400+0+0 +repage "$3/b.png" &&
    compare -metric RMSE "$3/a.png" "$3/b.png" null: 2>&1 | sed 's/.*(\(.*\))/\1/'
}
check_orientation_tags() {
  local d=$1
  [[ "$(exiftool -n -s3 -Orientation "$d/tagged.jpg") $(identify -format %wx%h "$d/tagged.jpg")" == "6 640x480" ]] &&
    [[ "$(exiftool -n -s3 -Orientation "$d/mirrored.jpg") $(identify -format %wx%h "$d/mirrored.jpg")" == "5 640x480" ]] &&
    [[ "$(exiftool -n -s3 -Orientation "$d/burned.jpg") $(identify -format %wx%h "$d/burned.jpg")" == "1 480x640" ]] &&
    convert "$d/mirrored.jpg" -auto-orient "$d/shown.png" &&
    awk -v e="$(rmse_top "$d/shown.png" "$d/burned.jpg" "$d")" 'BEGIN { exit !(e < 0.02) }' &&
    [[ "$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height:stream_side_data=rotation -of csv=p=0 "$d/tagged.mp4" | xargs)" == "640,480,-90" ]] &&
    [[ "$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height:stream_side_data=rotation -of csv=p=0 "$d/mirrored.mp4" | xargs)" == "640,480,90" ]] &&
    [[ "$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height:stream_side_data=rotation -of csv=p=0 "$d/burned.mp4" | xargs)" == "480,640" ]] &&
    ffmpeg -nostdin -v error -y -i "$d/tagged.mp4" -frames:v 1 "$d/tagged.png" && ffmpeg -nostdin -v error -y -i "$d/burned.mp4" -frames:v 1 "$d/burned.png" &&
    [[ "$(identify -format %wx%h "$d/tagged.png")" == "480x640" ]] &&
    awk -v e="$(rmse_top "$d/tagged.png" "$d/burned.png" "$d")" 'BEGIN { exit !(e < 0.1) }'
}
while IFS= read -r file; do
  # The saved photos album of a run is its output folder's Pictures and Videos, never the user's.
  export CAPTURE_PICTURES_DIR="$out/$(basename "$file" .pipeline)/Pictures" CAPTURE_VIDEOS_DIR="$out/$(basename "$file" .pipeline)/Videos"
  args=(run "$file" --output-dir "$out/$(basename "$file" .pipeline)")
  grep -qE '^[[:space:]]*start[[:space:]]*(#.*)?$' "$file" || args+=(--duration 3)
  mkdir -p "$out/$(basename "$file" .pipeline)"
  started=$(date +%s%N)
  check="check_$(basename "$file" .pipeline | tr '-' '_')"
  if log=$(timeout 300 "$bin" "${args[@]}" 2>&1) &&
     { ! declare -F "$check" >/dev/null || $check "$out/$(basename "$file" .pipeline)" || { log+=$'\n'"$check: the files it left are not right"; false; }; }; then
    passed=$((passed + 1))
    elapsed=$(( ($(date +%s%N) - started) / 100000000 ))
    printf 'ok    %s (%d.%d s)\n' "$file" $((elapsed / 10)) $((elapsed % 10))
  else
    status=$?
    failed=$((failed + 1))
    failures+=("$file")
    printf 'FAIL  %s (exit %d)\n%s\n' "$file" "$status" "$log" | sed 's/^/      /'
  fi
done < <(find Pipelines -name '*.pipeline' | sort)
echo "pipelines: $passed passed, $failed failed"
((failed == 0))
