//! sysmon (`src/go/sysmon.rs`): processors retaken from system calls,
//! short calls on the fast path, preemption requests honoured at the poll
//! point, sysmon's wait while the program is idle, and sysmon in a forked
//! child. Each test runs alone in a child process with `GOMAXPROCS` set (a
//! fresh scheduler; a hang is killed after a limit and fails the test).
//! Every check counts events (rounds done, sysmon's counters), none
//! measures time.

mod child;
mod seeded;

use defergc::go::{self, Chan, WaitGroup};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const CHILD: &str = "DEFERGC_SYSMON_CHILD";

/// Runs the test `name` in a child with `GOMAXPROCS=procs` (and `env`),
/// killed after `limit`: the child prints `ok` when its checks passed.
fn in_child(name: &str, procs: &str, env: &[(&str, &str)], limit: Duration) -> String {
    let mut all = vec![(CHILD, "1"), ("GOMAXPROCS", procs)];
    all.extend_from_slice(env);
    let out = child::run_test(name, &all, limit)
        .unwrap_or_else(|| panic!("{name}: the child hung (killed after {limit:?})"));
    let text = child::text(&out);
    assert!(
        out.status.success() && text.contains("\nok\n"),
        "{name}: {text}"
    );
    for line in text.lines().filter(|l| l.starts_with("child: ")) {
        println!("{line}");
    }
    text
}

fn is_child() -> bool {
    std::env::var_os(CHILD).is_some()
}

