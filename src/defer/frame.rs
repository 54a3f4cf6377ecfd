//! Frames: a function body that may defer calls, and the loop that runs
//! them.
//!
//! [`named`] links a [`Frame`] into the thread's chain, runs the body under
//! `catch_unwind`, then drains the frame's records newest first in a plain
//! loop (a million records never recurse), each call under its own
//! `catch_unwind`. A record is popped right after its call, whether the
//! call returned or panicked, so a panicking call is never run again.
//! After the loop the frame either returns (normally, or after a recovery,
//! with its named result's current value) or passes the unwinding on to
//! its caller's frame; the outermost frame of a thread (or of a
//! [`goroutine`]) turns it into an ordinary Rust panic or [`Goexit`].

use super::panic::{self, Unwind};
use super::record::{self, Shim};
use super::record::{closure_at, record_size};
use super::state::{Call, DeferState, FrameKind, FrameLink, PanicRec};
use super::value::Goexit;
use super::value::PanicValue;
use std::any::Any;
use std::cell::{Cell, RefCell};
use std::marker::PhantomData;
use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::ptr;

/// A function activation that can defer calls. Deferred closures may
/// borrow anything that outlives the frame (`'f`); they run, newest first,
/// when the body returns or unwinds.
pub struct Frame<'f, 'env: 'f> {
    link: FrameLink,
    th: &'static DeferState,
    _scope: PhantomData<(&'f mut &'f (), &'env mut &'env ())>,
    _not_send: PhantomData<*mut ()>,
}

/// A function's named result: deferred calls may read and change it, and
/// it is what the function returns, after a recovery too.
pub struct Named<R> {
    value: RefCell<R>,
}

impl<R> Named<R> {
    fn new(value: R) -> Named<R> {
        Named {
            value: RefCell::new(value),
        }
    }

    /// Replaces the result.
    pub fn set(&self, value: R) {
        *self.value.borrow_mut() = value;
    }

    /// A copy of the result.
    pub fn get(&self) -> R
    where
        R: Clone,
    {
        self.value.borrow().clone()
    }

    /// Changes the result in place.
    pub fn update<T>(&self, f: impl FnOnce(&mut R) -> T) -> T {
        f(&mut self.value.borrow_mut())
    }

    fn into_inner(self) -> R {
        self.value.into_inner()
    }
}

/// The token of a running deferred call: the only way to recover, so only
/// the deferred call itself (or code it hands the token to) can.
pub struct Deferred<'a> {
    call: &'a Call,
    _not_send: PhantomData<*mut ()>,
}

impl<'a> Deferred<'a> {
    pub(crate) fn new(call: &'a Call) -> Deferred<'a> {
        Deferred {
            call,
            _not_send: PhantomData,
        }
    }

    /// Go's `recover()`: the value of the panic whose unwinding runs this
    /// call, which then counts as recovered; `None` when the call runs for
    /// a normal return or for Goexit, when the panic was already recovered,
    /// or when a newer panic is in flight.
    pub fn recover(&self) -> Option<PanicValue> {
        panic::recover(DeferState::current(), self.call.panic)
    }

    /// Whether this call runs because of a panic (not a return or Goexit).
    pub fn is_panicking(&self) -> bool {
        // SAFETY: the record is live while the call that holds it runs.
        unsafe { self.call.panic.as_ref() }.is_some_and(|r| !r.goexit)
    }
}

impl<'f, 'env> Frame<'f, 'env> {
    /// Defers `f`: it runs when the frame returns or unwinds.
    #[inline(always)]
    pub fn defer<F: FnOnce() + 'f>(&self, f: F) {
        self.push(f, record::run_plain::<F>);
    }

    /// Defers `f`, which gets the call's [`Deferred`] token (to recover).
    #[inline(always)]
    pub fn defer_with<F: FnOnce(&Deferred<'_>) + 'f>(&self, f: F) {
        self.push(f, run_with::<F>);
    }

    /// Defers a function that may be nil: a nil one panics with Go's nil
    /// dereference run-time error when the call would run, not now.
    pub fn defer_opt<F: FnOnce() + 'f>(&self, f: Option<F>) {
        match f {
            Some(f) => self.defer(f),
            None => self.push((), record::run_nil),
        }
    }

