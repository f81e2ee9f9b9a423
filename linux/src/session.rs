//! [`Session`]: events, one ring per CPU, records attributed (its docs show the steps).

use perfring::record::attr_flags;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

use perfring::consumer::Scratch;
use perfring::record::{types, Endian, EventLayout, EventSet, IdEntry};

use crate::cgroup::Cgroup;
use crate::error::{io as io_err, LinuxError};
use crate::event::{online_cpus, Event};
use crate::launch::{Launch, Stdout};
use crate::ring::Ring;
use crate::session_record::SessionRecord;
use crate::session_rings::{
    move_for, numa_nodes, open_events, per_cpu, per_task, threads_of, Affinity, Opened, ANY_CPU,
};
use crate::wait::timeout_ms;
use crate::{sys, EventAttr};

/// Whom a [`Session`] follows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// A command (`argv[0]` looked up in `PATH`), started by the session held before `exec`,
    /// followed into its threads and children (`inherit`, `enable_on_exec`).
    Command(Vec<String>),
    /// A running process: each of its threads now (`/proc/PID/task`), and their children
    /// (`inherit`).
    Process(i32),
    /// Every task on every online CPU (CAP_PERFMON or `perf_event_paranoid` ≤ 0).
    AllCpus,
    /// Every task on these CPUs (those of them online), as `perf record -C`.
    Cpus(Vec<u32>),
    /// Several running processes (`perf record -p 1,2`): each one's threads, and their
    /// children (`inherit`).
    Processes(Vec<i32>),
    /// Running threads by id (`perf record -t`), and their children (`inherit`).
    Threads(Vec<i32>),
}

impl Scope {
    /// Every task on some CPUs ([`Scope::AllCpus`], [`Scope::Cpus`]): events opened per CPU
    /// with pid -1, which never hang up.
    pub fn cpu_wide(&self) -> bool {
        matches!(self, Scope::AllCpus | Scope::Cpus(_))
    }
}

/// A [`Session`] being set up: [`event`](SessionBuilder::event) for each event, then
/// [`open`](SessionBuilder::open).
#[derive(Debug, Clone)]
#[must_use = "a SessionBuilder does nothing until open()"]
pub struct SessionBuilder {
    scope: Scope,
    attrs: Vec<EventAttr>,
    /// Each event's group leader (an index into `attrs`), if it is a member.
    leaders: Vec<Option<usize>>,
    /// Take the attrs as given: the session sets neither `inherit` nor `enable_on_exec`.
    as_given: bool,
    data_pages: usize,
    stdout: Stdout,
    overwrite: bool,
    per_thread: bool,
    /// [`cgroup`](SessionBuilder::cgroup): events (by index) filtered by a cgroup.
    cgroups: Vec<(usize, Arc<Cgroup>)>,
}

impl SessionBuilder {
    /// Add an event (its index in records is the order of the calls: 0, 1, …). The session
    /// sets what its scope needs: `inherit` for a command or a process (off for all CPUs) and
    /// `enable_on_exec` for a command; with several events, records are told apart by their
    /// id, so each needs `PERF_SAMPLE_IDENTIFIER` (or the same `ID` position) — checked by
    /// [`open`](SessionBuilder::open).
    pub fn event(mut self, attr: EventAttr) -> Self {
        self.attrs.push(attr);
        self.leaders.push(None);
        self
    }

    /// Add an event as a member of event `leader`'s group (`leader` an index of an event
    /// added before, itself no member): on each CPU and task they are opened together, the
    /// member with the leader's descriptor as its group, so the kernel schedules them as one
    /// (`perf record -e '{a,b}'`). A member is enabled with its leader: open it with
    /// `disabled` off. A `leader` that is not an earlier event is
    /// [`LinuxError::BadGroup`] from [`open`](SessionBuilder::open).
    pub fn group_member(mut self, attr: EventAttr, leader: usize) -> Self {
        self.attrs.push(attr);
        self.leaders.push(Some(leader));
        self
    }

