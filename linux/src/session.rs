//! [`Session`]: what a profiler writes by hand, done once — events opened for a command, a
//! process or every CPU, one ring per CPU that all of them share (`SET_OUTPUT`), an
//! [`EventSet`] that attributes each record to its event, waiting, draining, loss per ring.
//!
//! The steps of [`Session::run`], for a caller with its own loop (a progress line, a stop
//! button, a reactor: the session is [`AsFd`]):
//!
//! ```
//! # fn example() -> Result<(), Box<dyn std::error::Error>> {
//! use std::time::Duration;
//! use perfring::record::sample_type as st;
//! use perfring_linux::{attr::software, EventAttr, Session};
//! let attr = EventAttr::software(software::TASK_CLOCK).sample_period(100_000).sample_type(st::IP | st::CPU);
//! // A refusal (perf_event_paranoid, say) is a typed error that says what to change.
//! let mut session = Session::command(["sh", "-c", "i=0; while [ $i -lt 30000 ]; do i=$((i+1)); done"])
//!     .event(attr)
//!     .data_pages(4)
//!     .open()?;
//! session.start()?; // the command execs; enable_on_exec starts its events
//! let mut records = 0;
//! let mut on_cpu = |r: &perfring_linux::SessionRecord<'_>| {
//!     // Each ring is one CPU's: its samples were taken there.
//!     assert!(r.sample().map_or(true, |s| s.cpu().map(|c| c.cpu) == Some(r.cpu)));
//!     records += 1;
//! };
//! while !session.wait(Some(Duration::from_millis(50))).unwrap() {
//!     session.drain(&mut on_cpu).unwrap();
//! }
//! session.drain(&mut on_cpu).unwrap(); // what came after the last wakeup
//! assert_eq!(session.exit_status().unwrap(), Some(0));
//! assert!(records > 0, "{} lost", session.lost_total());
//! # Ok(()) }
//! # // Refused here (not permitted, no such event): a visible skip, not a failure.
//! # fn main() { perfring_test_support::doc_example!(example()) }
//! ```

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::time::Duration;

use perfring::consumer::{RawRecord, Scratch};
use perfring::record::{
    types, AttributeError, DecodeError, Endian, EventLayout as Layout, EventSet, EventSetError, FixedSample, Header,
    IdEntry, Inconsistency, Record, RecordView, SampleError, SampleView,
};

use crate::error::{io as io_err, Error, OpenError};
use crate::event::{online_cpus, Event, Target};
use crate::launch::{Launch, Stdout};
use crate::ring::Ring;
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
}

/// A [`Session`] being set up: [`event`](SessionBuilder::event) for each event, then
/// [`open`](SessionBuilder::open).
#[derive(Debug, Clone)]
#[must_use = "a SessionBuilder does nothing until open()"]
pub struct SessionBuilder {
    scope: Scope,
    attrs: Vec<EventAttr>,
    data_pages: usize,
    stdout: Stdout,
}

impl SessionBuilder {
    /// Add an event (its index in records is the order of the calls: 0, 1, …). The session
    /// sets what its scope needs: `inherit` for a command or a process (off for all CPUs) and
    /// `enable_on_exec` for a command; with several events, records are told apart by their
    /// id, so each needs `PERF_SAMPLE_IDENTIFIER` (or the same `ID` position) — checked by
    /// [`open`](SessionBuilder::open).
    pub fn event(mut self, attr: EventAttr) -> Self {
        self.attrs.push(attr);
        self
    }

    /// Data pages of each CPU's ring: a power of two, at least 1 (default 16). Another number
    /// (0 among them: a ring of the control page alone holds no records) is
    /// [`SessionError::DataPages`] from [`open`](SessionBuilder::open), before anything is
    /// opened or started.
    pub fn data_pages(mut self, pages: usize) -> Self {
        self.data_pages = pages;
        self
    }

    /// Where a command's standard output goes ([`Stdout::ToStderr`] when this process writes
    /// data to its own stdout, as `perf record -o -` does).
    pub fn command_stdout(mut self, stdout: Stdout) -> Self {
        self.stdout = stdout;
        self
    }

