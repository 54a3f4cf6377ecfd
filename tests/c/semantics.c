/*
 * Go's defer semantics through the C frame protocol, written the way a
 * compiler would emit the Go functions quoted above each one.
 */
#include "common.h"

/* ---- LIFO at return -------------------------------------------------- */

typedef struct {
    int items[16];
    int n;
} Log;

struct log_args {
    Log *log;
    int value;
};

static void log_add(void *args, const defergc_call *call) {
    struct log_args *a = args;
    (void)call;
    a->log->items[a->log->n++] = a->value;
}

/* func lifo(log *Log) { for i := 0; i < 3; i++ { defer log.add(i) }; log.add(9) } */
static void lifo(Log *log) {
    FRAME_OPEN(fr, return);
    for (int i = 0; i < 3; i++) {
        struct log_args a = {log, i};
        defergc_defer(&fr, log_add, &a, sizeof a);
    }
    struct log_args last = {log, 9};
    log_add(&last, NULL);
    defergc_frame_leave(&fr);
}

static void test_lifo_at_return(void) {
    Log log = {{0}, 0};
    lifo(&log);
    CHECK(log.n == 4);
    CHECK(log.items[0] == 9 && log.items[1] == 2 && log.items[2] == 1 && log.items[3] == 0);
}

/* ---- recover only at the right level --------------------------------- */

/* A helper a deferred function calls: it has no token of its own. */
static int helper_recover(void) {
    return defergc_recover(NULL, NULL);
}

struct result_args {
    volatile int *result;
    int *helper_saw;
};

/* defer func() { helper(); if v := recover(); v != nil { r = *v * 10 } }() */
static void recover_times_ten(void *args, const defergc_call *call) {
    struct result_args *a = args;
    *a->helper_saw = helper_recover();
    void *v = NULL;
    int kind = defergc_recover(call, &v);
    if (kind == DEFERGC_RECOVERED_VALUE) {
        *a->result = *(int *)v * 10;
    }
    /* One recover consumes the panic. */
    CHECK(defergc_recover(call, NULL) == DEFERGC_RECOVERED_NOTHING);
}

/* func f() (r int) { defer recoverTimesTen(); panic(&seven) } */
static int panics_seven(int *helper_saw) {
    volatile int r = 0;
    FRAME_OPEN(fr, return r);
    struct result_args a = {&r, helper_saw};
    defergc_defer(&fr, recover_times_ten, &a, sizeof a);
    int *seven = defergc_alloc(sizeof(int));
    *seven = 7;
    defergc_panic(seven);
}

/* A deferred call of a deferred call's own frame, run on that frame's
 * normal return: it may not recover the panic that runs the outer one. */
static void inner_must_not_recover(void *args, const defergc_call *call) {
    int *saw = *(int **)args;
    *saw = defergc_recover(call, NULL);
}

struct outer_args {
    int *inner_saw;
};

static void outer_runs_a_frame(void *args, const defergc_call *call) {
    struct outer_args *a = args;
    (void)call;
    FRAME_OPEN(fr, return);
    defergc_defer(&fr, inner_must_not_recover, &a->inner_saw, sizeof a->inner_saw);
    defergc_frame_leave(&fr);
}

static void recover_anything(void *args, const defergc_call *call) {
    int *kind = *(int **)args;
    *kind = defergc_recover(call, NULL);
}

static void test_recover_only_at_the_right_level(void) {
    int helper_saw = -1;
    CHECK(panics_seven(&helper_saw) == 70);
    CHECK(helper_saw == DEFERGC_RECOVERED_NOTHING);

    /* func g() { defer recoverAnything(); defer outerRunsAFrame(); panic(x) } */
    int inner_saw = -1, outer_kind = -1;
    {
        FRAME_OPEN(fr, goto done);
        int *where = &outer_kind;
        defergc_defer(&fr, recover_anything, &where, sizeof where);
        struct outer_args oa = {&inner_saw};
        defergc_defer(&fr, outer_runs_a_frame, &oa, sizeof oa);
        defergc_panic(defergc_alloc(8));
    }
done:
    CHECK(inner_saw == DEFERGC_RECOVERED_NOTHING);
    CHECK(outer_kind == DEFERGC_RECOVERED_VALUE);

    /* recover outside any panic, with no token: nothing. */
    CHECK(defergc_recover(NULL, NULL) == DEFERGC_RECOVERED_NOTHING);
}

