"""rextio-torch as a Rextio plugin (plugin API 1.7; entry point ``rextio-torch`` in group
``rextio.plugins``, see docs/rextio-plugin.md).

This module only adapts data structures: Rextio hands over its own dataclasses, they go to
the compiler (the ``_native`` extension) as their ``to_dict()`` JSON, and the answer comes
back as the host's dataclasses. Which sites are claimed, with which rule id, code and
message, is decided by the same Rust claim rules as ``rextio-torch check`` and
``rextio_torch.compile``, read with the op table's reference spellings only, so that every
site keeps the reference plugin's outcome (an extension spelling such as ``F.silu`` is not
covered here); a claimed site is lowered by Rust too, to a call of the runtime
functions the backend's generated code calls. Every text of Rust handed to the host (lowered
sites, the types' conversions and helpers, the scope guard) comes from the backend
(``backend/src/plugin.rs``, through ``_native``); this module writes none. The runtime goes
into the generated crate as module items (``helpers``), since the host has no way for a
plugin to add source files.

``rextio`` is imported only when the host loads the plugin (Rextio core is not a
dependency of rextio-torch).
"""

from __future__ import annotations

import json
import os
import sys

from . import _native

PLUGIN_ID = "rextio-torch"
API_VERSION = "1.7"
TORCH_VERSION = "2.13.0"

def _surface():
    """What the plugin covers and its types, from the compiler: the unary op table's
    reference spellings between the other lanes' symbols, and the IR's markers as
    ``(annotation, key, helper suffix, dtype, device, rank)``."""
    modules, symbols, types = _native.plugin_surface()
    return tuple(modules), tuple(symbols), tuple(tuple(t) for t in types)


_COVERED_MODULES, _COVERED_SYMBOLS, _TYPES = _surface()


def _require_host(api) -> None:
    parts = str(api.PLUGIN_API_VERSION).split(".")
    ok = len(parts) == 2 and all(p.isdecimal() for p in parts) and parts[0] == "1"
    if not ok or int(parts[1]) < 7:
        raise RuntimeError(
            f"rextio-torch provider API {API_VERSION} requires a Rextio plugin host API in "
            f"major 1 with minor >= 7; this host has {api.PLUGIN_API_VERSION!r}"
        )


