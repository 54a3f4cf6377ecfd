/*
 * The network poller's C ABI under attack (tests/net_misuse.rs runs
 * each case in its own process, with a time limit): forged and stale
 * handles, descriptors that are not sockets or were closed behind the
 * runtime's back, concurrent closes, huge lengths, blocked operations
 * woken by a close. Loopback only.
 *
 * Every case checks what the header promises and prints "ok" (a failed
 * CHECK names what it expected; a death or a hang fails it too). Where a
 * comment says what a case did "before", it found that bug.
 *
 *   net_misuse <case> | list
 */
#include "common.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define OK() (printf("ok\n"), fflush(stdout))
#define MS (1000 * 1000LL)

static void in_main(void (*body)(void *)) { CHECK(defergc_main(body, NULL) == 0); }

/* A TCP listener on 127.0.0.1, port chosen by the kernel. */
static int listener(int backlog, struct sockaddr_in *addr) {
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    CHECK(fd >= 0);
    memset(addr, 0, sizeof *addr);
    addr->sin_family = AF_INET;
    addr->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    CHECK(bind(fd, (struct sockaddr *)addr, sizeof *addr) == 0);
    socklen_t len = sizeof *addr;
    CHECK(getsockname(fd, (struct sockaddr *)addr, &len) == 0);
    CHECK(listen(fd, backlog) == 0);
    return fd;
}

/* ---- a zero-length write checks the handle ---------------------------------- */

/* The header: "a handle used after its close, or one never handed out,
 * gets DEFERGC_EBADHANDLE, never a crash". Go's FD.Write takes its write
 * lock first, so conn.Write(nil) on a closed conn is "use of closed
 * network connection". A write of 0 bytes must not report success on a
 * forged or closed handle. */
static void write_zero_body(void *arg) {
    (void)arg;
    char buf[1] = {0};
    CHECK(defergc_net_write(12345, buf, 0) == DEFERGC_EBADHANDLE);
    CHECK(defergc_net_write(UINT64_MAX, NULL, 0) == DEFERGC_EBADHANDLE);
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    uint64_t h;
    CHECK(defergc_net_open(sv[0], &h) == 0);
    CHECK(defergc_net_write(h, buf, 0) == 0);
    CHECK(defergc_net_read(h, buf, 0) == 0);
    CHECK(defergc_net_close(h) == 0);
    /* reads say so ... */
    CHECK(defergc_net_read(h, buf, 0) == DEFERGC_EBADHANDLE);
    /* ... and writes must too */
    CHECK(defergc_net_write(h, buf, 0) == DEFERGC_EBADHANDLE);
    close(sv[1]);
    OK();
}

static void write_zero(void) { in_main(write_zero_body); }

/* ---- a write to a pipe whose reader is gone -------------------------------- */

/* The header: "a closed peer is DEFERGC_EOS - EPIPE (no SIGPIPE)", and the
 * net layer is the one a compiler uses for Go's os package too (pipes).
 * For a descriptor that is not a socket the write falls back to write(2),
 * which raised SIGPIPE before (the default action killed the process).
 * Expected: DEFERGC_EOS - EPIPE, as for a socket. */
static int sigpipe_blocked(void) {
    sigset_t now;
    CHECK(pthread_sigmask(SIG_BLOCK, NULL, &now) == 0);
    return sigismember(&now, SIGPIPE);
}

static int sigpipe_pending(void) {
    sigset_t pending;
    CHECK(sigpending(&pending) == 0);
    return sigismember(&pending, SIGPIPE);
}

/* One write to a pipe whose reader is gone: EPIPE, and the thread's mask
 * and pending signals as they were (none pending unless the thread blocks
 * SIGPIPE itself: then the one the write raised is its own to take). */
static void pipe_write_epipe(void) {
    int p[2];
    CHECK(pipe(p) == 0);
    uint64_t h;
    CHECK(defergc_net_open(p[1], &h) == 0);
    close(p[0]);
    int blocked = sigpipe_blocked();
    int64_t r = defergc_net_write(h, "x", 1);
    CHECK(r == DEFERGC_EOS - EPIPE);
    CHECK(sigpipe_blocked() == blocked);
    CHECK(sigpipe_pending() == blocked);
    CHECK(defergc_net_close(h) == 0);
}

static void write_pipe_epipe_body(void *arg) {
    (void)arg;
    pipe_write_epipe();
    pipe_write_epipe();
    OK();
}

static void *blocked_thread(void *arg) {
    (void)arg;
    sigset_t pipe_only;
    sigemptyset(&pipe_only);
    sigaddset(&pipe_only, SIGPIPE);
    CHECK(pthread_sigmask(SIG_BLOCK, &pipe_only, NULL) == 0);
    pipe_write_epipe();
    /* the thread takes its own SIGPIPE */
    int sig = 0;
    CHECK(sigwait(&pipe_only, &sig) == 0 && sig == SIGPIPE);
    CHECK(!sigpipe_pending());
    return NULL;
}

static void write_pipe_epipe(void) {
    /* the default disposition, whatever the test harness left */
    signal(SIGPIPE, SIG_DFL);
    /* a plain thread that does not block SIGPIPE, and one that does */
    pipe_write_epipe();
    pthread_t t;
    CHECK(pthread_create(&t, NULL, blocked_thread, NULL) == 0);
    CHECK(pthread_join(t, NULL) == 0);
    in_main(write_pipe_epipe_body);
}

/* ---- two threads close one handle at once ----------------------------------- */

/* A handle closed twice must get DEFERGC_EBADHANDLE the second time
 * (Go: the second Close is ErrClosing), also when the two closes race:
 * exactly one of them returns 0. Before, netpoll::close let the record's
 * lock go before the generation moved on, so both passed the checks and
 * both recycled the record: it landed on the free list twice, and two
 * later opens shared one record (and one handle). */
#define RACES 4000
static _Atomic uint64_t race_handle;
static atomic_int race_go, race_done;
static int race_result[2];

