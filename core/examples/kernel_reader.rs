//! Read the kernel's own perf rings with perfring, for about a second:
//!
//! ```text
//! cargo run --example kernel_reader -p perfring
//! ```
//!
//! On every CPU (system-wide, `pid = -1`: root, or `perf_event_paranoid` ≤ 0) it opens three
//! software events — cpu-clock and task-clock every 100 µs, context-switches at every switch —
//! with `sample_type` IP|TID|TIME|CPU|PERIOD|CALLCHAIN, maps each `1 + 16` pages
//! PROT_READ|PROT_WRITE, and reads them with perfring's [`Consumer`] over the kernel's own
//! mapping ([`Mapping::attach`]: the kernel's control page and data pages, nothing copied),
//! while two threads make load: one spins, one sleeps and wakes (context switches). Every record
//! is decoded; the summary lists records by type, samples by CPU and by thread, and what was
//! lost (the PERF_RECORD_LOST records and the kernel's own count, `PERF_FORMAT_LOST`).
//!
//! If the kernel refuses `perf_event_open`, it says so and exits with status 1; if a record does
//! not decode, with status 2.
//!
//! Reading the summary: the clocks' counters are in ns (samples × 100 µs is a little below:
//! late hrtimer expiries skip periods). CPU-wide context-switches: on the 6.18 kernel this was
//! written on, the counter exceeded the samples with nothing lost — by about half on an idle
//! machine, and no context-switch sample had pid 0 — so switches away from the idle task
//! appear to be counted but not sampled. Per-thread events (the `kernel_ring` tests) match
//! exactly.
//!
//! Self-contained on purpose (the syscalls through `libc`, a small record decoder): it shows
//! everything an embedder writes around perfring.

use std::collections::BTreeMap;
use std::io;
use std::mem::{offset_of, size_of};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::process::ExitCode;
use std::ptr::NonNull;
use std::time::{Duration, Instant};

use perfring::consumer::Scratch;
use perfring::record::{sample_type as st, types, Endian, Header};
use perfring::{Consumer, Mapping};

const SAMPLE_TYPE: u64 = st::IP | st::TID | st::TIME | st::CPU | st::PERIOD | st::CALLCHAIN;
/// `read_format`: TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING | ID | LOST.
const READ_FORMAT: u64 = 1 | 1 << 1 | 1 << 2 | 1 << 4;
/// Flag bits of `perf_event_attr` (offset 40): disabled, sample_id_all.
const DISABLED: u64 = 1 << 0;
const SAMPLE_ID_ALL: u64 = 1 << 18;
/// `PERF_EVENT_IOC_ENABLE` = `_IO('$', 0)`, `PERF_EVENT_IOC_DISABLE` = `_IO('$', 1)`.
const IOC_ENABLE: u64 = 0x2400;
const IOC_DISABLE: u64 = 0x2401;
const DATA_PAGES: usize = 16;

/// `struct perf_event_attr`, `PERF_ATTR_SIZE_VER7` (128 bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default)]
struct Attr {
    type_: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
    config2: u64,
    branch_sample_type: u64,
    sample_regs_user: u64,
    sample_stack_user: u32,
    clockid: i32,
    sample_regs_intr: u64,
    aux_watermark: u32,
    sample_max_stack: u16,
    reserved_2: u16,
    aux_sample_size: u32,
    aux_action: u32,
    sig_data: u64,
}
const _: () = assert!(size_of::<Attr>() == 128 && offset_of!(Attr, flags) == 40 && offset_of!(Attr, sig_data) == 120);

struct Event {
    name: &'static str,
    cpu: i32,
    fd: OwnedFd,
    ring: NonNull<u8>,
    len: usize,
}

impl Event {
    /// Open a software event (`PERF_TYPE_SOFTWARE`) on `cpu`, for every task, and map its ring.
    fn open(name: &'static str, config: u64, period: u64, cpu: i32) -> Result<Event, i32> {
        let attr = Attr {
            type_: 1,
            size: 128,
            config,
            sample_period: period,
            sample_type: SAMPLE_TYPE,
            read_format: READ_FORMAT,
            flags: DISABLED | SAMPLE_ID_ALL,
            ..Attr::default()
        };
        const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;
        // SAFETY: `attr` is a valid 128-byte perf_event_attr with size = 128; the kernel reads it.
        let ret = unsafe {
            libc::syscall(libc::SYS_perf_event_open, &attr as *const Attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC)
        };
        if ret < 0 {
            return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
        // SAFETY: a new file descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(ret as i32) };
        // SAFETY: sysconf has no memory-safety preconditions.
        let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as usize;
        let len = (1 + DATA_PAGES) * page;
        let prot = libc::PROT_READ | libc::PROT_WRITE;
        // SAFETY: a new shared mapping of our perf fd; no existing memory is touched.
        let ptr = unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, fd.as_raw_fd(), 0) };
        if ptr == libc::MAP_FAILED {
            return Err(io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
        let ring = NonNull::new(ptr.cast()).expect("mmap returned a non-null address");
        Ok(Event { name, cpu, fd, ring, len })
    }

    fn ioctl(&self, request: u64) {
        // SAFETY: ENABLE/DISABLE take an integer argument; `fd` is our perf event.
        let ret = unsafe { libc::ioctl(self.fd.as_raw_fd(), request as _, 0) };
        assert_eq!(ret, 0, "ioctl {request:#x}: {}", io::Error::last_os_error());
    }

    /// perfring's view of the kernel's mapping.
    fn mapping(&self) -> Mapping<'_> {
        // SAFETY: ring .. ring + len is our live, writable MAP_SHARED mapping of the event; only
        // `Drop` unmaps it, which cannot run while the `Mapping` borrows `self`. The other party
        // is the kernel, which follows the perf protocol.
        unsafe { Mapping::attach(self.ring.as_ptr(), self.len) }.expect("the kernel's layout is valid")
    }

