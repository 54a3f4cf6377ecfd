/*
 * Hardware faults in compiled code as Go's run-time panics (see
 * defergc_catch_faults): each case faults as a Go program's main would,
 * and either leaves the fault unrecovered, so the process ends with Go's
 * report (tests/go_faults.rs compares it with tests/go/faults/), or
 * recovers it and prints what recover returned, as tests/go/faults/main.go
 * does for the same case.
 */
#include "common.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <unistd.h>

typedef struct T {
    long a, b;
} T;

static const char *which;
static int quiet, recovered;

/* func nilDeref(p *T) int { return p.b } */
__attribute__((noinline)) static long nil_deref(T *p) {
    return ((volatile T *)p)->b;
}

/* func div(a, b int) int { return a / b } */
__attribute__((noinline)) static long divide(long a, long b) {
    /* (Through memory: GCC turns 1 / b into compares.) */
    volatile long x = a, y = b;
    return x / y;
}

/* A zero the compiler cannot see. */
static volatile long zero;

/* defer func() { r := recover(); fmt.Println("recovered:", r); ... }() */
static void print_recovered(void *args, const defergc_call *call) {
    (void)args;
    defergc_iface v;
    int kind = defergc_recover_iface(call, &v);
    CHECK(kind == DEFERGC_RECOVERED_ERROR && v.type == &defergc_rtype_runtime_error);
    char buf[128] = {0};
    size_t n = v.type->error(v.data, buf, sizeof buf - 1);
    CHECK(n < sizeof buf);
    recovered++;
    if (!quiet) {
        printf("recovered: %s\n", buf);
        fflush(stdout);
    }
}

/* defer func() { panic(recover()) }() */
static void repanic(void *args, const defergc_call *call) {
    (void)args;
    defergc_iface v;
    CHECK(defergc_recover_iface(call, &v) == DEFERGC_RECOVERED_ERROR);
    defergc_panic_iface(v.type, v.data);
}

/* defer fmt.Println(what) */
static void say(void *args, const defergc_call *call) {
    (void)call;
    printf("%s\n", *(const char **)args);
    fflush(stdout);
}

/* func() { defer print_recovered(); fmt.Println(nilDeref(nil)) }() */
static void recover_nil(void) {
    FRAME_OPEN(fr, return);
    defergc_defer(&fr, print_recovered, NULL, 0);
    printf("%ld\n", nil_deref(NULL));
    defergc_frame_leave(&fr);
}

/* func() { defer print_recovered(); fmt.Println(div(1, 0)) }() */
static void recover_div(void) {
    FRAME_OPEN(fr, return);
    defergc_defer(&fr, print_recovered, NULL, 0);
    printf("%ld\n", divide(1, zero));
    defergc_frame_leave(&fr);
}

/* func middle() { defer fmt.Println("middle's deferred call"); nilDeref(nil) } */
__attribute__((noinline)) static void middle(void) {
    FRAME_OPEN(fr, return);
    const char *what = "middle's deferred call";
    defergc_defer(&fr, say, &what, sizeof what);
    nil_deref(NULL);
    defergc_frame_leave(&fr);
}

/* func outer() { defer print_recovered(); middle(); fmt.Println("not reached") } */
static void outer(void) {
    FRAME_OPEN(fr, return);
    defergc_defer(&fr, print_recovered, NULL, 0);
    middle();
    printf("not reached\n");
    defergc_frame_leave(&fr);
}

static defergc_wg wg;

/* go func() { defer wg.Done(); recoverNil() }() */
static void faulting_goroutine(void *args) {
    (void)args;
    recover_nil();
    defergc_wg_done(&wg);
}

static void go_main(void *arg) {
    (void)arg;
    FRAME_OPEN(fr, return);
    if (strcmp(which, "nil") == 0 || strcmp(which, "off") == 0) {
        printf("%ld\n", nil_deref(NULL));
    } else if (strcmp(which, "div") == 0) {
        printf("%ld\n", divide(1, zero));
    } else if (strcmp(which, "addr") == 0) {
        printf("%d\n", *(volatile int *)(uintptr_t)0xdeadbeef);
    } else if (strcmp(which, "repanic") == 0) {
        defergc_defer(&fr, repanic, NULL, 0);
        printf("%ld\n", nil_deref(NULL));
    } else if (strcmp(which, "recover") == 0) {
        recover_nil();
        recover_div();
    } else if (strcmp(which, "unwind") == 0) {
        outer();
        printf("outer returned\n");
    } else if (strcmp(which, "goroutine") == 0) {
        /* Many goroutines fault on their own stacks, at once. */
        enum { N = 64 };
        defergc_wg_add(&wg, N);
        for (int i = 0; i < N; i++)
            CHECK(defergc_go(faulting_goroutine, NULL, 0) == 0);
        defergc_wg_wait(&wg);
        printf("all %d recovered\n", N);
    } else if (strcmp(which, "loop") == 0) {
        /* Faults recovered over and over leave nothing behind. */
        quiet = 1;
        for (int i = 0; i < 10000; i++) {
            recover_nil();
            recover_div();
        }
        printf("recovered %d faults\n", recovered);
    } else {
        CHECK(!"unknown case");
    }
    defergc_frame_leave(&fr);
}

