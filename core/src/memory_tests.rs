//! Unit tests of the memory layer: [`Mapping`]'s control-page words and AUX layout, and the
//! area-size rule every constructor applies.

extern crate std;

use std::string::ToString;

use crate::memory::{check_area_size, Area, LayoutError, Mapping, Position, RingMemory, MAX_AREA_SIZE};
use crate::page::offsets;

#[repr(C, align(8))]
struct Aligned<const N: usize>([u8; N]);

/// The u64 field at byte `off` of the control page, read as the kernel lays it out.
fn page_u64(map: &Mapping<'_>, off: usize) -> u64 {
    assert!(off + 8 <= offsets::END);
    // SAFETY: inside the control page of a live mapping; no one writes it meanwhile.
    unsafe { core::ptr::read_unaligned(map.page_ptr().add(off).cast::<u64>()) }
}

#[test]
fn position_words_are_the_abi_fields_of_the_control_page() {
    let expect = [
        (Position::DataHead, offsets::DATA_HEAD, 1024),
        (Position::DataTail, offsets::DATA_TAIL, 1032),
        (Position::AuxHead, offsets::AUX_HEAD, 1056),
        (Position::AuxTail, offsets::AUX_TAIL, 1064),
    ];
    let mut buf = Aligned([0u8; 4096 + 4096]);
    let map = Mapping::new(&mut buf.0, 4096).unwrap();
    for (i, (p, off, abi)) in expect.into_iter().enumerate() {
        assert_eq!((p.page_offset(), off), (abi, abi), "{p:?}");
        map.position(p).store(0x1000 + i, crate::fences::LOCAL);
    }
    for (i, (p, off, _)) in expect.into_iter().enumerate() {
        assert_eq!(page_u64(&map, off), 0x1000 + i as u64, "{p:?} is its own word at {off}");
    }
    assert_eq!(page_u64(&map, offsets::DATA_OFFSET), 4096);
    assert_eq!(page_u64(&map, offsets::DATA_SIZE), 4096);
}

#[test]
fn with_aux_writes_aux_offset_and_size_and_refuses_an_aux_area_over_the_data_area() {
    let mut buf = Aligned([0u8; 4096 + 4096]);
    let mut aux = Aligned([0u8; 64 + 8]);
    let data_end = 4096 + 4096;
    // The AUX area may not start inside the data area.
    let map = Mapping::new(&mut buf.0, 4096).unwrap();
    assert_eq!(
        map.with_aux(&mut aux.0[..64], Some(data_end - 8)).err(),
        Some(LayoutError::OutOfMapping { offset: data_end - 8, size: 64, len: data_end as usize })
    );
    // Nor in an unaligned buffer.
    let map = Mapping::new(&mut buf.0, 4096).unwrap();
    let addr = aux.0[4..].as_ptr() as usize;
    assert_eq!(map.with_aux(&mut aux.0[4..68], None).err(), Some(LayoutError::Misaligned { addr }));
    // Right after it: both words land in the control page (an offset above 4 GiB checks both
    // halves of the u64).
    let map = Mapping::new(&mut buf.0, 4096).unwrap().with_aux(&mut aux.0[..64], Some(data_end)).unwrap();
    assert_eq!(map.size(Area::Aux), 64);
    assert_eq!(page_u64(&map, offsets::AUX_OFFSET), data_end);
    assert_eq!(page_u64(&map, offsets::AUX_SIZE), 64);
    let map = Mapping::new(&mut buf.0, 4096).unwrap().with_aux(&mut aux.0[..64], Some(0x1_2345_6000)).unwrap();
    assert_eq!(page_u64(&map, offsets::AUX_OFFSET), 0x1_2345_6000);
    assert_eq!(page_u64(&map, offsets::AUX_SIZE), 64);
}

#[test]
fn area_sizes_up_to_half_the_position_range_are_accepted_and_larger_ones_are_too_large() {
    assert_eq!(check_area_size(MAX_AREA_SIZE, 64), Ok(()));
    assert_eq!(check_area_size(MAX_AREA_SIZE + 64, 64), Err(LayoutError::TooLarge { size: MAX_AREA_SIZE + 64 }));
    assert_eq!(check_area_size(96, 64), Err(LayoutError::NotPowerOfTwo { size: 96 }));
    assert_eq!(check_area_size(0, 64), Err(LayoutError::NoArea), "size 0: no such area, said so");
    assert_eq!(check_area_size(32, 64), Err(LayoutError::TooSmall { size: 32, min: 64 }));
    assert_eq!(check_area_size(64, 64), Ok(()));
}