    /// `read(2)`: (count, lost).
    fn counts(&self) -> (u64, u64) {
        let mut words = [0u64; 5];
        // SAFETY: 40 writable bytes: value, time_enabled, time_running, id, lost.
        let n = unsafe { libc::read(self.fd.as_raw_fd(), words.as_mut_ptr().cast(), size_of::<[u64; 5]>()) };
        assert_eq!(n, 40, "read(2) of the counter: {}", io::Error::last_os_error());
        (words[0], words[4])
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: exactly the mapping `open` created; nothing borrows it any more.
        unsafe { libc::munmap(self.ring.as_ptr().cast(), self.len) };
    }
}

/// What the decoder keeps of a record.
enum Decoded {
    Sample { pid: u32, tid: u32, cpu: u32 },
    Lost { lost: u64 },
    Other,
}

/// Decode one record of an event with [`SAMPLE_TYPE`] and `sample_id_all`: every field of a
/// SAMPLE (kernel output order), LOST with its trailer, and the trailer of any other record;
/// the fields must end exactly at `header.size`.
fn decode(bytes: &[u8]) -> Result<Decoded, String> {
    let h = Header::parse(bytes, Endian::NATIVE).ok_or("short header")?;
    if usize::from(h.size) != bytes.len() {
        return Err(format!("size {} for {} bytes", h.size, bytes.len()));
    }
    let words: Vec<u64> = bytes[8..].chunks_exact(8).map(|w| u64::from_ne_bytes(w.try_into().unwrap())).collect();
    // Two u32 in one 8-byte slot ({pid, tid}, {cpu, res}): the first at the lower address.
    let pair = |w: u64| {
        let b = w.to_ne_bytes();
        (u32::from_ne_bytes([b[0], b[1], b[2], b[3]]), u32::from_ne_bytes([b[4], b[5], b[6], b[7]]))
    };
    // The trailer of non-SAMPLE records for this sample_type: {pid, tid}, time, {cpu, res}.
    const TRAILER: usize = 3;
    match h.type_ {
        types::SAMPLE => {
            // ip, {pid, tid}, time, {cpu, res}, period, nr, ips[nr]
            let [_ip, ids, _time, cpu, _period, nr, ..] = words[..] else {
                return Err(format!("SAMPLE of {} bytes", bytes.len()));
            };
            if words.len() as u64 != 6 + nr {
                return Err(format!("SAMPLE with {nr} callchain entries in {} bytes", bytes.len()));
            }
            let ((pid, tid), (cpu, _res)) = (pair(ids), pair(cpu));
            Ok(Decoded::Sample { pid, tid, cpu })
        }
        types::LOST if words.len() == 2 + TRAILER => Ok(Decoded::Lost { lost: words[1] }),
        types::LOST => Err(format!("LOST of {} bytes", bytes.len())),
        _ if words.len() >= TRAILER => Ok(Decoded::Other),
        t => Err(format!("record type {t} of {} bytes has no room for its trailer", bytes.len())),
    }
}

fn type_name(t: u32) -> String {
    match t {
        types::SAMPLE => "SAMPLE".into(),
        types::LOST => "LOST".into(),
        types::THROTTLE => "THROTTLE".into(),
        types::UNTHROTTLE => "UNTHROTTLE".into(),
        t => format!("type {t}"),
    }
}

/// The thread's name, read when its first sample is seen (it may have exited by the summary).
fn comm(pid: u32, tid: u32) -> String {
    if tid == 0 {
        return "[idle]".into();
    }
    std::fs::read_to_string(format!("/proc/{pid}/task/{tid}/comm")).map_or_else(|_| "?".into(), |s| s.trim().into())
}

