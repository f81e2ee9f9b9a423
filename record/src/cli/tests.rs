//! The grammar and the values, as perf 6.1 parses them (each case checked against `perf record`
//! by hand or in tests/perf_forms.rs).

use super::table::{Effect, OPTIONS};
use super::*;

fn refused(s: &str) -> String {
    match parse(s.split_whitespace().map(String::from)) {
        Err(e) => e.0,
        other => panic!("{s}: accepted: {other:?}"),
    }
}

#[test]
fn the_issues_forms_parse_as_perf_parses_them() {
    // An unambiguous prefix with its value attached.
    assert_eq!(run("--fre=99 true").freq, Some(Freq::Hz(99)));
    assert_eq!(run("--fr 99 true").freq, Some(Freq::Hz(99)));
    // A name beginning with no-, and its negation by leaving the no- out.
    assert!(run("--no-inherit true").no_inherit);
    assert!(!run("-i --inherit true").no_inherit);
    assert!(!run("--no-inherit --no-no-inherit true").no_inherit);
    assert_eq!(run("-F99 true").freq, Some(Freq::Hz(99)));
    let o = run("-ag true");
    assert!(o.all_cpus && o.call_graph == Some(CallGraph::Fp));
    assert_eq!(run("-z3 true").compression, Some(3));
    assert_eq!(run("-z true").compression, Some(1), "no attached value: the default");
    assert_eq!(run("-z 3").command, ["3"], "an optional value is only attached");
    // perf's words for an ambiguous prefix: the last two matches in perf's order.
    assert_eq!(refused("--s true"), "Ambiguous option: s (could be --switch-max-files or --synth)");
    assert_eq!(refused("--a true"), "Ambiguous option: a (could be --aio or --affinity)");
    assert_eq!(refused("--n true"), "Ambiguous option: n (could be --no-threads or --no-off-cpu)");
    assert_eq!(
        refused("--no-n true"),
        "Ambiguous option: no-n (could be --no-namespaces or --no-num-thread-synthesize)"
    );
    assert_eq!(refused("--bu true"), "Ambiguous option: bu (could be --buildid-all or --buildid-mmap)");
}

#[test]
fn perfs_other_messages() {
    assert_eq!(refused("--nosuch"), "unknown option `nosuch'");
    assert_eq!(refused("-Y"), "unknown switch `Y'");
    assert_eq!(refused("-aY"), "unknown switch `Y'");
    assert_eq!(refused("-all-cpus"), "did you mean `--all-cpus` (with two dashes ?)");
    assert_eq!(refused("--all-cpus=1"), "option `all-cpus' takes no value");
    assert_eq!(refused("--inherit=1 true"), "option `no-no-inherit' takes no value");
    assert_eq!(refused("-c x true"), "switch `c' expects a numerical value");
    assert_eq!(refused("-F"), "switch `F' requires a value");
    assert_eq!(refused("--freq"), "option `freq' requires a value");
    assert_eq!(refused("--switch-max-files=x"), "option `switch-max-files' expects a numerical value");
    assert_eq!(refused("--no-event x"), "option `no-event' isn't available");
    assert_eq!(refused("--no-freq true"), "option `no-freq' isn't available");
    assert_eq!(
        refused("--user-regs=AX --all-kernel --all-user true"),
        "option `all-user' cannot be used with all-kernel"
    );
    assert!(refused("--synth=no true").contains("perf record's --synth is not taken by perfring-record"));
    assert!(matches!(parse(["--help".to_string()]), Ok(Parsed::Help)));
    assert!(matches!(parse(["-ah".to_string()]), Ok(Parsed::ShortHelp)));
    assert!(matches!(parse(["--list-opts".to_string()]), Ok(Parsed::ListOpts)));
}

#[test]
fn every_row_has_help_and_a_long_name_and_perfs_order() {
    for opt in OPTIONS {
        assert!(opt.help.len() > 10, "{:?} {:?}: help", opt.short, opt.long);
        assert!(opt.long.is_some() || opt.short == Some('g'), "{:?}: only -g has no long name", opt.short);
    }
    // perf record 6.1's `--list-opts`, verbatim: the table is perf's, in perf's order.
    const PERF: &str = "--event --filter --exclude-perf --pid --tid --realtime --no-buffering --raw-samples \
        --all-cpus --cpu --count --output --no-inherit --tail-synthesize --overwrite --no-bpf-event --strict-freq \
        --freq --mmap-pages --mmap-flush --group --call-graph --verbose --quiet --stat --data --phys-data \
        --data-page-size --code-page-size --sample-cpu --sample-identifier --timestamp --period --no-samples \
        --no-buildid-cache --no-buildid --cgroup --delay --kcore --uid --branch-any --branch-filter --weight \
        --transaction --per-thread --intr-regs --user-regs --running-time --clockid --snapshot --aux-sample \
        --proc-map-timeout --namespaces --all-cgroups --switch-events --all-kernel --all-user --kernel-callchains \
        --user-callchains --clang-path --clang-opt --vmlinux --buildid-all --buildid-mmap --timestamp-filename \
        --timestamp-boundary --switch-output --switch-output-event --switch-max-files --dry-run --aio --affinity \
        --compression-level --max-size --num-thread-synthesize --control --synth --debuginfod --threads --off-cpu";
    assert_eq!(list_opts().split_whitespace().collect::<Vec<_>>(), PERF.split_whitespace().collect::<Vec<_>>());
    let text = help();
    for opt in OPTIONS {
        let long = format!("--{}", opt.long.unwrap_or("g"));
        let shown = text.contains(&long) || opt.long.is_none() && text.contains("    -g ");
        assert!(shown, "--help names {long}");
        if let Effect::NotTaken(why) = opt.effect {
            assert!(!why.is_empty());
        }
    }
}

