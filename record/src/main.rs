//! `perfring-record`: sample a command, a process or every CPU into a perf.data file that
//! `perf report` and `perf script` read, as `perf record` does (see [`USAGE`]).
//!
//! The output is opened before anything runs; a COMMAND is started held before `exec`, its
//! events opened per CPU with `inherit` and `enable_on_exec`. One ring per CPU takes every
//! event's records (`SET_OUTPUT`); rings are drained on their watermark wakeups (a quarter of
//! the ring) and once more at the end, a FINISHED_ROUND after each pass. The file is written by
//! `perfring_linux::perf_data` (attrs with ids, side band from /proc, tracing data, feature
//! sections, build ids). Exit status: the command's (128 + N if signal N killed it), 255 if
//! it could not be executed or recording failed, 129 for a usage error.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use perfring::record::sample_type as st;
use perfring_linux::attr::{event_type, software};
use perfring_linux::launch::{catch_interrupts, interrupted, signal_process, Stdout, SIGINT, SIGTERM};
use perfring_linux::perf_data::PerfData;
use perfring_linux::{EventAttr, OpenError, Scope, Session, SessionError};

/// `perfring-record --help`.
const USAGE: &str = "\
usage: perfring-record [OPTIONS] [-- COMMAND [ARG]...]

Sample COMMAND (or a process, or every CPU) into a perf.data file for perf report/perf script.

  -e, --event EVENT[,EVENT]...  events to sample (repeatable); default cpu-clock:
                                software: cpu-clock task-clock page-faults (faults) minor-faults
                                  major-faults context-switches (cs) cpu-migrations (migrations)
                                  alignment-faults emulation-faults dummy
                                tracepoints: GROUP:NAME (sched:sched_switch; needs tracefs mounted)
                                modifiers: EVENT:u (user only), :k (kernel only), :h, combined (:uk)
  -F, --freq FREQ               sample about FREQ times a second (default 4000; at most
                                /proc/sys/kernel/perf_event_max_sample_rate)
  -c, --count PERIOD            sample every PERIOD events (tracepoints: default 1)
  -a, --all-cpus                every CPU (with a COMMAND: for as long as it runs)
  -p, --pid PID                 a running process's threads (with a COMMAND: while it runs)
  -g                            call chains
  -m, --mmap-pages PAGES        data pages of each CPU's ring, a power of two (default 128)
  -o, --output FILE             output file (default perf.data); - writes pipe mode to stdout,
                                the command's stdout then going to stderr
  -q, --quiet                   no summary
  -h, --help                    this help

Kernel samples are included when perf_event_paranoid allows them (as root, or at a level <= 1),
else left out with a warning, as perf record does. Exit status: the command's (128+N if killed by
signal N); 255 if it cannot be executed or recording fails; 129 for a usage error.";

/// Exit statuses of our own (perf's).
const EXIT_FAILED: u8 = 255;
const EXIT_USAGE: u8 = 129;

#[derive(Debug)]
struct Options {
    events: Vec<String>,
    freq: Option<u64>,
    period: Option<u64>,
    all_cpus: bool,
    pid: Option<i32>,
    callchain: bool,
    pages: usize,
    quiet: bool,
    output: String,
    command: Vec<String>,
}

/// What `parse` ends in besides options.
enum Parsed {
    Run(Options),
    Help,
}

fn number<T: std::str::FromStr>(option: &str, v: String) -> Result<T, String> {
    v.parse().map_err(|_| format!("{option} takes a number, not {v:?}"))
}

