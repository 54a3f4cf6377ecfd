//! Frames: the shadow-stack functions a thread calls on its own stack
//! (see `shadow.rs` for the stack and the rules), and the [`Frame`] guard.

use super::error::{Error, Result};
use super::handles::Handle;
use super::mutator::{self, Mutator};
use super::shadow::{FrameId, ShadowStack};
use std::marker::PhantomData;

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
