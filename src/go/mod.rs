//! Goroutines: Go's `go` statement on stackful coroutines, scheduled M:N
//! over `GOMAXPROCS` worker threads, seen by every collector.
//!
//! ```
//! use defergc::go;
//! use std::sync::atomic::{AtomicUsize, Ordering};
//! use std::sync::Arc;
//!
//! let status = go::run(|| {
//!     let done = Arc::new(AtomicUsize::new(0));
//!     for _ in 0..1000 {
//!         let done = done.clone();
//!         go::go(move || {
//!             done.fetch_add(1, Ordering::SeqCst);
//!         });
//!     }
//!     while done.load(Ordering::SeqCst) < 1000 {
//!         go::gosched();
//!     }
//! });
//! assert_eq!(status, 0);
//! ```
//!
//! Each goroutine is a goroutine for everything else: its own execution
//! context (`crate::context`), so its own defer chain, panics, Goexit and
//! recover tokens, moving with it between worker threads. An unrecovered
//! panic in any goroutine prints Go's report and ends the process with
//! status 2. `tls` slots are per *worker thread* under M:N (a goroutine
//! may move between threads at every switch); goroutine-local words that
//! the collectors scan are [`local`] and [`set_local`].
//!
//! What is and is not preempted: a goroutine switches out only in runtime
//! calls: [`gosched`], [`park`], the channel, lock and sleep operations
//! built on them, and [`exit_syscall`]. A monitor thread (sysmon) asks a
//! goroutine that has run for 10 ms without switching to yield, and it
//! does at its next *preemption point*: a blocking channel or select
//! operation, a sync lock or wait, `defergc_alloc`, [`exit_syscall`], or
//! [`preempt_point`], the poll point a compiler puts at loop back-edges.
//! A goroutine that loops without any of them keeps
//! its worker (the others keep running the rest). A goroutine about to
//! block its thread (a system call, native code, a lock of another
//! library) says so with [`enter_syscall`] / [`exit_syscall`] (or
//! [`syscall`]): that costs a few plain stores and loads, no fence and no
//! read-modify-write (see `syscall.rs`); if the call lasts,
//! sysmon hands its worker's processor to another thread, so nothing
//! starves ([`sched_stats`] counts what sysmon did).
//!
//! Run-time controls: [`set_gomaxprocs`] changes the number of
//! processors while goroutines run (Go's `runtime.GOMAXPROCS`, stopping
//! the world: a goroutine that loops without runtime calls delays the
//! change until it makes one); [`lock_os_thread`] / [`unlock_os_thread`]
//! keep a goroutine on its worker thread (Go's `LockOSThread`: nested,
//! and a goroutine that exits locked ends its thread).
//!
//! Layout: `config.rs` (`GOMAXPROCS`, the stack size, the scheduler's
//! start), `spawn.rs` (starting goroutines: `go`, the main goroutine,
//! compiled code's), `program.rs` (the main goroutine's life: waiting for
//! it, how it ended), `goroutine.rs` (from inside a goroutine: gosched,
//! park and ready, system calls, local words), `time.rs` (sleep, timers
//! and `after` for Rust), `g.rs` (the goroutine struct, its coroutine,
//! switches), `stack.rs` (the stack pool), `park.rs` (how an idle worker
//! blocks: until woken, its poll's events or a due timer), `procs.rs`
//! (processors, workers, run queues), `idle.rs` (finding work, spinning,
//! parking and waking workers), `sched.rs` (`schedule()`, readying, the
//! policy), `syscall.rs` (system
//! calls: the processor's `P_SYSCALL` state and its handshake),
//! `sysmon.rs` (the monitor thread: retaking processors from system
//! calls, preemption requests), `preempt.rs` (requests and the poll
//! point), `async_preempt.rs` (asynchronous preemption's policy: the
//! safe-point decision, the yield; `signal/preempt.rs` is the mechanism),
//! `fork.rs` (the fork hooks),
//! `scan.rs` (how bdwgc scans goroutine stacks), `chan.rs`, `select.rs`
//! and `wait.rs` (channels, select, and the wait records and queues under
//! them), `prim.rs` (the waiting protocol's primitives, loom's under
//! `cfg(loom)`), `model.rs` (the loom model's API), `sync.rs` and
//! `stw.rs` (stopping the world: `GOMAXPROCS` at run time),
//! `sema.rs` (mutexes, wait groups, the semaphore), `timer.rs` (the timer
//! heap under sleeps and timers), `rand.rs` (select and steal orders),
//! `deadlock.rs` (Go's deadlock report, external wakers), `dump.rs`
//! (goroutine dumps: SIGQUIT, the goroutine list of a fatal error or of
//! `GOTRACEBACK=all`, `runtime.Stack`, the goroutine profile), `fault.rs` (stack overflows), `netpoll.rs`,
//! `pollfd.rs` and `net.rs` (the network poller, I/O on it, Go's `net`).
//! This file only declares the modules and names the API.

