/*
 * What a Go-like compiler emits for a program that starts 100,000
 * goroutines, using defergc's C ABI. The Go source is quoted above each
 * function.
 *
 * Build (from the repository root):
 *     cargo build --release
 *     cc -O2 -Iinclude examples/c/goroutines.c target/release/libdefergc.a \
 *        -lgcc_s -lutil -lrt -lpthread -lm -ldl -o target/goroutines
 *     target/goroutines
 */
#include "defergc.h"

#include <stdint.h>
#include <stdio.h>

/* type result struct { id, square int } */
struct result {
    int64_t id;
    int64_t square;
};

/* func worker(id int, out chan<- *result, wg *sync.WaitGroup) {
 *     defer wg.Done()
 *     defer func() {
 *         if r := recover(); r != nil { out <- r.(*result) }
 *     }()
 *     r := &result{id, id * id}
 *     runtime.Gosched()
 *     if id%2 == 1 { panic(r) }   // odd workers deliver by panicking
 *     out <- r
 * } */
struct worker_args {
    int64_t id;
    defergc_chan *out;
    defergc_wg *wg;
};

static void done(void *args, const defergc_call *call) {
    (void)call;
    defergc_wg_done(*(defergc_wg **)args);
}

static void deliver_recovered(void *args, const defergc_call *call) {
    defergc_chan *out = *(defergc_chan **)args;
    void *r = NULL;
    if (defergc_recover(call, &r) == DEFERGC_RECOVERED_VALUE)
        defergc_chan_send(out, &r);
}

static void worker(void *args) {
    struct worker_args *a = args;
    defergc_frame fr;
    defergc_frame_enter(&fr);
    if (DEFERGC_FRAME_ARM(&fr)) {
        defergc_frame_unwind(&fr);
        return;
    }
    defergc_defer(&fr, done, &a->wg, sizeof a->wg);
    defergc_defer(&fr, deliver_recovered, &a->out, sizeof a->out);
    struct result *r = defergc_alloc(sizeof *r);
    r->id = a->id;
    r->square = a->id * a->id;
    defergc_gosched();
    if (a->id % 2 == 1)
        defergc_panic(r);
    defergc_chan_send(a->out, &r);
    defergc_frame_leave(&fr);
}

/* func collect(out <-chan *result, total *int64, done chan<- bool) {
 *     for r := range out { *total += r.square - r.id*r.id + 1 }
 *     done <- true
 * } */
struct collect_args {
    defergc_chan *out;
    int64_t *count;
    defergc_chan *done;
};

static void collect(void *args) {
    struct collect_args *a = args;
    struct result *r;
    while (defergc_chan_recv(a->out, &r))
        *a->count += r->square - r->id * r->id + 1;
    int yes = 1;
    defergc_chan_send(a->done, &yes);
}

/* func main() {
 *     out := make(chan *result, 64); done := make(chan bool)
 *     var wg sync.WaitGroup
 *     go collect(out, &count, done)
 *     for i := 0; i < 100000; i++ { wg.Add(1); go worker(i, out, &wg) }
 *     wg.Wait(); close(out); <-done
 *     fmt.Println(count)
 * } */
static void go_main(void *arg) {
    (void)arg;
    enum { N = 100000 };
    defergc_chan *out = defergc_chan_make(sizeof(struct result *), 1, 64);
    defergc_chan *finished = defergc_chan_make(sizeof(int), 0, 0);
    defergc_wg wg = {{0}};
    int64_t count = 0;
    struct collect_args c = {out, &count, finished};
    defergc_go(collect, &c, sizeof c);
    for (int64_t i = 0; i < N; i++) {
        defergc_wg_add(&wg, 1);
        struct worker_args a = {i, out, &wg};
        defergc_go(worker, &a, sizeof a);
    }
    defergc_wg_wait(&wg);
    defergc_chan_close(out);
    int yes = 0;
    defergc_chan_recv(finished, &yes);
    printf("%lld results from %d goroutines (half delivered by panic and recover)\n",
           (long long)count, N);
}

int main(void) {
    return defergc_main(go_main, NULL);
}
