#!/usr/bin/env bash
# timed.sh NAME COMMAND...: runs COMMAND and appends "NAME SECONDS exit STATUS" to .build/test-times.txt,
# which `make test` prints at its end (each part's time, also when one failed).
name=$1; shift
started=$(date +%s)
"$@"
status=$?
mkdir -p .build
printf '%-10s %5d s  exit %d\n' "$name" "$(( $(date +%s) - started ))" "$status" >> .build/test-times.txt
exit $status
