//! The views lane (ours; [`Surface::Extended`] only): views and shapes of a CPU tensor.
//!
//! - `x.shape[i]`, `x.size(i)`, `x.size()[i]` (the walker offers the subscripted forms as
//!   the site `x.shape` with the index as its one literal operand): a Python `int`
//!   ([`ClaimedOp::Size`]), of a float32 or int64 tensor. A negative index counts from the
//!   end; one out of range for the static rank is eager's `IndexError`, found here.
//! - `x.t()`, `x.T` (offered as the site `x.T`), `x.transpose(d0, d1)`, `torch.t(x)`,
//!   `torch.transpose(x, d0, d1)`: of rank 1, or two equal dims, the tensor itself
//!   ([`ClaimedOp::Identity`]), else the transpose of a rank-2 tensor.
//! - `x.reshape(s...)`, `x.view(s...)`, `torch.reshape(x, s)`: one or two sizes, ints
//!   (literals, `-1` once, or int values such as `x.shape[0]`), given separately or as one
//!   tuple or list display (which the walker spreads into operands).
//! - `x.flatten()`, `torch.flatten(x)` with literal `start_dim`/`end_dim` (of rank 2, `0..=1`
//!   flattens, equal dims are the tensor itself), `x.unsqueeze(d)` / `torch.unsqueeze`
//!   (rank 1 only: rank 3 is not compiled yet), `x.squeeze(d)` / `torch.squeeze(x, d)`
//!   (rank 2 only). `squeeze(d)` of a dim whose size is not 1 raises at run time (eager
//!   keeps the rank there, which the static type cannot follow; docs/views.md); the bare
//!   `squeeze()` (its rank depends on the sizes) is refused.
//!
//! Views are of float32 CPU tensors (M, V): an int64 view of rank 2 has no marker. Codes:
//! `RXTP-TORCH-110` size/shape, `111` transpose, `112` reshape/view, `113` flatten, `114`
//! unsqueeze, `115` squeeze. Under [`Surface::Reference`] the lane has no answer.

use super::reductions::{keyword_map, lookup, names_within};
use super::rules::{
    CODE_FLATTEN, CODE_RANK3_RESHAPE, CODE_RANK3_TRANSPOSE, CODE_RESHAPE, CODE_SIZE, CODE_SQUEEZE,
    CODE_TRANSPOSE, CODE_UNSQUEEZE, FLATTEN_STATIC, RANK3_RESHAPE, RANK3_TRANSPOSE, RESHAPE_INTS,
    SIZE_STATIC, SQUEEZE_STATIC, TRANSPOSE_STATIC, UNSQUEEZE_STATIC,
};
use super::{
    claimed, f32_cpu_key, method_name, reject, shown, ClaimOutcome, ClaimSite, ClaimedOp, Input,
    Literal, SiteKind, Surface, KEY_L, KEY_LM, KEY_M, KEY_T, KEY_V,
};
use rextio_ir::{Marker, ViewKind};

/// The op a method name or `torch.` function names, if it is one of this lane's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    Size,
    Transpose,
    Reshape,
    View,
    Flatten,
    Unsqueeze,
    Squeeze,
}

fn method_op(name: &str) -> Option<Op> {
    Some(match name {
        "size" | "shape" => Op::Size,
        "t" | "T" | "transpose" => Op::Transpose,
        "reshape" => Op::Reshape,
        "view" => Op::View,
        "flatten" => Op::Flatten,
        "unsqueeze" => Op::Unsqueeze,
        "squeeze" => Op::Squeeze,
        _ => return None,
    })
}

fn function_op(target: &str) -> Option<Op> {
    Some(match target {
        "torch.t" | "torch.transpose" => Op::Transpose,
        "torch.reshape" => Op::Reshape,
        "torch.flatten" => Op::Flatten,
        "torch.unsqueeze" => Op::Unsqueeze,
        "torch.squeeze" => Op::Squeeze,
        _ => return None,
    })
}

/// Whether the walker spreads a tuple or list display at positional argument `at` of this
/// call into operands (the sizes of `reshape` / `view`): `Some(at)` for this lane's
/// reshape spellings under the extended surface.
pub fn spreads_sizes(target: &str, method: bool, surface: Surface) -> Option<usize> {
    if surface != Surface::Extended {
        return None;
    }
    match (method, method_op(method_name(target)), function_op(target)) {
        (true, Some(Op::Reshape | Op::View), _) => Some(0),
        (false, _, Some(Op::Reshape)) => Some(1),
        _ => None,
    }
}

