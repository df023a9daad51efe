"""What `rextio_torch.explain` and `rextio_torch.doctor` return (docs/tooling.md).

Plain frozen dataclasses built from the reports the Rust compiler makes through the
extension; nothing here analyses anything. `str()` of an `Explanation` or a `DoctorReport` is
the readable report the compiler renders; `to_dict()` is plain data.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

__all__ = ["Site", "Diagnostic", "Explanation", "DoctorCheck", "DoctorReport"]


@dataclass(frozen=True)
class Site:
    """One call or operator site of the function, and what became of it.

    `outcome` is `claimed`, `rejected`, `not-covered` or `not-offered`; a claimed site has
    `rule_id` and `result_type`, the others a diagnostic `code` and `message` (the keys of
    `rextio-torch check --format json`)."""

    line: int
    column: int
    kind: str
    target: str
    outcome: str
    rule_id: str | None
    result_type: str | None
    code: str | None
    message: str | None


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic: stable `code`, `severity` (`error`, `warning`, `note`), `message`,
    1-based `line`/`column` of what it points at (None without a location), and the text
    `rextio-torch check` prints for it (`rendered`)."""

    code: str
    severity: str
    message: str
    line: int | None
    column: int | None
    rendered: str = field(repr=False)


@dataclass(frozen=True)
class Explanation:
    """Why a function compiles or stays on Python.

    - `function`, `file`, `line`: the function and the `def` explained.
    - `status`: `native`, `fallback`, `not-candidate` (as `rextio-torch check` says),
      `syntax-error`, `not-found`, or `unlocated` (its source could not be established;
      `error` says why).
    - `surface`: the surface that decided its sites (`extended` or `reference`, as
      `explain(fn, surface=...)` was asked).
    - `compiles`: whether it compiles to native code.
    - `summary`: one line, what happens and why.
    - `sites`: the claim table, one `Site` per call/operator site in the order the host
      offers them.
    - `diagnostics`: `Diagnostic`s; `rendered`: all of them as `check` prints them.
    - `stages`: IR text after each pipeline stage, in order (`parsed`, `fused`, `dce`,
      `optimized`, the names `rextio-torch dump-ir --stage` takes); empty when nothing was
      lowered.
    - `error`: what `compile(fn, strict=True)` raises, or None when it compiles.
    """

    function: str
    file: str
    line: int | None
    status: str
    surface: str
    compiles: bool
    summary: str
    sites: tuple[Site, ...]
    diagnostics: tuple[Diagnostic, ...]
    rendered: str = field(repr=False)
    stages: dict[str, str] = field(repr=False)
    error: str | None = field(repr=False)
    text: str = field(repr=False)

    def __str__(self) -> str:
        return self.text

    @property
    def claimed(self) -> tuple[Site, ...]:
        return tuple(s for s in self.sites if s.outcome == "claimed")

    @property
    def rejected(self) -> tuple[Site, ...]:
        return tuple(s for s in self.sites if s.outcome == "rejected")

    @property
    def not_covered(self) -> tuple[Site, ...]:
        return tuple(s for s in self.sites if s.outcome == "not-covered")

    def ir(self, stage: str = "optimized") -> str:
        """The IR after `stage`; KeyError naming the stages there are when it did not run."""
        try:
            return self.stages[stage]
        except KeyError:
            there = ", ".join(self.stages) or "none: nothing was lowered"
            raise KeyError(f"no IR after stage {stage!r} (stages: {there})") from None

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_report(cls, report: dict[str, Any]) -> Explanation:
        """From the JSON the compiler's `explain_function` returns."""
        return cls(
            function=report["function"],
            file=report["file"],
            line=report["line"],
            status=report["status"],
            surface=report["surface"],
            compiles=report["compiles"],
            summary=report["summary"],
            sites=tuple(Site(**site) for site in report["sites"]),
            diagnostics=tuple(Diagnostic(**d) for d in report["diagnostics"]),
            rendered=report["rendered"],
            stages={s["stage"]: s["ir"] for s in report["stages"]},
            error=report["error"],
            text=report["text"],
        )

    @classmethod
    def unlocated(cls, name: str, file: str, error: str, surface: str = "extended",
                  summary: str = "stays on Python: its source could not be established") -> Explanation:
        """A function whose source could not be established (or a module whose structure does
        not compile, with its own `summary`), so nothing was analysed."""
        text = f"explain `{name}` ({file})\nstatus: unlocated: {summary}\nsurface: {surface}\n\n{error}\n"
        return cls(name, file, None, "unlocated", surface, False, summary, (), (), "", {}, error, text)


@dataclass(frozen=True)
class DoctorCheck:
    """One line of the doctor's report: `level` is `ok`, `note`, `warning` or `problem`
    (only problems make the host not ready); anything but ok has a stable `code`
    (`RXD0NN`) and a `fix` sentence."""

    name: str
    level: str
    found: str
    need: str
    code: str | None
    fix: str | None


@dataclass(frozen=True)
class DoctorReport:
    """What the project needs and what this host has.

    `ready` is True when nothing required is missing; `exit_code` is 0 then, 1 otherwise
    (what `rextio-torch doctor` exits with). `platform` is this host's cell of the seed's
    platform table; `facts` are the raw findings. `print(report)` prints the table."""

    ready: bool
    exit_code: int
    checks: tuple[DoctorCheck, ...]
    platform: dict[str, Any]
    facts: dict[str, Any] = field(repr=False)
    text: str = field(repr=False)

    def __str__(self) -> str:
        return self.text

    @property
    def problems(self) -> tuple[DoctorCheck, ...]:
        return tuple(c for c in self.checks if c.level == "problem")

    def check(self, name: str) -> DoctorCheck:
        """The check called `name` (`python`, `torch`, `libtorch (tch)`, ...)."""
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(f"no check {name!r}; checks: {', '.join(c.name for c in self.checks)}")

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_report(cls, report: dict[str, Any]) -> DoctorReport:
        return cls(
            ready=report["ready"],
            exit_code=report["exit_code"],
            checks=tuple(DoctorCheck(**c) for c in report["checks"]),
            platform=report["platform"],
            facts=report["facts"],
            text=report["text"],
        )

    @classmethod
    def extension_unavailable(cls, error: BaseException) -> DoctorReport:
        """The report when the compiler's extension itself does not load: nothing else can be
        checked from here (`rextio-torch doctor` can)."""
        why = f"{type(error).__name__}: {error}"
        fix = (
            "Install torch==2.13.0 and rebuild the package in this environment (`make build`); "
            "`rextio-torch doctor` reports the rest."
        )
        check = DoctorCheck("rextio_torch", "problem", f"the extension does not load: {why}",
                            "importable, with its extension", "RXD011", fix)
        text = (
            "rextio-torch doctor: what the project needs, what this host has\n\n"
            f"  problem  {check.name}  {check.found}\n"
            f"           RXD011: {fix}\n\n"
            "not ready: 1 problem(s): RXD011 (exit 1)\n"
        )
        return cls(False, 1, (check,), {}, {"error": why}, text)
