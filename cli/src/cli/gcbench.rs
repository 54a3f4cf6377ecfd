//! `defergc gcbench`: the GCBench of Ellis, Kovac and Boehm on a collector
//! backend, timed over several runs, with a human summary and one JSON line.
//!
//! The workload (a stretch tree of depth 18, a long-lived tree of depth 16
//! and an array of 500,000 doubles that stay live throughout, then trees of
//! depth 4..=16 built top-down and bottom-up) is written once against the
//! [`Heap`] trait; each backend is one small implementation of it, chosen
//! with `--backend`: `bdwgc` (conservative, finds references on the native
//! stack) or `precise` (handles, with the workload's references rooted in
//! shadow-stack frames through the trait's scope hooks, and safepoint
//! polls where compiled code would put them: in loops and recursive
//! functions that neither allocate nor open a scope, such as counting a
//! tree's nodes). The long-lived data is checked after every run, so a
//! collector that frees live objects fails the benchmark instead of timing
//! it.
//!
//! `benches/c/gcbench.c` is the same program in C against `gc.h`, and
//! `benches/gcbench.rs` compares it with `defergc gcbench --runs 1 --json`.
//!
//! `--workload live-heap` runs a second program on the same trait: a large
//! live heap (`--live-mb`, 100 MB by default: trees hung off a spine) whose
//! trees are replaced one at a time, so that every collection marks the
//! whole live heap while the mutator keeps allocating: the case where a
//! stop-the-world collector pauses longest.
//!
//! `--workload binary-trees` is the Benchmarks Game's binary-trees
//! (`--depth`, 21 by default): a stretch tree one deeper, a long-lived
//! tree, then `2^(depth - d + 4)` trees of each depth `d` in `4..=depth`
//! step 2, built bottom-up and counted; every count is checked.
//! `--workload gcbench-mt2` and `gcbench-mt4` run GCBench on 2 and 4
//! mutator threads at once (each with its own long-lived data), timed
//! until the last one finishes. Their JSON lines carry the same `bench`
//! names as the Go versions in `benches/go/`.
//!
//! `--go` then runs the same workload in Go (`benches/go/gcbench/main.go`,
//! the same sizes and checks) for as many runs and prints its JSON line
//! (`"impl":"go"`, `median_ms`, `collections`, `pause_max_us`,
//! `peak_rss_bytes`).
//!
//! Each backend reports its runs' median wall time (`median_ms`) and the
//! median processor time of the whole process over a run (`cpu_ms`: user
//! and kernel time of every thread, a concurrent collector's included,
//! counted until its last cycle of the run has ended); `--backend both`
//! adds the ratios `ratio` (wall) and `cpu_ratio`.
//!
//! Both report the collector's pauses: the longest (`pause_max_us`), and
//! for the precise backend also the 99th percentile and the count of
//! mutator stops (`pause_p99_us`, `pause_count`). bdwgc's pause is a whole
//! stopped collection; the precise collector's are its handshakes. The
//! precise backend also reports the time its allocations waited for a
//! collection to keep the heap near its goal (`alloc_wait_ms`), and the
//! mark assists that marked instead (`assists`, `assist_objects`), in all
//! since the process started (see `src/precise/heap/pacer.rs`).

use super::report::Json;
use super::stats::median;
use defergc::gc;
use std::hint::black_box;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

const STRETCH_TREE_DEPTH: u32 = 18;
const LONG_LIVED_TREE_DEPTH: u32 = 16;
const ARRAY_SIZE: usize = 500_000;
const MIN_TREE_DEPTH: u32 = 4;
const MAX_TREE_DEPTH: u32 = 16;

/// The collector the workload runs on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Backend {
    /// The Boehm collector (vendored bdwgc), through `defergc::gc`.
    Bdwgc,
    /// The precise handle-based collector, through `defergc::precise`
    /// (needs the `precise` feature).
    Precise,
    /// Both, taking turns run by run in one process, and their ratio
    /// (needs the `precise` feature).
    Both,
}

impl Backend {
    fn name(self) -> &'static str {
        match self {
            Backend::Bdwgc => "bdwgc",
            Backend::Precise => "precise",
            Backend::Both => "both",
        }
    }
}

