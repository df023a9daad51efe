//! The extension finds libtorch next to it in site-packages (`rextio_torch/../torch/lib`),
//! so importing it works even before `import torch` has loaded libtorch.
fn main() {
    println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN/../torch/lib");
}
