#!/bin/sh
# `cargo +MSRV check` of the published crates' lib and bin targets.
#
# Usage: scripts/msrv-check.sh MSRV CRATE:FOLDER...
#
# Dev-dependencies (proptest, loom, tokio, the benchmark peers) need newer toolchains than the
# crates themselves, and cargo resolves them even for `--lib`. So the published crates are
# copied into a scratch workspace without their dev-dependencies, benches and tests, and the
# lock file is made there by cargo's MSRV-aware resolver (the newest dependency versions that
# declare support for MSRV, as a user on that toolchain gets them), then checked with MSRV.
set -eu
msrv=$1; shift
root=$(cd "$(dirname "$0")/.." && pwd)
work=$root/target/msrv-workspace
rm -rf "$work"; mkdir -p "$work"
members=""
for p in "$@"; do
    dir=${p#*:}
    cp -r "$root/$dir" "$work/$dir"
    rm -rf "$work/$dir/tests" "$work/$dir/benches" "$work/$dir/examples"
    # Drop every [*dev-dependencies*] table and [[bench]]/[[test]]/[[example]] entry.
    awk '/^\[/ { skip = ($0 ~ /dev-dependencies/ || $0 ~ /^\[\[(bench|test|example)\]\]/) } !skip' \
        "$root/$dir/Cargo.toml" > "$work/$dir/Cargo.toml"
    members="$members \"$dir\","
done
sed -e "s|^members = .*|members = [$members]|" -e '/^exclude = /d' "$root/Cargo.toml" > "$work/Cargo.toml"
cd "$work"
CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS=fallback cargo generate-lockfile -q
for p in "$@"; do
    crate=${p%%:*}
    dir=${p#*:}
    # A binary-only crate has no --lib target to name.
    targets="--lib --bins"
    [ -e "$root/$dir/src/lib.rs" ] || targets="--bins"
    echo "cargo +$msrv check -p $crate --all-features $targets"
    cargo "+$msrv" check -q -p "$crate" --all-features $targets
done
