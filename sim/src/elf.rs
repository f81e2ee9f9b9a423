//! The simulated program as an ELF64 file (x86-64, little-endian), for perf to read the
//! branch instructions and the function names from.
//!
//! The smallest file perf's symbol loader (libelf) and its instruction reader
//! (tools/perf/util/thread.c:thread__memcpy, which reads the file at `ip - map start + pgoff`)
//! accept: a shared-object header, one `PT_LOAD` of the whole file at address 0 (so every
//! address is its file offset, and a map at [`LOAD_BASE`](crate::program::LOAD_BASE) with
//! `pgoff` 0 maps it), a `PT_NOTE` with the GNU build-id, and the sections `.note.gnu.build-id`,
//! `.text`, `.symtab`, `.strtab`, `.shstrtab`.

use crate::program::{Program, LOAD_BASE, TEXT_OFFSET};

/// Bytes of a GNU build-id (a SHA-1's length, as `ld --build-id` writes).
pub const BUILD_ID_SIZE: usize = 20;

const EHDR: usize = 64;
const PHDR: usize = 56;
const SHDR: usize = 64;
const SYM: usize = 24;
const NOTE_OFFSET: usize = EHDR + 2 * PHDR;
const NOTE_SIZE: usize = 16 + BUILD_ID_SIZE;

/// One section header (`Elf64_Shdr`); flags, addresses and sizes widened to u64 when written.
#[derive(Default)]
struct Section {
    name: u32,
    type_: u32,
    flags: usize,
    addr: usize,
    offset: usize,
    size: usize,
    link: u32,
    info: u32,
    align: usize,
    entsize: usize,
}

/// The ELF image of `p`, and its build-id.
pub fn image(p: &Program) -> (Vec<u8>, [u8; BUILD_ID_SIZE]) {
    // .strtab: "\0" then each name; .symtab: the null symbol, then one global FUNC per function.
    let mut strtab = vec![0u8];
    let mut symtab = vec![0u8; SYM];
    for f in &p.functions {
        let name = strtab.len() as u32;
        strtab.extend_from_slice(f.name.as_bytes());
        strtab.push(0);
        symtab.extend_from_slice(&name.to_le_bytes());
        symtab.push(0x12); // STB_GLOBAL << 4 | STT_FUNC
        symtab.push(0); // STV_DEFAULT
        symtab.extend_from_slice(&2u16.to_le_bytes()); // section 2: .text
        symtab.extend_from_slice(&(f.start - LOAD_BASE).to_le_bytes());
        symtab.extend_from_slice(&f.size.to_le_bytes());
    }
    let names = [".note.gnu.build-id", ".text", ".symtab", ".strtab", ".shstrtab"];
    let mut shstrtab = vec![0u8];
    let mut name_at = Vec::new();
    for n in names {
        name_at.push(shstrtab.len() as u32);
        shstrtab.extend_from_slice(n.as_bytes());
        shstrtab.push(0);
    }
    let text_at = TEXT_OFFSET as usize;
    let text_end = text_at + p.text.len();
    let symtab_at = text_end.next_multiple_of(8);
    let strtab_at = symtab_at + symtab.len();
    let shstrtab_at = strtab_at + strtab.len();
    let shdrs_at = (shstrtab_at + shstrtab.len()).next_multiple_of(8);
    let total = shdrs_at + 6 * SHDR;

    // The build-id: a hash of everything the id stands for (code and symbols).
    let id = build_id(&[&p.text, &symtab, &strtab]);

    let mut f = vec![0u8; total];
    let put = |f: &mut Vec<u8>, at: usize, bytes: &[u8]| f[at..at + bytes.len()].copy_from_slice(bytes);
    // ELF header.
    put(&mut f, 0, &[0x7f, b'E', b'L', b'F', 2, 1, 1]); // ELFCLASS64, ELFDATA2LSB, EV_CURRENT
    put(&mut f, 16, &3u16.to_le_bytes()); // ET_DYN
    put(&mut f, 18, &62u16.to_le_bytes()); // EM_X86_64
    put(&mut f, 20, &1u32.to_le_bytes());
    put(&mut f, 24, &(p.functions[0].start - LOAD_BASE).to_le_bytes()); // e_entry: main
    put(&mut f, 32, &(EHDR as u64).to_le_bytes()); // e_phoff
    put(&mut f, 40, &(shdrs_at as u64).to_le_bytes()); // e_shoff
    put(&mut f, 52, &(EHDR as u16).to_le_bytes());
    put(&mut f, 54, &(PHDR as u16).to_le_bytes());
    put(&mut f, 56, &2u16.to_le_bytes()); // e_phnum
    put(&mut f, 58, &(SHDR as u16).to_le_bytes());
    put(&mut f, 60, &6u16.to_le_bytes()); // e_shnum
    put(&mut f, 62, &5u16.to_le_bytes()); // e_shstrndx
                                          // Program headers: PT_LOAD (R+X) of the whole code, address = offset; PT_NOTE.
    let phdr = |f: &mut Vec<u8>, at: usize, type_: u32, flags: u32, off: usize, size: usize, align: u64| {
        put(f, at, &type_.to_le_bytes());
        put(f, at + 4, &flags.to_le_bytes());
        for (i, v) in [off as u64, off as u64, off as u64, size as u64, size as u64, align].into_iter().enumerate() {
            put(f, at + 8 + 8 * i, &v.to_le_bytes());
        }
    };
    phdr(&mut f, EHDR, 1, 5, 0, text_end, 0x1000);
    phdr(&mut f, EHDR + PHDR, 4, 4, NOTE_OFFSET, NOTE_SIZE, 4);
    // The note: namesz 4, descsz 20, NT_GNU_BUILD_ID (3), "GNU\0", the id.
    put(&mut f, NOTE_OFFSET, &4u32.to_le_bytes());
    put(&mut f, NOTE_OFFSET + 4, &(BUILD_ID_SIZE as u32).to_le_bytes());
    put(&mut f, NOTE_OFFSET + 8, &3u32.to_le_bytes());
    put(&mut f, NOTE_OFFSET + 12, b"GNU\0");
    put(&mut f, NOTE_OFFSET + 16, &id);
    put(&mut f, text_at, &p.text);
    put(&mut f, symtab_at, &symtab);
    put(&mut f, strtab_at, &strtab);
    put(&mut f, shstrtab_at, &shstrtab);
    // Section headers: null; note; text; symtab (link .strtab, info: first global = 1); strtab;
    // shstrtab.
    let sections = [
        Section {
            name: name_at[0],
            type_: 7,
            flags: 2,
            addr: NOTE_OFFSET,
            offset: NOTE_OFFSET,
            size: NOTE_SIZE,
            align: 4,
            ..Section::default()
        },
        Section {
            name: name_at[1],
            type_: 1,
            flags: 6,
            addr: text_at,
            offset: text_at,
            size: p.text.len(),
            align: 16,
            ..Section::default()
        },
        Section {
            name: name_at[2],
            type_: 2,
            offset: symtab_at,
            size: symtab.len(),
            link: 4,
            info: 1,
            align: 8,
            entsize: SYM,
            ..Section::default()
        },
        Section { name: name_at[3], type_: 3, offset: strtab_at, size: strtab.len(), align: 1, ..Section::default() },
        Section {
            name: name_at[4],
            type_: 3,
            offset: shstrtab_at,
            size: shstrtab.len(),
            align: 1,
            ..Section::default()
        },
    ];
    for (i, s) in sections.iter().enumerate() {
        let at = shdrs_at + (i + 1) * SHDR;
        put(&mut f, at, &s.name.to_le_bytes());
        put(&mut f, at + 4, &s.type_.to_le_bytes());
        for (k, v) in [s.flags, s.addr, s.offset, s.size].into_iter().enumerate() {
            put(&mut f, at + 8 + 8 * k, &(v as u64).to_le_bytes());
        }
        put(&mut f, at + 40, &s.link.to_le_bytes());
        put(&mut f, at + 44, &s.info.to_le_bytes());
        put(&mut f, at + 48, &(s.align as u64).to_le_bytes());
        put(&mut f, at + 56, &(s.entsize as u64).to_le_bytes());
    }
    (f, id)
}

