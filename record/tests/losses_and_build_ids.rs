//! What a recording under load and its build ids must show, perf being the judge:
//!
//! * an overloaded recording's losses: our summary's count and share of lost samples are what
//!   `perf report` prints as "Total Lost Samples" and "lost N%" for our file (PERF_FORMAT_LOST
//!   read at the end, LOST_SAMPLES records, as perf record 6.1 does);
//! * the build-id cache filled as perf record fills it (`-N` leaves it alone), so that after
//!   the workload is rebuilt `perf report` still names its functions; `[vdso]` listed by
//!   `perf buildid-list`;
//! * loaded BPF programs as KSYMBOL and BPF_EVENT records, as in perf record's file;
//! * the pipe-mode stream laid out record for record as perf record's (`perf report -D`).

use std::path::Path;
use std::process::Command;

use crate::common::{self, tmp};

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn recorder(home: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_perfring-record"));
    c.env("HOME", home).env_remove("PERF_BUILDID_DIR");
    c
}

fn root() -> bool {
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    if !root {
        perfring_test_support::skip("needs root (all CPUs, BPF programs)");
    }
    root
}

/// Busy threads in functions of their own, reading the clock (the vDSO) between calls.
const BUSY: &str = r#"
use std::hint::black_box;
use std::time::{Duration, Instant};
#[inline(never)]
fn perfring_busy_leaf(x: u64) -> u64 { let mut y = x; for i in 0..1000u64 { y = black_box(y.wrapping_mul(6364136223846793005).wrapping_add(i)); } y }
fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let n: usize = std::env::args().nth(2).and_then(|s| s.parse().ok()).unwrap_or(1);
    let end = Instant::now() + Duration::from_secs_f64(secs);
    let hs: Vec<_> = (0..n).map(|t| std::thread::spawn(move || { let mut x = t as u64; while Instant::now() < end { x = perfring_busy_leaf(x); } x })).collect();
    for h in hs { black_box(h.join().unwrap()); }
}
"#;

/// `perf report --stdio` of `file`: (stdout, stderr), with `home` for its build-id cache.
fn report(file: &Path, home: &Path, extra: &[&str]) -> (String, String) {
    let out = Command::new("perf")
        .env("HOME", home)
        .args(["report", "--stdio"])
        .args(extra)
        .arg("-i")
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "perf report: {}", text(&out.stderr));
    (text(&out.stdout), text(&out.stderr))
}

#[test]
fn an_overloaded_recording_counts_its_losses_as_perf_report_does() {
    if !perfring_test_support::perf_available() {
        return;
    }
    let work = common::build("overload", BUSY);
    let (file, home) = (tmp("overload.data"), tmp("overload-home"));
    let out = recorder(&home)
        .args(["-N", "-m", "1", "-g", "-F", "100000", "-o", file.to_str().unwrap(), "--"])
        .arg(&work)
        .args(["1.5", "4"])
        .output()
        .unwrap();
    let summary = text(&out.stderr);
    assert!(out.status.success(), "{summary}");
    println!("{summary}");
    let samples: u64 = summary
        .lines()
        .find_map(|l| l.split_once(" (")?.1.strip_suffix(" samples) ]")?.parse().ok())
        .expect("perf's summary line with the samples");
    // "[ perfring-record: lost N samples (P% of T), ... ]", present when something was lost.
    let ours_lost: u64 = summary
        .lines()
        .find_map(|l| l.strip_prefix("[ perfring-record: lost ")?.split_whitespace().next()?.parse().ok())
        .unwrap_or(0);
    let (stdout, stderr) = report(&file, &home, &["--sort", "comm"]);
    let perf_lost: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("# Total Lost Samples: ")?.trim().parse().ok())
        .expect("perf report prints Total Lost Samples");
    println!("ours: {samples} samples, {ours_lost} lost; perf report: Total Lost Samples {perf_lost}");
    let tolerance = perf_lost / 100;
    assert!(ours_lost.abs_diff(perf_lost) <= tolerance, "lost: ours {ours_lost}, perf report {perf_lost}");
    let share = 100.0 * ours_lost as f64 / (samples + ours_lost).max(1) as f64;
    // perf warns "Processed N samples and lost P%!" above 5%.
    if let Some(p) = stderr.lines().find_map(|l| l.split_once(" and lost ")?.1.strip_suffix("%!")?.parse::<f64>().ok())
    {
        assert!((p - share).abs() <= 0.01 * p.max(1.0), "share lost: ours {share:.2}%, perf report {p}%");
        assert!(summary.contains(&format!("({share:.2}% of")), "our summary says {share:.2}%: {summary}");
    } else {
        assert!(share <= 5.0, "perf says nothing below 5% lost; ours says {share:.2}%");
    }
    std::fs::remove_file(&file).ok();
    std::fs::remove_dir_all(&home).ok();
}