mod async_preempt;
mod chan;
/// The unit tests that start the scheduler take this first: the test
/// binary runs tests in parallel, and one main goroutine runs at a time.
#[cfg(test)]
pub(crate) static ONE_RUN_IN_TESTS: std::sync::Mutex<()> = std::sync::Mutex::new(());

mod chanlock;
mod config;
mod contention;
mod deadlock;
mod dump;
mod fault;
mod fork;
mod g;
mod goroutine;
mod idle;
mod membar;
#[cfg(loom)]
#[doc(hidden)]
pub mod model;
pub mod net;
pub(crate) mod netpoll;
mod park;
pub(crate) mod pollfd;
pub mod pprof;
mod preempt;
mod prim;
mod procs;
mod program;
mod rand;
mod runq;
mod scan;
mod sched;
mod select;
mod sema;
mod spawn;
mod stack;
mod stw;
mod sync;
mod syscall;
mod sysmon;
mod time;
mod timer;
mod trace;
mod wait;

#[cfg(all(test, feature = "precise"))]
mod precise_tests;

#[cfg(feature = "test-hooks")]
#[doc(hidden)]
pub use self::async_preempt::hooks as async_preempt_hooks;
pub use self::async_preempt::{
    async_preemption, preempt_counts, preempt_text, PreemptCounts, Refusal,
};
pub(crate) use self::chan::block_forever;
pub use self::chan::{Chan, TryRecv, MAX_ELEM_SIZE};
pub(crate) use self::chan::{ChanError, RawChan, Received};
pub(crate) use self::config::scheduler as start_scheduler;
pub use self::config::{
    gomaxprocs, init_with, Config, ConfigError, DEFAULT_STACK_SIZE, MAX_STACK_SIZE, MIN_STACK_SIZE,
};
pub use self::contention::{
    set_block_profile_rate, set_mutex_profile_fraction, write_block_profile,
    write_block_profile_to, write_mutex_profile, write_mutex_profile_to,
};
pub(crate) use self::deadlock::release_external as release_external_hold;
pub use self::deadlock::ExternalWaker;
pub use self::dump::{stack, stack_into, write_goroutine_profile, write_goroutine_profile_to};
pub use self::goroutine::{
    enter_syscall, exit_syscall, goid, gosched, local, lock_os_thread, num_goroutine, park,
    set_local, stack_usage, syscall, unlock_os_thread, Goroutine, LOCAL_WORDS,
};
pub(crate) use self::goroutine::{enter_syscall_from, locals_ptr, park_unlock};
#[doc(hidden)]
pub use self::idle::sched_state;
pub use self::membar::exit_without_fence as syscall_exit_without_fence;
pub(crate) use self::preempt::check_slow as preempt_check;
pub use self::preempt::preempt_point;
pub(crate) use self::program::run_main;
pub use self::select::Select;
pub(crate) use self::select::{select as select_raw, Case as SelectCase, Chosen, Dir};
pub use self::spawn::{go, main, run, MAX_C_ARGS};
pub(crate) use self::spawn::{go_c, CGoFn};
pub use self::stw::set_gomaxprocs;
pub use self::sync::{Cond, Mutex, Once, RwMutex, WaitGroup};
pub use self::sysmon::{sched_stats, SchedStats};
pub(crate) use self::time::sleep_ns;
pub(crate) use self::time::timer_reset;
pub use self::time::{after, sleep, Timer};
pub(crate) use self::timer::{stop as timer_stop, Timer as RawTimer};
pub use self::trace::{start_trace, stop_trace};
