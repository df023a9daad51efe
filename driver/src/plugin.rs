//! The compiler's side of the Rextio plugin (`python/rextio_torch/rextio_plugin.py`): the
//! provider hands each host data structure over as JSON (the host's own `to_dict()` shape)
//! and gets the answer as JSON. Claims are decided by the frontend's claim rules (the ones
//! `check` and `compile` use) over the unary op table's reference spellings only
//! ([`Surface::Reference`]), so the plugin gives the reference plugin's outcome for every
//! site: a site only an extension spelling knows (ours only, such as `F.silu`) is decided as
//! the reference decides it (not covered), and the extension rule records are not described.
//! A claimed site becomes the backend's [`SiteOp`], which `rextio_backend::plugin` lowers to
//! one Rust expression calling the runtime's `lazy` functions, on the runtime and IR the
//! generated crate carries as modules `rextio_runtime` and `rextio_ir`
//! (`rextio_backend::inline_modules`). Every text of Rust the provider hands the host
//! (lowered sites, type conversions and helpers, the scope guard) is the backend's; this
//! module only reads, claims and converts.
//!
//! Nothing here decides a claim on its own: `lower` claims the site again and refuses any
//! drift between what the host says was claimed and what the rules say now.

use rextio_backend::plugin::{
    lower_site, plugin_types, SiteOp, BOUNDARY_RUST, FUNCTION_SCOPE_GUARD, RETURN_EXPR, RUST_TYPE,
};
use rextio_frontend::claim::{
    self, rules::reference_records, ClaimOutcome, ClaimSite, ClaimedOp, Input, KeywordArg, Literal,
    Receiver, ReceiverKind, SiteKind, Surface, KEY_CM, KEY_CV,
};
use rextio_ir::Device;

/// What the plugin covers and its types (the unary op table's reference spellings and the
/// IR's markers), for `rextio_plugin.py`.
pub use rextio_frontend::claim::{plugin_surface, spellings::PluginTypeRow};
use serde_json::{json, Map, Value};

fn field<'a>(obj: &'a Map<String, Value>, name: &str) -> Result<&'a Value, String> {
    obj.get(name)
        .ok_or_else(|| format!("claim site has no `{name}`"))
}

fn opt_str(value: &Value, what: &str) -> Result<Option<String>, String> {
    match value {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(s.clone())),
        other => Err(format!("{what} must be a string or null, got {other}")),
    }
}

/// `ClaimLiteral.to_dict()`: `{"is_literal": false}` or `{"is_literal": true, "value_kind",
/// "value"}`.
fn literal(value: &Value) -> Result<Literal, String> {
    let obj = value
        .as_object()
        .ok_or_else(|| format!("a literal must be an object, got {value}"))?;
    if !obj
        .get("is_literal")
        .and_then(Value::as_bool)
        .ok_or("literal has no boolean `is_literal`")?
    {
        return Ok(Literal::NonLiteral);
    }
    let kind = obj
        .get("value_kind")
        .and_then(Value::as_str)
        .ok_or("literal has no `value_kind`")?;
    let v = obj.get("value").unwrap_or(&Value::Null);
    let bad = || format!("literal of kind {kind} has value {v}");
    Ok(match kind {
        "none" => Literal::None,
        "int" => Literal::Int(v.as_i64().ok_or_else(bad)?),
        "bool" => Literal::Bool(v.as_bool().ok_or_else(bad)?),
        "str" => Literal::Str(v.as_str().ok_or_else(bad)?.to_string()),
        "int_tuple" => Literal::IntTuple(
            v.as_array()
                .ok_or_else(bad)?
                .iter()
                .map(|x| x.as_i64().ok_or_else(bad))
                .collect::<Result<_, _>>()?,
        ),
        _ => return Err(format!("unknown literal kind {kind}")),
    })
}

/// A site as `ClaimSite.to_dict()` writes it, with `rule_id`/`result_type` when present.
pub struct HostSite {
    pub site: ClaimSite,
    pub rule_id: Option<String>,
    pub result_type: Option<String>,
}

