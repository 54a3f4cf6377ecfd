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
 *   bigframe PAD
 *             a goroutine recurses through 12 KiB frames (compiled without
 *             -fstack-clash-protection: no probes, the lowest byte of each
 *             frame written first) past the end of its stack, PAD bytes
 *             deeper at the start; the goroutine whose stack slot lies
 *             below waits with a pattern in its locals. The overflow must
 *             be reported (status 2) before anything of the neighbour is
 *             written: the program never ends with "neighbour intact" or a
 *             corrupted neighbour.
 *   fork N    a goroutine forks N times while others churn channels and
 *             sleep on timers; each child allocates, starts a goroutine
 *             and receives from it on a channel it made, then _exits 0 (or
 *             execs /bin/true, every third). Half the forks are made
 *             between defergc_enter_syscall and defergc_exit_syscall, as
 *             Go's ForkExec makes them. The parent waits for each child
 *             with a timeout: a child that hangs fails the run.
 *   forksema N
 *             a goroutine forks N times while goroutines and plain threads
 *             contend on a few mutexes; each child makes every bucket of
 *             the semaphore table wait (256 fresh mutexes, adjacent, each
 *             locked and waited for by a goroutine of its own, then
 *             unlocked) and _exits 0. A child that hangs fails the run.
 *   many N [MIB AT]
 *             N goroutines each allocate a 16-byte object and park on one
 *             channel (a receive) holding it; then the channel is closed
 *             and each checks its object. Every thousandth also checks
 *             that its stack lies outside bdwgc's plausible heap range
 *             (where a value that is no object's address is blacklisted).
 *             With MIB: a pointer-free object of MIB MiB is allocated
 *             before goroutine AT starts, a heap section too large for
 *             the gaps near the others, which the kernel used to place
 *             below the stack regions mapped so far: every goroutine's
 *             stack was then in the range, their pointers filled the
 *             blacklist, and allocation gave up ("Too many retries in
 *             GC_allocobj": 300000 128 250000 aborted in 5 runs of 5).
 */
#include "common.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

/* The monotonic clock in seconds. */
static double now(void) { return mono_ns() / 1e9; }

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
    FRAME_OPEN(fr, return);
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

/* ---- bigframe ---- */

enum { FRAME = 12 << 10, NEIGHBOUR_WORDS = 1024 };

static defergc_chan *wake;
static long pad;

static uint64_t pattern(int i) {
    return 0x5EED000000000000ull + (uint64_t)i * 0x10001;
}

/* Waits with 8 KiB of locals at the top of its stack, then checks them. */
static void neighbour(void *args) {
    (void)args;
    volatile uint64_t words[NEIGHBOUR_WORDS];
    for (int i = 0; i < NEIGHBOUR_WORDS; i++)
        words[i] = pattern(i);
    int v;
    defergc_chan_recv(wake, &v);
    for (int i = 0; i < NEIGHBOUR_WORDS; i++) {
        if (words[i] != pattern(i)) {
            printf("neighbour corrupted at word %d\n", i);
            fflush(stdout);
            exit(1);
        }
    }
    printf("neighbour intact\n");
    defergc_wg_done(&wg);
}

/* A 12 KiB frame of which only the lowest bytes are used (a large buffer
 * holding a short string), as code without stack probes has: nothing
 * between its bottom and the return address above is touched. */
__attribute__((noinline)) static long deep(int n) {
    volatile char buf[FRAME];
    for (size_t i = 0; i < 64; i++)
        buf[i] = (char)n;
    if (n == 0)
        return buf[0];
    return deep(n - 1) + buf[1];
}

__attribute__((noinline)) static long padded(int n) {
    volatile char room[pad + 1];
    room[0] = 1;
    return deep(n) + room[0];
}

static void recurser(void *args) {
    int depth = *(int *)args;
    printf("recursion returned %ld\n", padded(depth));
    fflush(stdout);
    int v = 1;
    defergc_chan_send(wake, &v);
    defergc_wg_done(&wg);
}

static void bigframe(void) {
    wake = defergc_chan_make(sizeof(int), 0, 0);
    /* Deep enough to run three frames past the end of the stack. */
    const char *size = getenv("DEFERGC_STACK_SIZE");
    CHECK(size != NULL);
    int depth = (int)(strtol(size, NULL, 10) / FRAME) + 3;
    defergc_wg_add(&wg, 2);
    /* Started one after the other from one worker: neighbouring slots,
     * the recurser's above the neighbour's. */
    CHECK(defergc_go(neighbour, NULL, 0) == 0);
    defergc_gosched();
    CHECK(defergc_go(recurser, &depth, sizeof depth) == 0);
    defergc_wg_wait(&wg);
}

/* ---- fork ---- */

static volatile int churning = 1;

/* Ping-pongs on two unbuffered channels until told to stop. */
static void pinger(void *args) {
    defergc_chan *const *c = args;
    long v = 0;
    while (churning) {
        defergc_chan_send(c[0], &v);
        defergc_chan_recv(c[1], &v);
        v++;
        defergc_alloc(32);
        /* A pause now and then: scheduling is cooperative, and a pair
         * split over both workers can run on without ever switching out
         * (each park finds its wakeup already there), so the forking
         * goroutine, woken onto the global queue, would never run. */
        if (v % 64 == 0)
            defergc_sleep_ns(20 * 1000);
    }
    v = -1;
    defergc_chan_send(c[0], &v);
    defergc_wg_done(&wg);
}

static void ponger(void *args) {
    defergc_chan *const *c = args;
    long v;
    for (;;) {
        defergc_chan_recv(c[0], &v);
        if (v < 0)
            break;
        defergc_chan_send(c[1], &v);
    }
    defergc_wg_done(&wg);
}

static void sleeper(void *args) {
    (void)args;
    while (churning)
        defergc_sleep_ns(100 * 1000);
    defergc_wg_done(&wg);
}

static void child_sender(void *args) {
    defergc_chan *c = *(defergc_chan **)args;
    long v = 42;
    defergc_chan_send(c, &v);
}

/* What a child does: allocate, start a goroutine and hear from it. */
static void in_child(int round, int in_syscall) {
    if (in_syscall)
        defergc_exit_syscall();
    long *p = defergc_alloc(64);
    CHECK(p != NULL);
    p[7] = round;
    defergc_chan *c = defergc_chan_make(sizeof(long), 0, 0);
    CHECK(defergc_go(child_sender, &c, sizeof c) == 0);
    long v = 0;
    CHECK(defergc_chan_recv(c, &v) && v == 42);
    CHECK(p[7] == round);
    if (round % 3 == 2) {
        execl("/bin/true", "true", (char *)NULL);
        _exit(3);
    }
    _exit(0);
}

/* Waits up to 10 s for pid; 0 if it exited with status 0. */
static int wait_child(pid_t pid, int round) {
    int status;
    if (wait_ended(pid, 10000, &status)) {
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
            return 0;
        printf("child of fork %d: wait status %#x\n", round, status);
        return 1;
    }
    printf("child of fork %d hangs\n", round);
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return 1;
}

static void forks(int n) {
    enum { PAIRS = 3 };
    static defergc_chan *chans[PAIRS][2];
    defergc_wg_add(&wg, 2 * PAIRS + 1);
    for (int i = 0; i < PAIRS; i++) {
        chans[i][0] = defergc_chan_make(sizeof(long), 0, 0);
        chans[i][1] = defergc_chan_make(sizeof(long), 0, 0);
        CHECK(defergc_go(pinger, chans[i], sizeof chans[i]) == 0);
        CHECK(defergc_go(ponger, chans[i], sizeof chans[i]) == 0);
    }
    CHECK(defergc_go(sleeper, NULL, 0) == 0);
    int failed = 0;
    for (int round = 0; round < n; round++) {
        /* Let the churn get going again. */
        defergc_sleep_ns(2 * 1000 * 1000);
        int in_syscall = round % 2;
        if (in_syscall)
            defergc_enter_syscall();
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0)
            in_child(round, in_syscall);
        if (in_syscall)
            defergc_exit_syscall();
        failed += wait_child(pid, round);
    }
    churning = 0;
    defergc_wg_wait(&wg);
    printf("fork: %d of %d children failed\n", failed, n);
    fflush(stdout);
    CHECK(failed == 0);
}

/* ---- forksema ---- */

enum { HOT = 4, CONTENDERS = 4, SPINNERS = 2, CHILD_MUTEXES = 256 };
static defergc_mutex hot[HOT];
static volatile long hot_count[HOT];
static defergc_mutex child_mutex[CHILD_MUTEXES];
static defergc_wg child_wg;

/* Locks the hot mutexes in turn until told to stop; counts under each. */
static void contend(long seed) {
    for (long i = seed; churning; i++) {
        int k = (int)(i % HOT);
        defergc_mutex_lock(&hot[k]);
        hot_count[k]++;
        defergc_mutex_unlock(&hot[k]);
    }
}

static void contender(void *arg) {
    contend(*(long *)arg);
    defergc_wg_done(&wg);
}

/* A plain thread that may ready a goroutine (by unlocking) says so. */
static void *spinner(void *arg) {
    defergc_external_hold();
    contend((long)(intptr_t)arg);
    defergc_external_release();
    return NULL;
}

static void child_locker(void *arg) {
    long i = *(long *)arg;
    defergc_mutex_lock(&child_mutex[i]);
    defergc_mutex_unlock(&child_mutex[i]);
    defergc_wg_done(&child_wg);
}

/* In the child: every semaphore bucket gets a waiter and a release
 * (defergc_mutex is 8 bytes; the table hashes by address). */
static void in_sema_child(void) {
    for (long i = 0; i < CHILD_MUTEXES; i++)
        defergc_mutex_lock(&child_mutex[i]);
    defergc_wg_add(&child_wg, CHILD_MUTEXES);
    for (long i = 0; i < CHILD_MUTEXES; i++)
        CHECK(defergc_go(child_locker, &i, sizeof i) == 0);
    defergc_sleep_ns(2 * 1000 * 1000);
    for (long i = 0; i < CHILD_MUTEXES; i++)
        defergc_mutex_unlock(&child_mutex[i]);
    defergc_wg_wait(&child_wg);
    _exit(0);
}

static void forksema(int n) {
    defergc_wg_add(&wg, CONTENDERS);
    for (long i = 0; i < CONTENDERS; i++)
        CHECK(defergc_go(contender, &i, sizeof i) == 0);
    pthread_t t[SPINNERS];
    for (long i = 0; i < SPINNERS; i++)
        CHECK(pthread_create(&t[i], NULL, spinner, (void *)(intptr_t)i) == 0);
    int failed = 0;
    for (int round = 0; round < n; round++) {
        defergc_sleep_ns(1000 * 1000);
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0)
            in_sema_child();
        failed += wait_child(pid, round);
        if (failed >= 3)
            break; /* enough to fail; each hang costs 10 s */
    }
    churning = 0;
    defergc_wg_wait(&wg);
    for (long i = 0; i < SPINNERS; i++)
        pthread_join(t[i], NULL);
    long total = 0;
    for (int k = 0; k < HOT; k++)
        total += hot_count[k];
    printf("forksema: %d of %d children failed (%ld locks in the parent)\n", failed, n, total);
    fflush(stdout);
    CHECK(failed == 0 && total > 0);
}