    /// Open every event on every online CPU (and, for a process, every thread), map one ring
    /// per CPU and point the CPU's other events at it. A command is started held before
    /// `exec`, so that nothing of it runs unobserved; [`Session::start`] lets it go.
    ///
    /// Refused before anything is opened or forked: no event ([`SessionError::NoEvents`]), an
    /// empty command ([`SessionError::EmptyCommand`]), a pid that is not positive
    /// ([`SessionError::InvalidPid`]) or names no process ([`SessionError::NoSuchProcess`]),
    /// `data_pages` not a power of two ≥ 1 ([`SessionError::DataPages`]).
    pub fn open(self) -> Result<Session, SessionError> {
        if self.attrs.is_empty() {
            return Err(SessionError::NoEvents);
        }
        match &self.scope {
            Scope::Command(argv) if argv.is_empty() => return Err(SessionError::EmptyCommand),
            &Scope::Process(pid) if pid <= 0 => return Err(SessionError::InvalidPid { pid }),
            _ => {}
        }
        if !self.data_pages.is_power_of_two() {
            return Err(SessionError::DataPages { data_pages: self.data_pages });
        }
        // Checked before anything is opened; the set itself is made of the attrs the kernel took.
        let mut check = EventSet::new(vec![Layout::EMPTY; self.attrs.len()], [IdEntry::EMPTY; 0]);
        for a in &self.attrs {
            check.add_event(a.attr(), Endian::NATIVE).map_err(SessionError::EventSet)?;
        }
        check.consistency().map_err(SessionError::Ambiguous)?;
        let cpus = online_cpus()?;
        let (command, tasks) = match &self.scope {
            Scope::Command(argv) => {
                let launch = Launch::spawn_with(argv, self.stdout)?;
                let pid = launch.pid();
                (Some(launch), vec![pid])
            }
            Scope::Process(pid) => (None, threads_of(*pid)?),
            Scope::AllCpus => (None, vec![-1]),
        };
        let attrs: Vec<EventAttr> = self
            .attrs
            .iter()
            .map(|a| a.inherit(self.scope != Scope::AllCpus).enable_on_exec(command.is_some()))
            .collect();
        let (events, rings, set, epoll) = match open_events(&attrs, &tasks, &cpus, self.data_pages) {
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
        Ok(Session {
            scope: self.scope,
            command,
            events,
            rings,
            cpus,
            set,
            epoll,
            lost,
            scratch: RecordScratch(Box::default()),
            started: false,
            status: None,
        })
    }
}

/// What a session is made of: the events (per CPU: the ring owner first), a ring per CPU, the
/// event set of the attrs the kernel accepted and every id, an epoll set of the events.
type OpenedParts = (Vec<Opened>, Vec<Ring>, EventSet<Vec<Layout>, Vec<IdEntry>>, sys::Epoll);

/// Open each of `attrs` for each of `tasks` (-1: every task) on each of `cpus`; one ring per
/// CPU of `data_pages`, the CPU's other events pointed at it.
fn open_events(
    attrs: &[EventAttr],
    tasks: &[i32],
    cpus: &[u32],
    data_pages: usize,
) -> Result<OpenedParts, SessionError> {
    let mut events: Vec<Opened> = Vec::new();
    let mut rings = Vec::new();
    let epoll = sys::Epoll::new().map_err(io_err("epoll_create1"))?;
    for &cpu in cpus {
        let owner = events.len();
        for &task in tasks {
            for (index, attr) in attrs.iter().enumerate() {
                let target = if task < 0 { Target::Cpu(cpu) } else { Target::TaskOnCpu(task, cpu) };
                let event =
                    Event::open(attr, target, None).map_err(|error| SessionError::Open { event: index, cpu, error })?;
                if events.len() == owner {
                    rings.push(Ring::map(&event, data_pages, true)?);
                } else {
                    event.set_output(Some(&events[owner].event))?;
                }
                epoll.add(event.as_fd()).map_err(io_err("epoll_ctl"))?;
                events.push(Opened { event, index, hung_up: false });
            }
        }
    }
    // Each event's attr as the kernel accepted it (its size may be the kernel's), with the
    // flags the scope set, and every id it was given.
    // Twice the ids: the set's hash table then finds an id at its first slot.
    let mut set = EventSet::new(vec![Layout::EMPTY; attrs.len()], vec![IdEntry::EMPTY; 2 * events.len()]);
    for (index, attr) in attrs.iter().enumerate() {
        let first = events.iter().find(|o| o.index == index).map_or(attr.attr(), |o| o.event.attr());
        set.add_event(first, Endian::NATIVE).map_err(SessionError::EventSet)?;
    }
    for o in &events {
        set.add_id(o.index, o.event.id()).map_err(SessionError::EventSet)?;
    }
    Ok((events, rings, set, epoll))
}

/// One event of a session: the open event, its index in the builder, whether it hung up.
#[derive(Debug)]
struct Opened {
    event: Event,
    index: usize,
    hung_up: bool,
}

/// Events of a command, a process or all CPUs, read through one ring per CPU (see the
/// [module docs](self)). Made by [`Session::command`], [`Session::process`] or
/// [`Session::all_cpus`]; started by [`start`](Session::start) (or [`run`](Session::run)),
/// read with [`wait`](Session::wait) and [`drain`](Session::drain). [`AsFd`]: one descriptor
/// readable whenever a ring has a wakeup or an event hung up (an epoll set of them all), for
/// epoll, tokio's `AsyncFd` or smol. Dropping it closes the events; a command it started runs
/// on to its end, and the drop waits for it; a command never started is killed before it
/// runs (as [`Launch`] does).
#[derive(Debug)]
pub struct Session {
    scope: Scope,
    command: Option<Launch>,
    /// Per CPU (in `cpus` order): the ring owner first, then the events pointed at its ring.
    events: Vec<Opened>,
    /// One per CPU, in `cpus` order.
    rings: Vec<Ring>,
    cpus: Vec<u32>,
    set: EventSet<Vec<Layout>, Vec<IdEntry>>,
    epoll: sys::Epoll,
    /// Σ of the LOST records drained from each ring.
    lost: Vec<u64>,
    /// Where a record that wraps around a ring's end is copied whole: perfring's [`Scratch`],
    /// which holds the largest record (a u16 size), so that no record can stop a drain
    /// ([`perfring::ReadError::ScratchTooSmall`] cannot happen).
    scratch: RecordScratch,
    started: bool,
    status: Option<i32>,
}

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
        SessionBuilder { scope, attrs: Vec::new(), data_pages: 16, stdout: Stdout::Inherit }
    }

    /// Start: let the command `exec` (its events start there), or enable every event. Nothing
    /// runs or is recorded before this call (or [`run`](Session::run)). [`Error::Exec`] if the
    /// command could not be executed, on this call and every later one (the command has then
    /// exited with status 127, which [`exit_status`](Session::exit_status) gives); once
    /// started, a further call is `Ok(())`.
    pub fn start(&mut self) -> Result<(), Error> {
        match &mut self.command {
            Some(command) => {
                // Released whether or not the exec succeeds: the command ends either way.
                self.started = true;
                command.start()
            }
            None if !self.started => {
                self.events.iter().try_for_each(|o| o.event.enable())?;
                self.started = true;
                Ok(())
            }
            None => Ok(()),
        }
    }

    /// Stop every event (the command, if any, runs on).
    pub fn stop(&mut self) -> Result<(), Error> {
        self.events.iter().try_for_each(|o| o.event.disable())
    }

    /// Block until a ring has a wakeup, an event hangs up, or `timeout` passes (`None`:
    /// forever). Returns whether the session has ended: the command exited, or every thread
    /// of the process did (a session over all CPUs ends only when the caller stops). After the
    /// end, [`drain`](Session::drain) once more.
    ///
    /// [`Error::NotStarted`] before [`start`](Session::start): waiting never starts the
    /// command (it is held before `exec` until `start`), and nothing would wake it.
    pub fn wait(&mut self, timeout: Option<Duration>) -> Result<bool, Error> {
        if !self.started {
            return Err(Error::NotStarted);
        }
        if self.ended()? {
            return Ok(true);
        }
        let alive: Vec<usize> = (0..self.events.len()).filter(|&i| !self.events[i].hung_up).collect();
        if alive.is_empty() {
            // Every event hung up, the command not yet reaped: a short pause, not a spin.
            std::thread::sleep(timeout.unwrap_or(Duration::MAX).min(Duration::from_millis(10)));
            return self.ended();
        }
        let fds: Vec<BorrowedFd<'_>> = alive.iter().map(|&i| self.events[i].event.as_fd()).collect();
        let ready = crate::wait::wait(&fds, timeout)?;
        for (&i, r) in alive.iter().zip(&ready) {
            self.events[i].hung_up |= r.hangup;
        }
        self.ended()
    }

    fn ended(&mut self) -> Result<bool, Error> {
        if let Some(command) = &mut self.command {
            self.status = command.try_wait()?;
            return Ok(self.status.is_some());
        }
        Ok(self.scope != Scope::AllCpus && self.events.iter().all(|o| o.hung_up))
    }

    /// Hand every record now in the rings to `f`, ring by ring (oldest first within a ring),
    /// and free their space; returns how many. LOST records are also added to
    /// [`lost`](Session::lost). A record that wraps around a ring's end is copied whole into
    /// the session's own [`Scratch`] (64 KiB, room for any record), so a drain never stops
    /// on one. Before [`start`](Session::start), nothing has been recorded: 0.
    pub fn drain(&mut self, mut f: impl FnMut(&SessionRecord<'_>)) -> Result<usize, Error> {
        let mut n = 0;
        for (ring_index, ring) in self.rings.iter().enumerate() {
            let (set, lost, cpu) = (&self.set, &mut self.lost[ring_index], self.cpus[ring_index]);
            n += ring.consumer()?.for_each(&mut self.scratch.0[..], |raw| {
                if raw.header.type_ == types::LOST {
                    // `{header, u64 id, u64 lost, …}`: the count at offset 16.
                    *lost += Endian::NATIVE.u64_at(raw.bytes, 16).unwrap_or(0);
                }
                f(&SessionRecord::new(raw, set, ring_index, cpu));
            })?;
        }
        Ok(n)
    }

    /// Everything in one call: [`start`](Session::start), [`wait`](Session::wait) and
    /// [`drain`](Session::drain) until the end (or until SIGINT/SIGTERM, if
    /// [`catch_interrupts`](crate::launch::catch_interrupts) was called), then stop and drain
    /// once more. Returns the command's exit status (`None` without a command).
    pub fn run(&mut self, mut f: impl FnMut(&SessionRecord<'_>)) -> Result<Option<i32>, Error> {
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
    /// [`Error::Exec`]); 128 + N: killed by signal N. [`Error::NotStarted`] before
    /// [`start`](Session::start): waiting never starts the command.
    pub fn exit_status(&mut self) -> Result<Option<i32>, Error> {
        match &mut self.command {
            Some(command) => Ok(Some(command.wait()?)),
            None => Ok(None),
        }
    }

    /// Send `signal` to the command (`libc::SIGINT` to pass on an interrupt; a no-op
    /// without a command or after it was reaped).
    pub fn signal_command(&mut self, signal: i32) -> Result<(), Error> {
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
    pub fn event_set(&self) -> &EventSet<Vec<Layout>, Vec<IdEntry>> {
        &self.set
    }

    /// The rings, one per CPU (each [`AsFd`]).
    pub fn rings(&self) -> &[Ring] {
        &self.rings
    }

    /// The CPU of each ring.
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

/// One record drained from a [`Session`]: its bytes, its event, and the views to decode it.
#[derive(Debug, Clone, Copy)]
pub struct SessionRecord<'a> {
    /// The record's header.
    pub header: Header,
    /// The whole record (header included): a view into the ring, or a copy where it wrapped.
    pub bytes: &'a [u8],
    /// The index of the ring it came from ([`Session::rings`]).
    pub ring: usize,
    /// The CPU of that ring.
    pub cpu: u32,
    event: Result<(usize, &'a Layout), AttributeError>,
}

impl<'a> SessionRecord<'a> {
    fn new(raw: &RawRecord<'a>, set: &'a EventSet<Vec<Layout>, Vec<IdEntry>>, ring: usize, cpu: u32) -> Self {
        SessionRecord { header: raw.header, bytes: raw.bytes, ring, cpu, event: set.attribute_event(raw.bytes) }
    }

    /// The index of the event that wrote it (the order of [`SessionBuilder::event`]), or why
    /// it cannot be told.
    pub fn event(&self) -> Result<usize, AttributeError> {
        self.event.map(|(i, _)| i)
    }

    /// The SAMPLE's fields, if this is a SAMPLE of a known event that decodes.
    pub fn sample(&self) -> Option<SampleView<'a>> {
        let (_, layout) = self.event.ok()?;
        (self.header.type_ == types::SAMPLE).then(|| layout.sample(self.bytes).ok()).flatten()
    }

    /// The SAMPLE's fixed fields (IDENTIFIER through PERIOD) at the constant offsets of
    /// `SAMPLE_TYPE`, the `sample_type` its event was opened with
    /// ([`EventLayout::fixed_sample`](perfring::record::EventLayout::fixed_sample)): each field one load.
    /// A typed error if this is not a SAMPLE of a known event with that `sample_type`.
    #[inline]
    pub fn fixed<const SAMPLE_TYPE: u64>(&self) -> Result<FixedSample<'a, SAMPLE_TYPE>, SampleError> {
        let (_, layout) = self.event.map_err(SampleError::Attribute)?;
        layout.fixed_sample(self.bytes)
    }

    /// A lazy view of any record of a known event.
    pub fn view(&self) -> Option<RecordView<'a>> {
        self.event.ok().map(|(_, layout)| layout.record(self.bytes))
    }

    /// The complete decode of the record, by its event's layout.
    pub fn decode(&self) -> Option<Result<Record<'a>, DecodeError>> {
        self.event.ok().map(|(_, layout)| layout.decode(self.bytes))
    }
}

