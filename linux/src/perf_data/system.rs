//! The feature sections that describe the machine, read from /proc and /sys as perf's
//! `tools/perf/util/header.c` `write_*` functions read them: HOSTNAME, OSRELEASE, VERSION, ARCH,
//! NRCPUS, CPUDESC, CPUID, TOTAL_MEM, CMDLINE and CPU_TOPOLOGY. A value the machine does not
//! give (no /sys topology in a container, say) is left out, as perf leaves out a feature whose
//! `write_*` fails.

use perfring::record::Endian;
use perfring_data::features as f;
use perfring_data::features::Feature;

fn proc_string(path: &str) -> Option<String> {
    Some(std::fs::read_to_string(path).ok()?.trim().to_string())
}

/// `key : value` of the first processor in /proc/cpuinfo.
fn cpuinfo(key: &str) -> Option<String> {
    let text = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    text.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        (k.trim() == key).then(|| v.trim().to_string())
    })
}

/// A CPU list such as `0-3,5` expanded.
fn cpu_list(s: &str) -> Vec<u32> {
    s.trim()
        .split(',')
        .filter_map(|r| match r.split_once('-') {
            Some((a, b)) => Some((a.parse().ok()?..=b.parse().ok()?).collect::<Vec<u32>>()),
            None => Some(vec![r.parse().ok()?]),
        })
        .flatten()
        .collect()
}

/// CPU_TOPOLOGY as perf 6.1 writes it: the distinct core and thread sibling lists, each
/// CPU's `{core_id, socket_id}`, the distinct die lists and each CPU's die id.
fn cpu_topology(endian: Endian, possible: &[u32]) -> Option<Feature> {
    let topo = |cpu: u32, file: &str| proc_string(&format!("/sys/devices/system/cpu/cpu{cpu}/topology/{file}"));
    let (mut cores, mut threads, mut dies) = (Vec::<String>::new(), Vec::<String>::new(), Vec::<String>::new());
    let mut rest = Vec::new();
    let mut die_ids = Vec::new();
    for &cpu in possible {
        let add = |list: &mut Vec<String>, v: Option<String>| {
            if let Some(v) = v {
                if !list.contains(&v) {
                    list.push(v);
                }
            }
        };
        add(&mut cores, topo(cpu, "core_siblings_list").or_else(|| topo(cpu, "package_cpus_list")));
        add(&mut threads, topo(cpu, "thread_siblings_list").or_else(|| topo(cpu, "core_cpus_list")));
        add(&mut dies, topo(cpu, "die_cpus_list"));
        let id = |file: &str| topo(cpu, file).and_then(|s| s.parse::<i32>().ok()).unwrap_or(-1) as u32;
        rest.extend_from_slice(&endian.put_u32(id("core_id")));
        rest.extend_from_slice(&endian.put_u32(id("physical_package_id")));
        die_ids.push(id("die_id"));
    }
    if cores.is_empty() || threads.is_empty() {
        return None;
    }
    if !dies.is_empty() {
        rest.extend_from_slice(&endian.put_u32(dies.len() as u32));
        for d in &dies {
            rest.extend_from_slice(&perfring_data::features::encode_string(d, endian));
        }
        die_ids.iter().for_each(|&d| rest.extend_from_slice(&endian.put_u32(d)));
    }
    Some(Feature::CpuTopology { cores, threads, rest })
}

