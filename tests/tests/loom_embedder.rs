//! How an embedder models *their own* code with perfring inside, under loom.
//!
//! perfring's `loom` cfg is public: build with `RUSTFLAGS="--cfg loom"` and every atomic and
//! data cell inside perfring becomes loom's, so loom explores the interleavings of your code
//! and perfring's together. Use [`ModelRing`] as the ring memory (a `Mapping` over raw bytes
//! cannot be modelled), keep the model small (a 64-byte ring, two or three records), and run
//! it with `LOOM_MAX_PREEMPTIONS` set (the Makefile's `make loom` uses 3):
//!
//! ```text
//! RUSTFLAGS="--cfg loom" LOOM_MAX_PREEMPTIONS=3 cargo test --release --test my_model
//! ```
//!
//! Here the embedder's code is a `Telemetry` logger (a firmware task publishing readings) and a
//! `Collector` (the host side); the model checks that every reading the logger published
//! arrives intact, in order, and that nothing is lost silently: readings logged equal readings
//! collected plus the ring's reported and pending losses.
#![cfg(loom)]

use loom::thread;
use perfring::consumer::Trusted;
use perfring::producer::{EventIdentity, Producer, ProducerConfig};
use perfring::record::{types, Endian, Header};
use perfring::{consumer::Consumer, memory::ModelRing, split};

type Ring = ModelRing<8>; // 64 bytes of data: room for three 16-byte readings

/// The embedder's producer: one 16-byte record per reading.
struct Telemetry<'a> {
    producer: Producer<&'a Ring>,
}

impl Telemetry<'_> {
    /// Log `value`; `false` if the ring was full (the ring counts the loss).
    fn log(&self, value: u64) -> bool {
        let mut rec = [0u8; 16];
        rec[..8].copy_from_slice(&Header { type_: types::SAMPLE, misc: 0, size: 16 }.to_bytes(Endian::NATIVE));
        rec[8..].copy_from_slice(&value.to_ne_bytes());
        self.producer.output(&rec, &EventIdentity::ANONYMOUS).is_ok()
    }
}

/// The embedder's consumer: collects readings and the losses the ring reports.
struct Collector<'a> {
    consumer: Consumer<&'a Ring, Trusted>,
    values: Vec<u64>,
    lost: u64,
}

impl Collector<'_> {
    fn drain(&mut self) {
        let mut scratch = [0u8; 64];
        let (values, lost) = (&mut self.values, &mut self.lost);
        self.consumer
            .for_each(&mut scratch, |r| match r.header.type_ {
                types::SAMPLE => values.push(u64::from_ne_bytes(r.body().try_into().unwrap())),
                types::LOST => *lost += u64::from_ne_bytes(r.body()[8..16].try_into().unwrap()),
                other => panic!("unexpected record type {other}"),
            })
            .unwrap();
    }
}

#[test]
fn an_embedders_logger_and_collector_lose_nothing_silently() {
    loom::model(|| {
        let ring: &'static mut Ring = Box::leak(Box::new(Ring::new().unwrap()));
        let (producer, consumer) = split(ring, ProducerConfig::default()).unwrap();
        let telemetry = Telemetry { producer };
        let logger = thread::spawn(move || {
            let logged = (0..4u64).filter(|v| telemetry.log(100 + v)).count() as u64;
            (logged, telemetry)
        });
        let mut collector = Collector { consumer, values: Vec::new(), lost: 0 };
        collector.drain();
        let (logged, telemetry) = logger.join().unwrap();
        collector.drain();
        let pending = telemetry.producer.lost_pending() as u64;
        assert_eq!(logged + collector.lost + pending, 4, "every reading logged or counted as lost");
        assert_eq!(collector.values.len() as u64, logged, "every logged reading collected");
        assert!(collector.values.windows(2).all(|w| w[0] < w[1]), "in order: {:?}", collector.values);
        assert!(collector.values.iter().all(|v| (100..104).contains(v)), "intact: {:?}", collector.values);
    });
}
