//! The guest of `examples/hypervisor`: a `no_std`, `no_main` x86-64 image that the VMM loads at
//! 1 MiB and enters in long mode. It writes perf records into the ring the VMM laid out in its
//! memory, then turns hostile.
//!
//! 1. A COMM (`kvm-guest`) and an MMAP of its own text (`__image_start..__text_end`, named
//!    `kvm-guest`: the VMM maps that name to the ELF on the host).
//! 2. `ROUNDS` rounds of `work_a` twice and `work_b` once, each call spinning a while and then
//!    writing a SAMPLE whose IP is an instruction of that function (read with `lea rip`) — a
//!    loop-driven sampler, so the design split is exact: 2/3 of the samples in `work_a`, 1/3 in
//!    `work_b`. A full ring drops and counts, as the kernel does; the next record that fits is
//!    preceded by a PERF_RECORD_LOST.
//! 3. A last record (a COMM) written until it fits, so no drop stays unreported; then every
//!    record attempt is reported on port `PORT_ATTEMPTS` and the guest waits until the VMM has
//!    read everything (`data_tail` reaches the head).
//! 4. Hostile: garbage over the data area, nonsense `data_head` values, `data_tail` scribbled,
//!    then `PORT_DONE` and `hlt`.
#![no_std]
#![no_main]

use core::arch::asm;

use perfring::memory::Mapping;
use perfring::memory::{Position, RingMemory};
use perfring::producer::{EventIdentity, Producer, ProducerConfig};
use perfring::record::{sample_type as st, Attr, Comm, Encode, Endian, EventLayout, Mmap, PidTid, Record, Sample};

/// Where the VMM laid out the ring (guest-physical = guest-virtual: identity-mapped).
const RING: usize = 0x20_0000;
/// The control page and the data area.
const PAGE: usize = 4096;
const DATA: usize = 16 * 1024;
/// Ports the VMM listens on (`out dx, eax`).
const PORT_ATTEMPTS: u16 = 0x10;
const PORT_DONE: u16 = 0x11;
const PORT_FAILED: u16 = 0x12;
/// Rounds of the workload (each: `work_a` twice, `work_b` once).
const ROUNDS: u32 = 1500;
/// The guest's pid and tid in its records.
const PID: u32 = 1;

extern "C" {
    static __image_start: u8;
    static __text_end: u8;
}

fn out32(port: u16, value: u32) {
    // SAFETY: port I/O to a port the VMM handles; no memory is touched.
    unsafe { asm!("out dx, eax", in("dx") port, in("eax") value, options(nomem, nostack, preserves_flags)) };
}

fn halt() -> ! {
    loop {
        // SAFETY: `hlt` stops the vCPU; the VMM ends the run on the exit.
        unsafe { asm!("hlt", options(nomem, nostack)) };
    }
}

fn fail(code: u32) -> ! {
    out32(PORT_FAILED, code);
    halt()
}

fn rdtsc() -> u64 {
    let (lo, hi): (u32, u32);
    // SAFETY: reads the time-stamp counter; no memory is touched.
    unsafe { asm!("rdtsc", out("eax") lo, out("edx") hi, options(nomem, nostack, preserves_flags)) };
    u64::from(hi) << 32 | u64::from(lo)
}

/// The address of the instruction after this one, in the function it is inlined into.
#[inline(always)]
fn here() -> u64 {
    let ip: u64;
    // SAFETY: computes an address; reads nothing.
    unsafe { asm!("lea {}, [rip]", out(reg) ip, options(nomem, nostack, preserves_flags)) };
    ip
}

/// The event's sample layout (the VMM's attr says the same).
const SAMPLE_TYPE: u64 = st::IP | st::TID | st::TIME | st::PERIOD;

struct Guest<'m> {
    /// Owning its mapping: every control word and the data area one load away (see
    /// `make bench-instructions`).
    producer: Producer<Mapping<'m>>,
    layout: EventLayout,
    attempts: u32,
}

