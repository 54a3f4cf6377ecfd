/*
 * Readies no park asked for, against every blocking operation of the C ABI
 * (tests/go_spurious.rs runs it under GOMAXPROCS 1, 2 and 8).
 *
 * The header's contract: a ready a park did not ask for makes the next
 * park return at once, so every runtime wait loops on its own condition.
 * Here goroutines block in defergc_chan_recv, defergc_chan_send,
 * defergc_select (receive and send cases), defergc_sleep_ns,
 * defergc_mutex_lock, defergc_rwmutex_lock and _rlock, defergc_wg_wait,
 * defergc_cond_wait and a receive from a timer's channel (and
 * defergc_after's), while a readier goroutine calls defergc_ready on all
 * of them in a loop. Each operation must complete exactly as without the
 * readies: the values, their order and the counts are checked, locks
 * still exclude, and a sleep or a timer never ends before its time (a
 * lower bound on the monotonic clock, not a speed limit).
 *
 *   spurious_ready [iterations]   default 2000; prints one "ok" line
 */
#include "common.h"

#include <stdatomic.h>

static int iters = 2000;

/* A small generator per goroutine (xorshift). */
static uint32_t next_rand(uint32_t *s) {
    uint32_t x = *s;
    x ^= x << 13;
    x ^= x >> 17;
    x ^= x << 5;
    return *s = x;
}

/* ---- the goroutines the readier readies ---------------------------- */

#define MAX_VICTIMS 1024
static _Atomic(void *) victim_g[MAX_VICTIMS];
static _Atomic uint64_t victim_id[MAX_VICTIMS];
static atomic_int victims;
static atomic_int readier_stop;
static atomic_long readies;

/* The running goroutine joins the readier's list (while there is room:
 * a long run's wait-group children may not find any). */
static void victim(void) {
    defergc_goroutine self = defergc_self();
    int i = atomic_fetch_add(&victims, 1);
    if (i >= MAX_VICTIMS) return;
    atomic_store(&victim_id[i], self.id);
    atomic_store(&victim_g[i], self.g);
}

static void readier(void *arg) {
    (void)arg;
    while (!atomic_load(&readier_stop)) {
        int n = atomic_load(&victims);
        if (n > MAX_VICTIMS) n = MAX_VICTIMS;
        for (int i = 0; i < n; i++) {
            void *g = atomic_load(&victim_g[i]);
            if (g == NULL) continue;
            defergc_goroutine h = {g, atomic_load(&victim_id[i])};
            CHECK(defergc_ready(h) >= 0);
            atomic_fetch_add(&readies, 1);
        }
        defergc_gosched();
    }
}

static defergc_wg all;

/* ---- channel receive and send ------------------------------------- */

static defergc_chan *c_recv, *c_send;

/* Blocks in recv: its feeder makes it wait for each value. */
static void recv_side(void *arg) {
    (void)arg;
    victim();
    for (int i = 0; i < iters; i++) {
        int v = -1;
        CHECK(defergc_chan_recv(c_recv, &v) == 1);
        CHECK(v == i);
    }
    int v = 7;
    CHECK(defergc_chan_recv(c_recv, &v) == 0); /* closed */
    CHECK(v == 0);
    defergc_wg_done(&all);
}

static void recv_feeder(void *arg) {
    (void)arg;
    for (int i = 0; i < iters; i++) {
        defergc_gosched();
        defergc_gosched();
        defergc_chan_send(c_recv, &i);
    }
    defergc_chan_close(c_recv);
    defergc_wg_done(&all);
}

/* Blocks in send: its receiver takes each value late. */
static void send_side(void *arg) {
    (void)arg;
    victim();
    for (int i = 0; i < iters; i++) defergc_chan_send(c_send, &i);
    defergc_chan_close(c_send);
    defergc_wg_done(&all);
}

static void send_drainer(void *arg) {
    (void)arg;
    int v, n = 0;
    for (;;) {
        defergc_gosched();
        defergc_gosched();
        if (!defergc_chan_recv(c_send, &v)) break;
        CHECK(v == n);
        n++;
    }
    CHECK(n == iters);
    defergc_wg_done(&all);
}

/* ---- select ------------------------------------------------------ */

static defergc_chan *s_a, *s_b, *s_x, *s_y;
static atomic_int sel_x_count, sel_y_count;