fn codes(op: Op) -> (&'static str, &'static str) {
    match op {
        Op::Size => (SIZE_STATIC, CODE_SIZE),
        Op::Transpose => (TRANSPOSE_STATIC, CODE_TRANSPOSE),
        Op::Reshape | Op::View => (RESHAPE_INTS, CODE_RESHAPE),
        Op::Flatten => (FLATTEN_STATIC, CODE_FLATTEN),
        Op::Unsqueeze => (UNSQUEEZE_STATIC, CODE_UNSQUEEZE),
        Op::Squeeze => (SQUEEZE_STATIC, CODE_SQUEEZE),
    }
}

/// A dim in `[-rank, rank)` normalized to `[0, rank)`.
fn normalized(dim: i64, rank: i64) -> Option<u8> {
    (-rank..rank)
        .contains(&dim)
        .then(|| if dim < 0 { dim + rank } else { dim } as u8)
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if site.kind != SiteKind::Call || surface != Surface::Extended {
        return None;
    }
    let method = site.receiver.is_some();
    let op = if method {
        method_op(method_name(&site.target))?
    } else {
        function_op(&site.target)?
    };
    // The tensor: the receiver, or the function's first operand; the rest are arguments.
    let (tensor_ty, x, first_arg) = if let Some(receiver) = &site.receiver {
        (receiver.arg_type.as_deref(), Input::Receiver, 0)
    } else {
        match site.operand_types.first() {
            Some(ty) => (ty.as_deref(), Input::Operand(0), 1),
            None => {
                let (_, code) = codes(op);
                return Some(reject(site, code, "requires a tensor operand"));
            }
        }
    };
    let ty = tensor_ty?; // unresolved: not covered
    let (mut rule_id, mut code) = codes(op);
    let target = site.target.as_str();
    // Rank 3 (ours, the rank-3 records): a transpose or a reshape/view of `TensorF32Cpu3D` (or
    // to three sizes, below) takes the rank-3 rules; its size is the size rule's.
    let rank3 = ty == KEY_T;
    if rank3 && op == Op::Transpose {
        (rule_id, code) = (RANK3_TRANSPOSE, CODE_RANK3_TRANSPOSE);
    }
    let n_sizes = site.operand_types.len().saturating_sub(first_arg);
    if matches!(op, Op::Reshape | Op::View) && (rank3 || n_sizes == 3) {
        (rule_id, code) = (RANK3_RESHAPE, CODE_RANK3_RESHAPE);
    }
    let allowed_input = match op {
        Op::Size => [KEY_M, KEY_V, KEY_L, KEY_T, KEY_LM].contains(&ty),
        Op::Transpose | Op::Reshape | Op::View => f32_cpu_key(ty).is_some() || rank3,
        _ => f32_cpu_key(ty).is_some(),
    };
    if !allowed_input {
        if method && Marker::by_key(ty).is_none() {
            // A method of some other value (`s.view()` of a non-tensor): not ours.
            return None;
        }
        let expected = match op {
            Op::Size => "a CPU tensor (TensorF32Cpu1D, TensorF32Cpu2D or TensorI64Cpu1D)",
            _ => "a float32 CPU tensor (TensorF32Cpu1D or TensorF32Cpu2D)",
        };
        let detail = format!("{target} requires {expected}, got {}", shown(ty));
        return Some(reject(site, code, detail));
    }
    let rank: i64 = Marker::by_key(ty).map_or(1, |m| i64::from(m.ty.rank));
    let args = &site.operand_literals[first_arg.min(site.operand_literals.len())..];
    let arg_types = &site.operand_types[first_arg.min(site.operand_types.len())..];

    // Literal int options, positional then by keyword, each at most once.
    let int_options = |names: &[&str]| -> Result<Vec<Option<i64>>, String> {
        let expected: Vec<(&str, &str)> = names.iter().map(|n| (*n, "int")).collect();
        let keywords = keyword_map(site, &expected)
            .ok_or_else(|| format!("{target} keywords must be unique literal ints"))?;
        if args.len() > names.len() || !names_within(&keywords, &names[args.len()..]) {
            return Err(format!(
                "unsupported or duplicate positional/keyword options for {target} (it takes {})",
                if names.is_empty() {
                    "no arguments".to_string()
                } else {
                    format!("literal int {}", names.join(", "))
                }
            ));
        }
        names
            .iter()
            .enumerate()
            .map(
                |(i, name)| match args.get(i).or_else(|| lookup(&keywords, name)) {
                    None => Ok(None),
                    Some(Literal::Int(v)) => Ok(Some(*v)),
                    Some(_) => Err(format!("{target} requires a literal int {name}")),
                },
            )
            .collect()
    };
    let out_of_range = |what: &str, d: i64, r: i64| {
        format!(
            "{target} {what}={d} is out of range for a rank-{rank} tensor (expected a dim in [{}, {}]; eager raises IndexError)",
            -r,
            r - 1
        )
    };

    match op {
        Op::Size => {
            let opts = match int_options(&["dim"]) {
                Ok(opts) => opts,
                Err(detail) => return Some(reject(site, code, detail)),
            };
            let Some(d) = opts[0] else {
                let detail = format!(
                    "{target}() is a torch.Size, which compiled code does not have; index it ({target}()[0]) or pass a dim ({target}(0))"
                );
                return Some(reject(site, code, detail));
            };
            let Some(dim) = normalized(d, rank) else {
                let detail = format!(
                    "index {d} is out of range for the {} dims of {} (eager raises IndexError: tuple index out of range / Dimension out of range)",
                    rank,
                    shown(ty)
                );
                return Some(reject(site, code, detail));
            };
            Some(claimed(rule_id, "int", ClaimedOp::Size { input: x, dim }))
        }
        Op::Transpose => {
            let result = if rank3 { KEY_T } else { f32_cpu_key(ty)? };
            let name = method_name(target);
            if rank3 && (name == "t" || name == "T") {
                let detail = if name == "t" {
                    format!("{target} of a rank-3 tensor: eager raises RuntimeError (t() expects a tensor with <= 2 dimensions, but self is 3D); write transpose(-2, -1)")
                } else {
                    format!("{target} of a rank-3 tensor (all dims reversed, deprecated in eager) is not claimed; write transpose(d0, d1) or permute")
                };
                return Some(reject(site, code, detail));
            }
            let dims = if name == "t" || name == "T" {
                match int_options(&[]) {
                    Ok(_) => (0, rank - 1),
                    Err(detail) => return Some(reject(site, code, detail)),
                }
            } else {
                match int_options(&["dim0", "dim1"]) {
                    Ok(opts) => match (opts[0], opts[1]) {
                        (Some(a), Some(b)) => (a, b),
                        _ => {
                            let detail =
                                format!("{target} requires two literal int dims (dim0, dim1)");
                            return Some(reject(site, code, detail));
                        }
                    },
                    Err(detail) => return Some(reject(site, code, detail)),
                }
            };
            let (Some(a), Some(b)) = (normalized(dims.0, rank), normalized(dims.1, rank)) else {
                let bad = if normalized(dims.0, rank).is_none() {
                    dims.0
                } else {
                    dims.1
                };
                return Some(reject(site, code, out_of_range("dim", bad, rank)));
            };
            if a.abs_diff(b) > 1 {
                let detail = format!(
                    "{target} of dims {} and {} of a rank-3 tensor is not claimed: only adjacent dims (0 and 1, 1 and 2, e.g. transpose(-2, -1)) are",
                    dims.0, dims.1
                );
                return Some(reject(site, code, detail));
            }
            let op = if a == b {
                ClaimedOp::Identity { input: x }
            } else {
                // The IR's transpose swaps `dim` and `dim + 1`.
                ClaimedOp::View {
                    kind: ViewKind::Transpose,
                    input: x,
                    sizes: Vec::new(),
                    dim: a.min(b),
                }
            };
            Some(claimed(rule_id, result, op))
        }
        Op::Reshape | Op::View => {
            if !site.keywords.is_empty() {
                let detail = format!("{target} takes its sizes positionally (no keywords)");
                return Some(reject(site, code, detail));
            }
            let n = args.len();
            if n == 0 || n > 3 {
                let detail = format!(
                    "{target} to {n} sizes is not claimed: compiled tensors have rank 1, 2 or 3 (give one to three int sizes)"
                );
                return Some(reject(site, code, detail));
            }
            let mut inferred = 0;
            for (i, (literal, ty)) in args.iter().zip(arg_types).enumerate() {
                match (literal, ty.as_deref()) {
                    (Literal::Int(-1), _) => inferred += 1,
                    (Literal::Int(v), _) if *v < -1 => {
                        let detail = format!(
                            "{target} size {i} is {v} (eager raises RuntimeError: invalid shape dimension {v})"
                        );
                        return Some(reject(site, code, detail));
                    }
                    (Literal::Int(_), _) | (_, Some("int")) => {}
                    (_, None) => return Some(ClaimOutcome::NotCovered),
                    (_, Some(other)) => {
                        let detail = format!(
                            "{target} size {i} is {}; sizes must be ints (literals or int values such as x.shape[0]), given separately or as one tuple or list display",
                            shown(other)
                        );
                        return Some(reject(site, code, detail));
                    }
                }
            }
            if inferred > 1 {
                let detail = format!(
                    "{target} infers more than one size from -1 (eager raises RuntimeError: only one dimension can be inferred)"
                );
                return Some(reject(site, code, detail));
            }
            let kind = if op == Op::View {
                ViewKind::View
            } else {
                ViewKind::Reshape
            };
            let result = match n {
                3 => KEY_T,
                2 => KEY_M,
                _ => KEY_V,
            };
            let op = ClaimedOp::View {
                kind,
                input: x,
                sizes: (first_arg..first_arg + n).map(Input::Operand).collect(),
                dim: 0,
            };
            Some(claimed(rule_id, result, op))
        }
        Op::Flatten => {
            let opts = match int_options(&["start_dim", "end_dim"]) {
                Ok(opts) => opts,
                Err(detail) => return Some(reject(site, code, detail)),
            };
            let (start, end) = (opts[0].unwrap_or(0), opts[1].unwrap_or(-1));
            let Some(s) = normalized(start, rank) else {
                return Some(reject(site, code, out_of_range("start_dim", start, rank)));
            };
            let Some(e) = normalized(end, rank) else {
                return Some(reject(site, code, out_of_range("end_dim", end, rank)));
            };
            if s > e {
                let detail = format!(
                    "{target} start_dim={start} comes after end_dim={end} (eager raises RuntimeError: flatten() has invalid args)"
                );
                return Some(reject(site, code, detail));
            }
            let result = f32_cpu_key(ty)?;
            let op = if s == e {
                ClaimedOp::Identity { input: x }
            } else {
                ClaimedOp::View {
                    kind: ViewKind::Flatten,
                    input: x,
                    sizes: Vec::new(),
                    dim: 0,
                }
            };
            Some(claimed(rule_id, if s == e { result } else { KEY_V }, op))
        }
        Op::Unsqueeze | Op::Squeeze => {
            let opts = match int_options(&["dim"]) {
                Ok(opts) => opts,
                Err(detail) => return Some(reject(site, code, detail)),
            };
            let Some(d) = opts[0] else {
                let detail = match op {
                    Op::Squeeze => format!(
                        "{target}() without a dim is not claimed: its rank depends on the sizes at run time; name the dim ({target}(0))"
                    ),
                    _ => format!("{target} requires a literal int dim"),
                };
                return Some(reject(site, code, detail));
            };
            let (kind, result, range) = match op {
                Op::Unsqueeze if rank == 2 => {
                    let detail = format!(
                        "{target} of TensorF32Cpu2D has rank 3, which compiled code does not have (ranks 1 and 2)"
                    );
                    return Some(reject(site, code, detail));
                }
                Op::Unsqueeze => (ViewKind::Unsqueeze, KEY_M, rank + 1),
                _ if rank == 1 => {
                    let detail = format!(
                        "{target} of TensorF32Cpu1D has rank 0 (or, when the size is not 1, rank 1), which compiled code does not have"
                    );
                    return Some(reject(site, code, detail));
                }
                _ => (ViewKind::Squeeze, KEY_V, rank),
            };
            let Some(dim) = normalized(d, range) else {
                return Some(reject(site, code, out_of_range("dim", d, range)));
            };
            let op = ClaimedOp::View {
                kind,
                input: x,
                sizes: Vec::new(),
                dim,
            };
            Some(claimed(rule_id, result, op))
        }
    }
}
