// The Go originals of tests/c/faults.c: what Go prints for each case
// (go run main.go CASE), kept in CASE.out. tests/go_faults.rs compares
// the C program's output with these, addresses elided.
package main

import (
	"fmt"
	"os"
	"sync"
	"unsafe"
)

type T struct{ a, b int }

//go:noinline
func nilDeref(p *T) int { return p.b }

//go:noinline
func div(a, b int) int { return a / b }

var zero int

func printRecovered() {
	r := recover()
	if _, ok := r.(error); !ok {
		panic("not an error")
	}
	fmt.Println("recovered:", r)
}

func recoverNil() {
	defer printRecovered()
	fmt.Println(nilDeref(nil))
}

func recoverDiv() {
	defer printRecovered()
	fmt.Println(div(1, zero))
}

func middle() {
	defer fmt.Println("middle's deferred call")
	nilDeref(nil)
}

func outer() {
	defer printRecovered()
	middle()
	fmt.Println("not reached")
}

//go:noinline
func storeNil() {
	var p *int
	*p = 1
}

//go:noinline
func closeNil() {
	var c chan int
	close(c)
}

//go:noinline
func wgNegative() {
	var wg sync.WaitGroup
	wg.Done()
}

func main() {
	switch os.Args[1] {
	case "close-nil": // close-nil.out, then main.closeNil
		closeNil()
	case "wg-negative": // wg-negative.out, then sync.(*WaitGroup).Add, ...
		wgNegative()
	case "nil-main": // nil-nodefer.out
		storeNil()
	case "div-main": // div-nodefer.out
		fmt.Println(div(1, zero))
	case "nil-go": // nil-nodefer.out, another goroutine's header
		go storeNil()
		select {}
	case "div-go": // div-nodefer.out, another goroutine's header
		go func() { fmt.Println(div(1, zero)) }()
		select {}
	case "nil":
		fmt.Println(nilDeref(nil))
	case "div":
		fmt.Println(div(1, zero))
	case "addr":
		fmt.Println(*(*int32)(unsafe.Pointer(uintptr(0xdeadbeef))))
	case "repanic":
		defer func() { panic(recover()) }()
		fmt.Println(nilDeref(nil))
	case "recover":
		recoverNil()
		recoverDiv()
	case "unwind":
		outer()
		fmt.Println("outer returned")
	case "goroutine":
		const n = 64
		var wg sync.WaitGroup
		wg.Add(n)
		for i := 0; i < n; i++ {
			go func() {
				recoverNil()
				wg.Done()
			}()
		}
		wg.Wait()
		fmt.Println("all", n, "recovered")
	}
}
