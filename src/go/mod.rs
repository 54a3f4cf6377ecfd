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
//! What is and is not preempted: scheduling is cooperative. A goroutine
//! switches out only in runtime calls: [`gosched`], [`park`], the channel,
//! lock and sleep operations built on them, and [`exit_syscall`]. A
//! goroutine that loops without such calls keeps its worker (the others
//! keep running the rest). A goroutine about to block its thread (a system
//! call, native code, a lock of another library) says so with
//! [`enter_syscall`] / [`exit_syscall`] (or [`syscall`]): its worker's
//! processor goes to another thread meanwhile, so nothing starves.
//!
//! Layout: `g.rs` (the goroutine struct, its coroutine, switches),
//! `stack.rs` (the stack pool), `sched.rs` (workers, processors, run
//! queues, stealing, `schedule()`), `idle.rs` (how an idle worker blocks
//! until woken or a deadline), `syscall.rs` (system calls: handing the
//! processor over), `fork.rs` (the fork hooks), `scan.rs` (how bdwgc
//! scans goroutine stacks), `chan.rs`, `select.rs` and `wait.rs`
//! (channels, select, and the wait records and queues under them),
//! `prim.rs` (the waiting protocol's primitives, loom's under
//! `cfg(loom)`), `model.rs` (the loom model's API), `sync.rs` and
//! `sema.rs` (mutexes, wait groups, the semaphore), `timer.rs` (sleeps
//! and timers), `rand.rs` (select and steal orders), `deadlock.rs` (Go's
//! deadlock report), `fault.rs` (stack overflows).

mod chan;
mod deadlock;
mod fault;
mod fork;
mod g;
mod idle;
#[cfg(loom)]
#[doc(hidden)]
pub mod model;
pub mod net;
pub(crate) mod netpoll;
pub(crate) mod pollfd;
mod prim;
mod rand;
mod scan;
mod sched;
mod select;
mod sema;
mod stack;
mod sync;
mod syscall;
mod timer;
mod wait;

#[cfg(all(test, feature = "precise"))]
mod precise_tests;

pub(crate) use self::chan::block_forever;
pub use self::chan::{Chan, TryRecv, MAX_ELEM_SIZE};
pub(crate) use self::chan::{ChanError, RawChan, Received};
pub use self::select::Select;
pub(crate) use self::select::{select as select_raw, Case as SelectCase, Chosen, Dir};
pub use self::sync::{Cond, Mutex, Once, RwMutex, WaitGroup};
pub(crate) use self::timer::{reset as timer_reset, stop as timer_stop, Timer as RawTimer};

use self::g::G;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Condvar;

/// Settings of the scheduler, applied by [`init_with`] (or defaults when
/// the first goroutine starts).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Config {
    /// Processors: goroutines running at once (Go's `GOMAXPROCS`). `None`:
    /// the `GOMAXPROCS` environment variable, else the available cores.
    pub max_procs: Option<usize>,
    /// Bytes of stack per goroutine (address space; only touched pages
    /// cost memory). `None`: `DEFERGC_STACK_SIZE` (bytes, or with a `KiB`
    /// / `MiB` suffix), else [`DEFAULT_STACK_SIZE`].
    pub stack_size: Option<usize>,
}

/// The default stack of a goroutine: 256 KiB of address space.
pub const DEFAULT_STACK_SIZE: usize = 256 << 10;
/// The smallest stack a goroutine can have.
pub const MIN_STACK_SIZE: usize = 16 << 10;
/// The largest stack a goroutine can have.
pub const MAX_STACK_SIZE: usize = 1 << 30;

impl Config {
    /// Everything from the environment or the defaults.
    pub const DEFAULT: Config = Config {
        max_procs: None,
        stack_size: None,
    };
}

impl Default for Config {
    fn default() -> Config {
        Config::DEFAULT
    }
}

