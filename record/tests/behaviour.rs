//! `perfring-record` behaves as `perf record` does, each test against the real `perf` 6.1 as
//! the judge: pipe mode keeps stdout for the stream; tracepoints carry their formats; the
//! output is opened before the command runs; the exit status is the command's; `-a`/`-p` with
//! a command last as long as it; rates and sizes are checked; SIGINT reaches the command;
//! kernel samples are kept where permitted; the feature sections and build ids are there.
//! perf reading a file "with no warning but lost-event ones" is checked on its stderr.

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, tmp};

fn recorder() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perfring-record"));
    // The build-id cache of these runs in a folder of their own, not the user's ~/.debug.
    c.env("HOME", tmp("home"));
    c
}

fn rec(args: &[&str]) -> Output {
    recorder().args(args).output().unwrap()
}

/// Whether the recorder failed because this machine does not permit the request (a CPU-wide
/// or kernel event without CAP_PERFMON at this `perf_event_paranoid`): a visible skip, where
/// any other failure fails the test.
fn refused(out: &Output) -> bool {
    let e = text(&out.stderr);
    !out.status.success() && e.contains("permission denied") && e.contains("perf_event_paranoid is")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// perf's stderr lines other than lost-event ones ([`common::perf_warnings`]).
fn warnings(stderr: &[u8]) -> Vec<String> {
    common::perf_warnings(&text(stderr))
}

/// `perf ARGS -i FILE`: stdout, after checking perf succeeded with no warning.
fn perf(args: &[&str], file: &Path) -> String {
    let out = Command::new("perf").args(args).arg("-i").arg(file).output().unwrap();
    assert!(out.status.success(), "perf {args:?} failed: {}", text(&out.stderr));
    let w = warnings(&out.stderr);
    assert!(w.is_empty(), "perf {args:?} warns about {}: {w:?}", file.display());
    text(&out.stdout)
}

/// `perf ARGS -i -` reading `stream` on its stdin: stdout, after the same checks.
fn perf_stdin(args: &[&str], stream: &[u8]) -> String {
    let path = tmp(&format!("stream-{}", args.join("_").replace('/', "")));
    std::fs::write(&path, stream).unwrap();
    let out =
        Command::new("perf").args(args).args(["-i", "-"]).stdin(std::fs::File::open(&path).unwrap()).output().unwrap();
    std::fs::remove_file(&path).ok();
    assert!(out.status.success(), "perf {args:?} -i - failed: {}", text(&out.stderr));
    let w = warnings(&out.stderr);
    assert!(w.is_empty(), "perf {args:?} warns about the stream: {w:?}");
    text(&out.stdout)
}

fn ready() -> bool {
    perfring_test_support::perf_available()
}

/// Item 5: `-o -` writes the stream to stdout and the command's stdout to stderr (perf's
/// `dup2(2, 1)` in the workload); the old recorder let `echo hi` into the stream.
#[test]
fn pipe_mode_keeps_stdout_for_the_stream() {
    if !ready() {
        return;
    }
    // The line the command prints is computed, so that it is not in the CMDLINE feature.
    let out = rec(&[
        "-q",
        "-o",
        "-",
        "--",
        "sh",
        "-c",
        "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done; echo printed-$((6*7))",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("printed-42"), "the command's output on stderr");
    assert!(!text(&out.stdout).contains("printed-42"), "nothing of the command in the stream");
    let report = perf_stdin(&["report", "--stdio"], &out.stdout);
    assert!(report.contains("sh "), "perf report names the command: {report}");
    // The features went out as HEADER_FEATURE records.
    let header = perf_stdin(&["report", "--header-only"], &out.stdout);
    for key in ["hostname", "os release", "arch", "cmdline", "event : name = cpu-clock"] {
        assert!(header.contains(key), "pipe-mode header lists {key}: {header}");
    }
}

/// Item 6: a tracepoint recording carries TRACING_DATA (a HEADER_TRACING_DATA record in pipe
/// mode), so `perf script` prints the fields; the old file had none and perf refused it.
#[test]
fn tracepoints_carry_their_formats_in_both_modes() {
    if !ready() {
        return;
    }
    if let Err(e) = perfring_test_support::mount_tracefs() {
        return perfring_test_support::skip(format!("tracefs cannot be mounted: {e}"));
    }
    let file = tmp("tp.data");
    let out = rec(&["-q", "-e", "sched:sched_switch", "-o", file.to_str().unwrap(), "--", "sleep", "0.05"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let script = perf(&["script"], &file);
    assert!(script.contains("sched:sched_switch: prev_comm=sleep"), "fields printed: {script}");
    let evlist = perf(&["evlist", "-v"], &file);
    assert!(evlist.contains("IP|TID|TIME|CPU|PERIOD|RAW"), "perf's sample fields for a tracepoint: {evlist}");
    let piped = rec(&["-q", "-e", "sched:sched_switch", "-o", "-", "--", "sleep", "0.05"]);
    assert!(piped.status.success(), "{}", text(&piped.stderr));
    let script = perf_stdin(&["script"], &piped.stdout);
    assert!(script.contains("prev_comm=sleep"), "pipe mode: fields printed: {script}");
    std::fs::remove_file(&file).ok();
}

/// Item 7: an output that cannot be written stops everything before the command runs, with
/// an error naming the path (the old recorder released the command first).
#[test]
fn an_output_that_cannot_be_written_stops_before_the_command_runs() {
    if !ready() {
        return;
    }
    let marker = tmp("ran");
    for output in ["/nonexistent-perfring-dir/out.data", "/proc/version", "/dev/full"] {
        let out = rec(&["-q", "-o", output, "--", "touch", marker.to_str().unwrap()]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(255), "{output}: {err}");
        assert!(err.contains(output), "the error names {output}: {err}");
        assert!(!marker.exists(), "{output}: the command ran unrecorded");
    }
}

/// Item 8: the recorder's exit status is the command's (128 + N for signal N), and 255 with
/// a clear message for a command that cannot be executed (the old recorder exited 0 or 1).
#[test]
fn the_exit_status_is_the_commands() {
    if !ready() {
        return;
    }
    let file = tmp("status.data");
    let f = file.to_str().unwrap();
    let code = |cmd: &[&str]| {
        let mut args = vec!["-q", "-o", f, "--"];
        args.extend_from_slice(cmd);
        let out = rec(&args);
        (out.status.code(), text(&out.stderr))
    };
    assert_eq!(code(&["sh", "-c", "exit 42"]).0, Some(42));
    assert_eq!(code(&["sh", "-c", "kill -SEGV $$"]).0, Some(139));
    assert_eq!(code(&["true"]).0, Some(0));
    let (status, err) = code(&["/nonexistent-perfring-command"]);
    assert_eq!(status, Some(255), "{err}");
    assert!(err.contains("cannot execute /nonexistent-perfring-command"), "{err}");
    std::fs::remove_file(&file).ok();
}

/// `perf script -F pid,comm` of `file`: (pid, comm) per sample.
fn samples_by_pid(file: &Path) -> Vec<(u32, String)> {
    perf(&["script", "-F", "pid,comm"], file)
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let comm = f.next()?.to_string();
            Some((f.next()?.parse().ok()?, comm))
        })
        .collect()
}

/// Item 9: `-a -- CMD` records every CPU while CMD runs (the old recorder recorded CMD alone),
/// `-p PID -- CMD` records PID while CMD runs.
#[test]
fn all_cpus_and_a_process_beside_a_command_are_recorded_while_it_runs() {
    if !ready() {
        return;
    }
    let file = tmp("a.data");
    let f = file.to_str().unwrap();
    // A busy process of its own, which -a must see and -p follows (killed however the test ends).
    struct Busy(std::process::Child);
    impl Drop for Busy {
        fn drop(&mut self) {
            self.0.kill().ok();
            self.0.wait().ok();
        }
    }
    let busy = Busy(Command::new("sh").args(["-c", "while :; do :; done"]).spawn().unwrap());
    let busy_pid = busy.0.id();
    let t0 = Instant::now();
    let out = rec(&["-q", "-a", "-o", f, "--", "sleep", "0.5"]);
    if refused(&out) {
        return perfring_test_support::skip(text(&out.stderr));
    }
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(t0.elapsed() >= Duration::from_millis(500), "lasted as long as the command");
    let s = samples_by_pid(&file);
    assert!(s.iter().any(|(p, _)| *p == busy_pid), "-a sees another process: {} samples", s.len());
    assert!(s.iter().any(|(_, c)| c == "sleep"), "-a sees the command");
    let t0 = Instant::now();
    let out = rec(&["-q", "-p", &busy_pid.to_string(), "-o", f, "--", "sleep", "0.5"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let took = t0.elapsed();
    assert!(took >= Duration::from_millis(500) && took < Duration::from_secs(10), "{took:?}");
    let s = samples_by_pid(&file);
    assert!(!s.is_empty() && s.iter().all(|(p, _)| *p == busy_pid), "-p: only the process: {s:?}");
    drop(busy);
    std::fs::remove_file(&file).ok();
}

/// Item 9: --help is the usage on stdout with status 0; -F 0 is refused as perf refuses it; a
/// ring that is not a power of two is rounded up; -F above the kernel's maximum names the sysctl and its value;
/// -m sets the ring.
#[test]
fn options_are_checked_as_perf_checks_them() {
    if !ready() {
        return;
    }
    let help = rec(&["--help"]);
    assert_eq!(help.status.code(), Some(0));
    for opt in ["--event", "--freq", "--count", "--all-cpus", "--pid", "--mmap-pages", "--output"] {
        assert!(text(&help.stdout).contains(opt), "--help lists {opt}");
    }
    // perf's record_opts__config refuses -F 0 once parsed (234); -c 0 is no period at all.
    let out = rec(&["-F", "0", "--", "true"]);
    assert_eq!(out.status.code(), Some(234), "-F 0: {}", text(&out.stderr));
    assert!(text(&out.stderr).contains("frequency and count are zero, aborting"));
    // perf rounds a ring that is not a power of two up, and says so.
    let rounded = tmp("rounded.data");
    let out = rec(&["-m", "3", "-o", rounded.to_str().unwrap(), "--", "true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("rounding mmap pages size to 16K (4 pages)"), "{}", text(&out.stderr));
    std::fs::remove_file(&rounded).ok();
    let max = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate").unwrap();
    let file = tmp("rate.data");
    // Not -q: perf -q says nothing of the throttling (and neither do we).
    let out = rec(&["-F", "100000000", "-m", "8", "-o", file.to_str().unwrap(), "--", "true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    assert!(err.contains("perf_event_max_sample_rate") && err.contains(max.trim()), "{err}");
    let evlist = perf(&["evlist", "-v"], &file);
    assert!(evlist.contains(&format!("sample_freq }}: {}", max.trim())), "throttled to the maximum: {evlist}");
    std::fs::remove_file(&file).ok();
}

/// Item 9: SIGINT to the recorder reaches the command, and the recording ends with it (the old
/// recorder stopped recording and waited for the command to end on its own).
#[test]
fn sigint_is_passed_on_to_the_command() {
    if !ready() {
        return;
    }
    let file = tmp("int.data");
    let mut child = recorder()
        .args(["-q", "-o", file.to_str().unwrap(), "--", "sleep", "30"])
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The recorder catches SIGINT before it starts the command: wait for the command to be
    // `sleep` (a SIGINT before the handler would end the recorder itself).
    let is_sleep = |pid| std::fs::read_to_string(format!("/proc/{pid}/comm")).is_ok_and(|c| c.trim() == "sleep");
    let started = common::wait_until(Duration::from_secs(30), || child_of(child.id()).is_some_and(is_sleep));
    assert!(started, "the command did not start");
    let t0 = Instant::now();
    assert!(Command::new("kill").args(["-INT", &child.id().to_string()]).status().unwrap().success());
    let status = child.wait().unwrap();
    assert!(t0.elapsed() < Duration::from_secs(10), "ended with the command");
    assert_eq!(status.code(), Some(130), "the command's status: killed by SIGINT");
    perf(&["report", "--stdio"], &file);
    std::fs::remove_file(&file).ok();
}

/// Item 10: with no modifier, kernel samples are kept where permitted (root here), as perf
/// keeps them: context switches happen in the kernel, so a recorder that forced
/// exclude_kernel (the old one) records none; `:u` and `:k` set perf's exclude bits; `-e a,b`
/// is two events.
#[test]
fn kernel_samples_are_kept_and_modifiers_and_lists_are_perfs() {
    if !ready() {
        return;
    }
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let paranoid = perfring_linux::paranoid();
    if !root && paranoid.map_or(true, |p| p > 1) {
        // perf_event_paranoid 2 without CAP_PERFMON: user space only, so no context switch, and
        // `:k` refused (perf_forms checks the user-space fallback against perf's).
        return perfring_test_support::skip(format!(
            "kernel samples need root or perf_event_paranoid <= 1 (it is {paranoid:?}), so no context switch is sampled"
        ));
    }
    let file = tmp("k.data");
    let f = file.to_str().unwrap();
    let out = rec(&["-q", "-e", "context-switches", "-c", "1", "-o", f, "--", "sleep", "0.05"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let n = perf(&["script"], &file).lines().count();
    assert!(n > 0, "context switches sampled");
    let out = rec(&["-q", "-e", "cpu-clock:u,page-faults:k", "-o", f, "--", "true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let evlist = perf(&["evlist", "-v"], &file);
    let lines: Vec<&str> = evlist.lines().collect();
    assert_eq!(lines.len(), 2, "{evlist}");
    assert!(lines[0].starts_with("cpu-clock:u") && lines[0].contains("exclude_kernel: 1"), "{evlist}");
    assert!(lines[1].starts_with("page-faults:k") && lines[1].contains("exclude_user: 1"), "{evlist}");
    assert!(lines.iter().all(|l| l.contains("sample_type: IP|TID|TIME|ID|PERIOD")), "{evlist}");
    std::fs::remove_file(&file).ok();
}

/// The workload of the build-id test: 300 ms of CPU in its own code.
const BUSY: &str = r#"
fn main() {
    let t0 = std::time::Instant::now();
    let mut x = 0u64;
    while t0.elapsed() < std::time::Duration::from_millis(300) {
        for i in 0..10_000u64 {
            x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(i));
        }
    }
    std::hint::black_box(x);
}
"#;

/// The build id `readelf -n` prints for `path`.
fn readelf_build_id(path: &Path) -> Option<String> {
    let out = Command::new("readelf").arg("-n").arg(path).output().ok()?;
    text(&out.stdout).lines().find_map(|l| l.trim().strip_prefix("Build ID: ").map(String::from))
}

/// Item 11: the feature sections perf lists, the build id of the command's binary in
/// `perf buildid-list`, and samples of perf's 40 bytes (IP|TID|TIME|PERIOD) for one event;
/// the old file had no feature section and 56-byte samples.
#[test]
fn the_file_carries_perfs_features_build_ids_and_sample_fields() {
    if !ready() {
        return;
    }
    let file = tmp("feat.data");
    let work = common::build("busy", BUSY); // built by the system linker: it has a build id
    let out = Command::new(env!("CARGO_BIN_EXE_perfring-record"))
        .env("HOME", tmp("home"))
        .args(["-q", "-F", "10000", "-o", file.to_str().unwrap(), "--"])
        .arg(&work)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let header = perf(&["report", "--header-only"], &file);
    for key in [
        "hostname :",
        "os release :",
        "perf version :",
        "arch :",
        "nrcpus online :",
        "cpudesc :",
        "cpuid :",
        "total memory :",
        "cmdline :",
        "event : name = cpu-clock",
        "CPU_TOPOLOGY info available",
        "time of first sample :",
    ] {
        assert!(header.contains(key), "perf report --header-only lists {key:?}:\n{header}");
    }
    let ids = perf(&["buildid-list"], &file);
    let want = readelf_build_id(&work).expect("the workload has a build id");
    let path = work.canonicalize().unwrap();
    assert!(
        ids.lines().any(|l| l.starts_with(&want) && l.ends_with(path.to_str().unwrap())),
        "perf buildid-list shows {want} {}:\n{ids}",
        path.display()
    );
    let dump = perf(&["report", "-D"], &file);
    let sizes: Vec<&str> = dump
        .lines()
        .filter(|l| l.contains("PERF_RECORD_SAMPLE"))
        .filter_map(|l| Some(l.split_whitespace().nth(2)?.trim_end_matches(':')))
        .collect();
    assert!(
        !sizes.is_empty() && sizes.iter().all(|s| *s == "[0x28]"),
        "40-byte samples: {:?}",
        &sizes[..5.min(sizes.len())]
    );
    std::fs::remove_file(&file).ok();
    std::fs::remove_file(&work).ok();
}

/// Issue 41, item 5: an existing non-empty recording is kept as `FILE.old` (the previous
/// `.old` replaced), the new file is private (0600), as perf's data.c does.
#[test]
fn the_previous_recording_is_kept_as_old_and_files_are_private() {
    if !ready() {
        return;
    }
    use std::os::unix::fs::PermissionsExt;
    let file = tmp("rotate.data");
    let old = tmp("rotate.data.old");
    std::fs::remove_file(&old).ok();
    let f = file.to_str().unwrap();
    assert!(rec(&["-q", "-o", f, "--", "true"]).status.success());
    let first = std::fs::read(&file).unwrap();
    assert_eq!(std::fs::metadata(&file).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(rec(&["-q", "-o", f, "--", "true"]).status.success());
    assert_eq!(std::fs::read(&old).unwrap(), first, "the first recording, kept as .old");
    perf(&["report", "--stdio"], &old);
    perf(&["report", "--stdio"], &file);
    std::fs::remove_file(&file).ok();
    std::fs::remove_file(&old).ok();
}

/// Issue 41, item 5: a closed stdout or stderr is an error to write, never a panic (the old
/// recorder exited 101 on `perfring-record -T 2>&1 | head -1`, a usage error then; `-T` alone
/// now records every CPU, as perf's does, so the usage error here is an unknown option's).
#[test]
fn a_closed_stdout_or_stderr_is_no_panic() {
    if !ready() {
        return;
    }
    let bin = env!("CARGO_BIN_EXE_perfring-record");
    let piped = Command::new("bash")
        .arg("-c")
        .arg(format!("'{bin}' -T --nosuch 2>&1 | head -1 >/dev/null; exit ${{PIPESTATUS[0]}}"))
        .output()
        .unwrap();
    assert_eq!(piped.status.code(), Some(129), "a usage error, told to a closed pipe: {}", text(&piped.stderr));
    let help = Command::new("bash")
        .arg("-c")
        .arg(format!("'{bin}' --help | head -1 >/dev/null; exit ${{PIPESTATUS[0]}}"))
        .output()
        .unwrap();
    assert_eq!(help.status.code(), Some(0), "--help to a pipe closed early");
    let file = tmp("closed.data");
    let closed = Command::new("bash")
        .arg("-c")
        .arg(format!("'{bin}' -o '{}' -- true >&- 2>&-", file.display()))
        .env("HOME", tmp("home"))
        .output()
        .unwrap();
    assert_eq!(closed.status.code(), Some(0), "recording with stdout and stderr closed");
    perf(&["report", "--stdio"], &file);
    std::fs::remove_file(&file).ok();
}

/// Issue 41, item 5: perf's summary lines (`-v` adds the table), and `-c` leaves PERIOD out of
/// the samples as perf does (each sample 8 bytes smaller).
#[test]
fn the_summary_is_perfs_and_a_fixed_period_is_not_sampled() {
    if !ready() {
        return;
    }
    let file = tmp("summary.data");
    let f = file.to_str().unwrap();
    let out = rec(&["-e", "page-faults", "-c", "1", "-o", f, "--", "true"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let err = text(&out.stderr);
    let line =
        err.lines().find(|l| l.starts_with("[ perf record: Captured and wrote ")).unwrap_or_else(|| panic!("{err}"));
    let samples = perf(&["script", "-F", "ip"], &file).lines().count();
    assert!(line.ends_with(&format!(" MB {f} ({samples} samples) ]")), "{line} ({samples} samples in the file)");
    assert!(err.contains("[ perf record: Woken up "), "{err}");
    let evlist = perf(&["evlist", "-v"], &file);
    assert!(evlist.contains("sample_type: IP|TID|TIME,"), "no PERIOD with -c: {evlist}");
    let verbose = rec(&["-v", "-o", f, "--", "true"]);
    assert!(text(&verbose.stderr).contains("records by type:"), "{}", text(&verbose.stderr));
    std::fs::remove_file(&file).ok();
}

/// A recording killed with SIGKILL leaves a file perf reads: the header's data size is
/// brought up to date as the recording goes (every 250 ms), never left 0 as perf leaves its own.
#[test]
fn a_killed_recording_stays_readable() {
    if !ready() {
        return;
    }
    let file = tmp("killed.data");
    let mut child = recorder()
        .args(["-q", "-F", "2000", "-m", "4", "-o", file.to_str().unwrap(), "--", "sh", "-c", "while :; do :; done"])
        .spawn()
        .unwrap();
    // 300 ms of the command's CPU time (600 samples at 2000 Hz; on a loaded machine the clock
    // says little about it), then two of the header's updates.
    let ran = common::wait_until(Duration::from_secs(60), || child_cpu_ms(child.id()).is_some_and(|ms| ms >= 300));
    assert!(ran, "the command did not run");
    std::thread::sleep(Duration::from_millis(600));
    // The command (the recorder's child), killed too once the recorder is gone.
    let pid = child.id();
    let commands = std::fs::read_to_string(format!("/proc/{pid}/task/{pid}/children")).unwrap_or_default();
    child.kill().unwrap(); // SIGKILL, to our own child by its handle
    child.wait().unwrap();
    for c in commands.split_whitespace() {
        let _ = Command::new("kill").args(["-KILL", c]).status();
    }
    let report = perf(&["report", "--stdio", "--sort", "comm"], &file);
    assert!(report.contains(" sh"), "perf report reads the killed recording's samples:\n{report}");
    std::fs::remove_file(&file).ok();
}

/// A program that touches `PAGES` fresh pages in order, one write each, after printing where
/// they start.
const TOUCH_IN_ORDER: &str = r#"
extern "C" {
    fn mmap(addr: *mut u8, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut u8;
    fn madvise(addr: *mut u8, len: usize, advice: i32) -> i32;
}
const PAGES: usize = 3000;
fn main() {
    let len = PAGES * 4096;
    // PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS; MADV_NOHUGEPAGE: one fault per page.
    let p = unsafe { mmap(std::ptr::null_mut(), len, 3, 0x22, -1, 0) };
    assert!(p as isize != -1, "mmap");
    unsafe { madvise(p, len, 15) };
    println!("{:x}", p as usize);
    for i in 0..PAGES {
        unsafe { p.add(i * 4096).write_volatile(1) };
    }
}
"#;

/// `--overwrite` is a flight recorder: with a one-page ring, a page-fault per touched page,
/// the file keeps the newest records only — exactly the last pages touched, in a run that
/// ends at the last one (the program held on one CPU, so one ring) — and perf reads it with no
/// warning.
#[test]
fn overwrite_keeps_the_newest_records() {
    if !perfring_test_support::perf_available() {
        return;
    }
    const PAGES: u64 = 3000;
    let program = common::build("touch-in-order", TOUCH_IN_ORDER);
    let file = tmp("overwrite.data");
    let out = recorder()
        .args(["-q", "--overwrite", "-m", "1", "-e", "page-faults:u", "-c", "1", "-d", "-o"])
        .arg(&file)
        // On one CPU: each CPU has a ring of its own, and a program that migrated would leave
        // its newest records of the first CPU in that CPU's ring too (as perf's would).
        .args(["--", "taskset", "-c", "0"])
        .arg(&program)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let base = u64::from_str_radix(text(&out.stdout).trim(), 16).expect("the program prints its pages' start");
    let script = perf(&["script", "-F", "addr"], &file);
    let mut pages: Vec<u64> = script
        .lines()
        .filter_map(|l| u64::from_str_radix(l.trim(), 16).ok())
        .filter(|a| (base..base + PAGES * 4096).contains(a))
        .map(|a| (a - base) / 4096)
        .collect();
    pages.sort_unstable();
    let kept = pages.len() as u64;
    assert!(kept > 0 && kept < PAGES / 10, "a one-page ring keeps a few dozen of the {PAGES} faults, not {kept}");
    let newest: Vec<u64> = (PAGES - kept..PAGES).collect();
    assert_eq!(pages, newest, "the records kept are the newest: the last {kept} pages touched, each once");
}

/// A program that spins for 600 ms (or argv[1] ms).
const SPIN: &str = r#"
fn main() {
    let ms = std::env::args().nth(1).and_then(|a| a.parse().ok()).unwrap_or(600);
    let t = std::time::Instant::now();
    let mut x = 0u64;
    while t.elapsed() < std::time::Duration::from_millis(ms) {
        x = std::hint::black_box(x.wrapping_add(1));
    }
}
"#;

/// Spins until the file its argument names exists.
const SPIN_UNTIL: &str = r#"
fn main() {
    let stop = std::path::PathBuf::from(std::env::args().nth(1).unwrap());
    let mut x = 0u64;
    while !stop.exists() {
        for _ in 0..100_000 {
            x = std::hint::black_box(x.wrapping_add(1));
        }
    }
}
"#;

/// The first child of process `pid`'s threads, `None` before it has one.
fn child_of(pid: u32) -> Option<u32> {
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    tasks.filter_map(Result::ok).find_map(|t| {
        let children = std::fs::read_to_string(t.path().join("children")).ok()?;
        children.split_whitespace().next()?.parse::<u32>().ok()
    })
}

/// The CPU time (user + system, ms) of process `pid`'s first child, `None` before it has one.
fn child_cpu_ms(pid: u32) -> Option<u64> {
    let child = child_of(pid)?;
    let stat = std::fs::read_to_string(format!("/proc/{child}/stat")).ok()?;
    // After the command's name (in parentheses, which may hold spaces): fields 3 on; utime
    // and stime are fields 14 and 15, in clock ticks of 10 ms.
    let fields: Vec<&str> = stat.rsplit_once(')')?.1.split_whitespace().collect();
    let ticks: u64 = fields.get(11)?.parse::<u64>().ok()? + fields.get(12)?.parse::<u64>().ok()?;
    Some(ticks * 10)
}

/// The times of the command's exec COMM and of its samples (`perf script --show-task-events`).
fn exec_and_sample_times(file: &Path) -> (Option<f64>, Vec<f64>) {
    let out = perf(&["script", "--show-task-events", "-F", "comm,time,event"], file);
    let time = |l: &str| l.split_whitespace().find_map(|w| w.strip_suffix(':')?.parse::<f64>().ok());
    let exec = out.lines().find(|l| l.contains("PERF_RECORD_COMM exec")).and_then(time);
    let samples = out.lines().filter(|l| l.contains("cpu-clock")).filter_map(time).collect();
    (exec, samples)
}

/// `-D MS`: nothing is sampled before the delay, the command's exec is still recorded (the
/// tracking dummy), and sampling starts after it; `-D -1`: never. perf says "Events disabled",
/// "Events enabled" as perf does.
#[test]
fn a_delay_holds_sampling_back_and_keeps_the_side_band() {
    if !perfring_test_support::perf_available() {
        return;
    }
    let program = common::build("spin", SPIN);
    let file = tmp("delay.data");
    let run = |delay: &str| {
        let out = recorder()
            .args(["-e", "cpu-clock", "-F", "1000", "-D", delay, "-o"])
            .arg(&file)
            .arg("--")
            .arg(&program)
            .arg("1000")
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        text(&out.stderr)
    };
    let said = run("300");
    assert!(said.contains("Events disabled\nEvents enabled\n"), "perf's words: {said}");
    let (exec, samples) = exec_and_sample_times(&file);
    let exec = exec.expect("the exec COMM, from the tracking dummy");
    let first = samples.iter().cloned().fold(f64::INFINITY, f64::min);
    assert!(samples.len() > 50, "sampled after the delay: {} samples", samples.len());
    // The delay runs from the recorder's start, before the exec (by a few ms, more on a loaded
    // machine); undelayed, the first sample comes within a ms or two of it.
    assert!(first - exec > 0.1, "first sample {:.3} s after the exec, within a 300 ms delay", first - exec);
    let said = run("-1");
    assert!(said.contains("Events disabled") && !said.contains("Events enabled"), "{said}");
    let (exec, samples) = exec_and_sample_times(&file);
    assert!(exec.is_some() && samples.is_empty(), "-D -1: the side band only ({} samples)", samples.len());
}

/// `--max-size`: the recording stops once the data reaches the size (perf's message), the
/// command gets SIGTERM (its status, 143, is ours), and the file is whole: perf reads it with
/// no warning, and it holds less than the command would have made.
#[test]
fn max_size_stops_the_recording() {
    if !perfring_test_support::perf_available() {
        return;
    }
    let program = common::build("spin-max", SPIN);
    let file = tmp("max-size.data");
    let out = recorder()
        .args(["-e", "cpu-clock", "-F", "10000", "-m", "16", "--max-size", "64K", "-o"])
        .arg(&file)
        .arg("--")
        .arg(&program)
        .arg("5000") // 5 s: the limit comes long before the end, on any machine
        .output()
        .unwrap();
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(143), "the command's SIGTERM: {said}");
    assert!(said.contains("[ perf record: perf size limit reached ("), "{said}");
    let stats = perf(&["report", "--stats"], &file);
    let samples: u64 = stats
        .lines()
        .find_map(|l| l.trim().strip_prefix("SAMPLE events:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    // 5 s at 10 kHz would be ~50,000 samples; 64 KiB of ~40-byte samples is ~1,600, and the
    // rings' last contents follow (two 64 KiB rings at most).
    assert!(samples > 500 && samples < 6000, "{samples} samples");
}

/// The files `--switch-output`/`--timestamp-filename` left for output `file`: `FILE.` and
/// perf's 16 digits of local time, in name order (which is time order).
fn dumps_of(file: &Path) -> Vec<std::path::PathBuf> {
    let dir = file.parent().unwrap();
    let prefix = format!("{}.", file.file_name().unwrap().to_str().unwrap());
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or("");
            name.strip_prefix(&prefix).is_some_and(|t| t.len() == 16 && t.bytes().all(|b| b.is_ascii_digit()))
        })
        .collect();
    out.sort();
    out
}

/// `--switch-output` (SIGUSR2): each signal ends the file and begins the next; every file is
/// renamed FILE.<timestamp>, the last one too; perf reads each with no warning; each holds
/// samples, the later file's all after the earlier's. `--switch-max-files 2` keeps the two
/// newest of three.
#[test]
fn switch_output_on_a_signal_dumps_one_file_per_signal() {
    if !perfring_test_support::perf_available() {
        return;
    }
    let program = common::build("spin-switch", SPIN_UNTIL);
    for (label, signals, max, expect) in [("one", 1, None, 2), ("max", 2, Some("2"), 2)] {
        let file = tmp(&format!("switch-{label}.data"));
        for old in dumps_of(&file) {
            std::fs::remove_file(old).ok();
        }
        let mut c = recorder();
        c.args(["-e", "cpu-clock", "-F", "1000", "--switch-output"]);
        if let Some(n) = max {
            c.args(["--switch-max-files", n]);
        }
        let stop = tmp(&format!("switch-{label}.stop"));
        std::fs::remove_file(&stop).ok();
        let mut child =
            c.arg("-o").arg(&file).arg("--").arg(&program).arg(&stop).stderr(Stdio::piped()).spawn().unwrap();
        // The recorder's stderr, a line at a time, as it comes.
        let (tx, lines) = std::sync::mpsc::channel();
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        let reader = std::thread::spawn(move || {
            for line in std::io::BufRead::lines(stderr).map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        // Paced by the program's CPU time, not the clock (on a loaded machine it may run a
        // fraction of the time): each file gets 200 ms of it, and each signal is sent after
        // the dump of the one before (two signals before the recorder takes the first are one
        // trigger, as in perf). The program runs from after the handler is installed until
        // the stop file exists.
        let (mut said, mut last) = (String::new(), 0);
        for n in 0..=signals {
            let ran = common::wait_until(Duration::from_secs(60), || {
                child_cpu_ms(child.id()).is_some_and(|ms| ms >= last + 200)
            });
            assert!(ran, "{label}: the program did not run\n{said}");
            last = child_cpu_ms(child.id()).unwrap_or(last);
            if n == signals {
                std::fs::write(&stop, b"").unwrap();
                break;
            }
            // SAFETY: kill(2) of our own child, alive (its command runs until the stop file).
            assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGUSR2) }, 0);
            loop {
                let line = lines.recv_timeout(Duration::from_secs(30));
                let line = line.unwrap_or_else(|e| panic!("{label}: no dump for signal {n}: {e:?}\n{said}"));
                said += &line;
                said.push('\n');
                if line.contains("[ perf record: Dump ") {
                    break;
                }
            }
        }
        let status = child.wait().unwrap();
        std::fs::remove_file(&stop).ok();
        reader.join().unwrap();
        said.extend(lines.try_iter().map(|l| l + "\n"));
        assert!(status.success(), "{said}");
        assert_eq!(said.matches("[ perf record: Dump ").count(), signals + 1, "{said}");
        assert!(said.contains(&format!("{}.<timestamp>", file.display())), "{said}");
        assert!(!file.exists(), "the last file is renamed too");
        let dumps = dumps_of(&file);
        assert_eq!(dumps.len(), expect, "{label}: {dumps:?}\n{said}");
        let mut last_end = 0.0f64;
        for d in &dumps {
            let times: Vec<f64> = perf(&["script", "-F", "time"], d)
                .lines()
                .filter_map(|l| l.trim().trim_end_matches(':').parse().ok())
                .collect();
            assert!(times.len() > 50, "{label}: {} holds {} samples", d.display(), times.len());
            let (first, last) = times.iter().fold((f64::MAX, 0.0f64), |(a, b), &t| (a.min(t), b.max(t)));
            assert!(first >= last_end, "{label}: {} begins before the file before it ends", d.display());
            last_end = last;
        }
        for d in dumps {
            std::fs::remove_file(d).ok();
        }
    }
}

/// `--timestamp-filename`: the one file is renamed FILE.<timestamp> at the end.
#[test]
fn timestamp_filename_renames_the_file_at_the_end() {
    if !perfring_test_support::perf_available() {
        return;
    }
    let file = tmp("stamped.data");
    for old in dumps_of(&file) {
        std::fs::remove_file(old).ok();
    }
    let out = recorder()
        .args(["-e", "page-faults", "--timestamp-filename", "-o"])
        .arg(&file)
        .args(["--", "true"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    let dumps = dumps_of(&file);
    assert_eq!(dumps.len(), 1, "{dumps:?}");
    assert!(!file.exists());
    perf(&["report", "--stats"], &dumps[0]);
    std::fs::remove_file(&dumps[0]).ok();
}

/// `--exclude-perf`: with `-a`, the recorder's own context switches are left out (a filter on
/// its pid); without it they are there.
#[test]
fn exclude_perf_leaves_the_recorder_out() {
    if !perfring_test_support::perf_available() {
        return;
    }
    if let Err(e) = perfring_test_support::mount_tracefs() {
        return perfring_test_support::skip(format!("tracefs cannot be mounted: {e}"));
    }
    let file = tmp("exclude-perf.data");
    let own_samples = |exclude: bool| {
        let mut c = recorder();
        c.args(["-q", "-a", "-e", "sched:sched_switch"]);
        if exclude {
            c.arg("--exclude-perf");
        }
        let child = c.arg("-o").arg(&file).args(["--", "sleep", "0.3"]).stderr(Stdio::piped()).spawn().unwrap();
        let pid = child.id();
        let out = child.wait_with_output().unwrap();
        if refused(&out) {
            return None;
        }
        assert!(out.status.success(), "{}", text(&out.stderr));
        let pids = perf(&["script", "-F", "pid"], &file);
        Some(pids.lines().filter(|l| l.trim().parse() == Ok(pid)).count())
    };
    let (Some(with), Some(without)) = (own_samples(true), own_samples(false)) else {
        return perfring_test_support::skip("recording every CPU is not permitted here");
    };
    assert!(without > 0, "the recorder switches out while it waits");
    assert_eq!(with, 0, "--exclude-perf: none of the recorder's own switches");
}

/// `--tail-synthesize`: what runs is synthesized after the recording's records (init's COMM
/// follows the first sample in the file), FINISHED_INIT after it, as perf writes them; without
/// the option, before.
#[test]
fn tail_synthesize_puts_what_runs_after_the_records() {
    if !perfring_test_support::perf_available() {
        return;
    }
    let file = tmp("tail.data");
    let order = |tail: bool| {
        let mut c = recorder();
        c.args(["-q", "-a", "-e", "cpu-clock", "-F", "1000"]);
        if tail {
            c.arg("--tail-synthesize");
        }
        let out = c.arg("-o").arg(&file).args(["--", "sleep", "0.2"]).output().unwrap();
        if refused(&out) {
            return None;
        }
        assert!(out.status.success(), "{}", text(&out.stderr));
        // File offsets (perf report -D prints records in delivery order, sorted by time, but
        // each with its offset: `[CPU] TIME 0xOFFSET [0xSIZE]: PERF_RECORD_...`).
        let dump = perf(&["report", "-D"], &file);
        let offset = |l: &str| {
            let words: Vec<&str> = l.split_whitespace().collect();
            words
                .windows(2)
                .find(|w| w[1].starts_with('['))
                .and_then(|w| u64::from_str_radix(w[0].strip_prefix("0x")?, 16).ok())
        };
        let at =
            |what: &dyn Fn(&str) -> bool| dump.lines().filter(|l| what(l)).filter_map(offset).min().unwrap_or(u64::MAX);
        let sample = at(&|l| l.contains("PERF_RECORD_SAMPLE"));
        let init = at(&|l| l.contains("PERF_RECORD_COMM") && l.ends_with(":1/1"));
        let finished = at(&|l| l.contains("PERF_RECORD_FINISHED_INIT"));
        assert!(sample != u64::MAX && init != u64::MAX, "a sample and init's COMM: {sample} {init}");
        Some((init > sample, finished > init))
    };
    let (Some(tail), Some(head)) = (order(true), order(false)) else {
        return perfring_test_support::skip("recording every CPU is not permitted here");
    };
    assert_eq!(tail, (true, true), "--tail-synthesize: init's COMM after the first sample, FINISHED_INIT after it");
    assert_eq!(head, (false, true), "by default: init's COMM before the samples, FINISHED_INIT after it");
}

/// `-r PRIO`: the recorder runs SCHED_FIFO, the command it starts keeps its own policy (as
/// perf: the policy is set once the command is held). The command reads both from /proc.
#[test]
fn realtime_is_the_recorders_not_the_commands() {
    let file = tmp("realtime.data");
    let out = recorder()
        .args(["-q", "-e", "page-faults", "-r", "10", "-o"])
        .arg(&file)
        .args(["--", "sh", "-c", "cut -d' ' -f41 /proc/$$/stat /proc/$PPID/stat"])
        .output()
        .unwrap();
    if !out.status.success() && text(&out.stderr).contains("Could not set realtime priority") {
        return perfring_test_support::skip("SCHED_FIFO is not permitted here (CAP_SYS_NICE, RLIMIT_RTPRIO)");
    }
    assert!(out.status.success(), "{}", text(&out.stderr));
    let policies: Vec<String> = text(&out.stdout).split_whitespace().map(str::to_string).collect();
    assert_eq!(policies, ["0", "1"], "the command SCHED_OTHER (0), the recorder SCHED_FIFO (1)");
}
