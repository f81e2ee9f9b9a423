//! The recording itself: start, then sleep until a ring's watermark wakeup (3/4 or 7/8 of
//! the ring, one ring watched of several under load: [`Pace`]), the command's exit or a
//! signal; write what the rings hold, again while a pass finds records (as perf); sleep
//! again; until the end.
//! A wakeup costs the recorder a switch onto a CPU the workload wants (most of its CPU time
//! under load, see BENCHMARKS.md): nothing else wakes it, but a one-second backstop for a
//! signal that comes just before it sleeps (and the progress line, on a terminal).

use std::io::{IsTerminal, Write};
use std::time::{Duration, Instant};

use perfring_linux::launch::{interrupted, signal_process, SIGINT, SIGTERM};
use perfring_linux::perf_data::PerfData;
use perfring_linux::Session;

use crate::cli::Options;
use crate::switch_output::{Dumps, When};
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

/// Which rings may wake the recorder. Every ring is drained on every wakeup, so when several
/// fill alike under load, each one's watermark wakeup costs a sleep and a switch back onto a
/// busy CPU (the recorder's main cost, BENCHMARKS.md) for one ring of its own and what the
/// others gathered meanwhile. Under load (a cycle that brought a quarter of a ring or more)
/// only the ring that brought the most is watched; the others are drained with it, and the
/// wait's timeout is cut to the time the fullest of them takes to fill nine tenths at its last
/// rate. An unwatched ring that lost records, or a quieter cycle, has every ring watched again.
struct Pace {
    watched: Vec<bool>,
    data_size: u64,
    last: Instant,
    lost: Vec<u64>,
    deadline: Option<Duration>,
}

impl Pace {
    fn new(session: &Session) -> Pace {
        let n = session.rings().len();
        let data_size = session.rings().first().map_or(0, |r| r.data_size() as u64);
        Pace { watched: vec![true; n], data_size, last: Instant::now(), lost: session.lost().to_vec(), deadline: None }
    }

    /// The wait's timeout: `backstop`, or less while rings are not watched.
    fn timeout(&self, backstop: Duration) -> Duration {
        self.deadline.map_or(backstop, |d| d.min(backstop))
    }

