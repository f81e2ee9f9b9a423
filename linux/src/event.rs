//! [`Event`]: an open perf event — opening (a thread, a process, a CPU; groups), the ioctls,
//! and `read(2)` of its counts typed by `read_format`.

use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::sync::Arc;

use perfring::record::{read_format as rf, Attr, Endian, ReadValues};

use crate::attr::{event_type, EventAttr};
use crate::cgroup::Cgroup;
use crate::claims::RingClaims;
use crate::error::{io as io_err, LinuxError};
use crate::sys;

/// What an event measures: `(pid, cpu)` of `perf_event_open`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target {
    /// The calling thread, on any CPU (`pid = 0, cpu = -1`).
    ThisThread,
    /// A thread or process by id, on any CPU (`cpu = -1`); with `inherit`, its children too.
    Task(i32),
    /// Every task on one CPU (`pid = -1`): needs CAP_PERFMON or `perf_event_paranoid` ≤ 0.
    Cpu(u32),
    /// One task on one CPU.
    TaskOnCpu(i32, u32),
}

impl Target {
    fn pid_cpu(self) -> (i32, i32) {
        match self {
            Target::ThisThread => (0, -1),
            Target::Task(pid) => (pid, -1),
            Target::Cpu(cpu) => (-1, cpu as i32),
            Target::TaskOnCpu(pid, cpu) => (pid, cpu as i32),
        }
    }
}

/// The online CPUs (`/sys/devices/system/cpu/online`, e.g. `0-3,6`), for opening an event per
/// CPU.
pub fn online_cpus() -> Result<Vec<u32>, LinuxError> {
    let s = std::fs::read_to_string("/sys/devices/system/cpu/online").map_err(io_err("reading the online CPUs"))?;
    parse_cpu_list(s.trim()).ok_or(LinuxError::Io {
        what: "parsing /sys/devices/system/cpu/online",
        error: io::ErrorKind::InvalidData.into(),
    })
}

/// A kernel CPU list (`0-3,6`); `None` if it is not one.
pub(crate) fn parse_cpu_list(s: &str) -> Option<Vec<u32>> {
    let mut cpus = Vec::new();
    for part in s.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => cpus.extend(a.parse::<u32>().ok()?..=b.parse().ok()?),
            None => cpus.push(part.parse().ok()?),
        }
    }
    Some(cpus)
}

/// `/proc/sys/kernel/perf_event_paranoid`.
pub fn paranoid() -> Option<i32> {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid").ok()?.trim().parse().ok()
}

/// `kernel.perf_event_max_sample_rate`: the highest `sample_freq` the kernel accepts (EINVAL
/// above it), or `u64::MAX` if it cannot be read.
fn max_sample_rate() -> u64 {
    std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(u64::MAX)
}

/// `PERF_FLAG_FD_CLOEXEC`.
const FLAG_FD_CLOEXEC: u64 = 1 << 3;

/// An open perf event. Closing it (drop) stops it; a [`Ring`](crate::Ring) mapped from it
/// keeps its own reference to the event, so neither outlives the other's needs.
#[derive(Debug)]
pub struct Event {
    fd: OwnedFd,
    attr: Attr,
    id: u64,
    /// Shared with the rings mapped from it: one consumer per ring, no mapping of a redirected
    /// event.
    ring_claims: Arc<RingClaims>,
}

impl Event {
    /// Open `attr` on `target`, as a member of `group`'s group if given (the leader first).
    pub fn open(attr: &EventAttr, target: Target, group: Option<&Event>) -> Result<Event, LinuxError> {
        Event::open_in(attr, target, None, group)
    }

