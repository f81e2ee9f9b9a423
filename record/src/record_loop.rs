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
use perfring_linux::Session;

use crate::cli::{Options, When};
use crate::failure::Error;
use crate::recording::{Recorded, Recording};

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

impl Beside {
    /// Start the command (its stdout on stderr in pipe mode), if one is given beside a target.
    fn start(o: &Options, session: &mut Session) -> Result<Option<Beside>, Error> {
        if session.pid().is_some() || o.command.is_empty() {
            return Ok(None);
        }
        let mut c = std::process::Command::new(&o.command[0]);
        c.args(&o.command[1..]);
        if o.output() == "-" {
            c.stdout(std::io::stderr());
        }
        perfring_linux::launch::wake_on_child_exit()?;
        match c.spawn() {
            Ok(child) => Ok(Some(Beside(child))),
            Err(e) => {
                session.stop()?;
                Err(format!("cannot execute {}: {e}", o.command[0]).into())
            }
        }
    }

    /// Send `signal` (it may have exited meanwhile: ignored).
    fn signal(&self, signal: i32) {
        let _ = signal_process(self.0.id() as i32, signal);
    }
}

fn exit_code(status: std::process::ExitStatus) -> i32 {
    use std::os::unix::process::ExitStatusExt;
    status.code().unwrap_or_else(|| 128 + status.signal().unwrap_or(0))
}

/// The state of one recording's loop.
struct Loop<'r, 'o, W: Write> {
    o: &'o Options,
    rec: &'r mut Recording<'o, W>,
    start: Instant,
    beside: Option<Beside>,
    enable_at: Option<Instant>,
    switched: Instant,
    dump_wakeups: u64,
    wakeups: u64,
    interrupt_sent: Option<Instant>,
    progress: Option<Instant>,
    pace: Pace,
}

/// Record until the command ends (or, with no command, until SIGINT/SIGTERM), writing the
/// rings to `rec`; `--switch-output` switches its file when its trigger comes.
pub fn record<'o, W: Write>(o: &'o Options, rec: &mut Recording<'o, W>) -> Result<Recorded, Error> {
    let start = Instant::now();
    if o.switch_output == Some(When::Signal) {
        perfring_linux::launch::catch_sigusr2()?;
    }
    // -D: the events stay disabled (the tracking dummy records the side band meanwhile) until
    // the delay has passed, or for good with -1 — as perf, which says so unless -q.
    let session = rec.session();
    if o.delay.is_some() {
        session.start_disabled()?;
        if !o.quiet {
            eprintln!("Events disabled");
        }
    } else {
        session.start()?;
    }
    let beside = Beside::start(o, session)?;
    let pace = Pace::new(session);
    let enable_at = o.delay.and_then(|d| u64::try_from(d).ok()).map(|ms| start + Duration::from_millis(ms));
    let progress = (!o.quiet && std::io::stderr().is_terminal()).then(Instant::now);
    let mut l = Loop {
        o,
        rec,
        start,
        beside,
        enable_at,
        switched: start,
        dump_wakeups: 0,
        wakeups: 0,
        interrupt_sent: None,
        progress,
        pace,
    };
    while !l.step()? {}
    l.end()
}

impl<W: Write> Loop<'_, '_, W> {
    /// One wait and what follows it; whether the recording has ended.
    fn step(&mut self) -> Result<bool, Error> {
        let mut ended = self.wait()?;
        self.drain()?;
        if !ended {
            self.switch_if_due()?;
        }
        if self.size_reached()? {
            return Ok(true);
        }
        if let Some(Beside(child)) = &mut self.beside {
            ended |= child.try_wait()?.is_some();
        }
        if ended || self.interrupt()? {
            return Ok(true);
        }
        self.show_progress();
        Ok(false)
    }

    /// Sleep until a ring's wakeup, the end, the delay's end, the next timed switch or the
    /// backstop; enable the events once the delay has passed.
    fn wait(&mut self) -> Result<bool, Error> {
        let backstop = Duration::from_millis(if self.progress.is_some() { 500 } else { 1000 });
        let now = Instant::now();
        let until_enabled = self.enable_at.map_or(Duration::MAX, |at| at.saturating_duration_since(now));
        let until_switch = match self.o.switch_output {
            Some(When::Every(t)) => (self.switched + t).saturating_duration_since(now),
            _ => Duration::MAX,
        };
        let timeout = self.pace.timeout(backstop).min(until_enabled).min(until_switch);
        let ended = self.rec.session().wait(Some(timeout))?;
        if self.enable_at.is_some_and(|at| Instant::now() >= at) {
            self.enable_at = None;
            self.rec.session().enable()?;
            if !self.o.quiet {
                eprintln!("Events enabled");
            }
        }
        Ok(ended)
    }

