//! Where a [`Session`](crate::Session)'s rings are and how they are read: a plan per ring (a
//! CPU's, or a task's own with [`ANY_CPU`]), the events opened onto them, and the CPUs each
//! ring is read on ([`Affinity`]).

use std::os::fd::AsFd;

use perfring::record::{Endian, EventLayout, EventSet, IdEntry};

use crate::cgroup::Cgroup;
use crate::error::{io as io_err, LinuxError};
use crate::event::{Event, Target};
use crate::ring::Ring;
use crate::{sys, EventAttr};

/// Where [`Session::drain`](crate::Session::drain) reads each ring from (perf record's `--affinity`): the calling
/// thread is moved before it reads a ring whose CPU differs from the last one's.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Affinity {
    /// Wherever the scheduler runs it (the default; perf's `sys`).
    #[default]
    Any,
    /// On the ring's CPU (perf's `cpu`), so that the copy reads memory that CPU's cache holds.
    Cpu,
    /// On the CPUs of the ring's NUMA node (perf's `node`): memory local to the writer.
    Node,
}

/// The CPU of a ring that takes its task's records on every CPU ([`SessionBuilder::per_thread`](crate::SessionBuilder::per_thread)):
/// `cpu = -1` to `perf_event_open`, as [`Session::cpus`](crate::Session::cpus) and [`Placement::cpu`](crate::Placement::cpu) give it.
pub const ANY_CPU: u32 = u32::MAX;

/// What a session is made of: the events (per CPU: the ring owner first), a ring per CPU, the
/// event set of the attrs the kernel accepted and every id, an epoll set of the events.
pub(crate) type OpenedParts = (Vec<Opened>, Vec<Ring>, EventSet<Vec<EventLayout>, Vec<IdEntry>>, sys::Epoll);

/// One ring and where its events are opened: its CPU ([`ANY_CPU`] for a task's own ring), and
/// each task with its target.
pub(crate) struct RingPlan {
    pub(crate) cpu: u32,
    targets: Vec<(i32, Target)>,
}

/// A ring per CPU, taking every task's events on that CPU (a task of -1: every task).
pub(crate) fn per_cpu(tasks: &[i32], cpus: &[u32]) -> Vec<RingPlan> {
    let target = |task: i32, cpu: u32| if task < 0 { Target::Cpu(cpu) } else { Target::TaskOnCpu(task, cpu) };
    cpus.iter().map(|&cpu| RingPlan { cpu, targets: tasks.iter().map(|&t| (t, target(t, cpu))).collect() }).collect()
}

/// A ring per task, its events on any CPU.
pub(crate) fn per_task(tasks: &[i32]) -> Vec<RingPlan> {
    tasks.iter().map(|&t| RingPlan { cpu: ANY_CPU, targets: vec![(t, Target::Task(t))] }).collect()
}

