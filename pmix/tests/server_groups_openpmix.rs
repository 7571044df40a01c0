//! Real OpenPMIx 4.2.2 clients (Debian's libpmix2) doing groups under our server:
//! `pmix-tools/tests/c/groups.c` (context ids, leave during construct with and
//! without FT, leave during destruct, a destruct among the survivors, fences over a
//! group someone left) run as 4 ranks started with `Server::client_env`.

use std::path::PathBuf;
use std::time::Duration;

use pmix::server::NamespaceSpec;
use pmix::{Server, ServerConfig};
use pmix_testkit::TempDir;
use pmix_testkit::child::output_within;
use pmix_testkit::cprog::{clean_command, compile, openpmix_for};

const N: u32 = 4;

#[test]
fn openpmix_clients_construct_leave_destruct_and_fence_over_groups() {
    run_program("groups", "groups.openpmix");
}

#[test]
fn openpmix_clients_build_a_group_by_invite_and_join_and_fence_over_it() {
    run_program("group_invite", "invite.openpmix");
}

/// Compiles `pmix-tools/tests/c/NAME.c` and runs it as N ranks of namespace `ns`
/// under our server; each must exit 0 and print "NAME rank R: ok".
fn run_program(name: &str, ns: &str) {
    let Some(pmix) = openpmix_for("OpenPMIx clients doing groups under our server") else {
        return;
    };
    let cdir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../pmix-tools/tests/c");
    let dir = TempDir::new("groups-openpmix");
    let exe = dir.0.join(name);
    compile(
        &cdir.join(format!("{name}.c")),
        &exe,
        &[&pmix.include_dir, &cdir],
        &pmix.link,
    );

    let server = Server::start(ServerConfig::default()).unwrap();
    let (uid, gid) = pmix::server::net::effective_ids();
    server
        .add_namespace(NamespaceSpec::single_node(ns, N, uid, gid))
        .unwrap();
    let ranks: Vec<_> = (0..N)
        .map(|rank| {
            let mut cmd = clean_command(&exe);
            cmd.envs(server.client_env(ns, rank));
            std::thread::spawn(move || (rank, output_within(&mut cmd, Duration::from_secs(120))))
        })
        .collect();
    let mut failures = Vec::new();
    for h in ranks {
        let (rank, out) = h.join().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || !stdout.contains(&format!("{name} rank {rank}: ok")) {
            failures.push(format!(
                "rank {rank}: {:?}\nstdout:\n{stdout}\nstderr:\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn a_member_killed_during_a_construct_aborts_it_without_ft() {
    run_with_a_killed_member(false);
}

#[test]
fn a_member_killed_during_an_ft_construct_completes_it_on_the_survivors() {
    run_with_a_killed_member(true);
}

/// `pmix-tools/tests/c/group_kill.c` as N ranks; the last one is killed (SIGKILL,
/// then reported with `Server::proc_exited`) while the others construct.
fn run_with_a_killed_member(ft: bool) {
    let Some(pmix) = openpmix_for("OpenPMIx clients doing groups under our server") else {
        return;
    };
    let cdir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../pmix-tools/tests/c");
    let dir = TempDir::new("groups-kill");
    let exe = dir.0.join("group_kill");
    compile(
        &cdir.join("group_kill.c"),
        &exe,
        &[&pmix.include_dir, &cdir],
        &pmix.link,
    );
    let ns = if ft { "kill.ft" } else { "kill.plain" };
    let server = Server::start(ServerConfig::default()).unwrap();
    let (uid, gid) = pmix::server::net::effective_ids();
    server
        .add_namespace(NamespaceSpec::single_node(ns, N, uid, gid))
        .unwrap();
    let mut victim = clean_command(&exe);
    victim
        .envs(server.client_env(ns, N - 1))
        .stdout(std::process::Stdio::null());
    let mut victim = victim.spawn().unwrap();
    let survivors: Vec<_> = (0..N - 1)
        .map(|rank| {
            let mut cmd = clean_command(&exe);
            cmd.envs(server.client_env(ns, rank));
            cmd.env("GROUP_KILL_FT", if ft { "1" } else { "0" });
            std::thread::spawn(move || (rank, output_within(&mut cmd, Duration::from_secs(120))))
        })
        .collect();
    // Whenever the kill lands (before or after the survivors' calls), the outcome
    // is the same; a moment lets them reach the construct first most of the time.
    std::thread::sleep(Duration::from_millis(300));
    victim.kill().unwrap();
    let status = victim.wait().unwrap();
    assert!(!status.success());
    server.proc_exited(ns, N - 1, -9).unwrap();
    let mut failures = Vec::new();
    for h in survivors {
        let (rank, out) = h.join().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        if !out.status.success() || !stdout.contains(&format!("group_kill rank {rank}: ok")) {
            failures.push(format!(
                "rank {rank}: {:?}\nstdout:\n{stdout}\nstderr:\n{}",
                out.status,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
