//! From the options to an open [`Session`]: the events (`-e`, or perf's default), their
//! filters, the checks perf makes once the options are parsed, and the open itself with perf's
//! fallbacks (kernel samples where permitted, `cycles` to `cpu-clock` where there is no PMU).

use std::ops::Range;

use perfring_linux::launch::Stdout;
use perfring_linux::{Cgroup, LinuxError, Scope, Session};

use crate::cli::{self, Options};
use crate::config::{self, Configured};
use crate::events::{self, EventSpec};
use crate::failure::Failure;

/// The events of every `-e`, or perf's default; and each `-e` item's events (a range of the
/// list), for `--filter`.
pub fn event_specs(o: &Options) -> Result<(Vec<EventSpec>, Vec<Range<usize>>), Failure> {
    let mut specs = Vec::new();
    let mut items = Vec::new();
    for e in &o.events {
        let base = specs.len();
        for mut s in events::parse(e).map_err(|e| Failure::Usage(e.to_string()))? {
            s.leader = s.leader.map(|l| l + base);
            specs.push(s);
        }
        items.push(base..specs.len());
    }
    if specs.is_empty() {
        specs.push(events::default_event(events::can_profile_kernel()));
    }
    // --group: every event in the first one's group (perf's evlist__set_leader).
    if o.group && specs.len() > 1 {
        for s in &mut specs[1..] {
            s.leader = Some(0);
        }
    }
    // --all-user/--all-kernel before anything is named by its attr (perf's default event and
    // its cpu-clock fallback: `cpu-clock:uhppp`); `-e` events keep the names they were given.
    for s in &mut specs {
        s.attr.flags = config::exclusive(o, s.attr.flags);
    }
    Ok((specs, items))
}

/// Each event's `--filter`s and `--exclude-perf`s, joined as perf joins them (`(a) && (b)`);
/// perf's usage errors where one follows an event that is not a tracepoint (the software and
/// hardware PMUs here have no address filters).
pub fn filters(o: &Options, specs: &[EventSpec], items: &[Range<usize>]) -> Result<Vec<Option<String>>, Failure> {
    let mut out: Vec<Option<String>> = vec![None; specs.len()];
    for filter in &o.filters {
        for i in items.get(filter.item).cloned().unwrap_or_default() {
            if specs[i].attr.type_ != perfring_linux::event_type::TRACEPOINT {
                let why = if filter.exclude_perf {
                    "--exclude-perf option should follow a -e tracepoint option"
                } else {
                    "This CPU does not support address filtering"
                };
                return Err(Failure::Usage(why.into()));
            }
            let text = &filter.text;
            out[i] = Some(match out[i].take() {
                None => text.clone(),
                Some(old) => format!("({old}) && ({text})"),
            });
        }
    }
    Ok(out)
}

/// Each event's cgroup (`-G`), as perf's `parse_cgroups` assigns them: the names of all `-G`
/// options, counted together, go to the events in turn (the Nth name to event N, an empty name
/// skipping its event), each to an event defined before its `-G` (else perf's bare usage
/// error); and while one name has been given in all, every event defined before it takes it.
pub fn cgroups(o: &Options, specs: &[EventSpec], items: &[Range<usize>]) -> Result<Vec<Option<String>>, Failure> {
    let mut out: Vec<Option<String>> = vec![None; specs.len()];
    let mut given = 0;
    for g in &o.cgroups {
        let defined = items.get(..g.after).and_then(|i| i.last()).map_or(0, |r| r.end);
        for name in &g.names {
            if !name.is_empty() {
                if given >= defined {
                    return Err(Failure::Usage(String::new()));
                }
                out[given] = Some(name.clone());
            }
            given += 1;
        }
        if given == 1 {
            // (perf 6.1 crashes here where the one name is empty and several events precede
            // it; they are left unfiltered here.)
            let first = out[0].clone();
            out[..defined].fill(first);
        }
    }
    Ok(out)
}

