//! The VM and the ring in its memory: guest memory from vm-memory registered with KVM, a vCPU
//! put in 64-bit mode, and [`GuestRing`], perfring's [`RingMemory`] over guest memory. All of
//! this example's `unsafe` is here.

use perfring::page::MmapPage;
use std::mem::offset_of;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

use kvm_bindings::{kvm_segment, kvm_userspace_memory_region};
use kvm_ioctls::{Kvm, VcpuFd, VmFd};
use perfring::memory::{Area, Position, RingMemory};
use vm_memory::{Address, Bytes, GuestAddress, GuestMemory, GuestMemoryMmap};

/// Guest-physical layout (identity-mapped by the page tables below).
pub const MEM_SIZE: usize = 4 << 20;
const GDT: u64 = 0x500;
const PML4: u64 = 0x9000;
const PDPT: u64 = 0xa000;
const PD: u64 = 0xb000;
/// Top of the guest's stack.
pub const STACK_TOP: u64 = 0x3f_f000;

/// A VM with its memory and one vCPU.
pub struct Vm {
    /// Kept open for the VM's lifetime.
    _kvm: Kvm,
    /// The VM (its memory region refers to `mem`, which outlives it: fields drop in order).
    _vm: VmFd,
    /// The vCPU, taken by the thread that runs it.
    pub vcpu: Option<VcpuFd>,
    /// Guest memory.
    pub mem: GuestMemoryMmap,
}

/// What went wrong setting the VM up.
pub type Error = Box<dyn std::error::Error + Send + Sync>;

impl Vm {
    /// `/dev/kvm`, a VM of [`MEM_SIZE`] bytes at guest-physical 0, one vCPU.
    pub fn new() -> Result<Vm, Error> {
        let kvm = Kvm::new()?;
        let vm = kvm.create_vm()?;
        let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), MEM_SIZE)])?;
        let host = mem.get_host_address(GuestAddress(0))?;
        let region = kvm_userspace_memory_region {
            slot: 0,
            flags: 0,
            guest_phys_addr: 0,
            memory_size: MEM_SIZE as u64,
            userspace_addr: host as u64,
        };
        // SAFETY: the region is `mem`'s one mapping of MEM_SIZE bytes, which stays mapped as
        // long as the VM (it is dropped after the VM: see the field order).
        unsafe { vm.set_user_memory_region(region)? };
        vm.set_tss_address(0xfffb_d000)?;
        let vcpu = vm.create_vcpu(0)?;
        Ok(Vm { _kvm: kvm, _vm: vm, vcpu: Some(vcpu), mem })
    }

    /// Page tables identity-mapping the first GiB with 2 MiB pages, a GDT with a 64-bit code
    /// segment, and the vCPU in long mode at `entry` with the stack at [`STACK_TOP`].
    pub fn long_mode(&self, entry: u64) -> Result<(), Error> {
        let vcpu = self.vcpu.as_ref().ok_or("the vCPU is running")?;
        self.mem.write_obj(PDPT | 3, GuestAddress(PML4))?;
        self.mem.write_obj(PD | 3, GuestAddress(PDPT))?;
        for i in 0..512u64 {
            self.mem.write_obj((i << 21) | 0x83, GuestAddress(PD + 8 * i))?; // present, writable, 2 MiB
        }
        // null, code (64-bit, present, execute/read), data (present, read/write).
        for (i, entry) in [0u64, 0x00af_9b00_0000_ffff, 0x00cf_9300_0000_ffff].iter().enumerate() {
            self.mem.write_obj(*entry, GuestAddress(GDT + 8 * i as u64))?;
        }
        let mut sregs = vcpu.get_sregs()?;
        let code = kvm_segment {
            base: 0,
            limit: 0xffff_ffff,
            selector: 0x8,
            type_: 11,
            present: 1,
            dpl: 0,
            db: 0,
            s: 1,
            l: 1,
            g: 1,
            avl: 0,
            unusable: 0,
            padding: 0,
        };
        let data = kvm_segment { selector: 0x10, type_: 3, l: 0, db: 1, ..code };
        sregs.cs = code;
        (sregs.ds, sregs.es, sregs.fs, sregs.gs, sregs.ss) = (data, data, data, data, data);
        sregs.gdt.base = GDT;
        sregs.gdt.limit = 23;
        sregs.cr3 = PML4;
        sregs.cr4 |= 1 << 5; // PAE
        sregs.cr0 |= 1 | 1 << 31; // PE, PG
        sregs.cr0 &= !(1 << 30 | 1 << 29); // CD, NW: the reset value runs with caches off
        sregs.efer |= 1 << 8 | 1 << 10; // LME, LMA
        vcpu.set_sregs(&sregs)?;
        // Memory write-back cacheable: MTRRs on with WB as the default type (at reset they
        // are off, which makes every access uncached), and the PAT's reset value.
        let msrs = kvm_bindings::Msrs::from_entries(&[
            kvm_bindings::kvm_msr_entry { index: 0x2ff, data: 1 << 11 | 6, ..Default::default() },
            kvm_bindings::kvm_msr_entry { index: 0x277, data: 0x0007_0406_0007_0406, ..Default::default() },
        ])?;
        vcpu.set_msrs(&msrs)?;
        let mut regs = vcpu.get_regs()?;
        regs.rip = entry;
        regs.rsp = STACK_TOP;
        regs.rflags = 2;
        vcpu.set_regs(&regs)?;
        Ok(())
    }

    /// Lay out a perf ring (a control page of `page` bytes and a data area of `data` bytes) at
    /// guest-physical `at`, as the kernel's `perf_mmap` lays out its own. Called before the
    /// vCPU runs.
    pub fn layout_ring(&self, at: u64, page: usize, data: usize) -> Result<(), Error> {
        let len = page + data;
        let slice = self.mem.get_slice(GuestAddress(at), len)?;
        let ptr = slice.ptr_guard_mut();
        // SAFETY: `len` bytes of guest memory that nothing else accesses yet (the vCPU has not
        // run); the slice is used only during this call.
        let bytes = unsafe { std::slice::from_raw_parts_mut(ptr.as_ptr(), len) };
        perfring::memory::Mapping::new(bytes, page)?;
        Ok(())
    }
}

