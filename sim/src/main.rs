//! `perfring-sim`: run a simulated perf session through the real perfring producer and
//! consumer, print what happened per buffer, and write a perf.data the real `perf` reads.

use std::io::Write;
use std::process::ExitCode;
use std::time::Instant;

use perfring_sim::config::AuxMode;
use perfring_sim::{run_with_progress, Mode, Report, SimConfig, SimRing};

const HELP: &str = "\
perfring-sim: a simulated kernel writing perf ring buffers through perfring

Runs CPUs with task/softirq/hardirq/NMI nesting (interrupts fire inside the producer at its
preemption points), a scheduler, software events, a tracepoint and throttling; a consumer per
buffer reads at the given rate; an oracle checks every record and the loss law. Prints a table
per buffer and writes a perf.data that `perf report` / `perf script` read.

USAGE: perfring-sim [OPTIONS]        (no options: system-wide, 4 CPUs, 200000 steps)

OPTIONS:
  --mode MODE          system-wide (default), default (one process, per-CPU buffers),
                       per-thread (one buffer follows a thread), per-cpu (needs --cpu-list),
                       per-thread-cpus (a thread, only on --cpu-list)
  --cpus N             simulated CPUs (default 4)
  --cpu-list A,B,..    CPUs for per-cpu and per-thread-cpus (default 0,2)
  --threads N          threads; tids 1000.., the first half in process 1000 (default 6)
  --tid T / --pid P    traced thread (per-thread modes) / process (default mode); default 1000
  --steps N            simulated microseconds (default 200000)
  --seed S             seed of every random choice (default 1)
  --ring-size BYTES    data area per buffer, a power of two >= 64 (default 16384)
  --read-every N       consumer reads every N steps, and when woken (default 1000)
  --read-budget N      records per read, 0 = all (default 0)
  --wake-latency N     steps from a wakeup to the read (default 200): raise it to lose more
  --irq PERMILLE       chance of an interrupt at each producer preemption point (default 30)
  --nmi PERMILLE       chance of an NMI sample per step and CPU (default 20)
  --period N           page-fault sample period (default 10); --freq HZ for frequency mode
  --backward           backward overwrite rings, read newest-first with pause/resume
  --aux                trace the thread's branches into the AUX area (Intel BTS, below),
                       read in full; implies --mode per-thread (other modes are refused)
  --snapshot           the AUX tracer overwrites, snapshotted every 5000 steps (implies --aux)
  --aux-size BYTES     AUX area per buffer, a power of two (default 8192)
  --legacy-put-handle  the buggy pre-2019 put_handle ordering (the oracle should complain)
  --ringbuf            a BPF ring buffer session instead (see --ringbuf --help)
  -o, --output PATH    perf.data to write (default perf.data; '-' for none)
  -h, --help           this text

AUX TRACING (--aux, --aux --snapshot)
The AUX tracer is a simulated Intel BTS (Branch Trace Store): a 24-byte record {from, to,
flags} per taken branch of the traced thread, which runs a small program (main,
handle_request, parse_header, lookup_route, hash_key, render_page, escape_html,
write_response). As perf's intel_bts, it traces one thread (--tid, default 1000). The file is
what `perf record -e intel_bts//u --per-thread` writes (the tracer's event, AUXTRACE_INFO,
AUXTRACE records and their index), and the program's code is written beside it as the ELF
file perfring-sim-app, which the file maps into every simulated process: keep it there, perf
reads the branch instructions and the function names from it.
The BTS table gives, per buffer: the branches the thread took while traced; the records
written; the branches dropped (the AUX area was full: the kernel truncates the stretch and
stops the event); the records overwritten before a snapshot captured them; the records in the
file. The line after it gives that last count, by the function each branch leaves.

What perf 6.1 does with `perfring-sim --aux -o aux.data` (the same with --snapshot):
  perf script -i aux.data
      prints the simulated events' samples (cpu-clock, page-faults, bpf-output, task-clock, at
      made-up addresses: [unknown]) and the trace, decoded: 'branches:u' samples, each
      'FROM function+off (.../perfring-sim-app) => TO function+off (...)', by default only the
      calls (perf script's default --itrace). A stretch cut short by a full AUX area (full
      mode) adds 'instruction trace error ... Lost trace data'. On stderr, perf warns only of
      what was lost: 'lost N chunks' (PERF_RECORD_LOST), 'AUX data lost N times' and
      'N instruction trace errors' (the truncated stretches).
  perf script --itrace=b -i aux.data
      every branch: as many 'branches:u' lines as the file holds (the count printed above).
  perf report -i aux.data --stdio -n --sort sym
      a histogram per event; the 'branches:u' one names the program's functions, with the
      Samples the line above gives for each.
