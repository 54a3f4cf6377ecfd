//! The network poller: a goroutine that would block on a descriptor parks
//! instead, and one edge-triggered epoll instance readies it (Go's
//! `runtime/netpoll.go` and `netpoll_epoll.go`).
//!
//! A registered descriptor has a [`PollDesc`]: for each direction (read,
//! write) a slot that is empty, holds a pending readiness notification, or
//! holds the one waiter parked on it; a deadline per direction; a closing
//! flag. Every change of a descriptor's state happens under its own small
//! lock, so readiness, deadline expiry and close race freely and each
//! outcome reaches the waiter exactly once.
//!
//! Descriptors are recycled, never freed: a [`Handle`] names a table slot
//! and the slot's generation, and the generation moves on at every close.
//! A handle from before a close, an event the kernel queued for a number
//! since closed and reused, or a forged handle finds a different
//! generation (or no slot) and does nothing: "the poller never loses a
//! wakeup and never delivers a stale one" (design.md). A handle guessed
//! for a record's next registration has the right generation; the
//! record's phase refuses it until [`open`] hands it out
//! ([`PollDesc::names`]). Events carrying it are kept meanwhile (the
//! number is in the epoll set under it).
//!
//! Who polls: [`poll`] reads the ready events (with a timeout, or none) and
//! readies their waiters; the scheduler calls it when a worker runs out of
//! work. [`wake`] makes a blocked [`poll`] return (an eventfd in the same
//! epoll set, Go's `netpollBreak`).
//!
//! Deadlines ride on the timer heaps: a deadline arms a timer whose firing
//! expires the direction and readies its waiter; a new deadline replaces
//! the armed one. Lock order: a descriptor's lock, then a timer heap's;
//! the timer calls back into a descriptor only after releasing its own.

use super::prim::{ForkMutex as Mutex, ForkRwLock as RwLock, Lock};
use super::wait::Waiter;
use std::io;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU32, AtomicUsize, Ordering};
use std::sync::OnceLock;

/// Which readiness a waiter waits for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Read,
    Write,
}

/// Why a wait ended without readiness (Go's `pollErr*` codes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PollError {
    /// The descriptor is being closed (Go's `net.ErrClosed`: "use of
    /// closed network connection").
    Closing,
    /// The direction's deadline has passed (Go's `os.ErrDeadlineExceeded`:
    /// "i/o timeout").
    Timeout,
    /// Not a live registration: never registered, closed, or forged.
    BadHandle,
}

/// A registration: the table slot and its generation, as one word that
/// the C ABI hands out and the kernel carries in each event.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Handle(u64);

impl Handle {
    fn new(index: usize, generation: u32) -> Handle {
        Handle(((generation as u64) << 32) | (index as u64 + 1))
    }

    /// The raw word (the C ABI's handle; never 0).
    pub(crate) fn raw(self) -> u64 {
        self.0
    }

    /// A handle from its raw word (checked when used).
    pub(crate) fn from_raw(raw: u64) -> Handle {
        Handle(raw)
    }

    fn index(self) -> Option<usize> {
        (self.0 as u32 as usize).checked_sub(1)
    }

    fn generation(self) -> u32 {
        (self.0 >> 32) as u32
    }
}

/// A direction's waiting slot.
#[derive(Clone, Copy)]
enum Slot {
    Empty,
    /// Readiness arrived with no one waiting; the next wait takes it.
    Ready,
    Waiting(*const Waiter),
}

struct Side {
    slot: Slot,
    /// Expired: every wait fails with `Timeout` until a new deadline.
    expired: bool,
    /// The armed deadline timer (its timer-heap id; 0: none); a firing
    /// of another id is stale.
    timer: u64,
}

impl Side {
    const fn new() -> Side {
        Side {
            slot: Slot::Empty,
            expired: false,
            timer: 0,
        }
    }
}

/// Under loom, with `set_unchecked_phase`: the phase is ignored (the bug
/// `tests/netpoll_loom.rs` shows loom finds).
fn phase_unchecked() -> bool {
    #[cfg(loom)]
    return super::prim::unchecked_phase();
    #[cfg(not(loom))]
    false
}

/// Where a record is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Phase {
    /// On the free list, or retired and on its way there.
    Free,
    /// Taken by an [`open`] that has not finished registering it: its
    /// handle is not handed out yet, so nothing may use or close it (a
    /// program that guessed the handle gets `BadHandle`), while events
    /// carrying it are kept ([`PollDesc::ready`]): the number was added
    /// to the epoll set under it.
    Opening,
    /// A registration its handle names.
    Live,
}

struct State {
    fd: i32,
    phase: Phase,
    closing: bool,
    /// Operations using `fd` right now ([`Pin`]): its number is not
    /// closed (and reused) under them.
    users: u32,
    /// What the last user leaving does: recycle the record (closing the
    /// number too, or not).
    when_unused: Option<CloseFd>,
    /// Retired and not yet finished ([`finish_close`]): the number it had
    /// and how to end it, for a forked child whose fork came in between.
    finishing: Option<(i32, CloseFd)>,
    read: Side,
    write: Side,
}

impl State {
    fn side(&mut self, mode: Mode) -> &mut Side {
        match mode {
            Mode::Read => &mut self.read,
            Mode::Write => &mut self.write,
        }
    }

    fn error(&mut self, mode: Mode) -> Option<PollError> {
        if self.closing {
            Some(PollError::Closing)
        } else if self.side(mode).expired {
            Some(PollError::Timeout)
        } else {
            None
        }
    }
}

