//! The attrs of the events, as perf record configures them (tools/perf/util/evsel.c
//! `evsel__config`, evlist.c `evlist__config`), so that `perf evlist -v` of our file reads as
//! of perf's for the same command line.

use perfring::record::attr_flags as flag;
use perfring::record::read_format as rf;
use perfring::record::sample_type as st;
use perfring::record::Attr;
use perfring_linux::event_type;
use perfring_linux::EventAttr;

use crate::cli::{CallGraph, Freq, Options};
use crate::events::{modifier_suffix, EventSpec};

/// `PERF_REGS_MASK` (x86-64: 0xff0fff, every register of `cli`'s table), as perf sets
/// `sample_regs_user` for `--call-graph dwarf`.
const REGS_USER: u64 = crate::cli::REGS_MASK;
/// x86-64's `DWARF_MINIMAL_REGS`: IP and SP.
#[cfg(target_arch = "x86_64")]
const DWARF_MINIMAL_REGS: u64 = 1 << 8 | 1 << 7;
#[cfg(not(target_arch = "x86_64"))]
const DWARF_MINIMAL_REGS: u64 = 0;

/// One event as it will be opened: its attr, its name, its group leader.
#[derive(Debug, Clone)]
pub struct Configured {
    /// The attr, complete.
    pub attr: EventAttr,
    /// perf's name for it.
    pub name: String,
    /// The leader's index, for a group member.
    pub leader: Option<usize>,
}

/// `/proc/sys/kernel/perf_event_max_sample_rate`.
pub fn max_sample_rate() -> Option<u64> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate").ok()?.trim().parse().ok()
}

/// The sampling frequency `-F` asks for, with perf's notice when it is `max` or above the
/// kernel's maximum (printed unless `quiet`); above the maximum with `--strict-freq`, perf's
/// error.
pub fn frequency(o: &Options) -> Result<Option<u64>, String> {
    let max = max_sample_rate();
    Ok(match (o.freq, max) {
        (Some(Freq::Max), Some(m)) => {
            if !o.quiet {
                eprintln!("info: Using a maximum frequency rate of {m} Hz");
            }
            Some(m)
        }
        (Some(Freq::Max), None) => Some(4000),
        (Some(Freq::Hz(f)), Some(m)) if f > m && o.strict_freq => {
            return Err(format!(
                "error: Maximum frequency rate ({m} Hz) exceeded.\n       Please use -F freq option with a lower value \
                 or consider\n       tweaking /proc/sys/kernel/perf_event_max_sample_rate."
            ));
        }
        (Some(Freq::Hz(f)), Some(m)) if f > m => {
            if !o.quiet {
                eprintln!(
                    "warning: Maximum frequency rate ({m} Hz) exceeded, throttling from {f} Hz to {m} Hz.\n         The \
                     limit can be raised via /proc/sys/kernel/perf_event_max_sample_rate.\n         The kernel will \
                     lower it when perf's interrupts take too long."
                );
            }
            Some(m)
        }
        (Some(Freq::Hz(f)), _) => Some(f),
        (None, _) => None,
    })
}

/// What the options set in every event's attr, perf's tracking dummy included (perf's
/// `evsel__config` runs for each): the sample fields asked for, `-s`, `-k`, `--overwrite`, `--all-user` /
/// `--all-kernel` (which `events::exclusive` has applied to the `-e` events already, for their
/// names), and last `-P`/`--no-period`, which overrides the rest as in perf.
fn every_event(o: &Options, a: &mut Attr, dummy: bool) {
    let mut t = a.sample_type | sample_fields(o);
    if let Some(mode) = o.branch_stack {
        // The dummy keeps the mode but not the field (perf: it cannot sample branches).
        a.branch_sample_type = mode;
        if !dummy {
            t |= st::BRANCH_STACK;
        }
    }
    if !dummy {
        if let Some(mask) = o.intr_regs {
            t |= st::REGS_INTR;
            a.sample_regs_intr = mask;
        }
        if let Some(mask) = o.user_regs {
            t |= st::REGS_USER;
            a.sample_regs_user |= mask;
        }
    }
    if o.running_time {
        a.read_format |= rf::TOTAL_TIME_ENABLED | rf::TOTAL_TIME_RUNNING;
    }
    if o.stat {
        a.read_format |= rf::TOTAL_TIME_ENABLED | rf::TOTAL_TIME_RUNNING | rf::ID;
        a.flags |= flag::INHERIT_STAT;
    }
    if let Some(id) = o.clockid {
        a.flags |= flag::USE_CLOCKID;
        a.clockid = id;
    }
    if o.overwrite {
        a.flags |= flag::WRITE_BACKWARD;
    }
    if o.no_samples {
        a.sample_period = 0;
    }
    if o.no_buffering {
        a.flags &= !flag::WATERMARK;
        a.wakeup = 1;
    }
    a.flags = exclusive(o, a.flags);
    match o.sample_period {
        Some(true) => t |= st::PERIOD,
        Some(false) => t &= !st::PERIOD,
        None => {}
    }
    if o.timestamp == Some(false) {
        t &= !st::TIME;
    }
    if o.sample_identifier {
        t |= st::IDENTIFIER;
    }
    a.sample_type = t;
}

