//! Every option and event form of perf record's command line that issue 41 lists, and the
//! sample-field, clock and scope options perf users type beside them, run by
//! `perf record` and by `perfring-record` with the same arguments: the same exit status, and,
//! where both record, the same `perf evlist -v` of the two files (every attr field perf
//! prints, the names included). Where perf refuses (no PMU for `instructions` or `rNNN`, no
//! `cpu` PMU, an unknown event), ours refuses with the same status (255, or 129 for a usage
//! error) and perf's words.
//!
//! Fields that differ by design, taken out of our line before the comparison:
//! * `watermark: 1` and `{ wakeup_events, wakeup_watermark }: N`: our recorder is woken when a
//!   ring is 3/4 full (7/8 for rings of up to 16 KiB), perf at its default half (no field
//!   printed), so that under load each wakeup brings more (see BENCHMARKS.md, issue 41). Pipe
//!   mode, `--overwrite`, `--no-buffering` and `--max-size` keep perf's attr.
//!
//! (The ids inside the files differ, being the kernel's for each run; `perf evlist -v` does not
//! print them.)

use std::path::Path;
use std::process::{Child, Command, Output};

use crate::common::{self, tmp};

pub(crate) fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Whether this process may record every CPU (root, or perf_event_paranoid <= 0); if not,
/// the test skips.
pub(crate) fn may_record_cpus() -> bool {
    let paranoid: i32 = std::fs::read_to_string("/proc/sys/kernel/perf_event_paranoid")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(2);
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !(root || paranoid <= 0) {
        perfring_test_support::skip("recording every CPU needs root or perf_event_paranoid <= 0");
        return false;
    }
    true
}

