#!/usr/bin/python3
"""Draws a `capture soak --json REPORT.json` run: resident memory, open descriptors and threads per cycle.

    scripts/plot-soak.py REPORT.json OUT.png

For developers (`make soak` runs it when matplotlib is there): not part of `make test`, and its
dependency is not in scripts/install-deps.sh (`sudo apt-get install python3-matplotlib`).
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 64
    with open(sys.argv[1]) as handle:
        report = json.load(handle)
    samples = report["samples"]
    cycles = [s["cycle"] for s in samples]
    figure, axes = plt.subplots(3, 1, figsize=(10, 8), sharex=True)
    axes[0].plot(cycles, [s["residentKiB"] / 1024 for s in samples], color="tab:blue", label="resident")
    held = [(s["cycle"], s["heldKiB"] / 1024) for s in samples if s.get("heldKiB") is not None]
    if held:
        axes[0].plot([c for c, _ in held], [m for _, m in held], color="tab:purple", label="held (after malloc_trim)")
        axes[0].legend(loc="lower right")
    axes[0].set_ylabel("memory (MiB)")
    axes[1].plot(cycles, [s["descriptors"] for s in samples], color="tab:green")
    axes[1].set_ylabel("open descriptors")
    axes[2].plot(cycles, [s["threads"] for s in samples], color="tab:red")
    axes[2].set_ylabel("threads")
    axes[2].set_xlabel("cycle (photo, to video, 1 s recorded with a camera switch, to photo, photo, output added and removed)")
    for axis in axes:
        axis.grid(alpha=0.3)
    minutes = samples[-1]["seconds"] / 60 if samples else 0
    figure.suptitle(f"capture soak: {len(samples)} cycles in {minutes:.1f} min, {report['movies']} movies "
                    f"({len(report['brokenMovies'])} broken), {report.get('switches', 0)} camera switches, {len(report['failures'])} failed steps")
    figure.tight_layout()
    figure.savefig(sys.argv[2], dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
