//! Panics, Goexit and recover: the state machine of a context's panic
//! records (their type is in `state.rs`, their values in `value.rs`).
//!
//! Each execution context keeps a stack of panic records, newest first (Go's
//! `g._panic` chain). A record is pushed when a panic (or Goexit) starts and
//! popped when a recovery completes or the thread's outermost frame gives
//! up. Rules, after Go's runtime:
//!
//! - A deferred call remembers the record whose unwinding runs it (null on
//!   a normal return). `recover` succeeds only with that call's own token,
//!   while that record is the newest one, live, not recovered, not aborted
//!   and not a Goexit. Helpers never get the token, so recover "called
//!   directly by a deferred call" holds by construction.
//! - A panic that escapes a deferred call run by an older record aborts the
//!   older one: it can never be recovered, but stays for the report.
//! - When a recovering call returns, its record is popped, and so are the
//!   aborted records beneath it, up to a Goexit record, which is never
//!   cancelled: the frame then keeps unwinding for Goexit.
//!
//! Frames unwind from
//! one to the next with a private payload ([`Unwind`]); only the thread's
//! outermost frame turns an unrecovered panic into an ordinary Rust panic
//! whose message is the Go-style chain.

use super::state::{free_all, recount, DeferState, PanicRec};
use super::value::{Goexit, Key, PanicValue, Recovered, RuntimeError};
use std::any::Any;
use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicUsize, Ordering};

fn push(
    th: &DeferState,
    value: Option<PanicValue>,
    goexit: bool,
    site: super::traceback::Origin,
) -> *mut PanicRec {
    let key = value.as_ref().map(|v| v.key);
    let mut rec = th.spare.replace(ptr::null_mut());
    if rec.is_null() {
        rec = Box::into_raw(Box::new(PanicRec {
            link: Cell::new(ptr::null_mut()),
            value: None,
            key: None,
            trace: None,
            signal: None,
            text: Recovered::Nothing,
            recovered: false,
            aborted: false,
            goexit: false,
        }));
    }
    // SAFETY: a record no chain links (new, or the reset spare): only this
    // thread holds it. Its fields are filled where it lies, the trace's
    // entries too, so nothing of its size is copied.
    let r = unsafe { &mut *rec };
    r.link.set(th.panics.get());
    r.value = value;
    r.key = key;
    if goexit {
        r.trace = None;
    } else {
        r.trace
            .get_or_insert_with(Default::default)
            .capture_into(site, th.frame_origins());
    }
    r.goexit = goexit;
    th.panics.set(rec);
    recount(th);
    rec
}

/// Takes `rec`, unlinked from its chain, out of use: it becomes the
/// state's spare record if there is none, reset, or is freed. What it held
/// is dropped last, once the record is parked (a value's destructor may
/// panic again, and push).
///
/// # Safety
/// `rec` is a record of `th` that no chain links any more.
unsafe fn release(th: &DeferState, rec: *mut PanicRec) {
    if !th.spare.get().is_null() {
        // SAFETY: every record comes from Box::into_raw in push, and the
        // caller gives this one up.
        drop(unsafe { Box::from_raw(rec) });
        return;
    }
    // SAFETY: the caller's: the record is ours alone.
    let r = unsafe { &mut *rec };
    let held = (
        r.value.take(),
        std::mem::replace(&mut r.text, Recovered::Nothing),
    );
    r.link.set(ptr::null_mut());
    r.key = None;
    r.signal = None;
    r.recovered = false;
    r.aborted = false;
    r.goexit = false;
    th.spare.set(rec);
    drop(held);
}

/// Unrecovered panics whose final report is being made: the process ends
/// with status 2 once it is printed. Go's `panicking`, on which a
/// returning main parks forever.
static DYING: AtomicUsize = AtomicUsize::new(0);

/// An unrecovered panic's final report begins: the process will end with
/// it (see [`DYING`]).
pub(crate) fn dying() {
    DYING.fetch_add(1, Ordering::SeqCst);
}

/// A report counted by [`dying`] went back to Rust code that does not end
/// the process (`go::run`'s caller gets the main goroutine's report).
pub(crate) fn not_dying() {
    DYING.fetch_sub(1, Ordering::SeqCst);
}

