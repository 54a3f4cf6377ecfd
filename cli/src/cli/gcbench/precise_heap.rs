//! The precise backend: nodes are handles to 24-byte objects whose first
//! two words are handle fields, the array a pointer-free object. The
//! workload's scopes are shadow-stack frames.

use super::heap::{Counters, Heap};
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
        let node = precise::register_type(24, &[0, 8]).unwrap_or_else(|e| fail("register_type", e));
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
        let [left, right] =
            precise::load_fields(node, [self.left, self.right]).unwrap_or_else(|e| fail("load", e));
        (left, right)
    }

    fn array(&mut self, len: usize) -> Handle {
        let bytes = len.checked_mul(8).expect("array size overflows usize");
        precise::alloc_array(self.array, bytes).unwrap_or_else(|e| fail("alloc_array", e))
    }

    #[inline(always)]
    fn array_set(&mut self, array: Handle, i: usize, value: f64) {
        precise::write_u64(array, i * 8, value.to_bits()).unwrap_or_else(|e| fail("write_u64", e))
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