/// Why [`init_with`] refused a configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConfigError {
    /// The scheduler already runs (its first goroutine started).
    AlreadyStarted,
    /// A setting is out of range: the message says which and why.
    Invalid(String),
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConfigError::AlreadyStarted => f.write_str(
                "defergc: the goroutine scheduler already runs; configure it before the first goroutine",
            ),
            ConfigError::Invalid(why) => write!(f, "defergc: {why}"),
        }
    }
}

impl std::error::Error for ConfigError {}

static CONFIG: std::sync::Mutex<Option<Config>> = std::sync::Mutex::new(None);

/// Configures the scheduler before its first goroutine starts.
pub fn init_with(config: Config) -> Result<(), ConfigError> {
    if sched::get().is_some() {
        return Err(ConfigError::AlreadyStarted);
    }
    settings_of(&config)?;
    *CONFIG.lock().unwrap_or_else(|e| e.into_inner()) = Some(config);
    Ok(())
}

/// The settings `config` gives, checked.
fn settings_of(config: &Config) -> Result<sched::Settings, ConfigError> {
    let procs = match config.max_procs {
        Some(n) => n,
        None => match std::env::var("GOMAXPROCS") {
            Ok(v) => match v.trim().parse::<usize>() {
                Ok(n) if n >= 1 => n,
                // Go ignores a GOMAXPROCS it cannot use.
                _ => default_procs(),
            },
            Err(_) => default_procs(),
        },
    };
    if procs == 0 || procs > 1024 {
        return Err(ConfigError::Invalid(format!(
            "GOMAXPROCS {procs} is out of range (1 to 1024)"
        )));
    }
    let stack_size = match config.stack_size {
        Some(n) => n,
        None => match std::env::var("DEFERGC_STACK_SIZE") {
            Ok(v) => parse_size(&v).ok_or_else(|| {
                ConfigError::Invalid(format!(
                    "DEFERGC_STACK_SIZE={v:?} is not a size (bytes, or with KiB or MiB)"
                ))
            })?,
            Err(_) => DEFAULT_STACK_SIZE,
        },
    };
    if !(MIN_STACK_SIZE..=MAX_STACK_SIZE).contains(&stack_size) {
        return Err(ConfigError::Invalid(format!(
            "a goroutine stack of {stack_size} bytes is out of range ({MIN_STACK_SIZE} to {MAX_STACK_SIZE})"
        )));
    }
    Ok(sched::Settings { procs, stack_size })
}

fn default_procs() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Parses `123`, `64KiB`, `8MiB` (bytes).
fn parse_size(v: &str) -> Option<usize> {
    let v = v.trim();
    let (digits, unit) = match v.find(|c: char| !c.is_ascii_digit()) {
        Some(i) => v.split_at(i),
        None => (v, ""),
    };
    let n: usize = digits.parse().ok()?;
    let scale = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        _ => return None,
    };
    n.checked_mul(scale)
}

/// The scheduler, started on first use.
fn scheduler() -> &'static sched::Sched {
    sched::start(
        || {
            let config = CONFIG
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .unwrap_or_default();
            let settings = settings_of(&config).unwrap_or_else(|e| crate::abort(&e.to_string()));
            fault::install(settings.stack_size);
            install_panic_hook();
            crate::defer::traceback::set_others(other_goroutines);
            settings
        },
        fork::install,
    )
}

/// Goroutines report their own unrecovered panics (Go's text), and Go
/// prints nothing when a panic starts or is recovered: the Rust panic
/// message is kept for threads that are not running a goroutine.
fn install_panic_hook() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if sched::current_g().is_none() {
            previous(info);
        }
    }));
}

// ---- the main goroutine --------------------------------------------------

static MAIN: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
static MAIN_DONE: Condvar = Condvar::new();
static MAIN_GOEXIT: AtomicBool = AtomicBool::new(false);
static MAIN_RUNNING: AtomicBool = AtomicBool::new(false);

/// The report of the main goroutine's unrecovered panic, for [`run`].
static MAIN_PANIC: std::sync::Mutex<Option<String>> = std::sync::Mutex::new(None);

