//! The rule records of the rextio-torch surface, as data: every rule id a lane can claim
//! with, and every diagnostic code a lane can reject with, lives here, except that the unary
//! ops' spellings carry their rule ids and codes in the op table
//! (`rextio_ir::for_each_unary_op!`, read by [`super::spellings`]). For a reference spelling
//! the record is here too, verbatim, and a test checks the two agree; an extension spelling
//! (outside the reference surface) has no record here: its records are generated from the
//! table and follow ours.
//!
//! The 50 records mirror the reference `rules/records.py` (rextio-torch 0.1.3, see
//! `docs/reference-plugin.md`): id, scope kind, diagnostic code, outcome,
//! `verified`, and a short description of the accepted form and its result.
//!
//! One record is ours: `rextio-torch/cuda0-unsupported-op` declares `RXTP-TORCH-049`, the
//! code the CUDA lane uses for "any other op touching a CUDA tensor". The reference emits
//! that code without declaring it, which makes Rextio Core abort the whole analysis with a
//! `PluginError` (`docs/reference-plugin.md`, "RXTP-TORCH-049"). We keep the reference code
//! and message and add the missing record (outcome fallback) so that every rejection we emit
//! is declared.

use std::sync::LazyLock;

// Rule ids (all namespaced `rextio-torch/`).
pub const LINEAR: &str = "rextio-torch/functional-linear-f32-cpu-2d";
pub const LINEAR_NONE: &str = "rextio-torch/functional-linear-none-f32-cpu-2d";
pub const RELU_2D: &str = "rextio-torch/tensor-relu-f32-cpu-2d";
pub const MEAN_DIM1: &str = "rextio-torch/tensor-mean-dim1-f32-cpu-2d";
pub const RELU_1D: &str = "rextio-torch/tensor-relu-f32-cpu-1d";
pub const SIGMOID_1D: &str = "rextio-torch/tensor-sigmoid-f32-cpu-1d";
pub const SIGMOID_2D: &str = "rextio-torch/tensor-sigmoid-f32-cpu-2d";
pub const TANH_1D: &str = "rextio-torch/tensor-tanh-f32-cpu-1d";
pub const TANH_2D: &str = "rextio-torch/tensor-tanh-f32-cpu-2d";
pub const MATMUL_2D: &str = "rextio-torch/tensor-matmul-f32-cpu-2d";
pub const MATMUL_CALL_2D: &str = "rextio-torch/tensor-matmul-call-f32-cpu-2d";
pub const MATMUL_MIXED: &str = "rextio-torch/tensor-matmul-f32-cpu-mixed-rank";
pub const MATMUL_CALL_MIXED: &str = "rextio-torch/tensor-matmul-call-f32-cpu-mixed-rank";
pub const UNARY_ABS: &str = "rextio-torch/unary-abs-f32-cpu-rank1-2";
pub const UNARY_NEG: &str = "rextio-torch/unary-neg-f32-cpu-rank1-2";
pub const UNARY_NEGATIVE: &str = "rextio-torch/unary-negative-f32-cpu-rank1-2";
pub const UNARY_SQUARE: &str = "rextio-torch/unary-square-f32-cpu-rank1-2";
pub const UNARY_EXP: &str = "rextio-torch/unary-exp-f32-cpu-rank1-2";
pub const UNARY_LOG: &str = "rextio-torch/unary-log-f32-cpu-rank1-2";
pub const UNARY_SQRT: &str = "rextio-torch/unary-sqrt-f32-cpu-rank1-2";
pub const GELU_NONE: &str = "rextio-torch/functional-gelu-none-f32-cpu-rank1-2";
pub const UNSUPPORTED_SURFACE: &str = "rextio-torch/unsupported-tensor-surface";
pub const ADD_SAME: &str = "rextio-torch/tensor-add-f32-cpu-same-rank";
pub const ADD_BROADCAST: &str = "rextio-torch/tensor-add-f32-cpu-2d-1d-broadcast";
pub const MUL_SAME: &str = "rextio-torch/tensor-mul-f32-cpu-same-rank";
pub const MUL_BROADCAST: &str = "rextio-torch/tensor-mul-f32-cpu-2d-1d-broadcast";
pub const SUB_SAME: &str = "rextio-torch/tensor-sub-f32-cpu-same-rank";
pub const SUB_BROADCAST: &str = "rextio-torch/tensor-sub-f32-cpu-2d-1d-broadcast";
pub const DIV_SAME: &str = "rextio-torch/tensor-div-f32-cpu-same-rank";
pub const DIV_BROADCAST: &str = "rextio-torch/tensor-div-f32-cpu-2d-1d-broadcast";
pub const SUM_DIM1: &str = "rextio-torch/tensor-sum-dim1-f32-cpu-2d";
pub const FUNCTION_RELU: &str = "rextio-torch/function-relu-f32-cpu-rank1-2";
pub const FUNCTIONAL_RELU: &str = "rextio-torch/functional-relu-f32-cpu-rank1-2";
pub const FUNCTION_SIGMOID: &str = "rextio-torch/function-sigmoid-f32-cpu-rank1-2";
pub const FUNCTION_TANH: &str = "rextio-torch/function-tanh-f32-cpu-rank1-2";
pub const MEAN_STATIC: &str = "rextio-torch/mean-static-dim-f32-cpu-rank1-2";
pub const SUM_STATIC: &str = "rextio-torch/sum-static-dim-f32-cpu-rank1-2";
pub const SOFTMAX_STATIC: &str = "rextio-torch/softmax-static-dim-f32-cpu-rank1-2";
pub const FUNCTIONAL_SOFTMAX: &str = "rextio-torch/functional-softmax-f32-cpu-rank1-2";
pub const ARGMAX_STATIC: &str = "rextio-torch/argmax-static-dim-i64-cpu-rank1";
pub const FUNCTION_ADD: &str = "rextio-torch/function-add-f32-cpu-rank1-2";
pub const FUNCTION_SUB: &str = "rextio-torch/function-sub-f32-cpu-rank1-2";
pub const FUNCTION_MUL: &str = "rextio-torch/function-mul-f32-cpu-rank1-2";
pub const FUNCTION_DIV: &str = "rextio-torch/function-div-f32-cpu-rank1-2";
pub const SOFTMAX_DIM1: &str = "rextio-torch/tensor-softmax-dim1-f32-cpu-2d";
pub const ARGMAX_DIM1: &str = "rextio-torch/tensor-argmax-dim1-keepfalse-i64-cpu-1d";
pub const CUDA_MATMUL: &str = "rextio-torch/cuda0-matmul-f32-2d";
pub const CUDA_BIAS_ADD: &str = "rextio-torch/cuda0-bias-add-f32-2d-1d";
pub const CUDA_RELU: &str = "rextio-torch/cuda0-relu-f32-2d";
pub const CUDA_MEAN_DIM1: &str = "rextio-torch/cuda0-mean-dim1-f32-2d";
/// Ours (extension spellings): a float32 CPU tensor with an `int`/`float` scalar.
pub const ADD_SCALAR: &str = "rextio-torch/tensor-add-scalar-f32-cpu-rank1-2";
pub const SUB_SCALAR: &str = "rextio-torch/tensor-sub-scalar-f32-cpu-rank1-2";
pub const MUL_SCALAR: &str = "rextio-torch/tensor-mul-scalar-f32-cpu-rank1-2";
pub const DIV_SCALAR: &str = "rextio-torch/tensor-div-scalar-f32-cpu-rank1-2";
/// Ours, not the reference's: declares `RXTP-TORCH-049` (see the module docs).
pub const CUDA_UNSUPPORTED: &str = "rextio-torch/cuda0-unsupported-op";
// Extension rules of the reduction and classification lanes (ours; the extended surface
// only, see [`EXTENSION_RECORDS`]).
pub const LOG_SOFTMAX_STATIC: &str = "rextio-torch/log-softmax-static-dim-f32-cpu-rank1-2";
pub const FUNCTIONAL_LOG_SOFTMAX: &str = "rextio-torch/functional-log-softmax-f32-cpu-rank1-2";
pub const AMAX_STATIC: &str = "rextio-torch/amax-static-dim-f32-cpu-rank1-2";
pub const AMIN_STATIC: &str = "rextio-torch/amin-static-dim-f32-cpu-rank1-2";
// The layers lane's rules (ours; the extended surface only, see [`LAYER_RECORDS`]).
pub const LAYER_NORM: &str = "rextio-torch/functional-layer-norm-last-dim-f32-cpu-rank1-2";
pub const EMBEDDING: &str = "rextio-torch/functional-embedding-i64-ids-f32-cpu-2d";
pub const DROPOUT_EVAL: &str = "rextio-torch/functional-dropout-eval-f32-cpu-rank1-2";
// Extension rules of the scalar-parameter lane (ours; see [`PARAM_RECORDS`]).
pub const FUNCTIONAL_LEAKY_RELU: &str = "rextio-torch/functional-leaky-relu-f32-cpu-rank1-2";
pub const FUNCTIONAL_ELU: &str = "rextio-torch/functional-elu-f32-cpu-rank1-2";
pub const FUNCTIONAL_HARDTANH: &str = "rextio-torch/functional-hardtanh-f32-cpu-rank1-2";
pub const CLAMP_SCALAR: &str = "rextio-torch/clamp-scalar-f32-cpu-rank1-2";
// Extension rules of the joins lane (ours; the extended surface only, see [`JOIN_RECORDS`]).
pub const CAT_STATIC: &str = "rextio-torch/cat-static-dim-f32-cpu-rank1-3";
pub const STACK_STATIC: &str = "rextio-torch/stack-static-dim-f32-cpu-rank0-2";
// Extension rules of the views lane (ours; the extended surface only, see [`VIEW_RECORDS`]).
pub const SIZE_STATIC: &str = "rextio-torch/size-static-dim-cpu-rank1-2";
pub const TRANSPOSE_STATIC: &str = "rextio-torch/transpose-static-dims-f32-cpu-rank1-2";
pub const RESHAPE_INTS: &str = "rextio-torch/reshape-view-int-sizes-f32-cpu-rank1-2";
pub const FLATTEN_STATIC: &str = "rextio-torch/flatten-static-dims-f32-cpu-rank1-2";
pub const UNSQUEEZE_STATIC: &str = "rextio-torch/unsqueeze-static-dim-f32-cpu-rank1";
pub const SQUEEZE_STATIC: &str = "rextio-torch/squeeze-static-dim-f32-cpu-rank2";
// Extension rules of the elementwise lane (ours; the extended surface only, see
// [`ELEMENTWISE_RECORDS`]).
pub const WHERE_COMPARE: &str = "rextio-torch/where-compare-f32-cpu-rank1-2";
pub const MAXIMUM_TENSOR: &str = "rextio-torch/maximum-f32-cpu-rank1-2";
pub const MINIMUM_TENSOR: &str = "rextio-torch/minimum-f32-cpu-rank1-2";
pub const POW_SCALAR: &str = "rextio-torch/pow-scalar-exponent-f32-cpu-rank1-2";
pub const POW_OPERATOR: &str = "rextio-torch/pow-operator-scalar-exponent-f32-cpu-rank1-2";
// Extension rules of the dim-ops lane (ours; the extended surface only, see
// [`DIM_OP_RECORDS`]).
pub const MAX_DIM: &str = "rextio-torch/max-dim-values-indices-f32-cpu-rank1-2";
pub const MIN_DIM: &str = "rextio-torch/min-dim-values-indices-f32-cpu-rank1-2";
pub const FILL_LIKE: &str = "rextio-torch/zeros-ones-full-like-f32-cpu-rank1-2";
pub const INDEX_SELECT: &str = "rextio-torch/index-select-static-dim-i64-ids-f32-cpu-rank1-2";
pub const NORMALIZE: &str = "rextio-torch/functional-normalize-static-f32-cpu-rank1-2";
pub const EMBEDDING_BAG: &str = "rextio-torch/functional-embedding-bag-i64-ids-offsets-f32-cpu-2d";
// The rank-3 lane's rules (ours; the extended surface only, see [`RANK3_RECORDS`]).
pub const RANK3_MATMUL: &str = "rextio-torch/matmul-operator-f32-cpu-rank3";
pub const RANK3_MATMUL_CALL: &str = "rextio-torch/matmul-call-f32-cpu-rank3";
pub const RANK3_BINOP: &str = "rextio-torch/elementwise-operator-f32-cpu-rank3";
pub const RANK3_FUNCTION: &str = "rextio-torch/elementwise-function-f32-cpu-rank3";
pub const RANK3_UNARY: &str = "rextio-torch/unary-ops-f32-cpu-rank3";
pub const RANK3_SOFTMAX: &str = "rextio-torch/softmax-log-softmax-static-dim-f32-cpu-rank3";
pub const RANK3_LINEAR: &str = "rextio-torch/functional-linear-f32-cpu-rank3";
pub const RANK3_TRANSPOSE: &str = "rextio-torch/transpose-adjacent-dims-f32-cpu-rank3";
pub const RANK3_RESHAPE: &str = "rextio-torch/reshape-view-int-sizes-f32-cpu-rank3";
pub const RANK3_BMM: &str = "rextio-torch/bmm-f32-cpu-rank3";
pub const RANK3_REDUCE: &str = "rextio-torch/sum-mean-amax-amin-static-dim-f32-cpu-rank3";
pub const RANK3_LAYER_NORM: &str = "rextio-torch/functional-layer-norm-last-dim-f32-cpu-rank3";
pub const RANK3_ELEMENTWISE: &str = "rextio-torch/pow-maximum-minimum-where-f32-cpu-rank3";
pub const RANK3_POW_OPERATOR: &str = "rextio-torch/pow-operator-scalar-exponent-f32-cpu-rank3";
// The rank-0 lane's rules (ours; the extended surface only, see [`RANK0_RECORDS`]).
pub const RANK0_REDUCE: &str = "rextio-torch/whole-tensor-reduction-f32-cpu";
pub const RANK0_TO_SCALAR: &str = "rextio-torch/item-float-f32-cpu";
pub const RANK0_TRUTH: &str = "rextio-torch/tensor-condition-f32-cpu";
pub const RANK0_BINOP: &str = "rextio-torch/elementwise-operator-f32-cpu-rank0";
pub const RANK0_UNARY: &str = "rextio-torch/unary-ops-f32-cpu-rank0";
// The scalar math lane's rules (ours; the extended surface only, see [`MATH_RECORDS`]).
pub const MATH_SQRT: &str = "rextio-torch/math-sqrt-int-float";
pub const MATH_EXP: &str = "rextio-torch/math-exp-int-float";
pub const MATH_LOG: &str = "rextio-torch/math-log-int-float";
pub const MATH_TANH: &str = "rextio-torch/math-tanh-int-float";
pub const MATH_FLOOR: &str = "rextio-torch/math-floor-int-float";
pub const MATH_CEIL: &str = "rextio-torch/math-ceil-int-float";
pub const MATH_FABS: &str = "rextio-torch/math-fabs-int-float";
// The dtype lane's rules (ours; the extended surface only, see [`DTYPE_RECORDS`]).
pub const F64_OPS: &str = "rextio-torch/float-ops-f64-cpu-rank0-3";
pub const BF16_OPS: &str = "rextio-torch/float-ops-bf16-cpu-rank0-3";
pub const F64_BINOPS: &str = "rextio-torch/float-binops-f64-cpu-rank0-3";
pub const BF16_BINOPS: &str = "rextio-torch/float-binops-bf16-cpu-rank0-3";
pub const F64_CONDITIONS: &str = "rextio-torch/tensor-condition-f64-cpu";
pub const BF16_CONDITIONS: &str = "rextio-torch/tensor-condition-bf16-cpu";

