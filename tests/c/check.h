/* Shared by the C test programs: a check that names what failed. */
#ifndef DEFERGC_TEST_CHECK_H
#define DEFERGC_TEST_CHECK_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                         \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                 \
            exit(1);                                                        \
        }                                                                   \
    } while (0)

#endif
