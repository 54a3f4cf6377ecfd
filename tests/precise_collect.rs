//! The precise collector's core promise: unreachable objects are freed,
//! reachable ones are kept intact (shadow stacks, global roots, heap
//! fields), cycles die, a 10,000,000-node list survives, and handles are
//! reused only after the cycle that freed them, under a new generation.
#![cfg(feature = "precise")]

mod common;

use common::{collect_live, on_thread};
use defergc::precise::{self, Error, Frame, GlobalRoot, Handle, TypeId};
use serial_test::serial;
use std::sync::OnceLock;

/// `struct Tree { left: Handle, right: Handle, value: u64, check: u64 }`
fn tree_type() -> TypeId {
    static T: OnceLock<TypeId> = OnceLock::new();
    *T.get_or_init(|| precise::register_type(32, &[0, 8]).unwrap())
}

/// `struct Node { next: Handle, value: u64 }`
fn node_type() -> TypeId {
    static T: OnceLock<TypeId> = OnceLock::new();
    *T.get_or_init(|| precise::register_type(16, &[0]).unwrap())
}

fn check_word(value: u64) -> u64 {
    value.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0xA5A5_5A5A
}

/// Builds a full binary tree of `depth` levels whose node values are
/// numbered from `*next`; allocates `garbage_per_node` unreachable nodes
/// along the way. The caller roots the result.
fn build_tree(
    depth: u32,
    next: &mut u64,
    garbage_per_node: usize,
    garbage: &mut Vec<Handle>,
) -> Handle {
    let frame = Frame::new().unwrap();
    let node = precise::alloc(tree_type()).unwrap();
    frame.root(node).unwrap();
    for _ in 0..garbage_per_node {
        garbage.push(precise::alloc(tree_type()).unwrap());
    }
    let value = *next;
    *next += 1;
    precise::write_u64(node, 16, value).unwrap();
    precise::write_u64(node, 24, check_word(value)).unwrap();
    if depth > 1 {
        let left = build_tree(depth - 1, next, garbage_per_node, garbage);
        precise::store(node, 0, left).unwrap();
        let right = build_tree(depth - 1, next, garbage_per_node, garbage);
        precise::store(node, 8, right).unwrap();
    }
    node
}

/// Walks a tree, checking every node's contents; returns its node count.
fn check_tree(node: Handle, depth: u32) -> u64 {
    let value = precise::read_u64(node, 16).unwrap();
    assert_eq!(
        precise::read_u64(node, 24).unwrap(),
        check_word(value),
        "node {value} corrupted"
    );
    assert_eq!(precise::size_of(node).unwrap(), 32);
    assert_eq!(precise::type_of(node).unwrap(), tree_type());
    let left = precise::load(node, 0).unwrap();
    let right = precise::load(node, 8).unwrap();
    if depth == 1 {
        assert!(left.is_none() && right.is_none());
        return 1;
    }
    1 + check_tree(left.expect("left child lost"), depth - 1)
        + check_tree(right.expect("right child lost"), depth - 1)
}

/// Collects and returns the live object count.
#[test]
#[serial]
fn unreachable_objects_are_freed_and_reachable_ones_kept() {
    on_thread(|| {
        let base = collect_live();
        let freed_before = precise::stats().objects_freed;
        let frame = Frame::new().unwrap();
        let mut garbage = Vec::new();
        let mut next = 0;
        let tree = build_tree(11, &mut next, 3, &mut garbage);
        frame.root(tree).unwrap();
        let nodes = (1u64 << 11) - 1;
        assert_eq!(garbage.len() as u64, nodes * 3);

        let s = {
            precise::collect().unwrap();
            precise::stats()
        };
        assert_eq!(
            s.live_objects,
            base + nodes,
            "live objects after collection"
        );
        assert!(s.live_bytes >= nodes * 32);
        assert_eq!(
            s.objects_freed - freed_before,
            garbage.len() as u64,
            "exactly the garbage is freed"
        );
        assert_eq!(check_tree(tree, 11), nodes);
        for g in &garbage {
            assert_eq!(precise::deref(*g), Err(Error::StaleHandle));
        }

        // Cut one subtree off: exactly its nodes die.
        let right = precise::load(tree, 8).unwrap().unwrap();
        precise::store(tree, 8, None).unwrap();
        assert_eq!(collect_live(), base + nodes - (nodes / 2));
        assert_eq!(precise::deref(right), Err(Error::StaleHandle));
        assert_eq!(
            check_tree(precise::load(tree, 0).unwrap().unwrap(), 10),
            nodes / 2
        );

        drop(frame);
        assert_eq!(
            collect_live(),
            base,
            "everything dies once the frame is popped"
        );
        assert_eq!(precise::deref(tree), Err(Error::StaleHandle));
    });
}

