//! The command line, as `perf record` 6.1 takes it. One declarative table ([`table::OPTIONS`],
//! perf's options in perf's order) says for each option its short and long names, how it takes
//! a value, its help and its effect; the grammar ([`grammar`], perf's
//! tools/lib/subcmd/parse-options.c: unambiguous long prefixes, `--no-` negations, attached and
//! clustered short options, perf's messages) and `--help` ([`help`]) are derived from it.

mod grammar;
mod help;
mod table;
mod values;

pub use help::{help, list_opts};
pub use values::{When, REGS_MASK};

use crate::events;

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

/// `-F`: a number, or `max` (the kernel's maximum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freq {
    /// So many samples a second.
    Hz(u64),
    /// `max`.
    Max,
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

/// One `-G`: its names as given (split at commas; an empty one leaves its event unfiltered) and
/// how many `-e` items came before it (the events it applies to are theirs).
#[derive(Debug, Clone, PartialEq)]
pub struct Cgroups {
    /// The `-e` items before it.
    pub after: usize,
    /// The names, in order.
    pub names: Vec<String>,
}

/// `--threads`: which rings each reader thread takes (perf's parallel streaming).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Threads {
    /// A thread per CPU (the default).
    Cpu,
    /// A thread per core (the CPUs of `core_cpus_list`).
    Core,
    /// A thread per package.
    Package,
    /// A thread per NUMA node.
    Numa,
    /// The user's masks: `maps/affinity:maps/affinity...`, each a CPU list.
    User(String),
}

/// Everything the command line says. Fields are at their zero value unless an option set
/// them; the defaults perf applies are methods ([`Options::output`], [`Options::pages`]).
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Options {
    /// `-e` items, as given (each may be a list or a group).
    pub events: Vec<String>,
    /// `-F`: a rate, or `None` for the default.
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
    /// `-u`: the user (a name or a number).
    pub uid: Option<String>,
    /// `-i` / `--no-inherit`.
    pub no_inherit: bool,
    /// `-g`, `--call-graph`.
    pub call_graph: Option<CallGraph>,
    /// `-d`.
    pub data: bool,
    /// `--filter` and `--exclude-perf`, in their order.
    pub filters: Vec<Filter>,
    /// `-G`, in their order.
    pub cgroups: Vec<Cgroups>,
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
    /// `--sample-identifier`.
    pub sample_identifier: bool,
    /// `--group`.
    pub group: bool,
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
    /// `-T` (`Some(true)`) or `--no-timestamp` (`Some(false)`).
    pub timestamp: Option<bool>,
    /// `-m`: pages (a power of two) and whether perf's rounding notice is due.
    pub mmap_pages: Option<(usize, bool)>,
    /// `--overwrite`.
    pub overwrite: bool,
    /// `--tail-synthesize`.
    pub tail_synthesize: bool,
    /// `--switch-output`.
    pub switch_output: Option<When>,
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
    /// `-o` (`None`: perf.data).
    pub output_path: Option<String>,
    /// `-z`: the zstd level.
    pub compression: Option<i32>,
    /// `-N`.
    pub no_buildid_cache: bool,
    /// `-B`.
    pub no_buildid: bool,
    /// `--buildid-all`.
    pub buildid_all: bool,
    /// `--threads`.
    pub threads: Option<Threads>,
    /// `--per-thread`.
    pub per_thread: bool,
    /// `--mmap-flush`: bytes a ring holds before it is read.
    pub mmap_flush: Option<usize>,
    /// `--namespaces`.
    pub namespaces: bool,
    /// `--all-cgroups`.
    pub all_cgroups: bool,
    /// `--proc-map-timeout`, in milliseconds.
    pub proc_map_timeout: Option<u64>,
    /// `--aio`: buffers in flight (0: none, the recorder writes the file itself; below 0:
    /// refused as perf fails on it).
    pub aio: i64,
    /// `--affinity`: where each ring is read.
    pub affinity: perfring_linux::Affinity,
    /// `--kcore`.
    pub kcore: bool,
    /// `--vmlinux`.
    pub vmlinux: Option<String>,
    /// Perf's AUX-area options given (`-S`, `--aux-sample`): refused where there is no AUX
    /// area (always here: this recorder maps none), with perf's words.
    pub aux: Option<&'static str>,
    /// Warnings the options themselves call for (`--off-cpu`, `--debuginfod`), printed unless
    /// `-q`.
    pub notices: Vec<String>,
    /// `-q`.
    pub quiet: bool,
    /// `-v`, counted.
    pub verbose: u32,
    /// The command and its arguments.
    pub command: Vec<String>,
}

