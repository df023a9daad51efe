//! A user module's `forward` (`rextio_frontend::analyze_method`): `self.<member>` lowered to
//! the table's ops over hidden parameters, with the spans of the user's source.

use rextio_frontend::module::ModuleDescription;
use rextio_frontend::{analyze_method, Status, Surface};

const SOURCE: &str = r#"import torch.nn as nn
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


class Net(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu1D:
        h = self.block(self.fc1(x)) * self.scale
        return self.head(self.drop(h)).mean(dim=-1)


class Other(nn.Module):
    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return self.norm(x)
"#;

const DESCRIPTION: &str = r#"{
  "members": {
    "fc1": {"kind": "linear", "weight": "self_fc1_weight", "bias": "self_fc1_bias"},
    "block": {"kind": "sequential", "layers": [{"kind": "method", "name": "relu"}, {"kind": "functional", "name": "gelu"}]},
    "drop": {"kind": "identity"},
    "head": {"kind": "sequential", "layers": [{"kind": "linear", "weight": "self_head_0_weight", "bias": null}, {"kind": "softmax", "dim": -1}]},
    "scale": {"kind": "tensor", "hidden": "self_scale"}
  },
  "hidden": [
    {"name": "self_fc1_weight", "marker": "TensorF32Cpu2D"},
    {"name": "self_fc1_bias", "marker": "TensorF32Cpu1D"},
    {"name": "self_head_0_weight", "marker": "TensorF32Cpu2D"},
    {"name": "self_scale", "marker": "TensorF32Cpu1D"}
  ]
}"#;

/// The IR of the method on `line` of `source`, which must compile (extended surface).
fn native_ir(source: &str, line: u32, description: &ModuleDescription) -> String {
    let analysis = analyze_method("net.py", source, line, description, Surface::Extended).unwrap();
    let function = &analysis.functions[0];
    assert_eq!(
        function.status,
        Status::Native,
        "{}",
        analysis.render_diagnostics()
    );
    rextio_ir::print_function(function.ir.as_ref().unwrap())
}

#[test]
fn members_lower_to_ops_over_hidden_parameters() {
    let description = ModuleDescription::from_json(DESCRIPTION).unwrap();
    let analysis = analyze_method("net.py", SOURCE, 9, &description, Surface::Extended).unwrap();
    let function = &analysis.functions[0];
    assert_eq!(function.name, "forward");
    assert_eq!(
        function.status,
        Status::Native,
        "{}",
        analysis.render_diagnostics()
    );
    let ir = rextio_ir::print_function(function.ir.as_ref().unwrap());
    for needle in [
        "linear",
        "relu",
        "gelu",
        "softmax",
        "mul",
        "mean",
        "self_fc1_weight",
        "self_scale",
    ] {
        assert!(ir.contains(needle), "{needle} not in\n{ir}");
    }
    let names: Vec<&str> = function
        .ir
        .as_ref()
        .unwrap()
        .params
        .iter()
        .map(|p| p.name.as_str())
        .collect();
    assert_eq!(
        names,
        [
            "x",
            "self_fc1_weight",
            "self_fc1_bias",
            "self_head_0_weight",
            "self_scale"
        ]
    );
    // Every claimed site stands where the user wrote the member's call.
    let lines: Vec<u32> = function.sites.iter().map(|s| s.line).collect();
    assert!(lines.iter().all(|l| *l == 10 || *l == 11), "{lines:?}");
    let fc1 = function
        .sites
        .iter()
        .find(|s| s.target == "torch.nn.functional.linear")
        .unwrap();
    assert_eq!((fc1.line, fc1.column), (10, 24));
}

#[test]
fn an_unknown_member_is_a_diagnostic_at_the_users_source() {
    let description = ModuleDescription::from_json(DESCRIPTION).unwrap();
    let analysis = analyze_method("net.py", SOURCE, 15, &description, Surface::Extended).unwrap();
    let function = &analysis.functions[0];
    assert_eq!(function.status, Status::Fallback);
    let rendered = analysis.render_diagnostics();
    assert!(rendered.contains("net.py:16:21"), "{rendered}");
    assert!(rendered.contains("self.norm"), "{rendered}");
}

