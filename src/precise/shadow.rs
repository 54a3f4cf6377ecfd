//! Shadow stacks: each thread's roots, in frames. This file is the stack;
//! what a thread does with its own (the public frame and root functions) is
//! `frame.rs`.
//!
//! A thread has one contiguous handle stack and one frame stack, both
//! growable without limit (the Coex design has 8,192 handles and 1,024
//! frames, unchecked). [`push_frame`](super::push_frame) records the handle
//! stack's top, [`root`](super::root) appends a handle and returns its
//! slot, [`pop_frame`](super::pop_frame) restores the top. Frames are
//! popped innermost first: popping (or rooting into) any other frame is
//! [`Error::FrameNotTop`], with no frame open [`Error::NoFrame`]. The Rust
//! guard [`Frame`](super::Frame) pops on drop.
//!
//! The collector reads a thread's stack only while the thread is stopped at
//! a safepoint or in native code (see `mutator.rs`), so pushing and popping
//! take no lock and no atomic read-modify-write.
//! [`push_frame`](super::push_frame) is a safepoint; `root` is not, so a
//! handle returned by an allocation can be rooted before any collection
//! runs; nor is [`pop_frame`](super::pop_frame), so a function may pop its
//! frame and return a handle the frame held, for the caller to root before
//! its next safepoint (as a compiled function returns a pointer in a
//! register). Every pop follows a push, so a thread that only pushes and
//! pops still polls.
//!
//! Handle values on the stack are validated in debug builds only (a `root`
//! of a stale or invalid handle is an error there); in release builds the
//! marker skips any value that is not a live handle, and the error surfaces
//! when the handle is used.
use super::error::{Error, Result};

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
    pub(super) fn check_top(&self, frame: FrameId) -> Result<()> {
        if self.frames.len() == frame.0 {
            Ok(())
        } else if self.frames.is_empty() {
            Err(Error::NoFrame)
        } else {
            Err(Error::FrameNotTop)
        }
    }

    #[inline(always)]
    pub(super) fn pop_frame(&mut self, frame: FrameId) -> Result<()> {
        self.check_top(frame)?;
        if let Some(base) = self.frames.pop() {
            self.slots.truncate(base);
        }
        Ok(())
    }

    pub(super) fn set(&mut self, slot: usize, raw: u64) -> Result<()> {
        match self.slots.get_mut(slot) {
            Some(s) => {
                *s = raw;
                Ok(())
            }
            None => Err(Error::NoSuchRoot),
        }
    }

    pub(super) fn get(&self, slot: usize) -> Result<u64> {
        self.slots.get(slot).copied().ok_or(Error::NoSuchRoot)
    }
}
