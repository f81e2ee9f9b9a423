//! [`EventAttr`]: a typed builder of `struct perf_event_attr`, over the same
//! [`perfring::record::Attr`] that perf.data files and the record decoder use.

use perfring::record::{attr_flags as flag, Attr};

use crate::error::LinuxError;

/// `attr.type`: `PERF_TYPE_*`.
pub mod event_type {
    /// `PERF_TYPE_HARDWARE`
    pub const HARDWARE: u32 = 0;
    /// `PERF_TYPE_SOFTWARE`
    pub const SOFTWARE: u32 = 1;
    /// `PERF_TYPE_TRACEPOINT`
    pub const TRACEPOINT: u32 = 2;
    /// `PERF_TYPE_HW_CACHE`
    pub const HW_CACHE: u32 = 3;
    /// `PERF_TYPE_RAW`
    pub const RAW: u32 = 4;
    /// `PERF_TYPE_BREAKPOINT`
    pub const BREAKPOINT: u32 = 5;
}

/// A software event's `attr.config` (`PERF_COUNT_SW_*`, the constants of [`software`]): its
/// own type, so that a software event's number cannot be given where a hardware one is meant:
///
/// ```compile_fail
/// use perfring_linux::{software, EventAttr};
/// let cycles_by_mistake = EventAttr::hardware(software::CPU_CLOCK); // a type error
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SoftwareEvent(u64);

impl SoftwareEvent {
    /// A software event by number (one newer than the constants of [`software`]).
    pub const fn from_config(config: u64) -> SoftwareEvent {
        SoftwareEvent(config)
    }
    /// `attr.config`.
    pub const fn config(self) -> u64 {
        self.0
    }
}

/// A hardware event's `attr.config` (`PERF_COUNT_HW_*`, the constants of [`hardware`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HardwareEvent(u64);

impl HardwareEvent {
    /// A hardware event by number.
    pub const fn from_config(config: u64) -> HardwareEvent {
        HardwareEvent(config)
    }
    /// `attr.config`.
    pub const fn config(self) -> u64 {
        self.0
    }
}

/// `attr.config` of `PERF_TYPE_SOFTWARE`: `PERF_COUNT_SW_*`.
pub mod software {
    use super::SoftwareEvent;
    /// `PERF_COUNT_SW_CPU_CLOCK`
    pub const CPU_CLOCK: SoftwareEvent = SoftwareEvent(0);
    /// `PERF_COUNT_SW_TASK_CLOCK`
    pub const TASK_CLOCK: SoftwareEvent = SoftwareEvent(1);
    /// `PERF_COUNT_SW_PAGE_FAULTS`
    pub const PAGE_FAULTS: SoftwareEvent = SoftwareEvent(2);
    /// `PERF_COUNT_SW_CONTEXT_SWITCHES`
    pub const CONTEXT_SWITCHES: SoftwareEvent = SoftwareEvent(3);
    /// `PERF_COUNT_SW_CPU_MIGRATIONS`
    pub const CPU_MIGRATIONS: SoftwareEvent = SoftwareEvent(4);
    /// `PERF_COUNT_SW_PAGE_FAULTS_MIN`
    pub const PAGE_FAULTS_MIN: SoftwareEvent = SoftwareEvent(5);
    /// `PERF_COUNT_SW_PAGE_FAULTS_MAJ`
    pub const PAGE_FAULTS_MAJ: SoftwareEvent = SoftwareEvent(6);
    /// `PERF_COUNT_SW_ALIGNMENT_FAULTS`
    pub const ALIGNMENT_FAULTS: SoftwareEvent = SoftwareEvent(7);
    /// `PERF_COUNT_SW_EMULATION_FAULTS`
    pub const EMULATION_FAULTS: SoftwareEvent = SoftwareEvent(8);
    /// `PERF_COUNT_SW_DUMMY`: side-band records only.
    pub const DUMMY: SoftwareEvent = SoftwareEvent(9);
    /// `PERF_COUNT_SW_BPF_OUTPUT`
    pub const BPF_OUTPUT: SoftwareEvent = SoftwareEvent(10);
    /// `PERF_COUNT_SW_CGROUP_SWITCHES`
    pub const CGROUP_SWITCHES: SoftwareEvent = SoftwareEvent(11);
}

