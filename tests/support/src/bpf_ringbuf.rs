//! The BPF ring buffers' programs for perfring-linux's `RingBuffer` and `UserRingBuffer` tests,
//! example and benchmarks, assembled by hand as [`bpf`](crate::bpf)'s: [`RingbufProgram`]
//! emits through `bpf_ringbuf_output` or `bpf_ringbuf_reserve` then `_submit` or `_discard`;
//! [`DrainProgram`] drains a user ring buffer with `bpf_user_ringbuf_drain` and a callback.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

use crate::bpf::{
    bpf, create_map, insn, ld_map, load_socket_filter, load_with_btf, map_lookup, owned, test_run, ADD64_IMM, CALL,
    EXIT, JEQ_IMM, JSGE_IMM, LDX_DW, LD_IMM64, MAX_CPUS, MOV64_IMM, MOV64_REG, R10, STX_DW, STX_W,
};

/// `BPF_MAP_TYPE_RINGBUF`.
pub const RINGBUF: u32 = 27;
/// `BPF_MAP_TYPE_USER_RINGBUF`.
pub const USER_RINGBUF: u32 = 31;

const JNE_IMM: u8 = 0x55;
const JA: u8 = 0x05;
const MOD64_IMM: u8 = 0x97;
/// `BPF_PSEUDO_FUNC`: `LD_IMM64`'s immediate is the offset of a subprogram (a callback).
const PSEUDO_FUNC: u8 = 4;

const MAP_LOOKUP_ELEM: i32 = 1;
const GET_SMP_PROCESSOR_ID: i32 = 8;
const RINGBUF_OUTPUT: i32 = 130;
const RINGBUF_RESERVE: i32 = 131;
const RINGBUF_SUBMIT: i32 = 132;
const RINGBUF_DISCARD: i32 = 133;
const DYNPTR_READ: i32 = 201;
const USER_RINGBUF_DRAIN: i32 = 209;

/// A ring buffer map (`BPF_MAP_CREATE` of [`RINGBUF`] or [`USER_RINGBUF`]) of `size` bytes.
pub fn create_ring(map_type: u32, size: u32) -> io::Result<OwnedFd> {
    create_map(map_type, 0, 0, size)
}

/// How a [`RingbufProgram`] emits its record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Emit {
    /// `bpf_ringbuf_output(ring, data, size, flags)` of a payload built on the stack.
    Output,
    /// `bpf_ringbuf_reserve(ring, size, 0)`, the payload written in place, then
    /// `bpf_ringbuf_submit(sample, flags)` — or `bpf_ringbuf_discard(sample, flags)` for the runs
    /// whose sequence number is `discard_every - 1` modulo `discard_every` (0: never).
    Reserve {
        /// One run in this many discards its sample (0: none).
        discard_every: u32,
    },
}

/// A program that emits one record of `payload` bytes per run into a ring buffer, and counts,
/// per CPU, its runs, its failed reservations (the helper returned an error, or NULL) and its
/// discards in an array map.
///
/// The payload ([`RingbufProgram::expected`]) is [`OutputProgram`](crate::bpf::OutputProgram)'s:
/// u64 words, the run's sequence number on its CPU (0, 1, …), then the CPU, then `seq + i`.
#[derive(Debug)]
pub struct RingbufProgram {
    prog: OwnedFd,
    counts: OwnedFd,
    payload: usize,
}

