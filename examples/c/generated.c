/*
 * What a Go-like compiler emits for a small program, using defergc's C
 * ABI. The Go source is quoted above each function.
 *
 * Build (from the repository root):
 *     cargo build --release
 *     cc -O2 -Iinclude examples/c/generated.c target/release/libdefergc.a \
 *        -lgcc_s -lutil -lrt -lpthread -lm -ldl -o target/generated
 *     target/generated
 * or, with the library installed (scripts/capi.sh install PREFIX):
 *     cc -O2 examples/c/generated.c $(pkg-config --cflags --libs defergc)
 */
#include "defergc.h"

#include <stdio.h>

/* type Node struct { next *Node; value int } */
typedef struct Node {
    struct Node *next;
    long value;
} Node;

/* var visits = tls.New()  -- a per-thread counter the collector scans */
static defergc_tls_key visits;

/* func (n *Node) visit() { visits++ ... }, deferred in a loop below */
struct visit_args {
    Node *n; /* a GC pointer, kept alive by the record */
};

static void visit(void *args, const defergc_call *call) {
    struct visit_args *a = args;
    (void)call;
    long *count = defergc_tls_get(visits);
    *count += a->n->value >= 0;
}

/* The deferred closure of sum: it captures the named results by reference.
 *     defer func() {
 *         if r := recover(); r != nil { total = -1; bad = r.(*Node) }
 *     }()
 */
struct recover_args {
    volatile long *total;
    Node *volatile *bad;
};

static void sum_recover(void *args, const defergc_call *call) {
    struct recover_args *a = args;
    void *r = NULL;
    if (defergc_recover(call, &r) == DEFERGC_RECOVERED_VALUE) {
        *a->total = -1;
        *a->bad = r;
    }
}

/*
 * func sum(list *Node) (total int, bad *Node) {
 *     defer func() { ... recover ... }()
 *     for n := list; n != nil; n = n.next {
 *         defer n.visit()
 *         if n.value < 0 { panic(n) }
 *         total += n.value
 *     }
 *     return
 * }
 */
static long sum(Node *list, Node **bad_out) {
    volatile long total = 0;
    Node *volatile bad = NULL;
    defergc_frame fr;
    defergc_frame_enter(&fr);
    if (DEFERGC_FRAME_ARM(&fr)) {
        defergc_frame_unwind(&fr); /* returns only if recovered */
        *bad_out = bad;
        return total;
    }
    struct recover_args ra = {&total, &bad};
    defergc_defer(&fr, sum_recover, &ra, sizeof ra);
    for (Node *n = list; n != NULL; n = n->next) {
        struct visit_args va = {n};
        defergc_defer(&fr, visit, &va, sizeof va);
        if (n->value < 0) {
            defergc_panic(n);
        }
        total += n->value;
    }
    defergc_frame_leave(&fr);
    *bad_out = bad;
    return total;
}

/* func build(n int, poison int) *Node */
static Node *build(long n, long poison) {
    Node *head = NULL;
    for (long i = n; i > 0; i--) {
        Node *node = defergc_alloc(sizeof(Node));
        node->value = i == poison ? -i : i;
        node->next = head;
        head = node;
    }
    return head;
}

int main(void) {
    defergc_init();
    defergc_tls_create(&visits, NULL);
    defergc_tls_set(visits, defergc_alloc(sizeof(long)));

    Node *bad = NULL;
    long total = sum(build(100000, 0), &bad);
    printf("sum of 1..100000 = %ld, visits %ld\n", total, *(long *)defergc_tls_get(visits));

    total = sum(build(1000, 500), &bad);
    printf("with a poisoned node: total %ld, recovered the node holding %ld\n", total,
           bad ? bad->value : 0);

    defergc_collect();
    defergc_stats stats;
    defergc_get_stats(&stats);
    printf("%llu collections, heap %llu KiB\n", (unsigned long long)stats.collections,
           (unsigned long long)(stats.heap_size >> 10));
    return total == -1 && bad && bad->value == -500 ? 0 : 1;
}