/// Our evlist line without the fields that differ by design (see the module docs): the
/// watermark and its size, where we set a watermark (a `wakeup_events` of perf's own, as
/// `--no-buffering` sets it, stays).
pub(crate) fn by_design(line: &str) -> String {
    let watermark = line.split(", ").any(|f| f == "watermark: 1");
    line.split(", ")
        .filter(|f| {
            !watermark
                || *f != "watermark: 1" && !f.starts_with("{ wakeup_events") && !f.starts_with("wakeup_watermark }")
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// `perf evlist -v -i FILE`.
pub(crate) fn evlist(file: &Path) -> String {
    let out = Command::new("perf").args(["evlist", "-v", "-i"]).arg(file).output().unwrap();
    assert!(out.status.success(), "perf evlist of {}: {}", file.display(), text(&out.stderr));
    text(&out.stdout).lines().filter(|l| !l.starts_with('#')).collect::<Vec<_>>().join("\n")
}

/// Run `tool ARGS -- CMD` with the output given by `output(path)` (`-o PATH`, or the form
/// under test, `-oPATH`).
fn run(tool: &str, name: &str, args: &[String], output: &dyn Fn(&Path) -> Vec<String>, cmd: &[&str]) -> Output {
    let file = tmp(name);
    let _ = std::fs::remove_file(&file);
    let mut c = common::record_with(tool);
    // Each tool's build-id cache in a folder of its own (the forms do not depend on it).
    c.env("HOME", tmp(&format!("home-{name}")));
    c.arg("-q").args(output(&file)).args(args).arg("--").args(cmd);
    // perf 6.1 now and then dies of its own heap corruption, reported by glibc (by a signal, or
    // by an exit status with glibc's words on stderr), or deadlocks in malloc after it: a
    // crashed perf, or one not ended after 60 s (killed), is run again, eight times at most,
    // so that the comparison is with what perf means to do. (`--affinity=node|cpu` corrupts
    // it in about half its runs, too often for retries: `perf_options::affinity` asks perf for
    // `--affinity=sys` instead.)
    let crashed = |out: &Output| {
        let err = text(&out.stderr);
        out.status.code().is_none() || ["malloc", "free()", "corrupted"].iter().any(|w| err.contains(w))
    };
    if tool != "perf" {
        return c.output().unwrap();
    }
    let mut out = output_within(&mut c, std::time::Duration::from_secs(60));
    for _ in 0..8 {
        if !crashed(&out) {
            break;
        }
        out = output_within(&mut c, std::time::Duration::from_secs(60));
    }
    out
}

/// `c.output()`, the process killed (SIGKILL) if it has not ended within `limit`.
fn output_within(c: &mut Command, limit: std::time::Duration) -> Output {
    use std::process::Stdio;
    // As `output()`: no input, both outputs captured.
    let child = c.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id() as i32;
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || tx.send(child.wait_with_output().unwrap()));
    let out = rx.recv_timeout(limit).unwrap_or_else(|_| {
        // SAFETY: kill(2) of our own child, not yet reaped (its waiter holds it until it ends).
        unsafe { libc::kill(pid, libc::SIGKILL) };
        rx.recv().unwrap()
    });
    waiter.join().unwrap().unwrap();
    out
}

/// [`same_as_perf`] for each `(label, args, command)`, all at once: perf record spends most of
/// a second of each run waiting for its BPF side-band thread, so forms run one after another
/// would spend their time asleep. A failing form fails the test (its panic, with its label).
pub(crate) fn each_as_perf(forms: &[(&str, &[&str], &[&str])]) {
    std::thread::scope(|s| {
        for &(label, args, cmd) in forms {
            s.spawn(move || same_as_perf(label, args, cmd));
        }
    });
}

/// The form `args` by both tools: same status; if both recorded, the same evlist.
fn same_as_perf(label: &str, args: &[&str], cmd: &[&str]) {
    same_as_perf_with(label, args, &|f| vec!["-o".into(), f.display().to_string()], cmd);
}

pub(crate) fn same_as_perf_with(label: &str, args: &[&str], output: &dyn Fn(&Path) -> Vec<String>, cmd: &[&str]) {
    if !perfring_test_support::perf_available() {
        return;
    }
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let theirs = run("perf", &format!("{label}-perf.data"), &args, output, cmd);
    let ours = run("ours", &format!("{label}-ours.data"), &args, output, cmd);
    assert_eq!(
        ours.status.code(),
        theirs.status.code(),
        "{label}: {args:?} exit status\nperf: {}\nours: {}",
        text(&theirs.stderr),
        text(&ours.stderr)
    );
    let (pf, of) = (tmp(&format!("{label}-perf.data")), tmp(&format!("{label}-ours.data")));
    if theirs.status.success() {
        let (a, b) = (evlist(&pf), evlist(&of).lines().map(by_design).collect::<Vec<_>>().join("\n"));
        println!("{label}: perf evlist -v\n  perf: {a}\n  ours: {b}");
        assert_eq!(b, a, "{label}: perf evlist -v of our file against perf's, for {args:?}");
    } else {
        // perf's message, first line, is in ours.
        let perf_says = text(&theirs.stderr);
        let key = perf_says.lines().map(str::trim).find(|l| !l.is_empty() && *l != "Error:").unwrap_or("");
        // perf's prefix is " Error: ", ours "perfring-record: "; where perf (-q) says nothing
        // but its usage, ours shows its own.
        let key = key.strip_prefix("Error: ").unwrap_or(key);
        let key = if key.starts_with("Usage: perf record") { "usage: perfring-record" } else { key };
        let key = key.split('\'').next().unwrap_or(key);
        assert!(text(&ours.stderr).contains(key), "{label}: perf says {perf_says:?}; ours: {}", text(&ours.stderr));
    }
    for f in [pf, of] {
        std::fs::remove_file(&f).ok();
    }
    for home in [format!("home-{label}-perf.data"), format!("home-{label}-ours.data")] {
        std::fs::remove_dir_all(tmp(&home)).ok();
    }
}

/// A process that sleeps until dropped.
pub(crate) struct Sleeper(Child);
impl Sleeper {
    pub(crate) fn new() -> Sleeper {
        Sleeper(Command::new("sleep").arg("30").spawn().unwrap())
    }
    pub(crate) fn pid(&self) -> String {
        self.0.id().to_string()
    }
}
impl Drop for Sleeper {
    fn drop(&mut self) {
        self.0.kill().ok();
        self.0.wait().ok();
    }
}

#[test]
fn freq_attached() {
    same_as_perf("f99", &["-F99"], &["true"]);
}

#[test]
fn freq_long_with_equals() {
    same_as_perf("freq-eq", &["--freq=99"], &["true"]);
}

#[test]
fn all_cpus_and_call_graph_clustered() {
    if may_record_cpus() {
        same_as_perf("ag", &["-ag"], &["true"]);
    }
}

#[test]
fn output_attached() {
    same_as_perf_with("o-attached", &[], &|f| vec![format!("-o{}", f.display())], &["true"]);
}

#[test]
fn mmap_size_with_a_unit() {
    same_as_perf("m512k", &["-m", "512K"], &["true"]);
}

#[test]
fn pid_list() {
    let (a, b) = (Sleeper::new(), Sleeper::new());
    let pids = format!("{},{}", a.pid(), b.pid());
    same_as_perf("pids", &["-p", &pids], &["sleep", "0.1"]);
}

#[test]
fn call_graph_fp() {
    same_as_perf("cg-fp", &["--call-graph", "fp"], &["true"]);
}

#[test]
fn call_graph_dwarf_with_a_size() {
    same_as_perf("cg-dwarf", &["--call-graph", "dwarf,4096"], &["true"]);
}

#[test]
fn cpu_list() {
    if may_record_cpus() {
        same_as_perf("cpu0", &["-C", "0"], &["true"]);
    }
}

#[test]
fn thread_id() {
    let a = Sleeper::new();
    same_as_perf("tid", &["-t", &a.pid()], &["sleep", "0.1"]);
}

#[test]
fn timestamp() {
    same_as_perf("T", &["-T"], &["true"]);
}

#[test]
fn data_addresses() {
    same_as_perf("d", &["-d"], &["true"]);
}

#[test]
fn compressed() {
    same_as_perf("z", &["-z"], &["true"]);
}

#[test]
fn no_inherit() {
    same_as_perf("no-inherit", &["--no-inherit"], &["true"]);
}

#[test]
fn no_buildid_cache() {
    same_as_perf("N", &["-N"], &["true"]);
}

#[test]
fn verbose() {
    same_as_perf("v", &["-v"], &["true"]);
}

#[test]
fn count_without_period_in_samples() {
    same_as_perf("c", &["-c", "1000"], &["true"]);
}

#[test]
fn cycles_falls_back_as_perf_does() {
    same_as_perf("cycles", &["-e", "cycles"], &["true"]);
}

#[test]
fn instructions_is_perfs_error_without_a_pmu() {
    same_as_perf("instructions", &["-e", "instructions"], &["true"]);
}

#[test]
fn precise_modifiers() {
    each_as_perf(&[("p", &["-e", "cpu-clock:p"], &["true"]), ("pp", &["-e", "cpu-clock:pp"], &["true"])]);
}

#[test]
fn a_group() {
    same_as_perf("group", &["-e", "{cpu-clock,page-faults}"], &["true"]);
}

#[test]
fn a_group_with_modifiers() {
    same_as_perf("group-u", &["-e", "{cpu-clock,page-faults}:u"], &["true"]);
}

#[test]
fn raw_event() {
    same_as_perf("raw", &["-e", "r003c"], &["true"]);
}

#[test]
fn pmu_terms() {
    each_as_perf(&[
        ("pmu-software", &["-e", "software/config=2/"], &["true"]),
        ("pmu-cpu", &["-e", "cpu/config=0x3c/"], &["true"]),
    ]);
}

#[test]
fn tracepoint_glob() {
    if let Err(e) = perfring_test_support::mount_tracefs() {
        return perfring_test_support::skip(format!("tracefs cannot be mounted: {e}"));
    }
    same_as_perf("sched-glob", &["-e", "sched:sched_switch", "-e", "sched:sched_wak*"], &["true"]);
}

#[test]
fn an_unknown_event_is_a_usage_error() {
    same_as_perf("nosuch", &["-e", "nosuch"], &["true"]);
    let out =
        Command::new(env!("CARGO_BIN_EXE_perfring-record")).args(["-e", "nosuch", "--", "true"]).output().unwrap();
    assert_eq!(out.status.code(), Some(129));
    assert!(text(&out.stderr).contains("event syntax error: 'nosuch'"), "{}", text(&out.stderr));
}

#[test]
fn all_user_and_all_kernel() {
    let mut forms: Vec<(&str, &[&str], &[&str])> = vec![
        ("all-user", &["--all-user"], &["true"]),
        ("all-kernel", &["--all-kernel"], &["true"]),
        // A named event keeps its name; only exclude_kernel/exclude_user change (:k's
        // exclude_hv stays).
        ("all-user-k", &["-e", "cpu-clock:k", "--all-user"], &["true"]),
        ("all-both", &["--all-user", "--all-kernel"], &["true"]),
    ];
    if may_record_cpus() {
        // The tracking dummy too (`dummy:uh`).
        forms.push(("all-user-a", &["-a", "--all-user"], &["true"]));
    }
    each_as_perf(&forms);
}

#[test]
fn sample_field_options() {
    let mut forms: Vec<(&str, &[&str], &[&str])> = vec![
        ("P", &["-P", "-c", "1000"], &["true"]),
        ("sample-cpu", &["--sample-cpu"], &["true"]),
        ("R", &["-R"], &["true"]),
        ("phys-data", &["--phys-data"], &["true"]),
        ("data-page-size", &["--data-page-size"], &["true"]),
        ("code-page-size", &["--code-page-size"], &["true"]),
        ("W", &["-W"], &["true"]),
        ("s", &["-s"], &["true"]),
        ("switch-events", &["--switch-events"], &["true"]),
    ];
    if perfring_test_support::mount_tracefs().is_ok() {
        forms.push(("no-period", &["-e", "sched:sched_switch", "--no-period"], &["true"]));
    }
    if may_record_cpus() {
        forms.push(("a-R-switch-P-s", &["-a", "-R", "--switch-events", "-P", "-s"], &["true"]));
    }
    each_as_perf(&forms);
}

#[test]
fn clockid_names_and_numbers() {
    each_as_perf(&[
        ("k-mono", &["-k", "mono"], &["true"]),
        ("k-raw", &["-k", "CLOCK_MONOTONIC_RAW"], &["true"]),
        ("k-7", &["-k", "7"], &["true"]),
        ("k-nosuch", &["-k", "nosuch"], &["true"]),
    ]);
}

/// The header lines perf prints for a file's clock (CLOCKID, CLOCK_DATA), the reference
/// reading's numbers left out (each tool takes its own).
fn clock_lines(file: &Path) -> Vec<String> {
    let out = Command::new("perf").args(["report", "--header-only", "-I", "-i"]).arg(file).output().unwrap();
    text(&out.stdout)
        .lines()
        .filter(|l| l.starts_with("# clockid") || l.starts_with("# reference time"))
        .map(|l| {
            if l.starts_with("# reference time") {
                l.rsplit(' ').next().unwrap_or("").to_string()
            } else {
                l.to_string()
            }
        })
        .collect()
}

#[test]
fn clockid_features_are_perfs() {
    if !perfring_test_support::perf_available() {
        return;
    }
    let out = |f: &Path| vec!["-o".to_string(), f.display().to_string()];
    let args = ["-k".to_string(), "monotonic_raw".to_string()];
    assert!(run("perf", "clock-perf.data", &args, &out, &["true"]).status.success());
    assert!(run("ours", "clock-ours.data", &args, &out, &["true"]).status.success());
    let (theirs, ours) = (clock_lines(&tmp("clock-perf.data")), clock_lines(&tmp("clock-ours.data")));
    assert_eq!(theirs.len(), 3, "perf's clock lines: {theirs:?}");
    assert_eq!(ours, theirs, "the clock features as perf report --header-only -I prints them");
    assert_eq!(ours[1], "# clockid: monotonic_raw (4)");
}

/// perf's messages for a filter in the wrong place, or one the kernel refuses (with -q perf
/// prints nothing, so these run without it).
#[test]
fn filter_errors_are_perfs() {
    if !perfring_test_support::perf_available() {
        return;
    }
    if let Err(e) = perfring_test_support::mount_tracefs() {
        return perfring_test_support::skip(format!("tracefs cannot be mounted: {e}"));
    }
    for (args, status, says) in [
        (&["--filter", "x"][..], 129, "--filter option should follow a -e tracepoint or HW tracer option"),
        (&["-e", "cpu-clock", "--filter", "x"][..], 129, "This CPU does not support address filtering"),
        (
            &["-e", "sched:sched_switch", "--filter", "nosuch == 1"][..],
            255,
            "failed to set filter \"nosuch == 1\" on event sched:sched_switch with 22 (Invalid argument)",
        ),
    ] {
        let file = tmp("filter-error.data");
        for tool in ["perf", "ours"] {
            let mut c = common::record_with(tool);
            let o = c
                .env("HOME", tmp("home-filter"))
                .arg("-o")
                .arg(&file)
                .args(args)
                .args(["--", "true"])
                .output()
                .unwrap();
            assert_eq!(o.status.code(), Some(status), "{tool} {args:?}: {}", text(&o.stderr));
            assert!(text(&o.stderr).contains(says), "{tool} {args:?}: {}", text(&o.stderr));
        }
    }
}

/// A filter takes effect: every sample of the file passes it, and there are samples; and the
/// attrs are perf's (a filter is not an attr field).
#[test]
fn a_tracepoint_filter_filters() {
    if !may_record_cpus() || !perfring_test_support::perf_available() {
        return;
    }
    if let Err(e) = perfring_test_support::mount_tracefs() {
        return perfring_test_support::skip(format!("tracefs cannot be mounted: {e}"));
    }
    // The command's own switch out (it sleeps) passes both filters, loaded machine or not (a
    // switch to the idle task needs an idle CPU); perf ANDs the two.
    let args = ["-a", "-e", "sched:sched_switch", "--filter", "prev_comm == \"sleep\"", "--filter", "prev_pid != 0"];
    same_as_perf("filter", &args, &["sleep", "0.2"]);
    let out = |f: &Path| vec!["-o".to_string(), f.display().to_string()];
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    assert!(run("ours", "filtered.data", &args, &out, &["sleep", "0.2"]).status.success());
    let script = Command::new("perf").args(["script", "-F", "trace", "-i"]).arg(tmp("filtered.data")).output().unwrap();
    let lines: Vec<String> = text(&script.stdout).lines().map(str::to_string).collect();
    assert!(!lines.is_empty(), "the command's switch out is missing: {}", text(&script.stderr));
    for l in &lines {
        assert!(l.contains("prev_comm=sleep ") && !l.contains("prev_pid=0 "), "a sample the filters refuse: {l}");
    }
}

/// `--switch-events`: the file has SWITCH records (a sleeping command switches out).
#[test]
fn switch_events_are_recorded() {
    if !perfring_test_support::perf_available() {
        return;
    }
    let out = |f: &Path| vec!["-o".to_string(), f.display().to_string()];
    let args = ["--switch-events".to_string()];
    assert!(run("ours", "switch.data", &args, &out, &["sleep", "0.05"]).status.success());
    let stats = Command::new("perf").args(["report", "--stats", "-i"]).arg(tmp("switch.data")).output().unwrap();
    let n: u64 = text(&stats.stdout)
        .lines()
        .find_map(|l| l.trim().strip_prefix("SWITCH events:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    assert!(n > 0, "no SWITCH records: {}", text(&stats.stdout));
}

#[test]
fn overwrite() {
    let mut forms: Vec<(&str, &[&str], &[&str])> = vec![("overwrite", &["--overwrite"], &["true"])];
    if may_record_cpus() {
        forms.push(("overwrite-a", &["-a", "--overwrite"], &["true"]));
    }
    each_as_perf(&forms);
}

#[test]
fn delay() {
    // The events disabled, not enabled at exec; perf's tracking dummy enabled there instead.
    let mut forms: Vec<(&str, &[&str], &[&str])> =
        vec![("D", &["-D", "100"], &["sleep", "0.2"]), ("D-never", &["-D", "-1"], &["true"])];
    if may_record_cpus() {
        forms.push(("D-a", &["-a", "-D", "100"], &["sleep", "0.2"]));
    }
    each_as_perf(&forms);
}

#[test]
fn buffering_samples_bpf_events_and_size() {
    let mut forms: Vec<(&str, &[&str], &[&str])> = vec![
        ("n", &["-n"], &["true"]),
        ("no-buffering", &["--no-buffering"], &["true"]),
        ("no-bpf-event", &["--no-bpf-event"], &["true"]),
        ("max-size", &["--max-size", "20M"], &["true"]),
        ("max-size-bad", &["--max-size", "20"], &["true"]),
    ];
    if may_record_cpus() {
        forms.push(("a-no-buffering-n", &["-a", "--no-buffering", "-n", "--no-bpf-event"], &["true"]));
    }
    each_as_perf(&forms);
}

#[test]
fn branch_stack_is_perfs_error_without_a_pmu() {
    // No PMU here with a branch stack: perf's EOPNOTSUPP message and status, for each form.
    each_as_perf(&[
        ("b", &["-b"], &["true"]),
        ("j", &["-j", "any_call,u"], &["true"]),
        ("b-faults", &["-e", "page-faults", "-b"], &["true"]),
        ("b-and-j", &["-b", "-j", "any"], &["true"]),
    ]);
}

#[test]
fn exclude_perf_follows_a_tracepoint() {
    let mut forms: Vec<(&str, &[&str], &[&str])> = vec![
        ("exclude-perf-alone", &["--exclude-perf"], &["true"]),
        ("exclude-perf-clock", &["-e", "cpu-clock", "--exclude-perf"], &["true"]),
    ];
    if perfring_test_support::mount_tracefs().is_ok() {
        forms.push(("exclude-perf", &["-e", "sched:sched_switch", "--exclude-perf"], &["true"]));
    }
    each_as_perf(&forms);
}

#[test]
fn registers_callchain_scope_and_strictness() {
    each_as_perf(&[
        ("I", &["-I"], &["true"]),
        ("I-list", &["-IAX,sp"], &["true"]),
        ("intr-regs", &["--intr-regs=ip"], &["true"]),
        ("user-regs", &["--user-regs=AX,BX"], &["true"]),
        ("dwarf-user-regs", &["--call-graph", "dwarf", "--user-regs=IP"], &["true"]),
        ("I-unknown", &["-I=AX"], &["true"]),
        ("running-time", &["--running-time"], &["true"]),
        ("kernel-callchains", &["-g", "--kernel-callchains"], &["true"]),
        ("user-callchains", &["-g", "--user-callchains"], &["true"]),
        ("timestamp-boundary", &["--timestamp-boundary"], &["true"]),
        ("strict-freq", &["-F", "1000000", "--strict-freq"], &["true"]),
    ]);
}

/// `--dry-run`: the options checked, nothing recorded, no file (perf's status: 0).
#[test]
fn dry_run_writes_nothing() {
    let file = tmp("dry-run.data");
    let _ = std::fs::remove_file(&file);
    let out = Command::new(env!("CARGO_BIN_EXE_perfring-record"))
        .args(["--dry-run", "-o"])
        .arg(&file)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!file.exists(), "a dry run writes no file");
    let bad = Command::new(env!("CARGO_BIN_EXE_perfring-record"))
        .args(["--dry-run", "-e", "nosuch", "--", "true"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(129), "the events are still checked");
}

#[test]
fn realtime() {
    each_as_perf(&[("r", &["-r", "10"], &["true"]), ("r-bad", &["-r", "200"], &["true"])]);
}

/// No command and no target: every CPU until SIGINT, as perf ("system wide the default
/// target"): both tools interrupted after 300 ms, the same status (the signal's) and the same
/// `perf evlist -v`.
#[test]
fn no_command_records_every_cpu_until_interrupted() {
    if !may_record_cpus() || !perfring_test_support::perf_available() {
        return;
    }
    let lists: Vec<String> = ["perf", "ours"]
        .iter()
        .map(|tool| {
            let file = tmp(&format!("no-command-{tool}.data"));
            let _ = std::fs::remove_file(&file);
            let mut c = common::record_with(tool);
            let child =
                c.env("HOME", tmp(&format!("home-no-command-{tool}"))).arg("-q").arg("-o").arg(&file).spawn().unwrap();
            // Both tools make their output file after they catch SIGINT (perf: `signal(SIGINT,
            // …)`, then `perf_session__new`): a SIGINT before that kills the tool with no file
            // and the same status, as a loaded machine showed once (perf not started in 300 ms).
            common::wait_until(std::time::Duration::from_secs(20), || file.exists());
            std::thread::sleep(std::time::Duration::from_millis(300));
            // SAFETY: kill(2) of our own child, still running (it records until interrupted).
            assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGINT) }, 0);
            let out = child.wait_with_output().unwrap();
            // perf raises the SIGINT again at its end; ours exits with its status, 128 + 2.
            use std::os::unix::process::ExitStatusExt;
            let status = out.status.code().or(out.status.signal().map(|s| 128 + s));
            assert_eq!(status, Some(130), "{tool}: {}", text(&out.stderr));
            let list = evlist(&file);
            if *tool == "ours" {
                list.lines().map(by_design).collect::<Vec<_>>().join("\n")
            } else {
                list
            }
        })
        .collect();
    assert!(lists[0].contains("CPU") && lists[0].contains("dummy:HG"), "perf records every CPU: {}", lists[0]);
    assert_eq!(lists[1], lists[0], "perf evlist -v of our file against perf's");
}

/// Issue 53, item 1: perf's option grammar, each form run by both tools: an unambiguous
/// prefix, a `no-` name and its negation, attached and clustered short options, an optional
/// value attached, and perf's words for an ambiguous prefix, an unknown option or switch, a
/// cluster meant as a long option, a value where none is taken or the wrong kind of value.
#[test]
fn perfs_option_grammar() {
    each_as_perf(&[
        ("fre", &["--fre=99"], &["true"]),
        ("fr-next", &["--fr", "99"], &["true"]),
        ("z3", &["-z3"], &["true"]),
        ("inherit-again", &["--no-inherit", "--inherit"], &["true"]),
        ("no-no-inherit", &["--no-no-inherit"], &["true"]),
        ("ambiguous-s", &["--s"], &["true"]),
        ("ambiguous-n", &["--n"], &["true"]),
        ("ambiguous-no-n", &["--no-n"], &["true"]),
        ("unknown-long", &["--nosuch"], &["true"]),
        ("unknown-switch", &["-aY"], &["true"]),
        ("typo", &["-all-cpus"], &["true"]),
        ("takes-no-value", &["--all-cpus=1"], &["true"]),
        ("negated-takes-no-value", &["--inherit=1"], &["true"]),
        ("not-numeric", &["-c", "x"], &["true"]),
        ("c0", &["-c", "0"], &["true"]),
        ("F0", &["-F", "0"], &["true"]),
        ("F-and-c", &["-F", "10", "-c", "10"], &["true"]),
        ("no-freq", &["--no-freq"], &["true"]),
    ]);
}

/// Options that set attrs perf's way: `--group`, `--sample-identifier`, `--no-timestamp` (with
/// `-a` too), and those taken for perf's sake with nothing to change here.
#[test]
fn group_identifier_timestamp_and_accepted_options() {
    let mut forms: Vec<(&str, &[&str], &[&str])> = vec![
        ("group", &["--group", "-e", "cpu-clock", "-e", "page-faults"], &["true"]),
        ("sample-identifier", &["--sample-identifier", "-e", "cpu-clock,page-faults"], &["true"]),
        ("no-timestamp", &["--no-timestamp"], &["true"]),
        ("num-thread-synthesize", &["--num-thread-synthesize=2"], &["true"]),
        ("clang", &["--clang-path=clang", "--clang-opt=-O2"], &["true"]),
        ("vmlinux-missing", &["--vmlinux=/nonexistent-vmlinux"], &["true"]),
        ("snapshot", &["-S"], &["true"]),
        ("aux-sample", &["--aux-sample"], &["true"]),
        ("off-cpu", &["--off-cpu"], &["true"]),
        ("debuginfod", &["--debuginfod"], &["true"]),
        ("timestamp-on", &["-T"], &["true"]),
    ];
    if may_record_cpus() {
        forms.push(("a-no-timestamp", &["-a", "--no-timestamp"], &["true"]));
    }
    each_as_perf(&forms);
}

/// The negations perf 6.1 takes (`perf record --no-X -- true` exits 0 or with its usage),
/// each option's `--no-` form or, for a `no-` option, its name without it.
const NEGATED: &[&str] = &[
    "--no-pid",
    "--no-tid",
    "--no-realtime",
    "--buffering",
    "--no-raw-samples",
    "--no-all-cpus",
    "--no-cpu",
    "--no-count",
    "--no-tail-synthesize",
    "--no-overwrite",
    "--bpf-event",
    "--no-strict-freq",
    "--no-mmap-pages",
    "--no-mmap-flush",
    "--no-group",
    "--no-call-graph",
    "--no-verbose",
    "--no-quiet",
    "--no-stat",
    "--no-data",
    "--no-phys-data",
    "--no-data-page-size",
    "--no-code-page-size",
    "--no-sample-cpu",
    "--no-sample-identifier",
    "--no-timestamp",
    "--no-period",
    "--samples",
    "--buildid-cache",
    "--buildid",
    "--no-delay",
    "--no-kcore",
    "--no-uid",
    "--no-branch-any",
    "--no-branch-filter",
    "--no-weight",
    "--no-per-thread",
    "--no-intr-regs",
    "--no-user-regs",
    "--no-running-time",
    "--no-clockid",
    "--no-snapshot",
    "--no-aux-sample",
    "--no-proc-map-timeout",
    "--no-namespaces",
    "--no-all-cgroups",
    "--no-switch-events",
    "--no-all-kernel",
    "--no-all-user",
    "--no-kernel-callchains",
    "--no-user-callchains",
    "--no-clang-path",
    "--no-clang-opt",
    "--no-vmlinux",
    "--no-buildid-all",
    "--no-timestamp-filename",
    "--no-timestamp-boundary",
    "--no-switch-max-files",
    "--no-dry-run",
    "--no-aio",
    "--no-affinity",
    "--no-compression-level",
    "--no-max-size",
    "--no-num-thread-synthesize",
    "--no-debuginfod",
    "--no-off-cpu",
    "--no-filter",
    "--no-exclude-perf",
];

/// `--no-NAME` for every option perf 6.1 takes it for (the ones it crashes on, SIGSEGV, are
/// refused here with perf's "isn't available": see `negations_perf_crashes_on_are_refused`).
#[test]
fn negations() {
    let forms: Vec<(String, Vec<&str>)> = NEGATED.iter().map(|n| (format!("neg{n}"), vec![*n])).collect();
    let forms: Vec<(&str, &[&str], &[&str])> =
        forms.iter().map(|(label, args)| (label.as_str(), &args[..], &["true"][..])).collect();
    for chunk in forms.chunks(24) {
        each_as_perf(chunk);
    }
}

/// Negations perf 6.1 crashes on (SIGSEGV: `--no-event`, `--no-cgroup`, `--no-switch-output`):
/// refused here as perf refuses a negation it does not take, a usage error.
#[test]
fn negations_perf_crashes_on_are_refused() {
    for form in ["--no-event", "--no-cgroup", "--no-switch-output"] {
        let out = common::record_with("ours").args(["-q", form, "--", "true"]).output().unwrap();
        assert_eq!(out.status.code(), Some(129), "{form}");
        let name = form.trim_start_matches("--");
        assert!(
            text(&out.stderr).contains(&format!("option `{name}' isn't available")),
            "{form}: {}",
            text(&out.stderr)
        );
    }
}

/// perf record's options this recorder does not take: a usage error naming the option, with
/// the reason (perf takes them).
#[test]
fn options_not_taken_are_refused_with_the_reason() {
    for form in ["--transaction", "--buildid-mmap", "--switch-output-event=cpu-clock", "--control=fd:3", "--synth=no"] {
        let out = common::record_with("ours").args(["-q", form, "--", "true"]).output().unwrap();
        assert_eq!(out.status.code(), Some(129), "{form}");
        assert!(text(&out.stderr).contains("is not taken by perfring-record:"), "{form}: {}", text(&out.stderr));
    }
}

/// `--threads[=SPEC]` (issue 53): a directory of perf's layout, the same `perf evlist -v` as
/// perf's own for each spec; perf's words and status (234) for a user's masks it refuses.
#[test]
fn threads_specs() {
    let mut forms: Vec<(&str, &[&str], &[&str])> = vec![
        ("threads", &["--threads"], &["true"]),
        ("threads-cpu", &["--threads=cpu"], &["true"]),
        ("threads-core", &["--threads=core"], &["true"]),
        ("threads-package", &["--threads=package"], &["true"]),
        ("threads-numa", &["--threads=numa"], &["true"]),
        ("threads-user", &["--threads=0/0"], &["true"]),
        ("threads-bad-spec", &["--threads=x"], &["true"]),
        ("threads-intersecting", &["--threads=0-1/0:1/1"], &["true"]),
        ("no-threads", &["--no-threads"], &["true"]),
    ];
    if may_record_cpus() {
        forms.push(("threads-a", &["-a", "--threads"], &["true"]));
    }
    each_as_perf(&forms);
}

/// A workload with three functions of its own, 4:2:1 in CPU time.
const THREE: &str = r#"
#[inline(never)] fn perfring_four(n: u64) -> u64 { let mut x = n; for i in 0..4 * n { x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i)); } x }
#[inline(never)] fn perfring_two(n: u64) -> u64 { let mut x = n; for i in 0..2 * n { x = std::hint::black_box(x.wrapping_mul(37).wrapping_add(i)); } x }
#[inline(never)] fn perfring_one(n: u64) -> u64 { let mut x = n; for i in 0..n { x = std::hint::black_box(x.wrapping_mul(41).wrapping_add(i)); } x }
fn main() {
    let t = std::time::Instant::now();
    let mut x = 0u64;
    while t.elapsed() < std::time::Duration::from_millis(600) {
        x = x.wrapping_add(perfring_four(1_000_000)).wrapping_add(perfring_two(1_000_000)).wrapping_add(perfring_one(1_000_000));
    }
    std::hint::black_box(x);
}
"#;

/// The symbols `perf report --stdio --sort sym` puts first in `path` (file or directory), with
/// perf's warnings.
fn top_symbols(path: &Path, n: usize) -> (Vec<String>, Vec<String>) {
    let out = Command::new("perf").args(["report", "--stdio", "--sort", "sym", "-i"]).arg(path).output().unwrap();
    assert!(out.status.success(), "perf report -i {}: {}", path.display(), text(&out.stderr));
    let syms = text(&out.stdout)
        .lines()
        .filter(|l| !l.starts_with('#') && l.contains('%'))
        .filter_map(|l| l.split("] ").nth(1).map(|s| s.trim().rsplit("::").next().unwrap_or(s).to_string()))
        .take(n)
        .collect();
    (syms, common::perf_warnings(&text(&out.stderr)))
}

/// `perf report` reads our `--threads` directory as it reads perf's own: the same top symbols
/// (the workload's three functions, in order), no warning of its own; one data.N per CPU.
#[test]
fn perf_reports_our_threads_directory_as_its_own() {
    threads_report_as_perfs("threads-top", &[]);
}

/// [`perf_reports_our_threads_directory_as_its_own`] with `extra` options (`-z`,
/// `--overwrite`), each tool's directory named after `label`.
#[track_caller]
pub(crate) fn threads_report_as_perfs(label: &str, extra: &[&str]) {
    if !perfring_test_support::perf_available() {
        return;
    }
    let work = common::build(&format!("three-{label}"), THREE);
    let mut tops = Vec::new();
    for tool in ["perf", "ours"] {
        // perf 6.1's own directory now and then reports its workload's samples as bare
        // addresses (`0x00005562a2157455`: no map found for them; seen once, in a CI run of
        // `--threads -z` on a loaded machine; 26 runs here, idle and with three spinning
        // threads, did not repeat it; the cause in perf not traced). perf is run again then,
        // up to 4 times. Ours is run once and must resolve every time (the assert below).
        for attempt in 1..=(if tool == "perf" { 4 } else { 1 }) {
            let dir = tmp(&format!("{label}-{tool}.data"));
            let _ = std::fs::remove_dir_all(&dir);
            let mut c = common::record_with(tool);
            c.env("HOME", tmp(&format!("home-{label}-{tool}"))).args(["-q", "--threads", "-F", "2000"]).args(extra);
            c.arg("-o");
            let out = c.arg(&dir).arg("--").arg(&work).output().unwrap();
            assert!(out.status.success(), "{tool}: {}", text(&out.stderr));
            let cpus = perfring_linux::online_cpus().unwrap().len();
            for n in 0..cpus {
                assert!(dir.join(format!("data.{n}")).is_file(), "{tool}: data.{n}");
            }
            let (syms, warnings) = top_symbols(&dir, 3);
            println!("{tool} (run {attempt}): {syms:?} {warnings:?}");
            let _ = std::fs::remove_dir_all(&dir);
            let unresolved = syms.iter().any(|s| s.starts_with("0x"));
            if !unresolved || attempt == 4 || tool != "perf" {
                tops.push((syms, warnings));
                break;
            }
        }
    }
    assert_eq!(tops[1].0, ["perfring_four", "perfring_two", "perfring_one"].map(String::from), "ours: {:?}", tops[1]);
    // perf 6.1's own `--threads --overwrite` most often writes empty data.N streams (`perf
    // record -q --threads -F 2000 --overwrite -- a 1 s spin`: 1 run in 6 had samples here, the
    // cause in perf not traced): compared where perf's has samples; ours always has (above).
    let perf_empty = tops[0].0.is_empty() && tops[0].1.iter().any(|w| w.contains("has no samples!"));
    if extra.contains(&"--overwrite") && perf_empty {
        println!("{label}: perf 6.1's directory has no samples (its --threads --overwrite race); ours checked alone");
        return;
    }
    assert_eq!(tops[1].0, tops[0].0, "top symbols, ours against perf's");
    assert!(tops[1].1.iter().all(|w| tops[0].1.contains(w)), "warnings of ours only: {:?}", tops[1].1);
}
/// Every option perfring-record takes (its `--list-opts`, which is perf record 6.1's list) has a
/// form in this file that runs it against perf record, or, for the few perf options it does not
/// take (`--help` names them), a test that refuses them with its words.
#[test]
fn every_option_has_a_perf_form() {
    let ours = common::record_with("ours").arg("--list-opts").output().unwrap();
    assert_eq!(ours.status.code(), Some(130), "perf's status after --list-opts");
    if perfring_test_support::perf_available() {
        let perf = Command::new("perf").args(["record", "--list-opts"]).output().unwrap();
        assert_eq!(text(&ours.stdout).trim(), text(&perf.stdout).trim(), "the same options, in perf's order");
    }
    let help = text(&common::record_with("ours").arg("--help").output().unwrap().stdout);
    let source = [include_str!("perf_forms.rs"), include_str!("perf_options.rs")].concat();
    for long in text(&ours.stdout).split_whitespace() {
        let short = help.lines().find_map(|l| {
            let l = l.trim_start();
            let rest = l.strip_prefix('-')?;
            let (s, tail) = rest.split_once(", ")?;
            (tail.split([' ', '[']).next() == Some(long)).then(|| format!("\"-{s}"))
        });
        let spelled = [
            format!("\"{long}"),
            format!("\"--no-{}", long.trim_start_matches("--")),
            format!("\"--{}", long.trim_start_matches("--no-")),
        ];
        let found = spelled.iter().chain(short.iter()).any(|s| source.contains(s.as_str()));
        assert!(found, "no form of {long} in perf_forms.rs or perf_options.rs");
    }
}

/// `-u USER`: the threads of the user's processes, as perf's manual says; a process of `nobody`
/// runs meanwhile (perf 6.1 crashes when the user has none, and fails when one of many threads
/// exits while it opens them: `-u root` here). perf's words for a user it cannot find.
#[test]
fn uid() {
    let nobody =
        Command::new("setpriv").args(["--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "30"]).spawn();
    let Ok(mut nobody) = nobody else { return perfring_test_support::skip("setpriv is not installed") };
    std::thread::sleep(std::time::Duration::from_millis(200));
    same_as_perf("uid-name", &["-u", "nobody"], &["sleep", "0.2"]);
    // perf 6.1 says so and exits 0, writing nothing.
    for tool in ["perf", "ours"] {
        let out = common::record_with(tool)
            .args(["-q", "-u", "nosuchuser", "-o"])
            .arg(tmp("uid-unknown.data"))
            .args(["--", "true"])
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(0), "{tool}");
        assert!(text(&out.stderr).contains("Invalid User: nosuchuser"), "{tool}: {}", text(&out.stderr));
    }
    nobody.kill().ok();
    nobody.wait().ok();
}

/// `--kcore` where /proc/kcore cannot be read (no CONFIG_PROC_KCORE, as here): perf's error and
/// status; where it can, this recorder refuses it (the copy is not implemented).
#[test]
fn kcore() {
    if std::fs::File::open("/proc/kcore").is_err() {
        same_as_perf("kcore", &["--kcore"], &["true"]);
    } else {
        let out = common::record_with("ours").args(["-q", "--kcore", "--", "true"]).output().unwrap();
        assert_eq!(out.status.code(), Some(129), "{}", text(&out.stderr));
    }
}