#[test]
fn no_method_on_that_line_is_an_error() {
    let description = ModuleDescription::default();
    let error = analyze_method("net.py", SOURCE, 3, &description, Surface::Extended).unwrap_err();
    assert!(error.contains("no method"), "{error}");
}

const NORM_SOURCE: &str = r#"import torch.nn as nn
from rextio_torch.types import TensorF32Cpu2D, TensorI64Cpu1D


class Net(nn.Module):
    def forward(self, ids: TensorI64Cpu1D) -> TensorF32Cpu2D:
        return self.plain(self.ln(self.embed(ids)))
"#;

const NORM_DESCRIPTION: &str = r#"{
  "members": {
    "embed": {"kind": "embedding", "weight": "self_embed_weight"},
    "ln": {"kind": "layer_norm", "normalized": 8, "weight": "self_ln_weight", "bias": "self_ln_bias", "eps": 1e-05},
    "plain": {"kind": "layer_norm", "normalized": 8, "weight": null, "bias": null, "eps": 0.001}
  },
  "hidden": [
    {"name": "self_embed_weight", "marker": "TensorF32Cpu2D"},
    {"name": "self_ln_weight", "marker": "TensorF32Cpu1D"},
    {"name": "self_ln_bias", "marker": "TensorF32Cpu1D"}
  ]
}"#;

/// `Embedding` and `LayerNorm` members (with and without affine parameters) lower to
/// `F.embedding` and `F.layer_norm` over hidden parameters.
#[test]
fn embedding_and_layer_norm_members() {
    let description = ModuleDescription::from_json(NORM_DESCRIPTION).unwrap();
    let ir = native_ir(NORM_SOURCE, 6, &description);
    assert!(ir.contains("= embedding %0, %1"), "{ir}");
    assert!(ir.contains("eps=1e-5") && ir.contains("eps=0.001"), "{ir}");
    assert_eq!(ir.matches("= layer_norm").count(), 2, "{ir}");
}

const INLINE_SOURCE: &str = r#"import torch
import torch.nn as nn
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu2D


class Block(nn.Module):
    def forward(self, x, alpha: float = 0.5):
        """A block: its docstring does nothing when it runs."""
        h = self.fc(x).relu()
        return h * alpha + x * self.gain


class Net(nn.Module):
    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        h = x.tanh() + self.block(x)
        return self.block(h, alpha=0.25) - self.seq(h)


class Early(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        return x.relu()


class Refused(nn.Module):
    def forward(self, x: TensorF32Cpu2D, flag: bool) -> TensorF32Cpu2D:
        a = self.block(x) if flag else x
        b = self.early(x)
        return self.norm(a + b)
"#;

const BLOCK: &str = r#"{"kind": "module", "line": 8, "members": {
    "fc": {"kind": "linear", "weight": "self_block_fc_weight", "bias": null},
    "gain": {"kind": "tensor", "hidden": "self_block_gain"}
}}"#;

fn inline_description(extra: &str) -> ModuleDescription {
    ModuleDescription::from_json(&format!(
        r#"{{
  "members": {{
    "block": {BLOCK},
    "seq": {{"kind": "sequential", "layers": [{{"kind": "method", "name": "sigmoid"}}, {{"kind": "module", "line": 8, "members": {{
        "fc": {{"kind": "linear", "weight": "self_seq_1_fc_weight", "bias": null}},
        "gain": {{"kind": "tensor", "hidden": "self_seq_1_gain"}}
    }}}}]}}{extra}
  }},
  "hidden": [
    {{"name": "self_block_fc_weight", "marker": "TensorF32Cpu2D"}},
    {{"name": "self_block_gain", "marker": "TensorF32Cpu1D"}},
    {{"name": "self_seq_1_fc_weight", "marker": "TensorF32Cpu2D"}},
    {{"name": "self_seq_1_gain", "marker": "TensorF32Cpu1D"}}
  ]
}}"#
    ))
    .unwrap()
}

