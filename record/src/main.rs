//! `perfring-record`: sample a command, processes, threads or CPUs into a perf.data file that
//! `perf report` and `perf script` read, as `perf record` does, taking perf record's command
//! line (see [`cli`]).
//!
//! The output is opened before anything runs (a non-empty old file kept as `.old`); a COMMAND
//! is started held before `exec`, its events opened per CPU with `inherit` and
//! `enable_on_exec`. One ring per CPU takes every event's records (`SET_OUTPUT`); the
//! recorder sleeps until a ring's watermark wakeup (3/4 of the ring, 7/8 of a small one; under
//! load one ring of several watched, see `record_loop`) and copies what the rings hold to the
//! file as it is, noting only what the file's features need (samples by event, their times,
//! the files they hit, the mappings). At the end: each event's lost count
//! (`PERF_FORMAT_LOST`) as LOST_SAMPLES records, the features, build ids and the build-id
//! cache. Exit status: the command's (128 + N if signal N killed it), 255 if it could not be
//! executed or recording failed, 129 for a usage error.
//!
//! | module | what |
//! |---|---|
//! | `cli` | the options, parsed as perf's parse-options parses them |
//! | `events` | `-e`: names, raw, PMU terms, tracepoints and globs, groups, modifiers |
//! | `config` | each event's attr as perf's `evsel__config` sets it |
//! | `output` | the output file (`.old`, mode 0600) or stdout |
//! | `record_loop` | start, wait, drain, end |
//! | `switch_output` | `--switch-output`: end the file, rename it, begin the next |
//! | `summary` | perf's summary lines, the `-v` table |

mod cgroups;
mod cli;
mod config;
mod events;
mod output;
mod record_loop;
mod summary;
mod switch_output;

use std::io::Write;
use std::process::ExitCode;

use perfring_linux::launch::{catch_interrupts, Stdout};
use perfring_linux::perf_data::{PerfData, PerfDataError};
use perfring_linux::{OpenError, Scope, Session, SessionError};

use cli::{Options, Parsed};
use events::EventSpec;
use output::Output;

/// Exit statuses of our own (perf's).
const EXIT_FAILED: u8 = 255;
const EXIT_USAGE: u8 = 129;
/// perf's status after `--list-opts`.
const EXIT_LIST: u8 = 130;
/// perf's -EINVAL, for an option value it refuses after parsing (`--strict-freq`).
const EXIT_INVALID: u8 = 234;

type Error = Box<dyn std::error::Error>;

/// Why a recording failed: a usage error (129, perf's for an event it cannot parse), an
/// option value perf refuses once parsed (234), or any other (255).
enum Failure {
    Usage(String),
    Invalid(String),
    Failed(Error),
}

impl<E: Into<Error>> From<E> for Failure {
    fn from(e: E) -> Failure {
        Failure::Failed(e.into())
    }
}

fn main() -> ExitCode {
    // A closed stdout or stderr (`| head`, `2>&-`) is an error to write, never a signal
    // that kills us (Rust ignores SIGPIPE; every write below handles the error).
    match cli::parse(std::env::args().skip(1)) {
        Ok(Parsed::Help) => {
            let _ = writeln!(std::io::stdout(), "{}", cli::help());
            ExitCode::SUCCESS
        }
        Ok(Parsed::ShortHelp) => {
            let _ = writeln!(std::io::stderr(), "{}", cli::help());
            ExitCode::from(EXIT_USAGE)
        }
        Ok(Parsed::ListOpts) => {
            let _ = writeln!(std::io::stdout(), "{}", cli::list_opts());
            ExitCode::from(EXIT_LIST)
        }
        Ok(Parsed::Run(o)) => match run(&o) {
            Ok(status) => ExitCode::from(status),
            Err(Failure::Usage(e)) => {
                let _ = writeln!(std::io::stderr(), "{e}\n\n{}", cli::help());
                ExitCode::from(EXIT_USAGE)
            }
            Err(Failure::Invalid(e)) => {
                let _ = writeln!(std::io::stderr(), "{e}");
                ExitCode::from(EXIT_INVALID)
            }
            Err(Failure::Failed(e)) => {
                let _ = writeln!(std::io::stderr(), "perfring-record: {e}");
                ExitCode::from(EXIT_FAILED)
            }
        },
        Err(e) => {
            let _ = writeln!(std::io::stderr(), " Error: {e}\n\n{}", cli::help());
            ExitCode::from(EXIT_USAGE)
        }
    }
}

