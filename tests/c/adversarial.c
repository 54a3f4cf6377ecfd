/*
 * The C ABI under attack: every function of include/defergc.h with NULL,
 * forged, stale, huge and out-of-order inputs, one case per process
 * (tests/misuse.rs runs each and checks its status and its words).
 *
 * A case either misuses the ABI and must end with the library's own
 * answer (an abort whose message starts with "defergc:" and names the
 * misuse, or Go's panic or fatal error with status 2), or checks the
 * error codes of several misuses itself and prints "ok". `list` prints
 * every case, so the harness can insist that each has an expectation.
 */
#include "common.h"

#include <unistd.h>

#include <errno.h>
#include <pthread.h>

#define OK() (printf("ok\n"), fflush(stdout))

/* ---- the collector ------------------------------------------------------ */

static void free_malloc(void) {
    void *p = malloc(32);
    defergc_free(p);
}

static void free_stack(void) {
    char b[32];
    defergc_free(b);
}

static void free_interior(void) {
    char *p = defergc_alloc_uncollectable(64);
    defergc_free(p + 16);
}

static void free_twice(void) {
    void *p = defergc_alloc_uncollectable(32);
    defergc_free(p);
    defergc_free(p);
}

static void free_twice_collectable(void) {
    void *p = defergc_alloc(32);
    defergc_free(p);
    defergc_free(p);
}

static void free_forged(void) { defergc_free((void *)16); }

static void realloc_malloc(void) { defergc_realloc(malloc(32), 64); }

static void realloc_freed(void) {
    void *p = defergc_alloc(32);
    defergc_free(p);
    defergc_realloc(p, 64);
}

static void alloc_codes(void) {
    CHECK(defergc_alloc(SIZE_MAX) == NULL);
    CHECK(defergc_alloc(SIZE_MAX - 15) == NULL);
    CHECK(defergc_alloc_atomic(SIZE_MAX) == NULL);
    CHECK(defergc_alloc_uncollectable(SIZE_MAX) == NULL);
    char *p = defergc_alloc(16);
    strcpy(p, "kept");
    CHECK(defergc_realloc(p, SIZE_MAX) == NULL);
    CHECK(strcmp(p, "kept") == 0); /* untouched, as C's realloc */
    defergc_free(NULL);            /* ignored */
    void *q = defergc_realloc(NULL, 8);
    CHECK(q != NULL);
    /* Freed memory is not handed out again while it waits in quarantine. */
    void *r = defergc_alloc_uncollectable(32);
    defergc_free(r);
    for (int i = 0; i < 8; i++)
        CHECK(defergc_alloc_uncollectable(32) != r);
    CHECK(defergc_get_stats(NULL) == DEFERGC_EINVAL);
    OK();
}

static void *thread_body(void *arg) { return arg; }

static void thread_codes(void) {
    pthread_t t;
    CHECK(defergc_thread_create(&t, NULL, NULL, NULL) == EINVAL);
    CHECK(defergc_thread_create(NULL, NULL, thread_body, NULL) == EINVAL);
    /* Unregistering a thread that never registered, and twice. */
    defergc_unregister_thread();
    defergc_unregister_thread();
    defergc_register_thread();
    defergc_register_thread();
    CHECK(defergc_alloc(8) != NULL);
    OK();
}

/* ---- CPU profiles and labels -------------------------------------------- */

static void pprof_codes(void) {
    CHECK(defergc_stop_cpu_profile() == DEFERGC_ENOTPROFILING);
    CHECK(defergc_start_cpu_profile(NULL) == DEFERGC_EINVAL);
    CHECK(defergc_start_cpu_profile("/nonexistent-dir/cpu.pprof") == DEFERGC_EIO);
    CHECK(defergc_start_cpu_profile_fd(-1) == DEFERGC_EINVAL);
    CHECK(defergc_start_cpu_profile_fd(987654) == DEFERGC_EINVAL);
    CHECK(defergc_set_cpu_profile_rate(0) == DEFERGC_EINVAL);
    CHECK(defergc_set_cpu_profile_rate(-5) == DEFERGC_EINVAL);
    CHECK(defergc_set_cpu_profile_rate(2000000) == DEFERGC_EINVAL);
    CHECK(defergc_set_goroutine_labels(NULL, 2) == DEFERGC_EINVAL);
    const char *null_value[] = {"key", NULL};
    CHECK(defergc_set_goroutine_labels(null_value, 1) == DEFERGC_EINVAL);
    const char *bad_utf8[] = {"key", "\xff\xfe"};
    CHECK(defergc_set_goroutine_labels(bad_utf8, 1) == DEFERGC_EINVAL);
    CHECK(defergc_set_goroutine_labels(NULL, 0) == 0);
    const char *kv[] = {"k", "v"};
    CHECK(defergc_do_with_labels(kv, 1, NULL, NULL) == DEFERGC_EINVAL);
    FILE *sink = fopen("/dev/null", "w");
    CHECK(sink != NULL);
    CHECK(defergc_start_cpu_profile_fd(fileno(sink)) == 0);
    CHECK(defergc_start_cpu_profile_fd(fileno(sink)) == DEFERGC_EALREADY);
    CHECK(defergc_stop_cpu_profile() == 0);
    CHECK(defergc_stop_cpu_profile() == DEFERGC_ENOTPROFILING);
    fclose(sink);
    OK();
}

