//! Crate-internal tests through a test scanner (a hook that offers extra
//! root words and can hold a collection open): candidate words in root
//! memory, and a collection held open long enough to watch `leave_native`
//! return without waiting for it.

use super::*;
use serial_test::serial;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc;
use std::time::Duration;

/// Root memory of the test scanner: any words, offered as candidates.
static ROOT_MEMORY: [AtomicU64; 4] = [const { AtomicU64::new(0) }; 4];
/// While set, the scanner announces itself and holds the collection open.
static HOLD: AtomicBool = AtomicBool::new(false);
static HELD: AtomicBool = AtomicBool::new(false);
static RELEASED: AtomicBool = AtomicBool::new(false);

fn test_scanner(visit: &mut dyn FnMut(u64)) {
    for word in &ROOT_MEMORY {
        visit(word.load(Ordering::Relaxed));
    }
    if HOLD.load(Ordering::Acquire) {
        HELD.store(true, Ordering::Release);
        std::thread::sleep(Duration::from_millis(300));
        RELEASED.store(true, Ordering::Release);
    }
}

fn install_scanner() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| add_root_memory_scanner(test_scanner));
}

fn bytes_type() -> TypeId {
    static T: std::sync::OnceLock<TypeId> = std::sync::OnceLock::new();
    *T.get_or_init(|| register_bytes_type().unwrap())
}

#[test]
#[serial(precise)]
fn objects_named_only_by_root_memory_survive_and_garbage_words_are_ignored() {
    install_scanner();
    std::thread::spawn(|| {
        let kept = alloc_array(bytes_type(), 8).unwrap();
        write_u64(kept, 0, 4242).unwrap();
        ROOT_MEMORY[0].store(kept.to_raw(), Ordering::Relaxed);
        let stale = alloc_array(bytes_type(), 8).unwrap();
        collect().unwrap(); // `stale` was never rooted
        assert_eq!(deref(stale), Err(Error::StaleHandle));
        ROOT_MEMORY[1].store(stale.to_raw(), Ordering::Relaxed);
        ROOT_MEMORY[2].store(0xFFFF_FFFF_FFFF_FFFF, Ordering::Relaxed);
        ROOT_MEMORY[3].store(kept.to_raw() ^ (1 << 41), Ordering::Relaxed);
        for _ in 0..3 {
            collect().unwrap();
            assert_eq!(
                read_u64(kept, 0),
                Ok(4242),
                "object in root memory was freed"
            );
        }
        assert_eq!(
            deref(stale),
            Err(Error::StaleHandle),
            "a stale word revived"
        );
        ROOT_MEMORY[0].store(0, Ordering::Relaxed);
        collect().unwrap();
        assert_eq!(
            deref(kept),
            Err(Error::StaleHandle),
            "root memory kept it after clearing"
        );
        for w in &ROOT_MEMORY {
            w.store(0, Ordering::Relaxed);
        }
    })
    .join()
    .unwrap();
}

#[test]
#[serial(precise)]
fn leave_native_does_not_wait_for_a_running_collection() {
    install_scanner();
    let (entered_tx, entered_rx) = mpsc::channel();
    let native_thread = std::thread::spawn(move || {
        register_thread().unwrap();
        let frame = Frame::new().unwrap();
        let kept = alloc_array(bytes_type(), 8).unwrap();
        write_u64(kept, 0, 99).unwrap();
        frame.root(kept).unwrap();
        enter_native().unwrap();
        entered_tx.send(()).unwrap();
        while !HELD.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        leave_native().unwrap();
        // The collection is still held open by the scanner: we did not
        // wait for it, and may use the heap while it marks.
        let during = !RELEASED.load(Ordering::Acquire);
        let fresh = alloc_array(bytes_type(), 8).unwrap();
        write_u64(fresh, 0, 7).unwrap();
        frame.root(fresh).unwrap();
        while !RELEASED.load(Ordering::Acquire) {
            safepoint().unwrap();
            std::thread::yield_now();
        }
        gc_wait();
        (during, read_u64(kept, 0), read_u64(fresh, 0))
    });
    entered_rx.recv().unwrap();
    HOLD.store(true, Ordering::Release);
    let collector = std::thread::spawn(|| collect().unwrap());
    let (during, kept, fresh) = native_thread.join().unwrap();
    collector.join().unwrap();
    HOLD.store(false, Ordering::Release);
    HELD.store(false, Ordering::Release);
    RELEASED.store(false, Ordering::Release);
    assert!(during, "leave_native waited for the whole collection");
    assert_eq!(
        kept,
        Ok(99),
        "the native thread's root was not scanned for it"
    );
    assert_eq!(fresh, Ok(7), "an object allocated during marking was freed");
}

