//! The firmware embedding for real: `examples/firmware` runs on an emulated Cortex-M4F (QEMU's
//! `mps2-an386`), sampling the interrupted PC from SysTick into a perfring ring in its RAM;
//! this host reads the ring out of the target's RAM the way a debug probe does — halting the
//! core through QEMU's gdbstub, reading `data_head` and the new bytes with memory reads,
//! writing `data_tail` back, resuming — and writes a perf.data that `perf report` symbolizes
//! from the firmware's ELF.
//!
//! ```text
//! firmware-host FIRMWARE.elf [OUT.data]
//! ```
//!
//! Every read goes through [`probe::ProbeRing`], perfring's `RingMemory` over debugger reads,
//! with [`Consumer::untrusted`]: the target's memory is copied, then validated. The firmware
//! counts every record it tries to write (`STATUS.attempts`); the host checks
//! `attempted = read + lost` (once it stays away until the firmware has attempted twice what
//! the ring holds, so the ring fills and the firmware drops). `make firmware-qemu` builds and
//! runs it; `tests/qemu.rs` checks the story against `perf report`.

mod gdb;
mod probe;

use std::ffi::CString;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use perfring::consumer::Consumer;
use perfring::consumer::{ConsumerConfig, Scratch};
use perfring::record::{attr_flags, sample_type as st, Attr, Comm, Endian, EventRecord, EventSet, Mmap, Record};
use perfring_data::FileAttr;

/// Where the firmware keeps its status words and its ring (memory.x places them).
const STATUS: u32 = 0x2000_0000;
const RING: u32 = 0x2000_1000;
/// The firmware's control page (its ABI fields, rounded to 8) and data area.
const PAGE: usize = 1088;
const DATA: usize = 16384;
/// The firmware's SAMPLE (header, ip, pid/tid, time, period): 40 bytes.
const SAMPLE_SIZE: usize = 40;
/// "PRFR": the ring is laid out.
const MAGIC: u32 = 0x5052_4652;
/// How often the host halts the core to read.
const POLL: Duration = Duration::from_millis(20);

/// Let the halted target run for one [`POLL`], then halt it again.
fn run_one_poll(ring: &probe::ProbeRing) -> std::io::Result<()> {
    ring.gdb().resume()?;
    std::thread::sleep(POLL);
    ring.gdb().interrupt()
}

type Error = Box<dyn std::error::Error>;

