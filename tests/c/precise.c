/*
 * The precise collector from C: what generated code for a precise-GC
 * language does, and each bad input's exact error code. Without the
 * `precise` feature every call must report DEFERGC_PRECISE_ENOTBUILT.
 */
#include "common.h"

/* struct Node { Node *next; long value; } */
static defergc_type node_type;

static defergc_handle new_node(defergc_handle next, long value) {
    int err = 0;
    /* next must be rooted across the allocation: the caller roots it.
     * Every other node is allocated with its field set. */
    defergc_handle n;
    if (value % 2) {
        n = defergc_precise_alloc_with(node_type, &next, 1, &err);
        CHECK(n != 0 && err == 0);
    } else {
        n = defergc_precise_alloc(node_type, &err);
        CHECK(n != 0 && err == 0);
        CHECK(defergc_precise_store(n, 0, next) == 0);
    }
    CHECK(defergc_precise_write(n, 8, &value, sizeof value) == 0);
    return n;
}

static long node_value(defergc_handle n) {
    long v = -1;
    CHECK(defergc_precise_read(n, 8, &v, sizeof v) == 0);
    return v;
}

static void not_built(void) {
    int err = 0;
    CHECK(defergc_precise_init() == DEFERGC_PRECISE_ENOTBUILT);
    CHECK(defergc_precise_alloc(1, &err) == 0 && err == DEFERGC_PRECISE_ENOTBUILT);
    err = 0;
    CHECK(defergc_precise_alloc_with(1, NULL, 0, &err) == 0 && err == DEFERGC_PRECISE_ENOTBUILT);
    CHECK(defergc_precise_collect() == DEFERGC_PRECISE_ENOTBUILT);
    CHECK(defergc_precise_gc_async() == DEFERGC_PRECISE_ENOTBUILT);
    CHECK(defergc_precise_store_global(NULL, 0) == DEFERGC_PRECISE_ENOTBUILT);
    puts("precise: not built, every call says so");
}

