//! The Python spellings of the unary ops, read from the op table
//! (`rextio_ir::for_each_unary_op!`): which call claims which [`UnaryOp`], in which lane,
//! with which rule id and diagnostic code, and whether it belongs to the reference plugin's
//! surface. The lanes (`functional.rs`, `activations.rs`, `unary.rs`) decide sites from the
//! rows a [`Surface`] admits (every row for `check` and `compile`, the reference's for the
//! Rextio plugin); [`super::rules`] appends the rule records of extension spellings;
//! [`plugin_surface`] lists what the Rextio plugin covers.
//!
//! A row of the table names one of the forms below with its fields, e.g.
//! `Reference Math { name: "abs", rule: Rule("rextio-torch/unary-abs-f32-cpu-rank1-2",
//! "RXTP-TORCH-037") }`; the macro here turns it into a [`UnarySpelling`].

use rextio_ir::{UnaryOp, MARKERS};

use super::rules::{RuleOutcome, RuleRecord, ScopeKind};
use super::Literal;

/// A rule id (`rextio-torch/...`) and its diagnostic code (`RXTP-TORCH-NNN`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rule(pub &'static str, pub &'static str);

impl Rule {
    pub fn id(self) -> &'static str {
        self.0
    }

    pub fn code(self) -> &'static str {
        self.1
    }
}

/// Whether a spelling is part of the reference plugin's surface.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Origin {
    /// The reference plugin claims it: its Python symbols are in the Rextio plugin's coverage
    /// and its rule records are among the reference's 50 (in [`super::rules`]).
    Reference,
    /// Ours only: claimed under the extended surface like any spelling, but not by the
    /// Rextio plugin (which decides such a site as the reference does, [`Surface`]) and not
    /// in its coverage; its rule records are generated from the row and follow the
    /// reference's.
    Extension,
}

/// Which surface decides a site (`super::claim_with`): which of the table's spellings a
/// claim reads, and whether the extensions of the other lanes (negative dims) apply.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Surface {
    /// Every spelling and every extension: `check`, `compile` and the CLI by default.
    #[default]
    Extended,
    /// The reference plugin's surface only: the Rextio plugin, which must give the reference
    /// plugin's outcome for every site, and `surface="reference"` / `--surface reference`.
    /// A site only an extension knows is then decided by the other lanes, as the reference
    /// decides it (a `torch.*` call no lane knows is not covered).
    Reference,
}

impl Surface {
    /// Both surfaces, default first.
    pub const ALL: [Surface; 2] = [Surface::Extended, Surface::Reference];

    /// The name the front doors use (`surface="extended"`, `--surface reference`).
    pub fn as_str(self) -> &'static str {
        match self {
            Surface::Extended => "extended",
            Surface::Reference => "reference",
        }
    }

    /// The surface named `name`; the error names the allowed values.
    pub fn parse(name: &str) -> Result<Surface, String> {
        Surface::ALL
            .into_iter()
            .find(|s| s.as_str() == name)
            .ok_or_else(|| format!("surface must be one of 'extended', 'reference', got {name:?}"))
    }

    /// The spellings this surface admits, in table order.
    pub fn iter(self) -> impl Iterator<Item = &'static UnarySpelling> {
        UNARY_SPELLINGS
            .iter()
            .filter(move |s| self == Surface::Extended || s.origin == Origin::Reference)
    }
}

/// The literal value of an optional keyword (`approximate="none"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeywordValue {
    Str(&'static str),
    Bool(bool),
}

impl KeywordValue {
    /// The resolved type Core gives the keyword (`"str"`, `"bool"`).
    pub fn type_name(self) -> &'static str {
        match self {
            KeywordValue::Str(_) => "str",
            KeywordValue::Bool(_) => "bool",
        }
    }

    pub fn literal(self) -> Literal {
        match self {
            KeywordValue::Str(s) => Literal::Str(s.to_string()),
            KeywordValue::Bool(b) => Literal::Bool(b),
        }
    }

    /// Python `repr()` of the value (`'none'`, `False`).
    pub fn repr(self) -> String {
        match self {
            KeywordValue::Str(s) => super::pyrepr::str_repr(s),
            KeywordValue::Bool(true) => "True".to_string(),
            KeywordValue::Bool(false) => "False".to_string(),
        }
    }
}

