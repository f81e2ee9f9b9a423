//! perf.data from a [`Session`] (feature `perf-data`): what `perf record` writes around the
//! records, done once — the events' attrs with every id, COMM and MMAP2 of what already runs
//! (from /proc), the tracing data of tracepoint events, and the feature sections `perf report
//! --header-only` lists (the machine's, EVENT_DESC, SAMPLE_TIME, and BUILD_ID of every file a
//! sample hit, so `perf buildid-list` and `perf archive` work). File mode or pipe mode
//! (`perf record -o -`; there the features go out first as HEADER_FEATURE records and the
//! tracing data as a HEADER_TRACING_DATA record, as perf writes them).
//!
//! ```
//! # fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use perfring::record::sample_type as st;
//! use perfring_linux::perf_data::PerfData;
//! use perfring_linux::{attr::software, EventAttr, Session};
//! let path = std::env::temp_dir().join(format!("perf-data-doc-{}.data", std::process::id()));
//! let out = PerfData::create_file(&path)?; // before the session: a bad path stops here
//! let attr = EventAttr::software(software::PAGE_FAULTS).sample_period(1).sample_type(st::IP | st::TID | st::TIME);
//! let mut session = Session::command(["true"]).event(attr.comm(true).mmap(true).mmap2(true)).open()?;
//! let mut perf_data = PerfData::new(out, &session, &["page-faults".to_string()])?;
//! session.start()?;
//! while !session.wait(Some(std::time::Duration::from_millis(50)))? {
//!     perf_data.drain(&mut session)?;
//! }
//! perf_data.drain(&mut session)?;
//! perf_data.finish()?; // perf report -i PATH reads it
//! # std::fs::remove_file(&path)?;
//! # Ok(()) }
//! # // Refused here (not permitted, no such event): a visible skip, not a failure.
//! # fn main() { perfring_test_support::doc_example!(example()) }
//! ```

mod build_id;
mod procfs;
mod system;
mod tracing;

use std::collections::BTreeMap;
use std::fmt;
use std::fs::File;
use std::io::{BufWriter, Seek, Write};
use std::path::{Path, PathBuf};

use perfring::record::{types, CpuMode, Endian, Record};
use perfring_data::features::{self as feature, EventDesc};
use perfring_data::{Feature, FileAttr, Writer};

pub use build_id::{build_id_of_file, kernel_build_id, Dsos, KERNEL_DSO};
pub use procfs::all_pids;
pub use system::system_features;
pub use tracing::{tracefs_root, tracepoint_name, tracing_data};

use crate::attr::event_type;
use crate::{Session, SessionRecord};

/// What went wrong writing perf.data, naming the file or the input.
#[derive(Debug)]
#[non_exhaustive]
pub enum PerfDataError {
    /// The perf.data encoding or the output (an I/O error there carries its file offset).
    Data(perfring_data::Error),
    /// The session.
    Linux(crate::Error),
    /// A file could not be created or read.
    Io {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        error: std::io::Error,
    },
    /// Tracepoint events need their formats from tracefs, which is not mounted.
    TracefsNotMounted,
    /// No tracepoint in tracefs has this id.
    NoSuchTracepoint {
        /// `attr.config`.
        config: u64,
    },
}

impl fmt::Display for PerfDataError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PerfDataError::Data(e) => write!(f, "{e}"),
            PerfDataError::Linux(e) => write!(f, "{e}"),
            PerfDataError::Io { what, path, error } => write!(f, "{what} {}: {error}", path.display()),
            PerfDataError::TracefsNotMounted => write!(
                f,
                "tracepoint events need tracefs for their formats (perf script prints fields from them); mount it: \
                 mount -t tracefs nodev /sys/kernel/tracing"
            ),
            PerfDataError::NoSuchTracepoint { config } => write!(f, "no tracepoint in tracefs has id {config}"),
        }
    }
}

