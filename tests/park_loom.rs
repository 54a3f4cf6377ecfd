//! An idle worker's parker on the real code (`src/go/park.rs`), checked
//! exhaustively by loom: a wake never gets lost, whether the parker sleeps
//! or blocks in the network poll, and a poll that returns events ends the
//! block.
//!
//! ```text
//! RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom \
//!     cargo test --release --test park_loom
//! ```
//!
//! The poller is the model's (`model::install_poller`): `epoll_wait`
//! without descriptors, with its break (the eventfd) and events that a
//! model thread makes arrive. Timers are the heaps' published earliest
//! deadlines (`model::set_timer`, `model::set_timer_on`: a model has two
//! heaps, as two processors): due at once, or an hour away (a model has
//! no time). A parker blocks in the poller only while the model's
//! scheduler has an idle processor (`model::set_processor_idle`); the
//! `processor_going_idle` models check that the poll comes back when one
//! goes idle. Loom reports a parker nobody wakes as a
//! deadlock. `loom_catches_an_unchecked_poll` brings back a parker that
//! claims the poll without looking at its wake flag again, and checks
//! (in a child process: loom aborts after such a report) that loom finds
//! the lost wake; `loom_catches_an_unpassed_watch` brings back a watcher
//! that leaves, woken, without passing the watch on, and checks that loom
//! finds the parker that then sleeps for ever;
//! `loom_catches_a_nonblocking_poll_taking_the_wake` brings back a worker's
//! non-blocking poll that takes the wake meant for the watcher's blocked
//! poll, and checks that loom finds the watcher asleep past a due timer.
#![cfg(loom)]

mod child;
mod loom_check;

use defergc::go::model::{self, Blocked, Parker};
use loom::sync::Arc;
use loom::thread;

/// The model's scheduler (the thread a timer kicks, `model::Parker`) is
/// the process's, not one model's: models that ran at once in the test
/// harness's threads would kick each other's threads, and loom reports
/// such a model as not deterministic. One model at a time.
fn check(f: impl Fn() + Sync + Send + 'static) {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    loom_check::check(f);
}

/// No descriptor is waited on: the parker sleeps, and a wake ends it.
#[test]
fn a_wake_ends_a_sleep() {
    check(|| {
        let p = Arc::new(Parker::for_current());
        let q = p.clone();
        let t = thread::spawn(move || q.wake());
        assert_eq!(p.block(), Blocked::Woken);
        t.join().unwrap();
    });
}

/// Goroutines wait on descriptors: the parker blocks in the poll, and a
/// wake breaks it out (before, during or after it claims the poll).
fn wake_in_the_poll() {
    model::install_poller(1);
    let p = Arc::new(Parker::for_current());
    let q = p.clone();
    let t = thread::spawn(move || q.wake());
    assert_eq!(p.block(), Blocked::Woken);
    t.join().unwrap();
}

#[test]
fn a_wake_ends_a_poll() {
    check(wake_in_the_poll);
}

/// An event (a descriptor became ready) ends the parker's poll: it
/// returns to run what the poll readied.
#[test]
fn an_event_ends_a_poll() {
    check(|| {
        model::install_poller(1);
        let p = Parker::for_current();
        let t = thread::spawn(model::poll_event);
        assert_eq!(p.block(), Blocked::Polled);
        t.join().unwrap();
    });
}

/// An event and a wake race: the block ends either way (woken, or polled
/// and then the wake is kept for the next block, which returns at once).
#[test]
fn an_event_and_a_wake_race() {
    check(|| {
        model::install_poller(1);
        let p = Arc::new(Parker::for_current());
        let q = p.clone();
        let e = thread::spawn(model::poll_event);
        let w = thread::spawn(move || q.wake());
        if p.block() == Blocked::Polled {
            assert_eq!(p.block(), Blocked::Woken);
        }
        e.join().unwrap();
        w.join().unwrap();
    });
}

/// Two idle workers, one polling and one asleep, each woken once: each
/// wake reaches its own parker (the poller's break is not taken for the
/// sleeper's wake).
#[test]
fn two_parkers_each_woken() {
    check(|| {
        model::install_poller(1);
        let slot = Arc::new(loom::sync::Mutex::new(None::<Arc<Parker>>));
        let s2 = slot.clone();
        let other = thread::spawn(move || {
            let p = Arc::new(Parker::for_current());
            *s2.lock().unwrap() = Some(p.clone());
            assert_eq!(p.block(), Blocked::Woken);
        });
        let me = Arc::new(Parker::for_current());
        let mine = me.clone();
        let waker = thread::spawn(move || {
            mine.wake();
            loop {
                if let Some(p) = slot.lock().unwrap().clone() {
                    p.wake();
                    break;
                }
                thread::yield_now();
            }
        });
        assert_eq!(me.block(), Blocked::Woken);
        waker.join().unwrap();
        other.join().unwrap();
    });
}

