//! The extension finds libtorch next to it in site-packages (`rextio_torch/../torch/lib`),
//! so importing it works even before `import torch` has loaded libtorch. The directory tch
//! was built against is kept for `rextio_torch.doctor()`.
//!
//! `src/args.cpp`, the boundary's one-call reader of tensor arguments, is compiled against
//! the headers of the same torch (found beside `DEP_TCH_LIBTORCH_LIB`, which torch-sys
//! exports) and the interpreter's `Python.h`, with torch's C++ ABI setting.
use std::path::{Path, PathBuf};
use std::process::Command;

fn main() {
    println!("cargo:rustc-link-arg=-Wl,-rpath,$ORIGIN/../torch/lib");
    println!("cargo:rerun-if-changed=src/args.cpp");
    let lib = std::env::var("DEP_TCH_LIBTORCH_LIB")
        .expect("torch-sys exports DEP_TCH_LIBTORCH_LIB (the libtorch it links)");
    println!("cargo:rustc-env=REXTIO_BUILT_LIBTORCH_LIB={lib}");
    let torch = Path::new(&lib)
        .parent()
        .expect("the libtorch lib directory has a parent")
        .to_path_buf();
    let python = pyo3_build_config::get()
        .executable()
        .unwrap_or("python3")
        .to_string();
    let facts = python_facts(&python);
    cc::Build::new()
        .cpp(true)
        .pic(true)
        .warnings(false)
        .std("c++17")
        .opt_level(2)
        .include(torch.join("include"))
        .include(torch.join("include/torch/csrc/api/include"))
        .include(&facts.python_include)
        .define("_GLIBCXX_USE_CXX11_ABI", facts.cxx11_abi.as_str())
        .define("GLOG_USE_GLOG_EXPORT", None)
        .file("src/args.cpp")
        .compile("rextio_args");
}

struct PythonFacts {
    python_include: PathBuf,
    cxx11_abi: String,
}

/// `Python.h`'s directory and torch's `_GLIBCXX_USE_CXX11_ABI`, from the interpreter the
/// module is built for (the one with the torch tch links).
fn python_facts(python: &str) -> PythonFacts {
    let script = "import sysconfig, torch\n\
                  print(sysconfig.get_path('include'))\n\
                  print(int(torch._C._GLIBCXX_USE_CXX11_ABI))";
    let out = Command::new(python)
        .args(["-c", script])
        .output()
        .unwrap_or_else(|e| panic!("could not run {python} to find Python.h and torch: {e}"));
    assert!(
        out.status.success(),
        "{python} could not report Python.h's directory and torch's C++ ABI: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let (Some(include), Some(abi)) = (lines.next(), lines.next()) else {
        panic!("{python} printed no include directory and ABI: {text}");
    };
    PythonFacts {
        python_include: PathBuf::from(include.trim()),
        cxx11_abi: abi.trim().to_string(),
    }
}
