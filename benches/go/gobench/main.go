// The Go side of `defergc bench --go`: the same benchmarks, written the
// way a Go programmer would, run in the same command for a same-run
// baseline. One benchmark per process:
//
//	go run benches/go/gobench/main.go -bench NAME [-runs N] [-json] [-trace FILE]
//
// With -trace, the runs are traced by runtime/trace (what tracing costs
// Go, beside what DEFERGC_TRACE costs defergc).
//
// Every benchmark checks what it computed (counts, values, fairness), so
// a figure is never that of a broken run. JSON lines carry the fields of
// defergc's own (bench, impl, unit, runs, median, peak_rss_bytes,
// gomaxprocs).
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"runtime"
	"runtime/trace"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

// extra holds a run's figures beside its main one (printed as JSON
// fields of the same name).
var extra = map[string]float64{}

type node struct{ value int }

// spawn-panic: 100,000 goroutines; each defers wg.Done and a recover,
// panics with a fresh heap object and recovers it.
func spawnPanic() float64 {
	const n = 100000
	var wg sync.WaitGroup
	var bad int64
	t := time.Now()
	wg.Add(n)
	for i := 0; i < n; i++ {
		go func(i int) {
			defer wg.Done()
			o := &node{i}
			defer func() {
				if r, ok := recover().(*node); !ok || r != o || r.value != i {
					atomic.AddInt64(&bad, 1)
				}
			}()
			panic(o)
		}(i)
	}
	wg.Wait()
	if bad != 0 {
		fail("goroutines recovered the wrong value")
	}
	return ms(t)
}

const million = 1000000

// million: a million goroutines parked on one channel, then released by
// closing it.
func millionParked() float64 {
	gate := make(chan struct{})
	var started, finished sync.WaitGroup
	t := time.Now()
	started.Add(million)
	finished.Add(million)
	for i := 0; i < million; i++ {
		go func() {
			started.Done()
			<-gate
			finished.Done()
		}()
	}
	started.Wait()
	close(gate)
	finished.Wait()
	return time.Since(t).Seconds()
}

// keepHeap takes its argument through a function value, which escape
// analysis cannot see through: the object it is given is a heap object.
var keepHeap = func(*[2]uint64) {}

// million-heap (cold: one run per process): a million goroutines that
// each allocate a 16-byte heap object and park on one channel; a forced
// collection with all of them parked; the channel closed, and each checks
// its object. Returns the total and spawn+park in seconds, and the
// collection in milliseconds.
func millionHeap() (total, spawnPark, gcMs float64) {
	const magic = 0x9e3779b97f4a7c15
	gate := make(chan struct{})
	var parked, finished sync.WaitGroup
	var bad int64
	t := time.Now()
	parked.Add(million)
	finished.Add(million)
	for i := 0; i < million; i++ {
		go func(i uint64) {
			o := new([2]uint64)
			keepHeap(o)
			o[0], o[1] = i^magic, ^i
			parked.Done()
			<-gate
			if o[0] != i^magic || o[1] != ^i {
				atomic.AddInt64(&bad, 1)
			}
			finished.Done()
		}(uint64(i))
	}
	parked.Wait()
	spawnPark = time.Since(t).Seconds()
	g := time.Now()
	runtime.GC()
	gcMs = ms(g)
	close(gate)
	finished.Wait()
	total = time.Since(t).Seconds()
	if bad != 0 {
		fail("goroutines found their object changed")
	}
	return
}

// yield-pingpong: two goroutines alternating with Gosched on one
// processor; ns per switch.
func yieldPingpong() float64 {
	const n = 1000000
	var stop int32
	done := make(chan struct{})
	go func() {
		for atomic.LoadInt32(&stop) == 0 {
			runtime.Gosched()
		}
		close(done)
	}()
	runtime.Gosched()
	t := time.Now()
	for i := 0; i < n; i++ {
		runtime.Gosched()
	}
	per := nsPer(t, 2*n)
	atomic.StoreInt32(&stop, 1)
	<-done
	return per
}

// defer-stress-goroutine: a million defers in one function, each
// capturing a fresh heap object, checked.
func deferStress() float64 {
	const n = 1000000
	var sum uint64
	t := time.Now()
	func() {
		for i := 0; i < n; i++ {
			o := &node{i}
			defer func() { sum += uint64(o.value) }()
		}
	}()
	if sum != uint64(n-1)*n/2 {
		fail("a deferred call saw a wrong value")
	}
	return ms(t)
}