/// How a spelling is written and which lane claims it. Every form takes float32 CPU rank-1
/// or rank-2 tensors and gives the same type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    /// Activation lane (`claim/activations.rs`): the zero-argument method `t.<method>()`
    /// (`rule_1d`/`rule_2d` by the receiver's rank; every method rejection uses `rule_2d`'s
    /// code, as the reference does) and the function `function(t)` (one positional tensor,
    /// no keywords). A site whose last dotted segment is `method` and that has no receiver
    /// is this lane's whatever its namespace (`F.sigmoid` is not covered by any lane).
    Activation {
        method: &'static str,
        rule_1d: Rule,
        rule_2d: Rule,
        function: &'static str,
        function_rule: Rule,
    },
    /// Activation lane: `target(t)` or `target(t, inplace=False)` (`F.relu`). The messages
    /// call it `functional <display>`.
    FunctionalInplace {
        target: &'static str,
        display: &'static str,
        rule: Rule,
    },
    /// Unary lane (`claim/unary.rs`): `torch.<name>(t)` (one positional non-literal tensor,
    /// no keywords) and the zero-argument method `t.<name>()`.
    Math { name: &'static str, rule: Rule },
    /// Functional lane (`claim/functional.rs`, tried before the activation lane):
    /// `target(t)` or `target(t, <keyword>=<value>)` with exactly that literal (`F.gelu`
    /// with `approximate="none"`). The messages call it `<display>`.
    Functional {
        target: &'static str,
        display: &'static str,
        keyword: (&'static str, KeywordValue),
        rule: Rule,
    },
    /// Activation lane: exactly `target(t)`, one positional tensor and no keyword (`F.sigmoid`,
    /// `F.tanh`: eager's functions take no option, so `inplace=False` is eager's TypeError and
    /// is refused). Another spelling of an op whose [`Form::Activation`] row is the lane's.
    Function { target: &'static str, rule: Rule },
}

/// One Python spelling of a unary op.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UnarySpelling {
    pub op: UnaryOp,
    pub origin: Origin,
    pub form: Form,
}

macro_rules! unary_spellings {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident = $name:literal {
            $($surface:ident $form:ident { $($field:ident : $value:expr),* $(,)? },)*
        },
    )*) => {
        /// Every spelling of every unary op, in table order.
        pub static UNARY_SPELLINGS: &[UnarySpelling] = &[$($(
            UnarySpelling {
                op: UnaryOp::$variant,
                origin: Origin::$surface,
                form: Form::$form { $($field: $value),* },
            },
        )*)*];
    };
}

// The table's values name `Rule(..)` and the keyword values (`Str(..)`, `Bool(..)`)
// unqualified; not every value is in use at every moment.
#[allow(unused_imports)]
use KeywordValue::{Bool, Str};

rextio_ir::for_each_unary_op!(unary_spellings);

/// `torch.nn.functional.gelu` -> `F.gelu`, as the rule records write it.
fn short(target: &str) -> String {
    match target.strip_prefix("torch.nn.functional.") {
        Some(name) => format!("F.{name}"),
        None => target.to_string(),
    }
}

impl UnarySpelling {
    /// The rule records this spelling claims and rejects with, as `(scope, rule, accepted
    /// form -> result)`, in the order the reference lists such records.
    pub fn rules(&self) -> Vec<(ScopeKind, Rule, String)> {
        let call = ScopeKind::Call;
        match self.form {
            Form::Activation {
                method,
                rule_1d,
                rule_2d,
                function,
                function_rule,
            } => vec![
                (call, rule_2d, format!("m.{method}() -> M")),
                (call, rule_1d, format!("v.{method}() -> V")),
                (
                    call,
                    function_rule,
                    format!("{function}(t), t in {{M, V}} -> same"),
                ),
            ],
            Form::FunctionalInplace { target, rule, .. } => {
                let f = short(target);
                vec![(
                    call,
                    rule,
                    format!("{f}(t) / {f}(t, inplace=False), t in {{M, V}} -> same"),
                )]
            }
            Form::Math { name, rule } => vec![(
                call,
                rule,
                format!("torch.{name}(t) / t.{name}(), t in {{M, V}} -> same"),
            )],
            Form::Function { target, rule } => vec![(
                call,
                rule,
                format!("{}(t), t in {{M, V}} -> same", short(target)),
            )],
            Form::Functional {
                target,
                keyword: (keyword, value),
                rule,
                ..
            } => {
                let f = short(target);
                let value = value.repr();
                let accepted = if self.takes_bare_call() {
                    format!("{f}(t) / {f}(t, {keyword}={value}), t in {{M, V}} -> same")
                } else {
                    format!("{f}(t, {keyword}={value}), t in {{M, V}} -> same")
                };
                vec![(call, rule, accepted)]
            }
        }
    }