/// perfring's [`RingMemory`] over a ring in guest memory. The control words are atomics at
/// their guest addresses (vm-memory checks each address is in guest memory and aligned); every
/// data access is a vm-memory atomic load of a guest word, bounded by guest memory. The guest
/// writes these bytes whenever it likes: this memory is only ever read through
/// [`perfring::consumer::Consumer::untrusted`], which copies with these loads and validates the copy.
pub struct GuestRing<'m> {
    mem: &'m GuestMemoryMmap,
    data: GuestAddress,
    data_size: usize,
    positions: [&'m AtomicUsize; 4],
    header: &'m [AtomicU32],
    paused: AtomicBool,
    write_gen: AtomicUsize,
}

impl<'m> GuestRing<'m> {
    /// The ring laid out at guest-physical `at` (control page of `page` bytes, data area of
    /// `data` bytes): the sizes are the host's, never read back from the guest's page.
    pub fn new(mem: &'m GuestMemoryMmap, at: u64, page: usize, data: usize) -> Result<GuestRing<'m>, Error> {
        if !data.is_power_of_two() || page < offset_of!(MmapPage, data_tail) + 8 {
            return Err("ring sizes".into());
        }
        let word = |offset: usize| -> Result<&'m AtomicUsize, Error> {
            let slice = mem.get_slice(GuestAddress(at + offset as u64), 8)?;
            let ptr = slice.ptr_guard().as_ptr();
            if ptr as usize % std::mem::align_of::<AtomicUsize>() != 0 {
                return Err("misaligned control word".into());
            }
            // SAFETY: 8 bytes of guest memory, aligned, mapped for as long as `mem` is borrowed
            // ('m); concurrent guest writes are atomic-compatible (any bit pattern is a valid
            // usize, and the guest's own accesses are word stores).
            Ok(unsafe { AtomicUsize::from_ptr(ptr.cast_mut().cast()) })
        };
        let positions = [
            word(Position::DataHead.page_offset())?,
            word(Position::DataTail.page_offset())?,
            word(Position::AuxHead.page_offset())?,
            word(Position::AuxTail.page_offset())?,
        ];
        let words = offset_of!(MmapPage, reserved) / 4;
        let slice = mem.get_slice(GuestAddress(at), words * 4)?;
        let ptr = slice.ptr_guard().as_ptr();
        // SAFETY: `words` aligned u32s of guest memory (the page is page-aligned), mapped for 'm.
        let header = unsafe { std::slice::from_raw_parts(ptr.cast::<AtomicU32>(), words) };
        Ok(GuestRing {
            mem,
            data: GuestAddress(at + page as u64),
            data_size: data,
            positions,
            header,
            paused: AtomicBool::new(false),
            write_gen: AtomicUsize::new(0),
        })
    }
}

