// The million-defer workload in Go, for comparison with `defergc stress`:
// each deferred call captures a fresh heap object holding its index (or,
// with -capture int, only the index) and checks it runs in LIFO order.
//
//	go run benches/go/stress.go [-capture object|int] [-runs N]
package main

import (
	"flag"
	"fmt"
	"os"
	"runtime"
	"sort"
	"strings"
	"time"
)

type verify struct {
	next, bad int
	sum       uint64
}

func (v *verify) call(i, seen int) {
	if v.next != i+1 || seen != i {
		v.bad++
	}
	v.next = i
	v.sum += uint64(seen)
}

func objects(n int, v *verify) {
	for i := 0; i < n; i++ {
		obj := new(int)
		*obj = i
		defer func() { v.call(*obj, *obj) }()
	}
}

func ints(n int, v *verify) {
	for i := 0; i < n; i++ {
		defer v.call(i, i)
	}
}

func peakRSS() int {
	data, _ := os.ReadFile("/proc/self/status")
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			var kb int
			fmt.Sscanf(strings.TrimSpace(strings.TrimPrefix(line, "VmHWM:")), "%d", &kb)
			return kb * 1024
		}
	}
	return 0
}

func main() {
	capture := flag.String("capture", "object", "object or int")
	runs := flag.Int("runs", 1, "runs in this process (median reported)")
	flag.Parse()
	const n = 1000000
	var times []float64
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	for r := 0; r < *runs; r++ {
		v := &verify{next: n}
		start := time.Now()
		if *capture == "int" {
			ints(n, v)
		} else {
			objects(n, v)
		}
		times = append(times, float64(time.Since(start).Microseconds())/1000)
		if v.bad != 0 || v.next != 0 || v.sum != n*(n-1)/2 {
			fmt.Println("verification FAILED")
			os.Exit(1)
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	sort.Float64s(times)
	fmt.Printf("{\"bench\":\"go_stress\",\"go\":%q,\"capture\":%q,\"runs\":%d,\"elapsed_ms\":%.3f,\"collections\":%d,\"peak_rss_bytes\":%d}\n",
		runtime.Version(), *capture, *runs, times[len(times)/2], after.NumGC-before.NumGC, peakRSS())
}
