//! The precise collector and root memory: root memory by owner. The
//! collector scans each execution context's root memory when that context
//! reaches its handshake (or on its behalf while it is parked in native
//! code), so it needs one owner's blocks and stacks at a time
//! ([`for_each_word`]); its words are read as candidate handles
//! (design.md invariant 3).
//!
//! Every context that allocates root memory owns a [`Record`]: a lock and
//! the lists of its blocks (linked through a [`Node`] in each block's
//! header) and stacks. Allocating and freeing take only the owner's own
//! lock, uncontended but for a scan of that owner or a free from another
//! context (a channel's buffer, say): no lock or table is shared by all.
//! A block names its record, so a free on any thread finds it in O(1).
//!
//! Records are never freed: a context's record goes back to a pool when
//! the context ends and serves a later one. So a free that read a block's
//! record may always lock it, and then checks that the block is still
//! that record's (it may have been orphaned meanwhile).
//!
//! Blocks still allocated when their context ends become *orphans* (of
//! [`orphans`]), scanned with every context's; stacks never outlive their
//! context (the defer layer drops its stack before, or releases it). A
//! block or stack *released* to a pool (an ended goroutine's defer state,
//! kept for the next goroutine) holds no reference and is on no list
//! until the context that takes it adopts it.
//!
//! Locks: an owner's record, then the orphans' record; nothing is called
//! while one is held but the scan's visitor. No lock here is taken by
//! bdwgc's world-stopped callback.

use super::{Collector, StackHead};
use std::ptr::{self, NonNull};
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// The precise collector, as a collector of root memory.
pub(crate) struct Precise;

/// One owner's root memory (see the module docs).
pub(crate) struct Record {
    list: Mutex<List>,
}

/// The owner of some root memory: a context's record, or [`orphans`].
pub(crate) type Owner = &'static Record;

struct List {
    /// The newest block's node, or null.
    blocks: *mut Node,
    stacks: Vec<NonNull<StackHead>>,
}

// SAFETY: the list's pointers are only followed under the record's lock.
unsafe impl Send for List {}

impl Record {
    const fn new() -> Record {
        Record {
            list: Mutex::new(List {
                blocks: ptr::null_mut(),
                stacks: Vec::new(),
            }),
        }
    }

    fn lock(&self) -> MutexGuard<'_, List> {
        self.list.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A block's place on its owner's list, in the block's header.
pub(crate) struct Node {
    /// The record whose list holds the node (null while the block is
    /// released to a pool); changed only under that record's lock (and the
    /// orphans' lock, when it is orphaned).
    owner: AtomicPtr<Record>,
    /// Links, changed under the owner's lock.
    next: *mut Node,
    prev: *mut Node,
    data: *mut u8,
    len: usize,
}

/// What a stack's head keeps: its owner.
#[derive(Default)]
pub(crate) struct StackOwner(Option<Owner>);

/// Every record made (for a fork), and those free for a new owner.
struct Records {
    all: Vec<Owner>,
    free: Vec<Owner>,
}

static RECORDS: Mutex<Records> = Mutex::new(Records {
    all: Vec::new(),
    free: Vec::new(),
});

fn records() -> MutexGuard<'static, Records> {
    RECORDS.lock().unwrap_or_else(|e| e.into_inner())
}

static ORPHANS: Record = Record::new();

/// The owner of the blocks whose contexts have ended.
pub(crate) fn orphans() -> Owner {
    &ORPHANS
}

/// An owner of nothing, for a mutator that allocates no root memory.
#[cfg_attr(not(loom), allow(dead_code))]
pub(crate) fn detached() -> Owner {
    static NOBODY: Record = Record::new();
    &NOBODY
}

/// Root memory's slot in every execution context (rank 1: its depth in
/// design.md's list of layers, so destroyed after every layer above freed
/// what it owned): the context's record, once it owns root memory.
static OWNER: crate::context::Key = crate::context::Key::new(1, orphan_at_end);

/// The owner that is the calling thread's current execution context
/// (never [`orphans`]): what it leaves is orphaned when it is destroyed.
pub(crate) fn owner() -> Owner {
    let ctx = crate::context::current();
    let record = ctx.get(&OWNER).cast_const().cast::<Record>();
    if !record.is_null() {
        // SAFETY: the slot holds a record, and records live for ever.
        return unsafe { &*record };
    }
    let record = {
        let mut r = records();
        r.free.pop().unwrap_or_else(|| {
            let new: Owner = Box::leak(Box::new(Record::new()));
            r.all.push(new);
            new
        })
    };
    ctx.set(&OWNER, ptr::from_ref(record).cast_mut().cast());
    record
}

