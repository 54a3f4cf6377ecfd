/* Compiled code for tests/go_preempt.rs, built into a shared library:
 * a loop without calls that only another goroutine can end. */
#include <stdint.h>

uint64_t c_spin_until(const volatile int *flag) {
    uint64_t loads = 0;
    while (!*flag)
        loads++;
    return loads;
}
