//! Command-line parsing and dispatch.

mod gcbench;
mod info;
mod report;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "defergc",
    version,
    about = "defergc stress and benchmark drivers"
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Print the backend, the collector version and its build configuration.
    Info(info::Args),
    /// Run GCBench (Ellis, Kovac, Boehm) on a collector backend and time it.
    Gcbench(gcbench::Args),
}

/// Parses the command line, runs the command and returns the exit code.
pub fn run() -> i32 {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Info(args)) => info::run(&args),
        Some(Command::Gcbench(args)) => gcbench::run(&args),
        None => info::run(&info::Args::default()),
    }
}
