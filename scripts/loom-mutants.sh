#!/usr/bin/env bash
# Build the loom suite once per fence mutant (one ordering of core/src/fences.rs weakened to
# Relaxed) and show which model catches it. "Caught" means a loom-reported data race
# ("Causality violation") or a failed byte/law check of a model - never a timeout or another
# panic. Exit 0 only if every fence is caught, or listed in tests/MUTANTS-NOT-CAUGHT with a reason.
set -u
cd "$(dirname "$0")/.."
FENCES="${FENCES:-A B C D S1 S2 S3 S4}"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
export RUSTFLAGS="--cfg loom"
TARGET=target/loom
tests=$(ls tests/tests/loom_*.rs tests/tests/*_loom.rs 2>/dev/null | xargs -n1 basename | sed 's/\.rs$//' | sort -u)
args=""
for t in $tests; do args="$args --test $t"; done
# Build the unmodified suite once and list its models (test binaries and test names).
cargo test -q -p perfring-tests --release --target-dir "$TARGET" $args --no-run >/dev/null 2>&1 || {
  echo "the loom suite does not build"; exit 1; }
logdir=target/loom-mutants
mkdir -p "$logdir"
printf '%-6s | %-6s | %-45s | %s\n' fence caught "model(s) that caught it" how
printf '%-6s-|-%-6s-|-%-45s-|-%s\n' ------ ------ --------------------------------------------- ----------------------
fail=0
for f in $FENCES; do
  log="$logdir/$f.log"
  : >"$log"
  PERFRING_WEAKEN="$f" cargo test -q -p perfring-tests --release --target-dir "$TARGET" $args --no-run >>"$log" 2>&1
  # Each model runs alone: a loom panic inside a destructor aborts its whole process.
  for t in $tests; do
    names=$(PERFRING_WEAKEN="$f" cargo test -q -p perfring-tests --release --target-dir "$TARGET" --test "$t" -- --list 2>/dev/null | sed -n 's/: test$//p')
    for n in $names; do
      echo "=== $t::$n" >>"$log"
      PERFRING_WEAKEN="$f" cargo test -q -p perfring-tests --release --target-dir "$TARGET" --test "$t" -- --exact "$n" >>"$log" 2>&1 \
        || echo "MODEL FAILED: $t::$n" >>"$log"
    done
  done
  # Which models failed, and why.
  failed=$(sed -n 's/^MODEL FAILED: //p' "$log" | sort -u | tr '\n' ' ')
  how=""
  grep -q "Causality violation" "$log" && how="loom data race"
  grep -qE "torn or corrupt|every record|law|torn snapshot|snapshot invariant" "$log" && how="${how:+$how + }byte/law check"
  if [ -n "$failed" ] && [ -n "$how" ]; then
    printf '%-6s | %-6s | %-45s | %s\n' "$f" yes "$failed" "$how"
  else
    reason=$(grep -E "^$f[[:space:]]*:" tests/MUTANTS-NOT-CAUGHT 2>/dev/null | cut -d: -f2-)
    if [ -n "$reason" ]; then
      printf '%-6s | %-6s | %-45s | documented:%s\n' "$f" no "-" "$reason"
    else
      printf '%-6s | %-6s | %-45s | %s\n' "$f" NO "${failed:--}" "${how:-no model failed (see $log)}"
      fail=1
    fi
  fi
done
exit $fail
