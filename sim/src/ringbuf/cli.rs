//! `perfring-sim --ringbuf`: one simulated BPF ring buffer session, printed.

use std::time::Instant;

use perfring::bpf_ringbuf::Publish;

use super::{run, Config, HeapRing, Report};

/// The options of `perfring-sim --ringbuf`, for its `--help`.
pub const HELP: &str = "\
perfring-sim --ringbuf: the kernel's BPF ring buffer (BPF_MAP_TYPE_RINGBUF) through perfring

CPUs reserve records in one ring under its lock, interrupts nest records inside the ones their
CPU is writing (an NMI inside the lock fails, as in the kernel), records are committed out of
reservation order or discarded, a full ring fails reservations; a consumer polls and sleeps
until a commit wakes it. An oracle checks every record read once, in reservation order, intact;
discarded ones never; every failure counted; no wakeup lost. No perf.data: a BPF ring buffer
carries a program's own samples, not perf records.

USAGE: perfring-sim --ringbuf [OPTIONS]

OPTIONS:
  --cpus N             simulated CPUs (default 4)
  --steps N            steps (default 100000)
  --seed S             seed of every random choice (default 1)
  --ring-size BYTES    data area, a power of two >= 16 (default 4096)
  --max-sample BYTES   largest sample (default 200)
  --read-every N       the consumer also polls every N steps; 0: wakeups only (default 500)
  --wake-latency N     steps from a wakeup to the read (default 50)
  --discard PERMILLE   chance a record is discarded (default 100)
  --irq PERMILLE       chance an interrupt nests a record, per step and busy CPU (default 50)
  --nmi PERMILLE       chance of an NMI inside a reservation's lock (default 20)
  --no-wakeup PERMILLE chance a commit passes BPF_RB_NO_WAKEUP (default 0)
  --per-record         publish consumer_pos after every record, as libbpf
  --hold-last          publish per batch up to its last record, the rest before sleeping
                       (perfring-linux's RingBuffer::poll: no wakeup while it reads on)
  --untrusted          the consumer copies every sample with atomic loads
  -h, --help           this text
";

/// Parse `args` (those after `--ringbuf`), run the session and print it. Returns the exit
/// status: 0 if the oracle found nothing, 1 if it did, 2 for a usage error.
pub fn main(args: impl Iterator<Item = String>) -> u8 {
    let cfg = match parse(args) {
        Ok(Some(cfg)) => cfg,
        Ok(None) => {
            print!("{HELP}");
            return 0;
        }
        Err(e) => {
            eprintln!("perfring-sim --ringbuf: {e}");
            return 2;
        }
    };
    let mut ring = HeapRing::new(cfg.ring_size);
    let start = Instant::now();
    let report = run(&cfg, &mut ring);
    print(&cfg, &report, start.elapsed().as_secs_f64());
    u8::from(!report.violations.is_empty())
}

fn parse(mut args: impl Iterator<Item = String>) -> Result<Option<Config>, String> {
    let mut cfg = Config::default();
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        let num = |v: String| v.parse::<u64>().map_err(|_| format!("{a}: '{v}' is not a number"));
        match a.as_str() {
            "-h" | "--help" => return Ok(None),
            "--ringbuf" => {}
            "--cpus" => cfg.cpus = num(value()?)? as u32,
            "--steps" => cfg.steps = num(value()?)? as u32,
            "--seed" => cfg.seed = num(value()?)?,
            "--ring-size" => cfg.ring_size = num(value()?)? as usize,
            "--max-sample" => cfg.max_sample = num(value()?)? as usize,
            "--read-every" => cfg.read_every = num(value()?)? as u32,
            "--wake-latency" => cfg.wake_latency = num(value()?)? as u32,
            "--discard" => cfg.discard_permille = num(value()?)? as u32,
            "--irq" => cfg.irq_permille = num(value()?)? as u32,
            "--nmi" => cfg.nmi_in_lock_permille = num(value()?)? as u32,
            "--no-wakeup" => cfg.never_permille = num(value()?)? as u32,
            "--per-record" => cfg.publish = Publish::PerRecord,
            "--hold-last" => cfg.publish = Publish::HoldLast,
            "--untrusted" => cfg.untrusted = true,
            other => return Err(format!("unknown option '{other}' (see --ringbuf --help)")),
        }
    }
    if !cfg.ring_size.is_power_of_two() || cfg.ring_size < 16 {
        return Err(format!("--ring-size {} must be a power of two >= 16", cfg.ring_size));
    }
    if cfg.cpus == 0 || cfg.cpus > 1024 {
        return Err("--cpus must be 1..=1024".into());
    }
    Ok(Some(cfg))
}

/// The session's table and the oracle's verdict.
pub fn print(cfg: &Config, report: &Report, secs: f64) {
    println!(
        "perfring-sim --ringbuf: {} CPUs, {} steps, seed {}, one {}-byte BPF ring buffer, {:.2} s",
        cfg.cpus, cfg.steps, cfg.seed, cfg.ring_size, secs
    );
    println!(
        "{:<6} {:>9} {:>9} {:>9} {:>8} {:>9} {:>12} {:>11} {:>10}",
        "cpu", "reserved", "submitted", "discarded", "nested", "max nest", "out of order", "ring full", "NMI/lock"
    );
    let row = |label: &str, s: &super::CpuStats| {
        println!(
            "{:<6} {:>9} {:>9} {:>9} {:>8} {:>9} {:>12} {:>11} {:>10}",
            label,
            s.reserved,
            s.committed,
            s.discarded,
            s.nested,
            s.max_depth,
            s.out_of_order,
            s.failed_full,
            s.failed_nmi
        )
    };
    for (i, s) in report.cpus.iter().enumerate() {
        row(&format!("cpu{i}"), s);
    }
    let total = super::CpuStats {
        reserved: report.total(|s| s.reserved),
        committed: report.total(|s| s.committed),
        discarded: report.total(|s| s.discarded),
        nested: report.total(|s| s.nested),
        max_depth: report.cpus.iter().map(|s| s.max_depth).max().unwrap_or(0),
        out_of_order: report.total(|s| s.out_of_order),
        failed_full: report.total(|s| s.failed_full),
        failed_nmi: report.total(|s| s.failed_nmi),
    };
    row("total", &total);
    println!(
        "consumer: {} records read in {} batches, {} discarded skipped, {} sleeps, {} wakeups; {} records wrapped the \
         ring's end; the producer counted {} failed reservations",
        report.read, report.batches, report.skipped, report.sleeps, report.wakeups, report.wrapped, report.failed
    );
    if report.violations.is_empty() {
        println!(
            "oracle: every submitted record read once, in reservation order, intact; no discarded or BUSY record read; \
             failures counted as the producer counts them{}",
            if report.wakeups_checked { "; no wakeup lost" } else { " (wakeups not checked: BPF_RB_NO_WAKEUP used)" }
        );
    } else {
        println!("oracle: {} VIOLATION(S):", report.violations.len());
        for v in &report.violations {
            println!("  {v}");
        }
    }
}