/// A registered descriptor (Go's `pollDesc`); lives for the whole process
/// and is recycled after a close.
pub(crate) struct PollDesc {
    index: usize,
    /// Moves on at each close (under the lock); read without it by the
    /// poller to drop stale events.
    generation: AtomicU32,
    state: Lock<State>,
}

// SAFETY: the waiter pointers in the slots are only used under the lock,
// and each points to a waiter that stays on its owner's stack until its
// wait is finished.
unsafe impl Send for PollDesc {}
// SAFETY: as above.
unsafe impl Sync for PollDesc {}

/// The poller: the epoll instance and the eventfd that interrupts it.
struct Poller {
    /// Replaced in a forked child (whose inherited instance is the
    /// parent's), so read each time.
    epoll: AtomicI32,
    event: AtomicI32,
    /// A wake is pending (the eventfd was written and not read yet).
    woken: AtomicBool,
}

/// The epoll data word of the eventfd (no handle has it: indexes start at
/// 1 in a handle).
const WAKE_DATA: u64 = 0;

static POLLER: OnceLock<Poller> = OnceLock::new();

/// Every descriptor ever made, by index, and the free ones.
static TABLE: RwLock<Vec<&'static PollDesc>> = RwLock::new(Vec::new());
static FREE: Mutex<Vec<usize>> = Mutex::new(Vec::new());

/// The record registered for each descriptor number (its index). Its
/// lock is held across a registration's `epoll_ctl` and a close's, so
/// that a number's registration and the record that owns it change
/// together. A number closed behind the poller's back and reused leaves
/// its old record claiming it: the new registration takes the number
/// from it ([`PollDesc::lose_number`]), so that the old record's close
/// cannot take the new one out of the epoll set or close its descriptor.
static BY_FD: Mutex<Option<std::collections::HashMap<i32, usize>>> = Mutex::new(None);

/// Waiters parked on a descriptor (the deadlock check: they are not asleep
/// for good while the poller can wake them).
static WAITING: AtomicUsize = AtomicUsize::new(0);

fn cvt(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(crate::fresh::last_os_error())
    } else {
        Ok(r)
    }
}

fn poller() -> io::Result<&'static Poller> {
    if let Some(p) = POLLER.get() {
        return Ok(p);
    }
    // Before the poller exists: a fork from then on repairs it in the
    // child, whether or not the scheduler runs (plain threads use the
    // poller through the C ABI too).
    static FORK: crate::gc::fork::ForkHooks = crate::gc::fork::ForkHooks {
        prepare: lock_for_fork,
        child: restart_after_fork,
        ..crate::gc::fork::ForkHooks::NONE
    };
    static INSTALL: std::sync::Once = std::sync::Once::new();
    INSTALL.call_once(|| crate::gc::fork::on_fork(&FORK));
    let p = Poller::create()?;
    match POLLER.set(p) {
        Ok(()) => {
            // Idle workers wait in it from now on.
            static HOOKS: super::park::Poller = super::park::Poller {
                waiting,
                poll,
                wake,
            };
            super::park::set_poller(&HOOKS);
        }
        Err(p) => p.close(),
    }
    Ok(POLLER.get().expect("set above"))
}

impl Poller {
    fn create() -> io::Result<Poller> {
        let (epoll, event) = Poller::instance()?;
        Ok(Poller {
            epoll: AtomicI32::new(epoll),
            event: AtomicI32::new(event),
            woken: AtomicBool::new(false),
        })
    }

    /// A new epoll instance with an eventfd in it.
    fn instance() -> io::Result<(i32, i32)> {
        // SAFETY: plain system calls; the descriptors are ours on success.
        let epoll = cvt(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: as above.
        let event = match cvt(unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) }) {
            Ok(fd) => fd,
            Err(e) => {
                // SAFETY: closing the descriptor made above.
                unsafe { libc::close(epoll) };
                return Err(e);
            }
        };
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: WAKE_DATA,
        };
        // SAFETY: both descriptors are ours; ev is a valid event.
        if let Err(e) = cvt(unsafe { libc::epoll_ctl(epoll, libc::EPOLL_CTL_ADD, event, &mut ev) })
        {
            // SAFETY: closing the descriptors made above.
            unsafe {
                libc::close(event);
                libc::close(epoll);
            }
            return Err(e);
        }
        Ok((epoll, event))
    }

    fn close(&self) {
        // SAFETY: the poller's own descriptors, closed once.
        unsafe {
            libc::close(self.event.load(Ordering::Relaxed));
            libc::close(self.epoll.load(Ordering::Relaxed));
        }
    }

    fn add(&self, fd: i32, h: Handle) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32,
            u64: h.raw(),
        };
        // SAFETY: ev is a valid event; a bad fd is the kernel's to refuse.
        cvt(unsafe {
            libc::epoll_ctl(
                self.epoll.load(Ordering::Relaxed),
                libc::EPOLL_CTL_ADD,
                fd,
                &mut ev,
            )
        })
        .map(drop)
    }

    fn remove(&self, fd: i32) {
        let mut ev = libc::epoll_event { events: 0, u64: 0 };
        // SAFETY: as above. A descriptor already closed has left the set;
        // the error is expected then.
        unsafe {
            libc::epoll_ctl(
                self.epoll.load(Ordering::Relaxed),
                libc::EPOLL_CTL_DEL,
                fd,
                &mut ev,
            )
        };
    }
}

fn lookup(h: Handle) -> Option<&'static PollDesc> {
    let pd = *TABLE.read().get(h.index()?)?;
    (pd.generation.load(Ordering::Acquire) == h.generation()).then_some(pd)
}

