/*
 * The million-defer stress test through the C protocol: each record's
 * argument holds a GC pointer to an object with the call's index.
 *
 *   stress check     1,000,000 defers, a collection every 10,000
 *   stress timing    1,000,000 defers, collector decides; prints the time
 *   stress threads   8 threads x 100,000 defers while main collects
 */
#include "common.h"

#include <stdatomic.h>

/* What every call of one run checks and counts. */
typedef struct {
    long next; /* the index the next call must have (LIFO) */
    long calls;
    long bad;
} Verify;

/* The argument bytes of each deferred call. */
struct args {
    long *obj; /* GC object holding the call's index */
    Verify *verify;
};

/* func(obj *T) { verify the object }, deferred in a loop. */
static void check_call(void *p, const defergc_call *call) {
    struct args *a = p;
    Verify *v = a->verify;
    (void)call;
    long i = a->obj[0];
    /* Anything but the next index in LIFO order means a reclaimed object
     * (or a call out of order). */
    if (i != v->next - 1) {
        v->bad++;
    }
    v->next = i;
    v->calls++;
}

static void churn(int n) {
    for (int i = 0; i < n; i++) {
        volatile void *p = defergc_alloc(32);
        (void)p;
    }
}

/* func stress(n, gcEvery) { for i := 0; i < n; i++ { defer check(new(i)) } } */
static void stress(long n, long gc_every, Verify *v) {
    FRAME_OPEN(fr, return);
    for (long i = 0; i < n; i++) {
        long *obj = defergc_alloc(sizeof(long));
        obj[0] = i;
        struct args a = {obj, v};
        defergc_defer(&fr, check_call, &a, sizeof a);
        if (gc_every > 0 && i % gc_every == gc_every - 1) {
            churn(2000);
            defergc_collect();
        }
    }
    defergc_frame_leave(&fr);
}

static void run_checked(long n, long gc_every) {
    Verify v = {n, 0, 0};
    stress(n, gc_every, &v);
    CHECK(v.calls == n);
    CHECK(v.bad == 0);
    CHECK(v.next == 0);
}

/* The monotonic clock in milliseconds. */
static double now_ms(void) { return mono_ns() / 1e6; }

static atomic_int threads_done;

/* A thread's argument: a collected object only the thread refers to. */
typedef struct {
    long words[4];
} thread_arg;

/* How many of the argument's words are not what the creator wrote. */
static void *check_arg(void *p) {
    thread_arg *a = p;
    long bad = 0;
    for (int i = 0; i < 4; i++) {
        bad += a->words[i] != 0x5eed0000 + i;
    }
    return (void *)bad;
}

static void *thread_body(void *arg) {
    (void)arg;
    run_checked(100000, 0);
    atomic_fetch_add(&threads_done, 1);
    return (void *)1;
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "check";
    defergc_init();
    if (strcmp(mode, "check") == 0) {
        defergc_stats before, after;
        CHECK(defergc_get_stats(&before) == 0);
        run_checked(1000000, 10000);
        CHECK(defergc_get_stats(&after) == 0);
        printf("stress check: ok, %llu collections\n",
               (unsigned long long)(after.collections - before.collections));
    } else if (strcmp(mode, "timing") == 0) {
        double start = now_ms();
        run_checked(1000000, 0);
        printf("{\"bench\":\"c_stress\",\"defers\":1000000,\"elapsed_ms\":%.3f}\n",
               now_ms() - start);
    } else if (strcmp(mode, "threads") == 0) {
        pthread_t t[8];
        for (int i = 0; i < 8; i++) {
            CHECK(defergc_thread_create(&t[i], NULL, thread_body, NULL) == 0);
        }
        /* The main thread collects while they defer. */
        int rounds = 0;
        while (atomic_load(&threads_done) < 8) {
            churn(1000);
            defergc_collect();
            rounds++;
        }
        for (int i = 0; i < 8; i++) {
            void *result = NULL;
            CHECK(pthread_join(t[i], &result) == 0);
            CHECK(result == (void *)1);
        }
        printf("stress threads: ok, main collected %d times\n", rounds);
    } else if (strcmp(mode, "thread-args") == 0) {
        /* Each thread's argument is a fresh object the creator forgets at
         * once and then collects, before the thread may have run: the
         * argument must survive until the thread holds it. */
        int bad = 0, n = 400;
        for (int r = 0; r < n; r++) {
            pthread_t t;
            thread_arg *a = defergc_alloc(sizeof *a);
            for (int i = 0; i < 4; i++) {
                a->words[i] = 0x5eed0000 + i;
            }
            CHECK(defergc_thread_create(&t, NULL, check_arg, a) == 0);
            a = NULL;
            /* Objects of the argument's size, to reuse its memory at once. */
            for (int i = 0; i < 64; i++) {
                thread_arg *x = defergc_alloc(sizeof *x);
                memset(x, 0xff, sizeof *x);
            }
            defergc_collect();
            for (int i = 0; i < 64; i++) {
                thread_arg *x = defergc_alloc(sizeof *x);
                memset(x, 0xff, sizeof *x);
            }
            void *result = NULL;
            CHECK(pthread_join(t, &result) == 0);
            bad += result != NULL;
        }
        printf("stress thread-args: %d of %d threads found their argument collected\n", bad, n);
        CHECK(bad == 0);
        printf("stress thread-args: ok\n");
    } else {
        fprintf(stderr, "usage: stress [check|timing|threads|thread-args]\n");
        return 2;
    }
    return 0;
}
