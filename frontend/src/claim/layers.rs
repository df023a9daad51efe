//! The layers lane (ours; [`Surface::Extended`] only): everyday inference layers of
//! `torch.nn.functional` that the reference does not know, so under [`Surface::Reference`]
//! (the Rextio plugin, `surface="reference"`) the lane has no answer and the site is not
//! covered, as there.
//!
//! - `F.layer_norm(t, (n,)[, w, b][, eps])` (`RXTP-TORCH-065`): `t` M or V, normalized over
//!   its last dim; `normalized_shape` positional, `(n,)` or `[n]` with an `int` `n` (a
//!   literal, a parameter, an int expression: the walker gives the site `n` itself, typed
//!   [`SHAPE_OF_ONE_INT`]; checked against the last dim at run time, with eager's error), or
//!   `w.shape` of a rank-1 tensor `w` (nanoGPT's `self.weight.shape`: `w.shape[0]`);
//!   `weight` and `bias` V, both or neither, positional or by keyword (or `None`); `eps` a
//!   float (or int) literal, positional or by keyword, default `1e-05`. Lowers to
//!   [`ClaimedOp::LayerNorm`].
//! - `F.embedding(ids, weight)` (`RXTP-TORCH-066`): `ids` L, `weight` M, giving M. The
//!   options are refused (`padding_idx=None` aside): `padding_idx` changes only the gradient,
//!   but eager asserts its range against the table's rows, which are known only at run time.
//! - `F.embedding_bag(ids, weight, offsets[, mode=...])` (`RXTP-TORCH-090`): `ids` and
//!   `offsets` L, `weight` M, giving M (`[len(offsets), dim]`), [`BagMode`] `"mean"` (the
//!   default), `"sum"` or `"max"` by keyword. The tensors go positionally or by keyword
//!   (`offsets=o`); every other option is claimed only at its default (`max_norm=None`, `norm_type=2`,
//!   `scale_grad_by_freq=False`, `sparse=False`, `per_sample_weights=None`,
//!   `include_last_offset=False`, `padding_idx=None`), else refused.
//! - `F.dropout(t[, p], training=False[, inplace=False])` (`RXTP-TORCH-067`): in eval mode
//!   dropout returns its input, so the site's value is its operand's
//!   ([`ClaimedOp::Identity`]). `p` must be a literal in `[0, 1]` (eager raises `ValueError`
//!   otherwise, even in eval mode, so such a site stays on Python where eager raises it);
//!   training mode (the default) is random and is refused.
//!
//! Float literals (`eps`, `p`) and positional bools (`training`) are literals at these
//! targets only ([`reads_values`]), and keywords are offered with their values'
//! types (`weight=w`): the walker reads them there ([`super::ArgumentReading`]) and nowhere
//! else, so every other site keeps the reference host's literals and keyword refusals.

use super::pyrepr::{float_repr, literal_repr};
use super::rules::{
    CODE_DROPOUT, CODE_EMBEDDING, CODE_EMBEDDING_BAG, CODE_LAYER_NORM, CODE_UNSUPPORTED,
    DROPOUT_EVAL, EMBEDDING, EMBEDDING_BAG, LAYER_NORM,
};
use super::{
    claimed, f32_cpu_key, reject, ClaimOutcome, ClaimSite, ClaimedOp, Input, Literal, SiteKind,
    Surface, KEY_L, KEY_M, KEY_V,
};
use rextio_ir::{BagMode, FloatBits};

pub const LAYER_NORM_TARGET: &str = "torch.nn.functional.layer_norm";
pub const EMBEDDING_TARGET: &str = "torch.nn.functional.embedding";
pub const DROPOUT_TARGET: &str = "torch.nn.functional.dropout";
pub const EMBEDDING_BAG_TARGET: &str = "torch.nn.functional.embedding_bag";

/// The operand type the walker gives `layer_norm`'s normalized shape when it is `(n,)` or
/// `[n]` with an `int` `n` (literal or not): the operand's value is `n` itself.
pub const SHAPE_OF_ONE_INT: &str = "tuple[int]";

/// The rejection of an input tensor outside the float32 CPU surface (`RXTP-TORCH-010`).
const OUTSIDE_F32_CPU: &str = "input type is outside the float32 CPU tensor surface";

/// Eager's default `eps` of `F.layer_norm`.
const DEFAULT_EPS: f64 = 1e-5;

