//! `perfring-record`: sample a command, a process or every CPU into a perf.data file that
//! `perf report` and `perf script` read.
//!
//! ```text
//! perfring-record [-e EVENT]... [-F FREQ | -c PERIOD] [-a | -p PID] [-g] [-q] -o FILE [-- COMMAND...]
//! ```
//!
//! * `-e`: a software event (`cpu-clock`, `task-clock`, `page-faults`, `minor-faults`,
//!   `major-faults`, `context-switches`, `cpu-migrations`, …) or a tracepoint
//!   (`sched:sched_switch`); default `cpu-clock`. Several `-e` record several events.
//! * `-F FREQ` samples about FREQ times a second (default 4000), `-c PERIOD` every PERIOD events.
//! * A COMMAND is started held before `exec`, its events opened per CPU with `inherit` and
//!   `enable_on_exec` (its threads and children are followed); `-p PID` follows a running
//!   process's threads (their COMM and MMAP2 records are synthesized from /proc first); `-a`
//!   records every CPU. User space only (`exclude_kernel`).
//! * `-g`: callchains. `-o -` writes pipe mode to stdout.
//!
//! One ring per CPU takes every event's records (`SET_OUTPUT`); rings are drained on their
//! watermark wakeups (a quarter of the ring) and once more at the end; a FINISHED_ROUND follows
//! each pass. The command's exit, or SIGINT/SIGTERM, ends the recording and finishes the file.
//! On a terminal a progress line is kept up to date; a summary ends the run: records by type,
//! samples by event, records lost.

use std::collections::BTreeMap;
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use perfring::record::{sample_type as st, types, Comm, Endian, Mmap2, Mmap2File, Record, SampleId};
use perfring_data::{FileAttr, Writer};
use perfring_linux::attr::software;
use perfring_linux::launch::{catch_interrupts, interrupted};
use perfring_linux::{EventAttr, Scope, Session};

const USAGE: &str =
    "usage: perfring-record [-e EVENT]... [-F FREQ | -c PERIOD] [-a | -p PID] [-g] [-q] -o FILE [-- COMMAND...]";

struct Options {
    events: Vec<String>,
    freq: Option<u64>,
    period: Option<u64>,
    all_cpus: bool,
    pid: Option<i32>,
    callchain: bool,
    quiet: bool,
    output: String,
    command: Vec<String>,
}

fn parse() -> Result<Options, String> {
    let mut o = Options {
        events: Vec::new(),
        freq: None,
        period: None,
        all_cpus: false,
        pid: None,
        callchain: false,
        quiet: false,
        output: String::new(),
        command: Vec::new(),
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value\n{USAGE}"));
        match a.as_str() {
            "-e" | "--event" => o.events.push(value()?),
            "-F" | "--freq" => o.freq = Some(value()?.parse().map_err(|_| "-F takes a number")?),
            "-c" | "--count" => o.period = Some(value()?.parse().map_err(|_| "-c takes a number")?),
            "-a" | "--all-cpus" => o.all_cpus = true,
            "-p" | "--pid" => o.pid = Some(value()?.parse().map_err(|_| "-p takes a pid")?),
            "-g" => o.callchain = true,
            "-q" | "--quiet" => o.quiet = true,
            "-o" | "--output" => o.output = value()?,
            "--" => {
                o.command = args.by_ref().collect();
                break;
            }
            "-h" | "--help" => return Err(USAGE.into()),
            other if !other.starts_with('-') => {
                o.command = std::iter::once(other.to_string()).chain(args.by_ref()).collect();
                break;
            }
            other => return Err(format!("unknown option {other}\n{USAGE}")),
        }
    }
    if o.output.is_empty() {
        return Err(format!("-o FILE is required\n{USAGE}"));
    }
    if o.command.is_empty() && !o.all_cpus && o.pid.is_none() {
        return Err(format!("give a COMMAND, -p PID or -a\n{USAGE}"));
    }
    if o.events.is_empty() {
        o.events.push("cpu-clock".into());
    }
    Ok(o)
}

fn software_config(name: &str) -> Option<u64> {
    Some(match name {
        "cpu-clock" => software::CPU_CLOCK,
        "task-clock" => software::TASK_CLOCK,
        "page-faults" | "faults" => software::PAGE_FAULTS,
        "context-switches" | "cs" => software::CONTEXT_SWITCHES,
        "cpu-migrations" | "migrations" => software::CPU_MIGRATIONS,
        "minor-faults" => software::PAGE_FAULTS_MIN,
        "major-faults" => software::PAGE_FAULTS_MAJ,
        "alignment-faults" => software::ALIGNMENT_FAULTS,
        "emulation-faults" => software::EMULATION_FAULTS,
        "dummy" => software::DUMMY,
        _ => return None,
    })
}

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("perfring-record: {e}");
            ExitCode::from(1)
        }
    }
}