fn parse(args: impl IntoIterator<Item = String>) -> Result<Parsed, String> {
    let mut o = Options {
        events: Vec::new(),
        freq: None,
        period: None,
        all_cpus: false,
        pid: None,
        callchain: false,
        pages: 128,
        quiet: false,
        output: "perf.data".into(),
        command: Vec::new(),
    };
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        let mut value = || args.next().ok_or(format!("{a} needs a value"));
        match a.as_str() {
            "-e" | "--event" => o.events.extend(value()?.split(',').map(str::to_string)),
            "-F" | "--freq" => o.freq = Some(number("-F", value()?)?),
            "-c" | "--count" => o.period = Some(number("-c", value()?)?),
            "-a" | "--all-cpus" => o.all_cpus = true,
            "-p" | "--pid" => o.pid = Some(number("-p", value()?)?),
            "-g" => o.callchain = true,
            "-m" | "--mmap-pages" => o.pages = number("-m", value()?)?,
            "-q" | "--quiet" => o.quiet = true,
            "-o" | "--output" => o.output = value()?,
            "-h" | "--help" => return Ok(Parsed::Help),
            "--" => {
                o.command = args.by_ref().collect();
                break;
            }
            other if !other.starts_with('-') => {
                o.command = std::iter::once(other.to_string()).chain(args.by_ref()).collect();
                break;
            }
            other => return Err(format!("unknown option {other}")),
        }
    }
    if o.command.is_empty() && !o.all_cpus && o.pid.is_none() {
        return Err("give a COMMAND, -p PID or -a".into());
    }
    if o.all_cpus && o.pid.is_some() {
        return Err("-a and -p exclude each other".into());
    }
    if o.freq == Some(0) {
        return Err("-F 0 samples nothing: give a frequency of at least 1 Hz".into());
    }
    if o.period == Some(0) {
        return Err("-c 0 samples nothing: give a period of at least 1 event".into());
    }
    if o.freq.is_some() && o.period.is_some() {
        return Err("-F and -c exclude each other".into());
    }
    if !o.pages.is_power_of_two() {
        return Err(format!("-m {}: the ring needs a power of two of pages (1, 2, 4, ...)", o.pages));
    }
    if o.events.is_empty() {
        o.events.push("cpu-clock".into());
    }
    Ok(Parsed::Run(o))
}

fn software_config(name: &str) -> Option<software::SoftwareEvent> {
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

/// One `-e` item: the event and its modifiers (`u`, `k`, `h`: what to count; none: all that
/// is permitted).
#[derive(Debug, Clone, PartialEq)]
struct EventSpec {
    name: String,
    attr: EventAttr,
    /// Modifiers given: the exclude bits follow them and are never relaxed or tightened.
    modified: bool,
}

fn event_spec(item: &str) -> Result<EventSpec, String> {
    let (base, mods) = match item.split(':').collect::<Vec<_>>()[..] {
        [name] => (name.to_string(), None),
        [name, m] if software_config(name).is_some() => (name.to_string(), Some(m)),
        [group, name] => (format!("{group}:{name}"), None),
        [group, name, m] => (format!("{group}:{name}"), Some(m)),
        _ => return Err(format!("cannot parse event {item:?}")),
    };
    let attr = match software_config(&base) {
        Some(config) => EventAttr::software(config),
        None if base.contains(':') => EventAttr::tracepoint(&base).map_err(|e| e.to_string())?,
        None => return Err(format!("unknown event {base} (software events and tracepoints GROUP:NAME; see --help)")),
    };
    let (mut u, mut k, mut h) = (true, true, true);
    if let Some(m) = mods {
        if m.is_empty() || !m.chars().all(|c| "ukh".contains(c)) {
            return Err(format!("unknown modifier :{m} in {item} (u: user, k: kernel, h: hypervisor)"));
        }
        (u, k, h) = (m.contains('u'), m.contains('k'), m.contains('h'));
    }
    // perf's default, and its `u` modifier, also leave the guest out (`exclude_guest`: perf
    // records a host's own activity unless asked for a guest's); `k` or `h` alone do not.
    let guest = mods.is_some_and(|m| !m.contains('u'));
    let attr = attr.exclude_user(!u).exclude_kernel(!k).exclude_hv(!h).exclude_guest(!guest);
    Ok(EventSpec { name: item.to_string(), attr, modified: mods.is_some() })
}

fn main() -> ExitCode {
    match parse(std::env::args().skip(1)) {
        Ok(Parsed::Help) => {
            println!("{USAGE}");
            ExitCode::SUCCESS
        }
        Ok(Parsed::Run(o)) => match run(&o) {
            Ok(status) => ExitCode::from(status),
            Err(e) => {
                eprintln!("perfring-record: {e}");
                ExitCode::from(EXIT_FAILED)
            }
        },
        Err(e) => {
            eprintln!("perfring-record: {e}\n\n{USAGE}");
            ExitCode::from(EXIT_USAGE)
        }
    }
}

type Error = Box<dyn std::error::Error>;

/// `/proc/sys/kernel/perf_event_max_sample_rate`.
fn max_sample_rate() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate").ok()?.trim().parse().ok()
}