/// An owner's context was destroyed: what it still owns becomes orphans
/// (if the precise collector had registered it, its unregistration did
/// that already, see [`orphan`]), and its record serves a later context.
///
/// # Safety
/// Called by the context's destruction with the slot value [`owner`] set.
unsafe fn orphan_at_end(_ctx: &crate::context::Context, record: *mut u8) {
    // SAFETY: the slot holds a record, and records live for ever.
    let record: Owner = unsafe { &*record.cast_const().cast::<Record>() };
    orphan(record);
    records().free.push(record);
}

/// The end of `owner` (its context is destroyed; the precise collector
/// calls this as it unregisters it, so that no moment exists in which the
/// memory is nobody's to scan): whatever it still owns becomes an orphan,
/// scanned with everyone's.
pub(crate) fn orphan(owner: Owner) {
    let stacks = orphan_blocks(owner);
    debug_assert_eq!(stacks, 0, "a root stack outlived its owner");
}

/// Makes `owner`'s blocks orphans and forgets its stacks; returns how many
/// stacks it had.
fn orphan_blocks(owner: Owner) -> usize {
    if ptr::eq(owner, &ORPHANS) {
        return 0;
    }
    let mut list = owner.lock();
    let stacks = std::mem::take(&mut list.stacks).len();
    let first = std::mem::replace(&mut list.blocks, ptr::null_mut());
    if first.is_null() {
        return stacks;
    }
    let mut orphans = ORPHANS.lock();
    let orphans_record = ptr::from_ref(&ORPHANS).cast_mut();
    // SAFETY: the nodes are on owner's list, whose lock we hold, and move
    // to the orphans' list under its lock too.
    unsafe {
        let mut last = first;
        loop {
            (*last).owner.store(orphans_record, Ordering::Release);
            if (*last).next.is_null() {
                break;
            }
            last = (*last).next;
        }
        (*last).next = orphans.blocks;
        if !orphans.blocks.is_null() {
            (*orphans.blocks).prev = last;
        }
        orphans.blocks = first;
    }
    stacks
}

// ---- what moves between owners ---------------------------------------------

/// Whether the precise collector is marking and wants to hear of every
/// copy of references between owners (`words_moved`): set with its
/// barrier, cleared with it.
static LOG_MOVES: AtomicBool = AtomicBool::new(false);
/// What the collector does with such a copy (it sits above root memory,
/// so it hands the function down).
static MOVE_LOGGER: OnceLock<fn(*const u8, usize)> = OnceLock::new();

/// The precise collector's marking starts (`logger` given: it is called
/// with every copy of references between owners from now on) or ends
/// (`None`). Ordered as the collector orders its barrier flag.
pub(crate) fn log_moves(logger: Option<fn(*const u8, usize)>, order: Ordering) {
    if let Some(f) = logger {
        let _ = MOVE_LOGGER.set(f);
    }
    LOG_MOVES.store(logger.is_some(), order);
}

#[cold]
#[inline(never)]
fn moved_while_marking(data: *const u8, len: usize) {
    if let Some(log) = MOVE_LOGGER.get() {
        log(data, len);
    }
}

/// A shared range: bytes of an object of the base collector's heap that
/// hold references (a compiled program's channel buffer), read with the
/// orphans for as long as the object lives. The object is known by a weak
/// pointer, so the range keeps nothing alive and needs no removal: the
/// collection that frees the object clears the pointer first.
struct SharedRange {
    obj: crate::gc::Weak,
    data: usize,
    len: usize,
}

// SAFETY: the range is read only under the collector's lock while its
// object lives (see `for_each_shared_range_word`).
unsafe impl Send for SharedRange {}

static SHARED_RANGES: Mutex<Vec<SharedRange>> = Mutex::new(Vec::new());

fn shared_ranges() -> MutexGuard<'static, Vec<SharedRange>> {
    SHARED_RANGES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Offers every word of the live shared ranges to `visit`, and forgets
