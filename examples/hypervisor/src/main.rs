//! A perf ring across a real trust boundary: a minimal KVM VMM (rust-vmm's `kvm-ioctls` and
//! `vm-memory`) runs a `no_std` guest (`guest/`, built for `x86_64-unknown-none`) that writes
//! perf records into a perfring ring in its own memory; the VMM reads the ring while the vCPU
//! runs and writes a perf.data that `perf report` symbolizes from the guest's ELF.
//!
//! ```text
//! hypervisor GUEST.elf [OUT.data]
//! ```
//!
//! 1. The VMM makes a VM of 4 MiB, loads the guest ELF's segments at their physical addresses,
//!    lays out a ring (a control page and a 16 KiB data area) at 2 MiB, and starts the vCPU in
//!    long mode on a thread of its own.
//! 2. Meanwhile the main thread reads the ring with [`Consumer::untrusted`] over
//!    [`vm::GuestRing`] (perfring's `RingMemory` over guest memory: vm-memory's bounded atomic
//!    loads): each record copied, then validated on the copy, then attributed and decoded
//!    before it is kept.
//! 3. The guest's records: a COMM, an MMAP of its text, SAMPLEs of its own instruction
//!    pointers (2/3 in `work_a`, 1/3 in `work_b` by design), drops reported as LOST records
//!    (the reader stops for a second once, as a host busy elsewhere would, so the guest fills
//!    the ring), and a last COMM. It reports how many records it tried to write (port 0x10); the VMM
//!    checks `attempted = read + lost`.
//! 4. Then the guest turns hostile (garbage data, nonsense heads and tails): the VMM gets typed
//!    [`ReadError`]s, resynchronises, keeps nothing of it, and never panics or reads outside
//!    guest memory.
//! 5. perf.data: the event's attr and the honest records, the guest's MMAP pointed at the ELF
//!    on the host (its name and file offset), so `perf report` names the guest's functions.
//!
//! `make hypervisor` builds the guest and runs it; `tests/kvm.rs` checks the whole story
//! against `perf report`.

mod vm;

use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use kvm_ioctls::VcpuExit;
use perfring::consumer::Consumer;
use perfring::consumer::{ReadError, Scratch};
use perfring::record::{attr_flags, sample_type as st, Attr, Endian, EventRecord, EventSet, Mmap, Record, Walker};
use perfring_data::FileAttr;
use vm_memory::{Bytes, GuestAddress};

/// Where the guest's ring is, and its sizes (the guest has the same constants).
const RING: u64 = 0x20_0000;
const PAGE: usize = 4096;
const DATA: usize = 16 * 1024;
/// The guest's ports.
const PORT_ATTEMPTS: u16 = 0x10;
const PORT_DONE: u16 = 0x11;
const PORT_FAILED: u16 = 0x12;

/// The guest's event: its samples' layout.
fn attr() -> Attr {
    Attr {
        type_: 1, // PERF_TYPE_SOFTWARE
        size: Attr::SIZE_VER7,
        config: 0, // PERF_COUNT_SW_CPU_CLOCK
        sample_period: 1,
        sample_type: st::IP | st::TID | st::TIME | st::PERIOD,
        // The guest samples its own code only: no kernel maps for perf to look for.
        flags: attr_flags::EXCLUDE_KERNEL | attr_flags::EXCLUDE_HV,
        ..Attr::ZERO
    }
}

type Error = Box<dyn std::error::Error + Send + Sync>;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(elf) = args.get(1) else {
        eprintln!("usage: hypervisor GUEST.elf [OUT.data]");
        std::process::exit(2);
    };
    let out = args.get(2).map_or("hypervisor.data", String::as_str);
    if let Err(e) = run(elf, out) {
        eprintln!("hypervisor: {e}");
        std::process::exit(1);
    }
}

/// One loadable segment of the guest ELF: file offset, address, sizes.
#[derive(Debug, Clone, Copy)]
struct Segment {
    offset: u64,
    addr: u64,
    filesz: u64,
    memsz: u64,
}

