//! Panics, Goexit and recover.
//!
//! Each thread keeps a stack of panic records, newest first (Go's
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
//! Values live in root memory (design.md invariant 2), so a GC pointer in a
//! panic value stays alive while the panic is in flight. Frames unwind from
//! one to the next with a private payload ([`Unwind`]); only the thread's
//! outermost frame turns an unrecovered panic into an ordinary Rust panic
//! whose message is the Go-style chain.

use super::thread::ThreadState;
use crate::roots;
use std::any::{Any, TypeId};
use std::cell::Cell;
use std::fmt;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The message of a nil-function call, Go's nil dereference runtime error.
pub(crate) const NIL_DEREF: &str = "invalid memory address or nil pointer dereference";

/// The value of `panic(nil)` since Go 1.21: a distinct, non-nil value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PanicNilError;

impl fmt::Display for PanicNilError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("panic called with nil argument")
    }
}

impl std::error::Error for PanicNilError {}

/// A run-time error raised by the runtime itself, such as calling a nil
/// deferred function. Displays as `runtime error: <message>`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RuntimeError(pub &'static str);

impl fmt::Display for RuntimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "runtime error: {}", self.0)
    }
}

impl std::error::Error for RuntimeError {}

/// A run-time error whose message Go prints as it is, without the
/// `runtime error: ` prefix: `send on closed channel`, `close of nil
/// channel`, `sync: negative WaitGroup counter` (Go's `plainError`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PlainError(pub &'static str);

impl fmt::Display for PlainError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.0)
    }
}

impl std::error::Error for PlainError {}

/// The payload a thread's unwinding ends with when Goexit reaches the top
/// of the thread (see [`super::goroutine`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Goexit;

/// A value in root memory, of a type known only at run time.
struct RootBox {
    ptr: NonNull<dyn Any>,
    /// The block holding the value, or null for a zero-sized value.
    block: *mut u8,
}

impl RootBox {
    fn new<T: Any>(value: T) -> RootBox {
        let size = std::mem::size_of::<T>();
        if std::mem::align_of::<T>() > 16 {
            crate::abort(&format!(
                "defergc: panic values aligned to more than 16 bytes are not supported ({})",
                std::any::type_name::<T>()
            ));
        }
        let (raw, block) = if size == 0 {
            (NonNull::<T>::dangling(), ptr::null_mut())
        } else {
            let block = roots::alloc_block(size);
            (block.cast::<T>(), block.as_ptr())
        };
        // SAFETY: raw is aligned and sized for T (or dangling for a ZST).
        unsafe { raw.as_ptr().write(value) };
        let ptr: NonNull<dyn Any> = raw;
        RootBox { ptr, block }
    }

    fn as_any(&self) -> &dyn Any {
        // SAFETY: the box owns a live value until dropped or taken.
        unsafe { self.ptr.as_ref() }
    }

    /// Moves the value out if it is a `T`.
    fn take<T: Any>(self) -> Result<T, RootBox> {
        if !self.as_any().is::<T>() {
            return Err(self);
        }
        // SAFETY: the value is a T; reading it moves it out, and the block
        // is freed below without dropping the value again.
        let value = unsafe { self.ptr.cast::<T>().as_ptr().read() };
        self.free_block();
        std::mem::forget(self);
        Ok(value)
    }

    fn free_block(&self) {
        if let Some(block) = NonNull::new(self.block) {
            // SAFETY: the block came from alloc_block and is released once.
            unsafe { roots::free_block(block) };
        }
    }
}

impl Drop for RootBox {
    fn drop(&mut self) {
        // SAFETY: the box owns a live value; drop it, then its block.
        unsafe { ptr::drop_in_place(self.ptr.as_ptr()) };
        self.free_block();
    }
}

enum Value {
    /// A value given to `panic`, kept in root memory.
    Root(RootBox),
    /// The payload of an ordinary Rust panic that unwound into a frame.
    Rust(Box<dyn Any + Send>),
}

/// The value of a panic, as returned by [`super::Deferred::recover`].
pub struct PanicValue {
    value: Value,
    type_name: &'static str,
    /// How a report prints the value (see `render.rs`).
    render: fn(&dyn Any) -> String,
    /// The value's identity: a re-panic with the value a recover returned
    /// is the same panic to a report (Go's `[recovered, repanicked]`).
    key: Key,
}

/// A panic value's identity (Go compares interface values: the same
/// pointer, or the same value object).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Key {
    /// A value object of Rust code, by a number given at its creation.
    Object(u64),
    /// A pointer of compiled code.
    Pointer(usize),
    /// An interface value of compiled code: type and data word.
    Iface(usize, usize),
}