perf drops the last record of every AUXTRACE buffer (intel_bts_process_buffer loops while
more than 24 bytes remain), so each buffer here ends with an all-zero record for it to drop
(`perf report -D` lists it as '0 -> 0 miss'). A snapshot holds only what is new since the
previous one, and perf's snapshot overlap search finds nothing to cut: no two records are
equal (each carries its index in the flags word's bits 8-63).
";

fn parse() -> Result<(SimConfig, String), String> {
    let mut cfg = SimConfig::default();
    let mut mode = None;
    let (mut tid, mut pid, mut list) = (1000u32, 1000u32, vec![0u32, 2]);
    let mut output = "perf.data".to_string();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        let num = |v: String| v.parse::<u64>().map_err(|_| format!("{a}: '{v}' is not a number"));
        match a.as_str() {
            "-h" | "--help" => return Err(String::new()),
            "--mode" => mode = Some(value()?),
            "--cpus" => cfg.cpus = num(value()?)? as u32,
            "--cpu-list" => {
                list = value()?
                    .split(',')
                    .map(|c| c.trim().parse().map_err(|_| format!("bad CPU '{c}'")))
                    .collect::<Result<_, _>>()?
            }
            "--threads" => cfg.threads = num(value()?)? as u32,
            "--tid" => tid = num(value()?)? as u32,
            "--pid" => pid = num(value()?)? as u32,
            "--steps" => cfg.steps = num(value()?)? as u32,
            "--seed" => cfg.seed = num(value()?)?,
            "--ring-size" => cfg.ring_size = num(value()?)? as usize,
            "--read-every" => cfg.read_every = num(value()?)? as u32,
            "--read-budget" => cfg.read_budget = num(value()?)? as u32,
            "--wake-latency" => cfg.wake_latency = num(value()?)? as u32,
            "--irq" => cfg.irq_permille = num(value()?)? as u32,
            "--nmi" => cfg.nmi_permille = num(value()?)? as u32,
            "--period" => cfg.sample_period = num(value()?)?,
            "--freq" => cfg.freq = Some(num(value()?)?),
            "--backward" => cfg.backward = true,
            "--aux" => cfg.aux = cfg.aux.max(AuxMode::Full),
            "--snapshot" => cfg.aux = AuxMode::Snapshot,
            "--aux-size" => cfg.aux_size = num(value()?)? as usize,
            "--legacy-put-handle" => cfg.legacy_put_handle = true,
            "-o" | "--output" => output = value()?,
            other => return Err(format!("unknown option '{other}' (see --help)")),
        }
    }
    // perf decodes BTS per thread only (perf record: "intel_bts does not support per-cpu
    // recording"): an AUX session traces one thread.
    let mode = match mode {
        Some(m) if cfg.aux != AuxMode::Off && m != "per-thread" => {
            return Err(format!(
                "--aux traces one thread, as perf's intel_bts does (it does not support per-cpu recording): \
                 drop --mode {m} (--aux implies --mode per-thread) or drop --aux"
            ))
        }
        Some(m) => m,
        None if cfg.aux != AuxMode::Off => "per-thread".to_string(),
        None => "system-wide".to_string(),
    };
    cfg.mode = match mode.as_str() {
        "system-wide" => Mode::SystemWide,
        "default" => Mode::Default { pid },
        "per-thread" => Mode::PerThread { tid },
        "per-cpu" => Mode::PerCpu { cpus: list },
        "per-thread-cpus" => Mode::PerThreadCpus { tid, cpus: list },
        m => return Err(format!("unknown mode '{m}' (see --help)")),
    };
    if !cfg.ring_size.is_power_of_two() || cfg.ring_size < 64 {
        return Err(format!("--ring-size {} must be a power of two >= 64", cfg.ring_size));
    }
    if cfg.aux != AuxMode::Off && (!cfg.aux_size.is_power_of_two() || cfg.aux_size < 64) {
        return Err(format!("--aux-size {} must be a power of two >= 64", cfg.aux_size));
    }
    if cfg.cpus == 0 || cfg.cpus > 1024 {
        return Err("--cpus must be 1..=1024".into());
    }
    Ok((cfg, output))
}

