//! The simulated kernel: CPUs with a context stack (task → softirq → hardirq → NMI), a
//! scheduler, event sources, and interrupts fired at the producer's preemption points, all
//! writing through the real `perfring` producer; a consumer per buffer; and the oracle's checks.
//!
//! Everything is deterministic for a seed: the "concurrency" is interrupts injected at the
//! labelled preemption points of the producer (same-CPU nesting, as in the kernel), and a
//! consumer that observes `data_head` at every such point (as another CPU could).

use std::cell::RefCell;
use std::collections::HashMap;

use perfring::backward::BackwardReader;
use perfring::consumer::ReadError;
use perfring::consumer::{Consumer, Trusted};
use perfring::memory::{ExclusiveMemory, Position, RingMemory};
use perfring::producer::{EventIdentity, Hooks, OutputError, PreemptPoint, Producer, ProducerConfig};
use perfring::record::{types, Aux, Endian, Header};

use perfring::aux::{AuxConsumer, AuxProducer};

use crate::config::{AuxMode, SimConfig};
use crate::program::Program;
use crate::records::{throttle, trailer, EventKind, Sample};
use crate::rng::Rng;

mod state;
mod tracer;

pub use state::{BufferStats, Level, Out, Report};
use state::{Cpu, Produced, SimHooks, State, Thread, Throttle, LEVELS};
use tracer::Tracer;

impl<'s, M: RingMemory, const LEGACY: bool> Hooks<M> for SimHooks<'s, LEGACY> {
    const LEGACY_PUT_HANDLE: bool = LEGACY;

    fn preempt(&self, at: PreemptPoint, producer: &Producer<M, Self>) {
        let cpu = self.cpu.get();
        let inject = {
            let mut st = self.state.borrow_mut();
            // The consumer, on another CPU, may look at data_head at any moment.
            let head = producer.memory().position(Position::DataHead).load(perfring::fences::LOCAL);
            let backward = st.cfg.backward;
            if let Some(prev) = st.observed_head[self.buffer] {
                let went_back = if backward {
                    head.wrapping_sub(prev) as isize > 0
                } else {
                    (head.wrapping_sub(prev) as isize) < 0
                };
                if went_back {
                    let label = st.stats[self.buffer].label.clone();
                    st.violation(format!("{label}: data_head went backwards {prev:#x} -> {head:#x} at {at:?}"));
                }
            }
            st.observed_head[self.buffer] = Some(head);
            if at == PreemptPoint::AfterReserve {
                let depth = producer.nest();
                let s = &mut st.stats[self.buffer];
                s.max_depth = s.max_depth.max(depth);
            }
            let top = st.cpus[cpu as usize].stack.last().copied().unwrap_or(0);
            let recursion = st.cfg.recursion_permille;
            if st.rng.chance(recursion) {
                // An event of the same context level tries to trace from inside the tracer.
                st.report.recursion_refused += 1;
            }
            let irq = st.cfg.irq_permille;
            if top + 1 < LEVELS && st.rng.chance(irq) {
                Some(top + 1 + st.rng.below((LEVELS - top - 1) as u64) as usize)
            } else {
                None
            }
        };
        if let Some(level) = inject {
            let event = match level {
                1 => EventKind::Tracepoint,
                2 => EventKind::CpuClock,
                _ => EventKind::Nmi,
            };
            fire(self.state, producer, self.buffer, cpu, level, event, true);
        }
    }

    fn wakeup(&self, _producer: &Producer<M, Self>) {
        let mut st = self.state.borrow_mut();
        st.stats[self.buffer].wakeups += 1;
        st.woken[self.buffer] = true;
    }
}