/* ---- many ---- */

static defergc_chan *gate;
static long big_mib, big_at = -1;

/* bdwgc's plausible heap range (gc_mark.h); absent without bdwgc. */
extern void *GC_least_plausible_heap_addr __attribute__((weak));
extern void *GC_greatest_plausible_heap_addr __attribute__((weak));
static long in_range, probed;

/* Whether p lies in the range (read while the collector may change it:
 * a snapshot is all this needs). */
static int plausible(const void *p) {
    if (&GC_least_plausible_heap_addr == NULL || &GC_greatest_plausible_heap_addr == NULL)
        return 0;
    return p >= GC_least_plausible_heap_addr && p < GC_greatest_plausible_heap_addr;
}

static void holder(void *args) {
    long i = *(long *)args;
    long *p = defergc_alloc(16);
    CHECK(p != NULL);
    p[0] = i;
    p[1] = ~i;
    long v;
    if (i % 1000 == 0) {
        __atomic_fetch_add(&probed, 1, __ATOMIC_RELAXED);
        if (plausible(&v))
            __atomic_fetch_add(&in_range, 1, __ATOMIC_RELAXED);
    }
    CHECK(!defergc_chan_recv(gate, &v));
    CHECK(p[0] == i && p[1] == ~i);
    defergc_wg_done(&wg);
}