    #[inline(always)]
    fn push<F>(&self, f: F, shim: Shim) {
        if !ptr::eq(self.th.frame.get(), &self.link) || self.link.draining.get() {
            misuse_not_innermost();
        }
        let space = self.th.stack.push(record::record_size::<F>());
        // SAFETY: push returned exactly record_size::<F>() bytes.
        unsafe { record::write(space, f, shim) };
    }
}

#[cold]
#[inline(never)]
fn misuse_not_innermost() -> ! {
    std::panic::panic_any(
        "defergc: defer on a frame that is not the innermost active one (or is already returning)",
    )
}

/// Runs `body` as a function with a named result, initially `init`:
/// `body`'s return value is assigned to it, deferred calls run (and may
/// change it), and its final value is returned, after a recovery too.
///
/// ```
/// use defergc::defer;
/// let r = defer::named(0, |f, out| {
///     f.defer_with(move |d| {
///         if d.recover().is_some() {
///             out.set(-1);
///         }
///     });
///     defer::panic("boom")
/// });
/// assert_eq!(r, -1);
/// ```
#[inline]
#[track_caller]
pub fn named<'env, R, F>(init: R, body: F) -> R
where
    F: for<'f> FnOnce(&'f Frame<'f, 'env>, &'f Named<R>) -> R,
{
    let th = DeferState::current();
    let out = Named::new(init);
    let frame = Frame::new(th, std::panic::Location::caller());
    th.frame.set(&frame.link);
    let unwinding = match catch_unwind(AssertUnwindSafe(|| body(&frame, &out))) {
        Ok(value) => {
            out.set(value);
            false
        }
        Err(payload) => {
            panic::adopt(th, payload);
            // Frames inside this one that unwinding skipped (compiled code
            // entered without ffi::guard) are dropped from the chain; their
            // records lie above ours and run in our loop.
            th.frame.set(&frame.link);
            true
        }
    };
    frame.finish(unwinding);
    out.into_inner()
}

/// Runs `body` as a function whose result is unnamed: after a recovery it
/// returns `R::default()` (Go's zero value).
///
/// ```
/// use defergc::defer;
/// let order = std::cell::RefCell::new(Vec::new());
/// defer::call(|f| {
///     for i in 0..3 {
///         let order = &order;
///         f.defer(move || order.borrow_mut().push(i));
///     }
/// });
/// assert_eq!(*order.borrow(), [2, 1, 0]);
/// ```
#[inline]
#[track_caller]
pub fn call<'env, R: Default, F>(body: F) -> R
where
    F: for<'f> FnOnce(&'f Frame<'f, 'env>) -> R,
{
    named(R::default(), |f, _| body(f))
}