    /// Whether a call with no keyword is this spelling's: the first `Functional` row of a
    /// target takes `target(t)` (exact GELU); a later one (`approximate="tanh"`) only its own
    /// literal keyword.
    pub fn takes_bare_call(&self) -> bool {
        let Form::Functional { target, .. } = self.form else {
            return true;
        };
        UNARY_SPELLINGS
            .iter()
            .find(|s| matches!(s.form, Form::Functional { target: t, .. } if t == target))
            .is_some_and(|first| first == self)
    }

    /// The Python symbols the spelling claims, as the Rextio plugin's coverage names them:
    /// `(functional, torch, Tensor method)` groups.
    fn symbols(&self) -> [Option<String>; 3] {
        match self.form {
            Form::Activation {
                method, function, ..
            } => [
                None,
                Some(function.to_string()),
                Some(format!("Tensor.{method}")),
            ],
            Form::FunctionalInplace { target, .. }
            | Form::Functional { target, .. }
            | Form::Function { target, .. } => [Some(target.to_string()), None, None],
            Form::Math { name, .. } => [
                None,
                Some(format!("torch.{name}")),
                Some(format!("Tensor.{name}")),
            ],
        }
    }
}

/// The rule records of the extension spellings, after the reference's (native, verified).
pub(super) fn extension_records() -> Vec<RuleRecord> {
    UNARY_SPELLINGS
        .iter()
        .filter(|s| s.origin == Origin::Extension)
        .flat_map(UnarySpelling::rules)
        .map(|(scope, rule, result)| RuleRecord {
            id: rule.id(),
            scope,
            code: rule.code(),
            outcome: RuleOutcome::Native,
            verified: true,
            // Built once per process (the records are a `LazyLock`).
            result: result.leak(),
        })
        .collect()
}

/// One plugin type: `(annotation, key without the "rextio-torch/" prefix, helper suffix,
/// dtype, device, rank)` with dtype and device spelled as the IR's variants (`F32`, `Cpu`).
pub type PluginTypeRow = (&'static str, &'static str, String, String, String, u8);

/// What the Rextio plugin declares it covers, and its types: `covers()`'s modules and
/// symbols and `type_vocabulary()`'s rows (`python/rextio_torch/rextio_plugin.py`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PluginSurface {
    pub modules: Vec<&'static str>,
    pub symbols: Vec<String>,
    pub types: Vec<PluginTypeRow>,
}

/// The modules the plugin covers.
const COVERED_MODULES: [&str; 3] = ["torch", "torch.nn", "torch.nn.functional"];

/// The plugin's coverage: the reference spellings of the unary ops (in table order) between
/// the symbols of the other lanes, grouped as the reference plugin lists them (functional,
/// then `torch.*`, then `Tensor.*` methods).
pub fn plugin_surface() -> PluginSurface {
    let mut groups: [Vec<String>; 3] = Default::default();
    for spelling in UNARY_SPELLINGS {
        if spelling.origin != Origin::Reference {
            continue;
        }
        for (group, symbol) in groups.iter_mut().zip(spelling.symbols()) {
            group.extend(symbol);
        }
    }
    let [functional, torch, methods] = groups;
    let owned = |names: &[&str]| names.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    let mut symbols = owned(&["torch.nn.functional.linear"]);
    symbols.extend(functional);
    symbols.extend(owned(&["torch.nn.functional.softmax"]));
    symbols.extend(torch);
    symbols.extend(owned(&[
        "torch.mean",
        "torch.sum",
        "torch.softmax",
        "torch.argmax",
        "torch.matmul",
        "torch.add",
        "torch.sub",
        "torch.mul",
        "torch.div",
    ]));
    symbols.extend(methods);
    symbols.extend(owned(&[
        "Tensor.mean",
        "Tensor.sum",
        "Tensor.softmax",
        "Tensor.argmax",
        "Tensor.matmul",
    ]));
    // The reference's five types only: the extended surface's markers (rank 3, float64,
    // bfloat16) are not the plugin's to offer.
    let types = MARKERS
        .iter()
        .filter(|m| m.reference)
        .map(|m| {
            let key = m.key.strip_prefix("rextio-torch/").unwrap_or(m.key);
            let suffix = key.strip_prefix("tensor-").unwrap_or(key).replace('-', "_");
            (
                m.name,
                key,
                suffix,
                format!("{:?}", m.ty.dtype),
                format!("{:?}", m.ty.device),
                m.ty.rank,
            )
        })
        .collect();
    PluginSurface {
        modules: COVERED_MODULES.to_vec(),
        symbols,
        types,
    }
}

