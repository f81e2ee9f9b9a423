//! Self-monitoring on the real kernel: the control page of this thread's own task-clock event,
//! read through perfring's seqlock reader, agrees with `read(2)` of the same counter.
#![cfg(not(loom))]

// The real-kernel helpers shared with kernel_ring.rs; this test uses a part of them.
#[allow(dead_code, unused_imports)]
use crate::kernel;

use kernel::{run_or_skip, software, SW_TASK_CLOCK};
use perfring::page::capabilities;
use perfring::selfmon::{read, NoCounters, DEFAULT_MAX_RETRIES};

#[test]
fn seqlock_reads_of_the_kernels_control_page_are_monotonic_and_agree_with_read2() {
    run_or_skip(|| {
        let attr = software(SW_TASK_CLOCK, 0).sample_type(0); // counting, not sampling
        let event = kernel::open(&attr)?;
        let ring = event.map(0, false); // the control page only
        let map = ring.read_only(); // mapped read-only: loads alone
        event.enable();
        let mut last = (0u64, 0u64);
        let mut caps_seen = None;
        for i in 0..30 {
            // Sleep so the event is scheduled out and in: the kernel updates the page then.
            std::thread::sleep(std::time::Duration::from_millis(1));
            let spin = std::time::Instant::now();
            while spin.elapsed() < std::time::Duration::from_micros(200) {
                std::hint::spin_loop();
            }
            let page = read(&map, &mut NoCounters, DEFAULT_MAX_RETRIES).expect("the kernel's page settles");
            let counts = event.counts();
            caps_seen.get_or_insert(page.snapshot.capabilities);
            assert!(page.snapshot.time_enabled >= last.0 && page.snapshot.time_running >= last.1, "monotonic");
            last = (page.snapshot.time_enabled, page.snapshot.time_running);
            // The page is stamped at the last schedule-in; read(2) is now. It may lag, never lead
            // (no extrapolation: NoCounters and enabled == running for an active task-clock).
            assert!(page.enabled <= counts.time_enabled, "page ahead of read(2) at {i}");
            let skew = counts.time_enabled - page.enabled;
            assert!(skew < 50_000_000, "page lags read(2) by {skew} ns at {i}");
            assert!(page.snapshot.time_running <= page.snapshot.time_enabled);
        }
        event.disable();
        let caps = caps_seen.unwrap();
        println!(
            "kernel control page: cap_user_rdpmc={} cap_user_time={} cap_user_time_zero={} cap_user_time_short={}, time_enabled {} ns",
            caps & capabilities::USER_RDPMC != 0,
            caps & capabilities::USER_TIME != 0,
            caps & capabilities::USER_TIME_ZERO != 0,
            caps & capabilities::USER_TIME_SHORT != 0,
            last.0
        );
        assert!(last.0 > 0, "the event ran");
        Ok(())
    });
}
