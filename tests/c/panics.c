/*
 * Typed panic values from compiled code (defergc_panic_iface): each case
 * panics as a Go program's main would, unrecovered, so the process ends
 * with Go's report (tests/go_panics.rs compares it with what Go prints,
 * tests/go/panics/), or recovers and checks what recover returned.
 */
#include "common.h"

/* Descriptors as a compiler would emit them for these Go types. */
static const defergc_rtype t_string = {sizeof(defergc_rtype), "string", DEFERGC_KIND_STRING, NULL, NULL};
static const defergc_rtype t_int = {sizeof(defergc_rtype), "int", DEFERGC_KIND_INT, NULL, NULL};
static const defergc_rtype t_float64 = {sizeof(defergc_rtype), "float64", DEFERGC_KIND_FLOAT64, NULL, NULL};
static const defergc_rtype t_celsius = {sizeof(defergc_rtype), "main.Celsius", DEFERGC_KIND_FLOAT64, NULL, NULL};
static const defergc_rtype t_s = {sizeof(defergc_rtype), "main.S", DEFERGC_KIND_STRING, NULL, NULL};
static const defergc_rtype t_struct = {sizeof(defergc_rtype), "main.T", 0, NULL, NULL};

/* func (e *errorString) Error() string { return e.s } */
static size_t error_text(const void *data, char *buf, size_t cap) {
    const defergc_string *s = data;
    size_t n = s->len < cap ? s->len : cap;
    memcpy(buf, s->ptr, n);
    return s->len;
}
static const defergc_rtype t_error = {sizeof(defergc_rtype), "*errors.errorString", 0, error_text, NULL};

/* func (St) String() string { return "stringer!" } */
static size_t stringer_text(const void *data, char *buf, size_t cap) {
    (void)data;
    const char *s = "stringer!";
    size_t n = strlen(s) < cap ? strlen(s) : cap;
    memcpy(buf, s, n);
    return strlen(s);
}
static const defergc_rtype t_stringer = {sizeof(defergc_rtype), "main.St", 0, NULL, stringer_text};

static defergc_string *gostr(const char *s) {
    defergc_string *g = defergc_alloc(sizeof *g);
    g->ptr = s;
    g->len = strlen(s);
    return g;
}

static const char *which;

/* defer func() { panic(recover()) }() */
static void repanic(void *args, const defergc_call *call) {
    (void)args;
    defergc_iface v;
    CHECK(defergc_recover_iface(call, &v) == DEFERGC_RECOVERED_IFACE);
    defergc_panic_iface(v.type, v.data);
}

/* defer func() { panic("second") }() */
static void panic_second(void *args, const defergc_call *call) {
    (void)args;
    (void)call;
    defergc_panic_iface(&t_string, gostr("second"));
}

/* defer func() { recover(); panic("second") }() */
static void recover_then_second(void *args, const defergc_call *call) {
    (void)args;
    CHECK(defergc_recover_iface(call, NULL) == DEFERGC_RECOVERED_IFACE);
    defergc_panic_iface(&t_string, gostr("second"));
}

/* Recovered values come back as they went. */
static int checked;
static void check_recovered(void *args, const defergc_call *call) {
    (void)args;
    defergc_iface v;
    int kind = defergc_recover_iface(call, &v);
    if (strcmp(which, "recover-iface") == 0) {
        CHECK(kind == DEFERGC_RECOVERED_IFACE && v.type == &t_int && *(long *)v.data == 42);
    } else if (strcmp(which, "recover-runtime-error") == 0) {
        CHECK(kind == DEFERGC_RECOVERED_ERROR && v.type == &defergc_rtype_runtime_error);
        char buf[64] = {0};
        size_t n = v.type->error(v.data, buf, sizeof buf - 1);
        CHECK(n == strlen("close of nil channel") && strcmp(buf, "close of nil channel") == 0);
    } else if (strcmp(which, "recover-pointer") == 0) {
        CHECK(kind == DEFERGC_RECOVERED_VALUE && v.type == &defergc_rtype_unsafe_pointer &&
              v.data == (void *)0x1234);
    } else if (strcmp(which, "recover-nil") == 0) {
        CHECK(kind == DEFERGC_RECOVERED_NIL && v.type == NULL && v.data == NULL);
    }
    checked = 1;
}