/* Blocks in a select of two receive cases, fed slowly on both. */
static void select_recv_side(void *arg) {
    (void)arg;
    victim();
    int next[2] = {0, 0};
    for (int i = 0; i < iters; i++) {
        int v = -1, ok = -1;
        defergc_select_case cases[2] = {
            {s_a, DEFERGC_SELECT_RECV, &v},
            {s_b, DEFERGC_SELECT_RECV, &v},
        };
        ptrdiff_t k = defergc_select(cases, 2, 1, &ok);
        CHECK(k == 0 || k == 1);
        CHECK(ok == 1);
        CHECK(v == next[k]);
        next[k]++;
    }
    CHECK(next[0] == iters / 2 && next[1] == iters - iters / 2);
    defergc_wg_done(&all);
}

static void select_feeder(void *arg) {
    int which = *(int *)arg;
    int n = which == 0 ? iters / 2 : iters - iters / 2;
    for (int i = 0; i < n; i++) {
        defergc_gosched();
        defergc_gosched();
        defergc_chan_send(which == 0 ? s_a : s_b, &i);
    }
    defergc_wg_done(&all);
}

/* Blocks in a select of two send cases, drained slowly on both. */
static void select_send_side(void *arg) {
    (void)arg;
    victim();
    int next[2] = {0, 0};
    for (int i = 0; i < iters; i++) {
        int vx = next[0], vy = next[1];
        defergc_select_case cases[2] = {
            {s_x, DEFERGC_SELECT_SEND, &vx},
            {s_y, DEFERGC_SELECT_SEND, &vy},
        };
        ptrdiff_t k = defergc_select(cases, 2, 1, NULL);
        CHECK(k == 0 || k == 1);
        next[k]++;
    }
    CHECK(next[0] + next[1] == iters);
    defergc_chan_close(s_x);
    defergc_chan_close(s_y);
    atomic_store(&sel_x_count, next[0]);
    atomic_store(&sel_y_count, next[1]);
    defergc_wg_done(&all);
}

static atomic_int select_drained[2];

static void select_drainer(void *arg) {
    int which = *(int *)arg;
    int v, n = 0;
    for (;;) {
        defergc_gosched();
        defergc_gosched();
        if (!defergc_chan_recv(which == 0 ? s_x : s_y, &v)) break;
        CHECK(v == n);
        n++;
    }
    atomic_store(&select_drained[which], n);
    defergc_wg_done(&all);
}

/* ---- sleep and timers -------------------------------------------- */

/* Fails unless a wait of `ns` asked of `what` took at least that long. */
static void check_not_early(const char *what, int64_t ns, int64_t took) {
    if (took < ns) {
        fprintf(stderr, "%s: a wait of %lld ns ended after %lld ns\n", what, (long long)ns,
                (long long)took);
        exit(1);
    }
}

#define SLEEPERS 8
static atomic_long sleeps;

static void sleeper(void *arg) {
    uint32_t seed = 0x9e3779b9u * (uint32_t)(*(int *)arg + 1);
    victim();
    for (int i = 0; i < iters / 4; i++) {
        int64_t ns = 1000 + next_rand(&seed) % 20000;
        int64_t t = mono_ns();
        defergc_sleep_ns(ns);
        int64_t took = mono_ns() - t;
        check_not_early("defergc_sleep_ns", ns, took);
        atomic_fetch_add(&sleeps, 1);
    }
    defergc_wg_done(&all);
}

static atomic_long timer_fires;

/* Blocks in a receive from a timer's channel (and from defergc_after's). */
static void timer_side(void *arg) {
    (void)arg;
    uint32_t seed = 12345;
    victim();
    for (int i = 0; i < iters / 10; i++) {
        int64_t ns = 1000 + next_rand(&seed) % 50000;
        int64_t wall = now_ns(CLOCK_REALTIME);
        int64_t t = mono_ns();
        defergc_timer *tm = defergc_timer_new(ns);
        int64_t when = 0;
        CHECK(defergc_chan_recv(defergc_timer_chan(tm), &when) == 1);
        int64_t took = mono_ns() - t;
        check_not_early("a timer", ns, took);
        /* The time it sent: after the timer was made (a wall clock, with a
         * second of slack for its steps). */
        CHECK(when > wall - 1000000000);
        CHECK(defergc_timer_stop(tm) == 0); /* it fired */
        t = mono_ns();
        CHECK(defergc_chan_recv(defergc_after(ns), &when) == 1);
        took = mono_ns() - t;
        check_not_early("defergc_after", ns, took);
        atomic_fetch_add(&timer_fires, 2);
    }
    defergc_wg_done(&all);
}