// Diagnostic codes the lanes reject with (the reference `diagnostics.py` constants).
pub const CODE_RELU: &str = "RXTP-TORCH-002";
pub const CODE_MEAN: &str = "RXTP-TORCH-003";
pub const CODE_SIGMOID: &str = "RXTP-TORCH-006";
pub const CODE_TANH: &str = "RXTP-TORCH-008";
pub const CODE_MATMUL: &str = "RXTP-TORCH-009";
pub const CODE_UNSUPPORTED: &str = "RXTP-TORCH-010";
pub const CODE_ADD: &str = "RXTP-TORCH-011";
pub const CODE_SUM: &str = "RXTP-TORCH-013";
pub const CODE_MATMUL_CALL: &str = "RXTP-TORCH-014";
pub const CODE_SOFTMAX: &str = "RXTP-TORCH-015";
pub const CODE_ARGMAX: &str = "RXTP-TORCH-016";
pub const CODE_MUL: &str = "RXTP-TORCH-017";
pub const CODE_SUB: &str = "RXTP-TORCH-019";
pub const CODE_DIV: &str = "RXTP-TORCH-021";
pub const CODE_LINEAR_NO_BIAS: &str = "RXTP-TORCH-023";
pub const CODE_FUNCTION_RELU: &str = "RXTP-TORCH-024";
pub const CODE_FUNCTION_SIGMOID: &str = "RXTP-TORCH-025";
pub const CODE_FUNCTION_TANH: &str = "RXTP-TORCH-026";
pub const CODE_FUNCTION_ADD: &str = "RXTP-TORCH-031";
pub const CODE_FUNCTION_SUB: &str = "RXTP-TORCH-032";
pub const CODE_FUNCTION_MUL: &str = "RXTP-TORCH-033";
pub const CODE_FUNCTION_DIV: &str = "RXTP-TORCH-034";
pub const CODE_MATMUL_MIXED: &str = "RXTP-TORCH-035";
pub const CODE_MATMUL_CALL_MIXED: &str = "RXTP-TORCH-036";
pub const CODE_UNARY_ABS: &str = "RXTP-TORCH-037";
pub const CODE_UNARY_NEG: &str = "RXTP-TORCH-038";
pub const CODE_UNARY_NEGATIVE: &str = "RXTP-TORCH-039";
pub const CODE_UNARY_SQUARE: &str = "RXTP-TORCH-040";
pub const CODE_UNARY_EXP: &str = "RXTP-TORCH-041";
pub const CODE_UNARY_LOG: &str = "RXTP-TORCH-042";
pub const CODE_UNARY_SQRT: &str = "RXTP-TORCH-043";
pub const CODE_GELU_NONE: &str = "RXTP-TORCH-044";
pub const CODE_CUDA_MATMUL: &str = "RXTP-TORCH-045";
pub const CODE_CUDA_BIAS_ADD: &str = "RXTP-TORCH-046";
pub const CODE_CUDA_RELU: &str = "RXTP-TORCH-047";
pub const CODE_CUDA_MEAN: &str = "RXTP-TORCH-048";
pub const CODE_CUDA_E2: &str = "RXTP-TORCH-049";
pub const CODE_FUNCTIONAL_RELU: &str = "RXTP-TORCH-050";
pub const CODE_FUNCTIONAL_SOFTMAX: &str = "RXTP-TORCH-051";
// Ours (extension spellings), after the op table's 052-054.
pub const CODE_ADD_SCALAR: &str = "RXTP-TORCH-055";
pub const CODE_SUB_SCALAR: &str = "RXTP-TORCH-056";
pub const CODE_MUL_SCALAR: &str = "RXTP-TORCH-057";
pub const CODE_DIV_SCALAR: &str = "RXTP-TORCH-058";
pub const CODE_LOG_SOFTMAX: &str = "RXTP-TORCH-060";
pub const CODE_FUNCTIONAL_LOG_SOFTMAX: &str = "RXTP-TORCH-061";
pub const CODE_AMAX: &str = "RXTP-TORCH-062";
pub const CODE_AMIN: &str = "RXTP-TORCH-063";
pub const CODE_LAYER_NORM: &str = "RXTP-TORCH-065";
pub const CODE_EMBEDDING: &str = "RXTP-TORCH-066";
pub const CODE_DROPOUT: &str = "RXTP-TORCH-067";
pub const CODE_FUNCTIONAL_LEAKY_RELU: &str = "RXTP-TORCH-070";
pub const CODE_FUNCTIONAL_ELU: &str = "RXTP-TORCH-071";
pub const CODE_FUNCTIONAL_HARDTANH: &str = "RXTP-TORCH-072";
pub const CODE_CLAMP_SCALAR: &str = "RXTP-TORCH-073";
pub const CODE_CAT: &str = "RXTP-TORCH-080";
pub const CODE_SIZE: &str = "RXTP-TORCH-110";
pub const CODE_TRANSPOSE: &str = "RXTP-TORCH-111";
pub const CODE_RESHAPE: &str = "RXTP-TORCH-112";
pub const CODE_FLATTEN: &str = "RXTP-TORCH-113";
pub const CODE_UNSQUEEZE: &str = "RXTP-TORCH-114";
pub const CODE_SQUEEZE: &str = "RXTP-TORCH-115";
pub const CODE_STACK: &str = "RXTP-TORCH-081";
pub const CODE_WHERE_COMPARE: &str = "RXTP-TORCH-100";
pub const CODE_MAXIMUM: &str = "RXTP-TORCH-101";
pub const CODE_MINIMUM: &str = "RXTP-TORCH-102";
pub const CODE_POW_SCALAR: &str = "RXTP-TORCH-103";
pub const CODE_POW_OPERATOR: &str = "RXTP-TORCH-104";
pub const CODE_MAX_DIM: &str = "RXTP-TORCH-130";
pub const CODE_MIN_DIM: &str = "RXTP-TORCH-131";
pub const CODE_FILL_LIKE: &str = "RXTP-TORCH-132";
pub const CODE_INDEX_SELECT: &str = "RXTP-TORCH-133";
pub const CODE_NORMALIZE: &str = "RXTP-TORCH-134";
pub const CODE_EMBEDDING_BAG: &str = "RXTP-TORCH-090";
pub const CODE_RANK3_MATMUL: &str = "RXTP-TORCH-140";
pub const CODE_RANK3_MATMUL_CALL: &str = "RXTP-TORCH-141";
pub const CODE_RANK3_BINOP: &str = "RXTP-TORCH-142";
pub const CODE_RANK3_FUNCTION: &str = "RXTP-TORCH-143";
pub const CODE_RANK3_UNARY: &str = "RXTP-TORCH-144";
pub const CODE_RANK3_SOFTMAX: &str = "RXTP-TORCH-145";
pub const CODE_RANK3_LINEAR: &str = "RXTP-TORCH-146";
pub const CODE_RANK3_TRANSPOSE: &str = "RXTP-TORCH-147";
pub const CODE_RANK3_RESHAPE: &str = "RXTP-TORCH-148";
pub const CODE_RANK3_BMM: &str = "RXTP-TORCH-149";
pub const CODE_RANK3_REDUCE: &str = "RXTP-TORCH-180";
pub const CODE_RANK3_LAYER_NORM: &str = "RXTP-TORCH-181";
pub const CODE_RANK3_ELEMENTWISE: &str = "RXTP-TORCH-182";
pub const CODE_RANK3_POW_OPERATOR: &str = "RXTP-TORCH-183";
pub const CODE_RANK0_REDUCE: &str = "RXTP-TORCH-160";
pub const CODE_RANK0_TO_SCALAR: &str = "RXTP-TORCH-161";
pub const CODE_RANK0_TRUTH: &str = "RXTP-TORCH-162";
pub const CODE_RANK0_BINOP: &str = "RXTP-TORCH-163";
pub const CODE_RANK0_UNARY: &str = "RXTP-TORCH-164";
pub const CODE_MATH_SQRT: &str = "RXTP-TORCH-120";
pub const CODE_MATH_EXP: &str = "RXTP-TORCH-121";
pub const CODE_MATH_LOG: &str = "RXTP-TORCH-122";
pub const CODE_MATH_TANH: &str = "RXTP-TORCH-123";
pub const CODE_MATH_FLOOR: &str = "RXTP-TORCH-124";
pub const CODE_MATH_CEIL: &str = "RXTP-TORCH-125";
pub const CODE_MATH_FABS: &str = "RXTP-TORCH-126";
/// The dtype lane's refusals (mixed float dtypes, an op not compiled at the dtype), for a
/// call of float64 tensors, of bfloat16 ones, then for an operator of each.
pub const CODE_F64_OPS: &str = "RXTP-TORCH-150";
/// The casts lane's (`casts.rs`): a cast to the dtype a tensor already has, and the refusal
/// of any other form of `to` / `type_as` / `float` / `double` / `bfloat16`.
pub const CAST_SAME_DTYPE: &str = "rextio-torch/cast-to-own-dtype";
pub const CODE_CAST: &str = "RXTP-TORCH-170";
pub const CONTIGUOUS: &str = "rextio-torch/contiguous-cpu-rank1-3";
pub const CODE_CONTIGUOUS: &str = "RXTP-TORCH-171";
pub const CODE_BF16_OPS: &str = "RXTP-TORCH-151";
pub const CODE_F64_BINOPS: &str = "RXTP-TORCH-152";
pub const CODE_BF16_BINOPS: &str = "RXTP-TORCH-153";
/// The dtype lane's refusals of a comparison read as a condition, at float64 then bfloat16.
pub const CODE_F64_CONDITIONS: &str = "RXTP-TORCH-154";
pub const CODE_BF16_CONDITIONS: &str = "RXTP-TORCH-155";

