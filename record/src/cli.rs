//! The command line, as `perf record` takes it (tools/perf/util/parse-options.c): short options
//! clustered (`-ag`), a short option's value attached or next (`-F99`, `-F 99`, `-oFILE`),
//! long options with `=` or a space (`--freq=99`, `--freq 99`), `--no-` for the negatable
//! ones, and the first argument that is not an option starting the command. Values are read
//! as perf reads them: `-m 512K` (a size, rounded up to a power of two of pages), `-F max`,
//! `-p 1,2`, `-C 0-1,3`, `--call-graph dwarf,4096`.

use crate::events;

/// `perfring-record --help`.
pub const USAGE: &str = "\
usage: perfring-record [OPTIONS] [-- COMMAND [ARG]...]

Sample COMMAND (or processes, threads, CPUs) into a perf.data file for perf report/perf script,
taking perf record's options as perf record takes them (-ag, -F99, --freq=99, -oFILE).

  -e, --event EVENT[,EVENT]...  events to sample (repeatable); default cycles (cpu-clock where
                                the machine has no PMU, as perf falls back):
                                software: cpu-clock task-clock page-faults (faults) minor-faults
                                  major-faults context-switches (cs) cpu-migrations (migrations)
                                  alignment-faults emulation-faults dummy
                                hardware: cycles instructions cache-references cache-misses
                                  branches branch-misses bus-cycles ref-cycles
                                raw: rNNN (hex config); PMU/term=value,.../ (PMUs and terms
                                  of /sys/bus/event_source/devices)
                                tracepoints: GROUP:NAME, with globs (sched:*; tracefs mounted)
                                groups: {EVENT,EVENT,...}[:MODIFIERS]
                                modifiers: EVENT:u (user only), :k (kernel), :h, :p/:pp/:ppp
                                  (precise_ip), :P (the most precise), combined (:upp)
  -F, --freq FREQ               sample about FREQ times a second (default 4000; max: the
                                kernel's maximum, /proc/sys/kernel/perf_event_max_sample_rate)
  -c, --count PERIOD            sample every PERIOD events (tracepoints: default 1)
  -a, --all-cpus                every CPU (with a COMMAND: for as long as it runs); also
                                what no COMMAND and no -p/-t/-C means, until SIGINT
  -C, --cpu CPUS                these CPUs only (0-1,3), system-wide on them
  -p, --pid PID[,PID]...        running processes (with a COMMAND: while it runs)
  -t, --tid TID[,TID]...        running threads
  -i, --no-inherit              children and new threads are not followed
  -g                            call chains (frame pointers: --call-graph fp)
      --call-graph MODE[,SIZE]  fp, or dwarf[,SIZE] (user stack copies of SIZE bytes, default
                                8192, for perf report to unwind)
      --filter FILTER           a tracepoint filter for the events of the -e before it
                                (the kernel's syntax: 'prev_pid == 1 && next_pid != 0');
                                several are joined with &&
      --exclude-perf            a filter leaving out this recorder's own events
                                (common_pid != its pid), for the -e before it
  -d, --data                    sample data addresses (ADDR, DATA_SRC; data mappings too)
      --phys-data               sample physical addresses (PHYS_ADDR)
      --data-page-size          sample the data address's page size (DATA_PAGE_SIZE)
      --code-page-size          sample the IP's page size (CODE_PAGE_SIZE)
  -b, --branch-any              sample taken branches (a branch stack: BRANCH_STACK, any)
  -j, --branch-filter MODE,...  sample branches of these kinds (any, any_call, any_ret,
                                ind_call, ind_jmp, call, cond, abort_tx, in_tx, no_tx,
                                save_type, stack, priv; u, k, hv); on a machine whose PMU
                                has no branch stack, perf's error
  -I, --intr-regs[=REGS]        sample the interrupted registers (REGS_INTR): all, or a
                                comma list (AX,SP,IP,...; -I? lists them), attached
      --user-regs[=REGS]        sample the user registers (REGS_USER), likewise
      --running-time            read the times enabled and running with each count
      --kernel-callchains       call chains of the kernel only (with -g)
      --user-callchains         call chains of user space only (with -g)
      --strict-freq             an -F above the kernel's maximum is an error, not throttled
  -W, --weight                  sample the weight (WEIGHT_STRUCT on x86, as perf)
  -P, --period                  sample the period (PERIOD) even with -c; --no-period: never
      --sample-cpu              sample the CPU (CPU), as -a does
  -R, --raw-samples             sample raw data (RAW, with TIME and CPU)
  -s, --stat                    per-thread counts (inherit_stat: READ records at each exit)
      --switch-events           record context switches (SWITCH, SWITCH_CPU_WIDE records)
  -k, --clockid CLOCK           sample times from CLOCK: monotonic (mono), monotonic_raw
                                (raw), realtime (real), boottime (boot), tai, with or without
                                CLOCK_, or a number; the file's CLOCKID and CLOCK_DATA say so
      --all-user                every event counts user space only (exclude_kernel)
      --all-kernel              every event counts the kernel only (exclude_user)
  -T, --timestamp               sample times (on by default, as in perf record)
  -m, --mmap-pages PAGES        each CPU's ring: pages, or a size with B/K/M/G (512K); rounded
                                up to a power of two of pages (default 128, 512K)
      --overwrite               flight recorder: the rings (write_backward) are overwritten
                                while the recording runs and read at its end (and at each
                                --switch-output), each CPU's newest -m bytes; what runs then
                                is synthesized after them (perf's tail synthesis, implied)
  -n, --no-samples              count, do not sample (sample_period 0)
      --no-buffering            wake on every record (wakeup_events 1, no watermark)
      --no-bpf-event            no BPF_EVENT records (KSYMBOL records stay)
      --max-size SIZE           stop when the data reaches SIZE (B/K/M/G: 20M); the command
                                then gets SIGTERM, as perf sends it
  -r, --realtime PRIO           run the recorder SCHED_FIFO at PRIO (the command keeps its
                                own policy)
  -D, --delay MS                measure from MS milliseconds after the start (-1: never, the
                                events left disabled); the side band is recorded meanwhile
      --tail-synthesize         synthesize what runs (COMM, MMAP2 from /proc) at the end of
                                the recording instead of at its start (-a, -p, -t)
      --switch-output[=WHEN]    end the file and start a new one: on SIGUSR2 (signal, the
                                default), at a size (100M; B/K/M/G) or every so long (30s;
                                s/m/h/d); each ended file is renamed FILE.<timestamp>, the
                                last one too; with --overwrite, each dump holds what the
                                rings took since the last
      --switch-max-files N      keep the N newest of those files (older ones removed)
      --timestamp-filename      rename the output FILE.<timestamp> at the end
  -o, --output FILE             output file (default perf.data, the old one kept as
                                perf.data.old); - writes pipe mode to stdout, the command's
                                stdout then going to stderr
  -z, --compression-level[=N]   zstd-compress the data (level N, default 1), as perf -z
  -N, --no-buildid-cache        do not copy the files samples hit into ~/.debug
      --buildid-all             a build id for every file mapped, sampled or not (and the
                                kernel), in the file and the cache
  -B, --no-buildid              no build ids at all (no BUILD_ID feature, no cache)
      --dry-run                 check the options and events, record nothing
      --timestamp-boundary      (the first and last sample times are always written)
  -q, --quiet                   no summary, no warnings
  -v, --verbose                 the summary's table (records by type, samples and losses by
                                event) and perf's notices
  -h, --help                    this help

Kernel samples are included when perf_event_paranoid allows them (as root, or at a level <= 1),
else left out with a warning, as perf record does. Exit status: the command's (128+N if killed by
signal N; without a command, 128+N for the SIGINT or SIGTERM that ended the recording); 255 if it
cannot be executed or recording fails; 129 for a usage error; 234 for a
value perf refuses once parsed (--strict-freq).";

/// What the call graph is made of (`--call-graph`, `-g`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CallGraph {
    /// Frame pointers: the kernel walks the stacks (`PERF_SAMPLE_CALLCHAIN`).
    Fp,
    /// A copy of the user stack and registers of each sample, `size` bytes of stack, for
    /// perf report to unwind with DWARF.
    Dwarf {
        /// Bytes of user stack per sample (a multiple of 8).
        size: u32,
    },
}

