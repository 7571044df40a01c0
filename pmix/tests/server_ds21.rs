//! Unmodified libpmix2 4.2.2 clients (Debian's, through `pkg-config pmix`) under our
//! server read OpenPMIx's ds21 shared-memory store (docs/serving.md §5.7): the job's
//! values and their peers' committed values come from the files, with no GETNB; a
//! client without the files falls back to `hash` and its gets go by message; and
//! readers killed in the middle of their gets, 200 times, never block the server,
//! whose mutexes are robust.

mod client_common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use pmix::server::{NamespaceSpec, ds21_dir};
use pmix::{Pmix, Server, ServerConfig};
use pmix_testkit::TempDir;
use pmix_testkit::cprog::{clean_command, compile, openpmix_for};
use pmix_wire::{Info, Scope, Value};

/// Puts a LOCAL and a GLOBAL value, commits, fences (collecting), then gets every
/// rank's two values and `pmix.lrank`, and the job size; prints them.
const MODEX: &str = r#"
#include <pmix.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
    pmix_proc_t me, p;
    pmix_value_t v, *val = NULL;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) { fprintf(stderr, "init %d\n", rc); return 1; }
    PMIX_LOAD_PROCID(&p, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&p, PMIX_JOB_SIZE, NULL, 0, &val);
    if (rc != PMIX_SUCCESS) { fprintf(stderr, "job size %d\n", rc); return 1; }
    uint32_t n = val->data.uint32;
    printf("rank %u size %u\n", me.rank, n);
    v.type = PMIX_UINT32; v.data.uint32 = 1000 + me.rank;
    PMIx_Put(PMIX_LOCAL, "local.key", &v);
    char s[32]; snprintf(s, sizeof s, "global-%u", me.rank);
    v.type = PMIX_STRING; v.data.string = s;
    PMIx_Put(PMIX_GLOBAL, "global.key", &v);
    if (PMIx_Commit() != PMIX_SUCCESS) return 1;
    pmix_info_t inf; bool t = true;
    PMIX_INFO_LOAD(&inf, PMIX_COLLECT_DATA, &t, PMIX_BOOL);
    rc = PMIx_Fence(NULL, 0, &inf, 1);
    if (rc != PMIX_SUCCESS) { fprintf(stderr, "fence %d\n", rc); return 1; }
    for (uint32_t r = 0; r < n; r++) {
        PMIX_LOAD_PROCID(&p, me.nspace, r);
        rc = PMIx_Get(&p, "local.key", NULL, 0, &val);
        printf("rank %u sees %u local.key %d %u\n", me.rank, r, rc, rc ? 0 : val->data.uint32);
        rc = PMIx_Get(&p, "global.key", NULL, 0, &val);
        printf("rank %u sees %u global.key %d %s\n", me.rank, r, rc, rc ? "" : val->data.string);
        rc = PMIx_Get(&p, PMIX_LOCAL_RANK, NULL, 0, &val);
        printf("rank %u sees %u lrank %d %u\n", me.rank, r, rc, rc ? 0 : val->data.uint16);
    }
    PMIx_Fence(NULL, 0, NULL, 0);
    PMIx_Finalize(NULL, 0);
    return 0;
}
"#;

/// Reads, until killed: the next rank's `pmix.lrank` and the last rank's "k".
const READER: &str = r#"
#include <pmix.h>
#include <stdio.h>

int main(void)
{
    pmix_proc_t me, p;
    pmix_value_t *val = NULL;
    if (PMIx_Init(&me, NULL, 0) != PMIX_SUCCESS) return 1;
    PMIX_LOAD_PROCID(&p, me.nspace, PMIX_RANK_WILDCARD);
    if (PMIx_Get(&p, PMIX_JOB_SIZE, NULL, 0, &val) != PMIX_SUCCESS) return 1;
    uint32_t n = val->data.uint32;
    printf("reading\n");
    fflush(stdout);
    for (uint32_t i = 0;; i++) {
        PMIX_LOAD_PROCID(&p, me.nspace, i % n);
        if (PMIx_Get(&p, PMIX_LOCAL_RANK, NULL, 0, &val) == PMIX_SUCCESS) PMIX_VALUE_RELEASE(val);
        PMIX_LOAD_PROCID(&p, me.nspace, n - 1);
        if (PMIx_Get(&p, "k", NULL, 0, &val) == PMIX_SUCCESS) PMIX_VALUE_RELEASE(val);
    }
}
"#;