#[test]
#[serial]
fn cycles_are_collected() {
    on_thread(|| {
        let base = collect_live();
        let frame = Frame::new().unwrap();
        // A ring of 1000 nodes, a two-node cycle and a self-loop.
        let first = precise::alloc(node_type()).unwrap();
        let slot = frame.root(first).unwrap();
        let mut ring = vec![first];
        for i in 1..1000u64 {
            let n = precise::alloc(node_type()).unwrap();
            precise::store(n, 0, *ring.last().unwrap()).unwrap();
            precise::write_u64(n, 8, i).unwrap();
            frame.set(slot, n).unwrap();
            ring.push(n);
        }
        precise::store(first, 0, *ring.last().unwrap()).unwrap();
        let a = precise::alloc(node_type()).unwrap();
        let a_slot = frame.root(a).unwrap();
        let b = precise::alloc(node_type()).unwrap();
        precise::store(a, 0, b).unwrap();
        precise::store(b, 0, a).unwrap();
        let selfish = precise::alloc(node_type()).unwrap();
        precise::store(selfish, 0, selfish).unwrap();
        frame.root(selfish).unwrap();

        assert_eq!(collect_live(), base + 1003, "rooted cycles are kept");
        for (i, n) in ring.iter().enumerate().skip(1) {
            assert_eq!(precise::read_u64(*n, 8).unwrap(), i as u64);
        }

        frame.set(slot, None).unwrap();
        frame.set(a_slot, None).unwrap();
        assert_eq!(collect_live(), base + 1, "unrooted cycles are freed");
        assert!(ring
            .iter()
            .chain([&a, &b])
            .all(|h| precise::deref(*h) == Err(Error::StaleHandle)));
        assert_eq!(precise::load(selfish, 0).unwrap(), Some(selfish));
        drop(frame);
        assert_eq!(collect_live(), base);
    });
}

#[test]
#[serial]
fn ten_million_node_list_survives_a_collection() {
    const N: u64 = 10_000_000;
    on_thread(|| {
        let base = collect_live();
        let frame = Frame::new().unwrap();
        let slot = frame.root(None).unwrap();
        let mut head: Option<Handle> = None;
        for i in 0..N {
            let n = precise::alloc(node_type()).unwrap();
            precise::store(n, 0, head).unwrap();
            precise::write_u64(n, 8, i).unwrap();
            frame.set(slot, n).unwrap();
            head = Some(n);
        }
        assert_eq!(collect_live(), base + N);
        let mut expected = N;
        let mut p = head;
        while let Some(n) = p {
            expected -= 1;
            assert_eq!(precise::read_u64(n, 8).unwrap(), expected);
            p = precise::load(n, 0).unwrap();
        }
        assert_eq!(expected, 0, "list shorter than built");
        drop(frame);
        assert_eq!(collect_live(), base);
    });
}

#[test]
#[serial]
fn handles_are_recycled_only_after_a_full_cycle() {
    on_thread(|| {
        collect_live();
        // Enough objects to drain this thread's handle cache many times.
        let first: Vec<Handle> = (0..20_000)
            .map(|_| precise::alloc(node_type()).unwrap())
            .collect();
        precise::collect().unwrap();
        let capacity = precise::stats().handle_capacity;
        for h in &first {
            assert_eq!(precise::deref(*h), Err(Error::StaleHandle));
        }
        let frame = Frame::new().unwrap();
        let second: Vec<Handle> = (0..20_000)
            .map(|_| {
                let h = precise::alloc(node_type()).unwrap();
                frame.root(h).unwrap();
                h
            })
            .collect();
        let old: std::collections::HashMap<u64, Handle> =
            first.iter().map(|h| (h.index(), *h)).collect();
        let mut reused = 0;
        for h in &second {
            assert!(
                !first.contains(h),
                "{h:?} handed out twice with the same value"
            );
            if let Some(o) = old.get(&h.index()) {
                reused += 1;
                assert!(
                    h.generation() > o.generation(),
                    "{h:?} reuses {o:?} without a new generation"
                );
            }
        }
        assert!(
            reused >= 10_000,
            "only {reused} of 20000 freed handles were reused"
        );
        assert!(
            precise::stats().handle_capacity <= capacity + 2 * 256 * 4,
            "the table grew although freed handles were available"
        );
        for h in &first {
            assert_eq!(
                precise::deref(*h),
                Err(Error::StaleHandle),
                "stale handle revived"
            );
        }
    });
}

