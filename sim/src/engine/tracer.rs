//! The AUX-area hardware tracer of each buffer — a simulated Intel BTS, writing one 24-byte
//! record per taken branch of the traced thread ([`crate::bts`], [`crate::program`]) — and the
//! consumer that reads (or snapshots) its AUX area into AUXTRACE records, checking every record
//! against what the tracer wrote.
//!
//! The tracer's count of branches, and how each ends (the oracle's law, checked at the end of a
//! run): every branch the traced thread takes while traced is written or dropped (the AUX area
//! had no room: the kernel truncates and stops the event); every record written is read into
//! the file or, in snapshot mode, overwritten before a snapshot captured it.

use std::cell::RefCell;

use crate::records::AuxtraceRecord;
use perfring::aux::{AuxConsumer, AuxHandle, AuxProducer};
use perfring::memory::RingMemory;
use perfring::producer::{EventIdentity, Producer};
use perfring::record::Aux;

use super::state::{Out, SimHooks, State};
use crate::bts::{self, RECORD_SIZE};
use crate::config::{AuxMode, Mode};
use crate::program::Walk;

/// The tracer of one buffer, and its consumer.
pub(super) struct Tracer<M: RingMemory> {
    producer: AuxProducer<M>,
    consumer: AuxConsumer<M>,
    /// The open stretch: handle, the CPU and thread it traces, and the step it began.
    open: Option<(AuxHandle, u32, u32, u32)>,
    /// The AUX position of the first record (records sit at `base + 24 * index`).
    base: usize,
    /// Every record written, by index: what the oracle checks the consumer's bytes against.
    written: Vec<[u8; RECORD_SIZE]>,
    /// Index of the first record no read or snapshot has reached yet.
    unread: usize,
}

impl<M: RingMemory> Tracer<M> {
    /// The tracer `producer` (the AUX area's only writer) and a consumer of the same area.
    pub(super) fn new(producer: AuxProducer<M>, consumer: AuxConsumer<M>) -> Tracer<M> {
        let base = producer.head();
        Tracer { producer, consumer, open: None, base, written: Vec::new(), unread: 0 }
    }
}

/// One step of the tracer of buffer `b`: the thread the mode traces into this buffer (if one
/// runs) takes its next branches, and the tracer writes a record for each that fits.
pub(super) fn trace_step<M: RingMemory, const L: bool>(
    state: &RefCell<State>,
    tracer: &mut Tracer<M>,
    data: &Producer<M, SimHooks<'_, L>>,
    b: usize,
    step: u32,
) {
    // Which (cpu, tid) this buffer traces now, if any.
    let now = {
        let st = state.borrow();
        (0..st.cfg.cpus).find_map(|cpu| {
            let t = st.cpus[cpu as usize].running?;
            let th = &st.threads[t];
            (st.cfg.mode.buffer_for(st.cfg.cpus, th.pid, th.tid, cpu) == Some(b)).then_some((cpu, th.tid))
        })
    };
    let stretch = state.borrow().cfg.aux_stretch;
    // A context switch stops the hardware: the stretch ends (Documentation/userspace-api/perf_ring_buffer.rst, the discontinuity).
    if let Some((_, cpu, tid, began)) = &tracer.open {
        let switched = now != Some((*cpu, *tid));
        if switched || step - began >= stretch {
            end_stretch(state, tracer, data, b, switched);
        }
    }
    let Some((cpu, tid)) = now else { return };
    // The thread runs on, traced or not: its next taken branches.
    let branches = {
        let mut guard = state.borrow_mut();
        let State { cfg, walks, program, stats, .. } = &mut *guard;
        let walk = walks.entry(tid).or_insert_with(|| Walk::new(cfg.seed ^ u64::from(tid).wrapping_mul(0x9E37_79B9)));
        let branches: Vec<_> = (0..cfg.aux_branches_per_step).map(|_| walk.next(program)).collect();
        stats[b].branches += branches.len() as u64;
        branches
    };
    if tracer.open.is_none() {
        match tracer.producer.output_begin() {
            Ok(h) => tracer.open = Some((h, cpu, tid, step)),
            Err(_) => {
                // No space: the kernel disabled the event until the reader catches up.
                state.borrow_mut().stats[b].branches_dropped += branches.len() as u64;
                return;
            }
        }
    }
    let Some((h, ..)) = tracer.open.as_mut() else { return };
    for (i, branch) in branches.iter().enumerate() {
        if h.available() < RECORD_SIZE {
            // The area is full: the hardware stops, the stretch ends TRUNCATED.
            state.borrow_mut().stats[b].branches_dropped += (branches.len() - i) as u64;
            let _ = h.flag(perfring::record::aux_flags::TRUNCATED);
            end_stretch(state, tracer, data, b, false);
            return;
        }
        let index = tracer.written.len();
        debug_assert_eq!(h.position().wrapping_sub(tracer.base), index * RECORD_SIZE);
        let record = bts::record(branch, index as u64);
        tracer.producer.write(h, &record).expect("within the available space");
        tracer.written.push(record);
        let mut st = state.borrow_mut();
        st.stats[b].branches_written += 1;
        st.stats[b].aux_written += RECORD_SIZE as u64;
    }
}