static void *racer(void *arg) {
    int me = (int)(intptr_t)arg;
    for (int i = 0; i < RACES; i++) {
        while (atomic_load(&race_go) != i + 1)
            sched_yield();
        race_result[me] = defergc_poll_close(atomic_load(&race_handle));
        atomic_fetch_add(&race_done, 1);
        while (atomic_load(&race_done) < 2 * (i + 1))
            sched_yield();
    }
    return NULL;
}

static void double_close_race(void) {
    int p[2];
    CHECK(pipe(p) == 0);
    pthread_t t[2];
    for (intptr_t i = 0; i < 2; i++)
        CHECK(pthread_create(&t[i], NULL, racer, (void *)i) == 0);
    int both_ok = 0;
    for (int i = 0; i < RACES; i++) {
        uint64_t h;
        CHECK(defergc_poll_open(p[0], &h) == 0);
        atomic_store(&race_handle, h);
        atomic_store(&race_go, i + 1);
        while (atomic_load(&race_done) < 2 * (i + 1))
            sched_yield();
        int a = race_result[0], b = race_result[1];
        CHECK((a == 0 || a == DEFERGC_EBADHANDLE) && (b == 0 || b == DEFERGC_EBADHANDLE));
        if (a == 0 && b == 0) both_ok++;
    }
    for (int i = 0; i < 2; i++)
        pthread_join(t[i], NULL);
    /* After a double recycle, two opens share a record: same handle. */
    int q[2][2];
    CHECK(pipe(q[0]) == 0 && pipe(q[1]) == 0);
    uint64_t h1, h2;
    CHECK(defergc_poll_open(q[0][0], &h1) == 0);
    CHECK(defergc_poll_open(q[1][0], &h2) == 0);
    if (both_ok)
        fprintf(stderr, "%d of %d handles were closed twice with success; then h1=%#llx h2=%#llx\n",
                both_ok, RACES, (unsigned long long)h1, (unsigned long long)h2);
    CHECK(both_ok == 0);
    CHECK(h1 != h2);
    OK();
}

/* ---- a handle guessed for a record that is free, or being opened ---------- */

/* A handle is the record's index and its generation; a close moves the
 * generation on, and the next open of that record hands out the handle
 * one generation on. Before, a record waiting on the free list already
 * answered to that next handle: a program that guessed it could close
 * the free record, which went on the free list a second time, and the
 * next two opens shared one record (one handle for two descriptors).
 * Expected: every operation on a handle of a free record is
 * DEFERGC_EBADHANDLE, and the next two opens get two handles. */
#define NEXT_GENERATION (1ULL << 32)

static void forged_free_record(void) {
    int p[2], q[2], r[2];
    CHECK(pipe(p) == 0 && pipe(q) == 0 && pipe(r) == 0);
    uint64_t h;
    CHECK(defergc_poll_open(p[0], &h) == 0);
    CHECK(defergc_poll_close(h) == 0);
    /* the record is free; its next registration's handle: */
    uint64_t next = h + NEXT_GENERATION;
    CHECK(defergc_poll_reset(next, DEFERGC_POLL_READ) == DEFERGC_EBADHANDLE);
    CHECK(defergc_poll_set_deadline(next, DEFERGC_POLL_READ, 1) == DEFERGC_EBADHANDLE);
    CHECK(defergc_poll_unblock(next) == DEFERGC_EBADHANDLE);
    CHECK(defergc_poll_close(next) == DEFERGC_EBADHANDLE);
    uint64_t h1, h2;
    CHECK(defergc_poll_open(q[0], &h1) == 0);
    CHECK(defergc_poll_open(r[0], &h2) == 0);
    if (h1 == h2)
        fprintf(stderr, "two opens share handle %#llx\n", (unsigned long long)h1);
    CHECK(h1 != h2);
    /* each registration is its own: closing one leaves the other */
    CHECK(defergc_poll_close(h1) == 0);
    CHECK(defergc_poll_reset(h2, DEFERGC_POLL_READ) == 0);
    CHECK(defergc_poll_close(h2) == 0);
    OK();
}

/* The same guess racing the open that hands the handle out (seeded
 * jitter, DEFERGC_GUESS_SEED). A close that lands before the open has
 * returned may fail or win, but the registration must end whole: its
 * number leaves the epoll set, so the next open of it succeeds. Before,
 * a close that came between the open's choice of record and its
 * registration recycled the record under it: the open then returned a
 * dead handle, left the number in the epoll set (the next open of it
 * failed with EEXIST) and the record on the free list while in use. */
#define GUESSES 3000
static _Atomic uint64_t guess;
static atomic_int guess_round, guess_done;
static uint64_t guess_seed;

static uint64_t next_rand(uint64_t *s) {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

static void *guesser(void *arg) {
    (void)arg;
    uint64_t s = guess_seed ^ 0x9e3779b97f4a7c15ULL;
    for (int i = 1; i <= GUESSES; i++) {
        while (atomic_load(&guess_round) != i)
            sched_yield();
        for (int spin = (int)(next_rand(&s) % 2000); spin > 0; spin--)
            __asm__ volatile("" ::: "memory");
        int rc = defergc_poll_close(atomic_load(&guess));
        CHECK(rc == 0 || rc == DEFERGC_EBADHANDLE);
        atomic_store(&guess_done, i);
    }
    return NULL;
}

static void guessed_close_races_open(void) {
    const char *env = getenv("DEFERGC_GUESS_SEED");
    guess_seed = env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
    if (!guess_seed) guess_seed = 1;
    fprintf(stderr, "guessed-close-races-open: seed %llu (DEFERGC_GUESS_SEED)\n",
            (unsigned long long)guess_seed);
    uint64_t s = guess_seed;
    int p[2];
    CHECK(pipe(p) == 0);
    uint64_t h;
    CHECK(defergc_poll_open(p[0], &h) == 0);
    CHECK(defergc_poll_close(h) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, guesser, NULL) == 0);
    for (int i = 1; i <= GUESSES; i++) {
        uint64_t next = h + NEXT_GENERATION;
        atomic_store(&guess, next);
        atomic_store(&guess_round, i);
        for (int spin = (int)(next_rand(&s) % 2000); spin > 0; spin--)
            __asm__ volatile("" ::: "memory");
        int rc = defergc_poll_open(p[0], &h);
        if (rc != 0)
            fprintf(stderr, "round %d: open failed with %d (the number was left registered)\n", i, rc);
        CHECK(rc == 0);
        while (atomic_load(&guess_done) != i)
            sched_yield();
        /* the guess may have closed it; if not, close it here */
        rc = defergc_poll_close(h);
        CHECK(rc == 0 || rc == DEFERGC_EBADHANDLE);
    }
    pthread_join(t, NULL);
    OK();
}