/// The sample fields the sample-field options add to every event.
fn sample_fields(o: &Options) -> u64 {
    let weight = if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
        // perf's x86 arch_evsel__set_sample_weight: the struct form; elsewhere the u64.
        st::WEIGHT_STRUCT
    } else {
        st::WEIGHT
    };
    [
        (o.sample_cpu, st::CPU),
        (o.raw_samples, st::TIME | st::RAW | st::CPU),
        (o.phys_data, st::PHYS_ADDR),
        (o.weight, weight),
        (o.data_page_size, st::DATA_PAGE_SIZE),
        (o.code_page_size, st::CODE_PAGE_SIZE),
        (o.all_cgroups, st::CGROUP),
    ]
    .iter()
    .filter(|(on, _)| *on)
    .fold(0, |t, (_, bits)| t | bits)
}

/// `--all-user` / `--all-kernel` over an attr's flags (perf: only exclude_kernel and
/// exclude_user change; exclude_hv stays as the event had it).
pub fn exclusive(o: &Options, flags: u64) -> u64 {
    if o.all_user {
        (flags | flag::EXCLUDE_KERNEL) & !flag::EXCLUDE_USER
    } else if o.all_kernel {
        (flags | flag::EXCLUDE_USER) & !flag::EXCLUDE_KERNEL
    } else {
        flags
    }
}

/// Every event's attr, and perf's tracking event (`dummy:HG`) where it adds one (system-wide
/// recording: `-a`, `-C`; a delay, `-D`): the side band (COMM, MMAP2, TASK, KSYMBOL, BPF_EVENT)
/// goes to the tracking event, the first event when there is no dummy.
pub fn configure(o: &Options, specs: &[EventSpec], freq: Option<u64>) -> Vec<Configured> {
    let mut out: Vec<Configured> = specs.iter().map(|s| event(o, s, freq)).collect();
    // perf's tracking dummy: CPU-wide, enabled from the open ("immediate"); for -D otherwise,
    // disabled and enabled at exec, so the side band of the delay is recorded.
    let dummy = o.cpu_wide() || o.delay.is_some();
    if dummy {
        out.push(tracking_dummy(o));
    }
    // The tracking event: the dummy, or the first event.
    if let Some(track) = if dummy { out.last_mut() } else { out.first_mut() } {
        track.attr = EventAttr::from_attr(tracking(o, *track.attr.attr()));
    }
    // Several events: each needs its id, at one place (perf: ID if the sample types agree,
    // IDENTIFIER otherwise).
    if out.len() > 1 {
        let first = out[0].attr.attr().sample_type;
        let same = out.iter().all(|c| c.attr.attr().sample_type == first);
        let id = if same && !o.sample_identifier { st::ID } else { st::IDENTIFIER };
        for c in &mut out {
            let a = *c.attr.attr();
            c.attr = EventAttr::from_attr(Attr { sample_type: a.sample_type | id, ..a });
        }
    }
    out
}

/// One `-e` event's attr, as perf's `evsel__config` sets it.
fn event(o: &Options, s: &EventSpec, freq: Option<u64>) -> Configured {
    let mut a: Attr = s.attr;
    a.size = Attr::SIZE_VER7;
    if s.precise_max {
        a.flags = (a.flags & !flag::PRECISE_IP_MASK) | (3 << 15);
    }
    let mut t = st::IP | st::TID | time(o);
    if a.type_ == event_type::TRACEPOINT {
        t |= st::CPU | st::PERIOD | st::RAW;
    }
    rate(o, freq, &mut a);
    if a.flags & flag::FREQ != 0 {
        t |= st::PERIOD;
    }
    if o.cpu_wide() {
        t |= st::CPU;
    }
    t |= callchain(o, &mut a);
    if o.data {
        t |= st::ADDR | st::DATA_SRC;
    }
    a.sample_type = t;
    every_event(o, &mut a, false);
    wakeup(o, &mut a);
    a.read_format |= rf::ID | rf::LOST;
    a.flags |= flag::SAMPLE_ID_ALL;
    // perf follows children, except of threads named by -t or with a ring per thread.
    if !o.no_inherit && o.tids.is_empty() && !o.per_thread() {
        a.flags |= flag::INHERIT;
    }
    if s.leader.is_none() {
        a.flags |= flag::DISABLED;
        // -D: enabled after the delay, not at exec.
        let command =
            !o.command.is_empty() && !o.cpu_wide() && o.pids.is_empty() && o.tids.is_empty() && o.uid.is_none();
        if command && o.delay.is_none() {
            a.flags |= flag::ENABLE_ON_EXEC;
        }
    }
    Configured { attr: EventAttr::from_attr(a), name: s.name.clone(), leader: s.leader }
}

/// TIME, where perf samples it ([`Options::sample_time`]).
fn time(o: &Options) -> u64 {
    if o.sample_time() {
        st::TIME
    } else {
        0
    }
}

