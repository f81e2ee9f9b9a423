//! The values options take, read as perf reads them: numbers as C's `strtol` reads them
//! (perf's OPT_INTEGER/OPT_U64: "expects a numerical value"), lists of ids and CPUs, `-m`'s
//! pages or size, `--call-graph`, registers, branch filters, sizes and times with perf's
//! tags, `-D`, `-k`.

use std::time::Duration;

use super::{err, CallGraph, UsageError};

/// A number as C's `strtol`/`strtoull` reads the whole of `v` (perf's OPT_INTEGER, OPT_U64):
/// leading blanks, a sign, decimal digits; nothing at all is 0; anything after the digits is
/// perf's "expects a numerical value".
pub fn c_number(v: &str) -> Option<i64> {
    let t = v.trim_start();
    let (neg, digits) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    if digits.is_empty() {
        // strtol reads nothing: the value is 0, and the end pointer is the start, so only an
        // empty (or all-blank) argument passes perf's check.
        return v.trim().is_empty().then_some(0);
    }
    if !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = digits.parse().unwrap_or(i64::MAX);
    Some(if neg { -n } else { n })
}

/// A number in any base C's `strtol(v, NULL, 0)` takes (`0x10`, `010`, `16`), where perf reads
/// one without checking the rest (`--aio`, `-z`, `--mmap-flush`): what does not parse is 0.
pub fn c_loose(v: &str) -> i64 {
    let t = v.trim_start();
    let (neg, t) = match t.as_bytes().first() {
        Some(b'-') => (true, &t[1..]),
        Some(b'+') => (false, &t[1..]),
        _ => (false, t),
    };
    let (radix, t) = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        (16, h)
    } else if t.len() > 1 && t.starts_with('0') {
        (8, &t[1..])
    } else {
        (10, t)
    };
    let end = t.find(|c: char| !c.is_digit(radix)).unwrap_or(t.len());
    let n = i64::from_str_radix(&t[..end], radix).unwrap_or(0);
    if neg {
        -n
    } else {
        n
    }
}

pub fn number<T: std::str::FromStr>(option: &str, v: &str) -> Result<T, UsageError> {
    v.trim().parse().map_err(|_| UsageError(format!("{option} takes a number, not {v:?}")))
}

/// A list of ids: `1,2` or, for CPUs, `0-1,3`.
pub fn id_list<T: std::str::FromStr + Copy + Into<i64> + TryFrom<i64>>(
    option: &str,
    v: &str,
) -> Result<Vec<T>, UsageError> {
    let mut out = Vec::new();
    for part in v.split(',').filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b): (T, T) = (number(option, a)?, number(option, b)?);
                let (a, b) = (a.into(), b.into());
                if b < a || b - a > 4096 {
                    return err(format!("{option}: bad range {part}"));
                }
                for x in a..=b {
                    out.push(T::try_from(x).map_err(|_| UsageError(format!("{option}: bad range {part}")))?);
                }
            }
            None => out.push(number(option, part)?),
        }
    }
    if out.is_empty() {
        return err(format!("{option} needs a list, not {v:?}"));
    }
    Ok(out)
}

/// `-m`: pages or a size (B/K/M/G), rounded up to a power of two of pages (perf's
/// `parse_pages_arg`); whether it was rounded.
pub fn mmap_pages(v: &str) -> Result<(usize, bool), UsageError> {
    let bad = || UsageError(format!("Invalid argument for --mmap_pages/-m: {v:?}"));
    let v = v.split(',').next().unwrap_or(v).trim();
    let page = 4096u64;
    let pages = match v.char_indices().last() {
        Some((i, tag @ ('B' | 'K' | 'M' | 'G' | 'b' | 'k' | 'm' | 'g'))) => {
            let n: u64 = v[..i].parse().map_err(|_| bad())?;
            let mult = match tag.to_ascii_uppercase() {
                'B' => 1,
                'K' => 1 << 10,
                'M' => 1 << 20,
                _ => 1 << 30,
            };
            n.checked_mul(mult).ok_or_else(bad)?.div_ceil(page)
        }
        _ => v.parse().map_err(|_| bad())?,
    };
    if pages == 0 {
        return Err(bad());
    }
    let rounded = pages.checked_next_power_of_two().ok_or_else(bad)?;
    if rounded > 1 << 24 {
        return Err(bad());
    }
    Ok((rounded as usize, rounded != pages))
}

