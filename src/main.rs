#![allow(clippy::result_large_err)] // the library error carries its location; cold path
//! The `toolgraph` command line (see `cli/`).

mod cli;

fn main() -> std::process::ExitCode {
    cli::main()
}
