/*
 * Go's test/chan/goroutines.go on defergc: n goroutines (10,000, or the
 * first argument) threaded together by unbuffered channels, each passing
 * on what it receives; one value travels the whole chain, and the chain
 * tears itself down.
 */
#include "port.h"

#include <errno.h>

struct pass {
    defergc_chan *left, *right;
};

/* left <- <-right */
static void pass(void *args) {
    struct pass *p = args;
    send_int(p->left, recv_int(p->right));
}

static void send_one(void *args) {
    send_int(*(defergc_chan **)args, 1);
}

static long n = 10000;

static void go_main(void *arg) {
    (void)arg;
    defergc_chan *leftmost = make_int_chan(0);
    defergc_chan *right = leftmost;
    defergc_chan *left = leftmost;
    for (long i = 0; i < n; i++) {
        right = make_int_chan(0);
        struct pass p = {left, right};
        GO(pass, p);
        left = right;
    }
    GO(send_one, right);
    long v = recv_int(leftmost);
    if (v != 1)
        fail("the chain delivered %ld", v);
}

int main(int argc, char **argv) {
    if (argc > 1) {
        char *end;
        errno = 0;
        n = strtol(argv[1], &end, 10);
        if (errno || *end || end == argv[1]) {
            printf("bad arg\n");
            exit(1);
        }
    }
    return defergc_main(go_main, NULL);
}
