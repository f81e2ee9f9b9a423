//! A perf ring across a trust boundary: what a hypervisor (or any host) does with a ring a
//! guest (or any less trusted process) writes, ending in a perf.data that `perf report` reads.
//!
//! ```text
//! cross-process [OUT.data]         the host: makes the ring, starts the guest, reads, exports
//! cross-process guest FD           the guest (started by the host): writes, then turns hostile
//! ```
//!
//! 1. The host creates a memfd, lays out a perf ring in it (control page + 64 KiB data area)
//!    and starts the guest, a second process that maps the same memfd (the fd is inherited).
//! 2. The guest is a perfring [`Producer`]: a COMM and 3000 samples of one event
//!    (`IDENTIFIER | IP | TID | TIME | PERIOD`). Then it turns hostile: it scribbles garbage
//!    over the data area and publishes nonsense heads, and exits.
//! 3. The host reads with an **untrusted** [`Consumer`]: each record is copied with atomic loads
//!    into local memory and validated on the copy (no double fetch), every bad head or size is a
//!    typed [`ReadError`] after which the host resynchronises (`skip_to_head`) — never a panic,
//!    a hang or a read outside the ring. Each record is then attributed (one event, id 1) and
//!    decoded before it is kept, so garbage that happens to look like a record is dropped too.
//! 4. The records kept go into a perf.data file (the event's attr, its id, the records), which
//!    `perf report -i OUT.data` and `perf script -i OUT.data` read.
//!
//! `tests/runs_and_perf_reads.rs` runs it and checks perf's reading of the file.

mod shm;

use perfring::page::MmapPage;
use std::mem::offset_of;
use std::process::Command;
use std::time::{Duration, Instant};

use perfring::consumer::Consumer;
use perfring::consumer::{ReadError, Scratch};
use perfring::memory::{Position, RingMemory};
use perfring::producer::{EventIdentity, Producer, ProducerConfig};
use perfring::record::{
    attr_flags, sample_type as st, types, Attr, Comm, Encode, Endian, EventLayout, EventRecord, EventSet, IdEntry,
    PidTid, Record, Sample, SampleId,
};
use perfring_data::FileAttr;
use shm::SharedMemory;

const PAGE: usize = 4096;
const DATA: usize = 64 << 10;
const SAMPLES: u64 = 3000;
/// The guest's one event: its id, as the host registered it.
const EVENT_ID: u64 = 1;

