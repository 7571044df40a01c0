//! Unmodified Open MPI 4.1.4 programs on our `libpmix.so.2` (`pmix-dropin`'s
//! `libpmix_dropin.so`, found by the loader through `LD_LIBRARY_PATH`): a C program
//! built with Debian's `mpicc` (`tests/mpi/mpi_dropin.c`: a ring of sends, bcast,
//! allreduce, comm split, barrier; publish / lookup; `MPI_Abort`) and an mpi4py script
//! (`tests/mpi/mpi4py_dropin.py`), under Debian's `mpirun` (its own OpenPMIx server:
//! the ranks get our library with `-x LD_LIBRARY_PATH=DIR`, mpirun keeps OpenPMIx),
//! under `pmix-run`, under `srun --mpi=pmix` on the `debug` partition (Slurm's
//! OpenPMIx server) and on the `ours` partition (our server inside Slurm's plugin,
//! `.ci/slurm-up.sh`), and with `mpirun` itself on our library. Every rank must
//! map our library and no OpenPMIx (`/proc/self/maps`), and each job must end as the
//! same job with Debian's `libpmix2` ends.
//!
//! The dropin directory of a test is a temporary one whose `libpmix.so.2` links to
//! the `libpmix_dropin.so` cargo built for this run (`cprog::lib_dir`; the
//! `target/<profile>/dropin` link of pmix-dropin's build script may be stale during
//! `cargo test`). Without `mpicc` / `mpirun`, mpi4py or a Slurm cluster the test
//! concerned prints a NOTICE and passes, except under `CI=true`. Every run is bounded,
//! loopback and shared memory only (`btl self,vader`; loopback TCP where a job spans
//! fake hosts: mpirun and an orted, or mpirun and two orteds all on our library,
//! started by a local rsh agent), stdin `/dev/null`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, OnceLock, PoisonError};
use std::time::Duration;

use pmix_testkit::child::output_within;
use pmix_testkit::{TempDir, cprog, peer_absent};

mod shared;

use shared::{clean_command as clean, mpi4py, show};

/// The bound on one job (each takes about a second; an srun may queue).
const LIMIT: Duration = Duration::from_secs(120);
const N: u32 = 4;

/// Where Open MPI's PMIx component finds OpenPMIx (what no rank of ours may map).
const OPENPMIX_MARKS: [&str; 2] = ["libpmix.so.2.6", "pmix2/lib"];

fn mpi_dir() -> PathBuf {
    PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mpi"))
}

/// A job's programs: the C program, the dropin directory, our library's real path.
struct Job {
    _dir: TempDir,
    exe: PathBuf,
    dropin: PathBuf,
    ours: PathBuf,
}

/// Builds `mpi_dropin.c` with `mpicc` and the dropin directory; `None` (after the
/// notice) without Open MPI.
fn job(tag: &str) -> Option<Job> {
    if !shared::open_mpi_present(tag) {
        return None;
    }
    let dir = TempDir::new(&format!("dropin-{tag}"));
    let exe = dir.0.join("mpi_dropin");
    let out = cprog::output(
        Command::new("mpicc")
            .args(cprog::cflags())
            .arg(mpi_dir().join("mpi_dropin.c"))
            .arg("-o")
            .arg(&exe),
    );
    cprog::assert_ok("mpicc mpi_dropin.c", &out);
    let dropin = shared::dropin_dir(&dir.0);
    let ours = std::fs::canonicalize(dropin.join("libpmix.so.2")).expect("libpmix_dropin.so");
    Some(Job {
        _dir: dir,
        exe,
        dropin,
        ours,
    })
}

/// Which library the ranks load.
#[derive(Clone, Copy, Debug)]
enum Lib {
    /// Ours, through `LD_LIBRARY_PATH`.
    Ours,
    /// Debian's libpmix2 (no `LD_LIBRARY_PATH`).
    Libpmix2,
}

/// `mpirun -n 4` of `argv` with the ranks on `lib`; mpirun itself runs without our
/// library unless `mpirun_on_ours`.
fn mpirun(job: &Job, argv: &[&str], lib: Lib, mpirun_on_ours: bool) -> Output {
    mpirun_with(
        job,
        &["--mca", "btl", "self,vader"],
        argv,
        lib,
        mpirun_on_ours,
    )
}

/// [`mpirun`] with the options `opts` (the transports, hosts) instead of shared memory.
fn mpirun_with(job: &Job, opts: &[&str], argv: &[&str], lib: Lib, mpirun_on_ours: bool) -> Output {
    let mut cmd = clean("mpirun");
    cmd.args(["--allow-run-as-root", "--oversubscribe"])
        .args(opts);
    if mpirun_on_ours {
        // mpirun and every rank it starts inherit it.
        cmd.env("LD_LIBRARY_PATH", &job.dropin);
        if let Lib::Libpmix2 = lib {
            cmd.arg("-x").arg("LD_LIBRARY_PATH=/nonexistent");
        }
    } else if let Lib::Ours = lib {
        cmd.arg("-x")
            .arg(format!("LD_LIBRARY_PATH={}", job.dropin.display()));
    }
    cmd.args(["-n", &N.to_string()]).args(argv);
    // Open MPI 4.1's mpirun has been seen, rarely, to outlive a finished job
    // (tests/run_ffi.rs): a hang is reported and the job run once more.
    let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        output_within(&mut cmd, LIMIT)
    }));
    first.unwrap_or_else(|hang| {
        let why = hang
            .downcast_ref::<String>()
            .map_or("(no message)", String::as_str);
        eprintln!("mpirun hung, running the job once more; the hang:\n{why}");
        output_within(&mut cmd, LIMIT)
    })
}

