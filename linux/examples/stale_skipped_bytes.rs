//! Finding 4 of `docs/kernel-findings.md`, on the running kernel: the bytes the kernel skips in
//! a user stack dump (past `dyn_size`) keep what an earlier record left in the ring.
//!
//! ```text
//! cargo run --example stale_skipped_bytes -p perfring-linux
//! ```
//!
//! It samples its own page faults (`page-faults`, period 1, user space only) with the stack
//! pointer (`REGS_USER`) and 32 KiB of user stack (`STACK_USER`) into a 512-page ring, faults in
//! 16 pages 200 times, and reads every sample: how many dumps stopped short of 32 KiB (the copy
//! ends at the top of the stack's mapping), and how many of the bytes past `dyn_size` are not 0.
//! The ring's pages start zeroed, so a non-zero byte there is stale ring content. Exit status 1
//! if the kernel refuses the event (the message says what to change), 2 on a record that does not
//! decode.

use perfring::record::attr_flags;
use perfring::record::EventRecord;
use std::process::ExitCode;

use perfring::record::{sample_type as st, Record};
use perfring_linux::software;
use perfring_linux::{EventAttr, Session};

/// The stack pointer's bit in `sample_regs_user` (arch/*/include/uapi/asm/perf_regs.h).
#[cfg(target_arch = "x86_64")]
const SP: u64 = 1 << 7;
#[cfg(target_arch = "aarch64")]
const SP: u64 = 1 << 31;
#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
const SP: u64 = 0;

fn main() -> ExitCode {
    if SP == 0 {
        eprintln!(
            "stale_skipped_bytes: this example knows the stack pointer's register bit on x86-64 and aarch64 only"
        );
        return ExitCode::SUCCESS;
    }
    let attr = EventAttr::software(software::PAGE_FAULTS)
        .sample_period(1)
        .sample_type(st::REGS_USER | st::STACK_USER)
        .sample_regs_user(SP)
        .sample_stack_user(32768)
        .flag(attr_flags::EXCLUDE_KERNEL, true)
        .flag(attr_flags::EXCLUDE_HV, true);
    let mut session = match Session::process(std::process::id() as i32).event(attr).data_pages(512).open() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(1);
        }
    };
    if let Err(e) = session.start() {
        eprintln!("{e}");
        return ExitCode::from(1);
    }
    let (mut samples, mut partial, mut with_stale) = (0u64, 0u64, 0u64);
    let (mut skipped, mut nonzero, mut errors) = (0u64, 0u64, 0u64);
    // Every round's pages are kept until the end, so that each round's are fresh and each first
    // write faults (freed memory would be handed out again, already faulted in).
    let mut kept = Vec::new();
    for _ in 0..200 {
        let mut pages = vec![0u8; 16 * 4096];
        for page in pages.chunks_mut(4096) {
            page[0] = 1;
        }
        kept.push(std::hint::black_box(pages));
        let read = session.drain(|r| match r.decode() {
            Ok(Record::Sample(s)) => {
                samples += 1;
                let Ok(Some(stack)) = s.stack_user() else { return errors += 1 };
                let valid = stack.valid().len();
                if valid < stack.data.len() {
                    partial += 1;
                    let past = &stack.data[valid..];
                    let n = past.iter().filter(|&&b| b != 0).count() as u64;
                    skipped += past.len() as u64;
                    nonzero += n;
                    with_stale += u64::from(n > 0);
                }
            }
            Ok(_) => {}
            _ => errors += 1,
        });
        if read.is_err() {
            errors += 1;
        }
    }
    println!(
        "{samples} samples, {partial} with a stack dump cut short (dyn_size < size), {with_stale} of them with \
         non-zero bytes past dyn_size; {nonzero} of {skipped} skipped bytes non-zero (lost: {})",
        session.lost_total()
    );
    if errors > 0 {
        eprintln!("stale_skipped_bytes: {errors} records did not decode");
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
