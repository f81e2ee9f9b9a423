//! What every library of `make bench-decode` and `make bench-data` reports for a SAMPLE, folded
//! the same way: included by both benches (`#[path]`), so their folds cannot drift apart.

/// The SAMPLE fields every library returns, each `None` when the event does not write it.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Fields {
    pub pid: Option<u32>,
    pub tid: Option<u32>,
    pub time: Option<u64>,
    pub ip: Option<u64>,
    pub period: Option<u64>,
    pub addr: Option<u64>,
    pub id: Option<u64>,
    pub stream_id: Option<u64>,
    pub cpu: Option<u32>,
    pub callchain: Option<usize>,
    pub raw: Option<usize>,
    /// The fields after RAW (perfring reads them through its view, walking what precedes).
    pub phys_addr: Option<u64>,
    pub data_page_size: Option<u64>,
    pub code_page_size: Option<u64>,
    /// REGS_USER's first register; STACK_USER's length.
    pub regs_user: Option<u64>,
    pub stack_user: Option<usize>,
}

/// `acc` plus every field (0 for an absent one).
#[inline(always)]
pub fn fold(acc: u64, f: &Fields) -> u64 {
    let o = |v: Option<u64>| v.unwrap_or(0);
    acc.wrapping_add(o(f.pid.map(u64::from)))
        .wrapping_add(o(f.tid.map(u64::from)))
        .wrapping_add(o(f.time))
        .wrapping_add(o(f.ip))
        .wrapping_add(o(f.period))
        .wrapping_add(o(f.addr))
        .wrapping_add(o(f.id))
        .wrapping_add(o(f.stream_id))
        .wrapping_add(o(f.cpu.map(u64::from)))
        .wrapping_add(o(f.callchain.map(|n| n as u64)))
        .wrapping_add(o(f.raw.map(|n| n as u64)))
        .wrapping_add(o(f.phys_addr))
        .wrapping_add(o(f.data_page_size))
        .wrapping_add(o(f.code_page_size))
        .wrapping_add(o(f.regs_user))
        .wrapping_add(o(f.stack_user.map(|n| n as u64)))
}

/// Every field of a perfring view, each through its accessor whatever the event writes.
#[inline(always)]
#[allow(dead_code)]
pub fn of_view(v: &perfring::record::SampleView<'_>) -> Fields {
    let pt = v.tid();
    Fields {
        pid: pt.map(|p| p.pid),
        tid: pt.map(|p| p.tid),
        time: v.time(),
        ip: v.ip(),
        period: v.period(),
        addr: v.addr(),
        // perf's `sample->id`: IDENTIFIER if the event writes it, else ID.
        id: v.identifier().or_else(|| v.id()),
        stream_id: v.stream_id(),
        cpu: v.cpu().map(|c| c.cpu),
        callchain: v.callchain().ok().flatten().map(|c| c.len()),
        raw: v.raw().ok().flatten().map(<[u8]>::len),
        phys_addr: v.phys_addr().ok().flatten(),
        data_page_size: v.data_page_size().ok().flatten(),
        code_page_size: v.code_page_size().ok().flatten(),
        regs_user: v.regs_user().ok().flatten().and_then(|r| r.regs.get(0)),
        stack_user: v.stack_user().ok().flatten().map(|s| s.data.len()),
    }
}

/// A linux-perf-event-reader SAMPLE's fields (`regs_mask`: its event's `sample_regs_user`, for
/// the same first register the others give).
#[inline(always)]
#[allow(dead_code)]
pub fn of_lper(s: &linux_perf_event_reader::SampleRecord<'_>, regs_mask: u64) -> Fields {
    Fields {
        pid: s.pid.map(|p| p as u32),
        tid: s.tid.map(|t| t as u32),
        time: s.timestamp,
        ip: s.ip,
        period: s.period,
        addr: s.addr,
        id: s.id,
        stream_id: s.stream_id,
        cpu: s.cpu,
        callchain: s.callchain.map(|c| c.len()),
        raw: s.raw.map(|r| r.len()),
        phys_addr: s.phys_addr,
        data_page_size: s.data_page_size,
        code_page_size: s.code_page_size,
        regs_user: s.user_regs.as_ref().and_then(|r| r.get(u64::from(regs_mask.trailing_zeros()))),
        stack_user: s.user_stack.map(|(d, _)| d.len()),
    }
}