fn attr() -> Attr {
    Attr {
        type_: 1, // PERF_TYPE_SOFTWARE
        size: Attr::SIZE_VER7,
        config: 0, // PERF_COUNT_SW_CPU_CLOCK: SysTick, a clock
        sample_period: 1,
        sample_type: st::IP | st::TID | st::TIME | st::PERIOD,
        flags: attr_flags::EXCLUDE_KERNEL | attr_flags::EXCLUDE_HV,
        ..Attr::ZERO
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(elf) = args.get(1) else {
        eprintln!("usage: firmware-host FIRMWARE.elf [OUT.data]");
        std::process::exit(2);
    };
    let out = args.get(2).map_or("firmware.data", String::as_str);
    if let Err(e) = run(elf, out) {
        eprintln!("firmware-host: {e}");
        std::process::exit(1);
    }
}

/// The executable PT_LOAD segment of a 32-bit little-endian ELF: (address, size, file offset).
fn text_segment(elf: &[u8]) -> Result<(u64, u64, u64), Error> {
    let u16_at = |at: usize| elf.get(at..at + 2).map(|b| u16::from_le_bytes([b[0], b[1]]) as usize);
    let u32_at = |at: usize| elf.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    if elf.get(..6) != Some(&b"\x7fELF\x01\x01"[..]) {
        return Err("the firmware is not a 32-bit little-endian ELF".into());
    }
    let (phoff, phentsize, phnum) =
        (u32_at(28).ok_or("e_phoff")? as usize, u16_at(42).ok_or("e_phentsize")?, u16_at(44).ok_or("e_phnum")?);
    for i in 0..phnum {
        let at = phoff + i * phentsize;
        let field = |o: usize| u32_at(at + o).ok_or("program header");
        if field(0)? == 1 && field(24)? & 1 != 0 {
            // PT_LOAD, PF_X
            return Ok((u64::from(field(8)?), u64::from(field(16)?), u64::from(field(4)?)));
        }
    }
    Err("no executable segment".into())
}

/// QEMU, killed when dropped.
struct Qemu(Child);

impl Drop for Qemu {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// A free local TCP port for the gdbstub.
fn free_port() -> std::io::Result<u16> {
    Ok(std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?.port())
}

fn run(elf_path: &str, out: &str) -> Result<(), Error> {
    let elf_path = std::fs::canonicalize(elf_path)?;
    let elf = std::fs::read(&elf_path)?;
    let (text_addr, text_len, text_off) = text_segment(&elf)?;
    let port = free_port()?;
    let qemu = Command::new("qemu-system-arm")
        // -icount: the virtual clock (and so SysTick) counts instructions, so samples fall in
        // proportion to the instructions each function runs, whatever the host's load.
        .args(["-M", "mps2-an386", "-icount", "shift=0", "-nographic", "-monitor", "none", "-serial", "none"])
        .args(["-S", "-gdb"])
        .arg(format!("tcp:127.0.0.1:{port}"))
        .arg("-kernel")
        .arg(&elf_path)
        .stdin(Stdio::null())
        .spawn()
        .map_err(|e| format!("qemu-system-arm: {e} (apt-get install qemu-system-arm)"))?;
    let _qemu = Qemu(qemu);
    let gdb = gdb::Gdb::connect(&format!("127.0.0.1:{port}"))?;
    let ring = probe::ProbeRing::new(gdb, RING, PAGE, DATA);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(60);

    // Until the firmware has laid out its ring.
    let status = |ring: &probe::ProbeRing| -> Result<[u32; 4], Error> {
        let b = ring.gdb().read(STATUS, 16)?;
        Ok([0, 4, 8, 12].map(|i| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]])))
    };
    loop {
        run_one_poll(&ring)?;
        if status(&ring)?[0] == MAGIC {
            break;
        }
        if Instant::now() > deadline {
            return Err("the firmware never laid out its ring".into());
        }
    }

    let mut consumer = Consumer::untrusted(&ring)?;
    // The probe halts the core to read: every batch is one halt; the tail goes back each time.
    consumer.configure(ConsumerConfig::EVERY_BATCH);
    let set = EventSet::single(&attr(), Endian::NATIVE);
    let mut scratch = Scratch::new();
    let (mut kept, mut samples, mut lost, mut polls, mut errors) = (Vec::new(), 0u64, 0u64, 0u64, 0u64);
    let attempts = loop {
        // Halted here.
        let s = status(&ring)?;
        ring.refresh()?;
        let result = consumer.for_each(&mut scratch, |r| match set.attribute(r).decode() {
            Ok(Record::Sample(_)) => {
                samples += 1;
                kept.push(r.bytes.to_vec());
            }
            Ok(Record::Lost(l)) => {
                lost += l.lost;
                kept.push(r.bytes.to_vec());
            }
            _ => errors += 1,
        });
        if let Err(e) = result {
            errors += 1;
            println!("firmware-host: {e} — resynchronising");
            consumer.skip_to_head();
        }
        ring.write_back_tail()?;
        polls += 1;
        // `done` was read before the drain: everything up to it is in.
        if s[3] == 1 {
            break s[1];
        }
        if Instant::now() > deadline {
            return Err("the firmware did not finish in 60 s".into());
        }
        run_one_poll(&ring)?;
        if polls == 5 {
            // Once, a host busy elsewhere: the target runs unread until it has attempted twice
            // what the ring holds (however fast the emulator runs), so it fills the ring and
            // drops (counted, and reported in a LOST record). Halting only to look at the
            // status words, not reading the ring.
            let unread_from = s[1];
            loop {
                let now = status(&ring)?;
                if now[3] == 1 || now[1].wrapping_sub(unread_from) as usize >= 2 * DATA / SAMPLE_SIZE {
                    break;
                }
                if Instant::now() > deadline {
                    return Err("the firmware did not fill its ring in 60 s".into());
                }
                run_one_poll(&ring)?;
            }
        }
    };
    drop(consumer);
    println!(
        "firmware-host: firmware attempted {attempts} records; read {samples} samples + {lost} lost = {}; {polls} halts, \
         {errors} errors; {:.2} s",
        samples + lost,
        started.elapsed().as_secs_f64()
    );
    if samples + lost != u64::from(attempts) {
        return Err(format!("attempted {attempts} != read {samples} + lost {lost}").into());
    }

    // perf.data: the firmware is process 1, "firmware", its text mapped from the ELF.
    let file = std::io::BufWriter::new(std::fs::File::create(out)?);
    let mut writer = perfring_data::Writer::new(file, Endian::NATIVE, vec![FileAttr { attr: attr(), ids: vec![] }])?;
    let path = CString::new(elf_path.to_string_lossy().as_bytes())?;
    writer.write_record(&Record::Comm(Comm { misc: 0, pid: 1, tid: 1, comm: c"firmware", sample_id: None }), 0)?;
    writer.write_record(
        &Record::Mmap(Mmap {
            misc: 2, // PERF_RECORD_MISC_USER
            pid: 1,
            tid: 1,
            addr: text_addr,
            len: text_len,
            pgoff: text_off,
            filename: &path,
            sample_id: None,
        }),
        0,
    )?;
    for r in &kept {
        writer.write_raw(r, &[])?;
    }
    writer.finished_round()?;
    writer.finish()?;
    println!("firmware-host: wrote {out} (try: perf report -i {out} --stdio)");
    Ok(())
}
