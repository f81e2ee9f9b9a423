//! `make bench-record`: perfring-record beside `perf record` under load, in paired runs whose
//! order alternates (perf first in even pairs, perfring-record first in odd ones), so that
//! both see the same noise. Three cases:
//!
//! * (a) overload: `-m 1 -g -F 100000 -- thr 4 4` (four busy threads on the machine's CPUs,
//!   a one-page ring per CPU);
//! * (b) `-a -F <max> -g -- sleep 4` with a busy thread per CPU beside it (`<max>`: the
//!   kernel's `perf_event_max_sample_rate` when the pair starts);
//! * (c) `-e sched:sched_switch -e sched:sched_wakeup -a -- sleep 3` under a context-switch
//!   storm (pairs of threads passing a byte through pipes).
//!
//! Columns, per run: samples kept (`perf report --stats` SAMPLE events of the tool's own
//! file), samples lost (its "Total Lost Samples", the LOST_SAMPLES records, and the LOST
//! records' count), the recorder's own CPU seconds (`utime + stime` of `/proc/PID/stat`,
//! read once it has exited and before it is reaped: the recorder alone, not its children),
//! its peak RSS (`ru_maxrss` of `wait4`: the larger of the recorder's and its children's,
//! the workloads here being smaller than either recorder). Medians per case and tool, and the
//! load average. Environment: `BENCH_PAIRS` (default 5), `BENCH_CASES` (default `abcAB`: (A) and (B) are (a) and (b) with `--threads` on both tools),
//! `PERFRING_RECORD` (the binary, default: the release build beside this bench).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// The busy workload: N threads, each calling three levels of functions for S seconds (and
/// reading the clock through the vDSO between calls).
const THR: &str = r#"
use std::hint::black_box;
use std::time::{Duration, Instant};
#[inline(never)]
fn leaf(x: u64) -> u64 { let mut y = x; for i in 0..1000u64 { y = black_box(y.wrapping_mul(6364136223846793005).wrapping_add(i)); } y }
#[inline(never)]
fn middle(x: u64) -> u64 { leaf(x) ^ leaf(x + 1) }
#[inline(never)]
fn outer(x: u64) -> u64 { middle(x).wrapping_add(middle(x ^ 7)) }
fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(4.0);
    let n: usize = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(4);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let hs: Vec<_> = (0..n).map(|t| std::thread::spawn(move || { let mut x = t as u64; while Instant::now() < end { x = outer(x); } x })).collect();
    for h in hs { black_box(h.join().unwrap()); }
}
"#;

/// The context-switch storm: P pairs of threads passing one byte back and forth through two
/// pipes for S seconds.
const STORM: &str = r#"
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};
fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(4.0);
    let pairs: usize = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(2);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let mut hs = Vec::new();
    for _ in 0..pairs {
        let (mut a, mut b) = UnixStream::pair().unwrap();
        hs.push(std::thread::spawn(move || { let mut x = [0u8]; while Instant::now() < end { a.write_all(&x).unwrap(); a.read_exact(&mut x).unwrap(); } let _ = a.write_all(&[1]); }));
        hs.push(std::thread::spawn(move || { let mut x = [0u8]; loop { if b.read_exact(&mut x).is_err() || x[0] == 1 { break; } if b.write_all(&x).is_err() { break; } } }));
    }
    for h in hs { h.join().unwrap(); }
}
"#;

fn build(dir: &Path, name: &str, source: &str) -> PathBuf {
    let src = dir.join(format!("{name}.rs"));
    let bin = dir.join(name);
    std::fs::write(&src, source).unwrap();
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc).args(["-O", "-g", "-o"]).arg(&bin).arg(&src).output().unwrap();
    assert!(out.status.success(), "{rustc} {name}: {}", String::from_utf8_lossy(&out.stderr));
    bin
}

/// One run's figures.
#[derive(Debug, Clone, Copy, Default)]
struct Run {
    kept: u64,
    lost: u64,
    cpu: f64,
    rss_mb: f64,
}

