//! The oracle of a BPF ring buffer session: what producers reserved, committed, discarded and
//! failed to reserve, against what the consumer read.
//!
//! The laws: every committed record is read exactly once, in reservation order (by position),
//! intact; a discarded record is never read, and neither is one still being written; the
//! consumer skips only discarded records; every failed reservation is counted, and the
//! producer's count agrees.

use std::collections::{BTreeMap, BTreeSet};

/// The sample bytes of reservation `seq` of `size` bytes: its sequence number's bytes first,
/// then bytes derived from it, so that a torn, stale or misplaced sample never passes.
pub fn sample(seq: u64, size: usize) -> Vec<u8> {
    let tag = seq.to_le_bytes();
    (0..size).map(|i| if i < 8 { tag[i] } else { (seq as u8).wrapping_mul(131).wrapping_add(i as u8) ^ 0x5a }).collect()
}

/// A reservation's state.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reserved, not yet committed: its header says BUSY.
    Reserved,
    /// Submitted.
    Committed,
    /// Discarded.
    Discarded,
}

#[derive(Debug, Clone)]
struct Entry {
    seq: u64,
    size: usize,
    state: State,
    read: bool,
}

/// The bookkeeping and the checks. Positions are the producer's free-running ones, unique per
/// reservation.
#[derive(Debug, Default, Clone)]
pub struct Oracle {
    /// Reservations not yet read nor passed by the consumer (older ones are dropped).
    records: BTreeMap<usize, Entry>,
    /// Positions of the reservations still open.
    open: BTreeSet<usize>,
    /// Committed records not yet read.
    unread: usize,
    /// Position of the last record read.
    last_read: Option<usize>,
    failures: u64,
    violations: Vec<String>,
}

impl Oracle {
    /// An empty oracle.
    pub fn new() -> Self {
        Self::default()
    }

    fn violation(&mut self, v: String) {
        if self.violations.len() < 20 {
            self.violations.push(v);
        }
    }

    /// A reservation at `pos` of sample `seq`, `size` bytes.
    pub fn reserved(&mut self, pos: usize, seq: u64, size: usize) {
        if self.last_read.is_some_and(|last| pos <= last) {
            self.violation(format!("position {pos:#x} reserved behind what the consumer read"));
        }
        if let Some(e) = self.records.insert(pos, Entry { seq, size, state: State::Reserved, read: false }) {
            self.violation(format!("position {pos:#x} reserved twice (sample {} and {seq})", e.seq));
        }
        self.open.insert(pos);
    }

    /// The reservation at `pos` was committed (`discard`: discarded). Returns whether an older
    /// reservation is still open: a commit out of reservation order.
    pub fn committed(&mut self, pos: usize, discard: bool) -> bool {
        match self.records.get_mut(&pos) {
            Some(e) if e.state == State::Reserved => {
                e.state = if discard { State::Discarded } else { State::Committed };
                self.unread += usize::from(!discard);
            }
            _ => self.violation(format!("commit of {pos:#x}, which is not an open reservation")),
        }
        self.open.remove(&pos);
        self.open.range(..pos).next().is_some()
    }

    /// A reservation failed.
    pub fn failed(&mut self) {
        self.failures += 1;
    }

    /// Reservations that failed.
    pub fn failures(&self) -> u64 {
        self.failures
    }

