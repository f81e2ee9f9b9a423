//! `make bench-lines`: a machine-independent model of the cross-core cost of a ring — cache-line
//! transfers per record between the producer's core and the consumer's — for perfring (the
//! consumer's tail policies and pacing) and rtrb, under the same interleavings.
//!
//! Timed cross-core figures move with the machine's state (on a shared VM the cross-core copy
//! ceiling itself varies 3×); the number of times a cache line changes hands per record does
//! not. Each agent's loop is written as the memory accesses the code makes, line by line:
//!
//! * perfring producer, per record (`Producer::output`): its own words (head, nest, cached
//!   space end: private to its core); when the cached space is short, a load of `data_tail`;
//!   the record's bytes; a store of `data_head`. `data_head` and `data_tail` share one line
//!   (the ABI's offsets 1024 and 1032 of the control page).
//! * perfring consumer, per batch (`Consumer::batch` + `next` + drop): a load of `data_head`;
//!   each record's bytes; a store of `data_tail` by the tail policy (every batch, or deferred
//!   until N bytes are unreleased or the ring is found empty).
//! * rtrb producer, per record (`write_chunk` + commit): when its cached copy of the
//!   consumer's index says full, a load of it; the bytes; a store of its own index (its own
//!   line). Consumer (`read_chunk` + commit): when its cached copy of the producer's index says
//!   empty, a load of it; the bytes; a store of its own index (its own line).
//!
//! A line is held by a set of cores, or modified by one (MESI without the distinction between
//! E and M): a read of a line the other core modified, and a write to a line the other core
//! holds, each count one transfer. Interleavings: `pace` — one producer record, then one
//! consumer step, repeated (the consumer keeps pace: the case of the issue); `consumer 2x` — two
//! consumer steps per record (a fast consumer, polling an often-empty ring); `burst 8` — eight
//! records, then one consumer step. A consumer step that finds nothing loads `data_head` (rtrb:
//! the producer's index) and returns. The consumer's pacing (`Pace`: a batch that finds less
//! than 256 bytes spins, then loads the head once more) is modelled as 8 consumer steps
//! without a memory access: 128 spin-loop hints last longer than the producer takes to write
//! 8 records (about 100 cycles each), so the model undercounts what pacing saves.

use std::collections::HashMap;

const LINE: usize = 64;
const RING: usize = 64 * 1024;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Who {
    P,
    C,
}

#[derive(Clone, Copy, Debug)]
enum State {
    /// Held (readable) by these cores: bit 0 producer, bit 1 consumer.
    Shared(u8),
    /// Modified by one core.
    Modified(Who),
}

fn bit(w: Who) -> u8 {
    match w {
        Who::P => 1,
        Who::C => 2,
    }
}

/// The caches of the two cores, and the transfers counted.
#[derive(Default)]
struct Lines {
    state: HashMap<usize, State>,
    transfers: u64,
}

impl Lines {
    fn read(&mut self, who: Who, line: usize) {
        let s = self.state.get(&line).copied().unwrap_or(State::Shared(0));
        let next = match s {
            State::Modified(w) if w == who => s,
            State::Modified(_) => {
                self.transfers += 1;
                State::Shared(3)
            }
            State::Shared(m) => State::Shared(m | bit(who)),
        };
        self.state.insert(line, next);
    }
    fn write(&mut self, who: Who, line: usize) {
        let s = self.state.get(&line).copied().unwrap_or(State::Shared(0));
        match s {
            State::Modified(w) if w == who => {}
            State::Modified(_) => self.transfers += 1,
            State::Shared(m) if m & !bit(who) != 0 => self.transfers += 1,
            State::Shared(_) => {}
        }
        self.state.insert(line, State::Modified(who));
    }
    fn read_bytes(&mut self, who: Who, at: usize, len: usize) {
        (at / LINE..(at + len).div_ceil(LINE)).for_each(|l| self.read(who, l));
    }
    fn write_bytes(&mut self, who: Who, at: usize, len: usize) {
        (at / LINE..(at + len).div_ceil(LINE)).for_each(|l| self.write(who, l));
    }
}

/// One ring under a model: the producer writes one record per `produce`; the consumer takes one
/// step per `consume`.
trait Ring {
    fn produce(&mut self, lines: &mut Lines) -> bool;
    fn consume(&mut self, lines: &mut Lines) -> usize;
}

/// Addresses: the data area at 0, the control lines after it.
const CONTROL: usize = RING; // perfring: data_head and data_tail (one line)
const P_INDEX: usize = RING + 2 * LINE; // rtrb: the producer's index (own line)
const C_INDEX: usize = RING + 4 * LINE; // rtrb: the consumer's index (own line)

/// perfring's protocol, as the code does it.
struct Perfring {
    record: usize,
    head: usize,
    space_end: usize,
    data_tail: usize,
    // consumer
    tail: usize,
    released: usize,
    defer: usize,
    /// The consumer's `Pace`: a head load that finds fewer bytes than this waits `spin`
    /// consumer steps (spin-loop hints: no memory access) and loads the head once more.
    min_batch: usize,
    spin: usize,
    /// Steps left in the current wait, and whether the wait's reload is due.
    asleep: usize,
    reload: bool,
}

