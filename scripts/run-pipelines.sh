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
  started=$(date +%s.%N)
  if log=$(timeout 300 "$bin" "${args[@]}" 2>&1); then
    passed=$((passed + 1))
    printf 'ok    %s (%.1f s)\n' "$file" "$(echo "$(date +%s.%N) - $started" | bc)"
  else
    status=$?
    failed=$((failed + 1))
    failures+=("$file")
    printf 'FAIL  %s (exit %d)\n%s\n' "$file" "$status" "$log" | sed 's/^/      /'
  fi
done < <(find Pipelines -name '*.pipeline' | sort)
echo "pipelines: $passed passed, $failed failed"
((failed == 0))