/// Like [`named`], for a body that panics without unwinding: it returns
/// `Err` with the [`Panicking`] that [`raise`] made, or that a `named_try`
/// it called returned (pass it on with `?`). The deferred calls run and
/// may recover as after [`panic()`]; then the frame returns `Ok` with its
/// named result, or `Err` to its caller if the panic goes on.
///
/// This is the Rust API's cheap panic: no Rust unwinding happens unless a
/// `Panicking` is dropped, or the body panics the unwinding way (which the
/// frame handles as [`named`] does). Unwinding costs microseconds (the
/// system unwinder reads the unwind tables of every frame twice); a
/// panic that `?` carries to the frame that recovers costs what one
/// through the C ABI does.
///
/// ```
/// use defergc::defer;
/// fn parse(s: &str) -> Result<i64, defer::Panicking> {
///     match s.parse() {
///         Ok(v) => Ok(v),
///         Err(_) => Err(defer::raise(format!("bad number {s:?}"))),
///     }
/// }
/// let r = defer::named_try(0, |f, out| {
///     f.defer_with(move |d| {
///         if d.recover().is_some() {
///             out.set(-1);
///         }
///     });
///     let v = parse("x")?;
///     Ok(v + 1)
/// });
/// assert_eq!(r.ok(), Some(-1));
/// ```
#[inline]
#[track_caller]
pub fn named_try<'env, R, F>(init: R, body: F) -> Result<R, Panicking>
where
    F: for<'f> FnOnce(&'f Frame<'f, 'env>, &'f Named<R>) -> Result<R, Panicking>,
{
    let th = DeferState::current();
    let out = Named::new(init);
    let frame = Frame::new(th, std::panic::Location::caller());
    th.frame.set(&frame.link);
    let unwinding = match catch_unwind(AssertUnwindSafe(|| body(&frame, &out))) {
        Ok(Ok(value)) => {
            out.set(value);
            false
        }
        Ok(Err(panicking)) => {
            panicking.take_over(th);
            th.frame.set(&frame.link);
            true
        }
        Err(payload) => {
            panic::adopt(th, payload);
            th.frame.set(&frame.link);
            true
        }
    };
    if frame.drain(unwinding) {
        Err(Panicking::newest(th))
    } else {
        Ok(out.into_inner())
    }
}

/// [`named_try`] for a function whose result is unnamed: after a recovery
/// it returns `Ok(R::default())`.
#[inline]
#[track_caller]
pub fn call_try<'env, R: Default, F>(body: F) -> Result<R, Panicking>
where
    F: for<'f> FnOnce(&'f Frame<'f, 'env>) -> Result<R, Panicking>,
{
    named_try(R::default(), |f, _| body(f))
}

/// Go's `panic(value)` without unwinding: makes `value` the goroutine's
/// newest panic and returns it in flight, for a [`named_try`] body to
/// return (`Err(raise(v))?`, or `return Err(raise(v))`). The report of an
/// unrecovered one names this call's location, as [`panic()`]'s does.
#[track_caller]
pub fn raise<T: Any + std::fmt::Debug>(value: T) -> Panicking {
    let th = DeferState::current();
    panic::push_value(
        th,
        PanicValue::new(value),
        super::traceback::Origin::Source(std::panic::Location::caller()),
    );
    Panicking::newest(th)
}

/// A Go panic in flight that is not unwinding: made by [`raise`], returned
/// by a [`named_try`] frame whose deferred calls did not recover it. Pass
/// it on with `?` to the calling `named_try` frame. Dropped, or given to
/// [`resume`](Self::resume), it goes on as an unwinding panic (so a panic
/// is never lost); dropped while something else unwinds, it is forgotten
/// as Go forgets a panic a newer one replaced.
#[must_use = "a panic in flight: return it from a `named_try` body, or it unwinds when dropped"]
pub struct Panicking {
    unwind: Option<Unwind>,
    _not_send: PhantomData<*mut ()>,
}

impl Panicking {
    fn newest(th: &DeferState) -> Panicking {
        Panicking {
            unwind: Some(Unwind::newest(th)),
            _not_send: PhantomData,
        }
    }

    /// A frame takes the panic over (its records run for it).
    fn take_over(mut self, th: &DeferState) {
        let unwind = self.unwind.take().expect("a panic in flight");
        if !unwind.is_newest(th) {
            crate::abort(
                "defergc: a Panicking returned to a named_try frame is not its goroutine's newest panic",
            );
        }
        unwind.defuse();
    }

    /// Goes on as an unwinding panic (what dropping it does).
    pub fn resume(mut self) -> ! {
        let unwind = self.unwind.take().expect("a panic in flight");
        unwind.defuse();
        panic::deliver(DeferState::current())
    }
}

impl Drop for Panicking {
    fn drop(&mut self) {
        let Some(unwind) = self.unwind.take() else {
            return;
        };
        if std::thread::panicking() {
            // The unwinding under way replaces it; dropping the armed
            // payload takes its record out of the chain.
            drop(unwind);
            return;
        }
        unwind.defuse();
        panic::deliver(DeferState::current())
    }
}

