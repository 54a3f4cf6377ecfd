#!/usr/bin/env python3
"""Reruns every figure of the README's performance table and prints the
table in the README's form, with the date, the machine and its load.

    scripts/bench-all.sh            # everything (about 20 minutes)
    scripts/bench-all.sh --quick    # fewer runs, for a look

Each row runs the command the README names (the figure is its median),
so a README figure that no longer reproduces shows up as a changed row.
Rows whose tool is missing (Go for the Go columns) say so instead of a
figure.
"""

import datetime
import json
import os
import re
import shutil
import subprocess
import sys

QUICK = "--quick" in sys.argv
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def sh(cmd, env=None):
    """Runs a shell command at the repository root; its stdout (stderr is
    passed through, so progress shows)."""
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    sys.stderr.write(f"$ {cmd}\n")
    out = subprocess.run(cmd, shell=True, cwd=ROOT, env=full_env,
                         stdout=subprocess.PIPE, text=True)
    if out.returncode != 0:
        sys.stderr.write(f"bench-all: `{cmd}` failed ({out.returncode})\n")
    return out.stdout


UNITS = {"ps": 1e-3, "ns": 1.0, "µs": 1e3, "us": 1e3, "ms": 1e6, "s": 1e9}


def criterion(bench, names, features=""):
    """Median estimates (ns) of criterion benchmarks, by name."""
    pattern = "|".join(re.escape(n) for n in names)
    extra = "--warm-up-time 1 --measurement-time 2" if QUICK else ""
    out = sh(f"cargo bench -q {features} --bench {bench} -- --noplot {extra} '^({pattern})$'")
    got = {}
    current = None
    for line in out.splitlines():
        m = re.match(r"^(\S.*?)\s+time:\s+\[(.*)\]", line)
        if m:
            current, spans = m.group(1).strip(), m.group(2)
        else:
            m = re.match(r"^(\S.*)$", line)
            if m and "time:" not in line:
                current = m.group(1).strip()
            m2 = re.match(r"^\s+time:\s+\[(.*)\]", line)
            if not m2 or current is None:
                continue
            spans = m2.group(1)
        parts = spans.split()
        if len(parts) >= 4:
            got[current] = float(parts[2]) * UNITS.get(parts[3], 1.0)
    return got


def ns(v):
    if v is None:
        return "n/a"
    if v >= 1000:
        return f"{v / 1000:.2f} µs"
    return f"{v:.1f} ns"


def json_lines(text):
    lines = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                lines.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return lines


def last_json(text):
    lines = json_lines(text)
    return lines[-1] if lines else {}


def machine():
    model = "unknown CPU"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = 0
    try:
        for line in open("/proc/meminfo"):
            if line.startswith("MemTotal:"):
                mem = int(line.split()[1]) // (1024 * 1024)
    except OSError:
        pass
    load = os.getloadavg()
    return (f"{datetime.date.today().isoformat()}, {model}, {os.cpu_count()} cores, "
            f"{mem} GiB; load average {load[0]:.1f} {load[1]:.1f} {load[2]:.1f} at the start")


