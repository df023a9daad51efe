//! The default pipeline on Phase A, with validation between passes and a dump per stage.

mod support;

use rextio_ir::{print_function, Diagnostic, Function, TensorType, Type};
use rextio_passes::{default_pipeline, validate, Pass, Pipeline};
use support::{parse, PHASE_A};

#[test]
fn phase_a_through_the_default_pipeline() {
    let f = parse(PHASE_A);
    insta::assert_snapshot!("phase_a_parsed", print_function(&f));

    let pipeline = default_pipeline().validating(true);
    assert_eq!(
        pipeline.stage_names(),
        ["parsed", "fused", "dce", "optimized"]
    );
    let (out, dumps) = pipeline
        .run_with_dumps(f)
        .unwrap_or_else(|e| panic!("{e:#?}"));
    let stages: Vec<&str> = dumps.iter().map(|(stage, _)| *stage).collect();
    assert_eq!(stages, ["parsed", "fused", "dce", "optimized"]);
    for (stage, f) in &dumps {
        validate(f).unwrap_or_else(|e| panic!("stage {stage} is invalid: {e:#?}"));
    }
    assert_eq!(dumps[3].1, out);

    insta::assert_snapshot!("phase_a_optimized", print_function(&out));
}

#[test]
fn observer_sees_every_stage() {
    let mut seen = Vec::new();
    let out = default_pipeline()
        .run(parse(PHASE_A), &mut |stage, f| {
            seen.push((stage, f.exprs.len()))
        })
        .expect("pipeline");
    assert_eq!(
        seen,
        [("parsed", 6), ("fused", 4), ("dce", 4), ("optimized", 4)]
    );
    assert_eq!(out.exprs.len(), 4);
}

/// A pass that breaks the IR: declares every expression rank 1.
struct Corrupt;

impl Pass for Corrupt {
    fn name(&self) -> &'static str {
        "corrupt"
    }

    fn run(&self, mut f: Function) -> Result<Function, Vec<Diagnostic>> {
        for (_, e) in f.exprs.iter_mut() {
            e.ty = Type::Tensor(TensorType::F32_CPU_1D);
        }
        Ok(f)
    }
}

#[test]
fn validation_between_passes_blames_the_stage() {
    let pipeline = Pipeline::new().with_pass(Corrupt).validating(true);
    let errors = pipeline
        .run(parse(PHASE_A), &mut |_, _| {})
        .expect_err("corrupt output");
    assert!(!errors.is_empty());
    assert!(errors.iter().all(|d| d.code == "RXIR-002"), "{errors:#?}");
    assert!(errors
        .iter()
        .all(|d| d.notes.iter().any(|n| n.contains("`corrupt`"))));

    // Without validation the corrupt function goes through unchecked.
    assert!(Pipeline::new()
        .with_pass(Corrupt)
        .run(parse(PHASE_A), &mut |_, _| {})
        .is_ok());
}

#[test]
fn invalid_input_is_rejected_at_parsed() {
    let f = parse(&PHASE_A.replace("return %5", "return %4"));
    let errors = default_pipeline()
        .validating(true)
        .run(f.clone(), &mut |_, _| {})
        .expect_err("invalid");
    assert_eq!(errors[0].code, "RXIR-006");
    assert!(errors[0].notes.iter().any(|n| n.contains("`parsed`")));
    // Fusion validates its own input even when the pipeline does not.
    let errors = default_pipeline()
        .run(f, &mut |_, _| {})
        .expect_err("invalid");
    assert_eq!(errors[0].code, "RXIR-006");
}

/// Python raises the first of two failing statements: `acc % acc` with `acc = 0`, then a
/// `F.linear` whose bias does not fit, both unread. Fusion emits a run's scalar code after its
/// tensor code, so a scalar op that can raise closes its run: the linear after it stays after
/// it (found by the differential fuzzer, tests/fuzz/fixtures/exception-type-zerodivision*).
#[test]
fn raising_scalar_code_stays_before_later_tensor_code() {
    let f = parse(
        "fn f(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cpu, 2>, %b: tensor<f32, cpu, 1>) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %w: tensor<f32, cpu, 2> = param 1
  %b: tensor<f32, cpu, 1> = param 2
  %acc: int = const.int 0
  %rem: int = scalar.mod %acc, %acc
  %sum: int = scalar.add %acc, %rem
  %h: tensor<f32, cpu, 2> = linear %x, %w, %b
  %e: tensor<f32, cpu, 2> = exp %x
  %r: tensor<f32, cpu, 2> = relu %e
  return %r
}",
    );
    let out = default_pipeline()
        .validating(true)
        .run(f, &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{e:#?}"));
    let text = print_function(&out);
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("no `{needle}` in:\n{text}"))
    };
    assert!(
        at("scalar.mod") < at("linear"),
        "the modulo moved after the linear:\n{text}"
    );
    assert!(at("scalar.add") < at("linear"), "{text}");
}

