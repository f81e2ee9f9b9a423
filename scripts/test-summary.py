#!/usr/bin/env python3
"""How many tests ran, by kind, and how many skipped: read from cargo test's output.

    scripts/test-summary.py [--skips SKIP_LOG] unit=UNIT_LOG [loom=LOOM_LOG]

UNIT_LOG is the output of `cargo test --workspace` with cargo's headers ("Running unittests
src/lib.rs (...)", "Running tests/main.rs (...)", "Doc-tests perfring"): each "test result:"
line counts towards the kind of the header before it (unit, integration or doc). Every result
of LOOM_LOG is a loom model. SKIP_LOG holds one line per skipped test (perfring-test-support).
A skipped test returns early, so libtest counts it as passed: the lines per kind count every
test run, skips included; the total line `N passed, F failed, S skipped` counts a skip only as
skipped. Exits 1 if a result line says a test failed, or if no test ran at all.
"""
import re
import sys


def count(path, kind_of_header):
    kinds = {}
    kind = None
    failed = 0
    for line in open(path, errors="replace"):
        m = re.search(r"Running (unittests|tests/|benches/|src/)", line)
        if m:
            kind = {"unittests": "unit", "src/": "unit", "tests/": "integration", "benches/": "bench"}[m.group(1)]
            continue
        if re.search(r"^\s*Doc-tests ", line):
            kind = "doc"
            continue
        m = re.search(r"test result: \w+\. (\d+) passed; (\d+) failed; (\d+) ignored", line)
        if m:
            k = kind_of_header or kind or "unit"
            passed, fail, ignored = (int(g) for g in m.groups())
            c = kinds.setdefault(k, [0, 0, 0])
            c[0] += passed
            c[1] += fail
            c[2] += ignored
            failed += fail
    return kinds, failed


def main(argv):
    skips_path = None
    logs = []
    it = iter(argv)
    for a in it:
        if a == "--skips":
            skips_path = next(it)
        else:
            kind, _, path = a.partition("=")
            logs.append((kind, path))
    kinds = {}
    for kind, path in logs:
        got, _ = count(path, "loom" if kind == "loom" else None)
        for k, c in got.items():
            t = kinds.setdefault(k, [0, 0, 0])
            for i in range(3):
                t[i] += c[i]
    skips = []
    if skips_path:
        try:
            skips = [l.rstrip("\n") for l in open(skips_path) if l.strip()]
        except FileNotFoundError:
            pass
    order = ["unit", "integration", "doc", "loom", "bench"]
    total = [0, 0, 0]
    for k in sorted(kinds, key=lambda k: order.index(k) if k in order else 99):
        p, f, i = kinds[k]
        total = [total[0] + p, total[1] + f, total[2] + i]
        print(f"  {k + ' tests run':<22} {p + f:5d}  ({f} failed, {i} ignored)")
    print(f"  {'all tests run':<22} {total[0] + total[1]:5d}")
    if skips:
        print(f"  skipped ({len(skips)}, counted above as run):")
        for s in skips:
            print(f"    {s}")
    print(f"{total[0] - len(skips)} passed, {total[1]} failed, {len(skips)} skipped")
    if total[1]:
        return 1
    if total[0] == 0:
        print("no test ran")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