/// The event both sides agree on (the host would hand the attr to the guest in a real system).
fn attr() -> Attr {
    Attr {
        type_: 1, // PERF_TYPE_SOFTWARE
        size: Attr::SIZE_VER7,
        config: 0, // PERF_COUNT_SW_CPU_CLOCK
        sample_period: 10_000,
        sample_type: st::IDENTIFIER | st::IP | st::TID | st::TIME | st::PERIOD,
        flags: attr_flags::SAMPLE_ID_ALL,
        ..Attr::ZERO
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let result = match args.get(1).map(String::as_str) {
        Some("guest") => guest(args.get(2).and_then(|fd| fd.parse().ok())),
        out => host(out.unwrap_or("cross-process.data")),
    };
    if let Err(e) = result {
        eprintln!("cross-process: {e}");
        std::process::exit(1);
    }
}

type Error = Box<dyn std::error::Error>;

/// The guest: a well-behaved producer, then a hostile one.
fn guest(fd: Option<i32>) -> Result<(), Error> {
    let fd = fd.ok_or("usage: cross-process guest FD")?;
    // SAFETY: the host passed us this fd to own.
    let mem = unsafe { SharedMemory::inherit(fd, PAGE + DATA) }?;
    let mapping = mem.mapping()?;
    // SAFETY: the guest is the ring's only producer.
    let producer = unsafe { Producer::new(&mapping, ProducerConfig::default()) }?;
    let layout = perfring::record::EventLayout::new(&attr(), Endian::NATIVE);
    let pid = std::process::id();
    let sid = |time| {
        SampleId {
            tid: Some(PidTid { pid, tid: pid }),
            time: Some(time),
            identifier: Some(EVENT_ID),
            ..SampleId::default()
        }
        .masked(layout.attr().sample_type)
    };
    let start = 1_000_000_000u64;
    let mut buf = [0u8; 128];
    let comm = Record::Comm(Comm { misc: 0, pid, tid: pid, comm: c"guest-vcpu0", sample_id: Some(sid(start)) });
    let n = comm.encode(&layout, &mut buf)?;
    producer.output(&buf[..n], &EventIdentity::ANONYMOUS)?;
    for i in 0..SAMPLES {
        let sample = Sample {
            misc: 2, // PERF_RECORD_MISC_USER
            identifier: Some(EVENT_ID),
            ip: Some(0x40_1000 + (i % 16) * 0x40),
            tid: Some(PidTid { pid, tid: pid }),
            time: Some(start + 1000 * (i + 1)),
            period: Some(10_000),
            ..Sample::default()
        };
        let n = sample.encode(&layout, &mut buf)?;
        // A full ring drops and counts; the host sees PERF_RECORD_LOST later.
        let _ = producer.output(&buf[..n], &EventIdentity::ANONYMOUS);
        if i % 200 == 199 {
            std::thread::sleep(Duration::from_millis(2));
        }
    }
    std::thread::sleep(Duration::from_millis(50));
    // Hostile: junk where the host reads next, published as if it were records (the host sees
    // record-shaped garbage), then heads that make no sense at all.
    let data_head = offset_of!(MmapPage, data_head);
    for round in 0..20u64 {
        let junk: Vec<u8> = (0..512u64).map(|i| (i.wrapping_mul(2654435761).wrapping_add(round) >> 7) as u8).collect();
        let tail = mapping.position(Position::DataTail).load(perfring::fences::LOCAL);
        mem.scribble(PAGE + tail % DATA, &junk[..(DATA - tail % DATA).min(512)]);
        let head =
            if round % 2 == 0 { tail.wrapping_add(512) as u64 } else { round.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 7 };
        mem.scribble(data_head, &head.to_ne_bytes());
        std::thread::sleep(Duration::from_millis(3));
    }
    Ok(())
}

/// What the host kept and survived.
#[derive(Debug, Default)]
struct Tally {
    samples: u64,
    others: u64,
    lost: u64,
    read_errors: u64,
    rejected: u64,
}

/// The host: ring, guest, untrusted reads, perf.data.
fn host(out: &str) -> Result<(), Error> {
    let mut mem = SharedMemory::create(PAGE + DATA)?;
    mem.layout(PAGE)?;
    let mut guest = Command::new(std::env::current_exe()?).arg("guest").arg(mem.raw_fd().to_string()).spawn()?;

    let mapping = mem.mapping()?;
    let mut consumer = Consumer::untrusted(&mapping)?;
    let mut set = EventSet::new([EventLayout::EMPTY; 1], [IdEntry::EMPTY; 1]);
    let event = set.add_event(&attr(), Endian::NATIVE)?;
    set.add_id(event, EVENT_ID)?;

    let mut scratch = Scratch::new();
    let mut kept: Vec<Vec<u8>> = Vec::new();
    let mut tally = Tally::default();
    let deadline = Instant::now() + Duration::from_secs(30);
    let mut exited = false;
    // Bounded: the guest exits (or the deadline passes), then one last drain.
    loop {
        let result = consumer.for_each(&mut scratch, |r| {
            // Attribute and decode the copy before keeping it: a record-shaped piece of garbage
            // must not reach the file.
            let rec = set.attribute(r);
            let ok = rec.event() == Ok(event) || r.header.type_ == types::LOST;
            match (ok, rec.decode()) {
                (true, Ok(Record::Sample(_))) => tally.samples += 1,
                (true, Ok(Record::Lost(l))) => tally.lost += l.lost,
                (true, Ok(Record::Comm(_))) => tally.others += 1,
                _ => {
                    tally.rejected += 1;
                    return;
                }
            }
            kept.push(r.bytes.to_vec());
        });
        if let Err(e) = result {
            tally.read_errors += 1;
            if tally.read_errors <= 3 {
                println!("host: hostile ring: {e} — resynchronising");
            }
            consumer.skip_to_head();
        }
        if exited || Instant::now() > deadline {
            break;
        }
        exited = guest.try_wait()?.is_some();
        std::thread::sleep(Duration::from_millis(1));
    }
    if !exited {
        guest.kill()?;
    }
    guest.wait()?;
    // The guest may have left its last nonsense head: the page says what it says, we say what
    // we read.
    let head = mapping.position(Position::DataHead).load(perfring::fences::LOCAL);
    println!(
        "host: kept {} samples and {} other records; {} lost (reported by the guest's ring); survived {} hostile reads; rejected {} records; final head {head:#x}",
        tally.samples, tally.others, tally.lost, tally.read_errors, tally.rejected
    );

    // Streamed: the header first, each record as it comes, attrs and features at `finish`.
    let file = std::io::BufWriter::new(std::fs::File::create(out)?);
    let mut writer =
        perfring_data::Writer::new(file, Endian::NATIVE, vec![FileAttr { attr: attr(), ids: vec![EVENT_ID] }])?;
    for r in &kept {
        writer.write_raw(r, &[])?;
    }
    writer.finish()?;
    println!("host: wrote {out} (try: perf report -i {out} --stdio; perf script -i {out})");
    if tally.read_errors == 0 {
        return Err("the hostile guest went unnoticed".into());
    }
    Ok(())
}

// The guest's `ReadError` is what the host prints; name it so the docs link.
#[allow(dead_code)]
type HostReadError = ReadError;