/// `RuleScope.kind` of the Rextio plugin API.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScopeKind {
    Type,
    Syntax,
    Call,
    Binop,
    Compare,
    Import,
    Decorator,
}

impl ScopeKind {
    /// The API spelling (`"call"`, `"binop"`, ...).
    pub fn as_str(self) -> &'static str {
        match self {
            ScopeKind::Type => "type",
            ScopeKind::Syntax => "syntax",
            ScopeKind::Call => "call",
            ScopeKind::Binop => "binop",
            ScopeKind::Compare => "compare",
            ScopeKind::Import => "import",
            ScopeKind::Decorator => "decorator",
        }
    }
}

/// `RuleRecord.outcome` values used by rextio-torch.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RuleOutcome {
    Native,
    Fallback,
}

impl RuleOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            RuleOutcome::Native => "native",
            RuleOutcome::Fallback => "fallback",
        }
    }
}

/// One rule record. Provider is always `rextio-torch` and stability `experimental`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RuleRecord {
    pub id: &'static str,
    pub scope: ScopeKind,
    /// `RXTP-TORCH-NNN`.
    pub code: &'static str,
    pub outcome: RuleOutcome,
    pub verified: bool,
    /// The accepted form and its result type (M/V/L/CM/CV as in the spec legend).
    pub result: &'static str,
}