#[derive(Default)]
struct Summary {
    records: BTreeMap<(&'static str, String), u64>,
    by_cpu: BTreeMap<u32, u64>,
    by_tid: BTreeMap<(u32, u32), u64>,
    comms: BTreeMap<u32, String>,
    lost_reported: BTreeMap<&'static str, u64>,
    samples: BTreeMap<&'static str, u64>,
    decode_errors: u64,
    total: u64,
}

fn main() -> ExitCode {
    // SAFETY: sysconf has no memory-safety preconditions.
    let cpus = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) } as i32;
    let mut events = Vec::new();
    for cpu in 0..cpus {
        for (name, config, period) in
            [("cpu-clock", 0, 100_000), ("context-switches", 3, 1), ("task-clock", 1, 100_000)]
        {
            match Event::open(name, config, period, cpu) {
                Ok(e) => events.push(e),
                Err(errno) => {
                    eprintln!(
                        "perf_event_open refused (errno {errno}): run as root or lower \
                         /proc/sys/kernel/perf_event_paranoid"
                    );
                    return ExitCode::from(1);
                }
            }
        }
    }
    let maps: Vec<Mapping<'_>> = events.iter().map(Event::mapping).collect();
    let mut consumers: Vec<_> = maps
        .iter()
        // SAFETY: the producer is the kernel, which never writes between data_tail and data_head
        // of a writable ring.
        .map(|m| unsafe { Consumer::trusted(m) }.expect("consumer over the kernel's mapping"))
        .collect();

    // Load for as long as we read: one thread spins, one sleeps and wakes.
    let mut summary = Summary::default();
    let mut scratch = Box::new(Scratch::new());
    let start = Instant::now();
    let end = start + Duration::from_secs(1);
    std::thread::scope(|s| {
        std::thread::Builder::new()
            .name("spinner".into())
            .spawn_scoped(s, || {
                let mut x = 1u64;
                while Instant::now() < end {
                    x = std::hint::black_box(x.wrapping_mul(6364136223846793005).wrapping_add(1));
                }
            })
            .unwrap();
        std::thread::Builder::new()
            .name("sleeper".into())
            .spawn_scoped(s, || {
                while Instant::now() < end {
                    std::thread::sleep(Duration::from_micros(50));
                }
            })
            .unwrap();
        events.iter().for_each(|e| e.ioctl(IOC_ENABLE));
        let mut read_all = |summary: &mut Summary| {
            for (c, e) in consumers.iter_mut().zip(&events) {
                let read = c.for_each(&mut scratch[..], |r| {
                    summary.total += 1;
                    *summary.records.entry((e.name, type_name(r.header.type_))).or_default() += 1;
                    match decode(r.bytes) {
                        Ok(Decoded::Sample { pid, tid, cpu }) => {
                            *summary.samples.entry(e.name).or_default() += 1;
                            *summary.by_cpu.entry(cpu).or_default() += 1;
                            *summary.by_tid.entry((pid, tid)).or_default() += 1;
                            summary.comms.entry(tid).or_insert_with(|| comm(pid, tid));
                        }
                        Ok(Decoded::Lost { lost }) => *summary.lost_reported.entry(e.name).or_default() += lost,
                        Ok(Decoded::Other) => {}
                        Err(err) => {
                            eprintln!("{} on CPU {}: record does not decode: {err}", e.name, e.cpu);
                            summary.decode_errors += 1;
                        }
                    }
                });
                if let Err(err) = read {
                    eprintln!("{} on CPU {}: ring read failed: {err}", e.name, e.cpu);
                    summary.decode_errors += 1;
                }
            }
        };
        while Instant::now() < end {
            std::thread::sleep(Duration::from_millis(10));
            read_all(&mut summary);
        }
        events.iter().for_each(|e| e.ioctl(IOC_DISABLE));
        read_all(&mut summary);
    });

    println!(
        "kernel_reader: {} records from {} rings ({} CPUs × cpu-clock, context-switches, task-clock) in {:.2} s, \
         read with perfring over the kernel's mappings",
        summary.total,
        events.len(),
        cpus,
        start.elapsed().as_secs_f64()
    );
    println!("records by event and type:");
    for ((name, t), n) in &summary.records {
        println!("  {name:<17} {t:<10} {n:>8}");
    }
    println!("samples by CPU:");
    for (cpu, n) in &summary.by_cpu {
        println!("  cpu {cpu:<3} {n:>8}");
    }
    let mut tids: Vec<_> = summary.by_tid.iter().collect();
    tids.sort_by(|a, b| b.1.cmp(a.1));
    println!("samples by thread (top 5 of {}):", tids.len());
    for ((pid, tid), n) in tids.iter().take(5) {
        println!("  pid {pid:<7} tid {tid:<7} {:<16} {n:>8}", summary.comms[tid]);
    }
    println!("samples and lost, against the kernel's counters (read(2)):");
    for name in ["cpu-clock", "context-switches", "task-clock"] {
        let (count, kernel_lost) = events
            .iter()
            .filter(|e| e.name == name)
            .map(Event::counts)
            .fold((0, 0), |(c, l), (c1, l1)| (c + c1, l + l1));
        let reported = summary.lost_reported.get(name).copied().unwrap_or(0);
        let samples = summary.samples.get(name).copied().unwrap_or(0);
        println!(
            "  {name:<17} samples {samples:>8}, Σ PERF_RECORD_LOST {reported:>6}, kernel lost count {kernel_lost:>6}, \
             counter {count}"
        );
    }
    if summary.decode_errors > 0 {
        eprintln!("{} records did not decode", summary.decode_errors);
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
