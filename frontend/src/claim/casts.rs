//! The casts lane (ours; [`Surface::Extended`] only): the dtype plumbing of mixed-precision
//! code, `x.float()`, `x.double()`, `x.bfloat16()`, `x.to(torch.float32)`,
//! `x.to(dtype=x.dtype)`, `x.to(y)`, `x.type_as(y)`, on a tensor whose static dtype (and, for
//! a tensor argument, device) already is the one asked for. Such a call is eager's no-op:
//! eager returns the receiver itself (the same object), and so does the claim
//! ([`ClaimedOp::Identity`]: no IR op, the site's value is the receiver's), so `y is x` holds
//! in both and a later in-place update sees one tensor, as in eager.
//!
//! A real conversion (`x.to(torch.float64)` of a float32 tensor) is refused with
//! `RXTP-TORCH-170`, naming both dtypes: a compiled function keeps every value at its
//! annotated dtype (no cast op yet; eager's rounding of each conversion would need its own
//! kernels). So is every other form of these methods (`copy=True`, `memory_format=`, a device
//! string, two arguments): eager may return a new tensor there.
//!
//! `x.contiguous()` (no argument) of a CPU tensor of rank 1 to 3 is the IR's `contiguous` view
//! ([`ViewKind::Contiguous`]: ATen's, `x` itself where it is contiguous, else a dense copy, as
//! in eager; `RXTP-TORCH-171`). It is not lowered to no op: a transposed tensor's
//! `.contiguous().view(...)` needs the copy.
//!
//! The walker offers a dtype written as `torch.float32` (and the other dtype names) or as
//! `t.dtype` of a typed tensor as an operand of type [`KEY_DTYPE`] whose literal is the
//! dtype's torch name (`Literal::Str("float32")`), for these methods only
//! ([`takes_dtype`]); this lane runs right after cuda, before the dtype lane, so float64 and
//! bfloat16 receivers are read at their own dtype.

use rextio_ir::{Device, Marker, ViewKind};

use super::rules::{CAST_SAME_DTYPE, CODE_CAST, CODE_CONTIGUOUS, CONTIGUOUS};
use super::{
    claimed, method_name, reject, shown, tensor_key, ClaimOutcome, ClaimSite, ClaimedOp, Input,
    Literal, SiteKind, Surface,
};

/// The operand type the walker gives a statically known dtype (`torch.float32`, `x.dtype`).
pub const KEY_DTYPE: &str = "torch.dtype";

/// The methods of this lane.
const METHODS: [&str; 6] = ["to", "type_as", "float", "double", "bfloat16", "contiguous"];

/// `x.contiguous()`: the `contiguous` view of a rank-1 to rank-3 tensor.
fn contiguous(site: &ClaimSite, key: &'static str, marker: &Marker) -> ClaimOutcome {
    if !site.operand_types.is_empty() || !site.keywords.is_empty() {
        let detail = "only .contiguous() without arguments is compiled (a memory format may copy \
                      to another layout)";
        return reject(site, CODE_CONTIGUOUS, detail);
    }
    if !(1..=3).contains(&marker.ty.rank) {
        let detail = format!(
            ".contiguous() is compiled for tensors of rank 1 to 3; got {}",
            shown(key)
        );
        return reject(site, CODE_CONTIGUOUS, detail);
    }
    let op = ClaimedOp::View {
        kind: ViewKind::Contiguous,
        input: Input::Receiver,
        sizes: Vec::new(),
        dim: 0,
    };
    claimed(CONTIGUOUS, key, op)
}

/// Whether the walker reads the arguments of `method` (a method call) as dtypes where they
/// are written as one (`torch.float32`, `x.dtype`).
pub fn takes_dtype(method: &str, surface: Surface) -> bool {
    surface == Surface::Extended && matches!(method, "to" | "type_as")
}

/// The torch name of a dtype written as `torch.<name>` (aliases included), for the dtypes
/// a message may need to name.
pub fn dtype_named(path: &str) -> Option<&'static str> {
    Some(match path.strip_prefix("torch.")? {
        "float32" | "float" => "float32",
        "float64" | "double" => "float64",
        "bfloat16" => "bfloat16",
        "float16" | "half" => "float16",
        "int64" | "long" => "int64",
        "int32" | "int" => "int32",
        "int16" | "short" => "int16",
        "int8" => "int8",
        "uint8" => "uint8",
        "bool" => "bool",
        "complex64" | "cfloat" => "complex64",
        "complex128" | "cdouble" => "complex128",
        _ => return None,
    })
}