/// Everything the command line says.
#[derive(Debug, Clone, PartialEq)]
pub struct Options {
    /// `-e` items, as given (each may be a list or a group).
    pub events: Vec<String>,
    /// `-F`: a rate, or `None` for the default; `Some(0)` is refused.
    pub freq: Option<Freq>,
    /// `-c`.
    pub period: Option<u64>,
    /// `-a`.
    pub all_cpus: bool,
    /// `-C`.
    pub cpus: Option<Vec<u32>>,
    /// `-p`.
    pub pids: Vec<i32>,
    /// `-t`.
    pub tids: Vec<i32>,
    /// `-i` / `--no-inherit`.
    pub no_inherit: bool,
    /// `-g`, `--call-graph`.
    pub call_graph: Option<CallGraph>,
    /// `-d`.
    pub data: bool,
    /// `--filter` and `--exclude-perf`, in their order.
    pub filters: Vec<Filter>,
    /// `--phys-data`.
    pub phys_data: bool,
    /// `--data-page-size`.
    pub data_page_size: bool,
    /// `--code-page-size`.
    pub code_page_size: bool,
    /// `-W`.
    pub weight: bool,
    /// `-I`: `sample_regs_intr`.
    pub intr_regs: Option<u64>,
    /// `--user-regs`: `sample_regs_user`.
    pub user_regs: Option<u64>,
    /// `--running-time`.
    pub running_time: bool,
    /// `--kernel-callchains`.
    pub kernel_callchains: bool,
    /// `--user-callchains`.
    pub user_callchains: bool,
    /// `--strict-freq`.
    pub strict_freq: bool,
    /// `--dry-run`.
    pub dry_run: bool,
    /// `-b`, `-j`: `branch_sample_type`.
    pub branch_stack: Option<u64>,
    /// `-P` (`Some(true)`) or `--no-period` (`Some(false)`).
    pub sample_period: Option<bool>,
    /// `--sample-cpu`.
    pub sample_cpu: bool,
    /// `-R`.
    pub raw_samples: bool,
    /// `-s`.
    pub stat: bool,
    /// `--switch-events`.
    pub switch_events: bool,
    /// `-k`: the clock's id.
    pub clockid: Option<i32>,
    /// `--all-user`.
    pub all_user: bool,
    /// `--all-kernel`.
    pub all_kernel: bool,
    /// `-T`.
    pub timestamp: bool,
    /// `-m`, in pages (a power of two).
    pub pages: usize,
    /// `-m` was rounded up: perf's "rounding mmap pages size to ..." line.
    pub pages_rounded: bool,
    /// `--overwrite`.
    pub overwrite: bool,
    /// `--tail-synthesize`.
    pub tail_synthesize: bool,
    /// `--switch-output`.
    pub switch_output: Option<crate::switch_output::When>,
    /// `--switch-max-files`.
    pub switch_max_files: Option<usize>,
    /// `--timestamp-filename` (implied by `--switch-output`).
    pub timestamp_filename: bool,
    /// `-r`.
    pub realtime: Option<i32>,
    /// `-D`: milliseconds, or -1 (never enabled).
    pub delay: Option<i64>,
    /// `-n`.
    pub no_samples: bool,
    /// `--no-buffering`.
    pub no_buffering: bool,
    /// `--no-bpf-event`.
    pub no_bpf_event: bool,
    /// `--max-size`, in bytes.
    pub max_size: Option<u64>,
    /// `-o`.
    pub output: String,
    /// `-z`: the zstd level.
    pub compression: Option<i32>,
    /// `-N`.
    pub no_buildid_cache: bool,
    /// `-B`.
    pub no_buildid: bool,
    /// `--buildid-all`.
    pub buildid_all: bool,
    /// `-q`.
    pub quiet: bool,
    /// `-v`, counted.
    pub verbose: u32,
    /// The command and its arguments.
    pub command: Vec<String>,
}

