//! A model of the Linux kernel's perf ring-buffer write path, as of v6.1.172, for the findings
//! of `docs/kernel-findings.md`: each finding's reproducer runs a scenario on this model once as
//! the kernel has it ([`Patches::AS_RELEASED`]) and once with the proposed patch
//! ([`Patches::PROPOSED`]), and checks the property the patch restores.
//!
//! The model follows `kernel/events/ring_buffer.c` of v6.1.172 statement by statement where a
//! finding depends on it (line numbers in the comments are that file's, unless another file is
//! named), and leaves out what none of them depends on: the data pages are one contiguous array
//! (the kernel walks page by page with `handle->page`/`handle->size`; the byte positions are the
//! same), there is one event and no `sample_id_all`, and `local_t` is a plain field, since every
//! writer of one buffer runs on one CPU (KERNEL-NOTES §0.2). Interrupts are explicit: a writer
//! calls the caller's [`Interrupt`] at each [`Window`] the kernel leaves open, and the caller may
//! write nested records from there, exactly as an IRQ or NMI on that CPU would.
//!
//! It is a test model, not perfring's producer: perfring's own behaviour in the same situations is
//! tested beside the code it concerns (`core/src/producer.rs` and its tests).

/// Which proposed patches the model applies (each field: `true` = patched).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Patches {
    /// Finding 1: the watermark stamp compared signed, `(long)(head - wakeup) > watermark`.
    pub signed_watermark: bool,
    /// Finding 2: in overwrite mode, a writer whose record would put more than the data size in
    /// flight (since the last published `data_head`) fails and counts a loss.
    pub overwrite_in_flight: bool,
    /// Finding 3: a `data_tail` a full ring or more behind `head` (or ahead of it) is no space.
    pub tail_in_range: bool,
    /// Finding 4: skipped bytes (`perf_output_skip`, `__output_skip`) are zeroed.
    pub zero_skipped: bool,
    /// Finding 5, already fixed upstream: `true` models the `perf_output_put_handle` order of
    /// kernels before commit 1b038c6e05ff (nest decremented before `data_head` is stored).
    pub legacy_put_handle: bool,
}

impl Patches {
    /// The kernel as released (v6.1.172): no patch applied.
    pub const AS_RELEASED: Patches = Patches {
        signed_watermark: false,
        overwrite_in_flight: false,
        tail_in_range: false,
        zero_skipped: false,
        legacy_put_handle: false,
    };
    /// Every proposed patch applied.
    pub const PROPOSED: Patches = Patches {
        signed_watermark: true,
        overwrite_in_flight: true,
        tail_in_range: true,
        zero_skipped: true,
        legacy_put_handle: false,
    };
}

/// A point at which the kernel's writer can be interrupted by a nested writer on its CPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Window {
    /// `__perf_output_begin`, after the `local_cmpxchg` that reserved the record (line 220) and
    /// before the watermark check (line 233).
    AfterReserve,
    /// While the record's payload is being copied (`perf_output_copy`, between two copies).
    InPayload,
    /// `perf_output_put_handle`, after the outermost writer loaded `rb->head` (v6.1.172 line 76;
    /// "IRQ/NMI can happen here and advance @rb->head").
    AfterHeadLoad,
    /// `perf_output_put_handle`, where `rb->nest` has just become 0: in v6.1.172 after the
    /// `data_head` store and `WRITE_ONCE(rb->nest, 0)` (line 118), before the re-check; in the
    /// legacy order after `local_dec_and_test(&rb->nest)`, before the store.
    AfterNestCleared,
}

/// The caller's interrupt handler: called at every [`Window`]; it may write nested records.
pub type Interrupt<'a> = &'a mut dyn FnMut(&mut Rb, Window);

/// An interrupt handler that never fires.
pub fn no_interrupt(_: &mut Rb, _: Window) {}

