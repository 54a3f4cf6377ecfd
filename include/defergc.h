/*
 * defergc: Go's defer / panic / recover / Goexit on a garbage-collected
 * heap, for compiler-generated code.
 *
 * Link the static library with
 *     -ldefergc -lgcc_s -lutil -lrt -lpthread -lm -ldl
 * (add -lgc for a build with the system-bdwgc feature; the shared
 * library needs only -ldefergc). `cargo build --release`
 * builds both: target/release/libdefergc.a and libdefergc.so.
 *
 * Include this header first, or compile with -D_POSIX_C_SOURCE=200809L
 * (or a gnu* standard): the frame protocol needs sigsetjmp.
 *
 * Bad input: functions that can report it return an error code
 * (DEFERGC_E*); misuse that cannot be reported (a NULL or foreign frame,
 * frames left out of order) aborts with a message that starts with
 * "defergc:" and names the misuse. Each function says which.
 *
 * Threads: every function registers the calling thread with the collector
 * on first use, and the thread is unregistered when it exits, whether or
 * not it was created with defergc_thread_create.
 *
 * Frame pointers: compile code that calls the runtime with
 * -fno-omit-frame-pointer. Profiles taken in a signal handler walk the
 * stack by its frame pointers; a frame without one ends the walk there,
 * or hides the frames up to the next one that has one.
 */
#ifndef DEFERGC_H
#define DEFERGC_H

#if !defined(_POSIX_C_SOURCE) && !defined(_GNU_SOURCE) && !defined(_DEFAULT_SOURCE)
#define _POSIX_C_SOURCE 200809L
#endif

#include <pthread.h>
#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define DEFERGC_NORETURN __attribute__((noreturn))
#else
#define DEFERGC_NORETURN
#endif

/* ------------------------------------------------------------------ */
/* Error codes (0 is success)                                          */
/* ------------------------------------------------------------------ */

#define DEFERGC_OK 0
#define DEFERGC_EINVAL (-1)      /* invalid argument (NULL, unknown key) */
#define DEFERGC_ENOMEM (-2)      /* out of memory */
#define DEFERGC_EDOUBLEFREE (-3) /* a defer record freed twice */
#define DEFERGC_ENOTRECORD (-4)  /* not a defer record */
#define DEFERGC_EALREADY (-5)    /* the collector has already started */
#define DEFERGC_EIO (-6)         /* a file could not be written */
#define DEFERGC_ENOTPROFILING (-7) /* no CPU profile is on */
#define DEFERGC_ENOTGOROUTINE (-20) /* needs a goroutine, called outside one */
#define DEFERGC_EARGSIZE (-21)   /* argument block above its limit */
#define DEFERGC_ECLOSED (-30)    /* "use of closed network connection" */
#define DEFERGC_ETIMEOUT (-31)   /* "i/o timeout": the deadline passed */
#define DEFERGC_EBADHANDLE (-32) /* not a live poller handle */
#define DEFERGC_EOS (-1000)      /* a system error: DEFERGC_EOS - errno */
/* The errno of a code below DEFERGC_EOS. */
#define DEFERGC_ERRNO(code) ((int)(DEFERGC_EOS - (code)))

/* ------------------------------------------------------------------ */
/* The collector                                                       */
/* ------------------------------------------------------------------ */

/* Starts the collector. Idempotent; every other function does it too. */
void defergc_init(void);

/* Collectable memory that is scanned for pointers and zeroed. NULL when
 * out of memory. */
void *defergc_alloc(size_t size);

/* Collectable memory that holds no pointers (never scanned, not zeroed).
 * NULL when out of memory. */
void *defergc_alloc_atomic(size_t size);

/* Scanned memory that is never collected (a GC root), zeroed; released
 * only by defergc_free. NULL when out of memory. */
void *defergc_alloc_uncollectable(size_t size);

/* Frees memory from the allocation functions now. NULL is ignored. Aborts
 * ("defergc: defergc_free(...)") for a pointer that does not start one of
 * them (stack, malloc or foreign memory, or inside an allocation) and for
 * a second free (certain within the next 64 frees: until then the memory
 * is cleared and held back). */
void defergc_free(void *p);

/* Resizes an allocation, keeping its kind and contents (like realloc).
 * NULL when out of memory. Aborts like defergc_free for a pointer that is
 * not a live allocation. */
void *defergc_realloc(void *p, size_t size);

/* Runs a full collection. Does nothing when built without a collector. */
void defergc_collect(void);

/* runtime.GC() for tests that must see their garbage collected (a
 * finalizer or a weak pointer that must go): zeroes the dead part of the
 * caller's stack (64 KiB below its frame, where returned calls left their
 * locals) before collecting, so that no stale pointer there keeps an
 * object alive; bdwgc scans stacks conservatively. Make the garbage in a
 * function that has returned: the caller's own frame is not cleared. */
void defergc_collect_with_clean_stack(void);

typedef struct defergc_stats {
    uint64_t heap_size;                /* bytes in the heap */
    uint64_t free_bytes;               /* free bytes in the heap */
    uint64_t unmapped_bytes;           /* heap bytes returned to the OS */
    uint64_t bytes_allocated_since_gc; /* since the last collection */
    uint64_t bytes_allocated_total;    /* over the process's life */
    uint64_t collections;              /* collections completed */
    uint64_t markers;                  /* marker threads */
    uint64_t gc_time_ns;               /* total time in collections */
    uint64_t stopped_time_ns;          /* total time the world was stopped */
    uint64_t max_pause_ns;             /* the longest stop of the world */
    uint64_t warnings;                 /* collector warnings */
} defergc_stats;

/* Fills *out. Returns 0, or DEFERGC_EINVAL if out is NULL. */
int defergc_get_stats(defergc_stats *out);

/* ------------------------------------------------------------------ */
/* Threads                                                             */
/* ------------------------------------------------------------------ */

/* Registers the calling thread (idempotent; automatic anyway). 0. */
int defergc_register_thread(void);

/* Unregisters the calling thread now: its stack is no longer scanned.
 * Any later call registers it again. 0. */
int defergc_unregister_thread(void);

/* Like pthread_create, for threads that run compiled code: registered
 * before start runs; a goroutine boundary (Goexit ends the thread with a
 * NULL result; an unrecovered panic prints Go's report and exits the
 * process with status 2). Returns once the new thread is registered and
 * holds arg, so arg may be a collected object nothing else refers to.
 * Returns pthread_create's result, or EINVAL for a NULL thread or
 * start. */
int defergc_thread_create(pthread_t *thread, const pthread_attr_t *attr,
                          void *(*start)(void *), void *arg);

/* ------------------------------------------------------------------ */
/* Per-thread slots the collector scans                                */
/* ------------------------------------------------------------------ */

typedef uint64_t defergc_tls_key;

/* Creates a slot; *key receives its key. destructor (may be NULL) runs at
 * thread exit on the thread's value if it is not NULL. The main thread's
 * values live until the process exits; their destructors do not run.
 * Returns 0, DEFERGC_EINVAL if key is NULL, DEFERGC_ENOMEM if the key
 * table is full. No PTHREAD_KEYS_MAX limit. */
int defergc_tls_create(defergc_tls_key *key, void (*destructor)(void *));

/* The calling thread's value (NULL if never set). Aborts with a
 * "defergc:" message for a key defergc_tls_create never returned. */
void *defergc_tls_get(defergc_tls_key key);

/* Sets the calling thread's value: whatever it points to stays alive.
 * Returns 0, or DEFERGC_EINVAL for an unknown key. */
int defergc_tls_set(defergc_tls_key key, void *value);

/* ------------------------------------------------------------------ */
/* Defer frames                                                        */
/* ------------------------------------------------------------------ */

/* The token a deferred function gets: pass it to defergc_recover. Code
 * that was not called as a deferred call passes NULL. */
typedef struct defergc_call defergc_call;

/* A deferred function: args points to the copy of the argument bytes
 * made at the defer statement (valid, and scanned, during the call). */
typedef void (*defergc_fn)(void *args, const defergc_call *call);

#define DEFERGC_FRAME_PRIV 16

