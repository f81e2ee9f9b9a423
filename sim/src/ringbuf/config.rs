//! What a simulated BPF ring buffer session looks like: CPUs, workload, contexts, consumer.

use perfring::bpf_ringbuf::Publish;

/// A session of [`run`](super::run): CPUs producing into one BPF ring buffer, one consumer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Config {
    /// Simulated CPUs, each with a context stack (task → softirq → hardirq → NMI).
    pub cpus: u32,
    /// Simulated steps; in each, every CPU takes one action, in an order drawn per step.
    pub steps: u32,
    /// Seed of every random choice.
    pub seed: u64,
    /// Data area in bytes (a power of two, at least 16).
    pub ring_size: usize,
    /// Largest sample; sizes are drawn in `0..=max_sample` (0 is legal: a header alone).
    pub max_sample: usize,
    /// Chance, per step, that an idle CPU's task starts a record (‰).
    pub reserve_permille: u32,
    /// Chance, per step, that an interrupt nests a record on a CPU that is writing one (‰).
    pub irq_permille: u32,
    /// Chance that an NMI fires inside a reservation's lock, on the holder's CPU (‰): its
    /// reservation finds the lock taken and fails, as the kernel's NMI path does.
    pub nmi_in_lock_permille: u32,
    /// Chance a finished record is discarded instead of submitted (‰).
    pub discard_permille: u32,
    /// Chance a commit passes `BPF_RB_NO_WAKEUP` (‰). A session with any skips the lost-wakeup
    /// check: such commits may leave a sleeping consumer asleep by design.
    pub never_permille: u32,
    /// Chance a commit passes `BPF_RB_FORCE_WAKEUP` (‰).
    pub force_permille: u32,
    /// The consumer polls every this many steps; 0: it reads only when woken.
    pub read_every: u32,
    /// Records per read, 0 = all that are readable.
    pub read_budget: u32,
    /// Steps from a wakeup to the read it causes.
    pub wake_latency: u32,
    /// When the consumer publishes `consumer_pos`: per batch, after every record (libbpf), or
    /// per batch holding its last record until it prepares to sleep (perfring-linux's
    /// `RingBuffer::poll`).
    pub publish: Publish,
    /// The consumer copies every sample with atomic loads and trusts nothing.
    pub untrusted: bool,
}

impl Default for Config {
    /// Four CPUs, 100,000 steps, a 4 KiB ring, samples up to 200 bytes, a consumer that polls
    /// every 500 steps and reads when woken.
    fn default() -> Self {
        Config {
            cpus: 4,
            steps: 100_000,
            seed: 1,
            ring_size: 4096,
            max_sample: 200,
            reserve_permille: 300,
            irq_permille: 50,
            nmi_in_lock_permille: 20,
            discard_permille: 100,
            never_permille: 0,
            force_permille: 20,
            read_every: 500,
            read_budget: 0,
            wake_latency: 50,
            publish: Publish::PerBatch,
            untrusted: false,
        }
    }
}