/// Registers `fd` (which the caller has made non-blocking) with the
/// poller; errors are the kernel's (`EPERM` for a regular file, which
/// cannot be polled; `EBADF`; `EEXIST` if already registered).
pub(crate) fn open(fd: i32) -> io::Result<Handle> {
    let p = poller()?;
    let reused = FREE.lock().pop();
    let pd: &'static PollDesc = match reused {
        Some(i) => TABLE.read()[i],
        None => {
            let mut t = TABLE.write();
            let index = t.len();
            let pd = Box::leak(Box::new(PollDesc::free(index)));
            t.push(pd);
            pd
        }
    };
    let h = pd.begin_open(fd);
    let before = {
        let mut by_fd = BY_FD.lock();
        if let Err(e) = p.add(fd, h) {
            drop(by_fd);
            // Still `Opening`, so no one else retired it.
            retire(pd, &mut pd.state.lock(), CloseFd::No);
            // Not registered: nothing of the number to undo.
            finish_close(pd, -1, CloseFd::No);
            return Err(e);
        }
        by_fd
            .get_or_insert_with(Default::default)
            .insert(fd, pd.index)
    };
    if let Some(before) = before.filter(|&b| b != pd.index) {
        // The number was closed behind the poller's back and reused: its
        // old record still claims it. (The kernel dropped the old entry
        // from the epoll set when the old file's last descriptor closed;
        // one still open through another descriptor, a dup or a child's,
        // stays, and its events carry the old record's generation, which
        // drops them.)
        let old = TABLE.read()[before];
        old.lose_number(fd);
    }
    pd.finish_open();
    Ok(h)
}

/// Ends the record's registration, under its lock: it is closing, its
/// generation moves on (no later close, pin or wait finds it, and a
/// second close fails), and it gives up its descriptor number, which it
/// returns (-1: it had lost it, see [`BY_FD`]); what is left to do,
/// ending it with `close_fd`, is kept for a forked child.
fn retire(pd: &PollDesc, s: &mut State, close_fd: CloseFd) -> i32 {
    s.phase = Phase::Free;
    s.closing = true;
    s.when_unused = None;
    pd.generation.fetch_add(1, Ordering::AcqRel);
    let fd = std::mem::replace(&mut s.fd, -1);
    s.finishing = Some((fd, close_fd));
    fd
}

impl PollDesc {
    /// A new record at `index`, free.
    fn free(index: usize) -> PollDesc {
        PollDesc {
            index,
            generation: AtomicU32::new(0),
            state: Lock::new(State {
                fd: -1,
                phase: Phase::Free,
                closing: true,
                users: 0,
                when_unused: None,
                finishing: None,
                read: Side::new(),
                write: Side::new(),
            }),
        }
    }

    fn lock(&self) -> impl std::ops::DerefMut<Target = State> + '_ {
        self.state.lock()
    }

    /// [`open`] takes this free record for `fd`: the handle it will hand
    /// out, which names nothing until [`finish_open`](Self::finish_open).
    pub(crate) fn begin_open(&self, fd: i32) -> Handle {
        let mut s = self.lock();
        debug_assert!(s.phase == Phase::Free && s.finishing.is_none() || phase_unchecked());
        debug_assert!(matches!(s.read.slot, Slot::Empty | Slot::Ready));
        s.fd = fd;
        s.phase = Phase::Opening;
        s.closing = false;
        s.users = 0;
        s.when_unused = None;
        s.finishing = None;
        s.read = Side::new();
        s.write = Side::new();
        Handle::new(self.index, self.generation.load(Ordering::Relaxed))
    }

    /// [`open`] registered the number: the handle is handed out.
    pub(crate) fn finish_open(&self) {
        let mut s = self.lock();
        debug_assert!(s.phase == Phase::Opening || phase_unchecked());
        s.phase = Phase::Live;
    }

    /// Whether registration `generation` is this record's, handed out and
    /// not retired (`s`: its state, locked). A record that is free or
    /// still being opened names none: the handle its next registration
    /// will have is a guess until [`open`] returns it.
    fn names(&self, s: &State, generation: u32) -> bool {
        if phase_unchecked() {
            // The bug tests/netpoll_loom.rs shows loom finds: a record
            // that is free or being opened answers to its next handle.
            return self.generation.load(Ordering::Relaxed) == generation;
        }
        s.phase == Phase::Live && self.generation.load(Ordering::Relaxed) == generation
    }

    /// Readiness for `mode`: the waiter (if any) is readied, else the
    /// notification waits for the next wait.
    pub(crate) fn ready(&self, mode: Mode) {
        let mut s = self.lock();
        let side = s.side(mode);
        #[cfg(loom)]
        if super::prim::lost_wakeup() {
            // The bug tests/chan_loom.rs shows loom finds: a readiness
            // that overwrites the waiter instead of readying it.
            side.slot = Slot::Ready;
            return;
        }
        match side.slot {
            Slot::Waiting(w) => {
                side.slot = Slot::Empty;
                drop(s);
                // SAFETY: a waiter stays on its stack until it is finished
                // (Waiter::wait), and only the one who took it from the
                // slot (under the lock) finishes it.
                unsafe { (*w).finish(true) };
            }
            Slot::Empty | Slot::Ready => side.slot = Slot::Ready,
        }
    }

    /// Takes `mode`'s waiter, if any, and readies it with no readiness
    /// (it looks at the descriptor's state again). Called with the lock.
    fn take_waiter(s: &mut State, mode: Mode) -> Option<*const Waiter> {
        let side = s.side(mode);
        match side.slot {
            Slot::Waiting(w) => {
                side.slot = Slot::Empty;
                Some(w)
            }
            _ => None,
        }
    }
}

