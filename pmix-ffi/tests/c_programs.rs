//! C programs compiled with `cc` against `include/pmix.h` and linked with
//! `libpmix_ffi`: every call and every return code of the `PMIx_Compute_distances`
//! page (`tests/c/api.c`), hostile input (`tests/c/hostile.c`, also under valgrind),
//! and a program written only against OpenPMIx's documented API
//! (`tests/c/openpmix_user.c`), built against OpenPMIx too (found by `pkg-config`).
//! Without valgrind or OpenPMIx those halves skip with a notice, or fail under
//! `CI=true`.

mod common;

use std::process::Command;

use common::*;

/// Builds `tests/c/<name>.c` against our library, once per test.
fn build(name: &str) -> std::path::PathBuf {
    let dir = scratch(name);
    let exe = dir.join(name);
    build_ours(&c_dir().join(format!("{name}.c")), &exe);
    exe
}

fn xml_source(name: &str) -> String {
    format!("xml:{}", xml(name).display())
}

/// Runs the program and checks it ran its checks and all passed; returns stderr.
fn run_checks(what: &str, mut cmd: Command) -> String {
    let out = output(&mut cmd);
    assert_ok(what, &out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let last = stdout.lines().last().unwrap_or("");
    assert!(
        last.starts_with("checks=") && last.ends_with(" failures=0"),
        "{what}: {stdout}"
    );
    let n: usize = last["checks=".len()..last.find(' ').unwrap()]
        .parse()
        .unwrap();
    assert!(n > 10, "{what}: only {n} checks ran");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The diagnostic lines of blocking calls refused on the progress thread.
fn would_block_lines(stderr: &str) -> Vec<&str> {
    stderr
        .lines()
        .filter(|l| l.contains("PMIX_ERR_WOULD_BLOCK"))
        .collect()
}

#[test]
fn api_every_call_and_return_code_on_a_two_package_machine() {
    let exe = build("api");
    let mut cmd = run_cmd(&exe, Some(&xml_source("24em64t-2n6c2t-pci.xml")));
    cmd.arg("main");
    let stderr = run_checks("api main", cmd);
    // One diagnostic per blocking call made from the callback, each naming its call,
    // in the order made, and nothing else.
    let lines = would_block_lines(&stderr);
    let calls = [
        "PMIx_Compute_distances:",
        "PMIx_Compute_distances_nb:",
        "PMIx_Load_topology:",
        "PMIx_Finalize:",
        "PMIx_tool_finalize:",
        "PMIx_Init:",
        "PMIx_Progress_thread_stop:",
    ];
    assert_eq!(lines.len(), calls.len(), "stderr:\n{stderr}");
    for (line, call) in lines.iter().zip(calls) {
        assert!(
            line.starts_with(&format!(
                "pmix-rs: {call} blocking call made on the PMIx progress thread"
            )),
            "{line:?} should name {call}"
        );
    }
    assert_eq!(
        stderr.lines().count(),
        calls.len(),
        "unexpected stderr:\n{stderr}"
    );
}

#[test]
fn api_origin_ambiguous_and_given_twice_on_a_multi_domain_machine() {
    let exe = build("api");
    let mut cmd = run_cmd(&exe, Some(&xml_source("192em64t-12gr2n8c2t.xml")));
    cmd.arg("big");
    let stderr = run_checks("api big", cmd);
    assert!(stderr.is_empty(), "{stderr}");
}

#[test]
fn api_unreachable_without_a_local_topology() {
    // A source that cannot be loaded (a missing file): no local topology, no server.
    // (Not `sysfs`: it answers on any Linux machine.)
    let exe = build("api");
    let mut cmd = run_cmd(&exe, Some("xml:/nonexistent/pmix-rs-test/topology.xml"));
    cmd.arg("unreach");
    run_checks("api unreach", cmd);
}

#[test]
fn api_topology_from_openpmix_mca_variable() {
    let exe = build("api");
    let mut cmd = run_cmd(&exe, None);
    cmd.env(
        "PMIX_MCA_pmix_hwloc_topo_file",
        xml("24em64t-2n6c2t-pci.xml"),
    )
    .arg("mca");
    run_checks("api mca", cmd);
}

#[test]
fn hostile_inputs_get_documented_codes_and_never_crash() {
    let exe = build("hostile");
    let cmd = run_cmd(&exe, Some(&xml_source("24em64t-2n6c2t-pci.xml")));
    let stderr = run_checks("hostile", cmd);
    assert!(stderr.is_empty(), "{stderr}");
}

/// Runs a program under valgrind: no memory error, no leak. Without valgrind: a notice,
/// or a failure under `CI=true` (`valgrind_and_openpmix_runs_fail_loudly_under_ci_when_absent`).
fn under_valgrind(name: &str, mode: Option<&str>) {
    let Some(vg) = valgrind_for(&format!("the valgrind run of {name}")) else {
        return;
    };
    let exe = build(name);
    let mut cmd = run_cmd(&vg, Some(&xml_source("24em64t-2n6c2t-pci.xml")));
    cmd.args([
        "--error-exitcode=1",
        "--leak-check=full",
        "--errors-for-leak-kinds=definite,indirect,possible",
        "--quiet",
    ])
    .arg(&exe);
    if let Some(m) = mode {
        cmd.arg(m);
    }
    run_checks(&format!("valgrind {name}"), cmd);
}

#[test]
fn hostile_inputs_are_clean_under_valgrind() {
    under_valgrind("hostile", None);
}

#[test]
fn api_is_clean_under_valgrind_release_fn_frees() {
    under_valgrind("api", Some("main"));
}

#[test]
fn a_program_written_for_openpmix_compiles_unchanged_and_runs() {
    let src = c_dir().join("openpmix_user.c");
    let dir = scratch("openpmix-user");
    let topo = xml("24em64t-2n6c2t-pci.xml");

    // Against our headers and shared library.
    let exe = dir.join("user-ours");
    build_ours(&src, &exe);
    let mut cmd = run_cmd(&exe, None);
    cmd.env("PMIX_MCA_pmix_hwloc_topo_file", &topo);
    let out = output(&mut cmd);
    assert_ok("openpmix_user (ours)", &out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("eth0 ipv4://78:e7:d1:21:55:30"), "{stdout}");
    assert!(stdout.ends_with("done\n"), "{stdout}");

    // Against our static library: the same program, the same output.
    let exe_static = dir.join("user-static");
    build_ours_static(&src, &exe_static);
    let mut cmd = run_cmd(&exe_static, None);
    cmd.env("PMIX_MCA_pmix_hwloc_topo_file", &topo);
    let out_static = output(&mut cmd);
    assert_ok("openpmix_user (static)", &out_static);
    assert_eq!(out_static.stdout, out.stdout);

    // Against OpenPMIx's own headers and library: it compiles unchanged and runs.
    let Some(openpmix) = openpmix_for("openpmix_user.c built against OpenPMIx") else {
        return;
    };
    let exe_openpmix = dir.join("user-openpmix");
    build_openpmix(&openpmix, &src, &exe_openpmix);
    let mut cmd = run_cmd(&exe_openpmix, None);
    cmd.env("PMIX_MCA_pmix_hwloc_topo_file", &topo);
    let out = output(&mut cmd);
    assert_ok("openpmix_user (OpenPMIx)", &out);
    assert!(
        String::from_utf8_lossy(&out.stdout).ends_with("done\n"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn the_readme_example_compiles_and_runs() {
    let readme = std::fs::read_to_string(crate_dir().join("README.md")).unwrap();
    let start = readme.find("```c\n").expect("a C block in README.md") + 5;
    let len = readme[start..].find("```").unwrap();
    let dir = scratch("readme");
    let src = dir.join("example.c");
    std::fs::write(&src, &readme[start..start + len]).unwrap();
    let exe = dir.join("example");
    build_ours(&src, &exe);
    let out = output(&mut run_cmd(
        &exe,
        Some(&xml_source("24em64t-2n6c2t-pci.xml")),
    ));
    assert_ok("README example", &out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("mlx4_0"), "{stdout}");
    assert!(stdout.lines().all(|l| l.contains("..")), "{stdout}");
}

/// Under `CI=true`, a peer that cannot be found fails the test that needed it, naming
/// it: valgrind off the `PATH` (an empty directory) fails both valgrind runs before
/// anything is built, and OpenPMIx hidden from `pkg-config` fails the OpenPMIx build of
/// `openpmix_user.c`. Without `CI` the same runs pass, each printing a notice. By hand:
/// `CI=true PATH=/nonexistent $(ls target/debug/deps/c_programs-* | head -1) --exact
/// hostile_inputs_are_clean_under_valgrind` fails.
#[test]
fn valgrind_and_openpmix_runs_fail_loudly_under_ci_when_absent() {
    let empty = scratch("no-peers");
    let valgrind_runs = [
        "hostile_inputs_are_clean_under_valgrind",
        "api_is_clean_under_valgrind_release_fn_frees",
    ];
    let openpmix_run = ["a_program_written_for_openpmix_compiles_unchanged_and_runs"];
    let no_valgrind = [("PATH", empty.as_os_str())];
    let no_openpmix = [
        ("PKG_CONFIG_LIBDIR", empty.as_os_str()),
        ("PKG_CONFIG_PATH", empty.as_os_str()),
    ];
    let ci = std::ffi::OsStr::new("true");
    let run = |names: &[&str], env: &[(&str, &std::ffi::OsStr)], ci_on: bool| {
        let mut env = env.to_vec();
        if ci_on {
            env.push(("CI", ci));
        }
        let remove: &[&str] = if ci_on { &[] } else { &["CI"] };
        let out = output(&mut rerun_tests(names, &env, remove));
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    };

    let (ok, text) = run(&valgrind_runs, &no_valgrind, true);
    assert!(!ok && text.contains("0 passed; 2 failed"), "{text}");
    for name in ["hostile", "api"] {
        let want = format!("the valgrind run of {name}: valgrind not found: {CI_FORBIDS_SKIPPING}");
        assert!(text.contains(&want), "no loud failure for {name}:\n{text}");
    }
    let (ok, text) = run(&openpmix_run, &no_openpmix, true);
    assert!(!ok && text.contains("0 passed; 1 failed"), "{text}");
    assert!(
        text.contains(&format!(
            "openpmix_user.c built against OpenPMIx: OpenPMIx (pkg-config pmix) not found: {CI_FORBIDS_SKIPPING}"
        )),
        "{text}"
    );

    // Outside CI the same runs skip with a notice (the pmix-rs halves still run).
    let (ok, text) = run(&valgrind_runs, &no_valgrind, false);
    assert!(ok && text.matches("NOTICE: ").count() == 2, "{text}");
    let (ok, text) = run(&openpmix_run, &no_openpmix, false);
    assert!(ok && text.matches("NOTICE: ").count() == 1, "{text}");
}

/// Runs `tests/c/<name>.c` linked with libpmix_ffi and with libpmix2 and compares
/// their lines, one by one (at least `min_lines` of them).
fn prints_what_libpmix2_prints(name: &str, min_lines: usize) {
    let exe = build(name);
    let ours = output(&mut run_cmd(&exe, None));
    assert_ok(&format!("{name} (ours)"), &ours);
    let Some(openpmix) = openpmix_for(&format!("{name}.c built against OpenPMIx")) else {
        return;
    };
    let exe_openpmix = scratch(&format!("{name}-openpmix")).join(format!("{name}-openpmix"));
    build_openpmix(&openpmix, &c_dir().join(format!("{name}.c")), &exe_openpmix);
    let theirs = output(&mut run_cmd(&exe_openpmix, None));
    assert_ok(&format!("{name} (OpenPMIx)"), &theirs);
    let (a, b) = (
        String::from_utf8_lossy(&ours.stdout),
        String::from_utf8_lossy(&theirs.stdout),
    );
    assert!(a.lines().count() > min_lines, "{a}");
    for (x, y) in a.lines().zip(b.lines()) {
        assert_eq!(x, y);
    }
    assert_eq!(a.lines().count(), b.lines().count());
}

#[test]
fn printing_helpers_print_what_libpmix2_prints() {
    // tests/c/strings.c prints types, scopes, ranges, values of each common type,
    // infos, states, channels, device types, directives and attribute names through
    // both libraries; the lines must match.
    prints_what_libpmix2_prints("strings", 100);
}

#[test]
fn value_and_info_copies_and_info_lists_do_what_libpmix2_does() {
    // tests/c/lists.c: PMIx_Value_xfer / Info_xfer of each kind of value, an info list
    // built by add, xfer and insert, converted, released, and the array destructed.
    prints_what_libpmix2_prints("lists", 20);
}

#[test]
fn packed_data_has_libpmix2s_bytes_and_unpacks_as_libpmix2s_does() {
    // tests/c/data.c: every supported element type packed (the bytes printed),
    // unpacked from a loaded copy, embed / unload / copy_payload / copy / compress.
    prints_what_libpmix2_prints("data", 20);
}

#[test]
fn packing_and_unpacking_data_is_clean_under_valgrind() {
    under_valgrind("data", None);
}

#[test]
fn value_and_info_copies_and_info_lists_are_clean_under_valgrind() {
    under_valgrind("lists", None);
}
