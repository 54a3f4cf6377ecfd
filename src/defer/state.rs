//! The defer chain of an execution context: the record stack, the
//! innermost frame, the panic stack, and the low-level head word; and the
//! records those chains link (a running deferred call's [`Call`], a
//! panic's [`PanicRec`]), with the count of contexts that have a panic in
//! flight.
//!
//! One [`DeferState`] per execution context (`crate::context`: a thread's
//! own, or a goroutine's), created on first use, lives in a block of root
//! memory (so the low-level head word is a GC root) and hangs off the
//! context's defer slot, whose destructor frees it with the context. Only
//! the thread running the context touches it; the collectors read the
//! record stack through [`crate::roots::RootStack`]'s registry.

use super::traceback::{Origin, Trace};
use super::value::{Key, PanicValue, Recovered};
use crate::context;
use crate::roots::{self, RootStack};
use crate::signal::Fault;
use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::ffi::c_void;
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};

/// Who owns a frame: Rust code ([`super::call`]) or compiled code through
/// the C protocol ([`super::cframe`]).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum FrameKind {
    Rust,
    C,
}

/// What a frame in the chain looks like to the rest of the thread: enough
/// to find its records and its caller.
#[repr(C)]
pub(crate) struct FrameLink {
    /// The caller's frame, or null for the thread's outermost frame.
    pub(crate) prev: *const FrameLink,
    /// The record stack's top when the frame was entered: its records lie
    /// between here and the top.
    pub(crate) base: roots::Mark,
    /// Set once the frame runs its deferred calls; deferring is over then.
    pub(crate) draining: Cell<bool>,
    pub(crate) kind: FrameKind,
    /// Where the frame's function is, for reports (`traceback.rs`).
    pub(crate) origin: Origin,
}

/// The defer layer's state of one execution context (a thread's own, or
/// a goroutine's: it moves with the goroutine, not with the thread).
pub(crate) struct DeferState {
    /// Deferred-call records of every active frame, innermost on top.
    pub(crate) stack: RootStack,
    /// The innermost active frame, or null.
    pub(crate) frame: Cell<*const FrameLink>,
    /// The newest panic (or Goexit) record, linked to older ones.
    pub(crate) panics: Cell<*mut PanicRec>,
    /// A record kept for the next panic, or null: a goroutine that panics
    /// and recovers in a loop allocates its record once (`panic::push`,
    /// `panic::pop`).
    pub(crate) spare: Cell<*mut PanicRec>,
    /// Set by Goexit; only the thread's outermost frame clears it.
    pub(crate) goexiting: Cell<bool>,
    /// The low-level head word of runtimes that manage their own frames.
    pub(crate) head: Cell<*mut c_void>,
    /// The innermost deferred call running now (each links to the one it
    /// runs inside), so a token from C code can be checked before use.
    pub(crate) running: Cell<*const Call>,
    /// Rust code catching unwinding around the thread's outermost frames
    /// ([`super::goroutine`], the C thread trampoline): with none, an
    /// outermost C frame ends the thread or process the way Go does.
    pub(crate) boundaries: Cell<u32>,
    /// Set on threads of `defergc_thread_create`: their trampoline prints
    /// Go's report itself, so the panic leaves without Rust's hook message.
    pub(crate) reports_itself: Cell<bool>,
    /// Whether this context counts in `panic::PANICKING` (it has a panic,
    /// not only a Goexit, in flight); kept by `panic::recount`.
    pub(crate) counted: Cell<bool>,
    /// Blocks of low-level records freed lately, oldest first (see
    /// `lowlevel::record_free`).
    pub(crate) quarantine: RefCell<VecDeque<NonNull<u8>>>,
    /// The next deferred call's token, from this state's current block of
    /// [`TOKENS`] (0: take a new block).
    tokens: Cell<u64>,
}

/// Numbers unique in the process, handed out in blocks of 2^32 so that
/// whoever takes them (a state, a thread) pays one atomic operation per
/// four billion. No number is 0 (NULL to compiled code).
pub(crate) struct Sequence {
    /// The first number of the next block (block 0 is never handed out).
    next_block: AtomicU64,
}

impl Sequence {
    const BLOCK: u64 = 1 << 32;

    pub(crate) const fn new() -> Sequence {
        Sequence {
            next_block: AtomicU64::new(Self::BLOCK),
        }
    }

    /// The next number of the block `local` is in (0 at first: take one).
    #[inline(always)]
    pub(crate) fn next(&self, local: &Cell<u64>) -> u64 {
        let mut n = local.get();
        if n.is_multiple_of(Self::BLOCK) {
            // The first number, or the end of a block: a block's first
            // number is skipped, so only a block's end is a multiple of it.
            n = self.block() + 1;
        }
        local.set(n + 1);
        n
    }