/// Run `cmd`, measure the process itself: its CPU from /proc/PID/stat once it has exited
/// (waitid WNOWAIT), then its peak RSS from wait4, which reaps it (so `Child::wait` is never
/// called). Its stderr is read after it exits: the recorders run with `-q` and say little.
#[allow(clippy::zombie_processes)] // reaped by wait4 below, once its /proc/PID/stat is read
fn measure(cmd: &mut Command) -> (f64, f64, String) {
    let child = cmd.stdout(Stdio::null()).stderr(Stdio::piped()).spawn().unwrap();
    let pid = child.id() as i32;
    // SAFETY: waitid on our own child with a zeroed siginfo out-parameter; WNOWAIT leaves it
    // a zombie so that /proc/PID/stat still holds its final times.
    let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::waitid(libc::P_PID, pid as libc::id_t, &mut info, libc::WEXITED | libc::WNOWAIT) };
    assert_eq!(r, 0, "waitid: {}", std::io::Error::last_os_error());
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split_whitespace().collect();
    // SAFETY: sysconf has no preconditions.
    let tick = unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64;
    let cpu = (fields[11].parse::<f64>().unwrap() + fields[12].parse::<f64>().unwrap()) / tick;
    // SAFETY: reaping our own zombie child; `status` and `usage` are valid out-parameters.
    let mut status = 0;
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::wait4(pid, &mut status, 0, &mut usage) };
    assert_eq!(r, pid);
    let mut err = String::new();
    if let Some(mut e) = child.stderr {
        use std::io::Read;
        let _ = e.read_to_string(&mut err);
    }
    (cpu, usage.ru_maxrss as f64 / 1024.0, err)
}

/// What the tool's own file says: SAMPLE records (`perf report --stats`), "Total Lost
/// Samples" and the LOST records ("lost N chunks").
fn file_figures(file: &Path) -> (u64, u64, u64) {
    let stats = Command::new("perf").args(["report", "--stats", "-i"]).arg(file).output().unwrap();
    let text = String::from_utf8_lossy(&stats.stdout);
    let count = |key: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(key))
            .and_then(|l| l.split(':').nth(1)?.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    let kept = count("SAMPLE events");
    let chunks = count("LOST events");
    let report = Command::new("perf")
        .args(["report", "--stdio", "--sort", "cpu", "-g", "none", "-i"])
        .arg(file)
        .output()
        .unwrap();
    let lost = String::from_utf8_lossy(&report.stdout)
        .lines()
        .find_map(|l| l.strip_prefix("# Total Lost Samples: ")?.trim().parse().ok())
        .unwrap_or(0);
    (kept, lost, chunks)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    if v.is_empty() {
        return 0.0;
    }
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn load() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ")
}

/// What a run of the bench needs: the recorder, the workloads, a scratch folder.
struct Bench {
    recorder: PathBuf,
    dir: PathBuf,
    thr: PathBuf,
    storm: PathBuf,
    cpus: usize,
    pairs: usize,
}