/// `struct perf_buffer` and the two words of `struct perf_event_mmap_page` the findings touch.
#[derive(Debug, Clone)]
pub struct Rb {
    /// The data pages, as one array of `data_size` bytes.
    pub data: Vec<u8>,
    /// `rb->head` (`local_t`): the reservation head, in bytes written (backward: decreasing).
    pub head: u64,
    /// `rb->wakeup` (`local_t`): the wakeup stamp.
    pub wakeup: u64,
    /// `rb->watermark`.
    pub watermark: u64,
    /// `rb->nest`.
    pub nest: u32,
    /// `rb->lost` (`local_t`): records dropped and not yet reported by a PERF_RECORD_LOST.
    pub lost: u64,
    /// `rb->overwrite`: the mapping is read-only, the kernel never reads `data_tail`.
    pub overwrite: bool,
    /// The event writes backward (`attr.write_backward`).
    pub backward: bool,
    /// `user_page->data_head`.
    pub data_head: u64,
    /// `user_page->data_tail` (written by user space).
    pub data_tail: u64,
    /// Every value stored to `data_head`, in order.
    pub published: Vec<u64>,
    /// Calls of `perf_output_wakeup` (each queues an irq_work that wakes the reader).
    pub wakeups: u64,
    /// Records dropped in all (`rb->lost` increments; `event->lost_samples`).
    pub lost_total: u64,
    /// The patches applied.
    pub patches: Patches,
}

/// `struct perf_output_handle`, reduced to what the model needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Handle {
    /// `handle->wakeup`: the stamp when the writer entered (line 47).
    pub wakeup: u64,
    /// Absolute position of the next byte to write (`handle->addr`, unmasked).
    pub at: u64,
    /// Bytes of the reservation not yet written.
    pub left: u64,
}

/// `-ENOSPC` from `__perf_output_begin`: the record was dropped and counted in `rb->lost`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoSpace;

/// `PERF_RECORD_LOST`, as `__perf_output_begin` writes it (no `sample_id_all`).
pub const RECORD_LOST: u32 = 2;
/// `PERF_RECORD_SAMPLE`.
pub const RECORD_SAMPLE: u32 = 9;
/// Size of the LOST record `__perf_output_begin` prepends (lines 156-160).
pub const LOST_SIZE: u64 = 24;

impl Rb {
    /// `rb_alloc` + `ring_buffer_init` (lines 310-330): a data area of `data_size` bytes (a power of
    /// two), the given watermark (0: half the area, line 318), overwrite when the mapping is
    /// read-only.
    pub fn new(data_size: usize, watermark: u64, overwrite: bool, backward: bool, patches: Patches) -> Rb {
        assert!(data_size.is_power_of_two());
        let max = data_size as u64;
        Rb {
            data: vec![0; data_size],
            head: 0,
            wakeup: 0,
            watermark: if watermark == 0 { max / 2 } else { watermark.min(max) },
            nest: 0,
            lost: 0,
            overwrite,
            backward,
            data_head: 0,
            data_tail: 0,
            published: Vec::new(),
            wakeups: 0,
            lost_total: 0,
            patches,
        }
    }

    fn size(&self) -> u64 {
        self.data.len() as u64
    }

    /// `ring_buffer_has_space` (lines 137-146) and, patched, finding 3's range check.
    fn has_space(&self, head: u64, tail: u64, size: u64) -> bool {
        let data_size = self.size();
        // CIRC_SPACE(head, tail, size) = (tail - (head + 1)) & (size - 1)  (include/linux/circ_buf.h)
        let circ_space = |h: u64, t: u64| t.wrapping_sub(h.wrapping_add(1)) & (data_size - 1);
        let (h, t) = if self.backward { (tail, head) } else { (head, tail) };
        if self.patches.tail_in_range && h.wrapping_sub(t) >= data_size {
            return false;
        }
        circ_space(h, t) >= size
    }

    /// `perf_output_get_handle` (lines 36-48).
    fn get_handle(&mut self) -> u64 {
        self.nest += 1;
        self.wakeup
    }