fn next_object_key() -> Key {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    Key::Object(NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed))
}

/// How Rust values print in a report: strings, numbers and errors through
/// `Display`; the values of compiled code as Go prints them; anything
/// else through `Debug` (never by its Rust type name).
fn render_as<T: Any + fmt::Debug>(v: &dyn Any) -> String {
    macro_rules! try_display {
        ($($t:ty),*) => {$(
            if let Some(x) = v.downcast_ref::<$t>() {
                return super::render::indented(&x.to_string());
            }
        )*};
    }
    try_display!(
        &'static str,
        String,
        PanicNilError,
        RuntimeError,
        PlainError,
        i8,
        i16,
        i32,
        i64,
        i128,
        isize,
        u8,
        u16,
        u32,
        u64,
        u128,
        usize,
        f32,
        f64,
        bool,
        char
    );
    if let Some(e) = v.downcast_ref::<Box<dyn std::error::Error + Send + Sync>>() {
        return super::render::indented(&e.to_string());
    }
    if let Some(c) = v.downcast_ref::<super::cframe::CValue>() {
        // Go's print of an unsafe.Pointer in an interface.
        return format!("(unsafe.Pointer) {:#x}", c.0 as usize);
    }
    if let Some(c) = v.downcast_ref::<super::render::CIface>() {
        // SAFETY: compiled code gave a descriptor that describes its data
        // (defergc_panic_iface's contract).
        return unsafe { super::render::iface_text(c) };
    }
    match v.downcast_ref::<T>() {
        Some(x) => super::render::indented(&format!("{x:?}")),
        None => String::from("(value)"),
    }
}

/// How an ordinary Rust panic's payload prints: its message.
fn render_rust_payload(v: &dyn Any) -> String {
    if let Some(s) = v.downcast_ref::<&'static str>() {
        return super::render::indented(s);
    }
    if let Some(s) = v.downcast_ref::<String>() {
        return super::render::indented(s);
    }
    String::from("Rust panic with a payload that is not a message")
}

impl PanicValue {
    /// Wraps any value; a `PanicValue` is passed through unchanged (so
    /// re-panicking with a recovered value does not nest it).
    pub fn new<T: Any + fmt::Debug>(value: T) -> PanicValue {
        if TypeId::of::<T>() == TypeId::of::<PanicValue>() {
            let value = std::mem::ManuallyDrop::new(value);
            // SAFETY: T is PanicValue (same TypeId); the original is not
            // dropped, so the value moves exactly once.
            return unsafe { ptr::read((&*value as *const T).cast::<PanicValue>()) };
        }
        let any: &dyn Any = &value;
        let key = if let Some(c) = any.downcast_ref::<super::cframe::CValue>() {
            Key::Pointer(c.0 as usize)
        } else if let Some(c) = any.downcast_ref::<super::render::CIface>() {
            Key::Iface(c.ty as usize, c.data as usize)
        } else {
            next_object_key()
        };
        PanicValue {
            value: Value::Root(RootBox::new(value)),
            type_name: std::any::type_name::<T>(),
            render: render_as::<T>,
            key,
        }
    }

    pub(crate) fn from_rust(payload: Box<dyn Any + Send>) -> PanicValue {
        PanicValue {
            value: Value::Rust(payload),
            type_name: "rust panic",
            render: render_rust_payload,
            key: next_object_key(),
        }
    }

    /// The value as `&dyn Any`.
    pub fn as_any(&self) -> &dyn Any {
        match &self.value {
            Value::Root(b) => b.as_any(),
            Value::Rust(b) => &**b,
        }
    }

    /// Whether the value is a `T`.
    pub fn is<T: Any>(&self) -> bool {
        self.as_any().is::<T>()
    }

    /// The value as a `T`, if it is one.
    pub fn downcast_ref<T: Any>(&self) -> Option<&T> {
        self.as_any().downcast_ref()
    }

    /// Takes the value out as a `T`, or gives the `PanicValue` back.
    pub fn downcast<T: Any>(self) -> Result<T, PanicValue> {
        let (type_name, render, key) = (self.type_name, self.render, self.key);
        match self.value {
            Value::Root(b) => b.take::<T>().map_err(|b| PanicValue {
                value: Value::Root(b),
                type_name,
                render,
                key,
            }),
            Value::Rust(b) => b.downcast::<T>().map(|b| *b).map_err(|b| PanicValue {
                value: Value::Rust(b),
                type_name,
                render,
                key,
            }),
        }
    }