/// The cut is only where order matters: tensor code that cannot raise (`relu`) still fuses
/// with a linear across an int addition that can.
#[test]
fn fusion_still_crosses_raising_scalar_code_when_nothing_after_it_raises() {
    let f = parse(
        "fn f(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cpu, 2>, %n: int) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %w: tensor<f32, cpu, 2> = param 1
  %n: int = param 2
  %h: tensor<f32, cpu, 2> = linear %x, %w
  %one: int = const.int 1
  %m: int = scalar.add %n, %one
  %r: tensor<f32, cpu, 2> = relu %h
  return %r
}",
    );
    let out = default_pipeline()
        .validating(true)
        .run(f, &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{e:#?}"));
    let text = print_function(&out);
    assert!(
        text.contains("fused_linear"),
        "linear and relu did not fuse:\n{text}"
    );
    assert!(!text.contains("= relu"), "{text}");
}

/// `embedding` has no term: it is a run of its own, never fused, and the ops after it still
/// fuse; a `layer_norm` before a linear is the fused op's row normalization, one after it
/// stays (a transformer-ish chain: embedding, layer_norm, linear, gelu, layer_norm).
#[test]
fn embedding_runs_alone_and_layer_norm_fuses_into_the_next_linear() {
    let f = parse(
        "fn f(%ids: tensor<i64, cpu, 1>, %table: tensor<f32, cpu, 2>, %g: tensor<f32, cpu, 1>, %b: tensor<f32, cpu, 1>, %w: tensor<f32, cpu, 2>, %d: int) -> tensor<f32, cpu, 2> {
  %ids: tensor<i64, cpu, 1> = param 0
  %table: tensor<f32, cpu, 2> = param 1
  %g: tensor<f32, cpu, 1> = param 2
  %b: tensor<f32, cpu, 1> = param 3
  %w: tensor<f32, cpu, 2> = param 4
  %d: int = param 5
  %eight: int = const.int 8
  %e: tensor<f32, cpu, 2> = embedding %ids, %table
  %n: tensor<f32, cpu, 2> = layer_norm %e, %eight, %g, %b, eps=1e-5
  %h: tensor<f32, cpu, 2> = linear %n, %w, %b
  %a: tensor<f32, cpu, 2> = gelu %h
  %o: tensor<f32, cpu, 2> = layer_norm %a, %d, eps=1e-6
  return %o
}",
    );
    let out = default_pipeline()
        .validating(true)
        .run(f, &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{e:#?}"));
    let text = print_function(&out);
    let at = |needle: &str| {
        text.find(needle)
            .unwrap_or_else(|| panic!("no `{needle}` in:\n{text}"))
    };
    assert!(
        text.contains("fused_linear") && text.contains("activations=[gelu]"),
        "linear and gelu did not fuse:\n{text}"
    );
    assert!(!text.contains("= gelu"), "{text}");
    assert_eq!(text.matches("= layer_norm").count(), 1, "{text}");
    assert!(
        text.contains("norm=layer_norm(eps=1e-5, affine=true)"),
        "{text}"
    );
    assert!(at("= embedding") < at("fused_linear"), "{text}");
    assert!(at("fused_linear") < at("eps=1e-6"), "{text}");
}

/// An op with scalar parameters reads scalar code, so it has no term and is never fused: the
/// linear before it and the relu after it fuse on either side of it. A dead one that may
/// raise (a float parameter that may not fit float32, hardtanh's bound check) stays; a dead
/// one that cannot (int or in-range constant parameters) goes.
#[test]
fn param_unary_ops_are_never_fused_and_stay_when_they_may_raise() {
    let f = parse(
        "fn f(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cpu, 2>, %t: float, %n: int) -> tensor<f32, cpu, 2> {
  %x: tensor<f32, cpu, 2> = param 0
  %w: tensor<f32, cpu, 2> = param 1
  %t: float = param 2
  %n: int = param 3
  %h: tensor<f32, cpu, 2> = linear %x, %w
  %s: float = const.float 0.2
  %big: float = const.float 1e300
  %l: tensor<f32, cpu, 2> = leaky_relu %h, %s
  %r: tensor<f32, cpu, 2> = relu %l
  %dead_ok: tensor<f32, cpu, 2> = clamp %x, %n, %s
  %dead_param: tensor<f32, cpu, 2> = clamp_min %x, %t
  %dead_big: tensor<f32, cpu, 2> = elu %x, %big
  %dead_ht: tensor<f32, cpu, 2> = hardtanh %x, %n, %n
  return %r
}",
    );
    let out = default_pipeline()
        .validating(true)
        .run(f, &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{e:#?}"));
    let text = print_function(&out);
    assert!(text.contains("= leaky_relu %"), "{text}");
    assert!(!text.contains("activations=[leaky_relu"), "{text}");
    assert!(
        text.contains("= relu %"),
        "relu after leaky_relu stays its own op:\n{text}"
    );
    assert!(
        !text.contains("= clamp %"),
        "a dead clamp that cannot raise stays:\n{text}"
    );
    for kept in ["= clamp_min %", "= elu %", "= hardtanh %"] {
        assert!(text.contains(kept), "missing `{kept}` in:\n{text}");
    }
}

const ATTENTION: &str = "fn attention(%q: tensor<f32, cpu, 3>, %k: tensor<f32, cpu, 3>, %v: tensor<f32, cpu, 3>) -> tensor<f32, cpu, 3> {
  %q: tensor<f32, cpu, 3> = param 0
  %k: tensor<f32, cpu, 3> = param 1
  %v: tensor<f32, cpu, 3> = param 2
  %kt: tensor<f32, cpu, 3> = transpose %k, dim=1
  %s: tensor<f32, cpu, 3> = matmul %q, %kt
  %d: int = size %q, dim=2
  %c: float = scalar.sqrt %d
  %scores: tensor<f32, cpu, 3> = div.scalar %s, %c
  %p: tensor<f32, cpu, 3> = softmax %scores, dim=2
  %o: tensor<f32, cpu, 3> = matmul %p, %v
  return %o
}";

fn optimized(text: &str) -> String {
    let out = default_pipeline()
        .validating(true)
        .run(parse(text), &mut |_, _| {})
        .unwrap_or_else(|e| panic!("{e:#?}"));
    print_function(&out)
}

/// The attention chain (`softmax(q @ k.transpose(-2, -1) / math.sqrt(d), dim=-1) @ v`) is one
/// `fused_attention`, its scale read where it stands; a link with another user, a scale that
/// is no division or product, a softmax over another dim or a raising statement between the
/// links keep it as written.
#[test]
fn attention_chains_fuse_and_only_whole() {
    let text = optimized(ATTENTION);
    assert!(
        text.contains("= fused_attention %0, %1, %2, %4, scale=div"),
        "{text}"
    );
    for gone in ["= matmul", "= softmax", "= transpose", "div.scalar"] {
        assert!(!text.contains(gone), "{gone} in:\n{text}");
    }
    let unscaled = ATTENTION
        .replace("softmax %scores, dim=2", "softmax %s, dim=2")
        .replace("  %scores: tensor<f32, cpu, 3> = div.scalar %s, %c\n", "");
    let text = optimized(&unscaled);
    assert!(
        text.contains("= fused_attention %0, %1, %2, scale=none"),
        "{text}"
    );
    let kept = [
        // The scores are returned too (a second user).
        ATTENTION.replace(
            "  return %o",
            "  %t: tensor<f32, cpu, 3> = add %o, %scores\n  return %t",
        ),
        // Softmax over the queries.
        ATTENTION.replace("softmax %scores, dim=2", "softmax %scores, dim=1"),
        // A scale added, not divided.
        ATTENTION.replace("div.scalar %s, %c", "add.scalar %s, %c"),
        // A transpose of the other dims.
        ATTENTION.replace("transpose %k, dim=1", "transpose %k"),
        // A division that may raise between the links.
        ATTENTION.replace(
            "  %c: float = scalar.sqrt %d",
            "  %one: int = const.int 1\n  %c: float = scalar.truediv %d, %one",
        ),
    ];
    for (i, text) in kept.iter().enumerate() {
        let out = optimized(text);
        assert!(!out.contains("fused_attention"), "case {i}:\n{out}");
    }
}