/// What a returning main goroutine waits for, as Go's `runtime.main`
/// does before it exits: while another goroutine's panic runs its
/// deferred calls, up to `patience`; then, if a panic's report is being
/// made, forever (that goroutine ends the process with status 2).
pub(crate) fn wait_for_panics(patience: std::time::Duration) {
    let start = std::time::Instant::now();
    while super::state::panicking() != 0
        && DYING.load(Ordering::SeqCst) == 0
        && start.elapsed() < patience
    {
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    if DYING.load(Ordering::SeqCst) != 0 {
        loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        }
    }
}

/// Pops the newest record.
fn pop(th: &DeferState) {
    let rec = th.panics.get();
    if !rec.is_null() {
        // SAFETY: the newest record is ours; unlink then release it.
        unsafe {
            th.panics.set((*rec).link.get());
            release(th, rec);
        }
    }
    recount(th);
}

/// The payload frames unwind each other with. It names nothing: the state
/// is in the thread's panic stack. If foreign code catches and drops it, the
/// records it stood for are popped, so the thread stays consistent.
pub(crate) struct Unwind {
    /// The execution context whose panic stack holds `rec`.
    context: u64,
    rec: *mut PanicRec,
    armed: bool,
}

// SAFETY: the pointer is only dereferenced by the context named by
// `context`, on the thread running it.
unsafe impl Send for Unwind {}

impl Unwind {
    /// Starts (or continues) unwinding for the newest record.
    pub(crate) fn raise(th: &DeferState) -> ! {
        std::panic::resume_unwind(Box::new(Unwind::newest(th)))
    }

    /// An armed payload for the thread's newest record (not yet raised):
    /// dropped armed, it takes the record out of the chain.
    pub(crate) fn newest(th: &DeferState) -> Unwind {
        Unwind {
            context: DeferState::context_id(),
            rec: th.panics.get(),
            armed: true,
        }
    }

    /// Whether this payload stands for the thread's newest record.
    pub(crate) fn is_newest(&self, th: &DeferState) -> bool {
        self.context == DeferState::context_id() && self.rec == th.panics.get()
    }

    /// Takes over the unwinding: the frame now handles the records.
    pub(crate) fn defuse(mut self) {
        self.armed = false;
    }
}

impl Drop for Unwind {
    fn drop(&mut self) {
        if !self.armed {
            return;
        }
        let Some(th) = DeferState::existing() else {
            return;
        };
        if DeferState::context_id() != self.context {
            return;
        }
        // Foreign code stopped the unwinding: forget the record it stood
        // for (and the panics it had aborted), wherever it now sits in the
        // chain; newer records stay. If a goroutine boundary swapped the
        // chain, the record is not found and nothing changes.
        let mut link: &Cell<*mut PanicRec> = &th.panics;
        loop {
            let cur = link.get();
            if cur.is_null() {
                return;
            }
            if cur == self.rec {
                break;
            }
            // SAFETY: cur is a live record of this thread.
            link = unsafe { &(*cur).link };
        }
        // SAFETY: self.rec is a live record of this thread, linked by `link`.
        unsafe {
            if (*self.rec).goexit {
                th.goexiting.set(false);
            }
            let mut below = (*self.rec).link.get();
            drop(Box::from_raw(self.rec));
            while let Some(r) = below.as_ref() {
                if !r.aborted || r.goexit {
                    break;
                }
                let next = r.link.get();
                drop(Box::from_raw(below));
                below = next;
            }
            link.set(below);
        }
        recount(th);
    }
}

/// Starts a Go panic with `value` on this thread, raised at `site`.
pub(crate) fn start(value: PanicValue, site: super::traceback::Origin) -> ! {
    let th = DeferState::current();
    push_value(th, value, site);
    deliver(th)
}

/// Makes `value` the thread's newest panic, raised at `site`, to be
/// delivered.
pub(crate) fn push_value(th: &DeferState, value: PanicValue, site: super::traceback::Origin) {
    push(th, Some(value), false, site);
}

/// Makes `value` the thread's newest panic, raised by the fault `signal`
/// at `site`, to be delivered.
pub(crate) fn push_fault(
    th: &DeferState,
    value: PanicValue,
    site: super::traceback::Origin,
    signal: crate::signal::Fault,
) {
    let rec = push(th, Some(value), false, site);
    // SAFETY: the record was just pushed, and only this thread touches it.
    unsafe { (*rec).signal = Some(signal) };
}

