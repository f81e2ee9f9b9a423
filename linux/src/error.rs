//! [`LinuxError`]: what went wrong, in terms of what to change — the one error type of this
//! crate: opening an event, its ioctls and its ring, a session, a command's launch, and (with
//! feature `perf-data`) writing perf.data.

use std::fmt;
use std::io;
use std::path::PathBuf;

use perfring::bpf_ringbuf::RingbufError;
use perfring::consumer::ReadError;
use perfring::memory::LayoutError;
use perfring::record::EventSetError;

/// What went wrong, and what to change. The first variants are `perf_event_open`'s refusals;
/// a [`Session`](crate::Session) says which event and CPU were refused
/// ([`OpenEvent`](LinuxError::OpenEvent)).
#[derive(Debug)]
#[non_exhaustive]
pub enum LinuxError {
    /// EACCES/EPERM: not allowed at this `perf_event_paranoid` level without a capability.
    PermissionDenied {
        /// The errno.
        errno: i32,
        /// `/proc/sys/kernel/perf_event_paranoid`, if readable.
        paranoid: Option<i32>,
        /// What in the request needs the privilege (kernel code, all CPUs, another user's
        /// task, raw tracepoint data), as far as it can be told from the request.
        needs: &'static str,
    },
    /// ENOENT/EOPNOTSUPP/ENODEV: this machine has no such event (no hardware PMU in a VM, a
    /// tracepoint the kernel lacks, a sampling mode the PMU cannot do).
    NotSupported {
        /// The errno.
        errno: i32,
    },
    /// EMFILE: the process has no file descriptors left (one per event per CPU or thread).
    TooManyFiles,
    /// ESRCH: the task to monitor does not exist (or has exited).
    NoSuchTask {
        /// The pid or tid asked for.
        pid: i32,
    },
    /// EINVAL: the kernel rejected the attr or the target; `suspects` lists the fields it
    /// commonly rejects for a request like this one.
    InvalidArgument {
        /// Fields to check.
        suspects: &'static str,
    },
    /// E2BIG: the attr uses fields past the kernel's `perf_event_attr` (`kernel_size` bytes);
    /// clear them or run a newer kernel.
    AttrTooLarge {
        /// The kernel's attr size.
        kernel_size: u32,
    },
    /// EBUSY: an exclusive or pinned event holds the PMU.
    Busy,
    /// A [`Session`](crate::Session)'s event could not be opened on a CPU: `error` says why
    /// (one of the variants above) and what to change.
    OpenEvent {
        /// The event's index (the order of [`SessionBuilder::event`](crate::SessionBuilder::event)).
        event: usize,
        /// The CPU.
        cpu: u32,
        /// Why.
        error: Box<LinuxError>,
    },
    /// A system call failed.
    Io {
        /// What was being done (`"PERF_EVENT_IOC_ENABLE"`, `"mmap of the ring"`, …).
        what: &'static str,
        /// The error.
        error: io::Error,
    },
    /// The ring size is not `2^n` pages (`data_pages`), which the kernel refuses (0, the
    /// control page alone, maps for self-monitoring but carries no records: a
    /// [`Session`](crate::Session) needs at least one data page). Also a BPF ring buffer's
    /// size ([`RingBuffer::create`](crate::RingBuffer::create),
    /// [`UserRingBuffer::create`](crate::UserRingBuffer::create)): the kernel takes a power of
    /// two of pages.
    RingSize {
        /// The data pages asked for.
        data_pages: usize,
    },
    /// The AUX area size is not `2^n` pages (`aux_pages`), which the kernel refuses.
    AuxSize {
        /// The AUX pages asked for.
        aux_pages: usize,
    },
    /// A reader was asked of a ring of another kind (see [`crate::Ring`]: each kind has its
    /// reader).
    RingKind {
        /// The reader asked for.
        reader: &'static str,
        /// The kind of ring that reader reads.
        needs: crate::RingKind,
        /// This ring's kind.
        ring: crate::RingKind,
    },
    /// [`crate::Ring::mapping`] of a read-only (overwrite) ring: perfring's `Mapping` may store
    /// into the control page, which is read-only there. Use [`crate::Ring::read_only`].
    ReadOnlyRing,
    /// [`crate::Ring::consumer`] while another consumer of the same event's ring is alive (from
    /// this [`crate::Ring`] or another mapping of the event): a ring has one consumer, since a
    /// second would free records the first still lends out as views.
    ConsumerTaken,
    /// [`crate::Ring::map`] of an event whose records go to another event's ring
    /// ([`crate::Event::set_output`]): the mapping would be that ring, under another name.
    RingRedirected,
    /// An AUX area was asked of a read-only (overwrite) ring: its layout (`aux_offset`,
    /// `aux_size`) is written into the control page, which must be mapped writable.
    AuxNeedsWritableRing,
    /// The kernel refused to map the AUX area (`mmap` failed with EOPNOTSUPP or EINVAL): this
    /// event's PMU has no AUX area. Only PMUs that trace into a buffer have one (`intel_pt`,
    /// `arm_spe`, `cs_etm`, …); software, tracepoint and counting hardware events do not.
    /// (EINVAL also comes back when an AUX area of another size is still mapped for the same
    /// ring: the kernel allows one AUX layout per ring at a time.)
    AuxNotSupported {
        /// The errno of `mmap`.
        errno: i32,
    },
    /// The mapping does not have the kernel's layout (perfring refused it).
    Layout(LayoutError),
    /// Reading a ring failed, forward (its head moved out of bounds: the kernel's ring,
    /// corrupted) or newest-first (the records before the failure were delivered; see
    /// [`ReadError`] for each reason).
    Read(ReadError),
    /// `read(2)` returned a block that does not match the event's `read_format`.
    BadRead {
        /// Bytes read.
        len: usize,
    },
    /// The kernel refused `PERF_EVENT_IOC_MODIFY_ATTRIBUTES`: it changes breakpoints only
    /// (EOPNOTSUPP or EINVAL for any other event, by kernel version), and only their address,
    /// length, type and `disabled` (EINVAL when another field, or the type, differs from the
    /// open attr).
    ModifyRefused {
        /// The errno of the ioctl.
        errno: i32,
        /// Whether the event is a breakpoint.
        breakpoint: bool,
    },
    /// tracefs is not mounted, so a tracepoint cannot be looked up by name.
    TracefsNotMounted,
    /// The command could not be executed (`execvp` failed: not found, not executable).
    Exec {
        /// `argv[0]`.
        command: String,
        /// The error `execvp` gave.
        error: io::Error,
    },
    /// No tracepoint of that name under tracefs.
    NoSuchTracepoint {
        /// `"group:name"`.
        name: String,
    },
    /// A call that needs a started command or session came before `start()`: a command is held
    /// before `exec` until [`Launch::start`](crate::launch::Launch::start) (or
    /// [`Session::start`](crate::Session::start)), and waiting does not start it.
    NotStarted,
    /// An empty command line: nothing to run (`argv[0]` is the program).
    EmptyCommand,
    /// tracefs (or the tracepoint's `id` file in it) is there but not readable by this user
    /// (tracefs is mounted mode 0700 by default, `id` files 0440): a tracepoint's id cannot be
    /// read.
    TracefsPermissionDenied {
        /// The path that could not be read.
        path: String,
    },
    /// A tracepoint name that is not `"subsystem:event"`, each part 1 to 255 letters, digits,
    /// `_`, `-` or `.`, the first a letter, a digit or `_` (no `/`, no `..`, no NUL: the parts
    /// are looked up as directories of tracefs).
    BadTracepointName {
        /// The name as given.
        name: String,
        /// The part at fault: `"subsystem"`, `"event"`, or `"separator"` (no `:`).
        part: &'static str,
    },
    /// A session was opened without events: give at least one
    /// ([`SessionBuilder::event`](crate::SessionBuilder::event)).
    NoEvents,
    /// The session's events cannot share rings: the event set refused one (events that cannot
    /// be told apart: give each `PERF_SAMPLE_IDENTIFIER` and the same `sample_id_all`), or an id
    /// the kernel gave twice.
    EventSet(EventSetError),
    /// [`Session::process`](crate::Session::process) with a pid that is not positive (0 and
    /// negative numbers name no single process).
    InvalidPid {
        /// The pid given.
        pid: i32,
    },
    /// [`Session::process`](crate::Session::process) of a pid no process has
    /// (`/proc/PID/task` is absent): it never existed or has exited. No event was opened.
    NoSuchProcess {
        /// The pid given.
        pid: i32,
    },
    /// [`SessionBuilder::group_member`](crate::SessionBuilder::group_member) named a leader
    /// that is not an earlier event, or is itself a member.
    BadGroup {
        /// The member's index.
        member: usize,
        /// The leader it named.
        leader: usize,
    },
    /// [`Scope::Cpus`](crate::Scope::Cpus) names no online CPU.
    NoSuchCpu {
        /// The CPUs asked for.
        cpus: Vec<u32>,
    },
    /// [`Cgroup::open`](crate::Cgroup::open): no cgroup of that name. `path` is where it was
    /// looked for (`None`: no hierarchy to look in, neither a cgroup v1 mount with the
    /// `perf_event` controller nor a cgroup2 mount in /proc/self/mounts).
    NoSuchCgroup {
        /// The name given.
        name: String,
        /// The directory it names.
        path: Option<PathBuf>,
        /// Why it could not be opened.
        error: io::Error,
    },
    /// [`SessionBuilder::cgroup`](crate::SessionBuilder::cgroup) where the kernel cannot take
    /// it: the session is not CPU-wide (the kernel filters by cgroup only events opened per CPU
    /// for every task: use [`Scope::AllCpus`](crate::Scope::AllCpus) or
    /// [`Scope::Cpus`](crate::Scope::Cpus)), or the event index is past the builder's events
    /// (give an index of [`SessionBuilder::event`](crate::SessionBuilder::event)).
    CgroupMisplaced {
        /// The cgroup's name.
        cgroup: String,
        /// The event it was given to.
        event: usize,
        /// How many events the builder has (`event >= events`: no such event).
        events: usize,
        /// Whether the session's scope is CPU-wide (`false`: the cgroup cannot filter it).
        cpu_wide: bool,
    },
    /// [`PerfEventArrayBuilder::map`](crate::PerfEventArrayBuilder::map) was given a map that is
    /// not a BPF_MAP_TYPE_PERF_EVENT_ARRAY (type 4, 4-byte keys and values) with an entry for
    /// every CPU read: give the map the program writes to, with `max_entries` at least the
    /// highest CPU number plus one (libbpf and aya size it by the possible CPUs).
    NotAPerfEventArray {
        /// The map's type.
        map_type: u32,
        /// Its `max_entries`.
        max_entries: u32,
        /// The entries the CPUs need.
        needs_entries: u32,
    },
    /// A perf-event-array ring held what the kernel never writes (its head out of bounds, a
    /// record size of 0, not a multiple of 8, or past what was published: see [`ReadError`]).
    /// The records before it were delivered; the reader skipped `skipped` bytes, from it to the
    /// head, so the next read goes on. Something other than the kernel writes into the ring's memory.
    BadBpfRing {
        /// The ring's CPU.
        cpu: u32,
        /// What was wrong.
        error: ReadError,
        /// Bytes skipped from it on.
        skipped: usize,
    },
    /// A record of a perf-event-array ring too short for its own contents: a SAMPLE whose RAW
    /// size runs past the record, a LOST record without its count. The records before it were
    /// delivered; the reader skipped `skipped` bytes (it and what follows it, to the head) so the
    /// next read goes on. The kernel never writes one: something else writes into the ring.
    BadBpfRecord {
        /// The ring's CPU.
        cpu: u32,
        /// `header.type` (9 SAMPLE, 2 LOST).
        record_type: u32,
        /// Bytes the record needs for its fields.
        needs: u64,
        /// `header.size`.
        size: u16,
        /// Bytes skipped from it on (0 where [`BpfRecord::parse`](crate::BpfRecord::parse) said it).
        skipped: usize,
    },
    /// [`RingBuffer`](crate::RingBuffer) or [`UserRingBuffer`](crate::UserRingBuffer) was given
    /// a map of another type: a `RingBuffer` reads a BPF_MAP_TYPE_RINGBUF (27), a
    /// `UserRingBuffer` writes a BPF_MAP_TYPE_USER_RINGBUF (31). Give the map the program
    /// outputs to (`bpf_ringbuf_output`, `bpf_ringbuf_reserve`) or drains
    /// (`bpf_user_ringbuf_drain`).
    NotARingbuf {
        /// The map's type.
        map_type: u32,
        /// The type needed.
        expected: u32,
    },
    /// This process already reads (or writes) this ring buffer map, through another
    /// descriptor: its `consumer_pos` (a user ring's `producer_pos`) has one writer. Add the
    /// ring once, or drop the other reader first.
    RingbufTaken {
        /// The map's id.
        map_id: u32,
    },
    /// A BPF ring buffer held what the kernel never writes (a `producer_pos` that is
    /// misaligned, went back or ran more than the ring ahead, a header whose length passes it,
    /// a header `pg_off` the kernel would not write: see [`RingbufError`]). The records
    /// before it were delivered; the reader skipped `skipped` bytes, to `producer_pos`, so the
    /// next read goes on. Something other than the kernel writes the ring's pages.
    BadRingbuf {
        /// The ring's index in the [`RingBuffer`](crate::RingBuffer) (the order of `add`).
        ring: usize,
        /// What was wrong.
        error: RingbufError,
        /// Bytes skipped from it on.
        skipped: usize,
    },
    /// A [`UserRingBuffer`](crate::UserRingBuffer) reservation failed: the ring is full (the
    /// program has not drained it yet: wait with
    /// [`reserve_wait`](crate::UserRingBuffer::reserve_wait), drain more often, or make the ring
    /// larger), or the sample is larger than the ring can ever hold.
    Reserve {
        /// Why, with the sizes.
        error: RingbufError,
    },
    /// [`RawSample::contiguous`](crate::RawSample::contiguous) was given a buffer shorter than
    /// the payload that wraps: pass one of at least `needed` bytes (65,520 hold any).
    BufferTooSmall {
        /// The payload's length.
        needed: usize,
        /// The buffer's.
        len: usize,
    },
    /// Writing perf.data: the encoding, or the output (an I/O error there carries its file
    /// offset).
    #[cfg(feature = "perf-data")]
    PerfData(perfring_data::PerfDataError),
    /// Writing perf.data: a file could not be created or read.
    #[cfg(feature = "perf-data")]
    File {
        /// What was being done.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// The error.
        error: io::Error,
    },
    /// Writing perf.data: no tracepoint in tracefs has this id (its format, which perf script
    /// prints fields from, cannot be written).
    #[cfg(feature = "perf-data")]
    NoSuchTracepointId {
        /// `attr.config`.
        config: u64,
    },
}

