/*
 * GCBench (Ellis, Kovac, Boehm) in C against the bdwgc build defergc ships:
 * the same workload as `defergc gcbench` (src/cli/gcbench.rs), so that
 * benches/gcbench.rs can compare the Rust API with plain GC_MALLOC.
 *
 * Usage: gcbench [initial_heap_bytes [free_space_divisor]]
 * The bench passes defergc::gc::Config::DEFAULT so that both programs start
 * the collector the same way (see main); without arguments bdwgc's default
 * heap size and free-space divisor are used.
 *
 * Prints one JSON line:
 *   {"bench":"gcbench","impl":"c","elapsed_ms":..,"collections":..,
 *    "peak_heap_bytes":..}
 * and exits 1 (with a message on stderr) if the live data did not survive.
 */
#ifndef GC_THREADS
#  define GC_THREADS 1
#endif
#include "gc.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

enum {
  STRETCH_TREE_DEPTH = 18,
  LONG_LIVED_TREE_DEPTH = 16,
  ARRAY_SIZE = 500000,
  MIN_TREE_DEPTH = 4,
  MAX_TREE_DEPTH = 16
};

typedef struct node {
  struct node *left;
  struct node *right;
  int i, j; /* never used: they give a node the classic 24-byte size */
} node;

static node *new_node(void) {
  /* GC_MALLOC memory is zeroed: both children null. */
  node *n = (node *)GC_MALLOC(sizeof(node));
  if (n == NULL) {
    fputs("gcbench: out of memory\n", stderr);
    abort();
  }
  return n;
}

/* Nodes in a complete tree of the given depth. */
static long tree_size(int depth) { return (1L << (depth + 1)) - 1; }

/* Trees to build at a depth so that each depth allocates as much as two
 * stretch trees. */
static long num_iters(int depth) {
  return 2 * tree_size(STRETCH_TREE_DEPTH) / tree_size(depth);
}

/* Top down: each new node is stored into an older one. */
static void populate(int depth, node *n) {
  node *left, *right;
  if (depth <= 0)
    return;
  left = new_node();
  n->left = left;
  right = new_node();
  n->right = right;
  populate(depth - 1, left);
  populate(depth - 1, right);
}

/* Bottom up: children first, then the node that holds them. */
static node *make_tree(int depth) {
  node *left, *right, *n;
  if (depth <= 0)
    return new_node();
  left = make_tree(depth - 1);
  right = make_tree(depth - 1);
  n = new_node();
  n->left = left;
  n->right = right;
  return n;
}

static void time_construction(int depth) {
  long i, iters = num_iters(depth);
  for (i = 0; i < iters; i++) {
    node *tree = new_node();
    populate(depth, tree);
  }
  /* Dead trees are not kept anywhere, not even in a global "sink": the
   * collector would keep the last one alive. */
  for (i = 0; i < iters; i++)
    make_tree(depth);
}

static long count_nodes(const node *n) {
  if (n->left == NULL || n->right == NULL)
    return 1;
  return 1 + count_nodes(n->left) + count_nodes(n->right);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv) {
  node *volatile long_lived;
  double *volatile array;
  double start, elapsed;
  GC_word gc_before;
  long nodes;
  int i, depth;

  if (argc > 2)
    GC_set_free_space_divisor(strtoul(argv[2], NULL, 10));
  GC_INIT();
  /* What defergc's init does too. In bdwgc 8.3 this is also what starts the
   * parallel mark helpers (and turns on locking): a C program that never
   * creates a thread would otherwise mark on one core and not be comparable. */
  GC_allow_register_threads();
  GC_start_performance_measurement();
  if (argc > 1) {
    size_t want = strtoul(argv[1], NULL, 10);
    size_t have = GC_get_heap_size();
    if (want > have)
      GC_expand_hp(want - have);
  }

  gc_before = GC_get_gc_no();
  start = now_ms();

  /* Stretch the heap with a tree that dies at once. */
  make_tree(STRETCH_TREE_DEPTH);

  /* Live for the whole run: a tree and a half-filled array. */
  long_lived = new_node();
  populate(LONG_LIVED_TREE_DEPTH, long_lived);
  array = (double *)GC_MALLOC_ATOMIC(sizeof(double) * ARRAY_SIZE);
  if (array == NULL) {
    fputs("gcbench: out of memory\n", stderr);
    abort();
  }
  for (i = 0; i < ARRAY_SIZE / 2; i++)
    array[i] = 1.0 / i;

  for (depth = MIN_TREE_DEPTH; depth <= MAX_TREE_DEPTH; depth += 2)
    time_construction(depth);
  elapsed = now_ms() - start;

  nodes = count_nodes(long_lived);
  if (nodes != tree_size(LONG_LIVED_TREE_DEPTH)) {
    fprintf(stderr, "gcbench: the long-lived tree has %ld nodes, expected %ld\n",
            nodes, tree_size(LONG_LIVED_TREE_DEPTH));
    return 1;
  }
  if (array[1000] != 1.0 / 1000) {
    fprintf(stderr, "gcbench: the long-lived array holds %g at 1000\n",
            array[1000]);
    return 1;
  }
  printf("{\"bench\":\"gcbench\",\"impl\":\"c\",\"elapsed_ms\":%.3f,"
         "\"collections\":%lu,\"peak_heap_bytes\":%lu}\n",
         elapsed, (unsigned long)(GC_get_gc_no() - gc_before),
         (unsigned long)GC_get_heap_size());
  return 0;
}
