//! [`PerfDataWriter`]: build a perf.data file that the real `perf` reads (KERNEL-NOTES §9.10).

use std::collections::BTreeMap;

use perfring::record::{types, Attr, DecodeContext, Endian, Header, Record};

use crate::{features, PerfDataError, HEADER_SIZE, MAGIC, SECTION_SIZE};

/// Collects attrs, records and features, then lays them out as a perf.data file.
///
/// Rules perf enforces that the caller keeps (KERNEL-NOTES §9.7): every attr has the same
/// `size` (≤ 128 for perf 6.1) and the same `sample_id_all`; with several events, each needs
/// ID or IDENTIFIER at the same position (IDENTIFIER in every `sample_type` is simplest), and
/// the ids given here must be the ids in the records.
#[derive(Debug, Clone)]
pub struct PerfDataWriter {
    endian: Endian,
    attrs: Vec<(Attr, Vec<u64>)>,
    data: Vec<u8>,
    features: BTreeMap<u32, Vec<u8>>,
}

impl PerfDataWriter {
    /// An empty file in `endian` order.
    pub fn new(endian: Endian) -> PerfDataWriter {
        PerfDataWriter { endian, attrs: Vec::new(), data: Vec::new(), features: BTreeMap::new() }
    }

    /// The byte order.
    pub fn endian(&self) -> Endian {
        self.endian
    }

    /// Add an event with its sample ids; returns its index.
    pub fn add_attr(&mut self, attr: Attr, ids: &[u64]) -> usize {
        self.attrs.push((attr, ids.to_vec()));
        self.attrs.len() - 1
    }

    /// The decoding context of event `index` in this file's byte order.
    pub fn context(&self, index: usize) -> Option<DecodeContext> {
        Some(DecodeContext::from_attr(&self.attrs.get(index)?.0, self.endian))
    }

    /// Append an encoded record (or any bytes: AUXTRACE data, perf's own types).
    pub fn push_bytes(&mut self, bytes: &[u8]) {
        self.data.extend_from_slice(bytes);
    }

    /// Encode and append a record; returns its file offset relative to the data section.
    pub fn push(&mut self, record: &Record<'_>, ctx: &DecodeContext) -> Result<usize, PerfDataError> {
        let at = self.data.len();
        let size = record.encoded_size(ctx)?;
        self.data.resize(at + size, 0);
        record.encode(ctx, &mut self.data[at..])?;
        Ok(at)
    }

    /// Append a FINISHED_ROUND (type 68): perf may sort and flush everything before it.
    pub fn finished_round(&mut self) {
        let h = Header { type_: types::FINISHED_ROUND, misc: 0, size: 8 };
        self.data.extend_from_slice(&h.to_bytes(self.endian));
    }

    /// Bytes of the data section so far.
    pub fn data_len(&self) -> usize {
        self.data.len()
    }

    /// Set a feature's payload ([`features`] bit numbers, 1..256).
    pub fn set_feature(&mut self, bit: u32, payload: Vec<u8>) {
        if (1..features::BITS).contains(&bit) {
            self.features.insert(bit, payload);
        }
    }

    /// Set a string feature (HOSTNAME, OSRELEASE, VERSION, ARCH, …).
    pub fn set_string_feature(&mut self, bit: u32, value: &str) {
        self.set_feature(bit, features::encode_string(value, self.endian));
    }

    /// Set NRCPUS: `{u32 nr_cpus_avail; u32 nr_cpus_online}`.
    pub fn set_nrcpus(&mut self, avail: u32, online: u32) {
        let mut p = self.endian.put_u32(avail).to_vec();
        p.extend_from_slice(&self.endian.put_u32(online));
        self.set_feature(features::NRCPUS, p);
    }

    /// Offset the data section will have in the file (to turn [`PerfDataWriter::push`]'s
    /// offsets into file offsets).
    pub fn data_offset(&self) -> usize {
        let attr_size = self.attrs.first().map_or(Attr::SIZE_VER7 as usize, |(a, _)| a.size as usize);
        let ids: usize = self.attrs.iter().map(|(_, ids)| 8 * ids.len()).sum();
        HEADER_SIZE + self.attrs.len() * (attr_size + SECTION_SIZE) + ids
    }