/* A function's frame, in its own stack frame. Runtime-owned except jb. */
typedef struct defergc_frame {
    uintptr_t priv[DEFERGC_FRAME_PRIV];
    sigjmp_buf jb;
} defergc_frame;

/* The runtime finds jb right after the private part. */
typedef char defergc_frame_layout_check[
    offsetof(defergc_frame, jb) == DEFERGC_FRAME_PRIV * sizeof(uintptr_t) ? 1 : -1];

/* Arms the frame: must be invoked in the function that owns the frame,
 * as the whole controlling expression of an if. 0 when armed; non-zero
 * when a panic landed in the frame, after which the function calls
 * defergc_frame_unwind. Locals the function reads after landing (named
 * results) must be volatile or live in memory the deferred calls see.
 *
 *     defergc_frame fr;
 *     defergc_frame_enter(&fr);
 *     if (DEFERGC_FRAME_ARM(&fr)) {
 *         defergc_frame_unwind(&fr);   -- returns only if recovered
 *         return result;
 *     }
 *     ... defergc_defer(&fr, fn, &args, sizeof args); ...
 *     defergc_frame_leave(&fr);
 *     return result;
 */
#define DEFERGC_FRAME_ARM(fr) sigsetjmp((fr)->jb, 0)

/* Links fr as the thread's innermost frame. Aborts ("defergc:") if fr is
 * NULL or is already the innermost frame (entered twice, or its function
 * returned without leaving it and was called again). A panic that would
 * land in a frame whose function returned without leaving it aborts too
 * ("defergc: panic: ...") when the frame is gone from the stack. */
void defergc_frame_enter(defergc_frame *fr);

/* The largest argument block of defergc_defer. */
#define DEFERGC_DEFER_MAX_ARGS 65536

/* Defers fn with a copy of the size bytes at args (Go evaluates the
 * arguments at the defer statement). A NULL fn panics when the call would
 * run. Aborts ("defergc:") if fr is NULL, was never entered or already
 * left, is not the thread's innermost frame, or is running its calls, and
 * for a size above DEFERGC_DEFER_MAX_ARGS (before anything is read). */
void defergc_defer(defergc_frame *fr, defergc_fn fn, const void *args, size_t size);

/* Normal return: runs the deferred calls, newest first. Returns iff the
 * function should return normally; a panic raised by a deferred call is
 * handled here (the remaining calls still run) and, unless one of them
 * recovers it, goes on to the next frame out. Aborts ("defergc:") for a
 * bad frame (as defergc_defer), one a panic landed in, and when called
 * from one of the frame's own deferred calls. */
void defergc_frame_leave(defergc_frame *fr);

/* After a panic landed: runs the deferred calls with the panic in flight.
 * Returns iff one of them recovered it; otherwise the panic goes on to the
 * next frame out. Aborts ("defergc:") for a bad frame, if no panic landed
 * in fr, and when called from one of the frame's own deferred calls. */
void defergc_frame_unwind(defergc_frame *fr);

/* Go's panic(value). value stays alive while the panic is in flight. NULL
 * panics with "panic called with nil argument" (Go 1.21). With no frame to
 * run deferred calls, prints Go's report and exits with status 2.
 *
 * How the process ends after an unrecovered panic or a fatal error (in
 * any goroutine or thread, one path for all): C's stdio buffers are
 * flushed (fflush(NULL)), so what the program printed comes before the
 * report, as a Go program's unbuffered output does; the report goes to
 * standard error; the process ends with _exit(2): atexit handlers and
 * destructors do not run (Go's runtime runs none, and other threads may
 * be running the program). GOTRACEBACK=crash ends with SIGABRT instead.
 * A goroutine's stack overflow is reported from the fault handler: no
 * flush there, only write(2) and _exit(2). */
DEFERGC_NORETURN void defergc_panic(void *value);

/* What defergc_recover returns. */
#define DEFERGC_RECOVERED_NOTHING 0
#define DEFERGC_RECOVERED_VALUE 1 /* *value: what defergc_panic got */
#define DEFERGC_RECOVERED_NIL 2   /* defergc_panic(NULL); *value is NULL */
#define DEFERGC_RECOVERED_ERROR 3 /* a run-time error or a Rust panic;
                                     *value: its message (GC memory) */

/* Go's recover(), for the deferred function that got call: effective only
 * when that call runs for a panic that is still the newest one and not yet
 * recovered (and only once). NULL, stale or foreign tokens recover
 * nothing: a token is an identity no other call ever has, not an address.
 * value may be NULL. */
int defergc_recover(const defergc_call *call, void **value);

/* Typed panic values: what Go's panic(v) gets is an interface value, a
 * type and a data word. Compiled code describes each type once (a static
 * defergc_rtype) and panics with defergc_panic_iface; the unrecovered
 * report prints the value as Go's runtime does: Error() for an error,
 * String() for a Stringer, a basic kind by value ("hello", 42, true,
 * +1.500000e+000), a named basic type as name(value) (main.Celsius(5),
 * main.S("x")), anything else as "(name) 0xdata". */

/* Go's kinds (reflect.Kind numbers) for defergc_rtype.kind; 0 for any
 * other kind (struct, pointer, slice, map...). */
#define DEFERGC_KIND_BOOL 1
#define DEFERGC_KIND_INT 2
#define DEFERGC_KIND_INT8 3
#define DEFERGC_KIND_INT16 4
#define DEFERGC_KIND_INT32 5
#define DEFERGC_KIND_INT64 6
#define DEFERGC_KIND_UINT 7
#define DEFERGC_KIND_UINT8 8
#define DEFERGC_KIND_UINT16 9
#define DEFERGC_KIND_UINT32 10
#define DEFERGC_KIND_UINT64 11
#define DEFERGC_KIND_UINTPTR 12
#define DEFERGC_KIND_FLOAT32 13
#define DEFERGC_KIND_FLOAT64 14
#define DEFERGC_KIND_COMPLEX64 15
#define DEFERGC_KIND_COMPLEX128 16
#define DEFERGC_KIND_STRING 24

/* A Go string: bytes and length, not NUL-terminated. */
typedef struct defergc_string {
    const char *ptr;
    size_t len;
} defergc_string;

/* A method that writes text (Error() or String()) of the value at data:
 * at most cap bytes into buf; returns the length it needed (the runtime
 * calls again with a larger buffer when that is more than cap). */
typedef size_t (*defergc_text_fn)(const void *data, char *buf, size_t cap);

/* A type descriptor: static, alive for the program's life. */
typedef struct defergc_rtype {
    size_t size;            /* sizeof(defergc_rtype): the version */
    const char *name;       /* Go's type string: "string", "main.T" */
    uint32_t kind;          /* DEFERGC_KIND_*, or 0 */
    defergc_text_fn error;  /* Error(), for a type implementing error */
    defergc_text_fn string; /* String(), for a Stringer */
} defergc_rtype;

/* An interface value. data points to the value (for a string kind, to a
 * defergc_string); for pointer-shaped kinds it may be the pointer itself
 * (kind 0: printed as the address). NULL type: the nil interface. */
typedef struct defergc_iface {
    const defergc_rtype *type;
    void *data;
} defergc_iface;

/* Go's panic(v) for an interface value: type (a static descriptor) and
 * data (kept alive while the panic is in flight). A NULL type panics with
 * "panic called with nil argument", as panic(nil) does. Aborts
 * ("defergc:") for a descriptor of another version (size). A value
 * re-panicked after recover returned it prints once, with
 * " [recovered, repanicked]", as Go 1.25 prints it. */
DEFERGC_NORETURN void defergc_panic_iface(const defergc_rtype *type, void *data);

/* defergc_recover for typed values: the same rule and result code
 * (DEFERGC_RECOVERED_IFACE for a value of defergc_panic_iface), and *value
 * gets the value as an interface: the one given to defergc_panic_iface; a
 * defergc_panic pointer as defergc_rtype_unsafe_pointer; a run-time error
 * or a Rust panic as defergc_rtype_runtime_error with its message (a
 * defergc_string in GC memory); nothing or nil as {NULL, NULL}. value may
 * be NULL. */
#define DEFERGC_RECOVERED_IFACE 4
int defergc_recover_iface(const defergc_call *call, defergc_iface *value);

