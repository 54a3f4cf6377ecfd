/*
 * A CPU profile of compiled code: the program spends nearly all of its CPU
 * time in one function, called under the label phase=hot (pprof.Do), and
 * writes the profile to the path given. The test reads it and expects that
 * function first. The error codes of a second start and of a stop with no
 * profile on are checked here too.
 *
 *   cpu_profile OUT             the hot function under a label
 *   cpu_profile OUT sleepers    threads the runtime does not know: one
 *                               spins (with SIGPROF blocked half of the
 *                               time), one sleeps, while the main thread
 *                               blocks SIGPROF; only the spinner has
 *                               used CPU time (bdwgc's markers sleep)
 */
#include "common.h"

#include <pthread.h>
#include <signal.h>

#define ITERATIONS 400000000ULL

__attribute__((noinline)) void compiled_hot_loop(void *out) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < ITERATIONS; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
    }
    *(uint64_t *)out = x;
}

/* Threads that never call the runtime: the process-wide timer samples
 * them. */
static pthread_mutex_t sleep_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t sleep_cond = PTHREAD_COND_INITIALIZER;
static int spun;

__attribute__((noinline)) static void unregistered_spin(uint64_t *x, uint64_t n) {
    for (uint64_t i = 0; i < n; i++) {
        *x = *x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+m"(*x));
    }
}

/* Lets SIGPROF through on this thread (created while main blocks it). */
static void unblock_prof(void) {
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    CHECK(pthread_sigmask(SIG_UNBLOCK, &prof, NULL) == 0);
}

static void *spinner(void *out) {
    unblock_prof();
    sigset_t prof, old;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    /* Half of the work with SIGPROF blocked (as a library's critical
     * section may): the kernel hands the process-wide timer's signals to
     * another thread meanwhile, the sleeper. */
    unregistered_spin(out, ITERATIONS / 4);
    CHECK(pthread_sigmask(SIG_BLOCK, &prof, &old) == 0);
    unregistered_spin(out, ITERATIONS / 4);
    CHECK(pthread_sigmask(SIG_SETMASK, &old, NULL) == 0);
    pthread_mutex_lock(&sleep_lock);
    spun = 1;
    pthread_cond_signal(&sleep_cond);
    pthread_mutex_unlock(&sleep_lock);
    return NULL;
}

static void *sleeper(void *arg) {
    (void)arg;
    unblock_prof();
    pthread_mutex_lock(&sleep_lock);
    while (!spun) {
        pthread_cond_wait(&sleep_cond, &sleep_lock);
    }
    pthread_mutex_unlock(&sleep_lock);
    return NULL;
}

static int sleepers(const char *path) {
    /* The main thread (registered) takes no process-wide signal either. */
    sigset_t prof;
    sigemptyset(&prof);
    sigaddset(&prof, SIGPROF);
    CHECK(defergc_set_cpu_profile_rate(1000) == 100);
    CHECK(defergc_start_cpu_profile(path) == 0);
    CHECK(pthread_sigmask(SIG_BLOCK, &prof, NULL) == 0);
    uint64_t out = 1;
    pthread_t spin, sleep;
    CHECK(pthread_create(&sleep, NULL, sleeper, NULL) == 0);
    CHECK(pthread_create(&spin, NULL, spinner, &out) == 0);
    CHECK(pthread_join(spin, NULL) == 0);
    CHECK(pthread_join(sleep, NULL) == 0);
    CHECK(pthread_sigmask(SIG_UNBLOCK, &prof, NULL) == 0);
    CHECK(defergc_stop_cpu_profile() == 0);
    printf("%llu\n", (unsigned long long)out);
    return 0;
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[2], "sleepers") == 0) {
        defergc_init();
        return sleepers(argv[1]);
    }
    if (argc != 2) {
        fprintf(stderr, "usage: cpu_profile OUT [sleepers]\n");
        return 2;
    }
    defergc_init();
    CHECK(defergc_stop_cpu_profile() == DEFERGC_ENOTPROFILING);
    CHECK(defergc_start_cpu_profile(NULL) == DEFERGC_EINVAL);
    CHECK(defergc_set_cpu_profile_rate(0) == DEFERGC_EINVAL);
    CHECK(defergc_set_cpu_profile_rate(1000) == 100);
    CHECK(defergc_start_cpu_profile(argv[1]) == 0);
    CHECK(defergc_start_cpu_profile(argv[1]) == DEFERGC_EALREADY);
    CHECK(defergc_start_cpu_profile_fd(1) == DEFERGC_EALREADY);
    CHECK(defergc_set_cpu_profile_rate(100) == DEFERGC_EALREADY);
    const char *labels[] = {"phase", "hot"};
    uint64_t out = 0;
    CHECK(defergc_do_with_labels(labels, 1, compiled_hot_loop, &out) == 0);
    CHECK(defergc_do_with_labels(NULL, 1, compiled_hot_loop, &out) == DEFERGC_EINVAL);
    CHECK(defergc_stop_cpu_profile() == 0);
    CHECK(defergc_stop_cpu_profile() == DEFERGC_ENOTPROFILING);
    printf("%llu\n", (unsigned long long)out);
    return 0;
}