/// The features perf writes as raw payloads this crate does not type, `(bit, bytes)`:
/// NUMA_TOPOLOGY (`{u32 nr; {u32 node; u64 mem_total, mem_free (kB); str cpus}}` from
/// /sys/devices/system/node), PMU_MAPPINGS (`{u32 nr; {u32 type; str name}}` from
/// /sys/bus/event_source/devices), and BPF_PROG_INFO, BPF_BTF and PMU_CAPS empty (`u32 0`:
/// perf's when it kept no program's info and no PMU has capabilities). A part the machine
/// does not give is left out.
pub fn raw_features(endian: Endian) -> Vec<(u32, Vec<u8>)> {
    let mut out = Vec::new();
    let mut nodes: Vec<u32> = std::fs::read_dir("/sys/devices/system/node")
        .map(|d| d.flatten().filter_map(|e| e.file_name().to_str()?.strip_prefix("node")?.parse().ok()).collect())
        .unwrap_or_default();
    nodes.sort_unstable();
    if !nodes.is_empty() {
        let mut b = endian.put_u32(nodes.len() as u32).to_vec();
        for n in &nodes {
            let meminfo =
                std::fs::read_to_string(format!("/sys/devices/system/node/node{n}/meminfo")).unwrap_or_default();
            let field = |key: &str| {
                meminfo.lines().find_map(|l| {
                    let rest = l.split_once(key)?.1;
                    rest.trim_start_matches(':').trim().strip_suffix("kB")?.trim().parse::<u64>().ok()
                })
            };
            b.extend_from_slice(&endian.put_u32(*n));
            b.extend_from_slice(&endian.put_u64(field("MemTotal").unwrap_or(0)));
            b.extend_from_slice(&endian.put_u64(field("MemFree").unwrap_or(0)));
            let cpus = proc_string(&format!("/sys/devices/system/node/node{n}/cpulist")).unwrap_or_default();
            b.extend_from_slice(&perfring_data::features::encode_string(&cpus, endian));
        }
        out.push((f::NUMA_TOPOLOGY, b));
    }
    let pmus: Vec<(u32, String)> = std::fs::read_dir("/sys/bus/event_source/devices")
        .map(|d| {
            d.flatten()
                .filter_map(|e| {
                    let t = proc_string(&format!("{}/type", e.path().display()))?.parse().ok()?;
                    Some((t, e.file_name().to_str()?.to_string()))
                })
                .collect()
        })
        .unwrap_or_default();
    // In the directory's order, as perf scans it.
    if !pmus.is_empty() {
        let mut b = endian.put_u32(pmus.len() as u32).to_vec();
        for (t, name) in &pmus {
            b.extend_from_slice(&endian.put_u32(*t));
            b.extend_from_slice(&perfring_data::features::encode_string(name, endian));
        }
        out.push((f::PMU_MAPPINGS, b));
    }
    if let Some(b) = mem_topology(endian, &nodes) {
        out.push((f::MEM_TOPOLOGY, b));
    }
    for bit in [f::BPF_PROG_INFO, f::BPF_BTF, f::PMU_CAPS] {
        out.push((bit, endian.put_u32(0).to_vec()));
    }
    out
}

/// MEM_TOPOLOGY as perf's `write_mem_topology`: `{u64 version = 1; u64 block_size; u64 nr;
/// {u64 node; u64 size; u64 nbits; u64 bitmap[]}[nr]}`, each node's bitmap marking the
/// memory blocks (/sys/devices/system/node/nodeN/memoryX) it holds, `size` the highest
/// block number + 1.
fn mem_topology(endian: Endian, nodes: &[u32]) -> Option<Vec<u8>> {
    let block = u64::from_str_radix(&proc_string("/sys/devices/system/memory/block_size_bytes")?, 16).ok()?;
    let mut b = endian.put_u64(1).to_vec();
    b.extend_from_slice(&endian.put_u64(block));
    b.extend_from_slice(&endian.put_u64(nodes.len() as u64));
    for &n in nodes {
        let blocks: Vec<u64> = std::fs::read_dir(format!("/sys/devices/system/node/node{n}"))
            .ok()?
            .flatten()
            .filter_map(|e| e.file_name().to_str()?.strip_prefix("memory")?.parse().ok())
            .collect();
        let size = blocks.iter().max().map_or(0, |m| m + 1);
        let mut words = vec![0u64; size.div_ceil(64) as usize];
        for &x in &blocks {
            words[(x / 64) as usize] |= 1 << (x % 64);
        }
        b.extend_from_slice(&endian.put_u64(u64::from(n)));
        b.extend_from_slice(&endian.put_u64(size));
        b.extend_from_slice(&endian.put_u64(size));
        words.iter().for_each(|w| b.extend_from_slice(&endian.put_u64(*w)));
    }
    Some(b)
}