#[test]
#[serial(precise)]
fn a_stale_handle_to_a_reused_cell_names_nothing() {
    install_scanner();
    std::thread::spawn(|| {
        const N: u64 = 2_000;
        // Never rooted: freed by the next collection, their cells reused.
        let old: std::collections::HashMap<u64, Handle> = (0..N)
            .map(|_| alloc_array(bytes_type(), 8).unwrap())
            .map(|h| (h.index(), h))
            .collect();
        collect().unwrap();
        let frame = Frame::new().unwrap();
        let mut reused = Vec::new();
        for i in 0..4 * N {
            let h = alloc_array(bytes_type(), 8).unwrap();
            frame.root(h).unwrap();
            write_u64(h, 0, i).unwrap();
            if let Some(&o) = old.get(&h.index()) {
                reused.push((o, h, i));
            }
        }
        assert!(
            reused.len() as u64 >= N / 2,
            "only {} of {N} freed cells were reused",
            reused.len()
        );
        for &(o, h, i) in &reused {
            assert_eq!(h.generation(), o.generation() + 1, "{h:?} after {o:?}");
            assert_eq!(deref(o), Err(Error::StaleHandle), "{o:?} names {h:?}");
            assert_eq!(read_u64(h, 0), Ok(i));
        }
        // A stale word in root memory keeps nothing alive, not even the
        // object now in its cell.
        let (o, h, _) = reused[0];
        ROOT_MEMORY[0].store(o.to_raw(), Ordering::Relaxed);
        drop(frame);
        collect().unwrap();
        ROOT_MEMORY[0].store(0, Ordering::Relaxed);
        assert_eq!(deref(h), Err(Error::StaleHandle), "a stale word kept {h:?}");
        assert_eq!(deref(o), Err(Error::StaleHandle));
    })
    .join()
    .unwrap();
}

#[test]
#[serial(precise)]
fn a_validation_that_matched_a_handle_before_its_cell_was_reused_rejects_it() {
    std::thread::spawn(|| {
        const N: usize = 64;
        // A validator reads each generation word and matches it; then the
        // objects die, and new objects take their cells before the
        // validator reads the marks, which are live marks again.
        let old: Vec<(Handle, handles::Found)> = (0..N)
            .map(|_| {
                let h = alloc_array(bytes_type(), 8).unwrap();
                let found = handles::locate(h.to_raw()).unwrap();
                // SAFETY: the cell of a live object of ours.
                let word = unsafe { (*found.hdr).generation.load(Ordering::Acquire) };
                assert_eq!(word, h.generation());
                (h, found)
            })
            .collect();
        let by_index: std::collections::HashMap<u64, usize> = old
            .iter()
            .enumerate()
            .map(|(i, (h, _))| (h.index(), i))
            .collect();
        collect().unwrap();
        let frame = Frame::new().unwrap();
        let mut reused = [false; N];
        for _ in 0..10_000_000 {
            let h = alloc_array(bytes_type(), 8).unwrap();
            if let Some(&i) = by_index.get(&h.index()) {
                frame.root(h).unwrap();
                reused[i] = true;
                if reused.iter().all(|&r| r) {
                    break;
                }
            }
        }
        for (i, &(h, found)) in old.iter().enumerate() {
            assert!(reused[i], "the cell of {h:?} was not reused");
            assert!(
                !handles::still_live(h.to_raw(), found),
                "{h:?} validated as the object now in its cell"
            );
        }
    })
    .join()
    .unwrap();
}