/// A tracepoint filter for the events of one `-e` (`--filter`, `--exclude-perf`).
#[derive(Debug, Clone, PartialEq)]
pub struct Filter {
    /// The `-e` it follows (an index into [`Options::events`]).
    pub item: usize,
    /// The filter, in the kernel's syntax.
    pub text: String,
    /// From `--exclude-perf` (`common_pid != <this process>`).
    pub exclude_perf: bool,
}

/// `-F`: a number, or `max` (the kernel's maximum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freq {
    /// So many samples a second.
    Hz(u64),
    /// `max`.
    Max,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            events: Vec::new(),
            freq: None,
            period: None,
            all_cpus: false,
            cpus: None,
            pids: Vec::new(),
            tids: Vec::new(),
            no_inherit: false,
            call_graph: None,
            data: false,
            filters: Vec::new(),
            phys_data: false,
            data_page_size: false,
            code_page_size: false,
            weight: false,
            intr_regs: None,
            user_regs: None,
            running_time: false,
            kernel_callchains: false,
            user_callchains: false,
            strict_freq: false,
            dry_run: false,
            branch_stack: None,
            sample_period: None,
            sample_cpu: false,
            raw_samples: false,
            stat: false,
            switch_events: false,
            clockid: None,
            all_user: false,
            all_kernel: false,
            timestamp: false,
            pages: 128,
            pages_rounded: false,
            overwrite: false,
            tail_synthesize: false,
            switch_output: None,
            switch_max_files: None,
            timestamp_filename: false,
            realtime: None,
            delay: None,
            no_samples: false,
            no_buffering: false,
            no_bpf_event: false,
            max_size: None,
            output: "perf.data".into(),
            compression: None,
            no_buildid_cache: false,
            no_buildid: false,
            buildid_all: false,
            quiet: false,
            verbose: 0,
            command: Vec::new(),
        }
    }
}

/// What `parse` ends in besides options.
#[derive(Debug)]
pub enum Parsed {
    /// Record.
    Run(Box<Options>),
    /// `-h`.
    Help,
}

/// A usage error: the message, printed with the usage, exit status 129.
#[derive(Debug, Clone, PartialEq)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(msg: impl Into<String>) -> Result<T, UsageError> {
    Err(UsageError(msg.into()))
}

/// How an option takes a value.
#[derive(Clone, Copy, PartialEq)]
enum Takes {
    Nothing,
    Value,
    /// Only attached (`-z3`, `--compression-level=3`): perf's OPTARG options.
    Optional,
}

/// (short, long, takes)
const OPTIONS: &[(Option<char>, &str, Takes)] = &[
    (Some('e'), "event", Takes::Value),
    (Some('F'), "freq", Takes::Value),
    (Some('c'), "count", Takes::Value),
    (Some('a'), "all-cpus", Takes::Nothing),
    (Some('C'), "cpu", Takes::Value),
    (Some('p'), "pid", Takes::Value),
    (Some('t'), "tid", Takes::Value),
    (Some('i'), "no-inherit", Takes::Nothing),
    (Some('g'), "", Takes::Nothing),
    (None, "call-graph", Takes::Value),
    (Some('d'), "data", Takes::Nothing),
    (None, "filter", Takes::Value),
    (None, "exclude-perf", Takes::Nothing),
    (None, "phys-data", Takes::Nothing),
    (None, "data-page-size", Takes::Nothing),
    (None, "code-page-size", Takes::Nothing),
    (Some('W'), "weight", Takes::Nothing),
    (Some('I'), "intr-regs", Takes::Optional),
    (None, "user-regs", Takes::Optional),
    (None, "running-time", Takes::Nothing),
    (None, "kernel-callchains", Takes::Nothing),
    (None, "user-callchains", Takes::Nothing),
    (None, "strict-freq", Takes::Nothing),
    (None, "dry-run", Takes::Nothing),
    (None, "timestamp-boundary", Takes::Nothing),
    (Some('b'), "branch-any", Takes::Nothing),
    (Some('j'), "branch-filter", Takes::Value),
    (Some('P'), "period", Takes::Nothing),
    (None, "no-period", Takes::Nothing),
    (None, "sample-cpu", Takes::Nothing),
    (Some('R'), "raw-samples", Takes::Nothing),
    (Some('s'), "stat", Takes::Nothing),
    (None, "switch-events", Takes::Nothing),
    (None, "no-switch-events", Takes::Nothing),
    (Some('k'), "clockid", Takes::Value),
    (None, "all-user", Takes::Nothing),
    (None, "all-kernel", Takes::Nothing),
    (Some('T'), "timestamp", Takes::Nothing),
    (Some('m'), "mmap-pages", Takes::Value),
    (Some('o'), "output", Takes::Value),
    (None, "overwrite", Takes::Nothing),
    (None, "tail-synthesize", Takes::Nothing),
    (None, "no-tail-synthesize", Takes::Nothing),
    (None, "switch-output", Takes::Optional),
    (None, "switch-max-files", Takes::Value),
    (None, "timestamp-filename", Takes::Nothing),
    (Some('D'), "delay", Takes::Value),
    (Some('r'), "realtime", Takes::Value),
    (Some('n'), "no-samples", Takes::Nothing),
    (None, "no-buffering", Takes::Nothing),
    (None, "no-bpf-event", Takes::Nothing),
    (None, "max-size", Takes::Value),
    (Some('z'), "compression-level", Takes::Optional),
    (Some('N'), "no-buildid-cache", Takes::Nothing),
    (Some('B'), "no-buildid", Takes::Nothing),
    (Some('q'), "quiet", Takes::Nothing),
    (Some('v'), "verbose", Takes::Nothing),
    (Some('h'), "help", Takes::Nothing),
    (None, "inherit", Takes::Nothing),
    (None, "buildid-cache", Takes::Nothing),
    (None, "buildid", Takes::Nothing),
    (None, "buildid-all", Takes::Nothing),
];

