//! Launching a command to record: the child stops between `fork` and `exec` until events are
//! open on its pid (with `enable_on_exec`, they start counting at the exec, not before), and
//! SIGINT/SIGTERM caught as "stop recording".

use std::ffi::CString;

use crate::error::{io as io_err, Error};
use crate::sys;

/// A child process held before `exec` (see the module docs). Dropping it lets the child run
/// and waits for it.
pub struct Launch {
    child: sys::HeldChild,
}

impl std::fmt::Debug for Launch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Launch").field("pid", &self.pid()).finish()
    }
}

impl Launch {
    /// Fork a child that will run `argv` (`argv[0]` looked up in `PATH`); it waits before
    /// `exec` until [`Launch::start`].
    pub fn spawn(argv: &[String]) -> Result<Launch, Error> {
        let argv: Vec<CString> =
            argv.iter().map(|a| CString::new(a.as_str())).collect::<Result<_, _>>().map_err(|_| Error::Io {
                what: "the command line (a NUL byte)",
                error: std::io::ErrorKind::InvalidInput.into(),
            })?;
        Ok(Launch { child: sys::HeldChild::spawn(&argv).map_err(io_err("fork of the command"))? })
    }

    /// The child's pid (open the events on it before [`Launch::start`]).
    pub fn pid(&self) -> i32 {
        self.child.pid()
    }

    /// Let the child `exec` the command.
    pub fn start(&mut self) {
        self.child.release();
    }

    /// Kill the child (SIGKILL), held or running, and reap it; its status (137 if the signal
    /// killed it). For a command whose events could not be opened: it never runs.
    pub fn kill(&mut self) -> Result<i32, Error> {
        self.child.kill().map_err(io_err("kill of the command"))?;
        self.wait()
    }

    /// The exit status (128 + signal if killed), if the child has ended; does not block.
    pub fn try_wait(&mut self) -> Result<Option<i32>, Error> {
        self.child.wait(false).map_err(io_err("waitpid"))
    }

    /// Wait for the child to end; its exit status (128 + signal if killed). 127: the command
    /// could not be executed.
    pub fn wait(&mut self) -> Result<i32, Error> {
        Ok(self.child.wait(true).map_err(io_err("waitpid"))?.unwrap_or(0))
    }
}

/// Catch SIGINT and SIGTERM from now on, as requests to stop ([`interrupted`]).
pub fn catch_interrupts() -> Result<(), Error> {
    sys::catch_sigint().map_err(io_err("installing the SIGINT handler"))
}

/// Whether SIGINT or SIGTERM arrived since [`catch_interrupts`].
pub fn interrupted() -> bool {
    sys::sigint_seen()
}