/// Runs `main` as the program's main goroutine and waits until it returns;
/// returns the exit status, 0. Other goroutines are not waited for: as in
/// Go, the program is over when main returns. If `main` calls Goexit, the
/// other goroutines run on; when none is left the process ends with Go's
/// "no goroutines (main called runtime.Goexit) - deadlock!" (status 2).
///
/// An unrecovered panic in another goroutine ends the process with Go's
/// report and status 2, as in Go. One in `main` itself comes back to the
/// caller of `run` as a Rust panic whose message is Go's report (so a test
/// fails as tests do); [`main`] ends the process the Go way instead.
///
/// One main goroutine at a time: a second concurrent `run` aborts with a
/// `defergc:` message.
pub fn run<F: FnOnce() + Send + 'static>(main: F) -> i32 {
    let report = run_main(|| {
        spawn(true, move || match crate::defer::outermost_body(main) {
            crate::defer::Ended::Returned(()) => {}
            crate::defer::Ended::Goexit => MAIN_GOEXIT.store(true, Ordering::SeqCst),
            crate::defer::Ended::Panicked(report) => {
                // The report goes to run's caller: the process goes on.
                crate::defer::not_dying();
                *MAIN_PANIC.lock().unwrap_or_else(|e| e.into_inner()) = Some(report);
            }
        });
    });
    if let Some(report) = report {
        std::panic::resume_unwind(Box::new(report));
    }
    0
}

/// How long a returning main waits for another goroutine's panic that is
/// running its deferred calls (Go yields 1000 times; deferred calls of
/// compiled code may take longer than that, so a second).
const PANIC_PATIENCE: std::time::Duration = std::time::Duration::from_secs(1);

/// Starts the main goroutine with `start` and waits until it has
/// finished; returns the report of its unrecovered panic, if it left one.
pub(crate) fn run_main(start: impl FnOnce()) -> Option<String> {
    if MAIN_RUNNING.swap(true, Ordering::AcqRel) {
        crate::abort("defergc: a second main goroutine while one runs (go::run or defergc_main)");
    }
    *MAIN.lock().unwrap_or_else(|e| e.into_inner()) = false;
    start();
    let mut done = MAIN.lock().unwrap_or_else(|e| e.into_inner());
    while !*done {
        done = MAIN_DONE.wait(done).unwrap_or_else(|e| e.into_inner());
    }
    drop(done);
    // As Go's runtime.main: a panic in another goroutine that is running
    // its deferred calls is waited for (a while), and one whose report is
    // being made, forever: that goroutine ends the process with status 2.
    crate::defer::wait_for_panics(PANIC_PATIENCE);
    MAIN_RUNNING.store(false, Ordering::Release);
    MAIN_PANIC.lock().unwrap_or_else(|e| e.into_inner()).take()
}

/// Runs `main` as the program's main goroutine, Go's way: returns when it
/// returns (status 0); an unrecovered panic in any goroutine, `main`
/// included, prints Go's report and ends the process with status 2.
/// Faults in compiled code become Go panics
/// ([`crate::defer::catch_faults`]) unless the program turned that off
/// before.
pub fn main<F: FnOnce() + Send + 'static>(main: F) -> i32 {
    crate::defer::catch_faults_by_default();
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run(main)));
    match result {
        Ok(status) => status,
        Err(payload) => {
            let report = payload
                .downcast::<String>()
                .map(|s| *s)
                .unwrap_or_else(|_| "panic: (unknown)".into());
            panicked(&report)
        }
    }
}

/// The main goroutine finished (its worker says so).
fn main_finished() {
    if MAIN_GOEXIT.load(Ordering::SeqCst) {
        // Go runs the other goroutines on; the deadlock check ends the
        // program when none is left.
        return;
    }
    *MAIN.lock().unwrap_or_else(|e| e.into_inner()) = true;
    MAIN_DONE.notify_all();
}

fn main_done() -> bool {
    *MAIN.lock().unwrap_or_else(|e| e.into_inner())
}