/// A user module member's forward is inlined at each call (twice here, once inside a
/// Sequential): its sites keep the callee's lines, its names are fresh, its parameters bind
/// positional, keyword and default arguments, and what is evaluated before the call in the
/// same statement (`x.tanh()`) stays before it.
#[test]
fn a_user_module_member_is_inlined() {
    let description = inline_description("");
    let ir = native_ir(INLINE_SOURCE, 15, &description);
    // Three inlined bodies: three products, each over its own hidden weight.
    assert_eq!(ir.matches("= linear").count(), 3, "{ir}");
    for needle in [
        "self_block_fc_weight",
        "self_seq_1_gain",
        "# self_block__h",
        "# self_block__h_2",
        "# self_seq_1__h",
        "= sigmoid",
    ] {
        assert!(ir.contains(needle), "{needle} not in\n{ir}");
    }
    // `x.tanh()` is evaluated before the block's body, as Python evaluates the `+`.
    let tanh = ir.find("= tanh").unwrap();
    let first_linear = ir.find("= linear").unwrap();
    assert!(tanh < first_linear, "{ir}");
    // The callee's sites stand on its own lines (10 and 11); the caller's on 16 and 17.
    let analysis =
        analyze_method("net.py", INLINE_SOURCE, 15, &description, Surface::Extended).unwrap();
    let mut lines: Vec<u32> = analysis.functions[0].sites.iter().map(|s| s.line).collect();
    lines.sort_unstable();
    lines.dedup();
    assert_eq!(lines, [10, 11, 16, 17]);
}

/// Calls that are not inlined are `RXT093`, each saying why, at the caller's `self.<name>`
/// (and not also an unresolved call).
#[test]
fn calls_that_are_not_inlined_say_why() {
    let description = inline_description(
        r#",
    "early": {"kind": "module", "line": 21, "members": {}},
    "norm": {"kind": "unsupported", "why": "BatchNorm1d is not a layer rextio-torch compiles"}"#,
    );
    let analysis =
        analyze_method("net.py", INLINE_SOURCE, 28, &description, Surface::Extended).unwrap();
    let function = &analysis.functions[0];
    assert_eq!(function.status, Status::Fallback);
    let rendered = analysis.render_diagnostics();
    let codes: Vec<&str> = function
        .diagnostics
        .iter()
        .map(|d| d.code.as_str())
        .collect();
    assert_eq!(codes, ["RXT093", "RXT093", "RXT093"], "{rendered}");
    for needle in [
        "net.py:29:13",
        "a call of the module member `self.block` is not compiled in a branch of a conditional expression",
        "net.py:30:13",
        "`self.early` is a user module whose forward is not inlined: its forward has a `return` before its last statement",
        "net.py:31:16",
        "`self.norm` is not compiled: BatchNorm1d is not a layer rextio-torch compiles",
    ] {
        assert!(rendered.contains(needle), "{needle} not in\n{rendered}");
    }
}

const LIST_SOURCE: &str = r#"import torch.nn as nn
from rextio_torch.types import TensorF32Cpu2D


class Net(nn.Module):
    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        for layer in self.layers:
            x = layer(x).relu()
        return self.layers[-1](x)


class Leaky(nn.Module):
    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        for layer in self.layers:
            x = layer(x)
            y = layer
        return x
"#;

const LIST_DESCRIPTION: &str = r#"{
  "members": {
    "layers": {"kind": "list", "items": [
        {"kind": "linear", "weight": "self_layers_0_weight", "bias": null},
        {"kind": "linear", "weight": "self_layers_1_weight", "bias": null}
    ]}
  },
  "hidden": [
    {"name": "self_layers_0_weight", "marker": "TensorF32Cpu2D"},
    {"name": "self_layers_1_weight", "marker": "TensorF32Cpu2D"}
  ]
}"#;

/// A loop over a ModuleList is unrolled, one copy of its body per item; an item by a literal
/// index (negative too) is that item; the loop variable used other than called is `RXT093`.
#[test]
fn a_module_list_is_unrolled() {
    let description = ModuleDescription::from_json(LIST_DESCRIPTION).unwrap();
    let ir = native_ir(LIST_SOURCE, 6, &description);
    // Two unrolled copies, then the last item again: three products, %2 (layers[1]) twice.
    assert_eq!(ir.matches("linear").count(), 3, "{ir}");
    assert_eq!(ir.matches(", %2").count(), 2, "{ir}");
    let analysis =
        analyze_method("net.py", LIST_SOURCE, 13, &description, Surface::Extended).unwrap();
    let rendered = analysis.render_diagnostics();
    assert_eq!(analysis.functions[0].status, Status::Fallback);
    assert!(
        rendered.contains("`layer` stands for a layer of the ModuleList `self.layers`")
            && rendered.contains("net.py:16:17"),
        "{rendered}"
    );
    // Once, though the body is unrolled twice.
    assert_eq!(
        rendered.matches("stands for a layer").count(),
        1,
        "{rendered}"
    );
}

