#!/usr/bin/env bash
# Prints the median of every criterion benchmark under target/criterion
# (optionally only those whose id contains $1), in ns.
set -euo pipefail
cd "$(dirname "$0")/.."
filter=${1:-}
find target/criterion -path '*/new/estimates.json' | sort | while read -r f; do
  id=${f#target/criterion/}; id=${id%/new/estimates.json}
  case "$id" in *"$filter"*) ;; *) continue ;; esac
  median=$(python3 -c 'import json,sys; print("%.2f" % json.load(open(sys.argv[1]))["median"]["point_estimate"])' "$f")
  printf '%-48s median %12s ns\n' "$id" "$median"
done