fn finish_unready(w: Option<*const Waiter>) {
    if let Some(w) = w {
        // SAFETY: as in `ready`: taken from its slot under the lock.
        unsafe { (*w).finish(false) };
    }
}

/// Waits until `h`'s descriptor is ready for `mode`, its deadline passes or
/// it is closed (Go's `runtime_pollWait`). A pending readiness is taken
/// at once. Two waiters in one direction of one descriptor are a misuse
/// (Go serialises them with its fd mutex): the second gets an abort.
pub(crate) fn wait(h: Handle, mode: Mode) -> Result<(), PollError> {
    lookup(h)
        .ok_or(PollError::BadHandle)?
        .wait(h.generation(), mode)
}

impl PollDesc {
    /// Under loom: a record registered under generation 0 for no
    /// descriptor (`tests/chan_loom.rs` drives it directly).
    #[cfg(loom)]
    pub(crate) fn for_model() -> PollDesc {
        let pd = PollDesc::free(0);
        pd.begin_open(-1);
        pd.finish_open();
        pd
    }

    /// Under loom: a free record (its next registration's generation 0).
    #[cfg(loom)]
    pub(crate) fn free_for_model() -> PollDesc {
        PollDesc::free(0)
    }

    /// Under loom: `mode`'s deadline armed as timer `id` (0: cleared), as
    /// [`set_deadline`] does without the timer heap.
    #[cfg(loom)]
    pub(crate) fn arm_for_model(&self, mode: Mode, id: u64) {
        let mut s = self.lock();
        s.side(mode).timer = id;
        s.side(mode).expired = false;
    }

    /// Under loom: the model checks no waiter is left in a slot.
    #[cfg(loom)]
    pub(crate) fn assert_no_waiter(&self) {
        let mut s = self.lock();
        for mode in [Mode::Read, Mode::Write] {
            assert!(
                !matches!(s.side(mode).slot, Slot::Waiting(_)),
                "a waiter left in a slot after its wait ended"
            );
        }
    }

    /// [`wait`] on this record, registered under `generation`.
    pub(crate) fn wait(&self, generation: u32, mode: Mode) -> Result<(), PollError> {
        let mut parked = false;
        let mut ready = false;
        loop {
            let mut s = self.lock();
            if !self.names(&s, generation) {
                // Recycled while this wait was parked: it was closed
                // under the waiter, who learns that, not a bad handle.
                return Err(if parked {
                    PollError::Closing
                } else {
                    PollError::BadHandle
                });
            }
            if let Some(e) = s.error(mode) {
                return Err(e);
            }
            if ready {
                return Ok(());
            }
            let fd = s.fd;
            let side = s.side(mode);
            match side.slot {
                Slot::Ready => {
                    side.slot = Slot::Empty;
                    return Ok(());
                }
                Slot::Waiting(_) => {
                    drop(s);
                    crate::abort(&format!(
                        "defergc: two goroutines wait to {} one descriptor at once (serialise them, as Go's net package does)",
                        if mode == Mode::Read { "read" } else { "write" }
                    ));
                }
                Slot::Empty => {}
            }
            if !cfg!(loom) && super::procs::current_g().is_none() {
                // A plain thread blocks its own thread anyway: it polls its
                // descriptor itself, a slice at a time, so that a close or
                // a deadline (which only mark the state) is seen within a
                // slice.
                drop(s);
                // Ready once the record is seen again, still this
                // registration and not closing: the descriptor may have
                // been closed under the poll.
                ready = poll_one(fd, mode, PLAIN_SLICE_MS);
                parked = true;
                continue;
            }
            let w = Waiter::new(std::ptr::null_mut());
            side.slot = Slot::Waiting(&w);
            drop(s);
            parked = true;
            WAITING.fetch_add(1, Ordering::SeqCst);
            w.wait("IO wait");
            WAITING.fetch_sub(1, Ordering::SeqCst);
            if w.success.get() {
                return Ok(());
            }
            // Woken by a close or a deadline: the loop looks again.
        }
    }

    /// Deadline timer `id` of `mode` fired: the direction expires and its
    /// waiter is readied, unless the deadline was changed since (another
    /// id) or the record was recycled (another generation).
    pub(crate) fn expire(&self, generation: u32, mode: Mode, id: u64) {
        let w = {
            let mut s = self.lock();
            if !self.names(&s, generation) || s.side(mode).timer != id {
                return;
            }
            s.side(mode).timer = 0;
            s.side(mode).expired = true;
            PollDesc::take_waiter(&mut s, mode)
        };
        finish_unready(w);
    }

    /// Marks the record closing and readies both directions' waiters (see
    /// [`unblock`]).
    pub(crate) fn unblock_all(&self, generation: u32) -> Result<(), PollError> {
        let woken = {
            let mut s = self.lock();
            if !self.names(&s, generation) {
                return Err(PollError::BadHandle);
            }
            PollDesc::shut(&mut s)
        };
        for w in woken {
            finish_unready(w);
        }
        Ok(())
    }

    /// Marks the record closing, cancels its deadlines and takes both
    /// directions' waiters, for the caller to ready once the lock is let
    /// go. Called with the lock.
    fn shut(s: &mut State) -> [Option<*const Waiter>; 2] {
        s.closing = true;
        for mode in [Mode::Read, Mode::Write] {
            let t = std::mem::replace(&mut s.side(mode).timer, 0);
            if t != 0 {
                super::timer::cancel_call(t);
            }
        }
        [
            PollDesc::take_waiter(s, Mode::Read),
            PollDesc::take_waiter(s, Mode::Write),
        ]
    }

