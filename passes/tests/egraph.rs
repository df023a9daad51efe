//! The egg conversion is lossless: function -> terms -> e-graph -> function gives the same
//! function back (same arena order, types, spans and names), for every op kind.

mod support;

use egg::{EGraph, Extractor, RecExpr};
use rextio_ir::{print_function, Function, Span, Type};
use rextio_passes::egraph::{rebuild, region_of, TensorLang, Types};
use rextio_passes::fuse::FusionCost;
use rextio_passes::validate::validate;
use support::{parse, PHASE_A};

/// Every op kind at least once; dead values (`%i`, `%t`, `%am`, `%f2` to `%f6`) and shared
/// values (`%sub`, `%mm`) included, so every tree-cutting case is exercised.
const EVERY_OP: &str = "\
fn every_op(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cpu, 2>, %b: tensor<f32, cpu, 1>, %v: tensor<f32, cpu, 1>) -> tensor<f32, cpu, 1> {
  %x: tensor<f32, cpu, 2> = param 0
  %w: tensor<f32, cpu, 2> = param 1
  %b: tensor<f32, cpu, 1> = param 2
  %v: tensor<f32, cpu, 1> = param 3
  %i: int = const.int -3
  %t: bool = const.bool true
  %u1: tensor<f32, cpu, 2> = relu %x
  %u2: tensor<f32, cpu, 2> = sigmoid %u1
  %u3: tensor<f32, cpu, 2> = tanh %u2
  %u4: tensor<f32, cpu, 2> = abs %u3
  %u5: tensor<f32, cpu, 2> = neg %u4
  %u6: tensor<f32, cpu, 2> = square %u5
  %u7: tensor<f32, cpu, 2> = exp %u6
  %u8: tensor<f32, cpu, 2> = log %u7
  %u9: tensor<f32, cpu, 2> = sqrt %u8
  %u10: tensor<f32, cpu, 2> = gelu %u9
  %add: tensor<f32, cpu, 2> = add %u10, %x
  %sub: tensor<f32, cpu, 2> = sub %add, %v
  %mul: tensor<f32, cpu, 2> = mul %sub, %sub
  %div: tensor<f32, cpu, 2> = div %mul, %v
  %lin: tensor<f32, cpu, 2> = linear %x, %w, %b
  %lin2: tensor<f32, cpu, 2> = linear %div, %w
  %mm: tensor<f32, cpu, 2> = matmul %lin, %lin2
  %mean: tensor<f32, cpu, 2> = mean %mm, dim=0, keepdim=true
  %sum: tensor<f32, cpu, 1> = sum %mean, dim=1, keepdim=false
  %sm: tensor<f32, cpu, 1> = softmax %sum, dim=0
  %am: tensor<i64, cpu, 1> = argmax %mm, dim=1, keepdim=false
  %f1: tensor<f32, cpu, 1> = fused_linear %x, %w, %b, activations=[relu, tanh], tail=mean(dim=1, keepdim=false)
  %f2: tensor<f32, cpu, 2> = fused_linear %x, %w, activations=[], tail=none
  %f3: tensor<f32, cpu, 2> = fused_linear %x, %w, %b, activations=[gelu], tail=sum(dim=1, keepdim=true)
  %f4: tensor<f32, cpu, 2> = fused_matmul %x, %w, %b, %v, %b, prologue=[sub, div], activations=[], tail=none
  %f5: tensor<f32, cpu, 2> = fused_linear %x, %w, %b, activations=[tanh], tail=softmax(dim=1)
  %f6: tensor<i64, cpu, 1> = fused_matmul %x, %w, activations=[], tail=argmax(dim=1, keepdim=false)
  %out: tensor<f32, cpu, 1> = add %sm, %f1  # out
  return %out
}
";

/// Function -> region -> e-graph (no rules) -> extraction -> function.
fn round_trip(f: &Function) -> Function {
    let valid = validate(f).unwrap_or_else(|e| panic!("input must validate: {e:#?}"));
    let region = region_of(valid);
    let mut egraph = EGraph::<TensorLang, ()>::default();
    let classes = region.add_to(&mut egraph);
    egraph.rebuild();
    let extractor = Extractor::new(&egraph, FusionCost);
    rebuild(f, &egraph, &classes, &|class| {
        extractor.find_best_node(class).clone()
    })
    .unwrap_or_else(|e| panic!("rebuild failed: {e:#?}"))
}

fn with_spans_everywhere(mut f: Function) -> Function {
    let ids: Vec<_> = f.exprs.iter().map(|(id, _)| id).collect();
    for (n, id) in ids.into_iter().enumerate() {
        f.spans
            .insert(id, Span::new(n as u32 * 10, n as u32 * 10 + 5));
        if f.name_of(id).is_none() {
            f.names.insert(id, format!("v{n}"));
        }
    }
    f
}

