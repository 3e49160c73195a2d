#!/usr/bin/env bash
# `make tsan`: the Swift suites built with ThreadSanitizer and run with scripts/tsan.supp. Fails when
# ThreadSanitizer reports anything, or the run does not finish (a crash); lists failed tests without
# failing on them. Not part of `make test` (docs/architecture.md, "ThreadSanitizer").
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
# log_path: ThreadSanitizer writes its reports to files of their own (tsan-report.PID), whole, apart
# from the tests' output.
rm -f "$scratch"/tsan-report.*
export TSAN_OPTIONS="suppressions=$PWD/scripts/tsan.supp halt_on_error=0 second_deadlock_stack=1 history_size=4 log_path=$PWD/$scratch/tsan-report"
export CAPTURE_BIN="$capture_bin"
# One test at a time: the code runs several times slower under ThreadSanitizer, and tests that bound a
# duration, a frame gap or a count of drops missed their bounds when they also shared two cores.
# Through a pipe: written straight to the file, swift test's own lines landed in the middle of the
# test process's. The xUnit file is written when the run finishes, with each failed test.
rm -f "$scratch"/tsan*.xml
"$swift" test --skip-build --sanitize=thread --scratch-path "$scratch" --no-parallel \
    --xunit-output "$scratch/tsan.xml" "$@" 2>&1 | cat > "$log"
status=${PIPESTATUS[0]}
results=$scratch/tsan-swift-testing.xml

reports=$(cat "$scratch"/tsan-report.* 2>/dev/null | grep -c '^WARNING: ThreadSanitizer')
cat "$scratch"/tsan-report.* 2>/dev/null | grep -E '^SUMMARY: ThreadSanitizer|^ThreadSanitizer:'
echo "tsan: $reports ThreadSanitizer report(s) (in $scratch/tsan-report.*); swift test exit status $status; its output is in $log"
if [ ! -f "$results" ]; then
    echo "tsan: the test run did not finish (no $results): a crash, see $log"
    exit 1
fi
failures=$(grep -c '<failure' "$results")
if [ "$failures" -gt 0 ]; then
    # At ThreadSanitizer's speed a test can miss a timing bound even one at a time, on a busy machine;
    # a failed test is listed, not counted: `make test` is where tests count.
    echo "tsan: $failures failed expectation(s), not counted here:"
    awk -F'"' '/<testcase /{for (i = 1; i < NF; i++) if ($i ~ / name=$/) name = $(i + 1)} /<failure /{print "  " name ": " $2}' "$results"
fi
[ "$reports" -eq 0 ] && { [ "$status" -eq 0 ] || [ "$failures" -gt 0 ]; }