/* ---- a fork while another thread opens ------------------------------------ */

/* Forks `n` children one after another; each runs `child` and exits
 * with what it returns, which must be 0. */
static void fork_children(int n, int (*child)(void)) {
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        CHECK(pid >= 0);
        if (pid == 0) _exit(child());
        int status;
        CHECK(waitpid(pid, &status, 0) == pid);
        if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
            fprintf(stderr, "fork %d: the child ended with status %#x\n", i, status);
        CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
}

/* A plain thread (no scheduler runs) opens and closes one pipe's handle
 * in a loop while the program forks. Expected: every child can use the
 * poller: it registers a pipe of its own, and the number the thread was
 * opening is either free to register or registered already (EEXIST: the
 * child keeps the parent's live registrations), never anything else.
 * Before, the poller's fork hooks ran only with the scheduler: a child
 * forked while the thread held the poller's table lock waited for it
 * forever, and the others shared the parent's epoll instance. Then, with
 * the hooks: a child whose fork came while the thread waited for a lock
 * the fork held got that lock handed to the thread, which does not exist
 * in the child (parking_lot's fair unlock), and hung. */
#define FORKS 300
static atomic_int opening_stop;
static int opening_fd;

static void *open_close_loop(void *arg) {
    (void)arg;
    while (!atomic_load(&opening_stop)) {
        uint64_t h;
        CHECK(defergc_poll_open(opening_fd, &h) == 0);
        CHECK(defergc_poll_close(h) == 0);
    }
    return NULL;
}

static int child_uses_the_poller(void) {
    int q[2];
    uint64_t h;
    if (pipe(q) != 0 || defergc_poll_open(q[0], &h) != 0) return 1;
    if (defergc_poll_reset(h, DEFERGC_POLL_READ) != 0) return 2;
    if (defergc_poll_close(h) != 0) return 3;
    int rc = defergc_poll_open(opening_fd, &h);
    if (rc != 0 && rc != DEFERGC_EOS - EEXIST) return 4;
    return 0;
}

static void fork_during_open(void) {
    int p[2];
    CHECK(pipe(p) == 0);
    opening_fd = p[0];
    /* The poller exists before the thread starts: a fork in the middle of
     * its creation is not what this case is about. */
    uint64_t first;
    CHECK(defergc_poll_open(opening_fd, &first) == 0);
    CHECK(defergc_poll_close(first) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, open_close_loop, NULL) == 0);
    fork_children(FORKS, child_uses_the_poller);
    atomic_store(&opening_stop, 1);
    pthread_join(t, NULL);
    OK();
}

/* ---- a fork while threads queue on one descriptor's lock ------------------ */

/* Plain threads set deadlines on one shared handle in a loop (each takes
 * the descriptor's lock and, under it, a timer heap's) while a goroutine
 * forks; the scheduler runs, so the fork holds the timer heaps and a
 * setter can be caught holding the descriptor's lock while others queue
 * on it. Expected: every child can use the shared handle (set a
 * deadline, close it) and register a pipe of its own. Before, the
 * descriptor's lock was parking_lot's: the child's release of it could
 * hand it to a setter parked on it, which the child does not have, and
 * the child waited for it forever (within the first few forks). */
#define LOCK_FORKS 300
#define SETTERS 3
static atomic_int setters_stop;
static uint64_t shared_handle;

static void *deadline_setter(void *arg) {
    int64_t step = (int64_t)(uintptr_t)arg;
    while (!atomic_load(&setters_stop)) {
        int64_t at = defergc_nanotime() + 1000 * MS + step;
        CHECK(defergc_poll_set_deadline(shared_handle, DEFERGC_POLL_READ, at) == 0);
        CHECK(defergc_poll_set_deadline(shared_handle, DEFERGC_POLL_WRITE, at) == 0);
    }
    return NULL;
}

static int child_uses_the_shared_handle(void) {
    if (defergc_poll_set_deadline(shared_handle, DEFERGC_POLL_READ, 0) != 0) return 1;
    if (defergc_poll_close(shared_handle) != 0) return 2;
    int q[2];
    uint64_t h;
    if (pipe(q) != 0 || defergc_poll_open(q[0], &h) != 0) return 3;
    if (defergc_poll_close(h) != 0) return 4;
    return 0;
}

static void fork_during_lock_queue_body(void *arg) {
    (void)arg;
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(defergc_poll_open(p[0], &shared_handle) == 0);
    pthread_t t[SETTERS];
    for (int i = 0; i < SETTERS; i++)
        CHECK(pthread_create(&t[i], NULL, deadline_setter, (void *)(uintptr_t)i) == 0);
    fork_children(LOCK_FORKS, child_uses_the_shared_handle);
    atomic_store(&setters_stop, 1);
    for (int i = 0; i < SETTERS; i++) pthread_join(t[i], NULL);
    CHECK(defergc_poll_close(shared_handle) == 0);
    OK();
}

static void fork_during_lock_queue(void) { in_main(fork_during_lock_queue_body); }

/* ---- a descriptor closed behind the runtime's back, its number reused ------- */

