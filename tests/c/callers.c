/*
 * runtime.Callers, runtime.Caller, runtime.CallersFrames and runtime.Stack
 * from compiled code: each case prints what it found, one fact a line;
 * tests/callers.rs checks the lines.
 */
#include "common.h"

static const char *which;

__attribute__((noinline)) static void leaf(void) {
    if (strcmp(which, "callers") == 0) {
        uintptr_t pcs[16];
        int n = defergc_callers(0, pcs, 16);
        CHECK(n >= 4);
        for (int i = 0; i < 4; i++) {
            defergc_funcinfo f;
            CHECK(defergc_funcinfo_of(pcs[i], &f) == 1);
            const char *file = f.file ? strrchr(f.file, '/') : NULL;
            printf("%s %s %d\n", f.function, file ? file + 1 : "?", f.line > 0);
        }
        /* skip 2 starts two frames later. */
        uintptr_t later[2];
        CHECK(defergc_callers(2, later, 2) == 2 && later[0] == pcs[2] && later[1] == pcs[3]);
        CHECK(defergc_callers(-1, pcs, 16) == 0 && defergc_callers(0, NULL, 16) == 0);
    } else if (strcmp(which, "caller") == 0) {
        uintptr_t pc;
        const char *file;
        int line;
        int expected = __LINE__ + 1;
        CHECK(defergc_caller(0, &pc, &file, &line) == 1);
        CHECK(file && strstr(file, "callers.c") && line == expected);
        defergc_funcinfo f;
        CHECK(defergc_funcinfo_of(pc, &f) == 1 && strcmp(f.function, "leaf") == 0);
        CHECK(f.entry != 0 && f.entry < pc);
        CHECK(defergc_caller(1, &pc, NULL, NULL) == 1);
        CHECK(defergc_funcinfo_of(pc, &f) == 1 && strcmp(f.function, "middle") == 0);
        printf("caller ok\n");
    } else if (strcmp(which, "stack") == 0) {
        char buf[4096];
        size_t n = defergc_stack(buf, sizeof buf - 1, 0);
        buf[n] = 0;
        fputs(buf, stdout);
        CHECK(defergc_stack(buf, 8, 0) == 8 && memcmp(buf, "goroutin", 8) == 0);
    }
}

__attribute__((noinline)) static void middle(void) {
    leaf();
    __asm__ volatile(""); /* as above */
}

static void go_main(void *arg) {
    (void)arg;
    middle();
    __asm__ volatile(""); /* not a tail call: go_main keeps its frame */
}

int main(int argc, char **argv) {
    CHECK(argc == 2);
    which = argv[1];
    return defergc_main(go_main, NULL);
}
