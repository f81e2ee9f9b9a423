//! The simulated kernel: CPUs whose contexts (task → softirq → hardirq → NMI) reserve, write
//! and commit or discard records in one BPF ring buffer through perfring's producer, a
//! consumer that polls and sleeps until woken, and the [`Oracle`]'s checks.
//!
//! Deterministic for a seed. The concurrency is the kernel's: in each step every CPU takes one
//! action in an order drawn for that step, so CPUs reserve, write and commit interleaved, and
//! records are committed out of reservation order; on one CPU an interrupt nests a record inside
//! the one its context is writing and finishes it first (LIFO), and an NMI may fire inside a
//! reservation's lock, where the kernel's `spin_trylock` fails it. Cross-CPU memory ordering is
//! loom's business (`tests/tests/loom_bpf_ringbuf.rs`, `loom_sim_ringbuf.rs`).

use std::cell::{Cell, RefCell};

use perfring::bpf_ringbuf::{
    Config as ReadConfig, Notify, Reservation, RingbufConsumer, RingbufError, RingbufHooks, RingbufMemory,
    RingbufProducer, SpinLock,
};

use super::{sample, Config, HeapRing, Oracle};
use crate::rng::Rng;

/// What one CPU did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuStats {
    /// Records reserved.
    pub reserved: u64,
    /// Records submitted.
    pub committed: u64,
    /// Records discarded.
    pub discarded: u64,
    /// Records reserved by an interrupt nested in a context writing one.
    pub nested: u64,
    /// Deepest nesting of open records (1: a task's alone).
    pub max_depth: u32,
    /// Commits while an older reservation was still open (out of reservation order).
    pub out_of_order: u64,
    /// Reservations that found the ring full (or the sample too large for it).
    pub failed_full: u64,
    /// Reservations of an NMI that found the lock held by the context it interrupted.
    pub failed_nmi: u64,
}

/// What a session did, and what the oracle found.
#[derive(Debug, Clone, Default)]
pub struct Report {
    /// Per CPU.
    pub cpus: Vec<CpuStats>,
    /// Records the consumer read.
    pub read: u64,
    /// Discarded records the consumer skipped.
    pub skipped: u64,
    /// Batches the consumer read.
    pub batches: u64,
    /// Commits that woke the consumer (the kernel's `irq_work_queue`).
    pub wakeups: u64,
    /// Times the consumer went to sleep (`prepare_to_sleep` said so).
    pub sleeps: u64,
    /// Records whose sample wrapped the end of the ring.
    pub wrapped: u64,
    /// The producer's count of failed reservations.
    pub failed: u64,
    /// Whether the session checked that no wakeup was lost (it does unless a commit passed
    /// `BPF_RB_NO_WAKEUP`).
    pub wakeups_checked: bool,
    /// Oracle violations (empty if every check held).
    pub violations: Vec<String>,
}

impl Report {
    /// Sum of a field over CPUs.
    pub fn total(&self, f: impl Fn(&CpuStats) -> u64) -> u64 {
        self.cpus.iter().map(f).sum()
    }
}

/// The producer's hooks: an NMI inside the lock, and the wakeups.
struct SimHooks {
    rng: RefCell<Rng>,
    nmi_permille: u32,
    /// NMI reservations refused inside the lock, not yet accounted.
    nmi_failed: Cell<u64>,
    /// An NMI reservation inside the lock succeeded: the lock did not exclude it.
    nmi_got_in: Cell<bool>,
    wakeups: Cell<u64>,
    woken: Cell<bool>,
}

impl<'r> RingbufHooks<&'r HeapRing, SpinLock> for SimHooks {
    fn in_lock(&self, producer: &RingbufProducer<&'r HeapRing, SpinLock, Self>) {
        if self.rng.borrow_mut().chance(self.nmi_permille) {
            match producer.try_reserve(8) {
                Err(RingbufError::Contended) => self.nmi_failed.set(self.nmi_failed.get() + 1),
                _ => self.nmi_got_in.set(true),
            }
        }
    }

    fn wakeup(&self, _: &RingbufProducer<&'r HeapRing, SpinLock, Self>) {
        self.wakeups.set(self.wakeups.get() + 1);
        self.woken.set(true);
    }
}

/// A record a context is writing.
struct Open<'p, 'r> {
    level: u8,
    seq: u64,
    size: usize,
    written: usize,
    res: Reservation<'p, &'r HeapRing, SpinLock, SimHooks>,
}