/* h1 registers a socket; the program closes the descriptor without
 * defergc_poll_close (a bug, but a common one), and a new socket gets the
 * same number; h2 registers it. Before, the late defergc_poll_close(h1)
 * deleted the number from the epoll set: h2's registration was gone and
 * a goroutine waiting on h2 slept through data that arrived (here until
 * its deadline; without one, forever: the deadlock check counts it as an
 * I/O waiter). Expected: h1's close must not touch h2's registration (the
 * runtime knows at h2's open that h1's number was reused), and the wait
 * on h2 returns 0 when the byte arrives. */
static int stale_peer;

static void send_later(void *arg) {
    (void)arg;
    defergc_sleep_ns(50 * MS);
    CHECK(write(stale_peer, "x", 1) == 1);
}

static void stale_fd_reused_body(void *arg) {
    (void)arg;
    int a[2], b[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, a) == 0);
    uint64_t h1, h2;
    CHECK(defergc_poll_open(a[0], &h1) == 0);
    int number = a[0];
    close(a[0]); /* behind the runtime's back */
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, b) == 0);
    if (b[0] != number) { /* the number is reused */
        CHECK(dup2(b[0], number) == number);
        close(b[0]);
    }
    CHECK(defergc_poll_open(number, &h2) == 0);
    CHECK(h1 != h2);
    /* the late close of the stale handle */
    int r = defergc_poll_close(h1);
    CHECK(r == 0 || r == DEFERGC_EBADHANDLE);
    stale_peer = b[1];
    CHECK(defergc_go(send_later, NULL, 0) == 0);
    CHECK(defergc_poll_set_deadline(h2, DEFERGC_POLL_READ, defergc_nanotime() + 2000 * MS) == 0);
    int w = defergc_poll_wait(h2, DEFERGC_POLL_READ);
    if (w != 0) fprintf(stderr, "wait on h2: %d (%s)\n", w, defergc_net_strerror(w));
    CHECK(w == 0);
    CHECK(defergc_poll_close(h2) == 0);
    close(number);
    close(a[1]);
    close(b[1]);
    OK();
}

static void stale_fd_reused(void) { in_main(stale_fd_reused_body); }

/* The same with the net layer, which owns its descriptors: the late
 * defergc_net_close(h1) closes the number, now the new socket's, so h2's
 * read fails with EBADF (or reads whatever the number names next). */
static void stale_fd_net_close_body(void *arg) {
    (void)arg;
    int a[2], b[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, a) == 0);
    uint64_t h1, h2;
    CHECK(defergc_net_open(a[0], &h1) == 0);
    int number = a[0];
    close(a[0]);
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, b) == 0);
    if (b[0] != number) { /* the number is reused */
        CHECK(dup2(b[0], number) == number);
        close(b[0]);
    }
    CHECK(defergc_net_open(number, &h2) == 0);
    int r = defergc_net_close(h1);
    CHECK(r == 0 || r == DEFERGC_EBADHANDLE);
    ssize_t sent = send(b[1], "y", 1, MSG_NOSIGNAL);
    if (sent != 1) fprintf(stderr, "send to h2's peer: %s\n", strerror(errno));
    CHECK(sent == 1); /* EPIPE: the runtime closed h2's descriptor */
    char c = 0;
    int64_t n = defergc_net_read(h2, &c, 1);
    if (n != 1) fprintf(stderr, "read on h2: %lld (%s)\n", (long long)n, defergc_net_strerror(n));
    CHECK(n == 1 && c == 'y');
    CHECK(defergc_net_close(h2) == 0);
    close(a[1]);
    close(b[1]);
    OK();
}

static void stale_fd_net_close(void) { in_main(stale_fd_net_close_body); }

/* ---- a close wakes a waiter with ECLOSED ------------------------------------ */

/* The header: defergc_poll_close ends the registration "unblocking it
 * first", and an unblock makes "every goroutine parked on it return
 * DEFERGC_ECLOSED" (defergc_net_close: "every goroutine parked on the
 * handle returns DEFERGC_ECLOSED at once"). Before, a goroutine parked in
 * defergc_poll_wait got DEFERGC_EBADHANDLE instead: the close moved the
 * record's generation on before the woken goroutine looked at it. */
static uint64_t waited_handle;
static atomic_int waiter_result = 1;

static void wait_on_handle(void *arg) {
    (void)arg;
    atomic_store(&waiter_result, defergc_poll_wait(waited_handle, DEFERGC_POLL_READ));
}

static void poll_close_wakes_body(void *arg) {
    int use_net = (int)(intptr_t)arg;
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(defergc_poll_open(sv[0], &waited_handle) == 0);
    CHECK(defergc_go(wait_on_handle, NULL, 0) == 0);
    defergc_sleep_ns(50 * MS); /* parked by now */
    CHECK(atomic_load(&waiter_result) == 1);
    CHECK((use_net ? defergc_net_close(waited_handle) : defergc_poll_close(waited_handle)) == 0);
    int64_t until = defergc_nanotime() + 5000 * MS;
    while (atomic_load(&waiter_result) == 1 && defergc_nanotime() < until)
        defergc_sleep_ns(1 * MS);
    int r = atomic_load(&waiter_result);
    if (r != DEFERGC_ECLOSED) fprintf(stderr, "the parked wait returned %d\n", r);
    CHECK(r == DEFERGC_ECLOSED);
    if (!use_net) close(sv[0]);
    close(sv[1]);
    OK();
}

static void poll_close_wakes(void) { CHECK(defergc_main(poll_close_wakes_body, (void *)0) == 0); }
static void net_close_wakes_poll_wait(void) {
    CHECK(defergc_main(poll_close_wakes_body, (void *)1) == 0);
}

/* ---- lengths no buffer can have --------------------------------------------- */

/* A length above PTRDIFF_MAX is no buffer at all. Before, the functions
 * made a Rust slice of it (undefined behaviour) and a release build
 * handed it to the kernel: the read was DEFERGC_EOS - EFAULT, and the
 * write sent the memory that follows the 16-byte buffer to the peer
 * (219264 bytes of it in one run) and then parked for good waiting for
 * room. Expected: DEFERGC_EINVAL, as for a NULL buffer, nothing sent. */