    /// `perf_output_put_handle`: v6.1.172 (lines 50-132), or the order before 1b038c6e05ff.
    fn put_handle(&mut self, handle_wakeup: u64, irq: Interrupt<'_>) {
        if self.patches.legacy_put_handle {
            return self.put_handle_legacy(handle_wakeup, irq);
        }
        // Lines 60-64: not the outermost writer: leave publishing to it.
        if self.nest > 1 {
            self.nest -= 1;
            return;
        }
        loop {
            // Line 76: `head = local_read(&rb->head)`.
            let head = self.head;
            irq(self, Window::AfterHeadLoad);
            // Lines 104-105: smp_wmb() (B), then the store of data_head.
            self.data_head = head;
            self.published.push(head);
            // Line 118: `WRITE_ONCE(rb->nest, 0)`, after the store.
            self.nest = 0;
            irq(self, Window::AfterNestCleared);
            // Lines 125-128: a nested writer reserved after our load: publish again.
            if head != self.head {
                self.nest = 1;
                continue;
            }
            break;
        }
        // Lines 130-131.
        if handle_wakeup != self.wakeup {
            self.wakeups += 1;
        }
    }

    /// The `perf_output_put_handle` of kernels before commit 1b038c6e05ff (e.g. torvalds/linux
    /// @018a3166, lines 45-100 of that file): `local_dec_and_test(&rb->nest)` before the store.
    fn put_handle_legacy(&mut self, handle_wakeup: u64, irq: Interrupt<'_>) {
        loop {
            let head = self.head;
            irq(self, Window::AfterHeadLoad);
            self.nest -= 1;
            if self.nest != 0 {
                return;
            }
            // nest is 0 here: an interrupt's writer is an outermost writer and publishes its
            // newer head, which the store below then replaces with this writer's older one.
            irq(self, Window::AfterNestCleared);
            self.data_head = head;
            self.published.push(head);
            if head != self.head {
                self.nest += 1;
                continue;
            }
            break;
        }
        if handle_wakeup != self.wakeup {
            self.wakeups += 1;
        }
    }

    /// `__perf_output_begin` (lines 149-263) for a record of `size` bytes.
    pub fn output_begin(&mut self, size: u64, irq: Interrupt<'_>) -> Result<Handle, NoSpace> {
        let data_size = self.size();
        let mut size = size;
        // Lines 183-188: a pending loss is reported first, in the same reservation.
        let have_lost = self.lost;
        if have_lost != 0 {
            size += LOST_SIZE;
        }
        let handle_wakeup = self.get_handle(); // line 193
        let (offset, head) = loop {
            // Lines 196-219.
            let tail = self.data_tail;
            let offset = self.head;
            if !self.overwrite && !self.has_space(offset, tail, size) {
                return self.fail(handle_wakeup, irq);
            }
            let head = if self.backward { offset.wrapping_sub(size) } else { offset.wrapping_add(size) };
            // Finding 2's patch: the data in flight since the last published head (the outermost
            // writer's start) must fit in the ring, or the late writes of an interrupted writer
            // land on the nested writers' records.
            if self.overwrite && self.patches.overwrite_in_flight {
                let in_flight =
                    if self.backward { self.data_head.wrapping_sub(head) } else { head.wrapping_sub(self.data_head) };
                if in_flight > data_size {
                    return self.fail(handle_wakeup, irq);
                }
            }
            // Line 220: local_cmpxchg. (One CPU: it succeeds unless an interrupt moved head,
            // which in this model happens only at the windows, never inside this loop.)
            if self.head == offset {
                self.head = head;
                break (offset, head);
            }
        };
        irq(self, Window::AfterReserve);
        // Lines 222-225: the record occupies [head, head + size) when writing backward.
        let (start, written) = if self.backward { (head, head.wrapping_neg()) } else { (offset, head) };
        // Lines 233-234: the watermark stamp.
        let diff = written.wrapping_sub(self.wakeup);
        let cross =
            if self.patches.signed_watermark { (diff as i64) > self.watermark as i64 } else { diff > self.watermark };
        if cross {
            self.wakeup = self.wakeup.wrapping_add(self.watermark);
        }
        let mut h = Handle { wakeup: handle_wakeup, at: start, left: size };
        // Lines 243-253: the pending LOST record.
        if have_lost != 0 {
            let lost = std::mem::take(&mut self.lost);
            let mut r = header(RECORD_LOST, LOST_SIZE).to_vec();
            r.extend_from_slice(&0u64.to_ne_bytes()); // id
            r.extend_from_slice(&lost.to_ne_bytes());
            self.store(&mut h, &r);
        }
        Ok(h)
    }