/* ---- mutex and rwmutex ------------------------------------------ */

#define LOCKERS 4
static defergc_mutex mu;
static long mu_counter; /* only under mu */
static atomic_int mu_owner;

static void locker(void *arg) {
    int me = *(int *)arg + 1;
    victim();
    for (int i = 0; i < iters / LOCKERS; i++) {
        defergc_mutex_lock(&mu);
        CHECK(atomic_exchange(&mu_owner, me) == 0);
        long v = mu_counter;
        if (i % 4 == 0) defergc_sleep_ns(1000); /* the others park meanwhile */
        mu_counter = v + 1;
        CHECK(atomic_exchange(&mu_owner, 0) == me);
        defergc_mutex_unlock(&mu);
        defergc_gosched();
    }
    defergc_wg_done(&all);
}

#define RW_WRITERS 2
#define RW_READERS 3
static defergc_rwmutex rw;
static atomic_int rw_readers_in, rw_writer_in;
static long rw_writes; /* only under rw, exclusively */
static atomic_long rw_reads;

static void rw_writer(void *arg) {
    (void)arg;
    victim();
    for (int i = 0; i < iters / 8; i++) {
        defergc_rwmutex_lock(&rw);
        CHECK(atomic_fetch_add(&rw_writer_in, 1) == 0);
        CHECK(atomic_load(&rw_readers_in) == 0);
        long v = rw_writes;
        if (i % 2 == 0) defergc_sleep_ns(1000);
        rw_writes = v + 1;
        CHECK(atomic_load(&rw_readers_in) == 0);
        atomic_fetch_sub(&rw_writer_in, 1);
        defergc_rwmutex_unlock(&rw);
        defergc_gosched();
    }
    defergc_wg_done(&all);
}

static void rw_reader(void *arg) {
    (void)arg;
    victim();
    for (int i = 0; i < iters / 4; i++) {
        defergc_rwmutex_rlock(&rw);
        atomic_fetch_add(&rw_readers_in, 1);
        CHECK(atomic_load(&rw_writer_in) == 0);
        if (i % 4 == 0) defergc_sleep_ns(1000);
        CHECK(atomic_load(&rw_writer_in) == 0);
        atomic_fetch_sub(&rw_readers_in, 1);
        atomic_fetch_add(&rw_reads, 1);
        defergc_rwmutex_runlock(&rw);
        defergc_gosched();
    }
    defergc_wg_done(&all);
}

/* ---- wait group ------------------------------------------------- */

#define WG_CHILDREN 3
static atomic_int wg_round_done;
static atomic_long wg_rounds;

static void wg_child(void *arg) {
    defergc_wg *wg = *(defergc_wg **)arg;
    victim();
    defergc_sleep_ns(2000);
    atomic_fetch_add(&wg_round_done, 1);
    defergc_wg_done(wg);
}

/* Blocks in wg_wait: each round's children sleep before their Done. */
static void wg_side(void *arg) {
    (void)arg;
    static defergc_wg wg;
    defergc_wg *p = &wg;
    victim();
    for (int r = 0; r < iters / 20; r++) {
        atomic_store(&wg_round_done, 0);
        defergc_wg_add(&wg, WG_CHILDREN);
        for (int i = 0; i < WG_CHILDREN; i++) CHECK(defergc_go(wg_child, &p, sizeof p) == 0);
        defergc_wg_wait(&wg);
        CHECK(atomic_load(&wg_round_done) == WG_CHILDREN);
        atomic_fetch_add(&wg_rounds, 1);
    }
    defergc_wg_done(&all);
}

/* ---- condition variable ----------------------------------------- */

#define COND_CAP 4
static defergc_mutex cond_mu;
static defergc_cond cond_changed;
static int cond_ring[COND_CAP], cond_items, cond_put, cond_get; /* under cond_mu */

/* A bounded queue on one mutex and one cond: the consumer waits while it
 * is empty, the producer while it is full; wake-ups may be spurious (the
 * loops), but the mutex must be held again on every return. */
