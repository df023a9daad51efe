//! The bodies of the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`), as plain functions so that
//! stable Rust runs them too: `driver/tests/fuzz_corpus.rs` includes this file by path and runs
//! every target over its committed corpus (`fuzz/corpus/<target>/`).
//!
//! Each target panics only when it finds a bug:
//!
//! - [`source_bytes`]: any bytes, as a Python module, through the driver's `compile_module`
//!   (what `check`, `dump-ir` and `emit` call) and `explain_function` (what
//!   `rextio_torch.explain` calls); a function the frontend calls native must come out
//!   optimized (an internal compiler error is a bug), its IR at every stage must validate and
//!   print/parse round-trip.
//! - [`mutated_programs`]: the same checks on valid programs (the repository's Python fixtures
//!   and the conformance corpora) after line and token edits the input bytes choose.
//! - [`ir_text`]: any text into the IR parser; what parses prints, re-parses and re-prints to
//!   the same text, and validation, the graph view and dot never panic.
//! - [`pipeline`]: IR text that parses and validates goes through the driver's pipeline
//!   (validating between passes); it must succeed, its output must validate and round-trip,
//!   and optimizing the output again must succeed too.
//!
//! This file may use only what both the fuzz crate and `rextio-driver`'s tests have:
//! `rextio_driver`, `rextio_frontend`, `rextio_ir`, `rextio_passes` and `serde_json`.

use std::sync::OnceLock;

use rextio_driver::explain::explain_function;
use rextio_driver::{compile_module, optimize, CompileError, CompiledFunction, Surface};
use rextio_frontend::Status;
use rextio_ir::{parse_module, print_function, print_module, to_dot, to_graph, Function};
use rextio_passes::validate;

/// The file name every source target compiles under.
pub const FILE: &str = "fuzz.py";

/// The names of the targets, as their corpus folders and `fuzz_targets/*.rs` are named.
pub const TARGETS: [&str; 4] = ["source_bytes", "mutated_programs", "ir_text", "pipeline"];

/// Runs target `name` on one input; `false` for an unknown name.
pub fn run_target(name: &str, data: &[u8]) -> bool {
    match name {
        "source_bytes" => source_bytes(data),
        "mutated_programs" => mutated_programs(data),
        "ir_text" => ir_text(data),
        "pipeline" => pipeline(data),
        _ => return false,
    }
    true
}

// ---------------------------------------------------------------------------------------
// Python source

/// Target `source_bytes`: the bytes (invalid UTF-8 replaced) as a module's source.
pub fn source_bytes(data: &[u8]) {
    check_source(&String::from_utf8_lossy(data));
}

/// Everything a consumer does with a module's source, checked.
pub fn check_source(source: &str) {
    let (analysis, compiled) = compile_module(FILE, source, Surface::Extended);
    check_rendering(&analysis, source);
    let _ = analysis.to_json();
    for function in &analysis.functions {
        // RXT099: the frontend contradicted itself (a value with no native form, a trace
        // that does not lower); the function stays on Python, but it is a bug all the same.
        if let Some(d) = function
            .diagnostics
            .iter()
            .find(|d| d.code == rextio_ir::codes::Rxt::Internal.code())
        {
            panic!(
                "internal error in the frontend for `{}`: {}",
                function.name, d.message
            );
        }
        assert_eq!(
            function.ir.is_some(),
            function.status == Status::Native,
            "`{}` has IR iff it is native",
            function.name
        );
    }
    for result in compiled {
        match result {
            Ok(compiled) => check_compiled(&compiled),
            Err(CompileError::Internal { name, rendered }) => {
                panic!("internal compiler error in `{name}`:\n{rendered}")
            }
            Err(error) => {
                let _ = error.to_string();
            }
        }
    }
    // `rextio_torch.explain` analyses the module again for one function: the first native
    // one, else the first (one only: it repeats the whole analysis, which halved exec/s).
    let first = analysis
        .functions
        .iter()
        .find(|f| f.status == Status::Native);
    if let Some(function) = first.or(analysis.functions.first()) {
        let explanation = explain_function(
            FILE,
            source,
            &function.name,
            Some(function.line),
            Surface::Extended,
        );
        if function.status == Status::Native {
            assert!(
                explanation.compiles,
                "explain: native `{}` does not compile: {:?}",
                function.name, explanation.error
            );
        }
        let _ = explanation.to_json();
        let _ = explanation.render();
    }
}