    /// `fd`, which this record claims, was registered again by another
    /// record: it was closed behind the poller's back and its number
    /// reused. The record gives it up (its close then leaves the number
    /// alone) and becomes closing, its waiters readied.
    fn lose_number(&self, fd: i32) {
        let woken = {
            let mut s = self.lock();
            if s.fd != fd {
                return;
            }
            s.fd = -1;
            PollDesc::shut(&mut s)
        };
        for w in woken {
            finish_unready(w);
        }
    }
}

/// How long a plain thread's wait polls before it looks at the
/// descriptor's state again (close, deadline).
const PLAIN_SLICE_MS: i32 = 10;

/// Polls one descriptor for `mode` for up to `ms`; whether it is ready
/// (an error or hang-up counts: the operation will report it).
fn poll_one(fd: i32, mode: Mode, ms: i32) -> bool {
    let events = match mode {
        Mode::Read => libc::POLLIN | libc::POLLRDHUP,
        Mode::Write => libc::POLLOUT,
    };
    let mut p = libc::pollfd {
        fd,
        events,
        revents: 0,
    };
    // Blocked in the call, it cannot answer a collector (as a blocked
    // plain thread in wait.rs).
    #[cfg(not(loom))]
    crate::context::block_enter();
    // SAFETY: one valid pollfd.
    let n = unsafe { libc::poll(&mut p, 1, ms) };
    #[cfg(not(loom))]
    crate::context::block_exit();
    // POLLNVAL: the number is closed (a close came in between), not
    // ready.
    n > 0 && p.revents & !libc::POLLNVAL != 0
}

/// Clears a pending readiness for `mode` before an operation that will
/// retry on `EAGAIN` (Go's `runtime_pollReset`); reports an error the
/// wait would give at once.
pub(crate) fn reset(h: Handle, mode: Mode) -> Result<(), PollError> {
    let pd = lookup(h).ok_or(PollError::BadHandle)?;
    let mut s = pd.lock();
    if !pd.names(&s, h.generation()) {
        return Err(PollError::BadHandle);
    }
    if let Some(e) = s.error(mode) {
        return Err(e);
    }
    let side = s.side(mode);
    if let Slot::Ready = side.slot {
        side.slot = Slot::Empty;
    }
    Ok(())
}

/// Which directions a deadline applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Which {
    Read,
    Write,
    Both,
}

/// Sets the deadline of `which` to `at` nanoseconds of the monotonic
/// clock from now (`None`: no deadline; zero or less: already passed),
/// Go's `runtime_pollSetDeadline`. A waiter in a direction whose deadline
/// passes is readied with `Timeout`; a new deadline replaces the old one
/// and revives an expired direction.
pub(crate) fn set_deadline(
    h: Handle,
    which: Which,
    after_ns: Option<i64>,
) -> Result<(), PollError> {
    let pd = lookup(h).ok_or(PollError::BadHandle)?;
    let modes: &[Mode] = match which {
        Which::Read => &[Mode::Read],
        Which::Write => &[Mode::Write],
        Which::Both => &[Mode::Read, Mode::Write],
    };
    let mut woken = [None, None];
    {
        let mut s = pd.lock();
        if !pd.names(&s, h.generation()) {
            return Err(PollError::BadHandle);
        }
        if s.closing {
            return Err(PollError::Closing);
        }
        for (i, &mode) in modes.iter().enumerate() {
            let old = std::mem::replace(&mut s.side(mode).timer, 0);
            if old != 0 {
                super::timer::cancel_call(old);
            }
            match after_ns {
                None => s.side(mode).expired = false,
                Some(ns) if ns <= 0 => {
                    s.side(mode).expired = true;
                    woken[i] = PollDesc::take_waiter(&mut s, mode);
                }
                Some(ns) => {
                    s.side(mode).expired = false;
                    let id = super::timer::call_after(ns, deadline_fired, h.raw(), mode as u64);
                    s.side(mode).timer = id;
                }
            }
        }
    }
    for w in woken {
        finish_unready(w);
    }
    Ok(())
}

/// Deadline timer `id` fired for `handle`'s direction `mode`.
fn deadline_fired(handle: u64, mode: u64, id: u64) {
    let h = Handle::from_raw(handle);
    let mode = if mode == Mode::Write as u64 {
        Mode::Write
    } else {
        Mode::Read
    };
    if let Some(pd) = lookup(h) {
        pd.expire(h.generation(), mode, id);
    }
}

/// Marks `h` closing and readies every waiter on it with `Closing` (Go's
/// `runtime_pollUnblock`); the caller then closes the descriptor itself
/// and calls [`close`].
pub(crate) fn unblock(h: Handle) -> Result<(), PollError> {
    lookup(h)
        .ok_or(PollError::BadHandle)?
        .unblock_all(h.generation())
}

/// Whether `epoll_pwait2` (Linux 5.11) is missing or refused: then a
/// timeout is rounded up to whole milliseconds.
static NO_PWAIT2: AtomicBool = AtomicBool::new(false);

