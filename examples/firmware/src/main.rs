//! A firmware producer: the shape of a `#![no_std]`, `#![no_main]` image for a Cortex-M4F
//! (`thumbv7em-none-eabihf`) that records perf samples from a task and from an interrupt
//! handler into one static ring, with no allocator, and ships the records to a host.
//!
//! * The ring (a control page and a 4 KiB data area) is a `static`, laid out at boot by
//!   [`Mapping::new`]; the [`Producer`] lives in a `static` behind [`CpuLocal`], the promise that
//!   only this CPU and its interrupt handlers write it — the kernel's own rule for its rings.
//! * `task_tick` (thread mode) writes a SAMPLE per loop; `systick` (the SysTick exception)
//!   writes one too. When the interrupt lands while the task holds a reservation, the ISR's
//!   record nests inside it (`nest` = 2): it is reserved after the task's, and published by the
//!   task's `end` — exactly what the kernel does for an NMI inside a writer.
//! * `ship` drains the ring (the consumer's side: one tail store per batch) into a transport —
//!   a UART, a debug probe's RTT buffer, a shared-memory window. The host turns the bytes into
//!   perf.data with `perfring-data` (see `examples/cross-process`).
//!
//! `make embedded` builds it for `thumbv7em-none-eabihf` and prints the image's sizes. Built for
//! the host (`cargo run -p perfring-example-firmware`), the same code runs with the interrupt
//! simulated at the worst moment — inside the task's open reservation — and checks what
//! arrives.
#![cfg_attr(target_os = "none", no_std, no_main)]

use core::mem::MaybeUninit;
use core::ptr::addr_of_mut;

use perfring::consumer::{Consumer, Trusted};
use perfring::producer::{Config, CpuLocal, Producer, Writer};
use perfring::record::{types, Endian, Header};
use perfring::Mapping;

/// The control page (1088 bytes of ABI fields, rounded to 8) and a 4 KiB data area.
const PAGE: usize = 1088;
const DATA: usize = 4096;

#[repr(C, align(8))]
struct RingMemory([u8; PAGE + DATA]);

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
        let producer = Producer::new(mapping, Config::default()).unwrap_or_else(|_| halt());
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

/// A SAMPLE of `{u64 ip, u32 pid, u32 tid}`: what `sample_type = IP | TID` lays out.
fn sample(ip: u64, tid: u32) -> [u8; 24] {
    let mut r = [0u8; 24];
    r[..8].copy_from_slice(&Header { type_: types::SAMPLE, misc: 0, size: 24 }.to_bytes(Endian::NATIVE));
    r[8..16].copy_from_slice(&ip.to_ne_bytes());
    r[16..20].copy_from_slice(&1u32.to_ne_bytes());
    r[20..24].copy_from_slice(&tid.to_ne_bytes());
    r
}

/// The SysTick exception: one sample, tid 0 ("interrupt context"). A full ring drops and counts
/// it (reported later as PERF_RECORD_LOST); an interrupt handler never waits.
#[cfg_attr(target_os = "none", no_mangle)]
pub extern "C" fn systick() {
    let _ = producer().output(&sample(0x0800_1000, 0), &Writer::ANONYMOUS);
}

/// One loop of the application task: a sample written in two steps through a reservation.
/// `interrupt_here` stands for the hardware: on the target the exception may fire anywhere.
fn task_tick(n: u32, interrupt_here: &dyn Fn()) {
    let record = sample(0x0800_2000 + u64::from(n), 7);
    let Ok(mut handle) = producer().output_begin(record.len(), &Writer::ANONYMOUS) else { return };
    let _ = handle.write(&record[..16]);
    interrupt_here(); // an ISR's record nests here: reserved after ours, published by our `end`
    let _ = handle.write(&record[16..]);
    if handle.end() {
        // The watermark was crossed: a real image would signal the host (an IRQ line, a flag).
    }
}

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
// The target: reset handler, vector table, panic handler. (A real image gets these from its
// runtime crate, e.g. cortex-m-rt; they are spelled out here so the example needs nothing else.)

#[cfg(target_os = "none")]
mod target {
    /// Reset: boot, then loop forever shipping records (to a debugger-visible buffer here).
    #[no_mangle]
    pub extern "C" fn reset() -> ! {
        super::boot();
        static mut OUTBOX: [u8; 512] = [0; 512];
        let mut n = 0u32;
        loop {
            super::task_tick(n, &|| {});
            super::ship(&mut |bytes| {
                // SAFETY: only this loop writes OUTBOX.
                let outbox = unsafe { &mut *core::ptr::addr_of_mut!(OUTBOX) };
                let len = bytes.len().min(outbox.len());
                outbox[..len].copy_from_slice(&bytes[..len]);
            });
            n = n.wrapping_add(1);
        }
    }

    #[no_mangle]
    pub extern "C" fn _start() -> ! {
        reset()
    }

    /// Cortex-M vector table: initial stack pointer (0 here: the linker script's job), reset,
    /// then the exceptions up to SysTick (entry 15).
    #[used]
    #[link_section = ".vector_table"]
    static VECTORS: [Option<unsafe extern "C" fn()>; 16] = {
        let mut v: [Option<unsafe extern "C" fn()>; 16] = [None; 16];
        v[15] = Some(super::systick);
        v
    };

    #[used]
    #[link_section = ".vector_table.reset"]
    static RESET: extern "C" fn() -> ! = reset;

    #[panic_handler]
    fn panic(_: &core::panic::PanicInfo) -> ! {
        super::halt()
    }
}

// ------------------------------------------------------------------------------------------
// The host: the same code, with the interrupt fired inside every open reservation.

#[cfg(not(target_os = "none"))]
fn main() {
    use perfring::record::{decode, sample_type as st, DecodeContext, Record};
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
    let ctx = DecodeContext { sample_type: st::IP | st::TID, ..DecodeContext::new(Endian::NATIVE) };
    let (mut task, mut isr, mut lost) = (0, 0, 0);
    for bytes in &shipped {
        match decode(bytes, &ctx) {
            Ok(Record::Sample(s)) if s.tid.map(|t| t.tid) == Some(7) => task += 1,
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
