/*
 * What the ports of Go's test/chan programs share: channels of machine
 * words, and Go's panic("...") for a failed check (the message on stderr,
 * status 2, as an unrecovered Go panic ends a process).
 */
#ifndef DEFERGC_TEST_CHAN_PORT_H
#define DEFERGC_TEST_CHAN_PORT_H

#include "common.h"

#include <stdarg.h>

/* make(chan int, cap) */
static inline defergc_chan *make_int_chan(size_t cap) {
    return defergc_chan_make(sizeof(long), 0, cap);
}

/* c <- v */
static inline void send_int(defergc_chan *c, long v) {
    defergc_chan_send(c, &v);
}

/* <-c (0 once c is closed and drained) */
static inline long recv_int(defergc_chan *c) {
    long v = -1;
    defergc_chan_recv(c, &v);
    return v;
}

/* v, ok := <-c */
static inline int recv_int_ok(defergc_chan *c, long *v) {
    return defergc_chan_recv(c, v);
}

/* println(...); panic("fail") */
__attribute__((format(printf, 1, 2), noreturn)) static inline void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("panic: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stdout);
    exit(2);
}

/* A goroutine with no arguments. */
static inline void go0(defergc_go_fn fn) {
    if (defergc_go(fn, NULL, 0) != 0)
        fail("go statement refused");
}

/* A goroutine with an argument block. */
#define GO(fn, args)                                            \
    do {                                                        \
        if (defergc_go((fn), &(args), sizeof(args)) != 0)       \
            fail("go statement refused");                       \
    } while (0)

#endif