/* ---- re-panic and nested panics -------------------------------------- */

struct capture {
    volatile int kind;
    void *volatile value;
};

static void capture_recover(void *args, const defergc_call *call) {
    struct capture *c = *(struct capture **)args;
    void *v = NULL;
    c->kind = defergc_recover(call, &v);
    c->value = v;
}

static char first_value[] = "first", second_value[] = "second";

/* defer func() { recover(); panic("second") }() */
static void recover_then_repanic(void *args, const defergc_call *call) {
    (void)args;
    void *v = NULL;
    CHECK(defergc_recover(call, &v) == DEFERGC_RECOVERED_VALUE);
    CHECK(v == first_value);
    defergc_panic(second_value);
}

/* defer func() { panic("second") }() -- aborts the first panic. */
static void just_panic(void *args, const defergc_call *call) {
    (void)args;
    (void)call;
    defergc_panic(second_value);
}

/* func outer(kind) { defer capture(&c); inner(kind) } where inner defers
 * the given function and panics "first". */
static void inner_panics(defergc_fn deferred) {
    FRAME_OPEN(fr, return);
    defergc_defer(&fr, deferred, NULL, 0);
    defergc_panic(first_value);
}

static void outer_captures(struct capture *c, defergc_fn deferred) {
    FRAME_OPEN(fr, return);
    defergc_defer(&fr, capture_recover, &c, sizeof c);
    inner_panics(deferred);
    defergc_frame_leave(&fr);
}

static void test_repanic_and_aborted_panics(void) {
    struct capture c = {-1, NULL};
    outer_captures(&c, recover_then_repanic);
    CHECK(c.kind == DEFERGC_RECOVERED_VALUE && c.value == second_value);

    c.kind = -1;
    outer_captures(&c, just_panic);
    CHECK(c.kind == DEFERGC_RECOVERED_VALUE && c.value == second_value);
}

/* ---- a panic raised by a deferred call during a normal return ------- */

static void test_panic_in_deferred_call_during_leave(void) {
    /* func f() { defer capture(&c); defer panic("second"); return } */
    struct capture c = {-1, NULL};
    struct capture *cp = &c;
    volatile int returned_normally = 0;
    FRAME_OPEN(fr, returned_normally = 2; goto out);
    defergc_defer(&fr, capture_recover, &cp, sizeof cp);
    defergc_defer(&fr, just_panic, NULL, 0);
    defergc_frame_leave(&fr);
    returned_normally = 1;
out:
    /* The panic came back to the same frame's loop and was recovered there. */
    CHECK(returned_normally == 1);
    CHECK(c.kind == DEFERGC_RECOVERED_VALUE && c.value == second_value);
}

/* ---- named results changed after a recovery ------------------------- */

struct add_args {
    volatile int *result;
};

/* defer func() { recover(); r += 100 }() */
static void recover_and_add(void *args, const defergc_call *call) {
    struct add_args *a = args;
    defergc_recover(call, NULL);
    *a->result += 100;
}

/* func named() (r int) { defer recoverAndAdd(); r = 5; panic("x") } */
static int named_result(void) {
    volatile int r = 0;
    FRAME_OPEN(fr, return r);
    struct add_args a = {&r};
    defergc_defer(&fr, recover_and_add, &a, sizeof a);
    r = 5;
    defergc_panic(first_value);
}

static void test_named_result_after_recovery(void) {
    CHECK(named_result() == 105);
}

/* ---- nil function, panic(nil) ---------------------------------------- */

