//! rextio-torch and the host's toolchain: what runs cargo and Python rather than compiles.
//!
//! - [`aot`]: ahead-of-time builds (`rextio-torch build`, `compile(fn, mode="aot")`): the
//!   backend's crate for already optimized functions, built with the host's cargo into a
//!   cache keyed by sha256, under a `flock` per key (`docs/aot.md`).
//! - [`doctor`]: what the project needs and what the host has (`rextio-torch doctor`,
//!   `rextio_torch.doctor()`), from facts a [`doctor::Host`] gathers.
//!
//! The driver re-exports both (`rextio_driver::aot`, `rextio_driver::doctor`); the front
//! doors (the `rextio-torch` binary, the Python extension) reach them only through it. This
//! crate sits below the driver and beside the frontend and passes: it takes IR that is
//! already optimized and needs only the IR and the backend, so it depends on exactly those
//! (`tests/tests/layering.rs` holds every crate to its allowed edges).
//!
//! One edge leaves the Rust crates, as text: [`doctor::PROBE`] (`src/probe.py`) is a Python
//! script that a child interpreter (or the extension's own) runs to report facts, one of which
//! is whether the `rextio_torch` package and its extension import there. It imports the
//! package by name at run time, in the interpreter it probes, to observe it; no Rust code
//! depends on the package, and nothing here is built from it.

pub mod aot;
pub mod doctor;

use std::path::Path;

use rextio_backend::EmittedFile;

/// Writes emitted files under `root`, creating folders as needed.
pub fn write_files(root: &Path, files: &[EmittedFile]) -> Result<(), String> {
    for f in files {
        let path = root.join(&f.path);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        std::fs::write(&path, &f.contents)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}
