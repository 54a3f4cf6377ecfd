//! Go's `time` for Rust and compiled code: [`sleep`], [`Timer`] and
//! [`after`], on the timer heaps (`timer.rs`).

use super::chan::{Chan, RawChan};
use super::timer;

/// Go's `time.Sleep`: a goroutine parks until the time has passed (its
/// worker runs others meanwhile); a plain thread sleeps.
pub fn sleep(d: std::time::Duration) {
    timer::sleep(i64::try_from(d.as_nanos()).unwrap_or(i64::MAX));
}

/// Go's `time.Sleep(ns)` in nanoseconds (non-positive: no wait).
pub(crate) fn sleep_ns(ns: i64) {
    timer::sleep(ns);
}

/// Go's `time.NewTimer`: delivers the time (nanoseconds since 1970) on its
/// channel once `d` has passed, unless stopped first.
pub struct Timer {
    inner: std::sync::Arc<TimerInner>,
}

#[repr(C)]
struct TimerInner {
    timer: timer::Timer,
    chan: Chan<i64>,
}

// SAFETY: the timer's own fields are atomics, its channel pointer names
// `chan` (Sync); the timer heap touches it only under its lock.
unsafe impl Send for TimerInner {}
// SAFETY: as above.
unsafe impl Sync for TimerInner {}

/// Drops the heap's reference to a Rust timer.
///
/// # Safety
/// `t` is the `timer` field of a `TimerInner` whose Arc the heap held.
unsafe fn release_rust_timer(t: *const timer::Timer) {
    // SAFETY: timer is the first field of the repr(C) TimerInner... see
    // Timer::arm: the heap's reference is an Arc::into_raw of the inner.
    drop(unsafe { std::sync::Arc::from_raw(t.cast::<TimerInner>()) });
}

impl Timer {
    /// A timer that fires after `d`.
    pub fn new(d: std::time::Duration) -> Timer {
        let chan = Chan::<i64>::new(1);
        let raw = chan.raw().expect("not nil") as *const RawChan;
        let inner = std::sync::Arc::new(TimerInner {
            timer: timer::Timer::new(raw, Some(release_rust_timer)),
            chan,
        });
        let t = Timer { inner };
        t.reset(d);
        t
    }

    /// Its channel.
    pub fn chan(&self) -> &Chan<i64> {
        &self.inner.chan
    }

    /// Go's `Stop`: true if it was pending (it will not fire).
    pub fn stop(&self) -> bool {
        // SAFETY: the inner lives while self does.
        unsafe { timer::stop(&self.inner.timer) }
    }

    /// Go's `Reset`: fire `d` from now; true if it was pending.
    pub fn reset(&self, d: std::time::Duration) -> bool {
        // The heap holds a reference while the firing is pending.
        let held = std::sync::Arc::into_raw(self.inner.clone());
        let ns = i64::try_from(d.as_nanos()).unwrap_or(i64::MAX);
        // SAFETY: the inner stays alive through the heap's reference.
        unsafe { timer_reset(&(*held).timer, ns) }
    }
}

/// Arms a timer (see `timer::reset`), with the scheduler started: its
/// workers fire timers, and a plain thread may be the first to set one.
///
/// # Safety
/// As for `timer::reset`.
pub(crate) unsafe fn timer_reset(t: *const timer::Timer, ns: i64) -> bool {
    super::config::scheduler();
    // SAFETY: forwarded from the caller.
    unsafe { timer::reset(t, ns) }
}

/// Go's `time.After(d)`: a channel that receives the time once `d` has
/// passed.
pub fn after(d: std::time::Duration) -> Chan<i64> {
    Timer::new(d).chan().clone()
}