/// The attrs of every event, as perf configures them (`evsel__config`): IP|TID|TIME|PERIOD,
/// CPU with -a and for tracepoints (which add RAW and sample every event by default),
/// CALLCHAIN with -g, and with several events ID (IDENTIFIER where their sample types differ).
fn attrs(o: &Options, specs: &[EventSpec], exclude_kernel_fallback: bool) -> Vec<EventAttr> {
    let mut freq = o.freq;
    if let (Some(f), Some(max)) = (freq, max_sample_rate()) {
        if f > max {
            freq = Some(max);
        }
    }
    let ring_bytes = o.pages * 4096;
    let types: Vec<u64> = specs
        .iter()
        .map(|s| {
            let mut t = st::IP | st::TID | st::TIME | st::PERIOD;
            if o.all_cpus {
                t |= st::CPU;
            }
            if s.attr.attr().type_ == event_type::TRACEPOINT {
                t |= st::CPU | st::RAW;
            }
            if o.callchain {
                t |= st::CALLCHAIN;
            }
            t
        })
        .collect();
    let id = match specs.len() {
        1 => 0,
        _ if types.iter().all(|&t| t == types[0]) => st::ID,
        _ => st::IDENTIFIER,
    };
    specs
        .iter()
        .zip(&types)
        .enumerate()
        .map(|(i, (s, &t))| {
            let tracepoint = s.attr.attr().type_ == event_type::TRACEPOINT;
            let mut a = match (o.period, freq) {
                (Some(p), _) => s.attr.sample_period(p),
                (None, Some(f)) => s.attr.sample_freq(f),
                (None, None) if tracepoint => s.attr.sample_period(1),
                (None, None) => s.attr.sample_freq(4000),
            };
            if exclude_kernel_fallback && !s.modified {
                a = a.exclude_kernel(true).exclude_hv(true);
            }
            a = a
                .sample_type(t | id)
                .sample_id_all(true)
                .exclude_callchain_kernel(false)
                .wakeup_watermark((ring_bytes / 4) as u32);
            if i == 0 {
                // Side band on the first event: who runs what, where it is mapped.
                a = a.comm(true).comm_exec(true).mmap(true).mmap2(true).task(true);
            }
            a
        })
        .collect()
}

/// Where the data goes, opened before anything runs.
enum Output {
    File(std::io::BufWriter<std::fs::File>),
    Stdout,
}

