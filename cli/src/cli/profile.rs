//! `defergc profile`: the stress workload with heap-profile sampling on,
//! then its profile written in pprof's format (`go tool pprof -top FILE`
//! reads it), with a human summary and one JSON line. With `--cpu FILE`
//! the workload runs under a CPU profile too (written to FILE), and
//! `--flamegraph SVG` draws that profile as a flame graph (the inferno
//! crate: the flame graph's reference implementation in Rust, which
//! takes folded stacks and writes the SVG).

use super::report::Json;
use super::stress;
use defergc::gc::profile;
use defergc::go::pprof;

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
    /// Also take a CPU profile of the workload, written to this file.
    #[arg(long, value_name = "FILE")]
    cpu: Option<std::path::PathBuf>,
    /// Samples a second of CPU time of the CPU profile (Go's
    /// SetCPUProfileRate), 1 to 10000.
    #[arg(long, default_value_t = 100, value_parser = super::limits::count32(1, 10_000))]
    cpu_rate: u32,
    /// Draw the CPU profile as a flame graph into this SVG file (needs
    /// --cpu).
    #[arg(long, value_name = "SVG", requires = "cpu")]
    flamegraph: Option<std::path::PathBuf>,
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
    if let Some(cpu) = &args.cpu {
        let started = pprof::set_cpu_profile_rate(args.cpu_rate)
            .and_then(|_| pprof::start_cpu_profile_to(cpu));
        if let Err(e) = started {
            eprintln!("{e}");
            return 2;
        }
    }
    let previous = profile::set_mem_profile_rate(args.rate as i64);
    let status = stress::run(&args.stress);
    profile::set_mem_profile_rate(previous);
    if args.cpu.is_some() {
        if let Err(e) = pprof::stop_cpu_profile() {
            eprintln!("{e}");
            return 2;
        }
    }
    if status != 0 {
        return status;
    }
    if let (Some(cpu), Some(svg)) = (&args.cpu, &args.flamegraph) {
        if let Err(e) = flamegraph(cpu, svg) {
            eprintln!("defergc: profile: {e}");
            return 2;
        }
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
    if let Some(cpu) = &args.cpu {
        if !args.stress.json() {
            println!(
                "cpu profile: {} ({} Hz); read it with `go tool pprof -top {}`",
                cpu.display(),
                args.cpu_rate,
                cpu.display()
            );
        }
        if let Some(svg) = &args.flamegraph {
            if !args.stress.json() {
                println!("flame graph: {}", svg.display());
            }
        }
    }
    let json = Json::new()
        .str("bench", "profile")
        .str("out", &args.out.display().to_string())
        .num("rate", args.rate as f64)
        .num("bytes", bytes as f64);
    println!("{json}");
    0
}

/// The CPU profile at `cpu` as folded stacks (outermost first, `;`
/// between frames, then the sample count), drawn by inferno into `svg`.
fn flamegraph(cpu: &std::path::Path, svg: &std::path::Path) -> Result<(), String> {
    let bytes = std::fs::read(cpu).map_err(|e| format!("cannot read {}: {e}", cpu.display()))?;
    let samples = pprof::decode_cpu_profile(&bytes)
        .ok_or_else(|| format!("{} is not a CPU profile", cpu.display()))?;
    let lines: Vec<String> = samples
        .iter()
        .filter(|(names, values, _)| !names.is_empty() && values[0] > 0)
        .map(|(names, values, _)| {
            let frames: Vec<String> = names.iter().rev().map(|n| n.replace(';', ":")).collect();
            format!("{} {}", frames.join(";"), values[0])
        })
        .collect();
    let out =
        std::fs::File::create(svg).map_err(|e| format!("cannot write {}: {e}", svg.display()))?;
    let mut options = inferno::flamegraph::Options::default();
    options.title = "defergc profile --cpu".into();
    options.count_name = "samples".into();
    inferno::flamegraph::from_lines(
        &mut options,
        lines.iter().map(String::as_str),
        std::io::BufWriter::new(out),
    )
    .map_err(|e| format!("cannot draw {}: {e}", svg.display()))
}
