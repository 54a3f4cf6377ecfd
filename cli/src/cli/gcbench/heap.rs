//! The collectors the workloads run on: the [`Heap`] trait (what a
//! workload needs from a collector), the counters a backend reports, and
//! the bdwgc backend. The precise backend is in `precise_heap.rs`.

use defergc::gc;
use std::ptr::NonNull;
use std::time::Duration;

/// Counters a backend reports after a run.
#[derive(Clone, Copy)]
pub(super) struct Counters {
    /// Collections since the process started.
    pub(super) collections: u64,
    /// The largest the heap has been so far, in bytes.
    pub(super) peak_heap_bytes: usize,
    /// The longest pause so far.
    pub(super) pause_max: Duration,
    /// The 99th percentile of pauses and their count, where known.
    pub(super) pause_p99: Option<Duration>,
    pub(super) pause_count: Option<u64>,
    /// Time allocations waited for a collection so the heap stays near its
    /// goal (the precise pacer's allowance), where known.
    pub(super) alloc_wait: Option<Duration>,
    /// Mark assists and the objects they marked, where known.
    pub(super) assists: Option<(u64, u64)>,
}

/// What the workload needs from a collector.
///
/// References are `Copy` values that the workload keeps in local variables
/// and passes down the recursion; a collector that does not scan the native
/// stack conservatively must make them roots itself (for example by making
/// `Node` a rooted handle).
pub(super) trait Heap {
    /// A reference to a tree node.
    type Node: Copy;
    /// A reference to an array of `f64`.
    type Array: Copy;

    /// A new node with no children.
    fn node(&mut self) -> Self::Node;
    /// A new node with the given children.
    fn node_with(&mut self, left: Self::Node, right: Self::Node) -> Self::Node;
    /// Stores `child` as the left child of the older object `node`.
    fn set_left(&mut self, node: Self::Node, child: Self::Node);
    /// Stores `child` as the right child of the older object `node`.
    fn set_right(&mut self, node: Self::Node, child: Self::Node);
    /// The left and right child of `node`, each possibly absent.
    fn children_raw(&self, node: Self::Node) -> (Option<Self::Node>, Option<Self::Node>);
    /// The children of `node`, or `None` for a leaf.
    fn children(&self, node: Self::Node) -> Option<(Self::Node, Self::Node)> {
        let (left, right) = self.children_raw(node);
        Some((left?, right?))
    }
    /// A new pointer-free array of `len` doubles (contents unspecified).
    fn array(&mut self, len: usize) -> Self::Array;
    /// Sets element `i` of `array`.
    fn array_set(&mut self, array: Self::Array, i: usize, value: f64);
    /// Reads element `i` of `array`.
    fn array_get(&self, array: Self::Array, i: usize) -> f64;
    /// The collector's counters now.
    fn counters(&self) -> Counters;
    /// Forgets the pauses recorded so far, where the collector can.
    fn reset_pauses(&mut self) {}
    /// Makes, on another thread, a heap of the same backend for that
    /// thread to use (the multi-threaded workloads).
    fn spawner(&self) -> impl Fn() -> Self + Send + Sync;
    /// Runs `f`, which blocks (joins other mutators), where the collector
    /// need not wait for this thread.
    fn blocking<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
    /// Waits until the collector has finished the work the last run left
    /// it (a concurrent collector's cycle in flight), so that its processor
    /// time counts for that run and not for whatever runs next.
    fn settle(&mut self) {}

    /// Opens a root scope and returns its token for [`Heap::leave`]. A
    /// reference given to [`Heap::keep`] stays alive until its scope is
    /// left, across allocations. Collectors that scan the native stack
    /// need none of this (the defaults do nothing).
    #[inline(always)]
    fn enter(&mut self) -> usize {
        0
    }
    /// Keeps `node` alive until the innermost scope is left.
    #[inline(always)]
    fn keep(&mut self, _node: Self::Node) {}
    /// Keeps `array` alive until the innermost scope is left.
    #[inline(always)]
    fn keep_array(&mut self, _array: Self::Array) {}
    /// Closes the scope `enter` returned `scope` for (no safepoint). A
    /// reference held then may be returned to the caller, which keeps it
    /// before allocating.
    #[inline(always)]
    fn leave(&mut self, _scope: usize) {}
    /// A safepoint poll, where compiled code polls in code that neither
    /// allocates nor opens a scope: at a loop's back edge and on entry to
    /// a function that recurses (a collector that stops threads by other
    /// means needs none).
    #[inline(always)]
    fn poll(&self) {}
}

