//! Robustness over many programs: the conformance corpus's bodies and a few hand-picked ones
//! (straight-line, and with loops and branches),
//! under deterministic random signatures and character-level mutations. For every program:
//! nothing panics, and every function the frontend calls native goes through the whole
//! pipeline (validation between passes), the executor's compiler and the backend, and its
//! unoptimized and optimized IR compute the same values in the executor. An argument set that
//! both sides reject (with the same error) checks no values, so it does not count: every such
//! function must also run, and agree, on at least one argument set.

use rextio_backend::emit_lib_rs;
use rextio_driver::{compile_module, Surface};
use rextio_frontend::Status;
use rextio_runtime::Program;
use rextio_tests::compare_runs;

const HEADER: &str = "from rextio_torch.types import (TensorF32Cpu1D, TensorF32Cpu2D, TensorI64Cpu1D, TensorF32Cuda0_1D, TensorF32Cuda0_2D)\nimport torch\nimport torch.nn.functional as F\n";

const TYPES: [&str; 9] = [
    "TensorF32Cpu2D",
    "TensorF32Cpu1D",
    "TensorI64Cpu1D",
    "TensorF32Cuda0_2D",
    "TensorF32Cuda0_1D",
    "int",
    "float",
    "bool",
    "",
];

// The last four have loops and branches (bounded: the mutations only insert a few tokens, so
// a loop stays finite).
const BODIES: [&str; 20] = [
    "return F.linear(x, w, b).relu().mean(dim=1, keepdim=False)",
    "h = F.linear(x, w)\nh = h.tanh()\nreturn h.sum(dim=1)",
    "return a.relu() + b.tanh() * a - b / a",
    "return torch.softmax(x, dim=1).argmax(dim=1, keepdim=False)",
    "return x @ w @ b",
    "return torch.matmul(a, b).sigmoid().mean(0, keepdim=True)",
    "y = x.relu()\nreturn 1",
    "return F.gelu(x, approximate='none').square().sqrt().log().exp()",
    "return torch.add(a, b) - torch.sub(a, b)",
    "for i in range(3):\n    x = x.relu()\nreturn x",
    "return (x @ w).relu()",
    "return x.view(-1, 2)",
    "return x.mean(dim=1, keepdim=False) + b",
    "return F.softmax(x, 1) * x",
    "return x.relu(x)",
    "return torch.abs(x, out=x)",
    "h = x.relu()\nfor i in range(3):\n    if i % 2 == 0:\n        h = h.tanh()\n    else:\n        h = F.linear(h, w).sigmoid()\nreturn h.sum(dim=1)",
    "h = F.linear(x, w, b)\nfor i in range(1, 4):\n    h = h.relu()\n    if i > 2:\n        break\nreturn h",
    "k = 0\nh = x.abs()\nfor i in range(4):\n    k = k + i\n    if k % 3 == 1:\n        continue\n    h = h.sqrt()\nreturn h",
    "h = x.tanh()\nfor i in [2, 0, 1]:\n    if i == 0 and i < 5:\n        return h.relu()\n    h = h.exp()\nreturn h",
];

const TOKENS: [&str; 16] = [
    "x",
    "b",
    ".relu()",
    "(",
    ")",
    ",",
    "@",
    "+",
    "dim=1",
    "keepdim=True",
    "F.linear",
    "1",
    "-1",
    "None",
    "\n",
    ":",
];

struct XorShift(u64);

impl XorShift {
    fn below(&mut self, bound: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % bound as u64) as usize
    }
}

