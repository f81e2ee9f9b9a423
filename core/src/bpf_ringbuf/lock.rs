//! [`ReserveLock`]: the lock that serializes reservations (the kernel's `rb->spinlock`), and
//! [`SpinLock`], the one perfring provides.

use crate::fences::{R10_RB_UNLOCK, R9_RB_LOCK, RB_ONCE};
use crate::loom::AtomicBool;

/// The lock a ring's producers reserve under: the kernel's `spin_lock_irqsave(&rb->spinlock)`,
/// or `spin_trylock_irqsave` in NMI context, where waiting could deadlock on the interrupted
/// holder. Also the user ringbuf drain's `busy` word, taken by trying once (`-EBUSY`).
///
/// Implement it with what your context needs: an interrupt-disabling critical section on a
/// microcontroller, a futex-backed mutex in a process, a lock shared through memory by several
/// processes. [`SpinLock`] is a spinning lock over one atomic.
///
/// # Safety
/// Mutual exclusion with ordering: while one call's `f` runs, no other call on the same lock
/// runs its `f`, and each `f` happens-after the previous one (release at the end of one, acquire
/// at the start of the next). The producers rely on it for memory safety: two reservations made
/// under a broken lock can hand out the same bytes.
pub unsafe trait ReserveLock {
    /// Run `f` holding the lock and return its result. With `try_only`, take the lock only if
    /// it is free now, and return `None` without running `f` if it is not (the kernel's NMI
    /// path); otherwise wait for it.
    fn with<R>(&self, try_only: bool, f: impl FnOnce() -> R) -> Option<R>;
}

/// A spinning lock over one atomic: what the kernel's `rb->spinlock` is between CPUs.
///
/// It does not disable interrupts (no `no_std` crate can, portably): a context that may
/// interrupt a holder on the same CPU must use the `try_only` path (the producer's
/// `try_reserve`, as the kernel does in NMI), or the caller must use a lock that masks
/// interrupts. Waiting is unbounded, as for the kernel's spinlock: holders run a few dozen
/// instructions.
#[derive(Debug, Default)]
pub struct SpinLock {
    locked: AtomicBool,
}

impl SpinLock {
    /// An unlocked lock.
    pub fn new() -> Self {
        SpinLock { locked: AtomicBool::new(false) }
    }

    /// Take the lock if it is free (R9).
    #[inline(always)]
    fn try_acquire(&self) -> bool {
        self.locked.compare_exchange(false, true, R9_RB_LOCK, RB_ONCE).is_ok()
    }
}

// SAFETY: the compare-exchange admits one holder at a time; it acquires (R9) what the previous
// holder released (R10) with its unlocking store.
unsafe impl ReserveLock for SpinLock {
    #[inline]
    fn with<R>(&self, try_only: bool, f: impl FnOnce() -> R) -> Option<R> {
        while !self.try_acquire() {
            if try_only {
                return None;
            }
            // Wait with loads, not compare-exchanges, so the holder's line is not stolen.
            while self.locked.load(RB_ONCE) {
                crate::loom::spin_loop();
            }
        }
        /// Releases the lock when `f` returns or unwinds.
        struct Unlock<'l>(&'l AtomicBool);
        impl Drop for Unlock<'_> {
            fn drop(&mut self) {
                self.0.store(false, R10_RB_UNLOCK);
            }
        }
        let _unlock = Unlock(&self.locked);
        Some(f())
    }
}