/// How many of a module's diagnostics [`check_rendering`] renders.
const RENDERED: usize = 4;

/// Every diagnostic's labels lie in the source, on char boundaries (what codespan slices by),
/// and the first [`RENDERED`] are rendered as `Analysis::render_diagnostics` renders them.
/// Rendering is codespan's, a pure function of each diagnostic; a fuzz input carries tens of
/// them, and rendering them all took 60% of each execution (2026-12-02 profile: 200 exec/s
/// over a sample of the corpus), for no coverage the first few do not reach.
fn check_rendering(analysis: &rextio_frontend::Analysis, source: &str) {
    for d in analysis.all_diagnostics() {
        for label in d.primary.iter().chain(&d.secondary) {
            let (start, end) = (label.span.start as usize, label.span.end as usize);
            assert!(
                start <= end
                    && end <= source.len()
                    && source.is_char_boundary(start)
                    && source.is_char_boundary(end),
                "[{}] {}: label {start}..{end} is not a span of the {}-byte source",
                d.code,
                d.message,
                source.len()
            );
        }
    }
    let first: Vec<_> = analysis.all_diagnostics().take(RENDERED).cloned().collect();
    let _ = rextio_ir::diag::render_all(&first, FILE, source);
}

/// A compiled function: every stage validates and round-trips through the text form.
fn check_compiled(compiled: &CompiledFunction) {
    for (stage, f) in &compiled.stages {
        if let Err(errors) = validate(f) {
            panic!(
                "`{}` after stage `{stage}` does not validate: {errors:?}\n{}",
                compiled.name,
                print_function(f)
            );
        }
        round_trip(f);
    }
}

// ---------------------------------------------------------------------------------------
// IR text

/// Target `ir_text`: the bytes (invalid UTF-8 replaced) into the IR parser.
pub fn ir_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(module) = parse_module(&text, "fuzz") else {
        return;
    };
    let printed = print_module(&module);
    let reparsed = parse_module(&printed, "fuzz")
        .unwrap_or_else(|e| panic!("printed module does not parse ({e}):\n{printed}"));
    let reprinted = print_module(&reparsed);
    assert_eq!(
        printed, reprinted,
        "printing the re-parsed module changes it"
    );
    for f in &module.functions {
        if validate(f).is_ok() {
            let _ = to_graph(f);
            let _ = to_dot(f);
        }
    }
}

/// Target `pipeline`: every function of IR text that parses and validates, optimized.
pub fn pipeline(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(module) = parse_module(&text, "fuzz") else {
        return;
    };
    for f in module.functions {
        if validate(&f).is_err() {
            continue;
        }
        let input = print_function(&f);
        let optimized = optimize_valid(f, &input);
        round_trip(&optimized);
        // The optimizer's output is valid input too (it has fused ops the rules must leave be).
        let printed = print_function(&optimized);
        let again = optimize_valid(optimized, &printed);
        round_trip(&again);
    }
}

fn optimize_valid(f: Function, input: &str) -> Function {
    match optimize(f) {
        Ok((optimized, _)) => {
            if let Err(errors) = validate(&optimized) {
                panic!("the pipeline's output does not validate: {errors:?}\ninput:\n{input}");
            }
            optimized
        }
        Err(errors) => panic!("the pipeline rejects valid IR: {errors:?}\ninput:\n{input}"),
    }
}

/// Printing `f`, parsing the text and printing again gives the same text up to the value
/// labels (printing numbers values in arena order, parsing in text order, which can differ
/// in a function the frontend built); one more round trip changes nothing at all.
pub fn round_trip(f: &Function) {
    let printed = print_function(f);
    let reprinted = reprint(&printed);
    if let Err(why) = same_up_to_labels(&printed, &reprinted) {
        panic!("printing the re-parsed function changes it ({why}):\n{printed}\n{reprinted}");
    }
    assert_eq!(
        reprinted,
        reprint(&reprinted),
        "printing a parsed function's text is not a fixed point"
    );
}

