//! A name is not an identity: a module may define `f` twice. Compiling by line gives exactly
//! the definition asked for; compiling by name gives the one the module binds (the last);
//! a module compiles only the definitions it exposes.

use rextio_driver::{compile_function, compile_function_at, compile_module, CompileError, Surface};
use rextio_ir::print::print_function;

const TWICE: &str = "\
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(x, w, b).relu()


def f(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu2D:
    return F.linear(x, w, b).sigmoid()
";

fn ir_of(result: Result<rextio_driver::CompiledFunction, CompileError>) -> String {
    print_function(&result.expect("compiles").parsed)
}

#[test]
fn by_line_compiles_exactly_that_definition() {
    let first = ir_of(compile_function_at(
        "twice.py",
        TWICE,
        "f",
        5,
        Surface::Extended,
    ));
    let second = ir_of(compile_function_at(
        "twice.py",
        TWICE,
        "f",
        9,
        Surface::Extended,
    ));
    assert!(
        first.contains("relu") && !first.contains("sigmoid"),
        "{first}"
    );
    assert!(
        second.contains("sigmoid") && !second.contains("relu"),
        "{second}"
    );
}

#[test]
fn by_name_compiles_the_definition_the_module_binds() {
    let bound = ir_of(compile_function("twice.py", TWICE, "f", Surface::Extended));
    assert!(
        bound.contains("sigmoid") && !bound.contains("relu"),
        "{bound}"
    );
}

#[test]
fn a_line_without_that_definition_is_an_error_naming_the_line() {
    for line in [1, 6, 8, 10, 99] {
        match compile_function_at("twice.py", TWICE, "f", line, Surface::Extended) {
            Err(e @ CompileError::NotFound { .. }) => {
                assert_eq!(
                    e.to_string(),
                    format!("no module-level `def f` on line {line} of twice.py (only module-level functions compile)")
                );
            }
            other => panic!("line {line}: expected NotFound, got {other:?}"),
        }
    }
    assert!(matches!(
        compile_function_at("twice.py", TWICE, "g", 5, Surface::Extended),
        Err(CompileError::NotFound { .. })
    ));
}

#[test]
fn a_module_compiles_only_the_definitions_it_exposes() {
    let (analysis, compiled) = compile_module("twice.py", TWICE, Surface::Extended);
    assert_eq!(
        analysis.functions.len(),
        2,
        "the analysis reports every def"
    );
    assert!(analysis.is_shadowed(0) && !analysis.is_shadowed(1));
    assert_eq!(compiled.len(), 1);
    let ir = ir_of(compiled.into_iter().next().expect("one"));
    assert!(ir.contains("sigmoid"), "{ir}");
}