/// The events of every `-e`, or perf's default; and each `-e` item's events (a range of
/// the list), for `--filter`.
fn event_specs(o: &Options) -> Result<(Vec<EventSpec>, Vec<std::ops::Range<usize>>), Failure> {
    let mut specs = Vec::new();
    let mut items = Vec::new();
    for e in &o.events {
        let base = specs.len();
        for mut s in events::parse(e).map_err(|e| Failure::Usage(e.to_string()))? {
            s.leader = s.leader.map(|l| l + base);
            specs.push(s);
        }
        items.push(base..specs.len());
    }
    if specs.is_empty() {
        specs.push(events::default_event(events::can_profile_kernel()));
    }
    // --group: every event in the first one's group (perf's evlist__set_leader).
    if o.group && specs.len() > 1 {
        for s in &mut specs[1..] {
            s.leader = Some(0);
        }
    }
    // --all-user/--all-kernel before anything is named by its attr (perf's default event and
    // its cpu-clock fallback: `cpu-clock:uhppp`); `-e` events keep the names they were given.
    for s in &mut specs {
        s.attr.flags = config::exclusive(o, s.attr.flags);
    }
    Ok((specs, items))
}

/// Each event's `--filter`s and `--exclude-perf`s, joined as perf joins them (`(a) && (b)`);
/// perf's usage errors where one follows an event that is not a tracepoint (the software and
/// hardware PMUs here have no address filters).
fn filters(o: &Options, specs: &[EventSpec], items: &[std::ops::Range<usize>]) -> Result<Vec<Option<String>>, Failure> {
    let mut out: Vec<Option<String>> = vec![None; specs.len()];
    for filter in &o.filters {
        for i in items.get(filter.item).cloned().unwrap_or_default() {
            if specs[i].attr.type_ != perfring_linux::attr::event_type::TRACEPOINT {
                let why = if filter.exclude_perf {
                    "--exclude-perf option should follow a -e tracepoint option"
                } else {
                    "This CPU does not support address filtering"
                };
                return Err(Failure::Usage(why.into()));
            }
            let text = &filter.text;
            out[i] = Some(match out[i].take() {
                None => text.clone(),
                Some(old) => format!("({old}) && ({text})"),
            });
        }
    }
    Ok(out)
}

/// What the options call for before anything runs: perf's refusals of values it parsed
/// (status 234), its notices, and the options not implemented yet.
fn preflight(o: &Options) -> Result<(), Failure> {
    // perf's record_opts__config, after parsing (-EINVAL: 234).
    if o.freq == Some(cli::Freq::Hz(0)) {
        return Err(Failure::Invalid("frequency and count are zero, aborting".into()));
    }
    if o.freq.is_some() && o.period.is_some() {
        return Err(Failure::Invalid("cannot set frequency and period at the same time".into()));
    }
    if let Some(why) = o.aux {
        return Err(Failure::Invalid(why.into()));
    }
    if let Some(v) = o.vmlinux.as_deref().filter(|v| !std::path::Path::new(v).is_file()) {
        return Err(Failure::Invalid(format!("Invalid file: {v}")));
    }
    let pending = [
        (o.per_thread, "--per-thread"),
        (o.threads.is_some(), "--threads"),
        (!o.cgroups.is_empty(), "-G/--cgroup"),
        (o.all_cgroups, "--all-cgroups"),
        (o.namespaces, "--namespaces"),
        (o.kcore, "--kcore"),
        (o.uid.is_some(), "-u/--uid"),
        (o.aio > 0, "--aio"),
        (o.affinity != cli::Affinity::System, "--affinity"),
        (o.mmap_flush.is_some(), "--mmap-flush"),
        (o.proc_map_timeout.is_some(), "--proc-map-timeout"),
    ];
    if let Some((_, name)) = pending.iter().find(|(given, _)| *given) {
        return Err(Failure::Usage(format!("{name}: not implemented yet in perfring-record")));
    }
    if !o.quiet {
        o.notices.iter().for_each(|n| eprintln!("{n}"));
    }
    Ok(())
}