/// Open each of `attrs` for each ring's targets (attr `i` for the tasks of `cgroups[i]` alone
/// where one is given); one ring of `data_pages` per plan, the first event of the plan owning
/// it and the others pointed at it; `overwrite`: the rings mapped read-only and the events
/// watched for hang-ups only.
pub(crate) fn open_events(
    attrs: &[EventAttr],
    leaders: &[Option<usize>],
    cgroups: &[Option<&Cgroup>],
    plans: &[RingPlan],
    data_pages: usize,
    overwrite: bool,
) -> Result<OpenedParts, LinuxError> {
    let mut events: Vec<Opened> = Vec::new();
    let mut rings = Vec::new();
    let epoll = sys::Epoll::new().map_err(io_err("epoll_create1"))?;
    for (ring, plan) in plans.iter().enumerate() {
        let (owner, cpu) = (events.len(), plan.cpu);
        for &(task, target) in &plan.targets {
            let first = events.len();
            for (index, attr) in attrs.iter().enumerate() {
                let group = leaders.get(index).copied().flatten().map(|l| &events[first + l].event);
                let cgroup = cgroups.get(index).copied().flatten();
                let event = Event::open_in(attr, target, cgroup, group).map_err(|error| LinuxError::OpenEvent {
                    event: index,
                    cpu,
                    error: Box::new(error),
                })?;
                if events.len() == owner {
                    rings.push(Ring::map(&event, data_pages, !overwrite)?);
                } else {
                    event.set_output(Some(&events[owner].event))?;
                }
                epoll.add_watching(event.as_fd(), events.len() as u64, !overwrite).map_err(io_err("epoll_ctl"))?;
                events.push(Opened { event, index, hung_up: false, cpu, task, ring });
            }
        }
    }
    // Each event's attr as the kernel accepted it (its size may be the kernel's), with the
    // flags the scope set, and every id it was given.
    // Twice the ids: the set's hash table then finds an id at its first slot.
    let mut set = EventSet::new(vec![EventLayout::EMPTY; attrs.len()], vec![IdEntry::EMPTY; 2 * events.len()]);
    for (index, attr) in attrs.iter().enumerate() {
        let first = events.iter().find(|o| o.index == index).map_or(attr.attr(), |o| o.event.attr());
        set.add_event(first, Endian::NATIVE).map_err(LinuxError::EventSet)?;
    }
    for o in &events {
        set.add_id(o.index, o.event.id()).map_err(LinuxError::EventSet)?;
    }
    Ok((events, rings, set, epoll))
}

/// One event of a session: the open event, its index in the builder, whether it hung up.
#[derive(Debug)]
pub(crate) struct Opened {
    pub(crate) event: Event,
    pub(crate) index: usize,
    pub(crate) hung_up: bool,
    pub(crate) cpu: u32,
    pub(crate) task: i32,
    /// The ring its records go to (an index into the session's rings).
    pub(crate) ring: usize,
}

/// Before reading ring `ring`: move this thread to the ring's CPUs (`affinity[ring]`; empty:
/// stay) unless it was last moved to the same set.
pub(crate) fn move_for(affinity: &[Vec<u32>], moved_for: &mut Option<usize>, ring: usize) -> Result<(), LinuxError> {
    let Some(cpus) = affinity.get(ring).filter(|c| !c.is_empty()) else { return Ok(()) };
    if moved_for.is_some_and(|m| affinity.get(m) == Some(cpus)) {
        return Ok(());
    }
    sys::set_affinity(cpus).map_err(io_err("sched_setaffinity"))?;
    *moved_for = Some(ring);
    Ok(())
}

/// Each NUMA node's CPUs (`/sys/devices/system/node/nodeN/cpulist`); none where sysfs has no
/// nodes.
pub(crate) fn numa_nodes() -> Vec<Vec<u32>> {
    let Ok(dir) = std::fs::read_dir("/sys/devices/system/node") else { return Vec::new() };
    let nodes = dir.flatten().filter(|e| {
        let name = e.file_name();
        name.to_str().and_then(|n| n.strip_prefix("node")).is_some_and(|n| n.parse::<u32>().is_ok())
    });
    nodes
        .filter_map(|e| std::fs::read_to_string(e.path().join("cpulist")).ok())
        .filter_map(|list| crate::event::parse_cpu_list(list.trim()))
        .collect()
}

/// The threads of a running process (`/proc/PID/task`): [`LinuxError::NoSuchProcess`] if it
/// has none (absent, or exited meanwhile).
pub(crate) fn threads_of(pid: i32) -> Result<Vec<i32>, LinuxError> {
    let dir = match std::fs::read_dir(format!("/proc/{pid}/task")) {
        Ok(dir) => dir,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(LinuxError::NoSuchProcess { pid }),
        Err(e) => return Err(io_err("reading /proc/PID/task")(e)),
    };
    let mut tids: Vec<i32> = dir.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect();
    if tids.is_empty() {
        return Err(LinuxError::NoSuchProcess { pid });
    }
    tids.sort_unstable();
    Ok(tids)
}
