//! `--switch-output`, as perf record does it (builtin-record.c `record__switch_output`): when
//! the trigger comes — SIGUSR2, the data reaching a size, a time passing — the file is ended
//! and a new one begun ([`crate::recording::Recording::switch`]) when [`When`] says; here the
//! renamed files (`FILE.<timestamp>`, the N newest kept with `--switch-max-files`: [`Dumps`]).
//! At the end the last file is renamed too (`--timestamp-filename` alone does only that).

use std::time::Duration;

use perfring_linux::perf_data::timestamp_suffix;

use crate::cli::Options;
use crate::failure::Error;

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