    /// Whether this came from an ordinary Rust panic (`panic!`, an index
    /// out of bounds, ...) rather than [`super::panic`].
    pub fn is_rust_panic(&self) -> bool {
        matches!(self.value, Value::Rust(_))
    }

    /// The Rust type name of a value given to [`super::panic`].
    pub fn type_name(&self) -> &'static str {
        self.type_name
    }

    fn into_rust_payload(self) -> Box<dyn Any + Send> {
        match self.value {
            Value::Rust(b) => b,
            Value::Root(_) => Box::new(self.to_string()),
        }
    }
}

impl fmt::Display for PanicValue {
    /// Go's rendering (see `render.rs`): strings as they are, errors by
    /// their message, numbers and booleans in decimal, values of compiled
    /// code as Go prints them, other Rust values through `Debug`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&(self.render)(self.as_any()))
    }
}

impl fmt::Debug for PanicValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "PanicValue({self})")
    }
}

/// One panic or Goexit in flight on a thread.
pub(crate) struct PanicRec {
    /// The next older record.
    pub(crate) link: Cell<*mut PanicRec>,
    /// The value, until a recover takes it.
    value: Option<PanicValue>,
    /// What the report of a later unrecovered panic prints for this one
    /// once recover has taken its value.
    text: Recovered,
    /// The identity of the value (kept when recover takes it).
    key: Option<Key>,
    /// What a report of this panic lists (recorded when it started).
    pub(crate) trace: Option<super::traceback::Trace>,
    /// The fault that raised it, if one did.
    signal: Option<crate::signal::Fault>,
    pub(crate) recovered: bool,
    pub(crate) aborted: bool,
    pub(crate) goexit: bool,
}

/// Frees a chain of records (thread exit).
///
/// # Safety
/// `rec` heads a chain of records that nothing else references.
pub(crate) unsafe fn free_all(mut rec: *mut PanicRec) {
    while !rec.is_null() {
        // SAFETY: every record came from Box::into_raw in push.
        let boxed = unsafe { Box::from_raw(rec) };
        rec = boxed.link.get();
    }
}

fn push(
    th: &ThreadState,
    value: Option<PanicValue>,
    goexit: bool,
    site: super::traceback::Origin,
) -> *mut PanicRec {
    let key = value.as_ref().map(|v| v.key);
    let trace = (!goexit).then(|| super::traceback::Trace::capture(site, th.frame.get()));
    let rec = Box::into_raw(Box::new(PanicRec {
        link: Cell::new(th.panics.get()),
        value,
        key,
        trace,
        signal: None,
        text: Recovered::Nothing,
        recovered: false,
        aborted: false,
        goexit,
    }));
    th.panics.set(rec);
    recount(th);
    rec
}

/// Execution contexts with a panic in flight (from the moment it is
/// raised until it is recovered or its report is made): Go's
/// `runningPanicDefers`, which a returning main waits on.
static PANICKING: AtomicUsize = AtomicUsize::new(0);

/// Unrecovered panics whose final report is being made: the process ends
/// with status 2 once it is printed. Go's `panicking`, on which a
/// returning main parks forever.
static DYING: AtomicUsize = AtomicUsize::new(0);

