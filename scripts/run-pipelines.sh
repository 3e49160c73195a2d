#!/usr/bin/env bash
# Runs every .pipeline under Pipelines/ with the virtual devices and fails if any fails.
# Files without a scenario (no `start` action) run for a few seconds, then stop gracefully.
set -uo pipefail
bin=${1:-.build/release/capture}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
passed=0 failed=0 failures=()
while IFS= read -r file; do
  args=(run "$file" --output-dir "$out/$(basename "$file" .pipeline)")
  grep -qE '^[[:space:]]*start[[:space:]]*(#.*)?$' "$file" || args+=(--duration 3)
  mkdir -p "$out/$(basename "$file" .pipeline)"
  started=$(date +%s%N)
  if log=$(timeout 300 "$bin" "${args[@]}" 2>&1); then
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