const fn native(
    id: &'static str,
    scope: ScopeKind,
    code: &'static str,
    result: &'static str,
) -> RuleRecord {
    RuleRecord {
        id,
        scope,
        code,
        outcome: RuleOutcome::Native,
        verified: true,
        result,
    }
}

const fn cuda(
    id: &'static str,
    scope: ScopeKind,
    code: &'static str,
    result: &'static str,
) -> RuleRecord {
    RuleRecord {
        id,
        scope,
        code,
        outcome: RuleOutcome::Native,
        verified: false,
        result,
    }
}

use ScopeKind::{Binop, Call, Compare, Type};

/// The 50 reference records in reference record order, then our 049 record.
static RULE_RECORDS: [RuleRecord; 51] = [
    native(
        LINEAR,
        Call,
        "RXTP-TORCH-001",
        "torch.nn.functional.linear(x: M, w: M, b: V), three positional, no keywords -> M",
    ),
    native(
        LINEAR_NONE,
        Call,
        CODE_LINEAR_NO_BIAS,
        "linear(x: M, w: M) / (x, w, None) / (x, w, bias=None) -> M",
    ),
    native(RELU_2D, Call, CODE_RELU, "m.relu() -> M"),
    native(
        MEAN_DIM1,
        Call,
        CODE_MEAN,
        "m.mean(dim=1, keepdim=False), both keywords written -> V",
    ),
    native(RELU_1D, Call, "RXTP-TORCH-004", "v.relu() -> V"),
    native(SIGMOID_1D, Call, "RXTP-TORCH-005", "v.sigmoid() -> V"),
    native(SIGMOID_2D, Call, CODE_SIGMOID, "m.sigmoid() -> M"),
    native(TANH_1D, Call, "RXTP-TORCH-007", "v.tanh() -> V"),
    native(TANH_2D, Call, CODE_TANH, "m.tanh() -> M"),
    native(MATMUL_2D, Binop, CODE_MATMUL, "M @ M -> M"),
    native(
        MATMUL_CALL_2D,
        Call,
        CODE_MATMUL_CALL,
        "torch.matmul(M, M) / M.matmul(M) -> M",
    ),
    native(MATMUL_MIXED, Binop, CODE_MATMUL_MIXED, "M @ V / V @ M -> V"),
    native(
        MATMUL_CALL_MIXED,
        Call,
        CODE_MATMUL_CALL_MIXED,
        "torch.matmul / .matmul with (M, V) or (V, M) -> V",
    ),
    native(
        UNARY_ABS,
        Call,
        CODE_UNARY_ABS,
        "torch.abs(t) / t.abs(), t in {M, V} -> same",
    ),
    native(
        UNARY_NEG,
        Call,
        CODE_UNARY_NEG,
        "torch.neg(t) / t.neg(), t in {M, V} -> same",
    ),
    native(
        UNARY_NEGATIVE,
        Call,
        CODE_UNARY_NEGATIVE,
        "torch.negative(t) / t.negative(), t in {M, V} -> same",
    ),
    native(
        UNARY_SQUARE,
        Call,
        CODE_UNARY_SQUARE,
        "torch.square(t) / t.square(), t in {M, V} -> same",
    ),
    native(
        UNARY_EXP,
        Call,
        CODE_UNARY_EXP,
        "torch.exp(t) / t.exp(), t in {M, V} -> same",
    ),
    native(
        UNARY_LOG,
        Call,
        CODE_UNARY_LOG,
        "torch.log(t) / t.log(), t in {M, V} -> same",
    ),
    native(
        UNARY_SQRT,
        Call,
        CODE_UNARY_SQRT,
        "torch.sqrt(t) / t.sqrt(), t in {M, V} -> same",
    ),
    native(
        GELU_NONE,
        Call,
        CODE_GELU_NONE,
        "F.gelu(t) / F.gelu(t, approximate='none'), t in {M, V} -> same",
    ),
    RuleRecord {
        id: UNSUPPORTED_SURFACE,
        scope: Type,
        code: CODE_UNSUPPORTED,
        outcome: RuleOutcome::Fallback,
        verified: false,
        result: "documents type/shape rejections outside the float32 CPU rank-1/2 surface",
    },
    native(ADD_SAME, Binop, CODE_ADD, "M + M -> M, V + V -> V"),
    native(ADD_BROADCAST, Binop, "RXTP-TORCH-012", "M + V / V + M -> M"),
    native(MUL_SAME, Binop, CODE_MUL, "M * M -> M, V * V -> V"),
    native(MUL_BROADCAST, Binop, "RXTP-TORCH-018", "M * V / V * M -> M"),
    native(SUB_SAME, Binop, CODE_SUB, "M - M -> M, V - V -> V"),
    native(SUB_BROADCAST, Binop, "RXTP-TORCH-020", "M - V / V - M -> M"),
    native(
        DIV_SAME,
        Binop,
        CODE_DIV,
        "M / M -> M, V / V -> V (true division)",
    ),
    native(
        DIV_BROADCAST,
        Binop,
        "RXTP-TORCH-022",
        "M / V / V / M -> M (true division)",
    ),
    native(
        SUM_DIM1,
        Call,
        CODE_SUM,
        "m.sum(dim=1, keepdim=False), both keywords written -> V",
    ),
    native(
        FUNCTION_RELU,
        Call,
        CODE_FUNCTION_RELU,
        "torch.relu(t), t in {M, V} -> same",
    ),
    native(
        FUNCTIONAL_RELU,
        Call,
        CODE_FUNCTIONAL_RELU,
        "F.relu(t) / F.relu(t, inplace=False), t in {M, V} -> same",
    ),
    native(
        FUNCTION_SIGMOID,
        Call,
        CODE_FUNCTION_SIGMOID,
        "torch.sigmoid(t), t in {M, V} -> same",
    ),
    native(
        FUNCTION_TANH,
        Call,
        CODE_FUNCTION_TANH,
        "torch.tanh(t), t in {M, V} -> same",
    ),
    native(
        MEAN_STATIC,
        Call,
        "RXTP-TORCH-027",
        "other torch.mean / .mean forms with literal dim 0/1 -> V or M",
    ),
    native(
        SUM_STATIC,
        Call,
        "RXTP-TORCH-028",
        "other torch.sum / .sum forms with literal dim 0/1 -> V or M",
    ),
    native(
        SOFTMAX_STATIC,
        Call,
        "RXTP-TORCH-029",
        "torch.softmax / .softmax non-legacy forms -> same",
    ),
    native(
        FUNCTIONAL_SOFTMAX,
        Call,
        CODE_FUNCTIONAL_SOFTMAX,
        "F.softmax(t, dim[, dtype=None]) -> same",
    ),
    native(
        ARGMAX_STATIC,
        Call,
        "RXTP-TORCH-030",
        "torch.argmax / .argmax non-legacy forms -> L",
    ),
    native(
        FUNCTION_ADD,
        Call,
        CODE_FUNCTION_ADD,
        "torch.add(a, b), same rank or M/V broadcast -> same or M",
    ),
    native(
        FUNCTION_SUB,
        Call,
        CODE_FUNCTION_SUB,
        "torch.sub(a, b), same rank or M/V broadcast -> same or M",
    ),
    native(
        FUNCTION_MUL,
        Call,
        CODE_FUNCTION_MUL,
        "torch.mul(a, b), same rank or M/V broadcast -> same or M",
    ),
    native(
        FUNCTION_DIV,
        Call,
        CODE_FUNCTION_DIV,
        "torch.div(a, b), same rank or M/V broadcast -> same or M",
    ),
    native(
        SOFTMAX_DIM1,
        Call,
        CODE_SOFTMAX,
        "m.softmax(dim=1), keyword only -> M",
    ),
    native(
        ARGMAX_DIM1,
        Call,
        CODE_ARGMAX,
        "m.argmax(dim=1, keepdim=False), both keywords written -> L",
    ),
    cuda(CUDA_MATMUL, Binop, CODE_CUDA_MATMUL, "CM @ CM -> CM"),
    cuda(
        CUDA_BIAS_ADD,
        Binop,
        CODE_CUDA_BIAS_ADD,
        "CM + CV (this order) -> CM",
    ),
    cuda(CUDA_RELU, Call, CODE_CUDA_RELU, "cm.relu() -> CM"),
    cuda(
        CUDA_MEAN_DIM1,
        Call,
        CODE_CUDA_MEAN,
        "cm.mean(dim=1[, keepdim=False]) -> CV",
    ),
    RuleRecord {
        id: CUDA_UNSUPPORTED,
        scope: Type,
        code: CODE_CUDA_E2,
        outcome: RuleOutcome::Fallback,
        verified: false,
        result:
            "documents rejections of any other op touching a CUDA tensor (not a reference record)",
    },
];

