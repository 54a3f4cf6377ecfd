/*
 * Go's test/chan/select6.go (Go issue 2075): a select that waited on a
 * channel as the last (but not the first) of its receivers, and left by
 * another case, must leave that channel's queue intact; later waiters on
 * it must still be woken. Go's program reaches that queue order by luck;
 * this port forces it with sleeps, so the order is the same every run:
 * a receiver parks on c1 first, then the select parks on c1 and c2, then
 * a sender on c2 chooses the select's c2 case.
 */
#include "port.h"

#define SETTLE_NS 20000000 /* 20 ms: long enough for the goroutine to park */

static defergc_chan *c1, *c2, *c3;

static void first_receiver(void *arg) {
    (void)arg;
    (void)recv_int(c1);
}

static void selector(void *arg) {
    (void)arg;
    long v = 0;
    defergc_select_case cases[2] = {
        {c1, DEFERGC_SELECT_RECV, &v},
        {c2, DEFERGC_SELECT_RECV, &v},
    };
    ptrdiff_t chosen = defergc_select(cases, 2, 1, NULL);
    if (chosen == 0)
        fail("dummy");
    send_int(c3, 1);
    (void)recv_int(c1);
}

static void c2_sender(void *arg) {
    (void)arg;
    send_int(c2, 1);
}

static void go_main(void *arg) {
    (void)arg;
    c1 = make_int_chan(0);
    c2 = make_int_chan(0);
    c3 = make_int_chan(0);
    go0(first_receiver);
    defergc_sleep_ns(SETTLE_NS);
    go0(selector);
    defergc_sleep_ns(SETTLE_NS);
    go0(c2_sender);
    (void)recv_int(c3);
    send_int(c1, 1);
    send_int(c1, 1);
}

GO_MAIN(go_main)
