//! Goroutine dumps as Go prints them, from one walk of each parked
//! goroutine's stack: SIGQUIT (every goroutine, then status 2), the
//! deadlock report, `GOTRACEBACK=all` on an unrecovered panic,
//! `runtime.Stack(buf, true)`, and the goroutine profile.
//!
//! # The walk
//!
//! A goroutine that switches out keeps its frame pointer in its header
//! (`G::fp`, written in `G::switch_out`, on its own stack). While it is
//! not running (parked, or runnable after a yield) its frames stay as
//! they were, and the chain of frame records from that pointer names
//! every caller up to its coroutine's entry: `unwind::walk_chain`, which
//! reads nothing outside the goroutine's slot ([`Snapshot::take`]), so a
//! stale pointer ends a walk early and never faults (slots stay mapped
//! for the life of the process). A goroutine that is running is listed
//! as Go lists one on another thread: "stack unavailable". One in a
//! system call is walked, with the world stopped, from the frame record
//! of the function that entered the call (`G::syscall_fp`): that
//! function and its callers stay as they are until the call's exit,
//! which waits for the world to start (its processor was claimed for
//! the stop) or has not begun (`G::in_syscall` is still set).
//!
//! # Consistency
//!
//! SIGQUIT's dump, `runtime.Stack(buf, true)` and the goroutine profile
//! stop the world (`stw.rs`), as Go's do: nothing runs while the stacks
//! are walked, so every section is exact. The deadlock report runs when
//! every worker is parked. A panic's report (`GOTRACEBACK=all`) walks
//! while goroutines may run: a goroutine whose status word changed during its walk, or that
//! switched out again meanwhile (`G::switches`, as a sequence lock's
//! count), is listed as unavailable, never with frames of two states.
//! The goroutine's side: its worker stores RUNNING and then a release
//! fence before resuming it (`sched::execute`), and it bumps the count
//! with a release store when it switches out; the dump's side: status
//! and count (acquire), the walk, an acquire fence, status (acquire) and
//! count again ([`seq`], model-checked by `tests/dump_loom.rs`).
//!
//! # Layout (Go's `traceback.go`, Go 1.21 and later)
//!
//! Each section is a blank line, `goroutine N [status]:` (the wait
//! reason, `, M minutes` once it has waited a minute, `, locked to
//! thread`), one `function(...)` and `\tfile:line +0xoff` per frame (the
//! runtime's own frames left out, at most 100), and for every goroutine
//! but main `created by F in goroutine N` with the go statement's place.
//! The frames are symbolised once per address ([`Symbols`]), so a dump
//! of many goroutines parked in the same place costs one lookup per
//! place.

use super::g::{self, G};
use super::procs;
use super::stack as pool;
use crate::defer::traceback::{self, FrameText};
use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::atomic::Ordering;

/// Return addresses kept per goroutine (Go prints at most 100 frames;
/// the runtime's own frames come first and are left out).
const MAX_PCS: usize = 128;
/// Frames printed per goroutine, as Go's traceback.
const MAX_FRAMES: usize = 100;

/// Now, by the coarse monotonic clock (a few nanoseconds to read): when
/// a goroutine parks, for a dump's minutes.
pub(crate) fn coarse_now() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: writes the timespec; the clock always exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC_COARSE, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// A dump's state for a `RUNNING` goroutine in a system call.
const SYSCALL: u64 = g::STATE_MASK;

/// One goroutine as a dump sees it.
pub(crate) struct Snapshot {
    pub(crate) id: u64,
    state: u64,
    reason: &'static str,
    /// Nanoseconds it has waited (0 when not parked).
    waited: u64,
    locked: bool,
    is_main: bool,
    created_pc: usize,
    creator: u64,
    /// Its frames (return addresses, innermost first), when walked.
    pcs: Option<Vec<usize>>,
    /// For each of `pcs`, the address of the frame record it was read
    /// from (the callee's frame pointer): Go's `sp=` and `fp=` fields.
    records: Vec<usize>,
    /// Its header's address (Go's `gp=`).
    gp: usize,
    /// The worker of its system call (Go's `m=N mp=0x…`): `(id, address)`.
    m: Option<(usize, usize)>,
}

