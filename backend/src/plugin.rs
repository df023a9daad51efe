//! The Rust text of the Rextio plugin (`python/rextio_torch/rextio_plugin.py`): the
//! expression one claimed site lowers to, the boundary conversions and helpers of the five
//! plugin types, and the function scope guard. Rextio's generated crate splices this text
//! into its PyO3 functions; the runtime and IR it calls are the ones [`inline_modules`]
//! carries into that crate as modules `rextio_runtime` and `rextio_ir`.
//!
//! Which site is claimed, by which rule, is not decided here: the driver
//! (`driver/src/plugin.rs`) reads the host's site, claims it with the frontend's rules and
//! hands the claimed operation over as a [`SiteOp`] with the host's rendered operands.
//!
//! [`inline_modules`]: crate::inline_modules

use rextio_ir::{BinaryOp, Marker, ReduceKind, SoftmaxKind, TensorType, UnaryOp, MARKERS};

/// Module paths of the carried runtime and IR in a Rextio-generated crate.
pub const RUNTIME_PATH: &str = "crate::rextio_runtime";
pub const IR_PATH: &str = "crate::rextio_ir";

/// The value type of every plugin type: the runtime's own, so that sites fuse
/// (`runtime/src/lazy.rs`).
pub const RUST_TYPE: &str = "crate::rextio_runtime::lazy::LazyTensor";
/// The Rust type of a parameter and of a return value at the PyO3 boundary.
pub const BOUNDARY_RUST: &str = "pyo3::Bound<'py, pyo3::types::PyAny>";
/// A returned value back to Python (`{value}` is the host's placeholder).
pub const RETURN_EXPR: &str = "crate::rextio_runtime::boundary::materialize_lazy(py, {value})?";
/// The scope guard of a PyO3 function that uses our rules (the reference plugin's).
pub const FUNCTION_SCOPE_GUARD: &str = "tch::no_grad_guard()";

/// One plugin type: a marker of the IR ([`MARKERS`], declared once there) seen by the plugin:
/// its annotation (`rextio_torch.types.<annotation>`), its key under `rextio-torch/`, the
/// suffix of its extract helper, and the tensors it holds.
#[derive(Clone, Copy, Debug)]
pub struct PluginType {
    pub marker: &'static Marker,
}

/// The plugin types, in the markers' order (the reference plugin's five: the extended
/// surface's float64/bfloat16 markers are not the plugin's).
pub fn plugin_types() -> impl Iterator<Item = PluginType> {
    MARKERS
        .iter()
        .filter(|marker| marker.reference)
        .map(|marker| PluginType { marker })
}

impl PluginType {
    pub fn annotation(&self) -> &'static str {
        self.marker.name
    }

    /// The key without its `rextio-torch/` namespace (`tensor-f32-cpu-2d`).
    pub fn key(&self) -> &'static str {
        let key = self.marker.key;
        key.strip_prefix("rextio-torch/").unwrap_or(key)
    }

    pub fn tensor(&self) -> TensorType {
        self.marker.ty
    }

    /// `f32_cpu_2d` for `tensor-f32-cpu-2d`: the suffix of the extract helper's name.
    pub fn helper_suffix(&self) -> String {
        let key = self.key();
        key.strip_prefix("tensor-").unwrap_or(key).replace('-', "_")
    }

    /// The helper function that extracts a parameter of this type (a module item of the
    /// generated crate, next to the carried runtime).
    pub fn extract_helper(&self) -> String {
        let TensorType {
            dtype,
            device,
            rank,
        } = self.marker.ty;
        format!(
            "fn __rxttorch_extract_{suffix}(obj: &pyo3::Bound<'_, pyo3::types::PyAny>, param: &str) \
             -> pyo3::PyResult<crate::rextio_runtime::lazy::LazyTensor> {{\n    \
             crate::rextio_runtime::boundary::extract_lazy(obj, crate::rextio_ir::TensorType {{ \
             dtype: crate::rextio_ir::DType::{dtype:?}, device: crate::rextio_ir::Device::{device:?}, \
             rank: {rank} }}, param)\n}}",
            suffix = self.helper_suffix(),
        )
    }

    /// A parameter of this type as its value (`{param}` is the host's placeholder).
    pub fn param_expr(&self) -> String {
        format!(
            "__rxttorch_extract_{}(&{{param}}, \"{{param}}\")?",
            self.helper_suffix()
        )
    }
}

/// A claimed site's operation, with each input as the host rendered it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SiteOp {
    Linear {
        input: String,
        weight: String,
        bias: Option<String>,
    },
    Unary {
        op: UnaryOp,
        input: String,
    },
    Binary {
        op: BinaryOp,
        lhs: String,
        rhs: String,
    },
    Matmul {
        lhs: String,
        rhs: String,
    },
    Reduce {
        kind: ReduceKind,
        input: String,
        dim: u8,
        keepdim: bool,
    },
    /// `softmax` or `log_softmax`; the Rextio plugin claims only the first (reference
    /// spellings), but the lowering is total.
    Softmax {
        kind: SoftmaxKind,
        input: String,
        dim: u8,
    },
    Argmax {
        input: String,
        dim: u8,
        keepdim: bool,
    },
}

