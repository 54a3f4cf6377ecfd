//! `defergc info`: what was built and how.

use super::report::Json;
use defergc::gc;

#[derive(clap::Args, Default)]
pub struct Args {
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
}

pub fn run(args: &Args) -> i32 {
    let stats = gc::stats();
    if args.json {
        let defines: Vec<&str> = gc::build::DEFINES.iter().map(|(d, _)| *d).collect();
        let json = Json::new()
            .str("backend", gc::BACKEND)
            .str("source", gc::build::SOURCE)
            .str("built_version", gc::build::VERSION)
            .str("runtime_version", &gc::version())
            .strs("defines", &defines)
            .num("markers", stats.markers as f64)
            .bool("precise", cfg!(feature = "precise"));
        println!("{json}");
        return 0;
    }
    println!("defergc {}", env!("CARGO_PKG_VERSION"));
    println!("backend:        {}", gc::BACKEND);
    if gc::build::SOURCE == "none" {
        println!("collector:      none (nogc: malloc/free, nothing is collected)");
    } else {
        println!(
            "collector:      bdwgc {} ({} build; running {})",
            gc::build::VERSION,
            gc::build::SOURCE,
            gc::version()
        );
        println!("marker threads: {}", stats.markers);
        println!("defines:");
        for (name, why) in gc::build::DEFINES {
            println!("  -D{name:<24} {why}");
        }
    }
    println!(
        "precise:        {}",
        if cfg!(feature = "precise") {
            "built"
        } else {
            "not built (feature `precise`)"
        }
    );
    0
}