// chan-pingpong: a value and its successor over two unbuffered
// channels; ns per round trip.
func chanPingpong() float64 {
	const n = 500000
	ping, pong := make(chan uint64), make(chan uint64)
	go func() {
		for v := range ping {
			pong <- v + 1
		}
	}()
	t := time.Now()
	for i := uint64(0); i < n; i++ {
		ping <- i
		if <-pong != i+1 {
			fail("pong")
		}
	}
	per := nsPer(t, n)
	close(ping)
	return per
}

// chan-buffered-PxP: 2,000,000 values through one channel of 128 from P
// producers to P consumers; ns per value.
func chanBuffered(pairs int) float64 {
	const n = 2000000
	c := make(chan uint64, 128)
	var producers, consumers sync.WaitGroup
	var total int64
	t := time.Now()
	producers.Add(pairs)
	for p := 0; p < pairs; p++ {
		go func(p int) {
			for i := 0; i < n/pairs; i++ {
				c <- uint64(p*n + i)
			}
			producers.Done()
		}(p)
	}
	consumers.Add(pairs)
	for p := 0; p < pairs; p++ {
		go func() {
			var k int64
			for range c {
				k++
			}
			atomic.AddInt64(&total, k)
			consumers.Done()
		}()
	}
	producers.Wait()
	close(c)
	consumers.Wait()
	if total != int64(n/pairs*pairs) {
		fail("values lost")
	}
	return nsPer(t, n)
}

// sieve: sieve1.go's chain of filter goroutines, up to the 10,000th
// prime.
func sieve() float64 {
	const primes = 10000
	// The 10,000th prime: the generator stops there and closes its
	// channel, and each filter closes its own when its input closes, so
	// a run leaves no pipeline sifting beside the next.
	const last = 104729
	t := time.Now()
	ch := make(chan uint64)
	go func(ch chan<- uint64) {
		for i := uint64(2); i <= last; i++ {
			ch <- i
		}
		close(ch)
	}(ch)
	var got uint64
	for k := 0; k < primes; k++ {
		prime := <-ch
		got = prime
		out := make(chan uint64)
		go func(in <-chan uint64, out chan<- uint64, prime uint64) {
			for i := range in {
				if i%prime != 0 {
					out <- i
				}
			}
			close(out)
		}(ch, out, prime)
		ch = out
	}
	if got != last {
		fail("the 10,000th prime")
	}
	if _, ok := <-ch; ok {
		fail("a number after the 10,000th prime")
	}
	return ms(t)
}

// select4: a select over four ready channels (kept full); ns a select.
func select4() float64 {
	const n = 1000000
	cs := [4]chan uint64{make(chan uint64, 1), make(chan uint64, 1), make(chan uint64, 1), make(chan uint64, 1)}
	var counts [4]uint64
	t := time.Now()
	for i := uint64(0); i < n; i++ {
		for _, c := range cs {
			select {
			case c <- i:
			default:
			}
		}
		select {
		case <-cs[0]:
			counts[0]++
		case <-cs[1]:
			counts[1]++
		case <-cs[2]:
			counts[2]++
		case <-cs[3]:
			counts[3]++
		}
	}
	per := nsPer(t, n)
	for _, k := range counts {
		if k <= n/5 {
			fail(fmt.Sprintf("select chose unevenly: %v", counts))
		}
	}
	return per
}

// mutex-100k: 100,000 goroutines, 10 Lock/Unlock each on one Mutex.
func mutex100k() float64 {
	const g = 100000
	var m sync.Mutex
	var wg sync.WaitGroup
	count := 0
	t := time.Now()
	wg.Add(g)
	for i := 0; i < g; i++ {
		go func() {
			for j := 0; j < 10; j++ {
				m.Lock()
				count++
				m.Unlock()
			}
			wg.Done()
		}()
	}
	wg.Wait()
	if count != g*10 {
		fail("lost updates")
	}
	return ms(t)
}