/// `--mmap-flush`, as perf's record__mmap_flush_parse reads it: a size with a B/K/M/G tag, or
/// else a number as strtol reads it; 0 is perf's default, 1; at most a quarter of the mapping
/// (`pages` of data and the control page, as `-m` stands when the option is read).
pub fn mmap_flush(v: &str, pages: usize) -> usize {
    let tagged = ['B', 'K', 'M', 'G'].iter().zip([1u64, 1 << 10, 1 << 20, 1 << 30]).find_map(|(&tag, mult)| {
        let at = v.find(tag)?;
        // perf's parse_tag_value: decimal digits up to the tag, else not a tagged value.
        let n: u64 = v[..at].parse().ok().filter(|_| !v[..at].starts_with('+'))?;
        n.checked_mul(mult)
    });
    let n = tagged.map_or_else(|| c_loose(v), |n| n.min(i64::MAX as u64) as i64);
    // perf keeps the value in an int: what does not fit is cut to it.
    let n = (n as i32).max(0) as usize;
    let max = (pages + 1) * 4096 / 4;
    if n == 0 {
        1
    } else {
        n.min(max)
    }
}

/// `--call-graph fp`, `dwarf`, `dwarf,SIZE` (perf: a multiple of 8 up to 65528, default 8192).
pub fn call_graph(v: &str) -> Result<CallGraph, UsageError> {
    let mut parts = v.split(',');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("fp"), None, None) => Ok(CallGraph::Fp),
        (Some("dwarf"), size, None) => {
            let size: u64 = match size {
                Some(s) => number("--call-graph dwarf,SIZE", s)?,
                None => 8192,
            };
            let size = size.next_multiple_of(8);
            if size == 0 || size > 65528 {
                return err(format!("callchain: Incorrect stack dump size (max 65528): {size}"));
            }
            Ok(CallGraph::Dwarf { size: size as u32 })
        }
        (Some("lbr"), None, None) => {
            err("--call-graph lbr: this machine's PMU has no branch stack (perf: \"PMU Hardware or event type doesn't \
             support branch stack sampling\"); use fp or dwarf")
        }
        _ => err(format!("callchain: Unknown --call-graph option value: {v}")),
    }
}

/// The sampled registers perf names (x86-64: arch/x86/util/perf_regs.c; the segment registers
/// but CS and SS left out, as `PERF_REGS_MASK` leaves them).
#[cfg(target_arch = "x86_64")]
const REGISTERS: &[(&str, u32)] = &[
    ("AX", 0),
    ("BX", 1),
    ("CX", 2),
    ("DX", 3),
    ("SI", 4),
    ("DI", 5),
    ("BP", 6),
    ("SP", 7),
    ("IP", 8),
    ("FLAGS", 9),
    ("CS", 10),
    ("SS", 11),
    ("R8", 16),
    ("R9", 17),
    ("R10", 18),
    ("R11", 19),
    ("R12", 20),
    ("R13", 21),
    ("R14", 22),
    ("R15", 23),
];
#[cfg(not(target_arch = "x86_64"))]
const REGISTERS: &[(&str, u32)] = &[];

/// Every register of [`REGISTERS`]: perf's `PERF_REGS_MASK` (x86-64: 0xff0fff).
pub const REGS_MASK: u64 = {
    let mut mask = 0;
    let mut i = 0;
    while i < REGISTERS.len() {
        mask |= 1 << REGISTERS[i].1;
        i += 1;
    }
    mask
};

/// `-I`/`--user-regs`: perf's `__parse_regs`: no value, every register; else a comma list of
/// names in any case; `?` lists them (and stops, as perf stops); given twice, refused.
pub fn registers(already: Option<u64>, v: &str, option: &str) -> Result<u64, UsageError> {
    if already.is_some() {
        return err(format!("{option}: given twice"));
    }
    if v.is_empty() {
        return Ok(REGS_MASK);
    }
    let mut mask = 0;
    for name in v.split(',') {
        if name == "?" {
            let names: String = REGISTERS.iter().map(|(n, _)| format!("{n} ")).collect();
            return err(format!("available registers: {names}"));
        }
        let Some(&(_, bit)) = REGISTERS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) else {
            return err(format!("Unknown register \"{name}\", check man page or run \"perf record {option}?\""));
        };
        mask |= 1 << bit;
    }
    Ok(mask)
}

/// `-b` (`None`) and `-j MODE,...`: `branch_sample_type` as perf's `parse_branch_str` makes it
/// (names in any case; privilege levels alone mean any branch at those levels).
pub fn branch_mode(v: Option<&str>) -> Result<u64, UsageError> {
    // PERF_SAMPLE_BRANCH_*: include/uapi/linux/perf_event.h.
    const ANY: u64 = 1 << 3;
    const ONLY_PLM: u64 = 0b111;
    const MODES: &[(&str, u64)] = &[
        ("u", 1 << 0),
        ("k", 1 << 1),
        ("hv", 1 << 2),
        ("any", ANY),
        ("any_call", 1 << 4),
        ("any_ret", 1 << 5),
        ("ind_call", 1 << 6),
        ("abort_tx", 1 << 7),
        ("in_tx", 1 << 8),
        ("no_tx", 1 << 9),
        ("cond", 1 << 10),
        ("ind_jmp", 1 << 12),
        ("call", 1 << 13),
        ("save_type", 1 << 16),
        ("stack", 1 << 11),
        ("priv", 1 << 18),
    ];
    let Some(v) = v else { return Ok(ANY) };
    let mut mode = 0;
    for name in v.split(',') {
        let Some(&(_, bit)) = MODES.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) else {
            return err(format!("unknown branch filter {name}, check man page"));
        };
        mode |= bit;
    }
    Ok(if mode & !ONLY_PLM == 0 { ANY } else { mode })
}

