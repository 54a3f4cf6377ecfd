/*
 * Bad input through the C ABI, one case per run (the harness runs each in
 * a child process and checks the exact error): aborts name the misuse,
 * error codes are the documented ones.
 */
#include "common.h"

static void *foreign_thread(void *arg) {
    /* A thread defergc did not create: its first calls register it. */
    (void)arg;
    for (int i = 0; i < 1000; i++) {
        long *p = defergc_alloc(64);
        p[0] = i;
        CHECK(p[0] == i);
    }
    defergc_collect();
    return (void *)1;
}

static void *enter_in_other_thread(void *arg) {
    defergc_frame_enter((defergc_frame *)arg);
    return NULL;
}

int main(int argc, char **argv) {
    CHECK(argc == 2);
    const char *c = argv[1];
    defergc_frame a, b;

    if (strcmp(c, "null-frame") == 0) {
        defergc_defer(NULL, nothing, NULL, 0);
    } else if (strcmp(c, "never-entered") == 0) {
        memset(&a, 0x5a, sizeof a);
        defergc_defer(&a, nothing, NULL, 0);
    } else if (strcmp(c, "left-out-of-order") == 0) {
        defergc_frame_enter(&a);
        defergc_frame_enter(&b);
        defergc_frame_leave(&a);
    } else if (strcmp(c, "defer-not-innermost") == 0) {
        defergc_frame_enter(&a);
        defergc_frame_enter(&b);
        defergc_defer(&a, nothing, NULL, 0);
    } else if (strcmp(c, "left-twice") == 0) {
        defergc_frame_enter(&a);
        defergc_frame_leave(&a);
        defergc_frame_leave(&a);
    } else if (strcmp(c, "frame-of-another-thread") == 0) {
        pthread_t t;
        CHECK(pthread_create(&t, NULL, enter_in_other_thread, &a) == 0);
        CHECK(pthread_join(t, NULL) == 0);
        defergc_defer(&a, nothing, NULL, 0);
    } else if (strcmp(c, "unwind-without-landing") == 0) {
        defergc_frame_enter(&a);
        defergc_frame_unwind(&a);
    } else if (strcmp(c, "tls-unknown-key") == 0) {
        defergc_tls_get(123456789);
    } else if (strcmp(c, "error-codes") == 0) {
        /* Reported, not aborted: each gets its documented code. */
        void *r = defergc_record_alloc(24);
        CHECK(defergc_record_free(r) == DEFERGC_OK);
        CHECK(defergc_record_free(r) == DEFERGC_EDOUBLEFREE);
        CHECK(defergc_record_free(NULL) == DEFERGC_EINVAL);
        char *not_record = defergc_alloc(64);
        CHECK(defergc_record_free(not_record + 16) == DEFERGC_ENOTRECORD);
        CHECK(defergc_tls_set(987654321, NULL) == DEFERGC_EINVAL);
        CHECK(defergc_tls_create(NULL, NULL) == DEFERGC_EINVAL);
        CHECK(defergc_get_stats(NULL) == DEFERGC_EINVAL);
        pthread_t t;
        CHECK(defergc_thread_create(&t, NULL, NULL, NULL) != 0);
        puts("error codes: ok");
    } else if (strcmp(c, "unregistered-thread") == 0) {
        pthread_t t;
        void *result = NULL;
        CHECK(pthread_create(&t, NULL, foreign_thread, NULL) == 0);
        CHECK(pthread_join(t, &result) == 0);
        CHECK(result == (void *)1);
        defergc_collect();
        puts("unregistered thread: ok");
    } else if (strcmp(c, "unrecovered-panic") == 0) {
        defergc_frame_enter(&a);
        if (DEFERGC_FRAME_ARM(&a)) {
            defergc_frame_unwind(&a);
            puts("not reached");
            return 0;
        }
        defergc_panic(NULL);
    } else {
        fprintf(stderr, "unknown case %s\n", c);
        return 2;
    }
    return 0;
}