impl RingbufProgram {
    /// Load it over the ring buffer `ring`; `payload`: 8 to 496 bytes, a multiple of 8;
    /// `flags`: the wakeup flags of the output, submit or discard (0: the kernel's adaptive
    /// wakeup; 1 `BPF_RB_NO_WAKEUP`; 2 `BPF_RB_FORCE_WAKEUP`).
    pub fn load(ring: BorrowedFd<'_>, payload: usize, emit: Emit, flags: u32) -> io::Result<RingbufProgram> {
        if !(8..=496).contains(&payload) || payload % 8 != 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "payload: 8..=496 bytes, a multiple of 8"));
        }
        let counts = create_map(2, 4, 24, MAX_CPUS)?;
        let insns = program(ring, counts.as_fd(), payload, emit, flags as i32);
        let prog = load_socket_filter(&insns)?;
        Ok(RingbufProgram { prog, counts, payload })
    }

    /// Run it `repeat` times on the calling thread's CPU (`BPF_PROG_TEST_RUN`; pin the thread
    /// first: [`pin_to_cpu`](crate::bpf::pin_to_cpu)).
    pub fn run(&self, repeat: u32) -> io::Result<()> {
        test_run(self.prog.as_fd(), repeat).map(drop)
    }

    /// On `cpu`: (runs, failed reservations, discards), as the program counted them.
    pub fn counts(&self, cpu: u32) -> io::Result<(u64, u64, u64)> {
        let mut value = [0u8; 24];
        map_lookup(self.counts.as_fd(), cpu, &mut value)?;
        let word = |i: usize| u64::from_ne_bytes(value[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        Ok((word(0), word(1), word(2)))
    }

    /// Σ over every CPU of [`counts`](RingbufProgram::counts).
    pub fn total(&self) -> io::Result<(u64, u64, u64)> {
        let mut sum = (0, 0, 0);
        for cpu in 0..MAX_CPUS {
            let (r, f, d) = self.counts(cpu)?;
            sum = (sum.0 + r, sum.1 + f, sum.2 + d);
        }
        Ok(sum)
    }

    /// Payload bytes per record.
    pub fn payload(&self) -> usize {
        self.payload
    }

    /// The payload of run `seq` on `cpu`.
    pub fn expected(&self, seq: u64, cpu: u32) -> Vec<u8> {
        crate::bpf::expected(self.payload, seq, cpu)
    }
}

/// `counts[cpu].word += 1`, `r8` holding `&counts[cpu]` (clobbers `r1`).
fn count(word: i16) -> [u64; 3] {
    [insn(LDX_DW, 1, 8, 8 * word, 0), insn(ADD64_IMM, 1, 0, 0, 1), insn(STX_DW, 8, 1, 8 * word, 0)]
}

/// The offset of a jump at `from` to the instruction at `to`.
fn jump_to(from: usize, to: usize) -> i16 {
    (to as isize - from as isize - 1) as i16
}

fn program(ring: BorrowedFd<'_>, counts: BorrowedFd<'_>, payload: usize, emit: Emit, flags: i32) -> Vec<u64> {
    let mut p = vec![
        insn(CALL, 0, 0, 0, GET_SMP_PROCESSOR_ID),
        insn(STX_W, R10, 0, -4, 0),  // key = cpu
        insn(MOV64_REG, 7, 0, 0, 0), // r7 = cpu
        insn(MOV64_REG, 2, R10, 0, 0),
        insn(ADD64_IMM, 2, 0, 0, -4), // r2 = &key
    ];
    p.extend(ld_map(1, counts));
    p.push(insn(CALL, 0, 0, 0, MAP_LOOKUP_ELEM));
    let null_check = p.len();
    p.push(0); // patched: if r0 == 0 goto exit
    p.extend([
        insn(MOV64_REG, 8, 0, 0, 0), // r8 = &counts[cpu]
        insn(LDX_DW, 9, 8, 0, 0),    // r9 = seq
        insn(MOV64_REG, 1, 9, 0, 0),
        insn(ADD64_IMM, 1, 0, 0, 1),
        insn(STX_DW, 8, 1, 0, 0), // runs = seq + 1
    ]);
    // The payload's words into memory at `base + 8 i` from register `at`.
    let words = |p: &mut Vec<u64>, at: u8, base: i16| {
        p.push(insn(STX_DW, at, 9, base, 0)); // word 0: seq
        for i in 1..payload / 8 {
            let off = base + 8 * i as i16;
            if i == 1 {
                p.push(insn(STX_DW, at, 7, off, 0)); // word 1: cpu
            } else {
                p.push(insn(MOV64_REG, 3, 9, 0, 0));
                p.push(insn(ADD64_IMM, 3, 0, 0, i as i32));
                p.push(insn(STX_DW, at, 3, off, 0)); // word i: seq + i
            }
        }
    };
    let mut to_exit = Vec::new();
    match emit {
        Emit::Output => {
            let base = -(8 + payload as i16);
            words(&mut p, R10, base);
            p.extend(ld_map(1, ring));
            p.extend([
                insn(MOV64_REG, 2, R10, 0, 0),
                insn(ADD64_IMM, 2, 0, 0, i32::from(base)),
                insn(MOV64_IMM, 3, 0, 0, payload as i32),
                insn(MOV64_IMM, 4, 0, 0, flags),
                insn(CALL, 0, 0, 0, RINGBUF_OUTPUT),
                insn(JSGE_IMM, 0, 0, 3, 0),
            ]);
            p.extend(count(1)); // failed
        }
        Emit::Reserve { discard_every } => {
            p.extend(ld_map(1, ring));
            p.extend([
                insn(MOV64_IMM, 2, 0, 0, payload as i32),
                insn(MOV64_IMM, 3, 0, 0, 0),
                insn(CALL, 0, 0, 0, RINGBUF_RESERVE),
                insn(JNE_IMM, 0, 0, 4, 0),
            ]);
            p.extend(count(1)); // failed
            to_exit.push(p.len());
            p.push(0); // patched: goto exit
            p.push(insn(MOV64_REG, 6, 0, 0, 0)); // r6 = sample
            words(&mut p, 6, 0);
            if discard_every > 0 {
                p.extend([
                    insn(MOV64_REG, 3, 9, 0, 0),
                    insn(MOD64_IMM, 3, 0, 0, discard_every as i32),
                    insn(JNE_IMM, 3, 0, 7, discard_every as i32 - 1),
                    insn(MOV64_REG, 1, 6, 0, 0),
                    insn(MOV64_IMM, 2, 0, 0, flags),
                    insn(CALL, 0, 0, 0, RINGBUF_DISCARD),
                ]);
                p.extend(count(2)); // discarded
                to_exit.push(p.len());
                p.push(0); // patched: goto exit
            }
            p.extend([
                insn(MOV64_REG, 1, 6, 0, 0),
                insn(MOV64_IMM, 2, 0, 0, flags),
                insn(CALL, 0, 0, 0, RINGBUF_SUBMIT),
            ]);
        }
    }
    let exit = p.len();
    p[null_check] = insn(JEQ_IMM, 0, 0, jump_to(null_check, exit), 0);
    for at in to_exit {
        p[at] = insn(JA, 0, 0, jump_to(at, exit), 0);
    }
    p.extend([insn(MOV64_IMM, 0, 0, 0, 0), insn(EXIT, 0, 0, 0, 0)]);
    p
}

/// A program that drains a user ring buffer once per run (`bpf_user_ringbuf_drain(ring,
/// callback, NULL, 0)`), its callback reading each sample's first 8 bytes
/// (`bpf_dynptr_read`); it counts in an array map (entry 0) the samples its callback got, the
/// sum of their first words, the reads that failed, the drains that failed and the sum of what
/// the drains returned.
#[derive(Debug)]
pub struct DrainProgram {
    prog: OwnedFd,
    counts: OwnedFd,
}

/// What a [`DrainProgram`] counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Drained {
    /// Samples its callback got.
    pub samples: u64,
    /// The sum of their first u64 words (wrapping).
    pub sum: u64,
    /// Samples whose first 8 bytes could not be read (shorter than 8).
    pub unreadable: u64,
    /// Drains that returned an error.
    pub failed_drains: u64,
    /// The sum of what the successful drains returned (the samples handed to the callback; the
    /// kernel does not count the discards it skips).
    pub drained: u64,
}