/// `attr.config` of `PERF_TYPE_HARDWARE`: `PERF_COUNT_HW_*`.
pub mod hardware {
    use super::HardwareEvent;
    /// `PERF_COUNT_HW_CPU_CYCLES`
    pub const CPU_CYCLES: HardwareEvent = HardwareEvent(0);
    /// `PERF_COUNT_HW_INSTRUCTIONS`
    pub const INSTRUCTIONS: HardwareEvent = HardwareEvent(1);
    /// `PERF_COUNT_HW_CACHE_REFERENCES`
    pub const CACHE_REFERENCES: HardwareEvent = HardwareEvent(2);
    /// `PERF_COUNT_HW_CACHE_MISSES`
    pub const CACHE_MISSES: HardwareEvent = HardwareEvent(3);
    /// `PERF_COUNT_HW_BRANCH_INSTRUCTIONS`
    pub const BRANCH_INSTRUCTIONS: HardwareEvent = HardwareEvent(4);
    /// `PERF_COUNT_HW_BRANCH_MISSES`
    pub const BRANCH_MISSES: HardwareEvent = HardwareEvent(5);
    /// `PERF_COUNT_HW_BUS_CYCLES`
    pub const BUS_CYCLES: HardwareEvent = HardwareEvent(6);
    /// `PERF_COUNT_HW_STALLED_CYCLES_FRONTEND`
    pub const STALLED_CYCLES_FRONTEND: HardwareEvent = HardwareEvent(7);
    /// `PERF_COUNT_HW_STALLED_CYCLES_BACKEND`
    pub const STALLED_CYCLES_BACKEND: HardwareEvent = HardwareEvent(8);
    /// `PERF_COUNT_HW_REF_CPU_CYCLES`
    pub const REF_CPU_CYCLES: HardwareEvent = HardwareEvent(9);
}

/// `attr.bp_type`: `HW_BREAKPOINT_*`.
pub mod breakpoint {
    /// `HW_BREAKPOINT_R`
    pub const R: u32 = 1;
    /// `HW_BREAKPOINT_W`
    pub const W: u32 = 2;
    /// `HW_BREAKPOINT_RW`
    pub const RW: u32 = 3;
    /// `HW_BREAKPOINT_X`
    pub const X: u32 = 4;
}

/// A `perf_event_attr` under construction. Starts with `size = PERF_ATTR_SIZE_VER7` (128: the
/// largest perf 6.1 reads from perf.data), `disabled` set (start it with
/// [`Event::enable`](crate::Event::enable), or with `enable_on_exec` for a command),
/// `exclude_kernel` and `exclude_hv` set (what an unprivileged user may measure at the default
/// `perf_event_paranoid`); every field of the uapi has a setter, and the flag bits one,
/// [`flag`](EventAttr::flag), with the constants of [`perfring::record::attr_flags`] (which
/// [`Attr::has`] reads back): one spelling on both sides.
///
/// ```
/// use perfring::record::{attr_flags, sample_type as st};
/// use perfring_linux::{software, EventAttr};
/// let attr = EventAttr::software(software::TASK_CLOCK)
///     .sample_period(100_000)
///     .sample_type(st::IDENTIFIER | st::IP | st::TID | st::TIME)
///     .flag(attr_flags::SAMPLE_ID_ALL, true)
///     .wakeup_watermark(4096);
/// assert_eq!(attr.attr().sample_period, 100_000);
/// assert!(attr.attr().has(attr_flags::SAMPLE_ID_ALL | attr_flags::DISABLED));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EventAttr(Attr);

