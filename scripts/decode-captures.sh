#!/bin/sh
# The inputs of `make bench-decode`, made under target/decode-captures/ because a
# fresh clone has none: the demo's perf.data (the simulator, 4 CPUs, ~700k records) and real
# `perf record` captures of common options. Existing files are kept; delete the directory to
# re-record. Run as root (the tracepoint and page-fault captures need it).
set -eu
cd "$(dirname "$0")/.."
out=target/decode-captures
mkdir -p "$out"
command -v perf >/dev/null || { echo "perf not found (apt-get install linux-perf)"; exit 1; }

if [ ! -s "$out/demo.data" ]; then
    cargo run --release -q -p perfring-sim --bin perfring-sim -- -o "$out/demo.data" >/dev/null 2>&1
fi

# A workload with user and kernel time, forks and execs, ~0.3 s.
work='i=0; while [ $i -lt 40 ]; do /bin/true; ls / >/dev/null; i=$((i+1)); done; dd if=/dev/zero of=/dev/null bs=4k count=20000 2>/dev/null'

rec() {
    name=$1; shift
    [ -s "$out/$name.data" ] && return 0
    perf record -q -o "$out/$name.data" "$@" -- sh -c "$work" 2>/dev/null
    echo "$out/$name.data: $(perf report -D -i "$out/$name.data" 2>/dev/null | grep -c ': PERF_RECORD_SAMPLE') samples"
}

rec cpu-clock -e cpu-clock -c 20000
rec callchain-fp -e cpu-clock -c 20000 -g
rec callchain-dwarf -e cpu-clock -c 50000 --call-graph dwarf,1024
rec two-events -e cpu-clock -e task-clock -c 20000
rec group-read -e '{cpu-clock,task-clock}:S' -c 20000
rec weight -e cpu-clock -c 20000 -W
rec switch -e cpu-clock -c 20000 --switch-events
rec tracepoint-raw -e sched:sched_switch -e sched:sched_process_exec -c 1
rec page-faults-addr -e page-faults -c 1 -d
rec phys-page-size -e page-faults -c 1 -d --phys-data --data-page-size --code-page-size
echo "decode captures in $out: $(ls "$out" | wc -l) files"