/// `epoll_wait` into `events` with a timeout in nanoseconds (-1: none; 0:
/// not at all), to the nanosecond where the kernel has `epoll_pwait2`
/// (a timer due in 100 µs is not kept waiting a millisecond, as
/// `epoll_wait`'s whole milliseconds would). The raw system call, not
/// glibc's wrapper: that one needs glibc 2.35.
fn epoll_wait_ns(epoll: i32, events: &mut [libc::epoll_event], timeout_ns: i64) -> i32 {
    let max = events.len() as i32;
    if timeout_ns > 0 && !NO_PWAIT2.load(Ordering::Relaxed) {
        let t = libc::timespec {
            tv_sec: (timeout_ns / 1_000_000_000) as libc::time_t,
            tv_nsec: (timeout_ns % 1_000_000_000) as libc::c_long,
        };
        // SAFETY: events has room for max entries; t is a valid timespec;
        // no signal mask (the call is then epoll_wait with a timespec).
        let n = unsafe {
            libc::syscall(
                libc::SYS_epoll_pwait2,
                epoll,
                events.as_mut_ptr(),
                max,
                &t as *const libc::timespec,
                std::ptr::null::<libc::sigset_t>(),
                0usize,
            )
        } as i32;
        if n >= 0 || crate::fresh::last_os_error().raw_os_error() == Some(libc::EINTR) {
            return n;
        }
        // ENOSYS (before Linux 5.11), or EPERM from a seccomp filter that
        // does not know the call (containers): epoll_wait from now on, so
        // that the watcher does not spin on an error.
        NO_PWAIT2.store(true, Ordering::Relaxed);
    }
    // SAFETY: events has room for max entries.
    unsafe { libc::epoll_wait(epoll, events.as_mut_ptr(), max, whole_ms(timeout_ns)) }
}

/// `epoll_wait`'s timeout for `timeout_ns`: -1 and 0 as they are, else
/// rounded up to whole milliseconds (a poll that returned before the
/// deadline would block again).
fn whole_ms(timeout_ns: i64) -> i32 {
    if timeout_ns <= 0 {
        timeout_ns.max(-1) as i32
    } else {
        i32::try_from((timeout_ns as u64).div_ceil(1_000_000)).unwrap_or(i32::MAX)
    }
}

/// Reads ready events and readies their waiters; blocks for up to
/// `timeout_ns` nanoseconds (-1: until an event or a [`wake`]; 0: not at
/// all). Returns how many waiters it may have readied (events seen).
pub(crate) fn poll(timeout_ns: i64) -> usize {
    let Some(p) = POLLER.get() else { return 0 };
    const N: usize = 128;
    let mut events = [libc::epoll_event { events: 0, u64: 0 }; N];
    // A poll that does not block is a running thread's (a worker out of
    // work while no watcher polls, or sysmon): it takes a few, which the
    // worker runs at once; the rest stay in the kernel's ready list (an
    // edge not yet reported stays there) for the next worker that runs
    // out of work, instead of waiting in one worker's queue, behind a
    // thread the kernel may not run for a tick.
    let take = if timeout_ns == 0 { NONBLOCKING } else { N };
    let n = epoll_wait_ns(
        p.epoll.load(Ordering::Relaxed),
        &mut events[..take],
        timeout_ns,
    );
    if n <= 0 {
        return 0;
    }
    let mut seen = 0;
    for ev in &events[..n as usize] {
        let (bits, data) = (ev.events, ev.u64);
        if data == WAKE_DATA {
            // Only a blocking poll takes the wake: it was meant for the
            // worker blocked (or about to block) in one, and a read here
            // would leave that poll asleep past the deadline it was woken
            // to look at. Unread, the (level-triggered) eventfd stays
            // ready for it.
            if timeout_ns != 0 {
                let mut buf = 0u64;
                // SAFETY: reading 8 bytes of the eventfd into buf.
                unsafe {
                    libc::read(
                        p.event.load(Ordering::Relaxed),
                        (&mut buf as *mut u64).cast(),
                        8,
                    )
                };
                p.woken.store(false, Ordering::Release);
            }
            continue;
        }
        let Some(pd) = lookup(Handle::from_raw(data)) else {
            continue;
        };
        let err = bits & (libc::EPOLLERR | libc::EPOLLHUP) as u32 != 0;
        if err || bits & (libc::EPOLLIN | libc::EPOLLRDHUP) as u32 != 0 {
            pd.ready(Mode::Read);
            seen += 1;
        }
        if err || bits & libc::EPOLLOUT as u32 != 0 {
            pd.ready(Mode::Write);
            seen += 1;
        }
    }
    seen
}

/// The most events a poll that does not block takes (see [`poll`]).
const NONBLOCKING: usize = 16;

/// Makes a [`poll`] blocked in another thread return (Go's
/// `netpollBreak`); writes at most once until that poll has seen it.
pub(crate) fn wake() {
    let Some(p) = POLLER.get() else { return };
    if p.woken.swap(true, Ordering::AcqRel) {
        return;
    }
    let one = 1u64;
    // SAFETY: writing 8 bytes to the poller's eventfd.
    unsafe {
        libc::write(
            p.event.load(Ordering::Relaxed),
            (&one as *const u64).cast(),
            8,
        )
    };
}

/// Whether goroutines wait on descriptors (the deadlock check).
pub(crate) fn waiting() -> usize {
    WAITING.load(Ordering::SeqCst)
}

/// The descriptor of a live registration, pinned: while a `Pin` lives, a
/// [`close_fd`] marks it closing but leaves the number open (Go's fd
/// mutex reference), so an operation never reaches a descriptor that was
/// closed and reused under it.
pub(crate) struct Pin {
    pd: &'static PollDesc,
    fd: i32,
}

impl Pin {
    pub(crate) fn fd(&self) -> i32 {
        self.fd
    }
}

/// Pins `h`'s descriptor (see [`Pin`]); fails once it is closing.
pub(crate) fn pin(h: Handle) -> Result<Pin, PollError> {
    let pd = lookup(h).ok_or(PollError::BadHandle)?;
    let fd = pd.pin(h.generation())?;
    Ok(Pin { pd, fd })
}

impl Drop for Pin {
    fn drop(&mut self) {
        if let Some((fd, close_fd)) = self.pd.unpin() {
            finish_close(self.pd, fd, close_fd);
        }
    }
}

