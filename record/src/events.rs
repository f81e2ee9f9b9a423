//! `-e` as perf parses it (tools/perf/util/parse-events.c): a comma list of events, each a
//! software or hardware name, `rNNN` (raw, hex), `PMU/term=value,.../` (a PMU of
//! /sys/bus/event_source/devices and its format terms), a tracepoint `GROUP:NAME` with globs
//! (`sched:*`), or a group `{a,b}`; each with modifiers (`:u`, `:k`, `:h`, `:p`…`:ppp`,
//! `:P`, and a group's after its brace). A name perf cannot parse is perf's usage error
//! ("event syntax error", exit 129).

use perfring::record::attr_flags as flag;
use perfring::record::Attr;
use perfring_linux::event_type;

/// One event to open: perf's name for it, its attr (type, config, the modifiers' bits), and
/// its group leader (an index into the list) if it is a group member.
#[derive(Debug, Clone, PartialEq)]
pub struct EventSpec {
    /// The name perf gives it (`cpu-clock:pp`, `sched:sched_switch`, `software/config=2/`).
    pub name: String,
    /// Type, config, exclude bits, precise_ip.
    pub attr: Attr,
    /// The group leader's index, for a member.
    pub leader: Option<usize>,
    /// `:P`: the most precise the event takes.
    pub precise_max: bool,
}

/// perf's usage error for an event it cannot parse (`event syntax error: '...'`).
#[derive(Debug, Clone, PartialEq)]
pub struct SyntaxError {
    /// The `-e` text.
    pub text: String,
    /// Where in it, in bytes.
    pub at: usize,
    /// What (`parser error`, `Cannot find PMU ...`).
    pub what: String,
}

impl std::fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // perf's layout: the text quoted, then a pointer under the place.
        writeln!(f, "event syntax error: '{}'", self.text)?;
        writeln!(f, "{}\\___ {}", " ".repeat(21 + self.at), self.what)?;
        write!(f, "Run 'perfring-record --help' for the event forms (perf: 'perf list')")
    }
}

fn syntax(text: &str, at: usize, what: impl Into<String>) -> SyntaxError {
    SyntaxError { text: text.into(), at, what: what.into() }
}

const SOFTWARE: &[(&str, u64)] = &[
    ("cpu-clock", 0),
    ("task-clock", 1),
    ("page-faults", 2),
    ("faults", 2),
    ("context-switches", 3),
    ("cs", 3),
    ("cpu-migrations", 4),
    ("migrations", 4),
    ("minor-faults", 5),
    ("major-faults", 6),
    ("alignment-faults", 7),
    ("emulation-faults", 8),
    ("dummy", 9),
    ("bpf-output", 10),
    ("cgroup-switches", 11),
];

const HARDWARE: &[(&str, u64)] = &[
    ("cycles", 0),
    ("cpu-cycles", 0),
    ("instructions", 1),
    ("cache-references", 2),
    ("cache-misses", 3),
    ("branches", 4),
    ("branch-instructions", 4),
    ("branch-misses", 5),
    ("bus-cycles", 6),
    ("stalled-cycles-frontend", 7),
    ("idle-cycles-frontend", 7),
    ("stalled-cycles-backend", 8),
    ("idle-cycles-backend", 8),
    ("ref-cycles", 9),
];

/// Whether the CPU is AMD's (x86's `vendor_id` AuthenticAMD, as perf reads it from cpuid).
fn amd() -> bool {
    cfg!(any(target_arch = "x86_64", target_arch = "x86"))
        && std::fs::read_to_string("/proc/cpuinfo")
            .is_ok_and(|c| c.lines().find(|l| l.starts_with("vendor_id")).is_some_and(|l| l.ends_with("AuthenticAMD")))
}

