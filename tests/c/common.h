/*
 * What the C test programs share: the header and the C library they all
 * use, a check that names what failed, a Go function's frame, a main that
 * runs a goroutine main, the deferred call that does nothing, a
 * monotonic clock, and the main of a program of named cases. Header-only (macros and static inline functions), so
 * that each program stays one compile unit.
 * Include it first: defergc.h sets the POSIX level when the build does not.
 */
#ifndef DEFERGC_TEST_COMMON_H
#define DEFERGC_TEST_COMMON_H

#include "defergc.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>

#define CHECK(cond)                                                         \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                 \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

/*
 * Opens a Go function's frame: declares `fr`, enters it, and arms it as
 * the place a recovered panic lands; a landing unwinds `fr` and then runs
 * `on_landing` (`return`, `return r`, `goto out`). A macro, not a
 * function: the jump buffer must be armed in the caller's own stack frame.
 */
#define FRAME_OPEN(fr, on_landing)                                          \
    defergc_frame fr;                                                       \
    defergc_frame_enter(&fr);                                               \
    if (DEFERGC_FRAME_ARM(&fr)) {                                           \
        defergc_frame_unwind(&fr);                                          \
        on_landing;                                                         \
    }

/* A program's `int main(void)` that runs `body` as the goroutine main
 * (Go's func main) and exits with its status. */
#define GO_MAIN(body)                                                       \
    int main(void) { return defergc_main((body), NULL); }

/* defer func() {}() */
static inline void nothing(void *args, const defergc_call *call) {
    (void)args;
    (void)call;
}

/* `clock`'s time in nanoseconds. */
static inline int64_t now_ns(clockid_t clock) {
    struct timespec ts;
    clock_gettime(clock, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The monotonic clock in nanoseconds. */
static inline int64_t mono_ns(void) { return now_ns(CLOCK_MONOTONIC); }

/* Waits up to limit_ms for the child pid, looking each millisecond (its
 * waitpid inside the system-call handoff, so a goroutine may wait): 1
 * with its wait status in *status once it ended, 0 while it still runs. */
static inline int wait_ended(pid_t pid, long limit_ms, int *status) {
    for (long ms = 0; ms < limit_ms; ms++) {
        defergc_enter_syscall();
        pid_t r = waitpid(pid, status, WNOHANG);
        defergc_exit_syscall();
        CHECK(r >= 0);
        if (r == pid)
            return 1;
        defergc_sleep_ns(1000 * 1000);
    }
    return 0;
}

/* A program of named cases: `prog list` prints their names, one a line;
 * `prog NAME` runs that case (status 3 for a name it does not know). */
struct test_case {
    const char *name;
    void (*run)(void);
};

static inline int run_cases(const struct test_case *cases, size_t n, int argc, char **argv) {
    CHECK(argc == 2);
    if (strcmp(argv[1], "list") == 0) {
        for (size_t i = 0; i < n; i++)
            puts(cases[i].name);
        return 0;
    }
    for (size_t i = 0; i < n; i++) {
        if (strcmp(argv[1], cases[i].name) == 0) {
            cases[i].run();
            return 0;
        }
    }
    fprintf(stderr, "unknown case %s\n", argv[1]);
    return 3;
}

#define RUN_CASES(cases, argc, argv) run_cases(cases, sizeof cases / sizeof cases[0], argc, argv)

#endif
