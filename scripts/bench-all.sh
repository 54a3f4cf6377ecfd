#!/usr/bin/env bash
# Reruns the README's performance table and prints it in the README's
# form (see scripts/bench_all.py). --quick: fewer runs, for a look.
set -euo pipefail
cd "$(dirname "$0")/.."
exec python3 scripts/bench_all.py "$@"
