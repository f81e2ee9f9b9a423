//! Loom model of the AUX head/tail protocol (non-overwrite): a driver thread writes three
//! 24-byte stretches into a 64-byte AUX area (the third wraps and reuses bytes the consumer
//! freed) while the consumer reads and frees concurrently. Every byte must arrive intact.
//!
//! Bounds: 64-byte AUX area, 3 stretches, 2 concurrent reads + a final one;
//! `LOOM_MAX_PREEMPTIONS` from the environment (the Makefile uses 3). The named fences (A)–(D)
//! serve the AUX area too, so this model is part of `make loom-mutants`.
#![cfg(loom)]

use loom::thread;
use perfring::aux::{AuxConsumer, AuxProducer};
use perfring::producer::{EventIdentity, OutputError, ProducerConfig};
use perfring::{memory::ModelRing, split};

fn stretch(n: u8) -> [u8; 24] {
    std::array::from_fn(|i| n.wrapping_mul(24).wrapping_add(i as u8).wrapping_add(1))
}

#[test]
fn aux_head_tail_protocol_delivers_every_byte_intact() {
    loom::model(|| {
        let ring: &'static mut ModelRing<16, 8> = Box::leak(Box::new(ModelRing::new().unwrap()));
        let (data, _records) = split(ring, ProducerConfig::default()).unwrap();
        let mem = *data.memory();
        let driver = thread::spawn(move || {
            // SAFETY: the only AUX producer of this ring.
            let mut aux = unsafe { AuxProducer::new(mem, false, 0) }.unwrap();
            let mut sent = Vec::new();
            for n in 0..3u8 {
                match aux.output_begin() {
                    Ok(mut h) if h.available() >= 24 => {
                        aux.write(&mut h, &stretch(n)).unwrap();
                        aux.output_end(h, 24, &data, &EventIdentity::ANONYMOUS).unwrap();
                        sent.push(n);
                    }
                    Ok(h) => {
                        // Not enough room: end the stretch empty (the hardware wrote nothing).
                        aux.output_end(h, 0, &data, &EventIdentity::ANONYMOUS).unwrap();
                    }
                    Err(OutputError::AuxNoSpace) => {}
                    Err(e) => panic!("a protocol-following ring reported corruption: {e}"),
                }
            }
            sent
        });
        let mut reader = AuxConsumer::new(mem).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 64];
        for _ in 0..2 {
            let (_, n) = reader.read(&mut buf);
            got.extend_from_slice(&buf[..n]);
            thread::yield_now();
        }
        let sent = driver.join().unwrap();
        let (_, n) = reader.read(&mut buf);
        got.extend_from_slice(&buf[..n]);
        let expect: Vec<u8> = sent.iter().flat_map(|&n| stretch(n)).collect();
        assert_eq!(got.len(), expect.len(), "every AUX byte sent was read (law)");
        assert!(got == expect, "AUX bytes torn or corrupt: {got:?}");
    });
}
