"""Regenerate `control-flow.json`: the reference's verdicts on scalar control flow.

This script is NOT run by the tests. It needs the reference system installed in a
scratch virtual environment outside the repository, for example:

    python3.11 -m venv /tmp/refvenv
    /tmp/refvenv/bin/pip install --no-deps rextio==0.1.8 rextio-torch==0.1.3

(`rextio check` and `rextio generate` run without torch; the plugin and its type
markers never import it.) Then, from the repository root:

    python3 tests/conformance/gen_control_flow.py --rextio /tmp/refvenv/bin/rextio

For every case it writes a throw-away project (`rextio.toml` from `rextio init`
with `[plugins] enabled = ["rextio-torch"]`, `pkg/__init__.py`, `pkg/kernels.py`),
runs `rextio check` twice -- once as written (auto discovery, the default
`native_marker = "auto"`), once with `@rextio.native` put on `def f` -- and
`rextio generate` once on the project as written, and records what the tool
reported in `.rextio/reports/check.json` and on its output. A scalar-only case that
check accepts (route native-direct) is also built with `rextio build` (needs `cargo`
and crates.io; the Cargo target folder is shared between cases) and, when the build
succeeds, `f` is called with the case's `calls` through the generated wrapper
(REXTIO_NATIVE_MODE=native) and as the original Python function. Nothing is edited by
hand: the outcome word is derived mechanically from check.json (see
`classify`). The module of a case is built exactly as `frontend/tests/
conformance.rs` builds it: `module_header`, a blank line, the decorator line if
any, `def f(<params>) -> <returns>:` and the indented prelude and body; a case
with a `source` field uses `module_header`, a blank line and that source instead.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent

MODULE_HEADER = (
    "from rextio_torch.types import (TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, "
    "TensorF32Cuda0_1D, TensorF32Cuda0_2D)\n"
    "import rextio\nimport torch\nimport torch.nn.functional as F"
)

ABBREV = {
    "rextio-torch/tensor-f32-cpu-2d": "M",
    "rextio-torch/tensor-f32-cpu-1d": "V",
    "rextio-torch/tensor-i64-cpu-1d": "L",
    "rextio-torch/tensor-f32-cuda0-2d": "CM",
    "rextio-torch/tensor-f32-cuda0-1d": "CV",
}

M = "TensorF32Cpu2D"
V = "TensorF32Cpu1D"
L = "TensorI64Cpu1D"

CASES: list[dict] = []


def case(cid, params, returns, body, prelude="", decorator="", note="", calls=None):
    c = {
        "id": cid,
        "note": note,
        "params": params,
        "returns": returns,
        "decorator": decorator,
        "prelude": prelude,
        "body": body.strip("\n"),
    }
    if calls is not None:
        c["calls"] = calls
    CASES.append(c)


def scase(cid, source, note=""):
    """A case whose module body (after the header) is given whole; `f` is the focus."""
    CASES.append({"id": cid, "note": note, "source": source.strip("\n") + "\n"})


# --------------------------------------------------------------------------------------
# Straight-line controls
# --------------------------------------------------------------------------------------
case("sl_linear_relu", f"x: {M}, w: {M}, b: {V}", M, "return F.linear(x, w, b).relu()",
     note="control: straight-line chain")
case("sl_unused_int_param", f"x: {M}, n: int", M, "return x.relu()",
     note="control: an int parameter that is never used")
case("sl_named_temps", f"x: {M}, w: {M}, b: {V}", M, "h = x @ w + b\nreturn h.relu()",
     note="control: named temp then method")
case("sl_bare_binop_receiver", f"x: {M}, w: {M}, b: {V}", M, "return (x @ w + b).relu()",
     note="control: bare BinOp receiver (README)")
case("sl_return_param", f"x: {M}", M, "return x", note="returning a tensor parameter")
case("sl_alias_return", f"x: {M}", M, "h = x\nreturn h", note="returning an alias of a parameter")
case("sl_rebind_param_then_return", f"x: {M}", M, "x = x.relu()\nreturn x",
     note="a tensor parameter rebound to a computed value, then returned")
case("sl_scalar_only_int", "a: int, b: int", "int", "return a + b",
     note="scalar-only function (no plugin types)")
case("sl_scalar_only_float", "a: float, b: float", "float", "return a * b - 1.5",
     note="scalar-only float function")
case("sl_int_return_from_tensor_fn", f"x: {M}, n: int", "int", "h = x.relu()\nreturn n + 1",
     note="tensor param but int return")
case("sl_docstring", f"x: {M}", M, '"""Docstring."""\nreturn x.relu()',
     note="a docstring as first statement")

# --------------------------------------------------------------------------------------
# for over range
# --------------------------------------------------------------------------------------
case("for_range_param", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    h = h.tanh()\nreturn h",
     note="for over range(n) with a parameter bound")
case("for_range_literal", f"x: {M}", M,
     "h = x.relu()\nfor i in range(3):\n    h = h.tanh()\nreturn h")
case("for_range_zero_literal", f"x: {M}", M,
     "h = x.relu()\nfor i in range(0):\n    h = h.tanh()\nreturn h")
case("for_range_negative_literal", f"x: {M}", M,
     "h = x.relu()\nfor i in range(-2):\n    h = h.tanh()\nreturn h")
case("for_range_two_params", f"x: {M}, a: int, b: int", M,
     "h = x.relu()\nfor i in range(a, b):\n    h = h.tanh()\nreturn h")
case("for_range_two_literals", f"x: {M}", M,
     "h = x.relu()\nfor i in range(1, 4):\n    h = h.tanh()\nreturn h")
case("for_range_three_literal_step", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(0, n, 2):\n    h = h.tanh()\nreturn h")
case("for_range_three_all_literal", f"x: {M}", M,
     "h = x.relu()\nfor i in range(1, 10, 3):\n    h = h.tanh()\nreturn h")
case("for_range_step_param", f"x: {M}, n: int, s: int", M,
     "h = x.relu()\nfor i in range(0, n, s):\n    h = h.tanh()\nreturn h",
     note="a parameter step")
case("for_range_step_negative", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n, 0, -1):\n    h = h.tanh()\nreturn h")
case("for_range_step_zero", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(0, n, 0):\n    h = h.tanh()\nreturn h")
case("for_range_step_expr", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(0, n, 1 + 1):\n    h = h.tanh()\nreturn h")
case("for_range_float_arg", f"x: {M}, t: float", M,
     "h = x.relu()\nfor i in range(t):\n    h = h.tanh()\nreturn h")
case("for_range_bool_arg", f"x: {M}, flag: bool", M,
     "h = x.relu()\nfor i in range(flag):\n    h = h.tanh()\nreturn h")
case("for_range_expr_bound", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n * 2 - 1):\n    h = h.tanh()\nreturn h")
case("for_range_no_args", f"x: {M}", M,
     "h = x.relu()\nfor i in range():\n    h = h.tanh()\nreturn h")
case("for_range_four_args", f"x: {M}", M,
     "h = x.relu()\nfor i in range(0, 4, 1, 1):\n    h = h.tanh()\nreturn h")
case("for_range_keyword", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(stop=n):\n    h = h.tanh()\nreturn h")
case("for_range_huge_literal", f"x: {M}", M,
     "h = x.relu()\nfor i in range(1000000000000):\n    h = h.tanh()\nreturn h")
case("for_range_pow_bound", f"x: {M}", M,
     "h = x.relu()\nfor i in range(10 ** 12):\n    h = h.tanh()\nreturn h")
case("for_range_len_list", f"x: {M}, xs: list[int]", M,
     "h = x.relu()\nfor i in range(len(xs)):\n    h = h.tanh()\nreturn h")
case("for_range_len_tensor", f"x: {M}", M,
     "h = x.relu()\nfor i in range(len(x)):\n    h = h.tanh()\nreturn h")
case("for_range_underscore", f"x: {M}, n: int", M,
     "h = x.relu()\nfor _ in range(n):\n    h = h.tanh()\nreturn h")
case("for_range_var_used_in_body", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    if i % 2 == 0:\n        h = h.tanh()\nreturn h")
case("for_loop_var_read_after", f"x: {M}, n: int", "int",
     "h = x.relu()\nfor i in range(n):\n    h = h.tanh()\nreturn i",
     note="loop target read after the loop")
case("for_target_rebinds_param", f"x: {M}, n: int", M,
     "h = x.relu()\nfor n in range(3):\n    h = h.tanh()\nreturn h")
case("for_target_rebinds_local", f"x: {M}, n: int", M,
     "h = x.relu()\ni = 0\nfor i in range(n):\n    h = h.tanh()\nreturn h")
case("for_two_loops_same_target", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    h = h.tanh()\nfor i in range(n):\n    h = h.sigmoid()\nreturn h")
case("for_range_step_var_target_tuple", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i, j in range(n):\n    h = h.tanh()\nreturn h")
case("for_else", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    h = h.tanh()\nelse:\n    h = h.sigmoid()\nreturn h")

# --------------------------------------------------------------------------------------
# for over other iterables
# --------------------------------------------------------------------------------------
case("for_list_literal", f"x: {M}", M,
     "h = x.relu()\nfor k in [1, 2, 3]:\n    h = h.tanh()\nreturn h")
case("for_tuple_literal", f"x: {M}", M,
     "h = x.relu()\nfor k in (1, 2, 3):\n    h = h.tanh()\nreturn h")
case("for_list_literal_used", f"x: {M}, n: int", M,
     "h = x.relu()\nfor k in [1, 2, 3]:\n    if k > n:\n        h = h.tanh()\nreturn h")
case("for_empty_list_literal", f"x: {M}", M,
     "h = x.relu()\nfor k in []:\n    h = h.tanh()\nreturn h")
case("for_mixed_list_literal", f"x: {M}", M,
     "h = x.relu()\nfor k in [1, 2.0]:\n    h = h.tanh()\nreturn h")
case("for_float_list_literal", f"x: {M}", M,
     "h = x.relu()\nfor k in [0.5, 1.5]:\n    h = h.tanh()\nreturn h")
case("for_list_param", f"x: {M}, xs: list[int]", M,
     "h = x.relu()\nfor k in xs:\n    h = h.tanh()\nreturn h")
case("for_over_tensor", f"x: {M}", M,
     "h = x.relu()\nfor row in x:\n    h = h.tanh()\nreturn h")
case("for_over_tensor_list", f"x: {M}, w: {M}", M,
     "h = x.relu()\nfor t in [x, w]:\n    h = h + t\nreturn h")
case("for_enumerate_list", f"x: {M}", M,
     "h = x.relu()\nfor i, k in enumerate([1, 2]):\n    h = h.tanh()\nreturn h")
case("for_reversed_range", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in reversed(range(n)):\n    h = h.tanh()\nreturn h")

# --------------------------------------------------------------------------------------
# while
# --------------------------------------------------------------------------------------
case("while_counter", f"x: {M}, n: int", M,
     "h = x.relu()\ni = 0\nwhile i < n:\n    h = h.tanh()\n    i += 1\nreturn h")
case("while_true_break", f"x: {M}, n: int", M,
     "h = x.relu()\ni = 0\nwhile True:\n    if i >= n:\n        break\n    h = h.tanh()\n    i = i + 1\nreturn h")
case("while_true_return_only", f"x: {M}, n: int", M,
     "h = x.relu()\ni = 0\nwhile True:\n    if i >= n:\n        return h\n    h = h.tanh()\n    i = i + 1",
     note="while True whose only exit is a return: no return after the loop")
case("while_else", f"x: {M}, n: int", M,
     "h = x.relu()\ni = 0\nwhile i < n:\n    h = h.tanh()\n    i += 1\nelse:\n    h = h.sigmoid()\nreturn h")
case("while_int_condition", f"x: {M}, n: int", M,
     "h = x.relu()\nk = n\nwhile k:\n    h = h.tanh()\n    k -= 1\nreturn h")
case("while_bool_param", f"x: {M}, flag: bool", M,
     "h = x.relu()\nwhile flag:\n    h = h.tanh()\n    break\nreturn h")
case("while_decrement_param", f"x: {M}, n: int", M,
     "h = x.relu()\nwhile n > 0:\n    h = h.tanh()\n    n -= 1\nreturn h",
     note="an int parameter decremented in the loop")
case("while_continue", f"x: {M}, n: int", M,
     "h = x.relu()\ni = 0\nwhile i < n:\n    i += 1\n    if i % 2 == 0:\n        continue\n    h = h.tanh()\nreturn h")
case("while_tensor_condition", f"x: {M}", M,
     "h = x.relu()\nwhile h.sum(dim=1) > 0:\n    h = h.tanh()\nreturn h")
case("while_and_condition", f"x: {M}, n: int, flag: bool", M,
     "h = x.relu()\ni = 0\nwhile i < n and flag:\n    h = h.tanh()\n    i += 1\nreturn h")
case("while_false", f"x: {M}", M,
     "h = x.relu()\nwhile False:\n    h = h.tanh()\nreturn h")

# --------------------------------------------------------------------------------------
# if / elif / else
# --------------------------------------------------------------------------------------
case("if_bool_predeclared", f"x: {M}, flag: bool", M,
     "h = x.relu()\nif flag:\n    h = h.tanh()\nreturn h")
case("if_else_bound_only_in_arms", f"x: {M}, flag: bool", M,
     "if flag:\n    h = x.relu()\nelse:\n    h = x.tanh()\nreturn h",
     note="a name bound in both arms (not before) and read after the if")
case("if_bound_only_in_one_arm", f"x: {M}, flag: bool", M,
     "h = x.relu()\nif flag:\n    g = h.tanh()\nreturn g")
case("if_return_both_arms", f"x: {M}, flag: bool", M,
     "if flag:\n    return x.relu()\nelse:\n    return x.tanh()")
case("if_return_then_fallthrough", f"x: {M}, flag: bool", M,
     "if flag:\n    return x.relu()\nreturn x.tanh()")
case("if_missing_return_path", f"x: {M}, flag: bool", M,
     "if flag:\n    return x.relu()",
     note="one arm returns, no else, nothing after")
case("if_elif_else_int", f"x: {M}, n: int", M,
     "h = x.relu()\nif n == 0:\n    h = h.tanh()\nelif n == 1:\n    h = h.sigmoid()\nelse:\n    h = h.abs()\nreturn h")
case("if_elif_return_each", f"x: {M}, n: int", M,
     "if n < 0:\n    return x.relu()\nelif n == 0:\n    return x.tanh()\nelse:\n    return x.sigmoid()")
case("if_elif_no_else_return", f"x: {M}, n: int", M,
     "if n < 0:\n    return x.relu()\nelif n == 0:\n    return x.tanh()\nreturn x.sigmoid()")
case("if_int_condition", f"x: {M}, n: int", M,
     "h = x.relu()\nif n:\n    h = h.tanh()\nreturn h")
case("if_float_condition", f"x: {M}, t: float", M,
     "h = x.relu()\nif t:\n    h = h.tanh()\nreturn h")
case("if_float_compare", f"x: {M}, t: float", M,
     "h = x.relu()\nif t > 0.5:\n    h = h.tanh()\nreturn h")
case("if_int_float_compare", f"x: {M}, n: int", M,
     "h = x.relu()\nif n > 0.5:\n    h = h.tanh()\nreturn h")
case("if_bool_eq_int", f"x: {M}, flag: bool", M,
     "h = x.relu()\nif flag == 1:\n    h = h.tanh()\nreturn h")
case("if_tensor_bare", f"x: {M}", M,
     "h = x.relu()\nif x:\n    h = h.tanh()\nreturn h")
case("if_tensor_sum_nodim_gt", f"x: {M}", M,
     "h = x.relu()\nif x.sum() > 0:\n    h = h.tanh()\nreturn h")
case("if_tensor_sum_dim_gt", f"x: {M}", M,
     "h = x.relu()\nif x.sum(dim=1) > 0:\n    h = h.tanh()\nreturn h")
case("if_tensor_named_compare", f"x: {M}", M,
     "h = x.relu()\ns = x.sum(dim=1)\nif s > 0:\n    h = h.tanh()\nreturn h")
case("if_tensor_eq_tensor", f"a: {M}, b: {M}", M,
     "h = a.relu()\nif a == b:\n    h = h.tanh()\nreturn h")
case("if_tensor_compare_assigned", f"a: {M}, b: {M}", M,
     "c = a > b\nreturn a.relu()")
case("arms_assign_different_tensor_types", f"x: {M}, flag: bool", V,
     "h = x.relu()\nif flag:\n    h = h.mean(dim=1, keepdim=False)\nreturn h.relu()",
     note="an arm rebinds M to V")
case("arms_fresh_different_types_return_in_arm", f"x: {M}, flag: bool", V,
     "if flag:\n    h = x.relu()\n    return h.mean(dim=1, keepdim=False)\nelse:\n    h = x.mean(dim=1, keepdim=False)\n    return h.relu()",
     note="the same name bound with different types in the two arms, each used only inside its arm")
case("arms_int_vs_float", f"x: {M}, flag: bool", M,
     "k = 1\nif flag:\n    k = 2.0\nreturn x.relu()")
case("arms_named_temps_distinct", f"x: {M}, w: {M}, b: {V}, flag: bool", M,
     "hidden = x\nif flag:\n    even = hidden @ w + b\n    hidden = even.relu()\nelse:\n    odd = hidden @ w + b\n    hidden = odd.sigmoid()\nreturn hidden.tanh()")
case("arms_named_temps_shared", f"x: {M}, w: {M}, b: {V}, flag: bool", M,
     "hidden = x\nif flag:\n    t = hidden @ w + b\n    hidden = t.relu()\nelse:\n    t = hidden @ w + b\n    hidden = t.sigmoid()\nreturn hidden.tanh()",
     note="the same temp name in both arms")
case("arms_temp_predeclared_shared", f"x: {M}, w: {M}, b: {V}, flag: bool", M,
     "hidden = x.relu()\nt = hidden\nif flag:\n    t = hidden @ w + b\nelse:\n    t = hidden @ w\nreturn t.tanh()")
case("if_nested", f"x: {M}, a: bool, b: bool", M,
     "h = x.relu()\nif a:\n    if b:\n        h = h.tanh()\n    else:\n        h = h.sigmoid()\nreturn h")
case("if_ternary_tensor", f"x: {M}, flag: bool", M, "h = x.relu() if flag else x.tanh()\nreturn h")
case("if_ternary_scalar", f"x: {M}, flag: bool", M,
     "k = 1 if flag else 2\nh = x.relu()\nfor i in range(k):\n    h = h.tanh()\nreturn h")
case("if_bound_in_arm_used_in_arm", f"x: {M}, flag: bool", M,
     "h = x.relu()\nif flag:\n    g = h.tanh()\n    h = g.sigmoid()\nreturn h")

# --------------------------------------------------------------------------------------
# Scalar expressions
# --------------------------------------------------------------------------------------
def scal(cid, expr_lines, params="n: int, m: int", note=""):
    case(cid, f"x: {M}, {params}", M,
         f"{expr_lines}\nh = x.relu()\nfor i in range(k):\n    h = h.tanh()\nreturn h", note=note)


scal("scalar_add_sub_mul", "k = n + m * 2 - 1")
scal("scalar_floordiv", "k = n // 2")
scal("scalar_mod", "k = n % 3")
scal("scalar_mod_negative_literal", "k = n % -3")
scal("scalar_truediv_int", "k = n / 2")
scal("scalar_unary_minus", "k = -n")
scal("scalar_unary_plus", "k = +n")
scal("scalar_pow", "k = n ** 2")
scal("scalar_bitand", "k = n & 1")
scal("scalar_shift", "k = n << 1")
scal("scalar_abs", "k = abs(n)")
scal("scalar_min_max", "k = min(n, m) + max(n, 1)")
scal("scalar_int_of_float", "k = int(t)", params="t: float")
scal("scalar_mixed_int_float", "k = n + 1.0")
scal("scalar_float_local_then_int", "s = 0.5\ns = s * 2.0\nk = n")
scal("scalar_float_div", "s = t / 2.0\nk = n", params="n: int, t: float")
scal("scalar_float_floordiv", "s = t // 2.0\nk = n", params="n: int, t: float")
scal("scalar_float_mod", "s = t % 2.0\nk = n", params="n: int, t: float")
scal("scalar_int_literal_overflow", "k = 9223372036854775807 + 1",
     note="i64::MAX + 1 written as literals")
scal("scalar_int_literal_too_big", "k = 9223372036854775808",
     note="a literal that does not fit i64")
scal("scalar_chained_compare_cond", "k = n\nif 0 <= m < n:\n    k = m")
scal("scalar_chained_compare_three", "k = n\nif 0 < m <= n < 10:\n    k = m")
scal("scalar_and_or_not", "k = n\nif (n > 0 and m > 0) or not (n == m):\n    k = m",)
scal("scalar_and_int_operands", "k = n\nif n and m:\n    k = m")
scal("scalar_not_int", "k = n\nif not n:\n    k = m")
scal("scalar_bool_local", "done = False\nif n > m:\n    done = True\nk = n\nif done:\n    k = m")
scal("scalar_bool_from_compare", "big = n > m\nk = n\nif big:\n    k = m")
scal("scalar_aug_add_sub_mul", "k = n\nk += 1\nk -= 2\nk *= 3")
scal("scalar_aug_floordiv", "k = n\nk //= 2")
scal("scalar_aug_mod", "k = n\nk %= 3")
scal("scalar_aug_float", "s = t\ns += 0.5\nk = n", params="n: int, t: float")
scal("scalar_is_none", "k = n\nif n is None:\n    k = m")
scal("scalar_in_tuple", "k = n\nif n in (1, 2):\n    k = m")
scal("scalar_compare_eq_neq", "k = n\nif n != m:\n    k = m")
scal("scalar_walrus", "k = n\nif (j := n + 1) > 2:\n    k = j")
scal("scalar_tuple_unpack", "k, j = n, m")
scal("scalar_annotated_local", "k: int = n")
scal("scalar_multi_target", "k = j = n")
scal("scalar_assert", "assert n > 0\nk = n")
scal("scalar_assert_msg", "assert n > 0, 'n must be positive'\nk = n")
scal("scalar_print", "print(n)\nk = n")
scal("scalar_pass", "k = n\nif n > 0:\n    pass")
scal("scalar_raise_in_arm", "k = n\nif n < 0:\n    raise ValueError('negative')")
scal("scalar_try_except", "k = n\ntry:\n    k = n + 1\nexcept ValueError:\n    k = 0")
scal("scalar_bool_param_arith", "k = n + flag", params="n: int, flag: bool")
scal("scalar_str_local", "name = 'a'\nk = n")
scal("scalar_list_local", "xs = [1, 2, 3]\nk = xs[n]")
scal("scalar_len_list_param", "k = len(xs)", params="xs: list[int]")

# --------------------------------------------------------------------------------------
# Scalar operands given to tensor functions
# --------------------------------------------------------------------------------------
case("tensor_times_float_literal", f"x: {M}", M, "return x * 2.0")
case("tensor_plus_int_literal", f"x: {M}", M, "return x + 1")
case("float_literal_times_tensor", f"x: {M}", M, "return 2.0 * x")
case("tensor_times_float_param", f"x: {M}, t: float", M, "return x * t")
case("tensor_times_int_param", f"x: {M}, n: int", M, "return x * n")
case("tensor_div_int_param", f"x: {M}, n: int", M, "return x / n")
case("tensor_minus_bool_param", f"x: {M}, flag: bool", M, "return x - flag")
case("tensor_times_float_in_loop", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    h = h * 0.5\nreturn h")
case("tensor_plus_loop_var", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    h = h + i\nreturn h")
case("torch_mul_float", f"x: {M}", M, "return torch.mul(x, 2.0)")
case("torch_add_int_param", f"x: {M}, n: int", M, "return torch.add(x, n)")
case("tensor_mean_dim_param", f"x: {M}, d: int", V, "return x.mean(dim=d, keepdim=False)")
case("tensor_sum_positional_dim_param", f"x: {M}, d: int", V, "return x.sum(d)")
case("tensor_softmax_loop_var_dim", f"x: {M}", M,
     "h = x.relu()\nfor i in range(2):\n    h = h.softmax(dim=i)\nreturn h")

# --------------------------------------------------------------------------------------
# Augmented assignment on tensors
# --------------------------------------------------------------------------------------
case("aug_tensor_add", f"x: {M}, w: {M}", M, "h = x.relu()\nh += w\nreturn h")
case("aug_tensor_add_in_loop", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    h += x\nreturn h")
case("aug_tensor_mul_float", f"x: {M}", M, "h = x.relu()\nh *= 2.0\nreturn h")
case("aug_tensor_matmul", f"x: {M}, w: {M}", M, "h = x.relu()\nh @= w\nreturn h")
case("plain_tensor_add_in_loop", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    h = h + x\nreturn h")

# --------------------------------------------------------------------------------------
# Tensor variables across iterations
# --------------------------------------------------------------------------------------
case("loop_linear_relu_chain", f"x: {M}, w: {M}, b: {V}, depth: int", M,
     "hidden = x.relu()\nfor layer in range(depth):\n    hidden = F.linear(hidden, w, b).relu()\nreturn hidden")
case("loop_linear_relu_chain_from_param", f"x: {M}, w: {M}, b: {V}, depth: int", V,
     "hidden = x\nfor layer in range(depth):\n    hidden = F.linear(hidden, w, b).relu()\nreturn hidden.mean(dim=1, keepdim=False)",
     note="starts from the parameter alias, returns a computed value")
case("loop_bare_binop_receiver", f"x: {M}, w: {M}, b: {V}, depth: int", V,
     "hidden = x\nfor layer in range(depth):\n    hidden = (hidden @ w + b).relu()\nreturn hidden.mean(dim=1, keepdim=False)")
case("loop_named_temp", f"x: {M}, w: {M}, b: {V}, depth: int", V,
     "hidden = x\nfor layer in range(depth):\n    t = hidden @ w + b\n    hidden = t.relu()\nreturn hidden.mean(dim=1, keepdim=False)")
case("loop_temp_read_after", f"x: {M}, w: {M}, b: {V}, depth: int", M,
     "hidden = x.relu()\nfor layer in range(depth):\n    t = hidden @ w + b\n    hidden = t.relu()\nreturn t",
     note="a name first bound inside the loop, read after it")
case("loop_accumulate", f"x: {M}, n: int", M,
     "acc = x.relu()\nh = x.tanh()\nfor i in range(n):\n    h = h.sigmoid()\n    acc = acc + h\nreturn acc")
case("loop_type_change", f"x: {M}, n: int", V,
     "h = x.relu()\nfor i in range(n):\n    h = h.mean(dim=1, keepdim=False)\nreturn h",
     note="the loop rebinds an M to a V")
case("loop_classification_inside", f"x: {M}, n: int", L,
     "h = x.relu()\nfor i in range(n):\n    h = h.softmax(dim=1)\nreturn h.argmax(dim=1, keepdim=False)")
case("loop_nested", f"x: {M}, n: int, m: int", M,
     "h = x.relu()\nfor i in range(n):\n    for j in range(m):\n        h = h.tanh()\nreturn h")
case("loop_nested_same_target", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    for i in range(n):\n        h = h.tanh()\nreturn h")
case("loop_nested_while_in_for", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    j = 0\n    while j < i:\n        h = h.tanh()\n        j += 1\nreturn h")
case("loop_break", f"x: {M}, n: int, m: int", M,
     "h = x.relu()\nfor i in range(n):\n    if i == m:\n        break\n    h = h.tanh()\nreturn h")
case("loop_continue", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    if i % 2 == 1:\n        continue\n    h = h.tanh()\nreturn h")
case("loop_break_nested", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    for j in range(n):\n        if j > i:\n            break\n        h = h.tanh()\nreturn h")
case("loop_return_inside", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    h = h.tanh()\n    if i == 3:\n        return h\nreturn h.sigmoid()")
case("loop_return_inside_only", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    return h.tanh()\nreturn h")
case("loop_pass_body", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    pass\nreturn h")
case("loop_expr_statement_tensor", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    h.tanh()\nreturn h")
case("loop_print_tensor", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    print(h)\nreturn h")
case("loop_tensor_tuple_unpack", f"x: {M}, n: int", M,
     "h = x.relu()\ng = x.tanh()\nfor i in range(n):\n    h, g = g, h\nreturn h")
case("loop_tensor_annotated", f"x: {M}, n: int", M,
     f"h: {M} = x.relu()\nfor i in range(n):\n    h = h.tanh()\nreturn h")
case("loop_tensor_walrus", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    if (g := h.tanh()) is not None:\n        h = g\nreturn h")
case("loop_cuda_relu", "x: TensorF32Cuda0_2D, n: int", "TensorF32Cuda0_2D",
     "h = x.relu()\nfor i in range(n):\n    h = h.relu()\nreturn h")

# --------------------------------------------------------------------------------------
# Parameter aliases that may be returned
# --------------------------------------------------------------------------------------
case("alias_for_may_run_zero", f"x: {M}, n: int", M,
     "h = x\nfor i in range(n):\n    h = h.relu()\nreturn h")
case("alias_for_literal_range", f"x: {M}", M,
     "h = x\nfor i in range(3):\n    h = h.relu()\nreturn h",
     note="the loop always runs, still an alias for the analysis?")
case("alias_while", f"x: {M}, n: int", M,
     "h = x\ni = 0\nwhile i < n:\n    h = h.relu()\n    i += 1\nreturn h")
case("alias_if_no_else", f"x: {M}, flag: bool", M,
     "h = x\nif flag:\n    h = h.relu()\nreturn h")
case("alias_if_both_arms", f"x: {M}, flag: bool", M,
     "h = x\nif flag:\n    h = h.relu()\nelse:\n    h = h.tanh()\nreturn h",
     note="both arms rebind, still reported?")
case("alias_cleared_after_loop", f"x: {M}, n: int", M,
     "h = x\nfor i in range(n):\n    h = h.relu()\nh = h.tanh()\nreturn h")
case("alias_return_param_in_arm", f"x: {M}, flag: bool", M,
     "if flag:\n    return x\nreturn x.relu()")
case("alias_return_param_in_loop", f"x: {M}, n: int", M,
     "for i in range(n):\n    return x\nreturn x.relu()")
case("alias_two_names", f"x: {M}, n: int", M,
     "h = x\ng = h\nfor i in range(n):\n    g = g.relu()\nreturn g")
case("alias_assigned_in_loop", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    h = x\nreturn h",
     note="a loop rebinds the returned name to the parameter")
case("alias_walrus", f"x: {M}", M,
     "if (h := x) is not None:\n    pass\nreturn h")
case("alias_not_returned", f"x: {M}, n: int", M,
     "h = x\nfor i in range(n):\n    h = h.relu()\nreturn h.tanh()")

# --------------------------------------------------------------------------------------
# Calls to other project functions
# --------------------------------------------------------------------------------------
EXEMPT_INC = "@rextio.exempt\ndef inc(n: int) -> int:\n    return n + 1\n\n"
scase("exempt_callback_auto", EXEMPT_INC +
      f"def f(x: {M}, n: int) -> {M}:\n    k = inc(n)\n    h = x.relu()\n    for i in range(k):\n        h = h.tanh()\n    return h",
      note="auto-discovered f calls an @rextio.exempt scalar function outside a loop")
scase("exempt_callback_marked", EXEMPT_INC +
      f"@rextio.native\ndef f(x: {M}, n: int) -> {M}:\n    k = inc(n)\n    h = x.relu()\n    for i in range(k):\n        h = h.tanh()\n    return h",
      note="@rextio.native f calls an @rextio.exempt scalar function outside a loop")
scase("exempt_callback_in_loop_auto", EXEMPT_INC +
      f"def f(x: {M}, n: int) -> {M}:\n    h = x.relu()\n    i = 0\n    while i < n:\n        i = inc(i)\n        h = h.tanh()\n    return h")
scase("exempt_callback_in_loop_marked", EXEMPT_INC +
      f"@rextio.native\ndef f(x: {M}, n: int) -> {M}:\n    h = x.relu()\n    i = 0\n    while i < n:\n        i = inc(i)\n        h = h.tanh()\n    return h")
scase("exempt_callback_in_condition_marked", EXEMPT_INC +
      f"@rextio.native\ndef f(x: {M}, n: int) -> {M}:\n    h = x.relu()\n    if inc(n) > 2:\n        h = h.tanh()\n    return h")
scase("native_scalar_helper_call", "def inc(n: int) -> int:\n    return n + 1\n\n" +
      f"def f(x: {M}, n: int) -> {M}:\n    h = x.relu()\n    for i in range(inc(n)):\n        h = h.tanh()\n    return h",
      note="the callee is itself a native (auto) scalar function")
scase("native_scalar_helper_in_loop", "def inc(n: int) -> int:\n    return n + 1\n\n" +
      f"def f(x: {M}, n: int) -> {M}:\n    h = x.relu()\n    i = 0\n    while i < n:\n        i = inc(i)\n        h = h.tanh()\n    return h")
scase("fallback_only_helper_call", "def half(n: int) -> int:\n    return n // 2\n\n" +
      f"def f(x: {M}, n: int) -> {M}:\n    h = x.relu()\n    for i in range(half(n)):\n        h = h.tanh()\n    return h",
      note="the callee stays on Python (unsupported // ), f auto")
scase("fallback_only_helper_call_marked", "def half(n: int) -> int:\n    return n // 2\n\n" +
      f"@rextio.native\ndef f(x: {M}, n: int) -> {M}:\n    h = x.relu()\n    for i in range(half(n)):\n        h = h.tanh()\n    return h")
scase("exempt_tensor_callback_marked",
      f"@rextio.exempt\ndef g(x: {M}) -> {M}:\n    return x.relu()\n\n" +
      f"@rextio.native\ndef f(x: {M}, n: int) -> {M}:\n    h = g(x)\n    for i in range(n):\n        h = h.tanh()\n    return h")
scase("tensor_function_call",
      f"def g(x: {M}) -> {M}:\n    return x.relu()\n\n" +
      f"def f(x: {M}, n: int) -> {M}:\n    h = g(x)\n    for i in range(n):\n        h = h.tanh()\n    return h",
      note="RXT092: a native function calling a materialized plugin-typed function")
scase("nested_def",
      f"def f(x: {M}, n: int) -> {M}:\n    def inner(k: int) -> int:\n        return k + 1\n    h = x.relu()\n    for i in range(inner(n)):\n        h = h.tanh()\n    return h")

# --------------------------------------------------------------------------------------
# Seed programs, verbatim
# --------------------------------------------------------------------------------------
case("phase_b_inference",
     f"x: {M}, weight_a: {M}, weight_b: {M}, bias_a: {V}, bias_b: {V}, depth: int, phase: int", V,
     "hidden = x\nfor layer in range(depth):\n    if (layer + phase) % 2 == 0:\n        hidden = F.linear(hidden, weight_a, bias_a).relu()\n    else:\n        hidden = F.linear(hidden, weight_b, bias_b).relu()\nreturn hidden.mean(dim=1, keepdim=False)",
     note="benchmarks.md Phase B, verbatim body")
SCORE_BODY = (
    "centered = x - mean\nnormalized = centered / scale\n"
    "hidden = F.linear(normalized, hidden_weight, hidden_bias)\n"
    "for layer in range(rounds):\n    if (layer + phase) % 2 == 0:\n        hidden = hidden.relu()\n"
    "    else:\n        hidden = hidden.tanh()\n"
    "logits = F.linear(hidden, class_weight, class_bias)\n"
    "probabilities = logits.softmax(dim=1)\n"
)
SCORE_PARAMS = (f"x: {M}, mean: {V}, scale: {V}, hidden_weight: {M}, hidden_bias: {V}, "
                f"class_weight: {M}, class_bias: {V}, rounds: int, phase: int")
case("score_labels", SCORE_PARAMS, L, SCORE_BODY + "return probabilities.argmax(dim=1, keepdim=False)",
     note="benchmarks.md scoring pipeline, verbatim")
case("score_logits", SCORE_PARAMS, M,
     SCORE_BODY.replace("probabilities = logits.softmax(dim=1)\n", "") + "return logits",
     note="score_labels returning logits")
case("score_probabilities", SCORE_PARAMS, M, SCORE_BODY + "return probabilities",
     note="score_labels returning probabilities")
case("score_logits_with_dead_softmax", SCORE_PARAMS, M, SCORE_BODY + "return logits",
     note="score_labels body (softmax computed, unused) returning logits")
scase("scoring_three_in_one_module",
      f"def score_logits({SCORE_PARAMS}) -> {M}:\n" +
      "".join("    " + line + "\n" for line in (SCORE_BODY.replace("probabilities = logits.softmax(dim=1)\n", "") + "return logits").splitlines()) +
      f"\ndef score_probabilities({SCORE_PARAMS}) -> {M}:\n" +
      "".join("    " + line + "\n" for line in (SCORE_BODY + "return probabilities").splitlines()) +
      f"\ndef f({SCORE_PARAMS}) -> {L}:\n" +
      "".join("    " + line + "\n" for line in (SCORE_BODY + "return probabilities.argmax(dim=1, keepdim=False)").splitlines()),
      note="the three scoring functions in one module (f = score_labels)")
case("readme_control_flow_inference", f"x: {M}, weight: {M}, bias: {V}, depth: int, phase: int", V,
     "hidden = x\nfor layer in range(depth):\n    if (layer + phase) % 2 == 0:\n        even = hidden @ weight + bias\n        hidden = even.relu()\n    else:\n        odd = hidden @ weight + bias\n        hidden = odd.sigmoid()\nreturn hidden.mean(dim=1, keepdim=False)",
     note="seed README 'Accepted (control-flow + expanded Alpha surface)' inference")
case("readme_control_flow_bare_binop", f"x: {M}, weight: {M}, bias: {V}, depth: int, phase: int", V,
     "hidden = x\nfor layer in range(depth):\n    if (layer + phase) % 2 == 0:\n        hidden = (hidden @ weight + bias).relu()\n    else:\n        hidden = (hidden @ weight + bias).sigmoid()\nreturn hidden.mean(dim=1, keepdim=False)",
     note="README: bare BinOp receiver inside the loop")
case("readme_expanded_surface", f"x: {M}, weight: {M}, offset: {V}", V,
     "hidden = torch.matmul(x, weight)\nhidden = hidden.tanh()\nhidden = hidden + hidden\nhidden = hidden.matmul(weight)\nreduced = hidden.sum(dim=1, keepdim=False)\nreduced = reduced + offset\nreturn reduced.relu().sigmoid().tanh()",
     note="seed README expanded_surface (straight line)")
case("phase_b_return_hidden", f"x: {M}, weight_a: {M}, weight_b: {M}, bias_a: {V}, bias_b: {V}, depth: int, phase: int", M,
     "hidden = x\nfor layer in range(depth):\n    if (layer + phase) % 2 == 0:\n        hidden = F.linear(hidden, weight_a, bias_a).relu()\n    else:\n        hidden = F.linear(hidden, weight_b, bias_b).relu()\nreturn hidden",
     note="Phase B returning hidden (may be the parameter when depth <= 0)")


# --------------------------------------------------------------------------------------
# Second round: probes suggested by the first run
# --------------------------------------------------------------------------------------
case("for_list_local_variable", f"x: {M}", M,
     "h = x.relu()\nks = [1, 2, 3]\nfor k in ks:\n    h = h.tanh()\nreturn h",
     note="a list literal bound to a local, then iterated")
case("for_range_min_bound", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(min(n, 4)):\n    h = h.tanh()\nreturn h")
case("for_range_local_bound", f"x: {M}, xs: list[int]", M,
     "h = x.relu()\nn = len(xs)\nfor i in range(n):\n    h = h.tanh()\nreturn h")
case("for_loop_var_aug_in_body", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    i += 1\n    h = h.tanh()\nreturn h",
     note="the loop target is rebound inside the body")
case("for_loop_var_assigned_in_body", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    i = i * 2\n    h = h.tanh()\nreturn h")
case("for_return_inside_no_return_after", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    if i == 2:\n        return h\n    h = h.tanh()",
     note="a for loop whose only return is inside it")
case("for_scalar_bound_inside_read_after", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    k = i * 2\nfor j in range(k):\n    h = h.tanh()\nreturn h",
     note="a scalar first bound in a loop, read after it")
case("for_reject_in_zero_trip_loop", f"x: {M}", M,
     "h = x.relu()\nfor i in range(0):\n    h = h * 2.0\nreturn h",
     note="a plugin-rejected site in a loop that never runs")
case("if_reject_in_arm", f"x: {M}, flag: bool", M,
     "h = x.relu()\nif flag:\n    h = h * 2.0\nreturn h")
case("if_else_pass", f"x: {M}, flag: bool", M,
     "h = x.relu()\nif flag:\n    h = h.tanh()\nelse:\n    pass\nreturn h")
case("if_arms_fresh_different_types_used_after", f"x: {M}, flag: bool", V,
     "if flag:\n    h = x.mean(dim=1, keepdim=False)\nelse:\n    h = x.sum(dim=1, keepdim=False)\nreturn h.relu()",
     note="same-type fresh name in both arms, used after (V)")
case("if_return_in_arm_inside_loop", f"x: {M}, w: {M}, b: {V}, depth: int, phase: int", M,
     "hidden = x.relu()\nfor layer in range(depth):\n    if (layer + phase) % 2 == 0:\n        hidden = F.linear(hidden, w, b).relu()\n    elif layer > 10:\n        return hidden.tanh()\n    else:\n        hidden = F.linear(hidden, w, b).tanh()\nreturn hidden")
case("if_not_bool_param", f"x: {M}, flag: bool", M,
     "h = x.relu()\nif not flag:\n    h = h.tanh()\nreturn h")
case("if_bool_or_local", f"x: {M}, a: bool, b: bool", M,
     "h = x.relu()\nc = a or b\nif c:\n    h = h.tanh()\nreturn h")
case("unary_minus_float", f"x: {M}, t: float", M,
     "s = -t\nh = x.relu()\nif s > 0.0:\n    h = h.tanh()\nreturn h")
case("unary_minus_tensor", f"x: {M}", M, "h = -x\nreturn h.relu()")
case("not_tensor", f"x: {M}", M, "h = x.relu()\nif not x:\n    h = h.tanh()\nreturn h")
case("abs_builtin_tensor", f"x: {M}", M, "return abs(x)")
case("float_div_int_literal", f"x: {M}, t: float", M,
     "s = t / 2\nh = x.relu()\nif s > 1.0:\n    h = h.tanh()\nreturn h")
case("float_compare_int_literal", f"x: {M}, t: float", M,
     "h = x.relu()\nif t > 0:\n    h = h.tanh()\nreturn h")
case("int_mul_chain_in_condition", f"x: {M}, n: int, m: int", M,
     "h = x.relu()\nif n * m - 3 > -n:\n    h = h.tanh()\nreturn h")
case("param_rebound_in_loop_returned", f"x: {M}, n: int", M,
     "for i in range(n):\n    x = x.relu()\nreturn x",
     note="the tensor parameter itself rebound in a loop, then returned")
case("param_rebound_in_loop_then_computed", f"x: {M}, n: int", M,
     "for i in range(n):\n    x = x.relu()\nreturn x.tanh()")
case("param_rebound_before_loop_returned", f"x: {M}, n: int", M,
     "x = x.relu()\nfor i in range(n):\n    x = x.tanh()\nreturn x")
case("int_param_rebound", f"x: {M}, n: int", M,
     "n = n + 1\nh = x.relu()\nfor i in range(n):\n    h = h.tanh()\nreturn h")
case("float_local_loop_accumulate", f"x: {M}, n: int", M,
     "s = 0.0\nfor i in range(n):\n    s = s + 0.5\nh = x.relu()\nif s > 1.0:\n    h = h.tanh()\nreturn h")

EXEMPT_FLAG = "@rextio.exempt\ndef pick(n: int) -> bool:\n    return n % 2 == 0\n\n"
scase("exempt_bool_callback_in_loop_condition_marked", EXEMPT_FLAG +
      f"@rextio.native\ndef f(x: {M}, n: int) -> {M}:\n    h = x.relu()\n    for i in range(n):\n        if pick(i):\n            h = h.tanh()\n    return h")
scase("exempt_callback_in_range_arg_marked", EXEMPT_INC +
      f"@rextio.native\ndef f(x: {M}, n: int) -> {M}:\n    h = x.relu()\n    for i in range(inc(n)):\n        h = h.tanh()\n    return h",
      note="the boundary call is the range bound (evaluated once)")
scase("exempt_callback_in_while_condition_marked", EXEMPT_FLAG +
      f"@rextio.native\ndef f(x: {M}, n: int) -> {M}:\n    h = x.relu()\n    i = 0\n    while pick(i) and i < n:\n        h = h.tanh()\n        i += 1\n    return h",
      note="the boundary call is in a while test")
scase("exempt_float_callback_marked",
      "@rextio.exempt\ndef scale(t: float) -> float:\n    return t * 2.0\n\n" +
      f"@rextio.native\ndef f(x: {M}, t: float) -> {M}:\n    s = scale(t)\n    h = x.relu()\n    if s > 1.0:\n        h = h.tanh()\n    return h")
scase("fallback_only_helper_in_loop_marked", "def half(n: int) -> int:\n    return n // 2\n\n" +
      f"@rextio.native\ndef f(x: {M}, n: int) -> {M}:\n    h = x.relu()\n    i = 0\n    while i < n:\n        i = half(i) + 1\n        h = h.tanh()\n    return h")
scase("rejected_helper_call", "def conv(t: float) -> int:\n    return int(t)\n\n" +
      f"def f(x: {M}, t: float) -> {M}:\n    h = x.relu()\n    for i in range(conv(t)):\n        h = h.tanh()\n    return h",
      note="the callee is a candidate that Core rejects (RXT030)")
scase("rejected_helper_call_marked", "def conv(t: float) -> int:\n    return int(t)\n\n" +
      f"@rextio.native\ndef f(x: {M}, t: float) -> {M}:\n    h = x.relu()\n    for i in range(conv(t)):\n        h = h.tanh()\n    return h")
scase("exempt_scalar_only_caller_marked", EXEMPT_INC +
      "@rextio.native\ndef f(n: int) -> int:\n    total = 0\n    for i in range(n):\n        total = total + inc(i)\n    return total",
      note="scalar-only caller, boundary call in a loop")

case("scalar_only_loop_sum", "n: int", "int",
     "total = 0\nfor i in range(n):\n    total += i\nreturn total")
case("scalar_only_while_gcd", "a: int, b: int", "int",
     "while b != 0:\n    t = b\n    b = a % b\n    a = t\nreturn a",
     note="t first bound in the loop body, parameters reassigned")
case("scalar_only_while_gcd_predeclared", "a: int, b: int", "int",
     "t = 0\nwhile b != 0:\n    t = b\n    b = a % b\n    a = t\nreturn a")
case("scalar_only_float_loop", "t: float, n: int", "float",
     "s = t\nfor i in range(n):\n    s = s * 0.5 + 1.0\nreturn s")
case("scalar_only_bool_return", "n: int, m: int", "bool",
     "if n > m:\n    return True\nreturn n == m")
case("scalar_only_floordiv", "n: int", "int", "return n // 2")
case("scalar_only_break_continue", "n: int", "int",
     "total = 0\nfor i in range(n):\n    if i % 3 == 0:\n        continue\n    if total > 100:\n        break\n    total = total + i\nreturn total")
case("scalar_only_neg_mod", "n: int, m: int", "int", "return -n % m")
case("scalar_only_overflow_literal", "n: int", "int", "return n + 9223372036854775807")

# --------------------------------------------------------------------------------------
# Scalar-only functions (route native-direct): these are also built with `rextio build`
# (no torch needed) and, when the build succeeds, called through the generated wrapper
# with REXTIO_NATIVE_MODE=native; `calls` lists the argument tuples.
# --------------------------------------------------------------------------------------
I64_MIN = -9223372036854775808
case("scalar_only_add_overflow", "n: int", "int", "return n + 9223372036854775807",
     calls=[[0], [1], [-5]])
case("scalar_only_literal_overflow", "n: int", "int", "k = 9223372036854775807 + 1\nreturn k + n",
     calls=[[0]])
case("scalar_only_mul_overflow", "n: int, m: int", "int", "return n * m",
     calls=[[3, 4], [4611686018427387904, 2]])
case("scalar_only_sub_overflow", "n: int", "int", "return n - 1", calls=[[0], [I64_MIN]])
case("scalar_only_neg_overflow", "n: int", "int", "return -n", calls=[[5], [I64_MIN]])
case("scalar_only_abs_overflow", "n: int", "int", "return abs(n)", calls=[[-5], [I64_MIN]])
case("scalar_only_mod_semantics", "n: int, m: int", "int", "return n % m",
     calls=[[7, 3], [-7, 3], [7, -3], [-7, -3], [I64_MIN, -1], [1, 0]])
case("scalar_only_float_div_mod", "t: float, u: float", "float", "a = t / u\nb = t % u\nreturn a + b",
     calls=[[1.0, 2.0], [-1.0, 3.0], [1.0, -3.0], [1.0, 0.0], [3, 2], [True, 2.0]])
case("scalar_only_float_mod_zero", "t: float, u: float", "float", "return t % u",
     calls=[[1.0, 0.0], [-0.0, 3.0], [3.0, -3.0]])
case("scalar_only_range_sum", "n: int", "int",
     "total = 0\nfor i in range(n):\n    total += i\nreturn total",
     calls=[[10], [0], [-3], [True], [3.0], ["3"], [None], [9223372036854775808]],
     note="the last call would loop 2**63 times in Python: the original is not called for it")
case("scalar_only_range_step", "a: int, b: int", "int",
     "total = 0\nfor i in range(a, b, 3):\n    total = total + i\nreturn total",
     calls=[[0, 10], [10, 0], [-5, 5]])
case("scalar_only_range_huge_break", "n: int", "int",
     "total = 0\nfor i in range(1000000000000):\n    if i >= n:\n        break\n    total = total + 1\nreturn total",
     calls=[[5]])
case("scalar_only_while_break_continue", "n: int", "int",
     "total = 0\ni = 0\nwhile True:\n    i += 1\n    if i > n:\n        break\n    if i % 2 == 0:\n        continue\n    total = total + i\nreturn total",
     calls=[[10], [0]])
case("scalar_only_bool_param", "flag: bool", "int", "if flag:\n    return 1\nreturn 0",
     calls=[[True], [False], [1], [None]])
case("scalar_only_float_param", "t: float", "float", "return t * 2.0",
     calls=[[1.5], [2], [True], ["x"]])
case("scalar_only_gcd_params_reassigned", "a: int, b: int", "int",
     "while b != 0:\n    t = b\n    b = a % b\n    a = t\nreturn a",
     calls=[[12, 18], [-12, 18], [5, 0]])
case("scalar_only_shared_temp_arms", "flag: bool", "int",
     "k = 0\nif flag:\n    t = 1\n    k = t + 1\nelse:\n    t = 2\n    k = t * 2\nreturn k",
     note="the same name first bound in both arms (each arm reads only its own)", calls=[[True]])
case("scalar_only_temp_rebound_after_loop", "n: int", "int",
     "total = 0\nfor i in range(n):\n    t = i * 2\n    total = total + t\nt = total + 1\nreturn t",
     note="a name first bound in a loop body, bound again after the loop", calls=[[3]])
case("scalar_only_loop_var_reassigned", "n: int", "int",
     "total = 0\nfor i in range(n):\n    i += 1\n    total = total + i\nreturn total",
     note="the loop target is rebound inside the body", calls=[[3]])
case("scalar_only_nested_loops", "n: int, m: int", "int",
     "total = 0\nfor i in range(n):\n    for j in range(m):\n        if j > i:\n            break\n        total = total + i * j\nreturn total",
     calls=[[4, 4]])
case("scalar_only_chained_compare", "a: int, b: int, c: int", "bool", "return a < b <= c",
     calls=[[1, 2, 2], [2, 1, 3]])
case("scalar_only_early_return_in_loop", "n: int", "int",
     "for i in range(n):\n    if i * i > n:\n        return i\nreturn -1", calls=[[10], [0]])
case("loop_temp_rebound_after", f"x: {M}, n: int", M,
     "h = x.relu()\nfor i in range(n):\n    t = h.tanh()\n    h = t.sigmoid()\nt = h.relu()\nreturn t",
     note="tensor analogue of scalar_only_temp_rebound_after_loop")

# --------------------------------------------------------------------------------------
# Running the reference
# --------------------------------------------------------------------------------------
def build_module(c: dict, force_native: bool) -> str:
    if "source" in c:
        src = c["source"]
        if force_native:
            lines = src.split("\n")
            out = []
            for i, line in enumerate(lines):
                if line.startswith("def f(") and not (i > 0 and lines[i - 1].startswith("@")):
                    out.append("@rextio.native")
                out.append(line)
            src = "\n".join(out)
        return f"{MODULE_HEADER}\n\n{src}"
    text = f"{MODULE_HEADER}\n\n"
    decorator = c["decorator"]
    if force_native and not decorator:
        decorator = "@rextio.native"
    if decorator:
        text += f"{decorator}\n"
    text += f"def f({c['params']}) -> {c['returns']}:\n"
    for line in (c["prelude"].splitlines() + c["body"].splitlines()):
        text += f"    {line}\n"
    return text


def make_project(rextio: str, root: Path, module: str) -> None:
    if root.exists():
        shutil.rmtree(root)
    (root / "pkg").mkdir(parents=True)
    subprocess.run([rextio, "init", "--project-root", str(root), "-q"], check=True,
                   capture_output=True, text=True)
    toml = (root / "rextio.toml").read_text()
    toml = toml.replace("[plugins]\nenabled = []", '[plugins]\nenabled = ["rextio-torch"]')
    assert 'enabled = ["rextio-torch"]' in toml
    (root / "rextio.toml").write_text(toml)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "kernels.py").write_text(module)


def short(type_key):
    if type_key is None:
        return "None"
    return ABBREV.get(type_key, type_key)


def diag_str(d: dict) -> str:
    return f"{d['severity']}:{d['code']}: {d['message']}"


def loc(d: dict) -> str:
    return f"{d.get('line')}:{d.get('column')}"


def run_check(rextio: str, root: Path) -> dict:
    proc = subprocess.run([rextio, "check", str(root)], capture_output=True, text=True,
                          env={**os.environ, "NO_COLOR": "1"})
    report = root / ".rextio" / "reports" / "check.json"
    result = {"rc": proc.returncode}
    if not report.exists():
        result["error"] = (proc.stdout + proc.stderr).strip().splitlines()[-3:]
        return result
    data = json.loads(report.read_text())
    functions = {}
    for module in data["modules"]:
        if module["module_name"] != "pkg.kernels":
            continue
        for fn in module["functions"]:
            functions[fn["name"]] = fn
    result["report"] = data
    result["functions"] = functions
    result["module_diagnostics"] = [
        diag_str(d) for m in data["modules"] for d in m.get("diagnostics", [])
    ]
    return result


def function_record(data: dict, fn: dict) -> dict:
    qual = fn["qualname"]
    diags = [d for d in data["diagnostics"] if d.get("function_name") == qual]
    for d in fn.get("diagnostics", []):
        if not any(diag_str(d) == diag_str(e) and loc(d) == loc(e) for e in diags):
            diags.append(d)
    claims = sorted(
        fn.get("plugin_claims", []),
        key=lambda c: (c["line"], c["column"], c.get("end_line") or 0, c.get("end_column") or 0),
    )
    pa = fn.get("promotion_assessment") or {}
    return {
        "status": fn["native_status"],
        "route": fn["route"],
        "is_native_candidate": fn["is_native_candidate"],
        "rejection_codes": fn.get("rejection_codes", []),
        "claims": [f"{c['rule_id']} -> {short(c['result_type'])}" for c in claims],
        "claim_locations": [f"{c['line']}:{c['column']}" for c in claims],
        "diagnostics": [diag_str(d) for d in diags],
        "diagnostic_locations": [loc(d) for d in diags],
        "blockers": [f"{d['kind']}:{d['code']}: {d['message']}" for d in pa.get("diagnostics", [])],
        "blocker_locations": [loc(d) for d in pa.get("diagnostics", [])],
        "promotion_status": pa.get("status"),
    }


def classify(auto: dict, native: dict | None) -> tuple[str, str]:
    """Outcome word and detail, derived mechanically from the two check runs."""
    status = auto["status"]
    codes = [d.split(":")[1] for d in auto["diagnostics"] if d.startswith("error:")]
    if status == "accepted":
        if auto["claims"]:
            return "CLAIM", "; ".join(
                c.split(" -> ")[0].replace("rextio-torch/", "") + "\u2192" + c.split(" -> ")[1]
                for c in auto["claims"]
            )
        return "CORE-NATIVE", f"accepted without claims, route {auto['route']}"
    if status == "rejected":
        plugin = [c for c in codes if c.startswith("RXTP-")]
        if plugin:
            return "REJECT", ", ".join(dict.fromkeys(plugin))
        if codes and all(c == "RXT030" for c in codes):
            return "NOTCOVERED", "core RXT030"
        return "CORE-REJECT", ", ".join(dict.fromkeys(codes)) or "rejected"
    # not-candidate (auto mode): Core's blockers keep the function on Python silently.
    blocker_codes = list(dict.fromkeys(b.split(":")[1] for b in auto["blockers"]))
    nat = "?"
    if native is not None:
        ncodes = [d.split(":")[1] for d in native["diagnostics"]
                  if d.startswith("error:") or d.startswith("warning:")]
        nat = f"{native['status']} ({native['route']})" + (
            f" {', '.join(dict.fromkeys(ncodes))}" if ncodes else "")
    detail = (f"not-candidate (auto; blockers {', '.join(blocker_codes) or 'none'}); "
              f"@rextio.native \u2192 {nat}")
    return "NOT-CANDIDATE", detail


def run_generate(rextio: str, root: Path) -> dict:
    proc = subprocess.run([rextio, "generate", str(root), "-q"], capture_output=True, text=True)
    lib = root / ".rextio" / "generated" / "rust" / "src" / "lib.rs"
    out = {"rc": proc.returncode, "native_functions": []}
    if proc.returncode != 0:
        lines = [ln.strip() for ln in (proc.stdout + proc.stderr).splitlines()
                 if re.match(r"\s*(RXT\d{3} |Cause:)", ln)]
        out["error"] = lines
    if lib.exists():
        text = lib.read_text()
        out["native_functions"] = sorted(
            m.group(1) for m in re.finditer(r"\nfn pkg__kernels__(\w+)[<(]", text)
        )
    return out


CALL_SCRIPT = """
import json, os, sys, types
sys.path.insert(0, sys.argv[1])
# The module header imports torch; these scalar-only functions never touch it, and the
# scratch environment has no torch, so empty stand-in modules satisfy the imports.
torch = types.ModuleType("torch"); torch.nn = types.ModuleType("torch.nn")
torch.nn.functional = types.ModuleType("torch.nn.functional")
sys.modules.update({"torch": torch, "torch.nn": torch.nn, "torch.nn.functional": torch.nn.functional})
os.environ["REXTIO_NATIVE_MODE"] = "native"
import importlib.util
from pkg import kernels
# The original function, loaded from the project's source under another name (the
# generated package's _fallback_kernels has its names rebound to the native dispatch).
spec = importlib.util.spec_from_file_location("rextio_case_original", sys.argv[3])
original = importlib.util.module_from_spec(spec)
spec.loader.exec_module(original)
def call(fn, args):
    try:
        return repr(fn(*args))
    except BaseException as exc:
        return f"{type(exc).__name__}: {exc}"