def main():
    head = machine()
    runs = 3 if QUICK else 9
    have_go = shutil.which("go") is not None
    go_flag = " --go" if have_go else ""
    sh("cargo build --release --workspace")
    rows = []

    def row(what, command, figure, target):
        command = command if command == "the same" else f"`{command}`"
        rows.append(f"| {what} | {command} | {figure} | {target} |")

    a = criterion("alloc", ["alloc(32) main thread", "alloc(32) second thread"])
    row("`gc::alloc(32)`, one thread", "cargo bench --bench alloc",
        ns(a.get("alloc(32) main thread")), "≤ 15 ns")
    row("`gc::alloc(32)`, a second auto-registered thread", "cargo bench --bench alloc",
        ns(a.get("alloc(32) second thread")), "≤ 30 ns")

    g = sh("cargo bench -q -p defergc-cli --bench gcbench", env={"GCBENCH_RUNS": str(runs)})
    m = re.search(r"Rust/C ([0-9.]+)", g)
    row("GCBench through the crate vs the same C program", "cargo bench -p defergc-cli --bench gcbench",
        f"{m.group(1)}× C" if m else "n/a", "≤ 1.1×")

    t = criterion("tls", ["tls/get", "tls/set", "tls/first_touch_on_new_thread"])
    row("tls `get` / `set`", "cargo bench --bench tls",
        f"{ns(t.get('tls/get'))} / {ns(t.get('tls/set'))}", "≤ 3 ns")
    row("tls first touch on a new thread", "cargo bench --bench tls",
        ns(t.get("tls/first_touch_on_new_thread")), "≤ 2 µs")

    d = criterion("defer", ["defer/one_frame_one_defer"])
    row("one frame, one defer", "cargo bench --bench defer",
        ns(d.get("defer/one_frame_one_defer")), "≤ 10 ns")

    for capture, target in (("object", "≤ 50 ms, ≤ 96 MB"), ("int", "≤ 10 ms")):
        flag = "" if capture == "object" else " --capture int"
        warm = last_json(sh(f"cargo run -q --release -- stress{flag} --runs 7 --json"))
        cold = last_json(sh(f"cargo run -q --release -- stress{flag} --runs 1 --json"))
        what = ("1,000,000 defers capturing a fresh GC object" if capture == "object"
                else "1,000,000 defers capturing an integer")
        fig = (f"{warm.get('elapsed_ms', 0):.1f} ms median ({cold.get('elapsed_ms', 0):.0f} ms "
               f"in a cold process), peak RSS {warm.get('peak_rss_bytes', 0) / 1e6:.0f} MB")
        row(what, f"cargo run --release --{flag} --runs 7", fig, target)

    c = sh("cargo bench -q -p defergc-cli --bench c_stress")
    m = re.search(r"C/Rust ([0-9.]+)", c)
    row("the same million defers from C vs the Rust API", "cargo bench -p defergc-cli --bench c_stress",
        f"{m.group(1)}×" if m else "n/a", "≤ 1.5×")

    p = criterion("precise", ["precise/alloc_small", "precise/push_root_pop", "precise/chase_field",
                              "precise/mark_tree/top_down", "precise/mark_tree/bottom_up"],
                  "--features precise")
    row("precise `alloc` (small struct)", "cargo bench --features precise --bench precise",
        ns(p.get("precise/alloc_small")), "≤ 20 ns")
    row("precise `push_frame` + `root` + `pop_frame`", "cargo bench --features precise --bench precise",
        ns(p.get("precise/push_root_pop")), "≤ 5 ns")
    row("precise `load_field` chasing a list, per hop", "cargo bench --features precise --bench precise",
        ns(p.get("precise/chase_field")), "—")
    # A whole collection of a rooted tree of 2^18 - 1 nodes, per node.
    def per_node(name):
        return p[name] / ((1 << 18) - 1) if name in p else None
    row("precise collection marking a tree of 2^18 nodes, per node",
        "cargo bench --features precise --bench precise",
        f"{ns(per_node('precise/mark_tree/top_down'))} built top down, "
        f"{ns(per_node('precise/mark_tree/bottom_up'))} bottom up", "—")

    sh("cargo build -q --release --features precise -p defergc-cli")

    def collector_workload(args):
        """Runs `gcbench ARGS` (with Go's program when Go is here): the
        command, our JSON line and Go's (None without Go)."""
        cmd = f"gcbench --backend both {args}{go_flag}"
        lines = json_lines(sh(f"./target/release/defergc {cmd} --json"))
        ours = next((l for l in lines if l.get("backend") == "both"), {})
        go = next((l for l in lines if l.get("impl") == "go"), None)
        return f"cargo run --release --features precise -- {cmd}", ours, go

    def go_part(go, seconds):
        if not go:
            return ""
        t = (f"{go.get('median_ms', 0) / 1000:.2f} s" if seconds
             else f"{go.get('median_ms', 0):.0f} ms")
        return f", Go {t} and {go.get('peak_rss_bytes', 0) / 1e6:.0f} MB RSS"

    cmd, both, go = collector_workload(f"--runs {runs}")
    row("GCBench, precise (concurrent) / bdwgc, taking turns in one process", cmd,
        f"{both.get('ratio', 0):.2f}× (bdwgc {both.get('bdwgc_median_ms', 0):.0f} ms, precise "
        f"{both.get('precise_median_ms', 0):.0f} ms; peak heap {both.get('bdwgc_peak_heap_bytes', 0) / 2**20:.0f} "
        f"/ {both.get('precise_peak_heap_bytes', 0) / 2**20:.0f} MiB{go_part(go, False)})", "≤ 0.9×")
    row("precise mutator pauses on GCBench", "the same",
        f"max {both.get('precise_pause_max_us', 0):.0f} µs, p99 {both.get('precise_pause_p99_us', 0):.1f} µs, "
        f"{both.get('precise_pause_count', 0):.0f} in {runs} runs (bdwgc max "
        f"{both.get('bdwgc_pause_max_us', 0) / 1000:.1f} ms"
        + (f", Go {go.get('pause_max_us', 0):.0f} µs" if go else "") + ")",
        "max ≤ 100 µs")
    row("GCBench processor time (every thread's), precise / bdwgc", "the same",
        f"{both.get('cpu_ratio', 0):.2f}× (bdwgc {both.get('bdwgc_cpu_ms', 0):.0f} ms, precise "
        f"{both.get('precise_cpu_ms', 0):.0f} ms)", "—")
    cmd, live, go = collector_workload("--workload live-heap --runs 3")
    row("precise mutator pauses, 100 MB live heap", cmd,
        f"max {live.get('precise_pause_max_us', 0):.0f} µs (bdwgc stops for "
        f"{live.get('bdwgc_pause_max_us', 0) / 1000:.0f} ms); peak heap "
        f"{live.get('bdwgc_peak_heap_bytes', 0) / 2**20:.0f} / {live.get('precise_peak_heap_bytes', 0) / 2**20:.0f} MiB"
        f"{go_part(go, False)}",
        "max ≤ 1 ms")
    cmd, lim, go = collector_workload("--workload live-heap --runs 3 --memory-limit-mb 150")
    row("100 MB live heap at GOGC=100 under a 150 MiB soft memory limit (Go's GOMEMLIMIT)", cmd,
        f"precise peak heap {lim.get('precise_peak_heap_bytes', 0) / 2**20:.1f} MiB "
        f"(bdwgc, which has no such limit, {lim.get('bdwgc_peak_heap_bytes', 0) / 2**20:.0f} MiB); "
        f"{lim.get('ratio', 0):.2f}× bdwgc's time (precise {lim.get('precise_median_ms', 0):.0f} ms)"
        f"{go_part(go, False)}",
        "≤ 1.5× live")
    # The other collector workloads: their ratio to bdwgc, and Go's time
    # and peak RSS from the same command when Go is here.
    for workload, wruns, what in (("binary-trees", 3, "binary-trees (depth 21)"),
                                  ("gcbench-mt2", 5, "GCBench on 2 mutator threads"),
                                  ("gcbench-mt4", 5, "GCBench on 4 mutator threads")):
        cmd, ours, go = collector_workload(f"--workload {workload} --runs {wruns}")
        row(f"{what}, precise / bdwgc", cmd,
            f"{ours.get('ratio', 0):.2f}× (bdwgc {ours.get('bdwgc_median_ms', 0) / 1000:.2f} s, precise "
            f"{ours.get('precise_median_ms', 0) / 1000:.2f} s; peak heap "
            f"{ours.get('bdwgc_peak_heap_bytes', 0) / 2**20:.0f} / {ours.get('precise_peak_heap_bytes', 0) / 2**20:.0f} MiB"
            f"{go_part(go, True)})", "—")

    # Goroutines, channels and panics, each beside Go's program.
    sh("cargo build -q --release -p defergc-cli")
    lines = json_lines(sh(f"./target/release/defergc bench --all --runs {runs} --json{go_flag}"))
    ours = {l["bench"]: l for l in lines if l.get("impl") == "defergc"}
    theirs = {l["bench"]: l for l in lines if l.get("impl") == "go"}
    def fig(value, unit):
        # Three significant figures, never in exponent form.
        whole = len(str(int(abs(value)))) if abs(value) >= 1 else 0
        digits = max(0, 3 - whole)
        return f"{value:,.{digits}f} {unit}"

    go_rows = []
    for name, l in ours.items():
        # The Rust-API variants compare with the compiled-code program.
        go_name = name.removesuffix("-try").removesuffix("-rust")
        g = theirs.get(go_name)
        go_fig = fig(g['median'], g['unit']) if g else ("Go not installed" if not have_go else "n/a")
        extra = ""
        if name == "million":
            extra = f", {l.get('bytes_per_goroutine', 0):.0f} B a goroutine"
            if g:
                go_fig += f", {g.get('bytes_per_goroutine', 0):.0f} B"
        if name == "million-heap":
            def phases(x):
                return (f", spawn+park {x.get('spawn_park_s', 0):.2f} s, collection "
                        f"{x.get('gc_ms', 0):.0f} ms, peak {int(x.get('peak_rss_bytes', 0)) >> 20} MiB")
            extra = phases(l)
            if g:
                go_fig += phases(g)
        load = f"{l.get('load_before', '?')}→{l.get('load_after', '?')}"
        cold = "cold, " if l.get("cold") else ""
        go_rows.append(f"| `{name}` | {fig(l['median'], l['unit'])}{extra} | {go_fig} | {cold}{load} |")

    print(f"Measured {head}; release builds, medians.\n")
    print("| what | command | figure | target |")
    print("| --- | --- | --- | --- |")
    print("\n".join(rows))
    print()
    print(f"`cargo run --release -- bench --all --runs {runs} --go` (Go "
          f"{sh('go env GOVERSION').strip() if have_go else 'not installed'}):\n")
    print("Go's program runs after each run of ours (its own process, its own")
    print("warm-up), so a row's two columns see the same machine; cold rows run")
    print("every run in a fresh process, without a warm-up, on both sides.\n")
    print("| benchmark | defergc | Go, same run | load average (1 min) |")
    print("| --- | --- | --- | --- |")
    print("\n".join(go_rows))


if __name__ == "__main__":
    main()
