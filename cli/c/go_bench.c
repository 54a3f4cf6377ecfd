/*
 * The goroutine benchmarks whose goroutine bodies are compiled code, as a
 * Go-like compiler would emit them against defergc's C ABI (the command
 * runs them from its main goroutine; see cli/src/cli/bench.rs).
 */
#define _GNU_SOURCE /* syscall(2) */
#include "defergc.h"

#include <stdint.h>
#include <sys/syscall.h>
#include <unistd.h>

struct counter {
    defergc_wg *wg;
};

/* defer wg.Done() */
static void done(void *args, const defergc_call *call) {
    (void)call;
    defergc_wg_done(*(defergc_wg **)args);
}

struct node {
    uint64_t value;
};

/* defer func() { if r := recover(); r != want { panic("...") } }() */
struct recover_args {
    void *want;
    uint64_t *bad;
};

static void recover_it(void *args, const defergc_call *call) {
    struct recover_args *a = args;
    void *v = 0;
    if (defergc_recover(call, &v) != DEFERGC_RECOVERED_VALUE || v != a->want)
        __atomic_fetch_add(a->bad, 1, __ATOMIC_RELAXED);
}

struct worker_args {
    defergc_wg *wg;
    uint64_t *bad;
    uint64_t i;
};

/* func worker(wg *sync.WaitGroup, i int) {
 *     defer wg.Done()
 *     defer func() { recover() }()
 *     panic(&node{i})
 * } */
static void worker(void *args) {
    struct worker_args *a = args;
    defergc_frame fr;
    defergc_frame_enter(&fr);
    if (DEFERGC_FRAME_ARM(&fr)) {
        defergc_frame_unwind(&fr);
        return;
    }
    defergc_defer(&fr, done, &a->wg, sizeof a->wg);
    struct node *n = defergc_alloc(sizeof *n);
    n->value = a->i;
    struct recover_args r = {n, a->bad};
    defergc_defer(&fr, recover_it, &r, sizeof r);
    defergc_panic(n);
}

/* Starts n workers and waits for them; returns how many went wrong. */
uint64_t defergc_bench_spawn_panic(uint64_t n) {
    defergc_wg wg = {{0}};
    uint64_t bad = 0;
    defergc_wg_add(&wg, (int)n);
    for (uint64_t i = 0; i < n; i++) {
        struct worker_args a = {&wg, &bad, i};
        defergc_go(worker, &a, sizeof a);
    }
    defergc_wg_wait(&wg);
    return bad;
}

/* The select4 benchmark as compiled code: four channels of one slot,
 * kept full, and n selects receiving from whichever (Go's fairness: each
 * about a quarter of the time; counts[k] says how often case k won).
 * Returns how many selects did not receive a value. */
uint64_t defergc_bench_select4(uint64_t n, uint64_t counts[4]) {
    defergc_chan *c[4];
    for (int k = 0; k < 4; k++)
        c[k] = defergc_chan_make(sizeof(uint64_t), 0, 1);
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; i++) {
        /* Refill the one drained last time (the others are full). */
        for (int k = 0; k < 4; k++)
            defergc_chan_try_send(c[k], &i);
        uint64_t v;
        int ok = 0;
        defergc_select_case cases[4] = {
            {c[0], DEFERGC_SELECT_RECV, &v},
            {c[1], DEFERGC_SELECT_RECV, &v},
            {c[2], DEFERGC_SELECT_RECV, &v},
            {c[3], DEFERGC_SELECT_RECV, &v},
        };
        ptrdiff_t k = defergc_select(cases, 4, 1, &ok);
        if (k < 0 || k > 3 || !ok)
            bad++;
        else
            counts[k]++;
    }
    return bad;
}

/* func() (got uint64) { defer func() { got = recover().(uint64) }(); panic(i) }()
 * n times, through the C protocol; returns how many came back wrong. */
struct named_result {
    uint64_t *got;
};

static void recover_into(void *args, const defergc_call *call) {
    struct named_result *a = args;
    void *v = 0;
    if (defergc_recover(call, &v) == DEFERGC_RECOVERED_VALUE)
        *a->got = (uint64_t)(uintptr_t)v;
}

__attribute__((noinline)) static uint64_t panic_and_recover(uint64_t i) {
    volatile uint64_t got = 0;
    defergc_frame fr;
    defergc_frame_enter(&fr);
    if (DEFERGC_FRAME_ARM(&fr)) {
        defergc_frame_unwind(&fr);
        return got;
    }
    struct named_result r = {(uint64_t *)&got};
    defergc_defer(&fr, recover_into, &r, sizeof r);
    /* (i + 1: a NULL value would be Go's panic(nil).) */
    defergc_panic((void *)(uintptr_t)(i + 1));
}

uint64_t defergc_bench_panic_recover(uint64_t n) {
    uint64_t bad = 0;
    for (uint64_t i = 0; i < n; i++)
        if (panic_and_recover(i) != i + 1)
            bad++;
    return bad;
}

/* A loop without calls that only another goroutine ends (by setting
 * *flag): what asynchronous preemption must interrupt. Its name is the
 * program's own, not the runtime's, so the runtime's table of compiled
 * code covers it. Returns how many loads it made. */
uint64_t bench_spin_until(const volatile uint32_t *flag) {
    uint64_t loads = 0;
    while (!*flag)
        loads++;
    return loads;
}

/* n getpid system calls; with `through`, each inside
 * defergc_enter_syscall / defergc_exit_syscall, as compiled code wraps a
 * call that may block. Returns the sum of the pids. */
uint64_t bench_getpid_calls(uint64_t n, int through) {
    uint64_t sum = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (through)
            defergc_enter_syscall();
        sum += (uint64_t)syscall(SYS_getpid);
        if (through)
            defergc_exit_syscall();
    }
    return sum;
}