impl PollDesc {
    /// Counts an operation on registration `generation`'s descriptor;
    /// its number, or why not.
    pub(crate) fn pin(&self, generation: u32) -> Result<i32, PollError> {
        let mut s = self.lock();
        if !self.names(&s, generation) {
            return Err(PollError::BadHandle);
        }
        if s.closing {
            return Err(PollError::Closing);
        }
        s.users += 1;
        Ok(s.fd)
    }

    /// An operation is done with the descriptor: the close it held up, if
    /// it was the last (the record is retired: its number and how to end
    /// it, for [`finish_close`]).
    pub(crate) fn unpin(&self) -> Option<(i32, CloseFd)> {
        let mut s = self.lock();
        s.users -= 1;
        if s.users > 0 {
            return None;
        }
        let close_fd = s.when_unused?;
        Some((retire(self, &mut s, close_fd), close_fd))
    }

    /// Claims the close of registration `generation` (its waiters already
    /// unblocked), under the lock, so that of two closes one wins: the
    /// record retired now (its number, for [`finish_close`]), or `None`
    /// while operations pin it (the last one's [`unpin`](Self::unpin)
    /// retires it); `BadHandle` for another registration or a close
    /// already claimed.
    pub(crate) fn claim_close(
        &self,
        generation: u32,
        close_fd: CloseFd,
    ) -> Result<Option<i32>, PollError> {
        let mut s = self.lock();
        if !self.names(&s, generation) || s.when_unused.is_some() {
            return Err(PollError::BadHandle);
        }
        if s.users > 0 {
            s.when_unused = Some(close_fd);
            return Ok(None);
        }
        #[cfg(loom)]
        if super::prim::unclaimed_close() {
            // The bug tests/netpoll_loom.rs shows loom finds: the record
            // retired after the lock was let go, so a second close can
            // pass the checks above in between.
            drop(s);
            return Ok(Some(retire(self, &mut self.lock(), close_fd)));
        }
        Ok(Some(retire(self, &mut s, close_fd)))
    }

    /// Under loom: whether the record still has registration `generation`.
    #[cfg(loom)]
    pub(crate) fn is_generation(&self, generation: u32) -> bool {
        let _s = self.lock();
        self.generation.load(Ordering::Relaxed) == generation
    }

    /// Under loom: the generation of the record's registration, if one is
    /// handed out and not retired.
    #[cfg(loom)]
    pub(crate) fn live_generation(&self) -> Option<u32> {
        let s = self.lock();
        (s.phase == Phase::Live).then(|| self.generation.load(Ordering::Relaxed))
    }

    /// Under loom: the generation of registration `h`.
    #[cfg(loom)]
    pub(crate) fn generation_of(h: Handle) -> u32 {
        h.generation()
    }
}

/// Whether ending a registration closes the descriptor's number too.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CloseFd {
    /// The registration owned it ([`pin`]'s users read and write it).
    Yes,
    /// The caller keeps it (Go's `runtime_pollClose`: the fd layer closes).
    #[allow(dead_code)] // the C ABI's poll layer
    No,
}

/// Ends `h`'s registration: every waiter on it is readied with `Closing`
/// at once; when no operation uses it any more ([`Pin`]), it leaves the
/// epoll set, its record is recycled under a new generation, and with
/// [`CloseFd::Yes`] its number is closed (Go's `FD.Close`).
pub(crate) fn close(h: Handle, close_fd: CloseFd) -> Result<(), PollError> {
    unblock(h)?;
    let pd = lookup(h).ok_or(PollError::BadHandle)?;
    if let Some(fd) = pd.claim_close(h.generation(), close_fd)? {
        finish_close(pd, fd, close_fd);
    }
    Ok(())
}

/// After [`retire`]: the number, if the record still owns it (no other
/// registration took it, see [`BY_FD`]), leaves the epoll set and
/// [`BY_FD`] and with [`CloseFd::Yes`] is closed, all under [`BY_FD`]'s
/// lock (a registration of the same number cannot come in between);
/// then the record goes back on the free list.
fn finish_close(pd: &'static PollDesc, fd: i32, close_fd: CloseFd) {
    if fd >= 0 {
        let mut by_fd = BY_FD.lock();
        let map = by_fd.get_or_insert_with(Default::default);
        if map.get(&fd) == Some(&pd.index) {
            map.remove(&fd);
            if let Some(p) = POLLER.get() {
                p.remove(fd);
            }
            if close_fd == CloseFd::Yes {
                // SAFETY: the registration owned the descriptor; nothing
                // uses it.
                unsafe { libc::close(fd) };
            }
        }
    }
    // Finished, then on the free list (a forked child makes the list
    // again from the records' states, so a fork in between loses
    // nothing). No record's lock is taken under the list's: the locks a
    // fork takes ([`lock_for_fork`]) are never held while another is
    // waited for.
    pd.lock().finishing = None;
    FREE.lock().push(pd.index);
}

/// Before a fork (the poller's fork hooks, installed with the poller): no
/// registration is half made or recycled while the child is cut off.
/// None of these locks is held while another lock is waited for, so they
/// may be taken before or after the other layers' (timer heaps,
/// scheduler).
fn lock_for_fork() {
    crate::gc::fork::held::keep(TABLE.write());
    crate::gc::fork::held::keep(FREE.lock());
    crate::gc::fork::held::keep(BY_FD.lock());
}

