//! A firmware producer: a `#![no_std]`, `#![no_main]` image for a Cortex-M4F
//! (`thumbv7em-none-eabihf`, QEMU's `mps2-an386`) that records perf samples into one static
//! ring, with no allocator, for a host to read.
//!
//! * The ring (a control page and a 16 KiB data area) is a `static` at a fixed address
//!   (`memory.x`), laid out at boot by [`Mapping::new`]; the [`Producer`] lives in a `static`
//!   behind [`CpuLocal`], the promise that only this CPU and its interrupt handlers write it —
//!   the kernel's own rule for its rings.
//! * On the target, SysTick samples the interrupted PC (read from the exception's stacked
//!   frame) into the ring while the workload runs (`fw_work_a`, `fw_work_b`); `STATUS` counts
//!   every record attempted. The host (`examples/firmware-host`) halts the core through QEMU's
//!   gdbstub, reads the ring out of RAM as a debug probe would, writes `data_tail` back, and
//!   writes perf.data: `make firmware-qemu`.
//! * Built for the host (`cargo run -p perfring-example-firmware`), the same producer runs
//!   with the interrupt simulated at the worst moment — inside the task's open reservation,
//!   where the ISR's record nests (`nest` = 2) exactly as the kernel nests an NMI inside a
//!   writer — and checks what arrives.
#![cfg_attr(target_os = "none", no_std, no_main)]

use core::mem::MaybeUninit;
use core::ptr::addr_of_mut;

use perfring::consumer::{Consumer, Trusted};
use perfring::memory::Mapping;
#[cfg(not(target_os = "none"))]
use perfring::producer::EventIdentity;
use perfring::producer::{CpuLocal, Producer, ProducerConfig};
#[cfg(not(target_os = "none"))]
use perfring::record::{types, Endian, Header};

/// The control page (1088 bytes of ABI fields, rounded to 8) and a 16 KiB data area.
const PAGE: usize = 1088;
const DATA: usize = 16384;

#[repr(C, align(8))]
struct RingMemory([u8; PAGE + DATA]);

/// The ring (on the target at a fixed address: the `.ring` section of memory.x, 4 KiB into
/// RAM, where the host reads it).
#[cfg_attr(target_os = "none", link_section = ".ring")]
#[cfg_attr(target_os = "none", no_mangle)]
static mut RING: RingMemory = RingMemory([0; PAGE + DATA]);
static mut MAPPING: MaybeUninit<Mapping<'static>> = MaybeUninit::uninit();
static mut PRODUCER: MaybeUninit<CpuLocal<Producer<&'static Mapping<'static>>>> = MaybeUninit::uninit();
static mut CONSUMER: MaybeUninit<Consumer<&'static Mapping<'static>, Trusted>> = MaybeUninit::uninit();

/// Lay out the ring and create its two ends. Runs once, at reset, before interrupts are on.
fn boot() {
    // SAFETY: runs once, before any interrupt is enabled, so nothing else touches these
    // statics while they are initialized; afterwards they are only read through shared
    // references (the producer and consumer synchronize through the ring's atomics).
    unsafe {
        let buf = &mut *addr_of_mut!(RING.0);
        let mapping = (*addr_of_mut!(MAPPING)).write(Mapping::new(buf, PAGE).unwrap_or_else(|_| halt()));
        let mapping: &'static Mapping<'static> = mapping;
        // SAFETY (Producer::new): this is the only producer of the ring.
        let producer = Producer::new(mapping, ProducerConfig::default()).unwrap_or_else(|_| halt());
        // SAFETY (CpuLocal::new): only this CPU's thread mode and its interrupt handlers write.
        (*addr_of_mut!(PRODUCER)).write(CpuLocal::new(producer));
        // SAFETY (Consumer::trusted): the producer above follows the protocol.
        (*addr_of_mut!(CONSUMER)).write(Consumer::trusted(mapping).unwrap_or_else(|_| halt()));
    }
}