#[test]
#[serial]
fn global_roots_keep_their_objects_alive() {
    on_thread(|| {
        let base = collect_live();
        let a = precise::alloc(node_type()).unwrap();
        precise::write_u64(a, 8, 11).unwrap();
        let root = GlobalRoot::new(a).unwrap();
        static mut SLOT: u64 = 0;
        let slot = std::ptr::addr_of_mut!(SLOT);
        // SAFETY: a static slot, written only below on this running thread.
        unsafe { precise::add_global_root(slot).unwrap() };
        let b = precise::alloc(node_type()).unwrap();
        precise::write_u64(b, 8, 22).unwrap();
        // SAFETY: as above.
        unsafe { slot.write(b.to_raw()) };
        assert_eq!(collect_live(), base + 2);
        assert_eq!(precise::read_u64(a, 8).unwrap(), 11);
        assert_eq!(precise::read_u64(b, 8).unwrap(), 22);

        root.set(None).unwrap();
        assert_eq!(collect_live(), base + 1);
        assert_eq!(precise::deref(a), Err(Error::StaleHandle));
        precise::remove_global_root(slot).unwrap();
        assert_eq!(collect_live(), base);
        assert_eq!(precise::deref(b), Err(Error::StaleHandle));
        // SAFETY: as above.
        unsafe { slot.write(0) };
    });
}

#[test]
#[serial]
fn small_arrays_keep_their_length_and_every_byte_through_collections() {
    on_thread(|| {
        let base = collect_live();
        let handles = precise::register_handle_array_type().unwrap();
        let bytes = precise::register_bytes_type().unwrap();
        let frame = Frame::new().unwrap();
        // Byte arrays of every length up to a few classes past the 8-byte
        // steps, each filled to its last byte, side by side with handle
        // arrays whose every slot holds a node: a length word or payload
        // that overlapped a neighbour's would show in the checks below.
        let fill = |len: usize, i: usize| (len * 31 + i) as u8;
        let mut arrays = Vec::new();
        for len in 0..600usize {
            let b = precise::alloc_array(bytes, len).unwrap();
            frame.root(b).unwrap();
            let data: Vec<u8> = (0..len).map(|i| fill(len, i)).collect();
            precise::write_bytes(b, 0, &data).unwrap();
            let h = precise::alloc_array(handles, len / 8).unwrap();
            frame.root(h).unwrap();
            for slot in 0..len / 8 {
                let node = precise::alloc(node_type()).unwrap();
                precise::write_u64(node, 8, check_word((len * 1000 + slot) as u64)).unwrap();
                precise::store(h, slot * 8, node).unwrap();
            }
            arrays.push((len, b, h));
        }
        let nodes: usize = (0..600).map(|len| len / 8).sum();
        assert_eq!(collect_live(), base + 2 * 600 + nodes as u64);
        for (len, b, h) in arrays {
            assert_eq!(precise::size_of(b).unwrap(), len);
            assert_eq!(precise::size_of(h).unwrap(), len / 8 * 8);
            assert_eq!(
                precise::read_bytes(b, 0, &mut vec![0; len + 1]),
                Err(Error::OutOfBounds)
            );
            let mut got = vec![0u8; len];
            precise::read_bytes(b, 0, &mut got).unwrap();
            assert!(
                got.iter().enumerate().all(|(i, &x)| x == fill(len, i)),
                "bytes of the {len}-byte array"
            );
            let p = precise::deref(b).unwrap().as_ptr();
            // SAFETY: the payload of a rooted array of len bytes.
            let direct = unsafe { std::slice::from_raw_parts(p, len) };
            assert_eq!(direct, &got[..]);
            for slot in 0..len / 8 {
                let node = precise::load(h, slot * 8).unwrap().unwrap();
                assert_eq!(
                    precise::read_u64(node, 8).unwrap(),
                    check_word((len * 1000 + slot) as u64)
                );
            }
        }
        drop(frame);
        assert_eq!(collect_live(), base);
    });
}

