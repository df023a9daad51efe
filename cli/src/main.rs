//! The `rextio-torch` binary: the commands of the `rextio_cli` library on this process's
//! arguments and streams (`python -m rextio_torch` runs the same library in Python).

use std::process::ExitCode;

use clap::Parser;
use rextio_cli::doctor::ProcessHost;
use rextio_cli::{execute, Cli, Io};

fn main() -> ExitCode {
    // clap prints usage errors itself (in colour on a terminal) and exits with 2.
    let cli = Cli::parse();
    let (stdout, stderr) = (std::io::stdout(), std::io::stderr());
    let mut io = Io {
        out: &mut stdout.lock(),
        err: &mut stderr.lock(),
    };
    ExitCode::from(execute(cli, &ProcessHost, &mut io))
}
