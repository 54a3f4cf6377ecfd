#!/usr/bin/env bash
# Regenerates the bdwgc bindings with bindgen, or checks that the committed
# ones match the headers.
#
#   scripts/bindings.sh check    fail if src/gc/sys.rs differs (default)
#   scripts/bindings.sh update   overwrite src/gc/sys.rs
#
# Needs libclang: apt-get install libclang-dev
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-check}
out_dir=$(cargo build --lib --features bindgen --message-format=json \
  | grep '"reason":"build-script-executed"' \
  | grep '"package_id":"[^"]*defergc' \
  | sed 's/.*"out_dir":"\([^"]*\)".*/\1/' | tail -n 1)
generated="$out_dir/sys.rs"
[ -f "$generated" ] || { echo "bindings.sh: no generated bindings at $generated" >&2; exit 1; }
case "$mode" in
  update)
    cp "$generated" src/gc/sys.rs
    echo "bindings.sh: src/gc/sys.rs updated"
    ;;
  check)
    if ! diff -u src/gc/sys.rs "$generated"; then
      echo "bindings.sh: src/gc/sys.rs drifted from vendor/bdwgc/include; run scripts/bindings.sh update" >&2
      exit 1
    fi
    echo "bindings.sh: src/gc/sys.rs matches the headers"
    ;;
  *) echo "usage: $0 [check|update]" >&2; exit 2 ;;
esac