/// The build id `readelf -n` prints for `path`.
fn build_id(path: &Path) -> String {
    let out = Command::new("readelf").arg("-n").arg(path).output().unwrap();
    text(&out.stdout).lines().find_map(|l| l.trim().strip_prefix("Build ID: ").map(String::from)).unwrap()
}

/// The cache under `home` as perf fills it for `file`, a recording of `work` (build id `bid`):
/// ~/.debug/.build-id/xx/rest -> ../../<path>/<build id>, with the file as `elf` there, and
/// the vDSO's image.
fn check_cache(home: &Path, file: &Path, work: &Path, bid: &str, said: &str) {
    let cache = home.join(".debug");
    let link = cache.join(".build-id").join(&bid[..2]).join(&bid[2..]);
    let to = std::fs::read_link(&link).unwrap_or_else(|e| {
        let ids = Command::new("perf").args(["buildid-list", "-i"]).arg(file).output().unwrap();
        let stats = Command::new("perf").args(["report", "--stats", "-i"]).arg(file).output().unwrap();
        panic!(
            "{}: {e}\nrecorder: {said}\nperf buildid-list: {}\nperf report --stats: {}",
            link.display(),
            text(&ids.stdout),
            text(&stats.stdout)
        )
    });
    let real = work.canonicalize().unwrap();
    assert_eq!(to, Path::new("../..").join(real.strip_prefix("/").unwrap()).join(bid));
    assert_eq!(std::fs::read(link.join("elf")).unwrap(), std::fs::read(work).unwrap());
    let ids = Command::new("perf").args(["buildid-list", "-i"]).arg(file).output().unwrap();
    let ids = text(&ids.stdout);
    let vdso = ids.lines().find(|l| l.ends_with(" [vdso]")).unwrap_or_else(|| panic!("[vdso] listed: {ids}"));
    let vdso_id = vdso.split_whitespace().next().unwrap();
    assert!(cache.join("[vdso]").join(vdso_id).join("vdso").is_file(), "the vDSO's image cached");
}

#[test]
fn the_build_id_cache_is_filled_as_perf_fills_it_and_outlives_a_rebuild() {
    if !perfring_test_support::perf_available() {
        return;
    }
    let work = common::build("bidwork", BUSY);
    let bid = build_id(&work);
    let (file, home) = (tmp("bid.data"), tmp("bid-home"));
    std::fs::remove_dir_all(&home).ok();
    let out = recorder(&home)
        .args(["-q", "-F", "5000", "-o", file.to_str().unwrap(), "--"])
        .arg(&work)
        .arg("0.3")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    check_cache(&home, &file, &work, &bid, &text(&out.stderr));
    // The workload rebuilt (another build id): perf report still names its function, from
    // the cache; with no cache (-N) it cannot.
    std::fs::remove_file(&work).unwrap();
    common::build("bidwork", &BUSY.replace("6364136223846793005", "6364136223846793007"));
    assert_ne!(build_id(&work), bid, "the rebuild changed the build id");
    let (named, _) = report(&file, &home, &["--sort", "sym"]);
    assert!(named.contains("perfring_busy_leaf"), "perf report names the function from the cache:\n{named}");
    let (file_n, home_n) = (tmp("bid-n.data"), tmp("bid-home-n"));
    std::fs::remove_dir_all(&home_n).ok();
    let out = recorder(&home_n)
        .args(["-q", "-N", "-F", "5000", "-o", file_n.to_str().unwrap(), "--"])
        .arg(&work)
        .arg("0.3")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert!(!home_n.join(".debug").exists(), "-N leaves the cache alone");
    std::fs::remove_file(&work).unwrap();
    common::build("bidwork", BUSY);
    let (unnamed, _) = report(&file_n, &home_n, &["--sort", "sym"]);
    assert!(!unnamed.contains("perfring_busy_leaf"), "without a cache the rebuilt file cannot name it:\n{unnamed}");
    for f in [&file, &file_n, &work] {
        std::fs::remove_file(f).ok();
    }
    for h in [&home, &home_n] {
        std::fs::remove_dir_all(h).ok();
    }
}