/// `aux_output_end` for the open stretch, emitting PERF_RECORD_AUX into buffer `b` (as the
/// tracer's event) and waking the consumer when the AUX watermark is crossed.
pub(super) fn end_stretch<M: RingMemory, const L: bool>(
    state: &RefCell<State>,
    tracer: &mut Tracer<M>,
    data: &Producer<M, SimHooks<'_, L>>,
    b: usize,
    switched: bool,
) {
    let Some((h, cpu, tid, _)) = tracer.open.take() else { return };
    let written = h.position().wrapping_sub(tracer.producer.head());
    let (pid, time) = {
        let st = state.borrow();
        let pid = st.threads.iter().find(|t| t.tid == tid).map_or(tid, |t| t.pid);
        (pid, st.time)
    };
    let writer = EventIdentity { id: bts::EVENT_ID, sample_id: Some(bts::trailer(pid, tid, time, cpu)) };
    data.hooks().cpu.set(cpu);
    state.borrow_mut().stats[b].attempted += 1;
    match tracer.producer.output_end(h, written, data, &writer) {
        Ok((record, wakeup)) => {
            let mut st = state.borrow_mut();
            if let Some(rec) = record {
                // The oracle compares the body; the trailer is the writer's, checked by perf.
                st.aux_expected[b].push_back(Aux { sample_id: None, ..rec });
                st.stats[b].written += 1;
                if switched {
                    st.stats[b].aux_discontinuities += 1;
                }
            } else {
                st.stats[b].attempted -= 1;
            }
            if wakeup {
                st.woken[b] = true;
            }
        }
        Err(_) => state.borrow_mut().stats[b].dropped += 1,
    }
}

/// The consumer of buffer `b`'s AUX area: read (or snapshot) it, check every record, and write
/// an AUXTRACE record with the records to the output.
pub(super) fn read_aux<M: RingMemory, const L: bool>(
    state: &RefCell<State>,
    tracer: &mut Tracer<M>,
    data: &Producer<M, SimHooks<'_, L>>,
    b: usize,
    step: u32,
) {
    let snapshot = state.borrow().cfg.aux == AuxMode::Snapshot;
    let mut buf = vec![0u8; state.borrow().cfg.aux_size];
    let (start, len) = if snapshot {
        // USR2: stop the tracer (end its stretch), snapshot, and let it restart next step.
        end_stretch(state, tracer, data, b, false);
        let s = tracer.consumer.snapshot(&mut buf);
        (s.start, s.len)
    } else {
        tracer.consumer.read(&mut buf)
    };
    // Whole records only: a snapshot's oldest record may be partly overwritten (the area is
    // not a multiple of 24 bytes; the kernel's BTS driver rounds its buffer down instead).
    let skip = (RECORD_SIZE - start.wrapping_sub(tracer.base) % RECORD_SIZE) % RECORD_SIZE;
    let len = len.saturating_sub(skip);
    let len = len - len % RECORD_SIZE;
    if len == 0 {
        return;
    }
    let start = start.wrapping_add(skip);
    let records = &buf[skip..skip + len];
    let first = start.wrapping_sub(tracer.base) / RECORD_SIZE;
    let count = len / RECORD_SIZE;
    let mut guard = state.borrow_mut();
    let st = &mut *guard;
    if first < tracer.unread || (!snapshot && first != tracer.unread) {
        st.violation(format!("buffer {b}: AUX read at record {first}, the next unread is {}", tracer.unread));
    }
    for (k, r) in records.chunks_exact(RECORD_SIZE).enumerate() {
        let index = first + k;
        if tracer.written.get(index).map(|w| &w[..]) != Some(r) {
            st.violation(format!(
                "buffer {b}: BTS record {index} (AUX position {:#x}) torn or corrupt",
                start + k * 24
            ));
            break;
        }
        let (from, _) = bts::from_to(r).expect("a whole record");
        let name = st.program.function_at(from).map_or("?", |f| f.name);
        *st.report.branches_by_function.entry(name).or_default() += 1;
    }
    let s = &mut st.stats[b];
    s.branches_overwritten += first.saturating_sub(tracer.unread) as u64;
    s.branches_read += count as u64;
    s.aux_read += len as u64;
    tracer.unread = first + count;
    let mut bytes = records.to_vec();
    bytes.resize(len + bts::DECODER_PAD, 0);
    let (cpu, tid) = match &st.cfg.mode {
        Mode::PerThread { tid } => (u32::MAX, *tid),
        _ => (b as u32, u32::MAX),
    };
    let rec = AuxtraceRecord {
        size: bytes.len() as u64,
        offset: start as u64,
        // The consumer reads at the end of the step.
        reference: bts::tsc(u64::from(step) * 1000 + 999),
        idx: b as u32,
        tid,
        cpu,
    };
    st.report.out.push(Out::Auxtrace(rec, bytes));
}

/// The oracle's law for buffer `b`'s tracer at the end of a run (after the last read).
pub(super) fn check_counts<M: RingMemory>(state: &RefCell<State>, tracer: &Tracer<M>, b: usize) {
    let mut guard = state.borrow_mut();
    let st = &mut *guard;
    let s = st.stats[b].clone();
    if s.branches != s.branches_written + s.branches_dropped {
        st.violation(format!(
            "{}: branches {} != written {} + dropped {}",
            s.label, s.branches, s.branches_written, s.branches_dropped
        ));
    }
    if s.branches_written != s.branches_read + s.branches_overwritten || tracer.unread != tracer.written.len() {
        st.violation(format!(
            "{}: BTS records written {} != read {} + overwritten {} (next unread {})",
            s.label, s.branches_written, s.branches_read, s.branches_overwritten, tracer.unread
        ));
    }
    if st.cfg.aux == AuxMode::Full && s.branches_overwritten != 0 {
        st.violation(format!("{}: {} records overwritten in full mode", s.label, s.branches_overwritten));
    }
}