/// What the options call for before anything runs: perf's refusals of values it parsed
/// (record_opts__config and its neighbours: -EINVAL, status 234), its notices and warnings.
pub fn preflight(o: &Options) -> Result<(), Failure> {
    if o.freq == Some(cli::Freq::Hz(0)) {
        return Err(Failure::Invalid("frequency and count are zero, aborting".into()));
    }
    if o.freq.is_some() && o.period.is_some() {
        return Err(Failure::Invalid("cannot set frequency and period at the same time".into()));
    }
    if let Some(why) = o.aux {
        return Err(Failure::Invalid(why.into()));
    }
    if let Some(v) = o.vmlinux.as_deref().filter(|v| !std::path::Path::new(v).is_file()) {
        return Err(Failure::Invalid(format!("Invalid file: {v}")));
    }
    if o.aio < 0 {
        // perf: a negative count of aio buffers fails their allocation (status 255).
        return Err(Failure::Failed("failed to mmap with 12 (Cannot allocate memory)".into()));
    }
    pending(o)?;
    if o.quiet {
        return Ok(());
    }
    o.notices.iter().for_each(|n| eprintln!("{n}"));
    if o.mmap_pages.is_some_and(|(_, rounded)| rounded) {
        let kib = o.pages() * 4;
        let size = if kib >= 1024 { format!("{}M", kib / 1024) } else { format!("{kib}K") };
        eprintln!("rounding mmap pages size to {size} ({} pages)", o.pages());
    }
    if matches!(o.call_graph, Some(cli::CallGraph::Dwarf { .. })) && o.user_regs.is_some() {
        eprintln!(
            "WARNING: The use of --call-graph=dwarf may require all the user registers, specifying a subset with \
             --user-regs may render DWARF unwinding unreliable, so the minimal registers set (IP, SP) is explicitly \
             forced."
        );
    }
    Ok(())
}

/// `-u`: the processes of a user (a name of /etc/passwd, or a number), as perf's
/// `thread_map__new_by_uid` finds them: those whose /proc entry the user owns. perf's words
/// (and its status, 0) for a user it cannot find.
pub fn user_pids(user: &str) -> Result<Vec<i32>, Failure> {
    use std::os::unix::fs::MetadataExt;
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap_or_default();
    let by_name = passwd.lines().find_map(|l| {
        let f: Vec<&str> = l.split(':').collect();
        (f.first() == Some(&user)).then(|| f.get(2)?.parse::<u32>().ok()).flatten()
    });
    let Some(uid) = by_name.or_else(|| user.parse().ok()) else {
        return Err(Failure::Said(format!("Error:\nInvalid User: {user}"), 0));
    };
    let mut pids: Vec<i32> = perfring_linux::perf_data::all_pids()
        .into_iter()
        .filter(|&p| p != std::process::id() as i32)
        .filter(|p| std::fs::metadata(format!("/proc/{p}")).is_ok_and(|m| m.uid() == uid))
        .collect();
    pids.sort_unstable();
    if pids.is_empty() {
        return Err(Failure::Failed(format!("no process of user {user} to record (-u)").into()));
    }
    Ok(pids)
}

/// Options parsed and not implemented yet: refused. `--kcore` where /proc/kcore cannot be read
/// is perf's error (255).
fn pending(o: &Options) -> Result<(), Failure> {
    if o.kcore && std::fs::File::open("/proc/kcore").is_err() {
        return Err(Failure::Failed("ERROR: kcore is not readable.".into()));
    }
    if let Some(user) = &o.uid {
        user_pids(user)?;
    }
    let pending = [(o.kcore, "--kcore (where /proc/kcore is readable: its copy)")];
    match pending.iter().find(|(given, _)| *given) {
        Some((_, name)) => Err(Failure::Usage(format!("{name}: not implemented yet in perfring-record"))),
        None => Ok(()),
    }
}