impl std::error::Error for PerfDataError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            PerfDataError::Data(e) => Some(e),
            PerfDataError::Linux(e) => Some(e),
            PerfDataError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl From<perfring_data::Error> for PerfDataError {
    fn from(e: perfring_data::Error) -> Self {
        PerfDataError::Data(e)
    }
}

impl From<crate::Error> for PerfDataError {
    fn from(e: crate::Error) -> Self {
        PerfDataError::Linux(e)
    }
}

/// The name perf gives an event (`cpu-clock`, `page-faults`, `sched:sched_switch`, …), or
/// `type:config` for one it has no name for.
pub fn event_name(attr: &perfring::record::Attr) -> String {
    const SOFTWARE: [&str; 12] = [
        "cpu-clock",
        "task-clock",
        "page-faults",
        "context-switches",
        "cpu-migrations",
        "minor-faults",
        "major-faults",
        "alignment-faults",
        "emulation-faults",
        "dummy",
        "bpf-output",
        "cgroup-switches",
    ];
    const HARDWARE: [&str; 10] = [
        "cycles",
        "instructions",
        "cache-references",
        "cache-misses",
        "branches",
        "branch-misses",
        "bus-cycles",
        "stalled-cycles-frontend",
        "stalled-cycles-backend",
        "ref-cycles",
    ];
    let known = match attr.type_ {
        event_type::SOFTWARE => SOFTWARE.get(attr.config as usize).map(|s| s.to_string()),
        event_type::HARDWARE => HARDWARE.get(attr.config as usize).map(|s| s.to_string()),
        event_type::TRACEPOINT => tracepoint_name(attr.config),
        _ => None,
    };
    known.unwrap_or_else(|| format!("{}:{}", attr.type_, attr.config))
}

/// The events of `session` as perf.data attrs: each attr as the kernel took it, with every id
/// it was given (one per CPU and task it was opened on).
pub fn file_attrs(session: &Session) -> Vec<FileAttr> {
    let set = session.event_set();
    (0..set.len())
        .map(|i| {
            let mut ids: Vec<u64> = set.ids().filter(|e| e.event() == i).map(|e| e.id()).collect();
            ids.sort_unstable();
            FileAttr { attr: *set.events()[i].attr(), ids }
        })
        .collect()
}

/// A perf.data file (or pipe-mode stream) being written from a [`Session`]: see the
/// [module docs](self).
#[derive(Debug)]
pub struct PerfData<W: Write> {
    writer: Writer<W>,
    pipe: bool,
    /// `Writer::finish` (file mode, which needs `Seek`) or `Writer::finish_pipe`.
    end: fn(Writer<W>) -> Result<W, perfring_data::Error>,
    dsos: Dsos,
    times: Option<(u64, u64)>,
    samples: Vec<u64>,
    records: BTreeMap<u32, u64>,
    bytes: u64,
}

impl PerfData<BufWriter<File>> {
    /// Create (truncate) the output file, buffered: the step to take before opening a session,
    /// so that a path that cannot be written stops the recording before anything runs.
    pub fn create_file(path: impl AsRef<Path>) -> Result<BufWriter<File>, PerfDataError> {
        let path = path.as_ref();
        File::create(path).map(BufWriter::new).map_err(|error| PerfDataError::Io {
            what: "creating the output",
            path: path.into(),
            error,
        })
    }
}

impl<W: Write + Seek> PerfData<W> {
    /// A file-mode perf.data at `out` for `session`'s events, called `names` (perf's names;
    /// [`event_name`] for those missing). The features are written by
    /// [`finish`](PerfData::finish).
    pub fn new(out: W, session: &Session, names: &[String]) -> Result<PerfData<W>, PerfDataError> {
        let writer = Writer::new(out, Endian::NATIVE, file_attrs(session))?;
        PerfData::start(writer, false, Writer::finish, names)
    }
}

impl<W: Write> PerfData<W> {
    /// A pipe-mode stream (`perf record -o -`) at `out`: the attrs, the features and the
    /// tracing data go out now, the records as they are drained.
    pub fn pipe(out: W, session: &Session, names: &[String]) -> Result<PerfData<W>, PerfDataError> {
        let writer = Writer::pipe(out, Endian::NATIVE, file_attrs(session))?;
        PerfData::start(writer, true, Writer::finish_pipe, names)
    }

