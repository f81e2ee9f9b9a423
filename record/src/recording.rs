//! [`Recording`]: a [`Session`] and the perf.data it is written to, from the records perf
//! synthesizes before the first sample to the features after the last: [`begin`]
//! (compression, what already runs, FINISHED_INIT), [`drain`] (the rings to the file),
//! [`switch`] (`--switch-output`: end this file, rename it, begin the next), [`finish`] (the
//! tail synthesis, lost samples, features and build ids, the summary).
//!
//! [`begin`]: Recording::begin
//! [`drain`]: Recording::drain
//! [`switch`]: Recording::switch
//! [`finish`]: Recording::finish

use std::io::Write;

use perfring_linux::perf_data::{PerfData, Synthesis};
use perfring_linux::LinuxError;
use perfring_linux::{Session, SessionRecord};

use crate::cli::Options;
use crate::failure::{Error, Failure};
use crate::summary;
use crate::switch_output::Dumps;
use crate::threads::{Streams, Writing};

/// What the loop leaves for the summary.
pub struct Recorded {
    /// The command's exit status.
    pub status: Option<i32>,
    /// Passes that found records.
    pub wakeups: u64,
    /// Seconds from start to end.
    pub seconds: f64,
}

/// Makes the perf.data of the next `--switch-output` file at the output's path (file mode).
pub type NextFile<W> = fn(&Options, &Session, &[String]) -> Result<PerfData<W>, Error>;

/// A recording in progress: see the [module docs](self).
pub struct Recording<'o, W: Write> {
    o: &'o Options,
    session: Session,
    data: PerfData<W>,
    names: Vec<String>,
    dumps: Dumps,
    next_file: Option<NextFile<W>>,
    /// `--threads`: the reader threads, which write the rings to files of their own.
    streams: Option<Streams>,
}

impl<'o, W: Write> Recording<'o, W> {
    /// Begin writing `session` to `data` (its attrs written already): `-z`, then what already
    /// runs (COMM and MMAP2 from /proc, at the end instead with `--tail-synthesize`), the
    /// command's COMM, FINISHED_INIT. `next_file` makes the next file of `--switch-output`.
    pub fn begin(
        o: &'o Options,
        session: Session,
        mut data: PerfData<W>,
        names: Vec<String>,
        next_file: Option<NextFile<W>>,
    ) -> Result<Self, Error> {
        if let Some(level) = o.compression {
            data.writer().compress(level).map_err(LinuxError::from)?;
        }
        prepare(&mut data, o)?;
        if !o.tail_synthesize {
            synthesize(&mut data, o)?;
        }
        if let Some(pid) = session.pid() {
            data.synthesize_command(pid)?;
        }
        if !o.tail_synthesize {
            data.finish_init()?;
        }
        Ok(Recording { o, session, data, names, dumps: Dumps::default(), next_file, streams: None })
    }

    /// `--threads`: hand the rings to reader threads, a group of rings each
    /// ([`crate::threads::groups`]), which write ring N to `dir/data.N`; this file says it heads
    /// a directory (DIR_FORMAT). The session's events leave its epoll set (their poll would take
    /// the readers' wakeups).
    pub fn stream(&mut self, dir: &std::path::Path, groups: Vec<Vec<usize>>) -> Result<(), Error> {
        crate::threads::dir_format(&mut self.data)?;
        self.session.release_rings()?;
        let o = self.o;
        let writing = Writing { compress: o.compression, flush: o.mmap_flush.unwrap_or(0), overwrite: o.overwrite };
        self.streams = Some(Streams::start(&self.session, dir, groups, writing)?);
        Ok(())
    }

    /// The session, for its waits and its command.
    pub fn session(&mut self) -> &mut Session {
        &mut self.session
    }

