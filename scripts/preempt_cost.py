#!/usr/bin/env python3
"""What asynchronous preemption costs the benchmarks of `defergc bench
--all`: each benchmark with it on (the default) and off
(GODEBUG=asyncpreemptoff=1), alternating run by run so both columns see
the same machine, with the load average before and after.

    scripts/preempt_cost.py [ROUNDS] [--release-binary PATH]

Each round runs `defergc bench NAME --runs 3 --json` once per setting
(the order flips every round); the figure per setting is the median of
the rounds' medians. sysmon runs in both columns (it cannot be turned
off): the difference is the signals and what they preempt.
"""

import json
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUNDS = int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 3
EXE = os.path.join(ROOT, "target", "release", "defergc")
if "--release-binary" in sys.argv:
    EXE = sys.argv[sys.argv.index("--release-binary") + 1]

# `bench --all`'s rows, less the cold one (a process a run) and `preempt`
# (which needs preemption on).
NAMES = [
    "spawn-panic", "spawn-panic-rust", "million", "yield-pingpong",
    "defer-stress-goroutine", "chan-pingpong", "chan-buffered-1x1",
    "chan-buffered-4x4", "sieve", "select4", "select4-rust", "mutex-100k",
    "panic-recover", "panic-recover-rust", "panic-recover-rust-try",
    "finalizers-1m", "timers", "skynet", "wg-fanout", "syscall",
]


def load():
    with open("/proc/loadavg") as f:
        return " ".join(f.read().split()[:3])


def once(name, off):
    env = dict(os.environ)
    if off:
        env["GODEBUG"] = "asyncpreemptoff=1"
    else:
        env.pop("GODEBUG", None)
    out = subprocess.run([EXE, "bench", name, "--runs", "3", "--json"], env=env,
                         stdout=subprocess.PIPE, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])["median"]


def median(v):
    v = sorted(v)
    return v[len(v) // 2]


def main():
    if not os.path.exists(EXE):
        sys.exit(f"preempt_cost: build it first: cargo build --release ({EXE})")
    before = load()
    print(f"{'bench':<24} {'on':>12} {'off':>12} {'on/off':>8}")
    ratios = []
    for name in NAMES:
        on, off = [], []
        for r in range(ROUNDS):
            for setting in ((False, True) if r % 2 == 0 else (True, False)):
                (off if setting else on).append(once(name, setting))
        ratio = median(on) / median(off)
        ratios.append(ratio)
        print(f"{name:<24} {median(on):>12.3f} {median(off):>12.3f} {ratio:>8.3f}", flush=True)
    print(f"median on/off over {len(NAMES)} benchmarks: {median(ratios):.3f}; "
          f"load average {before} before, {load()} after")


main()