impl Guest<'_> {
    fn write(&mut self, record: &impl Encode) -> bool {
        let mut buf = [0u8; 256];
        let Ok(n) = record.encode(&self.layout, &mut buf) else { fail(2) };
        self.attempts += 1;
        self.producer.output(&buf[..n], &EventIdentity::ANONYMOUS).is_ok()
    }

    fn sample(&mut self, ip: u64) {
        let s = Sample {
            misc: 2, // PERF_RECORD_MISC_USER
            ip: Some(ip),
            tid: Some(PidTid { pid: PID, tid: PID }),
            time: Some(rdtsc()),
            period: Some(1),
            ..Sample::default()
        };
        self.write(&s);
    }
}

fn spin(n: u32) {
    for i in 0..n {
        core::hint::black_box(i);
    }
}

#[inline(never)]
fn work_a(g: &mut Guest<'_>) {
    spin(20);
    g.sample(here());
}

#[inline(never)]
fn work_b(g: &mut Guest<'_>) {
    spin(30); // unlike work_a's, so the two are not merged into one function
    g.sample(here());
}

#[no_mangle]
#[link_section = ".text.start"]
pub extern "C" fn _start() -> ! {
    main();
    halt()
}

fn main() {
    // SAFETY: the VMM laid out a ring of PAGE + DATA bytes at RING, identity-mapped, which this
    // guest alone writes (as its producer) and the VMM reads.
    let map = unsafe { Mapping::attach(RING as *mut u8, PAGE + DATA) }.unwrap_or_else(|_| fail(1));
    // SAFETY: the guest's one vCPU is the ring's only producer.
    let producer = unsafe { Producer::new(map, ProducerConfig::default()) }.unwrap_or_else(|_| fail(3));
    let layout = EventLayout::new(&Attr { sample_type: SAMPLE_TYPE, ..Attr::ZERO }, Endian::NATIVE);
    let mut g = Guest { producer, layout, attempts: 0 };

    // Linker symbols: only their addresses are taken.
    let (start, text_end) = (core::ptr::addr_of!(__image_start) as u64, core::ptr::addr_of!(__text_end) as u64);
    g.write(&Record::Comm(Comm { misc: 0, pid: PID, tid: PID, comm: c"kvm-guest", sample_id: None }));
    g.write(&Record::Mmap(Mmap {
        misc: 2,
        pid: PID,
        tid: PID,
        addr: start,
        len: text_end - start,
        pgoff: 0,
        filename: c"kvm-guest",
        sample_id: None,
    }));
    for _ in 0..ROUNDS {
        work_a(&mut g);
        work_a(&mut g);
        work_b(&mut g);
    }
    // Nothing dropped stays unreported: a last record, until it fits (with the LOST record
    // before it). Each try counts as an attempt (a drop is a drop).
    while !g.write(&Record::Comm(Comm { misc: 0, pid: PID, tid: PID, comm: c"kvm-guest", sample_id: None })) {
        spin(1000);
    }
    out32(PORT_ATTEMPTS, g.attempts);
    // Wait until the VMM has read everything, then turn hostile.
    let head = g.producer.head();
    let map = g.producer.memory();
    while map.position(Position::DataTail).load(perfring::fences::LOCAL) != head {
        spin(1000);
    }
    hostile(map);
    out32(PORT_DONE, 0);
}

/// Scribble: garbage where the VMM reads next, published as if it were records, then heads
/// and tails that make no sense.
fn hostile(map: &Mapping<'_>) {
    let data = (RING + PAGE) as *mut u64;
    let head = map.position(Position::DataHead);
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for round in 0..16u64 {
        for i in 0..(DATA / 8) as u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            // SAFETY: inside the data area the VMM laid out (DATA / 8 words at RING + PAGE).
            unsafe { data.add(i as usize).write_volatile(x.wrapping_add(i)) };
        }
        let value = match round % 4 {
            0 => head.load(perfring::fences::LOCAL).wrapping_add(512),
            1 => (x | 7) as usize,
            2 => head.load(perfring::fences::LOCAL).wrapping_sub(4096),
            _ => (x.rotate_left(17) & !7) as usize,
        };
        head.store(value, perfring::fences::LOCAL);
        map.position(Position::DataTail).store(x as usize, perfring::fences::LOCAL);
        spin(2_000);
    }
}

#[panic_handler]
fn panic(_: &core::panic::PanicInfo<'_>) -> ! {
    fail(99)
}