#[derive(clap::Args)]
pub struct Args {
    /// Collector to run the workload on.
    #[arg(long, value_enum, default_value_t = Backend::Bdwgc)]
    backend: Backend,
    /// Timed runs, one after another in this process, 1 to 1000.
    #[arg(long, default_value_t = 5, allow_negative_numbers = true,
          value_parser = super::limits::count32(1, 1000))]
    runs: u32,
    /// Print only the JSON line.
    #[arg(long)]
    json: bool,
    /// precise backend: collect when the heap has grown by this percentage
    /// of what the last collection found live (Go's GOGC; default 100, or
    /// GOGC from the environment). With `--go`, Go's program runs with it
    /// too. 1 to 1000000.
    #[arg(long, allow_negative_numbers = true, value_parser = super::limits::count32(1, 1_000_000))]
    gc_percent: Option<u32>,
    /// precise backend: a soft memory limit in MiB (Go's GOMEMLIMIT): the
    /// heap's goal stays under it whatever `--gc-percent` allows, and an
    /// allocation that would grow the heap past it waits for cycles to free
    /// memory first. With `--go`, Go's program runs with it too. 1 to
    /// 16777216.
    #[arg(long, allow_negative_numbers = true, value_parser = super::limits::count(1, 1 << 24))]
    memory_limit_mb: Option<u64>,
    /// The program to run.
    #[arg(long, value_enum, default_value_t = Workload::Gcbench)]
    workload: Workload,
    /// live-heap workload: megabytes of live data (approximately), 1 to
    /// 65536 and what the machine's memory holds (about three times as
    /// much at the peak).
    #[arg(long, default_value_t = 100, allow_negative_numbers = true,
          value_parser = super::limits::count(1, 65536))]
    live_mb: u64,
    /// binary-trees workload: depth of the long-lived tree, 4 to 26.
    #[arg(long, default_value_t = 21, allow_negative_numbers = true,
          value_parser = super::limits::count32(4, 26))]
    depth: u32,
    /// Then run the same workload in Go (`benches/go/gcbench`, with `go
    /// run` from the repository root) for as many runs, and print its line
    /// and the ratio of the medians to Go's.
    #[arg(long)]
    go: bool,
}

/// The program `gcbench` runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Workload {
    /// GCBench (Ellis, Kovac, Boehm).
    Gcbench,
    /// A large live heap whose parts are replaced one at a time.
    LiveHeap,
    /// binary-trees (the Benchmarks Game).
    BinaryTrees,
    /// GCBench on 2 mutator threads at once.
    #[value(name = "gcbench-mt2")]
    GcbenchMt2,
    /// GCBench on 4 mutator threads at once.
    #[value(name = "gcbench-mt4")]
    GcbenchMt4,
}

pub fn run(args: &Args) -> i32 {
    if args.backend == Backend::Bdwgc {
        for (set, flag) in [
            (args.gc_percent.is_some(), "--gc-percent"),
            (args.memory_limit_mb.is_some(), "--memory-limit-mb"),
        ] {
            if set {
                eprintln!("defergc: gcbench: {flag} applies to the precise backend only");
                return 2;
            }
        }
    }
    if args.workload == Workload::LiveHeap {
        let need = (args.live_mb << 20).saturating_mul(3);
        if let Err(e) =
            super::limits::check_memory(&format!("gcbench --live-mb {}", args.live_mb), need)
        {
            eprintln!("{e}");
            return 2;
        }
    }
    if args.backend != Backend::Precise && gc::BACKEND != "bdwgc" {
        eprintln!(
            "defergc: gcbench: the bdwgc backend is not built into this binary \
             (it was built with the `nogc` feature, backend \"{}\"); \
             rebuild without `--features nogc`",
            gc::BACKEND
        );
        return 2;
    }
    let status = run_backends(args);
    if status != 0 || !args.go {
        return status;
    }
    run_go(args)
}

/// `--go`: the same workload in Go, its JSON line, and the ratio of the
/// medians (ours / Go's) printed by the human report.
fn run_go(args: &Args) -> i32 {
    let mut go_args = vec![
        "-workload".to_string(),
        bench_name(args).to_string(),
        "-runs".to_string(),
        args.runs.to_string(),
        "-json".to_string(),
    ];
    match args.workload {
        Workload::BinaryTrees => go_args.extend(["-depth".to_string(), args.depth.to_string()]),
        Workload::LiveHeap => go_args.extend(["-live-mb".to_string(), args.live_mb.to_string()]),
        _ => {}
    }
    // Go's collector runs with the settings the precise heap had.
    if let Some(percent) = args.gc_percent {
        go_args.extend(["-gc-percent".to_string(), percent.to_string()]);
    }
    if let Some(mb) = args.memory_limit_mb {
        go_args.extend(["-memory-limit-mb".to_string(), mb.to_string()]);
    }
    let go = || {
        super::report::print_go_program(
            "gcbench",
            "benches/go/gcbench/main.go",
            &go_args,
            args.json,
        )
    };
    // This thread waits for Go in native code: a precise cycle still under
    // way (or started by the pacer) does not wait for it.
    #[cfg(feature = "precise")]
    if defergc::precise::is_thread_registered() {
        return defergc::precise::native(go).unwrap_or(2);
    }
    go()
}

