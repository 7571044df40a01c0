//! Expectations shared by the suites that run the same C programs under different
//! OpenPMIx 4.2 servers (`run_ffi.rs` under mpirun, `run_slurm.rs` under srun), and
//! the fake-host agent of the suites that run `mpirun` with two `orted`s
//! (`run_dropin.rs`, `run_ft.rs`). Each suite uses some of it.
#![allow(dead_code)]

/// The rsh agent (`mpirun --mca plm_rsh_agent`) of two fake hosts on this machine:
/// options and host name dropped, its pid recorded in `launchers.pids` beside it (so
/// a test ends what it started, by pid), the command run by `sh` in its place
/// (`exec`) without `--daemonize`, so that the orted is the process of that pid. The
/// orted inherits mpirun's environment through it (mpirun's `LD_LIBRARY_PATH`, not
/// the ranks' `-x` variables), and a session directory of its host's own
/// (`orte_tmpdir_base`): two orteds sharing `/tmp/ompi.HOST.UID/jf.N` race in
/// ORTE's mkdir ("File exists") and remove it under each other.
pub(crate) const FAKE_HOST_AGENT: &str = "#!/bin/sh
while [ $# -gt 0 ]; do case \"$1\" in -*) shift;; *) break;; esac; done
here=$(dirname \"$0\")
mkdir -p \"$here/tmp-$1\"
export OMPI_MCA_orte_tmpdir_base=\"$here/tmp-$1\"
shift
echo $$ >> \"$here/launchers.pids\"
exec /bin/sh -c \"exec $(echo \"$*\" | sed 's/--daemonize//')\"
";

/// `query_resolve.c`'s lines (`"R: CALL STATUS ..."`, sorted) from libpmix_ffi (`a`)
/// and libpmix2 (`b`) under an OpenPMIx 4.2 server, for `n` ranks: where libpmix2
/// fails (its ds21 store cannot answer a job-size query; an unknown node is asked of
/// the server, which lets it time out) libpmix_ffi answers from the job information;
/// every other line matches.
pub(crate) fn assert_query_parity_under_openpmix(a: &[String], b: &[String], n: u32) {
    assert_eq!(a.len(), 6 * n as usize, "{a:#?}");
    let differs = |l: &&String| l.contains(" query_job_size") || l.contains("_unknown ");
    let same = |v: &[String]| {
        v.iter()
            .filter(|l| !differs(l))
            .cloned()
            .collect::<Vec<_>>()
    };
    assert_eq!(same(a), same(b));
    for r in 0..n {
        for w in [
            format!("{r}: query_job_size SUCCESS pmix.job.size={n}"),
            format!("{r}: query_job_size_nb SUCCESS pmix.job.size={n}"),
            format!("{r}: resolve_peers SUCCESS {n} all-ranks"),
            format!("{r}: resolve_peers_unknown NOT-FOUND"),
        ] {
            assert!(a.contains(&w), "{w} missing from {a:#?}");
        }
    }
}

/// `dist_relay.c`'s lines of one rank (`"CASE ..."`) under an OpenPMIx 4.2 server: it
/// computes relayed requests on its own topology (what it answers depends on the
/// machine, but the blocking and non-blocking forms get the same), and does not
/// advertise pmix.rs.dist.origin, so an origin is refused before anything is sent.
pub(crate) fn assert_relay_under_openpmix(lines: &[String], context: &str) {
    let rows = |case: &str| -> Vec<String> {
        lines
            .iter()
            .filter_map(|l| l.strip_prefix(&format!("{case} ")).map(str::to_owned))
            .collect()
    };
    assert!(!rows("own").is_empty(), "{context}");
    assert_eq!(rows("own"), rows("nb"), "{context}");
    assert_eq!(rows("origin"), ["NOT-SUPPORTED"], "{context}");
    assert_eq!(rows("missing"), ["NOT-SUPPORTED"], "{context}");
}

/// `group_notsup.c`'s lines (one per rank) from libpmix_ffi (`a`) and libpmix2 (`b`)
/// under a server without group operations: every call NOT-SUPPORTED, alike.
pub(crate) fn assert_groups_not_supported_alike(a: &[String], b: &[String], n: u32) {
    assert_eq!(a.len(), n as usize, "{a:?}");
    let want = "construct NOT-SUPPORTED leave NOT-SUPPORTED destruct NOT-SUPPORTED";
    assert!(a.iter().all(|l| l.ends_with(want)), "{a:?}");
    assert_eq!(a, b);
}

/// The lines of program `name` (`"NAME rank R: ..."` on stdout, whatever a launcher
/// puts before them), without the prefix, sorted.
pub(crate) fn rank_lines(name: &str, stdout: &[u8]) -> Vec<String> {
    let tag = format!("{name} rank ");
    let mut v: Vec<String> = String::from_utf8_lossy(stdout)
        .lines()
        .filter_map(|l| l.split_once(&tag).map(|(_, r)| r.to_owned()))
        .collect();
    v.sort();
    v
}

/// Writes [`FAKE_HOST_AGENT`] into `dir` as an executable `agent`; returns its path.
pub(crate) fn write_fake_host_agent(dir: &std::path::Path) -> std::path::PathBuf {
    let agent = dir.join("agent");
    std::fs::write(&agent, FAKE_HOST_AGENT).expect("write the agent");
    std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod the agent");
    agent
}

/// `mpirun`'s options for 8 ranks over the two fake hosts (`nodeA:4,nodeB:4`)
/// through `agent`: TCP over loopback for the ranks (vader's segments would collide)
/// and the daemons, rsh without a tree.
pub(crate) fn fake_hosts_mpirun_args(agent: &std::path::Path) -> Vec<std::ffi::OsString> {
    let mut args: Vec<std::ffi::OsString> = vec!["--allow-run-as-root".into()];
    args.extend(
        loopback_rsh_mca(&agent.display().to_string())
            .into_iter()
            .map(Into::into),
    );
    args.extend(
        [
            "--mca",
            "plm_rsh_no_tree_spawn",
            "1",
            "--host",
            "nodeA:4,nodeB:4",
        ]
        .iter()
        .map(Into::into),
    );
    args
}

/// `mpirun`'s MCA options for daemons started through the rsh agent `agent` on this
/// machine: TCP over loopback for the ranks and for the daemons.
pub(crate) fn loopback_rsh_mca(agent: &str) -> Vec<String> {
    [
        "--mca",
        "btl",
        "self,tcp",
        "--mca",
        "btl_tcp_if_include",
        "lo",
        "--mca",
        "oob_tcp_if_include",
        "lo",
        "--mca",
        "plm",
        "rsh",
        "--mca",
        "plm_rsh_agent",
        agent,
    ]
    .iter()
    .map(|s| (*s).to_owned())
    .collect()
}

/// A directory `dir/dropin` whose `libpmix.so.2` is this build's
/// `libpmix_dropin.so` (our library under OpenPMIx's soname); returns it.
pub(crate) fn dropin_dir(dir: &std::path::Path) -> std::path::PathBuf {
    let ours = pmix_testkit::cprog::lib_dir("pmix_dropin")
        .join("libpmix_dropin.so")
        .canonicalize()
        .expect("libpmix_dropin.so");
    let dropin = dir.join("dropin");
    std::fs::create_dir(&dropin).expect("mkdir dropin");
    std::os::unix::fs::symlink(&ours, dropin.join("libpmix.so.2")).expect("symlink");
    dropin
}

/// A command for `program` without what would leak into a job it starts: cargo's
/// `LD_LIBRARY_PATH` and the caller's `PMIX_*`, `OMPI_*` and `SLURM_*` variables;
/// stdin `/dev/null`.
pub(crate) fn clean_command(program: impl AsRef<std::ffi::OsStr>) -> std::process::Command {
    let mut cmd = std::process::Command::new(program);
    pmix_testkit::child::without_job_env(&mut cmd).stdin(std::process::Stdio::null());
    cmd
}

/// A finished job's exit code, stdout and stderr, for an assertion's message.
pub(crate) fn show(out: &std::process::Output) -> String {
    format!(
        "exit {:?}\n--- stdout\n{}--- stderr\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

/// A python3 that imports mpi4py, for the run named `what` (`None` after
/// [`pmix_testkit::peer_absent`]'s notice).
pub(crate) fn mpi4py(what: &str) -> Option<&'static str> {
    let found = ["python3", "/usr/bin/python3"].into_iter().find(|py| {
        std::process::Command::new(py)
            .args(["-c", "import mpi4py"])
            .stdin(std::process::Stdio::null())
            .output()
            .is_ok_and(|o| o.status.success())
    });
    if found.is_none() {
        pmix_testkit::peer_absent(
            &format!("{what}: no python3 with mpi4py"),
            "apt-get install python3-mpi4py",
        );
    }
    found
}

/// Whether Open MPI's `mpicc` and `mpirun` are here, for the run named `what` (after
/// [`pmix_testkit::peer_absent`]'s notice when not).
pub(crate) fn open_mpi_present(what: &str) -> bool {
    let present = |p: &str, arg: &str| {
        std::process::Command::new(p)
            .arg(arg)
            .stdin(std::process::Stdio::null())
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let found = present("mpicc", "--showme:version") && present("mpirun", "--version");
    if !found {
        pmix_testkit::peer_absent(
            &format!("{what}: Open MPI (mpicc, mpirun) not found"),
            "apt-get install libopenmpi-dev openmpi-bin",
        );
    }
    found
}
