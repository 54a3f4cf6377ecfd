//! Command-line parsing and dispatch.

mod bench;
mod gcbench;
mod goroutine_profile;
mod info;
mod limits;
mod netbench;
mod profile;
mod report;
mod schedprof;
mod stats;
mod stress;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "defergc",
    version,
    about = "defergc stress and benchmark drivers",
    args_conflicts_with_subcommands = true,
    disable_help_subcommand = true
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
    /// Print this message or the help of the given command.
    Help {
        /// The command whose help to print.
        command: Option<String>,
    },
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
    let _trace = schedprof::EnvTrace::from_env();
    match cli.command {
        Some(Command::Stress(args)) => stress::run(&args),
        Some(Command::Info(args)) => info::run(&args),
        Some(Command::Gcbench(args)) => gcbench::run(&args),
        Some(Command::Bench(args)) => bench::run(&args),
        Some(Command::Profile(args)) => profile::run(&args),
        Some(Command::Help { command }) => help(command.as_deref()),
        None => stress::run(&cli.stress),
    }
}

/// `defergc help [COMMAND]`: the help of the command, or of the program.
fn help(command: Option<&str>) -> i32 {
    use clap::CommandFactory;
    let mut cli = Cli::command();
    cli.build();
    let target = match command {
        None => &mut cli,
        Some(name) => match cli.find_subcommand_mut(name) {
            Some(sub) => sub,
            None => {
                eprintln!("defergc: help: no command {name:?} (see defergc --help)");
                return 2;
            }
        },
    };
    match target.print_long_help() {
        Ok(()) => 0,
        Err(_) => 2,
    }
}
