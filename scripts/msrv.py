#!/usr/bin/env python3
"""Checks each workspace crate's declared rust-version against the
rust-versions of the dependencies Cargo.lock resolves for it (normal and
build dependencies, under every feature): the declared one must be at
least the highest of theirs. Our own code is checked against it by
clippy's incompatible_msrv lint, which CI runs with -D warnings.

    scripts/msrv.py          check (exit 1 on a mismatch)
    scripts/msrv.py --show   print each crate's floor and which dependency sets it
"""
import json
import subprocess
import sys


def version_key(v):
    # "1.88" and "1.88.0" are the same version.
    parts = [int(x) for x in (v or "0").split(".")]
    return tuple(parts + [0] * (3 - len(parts)))


def main():
    meta = json.loads(subprocess.check_output(
        ["cargo", "metadata", "--format-version", "1", "--all-features", "--locked"]))
    pkgs = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    ok = True
    for member in meta["workspace_members"]:
        seen, stack = set(), [member]
        while stack:
            pid = stack.pop()
            for dep in nodes[pid]["deps"]:
                # Dev-dependencies, and those only a `--cfg loom` build
                # (the model checker's, CI's loom step) uses, do not count.
                kinds = {k["kind"] for k in dep["dep_kinds"]
                         if k.get("target") != "cfg(loom)"}
                if kinds <= {"dev"}:
                    continue
                if dep["pkg"] not in seen:
                    seen.add(dep["pkg"])
                    stack.append(dep["pkg"])
        floor, why = "0", None
        for pid in seen:
            rv = pkgs[pid].get("rust_version")
            if rv and version_key(rv) > version_key(floor):
                floor, why = rv, pkgs[pid]["name"] + " " + pkgs[pid]["version"]
        declared = pkgs[member].get("rust_version")
        name = pkgs[member]["name"]
        line = f"{name}: declares {declared}, dependencies need {floor} ({why})"
        if "--show" in sys.argv or version_key(declared) < version_key(floor):
            print(line)
        if version_key(declared) < version_key(floor):
            ok = False
    if not ok:
        print("msrv: a crate declares a rust-version below what its dependencies need",
              file=sys.stderr)
        sys.exit(1)


main()