    /// [`open`](Event::open), for the tasks of `cgroup` alone if one is given (then `target`
    /// is a CPU: its pid is replaced by the cgroup's directory, with `PERF_FLAG_PID_CGROUP`).
    pub(crate) fn open_in(
        attr: &EventAttr,
        target: Target,
        cgroup: Option<&Cgroup>,
        group: Option<&Event>,
    ) -> Result<Event, LinuxError> {
        let (pid, cpu) = target.pid_cpu();
        let who = cgroup.map_or(sys::Who::Task(pid), |c| sys::Who::Cgroup(c.dir()));
        let mut a = *attr.attr();
        let mut buf = [0u8; Attr::SIZE_VER8 as usize];
        for _ in 0..2 {
            a.to_bytes(Endian::NATIVE, &mut buf)
                .map_err(|_| LinuxError::InvalidArgument { suspects: "attr.size (64..=136, a multiple of 8)" })?;
            match sys::perf_event_open(&mut buf, who, cpu, group.map(|g| g.fd.as_fd()), FLAG_FD_CLOEXEC) {
                Ok(fd) => {
                    let mut event = Event { fd, attr: a, id: 0, ring_claims: Arc::default() };
                    event.id = event.read_id()?;
                    return Ok(event);
                }
                Err(e) if e.raw_os_error() == Some(libc::E2BIG) => {
                    // The kernel wrote its own size: retry with it if nothing past it is set.
                    let kernel = u32::from_ne_bytes([buf[4], buf[5], buf[6], buf[7]]);
                    let mut shorter = a;
                    shorter.size = kernel;
                    let mut check = [0u8; Attr::SIZE_VER8 as usize];
                    let fits = kernel >= Attr::SIZE_VER0
                        && kernel < a.size
                        && shorter.to_bytes(Endian::NATIVE, &mut check).is_ok()
                        && buf[kernel as usize..a.size as usize].iter().all(|&b| b == 0);
                    if !fits {
                        return Err(LinuxError::AttrTooLarge { kernel_size: kernel });
                    }
                    a = shorter;
                }
                Err(e) if cgroup.is_some() && e.raw_os_error() == Some(libc::EINVAL) => {
                    // perf_cgroup_connect: a group's events all watch one cgroup.
                    return Err(LinuxError::InvalidArgument {
                        suspects: "the cgroup (a group member must be in its leader's cgroup), then the attr's fields",
                    });
                }
                Err(e) => return Err(classify(e, &a, target)),
            }
        }
        Err(LinuxError::Io { what: "perf_event_open", error: io::Error::from_raw_os_error(libc::E2BIG) })
    }

    /// The attr the kernel accepted (its `size` may have been lowered to the kernel's).
    pub fn attr(&self) -> &Attr {
        &self.attr
    }

    /// The event's id (`PERF_EVENT_IOC_ID`): what its records carry in ID/IDENTIFIER.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// What the rings mapped from this event share.
    pub(crate) fn ring_claims(&self) -> Arc<RingClaims> {
        Arc::clone(&self.ring_claims)
    }

    fn read_id(&self) -> Result<u64, LinuxError> {
        sys::ioc_id(self.fd.as_fd()).map_err(io_err("PERF_EVENT_IOC_ID"))
    }