/// `pmix-run -n 4` of `argv` with the ranks on `lib`.
fn pmix_run(job: &Job, argv: &[&str], lib: Lib) -> Output {
    let mut cmd = clean(env!("CARGO_BIN_EXE_pmix-run"));
    cmd.env("OMPI_MCA_btl", "self,vader")
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
    if let Lib::Ours = lib {
        cmd.env("LD_LIBRARY_PATH", &job.dropin);
    }
    cmd.args(["-n", &N.to_string(), "--timeout", "100"])
        .args(argv);
    output_within(&mut cmd, LIMIT)
}

/// The lines of `prog` (`"PROG rank R..."`, whatever precedes them), sorted.
fn lines(prog: &str, out: &Output) -> Vec<String> {
    let tag = format!("{prog} rank ");
    let mut v: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.find(&tag).map(|i| l[i..].to_owned()))
        .collect();
    v.sort();
    v
}

/// The paths printed after `label` (`"pmix-lib"`, `"parent-pmix-lib"`).
fn libs(prog: &str, out: &Output, label: &str) -> BTreeSet<String> {
    let mark = format!(": {label} ");
    lines(prog, out)
        .iter()
        .filter_map(|l| l.split_once(&mark).map(|(_, p)| p.to_owned()))
        .collect()
}

/// The job exited 0, every rank printed its `ok` line and mapped our library and
/// nothing else named libpmix.
fn check_ok(what: &str, prog: &str, job: &Job, out: &Output) {
    check_ok_of(what, prog, job, out, N);
}

/// [`check_ok`] for a job of `n` ranks.
fn check_ok_of(what: &str, prog: &str, job: &Job, out: &Output, n: u32) {
    assert_eq!(out.status.code(), Some(0), "{what}:\n{}", show(out));
    let got = lines(prog, out);
    for r in 0..n {
        let want = format!("{prog} rank {r} of {n}: ok");
        assert!(got.contains(&want), "{what}: no {want:?}:\n{}", show(out));
    }
    check_ours_mapped(what, prog, job, out);
}

fn check_ours_mapped(what: &str, prog: &str, job: &Job, out: &Output) {
    let mapped = libs(prog, out, "pmix-lib");
    let ours = job.ours.display().to_string();
    assert_eq!(
        mapped,
        BTreeSet::from([ours]),
        "{what}: the ranks map other libpmix files:\n{}",
        show(out)
    );
    assert!(
        !mapped
            .iter()
            .any(|p| OPENPMIX_MARKS.iter().any(|m| p.contains(m))),
        "{what}: OpenPMIx mapped"
    );
}

/// Every rank's parent (the launcher) maps `want`'s kind of library: OpenPMIx's
/// (`true`) or ours.
fn check_parent_openpmix(what: &str, out: &Output, openpmix: bool) {
    let parent = libs("mpi_dropin", out, "parent-pmix-lib");
    let is_openpmix = |p: &String| OPENPMIX_MARKS.iter().any(|m| p.contains(m));
    if openpmix {
        assert!(
            !parent.is_empty() && parent.iter().all(is_openpmix),
            "{what}: the launcher maps {parent:?}, not OpenPMIx alone"
        );
    } else {
        assert!(
            !parent.iter().any(is_openpmix),
            "{what}: the launcher maps OpenPMIx: {parent:?}"
        );
    }
}

/// `publish` mode's lines, which must be the same with both libraries.
fn publish_lines(out: &Output) -> Vec<String> {
    lines("mpi_dropin", out)
}

/// `abort` mode: rank 1's code 7 ends the job and no rank passes the receive; with
/// `message`, Open MPI's abort message is printed. A rank prints it itself under a
/// direct launch (`pmix-run`, `srun`); under `mpirun` it goes to mpirun through
/// `PMIx_Log`, and mpirun loses it now and then with either library (`ORTE_ERROR_LOG`
/// in `orte/util/show_help.c`: an unpack past the end, or out of resource, while it
/// kills the job), so it is not required there.
fn check_abort(what: &str, out: &Output, message: bool) {
    assert_eq!(out.status.code(), Some(7), "{what}:\n{}", show(out));
    let text = show(out);
    assert!(
        text.contains("mpi_dropin rank 1: aborting"),
        "{what}:\n{text}"
    );
    assert!(
        !text.contains("received after the abort"),
        "{what}:\n{text}"
    );
    if message {
        assert!(
            text.contains("MPI_ABORT was invoked on rank 1 in communicator MPI_COMM_WORLD"),
            "{what}: no abort message:\n{text}"
        );
    }
}

