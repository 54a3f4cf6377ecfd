// The Go program whose reports tests/c/panics.c must reproduce, case by
// case (go run main.go CASE; expected output in CASE.out, see README.md).
package main

import (
	"errors"
	"os"
	"unsafe"
)

type T struct{ X int }
type Celsius float64
type S string
type St struct{}

func (St) String() string { return "stringer!" }

func main() {
	switch os.Args[1] {
	case "str":
		panic("hello\nworld")
	case "int":
		panic(42)
	case "err":
		panic(errors.New("boom"))
	case "struct":
		panic(T{1})
	case "named":
		panic(Celsius(1.5))
	case "nstr":
		panic(S("x"))
	case "stringer":
		panic(St{})
	case "float":
		panic(2.5)
	case "repanic":
		defer func() { panic(recover()) }()
		panic("first")
	case "nested":
		defer func() { panic("second") }()
		panic("first")
	case "recovered-then-other":
		defer func() { recover(); panic("second") }()
		panic("first")
	case "nil":
		panic(nil)
	case "pointer":
		panic(unsafe.Pointer(uintptr(0x1234)))
	}
}
