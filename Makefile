# perfring — every target prints what it did in a line a person can read.
SHELL := /bin/bash
CARGO ?= cargo
LOOM_MAX_PREEMPTIONS ?= 3
FUZZ_SECONDS ?= 60
EMBEDDED_TARGETS := thumbv7em-none-eabihf riscv32imac-unknown-none-elf aarch64-unknown-linux-gnu

.PHONY: all test demo lint unit loom loom-mutants mutants miri fuzz fuzz-smoke embedded bench bench-instructions soak doc clean

all: test

## The test command the README names and CI runs.
test: lint unit embedded loom
	@echo "make test: lint, unit/integration tests, embedded builds and loom models all passed"

## The main job: a simulated perf session, printed and written to perf.data.
demo:
	$(CARGO) run --release -q -p perfring-sim --bin perfring-sim
	@echo "make demo: done"

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) clippy --workspace --all-targets -q -- -D warnings
	RUSTDOCFLAGS="-D warnings" $(CARGO) doc -q -p perfring --no-deps
	@echo "make lint: rustfmt, clippy -D warnings and rustdoc -D warnings are clean"

unit:
	$(CARGO) test --workspace -q
	@echo "make unit: workspace unit, integration and doc tests passed"

## Loom models of every mode (tests/tests/loom_*.rs, *_loom.rs), bounded by LOOM_MAX_PREEMPTIONS.
loom:
	@tests=$$(ls tests/tests/loom_*.rs tests/tests/*_loom.rs 2>/dev/null | xargs -n1 basename | sed 's/\.rs$$//' | sort -u | sed 's/^/--test /'); \
	RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=$(LOOM_MAX_PREEMPTIONS) $(CARGO) test -q -p perfring-tests --release --target-dir target/loom $$tests
	@echo "make loom: every loom model passed (LOOM_MAX_PREEMPTIONS=$(LOOM_MAX_PREEMPTIONS))"

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
	MIRIFLAGS="-Zmiri-strict-provenance -Zmiri-disable-isolation" PROPTEST_DISABLE_FAILURE_PERSISTENCE=1 $(CARGO) +nightly miri test -q -p perfring-tests --test hostile_attacks --test hostile_props --target-dir target/miri
	@echo "make miri: core unit tests and the hostile-peer tests (scripted and a racing peer thread) pass under Miri"

## Each fuzz target for FUZZ_SECONDS (CI smoke: 60 s each).
fuzz fuzz-smoke:
	@command -v cargo-fuzz >/dev/null || $(CARGO) install cargo-fuzz --locked
	@for t in $$(cd fuzz && $(CARGO) +nightly fuzz list); do \
	  mkdir -p fuzz/corpus/$$t; cp -n fuzz/seeds/$$t/* fuzz/corpus/$$t/ 2>/dev/null || true; \
	  echo "fuzzing $$t for $(FUZZ_SECONDS) s"; \
	  (cd fuzz && $(CARGO) +nightly fuzz run $$t corpus/$$t -- -max_total_time=$(FUZZ_SECONDS) 2>&1 | tail -3) || exit 1; \
	done
	@echo "make fuzz: every fuzz target ran $(FUZZ_SECONDS) s without a crash"

## perfring for bare-metal 32-bit targets (no 64-bit atomics) and aarch64 Linux.
embedded:
	@for t in $(EMBEDDED_TARGETS); do rustup target list --installed | grep -qx $$t || rustup target add $$t; done
	@for t in $(EMBEDDED_TARGETS); do $(CARGO) build -q -p perfring --release --target $$t || exit 1; done
	@echo "make embedded: perfring builds for $(EMBEDDED_TARGETS)"

doc:
	$(CARGO) doc -p perfring --no-deps --open

clean:
	$(CARGO) clean

## Longer runs of the randomized suites (the simulator's property test with 200,000 cases).
soak:
	SIM_CASES=200000 $(CARGO) test -q -p perfring-tests --release --test sim_props -- --nocapture
	PROPTEST_CASES=20000 $(CARGO) test -q -p perfring-tests --release --test backward_props --test hostile_props
	@echo "make soak: 200,000 simulated sessions and 20,000 cases of each property held"

## Peers side by side (rtrb, ringbuf, crossbeam ArrayQueue, bbqueue), memcpy and a cross-core ceiling.
bench:
	$(CARGO) bench -q -p perfring-tests --bench rings
	@echo "make bench: figures above (medians of 5 runs; see BENCHMARKS.md for the machine)"

## Instructions per record (callgrind), producer fast path and consumer.
bench-instructions:
	@command -v valgrind >/dev/null || (apt-get update -qq && apt-get install -y -qq valgrind)
	$(CARGO) bench -q -p perfring-tests --bench instructions --no-run
	@bin=$$(ls -t target/release/deps/instructions-* | grep -v '\.d$$' | head -1); \
	count() { valgrind --tool=callgrind --callgrind-out-file=/dev/null $$bin $$1 $$2 2>&1 | sed -n 's/.*Collected : \([0-9]*\).*/\1/p'; }; \
	p1=$$(count producer 100000); p2=$$(count producer 200000); \
	q1=$$(count producer32 100000); q2=$$(count producer32 200000); \
	c1=$$(count consumer 100000); c2=$$(count consumer 200000); \
	r1=$$(count rtrb-producer 100000); r2=$$(count rtrb-producer 200000); \
	s1=$$(count rtrb-consumer 100000); s2=$$(count rtrb-consumer 200000); \
	rprod=$$(( (r2 - r1) / 100000 )); rcons=$$(( ((s2 - s1) - (r2 - r1)) / 100000 )); \
	prod=$$(( (p2 - p1) / 100000 )); prod32=$$(( (q2 - q1) / 100000 )); cons=$$(( ((c2 - c1) - (p2 - p1)) / 100000 )); \
	echo "producer fast path, 40-byte record (8-byte header + 32-byte payload): $$prod instructions per record"; \
	echo "producer fast path, 32-byte record (a 32-byte copy in all):           $$prod32 instructions per record"; \
	echo "consumer (batch read, per 40-byte record):                            $$cons instructions per record"; \
	echo "reference, rtrb producer (write_chunk(32) + 32-byte copy + commit):    $$rprod instructions per record"; \
	echo "reference, rtrb consumer (read_chunk(32) + commit, per record):        $$rcons instructions per record"
