#!/usr/bin/env python3
"""What an execution trace costs, ours beside Go's: each benchmark row of
`defergc bench` run untraced and traced (`DEFERGC_TRACE=FILE`), and the
same row of the Go program (`benches/go/gobench`) untraced and traced
(`-trace FILE`, runtime/trace), in fresh processes, the four runs of a
round back to back and the order turned each round; prints each row's
medians and the cost of tracing for each runtime (traced median over
untraced median), and the load average before and after.

    cargo build --release -p defergc-cli
    python3 scripts/trace_cost.py [--rounds N] [--runs R] [ROW...]

Needs Go (`apt-get install golang-go`) for Go's columns.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import tempfile

ROWS = ["yield-pingpong", "chan-pingpong", "chan-buffered-1x1", "select4",
        "mutex-100k", "spawn-panic", "panic-recover", "wg-fanout", "timers"]


def loadavg():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def median_of(out):
    line = [l for l in out.splitlines() if l.startswith("{")][0]
    return json.loads(line)["median"]


def ours(exe, row, runs, trace):
    env = dict(os.environ)
    env.pop("DEFERGC_TRACE", None)
    if trace:
        env["DEFERGC_TRACE"] = trace
    cmd = [exe, "bench", row, "--runs", str(runs), "--json"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, env=env).stdout
    return median_of(out)


def go(exe, row, runs, trace):
    cmd = [exe, "-bench", row, "-runs", str(runs), "-json"]
    if trace:
        cmd += ["-trace", trace]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return median_of(out)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--exe", default="target/release/defergc")
    ap.add_argument("rows", nargs="*", default=ROWS)
    args = ap.parse_args()
    if shutil.which("go") is None:
        raise SystemExit("trace_cost: Go is not installed (apt-get install golang-go)")
    print(f"load average before: {loadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        gobench = os.path.join(tmp, "gobench")
        here = os.path.dirname(os.path.abspath(__file__))
        src = os.path.join(here, "..", "benches", "go", "gobench", "main.go")
        subprocess.run(["go", "build", "-o", gobench, src], check=True)
        trace = os.path.join(tmp, "trace")
        print(f"{'row':18} {'ours off':>10} {'traced':>10} {'cost':>7}   "
              f"{'Go off':>10} {'traced':>10} {'cost':>7}")
        for row in args.rows:
            cols = {k: [] for k in ("o", "O", "g", "G")}
            for i in range(args.rounds):
                order = ["o", "O", "g", "G"] if i % 2 == 0 else ["G", "g", "O", "o"]
                for k in order:
                    t = trace if k.isupper() else None
                    f = ours if k in "oO" else go
                    cols[k].append(f(args.exe if k in "oO" else gobench, row, args.runs, t))
                    if t and os.path.exists(t):
                        os.remove(t)
            m = {k: statistics.median(v) for k, v in cols.items()}
            print(f"{row:18} {m['o']:10.1f} {m['O']:10.1f} {m['O'] / m['o']:6.2f}x   "
                  f"{m['g']:10.1f} {m['G']:10.1f} {m['G'] / m['g']:6.2f}x", flush=True)
    print(f"load average after: {loadavg()}")


if __name__ == "__main__":
    main()
