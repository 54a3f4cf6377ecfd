/*
 * Goroutines from C, as a compiler for a Go-like language would use them
 * (tests/go_c.rs runs each case and checks its output and status).
 *
 *   go basic      go statements with small and large argument blocks,
 *                 park/ready, a channel built on park_unlock, locals
 *   go defer      defer/panic/recover with the C protocol inside 10,000
 *                 goroutines that switch between defers, objects captured
 *                 by deferred calls kept alive by the collector
 *   go stale      a handle kept past its goroutine's end wakes nothing
 *   go syscall    with GOMAXPROCS=1, a goroutine blocked in a system call
 *                 does not stop the others
 *   go preempt    with GOMAXPROCS=1, a goroutine looping on
 *                 DEFERGC_PREEMPT_POINT() lets the goroutine run that ends
 *                 its loop
 *   go panic      an unrecovered panic in a goroutine: Go's report, 2
 *   go deadlock   every goroutine blocked: Go's deadlock report, 2
 *   go goexit     main calls Goexit while another goroutine runs
 *   go overflow   a goroutine recursing without bound: its stack overflow
 *                 message, 2
 */
#include "common.h"

#include <pthread.h>
#include <unistd.h>

/* ---- a tiny channel of words, built on park_unlock ------------------- */

struct waiter {
    defergc_goroutine g;
    uintptr_t value;
    int done;
    struct waiter *next;
};

struct chan {
    pthread_mutex_t lock;
    struct waiter *recvq; /* receivers waiting for a value */
};

static void chan_init(struct chan *c) {
    pthread_mutex_init(&c->lock, NULL);
    c->recvq = NULL;
}

static void unlock_chan(void *arg) {
    pthread_mutex_unlock(&((struct chan *)arg)->lock);
}

/* v := <-c (unbuffered: waits for a sender) */
static uintptr_t chan_recv(struct chan *c) {
    struct waiter w = {defergc_self(), 0, 0, NULL};
    pthread_mutex_lock(&c->lock);
    w.next = c->recvq;
    c->recvq = &w;
    /* The lock is released once we are parked: a sender that takes it
     * finds us parked, or its ready makes our park return at once. */
    CHECK(defergc_park_unlock("chan receive", unlock_chan, c) == 0);
    for (;;) {
        pthread_mutex_lock(&c->lock);
        int done = w.done;
        pthread_mutex_unlock(&c->lock);
        if (done)
            return w.value;
        CHECK(defergc_park("chan receive") == 0);
    }
}

/* c <- v (returns 0 if nobody waits yet; the caller retries) */
static int chan_try_send(struct chan *c, uintptr_t v) {
    pthread_mutex_lock(&c->lock);
    struct waiter *w = c->recvq;
    if (w == NULL) {
        pthread_mutex_unlock(&c->lock);
        return 0;
    }
    c->recvq = w->next;
    w->value = v;
    w->done = 1;
    defergc_goroutine g = w->g;
    pthread_mutex_unlock(&c->lock);
    CHECK(defergc_ready(g) == 1);
    return 1;
}

static void chan_send(struct chan *c, uintptr_t v) {
    while (!chan_try_send(c, v))
        defergc_gosched();
}

/* ---- go basic ----------------------------------------------------------- */

struct small_args {
    struct chan *out;
    uintptr_t x;
};

/* func square(out chan int, x int) { out <- x * x } */
static void square(void *args) {
    struct small_args *a = args;
    uintptr_t *locals = defergc_goroutine_locals();
    CHECK(locals != NULL);
    CHECK(locals[0] == 0);
    locals[0] = a->x; /* goroutine-local: survives switches */
    defergc_gosched();
    CHECK(locals[0] == a->x);
    chan_send(a->out, a->x * a->x);
}

struct big_args {
    struct chan *out;
    uintptr_t words[1000]; /* above the inline argument area */
};

/* func sum(out chan int, words [1000]int) */
static void sum(void *args) {
    struct big_args *a = args;
    uintptr_t total = 0;
    for (int i = 0; i < 1000; i++)
        total += a->words[i];
    defergc_gosched();
    chan_send(a->out, total);
}

