//! Launching a command to record: the child stops between `fork` and `exec` until events are
//! open on its pid (with `enable_on_exec`, they start counting at the exec, not before), and
//! SIGINT/SIGTERM caught as "stop recording".

use std::ffi::CString;

use crate::error::{io as io_err, LinuxError};
use crate::sys;

/// A child process held before `exec` (see the module docs). Dropping it waits for the
/// command if it was started, and kills it (it never runs) if it was not.
///
/// Count a command's page faults by `read(2)` (no ring), opened before it runs:
///
/// ```
/// # fn example() -> Result<(), Box<dyn std::error::Error>> {
/// use perfring::record::{attr_flags as flag, ReadValues};
/// use perfring_linux::launch::Launch;
/// use perfring_linux::{software, Event, EventAttr, Target};
/// let mut child = Launch::spawn(&["sh".into(), "-c".into(), "exec true".into()])?;
/// let attr = EventAttr::software(software::PAGE_FAULTS).flag(flag::ENABLE_ON_EXEC | flag::DISABLED | flag::INHERIT, true);
/// let faults = Event::open(&attr, Target::Task(child.pid()), None)?; // counts from the exec on
/// child.start()?; // the exec: an error here if the command could not be executed
/// assert_eq!(child.wait()?, 0);
/// let ReadValues::Single(counts) = faults.read()?.values() else { unreachable!("no GROUP asked") };
/// assert!(counts.value > 0, "a process faults pages in as it starts: {counts:?}");
/// # Ok(()) }
/// # // Refused here (not permitted, no such event): a visible skip, not a failure.
/// # fn main() { perfring_test_support::doc_example!(example()) }
/// ```
pub struct Launch {
    child: sys::HeldChild,
    command: String,
}

/// Where a launched command's standard output goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Stdout {
    /// This process's stdout (the default).
    #[default]
    Inherit,
    /// This process's stderr: what `perf record -o -` does, so that the command's output does
    /// not mix into the perf.data stream on stdout.
    ToStderr,
}

impl std::fmt::Debug for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launch").field("pid", &self.pid()).finish()
    }
}

impl Launch {
    /// Fork a child that will run `argv` (`argv[0]` looked up in `PATH`); it waits before
    /// `exec` until [`Launch::start`].
    pub fn spawn(argv: &[String]) -> Result<Launch, LinuxError> {
        Launch::spawn_with(argv, Stdout::Inherit)
    }

    /// [`spawn`](Launch::spawn), the command's standard output sent to `stdout`. An empty
    /// `argv` is [`LinuxError::EmptyCommand`] (nothing is forked).
    pub fn spawn_with(argv: &[String], stdout: Stdout) -> Result<Launch, LinuxError> {
        let command = argv.first().cloned().ok_or(LinuxError::EmptyCommand)?;
        let argv: Vec<CString> =
            argv.iter().map(|a| CString::new(a.as_str())).collect::<Result<_, _>>().map_err(|_| LinuxError::Io {
                what: "the command line (a NUL byte)",
                error: std::io::ErrorKind::InvalidInput.into(),
            })?;
        let child = sys::HeldChild::spawn(&argv, stdout == Stdout::ToStderr).map_err(io_err("fork of the command"))?;
        Ok(Launch { child, command })
    }

    /// The child's pid (open the events on it before [`Launch::start`]).
    pub fn pid(&self) -> i32 {
        self.child.pid()
    }

    /// Let the child `exec` the command, and wait until it has: [`LinuxError::Exec`] if the
    /// command could not be executed (not found, not executable; the child then exits with
    /// status 127), and again on every later call. Once it has started, a further call is
    /// `Ok(())`. This is the only call that lets the command run: until then it is held
    /// before `exec` (and [`wait`](Launch::wait) and [`try_wait`](Launch::try_wait) are
    /// [`LinuxError::NotStarted`]). After [`kill`](Launch::kill) it never runs: [`LinuxError::Exec`]
    /// (ESRCH).
    pub fn start(&mut self) -> Result<(), LinuxError> {
        self.child.release_and_exec().map_err(|error| LinuxError::Exec { command: self.command.clone(), error })
    }

    /// Send `signal` (`libc::SIGINT`, …) to the command, unless it has been reaped.
    pub fn signal(&mut self, signal: i32) -> Result<(), LinuxError> {
        self.child.signal(signal).map_err(io_err("kill(2) of the command"))
    }

