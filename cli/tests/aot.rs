//! `rextio-torch build` and its cache, with stand-ins for cargo and Python (shell scripts), so
//! that the cache's rules are tested in seconds: the key, the layout, reuse without a build,
//! two processes building one key at once, progress while cargo runs, and the errors when
//! cargo is missing or fails. tests/python/test_aot.py builds with the real cargo.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const MODEL: &str = "\
import torch.nn.functional as F
from rextio_torch.types import TensorF32Cpu1D, TensorF32Cpu2D


def score(x: TensorF32Cpu2D, w: TensorF32Cpu2D, b: TensorF32Cpu1D) -> TensorF32Cpu1D:
    return F.linear(x, w, b).relu().mean(dim=1, keepdim=False)


def squash(x: TensorF32Cpu2D) -> TensorF32Cpu2D:
    return x.sigmoid()
";

const EXT: &str = ".fake-abi.so";

/// A stand-in for cargo: logs each run (and the target dir it was given), prints a
/// `Compiling` line on stderr, waits `FAKE_CARGO_SLEEP` seconds, writes a library where cargo
/// would and reports it as cargo's JSON does; exits `FAKE_CARGO_EXIT` after printing
/// `FAKE_CARGO_ERROR` lines.
const FAKE_CARGO: &str = r#"#!/bin/sh
name=$(sed -n 's/^name = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
lock="none"
if [ -f Cargo.lock ]; then lock=$(cat Cargo.lock); fi
echo "run $$ target=$CARGO_TARGET_DIR python=$(command -v python) lock=$lock" >> "$FAKE_CARGO_LOG"
echo "locked-by-$name" > Cargo.lock
echo "   Compiling $name v0.1.0 ($(pwd))" >&2
sleep "${FAKE_CARGO_SLEEP:-0}"
if [ -n "$FAKE_CARGO_ERROR" ]; then
    i=0
    while [ $i -lt 40 ]; do echo "error line $i" >&2; i=$((i+1)); done
    echo "$FAKE_CARGO_ERROR" >&2
    exit "${FAKE_CARGO_EXIT:-101}"
fi
mkdir -p "$CARGO_TARGET_DIR/release"
lib="$CARGO_TARGET_DIR/release/lib$name.so"
printf 'library of %s' "$name" > "$lib"
echo "{\"reason\":\"compiler-artifact\",\"target\":{\"kind\":[\"cdylib\",\"rlib\"],\"name\":\"$name\"},\"filenames\":[\"$lib\",\"$CARGO_TARGET_DIR/release/lib$name.rlib\"]}"
echo "    Finished release" >&2
"#;

/// A stand-in for the Python `build` probes: the environment it reports.
const FAKE_PYTHON: &str = r#"#!/bin/sh
echo '{"executable": "/fake/venv/bin/python", "torch_version": "2.13.0", "torch_lib_dir": "/fake/venv/torch/lib", "ext_suffix": ".fake-abi.so"}'
"#;

struct Scratch {
    dir: PathBuf,
}

impl Scratch {
    fn new(name: &str) -> Scratch {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join("aot-tests")
            .join(name);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("scratch folder");
        for (file, text) in [("cargo", FAKE_CARGO), ("python", FAKE_PYTHON)] {
            let path = dir.join(file);
            std::fs::write(&path, text).expect("write script");
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                    .expect("chmod");
            }
        }
        std::fs::write(dir.join("model.py"), MODEL).expect("write model");
        Scratch { dir }
    }

    fn cache(&self) -> PathBuf {
        self.dir.join("cache")
    }

    fn log(&self) -> Vec<String> {
        std::fs::read_to_string(self.dir.join("cargo.log"))
            .unwrap_or_default()
            .lines()
            .map(str::to_string)
            .collect()
    }

    fn command(&self, extra: &[&str], env: &[(&str, &str)]) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_rextio-torch"));
        command
            .arg("build")
            .arg(self.dir.join("model.py"))
            .arg("--cache-dir")
            .arg(self.cache());
        if !extra.contains(&"--python") {
            command.arg("--python").arg(self.dir.join("python"));
        }
        command
            .args(extra)
            .env("REXTIO_TORCH_CARGO", self.dir.join("cargo"))
            .env("FAKE_CARGO_LOG", self.dir.join("cargo.log"))
            .env_remove("REXTIO_TORCH_TARGET_DIR")
            .env_remove("REXTIO_TORCH_PROGRESS_SECONDS");
        for (k, v) in env {
            command.env(k, v);
        }
        command
    }

    fn build(&self, extra: &[&str], env: &[(&str, &str)]) -> Outcome {
        outcome(self.command(extra, env).output().expect("runs"))
    }

    fn spawn(&self, env: &[(&str, &str)]) -> Child {
        self.command(&[], env)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("runs")
    }
}