/// `--max-size`: perf's `parse_tag_value`: a whole number and its unit, B, K, M or G (one
/// of them, upper case).
pub fn max_size(v: &str) -> Result<u64, UsageError> {
    let bad = || UsageError(format!("--max-size takes a size with its unit (B, K, M or G: 20M), not {v:?}"));
    let (n, mult) = match v.char_indices().last() {
        Some((i, 'B')) => (&v[..i], 1u64),
        Some((i, 'K')) => (&v[..i], 1 << 10),
        Some((i, 'M')) => (&v[..i], 1 << 20),
        Some((i, 'G')) => (&v[..i], 1 << 30),
        _ => return Err(bad()),
    };
    n.parse::<u64>().ok().and_then(|n| n.checked_mul(mult)).ok_or_else(bad)
}

/// `-D`: perf's `str_to_delay`: a whole number of milliseconds from -1 up (0: no delay);
/// perf's time ranges (`10-20,30-40`) are refused.
pub fn delay(v: &str) -> Result<Option<i64>, UsageError> {
    match v.trim().parse::<i64>() {
        Ok(0) => Ok(None),
        Ok(d) if (-1..=i64::from(i32::MAX)).contains(&d) => Ok(Some(d)),
        _ if v.contains('-') && v.split([',', '-']).all(|p| p.trim().parse::<u64>().is_ok()) => {
            err(format!("-D {v}: time ranges are not supported here: give a delay in ms, or -1"))
        }
        _ => err(format!("-D takes a delay in ms (or -1), not {v:?}")),
    }
}

/// `-k`: perf's clock names (tools/perf/util/clockid.c), any case, with or without `CLOCK_`,
/// or a number.
pub fn clockid(v: &str) -> Result<i32, UsageError> {
    if let Ok(n) = v.trim().parse::<i32>() {
        return Ok(n);
    }
    let name = v.get(..6).filter(|p| p.eq_ignore_ascii_case("CLOCK_")).map_or(v, |_| &v[6..]);
    // Linux's clock ids (include/uapi/linux/time.h).
    const CLOCKS: &[(&str, i32)] = &[
        ("monotonic", 1),
        ("monotonic_raw", 4),
        ("realtime", 0),
        ("boottime", 7),
        ("tai", 11),
        ("mono", 1),
        ("raw", 4),
        ("real", 0),
        ("boot", 7),
    ];
    match CLOCKS.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)) {
        Some(&(_, id)) => Ok(id),
        None => err(format!("unknown clockid {v}, check man page")),
    }
}

/// When `--switch-output` switches files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum When {
    /// On SIGUSR2.
    Signal,
    /// When the data section reaches so many bytes.
    Size(u64),
    /// Every so long.
    Every(Duration),
}

impl When {
    /// perf's forms: `signal`, a size with its unit (`100M`: B, K, M, G), a time with its
    /// (`30s`: s, m, h, d); upper and lower case as perf takes them.
    pub fn parse(v: &str) -> Option<When> {
        if v == "signal" {
            return Some(When::Signal);
        }
        let (i, unit) = v.char_indices().last()?;
        let n: u64 = v[..i].parse().ok()?;
        let (bytes, secs) = match unit {
            'B' => (Some(1), None),
            'K' => (Some(1 << 10), None),
            'M' => (Some(1 << 20), None),
            'G' => (Some(1 << 30), None),
            's' => (None, Some(1)),
            'm' => (None, Some(60)),
            'h' => (None, Some(3600)),
            'd' => (None, Some(86_400)),
            _ => return None,
        };
        match (bytes, secs) {
            (Some(b), _) => n.checked_mul(b).map(When::Size),
            (_, Some(s)) => n.checked_mul(s).map(|t| When::Every(Duration::from_secs(t))),
            _ => None,
        }
    }
}

#[cfg(test)]
mod when_tests {
    use super::When;
    use std::time::Duration;

    #[test]
    fn switch_output_takes_perfs_forms() {
        assert_eq!(When::parse("signal"), Some(When::Signal));
        assert_eq!(When::parse("1G"), Some(When::Size(1 << 30)));
        assert_eq!(When::parse("5B"), Some(When::Size(5)));
        assert_eq!(When::parse("2h"), Some(When::Every(Duration::from_secs(7200))));
        assert_eq!(When::parse("1d"), Some(When::Every(Duration::from_secs(86_400))));
        for bad in ["", "10", "10x", "k", "signals", "-1s", "99999999999999999999G"] {
            assert_eq!(When::parse(bad), None, "{bad}");
        }
    }
}