    /// Lay the file out.
    pub fn to_bytes(&self) -> Result<Vec<u8>, PerfDataError> {
        let e = self.endian;
        let attr_size = self.attrs.first().map_or(Attr::SIZE_VER7, |(a, _)| a.size);
        if self.attrs.iter().any(|(a, _)| a.size != attr_size) {
            return Err(PerfDataError::MixedAttrSizes);
        }
        let entry = attr_size as usize + SECTION_SIZE;
        let attrs_off = HEADER_SIZE;
        let ids_off = attrs_off + self.attrs.len() * entry;
        let data_off = self.data_offset();
        let mut f = Vec::with_capacity(data_off + self.data.len() + 1024);
        // perf_file_header. The magic is the u64 PERF_MAGIC in the file's order.
        f.extend_from_slice(&e.put_u64(MAGIC));
        f.extend_from_slice(&e.put_u64(HEADER_SIZE as u64));
        f.extend_from_slice(&e.put_u64(entry as u64));
        for (off, size) in [(attrs_off, self.attrs.len() * entry), (data_off, self.data.len()), (0, 0)] {
            f.extend_from_slice(&e.put_u64(off as u64));
            f.extend_from_slice(&e.put_u64(size as u64));
        }
        let mut bitmap = [0u64; 4];
        for &bit in self.features.keys() {
            bitmap[bit as usize / 64] |= 1 << (bit % 64);
        }
        for w in bitmap {
            f.extend_from_slice(&e.put_u64(w));
        }
        // Attrs, each with its ids section.
        let mut ids_at = ids_off;
        for (attr, ids) in &self.attrs {
            let mut a = vec![0u8; attr_size as usize];
            attr.to_bytes(e, &mut a)?;
            f.extend_from_slice(&a);
            f.extend_from_slice(&e.put_u64(ids_at as u64));
            f.extend_from_slice(&e.put_u64(8 * ids.len() as u64));
            ids_at += 8 * ids.len();
        }
        for (_, ids) in &self.attrs {
            for id in ids {
                f.extend_from_slice(&e.put_u64(*id));
            }
        }
        debug_assert_eq!(f.len(), data_off);
        f.extend_from_slice(&self.data);
        // Feature sections: the table of {offset, size}, then the payloads.
        let mut payload_at = f.len() + self.features.len() * SECTION_SIZE;
        for p in self.features.values() {
            f.extend_from_slice(&e.put_u64(payload_at as u64));
            f.extend_from_slice(&e.put_u64(p.len() as u64));
            payload_at += p.len();
        }
        for p in self.features.values() {
            f.extend_from_slice(p);
        }
        Ok(f)
    }

    /// Write the file.
    pub fn write(&self, path: impl AsRef<std::path::Path>) -> Result<(), PerfDataError> {
        std::fs::write(path, self.to_bytes()?)?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use perfring::record::{attr_flags, sample_type as st, Comm, Sample, SampleId};

    use crate::{features, PerfData};
    use super::*;

    #[test]
    fn written_files_read_back_in_both_orders() {
        for endian in [Endian::Little, Endian::Big] {
            let mut w = PerfDataWriter::new(endian);
            let t = st::IDENTIFIER | st::IP | st::TID;
            for id in [11, 22] {
                let attr =
                    Attr { size: Attr::SIZE_VER7, sample_type: t, flags: attr_flags::SAMPLE_ID_ALL, ..Attr::default() };
                w.add_attr(attr, &[id]);
            }
            let ctx = w.context(1).unwrap();
            let comm = Comm {
                misc: 0,
                pid: 1,
                tid: 2,
                comm: c"x",
                sample_id: Some(SampleId { identifier: 22, pid: 1, tid: 2, ..SampleId::default() }),
            };
            w.push(&Record::Comm(comm), &ctx).unwrap();
            let s = Sample { identifier: Some(11), ip: Some(5), tid: Some(Default::default()), ..Sample::default() };
            w.push(&Record::Sample(s), &ctx).unwrap();
            w.finished_round();
            w.set_string_feature(features::HOSTNAME, "host");
            w.set_nrcpus(4, 2);
            let file = PerfData::parse(w.to_bytes().unwrap()).unwrap();
            assert_eq!(file.endian, endian);
            assert_eq!(file.attrs.len(), 2);
            assert_eq!(file.attrs[1].ids, vec![22]);
            assert_eq!(file.attrs[0].attr.sample_type, t);
            assert_eq!(file.string_feature(features::HOSTNAME).as_deref(), Some("host"));
            assert_eq!(file.feature(features::NRCPUS).map(<[u8]>::len), Some(8));
            let recs: Vec<_> = file.records().collect::<Result<_, _>>().unwrap();
            assert_eq!(recs.len(), 3);
            assert_eq!(recs[0].offset, w.data_offset());
            let (i, r) = file.decode(&recs[0]).unwrap();
            assert_eq!((i, r), (Some(1), Record::Comm(comm)));
            let (i, r) = file.decode(&recs[1]).unwrap();
            assert_eq!((i, r), (Some(0), Record::Sample(s)));
            assert_eq!(file.attr_index(recs[2].bytes), None);
        }
    }
}
