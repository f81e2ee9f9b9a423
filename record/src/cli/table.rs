//! [`OPTIONS`]: every option of `perf record` 6.1, in perf's order (`perf record
//! --list-opts`), one row each: its names, how it takes a value, its help, its effect on
//! [`Options`]. The order matters: perf names the last two options an ambiguous prefix matches.
//! A row perf has and this recorder does not take is [`Effect::NotTaken`], with the reason; its
//! name still takes part in prefix matching, so that an abbreviation means here what it means
//! to perf.

use super::values::{self, c_loose, c_number};
use super::{err, CallGraph, Cgroups, Filter, Freq, Options, Threads, UsageError};
use crate::cli::When;
use perfring_linux::Affinity;

/// How an option takes a value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Takes {
    /// None (a flag).
    Nothing,
    /// Always: attached (`-F99`, `--freq=99`) or the next argument; the placeholder for the help.
    Value(&'static str),
    /// Only attached (`-z3`, `--aio=2`; perf's OPTARG); the placeholder for the help.
    Optional(&'static str),
}

/// What an option does.
#[derive(Clone, Copy)]
pub enum Effect {
    /// Set what it sets in [`Options`], from its value and whether it was negated.
    Set(fn(&mut Options, Arg<'_>) -> Result<(), UsageError>),
    /// perf 6.1 has it, this recorder does not take it: why (a usage error names it).
    NotTaken(&'static str),
}

/// One row of the table.
pub struct Opt {
    /// `-x`.
    pub short: Option<char>,
    /// `--name` (`-g` has none).
    pub long: Option<&'static str>,
    /// Its value.
    pub takes: Takes,
    /// Whether `--no-name` is taken (perf's NONEG, and negations perf 6.1 crashes on, are not:
    /// "isn't available").
    pub negatable: bool,
    /// One line (or a few) for `--help`.
    pub help: &'static str,
    /// Its effect.
    pub effect: Effect,
}

/// How the option was spelled, for perf's messages (`switch `c'`, `option `name'`, `option
/// `no-name'`).
#[derive(Debug, Clone, Copy)]
pub enum Spelled {
    /// `-c`.
    Short(char),
    /// `--name` (or a prefix of it).
    Long(&'static str),
    /// `--no-name` (or the `no-` of a name that has one, left out).
    Negated(&'static str),
}

impl Spelled {
    /// perf's `opterror` words: `switch `c' REASON`, `option `name' REASON`.
    pub fn error(&self, reason: &str) -> String {
        match self {
            Spelled::Short(c) => format!("switch `{c}' {reason}"),
            Spelled::Long(name) => format!("option `{name}' {reason}"),
            Spelled::Negated(name) => format!("option `no-{name}' {reason}"),
        }
    }
}

/// An option as given: its value, whether negated, how spelled.
pub struct Arg<'a> {
    /// The value (attached or next), if it takes one and one was given.
    pub value: Option<&'a str>,
    /// `--no-name`.
    pub unset: bool,
    /// How it was spelled.
    pub spelled: Spelled,
}

impl Arg<'_> {
    /// The value, or "" (an optional value left out).
    fn text(&self) -> &str {
        self.value.unwrap_or("")
    }

    /// The value as perf's OPT_INTEGER/OPT_U64 read it ("expects a numerical value").
    fn number(&self) -> Result<i64, UsageError> {
        c_number(self.text()).ok_or_else(|| UsageError(self.spelled.error("expects a numerical value")))
    }

    /// The value as an unsigned number (perf's OPT_UINTEGER wraps a negative one).
    fn unsigned(&self) -> Result<u64, UsageError> {
        Ok(self.number()? as u64)
    }
}

/// A boolean flag's row: `--name` sets `field`, `--no-name` clears it.
macro_rules! flag {
    ($short:expr, $long:expr, $field:ident, $help:expr) => {
        Opt {
            short: $short,
            long: Some($long),
            takes: Takes::Nothing,
            negatable: true,
            help: $help,
            effect: Effect::Set(|o, a| {
                o.$field = !a.unset;
                Ok(())
            }),
        }
    };
}

/// A row perf has and this recorder does not take.
macro_rules! not_taken {
    ($short:expr, $long:expr, $takes:expr, $help:expr, $why:expr) => {
        Opt {
            short: $short,
            long: Some($long),
            takes: $takes,
            negatable: true,
            help: $help,
            effect: Effect::NotTaken($why),
        }
    };
}

/// A row whose effect is `$f`.
macro_rules! row {
    ($short:expr, $long:expr, $takes:expr, $neg:expr, $help:expr, $f:expr) => {
        Opt { short: $short, long: $long, takes: $takes, negatable: $neg, help: $help, effect: Effect::Set($f) }
    };
}

use Takes::{Nothing, Optional, Value};

/// Every option of perf record 6.1, in its order.
pub const OPTIONS: &[Opt] = &[
    row!(
        Some('e'),
        Some("event"),
        Value("event"),
        false,
        "events to sample (repeatable): software and hardware names, rNNN, PMU/term=value/, tracepoints \
         GROUP:NAME with globs, groups {a,b}, modifiers :u :k :h :p :P",
        event
    ),
    row!(
        None,
        Some("filter"),
        Value("filter"),
        true,
        "a tracepoint filter for the events of the -e before it (joined with && when repeated)",
        filter
    ),
    row!(
        None,
        Some("exclude-perf"),
        Nothing,
        true,
        "leave this recorder's own events out (a filter on its pid), for the -e tracepoint before it",
        exclude_perf
    ),
    row!(Some('p'), Some("pid"), Value("pid"), true, "running processes (comma list), with their threads", |o, a| {
        o.pids = if a.unset { Vec::new() } else { values::id_list("-p", a.text())? };
        Ok(())
    }),
    row!(Some('t'), Some("tid"), Value("tid"), true, "running threads (comma list)", |o, a| {
        o.tids = if a.unset { Vec::new() } else { values::id_list("-t", a.text())? };
        Ok(())
    }),
    row!(
        Some('r'),
        Some("realtime"),
        Value("n"),
        true,
        "run the recorder SCHED_FIFO at this priority (the command keeps its policy)",
        |o, a| {
            o.realtime = if a.unset { None } else { Some(a.number()? as i32).filter(|&p| p != 0) };
            Ok(())
        }
    ),
    flag!(None, "no-buffering", no_buffering, "wake on every record (wakeup_events 1, no watermark)"),
    flag!(Some('R'), "raw-samples", raw_samples, "sample raw data (RAW, with TIME and CPU)"),
    flag!(Some('a'), "all-cpus", all_cpus, "every CPU (with a command: while it runs); the default without one"),
    row!(Some('C'), Some("cpu"), Value("cpu"), true, "these CPUs only (0-1,3), system-wide on them", |o, a| {
        o.cpus = if a.unset { None } else { Some(values::id_list("-C", a.text())?) };
        Ok(())
    }),
    row!(Some('c'), Some("count"), Value("n"), true, "sample every N events (tracepoints: every one)", |o, a| {
        // perf: a period of 0 is no period (the frequency's default applies).
        o.period = if a.unset { None } else { Some(a.unsigned()?).filter(|&p| p != 0) };
        Ok(())
    }),
    row!(
        Some('o'),
        Some("output"),
        Value("file"),
        true,
        "output file (default perf.data, the old one kept as .old); - is pipe mode to stdout",
        |o, a| {
            o.output_path = if a.unset { None } else { Some(a.text().to_string()) };
            Ok(())
        }
    ),
    flag!(Some('i'), "no-inherit", no_inherit, "children and new threads are not followed"),
    flag!(None, "tail-synthesize", tail_synthesize, "synthesize what runs at the end instead of at the start"),
    flag!(None, "overwrite", overwrite, "flight recorder: the rings overwritten while recording, read at the end"),
    flag!(None, "no-bpf-event", no_bpf_event, "no BPF_EVENT records (KSYMBOL records stay)"),
    flag!(None, "strict-freq", strict_freq, "an -F above the kernel's maximum is an error, not throttled"),
    row!(
        Some('F'),
        Some("freq"),
        Value("freq or 'max'"),
        false,
        "sample about this many times a second (default 4000; max: the kernel's maximum)",
        |o, a| {
            let v = a.text();
            o.freq = Some(if v == "max" { Freq::Max } else { Freq::Hz(values::number("-F", v)?) });
            Ok(())
        }
    ),
    row!(
        Some('m'),
        Some("mmap-pages"),
        Value("pages[,pages]"),
        false,
        "each CPU's ring: pages, or a size with B/K/M/G, rounded up to a power of two of pages",
        |o, a| {
            o.mmap_pages = Some(values::mmap_pages(a.text())?);
            Ok(())
        }
    ),
    row!(
        None,
        Some("mmap-flush"),
        Value("number"),
        true,
        "read a ring only once it holds this many bytes (B/K/M/G; at most a quarter of the ring), except at the end",
        |o, a| {
            o.mmap_flush = if a.unset { None } else { Some(values::mmap_flush(a.text(), o.pages())) };
            Ok(())
        }
    ),
    flag!(None, "group", group, "put the events of all -e into one group"),
    row!(Some('g'), None, Nothing, true, "call chains (frame pointers: --call-graph fp)", |o, _| {
        o.call_graph.get_or_insert(CallGraph::Fp);
        Ok(())
    }),
    row!(
        None,
        Some("call-graph"),
        Value("record_mode[,record_size]"),
        true,
        "call chains: fp, or dwarf[,SIZE] (user stacks of SIZE bytes, default 8192, for perf to unwind)",
        |o, a| {
            o.call_graph = if a.unset { None } else { Some(values::call_graph(a.text())?) };
            if matches!(o.call_graph, Some(CallGraph::Dwarf { .. })) {
                o.data = true;
            }
            Ok(())
        }
    ),
    row!(Some('v'), Some("verbose"), Nothing, true, "the summary's table and perf's notices (repeatable)", |o, a| {
        o.verbose = if a.unset { 0 } else { o.verbose + 1 };
        Ok(())
    }),
    flag!(Some('q'), "quiet", quiet, "no summary, no warnings"),
    flag!(Some('s'), "stat", stat, "per-thread counts (inherit_stat: READ records at each exit)"),
    flag!(Some('d'), "data", data, "sample data addresses (ADDR, DATA_SRC; data mappings too)"),
    flag!(None, "phys-data", phys_data, "sample physical addresses (PHYS_ADDR)"),
    flag!(None, "data-page-size", data_page_size, "sample the data address's page size"),
    flag!(None, "code-page-size", code_page_size, "sample the IP's page size"),
    flag!(None, "sample-cpu", sample_cpu, "sample the CPU (CPU)"),
    flag!(None, "sample-identifier", sample_identifier, "sample the id first in every record (IDENTIFIER)"),
    row!(Some('T'), Some("timestamp"), Nothing, true, "sample times (on by default)", |o, a| {
        o.timestamp = Some(!a.unset);
        Ok(())
    }),
    row!(Some('P'), Some("period"), Nothing, true, "sample the period (PERIOD) even with -c", |o, a| {
        o.sample_period = Some(!a.unset);
        Ok(())
    }),
    flag!(Some('n'), "no-samples", no_samples, "count, do not sample (sample_period 0)"),
    flag!(Some('N'), "no-buildid-cache", no_buildid_cache, "do not copy the files samples hit into ~/.debug"),
    flag!(Some('B'), "no-buildid", no_buildid, "no build ids at all (no BUILD_ID feature, no cache)"),
    Opt {
        short: Some('G'),
        long: Some("cgroup"),
        takes: Value("name"),
        // perf 6.1 crashes on --no-cgroup: refused here.
        negatable: false,
        help: "each event defined before it, in turn, in this cgroup only (a comma list; an empty name: that \
               event unfiltered; one name: every event before it); with -a",
        effect: Effect::Set(cgroup),
    },
    row!(
        Some('D'),
        Some("delay"),
        Value("ms"),
        true,
        "measure from ms milliseconds after the start (-1: the events left disabled)",
        |o, a| {
            o.delay = if a.unset { None } else { values::delay(a.text())? };
            Ok(())
        }
    ),
    flag!(
        None,
        "kcore",
        kcore,
        "perf's directory with a copy of the kernel's text (kcore_dir): perf's error where /proc/kcore cannot be \
         read; the copy itself is not implemented"
    ),
    row!(
        Some('u'),
        Some("uid"),
        Value("user"),
        true,
        "the threads of this user's processes (a name or a number), as they run now",
        |o, a| {
            o.uid = (!a.unset).then(|| a.text().to_string());
            Ok(())
        }
    ),
    row!(Some('b'), Some("branch-any"), Nothing, true, "sample taken branches (a branch stack: any)", |o, a| {
        o.branch_stack = branches(o.branch_stack, a.unset, None)?;
        Ok(())
    }),
    row!(
        Some('j'),
        Some("branch-filter"),
        Value("branch filter mask"),
        true,
        "sample branches of these kinds (any, any_call, any_ret, ind_call, ind_jmp, call, cond, u, k, hv, ...)",
        |o, a| {
            o.branch_stack = branches(o.branch_stack, a.unset, Some(a.text()))?;
            Ok(())
        }
    ),
    flag!(Some('W'), "weight", weight, "sample the weight (WEIGHT_STRUCT on x86)"),
    not_taken!(
        None,
        "transaction",
        Nothing,
        "sample transaction flags (special events only)",
        "transaction flags come from PMUs with TSX events, which this recorder does not configure"
    ),
    flag!(
        None,
        "per-thread",
        per_thread,
        "a ring per thread, its events on any CPU, children not followed (no inherit; sample times only with -T)"
    ),
    row!(
        Some('I'),
        Some("intr-regs"),
        Optional("any register"),
        true,
        "sample the interrupted registers: all, or a comma list (-I? lists them)",
        |o, a| {
            o.intr_regs = if a.unset { None } else { Some(values::registers(o.intr_regs, a.text(), "-I")?) };
            Ok(())
        }
    ),
    row!(
        None,
        Some("user-regs"),
        Optional("any register"),
        true,
        "sample the user registers: all, or a comma list (--user-regs=? lists them)",
        |o, a| {
            o.user_regs = if a.unset { None } else { Some(values::registers(o.user_regs, a.text(), "--user-regs=")?) };
            Ok(())
        }
    ),
    flag!(None, "running-time", running_time, "read the times enabled and running with each count"),
    row!(
        Some('k'),
        Some("clockid"),
        Value("clockid"),
        true,
        "sample times from this clock (monotonic, monotonic_raw, realtime, boottime, tai, or a number)",
        |o, a| {
            if a.unset {
                o.clockid = None;
                return Ok(());
            }
            if o.clockid.is_some() {
                return err("-k/--clockid: given twice");
            }
            o.clockid = Some(values::clockid(a.text())?);
            Ok(())
        }
    ),
    row!(
        Some('S'),
        Some("snapshot"),
        Optional("opts"),
        true,
        "AUX area tracing snapshot mode (no AUX area here)",
        |o, a| {
            o.aux = (!a.unset).then_some("No AUX area tracing to snapshot");
            Ok(())
        }
    ),
    row!(None, Some("aux-sample"), Optional("opts"), true, "sample the AUX area (no AUX area here)", |o, a| {
        o.aux = (!a.unset).then_some("No AUX area event to sample");
        Ok(())
    }),
    row!(
        None,
        Some("proc-map-timeout"),
        Value("n"),
        true,
        "stop reading a process's /proc maps after n ms (default 500), its last mapping marked as cut short",
        |o, a| {
            // perf's OPT_UINTEGER: --no-proc-map-timeout is 0.
            o.proc_map_timeout = Some(if a.unset { 0 } else { a.unsigned()? as u32 as u64 });
            Ok(())
        }
    ),
    flag!(None, "namespaces", namespaces, "record namespaces (NAMESPACES records, those of running threads too)"),
    flag!(
        None,
        "all-cgroups",
        all_cgroups,
        "record cgroups (each sample's cgroup id; CGROUP records, those of existing cgroups too)"
    ),
    flag!(None, "switch-events", switch_events, "record context switches (SWITCH records)"),
    row!(None, Some("all-kernel"), Nothing, true, "every event counts the kernel only", |o, a| {
        exclusive(o.all_user && !a.unset, "all-kernel", "all-user")?;
        o.all_kernel = !a.unset;
        Ok(())
    }),
    row!(None, Some("all-user"), Nothing, true, "every event counts user space only", |o, a| {
        exclusive(o.all_kernel && !a.unset, "all-user", "all-kernel")?;
        o.all_user = !a.unset;
        Ok(())
    }),
    flag!(None, "kernel-callchains", kernel_callchains, "call chains of the kernel only (with -g)"),
    flag!(None, "user-callchains", user_callchains, "call chains of user space only (with -g)"),
    row!(
        None,
        Some("clang-path"),
        Value("clang path"),
        true,
        "clang for BPF scriptlet events (taken; this recorder has no such events)",
        |_, _| Ok(())
    ),
    row!(
        None,
        Some("clang-opt"),
        Value("clang options"),
        true,
        "clang options for BPF scriptlet events (taken; this recorder has no such events)",
        |_, _| Ok(())
    ),
    row!(
        None,
        Some("vmlinux"),
        Value("file"),
        true,
        "the kernel image (checked as perf checks it; the recording does not read it)",
        |o, a| {
            o.vmlinux = (!a.unset).then(|| a.text().to_string());
            Ok(())
        }
    ),
    flag!(None, "buildid-all", buildid_all, "a build id for every file mapped, sampled or not"),
    not_taken!(
        None,
        "buildid-mmap",
        Nothing,
        "record build ids in MMAP2 records",
        "MMAP2 records with build ids are not synthesized here"
    ),
    flag!(None, "timestamp-filename", timestamp_filename, "rename the output FILE.<timestamp> at the end"),
    row!(
        None,
        Some("timestamp-boundary"),
        Nothing,
        true,
        "the first and last sample times (always written here)",
        |_, _| Ok(())
    ),
    row!(
        None,
        Some("switch-output"),
        Optional("signal or size[BKMG] or time[smhd]"),
        false,
        "end the file and start the next on SIGUSR2, at a size or every so long",
        switch_output
    ),
    not_taken!(
        None,
        "switch-output-event",
        Value("switch output event"),
        "switch output when this event comes",
        "a side-band event as the switch's trigger is not implemented"
    ),
    row!(None, Some("switch-max-files"), Value("n"), true, "keep the n newest --switch-output files", |o, a| {
        o.switch_max_files = if a.unset { None } else { Some(a.number()?.max(0) as usize) };
        Ok(())
    }),
    flag!(None, "dry-run", dry_run, "check the options and events, record nothing"),
    row!(
        None,
        Some("aio"),
        Optional("n"),
        true,
        "write the file from a thread of its own, n buffers in flight (default 1, max 4): the same bytes",
        |o, a| {
            // perf's record__aio_parse: strtol, 0 (or nothing) is 1; beyond perf's nr_cblocks_max,
            // 4; a negative number is kept (perf then fails to map its buffers: `setup`).
            o.aio = if a.unset {
                0
            } else {
                match c_loose(a.text()) {
                    0 => 1,
                    n => n.min(crate::aio::MAX_IN_FLIGHT as i64),
                }
            };
            Ok(())
        }
    ),
    row!(
        None,
        Some("affinity"),
        Value("node|cpu"),
        true,
        "read each ring on its CPU (cpu) or its NUMA node's CPUs (node); other words: where the reader runs",
        |o, a| {
            // perf's record__parse_affinity: case-blind; any other word (and --no-affinity)
            // leaves it as it was, without an error.
            if !a.unset {
                match a.text().to_ascii_lowercase().as_str() {
                    "node" => o.affinity = Affinity::Node,
                    "cpu" => o.affinity = Affinity::Cpu,
                    _ => {}
                }
            }
            Ok(())
        }
    ),
    row!(
        Some('z'),
        Some("compression-level"),
        Optional("n"),
        true,
        "zstd-compress the data at level n (default 1, max 22)",
        |o, a| {
            // perf's strtol: 0 (or nothing) is the default, 1; beyond 22 (or wrapped), 22.
            o.compression = (!a.unset).then(|| match c_loose(a.text()) {
                0 => 1,
                n @ 1..=22 => n as i32,
                _ => 22,
            });
            Ok(())
        }
    ),
    row!(
        None,
        Some("max-size"),
        Value("size"),
        true,
        "stop once the data reaches this size (B/K/M/G); the command then gets SIGTERM",
        |o, a| {
            o.max_size = if a.unset { None } else { Some(values::max_size(a.text())?) };
            Ok(())
        }
    ),
    row!(
        None,
        Some("num-thread-synthesize"),
        Value("n"),
        true,
        "threads for synthesizing what runs (taken: one thread here writes the same records)",
        |_, a| { a.unsigned().map(drop) }
    ),
    not_taken!(
        None,
        "control",
        Value("fd:ctl-fd[,ack-fd] or fifo:ctl-fifo[,ack-fifo]"),
        "commands to enable, disable or snapshot on a descriptor or FIFO",
        "control descriptors are not implemented"
    ),
    not_taken!(
        None,
        "synth",
        Value("no|all|task|mmap|cgroup"),
        "which records to synthesize",
        "the synthesis is always all of what runs"
    ),
    row!(
        None,
        Some("debuginfod"),
        Optional("debuginfod urls"),
        true,
        "debuginfod for the build-id cache (not built in: a warning, as perf 6.1 here)",
        |o, a| {
            if !a.unset {
                o.notices
                    .push("WARNING: debuginfod support requested, but perfring-record is not built with it".into());
            }
            Ok(())
        }
    ),
    row!(
        None,
        Some("threads"),
        Optional("spec"),
        true,
        "a reader thread per cpu (default), core, package, numa node or mask (maps/affinity:...), each ring \
         written to its own file of a perf.data directory",
        |o, a| {
            // perf 6.1 takes --no-threads as --threads (its callback ignores `unset`).
            o.threads = Some(thread_spec(if a.unset { "" } else { a.text() }));
            Ok(())
        }
    ),
    row!(
        None,
        Some("off-cpu"),
        Nothing,
        true,
        "off-CPU analysis (ignored with a warning, as perf 6.1 built without BPF skeletons ignores it)",
        |o, a| {
            let spelled = if a.unset { "no-off-cpu" } else { "off-cpu" };
            o.notices
                .push(format!("Warning: option `{spelled}' is being ignored: perfring-record has no off-cpu analysis"));
            Ok(())
        }
    ),
];

fn event(o: &mut Options, a: Arg<'_>) -> Result<(), UsageError> {
    o.events.push(a.text().to_string());
    Ok(())
}

/// perf's `parse_filter`: for the events of the last `-e` (every one it named).
fn filter(o: &mut Options, a: Arg<'_>) -> Result<(), UsageError> {
    let Some(last) = o.events.len().checked_sub(1) else {
        return err("--filter option should follow a -e tracepoint or HW tracer option");
    };
    if a.unset {
        return err(a.spelled.error("isn't available"));
    }
    o.filters.push(Filter { item: last, text: a.text().to_string(), exclude_perf: false });
    Ok(())
}

fn exclude_perf(o: &mut Options, a: Arg<'_>) -> Result<(), UsageError> {
    let Some(last) = o.events.len().checked_sub(1) else {
        return err("--exclude-perf option should follow a -e tracepoint option");
    };
    if a.unset {
        return err(a.spelled.error("isn't available"));
    }
    let text = format!("common_pid != {}", std::process::id());
    o.filters.push(Filter { item: last, text, exclude_perf: true });
    Ok(())
}

/// `-G`: perf's `parse_cgroups` as far as the options alone say: events defined before it, and
/// each name a cgroup that can be opened (perf's words where not: `no access to cgroup PATH`).
/// Which event each name goes to is resolved once the events are known (`setup::cgroups`).
fn cgroup(o: &mut Options, a: Arg<'_>) -> Result<(), UsageError> {
    if o.events.is_empty() {
        return err("must define events before cgroups");
    }
    let names: Vec<String> = a.text().split(',').map(String::from).collect();
    for name in names.iter().filter(|n| !n.is_empty()) {
        match perfring_linux::Cgroup::open(name) {
            Ok(_) => {}
            Err(perfring_linux::LinuxError::NoSuchCgroup { path: Some(path), .. }) => {
                return err(format!("no access to cgroup {}", path.display()));
            }
            Err(e) => return err(e.to_string()),
        }
    }
    o.cgroups.push(Cgroups { after: o.events.len(), names });
    Ok(())
}

/// `-b`, `-j`: perf's `parse_branch_stack` (one of them at most).
fn branches(old: Option<u64>, unset: bool, mode: Option<&str>) -> Result<Option<u64>, UsageError> {
    if unset {
        return Ok(None);
    }
    if old.is_some() {
        return err("Error: Can't use --branch-any (-b) with --branch-filter (-j).");
    }
    values::branch_mode(mode).map(Some)
}

/// perf's PARSE_OPT_EXCLUSIVE words.
fn exclusive(clash: bool, this: &str, other: &str) -> Result<(), UsageError> {
    if clash {
        return err(format!("option `{this}' cannot be used with {other}"));
    }
    Ok(())
}

fn switch_output(o: &mut Options, a: Arg<'_>) -> Result<(), UsageError> {
    let when = a.value.filter(|v| !v.is_empty()).unwrap_or("signal");
    o.switch_output = Some(When::parse(when).ok_or_else(|| {
        UsageError(format!(
            "--switch-output={when}: give signal, a size (100M; B, K, M or G) or a time (30s; s, m, h or d)"
        ))
    })?);
    o.timestamp_filename = true;
    Ok(())
}

/// perf's `record__parse_threads`: a known spec by its prefix, any other text a user spec
/// (checked when the masks are made); nothing at all, a thread per CPU.
fn thread_spec(v: &str) -> Threads {
    let known =
        [("cpu", Threads::Cpu), ("core", Threads::Core), ("package", Threads::Package), ("numa", Threads::Numa)];
    if v.is_empty() {
        return Threads::Cpu;
    }
    for (tag, spec) in known {
        if v.len() >= tag.len() && v[..tag.len()].eq_ignore_ascii_case(tag) {
            return spec;
        }
    }
    Threads::User(v.to_string())
}