fn producer() -> &'static Producer<&'static Mapping<'static>> {
    // SAFETY: initialized by `boot` before any caller runs; only shared references are made.
    unsafe { (*addr_of_mut!(PRODUCER)).assume_init_ref().get() }
}

#[cfg(not(target_os = "none"))]
/// A SAMPLE of `{u64 ip, u32 pid, u32 tid}`: what `sample_type = IP | TID` lays out.
fn sample(ip: u64, tid: u32) -> [u8; 24] {
    let mut r = [0u8; 24];
    r[..8].copy_from_slice(&Header { type_: types::SAMPLE, misc: 0, size: 24 }.to_bytes(Endian::NATIVE));
    r[8..16].copy_from_slice(&ip.to_ne_bytes());
    r[16..20].copy_from_slice(&1u32.to_ne_bytes());
    r[20..24].copy_from_slice(&tid.to_ne_bytes());
    r
}

#[cfg(not(target_os = "none"))]
/// The SysTick exception: one sample, tid 0 ("interrupt context"). A full ring drops and counts
/// it (reported later as PERF_RECORD_LOST); an interrupt handler never waits.
pub extern "C" fn systick() {
    let _ = producer().output(&sample(0x0800_1000, 0), &EventIdentity::ANONYMOUS);
}

#[cfg(not(target_os = "none"))]
/// One loop of the application task: a sample written in two steps through a reservation.
/// `interrupt_here` stands for the hardware: on the target the exception may fire anywhere.
fn task_tick(n: u32, interrupt_here: &dyn Fn()) {
    let record = sample(0x0800_2000 + u64::from(n), 7);
    let Ok(mut handle) = producer().output_begin(record.len(), &EventIdentity::ANONYMOUS) else { return };
    let _ = handle.write(&record[..16]);
    interrupt_here(); // an ISR's record nests here: reserved after ours, published by our `end`
    let _ = handle.write(&record[16..]);
    if handle.end() {
        // The watermark was crossed: a real image would signal the host (an IRQ line, a flag).
    }
}

#[cfg(not(target_os = "none"))]
/// Drain every published record into `transport`; returns the records shipped.
fn ship(transport: &mut dyn FnMut(&[u8])) -> usize {
    // SAFETY: initialized by `boot`; only this (thread-mode) code consumes.
    let consumer = unsafe { (*addr_of_mut!(CONSUMER)).assume_init_mut() };
    let mut scratch = [0u8; 256];
    consumer.for_each(&mut scratch, |r| transport(r.bytes)).unwrap_or(0)
}

fn halt() -> ! {
    loop {
        core::hint::spin_loop();
    }
}

// ------------------------------------------------------------------------------------------
// The target: an image for QEMU's mps2-an386 (Cortex-M4F) — vector table, reset, SysTick
// sampling the interrupted PC. (A real image gets the runtime from a crate such as
// cortex-m-rt; it is spelled out here, a few lines, so the example needs nothing else.)

#[cfg(target_os = "none")]
mod target {
    use core::arch::global_asm;
    use core::ptr::{addr_of, addr_of_mut, read_volatile, write_volatile};
    use core::sync::atomic::{AtomicU32, Ordering};

    use perfring::producer::EventIdentity;

    /// What the host (a debugger) reads besides the ring: at the start of RAM.
    #[repr(C)]
    pub struct Status {
        /// `FIRMWARE_MAGIC` once the ring is laid out.
        magic: AtomicU32,
        /// Records the firmware tried to write (written, or dropped and counted).
        attempts: AtomicU32,
        /// Samples taken (SysTick exceptions).
        samples: AtomicU32,
        /// 1 when the run is over and every drop is reported.
        done: AtomicU32,
    }

    /// "PRFR".
    const FIRMWARE_MAGIC: u32 = 0x5052_4652;
    /// Samples in a run.
    const SAMPLES: u32 = 3000;
    /// SysTick reload: the core clock (25 MHz on mps2-an386) / 10 kHz.
    const RELOAD: u32 = 2_500;
    /// Nanoseconds per tick, for the samples' TIME.
    const TICK_NS: u64 = 100_000;