const CONSTANT_SOURCE: &str = r#"import torch.nn as nn
from rextio_torch.types import TensorF32Cpu2D


class Net(nn.Module):
    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        h = x * self.scale + (x * self.shift) * self.zero
        if self.flag:
            h = h.reshape(-1, self.width)
        return h - self.table
"#;

/// Python scalar attributes are literals (a negative one as `-` of its magnitude, `-0.0`
/// keeping its sign); an attribute described as not compiled is `RXT093` where it is read.
#[test]
fn constant_members_are_literals() {
    let description = ModuleDescription::from_json(
        r#"{"members": {
            "scale": {"kind": "constant", "value": -0.5},
            "shift": {"kind": "constant", "value": -3},
            "zero": {"kind": "constant", "value": -0.0},
            "flag": {"kind": "constant", "value": true},
            "width": {"kind": "constant", "value": 4},
            "table": {"kind": "unsupported", "why": "a tensor attribute that is neither a parameter nor a buffer"}
        }}"#,
    )
    .unwrap();
    let analysis = analyze_method(
        "net.py",
        CONSTANT_SOURCE,
        6,
        &description,
        Surface::Extended,
    )
    .unwrap();
    let function = &analysis.functions[0];
    let rendered = analysis.render_diagnostics();
    assert_eq!(function.status, Status::Fallback);
    let codes: Vec<&str> = function
        .diagnostics
        .iter()
        .map(|d| d.code.as_str())
        .collect();
    assert_eq!(codes, ["RXT093"], "{rendered}");
    assert!(
        rendered.contains("`self.table` is not compiled: a tensor attribute"),
        "{rendered}"
    );
    assert!(rendered.contains("net.py:10:20"), "{rendered}");

    // Without the tensor attribute it compiles, the constants as literals.
    let source = CONSTANT_SOURCE.replace(" - self.table", "");
    let ir = native_ir(&source, 6, &description);
    for needle in [
        "const.float -0.5",
        "const.int -3",
        "const.float -0.0",
        "const.int 4",
    ] {
        assert!(ir.contains(needle), "{needle} not in\n{ir}");
    }
    // `if self.flag:` of `True` is its arm.
    assert!(!ir.contains("\n  if "), "{ir}");
}

const BRANCH_SOURCE: &str = r#"import torch.nn as nn
from rextio_torch.types import TensorF32Cpu2D


class Net(nn.Module):
    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        if self.off:
            x = self.norm(x)
        elif not self.on:
            x = x.sigmoid()
        else:
            x = x.relu()
        if self.p:
            x = x * 2.0
        if self.on:
            return x.tanh()
        return x
"#;

/// `if` on constant members is the arm Python takes (an `elif` chain, `not`, a number's
/// truth), before inlining: a call in an arm that never runs (`self.norm`, not compiled) is
/// not refused. A taken arm that returns keeps its `if`.
#[test]
fn constant_branches_fold_to_the_arm_taken() {
    let description = ModuleDescription::from_json(
        r#"{"members": {
            "off": {"kind": "constant", "value": false},
            "on": {"kind": "constant", "value": true},
            "p": {"kind": "constant", "value": 0.0},
            "norm": {"kind": "unsupported", "why": "BatchNorm1d is not a layer rextio-torch compiles"}
        }}"#,
    )
    .unwrap();
    let ir = native_ir(BRANCH_SOURCE, 6, &description);
    assert!(ir.contains("= relu") && !ir.contains("sigmoid"), "{ir}");
    assert!(!ir.contains("mul"), "{ir}");
    // The returning arm stays an `if` (on the literal `True`).
    assert_eq!(ir.matches("\n  if ").count(), 1, "{ir}");
}

const STRING_SOURCE: &str = r#"import torch.nn as nn
from rextio_torch.types import TensorF32Cpu2D