static void huge_len_body(void *arg) {
    (void)arg;
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    uint64_t h;
    CHECK(defergc_net_open(sv[0], &h) == 0);
    char buf[16];
    CHECK(write(sv[1], "abc", 3) == 3);
    /* today the write sends whatever lies past buf until the peer's
     * buffer is full, then waits for room: the deadline ends that */
    CHECK(defergc_poll_set_deadline(h, DEFERGC_POLL_WRITE, defergc_nanotime() + 200 * MS) == 0);
    int64_t r = defergc_net_read(h, buf, SIZE_MAX);
    int64_t w = defergc_net_write(h, buf, (size_t)PTRDIFF_MAX + 1);
    fprintf(stderr, "read SIZE_MAX: %lld, write PTRDIFF_MAX+1: %lld\n", (long long)r, (long long)w);
    static char sink[1 << 16];
    long leaked = 0;
    for (ssize_t n; (n = recv(sv[1], sink, sizeof sink, MSG_DONTWAIT)) > 0;)
        leaked += n;
    fprintf(stderr, "the peer received %ld bytes\n", leaked);
    CHECK(leaked == 0);
    CHECK(r == DEFERGC_EINVAL);
    CHECK(w == DEFERGC_EINVAL);
    CHECK(defergc_net_close(h) == 0);
    close(sv[1]);
    OK();
}

static void huge_len(void) { in_main(huge_len_body); }

/* ---- connect on a socket that is connected (or listening) ------------------- */

/* connect(2) says EISCONN; defergc_net_connect turned that into 0, "the
 * connection is made", for a socket connected elsewhere or a listener
 * (and the kernel itself answers 0 to the first connect after an
 * asynchronous one completed, to any address).
 * Expected: DEFERGC_EOS - EISCONN (Go never connects a connected socket;
 * EISCONN means success only after an interrupted connect). */
static void connect_eisconn_body(void *arg) {
    (void)arg;
    struct sockaddr_in a1, a2;
    int l1 = listener(16, &a1), l2 = listener(16, &a2);
    uint64_t h;
    CHECK(defergc_net_socket(AF_INET, SOCK_STREAM, 0, &h) == 0);
    CHECK(defergc_net_connect(h, (struct sockaddr *)&a1, sizeof a1) == 0);
    int r = defergc_net_connect(h, (struct sockaddr *)&a2, sizeof a2);
    if (r != DEFERGC_EOS - EISCONN)
        fprintf(stderr, "connect of a connected socket elsewhere: %d\n", r);
    /* a listener */
    uint64_t lh;
    CHECK(defergc_net_open(dup(l2), &lh) == 0);
    int r2 = defergc_net_connect(lh, (struct sockaddr *)&a1, sizeof a1);
    if (r2 != DEFERGC_EOS - EISCONN) fprintf(stderr, "connect of a listener: %d\n", r2);
    CHECK(r == DEFERGC_EOS - EISCONN);
    CHECK(r2 == DEFERGC_EOS - EISCONN);
    defergc_net_close(h);
    defergc_net_close(lh);
    close(l1);
    close(l2);
    OK();
}

static void connect_eisconn(void) { in_main(connect_eisconn_body); }

/* ---- strerror of codes out of int's range ----------------------------------- */

/* defergc_net_strerror takes an int64_t; a code below DEFERGC_EOS whose
 * errno does not fit an int was cut (before): DEFERGC_EOS - (2^32 +
 * EPIPE) was "Broken pipe". Expected: "unknown error" (no such errno). */
static void strerror_huge(void) {
    const char *s = defergc_net_strerror((int64_t)DEFERGC_EOS - (((int64_t)1 << 32) + EPIPE));
    const char *t = defergc_net_strerror(INT64_MIN);
    fprintf(stderr, "strerror: %s / %s\n", s, t);
    CHECK(strcmp(s, strerror(EPIPE)) != 0);
    CHECK(strcmp(t, "unknown error") == 0);
    /* numbers in the errno range that are no errno (41 and 58 on
     * x86-64): glibc formats those into a per-thread buffer, not static */
    for (int e = 1; e < 200; e++) {
        const char *m = defergc_net_strerror((int64_t)DEFERGC_EOS - e);
        CHECK(m != NULL);
        if (strncmp(strerror(e), "Unknown error", 13) == 0)
            CHECK(strcmp(m, "unknown error") == 0);
        else
            CHECK(strcmp(m, strerror(e)) == 0);
    }
    OK();
}

/* ---- connect on a backlog that drops the SYN --------------------------------- */

/* A connect to a listener whose accept queue is full stays in SYN_SENT:
 * with a write deadline it must end in DEFERGC_ETIMEOUT, never 0. The
 * socket's registration reports EPOLLOUT|EPOLLHUP (an unconnected TCP
 * socket) and a poller thread that read that event before the connect
 * readies the connect's wait after it: SO_ERROR is 0 and the connect
 * reports a connection that does not exist. Go checks getpeername
 * after SO_ERROR 0 for this reason (golang/go#14548, #19289). */
#define CONNECTS 600
static void connect_spurious_body(void *arg) {
    (void)arg;
    struct sockaddr_in a;
    int l = listener(0, &a);
    /* fill the accept queue (backlog 0: one connection) */
    int fill[4];
    int filled = 0;
    for (int i = 0; i < 4; i++) {
        fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        CHECK(fill[i] >= 0);
        connect(fill[i], (struct sockaddr *)&a, sizeof a);
        filled++;
    }
    defergc_sleep_ns(100 * MS);
    int wrong = 0, timeouts = 0, other = 0;
    for (int i = 0; i < CONNECTS; i++) {
        uint64_t h;
        CHECK(defergc_net_socket(AF_INET, SOCK_STREAM, 0, &h) == 0);
        CHECK(defergc_poll_set_deadline(h, DEFERGC_POLL_WRITE, defergc_nanotime() + 2 * MS) == 0);
        int r = defergc_net_connect(h, (struct sockaddr *)&a, sizeof a);
        if (r == 0) {
            struct sockaddr_in peer;
            socklen_t len = sizeof peer;
            if (getpeername(defergc_net_fd(h), (struct sockaddr *)&peer, &len) != 0) wrong++;
        } else if (r == DEFERGC_ETIMEOUT) {
            timeouts++;
        } else {
            other++;
        }
        CHECK(defergc_net_close(h) == 0);
    }
    fprintf(stderr, "connects: %d not connected but reported 0, %d timeouts, %d other\n", wrong,
            timeouts, other);
    CHECK(wrong == 0);
    for (int i = 0; i < filled; i++)
        close(fill[i]);
    close(l);
    OK();
}