fn program(rng: &mut XorShift) -> String {
    let names = ["x", "w", "b", "a"];
    // Mostly the types the bodies were written for (x, a, b: rank 2 or 1; w: rank 2), so a good
    // share of the programs compile; the rest from every type.
    let count = if rng.below(4) == 0 { rng.below(5) } else { 4 };
    let params: Vec<String> = names
        .iter()
        .take(count)
        .map(|n| {
            let ty = match rng.below(10) {
                0..=5 => "TensorF32Cpu2D",
                6 | 7 if *n != "w" => "TensorF32Cpu1D",
                _ => TYPES[rng.below(TYPES.len())],
            };
            match ty {
                "" => n.to_string(),
                t => format!("{n}: {t}"),
            }
        })
        .collect();
    let mut body: Vec<char> = BODIES[rng.below(BODIES.len())].chars().collect();
    if rng.below(2) == 0 {
        for _ in 0..1 + rng.below(3) {
            let at = rng.below(body.len() + 1);
            if rng.below(2) == 0 && at < body.len() {
                body.remove(at);
            } else {
                let token = TOKENS[rng.below(TOKENS.len())];
                for (i, c) in token.chars().enumerate() {
                    body.insert(at + i, c);
                }
            }
        }
    }
    let body: String = body.into_iter().collect();
    let ret = match rng.below(3) {
        0 => TYPES[rng.below(TYPES.len())],
        1 => "TensorF32Cpu2D",
        _ => "TensorF32Cpu1D",
    };
    let arrow = if ret.is_empty() {
        String::new()
    } else {
        format!(" -> {ret}")
    };
    let indented: Vec<String> = body.lines().map(|l| format!("    {l}")).collect();
    format!(
        "{HEADER}\ndef f({}){arrow}:\n{}\n",
        params.join(", "),
        indented.join("\n")
    )
}

#[test]
fn mutated_programs_never_panic_and_native_ones_compile_everywhere() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    let mut native = 0;
    let mut with_control_flow = 0;
    let mut compared_runs = 0;
    let mut rejected_runs = 0;
    for case in 0..3000 {
        let source = program(&mut rng);
        let (analysis, compiled) = compile_module("case.py", &source, Surface::Extended);
        let _ = analysis.to_json();
        let _ = analysis.render_diagnostics();
        let natives = analysis
            .functions
            .iter()
            .filter(|f| f.status == Status::Native)
            .count();
        assert_eq!(compiled.len(), natives, "case {case}:\n{source}");
        for result in compiled {
            let function =
                result.unwrap_or_else(|e| panic!("case {case}: native but {e}\n{source}"));
            native += 1;
            if !function.optimized.is_straight_line() {
                with_control_flow += 1;
            }
            let cuda = function
                .optimized
                .params
                .iter()
                .any(|p| format!("{}", p.ty).contains("cuda0"));
            match (
                Program::compile(&function.parsed),
                Program::compile(&function.optimized),
            ) {
                (Ok(unoptimized), Ok(optimized)) => {
                    assert!(!cuda, "case {case}: executor accepted a cuda:0 function");
                    // The rewrite guard: unoptimized and optimized IR compute the same.
                    // `compare_runs` panics when they disagree (values, or only one side
                    // failing) and returns false when both reject the arguments alike.
                    let mut compared = 0;
                    for (seed, rows) in [(1, 8), (2, 3)] {
                        let what = format!("case {case} seed {seed}:\n{source}");
                        if compare_runs(
                            &unoptimized,
                            &optimized,
                            &function.parsed,
                            seed,
                            rows,
                            &what,
                        ) {
                            compared += 1;
                        } else {
                            rejected_runs += 1;
                        }
                    }
                    assert!(
                        compared > 0,
                        "case {case}: both sides rejected every argument set, so no values \
                         were compared:\n{source}"
                    );
                    compared_runs += compared;
                }
                (_, Err(e)) | (Err(e), _) => {
                    assert!(cuda, "case {case}: executor refused: {e}\n{source}")
                }
            }
            emit_lib_rs(&[function.optimized], "m", "case.py")
                .unwrap_or_else(|e| panic!("case {case}: backend refused: {e}\n{source}"));
        }
    }
    assert!(
        native >= 100,
        "only {native} native functions: the generator lost its coverage"
    );
    assert!(
        with_control_flow >= 20,
        "only {with_control_flow} native functions with loops or branches"
    );
    // Most runs must compare values; arguments both sides reject are the exception (the
    // conventional shapes do not fit every generated body).
    assert!(
        compared_runs >= 3 * rejected_runs,
        "{compared_runs} runs compared values, {rejected_runs} were rejected by both sides"
    );
}