/// the ranges whose objects were collected. Runs concurrently with the
/// mutators, like the orphans' scan.
pub(crate) fn for_each_shared_range_word(visit: &mut dyn FnMut(u64)) {
    let mut ranges = shared_ranges();
    if ranges.is_empty() {
        return;
    }
    // Room first: nothing is allocated while the collector's lock is held.
    let mut words = Vec::with_capacity(ranges.iter().map(|r| r.len / 8).sum());
    let mut live = Vec::with_capacity(ranges.len());
    crate::gc::weak::while_collections_wait(|value| {
        for r in ranges.iter() {
            let alive = value(r.obj).is_some();
            live.push(alive);
            if !alive {
                continue;
            }
            for i in 0..r.len / 8 {
                // SAFETY: the object lives until the lock is released (its
                // weak pointer is not cleared); the range is aligned and
                // inside it. Channel copies into it are plain, so a word
                // may be read torn; but every word a copy moves while a
                // marking runs is logged too (`words_moved`), and a torn
                // word is only a candidate.
                let w = unsafe { &*(r.data as *const AtomicU64).add(i) };
                words.push(w.load(Ordering::Relaxed));
            }
        }
    });
    let mut alive = live.into_iter();
    ranges.retain(|_| alive.next().unwrap_or(false));
    drop(ranges);
    for w in words {
        visit(w);
    }
}

/// Before a fork: every record's lock, in lock order, kept until after
/// the fork.
pub(crate) fn lock_for_fork() {
    let r = records();
    let all = r.all.clone();
    crate::gc::fork::held::keep(r);
    for record in all {
        crate::gc::fork::held::keep(record.lock());
    }
    crate::gc::fork::held::keep(ORPHANS.lock());
    crate::gc::fork::held::keep(shared_ranges());
}

/// In a forked child: the root memory of every owner but `me` (contexts
/// whose threads did not come along) becomes orphans, still scanned; their
/// stacks are no longer scanned: no thread will run or pop their records
/// here.
pub(crate) fn orphan_all_but(me: Owner) {
    let all = records().all.clone();
    for record in all {
        if !ptr::eq(record, me) {
            orphan_blocks(record);
        }
    }
}

impl Collector for Precise {
    type Stack = StackOwner;
    type Block = Node;

    unsafe fn stack_created(head: NonNull<StackHead>, state: *mut StackOwner) {
        let me = owner();
        me.lock().stacks.push(head);
        // SAFETY: the head's own state, written by its owner.
        unsafe { (*state).0 = Some(me) };
    }

    unsafe fn stack_dropped(head: NonNull<StackHead>, state: *mut StackOwner) {
        // SAFETY: as in stack_created.
        if let Some(owner) = unsafe { (*state).0 } {
            owner.lock().stacks.retain(|&h| h != head);
        }
    }

    unsafe fn before_chunk_freed(_head: NonNull<StackHead>, state: *mut StackOwner) {
        // A scan holds its owner's lock throughout: taking it waits for
        // one that may have loaded the chunk before it was unlinked.
        // SAFETY: as in stack_created.
        if let Some(owner) = unsafe { (*state).0 } {
            drop(owner.lock());
        }
    }

    unsafe fn stack_released(head: NonNull<StackHead>, state: *mut StackOwner) {
        // SAFETY: as in stack_created.
        if let Some(owner) = unsafe { (*state).0.take() } {
            owner.lock().stacks.retain(|&h| h != head);
        }
    }

    unsafe fn stack_adopted(head: NonNull<StackHead>, state: *mut StackOwner) {
        // SAFETY: forwarded: a released stack is like a new one.
        unsafe { Self::stack_created(head, state) }
    }

    unsafe fn block_allocated(node: *mut Node, data: *mut u8, len: usize) {
        // SAFETY: forwarded.
        unsafe { link(node, data, len, owner()) }
    }

    unsafe fn shared_block_allocated(node: *mut Node, data: *mut u8, len: usize) {
        // No context owns it: scanned with the orphans, by the collector,
        // after every context's snapshot; what moves in or out meanwhile
        // is logged (`words_moved`).
        // SAFETY: forwarded.
        unsafe { link(node, data, len, orphans()) }
    }

    #[inline(always)]
    fn words_moved(data: *const u8, len: usize) {
        if LOG_MOVES.load(Ordering::Relaxed) {
            moved_while_marking(data, len);
        }
    }

    fn heap_range_shared(obj: NonNull<u8>, data: *const u8, len: usize) {
        let obj = crate::gc::Weak::make(obj);
        shared_ranges().push(SharedRange {
            obj,
            data: data as usize,
            len,
        });
    }

    unsafe fn block_freed(node: *mut Node) {
        // SAFETY: forwarded.
        unsafe { unlink(node) }
    }

    unsafe fn block_released(node: *mut Node) {
        // SAFETY: forwarded; the node is nobody's until adopted.
        unsafe { unlink(node) }
    }

    unsafe fn block_adopted(node: *mut Node) {
        // SAFETY: a released node: unlisted, its block still allocated.
        unsafe { Self::block_allocated(node, (*node).data, (*node).len) }
    }
}