/* ---- faults in code that never deferred ------------------------------ */

/* A nil pointer the compiler cannot see (a literal null store is
 * undefined behaviour that GCC drops or traps). */
static int *volatile nil_int;

/* func storeNil() { var p *int; *p = 1 } */
__attribute__((noinline)) static void store_nil(void) {
    *nil_int = 1;
}

/* func divZero() { fmt.Println(div(1, zero)) } */
__attribute__((noinline)) static void div_zero(void) {
    printf("%ld\n", divide(1, zero));
}

/* A goroutine (or main) that faults without ever entering a frame. */
static void nodefer_nil(void *args) {
    (void)args;
    store_nil();
}

static void nodefer_div(void *args) {
    (void)args;
    div_zero();
}

/* main starts a goroutine that faults, and waits for it forever. */
static void nodefer_go_main(void *arg) {
    CHECK(defergc_go((defergc_go_fn)arg, NULL, 0) == 0);
    for (;;)
        defergc_park("forever");
}

/* ---- a stack overflow inside malloc ----------------------------------- */

/* Recurses without bound, allocating (past the thread cache's sizes, so
 * under the arena's lock) in every frame: the overflow mostly lands inside
 * malloc, and its report must not allocate. */
static volatile uintptr_t depth_limit = UINTPTR_MAX;

__attribute__((noinline)) static uintptr_t recurse_malloc(uintptr_t n) {
    void *volatile p = malloc(4096 + (n & 7) * 512);
    if (n == depth_limit)
        return n;
    return recurse_malloc(n + 1) + (uintptr_t)p;
}

static void overflow_malloc(void *args) {
    (void)args;
    printf("%lu\n", (unsigned long)recurse_malloc(0));
}

/* ---- main returns while another goroutine panics ---------------------- */

static atomic_int panicking;

/* defer func() { panicking = true; ... }(): main may now return. */
static void set_panicking(void *args, const defergc_call *call) {
    (void)args;
    (void)call;
    atomic_store(&panicking, 1);
    usleep(1000);
}

/* go func() { defer setPanicking(); panic(nil) }() */
static void panicker(void *args) {
    (void)args;
    FRAME_OPEN(fr, return);
    defergc_defer(&fr, set_panicking, NULL, 0);
    defergc_panic(NULL);
    defergc_frame_leave(&fr);
}

/* main returns as soon as the other goroutine's panic runs its deferred
 * calls: Go waits for the panic's report and exits with status 2. */
static void return_while_panicking(void *arg) {
    (void)arg;
    CHECK(defergc_go(panicker, NULL, 0) == 0);
    while (!atomic_load(&panicking))
        defergc_gosched();
}

/* ---- panics raised by the runtime ------------------------------------- */

static volatile int after_call;

/* func closeNil() { var c chan int; close(c) } */
__attribute__((noinline)) static void close_nil(void) {
    defergc_chan_close(NULL);
    after_call++; /* (not a tail call: close_nil keeps its frame) */
}

/* func wgNegative() { var wg sync.WaitGroup; wg.Done() } */
__attribute__((noinline)) static void wg_negative(void) {
    static defergc_wg negative;
    defergc_wg_done(&negative);
    after_call++;
}

static void runtime_raised(void *arg) {
    (void)arg;
    if (strcmp(which, "close-nil") == 0)
        close_nil();
    else
        wg_negative();
}

/* ---- how the process ends after an unrecovered panic ----------------- */

/* Must not run: the runtime ends the process with _exit(2), as Go's. */
static void at_exit(void) {
    fprintf(stderr, "atexit handler ran\n");
}

/* Output left in stdio's buffer (stdout is a pipe: fully buffered),
 * then panic(nil): the buffer is flushed before the report. */
static void print_then_panic(void) {
    CHECK(atexit(at_exit) == 0);
    printf("buffered before the panic\n");
    defergc_panic(NULL);
}