/// One claimed site as one Rust expression (no `;`), for a PyO3 function of a
/// Rextio-generated crate: one call of `runtime::lazy` (errors become Python exceptions
/// with `?`).
pub fn lower_site(op: &SiteOp) -> String {
    let rt = RUNTIME_PATH;
    let ir = IR_PATH;
    let call = match op {
        SiteOp::Linear {
            input,
            weight,
            bias,
        } => format!(
            "{rt}::lazy::linear({}, {}, {})",
            operand(input),
            operand(weight),
            match bias {
                Some(b) => format!("Some(({}).into())", operand(b)),
                None => "None".to_string(),
            }
        ),
        SiteOp::Unary { op, input } => {
            format!(
                "{rt}::lazy::unary({ir}::UnaryOp::{op:?}, {})",
                operand(input)
            )
        }
        SiteOp::Binary { op, lhs, rhs } => format!(
            "{rt}::lazy::binary({ir}::BinaryOp::{op:?}, {}, {})",
            operand(lhs),
            operand(rhs)
        ),
        SiteOp::Matmul { lhs, rhs } => {
            format!("{rt}::lazy::matmul({}, {})", operand(lhs), operand(rhs))
        }
        SiteOp::Reduce {
            kind,
            input,
            dim,
            keepdim,
        } => format!(
            "{rt}::lazy::reduce({ir}::ReduceKind::{kind:?}, {}, {dim}, {keepdim})",
            operand(input)
        ),
        SiteOp::Softmax { kind, input, dim } => {
            format!("{rt}::lazy::{kind}({}, {dim})", operand(input))
        }
        SiteOp::Argmax {
            input,
            dim,
            keepdim,
        } => format!("{rt}::lazy::argmax({}, {dim}, {keepdim})", operand(input)),
    };
    format!("{call}.map_err({rt}::boundary::to_py_err)?")
}

/// The prefix of the temporaries the host binds a call chain's receiver to
/// (`{ let __rextio_recv_1 = <inner>; (<outer>) }`): each is read once, by its outer site.
const HOST_RECEIVER_TEMP: &str = "__rextio_recv_";

/// An operand as the runtime's `lazy` functions (`runtime/src/lazy.rs`) take it: by value
/// when it is used only here (a host receiver temporary, or a nested site's expression), so
/// that this site may extend a pending chain; by reference when it is a name the function may
/// read again (a parameter or a local).
pub fn operand(text: &str) -> String {
    let text = text.trim();
    let is_name = !text.is_empty()
        && !text.starts_with(|c: char| c.is_ascii_digit())
        && text.chars().all(|c| c == '_' || c.is_ascii_alphanumeric());
    if is_name && !text.starts_with(HOST_RECEIVER_TEMP) {
        format!("&({text})")
    } else {
        format!("({text})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lowers_linear() {
        let op = SiteOp::Linear {
            input: "x".into(),
            weight: "w".into(),
            bias: Some("b".into()),
        };
        assert_eq!(
            lower_site(&op),
            "crate::rextio_runtime::lazy::linear(&(x), &(w), Some((&(b)).into()))\
             .map_err(crate::rextio_runtime::boundary::to_py_err)?"
        );
    }

    #[test]
    fn names_are_shared_and_single_use_operands_are_moved() {
        // Parameters and locals may be read again: by reference.
        assert_eq!(operand("x"), "&(x)");
        assert_eq!(operand(" h_2 "), "&(h_2)");
        // A host receiver temporary is read once, by its outer site; a nested site's
        // expression is a temporary: both by value, so the site may extend a pending chain.
        assert_eq!(operand("__rextio_recv_1"), "(__rextio_recv_1)");
        assert_eq!(
            operand("crate::rextio_runtime::lazy::unary(U::Relu, &(x))?"),
            "(crate::rextio_runtime::lazy::unary(U::Relu, &(x))?)"
        );
        assert_eq!(operand("h.clone()"), "(h.clone())");
    }

    #[test]
    fn the_type_texts_are_the_reference_plugins() {
        let m = plugin_types().next().expect("a marker");
        assert_eq!(
            m.extract_helper(),
            "fn __rxttorch_extract_f32_cpu_2d(obj: &pyo3::Bound<'_, pyo3::types::PyAny>, \
             param: &str) -> pyo3::PyResult<crate::rextio_runtime::lazy::LazyTensor> {\n    \
             crate::rextio_runtime::boundary::extract_lazy(obj, crate::rextio_ir::TensorType { \
             dtype: crate::rextio_ir::DType::F32, device: crate::rextio_ir::Device::Cpu, \
             rank: 2 }, param)\n}"
        );
        assert_eq!(
            m.param_expr(),
            "__rxttorch_extract_f32_cpu_2d(&{param}, \"{param}\")?"
        );
        let cv = plugin_types().nth(4).expect("five markers");
        assert!(cv
            .extract_helper()
            .contains("DType::F32, device: crate::rextio_ir::Device::Cuda0, rank: 1 }"));
    }
}
