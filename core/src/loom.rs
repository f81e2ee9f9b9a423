//! The one place where atomics and cells come from.
//!
//! Under `--cfg loom` (a public cfg: set it in `RUSTFLAGS` when you model *your* code with
//! perfring inside) every atomic and every data cell is loom's, so loom sees each access of the
//! protocol, explores its interleavings and reports data races on data slots. Otherwise they are
//! `core`'s, and `UnsafeCell` is a zero-cost wrapper with loom's `with`/`with_mut` API, so the
//! protocol code is the same text under both.
//!
//! The atomic types are public so that an embedder's own [`crate::memory::RingMemory`]
//! implementation uses the same types as perfring under both cfgs.
//!
//! Nothing else in the crate imports `core::sync::atomic` or `core::cell::UnsafeCell` directly.
//!
//! FIXME(loom): loom cannot model `compiler_fence` (a same-CPU compiler barrier, the kernel's
//! `barrier()`); under loom it is a no-op. The nest protocol that relies on it is checked by the
//! deterministic interrupt-injection tests instead (see `producer` and the simulator), which is
//! also where it belongs: nesting is same-CPU, and loom threads are not interrupts.

#[cfg(loom)]
pub(crate) use ::loom::sync::atomic::fence;
#[cfg(loom)]
pub use ::loom::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize};

#[cfg(not(loom))]
pub(crate) use core::sync::atomic::fence;
#[cfg(not(loom))]
pub use core::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize};

/// The producer's CPU-local state (the kernel's `local_t`): atomic against an interrupt on the
/// same CPU, never shared with another thread (a `Producer` is `!Sync`). It is `core`'s atomic
/// even under loom: loom need not explore interleavings of state only one thread touches, and
/// leaving it out keeps the models small. Nesting on it is checked by the deterministic
/// interrupt-injection tests.
pub(crate) type LocalUsize = core::sync::atomic::AtomicUsize;

/// The kernel's `local_cmpxchg` on a [`LocalUsize`]: atomic against an interrupt on this CPU,
/// with no cross-CPU ordering and no bus lock. On x86_64 that is `cmpxchg` without the `lock`
/// prefix (one instruction, so an interrupt sees it whole); elsewhere, and under Miri or loom,
/// an ordinary atomic compare-exchange.
#[inline(always)]
pub(crate) fn local_compare_exchange(a: &LocalUsize, current: usize, new: usize) -> Result<usize, usize> {
    #[cfg(all(target_arch = "x86_64", not(miri), not(loom)))]
    {
        let previous: usize;
        // SAFETY: `a.as_ptr()` is a valid, aligned usize for the duration of the call. The
        // location is only ever accessed by one thread (a `Producer` is `!Sync`; `CpuLocal`'s
        // contract adds only interrupts of that CPU), and a single `cmpxchg` instruction is atomic
        // with respect to interrupts on the executing CPU, which is all the kernel's
        // `local_cmpxchg` promises too.
        unsafe {
            core::arch::asm!(
                "cmpxchg qword ptr [{ptr}], {new}",
                ptr = in(reg) a.as_ptr(),
                new = in(reg) new,
                inout("rax") current => previous,
                options(nostack),
            );
        }
        if previous == current {
            Ok(previous)
        } else {
            Err(previous)
        }
    }
    #[cfg(not(all(target_arch = "x86_64", not(miri), not(loom))))]
    {
        a.compare_exchange(current, new, crate::fences::LOCAL, crate::fences::LOCAL)
    }
}

/// The `nest` counter, CPU-local like [`LocalUsize`].
pub(crate) type LocalU32 = core::sync::atomic::AtomicU32;

/// A compiler-only barrier (the kernel's `barrier()`): orders this CPU's accesses against an
/// interrupt handler running on the same CPU. Loom has no equivalent; see the module FIXME.
#[inline(always)]
pub(crate) fn compiler_barrier() {
    #[cfg(not(loom))]
    core::sync::atomic::compiler_fence(crate::fences::COMPILER_BARRIER);
}

/// A data cell that loom can track.
#[cfg(loom)]
pub(crate) use ::loom::cell::UnsafeCell;

/// A data cell with loom's access API and `core`'s cost.
#[cfg(not(loom))]
#[derive(Debug, Default)]
#[repr(transparent)]
pub(crate) struct UnsafeCell<T>(core::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    /// A new cell holding `value`.
    pub(crate) const fn new(value: T) -> Self {
        Self(core::cell::UnsafeCell::new(value))
    }

    /// Immutable access through a raw pointer, as loom's `with`.
    #[inline(always)]
    pub(crate) fn with<R>(&self, f: impl FnOnce(*const T) -> R) -> R {
        f(self.0.get())
    }

    /// Mutable access through a raw pointer, as loom's `with_mut`.
    #[inline(always)]
    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// A spin-wait hint for a loop that waits for another thread (the BPF ring buffer's reservation
/// [`SpinLock`](crate::bpf_ringbuf::SpinLock)). Under loom it yields to the scheduler, so a
/// model explores the holder running instead of the waiter spinning forever.
#[inline(always)]
pub(crate) fn spin_loop() {
    #[cfg(loom)]
    ::loom::hint::spin_loop();
    #[cfg(not(loom))]
    core::hint::spin_loop();
}
