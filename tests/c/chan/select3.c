/*
 * Go's test/chan/select3.go on defergc: which channel operations and
 * selects block, and which panic. Nil channels block (and are never
 * selected); a closed channel gives zero values without blocking and
 * panics on a send; a select with a default never blocks; one without
 * ready cases always does, even when it sees the same channel twice.
 *
 * Beyond Go's checks: the recovered panic says "send on closed channel",
 * and a select receiving from a closed channel reports ok == 0 and a zero
 * value.
 */
#include "port.h"

static const char always[] = "function did not";
static const char never[] = "function did";

static defergc_chan *nilch; /* var nilch chan int */
static defergc_chan *closedch;
static const char *last_panic; /* the message of the last recovered panic */

static void unreachable(void) {
    fail("control flow shouldn't reach here");
}

/* defer func() { s := never; if recover() != nil { s = always }; ... }() */
static void judge(void *args, const defergc_call *call) {
    const char *signal = *(const char **)args;
    const char *s = never;
    void *v = NULL;
    int kind = defergc_recover(call, &v);
    if (kind != DEFERGC_RECOVERED_NOTHING) {
        s = always;
        last_panic = kind == DEFERGC_RECOVERED_ERROR ? v : NULL;
    }
    if (s != signal)
        fail("%s panic", signal);
}

/* Calls f and checks that it panics (always) or does not (never). */
static void test_panic(const char *signal, void (*f)(void)) {
    FRAME_OPEN(fr, return);
    defergc_defer(&fr, judge, &signal, sizeof signal);
    f();
    defergc_frame_leave(&fr);
}

struct block {
    void (*f)(void);
    defergc_chan *c;
};

static void run_f(void *args) {
    struct block *b = args;
    b->f();
    const char *s = never; /* f did not block */
    defergc_chan_send(b->c, &s);
}

static void time_out(void *args) {
    struct block *b = args;
    defergc_sleep_ns(100000000); /* 0.1 s seems plenty long */
    const char *s = always;      /* f blocked */
    defergc_chan_send(b->c, &s);
}

/* Calls f in a goroutine and checks that it blocks (always) or returns
 * (never) within 0.1 s. */
static void test_block(const char *signal, void (*f)(void)) {
    struct block b = {f, defergc_chan_make(sizeof(char *), 1, 0)};
    GO(run_f, b);
    GO(time_out, b);
    const char *s = NULL;
    defergc_chan_recv(b.c, &s);
    if (s != signal)
        fail("%s block", signal);
}

static long seven = 7;

/* select over one case, with (block == 0) or without a default */
static ptrdiff_t select1(defergc_chan *c, int dir, void *elem, int block, int *ok) {
    defergc_select_case cases[1] = {{c, dir, elem}};
    return defergc_select(cases, 1, block, ok);
}

static void send_nil(void) { defergc_chan_send(nilch, &seven); }
static void recv_nil(void) { defergc_chan_recv(nilch, NULL); }

static void select_send_nil_default(void) {
    if (select1(nilch, DEFERGC_SELECT_SEND, &seven, 0, NULL) != -1)
        unreachable();
}

static void select_recv_nil_default(void) {
    if (select1(nilch, DEFERGC_SELECT_RECV, NULL, 0, NULL) != -1)
        unreachable();
}

static void send_buffered(void) {
    defergc_chan *ch = make_int_chan(1);
    send_int(ch, 7);
}

static void recv_closed(void) {
    for (int i = 0; i < 10; i++) {
        if (recv_int(closedch) != 0)
            fail("expected zero value when reading from closed channel");
        long x = -1;
        int ok = recv_int_ok(closedch, &x);
        if (x != 0 || ok)
            fail("closedch: %ld %s\nexpected 0, false from closed channel", x,
                 ok ? "true" : "false");
    }
}

static void send_closed(void) { send_int(closedch, 7); }

static void recv_unready(void) {
    defergc_chan *ch = make_int_chan(0);
    recv_int(ch);
}

static void select_empty(void) { defergc_select(NULL, 0, 1, NULL); }

static void select_recv_nil(void) {
    select1(nilch, DEFERGC_SELECT_RECV, NULL, 1, NULL);
    unreachable();
}

static void select_send_nil(void) {
    select1(nilch, DEFERGC_SELECT_SEND, &seven, 1, NULL);
    unreachable();
}

