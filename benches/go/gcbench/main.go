// The workloads of `defergc gcbench` in Go, for a third column beside
// bdwgc and the precise collector: the same programs, sizes and checks
// (see cli/src/cli/gcbench.rs), timed run after run in one process.
//
//	go run benches/go/gcbench/main.go -workload gcbench -runs 9 -json
//
// Workloads: gcbench (Ellis, Kovac, Boehm), gcbench-mt2 and gcbench-mt4
// (GCBench on 2 and 4 goroutines at once), binary-trees (-depth, 21 by
// default), live-heap (-live-mb, 100 by default). -gc-percent and
// -memory-limit-mb set GOGC and the soft memory limit (GOMEMLIMIT) as
// defergc's --gc-percent and --memory-limit-mb set the precise heap's;
// without them the environment's GOGC and GOMEMLIMIT apply, as there.
// The JSON line carries the same bench names as defergc's.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"runtime/debug"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

const (
	stretchTreeDepth   = 18
	longLivedTreeDepth = 16
	arraySize          = 500000
	minTreeDepth       = 4
	maxTreeDepth       = 16
	liveHeapTreeDepth  = 14
	liveHeapRounds     = 3
	liveHeapBytesANode = 32 // the Rust side's count of trees
)

type node struct {
	left, right *node
	i, j        int32
}

func treeSize(depth uint) uint64 { return (1 << (depth + 1)) - 1 }

func numIters(depth uint) uint64 { return 2 * treeSize(stretchTreeDepth) / treeSize(depth) }

// populate builds a tree top down, linking each new node into an older one.
func populate(depth uint, n *node) {
	if depth == 0 {
		return
	}
	n.left = &node{}
	n.right = &node{}
	populate(depth-1, n.left)
	populate(depth-1, n.right)
}

// makeTree builds a tree bottom up: children first.
func makeTree(depth uint) *node {
	if depth == 0 {
		return &node{}
	}
	left := makeTree(depth - 1)
	right := makeTree(depth - 1)
	return &node{left: left, right: right}
}

func countNodes(n *node) uint64 {
	if n.left == nil {
		return 1
	}
	return 1 + countNodes(n.left) + countNodes(n.right)
}

func timeConstruction(depth uint) {
	iters := numIters(depth)
	for i := uint64(0); i < iters; i++ {
		t := &node{}
		populate(depth, t)
	}
	for i := uint64(0); i < iters; i++ {
		makeTree(depth)
	}
}

var sink *node

func gcbench() error {
	sink = makeTree(stretchTreeDepth)
	sink = nil
	longLived := &node{}
	populate(longLivedTreeDepth, longLived)
	array := make([]float64, arraySize)
	for i := 0; i < arraySize/2; i++ {
		array[i] = 1.0 / float64(i)
	}
	for d := uint(minTreeDepth); d <= maxTreeDepth; d += 2 {
		timeConstruction(d)
	}
	if n := countNodes(longLived); n != treeSize(longLivedTreeDepth) {
		return fmt.Errorf("the long-lived tree has %d nodes", n)
	}
	if array[1000] != 1.0/1000.0 {
		return fmt.Errorf("the long-lived array holds %v at 1000", array[1000])
	}
	return nil
}

func gcbenchMT(mutators int) error {
	errs := make([]error, mutators)
	var wg sync.WaitGroup
	for m := 0; m < mutators; m++ {
		wg.Add(1)
		go func(m int) {
			defer wg.Done()
			errs[m] = gcbench()
		}(m)
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func binaryTrees(maxDepth uint) error {
	if n := countNodes(makeTree(maxDepth + 1)); n != treeSize(maxDepth+1) {
		return fmt.Errorf("the stretch tree has %d nodes", n)
	}
	longLived := makeTree(maxDepth)
	for d := uint(minTreeDepth); d <= maxDepth; d += 2 {
		iterations := uint64(1) << (maxDepth - d + minTreeDepth)
		var nodes uint64
		for i := uint64(0); i < iterations; i++ {
			nodes += countNodes(makeTree(d))
		}
		if nodes != iterations*treeSize(d) {
			return fmt.Errorf("%d trees of depth %d have %d nodes", iterations, d, nodes)
		}
	}
	if n := countNodes(longLived); n != treeSize(maxDepth) {
		return fmt.Errorf("the long-lived tree has %d nodes", n)
	}
	return nil
}

func liveHeap(liveMB int) error {
	trees := (liveMB << 20) / (liveHeapBytesANode * int(treeSize(liveHeapTreeDepth)))
	if trees < 1 {
		trees = 1
	}
	spine := make([]*node, trees)
	for t := 0; t < trees*(liveHeapRounds+1); t++ {
		spine[t%trees] = makeTree(liveHeapTreeDepth)
	}
	for i, tree := range spine {
		if n := countNodes(tree); n != treeSize(liveHeapTreeDepth) {
			return fmt.Errorf("tree %d has %d nodes", i, n)
		}
	}
	return nil
}

// peakRSS is VmHWM from /proc/self/status, in bytes (0 if unreadable).
func peakRSS() uint64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			if len(f) >= 2 {
				kb, _ := strconv.ParseUint(f[1], 10, 64)
				return kb * 1024
			}
		}
	}
	return 0
}