static void cond_consumer(void *arg) {
    (void)arg;
    victim();
    defergc_mutex_lock(&cond_mu);
    for (int i = 0; i < iters; i++) {
        while (cond_items == 0) {
            defergc_cond_wait(&cond_changed, &cond_mu);
            CHECK(defergc_mutex_trylock(&cond_mu) == 0); /* held again */
        }
        CHECK(cond_ring[cond_get] == i);
        cond_get = (cond_get + 1) % COND_CAP;
        cond_items--;
        defergc_cond_broadcast(&cond_changed);
        if (i % 8 == 0) {
            defergc_mutex_unlock(&cond_mu);
            defergc_gosched();
            defergc_mutex_lock(&cond_mu);
        }
    }
    defergc_mutex_unlock(&cond_mu);
    defergc_wg_done(&all);
}

static void cond_producer(void *arg) {
    (void)arg;
    victim();
    for (int i = 0; i < iters; i++) {
        defergc_mutex_lock(&cond_mu);
        while (cond_items == COND_CAP) {
            defergc_cond_wait(&cond_changed, &cond_mu);
            CHECK(defergc_mutex_trylock(&cond_mu) == 0);
        }
        cond_ring[cond_put] = i;
        cond_put = (cond_put + 1) % COND_CAP;
        cond_items++;
        defergc_cond_signal(&cond_changed);
        defergc_mutex_unlock(&cond_mu);
        defergc_gosched();
    }
    defergc_wg_done(&all);
}

/* ---- main ------------------------------------------------------- */

static void go_n(defergc_go_fn f, int n) {
    for (int i = 0; i < n; i++) CHECK(defergc_go(f, &i, sizeof i) == 0);
}

static void mainf(void *arg) {
    (void)arg;
    victim();
    c_recv = defergc_chan_make(sizeof(int), 0, 0);
    c_send = defergc_chan_make(sizeof(int), 0, 0);
    s_a = defergc_chan_make(sizeof(int), 0, 0);
    s_b = defergc_chan_make(sizeof(int), 0, 1);
    s_x = defergc_chan_make(sizeof(int), 0, 0);
    s_y = defergc_chan_make(sizeof(int), 0, 2);

    int tasks = 2 + 2 + 1 + 2 + 1 + 2 + SLEEPERS + 1 + LOCKERS + RW_WRITERS + RW_READERS + 1 + 2;
    defergc_wg_add(&all, tasks);
    go_n(recv_side, 1);
    go_n(recv_feeder, 1);
    go_n(send_side, 1);
    go_n(send_drainer, 1);
    go_n(select_recv_side, 1);
    go_n(select_feeder, 2);
    go_n(select_send_side, 1);
    go_n(select_drainer, 2);
    go_n(sleeper, SLEEPERS);
    go_n(timer_side, 1);
    go_n(locker, LOCKERS);
    go_n(rw_writer, RW_WRITERS);
    go_n(rw_reader, RW_READERS);
    go_n(wg_side, 1);
    go_n(cond_consumer, 1);
    go_n(cond_producer, 1);
    CHECK(defergc_go(readier, NULL, 0) == 0);
    defergc_wg_wait(&all); /* readied too */
    atomic_store(&readier_stop, 1);

    CHECK(mu_counter == (long)LOCKERS * (iters / LOCKERS));
    CHECK(rw_writes == (long)RW_WRITERS * (iters / 8));
    CHECK(atomic_load(&rw_reads) == (long)RW_READERS * (iters / 4));
    CHECK(atomic_load(&wg_rounds) == iters / 20);
    CHECK(atomic_load(&sleeps) == (long)SLEEPERS * (iters / 4));
    CHECK(atomic_load(&timer_fires) == 2L * (iters / 10));
    CHECK(atomic_load(&select_drained[0]) == atomic_load(&sel_x_count));
    CHECK(atomic_load(&select_drained[1]) == atomic_load(&sel_y_count));
    CHECK(cond_items == 0 && cond_put == cond_get);
    printf("spurious_ready ok: %d iterations, %ld readies, select sends %d+%d\n", iters,
           atomic_load(&readies), atomic_load(&sel_x_count), atomic_load(&sel_y_count));
}

int main(int argc, char **argv) {
    if (argc > 1) iters = atoi(argv[1]);
    CHECK(iters >= 20);
    return defergc_main(mainf, NULL);
}