/* The runtime's own types of recovered values (see above). */
extern const defergc_rtype defergc_rtype_unsafe_pointer;
extern const defergc_rtype defergc_rtype_runtime_error;

/* Go's runtime.Goexit(): runs every deferred call of the thread, then ends
 * it (pthread_exit, or the defergc_thread_create boundary). On the
 * process's main thread outside defergc_main, which has no goroutine to
 * hand over to, the process then ends as Go's does when main calls Goexit
 * and nothing else runs: "fatal error: no goroutines (main called
 * runtime.Goexit) - deadlock!", status 2. */
DEFERGC_NORETURN void defergc_goexit(void);

/* Go's runtime.Callers(skip, pcs): up to n return addresses of the
 * calling thread's frames, innermost first; skip 0 is defergc_callers
 * itself, 1 its caller. Returns how many were written (0 for a negative
 * skip or n, or a NULL pcs). Compiled code needs unwind tables (the
 * default on x86-64 Linux). */
int defergc_callers(int skip, uintptr_t *pcs, int n);

/* What runtime.CallersFrames / runtime.FuncForPC say about one address. */
typedef struct defergc_funcinfo {
    const char *function; /* the function's name */
    const char *file;     /* its source file, NULL without debug info */
    int line;             /* the line, 0 without debug info */
    uintptr_t entry;      /* the function's first instruction, 0 if unknown */
} defergc_funcinfo;

/* Fills *out for an address defergc_callers returned (the strings live
 * for the program) and returns 1, or 0 if no function covers it or out is
 * NULL. */
int defergc_funcinfo_of(uintptr_t pc, defergc_funcinfo *out);

/* Go's runtime.Caller(skip): the return address, file and line in the
 * caller (skip 0) or further up; 1 if found, else 0. Any out-pointer may
 * be NULL. */
int defergc_caller(int skip, uintptr_t *pc, const char **file, int *line);

/* Go's runtime.Stack(buf, all): "goroutine N [running]:" and the calling
 * goroutine's frames as a report prints them, then with all != 0 every
 * other goroutine's section (wait reason, frames, "created by"); at most
 * len bytes, not NUL-terminated. Returns the bytes written. */
size_t defergc_stack(char *buf, size_t len, int all);

/* Hardware faults in compiled code as Go's run-time panics: with on != 0,
 * a SIGSEGV or SIGBUS at an address below 4096 (*p with p nil) panics with
 * "runtime error: invalid memory address or nil pointer dereference", a
 * SIGFPE for an integer division with "runtime error: integer divide by
 * zero", delivered to the innermost frame like defergc_panic (a deferred
 * recover stops them); the unrecovered report carries Go's line
 * "[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x...]".
 * A fault at any other address is Go's "fatal error: fault", one in the
 * runtime's own code "fatal error: unexpected signal during runtime
 * execution" (status 2). Concerned are every goroutine (whether or not
 * it ever deferred), threads of defergc_thread_create, threads with a
 * frame or deferred call in flight, and a plain thread that called
 * defergc_catch_faults(1) itself; faults on other threads, and signals
 * sent with kill, go to the handler installed before (or the default
 * action). x86-64 Linux.
 * Off until asked for; defergc_main turns it on unless the program called
 * defergc_catch_faults(0) before. */
void defergc_catch_faults(int on);

/* ------------------------------------------------------------------ */
/* The low-level chain, for runtimes that keep their own frames         */
/* ------------------------------------------------------------------ */

/* The thread's defer head: a word in root memory, so whatever chain hangs
 * off it stays alive. */
void *defergc_defer_head_get(void);
void defergc_defer_head_set(void *head);
void defergc_defer_head_clear(void);

/* A zeroed record of size bytes in root memory (never NULL: aborts,
 * "defergc:", when out of memory or for more than 1 GiB). */
void *defergc_record_alloc(size_t size);

/* Frees a record right after its call ran. Returns 0, DEFERGC_EINVAL for
 * NULL, DEFERGC_EDOUBLEFREE for a record freed twice (certain within the
 * next 64 frees of the thread), DEFERGC_ENOTRECORD for any other address
 * (checked with the collector before anything is read). */
int defergc_record_free(void *record);

/* ------------------------------------------------------------------ */
/* Goroutines                                                          */
/* ------------------------------------------------------------------ */

/* Goroutines run on coroutine stacks (256 KiB of address space each by
 * default: DEFERGC_STACK_SIZE, e.g. "1MiB"), scheduled over GOMAXPROCS
 * worker threads (the GOMAXPROCS environment variable, else the cores;
 * defergc_gomaxprocs changes it while goroutines run).
 * Each has its own defer chain, panics and recover tokens; frames of the
 * C protocol work inside goroutines. A goroutine switches in runtime
 * calls (gosched, park, and what is built on them), at
 * defergc_exit_syscall, at preemption points (below defergc_gosched),
 * and, on x86-64 Linux, when it is preempted asynchronously: a SIGURG
 * makes it yield between two instructions of compiled code (never inside
 * the runtime, bdwgc, libc or the loader; every register and the vector
 * state are restored exactly). Compiled code is the executable's
 * functions that are not the runtime's, and the ranges given to
 * defergc_preempt_text. GODEBUG=asyncpreemptoff=1 turns it off. A SIGURG
 * handler the program installed before the runtime keeps being called,
 * and may see SIGURGs it did not send. System calls may return EINTR (the
 * handler has SA_RESTART; some calls fail regardless).
 * Code that blocks its thread
 * goes between defergc_enter_syscall and defergc_exit_syscall. A stack
 * overflow ends the process: "defergc: goroutine N stack overflow",
 * status 2.
 * A goroutine may resume on another worker thread after any call that can
 * switch (every blocking operation, gosched, park, exit_syscall, the
 * preemption points): a C
 * thread-local (_Thread_local, __thread, pthread keys) read before such a
 * call and after it may name two threads' variables, and a C compiler may
 * even reuse the first address for the second read. Keep per-goroutine
 * state in the goroutine (defergc_goroutine_locals, your own records), as
 * Go code has no thread-locals.
 *
 * fork() from a goroutine: the child keeps the forking goroutine only;
 * every other goroutine is dead there and never runs. The child may
 * allocate, exec, _exit, use plain libc, and start goroutines and wait for
 * them on channels and locks it made itself (one shared with another
 * goroutine may stay held). Exec or _exit soon after the fork, as the
 * child of Go's syscall.ForkExec does, is the safe use. fork() may be
 * called inside defergc_enter_syscall/defergc_exit_syscall or outside.
 *
 * Below each goroutine stack lies a 64 KiB guard zone (address space
 * only): any access less than 64 KiB below the stack is caught, so every
 * function whose frame is smaller than 64 KiB is, even compiled without
 * stack probes (gcc's and clang's default on many systems, which may
 * touch a frame's lowest bytes first). Code with larger frames must probe
 * its stack (-fstack-clash-protection: a touch every page on the way
 * down) or check, in its prologue, the stack pointer less the frame size
 * against the stack's low end, as Go's compiler does; an unprobed frame of
 * 64 KiB or more can jump the guard into another goroutine's stack. */

/* The largest argument block of defergc_go. */
#define DEFERGC_GO_MAX_ARGS 65536
/* Goroutine-local words (defergc_goroutine_locals). */
#define DEFERGC_GO_LOCALS 8

/* A goroutine entry point: args points to the copy of its argument block,
 * valid (and scanned by the collectors) while the goroutine runs. */
typedef void (*defergc_go_fn)(void *args);

/* A goroutine, for defergc_ready. */
typedef struct defergc_goroutine {
    void *g;
    uint64_t id;
} defergc_goroutine;

/* func main() { main(arg) }: runs main as the main goroutine and returns
 * the exit status (0) when it returns; other goroutines are not waited
 * for. As in Go: an unrecovered panic in any goroutine prints Go's report
 * and exits with status 2; if main calls defergc_goexit, the other
 * goroutines run on, and when none is left the process ends with
 * "fatal error: no goroutines (main called runtime.Goexit) - deadlock!";
 * when every goroutine is blocked for good, with "fatal error: all
 * goroutines are asleep - deadlock!" (status 2). Aborts ("defergc:") for a
 * NULL main, or while another main goroutine runs. */