fn run(o: &Options) -> Result<u8, Error> {
    let specs: Vec<EventSpec> = o.events.iter().map(|e| event_spec(e)).collect::<Result<_, _>>()?;
    if let (Some(f), Some(max)) = (o.freq, max_sample_rate()) {
        if f > max {
            eprintln!(
                "perfring-record: warning: -F {f} is above the kernel's maximum sample rate, {max} Hz \
                 (/proc/sys/kernel/perf_event_max_sample_rate): sampling at {max} Hz. Raise the sysctl to \
                 sample faster (the kernel lowers it when sampling interrupts take too long)."
            );
        }
    }
    // The output first: a path that cannot be written stops everything before it runs.
    let output = match o.output.as_str() {
        "-" => Output::Stdout,
        path => Output::File(PerfData::create_file(path)?),
    };
    catch_interrupts()?;
    let pipe = matches!(output, Output::Stdout);
    let scope = match (o.all_cpus, o.pid) {
        (true, _) => Scope::AllCpus,
        (false, Some(pid)) => Scope::Process(pid),
        (false, None) => Scope::Command(o.command.clone()),
    };
    let stdout = if pipe { Stdout::ToStderr } else { Stdout::Inherit };
    let open = |fallback: bool| {
        let mut b = Session::builder(scope.clone()).data_pages(o.pages).command_stdout(stdout);
        for a in attrs(o, &specs, fallback) {
            b = b.event(a);
        }
        b.open()
    };
    // Kernel samples where permitted, as perf: refused, then user space only, with a warning.
    let session = match open(false) {
        Err(SessionError::Open { error: OpenError::PermissionDenied { paranoid, .. }, .. })
            if specs.iter().any(|s| !s.modified) =>
        {
            eprintln!(
                "perfring-record: warning: kernel samples not permitted (perf_event_paranoid is {}): recording \
                 user space only (as perf record does; lower /proc/sys/kernel/perf_event_paranoid or add :u to \
                 silence this)",
                paranoid.map_or("unreadable".to_string(), |p| p.to_string())
            );
            open(true)
        }
        r => r,
    };
    let mut session = session?;
    let names: Vec<String> = specs.iter().map(|s| s.name.clone()).collect();
    match output {
        Output::Stdout => {
            let out = std::io::BufWriter::new(std::io::stdout().lock());
            let d = PerfData::pipe(out, &session, &names)?;
            record(d, o, &mut session)
        }
        Output::File(file) => {
            let d = PerfData::new(file, &session, &names).map_err(|e| format!("writing {}: {e}", o.output))?;
            record(d, o, &mut session)
        }
    }
}

/// A COMMAND run beside `-a`/`-p`: it decides how long the recording lasts.
struct Beside(std::process::Child);

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

fn record<W: Write>(mut d: PerfData<W>, o: &Options, session: &mut Session) -> Result<u8, Error> {
    // What already runs: COMM and MMAP2 from /proc, as perf synthesizes them.
    match (o.all_cpus, o.pid) {
        (true, _) => d.synthesize_all()?,
        (false, Some(pid)) => d.synthesize(pid)?,
        _ => {}
    }
    let start = Instant::now();
    if let Err(e) = session.start() {
        // The command could not be executed: nothing ran; the file is left complete and empty.
        d.finish()?;
        return Err(e.into());
    }
    let mut beside = None;
    if session.pid().is_none() && !o.command.is_empty() {
        let mut c = std::process::Command::new(&o.command[0]);
        c.args(&o.command[1..]);
        if o.output == "-" {
            c.stdout(std::io::stderr());
        }
        match c.spawn() {
            Ok(child) => beside = Some(Beside(child)),
            Err(e) => {
                session.stop()?;
                d.finish()?;
                return Err(format!("cannot execute {}: {e}", o.command[0]).into());
            }
        }
    }
    let progress = !o.quiet && std::io::stderr().is_terminal();
    let mut shown = Instant::now();
    let mut status: Option<i32> = None;
    let mut interrupt_sent: Option<Instant> = None;
    loop {
        let mut ended = session.wait(Some(Duration::from_millis(100)))?;
        d.drain(session)?;
        if let Some(Beside(child)) = &mut beside {
            if let Some(s) = child.try_wait()? {
                status = Some(exit_code(s));
                ended = true;
            }
        }
        if ended {
            break;
        }
        if interrupted() {
            // Passed on to the command, as perf does; the recording ends when it does (a
            // command that outlives the interrupt by a second gets SIGTERM).
            match interrupt_sent {
                None => {
                    interrupt_sent = Some(Instant::now());
                    session.signal_command(SIGINT)?;
                    if let Some(Beside(child)) = &mut beside {
                        signal_child(child, SIGINT);
                    }
                    if session.pid().is_none() && beside.is_none() {
                        break; // nothing to wait for: -a or -p alone
                    }
                }
                Some(at) if at.elapsed() > Duration::from_secs(1) => {
                    session.signal_command(SIGTERM)?;
                    if let Some(Beside(child)) = &mut beside {
                        signal_child(child, SIGTERM);
                    }
                }
                Some(_) => {}
            }
        }
        if progress && shown.elapsed() > Duration::from_millis(500) {
            shown = Instant::now();
            let samples: u64 = d.samples().iter().sum();
            eprint!(
                "\r[ perfring-record: {:.1} s, {samples} samples, {} lost ]   ",
                start.elapsed().as_secs_f64(),
                session.lost_total()
            );
        }
    }
    session.stop()?;
    d.drain(session)?;
    if let Some(Beside(mut child)) = beside.take() {
        status = Some(status.map_or_else(|| child.wait().map(exit_code), Ok)?);
    }
    if let Some(s) = session.exit_status()? {
        status = Some(s);
    }
    let samples = d.samples().to_vec();
    let records = d.records().clone();
    let bytes = d.bytes();
    d.finish()?;
    if progress {
        eprintln!();
    }
    if !o.quiet {
        // The summary goes to stderr, so that `-o -` keeps stdout for the data.
        let mut e = std::io::stderr().lock();
        writeln!(
            e,
            "perfring-record: {:.2} s, {bytes} bytes written to {}",
            start.elapsed().as_secs_f64(),
            if o.output == "-" { "stdout (pipe mode)" } else { &o.output }
        )?;
        writeln!(e, "  records by type:")?;
        for (t, n) in &records {
            writeln!(e, "    {:<32} {n:>9}", perfring::record::type_name(*t))?;
        }
        writeln!(e, "  samples by event:")?;
        for (name, n) in o.events.iter().zip(&samples) {
            writeln!(e, "    {name:<32} {n:>9}")?;
        }
        writeln!(e, "  lost: {} records (PERF_RECORD_LOST)", session.lost_total())?;
        if let Some(code) = status.filter(|&c| c != 0) {
            writeln!(e, "  the command exited with status {code}")?;
        }
    }
    Ok(status.map_or(0, |s| s.clamp(0, 255) as u8))
}

