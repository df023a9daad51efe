"""Prints the table of docs/public-models.md by running every case of the public-models corpus
(tests/public_models/registry.py) eagerly and through `rextio_torch.compile(module)`:

    .venv/bin/python tests/public_models/report.py            # the markdown table
    .venv/bin/python tests/public_models/report.py --check    # only the cases whose recorded
                                                              # outcome or reason is stale

The outcome and first reason printed are the observed ones, not the recorded ones; `--check`
exits 1 when any differ from registry.py, with the values to copy in.
"""

from __future__ import annotations

import pathlib
import sys

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))

import registry  # noqa: E402


def main(argv: list[str]) -> int:
    check = "--check" in argv
    runs = {case.name: registry.run(case) for case in registry.CASES}
    stale = [c for c in registry.CASES if (runs[c.name].outcome, runs[c.name].reason) != (c.expected, c.reason)]
    if check:
        for case in stale:
            r = runs[case.name]
            print(f"{case.name}: recorded {case.expected} {case.reason!r}; observed {r.outcome} {r.reason!r}")
        print(f"{len(stale)} of {len(registry.CASES)} cases stale")
        return 1 if stale else 0
    native = [c for c in registry.CASES if runs[c.name].outcome == registry.NATIVE]
    print(f"**{len(native)} of {len(registry.CASES)} native** "
          f"(`rextio_torch.compile(module)` on torch {__import__('torch').__version__}).\n")
    print("### Native\n")
    print("| case | module | source | licence | input |")
    print("| --- | --- | --- | --- | --- |")
    for case in native:
        print(_row(case, [_shape(case)]))
    for blocker in registry.BLOCKERS:
        cases = [c for c in registry.CASES if runs[c.name].outcome == registry.EAGER and c.blocker == blocker]
        if not cases:
            continue
        print(f"\n### Eager: {blocker} ({len(cases)})\n")
        print("| case | module | source | licence | input | first reason |")
        print("| --- | --- | --- | --- | --- | --- |")
        for case in cases:
            reason = runs[case.name].reason.replace("|", "\\|")
            print(_row(case, [_shape(case), f"`{reason}`"]))
    other = [c for c in registry.CASES if runs[c.name].outcome == registry.EAGER and c.blocker not in registry.BLOCKERS]
    for case in other:
        print(f"\nuncategorised: {case.name}: {runs[case.name].reason}")
    if stale:
        print(f"\n({len(stale)} cases differ from registry.py: run with --check)", file=sys.stderr)
    return 0


def _shape(case: registry.Case) -> str:
    args = registry.sample(case, registry.BATCHES[0], 1)
    return ", ".join("[" + ", ".join(str(d) for d in a.shape) + "]" for a in args)


def _row(case: registry.Case, rest: list[str]) -> str:
    repo, licence = registry.SOURCES[case.source]
    return "| " + " | ".join([f"`{case.name}`", f"`{case.qualname}` ({case.file})", repo, licence, *rest]) + " |"


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
