/*
 * Go's test/chan/fifo.go on defergc: a buffered channel gives its values
 * back in order, and so does an unbuffered one whose receivers are
 * goroutines threaded into a daisy chain that lets them receive in turn.
 */
#include "port.h"

#define N 10

static void asynch_fifo(void) {
    defergc_chan *ch = make_int_chan(N);
    for (long i = 0; i < N; i++)
        send_int(ch, i);
    for (long i = 0; i < N; i++) {
        if (recv_int(ch) != i) {
            printf("bad receive\n");
            exit(1);
        }
    }
}

struct link {
    defergc_chan *ch, *in, *out;
    long val;
};

/* Waits for its turn (in), takes the next value (must be val), passes the
 * turn on (out). */
static void link_run(void *args) {
    struct link *l = args;
    recv_int(l->in);
    long v = recv_int(l->ch);
    if (v != l->val)
        fail("%ld (received %ld)", l->val, v);
    send_int(l->out, 1);
}

static void synch_fifo(void) {
    defergc_chan *ch = make_int_chan(0);
    defergc_chan *in = make_int_chan(0);
    defergc_chan *start = in;
    for (long i = 0; i < N; i++) {
        struct link l = {ch, in, make_int_chan(0), i};
        GO(link_run, l);
        in = l.out;
    }
    send_int(start, 0);
    for (long i = 0; i < N; i++)
        send_int(ch, i);
    recv_int(in);
}

static void go_main(void *arg) {
    (void)arg;
    asynch_fifo();
    synch_fifo();
}

GO_MAIN(go_main)