pub fn parse_site(json_text: &str) -> Result<HostSite, String> {
    let value: Value =
        serde_json::from_str(json_text).map_err(|e| format!("claim site is not JSON: {e}"))?;
    let obj = value.as_object().ok_or("claim site must be an object")?;
    let kind = match field(obj, "kind")?.as_str() {
        Some("call") => SiteKind::Call,
        Some("binop") => SiteKind::Binop,
        Some("compare") => SiteKind::Compare,
        other => return Err(format!("unknown claim site kind {other:?}")),
    };
    let target = field(obj, "target")?
        .as_str()
        .ok_or("claim site target must be a string")?
        .to_string();
    let operand_types = field(obj, "operand_types")?
        .as_array()
        .ok_or("operand_types must be a list")?
        .iter()
        .map(|t| opt_str(t, "an operand type"))
        .collect::<Result<Vec<_>, _>>()?;
    let empty = Vec::new();
    let operand_literals = obj
        .get("operand_literals")
        .and_then(Value::as_array)
        .unwrap_or(&empty)
        .iter()
        .map(literal)
        .collect::<Result<Vec<_>, _>>()?;
    let keywords = obj
        .get("keywords")
        .and_then(Value::as_array)
        .unwrap_or(&empty)
        .iter()
        .map(|k| {
            let k = k.as_object().ok_or("a keyword must be an object")?;
            Ok(KeywordArg {
                name: k
                    .get("name")
                    .and_then(Value::as_str)
                    .ok_or("keyword has no name")?
                    .to_string(),
                arg_type: opt_str(k.get("arg_type").unwrap_or(&Value::Null), "arg_type")?,
                literal: literal(k.get("literal").unwrap_or(&json!({"is_literal": false})))?,
            })
        })
        .collect::<Result<Vec<_>, String>>()?;
    let receiver = match obj.get("receiver") {
        None | Some(Value::Null) => None,
        Some(r) => {
            let r = r.as_object().ok_or("receiver must be an object")?;
            let expr_kind = match r.get("expr_kind").and_then(Value::as_str) {
                Some("name") => ReceiverKind::Name,
                Some("attribute") => ReceiverKind::Attribute,
                Some("subscript") => ReceiverKind::Subscript,
                Some("call") => ReceiverKind::Call,
                Some("opaque") => ReceiverKind::Opaque,
                other => return Err(format!("unknown receiver expr_kind {other:?}")),
            };
            Some(Receiver {
                arg_type: opt_str(r.get("arg_type").unwrap_or(&Value::Null), "receiver type")?,
                expr_kind,
            })
        }
    };
    Ok(HostSite {
        site: ClaimSite {
            kind,
            target,
            operand_types,
            operand_literals,
            keywords,
            receiver,
            // The host offers a list display as one operand; the reference lanes never
            // read a join's parts.
            sequence: None,
            // Nor does it offer a `where`'s comparison as operands.
            condition: None,
            // Nor a `max`/`min` call's `.values` / `.indices` part.
            part: None,
            truth: false,
        },
        rule_id: opt_str(obj.get("rule_id").unwrap_or(&Value::Null), "rule_id")?,
        result_type: opt_str(
            obj.get("result_type").unwrap_or(&Value::Null),
            "result_type",
        )?,
    })
}

/// The verdict as JSON: `{"verdict": "claimed", "rule_id", "result_type"}`,
/// `{"verdict": "not_covered"}` or `{"verdict": "rejected", "code", "message"}`.
pub fn claim_json(site_json: &str) -> Result<String, String> {
    let host = parse_site(site_json)?;
    let verdict = match claim::claim_with(&host.site, Surface::Reference) {
        ClaimOutcome::Claimed {
            rule_id,
            result_type,
            ..
        } => json!({"verdict": "claimed", "rule_id": rule_id, "result_type": result_type}),
        ClaimOutcome::NotCovered => json!({"verdict": "not_covered"}),
        ClaimOutcome::Rejected { code, message } => {
            json!({"verdict": "rejected", "code": code, "message": message})
        }
    };
    Ok(verdict.to_string())
}

/// The carried runtime and IR as inline module items for a Rextio-generated crate (the
/// backend's [`rextio_backend::inline_modules`]).
pub fn runtime_modules() -> String {
    rextio_backend::inline_modules()
}

/// `(crate, exact version)` of every crates.io package the carried runtime needs, from this
/// build's `Cargo.lock` (the backend's [`rextio_backend::PINS`]).
pub fn crate_pins() -> &'static [(&'static str, &'static str)] {
    rextio_backend::PINS
}