impl Snapshot {
    /// Reads goroutine `g` and walks its stack if it is not running (or,
    /// with the world `stopped`, if it is in a system call).
    fn take(g: &G, geometry: &pool::Geometry, now: u64, stopped: bool) -> Option<Snapshot> {
        if g.state() == g::DEAD {
            return None;
        }
        let status = g.status.load(Ordering::Acquire);
        let state = status & g::STATE_MASK;
        if state == g::DEAD || status & !g::LOW_MASK != g.tag() {
            return None;
        }
        // A goroutine in a system call stays RUNNING (`syscall.rs`).
        let state = if state == g::RUNNING && g.in_syscall.load(Ordering::Relaxed) {
            SYSCALL
        } else {
            state
        };
        let reason = g.wait_reason.get();
        let since = g.waitsince.load(Ordering::Relaxed);
        let saved = g.fp.load(Ordering::Acquire) != 0;
        let range = crate::unwind::StackRange {
            lo: g.slot.lo(geometry),
            hi: g.slot.hi(geometry),
        };
        let mut m = None;
        let walked = if (state == g::WAITING || state == g::RUNNABLE) && saved {
            seq::read(
                status,
                || g.status.load(Ordering::Acquire),
                &g.switches,
                || walk(g.fp.load(Ordering::Relaxed), range, None),
            )
        } else if state == SYSCALL && stopped && g.syscall_pc.load(Ordering::Relaxed) != 0 {
            // SAFETY: workers are never freed; this one was stored by the
            // goroutine as it entered the call it is still in.
            let worker = unsafe { &*(g.syscall_m.load(Ordering::Relaxed) as *const procs::M) };
            m = Some((worker.id, worker as *const procs::M as usize));
            let entered = crate::unwind::FrameRecord {
                at: g.syscall_sp.load(Ordering::Relaxed) - 2 * std::mem::size_of::<usize>(),
                fp: g.syscall_fp.load(Ordering::Relaxed),
                pc: g.syscall_pc.load(Ordering::Relaxed),
            };
            Some(walk(entered.fp, range, Some(entered)))
        } else if state == g::RUNNABLE {
            // Never ran: nothing on its stack yet.
            Some((Vec::new(), Vec::new()))
        } else {
            None
        };
        let (pcs, records) = match walked {
            Some((pcs, records)) => (Some(pcs), records),
            None => (None, Vec::new()),
        };
        Some(Snapshot {
            id: g.id(),
            state,
            reason,
            waited: if state == g::WAITING && since != 0 {
                now.saturating_sub(since)
            } else {
                0
            },
            locked: !g.locked_m.load(Ordering::Relaxed).is_null(),
            is_main: g.is_main.get(),
            created_pc: g.created_pc,
            creator: g.creator,
            pcs,
            records,
            gp: g as *const G as usize,
            m,
        })
    }

    /// The status Go prints between the brackets (its `gStatusStrings`,
    /// or the wait reason).
    fn status(&self) -> &'static str {
        match self.state {
            g::RUNNABLE => "runnable",
            g::RUNNING => "running",
            SYSCALL => "syscall",
            _ if self.reason.is_empty() => "waiting",
            _ => self.reason,
        }
    }
}

/// The return addresses of the chain of frame records from `fp`, each
/// with the address of the record it was read from; `first`: a frame
/// record read earlier, whose return address comes first.
fn walk(
    fp: usize,
    range: crate::unwind::StackRange,
    first: Option<crate::unwind::FrameRecord>,
) -> (Vec<usize>, Vec<usize>) {
    let mut pcs = [0usize; MAX_PCS];
    let mut records = [0usize; MAX_PCS];
    let k = usize::from(first.is_some());
    if let Some(f) = first {
        (pcs[0], records[0]) = (f.pc, f.at);
    }
    let n = k + crate::unwind::walk_chain_records(fp, range, &mut pcs[k..], &mut records[k..]);
    (pcs[..n].to_vec(), records[..n].to_vec())
}

/// Every live goroutine but `skip`, by id; `stopped`: the caller stopped
/// the world.
pub(crate) fn snapshot_all(skip: Option<u64>, stopped: bool) -> Vec<Snapshot> {
    let mut list = Vec::new();
    let geometry = pool::geometry();
    let now = coarse_now();
    pool::for_each_live(|slot| {
        // SAFETY: a live slot holds a goroutine's header.
        let g = unsafe { G::of(slot, &geometry) };
        if let Some(s) = Snapshot::take(g, &geometry, now, stopped) {
            if Some(s.id) != skip {
                list.push(s);
            }
        }
    });
    list.sort_unstable_by_key(|s| s.id);
    list
}

