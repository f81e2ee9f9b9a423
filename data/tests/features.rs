//! Every typed feature encodes as `header.c` writes it and decodes back; damaged sections are
//! typed errors naming the feature and field.

use perfring::record::{Attr, Endian};
use perfring_data::features::{self, EventDesc, GroupDesc, NumaNode};
use perfring_data::{features::Feature, PerfDataError};

fn values() -> Vec<(u32, Feature)> {
    let attr = Attr { size: Attr::SIZE_VER7, sample_type: 7, config: 3, ..Attr::default() };
    vec![
        (features::HOSTNAME, Feature::String("host".into())),
        (features::CPUID, Feature::String("GenuineIntel,6,85,4".into())),
        (features::NRCPUS, Feature::NrCpus { available: 8, online: 4 }),
        (features::TOTAL_MEM, Feature::TotalMem(16 << 20)),
        (features::CMDLINE, Feature::Cmdline(vec!["perf".into(), "record".into(), "-z".into()])),
        (features::EVENT_DESC, Feature::EventDesc(vec![EventDesc { attr, name: "cycles".into(), ids: vec![1, 2] }])),
        (
            features::CPU_TOPOLOGY,
            Feature::CpuTopology { cores: vec!["0-3".into()], threads: vec!["0".into(), "1".into()], rest: vec![0; 8] },
        ),
        (
            features::NUMA_TOPOLOGY,
            Feature::NumaTopology(vec![NumaNode { node: 0, mem_total: 100, mem_free: 50, cpus: "0-3".into() }]),
        ),
        (features::SAMPLE_TIME, Feature::SampleTime { first: 10, last: 20 }),
        (features::CLOCKID, Feature::ClockId(1)),
        (features::CLOCK_DATA, Feature::ClockData { version: 1, clockid: 1, tod_ns: 5, clockid_ns: 6 }),
        (features::PMU_MAPPINGS, Feature::PmuMappings(vec![(4, "cpu".into()), (1, "software".into())])),
        (features::GROUP_DESC, Feature::GroupDesc(vec![GroupDesc { name: "{a,b}".into(), leader: 0, members: 2 }])),
        (features::COMPRESSED, Feature::Compressed { version: 1, type_: 1, level: 1, ratio: 3, mmap_len: 528384 }),
        (features::CACHE, Feature::Bytes(vec![1, 2, 3])),
    ]
}

#[test]
fn every_feature_round_trips_in_both_byte_orders() {
    for endian in [Endian::Little, Endian::Big] {
        for (bit, f) in values() {
            let bytes = f.encode(endian).unwrap();
            assert_eq!(Feature::parse(bit, &bytes, endian).unwrap(), f, "feature {bit} ({endian:?})");
        }
    }
    // perf's string encoding: {u32 len; bytes; NUL; zero padding to 64}.
    let b = Feature::String("host".into()).encode(Endian::Little).unwrap();
    assert_eq!((b.len(), &b[..8]), (68, &[64, 0, 0, 0, b'h', b'o', b's', b't'][..]));
}

#[test]
fn damaged_features_name_the_field() {
    // A string whose length runs past the section.
    let mut b = Feature::String("host".into()).encode(Endian::Little).unwrap();
    b[0] = 200;
    assert!(matches!(
        Feature::parse(features::HOSTNAME, &b, Endian::Little),
        Err(PerfDataError::BadFeature { feature: features::HOSTNAME, field: "string", .. })
    ));
    // A list count larger than the bytes can hold: refused before allocating.
    let mut b = Feature::Cmdline(vec!["a".into()]).encode(Endian::Little).unwrap();
    b[..4].copy_from_slice(&u32::MAX.to_le_bytes());
    assert!(matches!(
        Feature::parse(features::CMDLINE, &b, Endian::Little),
        Err(PerfDataError::BadFeature { feature: features::CMDLINE, field: "cmdline", offset: 0 })
    ));
    // Every truncation of every feature is an error or a shorter value, never a panic.
    for (bit, f) in values() {
        let bytes = f.encode(Endian::Little).unwrap();
        for cut in 0..bytes.len() {
            let r = Feature::parse(bit, &bytes[..cut], Endian::Little);
            if let Ok(v) = r {
                assert!(
                    matches!(v, Feature::Bytes(_) | Feature::CpuTopology { .. }),
                    "feature {bit} cut at {cut}: {v:?}"
                );
            }
        }
    }
}

/// `Writer::set_feature` takes the variant the bit's layout needs, as `Feature::parse` gives
/// it; another is an error naming the bit and the variant (before, a string under NRCPUS was
/// written, and perf printed "nrcpus online : 1920298854").
#[test]
fn set_feature_refuses_a_variant_the_bit_does_not_take() {
    use perfring_data::{FileAttr, Writer};
    let attr = Attr { size: Attr::SIZE_VER7, ..Attr::default() };
    let mut w =
        Writer::new(std::io::Cursor::new(Vec::new()), Endian::Little, vec![FileAttr { attr, ids: vec![] }]).unwrap();
    for (bit, f) in values() {
        w.set_feature(bit, &f).unwrap();
    }
    let wrong = [
        (features::NRCPUS, Feature::String("nope".into()), "NrCpus", "String"),
        (features::HOSTNAME, Feature::SampleTime { first: 1, last: 2 }, "String", "SampleTime"),
        (features::HOSTNAME, Feature::Bytes(vec![0; 8]), "String", "Bytes"),
        (features::CACHE, Feature::TotalMem(1), "Bytes", "TotalMem"),
    ];
    for (bit, f, expected, given) in wrong {
        let e = w.set_feature(bit, &f).unwrap_err();
        assert!(
            matches!(e, PerfDataError::FeatureMismatch { feature, expected: x, given: g, .. } if (feature, x, g) == (bit, expected, given)),
            "{e:?}"
        );
        assert!(e.to_string().contains(&format!("takes Feature::{expected}")), "{e}");
    }
    let e = w.set_feature(features::NRCPUS, &Feature::String("x".into())).unwrap_err();
    assert!(e.to_string().contains("feature 7 (NRCPUS)"), "{e}");
    // The bits set before are as given.
    let bytes = w.finish().unwrap().into_inner();
    let r = perfring_data::Reader::from_bytes(&bytes).unwrap();
    for (bit, f) in values() {
        assert_eq!(r.metadata().feature_value(bit).unwrap().unwrap(), f, "feature {bit}");
    }
}