fn main_goexited() -> bool {
    MAIN_GOEXIT.load(Ordering::SeqCst)
}

fn timers_pending() -> bool {
    timer::pending()
}

fn queued() -> bool {
    sched::any_queued()
}

/// The processors if the scheduler runs, else 1 (no other processor to
/// spin for).
fn gomaxprocs_started() -> usize {
    sched::get().map_or(1, |s| s.procs())
}

/// The goroutines that wait, with why (for a fatal error's list).
/// `GOTRACEBACK=all`'s addition to a report: every other goroutine that
/// waits, Go's header for each.
fn other_goroutines(running: u64) -> String {
    waiting_goroutines()
        .into_iter()
        .filter(|&(id, _)| id != running)
        .map(|(id, reason)| format!("\ngoroutine {id} [{reason}]:\n"))
        .collect()
}

fn waiting_goroutines() -> Vec<(u64, &'static str)> {
    let mut list = Vec::new();
    let geometry = stack::geometry();
    stack::for_each_live(|slot| {
        // SAFETY: a live slot holds a goroutine.
        let g = unsafe { G::of(slot, &geometry) };
        if g.state() == g::WAITING {
            let reason = match g.wait_reason.get() {
                "" => "waiting",
                r => r,
            };
            list.push((g.id(), reason));
        }
    });
    list.sort();
    list
}

// ---- starting goroutines -----------------------------------------------

/// Go's `go f()`: starts `f` as a new goroutine. An unrecovered panic in
/// it prints Go's report and ends the process with status 2.
pub fn go<F: FnOnce() + Send + 'static>(f: F) {
    spawn(false, move || report_unrecovered(f));
}

/// Runs a goroutine's body; an unrecovered panic ends the process, as Go's
/// does.
fn report_unrecovered<F: FnOnce()>(f: F) {
    if let crate::defer::Ended::Panicked(report) = crate::defer::outermost_body(f) {
        panicked(&report);
    }
}

/// Prints Go's report of an unrecovered panic in goroutine `id` and ends
/// the process with status 2.
fn panicked(report: &str) -> ! {
    crate::defer::exit_go(report)
}

/// Largest argument block of a C goroutine (`defergc_go`).
pub const MAX_C_ARGS: usize = 64 << 10;

/// A goroutine entry point of compiled code: called with its argument
/// bytes (a copy, scanned by the collectors while the goroutine lives).
pub(crate) type CGoFn = unsafe extern "C-unwind" fn(args: *mut u8);

/// Starts a goroutine that runs `f` with a copy of the `len` bytes at
/// `args` (`defergc_go`, `defergc_main`). Arguments up to
/// `g::INLINE_ARGS` bytes live in the goroutine's header, larger ones in
/// root memory, freed when the goroutine ends.
///
/// # Safety
/// `args` points to `len` readable bytes (`len <= MAX_C_ARGS`); `f` may be
/// called with a pointer to a copy of them on any worker thread.
pub(crate) unsafe fn go_c(f: CGoFn, args: *const u8, len: usize, main: bool) {
    debug_assert!(len <= MAX_C_ARGS);
    let block = (len > g::INLINE_ARGS).then(|| crate::roots::alloc_block(len));
    let block_addr = block.map_or(0, |b| b.as_ptr() as usize);
    let body = move || {
        let g = sched::current_g().expect("running in its goroutine");
        let copy = if block_addr != 0 {
            block_addr as *mut u8
        } else {
            g.args.get().cast::<u8>()
        };
        // SAFETY: the copy was written before the goroutine was queued;
        // the caller vouched for f.
        let ended = crate::defer::outermost_body(|| unsafe { f(copy) });
        if let Some(b) = std::ptr::NonNull::new(block_addr as *mut u8) {
            // SAFETY: the block was allocated above and is freed once.
            unsafe { crate::roots::free_block(b) };
        }
        match ended {
            crate::defer::Ended::Panicked(report) => panicked(&report),
            crate::defer::Ended::Goexit if main => MAIN_GOEXIT.store(true, Ordering::SeqCst),
            _ => {}
        }
    };
    let g = prepare(main, body);
    let to = if block_addr != 0 {
        block_addr as *mut u8
    } else {
        g.args.get().cast::<u8>()
    };
    if len > 0 {
        // SAFETY: `to` has room for len bytes (the header's area or the
        // block); the caller guarantees args is readable.
        unsafe { std::ptr::copy_nonoverlapping(args, to, len) };
    }
    launch(g);
}