    /// Lines 257-262: `fail:` counts the loss and releases the handle.
    fn fail(&mut self, handle_wakeup: u64, irq: Interrupt<'_>) -> Result<Handle, NoSpace> {
        self.lost += 1;
        self.lost_total += 1;
        self.put_handle(handle_wakeup, irq);
        Err(NoSpace)
    }

    fn store(&mut self, h: &mut Handle, bytes: &[u8]) {
        let mask = self.size() - 1;
        for &b in bytes {
            self.data[(h.at & mask) as usize] = b;
            h.at = h.at.wrapping_add(1);
        }
        h.left = h.left.saturating_sub(bytes.len() as u64);
    }

    /// `perf_output_copy` (lines 291-295). The interrupt window is before the copy.
    pub fn output_copy(&mut self, h: &mut Handle, bytes: &[u8], irq: Interrupt<'_>) {
        irq(self, Window::InPayload);
        self.store(h, bytes);
    }

    /// `perf_output_skip` (lines 297-301): `__output_skip` advances over `n` bytes without
    /// writing them (`memcpy_skip`, kernel/events/internal.h:186-190); patched, they are zeroed.
    pub fn output_skip(&mut self, h: &mut Handle, n: u64) {
        if self.patches.zero_skipped {
            self.store(h, &vec![0; n as usize]);
        } else {
            h.at = h.at.wrapping_add(n);
            h.left = h.left.saturating_sub(n);
        }
    }

    /// `perf_output_end` (lines 303-307).
    pub fn output_end(&mut self, h: Handle, irq: Interrupt<'_>) {
        self.put_handle(h.wakeup, irq);
    }

    /// One whole record: begin, copy its header and its body (an interrupt window before each),
    /// end. Returns whether it was written.
    pub fn write(&mut self, record: &[u8], irq: Interrupt<'_>) -> bool {
        let Ok(mut h) = self.output_begin(record.len() as u64, irq) else { return false };
        self.output_copy(&mut h, &record[..8], irq);
        self.output_copy(&mut h, &record[8..], irq);
        self.output_end(h, irq);
        true
    }

    /// The `len` bytes at absolute position `at` (wrapping).
    pub fn read(&self, at: u64, len: u64) -> Vec<u8> {
        let mask = self.size() - 1;
        (0..len).map(|i| self.data[(at.wrapping_add(i) & mask) as usize]).collect()
    }
}

/// `struct perf_event_header` {type u32, misc u16, size u16}, native order.
pub fn header(type_: u32, size: u64) -> [u8; 8] {
    let mut h = [0u8; 8];
    h[..4].copy_from_slice(&type_.to_ne_bytes());
    h[6..].copy_from_slice(&(size as u16).to_ne_bytes());
    h
}

/// A SAMPLE record of `len` bytes (≥ 16, a multiple of 8) whose every body byte derives from
/// `seq`, so that a torn or overwritten record is recognised.
pub fn sample(seq: u64, len: u64) -> Vec<u8> {
    let mut r = header(RECORD_SAMPLE, len).to_vec();
    r.extend_from_slice(&seq.to_ne_bytes());
    r.extend((0..len - 16).map(|i| (seq as u8).wrapping_mul(37).wrapping_add(i as u8) | 1));
    r
}