class Net(nn.Module):
    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        if self.mode == "mean":
            x = self.norm(x)
        elif "relu" == self.mode:
            x = x.relu()
        else:
            x = x.sigmoid()
        if self.pooling in ("cls", "first"):
            x = x.tanh()
        if self.pooling != "cls":
            x = self.norm(x)
        if not self.empty:
            x = x * 2.0
        return x
"#;

/// `if` on a `str` constant member (`==`, `!=`, the literal on either side, `in` a tuple of
/// string literals, its truth) is the arm Python takes, before inlining: the arms that never
/// run (`self.norm`, not compiled) are neither inlined nor refused.
#[test]
fn string_constants_fold_to_the_arm_taken() {
    let description = ModuleDescription::from_json(
        r#"{"members": {
            "mode": {"kind": "constant", "value": "relu"},
            "pooling": {"kind": "constant", "value": "cls"},
            "empty": {"kind": "constant", "value": ""},
            "norm": {"kind": "unsupported", "why": "BatchNorm1d is not a layer rextio-torch compiles"}
        }}"#,
    )
    .unwrap();
    let ir = native_ir(STRING_SOURCE, 6, &description);
    assert!(
        ir.contains("= relu") && ir.contains("= tanh") && ir.contains("mul"),
        "{ir}"
    );
    assert!(!ir.contains("sigmoid") && !ir.contains("\n  if "), "{ir}");
}

/// A function-valued attribute the Python side describes as the activation it holds
/// (`self.act = F.gelu`: a `functional` member) is called as that activation.
#[test]
fn function_members_are_their_activation() {
    let source = "import torch.nn as nn\nfrom rextio_torch.types import TensorF32Cpu2D\n\n\nclass Net(nn.Module):\n    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n        return self.act(x) + self.gate(x)\n";
    let description = ModuleDescription::from_json(
        r#"{"members": {
            "act": {"kind": "functional", "name": "gelu", "approximate": null},
            "gate": {"kind": "method", "name": "sigmoid"}
        }}"#,
    )
    .unwrap();
    let ir = native_ir(source, 6, &description);
    assert!(ir.contains("gelu") && ir.contains("sigmoid"), "{ir}");
}

/// A forward without annotations takes its parameters' types from the description (the
/// call's arguments, on the Python side); without them it is not a candidate.
#[test]
fn parameters_typed_by_the_call() {
    let source = "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x, n):\n        return x.relu() * n\n";
    let typed = ModuleDescription::from_json(
        r#"{"params": [{"name": "x", "marker": "TensorF32Cpu3D"}, {"name": "n", "marker": "float"}]}"#,
    )
    .unwrap();
    let ir = native_ir(source, 5, &typed);
    assert!(ir.contains("%x: tensor<f32, cpu, 3>, %n: float"), "{ir}");
    let analysis = analyze_method(
        "net.py",
        source,
        5,
        &ModuleDescription::default(),
        Surface::Extended,
    )
    .unwrap();
    assert_eq!(analysis.functions[0].status, Status::NotCandidate);
    let unknown =
        ModuleDescription::from_json(r#"{"params": [{"name": "y", "marker": "int"}]}"#).unwrap();
    let error = analyze_method("net.py", source, 5, &unknown, Surface::Extended).unwrap_err();
    assert!(error.contains("no parameter \"y\""), "{error}");
}

/// A float constant reads back from the Python side's JSON bit for bit (`float_roundtrip`:
/// serde_json's default parser put these doubles one ulp off), and so does its literal in
/// the IR: random doubles, the edges of the format, a negative zero.
#[test]
fn float_constants_keep_their_bits() {
    let source = "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x, n):\n        return x * self.s\n";
    let mut state: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut values = vec![
        0.942_450_283_777_050_3,
        0.935_170_918_703_079_3,
        5e-324,
        2.225_073_858_507_201e-308,
        f64::MAX,
        -0.0,
    ];
    for _ in 0..300 {
        // xorshift64*: finite doubles of every exponent.
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        let value = f64::from_bits(state.wrapping_mul(0x2545_F491_4F6C_DD1D));
        if value.is_finite() {
            values.push(value);
        }
    }
    for value in values {
        // Python's `repr`, as `json.dumps` writes a float: Rust's `{:?}` is the same shortest
        // round-trip digits (in another exponent spelling, which JSON reads alike).
        let json = format!(
            r#"{{"members": {{"s": {{"kind": "constant", "value": {value:?}}}}},
                "params": [{{"name": "x", "marker": "TensorF64Cpu2D"}}, {{"name": "n", "marker": "int"}}]}}"#
        );
        let description = ModuleDescription::from_json(&json).unwrap();
        let Some(rextio_frontend::module::Member::Constant {
            value: rextio_frontend::module::Constant::Float(read),
        }) = description.members.get("s")
        else {
            panic!("{json}");
        };
        assert_eq!(
            read.to_bits(),
            value.to_bits(),
            "{value:?} read as {read:?}"
        );
        let ir = native_ir(source, 5, &description);
        let line = ir.lines().find(|l| l.contains("const.float")).unwrap();
        let text = line.rsplit("const.float ").next().unwrap().trim();
        let parsed: f64 = text.parse().unwrap();
        assert_eq!(parsed.to_bits(), value.to_bits(), "{value:?} in {line}");
    }
}

