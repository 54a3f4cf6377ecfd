/*
 * The vendored collector as one translation unit (its extra/gc.c, which
 * makes every internal symbol static), followed by the two accessors
 * defergc reads internals through. Nothing in vendor/ is changed.
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
