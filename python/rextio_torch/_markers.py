"""The compiler's CPU marker types, as a module's signatures pick them (`_module.py`).

The list is the compiler's own (`_native().markers()`, the IR's MARKERS), not a copy kept
here, so a marker the compiler gains (a rank, a dtype) is one a module's input, arguments and
tensors may have at once.
"""

from __future__ import annotations

_CALL_MARKERS: dict = {}


def call_markers() -> dict:
    """(dtype, device type, rank) -> the name of the CPU marker of that type (built once)."""
    if not _CALL_MARKERS:
        from . import _load_native

        for name, _key, dtype, device, rank, _reference in _load_native().markers():
            if device == "cpu":
                _CALL_MARKERS[(dtype, device, rank)] = name
    return _CALL_MARKERS


def marker_types() -> str:
    """The CPU marker types in words, for a message: "float32 rank 0/1/2/3, ..."."""
    ranks: dict = {}
    for dtype, _, rank in call_markers():
        ranks.setdefault(dtype, []).append(rank)
    return ", ".join(f"{dtype} rank {'/'.join(str(r) for r in sorted(rs))}" for dtype, rs in ranks.items())