/// perf's default `--proc-map-timeout`, in milliseconds.
pub const PROC_MAP_TIMEOUT_MS: u64 = 500;

/// perf's default `-m`: 512 KiB of data per ring.
pub const DEFAULT_PAGES: usize = 128;

impl Options {
    /// `-o`, or perf's default, `perf.data`.
    pub fn output(&self) -> &str {
        self.output_path.as_deref().unwrap_or("perf.data")
    }

    /// Data pages per ring (`-m`, or perf's default).
    pub fn pages(&self) -> usize {
        self.mmap_pages.map_or(DEFAULT_PAGES, |(p, _)| p)
    }

    /// `--per-thread` where it applies (perf ignores it system-wide): a ring per task, no
    /// `inherit` (perf's `evlist__config`: a CPU map of -1 sets `no_inherit`).
    pub fn per_thread(&self) -> bool {
        self.per_thread && !self.cpu_wide()
    }

    /// Whether samples carry their time: perf's `evsel__config` sets TIME unless the events
    /// are opened per task without inherit (`--per-thread`), where only `-T` asks for it.
    pub fn sample_time(&self) -> bool {
        !self.per_thread() || self.timestamp == Some(true)
    }

    /// Whether the recording is system-wide (`-a`, `-C`).
    pub fn cpu_wide(&self) -> bool {
        self.all_cpus || self.cpus.is_some()
    }
}

/// What `parse` ends in besides options.
#[derive(Debug)]
pub enum Parsed {
    /// Record.
    Run(Box<Options>),
    /// `--help`: the help on stdout, status 0.
    Help,
    /// `-h` (perf's internal help): the help on stderr, status 129.
    ShortHelp,
    /// `--list-opts`: the long names in table order, status 130 (perf's).
    ListOpts,
}

/// A usage error: the message, printed with the usage, exit status 129. An empty message is
/// perf's bare usage (an option whose callback refused without a word: `--no-freq`).
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

/// Parse the arguments after the program name.
pub fn parse(args: impl IntoIterator<Item = String>) -> Result<Parsed, UsageError> {
    let mut o = Options::default();
    match grammar::parse(&mut o, args.into_iter().collect())? {
        grammar::Ended::Help => return Ok(Parsed::Help),
        grammar::Ended::ShortHelp => return Ok(Parsed::ShortHelp),
        grammar::Ended::ListOpts => return Ok(Parsed::ListOpts),
        grammar::Ended::Options => {}
    }
    // perf: "Make system wide (-a) the default target": no command and no target is every CPU,
    // until SIGINT.
    let targets = o.cpu_wide() || !o.pids.is_empty() || !o.tids.is_empty() || o.uid.is_some();
    if o.command.is_empty() && !targets {
        o.all_cpus = true;
    }
    check(&o)?;
    Ok(Parsed::Run(Box::new(o)))
}

/// What perf refuses among the options as given, before anything runs.
fn check(o: &Options) -> Result<(), UsageError> {
    if (!o.pids.is_empty() || !o.tids.is_empty()) && o.cpu_wide() {
        return err("-p/-t and -a/-C exclude each other (PID/TID switch overriding CPU, as perf warns)");
    }
    // perf: after the default target, so a recording of every CPU without -a takes -G.
    if !o.cgroups.is_empty() && !o.all_cpus {
        return err("cgroup monitoring only available in system-wide mode");
    }
    if o.output() == "-" && (o.switch_output.is_some() || o.timestamp_filename) {
        return err("--switch-output and --timestamp-filename name files: not with -o - (pipe mode)");
    }
    for e in &o.events {
        events::check_syntax(e).map_err(|e| UsageError(e.to_string()))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