/// Blocks the thread in a system call until `done()` holds, checking
/// every millisecond, for at most `limit` (a safety net: a scheduler that
/// never runs the others must fail the counts, not hang the child).
fn block_until(done: impl Fn() -> bool, limit: Duration) {
    let until = Instant::now() + limit;
    while !done() && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// Two goroutines that bounce a value `rounds` times over two channels,
/// counting round trips in `done`.
fn ping_pong(rounds: u64, done: Arc<AtomicU64>, wg: Arc<WaitGroup>) {
    let (a, b) = (Arc::new(Chan::<u64>::new(0)), Arc::new(Chan::<u64>::new(0)));
    let (a2, b2) = (a.clone(), b.clone());
    wg.add(2).unwrap();
    let wg2 = wg.clone();
    go::go(move || {
        for i in 0..rounds {
            a.send(i);
            assert_eq!(b.recv(), Some(i + 1));
            done.fetch_add(1, Ordering::SeqCst);
        }
        wg.done().unwrap();
    });
    go::go(move || {
        for _ in 0..rounds {
            let v = a2.recv().unwrap();
            b2.send(v + 1);
        }
        wg2.done().unwrap();
    });
}

/// With one processor, a goroutine blocked in a system call does not stop
/// the others: while it is in the call (which lasts until they are done),
/// two goroutines complete 100 channel round trips, and sysmon retook the
/// processor for them. Without the retake the call's processor stays with
/// it and the others never run (the child hangs until its call's safety
/// net ends, and the counts fail).
#[test]
fn a_goroutine_blocked_in_a_system_call_does_not_stop_the_others() {
    if !is_child() {
        in_child(
            "a_goroutine_blocked_in_a_system_call_does_not_stop_the_others",
            "1",
            &[],
            Duration::from_secs(120),
        );
        return;
    }
    const ROUNDS: u64 = 100;
    let before = go::sched_stats();
    let during = Arc::new(AtomicU64::new(0));
    let d = during.clone();
    let status = go::run(move || {
        let done = Arc::new(AtomicU64::new(0));
        let wg = Arc::new(WaitGroup::new());
        // Queued on the one processor, behind this goroutine.
        ping_pong(ROUNDS, done.clone(), wg.clone());
        let seen = done.clone();
        go::syscall(|| {
            block_until(
                || seen.load(Ordering::SeqCst) == ROUNDS,
                Duration::from_secs(30),
            )
        });
        d.store(done.load(Ordering::SeqCst), Ordering::SeqCst);
        wg.wait();
    });
    assert_eq!(status, 0);
    let after = go::sched_stats();
    assert_eq!(
        during.load(Ordering::SeqCst),
        ROUNDS,
        "round trips done while the call blocked"
    );
    assert!(
        after.syscall_retakes > before.syscall_retakes,
        "no retake: {before:?} {after:?}"
    );
    assert!(after.syscall_slow_exits > before.syscall_slow_exits);
    println!("\nok");
}

/// A long system call with nothing else to run and another processor
/// idle: sysmon retakes the processor once the call has lasted 10 ms and
/// puts it in the idle list; the call's return then takes an idle one.
/// (A retake left the processor `P_IDLE` before putting it in the list,
/// which the list's double-put check took for a second put: the program
/// aborted.)
#[test]
fn a_processor_retaken_with_nothing_to_run_goes_idle_and_comes_back() {
    if !is_child() {
        in_child(
            "a_processor_retaken_with_nothing_to_run_goes_idle_and_comes_back",
            "2",
            &[],
            Duration::from_secs(120),
        );
        return;
    }
    let before = go::sched_stats();
    let status = go::run(|| {
        for _ in 0..5 {
            let before = go::sched_stats().syscall_retakes;
            go::syscall(|| {
                block_until(
                    || go::sched_stats().syscall_retakes > before,
                    Duration::from_secs(10),
                )
            });
            // Back with a processor: goroutines run.
            let c = Chan::<u64>::new(1);
            let c2 = c.clone();
            go::go(move || c2.send(7));
            assert_eq!(c.recv(), Some(7));
        }
    });
    assert_eq!(status, 0);
    let after = go::sched_stats();
    assert!(
        after.syscall_retakes >= before.syscall_retakes + 5,
        "{before:?} {after:?}"
    );
    println!("\nok");
}

/// One processor; A blocks in a system call until B runs. A was taken
/// from the local queue with B right behind it (the place a look-ahead
/// of the queue's next goroutine would keep it), and no other processor
/// exists to steal B: B runs only if sysmon retakes the processor and
/// hands it on with B counted as its work.
#[test]
fn a_goroutine_queued_behind_a_blocked_call_runs_while_the_call_lasts() {
    if !is_child() {
        in_child(
            "a_goroutine_queued_behind_a_blocked_call_runs_while_the_call_lasts",
            "1",
            &[],
            Duration::from_secs(120),
        );
        return;
    }
    let status = go::run(|| {
        for round in 0..20 {
            let b_ran = Arc::new(AtomicBool::new(false));
            let done = Chan::<bool>::new(2);
            let (flag, d) = (b_ran.clone(), done.clone());
            // Started first: runnext, then pushed to the queue by B.
            go::go(move || {
                go::syscall(|| {
                    block_until(|| flag.load(Ordering::SeqCst), Duration::from_secs(10))
                });
                d.send(flag.load(Ordering::SeqCst));
            });
            let (flag, d) = (b_ran.clone(), done.clone());
            go::go(move || {
                flag.store(true, Ordering::SeqCst);
                d.send(true);
            });
            // Runs first (runnext) and ends: A is then taken from the queue
            // with B behind it.
            go::go(|| {});
            let (x, y) = (done.recv(), done.recv());
            assert_eq!(
                (x, y),
                (Some(true), Some(true)),
                "round {round}: A's call ended without B having run"
            );
        }
    });
    assert_eq!(status, 0);
    println!("\nok");
}

/// 10,000 short system calls (getpid) with one processor: most of them
/// take the processor back with the CAS (the fast path). A call that sysmon
/// sees in two rounds (the thread was descheduled in it for 20 µs or more:
/// the machine is shared) takes the slow path, so the bound is "most", not
/// "all".
#[test]
fn short_system_calls_take_the_fast_path() {
    if !is_child() {
        in_child(
            "short_system_calls_take_the_fast_path",
            "1",
            &[],
            Duration::from_secs(120),
        );
        return;
    }
    const CALLS: u64 = 10_000;
    let before = go::sched_stats();
    let status = go::run(|| {
        let mut sum = 0u64;
        for _ in 0..CALLS {
            // SAFETY: getpid has no preconditions.
            sum += go::syscall(|| unsafe { libc::getpid() }) as u64;
        }
        // SAFETY: as above.
        assert_eq!(sum, CALLS * unsafe { libc::getpid() } as u64);
    });
    assert_eq!(status, 0);
    let after = go::sched_stats();
    let slow = after.syscall_slow_exits - before.syscall_slow_exits;
    println!("child: short calls: {slow} of {CALLS} took the slow path");
    assert!(
        slow < CALLS / 2,
        "{slow} of {CALLS} calls lost their processor"
    );
    println!("\nok");
}

/// With one processor, a goroutine loops on the poll point until another
/// goroutine tells it to stop: sysmon asks it to yield after 10 ms, it
/// yields at the poll point, and the other runs. Without the request (or
/// without the poll point) the loop keeps the only processor for ever
/// and the child is killed.
#[test]
fn a_loop_on_the_poll_point_lets_another_goroutine_end_it() {
    if !is_child() {
        in_child(
            "a_loop_on_the_poll_point_lets_another_goroutine_end_it",
            "1",
            &[],
            Duration::from_secs(60),
        );
        return;
    }
    let before = go::sched_stats();
    let status = go::run(|| {
        let stop = Arc::new(AtomicBool::new(false));
        let wg = Arc::new(WaitGroup::new());
        wg.add(2).unwrap();
        let w = wg.clone();
        go::go(move || {
            // The stopper waits behind this goroutine on the one processor.
            let (s, w2) = (stop.clone(), w.clone());
            go::go(move || {
                s.store(true, Ordering::SeqCst);
                w2.done().unwrap();
            });
            let mut spins = 0u64;
            while !stop.load(Ordering::SeqCst) {
                spins = std::hint::black_box(spins + 1);
                go::preempt_point();
            }
            w.done().unwrap();
        });
        wg.wait();
    });
    assert_eq!(status, 0);
    let after = go::sched_stats();
    assert!(
        after.preempt_requests > before.preempt_requests,
        "{after:?}"
    );
    assert!(
        after.preempts_honoured > before.preempts_honoured,
        "{after:?}"
    );
    println!("\nok");
}

/// The same with a channel operation as the preemption point: a goroutine
/// that loops on non-blocking sends never parks, but a blocking receive
/// of a ready value (which never parks either) honours the request.
#[test]
fn a_loop_of_channel_operations_is_preempted() {
    if !is_child() {
        in_child(
            "a_loop_of_channel_operations_is_preempted",
            "1",
            &[],
            Duration::from_secs(60),
        );
        return;
    }
    let status = go::run(|| {
        let stop = Arc::new(AtomicBool::new(false));
        let wg = Arc::new(WaitGroup::new());
        wg.add(2).unwrap();
        let w = wg.clone();
        go::go(move || {
            // The stopper waits behind this goroutine on the one processor.
            let (s, w2) = (stop.clone(), w.clone());
            go::go(move || {
                s.store(true, Ordering::SeqCst);
                w2.done().unwrap();
            });
            let c = Chan::<u64>::new(1);
            while !stop.load(Ordering::SeqCst) {
                c.send(1);
                assert_eq!(c.recv(), Some(1));
            }
            w.done().unwrap();
        });
        wg.wait();
    });
    assert_eq!(status, 0);
    println!("\nok");
}

/// An idle program: the main goroutine sleeps 2 s (every processor idle,
/// nothing in a system call) and sysmon waits instead of polling. Before
/// it does, a worker that spins for work may keep a processor for a while
/// (long on a loaded machine, where its yields give the CPU away), and
/// sysmon's rounds back off meanwhile: 50 at 20 µs, then doubling to
/// 10 ms, some 60 rounds to reach 100 ms. Hence the bound, 100 wakeups
/// over the 2 s; a sysmon that kept polling wakes at least once every
/// 10 ms, 200 times in 2 s (about 190 measured with the wait taken out,
/// on a loaded machine whose sleeps overshoot).
#[test]
fn an_idle_program_leaves_sysmon_waiting() {
    if !is_child() {
        in_child(
            "an_idle_program_leaves_sysmon_waiting",
            "2",
            &[],
            Duration::from_secs(60),
        );
        return;
    }
    let woke = Arc::new(AtomicU64::new(0));
    let w = woke.clone();
    let status = go::run(move || {
        // Let the start settle (workers parking, sysmon's first rounds).
        go::sleep(Duration::from_millis(20));
        let before = go::sched_stats().sysmon_wakeups;
        go::sleep(Duration::from_secs(2));
        w.store(go::sched_stats().sysmon_wakeups - before, Ordering::SeqCst);
    });
    assert_eq!(status, 0);
    let woke = woke.load(Ordering::SeqCst);
    println!("child: sysmon woke {woke} times in an idle 2 s");
    assert!(
        woke <= 100,
        "sysmon woke {woke} times while the program was idle"
    );
    println!("\nok");
}

/// A goroutine forks; in the child, with one processor, a goroutine
/// blocks in a system call until two others complete 50 round trips:
/// the child's new sysmon retakes the processor. Without a sysmon in the
/// child the others never run, the call's safety net ends it, and the
/// child reports the missing rounds (status 1).
#[test]
fn a_forked_child_has_a_working_sysmon() {
    if !is_child() {
        in_child(
            "a_forked_child_has_a_working_sysmon",
            "1",
            &[],
            Duration::from_secs(120),
        );
        return;
    }
    const ROUNDS: u64 = 50;
    let status = go::run(|| {
        // sysmon runs in the parent (it starts with the scheduler).
        go::syscall(|| std::thread::sleep(Duration::from_millis(5)));
        // SAFETY: fork from a goroutine; the child only runs goroutines
        // it starts itself and ends with _exit.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let done = Arc::new(AtomicU64::new(0));
            let wg = Arc::new(WaitGroup::new());
            let retakes = go::sched_stats().syscall_retakes;
            ping_pong(ROUNDS, done.clone(), wg.clone());
            let seen = done.clone();
            go::syscall(|| {
                block_until(
                    || seen.load(Ordering::SeqCst) == ROUNDS,
                    Duration::from_secs(20),
                )
            });
            let ok = done.load(Ordering::SeqCst) == ROUNDS
                && go::sched_stats().syscall_retakes > retakes;
            if ok {
                wg.wait();
            }
            // SAFETY: the child ends here without running the parent's
            // exit handlers.
            unsafe { libc::_exit(if ok { 0 } else { 1 }) };
        }
        let mut st = 0;
        // SAFETY: waiting for our own child, inside a system call.
        let r = go::syscall(|| unsafe { libc::waitpid(pid, &mut st, 0) });
        assert_eq!(r, pid);
        assert!(
            libc::WIFEXITED(st) && libc::WEXITSTATUS(st) == 0,
            "the forked child's goroutines did not run while one was in a system call (status {st:#x})"
        );
    });
    assert_eq!(status, 0);
    println!("\nok");
}