impl fmt::Display for LinuxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinuxError::PermissionDenied { errno, paranoid, needs } => {
                write!(f, "perf_event_open: permission denied (errno {errno}); ")?;
                match paranoid {
                    Some(p) => write!(f, "perf_event_paranoid is {p}")?,
                    None => write!(f, "perf_event_paranoid unreadable")?,
                }
                write!(
                    f,
                    " and the request needs {needs}: run with CAP_PERFMON (or CAP_SYS_ADMIN), or lower \
                     /proc/sys/kernel/perf_event_paranoid (-1 allows all, 1 allows user and kernel \
                     profiling of your own tasks, 2 only user space of your own tasks)"
                )
            }
            LinuxError::NotSupported { errno } => write!(
                f,
                "perf_event_open: this machine has no such event (errno {errno}): no hardware PMU (a VM?), a \
                 tracepoint the kernel lacks, or a mode the PMU cannot sample in; try a software event"
            ),
            LinuxError::TooManyFiles => {
                write!(f, "perf_event_open: out of file descriptors (EMFILE): raise `ulimit -n` or open fewer events")
            }
            LinuxError::NoSuchTask { pid } => write!(f, "perf_event_open: no task {pid} (ESRCH)"),
            LinuxError::InvalidArgument { suspects } => {
                write!(f, "perf_event_open: the kernel rejected the request (EINVAL); check {suspects}")
            }
            LinuxError::AttrTooLarge { kernel_size } => write!(
                f,
                "perf_event_open: the attr uses fields this kernel does not know (its attr is {kernel_size} bytes); \
                 clear the newer fields"
            ),
            LinuxError::Busy => write!(f, "perf_event_open: the PMU is held by an exclusive or pinned event (EBUSY)"),
            LinuxError::OpenEvent { event, cpu, error } => write!(f, "event {event} on CPU {cpu}: {error}"),
            e @ (LinuxError::NoEvents
            | LinuxError::EventSet(_)
            | LinuxError::InvalidPid { .. }
            | LinuxError::NoSuchProcess { .. }
            | LinuxError::BadGroup { .. }
            | LinuxError::NoSuchCpu { .. }
            | LinuxError::NoSuchCgroup { .. }
            | LinuxError::CgroupMisplaced { .. }) => e.fmt_session(f),
            #[cfg(feature = "perf-data")]
            e @ (LinuxError::PerfData(_) | LinuxError::File { .. } | LinuxError::NoSuchTracepointId { .. }) => {
                e.fmt_perf_data(f)
            }
            e @ (LinuxError::NotAPerfEventArray { .. }
            | LinuxError::BadBpfRing { .. }
            | LinuxError::BadBpfRecord { .. }
            | LinuxError::BufferTooSmall { .. }) => e.fmt_bpf(f),
            e @ (LinuxError::NotARingbuf { .. }
            | LinuxError::RingbufTaken { .. }
            | LinuxError::BadRingbuf { .. }
            | LinuxError::Reserve { .. }) => e.fmt_ringbuf(f),
            e => e.fmt_after_open(f),
        }
    }
}