static void connect_spurious(void) { in_main(connect_spurious_body); }

/* ---- what must work: codes, odd descriptors, closes of blocked operations --- */

static uint64_t blocked_handle;
static atomic_int blocked_result = 1;

static void block_read(void *arg) {
    (void)arg;
    char c;
    atomic_store(&blocked_result, (int)defergc_net_read(blocked_handle, &c, 1));
}

static void block_write(void *arg) {
    (void)arg;
    static char big[1 << 20];
    int64_t r;
    do r = defergc_net_write(blocked_handle, big, sizeof big);
    while (r > 0);
    atomic_store(&blocked_result, (int)r);
}

static void block_accept(void *arg) {
    (void)arg;
    uint64_t c;
    atomic_store(&blocked_result, defergc_net_accept(blocked_handle, &c, NULL, NULL));
}

static struct sockaddr_in full_addr;

static void block_connect(void *arg) {
    (void)arg;
    atomic_store(&blocked_result,
                 defergc_net_connect(blocked_handle, (struct sockaddr *)&full_addr, sizeof full_addr));
}

/* Runs fn on blocked_handle in a goroutine, closes the handle under it,
 * and checks the goroutine returns DEFERGC_ECLOSED. */
static void close_under(void (*fn)(void *), const char *what) {
    atomic_store(&blocked_result, 1);
    CHECK(defergc_go(fn, NULL, 0) == 0);
    defergc_sleep_ns(50 * MS);
    if (atomic_load(&blocked_result) != 1) {
        fprintf(stderr, "%s did not block: %d\n", what, atomic_load(&blocked_result));
        exit(1);
    }
    CHECK(defergc_net_close(blocked_handle) == 0);
    CHECK(defergc_net_close(blocked_handle) == DEFERGC_EBADHANDLE);
    int64_t until = defergc_nanotime() + 5000 * MS;
    while (atomic_load(&blocked_result) == 1 && defergc_nanotime() < until)
        defergc_sleep_ns(1 * MS);
    if (atomic_load(&blocked_result) != DEFERGC_ECLOSED) {
        fprintf(stderr, "%s under a close: %d\n", what, atomic_load(&blocked_result));
        exit(1);
    }
    CHECK(defergc_net_fd(blocked_handle) == DEFERGC_EBADHANDLE);
}

static void close_blocked_body(void *arg) {
    (void)arg;
    int sv[2];
    /* read */
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(defergc_net_open(sv[0], &blocked_handle) == 0);
    close_under(block_read, "read");
    close(sv[1]);
    /* write to a peer that does not read */
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(defergc_net_open(sv[0], &blocked_handle) == 0);
    close_under(block_write, "write");
    close(sv[1]);
    /* accept */
    struct sockaddr_in a;
    int l = listener(16, &a);
    CHECK(defergc_net_open(l, &blocked_handle) == 0);
    close_under(block_accept, "accept");
    /* connect to a full backlog */
    int l2 = listener(0, &full_addr);
    int fill[3];
    for (int i = 0; i < 3; i++) {
        fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        connect(fill[i], (struct sockaddr *)&full_addr, sizeof full_addr);
    }
    defergc_sleep_ns(50 * MS);
    CHECK(defergc_net_socket(AF_INET, SOCK_STREAM, 0, &blocked_handle) == 0);
    close_under(block_connect, "connect");
    for (int i = 0; i < 3; i++)
        close(fill[i]);
    close(l2);
    OK();
}

static void close_blocked(void) { in_main(close_blocked_body); }

