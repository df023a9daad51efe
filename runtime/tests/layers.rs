//! The runtime's layering (the table in `runtime/src/lib.rs`'s doc): a module names
//! (`crate::...`) only modules of lower layers, so there is no import circle and a lower layer
//! never depends on a higher one. This reads the sources; comments are left out, so doc links
//! may point anywhere.

use std::collections::BTreeMap;
use std::path::Path;

/// Every module of `runtime/src` and its layer, lowest first (as in the crate doc).
const LAYERS: &[(&str, u32)] = &[
    ("error", 0),
    ("cpu", 0),
    ("par", 0),
    ("scalar_math", 0),
    ("buffer", 1),
    ("checks", 1),
    ("control", 1),
    ("ops", 1),
    ("scalar", 1),
    ("sum", 1),
    ("vmath", 2),
    ("transpose", 2),
    ("unary", 3),
    ("linear_epilogue", 4),
    ("linear_small_m", 4),
    ("linear_avx2", 5),
    ("linear_gemm", 5),
    ("linear_portable", 5),
    ("linear_avx512", 6),
    ("linear_cost", 7),
    ("kernels", 8),
    ("dense", 9),
    ("reg", 10),
    ("attention", 10),
    ("eval", 11),
    ("elementwise", 12),
    ("exec", 13),
    ("instr", 13),
    ("compile", 14),
    ("lazy", 14),
    ("executor", 15),
    ("boundary", 16),
];

/// No library source file is longer than this (split by job long before).
const MAX_LINES: usize = 1200;

fn sources() -> BTreeMap<String, String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    for entry in std::fs::read_dir(&dir).expect("runtime/src") {
        let path = entry.expect("entry").path();
        assert!(
            !path.is_dir(),
            "{}: the runtime is flat (backend/src/carried.rs inlines each `mod x;` of lib.rs as \
             the file x.rs)",
            path.display()
        );
        if path.extension().is_some_and(|e| e == "rs") {
            let name = path.file_stem().unwrap().to_string_lossy().into_owned();
            files.insert(name, std::fs::read_to_string(&path).expect("readable"));
        }
    }
    files
}

/// The code of `text` without comments (from `//` outside a string literal to the end of the
/// line) and without the contents of string literals (which may span lines).
fn code(text: &str) -> String {
    let mut out = String::new();
    let mut in_string = false;
    let mut escaped = false;
    for line in text.lines() {
        let mut chars = line.chars().peekable();
        while let Some(c) = chars.next() {
            if in_string {
                if escaped {
                    escaped = false;
                } else if c == '\\' {
                    escaped = true;
                } else if c == '"' {
                    in_string = false;
                    out.push(c);
                    continue;
                }
                out.push(' ');
            } else if c == '"' {
                in_string = true;
                out.push(c);
            } else if c == '/' && chars.peek() == Some(&'/') {
                break;
            } else {
                out.push(c);
            }
        }
        out.push('\n');
    }
    out
}

fn identifier(text: &str) -> String {
    text.trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The modules named by `crate::` paths in `code`: `a` of `crate::a::b`, and `a`, `b` of
/// `crate::{a::x, b}`.
fn crate_modules(code: &str) -> Vec<String> {
    let mut names = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        if code[..at].ends_with('$') {
            continue;
        }
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0;
            let mut item_start = 0;
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        names.push(identifier(&group[item_start..i]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        names.push(identifier(&group[item_start..i]));
                        item_start = i + 1;
                    }
                    _ => {}
                }
            }
        } else {
            names.push(identifier(rest));
        }
    }
    names.retain(|n| !n.is_empty());
    names
}

#[test]
fn modules_use_only_lower_layers() {
    let layer: BTreeMap<&str, u32> = LAYERS.iter().copied().collect();
    let files = sources();
    for name in files.keys().filter(|n| *n != "lib") {
        assert!(
            layer.contains_key(name.as_str()),
            "runtime/src/{name}.rs has no layer: add it to LAYERS here and to lib.rs's table"
        );
    }
    for (name, _) in LAYERS {
        assert!(
            files.contains_key(*name),
            "LAYERS names {name}, which is gone"
        );
    }
    let mut violations = Vec::new();
    for (name, text) in &files {
        if name == "lib" {
            continue;
        }
        let own = layer[name.as_str()];
        for used in crate_modules(&code(text)) {
            // Crate-root re-exports (`crate::Value`, `crate::Result`) count as their modules.
            let module = match used.as_str() {
                "Result" | "RuntimeError" => "error",
                "Value" | "Arg" | "Program" => "executor",
                other => other,
            };
            let Some(&theirs) = layer.get(module) else {
                violations.push(format!("{name}.rs names crate::{used}, which is no module"));
                continue;
            };
            if module != name && theirs >= own {
                violations.push(format!(
                    "{name}.rs (layer {own}) uses crate::{module} (layer {theirs})"
                ));
            }
        }
    }
    violations.sort();
    violations.dedup();
    assert!(violations.is_empty(), "{}", violations.join("\n"));
}

#[test]
fn lib_rs_declares_every_module_and_its_table_lists_them() {
    let files = sources();
    let lib = &files["lib"];
    for (name, _) in LAYERS {
        assert!(
            lib.contains(&format!("pub mod {name};\n")) || lib.contains(&format!("mod {name};\n")),
            "lib.rs declares {name}"
        );
        let doc: String = lib.lines().filter(|l| l.starts_with("//!")).collect();
        assert!(
            doc.contains(&format!("`{name}`")) || doc.contains(&format!("[`{name}`]")),
            "lib.rs's layer table names {name}"
        );
    }
}

#[test]
fn no_library_file_is_too_long() {
    for (name, text) in sources() {
        let lines = text.lines().count();
        assert!(
            lines <= MAX_LINES,
            "runtime/src/{name}.rs has {lines} lines: split it by job"
        );
    }
}

#[test]
fn the_parser_finds_grouped_and_plain_paths() {
    let text = "use crate::a::X;\nuse crate::{b::{Y, Z}, c};\nlet s = \"crate::d\"; // crate::e\n\
                $crate::f!();";
    assert_eq!(crate_modules(&code(text)), ["a", "b", "c"]);
}

/// The code map's table (`docs/architecture.md`, "runtime": `| layer | modules | owns |`)
/// lists every module at its layer here, and nothing else.
#[test]
fn the_code_maps_layer_table_is_this_table() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/architecture.md");
    let doc = std::fs::read_to_string(&path).expect("docs/architecture.md");
    let start = doc
        .find("| Layer | Module | Owns |")
        .expect("docs/architecture.md has the runtime's layer table");
    let mut listed: BTreeMap<String, u32> = BTreeMap::new();
    for row in doc[start..]
        .lines()
        .skip(2)
        .take_while(|l| l.starts_with('|'))
    {
        let cells: Vec<&str> = row.split('|').map(str::trim).collect();
        let layer: u32 = cells[1]
            .parse()
            .unwrap_or_else(|_| panic!("a layer number: {row}"));
        for module in cells[2].split(',') {
            let name = module.trim().trim_matches('`').to_string();
            assert!(
                listed.insert(name.clone(), layer).is_none(),
                "{name} twice in the table"
            );
        }
    }
    let expected: BTreeMap<String, u32> = LAYERS.iter().map(|&(n, l)| (n.to_string(), l)).collect();
    assert_eq!(
        listed, expected,
        "docs/architecture.md's runtime layer table differs from LAYERS (runtime/tests/layers.rs)"
    );
}