    /// Have event `event` (an index of [`event`](SessionBuilder::event) and
    /// [`group_member`](SessionBuilder::group_member) calls, before or after this one) count
    /// and sample only the tasks of `cgroup`, as `perf record -a -e E -G NAME` does: each CPU's
    /// event is opened with the cgroup's directory for `pid` (`PERF_FLAG_PID_CGROUP`), which
    /// the kernel takes for CPU-wide events only. A second call for the same event replaces
    /// the first's cgroup. A group member given a cgroup must be given its leader's (the kernel
    /// refuses another: [`LinuxError::InvalidArgument`]).
    ///
    /// Refused by [`open`](SessionBuilder::open), before anything is opened: a scope that is
    /// not CPU-wide, or an index past the events ([`LinuxError::CgroupMisplaced`]: use
    /// [`Scope::AllCpus`] or [`Scope::Cpus`]; give an index of an event).
    pub fn cgroup(mut self, event: usize, cgroup: Cgroup) -> Self {
        self.cgroups.retain(|(e, _)| *e != event);
        self.cgroups.push((event, Arc::new(cgroup)));
        self
    }

    /// Take each attr exactly as given (`true`): the session then sets neither `inherit`
    /// nor `enable_on_exec`, which by default it sets by its scope (see
    /// [`event`](SessionBuilder::event)). For a caller that configures them itself, as perf
    /// record does (`inherit` on CPU-wide events too, `enable_on_exec` on a group's leader
    /// only).
    pub fn attrs_as_given(mut self, as_given: bool) -> Self {
        self.as_given = as_given;
        self
    }

    /// Data pages of each CPU's ring: a power of two, at least 1 (default 16). Another number
    /// (0 among them: a ring of the control page alone holds no records) is
    /// [`LinuxError::RingSize`] from [`open`](SessionBuilder::open), before anything is
    /// opened or started.
    pub fn data_pages(mut self, pages: usize) -> Self {
        self.data_pages = pages;
        self
    }

    /// Overwrite rings (`true`), perf record's `--overwrite` flight recorder: every event is
    /// opened with `write_backward` and each CPU's ring mapped read-only, so the kernel keeps
    /// writing over the oldest records and never drops one for want of space. Nothing is read
    /// while the session runs (a ring wakes no [`wait`](Session::wait); hang-ups and the
    /// command's exit still do): the first [`drain`](Session::drain) after
    /// [`stop`](Session::stop) delivers what each ring holds then, its newest `data_size`
    /// bytes, newest first (under `PERF_EVENT_IOC_PAUSE_OUTPUT`, as perf reads them); to read
    /// while it runs, [`collect_overwrite`](Session::collect_overwrite) before a drain.
    pub fn overwrite(mut self, overwrite: bool) -> Self {
        self.overwrite = overwrite;
        self
    }

    /// A ring per task instead of per CPU (`true`), perf record's `--per-thread`: each event is
    /// opened once per task on any CPU (`cpu = -1`), its records in that task's ring, whose
    /// [`Session::cpus`] entry is [`ANY_CPU`]. The session then sets no `inherit` (the kernel
    /// refuses an inherited event of a task with a ring of its own mapped, and children would
    /// not be followed into it). Ignored for a CPU-wide scope, as perf ignores it with `-a`.
    pub fn per_thread(mut self, per_thread: bool) -> Self {
        self.per_thread = per_thread;
        self
    }

    /// Where a command's standard output goes ([`Stdout::ToStderr`] when this process writes
    /// data to its own stdout, as `perf record -o -` does).
    pub fn command_stdout(mut self, stdout: Stdout) -> Self {
        self.stdout = stdout;
        self
    }

    /// What [`open`](Self::open) refuses before anything is opened or forked.
    fn check(&self) -> Result<(), LinuxError> {
        if self.attrs.is_empty() {
            return Err(LinuxError::NoEvents);
        }
        match &self.scope {
            Scope::Command(argv) if argv.is_empty() => return Err(LinuxError::EmptyCommand),
            &Scope::Process(pid) if pid <= 0 => return Err(LinuxError::InvalidPid { pid }),
            _ => {}
        }
        if !self.data_pages.is_power_of_two() {
            return Err(LinuxError::RingSize { data_pages: self.data_pages });
        }
        for (event, c) in &self.cgroups {
            let cgroup = c.name().to_string();
            let (events, cpu_wide) = (self.attrs.len(), self.scope.cpu_wide());
            if *event >= events || !cpu_wide {
                return Err(LinuxError::CgroupMisplaced { cgroup, event: *event, events, cpu_wide });
            }
        }
        for (member, leader) in self.leaders.iter().enumerate() {
            if let Some(l) = *leader {
                if l >= member || self.leaders[l].is_some() {
                    return Err(LinuxError::BadGroup { member, leader: l });
                }
            }
        }
        // Checked before anything is opened; the set itself is made of the attrs the kernel took.
        let mut check = EventSet::new(vec![EventLayout::EMPTY; self.attrs.len()], [IdEntry::EMPTY; 0]);
        for a in &self.attrs {
            check.add_event(a.attr(), Endian::NATIVE).map_err(LinuxError::EventSet)?;
        }
        check.consistency().map_err(LinuxError::EventSet)
    }