impl std::fmt::Debug for Panicking {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Panicking")
    }
}

impl Frame<'_, '_> {
    /// A frame of `th` opened at `site`, above its innermost one (linked by
    /// the caller once it sits where it stays).
    #[inline(always)]
    fn new(th: &'static DeferState, site: &'static std::panic::Location<'static>) -> Self {
        Frame {
            link: FrameLink {
                prev: th.frame.get(),
                base: th.stack.mark(),
                draining: Cell::new(false),
                kind: FrameKind::Rust,
                origin: super::traceback::Origin::Source(site),
            },
            th,
            _scope: PhantomData,
            _not_send: PhantomData,
        }
    }

    /// Runs the frame's records, unlinks it, and returns or passes the
    /// unwinding on.
    #[inline]
    fn finish(&self, unwinding: bool) {
        if self.drain(unwinding) {
            panic::deliver(self.th)
        }
    }

    /// Runs the frame's records and unlinks it; returns whether it is
    /// still panicking.
    #[inline]
    fn drain(&self, mut unwinding: bool) -> bool {
        let th = self.th;
        self.link.draining.set(true);
        while th.stack.mark() != self.link.base {
            unwinding = drain_one(th, unwinding);
        }
        th.frame.set(self.link.prev);
        unwinding
    }
}

/// Runs the newest record and pops it; returns whether the frame is (still)
/// unwinding afterwards. Used by Rust and C frames alike.
#[inline(always)]
pub(crate) fn drain_one(th: &DeferState, unwinding: bool) -> bool {
    let top = th.stack.mark();
    let call = Call {
        start: Cell::new(ptr::null_mut()),
        panic: if unwinding {
            th.panics.get()
        } else {
            ptr::null_mut()
        },
        outer: th.running.get(),
        token: th.next_token(),
    };
    th.running.set(&call);
    // SAFETY: a record of this frame ends at the top.
    let outcome = catch_unwind(AssertUnwindSafe(|| unsafe {
        let shim = record::shim_at(top);
        shim(top, &call)
    }));
    th.running.set(call.outer);
    // SAFETY: the shim reported the record's start before running it, and
    // every frame the call opened has been closed again.
    unsafe { th.stack.pop_to(call.start.get()) };
    match outcome {
        Ok(()) => {
            if unwinding && panic::finish_recovery(th, call.panic) {
                // Recovered: the frame returns normally, unless Goexit is
                // under way, which a recovery never cancels.
                th.goexiting.get()
            } else {
                unwinding
            }
        }
        Err(payload) => {
            panic::adopt(th, payload);
            panic::abort_older(th, call.panic);
            true
        }
    }
}

/// Go's `panic(value)`: unwinds through the frames of this thread, running
/// their deferred calls, until one recovers. Any `T` with `Debug` will do
/// (a report prints strings, numbers and errors through `Display`, the
/// rest through `Debug`); a recovered [`PanicValue`] is re-raised as it
/// is.
///
/// This is the panic for code that must unwind (every Rust frame on the
/// way drops what it owns), and unwinding costs microseconds. Code that
/// can hand the panic back to its frame, as generated code can, uses
/// [`raise`] in a [`named_try`] or [`call_try`] frame instead: the same
/// panic, recovered at what a panic through the C ABI costs.
#[track_caller]
pub fn panic<T: Any + std::fmt::Debug>(value: T) -> ! {
    panic::start(
        PanicValue::new(value),
        super::traceback::Origin::Source(std::panic::Location::caller()),
    )
}

/// Go's `panic(nil)`: panics with [`super::PanicNilError`].
pub fn panic_nil() -> ! {
    panic(super::value::PanicNilError)
}

/// Go's `runtime.Goexit()`: runs every deferred call of every frame of the
/// thread (or of the enclosing [`goroutine`]), then ends it by unwinding
/// with [`Goexit`]. Recover returns `None` in those calls, and a panic
/// raised and recovered on the way does not stop it.
pub fn goexit() -> ! {
    panic::start_goexit()
}

