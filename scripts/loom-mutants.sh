#!/usr/bin/env bash
# Build the loom suite once per fence mutant (one ordering of core/src/fences.rs weakened to
# Relaxed) and show which model catches it. "Caught" means a loom-reported data race
# ("Causality violation") or a failed byte/law check of a model - never a timeout or another
# panic. Exit 0 only if every fence is caught, or listed with a reason in tests/MUTANTS-NOT-CAUGHT
# (an optional file: every fence is caught today, so it does not exist).
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
printf '%-6s | %-6s | %s\n' fence caught "models that failed (race = loom data race, byte/law = a model's byte or law check)"
printf '%-6s-|-%-6s-|-%s\n' ------ ------ ------------------------------------------------------------
fail=0
for f in $FENCES; do
  log="$logdir/$f.log"
  : >"$log"
  PERFRING_WEAKEN="$f" cargo test -q -p perfring-tests --release --target-dir "$TARGET" $args --no-run >>"$log" 2>&1
  # Each model runs alone: a loom panic inside a destructor aborts its whole process.
  for t in $tests; do
    # The self-monitoring code uses only (S1)-(S4): its (slow) model cannot see A-D mutants.
    case "$f:$t" in [ABCD]:*selfmon*) continue ;; esac
    names=$(PERFRING_WEAKEN="$f" cargo test -q -p perfring-tests --release --target-dir "$TARGET" --test "$t" -- --list 2>/dev/null | sed -n 's/: test$//p')
    for n in $names; do
      echo "=== $t::$n" >>"$log"
      PERFRING_WEAKEN="$f" cargo test -q -p perfring-tests --release --target-dir "$TARGET" --test "$t" -- --exact "$n" >>"$log" 2>&1 \
        || echo "MODEL FAILED: $t::$n" >>"$log"
    done
  done
  # Which models failed, and why (per model: its own section of the log).
  failed=""
  how=""
  for m in $(sed -n 's/^MODEL FAILED: //p' "$log" | sort -u); do
    section=$(awk -v m="=== $m" '$0==m{on=1;next} /^=== /{on=0} on' "$log")
    why=""
    grep -q "Causality violation" <<<"$section" && why="race"
    grep -qE "torn or corrupt|every record|over-reported|newest first|torn snapshot|snapshot invariant|read twice|reported corruption" <<<"$section" && why="${why:+$why+}byte/law"
    if [ -n "$why" ]; then failed="$failed $m($why)"; how="caught"; else failed="$failed $m(unrelated failure)"; fi
  done
  failed="${failed# }"
  if [ -n "$failed" ] && [ -n "$how" ]; then
    printf '%-6s | %-6s | %s\n' "$f" yes "$failed"
  else
    reason=$(grep -E "^$f[[:space:]]*:" tests/MUTANTS-NOT-CAUGHT 2>/dev/null | cut -d: -f2-)
    if [ -n "$reason" ]; then
      printf '%-6s | %-6s | not caught, documented:%s\n' "$f" no "$reason"
    else
      printf '%-6s | %-6s | %s\n' "$f" NO "${failed:-no model failed} (see $log)"
      fail=1
    fi
  fi
done
exit $fail
