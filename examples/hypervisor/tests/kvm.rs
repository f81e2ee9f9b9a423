//! The hypervisor embedding end to end, on the real `/dev/kvm`: the guest is built for
//! `x86_64-unknown-none`, run by the VMM, and the perf.data it exports is read by `perf`.
//!
//! * records the guest attempted = records read + records lost (LOST records), with drops
//!   forced by the reader's one-second stall;
//! * the hostile phase is noticed (typed read errors, resynchronised) and nothing of it is kept;
//! * `perf report --stdio` reads the file with no warning but lost-event ones and names the
//!   guest's two functions with the design's shares. The sampler is loop-driven (one sample per
//!   call, `work_a` called twice per round and `work_b` once), so the split is exact for the
//!   samples written; drops fall in one contiguous stretch of rounds, which can shift the split
//!   by at most one round's samples: the test allows ±1 percentage point.
//!
//! Without `/dev/kvm` it skips through `perfring_test_support::skip` (a failure in CI, which
//! has KVM).

use std::path::{Path, PathBuf};
use std::process::Command;

fn guest() -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target = root.join("../../target/guest");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(&cargo)
        .current_dir(root.join("guest"))
        .args(["build", "--release", "--target", "x86_64-unknown-none", "--target-dir"])
        .arg(&target)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "building the guest failed (rustup target add x86_64-unknown-none): {}",
        String::from_utf8_lossy(&out.stderr)
    );
    target.join("x86_64-unknown-none/release/kvm-guest")
}

#[test]
fn a_kvm_guest_writes_a_ring_the_vmm_reads_untrusted_and_perf_reports_its_functions() {
    if std::fs::OpenOptions::new().read(true).write(true).open("/dev/kvm").is_err() {
        return perfring_test_support::skip("/dev/kvm is not available");
    }
    let elf = guest();
    let data = std::env::temp_dir().join(format!("perfring-kvm-{}.data", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_hypervisor")).arg(&elf).arg(&data).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}{}", String::from_utf8_lossy(&run.stderr));
    println!("{stdout}");
    // "hypervisor: guest attempted A records; read R (S samples, ...) + L lost = T; survived E
    // hostile reads, rejected H hostile records; ..."
    let line = stdout.lines().find(|l| l.contains("guest attempted")).expect("the summary line");
    let num = |after: &str| -> u64 {
        let rest = &line[line.find(after).unwrap_or_else(|| panic!("{after:?} in {line}")) + after.len()..];
        rest.split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
    };
    let (attempted, read, samples, lost, errors) =
        (num("attempted "), num("read "), num("read ") - 3, num(") + "), num("survived "));
    assert_eq!(read + lost, attempted, "attempted = read + lost: {line}");
    assert!(lost > 0, "the stall made the guest drop: {line}");
    assert!(errors > 0, "the hostile phase was noticed: {line}");

    if !perfring_test_support::perf_available() {
        return;
    }
    let report = Command::new("perf").args(["report", "--stdio", "-i"]).arg(&data).output().unwrap();
    let stderr = String::from_utf8_lossy(&report.stderr);
    assert!(report.status.success(), "{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.contains("lost") && !l.starts_with("Warning:") && !l.contains("overload"))
        .collect();
    assert!(warnings.is_empty(), "perf warns: {warnings:?}");
    let text = String::from_utf8_lossy(&report.stdout);
    assert!(text.contains(&format!("# Event count (approx.): {samples}")), "every sample kept: {text}");
    let share = |f: &str| -> f64 {
        let l = text.lines().find(|l| l.ends_with(f)).unwrap_or_else(|| panic!("{f} in perf report:\n{text}"));
        l.split_whitespace().next().unwrap().trim_end_matches('%').parse().unwrap()
    };
    let (a, b) = (share("kvm_guest::work_a"), share("kvm_guest::work_b"));
    println!("perf report: work_a {a}%, work_b {b}% (design 66.67 / 33.33)");
    assert!((a - 200.0 / 3.0).abs() <= 1.0 && (b - 100.0 / 3.0).abs() <= 1.0, "{a} / {b}");
    std::fs::remove_file(&data).ok();
}
