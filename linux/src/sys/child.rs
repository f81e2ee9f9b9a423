//! A command's process: [`HeldChild`], forked and held before `exec` while its events are
//! opened, then released and reaped; `kill` and `pidfd_open` for it.

use std::io;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

use super::check;

/// A child forked to run a command, held between `fork` and `exec` until
/// [`HeldChild::release_and_exec`] (so that events can be opened on its pid, with
/// `enable_on_exec`, before it runs), and reaped with `waitpid`. (`std::process::Command`
/// cannot do this: its `spawn` waits for the `exec`.) Only `release_and_exec` releases it:
/// waiting for a held child never lets it run.
pub(crate) struct HeldChild {
    pid: i32,
    /// The write end of the gate the child waits on before `exec`: `None` once released.
    gate: Option<OwnedFd>,
    /// The read end of the pipe the child reports a failed `exec` on (its errno; closed by a
    /// successful `exec`, which the close-on-exec flag does).
    report: Option<OwnedFd>,
    /// The errno of a failed `exec`, once read from `report`: every later release reports it.
    exec_errno: Option<i32>,
    /// SIGKILL sent by [`HeldChild::kill`]: a held child then ends without running.
    killed: bool,
    status: Option<i32>,
}

impl HeldChild {
    /// Fork; the child waits for the gate, then (its stdout made its stderr if
    /// `stdout_to_stderr`) `execvp(argv[0], argv)`; if that fails it reports the errno and
    /// exits with status 127.
    pub(crate) fn spawn(argv: &[std::ffi::CString], stdout_to_stderr: bool) -> io::Result<HeldChild> {
        if argv.is_empty() {
            return Err(io::Error::from_raw_os_error(libc::EINVAL));
        }
        // Everything the child uses is prepared before the fork: it must not allocate.
        let mut ptrs: Vec<*const libc::c_char> = argv.iter().map(|a| a.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        // From the pipes' creation until this process has closed the child's ends, no other
        // launch forks: a child held before `exec` keeps whatever it inherited, and one holding
        // the write end of this child's report pipe would keep `release_and_exec` from ever
        // seeing it close.
        static SPAWN: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _spawning = SPAWN.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        let mut fds = [0i32; 2];
        let mut rep = [0i32; 2];
        // SAFETY: `fds` and `rep` each have room for the two descriptors pipe2 writes.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: as above; on failure the gate's descriptors are closed (they are ours alone).
        if unsafe { libc::pipe2(rep.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            let e = io::Error::last_os_error();
            // SAFETY: closing the two descriptors pipe2 just gave us.
            unsafe {
                libc::close(fds[0]);
                libc::close(fds[1]);
            }
            return Err(e);
        }
        // SAFETY: fork has no preconditions; the child below only calls async-signal-safe
        // functions (close, read, dup2, execvp, write, _exit) on memory prepared before the fork.
        let pid = unsafe { libc::fork() };
        if pid == 0 {
            // SAFETY: the child side of the fork: see above. `ptrs` is a NULL-terminated array of
            // pointers into `argv`, which the fork copied; `errno` is read from this thread's own
            // location.
            unsafe {
                libc::close(fds[1]);
                libc::close(rep[0]);
                let mut b = 0u8;
                while libc::read(fds[0], (&mut b as *mut u8).cast(), 1) < 0 && *libc::__errno_location() == libc::EINTR
                {
                }
                if stdout_to_stderr {
                    libc::dup2(2, 1);
                }
                libc::execvp(ptrs[0], ptrs.as_ptr());
                let errno = (*libc::__errno_location()).to_ne_bytes();
                libc::write(rep[1], errno.as_ptr().cast(), errno.len());
                libc::_exit(127);
            }
        }
        // SAFETY: closing the ends this process no longer needs; adopting the gate's write end
        // and the report's read end, which nothing else owns.
        let (gate, report) = unsafe {
            libc::close(fds[0]);
            libc::close(rep[1]);
            (OwnedFd::from_raw_fd(fds[1]), OwnedFd::from_raw_fd(rep[0]))
        };
        if pid < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(HeldChild { pid, gate: Some(gate), report: Some(report), exec_errno: None, killed: false, status: None })
    }

    /// Let the child exec, and wait until it has: the error `execvp` gave, if it failed (again
    /// on every later call). A child killed (or ended by a signal) while held never execs:
    /// ESRCH.
    pub(crate) fn release_and_exec(&mut self) -> io::Result<()> {
        if self.gate.is_some() && !self.held()? {
            return Err(io::Error::from_raw_os_error(libc::ESRCH));
        }
        if let Some(gate) = self.gate.take() {
            // One byte opens the gate. Not the close alone: a child another thread forked
            // while this one was held inherited a copy of the gate's write end, and the
            // read would wait for that child too before it saw the end of the pipe.
            // SAFETY: writing one byte from a valid buffer to our own pipe's write end.
            let wrote = unsafe { libc::write(gate.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
            if wrote != 1 {
                return Err(io::Error::last_os_error());
            }
        }
        if let Some(errno) = self.exec_errno {
            return Err(io::Error::from_raw_os_error(errno));
        }
        let Some(report) = self.report.take() else { return Ok(()) };
        let mut errno = [0u8; 4];
        let mut got = 0;
        while got < errno.len() {
            // SAFETY: reading into the rest of `errno` from a descriptor we own.
            let n = unsafe { libc::read(report.as_raw_fd(), errno[got..].as_mut_ptr().cast(), errno.len() - got) };
            match n {
                0 => return Ok(()), // closed by a successful exec
                n if n > 0 => got += n as usize,
                _ if io::Error::last_os_error().kind() == io::ErrorKind::Interrupted => {}
                _ => return Err(io::Error::last_os_error()),
            }
        }
        let errno = i32::from_ne_bytes(errno);
        self.exec_errno = Some(errno);
        Err(io::Error::from_raw_os_error(errno))
    }

    /// Send `signal` to the child unless it has been reaped.
    pub(crate) fn signal(&mut self, signal: i32) -> io::Result<()> {
        if self.status.is_some() {
            return Ok(());
        }
        // SAFETY: kill has no memory preconditions; `pid` is our own child, not yet reaped (so
        // the pid cannot have been reused).
        check(unsafe { libc::kill(self.pid, signal) } as libc::c_long).map(drop)
    }

    pub(crate) fn pid(&self) -> i32 {
        self.pid
    }

    /// SIGKILL the child (held or running) unless it has been reaped already.
    pub(crate) fn kill(&mut self) -> io::Result<()> {
        self.signal(libc::SIGKILL)?;
        self.killed = true;
        Ok(())
    }

    /// Whether the child is still held before `exec`: not released, not killed, not ended (a
    /// signal from elsewhere may end a held child; it is reaped here if one did).
    pub(crate) fn held(&mut self) -> io::Result<bool> {
        if self.gate.is_none() || self.killed || self.status.is_some() {
            return Ok(false);
        }
        Ok(self.wait(false)?.is_none())
    }

    /// The exit status if the child has ended (`waitpid` with `WNOHANG`, or blocking). Never
    /// releases a held child; nor blocks on one (it would never end): a held child that has
    /// not ended is `Ok(None)` even when `block` (see [`HeldChild::held`]).
    pub(crate) fn wait(&mut self, block: bool) -> io::Result<Option<i32>> {
        if self.status.is_some() {
            return Ok(self.status);
        }
        let block = block && (self.gate.is_none() || self.killed);
        let mut status = 0;
        loop {
            // SAFETY: waiting for our own child; `status` is a valid out-parameter.
            let r = unsafe { libc::waitpid(self.pid, &mut status, if block { 0 } else { libc::WNOHANG }) };
            if r < 0 {
                let e = io::Error::last_os_error();
                if e.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(e);
            }
            if r == 0 {
                return Ok(None);
            }
            let code = if libc::WIFEXITED(status) { libc::WEXITSTATUS(status) } else { 128 + libc::WTERMSIG(status) };
            self.status = Some(code);
            return Ok(self.status);
        }
    }
}

impl Drop for HeldChild {
    fn drop(&mut self) {
        // A child never released never runs (it was held so that nothing of it runs
        // unobserved); a released one runs on. Either way it is reaped: no zombie.
        if self.gate.is_some() {
            let _ = self.kill();
        }
        let _ = self.wait(true);
    }
}

/// `kill(pid, signal)`; `pid` must be positive (no process groups, no "every process").
pub(crate) fn kill(pid: i32, signal: i32) -> io::Result<()> {
    if pid <= 0 {
        return Err(io::Error::from_raw_os_error(libc::ESRCH));
    }
    // SAFETY: kill has no memory preconditions.
    check(unsafe { libc::kill(pid, signal) } as libc::c_long).map(drop)
}

/// `pidfd_open(pid, 0)`: a descriptor readable once process `pid` has exited.
pub(crate) fn pidfd_open(pid: i32) -> io::Result<OwnedFd> {
    // SAFETY: pidfd_open has no memory preconditions.
    let fd = check(unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) })?;
    // SAFETY: the call returned a new descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}
