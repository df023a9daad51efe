//! The `rextio-torch` binary: the driver's commands (`rextio_driver::command`) on this
//! process's arguments and streams (`python -m rextio_torch` runs the same library in Python).
//! A front door: it depends on the driver only (`docs/architecture.md`).

use std::process::ExitCode;

use clap::Parser;
use rextio_driver::command::{execute, Cli, Io};
use rextio_driver::doctor::ProcessHost;

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