    /// Open every event on every online CPU (and, for a process, every thread), map one ring
    /// per CPU and point the CPU's other events at it. A command is started held before
    /// `exec`, so that nothing of it runs unobserved; [`Session::start`] lets it go.
    ///
    /// Refused before anything is opened or forked: no event ([`LinuxError::NoEvents`]), an
    /// empty command ([`LinuxError::EmptyCommand`]), a pid that is not positive
    /// ([`LinuxError::InvalidPid`]) or names no process ([`LinuxError::NoSuchProcess`]),
    /// `data_pages` not a power of two ≥ 1 ([`LinuxError::RingSize`]).
    pub fn open(self) -> Result<Session, LinuxError> {
        self.check()?;
        let mut cpus = online_cpus()?;
        if let Scope::Cpus(asked) = &self.scope {
            cpus.retain(|c| asked.contains(c));
            if cpus.is_empty() {
                return Err(LinuxError::NoSuchCpu { cpus: asked.clone() });
            }
        }
        let (command, tasks) = self.scope.tasks(self.stdout)?;
        let per_thread = self.per_thread && !self.scope.cpu_wide();
        let mut attrs: Vec<EventAttr> = if self.as_given {
            self.attrs.clone()
        } else {
            let inherit = !self.scope.cpu_wide() && !per_thread;
            self.attrs
                .iter()
                .map(|a| a.flag(attr_flags::INHERIT, inherit).flag(attr_flags::ENABLE_ON_EXEC, command.is_some()))
                .collect()
        };
        if self.overwrite {
            attrs = attrs.into_iter().map(|a| a.flag(attr_flags::WRITE_BACKWARD, true)).collect();
        }
        let rings = if per_thread { per_task(&tasks) } else { per_cpu(&tasks, &cpus) };
        let cpus: Vec<u32> = rings.iter().map(|r| r.cpu).collect();
        let mut cgroups: Vec<Option<&Cgroup>> = vec![None; attrs.len()];
        for (event, c) in &self.cgroups {
            cgroups[*event] = Some(c);
        }
        let opened = open_events(&attrs, &self.leaders, &cgroups, &rings, self.data_pages, self.overwrite);
        let (events, rings, set, epoll) = match opened {
            Ok(opened) => opened,
            Err(e) => {
                // The command never runs unobserved: it dies held before exec.
                if let Some(mut command) = command {
                    let _ = command.kill();
                }
                return Err(e);
            }
        };
        let lost = vec![0; rings.len()];
        let cpus_len = rings.len();
        // The command's exit wakes a wait (a kernel without pidfd_open: each wait checks).
        let pidfd = command.as_ref().and_then(|c| sys::pidfd_open(c.pid()).ok());
        if let Some(fd) = &pidfd {
            epoll.add(fd.as_fd(), COMMAND_EXIT).map_err(io_err("epoll_ctl"))?;
        }
        Ok(Session {
            scope: self.scope,
            command,
            events,
            rings,
            cpus,
            set,
            epoll,
            lost,
            pidfd,
            ready: Vec::new(),
            scratch: RecordScratch(Box::default()),
            started: false,
            status: None,
            overwrite: self.overwrite.then(|| vec![0; cpus_len]),
            collect: false,
            stopped: false,
            released: false,
            affinity: Vec::new(),
            moved_for: None,
            flush: 0,
        })
    }
}

impl Scope {
    /// The command launched (held before `exec`) and the tasks to open events on: its pid, a
    /// process's threads, the threads given, or -1 (every task) for a CPU-wide scope.
    fn tasks(&self, stdout: Stdout) -> Result<(Option<Launch>, Vec<i32>), LinuxError> {
        Ok(match self {
            Scope::Command(argv) => {
                let launch = Launch::spawn_with(argv, stdout)?;
                let pid = launch.pid();
                (Some(launch), vec![pid])
            }
            &Scope::Process(pid) => (None, threads_of(pid)?),
            Scope::Processes(pids) => {
                let mut tids = Vec::new();
                for &pid in pids {
                    if pid <= 0 {
                        return Err(LinuxError::InvalidPid { pid });
                    }
                    tids.extend(threads_of(pid)?);
                }
                (None, tids)
            }
            Scope::Threads(tids) => {
                for &tid in tids {
                    if tid <= 0 {
                        return Err(LinuxError::InvalidPid { pid: tid });
                    }
                    if !std::path::Path::new(&format!("/proc/{tid}")).exists() {
                        return Err(LinuxError::NoSuchProcess { pid: tid });
                    }
                }
                (None, tids.clone())
            }
            Scope::AllCpus | Scope::Cpus(_) => (None, vec![-1]),
        })
    }
}