#[cfg(test)]
mod tests {
    use super::super::rules;
    use super::*;

    #[test]
    fn reference_spellings_are_reference_records() {
        for spelling in UNARY_SPELLINGS {
            for (scope, rule, result) in spelling.rules() {
                let record = rules::record(rule.id()).expect("a record per rule");
                assert_eq!(
                    (record.scope, record.code, record.outcome, record.verified),
                    (scope, rule.code(), RuleOutcome::Native, true),
                    "{spelling:?}"
                );
                assert_eq!(record.result, result, "{spelling:?}");
                let is_reference = rules::reference_records().iter().any(|r| r.id == rule.id());
                assert_eq!(
                    is_reference,
                    spelling.origin == Origin::Reference,
                    "{spelling:?}"
                );
            }
        }
    }

    #[test]
    fn the_reference_set_is_the_reference_surface() {
        let all: Vec<_> = Surface::Extended.iter().collect();
        assert_eq!(all.len(), UNARY_SPELLINGS.len());
        let reference: Vec<_> = Surface::Reference.iter().collect();
        let expected: Vec<_> = UNARY_SPELLINGS
            .iter()
            .filter(|s| s.origin == Origin::Reference)
            .collect();
        assert_eq!(reference, expected);
    }

    #[test]
    fn every_op_has_a_spelling() {
        for op in UnaryOp::ALL {
            assert!(UNARY_SPELLINGS.iter().any(|s| s.op == op), "{op}");
        }
    }

    /// The reference plugin's coverage and types, as `rextio_plugin.py` listed them by hand.
    #[test]
    fn plugin_surface_is_the_reference_coverage() {
        let surface = plugin_surface();
        assert_eq!(
            surface.modules,
            ["torch", "torch.nn", "torch.nn.functional"]
        );
        let symbols = [
            "torch.nn.functional.linear",
            "torch.nn.functional.relu",
            "torch.nn.functional.gelu",
            "torch.nn.functional.softmax",
            "torch.relu",
            "torch.sigmoid",
            "torch.tanh",
            "torch.abs",
            "torch.neg",
            "torch.negative",
            "torch.square",
            "torch.exp",
            "torch.log",
            "torch.sqrt",
            "torch.mean",
            "torch.sum",
            "torch.softmax",
            "torch.argmax",
            "torch.matmul",
            "torch.add",
            "torch.sub",
            "torch.mul",
            "torch.div",
            "Tensor.relu",
            "Tensor.sigmoid",
            "Tensor.tanh",
            "Tensor.abs",
            "Tensor.neg",
            "Tensor.negative",
            "Tensor.square",
            "Tensor.exp",
            "Tensor.log",
            "Tensor.sqrt",
            "Tensor.mean",
            "Tensor.sum",
            "Tensor.softmax",
            "Tensor.argmax",
            "Tensor.matmul",
        ];
        assert_eq!(surface.symbols, symbols);
        let types: Vec<(&str, &str, &str, &str, &str, u8)> = surface
            .types
            .iter()
            .map(|t| (t.0, t.1, t.2.as_str(), t.3.as_str(), t.4.as_str(), t.5))
            .collect();
        let expected = [
            (
                "TensorF32Cpu2D",
                "tensor-f32-cpu-2d",
                "f32_cpu_2d",
                "F32",
                "Cpu",
                2,
            ),
            (
                "TensorF32Cpu1D",
                "tensor-f32-cpu-1d",
                "f32_cpu_1d",
                "F32",
                "Cpu",
                1,
            ),
            (
                "TensorI64Cpu1D",
                "tensor-i64-cpu-1d",
                "i64_cpu_1d",
                "I64",
                "Cpu",
                1,
            ),
            (
                "TensorF32Cuda0_2D",
                "tensor-f32-cuda0-2d",
                "f32_cuda0_2d",
                "F32",
                "Cuda0",
                2,
            ),
            (
                "TensorF32Cuda0_1D",
                "tensor-f32-cuda0-1d",
                "f32_cuda0_1d",
                "F32",
                "Cuda0",
                1,
            ),
        ];
        assert_eq!(types, expected);
    }
}