fn spawn<F: FnOnce() + 'static>(is_main: bool, body: F) -> &'static G {
    let g = prepare(is_main, body);
    launch(g);
    g
}

/// A new goroutine that runs `body`, not queued yet.
fn prepare<F: FnOnce() + 'static>(is_main: bool, body: F) -> &'static G {
    scheduler();
    let geometry = stack::geometry();
    let slot = stack::take(sched::current_m().is_some());
    let g = G::init(slot, &geometry, body);
    g.is_main.set(is_main);
    g
}

/// Makes a prepared goroutine live and runnable.
fn launch(g: &'static G) {
    let s = scheduler();
    // A plain thread (go::run starting main, compiled code's first
    // defergc_go) may be preempted between counting the goroutine and
    // queuing it, while every worker parks: the deadlock check must see
    // that a goroutine is on its way (a worker that launches is not
    // parked, so it needs no such mark).
    let foreign = sched::current_m().is_none();
    if foreign {
        s.launching.fetch_add(1, Ordering::SeqCst);
    }
    s.goroutines.fetch_add(1, Ordering::SeqCst);
    stack::set_live(g.slot, true);
    sched::runqput(g, true);
    if foreign {
        s.launching.fetch_sub(1, Ordering::SeqCst);
    } else {
        sched::yield_if_far_ahead();
    }
}

// ---- from inside a goroutine ---------------------------------------------

/// Go's `runtime.Gosched()`: lets other goroutines run. Outside a
/// goroutine, yields the thread.
pub fn gosched() {
    match sched::current_g() {
        Some(g) => sched::gosched(g),
        None => std::thread::yield_now(),
    }
}

/// The running goroutine's id (Go's goid; the main goroutine of a program
/// whose first call was [`run`] is 1), or 0 outside a goroutine.
pub fn goid() -> u64 {
    sched::current_g().map_or(0, G::id)
}

/// A goroutine, for [`park`] / [`Goroutine::ready`]: the primitive a
/// language's own channels and locks build on. Holds the goroutine's
/// identity, so a handle kept past the goroutine's end wakes nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Goroutine {
    g: *const G,
    tag: u64,
}

// SAFETY: a handle is an address and a tag; ready checks the tag against
// the goroutine's status word (atomic) before anything else.
unsafe impl Send for Goroutine {}
// SAFETY: as above.
unsafe impl Sync for Goroutine {}

impl Goroutine {
    /// The goroutine a C handle names, if `g` is the address of a
    /// goroutine's struct (anything else is refused, never read).
    pub(crate) fn from_raw(g: *const u8, id: u64) -> Option<Goroutine> {
        stack::slot_of_header(g as usize)?;
        Some(Goroutine {
            g: g.cast(),
            tag: g::tag_of(id),
        })
    }

    /// The address of the goroutine's struct (the C handle's `g`).
    pub(crate) fn as_raw(self) -> *const u8 {
        self.g.cast()
    }

    /// The running goroutine, or `None` outside one.
    pub fn current() -> Option<Goroutine> {
        sched::current_g().map(|g| Goroutine { g, tag: g.tag() })
    }

    /// Its id.
    pub fn id(self) -> u64 {
        self.tag >> 32
    }

    /// Asks the processor for the goroutine's status line (a hint).
    pub(crate) fn prefetch(&self) {
        // SAFETY: only the field's address is computed (nothing is read);
        // headers stay mapped for the life of the process.
        crate::cache::prefetch(unsafe { std::ptr::addr_of!((*self.g).status) });
    }