/// The rule records the plugin claims and rejects with, as `describe()` returns them (the
/// host's `RuleRecord` fields): the reference's 50 and ours for `RXTP-TORCH-049`, not the
/// extension spellings' (the plugin never claims with them).
pub fn rule_records_json() -> String {
    let records: Vec<Value> = reference_records()
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "scope_kind": r.scope.as_str(),
                "pattern": r.result,
                "constraint": r.result,
                "outcome": r.outcome.as_str(),
                "diagnostic_code": r.code,
                "verified": r.verified,
            })
        })
        .collect();
    Value::Array(records).to_string()
}

/// One claimed site as one Rust expression (no `;`), for a PyO3 function of a
/// Rextio-generated crate (errors become Python exceptions with `?`).
///
/// `ctx_json` is `{"operands": [...], "receiver": str|null, "backend": "pyo3"|...}`.
pub fn lower_json(site_json: &str, ctx_json: &str) -> Result<String, String> {
    let host = parse_site(site_json)?;
    let ctx: Value =
        serde_json::from_str(ctx_json).map_err(|e| format!("lowering context is not JSON: {e}"))?;
    let backend = ctx.get("backend").and_then(Value::as_str).unwrap_or("pyo3");
    if backend != "pyo3" {
        return Err("rextio-torch supports PyO3 host-extension lowering only; standalone artifacts are unsupported".into());
    }
    let operands: Vec<String> = ctx
        .get("operands")
        .and_then(Value::as_array)
        .ok_or("lowering context has no operands")?
        .iter()
        .map(|o| {
            o.as_str()
                .map(str::to_string)
                .ok_or("an operand must be a string")
        })
        .collect::<Result<_, _>>()?;
    let receiver = opt_str(ctx.get("receiver").unwrap_or(&Value::Null), "receiver")?;
    let (rule_id, result_type, op) = match claim::claim_with(&host.site, Surface::Reference) {
        ClaimOutcome::Claimed {
            rule_id,
            result_type,
            op,
        } => (rule_id, result_type, op),
        _ => {
            return Err(format!(
                "rextio-torch cannot lower unclaimed site: {} {}",
                site_kind(host.site.kind),
                host.site.target
            ))
        }
    };
    if host.rule_id.as_deref() != Some(rule_id) || host.result_type.as_deref() != Some(result_type)
    {
        return Err(format!(
            "rextio-torch lowering drift at {}: the host says rule {:?} -> {:?}, the rules say {rule_id} -> {result_type}",
            host.site.target, host.rule_id, host.result_type
        ));
    }
    if result_type == KEY_CM || result_type == KEY_CV {
        return Err(format!(
            "rextio-torch cannot lower {rule_id} through the Rextio host: the cuda:0 slice is not lowered by this plugin"
        ));
    }
    let input = |i: Input| -> Result<String, String> {
        match i {
            Input::Receiver => receiver
                .clone()
                .ok_or_else(|| format!("{rule_id} needs a receiver and the host gave none")),
            Input::Operand(k) => operands.get(k).cloned().ok_or_else(|| {
                format!(
                    "{rule_id} needs operand {k} and the host rendered {}",
                    operands.len()
                )
            }),
        }
    };
    let op = match op {
        ClaimedOp::Linear {
            input: x,
            weight,
            bias,
        } => SiteOp::Linear {
            input: input(x)?,
            weight: input(weight)?,
            bias: bias.map(input).transpose()?,
        },
        ClaimedOp::Unary { op, input: x } => SiteOp::Unary {
            op,
            input: input(x)?,
        },
        ClaimedOp::Binary { op, lhs, rhs } => SiteOp::Binary {
            op,
            lhs: input(lhs)?,
            rhs: input(rhs)?,
        },
        ClaimedOp::ParamUnary { .. } => {
            // Claimed under the extended surface only; the plugin claims under the reference's.
            return Err(format!(
                "rextio-torch cannot lower {rule_id} through the Rextio host: ops with scalar parameters are not part of the reference surface"
            ));
        }
        ClaimedOp::TensorScalar { .. } => {
            // Claimed under the extended surface only; the plugin claims under the reference's.
            return Err(format!(
                "rextio-torch cannot lower {rule_id} through the Rextio host: scalar operands are not part of the reference surface"
            ));
        }
        ClaimedOp::LayerNorm { .. }
        | ClaimedOp::Embedding { .. }
        | ClaimedOp::EmbeddingBag { .. }
        | ClaimedOp::Identity { .. } => {
            // The layers lane claims under the extended surface only.
            return Err(format!(
                "rextio-torch cannot lower {rule_id} through the Rextio host: layer_norm, embedding, embedding_bag and dropout are not part of the reference surface"
            ));
        }
        ClaimedOp::ReduceAll { .. }
        | ClaimedOp::ToScalar { .. }
        | ClaimedOp::TensorTruth { .. } => {
            // The rank-0 lane claims under the extended surface only.
            return Err(format!(
                "rextio-torch cannot lower {rule_id} through the Rextio host: whole-tensor reductions, item() and tensor conditions are not part of the reference surface"
            ));
        }
        ClaimedOp::View { .. } | ClaimedOp::Size { .. } => {
            // Claimed under the extended surface only; the plugin claims under the reference's.
            return Err(format!(
                "rextio-torch cannot lower {rule_id} through the Rextio host: views and shapes are not part of the reference surface"
            ));
        }
        ClaimedOp::Extremum { .. }
        | ClaimedOp::FillLike { .. }
        | ClaimedOp::IndexSelect { .. }
        | ClaimedOp::Normalize { .. } => {
            // Claimed under the extended surface only; the plugin claims under the reference's.
            return Err(format!(
                "rextio-torch cannot lower {rule_id} through the Rextio host: max/min over a dim, zeros_like/ones_like/full_like, index_select and normalize are not part of the reference surface"
            ));
        }
        ClaimedOp::Elementwise { .. } => {
            // Claimed under the extended surface only; the plugin claims under the reference's.
            return Err(format!(
                "rextio-torch cannot lower {rule_id} through the Rextio host: where/maximum/minimum/pow are not part of the reference surface"
            ));
        }
        ClaimedOp::Join { .. } => {
            // Claimed under the extended surface only; the plugin claims under the reference's.
            return Err(format!(
                "rextio-torch cannot lower {rule_id} through the Rextio host: joins are not part of the reference surface"
            ));
        }
        ClaimedOp::Bmm { .. } => {
            // Claimed under the extended surface only (rank 3); the plugin claims under the
            // reference's.
            return Err(format!(
                "rextio-torch cannot lower {rule_id} through the Rextio host: rank-3 tensors are not part of the reference surface"
            ));
        }
        ClaimedOp::ScalarMath { .. } => {
            // Claimed under the extended surface only; the plugin claims under the reference's.
            return Err(format!(
                "rextio-torch cannot lower {rule_id} through the Rextio host: math functions of Python scalars are not part of the reference surface"
            ));
        }
        ClaimedOp::Matmul { lhs, rhs } => SiteOp::Matmul {
            lhs: input(lhs)?,
            rhs: input(rhs)?,
        },
        ClaimedOp::Reduce {
            kind,
            input: x,
            dim,
            keepdim,
        } => SiteOp::Reduce {
            kind,
            input: input(x)?,
            dim,
            keepdim,
        },
        ClaimedOp::Softmax {
            kind,
            input: x,
            dim,
        } => SiteOp::Softmax {
            kind,
            input: input(x)?,
            dim,
        },
        ClaimedOp::Argmax {
            input: x,
            dim,
            keepdim,
        } => SiteOp::Argmax {
            input: input(x)?,
            dim,
            keepdim,
        },
    };
    Ok(json!({ "rust": lower_site(&op) }).to_string())
}

