# Helpers for .ci/run (sourced): timed steps, skips, and installing what a
# check needs on a fresh machine.

ci_start=$(date +%s)
step_name=""
step_start=0
declare -a ci_times=()
declare -a ci_skips=()

# Ends the running step: records and prints its time.
end_step() {
  if [ -n "$step_name" ]; then
    local took=$(( $(date +%s) - step_start ))
    ci_times+=("$(printf '%5ds  %s' "$took" "$step_name")")
    printf '== %s: %ds\n' "$step_name" "$took"
  fi
  step_name=""
}

# Starts a step named "$*".
step() {
  end_step
  step_name="$*"
  step_start=$(date +%s)
  printf '\n== %s\n' "$step_name"
}

# Records that the running step skipped its check, and why.
skip() {
  ci_skips+=("$step_name: $*")
  echo "skipped: $*"
}

# Prints every step's time, the skips, and the total.
finish() {
  end_step
  printf '\n== step times\n'
  printf '%s\n' "${ci_times[@]}"
  if [ "${#ci_skips[@]}" -gt 0 ]; then
    printf '\n== skipped\n'
    printf '%s\n' "${ci_skips[@]}"
  fi
  printf '\n== CI passed in %ds\n' "$(( $(date +%s) - ci_start ))"
}

# Installs Debian packages if this is root on a machine with apt-get;
# fails (returns non-zero, prints why) otherwise.
apt_updated=""
apt_install() {
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
    echo "cannot install $*: not root, or no apt-get"
    return 1
  fi
  echo "installing $*"
  if [ -z "$apt_updated" ]; then
    timeout 300 apt-get update -qq || { echo "apt-get update failed"; return 1; }
    apt_updated=1
  fi
  DEBIAN_FRONTEND=noninteractive timeout 600 apt-get install -y -qq "$@" >/dev/null \
    || { echo "apt-get install $* failed"; return 1; }
}

# Whether the shared library bindgen loads (libclang.so, as clang-sys looks
# for it: libclang.so, libclang-N.so, libclang.so.N, libclang-N.so.N) is
# installed. libclang-cpp is a different library.
have_libclang() {
  local dirs=(/usr/lib /usr/lib64 /usr/local/lib /usr/lib/llvm-*/lib /usr/lib/*-linux-gnu)
  [ -n "${LIBCLANG_PATH:-}" ] && dirs=("$LIBCLANG_PATH" "${dirs[@]}")
  find "${dirs[@]}" -maxdepth 1 \( -name 'libclang.so' -o -name 'libclang.so.*' \
    -o -name 'libclang-[0-9]*.so' -o -name 'libclang-[0-9]*.so.*' \) 2>/dev/null | grep -q .
}