/* func inner() { panic(42) } -- a frame with no deferred calls */
__attribute__((noinline)) static void inner(void) {
    static long v = 42;
    defergc_panic_iface(&t_int, &v);
}

/* func middle() { inner() } */
__attribute__((noinline)) static void middle(void) {
    inner();
    __asm__ volatile("");
}

/* func outer() { defer nothing(); middle() } */
__attribute__((noinline)) static void outer(void) {
    FRAME_OPEN(fr, return);
    defergc_defer(&fr, nothing, NULL, 0);
    middle();
    defergc_frame_leave(&fr);
}

/* A goroutine that waits for good, for GOTRACEBACK=all. */
static void waits(void *args) {
    (void)args;
    defergc_chan_recv(defergc_chan_make(8, 0, 0), NULL);
}

static void go_main(void *arg) {
    (void)arg;
    FRAME_OPEN(fr, CHECK(checked); printf("%s ok\n", which); return);
    static long forty_two = 42;
    static double f25 = 2.5, c15 = 1.5;
    static struct { long x; } t1 = {1};
    if (strcmp(which, "str") == 0) {
        defergc_panic_iface(&t_string, gostr("hello\nworld"));
    } else if (strcmp(which, "int") == 0) {
        defergc_panic_iface(&t_int, &forty_two);
    } else if (strcmp(which, "err") == 0) {
        defergc_panic_iface(&t_error, gostr("boom"));
    } else if (strcmp(which, "struct") == 0) {
        defergc_panic_iface(&t_struct, &t1);
    } else if (strcmp(which, "named") == 0) {
        defergc_panic_iface(&t_celsius, &c15);
    } else if (strcmp(which, "nstr") == 0) {
        defergc_panic_iface(&t_s, gostr("x"));
    } else if (strcmp(which, "stringer") == 0) {
        defergc_panic_iface(&t_stringer, NULL);
    } else if (strcmp(which, "float") == 0) {
        defergc_panic_iface(&t_float64, &f25);
    } else if (strcmp(which, "repanic") == 0) {
        defergc_defer(&fr, repanic, NULL, 0);
        defergc_panic_iface(&t_string, gostr("first"));
    } else if (strcmp(which, "nested") == 0) {
        defergc_defer(&fr, panic_second, NULL, 0);
        defergc_panic_iface(&t_string, gostr("first"));
    } else if (strcmp(which, "recovered-then-other") == 0) {
        defergc_defer(&fr, recover_then_second, NULL, 0);
        defergc_panic_iface(&t_string, gostr("first"));
    } else if (strcmp(which, "nil") == 0) {
        defergc_panic_iface(NULL, NULL);
    } else if (strcmp(which, "pointer") == 0) {
        defergc_panic((void *)0x1234);
    } else if (strcmp(which, "trace") == 0) {
        CHECK(defergc_go(waits, NULL, 0) == 0);
        defergc_gosched();
        outer();
    } else {
        defergc_defer(&fr, check_recovered, NULL, 0);
        if (strcmp(which, "recover-iface") == 0)
            defergc_panic_iface(&t_int, &forty_two);
        else if (strcmp(which, "recover-runtime-error") == 0)
            defergc_chan_close(NULL);
        else if (strcmp(which, "recover-pointer") == 0)
            defergc_panic((void *)0x1234);
        else if (strcmp(which, "recover-nil") == 0)
            defergc_panic_iface(NULL, NULL);
    }
    defergc_frame_leave(&fr);
}

int main(int argc, char **argv) {
    CHECK(argc == 2);
    which = argv[1];
    return defergc_main(go_main, NULL);
}