/// Parse the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Parsed, UsageError> {
    let mut o = Options::default();
    let mut args = args.into_iter().peekable();
    let mut pages: Option<String> = None;
    while let Some(a) = args.next() {
        if a == "--" {
            o.command = args.by_ref().collect();
            break;
        }
        if let Some(long) = a.strip_prefix("--") {
            let (name, attached) = match long.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (long, None),
            };
            let Some(&(short, full, takes)) = OPTIONS.iter().find(|(_, l, _)| !l.is_empty() && *l == name) else {
                return err(format!("unknown option `{name}'"));
            };
            let value = match (takes, attached) {
                (Takes::Nothing, Some(_)) => return err(format!("option `{name}' takes no value")),
                (Takes::Nothing, None) => None,
                (Takes::Optional, v) => v,
                (Takes::Value, Some(v)) => Some(v),
                (Takes::Value, None) => {
                    Some(args.next().ok_or_else(|| UsageError(format!("option `{name}' requires a value")))?)
                }
            };
            apply(&mut o, &mut pages, short, full, value)?;
            if o.events.iter().any(|e| e == "\0help") {
                return Ok(Parsed::Help);
            }
            continue;
        }
        if a.len() > 1 && a.starts_with('-') {
            let cluster: Vec<char> = a[1..].chars().collect();
            let mut i = 0;
            while i < cluster.len() {
                let c = cluster[i];
                let Some(&(short, full, takes)) = OPTIONS.iter().find(|(s, _, _)| *s == Some(c)) else {
                    return err(format!("unknown switch `{c}'"));
                };
                let rest: String = cluster[i + 1..].iter().collect();
                let value = match takes {
                    Takes::Nothing => None,
                    Takes::Optional => {
                        i = cluster.len();
                        (!rest.is_empty()).then_some(rest)
                    }
                    Takes::Value => {
                        i = cluster.len();
                        if rest.is_empty() {
                            Some(args.next().ok_or_else(|| UsageError(format!("switch `{c}' requires a value")))?)
                        } else {
                            Some(rest)
                        }
                    }
                };
                if takes == Takes::Nothing {
                    i += 1;
                }
                apply(&mut o, &mut pages, short, full, value)?;
                if o.events.iter().any(|e| e == "\0help") {
                    return Ok(Parsed::Help);
                }
            }
            continue;
        }
        // The command: perf stops at the first argument that is not an option.
        o.command = std::iter::once(a).chain(args.by_ref()).collect();
        break;
    }
    if let Some(p) = pages {
        (o.pages, o.pages_rounded) = mmap_pages(&p)?;
    }
    // perf: "Make system wide (-a) the default target": no command and no target is every CPU,
    // until SIGINT.
    if o.command.is_empty() && !o.all_cpus && o.cpus.is_none() && o.pids.is_empty() && o.tids.is_empty() {
        o.all_cpus = true;
    }
    check(&o)?;
    Ok(Parsed::Run(Box::new(o)))
}

fn number<T: std::str::FromStr>(option: &str, v: &str) -> Result<T, UsageError> {
    v.trim().parse().map_err(|_| UsageError(format!("{option} takes a number, not {v:?}")))
}

/// A list of ids: `1,2` or, for CPUs, `0-1,3`.
fn id_list<T: std::str::FromStr + Copy + Into<i64> + TryFrom<i64>>(
    option: &str,
    v: &str,
) -> Result<Vec<T>, UsageError> {
    let mut out = Vec::new();
    for part in v.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (T, T) = (number(option, a)?, number(option, b)?);
                let (a, b) = (a.into(), b.into());
                if b < a || b - a > 4096 {
                    return err(format!("{option}: bad range {part}"));
                }
                for x in a..=b {
                    out.push(T::try_from(x).map_err(|_| UsageError(format!("{option}: bad range {part}")))?);
                }
            }
            None => out.push(number(option, part)?),
        }
    }
    if out.is_empty() {
        return err(format!("{option} needs a list, not {v:?}"));
    }
    Ok(out)
}