/// Starts Goexit's record (and state), to be delivered.
pub(crate) fn push_goexit(th: &DeferState) {
    th.goexiting.set(true);
    push(th, None, true, super::traceback::Origin::None);
}

/// The goroutine section of the report of the thread's newest panic (see
/// `traceback.rs`), for the context running now.
pub(crate) fn goroutine_section(th: &DeferState, live: bool) -> String {
    // SAFETY: the newest record, if any, is live.
    let trace = unsafe { th.panics.get().as_ref() }.and_then(|r| r.trace.as_ref());
    super::traceback::section(trace, DeferState::context_id(), live)
}

/// Hands the newest record on from Rust code: unwinding, so every Rust
/// frame on the way runs its destructors, up to the innermost frame (or to
/// the `ffi::guard` at a boundary with compiled code, which lands it in a
/// C frame). With no frame left, the thread's outermost frame has given
/// up: see [`leave_outermost`].
pub(crate) fn deliver(th: &DeferState) -> ! {
    if th.frame.get().is_null() {
        leave_outermost(th)
    }
    Unwind::raise(th)
}

/// Raises Go's run-time error for `message`.
pub(crate) fn panic_runtime_error(message: &'static str) -> ! {
    start(
        PanicValue::new(RuntimeError(message)),
        super::traceback::Origin::None,
    )
}

/// Starts Goexit on this thread.
pub(crate) fn start_goexit() -> ! {
    let th = DeferState::current();
    push_goexit(th);
    deliver(th)
}

/// Turns whatever a frame caught into the thread's newest record: ours
/// already is; an ordinary Rust panic gets a record now.
pub(crate) fn adopt(th: &DeferState, payload: Box<dyn Any + Send>) -> *mut PanicRec {
    match payload.downcast::<Unwind>() {
        Ok(unwind) => unwind.defuse(),
        Err(foreign) => {
            push(
                th,
                Some(PanicValue::from_rust(foreign)),
                false,
                super::traceback::Origin::None,
            );
        }
    }
    th.panics.get()
}

/// `recover` for a call run by `rec`'s unwinding: the rule above.
pub(crate) fn recover(th: &DeferState, rec: *mut PanicRec) -> Option<PanicValue> {
    if rec.is_null() || rec != th.panics.get() {
        return None;
    }
    // SAFETY: rec is this thread's newest, live record.
    let rec = unsafe { &mut *rec };
    if rec.recovered || rec.aborted || rec.goexit {
        return None;
    }
    rec.recovered = true;
    let value = rec.value.take()?;
    rec.text = Recovered::of(&value);
    Some(value)
}

/// The value the thread recovered last reached compiled code as the
/// interface value `(ty, data)` (a run-time error, as its message): a
/// re-panic with that value is the same panic to a report (Go's
/// `[recovered, repanicked]`).
pub(crate) fn recovered_as_iface(ty: *const super::render::RType, data: *mut std::ffi::c_void) {
    let Some(th) = DeferState::existing() else {
        return;
    };
    // SAFETY: the newest record, if any, is live and only this thread's.
    if let Some(r) = unsafe { th.panics.get().as_mut() } {
        if r.recovered {
            r.key = Some(Key::Iface(ty as usize, data as usize));
        }
    }
}

/// A panic escaped a deferred call that `ran_for`'s unwinding was running:
/// that older panic (or Goexit) is aborted.
pub(crate) fn abort_older(th: &DeferState, ran_for: *mut PanicRec) {
    if !ran_for.is_null() && ran_for != th.panics.get() {
        // SAFETY: ran_for is still on the stack: records below the newest
        // are only popped by recovery, which cannot have happened while a
        // newer panic was unwinding out of the call.
        unsafe { (*ran_for).aborted = true };
    }
}