static void odd_codes_body(void *arg) {
    (void)arg;
    uint64_t h = 0;
    char buf[16];
    /* descriptors */
    CHECK(defergc_net_open(-5, &h) == DEFERGC_EINVAL);
    CHECK(defergc_net_open(INT32_MIN, &h) == DEFERGC_EINVAL);
    CHECK(defergc_net_open(INT32_MAX, &h) == DEFERGC_EOS - EBADF);
    CHECK(defergc_net_open(0, NULL) == DEFERGC_EINVAL);
    int dn = open("/dev/null", O_RDWR);
    CHECK(dn >= 0);
    CHECK(defergc_net_open(dn, &h) == DEFERGC_EOS - EPERM);
    int dir = open("/", O_RDONLY | O_DIRECTORY);
    CHECK(defergc_net_open(dir, &h) == DEFERGC_EOS - EPERM);
    /* an epoll descriptor: registering it in itself fails, in ours works */
    int ep = epoll_create1(0);
    CHECK(ep >= 0);
    CHECK(defergc_net_open(ep, &h) == 0);
    CHECK(defergc_net_read(h, buf, sizeof buf) == DEFERGC_EOS - EINVAL);
    CHECK(defergc_net_close(h) == 0);
    CHECK(fcntl(ep, F_GETFD) < 0 && errno == EBADF); /* net_close closed it */
    /* eventfd: reads of less than 8 bytes are EINVAL; 8 bytes work */
    int ev = eventfd(3, 0);
    CHECK(defergc_net_open(ev, &h) == 0);
    CHECK(defergc_net_read(h, buf, 4) == DEFERGC_EOS - EINVAL);
    uint64_t v = 0;
    CHECK(defergc_net_read(h, &v, 8) == 8 && v == 3);
    v = 5;
    CHECK(defergc_net_write(h, &v, 8) == 8);
    CHECK(defergc_net_read(h, &v, 8) == 8 && v == 5);
    CHECK(defergc_net_close(h) == 0);
    /* sockets */
    CHECK(defergc_net_socket(AF_INET, SOCK_STREAM, 0, NULL) == DEFERGC_EINVAL);
    CHECK(defergc_net_socket(12345, SOCK_STREAM, 0, &h) == DEFERGC_EOS - EAFNOSUPPORT);
    CHECK(defergc_net_socket(AF_INET, 99, 0, &h) == DEFERGC_EOS - EINVAL);
    CHECK(defergc_net_socket(AF_INET, SOCK_STREAM, 0, &h) == 0);
    uint64_t conn;
    /* accept on a socket that does not listen */
    CHECK(defergc_net_accept(h, &conn, NULL, NULL) == DEFERGC_EOS - EINVAL);
    CHECK(defergc_net_accept(h, NULL, NULL, NULL) == DEFERGC_EINVAL);
    struct sockaddr_in peer;
    CHECK(defergc_net_accept(h, &conn, (struct sockaddr *)&peer, NULL) == DEFERGC_EINVAL);
    /* read and write on an unconnected stream */
    CHECK(defergc_net_read(h, buf, 1) == DEFERGC_EOS - ENOTCONN);
    CHECK(defergc_net_write(h, buf, 1) == DEFERGC_EOS - EPIPE);
    /* connect: NULL, short, refused */
    CHECK(defergc_net_connect(h, NULL, 16) == DEFERGC_EINVAL);
    struct sockaddr_in a;
    int l = listener(16, &a);
    CHECK(defergc_net_connect(h, (struct sockaddr *)&a, 0) == DEFERGC_EOS - EINVAL);
    CHECK(defergc_net_connect(h, (struct sockaddr *)&a, UINT32_MAX) == DEFERGC_EOS - EINVAL);
    CHECK(defergc_net_close(h) == 0);
    struct sockaddr_in closed = a;
    close(l);
    CHECK(defergc_net_socket(AF_INET, SOCK_STREAM, 0, &h) == 0);
    CHECK(defergc_net_connect(h, (struct sockaddr *)&closed, sizeof closed) ==
          DEFERGC_EOS - ECONNREFUSED);
    CHECK(defergc_net_close(h) == 0);
    /* accept with a short address room: cut, full length reported */
    l = listener(16, &a);
    uint64_t lh, ch;
    CHECK(defergc_net_open(l, &lh) == 0);
    CHECK(defergc_net_socket(AF_INET, SOCK_STREAM, 0, &ch) == 0);
    CHECK(defergc_net_connect(ch, (struct sockaddr *)&a, sizeof a) == 0);
    char room[4] = {0};
    uint32_t rl = 2;
    CHECK(defergc_net_accept(lh, &conn, (struct sockaddr *)room, &rl) == 0);
    CHECK(rl == sizeof(struct sockaddr_in) && room[2] == 0);
    /* deadlines: past, far, negative, cleared, with a parked waiter */
    CHECK(defergc_poll_set_deadline(conn, 3, INT64_MIN) == 0);
    CHECK(defergc_net_read(conn, buf, 1) == DEFERGC_ETIMEOUT);
    CHECK(defergc_net_write(conn, buf, 1) == DEFERGC_ETIMEOUT);
    CHECK(defergc_poll_set_deadline(conn, 3, INT64_MAX) == 0);
    CHECK(defergc_net_write(ch, "z", 1) == 1);
    CHECK(defergc_net_read(conn, buf, 1) == 1 && buf[0] == 'z');
    CHECK(defergc_poll_set_deadline(conn, 3, -1) == 0);
    CHECK(defergc_poll_wait(conn, DEFERGC_POLL_READ) == DEFERGC_ETIMEOUT);
    CHECK(defergc_poll_set_deadline(conn, 3, 0) == 0);
    CHECK(defergc_poll_set_deadline(conn, 0, 0) == DEFERGC_EINVAL);
    CHECK(defergc_poll_set_deadline(conn, -1, 0) == DEFERGC_EINVAL);
    CHECK(defergc_poll_reset(conn, 7) == DEFERGC_EINVAL);
    int64_t t0 = defergc_nanotime();
    CHECK(defergc_poll_set_deadline(conn, DEFERGC_POLL_READ, t0 + 30 * MS) == 0);
    CHECK(defergc_net_read(conn, buf, 1) == DEFERGC_ETIMEOUT);
    CHECK(defergc_nanotime() - t0 >= 30 * MS);
    /* net_fd: live, then closed */
    CHECK(defergc_net_fd(conn) >= 0);
    CHECK(defergc_poll_unblock(conn) == 0);
    CHECK(defergc_net_fd(conn) == DEFERGC_ECLOSED);
    CHECK(defergc_poll_set_deadline(conn, 1, 0) == DEFERGC_ECLOSED);
    CHECK(defergc_net_close(conn) == 0);
    CHECK(defergc_net_close(conn) == DEFERGC_EBADHANDLE);
    CHECK(defergc_poll_close(conn) == DEFERGC_EBADHANDLE);
    CHECK(defergc_net_close(ch) == 0);
    CHECK(defergc_net_close(lh) == 0);
    /* strerror of unknown codes */
    CHECK(strcmp(defergc_net_strerror(0), "unknown error") == 0);
    CHECK(strcmp(defergc_net_strerror(-2), "unknown error") == 0);
    CHECK(strcmp(defergc_net_strerror(INT64_MAX), "unknown error") == 0);
    CHECK(strcmp(defergc_net_strerror(DEFERGC_EOS), "unknown error") == 0);
    CHECK(defergc_net_strerror(DEFERGC_EOS - 100000) != NULL);
    CHECK(defergc_net_strerror(INT64_MIN) != NULL);
    close(dn);
    close(dir);
    OK();
}

static void odd_codes(void) { in_main(odd_codes_body); }