// SAFETY: sizes are constant (fixed at `new`, a power of two); every byte range the methods
// accept is checked against `data_size` and read through vm-memory, which refuses addresses
// outside guest memory; `position`/`page_word` return the same atomics every call.
unsafe impl RingMemory for GuestRing<'_> {
    fn size(&self, area: Area) -> usize {
        match area {
            Area::Data => self.data_size,
            Area::Aux => 0,
        }
    }
    fn position(&self, p: Position) -> &AtomicUsize {
        self.positions[p.index()]
    }
    fn page_word(&self, offset: usize) -> &AtomicU32 {
        &self.header[(offset / 4).min(self.header.len() - 1)]
    }
    fn paused(&self) -> &AtomicBool {
        &self.paused
    }
    fn write_gen(&self) -> &AtomicUsize {
        &self.write_gen
    }
    unsafe fn write(&self, _area: Area, _offset: usize, _src: &[u8]) {
        // The host never produces into the guest's ring.
    }
    unsafe fn read(&self, area: Area, offset: usize, dst: &mut [u8]) {
        // Plain reads are never needed: the guest is untrusted, so every read is a word load.
        self.load_words(area, offset & !7, dst);
    }
    fn load_words(&self, area: Area, offset: usize, dst: &mut [u8]) -> bool {
        if area != Area::Data
            || offset % 8 != 0
            || dst.len() % 8 != 0
            || offset.checked_add(dst.len()).map_or(true, |end| end > self.data_size)
        {
            return false;
        }
        for (i, chunk) in dst.chunks_exact_mut(8).enumerate() {
            let addr = self.data.unchecked_add((offset + 8 * i) as u64);
            match self.mem.load::<u64>(addr, Ordering::Relaxed) {
                Ok(w) => chunk.copy_from_slice(&w.to_ne_bytes()),
                Err(_) => return false,
            }
        }
        true
    }
    unsafe fn view(&self, _area: Area, _offset: usize, _len: usize) -> Option<&[u8]> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use perfring::consumer::Consumer;
    use perfring::consumer::{ReadError, Scratch};

    /// Any contents the guest can put in its ring — heads, tails, sizes, bytes — give records
    /// or typed errors, never a panic, and never a read outside guest memory: the ring sits at
    /// the very end of a guest memory of its own size, so a read one byte past it would have
    /// no guest memory to come from (vm-memory refuses it, and the load reports failure).
    #[test]
    fn hostile_ring_contents_give_typed_errors_and_stay_in_guest_memory() {
        const PAGE: usize = 4096;
        const DATA: usize = 4096;
        let mem = GuestMemoryMmap::<()>::from_ranges(&[(GuestAddress(0), PAGE + DATA)]).unwrap();
        let ring = GuestRing::new(&mem, 0, PAGE, DATA).unwrap();
        let mut scratch = Scratch::new();
        let mut c = Consumer::untrusted(&ring).unwrap(); // one reader for the whole run, as the VMM's
        let (mut records, mut errors) = (0u64, 0u64);
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for round in 0..2000 {
            // The guest's move: garbage bytes, some shaped like records; a head anywhere.
            for w in 0..DATA / 8 {
                let v = match next() % 4 {
                    0 => (next() % 64 * 8) << 48 | 9, // a SAMPLE header of some multiple of 8
                    _ => next(),
                };
                mem.write_obj(v, GuestAddress((PAGE + 8 * w) as u64)).unwrap();
            }
            let head = match round % 3 {
                0 => next(),
                1 => next() % (2 * DATA as u64),
                _ => (c.tail() as u64).wrapping_add(next() % 512),
            };
            mem.write_obj(head, GuestAddress(Position::DataHead.page_offset() as u64)).unwrap();
            match c.for_each(&mut scratch, |r| {
                assert!(r.bytes.len() >= 8 && r.bytes.len() % 8 == 0 && r.bytes.len() <= DATA);
                records += 1;
            }) {
                Ok(_) => {}
                Err(
                    ReadError::HeadTooFarAhead { .. }
                    | ReadError::HeadBehindTail { .. }
                    | ReadError::ZeroSize { .. }
                    | ReadError::MisalignedSize { .. }
                    | ReadError::SizeBeyondHead { .. }
                    | ReadError::MisalignedHead { .. },
                ) => {
                    errors += 1;
                    c.skip_to_head();
                }
                Err(e) => panic!("an error no hostile ring should give: {e}"),
            }
        }
        println!("2000 hostile rounds: {records} record-shaped copies read, {errors} typed errors");
        assert!(errors > 0 && records > 0);
        // A load past the data area, or of a range running past the end of guest memory, fails.
        let mut buf = [0u8; 16];
        assert!(!ring.load_words(Area::Data, DATA - 8, &mut buf));
        assert!(!ring.load_words(Area::Data, usize::MAX - 7, &mut buf[..8]));
    }
}