impl DrainProgram {
    /// Load it over the user ring buffer `ring`.
    pub fn load(ring: BorrowedFd<'_>) -> io::Result<DrainProgram> {
        let counts = create_map(2, 4, 40, 1)?;
        let (insns, callback) = drain_program(ring, counts.as_fd());
        let btf = load_btf()?;
        // Types 4 and 5 of `load_btf`: the program, and its callback.
        let funcs = [[0, 4], [callback as u32, 5]];
        let prog = load_with_btf(&insns, Some((btf.as_fd(), &funcs)))?;
        Ok(DrainProgram { prog, counts })
    }

    /// Run it `repeat` times (`BPF_PROG_TEST_RUN`): `repeat` drains.
    pub fn run(&self, repeat: u32) -> io::Result<()> {
        test_run(self.prog.as_fd(), repeat).map(drop)
    }

    /// What it counted so far.
    pub fn counts(&self) -> io::Result<Drained> {
        let mut value = [0u8; 40];
        map_lookup(self.counts.as_fd(), 0, &mut value)?;
        let word = |i: usize| u64::from_ne_bytes(value[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        Ok(Drained { samples: word(0), sum: word(1), unreadable: word(2), failed_drains: word(3), drained: word(4) })
    }
}

/// `r0 = &counts[0]` or exit with `ret` if the lookup fails; `r1`–`r5` clobbered.
fn lookup_counts(p: &mut Vec<u64>, counts: BorrowedFd<'_>, ret: i32) {
    p.extend([insn(0x62, R10, 0, -4, 0), insn(MOV64_REG, 2, R10, 0, 0), insn(ADD64_IMM, 2, 0, 0, -4)]); // key = 0
    p.extend(ld_map(1, counts));
    p.extend([
        insn(CALL, 0, 0, 0, MAP_LOOKUP_ELEM),
        insn(JNE_IMM, 0, 0, 2, 0),
        insn(MOV64_IMM, 0, 0, 0, ret),
        insn(EXIT, 0, 0, 0, 0),
    ]);
}

/// `BPF_BTF_LOAD` of the drain program's types: `int`, `void *`, `int (void *a, void *b)`, and
/// two static functions of that type, `main` (id 4) and `cb` (id 5). Little-endian (x86-64,
/// arm64).
fn load_btf() -> io::Result<OwnedFd> {
    const STRINGS: &[u8] = b"\0int\0a\0b\0main\0cb\0";
    let (int, a, b, main, cb) = (1, 5, 7, 9, 14);
    let kind = |k: u32, vlen: u32| k << 24 | vlen;
    let types: [&[u32]; 5] = [
        &[int, kind(1, 0), 4, 0x0100_0020], // 1: int (signed, 32 bits)
        &[0, kind(2, 0), 0],                // 2: void *
        &[0, kind(13, 2), 1, a, 2, b, 2],   // 3: int (void *a, void *b)
        &[main, kind(12, 0), 3],            // 4: static main
        &[cb, kind(12, 0), 3],              // 5: static cb
    ];
    let type_len = 4 * types.iter().map(|t| t.len()).sum::<usize>() as u32;
    // The header: magic 0xeb9f, version 1, flags 0 (one little-endian word); hdr_len;
    // type_off, type_len; str_off, str_len.
    let header = [0x0001_eb9f, 24, 0, type_len, type_len, STRINGS.len() as u32];
    let blob: Vec<u8> = header
        .iter()
        .chain(types.concat().iter())
        .flat_map(|w| w.to_le_bytes())
        .chain(STRINGS.iter().copied())
        .collect();
    let mut log = vec![0u8; 16 << 10];
    let mut attr = [blob.as_ptr() as u64, log.as_mut_ptr() as u64, blob.len() as u64 | (log.len() as u64) << 32, 1];
    bpf(18, &mut attr).map(owned).map_err(|e| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        io::Error::new(e.kind(), format!("BPF_BTF_LOAD: {e} ({})", String::from_utf8_lossy(&log[..end])))
    })
}

/// The drain program's instructions, and its callback's offset.
fn drain_program(ring: BorrowedFd<'_>, counts: BorrowedFd<'_>) -> (Vec<u64>, usize) {
    let mut p = Vec::new();
    lookup_counts(&mut p, counts, 0);
    p.push(insn(MOV64_REG, 8, 0, 0, 0)); // r8 = &counts
    p.extend(ld_map(1, ring));
    let callback_ref = p.len();
    p.extend([0, 0]); // patched: r2 = callback
    p.extend([
        insn(MOV64_IMM, 3, 0, 0, 0), // ctx = NULL
        insn(MOV64_IMM, 4, 0, 0, 0), // flags
        insn(CALL, 0, 0, 0, USER_RINGBUF_DRAIN),
        insn(JSGE_IMM, 0, 0, 4, 0),
    ]);
    p.extend(count(3)); // failed drains
    p.push(insn(JA, 0, 0, 3, 0));
    p.extend([insn(LDX_DW, 1, 8, 32, 0), insn(0x0f, 1, 0, 0, 0), insn(STX_DW, 8, 1, 32, 0)]); // drained += r0
    p.extend([insn(MOV64_IMM, 0, 0, 0, 0), insn(EXIT, 0, 0, 0, 0)]);
    // The callback: r1 = the sample's dynptr.
    let callback = p.len();
    p[callback_ref] = insn(LD_IMM64, 2, PSEUDO_FUNC, 0, (callback - callback_ref - 1) as i32);
    p.push(insn(MOV64_REG, 6, 1, 0, 0)); // r6 = dynptr
    lookup_counts(&mut p, counts, 1);
    p.push(insn(MOV64_REG, 8, 0, 0, 0)); // r8 = &counts
    p.extend([
        insn(MOV64_REG, 1, R10, 0, 0),
        insn(ADD64_IMM, 1, 0, 0, -16), // dst = fp - 16
        insn(MOV64_IMM, 2, 0, 0, 8),
        insn(MOV64_REG, 3, 6, 0, 0),
        insn(MOV64_IMM, 4, 0, 0, 0),
        insn(MOV64_IMM, 5, 0, 0, 0),
        insn(CALL, 0, 0, 0, DYNPTR_READ),
        insn(JEQ_IMM, 0, 0, 4, 0),
    ]);
    p.extend(count(2)); // unreadable
    p.push(insn(JA, 0, 0, 7, 0)); // past the sum and the count
    p.extend([
        insn(LDX_DW, 1, R10, -16, 0),
        insn(LDX_DW, 2, 8, 8, 0),
        insn(0x0f, 2, 1, 0, 0), // sum += first word
        insn(STX_DW, 8, 2, 8, 0),
    ]);
    p.extend(count(0)); // samples
    p.extend([insn(MOV64_IMM, 0, 0, 0, 0), insn(EXIT, 0, 0, 0, 0)]);
    (p, callback)
}