/// Held by a test while it has a BPF program of its own loaded, and by a test whose records
/// must not change with the machine's BPF programs meanwhile (a recording synthesizes a
/// KSYMBOL and a BPF_EVENT for each loaded program): the two would race otherwise.
static BPF_LOADED: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn bpf_lock() -> std::sync::MutexGuard<'static, ()> {
    BPF_LOADED.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Load a BPF socket filter (`r0 = 0; exit`) named `name`; its descriptor keeps it loaded.
fn load_bpf(name: &str) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    let insns: [u64; 2] = [0x0000_0000_0000_00b7u64.to_le(), 0x0000_0000_0000_0095u64.to_le()];
    let license = c"GPL";
    let mut attr = [0u8; 128];
    attr[0..4].copy_from_slice(&1u32.to_ne_bytes()); // BPF_PROG_TYPE_SOCKET_FILTER
    attr[4..8].copy_from_slice(&2u32.to_ne_bytes());
    attr[8..16].copy_from_slice(&(insns.as_ptr() as u64).to_ne_bytes());
    attr[16..24].copy_from_slice(&(license.as_ptr() as u64).to_ne_bytes());
    attr[48..48 + name.len()].copy_from_slice(name.as_bytes());
    // SAFETY: BPF_PROG_LOAD reads the 128-byte attr and the buffers it points to, all alive.
    let fd = unsafe { libc::syscall(libc::SYS_bpf, 5, attr.as_ptr(), attr.len()) };
    // SAFETY: a descriptor the call just returned, owned by nothing else.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as i32) })
}

/// The `perf report -D` lines of `file` with these record types.
fn dump_lines(file: &Path, kinds: &[&str]) -> Vec<String> {
    let out = Command::new("perf").args(["report", "-D", "-i"]).arg(file).output().unwrap();
    text(&out.stdout)
        .lines()
        .filter(|l| kinds.iter().any(|k| l.contains(k)))
        .map(|l| l.split_once("PERF_RECORD_").map_or(l, |(_, r)| r).to_string())
        .collect()
}

#[test]
fn loaded_bpf_programs_are_named_as_in_perfs_file() {
    if !perfring_test_support::perf_available() || !root() {
        return;
    }
    let _bpf = bpf_lock();
    let Some(_prog) = load_bpf("perfring_t41") else {
        return perfring_test_support::skip("BPF_PROG_LOAD refused (no BPF JIT or syscall)");
    };
    let (ours, theirs, home) = (tmp("bpf-ours.data"), tmp("bpf-perf.data"), tmp("bpf-home"));
    let kinds = ["PERF_RECORD_KSYMBOL", "PERF_RECORD_BPF_EVENT"];
    // A system-wide recording also gets the kernel's records of programs that another process
    // loads or unloads while it runs, and those land in one file only: a pair of recordings
    // with such a load is made again (up to three pairs); a real difference stays.
    for attempt in 1..=3 {
        let out =
            recorder(&home).args(["-q", "-a", "-o", ours.to_str().unwrap(), "--", "sleep", "0.1"]).output().unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let out = Command::new("perf")
            .env("HOME", &home)
            .args(["record", "-q", "-a", "-o", theirs.to_str().unwrap(), "--", "sleep", "0.1"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out.stderr));
        let (a, b) = (dump_lines(&ours, &kinds), dump_lines(&theirs, &kinds));
        assert!(b.iter().any(|l| l.contains("perfring_t41")), "perf's file names the program: {b:?}");
        if a == b || attempt == 3 {
            assert_eq!(a, b, "KSYMBOL and BPF_EVENT records, ours against perf's (attempt {attempt})");
            break;
        }
    }
    std::fs::remove_file(&ours).ok();
    std::fs::remove_file(&theirs).ok();
    std::fs::remove_dir_all(&home).ok();
}