/// A seeded stress test: goroutines making system calls of random length
/// (none, a getpid, or a sleep of up to 300 µs) beside goroutines that
/// compute and check a checksum (tens of milliseconds each, so sysmon
/// asks them to yield), half of them looping on the poll point, with 1
/// and 3 processors. Every call's result is checked and counted, every
/// checksum matches the same computation done alone. The seed is printed;
/// `DEFERGC_SEED=n` repeats a run.
#[test]
fn system_calls_of_random_length_beside_computing_goroutines() {
    if !is_child() {
        seeded_in_children(
            "system_calls_of_random_length_beside_computing_goroutines",
            &["1", "3"],
        );
        return;
    }
    let seed = seeded::seed("DEFERGC_SEED");
    const CALLERS: u64 = 16;
    const CALLS: u64 = 300;
    const COMPUTERS: u64 = 8;
    const STEPS: u64 = 20_000_000;
    let calls = Arc::new(AtomicU64::new(0));
    let sums = Arc::new(AtomicU64::new(0));
    let (c2, s2) = (calls.clone(), sums.clone());
    let before = go::sched_stats();
    let status = go::run(move || {
        let wg = Arc::new(WaitGroup::new());
        wg.add((CALLERS + COMPUTERS) as i32).unwrap();
        for i in 0..CALLERS {
            let (wg, calls) = (wg.clone(), c2.clone());
            go::go(move || {
                let mut x = seed ^ (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                for _ in 0..CALLS {
                    x = xorshift(x);
                    match x % 3 {
                        0 => {}
                        1 => {
                            // SAFETY: getpid has no preconditions.
                            let pid = go::syscall(|| unsafe { libc::getpid() });
                            // SAFETY: as above.
                            assert_eq!(pid, unsafe { libc::getpid() });
                        }
                        _ => {
                            let us = (x >> 8) % 300;
                            go::syscall(|| std::thread::sleep(Duration::from_micros(us)));
                        }
                    }
                    calls.fetch_add(1, Ordering::SeqCst);
                    if x & 0x100 != 0 {
                        go::gosched();
                    }
                }
                wg.done().unwrap();
            });
        }
        for i in 0..COMPUTERS {
            let (wg, sums) = (wg.clone(), s2.clone());
            go::go(move || {
                let polls = i % 2 == 0;
                let mut x = seed.wrapping_add(i) | 1;
                for _ in 0..STEPS {
                    x = xorshift(x);
                    if polls {
                        go::preempt_point();
                    }
                }
                assert_eq!(x, checksum(seed.wrapping_add(i) | 1, STEPS), "computer {i}");
                sums.fetch_add(1, Ordering::SeqCst);
                wg.done().unwrap();
            });
        }
        wg.wait();
    });
    assert_eq!(status, 0);
    assert_eq!(calls.load(Ordering::SeqCst), CALLERS * CALLS);
    assert_eq!(sums.load(Ordering::SeqCst), COMPUTERS);
    let after = go::sched_stats();
    // Every retaken call ended on the slow path, and only those did.
    assert_eq!(
        after.syscall_slow_exits - before.syscall_slow_exits,
        after.syscall_retakes - before.syscall_retakes,
        "{before:?} {after:?}"
    );
    assert!(after.preempts_honoured <= after.preempt_requests);
    println!(
        "stress: {} retakes, {} slow exits, {} preemption requests ({} honoured)",
        after.syscall_retakes - before.syscall_retakes,
        after.syscall_slow_exits - before.syscall_slow_exits,
        after.preempt_requests - before.preempt_requests,
        after.preempts_honoured - before.preempts_honoured,
    );
    println!("\nok");
}

/// A seeded stress test of the system-call handshake against both kinds
/// of taker: goroutines making system calls of random length (a getpid,
/// or a sleep of up to 200 µs, long enough for sysmon to retake) while a
/// plain thread stops the world over and over (changing `GOMAXPROCS`
/// between 2 and 3, each change a stop that takes the processors in
/// calls). Every call's result is checked and counted; between its calls
/// a goroutine holds a processor, and no more goroutines than processors
/// are ever counted there at once (two workers that both believed they
/// held one processor would break that bound). The seed is printed;
/// `DEFERGC_SEED=n` repeats a run.
#[test]
fn system_calls_beside_sysmon_and_stops_of_the_world() {
    if !is_child() {
        seeded_in_children("system_calls_beside_sysmon_and_stops_of_the_world", &["2"]);
        return;
    }
    let seed = seeded::seed("DEFERGC_SEED");
    const CALLERS: u64 = 12;
    const CALLS: u64 = 400;
    const STOPS: usize = 200;
    const MOST_PROCS: u64 = 3;
    let calls = Arc::new(AtomicU64::new(0));
    let holding = Arc::new(AtomicU64::new(0));
    let most = Arc::new(AtomicU64::new(0));
    let (c2, h2, m2) = (calls.clone(), holding.clone(), most.clone());
    let before = go::sched_stats();
    let status = go::run(move || {
        let stopping = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let stop2 = stopping.clone();
        let stopper = std::thread::spawn(move || {
            let mut n = 0;
            while n < STOPS || stop2.load(Ordering::SeqCst) {
                go::set_gomaxprocs(2 + n % 2);
                n += 1;
                std::thread::sleep(Duration::from_micros(50));
            }
            go::set_gomaxprocs(2);
            n
        });
        let wg = Arc::new(WaitGroup::new());
        wg.add(CALLERS as i32).unwrap();
        for i in 0..CALLERS {
            let (wg, calls, holding, most) = (wg.clone(), c2.clone(), h2.clone(), m2.clone());
            go::go(move || {
                let mut x = seed ^ (i + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
                for _ in 0..CALLS {
                    x = xorshift(x);
                    let now = holding.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::hint::black_box(checksum(x, x % 2000));
                    holding.fetch_sub(1, Ordering::SeqCst);
                    if x.is_multiple_of(2) {
                        // SAFETY: getpid has no preconditions.
                        let pid = go::syscall(|| unsafe { libc::getpid() });
                        // SAFETY: as above.
                        assert_eq!(pid, unsafe { libc::getpid() });
                    } else {
                        let us = (x >> 8) % 200;
                        go::syscall(|| std::thread::sleep(Duration::from_micros(us)));
                    }
                    calls.fetch_add(1, Ordering::SeqCst);
                }
                wg.done().unwrap();
            });
        }
        wg.wait();
        stopping.store(false, Ordering::SeqCst);
        // The join blocks this worker's thread: as a system call, or the
        // stopper's last stop would wait for it.
        assert!(go::syscall(|| stopper.join()).unwrap() >= STOPS);
    });
    assert_eq!(status, 0);
    assert_eq!(calls.load(Ordering::SeqCst), CALLERS * CALLS);
    let most = most.load(Ordering::SeqCst);
    assert!(
        (1..=MOST_PROCS).contains(&most),
        "{most} goroutines held processors at once, with at most {MOST_PROCS} processors"
    );
    let after = go::sched_stats();
    let slow = after.syscall_slow_exits - before.syscall_slow_exits;
    let retakes = after.syscall_retakes - before.syscall_retakes;
    // Every retaken call ends on the slow path; so do calls a stop took.
    assert!(slow >= retakes, "{before:?} {after:?}");
    println!(
        "stress: {} retakes, {} slow exits, {} exits that waited for a verdict, \
         at most {most} goroutines holding processors, fenceless exits: {}",
        retakes,
        slow,
        after.syscall_undecided_exits - before.syscall_undecided_exits,
        go::syscall_exit_without_fence(),
    );
    println!("\nok");
}

/// A seeded stress test's parent side: prints the seed, runs the test
/// `name` in a child under each of `procs` processors with that seed,
/// and prints the child's `stress:` line.
fn seeded_in_children(name: &str, procs: &[&str]) {
    let seed = seeded::seed("DEFERGC_SEED").to_string();
    println!("seed {seed} (DEFERGC_SEED={seed} repeats this run)");
    for procs in procs {
        let text = in_child(
            name,
            procs,
            &[("DEFERGC_SEED", &seed)],
            Duration::from_secs(300),
        );
        let line = text
            .lines()
            .find(|l| l.starts_with("stress:"))
            .unwrap_or("");
        println!("GOMAXPROCS={procs}: {line}");
    }
}

fn xorshift(mut x: u64) -> u64 {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    x
}

fn checksum(mut x: u64, steps: u64) -> u64 {
    for _ in 0..steps {
        x = std::hint::black_box(xorshift(x));
    }
    x
}