static void main_basic(void *arg) {
    (void)arg;
    CHECK(defergc_goid() == 1);
    struct chan c;
    chan_init(&c);
    enum { N = 1000 };
    for (uintptr_t i = 0; i < N; i++) {
        struct small_args a = {&c, i};
        CHECK(defergc_go(square, &a, sizeof a) == 0);
    }
    uintptr_t total = 0;
    for (int i = 0; i < N; i++)
        total += chan_recv(&c);
    CHECK(total == (uintptr_t)(N - 1) * N * (2 * N - 1) / 6);

    struct big_args *b = malloc(sizeof *b);
    b->out = &c;
    for (int i = 0; i < 1000; i++)
        b->words[i] = (uintptr_t)i;
    CHECK(defergc_go(sum, b, sizeof *b) == 0);
    memset(b->words, 0, sizeof b->words); /* the goroutine has its copy */
    free(b);
    CHECK(chan_recv(&c) == 999 * 1000 / 2);

    /* Bad input gets its error code. */
    CHECK(defergc_go(NULL, NULL, 0) == DEFERGC_EINVAL);
    CHECK(defergc_go(square, NULL, 8) == DEFERGC_EINVAL);
    CHECK(defergc_go(square, &c, DEFERGC_GO_MAX_ARGS + 1) == DEFERGC_EARGSIZE);
    CHECK(defergc_go(square, &c, SIZE_MAX) == DEFERGC_EARGSIZE);
    defergc_goroutine forged = {&c, 7};
    CHECK(defergc_ready(forged) == DEFERGC_EINVAL);
    defergc_goroutine null = {NULL, 0};
    CHECK(defergc_ready(null) == DEFERGC_EINVAL);
    printf("basic ok, %llu goroutines left\n", (unsigned long long)defergc_num_goroutine());
}

/* ---- go defer ----------------------------------------------------------- */

struct node {
    uintptr_t value;
    uintptr_t check;
};

struct counter {
    pthread_mutex_t lock;
    long done;
    long recovered;
    long intact;
    defergc_goroutine main;
};

struct recover_args {
    struct counter *c;
    struct node *expected; /* a GC object, kept alive by this record */
};

/* defer func() { if r := recover(); r == expected { c.recovered++ } }() */
static void recover_it(void *args, const defergc_call *call) {
    struct recover_args *a = args;
    void *v = NULL;
    int kind = defergc_recover(call, &v);
    pthread_mutex_lock(&a->c->lock);
    if (kind == DEFERGC_RECOVERED_VALUE && v == a->expected)
        a->c->recovered++;
    if (a->expected->check == ~a->expected->value)
        a->c->intact++;
    pthread_mutex_unlock(&a->c->lock);
}

struct done_args {
    struct counter *c;
};

/* defer wg.Done() */
static void done(void *args, const defergc_call *call) {
    (void)call;
    struct counter *c = ((struct done_args *)args)->c;
    pthread_mutex_lock(&c->lock);
    long n = ++c->done;
    defergc_goroutine main = c->main;
    pthread_mutex_unlock(&c->lock);
    if (n == 10000)
        defergc_ready(main);
}

struct worker_args {
    struct counter *c;
    uintptr_t i;
};

/* func worker(c *counter, i int) {
 *     defer wg.Done()
 *     n := &node{i, ^i}
 *     defer func() { recover() ... }()
 *     runtime.Gosched(); runtime.GC() sometimes
 *     panic(n)
 * } */
static void worker(void *args) {
    struct worker_args *a = args;
    FRAME_OPEN(fr, return);
    struct done_args d = {a->c};
    defergc_defer(&fr, done, &d, sizeof d);
    struct node *n = defergc_alloc(sizeof *n);
    n->value = a->i;
    n->check = ~a->i;
    struct recover_args r = {a->c, n};
    defergc_defer(&fr, recover_it, &r, sizeof r);
    n = NULL; /* only the record holds it now */
    defergc_gosched(); /* may continue on another worker thread */
    if (a->i % 1000 == 0)
        defergc_collect();
    defergc_panic(r.expected);
}

static void main_defer(void *arg) {
    (void)arg;
    struct counter c = {PTHREAD_MUTEX_INITIALIZER, 0, 0, 0, defergc_self()};
    for (uintptr_t i = 0; i < 10000; i++) {
        struct worker_args a = {&c, i};
        CHECK(defergc_go(worker, &a, sizeof a) == 0);
    }
    for (;;) {
        pthread_mutex_lock(&c.lock);
        long n = c.done;
        pthread_mutex_unlock(&c.lock);
        if (n == 10000)
            break;
        defergc_park("wait group");
    }
    CHECK(c.recovered == 10000);
    CHECK(c.intact == 10000);
    printf("defer ok: %ld recovered\n", c.recovered);
}

/* ---- go stale ------------------------------------------------------------- */

static defergc_goroutine first_handle;

static void remember(void *args) {
    (void)args;
    first_handle = defergc_self();
}

static volatile int woke_wrongly;

static void sleeper(void *args) {
    volatile int *parked = *(volatile int **)args;
    *parked = 1;
    defergc_park("sleep");
    woke_wrongly = 1;
}

