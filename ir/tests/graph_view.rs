//! The petgraph view, its Graphviz rendering, and use counts.

mod support;

use petgraph::visit::EdgeRef;
use rextio_ir::graph::node_of;
use rextio_ir::{to_dot, to_graph, uses, EdgeLabel, ExprKind, Function, NodeLabel, Stmt};
use support::{every_op, phase_a, F32_2D};

#[test]
fn phase_a_graph_has_one_node_per_expr_and_return() {
    let f = phase_a();
    let graph = to_graph(&f);
    assert_eq!(graph.node_count(), 7);
    assert_eq!(graph.edge_count(), 6);
    let ids: Vec<_> = f.exprs.iter().map(|(id, _)| id).collect();
    assert_eq!(
        graph[node_of(ids[3])].to_string(),
        "%3 linear\ntensor<f32, cpu, 2>"
    );
    assert_eq!(
        graph[node_of(ids[5])].to_string(),
        "%5 mean dim=1, keepdim=false\ntensor<f32, cpu, 1>"
    );
    assert_eq!(
        graph[node_of(ids[0])].to_string(),
        "%0 param 0\ntensor<f32, cpu, 2>"
    );
    // Operands of the linear arrive in operand order.
    let mut incoming: Vec<(usize, u32)> = graph
        .edges_directed(node_of(ids[3]), petgraph::Direction::Incoming)
        .map(|edge| (edge.source().index(), edge.weight().position))
        .collect();
    incoming.sort();
    assert_eq!(incoming, vec![(0, 0), (1, 1), (2, 2)]);
    // The return node is last and reads the mean.
    let ret = petgraph::graph::NodeIndex::new(6);
    assert_eq!(graph[ret], NodeLabel::Return { stmt: 0 });
    let into_return: Vec<_> = graph
        .edges_directed(ret, petgraph::Direction::Incoming)
        .map(|edge| (edge.source(), *edge.weight()))
        .collect();
    assert_eq!(
        into_return,
        vec![(node_of(ids[5]), EdgeLabel { position: 0 })]
    );
    assert!(!petgraph::algo::is_cyclic_directed(&graph));
}

#[test]
fn phase_a_dot_snapshot() {
    let mut f = phase_a();
    let hidden = f.exprs.iter().map(|(id, _)| id).nth(3).expect("linear");
    f.names.insert(hidden, "hidden".to_string());
    insta::assert_snapshot!("phase_a_dot", to_dot(&f));
}

#[test]
fn every_op_dot_mentions_every_node() {
    let f = every_op();
    let dot = to_dot(&f);
    assert!(
        dot.starts_with(&format!("digraph \"{}\" {{\n", f.name)),
        "{dot}"
    );
    assert_eq!(dot.matches("label = \"%").count(), f.exprs.len());
    assert!(
        dot.contains("fused_matmul prologue=[sub, div], activations=[relu, tanh], tail=mean(dim=1, keepdim=false)")
    );
    assert!(dot.contains("softmax dim=1  # probs"));
}

/// The graph is named after its function, and a name dot would misread is escaped.
#[test]
fn dot_graph_is_named_and_quoted() {
    let mut f = phase_a();
    f.name = "say \"hi\" \\ bye\nnow".to_string();
    let dot = to_dot(&f);
    let first = dot.lines().next().unwrap_or_default();
    assert_eq!(first, r#"digraph "say \"hi\" \\ bye\nnow" {"#);
    assert_eq!(dot.matches("digraph").count(), 1);
}

#[test]
fn uses_count_operands_and_returns() {
    let f = phase_a();
    let counts = uses(&f);
    let per_value: Vec<u32> = f.exprs.iter().map(|(id, _)| counts[id]).collect();
    assert_eq!(per_value, vec![1, 1, 1, 1, 1, 1]);

    let mut g = Function::new("g", vec![], F32_2D);
    let x = g.push_let(ExprKind::Param(0), F32_2D);
    let sq = g.push_let(
        ExprKind::Binary {
            op: rextio_ir::BinaryOp::Mul,
            lhs: x,
            rhs: x,
        },
        F32_2D,
    );
    let unused = g.push_let(ExprKind::ConstInt(1), rextio_ir::Type::Int);
    g.body.stmts.push(Stmt::Return(sq));
    g.body.stmts.push(Stmt::Return(sq));
    let counts = uses(&g);
    assert_eq!((counts[x], counts[sq], counts[unused]), (2, 2, 0));
}

#[test]
fn dangling_operands_do_not_break_the_views() {
    // An invalid function (operand defined in another arena) still prints and graphs.
    let f = phase_a();
    let mut g = Function::new("g", vec![], F32_2D);
    let far = f
        .exprs
        .iter()
        .map(|(id, _)| id)
        .next_back()
        .expect("nonempty");
    let r = g.push_let(
        ExprKind::Unary {
            op: rextio_ir::UnaryOp::Relu,
            input: far,
        },
        F32_2D,
    );
    g.body.stmts.push(Stmt::Return(far));
    assert_eq!(to_graph(&g).edge_count(), 0);
    assert_eq!(uses(&g)[r], 0);
    assert!(rextio_ir::print_function(&g).contains("= relu %5"));
    assert!(rextio_ir::parse_function(&rextio_ir::print_function(&g)).is_err());
}

#[test]
fn control_flow_blocks_show_in_the_graph_and_dot() {
    let f = rextio_ir::parse_function(support::CONTROL_FLOW_TEXT).expect("parses");
    let dot = rextio_ir::to_dot(&f);
    for needle in [
        "for #1",
        "if #2",
        "in if #2 then",
        "in if #2 else",
        "in for #1",
        "while #",
        "test",
        "continue",
        "break",
        "yield",
        "return",
    ] {
        assert!(dot.contains(needle), "missing `{needle}` in\n{dot}");
    }
    let graph = rextio_ir::to_graph(&f);
    // One node per expression plus one per statement that is not a `let`.
    let mut statements = 0;
    f.body
        .walk(&mut |s| statements += usize::from(!matches!(s, rextio_ir::Stmt::Let(_))));
    assert_eq!(graph.node_count(), f.exprs.len() + statements);
    // Every value a statement reads or binds is connected to it.
    let uses = rextio_ir::uses(&f);
    let carried_init = f.exprs.iter().next().map(|(id, _)| id).expect("param");
    assert!(
        uses[carried_init] >= 1,
        "the loop's initial value counts as a use"
    );
}