impl LinuxError {
    /// The errno the kernel returned, where the failure is a refused system call (through
    /// [`OpenEvent`](LinuxError::OpenEvent) to its cause): what a caller compares with
    /// `EACCES`, `ENOENT`, `EOPNOTSUPP`… to tell "not permitted or not available here" from a
    /// mistake. `None` for failures perfring-linux found itself.
    pub fn errno(&self) -> Option<i32> {
        match self {
            LinuxError::PermissionDenied { errno, .. }
            | LinuxError::NotSupported { errno }
            | LinuxError::AuxNotSupported { errno }
            | LinuxError::ModifyRefused { errno, .. } => Some(*errno),
            LinuxError::Io { error, .. } => error.raw_os_error(),
            LinuxError::OpenEvent { error, .. } => error.errno(),
            _ => None,
        }
    }

    /// [`Display`](fmt::Display) of the failures after opening: ioctls, rings, launch, tracefs.
    fn fmt_after_open(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinuxError::Io { what, error } => write!(f, "{what}: {error}"),
            LinuxError::RingSize { data_pages } => {
                write!(
                    f,
                    "a ring needs a power of two of data pages (1, 2, 4, …; at least one data page to carry \
                     records), not {data_pages}"
                )
            }
            LinuxError::AuxSize { aux_pages } => {
                write!(f, "an AUX area needs a power of two of pages (1, 2, 4, …), not {aux_pages}")
            }
            LinuxError::RingKind { reader, needs, ring } => {
                write!(f, "{reader} reads a {needs} ring; this ring is {ring}: {}", reader_of(*ring))
            }
            LinuxError::ReadOnlyRing => f.write_str(
                "Ring::mapping needs a writable ring (a Mapping may store into the control page, which is \
                 read-only here): use Ring::read_only, or Ring::map(event, pages, true)",
            ),
            LinuxError::ConsumerTaken => f.write_str(
                "this event's ring already has a consumer (Ring::consumer): use that one, or drop it before \
                 asking for another",
            ),
            LinuxError::RingRedirected => f.write_str(
                "this event's records go to another event's ring (Event::set_output): map and read that \
                 event's ring, or set_output(None) first",
            ),
            LinuxError::AuxNeedsWritableRing => write!(
                f,
                "an AUX area needs a writable ring (Ring::map(event, pages, true)): its offset and size are \
                 written into the control page"
            ),
            LinuxError::AuxNotSupported { errno } => {
                write!(
                    f,
                    "the kernel refused the AUX area (mmap errno {errno}): this event's PMU has no AUX area; open an \
                     event of a tracing PMU (intel_pt, arm_spe, cs_etm, …) to use one"
                )?;
                if *errno == libc::EINVAL {
                    write!(f, " (or an AUX area of another size is still mapped for this ring)")?;
                }
                Ok(())
            }
            LinuxError::Layout(e) => write!(f, "the perf mapping has no valid layout: {e}"),
            LinuxError::Read(e) => write!(f, "reading the ring: {e}"),
            LinuxError::BadRead { len } => write!(f, "read(2) returned {len} bytes, not the event's read_format block"),
            LinuxError::ModifyRefused { errno, breakpoint: false } => write!(
                f,
                "PERF_EVENT_IOC_MODIFY_ATTRIBUTES refused (errno {errno}): the kernel modifies breakpoint events \
                 only; close this event and open one with the new attr"
            ),
            LinuxError::ModifyRefused { errno, breakpoint: true } => write!(
                f,
                "PERF_EVENT_IOC_MODIFY_ATTRIBUTES refused (errno {errno}): only bp_addr, bp_len, bp_type and disabled \
                 may differ from the attr the breakpoint was opened with"
            ),
            LinuxError::TracefsNotMounted => write!(
                f,
                "tracefs is not mounted: mount it (as root: `mount -t tracefs nodev /sys/kernel/tracing`) to open \
                 tracepoints by name"
            ),
            LinuxError::Exec { command, error } => write!(f, "cannot execute {command}: {error}"),
            LinuxError::NoSuchTracepoint { name } => {
                write!(f, "no tracepoint {name} (see /sys/kernel/tracing/events/ for the available ones)")
            }
            LinuxError::NotStarted => write!(
                f,
                "not started: call start() first (Session::start, Session::run or Launch::start); until then the \
                 command is held before exec and the events are disabled"
            ),
            LinuxError::EmptyCommand => write!(f, "the command is empty: give at least argv[0], the program to run"),
            LinuxError::TracefsPermissionDenied { path } => write!(
                f,
                "permission denied reading {path}: tracepoint ids are read from tracefs; run as root, or make \
                 tracefs readable to this user (e.g. `mount -o remount,mode=755 /sys/kernel/tracing` and \
                 `chmod a+r` of the events' id files)"
            ),
            LinuxError::BadTracepointName { name, part: "separator" } => {
                write!(f, "tracepoint name {name:?} has no ':': write \"subsystem:event\", e.g. \"sched:sched_switch\"")
            }
            LinuxError::BadTracepointName { name, part } => write!(
                f,
                "tracepoint name {name:?}: the {part} must be 1 to 255 letters, digits, '_', '-' or '.', the first a \
                 letter, a digit or '_' (write \"subsystem:event\", e.g. \"sched:sched_switch\")"
            ),
            // (`fmt` sends the other variants elsewhere.)
            _ => Ok(()),
        }
    }

    /// [`Display`](fmt::Display) of the [`PerfEventArray`](crate::PerfEventArray)'s failures.
    fn fmt_bpf(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinuxError::NotAPerfEventArray { map_type, max_entries, needs_entries } => write!(
                f,
                "the map given is not a perf event array for these CPUs (type {map_type}, max_entries \
                 {max_entries}; needs type 4, BPF_MAP_TYPE_PERF_EVENT_ARRAY, with 4-byte keys and values and \
                 at least {needs_entries} entries): give the map the program writes to"
            ),
            LinuxError::BadBpfRing { cpu, error, skipped } => write!(
                f,
                "the perf-event-array ring of CPU {cpu} holds what the kernel never writes ({error}); {skipped} \
                 bytes skipped to its head: something else writes into the ring's memory"
            ),
            LinuxError::BadBpfRecord { cpu, record_type, needs, size, skipped } => write!(
                f,
                "a record of type {record_type} in the perf-event-array ring of CPU {cpu} is {size} bytes but its \
                 fields need {needs}; {skipped} bytes skipped to the ring's head: something else writes into the \
                 ring's memory"
            ),
            LinuxError::BufferTooSmall { needed, len } => write!(
                f,
                "the payload wraps the ring's end and needs a buffer of {needed} bytes to be copied into one \
                 slice, not {len}: pass a larger one (65,520 bytes hold any), or read RawSample::parts"
            ),
            _ => Ok(()),
        }
    }

    /// [`Display`](fmt::Display) of the BPF ring buffers' failures.
    fn fmt_ringbuf(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinuxError::NotARingbuf { map_type, expected } => write!(
                f,
                "the map given is of type {map_type}, not {expected} ({}): give the map the program {}",
                if *expected == 27 { "BPF_MAP_TYPE_RINGBUF" } else { "BPF_MAP_TYPE_USER_RINGBUF" },
                if *expected == 27 { "outputs to (bpf_ringbuf_output, bpf_ringbuf_reserve)" } else { "drains" }
            ),
            LinuxError::RingbufTaken { map_id } => write!(
                f,
                "BPF map {map_id} is already read or written by this process (through another descriptor): add                  it once, or drop the other reader first"
            ),
            LinuxError::BadRingbuf { ring, error, skipped } => write!(
                f,
                "BPF ring buffer {ring} holds what the kernel never writes ({error}); {skipped} bytes skipped to                  producer_pos: something else writes the ring's pages"
            ),
            LinuxError::Reserve { error } => write!(f, "user ring buffer: {error}"),
            _ => Ok(()),
        }
    }

    /// [`Display`](fmt::Display) of a session's refusals.
    fn fmt_session(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinuxError::NoEvents => write!(f, "a session needs at least one event: add one with SessionBuilder::event"),
            LinuxError::EventSet(e) => write!(
                f,
                "the session's events: {e} (events sharing a ring need PERF_SAMPLE_IDENTIFIER and the same \
                 sample_id_all)"
            ),
            LinuxError::InvalidPid { pid } => {
                write!(f, "Session::process({pid}): a pid must be positive (for this process, use std::process::id())")
            }
            LinuxError::NoSuchProcess { pid } => {
                write!(f, "Session::process({pid}): no process {pid} (/proc/{pid}/task is absent): check the pid")
            }
            LinuxError::BadGroup { member, leader } => write!(
                f,
                "event {member}: its group leader {leader} must be an earlier event that is no group member itself"
            ),
            LinuxError::NoSuchCpu { cpus } => {
                write!(f, "none of the CPUs {cpus:?} is online (/sys/devices/system/cpu/online)")
            }
            LinuxError::NoSuchCgroup { path: Some(path), error, .. } => write!(
                f,
                "no access to cgroup {} ({error}): give the name of a cgroup under {} (create one with mkdir)",
                path.display(),
                path.parent().unwrap_or(path).display()
            ),
            LinuxError::NoSuchCgroup { name, path: None, .. } => write!(
                f,
                "cgroup {name}: no cgroup hierarchy to find it in (no cgroup v1 mount with the perf_event \
                 controller, no cgroup2 mount in /proc/self/mounts): mount one, e.g. `mount -t cgroup2 none \
                 /sys/fs/cgroup`"
            ),
            LinuxError::CgroupMisplaced { cgroup, event, events, .. } if event >= events => write!(
                f,
                "cgroup {cgroup} was given to event {event}, but the session has {events} event(s): give it an \
                 index of SessionBuilder::event"
            ),
            LinuxError::CgroupMisplaced { cgroup, event, .. } => write!(
                f,
                "event {event}: cgroup {cgroup} filters CPU-wide events only: open the session on all CPUs \
                 (Scope::AllCpus, perf record -a) or some (Scope::Cpus)"
            ),
            _ => Ok(()),
        }
    }

    /// [`Display`](fmt::Display) of perf.data's failures.
    #[cfg(feature = "perf-data")]
    fn fmt_perf_data(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LinuxError::PerfData(e) => write!(f, "{e}"),
            LinuxError::File { what, path, error } => write!(f, "{what} {}: {error}", path.display()),
            LinuxError::NoSuchTracepointId { config } => write!(f, "no tracepoint in tracefs has id {config}"),
            _ => Ok(()),
        }
    }
}