#[test]
fn layout_errors_print_what_went_wrong_with_the_values() {
    let cases = [
        (LayoutError::NotPowerOfTwo { size: 96 }, "area size 96 (data_size or aux_size) is not a power of two"),
        (LayoutError::TooSmall { size: 32, min: 64 }, "area size 32 (data_size or aux_size) is below the minimum 64"),
        (
            LayoutError::TooLarge { size: 1 << 40 },
            "area size 1099511627776 (data_size or aux_size) is larger than half the position range",
        ),
        (LayoutError::Misaligned { addr: 0x1004 }, "memory at 0x1004 is not 8-byte aligned"),
        (LayoutError::BadPageSize { page_size: 1000 }, "control page size 1000 is below 1088 or not a multiple of 8"),
        (
            LayoutError::OutOfMapping { offset: 0x1000, size: 0x2000, len: 0x2000 },
            "area [0x1000, +0x2000) (data_offset and data_size, or aux_offset and aux_size) does not fit a \
             0x2000-byte mapping",
        ),
        (LayoutError::MisalignedPosition { position: 12 }, "position 0xc (data_tail) is not a multiple of 8"),
        (LayoutError::NoArea, "the mapping has no such area (its data_size or aux_size is 0)"),
    ];
    for (err, text) in cases {
        assert_eq!(err.to_string(), text);
    }
}

#[test]
fn page_words_are_the_u32_fields_at_their_offsets() {
    let mut buf = Aligned([0u8; 4096 + 4096]);
    let map = Mapping::new(&mut buf.0, 4096).unwrap();
    let fields = [offsets::LOCK, offsets::INDEX, offsets::TIME_MULT, offsets::SIZE, offsets::RESERVED - 4];
    for (i, off) in fields.into_iter().enumerate() {
        map.page_word(off).store(0xA000 + i as u32, crate::fences::LOCAL);
    }
    for (i, off) in fields.into_iter().enumerate() {
        // SAFETY: a 4-aligned u32 inside the control page of a live mapping.
        let got = unsafe { core::ptr::read_unaligned(map.page_ptr().add(off).cast::<u32>()) };
        assert_eq!(got, 0xA000 + i as u32, "page word at {off}");
    }
}

#[test]
fn load_words_refuses_unaligned_or_out_of_area_ranges_and_copies_aligned_ones() {
    // The mapping covers the first 8192 bytes; the 64 after it are ours too, so a wrong
    // answer reads them rather than foreign memory.
    let mut buf = Aligned([0u8; 4096 + 4096 + 64]);
    let map = Mapping::new(&mut buf.0[..8192], 4096).unwrap();
    // SAFETY: no one else accesses the data area.
    unsafe { map.write(Area::Data, 4080, &[7u8; 16]) };
    let mut dst = [0u8; 16];
    assert!(map.load_words(Area::Data, 4080, &mut dst));
    assert_eq!(dst, [7u8; 16]);
    let mut dst = [0u8; 16];
    assert!(!map.load_words(Area::Data, 4084, &mut dst[..8]), "offset not a multiple of 8");
    assert!(!map.load_words(Area::Data, 4080, &mut dst[..12]), "length not a multiple of 8");
    assert!(!map.load_words(Area::Data, 4088, &mut dst), "past the end of the area");
    assert!(!map.load_words(Area::Data, usize::MAX - 7, &mut dst[..8]), "offset + length overflows");
    assert_eq!(dst, [0u8; 16], "nothing copied by a refused load");
}

#[test]
fn model_ring_load_words_refuses_unaligned_or_out_of_area_ranges_as_a_mapping_does() {
    let ring = crate::memory::ModelRing::<8>::new().unwrap(); // 64 bytes
                                                              // SAFETY: no one else accesses the data area.
    unsafe { ring.write(Area::Data, 48, &[7u8; 16]) };
    let mut dst = [0u8; 16];
    assert!(ring.load_words(Area::Data, 48, &mut dst));
    assert_eq!(dst, [7u8; 16]);
    let mut dst = [0u8; 16];
    assert!(!ring.load_words(Area::Data, 52, &mut dst[..8]), "offset not a multiple of 8");
    assert!(!ring.load_words(Area::Data, 48, &mut dst[..12]), "length not a multiple of 8");
    assert!(!ring.load_words(Area::Data, 56, &mut dst), "past the end of the area");
    assert!(!ring.load_words(Area::Data, usize::MAX - 7, &mut dst[..8]), "offset + length overflows");
    assert_eq!(dst, [0u8; 16], "nothing copied by a refused load");
}

#[test]
fn a_32_bit_position_is_extended_to_the_nearest_full_position() {
    use crate::memory::extend_position32;
    // Ahead of the reference, across the 4 GiB wrap of the low half.
    assert_eq!(extend_position32(0xffff_ffc0, 0x40), 0x1_0000_0040);
    // Behind it stays behind.
    assert_eq!(extend_position32(0x1_0000_0040, 0xffff_ffc0), 0xffff_ffc0);
    // The same low half: the reference itself; near it, either way.
    assert_eq!(extend_position32(0x2_0000_1000, 0x1000), 0x2_0000_1000);
    assert_eq!(extend_position32(0x2_0000_1000, 0x1008), 0x2_0000_1008);
    assert_eq!(extend_position32(0x2_0000_1000, 0x0ff8), 0x2_0000_0ff8);
}