/// Defaults and keyword-only parameters of a module's forward are ordinary parameters (the
/// Python side binds every argument and passes them all in order); `*args` and `**kwargs`
/// stay refused.
#[test]
fn defaults_and_keyword_only_parameters_are_parameters() {
    let source = "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x, k=2, *, scale=0.5):\n        return x.relu() * scale + k\n";
    let typed = ModuleDescription::from_json(
        r#"{"params": [{"name": "x", "marker": "TensorF32Cpu2D"}, {"name": "k", "marker": "int"},
                       {"name": "scale", "marker": "float"}]}"#,
    )
    .unwrap();
    let ir = native_ir(source, 5, &typed);
    assert!(
        ir.contains("%x: tensor<f32, cpu, 2>, %k: int, %scale: float"),
        "{ir}"
    );
    let variadic = source.replace("*, scale=0.5", "*rest, scale=0.5");
    let analysis = analyze_method("net.py", &variadic, 5, &typed, Surface::Extended).unwrap();
    assert_eq!(analysis.functions[0].status, Status::Fallback);
    assert!(
        analysis.render_diagnostics().contains("`*args` parameter"),
        "{}",
        analysis.render_diagnostics()
    );
}

const NONE_SOURCE: &str = r#"import torch
import torch.nn as nn
from typing import Optional
from torch import Tensor


class Net(nn.Module):
    def forward(self, x: torch.Tensor, mask: Optional[Tensor] = None) -> torch.Tensor:
        if mask is not None:
            x = x + mask
        elif not (mask is None and x is None):
            x = x.sigmoid()
        y = x.relu() if mask is None else x.tanh()
        return y
"#;

/// A description typing `x` as a float32 rank-2 tensor and `mask` as `marker`.
fn mask_typed(marker: &str) -> ModuleDescription {
    ModuleDescription::from_json(&format!(
        r#"{{"params": [{{"name": "x", "marker": "TensorF32Cpu2D"}}, {{"name": "mask", "marker": "{marker}"}}]}}"#
    ))
    .unwrap()
}

/// `mask is None` / `is not None` (under `not`, in `and`, in a conditional expression) of an
/// argument the call types fold to the arm Python takes; a None argument is no parameter;
/// `torch.Tensor` annotations (parameters and result) are typed by the call.
#[test]
fn none_arguments_fold_their_tests() {
    let ir = native_ir(NONE_SOURCE, 8, &mask_typed("None"));
    assert!(ir.contains("(%x: tensor<f32, cpu, 2>)"), "{ir}");
    assert!(ir.contains("sigmoid") && ir.contains("relu"), "{ir}");
    assert!(
        !ir.contains("add") && !ir.contains("tanh") && !ir.contains("\n  if "),
        "{ir}"
    );
    let ir = native_ir(NONE_SOURCE, 8, &mask_typed("TensorF32Cpu1D"));
    assert!(
        ir.contains("%x: tensor<f32, cpu, 2>, %mask: tensor<f32, cpu, 1>"),
        "{ir}"
    );
    assert!(ir.contains("add") && ir.contains("tanh"), "{ir}");
    assert!(!ir.contains("sigmoid") && !ir.contains("relu"), "{ir}");
}

