/*
 * The memory controls from compiled code: defergc_init_with, MemStats,
 * SetFinalizer, KeepAlive and weak pointers. Prints "ok" or names the
 * check that failed (tests/memory.rs runs it).
 */
#include "common.h"

static int finalized;

static void count_finalized(void *obj, void *arg) {
    CHECK(arg == (void *)0x5eed && *(uint64_t *)obj == 42);
    finalized++;
}

static void never(void *obj, void *arg) {
    (void)obj;
    (void)arg;
    CHECK(!"a cleared finalizer ran");
}

/* n objects with finalizers, none kept; their weak pointers in *weak. */
__attribute__((noinline)) static void garbage(int n, void **weak) {
    for (int i = 0; i < n; i++) {
        uint64_t *p = defergc_alloc(64);
        *p = 42;
        defergc_set_finalizer(p, never, NULL);
        defergc_set_finalizer(p, count_finalized, (void *)0x5eed); /* replaces */
        weak[i] = defergc_weak_make(p);
    }
}

/* Zeroes the stack that garbage()'s calls into the runtime used, so that
 * no stale copy of an object's address is left where the frames of the
 * calls below (which the collector scans whole) keep slots they never
 * write. */
__attribute__((noinline)) static void scrub(void) {
    volatile char dead[16384];
    for (size_t i = 0; i < sizeof dead; i++)
        dead[i] = 0;
}

enum { N = 200 };

int main(void) {
    defergc_config bad = DEFERGC_CONFIG_INIT;
    bad.size = 3;
    CHECK(defergc_init_with(&bad) == DEFERGC_EINVAL);
    CHECK(defergc_init_with(NULL) == DEFERGC_EINVAL);
    defergc_config config = DEFERGC_CONFIG_INIT;
    config.gc_percent = 50;
    config.finalizer_thread = 0; /* finalizers run only when asked */
    CHECK(defergc_init_with(&config) == 0);
    CHECK(defergc_init_with(&config) == DEFERGC_EALREADY);
    CHECK(defergc_set_gc_percent(80) == 50);

    defergc_memstats m;
    m.size = 1;
    CHECK(defergc_read_memstats(&m) == DEFERGC_EINVAL);
    m.size = sizeof m;
    CHECK(defergc_read_memstats(&m) == 0);
    uint64_t mallocs = m.mallocs;

    /* The weak pointers are themselves collectable: kept in scanned memory. */
    void **weak = defergc_alloc(N * sizeof *weak);
    uint64_t *kept = defergc_alloc(64);
    *kept = 7;
    void *kept_weak = defergc_weak_make(kept);
    CHECK(defergc_weak_make(kept) == kept_weak && defergc_weak_value(kept_weak) == kept);
    CHECK(defergc_weak_make(NULL) == NULL && defergc_weak_value(NULL) == NULL);
    garbage(N, weak);
    scrub();
    /* The objects count; the weak pointers, runtime bookkeeping, do not. */
    CHECK(defergc_read_memstats(&m) == 0 && m.mallocs >= mallocs + N);

    /* One collection with a clean stack finalizes every object that the
     * returned garbage() dropped, and clears every weak pointer. */
    defergc_collect_with_clean_stack();
    /* No finalizer thread: none ran before run_finalizers. */
    CHECK(finalized == 0);
    defergc_run_finalizers();
    int cleared = 0;
    for (int i = 0; i < N; i++)
        cleared += defergc_weak_value(weak[i]) == NULL;
    if (finalized != N || cleared != N)
        fprintf(stderr, "finalized %d, cleared %d of %d\n", finalized, cleared, N);
    CHECK(finalized == N && cleared == N);
    CHECK(defergc_weak_value(kept_weak) == kept && *kept == 7);
    defergc_keep_alive(kept);
    defergc_keep_alive(weak);
    CHECK(defergc_read_memstats(&m) == 0 && m.num_gc > 0 && m.pause_total_ns > 0);
    puts("ok");
    return 0;
}
