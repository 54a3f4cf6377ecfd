//! Go's runtime.AddCleanup beside SetFinalizer on the bdwgc heap: every
//! cleanup runs once with its argument (kept alive meanwhile), after the
//! object's finalizer if it has one, never if stopped; arg == obj is Go's
//! panic.

#![cfg(defergc_boehm)]

use defergc::{defer, gc};
use serial_test::serial;
use std::ffi::c_void;
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

const N: usize = 200;
static RAN: [AtomicUsize; 2 * N] = [const { AtomicUsize::new(0) }; 2 * N];
static EVENTS: Mutex<Vec<(usize, &'static str)>> = Mutex::new(Vec::new());

/// The argument: a GC object only the cleanup references, holding an index
/// and a check word.
unsafe extern "C" fn cleanup(arg: *mut c_void) {
    // SAFETY: the argument objects made below (two words).
    let (i, check) = unsafe {
        (
            arg.cast::<usize>().read(),
            arg.cast::<usize>().add(1).read(),
        )
    };
    assert_eq!(check, i ^ 0x5a5a, "a cleanup's argument was collected");
    RAN[i].fetch_add(1, Ordering::SeqCst);
    EVENTS.lock().unwrap().push((i, "cleanup"));
}

unsafe extern "C" fn finalizer(_obj: *mut c_void, data: *mut c_void) {
    EVENTS.lock().unwrap().push((data as usize, "finalizer"));
}

fn arg(i: usize) -> *mut c_void {
    let a = gc::alloc(16).cast::<usize>().as_ptr();
    // SAFETY: a fresh two-word object.
    unsafe {
        a.write(i);
        a.add(1).write(i ^ 0x5a5a);
    }
    a.cast()
}

/// N objects, each with two cleanups (indices i and N + i); those of odd i
/// also get a finalizer; the second cleanup of every i % 4 == 2 is stopped.
#[inline(never)]
fn objects_with_cleanups() {
    for i in 0..N {
        let obj = gc::alloc(32);
        // SAFETY: obj is a fresh object; the functions only record.
        unsafe {
            if i % 2 == 1 {
                gc::register_finalizer(obj.as_ptr(), Some(finalizer), i as *mut c_void);
            }
            gc::add_cleanup(obj, cleanup, arg(i));
            let second = gc::add_cleanup(obj, cleanup, arg(N + i));
            if i % 4 == 2 {
                second.stop();
            }
        }
    }
}

#[inline(never)]
fn clear_stack() {
    let mut junk = [0usize; 4096];
    black_box(&mut junk);
}

#[test]
#[serial]
fn cleanups_run_once_with_their_arguments_after_finalizers() {
    objects_with_cleanups();
    let done = || {
        (0..N)
            .filter(|&i| RAN[i].load(Ordering::SeqCst) > 0)
            .count()
    };
    for _ in 0..200 {
        if done() >= N * 9 / 10 {
            break;
        }
        clear_stack();
        gc::collect();
        gc::run_finalizers();
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    assert!(
        done() >= N * 9 / 10,
        "only {} of {N} objects' cleanups ran",
        done()
    );
    for i in 0..N {
        let (first, second) = (
            RAN[i].load(Ordering::SeqCst),
            RAN[N + i].load(Ordering::SeqCst),
        );
        assert!(first <= 1 && second <= 1, "a cleanup ran twice");
        if i % 4 == 2 {
            assert_eq!(second, 0, "a stopped cleanup ran");
        } else {
            assert_eq!(
                first, second,
                "object {i}: one cleanup ran without the other"
            );
        }
    }
    // A finalizer comes before its object's cleanups.
    let events = EVENTS.lock().unwrap();
    for i in (1..N).step_by(2) {
        let first_cleanup = events.iter().position(|&(j, e)| j == i && e == "cleanup");
        let finalizer = events.iter().position(|&(j, e)| j == i && e == "finalizer");
        if let Some(c) = first_cleanup {
            assert!(
                finalizer.is_some_and(|f| f < c),
                "object {i}: cleanup before finalizer"
            );
        }
    }
}

#[test]
#[serial]
fn a_cleanup_whose_argument_is_its_object_is_go_s_panic() {
    let obj = gc::alloc(16);
    let message = defer::named(String::new(), |f, out| {
        f.defer_with(move |d| {
            if let Some(v) = d.recover() {
                out.set(v.to_string());
            }
        });
        // SAFETY: obj is live; the cleanup never runs.
        unsafe { gc::add_cleanup(obj, cleanup, obj.as_ptr().cast()) };
        String::new()
    });
    assert_eq!(
        message,
        "runtime.AddCleanup: ptr is equal to arg, cleanup will never run"
    );
    gc::keep_alive(obj.as_ptr());
}

static ONE: AtomicUsize = AtomicUsize::new(0);

unsafe extern "C" fn count_one(_obj: *mut c_void, _data: *mut c_void) {
    ONE.fetch_add(1, Ordering::SeqCst);
}

/// An object with a finalizer, garbage once this returns.
#[inline(never)]
fn one_finalizable() {
    let obj = gc::alloc(48);
    // SAFETY: a fresh object; the finalizer only counts.
    unsafe { gc::register_finalizer(obj.as_ptr(), Some(count_one), std::ptr::null_mut()) };
}

/// What `collect_with_clean_stack` promises finalizer tests: one
/// collection finalizes an object dropped by a function that returned,
/// every time (no retry loop, which is what such tests needed).
#[test]
#[serial]
fn one_collection_with_a_clean_stack_finalizes_dropped_garbage() {
    for round in 0..50 {
        let before = ONE.load(Ordering::SeqCst);
        one_finalizable();
        gc::collect_with_clean_stack();
        // The finalizer runs here or on the finalizer thread; no further
        // collection happens while we wait for it.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while ONE.load(Ordering::SeqCst) == before && std::time::Instant::now() < deadline {
            gc::run_finalizers();
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        assert_eq!(
            ONE.load(Ordering::SeqCst),
            before + 1,
            "round {round}: the collection kept the dropped object"
        );
    }
}
