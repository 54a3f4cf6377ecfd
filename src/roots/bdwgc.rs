//! bdwgc and root memory. Blocks are uncollectable objects, which bdwgc
//! scans by itself: nothing to do. Stacks are on a list that a root pusher
//! (`gc::scan::add_root_pusher`) walks at every collection, pushing each
//! stack's live ranges (design.md invariant 3).
//!
//! The pusher runs with the world stopped and the collector's allocation
//! lock held, so it never takes a lock a stopped mutator may hold: the
//! list changes only under that same lock (`gc::scan::with_collector_lock`),
//! and each stack's (chunk, top) pair is published with ordered stores that
//! keep every intermediate state scannable.

use super::{Collector, StackHead};
use crate::gc::scan;
use std::ptr::{self, NonNull};

/// bdwgc, as a collector of root memory.
pub(crate) struct Bdwgc;

/// A stack's place on the list: changed and read only under the
/// collector's lock.
pub(crate) struct Link {
    head: *const StackHead,
    next: *mut Link,
    prev: *mut Link,
}

impl Default for Link {
    fn default() -> Link {
        Link {
            head: ptr::null(),
            next: ptr::null_mut(),
            prev: ptr::null_mut(),
        }
    }
}

/// The first stack on the list, or null.
static mut FIRST: *mut Link = ptr::null_mut();

impl Collector for Bdwgc {
    type Stack = Link;
    type Block = ();

    unsafe fn stack_created(head: NonNull<StackHead>, link: *mut Link) {
        // Not a `Once` (a fork during it would leave the child's stacks
        // waiting on it forever): adding the pusher is idempotent.
        static PUSHER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
        if !PUSHER.load(std::sync::atomic::Ordering::Acquire) {
            scan::add_root_pusher(push_stacks);
            PUSHER.store(true, std::sync::atomic::Ordering::Release);
        }
        scan::with_collector_lock(|| {
            // SAFETY: the collector's lock serialises every access to the
            // list and its links; link lives in the new stack's head.
            unsafe {
                (*link).head = head.as_ptr();
                (*link).next = FIRST;
                (*link).prev = ptr::null_mut();
                if !FIRST.is_null() {
                    (*FIRST).prev = link;
                }
                FIRST = link;
            }
        })
    }

    unsafe fn stack_dropped(_head: NonNull<StackHead>, link: *mut Link) {
        scan::with_collector_lock(|| {
            // SAFETY: as in stack_created; link is on the list.
            unsafe {
                let (next, prev) = ((*link).next, (*link).prev);
                if prev.is_null() {
                    FIRST = next;
                } else {
                    (*prev).next = next;
                }
                if !next.is_null() {
                    (*next).prev = prev;
                }
            }
        })
    }
}

/// Pushes every live range of every listed stack. Called with the world
/// stopped and the collector's lock held; may run more than once per
/// collection after a mark-stack overflow.
fn push_stacks() {
    // SAFETY: the collector holds its lock, which guards the list, and
    // every mutator is stopped, so no stack changes.
    unsafe {
        let mut link = FIRST;
        while !link.is_null() {
            (*(*link).head).for_each_range(|lo, hi| scan::push_range(lo, hi));
            link = (*link).next;
        }
    }
}