/// perf's default event: `cycles:P` (cpu-clock where there is no PMU: [`fallback`]). Where
/// this user may not profile the kernel it excludes the kernel from the start, as perf's
/// `evsel__new_cycles` does (`exclude_kernel = !perf_event_can_profile_kernel()`, nothing
/// else: the hypervisor stays counted), and perf names it `cycles:u`.
pub fn default_event(can_profile_kernel: bool) -> EventSpec {
    // perf's event_attr_init: exclude_guest, as every event perf makes itself; except on AMD,
    // where perf's arch_evsel__fixup_new_cycles clears it (precise cycles use IBS, which cannot
    // filter guests).
    let flags = if amd() { 0 } else { flag::EXCLUDE_GUEST };
    let mut attr = Attr { type_: event_type::HARDWARE, config: 0, flags, ..Attr::ZERO };
    let name = if can_profile_kernel {
        "cycles:P"
    } else {
        attr.flags |= flag::EXCLUDE_KERNEL;
        "cycles:u"
    };
    EventSpec { name: name.into(), attr, leader: None, precise_max: true }
}

/// perf's `perf_event_can_profile_kernel`: CAP_SYS_ADMIN or CAP_PERFMON in this process's
/// effective set (`CapEff` of /proc/self/status), or `perf_event_paranoid` at most 1.
pub fn can_profile_kernel() -> bool {
    const CAP_SYS_ADMIN: u32 = 21;
    const CAP_PERFMON: u32 = 38;
    let effective = std::fs::read_to_string("/proc/self/status").ok().and_then(|s| {
        let hex = s.lines().find_map(|l| l.strip_prefix("CapEff:"))?.trim().to_string();
        u64::from_str_radix(&hex, 16).ok()
    });
    let capable = effective.is_some_and(|c| c & (1 << CAP_SYS_ADMIN | 1 << CAP_PERFMON) != 0);
    // perf takes an unreadable level as the highest.
    capable || perfring_linux::paranoid().is_some_and(|p| p <= 1)
}

/// perf's fallback where the kernel refuses an event because it counts the kernel (EACCES at
/// `perf_event_paranoid` > 1, `evsel__fallback`): the event in user space only, exclude_kernel
/// and exclude_hv set and `u` appended to its name (after a `:`, or alone where the name has a
/// `:` or `/` already: `cpu-clock:u`, `cpu-clock:pu`, `software/config=2/u`). `None` where perf
/// does not fall back: the event excludes the kernel already, or user space (`:k`, `:h`).
pub fn user_only(e: &EventSpec) -> Option<EventSpec> {
    if e.attr.flags & (flag::EXCLUDE_KERNEL | flag::EXCLUDE_USER) != 0 {
        return None;
    }
    let sep = if e.name.contains([':', '/']) { "" } else { ":" };
    let attr = Attr { flags: e.attr.flags | flag::EXCLUDE_KERNEL | flag::EXCLUDE_HV, ..e.attr };
    Some(EventSpec { name: format!("{}{sep}u", e.name), attr, ..e.clone() })
}

