//! Loom model of the self-monitoring seqlock: a writer updating the fields (keeping invariants
//! between them) against a reader; the reader never returns a torn snapshot. Part of
//! `make loom-mutants` for (S1)–(S4).
//!
//! Bounds: one update (26 word stores) against one read with one retry, preemption bound 1
//! (set here: each read and write touches every field of the page, so bound 2 takes over 5 minutes here and bound 3 explores for
//! many minutes without finding more).
#![cfg(loom)]

use loom::thread;
use perfring::memory::ModelRing;
use perfring::selfmon::{read, write, NoCounters, UserPage};

#[test]
fn reader_never_returns_a_torn_snapshot() {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(1);
    model.check(|| {
        let ring: &'static ModelRing<8> = Box::leak(Box::new(ModelRing::new().unwrap()));
        let writer = thread::spawn(move || {
            write(ring, &UserPage { time_enabled: 10, time_running: 11, ..UserPage::default() });
        });
        if let Ok(r) = read(ring, &mut NoCounters, 1) {
            let s = r.snapshot;
            assert!(
                (s.time_enabled == 0 && s.time_running == 0) || s.time_running == s.time_enabled + 1,
                "torn snapshot: {s:?}"
            );
        }
        writer.join().unwrap();
    });
}