/// Whether the walker reads this call's argument values beyond the host's literals (its
/// [`super::ArgumentReading`]: float literals and positional bools, [`Literal::Float`] and
/// [`Literal::Bool`], and keyword values, `weight=w`): the layers lane's targets, under the
/// extended surface.
pub fn reads_values(target: &str, surface: Surface) -> bool {
    surface == Surface::Extended
        && [
            LAYER_NORM_TARGET,
            EMBEDDING_TARGET,
            DROPOUT_TARGET,
            EMBEDDING_BAG_TARGET,
        ]
        .contains(&target)
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if site.kind != SiteKind::Call || surface != Surface::Extended || site.receiver.is_some() {
        return None;
    }
    match site.target.as_str() {
        LAYER_NORM_TARGET => Some(layer_norm(site)),
        EMBEDDING_TARGET => Some(embedding(site)),
        DROPOUT_TARGET => Some(dropout(site)),
        EMBEDDING_BAG_TARGET => Some(embedding_bag(site)),
        _ => None,
    }
    .map(|decided| decided.unwrap_or_else(|early| early))
}

/// One argument of a call, by its parameter's place in the signature.
struct Argument<'a> {
    /// Its place in the site's operands: the positional ones, then the keyword values in
    /// order (`None` for an argument the walker gave no value).
    operand: Option<usize>,
    /// Whether it was given by keyword.
    keyword: bool,
    ty: Option<&'a str>,
    literal: &'a Literal,
}

/// The site's arguments bound to `params` (Python's binding: positional first, then
/// keywords by name); `Err` is the rejection's detail (too many positional arguments, an
/// unknown or repeated keyword).
fn bind<'a>(
    site: &'a ClaimSite,
    name: &str,
    params: &[&str],
) -> Result<Vec<Option<Argument<'a>>>, String> {
    let mut bound: Vec<Option<Argument<'a>>> = params.iter().map(|_| None).collect();
    if site.operand_types.len() > params.len() {
        return Err(format!(
            "{name} takes at most {} positional arguments, got {}",
            params.len(),
            site.operand_types.len()
        ));
    }
    for (i, (ty, literal)) in site
        .operand_types
        .iter()
        .zip(&site.operand_literals)
        .enumerate()
    {
        bound[i] = Some(Argument {
            operand: Some(i),
            keyword: false,
            ty: ty.as_deref(),
            literal,
        });
    }
    let positional = site.operand_types.len();
    for (k, keyword) in site.keywords.iter().enumerate() {
        let Some(place) = params.iter().position(|p| *p == keyword.name) else {
            return Err(format!("{name} has no option `{}` here", keyword.name));
        };
        if bound[place].is_some() {
            return Err(format!("{name} got `{}` twice", keyword.name));
        }
        bound[place] = Some(Argument {
            operand: Some(positional + k),
            keyword: true,
            ty: keyword.arg_type.as_deref(),
            literal: &keyword.literal,
        });
    }
    Ok(bound)
}

/// A literal float value (an int literal counts, as Python's `float` parameter takes it).
fn float_value(literal: &Literal) -> Option<f64> {
    match literal {
        Literal::Float(bits) => Some(bits.value()),
        Literal::Int(value) => Some(*value as f64),
        _ => None,
    }
}

/// A lane function's answer: `Ok` with the claim, or `Err` with the outcome an argument
/// decided first (a rejection, or not covered); [`try_claim`] takes either.
type Decided = Result<ClaimOutcome, ClaimOutcome>;

/// The site rejected with `code` and `detail`, as a [`Decided`] early answer.
fn fail<T>(
    site: &ClaimSite,
    code: &'static str,
    detail: impl AsRef<str>,
) -> Result<T, ClaimOutcome> {
    Err(reject(site, code, detail))
}

/// The tensor operand of `argument` if its type is one of `want`; else the site's answer:
/// not covered for an unresolved type, rejected with `code` and `detail` for any other.
fn tensor_operand(
    site: &ClaimSite,
    argument: &Argument<'_>,
    want: &[&str],
    code: &'static str,
    detail: impl FnOnce() -> String,
) -> Result<Input, ClaimOutcome> {
    match (argument.operand, argument.ty) {
        (_, None) => Err(ClaimOutcome::NotCovered),
        (Some(i), Some(ty)) if want.contains(&ty) => Ok(Input::Operand(i)),
        _ => fail(site, code, detail()),
    }
}

