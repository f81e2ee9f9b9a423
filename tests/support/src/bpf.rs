//! A small BPF toolkit for the tests, the example and the benchmarks of perfring-linux's
//! `PerfEventArray`: maps, a program assembled by hand that emits records through
//! `bpf_perf_event_output` (helper 25), driven by `BPF_PROG_TEST_RUN` on a pinned thread.
//! Raw `bpf(2)` through libc, as the kernel's selftests load programs; not a BPF library.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};

/// `bpf(cmd, attr)` over an attr of `N` u64 words (zero-padded), returning the result.
pub(crate) fn bpf<const N: usize>(cmd: i32, attr: &mut [u64; N]) -> io::Result<i64> {
    // SAFETY: `attr` is N*8 valid bytes of a zero-padded `union bpf_attr` prefix that the kernel
    // reads (and for some commands writes) within that size; the pointers inside it are to
    // buffers the callers keep alive, of the lengths they state.
    let ret = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), N * 8) };
    if ret < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(ret)
    }
}

fn fd_word(fd: BorrowedFd<'_>) -> u64 {
    u64::from(fd.as_raw_fd() as u32)
}

pub(crate) fn owned(fd: i64) -> OwnedFd {
    // SAFETY: `bpf` returned a new descriptor that nothing else owns.
    unsafe { OwnedFd::from_raw_fd(fd as i32) }
}

/// `BPF_MAP_CREATE`: a map of `map_type` (2 array, 4 perf event array) with these sizes.
pub fn create_map(map_type: u32, key_size: u32, value_size: u32, max_entries: u32) -> io::Result<OwnedFd> {
    let mut attr =
        [u64::from(map_type) | u64::from(key_size) << 32, u64::from(value_size) | u64::from(max_entries) << 32, 0, 0];
    bpf(0, &mut attr).map(owned)
}

/// `BPF_MAP_LOOKUP_ELEM` of entry `key` into `value` (its value size).
pub fn map_lookup(map: BorrowedFd<'_>, key: u32, value: &mut [u8]) -> io::Result<()> {
    let mut attr = [fd_word(map), &key as *const u32 as u64, value.as_mut_ptr() as u64, 0];
    bpf(1, &mut attr).map(drop)
}

/// Pin the calling thread to `cpu` (`sched_setaffinity`).
pub fn pin_to_cpu(cpu: u32) -> io::Result<()> {
    // SAFETY: `set` is a valid cpu_set_t for the calls; pid 0 is the calling thread.
    let ret = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu as usize, &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set)
    };
    if ret == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// One eBPF instruction: opcode, dst and src registers, offset, immediate.
pub(crate) const fn insn(op: u8, dst: u8, src: u8, off: i16, imm: i32) -> u64 {
    op as u64 | ((dst | src << 4) as u64) << 8 | (off as u16 as u64) << 16 | (imm as u32 as u64) << 32
}
pub(crate) const MOV64_REG: u8 = 0xbf;
pub(crate) const MOV64_IMM: u8 = 0xb7;
pub(crate) const MOV32_IMM: u8 = 0xb4;
pub(crate) const ADD64_IMM: u8 = 0x07;
pub(crate) const LD_IMM64: u8 = 0x18;
pub(crate) const CALL: u8 = 0x85;
pub(crate) const EXIT: u8 = 0x95;
pub(crate) const STX_DW: u8 = 0x7b;
pub(crate) const STX_W: u8 = 0x63;
pub(crate) const LDX_DW: u8 = 0x79;
pub(crate) const JEQ_IMM: u8 = 0x15;
pub(crate) const JSGE_IMM: u8 = 0x75;
/// `BPF_PSEUDO_MAP_FD`: `LD_IMM64`'s immediate is a map's fd.
const PSEUDO_MAP_FD: u8 = 1;
pub(crate) const R10: u8 = 10;

/// The two instructions of `dst = map` (`BPF_LD_IMM64` of a map fd).
pub(crate) fn ld_map(dst: u8, map: BorrowedFd<'_>) -> [u64; 2] {
    [insn(LD_IMM64, dst, PSEUDO_MAP_FD, 0, map.as_raw_fd()), 0]
}

/// `BPF_PROG_LOAD` of a socket filter (type 1, GPL): the verifier's log in the error.
pub fn load_socket_filter(insns: &[u64]) -> io::Result<OwnedFd> {
    load_with_btf(insns, None)
}

