//! Starting goroutines: Go's `go` statement ([`go`], and [`go_c`] for
//! compiled code's entry points), and the program's main goroutine
//! ([`run`], [`main`]; its life is `program.rs`'s). A new goroutine gets a
//! stack slot, its header and its body (`g.rs`), and is queued on the
//! scheduler, started on first use (`config.rs`).

use super::config::scheduler;
use super::g::{self, G};
use super::program::{self, panicked};
use super::{procs, sched, stack};
use std::sync::atomic::Ordering;

/// Go's `go f()`: starts `f` as a new goroutine. An unrecovered panic in
/// it prints Go's report and ends the process with status 2.
#[inline(never)]
pub fn go<F: FnOnce() + Send + 'static>(f: F) {
    // (Never inlined: its frame record holds the return into the caller,
    // the `created by` of a dump.)
    let created = crate::unwind::return_address();
    spawn(false, created, move || report_unrecovered(f));
}

/// Runs a goroutine's body; an unrecovered panic ends the process, as Go's
/// does.
fn report_unrecovered<F: FnOnce()>(f: F) {
    if let crate::defer::Ended::Panicked(report) = crate::defer::outermost_body(f) {
        panicked(&report);
    }
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
/// `created_pc` is the return address into the code that asked (a dump's
/// `created by`).
pub(crate) unsafe fn go_c(f: CGoFn, args: *const u8, len: usize, main: bool, created_pc: usize) {
    debug_assert!(len <= MAX_C_ARGS);
    let block = (len > g::INLINE_ARGS).then(|| crate::roots::alloc_block(len));
    let block_addr = block.map_or(0, |b| b.as_ptr() as usize);
    let body = move || {
        let g = procs::current_g().expect("running in its goroutine");
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
            crate::defer::Ended::Goexit if main => program::main_called_goexit(),
            _ => {}
        }
    };
    let g = prepare(main, created_pc, body);
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

/// Starts `body` as a goroutine (the main one if `is_main`) created at
/// `created_pc`.
fn spawn<F: FnOnce() + 'static>(is_main: bool, created_pc: usize, body: F) -> &'static G {
    let g = prepare(is_main, created_pc, body);
    launch(g);
    g
}

/// A new goroutine that runs `body`, not queued yet, created at
/// `created_pc` by the running goroutine (if any).
fn prepare<F: FnOnce() + 'static>(is_main: bool, created_pc: usize, body: F) -> &'static G {
    scheduler();
    let geometry = stack::geometry();
    let slot = stack::take(procs::current_m().is_some());
    // (A thread that is not a goroutine gets no context for this: that
    // would take an id. Go prints no "in goroutine" for creator 0.)
    let creator = procs::current_g().map_or(0, |g| g.id());
    let g = G::init(slot, &geometry, (created_pc, creator), body);
    g.is_main.set(is_main);
    super::pprof::inherit(&g.ctx);
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
    let m = procs::current_m();
    let foreign = m.is_none();
    if foreign {
        s.launching.fetch_add(1, Ordering::SeqCst);
    }
    s.count_goroutine(m, 1);
    stack::set_live(g.slot, true);
    super::trace::created(g);
    sched::runqput(g, true);
    if foreign {
        s.launching.fetch_sub(1, Ordering::SeqCst);
    } else {
        sched::yield_if_far_ahead();
    }
}

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
    let report = program::run_main(|| {
        spawn(true, 0, move || match crate::defer::outermost_body(main) {
            crate::defer::Ended::Returned(()) => {}
            crate::defer::Ended::Goexit => program::main_called_goexit(),
            crate::defer::Ended::Panicked(report) => {
                // The report goes to run's caller: the process goes on.
                crate::defer::not_dying();
                program::main_panicked(report);
            }
        });
    });
    if let Some(report) = report {
        // Through the panic hook (unlike resume_unwind), so that a test
        // harness shows the report.
        std::panic::panic_any(report);
    }
    0
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
