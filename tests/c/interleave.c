/*
 * The C half of the Rust -> C -> Rust interleaving test (tests/c_abi.rs).
 * Built as a shared object that the Rust test loads; it reaches the
 * runtime through a table the test passes in (the test binary does not
 * export its symbols), and the macros below keep the code reading like
 * what a compiler emits.
 */
#include "common.h"

struct defergc_api {
    void (*frame_enter)(defergc_frame *);
    void (*defer)(defergc_frame *, defergc_fn, const void *, size_t);
    void (*frame_leave)(defergc_frame *);
    void (*frame_unwind)(defergc_frame *);
    void (*panic)(void *);
    int (*recover)(const defergc_call *, void **);
};

static const struct defergc_api *api;

#define defergc_frame_enter(fr) api->frame_enter(fr)
#define defergc_defer(fr, fn, args, size) api->defer(fr, fn, args, size)
#define defergc_frame_leave(fr) api->frame_leave(fr)
#define defergc_frame_unwind(fr) api->frame_unwind(fr)
#define defergc_panic(v) api->panic(v)
#define defergc_recover(call, v) api->recover(call, v)

void interleave_init(const struct defergc_api *table) {
    api = table;
}

/* A Rust function the C code calls (through ffi::guard on the Rust side). */
typedef int (*rust_callback)(int panic_in_rust);

/* What the C side saw, for the Rust test to check. */
struct outcome {
    char log[16];       /* one letter per event, in order */
    int recovered_kind; /* what C's recovering call got */
    char message[64];   /* its message, for DEFERGC_RECOVERED_ERROR */
};

static void note(struct outcome *o, char c) {
    size_t n = strlen(o->log);
    if (n + 1 < sizeof o->log) {
        o->log[n] = c;
        o->log[n + 1] = 0;
    }
}

static void note_c(void *args, const defergc_call *call) {
    (void)call;
    note(*(struct outcome **)args, 'c');
}

static void recover_in_c(void *args, const defergc_call *call) {
    struct outcome *o = *(struct outcome **)args;
    void *v = NULL;
    o->recovered_kind = defergc_recover(call, &v);
    if (o->recovered_kind == DEFERGC_RECOVERED_ERROR) {
        strncpy(o->message, (const char *)v, sizeof o->message - 1);
    }
    note(o, 'R');
}

struct callback_args {
    struct outcome *o;
    rust_callback cb;
};

/* A deferred call that calls into Rust, which panics. */
static void call_rust_panicking(void *args, const defergc_call *call) {
    struct callback_args *a = args;
    (void)call;
    note(a->o, 'd');
    a->cb(1);
}

#define RECOVER_IN_C 1     /* defer a recovering call in the C frame */
#define PANIC_IN_RUST 2    /* the Rust callback panics */
#define PANIC_IN_C 4       /* the C body panics after the callback */
#define RUST_IN_DEFERRED 8 /* a deferred C call calls Rust, which panics */

static char c_panic_value[] = "c panic";

/* func cMiddle(cb, mode) (r int) { ... ; cb(mode&PANIC_IN_RUST); ... ; return 42 } */
int c_middle(rust_callback cb, int mode, struct outcome *o) {
    volatile int r = 0;
    defergc_frame fr;
    defergc_frame_enter(&fr);
    if (DEFERGC_FRAME_ARM(&fr)) {
        note(o, 'L'); /* a panic landed here */
        defergc_frame_unwind(&fr);
        return r;
    }
    if (mode & RECOVER_IN_C) {
        defergc_defer(&fr, recover_in_c, &o, sizeof o);
    }
    defergc_defer(&fr, note_c, &o, sizeof o);
    if (mode & RUST_IN_DEFERRED) {
        struct callback_args a = {o, cb};
        defergc_defer(&fr, call_rust_panicking, &a, sizeof a);
    }
    note(o, 'b');
    cb((mode & PANIC_IN_RUST) != 0);
    if (mode & PANIC_IN_C) {
        defergc_panic(c_panic_value);
    }
    r = 42;
    defergc_frame_leave(&fr);
    return r;
}

/* The address of the value C panics with, for the Rust side to compare. */
void *c_panic_value_address(void) {
    return c_panic_value;
}