fn build(dir: &TempDir, name: &str, src: &str) -> Option<PathBuf> {
    let pmix = openpmix_for("libpmix2 clients on ds21")?;
    let c = dir.0.join(format!("{name}.c"));
    let exe = dir.0.join(name);
    std::fs::write(&c, src).unwrap();
    compile(&c, &exe, &[&pmix.include_dir], &pmix.link);
    Some(exe)
}

fn quiet() -> ServerConfig {
    ServerConfig {
        log: false,
        ..ServerConfig::default()
    }
}

fn spawn(exe: &Path, env: Vec<(String, String)>) -> Child {
    let mut cmd = clean_command(exe);
    cmd.envs(env)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    cmd.spawn().unwrap()
}

/// Waits for `child` at most `limit`; kills it past that. Its stdout.
fn finish(mut child: Child, limit: Duration) -> String {
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            let out = child.wait_with_output().unwrap();
            assert!(
                status.success(),
                "{status}: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            return String::from_utf8_lossy(&out.stdout).into_owned();
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().unwrap();
            panic!(
                "no end within {limit:?}: {}\n{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Rank `rank` of `nspace` as our client, in this process.
fn our_client(server: &Server, nspace: &str, rank: u32) -> Pmix {
    client_common::client(client_common::env_of(server, nspace, rank, &[]))
}

/// What `MODEX` run by `n` ranks of `nspace` must print.
fn expected(nspace_ranks: u32) -> Vec<String> {
    let mut lines = Vec::new();
    for me in 0..nspace_ranks {
        lines.push(format!("rank {me} size {nspace_ranks}"));
        for r in 0..nspace_ranks {
            lines.push(format!("rank {me} sees {r} local.key 0 {}", 1000 + r));
            lines.push(format!("rank {me} sees {r} global.key 0 global-{r}"));
            lines.push(format!("rank {me} sees {r} lrank 0 {r}"));
        }
    }
    lines.sort();
    lines
}

fn run_modex(server: &Server, exe: &Path, nspace: &str, n: u32, gds: Option<&str>) -> Vec<String> {
    let children: Vec<Child> = (0..n)
        .map(|r| {
            let mut env = server.client_env(nspace, r);
            if let Some(g) = gds {
                env.push(("PMIX_MCA_gds".into(), g.into()));
            }
            spawn(exe, env)
        })
        .collect();
    let mut lines: Vec<String> = children
        .into_iter()
        .flat_map(|c| {
            finish(c, Duration::from_secs(60))
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    lines.sort();
    lines
}

#[test]
fn libpmix2_clients_read_the_job_and_their_peers_values_from_ds21_without_a_get() {
    let dir = TempDir::new("ds21-modex");
    let Some(exe) = build(&dir, "modex", MODEX) else {
        return;
    };
    let server = Server::start(quiet()).unwrap();
    let (uid, gid) = pmix::server::net::effective_ids();
    let ns = "ds21.modex";
    server
        .add_namespace(NamespaceSpec::single_node(ns, 4, uid, gid))
        .unwrap();
    // The files, before any client starts.
    let store = ds21_dir(server.tmpdir(), ns);
    let mut files: Vec<String> = std::fs::read_dir(&store)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            "initial-pmix_shared-segment-0".to_string(),
            format!("smdataseg-{ns}-0"),
            format!("smlockseg-{ns}"),
            format!("smseg-{ns}-0"),
        ]
    );
    let env = server.client_env(ns, 0);
    assert!(env.contains(&("PMIX_GDS_MODULE".into(), "pxns,ds21,hash".into())));
    assert!(env.contains(&(
        "PMIX_DSTORE_21_BASE_PATH".into(),
        store.to_string_lossy().into_owned()
    )));
    let lines = run_modex(&server, &exe, ns, 4, None);
    assert_eq!(lines, expected(4));
    // Every value came from the files: not one GETNB.
    assert_eq!(server.stats().gets, 0);
    // The same program on hash: the same lines, by message.
    let hash = "ds21.hash";
    server
        .add_namespace(NamespaceSpec::single_node(hash, 4, uid, gid))
        .unwrap();
    assert_eq!(run_modex(&server, &exe, hash, 4, Some("hash")), expected(4));
    assert!(server.stats().gets > 0);
    // The store goes with its namespace.
    server.remove_namespace(ns).unwrap();
    assert!(!store.exists());
    server.shutdown().unwrap();
}

#[test]
fn without_the_files_a_libpmix2_client_falls_back_to_hash() {
    let dir = TempDir::new("ds21-missing");
    let Some(exe) = build(&dir, "modex", MODEX) else {
        return;
    };
    let server = Server::start(quiet()).unwrap();
    let (uid, gid) = pmix::server::net::effective_ids();
    let ns = "ds21.missing";
    server
        .add_namespace(NamespaceSpec::single_node(ns, 2, uid, gid))
        .unwrap();
    std::fs::remove_dir_all(ds21_dir(server.tmpdir(), ns)).unwrap();
    assert_eq!(run_modex(&server, &exe, ns, 2, None), expected(2));
    assert!(server.stats().gets > 0, "its gets went by message");
    server.shutdown().unwrap();
}

#[test]
fn our_clients_commits_reach_libpmix2_readers_through_ds21() {
    let dir = TempDir::new("ds21-mixed");
    let Some(exe) = build(&dir, "modex", MODEX) else {
        return;
    };
    let server = Server::start(quiet()).unwrap();
    let (uid, gid) = pmix::server::net::effective_ids();
    let ns = "ds21.mixed";
    server
        .add_namespace(NamespaceSpec::single_node(ns, 3, uid, gid))
        .unwrap();
    // Rank 2 is ours, in this process: its commit goes in the files too.
    let ours = our_client(&server, ns, 2);
    let children: Vec<Child> = (0..2)
        .map(|r| spawn(&exe, server.client_env(ns, r)))
        .collect();
    let c = ours.client().unwrap();
    c.put(Scope::LOCAL, "local.key", Value::Uint32(1002))
        .unwrap();
    c.put(Scope::GLOBAL, "global.key", Value::string("global-2"))
        .unwrap();
    c.commit().unwrap();
    c.fence(&[], &[Info::new("pmix.collect", true)]).unwrap();
    let gets_before = server.stats().gets;
    // Ours reads theirs (by message or its fence segment), they read ours.
    for r in 0..2 {
        assert_eq!(
            c.get(ns, r, "local.key", &[]).unwrap(),
            Value::Uint32(1000 + r)
        );
    }
    c.fence(&[], &[]).unwrap();
    let mut lines: Vec<String> = children
        .into_iter()
        .flat_map(|ch| {
            finish(ch, Duration::from_secs(60))
                .lines()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .collect();
    lines.sort();
    let want: Vec<String> = expected(3)
        .into_iter()
        .filter(|l| !l.starts_with("rank 2 "))
        .collect();
    assert_eq!(lines, want);
    // Our client's one get named the fence segment; the libpmix2 ranks asked
    // nothing.
    assert_eq!(server.stats().gets - gets_before, 1);
    ours.finalize().unwrap();
    server.shutdown().unwrap();
}

/// A pseudo-random number (xorshift).
fn next(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
fn readers_killed_mid_get_200_times_never_block_the_ds21_writer() {
    const KILLS: u32 = 200;
    let dir = TempDir::new("ds21-kills");
    let Some(exe) = build(&dir, "reader", READER) else {
        return;
    };
    let server = Server::start(quiet()).unwrap();
    let (uid, gid) = pmix::server::net::effective_ids();
    let ns = "ds21.kills";
    // One rank per reader, and this process's writer, the last.
    let size = KILLS + 1;
    server
        .add_namespace(NamespaceSpec::single_node(ns, size, uid, gid))
        .unwrap();
    let writer = our_client(&server, ns, KILLS);
    let w = writer.client().unwrap();
    w.put(Scope::LOCAL, "k", Value::Uint32(0)).unwrap();
    w.commit().unwrap();
    let mut seed = u64::from(std::process::id()) << 16 | 1;
    let gets = server.stats().gets;
    for rank in 0..KILLS {
        let mut child = spawn(&exe, server.client_env(ns, rank));
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        out.read_line(&mut line).unwrap();
        assert_eq!(line.trim(), "reading", "rank {rank}");
        std::thread::sleep(Duration::from_micros(next(&mut seed) % 3000));
        // SAFETY: the test's own child, not reaped yet.
        assert_eq!(unsafe { libc::kill(child.id() as i32, libc::SIGKILL) }, 0);
        let _ = child.wait();
        // The writer takes every reader's lock, the dead one's included: a commit
        // (a ds21 write) completes at once.
        let t = Instant::now();
        w.put(Scope::LOCAL, "k", Value::Uint32(rank + 1)).unwrap();
        w.commit().unwrap();
        assert!(
            t.elapsed() < Duration::from_secs(1),
            "a commit took {:?}",
            t.elapsed()
        );
    }
    // The readers asked nothing: they read the files.
    assert_eq!(server.stats().gets, gets);
    writer.finalize().unwrap();
    server.shutdown().unwrap();
}
