//! `ExprKind`'s operands and its maps over them: the one shape in which the executor, the
//! e-graph and the typing rules take the IR's ops, so the maps must visit every operand, in
//! `operands()` order, and keep every attribute.

mod support;

use rextio_ir::{parse_function, ExprId, ExprKind, Function};
use support::{every_op, CONTROL_FLOW_TEXT};

fn every_kind() -> Vec<ExprKind> {
    // `every_op` has every tensor op and attribute form, the control-flow text every scalar
    // op, float constants and bound values.
    let control_flow: Function = match parse_function(CONTROL_FLOW_TEXT) {
        Ok(f) => f,
        Err(e) => panic!("the control-flow text parses: {e:?}"),
    };
    every_op()
        .exprs
        .values()
        .chain(control_flow.exprs.values())
        .map(|e| e.kind.clone())
        .collect()
}

#[test]
fn map_visits_the_operands_in_order_and_keeps_the_attributes() {
    for kind in every_kind() {
        let mut seen = Vec::new();
        let numbered: ExprKind<usize> = kind.map(|id| {
            seen.push(id);
            seen.len() - 1
        });
        assert_eq!(seen, kind.operands(), "{kind:?}");
        assert_eq!(numbered.operands(), (0..seen.len()).collect::<Vec<_>>());
        assert_eq!(numbered.mnemonic(), kind.mnemonic());
        let back: ExprKind = numbered.map(|position| seen[position]);
        assert_eq!(back, kind);
    }
}

#[test]
fn try_map_stops_at_the_first_error() {
    for kind in every_kind() {
        let operands = kind.operands();
        let mut calls = 0;
        let result = kind.try_map(|id| {
            calls += 1;
            Err::<ExprId, ExprId>(id)
        });
        match operands.first() {
            Some(first) => {
                assert_eq!(result, Err(*first), "{kind:?}");
                assert_eq!(calls, 1);
            }
            None => assert_eq!(result.as_ref(), Ok(&kind)),
        }
        assert_eq!(
            kind.map_operands(|_| None::<ExprId>).is_some(),
            operands.is_empty()
        );
    }
}