/// Puts a new block's `node` on `me`'s list.
///
/// # Safety
/// As for `Collector::block_allocated`.
unsafe fn link(node: *mut Node, data: *mut u8, len: usize, me: Owner) {
    let mut list = me.lock();
    // SAFETY: the node is ours to write (the caller's obligation); the
    // list's nodes are changed under its lock, which we hold.
    unsafe {
        node.write(Node {
            owner: AtomicPtr::new(ptr::from_ref(me).cast_mut()),
            next: list.blocks,
            prev: ptr::null_mut(),
            data,
            len,
        });
        if !list.blocks.is_null() {
            (*list.blocks).prev = node;
        }
    }
    list.blocks = node;
}

/// Takes `node` off its owner's list (if it is on one), for good: its
/// owner is null afterwards.
///
/// # Safety
/// `node` is a block's node, from `block_allocated`.
unsafe fn unlink(node: *mut Node) {
    loop {
        // SAFETY: a node (the caller's obligation).
        let record = unsafe { (*node).owner.load(Ordering::Acquire) };
        if record.is_null() {
            return; // released: on no list
        }
        // SAFETY: records live for ever.
        let mut list = unsafe { &*record }.lock();
        // SAFETY: as above; owner changes only under the lock we hold.
        if unsafe { (*node).owner.load(Ordering::Relaxed) } != record {
            continue; // orphaned meanwhile: try its new list
        }
        // SAFETY: the node and its neighbours are on this list, whose
        // lock we hold.
        unsafe {
            let (next, prev) = ((*node).next, (*node).prev);
            if prev.is_null() {
                list.blocks = next;
            } else {
                (*prev).next = next;
            }
            if !next.is_null() {
                (*next).prev = prev;
            }
            (*node).owner.store(ptr::null_mut(), Ordering::Relaxed);
        }
        return;
    }
}

/// Offers every word of `owner`'s root memory (its blocks and the live
/// part of its stacks) to `f`, as a candidate reference.
///
/// # Safety
/// Each owner whose stacks are scanned is the caller, or is stopped (at a
/// safepoint, or parked in native code) so that its stacks do not change
/// meanwhile (but for chunks freed: they wait for this scan). Block words
/// may change concurrently: they are read with relaxed atomic loads.
pub(crate) unsafe fn for_each_word(owner: Owner, f: &mut dyn FnMut(usize)) {
    let list = owner.lock();
    let mut scan = |lo: *mut u8, hi: *mut u8| {
        let mut p = (lo as usize).next_multiple_of(8);
        while p + 8 <= hi as usize {
            // SAFETY: p is an aligned word inside live root memory; an
            // atomic load tolerates a concurrent owner write.
            f(unsafe { (*(p as *const AtomicUsize)).load(Ordering::Relaxed) });
            p += 8;
        }
    };
    let mut node = list.blocks;
    while !node.is_null() {
        // SAFETY: listed nodes are live while we hold the list's lock.
        unsafe {
            scan((*node).data, (*node).data.add((*node).len));
            node = (*node).next;
        }
    }
    for head in &list.stacks {
        // SAFETY: the stack is listed, so live; its owner does not change
        // it meanwhile (the caller's obligation).
        unsafe { head.as_ref().for_each_range(&mut scan) };
    }
}

#[cfg(test)]
mod tests {
    use super::super::{adopt_block, alloc_block, free_block, release_block, RootStack};
    use super::*;

    /// The words `owner`'s root memory offers. (Only this thread's and the
    /// orphans' are scanned here: other tests' threads change their stacks
    /// concurrently.)
    fn words_of(owner: Owner) -> Vec<usize> {
        let mut words = Vec::new();
        // SAFETY: the owner is this thread, or an exited thread (its stacks
        // are gone), or the orphans (which have no stacks).
        unsafe { for_each_word(owner, &mut |w| words.push(w)) };
        words
    }

    const MARK: usize = 0x00DE_F6C0_0000_0001;

    #[test]
    fn a_threads_blocks_and_stacks_are_scanned_as_its_own() {
        let me = owner();
        let block = alloc_block(64);
        // SAFETY: 64 fresh bytes.
        unsafe { block.cast::<usize>().as_ptr().add(3).write(MARK + 1) };
        let stack = RootStack::new();
        let at = stack.push(16);
        // SAFETY: 16 fresh bytes.
        unsafe { at.cast::<usize>().write(MARK + 2) };
        let mine = words_of(me);
        assert!(mine.contains(&(MARK + 1)), "block word missing");
        assert!(mine.contains(&(MARK + 2)), "stack word missing");
        // Another thread's scan does not see them.
        let other = std::thread::spawn(|| {
            let _b = alloc_block(8);
            words_of(owner())
        })
        .join()
        .unwrap();
        assert!(!other.contains(&(MARK + 1)) && !other.contains(&(MARK + 2)));
        // Popped stack words and freed blocks are no longer offered.
        // SAFETY: LIFO pop of our own push; the block is freed once.
        unsafe {
            stack.pop_to(at);
            free_block(block);
        }
        let mine = words_of(me);
        assert!(!mine.contains(&(MARK + 1)) && !mine.contains(&(MARK + 2)));
    }