/// The record types of a pipe-mode stream up to FINISHED_INIT, the features by number.
fn pipe_layout(stream: &[u8]) -> Vec<String> {
    let mut out = Vec::new();
    let mut at = 16;
    while at + 8 <= stream.len() {
        let type_ = u32::from_ne_bytes(stream[at..at + 4].try_into().unwrap());
        let size = u16::from_ne_bytes(stream[at + 6..at + 8].try_into().unwrap()) as usize;
        if size < 8 {
            break;
        }
        out.push(match type_ {
            80 => format!("FEATURE {}", u64::from_ne_bytes(stream[at + 8..at + 16].try_into().unwrap())),
            t => format!("{t}"),
        });
        if type_ == 82 {
            break;
        }
        at += size;
    }
    out
}

#[test]
fn the_pipe_stream_is_laid_out_as_perfs() {
    if !perfring_test_support::perf_available() {
        return;
    }
    let home = tmp("pipe-home");
    // Both streams made with the same BPF programs loaded (none of the test above's).
    let _bpf = bpf_lock();
    let ours = recorder(&home).args(["-q", "-o", "-", "--", "sleep", "0.05"]).output().unwrap();
    let theirs = Command::new("perf")
        .env("HOME", &home)
        .args(["record", "-q", "-o", "-", "--", "sleep", "0.05"])
        .output()
        .unwrap();
    assert!(ours.status.success() && theirs.status.success(), "{}", text(&ours.stderr));
    let (a, b) = (pipe_layout(&ours.stdout), pipe_layout(&theirs.stdout));
    println!("perf's stream: {b:?}");
    assert_eq!(a, b, "records up to FINISHED_INIT, ours against perf's");
    // perf reads ours with no warning.
    let path = tmp("pipe-ours.data");
    std::fs::write(&path, &ours.stdout).unwrap();
    let out = Command::new("perf")
        .args(["report", "--stdio", "-i", "-"])
        .stdin(std::fs::File::open(&path).unwrap())
        .output()
        .unwrap();
    assert!(out.status.success() && text(&out.stderr).trim().is_empty(), "{}", text(&out.stderr));
    std::fs::remove_file(&path).ok();
    std::fs::remove_dir_all(&home).ok();
}

/// `perf buildid-list` of our file and of perf record's, for the same command that no sample
/// hits (a period no run reaches): with `--buildid-all`, every file mapped and the kernel;
/// without it, the vDSO alone, which perf lists hit or not.
#[test]
fn build_ids_of_files_no_sample_hit_are_perfs() {
    if !perfring_test_support::perf_available() {
        return;
    }
    let list = |tool: &str, all: bool| {
        let file = tmp(&format!("unhit-{tool}-{all}.data"));
        let mut c = common::record_with(tool);
        c.env("HOME", tmp(&format!("home-unhit-{tool}")));
        c.args(["-q", "-e", "page-faults", "-c", "100000000"]);
        if all {
            c.arg("--buildid-all");
        }
        let out = c.arg("-o").arg(&file).args(["--", "true"]).output().unwrap();
        assert!(out.status.success(), "{tool}: {}", String::from_utf8_lossy(&out.stderr));
        let ids = Command::new("perf").args(["buildid-list", "-i"]).arg(&file).output().unwrap();
        let mut lines: Vec<String> = String::from_utf8_lossy(&ids.stdout).lines().map(str::to_string).collect();
        lines.sort();
        lines
    };
    for all in [false, true] {
        let (theirs, ours) = (list("perf", all), list("ours", all));
        assert!(theirs.iter().any(|l| l.ends_with(" [vdso]")), "perf lists the vDSO: {theirs:?}");
        if all {
            assert!(theirs.len() >= 4, "the command, the loader, libc, the kernel, the vDSO: {theirs:?}");
        }
        assert_eq!(ours, theirs, "--buildid-all {all}: perf buildid-list of our file against perf's");
    }
}