type Error = Box<dyn std::error::Error>;

fn run() -> Result<(), Error> {
    let o = parse()?;
    catch_interrupts()?;
    let mut sample_type = st::IDENTIFIER | st::IP | st::TID | st::TIME | st::CPU | st::PERIOD;
    if o.callchain {
        sample_type |= st::CALLCHAIN;
    }
    let ring_pages = 64;
    // Who to follow: the command (held before exec), a process's threads, or every CPU. The
    // session sets inherit and enable_on_exec as the scope needs them.
    let scope = match (o.command.is_empty(), o.pid) {
        (false, _) => Scope::Command(o.command.clone()),
        (true, Some(pid)) => Scope::Process(pid),
        (true, None) => Scope::AllCpus,
    };
    let mut builder = Session::builder(scope).data_pages(ring_pages);
    for (i, name) in o.events.iter().enumerate() {
        let mut a = match software_config(name) {
            Some(config) => EventAttr::software(config),
            None if name.contains(':') => EventAttr::tracepoint(name)?,
            None => return Err(format!("unknown event {name} (software events and tracepoints group:name)").into()),
        };
        a = match (o.period, o.freq) {
            (Some(p), _) => a.sample_period(p),
            (None, Some(f)) => a.sample_freq(f),
            (None, None) if a.attr().type_ == perfring_linux::attr::event_type::TRACEPOINT => a.sample_period(1),
            (None, None) => a.sample_freq(4000),
        };
        a = a
            .sample_type(sample_type)
            .sample_id_all(true)
            .exclude_callchain_kernel(o.callchain)
            .wakeup_watermark((ring_pages * 4096 / 4) as u32);
        if i == 0 {
            // Side band on the first event: who runs what, where it is mapped.
            a = a.comm(true).comm_exec(true).mmap(true).mmap2(true).task(true);
        }
        builder = builder.event(a);
    }
    // Open: per CPU, per task, per event; one ring per CPU for all of them.
    let mut session = builder.open()?;
    let set = session.event_set();
    let file_attrs: Vec<FileAttr> = (0..set.len())
        .map(|i| FileAttr {
            attr: *set.events()[i].attr(),
            ids: {
                let mut ids: Vec<u64> = set.ids().filter(|e| e.event() == i).map(|e| e.id()).collect();
                ids.sort_unstable();
                ids
            },
        })
        .collect();

    if o.output == "-" {
        let w = Writer::pipe(std::io::BufWriter::new(std::io::stdout().lock()), Endian::NATIVE, file_attrs)?;
        record(w, &o, &mut session, |w| w.finish_pipe().map(drop))
    } else {
        let file = std::io::BufWriter::new(std::fs::File::create(&o.output)?);
        let w = Writer::new(file, Endian::NATIVE, file_attrs)?;
        record(w, &o, &mut session, |w| w.finish().map(drop))
    }
}

#[derive(Default)]
struct Summary {
    by_type: BTreeMap<u32, u64>,
    samples: BTreeMap<usize, u64>,
    bytes: u64,
}

