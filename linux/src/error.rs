//! [`OpenError`] and [`Error`]: what went wrong, in terms of what to change.

use std::fmt;
use std::io;

/// Why `perf_event_open` refused an event. Each variant says what to change.
#[derive(Debug)]
#[non_exhaustive]
pub enum OpenError {
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
    /// Any other failure.
    Io(io::Error),
}

impl fmt::Display for OpenError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            OpenError::PermissionDenied { errno, paranoid, needs } => {
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
            OpenError::NotSupported { errno } => write!(
                f,
                "perf_event_open: this machine has no such event (errno {errno}): no hardware PMU (a VM?), a \
                 tracepoint the kernel lacks, or a mode the PMU cannot sample in; try a software event"
            ),
            OpenError::TooManyFiles => {
                write!(f, "perf_event_open: out of file descriptors (EMFILE): raise `ulimit -n` or open fewer events")
            }
            OpenError::NoSuchTask { pid } => write!(f, "perf_event_open: no task {pid} (ESRCH)"),
            OpenError::InvalidArgument { suspects } => {
                write!(f, "perf_event_open: the kernel rejected the request (EINVAL); check {suspects}")
            }
            OpenError::AttrTooLarge { kernel_size } => write!(
                f,
                "perf_event_open: the attr uses fields this kernel does not know (its attr is {kernel_size} bytes); \
                 clear the newer fields"
            ),
            OpenError::Busy => write!(f, "perf_event_open: the PMU is held by an exclusive or pinned event (EBUSY)"),
            OpenError::Io(e) => write!(f, "perf_event_open: {e}"),
        }
    }
}

impl std::error::Error for OpenError {}

/// A failure after opening: an ioctl, `read(2)`, `mmap`, the ring's layout.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// A system call failed.
    Io {
        /// What was being done (`"PERF_EVENT_IOC_ENABLE"`, `"mmap of the ring"`, …).
        what: &'static str,
        /// The error.
        error: io::Error,
    },
    /// The ring size is not `2^n` pages (`data_pages`), nor 0 (the control page alone), which
    /// the kernel refuses.
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
    Layout(perfring::LayoutError),
    /// Reading a ring failed (its head moved out of bounds: the kernel's ring, corrupted).
    Read(perfring::ReadError),
    /// Reading an overwrite ring newest-first failed (the records before the failure were
    /// delivered; see [`perfring::BackwardError`] for each reason).
    Backward(perfring::BackwardError),
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
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { what, error } => write!(f, "{what}: {error}"),
            Error::RingSize { data_pages } => {
                write!(f, "a ring needs a power of two of data pages (1, 2, 4, …) or 0, not {data_pages}")
            }
            Error::AuxSize { aux_pages } => {
                write!(f, "an AUX area needs a power of two of pages (1, 2, 4, …), not {aux_pages}")
            }
            Error::RingKind { reader, needs, ring } => {
                let instead = match (ring.backward, ring.writable) {
                    (false, true) => "read it with Ring::consumer",
                    (true, true) => "read it with Ring::backward_reader",
                    (true, false) => "read it with Ring::overwrite_reader, under Ring::pause_output",
                    (false, false) => {
                        "no reader reads a forward overwrite ring: map it writable, or open the event with \
                         write_backward for a flight recorder"
                    }
                };
                write!(f, "{reader} reads a {needs} ring; this ring is {ring}: {instead}")
            }
            Error::ReadOnlyRing => f.write_str(
                "Ring::mapping needs a writable ring (a Mapping may store into the control page, which is \
                 read-only here): use Ring::read_only, or Ring::map(event, pages, true)",
            ),
            Error::ConsumerTaken => f.write_str(
                "this event's ring already has a consumer (Ring::consumer): use that one, or drop it before \
                 asking for another",
            ),
            Error::RingRedirected => f.write_str(
                "this event's records go to another event's ring (Event::set_output): map and read that \
                 event's ring, or set_output(None) first",
            ),
            Error::AuxNeedsWritableRing => write!(
                f,
                "an AUX area needs a writable ring (Ring::map(event, pages, true)): its offset and size are \
                 written into the control page"
            ),
            Error::AuxNotSupported { errno } => {
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
            Error::Layout(e) => write!(f, "the perf mapping has no valid layout: {e}"),
            Error::Read(e) => write!(f, "reading the ring: {e}"),
            Error::Backward(e) => write!(f, "reading the overwrite ring: {e}"),
            Error::BadRead { len } => write!(f, "read(2) returned {len} bytes, not the event's read_format block"),
            Error::ModifyRefused { errno, breakpoint: false } => write!(
                f,
                "PERF_EVENT_IOC_MODIFY_ATTRIBUTES refused (errno {errno}): the kernel modifies breakpoint events \
                 only; close this event and open one with the new attr"
            ),
            Error::ModifyRefused { errno, breakpoint: true } => write!(
                f,
                "PERF_EVENT_IOC_MODIFY_ATTRIBUTES refused (errno {errno}): only bp_addr, bp_len, bp_type and disabled \
                 may differ from the attr the breakpoint was opened with"
            ),
            Error::TracefsNotMounted => write!(
                f,
                "tracefs is not mounted: mount it (as root: `mount -t tracefs nodev /sys/kernel/tracing`) to open \
                 tracepoints by name"
            ),
            Error::Exec { command, error } => write!(f, "cannot execute {command}: {error}"),
            Error::NoSuchTracepoint { name } => {
                write!(f, "no tracepoint {name} (see /sys/kernel/tracing/events/ for the available ones)")
            }
            Error::NotStarted => write!(
                f,
                "not started: call start() first (Session::start, Session::run or Launch::start); until then the \
                 command is held before exec and the events are disabled"
            ),
            Error::EmptyCommand => write!(f, "the command is empty: give at least argv[0], the program to run"),
            Error::TracefsPermissionDenied { path } => write!(
                f,
                "permission denied reading {path}: tracepoint ids are read from tracefs; run as root, or make \
                 tracefs readable to this user (e.g. `mount -o remount,mode=755 /sys/kernel/tracing` and \
                 `chmod a+r` of the events' id files)"
            ),
            Error::BadTracepointName { name, part: "separator" } => {
                write!(f, "tracepoint name {name:?} has no ':': write \"subsystem:event\", e.g. \"sched:sched_switch\"")
            }
            Error::BadTracepointName { name, part } => write!(
                f,
                "tracepoint name {name:?}: the {part} must be 1 to 255 letters, digits, '_', '-' or '.', the first a \
                 letter, a digit or '_' (write \"subsystem:event\", e.g. \"sched:sched_switch\")"
            ),
        }
    }
}

impl std::error::Error for Error {}

impl From<perfring::LayoutError> for Error {
    fn from(e: perfring::LayoutError) -> Error {
        Error::Layout(e)
    }
}

impl From<perfring::BackwardError> for Error {
    fn from(e: perfring::BackwardError) -> Error {
        Error::Backward(e)
    }
}

impl From<perfring::ReadError> for Error {
    fn from(e: perfring::ReadError) -> Error {
        Error::Read(e)
    }
}

pub(crate) fn io(what: &'static str) -> impl FnOnce(io::Error) -> Error {
    move |error| Error::Io { what, error }
}