    fn start(
        writer: Writer<W>,
        pipe: bool,
        end: fn(Writer<W>) -> Result<W, perfring_data::Error>,
        names: &[String],
    ) -> Result<PerfData<W>, PerfDataError> {
        let n = writer.attrs().len();
        let mut d = PerfData {
            writer,
            pipe,
            end,
            dsos: Dsos::default(),
            times: None,
            samples: vec![0; n],
            records: BTreeMap::new(),
            bytes: 0,
        };
        let cmdline: Vec<String> = std::env::args().collect();
        for (bit, value) in system_features(Endian::NATIVE, &cmdline) {
            d.writer.set_feature(bit, &value)?;
        }
        let descs: Vec<EventDesc> = d
            .writer
            .attrs()
            .iter()
            .enumerate()
            .map(|(i, a)| EventDesc {
                attr: a.attr,
                name: names.get(i).cloned().unwrap_or_else(|| event_name(&a.attr)),
                ids: a.ids.clone(),
            })
            .collect();
        d.writer.set_feature(feature::EVENT_DESC, &Feature::EventDesc(descs))?;
        let kernel = d.writer.attrs().iter().any(|a| a.attr.flags & perfring::record::attr_flags::EXCLUDE_KERNEL == 0);
        if kernel {
            procfs::synthesize_kernel(&mut d.writer)?;
        }
        let tracepoints: Vec<u64> =
            d.writer.attrs().iter().filter(|a| a.attr.type_ == event_type::TRACEPOINT).map(|a| a.attr.config).collect();
        if !tracepoints.is_empty() {
            d.writer.set_feature_bytes(feature::TRACING_DATA, tracing_data(&tracepoints)?)?;
        }
        // An output that cannot be written fails now, before the session starts anything.
        d.writer.flush()?;
        Ok(d)
    }

    /// COMM and MMAP2 records of process `pid`'s threads and executable mappings, from /proc
    /// (for what ran before the session: a process followed with `-p`, every process with
    /// `-a`). A process that exits meanwhile is skipped.
    pub fn synthesize(&mut self, pid: i32) -> Result<(), PerfDataError> {
        let dsos = &mut self.dsos;
        procfs::synthesize(&mut self.writer, pid, &mut |pid, start, len, path| dsos.map(pid, start, len, path))
    }

    /// [`synthesize`](PerfData::synthesize) every process.
    pub fn synthesize_all(&mut self) -> Result<(), PerfDataError> {
        all_pids().into_iter().try_for_each(|pid| self.synthesize(pid))
    }

    /// Write every record now in the session's rings, then a FINISHED_ROUND; returns how many.
    pub fn drain(&mut self, session: &mut Session) -> Result<usize, PerfDataError> {
        self.drain_with(session, |_| {})
    }