/// `-m`: pages or a size (B/K/M/G), rounded up to a power of two of pages (perf's
/// `parse_pages_arg`); whether it was rounded.
pub fn mmap_pages(v: &str) -> Result<(usize, bool), UsageError> {
    let bad = || UsageError(format!("Invalid argument for --mmap_pages/-m: {v:?}"));
    let v = v.split(',').next().unwrap_or(v).trim();
    let page = 4096u64;
    let pages = match v.char_indices().last() {
        Some((i, tag @ ('B' | 'K' | 'M' | 'G' | 'b' | 'k' | 'm' | 'g'))) => {
            let n: u64 = v[..i].parse().map_err(|_| bad())?;
            let mult = match tag.to_ascii_uppercase() {
                'B' => 1,
                'K' => 1 << 10,
                'M' => 1 << 20,
                _ => 1 << 30,
            };
            n.checked_mul(mult).ok_or_else(bad)?.div_ceil(page)
        }
        _ => v.parse().map_err(|_| bad())?,
    };
    if pages == 0 {
        return Err(bad());
    }
    let rounded = pages.checked_next_power_of_two().ok_or_else(bad)?;
    if rounded > 1 << 24 {
        return Err(bad());
    }
    Ok((rounded as usize, rounded != pages))
}

fn apply(
    o: &mut Options,
    pages: &mut Option<String>,
    short: Option<char>,
    long: &str,
    value: Option<String>,
) -> Result<(), UsageError> {
    let v = value.unwrap_or_default();
    match (short, long) {
        (Some('e'), _) => o.events.push(v),
        (Some('F'), _) => {
            o.freq = Some(if v == "max" { Freq::Max } else { Freq::Hz(number("-F", &v)?) });
        }
        (Some('c'), _) => o.period = Some(number("-c", &v)?),
        (Some('a'), _) => o.all_cpus = true,
        (Some('C'), _) => o.cpus = Some(id_list::<u32>("-C", &v)?),
        (Some('p'), _) => o.pids.extend(id_list::<i32>("-p", &v)?),
        (Some('t'), _) => o.tids.extend(id_list::<i32>("-t", &v)?),
        (Some('i'), _) => o.no_inherit = true,
        (None, "inherit") => o.no_inherit = false,
        (Some('g'), _) => o.call_graph = Some(CallGraph::Fp),
        (None, "call-graph") => o.call_graph = Some(call_graph(&v)?),
        (Some('d'), _) => o.data = true,
        (None, "filter") => {
            // perf's parse_filter: for the events of the last -e (every one it named).
            let Some(last) = o.events.len().checked_sub(1) else {
                return err("--filter option should follow a -e tracepoint or HW tracer option");
            };
            o.filters.push(Filter { item: last, text: v, exclude_perf: false });
        }
        (None, "exclude-perf") => {
            let Some(last) = o.events.len().checked_sub(1) else {
                return err("--exclude-perf option should follow a -e tracepoint option");
            };
            o.filters.push(Filter {
                item: last,
                text: format!("common_pid != {}", std::process::id()),
                exclude_perf: true,
            });
        }
        (None, "phys-data") => o.phys_data = true,
        (None, "data-page-size") => o.data_page_size = true,
        (None, "code-page-size") => o.code_page_size = true,
        (Some('W'), _) => o.weight = true,
        (Some('I'), _) => o.intr_regs = Some(registers(o.intr_regs, &v, "-I")?),
        (None, "user-regs") => o.user_regs = Some(registers(o.user_regs, &v, "--user-regs=")?),
        (None, "running-time") => o.running_time = true,
        (None, "kernel-callchains") => o.kernel_callchains = true,
        (None, "user-callchains") => o.user_callchains = true,
        (None, "strict-freq") => o.strict_freq = true,
        (None, "dry-run") => o.dry_run = true,
        // perf writes the first and last sample times with it; ours are always written.
        (None, "timestamp-boundary") => {}
        (Some('b' | 'j'), _) if o.branch_stack.is_some() => {
            return err("Error: Can't use --branch-any (-b) with --branch-filter (-j).");
        }
        (Some('b'), _) => o.branch_stack = Some(branch_mode(None)?),
        (Some('j'), _) => o.branch_stack = Some(branch_mode(Some(&v))?),
        (Some('P'), _) => o.sample_period = Some(true),
        (None, "no-period") => o.sample_period = Some(false),
        (None, "sample-cpu") => o.sample_cpu = true,
        (Some('R'), _) => o.raw_samples = true,
        (Some('s'), _) => o.stat = true,
        (None, "switch-events") => o.switch_events = true,
        (None, "no-switch-events") => o.switch_events = false,
        (Some('k'), _) => {
            if o.clockid.is_some() {
                return err("-k/--clockid: given twice");
            }
            o.clockid = Some(clockid(&v)?);
        }
        (None, "all-user") => {
            if o.all_kernel {
                return err("option `all-user' cannot be used with all-kernel");
            }
            o.all_user = true;
        }
        (None, "all-kernel") => {
            if o.all_user {
                return err("option `all-kernel' cannot be used with all-user");
            }
            o.all_kernel = true;
        }
        (Some('T'), _) => o.timestamp = true,
        (Some('m'), _) => *pages = Some(v),
        (Some('o'), _) => o.output = v,
        (None, "overwrite") => o.overwrite = true,
        (None, "tail-synthesize") => o.tail_synthesize = true,
        (None, "no-tail-synthesize") => o.tail_synthesize = false,
        (None, "switch-output") => {
            let when = if v.is_empty() { "signal" } else { &v };
            o.switch_output = Some(crate::switch_output::When::parse(when).ok_or_else(|| {
                UsageError(format!(
                    "--switch-output={when}: give signal, a size (100M; B, K, M or G) or a time (30s; s, m, h or d)"
                ))
            })?);
            o.timestamp_filename = true;
        }
        (None, "switch-max-files") => o.switch_max_files = Some(number("--switch-max-files", &v)?),
        (None, "timestamp-filename") => o.timestamp_filename = true,
        (Some('D'), _) => o.delay = delay(&v)?,
        // perf's OPT_INTEGER; 0 leaves the policy alone.
        (Some('r'), _) => o.realtime = Some(number::<i32>("-r", &v)?).filter(|&p| p != 0),
        (Some('n'), _) => o.no_samples = true,
        (None, "no-buffering") => o.no_buffering = true,
        (None, "no-bpf-event") => o.no_bpf_event = true,
        (None, "max-size") => o.max_size = Some(max_size(&v)?),
        (Some('z'), _) => {
            o.compression = Some(if v.is_empty() { 1 } else { number("-z", &v)? });
            if !(1..=22).contains(&o.compression.unwrap_or(1)) {
                return err("-z: a compression level from 1 to 22");
            }
        }
        (Some('N'), _) => o.no_buildid_cache = true,
        (None, "buildid-cache") => o.no_buildid_cache = false,
        (Some('B'), _) => o.no_buildid = true,
        (None, "buildid") => o.no_buildid = false,
        (None, "buildid-all") => o.buildid_all = true,
        (Some('q'), _) => o.quiet = true,
        (Some('v'), _) => o.verbose += 1,
        (Some('h'), _) => o.events.push("\0help".into()),
        _ => return err(format!("unknown option {long}")),
    }
    Ok(())
}

