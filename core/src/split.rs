//! The safe way to get the two ends of a ring.

use crate::consumer::{Consumer, Trusted};
use crate::memory::{ExclusiveMemory, LayoutError};
use crate::producer::{Hooks, NoHooks, Producer, ProducerConfig};

/// The two ends of a ring whose memory `M` is borrowed for `'a`.
pub type Ends<'a, M, H = NoHooks> = (Producer<&'a M, H>, Consumer<&'a M, Trusted>);

/// Split exclusively borrowed ring memory into its one producer and one consumer.
///
/// The exclusive borrow of memory that one value owns ([`ExclusiveMemory`]) is the proof that no
/// other producer writes this ring and no other consumer frees its bytes, which is what makes
/// the zero-copy [`Trusted`] consumer and the producer safe to hand out. A shared reference
/// cannot be split (it could be split twice):
///
/// ```compile_fail
/// use perfring::{split, memory::Mapping, producer::ProducerConfig};
/// # #[repr(align(8))] struct Buf([u8; 4096 + 1024]);
/// let mut buf = Buf([0; 4096 + 1024]);
/// let map = Mapping::new(&mut buf.0, 4096).unwrap();
/// let (mut a, mut b) = (&map, &map);
/// let first = split(&mut a, ProducerConfig::default());
/// let second = split(&mut b, ProducerConfig::default()); // two producers of one ring: refused
/// ```
///
/// ```
/// use perfring::{split, memory::Mapping, producer::{ProducerConfig, EventIdentity}};
/// # #[repr(align(8))] struct Buf([u8; 4096 + 1024]);
/// let mut buf = Buf([0; 4096 + 1024]);
/// let mut map = Mapping::new(&mut buf.0, 4096).unwrap();
/// let (producer, mut consumer) = split(&mut map, ProducerConfig::default()).unwrap();
/// // PERF_RECORD_SAMPLE (type 9) with an empty body: 8 bytes.
/// let header = [9, 0, 0, 0, 0, 0, 8, 0];
/// producer.output(&header, &EventIdentity::ANONYMOUS).unwrap();
/// let mut scratch = [0u8; 64];
/// let n = consumer.for_each(&mut scratch, |r| assert_eq!(r.header.type_, 9)).unwrap();
/// assert_eq!(n, 1);
/// ```
pub fn split<M: ExclusiveMemory>(mem: &mut M, config: ProducerConfig) -> Result<Ends<'_, M>, LayoutError> {
    split_with_hooks(mem, config, NoHooks)
}

/// [`split`], with producer hooks.
pub fn split_with_hooks<'a, M: ExclusiveMemory, H: Hooks<&'a M>>(
    mem: &'a mut M,
    config: ProducerConfig,
    hooks: H,
) -> Result<Ends<'a, M, H>, LayoutError> {
    let mem: &M = mem;
    // SAFETY: `mem` was borrowed exclusively and owns its ring alone (`ExclusiveMemory`), so this
    // is the only producer of the ring and the consumer's peer is this protocol-following
    // producer.
    unsafe { Ok((Producer::with_hooks(mem, config, hooks)?, Consumer::trusted(mem)?)) }
}