/// The extension records of a float32 tensor with a Python scalar under `+ - * /` (the
/// binop lane, extended surface only): rejections of a scalar that is not an `int` or a
/// `float` (a `bool`, a `str`, ...) use the op's code.
static SCALAR_RECORDS: [RuleRecord; 4] = [
    native(
        ADD_SCALAR,
        Binop,
        CODE_ADD_SCALAR,
        "M + s, s + M -> M; V + s, s + V -> V (s: int or float, cast to float32)",
    ),
    native(
        SUB_SCALAR,
        Binop,
        CODE_SUB_SCALAR,
        "M - s, s - M -> M; V - s, s - V -> V (s: int or float, cast to float32)",
    ),
    native(
        MUL_SCALAR,
        Binop,
        CODE_MUL_SCALAR,
        "M * s, s * M -> M; V * s, s * V -> V (s: int or float, cast to float32)",
    ),
    native(
        DIV_SCALAR,
        Binop,
        CODE_DIV_SCALAR,
        "M / s, s / M -> M; V / s, s / V -> V (s: int or float, cast to float32)",
    ),
];

/// The extension records of the reduction and classification lanes: forms the reference
/// does not claim (its lanes do not know `log_softmax`, `amax` or `amin`, so the Rextio
/// plugin leaves them not covered), claimed under the extended surface only.
static EXTENSION_RECORDS: [RuleRecord; 4] = [
    native(
        LOG_SOFTMAX_STATIC,
        Call,
        CODE_LOG_SOFTMAX,
        "torch.log_softmax(t, dim) / t.log_softmax(dim), literal int dim, no dtype -> same",
    ),
    native(
        FUNCTIONAL_LOG_SOFTMAX,
        Call,
        CODE_FUNCTIONAL_LOG_SOFTMAX,
        "F.log_softmax(t, dim), literal int dim, no dtype -> same",
    ),
    native(
        AMAX_STATIC,
        Call,
        CODE_AMAX,
        "torch.amax / .amax with one literal int dim[, keepdim] -> V or M",
    ),
    native(
        AMIN_STATIC,
        Call,
        CODE_AMIN,
        "torch.amin / .amin with one literal int dim[, keepdim] -> V or M",
    ),
];