    /// Kill the child (SIGKILL), held or running, and reap it; its status (137 if the signal
    /// killed it). For a command whose events could not be opened: it never runs.
    pub fn kill(&mut self) -> Result<i32, LinuxError> {
        self.child.kill().map_err(io_err("kill of the command"))?;
        self.wait()
    }

    /// The exit status (128 + signal if killed), if the child has ended; does not block.
    /// [`LinuxError::NotStarted`] before [`start`](Launch::start): a held command never ends by
    /// itself, and waiting does not start it.
    pub fn try_wait(&mut self) -> Result<Option<i32>, LinuxError> {
        self.check_started()?;
        self.child.wait(false).map_err(io_err("waitpid"))
    }

    /// Wait for the child to end; its exit status (128 + signal if killed). 127: the command
    /// could not be executed ([`start`](Launch::start) said so with [`LinuxError::Exec`]).
    /// [`LinuxError::NotStarted`] before [`start`](Launch::start) (it would wait forever: the
    /// command is held before `exec` until then).
    pub fn wait(&mut self) -> Result<i32, LinuxError> {
        self.check_started()?;
        Ok(self.child.wait(true).map_err(io_err("waitpid"))?.unwrap_or(0))
    }

    /// [`LinuxError::NotStarted`] while the child is held before `exec` (neither started nor
    /// killed, nor ended by a signal from elsewhere).
    fn check_started(&mut self) -> Result<(), LinuxError> {
        if self.child.held().map_err(io_err("waitpid"))? {
            return Err(LinuxError::NotStarted);
        }
        Ok(())
    }
}

/// Catch SIGINT and SIGTERM from now on, as requests to stop ([`interrupted`]).
pub fn catch_interrupts() -> Result<(), LinuxError> {
    sys::catch_sigint().map_err(io_err("installing the SIGINT handler"))
}

/// Whether SIGINT or SIGTERM arrived since [`catch_interrupts`].
pub fn interrupted() -> bool {
    sys::sigint_seen()
}

/// Run this thread real-time, `SCHED_FIFO` at `priority` (1-99; perf record's `-r`): a
/// recorder woken by its rings then preempts the workload at once. Call it after
/// [`Session`](crate::Session)'s command is started held, so that the command keeps its own
/// policy. Needs CAP_SYS_NICE (or an RLIMIT_RTPRIO that allows it).
pub fn set_realtime(priority: i32) -> Result<(), LinuxError> {
    sys::set_fifo(priority).map_err(io_err("sched_setscheduler(SCHED_FIFO)"))
}

/// Catch SIGUSR2 from now on (perf record's `--switch-output` signal): it then interrupts a
/// [`Session::wait`](crate::Session::wait) in progress, and [`take_sigusr2`] says it came.
pub fn catch_sigusr2() -> Result<(), LinuxError> {
    sys::catch_sigusr2().map_err(io_err("installing the SIGUSR2 handler"))
}

/// Whether SIGUSR2 arrived since the last call (or since [`catch_sigusr2`]); each arrival is
/// reported once (several before a call, once).
pub fn take_sigusr2() -> bool {
    sys::sigusr2_taken()
}

/// Which signal interrupted: the first SIGINT or SIGTERM since [`catch_interrupts`] (`None`
/// if none came). For a program that ends, as perf record does, with the status of the signal
/// that ended it (128 + N).
pub fn interrupt_signal() -> Option<i32> {
    sys::sigint_signal()
}

/// Let a child's exit (SIGCHLD) interrupt a [`Session::wait`](crate::Session::wait) in
/// progress, as it interrupts perf record's `poll`: for a process this one runs beside a
/// session (the session's own command wakes it through its pidfd). The handler does nothing
/// else; without it SIGCHLD is ignored and the wait sleeps on to its timeout.
pub fn wake_on_child_exit() -> Result<(), LinuxError> {
    sys::wake_on_sigchld().map_err(io_err("installing the SIGCHLD handler"))
}

/// `SIGINT`, for [`Launch::signal`], [`crate::Session::signal_command`] and [`signal_process`].
pub const SIGINT: i32 = libc::SIGINT;
/// `SIGTERM`.
pub const SIGTERM: i32 = libc::SIGTERM;

/// Send `signal` to process `pid` (`kill(2)`): to pass an interrupt on to a process this one
/// did not fork held ([`Launch`] has [`Launch::signal`]).
pub fn signal_process(pid: i32, signal: i32) -> Result<(), LinuxError> {
    sys::kill(pid, signal).map_err(io_err("kill(2)"))
}