    /// [`drain`](PerfData::drain), handing each record to `f` as well.
    pub fn drain_with(
        &mut self,
        session: &mut Session,
        mut f: impl FnMut(&SessionRecord<'_>),
    ) -> Result<usize, PerfDataError> {
        let mut failed = None;
        let n = session.drain(|r| {
            if failed.is_none() {
                self.note(r);
                if let Err(e) = self.writer.write_raw(r.bytes, &[]) {
                    failed = Some(e);
                }
                f(r);
            }
        })?;
        if let Some(e) = failed {
            return Err(e.into());
        }
        self.writer.finished_round()?;
        Ok(n)
    }

    /// What a record tells the features: sample times, the files samples hit.
    fn note(&mut self, r: &SessionRecord<'_>) {
        *self.records.entry(r.header.type_).or_default() += 1;
        self.bytes += r.bytes.len() as u64;
        match r.header.type_ {
            types::SAMPLE => {
                if let Ok(i) = r.event() {
                    self.samples[i] += 1;
                }
                let Some(s) = r.sample() else { return };
                if let Some(t) = s.time() {
                    let (a, b) = self.times.unwrap_or((t, t));
                    self.times = Some((a.min(t), b.max(t)));
                }
                match CpuMode::from_misc(s.misc()) {
                    CpuMode::Kernel => self.dsos.hit_kernel(),
                    CpuMode::User => {
                        if let (Some(pid), Some(ip)) = (s.pid(), s.ip()) {
                            self.dsos.hit(pid, ip);
                        }
                    }
                    _ => {}
                }
            }
            types::MMAP | types::MMAP2 | types::FORK => match r.decode() {
                Some(Ok(Record::Mmap(m))) => self.dsos.map(m.pid, m.addr, m.len, &m.filename.to_string_lossy()),
                Some(Ok(Record::Mmap2(m))) => self.dsos.map(m.pid, m.addr, m.len, &m.filename.to_string_lossy()),
                Some(Ok(Record::Fork(t))) => self.dsos.fork(t.ppid, t.pid),
                _ => {}
            },
            _ => {}
        }
    }

    /// Samples written so far, by event.
    pub fn samples(&self) -> &[u64] {
        &self.samples
    }

    /// Records written so far, by `PERF_RECORD_*` type.
    pub fn records(&self) -> &BTreeMap<u32, u64> {
        &self.records
    }

    /// Bytes of records written so far.
    pub fn bytes(&self) -> u64 {
        self.bytes
    }

    /// The files samples hit so far.
    pub fn dsos(&self) -> &Dsos {
        &self.dsos
    }

    /// The writer, for records of the caller's own.
    pub fn writer(&mut self) -> &mut Writer<W> {
        &mut self.writer
    }

    /// The BUILD_ID feature's records: one per file a sample hit that has a build id.
    fn build_ids(&self) -> Vec<Vec<u8>> {
        self.dsos
            .hits()
            .filter_map(|(path, kernel)| {
                let id = if kernel { kernel_build_id() } else { build_id_of_file(Path::new(path)) }?;
                Some(build_id_record(&id, path, kernel))
            })
            .collect()
    }

    /// Write the features known only at the end (SAMPLE_TIME and BUILD_ID, file mode) and
    /// finish the file or stream; returns the output.
    pub fn finish(mut self) -> Result<W, PerfDataError> {
        if self.pipe {
            return Ok((self.end)(self.writer)?);
        }
        if let Some((first, last)) = self.times {
            self.writer.set_feature(feature::SAMPLE_TIME, &Feature::SampleTime { first, last })?;
        }
        let ids = self.build_ids();
        if !ids.is_empty() {
            self.writer.set_feature(feature::BUILD_ID, &Feature::BuildIds(ids))?;
        }
        Ok((self.end)(self.writer)?)
    }
}

/// One build-id entry as perf's `write_buildid` writes it: `{header (type 0, misc: the CPU
/// mode | PERF_RECORD_MISC_BUILD_ID_SIZE, size); i32 pid (-1: the host); u8 data[20]; u8
/// size; u8 pad[3]; filename NUL-padded to 64}`.
fn build_id_record(id: &[u8], path: &str, kernel: bool) -> Vec<u8> {
    let name_len = (path.len() + 1).next_multiple_of(64);
    let size = 36 + name_len;
    let misc: u16 = if kernel { 1 } else { 2 } | 1 << 15;
    let mut r = Vec::with_capacity(size);
    r.extend_from_slice(&0u32.to_ne_bytes());
    r.extend_from_slice(&misc.to_ne_bytes());
    r.extend_from_slice(&(size as u16).to_ne_bytes());
    r.extend_from_slice(&(-1i32).to_ne_bytes());
    let mut data = [0u8; 24];
    let n = id.len().min(20);
    data[..n].copy_from_slice(&id[..n]);
    data[20] = n as u8;
    r.extend_from_slice(&data);
    r.extend_from_slice(path.as_bytes());
    r.resize(size, 0);
    r
}