/// The machine's features as `(bit, value)`, for a file written in `endian` by a program
/// called with `cmdline`.
pub fn system_features(endian: Endian, cmdline: &[String]) -> Vec<(u32, Feature)> {
    let mut out = Vec::new();
    let mut put = |bit: u32, v: Option<Feature>| {
        if let Some(v) = v {
            out.push((bit, v));
        }
    };
    put(f::HOSTNAME, proc_string("/proc/sys/kernel/hostname").map(Feature::String));
    put(f::OSRELEASE, proc_string("/proc/sys/kernel/osrelease").map(Feature::String));
    put(f::VERSION, Some(Feature::String(format!("perfring {}", env!("CARGO_PKG_VERSION")))));
    put(f::ARCH, Some(Feature::String(std::env::consts::ARCH.to_string())));
    let possible = proc_string("/sys/devices/system/cpu/possible").map(|s| cpu_list(&s)).unwrap_or_default();
    let online = proc_string("/sys/devices/system/cpu/online").map(|s| cpu_list(&s)).unwrap_or_default();
    if !possible.is_empty() {
        put(f::NRCPUS, Some(Feature::NrCpus { available: possible.len() as u32, online: online.len() as u32 }));
    }
    put(f::CPUDESC, cpuinfo("model name").or_else(|| cpuinfo("cpu model")).map(Feature::String));
    // x86's form (`vendor,family,model,stepping`, what perf's get_cpuid prints); elsewhere
    // the CPU's own identification line, where /proc/cpuinfo has one.
    let cpuid = match (cpuinfo("vendor_id"), cpuinfo("cpu family"), cpuinfo("model"), cpuinfo("stepping")) {
        (Some(v), Some(fam), Some(m), Some(s)) => Some(format!("{v},{fam},{m},{s}")),
        _ => cpuinfo("CPU implementer").zip(cpuinfo("CPU part")).map(|(i, p)| format!("{i},{p}")),
    };
    put(f::CPUID, cpuid.map(Feature::String));
    let mem = std::fs::read_to_string("/proc/meminfo").ok().and_then(|t| {
        t.lines().find_map(|l| l.strip_prefix("MemTotal:")?.trim().strip_suffix("kB")?.trim().parse::<u64>().ok())
    });
    put(f::TOTAL_MEM, mem.map(Feature::TotalMem));
    put(f::CMDLINE, Some(Feature::Cmdline(cmdline.to_vec())));
    put(f::CPU_TOPOLOGY, cpu_topology(endian, &possible));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_expand() {
        assert_eq!(cpu_list("0-3,5\n"), vec![0, 1, 2, 3, 5]);
        assert_eq!(cpu_list("7"), vec![7]);
        assert_eq!(cpu_list("x,2"), vec![2]);
    }

    #[test]
    fn this_machine_describes_itself_in_every_feature_perf_report_prints() {
        let feats = system_features(Endian::NATIVE, &["a".into()]);
        let bits: Vec<u32> = feats.iter().map(|(b, _)| *b).collect();
        for bit in [f::HOSTNAME, f::OSRELEASE, f::VERSION, f::ARCH, f::NRCPUS, f::TOTAL_MEM, f::CMDLINE] {
            assert!(bits.contains(&bit), "feature {bit} missing: {bits:?}");
        }
        // Each encodes and decodes back to itself.
        for (bit, v) in &feats {
            let bytes = v.encode(Endian::NATIVE).unwrap();
            assert_eq!(&Feature::parse(*bit, &bytes, Endian::NATIVE).unwrap(), v, "feature {bit}");
        }
    }
}
