#!/usr/bin/python3
"""Draws the preview frame intervals of one photo -> video -> photo cycle of each contender of
`capture bench --only mode-switch --plot-data DATA.json` (ours, camerabin, rebuild) as a PNG.

    scripts/plot-mode-switch.py DATA.json OUT.png

For developers only: not part of `make test`, and its dependency is not in scripts/install-deps.sh.
It needs matplotlib from Debian (`sudo apt-get install python3-matplotlib`), hence /usr/bin/python3
rather than whatever python3 comes first on the PATH.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

COLOURS = {"ours": "tab:green", "camerabin": "tab:orange", "rebuild": "tab:red"}


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__.strip().splitlines()[2].strip(), file=sys.stderr)
        return 2
    with open(sys.argv[1]) as handle:
        data = json.load(handle)
    contenders = data["contenders"]
    interval = data["frameInterval"]
    top = max(max((p["arrival"] for p in c["cycle"]["series"]), default=0) for c in contenders)
    top = max(top, max(max((p["timestamp"] for p in c["cycle"]["series"]), default=0) for c in contenders))
    figure, axes = plt.subplots(len(contenders), 1, figsize=(11, 3.2 * len(contenders)), sharex=True, sharey=True)
    for axis, contender in zip(axes, contenders):
        cycle = contender["cycle"]
        times = [p["t"] / 1000 for p in cycle["series"]]
        colour = COLOURS.get(contender["name"], "tab:blue")
        axis.plot(times, [p["arrival"] for p in cycle["series"]], color=colour, linewidth=1.2,
                  marker=".", markersize=3, label="by arrival (ContinuousClock)")
        axis.plot(times, [p["timestamp"] for p in cycle["series"]], color="black", linewidth=0,
                  marker="x", markersize=3.5, label="by buffer timestamp")
        axis.axhline(interval, color="grey", linewidth=0.8, linestyle=":")
        axis.text(0.002, interval, f" {interval:.1f} ms", color="grey", fontsize=7, va="bottom",
                  transform=axis.get_yaxis_transform())
        for event in cycle["events"]:
            axis.axvline(event["t"] / 1000, color="tab:blue", linewidth=0.6, alpha=0.5)
        # Labels of events closer than 60 ms share one line of text.
        groups = []
        for event in cycle["events"]:
            if groups and event["t"] - groups[-1][0] < 60:
                groups[-1][1].append(event["label"])
            else:
                groups.append((event["t"], [event["label"]]))
        for index, (t, labels) in enumerate(groups):
            axis.text(t / 1000, 0.97 - 0.09 * (index % 2), " " + ", ".join(labels), color="tab:blue", fontsize=7,
                      va="top", transform=axis.get_xaxis_transform())
        axis.set_title(f"{contender['name']}: {contender['description']}\nlargest gap {cycle['arrivalGap']:.1f} ms by arrival, "
                       f"{cycle['timestampGap']:.1f} ms by timestamps, {cycle['framesLost']} frames lost"
                       + (f" ({cycle['driverDrops']} skipped by the driver)" if cycle.get("driverDrops") else ""),
                       fontsize=9, loc="left")
        axis.set_ylabel("frame interval (ms)")
        axis.set_ylim(0, top * 1.25 + 5)
        axis.grid(axis="y", alpha=0.3)
        axis.legend(loc="upper right", fontsize=7, bbox_to_anchor=(1.0, 0.8))
    axes[-1].set_xlabel("time since the cycle began (s)")
    figure.suptitle(f"photo -> video (1 s) -> photo, {data['input']} {data['format']}: preview frame intervals, "
                    f"one cycle each (the median one), {data['date']}", fontsize=10)
    figure.tight_layout()
    figure.savefig(sys.argv[2], dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