int defergc_main(void (*main)(void *arg), void *arg);

/* go fn(args): starts a goroutine running fn with a copy of the size bytes
 * at args (made now, as Go evaluates a go statement's arguments). 0;
 * DEFERGC_EINVAL for a NULL fn, or NULL args with a non-zero size;
 * DEFERGC_EARGSIZE above DEFERGC_GO_MAX_ARGS (nothing is read). An
 * unrecovered panic in it ends the process (Go's report, status 2). */
int defergc_go(defergc_go_fn fn, const void *args, size_t size);

/* runtime.Gosched(): lets other goroutines run (outside one: yields). */
void defergc_gosched(void);

/* Preemption requests and the poll point.
 *
 * The runtime's monitor thread (sysmon) asks a goroutine that has run one
 * time slice for 10 ms without switching to yield. A goroutine honours the
 * request at its next preemption point: a blocking channel operation or
 * select, a mutex, rwmutex or wait-group wait, defergc_alloc and
 * defergc_alloc_atomic, and DEFERGC_PREEMPT_POINT(). There it yields to
 * the back of the global run queue (Go's gopreempt_m), and may resume on
 * another worker thread (see the note on C thread-locals above).
 *
 * DEFERGC_PREEMPT_POINT() is the poll point for a compiler to put at loop
 * back-edges (and function prologues if it likes) in code where a signal
 * cannot be used to interrupt it: one relaxed load of
 * defergc_preempt_pending and a branch not taken while it is zero (no
 * request pending anywhere: almost always); only then the out-of-line
 * defergc_preempt_check(), which yields if this goroutine was asked and
 * returns at once otherwise. Go before 1.14 had only such cooperative
 * checks, at function prologues (the stack-bound check with the bound
 * poisoned): a loop without calls was never preempted (Go issue 10958);
 * Go 1.14 added the signal. With GOMAXPROCS=1 a goroutine that loops
 * without any preemption point keeps its worker, and every other
 * goroutine waits.
 *
 * defergc_preempt_pending: how many requests are pending (read it only
 * through the macro; its exact value is a hint). */
extern uint32_t defergc_preempt_pending;

/* Yields if sysmon asked the running goroutine to; else returns. Nothing
 * outside a goroutine, or between defergc_enter_syscall and
 * defergc_exit_syscall. */
void defergc_preempt_check(void);

#if defined(__GNUC__) || defined(__clang__)
#define DEFERGC_PREEMPT_POINT()                                              \
    do {                                                                     \
        if (__builtin_expect(                                                \
                __atomic_load_n(&defergc_preempt_pending, __ATOMIC_RELAXED), \
                0))                                                          \
            defergc_preempt_check();                                         \
    } while (0)
#else
#define DEFERGC_PREEMPT_POINT()                                              \
    do {                                                                     \
        if (*(volatile uint32_t *)&defergc_preempt_pending)                  \
            defergc_preempt_check();                                         \
    } while (0)
#endif

/* The running goroutine's id (1 for the main goroutine of a program whose
 * first call was defergc_main), 0 outside a goroutine. */
uint64_t defergc_goid(void);

/* The running goroutine, for defergc_ready ({NULL, 0} outside one). */
defergc_goroutine defergc_self(void);

/* Parks the running goroutine until defergc_ready(it). A ready that came
 * first makes it return at once, like a futex wait: wait in a loop on
 * your own condition. reason (NULL or a string literal) is what a
 * deadlock report lists it as waiting for. 0, or DEFERGC_ENOTGOROUTINE
 * outside a goroutine. The primitive a language's channels and locks
 * build on. */
int defergc_park(const char *reason);

/* Parks like defergc_park, then calls unlock(arg) on the worker thread
 * once the goroutine has switched out (Go's gopark with an unlock
 * function): join a wait queue under your lock, park with unlock
 * releasing it, and your waker (who takes the lock) finds you parked.
 * unlock must not park or unwind. 0; DEFERGC_ENOTGOROUTINE outside a
 * goroutine (unlock is called); DEFERGC_EINVAL for a NULL unlock. */
int defergc_park_unlock(const char *reason, void (*unlock)(void *arg), void *arg);

/* Makes g runnable: a parked g runs again; otherwise its next park returns
 * at once. From any thread. 1; 0 if g has ended (a stale handle wakes
 * nothing, even if a new goroutine reuses g's memory); DEFERGC_EINVAL for
 * a handle that names no goroutine.
 * A ready is only a hint that something changed, like a futex wake: a
 * goroutine blocked inside the runtime (a channel operation, select,
 * sleep, a timer, a sync type) that is readied by someone other than the
 * operation it waits for re-checks its condition and parks again, so the
 * operation completes exactly as it would have, and nothing the runtime
 * keeps on that goroutine's stack for its wait is touched by the ready.
 * Your own waits built on defergc_park must loop on their condition the
 * same way. */
int defergc_ready(defergc_goroutine g);

/* Around code that blocks the thread (a system call, native code). The
 * enter only marks the worker's processor as in a system call (two stores,
 * no lock); the exit takes it back with one compare-and-swap. If the call
 * lasts (sysmon sees it in two rounds, 20 us or more), sysmon hands the
 * processor to another thread meanwhile, so other goroutines keep running;
 * the exit then takes an idle processor or waits for one. Nothing outside
 * a goroutine; an exit without an enter, or a second enter, does
 * nothing. */
void defergc_enter_syscall(void);
void defergc_exit_syscall(void);

/* runtime.GOMAXPROCS(n): sets the number of processors (goroutines
 * running at once) to n and returns the previous number; n < 1 only reads
 * it, and n above 1024 sets 1024. Callable from any thread, inside a
 * goroutine or not (it starts the scheduler if needed). A change stops
 * every processor at its worker's next scheduling point (a runtime call
 * that can switch: a goroutine that loops without one delays it), moves
 * the goroutines queued on processors beyond n to the global queue, and
 * starts the world again; the caller waits meanwhile. */
int defergc_gomaxprocs(int n);

/* runtime.LockOSThread() / runtime.UnlockOSThread(), Go 1.10's semantics:
 * the running goroutine keeps its worker thread, and that thread runs no
 * other goroutine, until as many unlocks as locks (calls nest). C
 * thread-locals and per-thread state (signal masks, namespaces) then stay
 * the goroutine's across every switch. A goroutine that returns while
 * locked ends its thread (it is not reused). An unlock with no lock to
 * undo does nothing. The main goroutine (defergc_main) runs on a worker
 * thread, not on the thread that called defergc_main. Each returns 0, or
 * DEFERGC_ENOTGOROUTINE outside a goroutine (and does nothing). */
int defergc_lock_os_thread(void);
int defergc_unlock_os_thread(void);

/* The running goroutine's DEFERGC_GO_LOCALS words: zero at its start,
 * scanned by the collectors (an object stored there stays alive while the
 * goroutine lives). NULL outside a goroutine. */
uintptr_t *defergc_goroutine_locals(void);

/* Declares [start, start + len) compiled code in which goroutines may be
 * preempted asynchronously: code a compiler generated outside the
 * executable's symbol table (a shared library, code it loads itself). The
 * executable's own functions need no call. Returns 0; DEFERGC_EINVAL for
 * a NULL start, a zero len or a range that wraps around; DEFERGC_ENOMEM
 * when 64 ranges are registered already. The code must be safe to stop
 * at any instruction: no lock or state of the runtime held, no
 * thread-local address kept in a register (the goroutine may resume on
 * another thread). */
int defergc_preempt_text(const void *start, size_t len);

/* runtime.NumGoroutine(). */
uint64_t defergc_num_goroutine(void);

/* Between these, code outside the goroutines (a foreign thread, a C
 * library's callback) may ready a goroutine: parked goroutines are then
 * not reported as a deadlock. Calls nest. */
void defergc_external_hold(void);
void defergc_external_release(void);

/* pprof.Lookup("goroutine").WriteTo: every goroutine's stack, counted by
 * stack, in pprof's protobuf format (`go tool pprof -top FILE`). Stops
 * the world while the stacks are read. 0, DEFERGC_EINVAL for NULL (or a
 * negative fd), DEFERGC_EIO when the file cannot be written. The _fd form
 * writes to an open descriptor and leaves it open. */
