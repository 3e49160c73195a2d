#!/usr/bin/env bash
# The API reference with DocC, from the toolchain's own `docc` (no package plugin):
#   scripts/make-docs.sh           symbol graphs, the doc-comment check, then static HTML in .build/docs
#                                  (a DocC warning, such as a link that does not resolve, fails it)
#   scripts/make-docs.sh --check   symbol graphs and the doc-comment check only
# Each module (Capture, CaptureControl, PipelineFile, GStreamer, Barcodes, CaptureGTK) is rendered with its catalog
# (Sources/MODULE/MODULE.docc: the landing page and articles) to .build/docs/MODULE, for static hosting
# under /MODULE; .build/docs/index.html links them. Serve the folder to read it:
#   python3 -m http.server -d .build/docs -b 127.0.0.1 8000   ->  http://127.0.0.1:8000/
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
SWIFT=${SWIFT:-swift}
modules=(Capture CaptureControl PipelineFile GStreamer Barcodes CaptureGTK)
graphs=.build/symbol-graphs
mkdir -p "$graphs"
# The same build as `make build-debug` (which writes the symbol graphs too), so after it this is a no-op.
"$SWIFT" build --build-tests -Xswiftc -emit-symbol-graph -Xswiftc -emit-symbol-graph-dir -Xswiftc "$root/$graphs" >&2
python3 scripts/check-doc-comments.py "$graphs" "${modules[@]}"
[[ "${1:-}" == "--check" ]] && exit 0

docc=$(command -v docc || true)
[[ -n "$docc" ]] || docc="$(dirname "$(readlink -f "$(command -v "$SWIFT")")")/docc"
out=.build/docs
mkdir -p "$out"
for module in "${modules[@]}"; do
  own="$graphs/by-module/$module"
  mkdir -p "$own"
  rm -f "$own"/*.symbols.json
  cp "$graphs/$module.symbols.json" "$own/"
  for extension in "$graphs/$module@"*.symbols.json; do [[ -e "$extension" ]] && cp "$extension" "$own/"; done
  "$docc" convert "Sources/$module/$module.docc" --additional-symbol-graph-dir "$own" \
    --fallback-display-name "$module" --fallback-bundle-identifier "org.capture.$module" --warnings-as-errors \
    --output-path "$out/$module" --transform-for-static-hosting --hosting-base-path "$module" >&2
  echo "make-docs: $out/$module/documentation/$(echo "$module" | tr '[:upper:]' '[:lower:]')/index.html"
done
{
  echo '<!doctype html><meta charset="utf-8"><title>Capture API reference</title>'
  echo '<h1>Capture API reference</h1><ul>'
  for module in "${modules[@]}"; do
    lower=$(echo "$module" | tr '[:upper:]' '[:lower:]')
    echo "<li><a href=\"$module/documentation/$lower/\">$module</a></li>"
  done
  echo '</ul>'
} > "$out/index.html"
echo "make-docs: $out/index.html"
