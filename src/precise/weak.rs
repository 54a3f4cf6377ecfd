//! Weak handles: Go's `weak.Pointer` for objects of the precise heap.
//!
//! A weak handle is the object's handle kept hidden (bit-inverted), so
//! that nothing takes it for a reference: not the marker, which traces
//! only handle fields and roots, and not a scan of root memory, where the
//! inverted value names no table entry. The handle itself says whether
//! its object lives: once a cycle has found the object unreachable, the
//! handle no longer validates (and a later object in the same table slot
//! has a new handle), so [`Weak::value`] is a validation.
//!
//! The one subtlety is a cycle in progress. Its marking decides which
//! objects live, and an object reachable only through weak handles is not
//! in its snapshot: handing out a strong handle to it while the cycle runs
//! could resurrect an object the cycle is about to free. So a read that
//! finds a cycle between its Prepare round and the end of its marking
//! waits for the cycle to complete (in native code: the collector does
//! not wait for the reader), then validates against the completed marks.
//! Reads outside that window never wait. Go's `Value` never blocks (its
//! marking can shade the object); here a read during a marking costs up
//! to the rest of that marking.
//!
//! As in Go, two weak handles made from the same object are equal, and
//! stay equal after it is gone, so they can key a map (see
//! `tests/precise_weak.rs` for `unique.Make`-style interning).

use super::error::Result;
use super::handles::{self, Handle};
use super::{collector, marking, mutator};

/// Go's `weak.Pointer` for the precise heap: a reference that does not
/// keep its object alive. Equal weak handles were made from the same
/// object. Any bits are safe to hold and to pass to [`Weak::value`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(transparent)]
pub struct Weak(u64);

impl Weak {
    /// Go's `weak.Make(p)`: the weak handle of the live object `obj`
    /// (an error for a handle that is not live).
    pub fn make(obj: Handle) -> Result<Weak> {
        mutator::current()?;
        handles::resolve(obj)?;
        Ok(Weak(!obj.to_raw()))
    }

    /// Go's `Pointer.Value()`: the object's handle while the object lives,
    /// `None` once a completed collection found it unreachable. Waits while
    /// a cycle's marking runs (see the module docs). As for any handle, the
    /// result must be rooted before the next safepoint to stay live.
    pub fn value(self) -> Result<Option<Handle>> {
        loop {
            let ts = mutator::current()?;
            if marking::cycle_under_way() {
                collector::wait_for_marking(ts);
                continue;
            }
            let Ok(h) = Handle::from_raw(!self.0) else {
                return Ok(None);
            };
            return Ok(handles::resolve(h).is_ok().then_some(h));
        }
    }

    /// The weak handle as an integer (for C, and for storing it as bytes
    /// of an object: a weak handle in a handle field would be strong).
    pub const fn to_raw(self) -> u64 {
        self.0
    }

    /// The weak handle whose [`Weak::to_raw`] is `raw` (any value: one that
    /// never came from [`Weak::make`] reads as `None`).
    pub const fn from_raw(raw: u64) -> Weak {
        Weak(raw)
    }
}
