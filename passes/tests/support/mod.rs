//! Shared test helpers: parsing IR text and the Phase A function.
#![allow(dead_code)]

use rextio_ir::{parse_function, print_function, Function};

/// The Phase A function: `mean(relu(linear(x, weight, bias)), dim=1)`.
pub const PHASE_A: &str = "\
fn inference(%x: tensor<f32, cpu, 2>, %weight: tensor<f32, cpu, 2>, %bias: tensor<f32, cpu, 1>) -> tensor<f32, cpu, 1> {
  %0: tensor<f32, cpu, 2> = param 0
  %1: tensor<f32, cpu, 2> = param 1
  %2: tensor<f32, cpu, 1> = param 2
  %3: tensor<f32, cpu, 2> = linear %0, %1, %2
  %4: tensor<f32, cpu, 2> = relu %3
  %5: tensor<f32, cpu, 1> = mean %4, dim=1, keepdim=false
  return %5
}
";

pub fn parse(text: &str) -> Function {
    match parse_function(text) {
        Ok(f) => f,
        Err(e) => panic!("test IR does not parse: {e}\n{text}"),
    }
}

/// The printed form of `text` (labels renumbered), for comparing functions as text.
pub fn normalized(text: &str) -> String {
    print_function(&parse(text))
}
