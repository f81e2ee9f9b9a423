//! The firmware embedding end to end: `examples/firmware` built for `thumbv7em-none-eabihf`,
//! run on QEMU's `mps2-an386`, its ring read through the gdbstub, and the perf.data read by
//! `perf`.
//!
//! * records the firmware attempted = samples read + records lost (LOST records), with drops
//!   forced by one long stretch without a read;
//! * `perf report --stdio` reads the file with no warning but lost-event ones and names the
//!   firmware's two functions with the design's shares: the same loop, 2000 iterations in
//!   `fw_work_a` and 1000 in `fw_work_b`, sampled by SysTick under `-icount` (time is
//!   instructions), so a sample lands in `fw_work_a` with probability 2/3. With about 2,100
//!   samples read, the binomial standard deviation of a share is 1.0 point: the test allows
//!   3.5 points (over 3σ) around 66.7 and 33.3.
//!
//! Without `qemu-system-arm` it skips through `perfring_test_support::skip` (a failure in CI,
//! which installs it).

use std::path::Path;
use std::process::Command;

#[test]
fn firmware_under_qemu_writes_a_ring_a_probe_reads_and_perf_reports_its_functions() {
    if Command::new("qemu-system-arm").arg("--version").output().is_err() {
        return perfring_test_support::skip("qemu-system-arm is not installed (apt-get install qemu-system-arm)");
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    // Where `make embedded` (a step of `make test` before this test) built the image: then this
    // build finds it done. (CARGO_TARGET_DIR as the Makefile reads it, when it is absolute.)
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(std::path::PathBuf::from)
        .filter(|d| d.is_absolute())
        .unwrap_or_else(|| root.join("target"))
        .join("embedded");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let build = Command::new(&cargo)
        .current_dir(&root)
        .args(["build", "-q", "-p", "perfring-example-firmware", "--release", "--target", "thumbv7em-none-eabihf"])
        .arg("--target-dir")
        .arg(&target)
        .output()
        .unwrap();
    assert!(
        build.status.success(),
        "building the firmware failed (rustup target add thumbv7em-none-eabihf): {}",
        String::from_utf8_lossy(&build.stderr)
    );
    let elf = target.join("thumbv7em-none-eabihf/release/firmware");
    let data = std::env::temp_dir().join(format!("perfring-firmware-{}.data", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_firmware-host")).arg(&elf).arg(&data).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}{}", String::from_utf8_lossy(&run.stderr));
    println!("{stdout}");
    // "firmware-host: firmware attempted A records; read S samples + L lost = T; ..."
    let line = stdout.lines().find(|l| l.contains("firmware attempted")).expect("the summary line");
    let num = |after: &str| -> u64 {
        let rest = &line[line.find(after).unwrap_or_else(|| panic!("{after:?} in {line}")) + after.len()..];
        rest.split(|c: char| !c.is_ascii_digit()).next().unwrap().parse().unwrap()
    };
    let (attempted, samples, lost) = (num("attempted "), num("read "), num("samples + "));
    assert_eq!(samples + lost, attempted, "attempted = read + lost: {line}");
    assert!(lost > 0, "the long stretch made the firmware drop: {line}");

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
    let share = |f: &str| -> f64 {
        let l = text.lines().find(|l| l.ends_with(f)).unwrap_or_else(|| panic!("{f} in perf report:\n{text}"));
        l.split_whitespace().next().unwrap().trim_end_matches('%').parse().unwrap()
    };
    let (a, b) = (share("] fw_work_a"), share("] fw_work_b"));
    println!("perf report: fw_work_a {a}%, fw_work_b {b}% (design 66.7 / 33.3, ±3.5 allowed)");
    assert!((a - 200.0 / 3.0).abs() <= 3.5 && (b - 100.0 / 3.0).abs() <= 3.5, "{a} / {b}");
    std::fs::remove_file(&data).ok();
}