/// Run a session over `ring` (of `cfg.ring_size` bytes).
pub fn run(cfg: &Config, ring: &mut HeapRing) -> Report {
    let ring: &HeapRing = ring;
    let mut report = Report { cpus: vec![CpuStats::default(); cfg.cpus.max(1) as usize], ..Report::default() };
    let rng = Rng::new(cfg.seed);
    let hooks = SimHooks {
        rng: RefCell::new(Rng::new(cfg.seed ^ 0x4e4d_4900)),
        nmi_permille: cfg.nmi_in_lock_permille,
        nmi_failed: Cell::new(0),
        nmi_got_in: Cell::new(false),
        wakeups: Cell::new(0),
        woken: Cell::new(false),
    };
    // SAFETY: the only producer of `ring` (the CPUs share it); its only consumer is below.
    let producer = match unsafe { RingbufProducer::with_hooks(ring, SpinLock::new(), hooks) } {
        Ok(p) => p,
        Err(e) => {
            report.violations.push(format!("no producer: {e}"));
            return report;
        }
    };
    let consumer = if cfg.untrusted {
        RingbufConsumer::untrusted(ring)
    } else {
        // SAFETY: its producer (above) follows the protocol.
        unsafe { RingbufConsumer::trusted(ring) }
    };
    let mut consumer = match consumer {
        Ok(c) => c,
        Err(e) => {
            report.violations.push(format!("no consumer: {e}"));
            return report;
        }
    };
    consumer.configure(ReadConfig { publish: cfg.publish, ..ReadConfig::default() });

    let mut sim = Session {
        cfg,
        rng,
        producer: &producer,
        oracle: Oracle::new(),
        stacks: (0..report.cpus.len()).map(|_| Vec::new()).collect(),
        next_seq: 0,
        never_used: false,
        report,
    };
    let mut reader = Reader { scratch: vec![0; cfg.max_sample + 8], awake: true, wake_at: None };
    let cpus = sim.stacks.len() as u64;
    for step in 0..cfg.steps {
        let first = sim.rng.below(cpus);
        for k in 0..cpus {
            sim.cpu_step(((first + k) % cpus) as usize);
        }
        let poll = cfg.read_every > 0 && step % cfg.read_every == 0;
        if producer.hooks().woken.take() {
            let due = step.saturating_add(cfg.wake_latency);
            reader.wake_at = Some(reader.wake_at.map_or(due, |at| at.min(due)));
        }
        let woken = reader.wake_at.is_some_and(|at| step >= at);
        if woken {
            reader.wake_at = None;
            reader.awake = true;
        }
        if reader.awake || poll {
            reader.read(&mut consumer, &mut sim);
        }
    }
    // Every context finishes its records, innermost first.
    for cpu in 0..sim.stacks.len() {
        while !sim.stacks[cpu].is_empty() {
            sim.finish_top(cpu);
        }
    }
    // The consumer runs on wakeups alone: it must end with everything committed read, unless a
    // commit asked for no wakeup.
    let bound = 4 * cfg.ring_size / 8 + 16;
    for _ in 0..bound {
        // A wakeup still on its way when the steps ran out arrives now.
        if producer.hooks().woken.take() | reader.wake_at.take().is_some() {
            reader.awake = true;
        }
        if !reader.awake {
            break;
        }
        reader.read(&mut consumer, &mut sim);
    }
    sim.report.wakeups_checked = !sim.never_used;
    let unread = sim.oracle.unread();
    if !sim.never_used && unread > 0 {
        sim.report.violations.push(format!(
            "lost wakeup: the consumer sleeps with {unread} committed records unread, and every commit used the \
             adaptive or forced notification"
        ));
    }
    // Whatever is left (a session with BPF_RB_NO_WAKEUP commits): read it now.
    for _ in 0..bound {
        reader.awake = true;
        reader.read(&mut consumer, &mut sim);
        if sim.oracle.unread() == 0 {
            break;
        }
    }
    if producer.hooks().nmi_got_in.get() {
        sim.report.violations.push("an NMI reserved inside the lock its CPU held".into());
    }
    let failed = producer.failed_reservations() as u64;
    let Session { oracle, mut report, .. } = sim;
    report.skipped = consumer.discarded();
    report.wakeups = producer.hooks().wakeups.get();
    report.failed = failed;
    report.violations.extend(oracle.finish(failed));
    report.violations.truncate(20);
    report
}

/// The producing side of a session.
struct Session<'s, 'p, 'r> {
    cfg: &'s Config,
    rng: Rng,
    producer: &'p RingbufProducer<&'r HeapRing, SpinLock, SimHooks>,
    oracle: Oracle,
    /// Per CPU, its contexts' open records, innermost last.
    stacks: Vec<Vec<Open<'p, 'r>>>,
    next_seq: u64,
    /// Whether a commit passed `BPF_RB_NO_WAKEUP`.
    never_used: bool,
    report: Report,
}