#[test]
#[serial]
fn arrays_and_large_objects_are_traced_and_freed() {
    on_thread(|| {
        let base = collect_live();
        let handles = precise::register_handle_array_type().unwrap();
        let bytes = precise::register_bytes_type().unwrap();
        let frame = Frame::new().unwrap();
        // A large handle array (8 MB) holding large byte arrays and nodes.
        let arr = precise::alloc_array(handles, 1 << 20).unwrap();
        frame.root(arr).unwrap();
        for i in 0..64usize {
            let blob = precise::alloc_array(bytes, 100_000 + i).unwrap();
            precise::write_bytes(blob, 99_990, &[i as u8; 10]).unwrap();
            precise::store(arr, i * 8 * 1000, blob).unwrap();
            let _garbage = precise::alloc_array(bytes, 50_000).unwrap();
        }
        assert_eq!(collect_live(), base + 65);
        for i in 0..64usize {
            let blob = precise::load(arr, i * 8 * 1000).unwrap().unwrap();
            assert_eq!(precise::size_of(blob).unwrap(), 100_000 + i);
            let mut tail = [0u8; 10];
            precise::read_bytes(blob, 99_990, &mut tail).unwrap();
            assert_eq!(tail, [i as u8; 10]);
        }
        let heap_before = precise::stats().heap_size;
        drop(frame);
        assert_eq!(collect_live(), base);
        assert!(
            precise::stats().heap_size < heap_before - (8 << 20),
            "large objects not released"
        );
    });
}

#[test]
#[serial]
fn allocation_triggers_collections_and_reuses_memory() {
    on_thread(|| {
        collect_live();
        let s0 = precise::stats();
        // 64 MB of garbage in 40-byte cells (an 8-byte header and a 32-byte payload); the pacer
        // must keep the heap far below that by collecting and reusing blocks.
        for _ in 0..(64 << 20) / 40 {
            precise::alloc(tree_type()).unwrap();
        }
        let s1 = precise::stats();
        assert!(
            s1.collections > s0.collections + 2,
            "no automatic collection"
        );
        assert!(
            s1.heap_size < s0.heap_size + (32 << 20),
            "heap grew from {} to {} for garbage",
            s0.heap_size,
            s1.heap_size
        );
        assert!(s1.pause_total > s0.pause_total && s1.pause_max >= s1.pause_last);
    });
}

#[test]
#[serial]
fn payloads_are_aligned_to_8_bytes_and_cells_never_overlap() {
    on_thread(|| {
        let frame = Frame::new().unwrap();
        let mut objects = Vec::new();
        for words in 1..=40usize {
            let size = words * 8;
            let ty = precise::register_type(size, &[]).unwrap();
            // Several objects per class, so that odd and even cells are
            // both seen.
            for _ in 0..8 {
                let obj = precise::alloc(ty).unwrap();
                frame.root(obj).unwrap();
                let addr = precise::deref(obj).unwrap().as_ptr() as usize;
                assert_eq!(addr % 8, 0, "{size}-byte payload at {addr:#x}");
                precise::write_u64(obj, size - 8, u64::MAX).unwrap();
                objects.push((obj, size));
            }
        }
        precise::collect().unwrap();
        // Cells did not overlap: each object's last word survived its
        // neighbours' allocation and zeroing, and the rest is still zero.
        for (obj, size) in objects {
            assert_eq!(precise::read_u64(obj, size - 8).unwrap(), u64::MAX);
            for at in (0..size - 8).step_by(8) {
                assert_eq!(
                    precise::read_u64(obj, at).unwrap(),
                    0,
                    "word {at} of {size}"
                );
            }
        }
    });
}

/// Collects until free blocks unused for longer than the idle time have
/// gone back to the system (two cycles apart, the first of which sees them
/// all free).
fn give_back_idle_blocks() {
    collect_live();
    for _ in 0..3 {
        std::thread::sleep(std::time::Duration::from_millis(1100));
        collect_live();
    }
}

#[test]
#[serial]
fn idle_free_blocks_are_given_back_and_busy_ones_kept() {
    on_thread(|| {
        // From a heap with no idle free blocks: the tests before this one
        // leave theirs (a 240 MB list), which the nodes below would reuse
        // instead of growing the heap, and which go back to the system
        // while this one looks.
        give_back_idle_blocks();
        let base = precise::stats().heap_size;
        // 64 MB of nodes (24-byte cells: an 8-byte header and a 16-byte
        // payload), live until the frame goes.
        let frame = Frame::new().unwrap();
        let head = precise::alloc(node_type()).unwrap();
        frame.root(head).unwrap();
        let mut last = head;
        for _ in 0..(64 << 20) / 24 {
            let next = precise::alloc(node_type()).unwrap();
            precise::store(last, 0, next).unwrap();
            last = next;
        }
        drop(frame);
        collect_live();
        let freed = precise::stats().heap_size;
        assert!(
            freed > base + (48 << 20),
            "free blocks were given back at once: heap {freed} from {base}"
        );
        // Reusing them costs no new memory.
        for _ in 0..(16 << 20) / 24 {
            precise::alloc(node_type()).unwrap();
        }
        assert!(precise::stats().heap_size <= freed + (4 << 20));
        give_back_idle_blocks();
        let idle = precise::stats().heap_size;
        assert!(
            idle < base + (8 << 20),
            "idle free blocks were kept: heap {idle} from {base}"
        );
    });
}