/// [`load_socket_filter`] with BTF: the program's functions as `func_info` records
/// (instruction offset, BTF type id) over the BTF object `btf` (what a program with a callback
/// needs: the verifier refuses one without, "missing btf func_info").
pub(crate) fn load_with_btf(insns: &[u64], btf: Option<(BorrowedFd<'_>, &[[u32; 2]])>) -> io::Result<OwnedFd> {
    let license = b"GPL\0";
    let mut log = vec![0u8; 64 << 10];
    let mut attr = [0u64; 16];
    attr[0] = 1 | (insns.len() as u64) << 32;
    attr[1] = insns.as_ptr() as u64;
    attr[2] = license.as_ptr() as u64;
    attr[3] = 1 | (log.len() as u64) << 32; // log_level 1, log_size
    attr[4] = log.as_mut_ptr() as u64;
    if let Some((btf, funcs)) = btf {
        attr[9] = fd_word(btf) | 8 << 32; // prog_btf_fd, func_info_rec_size
        attr[10] = funcs.as_ptr() as u64; // func_info
        attr[11] = funcs.len() as u64; // func_info_cnt
    }
    bpf(5, &mut attr).map(owned).map_err(|e| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(log.len());
        let text = String::from_utf8_lossy(&log[..end]);
        let tail: String = text.lines().rev().take(6).collect::<Vec<_>>().join(" | ");
        io::Error::new(e.kind(), format!("BPF_PROG_LOAD: {e} (verifier, last lines: {tail})"))
    })
}

/// `BPF_PROG_TEST_RUN`: run `prog` `repeat` times over a 64-byte zero packet, on the calling
/// thread's CPU. Returns the kernel's mean duration per run, in ns.
pub fn test_run(prog: BorrowedFd<'_>, repeat: u32) -> io::Result<u32> {
    let packet = [0u8; 64];
    let mut attr = [0u64; 10];
    attr[0] = fd_word(prog);
    attr[1] = packet.len() as u64; // data_size_in (data_size_out 0)
    attr[2] = packet.as_ptr() as u64;
    attr[4] = u64::from(repeat); // repeat | duration << 32
    bpf(10, &mut attr)?;
    Ok((attr[4] >> 32) as u32)
}

/// Whether an error of the BPF calls means "this machine does not let us" (no `bpf(2)`, not
/// root, BPF disabled) rather than a bug: a test skips on these.
pub fn refused(e: &io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::EPERM | libc::EACCES | libc::ENOSYS | libc::EOPNOTSUPP))
}

/// A program that emits one record of `payload` bytes per run through
/// `bpf_perf_event_output(ctx, events, BPF_F_CURRENT_CPU, data, payload)`, and counts, per
/// CPU, its runs and the outputs that failed (the helper returned < 0) in an array map.
///
/// The payload ([`OutputProgram::expected`]): u64 words, the run's sequence number on its CPU
/// (0, 1, …), then the CPU, then `seq + i` at word `i`.
#[derive(Debug)]
pub struct OutputProgram {
    prog: OwnedFd,
    counts: OwnedFd,
    payload: usize,
}

/// Entries of the counts map: CPUs up to this number.
pub(crate) const MAX_CPUS: u32 = 1024;

