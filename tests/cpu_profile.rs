//! CPU profiles: the profiling signal samples the function that burns the
//! CPU, with its goroutine's labels; one profile at a time; a forked
//! child has none of its parent's; and the signal landing anywhere
//! (inside malloc, the collector, the scheduler) breaks nothing.

mod cprog;
mod gotool;
mod seeded;
mod skip;

use defergc::go::pprof::{self, ProfileError};
use defergc::{gc, go};
use serial_test::serial;
use std::hint::black_box;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

type Decoded = Vec<(Vec<String>, Vec<i64>, Vec<(String, String)>)>;

/// A writer the test reads back after the profile is written.
#[derive(Clone, Default)]
struct Shared(Arc<Mutex<Vec<u8>>>);

impl Write for Shared {
    fn write(&mut self, b: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(b);
        Ok(b.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Shared {
    fn decoded(&self) -> Decoded {
        pprof::decode_cpu_profile(&self.0.lock().unwrap()).expect("a valid profile")
    }
}

/// Burns CPU time until the profile has taken `samples` samples (counted
/// by the signal handler: CPU time, not wall time). The loop is one asm
/// block, so that samples land in this function itself, not in a function
/// inlined into it.
#[inline(never)]
fn burn_in_cpu_profile_test(samples: i64) -> u64 {
    let mut x = 1u64;
    while pprof::cpu_samples_taken() < samples {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: arithmetic on registers only.
        unsafe {
            std::arch::asm!(
                "2:",
                "imul {x}, {x}, 13",
                "add {x}, 7",
                "dec {n}",
                "jnz 2b",
                x = inout(reg) x,
                n = inout(reg) 100_000u64 => _,
                options(nomem, nostack),
            );
        }
        #[cfg(not(target_arch = "x86_64"))]
        for _ in 0..100_000 {
            x = black_box(x ^ (x << 1));
        }
    }
    x
}

/// Samples by the innermost function's name, summed.
fn by_leaf(samples: &Decoded) -> Vec<(String, i64)> {
    let mut leaves: std::collections::HashMap<String, i64> = Default::default();
    for (names, values, _) in samples {
        if let Some(leaf) = names.first() {
            *leaves.entry(leaf.clone()).or_default() += values[0];
        }
    }
    let mut v: Vec<_> = leaves.into_iter().collect();
    v.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    v
}

/// Whether `go` runs here.
fn set_rate(hz: u32) {
    // (Refused only while a profile is on: none is, between tests.)
    pprof::set_cpu_profile_rate(hz).unwrap();
}

#[test]
#[serial]
fn the_function_that_burns_the_cpu_comes_first() {
    set_rate(1000);
    let out = Shared::default();
    pprof::start_cpu_profile(out.clone()).unwrap();
    black_box(burn_in_cpu_profile_test(200));
    pprof::stop_cpu_profile().unwrap();
    let samples = out.decoded();
    let leaves = by_leaf(&samples);
    let total: i64 = samples.iter().map(|s| s.1[0]).sum();
    assert!(total >= 150, "{total} samples: {leaves:?}");
    assert!(
        leaves[0].0.contains("burn_in_cpu_profile_test"),
        "{leaves:?}"
    );
    // Every value pair is (count, count * period) at 1 kHz.
    for (_, values, _) in &samples {
        assert_eq!(values[1], values[0] * 1_000_000);
    }
    // The walk saw through to the test's own frame.
    assert!(
        samples.iter().any(|(names, _, _)| names
            .iter()
            .any(|n| n.contains("the_function_that_burns_the_cpu_comes_first"))),
        "no frame of the test: {samples:?}"
    );
}

#[test]
#[serial]
fn go_tool_pprof_names_the_burning_function_first() {
    if !gotool::have_go() {
        skip::skipped(
            "go tool pprof -top of a CPU profile",
            "Go is not installed (apt-get install golang-go)",
        );
        return;
    }
    set_rate(1000);
    let path = std::env::temp_dir().join(format!("defergc-cpu-{}.pprof", std::process::id()));
    pprof::start_cpu_profile_to(&path).unwrap();
    black_box(burn_in_cpu_profile_test(200));
    pprof::stop_cpu_profile().unwrap();
    let out = gotool::pprof_top(&path, &[]);
    let _ = std::fs::remove_file(&path);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        gotool::first_row(&text).contains("burn_in_cpu_profile_test"),
        "{text}"
    );
    assert!(text.contains("Type: cpu"), "{text}");
}

#[test]
#[serial]
fn samples_carry_their_goroutines_labels_inherited_at_go() {
    set_rate(1000);
    let out = Shared::default();
    pprof::start_cpu_profile(out.clone()).unwrap();
    go::run(|| {
        pprof::do_with_labels(&[("request", "GET /"), ("worker", "main")], || {
            let done = go::Chan::<u8>::new(0);
            let d = done.clone();
            // Started under the labels: inherits them, then adds its own.
            go::go(move || {
                assert_eq!(pprof::goroutine_label("request").as_deref(), Some("GET /"));
                pprof::do_with_labels(&[("worker", "child")], || {
                    black_box(burn_in_cpu_profile_test(100));
                });
                d.send(1);
            });
            done.recv();
        });
        assert!(pprof::goroutine_labels().is_empty());
    });
    pprof::stop_cpu_profile().unwrap();
    let samples = out.decoded();
    let burning: Vec<_> = samples
        .iter()
        .filter(|(names, _, _)| names.iter().any(|n| n.contains("burn_in_cpu_profile_test")))
        .collect();
    let n: i64 = burning.iter().map(|s| s.1[0]).sum();
    assert!(n >= 50, "{n} samples in the burning goroutine: {samples:?}");
    let labelled: i64 = burning
        .iter()
        .filter(|(_, _, labels)| {
            labels
                == &[
                    ("request".to_string(), "GET /".to_string()),
                    ("worker".to_string(), "child".to_string()),
                ]
        })
        .map(|s| s.1[0])
        .sum();
    assert_eq!(labelled, n, "{burning:?}");
}

#[test]
#[serial]
fn one_profile_at_a_time_and_no_stop_without_a_start() {
    assert!(matches!(
        pprof::stop_cpu_profile(),
        Err(ProfileError::NotProfiling)
    ));
    pprof::start_cpu_profile(Shared::default()).unwrap();
    assert!(matches!(
        pprof::start_cpu_profile(Shared::default()),
        Err(ProfileError::AlreadyProfiling)
    ));
    assert!(matches!(
        pprof::set_cpu_profile_rate(50),
        Err(ProfileError::AlreadyProfiling)
    ));
    assert_eq!(
        pprof::start_cpu_profile(Shared::default())
            .unwrap_err()
            .to_string(),
        "defergc: cpu profiling already in use"
    );
    pprof::stop_cpu_profile().unwrap();
    assert!(matches!(
        pprof::stop_cpu_profile(),
        Err(ProfileError::NotProfiling)
    ));
    assert!(matches!(
        pprof::set_cpu_profile_rate(0),
        Err(ProfileError::BadRate)
    ));
    let previous = pprof::set_cpu_profile_rate(250).unwrap();
    assert_eq!(pprof::cpu_profile_rate(), 250);
    assert_eq!(pprof::set_cpu_profile_rate(previous).unwrap(), 250);
}

/// A writer that always fails: the profile's error comes back from stop.
struct Broken;

impl Write for Broken {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::Error::other("broken"))
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[test]
#[serial]
fn a_profile_that_cannot_be_written_is_an_error_and_the_next_one_starts() {
    pprof::start_cpu_profile(Broken).unwrap();
    assert!(matches!(
        pprof::stop_cpu_profile(),
        Err(ProfileError::Io(_))
    ));
    pprof::start_cpu_profile(Shared::default()).unwrap();
    pprof::stop_cpu_profile().unwrap();
}

/// A seeded generator (xorshift), so that a failing run can be repeated.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// An object of `words` words, each a function of its seed, its index and
/// its address; checked later.
fn fill(p: *mut u64, words: usize, seed: u64) {
    for i in 0..words {
        // SAFETY: p has `words` words.
        unsafe {
            p.add(i)
                .write(seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15))
        };
    }
}

fn intact(p: *const u64, words: usize, seed: u64) -> bool {
    // SAFETY: p has `words` words.
    (0..words).all(
        |i| unsafe { p.add(i).read() } == seed ^ (i as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15),
    )
}

/// Allocation (GC heap and malloc), goroutine switches and forced
/// collections under 1 kHz profiling: every object survives intact, the
/// program finishes, and the profile has samples.
#[test]
#[serial]
fn the_signal_landing_in_malloc_the_collector_or_the_scheduler_breaks_nothing() {
    let seed = seeded::seed("DEFERGC_SEED");
    eprintln!("cpu profile stress: DEFERGC_SEED={seed}");
    set_rate(1000);
    let out = Shared::default();
    pprof::start_cpu_profile(out.clone()).unwrap();
    const GOROUTINES: usize = 8;
    const ROUNDS: usize = 300;
    const SAMPLES: i64 = 1000;
    let failed = Arc::new(AtomicBool::new(false));
    let f = failed.clone();
    go::run(move || {
        let wg = Arc::new(go::WaitGroup::new());
        let ch = go::Chan::<u64>::new(4);
        for g in 0..GOROUTINES {
            let wg = wg.clone();
            let ch = ch.clone();
            let failed = f.clone();
            wg.add(1).unwrap();
            go::go(move || {
                let mut rng = Rng(seed.wrapping_add(g as u64 * 7919) | 1);
                let mut kept: Vec<(usize, usize, u64)> = Vec::new();
                let root = gc::alloc(64 * 8).cast::<usize>().as_ptr();
                // At least ROUNDS rounds, and on until the profile has
                // taken SAMPLES samples: the signal lands all over.
                let mut round = 0;
                while round < ROUNDS || pprof::cpu_samples_taken() < SAMPLES {
                    round += 1;
                    let words = 1 + (rng.next() % 64) as usize;
                    let s = rng.next();
                    let p = gc::alloc(words * 8).cast::<u64>().as_ptr();
                    fill(p, words, s);
                    let slot = (rng.next() % 64) as usize;
                    // SAFETY: root has 64 slots; the object is reachable
                    // from it (a GC object) while it is checked.
                    unsafe { root.add(slot).write(p as usize) };
                    kept.retain(|&(at, _, _)| at != slot);
                    kept.push((slot, words, s));
                    let m: Vec<u64> = (0..words as u64).map(|i| i ^ s).collect();
                    if m.iter().enumerate().any(|(i, &w)| w != i as u64 ^ s) {
                        failed.store(true, Ordering::SeqCst);
                    }
                    match rng.next() % 8 {
                        0 => go::gosched(),
                        1 => {
                            ch.send(s);
                            black_box(ch.recv());
                        }
                        2 if round % 50 == 0 => gc::collect(),
                        _ => {}
                    }
                    for &(at, words, s) in &kept {
                        // SAFETY: root's slots hold the objects written.
                        let p = unsafe { root.add(at).read() } as *const u64;
                        if !intact(p, words, s) {
                            failed.store(true, Ordering::SeqCst);
                        }
                    }
                }
                gc::keep_alive(root);
                wg.done().unwrap();
            });
        }
        wg.wait();
    });
    pprof::stop_cpu_profile().unwrap();
    assert!(
        !failed.load(Ordering::SeqCst),
        "an object changed (seed {seed})"
    );
    let samples = out.decoded();
    let total = samples.iter().map(|s| s.1[0]).sum::<i64>();
    assert!(total >= SAMPLES / 2, "{total} samples (seed {seed})");
}

/// A forked child has no profile of its parent's: it may start its own,
/// which it writes; the parent's goes on.
#[test]
#[serial]
fn a_forked_child_starts_its_own_profile() {
    set_rate(1000);
    let parent = Shared::default();
    pprof::start_cpu_profile(parent.clone()).unwrap();
    let path = std::env::temp_dir().join(format!("defergc-cpu-child-{}.pprof", std::process::id()));
    // SAFETY: fork; the child only uses the runtime (its fork hooks) and
    // ends with _exit.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0);
    if pid == 0 {
        let code = (|| {
            if pprof::cpu_profiling() {
                return 3;
            }
            if pprof::start_cpu_profile_to(&path).is_err() {
                return 4;
            }
            black_box(burn_in_cpu_profile_test(50));
            if pprof::stop_cpu_profile().is_err() {
                return 5;
            }
            0
        })();
        // SAFETY: ends the child without running the parent's atexit work.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for the child just forked.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(libc::WIFEXITED(status), "status {status:#x}");
    assert_eq!(libc::WEXITSTATUS(status), 0);
    let child = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let samples = pprof::decode_cpu_profile(&child).expect("the child's profile");
    assert!(
        by_leaf(&samples)[0].0.contains("burn_in_cpu_profile_test"),
        "{samples:?}"
    );
    black_box(burn_in_cpu_profile_test(pprof::cpu_samples_taken() + 20));
    pprof::stop_cpu_profile().unwrap();
    assert!(!parent.decoded().is_empty());
}

/// A C program's profile names its hot function first (our decoder, and
/// `go tool pprof -top` where Go is installed), with its labels.
#[test]
fn a_c_programs_cpu_profile_names_its_hot_function() {
    let exe = cprog::compile("cpu-profile", &["tests/c/cpu_profile.c"], &[]);
    let path = cprog::out_dir("cpu-profile").join("c.pprof");
    let out = cprog::run(&exe, &[path.to_str().unwrap()], &[]);
    assert!(out.status.success(), "{}", cprog::text(&out));
    let bytes = std::fs::read(&path).unwrap();
    let samples = pprof::decode_cpu_profile(&bytes).expect("a valid profile");
    let leaves = by_leaf(&samples);
    assert_eq!(leaves[0].0, "compiled_hot_loop", "{leaves:?}");
    assert!(
        samples.iter().any(|(names, _, labels)| names
            .first()
            .is_some_and(|n| n == "compiled_hot_loop")
            && labels == &[("phase".to_string(), "hot".to_string())]),
        "{samples:?}"
    );
    if gotool::have_go() {
        let out = gotool::pprof_top(&path, &[]);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && gotool::first_row(&text).contains("compiled_hot_loop"),
            "{text}{}",
            String::from_utf8_lossy(&out.stderr)
        );
    } else {
        skip::skipped(
            "go tool pprof -top of the C program's CPU profile",
            "Go is not installed (apt-get install golang-go)",
        );
    }
}

/// Threads the runtime does not know are sampled by the process-wide
/// timer only while they run. The kernel hands its signal to any thread
/// that does not block `SIGPROF`, a sleeping one too: here an
/// unregistered thread spins, half of the time with `SIGPROF` blocked,
/// while another sleeps on a condition variable: the signals that reach
/// the sleeper (or bdwgc's sleeping markers) while the spinner blocks
/// them are dropped, and the spinner has nearly every sample.
#[test]
fn a_sleeping_unregistered_thread_gets_no_samples() {
    let exe = cprog::compile("cpu-profile", &["tests/c/cpu_profile.c"], &[]);
    let path = cprog::out_dir("cpu-profile").join("sleepers.pprof");
    let out = cprog::run(&exe, &[path.to_str().unwrap(), "sleepers"], &[]);
    assert!(out.status.success(), "{}", cprog::text(&out));
    let bytes = std::fs::read(&path).unwrap();
    let samples = pprof::decode_cpu_profile(&bytes).expect("a valid profile");
    let leaves = by_leaf(&samples);
    let total: i64 = leaves.iter().map(|l| l.1).sum();
    let spin = leaves
        .iter()
        .find(|l| l.0 == "unregistered_spin")
        .map_or(0, |l| l.1);
    println!("{leaves:?}");
    // Only the spinner's unblocked half is sampled (about 0.25 s at an
    // effective 250 Hz): some dozens of samples.
    assert!(total >= 10, "too few samples to judge: {leaves:?}");
    // A few may be the runtime's own threads' (the profile's reader).
    assert!(
        spin * 10 >= total * 9,
        "the spinning thread has {spin} of {total} samples: {leaves:?}"
    );
}

/// bdwgc's marker threads in this process (the vendored build names them
/// `GC-marker-N`), each checked to let `SIGPROF` through while blocking
/// the signals meant for the program's threads, as the runtime starts
/// them. Found by name, not by mask: a thread that glibc is still
/// creating has every signal blocked for a moment, and a mask-based
/// search took such a thread (a test harness's thread starting) for a
/// marker that blocks `SIGPROF`.
fn marker_threads() -> usize {
    let bit = |sig: i32| 1u64 << (sig - 1);
    let mut n = 0;
    for task in std::fs::read_dir("/proc/self/task").unwrap().flatten() {
        let Ok(comm) = std::fs::read_to_string(task.path().join("comm")) else {
            continue;
        };
        if !comm.starts_with("GC-marker-") {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(task.path().join("status")) else {
            continue;
        };
        let mask = status
            .lines()
            .find_map(|l| l.strip_prefix("SigBlk:"))
            .and_then(|m| u64::from_str_radix(m.trim(), 16).ok())
            .expect("a SigBlk line in /proc/self/task/*/status");
        let blocked = |sig| mask & bit(sig) != 0;
        assert!(
            blocked(libc::SIGINT) && blocked(libc::SIGTERM) && blocked(libc::SIGQUIT),
            "a marker takes the program's signals: {mask:#x}"
        );
        assert!(
            !blocked(libc::SIGPROF),
            "a marker blocks SIGPROF: {mask:#x}"
        );
        n += 1;
    }
    n
}

/// A linked list of `n` collected pairs, kept alive by its head: what a
/// collection marks.
fn live_list(n: usize) -> *mut [usize; 2] {
    let mut head: *mut [usize; 2] = std::ptr::null_mut();
    for i in 0..n {
        let p = gc::alloc(16).as_ptr().cast::<[usize; 2]>();
        // SAFETY: a fresh 16-byte object.
        unsafe { p.write([head as usize, i]) };
        head = p;
    }
    head
}

/// bdwgc's marker threads (started by the runtime with only `SIGPROF`
/// let through) are sampled by the process-wide timer: a profile of
/// collections over a large live heap has samples taken on a marker,
/// the interrupted pc alone, inside the collector. Without the timer, or
/// with bdwgc's own marker mask (every signal blocked), there were none.
#[test]
#[serial]
fn the_collectors_marker_threads_are_sampled() {
    if gc::BACKEND != "bdwgc" {
        return;
    }
    if gc::build::SOURCE != "vendored" {
        skip::skipped(
            "samples of bdwgc's marker threads",
            "a system bdwgc starts its markers with its own mask and names",
        );
        return;
    }
    gc::init();
    let markers = marker_threads();
    if markers == 0 {
        skip::skipped(
            "samples of bdwgc's marker threads",
            "bdwgc started no marker thread (one processor)",
        );
        return;
    }
    set_rate(1000);
    let head = live_list(400_000);
    let mut found = Vec::new();
    // A marker runs only while a collection marks, and a loaded machine
    // may leave it little time: a few rounds, until one sample lands.
    for _round in 0..6 {
        let out = Shared::default();
        pprof::start_cpu_profile(out.clone()).unwrap();
        for _ in 0..20 {
            gc::collect();
        }
        pprof::stop_cpu_profile().unwrap();
        found = out
            .decoded()
            .into_iter()
            .filter(|(names, _, _)| names.len() == 1 && names[0].starts_with("GC_"))
            .map(|(names, values, _)| (names[0].clone(), values[0]))
            .collect();
        if !found.is_empty() {
            break;
        }
    }
    // Every object the collections marked while the signal landed in
    // them is intact.
    let (mut p, mut expect) = (black_box(head), 400_000);
    while !p.is_null() {
        expect -= 1;
        // SAFETY: a node of the list, kept alive by the head on the stack.
        let [next, i] = unsafe { p.read() };
        assert_eq!(i, expect, "a node of the live list changed");
        p = next as *mut [usize; 2];
    }
    assert_eq!(expect, 0, "the live list lost nodes");
    assert!(
        !found.is_empty(),
        "no sample on any of the {markers} marker threads"
    );
    eprintln!("marker samples: {found:?}");
}
