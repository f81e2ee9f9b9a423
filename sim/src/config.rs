//! What a simulated session looks like: tracing mode, machine, workload, consumer, schedule.

/// The tracing modes of Documentation/userspace-api/perf_ring_buffer.rst: which (thread, CPU) pairs are traced and which buffer
/// each traced sample goes to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Mode {
    /// `perf record -p PID` (inherit): per-CPU buffers, every thread of one process.
    Default {
        /// The traced process.
        pid: u32,
    },
    /// `perf record --per-thread -t TID`: one buffer that follows the thread across CPUs.
    PerThread {
        /// The traced thread.
        tid: u32,
    },
    /// `perf record -C LIST`: every thread, only on the listed CPUs; a buffer per listed CPU.
    PerCpu {
        /// The listed CPUs.
        cpus: Vec<u32>,
    },
    /// `perf record -a`: every thread on every CPU; a buffer per CPU.
    SystemWide,
    /// `perf record --per-thread -t TID -C LIST`: one thread, only on the listed CPUs; a buffer
    /// per listed CPU.
    PerThreadCpus {
        /// The traced thread.
        tid: u32,
        /// The listed CPUs.
        cpus: Vec<u32>,
    },
}

impl Mode {
    /// The buffers this mode creates, as labels, given the machine's CPU count.
    pub fn buffers(&self, cpus: u32) -> Vec<String> {
        match self {
            Mode::Default { .. } | Mode::SystemWide => (0..cpus).map(|c| format!("cpu{c}")).collect(),
            Mode::PerThread { tid } => vec![format!("tid{tid}")],
            Mode::PerCpu { cpus: list } | Mode::PerThreadCpus { cpus: list, .. } => {
                list.iter().filter(|&&c| c < cpus).map(|c| format!("cpu{c}")).collect()
            }
        }
    }

    /// The buffer a sample of (`pid`, `tid`) on `cpu` goes to, or `None` if it is not traced.
    /// The oracle calls this independently of the engine to check placement.
    pub fn buffer_for(&self, cpus: u32, pid: u32, tid: u32, cpu: u32) -> Option<usize> {
        if tid == 0 {
            return None; // the idle task is never sampled
        }
        match self {
            Mode::Default { pid: p } => (pid == *p).then_some(cpu as usize),
            Mode::SystemWide => Some(cpu as usize),
            Mode::PerThread { tid: t } => (tid == *t).then_some(0),
            Mode::PerCpu { cpus: list } => listed(list, cpus, cpu),
            Mode::PerThreadCpus { tid: t, cpus: list } => {
                if tid == *t {
                    listed(list, cpus, cpu)
                } else {
                    None
                }
            }
        }
    }

    /// A short name.
    pub fn name(&self) -> &'static str {
        match self {
            Mode::Default { .. } => "default",
            Mode::PerThread { .. } => "per-thread",
            Mode::PerCpu { .. } => "per-cpu",
            Mode::SystemWide => "system-wide",
            Mode::PerThreadCpus { .. } => "per-thread-cpus",
        }
    }
}

fn listed(list: &[u32], cpus: u32, cpu: u32) -> Option<usize> {
    list.iter().filter(|&&c| c < cpus).position(|&c| c == cpu)
}

/// The AUX-area hardware tracer of each buffer (ordered: off < full < snapshot).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AuxMode {
    /// No AUX area.
    Off,
    /// A writable AUX mapping: the tracer respects `aux_tail`; the consumer reads everything.
    Full,
    /// A read-only AUX mapping: the tracer overwrites; the consumer takes snapshots (the USR2
    /// flow of Documentation/userspace-api/perf_ring_buffer.rst: stop the tracers, snapshot, restart).
    Snapshot,
}

/// A simulated session.
#[derive(Debug, Clone)]
pub struct SimConfig {
    /// Tracing mode.
    pub mode: Mode,
    /// Simulated CPUs.
    pub cpus: u32,
    /// Threads: tids 1000.. ; the first half (at least one) belong to process 1000.
    pub threads: u32,
    /// Steps to run (a step is 1 µs of simulated time on every CPU).
    pub steps: u32,
    /// Seed of every random choice.
    pub seed: u64,
    /// Data area of each buffer, bytes (a power of two ≥ 64).
    pub ring_size: usize,
    /// The consumer reads each buffer every this many steps (and when woken).
    pub read_every: u32,
    /// Records read per read (0: everything available).
    pub read_budget: u32,
    /// Steps between a wakeup and the reader running (its scheduling latency).
    pub wake_latency: u32,
    /// Chance, per mille, that an interrupt fires at each preemption point of a writer.
    pub irq_permille: u32,
    /// Chance, per mille per step and CPU, of an NMI sample at top level.
    pub nmi_permille: u32,
    /// Chance, per mille per step and CPU, that the running thread hits the tracepoint.
    pub tracepoint_permille: u32,
    /// Page faults per step of a running thread (the software event's occurrences).
    pub faults_per_step: u64,
    /// Sample period of the page-fault event (ignored with `freq`).
    pub sample_period: u64,
    /// Frequency mode: adjust the page-fault period every tick towards this many samples per
    /// simulated second.
    pub freq: Option<u64>,
    /// Timer tick (cpu-clock sample, hardirq then softirq) every this many steps.
    pub tick_every: u32,
    /// Throttle: samples per event per CPU per tick above which the kernel logs THROTTLE.
    pub max_samples_per_tick: u32,
    /// Backward overwrite rings read with pause/read/resume, instead of forward rings.
    pub backward: bool,
    /// Use the pre-2019 `put_handle` ordering (to show the harness catches its bug).
    pub legacy_put_handle: bool,
    /// AUX tracing: a simulated Intel BTS tracer per buffer (see [`crate::bts`]).
    pub aux: AuxMode,
    /// AUX area per buffer, bytes (a power of two).
    pub aux_size: usize,
    /// Taken branches a traced thread executes per step (each a 24-byte BTS record).
    pub aux_branches_per_step: usize,
    /// Steps per stretch (`aux_output_begin` … `aux_output_end`), unless a context switch ends it.
    pub aux_stretch: u32,
    /// Snapshot mode: steps between snapshot triggers.
    pub snapshot_every: u32,
    /// Per mille chance, at each preemption point, that an interrupt at the *same* context
    /// level tries to trace (refused by the recursion guard, as the kernel does).
    pub recursion_permille: u32,
}

impl Default for SimConfig {
    /// The `make demo` session: system-wide on 4 CPUs, IRQ/NMI nesting, a consumer slow
    /// enough to lose some records.
    fn default() -> Self {
        SimConfig {
            mode: Mode::SystemWide,
            cpus: 4,
            threads: 6,
            steps: 200_000,
            seed: 1,
            ring_size: 16384,
            read_every: 1000,
            read_budget: 0,
            wake_latency: 200,
            irq_permille: 30,
            nmi_permille: 20,
            tracepoint_permille: 80,
            faults_per_step: 3,
            sample_period: 10,
            freq: None,
            tick_every: 4,
            max_samples_per_tick: 6,
            backward: false,
            legacy_put_handle: false,
            recursion_permille: 5,
            aux: AuxMode::Off,
            aux_size: 8192,
            aux_branches_per_step: 1,
            aux_stretch: 50,
            snapshot_every: 5000,
        }
    }
}