/// In a forked child: the inherited epoll instance is the parent's (one
/// open file shared by both), so the child makes its own and registers
/// every live descriptor in it again. Waiters belonged to goroutines that
/// did not come along: their slots are emptied. A descriptor's lock held
/// by a thread of the parent is replaced by an unlocked one (its holder
/// never runs here).
///
/// The child half of a fork (the poller's fork hooks), after the locks
/// [`lock_for_fork`] took were released: only the forking thread exists.
fn restart_after_fork() {
    let Some(p) = POLLER.get() else { return };
    WAITING.store(0, Ordering::SeqCst);
    p.woken.store(false, Ordering::Relaxed);
    let old = (
        p.epoll.load(Ordering::Relaxed),
        p.event.load(Ordering::Relaxed),
    );
    match Poller::instance() {
        Ok((epoll, event)) => {
            p.epoll.store(epoll, Ordering::Relaxed);
            p.event.store(event, Ordering::Relaxed);
            // SAFETY: the child's copies of the parent's descriptors.
            unsafe {
                libc::close(old.0);
                libc::close(old.1);
            }
        }
        Err(e) => crate::abort(&format!(
            "defergc: cannot make the network poller in a forked child: {e}"
        )),
    }
    // The numbers' owners, before any record is changed below (the map
    // is only this thread's now).
    let by_fd = BY_FD.lock().clone().unwrap_or_default();
    for &pd in TABLE.read().iter() {
        // SAFETY: its holder was a thread of the parent, which does not
        // exist here; what it changed under the lock is a few plain
        // fields, made whole below.
        unsafe { pd.state.release_after_fork() };
        let mut s = pd.lock();
        s.read.slot = Slot::Empty;
        s.write.slot = Slot::Empty;
        s.users = 0;
        if let Some(close_fd) = s.when_unused {
            // Its close waited for operations of goroutines that did not
            // come along: it ends here.
            retire(pd, &mut s, close_fd);
        }
        if let Some((fd, close_fd)) = s.finishing {
            // Retired by a thread of the parent that had not finished.
            drop(s);
            finish_close(pd, fd, close_fd);
            continue;
        }
        if s.phase == Phase::Opening {
            // Being opened by a thread of the parent: no one here has its
            // handle. Its number, if registered, is the parent's
            // (the child's epoll set is new), and the number stays open.
            let fd = retire(pd, &mut s, CloseFd::No);
            drop(s);
            if let Some(map) = BY_FD.lock().as_mut() {
                if map.get(&fd) == Some(&pd.index) {
                    map.remove(&fd);
                }
            }
            finish_close(pd, -1, CloseFd::No);
            continue;
        }
        if s.closing {
            continue;
        }
        if by_fd.get(&s.fd) != Some(&pd.index) {
            // Its number was registered again by an open the fork cut
            // short (which would have taken it from this record): the
            // record has lost it.
            s.fd = -1;
            s.closing = true;
            continue;
        }
        let h = Handle::new(pd.index, pd.generation.load(Ordering::Relaxed));
        if p.add(s.fd, h).is_err() {
            // Closed by the parent's threads without telling us: waits on
            // it fail from now on.
            s.closing = true;
        }
    }
    // A record a thread of the parent took from the free list and had not
    // begun to open is on no list: the free list is made again from
    // every record that is free.
    let mut free = FREE.lock();
    free.clear();
    for &pd in TABLE.read().iter() {
        let s = pd.lock();
        if s.phase == Phase::Free && s.finishing.is_none() {
            free.push(pd.index);
        }
    }
}

/// Whether a wake of the poll is pending, for [`super::sched_state`].
pub(crate) fn wake_pending() -> bool {
    POLLER.get().is_some_and(|p| p.woken.load(Ordering::SeqCst))
}

#[cfg(all(test, not(loom)))]
mod tests {
    /// A poll that does not block leaves a pending wake for the blocking
    /// one: with the eventfd read, a watcher blocked in the poll would
    /// sleep on past the timer it was woken for.
    #[test]
    fn a_poll_that_does_not_block_leaves_the_wake() {
        super::poller().unwrap();
        super::wake();
        super::poll(0);
        assert!(
            super::wake_pending(),
            "a poll that does not block took the wake"
        );
        // The blocking poll takes it (at once: the eventfd is ready).
        super::poll(1_000_000_000);
    }

    /// Without `epoll_pwait2`, a timeout is rounded up to whole
    /// milliseconds, never down to a poll that returns early.
    #[test]
    fn a_timeout_in_whole_milliseconds_is_rounded_up() {
        use super::whole_ms;
        assert_eq!(whole_ms(-1), -1);
        assert_eq!(whole_ms(i64::MIN), -1);
        assert_eq!(whole_ms(0), 0);
        assert_eq!(whole_ms(1), 1);
        assert_eq!(whole_ms(1_000_000), 1);
        assert_eq!(whole_ms(1_000_001), 2);
        assert_eq!(whole_ms(i64::MAX), i32::MAX);
    }

    /// A timeout in nanoseconds is waited in full (here 300 µs, less than
    /// the millisecond `epoll_wait` counts in): no event, no early return.
    #[test]
    fn a_poll_waits_its_whole_timeout() {
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; 4];
        // A private instance: the process's has the eventfd and may be
        // woken by other tests.
        // SAFETY: a plain system call; the descriptor is closed below.
        let ep = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        assert!(ep >= 0);
        let t = std::time::Instant::now();
        let n = loop {
            let n = super::epoll_wait_ns(ep, &mut events, 300_000);
            // Interrupted (a profiling or preemption signal): again, as
            // the watcher would.
            if n >= 0 || crate::fresh::last_os_error().raw_os_error() != Some(libc::EINTR) {
                break n;
            }
        };
        assert_eq!(n, 0);
        assert!(t.elapsed() >= std::time::Duration::from_micros(300));
        // SAFETY: the instance made above.
        unsafe { libc::close(ep) };
    }
}