fn run(o: &Options) -> Result<u8, Failure> {
    preflight(o)?;
    let (mut specs, items) = event_specs(o)?;
    let filters = filters(o, &specs, &items)?;
    if o.mmap_pages.is_some_and(|(_, rounded)| rounded) && !o.quiet {
        let kib = o.pages() * 4;
        let size = if kib >= 1024 { format!("{}M", kib / 1024) } else { format!("{kib}K") };
        eprintln!("rounding mmap pages size to {size} ({} pages)", o.pages());
    }
    let freq = config::frequency(o).map_err(Failure::Invalid)?;
    if matches!(o.call_graph, Some(cli::CallGraph::Dwarf { .. })) && o.user_regs.is_some() && !o.quiet {
        eprintln!(
            "WARNING: The use of --call-graph=dwarf may require all the user registers, specifying a subset with \
             --user-regs may render DWARF unwinding unreliable, so the minimal registers set (IP, SP) is explicitly \
             forced."
        );
    }
    if o.dry_run {
        return Ok(0);
    }
    // The output first: a path that cannot be written stops everything before it runs.
    let output = output::open(o.output())?;
    catch_interrupts()?;
    let scope = if let Some(cpus) = &o.cpus {
        Scope::Cpus(cpus.clone())
    } else if o.all_cpus {
        Scope::AllCpus
    } else if !o.pids.is_empty() {
        Scope::Processes(o.pids.clone())
    } else if !o.tids.is_empty() {
        Scope::Threads(o.tids.clone())
    } else {
        Scope::Command(o.command.clone())
    };
    let stdout = if matches!(output, Output::Stdout) { Stdout::ToStderr } else { Stdout::Inherit };
    let open = |specs: &[EventSpec]| {
        let configured = config::configure(o, specs, freq);
        let mut b = Session::builder(scope.clone())
            .data_pages(o.pages())
            .command_stdout(stdout)
            .attrs_as_given(true)
            .overwrite(o.overwrite);
        for c in &configured {
            b = match c.leader {
                Some(l) => b.group_member(c.attr, l),
                None => b.event(c.attr),
            };
        }
        (b.open(), configured)
    };
    let mut warned = false;
    let (session, configured) = loop {
        match open(&specs) {
            // Kernel samples where permitted, as perf: an event refused at a paranoid level
            // above 1 is opened again counting user space only (events::user_only), one by one.
            (Err(SessionError::Open { event, error: OpenError::PermissionDenied { paranoid, .. }, .. }), _)
                if event < specs.len()
                    && paranoid.map_or(true, |p| p > 1)
                    && events::user_only(&specs[event]).is_some() =>
            {
                if let Some(u) = events::user_only(&specs[event]) {
                    specs[event] = u;
                }
                if !o.quiet && !std::mem::replace(&mut warned, true) {
                    eprintln!(
                        "perfring-record: warning: kernel samples not permitted (perf_event_paranoid is {}): \
                         recording user space only (as perf record does; lower \
                         /proc/sys/kernel/perf_event_paranoid or add :u to silence this)",
                        paranoid.map_or("unreadable".to_string(), |p| p.to_string())
                    );
                }
            }
            // No PMU: cycles falls back to cpu-clock (perf says so with -v); other hardware
            // events are refused with perf's words.
            (Err(SessionError::Open { event, error: OpenError::NotSupported { .. }, .. }), configured)
                if event < specs.len() =>
            {
                let Some(f) = events::fallback(&specs[event]) else {
                    let name = &configured[event].name;
                    // perf's evsel__open_strerror for EOPNOTSUPP.
                    let why = if configured[event].attr.attr().sample_type & perfring::record::sample_type::BRANCH_STACK
                        != 0
                    {
                        format!("{name}: PMU Hardware or event type doesn't support branch stack sampling.")
                    } else {
                        format!("The {name} event is not supported.")
                    };
                    return Err(Failure::Failed(format!("Error:\n{why}").into()));
                };
                if o.verbose > 0 && !o.quiet {
                    eprintln!("Warning:\nThe cycles event is not supported, trying to fall back to cpu-clock-ticks");
                }
                specs[event] = f;
            }
            (r, configured) => break (r, configured),
        }
    };
    let mut session = session?;
    // -r: the recorder real-time once its command is held (the command keeps its policy).
    if let Some(priority) = o.realtime {
        perfring_linux::launch::set_realtime(priority)
            .map_err(|_| Failure::Failed("Could not set realtime priority.".into()))?;
    }
    let names: Vec<String> = configured.iter().map(|c| c.name.clone()).collect();
    for (event, p) in session.events().zip(session.placements()) {
        let Some(Some(filter)) = filters.get(p.event) else { continue };
        if let Err(e) = event.set_filter(filter) {
            // perf's words: `failed to set filter "F" on event E with 22 (Invalid argument)`.
            let (errno, why) = match &e {
                perfring_linux::Error::Io { error, .. } => {
                    let text = error.to_string();
                    let why = text.split(" (os error").next().unwrap_or("").to_string();
                    (error.raw_os_error().unwrap_or(0), why)
                }
                other => (0, other.to_string()),
            };
            return Err(Failure::Failed(
                format!("failed to set filter \"{filter}\" on event {} with {errno} ({why})", names[p.event]).into(),
            ));
        }
    }
    match output {
        Output::Stdout => {
            let out =
                std::io::BufWriter::with_capacity(perfring_linux::perf_data::OUTPUT_BUFFER, std::io::stdout().lock());
            let d = PerfData::pipe(out, &session, &names)?;
            record(d, o, &mut session, &names, None)
        }
        Output::File(file) => {
            let d = PerfData::new(file, &session, &names).map_err(|e| format!("writing {}: {e}", o.output()))?;
            let mut switch = |d: &mut PerfData<_>, session: &mut Session, dumps: &mut switch_output::Dumps| {
                switch_output::switch(d, o, session, &names, dumps)
            };
            let switch: Option<record_loop::Switch<'_, _>> = o.switch_output.is_some().then_some(&mut switch);
            record(d, o, &mut session, &names, switch)
        }
    }
}

