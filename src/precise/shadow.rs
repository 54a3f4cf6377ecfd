//! Shadow stacks: each thread's roots, in frames.
//!
//! A thread has one contiguous handle stack and one frame stack, both
//! growable without limit (the Coex design has 8,192 handles and 1,024
//! frames, unchecked). [`push_frame`] records the handle stack's top,
//! [`root`] appends a handle and returns its slot, [`pop_frame`] restores
//! the top. Frames are popped innermost first: popping (or rooting into)
//! any other frame is [`Error::FrameNotTop`], with no frame open
//! [`Error::NoFrame`]. The Rust guard [`Frame`] pops on drop.
//!
//! The collector reads a thread's stack only while the thread is stopped
//! at a safepoint or in native code (see `mutator.rs`), so pushing and
//! popping take no lock and no atomic read-modify-write. [`push_frame`] is
//! a safepoint; `root` is not, so a handle returned by an allocation can
//! be rooted before any collection runs; nor is [`pop_frame`], so a
//! function may pop its frame and return a handle the frame held, for the
//! caller to root before its next safepoint (as a compiled function
//! returns a pointer in a register). Every pop follows a push, so a thread
//! that only pushes and pops still polls.
//!
//! Handle values on the stack are validated in debug builds only (a `root`
//! of a stale or invalid handle is an error there); in release builds the
//! marker skips any value that is not a live handle, and the error surfaces
//! when the handle is used.

use super::error::{Error, Result};
use super::handles::Handle;
use super::mutator::{self, Mutator};
use std::marker::PhantomData;

/// Identifies an open frame: its depth (1 for the outermost).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FrameId(usize);

impl FrameId {
    /// The frame with this depth (as returned by [`FrameId::depth`]).
    pub const fn from_depth(depth: usize) -> FrameId {
        FrameId(depth)
    }

    /// The frame's depth: 1 for the outermost frame of a thread.
    pub const fn depth(self) -> usize {
        self.0
    }
}

/// A thread's roots.
pub(crate) struct ShadowStack {
    slots: Vec<u64>,
    /// For each open frame, the slot count when it was pushed.
    frames: Vec<usize>,
}

impl ShadowStack {
    pub(crate) const fn new() -> ShadowStack {
        ShadowStack {
            slots: Vec::new(),
            frames: Vec::new(),
        }
    }

    /// The number of open frames.
    #[inline(always)]
    pub(crate) fn depth(&self) -> usize {
        self.frames.len()
    }

    /// The rooted handle values, outermost first.
    pub(crate) fn roots(&self) -> &[u64] {
        &self.slots
    }

    #[inline(always)]
    pub(crate) fn push_frame(&mut self) -> FrameId {
        self.frames.push(self.slots.len());
        FrameId(self.frames.len())
    }

    #[inline(always)]
    pub(crate) fn root(&mut self, raw: u64) -> Result<usize> {
        if self.frames.is_empty() {
            return Err(Error::NoFrame);
        }
        let slot = self.slots.len();
        self.slots.push(raw);
        Ok(slot)
    }

    #[inline(always)]
    fn check_top(&self, frame: FrameId) -> Result<()> {
        if self.frames.len() == frame.0 {
            Ok(())
        } else if self.frames.is_empty() {
            Err(Error::NoFrame)
        } else {
            Err(Error::FrameNotTop)
        }
    }

    #[inline(always)]
    fn pop_frame(&mut self, frame: FrameId) -> Result<()> {
        self.check_top(frame)?;
        if let Some(base) = self.frames.pop() {
            self.slots.truncate(base);
        }
        Ok(())
    }

    fn set(&mut self, slot: usize, raw: u64) -> Result<()> {
        match self.slots.get_mut(slot) {
            Some(s) => {
                *s = raw;
                Ok(())
            }
            None => Err(Error::NoSuchRoot),
        }
    }

    fn get(&self, slot: usize) -> Result<u64> {
        self.slots.get(slot).copied().ok_or(Error::NoSuchRoot)
    }
}

/// In debug builds, the error for rooting `raw` if it is not null or live.
#[inline(always)]
fn debug_check(raw: u64) -> Result<()> {
    if cfg!(debug_assertions) && raw != 0 {
        // Non-zero, so from_raw succeeds.
        super::handles::resolve(Handle::from_raw(raw)?)?;
    }
    Ok(())
}

/// This thread's stack (registering the thread on first use).
///
/// # Safety
/// The returned borrow must end before the next safepoint poll or any
/// other access to the thread's local state.
#[inline(always)]
#[allow(clippy::mut_from_ref)]
unsafe fn stack_of(ts: &Mutator) -> &mut ShadowStack {
    // SAFETY: the caller keeps the borrow short and exclusive; ts is this
    // thread's running state.
    unsafe { &mut ts.local().shadow }
}

/// Opens a frame on this thread's shadow stack (a safepoint).
#[inline(always)]
pub fn push_frame() -> Result<FrameId> {
    let ts = mutator::current()?;
    mutator::poll(ts);
    // SAFETY: short exclusive borrow after the poll.
    Ok(unsafe { stack_of(ts) }.push_frame())
}

/// Roots `handle` (or null) in the innermost frame until it is popped;
/// returns its slot, for [`set_root`]. [`Error::NoFrame`] without a frame.
#[inline(always)]
pub fn root(handle: impl Into<Option<Handle>>) -> Result<usize> {
    let raw = Handle::raw_or_null(handle.into());
    let ts = mutator::current()?;
    debug_check(raw)?;
    // SAFETY: short exclusive borrow, no poll inside.
    unsafe { stack_of(ts) }.root(raw)
}

