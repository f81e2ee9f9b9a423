//! The cross-process example end to end: the host survives the hostile guest, keeps
//! every sample the guest wrote before turning hostile (or counts it lost), and `perf` reads the
//! perf.data it writes — `perf script` lists exactly the samples kept, `perf report` runs clean.
//! Without `perf`, the perf half skips (`perfring_test_support::skip`: a failure in CI).

use std::process::Command;

#[test]
fn the_host_survives_a_hostile_guest_and_perf_reads_its_file() {
    let out = std::env::temp_dir().join(format!("perfring-cross-process-{}.data", std::process::id()));
    let run = Command::new(env!("CARGO_BIN_EXE_cross-process")).arg(&out).output().unwrap();
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{stdout}{}", String::from_utf8_lossy(&run.stderr));
    // "host: kept N samples and M other records; L lost ...; survived E hostile reads; ..."
    let line = stdout.lines().find(|l| l.starts_with("host: kept")).expect(&stdout);
    let num = |after: &str| -> u64 {
        let rest = &line[line.find(after).unwrap() + after.len()..];
        rest.split_whitespace().next().unwrap().parse().unwrap()
    };
    let (samples, lost, errors) = (num("kept "), num("; "), num("survived "));
    println!("{line}");
    assert_eq!(samples + lost, 3000, "every sample kept or counted lost");
    assert!(errors > 0, "the hostile phase was noticed");

    if !perfring_test_support::perf_available() {
        return;
    }
    let script = Command::new("perf").args(["script", "-F", "comm,tid,ip", "-i"]).arg(&out).output().unwrap();
    assert!(script.status.success(), "{}", String::from_utf8_lossy(&script.stderr));
    let text = String::from_utf8_lossy(&script.stdout);
    assert_eq!(text.lines().count() as u64, samples, "perf script lists every sample kept");
    assert!(text.lines().all(|l| l.contains("guest-vcpu0")), "the guest's COMM names its samples");
    let report = Command::new("perf").args(["report", "--stdio", "-i"]).arg(&out).output().unwrap();
    assert!(report.status.success(), "{}", String::from_utf8_lossy(&report.stderr));
    assert!(String::from_utf8_lossy(&report.stdout).contains(&format!(
        "# Samples: {}",
        if samples >= 1000 { format!("{}K", samples / 1000) } else { samples.to_string() }
    )));
    std::fs::remove_file(&out).ok();
}