/// A thread that sets a due timer; done when it has.
fn spawn_timer() -> Arc<loom::sync::atomic::AtomicBool> {
    let done = Arc::new(loom::sync::atomic::AtomicBool::new(false));
    let d = done.clone();
    thread::spawn(move || {
        model::set_timer(true);
        d.store(true, std::sync::atomic::Ordering::Release);
    });
    done
}

/// Waits for `done` by yielding, not joining: the scheduler's kick may
/// unpark the waiting thread after its block returned, which loom allows
/// during a yield and not during a join.
fn wait_for(done: &loom::sync::atomic::AtomicBool) {
    while !done.load(std::sync::atomic::Ordering::Acquire) {
        thread::yield_now();
    }
}

/// A timer becomes due while the parker sleeps with nothing to watch:
/// the scheduler's kick makes it look again, and it returns to run the
/// timers.
#[test]
fn a_due_timer_ends_a_sleep() {
    check(|| {
        let p = Parker::for_current();
        let t = spawn_timer();
        assert_eq!(p.block(), Blocked::Timers);
        wait_for(&t);
    });
}

/// The parker watches a timer an hour away (asleep, or in the network
/// poll with `poll`); an earlier one, due, is set: the watcher is woken
/// and returns to run the timers.
fn earlier_timer(poll: bool) {
    if poll {
        model::install_poller(1);
    }
    // The parker first: it registers the scheduler's kick (made after the
    // timer, the first execution would differ from the others).
    let p = Parker::for_current();
    model::set_timer(false);
    let t = spawn_timer();
    assert_eq!(p.block(), Blocked::Timers);
    wait_for(&t);
}

#[test]
fn an_earlier_timer_wakes_the_watcher() {
    check(|| earlier_timer(false));
}

#[test]
fn an_earlier_timer_breaks_the_poll() {
    check(|| earlier_timer(true));
}

/// The parker watches heap 0's timer, an hour away; heap 1 (another
/// processor's) publishes a due one: the watcher sees the earliest of
/// both heaps, is woken and returns to run the timers.
#[test]
fn a_timer_on_another_heap_wakes_the_watcher() {
    check(|| {
        let p = Parker::for_current();
        model::set_timer_on(0, false);
        let done = Arc::new(loom::sync::atomic::AtomicBool::new(false));
        let d = done.clone();
        thread::spawn(move || {
            model::set_timer_on(1, true);
            d.store(true, std::sync::atomic::Ordering::Release);
        });
        assert_eq!(p.block(), Blocked::Timers);
        wait_for(&done);
    });
}

/// Two heaps publish at once, one an hour away and one due, while the
/// parker goes to sleep with nothing to watch: whichever it reads, it is
/// made to look again and returns to run the due one.
#[test]
fn two_heaps_publish_at_once() {
    check(|| {
        let p = Parker::for_current();
        let done = Arc::new(loom::sync::atomic::AtomicU64::new(0));
        for heap in 0..2 {
            let d = done.clone();
            thread::spawn(move || {
                model::set_timer_on(heap, heap == 1);
                d.fetch_add(1, std::sync::atomic::Ordering::Release);
            });
        }
        assert_eq!(p.block(), Blocked::Timers);
        while done.load(std::sync::atomic::Ordering::Acquire) < 2 {
            thread::yield_now();
        }
    });
}

/// Two idle workers and a timer an hour away: one of them watches it
/// and the other sleeps without a deadline. The first is woken (handed a
/// processor) and leaves the idle workers for good, as a worker whose
/// locked goroutine then ends its thread; then the timer's time comes.
/// The second must return to run it: a watcher that leaves woken passes
/// the watch on (`park::pass_watch`), else the second sleeps for ever
/// (the lost wakeup behind a locked goroutine's endless sleep).
fn watch_passes_on() {
    // The parker first (it registers the scheduler's kick: made after the
    // timer, the first execution would differ from the others).
    let first = Arc::new(Parker::for_current());
    model::set_timer(false);
    let waker = first.clone();
    let woke = Arc::new(loom::sync::atomic::AtomicBool::new(false));
    let w = woke.clone();
    thread::spawn(move || {
        waker.wake();
        w.store(true, std::sync::atomic::Ordering::Release);
    });
    let second = thread::spawn(|| {
        let second = Parker::for_current();
        assert_eq!(second.block(), Blocked::Timers);
    });
    assert_eq!(first.block(), Blocked::Woken);
    // This worker is gone: it watches nothing from here on. (Its wake
    // unparked this thread: waited for before the join, which loom does
    // not let an unpark end.)
    wait_for(&woke);
    model::time_passes(0);
    second.join().unwrap();
}

#[test]
fn a_woken_watcher_passes_the_watch_on() {
    check(watch_passes_on);
}

