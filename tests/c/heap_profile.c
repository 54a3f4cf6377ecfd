/*
 * A heap profile of compiled code: every allocation sampled in one named
 * function, the profile written to the path given. The test reads it and
 * expects that function, not the runtime's, at the top of its samples.
 */
#include "common.h"

#define N 1000

static void *kept[N];

__attribute__((noinline)) void compiled_allocator(void) {
    for (int i = 0; i < N; i++) {
        uint64_t *p = defergc_alloc(64);
        p[0] = (uint64_t)i;
        kept[i] = p;
    }
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: heap_profile OUT\n");
        return 2;
    }
    defergc_init();
    defergc_set_mem_profile_rate(1);
    compiled_allocator();
    defergc_set_mem_profile_rate(512 * 1024);
    if (defergc_write_heap_profile(argv[1]) != 0) {
        fprintf(stderr, "cannot write %s\n", argv[1]);
        return 1;
    }
    printf("%p\n", kept[N - 1]);
    return 0;
}