/// Runs `f` as a goroutine on this thread: its frames are the outermost
/// ones of a fresh defer context (whatever frames and panics surround the
/// call stay untouched). Returns `None` if `f` called [`goexit`]; an
/// unrecovered panic propagates as an ordinary Rust panic, with Go's
/// report as its message.
pub fn goroutine<R>(f: impl FnOnce() -> R) -> Option<R> {
    let th = DeferState::current();
    let saved = (
        th.frame.replace(ptr::null()),
        th.panics.replace(ptr::null_mut::<PanicRec>()),
        th.goexiting.replace(false),
    );
    super::state::recount(th);
    th.boundaries.set(th.boundaries.get() + 1);
    let outcome = catch_unwind(AssertUnwindSafe(f));
    th.boundaries.set(th.boundaries.get() - 1);
    // The goroutine's outermost frames leave nothing behind; clear anyway
    // in case foreign code swallowed an unwinding half-way.
    panic::clear(th);
    th.frame.set(saved.0);
    th.panics.set(saved.1);
    super::state::recount(th);
    th.goexiting.set(saved.2);
    match outcome {
        Ok(value) => Some(value),
        Err(payload) if payload.is::<Goexit>() => None,
        Err(payload) => resume_unwind(payload),
    }
}

/// How the body of a goroutine (or of a runtime thread) ended.
pub(crate) enum Ended<R> {
    /// It returned.
    Returned(R),
    /// It called [`goexit`].
    Goexit,
    /// An unrecovered panic ended it: Go's report of the panic chain
    /// (`panic: v [recovered]` ...), without the Rust panic message. The
    /// report counts as dying (`panic::dying`: a returning main waits for
    /// it) until the process ends, or the holder gives the report to Rust
    /// code instead (`panic::not_dying`).
    Panicked(String),
}

/// Runs `f` as the outermost body of an execution context, a goroutine's
/// or a plain thread's, that reports its own unrecovered panic (with Go's
/// text and exit status, as the caller decides): like [`goroutine`], but
/// the panic comes back as its report.
pub(crate) fn outermost_body<R>(f: impl FnOnce() -> R) -> Ended<R> {
    let outcome = if crate::context::current().is_boundary() && DeferState::existing().is_none() {
        // A goroutine's own context: its defer state, if it ever needs
        // one, starts with this boundary counted (thread.rs), so nothing
        // is created for goroutines that never defer or panic.
        catch_unwind(AssertUnwindSafe(f)).map(Some)
    } else {
        DeferState::current().reports_itself.set(true);
        catch_unwind(AssertUnwindSafe(|| goroutine(f)))
    };
    match outcome {
        Ok(Some(value)) => Ended::Returned(value),
        Ok(None) => Ended::Goexit,
        Err(payload) if payload.is::<Goexit>() => Ended::Goexit,
        Err(payload) => {
            let plain = |message: &str| {
                // A Rust panic that met no frame: no trace was recorded.
                let section = super::traceback::section(None, DeferState::context_id(), false);
                format!("panic: {}\n{section}", super::render::indented(message))
            };
            let text = match payload.downcast::<String>() {
                // What leave_outermost raised: the report itself (counted
                // as dying there).
                Ok(report) if report.starts_with("panic: ") => *report,
                Ok(message) => {
                    panic::dying();
                    plain(&message)
                }
                Err(payload) => {
                    panic::dying();
                    match payload.downcast::<&'static str>() {
                        Ok(message) => plain(*message),
                        Err(_) => plain("Rust panic with a payload that is not a message"),
                    }
                }
            };
            Ended::Panicked(text)
        }
    }
}

/// The shim of a closure that takes the call's [`Deferred`] token.
///
/// # Safety
/// As for [`record::run_plain`].
unsafe fn run_with<F: FnOnce(&Deferred<'_>)>(top: *mut u8, call: &Call) {
    call.start.set(top.wrapping_sub(record_size::<F>()));
    // SAFETY: as in run_plain.
    let f = unsafe { closure_at::<F>(top).read() };
    f(&Deferred::new(call))
}
