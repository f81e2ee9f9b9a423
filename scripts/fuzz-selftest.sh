#!/usr/bin/env bash
# The fuzz gate can fail: in a scratch copy of the repository (the committed tree; the
# checkout is not touched), `make fuzz-smoke` must fail
#   1. when a crashing input is planted: one fuzz target gets a failing assertion on inputs
#      starting with a marker, and its seed corpus a file holding that marker (libFuzzer runs the
#      seeds first): the output must name the target as failed and hold the assertion's message
#      and libFuzzer's dump of the input (so a build error quoting the planted line does not count);
#   2. when a fuzz target does not build;
#   3. when the fuzz crate has no target.
# Each case passes only if `make fuzz-smoke` exits non-zero and says why. The copy builds into
# the target folder `make fuzz-smoke` uses (target/fuzz of this checkout): the dependencies
# (libFuzzer's C++ among them) are built once for both, and cargo rebuilds whatever the copy's
# sources changed (a target built from the copy is rebuilt from the checkout's by the next
# `make fuzz-smoke`: its sources' paths differ).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
git -C "$root" archive HEAD | tar -x -C "$scratch"
export FUZZ_TARGET_DIR=$root/target/fuzz
target=decode
src=$scratch/fuzz/fuzz_targets/$target.rs
fail=0

expect_failure() { # case, what the output must contain (each of the lines given)
  local name=$1 out want
  shift
  if out=$(make -s -C "$scratch" fuzz-smoke FUZZ_SECONDS=5 2>&1); then
    echo "fuzz-selftest: $name: make fuzz-smoke PASSED — the gate cannot fail"
    echo "$out" | tail -20
    fail=1
    return
  fi
  for want in "$@"; do
    if ! grep -q -x -- "$want" <<<"$out"; then
      echo "fuzz-selftest: $name: make fuzz-smoke failed, but printed no line \"$want\":"
      echo "$out" | tail -20
      fail=1
      return
    fi
  done
  echo "fuzz-selftest: $name: make fuzz-smoke failed, as it must:"
  for want in "$@"; do echo "    $(grep -m1 -x -- "$want" <<<"$out" | cut -c1-110)"; done
}

# 1. A planted crash: the body of the target panics on the marker.
cp "$src" "$src.orig"
sed -i 's/^fuzz_target!(|data: &\[u8\]| {$/&\n    assert!(!data.starts_with(b"PLANTED-CRASH"), "planted crash");/' "$src"
grep -q PLANTED-CRASH "$src" || { echo "fuzz-selftest: could not plant the crash in $src"; exit 1; }
mkdir -p "$scratch/fuzz/seeds/$target"
printf 'PLANTED-CRASH' >"$scratch/fuzz/seeds/$target/planted"
expect_failure "a planted crashing input" "fuzz: target $target FAILED.*" "planted crash" "PLANTED-CRASH"
rm "$scratch/fuzz/seeds/$target/planted"
mv "$src.orig" "$src"

# 2. A target that does not build.
cp "$src" "$src.orig"
echo 'fn does_not_build() -> u8 { "not a u8" }' >>"$src"
expect_failure "a fuzz target that does not build" "error\[E0308\]: mismatched types" ".*does_not_build.*"
mv "$src.orig" "$src"

# 3. No target at all (a library is left, so the manifest is still valid).
mkdir -p "$scratch/fuzz/src" && : >"$scratch/fuzz/src/lib.rs"
python3 - "$scratch/fuzz/Cargo.toml" <<'EOF'
import re, sys
p = sys.argv[1]
s = open(p).read()
open(p, "w").write(re.sub(r"\[\[bin\]\][^\[]*", "", s))
EOF
expect_failure "no fuzz target" "fuzz: no fuzz target in .*: nothing would be fuzzed"

[ $fail -eq 0 ] && echo "fuzz-selftest: the fuzz gate fails on a crash, a build failure and an empty target list"
exit $fail
