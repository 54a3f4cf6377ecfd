//! A goroutine that starts goroutines in a loop does not outrun the
//! workers that run them: each waiting goroutine holds a stack slot and a
//! header page, cold by the time it runs. With one processor the loop
//! would otherwise start all of them before the first runs.

use defergc::go;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const CHILD: &str = "DEFERGC_GO_SPAWN_CHILD";
const N: usize = 100_000;

#[test]
fn a_spawning_loop_lets_what_it_started_run() {
    if std::env::var_os(CHILD).is_some() {
        return in_child();
    }
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "a_spawning_loop_lets_what_it_started_run",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .env("GOMAXPROCS", "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let line = stdout
        .lines()
        .find_map(|l| l.strip_prefix("peak "))
        .unwrap_or_else(|| panic!("no peak line: {stdout}"));
    let peak: usize = line.trim().parse().unwrap();
    // Go's local run queue holds 256; ours lets a spawner that far ahead
    // yield. Without that, one processor starts all N first.
    assert!(
        peak <= 512,
        "{peak} goroutines waited at once for {N} started"
    );
}

fn in_child() {
    let ran = Arc::new(AtomicUsize::new(0));
    let r = ran.clone();
    let status = go::run(move || {
        assert_eq!(go::gomaxprocs(), 1);
        let mut peak = 0;
        for _ in 0..N {
            let r = r.clone();
            go::go(move || {
                r.fetch_add(1, Ordering::Relaxed);
            });
            peak = peak.max(go::stack_usage().0);
        }
        while r.load(Ordering::Relaxed) < N {
            go::gosched();
        }
        println!("peak {peak}");
    });
    assert_eq!(status, 0);
    assert_eq!(ran.load(Ordering::Relaxed), N);
}
