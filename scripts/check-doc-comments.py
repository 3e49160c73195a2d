#!/usr/bin/env python3
"""Fails when a public symbol has no doc comment.

    scripts/check-doc-comments.py SYMBOL_GRAPH_DIR MODULE...

Reads the symbol graphs the Swift compiler writes (-emit-symbol-graph) for each MODULE and lists every
public or open symbol declared in the sources (synthesized ones, which have no source location, are
left out: `==` of an Equatable struct, `init(rawValue:)` of a String enum ...) that has no doc comment,
as FILE:LINE: KIND NAME. Exit 0 when there is none, 1 otherwise, 2 on a usage error or unreadable graph.
"""
import json
import os
import sys


def undocumented(directory, module):
    found = []
    for name in sorted(os.listdir(directory)):
        if not name.endswith(".symbols.json") or not (name == module + ".symbols.json" or name.startswith(module + "@")):
            continue
        with open(os.path.join(directory, name), encoding="utf-8") as handle:
            graph = json.load(handle)
        for symbol in graph.get("symbols", []):
            if symbol.get("accessLevel") not in ("public", "open") or symbol.get("docComment"):
                continue
            location = symbol.get("location")
            if not location:
                continue
            path = location.get("uri", "").replace("file://", "")
            line = location.get("position", {}).get("line", 0) + 1
            kind = symbol.get("kind", {}).get("displayName", "symbol").lower()
            found.append((path, line, kind, ".".join(symbol.get("pathComponents", []))))
    return found


def main(arguments):
    if len(arguments) < 2:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    directory, modules = arguments[0], arguments[1:]
    missing = []
    for module in modules:
        if not any(n == module + ".symbols.json" for n in os.listdir(directory)):
            print(f"check-doc-comments: no symbol graph for {module} in {directory}", file=sys.stderr)
            return 2
        missing += undocumented(directory, module)
    root = os.getcwd() + os.sep
    for path, line, kind, name in sorted(set(missing)):
        print(f"{path.replace(root, '')}:{line}: {kind} {name} has no doc comment")
    if missing:
        print(f"check-doc-comments: {len(set(missing))} public symbols without a doc comment in {', '.join(modules)}", file=sys.stderr)
        return 1
    print(f"check-doc-comments: every public symbol of {', '.join(modules)} has a doc comment")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