/// A case: its title, its arguments (made when a run starts: `-F max` is read then), the
/// background load it runs beside, and its CPU goal.
struct Case {
    title: String,
    args: Box<dyn Fn() -> Vec<String>>,
    background: Option<(PathBuf, &'static str)>,
    cpu_goal: f64,
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    let have_perf = Command::new("perf").arg("--version").output().is_ok_and(|o| o.status.success());
    if !have_perf {
        println!("bench-record: perf is not installed (apt-get install linux-perf): nothing to compare with");
        return;
    }
    let bench = Bench::new();
    let cases = std::env::var("BENCH_CASES").unwrap_or_else(|_| "abcAB".into());
    println!("load average at start: {}", load());
    for case in cases.chars() {
        if let Some(c) = bench.case(case) {
            bench.run(&c);
        }
    }
    println!("\nload average at end: {}", load());
    let _ = std::fs::remove_dir_all(&bench.dir);
}

impl Bench {
    fn new() -> Bench {
        let recorder = std::env::var("PERFRING_RECORD").map(PathBuf::from).unwrap_or_else(|_| {
            let exe = std::env::current_exe().unwrap();
            exe.parent().unwrap().parent().unwrap().join("perfring-record")
        });
        assert!(recorder.exists(), "{} is not built (cargo build --release -p perfring-record)", recorder.display());
        let pairs: usize = std::env::var("BENCH_PAIRS").ok().and_then(|p| p.parse().ok()).unwrap_or(5);
        let dir = std::env::temp_dir().join(format!("perfring-bench-record-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let (thr, storm) = (build(&dir, "thr", THR), build(&dir, "storm", STORM));
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let v = Command::new("perf").arg("--version").output().unwrap();
        let version = String::from_utf8_lossy(&v.stdout).trim().to_string();
        println!("bench-record: {} vs perf record ({version}), {pairs} pairs a case, {cpus} CPUs", recorder.display());
        Bench { recorder, dir, thr, storm, cpus, pairs }
    }

    /// Case `c`: (a) overload, (b) -a -F max -g, (c) tracepoints under a switch storm; (A) and
    /// (B) are (a) and (b) with `--threads` on both tools (goal: CPU <= 0.6x perf's).
    fn case(&self, c: char) -> Option<Case> {
        let thr = self.thr.display().to_string();
        let threads = c.is_ascii_uppercase();
        let (title, args, background): (&str, Vec<String>, _) = match c.to_ascii_lowercase() {
            'a' => (
                "(a) -m 1 -g -F 100000 -- thr (4 busy threads)",
                strings(&["-m", "1", "-g", "-F", "100000", "--", &thr, "4", "4"]),
                None,
            ),
            'b' => (
                "(b) -a -F <max> -g -- sleep 4, a busy thread per CPU",
                strings(&["-a", "-F", "MAX", "-g", "--", "sleep", "4"]),
                Some((self.thr.clone(), "6")),
            ),
            'c' if !threads && tracefs_ok() => (
                "(c) -e sched:sched_switch -e sched:sched_wakeup -a -- sleep 3, switch storm",
                strings(&["-e", "sched:sched_switch", "-e", "sched:sched_wakeup", "-a", "--", "sleep", "3"]),
                Some((self.storm.clone(), "5")),
            ),
            'c' => {
                println!("(c) skipped: tracefs is not mounted and cannot be");
                return None;
            }
            _ => return None,
        };
        let mut args = args;
        if threads {
            args.insert(0, "--threads".into());
        }
        let title = if threads { format!("{title}, both with --threads") } else { title.to_string() };
        let args = Box::new(move || {
            let max = std::fs::read_to_string("/proc/sys/kernel/perf_event_max_sample_rate").unwrap_or_default();
            args.iter().map(|a| if a == "MAX" { max.trim().to_string() } else { a.clone() }).collect()
        });
        Some(Case { title, args, background, cpu_goal: if threads { 0.6 } else { 0.5 } })
    }

    /// The pairs of a case, then their medians.
    fn run(&self, case: &Case) {
        println!("\n{}", case.title);
        println!("  pair tool            kept      lost  chunks   cpu s  rss MB   load");
        let mut results: [Vec<Run>; 2] = [Vec::new(), Vec::new()];
        for pair in 0..self.pairs {
            for step in 0..2 {
                let tool = (pair + step) % 2; // 0: perf, 1: perfring-record; perf first in even pairs
                results[tool].push(self.one(case, pair, tool));
            }
        }
        let m = |t: usize, f: fn(&Run) -> f64| median(results[t].iter().map(f).collect());
        let (pk, ok) = (m(0, |r| r.kept as f64), m(1, |r| r.kept as f64));
        let (pc, oc) = (m(0, |r| r.cpu), m(1, |r| r.cpu));
        for (t, name) in [(0, "perf record:    "), (1, "perfring-record:")] {
            let (lost, rss) = (m(t, |r| r.lost as f64), m(t, |r| r.rss_mb));
            let (kept, cpu) = if t == 0 { (pk, pc) } else { (ok, oc) };
            println!("  median {name} kept {kept:.0}, lost {lost:.0}, cpu {cpu:.2} s, rss {rss:.1} MB");
        }
        let goal = case.cpu_goal;
        println!(
            "  kept ratio {:.2} (goal >= 1), cpu ratio {:.2} (goal <= {goal})",
            ok / pk.max(1.0),
            oc / pc.max(1e-9)
        );
    }

    /// One run of `tool` (0: perf) in `case`, beside its background load.
    fn one(&self, case: &Case, pair: usize, tool: usize) -> Run {
        let file = self.dir.join(if tool == 0 { "perf.data" } else { "ours.data" });
        remove(&file);
        let mut background = case.background.as_ref().map(|(bin, secs)| {
            let child = Command::new(bin).args([*secs, &self.cpus.to_string()]).spawn().unwrap();
            std::thread::sleep(Duration::from_millis(300));
            child
        });
        let mut cmd = if tool == 0 {
            let mut c = Command::new("perf");
            c.arg("record");
            c
        } else {
            Command::new(&self.recorder)
        };
        cmd.arg("-q").arg("-o").arg(&file).args((case.args)());
        let (cpu, rss_mb, err) = measure(&mut cmd);
        if let Some(b) = &mut background {
            let _ = b.kill();
            let _ = b.wait();
        }
        let (kept, lost, lost_chunks) = file_figures(&file);
        let name = if tool == 0 { "perf record" } else { "perfring-record" };
        let said = err.lines().next().map(|l| format!("  ({l})")).unwrap_or_default();
        println!(
            "  {pair:>4} {name:<15} {kept:>8} {lost:>9} {lost_chunks:>7} {cpu:>7.2} {rss_mb:>7.1}   {}{said}",
            load()
        );
        remove(&file);
        Run { kept, lost, cpu, rss_mb }
    }
}

fn strings(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

/// A recording's file or directory (`--threads`), removed.
fn remove(path: &Path) {
    let _ = std::fs::remove_file(path);
    let _ = std::fs::remove_dir_all(path);
}

/// Whether tracefs is mounted, or can be (root).
fn tracefs_ok() -> bool {
    Path::new("/sys/kernel/tracing/events").is_dir()
        || Command::new("mount")
            .args(["-t", "tracefs", "nodev", "/sys/kernel/tracing"])
            .status()
            .is_ok_and(|s| s.success())
}
