"""Chart of a side-by-side run: per-cell speedup of ours against every peer lane.

    python benches/plot_side_by_side.py side_by_side.json OUT.png

Reads the JSON that `benches/side_by_side.py --json` writes and draws, per suite, one group
of bars per cell (one bar per peer: peer median / ours median, log scale; above 1 means ours
is faster), with the suite's geometric mean per peer in the panel title. matplotlib is not a
dependency of the project; install it once with `pip install matplotlib`.
"""

from __future__ import annotations

import json
import math
import pathlib
import sys

COLORS = {
    "eager_no_grad": "#4c72b0",
    "eager_inference_mode": "#8fb0d9",
    "jit_script": "#55a868",
    "torch_compile": "#c44e52",
}

TICKS = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python benches/plot_side_by_side.py side_by_side.json OUT.png", file=sys.stderr)
        return 2
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("plot_side_by_side.py needs matplotlib, which the project does not install: "
              "run `pip install matplotlib` (in .venv: .venv/bin/python -m pip install matplotlib)",
              file=sys.stderr)
        return 3

    source, out = pathlib.Path(argv[0]), pathlib.Path(argv[1])
    data = json.loads(source.read_text())
    labels = {lane["name"]: lane["label"] for lane in data["lanes"]}
    suites = [(name, suite) for name, suite in data["suites"].items() if suite["cells"]]
    if not suites:
        print(f"{source}: no cells to draw", file=sys.stderr)
        return 1
    peers = [lane["name"] for lane in data["lanes"] if lane["name"] != "ours"
             and any(f"{lane['name']}/ours" in cell["ratios"] for _, suite in suites for cell in suite["cells"])]

    # One panel per suite; cell ids go on two lines (chain, shape), rotated where they would
    # overlap, with room made for them.
    width = max(12.0, min(20.0, 3 + 0.28 * max(len(suite["cells"]) for _, suite in suites)))
    char = 0.06  # inches per character at fontsize 7
    rotated, label_inches = [], []
    for _, suite in suites:
        slot = (width - 1.5) / len(suite["cells"])
        longest = max(len(line) for cell in suite["cells"] for line in cell["id"].split("/"))
        rotated.append(longest * char > 0.95 * slot)
        label_inches.append(0.15 + char * max(len(cell["id"]) for cell in suite["cells"]) if rotated[-1] else 0.4)
    # Laid out in inches: a header, then per panel its title, the axes and the tick labels.
    header, title, plot, gap, left, right = 0.55, 0.3, 2.2, 0.15, 0.75, 0.2
    height = header + sum(title + plot + extra + gap for extra in label_inches)
    fig = plt.figure(figsize=(width, height))
    axes, top = [], height - header
    for extra in label_inches:
        top -= title + plot
        axes.append(fig.add_axes([left / width, top / height, (width - left - right) / width, plot / height]))
        top -= extra + gap
    values = [cell["ratios"][f"{p}/ours"] for _, suite in suites for cell in suite["cells"]
              for p in peers if f"{p}/ours" in cell["ratios"]]
    low, high = min(values + [1.0]), max(values + [1.0])
    for axis, turn, (name, suite) in zip(axes, rotated, suites):
        cells = suite["cells"]
        bar = 0.8 / len(peers)
        for i, peer in enumerate(peers):
            key = f"{peer}/ours"
            xs = [c + (i - (len(peers) - 1) / 2) * bar for c in range(len(cells))]
            ys = [cell["ratios"].get(key, math.nan) for cell in cells]
            axis.bar(xs, [y - 1 if y == y else 0 for y in ys], bar, bottom=1, color=COLORS.get(peer, None),
                     label=f"{labels.get(peer, peer)} / ours", linewidth=0)
        axis.set_yscale("log")
        axis.set_ylim(low / 1.25, high * 1.25)
        axis.axhline(1.0, color="black", linewidth=0.8)
        axis.set_xticks(range(len(cells)))
        axis.set_xticklabels([cell["id"] if turn else cell["id"].replace("/", "\n") for cell in cells],
                             rotation=90 if turn else 0, fontsize=7)
        axis.set_xlim(-0.6, len(cells) - 0.4)
        axis.yaxis.set_major_locator(matplotlib.ticker.FixedLocator(TICKS))
        axis.yaxis.set_major_formatter(matplotlib.ticker.FuncFormatter(lambda v, _: f"{v:g}x"))
        axis.yaxis.set_minor_formatter(matplotlib.ticker.NullFormatter())
        axis.grid(axis="y", which="major", linewidth=0.4, alpha=0.6)
        means = ", ".join(f"{labels.get(p, p)} {suite['geomean'][f'{p}/ours']:.2f}x"
                          for p in peers if f"{p}/ours" in suite["geomean"])
        title = f"{name}: speedup of ours (peer time / ours), geomean {means}"
        scaling = [row["speedup"]["ours"] for row in suite.get("speedups", []) if row["speedup"].get("ours")]
        if scaling:
            # The scale suite: cells at several thread counts, and ours' own 1 -> N speedup.
            title += (f"; ours 1 -> {suite['speedups'][0]['threads']} threads: geomean "
                      f"{math.prod(scaling) ** (1 / len(scaling)):.2f}x, min {min(scaling):.2f}x")
        axis.set_title(title, fontsize=9, loc="left")
        axis.set_ylabel("peer / ours (log)", fontsize=8)
        axis.tick_params(axis="y", labelsize=7)
    handles, names = axes[0].get_legend_handles_labels()
    fig.legend(handles, names, fontsize=8, ncol=len(peers), loc="upper center", bbox_to_anchor=(0.5, 1 - 0.22 / height), frameon=False)
    machine = data.get("machine", {})
    fig.text(0.5, 1 - 0.05 / height, 
        f"rextio-torch side by side, {data.get('started', '')[:10]}: {machine.get('cpu_model', '?')}, "
        f"{machine.get('cpu_count', '?')} cores (shared), torch {machine.get('torch', '?')}, "
        f"{data.get('settings', {}).get('threads', {}).get('intra_op', 1)} thread(s) (scale: per cell), "
        f"commit {str(machine.get('commit', '?'))[:10]}; boundary-inclusive medians",
        fontsize=9, ha="center", va="top",
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=72)
    print(f"wrote {out} ({out.stat().st_size // 1024} KiB)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