/// Where one event was opened ([`Session::placements`]): what perf's ID_INDEX record lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Placement {
    /// The event's index (the order of [`SessionBuilder::event`]).
    pub event: usize,
    /// The id the kernel gave this opening.
    pub id: u64,
    /// The CPU ([`ANY_CPU`]: any, the task's own ring).
    pub cpu: u32,
    /// The task (-1: every task on the CPU).
    pub task: i32,
}

/// Events of a command, a process or all CPUs, read through one ring per CPU. Made by [`Session::command`], [`Session::process`] or
/// [`Session::all_cpus`]; started by [`start`](Session::start) (or [`run`](Session::run)),
/// read with [`wait`](Session::wait) and [`drain`](Session::drain). [`AsFd`]: one descriptor
/// readable whenever a ring has a wakeup or an event hung up (an epoll set of them all), for
/// epoll, tokio's `AsyncFd` or smol. Dropping it closes the events; a command it started runs
/// on to its end, and the drop waits for it; a command never started is killed before it
/// runs (as [`Launch`] does).
///
/// What a profiler writes by hand, done once — events opened for a command, a
/// process or every CPU, one ring per CPU that all of them share (`SET_OUTPUT`), an
/// [`EventSet`] that attributes each record to its event, waiting, draining, loss per ring.
///
/// The steps of [`Session::run`], for a caller with its own loop (a progress line, a stop
/// button, a reactor: the session is [`AsFd`]):
///
/// ```
/// # fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use std::time::Duration;
/// use perfring::record::{sample_type as st, EventRecord};
/// use perfring_linux::{software, EventAttr, Session};
/// let attr = EventAttr::software(software::TASK_CLOCK).sample_period(100_000).sample_type(st::IP | st::CPU);
/// // A refusal (perf_event_paranoid, say) is a typed error that says what to change.
/// let mut session = Session::command(["sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done"])
///     .event(attr)
///     .data_pages(4)
///     .open()?;
/// session.start()?; // the command execs; enable_on_exec starts its events
/// let mut records = 0;
/// let mut on_cpu = |r: &perfring_linux::SessionRecord<'_>| {
///     // Each ring is one CPU's: its samples were taken there.
///     assert!(r.sample().map_or(true, |s| s.cpu().map(|c| c.cpu) == Some(r.cpu())));
///     records += 1;
/// };
/// while !session.wait(Some(Duration::from_millis(50))).unwrap() {
///     session.drain(&mut on_cpu).unwrap();
/// }
/// session.drain(&mut on_cpu).unwrap(); // what came after the last wakeup
/// assert_eq!(session.exit_status().unwrap(), Some(0));
/// assert!(records > 0, "{} lost", session.lost_total());
/// # Ok(()) }
/// # // Refused here (not permitted, no such event): a visible skip, not a failure.
/// # fn main() { perfring_test_support::doc_example!(example()) }
/// ```
#[derive(Debug)]
pub struct Session {
    scope: Scope,
    command: Option<Launch>,
    /// Per CPU (in `cpus` order): the ring owner first, then the events pointed at its ring.
    events: Vec<Opened>,
    /// One per CPU, in `cpus` order.
    rings: Vec<Ring>,
    cpus: Vec<u32>,
    set: EventSet<Vec<EventLayout>, Vec<IdEntry>>,
    epoll: sys::Epoll,
    /// Σ of the LOST records drained from each ring.
    lost: Vec<u64>,
    /// The command's pidfd, in the epoll set as [`COMMAND_EXIT`].
    pidfd: Option<std::os::fd::OwnedFd>,
    /// What the last `epoll_wait` reported: (token, readable, hung up).
    ready: Vec<(u64, bool, bool)>,
    /// Where a record that wraps around a ring's end is copied whole: perfring's [`Scratch`],
    /// which holds the largest record (a u16 size), so that no record can stop a drain
    /// ([`perfring::consumer::ReadError::ScratchTooSmall`] cannot happen).
    scratch: RecordScratch,
    started: bool,
    status: Option<i32>,
    /// An overwrite session ([`SessionBuilder::overwrite`]): each ring's head at its last read
    /// (the backward reader's `prev`; 0 before the first).
    overwrite: Option<Vec<usize>>,
    /// [`collect_overwrite`](Session::collect_overwrite) was called: the next drain reads.
    collect: bool,
    /// [`stop`](Session::stop) was called.
    stopped: bool,
    /// [`release_rings`](Session::release_rings) was called: no event is in the epoll set.
    released: bool,
    /// [`set_affinity`](Session::set_affinity): the CPUs to read each ring on (empty: any), and
    /// the ring whose CPUs the reading thread was last moved to.
    affinity: Vec<Vec<u32>>,
    moved_for: Option<usize>,
    /// [`flush_at`](Session::flush_at): a running session's drain skips a ring holding fewer
    /// bytes (0 or 1: none skipped).
    flush: usize,
}

