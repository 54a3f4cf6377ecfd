/*
 * A CPU profile of compiled code: the program spends nearly all of its CPU
 * time in one function, called under the label phase=hot (pprof.Do), and
 * writes the profile to the path given. The test reads it and expects that
 * function first. The error codes of a second start and of a stop with no
 * profile on are checked here too.
 */
#include "common.h"

#define ITERATIONS 400000000ULL

__attribute__((noinline)) void compiled_hot_loop(void *out) {
    uint64_t x = 1;
    for (uint64_t i = 0; i < ITERATIONS; i++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        __asm__ volatile("" : "+r"(x));
    }
    *(uint64_t *)out = x;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: cpu_profile OUT\n");
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
