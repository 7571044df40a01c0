//! A real OpenPMIx 4.2.2 client (Debian's libpmix2, through `pkg-config pmix`)
//! started with `Server::client_env`: PMIx_Init, PMIx_Get(PMIX_JOB_SIZE),
//! PMIx_Finalize.

use std::time::Duration;

use pmix::server::{Host, NamespaceSpec, ProcName, Reply};
use pmix::{Server, ServerConfig};
use pmix_testkit::TempDir;
use pmix_testkit::child::output_within;
use pmix_testkit::cprog::{assert_ok, clean_command, compile, openpmix_for};

const PROGRAM: &str = r#"
#include <pmix.h>
#include <stdio.h>

int main(void)
{
    pmix_proc_t me, job;
    pmix_value_t *val = NULL;
    pmix_status_t rc = PMIx_Init(&me, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    PMIX_LOAD_PROCID(&job, me.nspace, PMIX_RANK_WILDCARD);
    rc = PMIx_Get(&job, PMIX_JOB_SIZE, NULL, 0, &val);
    if (rc != PMIX_SUCCESS || val == NULL || val->type != PMIX_UINT32) {
        fprintf(stderr, "PMIx_Get(PMIX_JOB_SIZE): %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("nspace=%s rank=%u size=%u\n", me.nspace, me.rank, val->data.uint32);
    PMIX_VALUE_RELEASE(val);
    rc = PMIx_Finalize(NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_Finalize: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    printf("finalized\n");
    return 0;
}
"#;

const NS: &str = "io.openpmix";

#[test]
fn an_openpmix_client_inits_gets_its_job_size_and_finalizes() {
    let Some(pmix) = openpmix_for("an OpenPMIx client under our server") else {
        return;
    };
    let dir = TempDir::new("io-openpmix");
    let src = dir.0.join("client.c");
    let exe = dir.0.join("client");
    std::fs::write(&src, PROGRAM).unwrap();
    compile(&src, &exe, &[&pmix.include_dir], &pmix.link);

    let (tx, finalizes) = std::sync::mpsc::channel();
    let host = std::sync::Arc::new(Finalizes(tx));
    let server = Server::start_with_host(ServerConfig::default(), host).unwrap();
    let (uid, gid) = pmix::server::net::effective_ids();
    server
        .add_namespace(NamespaceSpec::single_node(NS, 2, uid, gid))
        .unwrap();
    for rank in 0..2 {
        let mut cmd = clean_command(&exe);
        cmd.envs(server.client_env(NS, rank));
        let out = output_within(&mut cmd, Duration::from_secs(120));
        assert_ok(&format!("rank {rank}"), &out);
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            stdout.contains(&format!("nspace={NS} rank={rank} size=2"))
                && stdout.contains("finalized"),
            "rank {rank}:\n{stdout}"
        );
    }
    let mut finalized = Vec::new();
    while let Ok((nspace, rank)) = finalizes.recv_timeout(Duration::from_secs(10)) {
        assert_eq!(nspace, NS);
        finalized.push(rank);
        if finalized.len() == 2 {
            break;
        }
    }
    assert_eq!(finalized, [0, 1]);
}

/// A host that passes on the finalizes it hears of.
struct Finalizes(std::sync::mpsc::Sender<ProcName>);

impl Host for Finalizes {
    fn client_finalized(&self, proc: ProcName, reply: Reply<()>) {
        let _ = self.0.send(proc);
        reply.send(Ok(()));
    }
}
