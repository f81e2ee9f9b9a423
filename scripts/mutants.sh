#!/usr/bin/env bash
# Mutation score of core's protocol modules: cargo-mutants in three passes over one
# output directory. Each pass tests only the mutants the passes before it left uncaught
# (`--iterate`), so a mutant counts as caught if any of the tests `make test` runs catches it:
#   1. core's unit tests (`cargo test -p perfring --lib`): seconds per mutant, catch most;
#   2. the workspace tests of `make unit` (integration, property, simulator and doc tests);
#   3. the loom models of `make loom` (`--cfg loom`), for what only a model can see.
# Prints caught/missed/unviable/timeout per module and overall, and exits 1 if a mutant is
# missed without a reason in tests/MUTANTS-EQUIVALENT.md. The score is detected / viable, where
# detected = caught + timeout: a timed-out mutant made a test hang (an endless loop), so the
# suite never passes with it (as PIT and Stryker count it).
#
#   MUTANTS_FILES  files to mutate (default: every protocol module, in this order)
#   MUTANTS_PASSES which passes to run (default "1 2 3"; "2 3" resumes after pass 1; "" only
#                  prints the score of the last run)
#   MUTANTS_JOBS   parallel builds (default 1)
#   MUTANTS_OUT    output directory (default target/mutants)
#   MUTANTS_AGAIN  1: pass 1 re-tests only what the last run left uncaught (after adding tests)
#   MUTANTS_TIMEOUT seconds a mutant's tests may run in passes 2 and 3 (default 600 and 1200)
set -u
cd "$(dirname "$0")/.."
FILES=${MUTANTS_FILES:-"core/src/producer/*.rs core/src/consumer.rs core/src/backward.rs core/src/split.rs core/src/memory/*.rs core/src/aux.rs core/src/selfmon.rs"}
PASSES=${MUTANTS_PASSES-"1 2 3"}
JOBS=${MUTANTS_JOBS:-1}
OUT=${MUTANTS_OUT:-target/mutants}
export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
files=()
for f in $FILES; do files+=(--file "$f"); done
common=(--no-shuffle --jobs "$JOBS" --output "$OUT" --package perfring "${files[@]}")
mkdir -p "$OUT"
# What the last pass left for the next: its missed mutants.
left() { cat "$OUT/mutants.out/missed.txt" 2>/dev/null | wc -l; }
for pass in $PASSES; do
  # A mutant that timed out made a test hang: detected; the next passes do not wait on it again.
  skip=()
  while IFS= read -r m; do
    skip+=(--exclude-re "^$(sed 's/[][\\.*^$+?(){}|]/\\&/g' <<<"$m")\$")
  done < <(cat "$OUT"/pass*/timeout.txt 2>/dev/null | sort -u)
  case $pass in
    1)
      again=()
      if [ "${MUTANTS_AGAIN:-0}" = 1 ]; then again=(--iterate); else rm -rf "$OUT/mutants.out" "$OUT"/pass*; fi
      # Opt-level 1: these tests run in a tenth of a second; the build is what costs.
      CARGO_PROFILE_TEST_OPT_LEVEL=${CARGO_PROFILE_TEST_OPT_LEVEL:-1} \
        cargo mutants "${common[@]}" "${again[@]}" "${skip[@]}" --test-package perfring --cargo-test-arg=--lib ;;
    2)
      [ "$(left)" -eq 0 ] && continue
      # (Named packages: cargo-mutants 27.1 baselines only the mutated package whatever the
      # tests named, so its automatic timeout would be too short: set one.)
      cargo mutants "${common[@]}" --iterate "${skip[@]}" --timeout "${MUTANTS_TIMEOUT:-600}" \
        --test-package perfring --test-package perfring-sim --test-package perfring-tests ;;
    3)
      [ "$(left)" -eq 0 ] && continue
      # No baseline: cargo-mutants would build core's examples under --cfg loom (they need
      # Mapping, which loom builds leave out); `make loom` is the baseline of this pass.
      # The models are the modules of perfring-tests' one `integration` target when built under
      # `--cfg loom` (tests/tests/main.rs), built as `make loom` builds them (--profile loom).
      # (Before 2026-11-28 this pass named one target per model file; since the targets became
      # one, cargo refused those names and every mutant it tested counted as caught.)
      RUSTFLAGS="--cfg loom" cargo mutants "${common[@]}" --iterate "${skip[@]}" --timeout "${MUTANTS_TIMEOUT:-1200}" \
        --baseline=skip --profile loom \
        --test-package perfring-tests --cargo-test-arg=--test=integration ;;
  esac
  rc=$?
  # cargo-mutants exits 2 when mutants were missed, 3 on timeouts: expected here.
  case $rc in 0 | 2 | 3) ;; *) echo "cargo mutants pass $pass failed (exit $rc)"; exit 1 ;; esac
  cp -r "$OUT/mutants.out" "$OUT/pass$pass-$(date +%Y%m%d%H%M%S)"