/// Parse the record at `at`: `Ok(seq)` for an intact [`sample`], `Err` naming what is wrong.
pub fn check_sample(rb: &Rb, at: u64) -> Result<(u64, u64), String> {
    let h = rb.read(at, 8);
    let type_ = u32::from_ne_bytes(h[..4].try_into().unwrap());
    let size = u64::from(u16::from_ne_bytes(h[6..8].try_into().unwrap()));
    if type_ != RECORD_SAMPLE || size < 16 || size % 8 != 0 {
        return Err(format!("at {}: header type {type_} size {size} is not a sample's", at as i64));
    }
    let seq = u64::from_ne_bytes(rb.read(at.wrapping_add(8), 8).try_into().unwrap());
    if rb.read(at, size) != sample(seq, size) {
        return Err(format!("at {}: sample {seq} ({size} bytes) is torn", at as i64));
    }
    Ok((seq, size))
}

/// Finding 1. Watermark 1024 bytes. 125 records of 8 bytes bring `head` to 1000. The next writer
/// reserves [1000, 1008); between its `local_cmpxchg` and its watermark check an interrupt writes
/// a 32-byte record [1008, 1040), which crosses 1024 and moves the stamp to 1024. The outer
/// writer's check then computes 1008 - 1024. Then 100 more 8-byte records (head 1840).
///
/// Property: the reader is woken once per watermark of data (here: once, at the crossing).
pub fn check_watermark(patches: Patches) -> Result<(), String> {
    let mut rb = Rb::new(4096, 1024, false, false, patches);
    for _ in 0..125 {
        rb.write(&header(RECORD_SAMPLE, 8), &mut no_interrupt);
    }
    let mut nested = Some(sample(999, 32));
    rb.write(&header(RECORD_SAMPLE, 8), &mut |rb: &mut Rb, w| {
        if w == Window::AfterReserve {
            if let Some(r) = nested.take() {
                rb.write(&r, &mut no_interrupt);
            }
        }
    });
    for _ in 0..100 {
        rb.write(&header(RECORD_SAMPLE, 8), &mut no_interrupt);
    }
    let written = rb.head;
    let expected = written / rb.watermark;
    if rb.wakeups > expected {
        return Err(format!(
            "{} wakeups for {written} bytes at a watermark of {} (at most {expected} expected); the stamp is at {}, {} bytes ahead of head",
            rb.wakeups,
            rb.watermark,
            rb.wakeup,
            rb.wakeup.wrapping_sub(written) as i64
        ));
    }
    Ok(())
}

/// Finding 2, first case: an overwrite (read-only) backward ring of 4096 bytes and one record of
/// 4352 bytes, larger than the ring (a sample with a user stack dump, say), after 4 records of
/// 512 bytes.
///
/// Property: reading back from `data_head`, as a flight-recorder reader does, finds intact
/// records only.
pub fn check_overwrite_record_larger_than_ring(patches: Patches) -> Result<(), String> {
    let mut rb = Rb::new(4096, 0, true, true, patches);
    for i in 0..4 {
        rb.write(&sample(i, 512), &mut no_interrupt);
    }
    rb.write(&sample(100, 4352), &mut no_interrupt);
    read_backward_ring(&rb).map(|_| ())
}

/// Finding 2, second case: an overwrite backward ring of 4096 bytes. A writer reserves 1024
/// bytes; before it copies its payload an interrupt writes three 1536-byte records (5632 bytes in
/// flight, the last of them over the bytes the interrupted writer reserved). The interrupted
/// writer then copies its payload.
///
/// Property: reading back from `data_head` finds intact records only.
pub fn check_overwrite_nested_in_flight(patches: Patches) -> Result<(), String> {
    let mut rb = Rb::new(4096, 0, true, true, patches);
    let mut burst = true;
    rb.write(&sample(1, 1024), &mut |rb: &mut Rb, w| {
        if w == Window::InPayload && std::mem::take(&mut burst) {
            for i in 0..3 {
                rb.write(&sample(10 + i, 1536), &mut no_interrupt);
            }
        }
    });
    read_backward_ring(&rb).map(|_| ())
}

