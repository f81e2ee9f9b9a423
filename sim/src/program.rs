//! The simulated program: the code every simulated process runs, laid out as real x86-64
//! instructions, and [`Walk`], the taken branches a thread executes through it — what the
//! simulated Intel BTS tracer records.
//!
//! perf decodes a BTS trace by reading the instruction at each branch's `from` address out of
//! the file the thread's MMAP record names (tools/perf/util/intel-bts.c:intel_bts_get_next_insn),
//! and names the function each address falls in from that file's symbols. So the branches here
//! are the real branches of this code: every `from` is a `call`, `ret`, `jmp` or `jne` of
//! [`Program::text`], every `to` its target, and [`crate::elf`] writes the code with its symbols
//! as the ELF file perf reads.

use crate::rng::Rng;

/// Where every simulated process maps the program (the MMAP record's `addr`; `pgoff` 0).
pub const LOAD_BASE: u64 = 0x0000_4000_0000_0000;

/// The file offset, and address relative to [`LOAD_BASE`], of the code (the ELF's `.text`).
pub const TEXT_OFFSET: u64 = 0x1000;

/// The functions: name, the functions its loop body calls (in order), and the most times its
/// loop runs per call (`main` loops forever).
const FUNCTIONS: [(&str, &[usize], u32); 8] = [
    ("main", &[1], 0),
    ("handle_request", &[2, 3, 5, 7], 2),
    ("parse_header", &[], 6),
    ("lookup_route", &[4], 3),
    ("hash_key", &[], 8),
    ("render_page", &[6], 4),
    ("escape_html", &[], 10),
    ("write_response", &[], 3),
];

/// What kind of branch an instruction is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BranchKind {
    /// `call rel32`.
    Call,
    /// `ret`.
    Return,
    /// `jmp rel32`.
    Jump,
    /// `jne rel32`, taken.
    Conditional,
}

/// A taken branch, as BTS records it: the branch instruction's address and its target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Branch {
    /// Address of the branch instruction.
    pub from: u64,
    /// Address it went to.
    pub to: u64,
    /// The instruction at `from`.
    pub kind: BranchKind,
    /// Whether the branch predictor got it right (BTS's "predicted" bit): the first taken
    /// back edge of a loop is the one it misses.
    pub predicted: bool,
}

/// One function of the program: where its code is and where its branches are. Addresses are
/// run-time addresses (`LOAD_BASE` + file offset).
#[derive(Debug, Clone)]
pub struct Function {
    /// Its symbol.
    pub name: &'static str,
    /// First byte.
    pub start: u64,
    /// Bytes of code.
    pub size: u64,
    /// The functions its loop body calls, in order (indices into [`Program::functions`]).
    pub callees: Vec<usize>,
    /// The most times its loop runs per call (0: forever, `main`).
    pub max_iterations: u32,
    /// The first instruction of the loop body (the back edge's target).
    pub loop_top: u64,
    /// The `call` instructions, one per callee.
    pub calls: Vec<u64>,
    /// The loop's back edge: `jne` (or `jmp` in `main`).
    pub back_edge: u64,
    /// The `ret` (none in `main`).
    pub ret: Option<u64>,
}

/// The program: its functions and their code.
#[derive(Debug, Clone)]
pub struct Program {
    /// The functions, `main` first.
    pub functions: Vec<Function>,
    /// The code, to be placed at file offset [`TEXT_OFFSET`] (functions 16-byte aligned, the
    /// gaps filled with `int3`).
    pub text: Vec<u8>,
}

/// `call rel32` is 5 bytes; `mov edi, imm32` before it (the callee's loop count) 5 more.
const CALL_SITE: u64 = 10;