static void main_stale(void *arg) {
    (void)arg;
    CHECK(defergc_go(remember, NULL, 0) == 0);
    while (first_handle.g == NULL)
        defergc_gosched();
    /* Let it finish, then start goroutines that reuse its stack slot. */
    for (int i = 0; i < 10; i++)
        defergc_gosched();
    static volatile int parked[64];
    for (int i = 0; i < 64; i++) {
        volatile int *p = &parked[i];
        CHECK(defergc_go(sleeper, &p, sizeof p) == 0);
    }
    for (int i = 0; i < 64; i++)
        while (!parked[i])
            defergc_gosched();
    /* The first goroutine has ended: its handle wakes nothing. */
    CHECK(defergc_ready(first_handle) == 0);
    for (int i = 0; i < 100; i++)
        defergc_gosched();
    CHECK(!woke_wrongly);
    printf("stale ok\n");
}

/* ---- go syscall --------------------------------------------------------- */

static volatile int ticks;

static void ticker(void *args) {
    (void)args;
    for (int i = 0; i < 1000; i++) {
        ticks++;
        defergc_gosched();
    }
}

static void blocker(void *args) {
    volatile int *state = *(volatile int **)args;
    defergc_enter_syscall();
    *state = 1;
    while (ticks < 1000) /* blocks its thread until the ticker is done */
        usleep(1000);
    defergc_exit_syscall();
    *state = 2;
}

static void main_syscall(void *arg) {
    (void)arg;
    static volatile int state;
    volatile int *p = &state;
    CHECK(defergc_go(blocker, &p, sizeof p) == 0);
    while (state == 0)
        defergc_gosched();
    CHECK(defergc_go(ticker, NULL, 0) == 0);
    while (state != 2)
        defergc_gosched();
    printf("syscall ok: %d ticks while a goroutine blocked\n", ticks);
}

/* ---- go preempt --------------------------------------------------------- */

static volatile int stop_spinning, spinner_done;

static void stopper(void *args) {
    (void)args;
    stop_spinning = 1;
}

static void spinner(void *args) {
    (void)args;
    /* Queued behind this goroutine on the one processor: it runs only if
     * the loop below yields. */
    CHECK(defergc_go(stopper, NULL, 0) == 0);
    unsigned long spins = 0;
    while (!stop_spinning) {
        spins++;
        DEFERGC_PREEMPT_POINT();
    }
    spinner_done = 1;
}

static void main_preempt(void *arg) {
    (void)arg;
    CHECK(defergc_go(spinner, NULL, 0) == 0);
    while (!spinner_done)
        defergc_gosched();
    printf("preempt ok\n");
}

/* ---- the process-ending cases --------------------------------------------- */

static void panicker(void *args) {
    (void)args;
    defergc_panic(NULL);
}

static void main_panic(void *arg) {
    (void)arg;
    printf("before the panic\n");
    CHECK(defergc_go(panicker, NULL, 0) == 0);
    for (;;)
        defergc_park("forever");
}

static void waiter(void *args) {
    (void)args;
    defergc_park("chan receive");
}

static void main_deadlock(void *arg) {
    (void)arg;
    CHECK(defergc_go(waiter, NULL, 0) == 0);
    defergc_park("chan receive");
}

static void runs_on(void *args) {
    (void)args;
    for (int i = 0; i < 100; i++)
        defergc_gosched();
    printf("the other goroutine finished\n");
}

static void main_goexit(void *arg) {
    (void)arg;
    CHECK(defergc_go(runs_on, NULL, 0) == 0);
    defergc_goexit();
}

static volatile uintptr_t depth_limit = UINTPTR_MAX;

/* Recurses until depth_limit (never, in practice). */
static uintptr_t recurse(uintptr_t n) {
    volatile char pad[256];
    pad[0] = (char)n;
    if (n == depth_limit)
        return n;
    return recurse(n + 1) + pad[0];
}

static void overflow(void *args) {
    (void)args;
    printf("%lu\n", (unsigned long)recurse(0));
}

static void main_overflow(void *arg) {
    (void)arg;
    CHECK(defergc_go(overflow, NULL, 0) == 0);
    for (;;)
        defergc_park("forever");
}

int main(int argc, char **argv) {
    const char *mode = argc > 1 ? argv[1] : "basic";
    static const struct {
        const char *name;
        void (*entry)(void *);
    } modes[] = {
        {"basic", main_basic},     {"defer", main_defer},       {"stale", main_stale},
        {"syscall", main_syscall}, {"panic", main_panic},       {"deadlock", main_deadlock},
        {"goexit", main_goexit},   {"overflow", main_overflow}, {"preempt", main_preempt},
    };
    void (*entry)(void *) = NULL;
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++)
        if (!strcmp(mode, modes[i].name))
            entry = modes[i].entry;
    CHECK(entry != NULL);
    int status = defergc_main(entry, NULL);
    printf("main returned %d\n", status);
    return status;
}