impl OutputProgram {
    /// Load it over the perf event array `events`; `payload`: 8 to 496 bytes, a multiple of 8.
    pub fn load(events: BorrowedFd<'_>, payload: usize) -> io::Result<OutputProgram> {
        if !(8..=496).contains(&payload) || payload % 8 != 0 {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "payload: 8..=496 bytes, a multiple of 8"));
        }
        let counts = create_map(2, 4, 16, MAX_CPUS)?;
        let insns = Self::program(events, counts.as_fd(), payload);
        let prog = load_socket_filter(&insns)?;
        Ok(OutputProgram { prog, counts, payload })
    }

    fn program(events: BorrowedFd<'_>, counts: BorrowedFd<'_>, payload: usize) -> Vec<u64> {
        let base = -(8 + payload as i16); // the payload below the 4-byte key's slot
        let mut p = vec![
            insn(MOV64_REG, 6, 1, 0, 0), // r6 = ctx
            insn(CALL, 0, 0, 0, 8),      // r0 = bpf_get_smp_processor_id()
            insn(STX_W, R10, 0, -4, 0),  // key = cpu
            insn(MOV64_REG, 7, 0, 0, 0), // r7 = cpu
            insn(MOV64_REG, 2, R10, 0, 0),
            insn(ADD64_IMM, 2, 0, 0, -4), // r2 = &key
        ];
        p.extend(ld_map(1, counts));
        p.push(insn(CALL, 0, 0, 0, 1)); // r0 = bpf_map_lookup_elem(counts, &key)
        let exit_at = p.len(); // patched below
        p.push(0);
        p.extend([
            insn(MOV64_REG, 8, 0, 0, 0), // r8 = &counts[cpu]
            insn(LDX_DW, 1, 8, 0, 0),    // r1 = seq
            insn(MOV64_REG, 2, 1, 0, 0),
            insn(ADD64_IMM, 2, 0, 0, 1),
            insn(STX_DW, 8, 2, 0, 0),      // counts[cpu].runs = seq + 1
            insn(STX_DW, R10, 1, base, 0), // word 0: seq
        ]);
        for i in 1..payload / 8 {
            if i == 1 {
                p.push(insn(STX_DW, R10, 7, base + 8, 0)); // word 1: cpu
            } else {
                p.push(insn(MOV64_REG, 3, 1, 0, 0));
                p.push(insn(ADD64_IMM, 3, 0, 0, i as i32));
                p.push(insn(STX_DW, R10, 3, base + 8 * i as i16, 0)); // word i: seq + i
            }
        }
        p.push(insn(MOV64_REG, 1, 6, 0, 0));
        p.extend(ld_map(2, events));
        p.extend([
            insn(MOV32_IMM, 3, 0, 0, -1), // BPF_F_CURRENT_CPU (0xffffffff)
            insn(MOV64_REG, 4, R10, 0, 0),
            insn(ADD64_IMM, 4, 0, 0, i32::from(base)),
            insn(MOV64_IMM, 5, 0, 0, payload as i32),
            insn(CALL, 0, 0, 0, 25), // bpf_perf_event_output
            insn(JSGE_IMM, 0, 0, 3, 0),
            insn(LDX_DW, 1, 8, 8, 0),
            insn(ADD64_IMM, 1, 0, 0, 1),
            insn(STX_DW, 8, 1, 8, 0), // counts[cpu].failed += 1
        ]);
        let exit = p.len();
        p[exit_at] = insn(JEQ_IMM, 0, 0, (exit - exit_at - 1) as i16, 0);
        p.extend([insn(MOV64_IMM, 0, 0, 0, 0), insn(EXIT, 0, 0, 0, 0)]);
        p
    }

    /// Run it `repeat` times on the calling thread's CPU (`BPF_PROG_TEST_RUN`; pin the thread
    /// first: [`pin_to_cpu`]).
    pub fn run(&self, repeat: u32) -> io::Result<()> {
        test_run(self.prog_fd(), repeat).map(drop)
    }

    /// The program's descriptor.
    pub fn prog_fd(&self) -> BorrowedFd<'_> {
        self.prog.as_fd()
    }

    /// On `cpu`: (runs, failed outputs), as the program counted them.
    pub fn counts(&self, cpu: u32) -> io::Result<(u64, u64)> {
        let mut value = [0u8; 16];
        map_lookup(self.counts.as_fd(), cpu, &mut value)?;
        let word = |i: usize| u64::from_ne_bytes(value[i * 8..i * 8 + 8].try_into().unwrap_or([0; 8]));
        Ok((word(0), word(1)))
    }

    /// Payload bytes per record.
    pub fn payload(&self) -> usize {
        self.payload
    }

    /// The payload of run `seq` on `cpu`.
    pub fn expected(&self, seq: u64, cpu: u32) -> Vec<u8> {
        expected(self.payload, seq, cpu)
    }
}

/// The `payload` bytes of run `seq` on `cpu`: u64 words, `seq`, then `cpu`, then `seq + i` at
/// word `i`.
pub(crate) fn expected(payload: usize, seq: u64, cpu: u32) -> Vec<u8> {
    (0..payload / 8)
        .flat_map(|i| {
            match i {
                0 => seq,
                1 => u64::from(cpu),
                i => seq + i as u64,
            }
            .to_ne_bytes()
        })
        .collect()
}
