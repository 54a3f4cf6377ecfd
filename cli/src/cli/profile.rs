//! `defergc profile`: the stress workload with heap-profile sampling on,
//! then its profile written in pprof's format (`go tool pprof -top FILE`
//! reads it), with a human summary and one JSON line.

use super::report::Json;
use super::stress;
use defergc::gc::profile;

#[derive(clap::Args)]
#[group(id = "profile")]
pub struct Args {
    /// Instead of the heap profile of the stress workload: the goroutine
    /// profile of 100,000 parked goroutines into FILE, and what a dump of
    /// them costs.
    #[arg(long, value_name = "FILE")]
    goroutine: Option<std::path::PathBuf>,
    /// Where to write the profile.
    #[arg(long, default_value = "defergc.heap.pprof")]
    out: std::path::PathBuf,
    /// Bytes between samples on average (Go's MemProfileRate), 1 to 2^30.
    #[arg(long, default_value_t = profile::DEFAULT_RATE as u64, allow_negative_numbers = true,
          value_parser = super::limits::count(1, 1 << 30))]
    rate: u64,
    /// The block and mutex profiles and the execution trace (a goroutine
    /// workload instead of the stress one when any is asked for).
    #[command(flatten)]
    sched: super::schedprof::Args,
    /// The workload: `stress`'s options.
    #[command(flatten)]
    stress: stress::Args,
}

pub fn run(args: &Args) -> i32 {
    if let Some(path) = &args.goroutine {
        return super::goroutine_profile::run(path, args.stress.json());
    }
    if args.sched.any() {
        return super::schedprof::run(&args.sched, args.stress.json());
    }
    // Refuse a path that cannot be written before the workload runs, not
    // after: the file is created now and written at the end.
    if let Err(e) = std::fs::File::create(&args.out) {
        eprintln!("defergc: profile: cannot write {}: {e}", args.out.display());
        return 2;
    }
    let previous = profile::set_mem_profile_rate(args.rate as i64);
    let status = stress::run(&args.stress);
    profile::set_mem_profile_rate(previous);
    if status != 0 {
        return status;
    }
    if let Err(e) = profile::write_heap_profile_to(&args.out) {
        eprintln!("defergc: profile: cannot write {}: {e}", args.out.display());
        return 2;
    }
    let bytes = std::fs::metadata(&args.out).map_or(0, |m| m.len());
    if !args.stress.json() {
        println!(
            "heap profile: {} ({bytes} bytes, a sample per {} bytes); read it with `go tool pprof -top {}`",
            args.out.display(),
            args.rate,
            args.out.display()
        );
    }
    let json = Json::new()
        .str("bench", "profile")
        .str("out", &args.out.display().to_string())
        .num("rate", args.rate as f64)
        .num("bytes", bytes as f64);
    println!("{json}");
    0
}