int defergc_write_goroutine_profile(const char *path);
int defergc_write_goroutine_profile_fd(int fd);

/* ------------------------------------------------------------------ */
/* Channels, select, sleep and timers                                  */
/* ------------------------------------------------------------------ */

/* A channel of compiled code: an object of the collected heap, collected
 * when unreachable, as Go's are. Blocking operations park a goroutine (or
 * block a plain thread). Operations that may panic do so as Go does
 * (defergc's panic of the C protocol, delivered to the innermost frame),
 * with Go's messages: "send on closed channel", "close of closed
 * channel", "close of nil channel". A NULL channel is Go's nil channel:
 * sends and receives wait forever. */
typedef struct defergc_chan defergc_chan;

/* make(chan T, cap): elem_size is sizeof(T) (at most 65535, Go's limit),
 * pointers whether T holds pointers the collector must follow (bdwgc
 * pointers, or precise handles: with the precise collector built in, the
 * buffer of such a channel is read by it too, for as long as the channel
 * lives). Fails as Go's makechan does: a larger element is the fatal
 * error "makechan: invalid channel element type" (status 2; Go's compiler
 * never lets such a type reach the runtime), and a cap above PTRDIFF_MAX
 * (Go's negative size) or a buffer that cannot be allocated panics with
 * "makechan: size out of range". */
defergc_chan *defergc_chan_make(size_t elem_size, int pointers, size_t cap);

/* c <- *elem (copies elem_size bytes from elem). */
void defergc_chan_send(defergc_chan *c, const void *elem);

/* v, ok := <-c into elem (NULL: discard). Returns ok: 1 for a value, 0 when
 * c is closed and drained (then *elem is zeroed). */
int defergc_chan_recv(defergc_chan *c, void *elem);

/* select { case c <- *elem: 1; default: 0 } */
int defergc_chan_try_send(defergc_chan *c, const void *elem);

/* select { case v, ok := <-c: *ok = ok; 1; default: 0 } (ok may be NULL) */
int defergc_chan_try_recv(defergc_chan *c, void *elem, int *ok);

/* close(c) */
void defergc_chan_close(defergc_chan *c);

/* len(c), cap(c) (0 for NULL) */
size_t defergc_chan_len(defergc_chan *c);
size_t defergc_chan_cap(defergc_chan *c);

#define DEFERGC_SELECT_SEND 1
#define DEFERGC_SELECT_RECV 2

/* One case of a select: a channel (NULL: never ready), a direction, and
 * the element to send from or receive into (NULL: discard). */
typedef struct defergc_select_case {
    defergc_chan *chan;
    int dir;
    void *elem;
} defergc_select_case;

/* select { case ...: } over n cases: completes one ready case, chosen
 * uniformly at random among the ready ones, and returns its index; for a
 * receive, *recv_ok (may be NULL) is 1 for a value, 0 for a closed
 * channel. With block == 0 and no case ready: -1 (the default case). A
 * blocking select with no case, or only NULL channels, waits forever.
 * Panics for a send on a closed channel; aborts ("defergc:") for NULL
 * cases with n > 0 or a direction that is neither of the two. */
ptrdiff_t defergc_select(defergc_select_case *cases, size_t n, int block, int *recv_ok);

/* time.Sleep(ns): parks a goroutine, sleeps a plain thread. */
void defergc_sleep_ns(int64_t ns);

/* time.NewTimer(ns): a timer (collected heap) whose channel receives the
 * time, as an int64_t of nanoseconds since 1970, when ns has passed.
 * Pending timers keep the goroutines waiting on them from being reported
 * as deadlocked. */
typedef struct defergc_timer defergc_timer;
defergc_timer *defergc_timer_new(int64_t ns);
defergc_chan *defergc_timer_chan(defergc_timer *t);
/* t.Stop(): 1 if it was pending (it will not fire). */
int defergc_timer_stop(defergc_timer *t);
/* t.Reset(ns): 1 if it was pending. */
int defergc_timer_reset(defergc_timer *t, int64_t ns);
/* time.After(ns) */
defergc_chan *defergc_after(int64_t ns);

/* ------------------------------------------------------------------ */
/* sync                                                                */
/* ------------------------------------------------------------------ */

/* Go's sync types: plain data to embed anywhere, ready when zeroed (as
 * Go's zero values). Waiting parks a goroutine (or blocks a thread). A
 * NULL object aborts ("defergc: <function>: NULL object"). Unlocking an
 * unlocked mutex is Go's fatal error ("fatal error: sync: unlock of
 * unlocked mutex", status 2); a negative wait-group counter panics
 * ("sync: negative WaitGroup counter"). */
typedef struct defergc_mutex { uint32_t opaque_[2]; } defergc_mutex;
typedef struct defergc_rwmutex { uint32_t opaque_[6]; } defergc_rwmutex;
typedef struct defergc_wg { uint64_t opaque_[2]; } defergc_wg;
typedef struct defergc_once { uint32_t opaque_[4]; } defergc_once;
typedef struct defergc_cond { uint64_t opaque_[4]; } defergc_cond;

void defergc_mutex_lock(defergc_mutex *m);
int defergc_mutex_trylock(defergc_mutex *m); /* 1 if it locked it */
void defergc_mutex_unlock(defergc_mutex *m);

void defergc_rwmutex_rlock(defergc_rwmutex *rw);
void defergc_rwmutex_runlock(defergc_rwmutex *rw);
void defergc_rwmutex_lock(defergc_rwmutex *rw);
void defergc_rwmutex_unlock(defergc_rwmutex *rw);

void defergc_wg_add(defergc_wg *wg, int delta);
void defergc_wg_done(defergc_wg *wg);
void defergc_wg_wait(defergc_wg *wg);

/* once.Do(func() { f(arg) }): if f panics, the once counts as done and the
 * panic goes on. */
void defergc_once_do(defergc_once *o, void (*f)(void *arg), void *arg);

/* c.Wait() with locker m (locked): unlocks m, waits, locks m again. Wake-
 * ups may come without the condition holding: wait in a loop. */
void defergc_cond_wait(defergc_cond *c, defergc_mutex *m);
void defergc_cond_signal(defergc_cond *c);
void defergc_cond_broadcast(defergc_cond *c);

/* ------------------------------------------------------------------ */
/* The precise collector (built with the `precise` feature)            */
/* ------------------------------------------------------------------ */

/* Objects are reached through handles (0 is null); threads keep the
 * handles they need on a shadow stack of frames; tracing is exact. Every
 * function exists in every build: without the feature each reports
 * DEFERGC_PRECISE_ENOTBUILT (or returns 0/NULL with it in *err).
 *
 * Errors are DEFERGC_PRECISE_E*, -(100 + the precise::Error code).
 * Functions returning a handle or a pointer return 0/NULL on error and
 * store the code in *err when err is not NULL. Bad handles (null, invalid,
 * stale), unknown types and out-of-object offsets are always checked. */

typedef uint64_t defergc_handle;
typedef uint32_t defergc_type;

#define DEFERGC_PRECISE_ENOTBUILT (-100)
#define DEFERGC_PRECISE_ENULLHANDLE (-101)
#define DEFERGC_PRECISE_EINVALIDHANDLE (-102)
#define DEFERGC_PRECISE_ESTALEHANDLE (-103)
#define DEFERGC_PRECISE_EUNKNOWNTYPE (-104)
#define DEFERGC_PRECISE_EOUTOFBOUNDS (-105)
#define DEFERGC_PRECISE_ENOTAHANDLEFIELD (-106)
#define DEFERGC_PRECISE_EHANDLEFIELDOVERLAP (-107)
#define DEFERGC_PRECISE_EWRONGTYPEKIND (-108)
#define DEFERGC_PRECISE_EINVALIDLAYOUT (-109)
#define DEFERGC_PRECISE_ETOOLARGE (-110)
#define DEFERGC_PRECISE_EHEAPLIMIT (-111)
#define DEFERGC_PRECISE_EOUTOFMEMORY (-112)
#define DEFERGC_PRECISE_EOUTOFHANDLES (-113)
#define DEFERGC_PRECISE_ENOFRAME (-114)
#define DEFERGC_PRECISE_EFRAMENOTTOP (-115)
#define DEFERGC_PRECISE_EFRAMESOPEN (-116)
#define DEFERGC_PRECISE_EINNATIVE (-117)
#define DEFERGC_PRECISE_ENOTINNATIVE (-118)
#define DEFERGC_PRECISE_EALREADYINITIALIZED (-119)
#define DEFERGC_PRECISE_EUNKNOWNROOT (-120)
#define DEFERGC_PRECISE_ENOSUCHROOT (-121)
#define DEFERGC_PRECISE_ENOTREGISTERED (-122)
#define DEFERGC_PRECISE_EBADROOTADDRESS (-123)
#define DEFERGC_PRECISE_EWRONGTYPE (-124)