    /// The consumer read the record at `pos` with these sample bytes.
    pub fn read(&mut self, pos: usize, bytes: &[u8]) {
        if let Some(last) = self.last_read.filter(|&last| last > pos) {
            return self.violation(format!("read {pos:#x} after {last:#x}: not reservation order"));
        }
        let Some(e) = self.records.get(&pos).cloned() else {
            return self.violation(format!("read a record at {pos:#x} that nobody reserved"));
        };
        match e.state {
            State::Discarded => return self.violation(format!("read the discarded record at {pos:#x}")),
            State::Reserved => return self.violation(format!("read the record at {pos:#x} while BUSY")),
            State::Committed if e.read => return self.violation(format!("read the record at {pos:#x} twice")),
            State::Committed => {}
        }
        if bytes != sample(e.seq, e.size) {
            self.violation(format!("the record at {pos:#x} (sample {}, {} bytes) is torn or corrupt", e.seq, e.size));
        }
        // `last_read < pos` here (an equal one was read, a greater one refused above).
        let from = self.last_read.map_or(std::ops::Bound::Unbounded, std::ops::Bound::Excluded);
        if let Some((skipped, _)) =
            self.records.range((from, std::ops::Bound::Excluded(pos))).find(|(_, e)| e.state != State::Discarded)
        {
            let skipped = *skipped;
            self.violation(format!("read {pos:#x} past {skipped:#x}, which was not discarded"));
        }
        self.last_read = Some(pos);
        self.unread -= 1;
        // What the consumer has passed is settled: keep the record read (to catch a second
        // read) and drop the ones before it, but any still open (a violation, reported above).
        let mut before = std::mem::take(&mut self.records);
        let after = before.split_off(&pos);
        before.retain(|_, e| e.state == State::Reserved);
        self.records = after;
        self.records.append(&mut before);
        if let Some(e) = self.records.get_mut(&pos) {
            e.read = true;
        }
    }

    /// Committed records not yet read.
    pub fn unread(&self) -> usize {
        self.unread
    }

    /// The end of the session (every reservation closed, the consumer's last read done): the
    /// final checks, given the producer's own count of failed reservations. Returns every
    /// violation found.
    pub fn finish(mut self, producer_failed: u64) -> Vec<String> {
        let open = self.open.len();
        if open > 0 {
            self.violation(format!("{open} reservations still open at the end"));
        }
        let unread = self.unread();
        if unread > 0 {
            self.violation(format!("{unread} committed records were never read"));
        }
        if producer_failed != self.failures {
            self.violation(format!(
                "the producer counted {producer_failed} failed reservations, the CPUs {}",
                self.failures
            ));
        }
        self.violations
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An oracle with records at 0 (sample 0, 8 bytes), 16 (sample 1, 8 bytes), 32 (sample 2).
    fn three() -> Oracle {
        let mut o = Oracle::new();
        for (i, pos) in [0, 16, 32].into_iter().enumerate() {
            o.reserved(pos, i as u64, 8);
        }
        o
    }

    #[test]
    fn an_honest_session_passes() {
        let mut o = three();
        assert!(o.committed(16, false), "16 committed while 0 is open: out of order");
        assert!(!o.committed(0, true));
        assert!(!o.committed(32, false));
        o.read(16, &sample(1, 8));
        o.read(32, &sample(2, 8));
        o.failed();
        assert_eq!(o.finish(1), Vec::<String>::new());
    }

    /// A scenario acting on the oracle of [`three`], and the violation it must produce.
    type Case = (&'static str, fn(&mut Oracle));

    #[test]
    fn each_law_broken_is_a_violation() {
        let cases: [Case; 7] = [
            ("discarded", |o| o.read(0, &sample(0, 8))),
            ("while BUSY", |o| o.read(16, &sample(1, 8))),
            ("twice", |o| {
                o.read(32, &sample(2, 8));
                o.read(32, &sample(2, 8))
            }),
            ("torn or corrupt", |o| o.read(32, &sample(3, 8))),
            ("nobody reserved", |o| o.read(8, &[])),
            ("not reservation order", |o| {
                o.read(32, &sample(2, 8));
                o.committed(16, false);
                o.read(16, &sample(1, 8))
            }),
            ("never read", |_| ()),
        ];
        for (want, act) in cases {
            let mut o = three();
            o.committed(0, true);
            o.committed(32, false);
            act(&mut o);
            o.committed(16, true);
            let v = o.finish(0);
            assert!(v.iter().any(|v| v.contains(want)), "{want}: {v:?}");
        }
        let mut o = three();
        o.committed(0, false);
        o.committed(16, false);
        o.committed(32, false);
        o.read(16, &sample(1, 8));
        let v = o.finish(3);
        assert!(v.iter().any(|v| v.contains("not discarded")), "{v:?}");
        assert!(v.iter().any(|v| v.contains("counted 3 failed")), "{v:?}");
    }
}