    #[no_mangle]
    #[link_section = ".ring_status"]
    pub static STATUS: Status = Status {
        magic: AtomicU32::new(0),
        attempts: AtomicU32::new(0),
        samples: AtomicU32::new(0),
        done: AtomicU32::new(0),
    };

    // SysTick's entry: the stacked frame (r0-r3, r12, lr, pc, xpsr) is at MSP before the
    // handler pushes anything, so a two-instruction trampoline hands it over.
    global_asm!(
        ".section .text.systick_entry, \"ax\"",
        ".global systick_entry",
        ".thumb_func",
        "systick_entry:",
        "    mrs r0, msp",
        "    b systick_sample",
    );

    extern "C" {
        fn systick_entry();
        static mut __sbss: u32;
        static mut __ebss: u32;
        static mut __sdata: u32;
        static mut __edata: u32;
        static __sidata: u32;
    }

    /// The SysTick exception: a SAMPLE of the interrupted PC (the stacked frame's 7th word).
    /// A full ring drops and counts it (a PERF_RECORD_LOST reports it later); an interrupt
    /// handler never waits.
    #[no_mangle]
    extern "C" fn systick_sample(frame: *const u32) {
        // SAFETY: `frame` is MSP at exception entry: the 8-word frame the hardware stacked.
        let pc = unsafe { read_volatile(frame.add(6)) };
        let n = STATUS.samples.fetch_add(1, Ordering::Relaxed);
        STATUS.attempts.fetch_add(1, Ordering::Relaxed);
        let _ = super::producer().output(&sample(u64::from(pc), u64::from(n) * TICK_NS), &EventIdentity::ANONYMOUS);
    }

    /// `IP | TID | TIME | PERIOD`: {ip, pid 1, tid 1, time, period 1}.
    fn sample(ip: u64, time: u64) -> [u8; 40] {
        use perfring::record::{types, Endian, Header};
        let mut r = [0u8; 40];
        r[..8].copy_from_slice(&Header { type_: types::SAMPLE, misc: 2, size: 40 }.to_bytes(Endian::NATIVE));
        r[8..16].copy_from_slice(&ip.to_ne_bytes());
        r[16..20].copy_from_slice(&1u32.to_ne_bytes());
        r[20..24].copy_from_slice(&1u32.to_ne_bytes());
        r[24..32].copy_from_slice(&time.to_ne_bytes());
        r[32..40].copy_from_slice(&1u64.to_ne_bytes());
        r
    }

    /// The workload: the same loop (4 instructions an iteration), 2000 iterations in
    /// `fw_work_a` and 1000 in `fw_work_b`, so that 2/3 of the time, and of the samples, is in
    /// `fw_work_a` (QEMU runs with `-icount`, so time is instructions).
    #[inline(never)]
    #[no_mangle]
    pub fn fw_work_a() {
        for i in 0..2000u32 {
            core::hint::black_box(i);
        }
    }

    #[inline(never)]
    #[no_mangle]
    pub fn fw_work_b() {
        for i in 0..1000u32 {
            core::hint::black_box(i);
        }
    }

    const SYST_CSR: *mut u32 = 0xE000_E010 as *mut u32;
    const SYST_RVR: *mut u32 = 0xE000_E014 as *mut u32;
    const SYST_CVR: *mut u32 = 0xE000_E018 as *mut u32;
    const CPACR: *mut u32 = 0xE000_ED88 as *mut u32;