typedef struct defergc_precise_stats {
    uint64_t live_objects;      /* found live by the last collection */
    uint64_t live_bytes;
    uint64_t heap_size;
    uint64_t peak_heap_size;
    uint64_t handles_in_use;
    uint64_t objects_allocated;
    uint64_t objects_freed;
    uint64_t collections;
    uint64_t threads;           /* registered threads */
    uint64_t pause_total_ns;    /* time mutators were stopped */
    uint64_t pause_max_ns;
    uint64_t pause_last_ns;
    uint64_t pause_p99_ns;      /* 99th percentile (within 25%) */
    uint64_t pause_count;       /* mutator stops recorded */
} defergc_precise_stats;

/* Starts the collector and registers the calling thread. */
int defergc_precise_init(void);

/* A struct type of size bytes with handle fields at the n offsets. */
int defergc_precise_register_type(size_t size, const size_t *offsets, size_t n,
                                  defergc_type *out);
/* The variable-length types: an array of handles, pointer-free bytes. */
int defergc_precise_register_handle_array_type(defergc_type *out);
int defergc_precise_register_bytes_type(defergc_type *out);

/* Allocates an object (a struct type), or one with len elements (a
 * variable-length type). 0 on error. May collect: every handle the caller
 * still needs must be rooted. */
defergc_handle defergc_precise_alloc(defergc_type type, int *err);
defergc_handle defergc_precise_alloc_array(defergc_type type, size_t len, int *err);
/* Allocates an object of a struct type with its first n handle fields (in
 * ascending offset order) set to fields[0..n] (0 for null; the others
 * stay null): alloc and a store per field, without finding the new object
 * again for each. The values must be live (and rooted: this may collect). */
defergc_handle defergc_precise_alloc_with(defergc_type type, const defergc_handle *fields,
                                          size_t n, int *err);

/* The object's payload, valid while its handle is rooted. NULL on error.
 * Aligned to 8 bytes (the largest alignment of a Go type on 64-bit
 * platforms). */
void *defergc_precise_deref(defergc_handle obj, int *err);

/* Handle fields: load into *out (0 for null), store (0 for null). */
int defergc_precise_load(defergc_handle obj, size_t offset, defergc_handle *out);
int defergc_precise_store(defergc_handle obj, size_t offset, defergc_handle value);
/* Several handle fields of one object (compiled code reading n->left and
 * n->right with no safepoint between): loads the fields at offsets[0..n]
 * into out[0..n] (0 for null), finding the object once where load finds
 * it per field. On error nothing is written. */
int defergc_precise_load_many(defergc_handle obj, const size_t *offsets, size_t n,
                              defergc_handle *out);

/* Pointer-free bytes: read len bytes at offset into buf, write from data
 * (writing over a handle field is an error). */
int defergc_precise_read(defergc_handle obj, size_t offset, void *buf, size_t len);
int defergc_precise_write(defergc_handle obj, size_t offset, const void *data, size_t len);

/* Shadow-stack frames: push (*frame gets its id), root handles in the
 * innermost frame (root returns the slot index, >= 0, or an error code),
 * update a slot as its variable changes, pop the frame (it must be the
 * innermost: frames pop in order). root and set_root take 0 or a live
 * handle: a stale or forged one gets its error code. push is a safepoint;
 * root, set_root and pop are not, so a function may pop its frame and
 * return a handle it held, for the caller to root before its next
 * safepoint. */
int defergc_precise_push_frame(uint64_t *frame);
int defergc_precise_root(defergc_handle h);
int defergc_precise_set_root(size_t slot, defergc_handle h);
int defergc_precise_pop_frame(uint64_t frame);

/* A safepoint. Native code: collections do not wait for a thread in it,
 * and it must not touch the precise heap until it leaves. */
int defergc_precise_safepoint(void);
int defergc_precise_enter_native(void);
int defergc_precise_leave_native(void);

/* Collection runs on the collector's own thread, concurrently with the
 * mutators. collect requests a cycle and waits for it; gc_async only
 * requests one, gc_wait waits for all requested; shutdown joins the
 * collector thread (registered threads may still be running).
 * set_gc_percent: start a cycle when the heap has grown by this percentage
 * over what the last one found live (Go's GOGC, default 100, or the GOGC
 * variable); negative turns automatic cycles off; returns the previous
 * percentage (-1: off). */
int defergc_precise_collect(void);
int defergc_precise_gc_async(void);
int defergc_precise_gc_wait(void);
int defergc_precise_shutdown(void);
int defergc_precise_set_gc_percent(int percent);
int defergc_precise_reset_pause_stats(void);

/* Global roots: a registered 8-byte slot keeps the handle it holds alive.
 * Store into it with store_global (the collector's write barrier) while
 * collections may run; a slot that is not registered gets
 * DEFERGC_PRECISE_EUNKNOWNROOT. */
int defergc_precise_add_global_root(const uint64_t *slot);
int defergc_precise_remove_global_root(const uint64_t *slot);
int defergc_precise_store_global(uint64_t *slot, defergc_handle value);

/* Thread registration (automatic on first use and at exit anyway). */
int defergc_precise_register_thread(void);
int defergc_precise_unregister_thread(void);

/* The heap limit in bytes (0: none): allocations beyond it fail with
 * DEFERGC_PRECISE_EHEAPLIMIT after a collection could not make room. */
int defergc_precise_set_heap_limit(size_t bytes);

/* debug.SetMemoryLimit for the precise heap: a soft limit in bytes
 * (default none, or GOMEMLIMIT). Cycles come sooner as the heap nears it,
 * and an allocation that would grow the heap past it first waits for them
 * to free memory (while the live heap is at most three quarters of it);
 * with set_gc_percent(-1) it alone starts them; allocation never fails for
 * it. A negative argument changes nothing, INT64_MAX lifts it. Returns the
 * previous limit (INT64_MAX: none; DEFERGC_PRECISE_ENOTBUILT in a build
 * without the collector). */
int64_t defergc_precise_set_memory_limit(int64_t bytes);

/* weak.Make and Pointer.Value for the precise heap. A weak handle does not
 * keep its object alive; two made from the same object are equal, and stay
 * equal after it is gone. weak_make returns 0 (and *err) for a handle that
 * is not live. weak_value stores the object's handle in *out while the
 * object lives and 0 once a collection found it unreachable; while a
 * cycle's marking runs it waits for the cycle to end (in native code). */
uint64_t defergc_precise_weak_make(defergc_handle obj, int *err);
int defergc_precise_weak_value(uint64_t weak, defergc_handle *out);

int defergc_precise_get_stats(defergc_precise_stats *out);

/* ------------------------------------------------------------------ */
/* Memory controls                                                      */
/* ------------------------------------------------------------------ */

/* Go's runtime.MemStats, the fields that make sense for this collector.
 * bdwgc does not count the objects a collection frees: frees and
 * heap_objects are estimates from the bytes it reclaims (explicit frees
 * are exact); mallocs is exact. Under a build without a collector only
 * the counts move. */