    /// A fresh block's first number, for a taker with nowhere to keep one.
    pub(crate) fn block(&self) -> u64 {
        self.next_block.fetch_add(Self::BLOCK, Ordering::Relaxed)
    }
}

/// Where deferred calls' tokens come from.
static TOKENS: Sequence = Sequence::new();

/// The defer layer's slot in every execution context (rank 5: its depth in
/// design.md's list of layers).
static KEY: context::Key = context::Key::new(5, destroy);

impl DeferState {
    /// The current context's state, created on first use.
    #[inline(always)]
    pub(crate) fn current() -> &'static DeferState {
        let ctx = context::current();
        let state = ctx.get(&KEY);
        if state.is_null() {
            return DeferState::create(ctx);
        }
        // SAFETY: the slot holds a live state of this context, freed only
        // by the key's destructor when the context is destroyed.
        unsafe { &*state.cast::<DeferState>() }
    }

    /// The current context's state if it has one (never creates it).
    pub(crate) fn existing() -> Option<&'static DeferState> {
        let state = context::existing()?.get(&KEY);
        // SAFETY: as in current.
        unsafe { state.cast::<DeferState>().as_ref() }
    }

    /// A token for the next deferred call, unique in the process.
    #[inline(always)]
    pub(crate) fn next_token(&self) -> u64 {
        TOKENS.next(&self.tokens)
    }

    /// Where the frames of the chain started, innermost first.
    pub(crate) fn frame_origins(&self) -> impl Iterator<Item = Origin> + '_ {
        let mut frame = self.frame.get();
        std::iter::from_fn(move || {
            // SAFETY: the frames of the chain are live while linked, and
            // only this context's thread changes the chain.
            let link = unsafe { frame.as_ref() }?;
            frame = link.prev;
            Some(link.origin)
        })
    }

    /// The id of the execution context this state belongs to.
    pub(crate) fn context_id() -> u64 {
        context::current().id()
    }

    /// A context's first defer (or panic, or frame) creates its state: a
    /// recycled one (goroutines come and go by the thousand), or a new one.
    /// A goroutine's state starts with its start counted as a boundary,
    /// reporting its own unrecovered panics.
    #[cold]
    #[inline(never)]
    fn create(ctx: &context::Context) -> &'static DeferState {
        let goroutine = ctx.is_boundary();
        let state = match recycled() {
            Some(state) => state,
            None => {
                let block =
                    roots::alloc_block(std::mem::size_of::<DeferState>()).cast::<DeferState>();
                // SAFETY: a fresh, suitably aligned block of the right size.
                unsafe {
                    block.as_ptr().write(DeferState {
                        stack: RootStack::new(),
                        frame: Cell::new(ptr::null()),
                        panics: Cell::new(ptr::null_mut()),
                        spare: Cell::new(ptr::null_mut()),
                        goexiting: Cell::new(false),
                        head: Cell::new(ptr::null_mut()),
                        running: Cell::new(ptr::null()),
                        boundaries: Cell::new(0),
                        reports_itself: Cell::new(false),
                        counted: Cell::new(false),
                        quarantine: RefCell::new(VecDeque::new()),
                        tokens: Cell::new(0),
                    })
                };
                block.as_ptr()
            }
        };
        // SAFETY: a state nobody else uses: new, or recycled and reset.
        let th = unsafe { &*state };
        th.boundaries.set(u32::from(goroutine));
        th.reports_itself.set(goroutine);
        ctx.set(&KEY, state.cast());
        th
    }
}

/// States of ended goroutines kept for reuse, per thread: their record
/// stack keeps its first chunk. A kept state's root memory is released
/// (`roots::release_block`, `RootStack::release`): it is no context's
/// until the next one adopts it.
mod pool {
    use super::DeferState;
    use std::cell::RefCell;

    /// States kept per thread.
    const KEEP: usize = 64;

    thread_local! {
        static FREE: RefCell<Vec<usize>> = const { RefCell::new(Vec::new()) };
    }

    /// Keeps `state` (reset: no frame, no panic, empty record stack) if
    /// there is room; gives it back otherwise.
    pub(super) fn keep(state: *mut DeferState) -> Result<(), *mut DeferState> {
        crate::fresh::try_with(&FREE, |f| {
            let mut f = f.borrow_mut();
            if f.len() < KEEP {
                f.push(state as usize);
                Ok(())
            } else {
                Err(state)
            }
        })
        .unwrap_or(Err(state))
    }