impl Ring for Perfring {
    fn produce(&mut self, l: &mut Lines) -> bool {
        if self.head + self.record > self.space_end {
            l.read_bytes(Who::P, CONTROL, 8); // load data_tail (A)
            self.space_end = self.data_tail + RING;
            if self.head + self.record > self.space_end {
                return false;
            }
        }
        l.write_bytes(Who::P, self.head % RING, self.record);
        self.head += self.record;
        l.write_bytes(Who::P, CONTROL, 8); // store data_head (B)
        true
    }
    fn consume(&mut self, l: &mut Lines) -> usize {
        if self.asleep > 0 {
            self.asleep -= 1;
            return 0;
        }
        l.read_bytes(Who::C, CONTROL, 8); // load data_head (C)
        let head = self.head;
        if !self.reload && head - self.tail < self.min_batch {
            // Pace: spin, then load the head once more (the next step).
            self.asleep = self.spin;
            self.reload = true;
            return 0;
        }
        self.reload = false;
        if head == self.tail {
            if self.released != self.tail {
                l.write_bytes(Who::C, CONTROL, 8); // release before waiting
                self.released = self.tail;
                self.data_tail = self.tail;
            }
            return 0;
        }
        let mut n = 0;
        while self.tail < head {
            l.read_bytes(Who::C, self.tail % RING, self.record);
            self.tail += self.record;
            n += 1;
        }
        if self.tail - self.released >= self.defer {
            l.write_bytes(Who::C, CONTROL, 8); // store data_tail (D)
            self.released = self.tail;
            self.data_tail = self.tail;
        }
        n
    }
}

/// rtrb's protocol (`write_chunk`/`read_chunk` of one record), as its code does it.
struct Rtrb {
    record: usize,
    // producer
    p_index: usize,
    p_cached_c: usize,
    // consumer
    c_index: usize,
    c_cached_p: usize,
}

impl Ring for Rtrb {
    fn produce(&mut self, l: &mut Lines) -> bool {
        if self.p_index + self.record - self.p_cached_c > RING {
            l.read_bytes(Who::P, C_INDEX, 8);
            self.p_cached_c = self.c_index;
            if self.p_index + self.record - self.p_cached_c > RING {
                return false;
            }
        }
        l.write_bytes(Who::P, self.p_index % RING, self.record);
        self.p_index += self.record;
        l.write_bytes(Who::P, P_INDEX, 8);
        true
    }
    fn consume(&mut self, l: &mut Lines) -> usize {
        let mut n = 0;
        loop {
            if self.c_cached_p < self.c_index + self.record {
                l.read_bytes(Who::C, P_INDEX, 8);
                self.c_cached_p = self.p_index;
                if self.c_cached_p < self.c_index + self.record {
                    return n;
                }
            }
            l.read_bytes(Who::C, self.c_index % RING, self.record);
            self.c_index += self.record;
            l.write_bytes(Who::C, C_INDEX, 8);
            n += 1;
        }
    }
}

/// Transfers per record moving `records` records under `schedule` (producer records per round,
/// consumer steps per round).
fn run(ring: &mut dyn Ring, (produce, consume): (usize, usize), records: usize) -> f64 {
    let mut l = Lines::default();
    let (mut made, mut got) = (0, 0);
    while got < records {
        for _ in 0..produce {
            if made < records && ring.produce(&mut l) {
                made += 1;
            }
        }
        for _ in 0..consume {
            got += ring.consume(&mut l);
        }
    }
    l.transfers as f64 / records as f64
}

fn perfring(record: usize, defer: usize, min_batch: usize, spin: usize) -> Perfring {
    Perfring {
        record,
        head: 0,
        space_end: RING,
        data_tail: 0,
        tail: 0,
        released: 0,
        defer,
        min_batch,
        spin,
        asleep: 0,
        reload: false,
    }
}

fn main() {
    let records = 200_000;
    let schedules = [("pace", (1, 1)), ("consumer 2x", (1, 2)), ("burst 8", (8, 1))];
    println!("cache-line transfers per record (model; {records} records of a 32-byte payload, 64 KiB ring)");
    print!("{:<44}", "ring");
    schedules.iter().for_each(|(name, _)| print!("{name:>14}"));
    println!();
    type Make = Box<dyn Fn() -> Box<dyn Ring>>;
    let rows: Vec<(&str, Make)> = vec![
        ("perfring, tail every batch, unpaced (before)", Box::new(|| Box::new(perfring(40, 0, 0, 0)))),
        ("perfring, tail deferred 16 KiB, unpaced", Box::new(|| Box::new(perfring(40, RING / 4, 0, 0)))),
        ("perfring, tail every batch, paced", Box::new(|| Box::new(perfring(40, 0, 256, 8)))),
        ("perfring, tail deferred 16 KiB + paced", Box::new(|| Box::new(perfring(40, RING / 4, 256, 8)))),
        ("perfring, default (deferred 4 KiB + paced)", Box::new(|| Box::new(perfring(40, 4096, 256, 8)))),
        (
            "rtrb (chunks of one record)",
            Box::new(|| Box::new(Rtrb { record: 32, p_index: 0, p_cached_c: 0, c_index: 0, c_cached_p: 0 })),
        ),
    ];
    for (name, make) in &rows {
        print!("{name:<44}");
        for (_, s) in &schedules {
            print!("{:>14.2}", run(make().as_mut(), *s, records));
        }
        println!();
    }
}