/// `--call-graph fp`, `dwarf`, `dwarf,SIZE` (perf: a multiple of 8 up to 65528, default 8192).
fn call_graph(v: &str) -> Result<CallGraph, UsageError> {
    let mut parts = v.split(',');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("fp"), None, None) => Ok(CallGraph::Fp),
        (Some("dwarf"), size, None) => {
            let size: u64 = match size {
                Some(s) => number("--call-graph dwarf,SIZE", s)?,
                None => 8192,
            };
            let size = size.next_multiple_of(8);
            if size == 0 || size > 65528 {
                return err(format!("callchain: Incorrect stack dump size (max 65528): {size}"));
            }
            Ok(CallGraph::Dwarf { size: size as u32 })
        }
        (Some("lbr"), None, None) => {
            err("--call-graph lbr: this machine's PMU has no branch stack (perf: \"PMU Hardware or event type doesn't \
             support branch stack sampling\"); use fp or dwarf")
        }
        _ => err(format!("callchain: Unknown --call-graph option value: {v}")),
    }
}

/// The sampled registers perf names (x86-64: arch/x86/util/perf_regs.c; the segment registers
/// but CS and SS left out, as `PERF_REGS_MASK` leaves them).
#[cfg(target_arch = "x86_64")]
const REGISTERS: &[(&str, u32)] = &[
    ("AX", 0),
    ("BX", 1),
    ("CX", 2),
    ("DX", 3),
    ("SI", 4),
    ("DI", 5),
    ("BP", 6),
    ("SP", 7),
    ("IP", 8),
    ("FLAGS", 9),
    ("CS", 10),
    ("SS", 11),
    ("R8", 16),
    ("R9", 17),
    ("R10", 18),
    ("R11", 19),
    ("R12", 20),
    ("R13", 21),
    ("R14", 22),
    ("R15", 23),
];
#[cfg(not(target_arch = "x86_64"))]
const REGISTERS: &[(&str, u32)] = &[];

/// Every register of [`REGISTERS`]: perf's `PERF_REGS_MASK` (x86-64: 0xff0fff).
pub const REGS_MASK: u64 = {
    let mut mask = 0;
    let mut i = 0;
    while i < REGISTERS.len() {
        mask |= 1 << REGISTERS[i].1;
        i += 1;
    }
    mask
};

/// `-I`/`--user-regs`: perf's `__parse_regs`: no value, every register; else a comma list of
/// names in any case; `?` lists them (and stops, as perf stops); given twice, refused.
fn registers(already: Option<u64>, v: &str, option: &str) -> Result<u64, UsageError> {
    if already.is_some() {
        return err(format!("{option}: given twice"));
    }
    if v.is_empty() {
        return Ok(REGS_MASK);
    }
    let mut mask = 0;
    for name in v.split(',') {
        if name == "?" {
            let names: String = REGISTERS.iter().map(|(n, _)| format!("{n} ")).collect();
            return err(format!("available registers: {names}"));
        }
        let Some(&(_, bit)) = REGISTERS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) else {
            return err(format!("Unknown register \"{name}\", check man page or run \"perf record {option}?\""));
        };
        mask |= 1 << bit;
    }
    Ok(mask)
}

/// `-b` (`None`) and `-j MODE,...`: `branch_sample_type` as perf's `parse_branch_str` makes it
/// (names in any case; privilege levels alone mean any branch at those levels).
fn branch_mode(v: Option<&str>) -> Result<u64, UsageError> {
    // PERF_SAMPLE_BRANCH_*: include/uapi/linux/perf_event.h.
    const ANY: u64 = 1 << 3;
    const ONLY_PLM: u64 = 0b111;
    const MODES: &[(&str, u64)] = &[
        ("u", 1 << 0),
        ("k", 1 << 1),
        ("hv", 1 << 2),
        ("any", ANY),
        ("any_call", 1 << 4),
        ("any_ret", 1 << 5),
        ("ind_call", 1 << 6),
        ("abort_tx", 1 << 7),
        ("in_tx", 1 << 8),
        ("no_tx", 1 << 9),
        ("cond", 1 << 10),
        ("ind_jmp", 1 << 12),
        ("call", 1 << 13),
        ("save_type", 1 << 16),
        ("stack", 1 << 11),
        ("priv", 1 << 18),
    ];
    let Some(v) = v else { return Ok(ANY) };
    let mut mode = 0;
    for name in v.split(',') {
        let Some(&(_, bit)) = MODES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) else {
            return err(format!("unknown branch filter {name}, check man page"));
        };
        mode |= bit;
    }
    Ok(if mode & !ONLY_PLM == 0 { ANY } else { mode })
}