/// The parker watches a timer an hour away, blocked in the network poll;
/// a worker out of work polls without blocking while an earlier timer,
/// due, is set: the wake that breaks the watcher's poll reaches it (the
/// poll that does not block leaves it), and it returns to run the timers.
fn a_nonblocking_poll_beside_the_watcher() {
    model::install_poller(1);
    let p = Parker::for_current();
    model::set_timer(false);
    let other = thread::spawn(|| {
        model::poll_now();
    });
    let t = spawn_timer();
    assert_eq!(p.block(), Blocked::Timers);
    wait_for(&t);
    other.join().unwrap();
}

#[test]
fn a_nonblocking_poll_leaves_the_watchers_wake() {
    check(a_nonblocking_poll_beside_the_watcher);
}

/// No processor is idle: a parker does not block in the poller (what it
/// readied would have no processor to run on) but sleeps, or, with
/// `timer`, watches the timer without polling. Then a processor goes idle
/// and its worker (this thread) blocks: one of the two polls, and the
/// event that arrives ends its block; the other is woken. A parker that
/// kept to what it saw before the processor went idle would leave the
/// event unpolled and both asleep.
fn one_polls_once_a_processor_is_idle(timer: bool) {
    model::install_poller(1);
    let freed = Arc::new(Parker::for_current());
    if timer {
        model::set_timer(false);
    }
    model::set_processor_idle(false);
    let slot = Arc::new(loom::sync::Mutex::new(None::<Arc<Parker>>));
    let (s2, f) = (slot.clone(), freed.clone());
    let busy = thread::spawn(move || {
        let p = Arc::new(Parker::for_current());
        *s2.lock().unwrap() = Some(p.clone());
        let r = p.block();
        if r == Blocked::Polled {
            f.wake();
        }
        r
    });
    let e = thread::spawn(model::poll_event);
    model::set_processor_idle(true);
    let mine = freed.block();
    if mine == Blocked::Polled {
        loop {
            if let Some(p) = slot.lock().unwrap().clone() {
                p.wake();
                break;
            }
            thread::yield_now();
        }
    }
    let theirs = busy.join().unwrap();
    e.join().unwrap();
    let mut both = [mine, theirs];
    both.sort_by_key(|b| *b == Blocked::Polled);
    assert_eq!(both, [Blocked::Woken, Blocked::Polled]);
}

#[test]
fn a_processor_going_idle_brings_the_poll_back() {
    check(|| one_polls_once_a_processor_is_idle(false));
}

#[test]
fn a_processor_going_idle_makes_the_timer_watcher_poll() {
    check(|| one_polls_once_a_processor_is_idle(true));
}

const BUG_CHILD: &str = "DEFERGC_PARK_LOOM_BUG_CHILD";

/// With the parker's bug on, loom finds the lost wake. Loom aborts the
/// process when it reports this deadlock (a destructor runs into its
/// ended execution while the panic unwinds), so the model runs in a child
/// process, which must fail saying "deadlock".
#[test]
fn loom_catches_an_unchecked_poll() {
    let bug = "an unchecked poll";
    let report = child::loom_catches("loom_catches_an_unchecked_poll", BUG_CHILD, bug, || {
        model::set_unchecked_poll(true);
        check(wake_in_the_poll);
    });
    if let Some(report) = report {
        let deadlock = child::loom_line(bug, &report, |l| l.starts_with("deadlock"));
        assert!(
            deadlock.is_some(),
            "the child failed without a deadlock: {report}"
        );
    }
}

const WATCH_BUG_CHILD: &str = "DEFERGC_PARK_LOOM_WATCH_BUG_CHILD";

/// With a watcher that leaves woken without passing the watch on, loom
/// finds the parker that sleeps for ever (in a child process, as above).
#[test]
fn loom_catches_an_unpassed_watch() {
    let bug = "an unpassed watch";
    let report = child::loom_catches(
        "loom_catches_an_unpassed_watch",
        WATCH_BUG_CHILD,
        bug,
        || {
            model::set_unpassed_watch(true);
            check(watch_passes_on);
        },
    );
    if let Some(report) = report {
        let deadlock = child::loom_line(bug, &report, |l| l.starts_with("deadlock"));
        assert!(
            deadlock.is_some(),
            "the child failed without a deadlock: {report}"
        );
    }
}

const NONBLOCKING_BUG_CHILD: &str = "DEFERGC_PARK_LOOM_NONBLOCKING_BUG_CHILD";

/// With a poll that takes the wake although it does not block, loom finds
/// the watcher left asleep in its poll past the timer it was woken for
/// (in a child process, as above).
#[test]
fn loom_catches_a_nonblocking_poll_taking_the_wake() {
    let bug = "a nonblocking poll taking the wake";
    let report = child::loom_catches(
        "loom_catches_a_nonblocking_poll_taking_the_wake",
        NONBLOCKING_BUG_CHILD,
        bug,
        || {
            model::set_nonblocking_takes_wake(true);
            check(a_nonblocking_poll_beside_the_watcher);
        },
    );
    if let Some(report) = report {
        let deadlock = child::loom_line(bug, &report, |l| l.starts_with("deadlock"));
        assert!(
            deadlock.is_some(),
            "the child failed without a deadlock: {report}"
        );
    }
}