/// Take a sample of `event` for the thread running on `cpu`, at context `level`, and write it
/// with `producer` (whose buffer is `buffer`) if the mode traces it there.
fn fire<M: RingMemory, const L: bool>(
    state: &RefCell<State>,
    producer: &Producer<M, SimHooks<'_, L>>,
    buffer: usize,
    cpu: u32,
    level: Level,
    event: EventKind,
    nested: bool,
) {
    let record = {
        let mut st = state.borrow_mut();
        let Some(t) = st.cpus[cpu as usize].running else { return };
        let (pid, tid) = (st.threads[t].pid, st.threads[t].tid);
        if st.cfg.mode.buffer_for(st.cfg.cpus, pid, tid, cpu) != Some(buffer) {
            return;
        }
        if st.cpus[cpu as usize].stack.contains(&level) {
            st.report.recursion_refused += 1;
            return;
        }
        // Throttle: at most max_samples_per_tick samples per event and CPU per tick.
        let max = st.cfg.max_samples_per_tick;
        let time = st.time + level as u64;
        let th = st.throttle.entry((event, cpu)).or_default();
        th.samples += 1;
        if th.samples > max {
            if th.throttled {
                st.report.throttled_samples += 1;
                return;
            }
            th.throttled = true;
            Rec::Other(throttle(false, event, pid, tid, time, cpu), event, pid, tid, time)
        } else {
            let seq = st.next_seq;
            st.next_seq += 1;
            let period = match event {
                EventKind::PageFaults => st.period,
                EventKind::CpuClock => 1000 * u64::from(st.cfg.tick_every),
                _ => 1,
            };
            let sample = Sample { event, seq, pid, tid, time, cpu, period };
            let bytes = sample.encode();
            st.produced.insert(seq, Produced { buffer, level, bytes: bytes.clone() });
            Rec::Sample(bytes, sample)
        }
    };
    write(state, producer, buffer, cpu, level, record, nested);
}

enum Rec {
    Sample(Vec<u8>, Sample),
    Other(Vec<u8>, EventKind, u32, u32, u64),
}

fn write<M: RingMemory, const L: bool>(
    state: &RefCell<State>,
    producer: &Producer<M, SimHooks<'_, L>>,
    buffer: usize,
    cpu: u32,
    level: Level,
    rec: Rec,
    nested: bool,
) {
    let (bytes, event, pid, tid, time, is_sample) = match rec {
        Rec::Sample(b, s) => (b, s.event, s.pid, s.tid, s.time, true),
        Rec::Other(b, e, p, t, time) => (b, e, p, t, time, false),
    };
    {
        let mut st = state.borrow_mut();
        st.cpus[cpu as usize].stack.push(level);
        st.stats[buffer].attempted += 1;
    }
    producer.hooks().cpu.set(cpu);
    let writer = EventIdentity { id: event.id(), sample_id: Some(trailer(event, pid, tid, time, cpu)) };
    let result = producer.output_begin(bytes.len(), &writer);
    let written = match result {
        Ok(mut handle) => {
            let data_size = producer.data_size();
            let start = producer.head().wrapping_sub(bytes.len());
            if !producer_backward(state) && (start & (data_size - 1)) + bytes.len() > data_size {
                state.borrow_mut().stats[buffer].wrapped += 1;
            }
            // In three pieces, so interrupts can strike between payload writes.
            let (a, rest) = bytes.split_at(8);
            let (b, c) = rest.split_at(rest.len() / 2);
            for part in [a, b, c] {
                handle.write(part).expect("the reservation has exactly the record's size");
            }
            if is_sample {
                handle.count_sample();
            }
            handle.end();
            true
        }
        Err(OutputError::NoSpace | OutputError::Paused) => false,
        Err(e) => panic!("the simulator asked for a bad size: {e}"),
    };
    let mut st = state.borrow_mut();
    st.cpus[cpu as usize].stack.pop();
    let s = &mut st.stats[buffer];
    if written {
        s.written += 1;
        if nested {
            s.nested += 1;
        }
    } else {
        s.dropped += 1;
    }
}

fn producer_backward(state: &RefCell<State>) -> bool {
    state.borrow().cfg.backward
}

/// The consumer side of one buffer.
enum Reader<M: RingMemory> {
    Forward(Consumer<M, Trusted>),
    Backward(BackwardReader<M>),
}

