// The Go side of `defergc bench http --go`: a minimal HTTP/1.1 server on
// plain net (not net/http: the same work as examples/c/http_hello.c),
// one goroutine per connection, keep-alive, a fixed "Hello, World!" to
// every request. It reads until the blank line that ends the headers,
// answers and loops: requests carry no body.
//
//	go run benches/go/httphello/main.go 127.0.0.1:8080
//
// It prints "listening on HOST:PORT" once it accepts (port 0 picks one).
package main

import (
	"bytes"
	"fmt"
	"log"
	"net"
	"os"
)

var response = []byte("HTTP/1.1 200 OK\r\n" +
	"Content-Type: text/plain\r\n" +
	"Content-Length: 13\r\n" +
	"\r\n" +
	"Hello, World!")

var blankLine = []byte("\r\n\r\n")

func serve(c net.Conn) {
	defer c.Close()
	buf := make([]byte, 8192)
	have := 0
	for {
		end := bytes.Index(buf[:have], blankLine)
		if end < 0 {
			if have == len(buf) {
				return // headers too long
			}
			n, err := c.Read(buf[have:])
			if err != nil {
				return
			}
			have += n
			continue
		}
		if _, err := c.Write(response); err != nil {
			return
		}
		have = copy(buf, buf[end+4:have])
	}
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: httphello HOST:PORT")
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