fn record<W: Write>(
    mut w: Writer<W>,
    o: &Options,
    session: &mut Session,
    finish: impl FnOnce(Writer<W>) -> Result<(), perfring_data::Error>,
) -> Result<(), Error> {
    // What already runs: COMM and MMAP2 from /proc, as perf synthesizes them (id 0 goes to the
    // first event).
    if session.pid().is_none() {
        let pids: Vec<i32> = match o.pid {
            Some(pid) => vec![pid],
            None => std::fs::read_dir("/proc")?.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect(),
        };
        for pid in pids {
            synthesize(&mut w, pid)?;
        }
    }
    let mut summary = Summary::default();
    session.start()?; // a command execs: enable_on_exec starts the events
    let progress = !o.quiet && std::io::stderr().is_terminal();
    let start = Instant::now();
    let mut shown = Instant::now();
    loop {
        let ended = session.wait(Some(Duration::from_millis(100)))?;
        drain(&mut w, session, &mut summary)?;
        if ended || interrupted() {
            break;
        }
        if progress && shown.elapsed() > Duration::from_millis(500) {
            shown = Instant::now();
            let samples: u64 = summary.samples.values().sum();
            eprint!(
                "\r[ perfring-record: {:.1} s, {samples} samples, {} lost ]   ",
                start.elapsed().as_secs_f64(),
                session.lost_total()
            );
        }
    }
    session.stop()?;
    drain(&mut w, session, &mut summary)?;
    finish(w)?;
    let status = session.exit_status()?;
    if progress {
        eprintln!();
    }
    // The summary goes to stderr, so that `-o -` keeps stdout for the data.
    let mut e = std::io::stderr().lock();
    writeln!(
        e,
        "perfring-record: {:.2} s, {} bytes written to {}",
        start.elapsed().as_secs_f64(),
        summary.bytes,
        if o.output == "-" { "stdout (pipe mode)" } else { &o.output }
    )?;
    writeln!(e, "  records by type:")?;
    for (t, n) in &summary.by_type {
        writeln!(e, "    {:<32} {n:>9}", perfring::record::type_name(*t))?;
    }
    writeln!(e, "  samples by event:")?;
    for (i, name) in o.events.iter().enumerate() {
        writeln!(e, "    {name:<32} {:>9}", summary.samples.get(&i).unwrap_or(&0))?;
    }
    writeln!(e, "  lost: {} records (PERF_RECORD_LOST)", session.lost_total())?;
    if let Some(code) = status.filter(|&c| c != 0) {
        writeln!(e, "  the command exited with status {code}")?;
    }
    Ok(())
}

/// Drain every ring into the file; a FINISHED_ROUND after the pass.
fn drain<W: Write>(w: &mut Writer<W>, session: &mut Session, summary: &mut Summary) -> Result<(), Error> {
    let mut failed = None;
    session.drain(|r| {
        if failed.is_some() {
            return;
        }
        *summary.by_type.entry(r.header.type_).or_default() += 1;
        summary.bytes += r.bytes.len() as u64;
        if let (types::SAMPLE, Ok(i)) = (r.header.type_, r.event()) {
            *summary.samples.entry(i).or_default() += 1;
        }
        if let Err(e) = w.write_raw(r.bytes, &[]) {
            failed = Some(e);
        }
    })?;
    if let Some(e) = failed {
        return Err(e.into());
    }
    w.finished_round()?;
    Ok(())
}

/// COMM for each thread and MMAP2 for each executable mapping of `pid`, from /proc.
fn synthesize<W: Write>(w: &mut Writer<W>, pid: i32) -> Result<(), Error> {
    let ctx = match w.context(0) {
        Some(c) => c,
        None => return Ok(()),
    };
    let sid = |tid: u32| Some(SampleId { pid: pid as u32, tid, ..SampleId::default() }.masked(ctx.sample_type));
    let Ok(dir) = std::fs::read_dir(format!("/proc/{pid}/task")) else { return Ok(()) };
    for t in dir.flatten() {
        let Some(tid) = t.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else { continue };
        let Ok(comm) = std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")) else { continue };
        let Ok(comm) = std::ffi::CString::new(comm.trim_end()) else { continue };
        let rec = Record::Comm(Comm { misc: 0, pid: pid as u32, tid, comm: &comm, sample_id: sid(tid) });
        w.write_record(&rec, 0)?;
    }
    let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) else { return Ok(()) };
    for line in maps.lines() {
        // start-end perms offset maj:min inode path
        let f: Vec<&str> = line.split_whitespace().collect();
        if f.len() < 6 || !f[1].contains('x') {
            continue;
        }
        let (Some((s, e)), Some((maj, min))) = (f[0].split_once('-'), f[3].split_once(':')) else { continue };
        let hex = |x: &str| u64::from_str_radix(x, 16).unwrap_or(0);
        let prot = [('r', 1), ('w', 2), ('x', 4)].iter().filter(|(c, _)| f[1].contains(*c)).map(|(_, b)| b).sum();
        let Ok(path) = std::ffi::CString::new(f[5..].join(" ")) else { continue };
        let rec = Record::Mmap2(Mmap2 {
            misc: 2, // PERF_RECORD_MISC_USER
            pid: pid as u32,
            tid: pid as u32,
            addr: hex(s),
            len: hex(e).saturating_sub(hex(s)),
            pgoff: hex(f[2]),
            file: Mmap2File::Device {
                maj: hex(maj) as u32,
                min: hex(min) as u32,
                ino: f[4].parse().unwrap_or(0),
                ino_generation: 0,
            },
            prot,
            flags: if f[1].ends_with('p') { 2 } else { 1 }, // MAP_PRIVATE / MAP_SHARED
            filename: &path,
            sample_id: sid(pid as u32),
        });
        w.write_record(&rec, 0)?;
    }
    Ok(())
}