    /// Start counting and sampling (`PERF_EVENT_IOC_ENABLE`).
    pub fn enable(&self) -> Result<(), LinuxError> {
        sys::ioc_enable(self.fd.as_fd(), false).map_err(io_err("PERF_EVENT_IOC_ENABLE"))
    }
    /// Stop (`PERF_EVENT_IOC_DISABLE`).
    pub fn disable(&self) -> Result<(), LinuxError> {
        sys::ioc_disable(self.fd.as_fd(), false).map_err(io_err("PERF_EVENT_IOC_DISABLE"))
    }
    /// Enable the whole group this event leads, at one instant.
    pub fn enable_group(&self) -> Result<(), LinuxError> {
        sys::ioc_enable(self.fd.as_fd(), true).map_err(io_err("PERF_EVENT_IOC_ENABLE (group)"))
    }
    /// Disable the whole group this event leads.
    pub fn disable_group(&self) -> Result<(), LinuxError> {
        sys::ioc_disable(self.fd.as_fd(), true).map_err(io_err("PERF_EVENT_IOC_DISABLE (group)"))
    }
    /// Zero the count (`PERF_EVENT_IOC_RESET`).
    pub fn reset(&self) -> Result<(), LinuxError> {
        sys::ioc_reset(self.fd.as_fd()).map_err(io_err("PERF_EVENT_IOC_RESET"))
    }
    /// Allow `n` more overflows, then disable (`PERF_EVENT_IOC_REFRESH`).
    pub fn refresh(&self, n: u32) -> Result<(), LinuxError> {
        sys::ioc_refresh(self.fd.as_fd(), n).map_err(io_err("PERF_EVENT_IOC_REFRESH"))
    }
    /// Change the sample period (or frequency) (`PERF_EVENT_IOC_PERIOD`).
    pub fn set_period(&self, period: u64) -> Result<(), LinuxError> {
        sys::ioc_period(self.fd.as_fd(), period).map_err(io_err("PERF_EVENT_IOC_PERIOD"))
    }
    /// Send this event's records to `ring_owner`'s ring (`PERF_EVENT_IOC_SET_OUTPUT`); both on
    /// the same CPU (or task), with the same clock and direction. `None` stops redirecting.
    /// A redirected event's own ring is not mapped ([`LinuxError::RingRedirected`]): its records are
    /// read from the owner's; the kernel refuses to redirect an event whose ring is mapped.
    pub fn set_output(&self, ring_owner: Option<&Event>) -> Result<(), LinuxError> {
        sys::ioc_set_output(self.fd.as_fd(), ring_owner.map(|e| e.fd.as_fd()))
            .map_err(io_err("PERF_EVENT_IOC_SET_OUTPUT"))?;
        self.ring_claims.set_redirected(ring_owner.is_some());
        Ok(())
    }
    /// Pause (`true`) or resume the ring's output (`PERF_EVENT_IOC_PAUSE_OUTPUT`); while paused
    /// every record is dropped and counted (reported by a LOST record after resuming).
    pub fn pause_output(&self, paused: bool) -> Result<(), LinuxError> {
        sys::ioc_pause_output(self.fd.as_fd(), paused).map_err(io_err("PERF_EVENT_IOC_PAUSE_OUTPUT"))
    }
    /// A tracepoint filter (`PERF_EVENT_IOC_SET_FILTER`), e.g. `"prev_pid == 1"`. A filter
    /// with a NUL byte inside is refused (EINVAL) before the kernel sees it.
    pub fn set_filter(&self, filter: &str) -> Result<(), LinuxError> {
        let filter = std::ffi::CString::new(filter).map_err(|_| LinuxError::Io {
            what: "PERF_EVENT_IOC_SET_FILTER",
            error: std::io::Error::from_raw_os_error(libc::EINVAL),
        })?;
        sys::ioc_set_filter(self.fd.as_fd(), &filter).map_err(io_err("PERF_EVENT_IOC_SET_FILTER"))
    }
    /// Change the attr of a breakpoint (`PERF_EVENT_IOC_MODIFY_ATTRIBUTES`): `attr` must be
    /// the one the event was opened with but for `bp_addr` (`config1`), `bp_len` (`config2`),
    /// `bp_type` and `disabled`; a running breakpoint moves without being reopened. `disabled`
    /// of `attr` applies, and [`EventAttr`] starts with it set: clear it
    /// (`.flag(attr_flags::DISABLED, false)`) to keep the breakpoint counting. The kernel supports this for
    /// breakpoints only: any other event (EOPNOTSUPP, or EINVAL — Linux 6.18 answers EINVAL),
    /// another type or another field changed (EINVAL) is [`LinuxError::ModifyRefused`].
    pub fn modify_attributes(&self, attr: &EventAttr) -> Result<(), LinuxError> {
        let mut buf = [0u8; Attr::SIZE_VER8 as usize];
        let refused =
            |errno| LinuxError::ModifyRefused { errno, breakpoint: self.attr.type_ == event_type::BREAKPOINT };
        attr.attr().to_bytes(Endian::NATIVE, &mut buf).map_err(|_| refused(libc::EINVAL))?;
        sys::ioc_modify_attributes(self.fd.as_fd(), &buf).map_err(|error| match error.raw_os_error() {
            Some(errno @ (libc::EOPNOTSUPP | libc::EINVAL)) => refused(errno),
            _ => LinuxError::Io { what: "PERF_EVENT_IOC_MODIFY_ATTRIBUTES", error },
        })
    }