/// Run a session over `rings` (one per buffer of the mode; each a zeroed ring memory) and check
/// it. The old (pre-2019) put_handle ordering is used if `cfg.legacy_put_handle`.
pub fn run<M: ExclusiveMemory>(cfg: &SimConfig, rings: &mut [M]) -> Report {
    run_with_progress(cfg, rings, |_| {})
}

/// [`run`], calling `progress(step)` every 10,000 steps.
pub fn run_with_progress<M: ExclusiveMemory>(cfg: &SimConfig, rings: &mut [M], progress: impl FnMut(u32)) -> Report {
    if cfg.legacy_put_handle {
        run_with::<M, true>(cfg, rings, progress)
    } else {
        run_with::<M, false>(cfg, rings, progress)
    }
}

fn run_with<M: ExclusiveMemory, const L: bool>(
    cfg: &SimConfig,
    rings: &mut [M],
    mut progress: impl FnMut(u32),
) -> Report {
    let labels = cfg.mode.buffers(cfg.cpus);
    assert_eq!(labels.len(), rings.len(), "one ring per buffer of the mode");
    let threads = (0..cfg.threads.max(1))
        .map(|i| {
            let tid = 1000 + i;
            let pid = if i < cfg.threads.max(2) / 2 { 1000 } else { tid };
            Thread { pid, tid, on_cpu: None, faults: 0 }
        })
        .collect();
    let state = RefCell::new(State {
        cfg: cfg.clone(),
        rng: Rng::new(cfg.seed),
        time: 0,
        cpus: vec![Cpu::default(); cfg.cpus as usize],
        threads,
        next_seq: 0,
        period: cfg.sample_period.max(1),
        throttle: HashMap::new(),
        produced: HashMap::new(),
        stats: labels.iter().map(|l| BufferStats { label: l.clone(), ..BufferStats::default() }).collect(),
        observed_head: vec![None; rings.len()],
        woken: vec![false; rings.len()],
        last_seq: HashMap::new(),
        aux_expected: vec![Default::default(); rings.len()],
        program: Program::new(),
        walks: HashMap::new(),
        report: Report::default(),
    });
    let config = if cfg.backward {
        ProducerConfig { backward: true, overwrite: true, ..ProducerConfig::default() }
    } else {
        ProducerConfig::default()
    };
    let mut producers = Vec::new();
    let mut readers = Vec::new();
    for (b, ring) in rings.iter_mut().enumerate() {
        let hooks = SimHooks::<L> { state: &state, buffer: b, cpu: std::cell::Cell::new(0) };
        let (p, c) = perfring::split_with_hooks(ring, config, hooks).expect("ring layout");
        producers.push(p);
        readers.push(if cfg.backward {
            Reader::Backward(BackwardReader::new(*c.memory(), false).expect("layout"))
        } else {
            Reader::Forward(c)
        });
    }
    let mut tracers: Vec<Tracer<&M>> = Vec::new();
    if cfg.aux != AuxMode::Off {
        for p in &producers {
            let ring: &M = p.memory();
            // SAFETY: one tracer per buffer, the only writer of its AUX area.
            let producer = unsafe { AuxProducer::new(ring, cfg.aux == AuxMode::Snapshot, 0) }.expect("AUX area");
            tracers.push(Tracer::new(producer, AuxConsumer::new(ring).expect("AUX area")));
        }
    }
    let mut scratch = vec![0u8; 65536];
    let mut woken_at: Option<u32> = None;
    for step in 0..cfg.steps {
        if step % 10_000 == 0 {
            progress(step);
        }
        state.borrow_mut().time = u64::from(step) * 1000;
        schedule(&state);
        let tick = cfg.tick_every != 0 && step % cfg.tick_every == 0;
        if tick {
            start_tick(&state, &producers);
        }
        for cpu in 0..cfg.cpus {
            task_work(&state, &producers, cpu, tick);
        }
        for (b, tracer) in tracers.iter_mut().enumerate() {
            tracer::trace_step(&state, tracer, &producers[b], b, step);
        }
        let snapshot_due =
            cfg.aux == AuxMode::Snapshot && step % cfg.snapshot_every.max(1) == cfg.snapshot_every.max(1) - 1;
        // Like `perf record`: when the timer is due or any buffer woke us, read every buffer,
        // then mark the end of the round (perf sorts by time within rounds).
        // A wakeup reaches the reader `wake_latency` steps later (scheduling delay).
        let due = cfg.read_every != 0 && step % cfg.read_every == cfg.read_every - 1;
        let woken = {
            let mut st = state.borrow_mut();
            if woken_at.is_none() && st.woken.iter().any(|&w| w) {
                woken_at = Some(step);
            }
            let now = woken_at.is_some_and(|at| step >= at + cfg.wake_latency);
            if now {
                st.woken.iter_mut().for_each(|w| *w = false);
                woken_at = None;
            }
            now
        };
        if due || woken || snapshot_due {
            for (b, reader) in readers.iter_mut().enumerate() {
                read(&state, reader, b, cfg.read_budget, &mut scratch);
            }
            for (b, tracer) in tracers.iter_mut().enumerate() {
                if cfg.aux == AuxMode::Full || snapshot_due {
                    tracer::read_aux(&state, tracer, &producers[b], b, step);
                }
            }
            state.borrow_mut().report.out.push(Out::Round);
        }
    }
    // Drain everything, then check the laws.
    for (b, tracer) in tracers.iter_mut().enumerate() {
        tracer::end_stretch(&state, tracer, &producers[b], b, false);
        tracer::read_aux(&state, tracer, &producers[b], b, cfg.steps);
        tracer::check_counts(&state, tracer, b);
    }
    for (b, reader) in readers.iter_mut().enumerate() {
        read(&state, reader, b, 0, &mut scratch);
    }
    for b in 0..tracers.len() {
        let left = state.borrow().aux_expected[b].len();
        if left != 0 && !cfg.backward {
            state.borrow_mut().violation(format!("buffer {b}: {left} PERF_RECORD_AUX records never read"));
        }
    }
    let pending: Vec<u64> = producers.iter().map(|p| p.lost_pending() as u64).collect();
    drop(tracers);
    drop(producers);
    drop(readers);
    let mut st = state.into_inner();
    st.report.out.push(Out::Round);
    for (b, p) in pending.into_iter().enumerate() {
        st.stats[b].lost_pending = p;
    }
    for s in st.stats.clone() {
        if s.attempted != s.written + s.dropped {
            st.violation(format!(
                "{}: attempted {} != written {} + dropped {}",
                s.label, s.attempted, s.written, s.dropped
            ));
        }
        if !cfg.backward {
            if s.written != s.consumed {
                st.violation(format!("{}: written {} != consumed {}", s.label, s.written, s.consumed));
            }
            if s.dropped != s.lost_reported + s.lost_pending {
                st.violation(format!(
                    "{}: dropped {} != LOST {} + pending {}",
                    s.label, s.dropped, s.lost_reported, s.lost_pending
                ));
            }
        }
    }
    st.report.buffers = st.stats.clone();
    st.report
}