impl Program {
    /// The program (always the same: its build-id and addresses do not depend on the seed).
    pub fn new() -> Program {
        // Pass 1: sizes and addresses.
        let mut functions = Vec::new();
        let mut at = LOAD_BASE + TEXT_OFFSET;
        for (name, callees, max_iterations) in FUNCTIONS {
            let main = max_iterations == 0;
            // push rbp; mov rbp, rsp (4) [push rbx; mov ebx, edi (3)]; calls; the loop's
            // tail: jmp (5) or add rax, rbx; dec ebx; jne (11); [pop rbx; pop rbp; ret (3)].
            let head = if main { 4 } else { 7 };
            let loop_top = at + head;
            let calls: Vec<u64> = (0..callees.len() as u64).map(|i| loop_top + i * CALL_SITE + 5).collect();
            let body_end = loop_top + CALL_SITE * callees.len() as u64;
            let (back_edge, ret, end) =
                if main { (body_end, None, body_end + 5) } else { (body_end + 5, Some(body_end + 13), body_end + 14) };
            functions.push(Function {
                name,
                start: at,
                size: end - at,
                callees: callees.to_vec(),
                max_iterations,
                loop_top,
                calls,
                back_edge,
                ret,
            });
            at = end.next_multiple_of(16);
        }
        // Pass 2: the bytes.
        let mut text = Vec::new();
        let rel = |from_end: u64, to: u64| (to.wrapping_sub(from_end) as i64 as i32).to_le_bytes();
        for f in &functions {
            let pad = (f.start - LOAD_BASE - TEXT_OFFSET) as usize;
            text.resize(pad, 0xcc);
            text.extend_from_slice(&[0x55, 0x48, 0x89, 0xe5]); // push rbp; mov rbp, rsp
            if f.ret.is_some() {
                text.extend_from_slice(&[0x53, 0x89, 0xfb]); // push rbx; mov ebx, edi
            }
            for (&callee, &call) in f.callees.iter().zip(&f.calls) {
                let g = &functions[callee];
                text.push(0xbf); // mov edi, imm32: the callee's loop count (its maximum here)
                text.extend_from_slice(&g.max_iterations.to_le_bytes());
                text.push(0xe8); // call rel32
                text.extend_from_slice(&rel(call + 5, g.start));
            }
            if f.ret.is_some() {
                text.extend_from_slice(&[0x48, 0x01, 0xd8, 0xff, 0xcb]); // add rax, rbx; dec ebx
                text.extend_from_slice(&[0x0f, 0x85]); // jne rel32
                text.extend_from_slice(&rel(f.back_edge + 6, f.loop_top));
                text.extend_from_slice(&[0x5b, 0x5d, 0xc3]); // pop rbx; pop rbp; ret
            } else {
                text.push(0xe9); // jmp rel32
                text.extend_from_slice(&rel(f.back_edge + 5, f.loop_top));
            }
            debug_assert_eq!(LOAD_BASE + TEXT_OFFSET + text.len() as u64, f.start + f.size);
        }
        let end = text.len().next_multiple_of(16);
        text.resize(end, 0xcc);
        Program { functions, text }
    }

    /// The function `addr` falls in.
    pub fn function_at(&self, addr: u64) -> Option<&Function> {
        self.functions.iter().find(|f| (f.start..f.start + f.size).contains(&addr))
    }

    /// Whether [`Program::text`] holds `kind`'s opcode at `addr` (the check perf's decoder
    /// makes, by decoding the instruction there).
    pub fn is_branch(&self, addr: u64, kind: BranchKind) -> bool {
        let Some(off) = addr.checked_sub(LOAD_BASE + TEXT_OFFSET).map(|o| o as usize) else { return false };
        let op = |n: usize| self.text.get(off..off + n);
        match kind {
            BranchKind::Call => op(1) == Some(&[0xe8]),
            BranchKind::Return => op(1) == Some(&[0xc3]),
            BranchKind::Jump => op(1) == Some(&[0xe9]),
            BranchKind::Conditional => op(2) == Some(&[0x0f, 0x85]),
        }
    }
}

impl Default for Program {
    fn default() -> Self {
        Program::new()
    }
}