static void select_both_nil(void) {
    defergc_select_case cases[2] = {
        {nilch, DEFERGC_SELECT_RECV, NULL},
        {nilch, DEFERGC_SELECT_SEND, &seven},
    };
    defergc_select(cases, 2, 1, NULL);
    unreachable();
}

static void select_recv_unready(void) {
    defergc_chan *ch = make_int_chan(0);
    select1(ch, DEFERGC_SELECT_RECV, NULL, 1, NULL);
    unreachable();
}

static void select_default(void) {
    if (defergc_select(NULL, 0, 0, NULL) != -1)
        unreachable();
}

static void select_send_ready(void) {
    defergc_chan *ch = make_int_chan(1);
    if (select1(ch, DEFERGC_SELECT_SEND, &seven, 0, NULL) != 0)
        unreachable();
}

static void select_recv_ready(void) {
    defergc_chan *ch = make_int_chan(1);
    send_int(ch, 7);
    long x = 0;
    if (select1(ch, DEFERGC_SELECT_RECV, &x, 0, NULL) != 0)
        unreachable();
    if (x != 7)
        fail("select received %ld, not 7", x);
}

static void select_recv_closed(void) {
    if (select1(closedch, DEFERGC_SELECT_RECV, NULL, 1, NULL) != 0)
        unreachable();
}

static void select_recv_closed_value(void) {
    long x = -1;
    if (select1(closedch, DEFERGC_SELECT_RECV, &x, 1, NULL) != 0)
        unreachable();
    if (x != 0)
        fail("a closed channel gave %ld", x);
}

static void select_recv_closed_ok(void) {
    long x = -1;
    int ok = -1;
    if (select1(closedch, DEFERGC_SELECT_RECV, &x, 1, &ok) != 0)
        unreachable();
    if (x != 0 || ok != 0)
        fail("a closed channel gave %ld, ok %d", x, ok);
}

static void select_send_closed(void) {
    select1(closedch, DEFERGC_SELECT_SEND, &seven, 1, NULL);
}

static void select_sees_itself(void) {
    defergc_chan *c = make_int_chan(0);
    long one = 1;
    defergc_select_case cases[2] = {
        {c, DEFERGC_SELECT_SEND, &one},
        {c, DEFERGC_SELECT_RECV, NULL},
    };
    defergc_select(cases, 2, 1, NULL);
}

static void expect_send_on_closed(void) {
    if (!last_panic || strcmp(last_panic, "send on closed channel") != 0)
        fail("recovered %s, not \"send on closed channel\"",
             last_panic ? last_panic : "a value that is not a run-time error");
    last_panic = NULL;
}

static void go_main(void *arg) {
    (void)arg;
    closedch = make_int_chan(0);
    defergc_chan_close(closedch);

    /* sending to or receiving from a nil channel blocks */
    test_block(always, send_nil);
    test_block(always, recv_nil);

    /* a nil channel inside a select is never selected */
    test_panic(never, select_send_nil_default);
    test_panic(never, select_recv_nil_default);

    /* a send with free buffer space never blocks */
    test_block(never, send_buffered);

    /* receiving from a closed channel never blocks */
    test_block(never, recv_closed);

    /* sending to a closed channel panics */
    test_panic(always, send_closed);
    expect_send_on_closed();

    /* receiving from a channel that is not ready blocks */
    test_block(always, recv_unready);

    /* empty selects block */
    test_block(always, select_empty);

    /* selects over nil channels only block */
    test_block(always, select_recv_nil);
    test_block(always, select_send_nil);
    test_block(always, select_both_nil);

    /* selects over channels that are not ready block */
    test_block(always, select_recv_unready);

    /* selects with a default do not block */
    test_block(never, select_default);
    test_block(never, select_recv_nil_default);
    test_block(never, select_send_nil_default);

    /* selects with ready channels do not block */
    test_block(never, select_send_ready);
    test_block(never, select_recv_ready);

    /* selects over closed channels behave as the plain operations */
    test_block(never, select_recv_closed);
    test_block(never, select_recv_closed_value);
    test_block(never, select_recv_closed_ok);
    test_panic(always, select_send_closed);
    expect_send_on_closed();

    /* a select is not confused when it sees itself */
    test_block(always, select_sees_itself);
}

GO_MAIN(go_main)