/// The layers lane's extension records (`F.layer_norm`, `F.embedding`, `F.dropout` in eval
/// mode, `F.embedding_bag`): the reference does not know these functions, so the Rextio plugin leaves them not
/// covered; claimed under the extended surface only.
static LAYER_RECORDS: [RuleRecord; 4] = [
    native(
        LAYER_NORM,
        Call,
        CODE_LAYER_NORM,
        "F.layer_norm(t, (n,)[, w, b][, eps]), t in {M, V}, w and b V or both absent, literal int n, literal float eps -> same",
    ),
    native(
        EMBEDDING,
        Call,
        CODE_EMBEDDING,
        "F.embedding(ids, weight), ids L, weight M, no options but padding_idx=None -> M",
    ),
    native(
        DROPOUT_EVAL,
        Call,
        CODE_DROPOUT,
        "F.dropout(t[, p], training=False[, inplace=False]), t in {M, V}, literal p in [0, 1] -> t itself",
    ),
    native(
        EMBEDDING_BAG,
        Call,
        CODE_EMBEDDING_BAG,
        "F.embedding_bag(ids, weight, offsets[, mode='mean'|'sum'|'max']), ids and offsets L, weight M, no other options but their defaults -> M",
    ),
];

/// The extension records of the scalar-parameter lane (`claim/param_unary.rs`): ops with
/// `int`/`float` parameters, literal or not, claimed under the extended surface only.
static PARAM_RECORDS: [RuleRecord; 4] = [
    native(
        FUNCTIONAL_LEAKY_RELU,
        Call,
        CODE_FUNCTIONAL_LEAKY_RELU,
        "F.leaky_relu(t[, negative_slope][, inplace=False]), t in {M, V}, negative_slope int or float -> same",
    ),
    native(
        FUNCTIONAL_ELU,
        Call,
        CODE_FUNCTIONAL_ELU,
        "F.elu(t[, alpha][, inplace=False]), t in {M, V}, alpha int or float -> same",
    ),
    native(
        FUNCTIONAL_HARDTANH,
        Call,
        CODE_FUNCTIONAL_HARDTANH,
        "F.hardtanh(t[, min_val[, max_val]][, inplace=False]), t in {M, V}, bounds int or float -> same",
    ),
    native(
        CLAMP_SCALAR,
        Call,
        CODE_CLAMP_SCALAR,
        "torch.clamp / torch.clip / t.clamp / t.clip with int or float min and/or max, t in {M, V} -> same",
    ),
];

/// The extension records of the joins lane: `torch.cat` (and its aliases `torch.concat`,
/// `torch.concatenate`) and `torch.stack` of a list or tuple display written in the call. The
/// reference does not know them (and does not lower a list display), so the Rextio plugin
/// leaves them not covered; claimed under the extended surface only.
static JOIN_RECORDS: [RuleRecord; 2] = [
    native(
        CAT_STATIC,
        Call,
        CODE_CAT,
        "torch.cat / torch.concat / torch.concatenate([t, ...] or (t, ...)[, dim]), one or more parts of one type in {V, M, T}, literal int dim (default 0) -> same",
    ),
    native(
        STACK_STATIC,
        Call,
        CODE_STACK,
        "torch.stack([t, ...] or (t, ...)[, dim]), one or more parts of one type in {S, V, M}, literal int dim in [-(rank + 1), rank] of the result (default 0) -> V, M, T (one rank more)",
    ),
];

/// The extension records of the scalar math lane (`claim/scalar_math.rs`): the `math`
/// module's functions on `int`/`bool`/`float` values, claimed under the extended surface
/// only (the reference host never offers a call outside `torch` without tensors).
static MATH_RECORDS: [RuleRecord; 7] = [
    native(
        MATH_SQRT,
        Call,
        CODE_MATH_SQRT,
        "math.sqrt(x), x int, bool or float, no keywords -> float",
    ),
    native(
        MATH_EXP,
        Call,
        CODE_MATH_EXP,
        "math.exp(x), x int, bool or float, no keywords -> float",
    ),
    native(
        MATH_LOG,
        Call,
        CODE_MATH_LOG,
        "math.log(x[, base]), x and base int, bool or float, no keywords -> float",
    ),
    native(
        MATH_TANH,
        Call,
        CODE_MATH_TANH,
        "math.tanh(x), x int, bool or float, no keywords -> float",
    ),
    native(
        MATH_FLOOR,
        Call,
        CODE_MATH_FLOOR,
        "math.floor(x), x int, bool or float, no keywords -> int (64-bit)",
    ),
    native(
        MATH_CEIL,
        Call,
        CODE_MATH_CEIL,
        "math.ceil(x), x int, bool or float, no keywords -> int (64-bit)",
    ),
    native(
        MATH_FABS,
        Call,
        CODE_MATH_FABS,
        "math.fabs(x), x int, bool or float, no keywords -> float",
    ),
];

static VIEW_RECORDS: [RuleRecord; 6] = [
    native(
        SIZE_STATIC,
        Call,
        CODE_SIZE,
        "t.shape[i] / t.size(i) / t.size()[i], t in {M, V, L}, literal int i in [-rank, rank) -> int",
    ),
    native(
        TRANSPOSE_STATIC,
        Call,
        CODE_TRANSPOSE,
        "t.t() / t.T / t.transpose(d0, d1) / torch.t(t) / torch.transpose(t, d0, d1), t in {M, V}, literal int dims -> same",
    ),
    native(
        RESHAPE_INTS,
        Call,
        CODE_RESHAPE,
        "t.reshape(s...) / t.view(s...) / torch.reshape(t, (s...)), t in {M, V}, one or two int sizes (at most one literal -1) -> V or M",
    ),
    native(
        FLATTEN_STATIC,
        Call,
        CODE_FLATTEN,
        "t.flatten([start_dim[, end_dim]]) / torch.flatten(t, ...), t in {M, V}, literal int dims -> V (same when start_dim == end_dim)",
    ),
    native(
        UNSQUEEZE_STATIC,
        Call,
        CODE_UNSQUEEZE,
        "v.unsqueeze(d) / torch.unsqueeze(v, d), v in {V}, literal int d in [-2, 1] -> M",
    ),
    native(
        SQUEEZE_STATIC,
        Call,
        CODE_SQUEEZE,
        "m.squeeze(d) / torch.squeeze(m, d), m in {M}, literal int d in [-2, 1], size 1 at run time -> V",
    ),
];