/// COMM and MMAP2 of what runs now, from /proc: every process (`-a`, `-C`), or those of `-p`
/// and `-t`.
fn synthesize<W: Write>(d: &mut PerfData<W>, o: &Options) -> Result<(), PerfDataError> {
    if o.all_cpus || o.cpus.is_some() {
        d.synthesize_all()?;
    }
    for &pid in o.pids.iter().chain(&o.tids) {
        d.synthesize(pid)?;
    }
    Ok(())
}

/// What a file dumped by `--switch-output` begins with after the attrs (perf's
/// `record__synthesize` and, for a command, `record__synthesize_workload`): what runs, the
/// command's threads, FINISHED_INIT.
fn begin<W: Write>(d: &mut PerfData<W>, o: &Options, session: &Session) -> Result<(), Error> {
    if !o.tail_synthesize {
        synthesize(d, o)?;
    }
    if let Some(pid) = session.pid() {
        d.synthesize(pid)?;
    }
    if !o.tail_synthesize {
        d.finish_init()?;
    }
    Ok(())
}

/// What an overwrite session's file ends with (perf's tail synthesis, which `--overwrite`
/// implies): the rings kept only their newest records, so the side band of what runs now (the
/// maps of processes started during the recording) follows them; and the command's name, whose
/// exec COMM the ring may have overwritten (perf reads it from the command's /proc entry before
/// reaping it; ours may be reaped, so it is named as the kernel names it at exec: the program's
/// base name, 15 bytes at most). With `--tail-synthesize`, what runs, synthesized here
/// instead of at the start. With `--buildid-all`, every file mapped counted as hit. Nothing
/// for other sessions.
fn tail<W: Write>(d: &mut PerfData<W>, o: &Options, session: &Session) -> Result<(), Error> {
    if o.buildid_all {
        d.hit_all_dsos();
    }
    if o.overwrite || o.tail_synthesize {
        synthesize(d, o)?;
    }
    if o.tail_synthesize {
        // FINISHED_INIT after the synthesized records, which perf writes last in this mode.
        d.finish_init()?;
    }
    if !o.overwrite {
        return Ok(());
    }
    if let (Some(pid), Some(program)) = (session.pid(), o.command.first()) {
        let base = program.rsplit('/').next().unwrap_or(program);
        let end = (0..=base.len().min(15)).rev().find(|&i| base.is_char_boundary(i)).unwrap_or(0);
        d.synthesize_comm(pid, &base[..end])?;
    }
    Ok(())
}