/// The rate: `-c`, `-F`, the PMU term's own, or the default (4000 Hz; tracepoints every event).
fn rate(o: &Options, freq: Option<u64>, a: &mut Attr) {
    let explicit = a.sample_period != 0;
    match (o.period, freq) {
        (Some(p), _) => {
            a.sample_period = p;
            a.flags &= !flag::FREQ;
        }
        (None, Some(f)) => {
            a.sample_period = f;
            a.flags |= flag::FREQ;
        }
        (None, None) if explicit => {}
        (None, None) if a.type_ == event_type::TRACEPOINT => a.sample_period = 1,
        (None, None) => {
            a.sample_period = 4000;
            a.flags |= flag::FREQ;
        }
    }
}

/// perf's `evsel__config_callchain`: the sample fields of `-g`/`--call-graph`, and its flags.
fn callchain(o: &Options, a: &mut Attr) -> u64 {
    if o.call_graph.is_some() {
        if o.kernel_callchains {
            a.flags |= flag::EXCLUDE_CALLCHAIN_USER;
        }
        if o.user_callchains {
            a.flags |= flag::EXCLUDE_CALLCHAIN_KERNEL;
        }
    }
    match o.call_graph {
        Some(CallGraph::Fp) => st::CALLCHAIN,
        Some(CallGraph::Dwarf { size }) => {
            a.flags |= flag::EXCLUDE_CALLCHAIN_USER;
            // With --user-regs, perf forces only the two registers unwinding cannot do without
            // (DWARF_MINIMAL_REGS: IP, SP), and warns.
            a.sample_regs_user = if o.user_regs.is_some() { DWARF_MINIMAL_REGS } else { REGS_USER };
            a.sample_stack_user = size;
            st::CALLCHAIN | st::REGS_USER | st::STACK_USER | st::ADDR | st::DATA_SRC
        }
        None => 0,
    }
}

/// Woken later than perf's half ring: fewer, fuller wakeups (the recorder's loop also watches
/// one ring of several under load, BENCHMARKS.md). 7/8 of a ring of up to 16 KiB, which
/// overflows under load whatever the watermark, so the wakeups are what counts; 3/4 of a larger
/// one, whose last quarter is the time the recorder has to come (at 7/8 a tracepoint storm lost
/// up to 4% in 512 KiB rings, at 3/4 nothing). Pipe mode keeps perf's attr: readers that take a
/// pipe stream's first bytes for a file header (samply 0.13) read this field as a feature
/// bitmap. perf's attr where the wakeups are the user's to choose (--no-buffering), where they
/// bound the overshoot of --max-size or --switch-output=SIZE, or where no one is woken (an
/// overwrite ring: perf polls it for hang-ups only).
fn wakeup(o: &Options, a: &mut Attr) {
    let size_bound = o.max_size.is_some() || matches!(o.switch_output, Some(crate::cli::When::Size(_)));
    if o.output() != "-" && !o.overwrite && !o.no_buffering && !size_bound {
        let bytes = o.pages() as u64 * 4096;
        a.wakeup = if bytes <= 16 << 10 { bytes * 7 / 8 } else { bytes * 3 / 4 } as u32;
        a.flags |= flag::WATERMARK;
    }
}

/// perf's tracking dummy (`dummy:HG`): CPU-wide, enabled from the open; for -D otherwise,
/// disabled and enabled at exec.
fn tracking_dummy(o: &Options) -> Configured {
    let mut flags = flag::SAMPLE_ID_ALL;
    if !o.no_inherit && !o.per_thread() {
        flags |= flag::INHERIT;
    }
    if !o.cpu_wide() {
        flags |= flag::DISABLED | flag::ENABLE_ON_EXEC;
    }
    let mut t = st::IP | st::TID | time(o);
    if o.cpu_wide() {
        t |= st::CPU;
    }
    if o.call_graph.is_some() {
        t |= st::CALLCHAIN;
    }
    let mut a = Attr {
        type_: event_type::SOFTWARE,
        config: 9,
        size: Attr::SIZE_VER7,
        sample_period: 1,
        sample_type: t,
        read_format: rf::ID | rf::LOST,
        flags,
        ..Attr::ZERO
    };
    every_event(o, &mut a, true);
    let name = format!("dummy{}", modifier_suffix(&a));
    Configured { attr: EventAttr::from_attr(a), name, leader: None }
}

/// The side band, on the tracking event: COMM, MMAP(2), TASK, KSYMBOL, BPF_EVENT, and what the
/// options add (`--switch-events`, `--namespaces`, `--all-cgroups`).
fn tracking(o: &Options, mut a: Attr) -> Attr {
    a.flags |= flag::MMAP | flag::COMM | flag::TASK | flag::MMAP2 | flag::COMM_EXEC | flag::KSYMBOL;
    if !o.no_bpf_event {
        a.flags |= flag::BPF_EVENT;
    }
    if o.data || matches!(o.call_graph, Some(CallGraph::Dwarf { .. })) {
        a.flags |= flag::MMAP_DATA;
    }
    if o.switch_events {
        a.flags |= flag::CONTEXT_SWITCH;
    }
    if o.namespaces {
        a.flags |= flag::NAMESPACES;
    }
    if o.all_cgroups {
        a.flags |= flag::CGROUP;
    }
    a
}