/// A 20-byte id of `parts` (FNV-1a, widened: three lanes with different offsets). Not a
/// cryptographic hash: it only has to change when the program does.
fn build_id(parts: &[&[u8]]) -> [u8; BUILD_ID_SIZE] {
    let mut lanes = [0xcbf2_9ce4_8422_2325u64, 0x6c62_272e_07bb_0142, 0x9e37_79b9_7f4a_7c15];
    for part in parts {
        for &b in *part {
            for lane in &mut lanes {
                *lane = (*lane ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
            }
        }
    }
    let mut id = [0u8; BUILD_ID_SIZE];
    let bytes: Vec<u8> = lanes.iter().flat_map(|l| l.to_le_bytes()).collect();
    id.copy_from_slice(&bytes[..BUILD_ID_SIZE]);
    id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_image_holds_the_code_at_its_addresses_and_a_symbol_per_function() {
        let p = Program::new();
        let (f, id) = image(&p);
        assert_eq!(&f[..4], b"\x7fELF");
        let text = TEXT_OFFSET as usize;
        assert_eq!(&f[text..text + p.text.len()], &p.text[..]);
        // The note carries the id.
        assert_eq!(&f[NOTE_OFFSET + 16..NOTE_OFFSET + 16 + BUILD_ID_SIZE], &id);
        // Section headers: .symtab's entries name each function at its address.
        let u64_at = |o: usize| u64::from_le_bytes(f[o..o + 8].try_into().unwrap());
        let shoff = u64_at(40) as usize;
        let symtab = shoff + 3 * SHDR;
        let (off, size) = (u64_at(symtab + 24) as usize, u64_at(symtab + 32) as usize);
        assert_eq!(size / SYM, p.functions.len() + 1);
        for (i, func) in p.functions.iter().enumerate() {
            let s = off + (i + 1) * SYM;
            assert_eq!(u64_at(s + 8), func.start - LOAD_BASE);
            assert_eq!(u64_at(s + 16), func.size);
        }
        // Same program, same id.
        assert_eq!(image(&Program::new()).1, id);
    }
}
