//! A forked child works: it collects, runs finalizers on the finalizer
//! thread (which did not come along, and starts again), runs precise
//! cycles on a new collector thread, and defers, panics and recovers.
//!
//! The parent forks while other threads allocate on both collectors, so
//! the fork catches them holding whatever they hold; each child checks
//! everything and reports through its exit status.

use defergc::{defer, gc};
use std::ffi::c_void;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

static FINALIZED: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_finalized(_obj: *mut c_void, _data: *mut c_void) {
    FINALIZED.fetch_add(1, Ordering::SeqCst);
}

/// Registers finalizers on `n` objects that are garbage right away.
#[inline(never)]
fn garbage_with_finalizers(n: usize) {
    for _ in 0..n {
        let p = gc::alloc(32).as_ptr();
        // SAFETY: p is the start of a live collectable object.
        unsafe { gc::register_finalizer(p, Some(count_finalized), std::ptr::null_mut()) };
    }
}

/// Waits (collecting) until `n` more finalizers ran than `before`, without
/// ever calling `gc::run_finalizers`: the finalizer thread must do it.
/// A generous bound turns "never" into a failure instead of a hang.
fn finalizers_ran(before: usize, n: usize) -> bool {
    let deadline = Instant::now() + Duration::from_secs(300);
    while FINALIZED.load(Ordering::SeqCst) < before + n {
        if Instant::now() > deadline {
            return false;
        }
        for _ in 0..1000 {
            black_box(gc::alloc(1024));
        }
        gc::collect();
        std::thread::sleep(Duration::from_millis(5));
    }
    true
}

/// Go's recover through the defer layer: returns the recovered value.
fn recovers() -> Option<String> {
    defer::named(None, |f, out| {
        f.defer_with(move |d| out.set(d.recover().map(|v| v.to_string())));
        defer::panic("in the child")
    })
}

/// What a child checks; `Err` names the first thing that failed.
fn child_checks() -> Result<(), &'static str> {
    if recovers().as_deref() != Some("in the child") {
        return Err("defer/panic/recover");
    }
    let keep = gc::alloc(64).as_ptr();
    // SAFETY: 64 fresh bytes.
    unsafe { keep.write_bytes(0x5a, 64) };
    gc::collect();
    // SAFETY: keep is on our stack, so still live.
    if (0..64).any(|i| unsafe { keep.add(i).read() } != 0x5a) {
        return Err("an object on the child's stack was collected");
    }
    // A new thread registers and allocates.
    let t = std::thread::spawn(|| {
        let p = gc::alloc(128).as_ptr();
        gc::collect();
        p as usize
    });
    if t.join().is_err() {
        return Err("a thread in the child");
    }
    if gc::BACKEND == "bdwgc" {
        let before = FINALIZED.load(Ordering::SeqCst);
        garbage_with_finalizers(200);
        if !finalizers_ran(before, 150) {
            return Err("finalizers did not run in the child");
        }
    }
    #[cfg(feature = "precise")]
    precise_checks()?;
    Ok(())
}

#[cfg(feature = "precise")]
fn precise_checks() -> Result<(), &'static str> {
    use defergc::precise::{self, Frame};
    let node = precise::register_type(16, &[0]).map_err(|_| "register_type")?;
    let frame = Frame::new().map_err(|_| "frame")?;
    let kept = precise::alloc(node).map_err(|_| "alloc")?;
    frame.root(kept).map_err(|_| "root")?;
    precise::write_u64(kept, 8, 42).map_err(|_| "write")?;
    let dropped = precise::alloc(node).map_err(|_| "alloc")?;
    let before = precise::stats().collections;
    precise::collect().map_err(|_| "collect")?;
    precise::gc_async();
    precise::gc_wait();
    if precise::stats().collections < before + 2 {
        return Err("precise cycles did not run in the child");
    }
    if precise::read_u64(kept, 8) != Ok(42) {
        return Err("a rooted precise object was lost in the child");
    }
    if precise::read_u64(dropped, 8) != Err(precise::Error::StaleHandle) {
        return Err("an unrooted precise object survived in the child");
    }
    Ok(())
}

/// Forks; the child runs the checks and exits at once with 0 or 1 (after
/// printing what failed). Returns the child's exit status.
fn fork_and_check() -> i32 {
    // SAFETY: the child only runs our checks and then _exit, never
    // returning into the test harness.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork failed");
    if pid == 0 {
        let code = match std::panic::catch_unwind(child_checks) {
            Ok(Ok(())) => 0,
            Ok(Err(what)) => {
                eprintln!("child: {what}");
                1
            }
            Err(_) => {
                eprintln!("child: a check panicked");
                1
            }
        };
        // SAFETY: ends the child without running the parent's exit code.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: pid is our child; status is writable.
    let waited = unsafe { libc::waitpid(pid, &mut status, 0) };
    assert_eq!(waited, pid);
    assert!(
        libc::WIFEXITED(status),
        "the child died: wait status {status:#x}"
    );
    libc::WEXITSTATUS(status)
}

#[test]
fn a_forked_child_collects_finalizes_and_recovers_while_the_parent_allocates() {
    // The background threads exist before the first fork: the finalizer
    // thread and (with precise) the collector thread.
    garbage_with_finalizers(10);
    gc::collect();
    #[cfg(feature = "precise")]
    defergc::precise::collect().unwrap();
    #[cfg(feature = "precise")]
    let bytes = defergc::precise::register_bytes_type().unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let busy: Vec<_> = (0..2)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(Ordering::Relaxed) {
                    let p = black_box(gc::alloc(256));
                    if gc::BACKEND == "bdwgc" {
                        garbage_with_finalizers(1);
                    } else {
                        // Nothing is collected: what is not freed grows
                        // without bound while the forks run (and a big
                        // heap makes each fork slower).
                        // SAFETY: ours, unused from here on.
                        unsafe { gc::free(p.as_ptr()) };
                    }
                    #[cfg(feature = "precise")]
                    black_box(defergc::precise::alloc_array(bytes, 64).unwrap());
                    let _ = recovers();
                }
            })
        })
        .collect();
    for round in 0..20 {
        assert_eq!(fork_and_check(), 0, "child of fork {round} failed");
    }
    stop.store(true, Ordering::Relaxed);
    for t in busy {
        t.join().unwrap();
    }
    // The parent carries on as before.
    assert_eq!(recovers().as_deref(), Some("in the child"));
}