/// Split at the commas outside braces and slashes.
fn split_top(text: &str) -> Vec<(usize, &str)> {
    let (mut depth, mut slash, mut start) = (0i32, false, 0);
    let mut out = Vec::new();
    for (i, c) in text.char_indices() {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            '/' => slash = !slash,
            ',' if depth == 0 && !slash => {
                out.push((start, &text[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push((start, &text[start..]));
    out
}

/// Whether `text` parses (without looking at tracefs or PMUs): for the command line check.
pub fn check_syntax(text: &str) -> Result<(), SyntaxError> {
    for (at, item) in split_top(text) {
        if item.is_empty() {
            return Err(syntax(text, at, "parser error"));
        }
        if let Some(inner) = item.strip_prefix('{') {
            let Some(close) = inner.rfind('}') else { return Err(syntax(text, at, "parser error")) };
            let mods = &inner[close + 1..];
            if !mods.is_empty() && !mods.strip_prefix(':').is_some_and(modifiers_ok) {
                return Err(syntax(text, at + close + 2, "parser error"));
            }
            for (a, member) in split_top(&inner[..close]) {
                if member.is_empty() || member.starts_with('{') {
                    return Err(syntax(text, at + 1 + a, "parser error"));
                }
            }
        }
    }
    Ok(())
}

fn modifiers_ok(m: &str) -> bool {
    !m.is_empty() && m.chars().all(|c| "ukhpPGH".contains(c)) && m.matches('p').count() <= 3
}

/// Modifier bits as perf's `get_event_modifier` sets them, starting from an event's
/// defaults (`exclude_guest` set, nothing excluded): `u`, `k`, `h` exclude the others, `u`
/// and `p` keep the guest out; `p` counts precision, `P` asks the most.
fn apply_modifiers(attr: &mut Attr, mods: &str, from_group: bool) -> bool {
    let has = |b| attr.flags & b != 0;
    let (mut eu, mut ek, mut eh) = (has(flag::EXCLUDE_USER), has(flag::EXCLUDE_KERNEL), has(flag::EXCLUDE_HV));
    // An event's own modifiers start from no exclude_guest; a group's from the member's.
    let mut eg = from_group && has(flag::EXCLUDE_GUEST);
    let mut exclude = eu || ek || eh;
    let mut precise = (attr.flags & flag::PRECISE_IP_MASK) >> 15;
    let mut max = false;
    for c in mods.chars() {
        match c {
            'u' | 'k' | 'h' => {
                if !exclude {
                    (eu, ek, eh, exclude) = (true, true, true, true);
                }
                match c {
                    'u' => {
                        eg = true;
                        eu = false
                    }
                    'k' => ek = false,
                    _ => eh = false,
                }
            }
            'p' => {
                precise += 1;
                eg = true;
            }
            'P' => max = true,
            _ => {}
        }
    }
    let set = |flags: &mut u64, b: u64, on: bool| *flags = if on { *flags | b } else { *flags & !b };
    set(&mut attr.flags, flag::EXCLUDE_USER, eu);
    set(&mut attr.flags, flag::EXCLUDE_KERNEL, ek);
    set(&mut attr.flags, flag::EXCLUDE_HV, eh);
    set(&mut attr.flags, flag::EXCLUDE_GUEST, eg);
    attr.flags = (attr.flags & !flag::PRECISE_IP_MASK) | (precise.min(3) << 15);
    max
}

/// The events of one `-e` argument.
pub fn parse(text: &str) -> Result<Vec<EventSpec>, SyntaxError> {
    check_syntax(text)?;
    let mut out: Vec<EventSpec> = Vec::new();
    for (at, item) in split_top(text) {
        if let Some(inner) = item.strip_prefix('{') {
            let close = inner.rfind('}').unwrap_or(inner.len());
            let mods = inner.get(close + 1..).unwrap_or("").trim_start_matches(':');
            let leader = out.len();
            for (a, member) in split_top(&inner[..close]) {
                for mut e in one(text, at + 1 + a, member)? {
                    if out.len() > leader {
                        e.leader = Some(leader);
                    }
                    if !mods.is_empty() {
                        e.precise_max |= apply_modifiers(&mut e.attr, mods, true);
                    }
                    out.push(e);
                }
            }
        } else {
            out.extend(one(text, at, item)?);
        }
    }
    Ok(out)
}

/// One event (a tracepoint glob may give several).
fn one(text: &str, at: usize, item: &str) -> Result<Vec<EventSpec>, SyntaxError> {
    // PMU/terms/[modifiers]
    if let Some((pmu, rest)) = item.split_once('/') {
        let Some((terms, mods)) = rest.rsplit_once('/') else { return Err(syntax(text, at, "parser error")) };
        let mods = mods.trim_start_matches(':');
        if !mods.is_empty() && !modifiers_ok(mods) {
            return Err(syntax(text, at + item.len() - mods.len(), "parser error"));
        }
        let attr = pmu_event(text, at, pmu, terms)?;
        let attr = Attr { flags: attr.flags | flag::EXCLUDE_GUEST, ..attr };
        return Ok(vec![spec(item, attr, (!mods.is_empty()).then_some(mods))]);
    }
    let parts: Vec<&str> = item.split(':').collect();
    let checked = |m: Option<&'_ str>| -> Result<(), SyntaxError> {
        match m {
            Some(m) if !modifiers_ok(m) => Err(syntax(text, at + item.len() - m.len(), "parser error")),
            _ => Ok(()),
        }
    };
    match parts[..] {
        [name] | [name, _] if known(name).is_some() || raw(name).is_some() => {
            let mods = parts.get(1).copied();
            checked(mods)?;
            let (type_, config) = known(name).unwrap_or((event_type::RAW, raw(name).unwrap_or(0)));
            Ok(vec![spec(item, fresh(type_, config), mods)])
        }
        [group, name] | [group, name, _] if !group.is_empty() && !name.is_empty() => {
            let mods = parts.get(2).copied();
            checked(mods)?;
            let found = tracepoints(group, name);
            if found.is_empty() {
                return Err(syntax(text, at, format!("unknown tracepoint `{group}:{name}'")));
            }
            let label = |g: &str, n: &str| match mods {
                Some(m) => format!("{g}:{n}:{m}"),
                None => format!("{g}:{n}"),
            };
            Ok(found
                .into_iter()
                .map(|(g, n, id)| spec(&label(&g, &n), fresh(event_type::TRACEPOINT, id), mods))
                .collect())
        }
        _ => Err(syntax(text, at, "parser error")),
    }
}

/// An event's attr before its modifiers: perf's `event_attr_init` sets exclude_guest.
fn fresh(type_: u32, config: u64) -> Attr {
    Attr { type_, config, flags: flag::EXCLUDE_GUEST, ..Attr::ZERO }
}

/// An event named `name` with `attr` and its modifiers applied.
fn spec(name: &str, mut attr: Attr, mods: Option<&str>) -> EventSpec {
    let precise_max = mods.is_some_and(|m| apply_modifiers(&mut attr, m, false));
    EventSpec { name: name.to_string(), attr, leader: None, precise_max }
}

/// A software or hardware event's name: (type, config).
fn known(name: &str) -> Option<(u32, u64)> {
    SOFTWARE
        .iter()
        .find(|(n, _)| *n == name)
        .map(|&(_, c)| (event_type::SOFTWARE, c))
        .or_else(|| HARDWARE.iter().find(|(n, _)| *n == name).map(|&(_, c)| (event_type::HARDWARE, c)))
}

/// `rNNN`: a raw event's config (hex).
fn raw(name: &str) -> Option<u64> {
    let hex = name.strip_prefix('r')?;
    (!hex.is_empty() && hex.chars().all(|c| c.is_ascii_hexdigit())).then(|| u64::from_str_radix(hex, 16).ok()).flatten()
}

/// `PMU/terms/`: the PMU's `type`, the terms `config`, `config1`, `config2` (numbers) or the
/// PMU's format fields (`format/NAME`: `config:0-7,32`), as perf's `pmu.c` encodes them.
fn pmu_event(text: &str, at: usize, pmu: &str, terms: &str) -> Result<Attr, SyntaxError> {
    let dir = std::path::Path::new("/sys/bus/event_source/devices").join(pmu);
    let type_ = std::fs::read_to_string(dir.join("type"))
        .ok()
        .and_then(|s| s.trim().parse::<u32>().ok())
        .filter(|_| !pmu.is_empty() && !pmu.contains(['.', '\0']))
        .ok_or_else(|| syntax(text, at, format!("Cannot find PMU `{pmu}'. Missing kernel support?")))?;
    let mut attr = Attr { type_, ..Attr::ZERO };
    for term in terms.split(',').filter(|t| !t.is_empty()) {
        let (key, value) = term.split_once('=').unwrap_or((term, "1"));
        let value = parse_number(value).ok_or_else(|| syntax(text, at + pmu.len() + 1, "parser error"))?;
        match key {
            "config" => attr.config = value,
            "config1" => attr.config1 = value,
            "config2" => attr.config2 = value,
            "period" => attr.sample_period = value,
            "freq" => {
                attr.sample_period = value;
                attr.flags |= flag::FREQ;
            }
            field => {
                let format = std::fs::read_to_string(dir.join("format").join(field))
                    .map_err(|_| syntax(text, at + pmu.len() + 1, format!("unknown term '{field}' for pmu '{pmu}'")))?;
                let (word, bits) = format.trim().split_once(':').unwrap_or(("config", ""));
                let target = match word {
                    "config1" => &mut attr.config1,
                    "config2" => &mut attr.config2,
                    _ => &mut attr.config,
                };
                let mut v = value;
                for range in bits.split(',') {
                    let (lo, hi) = match range.split_once('-') {
                        Some((a, b)) => (a.parse::<u32>().unwrap_or(0), b.parse::<u32>().unwrap_or(0)),
                        None => {
                            let b = range.parse::<u32>().unwrap_or(0);
                            (b, b)
                        }
                    };
                    let width = hi.saturating_sub(lo) + 1;
                    let mask = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
                    *target |= (v & mask) << lo.min(63);
                    v = v.checked_shr(width).unwrap_or(0);
                }
            }
        }
    }
    Ok(attr)
}

fn parse_number(v: &str) -> Option<u64> {
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

/// Whether `name` matches `pattern` (`*` any run, `?` one character), as perf's globs.
fn glob(pattern: &str, name: &str) -> bool {
    fn go(p: &[u8], n: &[u8]) -> bool {
        match (p.first(), n.first()) {
            (None, None) => true,
            (Some(b'*'), _) => go(&p[1..], n) || (!n.is_empty() && go(p, &n[1..])),
            (Some(b'?'), Some(_)) => go(&p[1..], &n[1..]),
            (Some(a), Some(b)) if a == b => go(&p[1..], &n[1..]),
            _ => false,
        }
    }
    go(pattern.as_bytes(), name.as_bytes())
}

/// The tracepoints matching `group:name` (globs allowed), sorted as perf lists them (by
/// directory order, which perf takes from readdir): (group, name, id).
fn tracepoints(group: &str, name: &str) -> Vec<(String, String, u64)> {
    let Some(root) = perfring_linux::perf_data::tracefs_root() else { return Vec::new() };
    let mut out = Vec::new();
    let Ok(groups) = std::fs::read_dir(root.join("events")) else { return out };
    for g in groups.flatten() {
        let gname = g.file_name().to_string_lossy().into_owned();
        if !glob(group, &gname) || !g.path().is_dir() {
            continue;
        }
        let Ok(events) = std::fs::read_dir(g.path()) else { continue };
        for e in events.flatten() {
            let ename = e.file_name().to_string_lossy().into_owned();
            if !glob(name, &ename) {
                continue;
            }
            let id = std::fs::read_to_string(e.path().join("id")).ok().and_then(|s| s.trim().parse().ok());
            if let Some(id) = id {
                out.push((gname.clone(), ename, id));
            }
        }
    }
    out
}

/// perf's `evsel__add_modifiers`: the suffix perf prints after an event it names itself (the
/// cycles fallback, the dummy): the contexts counted when any is excluded, `p` per precise
/// level, `H`/`G` when exclude_guest is not what those imply.
pub fn modifier_suffix(attr: &Attr) -> String {
    let has = |b| attr.flags & b != 0;
    let mut s = String::new();
    let mut guest_default = false;
    if has(flag::EXCLUDE_KERNEL) || has(flag::EXCLUDE_USER) || has(flag::EXCLUDE_HV) {
        for (bit, c) in [(flag::EXCLUDE_KERNEL, 'k'), (flag::EXCLUDE_USER, 'u'), (flag::EXCLUDE_HV, 'h')] {
            if !has(bit) {
                s.push(c);
            }
        }
        guest_default = true;
    }
    let precise = ((attr.flags & flag::PRECISE_IP_MASK) >> 15) as usize;
    if precise > 0 {
        s.push_str(&"ppp"[..precise]);
        guest_default = true;
    }
    if has(flag::EXCLUDE_HOST) || has(flag::EXCLUDE_GUEST) == guest_default {
        if !has(flag::EXCLUDE_HOST) {
            s.push('H');
        }
        if !has(flag::EXCLUDE_GUEST) {
            s.push('G');
        }
    }
    if s.is_empty() {
        s
    } else {
        format!(":{s}")
    }
}

/// perf's fallback for `cycles` where the machine has no PMU (`evsel__fallback`): the
/// hrtimer-based cpu-clock, same modifiers, named by perf's rule (`cpu-clock:ppp` for the
/// default `cycles:P`). `None` for any other event (perf: "The EVENT event is not
/// supported.").
pub fn fallback(e: &EventSpec) -> Option<EventSpec> {
    if e.attr.type_ != event_type::HARDWARE || e.attr.config != 0 {
        return None;
    }
    let attr = Attr { type_: event_type::SOFTWARE, config: 0, ..e.attr };
    // Named as opened: `:P` is the most precise level, 3.
    let named =
        if e.precise_max { Attr { flags: (attr.flags & !flag::PRECISE_IP_MASK) | 3 << 15, ..attr } } else { attr };
    Some(EventSpec { name: format!("cpu-clock{}", modifier_suffix(&named)), attr, ..e.clone() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bits(e: &str) -> [bool; 4] {
        bits_of(&parse(e).unwrap()[0])
    }

    fn bits_of(e: &EventSpec) -> [bool; 4] {
        [flag::EXCLUDE_USER, flag::EXCLUDE_KERNEL, flag::EXCLUDE_HV, flag::EXCLUDE_GUEST].map(|m| e.attr.flags & m != 0)
    }

    #[test]
    fn modifiers_set_the_exclude_bits_as_perf_does() {
        // As `perf record -e …; perf evlist -v` shows perf 6.1 setting them.
        assert_eq!(bits("cpu-clock"), [false, false, false, true]);
        assert_eq!(bits("cpu-clock:u"), [false, true, true, true]);
        assert_eq!(bits("page-faults:k"), [true, false, true, false]);
        assert_eq!(bits("cs:uk"), [false, false, true, true]);
        assert_eq!(bits("cpu-clock:pp"), [false, false, false, true]);
        assert_eq!((parse("cpu-clock:pp").unwrap()[0].attr.flags & flag::PRECISE_IP_MASK) >> 15, 2);
        for bad in ["cpu-clock:x", "no-such-event", "{cpu-clock", "a,,b", "cpu-clock:pppp", "{a,{b}}"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn lists_groups_raw_and_pmu_terms() {
        let g = parse("{cpu-clock,page-faults}:u,cs").unwrap();
        assert_eq!(
            g.iter().map(|e| (e.name.as_str(), e.leader)).collect::<Vec<_>>(),
            [("cpu-clock", None), ("page-faults", Some(0)), ("cs", None)]
        );
        assert!(g[1].attr.flags & flag::EXCLUDE_KERNEL != 0);
        let r = parse("r003c").unwrap();
        assert_eq!((r[0].attr.type_, r[0].attr.config), (event_type::RAW, 0x3c));
        let s = parse("software/config=2/").unwrap();
        assert_eq!((s[0].attr.type_, s[0].attr.config, s[0].name.as_str()), (1, 2, "software/config=2/"));
        let e = parse("nosuchpmu/config=1/").unwrap_err();
        assert!(e.to_string().contains("Cannot find PMU `nosuchpmu'"), "{e}");
    }

    #[test]
    fn names_perf_gives_its_own_events() {
        // perf's default keeps exclude_guest (an `H` in the name) except on AMD.
        let h = if amd() { "" } else { "H" };
        let default = fallback(&default_event(true)).unwrap();
        assert_eq!(default.name, format!("cpu-clock:ppp{h}"));
        assert_eq!(fallback(&parse("cycles").unwrap()[0]).unwrap().name, "cpu-clock");
        // Where the kernel may not be profiled (perf 6.1 as a user at perf_event_paranoid 2,
        // `perf evlist -v`): the default excludes the kernel alone; a named event is refused,
        // then counts user space only, named with a `u`.
        let user_default = fallback(&default_event(false)).unwrap();
        assert_eq!(user_default.name, format!("cpu-clock:uhppp{h}"));
        let cycles = user_only(&parse("cycles").unwrap()[0]).unwrap();
        assert_eq!(cycles.name, "cycles:u");
        assert_eq!(fallback(&cycles).unwrap().name, "cpu-clock:uH");
        assert_eq!(bits_of(&user_only(&parse("cpu-clock").unwrap()[0]).unwrap()), [false, true, true, true]);
        for (given, named) in [
            ("cpu-clock", "cpu-clock:u"),
            ("cpu-clock:pp", "cpu-clock:ppu"),
            ("software/config=2/", "software/config=2/u"),
        ] {
            assert_eq!(user_only(&parse(given).unwrap()[0]).unwrap().name, named);
        }
        for kept in ["cpu-clock:u", "cpu-clock:k", "cpu-clock:h", "{cpu-clock,page-faults}:u"] {
            assert!(user_only(&parse(kept).unwrap()[0]).is_none(), "{kept}");
        }
        assert!(fallback(&parse("instructions").unwrap()[0]).is_none());
        let dummy = Attr { type_: 1, config: 9, ..Attr::ZERO };
        assert_eq!(modifier_suffix(&dummy), ":HG");
        assert!(glob("sched_*", "sched_switch") && !glob("sched_*", "irq_x") && glob("*", ""));
    }
}