class RextioTorchProvider:
    """The provider object Rextio's loader gets from the entry point."""

    plugin_id = PLUGIN_ID
    api_version = API_VERSION

    def __init__(self) -> None:
        from rextio.analyzer.diagnostics import Diagnostic
        from rextio.plugins import api

        _require_host(api)
        self._api = api
        self._diagnostic = Diagnostic
        self._records = json.loads(_native.plugin_rule_records())
        self._runtime_modules = _native.plugin_runtime_modules()
        self._rust = json.loads(_native.plugin_rust_vocabulary())
        self._pins = dict(_native.plugin_crate_pins())

    # -- metadata -------------------------------------------------------------------------

    def to_rextio_plugin(self):
        from rextio.plugins.models import RextioPlugin

        return RextioPlugin(
            id=PLUGIN_ID,
            name="PyTorch to Rust (rextio-torch, Rust compiler)",
            source_language="python",
            target_language="rust",
            packages=("torch",),
        )

    def covers(self):
        return self._api.CoverageDecl(
            packages=("torch",), modules=_COVERED_MODULES, symbols=_COVERED_SYMBOLS
        )

    def describe(self, config):
        api = self._api
        return tuple(
            api.RuleRecord(
                id=r["id"],
                provider=PLUGIN_ID,
                scope=api.RuleScope(kind=r["scope_kind"], pattern=r["pattern"]),
                constraint=r["constraint"],
                outcome=r["outcome"],
                diagnostic_code=r["diagnostic_code"],
                guidance=(
                    "Lowered natively by rextio-torch."
                    if r["outcome"] == "native"
                    else "Stays on Python: outside the float32 CPU rank-1/2 tensor surface."
                ),
                stability="experimental",
                verified=r["verified"],
            )
            for r in self._records
        )

    def type_vocabulary(self):
        api = self._api
        rust_types = self._rust["types"]
        helpers = (self._runtime_modules,) + tuple(t["helper"] for t in rust_types)
        types = []
        for t in rust_types:
            metadata = None
            if t["device"] == "cuda:0":
                from rextio.devices.api import DeviceValueMetadata

                metadata = DeviceValueMetadata(
                    logical_device="cuda:0",
                    backend="cuda",
                    dtype="float32",
                    rank=t["rank"],
                    layout="strided",
                    runtime="libtorch",
                    runtime_version=TORCH_VERSION,
                    reuse_domain_runtime=True,
                    features=("inference", "no-grad"),
                    memory_spaces=("device",),
                )
            types.append(
                api.PluginType(
                    key=f"{PLUGIN_ID}/{t['key']}",
                    annotations=(f"rextio_torch.types.{t['annotation']}",),
                    rust_type=t["rust_type"],
                    conversion=api.BoundaryConversion(
                        param_rust=t["param_rust"],
                        param_expr=t["param_expr"],
                        return_rust=t["return_rust"],
                        return_expr=t["return_expr"],
                    ),
                    helpers=helpers,
                    device_value_metadata=metadata,
                )
            )
        return tuple(types)

    def crate_dependencies(self):
        dep = self._api.CrateDependency
        pins = self._pins
        return (
            dep("gemm", f"={pins['gemm']}", ("std", "x86-v4")),
            dep("la-arena", f"={pins['la-arena']}"),
            dep("tch", f"={pins['tch']}", ("python-extension",)),
            dep("thiserror", f"={pins['thiserror']}"),
            dep("torch-sys", f"={pins['torch-sys']}", ("python-extension",)),
        )

    # -- claim and lower --------------------------------------------------------------------

    def claim(self, site, config):
        api = self._api
        verdict = json.loads(_native.plugin_claim(json.dumps(site.to_dict())))
        kind = verdict["verdict"]
        if kind == "claimed":
            return api.Claimed(rule_id=verdict["rule_id"], result_type=verdict["result_type"])
        if kind == "rejected":
            return api.Rejected(
                diagnostic=self._diagnostic(
                    code=verdict["code"],
                    severity="error",
                    message=verdict["message"],
                    file_path=site.file_path,
                    line=site.line,
                    column=site.column,
                )
            )
        return api.NotCovered()

    def lower(self, claimed, ctx):
        context = {
            "operands": list(ctx.operands),
            "receiver": getattr(ctx, "receiver", None),
            "backend": getattr(ctx, "backend", "pyo3"),
        }
        lowered = json.loads(
            _native.plugin_lower(json.dumps(claimed.to_dict()), json.dumps(context))
        )
        return self._api.LoweredExpr(rust=lowered["rust"])

    def function_scope_guard(self, ctx):
        if ctx.backend != "pyo3" or ctx.has_python_boundary_calls or not ctx.used_rule_ids:
            return None
        return self._api.PluginFunctionScopeGuard(rust=self._rust["function_scope_guard"])


def _prepare_cargo_environment() -> None:
    """`rextio build` runs cargo on its generated crate in this process's environment, and
    that crate links libtorch through torch-sys, which finds it from the torch of the
    `python` on PATH when LIBTORCH_USE_PYTORCH is set (and fails otherwise). So the plugin,
    loaded by the interpreter that has torch, sets that default and puts its own interpreter
    first on PATH; a value the user set is kept."""
    os.environ.setdefault("LIBTORCH_USE_PYTORCH", "1")
    bindir = os.path.dirname(sys.executable)
    path = os.environ.get("PATH", "")
    if bindir and path.split(os.pathsep)[0] != bindir:
        os.environ["PATH"] = bindir + os.pathsep + path if path else bindir


def plugin() -> RextioTorchProvider:
    """The entry point: Rextio's loader calls it (a factory) and gets the provider."""
    _prepare_cargo_environment()
    return RextioTorchProvider()