fn record<W: Write>(
    mut d: PerfData<W>,
    o: &Options,
    session: &mut Session,
    names: &[String],
    switch: Option<record_loop::Switch<'_, W>>,
) -> Result<u8, Failure> {
    if let Some(level) = o.compression {
        d.writer().compress(level).map_err(PerfDataError::from)?;
    }
    // What already runs: COMM and MMAP2 from /proc, as perf synthesizes them (at the end
    // instead with --tail-synthesize).
    if !o.tail_synthesize {
        synthesize(&mut d, o)?;
    }
    if let Some(pid) = session.pid() {
        d.synthesize_command(pid)?;
    }
    if !o.tail_synthesize {
        d.finish_init()?;
    }
    let mut dumps = switch_output::Dumps::default();
    let recorded = record_loop::record(&mut d, o, session, switch, &mut dumps);
    if recorded.is_ok() {
        tail(&mut d, o, session)?;
    }
    let lost = match &recorded {
        Ok(_) => d.write_lost_samples(session)?,
        Err(_) => vec![0; names.len()],
    };
    let samples = d.samples().to_vec();
    let records = d.records();
    let bytes = d.bytes();
    let lost_records = (session.lost_total(), records.get(&perfring::record::types::LOST).copied().unwrap_or(0));
    // The file is completed whatever happened (an unexecutable command leaves it empty).
    let finished = d.finish_with(!o.no_buildid, !o.no_buildid && !o.no_buildid_cache);
    let recorded = recorded?;
    let written = finished?;
    // --timestamp-filename (and --switch-output): the last file is renamed too; perf's summary
    // then names it FILE.<timestamp>.
    let output = if o.timestamp_filename {
        drop(written.0);
        dumps.rename(o)?;
        format!("{}.<timestamp>", o.output())
    } else {
        o.output().to_string()
    };
    if !o.quiet {
        summary::print(
            &summary::Summary {
                wakeups: recorded.wakeups,
                bytes: written.1,
                original: o.compression.map(|_| bytes),
                output: &output,
                samples: &samples,
                lost: &lost,
                lost_records,
                names,
                records,
                seconds: recorded.seconds,
                status: recorded.status,
            },
            o.verbose > 0,
        );
    }
    Ok(recorded.status.map_or(0, |s| s.clamp(0, 255) as u8))
}
