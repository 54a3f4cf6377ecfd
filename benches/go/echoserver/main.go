// The Go side of `defergc bench echo --go`: a TCP echo server on plain
// net, one goroutine per connection, the same program as
// examples/c/echo_server.c and examples/echo_server.rs.
//
//	go run benches/go/echoserver/main.go 127.0.0.1:7000
//
// It prints "listening on HOST:PORT" once it accepts (port 0 picks one).
package main

import (
	"fmt"
	"log"
	"net"
	"os"
)

func serve(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 4096)
	for {
		n, err := c.Read(buf)
		if err != nil {
			return
		}
		if _, err := c.Write(buf[:n]); err != nil {
			return
		}
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: echoserver HOST:PORT")
		os.Exit(2)
	}
	ln, err := net.Listen("tcp", os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("listening on %s\n", ln.Addr())
	for {
		c, err := ln.Accept()
		if err != nil {
			log.Fatal(err)
		}
		go serve(c)
	}
}