/// Go's goroutine header: `goroutine 7 [chan receive, 2 minutes]:`; at
/// the system level (`Some(gp, m)`) with the goroutine's address and its
/// worker's, `goroutine 7 gp=0x… m=nil [chan receive]:`.
pub(crate) fn header(
    id: u64,
    status: &str,
    waited_ns: u64,
    locked: bool,
    system: Option<(usize, Option<(usize, usize)>)>,
) -> String {
    let mut out = format!("goroutine {id}");
    match system {
        Some((gp, Some((m, mp)))) => {
            let _ = write!(out, " gp={gp:#x} m={m} mp={mp:#x}");
        }
        Some((gp, None)) => {
            let _ = write!(out, " gp={gp:#x} m=nil");
        }
        None => {}
    }
    let _ = write!(out, " [{status}");
    let minutes = waited_ns / 60_000_000_000;
    if minutes >= 1 {
        let _ = write!(out, ", {minutes} minutes");
    }
    if locked {
        out.push_str(", locked to thread");
    }
    out.push_str("]:\n");
    out
}

/// Frames symbolised once per return address.
#[derive(Default)]
pub(crate) struct Symbols {
    frames: HashMap<usize, FrameText>,
    created: HashMap<(usize, u64), Option<String>>,
    /// Go's traceback level 2 (`GOTRACEBACK=system`, and every SIGQUIT):
    /// the runtime's frames shown, `fp= sp= pc=` on each frame's place
    /// line, the goroutine's and its worker's addresses in its header.
    system: bool,
}

impl Symbols {
    /// Symbols for a dump at Go's level 2 (see `system`).
    fn system() -> Symbols {
        Symbols {
            system: true,
            ..Symbols::default()
        }
    }

    fn frame(&mut self, pc: usize) -> &FrameText {
        let system = self.system;
        self.frames
            .entry(pc)
            .or_insert_with(|| traceback::frame_text(pc, system))
    }

    /// The frames a section prints for `pcs` (the runtime's left out,
    /// but at the system level); `records`: where each was read (for the
    /// system level's fields).
    fn push_frames(&mut self, out: &mut String, pcs: &[usize], records: &[usize]) {
        const WORD: usize = std::mem::size_of::<usize>();
        let system = self.system;
        let mut shown = 0;
        for (i, &pc) in pcs.iter().enumerate() {
            match self.frame(pc) {
                FrameText::Shown(text) => {
                    if shown == MAX_FRAMES {
                        out.push_str("...additional frames elided...\n");
                        return;
                    }
                    match records.get(i).filter(|_| system) {
                        Some(&at) => {
                            // The frame starts two words above its callee's
                            // record and ends two words above its own.
                            let fp = records.get(i + 1).map_or(0, |&r| r + 2 * WORD);
                            let sp = at + 2 * WORD;
                            out.push_str(text.strip_suffix('\n').unwrap_or(text));
                            let _ = writeln!(out, " fp={fp:#x} sp={sp:#x} pc={pc:#x}");
                        }
                        None => out.push_str(text),
                    }
                    shown += 1;
                }
                FrameText::Hidden => {}
                FrameText::End => return,
            }
        }
    }

    /// The return addresses of `pcs` a section shows (a profile's stack:
    /// the runtime's own left out, up to the goroutine's first function).
    fn shown(&mut self, pcs: &[usize]) -> Vec<usize> {
        let mut out = Vec::new();
        for &pc in pcs {
            match self.frame(pc) {
                FrameText::Shown(_) => out.push(pc),
                FrameText::Hidden => {}
                FrameText::End => break,
            }
        }
        out
    }

    fn push_created_by(&mut self, out: &mut String, s: &Snapshot) {
        if s.is_main || s.created_pc == 0 {
            return;
        }
        let text = self
            .created
            .entry((s.created_pc, s.creator))
            .or_insert_with(|| traceback::created_by(s.created_pc, s.creator));
        if let Some(text) = text {
            out.push_str(text);
        }
    }

    /// One goroutine's section: a blank line, the header, the frames,
    /// `created by`.
    pub(crate) fn push_section(&mut self, out: &mut String, s: &Snapshot) {
        out.push('\n');
        let system = self.system.then_some((s.gp, s.m));
        out.push_str(&header(s.id, s.status(), s.waited, s.locked, system));
        match &s.pcs {
            Some(pcs) => self.push_frames(out, pcs, &s.records),
            None => out.push_str("\tgoroutine running on other thread; stack unavailable\n"),
        }
        self.push_created_by(out, s);
    }
}

/// The sections of every goroutine but `skip` (see the module docs).
pub(crate) fn sections(skip: Option<u64>) -> String {
    format_sections(&snapshot_all(skip, false), system_level())
}