// timers: 100,000 goroutines each sleeping 1 ms, ten times.
// skynet: a tree of a million goroutines, ten children each, every leaf
// sending its number up a fresh channel of its parent's; ms for the sum.
func skynet() float64 {
	var node func(c chan int, num, size int)
	node = func(c chan int, num, size int) {
		if size == 1 {
			c <- num
			return
		}
		rc := make(chan int)
		for i := 0; i < 10; i++ {
			go node(rc, num+i*(size/10), size/10)
		}
		sum := 0
		for i := 0; i < 10; i++ {
			sum += <-rc
		}
		c <- sum
	}
	t := time.Now()
	c := make(chan int)
	go node(c, 0, million)
	if sum := <-c; sum != million*(million-1)/2 {
		fail(fmt.Sprintf("skynet summed %d", sum))
	}
	return ms(t)
}

// wg-fanout: a million goroutines in rounds of 10,000, each round one
// WaitGroup that every goroutine of it marks done; ms in all.
func wgFanout() float64 {
	const round = 10000
	var done atomic.Int64
	t := time.Now()
	for r := 0; r < million/round; r++ {
		var wg sync.WaitGroup
		wg.Add(round)
		for i := 0; i < round; i++ {
			go func() {
				done.Add(1)
				wg.Done()
			}()
		}
		wg.Wait()
	}
	if done.Load() != million {
		fail("lost goroutines")
	}
	return ms(t)
}

func timers() float64 {
	const g = 100000
	const rounds = 10
	var wg sync.WaitGroup
	var slept atomic.Int64
	t := time.Now()
	wg.Add(g)
	for i := 0; i < g; i++ {
		go func() {
			for j := 0; j < rounds; j++ {
				at := time.Now()
				time.Sleep(time.Millisecond)
				if time.Since(at) < time.Millisecond {
					fail("a sleep ended early")
				}
				slept.Add(1)
			}
			wg.Done()
		}()
	}
	wg.Wait()
	if slept.Load() != g*rounds {
		fail("lost sleeps")
	}
	return ms(t)
}

// panic-recover: a panic and a deferred recover returning the value as a
// named result; ns a cycle.
func panicRecover() float64 {
	const n = 200000
	t := time.Now()
	for i := uint64(0); i < n; i++ {
		got := func() (got uint64) {
			defer func() {
				if r := recover(); r != nil {
					got = r.(uint64)
				}
			}()
			panic(i)
		}()
		if got != i {
			fail("recovered the wrong value")
		}
	}
	return nsPer(t, n)
}

// finalizers-1m: 1,000,000 objects with finalizers, dropped at once;
// collections until every finalizer has run (at most 999 may be kept by
// stale references, the same allowance as defergc's side); ms.
type finalized struct{ v [2]uint64 }

