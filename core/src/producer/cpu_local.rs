//! [`CpuLocal`]: a producer shared with the interrupt handlers of one CPU.

use super::{Hooks, Producer};
use crate::memory::RingMemory;

/// A [`Producer`] shared with the interrupt handlers of one CPU.
///
/// The nest protocol is correct for one CPU and the interrupts that nest on it (an interrupt
/// runs to completion before the interrupted writer resumes). Rust cannot see that property, so
/// putting a producer in a `static` used by an ISR needs this wrapper, whose constructor is the
/// promise.
///
/// The firmware pattern (`examples/firmware` runs it on a Cortex-M4F): the ring's memory in a
/// `static`, laid out once at reset, and the producer in a `static` that the task and the
/// interrupt handlers reach through a shared reference. The host reads the ring's memory (a
/// debug probe, shared RAM) with [`Consumer::untrusted`](crate::consumer::Consumer::untrusted) over a
/// [`RingMemory`] of its own.
///
/// ```
/// use core::mem::MaybeUninit;
/// use core::ptr::addr_of_mut;
/// use perfring::producer::{ProducerConfig, CpuLocal, EventIdentity, Producer};
/// use perfring::memory::Mapping;
///
/// /// The control page's ABI fields (1088 bytes), then a 4 KiB data area.
/// #[repr(C, align(8))]
/// struct Ring([u8; 1088 + 4096]);
/// static mut RING: Ring = Ring([0; 1088 + 4096]);
/// static mut MAPPING: MaybeUninit<Mapping<'static>> = MaybeUninit::uninit();
/// static mut PRODUCER: MaybeUninit<CpuLocal<Producer<&'static Mapping<'static>>>> = MaybeUninit::uninit();
///
/// /// At reset, before any interrupt is enabled.
/// fn boot() {
///     // SAFETY: runs once, before any interrupt handler can touch these statics; afterwards
///     // they are only read through shared references.
///     unsafe {
///         let map = (*addr_of_mut!(MAPPING)).write(Mapping::new(&mut *addr_of_mut!(RING.0), 1088).unwrap());
///         let map: &'static Mapping<'static> = map;
///         // SAFETY (Producer::new): the ring's only producer. (CpuLocal::new): only this CPU
///         // and the interrupt handlers that nest on it use it.
///         (*addr_of_mut!(PRODUCER)).write(CpuLocal::new(Producer::new(map, ProducerConfig::default()).unwrap()));
///     }
/// }
///
/// fn producer() -> &'static Producer<&'static Mapping<'static>> {
///     // SAFETY: initialized by `boot` before any caller runs; only shared references are made.
///     unsafe { (*addr_of_mut!(PRODUCER)).assume_init_ref().get() }
/// }
///
/// /// An interrupt handler: a full ring drops and counts the record; a handler never waits.
/// fn on_timer_interrupt() {
///     let _ = producer().output(&[9, 0, 0, 0, 0, 0, 8, 0], &EventIdentity::ANONYMOUS);
/// }
///
/// boot();
/// on_timer_interrupt();
/// assert_eq!(producer().head(), 8);
/// ```
///
/// `CpuLocal<P>` is `Sync` only for a [`Producer`] (over memory and hooks that are themselves
/// `Sync`): the nest protocol makes the producer's own state safe to touch from nesting
/// interrupts, and nothing else's. Any other `P` keeps its own `Sync`-ness; an `Rc`, whose
/// count is not updated atomically, cannot be shared this way:
///
/// ```compile_fail
/// # use perfring::producer::CpuLocal;
/// fn shared_with_interrupts<T: Sync>() {}
/// shared_with_interrupts::<CpuLocal<std::rc::Rc<u8>>>(); // an Rc is not Sync, wrapped or not
/// ```
///
/// ```
/// # use perfring::producer::{CpuLocal, Producer};
/// # use perfring::memory::Mapping;
/// fn shared_with_interrupts<T: Sync>() {}
/// shared_with_interrupts::<CpuLocal<Producer<&'static Mapping<'static>>>>();
/// ```
pub struct CpuLocal<P>(P);

// SAFETY: the constructor's caller promises that only one CPU and its LIFO-nesting interrupt
// handlers use the producer, which is the condition the nest protocol needs: every field of a
// `Producer` that a writer changes is a `LocalUsize`/`LocalU32` (atomic against an interrupt
// of the same CPU), and the rest is set at construction. Its memory `M` and hooks `H` are
// reached through `&self` by every context, so they must be `Sync` themselves; `Send` is not
// needed, since the producer never moves out of the wrapper while it is shared.
unsafe impl<M: RingMemory + Sync, H: Hooks<M> + Sync> Sync for CpuLocal<Producer<M, H>> {}

impl<P> CpuLocal<P> {
    /// Wrap a producer for use from one CPU and its interrupt handlers.
    ///
    /// # Safety
    /// Every use of the wrapped producer must come from one CPU (with preemption to other CPUs
    /// excluded while a handle is open) or from interrupt handlers that nest on it and run to
    /// completion before the code they interrupted resumes.
    pub const unsafe fn new(producer: P) -> Self {
        CpuLocal(producer)
    }

    /// The producer.
    pub fn get(&self) -> &P {
        &self.0
    }
}