fn layer_norm(site: &ClaimSite) -> Decided {
    let code = CODE_LAYER_NORM;
    let params = ["input", "normalized_shape", "weight", "bias", "eps"];
    let bound = match bind(site, "layer_norm", &params) {
        Ok(bound) => bound,
        Err(detail) => return fail(site, code, detail),
    };
    let [input, shape, weight, bias, eps] = &bound[..] else {
        return fail(site, code, "internal: layer_norm arguments");
    };
    let Some(input) = input else {
        return fail(site, code, "layer_norm requires an input tensor");
    };
    let x = tensor_operand(site, input, &[KEY_M, KEY_V], CODE_UNSUPPORTED, || {
        OUTSIDE_F32_CPU.to_string()
    })?;
    let normalized = match shape {
        Some(Argument {
            operand: Some(i),
            keyword: false,
            ty: Some(SHAPE_OF_ONE_INT),
            ..
        }) => Input::Operand(*i),
        Some(Argument { ty: None, .. }) => return Err(ClaimOutcome::NotCovered),
        _ => {
            let detail = "layer_norm requires normalized_shape as a positional one-element \
                          tuple or list of an int, `(n,)` or `[n]`: it is normalized over the \
                          last dim only";
            return fail(site, code, detail);
        }
    };
    // `weight`/`bias`: a V tensor, or absent (`None` or not given).
    let mut affine = [None, None];
    for (slot, (what, argument)) in affine.iter_mut().zip([("weight", weight), ("bias", bias)]) {
        let Some(argument) = argument else { continue };
        if *argument.literal == Literal::None {
            continue;
        }
        *slot = Some(tensor_operand(site, argument, &[KEY_V], code, || {
            format!(
                "layer_norm {what} must be a float32 CPU rank-1 tensor (TensorF32Cpu1D) or None"
            )
        })?);
    }
    let [weight, bias] = affine;
    if weight.is_some() != bias.is_some() {
        let detail = "layer_norm takes weight and bias together, or neither";
        return fail(site, code, detail);
    }
    let eps = match eps {
        None => DEFAULT_EPS,
        Some(argument) => match float_value(argument.literal) {
            Some(eps) => eps,
            None => {
                let detail = "layer_norm requires eps as a float literal (default 1e-05)";
                return fail(site, code, detail);
            }
        },
    };
    let op = ClaimedOp::LayerNorm {
        input: x,
        normalized,
        weight,
        bias,
        eps: FloatBits::new(eps),
    };
    let result_type = match input.ty {
        Some(KEY_V) => KEY_V,
        _ => KEY_M,
    };
    Ok(claimed(LAYER_NORM, result_type, op))
}

fn embedding(site: &ClaimSite) -> Decided {
    let code = CODE_EMBEDDING;
    let params = [
        "input",
        "weight",
        "padding_idx",
        "max_norm",
        "norm_type",
        "scale_grad_by_freq",
        "sparse",
    ];
    let bound = match bind(site, "embedding", &params) {
        Ok(bound) => bound,
        Err(detail) => return fail(site, code, detail),
    };
    if let Some((name, argument)) = params
        .iter()
        .zip(&bound)
        .skip(2)
        .find_map(|(name, a)| a.as_ref().map(|a| (name, a)))
    {
        let padding_none = *name == "padding_idx" && *argument.literal == Literal::None;
        if !padding_none {
            let detail = format!(
                "embedding options are not claimed ({name}={}): only \
                 `embedding(ids, weight)` is compiled (padding_idx=None is accepted)",
                literal_repr(argument.literal)
            );
            return fail(site, code, detail);
        }
    }
    let (Some(ids), Some(weight)) = (&bound[0], &bound[1]) else {
        return fail(site, code, "embedding requires ids and a weight table");
    };
    let ids = tensor_operand(site, ids, &[KEY_L], code, || {
        "embedding ids must be an int64 CPU rank-1 tensor (TensorI64Cpu1D)".to_string()
    })?;
    let weight = tensor_operand(site, weight, &[KEY_M], code, || {
        "embedding weight must be a float32 CPU rank-2 tensor (TensorF32Cpu2D)".to_string()
    })?;
    Ok(claimed(
        EMBEDDING,
        KEY_M,
        ClaimedOp::Embedding { ids, weight },
    ))
}

/// Whether an `embedding_bag` option has its default value (or one equal to it: `norm_type`
/// is read only with a `max_norm`, so `2` and `2.0` alike).
fn bag_option_at_default(name: &str, literal: &Literal) -> bool {
    match name {
        "max_norm" | "per_sample_weights" | "padding_idx" => *literal == Literal::None,
        "norm_type" => float_value(literal) == Some(2.0),
        "scale_grad_by_freq" | "sparse" | "include_last_offset" => *literal == Literal::Bool(false),
        _ => false,
    }
}