/// The epoll token of the command's pidfd (an event's token is its index in `events`).
const COMMAND_EXIT: u64 = u64::MAX;

/// A session's [`Scratch`], boxed (64 KiB: room for any record, whose size is a u16).
struct RecordScratch(Box<Scratch>);

// Every record fits: a drain can never stop on `ReadError::ScratchTooSmall`.
const _: () = assert!(std::mem::size_of::<Scratch>() > u16::MAX as usize);

impl std::fmt::Debug for RecordScratch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Scratch({} bytes)", self.0.len())
    }
}

impl Session {
    /// A session over a command: `argv[0]` (looked up in `PATH`) with its arguments.
    pub fn command<S: Into<String>>(argv: impl IntoIterator<Item = S>) -> SessionBuilder {
        Self::builder(Scope::Command(argv.into_iter().map(Into::into).collect()))
    }

    /// A session over a running process's threads.
    pub fn process(pid: i32) -> SessionBuilder {
        Self::builder(Scope::Process(pid))
    }

    /// A session over every CPU.
    pub fn all_cpus() -> SessionBuilder {
        Self::builder(Scope::AllCpus)
    }

    /// A session over `scope`.
    pub fn builder(scope: Scope) -> SessionBuilder {
        SessionBuilder {
            scope,
            attrs: Vec::new(),
            leaders: Vec::new(),
            as_given: false,
            data_pages: 16,
            stdout: Stdout::Inherit,
            overwrite: false,
            per_thread: false,
            cgroups: Vec::new(),
        }
    }