/// Read a backward ring from `data_head` for at most one data size, as perf's
/// `perf_mmap__read_backward` does: every record must be intact. Returns the sequence numbers.
pub fn read_backward_ring(rb: &Rb) -> Result<Vec<u64>, String> {
    let mut at = rb.data_head;
    let mut seqs = Vec::new();
    let end = rb.data_head.wrapping_add(rb.data.len() as u64);
    // Positions at or past `end - 8` cannot hold a whole header of this lap.
    while end.wrapping_sub(at) >= 16 {
        let h = rb.read(at, 8);
        let size = u64::from(u16::from_ne_bytes(h[6..8].try_into().unwrap()));
        if h.iter().all(|&b| b == 0) {
            break; // never written
        }
        if size < 8 || size % 8 != 0 || size > rb.data.len() as u64 {
            return Err(format!(
                "at {}: header size {size} cannot be a record's in a {}-byte ring",
                at as i64,
                rb.data.len()
            ));
        }
        if end.wrapping_sub(at) < size {
            break; // a record cut by the end of this lap: the reader stops before it
        }
        let (seq, size) = check_sample(rb, at)?;
        seqs.push(seq);
        at = at.wrapping_add(size);
    }
    Ok(seqs)
}

/// Finding 3. A forward ring of 4096 bytes; 2048 bytes written and none read. The consumer then
/// stores a `data_tail` 3072 bytes ahead of `head` (a consumer bug: an offset added twice, a
/// tail from another ring, memory corruption). 80 further 32-byte records.
///
/// Property: unread bytes are never overwritten; a write that does not fit is counted lost.
pub fn check_tail_out_of_range(patches: Patches) -> Result<(), String> {
    let mut rb = Rb::new(4096, 0, false, false, patches);
    for i in 0..64 {
        rb.write(&sample(i, 32), &mut no_interrupt);
    }
    let unread = rb.read(0, 2048);
    rb.data_tail = rb.head + 3072;
    for i in 0..80 {
        rb.write(&sample(100 + i, 32), &mut no_interrupt);
    }
    if rb.read(0, 2048) != unread {
        let changed = rb.read(0, 2048).iter().zip(&unread).filter(|(a, b)| a != b).count();
        return Err(format!(
            "{changed} of the 2048 unread bytes were overwritten, and {} writes were counted lost",
            rb.lost_total
        ));
    }
    if rb.lost_total == 0 {
        return Err("no write was counted lost: the consumer cannot learn its tail is wrong".into());
    }
    Ok(())
}

/// Finding 4. A forward ring of 4096 bytes is filled with 64-byte records and read, so that every
/// byte holds an old record. Then a 64-byte record of which 40 bytes are skipped (a user stack
/// dump that faulted: `perf_output_sample_ustack`, kernel/events/core.c:6884-6887; or the RAW
/// pad, core.c:7260-7261).
///
/// Property: the skipped bytes hold nothing of earlier records.
pub fn check_skipped_bytes(patches: Patches) -> Result<(), String> {
    let mut rb = Rb::new(4096, 0, false, false, patches);
    for i in 0..64 {
        rb.write(&sample(i, 64), &mut no_interrupt);
        rb.data_tail = rb.data_head;
    }
    let mut h = rb.output_begin(64, &mut no_interrupt).map_err(|_| "no space".to_string())?;
    let start = h.at;
    rb.output_copy(&mut h, &header(RECORD_SAMPLE, 64), &mut no_interrupt);
    rb.output_copy(&mut h, &[0; 16], &mut no_interrupt);
    rb.output_skip(&mut h, 40);
    rb.output_end(h, &mut no_interrupt);
    let skipped = rb.read(start + 24, 40);
    let stale = skipped.iter().filter(|&&b| b != 0).count();
    if stale > 0 {
        return Err(format!("{stale} of the 40 skipped bytes hold an earlier record's bytes"));
    }
    Ok(())
}

