//! The `rextio-torch` binary as a user runs it: what `check` and `dump-ir` print, on which
//! stream, and with which exit code, for the cases that must never pass silently (a file
//! that does not parse, one with no function, one whose functions all stay on Python, a
//! `--function` that is not native) and for the usage and I/O errors behind exit code 2.

use std::path::PathBuf;
use std::process::{Command, Output};

const HEADER: &str = "\
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D
";

/// Two native functions; `dead_temp` computes a value nobody uses (removed by `dce`).
const TWO_NATIVE: &str = "

def dead_temp(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    unused = x.tanh()
    return F.linear(x, w, b).relu().mean(dim=1, keepdim=False)


def other(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.sigmoid()
";

/// One function that stays on Python (a rejected site) and one that is not a candidate.
const ALL_FALLBACK: &str = "

def rejected(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.relu(x)


def plain(a, b):
    return a + b
";

/// Writes `text` to a file of its own under the test's scratch folder.
fn source_file(name: &str, text: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-tests");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("write source");
    path
}

fn run(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_rextio-torch"))
        .args(args)
        .output()
        .expect("the CLI runs")
}

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

fn rextio(args: &[&str]) -> Outcome {
    let out = run(args);
    Outcome {
        code: out.status.code().expect("exited, not killed"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn path_str(path: &std::path::Path) -> &str {
    path.to_str().expect("utf-8 path")
}

// ---------------------------------------------------------------------------------------
// check

#[test]
fn check_on_an_empty_file_says_there_are_no_functions() {
    let file = source_file("empty.py", "");
    let out = rextio(&["check", path_str(&file)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(
        out.stdout,
        format!(
            "{}: no module-level functions; nothing to compile\n",
            file.display()
        )
    );
}

#[test]
fn check_on_a_file_of_modules_says_how_to_compile_them() {
    // Issue 33: it said "nothing to compile" and nothing else.
    let source = "import torch\nfrom torch import nn\n\n\nclass MLP(nn.Module):\n    \
                  def __init__(self):\n        super().__init__()\n        \
                  self.fc = nn.Linear(8, 8)\n\n    def forward(self, x):\n        \
                  return self.fc(x).relu()\n\n\nclass Config:\n    width = 8\n";
    let file = source_file("modules.py", source);
    let out = rextio(&["check", path_str(&file)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let shown = file.display();
    assert!(
        out.stdout.starts_with(&format!(
            "{shown}: no module-level functions\n{shown}:5: MLP: a class with `forward`"
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("rextio_torch.explain(model)"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("Config"), "{}", out.stdout);
    assert!(!out.stdout.contains("nothing to compile"), "{}", out.stdout);
}

#[test]
fn check_reports_each_function() {
    let file = source_file("check_all_fallback.py", &format!("{HEADER}{ALL_FALLBACK}"));
    let out = rextio(&["check", path_str(&file)]);
    assert_eq!(out.code, 1);
    assert!(
        out.stdout.contains("error[RXTP-TORCH-002]"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("rejected: fallback (stays on Python) (0/1 sites claimed)"),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("plain: not a candidate"),
        "{}",
        out.stdout
    );
    assert!(!out.stdout.contains("no module-level functions"));
}

// ---------------------------------------------------------------------------------------
// dump-ir: nothing to dump is an error

#[test]
fn dump_ir_on_a_syntax_error_renders_it_and_exits_1() {
    let file = source_file("syntax_error.py", "def f(x:\n    return x\n");
    let out = rextio(&["dump-ir", path_str(&file)]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    let shown = file.display();
    assert!(
        out.stderr.starts_with(&format!(
            "rextio-torch: {shown} does not parse; no IR to dump:\n"
        )),
        "{}",
        out.stderr
    );
    // Rendered by codespan-reporting, at the parser's position.
    assert!(
        out.stderr
            .contains("error[RXPY-001]: invalid Python syntax"),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!("┌─ {shown}:1:9")),
        "{}",
        out.stderr
    );
}

#[test]
fn dump_ir_with_function_on_a_syntax_error_exits_1() {
    let file = source_file("syntax_error_function.py", "def f(x:\n    return x\n");
    let out = rextio(&["dump-ir", path_str(&file), "--function", "f"]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    assert!(out.stderr.contains("does not parse"), "{}", out.stderr);
    assert!(out.stderr.contains("error[RXPY-001]"), "{}", out.stderr);
}

#[test]
fn dump_ir_when_every_function_stays_on_python_says_so_and_exits_1() {
    let file = source_file("all_fallback.py", &format!("{HEADER}{ALL_FALLBACK}"));
    let out = rextio(&["dump-ir", path_str(&file)]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    let shown = file.display();
    assert!(
        out.stderr.contains(&format!(
            "{shown}:5: rejected stays on Python (see `rextio-torch check`)"
        )),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains(&format!(
            "rextio-torch: no function of {shown} compiles natively (1 stay on Python, 1 use \
             no rextio_torch.types annotation); no IR to dump"
        )),
        "{}",
        out.stderr
    );
}

#[test]
fn dump_ir_on_a_file_without_functions_exits_1() {
    let file = source_file("no_functions.py", "X = 1\n");
    let out = rextio(&["dump-ir", path_str(&file), "--format", "dot"]);
    assert_eq!(out.code, 1);
    assert_eq!(out.stdout, "");
    assert_eq!(
        out.stderr,
        format!(
            "rextio-torch: {} defines no module-level functions; no IR to dump\n",
            file.display()
        )
    );
}

// ---------------------------------------------------------------------------------------
// dump-ir: stages, --function, dot

#[test]
fn dump_ir_dce_stage_drops_the_dead_value_that_fused_keeps() {
    let file = source_file("stages.py", &format!("{HEADER}{TWO_NATIVE}"));
    let stage = |name: &str| {
        let out = rextio(&[
            "dump-ir",
            path_str(&file),
            "--stage",
            name,
            "--function",
            "dead_temp",
        ]);
        assert_eq!(out.code, 0, "{name}: {}", out.stderr);
        assert_eq!(out.stderr, "", "{name}");
        out.stdout
    };
    let fused = stage("fused");
    let dce = stage("dce");
    assert!(fused.starts_with("fn dead_temp("), "{fused}");
    assert!(fused.contains("= tanh %0  # unused"), "{fused}");
    assert!(fused.contains("fused_linear"), "{fused}");
    assert!(dce.starts_with("fn dead_temp("), "{dce}");
    assert!(!dce.contains("tanh"), "{dce}");
    assert!(dce.contains("fused_linear"), "{dce}");
    assert_eq!(
        dce.matches("fn ").count(),
        1,
        "only the function asked for: {dce}"
    );
    assert!(stage("parsed").contains("= tanh %0  # unused"));
}

#[test]
fn dump_ir_function_prints_only_that_function() {
    let file = source_file("function.py", &format!("{HEADER}{TWO_NATIVE}"));
    let all = rextio(&["dump-ir", path_str(&file)]);
    assert_eq!(all.code, 0, "{}", all.stderr);
    assert!(all.stdout.starts_with("fn dead_temp("), "{}", all.stdout);
    assert!(all.stdout.contains("\n\nfn other("), "{}", all.stdout);
    let one = rextio(&["dump-ir", path_str(&file), "--function", "other"]);
    assert_eq!(one.code, 0, "{}", one.stderr);
    assert!(
        one.stdout.starts_with("fn other(%x: tensor<f32, cpu, 2>)"),
        "{}",
        one.stdout
    );
    assert!(!one.stdout.contains("dead_temp"), "{}", one.stdout);
    assert!(one.stdout.contains("sigmoid"), "{}", one.stdout);
}

#[test]
fn dump_ir_function_that_is_not_native_says_why() {
    let file = source_file("function_not_native.py", &format!("{HEADER}{ALL_FALLBACK}"));
    let path = path_str(&file);

    let rejected = rextio(&["dump-ir", path, "--function", "rejected"]);
    assert_eq!(rejected.code, 1);
    assert_eq!(rejected.stdout, "");
    assert!(
        rejected
            .stderr
            .starts_with("rextio-torch cannot compile `rejected`; it stays on Python:\n"),
        "{}",
        rejected.stderr
    );
    assert!(
        rejected.stderr.contains(
            "error[RXTP-TORCH-002]: rextio-torch cannot lower 'x.relu': only zero-argument \
             .relu() is supported"
        ),
        "{}",
        rejected.stderr
    );

    let plain = rextio(&["dump-ir", path, "--function", "plain"]);
    assert_eq!(plain.code, 1);
    assert_eq!(plain.stdout, "");
    assert!(plain.stderr.contains("error[RXT001]"), "{}", plain.stderr);
    assert!(
        plain
            .stderr
            .contains("uses no rextio_torch.types annotation"),
        "{}",
        plain.stderr
    );

    let missing = rextio(&["dump-ir", path, "--function", "nope"]);
    assert_eq!(missing.code, 1);
    assert_eq!(missing.stdout, "");
    assert!(
        missing
            .stderr
            .starts_with("rextio-torch: no function `nope`"),
        "{}",
        missing.stderr
    );
}

#[test]
fn dump_ir_dot_names_each_graph_after_its_function() {
    let file = source_file("dot.py", &format!("{HEADER}{TWO_NATIVE}"));
    let out = rextio(&["dump-ir", path_str(&file), "--format", "dot"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let headers: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("digraph"))
        .collect();
    assert_eq!(headers, ["digraph \"dead_temp\" {", "digraph \"other\" {"]);
    assert!(!out.stdout.contains("digraph {"), "{}", out.stdout);
}

// ---------------------------------------------------------------------------------------
// Exit code 2: usage and I/O errors, with their text on stderr

#[test]
fn unreadable_file_exits_2_and_names_it() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli-tests");
    std::fs::create_dir_all(&dir).expect("scratch folder");
    let missing = dir.join("does-not-exist.py");
    for command in ["check", "dump-ir"] {
        let out = rextio(&[command, path_str(&missing)]);
        assert_eq!(out.code, 2, "{command}");
        assert_eq!(out.stdout, "", "{command}");
        assert!(
            out.stderr.starts_with(&format!(
                "rextio-torch: cannot read {}: No such file or directory",
                missing.display()
            )),
            "{command}: {}",
            out.stderr
        );
    }
    // A folder is not a readable source file either.
    let out = rextio(&["check", path_str(&dir)]);
    assert_eq!(out.code, 2);
    assert!(
        out.stderr
            .starts_with(&format!("rextio-torch: cannot read {}: ", dir.display())),
        "{}",
        out.stderr
    );
}

#[test]
fn usage_errors_exit_2_with_clap_text() {
    let file = source_file("usage.py", &format!("{HEADER}{TWO_NATIVE}"));
    let path = path_str(&file);
    let cases: [(&[&str], &str); 5] = [
        (&["check", path, "--bogus"], "unexpected argument '--bogus'"),
        (
            &["dump-ir", path, "--stage", "lowered"],
            "invalid value 'lowered' for '--stage",
        ),
        (
            &["check", path, "--format", "xml"],
            "invalid value 'xml' for '--format",
        ),
        (&["frobnicate"], "unrecognized subcommand 'frobnicate'"),
        (
            &["check"],
            "the following required arguments were not provided",
        ),
    ];
    for (args, needle) in cases {
        let out = rextio(args);
        assert_eq!(out.code, 2, "{args:?}: {}", out.stderr);
        assert_eq!(out.stdout, "", "{args:?}");
        assert!(
            out.stderr.starts_with("error: "),
            "{args:?}: {}",
            out.stderr
        );
        assert!(out.stderr.contains(needle), "{args:?}: {}", out.stderr);
        assert!(
            out.stderr.contains("For more information, try '--help'."),
            "{args:?}: {}",
            out.stderr
        );
    }
}

// ---------------------------------------------------------------------------------------
// build (cli/tests/aot.rs builds with a stand-in cargo) and doctor

#[test]
fn build_without_anything_native_to_build_exits_1_or_2() {
    let fallback = source_file("build_all_fallback.py", &format!("{HEADER}{ALL_FALLBACK}"));
    let out = rextio(&["build", path_str(&fallback)]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr.contains("rejected stays on Python"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("nothing to build"), "{}", out.stderr);
    let two = source_file("build_two.py", &format!("{HEADER}{TWO_NATIVE}"));
    let missing = rextio(&["build", path_str(&two), "--function", "nope"]);
    assert_eq!(missing.code, 1, "{}", missing.stderr);
    assert!(missing.stderr.contains("nope"), "{}", missing.stderr);
    let usage = rextio(&["build"]);
    assert_eq!(usage.code, 2);
    assert!(usage.stderr.starts_with("error: "), "{}", usage.stderr);
    let unreadable = rextio(&["build", "/nonexistent/model.py"]);
    assert_eq!(unreadable.code, 2);
    assert!(
        unreadable
            .stderr
            .starts_with("rextio-torch: cannot read /nonexistent/model.py"),
        "{}",
        unreadable.stderr
    );
}

/// Check names in report order, as `doctor` prints them.
const DOCTOR_CHECKS: [&str; 11] = [
    "python",
    "torch",
    "libtorch (tch)",
    "version check",
    "cargo",
    "rustc",
    "rextio_torch",
    "rextio",
    "CUDA",
    "CPU SIMD",
    "platform",
];

#[test]
fn doctor_reports_every_check_and_its_exit_code_follows_the_problems() {
    // Whatever this machine has: every check is there, and exit 1 iff a problem is listed.
    let out = rextio(&["doctor"]);
    assert!(
        out.stdout
            .starts_with("rextio-torch doctor: what the project needs, what this host has\n"),
        "{}",
        out.stdout
    );
    let names: Vec<&str> = out
        .stdout
        .lines()
        .filter(|l| {
            ["  ok ", "  note ", "  warning ", "  problem "]
                .iter()
                .any(|p| l.starts_with(p))
        })
        .map(|l| l[11..].split("  ").next().unwrap().trim())
        .collect();
    assert_eq!(names, DOCTOR_CHECKS, "{}", out.stdout);
    let problems = out
        .stdout
        .lines()
        .filter(|l| l.starts_with("  problem "))
        .count();
    assert_eq!(
        out.code,
        if problems == 0 { 0 } else { 1 },
        "{}",
        out.stdout
    );
    let verdict = out.stdout.lines().last().unwrap();
    if problems == 0 {
        assert_eq!(verdict, "ready: everything required is there (exit 0)");
    } else {
        assert!(
            verdict.starts_with(&format!("not ready: {problems} problem(s): RXD")),
            "{verdict}"
        );
    }
    assert!(out.stdout.contains("CPU SIMD"), "{}", out.stdout);
    #[cfg(target_arch = "x86_64")]
    assert!(out.stdout.contains("avx2 "), "{}", out.stdout);
    #[cfg(all(target_os = "linux", target_arch = "x86_64"))]
    assert!(
        out.stdout
            .contains("linux-x64: experimental [RXTT-PLATFORM-ALPHA-EXPERIMENTAL]"),
        "{}",
        out.stdout
    );
}

#[test]
fn doctor_json_has_the_checks_and_the_platform_cell() {
    let out = rextio(&["doctor", "--format", "json"]);
    let report: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
    assert_eq!(report["exit_code"], out.code);
    assert_eq!(report["ready"], out.code == 0);
    let names: Vec<&str> = report["checks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, DOCTOR_CHECKS);
    for check in report["checks"].as_array().unwrap() {
        let ok = check["level"] == "ok";
        assert_eq!(check["code"].is_null(), ok, "{check}");
        assert_eq!(check["fix"].is_null(), ok, "{check}");
    }
    assert_eq!(report["facts"]["expected"]["torch"], "2.13.0");
    assert_eq!(report["facts"]["expected"]["tch"], "0.26.0");
    assert_eq!(report["facts"]["os"], std::env::consts::OS);
}

#[test]
fn doctor_with_a_python_that_does_not_run_is_not_ready() {
    let out = rextio(&["doctor", "--python", "/nonexistent/python3.11"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stdout.contains(
            "  problem  python          cannot run `/nonexistent/python3.11`: No such file or directory"
        ),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("RXD001: Install CPython 3.11"),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("not ready: "), "{}", out.stdout);
    assert!(out.stdout.contains("RXD001"), "{}", out.stdout);
}

// ---------------------------------------------------------------------------------------
// long programs (docs/reliability.md, "Long programs")

/// `def f(x): return x.relu().relu()...` with `calls` calls.
fn relu_chain(calls: usize) -> String {
    format!(
        "from rextio_torch.types import TensorF32Cpu2D\n\n\
         def f(x: TensorF32Cpu2D) -> TensorF32Cpu2D:\n    return x{}\n",
        ".relu()".repeat(calls)
    )
}

#[test]
fn a_chain_of_100000_calls_is_checked_and_compiled_on_the_main_thread() {
    // The binary's main thread has the platform's stack (8 MiB); before the walkers grew
    // their stacks a chain of 5,000 calls overflowed it (issue 31, item 5).
    let file = source_file("chain_100000.py", &relu_chain(100_000));
    let out = rextio(&["check", path_str(&file)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .contains("f: native (100000/100000 sites claimed)"),
        "{}",
        out.stdout
    );
    let out = rextio(&["dump-ir", path_str(&file)]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(out.stdout.contains("return %"), "{}", out.stdout.len());
}

#[test]
fn a_chain_past_the_stated_depth_limit_is_refused_with_rxt035() {
    // 250,000 levels (two per call): the limit of rextio_frontend::depth::MAX_DEPTH.
    let file = source_file("chain_125001.py", &relu_chain(125_001));
    let out = rextio(&["check", path_str(&file)]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let all = format!("{}{}", out.stdout, out.stderr);
    assert!(all.contains("error[RXT035]"), "{all}");
    assert!(
        all.contains("more than the 250000 this compiler takes"),
        "{all}"
    );
}