/// Why a [`Session`] could not be opened.
#[derive(Debug)]
#[non_exhaustive]
pub enum SessionError {
    /// No event was given ([`SessionBuilder::event`]).
    NoEvents,
    /// The events cannot be told apart in a shared ring: give each `PERF_SAMPLE_IDENTIFIER`
    /// (and the same `sample_id_all`).
    Ambiguous(Inconsistency),
    /// `perf_event_open` refused event `event` on `cpu`.
    Open {
        /// The event's index.
        event: usize,
        /// The CPU.
        cpu: u32,
        /// Why (with what to change).
        error: OpenError,
    },
    /// A failure after opening (mmap, an ioctl, /proc, the command's fork).
    Setup(Error),
    /// The event set refused an event or an id (an id the kernel gave twice).
    EventSet(EventSetError),
    /// [`Session::command`] with an empty command line: give at least the program.
    EmptyCommand,
    /// [`Session::process`] with a pid that is not positive (0 and negative numbers name no
    /// single process).
    InvalidPid {
        /// The pid given.
        pid: i32,
    },
    /// [`Session::process`] of a pid no process has (`/proc/PID/task` is absent): it never
    /// existed or has exited. No event was opened.
    NoSuchProcess {
        /// The pid given.
        pid: i32,
    },
    /// [`SessionBuilder::data_pages`] is not a power of two ≥ 1.
    DataPages {
        /// The data pages asked for.
        data_pages: usize,
    },
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::NoEvents => write!(f, "a session needs at least one event"),
            SessionError::Ambiguous(e) => write!(
                f,
                "the events cannot be told apart in a shared ring ({e}): give each PERF_SAMPLE_IDENTIFIER and the \
                 same sample_id_all"
            ),
            SessionError::Open { event, cpu, error } => write!(f, "event {event} on CPU {cpu}: {error}"),
            SessionError::Setup(e) => write!(f, "{e}"),
            SessionError::EventSet(e) => write!(f, "the event set: {e}"),
            SessionError::EmptyCommand => {
                write!(f, "the session's command is empty: give Session::command at least the program to run")
            }
            SessionError::InvalidPid { pid } => {
                write!(f, "Session::process({pid}): a pid must be positive (for this process, use std::process::id())")
            }
            SessionError::NoSuchProcess { pid } => {
                write!(f, "Session::process({pid}): no process {pid} (/proc/{pid}/task is absent): check the pid")
            }
            SessionError::DataPages { data_pages } => write!(
                f,
                "SessionBuilder::data_pages({data_pages}): each ring needs at least one data page, a power of two \
                 (1, 2, 4, …)"
            ),
        }
    }
}

impl std::error::Error for SessionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SessionError::Ambiguous(e) => Some(e),
            SessionError::Open { error, .. } => Some(error),
            SessionError::Setup(e) => Some(e),
            SessionError::EventSet(e) => Some(e),
            SessionError::NoEvents
            | SessionError::EmptyCommand
            | SessionError::InvalidPid { .. }
            | SessionError::NoSuchProcess { .. }
            | SessionError::DataPages { .. } => None,
        }
    }
}

impl From<Error> for SessionError {
    fn from(e: Error) -> Self {
        SessionError::Setup(e)
    }
}

/// The threads of a running process (`/proc/PID/task`): [`SessionError::NoSuchProcess`] if it
/// has none (absent, or exited meanwhile).
fn threads_of(pid: i32) -> Result<Vec<i32>, SessionError> {
    let dir = match std::fs::read_dir(format!("/proc/{pid}/task")) {
        Ok(dir) => dir,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(SessionError::NoSuchProcess { pid }),
        Err(e) => return Err(io_err("reading /proc/PID/task")(e).into()),
    };
    let mut tids: Vec<i32> = dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect();
    if tids.is_empty() {
        return Err(SessionError::NoSuchProcess { pid });
    }
    tids.sort_unstable();
    Ok(tids)
}