/// After a call returned normally while `rec` unwound: if it recovered
/// `rec`, pop it and the aborted records beneath, keeping a Goexit record
/// (un-aborted, so Goexit goes on). Returns whether a recovery completed.
pub(crate) fn finish_recovery(th: &DeferState, rec: *mut PanicRec) -> bool {
    // SAFETY: rec is this thread's newest record when non-null.
    if rec.is_null() || rec != th.panics.get() || unsafe { !(*rec).recovered } {
        return false;
    }
    pop(th);
    loop {
        let cur = th.panics.get();
        // SAFETY: cur is a live record of this thread.
        match unsafe { cur.as_mut() } {
            Some(r) if r.goexit => {
                r.aborted = false;
                break;
            }
            Some(r) if r.aborted => pop(th),
            _ => break,
        }
    }
    true
}

/// The Go-style report of the thread's panic chain, oldest first:
/// `panic: v [recovered]`, later lines tab-indented, Goexit records silent
/// (and the line after one not indented).
pub(crate) fn report(th: &DeferState) -> String {
    let mut chain = Vec::new();
    let mut cur = th.panics.get();
    // SAFETY: walking this thread's live records.
    while let Some(r) = unsafe { cur.as_ref() } {
        chain.push(r);
        cur = r.link.get();
    }
    chain.reverse();
    let mut out = String::new();
    let mut after_goexit = true;
    for (i, r) in chain.iter().enumerate() {
        if r.goexit {
            after_goexit = true;
            continue;
        }
        // A recovered panic re-panicked with the value recover returned is
        // one line, on the newer record (Go 1.25).
        let repanicked_by_next = chain
            .get(i + 1)
            .is_some_and(|n| !n.goexit && r.recovered && r.key.is_some() && r.key == n.key);
        if repanicked_by_next {
            continue;
        }
        let repanicked = i > 0 && {
            let older = chain[i - 1];
            !older.goexit && older.recovered && older.key.is_some() && older.key == r.key
        };
        if !after_goexit {
            out.push_str("\n\t");
        }
        after_goexit = false;
        out.push_str("panic: ");
        match &r.value {
            Some(v) => out.push_str(&v.to_string()),
            None => out.push_str(&r.text.render()),
        }
        if repanicked {
            out.push_str(" [recovered, repanicked]");
        } else if r.recovered {
            out.push_str(" [recovered]");
        }
    }
    // Go's line for the fault behind the panics (the newest one): the
    // goroutine keeps it while any of its panics is in flight.
    if let Some(signal) = chain.iter().rev().find_map(|r| r.signal) {
        out.push('\n');
        out.push_str(&signal.line());
    }
    out
}

/// What the thread's outermost frame does once its records ran and the
/// thread is still unwinding: reset the thread's panic state and raise the
/// ordinary Rust panic (or Goexit) that leaves the frames behind.
pub(crate) fn leave_outermost(th: &DeferState) -> ! {
    let newest = th.panics.get();
    if newest_is_goexit(th) {
        clear(th);
        std::panic::resume_unwind(Box::new(Goexit));
    }
    // A lone, untouched Rust panic leaves as it came, payload and all.
    // SAFETY: as above.
    let lone_rust = unsafe { newest.as_ref() }.is_some_and(|r| {
        r.link.get().is_null()
            && !r.recovered
            && !r.aborted
            && r.value.as_ref().is_some_and(PanicValue::is_rust_panic)
    });
    if lone_rust {
        // SAFETY: as above; we take the value before the record is freed.
        let value = unsafe { (*newest).value.take() }.expect("checked above");
        clear(th);
        std::panic::resume_unwind(value.into_rust_payload());
    }
    if th.reports_itself.get() {
        // The whole report, goroutine section included: the boundary
        // prints it as it is, and ends the process (go::run's main
        // goroutine excepted: see not_dying).
        dying();
        let message = format!("{}\n{}", report(th), goroutine_section(th, true));
        clear(th);
        std::panic::resume_unwind(Box::new(message))
    }
    let message = report(th);
    clear(th);
    std::panic::panic_any(message)
}

/// Whether the newest record is a Goexit (nothing newer is in flight).
pub(crate) fn newest_is_goexit(th: &DeferState) -> bool {
    // SAFETY: the newest record, if any, is live.
    unsafe { th.panics.get().as_ref() }.is_some_and(|r| r.goexit)
}

/// Empties the thread's panic stack and ends Goexit.
pub(crate) fn clear(th: &DeferState) {
    // SAFETY: the chain belongs to this thread and is unlinked first.
    unsafe { free_all(th.panics.replace(ptr::null_mut())) };
    recount(th);
    th.goexiting.set(false);
}