/// What a call asks for: a dtype, or a tensor's dtype and device.
enum Wanted {
    DType(String),
    Like(&'static Marker),
}

pub(super) fn try_claim(site: &ClaimSite, surface: Surface) -> Option<ClaimOutcome> {
    if surface != Surface::Extended || site.kind != SiteKind::Call {
        return None;
    }
    let method = method_name(&site.target);
    if !METHODS.contains(&method) {
        return None;
    }
    let receiver = site.receiver.as_ref()?;
    let receiver_type = receiver.arg_type.as_deref()?;
    // Unresolved arguments: not covered, never a refusal that depends on them.
    if site.operand_types.iter().any(Option::is_none)
        || site.keywords.iter().any(|k| k.arg_type.is_none())
    {
        return Some(ClaimOutcome::NotCovered);
    }
    let key = tensor_key(receiver_type)?;
    let marker = Marker::by_key(key)?;
    if method == "contiguous" {
        return Some(contiguous(site, key, marker));
    }
    let wanted = match wanted(site, method) {
        Ok(wanted) => wanted,
        Err(detail) => return Some(reject(site, CODE_CAST, detail)),
    };
    let same = match &wanted {
        Wanted::DType(name) => name == marker.ty.dtype.torch_name(),
        Wanted::Like(other) => {
            other.ty.dtype == marker.ty.dtype && other.ty.device == marker.ty.device
        }
    };
    if same {
        let op = ClaimedOp::Identity {
            input: Input::Receiver,
        };
        return Some(claimed(CAST_SAME_DTYPE, key, op));
    }
    let asked = match &wanted {
        Wanted::DType(name) => name.clone(),
        Wanted::Like(other) => format!(
            "{}{}",
            other.ty.dtype.torch_name(),
            device_words(other.ty.device)
        ),
    };
    let detail = format!(
        "converts {} ({}{}) to {asked}; compiled code keeps every value at its annotated dtype \
         and device (no conversion is compiled yet): annotate the argument with the dtype it \
         is used at, or convert it before the call",
        shown(key),
        marker.ty.dtype.torch_name(),
        device_words(marker.ty.device),
    );
    Some(reject(site, CODE_CAST, detail))
}

/// ` on cuda:0` for a CUDA type, nothing for the CPU.
fn device_words(device: Device) -> &'static str {
    match device {
        Device::Cpu => "",
        Device::Cuda0 => " on cuda:0",
    }
}

/// What the call asks for, or why its form is refused.
fn wanted(site: &ClaimSite, method: &str) -> Result<Wanted, String> {
    let operands: Vec<(Option<&str>, &Literal)> = site
        .operand_types
        .iter()
        .map(|t| t.as_deref())
        .zip(&site.operand_literals)
        .collect();
    let dtype_of = |ty: Option<&str>, literal: &Literal| -> Option<Wanted> {
        match (ty, literal) {
            (Some(KEY_DTYPE), Literal::Str(name)) => Some(Wanted::DType(name.clone())),
            (Some(ty), _) => tensor_key(ty).and_then(Marker::by_key).map(Wanted::Like),
            _ => None,
        }
    };
    let fixed = |name: &str| match name {
        "float" => "float32",
        "double" => "float64",
        _ => "bfloat16",
    };
    match method {
        "float" | "double" | "bfloat16" => {
            if operands.is_empty() && site.keywords.is_empty() {
                Ok(Wanted::DType(fixed(method).to_string()))
            } else {
                Err(format!(
                    "only .{method}() without arguments is compiled (a memory format may copy)"
                ))
            }
        }
        "type_as" => match (operands.as_slice(), site.keywords.is_empty()) {
            ([(Some(ty), _)], true) if tensor_key(ty).is_some() => Ok(Wanted::Like(
                Marker::by_key(ty).expect("a tensor key is a marker's"),
            )),
            _ => Err(".type_as(other) takes exactly one typed tensor".to_string()),
        },
        _ => {
            let keyword = match site.keywords.as_slice() {
                [] => None,
                [k] if k.name == "dtype" => Some(k),
                _ => {
                    return Err(
                        "only .to(dtype), .to(dtype=dtype) or .to(other) is compiled (copy=, \
                         non_blocking=, memory_format= and devices are not)"
                            .to_string(),
                    )
                }
            };
            let found = match (operands.as_slice(), keyword) {
                ([(ty, literal)], None) => dtype_of(*ty, literal),
                ([], Some(k)) => match (k.arg_type.as_deref(), &k.literal) {
                    (Some(KEY_DTYPE), Literal::Str(name)) => Some(Wanted::DType(name.clone())),
                    _ => None,
                },
                _ => None,
            };
            found.ok_or_else(|| {
                "only .to(dtype), .to(dtype=dtype) or .to(other) with a dtype known when \
                 compiling (torch.float32, t.dtype) or a typed tensor is compiled"
                    .to_string()
            })
        }
    }
}