/* The same calls from the process's main thread, no runtime started
 * (no defergc_main): they block the thread and still see deadlines and
 * closes (the plain thread polls a slice at a time). */
static uint64_t plain_handle;

static void *close_later(void *arg) {
    (void)arg;
    usleep(50 * 1000);
    CHECK(defergc_net_close(plain_handle) == 0);
    return NULL;
}

static void plain_thread(void) {
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(defergc_net_open(sv[0], &plain_handle) == 0);
    char buf[4];
    CHECK(write(sv[1], "ab", 2) == 2);
    CHECK(defergc_net_read(plain_handle, buf, sizeof buf) == 2);
    int64_t t0 = defergc_nanotime();
    CHECK(defergc_poll_set_deadline(plain_handle, DEFERGC_POLL_READ, t0 + 30 * MS) == 0);
    CHECK(defergc_net_read(plain_handle, buf, sizeof buf) == DEFERGC_ETIMEOUT);
    CHECK(defergc_nanotime() - t0 >= 30 * MS);
    CHECK(defergc_poll_set_deadline(plain_handle, DEFERGC_POLL_READ, 0) == 0);
    pthread_t t;
    CHECK(pthread_create(&t, NULL, close_later, NULL) == 0);
    CHECK(defergc_net_read(plain_handle, buf, sizeof buf) == DEFERGC_ECLOSED);
    pthread_join(t, NULL);
    close(sv[1]);
    OK();
}

/* Deadlines changed while a goroutine is parked: moved into the past,
 * shortened, cleared; and a read and a write parked at once on one
 * handle, both woken by one close. */
#define PENDING 100
static atomic_int parked_read = PENDING, parked_write = PENDING;

static void parked_reader(void *arg) {
    (void)arg;
    char c;
    atomic_store(&parked_read, (int)defergc_net_read(blocked_handle, &c, 1));
}

static void parked_writer(void *arg) {
    (void)arg;
    static char big[1 << 20];
    int64_t r;
    do r = defergc_net_write(blocked_handle, big, sizeof big);
    while (r > 0);
    atomic_store(&parked_write, (int)r);
}

/* Waits up to 5 s for *v to leave PENDING; its value. */
static int settled(atomic_int *v) {
    int64_t t0 = defergc_nanotime();
    while (atomic_load(v) == PENDING && defergc_nanotime() - t0 < 5000 * MS)
        defergc_sleep_ns(1 * MS);
    return atomic_load(v);
}

static void start_reader(void) {
    atomic_store(&parked_read, PENDING);
    CHECK(defergc_go(parked_reader, NULL, 0) == 0);
    defergc_sleep_ns(30 * MS);
    CHECK(atomic_load(&parked_read) == PENDING);
}

static void deadline_parked_body(void *arg) {
    (void)arg;
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    CHECK(defergc_net_open(sv[0], &blocked_handle) == 0);
    /* into the past */
    start_reader();
    CHECK(defergc_poll_set_deadline(blocked_handle, DEFERGC_POLL_READ, 1) == 0);
    CHECK(settled(&parked_read) == DEFERGC_ETIMEOUT);
    /* far, then shortened */
    CHECK(defergc_poll_set_deadline(blocked_handle, DEFERGC_POLL_READ, INT64_MAX) == 0);
    start_reader();
    int64_t t0 = defergc_nanotime();
    CHECK(defergc_poll_set_deadline(blocked_handle, DEFERGC_POLL_READ, t0 + 30 * MS) == 0);
    CHECK(settled(&parked_read) == DEFERGC_ETIMEOUT);
    CHECK(defergc_nanotime() - t0 >= 30 * MS);
    /* set, then cleared: the reader stays until data comes */
    CHECK(defergc_poll_set_deadline(blocked_handle, DEFERGC_POLL_READ, 0) == 0);
    start_reader();
    CHECK(defergc_poll_set_deadline(blocked_handle, DEFERGC_POLL_READ,
                                    defergc_nanotime() + 30 * MS) == 0);
    CHECK(defergc_poll_set_deadline(blocked_handle, DEFERGC_POLL_READ, 0) == 0);
    defergc_sleep_ns(100 * MS);
    CHECK(atomic_load(&parked_read) == PENDING);
    CHECK(write(sv[1], "q", 1) == 1);
    CHECK(settled(&parked_read) == 1);
    /* a reader and a writer parked at once, one close */
    start_reader();
    atomic_store(&parked_write, PENDING);
    CHECK(defergc_go(parked_writer, NULL, 0) == 0);
    defergc_sleep_ns(50 * MS);
    CHECK(atomic_load(&parked_write) == PENDING);
    CHECK(defergc_net_close(blocked_handle) == 0);
    CHECK(settled(&parked_read) == DEFERGC_ECLOSED);
    CHECK(settled(&parked_write) == DEFERGC_ECLOSED);
    close(sv[1]);
    OK();
}

static void deadline_parked(void) { in_main(deadline_parked_body); }

static const struct test_case cases[] = {
    {"write-zero", write_zero},
    {"write-pipe-epipe", write_pipe_epipe},
    {"double-close-race", double_close_race},
    {"stale-fd-reused", stale_fd_reused},
    {"stale-fd-net-close", stale_fd_net_close},
    {"poll-close-wakes", poll_close_wakes},
    {"net-close-wakes-poll-wait", net_close_wakes_poll_wait},
    {"huge-len", huge_len},
    {"connect-eisconn", connect_eisconn},
    {"strerror-huge", strerror_huge},
    {"connect-spurious", connect_spurious},
    {"close-blocked", close_blocked},
    {"odd-codes", odd_codes},
    {"deadline-parked", deadline_parked},
    {"plain-thread", plain_thread},
    {"forged-free-record", forged_free_record},
    {"guessed-close-races-open", guessed_close_races_open},
    {"fork-during-open", fork_during_open},
    {"fork-during-lock-queue", fork_during_lock_queue},
};

int main(int argc, char **argv) { return RUN_CASES(cases, argc, argv); }
