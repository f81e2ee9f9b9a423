//! The records perf record writes before the rings' data, besides the side band from /proc
//! (tools/perf/util/synthetic-events.c): ID_INDEX (which id is which event on which CPU and
//! thread), THREAD_MAP and CPU_MAP (whom and where it records), EVENT_UPDATE with each event's
//! name (pipe mode, which has no EVENT_DESC section), FINISHED_INIT (the end of all that).
//! Each is built here as its bytes, in this machine's byte order.

use perfring::record::types;

use crate::session::Placement;

/// `{header; body}` with `header.size` = 8 + body (a multiple of 8 here).
fn record(type_: u32, body: &[u8]) -> Vec<u8> {
    let mut r = Vec::with_capacity(8 + body.len());
    r.extend_from_slice(&type_.to_ne_bytes());
    r.extend_from_slice(&0u16.to_ne_bytes());
    r.extend_from_slice(&((8 + body.len()) as u16).to_ne_bytes());
    r.extend_from_slice(body);
    r
}

/// ID_INDEX: `{u64 nr; {u64 id, idx, cpu, tid}[nr]}`, `idx` the CPU's place among `cpus`
/// (perf's index into the event's CPU map). Several records if one would pass 64 KiB.
pub fn id_index(placements: &[Placement], cpus: &[u32]) -> Vec<Vec<u8>> {
    placements
        .chunks(2000)
        .map(|chunk| {
            let mut body = (chunk.len() as u64).to_ne_bytes().to_vec();
            for p in chunk {
                let idx = cpus.iter().position(|&c| c == p.cpu).unwrap_or(0) as u64;
                // The CPU as perf's int: ANY_CPU is -1.
                for v in [p.id, idx, i64::from(p.cpu as i32) as u64, i64::from(p.task) as u64] {
                    body.extend_from_slice(&v.to_ne_bytes());
                }
            }
            record(types::ID_INDEX, &body)
        })
        .collect()
}

/// THREAD_MAP: `{u64 nr; {u64 pid; char comm[16]}[nr]}`, each thread's comm from /proc (-1,
/// CPU-wide: an empty name).
pub fn thread_map(tasks: &[i32]) -> Vec<u8> {
    let mut body = (tasks.len() as u64).to_ne_bytes().to_vec();
    for &t in tasks {
        body.extend_from_slice(&(i64::from(t) as u64).to_ne_bytes());
        let comm =
            if t > 0 { std::fs::read_to_string(format!("/proc/{t}/comm")).unwrap_or_default() } else { String::new() };
        let mut name = [0u8; 16];
        let c = comm.trim_end().as_bytes();
        let n = c.len().min(15);
        name[..n].copy_from_slice(&c[..n]);
        body.extend_from_slice(&name);
    }
    record(types::THREAD_MAP, &body)
}

/// CPU_MAP as perf 6.1 writes a contiguous map (`PERF_CPU_MAP__RANGE_CPUS`: `{u16 type = 2;
/// u8 any_cpu; u8 pad; u16 start, end}`), or a list (`PERF_CPU_MAP__CPUS`: `{u16 type = 0;
/// u16 nr; u16 cpu[nr]}`), padded to 8; a CPU repeated next to itself is listed once.
pub fn cpu_map(cpus: &[u32]) -> Vec<u8> {
    // Each CPU once: a session with a ring per task has ANY_CPU for each (perf's map of -1).
    let mut cpus = cpus.to_vec();
    cpus.dedup();
    let cpus = &cpus[..];
    let mut body = Vec::new();
    let contiguous = cpus.windows(2).all(|w| w[1] == w[0] + 1);
    if contiguous && cpus.len() > 1 {
        body.extend_from_slice(&2u16.to_ne_bytes());
        body.extend_from_slice(&[0, 0]);
        body.extend_from_slice(&(cpus[0] as u16).to_ne_bytes());
        body.extend_from_slice(&(cpus[cpus.len() - 1] as u16).to_ne_bytes());
    } else {
        body.extend_from_slice(&0u16.to_ne_bytes());
        body.extend_from_slice(&(cpus.len() as u16).to_ne_bytes());
        cpus.iter().for_each(|&c| body.extend_from_slice(&(c as u16).to_ne_bytes()));
    }
    body.resize(body.len().next_multiple_of(8), 0);
    record(types::CPU_MAP, &body)
}

/// EVENT_UPDATE of type NAME: `{u64 type = 1; u64 id; char name[]}` padded to 8.
pub fn event_update_name(id: u64, name: &str) -> Vec<u8> {
    let mut body = 1u64.to_ne_bytes().to_vec();
    body.extend_from_slice(&id.to_ne_bytes());
    body.extend_from_slice(name.as_bytes());
    body.push(0);
    body.resize(body.len().next_multiple_of(8), 0);
    record(types::EVENT_UPDATE, &body)
}

/// FINISHED_INIT: a header alone.
pub fn finished_init() -> Vec<u8> {
    record(types::FINISHED_INIT, &[])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_are_perfs() {
        // perf report -D of perf record 6.1's: "4a 00 00 00 00 00 10 00 02 00 00 00 00 00 01 00".
        assert_eq!(cpu_map(&[0, 1]), [0x4a, 0, 0, 0, 0, 0, 0x10, 0, 2, 0, 0, 0, 0, 0, 1, 0]);
        let p = [Placement { event: 0, id: 7, cpu: 1, task: 42 }];
        let r = &id_index(&p, &[0, 1])[0];
        assert_eq!((r.len(), r[8], r[16], r[24], r[32], r[40]), (48, 1, 7, 1, 1, 42));
        assert_eq!(thread_map(&[-1]).len(), 8 + 8 + 24);
        assert_eq!(event_update_name(5, "cpu-clock:ppp").len(), 8 + 16 + 16);
        assert_eq!(finished_init(), [82, 0, 0, 0, 0, 0, 8, 0]);
    }
}