    /// The counts (`read(2)`), in the event's `read_format` layout: the value, the times, the
    /// id, the lost count (`PERF_FORMAT_LOST`), or the whole group with `PERF_FORMAT_GROUP`.
    pub fn read(&self) -> Result<Counts, LinuxError> {
        let group = self.attr.read_format & rf::GROUP != 0;
        let mut buf = vec![0u8; if group { 16 << 10 } else { 64 }];
        let n = sys::read(self.fd.as_fd(), &mut buf).map_err(io_err("read(2) of the counts"))?;
        buf.truncate(n);
        let fmt = self.attr.read_format;
        ReadValues::parse(&buf, fmt, Endian::NATIVE).map_err(|_| LinuxError::BadRead { len: n })?;
        Ok(Counts { bytes: buf, read_format: fmt })
    }
}

/// One `read(2)` of an event's counts; [`Counts::values`] gives them typed.
#[derive(Debug, Clone)]
pub struct Counts {
    bytes: Vec<u8>,
    read_format: u64,
}

impl Counts {
    /// The values, by `read_format`.
    pub fn values(&self) -> ReadValues<'_> {
        // Checked when read.
        ReadValues::parse(&self.bytes, self.read_format, Endian::NATIVE)
            .unwrap_or(ReadValues::Single(Default::default()))
    }
}

impl AsFd for Event {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for Event {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Turn an errno into what the user should change.
fn classify(e: io::Error, attr: &Attr, target: Target) -> LinuxError {
    use perfring::record::attr_flags as f;
    match e.raw_os_error() {
        Some(errno @ (libc::EACCES | libc::EPERM)) => {
            let needs = if matches!(target, Target::Cpu(_) | Target::TaskOnCpu(-1, _)) {
                "every task on a CPU (a CPU-wide event)"
            } else if !attr.has(f::EXCLUDE_KERNEL) {
                "kernel code (exclude_kernel is off)"
            } else if attr.sample_type & perfring::record::sample_type::RAW != 0 {
                "raw tracepoint data (PERF_SAMPLE_RAW)"
            } else {
                "another user's task, or a capability the event needs"
            };
            LinuxError::PermissionDenied { errno, paranoid: paranoid(), needs }
        }
        Some(errno @ (libc::ENOENT | libc::EOPNOTSUPP | libc::ENODEV)) => LinuxError::NotSupported { errno },
        Some(libc::EMFILE) => LinuxError::TooManyFiles,
        Some(libc::ESRCH) => LinuxError::NoSuchTask { pid: target.pid_cpu().0 },
        Some(libc::EBUSY) => LinuxError::Busy,
        Some(libc::EINVAL) => LinuxError::InvalidArgument {
            suspects: if attr.sample_type & !perfring::record::sample_type::ALL != 0 {
                "sample_type (bits this kernel does not know)"
            } else if attr.read_format & !rf::ALL != 0 {
                "read_format (bits this kernel does not know)"
            } else if attr.has(f::FREQ) && attr.sample_period == 0 {
                "sample_freq (0 with freq set)"
            } else if attr.has(f::FREQ) && attr.sample_period > max_sample_rate() {
                "sample_freq (above /proc/sys/kernel/perf_event_max_sample_rate)"
            } else if !attr.has(f::FREQ) && attr.sample_period >> 63 != 0 {
                "sample_period (at most 2^63 - 1)"
            } else {
                "config for this type, sample_type/read_format bits, the flags (inherit with a group read, \
                 a CPU number), wakeup_watermark vs the ring, precise_ip"
            },
        },
        _ => LinuxError::Io { what: "perf_event_open", error: e },
    }
}
