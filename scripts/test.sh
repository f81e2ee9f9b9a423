#!/usr/bin/env bash
# `make test`: rustfmt, the structure check, clippy, rustdoc, the embedded builds and every unit, integration and doc
# test, one after the other; the loom models beside them, from the start, in the background
# (their build is small, and running them keeps one core busy for minutes while the other
# builds and runs the rest). Stops at the first failing step (and then stops the models).
# Ends with each step's time, the tests run by kind (scripts/test-summary.py) and the skips.
#
# TARGET_DIR: where cargo builds (the Makefile passes its own).
set -uo pipefail
cd "$(dirname "$0")/.."
target=${TARGET_DIR:-$PWD/target}
mkdir -p "$target"
make=(make --no-print-directory)
start=$(date +%s)
steps=()

# The loom models, in their own process group (so a failure elsewhere can stop them all).
loom_out=$target/test-loom.out
rm -f "$target/test-loom.rc" "$target/test-loom.log"
set -m
(
  t0=$(date +%s)
  "${make[@]}" loom LOOM_SKIP="$("${make[@]}" -s print-loom-ci-only)" >"$loom_out" 2>&1
  rc=$?
  echo "$rc $(($(date +%s) - t0))" >"$target/test-loom.rc"
) &
loom_pid=$!
set +m

finish() { # status
  local rc=$1
  if [ "$rc" -ne 0 ] && kill -0 "$loom_pid" 2>/dev/null; then
    kill -- -"$loom_pid" 2>/dev/null
    wait "$loom_pid" 2>/dev/null
  fi
  echo
  echo "make test: step times (wall, s)"
  for s in "${steps[@]}"; do echo "  $s"; done
  echo "  total                  $(($(date +%s) - start))"
  exit "$rc"
}

step() { # name, command...
  local name=$1 t0 rc
  shift
  t0=$(date +%s)
  echo "::: make test: $name"
  "$@"
  rc=$?
  steps+=("$(printf '%-22s %4d' "$name" $(($(date +%s) - t0)))")
  if [ $rc -ne 0 ]; then
    echo "make test: $name FAILED"
    finish $rc
  fi
}

step fmt "${make[@]}" fmt
step structure "${make[@]}" structure
step clippy "${make[@]}" clippy
step rustdoc "${make[@]}" rustdoc
step embedded "${make[@]}" embedded
step "unit+integration+doc" "${make[@]}" unit

echo "::: make test: loom models (started with the first step; waiting for them)"
t0=$(date +%s)
wait "$loom_pid"
cat "$loom_out"
read -r loom_rc loom_time <"$target/test-loom.rc" || { loom_rc=1; loom_time=0; }
steps+=("$(printf '%-22s %4d  (beside the steps above; %d s waited for at the end)' loom "$loom_time" $(($(date +%s) - t0)))")
if [ "$loom_rc" -ne 0 ]; then
  echo "make test: loom FAILED"
  finish "$loom_rc"
fi

echo
echo "make test: tests run"
scripts/test-summary.py --skips "$target/test-skips.log" unit="$target/test-unit.log" loom="$target/test-loom.log"
rc=$?
[ $rc -eq 0 ] && echo "make test: rustfmt, clippy, rustdoc, embedded builds, unit/integration/doc tests and loom models all passed"
finish $rc