fn script() -> String {
    mpi_dir().join("mpi4py_dropin.py").display().to_string()
}

// ---------------------------------------------------------------- mpirun

#[test]
fn open_mpi_ranks_on_our_libpmix_so_2_exchange_messages_and_split_under_mpirun() {
    let Some(job) = job("mpirun-basic") else {
        return;
    };
    let exe = job.exe.display().to_string();
    let out = mpirun(&job, &[&exe, "basic", "4"], Lib::Ours, false);
    check_ok("mpirun, ranks on ours", "mpi_dropin", &job, &out);
    // mpirun (the ranks' parent: no orted on one node) keeps OpenPMIx.
    check_parent_openpmix("mpirun, ranks on ours", &out, true);
}

#[test]
fn open_mpi_ranks_on_our_libpmix_so_2_publish_and_look_up_names_as_libpmix2_under_mpirun() {
    let Some(job) = job("mpirun-publish") else {
        return;
    };
    let exe = job.exe.display().to_string();
    let theirs = mpirun(&job, &[&exe, "publish"], Lib::Libpmix2, false);
    let ours = mpirun(&job, &[&exe, "publish"], Lib::Ours, false);
    assert_eq!(ours.status.code(), theirs.status.code(), "{}", show(&ours));
    assert_eq!(
        publish_lines(&ours),
        publish_lines(&theirs),
        "{}",
        show(&ours)
    );
    assert!(
        publish_lines(&ours)
            .contains(&"mpi_dropin rank 3: publish 0 lookup 0 mpi-dropin-port".into()),
        "{}",
        show(&ours)
    );
}

#[test]
fn mpi_abort_on_our_libpmix_so_2_ends_the_mpirun_job_with_its_code() {
    let Some(job) = job("mpirun-abort") else {
        return;
    };
    let exe = job.exe.display().to_string();
    for lib in [Lib::Libpmix2, Lib::Ours] {
        let out = mpirun(&job, &[&exe, "abort"], lib, false);
        check_abort(&format!("mpirun, ranks on {lib:?}"), &out, false);
    }
}