done
# The score. Caught, unviable and timeout accumulate over the passes (one snapshot each); missed
# is what the last pass left.
all() { cat "$OUT"/pass*/"$1" 2>/dev/null | sort -u; }
last=$(ls -td "$OUT"/pass* 2>/dev/null | head -1)
if [ -z "$last" ]; then
  echo "no pass has run into $OUT: nothing to score (MUTANTS_PASSES=1 runs the first)"
  exit 1
fi
# Only the mutants the sources have now (`cargo mutants --list`, no build): a pass run before the
# code changed can name a mutant that no longer exists, or one that moved to another line or
# column and was tested again under its new name, which would count twice.
cargo mutants --list --package perfring "${files[@]}" 2>/dev/null | sort -u >"$OUT/current.all"
now() { if [ -s "$OUT/current.all" ]; then grep -xF -f "$OUT/current.all"; else cat; fi; }
all unviable.txt | now >"$OUT/unviable.all"
# (previously_caught.txt, written by --iterate, lists the unviable mutants too.)
cat "$OUT"/pass*/caught.txt "$OUT"/pass*/previously_caught.txt 2>/dev/null | sort -u | grep -vxF -f "$OUT/unviable.all" | now >"$OUT/caught.all"
now <"$last/missed.txt" >"$OUT/missed.all"
all timeout.txt | grep -vxF -f "$OUT/caught.all" | now >"$OUT/timeout.all"
row() { # module label, file pattern
  local c m u t
  c=$(grep -c "^$2" "$OUT/caught.all"); m=$(grep -c "^$2" "$OUT/missed.all")
  u=$(grep -c "^$2" "$OUT/unviable.all"); t=$(grep -c "^$2" "$OUT/timeout.all")
  [ $((c + m + u + t)) -eq 0 ] && return
  printf '| %-10s | %6d | %6d | %8d | %7d | %5s |\n' "$1" "$c" "$m" "$u" "$t" \
    "$(awk -v d="$((c + t))" -v v="$((c + m + t))" 'BEGIN { if (v) printf "%.1f%%", 100 * d / v; else print "-" }')"
}
echo "| module     | caught | missed | unviable | timeout | score |"
echo "|------------|--------|--------|----------|---------|-------|"
for m in producer consumer backward split memory aux selfmon; do row "$m" "core/src/$m"; done
row all "core/src/"
# Every survivor must be argued equivalent (matched without its line and column).
fail=0
while IFS= read -r mutant; do
  key=$(sed -E 's/^([^:]+):[0-9]+:[0-9]+: /\1: /' <<<"$mutant")
  if ! grep -qF "\`$key\`" tests/MUTANTS-EQUIVALENT.md; then
    echo "NOT CAUGHT, NOT ARGUED: $mutant"
    fail=1
  fi
done <"$OUT/missed.all"
exit $fail