    /// Makes it runnable: if it is parked, it runs again; if not yet, its
    /// next [`park`] returns at once. Returns false (and does nothing) if
    /// the goroutine has ended. Callable from any thread.
    pub fn ready(self) -> bool {
        // SAFETY: goroutine headers live in stack slots, which stay mapped
        // for the life of the process; the tag check makes a stale handle
        // harmless.
        sched::ready(unsafe { &*self.g }, self.tag)
    }
}

/// Parks the running goroutine as [`park`] does, and runs `unlock(arg)`
/// once it has switched out (Go's `gopark` with an unlock function): a
/// waiter that joined a wait queue under a lock releases the lock there,
/// so its waker (which takes the lock) finds it parked. Returns false
/// outside a goroutine (after running `unlock`).
///
/// # Safety
/// `unlock` may be called with `arg` on the worker thread, after the
/// goroutine switched out.
pub(crate) unsafe fn park_unlock(
    reason: &'static str,
    unlock: unsafe fn(*mut u8),
    arg: *mut u8,
) -> bool {
    match sched::current_g() {
        Some(g) => {
            sched::park(g, reason, Some(g::Unlock { f: unlock, arg }));
            true
        }
        None => {
            // SAFETY: the caller's unlock, run as promised.
            unsafe { unlock(arg) };
            false
        }
    }
}

/// Parks the running goroutine until another readies it
/// ([`Goroutine::ready`]). As with a futex, a ready that came first makes
/// this return at once, so callers wait in a loop on their own condition.
/// `reason` is what a deadlock report says it waits for ("chan receive").
///
/// # Panics
/// Outside a goroutine: there is nothing to switch to (a `defergc:`
/// message).
pub fn park(reason: &'static str) {
    match sched::current_g() {
        Some(g) => sched::park(g, reason, None),
        None => panic!("defergc: go::park outside a goroutine"),
    }
}

/// Declares that the running goroutine is about to block its thread (a
/// system call, native code): its worker's processor goes to another
/// thread meanwhile. Pair with [`exit_syscall`]. Does nothing outside a
/// goroutine.
pub fn enter_syscall() {
    if let Some(g) = sched::current_g() {
        syscall::enter_syscall(g);
    }
}

/// Ends [`enter_syscall`]: the goroutine takes a processor again (and may
/// wait for one).
pub fn exit_syscall() {
    if let Some(g) = sched::current_g() {
        syscall::exit_syscall(g);
    }
}

/// Runs `f` between [`enter_syscall`] and [`exit_syscall`].
pub fn syscall<R>(f: impl FnOnce() -> R) -> R {
    enter_syscall();
    let r = f();
    exit_syscall();
    r
}

/// Goroutine-local words: each goroutine has [`LOCAL_WORDS`] of them,
/// zero at start, scanned by the collectors (a pointer stored there keeps
/// its object alive while the goroutine lives).
pub const LOCAL_WORDS: usize = g::LOCALS;

/// The running goroutine's local word `i`, or `None` outside a goroutine
/// or for `i >= LOCAL_WORDS`.
pub fn local(i: usize) -> Option<usize> {
    sched::current_g()
        .and_then(|g| g.locals.get(i))
        .map(|c| c.get())
}

/// Sets the running goroutine's local word `i`; false outside a goroutine
/// or for `i >= LOCAL_WORDS`.
pub fn set_local(i: usize, value: usize) -> bool {
    match sched::current_g().and_then(|g| g.locals.get(i)) {
        Some(c) => {
            c.set(value);
            true
        }
        None => false,
    }
}

/// The running goroutine's local words (for the C ABI), or null.
pub(crate) fn locals_ptr() -> *mut usize {
    sched::current_g().map_or(std::ptr::null_mut(), |g| g.locals.as_ptr() as *mut usize)
}

/// Ends one hold of `defergc_external_hold`.
pub(crate) fn release_external_hold() {
    deadlock::release_external();
}

