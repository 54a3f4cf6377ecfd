/*
 * The vendored collector as one translation unit (its extra/gc.c, which
 * makes every internal symbol static), followed by the functions through
 * which defergc reads and uses its internals. Nothing in vendor/ is
 * changed.
 */
#include "../vendor/bdwgc/extra/gc.c"

/*
 * Adds `bytes` of stacks scanned by a client root pusher to the stack size
 * the collection trigger reads (GC_total_stacksize, reset by each
 * GC_push_all_stacks and counted twice by min_bytes_allocd); returns the
 * new total. The caller holds the allocation lock, inside the root push,
 * after bdwgc's own thread-stack push.
 */
GC_API size_t GC_CALL defergc_sys_add_stack_bytes(size_t bytes)
{
  GC_ASSERT(I_HOLD_LOCK());
  GC_total_stacksize += bytes;
  return GC_total_stacksize;
}

/* The static roots' total size. The caller holds the allocation lock. */
GC_API size_t GC_CALL defergc_sys_static_root_bytes(void)
{
  GC_ASSERT(I_HOLD_LOCK());
  return GC_root_size;
}

/*
 * After a collection: when the stacks it scanned outweigh the heap, grows
 * the heap by what the trigger lets the program allocate before the next
 * collection (min_bytes_allocd, less the free blocks). bdwgc otherwise
 * grows the heap by a third of its size at a time and collects at the
 * second growth in a cycle, so a program whose stacks are most of what a
 * collection scans (a million parked goroutines) collected at every third
 * of a small heap, each time scanning every stack. Returns the bytes
 * added. The caller holds the allocation lock, at a collection's end.
 */
GC_API size_t GC_CALL defergc_sys_grow_for_pacing(void)
{
  word allowance, free_bytes, blocks;

  GC_ASSERT(I_HOLD_LOCK());
  if (GC_dont_expand || GC_disable_automatic_collection || GC_dont_gc != 0)
    return 0;
  if (GC_total_stacksize <= GC_heapsize / 2)
    return 0;
  allowance = min_bytes_allocd();
  free_bytes = GC_large_free_bytes;
  if (allowance <= free_bytes)
    return 0;
  blocks = divHBLKSZ(allowance - free_bytes) + 1;
  if (!GC_expand_hp_inner(blocks))
    return 0;
  return (size_t)blocks * HBLKSIZE;
}

/*
 * Pushes an entry (an address and a descriptor, such as GC_MAKE_PROC's)
 * on the collector's mark stack, from a root pusher: what GC_push_all does
 * for a range, for any descriptor. The caller holds the allocation lock,
 * inside a collection's root push.
 */
GC_API void GC_CALL defergc_sys_push_entry(void *obj, GC_word descr)
{
  GC_ASSERT(I_HOLD_LOCK());
  GC_mark_stack_top = GC_ms_push_obj_descr(obj, descr, GC_mark_stack_top,
                                           GC_mark_stack_limit);
}

/*
 * Makes the mark stack hold at least `entries` before a collection marks
 * (entries pushed by a root pusher that overflow it are dropped and
 * pushed again after a rescan of the heap, once per doubling). The caller
 * holds the allocation lock, with the mark stack empty: at a collection's
 * start.
 */
GC_API void GC_CALL defergc_sys_reserve_mark_stack(size_t entries)
{
  GC_ASSERT(I_HOLD_LOCK());
  if (GC_mark_stack_size >= entries
      || ADDR_GE((ptr_t)GC_mark_stack_top, (ptr_t)GC_mark_stack))
    return;
  alloc_mark_stack(entries);
}

/*
 * From a root pusher: if this push is a rescan's (the mark stack
 * overflowed and its entries were dropped), asks for a mark stack twice
 * as large at the next rescan of the heap. With parallel marking on,
 * bdwgc grows the stack only when a marker thread cannot return its local
 * stack; an overflow of the global stack itself (roots pushed, marked by
 * the collecting thread during a rescan) never grows it, so a root set
 * that overflows it once overflows it again at every rescan, and the
 * collection never ends. The caller holds the allocation lock, in the
 * root push.
 */
GC_API void GC_CALL defergc_sys_note_root_push(void)
{
  GC_ASSERT(I_HOLD_LOCK());
  if (GC_mark_state == MS_INVALID || GC_mark_state == MS_PARTIALLY_INVALID)
    GC_mark_stack_too_small = TRUE;
}

/*
 * Free entries left on the mark stack, from a root pusher (which must not
 * overflow it: an overflow drops entries, rescans the heap and pushes the
 * roots again). The caller holds the allocation lock, in the root push.
 */
GC_API size_t GC_CALL defergc_sys_mark_stack_room(void)
{
  GC_ASSERT(I_HOLD_LOCK());
  return (size_t)(GC_mark_stack_limit - GC_mark_stack_top) - 1;
}

/*
 * GC_invoke_finalizers a batch at a time: takes up to `batch` objects off
 * the queue of those ready to finalize under one hold of the allocation
 * lock, then runs their finalizers without it. GC_invoke_finalizers takes
 * the lock once a finalizer, against every thread that registers one or
 * allocates past its free lists: a million finalizers cost a million
 * lock handovers, and a finalizer thread slowed by them leaves a queue
 * that every collection marks again. The detached objects stay reachable
 * through their chain, whose head this frame keeps (the queue holds
 * their addresses revealed). Returns the finalizers run. The caller does
 * not hold the allocation lock.
 */
GC_API int GC_CALL defergc_sys_invoke_finalizers_batched(unsigned batch)
{
  int count = 0;
  word bytes_freed_before = 0;

  GC_ASSERT(I_DONT_HOLD_LOCK());
  if (0 == batch)
    batch = 1;
  while (GC_should_invoke_finalizers()) {
    struct finalizable_object *head, *tail;
    unsigned n;

    LOCK();
    if (0 == count)
      bytes_freed_before = GC_bytes_freed;
    head = GC_fnlz_roots.finalize_now;
    if (UNLIKELY(NULL == head)) {
      UNLOCK();
      break;
    }
    tail = head;
    for (n = 1; n < batch && fo_next(tail) != NULL; n++)
      tail = fo_next(tail);
    SET_FINALIZE_NOW(fo_next(tail));
    fo_set_next(tail, NULL);
    UNLOCK();
    while (head != NULL) {
      struct finalizable_object *curr_fo = head;

      head = fo_next(curr_fo);
      fo_set_next(curr_fo, NULL);
      curr_fo->fo_fn((ptr_t)curr_fo->fo_hidden_base, curr_fo->fo_client_data);
      GC_reachable_here(curr_fo->fo_client_data);
      curr_fo->fo_client_data = NULL;
      ++count;
    }
  }
  /* As GC_invoke_finalizers: what the finalizers freed counts for them. */
  if (count != 0 && bytes_freed_before != GC_bytes_freed) {
    LOCK();
    GC_finalizer_bytes_freed += (GC_bytes_freed - bytes_freed_before);
    UNLOCK();
  }
  return count;
}
