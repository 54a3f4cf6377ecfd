/*
 * net.Listen("tcp", "HOST:PORT") on defergc's C ABI, for the network
 * examples: an IPv4 listening handle whose accepts park the goroutine.
 */
#ifndef EXAMPLES_TCP_LISTEN_H
#define EXAMPLES_TCP_LISTEN_H

#include "defergc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* A listening handle on addr, or 0 after printing why not; prints
 * "listening on HOST:PORT" (the port bound, when addr asked for 0). */
static uint64_t listen_tcp(const char *addr) {
    char host[64];
    const char *colon = strrchr(addr, ':');
    if (colon == NULL || (size_t)(colon - addr) >= sizeof host) {
        fprintf(stderr, "address %s: want HOST:PORT\n", addr);
        return 0;
    }
    memcpy(host, addr, (size_t)(colon - addr));
    host[colon - addr] = '\0';
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(colon + 1))};
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
        fprintf(stderr, "address %s: not an IPv4 host\n", addr);
        return 0;
    }
    uint64_t ln;
    int64_t rc = defergc_net_socket(AF_INET, SOCK_STREAM, 0, &ln);
    if (rc != 0) {
        fprintf(stderr, "socket: %s\n", defergc_net_strerror(rc));
        return 0;
    }
    int fd = defergc_net_fd(ln), one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    socklen_t len = sizeof sa;
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) != 0 || listen(fd, 4096) != 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) != 0) {
        perror(addr);
        defergc_net_close(ln);
        return 0;
    }
    char shown[INET_ADDRSTRLEN];
    printf("listening on %s:%u\n", inet_ntop(AF_INET, &sa.sin_addr, shown, sizeof shown),
           ntohs(sa.sin_port));
    fflush(stdout);
    return ln;
}

/* Go sets TCP_NODELAY on every connection it makes or accepts. */
static void set_nodelay(uint64_t conn) {
    int one = 1;
    setsockopt(defergc_net_fd(conn), IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

/* The server's main, from inside defergc_main (argv: HOST:PORT):
 *
 * ln, err := net.Listen("tcp", os.Args[1])
 * if err != nil { log.Fatal(err) }
 * for {
 *     c, err := ln.Accept()
 *     if err != nil { log.Fatal(err) }
 *     go serve(c)
 * }
 *
 * serve gets a pointer to the connection's handle (a uint64_t). */
static void serve_forever(const char *addr, void (*serve)(void *)) {
    uint64_t ln = listen_tcp(addr);
    if (ln == 0)
        exit(1);
    for (;;) {
        uint64_t conn;
        int64_t rc = defergc_net_accept(ln, &conn, NULL, NULL);
        if (rc != 0) {
            fprintf(stderr, "accept: %s\n", defergc_net_strerror(rc));
            exit(1);
        }
        set_nodelay(conn);
        defergc_go(serve, &conn, sizeof conn);
    }
}

struct server {
    const char *addr;
    void (*serve)(void *);
};

static void server_go_main(void *arg) {
    const struct server *s = arg;
    serve_forever(s->addr, s->serve);
}

/* A server's C main: `prog HOST:PORT`, serve_forever in the main
 * goroutine. */
static int server_main(int argc, char **argv, void (*serve)(void *)) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s HOST:PORT\n", argv[0]);
        return 2;
    }
    struct server s = {argv[1], serve};
    return defergc_main(server_go_main, &s);
}

#endif
