//! `fork()` and the precise collector (see `crate::gc::fork`).
//!
//! Before the fork the forking thread waits until no cycle runs (as native
//! code, so the cycle does not wait for it) and takes every lock of the
//! collector in lock order: the collector's control, the thread registry,
//! the heap, the handle pool, then the leaves. So the child starts with
//! every structure consistent and no cycle under way. In the child, the
//! threads that did not come along are unregistered on their behalf (their
//! caches and barrier logs handed back, their root memory orphaned, so the
//! collector still scans it), and the collector thread, which did not come
//! along either, is forgotten; it starts again once every layer is
//! repaired if a cycle was requested, else with the next request.

use crate::gc::fork::{on_fork, ForkHooks};

static HOOKS: ForkHooks = ForkHooks {
    quiesce: super::collector::quiet_for_fork,
    prepare,
    child,
    resume,
};

/// Installs the hooks (once, when the collector starts).
pub(super) fn install() {
    on_fork(&HOOKS);
}

/// Each call keeps its locks with `held::keep`, released after the fork
/// (the collector was quieted first, by `quiesce`).
fn prepare() {
    super::mutator::lock_for_fork();
    super::heap::lock_for_fork();
    super::handles::lock_for_fork();
    super::types::lock_for_fork();
    super::marking::lock_for_fork();
    super::root_scan::lock_for_fork();
    super::stats::lock_for_fork();
    crate::roots::precise::lock_for_fork();
}

fn child() {
    let me = super::mutator::adopt_after_fork();
    crate::roots::precise::orphan_all_but(me);
    super::collector::forget_after_fork();
}

/// Once every layer is repaired: the collector thread starts again if a
/// cycle was requested and not started.
fn resume() {
    super::collector::restart_after_fork();
}