impl EventAttr {
    /// An event of `type_` and `config`, with the defaults above.
    pub fn new(type_: u32, config: u64) -> EventAttr {
        EventAttr(Attr {
            type_,
            size: Attr::SIZE_VER7,
            config,
            flags: flag::DISABLED | flag::EXCLUDE_KERNEL | flag::EXCLUDE_HV,
            ..Attr::ZERO
        })
    }
    /// A software event ([`software`]).
    pub fn software(event: SoftwareEvent) -> EventAttr {
        Self::new(event_type::SOFTWARE, event.config())
    }
    /// A hardware event ([`hardware`]); machines without a PMU (most VMs) refuse it.
    pub fn hardware(event: HardwareEvent) -> EventAttr {
        Self::new(event_type::HARDWARE, event.config())
    }
    /// A raw PMU event (`PERF_TYPE_RAW`, the PMU's own encoding).
    pub fn raw(config: u64) -> EventAttr {
        Self::new(event_type::RAW, config)
    }
    /// A hardware breakpoint on `len` bytes at `addr` ([`breakpoint`] for `bp_type`).
    pub fn breakpoint(bp_type: u32, addr: u64, len: u64) -> EventAttr {
        let mut a = Self::new(event_type::BREAKPOINT, 0);
        a.0.bp_type = bp_type;
        a.0.config1 = addr;
        a.0.config2 = len;
        a
    }
    /// A tracepoint by name, `"subsystem:event"` (e.g. `"sched:sched_switch"`): its id is read
    /// from tracefs, which this crate never mounts. Raw tracepoint data (`PERF_SAMPLE_RAW`)
    /// needs `perf_event_paranoid` ≤ -1 or CAP_PERFMON; counting and the other fields do not.
    ///
    /// Each part is 1 to 255 letters, digits, `_`, `-` or `.`, the first a letter, a digit or
    /// `_` (what tracefs names hold; no `/`, `..` or NUL reaches a path):
    /// [`LinuxError::BadTracepointName`] names the part at fault (a name without `:` made of those
    /// characters alone is [`LinuxError::NoSuchTracepoint`]). Then [`LinuxError::TracefsNotMounted`],
    /// [`LinuxError::TracefsPermissionDenied`] (tracefs or the id file not readable by this user:
    /// run as root, or make it readable) or [`LinuxError::NoSuchTracepoint`].
    pub fn tracepoint(name: &str) -> Result<EventAttr, LinuxError> {
        let bad = |part| LinuxError::BadTracepointName { name: name.into(), part };
        let Some((subsystem, event)) = name.split_once(':') else {
            // A name of a tracepoint's characters but no ':' names no tracepoint; any other is
            // malformed (and its message must not print it raw).
            return Err(if tracepoint_part_ok(name) {
                LinuxError::NoSuchTracepoint { name: name.into() }
            } else {
                bad("separator")
            });
        };
        if !tracepoint_part_ok(subsystem) {
            return Err(bad("subsystem"));
        }
        if !tracepoint_part_ok(event) {
            return Err(bad("event"));
        }
        let root = tracefs_root(|path| std::fs::metadata(path).map(|m| m.is_dir()))?;
        let path = format!("{root}/events/{subsystem}/{event}/id");
        let id = match std::fs::read_to_string(&path) {
            Ok(text) => text.trim().parse().ok(),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                return Err(LinuxError::TracefsPermissionDenied { path })
            }
            Err(_) => None,
        };
        let id = id.ok_or_else(|| LinuxError::NoSuchTracepoint { name: name.into() })?;
        Ok(Self::new(event_type::TRACEPOINT, id))
    }
    /// From an attr as it is (its flags untouched).
    pub fn from_attr(attr: Attr) -> EventAttr {
        EventAttr(attr)
    }
    /// The attr.
    pub fn attr(&self) -> &Attr {
        &self.0
    }
    /// Set or clear the bits of `mask` in the flags word ([`perfring::record::attr_flags`]).
    pub fn flag(mut self, mask: u64, on: bool) -> Self {
        if on {
            self.0.flags |= mask;
        } else {
            self.0.flags &= !mask;
        }
        self
    }
    /// `attr.size`: the struct version the kernel is told (64 … 136); fields past it are not
    /// sent.
    pub fn size(mut self, size: u32) -> Self {
        self.0.size = size;
        self
    }
    /// `config`.
    pub fn config(mut self, config: u64) -> Self {
        self.0.config = config;
        self
    }
    /// `config1` (`bp_addr`, `kprobe_func`, `uprobe_path`).
    pub fn config1(mut self, v: u64) -> Self {
        self.0.config1 = v;
        self
    }
    /// `config2` (`bp_len`, `kprobe_addr`, `probe_offset`).
    pub fn config2(mut self, v: u64) -> Self {
        self.0.config2 = v;
        self
    }
    /// `config3`.
    pub fn config3(mut self, v: u64) -> Self {
        self.0.config3 = v;
        self.0.size = self.0.size.max(Attr::SIZE_VER8);
        self
    }
    /// Sample every `period` events (clears `freq`).
    pub fn sample_period(mut self, period: u64) -> Self {
        self.0.sample_period = period;
        self.flag(flag::FREQ, false)
    }
    /// Sample about `hz` times a second (sets `freq`).
    pub fn sample_freq(mut self, hz: u64) -> Self {
        self.0.sample_period = hz;
        self.flag(flag::FREQ, true)
    }
    /// `sample_type` ([`perfring::record::sample_type`]).
    pub fn sample_type(mut self, bits: u64) -> Self {
        self.0.sample_type = bits;
        self
    }
    /// `read_format` ([`perfring::record::read_format`]).
    pub fn read_format(mut self, bits: u64) -> Self {
        self.0.read_format = bits;
        self
    }
    /// Wake the reader every `n` samples (`wakeup_events`; clears `watermark`).
    pub fn wakeup_events(mut self, n: u32) -> Self {
        self.0.wakeup = n;
        self.flag(flag::WATERMARK, false)
    }
    /// Wake the reader when `bytes` are unread (`wakeup_watermark`; sets `watermark`).
    pub fn wakeup_watermark(mut self, bytes: u32) -> Self {
        self.0.wakeup = bytes;
        self.flag(flag::WATERMARK, true)
    }
    /// `branch_sample_type` ([`perfring::record::branch_sample_type`]).
    pub fn branch_sample_type(mut self, bits: u64) -> Self {
        self.0.branch_sample_type = bits;
        self
    }
    /// `sample_regs_user`: the user registers a sample carries.
    pub fn sample_regs_user(mut self, mask: u64) -> Self {
        self.0.sample_regs_user = mask;
        self
    }
    /// `sample_regs_intr`: the interrupted registers a sample carries.
    pub fn sample_regs_intr(mut self, mask: u64) -> Self {
        self.0.sample_regs_intr = mask;
        self
    }
    /// `sample_stack_user`: bytes of user stack per sample.
    pub fn sample_stack_user(mut self, bytes: u32) -> Self {
        self.0.sample_stack_user = bytes;
        self
    }
    /// TIME from `clockid` (sets `use_clockid`), e.g. `libc::CLOCK_MONOTONIC`.
    pub fn clockid(mut self, clockid: i32) -> Self {
        self.0.clockid = clockid;
        self.flag(flag::USE_CLOCKID, true)
    }
    /// `aux_watermark`.
    pub fn aux_watermark(mut self, bytes: u32) -> Self {
        self.0.aux_watermark = bytes;
        self
    }
    /// `aux_sample_size` (with `PERF_SAMPLE_AUX`).
    pub fn aux_sample_size(mut self, bytes: u32) -> Self {
        self.0.aux_sample_size = bytes;
        self
    }
    /// The word at offset 116 (`aux_action` bits upstream).
    pub fn aux_action(mut self, bits: u32) -> Self {
        self.0.aux_action = bits;
        self
    }
    /// `sample_max_stack`: callchain depth limit.
    pub fn sample_max_stack(mut self, depth: u16) -> Self {
        self.0.sample_max_stack = depth;
        self
    }
    /// `sig_data` (with `sigtrap`).
    pub fn sig_data(mut self, v: u64) -> Self {
        self.0.sig_data = v;
        self
    }
    /// `precise_ip` (0–3: skid allowed … no skid).
    pub fn precise_ip(mut self, level: u8) -> Self {
        self.0.flags = (self.0.flags & !flag::PRECISE_IP_MASK) | (u64::from(level.min(3)) << 15);
        self
    }
}