/// `--max-size`: perf's `parse_tag_value`: a whole number and its unit, B, K, M or G (one
/// of them, upper case).
fn max_size(v: &str) -> Result<u64, UsageError> {
    let bad = || UsageError(format!("--max-size takes a size with its unit (B, K, M or G: 20M), not {v:?}"));
    let (n, mult) = match v.char_indices().last() {
        Some((i, 'B')) => (&v[..i], 1u64),
        Some((i, 'K')) => (&v[..i], 1 << 10),
        Some((i, 'M')) => (&v[..i], 1 << 20),
        Some((i, 'G')) => (&v[..i], 1 << 30),
        _ => return Err(bad()),
    };
    n.parse::<u64>().ok().and_then(|n| n.checked_mul(mult)).ok_or_else(bad)
}

/// `-D`: perf's `str_to_delay`: a whole number of milliseconds from -1 up (0: no delay);
/// perf's time ranges (`10-20,30-40`) are refused.
fn delay(v: &str) -> Result<Option<i64>, UsageError> {
    match v.trim().parse::<i64>() {
        Ok(0) => Ok(None),
        Ok(d) if (-1..=i64::from(i32::MAX)).contains(&d) => Ok(Some(d)),
        _ if v.contains('-') && v.split([',', '-']).all(|p| p.trim().parse::<u64>().is_ok()) => {
            err(format!("-D {v}: time ranges are not supported here: give a delay in ms, or -1"))
        }
        _ => err(format!("-D takes a delay in ms (or -1), not {v:?}")),
    }
}

/// `-k`: perf's clock names (tools/perf/util/clockid.c), any case, with or without `CLOCK_`,
/// or a number.
fn clockid(v: &str) -> Result<i32, UsageError> {
    if let Ok(n) = v.trim().parse::<i32>() {
        return Ok(n);
    }
    let name = v.get(..6).filter(|p| p.eq_ignore_ascii_case("CLOCK_")).map_or(v, |_| &v[6..]);
    // Linux's clock ids (include/uapi/linux/time.h).
    const CLOCKS: &[(&str, i32)] = &[
        ("monotonic", 1),
        ("monotonic_raw", 4),
        ("realtime", 0),
        ("boottime", 7),
        ("tai", 11),
        ("mono", 1),
        ("raw", 4),
        ("real", 0),
        ("boot", 7),
    ];
    match CLOCKS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
        Some(&(_, id)) => Ok(id),
        None => err(format!("unknown clockid {v}, check man page")),
    }
}