/// Goroutine stacks in use, and the bytes of address space mapped for
/// them (only touched pages cost memory).
pub fn stack_usage() -> (usize, usize) {
    stack::usage()
}

/// Goroutines alive now (Go's `runtime.NumGoroutine`).
pub fn num_goroutine() -> usize {
    sched::get().map_or(0, |s| s.goroutines.load(Ordering::Acquire))
}

/// The number of processors (Go's `runtime.GOMAXPROCS(0)`); starts the
/// scheduler if needed.
pub fn gomaxprocs() -> usize {
    scheduler().procs()
}

/// Go's `time.Sleep`: a goroutine parks until the time has passed (its
/// worker runs others meanwhile); a plain thread sleeps.
pub fn sleep(d: std::time::Duration) {
    timer::sleep(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
}

/// Go's `time.Sleep(ns)` in nanoseconds (non-positive: no wait).
pub(crate) fn sleep_ns(ns: i64) {
    timer::sleep(ns);
}

/// Go's `time.NewTimer`: delivers the time (nanoseconds since 1970) on its
/// channel once `d` has passed, unless stopped first.
pub struct Timer {
    inner: std::sync::Arc<TimerInner>,
}

#[repr(C)]
struct TimerInner {
    timer: timer::Timer,
    chan: Chan<i64>,
}

// SAFETY: the timer's own fields are atomics, its channel pointer names
// `chan` (Sync); the timer heap touches it only under its lock.
unsafe impl Send for TimerInner {}
// SAFETY: as above.
unsafe impl Sync for TimerInner {}

/// Drops the heap's reference to a Rust timer.
///
/// # Safety
/// `t` is the `timer` field of a `TimerInner` whose Arc the heap held.
unsafe fn release_rust_timer(t: *const timer::Timer) {
    // SAFETY: timer is the first field of the repr(C) TimerInner... see
    // Timer::arm: the heap's reference is an Arc::into_raw of the inner.
    drop(unsafe { std::sync::Arc::from_raw(t.cast::<TimerInner>()) });
}

impl Timer {
    /// A timer that fires after `d`.
    pub fn new(d: std::time::Duration) -> Timer {
        let chan = Chan::<i64>::new(1);
        let raw = chan.raw().expect("not nil") as *const RawChan;
        let inner = std::sync::Arc::new(TimerInner {
            timer: timer::Timer::new(raw, Some(release_rust_timer)),
            chan,
        });
        let t = Timer { inner };
        t.reset(d);
        t
    }

    /// Its channel.
    pub fn chan(&self) -> &Chan<i64> {
        &self.inner.chan
    }

    /// Go's `Stop`: true if it was pending (it will not fire).
    pub fn stop(&self) -> bool {
        // SAFETY: the inner lives while self does.
        unsafe { timer::stop(&self.inner.timer) }
    }

    /// Go's `Reset`: fire `d` from now; true if it was pending.
    pub fn reset(&self, d: std::time::Duration) -> bool {
        // The heap holds a reference while the firing is pending.
        let held = std::sync::Arc::into_raw(self.inner.clone());
        let ns = i64::try_from(d.as_nanos()).unwrap_or(i64::MAX);
        // SAFETY: the inner stays alive through the heap's reference.
        unsafe { timer::reset(&(*held).timer, ns) }
    }
}

/// Go's `time.After(d)`: a channel that receives the time once `d` has
/// passed.
pub fn after(d: std::time::Duration) -> Chan<i64> {
    Timer::new(d).chan().clone()
}

/// While it lives, code outside the goroutines (a foreign thread, a C
/// library's callback) may ready a goroutine, so parked goroutines are not
/// a deadlock.
#[must_use = "the hold ends when dropped"]
pub struct ExternalWaker(());

impl ExternalWaker {
    /// Starts a hold.
    pub fn hold() -> ExternalWaker {
        deadlock::hold_external();
        ExternalWaker(())
    }
}

impl Drop for ExternalWaker {
    fn drop(&mut self) {
        deadlock::release_external();
    }
}