impl std::error::Error for LinuxError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LinuxError::Io { error, .. } | LinuxError::Exec { error, .. } | LinuxError::NoSuchCgroup { error, .. } => {
                Some(error)
            }
            LinuxError::OpenEvent { error, .. } => Some(&**error),
            LinuxError::Layout(e) => Some(e),
            LinuxError::Read(e) | LinuxError::BadBpfRing { error: e, .. } => Some(e),
            LinuxError::BadRingbuf { error, .. } => Some(error),
            LinuxError::Reserve { error } => Some(error),
            LinuxError::EventSet(e) => Some(e),
            #[cfg(feature = "perf-data")]
            LinuxError::PerfData(e) => Some(e),
            #[cfg(feature = "perf-data")]
            LinuxError::File { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl From<LayoutError> for LinuxError {
    fn from(e: LayoutError) -> LinuxError {
        LinuxError::Layout(e)
    }
}

impl From<ReadError> for LinuxError {
    fn from(e: ReadError) -> LinuxError {
        LinuxError::Read(e)
    }
}

impl From<EventSetError> for LinuxError {
    fn from(e: EventSetError) -> LinuxError {
        LinuxError::EventSet(e)
    }
}

#[cfg(feature = "perf-data")]
impl From<perfring_data::PerfDataError> for LinuxError {
    fn from(e: perfring_data::PerfDataError) -> LinuxError {
        LinuxError::PerfData(e)
    }
}

/// Which reader reads a ring of `kind` (what to use instead of a reader of another kind).
fn reader_of(kind: crate::RingKind) -> &'static str {
    match (kind.backward, kind.writable) {
        (false, true) => "read it with Ring::consumer",
        (true, true) => "read it with Ring::backward_reader",
        (true, false) => "read it with Ring::overwrite_reader, under Ring::pause_output",
        (false, false) => {
            "no reader reads a forward overwrite ring: map it writable, or open the event with write_backward \
             for a flight recorder"
        }
    }
}

pub(crate) fn io(what: &'static str) -> impl FnOnce(io::Error) -> LinuxError {
    move |error| LinuxError::Io { what, error }
}
