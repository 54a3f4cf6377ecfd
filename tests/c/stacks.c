/*
 * Where goroutine stacks meet the collector, the signal stack and fork
 * (tests/go_stacks.rs runs each case):
 *
 *   storm     goroutines fault and recover in a loop (a nil dereference
 *             caught as a Go panic) while another collects in a loop: a
 *             worker stopped for a collection inside the fault handler is
 *             on its signal stack, and the collector must still scan the
 *             right ranges. Objects kept only on the faulting goroutines'
 *             stacks must survive.
 */
#include "defergc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *which;
static double seconds = 3;
static defergc_wg wg;

/* ---- storm ---- */

static volatile int stop;
static volatile long faults, collections;

typedef struct T {
    long a, b;
} T;

__attribute__((noinline)) static long nil_deref(T *p) {
    return ((volatile T *)p)->b;
}

static void swallow(void *args, const defergc_call *call) {
    (void)args;
    defergc_iface v;
    CHECK(defergc_recover_iface(call, &v) == DEFERGC_RECOVERED_ERROR);
}

/* func() { defer func() { recover() }(); nilDeref(nil) }() */
__attribute__((noinline)) static void fault_once(void) {
    defergc_frame fr;
    defergc_frame_enter(&fr);
    if (DEFERGC_FRAME_ARM(&fr)) {
        defergc_frame_unwind(&fr);
        return;
    }
    defergc_defer(&fr, swallow, NULL, 0);
    nil_deref(NULL);
    defergc_frame_leave(&fr);
}

enum { KEPT = 16, KEPT_WORDS = 8 };

static void fill(uint64_t *p, uint64_t seed) {
    for (int i = 0; i < KEPT_WORDS; i++)
        p[i] = seed * 0x9E3779B97F4A7C15ull + i;
}

static int intact(const uint64_t *p, uint64_t seed) {
    for (int i = 0; i < KEPT_WORDS; i++)
        if (p[i] != seed * 0x9E3779B97F4A7C15ull + i)
            return 0;
    return 1;
}

/* Faults over and over, keeping objects only on its own stack. */
static void faulter(void *args) {
    uint64_t base = *(uint64_t *)args;
    uint64_t *volatile kept[KEPT];
    for (int i = 0; i < KEPT; i++) {
        kept[i] = defergc_alloc(KEPT_WORDS * 8);
        fill(kept[i], base + i);
    }
    for (long n = 0; !stop; n++) {
        fault_once();
        __atomic_fetch_add(&faults, 1, __ATOMIC_RELAXED);
        if (n % 64 == 0) {
            for (int i = 0; i < KEPT; i++)
                CHECK(intact(kept[i], base + i));
            /* Garbage of the same size: a lost object is reused soon. */
            for (int i = 0; i < 64; i++)
                fill(defergc_alloc(KEPT_WORDS * 8), ~(uint64_t)i);
            defergc_gosched();
        }
    }
    for (int i = 0; i < KEPT; i++)
        CHECK(intact(kept[i], base + i));
    defergc_wg_done(&wg);
}

static void collector(void *args) {
    (void)args;
    double end = now() + seconds;
    while (now() < end) {
        defergc_collect();
        __atomic_fetch_add(&collections, 1, __ATOMIC_RELAXED);
        defergc_gosched();
    }
    stop = 1;
    defergc_wg_done(&wg);
}

static void storm(void) {
    enum { FAULTERS = 4 };
    defergc_wg_add(&wg, FAULTERS + 1);
    for (uint64_t i = 0; i < FAULTERS; i++) {
        uint64_t base = 1000 * (i + 1);
        CHECK(defergc_go(faulter, &base, sizeof base) == 0);
    }
    CHECK(defergc_go(collector, NULL, 0) == 0);
    defergc_wg_wait(&wg);
    printf("storm: %ld faults recovered, %ld collections\n", faults, collections);
}

static void go_main(void *arg) {
    (void)arg;
    if (strcmp(which, "storm") == 0)
        storm();
    else
        CHECK(!"unknown case");
}

int main(int argc, char **argv) {
    CHECK(argc >= 2);
    which = argv[1];
    if (argc >= 3)
        seconds = atof(argv[2]);
    return defergc_main(go_main, NULL);
}
