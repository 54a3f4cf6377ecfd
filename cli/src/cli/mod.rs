//! Command-line parsing and dispatch.

mod bench;
mod gcbench;
mod info;
mod report;
mod stress;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "defergc",
    version,
    about = "defergc stress and benchmark drivers",
    args_conflicts_with_subcommands = true
)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    /// Without a command: `stress` with these options.
    #[command(flatten)]
    stress: stress::Args,
}

#[derive(Subcommand)]
enum Command {
    /// Defer a million calls capturing GC objects, verify every one (the
    /// default command).
    Stress(stress::Args),
    /// Print the backend, the collector version and its build configuration.
    Info(info::Args),
    /// Run GCBench (Ellis, Kovac, Boehm) on a collector backend and time it.
    Gcbench(gcbench::Args),
    /// Goroutine, channel and panic benchmarks, each beside the Go program
    /// of the same name (--go).
    Bench(bench::Args),
}

/// Parses the command line, runs the command and returns the exit code.
pub fn run() -> i32 {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Stress(args)) => stress::run(&args),
        Some(Command::Info(args)) => info::run(&args),
        Some(Command::Gcbench(args)) => gcbench::run(&args),
        Some(Command::Bench(args)) => bench::run(&args),
        None => stress::run(&cli.stress),
    }
}