static void exit_main(void *arg) {
    (void)arg;
    print_then_panic();
}

static void *exit_thread(void *arg) {
    (void)arg;
    print_then_panic();
    return NULL;
}

/* The "runtime" case's recover: hands the runtime a pointer it cannot
 * write through. */
static void recover_into_bad_pointer(void *args, const defergc_call *call) {
    (void)args;
    defergc_recover_iface(call, (defergc_iface *)(uintptr_t)0x10);
}

/* ---- a handler the program installed before the runtime's ------------ */

/* The program's own SIGSEGV handlers: each says what it got and ends the
 * process with status 42 (write and _exit only: async-signal-safe). */
static void own_say(const char *msg) {
    ssize_t n = write(2, msg, strlen(msg));
    (void)n;
    _exit(42);
}

static void own_handler(int sig, siginfo_t *info, void *ctx) {
    (void)sig;
    (void)ctx;
    own_say(info->si_code > 0 ? "own handler: fault\n" : "own handler: sent\n");
}

static void own_plain_handler(int sig) {
    (void)sig;
    own_say("own plain handler\n");
}

static void install_own(int with_info) {
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sigemptyset(&sa.sa_mask);
    if (with_info) {
        sa.sa_sigaction = own_handler;
        sa.sa_flags = SA_SIGINFO;
    } else {
        sa.sa_handler = own_plain_handler;
    }
    CHECK(sigaction(SIGSEGV, &sa, NULL) == 0);
}

/* A plain thread that never asked for its faults to be caught. */
static void *foreign_thread(void *arg) {
    (void)arg;
    store_nil();
    return NULL;
}

int main(int argc, char **argv) {
    CHECK(argc == 2);
    which = argv[1];
    if (strcmp(which, "off") == 0)
        defergc_catch_faults(0);
    if (strncmp(which, "chain-", 6) == 0) {
        install_own(strcmp(which, "chain-thread") != 0);
        if (strcmp(which, "chain-ours") == 0)
            /* A goroutine's fault is ours: Go's report, not the handler. */
            return defergc_main(nodefer_nil, NULL);
        defergc_catch_faults(1);
        if (strcmp(which, "chain-off") == 0) {
            /* Catching turned off again: the runtime's handler stays. */
            defergc_catch_faults(0);
            store_nil();
        } else if (strcmp(which, "chain-thread") == 0) {
            pthread_t t;
            CHECK(pthread_create(&t, NULL, foreign_thread, NULL) == 0);
            pthread_join(t, NULL);
        } else if (strcmp(which, "chain-kill") == 0) {
            /* Sent, not raised by an instruction: never ours. */
            pthread_kill(pthread_self(), SIGSEGV);
        }
        return 1;
    }
    if (strcmp(which, "runtime") == 0) {
        /* Outside any goroutine, on the process's main thread. */
        defergc_catch_faults(1);
        FRAME_OPEN(fr, return 0);
        defergc_defer(&fr, recover_into_bad_pointer, NULL, 0);
        defergc_panic((void *)0x1234);
    }
    if (strcmp(which, "nil-main") == 0)
        return defergc_main(nodefer_nil, NULL);
    if (strcmp(which, "div-main") == 0)
        return defergc_main(nodefer_div, NULL);
    if (strcmp(which, "nil-go") == 0)
        return defergc_main(nodefer_go_main, (void *)nodefer_nil);
    if (strcmp(which, "div-go") == 0)
        return defergc_main(nodefer_go_main, (void *)nodefer_div);
    if (strcmp(which, "nil-thread") == 0) {
        /* A plain thread that asked for faults to be caught. */
        defergc_init();
        defergc_catch_faults(1);
        store_nil();
        return 0;
    }
    if (strcmp(which, "close-nil") == 0 || strcmp(which, "wg-negative") == 0)
        return defergc_main(runtime_raised, NULL);
    if (strcmp(which, "exit-main") == 0)
        return defergc_main(exit_main, NULL);
    if (strcmp(which, "exit-plain") == 0) {
        /* The process's main thread, outside any goroutine. */
        print_then_panic();
    }
    if (strcmp(which, "exit-thread") == 0) {
        pthread_t t;
        CHECK(defergc_thread_create(&t, NULL, exit_thread, NULL) == 0);
        pthread_join(t, NULL);
        return 0;
    }
    if (strcmp(which, "overflow-malloc") == 0)
        return defergc_main(nodefer_go_main, (void *)overflow_malloc);
    if (strcmp(which, "return-while-panicking") == 0)
        return defergc_main(return_while_panicking, NULL);
    return defergc_main(go_main, NULL);
}