fn print_table(cfg: &SimConfig, report: &Report, secs: f64) {
    println!(
        "perfring-sim: {} mode, {} CPUs, {} steps, seed {}, {}-byte rings, {:.2} s",
        cfg.mode.name(),
        cfg.cpus,
        cfg.steps,
        cfg.seed,
        cfg.ring_size,
        secs
    );
    println!(
        "{:<9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>9}",
        "buffer", "produced", "consumed", "lost", "pending", "wakeups", "nested", "max nest"
    );
    for b in &report.buffers {
        println!(
            "{:<9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8} {:>9}",
            b.label, b.written, b.consumed, b.lost_reported, b.lost_pending, b.wakeups, b.nested, b.max_depth
        );
    }
    println!(
        "{:<9} {:>9} {:>9} {:>9} {:>8} {:>8} {:>8}",
        "total",
        report.total(|b| b.written),
        report.total(|b| b.consumed),
        report.total(|b| b.lost_reported),
        report.total(|b| b.lost_pending),
        report.total(|b| b.wakeups),
        report.total(|b| b.nested)
    );
    if cfg.aux != AuxMode::Off {
        println!(
            "{:<9} {:>12} {:>12} {:>12} {:>16}",
            "AUX", "bytes traced", "bytes read", "AUX records", "discontinuities"
        );
        for b in &report.buffers {
            println!(
                "{:<9} {:>12} {:>12} {:>12} {:>16}",
                b.label, b.aux_written, b.aux_read, b.aux_records, b.aux_discontinuities
            );
        }
        println!(
            "{:<9} {:>12} {:>12} {:>12} {:>12} {:>12}",
            "BTS", "branches", "written", "dropped", "overwritten", "in file"
        );
        for b in &report.buffers {
            println!(
                "{:<9} {:>12} {:>12} {:>12} {:>12} {:>12}",
                b.label, b.branches, b.branches_written, b.branches_dropped, b.branches_overwritten, b.branches_read
            );
        }
        let mut by_function: Vec<_> = report.branches_by_function.iter().collect();
        by_function.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
        let list: Vec<String> = by_function.iter().map(|(f, n)| format!("{f} {n}")).collect();
        println!(
            "branches in the file: {} (the number of 'branches' samples perf decodes), by the function they leave: {}",
            report.total(|b| b.branches_read),
            list.join(", ")
        );
    }
    println!(
        "throttled samples {}, THROTTLE/UNTHROTTLE records read {}, recursion refused {}",
        report.throttled_samples,
        report.total(|b| b.throttles),
        report.recursion_refused
    );
}

fn main() -> ExitCode {
    if std::env::args().skip(1).any(|a| a == "--ringbuf") {
        return ExitCode::from(perfring_sim::ringbuf::cli::main(std::env::args().skip(1)));
    }
    let (cfg, output) = match parse() {
        Ok(v) => v,
        Err(e) if e.is_empty() => {
            print!("{HELP}");
            return ExitCode::SUCCESS;
        }
        Err(e) => {
            eprintln!("perfring-sim: {e}");
            return ExitCode::from(2);
        }
    };
    let aux_size = if cfg.aux == AuxMode::Off { 0 } else { cfg.aux_size };
    let mut rings: Vec<SimRing> =
        cfg.mode.buffers(cfg.cpus).iter().map(|_| SimRing::with_aux(cfg.ring_size, aux_size)).collect();
    if rings.is_empty() {
        eprintln!("perfring-sim: the mode traces no CPU of this machine (check --cpu-list against --cpus)");
        return ExitCode::from(2);
    }
    let start = Instant::now();
    let long = cfg.steps >= 100_000;
    let report = run_with_progress(&cfg, &mut rings, |step| {
        if long {
            eprint!("\r  simulating: step {step}/{} ", cfg.steps);
            let _ = std::io::stderr().flush();
        }
    });
    if long {
        eprintln!("\r  simulating: done{:20}", "");
    }
    print_table(&cfg, &report, start.elapsed().as_secs_f64());
    if report.violations.is_empty() {
        println!("oracle: every record intact, in order, in its buffer; produced = consumed + lost holds per buffer");
    } else {
        println!("oracle: {} VIOLATION(S):", report.violations.len());
        for v in &report.violations {
            println!("  {v}");
        }
    }
    if output != "-" {
        match perfring_sim::write_perf_data(&cfg, &report, &output) {
            Ok(n) if cfg.aux != AuxMode::Off => println!(
                "wrote {output}: {n} records, and the traced program {} beside it (try: perf script --itrace=b -i {output}; \
                 perf report -i {output} --stdio -n --sort sym; see --help)",
                perfring_sim::output::PROGRAM_FILE
            ),
            Ok(n) => {
                println!("wrote {output}: {n} records (try: perf report -i {output} --stdio; perf script -i {output})")
            }
            Err(e) => {
                eprintln!("perfring-sim: cannot write {output}: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    if report.violations.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}