/// The workload on the backends `--backend` names.
fn run_backends(args: &Args) -> i32 {
    match args.backend {
        Backend::Bdwgc => bench(args, &mut Bdwgc::new()),
        #[cfg(feature = "precise")]
        Backend::Precise => bench(
            args,
            &mut precise_heap::Precise::new(args.gc_percent, args.memory_limit_mb),
        ),
        #[cfg(feature = "precise")]
        Backend::Both => compare(
            args,
            &mut Bdwgc::new(),
            &mut precise_heap::Precise::new(args.gc_percent, args.memory_limit_mb),
        ),
        #[cfg(not(feature = "precise"))]
        Backend::Precise | Backend::Both => {
            eprintln!(
                "defergc: gcbench: the precise backend is not built into this binary; \
                 rebuild with `--features precise`"
            );
            2
        }
    }
}

/// Counters a backend reports after a run.
#[derive(Clone, Copy)]
struct Counters {
    /// Collections since the process started.
    collections: u64,
    /// The largest the heap has been so far, in bytes.
    peak_heap_bytes: usize,
    /// The longest pause so far.
    pause_max: Duration,
    /// The 99th percentile of pauses and their count, where known.
    pause_p99: Option<Duration>,
    pause_count: Option<u64>,
    /// Time allocations waited for a collection so the heap stays near its
    /// goal (the precise pacer's allowance), where known.
    alloc_wait: Option<Duration>,
    /// Mark assists and the objects they marked, where known.
    assists: Option<(u64, u64)>,
}

