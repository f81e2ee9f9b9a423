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
//! | `cli` | the options: one table, perf's grammar, the help |
//! | `events` | `-e`: names, raw, PMU terms, tracepoints and globs, groups, modifiers |
//! | `config` | each event's attr as perf's `evsel__config` sets it |
//! | `setup` | the events, their filters, perf's checks, the session opened with perf's fallbacks |
//! | `output` | the output file (`.old`, mode 0600) or stdout |
//! | `aio` | `--aio`: the output written by a thread of its own |
//! | `failure` | why a recording failed, and perf's exit statuses |
//! | `recording` | [`recording::Recording`]: the session and its perf.data, begin / drain / switch / finish |
//! | `record_loop` | start, wait, drain, end |
//! | `switch_output` | `--switch-output`: when, and the renamed files |
//! | `threads` | `--threads`: the readers' masks, their threads, the directory |
//! | `summary` | perf's summary lines, the `-v` table |

mod aio;
mod cli;
mod config;
mod events;
mod failure;
mod output;
mod record_loop;
mod recording;
mod setup;
mod summary;
mod switch_output;
mod threads;

use std::io::{BufWriter, Write};
use std::process::ExitCode;

use perfring_linux::launch::{catch_interrupts, Stdout};
use perfring_linux::perf_data::{PerfData, OUTPUT_BUFFER};
use perfring_linux::Session;

use cli::{Options, Parsed};
use failure::{Error, Failure, EXIT_FAILED, EXIT_INVALID, EXIT_LIST, EXIT_USAGE};
use output::{FileOut, Output};
use recording::Recording;

fn main() -> ExitCode {
    // A closed stdout or stderr (`| head`, `2>&-`) is an error to write, never a signal
    // that kills us (Rust ignores SIGPIPE; every write below handles the error).
    let (status, out, err) = match cli::parse(std::env::args().skip(1)) {
        Ok(Parsed::Help) => (0, cli::help(), String::new()),
        Ok(Parsed::ShortHelp) => (EXIT_USAGE, String::new(), cli::help()),
        Ok(Parsed::ListOpts) => (EXIT_LIST, cli::list_opts(), String::new()),
        Ok(Parsed::Run(o)) => match run(&o) {
            Ok(status) => (status, String::new(), String::new()),
            Err(Failure::Usage(e)) => (EXIT_USAGE, String::new(), format!("{e}\n\n{}", cli::help())),
            Err(Failure::Invalid(e)) => (EXIT_INVALID, String::new(), e),
            Err(Failure::Failed(e)) => (EXIT_FAILED, String::new(), format!("perfring-record: {e}")),
            Err(Failure::Said(e, status)) => (status, String::new(), e),
        },
        Err(e) => (EXIT_USAGE, String::new(), format!(" Error: {e}\n\n{}", cli::help())),
    };
    if !out.is_empty() {
        let _ = writeln!(std::io::stdout(), "{out}");
    }
    if !err.is_empty() {
        let _ = writeln!(std::io::stderr(), "{err}");
    }
    ExitCode::from(status)
}

/// Check, open, record, finish.
fn run(o: &Options) -> Result<u8, Failure> {
    setup::preflight(o)?;
    let (mut specs, items) = setup::event_specs(o)?;
    let filters = setup::filters(o, &specs, &items)?;
    let cgroups = setup::cgroups(o, &specs, &items)?;
    let freq = config::frequency(o).map_err(Failure::Invalid)?;
    if o.dry_run {
        return Ok(0);
    }
    // The output first: a path that cannot be written stops everything before it runs.
    let output = match &o.threads {
        Some(spec) => threaded_output(o, spec)?,
        None => output::open(o.output(), o.aio.max(0) as usize)?,
    };
    catch_interrupts()?;
    let stdout = if matches!(output, Output::Stdout) { Stdout::ToStderr } else { Stdout::Inherit };
    let (session, configured) = setup::open(o, (&mut specs, &cgroups), freq, stdout)?;
    // -r: the recorder real-time once its command is held (the command keeps its policy).
    if let Some(priority) = o.realtime {
        perfring_linux::launch::set_realtime(priority)
            .map_err(|_| Failure::Failed("Could not set realtime priority.".into()))?;
    }
    let names: Vec<String> = configured.iter().map(|c| c.name.clone()).collect();
    setup::set_filters(&session, &filters, &names)?;
    match output {
        Output::Stdout => {
            let out = BufWriter::with_capacity(OUTPUT_BUFFER, std::io::stdout().lock());
            let data = PerfData::pipe(out, &session, &names)?;
            record(o, Recording::begin(o, session, data, names, None)?)
        }
        Output::File(file) => {
            let data = PerfData::new(file, &session, &names).map_err(|e| format!("writing {}: {e}", o.output()))?;
            record(o, Recording::begin(o, session, data, names, Some(next_file))?)
        }
        Output::Directory(file, groups) => {
            let data = PerfData::new(file, &session, &names).map_err(|e| format!("writing {}: {e}", o.output()))?;
            let mut rec = Recording::begin(o, session, data, names, None)?;
            rec.stream(std::path::Path::new(o.output()), groups)?;
            record(o, rec)
        }
    }
}

/// Record, then finish whatever happened.
fn record<'o, W: Write>(o: &'o Options, mut rec: Recording<'o, W>) -> Result<u8, Failure> {
    let recorded = record_loop::record(o, &mut rec);
    rec.finish(recorded)
}

/// The next file of `--switch-output`, at the output's path.
fn next_file(o: &Options, session: &Session, names: &[String]) -> Result<PerfData<FileOut>, Error> {
    let Output::File(file) = output::open(o.output(), o.aio.max(0) as usize)? else {
        return Err(format!("creating {} for the next dump", o.output()).into());
    };
    Ok(PerfData::new(file, session, names)?)
}

/// `--threads`: the reader threads' rings (perf's masks, checked before anything runs: its words
/// and status where a user's masks are wrong), then the directory and its `data` file.
fn threaded_output(o: &Options, spec: &cli::Threads) -> Result<Output, Failure> {
    if o.output() == "-" {
        return Err(Failure::Failed("Parallel trace streaming is not available in pipe mode.".into()));
    }
    // perf's words where --affinity or --aio meet --threads; perf then records nothing, status 0.
    let exclusive = match () {
        _ if o.affinity != perfring_linux::Affinity::Any => "--affinity option is",
        _ if o.aio > 0 => "Asynchronous streaming mode (--aio) is",
        _ => "",
    };
    if !exclusive.is_empty() {
        let said =
            if o.quiet { String::new() } else { format!("{exclusive} mutually exclusive to parallel streaming mode.") };
        return Err(Failure::Said(said, 0));
    }
    if o.per_thread() {
        return Err(Failure::Invalid(
            "--per-thread option is mutually exclusive to parallel streaming mode.\nFailed to initialize parallel data \
             streaming masks"
                .into(),
        ));
    }
    let mut cpus = perfring_linux::online_cpus()?;
    if let Some(asked) = &o.cpus {
        cpus.retain(|c| asked.contains(c));
    }
    let groups = threads::groups(spec, &cpus)
        .map_err(|e| Failure::Invalid(format!("{e}\nFailed to initialize parallel data streaming masks")))?;
    threads::create_dir(o.output())?;
    Ok(Output::Directory(threads::header_file(o.output())?, groups))
}