/// Send `signal` to a child run beside the recording (it may have exited meanwhile: ignored).
fn signal_child(child: &std::process::Child, signal: i32) {
    let _ = signal_process(child.id() as i32, signal);
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfring::record::attr_flags;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(String::from).collect()
    }

    #[test]
    fn zero_frequency_zero_period_and_bad_ring_sizes_are_refused() {
        for bad in ["-F 0 -- true", "-c 0 -- true", "-m 3 -- true", "-F 10 -c 10 -- true", "-a -p 1", "-o x"] {
            assert!(parse(args(bad)).is_err(), "{bad}");
        }
        assert!(matches!(parse(args("--help")), Ok(Parsed::Help)));
        let Ok(Parsed::Run(o)) = parse(args("-e a,b:u -e c -m 8 -- x y")) else { panic!() };
        assert_eq!((o.events, o.pages, o.command, o.output), (args("a b:u c"), 8, args("x y"), "perf.data".into()));
    }

    #[test]
    fn modifiers_set_the_exclude_bits_as_perf_does() {
        let bits = |e: &str| {
            let a = event_spec(e).unwrap().attr;
            let f = a.attr().flags;
            [attr_flags::EXCLUDE_USER, attr_flags::EXCLUDE_KERNEL, attr_flags::EXCLUDE_HV, attr_flags::EXCLUDE_GUEST]
                .map(|m| f & m != 0)
        };
        // As `perf record -e … ; perf evlist -v` shows perf 6.1 setting them.
        assert_eq!(bits("cpu-clock"), [false, false, false, true]);
        assert_eq!(bits("cpu-clock:u"), [false, true, true, true]);
        assert_eq!(bits("page-faults:k"), [true, false, true, false]);
        assert_eq!(bits("cs:uk"), [false, false, true, true]);
        assert!(event_spec("cpu-clock:x").is_err());
        assert!(event_spec("no-such-event").is_err());
    }
}