int main(void) {
    if (defergc_precise_init() == DEFERGC_PRECISE_ENOTBUILT) {
        not_built();
        return 0;
    }
    size_t offsets[] = {0};
    CHECK(defergc_precise_register_type(16, offsets, 1, &node_type) == 0);

    /* A 100,000-node list rooted in a frame survives collections intact. */
    uint64_t frame;
    CHECK(defergc_precise_push_frame(&frame) == 0);
    /* One root slot per variable, updated as the variable changes. */
    int head_slot = defergc_precise_root(0);
    CHECK(head_slot >= 0);
    defergc_handle head = 0;
    for (long i = 0; i < 100000; i++) {
        head = new_node(head, i);
        CHECK(defergc_precise_set_root((size_t)head_slot, head) == 0);
    }
    /* Garbage: never rooted. */
    defergc_handle garbage = 0;
    for (int i = 0; i < 1000; i++) {
        int err;
        garbage = defergc_precise_alloc(node_type, &err);
    }
    CHECK(defergc_precise_collect() == 0);
    defergc_precise_stats st;
    CHECK(defergc_precise_get_stats(&st) == 0);
    CHECK(st.collections >= 1 && st.live_objects >= 100000);
    long n = 0;
    for (defergc_handle p = head; p != 0; n++) {
        CHECK(node_value(p) == 99999 - n);
        CHECK(defergc_precise_load(p, 0, &p) == 0);
    }
    CHECK(n == 100000);
    /* The same walk, each node found once for its two loads. */
    n = 0;
    for (defergc_handle p = head; p != 0; n++) {
        size_t offsets[] = {0, 0};
        defergc_handle next[2] = {7, 7};
        CHECK(defergc_precise_load_many(p, offsets, 2, next) == 0);
        CHECK(next[0] == next[1]);
        p = next[0];
    }
    CHECK(n == 100000);

    /* Bad input, each with its exact code. */
    int err = 0;
    long v = 0;
    CHECK(defergc_precise_read(garbage, 8, &v, sizeof v) == DEFERGC_PRECISE_ESTALEHANDLE);
    CHECK(defergc_precise_read(0, 8, &v, sizeof v) == DEFERGC_PRECISE_ENULLHANDLE);
    CHECK(defergc_precise_load(0x7f00000001ULL << 20, 0, &head) == DEFERGC_PRECISE_EINVALIDHANDLE);
    CHECK(defergc_precise_alloc(12345, &err) == 0 && err == DEFERGC_PRECISE_EUNKNOWNTYPE);
    CHECK(defergc_precise_read(head, 16, &v, sizeof v) == DEFERGC_PRECISE_EOUTOFBOUNDS);
    CHECK(defergc_precise_store(head, 8, head) == DEFERGC_PRECISE_ENOTAHANDLEFIELD);
    {
        /* A bad offset anywhere: nothing written. */
        size_t offsets[] = {0, 8};
        defergc_handle out[2] = {7, 7};
        CHECK(defergc_precise_load_many(head, offsets, 2, out) == DEFERGC_PRECISE_ENOTAHANDLEFIELD);
        CHECK(out[0] == 7 && out[1] == 7);
        CHECK(defergc_precise_load_many(garbage, offsets, 1, out) == DEFERGC_PRECISE_ESTALEHANDLE);
        CHECK(defergc_precise_load_many(garbage, NULL, 0, NULL) == DEFERGC_PRECISE_ESTALEHANDLE);
        CHECK(defergc_precise_load_many(head, NULL, 0, NULL) == 0);
        CHECK(out[0] == 7);
    }
    CHECK(defergc_precise_write(head, 0, &v, sizeof v) == DEFERGC_PRECISE_EHANDLEFIELDOVERLAP);
    CHECK(defergc_precise_deref(garbage, &err) == NULL && err == DEFERGC_PRECISE_ESTALEHANDLE);
    defergc_handle two[] = {head, head};
    CHECK(defergc_precise_alloc_with(node_type, two, 2, &err) == 0
          && err == DEFERGC_PRECISE_EOUTOFBOUNDS);
    CHECK(defergc_precise_alloc_with(node_type, &garbage, 1, &err) == 0
          && err == DEFERGC_PRECISE_ESTALEHANDLE);
    CHECK(defergc_precise_alloc_with(node_type, NULL, 1, &err) == 0 && err == DEFERGC_EINVAL);
    uint64_t inner;
    CHECK(defergc_precise_push_frame(&inner) == 0);
    CHECK(defergc_precise_pop_frame(frame) == DEFERGC_PRECISE_EFRAMENOTTOP);
    CHECK(defergc_precise_pop_frame(inner) == 0);
    CHECK(defergc_precise_pop_frame(frame) == 0);
    CHECK(defergc_precise_root(head) == DEFERGC_PRECISE_ENOFRAME);

    /* A global root keeps the first 10 nodes; stores go through the
     * barrier while cycles requested with gc_async run. */
    static uint64_t global;
    CHECK(defergc_precise_add_global_root(&global) == 0);
    CHECK(defergc_precise_add_global_root(NULL) == DEFERGC_PRECISE_EBADROOTADDRESS);
    CHECK(defergc_precise_store_global((uint64_t *)((char *)&global + 1), head)
          == DEFERGC_PRECISE_EBADROOTADDRESS);
    CHECK(defergc_precise_store_global(&global, garbage) == DEFERGC_PRECISE_ESTALEHANDLE);
    defergc_handle tenth = head;
    for (int i = 0; i < 99990; i++)
        CHECK(defergc_precise_load(tenth, 0, &tenth) == 0);
    CHECK(defergc_precise_reset_pause_stats() == 0);
    CHECK(defergc_precise_get_stats(&st) == 0);
    uint64_t before = st.collections;
    CHECK(defergc_precise_gc_async() == 0);
    CHECK(defergc_precise_store_global(&global, tenth) == 0);
    /* Running code meets the cycle's handshakes at its safepoints. */
    do {
        CHECK(defergc_precise_alloc(node_type, &err) != 0);
        CHECK(defergc_precise_safepoint() == 0);
        CHECK(defergc_precise_get_stats(&st) == 0);
    } while (st.collections == before);
    CHECK(defergc_precise_gc_wait() == 0);
    CHECK(defergc_precise_get_stats(&st) == 0);
    CHECK(st.pause_count >= 1 && st.pause_max_ns > 0 && st.pause_p99_ns > 0);
    CHECK(node_value(global) == 9);

    /* Unrooted now but for the global: a collection frees the rest. */
    CHECK(defergc_precise_collect() == 0);
    CHECK(defergc_precise_get_stats(&st) == 0);
    CHECK(st.live_objects == 10);
    CHECK(defergc_precise_read(head, 8, &v, sizeof v) == DEFERGC_PRECISE_ESTALEHANDLE);
    n = 0;
    for (defergc_handle p = global; p != 0; n++) {
        CHECK(node_value(p) == 9 - n);
        CHECK(defergc_precise_load(p, 0, &p) == 0);
    }
    CHECK(n == 10);
    CHECK(defergc_precise_store_global(&global, 0) == 0);
    CHECK(defergc_precise_remove_global_root(&global) == 0);
    CHECK(defergc_precise_remove_global_root(&global) == DEFERGC_PRECISE_EUNKNOWNROOT);
    CHECK(defergc_precise_set_gc_percent(-1) == 100);
    CHECK(defergc_precise_set_gc_percent(100) == -1);
    CHECK(defergc_precise_set_memory_limit(-1) == INT64_MAX);
    CHECK(defergc_precise_set_memory_limit(64 << 20) == INT64_MAX);
    CHECK(defergc_precise_set_memory_limit(INT64_MAX) == 64 << 20);

    /* Weak handles: equal for one object, empty once it is collected, and
     * refused for a handle that is not live. */
    uint64_t frame_w;
    CHECK(defergc_precise_push_frame(&frame_w) == 0);
    defergc_handle obj = defergc_precise_alloc(node_type, &err);
    CHECK(obj != 0 && err == 0);
    CHECK(defergc_precise_root(obj) >= 0);
    uint64_t weak = defergc_precise_weak_make(obj, &err);
    CHECK(weak != 0 && err == 0);
    CHECK(defergc_precise_weak_make(obj, &err) == weak);
    defergc_handle got = 0;
    CHECK(defergc_precise_collect() == 0);
    CHECK(defergc_precise_weak_value(weak, &got) == 0 && got == obj);
    CHECK(defergc_precise_pop_frame(frame_w) == 0);
    CHECK(defergc_precise_collect() == 0);
    CHECK(defergc_precise_weak_value(weak, &got) == 0 && got == 0);
    CHECK(defergc_precise_weak_make(obj, &err) == 0 && err == DEFERGC_PRECISE_ESTALEHANDLE);
    CHECK(defergc_precise_weak_value(weak, NULL) == DEFERGC_EINVAL);
    CHECK(defergc_precise_collect() == 0);
    CHECK(defergc_precise_get_stats(&st) == 0);
    CHECK(st.live_objects == 0);
    CHECK(defergc_precise_shutdown() == 0);
    CHECK(defergc_precise_get_stats(NULL) == DEFERGC_EINVAL);
    puts("precise: ok");
    return 0;
}
