//! Import resolution: which local names stand for which dotted module paths, and what a type
//! annotation denotes.
//!
//! Only module-level `import` / `from ... import` statements bind names (relative and star
//! imports bind nothing). Call targets resolve through this map to dotted names
//! (`F.linear` -> `torch.nn.functional.linear`), and annotations resolve to the marker types
//! of `rextio_torch.types` or to the core scalar names.

use std::collections::HashMap;

use rextio_ir::{Marker, MARKERS};
use ruff_python_ast::{Expr, ModModule, Stmt};

/// The module that defines the annotation markers.
pub const MARKER_MODULE: &str = "rextio_torch.types";

/// Core scalar type names an annotation can spell directly.
const CORE_TYPES: [&str; 6] = ["int", "float", "bool", "str", "bytes", "None"];

/// Local name -> dotted path, from the module's top-level imports.
#[derive(Clone, Debug, Default)]
pub struct ImportMap {
    bindings: HashMap<String, String>,
    /// Whether annotations resolve to the extended surface's markers too (rank 3): false
    /// under the reference surface, where `TensorF32Cpu3D` is not a known type and a function
    /// annotated with it stays on Python, as the reference has it.
    extension_markers: bool,
}

/// What an annotation denotes.
#[derive(Clone, Debug, PartialEq)]
pub enum AnnotatedType {
    Marker(&'static Marker),
    /// `int`, `float`, `bool`, `str`, `bytes`, `None`.
    Core(&'static str),
    /// Anything else, as written in the source (for messages).
    Other(String),
    Missing,
}

impl AnnotatedType {
    /// The operand type Core would give a value of this annotation: a plugin key, a core
    /// name, or `None` (unresolved).
    pub fn operand_type(&self) -> Option<String> {
        match self {
            AnnotatedType::Marker(marker) => Some(marker.key.to_string()),
            AnnotatedType::Core(name) => Some((*name).to_string()),
            AnnotatedType::Other(_) | AnnotatedType::Missing => None,
        }
    }

    /// How diagnostics spell the type.
    pub fn display(&self) -> String {
        match self {
            AnnotatedType::Marker(marker) => marker.name.to_string(),
            AnnotatedType::Core(name) => (*name).to_string(),
            AnnotatedType::Other(text) => text.clone(),
            AnnotatedType::Missing => "no annotation".to_string(),
        }
    }
}

impl ImportMap {
    pub fn from_module(module: &ModModule) -> ImportMap {
        let mut bindings = HashMap::new();
        for stmt in &module.body {
            match stmt {
                Stmt::Import(import) => {
                    for alias in &import.names {
                        let path = alias.name.as_str();
                        match &alias.asname {
                            // `import a.b as x` binds x to a.b.
                            Some(asname) => {
                                bindings.insert(asname.to_string(), path.to_string());
                            }
                            // `import a.b` binds a to a.
                            None => {
                                let head = path.split('.').next().unwrap_or(path);
                                bindings.insert(head.to_string(), head.to_string());
                            }
                        }
                    }
                }
                Stmt::ImportFrom(from) if from.level == 0 => {
                    let Some(module_name) = &from.module else {
                        continue;
                    };
                    for alias in &from.names {
                        if alias.name.as_str() == "*" {
                            continue;
                        }
                        let local = alias.asname.as_ref().unwrap_or(&alias.name);
                        bindings.insert(local.to_string(), format!("{module_name}.{}", alias.name));
                    }
                }
                _ => {}
            }
        }
        ImportMap {
            bindings,
            extension_markers: true,
        }
    }

    /// The map with annotations resolving to the reference's five markers only
    /// (`extension_markers` false), or to every marker.
    pub fn with_extension_markers(mut self, extension_markers: bool) -> ImportMap {
        self.extension_markers = extension_markers;
        self
    }

    /// Binds `name` to `path`, as `import path as name` would.
    pub fn bind(&mut self, name: &str, path: &str) {
        self.bindings.insert(name.to_string(), path.to_string());
    }

    /// The dotted path an imported name stands for.
    pub fn resolve_name(&self, name: &str) -> Option<&str> {
        self.bindings.get(name).map(String::as_str)
    }

    /// The dotted path of a `Name` / `Attribute` chain rooted at an imported name, unless
    /// `is_local` says the root is shadowed by a local variable.
    pub fn resolve_expr(&self, expr: &Expr, is_local: &dyn Fn(&str) -> bool) -> Option<String> {
        let parts = dotted_parts(expr)?;
        let (root, rest) = parts.split_first()?;
        if is_local(root) {
            return None;
        }
        let mut path = self.resolve_name(root)?.to_string();
        for part in rest {
            path.push('.');
            path.push_str(part);
        }
        Some(path)
    }

    /// What a (module-level) annotation denotes. String annotations are parsed and resolved
    /// the same way.
    pub fn resolve_annotation(&self, annotation: Option<&Expr>, source: &str) -> AnnotatedType {
        let Some(expr) = annotation else {
            return AnnotatedType::Missing;
        };
        if let Expr::StringLiteral(string) = expr {
            let text = string.value.to_str();
            return match ruff_python_parser::parse_expression(text) {
                Ok(parsed) => self.resolve_annotation_expr(&parsed.syntax().body, text),
                Err(_) => AnnotatedType::Other(text.to_string()),
            };
        }
        self.resolve_annotation_expr(expr, source)
    }

    fn resolve_annotation_expr(&self, expr: &Expr, source: &str) -> AnnotatedType {
        if let Expr::NoneLiteral(_) = expr {
            return AnnotatedType::Core("None");
        }
        let no_locals = |_: &str| false;
        if let Some(path) = self.resolve_expr(expr, &no_locals) {
            if let Some(marker) =
                marker_for_path(&path).filter(|marker| marker.reference || self.extension_markers)
            {
                return AnnotatedType::Marker(marker);
            }
        }
        if let Expr::Name(name) = expr {
            if let Some(core) = CORE_TYPES.iter().find(|core| **core == name.id.as_str()) {
                return AnnotatedType::Core(core);
            }
        }
        let range = ruff_text_size::Ranged::range(expr);
        let text = source
            .get(range.start().to_usize()..range.end().to_usize())
            .unwrap_or("?");
        AnnotatedType::Other(text.to_string())
    }
}

/// `rextio_torch.types.TensorF32Cpu2D` -> the marker.
fn marker_for_path(path: &str) -> Option<&'static Marker> {
    let name = path.strip_prefix(MARKER_MODULE)?.strip_prefix('.')?;
    MARKERS.iter().find(|marker| marker.name == name)
}

/// `a.b.c` as `["a", "b", "c"]`; `None` for anything but a pure name/attribute chain.
pub fn dotted_parts(expr: &Expr) -> Option<Vec<&str>> {
    // Recursive over the syntax tree: each level runs with stack to spare (rextio_ir::stack).
    rextio_ir::stack::deep(|| match expr {
        Expr::Name(name) => Some(vec![name.id.as_str()]),
        Expr::Attribute(attribute) => {
            let mut parts = dotted_parts(&attribute.value)?;
            parts.push(attribute.attr.as_str());
            Some(parts)
        }
        _ => None,
    })
}
