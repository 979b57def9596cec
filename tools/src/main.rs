//! `tilec`: the command line of the tilec compiler, and the only crate of
//! the workspace that prints.
//!
//! Layout: [`cli`] declares the flags, [`commands`] holds one module per
//! subcommand, [`diagnostics`] renders problems rustc-style and [`json`]
//! defines the machine-readable outputs. `run` builds on [`rng`] (inputs),
//! [`tensors`] (poison, statistics), [`compare`] (tolerances), [`npy`]
//! (`--dump`) and [`reference`] (independent results for `--check`).
//! [`backends`] finds the built-in backend and the backend plugins.

#![allow(clippy::print_stdout, clippy::print_stderr)]

mod backends;
mod cli;
mod commands;
mod compare;
mod diagnostics;
mod json;
mod npy;
mod output;
mod reference;
mod rng;
mod tensors;

use clap::Parser as _;

use crate::cli::{Cli, Command};
use crate::commands::Context;
use crate::diagnostics::{Renderer, stderr_color};

fn main() -> std::process::ExitCode {
    install_panic_hook();
    // Usage errors exit with status 2 from here; `--help` with 0.
    let cli = Cli::parse();
    let cx = Context {
        renderer: Renderer::new(stderr_color(cli.color)),
    };
    let exit = match &cli.command {
        Command::Check(args) => commands::check::run(args, &cx),
        Command::Compile(args) => commands::compile::run(args, &cx),
        Command::Run(args) => commands::run::run(args, &cx),
        Command::Bench(args) => commands::bench::bench(args, &cx),
        Command::Plugins(args) => commands::plugins::run(args, &cx),
        Command::Conformance(args) => commands::conformance::run(args, &cx),
        Command::ConformanceWorker => commands::conformance::worker(),
        Command::Inspect(args) => commands::inspect::run(args, &cx),
        Command::Verify(args) => commands::verify::run(args, &cx),
    };
    std::process::ExitCode::from(exit as u8)
}

/// A panic is a bug in tilec: after Rust's own message (and backtrace, when
/// asked for), say so plainly, the way rustc reports an internal compiler
/// error. The process then exits with status 101.
fn install_panic_hook() {
    let default_hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        default_hook(info);
        eprintln!(
            "\nerror: internal compiler error: tilec crashed\n  \
             = note: this is a bug in tilec; please report it with the input file and the command line"
        );
    }));
}
