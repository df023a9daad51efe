"""Markdown tables of a side-by-side run (benches/side_by_side.py --json), as docs/benchmarks.md
shows them: per suite, the medians of every lane per cell, eager/ours, torch.compile's first
call, then the geometric means per family.

    python benches/side_by_side_report.py docs/data/side_by_side.json
"""

import json
import sys

LANES = [
    ("eager_no_grad", "eager"),
    ("eager_inference_mode", "inference_mode"),
    ("jit_script", "jit.script"),
    ("torch_compile", "torch.compile"),
    ("ours", "ours"),
]
PEERS = ["eager_no_grad", "eager_inference_mode", "jit_script", "torch_compile"]


def fmt_us(lane: dict | None) -> str:
    if not lane or "median_us" not in lane:
        return "-"
    return f"{lane['median_us']:.2f}"


def main(path: str) -> None:
    run = json.load(open(path))
    for suite, data in run["suites"].items():
        present = [(key, label) for key, label in LANES if any(key in c["lanes"] for c in data["cells"])]
        print(f"#### {suite}\n")
        header = ["cell", "shape"] + [label for _, label in present] + ["eager/ours"]
        compiled = any(c.get("torch_compile_first_call_s") is not None for c in data["cells"])
        if compiled:
            header.append("torch.compile 1st call")
        print("| " + " | ".join(header) + " |")
        print("|---|---|" + "---:|" * (len(header) - 2))
        for c in data["cells"]:
            row = [c["id"], c["shape"]] + [fmt_us(c["lanes"].get(key)) for key, _ in present]
            ratio = c["ratios"].get("eager_no_grad/ours")
            row.append(f"{ratio:.2f}x" if ratio else "-")
            if compiled:
                first = c.get("torch_compile_first_call_s")
                row.append(f"{first:.2f} s" if first is not None else "-")
            print("| " + " | ".join(row) + " |")
        peers = [p for p in PEERS if any(p in c["lanes"] for c in data["cells"])]
        print()
        header = ["family", "cells"] + [f"{dict(LANES)[p]}/ours" for p in peers] + ["slowest cell eager/ours", "rextio compile"]
        print("| " + " | ".join(header) + " |")
        print("|---|" + "---:|" * (len(header) - 1))
        for family, f in data["families"].items():
            row = [family, str(f["cells"])]
            for i, p in enumerate(peers):
                g = f["geomean"].get(f"{p}/ours")
                row.append((f"**{g:.2f}x**" if i == 0 else f"{g:.2f}x") if g else "-")
            slowest = f["min"].get("eager_no_grad/ours")
            row.append(f"{slowest:.2f}x" if slowest else "-")
            row.append(f"{f['ours_compile_ms']:.1f} ms" if f.get("ours_compile_ms") is not None else "")
            print("| " + " | ".join(row) + " |")
        print()
    parts = []
    for suite, data in run["suites"].items():
        g = data["geomean"]
        value = g.get("eager_no_grad/ours") if isinstance(g, dict) else g
        parts.append(f"{suite} {value:.2f}x")
    print("Geometric means of eager/ours per suite: **" + ", ".join(parts) + "**.")
    print(f"All results verified against eager before timing: {run['all_verified']}.")


if __name__ == "__main__":
    main(sys.argv[1])
