//! The next record's position predicted from the last record's length, for the in-place
//! readers: the BPF ring buffer's `for_each` (its own loop: `read_in_place`) and the perf
//! ring's batch (`next`, `next_split`: one record a call, through [`Stride`]).
//!
//! A reader's position moves by each record's length, read from the record's header: each
//! header's load waits for the one before, and at small records that chain is the reader's
//! time. A program's records are mostly of one length (one struct, one sample layout). Where
//! the last [`PREDICT_AFTER`] records were, the next position is taken as the last one plus that
//! length: a register add that does not wait for the header, while a branch compares the
//! header's length with the prediction and, predicted by the CPU, lets the next header's load
//! start before this one ends. The position is the same either way; only the wait goes. The
//! first record of another length ends the prediction, until a run comes again, so that lengths
//! that vary cost no mispredicted branch a record.
//!
//! `make bench-loops` (ns a record, one thread, BENCHMARKS.md "session 8"): at 8-byte payloads
//! 43–50 % less time, at 256-byte payloads 41–58 % less; at payloads of four sizes drawn at
//! random 6–9 % more (the run's count kept a record). `make bench-instructions` counts 4–5
//! instructions more a record: the counts cannot see the chain.

/// Records of one length in a row after which the next position is predicted.
pub(crate) const PREDICT_AFTER: usize = 8;

/// `x`, passed through an empty `asm!` block that the compiler must keep and cannot see into
/// (no instruction): it cannot know the result equal to anything, nor move or merge the code
/// around it. Without it the compiler, knowing the prediction equal to the header's length
/// where it holds, uses the length (or merges the two arms into a select), and the next load
/// waits for the header again. Where `asm!` is not stable (or under Miri), `black_box`, which
/// does the same through a store and a load.
#[inline(always)]
pub(crate) fn opaque(x: usize) -> usize {
    #[cfg(all(not(miri), any(target_arch = "x86_64", target_arch = "aarch64")))]
    {
        let mut x = x;
        // SAFETY: an empty template (a comment naming the register): no instruction runs, no
        // memory or flag is touched.
        unsafe { core::arch::asm!("/* {0} */", inout(reg) x, options(nomem, nostack, preserves_flags)) };
        x
    }
    #[cfg(not(all(not(miri), any(target_arch = "x86_64", target_arch = "aarch64"))))]
    core::hint::black_box(x)
}

/// The prediction's state for a reader that advances one record per call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Stride {
    /// The last record's length.
    len: usize,
    /// How many records before it were as long.
    same: usize,
    /// Positions predicted (tests only: the prediction changes no position, only speed).
    #[cfg(test)]
    predicted: usize,
}

impl Stride {
    /// No record read yet.
    pub(crate) const fn new() -> Self {
        Stride {
            len: 0,
            same: 0,
            #[cfg(test)]
            predicted: 0,
        }
    }

    /// The position after a record of `len` bytes at `position`: `position + len`, taken from
    /// the last length where [`PREDICT_AFTER`] records before were as long.
    #[inline(always)]
    pub(crate) fn next(&mut self, position: usize, len: usize) -> usize {
        if self.same >= PREDICT_AFTER {
            if len == opaque(self.len) {
                #[cfg(test)]
                {
                    self.predicted += 1;
                }
                return position.wrapping_add(self.len);
            }
            return self.miss(position, len);
        }
        self.same = if len == self.len { self.same + 1 } else { 0 };
        self.len = len;
        position.wrapping_add(len)
    }

    /// A record of another length after a run: the prediction ends. The same update as
    /// `next`'s unpredicted path, kept apart and cold on purpose: falling through to that path
    /// instead took `Consumer::for_each` at 8-byte payloads from 1.27–1.29 to 1.44 ns a record
    /// (`make bench-loops`, three alternated runs, BENCHMARKS.md "session 9").
    #[cold]
    fn miss(&mut self, position: usize, len: usize) -> usize {
        self.same = 0;
        self.len = len;
        position.wrapping_add(len)
    }

    /// Positions predicted so far.
    #[cfg(test)]
    pub(crate) fn predicted(&self) -> usize {
        self.predicted
    }
}

#[cfg(test)]
mod tests {
    extern crate std;
    use std::vec::Vec;

    use super::{Stride, PREDICT_AFTER};

    /// Every position is the last plus the record's length, predicted or not; the prediction
    /// starts after `PREDICT_AFTER` records of one length in a row and ends at the first other.
    #[test]
    fn positions_are_the_sums_of_the_lengths_and_predicted_only_over_runs() {
        let lengths: Vec<usize> = [&[16; 20][..], &[24], &[16; 5], &[8; 12], &[40, 16, 40, 16]].concat();
        let (mut stride, mut pos, mut predicted) = (Stride::new(), 1usize << 40, Vec::new());
        for &len in &lengths {
            let before = stride.predicted();
            let next = stride.next(pos, len);
            assert_eq!(next, pos + len);
            predicted.push(stride.predicted() - before);
            pos = next;
        }
        // The 9th of a run (the 8th in a row after the first) starts the prediction, from
        // the 10th on.
        let run = |n: usize| (0..n).map(move |i| usize::from(i > PREDICT_AFTER)).collect::<Vec<_>>();
        let want: Vec<usize> = [run(20), std::vec![0], run(5), run(12), std::vec![0; 4]].concat();
        assert_eq!(predicted, want);
        // Near the end of the counter, positions wrap as the ring's do.
        let mut stride = Stride::new();
        for _ in 0..12 {
            assert_eq!(stride.next(usize::MAX - 7, 16), 8);
        }
        assert_eq!(stride.predicted(), 12 - (PREDICT_AFTER + 1));
    }
}
