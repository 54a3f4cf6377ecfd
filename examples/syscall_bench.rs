//! The two sides of a system call (`go::enter_syscall` /
//! `go::exit_syscall`), for comparing builds of the scheduler:
//!
//! - `short`: one goroutine makes 1,000,000 `getpid` calls between enter
//!   and exit; ns per call, beside the bare `getpid` (ns per call).
//! - `blocking`: 8 goroutines each block 1 ms in a call (a sleep), over
//!   and over, while 4 goroutines compute in chunks of 100,000 steps;
//!   chunks computed per second over one second, and calls made. Each
//!   chunk ends with an uncontended `Mutex` lock and unlock: a preemption
//!   point where the build has them (as compiled code's poll point would
//!   be), else a CAS. Without any, the computers may keep every
//!   processor and the goroutines back from their calls wait for good.
//!
//! ```text
//! GOMAXPROCS=2 cargo run --release --example syscall_bench
//! ```
//!
//! Prints one line: `short_ns=… bare_ns=… chunks_per_s=… calls_per_s=…`.
//! It uses only the API that every build since system calls existed has.

use defergc::go::{self, Mutex};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn short() -> (f64, f64) {
    const N: u32 = 1_000_000;
    let t = Instant::now();
    let mut sum = 0i64;
    for _ in 0..N {
        // SAFETY: getpid has no preconditions.
        sum += i64::from(unsafe { libc::getpid() });
    }
    let bare = t.elapsed().as_nanos() as f64 / f64::from(N);
    let t = Instant::now();
    for _ in 0..N {
        go::enter_syscall();
        // SAFETY: as above.
        sum -= i64::from(unsafe { libc::getpid() });
        go::exit_syscall();
    }
    let wrapped = t.elapsed().as_nanos() as f64 / f64::from(N);
    assert_eq!(std::hint::black_box(sum), 0);
    (wrapped, bare)
}

fn blocking() -> (f64, f64) {
    const BLOCKERS: usize = 8;
    const COMPUTERS: usize = 4;
    const STEPS: u64 = 100_000;
    let stop = Arc::new(AtomicBool::new(false));
    let chunks = Arc::new(AtomicU64::new(0));
    let calls = Arc::new(AtomicU64::new(0));
    let left = Arc::new(AtomicU64::new((BLOCKERS + COMPUTERS) as u64));
    let me = go::Goroutine::current().unwrap();
    for _ in 0..BLOCKERS {
        let (stop, calls, left) = (stop.clone(), calls.clone(), left.clone());
        go::go(move || {
            while !stop.load(Ordering::Relaxed) {
                go::syscall(|| std::thread::sleep(Duration::from_millis(1)));
                calls.fetch_add(1, Ordering::Relaxed);
            }
            if left.fetch_sub(1, Ordering::SeqCst) == 1 {
                me.ready();
            }
        });
    }
    for i in 0..COMPUTERS {
        let (stop, chunks, left) = (stop.clone(), chunks.clone(), left.clone());
        go::go(move || {
            let mut x = i as u64 + 1;
            let m = Mutex::new();
            while !stop.load(Ordering::Relaxed) {
                m.lock();
                m.unlock();
                for _ in 0..STEPS {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                }
                std::hint::black_box(x);
                chunks.fetch_add(1, Ordering::Relaxed);
            }
            if left.fetch_sub(1, Ordering::SeqCst) == 1 {
                me.ready();
            }
        });
    }
    let t = Instant::now();
    go::syscall(|| std::thread::sleep(Duration::from_secs(1)));
    let (c, n) = (
        chunks.load(Ordering::Relaxed),
        calls.load(Ordering::Relaxed),
    );
    let secs = t.elapsed().as_secs_f64();
    stop.store(true, Ordering::SeqCst);
    while left.load(Ordering::SeqCst) > 0 {
        go::park("bench");
    }
    (c as f64 / secs, n as f64 / secs)
}

fn main() {
    let out = Arc::new(std::sync::Mutex::new(String::new()));
    let o = out.clone();
    let status = go::run(move || {
        let (short_ns, bare_ns) = short();
        let (chunks, calls) = blocking();
        *o.lock().unwrap() = format!(
            "short_ns={short_ns:.1} bare_ns={bare_ns:.1} chunks_per_s={chunks:.0} calls_per_s={calls:.0}"
        );
    });
    assert_eq!(status, 0);
    println!("{}", out.lock().unwrap());
}