/// Closes `frame`, which must be the innermost one. Not a safepoint (see
/// the module docs): a handle the frame held stays safe to return until
/// the caller's next safepoint.
#[inline(always)]
pub fn pop_frame(frame: FrameId) -> Result<()> {
    let ts = mutator::current()?;
    // SAFETY: short exclusive borrow, no poll inside.
    unsafe { stack_of(ts) }.pop_frame(frame)
}

/// Replaces the handle in root slot `slot` (of any open frame).
/// [`Error::NoSuchRoot`] if the slot is not on the stack.
#[inline]
pub fn set_root(slot: usize, handle: impl Into<Option<Handle>>) -> Result<()> {
    let raw = Handle::raw_or_null(handle.into());
    let ts = mutator::current()?;
    debug_check(raw)?;
    // SAFETY: short exclusive borrow, no poll inside.
    unsafe { stack_of(ts) }.set(slot, raw)
}

/// The handle in root slot `slot`. [`Error::NoSuchRoot`] if the slot is
/// not on the stack.
#[inline]
pub fn get_root(slot: usize) -> Result<Option<Handle>> {
    let ts = mutator::current()?;
    // SAFETY: short exclusive borrow, no poll inside.
    let raw = unsafe { stack_of(ts) }.get(slot)?;
    Ok(Handle::from_raw(raw).ok())
}

/// A shadow-stack frame that is popped when dropped.
///
/// ```
/// use defergc::precise::{self, Frame};
/// let node = precise::register_type(16, &[0]).unwrap();
/// let frame = Frame::new().unwrap();
/// let a = precise::alloc(node).unwrap();
/// frame.root(a).unwrap();                  // a survives collections
/// precise::collect().unwrap();
/// assert!(precise::deref(a).is_ok());
/// drop(frame);                              // a is garbage from here
/// ```
///
/// Dropping frames out of order (an outer guard before an inner one) is a
/// bug: the drop panics with a `defergc:` message (or aborts if the thread
/// is already panicking). [`Frame::pop`] reports it as an error instead.
#[must_use = "the frame is popped when the guard is dropped"]
pub struct Frame {
    ts: *const Mutator,
    id: FrameId,
    _not_send: PhantomData<*mut ()>,
}

impl Frame {
    /// Opens a frame (a safepoint).
    #[inline]
    pub fn new() -> Result<Frame> {
        let ts = mutator::current()?;
        mutator::poll(ts);
        // SAFETY: short exclusive borrow after the poll.
        let id = unsafe { stack_of(ts) }.push_frame();
        Ok(Frame {
            ts,
            id,
            _not_send: PhantomData,
        })
    }

    /// This frame's id (for [`pop_frame`]-style code).
    pub fn id(&self) -> FrameId {
        self.id
    }

    /// The thread state, if it is still the one this frame was opened on
    /// and the thread is running.
    #[inline(always)]
    fn state(&self) -> Result<&Mutator> {
        let ts = mutator::current_ptr();
        if ts != self.ts {
            // The thread unregistered since (at exit, or explicitly after
            // the frame was popped by id): the frame no longer exists.
            return Err(Error::NotRegistered);
        }
        // SAFETY: equal to current_ptr: this thread's live state.
        let ts = unsafe { &*ts };
        if ts.status.load(std::sync::atomic::Ordering::Relaxed) != mutator::RUNNING {
            return Err(Error::InNative);
        }
        Ok(ts)
    }

    /// Roots `handle` in this frame, which must be the innermost one;
    /// returns its slot.
    #[inline]
    pub fn root(&self, handle: impl Into<Option<Handle>>) -> Result<usize> {
        let raw = Handle::raw_or_null(handle.into());
        let ts = self.state()?;
        debug_check(raw)?;
        // SAFETY: short exclusive borrow, no poll inside.
        let stack = unsafe { stack_of(ts) };
        stack.check_top(self.id)?;
        stack.root(raw)
    }

    /// Replaces the handle in root slot `slot`.
    #[inline]
    pub fn set(&self, slot: usize, handle: impl Into<Option<Handle>>) -> Result<()> {
        let raw = Handle::raw_or_null(handle.into());
        let ts = self.state()?;
        debug_check(raw)?;
        // SAFETY: short exclusive borrow, no poll inside.
        unsafe { stack_of(ts) }.set(slot, raw)
    }

    /// The handle in root slot `slot`.
    #[inline]
    pub fn get(&self, slot: usize) -> Result<Option<Handle>> {
        let ts = self.state()?;
        // SAFETY: short exclusive borrow, no poll inside.
        let raw = unsafe { stack_of(ts) }.get(slot)?;
        Ok(Handle::from_raw(raw).ok())
    }

    #[inline(always)]
    fn pop_now(&self) -> Result<()> {
        let ts = self.state()?;
        // SAFETY: short exclusive borrow, no poll inside.
        unsafe { stack_of(ts) }.pop_frame(self.id)
    }

    /// Pops the frame, reporting misuse instead of panicking.
    pub fn pop(self) -> Result<()> {
        let r = self.pop_now();
        std::mem::forget(self);
        r
    }
}

impl Drop for Frame {
    #[inline]
    fn drop(&mut self) {
        match self.pop_now() {
            // NotRegistered: the thread's state (and the frame) is gone.
            Ok(()) | Err(Error::NotRegistered) => {}
            Err(e) => frame_drop_failed(e),
        }
    }
}

#[cold]
#[inline(never)]
fn frame_drop_failed(e: Error) {
    let msg = format!("{e} (a precise::Frame was dropped while not the innermost frame)");
    if std::thread::panicking() {
        crate::abort(&msg);
    }
    panic!("{msg}");
}
