#!/usr/bin/env bash
# Build the loom suite once per fence mutant (one ordering of core/src/fences.rs weakened to
# Relaxed) and show which model catches it. "Caught" means a loom-reported data race
# ("Causality violation") or a failed byte/law check of a model - never a timeout or another
# panic. Exit 0 only if every fence is caught, or listed with a reason in tests/MUTANTS-NOT-CAUGHT
# (an optional file: every fence is caught today, so it does not exist).
#
# The models are the loom_* modules of the one test binary of perfring-tests, built under
# --cfg loom in the profile and folder `make loom` uses. A mutant build recompiles perfring and
# the three small crates above it (perfring-sim, perfring-tests, the binary), seconds each, not
# loom or the rest; each mutant's binary is copied aside, and once all are built the mutants run
# LOOM_MUTANT_JOBS (default 2) at a time, each model alone in its own process.
set -u
cd "$(dirname "$0")/.."
FENCES="${FENCES:-A B C D S1 S2 S3 S4 R1 R2 R3 R4 R5 R6 R7 R8 R9 R10 U1 U2 U3 U4 U5 U6}"
JOBS="${LOOM_MUTANT_JOBS:-2}"
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
export RUSTFLAGS="--cfg loom"
TARGET=${CARGO_TARGET_DIR:-target}/loom
logdir=${CARGO_TARGET_DIR:-target}/loom-mutants
mkdir -p "$logdir/bin"

# Build the suite as PERFRING_WEAKEN=$1 asks; print the test binary's path.
build() {
  PERFRING_WEAKEN="$1" cargo test -q -p perfring-tests --profile loom --target-dir "$TARGET" --test integration \
    --no-run --message-format=json 2>>"$logdir/build.log" |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable"):
        print(m["executable"])'
}

: >"$logdir/build.log"
unmutated=$(build "")
[ -n "$unmutated" ] || { cat "$logdir/build.log"; echo "the loom suite does not build"; exit 1; }
models=$("$unmutated" --list 2>/dev/null | sed -n 's/: test$//p')
[ -n "$models" ] || { echo "no loom model found"; exit 1; }

t0=$(date +%s)
for f in $FENCES; do
  exe=$(build "$f")
  [ -n "$exe" ] || { tail -30 "$logdir/build.log"; echo "the loom suite does not build with fence $f weakened"; exit 1; }
  cp "$exe" "$logdir/bin/integration-$f"
done
# Leave the unmutated suite built, as `make loom` expects it.
build "" >/dev/null
echo "loom-mutants: ${FENCES// /, } built in $(($(date +%s) - t0)) s; running them $JOBS at a time"

# Run every model of mutant $1 (a fence), each alone: a loom panic inside a destructor aborts
# its whole process. Writes $logdir/$1.log.
run_mutant() {
  local f=$1 log="$logdir/$1.log" n
  : >"$log"
  for n in $models; do
    # The self-monitoring code uses only (S1)-(S4): its (slow) model cannot see A-D mutants.
    case "$f:$n" in [ABCD]:loom_selfmon::*) continue ;; esac
    # The BPF ring buffer's orderings (R*, U*) are used by its code alone, which no other model
    # runs, and its models (loom_bpf_ringbuf, loom_sim_ringbuf) use no other ordering.
    case "$f:$n" in
      [RU]*:loom_bpf_ringbuf::* | [RU]*:loom_sim_ringbuf::*) ;;
      [RU]*:* | *:loom_bpf_ringbuf::* | *:loom_sim_ringbuf::*) continue ;;
    esac
    echo "=== $n" >>"$log"
    "$logdir/bin/integration-$f" --exact "$n" >>"$log" 2>&1 || echo "MODEL FAILED: $n" >>"$log"
  done
}
export -f run_mutant
export logdir models
t0=$(date +%s)
# The slow self-monitoring mutants first, so the two workers finish together.
printf '%s\n' $FENCES | sort -r | xargs -P "$JOBS" -I{} bash -c 'run_mutant {}'
echo "loom-mutants: models of every mutant ran in $(($(date +%s) - t0)) s"

printf '%-6s | %-6s | %s\n' fence caught "models that failed (race = loom data race, byte/law = a model's byte or law check)"
printf '%-6s-|-%-6s-|-%s\n' ------ ------ ------------------------------------------------------------
fail=0
for f in $FENCES; do
  log="$logdir/$f.log"
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
