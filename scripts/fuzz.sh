#!/usr/bin/env bash
# Run every fuzz target of FUZZ_DIR (default fuzz/), or those FUZZ_TARGETS names, for
# FUZZ_SECONDS (default 60) each; exit non-zero on the first crash, leak, timeout or build
# failure, and when there is no target.
#
# The targets are built as `cargo fuzz run` builds them (a release build with debug info,
# libFuzzer linked in by libfuzzer-sys, AddressSanitizer, SanitizerCoverage with 8-bit counters,
# PC table, compare tracing and stack depth, `--cfg fuzzing`, one codegen unit: cargo-fuzz's
# src/project.rs), but by cargo itself: nothing to install (cargo-fuzz would be compiled from
# source on every fresh machine). `fuzz/` stays a cargo-fuzz project: `cargo fuzz run TARGET`
# works where cargo-fuzz is installed.
#
# Each target starts from fuzz/corpus/TARGET (kept between runs, not committed) seeded from
# fuzz/seeds/TARGET; a crashing input is written to FUZZ_DIR/artifacts/TARGET/.
# scripts/fuzz-selftest.sh shows that a planted crash, a build failure and an empty target list
# each make this script fail.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fuzz=$(cd "${FUZZ_DIR:-$root/fuzz}" && pwd)
seconds=${FUZZ_SECONDS:-60}
target_dir=${FUZZ_TARGET_DIR:-$root/target/fuzz}
triple=x86_64-unknown-linux-gnu

rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal >/dev/null

# The targets: the [[bin]]s of the fuzz crate (what `cargo fuzz list` prints).
targets=$(cargo +nightly metadata -q --no-deps --format-version 1 --manifest-path "$fuzz/Cargo.toml" |
  python3 -c 'import json, sys
for p in json.load(sys.stdin)["packages"]:
    for t in p["targets"]:
        if "bin" in t["kind"]:
            print(t["name"])') || { echo "fuzz: cannot list the targets of $fuzz/Cargo.toml"; exit 1; }
if [ -z "$targets" ]; then
  echo "fuzz: no fuzz target in $fuzz/Cargo.toml: nothing would be fuzzed"
  exit 1
fi
# FUZZ_TARGETS="a b": build and run only those.
if [ -n "${FUZZ_TARGETS:-}" ]; then
  targets=$(for t in $targets; do case " $FUZZ_TARGETS " in *" $t "*) echo "$t" ;; esac; done)
  [ -n "$targets" ] || { echo "fuzz: none of FUZZ_TARGETS ($FUZZ_TARGETS) is a target of $fuzz/Cargo.toml"; exit 1; }
fi

export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cllvm-args=-simplifycfg-branch-fold-threshold=0 \
-Cllvm-args=-sanitizer-coverage-stack-depth --cfg fuzzing -Clink-dead-code -Zsanitizer=address \
-Ccodegen-units=1"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_odr_violation=0"
echo "fuzz: building $(echo $targets | wc -w) targets ($(echo $targets)) with libFuzzer and AddressSanitizer"
cargo +nightly build -q --manifest-path "$fuzz/Cargo.toml" --target "$triple" --release \
  --config profile.release.debug=true --target-dir "$target_dir" $(for t in $targets; do echo --bin "$t"; done)

log=$(mktemp)
trap 'rm -f "$log"' EXIT
for t in $targets; do
  corpus=$fuzz/corpus/$t
  mkdir -p "$corpus" "$fuzz/artifacts/$t"
  if [ -d "$fuzz/seeds/$t" ]; then cp -n "$fuzz/seeds/$t"/* "$corpus/" 2>/dev/null || true; fi
  echo "fuzzing $t for $seconds s"
  if ! "$target_dir/$triple/release/$t" -artifact_prefix="$fuzz/artifacts/$t/" \
    -max_total_time="$seconds" "$corpus" >"$log" 2>&1; then
    tail -40 "$log"
    # The cause, which a long stack trace can push out of the tail: the panic and its message,
    # the sanitizer's verdict, where the input went.
    grep -E -A2 "panicked at" "$log" | head -6 || true
    grep -E "^==[0-9]+==ERROR|^SUMMARY|Test unit written|^artifact_prefix" "$log" | head -6 || true
    echo "fuzz: target $t FAILED (the input is in $fuzz/artifacts/$t/; replay: $target_dir/$triple/release/$t FILE)"
    exit 1
  fi
  tail -3 "$log"
done
echo "fuzz: every target ran $seconds s without a crash: $(echo $targets)"