/// What perf refuses among the options as given, before anything runs.
fn check(o: &Options) -> Result<(), UsageError> {
    if !o.pids.is_empty() && (o.all_cpus || o.cpus.is_some()) || !o.tids.is_empty() && (o.all_cpus || o.cpus.is_some())
    {
        return err("-p/-t and -a/-C exclude each other (PID/TID switch overriding CPU, as perf warns)");
    }
    if o.freq == Some(Freq::Hz(0)) {
        return err("-F 0 samples nothing: give a frequency of at least 1 Hz");
    }
    if o.period == Some(0) {
        return err("-c 0 samples nothing: give a period of at least 1 event");
    }
    if o.output == "-" && (o.switch_output.is_some() || o.timestamp_filename) {
        return err("--switch-output and --timestamp-filename name files: not with -o - (pipe mode)");
    }
    if o.freq.is_some() && o.period.is_some() {
        return err("-F and -c exclude each other");
    }
    for e in &o.events {
        events::check_syntax(e).map_err(|e| UsageError(e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(s: &str) -> Options {
        match parse(s.split_whitespace().map(String::from)) {
            Ok(Parsed::Run(o)) => *o,
            other => panic!("{s}: {other:?}"),
        }
    }

    #[test]
    fn clusters_attached_values_and_long_forms_are_perfs() {
        let o = run("-ag -F99 -oFILE -- true");
        assert!(o.all_cpus);
        assert_eq!((o.call_graph, o.freq, o.output.as_str()), (Some(CallGraph::Fp), Some(Freq::Hz(99)), "FILE"));
        assert_eq!(run("--freq=99 true").freq, Some(Freq::Hz(99)));
        assert_eq!(run("--freq 99 true").freq, Some(Freq::Hz(99)));
        assert_eq!(run("-F max true").freq, Some(Freq::Max));
        assert_eq!(run("-p 1,2").pids, vec![1, 2]);
        assert_eq!(run("-C 0-1,3").cpus, Some(vec![0, 1, 3]));
        assert_eq!(run("--call-graph dwarf,4096 true").call_graph, Some(CallGraph::Dwarf { size: 4096 }));
        assert_eq!(run("--call-graph dwarf true").call_graph, Some(CallGraph::Dwarf { size: 8192 }));
        assert_eq!(run("-z true").compression, Some(1));
        assert_eq!(run("--compression-level=3 true").compression, Some(3));
        assert!(run("-i -N -B -T -d -vv true").no_inherit);
        assert_eq!(run("-vv true").verbose, 2);
        let o = run("-e cycles -e a,b true -x");
        assert_eq!((o.events, o.command), (vec!["cycles".to_string(), "a,b".into()], vec!["true".into(), "-x".into()]));
    }

    #[test]
    fn sample_field_clock_and_scope_options_are_perfs() {
        let o = run("-e sched:sched_switch --filter a -e sched:sched_wakeup --filter b --filter c true");
        let f = |item, text: &str| Filter { item, text: text.into(), exclude_perf: false };
        assert_eq!(o.filters, vec![f(0, "a"), f(1, "b"), f(1, "c")]);
        let o = run("-e sched:sched_switch --exclude-perf true");
        let own = format!("common_pid != {}", std::process::id());
        assert_eq!(o.filters, vec![Filter { item: 0, text: own, exclude_perf: true }]);
        assert!(parse("--exclude-perf true".split_whitespace().map(String::from)).is_err());
        let o = run("-PWRs --sample-cpu --phys-data --data-page-size --code-page-size --switch-events true");
        assert_eq!((o.sample_period, o.weight, o.raw_samples, o.stat), (Some(true), true, true, true));
        assert!(o.sample_cpu && o.phys_data && o.data_page_size && o.code_page_size && o.switch_events);
        assert_eq!(run("-P --no-period true").sample_period, Some(false));
        assert!(!run("--switch-events --no-switch-events true").switch_events);
        for (clock, id) in
            [("mono", 1), ("MONOTONIC_RAW", 4), ("clock_boottime", 7), ("CLOCK_TAI", 11), ("real", 0), ("3", 3)]
        {
            assert_eq!(run(&format!("-k {clock} true")).clockid, Some(id), "{clock}");
        }
        assert!(run("--all-user true").all_user && run("--all-kernel true").all_kernel);
        assert!(run("--overwrite true").overwrite);
        assert!(run("--buildid-all true").buildid_all);
        assert_eq!((run("-r 10 true").realtime, run("-r0 true").realtime), (Some(10), None));
        assert_eq!((run("-I true").intr_regs, run("--intr-regs=ip true").intr_regs), (Some(0xff0fff), Some(0x100)));
        assert_eq!(run("--user-regs=AX,bx true").user_regs, Some(0x3));
        assert_eq!(run("-IAX,SP true").intr_regs, Some(0x81));
        for bad in ["-I? true", "--user-regs=nosuch true", "-I -IAX true"] {
            assert!(parse(bad.split_whitespace().map(String::from)).is_err(), "{bad}");
        }
        assert!(run("--tail-synthesize true").tail_synthesize);
        assert!(!run("--tail-synthesize --no-tail-synthesize true").tail_synthesize);
        assert_eq!(run("-b true").branch_stack, Some(1 << 3));
        assert_eq!(run("-j any_call,U true").branch_stack, Some(1 << 4 | 1));
        assert_eq!(run("-j k true").branch_stack, Some(1 << 3), "levels alone: any branch");
        for bad in ["-b -j any true", "-j nosuch true"] {
            assert!(parse(bad.split_whitespace().map(String::from)).is_err(), "{bad}");
        }
        use crate::switch_output::When;
        let o = run("--switch-output true");
        assert_eq!((o.switch_output, o.timestamp_filename), (Some(When::Signal), true));
        assert_eq!(run("--switch-output=100M true").switch_output, Some(When::Size(100 << 20)));
        assert_eq!(
            run("--switch-output=30s true").switch_output,
            Some(When::Every(std::time::Duration::from_secs(30)))
        );
        assert_eq!(run("--switch-output=2m --switch-max-files 3 true").switch_max_files, Some(3));
        assert!(run("--timestamp-filename true").timestamp_filename);
        for bad in ["--switch-output=x true", "--switch-output=10 true", "-o - --switch-output true"] {
            assert!(parse(bad.split_whitespace().map(String::from)).is_err(), "{bad}");
        }
        assert_eq!(
            (run("-D 100 true").delay, run("-D -1 true").delay, run("-D0 true").delay),
            (Some(100), Some(-1), None)
        );
        let o = run("-n --no-buffering --no-bpf-event --max-size 20K true");
        assert!(o.no_samples && o.no_buffering && o.no_bpf_event);
        assert_eq!((o.max_size, run("--max-size=3M true").max_size), (Some(20 << 10), Some(3 << 20)));
        for bad in ["-D 10-20 true", "-D x true", "-D -2 true", "--max-size 20 true", "--max-size 20k true"] {
            assert!(parse(bad.split_whitespace().map(String::from)).is_err(), "{bad}");
        }
        for bad in ["--filter x true", "-k nosuch true", "-k mono -k raw true", "--all-user --all-kernel true"] {
            assert!(parse(bad.split_whitespace().map(String::from)).is_err(), "{bad}");
        }
    }

    #[test]
    fn mmap_sizes_are_rounded_up_to_a_power_of_two_of_pages() {
        assert_eq!(mmap_pages("512K"), Ok((128, false)));
        assert_eq!(mmap_pages("3"), Ok((4, true)));
        assert_eq!(mmap_pages("5K"), Ok((2, false))); // 5 KiB is two pages, as perf counts (no notice)
        assert_eq!(mmap_pages("9K"), Ok((4, true)));
        assert_eq!(mmap_pages("1M"), Ok((256, false)));
        assert!(mmap_pages("0").is_err() && mmap_pages("x").is_err());
    }

    #[test]
    fn what_perf_refuses_is_refused() {
        assert!(run("-o x").all_cpus, "no command and no target: every CPU, as perf");
        for bad in ["-F 0 -- true", "-c 0 -- true", "-F 10 -c 10 -- true", "-a -p 1", "--nosuch", "-Y", "-e"] {
            assert!(parse(bad.split_whitespace().map(String::from)).is_err(), "{bad}");
        }
        assert!(matches!(parse(["-h".to_string()]), Ok(Parsed::Help)));
        assert!(matches!(parse(["--help".to_string()]), Ok(Parsed::Help)));
    }
}