/* ---- thread-local slots ------------------------------------------------- */

static void tls_get_forged(void) { defergc_tls_get((defergc_tls_key)0x7fffffff); }

static void tls_codes(void) {
    CHECK(defergc_tls_create(NULL, NULL) == DEFERGC_EINVAL);
    CHECK(defergc_tls_set((defergc_tls_key)987654321, NULL) == DEFERGC_EINVAL);
    CHECK(defergc_tls_set((defergc_tls_key)0, NULL) == DEFERGC_EINVAL);
    defergc_tls_key k;
    CHECK(defergc_tls_create(&k, NULL) == DEFERGC_OK);
    CHECK(defergc_tls_set(k, (void *)7) == DEFERGC_OK);
    CHECK(defergc_tls_get(k) == (void *)7);
    OK();
}

/* ---- defer frames ------------------------------------------------------- */

static defergc_frame *target;

static void leave_target(void *args, const defergc_call *call) {
    (void)args;
    (void)call;
    defergc_frame_leave(target);
}

static void unwind_target(void *args, const defergc_call *call) {
    (void)args;
    (void)call;
    defergc_frame_unwind(target);
}

static void leave_in_own_defer(void) {
    FRAME_OPEN(fr, return);
    target = &fr;
    defergc_defer(&fr, leave_target, NULL, 0);
    defergc_frame_leave(&fr);
}

static void unwind_in_own_defer(void) {
    FRAME_OPEN(fr, return);
    target = &fr;
    defergc_defer(&fr, unwind_target, NULL, 0);
    defergc_panic(NULL);
}

static void defer_size(size_t size) {
    defergc_frame fr;
    char args[16] = {0};
    defergc_frame_enter(&fr);
    defergc_defer(&fr, nothing, args, size);
}

static void defer_size_max(void) { defer_size(SIZE_MAX); }
static void defer_size_max7(void) { defer_size(SIZE_MAX - 7); }
static void defer_size_4g(void) { defer_size((size_t)1 << 32); }
static void defer_size_limit(void) { defer_size(DEFERGC_DEFER_MAX_ARGS + 1); }

static void defer_null_args(void) {
    defergc_frame fr;
    defergc_frame_enter(&fr);
    defergc_defer(&fr, nothing, NULL, 8);
}

static void enter_null(void) { defergc_frame_enter(NULL); }
static void leave_null(void) { defergc_frame_leave(NULL); }
static void unwind_null(void) { defergc_frame_unwind(NULL); }

static void enter_twice(void) {
    defergc_frame fr;
    defergc_frame_enter(&fr);
    defergc_frame_enter(&fr);
}

__attribute__((noinline)) static void returns_without_leaving(void) {
    FRAME_OPEN(fr, return);
}

static void no_leave_then_panic(void) {
    returns_without_leaving();
    defergc_panic(NULL);
}

static void no_leave_then_again(void) {
    /* The next call's frame sits where the forgotten one is (a loop: not
     * a tail call, which would move it). */
    for (int i = 0; i < 2; i++)
        returns_without_leaving();
    puts("not reached");
}

static void leave_after_landing(void) {
    defergc_frame fr;
    defergc_frame_enter(&fr);
    if (DEFERGC_FRAME_ARM(&fr)) {
        defergc_frame_leave(&fr);
        return;
    }
    defergc_panic(NULL);
}

static void defer_after_landing(void) {
    defergc_frame fr;
    defergc_frame_enter(&fr);
    if (DEFERGC_FRAME_ARM(&fr)) {
        defergc_defer(&fr, nothing, NULL, 0);
        return;
    }
    defergc_panic(NULL);
}

static void defer_forged_frame(void) {
    defergc_frame fr;
    memset(&fr, 0xff, sizeof fr);
    defergc_defer(&fr, nothing, NULL, 0);
}

/* Recover tokens: a stale one (its call is over, a new call sits at the
 * same address), a forged one, NULL, and one of another thread. */
static const defergc_call *saved;
static int seen_kind = -1;

static void save_token(void *args, const defergc_call *call) {
    (void)args;
    saved = call;
}

static void recover_with_saved(void *args, const defergc_call *call) {
    (void)args;
    (void)call;
    void *v;
    seen_kind = defergc_recover(saved, &v);
    /* The real token still works after the stale one was refused. */
    CHECK(defergc_recover(call, &v) == DEFERGC_RECOVERED_VALUE);
    CHECK(v == (void *)0x5678);
}

__attribute__((noinline)) static void frame_saving_token(void) {
    FRAME_OPEN(fr, return);
    defergc_defer(&fr, save_token, NULL, 0);
    defergc_frame_leave(&fr);
}

__attribute__((noinline)) static void frame_using_token(void) {
    FRAME_OPEN(fr, return);
    defergc_defer(&fr, recover_with_saved, NULL, 0);
    defergc_panic((void *)0x5678);
}

static void *save_token_thread(void *arg) {
    (void)arg;
    frame_saving_token();
    return NULL;
}