def python_call(args):
    # Arguments whose Python run would not finish (a range over 2**63) are not run.
    if any(type(a) is int and abs(a) > 2**40 for a in args) and "range" in open(sys.argv[3]).read():
        return "not run (would not finish)"
    return call(original.f, args)
print(json.dumps([[call(kernels.f, a), python_call(a)] for a in json.loads(sys.argv[2])]))
"""


def run_build(rextio: str, root: Path, target_dir: Path, calls) -> dict:
    """`rextio build` a scalar-only project (no torch needed) and call f natively."""
    # Keep Cargo's target folder between cases (the crate path is the same for every
    # case), so that only the generated crate is recompiled.
    target_dir.mkdir(exist_ok=True)
    crate = root / ".rextio" / "generated" / "rust"
    crate.mkdir(parents=True, exist_ok=True)
    if not (crate / "target").exists():
        (crate / "target").symlink_to(target_dir)
    env = {**os.environ, "CARGO_BUILD_JOBS": "1"}
    proc = subprocess.run(["nice", "-n", "19", rextio, "build", str(root), "--fallback", "cpython"],
                          capture_output=True, text=True, env=env)
    text = proc.stdout + proc.stderr
    status = re.search(r"native build: (\w+)", text)
    out = {"rc": proc.returncode, "native_build": status.group(1) if status else None}
    errors = [ln.strip() for ln in text.splitlines() if ln.startswith("error[")]
    if errors:
        out["rust_errors"] = errors
    codes = [ln.strip() for ln in text.splitlines() if re.match(r"RXT\d{3} ", ln)]
    if codes:
        out["messages"] = codes
    if calls and out["native_build"] == "built":
        python = str(Path(rextio).parent / "python")
        res = subprocess.run([python, "-c", CALL_SCRIPT, str(root / ".rextio" / "build" / "python"),
                              json.dumps(calls), str(root / "pkg" / "kernels.py")],
                             capture_output=True, text=True, timeout=120)
        if res.returncode == 0:
            out["calls"] = [{"args": a, "native": r[0], "python": r[1]}
                            for a, r in zip(calls, json.loads(res.stdout))]
        else:
            out["calls_error"] = res.stderr.strip()[-300:]
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rextio", default="/tmp/refvenv/bin/rextio")
    ap.add_argument("--out", default=str(HERE / "control-flow.json"))
    ap.add_argument("--only", default=None, help="comma-separated case ids (prints, writes nothing)")
    ap.add_argument("--update", action="store_true",
                    help="with --only: rerun those cases and replace them in --out")
    args = ap.parse_args()
    version = subprocess.run([args.rextio, "--version"], capture_output=True, text=True).stdout.strip()
    ids = [c["id"] for c in CASES]
    dup = {i for i in ids if ids.count(i) > 1}
    assert not dup, dup
    selected = CASES if not args.only else [c for c in CASES if c["id"] in args.only.split(",")]
    work = Path(tempfile.mkdtemp(prefix="rextio-cf-"))
    out_cases = []
    for c in selected:
        rec = {k: v for k, v in c.items() if k != "note"}
        if c.get("note"):
            rec["note"] = c["note"]
        module_auto = build_module(c, force_native=False)
        make_project(args.rextio, work / "auto", module_auto)
        auto_run = run_check(args.rextio, work / "auto")
        gen = run_generate(args.rextio, work / "auto") if "report" in auto_run else None
        make_project(args.rextio, work / "native", build_module(c, force_native=True))
        native_run = run_check(args.rextio, work / "native")
        if "report" not in auto_run:
            rec.update({"outcome": "PLUGIN-ERROR", "detail": " | ".join(auto_run["error"]),
                        "claims": None, "diagnostics": None})
        else:
            fn = auto_run["functions"].get("f")
            auto = function_record(auto_run["report"], fn)
            native = None
            if "report" in native_run and "f" in native_run["functions"]:
                native = function_record(native_run["report"], native_run["functions"]["f"])
            outcome, detail = classify(auto, native)
            rec.update({"outcome": outcome, "detail": detail, "claims": auto["claims"],
                        "diagnostics": auto["diagnostics"]})
            rec["auto"] = auto
            if native is not None:
                rec["native_marked"] = {k: native[k] for k in (
                    "status", "route", "claims", "diagnostics", "diagnostic_locations",
                    "blockers", "blocker_locations")}
            elif "error" in native_run:
                rec["native_marked"] = {"error": native_run["error"]}
            others = {
                name: {"status": ofn["native_status"], "route": ofn["route"],
                       "diagnostics": function_record(auto_run["report"], ofn)["diagnostics"]}
                for name, ofn in auto_run["functions"].items() if name != "f"
            }
            if others:
                rec["other_functions"] = others
            if auto_run["module_diagnostics"]:
                rec["module_diagnostics"] = auto_run["module_diagnostics"]
            rec["generate"] = gen
            if auto["status"] == "accepted" and auto["route"] == "native-direct":
                rec["build"] = run_build(args.rextio, work / "auto", work / "target", c.get("calls"))
        out_cases.append(rec)
        print(f"{c['id']}: {rec['outcome']}  {rec['detail']}", file=sys.stderr)
    shutil.rmtree(work, ignore_errors=True)
    if args.only and args.update:
        corpus = json.loads(Path(args.out).read_text())
        fresh = {c["id"]: c for c in out_cases}
        corpus["cases"] = [fresh.get(c["id"], c) for c in corpus["cases"]]
        Path(args.out).write_text(json.dumps(corpus, indent=1) + "\n")
        print(f"updated {len(fresh)} cases in {args.out}", file=sys.stderr)
        return 0
    if args.only:
        print(json.dumps(out_cases, indent=1))
        return 0
    corpus = {
        "about": (
            f"Scalar control flow as decided by the reference ({version}, rextio-torch 0.1.3), "
            f"recorded {datetime.date.today().isoformat()} by tests/conformance/gen_control_flow.py "
            "(rextio check on a throw-away project per case, [plugins] enabled = [\"rextio-torch\"], "
            "default native_marker = \"auto\"). Each case is a module: module_header, a blank line, "
            "then either `source`, or the decorator line (if any) and `def f(<params>) -> <returns>:` "
            "with <prelude> and <body> indented by four spaces; line:column positions refer to that "
            "module (line 1 = first header line, columns 0-based). The focus is function `f`. "
            "outcome (from the auto-mode run, derived mechanically): CLAIM (accepted, route "
            "native-plugin:rextio-torch; claims in source order), CORE-NATIVE (accepted with no "
            "plugin claim: a scalar-only function, route native), REJECT (status rejected with a "
            "plugin RXTP-TORCH code; detail = code), NOTCOVERED (rejected only with Core RXT030), "
            "CORE-REJECT (rejected with Core codes only, e.g. RXT070/RXT076/RXT092/RXT010), "
            "NOT-CANDIDATE (auto discovery silently keeps f on Python: status not-candidate, the "
            "reasons are Core's promotion blockers in auto.blockers; the sites that "
            "reference-claims.public.json calls NOT-OFFERED -- dynamic keyword values, //, **, += "
            "on tensors -- land here, each with its RXT010 blocker), "
            "PLUGIN-ERROR (check aborted). `diagnostics` are f's diagnostics in the auto run as "
            "'severity:CODE: message', with `auto.diagnostic_locations` aligned; `auto.blockers` "
            "are promotion_assessment diagnostics as 'kind:CODE: message' with "
            "`auto.blocker_locations`; `native_marked` is the same function checked with "
            "@rextio.native added to `def f`; `generate` is `rextio generate` on the auto project "
            "(rc and the exported native functions of pkg.kernels). `claims` lists the plugin "
            "claims check.json records for f even when f itself is not native. Scalar-only cases "
            "accepted with route native-direct also carry `build`: `rextio build` of the project "
            "(native_build built/failed, the rustc errors, the RXT messages) and, when built, "
            "`calls`: f called through the generated wrapper with REXTIO_NATIVE_MODE=native "
            "(`native`) and the original Python function (`python`), results as repr or "
            "'ExceptionType: message'. Plugin-typed functions cannot be built here (no torch)."
        ),
        "legend": {"M": M, "V": V, "L": L, "CM": "TensorF32Cuda0_2D", "CV": "TensorF32Cuda0_1D"},
        "module_header": MODULE_HEADER,
        "cases": out_cases,
    }
    Path(args.out).write_text(json.dumps(corpus, indent=1) + "\n")
    print(f"wrote {args.out}: {len(out_cases)} cases", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
