//! Records the target triple: an ahead-of-time build is loaded into the process that runs
//! this code, so its key names the target this code was built for (`src/aot.rs`).
fn main() {
    let target = std::env::var("TARGET").expect("cargo sets TARGET for build scripts");
    println!("cargo:rustc-env=REXTIO_TARGET={target}");
}