/// Whom the session follows.
pub fn scope(o: &Options) -> Scope {
    if let Some(cpus) = &o.cpus {
        Scope::Cpus(cpus.clone())
    } else if o.all_cpus {
        Scope::AllCpus
    } else if !o.pids.is_empty() {
        Scope::Processes(o.pids.clone())
    } else if !o.tids.is_empty() {
        Scope::Threads(o.tids.clone())
    } else if let Some(pids) = o.uid.as_deref().and_then(|u| user_pids(u).ok()) {
        Scope::Processes(pids)
    } else {
        Scope::Command(o.command.clone())
    }
}

/// Open the session for `specs`, falling back as perf does; the events as configured.
pub fn open(
    o: &Options,
    (specs, cgroups): (&mut [EventSpec], &[Option<String>]),
    freq: Option<u64>,
    stdout: Stdout,
) -> Result<(Session, Vec<Configured>), Failure> {
    let scope = scope(o);
    let mut warned = false;
    loop {
        let configured = config::configure(o, specs, freq);
        let mut b = Session::builder(scope.clone())
            .data_pages(o.pages())
            .command_stdout(stdout)
            .attrs_as_given(true)
            .overwrite(o.overwrite)
            .per_thread(o.per_thread());
        for c in &configured {
            b = match c.leader {
                Some(l) => b.group_member(c.attr, l),
                None => b.event(c.attr),
            };
        }
        // -G: the events of the command line (perf's tracking dummy, last, in none).
        for (event, name) in cgroups.iter().enumerate() {
            if let Some(name) = name {
                b = b.cgroup(event, Cgroup::open(name)?);
            }
        }
        match b.open() {
            Ok(mut session) => {
                // --mmap-flush: a ring read once it holds so much, until the end.
                session.flush_at(o.mmap_flush.unwrap_or(0));
                // --affinity: each ring read on its CPU or node.
                session.set_affinity(o.affinity)?;
                return Ok((session, configured));
            }
            Err(e) => fall_back(o, specs, &configured, e, &mut warned)?,
        }
    }
}

/// perf's fallbacks after a refused open, or the error: an event refused at a paranoid level
/// above 1 is opened again counting user space only (one by one, with one warning); `cycles`
/// where there is no PMU becomes `cpu-clock` (perf says so with -v); other hardware events get
/// perf's words.
fn fall_back(
    o: &Options,
    specs: &mut [EventSpec],
    configured: &[Configured],
    e: LinuxError,
    warned: &mut bool,
) -> Result<(), Failure> {
    let refusal = match &e {
        LinuxError::OpenEvent { event, error, .. } if *event < specs.len() => Some((*event, &**error)),
        _ => None,
    };
    match refusal {
        Some((event, &LinuxError::PermissionDenied { paranoid, .. })) if paranoid.map_or(true, |p| p > 1) => {
            let Some(u) = events::user_only(&specs[event]) else {
                return Err(Failure::Failed(Box::new(e)));
            };
            specs[event] = u;
            if !o.quiet && !std::mem::replace(warned, true) {
                eprintln!(
                    "perfring-record: warning: kernel samples not permitted (perf_event_paranoid is {}): recording \
                     user space only (as perf record does; lower /proc/sys/kernel/perf_event_paranoid or add :u to \
                     silence this)",
                    paranoid.map_or("unreadable".to_string(), |p| p.to_string())
                );
            }
            Ok(())
        }
        Some((event, LinuxError::NotSupported { .. })) => {
            let Some(f) = events::fallback(&specs[event]) else {
                return Err(not_supported(&configured[event]));
            };
            if o.verbose > 0 && !o.quiet {
                eprintln!("Warning:\nThe cycles event is not supported, trying to fall back to cpu-clock-ticks");
            }
            specs[event] = f;
            Ok(())
        }
        _ => Err(Failure::Failed(Box::new(e))),
    }
}