static void recover_codes(void) {
    frame_saving_token();
    frame_using_token();
    CHECK(seen_kind == DEFERGC_RECOVERED_NOTHING); /* stale */
    saved = (const defergc_call *)0x1234;
    frame_using_token();
    CHECK(seen_kind == DEFERGC_RECOVERED_NOTHING); /* forged */
    saved = NULL;
    frame_using_token();
    CHECK(seen_kind == DEFERGC_RECOVERED_NOTHING); /* NULL */
    pthread_t t;
    CHECK(defergc_thread_create(&t, NULL, save_token_thread, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    frame_using_token();
    CHECK(seen_kind == DEFERGC_RECOVERED_NOTHING); /* another thread's */
    /* Outside any deferred call. */
    CHECK(defergc_recover(NULL, NULL) == DEFERGC_RECOVERED_NOTHING);
    OK();
}

static void goexit_main_thread(void) { defergc_goexit(); }

static void panic_no_frame(void) { defergc_panic(NULL); }

/* ---- the low-level chain -------------------------------------------------- */

static void record_alloc_max(void) { defergc_record_alloc(SIZE_MAX); }
static void record_alloc_huge(void) { defergc_record_alloc((size_t)1 << 40); }

static void record_codes(void) {
    char stack_bytes[64];
    CHECK(defergc_record_free(NULL) == DEFERGC_EINVAL);
    CHECK(defergc_record_free((void *)1) == DEFERGC_ENOTRECORD);
    CHECK(defergc_record_free((void *)-16) == DEFERGC_ENOTRECORD);
    CHECK(defergc_record_free((void *)4096) == DEFERGC_ENOTRECORD);
    CHECK(defergc_record_free(stack_bytes + 16) == DEFERGC_ENOTRECORD);
    CHECK(defergc_record_free((char *)malloc(64) + 16) == DEFERGC_ENOTRECORD);
    char *gc = defergc_alloc(64);
    CHECK(defergc_record_free(gc) == DEFERGC_ENOTRECORD);
    CHECK(defergc_record_free(gc + 16) == DEFERGC_ENOTRECORD);
    char *r = defergc_record_alloc(40);
    CHECK(defergc_record_free(r + 8) == DEFERGC_ENOTRECORD);
    CHECK(defergc_record_free(r) == DEFERGC_OK);
    CHECK(defergc_record_free(r) == DEFERGC_EDOUBLEFREE);
    void *zero = defergc_record_alloc(0);
    CHECK(zero != NULL);
    CHECK(defergc_record_free(zero) == DEFERGC_OK);
    /* The head word holds anything, and forgets it when cleared. */
    defergc_defer_head_set((void *)0xdead);
    CHECK(defergc_defer_head_get() == (void *)0xdead);
    defergc_defer_head_clear();
    CHECK(defergc_defer_head_get() == NULL);
    OK();
}

/* ---- goroutines ------------------------------------------------------------ */

/* Runs `body` as the goroutine main (Go's func main). */
static void in_main(void (*body)(void *)) { defergc_main(body, NULL); }

static void go_main_body(void *arg) { (void)arg; }

static void main_null(void) { defergc_main(NULL, NULL); }

static void nested_main_body(void *arg) {
    (void)arg;
    defergc_main(go_main_body, NULL);
}

static void main_nested(void) { in_main(nested_main_body); }

static void go_body(void *args) { (void)args; }

static void unlock_nothing(void *arg) { (void)arg; }

static void go_codes_body(void *arg) {
    (void)arg;
    char args[16] = {0};
    CHECK(defergc_go(NULL, NULL, 0) == DEFERGC_EINVAL);
    CHECK(defergc_go(go_body, NULL, 8) == DEFERGC_EINVAL);
    CHECK(defergc_go(go_body, args, SIZE_MAX) == DEFERGC_EARGSIZE);
    CHECK(defergc_go(go_body, args, DEFERGC_GO_MAX_ARGS + 1) == DEFERGC_EARGSIZE);
    CHECK(defergc_park_unlock("x", NULL, NULL) == DEFERGC_EINVAL);
    defergc_goroutine forged = {(void *)0x1234, 99};
    CHECK(defergc_ready(forged) == DEFERGC_EINVAL);
    defergc_goroutine null = {NULL, 0};
    CHECK(defergc_ready(null) == DEFERGC_EINVAL);
    defergc_goroutine heap = {defergc_alloc(64), 3};
    CHECK(defergc_ready(heap) == DEFERGC_EINVAL);
    defergc_goroutine me = defergc_self();
    defergc_goroutine wrong_id = {me.g, me.id + 1000};
    CHECK(defergc_ready(wrong_id) == 0); /* a stale handle: wakes nothing */
    defergc_exit_syscall();               /* without an enter: nothing */
    CHECK(defergc_goroutine_locals() != NULL);
    OK();
}

static void go_codes(void) { in_main(go_codes_body); }

static void unlock_that_panics(void *arg) {
    (void)arg;
    defergc_panic("from unlock");
}

static void unlock_that_parks(void *arg) {
    (void)arg;
    defergc_park("again");
}

/* The unlock function park_unlock_body parks with. */
static void (*park_unlock_with)(void *);

static void park_unlock_body(void *arg) {
    (void)arg;
    defergc_park_unlock("x", park_unlock_with, NULL);
}

static void park_unlock_panics(void) {
    park_unlock_with = unlock_that_panics;
    in_main(park_unlock_body);
}

static void park_unlock_parks(void) {
    park_unlock_with = unlock_that_parks;
    in_main(park_unlock_body);
}

static void outside_goroutine_codes(void) {
    CHECK(defergc_park("x") == DEFERGC_ENOTGOROUTINE);
    CHECK(defergc_park_unlock("x", unlock_nothing, NULL) == DEFERGC_ENOTGOROUTINE);
    CHECK(defergc_goroutine_locals() == NULL);
    CHECK(defergc_goid() == 0);
    defergc_goroutine me = defergc_self();
    CHECK(me.g == NULL && me.id == 0);
    defergc_enter_syscall();
    defergc_exit_syscall();
    defergc_gosched();
    OK();
}

static void external_release_unheld(void) { defergc_external_release(); }

/* ---- channels, select, timers ----------------------------------------------- */

static void send_closed_body(void *arg) {
    (void)arg;
    defergc_chan *c = defergc_chan_make(8, 0, 1);
    defergc_chan_close(c);
    long v = 1;
    defergc_chan_send(c, &v);
}
static void send_closed(void) { in_main(send_closed_body); }

static void close_closed_body(void *arg) {
    (void)arg;
    defergc_chan *c = defergc_chan_make(8, 0, 0);
    defergc_chan_close(c);
    defergc_chan_close(c);
}
static void close_closed(void) { in_main(close_closed_body); }

static void close_nil_body(void *arg) {
    (void)arg;
    defergc_chan_close(NULL);
}
static void close_nil(void) { in_main(close_nil_body); }

static void make_huge_body(void *arg) {
    (void)arg;
    defergc_chan_make(8, 0, SIZE_MAX / 4);
}
static void chan_make_huge(void) { in_main(make_huge_body); }

static void make_elem_body(void *arg) {
    (void)arg;
    defergc_chan_make(65537, 0, 1);
}
static void chan_make_elem_too_big(void) { in_main(make_elem_body); }

/* Go's makechan limits, one case each: an element of 1<<16 bytes (Go
 * refuses that size already), a negative cap (above PTRDIFF_MAX, refused
 * even for zero-sized elements), a buffer over the largest allocation. */
static void make_elem_64k_body(void *arg) {
    (void)arg;
    defergc_chan_make(65536, 1, 0);
}
static void chan_make_elem_64k(void) { in_main(make_elem_64k_body); }

static void make_negative_body(void *arg) {
    (void)arg;
    defergc_chan_make(0, 0, (size_t)PTRDIFF_MAX + 1);
}
static void chan_make_negative(void) { in_main(make_negative_body); }

static void make_over_max_alloc_body(void *arg) {
    (void)arg;
    defergc_chan_make(1, 1, (size_t)1 << 46);
}
static void chan_make_over_max_alloc(void) { in_main(make_over_max_alloc_body); }

/* Just inside the limits: made, and usable. */
static void chan_make_limits_body(void *arg) {
    (void)arg;
    static char big[65535];
    defergc_chan *b = defergc_chan_make(sizeof big, 0, 1);
    big[65534] = 7;
    defergc_chan_send(b, big);
    big[65534] = 0;
    CHECK(defergc_chan_recv(b, big) == 1 && big[65534] == 7);
    CHECK(defergc_chan_make(sizeof big, 1, 0) != NULL);
    defergc_chan *z = defergc_chan_make(0, 0, PTRDIFF_MAX);
    CHECK(defergc_chan_cap(z) == (size_t)PTRDIFF_MAX);
    OK();
}
static void chan_make_limits(void) { in_main(chan_make_limits_body); }

static void chan_forged_body(void *arg) {
    (void)arg;
    long *fake = calloc(64, 8);
    long v = 0;
    defergc_chan_try_send((defergc_chan *)fake, &v);
}
static void chan_forged(void) { in_main(chan_forged_body); }

static void select_null_cases(void) { defergc_select(NULL, 2, 0, NULL); }

static void select_bad_dir(void) {
    defergc_select_case c = {defergc_chan_make(8, 0, 1), 7, NULL};
    defergc_select(&c, 1, 0, NULL);
}

static void chan_codes_body(void *arg) {
    (void)arg;
    long v = 0;
    int ok = -1;
    /* nil channels: never ready */
    CHECK(defergc_chan_try_send(NULL, &v) == 0);
    CHECK(defergc_chan_try_recv(NULL, &v, &ok) == 0);
    CHECK(defergc_chan_len(NULL) == 0 && defergc_chan_cap(NULL) == 0);
    defergc_select_case nil = {NULL, DEFERGC_SELECT_RECV, &v};
    CHECK(defergc_select(&nil, 1, 0, NULL) == -1);
    CHECK(defergc_select(NULL, 0, 0, NULL) == -1);
    /* zero-sized elements, NULL element pointers */
    defergc_chan *z = defergc_chan_make(0, 0, 2);
    CHECK(defergc_chan_try_send(z, NULL) == 1);
    CHECK(defergc_chan_recv(z, NULL) == 1);
    /* a closed channel drains, then answers zero values */
    defergc_chan *c = defergc_chan_make(8, 0, 1);
    v = 42;
    defergc_chan_send(c, &v);
    defergc_chan_close(c);
    v = 0;
    CHECK(defergc_chan_recv(c, &v) == 1 && v == 42);
    v = 7;
    CHECK(defergc_chan_recv(c, &v) == 0 && v == 0);
    /* timers: negative durations fire at once, stop twice */
    defergc_timer *t = defergc_timer_new(-5);
    int64_t when = 0;
    CHECK(defergc_chan_recv(defergc_timer_chan(t), &when) == 1 && when > 0);
    CHECK(defergc_timer_stop(t) == 0);
    CHECK(defergc_timer_reset(t, 1000000000) == 0);
    CHECK(defergc_timer_stop(t) == 1);
    CHECK(defergc_timer_stop(t) == 0);
    defergc_sleep_ns(-1);
    defergc_sleep_ns(INT64_MIN);
    CHECK(defergc_chan_recv(defergc_after(-1), NULL) == 1);
    OK();
}
static void chan_codes(void) { in_main(chan_codes_body); }

static void timer_null(void) { defergc_timer_stop(NULL); }

/* ---- dumps and the goroutine profile ---------------------------------------- */

static void dump_codes_body(void *arg) {
    (void)arg;
    char buf[4];
    CHECK(defergc_stack(NULL, 100, 1) == 0);
    CHECK(defergc_stack(buf, 0, 1) == 0);
    CHECK(defergc_stack(buf, sizeof buf, 1) == sizeof buf);
    CHECK(memcmp(buf, "goro", 4) == 0);
    CHECK(defergc_write_goroutine_profile(NULL) == DEFERGC_EINVAL);
    CHECK(defergc_write_goroutine_profile("/nonexistent-dir/x.pprof") == DEFERGC_EIO);
    CHECK(defergc_write_goroutine_profile_fd(-1) == DEFERGC_EINVAL);
    CHECK(defergc_write_goroutine_profile_fd(12345) == DEFERGC_EIO);
    OK();
}

static void dump_codes(void) { in_main(dump_codes_body); }

/* ---- sync ------------------------------------------------------------------- */

static void mutex_null(void) { defergc_mutex_lock(NULL); }

static void mutex_unlock_unlocked(void) {
    defergc_mutex m = {{0}};
    defergc_mutex_unlock(&m);
}

static void rwmutex_runlock_unlocked(void) {
    defergc_rwmutex rw = {{0}};
    defergc_rwmutex_runlock(&rw);
}

static void rwmutex_unlock_unlocked(void) {
    defergc_rwmutex rw = {{0}};
    defergc_rwmutex_unlock(&rw);
}

static void wg_negative_body(void *arg) {
    (void)arg;
    defergc_wg wg = {{0}};
    defergc_wg_done(&wg);
}
static void wg_negative(void) { in_main(wg_negative_body); }

static void once_null_fn(void) {
    defergc_once o = {{0}};
    defergc_once_do(&o, NULL, NULL);
}

static void cond_null_mutex(void) {
    defergc_cond c = {{0}};
    defergc_cond_wait(&c, NULL);
}

/* ---- the precise collector ------------------------------------------------------ */

static void precise_codes(void) {
    if (defergc_precise_init() == DEFERGC_PRECISE_ENOTBUILT) {
        OK();
        return;
    }
    int err = 0;
    defergc_type node, bad;
    size_t offsets[1] = {0};
    CHECK(defergc_precise_register_type(16, offsets, 1, &node) == DEFERGC_OK);
    size_t unaligned[1] = {3};
    CHECK(defergc_precise_register_type(16, unaligned, 1, &bad) < 0);
    size_t outside[1] = {16};
    CHECK(defergc_precise_register_type(16, outside, 1, &bad) < 0);
    CHECK(defergc_precise_register_type(16, NULL, 1, &bad) < 0);
    CHECK(defergc_precise_register_type(16, offsets, 1, NULL) < 0);
    CHECK(defergc_precise_register_type(SIZE_MAX, NULL, 0, &bad) < 0);

    /* forged types */
    CHECK(defergc_precise_alloc((defergc_type)0x7fffffff, &err) == 0 && err < 0);
    CHECK(defergc_precise_alloc_array(node, SIZE_MAX, &err) == 0 && err < 0);

    uint64_t frame;
    CHECK(defergc_precise_push_frame(&frame) == DEFERGC_OK);
    defergc_handle h = defergc_precise_alloc(node, &err);
    CHECK(h != 0);
    int slot = defergc_precise_root(h);
    CHECK(slot >= 0);

    /* forged handles, everywhere a handle goes */
    defergc_handle forged[] = {1, 0x123456789, UINT64_MAX, h + 1, h ^ (1ull << 40)};
    for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) {
        defergc_handle f = forged[i], out = 0;
        char buf[8];
        CHECK(defergc_precise_deref(f, &err) == NULL && err < 0);
        CHECK(defergc_precise_load(f, 0, &out) < 0);
        size_t zero = 0;
        CHECK(defergc_precise_load_many(f, &zero, 1, &out) < 0);
        CHECK(defergc_precise_store(f, 0, 0) < 0);
        CHECK(defergc_precise_store(h, 0, f) < 0);
        CHECK(defergc_precise_read(f, 8, buf, 8) < 0);
        CHECK(defergc_precise_write(f, 8, buf, 8) < 0);
        CHECK(defergc_precise_root(f) < 0);
        CHECK(defergc_precise_set_root((size_t)slot, f) < 0);
    }
    /* out-of-range offsets and slots */
    char buf[8];
    defergc_handle out;
    CHECK(defergc_precise_load(h, 16, &out) < 0);
    CHECK(defergc_precise_load(h, SIZE_MAX, &out) < 0);
    CHECK(defergc_precise_load(h, 0, NULL) < 0);
    {
        size_t offsets[] = {0, 16, SIZE_MAX};
        defergc_handle outs[3];
        CHECK(defergc_precise_load_many(h, offsets, 1, NULL) < 0);
        CHECK(defergc_precise_load_many(h, NULL, 1, outs) < 0);
        CHECK(defergc_precise_load_many(h, offsets + 1, 1, outs) < 0);
        CHECK(defergc_precise_load_many(h, offsets + 2, 1, outs) < 0);
        CHECK(defergc_precise_load_many(h, offsets, SIZE_MAX, outs) < 0);
    }
    CHECK(defergc_precise_read(h, 8, buf, SIZE_MAX) < 0);
    CHECK(defergc_precise_read(h, SIZE_MAX, buf, 8) < 0);
    CHECK(defergc_precise_write(h, 0, buf, 8) < 0); /* over a handle field */
    CHECK(defergc_precise_read(h, 8, NULL, 8) < 0);
    CHECK(defergc_precise_set_root(100000, h) < 0);
    CHECK(defergc_precise_set_root(SIZE_MAX, h) < 0);

    /* a stale handle: its object was collected */
    uint64_t inner;
    CHECK(defergc_precise_push_frame(&inner) == DEFERGC_OK);
    defergc_handle dead = defergc_precise_alloc(node, &err);
    CHECK(dead != 0);
    CHECK(defergc_precise_pop_frame(inner) == DEFERGC_OK);
    CHECK(defergc_precise_collect() == DEFERGC_OK);
    CHECK(defergc_precise_collect() == DEFERGC_OK);
    CHECK(defergc_precise_deref(dead, &err) == NULL && err < 0);
    CHECK(defergc_precise_root(dead) < 0);
    CHECK(defergc_precise_set_root((size_t)slot, dead) < 0);
    CHECK(defergc_precise_deref(h, &err) != NULL); /* the rooted one lives */

    /* frames out of order */
    CHECK(defergc_precise_pop_frame(frame + 5) < 0);
    CHECK(defergc_precise_push_frame(NULL) < 0);
    uint64_t a, b;
    CHECK(defergc_precise_push_frame(&a) == DEFERGC_OK);
    CHECK(defergc_precise_push_frame(&b) == DEFERGC_OK);
    CHECK(defergc_precise_pop_frame(a) < 0);
    CHECK(defergc_precise_pop_frame(b) == DEFERGC_OK);
    CHECK(defergc_precise_pop_frame(a) == DEFERGC_OK);
    CHECK(defergc_precise_pop_frame(a) < 0);

    /* global roots */
    uint64_t never_added = 0, unaligned_slot[2];
    CHECK(defergc_precise_store_global(&never_added, h) == DEFERGC_PRECISE_EUNKNOWNROOT);
    CHECK(defergc_precise_store_global(NULL, h) < 0);
    CHECK(defergc_precise_add_global_root(NULL) < 0);
    CHECK(defergc_precise_add_global_root((uint64_t *)((char *)unaligned_slot + 1)) < 0);
    CHECK(defergc_precise_remove_global_root(&never_added) == DEFERGC_PRECISE_EUNKNOWNROOT);
    static uint64_t global;
    CHECK(defergc_precise_add_global_root(&global) == DEFERGC_OK);
    CHECK(defergc_precise_store_global(&global, forged[1]) < 0);
    CHECK(defergc_precise_store_global(&global, h) == DEFERGC_OK);
    CHECK(defergc_precise_remove_global_root(&global) == DEFERGC_OK);

    /* native state out of order */
    CHECK(defergc_precise_leave_native() < 0);
    CHECK(defergc_precise_enter_native() == DEFERGC_OK);
    CHECK(defergc_precise_enter_native() < 0);
    CHECK(defergc_precise_alloc(node, &err) == 0 && err < 0); /* heap from native */
    CHECK(defergc_precise_leave_native() == DEFERGC_OK);

    CHECK(defergc_precise_get_stats(NULL) < 0);
    CHECK(defergc_precise_pop_frame(frame) == DEFERGC_OK);
    OK();
}

/* ---- the table --------------------------------------------------------------------- */

/* ---- the network poller ----------------------------------------------------- */

static void net_codes_body(void *arg) {
    (void)arg;
    uint64_t h = 0;
    char buf[8];
    /* forged handles: never handed out */
    uint64_t forged[] = {0, 1, 12345, ((uint64_t)7 << 32) | 1, UINT64_MAX};
    for (size_t i = 0; i < sizeof forged / sizeof forged[0]; i++) {
        uint64_t f = forged[i];
        CHECK(defergc_poll_wait(f, DEFERGC_POLL_READ) == DEFERGC_EBADHANDLE);
        CHECK(defergc_poll_reset(f, DEFERGC_POLL_WRITE) == DEFERGC_EBADHANDLE);
        CHECK(defergc_poll_set_deadline(f, DEFERGC_POLL_READ, 1) == DEFERGC_EBADHANDLE);
        CHECK(defergc_poll_unblock(f) == DEFERGC_EBADHANDLE);
        CHECK(defergc_poll_close(f) == DEFERGC_EBADHANDLE);
        CHECK(defergc_net_close(f) == DEFERGC_EBADHANDLE);
        CHECK(defergc_net_fd(f) == DEFERGC_EBADHANDLE);
        CHECK(defergc_net_read(f, buf, sizeof buf) == DEFERGC_EBADHANDLE);
        CHECK(defergc_net_write(f, buf, sizeof buf) == DEFERGC_EBADHANDLE);
        uint64_t conn = 0;
        CHECK(defergc_net_accept(f, &conn, NULL, NULL) == DEFERGC_EBADHANDLE);
    }
    /* NULL out-parameters, bad modes, bad descriptors */
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(defergc_poll_open(p[0], NULL) == DEFERGC_EINVAL);
    CHECK(defergc_poll_open(-1, &h) == DEFERGC_EINVAL);
    CHECK(defergc_poll_open(1 << 28, &h) == DEFERGC_EOS - EBADF);
    CHECK(DEFERGC_ERRNO(DEFERGC_EOS - EBADF) == EBADF);
    CHECK(defergc_poll_open(p[0], &h) == 0 && h != 0);
    CHECK(defergc_poll_open(p[0], &h) == DEFERGC_EOS - EEXIST);
    CHECK(defergc_poll_wait(h, 0) == DEFERGC_EINVAL);
    CHECK(defergc_poll_wait(h, 3) == DEFERGC_EINVAL);
    CHECK(defergc_poll_set_deadline(h, 4, 1) == DEFERGC_EINVAL);
    CHECK(defergc_net_read(h, NULL, 1) == DEFERGC_EINVAL);
    /* a passed deadline fails at once, and stays until changed */
    CHECK(defergc_poll_set_deadline(h, DEFERGC_POLL_READ, defergc_nanotime() - 1) == 0);
    CHECK(defergc_poll_wait(h, DEFERGC_POLL_READ) == DEFERGC_ETIMEOUT);
    CHECK(defergc_net_read(h, buf, sizeof buf) == DEFERGC_ETIMEOUT);
    CHECK(defergc_poll_set_deadline(h, DEFERGC_POLL_READ, 0) == 0);
    CHECK(write(p[1], "x", 1) == 1);
    CHECK(defergc_net_read(h, buf, sizeof buf) == 1 && buf[0] == 'x');
    /* unblocked: closing; closed: a stale handle */
    CHECK(defergc_poll_unblock(h) == 0);
    CHECK(defergc_poll_wait(h, DEFERGC_POLL_READ) == DEFERGC_ECLOSED);
    CHECK(defergc_net_read(h, buf, sizeof buf) == DEFERGC_ECLOSED);
    CHECK(defergc_poll_close(h) == 0);
    CHECK(defergc_poll_close(h) == DEFERGC_EBADHANDLE);
    CHECK(defergc_poll_wait(h, DEFERGC_POLL_READ) == DEFERGC_EBADHANDLE);
    /* the record is recycled: the old handle stays dead */
    uint64_t h2 = 0;
    CHECK(defergc_poll_open(p[0], &h2) == 0 && h2 != h);
    CHECK(defergc_poll_wait(h, DEFERGC_POLL_READ) == DEFERGC_EBADHANDLE);
    CHECK(defergc_poll_close(h2) == 0);
    /* a regular file cannot be polled */
    FILE *f = tmpfile();
    CHECK(f != NULL);
    CHECK(defergc_poll_open(fileno(f), &h) == DEFERGC_EOS - EPERM);
    fclose(f);
    /* Go's words */
    CHECK(strcmp(defergc_net_strerror(DEFERGC_ECLOSED), "use of closed network connection") == 0);
    CHECK(strcmp(defergc_net_strerror(DEFERGC_ETIMEOUT), "i/o timeout") == 0);
    CHECK(strcmp(defergc_net_strerror(DEFERGC_EOS - ECONNREFUSED), strerror(ECONNREFUSED)) == 0);
    close(p[0]);
    close(p[1]);
    OK();
}

static void net_codes(void) { in_main(net_codes_body); }

static uint64_t shared_handle;

static void read_forever(void *args) {
    (void)args;
    char c;
    defergc_net_read(shared_handle, &c, 1);
}

static void net_two_readers_body(void *arg) {
    (void)arg;
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(defergc_poll_open(p[0], &shared_handle) == 0);
    CHECK(defergc_go(read_forever, NULL, 0) == 0);
    defergc_sleep_ns(20 * 1000 * 1000);
    char c;
    defergc_net_read(shared_handle, &c, 1);
}

/* The block and mutex profiles and the trace: NULL paths, a path that
 * cannot be created, a stop with no trace, a second start. */
static void prof_codes(void) {
    CHECK(defergc_write_block_profile(NULL) == DEFERGC_EINVAL);
    CHECK(defergc_write_mutex_profile(NULL) == DEFERGC_EINVAL);
    CHECK(defergc_write_block_profile("/nonexistent-dir/b.pprof") == DEFERGC_EIO);
    CHECK(defergc_start_trace(NULL) == DEFERGC_EINVAL);
    CHECK(defergc_start_trace("/nonexistent-dir/t.json") == DEFERGC_EIO);
    CHECK(defergc_stop_trace() == DEFERGC_EINVAL);
    CHECK(defergc_start_trace("/dev/null") == 0);
    CHECK(defergc_start_trace("/dev/null") == DEFERGC_EALREADY);
    CHECK(defergc_stop_trace() == 0);
    CHECK(defergc_stop_trace() == DEFERGC_EINVAL);
    CHECK(defergc_set_block_profile_rate(-5) == 0);
    CHECK(defergc_set_block_profile_rate(0) == 0);
    CHECK(defergc_set_mutex_profile_fraction(3) == 0);
    CHECK(defergc_set_mutex_profile_fraction(-1) == 3);
    CHECK(defergc_set_mutex_profile_fraction(0) == 3);
    OK();
}

static void net_two_readers(void) { in_main(net_two_readers_body); }

static const struct test_case cases[] = {
    {"free-malloc", free_malloc},
    {"free-stack", free_stack},
    {"free-interior", free_interior},
    {"free-twice", free_twice},
    {"free-twice-collectable", free_twice_collectable},
    {"free-forged", free_forged},
    {"realloc-malloc", realloc_malloc},
    {"realloc-freed", realloc_freed},
    {"alloc-codes", alloc_codes},
    {"thread-codes", thread_codes},
    {"pprof-codes", pprof_codes},
    {"tls-get-forged", tls_get_forged},
    {"tls-codes", tls_codes},
    {"leave-in-own-defer", leave_in_own_defer},
    {"unwind-in-own-defer", unwind_in_own_defer},
    {"defer-size-max", defer_size_max},
    {"defer-size-max7", defer_size_max7},
    {"defer-size-4g", defer_size_4g},
    {"defer-size-limit", defer_size_limit},
    {"defer-null-args", defer_null_args},
    {"enter-null", enter_null},
    {"leave-null", leave_null},
    {"unwind-null", unwind_null},
    {"enter-twice", enter_twice},
    {"no-leave-then-panic", no_leave_then_panic},
    {"no-leave-then-again", no_leave_then_again},
    {"leave-after-landing", leave_after_landing},
    {"defer-after-landing", defer_after_landing},
    {"defer-forged-frame", defer_forged_frame},
    {"recover-codes", recover_codes},
    {"goexit-main-thread", goexit_main_thread},
    {"panic-no-frame", panic_no_frame},
    {"record-alloc-max", record_alloc_max},
    {"record-alloc-huge", record_alloc_huge},
    {"record-codes", record_codes},
    {"main-null", main_null},
    {"main-nested", main_nested},
    {"go-codes", go_codes},
    {"park-unlock-panics", park_unlock_panics},
    {"park-unlock-parks", park_unlock_parks},
    {"outside-goroutine-codes", outside_goroutine_codes},
    {"external-release-unheld", external_release_unheld},
    {"send-closed", send_closed},
    {"close-closed", close_closed},
    {"close-nil", close_nil},
    {"chan-make-huge", chan_make_huge},
    {"chan-make-elem-too-big", chan_make_elem_too_big},
    {"chan-make-elem-64k", chan_make_elem_64k},
    {"chan-make-negative", chan_make_negative},
    {"chan-make-over-max-alloc", chan_make_over_max_alloc},
    {"chan-make-limits", chan_make_limits},
    {"chan-forged", chan_forged},
    {"select-null-cases", select_null_cases},
    {"select-bad-dir", select_bad_dir},
    {"chan-codes", chan_codes},
    {"timer-null", timer_null},
    {"dump-codes", dump_codes},
    {"mutex-null", mutex_null},
    {"mutex-unlock-unlocked", mutex_unlock_unlocked},
    {"rwmutex-runlock-unlocked", rwmutex_runlock_unlocked},
    {"rwmutex-unlock-unlocked", rwmutex_unlock_unlocked},
    {"wg-negative", wg_negative},
    {"once-null-fn", once_null_fn},
    {"cond-null-mutex", cond_null_mutex},
    {"precise-codes", precise_codes},
    {"net-codes", net_codes},
    {"net-two-readers", net_two_readers},
    {"prof-codes", prof_codes},
};

int main(int argc, char **argv) { return RUN_CASES(cases, argc, argv); }