/// The extension records of the elementwise lane (`claim/elemwise.rs`): `where` of an inline
/// comparison, `maximum`/`minimum`, `pow` with a scalar exponent. The reference does not know
/// them (nor offers `**`), so the Rextio plugin leaves them not covered; claimed under the
/// extended surface only.
static ELEMENTWISE_RECORDS: [RuleRecord; 5] = [
    native(
        WHERE_COMPARE,
        Call,
        CODE_WHERE_COMPARE,
        "torch.where(l <cmp> r, a, b) / a.where(l <cmp> r, b), cmp in {==, !=, <, <=, >, >=} written in the call, each of l, r, a, b in {M, V} or int or float, a tensor compared, a and b not both int -> M if any M else V",
    ),
    native(
        MAXIMUM_TENSOR,
        Call,
        CODE_MAXIMUM,
        "torch.maximum(a, b) / a.maximum(b), a and b in {M, V} -> M if any M else V",
    ),
    native(
        MINIMUM_TENSOR,
        Call,
        CODE_MINIMUM,
        "torch.minimum(a, b) / a.minimum(b), a and b in {M, V} -> M if any M else V",
    ),
    native(
        POW_SCALAR,
        Call,
        CODE_POW_SCALAR,
        "torch.pow(t, p) / t.pow(p), t in {M, V}, p int or float -> same",
    ),
    native(
        POW_OPERATOR,
        Binop,
        CODE_POW_OPERATOR,
        "t ** p, t in {M, V}, p int or float -> same",
    ),
];

/// The extension records of the dim-ops lane (`claim/dim_ops.rs`): `max`/`min` over a dim
/// read as `.values`/`.indices`/`[0]`/`[1]`, the fills, `index_select`, `F.normalize`. The
/// reference does not know them, so the Rextio plugin leaves them not covered; claimed under
/// the extended surface only.
static DIM_OP_RECORDS: [RuleRecord; 5] = [
    native(
        MAX_DIM,
        Call,
        CODE_MAX_DIM,
        "t.max(d[, keepdim]).values / torch.max(t, dim=d, keepdim=k).values / .indices / [0] / [1], t in {M, V}, literal int d in [-rank, rank), bool literal keepdim -> values V or M, indices L (rank 1 only)",
    ),
    native(
        MIN_DIM,
        Call,
        CODE_MIN_DIM,
        "t.min(d[, keepdim]).values / torch.min(t, dim=d, keepdim=k).values / .indices / [0] / [1], t in {M, V}, literal int d in [-rank, rank), bool literal keepdim -> values V or M, indices L (rank 1 only)",
    ),
    native(
        FILL_LIKE,
        Call,
        CODE_FILL_LIKE,
        "torch.zeros_like(t) / torch.ones_like(t) / torch.full_like(t, v), t in {M, V}, v int or float, no keywords -> same",
    ),
    native(
        INDEX_SELECT,
        Call,
        CODE_INDEX_SELECT,
        "torch.index_select(t, d, ids) / t.index_select(d, ids), t in {M, V}, literal int d in [-rank, rank), ids in {L} -> same",
    ),
    native(
        NORMALIZE,
        Call,
        CODE_NORMALIZE,
        "F.normalize(t[, p[, dim[, eps]]]), t in {M, V}, number literals p and eps, literal int dim in [-rank, rank) (default 1) -> same",
    ),
];

/// The extension records of the rank-3 lane (`claim/rank3.rs`): float32 CPU rank-3 tensors
/// (`T`, `TensorF32Cpu3D`). The reference has no rank-3 type, so neither the Rextio plugin
/// nor the reference surface ever offers one; claimed under the extended surface only.
static RANK3_RECORDS: [RuleRecord; 14] = [
    native(
        RANK3_MATMUL,
        Binop,
        CODE_RANK3_MATMUL,
        "a @ b, a and b in {T, M}, at least one T -> T",
    ),
    native(
        RANK3_MATMUL_CALL,
        Call,
        CODE_RANK3_MATMUL_CALL,
        "torch.matmul(a, b) / a.matmul(b), a and b in {T, M}, at least one T -> T",
    ),
    native(
        RANK3_BMM,
        Call,
        CODE_RANK3_BMM,
        "torch.bmm(a, b) / a.bmm(b), a and b in {T} (no broadcast) -> T",
    ),
    native(
        RANK3_BINOP,
        Binop,
        CODE_RANK3_BINOP,
        "a op b, op in {+, -, *, /}, a and b in {T, M, V} or one of them an int or float, at least one T -> T",
    ),
    native(
        RANK3_FUNCTION,
        Call,
        CODE_RANK3_FUNCTION,
        "torch.add(a, b) / torch.sub / torch.mul / torch.div, a and b in {T, M, V}, at least one T -> T",
    ),
    native(
        RANK3_UNARY,
        Call,
        CODE_RANK3_UNARY,
        "the unary op table's spellings (relu, gelu, silu, tanh, sigmoid, exp, ...), the scalar-parameter ops (leaky_relu, elu, hardtanh, clamp) and F.dropout(t, training=False), t in {T} -> T",
    ),
    native(
        RANK3_SOFTMAX,
        Call,
        CODE_RANK3_SOFTMAX,
        "F.softmax(t, dim) / F.log_softmax / torch.softmax / torch.log_softmax / t.softmax(dim) / t.log_softmax(dim), t in {T}, literal int dim in [-3, 2] -> T",
    ),
    native(
        RANK3_LINEAR,
        Call,
        CODE_RANK3_LINEAR,
        "F.linear(x, w[, b]), x in {T}, w in {M}, b in {V} or omitted / None -> T",
    ),
    native(
        RANK3_TRANSPOSE,
        Call,
        CODE_RANK3_TRANSPOSE,
        "t.transpose(d0, d1) / torch.transpose(t, d0, d1), t in {T}, literal int dims in [-3, 2], adjacent or equal -> T",
    ),
    native(
        RANK3_RESHAPE,
        Call,
        CODE_RANK3_RESHAPE,
        "t.reshape(s...) / t.view(s...) / torch.reshape(t, (s...)), t in {T} with one to three int sizes, or t in {M, V} with three (at most one literal -1) -> V, M or T",
    ),
    native(
        RANK3_REDUCE,
        Call,
        CODE_RANK3_REDUCE,
        "t.sum(d[, keepdim]) / t.mean / t.amax / t.amin / torch.sum(t, d) ... torch.amin, t in {T}, one literal int dim d in [-3, 2] (positional or dim=), bool literal keepdim -> T (keepdim) or M",
    ),
    native(
        RANK3_LAYER_NORM,
        Call,
        CODE_RANK3_LAYER_NORM,
        "F.layer_norm(t, (n,)[, w, b][, eps]), t in {T}, normalized over the last dim, int n, w and b in {V} (both or neither), float literal eps -> T",
    ),
    native(
        RANK3_ELEMENTWISE,
        Call,
        CODE_RANK3_ELEMENTWISE,
        "torch.pow(t, p) / t.pow(p) with an int or float p, torch.maximum(a, b) / torch.minimum, torch.where(l <cmp> r, a, b), tensors in {T, M, V} with at least one T -> T",
    ),
    native(
        RANK3_POW_OPERATOR,
        Binop,
        CODE_RANK3_POW_OPERATOR,
        "t ** p, t in {T}, p an int or float -> T",
    ),
];