#[test]
#[serial(precise)]
fn allocations_a_fork_interrupted_are_finished_or_cleared_in_the_child() {
    std::thread::spawn(|| {
        let frame = Frame::new().unwrap();
        // A large object whose table entry the fork kept from being
        // written: its listing names its handle, and the child publishes
        // it (a wrong handle there would publish another index).
        let big = alloc_array(bytes_type(), 100_000).unwrap();
        frame.root(big).unwrap();
        write_u64(big, 99_992, 0x5EED).unwrap();
        handles::unpublish_for_tests(big.to_raw());
        assert_eq!(deref(big), Err(Error::InvalidHandle));
        heap::finish_interrupted_large();
        assert_eq!(read_u64(big, 99_992), Ok(0x5EED));

        // A small cell the fork caught half written: still free (its
        // generation word not yet the object's), with a type, a mark and
        // payload bytes written. The child clears all but the word, so
        // the cell is as never used and keeps its binding.
        let ty = register_type(24, &[]).unwrap();
        let obj = alloc(ty).unwrap();
        frame.root(obj).unwrap();
        let hdr = handles::resolve(obj).unwrap();
        let ts = mutator::current().unwrap();
        // SAFETY: the cell of our newest object, the one just below our
        // bump cursor; nothing else touches it while we play the fork.
        unsafe {
            let cell = hdr.cast::<u8>();
            let saved = std::ptr::read(cell.cast::<[u8; 32]>());
            let word = &(*hdr).generation;
            let generation = word.load(Ordering::Relaxed);
            word.store(generation | heap::FREE, Ordering::Relaxed);
            std::ptr::write_bytes(cell.add(4), 0xAB, 28);
            heap::finish_interrupted(&ts.local().heap);
            assert_eq!(word.load(Ordering::Relaxed), generation | heap::FREE);
            let rest = std::slice::from_raw_parts(cell.add(4), 28);
            assert!(rest.iter().all(|&b| b == 0), "{rest:?}");
            // The object back as it was, for the rest of the test run.
            std::ptr::write(cell.cast::<[u8; 32]>(), saved);
        }
        assert_eq!(type_of(obj), Ok(ty));
        drop(frame);
    })
    .join()
    .unwrap();
}

#[test]
#[serial(precise)]
fn objects_born_black_outlive_their_cycle_and_die_in_the_next() {
    // Blocks a thread takes wholly free while allocation is black are not
    // swept by that cycle (nothing in them is dead for it); the next cycle
    // must sweep them like any other.
    std::thread::spawn(|| {
        let node = register_type(24, &[0]).unwrap();
        let old_percent = set_gc_percent(None);
        let frame = Frame::new().unwrap();
        // A long list keeps the cycle marking while this thread watches.
        let mut list = alloc(node).unwrap();
        let slot = frame.root(list).unwrap();
        for _ in 0..200_000 {
            list = alloc_with(node, &[Some(list)]).unwrap();
            frame.set(slot, list).unwrap();
        }
        'black: for _ in 0..100 {
            gc_async();
            let asked = std::time::Instant::now();
            while asked.elapsed() < Duration::from_secs(1) {
                if snapshot_phase() && !marking::birth_mode().1 {
                    break 'black;
                }
                safepoint().unwrap();
            }
        }
        // Sixteen blocks' worth: most of them wholly free blocks taken now.
        const N: u64 = 16 * 4_096;
        let mut kept = Vec::new();
        let mut dropped = std::collections::HashMap::new();
        for i in 0..N {
            let h = alloc(node).unwrap();
            write_u64(h, 8, i).unwrap();
            if i % 2 == 0 {
                frame.root(h).unwrap();
                kept.push((h, i));
            } else {
                dropped.insert(h.index(), (h, i));
            }
        }
        gc_wait();
        // Born black (or white after the marking): live for this cycle.
        for &(h, i) in dropped.values() {
            assert_eq!(read_u64(h, 8), Ok(i), "{h:?} freed by its birth cycle");
        }
        collect().unwrap();
        for &(h, _) in dropped.values() {
            assert_eq!(deref(h), Err(Error::StaleHandle), "{h:?} outlived a cycle");
        }
        for &(h, i) in &kept {
            assert_eq!(read_u64(h, 8), Ok(i), "{h:?}");
        }
        // That cycle's sweep freed the dead half's cells: the next
        // allocations take them again (partly free blocks come first).
        let mut reused = 0;
        for _ in 0..8 * N {
            let h = alloc(node).unwrap();
            if let Some((o, _)) = dropped.get(&h.index()) {
                assert_eq!(h.generation(), o.generation() + 1, "{h:?} after {o:?}");
                reused += 1;
            }
        }
        assert_eq!(reused, dropped.len(), "cells of dead objects left unswept");
        drop(frame);
        set_gc_percent(old_percent);
    })
    .join()
    .unwrap();
}