/// Whether `GOTRACEBACK` asks for Go's level 2 (`system` or `crash`).
fn system_level() -> bool {
    traceback::level() >= traceback::Level::System
}

/// The sections of `list`, in its order, at Go's level 1 or (`system`)
/// level 2.
fn format_sections(list: &[Snapshot], system: bool) -> String {
    let mut out = String::with_capacity(list.len() * 160);
    let mut symbols = if system {
        Symbols::system()
    } else {
        Symbols::default()
    };
    for s in list {
        symbols.push_section(&mut out, s);
    }
    out
}

/// `GOTRACEBACK=all`'s addition to a panic's report, and
/// `runtime.Stack(buf, true)`'s: every goroutine's section but
/// `running`'s. `stop`: read with the world stopped (`runtime.Stack`, as
/// Go's; a panic's report walks as it goes, see the module docs).
pub(crate) fn other_goroutines(running: u64, stop: bool) -> String {
    if !stop {
        return sections(Some(running));
    }
    let Some(s) = procs::get() else {
        return String::new();
    };
    let list = super::stw::real::stop_the_world(s, |_| snapshot_all(Some(running), true));
    format_sections(&list, system_level())
}

/// What a SIGQUIT does (registered with the signal layer): with the
/// world stopped, Go's `SIGQUIT: quit`, the `PC=` line, every goroutine's
/// section at Go's level 2 (a SIGQUIT is a runtime throw to Go, which
/// always shows the runtime's frames) and the interrupted registers, on
/// standard error, then status 2. At `GOTRACEBACK=none`, the first two
/// lines only.
fn on_quit(q: crate::signal::Quit) {
    let mut text = format!(
        "SIGQUIT: quit\nPC={:#x} m=0 sigcode={}\n",
        q.pc, q.code as i64 as u64
    );
    if traceback::level() == traceback::Level::None {
        crate::defer::exit_go(&text)
    }
    let s = super::config::scheduler();
    super::stw::real::stop_the_world(s, |_| {
        text.push_str(&format_sections(&snapshot_all(None, true), true));
        text.push('\n');
        text.push_str(&registers(&q.registers));
        crate::defer::exit_go(&text)
    })
}

/// Go's `dumpregs`: one line per register, its name in a column of
/// seven, its value in hex (nothing where the registers were not read).
fn registers(values: &Option<[u64; crate::signal::REGISTERS]>) -> String {
    let mut out = String::new();
    for (name, value) in crate::signal::REGISTER_NAMES
        .iter()
        .zip(values.iter().flatten())
    {
        let _ = writeln!(out, "{name:<7}{value:#x}");
    }
    out
}

/// Installs the SIGQUIT dump (when the scheduler starts; a program
/// without goroutines keeps SIGQUIT's default action).
pub(crate) fn install_sigquit() {
    crate::signal::on_quit(on_quit);
}

/// The stacks of every goroutine for a goroutine profile, with the world
/// stopped: the calling goroutine's (or thread's) live stack, then each
/// other goroutine's, as a dump shows them (the runtime's frames left
/// out).
fn profile_stacks() -> Vec<Vec<usize>> {
    let mut own = Vec::new();
    crate::unwind::walk(|pc| {
        own.push(pc);
        own.len() < MAX_PCS
    });
    let me = procs::current_g().map(|g| g.id());
    let list = match procs::get() {
        Some(s) => super::stw::real::stop_the_world(s, |_| snapshot_all(me, true)),
        None => Vec::new(),
    };
    let mut symbols = Symbols::default();
    let mut stacks = Vec::with_capacity(list.len() + 1);
    stacks.push(symbols.shown(&own));
    for s in list {
        stacks.push(symbols.shown(&s.pcs.unwrap_or_default()));
    }
    stacks
}

/// Go's goroutine profile (`pprof.Lookup("goroutine").WriteTo(w, 0)`):
/// every goroutine's stack, counted by stack, in pprof's format (`go tool
/// pprof -top FILE`). Stops the world while the stacks are read: a
/// goroutine that runs without reaching a preemption point delays it.
pub fn write_goroutine_profile(out: impl std::io::Write) -> std::io::Result<()> {
    let mut counts: HashMap<Vec<usize>, i64> = HashMap::new();
    for stack in profile_stacks() {
        *counts.entry(stack).or_default() += 1;
    }
    crate::prof::goroutine::write(counts.into_iter().collect(), out)
}

