/*
 * What a Go-like compiler emits for a TCP echo server on defergc's C ABI:
 * one goroutine per connection, reads and writes written as if they
 * blocked (a goroutine waiting for bytes parks on the poller, not its
 * worker thread). The Go source is quoted above each function.
 *
 * Build and run (from the repository root):
 *     cargo build --release
 *     cc -O2 -Iinclude examples/c/echo_server.c target/release/libdefergc.a \
 *        -lgcc_s -lutil -lrt -lpthread -lm -ldl -o target/echo_server
 *     target/echo_server 127.0.0.1:7000
 * (tcp_listen.h, beside it, is net.Listen.) It prints "listening on HOST:PORT" once it accepts (port 0 picks one).
 */
#define _POSIX_C_SOURCE 200809L
#include "tcp_listen.h"

/* func serve(c net.Conn) {
 *     defer c.Close()
 *     buf := make([]byte, 4096)
 *     for {
 *         n, err := c.Read(buf)
 *         if err != nil { return }
 *         if _, err := c.Write(buf[:n]); err != nil { return }
 *     }
 * } */
static void serve(void *args) {
    uint64_t conn = *(uint64_t *)args;
    char buf[4096];
    for (;;) {
        int64_t n = defergc_net_read(conn, buf, sizeof buf);
        if (n <= 0 || defergc_net_write(conn, buf, (size_t)n) < 0)
            break;
    }
    defergc_net_close(conn);
}

/* func main(): see server_main and serve_forever in tcp_listen.h. */
int main(int argc, char **argv) { return server_main(argc, argv, serve); }