    /// Reset: RAM initialised, the FPU on, the ring laid out, SysTick started; the workload
    /// until `SAMPLES` samples are taken; SysTick stopped; a last record written until it fits
    /// (so no drop stays unreported); `done`; sleep.
    #[no_mangle]
    pub unsafe extern "C" fn reset() -> ! {
        // SAFETY: runs first, alone: .bss zeroed and .data copied between the linker's
        // symbols (word-aligned by memory.x), the FPU enabled (CPACR), SysTick programmed
        // through its architectural registers.
        unsafe {
            let mut p = addr_of_mut!(__sbss);
            while p < addr_of_mut!(__ebss) {
                write_volatile(p, 0);
                p = p.add(1);
            }
            let (mut d, mut s) = (addr_of_mut!(__sdata), addr_of!(__sidata));
            while d < addr_of_mut!(__edata) {
                write_volatile(d, read_volatile(s));
                d = d.add(1);
                s = s.add(1);
            }
            write_volatile(CPACR, read_volatile(CPACR) | 0xF << 20);
        }
        super::boot();
        STATUS.magic.store(FIRMWARE_MAGIC, Ordering::Release);
        // SAFETY: SysTick's registers: reload, clear, enable with interrupt on the core clock.
        unsafe {
            write_volatile(SYST_RVR, RELOAD - 1);
            write_volatile(SYST_CVR, 0);
            write_volatile(SYST_CSR, 0b111);
        }
        while STATUS.samples.load(Ordering::Relaxed) < SAMPLES {
            fw_work_a();
            fw_work_b();
        }
        // SAFETY: SysTick off: no more samples.
        unsafe { write_volatile(SYST_CSR, 0) };
        // The last record (a SAMPLE at the reset handler), until it fits: its reservation
        // carries the LOST record of any drop before it.
        loop {
            STATUS.attempts.fetch_add(1, Ordering::Relaxed);
            let n = STATUS.samples.load(Ordering::Relaxed);
            let here = reset as *const () as usize as u64;
            if super::producer().output(&sample(here, u64::from(n) * TICK_NS), &EventIdentity::ANONYMOUS).is_ok() {
                break;
            }
            for i in 0..10_000u32 {
                core::hint::black_box(i);
            }
        }
        STATUS.done.store(1, Ordering::Release);
        loop {
            // SAFETY: wait for an interrupt (none is enabled: sleep until the host stops us).
            unsafe { core::arch::asm!("wfi") };
        }
    }

    unsafe extern "C" fn default_handler() {
        super::halt()
    }

    #[used]
    #[link_section = ".vector_table.reset"]
    static RESET: unsafe extern "C" fn() -> ! = reset;

    /// NMI .. SysTick (exceptions 2-15).
    #[used]
    #[link_section = ".vector_table.exceptions"]
    static EXCEPTIONS: [Option<unsafe extern "C" fn()>; 14] = {
        let mut v: [Option<unsafe extern "C" fn()>; 14] = [Some(default_handler); 14];
        v[13] = Some(systick_entry);
        v
    };

    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        super::halt()
    }
}

// ------------------------------------------------------------------------------------------
// The host: the same code, with the interrupt fired inside every open reservation.

#[cfg(not(target_os = "none"))]
fn main() {
    use perfring::record::{sample_type as st, Attr, EventRecord, EventSet, Record, Walker};
    boot();
    let mut shipped = Vec::new();
    for n in 0..200 {
        task_tick(n, &|| systick());
        if n % 10 == 9 {
            ship(&mut |bytes| shipped.push(bytes.to_vec()));
        }
    }
    ship(&mut |bytes| shipped.push(bytes.to_vec()));
    // The host side decodes what arrived.
    let set = EventSet::single(&Attr { sample_type: st::IP | st::TID, ..Attr::default() }, Endian::NATIVE);
    let (mut task, mut isr, mut lost) = (0, 0, 0);
    for bytes in &shipped {
        let Some(Ok(raw)) = Walker::new(bytes, Endian::NATIVE).next() else { panic!("not one record: {bytes:?}") };
        match set.attribute(&raw).decode() {
            Ok(Record::Sample(s)) if s.tid().map(|t| t.tid) == Some(7) => task += 1,
            Ok(Record::Sample(_)) => isr += 1,
            Ok(Record::Lost(l)) => lost += l.lost,
            other => panic!("unexpected record: {other:?}"),
        }
    }
    let pending = producer().lost_pending() as u64;
    println!("firmware (host run): {task} task samples, {isr} interrupt samples, {lost} lost, {pending} pending");
    assert_eq!(task + isr + lost + pending, 400, "every record arrived or was counted");
    assert!(isr > 0 && task > 0);
}
