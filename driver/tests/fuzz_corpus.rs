//! The cargo-fuzz targets on stable: every target of `fuzz/` (its bodies are
//! `fuzz/src/lib.rs`, included here by path) over its committed corpus `fuzz/corpus/<target>/`,
//! seeds and minimized crash reproducers alike, so `cargo test` catches a regression without
//! nightly or libFuzzer. `make cargo-fuzz TARGET=... RUNS=...` runs the fuzzers themselves
//! (docs/reliability.md, "Coverage-guided fuzzing").
//!
//! The seeds are written by `write_seeds` (ignored; run it by name with
//! `REXTIO_WRITE_FUZZ_SEEDS=1`), from the same programs the `mutated_programs` target edits.

#[path = "../../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod fuzz;

use std::fs;
use std::path::{Path, PathBuf};

use rextio_driver::{compile_module, Surface};
use rextio_ir::print_function;

fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../fuzz/corpus")
}

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a directory entry").path())
        .filter(|p| p.is_file())
        .collect();
    files.sort();
    files
}

/// Runs one target over every file of its corpus, naming the file that fails.
fn run_corpus(target: &str) -> usize {
    let dir = corpus_dir().join(target);
    let files = files(&dir);
    assert!(!files.is_empty(), "{} has no seeds", dir.display());
    for path in &files {
        let data = fs::read(path).expect("a corpus file");
        let result = std::panic::catch_unwind(|| fuzz::run_target(target, &data));
        match result {
            Ok(known) => assert!(known, "unknown target {target}"),
            Err(_) => panic!("fuzz target {target} fails on {}", path.display()),
        }
    }
    files.len()
}

#[test]
fn every_target_has_a_corpus() {
    let mut dirs: Vec<String> = fs::read_dir(corpus_dir())
        .expect("fuzz/corpus")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    dirs.sort();
    let mut targets: Vec<String> = fuzz::TARGETS.iter().map(|t| t.to_string()).collect();
    targets.sort();
    assert_eq!(dirs, targets);
}

#[test]
fn source_bytes_corpus() {
    run_corpus("source_bytes");
}

#[test]
fn mutated_programs_corpus() {
    run_corpus("mutated_programs");
}

#[test]
fn ir_text_corpus() {
    run_corpus("ir_text");
}

#[test]
fn pipeline_corpus() {
    run_corpus("pipeline");
}

/// The programs the mutation target starts from are there, and each one is checked unmutated
/// (two zero bytes choose program 0 with no edit; the loop covers the rest directly).
#[test]
fn every_seed_program_passes_the_source_checks() {
    let programs = fuzz::programs();
    assert!(programs.len() > 300, "{} programs", programs.len());
    for program in programs {
        fuzz::check_source(program);
    }
}

/// The mutator keeps a line's text when it splits it into tokens.
#[test]
fn tokens_concatenate_to_the_line() {
    for program in fuzz::programs() {
        for line in program.lines() {
            assert_eq!(fuzz::tokens(line).concat(), line);
        }
    }
}

/// Writes the seed corpora (`REXTIO_WRITE_FUZZ_SEEDS=1 cargo test -p rextio-driver --test
/// fuzz_corpus write_seeds -- --ignored`): Python sources for `source_bytes`, program choices
/// with a few edits for `mutated_programs`, and the IR text of the native functions' stages
/// for `ir_text` (parsed and optimized) and `pipeline` (parsed, the optimizer's input).
/// Existing files (crash reproducers among them) are kept.
#[test]
#[ignore]
fn write_seeds() {
    if std::env::var_os("REXTIO_WRITE_FUZZ_SEEDS").is_none() {
        return;
    }
    let root = corpus_dir();
    let write = |target: &str, name: &str, data: &[u8]| {
        let dir = root.join(target);
        fs::create_dir_all(&dir).expect("corpus dir");
        fs::write(dir.join(name), data).expect("seed written");
    };
    let programs = fuzz::programs();
    // Every fixture file, and every 12th conformance case.
    let chosen: Vec<usize> = (0..programs.len())
        .filter(|&i| i < 24 || i % 12 == 0)
        .collect();
    for &i in &chosen {
        write(
            "source_bytes",
            &format!("program-{i:03}.py"),
            programs[i].as_bytes(),
        );
        let (_, compiled) = compile_module(fuzz::FILE, &programs[i], Surface::Extended);
        for (k, c) in compiled.into_iter().flatten().take(4).enumerate() {
            let parsed = print_function(&c.parsed);
            let optimized = print_function(&c.optimized);
            write(
                "pipeline",
                &format!("program-{i:03}-{k}.ir"),
                parsed.as_bytes(),
            );
            if i % 2 == 0 {
                write(
                    "ir_text",
                    &format!("program-{i:03}-{k}-parsed.ir"),
                    parsed.as_bytes(),
                );
            } else {
                write(
                    "ir_text",
                    &format!("program-{i:03}-{k}-optimized.ir"),
                    optimized.as_bytes(),
                );
            }
        }
    }
    // Program i unedited, then with one to three edits of a deterministic choice.
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    for (n, &i) in chosen.iter().enumerate() {
        let mut data = (i as u16).to_le_bytes().to_vec();
        for _ in 0..(n % 4) * 4 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            data.push(state as u8);
        }
        write(
            "mutated_programs",
            &format!("program-{i:03}-{}", n % 4),
            &data,
        );
    }
}

/// Prints the program a `mutated_programs` input stands for (`REXTIO_FUZZ_SHOW=path cargo test
/// -p rextio-driver --test fuzz_corpus show_mutation -- --ignored --nocapture`), to turn a
/// crash into a Python reproducer.
#[test]
#[ignore]
fn show_mutation() {
    if let Some(path) = std::env::var_os("REXTIO_FUZZ_SHOW") {
        print!("{}", fuzz::mutate(&fs::read(path).expect("an input file")));
    }
}