/// perf's evsel__open_strerror for EOPNOTSUPP.
fn not_supported(c: &Configured) -> Failure {
    let name = &c.name;
    let why = if c.attr.attr().sample_type & perfring::record::sample_type::BRANCH_STACK != 0 {
        format!("{name}: PMU Hardware or event type doesn't support branch stack sampling.")
    } else {
        format!("The {name} event is not supported.")
    };
    Failure::Failed(format!("Error:\n{why}").into())
}

/// Set each event's tracepoint filter, with perf's words where the kernel refuses one.
pub fn set_filters(session: &Session, filters: &[Option<String>], names: &[String]) -> Result<(), Failure> {
    for (event, p) in session.events().zip(session.placements()) {
        let Some(Some(filter)) = filters.get(p.event) else { continue };
        if let Err(e) = event.set_filter(filter) {
            // perf's words: `failed to set filter "F" on event E with 22 (Invalid argument)`.
            let (errno, why) = match &e {
                LinuxError::Io { error, .. } => {
                    let text = error.to_string();
                    let why = text.split(" (os error").next().unwrap_or("").to_string();
                    (error.raw_os_error().unwrap_or(0), why)
                }
                other => (0, other.to_string()),
            };
            let name = &names[p.event];
            return Err(Failure::Failed(
                format!("failed to set filter \"{filter}\" on event {name} with {errno} ({why})").into(),
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::Cgroups;

    /// perf's assignment, for `-e` items of `events` and `-G` options of `(after, names)`.
    fn assigned(events: &[&str], gs: &[(usize, &str)]) -> Result<Vec<Option<String>>, String> {
        let given = gs.iter().map(|&(after, n)| Cgroups { after, names: n.split(',').map(String::from).collect() });
        let o = Options {
            events: events.iter().map(|e| e.to_string()).collect(),
            cgroups: given.collect(),
            ..Options::default()
        };
        let (specs, items) = event_specs(&o).map_err(|_| "events".to_string())?;
        cgroups(&o, &specs, &items).map_err(|e| match e {
            Failure::Usage(m) => format!("usage: {m:?}"),
            _ => "other".into(),
        })
    }

    fn names(v: &[Option<&str>]) -> Vec<Option<String>> {
        v.iter().map(|n| n.map(String::from)).collect()
    }

    #[test]
    fn cgroups_go_to_events_as_perf_assigns_them() {
        let c = "cpu-clock";
        // By position among the events before each -G, counted over every -G; "" skips one.
        assert_eq!(assigned(&[c, c], &[(2, "a,b")]), Ok(names(&[Some("a"), Some("b")])));
        assert_eq!(assigned(&[c, c, c], &[(3, "a,,b")]), Ok(names(&[Some("a"), None, Some("b")])));
        assert_eq!(assigned(&[c, c], &[(1, "a"), (2, "b")]), Ok(names(&[Some("a"), Some("b")])));
        // One name in all: every event defined before it, not those after.
        assert_eq!(assigned(&[c, c], &[(2, "a")]), Ok(names(&[Some("a"), Some("a")])));
        assert_eq!(assigned(&[c, c], &[(1, "a")]), Ok(names(&[Some("a"), None])));
        assert_eq!(assigned(&["cpu-clock,task-clock"], &[(1, "a")]), Ok(names(&[Some("a"), Some("a")])));
        // ...and a second -G goes on counting from there.
        assert_eq!(assigned(&[c, c], &[(2, "a"), (2, "b")]), Ok(names(&[Some("a"), Some("b")])));
        // A name with no event defined before it at that position: perf's bare usage.
        assert_eq!(assigned(&[c], &[(1, "a,b")]), Err("usage: \"\"".into()));
        assert_eq!(assigned(&[c, c], &[(1, ",a")]), Err("usage: \"\"".into()));
        assert_eq!(assigned(&[c], &[(1, ",a")]), Err("usage: \"\"".into()));
        assert_eq!(assigned(&[c, c], &[(2, "a,,")]), Ok(names(&[Some("a"), None])));
    }
}