    pub(super) fn take() -> Option<*mut DeferState> {
        crate::fresh::try_with(&FREE, |f| f.borrow_mut().pop())
            .ok()
            .flatten()
            .map(|s| s as *mut DeferState)
    }
}

/// A recycled state, if this thread keeps one: the current context's now.
fn recycled() -> Option<*mut DeferState> {
    let state = pool::take()?;
    // SAFETY: destroy released the state's block and stack before it kept
    // them, and nothing used them since.
    unsafe {
        roots::adopt_block(NonNull::new_unchecked(state.cast()));
        (*state).stack.adopt();
    }
    Some(state)
}

/// The key's destructor: frees the state with its context.
///
/// # Safety
/// `state` is a state from `create`, which nothing uses any more.
unsafe fn destroy(ctx: &context::Context, state: *mut u8) {
    let state = state.cast::<DeferState>();
    // SAFETY: the context owned the state; nothing runs its frame code any
    // more. A goroutine's state, reset, may serve the next goroutine.
    let reusable = ctx.is_boundary()
        && unsafe {
            let th = &*state;
            th.frame.get().is_null() && th.quarantine.borrow().is_empty() && {
                free_all(th.panics.replace(ptr::null_mut()));
                recount(th);
                th.goexiting.set(false);
                th.head.set(ptr::null_mut());
                th.running.set(ptr::null());
                th.stack.is_empty()
            }
        };
    let state = if reusable {
        // SAFETY: the state is reset and nobody uses it until a later
        // context adopts it (recycled) or it is freed below.
        unsafe {
            (*state).stack.release();
            roots::release_block(NonNull::new_unchecked(state.cast()));
        }
        match pool::keep(state) {
            Ok(()) => return,
            Err(state) => state,
        }
    } else {
        state
    };
    // SAFETY: the context owned the state; nothing runs its frame code any
    // more (it is destroyed after its own code ended).
    unsafe {
        free_all((*state).panics.replace(ptr::null_mut()));
        free_all((*state).spare.replace(ptr::null_mut()));
        recount(&*state);
        for block in (*state).quarantine.borrow_mut().drain(..) {
            roots::free_block(block);
        }
        ptr::drop_in_place(state);
        roots::free_block(NonNull::new_unchecked(state.cast()));
    }
}

/// What a running deferred call knows about itself. Compiled code sees
/// only its [`token`](Call::token).
pub struct Call {
    /// Where the record begins; written by the shim before the call runs.
    pub(crate) start: Cell<*mut u8>,
    /// The panic (or Goexit) whose unwinding runs this call, or null when
    /// the frame is returning normally. `recover` compares against it.
    pub(crate) panic: *mut PanicRec,
    /// The call this one runs inside, if any (the thread's running chain).
    pub(crate) outer: *const Call,
    /// The call's identity for compiled code: unique in the process, so a
    /// token kept past its call never names a later one (which may well
    /// sit at the same address).
    pub(crate) token: u64,
}

/// A deferred call's token as compiled code holds it (`defergc_call *`):
/// an opaque identity, never dereferenced, that only [`recover`] reads.
/// A token of a call that is no longer running recovers nothing.
///
/// [`recover`]: crate::ffi::defergc_recover
#[repr(C)]
pub struct CallToken {
    _opaque: [u8; 0],
}

impl Call {
    /// The token compiled code gets for this call.
    pub(crate) fn c_token(&self) -> *const CallToken {
        self.token as usize as *const CallToken
    }
}

/// One panic or Goexit in flight on a thread.
pub(crate) struct PanicRec {
    /// The next older record.
    pub(crate) link: Cell<*mut PanicRec>,
    /// The value, until a recover takes it.
    pub(crate) value: Option<PanicValue>,
    /// What the report of a later unrecovered panic prints for this one
    /// once recover has taken its value.
    pub(crate) text: Recovered,
    /// The identity of the value (kept when recover takes it).
    pub(crate) key: Option<Key>,
    /// What a report of this panic lists (recorded when it started).
    pub(crate) trace: Option<Trace>,
    /// The fault that raised it, if one did.
    pub(crate) signal: Option<Fault>,
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

/// Execution contexts with a panic in flight (from the moment it is
/// raised until it is recovered or its report is made): Go's
/// `runningPanicDefers`, which a returning main waits on.
static PANICKING: AtomicUsize = AtomicUsize::new(0);

/// How many execution contexts have a panic in flight.
pub(crate) fn panicking() -> usize {
    PANICKING.load(Ordering::SeqCst)
}

/// Brings `th`'s share of [`PANICKING`] up to date after its chain of
/// records changed: one while the chain holds a panic (a Goexit alone is
/// not one).
pub(crate) fn recount(th: &DeferState) {
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