/// Runnable threads take free CPUs; running ones sometimes yield or sleep (and later migrate).
fn schedule(state: &RefCell<State>) {
    let mut guard = state.borrow_mut();
    let st = &mut *guard;
    for cpu in 0..st.cpus.len() {
        match st.cpus[cpu].running {
            Some(t) if st.rng.chance(20) => {
                st.threads[t].on_cpu = None;
                st.cpus[cpu].running = None;
            }
            Some(_) => {}
            None => {
                let idle: Vec<usize> = (0..st.threads.len()).filter(|&t| st.threads[t].on_cpu.is_none()).collect();
                if !idle.is_empty() && st.rng.chance(300) {
                    let t = idle[st.rng.below(idle.len() as u64) as usize];
                    st.threads[t].on_cpu = Some(cpu as u32);
                    st.cpus[cpu].running = Some(t);
                }
            }
        }
    }
}

fn buffer_of(state: &RefCell<State>, cpu: u32) -> Option<usize> {
    let st = state.borrow();
    let t = st.cpus[cpu as usize].running?;
    st.cfg.mode.buffer_for(st.cfg.cpus, st.threads[t].pid, st.threads[t].tid, cpu)
}

/// A timer tick: UNTHROTTLE what was throttled, adjust the frequency-mode period.
fn start_tick<M: RingMemory, const L: bool>(state: &RefCell<State>, producers: &[Producer<&M, SimHooks<'_, L>>]) {
    let unthrottle: Vec<(EventKind, u32)> = {
        let mut st = state.borrow_mut();
        if let Some(freq) = st.cfg.freq {
            // Aim the page-fault period at `freq` samples per simulated second.
            let per_tick = st.cfg.faults_per_step * u64::from(st.cfg.tick_every.max(1));
            let ticks_per_sec = 1_000_000 / u64::from(st.cfg.tick_every.max(1));
            st.period = (per_tick * ticks_per_sec / freq.max(1)).max(1);
        }
        let mut v: Vec<_> = st.throttle.iter().filter(|(_, t)| t.throttled).map(|(k, _)| *k).collect();
        v.sort_by_key(|(e, c)| (e.id(), *c));
        for t in st.throttle.values_mut() {
            *t = Throttle::default();
        }
        v
    };
    for (event, cpu) in unthrottle {
        let Some(b) = buffer_of(state, cpu) else { continue };
        let rec = {
            let st = state.borrow();
            let Some(t) = st.cpus[cpu as usize].running else { continue };
            let th = &st.threads[t];
            Rec::Other(throttle(true, event, th.pid, th.tid, st.time, cpu), event, th.pid, th.tid, st.time)
        };
        write(state, &producers[b], b, cpu, 2, rec, false);
    }
}

/// One step of one CPU: the running thread's page faults and tracepoint hits (task context),
/// the timer interrupt (hardirq, then softirq), and sometimes an NMI.
fn task_work<M: RingMemory, const L: bool>(
    state: &RefCell<State>,
    producers: &[Producer<&M, SimHooks<'_, L>>],
    cpu: u32,
    tick: bool,
) {
    let Some(b) = buffer_of(state, cpu) else { return };
    let p = &producers[b];
    let (faults, tracepoint, nmi, softirq) = {
        let mut guard = state.borrow_mut();
        let st = &mut *guard;
        let t = st.cpus[cpu as usize].running.expect("buffer_of saw a running thread");
        st.threads[t].faults += st.cfg.faults_per_step;
        let n = st.threads[t].faults / st.period;
        st.threads[t].faults %= st.period;
        let (tp, nm) = (st.cfg.tracepoint_permille, st.cfg.nmi_permille);
        (n, st.rng.chance(tp), st.rng.chance(nm), st.rng.chance(300))
    };
    for _ in 0..faults.min(4) {
        fire(state, p, b, cpu, 0, EventKind::PageFaults, false);
    }
    if tracepoint {
        fire(state, p, b, cpu, 0, EventKind::Tracepoint, false);
    }
    if tick {
        fire(state, p, b, cpu, 2, EventKind::CpuClock, false);
        if softirq {
            fire(state, p, b, cpu, 1, EventKind::Tracepoint, false);
        }
    }
    if nmi {
        fire(state, p, b, cpu, 3, EventKind::Nmi, false);
    }
}

/// The consumer of buffer `b` reads (up to `budget` records; 0 for all) and checks each.
fn read<M: RingMemory>(state: &RefCell<State>, reader: &mut Reader<M>, b: usize, budget: u32, scratch: &mut [u8]) {
    match reader {
        Reader::Forward(c) => {
            let mut batch = match c.batch() {
                Ok(batch) => batch,
                Err(e) => {
                    state.borrow_mut().violation(format!("buffer {b}: consumer refused data_head: {e}"));
                    return;
                }
            };
            let mut n = 0;
            while let Some(r) = batch.next(scratch) {
                match r {
                    Ok(r) => check(state, b, r.bytes, false),
                    Err(e) => {
                        state.borrow_mut().violation(format!("buffer {b}: corrupt ring: {e}"));
                        return;
                    }
                }
                n += 1;
                if budget != 0 && n >= budget {
                    break;
                }
            }
        }
        Reader::Backward(r) => {
            // PAUSE_OUTPUT: the flag the buffer's producer reads lives in the memory value it
            // shares with this reader (what `Producer::pause_output` sets).
            r.memory().paused().store(true, perfring::fences::LOCAL);
            state.borrow_mut().stats[b].backward_reads += 1;
            let mut records = Vec::new();
            let res = r.read(scratch, |rec| records.push(rec.bytes.to_vec()));
            r.memory().paused().store(false, perfring::fences::LOCAL);
            match res {
                Ok(_) | Err(ReadError::WriterActive) | Err(ReadError::Overrun { .. }) => {}
                Err(e) => state.borrow_mut().violation(format!("buffer {b}: backward read: {e}")),
            }
            // Newest first in the ring; oldest first into perf.data.
            for rec in records.iter().rev() {
                check(state, b, rec, true);
            }
        }
    }
}

/// The oracle's check of one record read from buffer `b`.
fn check(state: &RefCell<State>, b: usize, bytes: &[u8], backward: bool) {
    let mut guard = state.borrow_mut();
    let st = &mut *guard;
    let Some(h) = Header::parse(bytes, Endian::NATIVE) else {
        st.violation(format!("buffer {b}: a record shorter than a header"));
        return;
    };
    match h.type_ {
        types::SAMPLE => {
            let Some(s) = Sample::decode(bytes) else {
                st.violation(format!("buffer {b}: undecodable sample"));
                return;
            };
            let Some(p) = st.produced.get(&s.seq).cloned() else {
                st.violation(format!("buffer {b}: sample {} was never produced", s.seq));
                return;
            };
            if p.bytes != bytes {
                st.violation(format!("buffer {b}: sample {} torn or corrupt", s.seq));
            }
            if p.buffer != b || st.cfg.mode.buffer_for(st.cfg.cpus, s.pid, s.tid, s.cpu) != Some(b) {
                st.violation(format!(
                    "buffer {b}: sample {} of tid {} cpu {} is in the wrong buffer",
                    s.seq, s.tid, s.cpu
                ));
            }
            let key = (b, s.cpu, p.level);
            if let Some(&last) = st.last_seq.get(&key) {
                // Forward: program order per context. Backward reads are checked oldest-first
                // after reversal, and each read only holds records newer than the previous one.
                if last >= s.seq {
                    st.violation(format!("buffer {b}: context {key:?} out of order: {last} then {}", s.seq));
                }
            }
            st.last_seq.insert(key, s.seq);
            *st.report.samples_by_cpu_tid.entry((s.cpu, s.tid)).or_default() += 1;
            st.stats[b].consumed += 1;
        }
        types::LOST => {
            st.stats[b].lost_reported += u64::from_ne_bytes(bytes[16..24].try_into().expect("LOST is 24+ bytes"));
        }
        types::AUX => {
            let u = |o: usize| u64::from_ne_bytes(bytes[o..o + 8].try_into().expect("AUX is 32+ bytes"));
            let got = Aux { misc: 0, aux_offset: u(8), aux_size: u(16), flags: u(24), sample_id: None };
            st.stats[b].aux_records += 1;
            st.stats[b].consumed += 1;
            if !backward {
                match st.aux_expected[b].pop_front() {
                    Some(want) if want == got => {}
                    want => st.violation(format!("buffer {b}: PERF_RECORD_AUX {got:?}, the tracer emitted {want:?}")),
                }
            }
        }
        types::THROTTLE | types::UNTHROTTLE => {
            st.stats[b].throttles += 1;
            st.stats[b].consumed += 1;
        }
        t => st.violation(format!("buffer {b}: unexpected record type {t}")),
    }
    st.report.out.push(Out::Record(bytes.to_vec()));
}