/// A None argument used other than in an `is None` test, or bound again other than by a
/// statement of the forward's own body, is `RXT032` at the use; bound again there, it is a
/// local from then on.
#[test]
fn none_arguments_used_otherwise_are_refused() {
    let refused = |body: &str| {
        let source = format!(
            "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x, mask=None):\n{body}"
        );
        let analysis =
            analyze_method("net.py", &source, 5, &mask_typed("None"), Surface::Extended).unwrap();
        let rendered = analysis.render_diagnostics();
        assert_eq!(analysis.functions[0].status, Status::Fallback, "{rendered}");
        assert!(
            rendered.contains("RXT032") && rendered.contains("`mask` is None at this call"),
            "{rendered}"
        );
        // The undefined name it would also be is not reported beside it.
        assert!(
            !rendered.contains("not defined in this scope"),
            "{rendered}"
        );
    };
    refused("        return x + mask\n");
    refused("        y = x.relu()\n        if y.sum() > 0:\n            mask = y\n        return x + mask\n");
    refused("        for _ in range(2):\n            if mask is None:\n                mask = x\n        return x * 2.0\n");
    refused("        f = lambda: mask is None\n        return x * 2.0\n");
    let source = "import torch.nn as nn\n\n\nclass Net(nn.Module):\n    def forward(self, x, mask=None):\n        if mask is None:\n            mask = x * 0.5\n        return x + mask\n";
    let ir = native_ir(source, 5, &mask_typed("None"));
    assert!(ir.contains("mul") && ir.contains("add"), "{ir}");
}

/// The caller's file: no `math`, and its `G` is not the other file's.
const CALLER: &str = r#"import torch.nn as nn
from rextio_torch.types import TensorF32Cpu2D

G = 3


class Net(nn.Module):
    def forward(self, x: TensorF32Cpu2D) -> TensorF32Cpu2D:
        return self.act(x)
"#;

/// The callee's file: its own imports, and a module-level name that is not one.
const CALLEE: &str = r#"import math
import torch.nn.functional as Fn
from torch import nn

G = 2.0


class Act(nn.Module):
    def forward(self, input):
        return Fn.silu(input) * math.sqrt(2.0)


class ReadsG(nn.Module):
    def forward(self, input):
        return input * G


class Broken(nn.Module):
    def forward(self, input):
        h = input.relu()
        return h.frobnicate()
"#;

fn cross_file(line: u32) -> ModuleDescription {
    let description = serde_json::json!({
        "members": {"act": {"kind": "module", "line": line, "members": {}, "source": 0}},
        "sources": [{"path": "/lib/acts.py", "text": CALLEE}],
    });
    ModuleDescription::from_json(&description.to_string()).unwrap()
}

/// A member whose class is in another file is inlined from that file's source, its names
/// read through that file's imports (`Fn`, `math` are not the caller's).
#[test]
fn a_user_module_from_another_file_is_inlined_with_its_imports() {
    let ir = native_ir(CALLER, 8, &cross_file(9));
    assert!(ir.contains("= silu"), "{ir}");
}

/// A module-level name of the other file that is not an import is refused, naming it (the
/// caller's `G` is another value).
#[test]
fn another_files_global_is_refused_by_name() {
    let analysis = analyze_method("net.py", CALLER, 8, &cross_file(14), Surface::Extended).unwrap();
    let rendered = analysis.render_diagnostics();
    assert_eq!(analysis.functions[0].status, Status::Fallback, "{rendered}");
    assert!(
        rendered.contains("RXT093") && rendered.contains("`G`"),
        "{rendered}"
    );
}

/// A site of the other file's code that does not compile points at the call in the
/// caller's file (its spans are the caller's), never past the caller's text.
#[test]
fn another_files_site_points_at_the_call() {
    let analysis = analyze_method("net.py", CALLER, 8, &cross_file(19), Surface::Extended).unwrap();
    let function = &analysis.functions[0];
    assert_eq!(function.status, Status::Fallback);
    let call = CALLER.find("self.act").unwrap() as u32;
    for d in &function.diagnostics {
        let span = d.primary.as_ref().unwrap().span;
        assert!(
            span.start >= call && span.end <= CALLER.len() as u32,
            "{d:?}"
        );
    }
}
