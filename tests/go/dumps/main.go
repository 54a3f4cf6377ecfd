package main

import (
	"os"
	"strconv"
	"syscall"
	"time"
)

func parked(c chan int) {
	<-c
}

func spawner(n int, c chan int) {
	for i := 0; i < n; i++ {
		go parked(c)
	}
}

func main() {
	c := make(chan int)
	spawner(3, c)
	time.Sleep(100 * time.Millisecond)
	if len(os.Args) > 1 && os.Args[1] == "quit" {
		syscall.Kill(os.Getpid(), syscall.SIGQUIT)
		time.Sleep(time.Second)
	}
	_ = strconv.Itoa
	<-c
}