struct Outcome {
    code: i32,
    stdout: String,
    stderr: String,
}

fn outcome(out: Output) -> Outcome {
    Outcome {
        code: out.status.code().expect("exited"),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn entries(cache: &Path) -> Vec<PathBuf> {
    let mut found: Vec<PathBuf> = std::fs::read_dir(cache.join("entries"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    found.sort();
    found
}

fn leftovers(cache: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(cache.join("tmp"))
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

#[test]
fn a_build_fills_one_entry_and_a_second_run_reuses_it_without_cargo() {
    let s = Scratch::new("reuse");
    let first = s.build(&[], &[]);
    assert_eq!(first.code, 0, "{}", first.stderr);
    let cache = s.cache();
    let [entry] = entries(&cache).try_into().expect("one entry");
    let key = entry.file_name().unwrap().to_string_lossy().into_owned();
    assert_eq!(key.len(), 64);
    assert!(key.chars().all(|c| c.is_ascii_hexdigit()));
    assert_eq!(
        first.stdout,
        format!("built model (2 function(s)) in {}\n", entry.display())
    );
    // Progress: a start line naming the cache, then cargo's own lines, then the end.
    assert!(
        first.stderr.starts_with(&format!(
            "rextio-torch: building score, squash ahead of time (cache {}, entry {key})\n",
            cache.display()
        )),
        "{}",
        first.stderr
    );
    assert!(
        first.stderr.contains("   Compiling model v0.1.0"),
        "{}",
        first.stderr
    );
    assert!(
        first.stderr.contains("rextio-torch: built model in "),
        "{}",
        first.stderr
    );
    // The documented layout.
    let library = entry.join("model").join(format!("_native{EXT}"));
    assert_eq!(
        std::fs::read_to_string(&library).expect("the library"),
        "library of model"
    );
    let init = std::fs::read_to_string(entry.join("model/__init__.py")).expect("package");
    assert!(
        init.contains("import torch as _torch")
            && init.contains("from ._native import score, squash")
    );
    let key_text = std::fs::read_to_string(entry.join("key.txt")).expect("key.txt");
    assert!(key_text.starts_with("rextio-torch ahead-of-time build key v1\n"));
    for line in [
        "torch: 2.13.0\n",
        "python-abi: .fake-abi.so\n",
        "functions: score,squash\n",
        "module: model\n",
        "profile: release\n",
    ] {
        assert!(key_text.contains(line), "{line}: {key_text}");
    }
    assert!(key_text.contains(&format!("target: {}", std::env::consts::ARCH)));
    assert!(entry.join("crate/Cargo.toml").is_file());
    assert!(std::fs::read_to_string(entry.join("build.log"))
        .expect("log")
        .contains("Compiling model"));
    assert!(cache.join("CACHEDIR.TAG").is_file());
    assert!(leftovers(&cache).is_empty(), "{:?}", leftovers(&cache));
    assert_eq!(s.log().len(), 1);
    // tch's build finds this interpreter as `python` (a shim ahead on PATH).
    let python = s.log()[0]
        .split(' ')
        .find_map(|w| w.strip_prefix("python="))
        .expect("logged")
        .to_string();
    assert!(
        python.starts_with(&format!("{}/tmp/{key}.", cache.display()))
            && python.ends_with("/bin/python"),
        "{python}"
    );

    let second = s.build(&[], &[]);
    assert_eq!(second.code, 0, "{}", second.stderr);
    assert_eq!(
        second.stdout,
        format!("reused model (2 function(s)) in {}\n", entry.display())
    );
    assert_eq!(second.stderr, "", "a reuse is silent");
    assert_eq!(s.log().len(), 1, "cargo did not run again");
    assert_eq!(entries(&cache).len(), 1);

    // An entry whose extension was deleted is built again in its place.
    std::fs::remove_file(&library).expect("delete");
    let third = s.build(&[], &[]);
    assert_eq!(third.code, 0, "{}", third.stderr);
    assert!(third.stdout.starts_with("built model"), "{}", third.stdout);
    assert!(library.is_file());
    assert_eq!(s.log().len(), 2);
}

#[test]
fn what_the_key_covers_makes_a_new_entry_and_every_entry_shares_one_target_dir() {
    let s = Scratch::new("keys");
    assert_eq!(s.build(&[], &[]).code, 0);
    // Another selection, another module name, another source: three more entries.
    assert_eq!(s.build(&["--function", "score"], &[]).code, 0);
    assert_eq!(s.build(&["--module", "other"], &[]).code, 0);
    std::fs::write(s.dir.join("model.py"), format!("{MODEL}\n# edited\n")).expect("edit");
    assert_eq!(s.build(&[], &[]).code, 0);
    assert_eq!(entries(&s.cache()).len(), 4);
    let log = s.log();
    assert_eq!(log.len(), 4);
    let targets: Vec<&str> = log
        .iter()
        .map(|l| {
            l.split(' ')
                .find(|w| w.starts_with("target="))
                .expect("logged")
        })
        .collect();
    assert!(targets.iter().all(|t| *t == targets[0]), "{targets:?}");
    // The first build's lock file is where every later build in that target dir starts.
    assert!(log[0].ends_with(" lock=none"), "{}", log[0]);
    for line in &log[1..] {
        assert!(line.ends_with(" lock=locked-by-model"), "{line}");
    }
    assert!(
        targets[0].starts_with(&format!("target={}/target/", s.cache().display())),
        "{}",
        targets[0]
    );
    // REXTIO_TORCH_TARGET_DIR names it instead.
    let named = s.dir.join("named-target");
    std::fs::write(s.dir.join("model.py"), format!("{MODEL}\n# again\n")).expect("edit");
    let out = s.build(&[], &[("REXTIO_TORCH_TARGET_DIR", named.to_str().unwrap())]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        s.log()[4].contains(&format!("target={}", named.display())),
        "{:?}",
        s.log()
    );
}

#[test]
fn two_processes_building_one_key_build_it_once() {
    let s = Scratch::new("concurrent");
    let slow = [("FAKE_CARGO_SLEEP", "2")];
    let first = s.spawn(&slow);
    // Start the second once the first runs cargo, so it must wait for the key's lock.
    let started = Instant::now();
    while s.log().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "the first build never started"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    let second = s.spawn(&slow);
    let first = outcome(first.wait_with_output().expect("first"));
    let second = outcome(second.wait_with_output().expect("second"));
    assert_eq!(
        (first.code, second.code),
        (0, 0),
        "{}\n{}",
        first.stderr,
        second.stderr
    );
    assert_eq!(s.log().len(), 1, "one build: {:?}", s.log());
    assert!(first.stdout.starts_with("built model"), "{}", first.stdout);
    assert!(
        second.stdout.starts_with("reused model"),
        "{}",
        second.stdout
    );
    assert!(
        second
            .stderr
            .contains("rextio-torch: waiting for another process that builds the same entry"),
        "{}",
        second.stderr
    );
    let [entry] = entries(&s.cache()).try_into().expect("one entry");
    assert_eq!(
        std::fs::read_to_string(entry.join("model").join(format!("_native{EXT}")))
            .expect("library"),
        "library of model"
    );
    assert!(leftovers(&s.cache()).is_empty());
}

#[test]
fn a_failing_cargo_is_one_error_with_the_tail_of_its_output() {
    let s = Scratch::new("fails");
    let out = s.build(&[], &[("FAKE_CARGO_ERROR", "error: the last straw")]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(out.stdout, "");
    let failed = s.cache().join("failed");
    let [log] = std::fs::read_dir(&failed)
        .expect("failed logs")
        .flatten()
        .map(|e| e.path())
        .collect::<Vec<_>>()
        .try_into()
        .expect("one log");
    let message = out
        .stderr
        .lines()
        .position(|l| l.starts_with("rextio-torch: cannot build"))
        .map(|i| out.stderr.lines().skip(i).collect::<Vec<_>>().join("\n"))
        .expect("the error");
    assert!(
        message.starts_with(&format!(
            "rextio-torch: cannot build {} ahead of time: cargo build failed (exit status: 101); \
             full output in {}; the last lines of its output:\n",
            s.dir.join("model.py").display(),
            log.display()
        )),
        "{message}"
    );
    assert!(
        message.ends_with("error line 39\nerror: the last straw"),
        "{message}"
    );
    assert!(
        !message.contains("error line 10\n"),
        "only the tail: {message}"
    );
    assert!(std::fs::read_to_string(&log)
        .expect("log")
        .contains("error line 0\n"));
    assert!(entries(&s.cache()).is_empty());
    assert!(leftovers(&s.cache()).is_empty());
}

#[test]
fn a_missing_cargo_says_so() {
    let s = Scratch::new("no-cargo");
    let out = s.build(&[], &[("REXTIO_TORCH_CARGO", "/nonexistent/cargo")]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "ahead of time: cargo is not available (`/nonexistent/cargo`: No such file or directory"
        ),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains("install Rust (https://rustup.rs)"));
    assert!(entries(&s.cache()).is_empty());
    assert!(leftovers(&s.cache()).is_empty());
}

#[test]
fn a_quiet_cargo_gets_still_building_lines() {
    let s = Scratch::new("quiet");
    let out = s.build(
        &[],
        &[
            ("FAKE_CARGO_SLEEP", "1.5"),
            ("REXTIO_TORCH_PROGRESS_SECONDS", "0.4"),
        ],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    let still = out
        .stderr
        .lines()
        .filter(|l| l.starts_with("rextio-torch: still building (") && l.ends_with(" s)"))
        .count();
    assert!(still >= 2, "{}", out.stderr);
    // Without the variable, a quick build prints none.
    std::fs::write(s.dir.join("model.py"), format!("{MODEL}\n# again\n")).expect("edit");
    let quick = s.build(&[], &[]);
    assert!(!quick.stderr.contains("still building"), "{}", quick.stderr);
}

#[test]
fn out_copies_the_package_where_python_imports_it() {
    let s = Scratch::new("out");
    let out_dir = s.dir.join("site");
    let out = s.build(&["-o", out_dir.to_str().unwrap(), "--module", "fast"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout.ends_with(&format!(
            "wrote package fast to {} (import it with {} on sys.path, after torch)\n",
            out_dir.join("fast").display(),
            out_dir.display()
        )),
        "{}",
        out.stdout
    );
    assert_eq!(
        std::fs::read_to_string(out_dir.join("fast").join(format!("_native{EXT}")))
            .expect("copied"),
        "library of fast"
    );
    assert!(out_dir.join("fast/__init__.py").is_file());
}

#[test]
fn a_python_without_torch_is_an_error() {
    let s = Scratch::new("no-torch");
    let out = s.build(&["--python", "/nonexistent/python"], &[]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("no Python environment with torch to build for"),
        "{}",
        out.stderr
    );
    assert!(s.log().is_empty());
}
