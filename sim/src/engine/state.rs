//! The simulation's state: the CPUs, threads and buffers, what was produced (the oracle's
//! record of truth), the per-buffer results, and the producer hooks' handle on it.

use std::cell::RefCell;
use std::collections::HashMap;

use crate::records::AuxtraceRecord;
use perfring::record::Aux;

use crate::config::SimConfig;
use crate::program::{Program, Walk};
use crate::records::EventKind;
use crate::rng::Rng;

/// Context levels, as `interrupt_context_level()`: 0 task, 1 softirq, 2 hardirq, 3 NMI.
pub type Level = usize;
pub(super) const LEVELS: usize = 4;

/// Per-buffer results.
#[derive(Debug, Clone, Default)]
pub struct BufferStats {
    /// Label (`cpu2`, `tid1000`).
    pub label: String,
    /// Records the kernel tried to write (samples, THROTTLE, UNTHROTTLE).
    pub attempted: u64,
    /// Records written.
    pub written: u64,
    /// Records dropped (no space or paused).
    pub dropped: u64,
    /// Records the consumer read (not counting LOST).
    pub consumed: u64,
    /// Σ lost over PERF_RECORD_LOST records read.
    pub lost_reported: u64,
    /// Drops not yet reported when the run ended (`rb->lost`).
    pub lost_pending: u64,
    /// Wakeups delivered.
    pub wakeups: u64,
    /// Records written by a nested writer (an interrupt inside another writer).
    pub nested: u64,
    /// Deepest nesting of writers seen.
    pub max_depth: u32,
    /// Records whose bytes wrapped the end of the ring.
    pub wrapped: u64,
    /// Backward reads made (backward mode).
    pub backward_reads: u64,
    /// THROTTLE and UNTHROTTLE records read.
    pub throttles: u64,
    /// AUX trace bytes the tracer wrote.
    pub aux_written: u64,
    /// AUX trace bytes the consumer read (snapshots may read fewer: older bytes are overwritten).
    pub aux_read: u64,
    /// PERF_RECORD_AUX records read from the data ring.
    pub aux_records: u64,
    /// AUX stretches ended by a context switch (a trace discontinuity).
    pub aux_discontinuities: u64,
    /// Taken branches the traced threads executed while traced (each one a BTS record to write).
    pub branches: u64,
    /// BTS records the tracer wrote into the AUX area.
    pub branches_written: u64,
    /// Branches the tracer could not write: the AUX area was full (the kernel truncates the
    /// stretch and stops the event until the reader frees space).
    pub branches_dropped: u64,
    /// Records the tracer wrote that were overwritten before a snapshot captured them
    /// (snapshot mode).
    pub branches_overwritten: u64,
    /// Records the consumer read into the output's AUXTRACE buffers: the branches perf decodes.
    pub branches_read: u64,
}

/// One entry of the consumed stream, for perf.data.
#[derive(Debug, Clone)]
pub enum Out {
    /// A record read from a buffer.
    Record(Vec<u8>),
    /// The end of one pass over all buffers (perf's FINISHED_ROUND).
    Round,
    /// A PERF_RECORD_AUXTRACE and the AUX bytes that follow it in the file.
    Auxtrace(AuxtraceRecord, Vec<u8>),
}

/// What a run produced and what the oracle found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Per buffer.
    pub buffers: Vec<BufferStats>,
    /// Oracle violations (empty if every check held).
    pub violations: Vec<String>,
    /// Interrupts refused by the recursion guard.
    pub recursion_refused: u64,
    /// Samples suppressed while throttled.
    pub throttled_samples: u64,
    /// The consumed stream.
    pub out: Vec<Out>,
    /// Samples per (cpu, tid) read, for the perf interop check.
    pub samples_by_cpu_tid: HashMap<(u32, u32), u64>,
    /// BTS records read, by the function their branch left (`from`), for the perf interop check.
    pub branches_by_function: std::collections::BTreeMap<&'static str, u64>,
}

impl Report {
    /// Sum of a field over buffers.
    pub fn total(&self, f: impl Fn(&BufferStats) -> u64) -> u64 {
        self.buffers.iter().map(f).sum()
    }
}

#[derive(Debug, Clone)]
pub(super) struct Thread {
    pub(super) pid: u32,
    pub(super) tid: u32,
    pub(super) on_cpu: Option<u32>,
    pub(super) faults: u64,
}

#[derive(Debug, Clone, Default)]
pub(super) struct Cpu {
    pub(super) running: Option<usize>,
    /// Context levels with an open writer (the recursion guard), in nesting order.
    pub(super) stack: Vec<Level>,
}

#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Throttle {
    pub(super) samples: u32,
    pub(super) throttled: bool,
}

/// Oracle bookkeeping of one sample the kernel wrote.
#[derive(Debug, Clone)]
pub(super) struct Produced {
    pub(super) buffer: usize,
    pub(super) level: Level,
    pub(super) bytes: Vec<u8>,
}

pub(super) struct State {
    pub(super) cfg: SimConfig,
    pub(super) rng: Rng,
    pub(super) time: u64,
    pub(super) cpus: Vec<Cpu>,
    pub(super) threads: Vec<Thread>,
    pub(super) next_seq: u64,
    pub(super) period: u64,
    pub(super) throttle: HashMap<(EventKind, u32), Throttle>,
    pub(super) produced: HashMap<u64, Produced>,
    pub(super) stats: Vec<BufferStats>,
    pub(super) observed_head: Vec<Option<usize>>,
    pub(super) woken: Vec<bool>,
    /// Last sequence number read per (buffer, cpu, level): program order per context.
    pub(super) last_seq: HashMap<(usize, u32, Level), u64>,
    /// PERF_RECORD_AUX records the tracers emitted, per buffer, in order.
    pub(super) aux_expected: Vec<std::collections::VecDeque<Aux>>,
    /// The code the threads run, and each traced thread's place in it (AUX tracing).
    pub(super) program: Program,
    pub(super) walks: HashMap<u32, Walk>,
    pub(super) report: Report,
}

impl State {
    pub(super) fn violation(&mut self, v: String) {
        if self.report.violations.len() < 20 {
            self.report.violations.push(v);
        }
    }
}

/// The producer hooks of the simulation: observe `data_head`, and sometimes fire an interrupt.
pub struct SimHooks<'s, const LEGACY: bool> {
    pub(super) state: &'s RefCell<State>,
    pub(super) buffer: usize,
    pub(super) cpu: std::cell::Cell<u32>,
}