#[test]
#[serial]
fn alloc_with_sets_the_fields_in_offset_order_and_checks_its_values() {
    on_thread(|| {
        let frame = Frame::new().unwrap();
        let a = precise::alloc(node_type()).unwrap();
        frame.root(a).unwrap();
        let b = precise::alloc(node_type()).unwrap();
        frame.root(b).unwrap();
        let both = precise::alloc_with(tree_type(), &[Some(a), Some(b)]).unwrap();
        frame.root(both).unwrap();
        assert_eq!(precise::load(both, 0), Ok(Some(a)));
        assert_eq!(precise::load(both, 8), Ok(Some(b)));
        let first = precise::alloc_with(tree_type(), &[None, Some(a)]).unwrap();
        assert_eq!(precise::load(first, 0), Ok(None));
        assert_eq!(precise::load(first, 8), Ok(Some(a)));
        let short = precise::alloc_with(tree_type(), &[Some(b)]).unwrap();
        assert_eq!(precise::load(short, 0), Ok(Some(b)));
        assert_eq!(precise::load(short, 8), Ok(None));
        assert_eq!(precise::read_u64(short, 16), Ok(0), "payload not zeroed");
        assert_eq!(
            precise::alloc_with(tree_type(), &[None, None, Some(a)]),
            Err(Error::OutOfBounds)
        );
        assert_eq!(
            precise::alloc_with(common::array_type(), &[Some(a)]),
            Err(Error::WrongTypeKind)
        );
        assert_eq!(
            precise::alloc_with(common::array_type(), &[]),
            Err(Error::WrongTypeKind)
        );
        let dead = precise::alloc(node_type()).unwrap();
        precise::collect().unwrap();
        assert_eq!(
            precise::alloc_with(tree_type(), &[Some(a), Some(dead)]),
            Err(Error::StaleHandle)
        );
        // The fields keep their objects: once the frame that rooted a and
        // b is popped, `both` is the only path to them.
        drop(frame);
        let frame = Frame::new().unwrap();
        frame.root(both).unwrap();
        precise::collect().unwrap();
        assert_eq!(precise::load(both, 8), Ok(Some(b)));
        assert_eq!(precise::read_u64(b, 8), Ok(0));
    });
}

#[test]
#[serial]
fn a_list_built_with_alloc_with_survives_concurrent_collections() {
    // Each node is held only by the next one's field, set as it is
    // allocated, while cycles run back to back: nodes are born white,
    // grey and black, and their fields are written before and after the
    // thread's roots are snapshotted.
    const N: u64 = 300_000;
    on_thread(|| {
        let base = collect_live();
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let cycler = {
            let stop = stop.clone();
            std::thread::spawn(move || {
                while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                    precise::collect().unwrap();
                }
            })
        };
        let frame = Frame::new().unwrap();
        let slot = frame.root(None).unwrap();
        let mut head: Option<Handle> = None;
        for i in 0..N {
            if i == N / 3 || i == 2 * N / 3 {
                // At least one whole collection while the list is half
                // built, whatever the scheduler does with the cycler (a
                // count of collections during the build asserted it, and
                // failed when the cycler was not scheduled): waited for
                // in native code, so that it does not wait for this
                // thread.
                let seen = precise::stats().collections;
                precise::native(|| {
                    while precise::stats().collections < seen + 2 {
                        std::thread::sleep(std::time::Duration::from_millis(1));
                    }
                })
                .unwrap();
            }
            let n = precise::alloc_with(node_type(), &[head]).unwrap();
            precise::write_u64(n, 8, check_word(i)).unwrap();
            frame.set(slot, n).unwrap();
            head = Some(n);
        }
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        // In native code: the cycle under way must not wait for us.
        precise::native(|| cycler.join().unwrap()).unwrap();
        assert_eq!(collect_live(), base + N);
        let mut expected = N;
        let mut p = head;
        while let Some(n) = p {
            expected -= 1;
            assert_eq!(precise::read_u64(n, 8), Ok(check_word(expected)));
            p = precise::load(n, 0).unwrap();
        }
        assert_eq!(expected, 0, "list shorter than built");
    });
}
