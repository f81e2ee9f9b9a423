//! perf's option grammar (tools/lib/subcmd/parse-options.c, `parse_options_step`,
//! `parse_long_opt`, `parse_short_opt`, `get_value`), applied to [`OPTIONS`]:
//!
//! * the first argument that is not an option (or `-` alone, or what follows `--`) starts the
//!   command (perf's `PARSE_OPT_STOP_AT_NON_OPTION`);
//! * `--name`, `--name=value`, `--name value`; any unambiguous prefix of a long name
//!   (`--fre=99`); `--no-name` negates, and a name that begins with `no-` is negated by
//!   dropping it (`--inherit` for `--no-inherit`); several options sharing the prefix are
//!   perf's "Ambiguous option: P (could be --A or --B)", naming the last two in table order;
//! * `-x`, clustered (`-ag`), a value attached (`-F99`, `-oFILE`) or next (`-F 99`); an option
//!   whose value is optional takes only an attached one (`-z3`, `--aio=2`);
//! * perf's words for what goes wrong, each a usage error (129).

use super::table::{Arg, Effect, Opt, Spelled, Takes, OPTIONS};
use super::{err, Options, UsageError};

/// How the options ended, besides in a recording.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// Record with the options parsed.
    Options,
    /// `--help` (or `--help-all`).
    Help,
    /// `-h`: perf's help, a usage error's status.
    ShortHelp,
    /// `--list-opts`.
    ListOpts,
}

/// Apply `args` to `o`, option by option; the command is what follows them.
pub fn parse(o: &mut Options, args: Vec<String>) -> Result<Ended, UsageError> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a == "--" {
            o.command = args[i + 1..].to_vec();
            return Ok(Ended::Options);
        }
        if !a.starts_with('-') || a.len() == 1 {
            o.command = args[i..].to_vec();
            return Ok(Ended::Options);
        }
        let step = match a.strip_prefix("--") {
            Some("help" | "help-all") => return Ok(Ended::Help),
            Some("list-opts") => return Ok(Ended::ListOpts),
            Some(long) => long_option(o, long, args.get(i + 1))?,
            None => match short_cluster(o, &a[1..], args.get(i + 1))? {
                Some(step) => step,
                None => return Ok(Ended::ShortHelp),
            },
        };
        i += step;
    }
    Ok(Ended::Options)
}

/// What a long option's text matched: the option, negated or not, its attached value.
struct Matched<'a> {
    opt: &'static Opt,
    unset: bool,
    attached: Option<&'a str>,
}

/// `--arg` (without its dashes); `next` is the argument after it. Returns how many arguments
/// it took (1, or 2 with a value that followed).
fn long_option(o: &mut Options, arg: &str, next: Option<&String>) -> Result<usize, UsageError> {
    let Some(m) = match_long(arg)? else { return err(format!("unknown option `{arg}'")) };
    let name = m.opt.long.unwrap_or_default();
    let spelled = if m.unset { Spelled::Negated(name) } else { Spelled::Long(name) };
    if m.unset && m.attached.is_some() {
        return err(spelled.error("takes no value"));
    }
    let (value, taken) = match (m.opt.takes, m.unset) {
        (_, true) => (None, 1),
        (Takes::Nothing, false) if m.attached.is_some() => return err(spelled.error("takes no value")),
        (Takes::Nothing, false) => (None, 1),
        (Takes::Optional(_), false) => (m.attached, 1),
        (Takes::Value(_), false) => match (m.attached, next) {
            (Some(v), _) => (Some(v), 1),
            (None, Some(v)) => (Some(v.as_str()), 2),
            (None, None) => return err(spelled.error("requires a value")),
        },
    };
    apply(o, m.opt, Arg { value, unset: m.unset, spelled })?;
    Ok(taken)
}

/// perf's `parse_long_opt`: an exact name (or `no-` and an exact name, or a `no-` name without
/// its `no-`), else the one option `arg` abbreviates; `Ok(None)` for none.
fn match_long(arg: &str) -> Result<Option<Matched<'_>>, UsageError> {
    let arg_end = arg.find('=').unwrap_or(arg.len());
    let (mut abbrev, mut ambiguous): (Option<Matched<'_>>, Option<(&Opt, bool)>) = (None, None);
    for opt in OPTIONS {
        let Some(name) = opt.long else { continue };
        match long_form(arg, arg_end, name) {
            Form::Exact(at, unset) => {
                // The whole name, then nothing or `=value` (else it is another option's name).
                let tail = &arg[at..];
                let attached = if tail.is_empty() {
                    None
                } else if let Some(v) = tail.strip_prefix('=') {
                    Some(v)
                } else {
                    continue;
                };
                return Ok(Some(Matched { opt, unset, attached }));
            }
            Form::Abbreviated(unset) => {
                if let Some(a) = abbrev.take() {
                    ambiguous = Some((a.opt, a.unset));
                }
                let attached = (!unset && arg_end < arg.len()).then(|| &arg[arg_end + 1..]);
                abbrev = Some(Matched { opt, unset, attached });
            }
            Form::None => {}
        }
    }
    if let (Some((amb, amb_unset)), Some(last)) = (ambiguous, &abbrev) {
        let no = |u: bool| if u { "no-" } else { "" };
        return err(format!(
            "Ambiguous option: {arg} (could be --{}{} or --{}{})",
            no(amb_unset),
            amb.long.unwrap_or_default(),
            no(last.unset),
            last.opt.long.unwrap_or_default()
        ));
    }
    Ok(abbrev)
}