/// Brings `th`'s share of [`PANICKING`] up to date after its chain of
/// records changed: one while the chain holds a panic (a Goexit alone is
/// not one).
pub(crate) fn recount(th: &ThreadState) {
    let mut cur = th.panics.get();
    let mut has = false;
    // SAFETY: walking this context's live records.
    while let Some(r) = unsafe { cur.as_ref() } {
        if !r.goexit {
            has = true;
            break;
        }
        cur = r.link.get();
    }
    if th.counted.replace(has) != has {
        if has {
            PANICKING.fetch_add(1, Ordering::SeqCst);
        } else {
            PANICKING.fetch_sub(1, Ordering::SeqCst);
        }
    }
}

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
    while PANICKING.load(Ordering::SeqCst) != 0
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
fn pop(th: &ThreadState) {
    let rec = th.panics.get();
    if !rec.is_null() {
        // SAFETY: the newest record is ours; unlink then free it.
        unsafe {
            th.panics.set((*rec).link.get());
            drop(Box::from_raw(rec));
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
    pub(crate) fn raise(th: &ThreadState) -> ! {
        std::panic::resume_unwind(Box::new(Unwind::newest(th)))
    }

    /// An armed payload for the thread's newest record (not yet raised):
    /// dropped armed, it takes the record out of the chain.
    pub(crate) fn newest(th: &ThreadState) -> Unwind {
        Unwind {
            context: ThreadState::context_id(),
            rec: th.panics.get(),
            armed: true,
        }
    }

    /// Whether this payload stands for the thread's newest record.
    pub(crate) fn is_newest(&self, th: &ThreadState) -> bool {
        self.context == ThreadState::context_id() && self.rec == th.panics.get()
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
        let Some(th) = ThreadState::existing() else {
            return;
        };
        if ThreadState::context_id() != self.context {
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
    let th = ThreadState::current();
    push_value(th, value, site);
    deliver(th)
}

/// Makes `value` the thread's newest panic, raised at `site`, to be
/// delivered.
pub(crate) fn push_value(th: &ThreadState, value: PanicValue, site: super::traceback::Origin) {
    push(th, Some(value), false, site);
}

/// Makes `value` the thread's newest panic, raised by the fault `signal`
/// at `site`, to be delivered.
pub(crate) fn push_fault(
    th: &ThreadState,
    value: PanicValue,
    site: super::traceback::Origin,
    signal: crate::signal::Fault,
) {
    let rec = push(th, Some(value), false, site);
    // SAFETY: the record was just pushed, and only this thread touches it.
    unsafe { (*rec).signal = Some(signal) };
}

/// Starts Goexit's record (and state), to be delivered.
pub(crate) fn push_goexit(th: &ThreadState) {
    th.goexiting.set(true);
    push(th, None, true, super::traceback::Origin::None);
}

/// The goroutine section of the report of the thread's newest panic (see
/// `traceback.rs`), for the context running now.
pub(crate) fn goroutine_section(th: &ThreadState, live: bool) -> String {
    // SAFETY: the newest record, if any, is live.
    let trace = unsafe { th.panics.get().as_ref() }.and_then(|r| r.trace.as_ref());
    super::traceback::section(trace, ThreadState::context_id(), live)
}

/// Hands the newest record on from Rust code: unwinding, so every Rust
/// frame on the way runs its destructors, up to the innermost frame (or to
/// the `ffi::guard` at a boundary with compiled code, which lands it in a
/// C frame). With no frame left, the thread's outermost frame has given
/// up: see [`leave_outermost`].
pub(crate) fn deliver(th: &ThreadState) -> ! {
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
    let th = ThreadState::current();
    push_goexit(th);
    deliver(th)
}

/// Turns whatever a frame caught into the thread's newest record: ours
/// already is; an ordinary Rust panic gets a record now.
pub(crate) fn adopt(th: &ThreadState, payload: Box<dyn Any + Send>) -> *mut PanicRec {
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
pub(crate) fn recover(th: &ThreadState, rec: *mut PanicRec) -> Option<PanicValue> {
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
    let Some(th) = ThreadState::existing() else {
        return;
    };
    // SAFETY: the newest record, if any, is live and only this thread's.
    if let Some(r) = unsafe { th.panics.get().as_mut() } {
        if r.recovered {
            r.key = Some(Key::Iface(ty as usize, data as usize));
        }
    }
}

/// A recovered value's rendering for a later report. A value of compiled
/// code is rendered only if a report needs it (recovering is the common
/// case, reporting the rare one); a Rust value is rendered at once (it
/// leaves with the caller of recover).
enum Recovered {
    Nothing,
    C(super::cframe::CValue),
    Text(String),
}

impl Recovered {
    fn of(value: &PanicValue) -> Recovered {
        match value.downcast_ref::<super::cframe::CValue>() {
            Some(c) => Recovered::C(*c),
            None => Recovered::Text(value.to_string()),
        }
    }

    fn render(&self) -> String {
        match self {
            Recovered::Nothing => String::new(),
            Recovered::C(c) => PanicValue::new(*c).to_string(),
            Recovered::Text(t) => t.clone(),
        }
    }
}

/// A panic escaped a deferred call that `ran_for`'s unwinding was running:
/// that older panic (or Goexit) is aborted.
pub(crate) fn abort_older(th: &ThreadState, ran_for: *mut PanicRec) {
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
pub(crate) fn finish_recovery(th: &ThreadState, rec: *mut PanicRec) -> bool {
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
pub(crate) fn report(th: &ThreadState) -> String {
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
pub(crate) fn leave_outermost(th: &ThreadState) -> ! {
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
pub(crate) fn newest_is_goexit(th: &ThreadState) -> bool {
    // SAFETY: the newest record, if any, is live.
    unsafe { th.panics.get().as_ref() }.is_some_and(|r| r.goexit)
}

/// Empties the thread's panic stack and ends Goexit.
pub(crate) fn clear(th: &ThreadState) {
    // SAFETY: the chain belongs to this thread and is unlinked first.
    unsafe { free_all(th.panics.replace(ptr::null_mut())) };
    recount(th);
    th.goexiting.set(false);
}