/// One active call: which function, which call of its loop body is next, loop passes left.
#[derive(Debug, Clone, Copy)]
struct Frame {
    function: usize,
    next_call: usize,
    passes_left: u32,
    first_pass: bool,
}

/// A thread executing the program from `main`: each [`Walk::next`] runs it to its next taken
/// branch. Loop counts are drawn from the walk's own generator (the "input" the program
/// processes), so a thread's branches depend only on its seed and how far it has run.
#[derive(Debug, Clone)]
pub struct Walk {
    stack: Vec<Frame>,
    rng: Rng,
}

impl Walk {
    /// A thread at the start of `main`, its loop counts drawn from `seed`.
    pub fn new(seed: u64) -> Walk {
        Walk { stack: vec![Frame { function: 0, next_call: 0, passes_left: 0, first_pass: true }], rng: Rng::new(seed) }
    }

    /// Run to the next taken branch and return it. (`main` never returns, so there always is
    /// one; a not-taken `jne` at a loop's last pass falls through to the `ret`, the next taken
    /// branch.)
    pub fn next(&mut self, p: &Program) -> Branch {
        let depth = self.stack.len();
        let frame = &mut self.stack[depth - 1];
        let f = &p.functions[frame.function];
        if let Some(&callee) = f.callees.get(frame.next_call) {
            let from = f.calls[frame.next_call];
            frame.next_call += 1;
            let g = &p.functions[callee];
            let passes = 1 + self.rng.below(u64::from(g.max_iterations)) as u32;
            self.stack.push(Frame { function: callee, next_call: 0, passes_left: passes, first_pass: true });
            return Branch { from, to: g.start, kind: BranchKind::Call, predicted: true };
        }
        let Some(ret) = f.ret else {
            frame.next_call = 0;
            return Branch { from: f.back_edge, to: f.loop_top, kind: BranchKind::Jump, predicted: true };
        };
        frame.passes_left -= 1;
        if frame.passes_left > 0 {
            frame.next_call = 0;
            let predicted = !frame.first_pass;
            frame.first_pass = false;
            return Branch { from: f.back_edge, to: f.loop_top, kind: BranchKind::Conditional, predicted };
        }
        self.stack.pop();
        let caller = self.stack.last().expect("main never returns");
        let site = p.functions[caller.function].calls[caller.next_call - 1];
        Branch { from: ret, to: site + 5, kind: BranchKind::Return, predicted: true }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_branch_of_a_walk_is_the_instruction_it_claims_and_lands_in_the_program() {
        let p = Program::new();
        let mut w = Walk::new(7);
        let mut seen = std::collections::HashSet::new();
        for _ in 0..10_000 {
            let b = w.next(&p);
            assert!(p.is_branch(b.from, b.kind), "{b:x?}");
            assert!(p.function_at(b.from).is_some() && p.function_at(b.to).is_some(), "{b:x?}");
            seen.insert((p.function_at(b.from).unwrap().name, b.kind));
        }
        // Every function's branches happen: calls from the callers, returns and back edges.
        for f in &p.functions {
            assert!(seen.iter().any(|(n, _)| *n == f.name), "{} never branched", f.name);
        }
        assert!(seen.contains(&("hash_key", BranchKind::Conditional)) && seen.contains(&("main", BranchKind::Jump)));
    }

    #[test]
    fn calls_and_jumps_encode_their_targets() {
        let p = Program::new();
        let at = |a: u64| (a - LOAD_BASE - TEXT_OFFSET) as usize;
        let target = |a: u64, len: u64| {
            let o = at(a) + len as usize - 4;
            (a + len).wrapping_add(i32::from_le_bytes(p.text[o..o + 4].try_into().unwrap()) as i64 as u64)
        };
        for f in &p.functions {
            for (&c, &callee) in f.calls.iter().zip(&f.callees) {
                assert_eq!(target(c, 5), p.functions[callee].start);
            }
            let len = if f.ret.is_some() { 6 } else { 5 };
            assert_eq!(target(f.back_edge, len), f.loop_top, "{}", f.name);
        }
    }
}
