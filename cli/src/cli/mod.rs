//! Command-line parsing and dispatch.

mod bench;
mod gcbench;
mod info;
mod limits;
mod profile;
mod report;
mod stats;
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
    /// The stress workload with heap-profile sampling, then the profile in
    /// pprof's format.
    Profile(profile::Args),
}

/// Parses the command line, runs the command and returns the exit code.
/// A command line that does not parse gets clap's explanation under a
/// `defergc:` prefix, and status 2.
pub fn run() -> i32 {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if !e.use_stderr() => {
            // --help, --version: what was asked for, status 0.
            let _ = e.print();
            return 0;
        }
        Err(e) => {
            let text = e.render().to_string();
            eprint!("defergc: {}", text.strip_prefix("error: ").unwrap_or(&text));
            return 2;
        }
    };
    match cli.command {
        Some(Command::Stress(args)) => stress::run(&args),
        Some(Command::Info(args)) => info::run(&args),
        Some(Command::Gcbench(args)) => gcbench::run(&args),
        Some(Command::Bench(args)) => bench::run(&args),
        Some(Command::Profile(args)) => profile::run(&args),
        None => stress::run(&cli.stress),
    }
}