func finalizers1m() float64 {
	const n = 1000000
	var ran int64
	t := time.Now()
	func() {
		for i := 0; i < n; i++ {
			o := &finalized{}
			o.v[0] = uint64(i)
			runtime.SetFinalizer(o, func(*finalized) { atomic.AddInt64(&ran, 1) })
		}
	}()
	for atomic.LoadInt64(&ran) < n-999 {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	return ms(t)
}

// syscall: a million getpid calls through the runtime's system-call
// entry and exit (syscall.Syscall), and the same bare (RawSyscall), in
// twenty alternating rounds of 50,000 each way (as defergc's bench does);
// ns a call through the entry, the bare figure and the ratio beside it.
func syscallBench() float64 {
	const rounds, n = 20, 50_000
	pid := uintptr(os.Getpid())
	var through, bare time.Duration
	calls := func(call func(trap, a1, a2, a3 uintptr) (r1, r2 uintptr, err syscall.Errno), into *time.Duration) {
		t := time.Now()
		for i := 0; i < n; i++ {
			if r, _, _ := call(syscall.SYS_GETPID, 0, 0, 0); r != pid {
				fail("getpid returned another pid")
			}
		}
		*into += time.Since(t)
	}
	wrapped := func() { calls(syscall.Syscall, &through) }
	raw := func() { calls(syscall.RawSyscall, &bare) }
	for round := 0; round < rounds; round++ {
		if round%2 == 0 {
			wrapped()
			raw()
		} else {
			raw()
			wrapped()
		}
	}
	per := func(d time.Duration) float64 { return float64(d.Nanoseconds()) / (rounds * n) }
	extra["bare_ns"] = per(bare)
	extra["ratio"] = per(through) / per(bare)
	return per(through)
}

// retake: one processor; a goroutine blocks 2 ms in a system call
// (nanosleep through syscall.Syscall) while this one is ready to run.
// How long this one waits for the processor (µs, from just before the
// call): the median of 50 is the figure, the largest beside it.
func retakeBench() float64 {
	var waits []float64
	for i := 0; i < 50; i++ {
		var entered int64
		done := make(chan struct{})
		go func() {
			ts := syscall.Timespec{Nsec: 2_000_000}
			atomic.StoreInt64(&entered, time.Now().UnixNano())
			syscall.Syscall(syscall.SYS_NANOSLEEP, uintptr(unsafe.Pointer(&ts)), 0, 0)
			close(done)
		}()
		for atomic.LoadInt64(&entered) == 0 {
			runtime.Gosched()
		}
		waits = append(waits, float64(time.Now().UnixNano()-atomic.LoadInt64(&entered))/1e3)
		<-done
	}
	sort.Float64s(waits)
	extra["max_us"] = waits[len(waits)-1]
	return waits[len(waits)/2]
}

// spinUntil loads *flag until it is set: a loop without calls (the load
// is an intrinsic), which only asynchronous preemption interrupts.
//
//go:noinline
func spinUntil(flag *uint32) uint64 {
	var loads uint64
	for atomic.LoadUint32(flag) == 0 {
		loads++
	}
	return loads
}

// preempt: one processor; a goroutine spins in a loop without calls
// while another sleeps 1 ms at a time for 1 s. How late each wake-up is
// (ms): the largest is the figure, the 99th percentile beside it.
func preemptBench() float64 {
	var flag, spinning uint32
	done := make(chan uint64)
	go func() {
		atomic.StoreUint32(&spinning, 1)
		done <- spinUntil(&flag)
	}()
	for atomic.LoadUint32(&spinning) == 0 {
		runtime.Gosched()
	}
	var delays []float64
	start := time.Now()
	for time.Since(start) < time.Second {
		t := time.Now()
		time.Sleep(time.Millisecond)
		delays = append(delays, float64(time.Since(t)-time.Millisecond)/1e6)
	}
	atomic.StoreUint32(&flag, 1)
	if loads := <-done; loads == 0 {
		fail("the spinner never spun")
	}
	sort.Float64s(delays)
	extra["p99_ms"] = delays[len(delays)*99/100]
	extra["wakeups"] = float64(len(delays))
	return delays[len(delays)-1]
}

var benches = map[string]struct {
	unit string
	run  func() float64
}{
	"spawn-panic":            {"ms", spawnPanic},
	"million":                {"s", millionParked},
	"yield-pingpong":         {"ns/op", yieldPingpong},
	"defer-stress-goroutine": {"ms", deferStress},
	"chan-pingpong":          {"ns/op", chanPingpong},
	"chan-buffered-1x1":      {"ns/op", func() float64 { return chanBuffered(1) }},
	"chan-buffered-4x4":      {"ns/op", func() float64 { return chanBuffered(4) }},
	"sieve":                  {"ms", sieve},
	"select4":                {"ns/op", select4},
	"mutex-100k":             {"ms", mutex100k},
	"panic-recover":          {"ns/op", panicRecover},
	"finalizers-1m":          {"ms", finalizers1m},
	"timers":                 {"ms", timers},
	"sleep-beside-io":        {"us", sleepBesideIO},
	"skynet":                 {"ms", skynet},
	"wg-fanout":              {"ms", wgFanout},
	"syscall":                {"ns/op", syscallBench},
	"retake":                 {"us", retakeBench},
	"preempt":                {"ms", preemptBench},
}

// sleep-beside-io: how long a 100 µs sleep takes (µs, the median of
// 2,000) while a goroutine is blocked reading a loopback connection.
func sleepBesideIO() float64 {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err.Error())
	}
	c, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		fail(err.Error())
	}
	s, err := l.Accept()
	if err != nil {
		fail(err.Error())
	}
	read := make(chan byte, 1)
	go func() {
		b := make([]byte, 1)
		if _, err := io.ReadFull(s, b); err != nil {
			fail(err.Error())
		}
		read <- b[0]
	}()
	const sleep = 100 * time.Microsecond
	took := make([]float64, 0, 2000)
	for i := 0; i < 2000; i++ {
		t := time.Now()
		time.Sleep(sleep)
		d := time.Since(t)
		if d < sleep {
			fail("a sleep ended early")
		}
		took = append(took, float64(d.Nanoseconds())/1e3)
	}
	c.Write([]byte{7})
	if <-read != 7 {
		fail("the reader read something else")
	}
	c.Close()
	s.Close()
	l.Close()
	sort.Float64s(took)
	extra["p90_us"] = took[len(took)*9/10]
	return took[len(took)/2]
}

