# perfring — every target prints what it did in a line a person can read.
SHELL := /bin/bash
CARGO ?= cargo
## Where cargo builds (CARGO_TARGET_DIR if set, as cargo itself reads it).
TARGET_DIR := $(abspath $(or $(CARGO_TARGET_DIR),target))
LOOM_MAX_PREEMPTIONS ?= 3
FUZZ_SECONDS ?= 60
EMBEDDED_TARGETS := thumbv7em-none-eabihf riscv32imac-unknown-none-elf aarch64-unknown-linux-gnu

.PHONY: all test structure demo hypervisor firmware-qemu lint fmt clippy rustdoc public-api public-api-check public-api-json package msrv unit loom loom-mutants mutants miri fuzz fuzz-smoke fuzz-selftest embedded bench bench-check bench-lines bench-loops bench-instructions bench-decode bench-data bench-linux bench-bpf bench-record soak doc clean ci-extra ci-extra-list print-loom-ci-only

all: test

## The test command the README names (CI runs it first): rustfmt, clippy, rustdoc, the embedded
## builds, every unit, integration and doc test, the loom models (built and run beside the rest,
## on the second core). Prints each step's time and how many tests ran, by kind, and skipped.
test:
	@TARGET_DIR=$(TARGET_DIR) scripts/test.sh

## What CI runs after `make test` (.ci/run, one step each): the checks that need a second full
## build (nightly, another toolchain, sanitizers, Miri) or minutes of their own.
CI_EXTRA := loom public-api-check bench-check package msrv loom-mutants miri fuzz-selftest fuzz-smoke
ci-extra: $(CI_EXTRA)
	@echo "make ci-extra: $(CI_EXTRA) passed"
ci-extra-list:
	@echo $(CI_EXTRA)

## The main job: a simulated perf session, printed and written to perf.data; then a simulated
## BPF ring buffer session, printed.
demo:
	$(CARGO) run --release -q -p perfring-sim --bin perfring-sim
	$(CARGO) run --release -q -p perfring-sim --bin perfring-sim -- --ringbuf
	@echo "make demo: done"

## The crates published for users (crate:folder), and their public-API listings
## (scripts/public-api.py, checked in as FOLDER/public-api.txt).
PUBLISHED := perfring:core perfring-data:data perfring-linux:linux
CRATES := $(foreach p,$(PUBLISHED),$(firstword $(subst :, ,$(p))))
## Published binaries (packaged and MSRV-checked; no API listing).
BINARIES := perfring-record:record

## rustfmt, clippy and rustdoc, each a step of `make test` (the public-API listings are checked in
## CI: `make public-api-check`, a nightly build of its own).
lint: fmt clippy rustdoc
	@echo "make lint: rustfmt, clippy -D warnings and rustdoc -D warnings ($(CRATES)) are clean"

fmt:
	$(CARGO) fmt --all -- --check

clippy:
	$(CARGO) clippy --workspace --all-targets -q -- -D warnings

rustdoc:
	@for c in $(CRATES); do RUSTDOCFLAGS="-D warnings" $(CARGO) doc -q -p $$c --all-features --no-deps || exit 1; done
	@echo "rustdoc -D warnings: $(CRATES)"

## The benchmarks and their peers (benches/, `--features peers`): built and linted by clippy
## (CI; `make test` never builds the peers).
bench-check:
	$(CARGO) clippy -q -p perfring-benches --all-targets --features peers -- -D warnings
	@echo "make bench-check: the benchmarks and their peers build and are clippy-clean"

## Each published crate's public API from nightly rustdoc JSON, against the checked-in listing.
public-api-json:
	@rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal >/dev/null
	@# Every feature but core's `test-hooks` (the tests' and the simulator's, never a producer's API).
	@for c in $(CRATES); do f=--all-features; [ $$c = perfring ] && f=; $(CARGO) +nightly rustdoc -q -p $$c --lib $$f --target-dir target/api -- -Z unstable-options --output-format json || exit 1; done

