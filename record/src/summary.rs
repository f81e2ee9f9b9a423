//! What the recorder says at the end: perf record's two lines (`[ perf record: Woken up N
//! times to write data ]`, `[ perf record: Captured and wrote X MB FILE (M samples) ]`), a
//! line for losses when there were any (the counts perf report shows as "Total Lost
//! Samples" and "lost N%"), and with `-v` the table of records by type and samples and
//! losses by event. Written to stderr (stdout may carry the data), ignoring a closed stderr.

use std::collections::BTreeMap;
use std::io::Write;

/// What the recording did.
pub struct Summary<'a> {
    /// Wakeups the recorder was woken for.
    pub wakeups: u64,
    /// Bytes of the data section.
    pub bytes: u64,
    /// Bytes before compression, with `-z`.
    pub original: Option<u64>,
    /// The output's name (`-` for pipe mode).
    pub output: &'a str,
    /// Samples by event.
    pub samples: &'a [u64],
    /// Samples lost by event (PERF_FORMAT_LOST), the LOST_SAMPLES records written.
    pub lost: &'a [u64],
    /// Records the rings reported lost (PERF_RECORD_LOST) and the number of such records.
    pub lost_records: (u64, u64),
    /// The events' names.
    pub names: &'a [String],
    /// Records by type.
    pub records: BTreeMap<u32, u64>,
    /// Seconds recorded.
    pub seconds: f64,
    /// The command's exit status.
    pub status: Option<i32>,
}

/// Print `s` (verbose: the table too). Errors writing stderr are ignored: a closed stderr
/// (`2>&-`, a pipe whose reader left) must not turn a finished recording into a failure.
pub fn print(s: &Summary<'_>, verbose: bool) {
    let mut e = std::io::stderr().lock();
    let _ = write_summary(&mut e, s, verbose);
}

fn write_summary(e: &mut impl Write, s: &Summary<'_>, verbose: bool) -> std::io::Result<()> {
    let mb = |b: u64| b as f64 / 1024.0 / 1024.0;
    let samples: u64 = s.samples.iter().sum();
    let lost: u64 = s.lost.iter().sum();
    writeln!(e, "[ perf record: Woken up {} times to write data ]", s.wakeups)?;
    match (s.original, s.output) {
        (Some(orig), out) => writeln!(
            e,
            "[ perf record: Captured and wrote {:.3} MB {out}, compressed (original {:.3} MB, ratio is {:.3}) ]",
            mb(s.bytes),
            mb(orig),
            orig as f64 / s.bytes.max(1) as f64
        )?,
        (None, "-") => writeln!(e, "[ perf record: Captured and wrote {:.3} MB - ]", mb(s.bytes))?,
        (None, out) => {
            writeln!(e, "[ perf record: Captured and wrote {:.3} MB {out} ({samples} samples) ]", mb(s.bytes))?
        }
    }
    if lost > 0 || s.lost_records.0 > 0 {
        // perf report: "Total Lost Samples: N", "Processed M samples and lost X%".
        let pct = 100.0 * lost as f64 / (samples + lost).max(1) as f64;
        writeln!(
            e,
            "[ perfring-record: lost {lost} samples ({pct:.2}% of {}), reported by the rings in {} LOST records of {} ]",
            samples + lost,
            s.lost_records.1,
            s.lost_records.0
        )?;
    }
    if verbose {
        writeln!(e, "perfring-record: {:.2} s, {} bytes of records", s.seconds, s.bytes)?;
        writeln!(e, "  records by type:")?;
        for (t, n) in &s.records {
            writeln!(e, "    {:<32} {n:>9}", perfring::record::type_name(*t))?;
        }
        writeln!(e, "  samples by event:               kept      lost")?;
        for (i, name) in s.names.iter().enumerate() {
            let (k, l) = (s.samples.get(i).copied().unwrap_or(0), s.lost.get(i).copied().unwrap_or(0));
            writeln!(e, "    {name:<28} {k:>9} {l:>9}")?;
        }
        if let Some(code) = s.status.filter(|&c| c != 0) {
            writeln!(e, "  the command exited with status {code}")?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lines_are_perfs_and_losses_are_said() {
        let names = vec!["cpu-clock".to_string()];
        let s = Summary {
            wakeups: 3,
            bytes: 3 << 20,
            original: None,
            output: "perf.data",
            samples: &[750],
            lost: &[250],
            lost_records: (260, 4),
            names: &names,
            records: BTreeMap::new(),
            seconds: 1.0,
            status: None,
        };
        let mut out = Vec::new();
        write_summary(&mut out, &s, false).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("[ perf record: Woken up 3 times to write data ]"), "{text}");
        assert!(text.contains("[ perf record: Captured and wrote 3.000 MB perf.data (750 samples) ]"), "{text}");
        assert!(text.contains("lost 250 samples (25.00% of 1000)"), "{text}");
    }
}
