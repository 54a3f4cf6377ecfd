#!/usr/bin/env python3
"""The cost of a CPU profile: benchmark rows of `defergc bench` run with
and without `--cpu` (100 Hz), alternated in fresh processes, each pair
back to back; prints each row's median with and without, the overhead of
the medians, and the load average before and after.

    cargo build --release -p defergc-cli
    python3 scripts/cpuprof_overhead.py [--pairs N] [--runs R] [ROW...]
"""
import argparse
import json
import os
import statistics
import subprocess
import tempfile

ROWS = ["chan-pingpong", "select4", "mutex-100k", "spawn-panic", "panic-recover",
        "yield-pingpong", "wg-fanout"]


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def run(exe, row, runs, cpu):
    cmd = [exe, "bench", row, "--runs", str(runs), "--json"]
    if cpu:
        cmd += ["--cpu", cpu]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    line = [l for l in out.splitlines() if l.startswith("{")][0]
    return json.loads(line)["median"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pairs", type=int, default=5)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--exe", default="target/release/defergc")
    ap.add_argument("rows", nargs="*", default=ROWS)
    args = ap.parse_args()
    print(f"load average before: {loadavg()}")
    ratios = []
    with tempfile.TemporaryDirectory() as tmp:
        cpu = os.path.join(tmp, "cpu.pprof")
        for row in args.rows:
            without, with_ = [], []
            for i in range(args.pairs):
                # Alternate which goes first, so neither always runs on a
                # machine the other just warmed.
                order = [False, True] if i % 2 == 0 else [True, False]
                for profiled in order:
                    v = run(args.exe, row, args.runs, cpu if profiled else None)
                    (with_ if profiled else without).append(v)
            a, b = statistics.median(without), statistics.median(with_)
            ratios.append(b / a)
            print(f"{row:16} without {a:12.3f}  with {b:12.3f}  overhead {100 * (b / a - 1):+6.1f}%")
    print(f"median overhead over the rows: {100 * (statistics.median(ratios) - 1):+.1f}%")
    print(f"load average after: {loadavg()}")


if __name__ == "__main__":
    main()
