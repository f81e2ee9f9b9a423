//! `--switch-output`, as perf record does it (builtin-record.c `record__switch_output`): when
//! the trigger comes — SIGUSR2, the data reaching a size, a time passing — the file is ended
//! and a new one begun ([`crate::recording::Recording::switch`]); here: when ([`When`]) and the
//! renamed files (`FILE.<timestamp>`, the N newest kept with `--switch-max-files`: [`Dumps`]).
//! At the end the last file is renamed too (`--timestamp-filename` alone does only that).

use std::time::Duration;

use perfring_linux::perf_data::timestamp_suffix;

use crate::cli::Options;
use crate::Error;

/// When to switch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// On SIGUSR2.
    Signal,
    /// When the data section reaches so many bytes.
    Size(u64),
    /// Every so long.
    Every(Duration),
}

impl When {
    /// perf's forms: `signal`, a size with its unit (`100M`: B, K, M, G), a time with its
    /// (`30s`: s, m, h, d); upper and lower case as perf takes them.
    pub fn parse(v: &str) -> Option<When> {
        if v == "signal" {
            return Some(When::Signal);
        }
        let (i, unit) = v.char_indices().last()?;
        let n: u64 = v[..i].parse().ok()?;
        let (bytes, secs) = match unit {
            'B' => (Some(1), None),
            'K' => (Some(1 << 10), None),
            'M' => (Some(1 << 20), None),
            'G' => (Some(1 << 30), None),
            's' => (None, Some(1)),
            'm' => (None, Some(60)),
            'h' => (None, Some(3600)),
            'd' => (None, Some(86_400)),
            _ => return None,
        };
        match (bytes, secs) {
            (Some(b), _) => n.checked_mul(b).map(When::Size),
            (_, Some(s)) => n.checked_mul(s).map(|t| When::Every(Duration::from_secs(t))),
            _ => None,
        }
    }
}

/// The files ended so far, for `--switch-max-files`.
#[derive(Default)]
pub struct Dumps {
    kept: Vec<String>,
}

impl Dumps {
    /// Rename the file at `o.output` (already finished or being written through an open
    /// descriptor) to `FILE.<timestamp>`, say so as perf does, and remove the oldest renamed
    /// file beyond `--switch-max-files`.
    pub fn rename(&mut self, o: &Options) -> Result<String, Error> {
        // Two dumps within a hundredth of a second would have one name: the later waits for
        // the next hundredth (perf's rename would replace the earlier file).
        let name = loop {
            let suffix = timestamp_suffix().ok_or("Failed to get current timestamp")?;
            let name = format!("{}.{suffix}", o.output());
            if !std::path::Path::new(&name).exists() {
                break name;
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        std::fs::rename(o.output(), &name).map_err(|e| format!("renaming {} to {name}: {e}", o.output()))?;
        if !o.quiet {
            eprintln!("[ perf record: Dump {name} ]");
        }
        self.kept.push(name.clone());
        if let Some(max) = o.switch_max_files.filter(|&m| m > 0) {
            while self.kept.len() > max {
                let old = self.kept.remove(0);
                std::fs::remove_file(&old).map_err(|e| format!("removing {old} (--switch-max-files): {e}"))?;
            }
        }
        Ok(name)
    }
}

#[cfg(test)]
mod tests {
    use super::When;
    use std::time::Duration;

    #[test]
    fn perfs_forms() {
        assert_eq!(When::parse("signal"), Some(When::Signal));
        assert_eq!(When::parse("1G"), Some(When::Size(1 << 30)));
        assert_eq!(When::parse("5B"), Some(When::Size(5)));
        assert_eq!(When::parse("2h"), Some(When::Every(Duration::from_secs(7200))));
        assert_eq!(When::parse("1d"), Some(When::Every(Duration::from_secs(86_400))));
        for bad in ["", "10", "10x", "k", "signals", "-1s", "99999999999999999999G"] {
            assert_eq!(When::parse(bad), None, "{bad}");
        }
    }
}
