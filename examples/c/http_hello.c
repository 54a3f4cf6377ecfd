/*
 * What a Go-like compiler emits for a minimal HTTP/1.1 server on
 * defergc's C ABI: one goroutine per connection, keep-alive, a fixed
 * "Hello, World!" answer to every request. The parsing is the least that
 * serves a benchmark client (read until the blank line that ends the
 * headers, answer, loop): requests carry no body. The Go source is quoted
 * above each function; benches/go/httphello is the same program in Go.
 *
 * Build and run (from the repository root):
 *     cargo build --release
 *     cc -O2 -Iinclude examples/c/http_hello.c target/release/libdefergc.a \
 *        -lgcc_s -lutil -lrt -lpthread -lm -ldl -o target/http_hello
 *     target/http_hello 127.0.0.1:8080
 * It prints "listening on HOST:PORT" once it accepts (port 0 picks one).
 */
#define _POSIX_C_SOURCE 200809L
#include "tcp_listen.h"

static const char response[] = "HTTP/1.1 200 OK\r\n"
                               "Content-Type: text/plain\r\n"
                               "Content-Length: 13\r\n"
                               "\r\n"
                               "Hello, World!";

/* func serve(c net.Conn) {
 *     defer c.Close()
 *     buf := make([]byte, 8192)
 *     have := 0
 *     for {
 *         end := bytes.Index(buf[:have], []byte("\r\n\r\n"))
 *         if end < 0 {
 *             if have == len(buf) { return }   // headers too long
 *             n, err := c.Read(buf[have:])
 *             if err != nil { return }
 *             have += n
 *             continue
 *         }
 *         if _, err := c.Write(response); err != nil { return }
 *         have = copy(buf, buf[end+4:have])
 *     }
 * } */
static void serve(void *args) {
    uint64_t conn = *(uint64_t *)args;
    char buf[8192];
    size_t have = 0;
    for (;;) {
        char *end = NULL;
        for (size_t i = 0; i + 4 <= have; i++) {
            if (memcmp(buf + i, "\r\n\r\n", 4) == 0) {
                end = buf + i + 4;
                break;
            }
        }
        if (end == NULL) {
            if (have == sizeof buf)
                break;
            int64_t n = defergc_net_read(conn, buf + have, sizeof buf - have);
            if (n <= 0)
                break;
            have += (size_t)n;
            continue;
        }
        if (defergc_net_write(conn, response, sizeof response - 1) < 0)
            break;
        have -= (size_t)(end - buf);
        memmove(buf, end, have);
    }
    defergc_net_close(conn);
}

/* func main(): see server_main and serve_forever in tcp_listen.h. */
int main(int argc, char **argv) { return server_main(argc, argv, serve); }