    /// Start: let the command `exec` (its events start there), or enable every event. Nothing
    /// runs or is recorded before this call (or [`run`](Session::run)). [`LinuxError::Exec`] if the
    /// command could not be executed, on this call and every later one (the command has then
    /// exited with status 127, which [`exit_status`](Session::exit_status) gives); once
    /// started, a further call is `Ok(())`.
    pub fn start(&mut self) -> Result<(), LinuxError> {
        match &mut self.command {
            Some(command) => {
                // Released whether or not the exec succeeds: the command ends either way.
                self.started = true;
                command.start()
            }
            None if !self.started => {
                self.enable()?;
                self.started = true;
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// [`start`](Session::start) without enabling any event: a command is let `exec` (its
    /// events with `enable_on_exec` start there, the others stay disabled); without a command
    /// nothing is enabled, so only events opened enabled (`disabled` off) record. Enable the
    /// rest later with [`enable`](Session::enable): perf record's `-D`, a delay before
    /// measuring, the side band recorded meanwhile by an event of its own.
    pub fn start_disabled(&mut self) -> Result<(), LinuxError> {
        match self.command {
            Some(_) => self.start(),
            None => {
                self.started = true;
                Ok(())
            }
        }
    }

    /// Enable every event (`PERF_EVENT_IOC_ENABLE` on each): after
    /// [`start_disabled`](Session::start_disabled), or to resume after [`stop`](Session::stop)
    /// (an overwrite session's rings are still read once only, after the first stop).
    pub fn enable(&mut self) -> Result<(), LinuxError> {
        self.events.iter().try_for_each(|o| o.event.enable())
    }

    /// Stop every event (the command, if any, runs on). An overwrite session's rings are read
    /// by the next [`drain`](Session::drain).
    pub fn stop(&mut self) -> Result<(), LinuxError> {
        self.stopped = true;
        self.events.iter().try_for_each(|o| o.event.disable())
    }

    /// Block until a ring has a wakeup, an event hangs up, or `timeout` passes (`None`:
    /// forever). Returns whether the session has ended: the command exited, or every thread
    /// of the process did (a session over all CPUs ends only when the caller stops). After the
    /// end, [`drain`](Session::drain) once more.
    ///
    /// [`LinuxError::NotStarted`] before [`start`](Session::start): waiting never starts the
    /// command (it is held before `exec` until `start`), and nothing would wake it.
    pub fn wait(&mut self, timeout: Option<Duration>) -> Result<bool, LinuxError> {
        if !self.started {
            return Err(LinuxError::NotStarted);
        }
        if self.status.is_some() {
            return Ok(true);
        }
        let watched = self.pidfd.is_some() || !self.released && self.events.iter().any(|o| !o.hung_up);
        if !watched {
            // Every event hung up, the command not yet reaped: a short pause, not a spin (a
            // session whose rings are read elsewhere: a pause of up to 100 ms).
            let pause = if self.released { 100 } else { 10 };
            std::thread::sleep(timeout.unwrap_or(Duration::MAX).min(Duration::from_millis(pause)));
            return self.ended();
        }
        let ms = timeout_ms(timeout);
        self.epoll.wait(&mut self.ready, ms).map_err(io_err("epoll_wait"))?;
        // Whether the end may have come: a timeout or a signal (nothing ready), the command's
        // pidfd, a hang-up; without a pidfd, every time.
        let mut check = self.ready.is_empty() || self.pidfd.is_none();
        for &(token, _, hangup) in &self.ready {
            if token == COMMAND_EXIT {
                check = true;
            } else if let Some(o) = self.events.get_mut(token as usize).filter(|o| hangup && !o.hung_up) {
                // Level-triggered: a hung-up event would be reported by every later wait.
                o.hung_up = true;
                self.epoll.delete(o.event.as_fd()).map_err(io_err("epoll_ctl"))?;
                check = true;
            }
        }
        if check {
            self.ended()
        } else {
            Ok(false)
        }
    }

    fn ended(&mut self) -> Result<bool, LinuxError> {
        if let Some(command) = &mut self.command {
            self.status = command.try_wait()?;
            return Ok(self.status.is_some());
        }
        if self.released {
            // No hang-up is seen any more: the followed tasks' /proc entries say they ended.
            let gone = |o: &Opened| !std::path::Path::new(&format!("/proc/{}", o.task)).exists();
            return Ok(!self.scope.cpu_wide() && self.events.iter().all(gone));
        }
        Ok(!self.scope.cpu_wide() && self.events.iter().all(|o| o.hung_up))
    }

    /// Take every event out of the session's epoll set, for a caller that reads the rings
    /// elsewhere (perf record --threads: reader threads, each polling its rings on a mapping of
    /// its own). A perf event's poll takes its ring's pending wakeup (`rb->poll` is exchanged
    /// for 0), so an epoll set that keeps the events, even watching for nothing, takes the
    /// wakeups from the other pollers. [`wait`](Session::wait) then wakes for the command's
    /// exit (or every 100 ms without a command; a process or thread followed has ended when
    /// its /proc entry is gone). [`drain`](Session::drain) still reads the rings.
    pub fn release_rings(&mut self) -> Result<(), LinuxError> {
        for o in self.events.iter().filter(|o| !o.hung_up) {
            self.epoll.delete(o.event.as_fd()).map_err(io_err("epoll_ctl"))?;
        }
        self.released = true;
        Ok(())
    }

    /// Hand every record now in the rings to `f`, ring by ring (oldest first within a ring),
    /// and free their space; returns how many. LOST records are also added to
    /// [`lost`](Session::lost). A record that wraps around a ring's end is copied whole into
    /// the session's own [`Scratch`] (64 KiB, room for any record), so a drain never stops
    /// on one. Before [`start`](Session::start), nothing has been recorded: 0.
    ///
    /// An overwrite session ([`SessionBuilder::overwrite`]) delivers nothing before
    /// [`stop`](Session::stop); the first drain after it reads each ring once, newest record
    /// first, its output paused.
    pub fn drain(&mut self, mut f: impl FnMut(&SessionRecord<'_>)) -> Result<usize, LinuxError> {
        if self.overwrite.is_some() {
            return self.drain_overwrite(f);
        }
        let mut n = 0;
        for (ring_index, ring) in self.rings.iter().enumerate() {
            let (set, lost, cpu) = (&self.set, &mut self.lost[ring_index], self.cpus[ring_index]);
            let mut consumer = ring.consumer()?;
            move_for(&self.affinity, &mut self.moved_for, ring_index)?;
            if self.flush > 1 && !self.stopped && consumer.available()? < self.flush {
                continue;
            }
            n += consumer.for_each(&mut self.scratch.0[..], |raw| {
                if raw.header.type_ == types::LOST {
                    // `{header, u64 id, u64 lost, …}`: the count at offset 16.
                    *lost += Endian::NATIVE.u64_at(raw.bytes, 16).unwrap_or(0);
                }
                f(&SessionRecord::new(set, raw, ring_index, cpu));
            })?;
        }
        Ok(n)
    }

    /// Have [`drain`](Session::drain) read each ring on its CPU or its NUMA node's CPUs (the
    /// calling thread moved with `sched_setaffinity` before it reads a ring of another CPU
    /// set than the last one's), as perf record's `--affinity` does; [`Affinity::Any`]: where
    /// it runs (the thread is not moved back). A ring of [`ANY_CPU`] is read wherever the
    /// thread is. The NUMA nodes are read from sysfs (`/sys/devices/system/node`); without
    /// them a node is every online CPU.
    pub fn set_affinity(&mut self, affinity: Affinity) -> Result<(), LinuxError> {
        let nodes = if affinity == Affinity::Node { numa_nodes() } else { Vec::new() };
        self.affinity = self
            .cpus
            .iter()
            .map(|&cpu| match affinity {
                _ if cpu == ANY_CPU => Vec::new(),
                Affinity::Any => Vec::new(),
                Affinity::Cpu => vec![cpu],
                Affinity::Node => nodes.iter().find(|n| n.contains(&cpu)).cloned().unwrap_or_default(),
            })
            .collect();
        self.moved_for = None;
        Ok(())
    }

    /// Have [`drain`](Session::drain) read a ring only once it holds at least `bytes` bytes, as
    /// perf record's `--mmap-flush` does: fewer, larger copies while the session runs. After
    /// [`stop`](Session::stop) every ring is read whole. 0 or 1 (the default): every ring on
    /// every drain. (A ring's wakeup should come at or above `bytes`, or a wait may end with
    /// nothing drained.)
    pub fn flush_at(&mut self, bytes: usize) {
        self.flush = bytes;
    }

    /// Have the next [`drain`](Session::drain) of an overwrite session read its rings while it
    /// runs (perf record's `--switch-output` dump of a flight recorder): each is paused, read
    /// for what it holds that no earlier read delivered, and resumed. A no-op for other sessions.
    pub fn collect_overwrite(&mut self) {
        self.collect = self.overwrite.is_some();
    }

    /// [`drain`](Session::drain) of an overwrite session: after [`stop`](Session::stop) or
    /// [`collect_overwrite`](Session::collect_overwrite), each ring's records since its last
    /// read, its output paused around the read (and resumed while the session runs).
    fn drain_overwrite(&mut self, mut f: impl FnMut(&SessionRecord<'_>)) -> Result<usize, LinuxError> {
        let Some(prev) = self.overwrite.as_mut().filter(|_| self.stopped || self.collect) else { return Ok(0) };
        self.collect = false;
        let mut n = 0;
        for (ring_index, ring) in self.rings.iter().enumerate() {
            let (set, cpu) = (&self.set, self.cpus[ring_index]);
            ring.pause_output(true)?;
            let mut reader = perfring::backward::BackwardReader::resume(ring.read_only(), false, prev[ring_index])?;
            let read = reader.read(&mut self.scratch.0[..], |raw| {
                f(&SessionRecord::new(set, raw, ring_index, cpu));
            });
            prev[ring_index] = reader.prev();
            if !self.stopped {
                ring.pause_output(false)?;
            }
            n += read?.records;
        }
        Ok(n)
    }

    /// Whether a wakeup of ring `ring` (an index into [`rings`](Session::rings)) ends a
    /// [`wait`](Session::wait) (`true` for every ring when the session opens). A ring not
    /// watched is still drained by every [`drain`](Session::drain): this is for a caller that
    /// drains every ring on each wakeup, so that rings filling alike do not wake it once each.
    /// A ring not watched does not report its events' hang-ups either (a command's exit is
    /// still seen). An index past the rings is ignored.
    /// An overwrite session's rings wake nothing: a no-op there.
    pub fn watch_ring(&mut self, ring: usize, watch: bool) -> Result<(), LinuxError> {
        if ring >= self.rings.len() || self.overwrite.is_some() {
            return Ok(());
        }
        for (token, o) in self.events.iter().enumerate() {
            if o.ring == ring && !o.hung_up {
                self.epoll.modify(o.event.as_fd(), token as u64, watch).map_err(io_err("epoll_ctl"))?;
            }
        }
        Ok(())
    }

    /// Everything in one call: [`start`](Session::start), [`wait`](Session::wait) and
    /// [`drain`](Session::drain) until the end (or until SIGINT/SIGTERM, if
    /// [`catch_interrupts`](crate::launch::catch_interrupts) was called), then stop and drain
    /// once more. Returns the command's exit status (`None` without a command).
    pub fn run(&mut self, mut f: impl FnMut(&SessionRecord<'_>)) -> Result<Option<i32>, LinuxError> {
        self.start()?;
        while !self.wait(Some(Duration::from_millis(100)))? && !crate::launch::interrupted() {
            self.drain(&mut f)?;
        }
        self.stop()?;
        self.drain(&mut f)?;
        self.exit_status()
    }

    /// The command's exit status, waiting for it to end (`None` without a command). 127: the
    /// command could not be executed ([`start`](Session::start) said so with
    /// [`LinuxError::Exec`]); 128 + N: killed by signal N. [`LinuxError::NotStarted`] before
    /// [`start`](Session::start): waiting never starts the command.
    pub fn exit_status(&mut self) -> Result<Option<i32>, LinuxError> {
        match &mut self.command {
            Some(command) => Ok(Some(command.wait()?)),
            None => Ok(None),
        }
    }

    /// Send `signal` to the command (`libc::SIGINT` to pass on an interrupt; a no-op
    /// without a command or after it was reaped).
    pub fn signal_command(&mut self, signal: i32) -> Result<(), LinuxError> {
        match &mut self.command {
            Some(command) => command.signal(signal),
            None => Ok(()),
        }
    }

    /// The command's pid (`None` without a command).
    pub fn pid(&self) -> Option<i32> {
        self.command.as_ref().map(Launch::pid)
    }

    /// The events and their ids, for decoding records and for writing perf.data (each event's
    /// attr, as the kernel accepted it, and the ids registered to it).
    pub fn event_set(&self) -> &EventSet<Vec<EventLayout>, Vec<IdEntry>> {
        &self.set
    }

    /// The rings, one per CPU (each [`AsFd`]).
    pub fn rings(&self) -> &[Ring] {
        &self.rings
    }

    /// The CPU of each ring ([`ANY_CPU`] for a task's own ring, [`SessionBuilder::per_thread`]).
    pub fn cpus(&self) -> &[u32] {
        &self.cpus
    }

    /// Records each ring lost, as its LOST records drained so far report them.
    pub fn lost(&self) -> &[u64] {
        &self.lost
    }

    /// Records lost in all rings (Σ [`lost`](Session::lost)).
    pub fn lost_total(&self) -> u64 {
        self.lost.iter().sum()
    }

    /// Every open event (per CPU, per thread, per event of the builder).
    pub fn events(&self) -> impl Iterator<Item = &Event> + '_ {
        self.events.iter().map(|o| &o.event)
    }

    /// Where each event was opened: its index, id, CPU and task, in the order of
    /// [`events`](Session::events).
    pub fn placements(&self) -> impl Iterator<Item = Placement> + '_ {
        self.events.iter().map(|o| Placement { event: o.index, id: o.event.id(), cpu: o.cpu, task: o.task })
    }

    /// The tasks the events follow (-1 alone for CPU-wide sessions), in order, each once.
    pub fn tasks(&self) -> Vec<i32> {
        let mut tasks: Vec<i32> = Vec::new();
        for o in &self.events {
            if !tasks.contains(&o.task) {
                tasks.push(o.task);
            }
        }
        tasks
    }
}

impl AsFd for Session {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.epoll.fd()
    }
}

impl AsRawFd for Session {
    fn as_raw_fd(&self) -> RawFd {
        self.epoll.fd().as_raw_fd()
    }
}