/// [`write_goroutine_profile`] to a file at `path` (created or
/// truncated).
pub fn write_goroutine_profile_to(path: &std::path::Path) -> std::io::Result<()> {
    let file = std::fs::File::create(path)?;
    let mut out = std::io::BufWriter::new(file);
    write_goroutine_profile(&mut out)?;
    std::io::Write::flush(&mut out)
}

/// Go's `runtime.Stack(buf, all)` as text: the calling goroutine's stack
/// (`goroutine N [running]:` and its frames) and, with `all`, every other
/// goroutine's section.
pub fn stack(all: bool) -> String {
    traceback::stack(all)
}

/// Go's `runtime.Stack(buf, all)`: writes as much of [`stack`]'s text as
/// fits into `buf` (no terminator) and returns how many bytes it wrote.
pub fn stack_into(buf: &mut [u8], all: bool) -> usize {
    let text = stack(all);
    let n = text.len().min(buf.len());
    buf[..n].copy_from_slice(&text.as_bytes()[..n]);
    n
}

/// The sequence-lock read under which a dump walks a goroutine that may
/// run meanwhile (see the module docs), in one place for the goroutine,
/// its worker and the dump (`tests/dump_loom.rs` runs it under loom).
pub(crate) mod seq {
    use super::super::prim::{fence, AtomicU64};
    use std::sync::atomic::Ordering;

    /// The goroutine, switching out after it saved its frame pointer:
    /// one more switch. It alone writes the count: a load and a release
    /// store, no read-modify-write on the switch path.
    #[inline(always)]
    pub(crate) fn count_switch(switches: &AtomicU64) {
        let n = switches.load(Ordering::Relaxed);
        switches.store(n + 1, Ordering::Release);
    }

    /// Its worker, after storing RUNNING and before resuming it: the
    /// goroutine's stack writes come after the status (free on x86-64).
    #[inline(always)]
    pub(crate) fn before_resume() {
        fence(Ordering::Release);
    }

    /// A dump, having read the status word `first` (acquire) and found
    /// the goroutine switched out: what `read` reads of its stack, if it
    /// stayed switched out throughout. `status` reads the word again, with
    /// acquire: if it finds a later park, it then sees that park's count
    /// (a relaxed load could find the later park and the old count, and
    /// take a stack read half before and half after a run for a whole
    /// one; loom found it).
    pub(crate) fn read<T>(
        first: u64,
        status: impl Fn() -> u64,
        switches: &AtomicU64,
        read: impl FnOnce() -> T,
    ) -> Option<T> {
        let count = switches.load(Ordering::Acquire);
        let t = read();
        fence(Ordering::Acquire);
        (status() == first && switches.load(Ordering::Relaxed) == count).then_some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::header;

    #[test]
    fn minutes_show_from_one_minute_on_as_go_prints_them() {
        assert_eq!(
            header(7, "chan receive", 0, false, None),
            "goroutine 7 [chan receive]:\n"
        );
        assert_eq!(
            header(7, "chan receive", 59_999_999_999, false, None),
            "goroutine 7 [chan receive]:\n"
        );
        assert_eq!(
            header(7, "chan receive", 60_000_000_000, false, None),
            "goroutine 7 [chan receive, 1 minutes]:\n"
        );
        assert_eq!(
            header(12, "select", 150 * 1_000_000_000, true, None),
            "goroutine 12 [select, 2 minutes, locked to thread]:\n"
        );
    }

    #[test]
    fn the_system_level_names_the_goroutine_and_its_worker_as_go_1_23_does() {
        assert_eq!(
            header(7, "chan receive", 0, false, Some((0xc000007a40, None))),
            "goroutine 7 gp=0xc000007a40 m=nil [chan receive]:\n"
        );
        assert_eq!(
            header(9, "syscall", 0, true, Some((0x10, Some((3, 0x20))))),
            "goroutine 9 gp=0x10 m=3 mp=0x20 [syscall, locked to thread]:\n"
        );
    }

    #[test]
    fn registers_print_as_go_s_dumpregs() {
        let mut values = [0u64; crate::signal::REGISTERS];
        values[0] = 0xfffffffffffffffc;
        values[17] = 0x286;
        let text = super::registers(&Some(values));
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 21);
        assert_eq!(lines[0], "rax    0xfffffffffffffffc");
        assert_eq!(lines[8], "r8     0x0");
        assert_eq!(lines[17], "rflags 0x286");
        assert_eq!(lines[20], "gs     0x0");
        assert_eq!(super::registers(&None), "");
    }
}
