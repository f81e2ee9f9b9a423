//! `Reader::open` on paths: its errors name the path, and a path that is not a regular file
//! (a FIFO, `/dev/stdin` on a pipe, a process substitution) is read as a stream.

use perfring::record::EventRecord;
use std::io::Cursor;
use std::path::PathBuf;

use perfring::record::{sample_type as st, Attr, Endian, Record, Sample};
use perfring_data::{FileAttr, PerfDataError, Reader, Writer};

/// A fresh directory for this test.
fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("perfring-data-open-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn attrs() -> Vec<FileAttr> {
    let attr = Attr { size: Attr::SIZE_VER7, sample_type: st::IP | st::TID, sample_period: 1, ..Attr::default() };
    vec![FileAttr { attr, ids: vec![1] }]
}

fn sample(ip: u64) -> Sample<'static> {
    Sample { ip: Some(ip), tid: Some(Default::default()), ..Sample::default() }
}

/// Three SAMPLEs and a FINISHED_ROUND, in file or pipe mode.
fn bytes(pipe: bool) -> Vec<u8> {
    let hostname = perfring_data::features::Feature::String("h".into());
    if pipe {
        let mut w = Writer::pipe(Vec::new(), Endian::Little, attrs()).unwrap();
        (1..=3).for_each(|ip| w.write_record(&sample(ip), 0).unwrap());
        w.finished_round().unwrap();
        w.set_feature(perfring_data::features::HOSTNAME, &hostname).unwrap();
        return w.finish_pipe().unwrap();
    }
    let mut w = Writer::new(Cursor::new(Vec::new()), Endian::Little, attrs()).unwrap();
    (1..=3).for_each(|ip| w.write_record(&sample(ip), 0).unwrap());
    w.finished_round().unwrap();
    w.set_feature(perfring_data::features::HOSTNAME, &hostname).unwrap();
    w.finish().unwrap().into_inner()
}

/// The SAMPLEs' ips, and the HOSTNAME feature once read.
fn read<S: perfring_data::Source>(mut r: Reader<S>) -> (Vec<u64>, Option<Vec<u8>>) {
    let mut ips = Vec::new();
    while let Some(rec) = r.next_record().unwrap() {
        if let Ok(Record::Sample(s)) = rec.decode() {
            ips.extend(s.ip());
        }
    }
    (ips, r.metadata().feature(perfring_data::features::HOSTNAME).map(<[u8]>::to_vec))
}

/// Before, `Reader::open` took a FIFO's length from its metadata (0) and read no record, with
/// only a "no events" warning.
#[cfg(unix)]
#[test]
fn a_fifo_is_read_as_a_stream_in_either_mode() {
    let dir = scratch("fifo");
    for pipe in [true, false] {
        let fifo = dir.join(format!("fifo-{pipe}"));
        let made = std::process::Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
        assert!(made.success(), "mkfifo {fifo:?}");
        let data = bytes(pipe);
        let expected = read(Reader::from_bytes(&data).unwrap());
        assert_eq!(expected.0, [1, 2, 3]);
        // Opening a FIFO for writing waits for its reader: the writer is a thread.
        let writer = {
            let fifo = fifo.clone();
            std::thread::spawn(move || std::fs::write(fifo, data).unwrap())
        };
        let r = Reader::open(&fifo).unwrap();
        assert_eq!(read(r), expected, "pipe mode: {pipe}");
        writer.join().unwrap();
    }
    std::fs::remove_dir_all(dir).unwrap();
}

/// Before, "perf.data I/O at offset 0: No such file or directory": which file, it did not say.
#[test]
fn open_errors_name_the_path() {
    let dir = scratch("errors");
    let missing = dir.join("missing.data");
    let e = Reader::open(&missing).unwrap_err();
    assert!(matches!(&e, PerfDataError::Open { path, .. } if *path == missing), "{e:?}");
    assert!(e.to_string().contains(&format!("cannot open {}", missing.display())), "{e}");
    // A directory without `data`: the file it looked for.
    let e = Reader::open(&dir).unwrap_err();
    assert!(matches!(&e, PerfDataError::Open { path, .. } if *path == dir.join("data")), "{e:?}");
    // What is wrong inside a file, named by it.
    let bad = dir.join("bad.data");
    std::fs::write(&bad, [0u8; 200]).unwrap();
    let e = Reader::open(&bad).unwrap_err();
    assert!(
        matches!(&e, PerfDataError::InFile { path, error } if *path == bad && matches!(**error, PerfDataError::BadMagic(_))),
        "{e:?}"
    );
    assert!(e.to_string().starts_with(&format!("{}: not a perf.data file", bad.display())), "{e}");
    std::fs::remove_dir_all(dir).unwrap();
}
