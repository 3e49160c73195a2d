#!/usr/bin/env bash
# Installs the capture tool like a Linux tool: the binary, the manual page and the shell completions
# (both made by the binary itself from its --help text and option parsers), the example .pipeline files
# and the documentation. The binary is capture only: capture-dev, the developer executable that
# `capture bench` and `capture soak` run in, is not installed.
#   scripts/install.sh BINARY PREFIX [DESTDIR]
# Files go under DESTDIR/PREFIX (DESTDIR is where a package is staged; empty for a real install).
# Prints every file it installs, one per line (the list `make uninstall` and the package use).
set -euo pipefail
binary=$1 prefix=$2 destdir=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)
[[ -x "$binary" ]] || { echo "install: no executable at $binary (build first)" >&2; exit 66; }
[[ "$prefix" == /* ]] || { echo "install: PREFIX must be an absolute path, not '$prefix'" >&2; exit 64; }
base="$destdir$prefix"

put() {  # put MODE SOURCE-FILE TARGET-PATH (relative to PREFIX)
  install -D -m "$1" "$2" "$base/$3"
  echo "$prefix/$3"
}
made() {  # made MODE TARGET-PATH COMMAND...: the output of COMMAND, installed at TARGET-PATH
  local mode=$1 target=$2; shift 2
  local scratch; scratch=$(mktemp)
  "$@" >"$scratch"
  put "$mode" "$scratch" "$target"
  rm -f "$scratch"
}

put 0755 "$binary" bin/capture
manual=$(mktemp)
"$binary" manual | gzip -9n >"$manual"
put 0644 "$manual" share/man/man1/capture.1.gz
rm -f "$manual"
made 0644 share/bash-completion/completions/capture "$binary" completions bash
made 0644 share/zsh/vendor-completions/_capture "$binary" completions zsh
made 0644 share/fish/vendor_completions.d/capture.fish "$binary" completions fish
while IFS= read -r file; do
  put 0644 "$root/$file" "share/capture/$file"
done < <(cd "$root" && find Pipelines -type f \( -name '*.pipeline' -o -name '*.png' -o -name '*.mp4' \) | sort)
for doc in README.md CHANGELOG.md CONTRIBUTING.md docs/cli.md docs/pipeline-format.md docs/architecture.md; do
  [[ -f "$root/$doc" ]] && put 0644 "$root/$doc" "share/doc/capture/$(basename "$doc")"
done