/// The extension records of the rank-0 lane (`claim/rank0.rs`): whole-tensor reductions,
/// float32 CPU rank-0 tensors (`S`, `TensorF32Cpu0D`), `item()`/`float()` and tensor
/// comparisons as conditions. The reference compiles none of them, so neither the Rextio
/// plugin nor the reference surface ever claims one.
static RANK0_RECORDS: [RuleRecord; 5] = [
    native(
        RANK0_REDUCE,
        Call,
        CODE_RANK0_REDUCE,
        "x.sum() / x.mean() / x.max() / x.min() / x.amax() / x.amin() / torch.sum(x) ... torch.amin(x), no dim and no keyword, x in {S, V, M, T} -> S",
    ),
    native(
        RANK0_TO_SCALAR,
        Call,
        CODE_RANK0_TO_SCALAR,
        "t.item() / float(t), t in {S, V, M, T} with one element at run time -> float",
    ),
    native(
        RANK0_TRUTH,
        Compare,
        CODE_RANK0_TRUTH,
        "a op b as an if/while condition, op in {==, !=, <, <=, >, >=}, a or b in {S, V, M, T}, the other in {S, V, M, T} or an int/float, one element at run time -> bool",
    ),
    native(
        RANK0_BINOP,
        Binop,
        CODE_RANK0_BINOP,
        "a op b, op in {+, -, *, /}, at least one S, the other in {S, V, M, T} or an int/float -> the larger rank's type",
    ),
    native(
        RANK0_UNARY,
        Call,
        CODE_RANK0_UNARY,
        "the unary op table's spellings (relu, exp, sqrt, tanh, ...) and F.dropout(s, training=False), s in {S} -> S",
    ),
];

/// The extension records of the dtype lane (`claim/dtypes.rs`): the float ops of the other
/// lanes at float64 and bfloat16. The reference has no such types, so the Rextio plugin never
/// sees them; claimed under the extended surface only.
static DTYPE_RECORDS: [RuleRecord; 6] = [
    native(
        F64_OPS,
        Call,
        CODE_F64_OPS,
        "F.linear, torch.matmul, torch.bmm, torch.add/sub/mul/div, the unary activations, softmax/log_softmax, sum/mean/amax/amin/argmax over a dim, the whole-tensor reductions, item()/float(), the views, layer_norm of {F64S, F64V, F64M, F64T} tensors, one dtype per op -> the float32 rule's result at float64 (argmax L, item() float)",
    ),
    native(
        BF16_OPS,
        Call,
        CODE_BF16_OPS,
        "the same calls of {BF16S, BF16V, BF16M, BF16T} tensors, one dtype per op -> the float32 rule's result at bfloat16 (argmax L, item() float)",
    ),
    native(
        F64_BINOPS,
        Binop,
        CODE_F64_BINOPS,
        "a @ b, a + - * / b of {F64S, F64V, F64M, F64T} tensors of one dtype, or one with an int/float scalar -> the float32 rule's result at float64",
    ),
    native(
        BF16_BINOPS,
        Binop,
        CODE_BF16_BINOPS,
        "the same operators of {BF16S, BF16V, BF16M, BF16T} tensors -> the float32 rule's result at bfloat16",
    ),
    native(
        F64_CONDITIONS,
        Compare,
        CODE_F64_CONDITIONS,
        "a op b as an if/while condition, op in {==, !=, <, <=, >, >=}, a or b in {F64S, F64V, F64M, F64T}, the other of the same dtype or an int/float, one element at run time -> bool",
    ),
    native(
        BF16_CONDITIONS,
        Compare,
        CODE_BF16_CONDITIONS,
        "the same conditions of {BF16S, BF16V, BF16M, BF16T} tensors -> bool",
    ),
];

/// Every rule record then the extension spellings' (generated from the op table), then the
/// scalar operands' records, then the other lanes' extension records, then the layers
/// lane's, then the scalar-parameter lane's, then the joins', then the scalar math lane's, then the views lane's, then the elementwise
/// lane's, then the dim-ops lane's.
static ALL_RECORDS: LazyLock<Vec<RuleRecord>> = LazyLock::new(|| {
    let mut records = RULE_RECORDS.to_vec();
    records.extend(super::spellings::extension_records());
    records.extend(SCALAR_RECORDS);
    records.extend(EXTENSION_RECORDS);
    records.extend(LAYER_RECORDS);
    records.extend(PARAM_RECORDS);
    records.extend(JOIN_RECORDS);
    records.extend(MATH_RECORDS);
    records.extend(VIEW_RECORDS);
    records.extend(ELEMENTWISE_RECORDS);
    records.extend(DIM_OP_RECORDS);
    records.extend(RANK3_RECORDS);
    records.extend(DTYPE_RECORDS);
    records.extend(RANK0_RECORDS);
    records.push(native(
        CAST_SAME_DTYPE,
        ScopeKind::Call,
        CODE_CAST,
        "x.float() / x.double() / x.bfloat16() / x.to(dtype) / x.to(dtype=dtype) / x.to(y) / x.type_as(y), dtype torch.<name> or t.dtype, at x's own dtype (and device) -> x itself",
    ));
    records.push(native(
        CONTIGUOUS,
        ScopeKind::Call,
        CODE_CONTIGUOUS,
        "x.contiguous(), x a CPU tensor of rank 1 to 3 -> same (x itself if contiguous, else a dense copy)",
    ));
    records
});

/// Every rule record: the 50 reference records, then `rextio-torch/cuda0-unsupported-op`,
/// then the records of the unary op table's extension spellings (none in the reference
/// surface), in table order, then the scalar operands' (`RXTP-TORCH-055`..`058`), then the
/// extension records of the reduction and classification lanes (`log_softmax`, `amax`,
/// `amin`), then the layers lane's (`layer_norm`, `embedding`, `dropout`, `embedding_bag`), then the
/// scalar-parameter lane's (`RXTP-TORCH-070`..`073`), then the joins lane's (`cat`, `stack`),
/// then the scalar math lane's (`math.sqrt` ..., `RXTP-TORCH-120`..`126`), then the views lane's (`RXTP-TORCH-110`..`115`),
/// then the elementwise lane's (`RXTP-TORCH-100`..`104`), then the dim-ops lane's
/// (`max`/`min` over a dim, fills, `index_select`, `normalize`: `RXTP-TORCH-130`..`134`), then
/// the rank-3 lane's (`RXTP-TORCH-140`..`148`), then the dtype lane's (float64, bfloat16:
/// `RXTP-TORCH-150`..`153`), then the rank-0 lane's (whole-tensor reductions, `item()`,
/// tensor conditions: `RXTP-TORCH-160`..`164`), then the casts lane's (`RXTP-TORCH-170`, `171`).
pub fn rule_records() -> &'static [RuleRecord] {
    &ALL_RECORDS
}

/// The 50 reference records and ours for `RXTP-TORCH-049`, without the extension records.
pub fn reference_records() -> &'static [RuleRecord] {
    &RULE_RECORDS
}

/// The record with this id, if any.
pub fn record(id: &str) -> Option<&'static RuleRecord> {
    rule_records().iter().find(|r| r.id == id)
}

/// Whether some record declares `code` (Core's check before it accepts a rejection).
pub fn is_declared_code(code: &str) -> bool {
    rule_records().iter().any(|r| r.code == code)
}