## The code's shape (scripts/structure-check.py, issue 50): no import cycle between two files of
## a crate, no public item under two paths or two items with one name (from the listings), no
## file over 800 lines or function over 80, one tier table in every crate's docs; its
## self-test first (each check fails on a planted defect).
structure:
	@python3 scripts/structure-check.py --selftest
	@python3 scripts/structure-check.py

public-api-check: public-api-json
	@python3 scripts/structure-check.py
	@for p in $(PUBLISHED); do c=$${p%%:*}; d=$${p#*:}; f=$$(echo $$c | tr - _); \
	  python3 scripts/public-api.py target/api/doc/$$f.json | diff -u $$d/public-api.txt - \
	  || { echo "public API of $$c changed: review the diff above, then run 'make public-api' and commit the listing"; exit 1; }; \
	done; echo "public API listings unchanged: $(CRATES)"

## Regenerate the checked-in listings after an intended API change.
public-api: public-api-json
	@for p in $(PUBLISHED); do c=$${p%%:*}; d=$${p#*:}; f=$$(echo $$c | tr - _); python3 scripts/public-api.py target/api/doc/$$f.json > $$d/public-api.txt; echo "wrote $$d/public-api.txt"; done

## `cargo package` of every published crate in one call (a crate depending on an unpublished
## sibling only packages that way), then `cargo +MSRV check` of their lib and bin targets.
## Cargo extracts each packaged crate from target/package/tmp-registry into
## $CARGO_HOME/registry/src/-<hash of that path>/ and reuses an extraction that is there, and
## the artifacts built from it (a registry crate is taken to never change): a clone at a path
## packaged before verified against the old sources. Those extractions of our crates are
## removed first (only the local registries' `-*` folders, never crates.io's), and the
## verification builds in a target folder of its own, emptied first.
package:
	rm -rf target/package target/package-verify $${CARGO_HOME:-$$HOME/.cargo}/registry/src/-*/perfring-[0-9]* $${CARGO_HOME:-$$HOME/.cargo}/registry/src/-*/perfring-data-[0-9]* $${CARGO_HOME:-$$HOME/.cargo}/registry/src/-*/perfring-linux-[0-9]* $${CARGO_HOME:-$$HOME/.cargo}/registry/src/-*/perfring-record-[0-9]*
	CARGO_TARGET_DIR=target/package-verify $(CARGO) package -q --allow-dirty $(foreach c,$(CRATES) perfring-record,-p $(c))
	@echo "make package: $(CRATES) perfring-record package and verify"

MSRV := $(shell sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
msrv:
	@rustup toolchain list | grep -q "^$(MSRV)" || rustup toolchain install $(MSRV) --profile minimal >/dev/null
	scripts/msrv-check.sh $(MSRV) $(PUBLISHED) $(BINARIES)
	@echo "make msrv: $(CRATES) build with Rust $(MSRV)"

## Every test that cannot run here skips through perfring-test-support, which appends its line
## to SKIP_LOG; the count ends the run. PERFRING_REQUIRE_PERF=1 (CI) makes a skip a failure.
## The tests are built first (quietly), then run with cargo's headers, so scripts/test-summary.py
## can count them by kind from UNIT_LOG.
SKIP_LOG := $(TARGET_DIR)/test-skips.log
UNIT_LOG := $(TARGET_DIR)/test-unit.log
LOOM_LOG := $(TARGET_DIR)/test-loom.log
unit:
	@mkdir -p $(TARGET_DIR) && rm -f $(SKIP_LOG)
	@# The embedding tests build a KVM guest and a Cortex-M image, and run the image under QEMU
	@# (installed here if missing and apt-get can; otherwise that test says it skipped).
	@for t in x86_64-unknown-none thumbv7em-none-eabihf; do rustup target list --installed | grep -qx $$t || rustup target add $$t; done
	@command -v qemu-system-arm >/dev/null || ! command -v apt-get >/dev/null || (apt-get update -qq && apt-get install -y -qq qemu-system-arm >/dev/null) || echo "make unit: could not install qemu-system-arm"
	$(CARGO) test --workspace -q --no-run
	@# Six test threads a binary on two cores: perfring-record's tests wait on the processes
	@# they start (perf record waits ~0.8 s at exit for its BPF side-band thread's poll), and
	@# more of them at once take that binary from 67-72 s to 42-46 s; the CPU-bound binaries
	@# take what they took (BENCHMARKS.md, "session 9").
	set -o pipefail; RUST_TEST_THREADS=$${RUST_TEST_THREADS:-6} PERFRING_SKIP_LOG=$(SKIP_LOG) $(CARGO) test --workspace -- -q 2>&1 | grep --line-buffered -v '^ *Finished' | tee $(UNIT_LOG)
	@scripts/test-summary.py --skips $(SKIP_LOG) unit=$(UNIT_LOG)

## Loom models of every mode (tests/tests/loom_*.rs: modules of the one test binary, compiled
## alone under --cfg loom), bounded by LOOM_MAX_PREEMPTIONS. Profile `loom`: release without
## debug info. LOOM_SKIP: models (name prefixes) left out; `make test` leaves out
## LOOM_CI_ONLY, the self-monitoring seqlock's model (3 minutes of one core: CI runs it, with
## every other model, as `make loom`).
LOOM := RUSTFLAGS="--cfg loom" $(CARGO) test -p perfring-tests --profile loom --target-dir $(TARGET_DIR)/loom --test integration
LOOM_CI_ONLY := loom_selfmon::
LOOM_SKIP ?=
loom:
	$(LOOM) -q --no-run
	set -o pipefail; LOOM_MAX_PREEMPTIONS=$(LOOM_MAX_PREEMPTIONS) $(LOOM) -- -q $(foreach m,$(LOOM_SKIP),--skip $(m)) 2>&1 | grep --line-buffered -v '^ *Finished' | tee $(LOOM_LOG)
	@echo "make loom: every loom model passed (LOOM_MAX_PREEMPTIONS=$(LOOM_MAX_PREEMPTIONS))$(if $(LOOM_SKIP), but $(LOOM_SKIP): not run here)"

## One build per fence of core/src/fences.rs weakened to Relaxed; each must be caught.
loom-mutants:
	LOOM_MAX_PREEMPTIONS=$(LOOM_MAX_PREEMPTIONS) scripts/loom-mutants.sh
	@echo "make loom-mutants: every fence mutant is caught or documented"

## Mutation score of core's protocol modules (slow, not in `make test`): cargo-mutants with core's
## unit tests, then the workspace tests, then the loom models over what is left; prints the
## table for tests/MUTANTS-SCORE.md. Fails on a survivor not argued in tests/MUTANTS-EQUIVALENT.md.
mutants:
	@command -v cargo-mutants >/dev/null || $(CARGO) install cargo-mutants --locked
	LOOM_MAX_PREEMPTIONS=$(LOOM_MAX_PREEMPTIONS) nice -n 19 scripts/mutants.sh
	@echo "make mutants: every mutant of the protocol modules is caught or argued equivalent"

miri:
	rustup component add miri rust-src --toolchain nightly >/dev/null 2>&1 || true
	MIRIFLAGS="-Zmiri-strict-provenance" $(CARGO) +nightly miri test -q -p perfring --lib --target-dir target/miri
	MIRIFLAGS="-Zmiri-strict-provenance -Zmiri-disable-weak-memory-emulation" $(CARGO) +nightly miri test -q -p perfring --lib --target-dir target/miri -- --ignored reading_in_place
	MIRIFLAGS="-Zmiri-strict-provenance -Zmiri-disable-isolation" PROPTEST_DISABLE_FAILURE_PERSISTENCE=1 $(CARGO) +nightly miri test -q -p perfring-tests --test integration --target-dir target/miri -- hostile_attacks:: hostile_props:: hostile_bpf_ringbuf::
	@echo "make miri: core unit tests and the hostile-peer tests of both rings (scripted and a racing peer thread) pass under Miri"

## Each fuzz target for FUZZ_SECONDS (CI smoke: 60 s each), built as `cargo fuzz` builds it but
## without installing cargo-fuzz (scripts/fuzz.sh). Fails on a crash, a build failure or no target.
fuzz fuzz-smoke:
	FUZZ_SECONDS=$(FUZZ_SECONDS) scripts/fuzz.sh

## The fuzz gate can fail: in a scratch copy, a planted crashing input, a target that does not
## build and an empty target list each make `make fuzz-smoke` fail (scripts/fuzz-selftest.sh).
fuzz-selftest:
	scripts/fuzz-selftest.sh

## perfring for bare-metal 32-bit targets (no 64-bit atomics) and aarch64 Linux, and the firmware
## example, built once into EMBEDDED_DIR: the firmware's QEMU test (examples/firmware-host/tests)
## runs the image built there.
EMBEDDED_DIR := $(TARGET_DIR)/embedded
embedded:
	@for t in $(EMBEDDED_TARGETS); do rustup target list --installed | grep -qx $$t || rustup target add $$t; done
	@for t in $(EMBEDDED_TARGETS); do $(CARGO) build -q -p perfring --release --target $$t --target-dir $(EMBEDDED_DIR) || exit 1; done
	$(CARGO) build -q -p perfring-example-firmware --release --target thumbv7em-none-eabihf --target-dir $(EMBEDDED_DIR)
	@rustup component list --installed | grep -q '^llvm-tools' || rustup component add llvm-tools >/dev/null 2>&1 || true
	@size=$$(ls $$(rustc --print sysroot)/lib/rustlib/*/bin/llvm-size 2>/dev/null | head -1); \
	elf=$(EMBEDDED_DIR)/thumbv7em-none-eabihf/release/firmware; \
	if [ -n "$$size" ]; then $$size -A $$elf | awk '$$1 ~ /^\.(text|rodata|data|bss|vector_table)$$/ {printf "  firmware %-14s %6d bytes\n", $$1, $$2}'; \
	else echo "  (llvm-size not found: rustup component add llvm-tools)"; fi
	@echo "make embedded: perfring builds for $(EMBEDDED_TARGETS); the firmware example (examples/firmware) for thumbv7em-none-eabihf"

doc:
	$(CARGO) doc -p perfring --no-deps --open

clean:
	$(CARGO) clean

## Longer runs of the randomized suites (the simulator's property test with 200,000 cases).
soak:
	SIM_CASES=200000 $(CARGO) test -q -p perfring-tests --release --test integration -- --nocapture sim_props::
	PROPTEST_CASES=20000 $(CARGO) test -q -p perfring-tests --release --test integration -- backward_props:: hostile_props::
	@$(CARGO) test -q -p perfring-tests --test integration --no-run
	@bin=$$(ls -t target/debug/deps/integration-* | grep -v '\.d$$' | head -1); \
	yes >/dev/null & h1=$$!; yes >/dev/null & h2=$$!; fails=0; \
	for i in $$(seq 50); do $$bin -q --exact kernel_ring::backward_rings_read_newest_first_match_their_forward_twin >/dev/null 2>&1 || fails=$$((fails+1)); done; \
	kill $$h1 $$h2; echo "backward twins under two CPU hogs: $$fails of 50 runs failed"; [ $$fails -eq 0 ]
	@echo "make soak: 200,000 simulated sessions, 20,000 cases of each property and 50 loaded runs of the backward-twin kernel test held"

## Peers side by side (rtrb, ringbuf, crossbeam ArrayQueue, bbqueue), memcpy and a cross-core ceiling.
bench:
	$(CARGO) bench -q -p perfring-benches --features peers --bench rings
	@echo "make bench: figures above (rates: medians of the rounds; ratios: medians of paired ratios within each round; see BENCHMARKS.md)"

## Decoding speed: perfring beside linux-perf-event-reader and perf-event-data on the
## demo's perf.data and real `perf record` captures, made under target/decode-captures/ first.
bench-decode:
	scripts/decode-captures.sh
	$(CARGO) bench -q -p perfring-benches --features peers --bench decode
	@echo "make bench-decode: figures above (records/s of the median pass, ratios the median of paired rounds; see BENCHMARKS.md)"

## The hypervisor embedding: a KVM VMM (examples/hypervisor) runs its no_std guest, which writes
## a perf ring in guest memory; the VMM reads it untrusted and writes hypervisor.data for perf.
hypervisor:
	@rustup target list --installed | grep -q x86_64-unknown-none || rustup target add x86_64-unknown-none
	cd examples/hypervisor/guest && $(CARGO) build -q --release --target x86_64-unknown-none --target-dir $(TARGET_DIR)/guest
	$(CARGO) run -q --release -p perfring-example-hypervisor --bin hypervisor -- $(TARGET_DIR)/guest/x86_64-unknown-none/release/kvm-guest hypervisor.data
	@command -v perf >/dev/null && perf report -i hypervisor.data --stdio 2>/dev/null | grep -E '%|Samples' || true
	@echo "make hypervisor: the guest ran under KVM; its ring became hypervisor.data (perf report -i hypervisor.data)"

## The firmware embedding: examples/firmware on QEMU's mps2-an386 (Cortex-M4F), SysTick sampling
## into a ring in its RAM; examples/firmware-host reads it through QEMU's gdbstub as a debug probe
## would and writes firmware.data for perf. Installs qemu-system-arm if missing.
firmware-qemu:
	@command -v qemu-system-arm >/dev/null || (apt-get update -qq && apt-get install -y -qq qemu-system-arm)
	@rustup target list --installed | grep -q thumbv7em-none-eabihf || rustup target add thumbv7em-none-eabihf
	$(CARGO) build -q -p perfring-example-firmware --release --target thumbv7em-none-eabihf --target-dir $(EMBEDDED_DIR)
	$(CARGO) run -q --release -p perfring-example-firmware-host --bin firmware-host -- $(EMBEDDED_DIR)/thumbv7em-none-eabihf/release/firmware firmware.data
	@command -v perf >/dev/null && perf report -i firmware.data --stdio 2>/dev/null | grep -E '%|Samples' || true
	@echo "make firmware-qemu: the firmware ran on an emulated Cortex-M4F; its ring became firmware.data (perf report -i firmware.data)"

## Cache-line transfers per record between the producer's and the consumer's cores: a
## deterministic model of perfring's consumer policies and rtrb under the same interleavings.
bench-lines:
	$(CARGO) bench -q -p perfring-benches --features peers --bench lines
	@echo "make bench-lines: figures above (model, machine-independent; see BENCHMARKS.md)"

## The readers' loops timed (ns a record, one thread, records in the second-level cache).
bench-loops:
	$(CARGO) bench -q -p perfring-benches --features peers --bench loops
	@echo "make bench-loops: figures above (best of the rounds; see BENCHMARKS.md)"

## Instructions per record (callgrind), producer fast path, consumer and the decoder's fast path.
bench-instructions:
	@command -v valgrind >/dev/null || (apt-get update -qq && apt-get install -y -qq valgrind)
	$(CARGO) bench -q -p perfring-benches --features peers --bench instructions --no-run
	@bin=$$(ls -t target/release/deps/instructions-* | grep -v '\.d$$' | head -1); \
	count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null $$bin $$1 $$2 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'; }; \
	p1=$$(count producer 100000); p2=$$(count producer 200000); \
	q1=$$(count producer32 100000); q2=$$(count producer32 200000); \
	o1=$$(count producer-owned 100000); o2=$$(count producer-owned 200000); \
	b1=$$(count producer-batch 100000); b2=$$(count producer-batch 200000); \
	c1=$$(count consumer 100000); c2=$$(count consumer 200000); \
	k1=$$(count consumer-split 100000); k2=$$(count consumer-split 200000); \
	g1=$$(count ringbuf-producer 100000); g2=$$(count ringbuf-producer 200000); \
	h1=$$(count ringbuf-consumer 100000); h2=$$(count ringbuf-consumer 200000); \
	r1=$$(count rtrb-producer 100000); r2=$$(count rtrb-producer 200000); \
	s1=$$(count rtrb-consumer 100000); s2=$$(count rtrb-consumer 200000); \
	u1=$$(count decode 100000); u2=$$(count decode 200000); \
	f1=$$(count decode-fixed 100000); f2=$$(count decode-fixed 200000); \
	e1=$$(count decode-setup 100000); e2=$$(count decode-setup 200000); \
	a1=$$(count decode-absent 100000); a2=$$(count decode-absent 200000); \
	t1=$$(count decode-tail-setup 100000); t2=$$(count decode-tail-setup 200000); \
	i1=$$(count decode-in-order 100000); i2=$$(count decode-in-order 200000); \
	v1=$$(count decode-reverse 100000); v2=$$(count decode-reverse 200000); \
	rprod=$$(( (r2 - r1) / 100000 )); rcons=$$(( ((s2 - s1) - (r2 - r1)) / 100000 )); \
	prod=$$(( (p2 - p1) / 100000 )); prod32=$$(( (q2 - q1) / 100000 )); owned=$$(( (o2 - o1) / 100000 )); cons=$$(( ((c2 - c1) - (p2 - p1)) / 100000 )); \
	echo "producer fast path, 40-byte record (8-byte header + 32-byte payload), owning its Mapping"; \
	echo "  (the embeddings: the consumer is the host or the hypervisor):       $$owned instructions per record"; \
	echo "producer fast path, 40-byte record, through split's shared &Mapping:  $$prod instructions per record"; \
	echo "producer fast path, 32-byte record (a 32-byte copy in all), split:    $$prod32 instructions per record"; \
	echo "producer, 40-byte records 16 per batch (BatchWriter::output), split:  $$(( (b2 - b1) / 100000 )) instructions per record"; \
	echo "consumer (batch read, per 40-byte record):                            $$cons instructions per record"; \
	echo "consumer, split views (Batch::next_split, the BPF readers' loop):     $$(( ((k2 - k1) - (p2 - p1)) / 100000 )) instructions per record"; \
	echo "BPF ring buffer, producer (RingbufProducer::output of 8 bytes):       $$(( (g2 - g1) / 100000 )) instructions per record"; \
	echo "BPF ring buffer, consumer (for_each, trusted, each sample in place):  $$(( ((h2 - h1) - (g2 - g1)) / 100000 )) instructions per record"; \
	echo "reference, rtrb producer (write_chunk(32) + 32-byte copy + commit):    $$rprod instructions per record"; \
	echo "reference, rtrb consumer (read_chunk(32) + commit, per record):        $$rcons instructions per record"; \
	echo "decoder: walk + event lookup (2 events) + the event index, ip, pid, tid, time, period, per SAMPLE (IDENTIFIER|IP|TID|TIME|PERIOD):"; \
	echo "  run-time layout, one step (set.attribute(&raw), then .event() and .sample()): $$(( ((u2 - u1) - (e2 - e1)) / 100000 )) instructions per SAMPLE"; \
	echo "  compile-time layout (set.attribute(&raw), then .event() and .fixed::<ST>()):   $$(( ((f2 - f1) - (e2 - e1)) / 100000 )) instructions per SAMPLE"; \
	echo "  an accessor of a field the event lacks (18 of them after the view, each value added if there is one):"; \
	echo "                                                                $$(awk "BEGIN { printf \"%.1f\", (($$a2 - $$a1) - ($$u2 - $$u1)) / 100000 / 18 }") instructions per accessor"; \
	fwd=$$(( ((i2 - i1) - (t2 - t1)) / 100000 )); rev=$$(( ((v2 - v1) - (t2 - t1)) / 100000 )); \
	echo "every field through its accessor (16, whatever the event writes), one step, a 12-field SAMPLE (CALLCHAIN, REGS_USER, STACK_USER, 3 u64s after them):"; \
	echo "  in output order: $$fwd, last to first: $$rev instructions per SAMPLE ($$(awk "BEGIN { printf \"%+.1f\", 100 * ($$rev - $$fwd) / $$fwd }") %)"

## The reader's CPU time per record drained and decoded from a real kernel ring:
## perfring-linux beside perf-event2's Sampler, same event, same run (needs perf events: root or
## perf_event_paranoid <= 1).
bench-linux:
	$(CARGO) bench -q -p perfring-benches --features peers --bench drain
	@echo "make bench-linux: figures above (consumer-thread CPU ns per record, medians of 5 interleaved rounds; see BENCHMARKS.md)"

## perf.data reading (perfring-data): records/s over the demo's perf.data (mapped, streamed), and
## the peak memory of reading a >= 1 GiB pipe-mode stream through a pipe.
bench-data: demo
	scripts/decode-captures.sh
	$(CARGO) bench -q -p perfring-benches --features peers --bench read --no-run
	@bin=$$(ls -t target/release/deps/read-* | grep -v '\.d$$' | head -1); \
	$$bin compare perf.data $$(ls target/decode-captures/*.data | grep -v '/demo\.data$$') && \
	$$bin read perf.data && \
	( $$bin gen-pipe perf.data 1 | /usr/bin/time -v $$bin pipe ) 2>&1 | grep -E 'pipe:|Maximum resident'
	@echo "make bench-data: figures above (the comparison with linux-perf-data: medians of paired rounds; the perfring-only rows: best of 5; see BENCHMARKS.md)"

## The loom models `make test` leaves to CI (see `loom`).
print-loom-ci-only:
	@echo $(LOOM_CI_ONLY)

## perfring-record beside perf record under load: (a) overload (-m 1 -g -F 100000, 4 busy
## threads), (b) -a -F max -g with every CPU busy, (c) sched tracepoints under a switch storm;
## paired alternating runs (BENCH_PAIRS, default 5). Needs perf and perf events (root).
bench-record:
	$(CARGO) build -q --release -p perfring-record
	$(CARGO) bench -q -p perfring-record --bench record
	@echo "make bench-record: figures above (medians of paired runs; see BENCHMARKS.md)"

## The readers of bpf_perf_event_output (BPF_MAP_TYPE_PERF_EVENT_ARRAY): perfring-linux's
## PerfEventArray beside aya's PerfEventArray and libbpf's perf_buffer; then the readers of the
## BPF ring buffer (BPF_MAP_TYPE_RINGBUF): perfring-linux's RingBuffer beside aya's RingBuf and
## libbpf's ring_buffer (Debian's libbpf-dev, installed here if missing); both by the kernel's
## bench_ringbufs method: a BPF program run by BPF_PROG_TEST_RUN on a pinned CPU, the reader
## on the other (root). BENCH_SECONDS per run.
bench-bpf:
	@[ -e /usr/include/bpf/libbpf.h ] || (apt-get update -qq && apt-get install -y -qq libbpf-dev >/dev/null)
	$(CARGO) bench -q -p perfring-benches --features peers --bench bpf
	$(CARGO) bench -q -p perfring-benches --features peers --bench bpf_ringbuf
	@echo "make bench-bpf: figures above (perf event array, then BPF ring buffer; medians of 3 runs, readers interleaved; see BENCHMARKS.md)"