/// An rsh agent that starts what mpirun asks on "another node" here: the options and
/// the host name dropped, the command run by `sh`.
const LOCAL_AGENT: &str = "#!/bin/sh
while [ $# -gt 0 ]; do case \"$1\" in -*) shift;; *) break;; esac; done
shift
exec sh -c \"$*\"
";

#[test]
fn open_mpi_ranks_on_our_libpmix_so_2_span_mpirun_and_an_orted_under_openpmix_servers() {
    // Two ranks under mpirun, two under an orted it starts for a second host name
    // through LOCAL_AGENT (this machine again, loopback TCP between the ranks: the two
    // "nodes" would share vader's segment names). The orted gets mpirun's clean
    // environment, not the ranks' -x variables: both servers are OpenPMIx, the modex
    // crosses them.
    let Some(job) = job("mpirun-orted") else {
        return;
    };
    let agent = job.exe.with_file_name("local-agent");
    std::fs::write(&agent, LOCAL_AGENT).expect("write the agent");
    std::fs::set_permissions(&agent, std::os::unix::fs::PermissionsExt::from_mode(0o755))
        .expect("chmod the agent");
    let host =
        String::from_utf8_lossy(&output_within(Command::new("hostname").arg("-s"), LIMIT).stdout)
            .trim()
            .to_owned();
    let hosts = format!("{host}:2,pmix-rs-second-node:2");
    let mut opts = shared::loopback_rsh_mca(&agent.display().to_string());
    opts.extend(["-H".to_owned(), hosts]);
    let opts: Vec<&str> = opts.iter().map(String::as_str).collect();
    let exe = job.exe.display().to_string();
    let out = mpirun_with(&job, &opts, &[&exe, "basic", "4"], Lib::Ours, false);
    check_ok("mpirun + orted, ranks on ours", "mpi_dropin", &job, &out);
    check_parent_openpmix("mpirun + orted", &out, true);
    let out = mpirun_with(&job, &opts, &[&exe, "abort"], Lib::Ours, false);
    check_abort("mpirun + orted, abort", &out, false);
}

/// The ranks of a two-host job and how many run on each host.
const TWO_HOSTS_N: u32 = 8;

/// What one launcher process (mpirun, an orted) mapped while the job ran, as its
/// `/proc/PID/maps` read by pid: every path named libpmix* or under `/pmix2/`.
#[derive(Debug)]
struct Launcher {
    name: String,
    pid: u32,
    pmix_libs: BTreeSet<String>,
}

fn pmix_libs_of(pid: u32) -> Option<BTreeSet<String>> {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
    Some(
        maps.lines()
            .filter_map(|l| l.find('/').map(|i| &l[i..]))
            .filter(|p| {
                let base = p.rsplit('/').next().unwrap_or_default();
                base.starts_with("libpmix") || p.contains("/pmix2/")
            })
            .map(str::to_owned)
            .collect(),
    )
}

/// `mpirun -np 8 --host nodeA:4,nodeB:4` of `argv` with mpirun on our library: two
/// orteds, one per fake host, through `shared::FAKE_HOST_AGENT`
/// (`shared::fake_hosts_mpirun_args`); the ranks on `lib`. While it runs, the
/// maps of mpirun and of every orted are read (by the pids this test started).
fn two_hosts(job: &Job, argv: &[&str], lib: Lib) -> (Output, Vec<Launcher>) {
    let dir = job
        .exe
        .with_file_name(format!("two-hosts-{}", argv.join("-").replace('/', "_")));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).expect("mkdir");
    let agent = shared::write_fake_host_agent(&dir);
    let (out_path, err_path) = (dir.join("stdout"), dir.join("stderr"));
    let mut cmd = clean("mpirun");
    cmd.env("LD_LIBRARY_PATH", &job.dropin)
        .args(shared::fake_hosts_mpirun_args(&agent));
    if let Lib::Libpmix2 = lib {
        cmd.arg("-x").arg("LD_LIBRARY_PATH=/nonexistent");
    }
    cmd.args(["-np", &TWO_HOSTS_N.to_string()])
        .args(argv)
        .stdout(std::fs::File::create(&out_path).expect("stdout file"))
        .stderr(std::fs::File::create(&err_path).expect("stderr file"));
    let mut child = cmd.spawn().expect("spawn mpirun");
    let mut seen: Vec<Launcher> = Vec::new();
    let mut note = |name: &str, pid: u32| {
        if let Some(libs) = pmix_libs_of(pid) {
            match seen.iter_mut().find(|l| l.pid == pid) {
                Some(l) => l.pmix_libs.extend(libs),
                None => seen.push(Launcher {
                    name: name.to_owned(),
                    pid,
                    pmix_libs: libs,
                }),
            }
        }
    };
    let started = std::time::Instant::now();
    let status = loop {
        note("mpirun", child.id());
        let pids = std::fs::read_to_string(dir.join("launchers.pids")).unwrap_or_default();
        for pid in pids.lines().filter_map(|l| l.trim().parse::<u32>().ok()) {
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            if comm.trim() == "orted" {
                note("orted", pid);
            }
        }
        if let Some(st) = child.try_wait().expect("wait for mpirun") {
            break st;
        }
        if started.elapsed() > LIMIT {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "mpirun on two fake hosts ran past {LIMIT:?}:\n{}\n{}",
                std::fs::read_to_string(&out_path).unwrap_or_default(),
                std::fs::read_to_string(&err_path).unwrap_or_default()
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = Output {
        status,
        stdout: std::fs::read(&out_path).unwrap_or_default(),
        stderr: std::fs::read(&err_path).unwrap_or_default(),
    };
    (out, seen)
}

/// mpirun and both orteds were seen mapping our library and no OpenPMIx.
fn check_launchers_ours(what: &str, job: &Job, seen: &[Launcher], out: &Output) {
    let ours = job.ours.display().to_string();
    let count = |n: &str| seen.iter().filter(|l| l.name == n).count();
    assert!(
        count("mpirun") == 1 && count("orted") == 2,
        "{what}: launchers seen {seen:?}\n{}",
        show(out)
    );
    for l in seen {
        assert_eq!(
            l.pmix_libs,
            BTreeSet::from([ours.clone()]),
            "{what}: {} (pid {}) maps other libpmix files",
            l.name,
            l.pid
        );
    }
}

#[test]
fn mpirun_and_two_orteds_on_our_library_run_open_mpi_programs_across_two_fake_hosts() {
    // No rank under mpirun: 4 under each orted, fences and gets crossing our two
    // servers through the orteds' fence_nb and direct_modex; mpirun and the orteds
    // map our library alone; ranks on either library.
    let Some(job) = job("two-hosts") else {
        return;
    };
    let exe = job.exe.display().to_string();
    let n = TWO_HOSTS_N.to_string();
    for lib in [Lib::Ours, Lib::Libpmix2] {
        let what = format!("mpirun + 2 orteds on ours, ranks on {lib:?}");
        let (out, seen) = two_hosts(&job, &[&exe, "basic", &n], lib);
        match lib {
            Lib::Ours => check_ok_of(&what, "mpi_dropin", &job, &out, TWO_HOSTS_N),
            Lib::Libpmix2 => {
                assert_eq!(out.status.code(), Some(0), "{what}:\n{}", show(&out));
                let got = lines("mpi_dropin", &out);
                for r in 0..TWO_HOSTS_N {
                    let want = format!("mpi_dropin rank {r} of {TWO_HOSTS_N}: ok");
                    assert!(got.contains(&want), "{what}: no {want:?}:\n{}", show(&out));
                }
                assert!(
                    libs("mpi_dropin", &out, "pmix-lib")
                        .iter()
                        .all(|p| OPENPMIX_MARKS.iter().any(|m| p.contains(m))),
                    "{what}: the ranks do not map libpmix2:\n{}",
                    show(&out)
                );
            }
        }
        // The ranks' parents are the orteds: our library, no OpenPMIx.
        check_parent_openpmix(&what, &out, false);
        check_launchers_ours(&what, &job, &seen, &out);
        let (out, _) = two_hosts(&job, &[&exe, "abort"], lib);
        check_abort(&format!("{what}, abort"), &out, false);
    }
}

#[test]
fn mpirun_and_two_orteds_on_our_library_look_up_a_name_published_on_the_other_host() {
    let Some(job) = job("two-hosts-publish") else {
        return;
    };
    let exe = job.exe.display().to_string();
    for lib in [Lib::Ours, Lib::Libpmix2] {
        let (out, _) = two_hosts(&job, &[&exe, "publish"], lib);
        assert_eq!(out.status.code(), Some(0), "{}", show(&out));
        let got = publish_lines(&out);
        for r in 0..TWO_HOSTS_N {
            let want = format!("mpi_dropin rank {r}: publish 0 lookup 0 mpi-dropin-port");
            assert!(
                got.contains(&want),
                "ranks on {lib:?}: no {want:?}:\n{}",
                show(&out)
            );
        }
    }
}

/// `tests/c/<name>.c` built with libpmix_ffi and with libpmix2 in `job`'s
/// directory, labelled, with the library each build's ranks load; `None` (after the
/// notice) without OpenPMIx.
fn both_builds(job: &Job, name: &str) -> Option<[(&'static str, PathBuf, Lib); 2]> {
    let c_dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c"));
    let dir = job.exe.parent().expect("job dir").to_path_buf();
    let ours = cprog::build_ours(&c_dir, name, &dir);
    let theirs = cprog::build_openpmix(&c_dir, name, &dir, &format!("{name}.c on two hosts"))?;
    Some([
        ("libpmix_ffi", ours, Lib::Ours),
        ("libpmix2", theirs, Lib::Libpmix2),
    ])
}

/// `exe args` on the two fake hosts ([`two_hosts`]) with its ranks on `lib`: the job
/// exits 0, every rank printed `ok(r)`, and mpirun and both orteds mapped our library
/// alone.
fn two_hosts_ok(
    job: &Job,
    what: &str,
    exe: &Path,
    args: &[&str],
    lib: Lib,
    ok: &dyn Fn(u32) -> String,
) {
    let exe = exe.display().to_string();
    let argv: Vec<&str> = std::iter::once(exe.as_str())
        .chain(args.iter().copied())
        .collect();
    let (out, seen) = two_hosts(job, &argv, lib);
    assert_eq!(out.status.code(), Some(0), "{what}:\n{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    for r in 0..TWO_HOSTS_N {
        let want = ok(r);
        assert!(text.contains(&want), "{what}: no {want:?}:\n{}", show(&out));
    }
    check_launchers_ours(what, job, &seen, &out);
}

#[test]
fn mpirun_and_two_orteds_on_our_library_serve_pmix_programs_of_both_libraries_across_hosts() {
    // tests/c/nodes.c on 8 ranks: PMIX_LOCAL_PEERS names the 4 of each host, keys
    // put LOCAL / REMOTE / GLOBAL are seen as their scope says across the two
    // orteds, with the fence collecting data and by direct modex.
    let Some(job) = job("two-hosts-nodes") else {
        return;
    };
    let Some(builds) = both_builds(&job, "nodes") else {
        return;
    };
    for (label, exe, lib) in &builds {
        for mode in ["collect", "direct"] {
            let what = format!("nodes {mode} ({label}) under mpirun + 2 orteds on ours");
            two_hosts_ok(&job, &what, exe, &[mode], *lib, &|r| {
                format!("nodes rank {r}: ok (4 on this node)")
            });
        }
    }
}

#[test]
fn mpirun_and_two_orteds_on_our_library_build_groups_across_hosts_for_both_libraries() {
    // tests/c/comm_from_group.c on 8 ranks, 4 per fake host: construct and destruct
    // over both orteds run on ORTE's fence (it has no group upcall), local CIDs are
    // read on every host, a leave reaches the other host's members before the
    // destruct (the daemons carry it as an event), and the later groups list single
    // ranks of both hosts.
    let Some(job) = job("two-hosts-groups") else {
        return;
    };
    let Some(builds) = both_builds(&job, "comm_from_group") else {
        return;
    };
    for (label, exe, lib) in &builds {
        let what = format!("comm_from_group ({label}) under mpirun + 2 orteds on ours");
        two_hosts_ok(&job, &what, exe, &[], *lib, &|r| {
            format!("comm_from_group rank {r}: ok")
        });
    }
}

#[test]
fn an_invite_and_join_across_mpiruns_two_orteds_makes_a_group_known_on_both_hosts() {
    // tests/c/group_invite.c on 8 ranks, 4 per fake host: rank 0 invites the others,
    // rank 7 declines; the invitation, the answers and the completion cross the
    // orteds as events, each host's server follows them, and the members on both
    // hosts fence over the group (which needs it known on both) and destruct it.
    let Some(job) = job("two-hosts-invite") else {
        return;
    };
    let Some(builds) = both_builds(&job, "group_invite") else {
        return;
    };
    for (label, exe, lib) in &builds {
        let what = format!("group_invite ({label}) under mpirun + 2 orteds on ours");
        two_hosts_ok(&job, &what, exe, &[], *lib, &|r| {
            format!("group_invite rank {r}: ok")
        });
    }
}

/// Runs `exe` (tests/c/group_kill.c) on 8 ranks across the two fake hosts with
/// `mpirun --enable-recovery` on our library, FT or not: once rank 7 wrote its pid
/// it is killed (SIGKILL, by that pid); once the 7 survivors printed their `ok` line
/// (or 60 s passed) mpirun and the orteds this run started are ended by pid
/// (`--enable-recovery` keeps mpirun up after a loss, with OpenPMIx too). Returns
/// what the ranks printed.
fn two_hosts_kill(job: &Job, exe: &Path, ft: bool, lib: Lib) -> String {
    let dir = job
        .exe
        .with_file_name(format!("two-hosts-kill-{ft}-{lib:?}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir(&dir).expect("mkdir");
    let agent = shared::write_fake_host_agent(&dir);
    let driver = r#"set -u
cd "$1"; shift
"$@" > out 2>&1 < /dev/null &
m=$!
i=0; while [ ! -s pid ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
[ -s pid ] && kill -KILL "$(cat pid)"
i=0; while [ "$(grep -c ': ok$' out)" -lt 7 ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i+1)); done
kill -TERM $m 2>/dev/null; sleep 1; kill -KILL $m 2>/dev/null
for p in $(cat launchers.pids 2>/dev/null); do kill -KILL $p 2>/dev/null; done
wait $m 2>/dev/null
cat out
"#;
    let mut cmd = clean("sh");
    cmd.env("LD_LIBRARY_PATH", &job.dropin)
        .env("GROUP_KILL_FT", if ft { "1" } else { "0" })
        .env("GROUP_KILL_PIDFILE", dir.join("pid"))
        .args(["-c", driver, "sh"])
        .arg(&dir)
        .arg("mpirun")
        .args(shared::fake_hosts_mpirun_args(&agent))
        .arg("--enable-recovery")
        .args(["-x", "GROUP_KILL_FT", "-x", "GROUP_KILL_PIDFILE"]);
    if let Lib::Libpmix2 = lib {
        cmd.arg("-x").arg("LD_LIBRARY_PATH=/nonexistent");
    }
    cmd.args(["-np", &TWO_HOSTS_N.to_string()]).arg(exe);
    let out = output_within(&mut cmd, LIMIT);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_member_killed_during_a_construct_across_hosts_leaves_every_survivor_the_same_answer() {
    // tests/c/group_kill.c on 8 ranks over mpirun's two orteds on our library: rank
    // 7 (on the second host) is killed while the others construct over all 8. With
    // PMIX_GROUP_FT_COLLECTIVE every survivor, on both hosts, gets success; without
    // it, every survivor gets PMIX_GROUP_CONSTRUCT_ABORT; nobody hangs.
    let Some(job) = job("two-hosts-group-kill") else {
        return;
    };
    let Some(builds) = both_builds(&job, "group_kill") else {
        return;
    };
    for (label, exe, lib) in &builds {
        for ft in [true, false] {
            let text = two_hosts_kill(&job, exe, ft, *lib);
            for r in 0..TWO_HOSTS_N - 1 {
                let want = format!("group_kill rank {r}: ok");
                assert!(
                    text.lines().any(|l| l == want),
                    "{label}, FT {ft}: no {want:?} in\n{text}"
                );
            }
        }
    }
}

#[test]
fn mpi4py_ranks_on_our_libpmix_so_2_run_collectives_under_mpirun() {
    let Some(job) = job("mpirun-mpi4py") else {
        return;
    };
    let Some(py) = mpi4py("mpi4py under mpirun") else {
        return;
    };
    let out = mpirun(&job, &[py, &script(), "4"], Lib::Ours, false);
    check_ok("mpi4py under mpirun", "mpi4py_dropin", &job, &out);
}

#[test]
fn mpirun_itself_on_our_libpmix_so_2_serves_one_node_jobs_and_ends_an_aborted_one() {
    // mpirun's own server is then ours (its upcalls into Open MPI included). An abort
    // ends the job with its code, without crashing mpirun (Open MPI's event handler
    // needs a non-NULL info array); its message goes to mpirun by PMIx_Log and the
    // host's log upcall, and mpirun prints it, but not always (it loses it now and
    // then with libpmix2 too: `check_abort`). A client's finalize is answered once
    // mpirun's client_finalized upcall called back, so mpirun never reaps a rank it
    // thinks unfinalized ("exiting improperly").
    let Some(job) = job("mpirun-ours") else {
        return;
    };
    let exe = job.exe.display().to_string();
    for _ in 0..3 {
        let out = mpirun(&job, &[&exe, "basic", "4"], Lib::Ours, true);
        assert!(
            !String::from_utf8_lossy(&out.stderr).contains("exiting improperly"),
            "{}",
            show(&out)
        );
        check_ok("mpirun on ours, ranks on ours", "mpi_dropin", &job, &out);
        check_parent_openpmix("mpirun on ours", &out, false);
    }
    let out = mpirun(&job, &[&exe, "abort"], Lib::Ours, true);
    check_abort("mpirun on ours, abort", &out, false);
}

#[test]
fn mpirun_on_our_library_serves_pmix_programs_of_both_libraries_as_with_openpmix() {
    // Our own C programs of what OpenPMIx's examples do: keys by scope (nodes.c, one
    // node: every rank local), log, job-control declarations, heartbeat monitors and
    // namespace-built keys (logmon.c); under mpirun on OpenPMIx and on our library
    // they end alike, for ranks of either library.
    let Some(job) = job("mpirun-ours-pmix") else {
        return;
    };
    let c_dir = PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/c"));
    let dir = job.exe.parent().expect("job dir").to_path_buf();
    for name in ["nodes", "logmon"] {
        let ffi = cprog::build_ours(&c_dir, name, &dir);
        let Some(l2) = cprog::build_openpmix(&c_dir, name, &dir, "mpirun on ours") else {
            return;
        };
        for (exe, lib) in [(&ffi, Lib::Ours), (&l2, Lib::Libpmix2)] {
            let exe = exe.display().to_string();
            let args: &[&str] = if name == "nodes" { &["direct"] } else { &[] };
            let mut argv = vec![exe.as_str()];
            argv.extend(args);
            let openpmix = mpirun(&job, &argv, lib, false);
            let ours = mpirun(&job, &argv, lib, true);
            for (what, out) in [("OpenPMIx", &openpmix), ("ours", &ours)] {
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "{name} on {what}, {lib:?}:\n{}",
                    show(out)
                );
                let text = String::from_utf8_lossy(&out.stdout);
                for r in 0..N {
                    assert!(
                        text.contains(&format!("{name} rank {r}: ok")),
                        "{name} on {what}, {lib:?}: rank {r}:\n{}",
                        show(out)
                    );
                }
            }
        }
    }
}

// ---------------------------------------------------------------- pmix-run

#[test]
fn open_mpi_ranks_on_our_libpmix_so_2_run_under_pmix_run() {
    let Some(job) = job("pmix-run") else {
        return;
    };
    let exe = job.exe.display().to_string();
    let out = pmix_run(&job, &[&exe, "basic", "4"], Lib::Ours);
    check_ok("pmix-run, basic", "mpi_dropin", &job, &out);
    check_parent_openpmix("pmix-run", &out, false);
    let theirs = pmix_run(&job, &[&exe, "publish"], Lib::Libpmix2);
    let ours = pmix_run(&job, &[&exe, "publish"], Lib::Ours);
    assert_eq!(ours.status.code(), Some(0), "{}", show(&ours));
    assert_eq!(
        publish_lines(&ours),
        publish_lines(&theirs),
        "{}",
        show(&ours)
    );
    let out = pmix_run(&job, &[&exe, "abort"], Lib::Ours);
    check_abort("pmix-run, abort", &out, true);
}

#[test]
fn mpi4py_ranks_on_our_libpmix_so_2_run_collectives_under_pmix_run() {
    let Some(job) = job("pmix-run-mpi4py") else {
        return;
    };
    let Some(py) = mpi4py("mpi4py under pmix-run") else {
        return;
    };
    let out = pmix_run(&job, &[py, &script(), "4"], Lib::Ours);
    check_ok("mpi4py under pmix-run", "mpi4py_dropin", &job, &out);
}

// ---------------------------------------------------------------- srun

/// Whether partition `part` has a node up for `srun --mpi=pmix` (else the notice).
fn partition_up(part: &str, what: &str) -> bool {
    let present = clean("srun")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    let problem = if !present {
        Some("srun not found".to_owned())
    } else {
        let sinfo = output_within(
            clean("sinfo").args(["-h", "-p", part, "-o", "%t"]),
            Duration::from_secs(60),
        );
        let states = String::from_utf8_lossy(&sinfo.stdout).into_owned();
        let up = states
            .lines()
            .any(|s| matches!(s.trim(), "idle" | "mix" | "alloc" | "comp"));
        (!up).then(|| format!("no node of partition {part} up ({})", states.trim()))
    };
    match problem {
        None => true,
        Some(why) => {
            peer_absent(&format!("{what} under srun: {why}"), "bash .ci/slurm-up.sh");
            false
        }
    }
}

/// `srun -p PART -N 1 --mpi=pmix -n 4` of `argv` with the ranks on `lib`.
fn srun(job: &Job, part: &str, argv: &[&str], lib: Lib) -> Output {
    srun_on(job, part, 1, argv, lib)
}

/// [`srun`] on `nodes` nodes. Two nodes of this one machine talk over TCP (two
/// Open MPI "nodes" on one host would share shared-memory segment names) and fence
/// with Slurm's ring (its tree does not span two node names on one host:
/// `run_slurm_hosted.rs`).
fn srun_on(job: &Job, part: &str, nodes: u32, argv: &[&str], lib: Lib) -> Output {
    let mut cmd = clean("srun");
    if nodes == 1 {
        cmd.env("OMPI_MCA_btl", "self,vader");
    } else {
        cmd.env("OMPI_MCA_btl", "self,tcp")
            .env("OMPI_MCA_btl_tcp_if_include", "lo")
            .env("SLURM_PMIX_FENCE", "ring");
    }
    if let Lib::Ours = lib {
        cmd.env("LD_LIBRARY_PATH", &job.dropin);
    }
    cmd.args(["-p", part, "-N", &nodes.to_string(), "--mpi=pmix"])
        .args(["-n", &N.to_string()])
        .args(argv);
    output_within(&mut cmd, LIMIT)
}

/// `.ci/slurm-up.sh`'s overlay: the file partition `ours`'s slurmds load as the
/// plugin's `libpmix.so`.
const OURS_SERVER: &str = "/run/pmix-rs-slurm/libpmix.so";

/// Installs this run's library as partition `ours`'s server (copy, then rename: a
/// slurmstepd loading it never sees a partial file); the guard keeps this file's
/// tests from installing it while another one runs.
fn install_our_server(job: &Job) -> std::sync::MutexGuard<'static, ()> {
    static ONE: OnceLock<Mutex<()>> = OnceLock::new();
    let guard = ONE
        .get_or_init(|| Mutex::new(()))
        .lock()
        .unwrap_or_else(PoisonError::into_inner);
    let dst = Path::new(OURS_SERVER);
    let tmp = dst.with_file_name(format!(".libpmix.so.{}", std::process::id()));
    std::fs::copy(&job.ours, &tmp).expect("copy our library to the overlay");
    std::fs::rename(&tmp, dst).expect("rename it to libpmix.so");
    guard
}

#[test]
fn open_mpi_ranks_on_our_libpmix_so_2_run_under_srun_with_openpmix_server() {
    if !partition_up("debug", "Open MPI on ours") {
        return;
    }
    let Some(job) = job("srun-debug") else {
        return;
    };
    let exe = job.exe.display().to_string();
    let out = srun(&job, "debug", &[&exe, "basic", "4"], Lib::Ours);
    check_ok("srun -p debug", "mpi_dropin", &job, &out);
    check_parent_openpmix("srun -p debug (slurmstepd)", &out, true);
    // Slurm's server has no publish: MPI_Lookup_name fails alike.
    let theirs = srun(&job, "debug", &[&exe, "publish"], Lib::Libpmix2);
    let ours = srun(&job, "debug", &[&exe, "publish"], Lib::Ours);
    assert_eq!(ours.status.code(), theirs.status.code(), "{}", show(&ours));
    assert_eq!(
        publish_lines(&ours),
        publish_lines(&theirs),
        "{}",
        show(&ours)
    );
    let out = srun(&job, "debug", &[&exe, "abort"], Lib::Ours);
    check_abort("srun -p debug, abort", &out, true);
}

#[test]
fn open_mpi_ranks_on_either_library_run_under_srun_with_our_server() {
    if !partition_up("ours", "Open MPI on our server") {
        return;
    }
    if !Path::new(OURS_SERVER).exists() {
        peer_absent(
            &format!("Open MPI on our server under srun: no {OURS_SERVER}"),
            "bash .ci/slurm-up.sh",
        );
        return;
    }
    let Some(job) = job("srun-ours") else {
        return;
    };
    let _installed = install_our_server(&job);
    let exe = job.exe.display().to_string();
    let out = srun(&job, "ours", &[&exe, "basic", "4"], Lib::Ours);
    check_ok("srun -p ours, ranks on ours", "mpi_dropin", &job, &out);
    check_parent_openpmix("srun -p ours (slurmstepd)", &out, false);
    let out = srun(&job, "ours", &[&exe, "basic", "4"], Lib::Libpmix2);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let theirs = srun(&job, "ours", &[&exe, "publish"], Lib::Libpmix2);
    let ours = srun(&job, "ours", &[&exe, "publish"], Lib::Ours);
    assert_eq!(ours.status.code(), Some(0), "{}", show(&ours));
    assert_eq!(
        publish_lines(&ours),
        publish_lines(&theirs),
        "{}",
        show(&ours)
    );
    let out = srun(&job, "ours", &[&exe, "abort"], Lib::Ours);
    check_abort("srun -p ours, abort", &out, true);
}

#[test]
fn open_mpi_programs_on_either_library_run_across_two_slurm_nodes_with_our_server() {
    if !partition_up("ours", "Open MPI across two nodes on our server") {
        return;
    }
    let Some(job) = job("srun-ours-two") else {
        return;
    };
    let _installed = install_our_server(&job);
    let exe = job.exe.display().to_string();
    let out = srun_on(&job, "ours", 2, &[&exe, "basic", "4"], Lib::Ours);
    check_ok("srun -p ours -N 2, ranks on ours", "mpi_dropin", &job, &out);
    check_parent_openpmix("srun -p ours -N 2 (slurmstepd)", &out, false);
    let out = srun_on(&job, "ours", 2, &[&exe, "basic", "4"], Lib::Libpmix2);
    assert_eq!(out.status.code(), Some(0), "{}", show(&out));
    let out = srun_on(&job, "ours", 2, &[&exe, "abort"], Lib::Ours);
    check_abort("srun -p ours -N 2, abort", &out, true);
}