static void many(long n) {
    gate = defergc_chan_make(sizeof(long), 0, 0);
    defergc_wg_add(&wg, (int)n);
    double t0 = now();
    static void *volatile big;
    for (long i = 0; i < n; i++) {
        if (i == big_at) {
            big = defergc_alloc_atomic((size_t)big_mib << 20);
            CHECK(big != NULL);
        }
        CHECK(defergc_go(holder, &i, sizeof i) == 0);
    }
    double t1 = now();
    defergc_chan_close(gate);
    defergc_wg_wait(&wg);
    printf("many: %ld goroutines started in %.1f s, all done in %.1f s\n", n, t1 - t0,
           now() - t0);
    printf("many: %ld of %ld stacks probed in the plausible heap range\n", in_range, probed);
}

static void go_main(void *arg) {
    (void)arg;
    if (strcmp(which, "storm") == 0)
        storm();
    else if (strcmp(which, "bigframe") == 0)
        bigframe();
    else if (strcmp(which, "fork") == 0)
        forks((int)pad);
    else if (strcmp(which, "forksema") == 0)
        forksema((int)pad);
    else if (strcmp(which, "many") == 0)
        many(pad);
    else
        CHECK(!"unknown case");
}

int main(int argc, char **argv) {
    CHECK(argc >= 2);
    which = argv[1];
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc >= 3) {
        seconds = atof(argv[2]);
        pad = atol(argv[2]);
    }
    if (argc >= 5) {
        big_mib = atol(argv[3]);
        big_at = atol(argv[4]);
    }
    return defergc_main(go_main, NULL);
}