    /// After a cycle that brought `bytes` from each ring: choose the rings to watch.
    fn cycle(&mut self, session: &mut Session, bytes: &[u64]) -> Result<(), Error> {
        if bytes.len() < 2 {
            return Ok(());
        }
        let elapsed = self.last.elapsed().as_secs_f64().max(1e-6);
        self.last = Instant::now();
        let lost = session.lost().to_vec();
        let unwatched_lost = (0..bytes.len()).any(|r| !self.watched[r] && lost.get(r) > self.lost.get(r));
        self.lost = lost;
        let (max_ring, &max) = bytes.iter().enumerate().max_by_key(|(_, b)| **b).unwrap_or((0, &0));
        let busy = max >= self.data_size / 4 && !unwatched_lost;
        self.deadline = busy.then(|| {
            let other = bytes.iter().enumerate().filter(|(r, _)| *r != max_ring).map(|(_, b)| *b).max().unwrap_or(0);
            let rate = other as f64 / elapsed;
            Duration::from_secs_f64((0.9 * self.data_size as f64 / rate.max(1.0)).min(1.0))
        });
        for r in 0..bytes.len() {
            let w = !busy || r == max_ring;
            if w != self.watched[r] {
                session.watch_ring(r, w)?;
                self.watched[r] = w;
            }
        }
        Ok(())
    }
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

/// What `--switch-output` does when its trigger comes (`switch_output::switch`, file mode).
pub type Switch<'a, W> = &'a mut dyn FnMut(&mut PerfData<W>, &mut Session, &mut Dumps) -> Result<(), Error>;

/// Record until the command ends (or, with no command, until SIGINT/SIGTERM); `switch`, with
/// `--switch-output`, ends the file and begins the next when its trigger comes.
pub fn record<W: Write>(
    d: &mut PerfData<W>,
    o: &Options,
    session: &mut Session,
    mut switch: Option<Switch<'_, W>>,
    dumps: &mut Dumps,
) -> Result<Recorded, Error> {
    let start = Instant::now();
    if o.switch_output == Some(When::Signal) {
        perfring_linux::launch::catch_sigusr2()?;
    }
    let mut switched = Instant::now();
    let mut dump_wakeups = 0u64;
    // -D: the events stay disabled (the tracking dummy records the side band meanwhile) until
    // the delay has passed, or for good with -1 — as perf, which says so unless -q.
    let started = if o.delay.is_some() { session.start_disabled() } else { session.start() };
    if let Err(e) = started {
        // The command could not be executed: nothing ran.
        return Err(e.into());
    }
    let mut enable_at = o.delay.and_then(|d| u64::try_from(d).ok()).map(|ms| start + Duration::from_millis(ms));
    if o.delay.is_some() && !o.quiet {
        eprintln!("Events disabled");
    }
    let mut beside = None;
    if session.pid().is_none() && !o.command.is_empty() {
        let mut c = std::process::Command::new(&o.command[0]);
        c.args(&o.command[1..]);
        if o.output() == "-" {
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
    let mut pace = Pace::new(session);
    loop {
        let until_enabled = enable_at.map_or(Duration::MAX, |at| at.saturating_duration_since(Instant::now()));
        let until_switch = match o.switch_output {
            Some(When::Every(t)) => (switched + t).saturating_duration_since(Instant::now()),
            _ => Duration::MAX,
        };
        let mut ended = session.wait(Some(pace.timeout(timeout).min(until_enabled).min(until_switch)))?;
        if enable_at.is_some_and(|at| Instant::now() >= at) {
            enable_at = None;
            session.enable()?;
            if !o.quiet {
                eprintln!("Events enabled");
            }
        }
        let mut bytes = vec![0u64; session.rings().len()];
        let mut count = |r: &perfring_linux::SessionRecord<'_>| bytes[r.ring] += r.bytes.len() as u64;
        if d.drain_with(session, &mut count)? > 0 {
            wakeups += 1;
            dump_wakeups += 1;
            // As perf: read again while a pass finds records, sleep once one finds none.
            // Under load the rings refill while they are read; reading on costs a pass, far
            // less than the switch a sleep costs, and keeps the rings from overflowing (-a -g
            // at the maximum rate: 1.5% of samples lost instead of 12%, BENCHMARKS.md).
            while d.drain_with(session, &mut count)? > 0 {}
        }
        pace.cycle(session, &bytes)?;
        if let Some(switch) = switch.as_mut() {
            let due = match o.switch_output {
                Some(When::Signal) => perfring_linux::launch::take_sigusr2(),
                Some(When::Size(n)) => d.writer().data_size() >= n,
                Some(When::Every(t)) => switched.elapsed() >= t,
                None => false,
            };
            if due && !ended {
                if !o.quiet {
                    eprintln!("[ perf record: dump data: Woken up {dump_wakeups} times ]");
                }
                switch(d, session, dumps)?;
                (switched, dump_wakeups) = (Instant::now(), 0);
            }
        }
        if let Some(max) = o.max_size.filter(|&m| d.writer().data_size() >= m) {
            // perf's words; the command is sent SIGTERM, as perf sends it at the end.
            eprintln!(
                "[ perf record: perf size limit reached ({} KB), stopping session ]",
                max.max(d.writer().data_size()) >> 10
            );
            session.signal_command(SIGTERM)?;
            if let Some(Beside(child)) = &mut beside {
                signal_child(child, SIGTERM);
            }
            break;
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
    // No command to give its status (-a, -p, -t alone): ended by SIGINT or SIGTERM, the
    // status is that signal's, 128 + N, as perf's (it raises the signal again at its end).
    if status.is_none() {
        status = perfring_linux::launch::interrupt_signal().map(|signal| 128 + signal);
    }
    if progress {
        eprintln!();
    }
    Ok(Recorded { status, wakeups, seconds: start.elapsed().as_secs_f64() })
}