/// How `arg` (up to `arg_end`, its `=`) names option `name`.
enum Form {
    /// The name itself from byte 0 (negated or not); the rest starts at the byte given.
    Exact(usize, bool),
    /// A prefix of the name (negated or not).
    Abbreviated(bool),
    None,
}

/// The cases of perf's `parse_long_opt`, in its order.
fn long_form(arg: &str, arg_end: usize, name: &str) -> Form {
    if arg.starts_with(name) {
        return Form::Exact(name.len(), false);
    }
    if let Some(base) = name.strip_prefix("no-") {
        // A name that begins with `no-` is negated by leaving it out (`--inherit`).
        if arg.starts_with(base) {
            return Form::Exact(base.len(), true);
        }
        if base.starts_with(arg) {
            return Form::Abbreviated(true);
        }
    }
    if name.starts_with(&arg[..arg_end]) {
        return Form::Abbreviated(false);
    }
    // "negated and abbreviated very much": `--n`, `--no`, `--no-` abbreviate every negation.
    if "no-".starts_with(arg) {
        return Form::Abbreviated(true);
    }
    let Some(negated) = arg.strip_prefix("no-") else { return Form::None };
    if negated.starts_with(name) {
        return Form::Exact(3 + name.len(), true);
    }
    if name.starts_with(negated) {
        return Form::Abbreviated(true);
    }
    Form::None
}

/// `-cluster` (without its dash); `next` is the argument after it. Returns how many arguments
/// it took, or `None` for `-h`.
fn short_cluster(o: &mut Options, cluster: &str, next: Option<&String>) -> Result<Option<usize>, UsageError> {
    let mut rest = cluster;
    let mut first = true;
    while let Some(c) = rest.chars().next() {
        if c == 'h' {
            return Ok(None);
        }
        let Some(opt) = OPTIONS.iter().find(|opt| opt.short == Some(c)) else {
            return err(format!("unknown switch `{c}'"));
        };
        rest = &rest[c.len_utf8()..];
        let spelled = Spelled::Short(c);
        let (value, taken) = match opt.takes {
            Takes::Nothing => (None, 1),
            Takes::Optional(_) => (Some(std::mem::take(&mut rest)).filter(|v| !v.is_empty()), 1),
            Takes::Value(_) if !rest.is_empty() => (Some(std::mem::take(&mut rest)), 1),
            Takes::Value(_) => match next {
                Some(v) => (Some(v.as_str()), 2),
                None => return err(spelled.error("requires a value")),
            },
        };
        apply(o, opt, Arg { value, unset: false, spelled })?;
        if taken == 2 {
            return Ok(Some(2));
        }
        if first && !rest.is_empty() {
            check_typos(cluster)?;
        }
        first = false;
    }
    Ok(Some(1))
}

/// perf's `check_typos`: a cluster of three or more letters that spells a long option (or a
/// negation) was meant with two dashes.
fn check_typos(cluster: &str) -> Result<(), UsageError> {
    if cluster.len() < 3 {
        return Ok(());
    }
    let long = OPTIONS.iter().filter_map(|o| o.long).any(|name| name.starts_with(cluster));
    if cluster.starts_with("no-") || long {
        return err(format!("did you mean `--{cluster}` (with two dashes ?)"));
    }
    Ok(())
}

/// Run `opt`'s effect with `arg`.
fn apply(o: &mut Options, opt: &Opt, arg: Arg<'_>) -> Result<(), UsageError> {
    if arg.unset && !opt.negatable {
        return err(arg.spelled.error("isn't available"));
    }
    match opt.effect {
        Effect::Set(f) => f(o, arg),
        // Negated, an option not taken asks for what this recorder does anyway.
        Effect::NotTaken(_) if arg.unset => Ok(()),
        Effect::NotTaken(why) => {
            err(format!("perf record's --{} is not taken by perfring-record: {why}", opt.long.unwrap_or_default()))
        }
    }
}
