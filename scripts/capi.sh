#!/usr/bin/env bash
# Builds or installs the C library with cargo-c: libdefergc.so (with a
# SONAME), libdefergc.a, include/defergc.h and defergc.pc.
#
#   scripts/capi.sh build                release build into $CAPI_DIR/stage/target
#   scripts/capi.sh install PREFIX       cargo cinstall --prefix PREFIX
#
# Needs cargo-c (apt-get install cargo-c). Debian's cargo-c is built on an
# older cargo that cannot read this workspace (its command-line crate's
# dependencies use the 2024 edition) nor reach crates.io's sparse index,
# so the library and defergc-sys are staged into $CAPI_DIR/stage (default
# target/capi) without the workspace, dev-dependencies and the bindgen
# option, with their dependencies vendored next to them.
set -euo pipefail
cd "$(dirname "$0")/.."
mode=${1:-build}
capi_dir=${CAPI_DIR:-$PWD/target/capi}
stage=$capi_dir/stage

command -v cargo-cbuild >/dev/null || {
  echo "capi.sh: cargo-c is not installed (apt-get install cargo-c)" >&2
  exit 3
}

mkdir -p "$stage"
rm -rf "$stage/src" "$stage/include" "$stage/defergc-sys"
git ls-files -z --cached --others --exclude-standard Cargo.toml build.rs README.md LICENSE-MIT LICENSE-APACHE src include defergc-sys \
  | xargs -0 -I{} cp -p --parents {} "$stage"
python3 - "$stage" <<'PY'
import re, sys
stage = sys.argv[1]

def strip(path, sections, drop_lines=()):
    out, skip = [], False
    for line in open(path).read().splitlines(keepends=True):
        m = re.match(r'^\[+([^\]]+)\]+\s*$', line)
        if m:
            name = m.group(1)
            skip = any(name == s or name.startswith(s + '.') for s in sections)
        if not skip and not any(line.startswith(d) for d in drop_lines):
            out.append(line)
    open(path, 'w').write(''.join(out))

strip(f'{stage}/Cargo.toml', ['workspace', 'dev-dependencies', 'bench', 'target', 'lints'])
with open(f'{stage}/Cargo.toml', 'a') as f:
    f.write('\n[workspace]\n')
strip(f'{stage}/defergc-sys/Cargo.toml', ['lints'], drop_lines=('bindgen',))
PY
cd "$stage"
if [ ! -f .cargo/config.toml ] || [ Cargo.toml -nt .cargo/config.toml ]; then
  rm -rf vendor-deps .cargo
  # That cargo cannot read 2024-edition manifests either: backtrace 0.3.76
  # is the newest whose dependencies are all 2021 or older.
  rm -f Cargo.lock
  cargo --offline update -q -p backtrace --precise 0.3.76 2>/dev/null \
    || cargo update -q -p backtrace --precise 0.3.76
  cargo --offline vendor -q vendor-deps >/dev/null 2>&1 || cargo vendor -q vendor-deps >/dev/null
  mkdir -p .cargo
  printf '[source.crates-io]\nreplace-with = "vendored"\n\n[source.vendored]\ndirectory = "vendor-deps"\n' \
    > .cargo/config.toml
fi
case "$mode" in
  build) cargo cbuild --release --offline ;;
  install)
    prefix=${2:?usage: capi.sh install PREFIX}
    cargo cinstall --release --offline --prefix "$prefix" --libdir "$prefix/lib"
    ;;
  *) echo "usage: $0 build | install PREFIX" >&2; exit 2 ;;
esac
