//! The tracing data of a perf.data file with tracepoint events (feature TRACING_DATA; in pipe
//! mode a HEADER_TRACING_DATA record): the tracefs format files `perf script` needs to print a
//! tracepoint's fields, laid out as perf's `tools/perf/util/trace-event-info.c`
//! (`tracing_data_get`) writes them, version 0.6:
//!
//! ```text
//! "\x17\x08\x44tracing" "0.6\0" u8 big_endian u8 sizeof(long) u32 page_size
//! "header_page\0" u64 size, events/header_page
//! "header_event\0" u64 size, events/header_event
//! u32 n, n × {u64 size, events/ftrace/EVENT/format}      (the recorded events named in ftrace)
//! u32 n, n × {"SYSTEM\0" u32 m, m × {u64 size, events/SYSTEM/EVENT/format}}
//! u32 0                                                    (kallsyms: empty, as perf writes it)
//! u32 size, printk_formats
//! u64 size, saved_cmdlines
//! ```
//! Sizes are in the machine's byte order (the data is the machine's, read where it was made).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::LinuxError;

/// The tracefs events directory's root (`/sys/kernel/tracing` or the debugfs one), if mounted.
pub fn tracefs_root() -> Option<PathBuf> {
    ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"].iter().map(PathBuf::from).find(|r| r.join("events").is_dir())
}

/// `(system, event)` of the tracepoint whose id is `config`, found in `root/events`.
fn tracepoint_of_id(root: &Path, config: u64) -> Option<(String, String)> {
    for sys in std::fs::read_dir(root.join("events")).ok()?.flatten() {
        let Ok(events) = std::fs::read_dir(sys.path()) else { continue };
        for ev in events.flatten() {
            let id = std::fs::read_to_string(ev.path().join("id")).ok().and_then(|s| s.trim().parse::<u64>().ok());
            if id == Some(config) {
                return Some((sys.file_name().to_string_lossy().into(), ev.file_name().to_string_lossy().into()));
            }
        }
    }
    None
}

/// The name `system:event` of tracepoint id `config` (`None` without tracefs or such an id).
pub fn tracepoint_name(config: u64) -> Option<String> {
    let (s, e) = tracepoint_of_id(&tracefs_root()?, config)?;
    Some(format!("{s}:{e}"))
}

/// A tracefs file, read in 64 KiB reads: some (`events/header_page`) answer a read that does
/// not start at 0 with nothing, so the small first read `std::fs::read` makes of a file whose
/// size says 0 would cut them short.
fn read_whole(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let mut f = std::fs::File::open(path)?;
    let mut out = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match f.read(&mut buf) {
            Ok(0) => return Ok(out),
            Ok(n) => out.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

fn read(path: &Path) -> Result<Vec<u8>, LinuxError> {
    read_whole(path).map_err(|error| LinuxError::File { what: "reading tracefs", path: path.into(), error })
}

/// The tracing data for the tracepoints whose ids are `configs`.
pub fn tracing_data(configs: &[u64]) -> Result<Vec<u8>, LinuxError> {
    let root = tracefs_root().ok_or(LinuxError::TracefsNotMounted)?;
    let mut systems: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for &config in configs {
        let (s, e) = tracepoint_of_id(&root, config).ok_or(LinuxError::NoSuchTracepointId { config })?;
        let events = systems.entry(s).or_default();
        if !events.contains(&e) {
            events.push(e);
        }
    }
    let ne = cfg!(target_endian = "big");
    let u32b = |v: u32| if ne { v.to_be_bytes() } else { v.to_le_bytes() };
    let u64b = |v: u64| if ne { v.to_be_bytes() } else { v.to_le_bytes() };
    let mut o = Vec::new();
    o.extend_from_slice(b"\x17\x08\x44tracing0.6\0");
    o.push(u8::from(ne));
    o.push(std::mem::size_of::<std::ffi::c_long>() as u8);
    o.extend_from_slice(&u32b(crate::sys::page_size() as u32));
    let events = root.join("events");
    for name in ["header_page", "header_event"] {
        let body = read(&events.join(name))?;
        o.extend_from_slice(name.as_bytes());
        o.push(0);
        o.extend_from_slice(&u64b(body.len() as u64));
        o.extend_from_slice(&body);
    }
    let format = |dir: &Path, event: &str| read(&dir.join(event).join("format"));
    // ftrace's own events: those whose names were asked for (perf's name_in_tp_list).
    let asked: Vec<&String> = systems.values().flatten().collect();
    let ftrace = events.join("ftrace");
    let ftrace_events: Vec<String> = std::fs::read_dir(&ftrace)
        .map(|d| d.flatten().map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    let ftrace_events: Vec<&String> =
        ftrace_events.iter().filter(|e| asked.contains(e) && ftrace.join(e).join("format").is_file()).collect();
    o.extend_from_slice(&u32b(ftrace_events.len() as u32));
    for e in ftrace_events {
        let body = format(&ftrace, e)?;
        o.extend_from_slice(&u64b(body.len() as u64));
        o.extend_from_slice(&body);
    }
    systems.remove("ftrace");
    o.extend_from_slice(&u32b(systems.len() as u32));
    for (system, names) in &systems {
        o.extend_from_slice(system.as_bytes());
        o.push(0);
        o.extend_from_slice(&u32b(names.len() as u32));
        for e in names {
            let body = format(&events.join(system), e)?;
            o.extend_from_slice(&u64b(body.len() as u64));
            o.extend_from_slice(&body);
        }
    }
    o.extend_from_slice(&u32b(0)); // kallsyms
    let printk = read_whole(&root.join("printk_formats")).unwrap_or_default();
    o.extend_from_slice(&u32b(printk.len() as u32));
    o.extend_from_slice(&printk);
    let cmdlines = read_whole(&root.join("saved_cmdlines")).unwrap_or_default();
    o.extend_from_slice(&u64b(cmdlines.len() as u64));
    o.extend_from_slice(&cmdlines);
    Ok(o)
}
