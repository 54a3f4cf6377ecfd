/*
 * Go's test/chan/select.go on defergc: a select evaluates every send
 * value, even for a nil channel, each time it runs; a ready send case
 * proceeds; a select whose cases are all nil or full takes its default.
 */
#include "port.h"

static unsigned long counter;
static unsigned shift;

static unsigned long get_value(void) {
    counter++;
    return 1ul << shift;
}

/* Sends into a and b until neither takes a value, dropping a channel (to
 * nil) once it took one. Returns how many were sent. */
static int send(defergc_chan *a, defergc_chan *b) {
    int i = 0;
    for (;;) {
        /* Go evaluates the channel and value of every case first. */
        unsigned long va = get_value();
        unsigned long vb = get_value();
        defergc_select_case cases[2] = {
            {a, DEFERGC_SELECT_SEND, &va},
            {b, DEFERGC_SELECT_SEND, &vb},
        };
        ptrdiff_t chosen = defergc_select(cases, 2, 0, NULL);
        if (chosen == 0) {
            i++;
            a = NULL;
        } else if (chosen == 1) {
            i++;
            b = NULL;
        } else if (chosen == -1) {
            break;
        } else {
            fail("select returned %td", chosen);
        }
        shift++;
    }
    return i;
}

static void go_main(void *arg) {
    (void)arg;
    defergc_chan *a = defergc_chan_make(sizeof(unsigned long), 0, 1);
    defergc_chan *b = defergc_chan_make(sizeof(unsigned long), 0, 1);
    int v = send(a, b);
    if (v != 2)
        fail("Send returned %d != 2", v);
    unsigned long av = 0, bv = 0;
    defergc_chan_recv(a, &av);
    defergc_chan_recv(b, &bv);
    if ((av | bv) != 3)
        fail("bad values %lu %lu", av, bv);
    v = send(a, NULL);
    if (v != 1)
        fail("Send returned %d != 1", v);
    if (counter != 10)
        fail("counter is %lu != 10", counter);
}

GO_MAIN(go_main)