#[test]
fn values_are_read_as_perfs_strtol_reads_them() {
    assert_eq!(values::c_number(""), Some(0));
    assert_eq!(values::c_number(" -12"), Some(-12));
    assert_eq!(values::c_number("12x"), None);
    assert_eq!(values::c_loose("0x10"), 16);
    assert_eq!(values::c_loose("x"), 0);
    assert_eq!(run("--threads true").threads, Some(Threads::Cpu));
    assert_eq!(run("--no-threads true").threads, Some(Threads::Cpu), "perf 6.1 takes it so");
    assert_eq!(run("--threads=Package true").threads, Some(Threads::Package));
    assert_eq!(run("--threads=0/0:1/1 true").threads, Some(Threads::User("0/0:1/1".into())));
    assert_eq!(run("-u nobody true").uid.as_deref(), Some("nobody"));
    assert_eq!((run("--aio true").aio, run("--aio=3 true").aio, run("--aio=9 true").aio), (1, 3, 4));
    assert_eq!((run("--aio=2 --no-aio true").aio, run("--aio=-1 true").aio), (0, -1));
    // -G: events before it, system-wide (by default too); the names kept for setup.
    assert_eq!(refused("-a -G x -e cpu-clock"), "must define events before cgroups");
    assert_eq!(refused("-e cpu-clock -G , true"), "cgroup monitoring only available in system-wide mode");
    assert_eq!(refused("-C 0 -e cpu-clock -G , true"), "cgroup monitoring only available in system-wide mode");
    let g = run("-e cpu-clock -G , -e cpu-clock --cgroup= -a true").cgroups;
    assert_eq!(
        g,
        [Cgroups { after: 1, names: vec!["".into(), "".into()] }, Cgroups { after: 2, names: vec!["".into()] }]
    );
    assert_eq!(run("-e cpu-clock -G ,").cgroups.len(), 1, "no command: every CPU");
}

fn run(s: &str) -> Options {
    match parse(s.split_whitespace().map(String::from)) {
        Ok(Parsed::Run(o)) => *o,
        other => panic!("{s}: {other:?}"),
    }
}

#[test]
fn clusters_attached_values_and_long_forms_are_perfs() {
    let o = run("-ag -F99 -oFILE -- true");
    assert!(o.all_cpus);
    assert_eq!((o.call_graph, o.freq, o.output()), (Some(CallGraph::Fp), Some(Freq::Hz(99)), "FILE"));
    assert_eq!(run("--freq=99 true").freq, Some(Freq::Hz(99)));
    assert_eq!(run("--freq 99 true").freq, Some(Freq::Hz(99)));
    assert_eq!(run("-F max true").freq, Some(Freq::Max));
    assert_eq!(run("-p 1,2").pids, vec![1, 2]);
    assert_eq!(run("-C 0-1,3").cpus, Some(vec![0, 1, 3]));
    assert_eq!(run("--call-graph dwarf,4096 true").call_graph, Some(CallGraph::Dwarf { size: 4096 }));
    assert_eq!(run("--call-graph dwarf true").call_graph, Some(CallGraph::Dwarf { size: 8192 }));
    assert_eq!(run("-z true").compression, Some(1));
    assert_eq!(run("--compression-level=3 true").compression, Some(3));
    assert!(run("-i -N -B -T -d -vv true").no_inherit);
    assert_eq!(run("-vv true").verbose, 2);
    let o = run("-e cycles -e a,b true -x");
    assert_eq!((o.events, o.command), (vec!["cycles".to_string(), "a,b".into()], vec!["true".into(), "-x".into()]));
}

