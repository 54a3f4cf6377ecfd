#!/usr/bin/env bash
# Regenerates the bdwgc bindings with bindgen, or checks that the committed
# ones match the headers.
#
#   scripts/bindings.sh check    fail if defergc-sys/src/bindings.rs differs (default)
#   scripts/bindings.sh update   overwrite defergc-sys/src/bindings.rs
#
# Needs libclang: apt-get install libclang-dev
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}
committed=defergc-sys/src/bindings.rs
out_dir=$(cargo build -p defergc-sys --features bindgen --message-format=json \
  | grep '"reason":"build-script-executed"' \
  | grep '"package_id":"[^"]*defergc-sys' \
  | sed 's/.*"out_dir":"\([^"]*\)".*/\1/' | tail -n 1)
generated="$out_dir/sys.rs"
[ -f "$generated" ] || { echo "bindings.sh: no generated bindings at $generated" >&2; exit 1; }
case "$mode" in
  update)
    cp "$generated" "$committed"
    echo "bindings.sh: $committed updated"
    ;;
  check)
    if ! diff -u "$committed" "$generated"; then
      echo "bindings.sh: $committed drifted from defergc-sys/vendor/bdwgc/include; run scripts/bindings.sh update" >&2
      exit 1
    fi
    echo "bindings.sh: $committed matches the headers"
    ;;
  *) echo "usage: $0 [check|update]" >&2; exit 2 ;;
esac
