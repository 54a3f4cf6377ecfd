/*
 * Go's test/chan/nonblock.go on defergc: a select with a default never
 * blocks. A receive or send that cannot proceed takes the default; once a
 * partner goroutine is there, it proceeds. For unbuffered and one-slot
 * channels of four element shapes: 4 and 8 byte integers, a one-byte bool
 * and a string (a pointer the collectors follow).
 */
#include "port.h"

#define MAX_TRIES 10000 /* up to 100 ms a test */

/* One element shape: Go's names for its goroutines (for the messages),
 * its size, whether it holds pointers, the value the receiver expects and
 * the one the sender sends. */
struct shape {
    const char *name, *receiver, *sender;
    size_t size;
    int pointers;
    unsigned char to_receiver[8], from_sender[8];
};

static int equal(const struct shape *s, const unsigned char *a, const unsigned char *b) {
    if (!s->pointers)
        return memcmp(a, b, s->size) == 0;
    const char *x, *y;
    memcpy(&x, a, sizeof x);
    memcpy(&y, b, sizeof y);
    return x && y && strcmp(x, y) == 0;
}

struct partner {
    const struct shape *shape;
    defergc_chan *c, *strobe;
};

/* if <-c != value { panic("... value") }; strobe <- true */
static void receiver(void *args) {
    struct partner *p = args;
    unsigned char v[8] = {0};
    defergc_chan_recv(p->c, v);
    if (!equal(p->shape, v, p->shape->to_receiver))
        fail("%s value", p->shape->name);
    send_int(p->strobe, 1);
}

/* c <- value; strobe <- true */
static void sender(void *args) {
    struct partner *p = args;
    defergc_chan_send(p->c, p->shape->from_sender);
    send_int(p->strobe, 1);
}

/* Go's sleep(): two 10 us ticks, three yields. */
static void nap(void) {
    defergc_sleep_ns(10000);
    defergc_sleep_ns(10000);
    defergc_gosched();
    defergc_gosched();
    defergc_gosched();
}

static void exercise(const struct shape *s, defergc_chan *sync, int buffer) {
    defergc_chan *c = defergc_chan_make(s->size, s->pointers, (size_t)buffer);
    unsigned char v[8] = {0};
    int ok = -1;

    /* select { case v = <-c: panic("blocked ...sender"); default: } */
    if (defergc_chan_try_recv(c, v, &ok))
        fail("blocked %s", s->sender);

    struct partner p = {s, c, sync};
    GO(receiver, p);
    for (int try = 0; !defergc_chan_try_send(c, s->to_receiver);) {
        if (++try > MAX_TRIES)
            fail("%s buffer= %d", s->receiver, buffer);
        nap();
    }
    recv_int(sync);

    GO(sender, p);
    if (buffer > 0)
        recv_int(sync);
    for (int try = 0; !defergc_chan_try_recv(c, v, &ok);) {
        if (++try > MAX_TRIES)
            fail("%s buffer= %d", s->sender, buffer);
        nap();
    }
    if (ok != 1)
        fail("%s: the receive saw a closed channel", s->sender);
    if (!equal(s, v, s->from_sender))
        fail("%s value", s->sender);
    if (buffer == 0)
        recv_int(sync);
}

static struct shape shapes[4] = {
    {"i32", "i32receiver", "i32sender", sizeof(int32_t), 0, {0}, {0}},
    {"i64", "i64receiver", "i64sender", sizeof(int64_t), 0, {0}, {0}},
    {"b", "breceiver", "bsender", 1, 0, {1}, {1}},
    {"s", "sreceiver", "ssender", sizeof(char *), 1, {0}, {0}},
};

static void go_main(void *arg) {
    (void)arg;
    int32_t i32r = 123, i32s = 234;
    int64_t i64r = 123456, i64s = 234567;
    static const char *hello = "hello", *again = "hello again";
    memcpy(shapes[0].to_receiver, &i32r, sizeof i32r);
    memcpy(shapes[0].from_sender, &i32s, sizeof i32s);
    memcpy(shapes[1].to_receiver, &i64r, sizeof i64r);
    memcpy(shapes[1].from_sender, &i64s, sizeof i64s);
    memcpy(shapes[3].to_receiver, &hello, sizeof hello);
    memcpy(shapes[3].from_sender, &again, sizeof again);

    defergc_chan *sync = make_int_chan(0);
    for (int buffer = 0; buffer < 2; buffer++)
        for (int k = 0; k < 4; k++)
            exercise(&shapes[k], sync, buffer);
}

GO_MAIN(go_main)
