//! Mark assists: the state that the collector and the assisting mutators
//! share, and how the collector hands them work.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};

/// Values the collector hands to assists at a time.
pub(super) const SHARE: usize = 512;

/// What the collector hands to assists from its mark stack: [`SHARE`]
/// values off the top while it has plenty; else, once an assist found
/// nothing queued (`hungry`, asked only then), the bottom half of a stack
/// of two or more. Marking a tree or a list keeps the stack to a few dozen
/// values, so without the second rule assists would never get work there.
/// The bottom holds the oldest values, the roots of the largest subgraphs
/// still to mark; the top is what marking reached last, mostly leaves.
pub(super) fn share(stack: &mut Vec<u64>, hungry: impl FnOnce() -> bool) -> Option<Vec<u64>> {
    if stack.len() >= 2 * SHARE {
        Some(stack.split_off(stack.len() - SHARE))
    } else if stack.len() >= 2 && hungry() {
        let half = stack.len() / 2;
        Some(stack.drain(..half).collect())
    } else {
        None
    }
}

/// The state that the collector and the assisting mutators share.
///
/// A mutator whose allocation is ahead of marking or past half the pacer's
/// allowance while marking runs asks for assists (`wanted`). The collector,
/// at its next look, switches its own marking to atomic claims and opens
/// them (`open`); from then on it hands part of its stack to the grey
/// queue, and an assisting mutator takes a batch there (when it finds none,
/// it says so, `hungry`, and waits a moment for the collector's next look:
/// see [`share`]), marks what it reaches (at most the budget the pacer gave
/// it, the rest handed back), and adds what it marked to the counts here
/// (and the pacer's). The collector closes assists before every Flush
/// round: it stores `open` false, then waits until `active` is 0; an assist
/// increments `active`, then checks `open` (both sequentially consistent),
/// so once the collector has seen `active` at 0 no assist is running or can
/// start, and the round and its check (I4) see the collector's marking
/// alone. Assists never run after marking ends: the collector closes them
/// before its last Flush round.
pub(super) struct Assists {
    pub(super) wanted: AtomicBool,
    pub(super) open: AtomicBool,
    /// An assist found the grey queue empty: the collector hands over part
    /// of its stack at its next look, however short the stack is (a tree's
    /// marking keeps it to a few dozen values).
    pub(super) hungry: AtomicBool,
    pub(super) active: AtomicUsize,
    pub(super) objects: AtomicU64,
    pub(super) bytes: AtomicU64,
    pub(super) heap_bytes: AtomicU64,
}

pub(super) static ASSISTS: Assists = Assists {
    wanted: AtomicBool::new(false),
    open: AtomicBool::new(false),
    hungry: AtomicBool::new(false),
    active: AtomicUsize::new(0),
    objects: AtomicU64::new(0),
    bytes: AtomicU64::new(0),
    heap_bytes: AtomicU64::new(0),
};

#[cfg(test)]
mod share_tests {
    use super::{share, SHARE};

    #[test]
    fn a_long_stack_gives_its_top_without_asking() {
        let mut stack: Vec<u64> = (0..2 * SHARE as u64).collect();
        let batch = share(&mut stack, || panic!("asked whether an assist is hungry")).unwrap();
        assert_eq!(batch, (SHARE as u64..2 * SHARE as u64).collect::<Vec<_>>());
        assert_eq!(stack, (0..SHARE as u64).collect::<Vec<_>>());
    }

    #[test]
    fn a_short_stack_gives_its_bottom_half_to_a_hungry_assist_only() {
        let mut stack: Vec<u64> = vec![10, 11, 12, 13, 14];
        assert_eq!(share(&mut stack, || false), None);
        assert_eq!(stack, [10, 11, 12, 13, 14]);
        assert_eq!(share(&mut stack, || true), Some(vec![10, 11]));
        assert_eq!(stack, [12, 13, 14]);
        // One value is the collector's own: it keeps it.
        let mut one = vec![7];
        assert_eq!(share(&mut one, || true), None);
        assert_eq!(one, [7]);
    }
}
