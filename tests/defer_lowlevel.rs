//! The low-level chain for runtimes that manage their own frames (llgo's
//! SetThreadDefer / GetThreadDefer / ClearThreadDefer / FreeDeferNode).

use defergc::defer::lowlevel::{self, RecordError};
use defergc::gc;
use serial_test::serial;
use std::ffi::c_void;
use std::hint::black_box;

/// An llgo-style loop-defer node: `{prev, id, arg}` where `arg` is a GC
/// object holding the node's index.
#[repr(C)]
struct Node {
    prev: *mut Node,
    id: usize,
    arg: *mut usize,
}

fn push_node(id: usize) {
    let node = lowlevel::record_alloc(std::mem::size_of::<Node>()).cast::<Node>();
    let arg = gc::alloc(8).as_ptr().cast::<usize>();
    // SAFETY: a fresh record of Node's size and a fresh 8-byte object.
    unsafe {
        arg.write(id);
        node.as_ptr().write(Node {
            prev: lowlevel::head().cast(),
            id,
            arg,
        });
    }
    lowlevel::set_head(node.as_ptr().cast());
}

/// Pops and "runs" every node, newest first, freeing each right after;
/// returns how many ran with an intact argument in LIFO order.
fn drain_nodes(mut expect: usize) -> usize {
    let mut ok = 0;
    loop {
        let node = lowlevel::head().cast::<Node>();
        if node.is_null() {
            return ok;
        }
        // SAFETY: the head is a live node pushed by push_node; its arg is
        // kept alive by the node (root memory).
        unsafe {
            let Node { prev, id, arg } = node.read();
            expect -= 1;
            if id == expect && arg.read() == id {
                ok += 1;
            }
            lowlevel::set_head(prev.cast());
            lowlevel::record_free(node.cast()).expect("freeing a live node");
        }
    }
}

#[test]
#[serial]
fn a_million_node_chain_off_the_head_survives_collections() {
    const N: usize = 1_000_000;
    assert!(lowlevel::head().is_null());
    for i in 0..N {
        push_node(i);
        if i % 100_000 == 99_999 {
            for _ in 0..2000 {
                black_box(gc::alloc(32));
            }
            gc::collect();
        }
    }
    assert_eq!(
        drain_nodes(N),
        N,
        "nodes ran out of order or saw a reclaimed argument"
    );
    assert!(lowlevel::head().is_null());
}

#[test]
fn the_head_is_per_thread() {
    lowlevel::set_head(8 as *mut c_void);
    std::thread::spawn(|| {
        assert!(lowlevel::head().is_null());
        lowlevel::set_head(16 as *mut c_void);
        assert_eq!(lowlevel::head() as usize, 16);
    })
    .join()
    .unwrap();
    assert_eq!(lowlevel::head() as usize, 8);
    lowlevel::clear_head();
    assert!(lowlevel::head().is_null());
}

#[test]
fn records_are_zeroed() {
    let r = lowlevel::record_alloc(256);
    // SAFETY: 256 fresh bytes.
    assert!((0..256).all(|i| unsafe { *r.as_ptr().add(i) } == 0));
    // SAFETY: a live record.
    unsafe { lowlevel::record_free(r.as_ptr()) }.unwrap();
}

#[test]
fn freeing_twice_null_or_a_foreign_pointer_is_reported() {
    let r = lowlevel::record_alloc(32);
    // SAFETY: a live record, then the same (now freed) record, whose header
    // is still readable: nothing was allocated in between.
    unsafe {
        assert_eq!(lowlevel::record_free(r.as_ptr()), Ok(()));
        assert_eq!(
            lowlevel::record_free(r.as_ptr()),
            Err(RecordError::DoubleFree)
        );
    }
    // SAFETY: null is checked first.
    let null = unsafe { lowlevel::record_free(std::ptr::null_mut()) };
    assert_eq!(null, Err(RecordError::Null));
    let not_a_record = gc::alloc(64).as_ptr();
    // SAFETY: the 16 bytes before a pointer 16 bytes into a 64-byte object
    // are readable.
    let freed = unsafe { lowlevel::record_free(not_a_record.add(16)) };
    assert_eq!(freed, Err(RecordError::NotARecord));
    assert_eq!(
        RecordError::DoubleFree.to_string(),
        "defergc: defer record freed twice"
    );
}

#[test]
fn a_double_free_is_caught_anywhere_in_the_quarantine_window() {
    let first = lowlevel::record_alloc(24);
    // SAFETY: a live record.
    unsafe { lowlevel::record_free(first.as_ptr()) }.unwrap();
    for _ in 0..lowlevel::QUARANTINE - 1 {
        let other = lowlevel::record_alloc(24);
        // SAFETY: a live record.
        unsafe { lowlevel::record_free(other.as_ptr()) }.unwrap();
    }
    // SAFETY: the first record is still quarantined, its header intact.
    let again = unsafe { lowlevel::record_free(first.as_ptr()) };
    assert_eq!(again, Err(RecordError::DoubleFree));
}