    /// Write what the rings hold to the file, each record handed to `f` too; how many.
    /// With `--threads`, nothing: the readers write the rings.
    pub fn drain(&mut self, f: impl FnMut(&SessionRecord<'_>)) -> Result<usize, Error> {
        if self.streams.is_some() {
            return Ok(0);
        }
        Ok(self.data.drain_with(&mut self.session, f)?)
    }

    /// Bytes of the current file's data section (and, with `--threads`, of the readers').
    pub fn data_size(&mut self) -> u64 {
        self.data.writer().data_size() + self.streams.as_ref().map_or(0, Streams::bytes)
    }

    /// Samples written so far.
    pub fn samples(&self) -> u64 {
        self.data.samples().iter().sum()
    }

    /// `--switch-output`: end the current file (an overwrite session's rings read into it
    /// first, then its tail), rename it FILE.<timestamp>, and begin a new one at the path as a
    /// recording begins (what runs, the command's threads, FINISHED_INIT).
    pub fn switch(&mut self) -> Result<(), Error> {
        let next_file = self.next_file.ok_or("--switch-output writes files, not a pipe")?;
        if self.o.overwrite {
            self.session.collect_overwrite();
        }
        // Every ring into the file that ends, --mmap-flush's threshold aside (perf's
        // synchronous read at a switch).
        self.session.flush_at(0);
        self.data.drain(&mut self.session)?;
        self.session.flush_at(self.o.mmap_flush.unwrap_or(0));
        self.tail()?;
        self.dumps.rename(self.o)?;
        let mut next = next_file(self.o, &self.session, &self.names)?;
        if let Some(level) = self.o.compression {
            next.writer().compress(level).map_err(LinuxError::from)?;
        }
        prepare(&mut next, self.o)?;
        if !self.o.tail_synthesize {
            synthesize(&mut next, self.o)?;
        }
        if let Some(pid) = self.session.pid() {
            next.synthesize(pid)?;
        }
        if !self.o.tail_synthesize {
            next.finish_init()?;
        }
        let ended = std::mem::replace(&mut self.data, next);
        ended.finish_with(!self.o.no_buildid, !self.o.no_buildid && !self.o.no_buildid_cache)?;
        Ok(())
    }

    /// What a file ends with before its features: with `--buildid-all` every file mapped
    /// counted as hit; an overwrite session's tail synthesis (its rings kept only the newest
    /// records, so what runs now follows them) and the command's name, which the ring may have
    /// overwritten (named as the kernel names it at exec: the program's base name, 15 bytes at
    /// most); with `--tail-synthesize`, what runs, then FINISHED_INIT.
    fn tail(&mut self) -> Result<(), Error> {
        let o = self.o;
        if o.buildid_all {
            self.data.dsos_mut().hit_all();
        }
        if o.overwrite || o.tail_synthesize {
            synthesize(&mut self.data, o)?;
        }
        if o.tail_synthesize {
            self.data.finish_init()?;
        }
        if !o.overwrite {
            return Ok(());
        }
        if let (Some(pid), Some(program)) = (self.session.pid(), o.command.first()) {
            let base = program.rsplit('/').next().unwrap_or(program);
            let end = (0..=base.len().min(15)).rev().find(|&i| base.is_char_boundary(i)).unwrap_or(0);
            self.data.synthesize_comm(pid, &base[..end])?;
        }
        Ok(())
    }

    /// End the recording: its tail, each event's lost samples, the file completed whatever
    /// happened (an unexecutable command leaves it empty), renamed with
    /// `--timestamp-filename`; perf's summary. The status: the command's.
    pub fn finish(mut self, recorded: Result<Recorded, Error>) -> Result<u8, Failure> {
        // The readers drain their rings once more (the session stopped the events) and end.
        let streamed = match self.streams.take() {
            Some(streams) => streams.finish(&mut self.session)?,
            None => Default::default(),
        };
        streamed.tell(&mut self.data);
        if recorded.is_ok() {
            self.tail()?;
        }
        let lost = match &recorded {
            Ok(_) => self.data.write_lost_samples(&self.session)?,
            Err(_) => vec![0; self.names.len()],
        };
        let o = self.o;
        let mut samples = self.data.samples().to_vec();
        samples.iter_mut().zip(&streamed.samples).for_each(|(a, b)| *a += b);
        let (records, bytes) = (self.data.records(), self.data.bytes() + streamed.bytes);
        let lost_records = (
            self.session.lost_total() + streamed.lost,
            records.get(&perfring::record::types::LOST).copied().unwrap_or(0) + streamed.lost_records,
        );
        let finished = self.data.finish_with(!o.no_buildid, !o.no_buildid && !o.no_buildid_cache);
        let recorded = recorded?;
        let written = finished?;
        // --timestamp-filename (and --switch-output): the last file is renamed too; perf's
        // summary then names it FILE.<timestamp>.
        let output = if o.timestamp_filename {
            drop(written.0);
            self.dumps.rename(o)?;
            format!("{}.<timestamp>", o.output())
        } else {
            o.output().to_string()
        };
        if !o.quiet {
            let s = summary::Summary {
                wakeups: recorded.wakeups + streamed.wakeups,
                bytes: written.1 + streamed.bytes,
                original: o.compression.map(|_| bytes),
                output: &output,
                samples: &samples,
                lost: &lost,
                lost_records,
                names: &self.names,
                records,
                seconds: recorded.seconds,
                status: recorded.status,
            };
            summary::print(&s, o.verbose > 0);
        }
        Ok(recorded.status.map_or(0, |s| s.clamp(0, 255) as u8))
    }
}

/// What the options add to the synthesis (`--namespaces`, `--proc-map-timeout`, perf's 500 ms
/// by default), set on a new file; with `--all-cgroups`, the cgroups that exist now, written
/// first (perf synthesizes them before the threads).
fn prepare<W: Write>(d: &mut PerfData<W>, o: &Options) -> Result<(), LinuxError> {
    let ms = o.proc_map_timeout.unwrap_or(crate::cli::PROC_MAP_TIMEOUT_MS);
    let proc_map_timeout = Some(std::time::Duration::from_millis(ms));
    d.set_synthesis(Synthesis { namespaces: o.namespaces, proc_map_timeout });
    if o.all_cgroups {
        d.synthesize_cgroups()?;
    }
    Ok(())
}

/// COMM and MMAP2 of what runs now, from /proc: every process (`-a`, `-C`), or those of `-p`
/// and `-t`; perf's warning for each whose maps took longer than `--proc-map-timeout`.
fn synthesize<W: Write>(d: &mut PerfData<W>, o: &Options) -> Result<(), LinuxError> {
    let before = d.map_timeouts().len();
    if o.cpu_wide() {
        d.synthesize_all()?;
    }
    for &pid in o.pids.iter().chain(&o.tids) {
        d.synthesize(pid)?;
    }
    if !o.quiet {
        for pid in &d.map_timeouts()[before..] {
            eprintln!(
                "Reading /proc/{pid}/task/{pid}/maps time out. You may want to increase the time limit by \
                 --proc-map-timeout"
            );
        }
    }
    Ok(())
}
