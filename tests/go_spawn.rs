//! A goroutine that starts goroutines in a loop does not outrun the
//! workers that run them: each waiting goroutine holds a stack slot and a
//! header page, cold by the time it runs. With one processor the loop
//! would otherwise start all of them before the first runs. A tree of
//! goroutines that each start a few (skynet's shape) finishes the
//! subtrees it began before it starts new ones, and a seeded random tree
//! sums right under every processor count.

mod seeded;

use defergc::go::{self, Chan};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

const CHILD: &str = "DEFERGC_GO_SPAWN_CHILD";
const N: usize = 100_000;
/// The most goroutines of skynet's tree (below) alive at once on one
/// processor. Breadth first (every parent sent behind a full run queue
/// after each go statement) it had 54,087 of its 111,111 alive at once;
/// newest subtrees first, 16,018 (Go 1.19's scheduler: 9,667). The run
/// is deterministic on one processor.
const PEAK_BOUND: usize = 25_000;

/// Runs the test `name` of this file alone in a child process with
/// `GOMAXPROCS` = `procs` (and `env`); returns its standard output.
fn child(name: &str, procs: usize, env: &[(&str, String)]) -> String {
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args(["--exact", name, "--nocapture"])
        .env(CHILD, "1")
        .env("GOMAXPROCS", procs.to_string());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "child failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// The number after `key ` on a line of `out`.
fn field(out: &str, key: &str) -> usize {
    out.lines()
        .find_map(|l| l.strip_prefix(key)?.strip_prefix(' '))
        .unwrap_or_else(|| panic!("no {key} line: {out}"))
        .trim()
        .parse()
        .unwrap()
}

#[test]
fn a_spawning_loop_lets_what_it_started_run() {
    if std::env::var_os(CHILD).is_some() {
        return in_child();
    }
    let stdout = child("a_spawning_loop_lets_what_it_started_run", 1, &[]);
    let peak = field(&stdout, "peak");
    // Go's local run queue holds 256; ours lets a spawner that far ahead
    // yield. Without that, one processor starts all N first.
    assert!(
        peak <= 512,
        "{peak} goroutines waited at once for {N} started"
    );
}

fn in_child() {
    spawning_loop(0);
}

/// In a child on one processor: a loop starts `N` goroutines that each
/// yield `yields` times and end; prints the most alive at once (as the
/// loop saw after each go statement).
fn spawning_loop(yields: usize) {
    let ended = Arc::new(AtomicUsize::new(0));
    let e = ended.clone();
    let status = go::run(move || {
        assert_eq!(go::gomaxprocs(), 1);
        let mut peak = 0;
        for _ in 0..N {
            let e = e.clone();
            go::go(move || {
                for _ in 0..yields {
                    go::gosched();
                }
                e.fetch_add(1, Ordering::Relaxed);
            });
            peak = peak.max(go::stack_usage().0);
        }
        while e.load(Ordering::Relaxed) < N {
            go::gosched();
        }
        println!("peak {peak}");
    });
    assert_eq!(status, 0);
    assert_eq!(ended.load(Ordering::Relaxed), N);
}

/// Times each goroutine of [`loop_child`] yields before it ends.
const YIELDS: usize = 20;

/// A loop of go statements whose goroutines stay runnable for a while
/// (each yields [`YIELDS`] times): once the run queue is full of them,
/// the loop yields at each go statement instead of sending the queued
/// ones to the global queue and going on. Counted per time slice, the
/// loop's first go statements of each slice sent 128 queued goroutines
/// away each and it started 2,000 more a slice; `timers` (a loop of
/// sleepers, which its wakeups keep queued) took 1.5 times as long and
/// held 400 MB instead of 50.
#[test]
fn a_spawning_loop_yields_to_the_goroutines_it_queued_before() {
    if std::env::var_os(CHILD).is_some() {
        return loop_child();
    }
    let stdout = child(
        "a_spawning_loop_yields_to_the_goroutines_it_queued_before",
        1,
        &[],
    );
    let peak = field(&stdout, "peak");
    assert!(
        peak <= 1024,
        "{peak} goroutines alive at once for {N} started"
    );
}

fn loop_child() {
    spawning_loop(YIELDS);
}

/// Goroutines in skynet's tree below (10 children each, 10^5 leaves).
const TREE: usize = 111_111;

/// What the nodes of a tree count: goroutines started, the most alive at
/// once (as any node saw when it started).
#[derive(Default)]
struct Tally {
    started: AtomicUsize,
    peak: AtomicUsize,
}

/// Skynet's node: sends up the sum of the numbers of its subtree's leaves.
fn skynet(c: Chan<u64>, num: u64, size: u64, t: &Arc<Tally>) {
    t.started.fetch_add(1, Ordering::Relaxed);
    t.peak.fetch_max(go::num_goroutine(), Ordering::Relaxed);
    if size == 1 {
        c.send(num);
        return;
    }
    let rc = Chan::<u64>::new(0);
    for i in 0..10 {
        let (rc, t) = (rc.clone(), t.clone());
        go::go(move || skynet(rc, num + i * (size / 10), size / 10, &t));
    }
    let sum = (0..10).map(|_| rc.recv().expect("open")).sum();
    c.send(sum);
}

#[test]
fn a_tree_of_goroutines_finishes_what_it_began_first() {
    if std::env::var_os(CHILD).is_some() {
        return tree_child();
    }
    let stdout = child("a_tree_of_goroutines_finishes_what_it_began_first", 1, &[]);
    let (peak, started) = (field(&stdout, "peak"), field(&stdout, "started"));
    assert_eq!(started, TREE, "{stdout}");
    // A parent that went behind a full run queue after each of its go
    // statements unfolded the tree breadth first; finishing the newest
    // subtrees first keeps a small part of it alive at once.
    assert!(
        peak <= PEAK_BOUND,
        "{peak} of {TREE} goroutines alive at once"
    );
}

fn tree_child() {
    let t = Arc::new(Tally::default());
    let t2 = t.clone();
    let status = go::run(move || {
        const LEAVES: u64 = 100_000;
        let c = Chan::<u64>::new(0);
        let root = c.clone();
        go::go(move || skynet(root, 0, LEAVES, &t2));
        assert_eq!(c.recv(), Some(LEAVES * (LEAVES - 1) / 2));
    });
    assert_eq!(status, 0);
    println!("started {}", t.started.load(Ordering::Relaxed));
    println!("peak {}", t.peak.load(Ordering::Relaxed));
}

/// Children of a node of the random tree: the seed's choice for it.
fn fanout(seed: u64, id: u64, depth: u32) -> u64 {
    if depth == 0 {
        return 0;
    }
    seeded::Rng(mix(seed ^ id.wrapping_mul(0x9E37_79B9_7F4A_7C15)) | 1).below(13)
}

/// A value of its own for every node.
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The node's id `id`'s subtree sum and goroutine count, computed without
/// goroutines.
fn expected(seed: u64, id: u64, depth: u32) -> (u64, usize) {
    let kids = fanout(seed, id, depth);
    (0..kids).fold((mix(seed ^ id), 1), |(sum, n), k| {
        let (s, m) = expected(seed, id * 16 + k + 1, depth - 1);
        (sum.wrapping_add(s), n + m)
    })
}

/// A node of the random tree: starts its children, sends up its value
/// plus what they sent; a child chosen by the seed sends before its
/// parent waits, another after, a leaf at once.
fn random_node(c: Chan<u64>, seed: u64, id: u64, depth: u32, t: Arc<Tally>) {
    t.started.fetch_add(1, Ordering::Relaxed);
    let kids = fanout(seed, id, depth);
    let rc = Chan::<u64>::new((mix(id) % 3) as usize);
    for k in 0..kids {
        let (rc, t) = (rc.clone(), t.clone());
        go::go(move || random_node(rc, seed, id * 16 + k + 1, depth - 1, t));
        if mix(seed ^ id ^ k).is_multiple_of(4) {
            go::gosched();
        }
    }
    let sum = (0..kids).fold(mix(seed ^ id), |s, _| {
        s.wrapping_add(rc.recv().expect("open"))
    });
    c.send(sum);
}

#[test]
fn a_seeded_random_tree_sums_right() {
    const DEPTH: u32 = 6;
    if std::env::var_os(CHILD).is_some() {
        let seed: u64 = std::env::var("DEFERGC_TREE_SEED").unwrap().parse().unwrap();
        let t = Arc::new(Tally::default());
        let t2 = t.clone();
        let got = Arc::new(AtomicUsize::new(0));
        let g2 = got.clone();
        let status = go::run(move || {
            let c = Chan::<u64>::new(0);
            let root = c.clone();
            go::go(move || random_node(root, seed, 0, DEPTH, t2));
            g2.store(c.recv().expect("open") as usize, Ordering::Relaxed);
        });
        assert_eq!(status, 0);
        println!("sum {}", got.load(Ordering::Relaxed));
        println!("started {}", t.started.load(Ordering::Relaxed));
        return;
    }
    let seed = seeded::seed("DEFERGC_TREE_SEED");
    let (sum, count) = expected(seed, 0, DEPTH);
    eprintln!("seed={seed}: {count} goroutines (rerun with DEFERGC_TREE_SEED={seed})");
    for procs in [1, 2, 8] {
        let out = child(
            "a_seeded_random_tree_sums_right",
            procs,
            &[("DEFERGC_TREE_SEED", seed.to_string())],
        );
        let ctx = format!("seed={seed} GOMAXPROCS={procs}: {out}");
        assert_eq!(field(&out, "sum"), sum as usize, "{ctx}");
        assert_eq!(field(&out, "started"), count, "{ctx}");
    }
}

/// Polls `go::num_goroutine()` until it reads `want`, yielding between
/// reads (goroutines that returned are counted out as their workers
/// finish them); panics with what it read last after many reads (a count
/// that lost an update never gets there).
fn await_count(want: usize, ctx: &str) {
    let mut last = 0;
    for _ in 0..2_000_000 {
        last = go::num_goroutine();
        if last == want {
            return;
        }
        go::gosched();
    }
    panic!("{ctx}: num_goroutine stays at {last}, want {want}");
}

/// Goroutines started by goroutines, by goroutines inside system calls
/// and by plain threads, parked or ended on whatever processor, while
/// GOMAXPROCS moves between 1 and 6 (processors retired with counts of
/// their own): Go's NumGoroutine counts every live one exactly once the
/// ended ones are finished (each processor keeps its own count; see
/// `Sched::goroutine_count`).
#[test]
fn num_goroutine_counts_goroutines_wherever_they_start_and_end() {
    const ROUNDS: usize = 25;
    if std::env::var_os(CHILD).is_some() {
        let seed: u64 = std::env::var("DEFERGC_COUNT_SEED")
            .unwrap()
            .parse()
            .unwrap();
        let status = go::run(move || {
            let mut rng = seeded::Rng(seed);
            assert_eq!(go::num_goroutine(), 1, "seed={seed}: main alone");
            for round in 0..ROUNDS {
                go::set_gomaxprocs(1 + rng.below(6) as usize);
                let release = Chan::<()>::new(0);
                let started = Arc::new(go::WaitGroup::new());
                let ended = Arc::new(go::WaitGroup::new());
                let parked = 1 + rng.below(200) as usize;
                let short = rng.below(200) as usize;
                started.add(parked as i32).unwrap();
                ended.add((parked + short) as i32).unwrap();
                for k in 0..parked + short {
                    let (release, started, ended) =
                        (release.clone(), started.clone(), ended.clone());
                    let body = move || {
                        if k < parked {
                            started.done().unwrap();
                            let _ = release.recv();
                        }
                        ended.done().unwrap();
                    };
                    match rng.below(4) {
                        // From main.
                        0 => go::go(body),
                        // From a goroutine (on any processor).
                        1 => go::go(move || go::go(body)),
                        // From a goroutine inside a system call (no
                        // processor held).
                        2 => go::go(move || go::syscall(move || go::go(body))),
                        // From a plain thread.
                        _ => {
                            let t = std::thread::spawn(move || go::go(body));
                            go::syscall(move || t.join().unwrap());
                        }
                    }
                    if rng.below(16) == 0 {
                        go::set_gomaxprocs(1 + rng.below(6) as usize);
                    }
                }
                started.wait();
                let ctx = format!("seed={seed} round {round}");
                // Main, the parked ones; the short ones and the starters
                // all end.
                await_count(1 + parked, &ctx);
                release.close();
                ended.wait();
                await_count(1, &ctx);
            }
        });
        assert_eq!(status, 0);
        println!("counted {ROUNDS} rounds");
        return;
    }
    let seed = seeded::seed("DEFERGC_COUNT_SEED");
    eprintln!("seed={seed} (rerun with DEFERGC_COUNT_SEED={seed})");
    for procs in [1, 4] {
        let out = child(
            "num_goroutine_counts_goroutines_wherever_they_start_and_end",
            procs,
            &[("DEFERGC_COUNT_SEED", seed.to_string())],
        );
        assert!(
            out.contains(&format!("counted {ROUNDS} rounds")),
            "seed={seed}: {out}"
        );
    }
}
