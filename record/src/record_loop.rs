//! The recording itself: start, then sleep until a ring's watermark wakeup (half the ring,
//! as perf), the command's exit or a signal; write what the rings hold, again while a pass
//! finds records (as perf); sleep again; until the end.
//! A wakeup costs the recorder a switch onto a CPU the workload wants (most of its CPU time
//! under load, see BENCHMARKS.md): nothing else wakes it, but a one-second backstop for a
//! signal that comes just before it sleeps (and the progress line, on a terminal).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use perfring_linux::launch::{interrupted, signal_process, SIGINT, SIGTERM};
use perfring_linux::perf_data::PerfData;
use perfring_linux::Session;

use crate::cli::Options;
use crate::Error;

/// What the loop leaves for the summary.
pub struct Recorded {
    /// The command's exit status.
    pub status: Option<i32>,
    /// Passes that found records.
    pub wakeups: u64,
    /// Seconds from start to end.
    pub seconds: f64,
}

/// A COMMAND run beside `-a`/`-p`/`-C`/`-t`: it decides how long the recording lasts.
struct Beside(std::process::Child);

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// Send `signal` to a child run beside the recording (it may have exited meanwhile: ignored).
fn signal_child(child: &std::process::Child, signal: i32) {
    let _ = signal_process(child.id() as i32, signal);
}

/// Record until the command ends (or, with no command, until SIGINT/SIGTERM).
pub fn record<W: Write>(d: &mut PerfData<W>, o: &Options, session: &mut Session) -> Result<Recorded, Error> {
    let start = Instant::now();
    if let Err(e) = session.start() {
        // The command could not be executed: nothing ran.
        return Err(e.into());
    }
    let mut beside = None;
    if session.pid().is_none() && !o.command.is_empty() {
        let mut c = std::process::Command::new(&o.command[0]);
        c.args(&o.command[1..]);
        if o.output == "-" {
            c.stdout(std::io::stderr());
        }
        perfring_linux::launch::wake_on_child_exit()?;
        match c.spawn() {
            Ok(child) => beside = Some(Beside(child)),
            Err(e) => {
                session.stop()?;
                return Err(format!("cannot execute {}: {e}", o.command[0]).into());
            }
        }
    }
    let progress = !o.quiet && std::io::stderr().is_terminal();
    let timeout = Duration::from_millis(if progress { 500 } else { 1000 });
    let mut shown = Instant::now();
    let mut status: Option<i32> = None;
    let mut interrupt_sent: Option<Instant> = None;
    let mut wakeups = 0;
    loop {
        let mut ended = session.wait(Some(timeout))?;
        if d.drain(session)? > 0 {
            wakeups += 1;
            // As perf: read again while a pass finds records, sleep once one finds none.
            // Under load the rings refill while they are read; reading on costs a pass, far
            // less than the switch a sleep costs, and keeps the rings from overflowing (-a -g
            // at the maximum rate: 1.5% of samples lost instead of 12%, BENCHMARKS.md).
            while d.drain(session)? > 0 {}
        }
        if let Some(Beside(child)) = &mut beside {
            if let Some(s) = child.try_wait()? {
                status = Some(exit_code(s));
                ended = true;
            }
        }
        if ended {
            break;
        }
        if interrupted() {
            // Passed on to the command, as perf does; the recording ends when it does (a
            // command that outlives the interrupt by a second gets SIGTERM).
            match interrupt_sent {
                None => {
                    interrupt_sent = Some(Instant::now());
                    session.signal_command(SIGINT)?;
                    if let Some(Beside(child)) = &mut beside {
                        signal_child(child, SIGINT);
                    }
                    if session.pid().is_none() && beside.is_none() {
                        break; // nothing to wait for: -a, -p, -t alone
                    }
                }
                Some(at) if at.elapsed() > Duration::from_secs(1) => {
                    session.signal_command(SIGTERM)?;
                    if let Some(Beside(child)) = &mut beside {
                        signal_child(child, SIGTERM);
                    }
                }
                Some(_) => {}
            }
        }
        if progress && shown.elapsed() > Duration::from_millis(500) {
            shown = Instant::now();
            let samples: u64 = d.samples().iter().sum();
            eprint!(
                "\r[ perfring-record: {:.1} s, {samples} samples, {} lost ]   ",
                start.elapsed().as_secs_f64(),
                session.lost_total()
            );
        }
    }
    session.stop()?;
    d.drain(session)?;
    if let Some(Beside(mut child)) = beside.take() {
        status = Some(status.map_or_else(|| child.wait().map(exit_code), Ok)?);
    }
    if let Some(s) = session.exit_status()? {
        status = Some(s);
    }
    if progress {
        eprintln!();
    }
    Ok(Recorded { status, wakeups, seconds: start.elapsed().as_secs_f64() })
}
