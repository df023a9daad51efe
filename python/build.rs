//! The extension finds libtorch next to it in site-packages (`rextio_torch/../torch/lib`),
//! so importing it works even before `import torch` has loaded libtorch. The directory tch
//! was built against is kept for `rextio_torch.doctor()`.
fn main() {
    println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN/../torch/lib");
    if let Ok(dir) = std::env::var("DEP_TCH_LIBTORCH_LIB") {
        println!("cargo:rustc-env=REXTIO_BUILT_LIBTORCH_LIB={dir}");
    }
}