func ms(t time.Time) float64 { return float64(time.Since(t).Nanoseconds()) / 1e6 }

func nsPer(t time.Time, n int) float64 { return float64(time.Since(t).Nanoseconds()) / float64(n) }

func fail(why string) {
	fmt.Fprintln(os.Stderr, "gobench:", why)
	os.Exit(1)
}

// rssKB reads a field of /proc/self/status (VmHWM: peak, VmRSS: now).
func rssKB(field string) uint64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), field+":") {
			v := strings.Fields(strings.TrimPrefix(s.Text(), field+":"))
			if len(v) > 0 {
				k, _ := strconv.ParseUint(v[0], 10, 64)
				return k
			}
		}
	}
	return 0
}

func main() {
	name := flag.String("bench", "", "the benchmark")
	runs := flag.Int("runs", 9, "timed runs, after one warm-up run")
	asJSON := flag.Bool("json", false, "one JSON line")
	traceTo := flag.String("trace", "", "write an execution trace (runtime/trace) of the runs to this file")
	flag.Parse()
	if *name == "million-heap" {
		// Cold: one run, no warm-up; the caller starts a process a run.
		total, spawnPark, gcMs := millionHeap()
		peak := rssKB("VmHWM") * 1024
		fmt.Printf("{\"bench\":%q,\"impl\":\"go\",\"go_version\":%q,\"unit\":\"s\",\"runs\":[%.3f],\"median\":%.3f,\"spawn_park_s\":%.3f,\"gc_ms\":%.3f,\"peak_rss_bytes\":%d,\"gomaxprocs\":%d}\n",
			*name, runtime.Version(), total, total, spawnPark, gcMs, peak, runtime.GOMAXPROCS(0))
		return
	}
	b, ok := benches[*name]
	if !ok || *runs < 1 || *runs > 1000 {
		names := make([]string, 0, len(benches))
		for k := range benches {
			names = append(names, k)
		}
		names = append(names, "million-heap")
		sort.Strings(names)
		fmt.Fprintf(os.Stderr, "gobench: -bench one of %s, -runs 1 to 1000\n", strings.Join(names, ", "))
		os.Exit(2)
	}
	if *name == "yield-pingpong" || *name == "preempt" || *name == "retake" {
		runtime.GOMAXPROCS(1)
	}
	baseRSS := rssKB("VmRSS") * 1024
	if *traceTo != "" {
		f, err := os.Create(*traceTo)
		if err != nil {
			fmt.Fprintln(os.Stderr, "gobench:", err)
			os.Exit(2)
		}
		if err := trace.Start(f); err != nil {
			fmt.Fprintln(os.Stderr, "gobench:", err)
			os.Exit(2)
		}
		defer func() {
			trace.Stop()
			f.Close()
		}()
	}
	var values []float64
	for i := 0; i <= *runs; i++ {
		v := b.run()
		if i > 0 {
			values = append(values, v)
			if !*asJSON {
				fmt.Printf("%s run %d/%d: %.3f %s\n", *name, i, *runs, v, b.unit)
			}
		}
	}
	sorted := append([]float64(nil), values...)
	sort.Float64s(sorted)
	median := sorted[len(sorted)/2]
	peak := rssKB("VmHWM") * 1024
	if !*asJSON {
		fmt.Printf("%s: median %.3f %s of %d runs (Go %s)\n", *name, median, b.unit, *runs, runtime.Version())
		return
	}
	items := make([]string, len(values))
	for i, v := range values {
		items[i] = fmt.Sprintf("%.3f", v)
	}
	fields := ""
	if *name == "million" {
		fields = fmt.Sprintf(",\"bytes_per_goroutine\":%.0f", float64(peak-baseRSS)/million)
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fields += fmt.Sprintf(",%q:%.3f", k, extra[k])
	}
	fmt.Printf("{\"bench\":%q,\"impl\":\"go\",\"go_version\":%q,\"unit\":%q,\"runs\":[%s],\"median\":%.3f,\"peak_rss_bytes\":%d,\"gomaxprocs\":%d%s}\n",
		*name, runtime.Version(), b.unit, strings.Join(items, ","), median, peak, runtime.GOMAXPROCS(0), fields)
}