static void test_nil_function_and_nil_panic(void) {
    struct capture c = {-1, NULL};
    struct capture *cp = &c;
    volatile int body_finished = 0;
    {
        FRAME_OPEN(fr, goto nil_done);
        defergc_defer(&fr, capture_recover, &cp, sizeof cp);
        defergc_defer(&fr, NULL, NULL, 0); /* defer nilf() */
        body_finished = 1;
        defergc_frame_leave(&fr);
    }
nil_done:
    CHECK(body_finished == 1);
    CHECK(c.kind == DEFERGC_RECOVERED_ERROR);
    CHECK(strcmp((const char *)c.value,
                 "runtime error: invalid memory address or nil pointer dereference") == 0);

    c.kind = -1;
    {
        FRAME_OPEN(fr, goto panic_nil_done);
        defergc_defer(&fr, capture_recover, &cp, sizeof cp);
        defergc_panic(NULL);
    }
panic_nil_done:
    CHECK(c.kind == DEFERGC_RECOVERED_NIL && c.value == NULL);
}

/* ---- Goexit ---------------------------------------------------------- */

static volatile int goexit_deferred_ran, goexit_after;

static void note_ran(void *args, const defergc_call *call) {
    (void)args;
    /* recover returns nothing during Goexit. */
    CHECK(defergc_recover(call, NULL) == DEFERGC_RECOVERED_NOTHING);
    goexit_deferred_ran = 1;
}

static void goexit_inner(void) {
    FRAME_OPEN(fr, return);
    defergc_defer(&fr, note_ran, NULL, 0);
    defergc_goexit();
}

static void *outermost_body(void *arg) {
    (void)arg;
    goexit_inner();
    goexit_after = 1;
    return (void *)1;
}

static void test_goexit_runs_defers_and_ends_the_thread(void) {
    pthread_t t;
    CHECK(defergc_thread_create(&t, NULL, outermost_body, NULL) == 0);
    void *result = (void *)2;
    CHECK(pthread_join(t, &result) == 0);
    CHECK(result == NULL);
    CHECK(goexit_deferred_ran == 1);
    CHECK(goexit_after == 0);
}

/* ---- argument bytes are copied at the defer statement ---------------- */

struct sized {
    Log *log;
    unsigned char bytes[92]; /* 100 bytes in all on 64-bit: a long record */
};

static void check_sized(void *args, const defergc_call *call) {
    struct sized *a = args;
    (void)call;
    int ok = 1;
    for (int i = 0; i < 92; i++) {
        ok &= a->bytes[i] == (unsigned char)(i * 3);
    }
    a->log->items[a->log->n++] = ok ? 100 : -100;
}

static void check_three(void *args, const defergc_call *call) {
    unsigned char *b = args;
    (void)call;
    /* Only the first three bytes were copied; they must be intact. */
    CHECK(b[0] == 'a' && b[1] == 'b' && b[2] == 'c');
}

static void test_arguments_are_copied_when_deferred(void) {
    Log log = {{0}, 0};
    FRAME_OPEN(fr, CHECK(0));
    struct sized s = {&log, {0}};
    for (int i = 0; i < 92; i++) {
        s.bytes[i] = (unsigned char)(i * 3);
    }
    defergc_defer(&fr, check_sized, &s, sizeof s);
    unsigned char three[3] = {'a', 'b', 'c'};
    defergc_defer(&fr, check_three, three, sizeof three);
    struct log_args word = {&log, 7};
    defergc_defer(&fr, log_add, &word, sizeof word);
    /* Changing the originals after the defer changes nothing. */
    memset(s.bytes, 0, sizeof s.bytes);
    memset(three, 0, sizeof three);
    word.value = -7;
    defergc_frame_leave(&fr);
    CHECK(log.n == 2 && log.items[0] == 7 && log.items[1] == 100);
}

int main(void) {
    test_arguments_are_copied_when_deferred();
    test_lifo_at_return();
    test_recover_only_at_the_right_level();
    test_repanic_and_aborted_panics();
    test_panic_in_deferred_call_during_leave();
    test_named_result_after_recovery();
    test_nil_function_and_nil_panic();
    test_goexit_runs_defers_and_ends_the_thread();
    puts("semantics: ok");
    return 0;
}