typedef struct defergc_memstats {
    uint64_t size; /* set to sizeof(defergc_memstats) before reading */
    uint64_t alloc;
    uint64_t total_alloc;
    uint64_t sys;
    uint64_t mallocs;
    uint64_t frees;
    uint64_t heap_alloc;
    uint64_t heap_sys;
    uint64_t heap_idle;
    uint64_t heap_released;
    uint64_t heap_objects;
    uint64_t next_gc;
    uint64_t last_gc;        /* ns since 1970 */
    uint64_t pause_total_ns;
    uint64_t pause_ns[256];  /* the latest at (num_gc + 255) % 256 */
    uint64_t pause_end[256]; /* ns since 1970 */
    uint64_t num_gc;
    double gc_cpu_fraction;
} defergc_memstats;

/* runtime.ReadMemStats(out): 0, or DEFERGC_EINVAL for NULL or a size
 * that is not sizeof(defergc_memstats). Takes the collector's lock
 * briefly; never stops the world. */
int defergc_read_memstats(defergc_memstats *out);

/* debug.SetGCPercent(percent): a negative percent is off; returns the
 * previous one (100 by default). Also set at start by GOGC (a percent or
 * "off"); on bdwgc it sets the free-space divisor to 100 / percent. */
int defergc_set_gc_percent(int percent);

/* debug.SetMemoryLimit(bytes): a soft limit (collect harder near it,
 * never refuse memory); negative: no change, returns the limit in force;
 * INT64_MAX: none. Returns the previous one. Also set at start by
 * GOMEMLIMIT (512MiB, 2GiB, ... or "off"). GODEBUG=gctrace=1 prints a
 * line per collection in Go's shape. */
int64_t defergc_set_memory_limit(int64_t bytes);

/* A hard heap limit (bdwgc's maximum heap size; 0: none): allocations
 * past it fail. Returns the previous one. */
uint64_t defergc_set_max_heap(uint64_t bytes);

/* debug.FreeOSMemory(): a full collection, then free heap memory goes back
 * to the operating system. */
void defergc_free_os_memory(void);

/* Settings applied when the collector starts (defergc_init_with). Start
 * from DEFERGC_CONFIG_INIT and change what you need. */
typedef struct defergc_config {
    size_t size;           /* sizeof(defergc_config) */
    unsigned markers;      /* marker threads; 0: one per core (or GC_MARKERS) */
    size_t initial_heap;   /* bytes reserved at start; 0: 8 MiB */
    int gc_percent;        /* DEFERGC_CONFIG_UNSET: GOGC, or 100; negative: off */
    int64_t memory_limit;  /* soft limit in bytes; negative: GOMEMLIMIT, or none */
    uint64_t max_heap;     /* hard limit in bytes; 0: none */
    int finalizer_thread;  /* 1: finalizers run on their own thread; 0: only
                              in defergc_run_finalizers */
    int catch_faults;      /* 1: faults are panics; 0: never; -1: as
                              defergc_catch_faults says (on under defergc_main) */
} defergc_config;

#define DEFERGC_CONFIG_UNSET (-2147483647 - 1)
#define DEFERGC_CONFIG_INIT {sizeof(defergc_config), 0, 0, DEFERGC_CONFIG_UNSET, -1, 0, 1, -1}

/* Starts the collector with *config: 0, DEFERGC_EINVAL for NULL or a size
 * that is not sizeof(defergc_config), DEFERGC_EALREADY if it had started
 * (every other call starts it with the defaults). The program's settings
 * win over GOGC and GOMEMLIMIT. */
int defergc_init_with(const defergc_config *config);

/* runtime.SetFinalizer(obj, fn): fn(obj, arg) runs once, on the finalizer
 * thread, after obj becomes unreachable (obj is kept alive for it, and
 * freed at a later collection); a second call replaces it, a NULL fn
 * clears it. Objects in a cycle of finalizable objects are not finalized,
 * as in Go. obj is the start of an object of defergc_alloc; no-op in a
 * build without a collector. */
void defergc_set_finalizer(void *obj, void (*fn)(void *obj, void *arg), void *arg);

/* runtime.AddCleanup(obj, fn, arg): fn(arg) runs once, on the finalizer
 * thread, after obj becomes unreachable (after its finalizer and its next
 * unreachability, if it has one); an object may have many. arg is kept
 * alive until then; arg == obj is Go's panic "runtime.AddCleanup: ptr is
 * equal to arg, cleanup will never run". The handle stops it. */
typedef struct defergc_cleanup {
    uintptr_t hidden_; /* the object's address, hidden: keeps nothing alive */
    uint64_t id_;
} defergc_cleanup;
defergc_cleanup defergc_add_cleanup(void *obj, void (*fn)(void *arg), void *arg);

/* Cleanup.Stop(): the cleanup will not run (no-op if it ran already). */
void defergc_cleanup_stop(defergc_cleanup cleanup);

/* Runs the finalizers that are ready, on this thread; returns how many. */
int defergc_run_finalizers(void);

/* runtime.KeepAlive(p): p's object is reachable at least until here. */
void defergc_keep_alive(const void *p);

/* weak.Make(obj): a weak pointer to the object obj points to the start of
 * (NULL for NULL). Weak pointers made from the same object are equal; a
 * weak pointer is itself a collectable object, kept like any other. */
void *defergc_weak_make(void *obj);

/* weak.Pointer.Value(): the object, or NULL once it has been collected. */
void *defergc_weak_value(void *weak);

/* runtime.MemProfileRate = bytes: allocations are sampled for the heap
 * profile about once per that many bytes (default 512 KiB; 0: off; 1:
 * every allocation). Returns the previous rate; negative only reads it. */
int64_t defergc_set_mem_profile_rate(int64_t bytes);

/* pprof.WriteHeapProfile: the sampled allocation sites (alloc_objects,
 * alloc_space, inuse_objects, inuse_space, scaled as Go scales them) in
 * pprof's protobuf format, which `go tool pprof` reads. 0, DEFERGC_EINVAL
 * for NULL, DEFERGC_EIO when the file cannot be written. */
int defergc_write_heap_profile(const char *path);

/* runtime.SetBlockProfileRate(rate): goroutines' blocking on channels,
 * select, sync and the poller is sampled about once per `rate`
 * nanoseconds blocked (1: every event; 0 or less: off, the default).
 * Returns the previous rate. */
int64_t defergc_set_block_profile_rate(int64_t rate);

/* runtime.SetMutexProfileFraction(fraction): one in `fraction` waits on a
 * defergc_mutex / defergc_rwmutex is recorded, at the unlock that ended
 * it (0: off, the default; negative: only reads it). Returns the previous
 * fraction. */
int64_t defergc_set_mutex_profile_fraction(int64_t fraction);

/* The block and mutex profiles (contentions/count, delay/nanoseconds) in
 * pprof's protobuf format. 0, DEFERGC_EINVAL for NULL, DEFERGC_EIO when
 * the file cannot be written. */
int defergc_write_block_profile(const char *path);
int defergc_write_mutex_profile(const char *path);

/* The execution trace, as Chrome / Perfetto trace-event JSON
 * (ui.perfetto.dev, chrome://tracing): goroutines, processors, GC,
 * preemption requests. Start: 0, DEFERGC_EINVAL for NULL,
 * DEFERGC_EALREADY if a trace is being taken, DEFERGC_EIO if the file
 * cannot be created. Stop: 0, DEFERGC_EINVAL if no trace is being taken,
 * DEFERGC_EIO if the file could not be written. */
int defergc_start_trace(const char *path);
int defergc_stop_trace(void);

/* ------------------------------------------------------------------ */
/* CPU profiles and goroutine labels (runtime/pprof)                   */
/* ------------------------------------------------------------------ */

/* pprof.StartCPUProfile: samples the threads that run goroutines, and the
 * calling thread, every 1/rate s of their CPU time (SIGPROF), until
 * defergc_stop_cpu_profile writes the profile (pprof's format, samples/count
 * and cpu/nanoseconds, with goroutine labels) to `path` (created now).
 * 0, DEFERGC_EINVAL for NULL or a path that is not UTF-8, DEFERGC_EALREADY
 * while a profile is on, DEFERGC_EIO when the file cannot be created. */
int defergc_start_cpu_profile(const char *path);

/* The same into the open descriptor fd (written at stop, not closed).
 * DEFERGC_EINVAL for a negative or closed descriptor. */
int defergc_start_cpu_profile_fd(int fd);