fn embedding_bag(site: &ClaimSite) -> Decided {
    let code = CODE_EMBEDDING_BAG;
    let params = [
        "input",
        "weight",
        "offsets",
        "max_norm",
        "norm_type",
        "scale_grad_by_freq",
        "mode",
        "sparse",
        "per_sample_weights",
        "include_last_offset",
        "padding_idx",
    ];
    let bound = match bind(site, "embedding_bag", &params) {
        Ok(bound) => bound,
        Err(detail) => return fail(site, code, detail),
    };
    let mut mode = BagMode::Mean;
    for (name, argument) in params.iter().zip(&bound).skip(3) {
        let Some(argument) = argument else { continue };
        if *name == "mode" {
            match argument.literal {
                Literal::Str(text) => match BagMode::from_name(text) {
                    Some(named) => mode = named,
                    None => {
                        let detail =
                            "mode has to be one of sum, mean or max (eager raises ValueError)";
                        return fail(site, code, detail);
                    }
                },
                _ => {
                    let detail = "embedding_bag requires mode as a string literal: \
                                  'sum', 'mean' or 'max'";
                    return fail(site, code, detail);
                }
            }
        } else if !bag_option_at_default(name, argument.literal) {
            let detail = format!(
                "embedding_bag options are not claimed ({name}={}): only \
                 `embedding_bag(ids, weight, offsets, mode=...)` is compiled, other options at \
                 their defaults",
                literal_repr(argument.literal)
            );
            return fail(site, code, detail);
        }
    }
    let (Some(ids), Some(weight)) = (&bound[0], &bound[1]) else {
        return fail(site, code, "embedding_bag requires ids and a weight table");
    };
    let Some(offsets) = bound[2].as_ref().filter(|o| *o.literal != Literal::None) else {
        let detail = "embedding_bag requires offsets (an int64 CPU rank-1 tensor, \
                      positionally): rank-1 ids without offsets are eager's ValueError";
        return fail(site, code, detail);
    };
    let mut int_vectors = [None, None];
    for (slot, (what, argument)) in int_vectors
        .iter_mut()
        .zip([("ids", ids), ("offsets", offsets)])
    {
        *slot = Some(tensor_operand(site, argument, &[KEY_L], code, || {
            format!("embedding_bag {what} must be an int64 CPU rank-1 tensor (TensorI64Cpu1D)")
        })?);
    }
    let [Some(ids), Some(offsets)] = int_vectors else {
        return fail(site, code, "internal: embedding_bag ids and offsets");
    };
    let weight = tensor_operand(site, weight, &[KEY_M], code, || {
        "embedding_bag weight must be a float32 CPU rank-2 tensor (TensorF32Cpu2D)".to_string()
    })?;
    let op = ClaimedOp::EmbeddingBag {
        ids,
        weight,
        offsets,
        mode,
    };
    Ok(claimed(EMBEDDING_BAG, KEY_M, op))
}

fn dropout(site: &ClaimSite) -> Decided {
    let code = CODE_DROPOUT;
    let params = ["input", "p", "training", "inplace"];
    let bound = match bind(site, "dropout", &params) {
        Ok(bound) => bound,
        Err(detail) => return fail(site, code, detail),
    };
    let [input, p, training, inplace] = &bound[..] else {
        return fail(site, code, "internal: dropout arguments");
    };
    let Some(input) = input else {
        return fail(site, code, "dropout requires an input tensor");
    };
    if let Some(p) = p {
        match float_value(p.literal) {
            Some(p) if (0.0..=1.0).contains(&p) => {}
            Some(p) => {
                let detail = format!(
                    "dropout probability has to be between 0 and 1, but got {} (eager raises \
                     ValueError)",
                    float_repr(p)
                );
                return fail(site, code, detail);
            }
            None => {
                let detail = "dropout requires p as a float literal in [0, 1]";
                return fail(site, code, detail);
            }
        }
    }
    match training.as_ref().map(|t| t.literal) {
        Some(Literal::Bool(false)) => {}
        Some(Literal::Bool(true)) | None => {
            let detail = "dropout in training mode is random (it zeroes elements at random and \
                          scales the rest); only training=False, an identity, is compiled";
            return fail(site, code, detail);
        }
        Some(_) => {
            let detail = "dropout requires training as a literal False";
            return fail(site, code, detail);
        }
    }
    match inplace.as_ref().map(|t| t.literal) {
        None | Some(Literal::Bool(false)) => {}
        Some(_) => {
            let detail = "dropout with inplace= other than a literal False is not claimed \
                          (compiled code never writes into its arguments)";
            return fail(site, code, detail);
        }
    }
    let x = tensor_operand(site, input, &[KEY_M, KEY_V], CODE_UNSUPPORTED, || {
        OUTSIDE_F32_CPU.to_string()
    })?;
    let result_type = match input.ty.and_then(f32_cpu_key) {
        Some(key) => key,
        None => return Err(ClaimOutcome::NotCovered),
    };
    Ok(claimed(
        DROPOUT_EVAL,
        result_type,
        ClaimedOp::Identity { input: x },
    ))
}
