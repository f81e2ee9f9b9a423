//! Loom over the BPF ring buffer simulator's workload and oracle: two simulated CPUs producing
//! into one ring on two threads (CPU 0's task context reserves a record, an interrupt nests
//! another inside it and commits it first; CPU 1 reserves one and discards it) while the
//! consumer reads on the main thread; the simulator's [`Oracle`] then checks what was read
//! against what the CPUs did: every committed record read once, in reservation order, intact;
//! the discarded one never; the out-of-order commit of the nested record seen as such.
//!
//! The consumer's thread is started by CPU 0 once it has committed its nested record, so that
//! its reads meet the commit of the record that record interrupted (loom's DPOR alone would not
//! try that schedule: see `loom_bpf_ringbuf.rs`).
//!
//! Bounds: a 64-byte ring, three 16-byte records (all fit at once), two reads during the run,
//! `LOOM_MAX_PREEMPTIONS` from the environment (the Makefile uses 3).
#![cfg(loom)]

use loom::thread;
use perfring::bpf_ringbuf::{split_ringbuf, ModelRingbuf, Notify, RingbufConsumer, RingbufProducer};
use perfring_sim::ringbuf::{sample, Oracle};

type Ring = ModelRingbuf<8>;

/// What a CPU did, in its order: (position, sample, size) reserved, then (position, discarded)
/// committed.
#[derive(Default)]
struct CpuLog {
    reserved: Vec<(usize, u64, usize)>,
    committed: Vec<(usize, bool)>,
}

/// Write the whole sample of reservation `seq` and commit or discard it.
fn finish(r: perfring::bpf_ringbuf::Reservation<'_, &Ring>, seq: u64, discard: bool, log: &mut CpuLog) {
    let mut r = r;
    r.write(0, &sample(seq, r.len())).unwrap();
    let pos = r.position();
    if discard {
        r.discard(Notify::Adaptive);
    } else {
        r.submit(Notify::Adaptive);
    }
    log.committed.push((pos, discard));
}

/// Read one batch into `read` as (position, bytes).
fn drain(c: &mut RingbufConsumer<&Ring>, read: &mut Vec<(usize, Vec<u8>)>) {
    let mut scratch = [0u8; 64];
    c.for_each(&mut scratch, |r| {
        let mut bytes = vec![0; r.payload.len()];
        r.payload.copy_to(&mut bytes);
        read.push((r.position, bytes));
    })
    .expect("a protocol-following ring reported corruption");
}

#[test]
fn simulated_cpus_with_a_nested_record_and_a_discard_pass_the_simulators_oracle() {
    loom::model(|| {
        let ring: &'static mut Ring = Box::leak(Box::new(Ring::new().unwrap()));
        let (producer, mut consumer) = split_ringbuf(ring).unwrap();
        let producer: &'static RingbufProducer<&'static Ring> = Box::leak(Box::new(producer));
        let cpu0 = thread::spawn(move || {
            let mut log = CpuLog::default();
            let task = producer.reserve(8).unwrap();
            log.reserved.push((task.position(), 0, 8));
            // A hardirq on this CPU: its record is reserved after the task's, committed first.
            let irq = producer.reserve(8).unwrap();
            log.reserved.push((irq.position(), 1, 8));
            finish(irq, 1, false, &mut log);
            let reader = thread::spawn(move || {
                let mut read = Vec::new();
                drain(&mut consumer, &mut read);
                drain(&mut consumer, &mut read);
                (consumer, read)
            });
            finish(task, 0, false, &mut log);
            (log, reader)
        });
        let cpu1 = thread::spawn(move || {
            let mut log = CpuLog::default();
            let r = producer.reserve(8).unwrap();
            log.reserved.push((r.position(), 2, 8));
            finish(r, 2, true, &mut log);
            log
        });
        let (log0, reader) = cpu0.join().unwrap();
        let logs = [log0, cpu1.join().unwrap()];
        let (mut consumer, mut read) = reader.join().unwrap();
        drain(&mut consumer, &mut read);
        let mut oracle = Oracle::new();
        for log in &logs {
            for &(pos, seq, size) in &log.reserved {
                oracle.reserved(pos, seq, size);
            }
        }
        let mut out_of_order = 0;
        for log in &logs {
            for &(pos, discard) in &log.committed {
                out_of_order += usize::from(oracle.committed(pos, discard));
            }
        }
        for (pos, bytes) in &read {
            oracle.read(*pos, bytes);
        }
        let violations = oracle.finish(producer.failed_reservations() as u64);
        assert!(violations.is_empty(), "every record committed is read once, in order, intact: {violations:?}");
        assert_eq!(read.len(), 2, "every record committed is read once, the discarded one never");
        assert!(out_of_order >= 1, "the nested record was committed before the one it interrupted");
    });
}
