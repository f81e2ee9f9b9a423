//! Loom: one simulated kernel CPU (task-context samples, with an NMI sample nested inside the
//! first one's reservation, as the simulator's interrupts do) and one consumer thread, through
//! the real core and the simulator's record format. Every record read must be byte-identical
//! to one the CPU produced, in reservation order, and the loss law must hold.
//!
//! Bounds: a 128-byte ring, 3 task samples of 56 bytes + 1 nested NMI sample (the ring wraps),
//! two consumer passes; `LOOM_MAX_PREEMPTIONS` from the environment (the Makefile uses 3).
#![cfg(loom)]

use std::cell::Cell;

use loom::thread;
use perfring::producer::{EventIdentity, Hooks, PreemptPoint, Producer, ProducerConfig};
use perfring::record::{types, Endian, Header};
use perfring::{memory::ModelRing, memory::RingMemory, split_with_hooks};
use perfring_sim::records::{EventKind, Sample};

fn sample(seq: u64, event: EventKind) -> Vec<u8> {
    Sample { event, seq, pid: 1000, tid: 1000, time: seq * 10, cpu: 0, period: 1 }.encode()
}

/// The simulated CPU's interrupt: one NMI sample inside the first task writer's reservation.
struct Nmi(Cell<bool>);
impl<M: RingMemory> Hooks<M> for Nmi {
    fn preempt(&self, at: PreemptPoint, p: &Producer<M, Self>) {
        if at == PreemptPoint::AfterReserve && self.0.replace(false) {
            let _ = p.output(&sample(100, EventKind::Nmi), &EventIdentity::ANONYMOUS);
        }
    }
}
// SAFETY-free: Cell makes it !Sync, and the producer (with its hooks) lives on the CPU thread.

#[test]
fn simulated_cpu_with_nmi_nesting_and_a_consumer_thread() {
    loom::model(|| {
        let ring: &'static mut ModelRing<16> = Box::leak(Box::new(ModelRing::new().unwrap()));
        let (producer, mut consumer) = split_with_hooks(ring, ProducerConfig::default(), Nmi(Cell::new(true))).unwrap();
        let cpu = thread::spawn(move || {
            let mut written = 0u64;
            for seq in 0..3 {
                if producer.output(&sample(seq, EventKind::PageFaults), &EventIdentity::ANONYMOUS).is_ok() {
                    written += 1;
                }
            }
            (written, producer.lost_pending() as u64)
        });
        let mut seqs = Vec::new();
        let mut lost = 0u64;
        let mut scratch = vec![0u8; 65536];
        let mut drain = |consumer: &mut perfring::consumer::Consumer<_, _>| {
            consumer
                .for_each(&mut scratch, |r| {
                    let h = Header::parse(r.bytes, Endian::NATIVE).unwrap();
                    if h.type_ == types::LOST {
                        lost += u64::from_ne_bytes(r.bytes[16..24].try_into().unwrap());
                        return;
                    }
                    let s = Sample::decode(r.bytes).expect("a sample");
                    assert_eq!(r.bytes, &sample(s.seq, s.event)[..], "sample {} torn or corrupt", s.seq);
                    seqs.push(s.seq);
                })
                .expect("a protocol-following ring reported corruption")
        };
        drain(&mut consumer);
        thread::yield_now();
        drain(&mut consumer);
        let (written, pending) = cpu.join().unwrap();
        drain(&mut consumer);
        // The NMI reserved after the first task sample: it follows it in the ring.
        if let Some(i) = seqs.iter().position(|&s| s == 100) {
            assert!(i > 0 && seqs[i - 1] == 0, "the nested NMI sample follows the record it interrupted: {seqs:?}");
        }
        let task: Vec<u64> = seqs.iter().copied().filter(|&s| s != 100).collect();
        assert!(task.windows(2).all(|w| w[0] < w[1]), "program order: {seqs:?}");
        let nmi = u64::from(seqs.contains(&100));
        assert_eq!(written + nmi, seqs.len() as u64, "every record written was consumed");
        assert_eq!(3 + 1, written + nmi + lost + pending, "every record written or counted (law)");
    });
}