/* pprof.StopCPUProfile: stops sampling and writes the profile. 0,
 * DEFERGC_ENOTPROFILING when none is on, DEFERGC_EIO when it could not be
 * written. */
int defergc_stop_cpu_profile(void);

/* runtime.SetCPUProfileRate: samples a second of CPU time of the next
 * profile, 1 to 1000000 (default 100). Returns the previous rate,
 * DEFERGC_EINVAL out of range, DEFERGC_EALREADY while a profile is on. */
int defergc_set_cpu_profile_rate(int hz);

/* Makes the calling thread one that CPU profiles sample, until it exits:
 * goroutine workers and the thread that starts a profile are sampled
 * without asking; another thread of the program's that runs code worth
 * profiling asks here. */
void defergc_profile_this_thread(void);

/* pprof.SetGoroutineLabels: the calling goroutine's (or thread's) labels
 * become the n pairs kv[2i] (key), kv[2i+1] (value), copied; goroutines it
 * starts inherit them, and CPU samples carry them. 0, or DEFERGC_EINVAL for
 * a NULL array with n > 0, a NULL string or one that is not UTF-8. */
int defergc_set_goroutine_labels(const char *const *kv, size_t n);

/* pprof.Do: calls f(arg) with the caller's labels plus the n pairs at kv
 * (a key already set takes the new value), then puts the labels back, also
 * when f panics. 0, or DEFERGC_EINVAL (f not called) as above or for a
 * NULL f. */
int defergc_do_with_labels(const char *const *kv, size_t n, void (*f)(void *arg), void *arg);

/* ------------------------------------------------------------------ */
/* Descriptors goroutines wait on: the network poller                  */
/* ------------------------------------------------------------------ */

/* A goroutine whose read, write, accept or connect would block parks on
 * the poller (one edge-triggered epoll instance) instead of blocking its
 * worker thread, as Go's netpoller does; 10,000 idle connections are
 * 10,000 parked goroutines, not threads. A plain thread that calls these
 * blocks itself. Regular files cannot be polled (registering one fails
 * with DEFERGC_EOS - EPERM): do their I/O inside defergc_enter_syscall /
 * defergc_exit_syscall instead.
 *
 * A handle (never 0) names one registration: a handle used after its
 * close, or one never handed out, gets DEFERGC_EBADHANDLE, never a crash.
 * One goroutine at a time may wait in each direction of a handle (Go's
 * net package serialises its readers and its writers); a second aborts
 * ("defergc:"). Results: 0 or a count, else a negative code:
 * DEFERGC_ECLOSED, DEFERGC_ETIMEOUT, DEFERGC_EBADHANDLE, DEFERGC_EINVAL,
 * or DEFERGC_EOS - errno for a system error (DEFERGC_ERRNO(code) gives
 * the errno). defergc_net_strerror(code) is Go's text for each. */

#define DEFERGC_POLL_READ 1
#define DEFERGC_POLL_WRITE 2

/* The socket address types are <sys/socket.h>'s; this header does not
 * include it (its names, send and accept among them, would be declared
 * in every unit that includes defergc.h). Address lengths are socklen_t,
 * which is uint32_t on Linux. */
struct sockaddr;

/* The low layer, Go's runtime_poll* (its internal/poll builds on it). */

/* runtime_pollOpen: makes fd non-blocking and registers it; fills
 * *handle. The descriptor stays the caller's to close (after
 * defergc_poll_close). DEFERGC_EINVAL for a NULL handle or a negative
 * fd; DEFERGC_EOS - errno when the kernel refuses (EPERM: a regular file;
 * EBADF; EEXIST: registered already), and the descriptor is left as it
 * was (blocking, if it was). */
int defergc_poll_open(int fd, uint64_t *handle);

/* runtime_pollWait: parks until the descriptor is ready for mode
 * (DEFERGC_POLL_READ or DEFERGC_POLL_WRITE), the direction's deadline
 * passes (DEFERGC_ETIMEOUT) or the handle is unblocked or closed
 * (DEFERGC_ECLOSED). A readiness that came while no one waited is taken
 * at once: retry the operation after 0, it may still say EAGAIN. */
int defergc_poll_wait(uint64_t handle, int mode);

/* runtime_pollReset: forgets a pending readiness before an operation
 * that will retry on EAGAIN; the error a wait would give at once. */
int defergc_poll_reset(uint64_t handle, int mode);

/* runtime_pollSetDeadline: the deadline of mode (DEFERGC_POLL_READ,
 * DEFERGC_POLL_WRITE, or both or'ed) at deadline nanoseconds of
 * defergc_nanotime()'s clock. 0 clears it; a time not after now expires
 * the direction at once. A goroutine parked in that direction returns
 * DEFERGC_ETIMEOUT when it passes, and so does every wait until a new
 * deadline is set. */
int defergc_poll_set_deadline(uint64_t handle, int mode, int64_t deadline);

/* runtime_pollUnblock: marks the handle closing; every goroutine parked
 * on it returns DEFERGC_ECLOSED, and so does every later wait. */
int defergc_poll_unblock(uint64_t handle);

/* runtime_pollClose: ends the registration (unblocking it first). The
 * descriptor is not closed: close it after this. */
int defergc_poll_close(uint64_t handle);

/* Go's nanotime: the monotonic clock deadlines are measured on. */
int64_t defergc_nanotime(void);

/* The layer a compiler calls directly for Go's net package. These
 * handles own their descriptor: defergc_net_close closes it. Any handle
 * of defergc_poll_open works with read, write, accept and connect too. */

/* Registers fd (made non-blocking) as a descriptor the handle owns. */
int defergc_net_open(int fd, uint64_t *handle);

/* socket(2), non-blocking and close-on-exec, registered. */
int defergc_net_socket(int domain, int type, int protocol, uint64_t *handle);

/* The descriptor behind a live handle, for bind, listen, setsockopt and
 * the like (not for closing it); DEFERGC_EBADHANDLE or DEFERGC_ECLOSED. */
int defergc_net_fd(uint64_t handle);

/* FD.Read: reads up to len bytes, parking while there are none. The
 * count, 0 at the end of the stream, or a negative code (DEFERGC_EINVAL
 * for a NULL buf with len > 0, or len > PTRDIFF_MAX). */
int64_t defergc_net_read(uint64_t handle, void *buf, size_t len);

/* FD.Write: writes all len bytes, parking while the descriptor is full;
 * a closed peer (a socket's, or a pipe's reader gone) is DEFERGC_EOS -
 * EPIPE (no SIGPIPE). len, or a negative code; a write of 0 bytes checks
 * the handle too. DEFERGC_EINVAL as for defergc_net_read. */
int64_t defergc_net_write(uint64_t handle, const void *buf, size_t len);

/* FD.Accept: parks until a connection comes, registers it (non-blocking,
 * close-on-exec) and fills *conn. If addr is not NULL, the peer's
 * address: *addrlen is the room at addr on entry, the address's length
 * on return. */
int defergc_net_accept(uint64_t handle, uint64_t *conn, struct sockaddr *addr,
                       uint32_t *addrlen);

/* connect(2) made non-blocking: parks until the connection is made
 * (0) or fails (DEFERGC_EOS - ECONNREFUSED, ...; DEFERGC_ETIMEOUT at the
 * write deadline). A socket connected already, or listening, is
 * DEFERGC_EOS - EISCONN. */
int defergc_net_connect(uint64_t handle, const struct sockaddr *addr, uint32_t addrlen);

/* FD.Close: every goroutine parked on the handle returns DEFERGC_ECLOSED
 * at once; the descriptor is closed when no operation uses it any more,
 * and the handle is dead (DEFERGC_EBADHANDLE) from then on: of two
 * closes at once, one returns 0 and the other DEFERGC_EBADHANDLE. A
 * descriptor closed behind the handle's back whose number was registered
 * again is left alone by the old handle's close (it closes nothing). */
int defergc_net_close(uint64_t handle);

/* Go's text for a code of these functions: "use of closed network
 * connection", "i/o timeout", the system's message for DEFERGC_EOS -
 * errno ("unknown error" for a number that is no errno). A static
 * string. */
const char *defergc_net_strerror(int64_t code);

#ifdef __cplusplus
}
#endif

#endif /* DEFERGC_H */