impl<'p, 'r> Session<'_, 'p, 'r> {
    /// CPU `cpu`'s action in this step.
    fn cpu_step(&mut self, cpu: usize) {
        let Some(top) = self.stacks[cpu].last() else {
            if self.rng.chance(self.cfg.reserve_permille) {
                self.reserve(cpu, 0);
            }
            return;
        };
        if top.level < 3 && self.rng.chance(self.cfg.irq_permille) {
            // An interrupt of a higher level than the context it interrupts.
            let level = top.level + 1 + self.rng.below(u64::from(3 - top.level)) as u8;
            self.reserve(cpu, level);
            return;
        }
        let top = self.stacks[cpu].last_mut().expect("checked above");
        if top.written < top.size {
            let n = 1 + self.rng.below((top.size - top.written) as u64) as usize;
            let bytes = sample(top.seq, top.size);
            if let Err(e) = top.res.write(top.written, &bytes[top.written..top.written + n]) {
                self.report.violations.push(format!("a write inside a reservation failed: {e}"));
            }
            top.written += n;
            return;
        }
        self.commit_top(cpu);
    }

    /// Reserve a record in a context of `level` (0 task, 3 NMI) on `cpu`.
    fn reserve(&mut self, cpu: usize, level: u8) {
        let size = self.rng.below(self.cfg.max_sample as u64 + 1) as usize;
        let result = if level == 3 { self.producer.try_reserve(size) } else { self.producer.reserve(size) };
        let nmi = self.producer.hooks().nmi_failed.take();
        for _ in 0..nmi {
            self.oracle.failed();
        }
        let stats = &mut self.report.cpus[cpu];
        stats.failed_nmi += nmi;
        match result {
            Ok(res) => {
                let seq = self.next_seq;
                self.next_seq += 1;
                let pos = res.position();
                self.oracle.reserved(pos, seq, size);
                let ring = self.producer.memory().size();
                if size > 0 && (pos + 8) % ring + size > ring {
                    self.report.wrapped += 1;
                }
                stats.reserved += 1;
                if level > 0 {
                    stats.nested += 1;
                }
                self.stacks[cpu].push(Open { level, seq, size, written: 0, res });
                stats.max_depth = stats.max_depth.max(self.stacks[cpu].len() as u32);
            }
            Err(RingbufError::NoSpace { .. } | RingbufError::SampleTooLarge { .. }) => {
                self.oracle.failed();
                stats.failed_full += 1;
            }
            Err(e) => {
                self.oracle.failed();
                self.report.violations.push(format!("an unexpected reservation failure: {e}"));
            }
        }
    }

    /// Commit or discard CPU `cpu`'s innermost record (written in full).
    fn commit_top(&mut self, cpu: usize) {
        let Some(open) = self.stacks[cpu].pop() else { return };
        let discard = self.rng.chance(self.cfg.discard_permille);
        let notify = if self.rng.chance(self.cfg.never_permille) {
            self.never_used = true;
            Notify::Never
        } else if self.rng.chance(self.cfg.force_permille) {
            Notify::Always
        } else {
            Notify::Adaptive
        };
        let pos = open.res.position();
        if discard {
            open.res.discard(notify);
        } else {
            open.res.submit(notify);
        }
        let out_of_order = self.oracle.committed(pos, discard);
        let stats = &mut self.report.cpus[cpu];
        if discard {
            stats.discarded += 1;
        } else {
            stats.committed += 1;
        }
        if out_of_order {
            stats.out_of_order += 1;
        }
    }

    /// Finish CPU `cpu`'s innermost record: write what is left, commit it.
    fn finish_top(&mut self, cpu: usize) {
        if let Some(top) = self.stacks[cpu].last_mut() {
            let bytes = sample(top.seq, top.size);
            if let Err(e) = top.res.write(top.written, &bytes[top.written..]) {
                self.report.violations.push(format!("a write inside a reservation failed: {e}"));
            }
            top.written = top.size;
        }
        self.commit_top(cpu);
    }
}

/// The consumer's side: awake (reading every step) or asleep until a wakeup or a poll.
struct Reader {
    scratch: Vec<u8>,
    awake: bool,
    /// The step at which a wakeup that came arrives.
    wake_at: Option<u32>,
}

impl Reader {
    /// Read one batch (up to the budget); then, unless the budget stopped it, prepare to sleep
    /// and sleep if nothing is readable.
    fn read(&mut self, consumer: &mut RingbufConsumer<&HeapRing>, sim: &mut Session<'_, '_, '_>) {
        let budget = if sim.cfg.read_budget == 0 { usize::MAX } else { sim.cfg.read_budget as usize };
        let mut n = 0;
        let mut failed = None;
        match consumer.batch() {
            Ok(mut batch) => {
                while n < budget {
                    match batch.next(&mut self.scratch) {
                        None => break,
                        Some(Ok(r)) => {
                            let mut bytes = vec![0; r.payload.len()];
                            r.payload.copy_to(&mut bytes);
                            sim.oracle.read(r.position, &bytes);
                            n += 1;
                        }
                        Some(Err(e)) => {
                            failed = Some(e);
                            break;
                        }
                    }
                }
            }
            Err(e) => failed = Some(e),
        }
        sim.report.batches += 1;
        sim.report.read += n as u64;
        if let Some(e) = failed {
            sim.report.violations.push(format!("the consumer refused an honest ring: {e}"));
            consumer.skip_to_producer();
            return;
        }
        if n == budget {
            return; // more may be readable: stay awake
        }
        match consumer.prepare_to_sleep() {
            Ok(true) => {
                self.awake = false;
                sim.report.sleeps += 1;
            }
            Ok(false) => self.awake = true,
            Err(e) => sim.report.violations.push(format!("the consumer refused an honest ring: {e}")),
        }
    }
}