/// The Rust text of the plugin types and of the function scope guard (the backend's), for
/// the provider's `type_vocabulary` and `function_scope_guard`: `{"types": [{"annotation",
/// "key", "device", "rank", "rust_type", "param_rust", "param_expr", "return_rust",
/// "return_expr", "helper"}], "function_scope_guard"}`. `helper` is the type's extract
/// helper; the carried runtime (`inline_modules`) is the other helper every type has.
pub fn rust_vocabulary_json() -> String {
    let types: Vec<Value> = plugin_types()
        .map(|t| {
            json!({
                "annotation": t.annotation(),
                "key": t.key(),
                "device": match t.tensor().device {
                    Device::Cpu => "cpu",
                    Device::Cuda0 => "cuda:0",
                },
                "rank": t.tensor().rank,
                "rust_type": RUST_TYPE,
                "param_rust": BOUNDARY_RUST,
                "param_expr": t.param_expr(),
                "return_rust": BOUNDARY_RUST,
                "return_expr": RETURN_EXPR,
                "helper": t.extract_helper(),
            })
        })
        .collect();
    json!({"types": types, "function_scope_guard": FUNCTION_SCOPE_GUARD}).to_string()
}

fn site_kind(kind: SiteKind) -> &'static str {
    match kind {
        SiteKind::Call => "call",
        SiteKind::Binop => "binop",
        SiteKind::Compare => "compare",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINEAR: &str = r#"{"kind": "call", "target": "torch.nn.functional.linear",
        "operand_types": ["rextio-torch/tensor-f32-cpu-2d", "rextio-torch/tensor-f32-cpu-2d",
                          "rextio-torch/tensor-f32-cpu-1d"],
        "file_path": "", "line": 0, "column": 0,
        "operand_literals": [{"is_literal": false}, {"is_literal": false}, {"is_literal": false}]}"#;

    #[test]
    fn claims_and_lowers_linear() {
        let verdict: Value = serde_json::from_str(&claim_json(LINEAR).unwrap()).unwrap();
        assert_eq!(verdict["verdict"], "claimed");
        assert_eq!(
            verdict["rule_id"],
            "rextio-torch/functional-linear-f32-cpu-2d"
        );
        let claimed = LINEAR.replacen(
            "\"file_path\"",
            "\"rule_id\": \"rextio-torch/functional-linear-f32-cpu-2d\", \
             \"result_type\": \"rextio-torch/tensor-f32-cpu-2d\", \"file_path\"",
            1,
        );
        let lowered: Value = serde_json::from_str(
            &lower_json(
                &claimed,
                r#"{"operands": ["x", "w", "b"], "receiver": null}"#,
            )
            .unwrap(),
        )
        .unwrap();
        assert_eq!(
            lowered["rust"],
            "crate::rextio_runtime::lazy::linear(&(x), &(w), Some((&(b)).into()))\
             .map_err(crate::rextio_runtime::boundary::to_py_err)?"
        );
    }

    #[test]
    fn lowering_refuses_drift_and_standalone() {
        let drifted = LINEAR.replacen(
            "\"file_path\"",
            "\"rule_id\": \"rextio-torch/tensor-relu-f32-cpu-2d\", \
             \"result_type\": \"rextio-torch/tensor-f32-cpu-2d\", \"file_path\"",
            1,
        );
        let ctx = r#"{"operands": ["x", "w", "b"], "receiver": null}"#;
        assert!(lower_json(&drifted, ctx).unwrap_err().contains("drift"));
        assert!(
            lower_json(LINEAR, r#"{"operands": [], "backend": "standalone-rust"}"#)
                .unwrap_err()
                .contains("PyO3 host-extension lowering only")
        );
    }

    #[test]
    fn unresolved_operands_are_not_covered() {
        let site = LINEAR.replace("\"rextio-torch/tensor-f32-cpu-1d\"", "null");
        let verdict: Value = serde_json::from_str(&claim_json(&site).unwrap()).unwrap();
        assert_eq!(verdict["verdict"], "not_covered");
    }

    /// `describe()` lists the records the plugin claims and rejects with: the reference's 50
    /// and ours for 049, in that order, and none of an extension spelling.
    #[test]
    fn described_records_are_the_reference_records() {
        let records: Vec<Value> = serde_json::from_str(&rule_records_json()).unwrap();
        let ids: Vec<&str> = records.iter().filter_map(|r| r["id"].as_str()).collect();
        let reference: Vec<&str> = reference_records().iter().map(|r| r.id).collect();
        assert_eq!(ids, reference);
        assert_eq!(ids.len(), 51);
        assert_eq!(records[50]["diagnostic_code"], "RXTP-TORCH-049");
    }

    /// A call of each extension spelling's function (`F.silu(x)`) with one tensor and with
    /// two: `check` and `compile` claim the first and reject the second with the spelling's
    /// code; the plugin covers neither, as the reference plugin (which has no such lane).
    #[test]
    fn extension_spellings_get_the_reference_outcome() {
        use rextio_frontend::claim::spellings::{Form, Origin, UNARY_SPELLINGS};
        let m = claim::KEY_M;
        let extensions = UNARY_SPELLINGS
            .iter()
            .filter(|s| s.origin == Origin::Extension);
        for spelling in extensions {
            // An extension option of a reference target (`F.gelu(x, approximate="tanh")`):
            // the plugin decides the target as the reference does, checked with the
            // target's rows in frontend/tests/claim_rules.rs (`gelu_options_under_each_surface`).
            if !spelling.takes_bare_call() {
                continue;
            }
            let target = match spelling.form {
                Form::Activation { function, .. } => function.to_string(),
                Form::FunctionalInplace { target, .. }
                | Form::Functional { target, .. }
                | Form::Function { target, .. } => target.to_string(),
                Form::Math { name, .. } => format!("torch.{name}"),
            };
            for operands in [1, 2] {
                let site = json!({
                    "kind": "call",
                    "target": target,
                    "operand_types": vec![m; operands],
                    "operand_literals": vec![json!({"is_literal": false}); operands],
                    "file_path": "", "line": 0, "column": 0,
                })
                .to_string();
                let ours = claim::claim(&parse_site(&site).unwrap().site);
                match (&ours, operands) {
                    (ClaimOutcome::Claimed { op, .. }, 1) => assert_eq!(
                        *op,
                        ClaimedOp::Unary {
                            op: spelling.op,
                            input: Input::Operand(0)
                        }
                    ),
                    (ClaimOutcome::Rejected { .. }, 2) => {}
                    _ => panic!("{target} with {operands} operands: {ours:?}"),
                }
                let verdict: Value = serde_json::from_str(&claim_json(&site).unwrap()).unwrap();
                assert_eq!(verdict["verdict"], "not_covered", "{target}");
            }
        }
    }

    /// The layers lane's spellings (`F.layer_norm`, `F.embedding`, `F.dropout(training=False)`,
    /// `F.embedding_bag`)
    /// are claimed by `check` and `compile` and not covered by the plugin, as the reference
    /// plugin (which has no such lane) leaves them.
    #[test]
    fn layer_spellings_get_the_reference_outcome() {
        let (m, v, l) = (claim::KEY_M, claim::KEY_V, claim::KEY_L);
        let non_literal = json!({"is_literal": false});
        let shape = json!({"is_literal": true, "value_kind": "int_tuple", "value": [8]});
        let no_training = json!([{
            "name": "training", "arg_type": "bool",
            "literal": {"is_literal": true, "value_kind": "bool", "value": false},
        }]);
        let sum_mode = json!([{
            "name": "mode", "arg_type": "str",
            "literal": {"is_literal": true, "value_kind": "str", "value": "sum"},
        }]);
        let sites = [
            (
                "torch.nn.functional.layer_norm",
                json!([m, "tuple[int]", v, v]),
                json!([non_literal, shape, non_literal, non_literal]),
                json!([]),
            ),
            (
                "torch.nn.functional.embedding",
                json!([l, m]),
                json!([non_literal, non_literal]),
                json!([]),
            ),
            (
                "torch.nn.functional.dropout",
                json!([m]),
                json!([non_literal]),
                no_training,
            ),
            (
                "torch.nn.functional.embedding_bag",
                json!([l, m, l]),
                json!([non_literal, non_literal, non_literal]),
                sum_mode,
            ),
        ];
        for (target, types, literals, keywords) in sites {
            let site = json!({
                "kind": "call",
                "target": target,
                "operand_types": types,
                "operand_literals": literals,
                "keywords": keywords,
                "file_path": "", "line": 0, "column": 0,
            })
            .to_string();
            let ours = claim::claim(&parse_site(&site).unwrap().site);
            assert!(
                matches!(ours, ClaimOutcome::Claimed { .. }),
                "{target}: {ours:?}"
            );
            let verdict: Value = serde_json::from_str(&claim_json(&site).unwrap()).unwrap();
            assert_eq!(verdict["verdict"], "not_covered", "{target}");
        }
    }
}