impl From<EventAttr> for Attr {
    fn from(a: EventAttr) -> Attr {
        a.0
    }
}

/// Whether `part` (a tracepoint's subsystem or event) is a name tracefs could hold: 1 to 255
/// (`NAME_MAX`) letters, digits, `_`, `-` or `.`, the first a letter, a digit or `_` (perf's
/// event names, globs aside; so never `.`, `..`, a `/` or a NUL).
fn tracepoint_part_ok(part: &str) -> bool {
    let b = part.as_bytes();
    (1..=255).contains(&b.len())
        && (b[0].is_ascii_alphanumeric() || b[0] == b'_')
        && b.iter().all(|&c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
}

/// The tracefs mount whose `events` directory `is_dir` finds (`/sys/kernel/tracing`, then the
/// older `/sys/kernel/debug/tracing`). None found: [`LinuxError::TracefsPermissionDenied`] if one
/// could not be looked at for want of permission (EACCES: tracefs is mounted mode 0700 for a
/// user other than root), else [`LinuxError::TracefsNotMounted`].
fn tracefs_root(is_dir: impl Fn(&str) -> std::io::Result<bool>) -> Result<&'static str, LinuxError> {
    let mut denied = None;
    for root in ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"] {
        let events = format!("{root}/events");
        match is_dir(&events) {
            Ok(true) => return Ok(root),
            Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                denied.get_or_insert(events);
            }
            Ok(false) | Err(_) => {}
        }
    }
    Err(denied.map_or(LinuxError::TracefsNotMounted, |path| LinuxError::TracefsPermissionDenied { path }))
}

