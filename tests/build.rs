//! Bakes an rpath to libtorch into every binary of this crate (tests, examples), since
//! `[env]` settings do not reach test processes.
fn main() {
    if let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
    }
}
