/*
 * Go's test/chan/doubleselect.go on defergc, on two worker threads: a
 * select over four sends must complete exactly one of them, never two.
 * The sender puts 0..n-1 (n = 100,000, or -n N) on whichever of four
 * channels is ready; four muxes forward them onto one channel; the
 * receiver sees each value once (and, beyond Go's check, every value).
 */
#include "port.h"

static long iterations = 100000;

struct quad {
    defergc_chan *c[4];
};

/* defer close(c) */
static void close_it(void *args, const defergc_call *call) {
    (void)call;
    defergc_chan_close(*(defergc_chan **)args);
}

static void sender(void *args) {
    struct quad *q = args;
    FRAME_OPEN(fr, return);
    for (int k = 0; k < 4; k++)
        defergc_defer(&fr, close_it, &q->c[k], sizeof q->c[k]);
    for (long i = 0; i < iterations; i++) {
        defergc_select_case cases[4];
        for (int k = 0; k < 4; k++)
            cases[k] = (defergc_select_case){q->c[k], DEFERGC_SELECT_SEND, &i};
        if (defergc_select(cases, 4, 1, NULL) < 0)
            fail("a blocking select took no case");
    }
    defergc_frame_leave(&fr);
}

struct mux {
    defergc_chan *out, *in, *done;
};

/* for v := range in { out <- v }; done <- true */
static void mux(void *args) {
    struct mux *m = args;
    long v;
    while (recv_int_ok(m->in, &v))
        send_int(m->out, v);
    send_int(m->done, 1);
}

struct closer {
    defergc_chan *done, *cmux;
};

static void closer(void *args) {
    struct closer *c = args;
    for (int k = 0; k < 4; k++)
        recv_int(c->done);
    defergc_chan_close(c->cmux);
}

static void recver(defergc_chan *in) {
    unsigned char *seen = calloc((size_t)iterations / 8 + 1, 1);
    if (!seen)
        fail("out of memory");
    long v, count = 0;
    while (recv_int_ok(in, &v)) {
        if (v < 0 || v >= iterations)
            fail("got a value never sent: %ld", v);
        if (seen[v / 8] & (1u << (v % 8)))
            fail("got duplicate value:  %ld", v);
        seen[v / 8] |= (unsigned char)(1u << (v % 8));
        count++;
    }
    if (count != iterations)
        fail("got %ld values of %ld", count, iterations);
    free(seen);
}

static void go_main(void *arg) {
    (void)arg;
    struct quad q;
    for (int k = 0; k < 4; k++)
        q.c[k] = make_int_chan(0);
    defergc_chan *done = make_int_chan(0);
    defergc_chan *cmux = make_int_chan(0);
    GO(sender, q);
    for (int k = 0; k < 4; k++) {
        struct mux m = {cmux, q.c[k], done};
        GO(mux, m);
    }
    struct closer c = {done, cmux};
    GO(closer, c);
    recver(cmux);
}

int main(int argc, char **argv) {
    if (argc == 3 && strcmp(argv[1], "-n") == 0)
        iterations = strtol(argv[2], NULL, 10);
    if (iterations <= 0)
        fail("bad -n");
    /* runtime.GOMAXPROCS(2), before the runtime starts */
    setenv("GOMAXPROCS", "2", 1);
    return defergc_main(go_main, NULL);
}
