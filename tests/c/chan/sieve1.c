/*
 * Go's test/chan/sieve1.go on defergc: the classical concurrent prime
 * sieve, a chain of filter goroutines linked by unbuffered channels,
 * checked against the 25 primes below 100.
 */
#include "port.h"

/* Sends 2, 3, 4, ... to ch. */
static void generate(void *args) {
    defergc_chan *ch = *(defergc_chan **)args;
    for (long i = 2;; i++)
        send_int(ch, i);
}

struct filter {
    defergc_chan *in, *out;
    long prime;
};

/* Copies in to out, dropping the multiples of prime, until in closes. */
static void filter(void *args) {
    struct filter *f = args;
    long i;
    while (recv_int_ok(f->in, &i))
        if (i % f->prime != 0)
            send_int(f->out, i);
}

/* Daisy-chains the filters; each new head is the next prime. */
static void sieve(void *args) {
    defergc_chan *primes = *(defergc_chan **)args;
    defergc_chan *ch = make_int_chan(0);
    GO(generate, ch);
    for (;;) {
        long prime = recv_int(ch);
        send_int(primes, prime);
        struct filter f = {ch, make_int_chan(0), prime};
        GO(filter, f);
        ch = f.out;
    }
}

static void go_main(void *arg) {
    (void)arg;
    static const long a[] = {2,  3,  5,  7,  11, 13, 17, 19, 23, 29, 31, 37, 41,
                             43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97};
    defergc_chan *primes = make_int_chan(0);
    GO(sieve, primes);
    for (size_t i = 0; i < sizeof a / sizeof a[0]; i++) {
        long x = recv_int(primes);
        if (x != a[i])
            fail("%ld  !=  %ld", x, a[i]);
    }
}

GO_MAIN(go_main)