/// What the workload needs from a collector.
///
/// References are `Copy` values that the workload keeps in local variables
/// and passes down the recursion; a collector that does not scan the native
/// stack conservatively must make them roots itself (for example by making
/// `Node` a rooted handle).
trait Heap {
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
struct Node {
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
struct GcArray {
    ptr: NonNull<f64>,
    len: usize,
}

/// The bdwgc backend: nodes from `gc::alloc`, the array from
/// `gc::alloc_atomic`. The calling thread stays registered while it lives.
struct Bdwgc {
    _registered: gc::ThreadGuard,
}

impl Bdwgc {
    fn new() -> Bdwgc {
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

/// The precise backend: nodes are handles to 24-byte objects whose first
/// two words are handle fields, the array a pointer-free object. The
/// workload's scopes are shadow-stack frames.
#[cfg(feature = "precise")]
mod precise_heap {
    use super::{Counters, Heap};
    use defergc::precise::{self, Field, FrameId, Handle, TypeId};

    #[derive(Clone, Copy)]
    pub struct Precise {
        node: TypeId,
        left: Field,
        right: Field,
        array: TypeId,
    }

    /// The workload has no error path: a failure of the collector ends the
    /// benchmark with its message.
    #[cold]
    fn fail(what: &str, e: precise::Error) -> ! {
        panic!("defergc gcbench: precise {what} failed: {e}")
    }

    impl Precise {
        pub fn new(gc_percent: Option<u32>, memory_limit_mb: Option<u64>) -> Precise {
            // Start the collector and register this thread before timing.
            precise::init().unwrap_or_else(|e| fail("init", e));
            if let Some(percent) = gc_percent {
                precise::set_gc_percent(Some(percent));
            }
            if let Some(mb) = memory_limit_mb {
                let bytes = usize::try_from(mb << 20).expect("--memory-limit-mb is at most 2^24");
                precise::set_memory_limit(Some(bytes));
            }
            let node =
                precise::register_type(24, &[0, 8]).unwrap_or_else(|e| fail("register_type", e));
            let field = |offset| Field::new(node, offset).unwrap_or_else(|e| fail("field", e));
            Precise {
                node,
                left: field(0),
                right: field(8),
                array: precise::register_bytes_type().unwrap_or_else(|e| fail("register_type", e)),
            }
        }
    }

    impl Heap for Precise {
        type Node = Handle;
        type Array = Handle;

        #[inline(always)]
        fn node(&mut self) -> Handle {
            precise::alloc(self.node).unwrap_or_else(|e| fail("alloc", e))
        }

        #[inline(always)]
        fn node_with(&mut self, left: Handle, right: Handle) -> Handle {
            precise::alloc_with(self.node, &[Some(left), Some(right)])
                .unwrap_or_else(|e| fail("alloc_with", e))
        }

        #[inline(always)]
        fn set_left(&mut self, node: Handle, child: Handle) {
            precise::store_field(node, self.left, child).unwrap_or_else(|e| fail("store", e))
        }

        #[inline(always)]
        fn set_right(&mut self, node: Handle, child: Handle) {
            precise::store_field(node, self.right, child).unwrap_or_else(|e| fail("store", e))
        }

        #[inline(always)]
        fn children_raw(&self, node: Handle) -> (Option<Handle>, Option<Handle>) {
            // Both fields with one lookup of the node, as compiled code
            // reads `n.left` and `n.right` with no safepoint between.
            let [left, right] = precise::load_fields(node, [self.left, self.right])
                .unwrap_or_else(|e| fail("load", e));
            (left, right)
        }

        fn array(&mut self, len: usize) -> Handle {
            let bytes = len.checked_mul(8).expect("array size overflows usize");
            precise::alloc_array(self.array, bytes).unwrap_or_else(|e| fail("alloc_array", e))
        }

        #[inline(always)]
        fn array_set(&mut self, array: Handle, i: usize, value: f64) {
            precise::write_u64(array, i * 8, value.to_bits())
                .unwrap_or_else(|e| fail("write_u64", e))
        }

        fn array_get(&self, array: Handle, i: usize) -> f64 {
            f64::from_bits(precise::read_u64(array, i * 8).unwrap_or_else(|e| fail("read_u64", e)))
        }

        fn counters(&self) -> Counters {
            let stats = precise::stats();
            Counters {
                collections: stats.collections,
                peak_heap_bytes: stats.peak_heap_size,
                pause_max: stats.pause_max,
                pause_p99: Some(stats.pause_p99),
                pause_count: Some(stats.pause_count),
                alloc_wait: Some(stats.alloc_wait_total),
                assists: Some((stats.assists, stats.assist_objects)),
            }
        }

        fn reset_pauses(&mut self) {
            precise::reset_pause_stats();
        }

        fn spawner(&self) -> impl Fn() -> Precise + Send + Sync {
            // Types are process-wide; the new thread registers itself on
            // its first allocation.
            let types = *self;
            move || types
        }

        fn settle(&mut self) {
            precise::gc_wait();
        }

        fn blocking<R>(f: impl FnOnce() -> R) -> R {
            precise::native(f).unwrap_or_else(|e| fail("native", e))
        }

        #[inline(always)]
        fn enter(&mut self) -> usize {
            precise::push_frame()
                .unwrap_or_else(|e| fail("push_frame", e))
                .depth()
        }

        #[inline(always)]
        fn keep(&mut self, node: Handle) {
            precise::root(node).unwrap_or_else(|e| fail("root", e));
        }

        #[inline(always)]
        fn keep_array(&mut self, array: Handle) {
            self.keep(array);
        }

        #[inline(always)]
        fn leave(&mut self, scope: usize) {
            precise::pop_frame(FrameId::from_depth(scope)).unwrap_or_else(|e| fail("pop_frame", e))
        }

        #[inline(always)]
        fn poll(&self) {
            precise::safepoint().unwrap_or_else(|e| fail("safepoint", e));
        }
    }
}

/// Nodes in a complete tree of `depth`.
fn tree_size(depth: u32) -> u64 {
    (1 << (depth + 1)) - 1
}

/// Trees of `depth` to build so that each depth allocates as much as
/// two stretch trees.
fn num_iters(depth: u32) -> u64 {
    2 * tree_size(STRETCH_TREE_DEPTH) / tree_size(depth)
}

/// Builds a tree top down, storing each new node into an older one. `node`
/// is kept by the caller; every new node is linked into it before the next
/// allocation, so it needs no scope of its own.
fn populate<H: Heap>(heap: &mut H, depth: u32, node: H::Node) {
    if depth == 0 {
        return;
    }
    let left = heap.node();
    heap.set_left(node, left);
    let right = heap.node();
    heap.set_right(node, right);
    populate(heap, depth - 1, left);
    populate(heap, depth - 1, right);
}

/// Builds a tree bottom up: children first, then the node that holds them.
fn make_tree<H: Heap>(heap: &mut H, depth: u32) -> H::Node {
    if depth == 0 {
        return heap.node();
    }
    let scope = heap.enter();
    let left = make_tree(heap, depth - 1);
    heap.keep(left);
    let right = make_tree(heap, depth - 1);
    heap.keep(right);
    // Leaving a scope is no safepoint: the caller keeps the node before
    // its next allocation, as it would a pointer returned in a register.
    let node = heap.node_with(left, right);
    heap.leave(scope);
    node
}

fn time_construction<H: Heap>(heap: &mut H, depth: u32) {
    let iters = num_iters(depth);
    for _ in 0..iters {
        let scope = heap.enter();
        let tree = heap.node();
        heap.keep(tree);
        populate(heap, depth, tree);
        heap.leave(scope);
    }
    for _ in 0..iters {
        make_tree(heap, depth);
    }
}

/// Nodes reachable from `node`.
fn count_nodes<H: Heap>(heap: &H, node: H::Node) -> u64 {
    heap.poll();
    match heap.children(node) {
        None => 1,
        Some((left, right)) => 1 + count_nodes(heap, left) + count_nodes(heap, right),
    }
}

/// Nodes reachable from `tree`, which nothing else keeps: counting polls,
/// so it is kept meanwhile.
fn count_kept<H: Heap>(heap: &mut H, tree: H::Node) -> u64 {
    let scope = heap.enter();
    heap.keep(tree);
    let nodes = count_nodes(heap, tree);
    heap.leave(scope);
    nodes
}

/// One run's figures.
struct Run {
    elapsed: Duration,
    /// Processor time of the whole process (every thread: the mutators and
    /// the collector's own) during the run and its settling.
    cpu: Duration,
    collections: u64,
    peak_heap_bytes: usize,
}

/// The GCBench program; fails when the live data did not survive.
fn gcbench_body<H: Heap>(heap: &mut H) -> Result<(), String> {
    // Stretch the heap with a tree that dies at once. Dead trees are not
    // passed to black_box: it would spill them to a stack slot, where the
    // conservative collector would find and keep them.
    make_tree(heap, STRETCH_TREE_DEPTH);

    // Live for the whole run: a tree and a half-filled array.
    let scope = heap.enter();
    let long_lived = heap.node();
    heap.keep(long_lived);
    populate(heap, LONG_LIVED_TREE_DEPTH, long_lived);
    let array = heap.array(ARRAY_SIZE);
    heap.keep_array(array);
    for i in 0..ARRAY_SIZE / 2 {
        heap.array_set(array, i, 1.0 / i as f64);
        heap.poll();
    }

    for depth in (MIN_TREE_DEPTH..=MAX_TREE_DEPTH).step_by(2) {
        time_construction(heap, depth);
    }

    let nodes = count_nodes(heap, black_box(long_lived));
    let probe = heap.array_get(black_box(array), 1000);
    heap.leave(scope);
    if nodes != tree_size(LONG_LIVED_TREE_DEPTH) {
        return Err(format!(
            "the long-lived tree has {nodes} nodes, expected {}",
            tree_size(LONG_LIVED_TREE_DEPTH)
        ));
    }
    if probe != 1.0 / 1000.0 {
        return Err(format!("the long-lived array holds {probe} at 1000"));
    }
    Ok(())
}

/// Times `body` on `heap` as one run.
fn timed<H: Heap>(
    heap: &mut H,
    body: impl FnOnce(&mut H) -> Result<(), String>,
) -> Result<Run, String> {
    let before = heap.counters();
    let cpu = process_cpu();
    let start = Instant::now();
    body(heap)?;
    let elapsed = start.elapsed();
    let after = heap.counters();
    Ok(Run {
        elapsed,
        cpu: process_cpu().saturating_sub(cpu),
        collections: after.collections - before.collections,
        peak_heap_bytes: after.peak_heap_bytes,
    })
}

/// GCBench on `threads` mutators at once, each on its own heap handle
/// from `heap.spawner()`; this thread waits for them.
fn gcbench_mt_body<H: Heap>(heap: &mut H, threads: usize) -> Result<(), String> {
    let spawn = heap.spawner();
    let spawn = &spawn;
    let results: Vec<Result<(), String>> = H::blocking(|| {
        std::thread::scope(|s| {
            let workers: Vec<_> = (0..threads)
                .map(|_| s.spawn(move || gcbench_body(&mut spawn())))
                .collect();
            workers
                .into_iter()
                .map(|w| {
                    w.join()
                        .unwrap_or_else(|_| Err("a mutator panicked".into()))
                })
                .collect()
        })
    });
    results.into_iter().collect()
}

/// binary-trees: a stretch tree of `max_depth + 1`, a long-lived tree of
/// `max_depth`, then `2^(max_depth - d + 4)` trees of each depth `d` in
/// `4..=max_depth` step 2, each built bottom-up and its nodes counted.
fn binary_trees_body<H: Heap>(heap: &mut H, max_depth: u32) -> Result<(), String> {
    let check = |what: &str, got: u64, want: u64| {
        if got == want {
            Ok(())
        } else {
            Err(format!("{what} has {got} nodes, expected {want}"))
        }
    };
    let stretch = make_tree(heap, max_depth + 1);
    check(
        "the stretch tree",
        count_kept(heap, stretch),
        tree_size(max_depth + 1),
    )?;
    let scope = heap.enter();
    let long_lived = make_tree(heap, max_depth);
    heap.keep(long_lived);
    for depth in (MIN_TREE_DEPTH..=max_depth).step_by(2) {
        let iterations = 1u64 << (max_depth - depth + MIN_TREE_DEPTH);
        let mut nodes = 0;
        for _ in 0..iterations {
            let tree = make_tree(heap, depth);
            nodes += count_kept(heap, tree);
        }
        check(
            &format!("{iterations} trees of depth {depth}"),
            nodes,
            iterations * tree_size(depth),
        )?;
    }
    let nodes = count_nodes(heap, black_box(long_lived));
    heap.leave(scope);
    check("the long-lived tree", nodes, tree_size(max_depth))
}

/// Live-heap workload: `live_mb` megabytes of trees hung off a spine, each
/// tree replaced in turn by a new one (the old one becomes garbage) until
/// the whole live heap has been replaced `rounds` times; fails when a tree
/// lost nodes.
fn live_heap_once<H: Heap>(heap: &mut H, live_mb: usize, rounds: usize) -> Result<Run, String> {
    const DEPTH: u32 = 14;
    // 32 bytes a node on either collector: bdwgc's 24 and its extra byte
    // round up to 32, the precise heap's 8-byte header makes 32.
    let trees = ((live_mb << 20) / (32 * tree_size(DEPTH) as usize)).max(1);
    let before = heap.counters();
    let cpu = process_cpu();
    let start = Instant::now();
    let scope = heap.enter();
    // The spine: a list whose nodes hold a tree on the left, the next
    // spine node on the right.
    let spine = heap.node();
    heap.keep(spine);
    let mut last = spine;
    for _ in 1..trees {
        let next = heap.node();
        heap.set_right(last, next);
        last = next;
    }
    let spine_node = |heap: &H, mut i: usize| {
        let mut n = spine;
        while i > 0 {
            n = heap.children_raw(n).1.expect("spine cut short");
            i -= 1;
            heap.poll();
        }
        n
    };
    for t in 0..trees * (rounds + 1) {
        let tree = make_tree(heap, DEPTH);
        // No allocation between making the tree and linking it in.
        let at = spine_node(heap, t % trees);
        heap.set_left(at, tree);
    }
    let elapsed = start.elapsed();
    let cpu = process_cpu().saturating_sub(cpu);
    let after = heap.counters();
    for i in 0..trees {
        let tree = heap.children_raw(spine_node(heap, i)).0;
        let nodes = tree.map_or(0, |t| count_nodes(heap, t));
        if nodes != tree_size(DEPTH) {
            return Err(format!("tree {i} has {nodes} nodes"));
        }
    }
    heap.leave(scope);
    Ok(Run {
        elapsed,
        cpu,
        collections: after.collections - before.collections,
        peak_heap_bytes: after.peak_heap_bytes,
    })
}

/// Prints what is about to run (human output only).
fn announce(args: &Args, backend: &str) {
    if args.json {
        return;
    }
    match args.workload {
        Workload::LiveHeap => println!(
            "live heap of {} MB on {backend}: trees of depth 14 replaced one at a time",
            args.live_mb
        ),
        Workload::Gcbench | Workload::GcbenchMt2 | Workload::GcbenchMt4 => println!(
            "GCBench (Ellis, Kovac, Boehm) on {backend}, {} mutator(s): stretch tree \
             depth {STRETCH_TREE_DEPTH}, long-lived tree depth {LONG_LIVED_TREE_DEPTH}, \
             array of {ARRAY_SIZE} doubles, trees of depth \
             {MIN_TREE_DEPTH}..={MAX_TREE_DEPTH}",
            mutators(args.workload)
        ),
        Workload::BinaryTrees => println!(
            "binary-trees on {backend}: depth {}, trees of depth {MIN_TREE_DEPTH}..={} \
             built bottom-up and counted",
            args.depth, args.depth
        ),
    }
}

/// Runs the workload once on `heap` (run `n`), printing a line unless
/// `--json`; the message says why the run failed.
fn one_run<H: Heap>(args: &Args, heap: &mut H, backend: &str, n: u32) -> Result<Run, String> {
    let run = match args.workload {
        Workload::Gcbench => timed(heap, gcbench_body),
        Workload::GcbenchMt2 | Workload::GcbenchMt4 => {
            timed(heap, |h| gcbench_mt_body(h, mutators(args.workload)))
        }
        Workload::BinaryTrees => timed(heap, |h| binary_trees_body(h, args.depth)),
        Workload::LiveHeap => live_heap_once(heap, args.live_mb as usize, 3),
    }
    .map_err(|why| format!("{backend} run {n} failed: {why}"))?;
    let cpu = process_cpu();
    heap.settle();
    let run = Run {
        cpu: run.cpu + process_cpu().saturating_sub(cpu),
        ..run
    };
    if !args.json {
        println!(
            "{backend} run {n}/{}: {:9.1} ms (processor {:.1} ms), {:3} collections, heap {:.1} MiB",
            args.runs,
            ms(run.elapsed),
            ms(run.cpu),
            run.collections,
            mib(run.peak_heap_bytes)
        );
    }
    Ok(run)
}

/// One backend's runs, summarised.
struct Summary {
    median_ms: f64,
    min_ms: f64,
    max_ms: f64,
    cpu_ms: f64,
    collections: f64,
    peak_heap_bytes: usize,
    counters: Counters,
}

impl Summary {
    fn new(runs: &[Run], counters: Counters) -> Summary {
        let mut times: Vec<f64> = runs.iter().map(|r| ms(r.elapsed)).collect();
        let mut collections: Vec<f64> = runs.iter().map(|r| r.collections as f64).collect();
        let median_ms = median(&mut times);
        let mut cpu: Vec<f64> = runs.iter().map(|r| ms(r.cpu)).collect();
        Summary {
            median_ms,
            min_ms: times[0],
            max_ms: times[times.len() - 1],
            cpu_ms: median(&mut cpu),
            collections: median(&mut collections),
            peak_heap_bytes: runs.iter().map(|r| r.peak_heap_bytes).max().unwrap_or(0),
            counters,
        }
    }

    fn print(&self, backend: &str) {
        println!(
            "{backend}: median {:.1} ms (min {:.1}, max {:.1}), processor {:.1} ms, \
             {} collections per run, peak heap {:.1} MiB",
            self.median_ms,
            self.min_ms,
            self.max_ms,
            self.cpu_ms,
            self.collections,
            mib(self.peak_heap_bytes)
        );
        print!(
            "{backend} pauses: max {:.1} us",
            us(self.counters.pause_max)
        );
        if let (Some(p99), Some(n)) = (self.counters.pause_p99, self.counters.pause_count) {
            print!(", p99 {:.1} us, {n} pauses", us(p99));
        }
        if let Some(wait) = self.counters.alloc_wait {
            print!("; allocations waited {:.1} ms in all", ms(wait));
        }
        if let Some((n, objects)) = self.counters.assists {
            print!(", {n} mark assists marked {objects} objects");
        }
        println!();
    }

    /// Adds this summary's fields to `json`, each key prefixed with
    /// `prefix`.
    fn json(&self, json: Json, prefix: &str) -> Json {
        let key = |k: &str| format!("{prefix}{k}");
        let mut json = json
            .num(&key("median_ms"), self.median_ms)
            .num(&key("min_ms"), self.min_ms)
            .num(&key("max_ms"), self.max_ms)
            .num(&key("cpu_ms"), self.cpu_ms)
            .num(&key("collections"), self.collections)
            .num(&key("peak_heap_bytes"), self.peak_heap_bytes as f64)
            .num(&key("pause_max_us"), us(self.counters.pause_max));
        if let (Some(p99), Some(n)) = (self.counters.pause_p99, self.counters.pause_count) {
            json = json
                .num(&key("pause_p99_us"), us(p99))
                .num(&key("pause_count"), n as f64);
        }
        if let Some(wait) = self.counters.alloc_wait {
            json = json.num(&key("alloc_wait_ms"), ms(wait));
        }
        if let Some((n, objects)) = self.counters.assists {
            json = json
                .num(&key("assists"), n as f64)
                .num(&key("assist_objects"), objects as f64);
        }
        json
    }
}

/// The JSON `bench` name: the same as the Go versions' in `benches/go/`.
fn bench_name(args: &Args) -> &'static str {
    match args.workload {
        Workload::Gcbench => "gcbench",
        Workload::GcbenchMt2 => "gcbench-mt2",
        Workload::GcbenchMt4 => "gcbench-mt4",
        Workload::BinaryTrees => "binary-trees",
        Workload::LiveHeap => "live-heap",
    }
}

/// Mutator threads of a workload.
fn mutators(workload: Workload) -> usize {
    match workload {
        Workload::GcbenchMt2 => 2,
        Workload::GcbenchMt4 => 4,
        _ => 1,
    }
}

fn bench<H: Heap>(args: &Args, heap: &mut H) -> i32 {
    let backend = args.backend.name();
    announce(args, backend);
    heap.reset_pauses();
    let mut runs = Vec::new();
    for n in 1..=args.runs {
        match one_run(args, heap, backend, n) {
            Ok(run) => runs.push(run),
            Err(why) => {
                eprintln!("defergc: gcbench: {why}");
                return 1;
            }
        }
    }
    let summary = Summary::new(&runs, heap.counters());
    if !args.json {
        summary.print(backend);
    }
    let json = json_head(args, backend);
    println!("{}", summary.json(json, ""));
    0
}

/// `--backend both`: the two collectors take turns, one run each, in this
/// process, so that both see the same machine conditions; reports both and
/// the ratio of the medians (precise / bdwgc).
#[cfg(feature = "precise")]
fn compare(args: &Args, bdwgc: &mut Bdwgc, precise: &mut precise_heap::Precise) -> i32 {
    announce(args, "bdwgc and precise, alternating");
    bdwgc.reset_pauses();
    precise.reset_pauses();
    let (mut b_runs, mut p_runs) = (Vec::new(), Vec::new());
    for n in 1..=args.runs {
        // The precise turn's last cycle ended before the bdwgc turn starts
        // (`one_run` settles it): it would take a core from bdwgc's timed
        // run. The bdwgc turn runs in the precise collector's native code
        // all the same, so that no precise cycle could ever wait for this
        // thread (a binary-trees turn lasts seconds).
        let pair = <precise_heap::Precise as Heap>::blocking(|| one_run(args, bdwgc, "bdwgc", n))
            .and_then(|b| Ok((b, one_run(args, precise, "precise", n)?)));
        match pair {
            Ok((b, p)) => {
                b_runs.push(b);
                p_runs.push(p);
            }
            Err(why) => {
                eprintln!("defergc: gcbench: {why}");
                return 1;
            }
        }
    }
    let b = Summary::new(&b_runs, bdwgc.counters());
    let p = Summary::new(&p_runs, precise.counters());
    let ratio = p.median_ms / b.median_ms;
    let cpu_ratio = p.cpu_ms / b.cpu_ms;
    if !args.json {
        b.print("bdwgc");
        p.print("precise");
        println!("precise / bdwgc (medians): {ratio:.3}, processor time {cpu_ratio:.3}");
    }
    let json = json_head(args, "both");
    let json = p
        .json(b.json(json, "bdwgc_"), "precise_")
        .num("ratio", ratio)
        .num("cpu_ratio", cpu_ratio);
    println!("{json}");
    0
}

/// The JSON line's first fields: the workload, the backend, the runs, and
/// the precise heap's settings the command gave.
fn json_head(args: &Args, backend: &str) -> Json {
    let mut json = Json::new()
        .str("bench", bench_name(args))
        .str("backend", backend)
        .num("runs", f64::from(args.runs));
    if let Some(percent) = args.gc_percent {
        json = json.num("gc_percent", f64::from(percent));
    }
    if let Some(mb) = args.memory_limit_mb {
        json = json.num("memory_limit_mb", mb as f64);
    }
    json
}

/// The processor time this process has used so far, in user and kernel
/// mode, over all its threads.
fn process_cpu() -> Duration {
    // SAFETY: getrusage writes the struct it is given, which is ours and
    // zeroed (a valid rusage); RUSAGE_SELF cannot fail.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let time =
        |t: libc::timeval| Duration::new(t.tv_sec as u64, (t.tv_usec as u32).saturating_mul(1000));
    time(usage.ru_utime) + time(usage.ru_stime)
}

fn us(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}