    /// Write what the rings hold, again while a pass finds records (as perf: under load the
    /// rings refill while they are read; reading on costs a pass, far less than the switch a
    /// sleep costs, and keeps them from overflowing: -a -g at the maximum rate lost 1.5% of
    /// samples instead of 12%, BENCHMARKS.md); then choose the rings to watch.
    fn drain(&mut self) -> Result<(), Error> {
        let mut bytes = vec![0u64; self.rec.session().rings().len()];
        let mut count = |r: &perfring_linux::SessionRecord<'_>| {
            bytes[r.ring()] += perfring::record::EventRecord::raw(r).bytes.len() as u64
        };
        if self.rec.drain(&mut count)? > 0 {
            self.wakeups += 1;
            self.dump_wakeups += 1;
            while self.rec.drain(&mut count)? > 0 {}
        }
        self.pace.cycle(self.rec.session(), &bytes)
    }

    /// `--switch-output`: switch when its trigger has come.
    fn switch_if_due(&mut self) -> Result<(), Error> {
        let due = match self.o.switch_output {
            Some(When::Signal) => perfring_linux::launch::take_sigusr2(),
            Some(When::Size(n)) => self.rec.data_size() >= n,
            Some(When::Every(t)) => self.switched.elapsed() >= t,
            None => false,
        };
        if due {
            if !self.o.quiet {
                eprintln!("[ perf record: dump data: Woken up {} times ]", self.dump_wakeups);
            }
            self.rec.switch()?;
            (self.switched, self.dump_wakeups) = (Instant::now(), 0);
        }
        Ok(())
    }

    /// `--max-size`: whether the data reached it (perf's words; the command is sent SIGTERM,
    /// as perf sends it at the end).
    fn size_reached(&mut self) -> Result<bool, Error> {
        let size = self.rec.data_size();
        let Some(max) = self.o.max_size.filter(|&m| size >= m) else { return Ok(false) };
        eprintln!("[ perf record: perf size limit reached ({} KB), stopping session ]", max.max(size) >> 10);
        self.rec.session().signal_command(SIGTERM)?;
        if let Some(b) = &self.beside {
            b.signal(SIGTERM);
        }
        Ok(true)
    }

    /// SIGINT or SIGTERM: passed on to the command, as perf does; the recording ends when it
    /// does (a command that outlives the interrupt by a second gets SIGTERM), or at once
    /// without one. Whether it has ended.
    fn interrupt(&mut self) -> Result<bool, Error> {
        if !interrupted() {
            return Ok(false);
        }
        let signal = match self.interrupt_sent {
            None => SIGINT,
            Some(at) if at.elapsed() > Duration::from_secs(1) => SIGTERM,
            Some(_) => return Ok(false),
        };
        self.interrupt_sent.get_or_insert_with(Instant::now);
        self.rec.session().signal_command(signal)?;
        if let Some(b) = &self.beside {
            b.signal(signal);
        }
        Ok(signal == SIGINT && self.rec.session().pid().is_none() && self.beside.is_none())
    }

    /// The progress line, on a terminal, every half second.
    fn show_progress(&mut self) {
        if !self.progress.is_some_and(|shown| shown.elapsed() > Duration::from_millis(500)) {
            return;
        }
        self.progress = Some(Instant::now());
        eprint!(
            "\r[ perfring-record: {:.1} s, {} samples, {} lost ]   ",
            self.start.elapsed().as_secs_f64(),
            self.rec.samples(),
            self.rec.session().lost_total()
        );
    }

    /// Stop, write what is left, and take the command's status.
    fn end(mut self) -> Result<Recorded, Error> {
        self.rec.session().stop()?;
        self.rec.drain(|_| {})?;
        let mut status = match self.beside.take() {
            Some(Beside(mut child)) => Some(exit_code(child.wait()?)),
            None => None,
        };
        if let Some(s) = self.rec.session().exit_status()? {
            status = Some(s);
        }
        // No command to give its status (-a, -p, -t alone): ended by SIGINT or SIGTERM, the
        // status is that signal's, 128 + N, as perf's (it raises the signal again at its end).
        if status.is_none() {
            status = perfring_linux::launch::interrupt_signal().map(|signal| 128 + signal);
        }
        if self.progress.is_some() {
            eprintln!();
        }
        Ok(Recorded { status, wakeups: self.wakeups, seconds: self.start.elapsed().as_secs_f64() })
    }
}