#[cfg(test)]
mod tests {
    use std::io::{Error as IoError, ErrorKind};

    use super::*;

    /// EACCES on tracefs (mounted 0700, looked at by another user) is told apart from tracefs
    /// being absent; a readable mount wins wherever it is.
    #[test]
    fn tracefs_permission_denied_is_not_reported_as_not_mounted() {
        let denied = |_: &str| Err(IoError::from(ErrorKind::PermissionDenied));
        match tracefs_root(denied) {
            Err(LinuxError::TracefsPermissionDenied { path }) => assert_eq!(path, "/sys/kernel/tracing/events"),
            other => panic!("{other:?}"),
        }
        // /sys/kernel/tracing unreadable, no debugfs mount: still permission, not "not mounted".
        let first_denied = |p: &str| {
            if p.starts_with("/sys/kernel/tracing") {
                Err(IoError::from(ErrorKind::PermissionDenied))
            } else {
                Err(IoError::from(ErrorKind::NotFound))
            }
        };
        let e = tracefs_root(first_denied).unwrap_err();
        assert!(matches!(e, LinuxError::TracefsPermissionDenied { .. }), "{e:?}");
        let message = e.to_string();
        assert!(message.contains("run as root") && message.contains("readable"), "{message}");
        // Absent everywhere: not mounted.
        let absent = |_: &str| Err(IoError::from(ErrorKind::NotFound));
        assert!(matches!(tracefs_root(absent), Err(LinuxError::TracefsNotMounted)));
        assert!(matches!(tracefs_root(|_: &str| Ok(false)), Err(LinuxError::TracefsNotMounted)));
        // Unreadable at one place, mounted at the other: the mount.
        let debug_only = |p: &str| {
            if p.starts_with("/sys/kernel/debug") {
                Ok(true)
            } else {
                Err(IoError::from(ErrorKind::PermissionDenied))
            }
        };
        assert_eq!(tracefs_root(debug_only).unwrap(), "/sys/kernel/debug/tracing");
    }

    #[test]
    fn tracepoint_parts_are_what_tracefs_names_hold() {
        for ok in ["sched", "sched_switch", "9p", "9p_client_req", "xfs-foo", "p_do_sys_open.isra.0", "_x"] {
            assert!(tracepoint_part_ok(ok), "{ok}");
        }
        let long = "a".repeat(256);
        for bad in ["", ".", "..", "-a", ".a", "a/b", "a/../b", "a\0b", "a b", "a*", "a:b", "é", long.as_str()] {
            assert!(!tracepoint_part_ok(bad), "{bad:?}");
        }
        assert!(tracepoint_part_ok(&long[1..]), "NAME_MAX is allowed");
    }
}