fn reprint(printed: &str) -> String {
    let parsed = rextio_ir::parse_function(printed)
        .unwrap_or_else(|e| panic!("printed function does not parse ({e}):\n{printed}"));
    print_function(&parsed)
}

/// Whether `a` and `b` differ only in a one-to-one renaming of their `%labels`.
pub fn same_up_to_labels(a: &str, b: &str) -> Result<(), String> {
    use std::collections::HashMap;
    fn split(text: &str) -> Vec<(bool, String)> {
        let mut out = Vec::new();
        let mut chars = text.chars().peekable();
        let mut plain = String::new();
        while let Some(c) = chars.next() {
            if c == '%' {
                out.push((false, std::mem::take(&mut plain)));
                let mut label = String::new();
                while let Some(&d) = chars.peek() {
                    if d.is_alphanumeric() || d == '_' {
                        label.push(d);
                        chars.next();
                    } else {
                        break;
                    }
                }
                out.push((true, label));
            } else {
                plain.push(c);
            }
        }
        out.push((false, plain));
        out
    }
    let (sa, sb) = (split(a), split(b));
    if sa.len() != sb.len() {
        return Err("different numbers of labels".into());
    }
    let mut forward: HashMap<&str, &str> = HashMap::new();
    let mut backward: HashMap<&str, &str> = HashMap::new();
    for ((la, ta), (lb, tb)) in sa.iter().zip(&sb) {
        if la != lb || (!la && ta != tb) {
            return Err(format!("`{ta}` against `{tb}`"));
        }
        if *la
            && (*forward.entry(ta).or_insert(tb) != tb.as_str()
                || *backward.entry(tb).or_insert(ta) != ta.as_str())
        {
            return Err(format!("%{ta} is not renamed consistently (%{tb})"));
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------------------
// Mutated programs

/// The valid programs `mutated_programs` starts from: the repository's Python fixtures, then
/// every case of the two conformance corpora as a module.
pub fn programs() -> &'static [String] {
    static PROGRAMS: OnceLock<Vec<String>> = OnceLock::new();
    PROGRAMS.get_or_init(|| {
        let mut programs: Vec<String> = FIXTURES.iter().map(|s| s.to_string()).collect();
        programs.extend(corpus_modules(CONTROL_FLOW));
        programs.extend(corpus_modules(REFERENCE_CLAIMS));
        programs
    })
}

const FIXTURES: [&str; 24] = [
    include_str!("../../examples/phase_a.py"),
    include_str!("../../examples/rextio_project/phase_a/heads.py"),
    include_str!("../../examples/rextio_project/phase_a/kernels.py"),
    include_str!("../../tests/python/aot_fixture.py"),
    include_str!("../../tests/python/compile_fixture.py"),
    include_str!("../../tests/python/control_flow_fixture.py"),
    include_str!("../../tests/python/decorated_fixture.py"),
    include_str!("../../tests/python/emit_fixture.py"),
    include_str!("../../tests/python/redefined_fixture.py"),
    include_str!("../../tests/python/surface_fixture.py"),
    include_str!("../../frontend/tests/fixtures/ok/cuda_slice.py"),
    include_str!("../../frontend/tests/fixtures/ok/decorated.py"),
    include_str!("../../frontend/tests/fixtures/ok/for_loop.py"),
    include_str!("../../frontend/tests/fixtures/ok/named_temps.py"),
    include_str!("../../frontend/tests/fixtures/ok/phase_a.py"),
    include_str!("../../frontend/tests/fixtures/ok/phase_b.py"),
    include_str!("../../frontend/tests/fixtures/err/abs_out.py"),
    include_str!("../../frontend/tests/fixtures/err/control_flow_blockers.py"),
    include_str!("../../frontend/tests/fixtures/err/host_rules.py"),
    include_str!("../../frontend/tests/fixtures/err/keyword_tensor.py"),
    include_str!("../../frontend/tests/fixtures/err/linear_i64_bias.py"),
    include_str!("../../frontend/tests/fixtures/err/mean_dim2.py"),
    include_str!("../../frontend/tests/fixtures/err/relu_with_arg.py"),
    include_str!("../../frontend/tests/fixtures/err/cumsum.py"),
];

const CONTROL_FLOW: &str = include_str!("../../tests/conformance/control-flow.json");
const REFERENCE_CLAIMS: &str = include_str!("../../tests/conformance/reference-claims.public.json");

/// Every case of a conformance corpus as its module (built as `tests/conformance/README.md`
/// says).
fn corpus_modules(json: &str) -> Vec<String> {
    use serde_json::Value;
    let Ok(corpus) = serde_json::from_str::<Value>(json) else {
        return Vec::new();
    };
    let header = corpus["module_header"].as_str().unwrap_or("");
    let Some(cases) = corpus["cases"].as_array() else {
        return Vec::new();
    };
    cases
        .iter()
        .map(|case| {
            let text = |key: &str| case.get(key).and_then(Value::as_str).unwrap_or("");
            if !text("source").is_empty() {
                return format!("{header}\n\n{}", text("source"));
            }
            let mut body = String::new();
            for line in text("prelude").lines().chain(text("body").lines()) {
                body.push_str("    ");
                body.push_str(line);
                body.push('\n');
            }
            let decorator = match text("decorator") {
                "" => String::new(),
                d => format!("{d}\n"),
            };
            let returns = match text("returns") {
                "" => String::new(),
                r => format!(" -> {r}"),
            };
            format!(
                "{header}\n\n{decorator}def f({}){returns}:\n{body}",
                text("params")
            )
        })
        .collect()
}

/// Target `mutated_programs`: a program of [`programs`] and up to 16 edits, all chosen by the
/// bytes, then [`check_source`].
pub fn mutated_programs(data: &[u8]) {
    check_source(&mutate(data));
}

/// The program the bytes choose, edited as they say: the first two bytes pick the program,
/// each further edit takes an opcode byte and its operands' bytes (missing bytes read as 0).
pub fn mutate(data: &[u8]) -> String {
    let mut bytes = Bytes { data, pos: 0 };
    let programs = programs();
    let program = &programs[bytes.below(programs.len())];
    let mut lines: Vec<String> = program.lines().map(str::to_string).collect();
    let mut edits = 0;
    while !bytes.is_empty() && edits < 16 {
        edits += 1;
        edit(&mut lines, &mut bytes, programs);
    }
    let mut out = lines.join("\n");
    out.push('\n');
    out
}

/// Tokens the edits insert: the surface the frontend claims or rejects, Python's keywords and
/// operators, marker types and numbers at the edges of the ranges the compiler accepts.
const VOCABULARY: [&str; 92] = [
    "x",
    "w",
    "b",
    "h",
    "i",
    "k",
    "n",
    "f",
    "y",
    "_",
    "self",
    "relu",
    "tanh",
    "sigmoid",
    "exp",
    "log",
    "sqrt",
    "abs",
    "square",
    "gelu",
    "mean",
    "sum",
    "softmax",
    "argmax",
    "matmul",
    "linear",
    "view",
    "F",
    "torch",
    "F.linear",
    "torch.matmul",
    "F.softmax",
    "for",
    "while",
    "if",
    "elif",
    "else",
    "break",
    "continue",
    "return",
    "pass",
    "def",
    "in",
    "range",
    "and",
    "or",
    "not",
    "is",
    "lambda",
    "dim=1",
    "dim=0",
    "dim=-1",
    "keepdim=True",
    "keepdim=False",
    "approximate='tanh'",
    "0",
    "1",
    "-1",
    "2",
    "3",
    "0.5",
    "1e308",
    "-0.0",
    "9223372036854775807",
    "9223372036854775808",
    "True",
    "False",
    "None",
    "+",
    "-",
    "*",
    "/",
    "//",
    "%",
    "@",
    "**",
    "==",
    "<",
    ">=",
    "=",
    "+=",
    ":",
    "(",
    ")",
    "[",
    ",",
    ".",
    "TensorF32Cpu2D",
    // Extension spellings of the reduction and classification lanes (appended, so the
    // corpus's bytes keep choosing the words they chose).
    "log_softmax",
    "F.log_softmax",
    "amax",
    "amin",
];

const MARKERS: [&str; 8] = [
    "TensorF32Cpu1D",
    "TensorF32Cpu2D",
    "TensorI64Cpu1D",
    "TensorF32Cuda0_1D",
    "TensorF32Cuda0_2D",
    "int",
    "float",
    "bool",
];

const NUMBERS: [&str; 14] = [
    "0",
    "1",
    "-1",
    "2",
    "7",
    "-9223372036854775808",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551616",
    "0.0",
    "1e-45",
    "1e309",
    "0x10",
    "1_000",
];

fn edit(lines: &mut Vec<String>, bytes: &mut Bytes<'_>, programs: &[String]) {
    let op = bytes.byte() % 13;
    if lines.is_empty() {
        lines.push(String::new());
    }
    let n = lines.len();
    match op {
        // Swap two lines.
        0 => {
            let (a, b) = (bytes.below(n), bytes.below(n));
            lines.swap(a, b);
        }
        // Duplicate a line to another place.
        1 => {
            let (a, b) = (bytes.below(n), bytes.below(n + 1));
            let line = lines[a].clone();
            lines.insert(b, line);
        }
        // Delete a line.
        2 => {
            let a = bytes.below(n);
            lines.remove(a);
        }
        // Move a line.
        3 => {
            let a = bytes.below(n);
            let line = lines.remove(a);
            let b = bytes.below(lines.len() + 1);
            lines.insert(b, line);
        }
        // Change a line's indentation.
        4 => {
            let a = bytes.below(n);
            let line = lines[a].trim_start().to_string();
            let indent = [0, 1, 2, 4, 8, 12, 16][bytes.below(7)];
            let tab = bytes.byte().is_multiple_of(8);
            lines[a] = format!(
                "{}{line}",
                if tab {
                    "\t".repeat(indent / 4)
                } else {
                    " ".repeat(indent)
                }
            );
        }
        // Replace a token with a vocabulary word.
        5 => {
            let word = VOCABULARY[bytes.below(VOCABULARY.len())];
            replace_token(lines, bytes, |_| Some(word.to_string()));
        }
        // Replace a token with one of the same kind elsewhere in the program (an identifier
        // with an identifier, a number with a number, an operator with an operator).
        6 => {
            let pool: Vec<String> = lines.iter().flat_map(|l| tokens(l)).collect();
            let pick = bytes.below(pool.len().max(1));
            replace_token(lines, bytes, |old| {
                let kind = kind_of(old);
                let same: Vec<&String> = pool.iter().filter(|t| kind_of(t) == kind).collect();
                same.get(pick % same.len().max(1)).map(|t| t.to_string())
            });
        }
        // Replace a number.
        7 => {
            let number = NUMBERS[bytes.below(NUMBERS.len())];
            let pick = bytes.below(64);
            replace_matching(lines, pick, |t| kind_of(t) == Kind::Number, number);
        }
        // Replace a marker annotation.
        8 => {
            let marker = MARKERS[bytes.below(MARKERS.len())];
            let pick = bytes.below(64);
            replace_matching(
                lines,
                pick,
                |t| MARKERS.contains(&t) || t.starts_with("Tensor"),
                marker,
            );
        }
        // Insert a vocabulary word between two tokens.
        9 => {
            let a = bytes.below(n);
            let mut toks = tokens(&lines[a]);
            let at = bytes.below(toks.len() + 1);
            let word = VOCABULARY[bytes.below(VOCABULARY.len())];
            toks.insert(at, word.to_string());
            lines[a] = toks.concat();
        }
        // Delete a token.
        10 => replace_token(lines, bytes, |_| Some(String::new())),
        // Swap two tokens of a line.
        11 => {
            let a = bytes.below(n);
            let mut toks = tokens(&lines[a]);
            if !toks.is_empty() {
                let (i, j) = (bytes.below(toks.len()), bytes.below(toks.len()));
                toks.swap(i, j);
                lines[a] = toks.concat();
            }
        }
        // Splice in a line of another program.
        _ => {
            let other = &programs[bytes.below(programs.len())];
            let other_lines: Vec<&str> = other.lines().collect();
            if !other_lines.is_empty() {
                let line = other_lines[bytes.below(other_lines.len())].to_string();
                let at = bytes.below(n + 1);
                lines.insert(at, line);
            }
        }
    }
}

/// Replaces the token the bytes choose (a line, then a token of it) with `with(old)`.
fn replace_token(
    lines: &mut [String],
    bytes: &mut Bytes<'_>,
    with: impl FnOnce(&str) -> Option<String>,
) {
    let a = bytes.below(lines.len());
    let mut toks = tokens(&lines[a]);
    let significant: Vec<usize> = (0..toks.len())
        .filter(|&i| !toks[i].trim().is_empty())
        .collect();
    if significant.is_empty() {
        return;
    }
    let i = significant[bytes.below(significant.len())];
    if let Some(new) = with(&toks[i]) {
        toks[i] = new;
        lines[a] = toks.concat();
    }
}

/// Replaces the `pick`-th token (cyclically) for which `matches` holds, in the whole program.
fn replace_matching(lines: &mut [String], pick: usize, matches: impl Fn(&str) -> bool, new: &str) {
    let places: Vec<(usize, usize)> = lines
        .iter()
        .enumerate()
        .flat_map(|(l, line)| {
            tokens(line)
                .into_iter()
                .enumerate()
                .filter(|(_, t)| matches(t))
                .map(move |(i, _)| (l, i))
                .collect::<Vec<_>>()
        })
        .collect();
    if places.is_empty() {
        return;
    }
    let (l, i) = places[pick % places.len()];
    let mut toks = tokens(&lines[l]);
    toks[i] = new.to_string();
    lines[l] = toks.concat();
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Word,
    Number,
    Space,
    Other,
}

fn kind_of(token: &str) -> Kind {
    match token.chars().next() {
        Some(c) if c.is_ascii_digit() => Kind::Number,
        Some(c) if c.is_alphanumeric() || c == '_' => Kind::Word,
        Some(c) if c.is_whitespace() => Kind::Space,
        _ => Kind::Other,
    }
}

/// A line split into tokens whose concatenation is the line: runs of word characters
/// (identifiers and numbers, with a number's `.` and exponent), runs of blanks, string
/// literals whole, and every other character alone.
pub fn tokens(line: &str) -> Vec<String> {
    let chars: Vec<char> = line.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let start = i;
        if c.is_alphanumeric() || c == '_' {
            let number = c.is_ascii_digit();
            while i < chars.len()
                && (chars[i].is_alphanumeric()
                    || chars[i] == '_'
                    || (number && chars[i] == '.')
                    || (number
                        && matches!(chars[i], '+' | '-')
                        && matches!(chars[i - 1], 'e' | 'E')))
            {
                i += 1;
            }
        } else if c.is_whitespace() {
            while i < chars.len() && chars[i].is_whitespace() {
                i += 1;
            }
        } else if c == '\'' || c == '"' {
            i += 1;
            while i < chars.len() && chars[i] != c {
                i += 1;
            }
            i = (i + 1).min(chars.len());
        } else {
            i += 1;
        }
        out.push(chars[start..i].iter().collect());
    }
    out
}

/// The fuzzer's bytes read as choices; reading past the end gives zeros.
struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl Bytes<'_> {
    fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// A number below `n` (0 when `n` is 0): one byte for up to 256 choices, two above.
    fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let v = if n <= 256 {
            self.byte() as usize
        } else {
            u16::from_le_bytes([self.byte(), self.byte()]) as usize
        };
        v % n
    }
}
