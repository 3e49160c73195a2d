#!/usr/bin/env bash
# `make tsan`: the Swift suites built with ThreadSanitizer and run with scripts/tsan.supp. Fails when
# ThreadSanitizer reports anything, or a test fails. Not part of `make test` (docs/architecture.md,
# "ThreadSanitizer").
#
# usage: scripts/tsan.sh CAPTURE_BIN [swift test arguments ...]
#   CAPTURE_BIN: the release CLI the CLI suites run (it need not be sanitized).
set -u
cd "$(dirname "$0")/.."

capture_bin=$(realpath "${1:?usage: scripts/tsan.sh CAPTURE_BIN [swift test arguments]}")
shift
swift=${SWIFT:-swift}
# Its own scratch path: the sanitized build does not replace the normal debug build in .build.
scratch=.build/tsan
log=$scratch/tsan.log

"$swift" build --build-tests --sanitize=thread --scratch-path "$scratch" || exit 1

# G_SLICE=always-malloc: GLib 2.74 hands out small blocks (GstBuffer structures among them) from slabs
# of its own, and a block freed on one thread and handed out again on another looks, to
# ThreadSanitizer, like one object written by two threads; with malloc and free it sees each block's
# lifetime.
# SWIFT_BACKTRACE=enable=no: on a crash ThreadSanitizer prints the stacks; Swift's backtracer would
# first stop the other threads, which ThreadSanitizer's runtime does not survive.
export G_SLICE=always-malloc
export SWIFT_BACKTRACE=enable=no
export TSAN_OPTIONS="suppressions=$PWD/scripts/tsan.supp halt_on_error=0 second_deadlock_stack=1 history_size=4"
export CAPTURE_BIN="$capture_bin"
# One test at a time: the code runs several times slower under ThreadSanitizer, and tests that bound a
# duration, a frame gap or a count of drops missed their bounds when they also shared two cores.
# Through a pipe: written straight to the file, swift test's own lines landed in the middle of the
# test process's.
"$swift" test --skip-build --sanitize=thread --scratch-path "$scratch" --no-parallel "$@" 2>&1 | cat > "$log"
status=${PIPESTATUS[0]}

# A report also makes the exit status non-zero (ThreadSanitizer has the test process exit with 66), as
# does a failed test or a crash: the status decides, the lines printed below say why.
reports=$(grep -c '^WARNING: ThreadSanitizer' "$log")
grep -E '^SUMMARY: ThreadSanitizer|^ThreadSanitizer: reported' "$log"
grep -E '^✘ Test .* recorded an issue' "$log"
grep -m1 -E '^(✔|✘) Test run with' "$log"
echo "tsan: $reports ThreadSanitizer report(s); swift test exit status $status; the whole output is in $log"
[ "$status" -eq 0 ] && [ "$reports" -eq 0 ]