#[test]
fn sample_field_clock_and_scope_options_are_perfs() {
    let o = run("-e sched:sched_switch --filter a -e sched:sched_wakeup --filter b --filter c true");
    let f = |item, text: &str| Filter { item, text: text.into(), exclude_perf: false };
    assert_eq!(o.filters, vec![f(0, "a"), f(1, "b"), f(1, "c")]);
    let o = run("-e sched:sched_switch --exclude-perf true");
    let own = format!("common_pid != {}", std::process::id());
    assert_eq!(o.filters, vec![Filter { item: 0, text: own, exclude_perf: true }]);
    assert!(parse("--exclude-perf true".split_whitespace().map(String::from)).is_err());
    let o = run("-PWRs --sample-cpu --phys-data --data-page-size --code-page-size --switch-events true");
    assert_eq!((o.sample_period, o.weight, o.raw_samples, o.stat), (Some(true), true, true, true));
    assert!(o.sample_cpu && o.phys_data && o.data_page_size && o.code_page_size && o.switch_events);
    assert_eq!(run("-P --no-period true").sample_period, Some(false));
    assert!(!run("--switch-events --no-switch-events true").switch_events);
    for (clock, id) in
        [("mono", 1), ("MONOTONIC_RAW", 4), ("clock_boottime", 7), ("CLOCK_TAI", 11), ("real", 0), ("3", 3)]
    {
        assert_eq!(run(&format!("-k {clock} true")).clockid, Some(id), "{clock}");
    }
    assert!(run("--all-user true").all_user && run("--all-kernel true").all_kernel);
    assert!(run("--overwrite true").overwrite);
    assert!(run("--buildid-all true").buildid_all);
    assert_eq!((run("-r 10 true").realtime, run("-r0 true").realtime), (Some(10), None));
    assert_eq!((run("-I true").intr_regs, run("--intr-regs=ip true").intr_regs), (Some(0xff0fff), Some(0x100)));
    assert_eq!(run("--user-regs=AX,bx true").user_regs, Some(0x3));
    assert_eq!(run("-IAX,SP true").intr_regs, Some(0x81));
    for bad in ["-I? true", "--user-regs=nosuch true", "-I -IAX true"] {
        assert!(parse(bad.split_whitespace().map(String::from)).is_err(), "{bad}");
    }
    assert!(run("--tail-synthesize true").tail_synthesize);
    assert!(!run("--tail-synthesize --no-tail-synthesize true").tail_synthesize);
    assert_eq!(run("-b true").branch_stack, Some(1 << 3));
    assert_eq!(run("-j any_call,U true").branch_stack, Some(1 << 4 | 1));
    assert_eq!(run("-j k true").branch_stack, Some(1 << 3), "levels alone: any branch");
    for bad in ["-b -j any true", "-j nosuch true"] {
        assert!(parse(bad.split_whitespace().map(String::from)).is_err(), "{bad}");
    }
    use crate::cli::When;
    let o = run("--switch-output true");
    assert_eq!((o.switch_output, o.timestamp_filename), (Some(When::Signal), true));
    assert_eq!(run("--switch-output=100M true").switch_output, Some(When::Size(100 << 20)));
    assert_eq!(run("--switch-output=30s true").switch_output, Some(When::Every(std::time::Duration::from_secs(30))));
    assert_eq!(run("--switch-output=2m --switch-max-files 3 true").switch_max_files, Some(3));
    assert!(run("--timestamp-filename true").timestamp_filename);
    for bad in ["--switch-output=x true", "--switch-output=10 true", "-o - --switch-output true"] {
        assert!(parse(bad.split_whitespace().map(String::from)).is_err(), "{bad}");
    }
    assert_eq!((run("-D 100 true").delay, run("-D -1 true").delay, run("-D0 true").delay), (Some(100), Some(-1), None));
    let o = run("-n --no-buffering --no-bpf-event --max-size 20K true");
    assert!(o.no_samples && o.no_buffering && o.no_bpf_event);
    assert_eq!((o.max_size, run("--max-size=3M true").max_size), (Some(20 << 10), Some(3 << 20)));
    for bad in ["-D 10-20 true", "-D x true", "-D -2 true", "--max-size 20 true", "--max-size 20k true"] {
        assert!(parse(bad.split_whitespace().map(String::from)).is_err(), "{bad}");
    }
    for bad in ["--filter x true", "-k nosuch true", "-k mono -k raw true", "--all-user --all-kernel true"] {
        assert!(parse(bad.split_whitespace().map(String::from)).is_err(), "{bad}");
    }
}

#[test]
fn mmap_sizes_are_rounded_up_to_a_power_of_two_of_pages() {
    assert_eq!(values::mmap_pages("512K"), Ok((128, false)));
    assert_eq!(values::mmap_pages("3"), Ok((4, true)));
    assert_eq!(values::mmap_pages("5K"), Ok((2, false))); // 5 KiB is two pages, as perf counts (no notice)
    assert_eq!(values::mmap_pages("9K"), Ok((4, true)));
    assert_eq!(values::mmap_pages("1M"), Ok((256, false)));
    assert!(values::mmap_pages("0").is_err() && values::mmap_pages("x").is_err());
}

#[test]
fn what_perf_refuses_is_refused() {
    assert!(run("-o x").all_cpus, "no command and no target: every CPU, as perf");
    assert_eq!(run("-c 0 true").period, None, "perf: no period, the default frequency");
    for bad in ["-a -p 1", "--nosuch", "-Y", "-e"] {
        assert!(parse(bad.split_whitespace().map(String::from)).is_err(), "{bad}");
    }
    assert!(matches!(parse(["-h".to_string()]), Ok(Parsed::ShortHelp)));
    assert!(matches!(parse(["--help".to_string()]), Ok(Parsed::Help)));
}