/// The entry point and PT_LOAD segments of a 64-bit little-endian ELF (bounded reads: a
/// malformed file is an error).
fn parse_elf(bytes: &[u8]) -> Result<(u64, Vec<Segment>), Error> {
    let u16_at = |at: usize| bytes.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as u64);
    let u32_at = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_le_bytes(b.try_into().unwrap_or_default()));
    let u64_at = |at: usize| bytes.get(at..at + 8).map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()));
    if bytes.get(..6) != Some(&b"\x7fELF\x02\x01"[..]) {
        return Err("the guest is not a 64-bit little-endian ELF".into());
    }
    let entry = u64_at(24).ok_or("ELF header")?;
    let (phoff, phentsize, phnum) = (
        u64_at(32).ok_or("e_phoff")? as usize,
        u16_at(54).ok_or("e_phentsize")? as usize,
        u16_at(56).ok_or("e_phnum")?,
    );
    let mut segments = Vec::new();
    for i in 0..phnum as usize {
        let at = phoff + i * phentsize;
        if u32_at(at) != Some(1) {
            continue; // not PT_LOAD
        }
        let field = |o: usize| u64_at(at + o).ok_or("program header");
        segments.push(Segment { offset: field(8)?, addr: field(24)?, filesz: field(32)?, memsz: field(40)? });
    }
    Ok((entry, segments))
}

/// What the vCPU thread learnt from the guest.
#[derive(Default)]
struct Exits {
    attempts: AtomicU64,
    reported: AtomicBool,
    done: AtomicBool,
}

/// The tally of the reader.
#[derive(Debug, Default)]
struct Tally {
    samples: u64,
    comms: u64,
    mmaps: u64,
    lost: u64,
    read_errors: u64,
    hostile_records: u64,
}

