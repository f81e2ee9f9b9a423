//! `--help` and `--list-opts`, made from [`OPTIONS`]: every option this recorder takes, with
//! its names, its value and its help; then the names of perf's options it does not take.

use super::table::{Effect, Opt, Takes, OPTIONS};

/// The help: the usage, each option taken, the exit statuses, perf's options not taken.
pub fn help() -> String {
    let mut out = String::from(
        "usage: perfring-record [<options>] [<command>]\n   or: perfring-record [<options>] -- <command> [<options>]\n\n\
         Sample a command (or processes, threads, CPUs) into a perf.data file for perf report and perf\n\
         script, taking perf record's options as perf record 6.1 takes them: any unambiguous prefix of a\n\
         long name (--fre=99), --no-NAME, clusters (-ag), attached values (-F99, -z3).\n\n",
    );
    for opt in OPTIONS.iter().filter(|o| matches!(o.effect, Effect::Set(_))) {
        out.push_str(&line(opt));
    }
    out.push_str(
        "\nKernel samples are included where perf_event_paranoid allows them, as perf record does. Exit\n\
         status: the command's (128+N if killed by signal N; without a command, 128+N for the SIGINT or\n\
         SIGTERM that ended the recording); 255 if it cannot be executed or recording fails; 129 for a\n\
         usage error; 234 for a value perf refuses once parsed.\n\nperf record's options not taken here:",
    );
    for opt in OPTIONS.iter().filter(|o| matches!(o.effect, Effect::NotTaken(_))) {
        out.push_str(&format!(" --{}", opt.long.unwrap_or_default()));
    }
    out
}

/// One option's lines, as perf lays them out: names and value in a 26-column field, the help
/// after it (on the next line when the names are longer).
fn line(opt: &Opt) -> String {
    let mut names = match (opt.short, opt.long) {
        (Some(s), Some(l)) => format!("    -{s}, --{l}"),
        (Some(s), None) => format!("    -{s}"),
        (None, Some(l)) => format!("        --{l}"),
        (None, None) => String::new(),
    };
    match (opt.takes, opt.long) {
        (Takes::Value(v), _) => names.push_str(&format!(" <{v}>")),
        (Takes::Optional(v), Some(_)) => names.push_str(&format!("[=<{v}>]")),
        (Takes::Optional(v), None) => names.push_str(&format!("[<{v}>]")),
        (Takes::Nothing, _) => {}
    }
    if names.len() <= 24 {
        format!("{names:<26}{}\n", opt.help)
    } else {
        format!("{names}\n{:26}{}\n", "", opt.help)
    }
}

/// `--list-opts`: every long name in table order, as perf prints them.
pub fn list_opts() -> String {
    OPTIONS.iter().filter_map(|o| o.long).map(|l| format!("--{l} ")).collect()
}