fn side_tables(f: &Function) -> Vec<(Option<Span>, Option<String>)> {
    f.exprs
        .iter()
        .map(|(id, _)| (f.span_of(id), f.name_of(id).map(String::from)))
        .collect()
}

#[test]
fn every_op_kind_round_trips() {
    let f = with_spans_everywhere(parse(EVERY_OP));
    let back = round_trip(&f);
    assert_eq!(print_function(&back), print_function(&f));
    assert_eq!(back, f);
    assert_eq!(side_tables(&back), side_tables(&f));
    validate(&back).expect("round trip stays valid");
}

/// A bias added after the product, and a prologue on a `fused_linear`: the forms of a fused
/// op's slots that `EVERY_OP` leaves out.
const ADDED_BIAS: &str = "\
fn added(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cpu, 2>, %b: tensor<f32, cpu, 1>) -> tensor<f32, cpu, 1> {
  %x: tensor<f32, cpu, 2> = param 0
  %w: tensor<f32, cpu, 2> = param 1
  %b: tensor<f32, cpu, 1> = param 2
  %y: tensor<f32, cpu, 2> = fused_linear %x, %w, %b, activations=[], tail=none, bias=added
  %z: tensor<f32, cpu, 1> = fused_linear %y, %w, %b, %b, prologue=[mul], activations=[relu], tail=sum(dim=1, keepdim=false)
  return %z
}
";

/// The e-graph's type analysis (`Types`, which asks `rextio_ir::typing`) gives the class of
/// every tensor value the type its expression declares, and no type to scalars.
#[test]
fn the_type_analysis_gives_every_value_its_declared_type() {
    for text in [EVERY_OP, ADDED_BIAS, PHASE_A] {
        let f = parse(text);
        let region = region_of(validate(&f).expect("valid"));
        let mut egraph = EGraph::new(Types::of(&f));
        let classes = region.add_to(&mut egraph);
        egraph.rebuild();
        for (id, expr) in f.exprs.iter() {
            let class = classes.of_expr.get(&id).expect("every value has a class");
            let declared = match expr.ty {
                Type::Tensor(t) => Some(t),
                _ => None,
            };
            assert_eq!(
                Types::tensor(&egraph, *class),
                declared,
                "{} in {}",
                f.name_of(id).unwrap_or("?"),
                f.name
            );
        }
    }
}

#[test]
fn phase_a_round_trips() {
    let f = with_spans_everywhere(parse(PHASE_A));
    let back = round_trip(&f);
    assert_eq!(back, f);
    assert_eq!(side_tables(&back), side_tables(&f));
}

#[test]
fn terms_print_and_parse_back() {
    let f = parse(EVERY_OP);
    let region = region_of(validate(&f).expect("valid"));
    // Roots: the dead %i, %t, %am, %f2 to %f6; the shared %sub (used twice by %mul) and %mm;
    // the returned %out.
    let roots: Vec<u32> = region
        .trees
        .iter()
        .map(|t| u32::from(t.root.into_raw()))
        .collect();
    assert_eq!(roots, [4, 5, 17, 22, 26, 28, 29, 30, 31, 32, 33]);
    for tree in &region.trees {
        let text = tree.term.to_string();
        let parsed: RecExpr<TensorLang> = text.parse().expect("term text parses");
        assert_eq!(parsed.to_string(), text);
        assert_eq!(tree.origin.len(), tree.term.len());
    }
    let f4 = &region.trees[7].term.to_string();
    assert_eq!(
        f4,
        "(fused_matmul (param 0) (param 1) (param 2) nil none \
         (pre sub (param 3) (pre div (param 2) nil)))"
    );
    assert_eq!(
        region.trees[8].term.to_string(),
        "(fused_linear (param 0) (param 1) (param 2) (then nil tanh) (softmax 1) nil)"
    );
    assert_eq!(
        region.trees[9].term.to_string(),
        "(fused_matmul (param 0) (param 1) none nil (argmax 1 false) nil)"
    );
    let out = &region.trees[10].term.to_string();
    assert_eq!(
        out,
        "(add (softmax (sum (mean (ref 22) 0 true) 1 false) 0) \
         (fused_linear (param 0) (param 1) (param 2) (then (then nil relu) tanh) (mean 1 false) nil))"
    );
    assert_eq!(
        region.trees[4].term.to_string(),
        "(argmax (ref 22) 1 false)"
    );
}

#[test]
fn non_canonical_order_round_trips_to_an_equivalent_function() {
    // Parameters read out of order and a dead read: the rebuild keeps the original order.
    let f = parse(
        "fn g(%x: tensor<f32, cpu, 2>, %w: tensor<f32, cpu, 2>) -> tensor<f32, cpu, 2> {
  %w: tensor<f32, cpu, 2> = param 1
  %unused: tensor<f32, cpu, 2> = exp %w
  %x: tensor<f32, cpu, 2> = param 0
  %y: tensor<f32, cpu, 2> = linear %x, %w
  return %y
}",
    );
    let back = round_trip(&f);
    assert_eq!(back, f);
}