// limitMiB is a memory limit in MiB for the JSON line, nil for none.
func limitMiB(limit int64) interface{} {
	if limit == math.MaxInt64 {
		return nil
	}
	return limit >> 20
}

func main() {
	workload := flag.String("workload", "gcbench", "gcbench, gcbench-mt2, gcbench-mt4, binary-trees or live-heap")
	runs := flag.Int("runs", 5, "timed runs")
	depth := flag.Uint("depth", 21, "binary-trees: depth of the long-lived tree")
	liveMB := flag.Int("live-mb", 100, "live-heap: megabytes of live data")
	asJSON := flag.Bool("json", false, "print only the JSON line")
	gcPercent := flag.Int("gc-percent", 100, "the collector's GOGC (debug.SetGCPercent); without it, GOGC from the environment")
	limitMB := flag.Int64("memory-limit-mb", 0, "soft memory limit in MiB (debug.SetMemoryLimit); without it, GOMEMLIMIT from the environment")
	flag.Parse()
	flag.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "gc-percent":
			debug.SetGCPercent(*gcPercent)
		case "memory-limit-mb":
			if *limitMB <= 0 {
				fmt.Fprintln(os.Stderr, "gcbench: -memory-limit-mb must be positive")
				os.Exit(2)
			}
			debug.SetMemoryLimit(*limitMB << 20)
		}
	})
	// The settings in force, for the JSON line.
	percent := debug.SetGCPercent(100)
	debug.SetGCPercent(percent)
	limit := debug.SetMemoryLimit(-1)

	var body func() error
	switch *workload {
	case "gcbench":
		body = gcbench
	case "gcbench-mt2":
		body = func() error { return gcbenchMT(2) }
	case "gcbench-mt4":
		body = func() error { return gcbenchMT(4) }
	case "binary-trees":
		body = func() error { return binaryTrees(*depth) }
	case "live-heap":
		body = func() error { return liveHeap(*liveMB) }
	default:
		fmt.Fprintf(os.Stderr, "gcbench: unknown workload %q\n", *workload)
		os.Exit(2)
	}
	if *runs < 1 {
		fmt.Fprintln(os.Stderr, "gcbench: -runs must be at least 1")
		os.Exit(2)
	}

	times := make([]float64, 0, *runs)
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var pauseMax time.Duration
	for r := 1; r <= *runs; r++ {
		var ms0 runtime.MemStats
		runtime.ReadMemStats(&ms0)
		start := time.Now()
		if err := body(); err != nil {
			fmt.Fprintf(os.Stderr, "gcbench: run %d failed: %v\n", r, err)
			os.Exit(1)
		}
		elapsed := time.Since(start)
		var ms1 runtime.MemStats
		runtime.ReadMemStats(&ms1)
		for i := ms0.NumGC; i < ms1.NumGC; i++ {
			if p := time.Duration(ms1.PauseNs[(i+255)%256]); p > pauseMax {
				pauseMax = p
			}
		}
		ms := float64(elapsed.Nanoseconds()) / 1e6
		times = append(times, ms)
		if !*asJSON {
			fmt.Printf("go run %d/%d: %9.1f ms, %3d collections\n", r, *runs, ms, ms1.NumGC-ms0.NumGC)
		}
	}
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	sorted := append([]float64(nil), times...)
	sort.Float64s(sorted)
	median := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		median = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	out, _ := json.Marshal(map[string]interface{}{
		"bench":           *workload,
		"impl":            "go",
		"go_version":      runtime.Version(),
		"gomaxprocs":      runtime.GOMAXPROCS(0),
		"gc_percent":      percent,
		"memory_limit_mb": limitMiB(limit),
		"runs":            times,
		"median_ms":       median,
		"collections":     (after.NumGC - before.NumGC) / uint32(*runs),
		"pause_max_us":    float64(pauseMax.Nanoseconds()) / 1e3,
		"peak_rss_bytes":  peakRSS(),
	})
	fmt.Println(string(out))
}