/// A tree node as the classic C program declares it.
#[repr(C)]
pub(super) struct Node {
    left: *mut Node,
    right: *mut Node,
    // Never read: they give a node the classic program's size (24 bytes).
    #[allow(dead_code)]
    i: i32,
    #[allow(dead_code)]
    j: i32,
}

/// An array of doubles on the bdwgc heap.
#[derive(Clone, Copy)]
pub(super) struct GcArray {
    ptr: NonNull<f64>,
    len: usize,
}

/// The bdwgc backend: nodes from `gc::alloc`, the array from
/// `gc::alloc_atomic`. The calling thread stays registered while it lives.
pub(super) struct Bdwgc {
    _registered: gc::ThreadGuard,
}

impl Bdwgc {
    pub(super) fn new() -> Bdwgc {
        // Start the collector and register this thread before any timing.
        gc::init();
        Bdwgc {
            _registered: gc::ThreadGuard::new(),
        }
    }
}

impl Heap for Bdwgc {
    type Node = NonNull<Node>;
    type Array = GcArray;

    #[inline(always)]
    fn node(&mut self) -> NonNull<Node> {
        // gc::alloc memory is zeroed: both children null, i = j = 0.
        gc::alloc(std::mem::size_of::<Node>()).cast()
    }

    #[inline(always)]
    fn node_with(&mut self, left: NonNull<Node>, right: NonNull<Node>) -> NonNull<Node> {
        let node = self.node();
        // SAFETY: node is a fresh, granule-aligned allocation of a Node.
        unsafe {
            (*node.as_ptr()).left = left.as_ptr();
            (*node.as_ptr()).right = right.as_ptr();
        }
        node
    }

    #[inline(always)]
    fn set_left(&mut self, node: NonNull<Node>, child: NonNull<Node>) {
        // SAFETY: node is a live Node: the workload holds it on its stack.
        unsafe { (*node.as_ptr()).left = child.as_ptr() }
    }

    #[inline(always)]
    fn set_right(&mut self, node: NonNull<Node>, child: NonNull<Node>) {
        // SAFETY: node is a live Node: the workload holds it on its stack.
        unsafe { (*node.as_ptr()).right = child.as_ptr() }
    }

    fn children_raw(&self, node: NonNull<Node>) -> (Option<NonNull<Node>>, Option<NonNull<Node>>) {
        // SAFETY: node is a live Node reached from a root the workload holds.
        let (left, right) = unsafe { ((*node.as_ptr()).left, (*node.as_ptr()).right) };
        (NonNull::new(left), NonNull::new(right))
    }

    fn array(&mut self, len: usize) -> GcArray {
        let bytes = len
            .checked_mul(std::mem::size_of::<f64>())
            .expect("array size overflows usize");
        GcArray {
            ptr: gc::alloc_atomic(bytes).cast(),
            len,
        }
    }

    #[inline(always)]
    fn array_set(&mut self, array: GcArray, i: usize, value: f64) {
        assert!(i < array.len, "index {i} out of bounds ({})", array.len);
        // SAFETY: i is in bounds of a live, 16-byte aligned block of len f64s.
        unsafe { array.ptr.as_ptr().add(i).write(value) }
    }

    fn array_get(&self, array: GcArray, i: usize) -> f64 {
        assert!(i < array.len, "index {i} out of bounds ({})", array.len);
        // SAFETY: i is in bounds, and the workload only reads what it wrote.
        unsafe { array.ptr.as_ptr().add(i).read() }
    }

    fn spawner(&self) -> impl Fn() -> Bdwgc + Send + Sync {
        Bdwgc::new
    }

    fn counters(&self) -> Counters {
        let stats = gc::stats();
        Counters {
            collections: stats.collections,
            // bdwgc's heap never shrinks (unmapped blocks still count), so
            // its size now is the largest it has been.
            peak_heap_bytes: stats.heap_size,
            pause_max: stats.max_pause,
            pause_p99: None,
            pause_count: None,
            alloc_wait: None,
            assists: None,
        }
    }
}