/// Finding 5 (fixed upstream by 1b038c6e05ff). A forward ring; an outermost writer ending its
/// record is interrupted in `perf_output_put_handle`, once at each window it has there, by an
/// interrupt that writes and ends a record of its own.
///
/// Property: `data_head` never decreases.
pub fn check_data_head_monotonic(patches: Patches) -> Result<(), String> {
    for fire_at in [Window::AfterHeadLoad, Window::AfterNestCleared] {
        let mut rb = Rb::new(4096, 0, false, false, patches);
        rb.write(&sample(0, 32), &mut no_interrupt);
        let mut fired = false;
        rb.write(&sample(1, 32), &mut |rb: &mut Rb, w| {
            if w == fire_at && !fired {
                fired = true;
                rb.write(&sample(2, 32), &mut no_interrupt);
            }
        });
        if let Some(w) = rb.published.windows(2).find(|w| w[1] < w[0]) {
            return Err(format!(
                "interrupted at {fire_at:?}: data_head went back from {} to {} (published: {:?})",
                w[0], w[1], rb.published
            ));
        }
        if rb.data_head != 96 {
            return Err(format!("interrupted at {fire_at:?}: data_head ends at {}, not 96", rb.data_head));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every proposed patch but the one `f` reverts: each reproducer must fail without its own
    /// finding's patch, whatever the others do.
    fn proposed_without(f: fn(&mut Patches)) -> Patches {
        let mut p = Patches::PROPOSED;
        f(&mut p);
        p
    }

    #[test]
    fn finding_1_watermark_stamp_runs_ahead_in_v6_1_and_keeps_pace_patched() {
        let e = check_watermark(Patches::AS_RELEASED).unwrap_err();
        assert!(e.starts_with("101 wakeups for 1840 bytes"), "{e}");
        check_watermark(Patches::PROPOSED).unwrap();
        assert!(check_watermark(proposed_without(|p| p.signed_watermark = false)).is_err());
    }

    #[test]
    fn finding_2_overwrite_record_larger_than_the_ring_tears_itself_in_v6_1_and_is_dropped_patched() {
        let e = check_overwrite_record_larger_than_ring(Patches::AS_RELEASED).unwrap_err();
        assert!(e.contains("cannot be a record's") || e.contains("is not a sample's") || e.contains("torn"), "{e}");
        check_overwrite_record_larger_than_ring(Patches::PROPOSED).unwrap();
        assert!(check_overwrite_record_larger_than_ring(proposed_without(|p| p.overwrite_in_flight = false)).is_err());
        // Patched, the large record is counted lost and the four before it are still readable.
        let mut rb = Rb::new(4096, 0, true, true, Patches::PROPOSED);
        for i in 0..4 {
            rb.write(&sample(i, 512), &mut no_interrupt);
        }
        assert!(!rb.write(&sample(100, 4352), &mut no_interrupt));
        assert_eq!((rb.lost_total, read_backward_ring(&rb).unwrap()), (1, vec![3, 2, 1, 0]));
    }

    #[test]
    fn finding_2_overwrite_nested_data_beyond_the_ring_tears_records_in_v6_1_and_is_dropped_patched() {
        let e = check_overwrite_nested_in_flight(Patches::AS_RELEASED).unwrap_err();
        assert!(e.contains("torn") || e.contains("is not a sample's"), "{e}");
        check_overwrite_nested_in_flight(Patches::PROPOSED).unwrap();
        assert!(check_overwrite_nested_in_flight(proposed_without(|p| p.overwrite_in_flight = false)).is_err());
    }

    #[test]
    fn finding_3_tail_ahead_of_head_lets_v6_1_overwrite_unread_data_silently_and_is_refused_patched() {
        let e = check_tail_out_of_range(Patches::AS_RELEASED).unwrap_err();
        assert!(e.contains("unread bytes were overwritten, and 0 writes were counted lost"), "{e}");
        check_tail_out_of_range(Patches::PROPOSED).unwrap();
        assert!(check_tail_out_of_range(proposed_without(|p| p.tail_in_range = false)).is_err());
        // The range check costs an honest consumer nothing: the fullest state the kernel allows
        // (data_size - 8 unread, CIRC_SPACE keeps one byte) is accepted by both.
        for patches in [Patches::AS_RELEASED, Patches::PROPOSED] {
            let mut rb = Rb::new(4096, 0, false, false, patches);
            let mut n = 0;
            while rb.write(&sample(n, 64), &mut no_interrupt) {
                n += 1;
            }
            assert_eq!((n, rb.head - rb.data_tail), (63, 4032));
            // The failed write left a loss pending: the next record carries a 24-byte LOST.
            rb.data_tail = rb.head.wrapping_sub(4056);
            assert!(rb.write(&header(RECORD_SAMPLE, 8), &mut no_interrupt));
            assert_eq!(rb.head.wrapping_sub(rb.data_tail), 4088, "the fullest state: data_size - 8 unread");
        }
    }

    #[test]
    fn finding_4_skipped_bytes_keep_earlier_records_in_v6_1_and_are_zeroed_patched() {
        let e = check_skipped_bytes(Patches::AS_RELEASED).unwrap_err();
        assert!(e.ends_with("of the 40 skipped bytes hold an earlier record's bytes"), "{e}");
        check_skipped_bytes(Patches::PROPOSED).unwrap();
        assert!(check_skipped_bytes(proposed_without(|p| p.zero_skipped = false)).is_err());
    }

    #[test]
    fn finding_5_legacy_put_handle_publishes_a_decreasing_data_head_and_v6_1_does_not() {
        let legacy = Patches { legacy_put_handle: true, ..Patches::AS_RELEASED };
        let e = check_data_head_monotonic(legacy).unwrap_err();
        assert!(
            e.starts_with(
                "interrupted at AfterNestCleared: data_head went back from 96 to 64 (published: [32, 96, 64, 96])"
            ),
            "{e}"
        );
        check_data_head_monotonic(Patches::AS_RELEASED).unwrap();
    }

    #[test]
    fn the_model_without_interrupts_is_a_plain_ring() {
        // Forward, writable: records round-trip, the stamp wakes once per watermark, a full ring
        // drops and reports the loss in the next record's LOST, data_head is monotonic.
        let mut rb = Rb::new(1024, 256, false, false, Patches::AS_RELEASED);
        for i in 0..31 {
            assert!(rb.write(&sample(i, 32), &mut no_interrupt));
        }
        assert_eq!((rb.head, rb.wakeups), (992, 3));
        assert!(!rb.write(&sample(31, 64), &mut no_interrupt), "992 + 64 > 1023");
        rb.data_tail = rb.head;
        assert!(rb.write(&sample(32, 32), &mut no_interrupt));
        let lost = rb.read(992, 24);
        assert_eq!(u32::from_ne_bytes(lost[..4].try_into().unwrap()), RECORD_LOST);
        assert_eq!(u64::from_ne_bytes(lost[16..24].try_into().unwrap()), 1);
        assert_eq!(check_sample(&rb, 992 + 24).unwrap(), (32, 32));
        assert!(rb.published.windows(2).all(|w| w[0] <= w[1]));
        // Backward, overwrite: reads newest first.
        let mut rb = Rb::new(1024, 0, true, true, Patches::AS_RELEASED);
        for i in 0..4 {
            rb.write(&sample(i, 128), &mut no_interrupt);
        }
        assert_eq!(read_backward_ring(&rb).unwrap(), vec![3, 2, 1, 0]);
    }
}
