//! The execution trace's events of the scheduler (`prof::trace` keeps and
//! writes them): goroutines created, run (a slice per run on a
//! processor, with why it ended), unblocked; processors started and
//! stopped (leaving and joining the idle list); sysmon's preemption
//! requests. Each site first loads the trace's session (one relaxed load;
//! 0: no trace, nothing more is done).
//!
//! [`start_trace`] and [`stop_trace`] are the public entry points.

use super::g::{Switch, G};
use crate::prof::trace::{self, End, Event, Kind};

/// Starts the execution trace, written to `path` as Chrome / Perfetto
/// trace-event JSON (open it in `ui.perfetto.dev` or `chrome://tracing`).
/// An error if a trace is already being taken or `path` cannot be
/// created.
pub fn start_trace(path: &std::path::Path) -> std::io::Result<()> {
    trace::start(path)
}

/// Stops the execution trace and finishes its file; an error if none is
/// being taken or the file could not be written.
pub fn stop_trace() -> std::io::Result<()> {
    trace::stop()
}

/// Whether a trace is being taken (one relaxed load).
#[inline(always)]
pub(crate) fn on() -> bool {
    trace::session() != 0
}

/// The track of the calling thread: its processor's, or the others'.
fn track() -> u32 {
    super::procs::current_p().map_or(trace::OTHER, |p| trace::track_of_p(p.id))
}

/// Records an instant event; returns its time.
fn event(session: u32, kind: Kind, track: u32, g: u64, arg: u64) -> u64 {
    let ts = trace::ticks();
    trace::emit(
        session,
        Event {
            session,
            kind,
            track,
            ts,
            dur: 0,
            g,
            arg,
            reason: "",
        },
    );
    ts
}

/// A slice of `g` starts: its start time and track, or `None` with no
/// trace. `at`: the time the worker's previous slice ended, when `g` was
/// taken from its queues straight after (0: read the clock). A slice
/// never starts before the event that queued its goroutine (its
/// creation or unblocking, perhaps on another worker after `at`): that
/// event's time is kept in `g` before it is queued.
#[inline(always)]
pub(crate) fn slice_start(p: Option<&super::procs::P>, g: &G, at: u64) -> Option<(u64, u32)> {
    if !on() {
        return None;
    }
    let start = if at != 0 {
        at.max(g.trace_queued.load(std::sync::atomic::Ordering::Relaxed))
    } else {
        trace::ticks()
    };
    Some((start, p.map_or(trace::OTHER, |p| trace::track_of_p(p.id))))
}

/// The slice of `g` started at `start` ended by `why` (`None`: it
/// finished); returns when (0 if the trace stopped meanwhile). Called on
/// the worker before the goroutine can run elsewhere (a parked one is
/// not yet `WAITING`), so its wait reason is its own.
#[cold]
pub(crate) fn slice_end(start: (u64, u32), g: &G, why: Option<Switch>) -> u64 {
    let session = trace::session();
    if session == 0 {
        return 0;
    }
    let (end, reason) = match why {
        None => (End::Exit, ""),
        Some(Switch::Yield) => (End::Yield, ""),
        Some(Switch::Preempt) => (End::Preempt, ""),
        Some(Switch::Park) => (End::Block, g.wait_reason.get()),
        Some(Switch::SyscallExit) => (End::Syscall, ""),
    };
    let now = trace::ticks();
    trace::emit(
        session,
        Event {
            session,
            kind: Kind::Slice,
            track: start.1,
            ts: start.0,
            dur: now.saturating_sub(start.0),
            g: g.id(),
            arg: end as u64,
            reason,
        },
    );
    now
}

/// Goroutine `g` was created (by the running goroutine, if any); before
/// it is queued.
#[inline(always)]
pub(crate) fn created(g: &G) {
    let session = trace::session();
    if session != 0 {
        let ts = event(session, Kind::Create, track(), g.id(), super::goid());
        g.trace_queued
            .store(ts, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Goroutine `g` (whose id is `id`) was made runnable from a park; before
/// it is queued.
#[inline(always)]
pub(crate) fn unblocked(g: &G, id: u64) {
    let session = trace::session();
    if session != 0 {
        let ts = event(session, Kind::Unblock, track(), id, super::goid());
        g.trace_queued
            .store(ts, std::sync::atomic::Ordering::Relaxed);
    }
}

/// Processor `id` left the idle list (`start`) or joined it.
#[inline(always)]
pub(crate) fn proc_changed(id: usize, start: bool) {
    let session = trace::session();
    if session != 0 {
        let kind = if start {
            Kind::ProcStart
        } else {
            Kind::ProcStop
        };
        event(session, kind, trace::track_of_p(id), id as u64, 0);
    }
}

/// sysmon (or a stop of the world) asked goroutine `id` to yield.
#[inline(always)]
pub(crate) fn preempt_requested(id: u64) {
    let session = trace::session();
    if session != 0 {
        event(session, Kind::Preempt, trace::SYSMON, id, 0);
    }
}