fn run(elf_path: &str, out: &str) -> Result<(), Error> {
    let elf_path = std::fs::canonicalize(elf_path)?;
    let elf = std::fs::read(&elf_path)?;
    let (entry, segments) = parse_elf(&elf)?;
    let mut machine = vm::Vm::new()?;
    for s in &segments {
        let end = s.addr.checked_add(s.memsz).ok_or("segment size")?;
        if end > RING || s.filesz > s.memsz {
            return Err(format!("guest segment {s:?} overlaps the ring or is malformed").into());
        }
        let file = elf.get(s.offset as usize..(s.offset + s.filesz) as usize).ok_or("segment past the file")?;
        machine.mem.write_slice(file, GuestAddress(s.addr))?;
    }
    machine.layout_ring(RING, PAGE, DATA)?;
    machine.long_mode(entry)?;

    // The vCPU on its own thread; the exits it sees go to `exits`.
    let exits = Arc::new(Exits::default());
    let vcpu = machine.vcpu.take().ok_or("no vCPU")?;
    let vcpu_exits = Arc::clone(&exits);
    let vcpu_thread = std::thread::spawn(move || -> Result<(), String> {
        let mut vcpu = vcpu;
        loop {
            match vcpu.run().map_err(|e| format!("KVM_RUN: {e}"))? {
                VcpuExit::IoOut(port, data) => {
                    let value = data.iter().rev().fold(0u64, |v, &b| v << 8 | u64::from(b));
                    match port {
                        PORT_ATTEMPTS => {
                            vcpu_exits.attempts.store(value, Ordering::Release);
                            vcpu_exits.reported.store(true, Ordering::Release);
                        }
                        PORT_DONE => vcpu_exits.done.store(true, Ordering::Release),
                        PORT_FAILED => return Err(format!("the guest failed (code {value})")),
                        _ => return Err(format!("the guest wrote port {port:#x}")),
                    }
                }
                VcpuExit::Hlt => return Ok(()),
                other => return Err(format!("unexpected exit {other:?}")),
            }
        }
    });

    // The reader: untrusted, while the guest runs.
    let ring = vm::GuestRing::new(&machine.mem, RING, PAGE, DATA)?;
    let mut consumer = Consumer::untrusted(&ring)?;
    let set = EventSet::single(&attr(), Endian::NATIVE);
    let mut scratch = Scratch::new();
    let mut kept: Vec<Vec<u8>> = Vec::new();
    let mut tally = Tally::default();
    // The honest phase ends with the guest's second COMM: what follows is the hostile phase.
    let mut honest = true;
    // Once, a host busy elsewhere: the reader stops for a second after its first 1000 samples,
    // the guest fills the ring and drops (counted, and reported in LOST records).
    let mut stalled = false;
    let deadline = Instant::now() + Duration::from_secs(60);
    let started = Instant::now();
    loop {
        let finished = vcpu_thread.is_finished();
        let result = consumer.for_each(&mut scratch, |r| {
            if !honest {
                tally.hostile_records += 1;
                return;
            }
            match set.attribute(r).decode() {
                Ok(Record::Sample(_)) => tally.samples += 1,
                Ok(Record::Lost(l)) => tally.lost += l.lost,
                Ok(Record::Comm(_)) => {
                    tally.comms += 1;
                    honest = tally.comms < 2;
                }
                Ok(Record::Mmap(_)) => tally.mmaps += 1,
                _ => {
                    tally.hostile_records += 1;
                    return;
                }
            }
            kept.push(r.bytes.to_vec());
        });
        if let Err(e) = result {
            tally.read_errors += 1;
            if tally.read_errors <= 3 {
                println!("hypervisor: hostile ring: {e} — resynchronising");
            }
            consumer.skip_to_head();
        }
        if !stalled && tally.samples >= 1000 {
            stalled = true;
            std::thread::sleep(Duration::from_secs(1));
        }
        if finished || Instant::now() > deadline {
            break;
        }
        std::thread::yield_now();
    }
    let vcpu_result = vcpu_thread.join().map_err(|_| "the vCPU thread panicked")?;
    vcpu_result?;
    let attempts = exits.attempts.load(Ordering::Acquire);
    let read = tally.samples + tally.comms + tally.mmaps;
    println!(
        "hypervisor: guest attempted {attempts} records; read {read} ({} samples, {} comm, {} mmap) + {} lost = {}; \
         survived {} hostile reads, rejected {} hostile records; {:.2} s",
        tally.samples,
        tally.comms,
        tally.mmaps,
        tally.lost,
        read + tally.lost,
        tally.read_errors,
        tally.hostile_records,
        started.elapsed().as_secs_f64()
    );
    if !exits.reported.load(Ordering::Acquire) || !exits.done.load(Ordering::Acquire) {
        return Err("the guest did not finish its run".into());
    }
    if read + tally.lost != attempts {
        return Err(format!("records attempted {attempts} != read {read} + lost {}", tally.lost).into());
    }

    // perf.data: the guest's MMAP names its image "kvm-guest"; perf needs the file on the host.
    let file = std::io::BufWriter::new(std::fs::File::create(out)?);
    let mut writer = perfring_data::Writer::new(file, Endian::NATIVE, vec![FileAttr { attr: attr(), ids: vec![] }])?;
    let path = CString::new(elf_path.to_string_lossy().as_bytes())?;
    for r in &kept {
        let Some(Ok(raw)) = Walker::new(r, Endian::NATIVE).next() else { continue };
        match set.attribute(&raw).decode() {
            Ok(Record::Mmap(m)) if r.len() >= 8 && m.misc & 7 == 2 => {
                let seg = segments.iter().find(|s| s.addr <= m.addr && m.addr < s.addr + s.memsz);
                let pgoff = seg.map_or(0, |s| s.offset + (m.addr - s.addr));
                let rec = Record::Mmap(Mmap { filename: &path, pgoff, ..m });
                writer.write_record(&rec, 0)?;
            }
            _ => writer.write_raw(r, &[])?,
        }
    }
    writer.finished_round()?;
    writer.finish()?;
    println!("hypervisor: wrote {out} (try: perf report -i {out} --stdio)");
    if tally.read_errors == 0 {
        return Err("the hostile guest went unnoticed".into());
    }
    Ok(())
}

// Named so the docs link.
#[allow(dead_code)]
type HostReadError = ReadError;