    #[test]
    fn blocks_left_at_thread_exit_become_orphans() {
        let word = MARK + 3;
        let (gone, block) = std::thread::spawn(move || {
            let block = alloc_block(8);
            // SAFETY: 8 fresh bytes.
            unsafe { block.cast::<usize>().as_ptr().write(word) };
            (owner() as *const Record as usize, block.as_ptr() as usize)
        })
        .join()
        .unwrap();
        // SAFETY: records live for ever.
        let gone: Owner = unsafe { &*(gone as *const Record) };
        assert!(!words_of(gone).contains(&word));
        assert!(words_of(orphans()).contains(&word));
        // Freed from another thread, an orphan is gone.
        // SAFETY: the block is live and freed once.
        unsafe { free_block(NonNull::new(block as *mut u8).unwrap()) };
        assert!(!words_of(orphans()).contains(&word));
    }

    #[test]
    fn a_block_freed_by_another_context_leaves_its_owners_list() {
        let word = MARK + 4;
        let me = owner();
        let block = alloc_block(24);
        // SAFETY: 24 fresh bytes.
        unsafe { block.cast::<usize>().as_ptr().add(2).write(word) };
        let others: Vec<_> = (0..3).map(|_| alloc_block(16)).collect();
        assert!(words_of(me).contains(&word));
        let addr = block.as_ptr() as usize;
        std::thread::spawn(move || {
            // SAFETY: the block is live and freed once, here.
            unsafe { free_block(NonNull::new(addr as *mut u8).unwrap()) };
        })
        .join()
        .unwrap();
        assert!(!words_of(me).contains(&word));
        // The rest of the list is intact: each still scanned, then freed.
        for (i, b) in others.iter().enumerate() {
            // SAFETY: 16 bytes of a live block.
            unsafe { b.cast::<usize>().as_ptr().write(MARK + 10 + i) };
        }
        let mine = words_of(me);
        assert!((0..3).all(|i| mine.contains(&(MARK + 10 + i))));
        for b in others {
            // SAFETY: live, freed once.
            unsafe { free_block(b) };
        }
    }

    #[test]
    fn released_memory_is_nobodys_until_a_context_adopts_it() {
        let word = MARK + 20;
        let me = owner();
        let block = alloc_block(16);
        let stack = RootStack::new();
        // SAFETY: released while unused (the stack is empty, the block
        // holds no reference yet).
        unsafe {
            stack.release();
            release_block(block);
            block.cast::<usize>().as_ptr().write(word);
        }
        assert!(!words_of(me).contains(&word), "a released block is scanned");
        assert!(!words_of(orphans()).contains(&word));
        // Another context (a thread's own, here) adopts both.
        let (block_addr, stack_addr) =
            (block.as_ptr() as usize, &stack as *const RootStack as usize);
        let adopted = std::thread::spawn(move || {
            let block = NonNull::new(block_addr as *mut u8).unwrap();
            // SAFETY: the stack outlives this thread (joined below) and is
            // used by it alone meanwhile; both were released.
            let stack = unsafe { &*(stack_addr as *const RootStack) };
            // SAFETY: both were released and not adopted since.
            unsafe {
                adopt_block(block);
                stack.adopt();
            }
            let at = stack.push(8);
            // SAFETY: 8 fresh bytes.
            unsafe { at.cast::<usize>().write(word + 1) };
            let words = words_of(owner());
            // SAFETY: LIFO pop of our own push; then given back.
            unsafe {
                stack.pop_to(at);
                stack.release();
            }
            words
        })
        .join()
        .unwrap();
        assert!(adopted.contains(&word) && adopted.contains(&(word + 1)));
        // The thread's end orphaned the block it had adopted.
        assert!(words_of(orphans()).contains(&word));
        // SAFETY: a live block, freed once; the stack is this thread's
        // again.
        unsafe {
            free_block(block);
            stack.adopt();
        }
        assert!(!words_of(orphans()).contains(&word));
        assert!(!words_of(me).contains(&word));
    }
}
