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
