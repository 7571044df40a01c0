//! `pmix::regex` against Debian's libpmix2 4.2.2 (through `pkg-config pmix`): a C
//! program calls `PMIx_generate_regex` / `PMIx_generate_ppn` after `PMIx_server_init`
//! and prints each answer; ours must be the same string, except where the module docs
//! say we differ on purpose (libpmix2 loses or reorders data there), which is pinned
//! here too so that a change on either side is seen.

use std::process::Command;

use pmix::regex::{generate_node_regex, generate_ppn, parse_nodes, parse_procs};
use pmix_testkit::cprog::{assert_ok, clean_command, compile, openpmix_for, output};
use pmix_testkit::{TempDir, peer_absent};

/// Takes `r INPUT` / `p INPUT` pairs; prints one line per pair: `ok ` and the answer
/// (bytes outside printable ASCII as `\xNN`), or `err ` and the status.
const PROBE: &str = r#"
#include <pmix.h>
#include <pmix_server.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    pmix_status_t rc = PMIx_server_init(NULL, NULL, 0);
    if (rc != PMIX_SUCCESS) {
        fprintf(stderr, "PMIx_server_init: %s\n", PMIx_Error_string(rc));
        return 1;
    }
    for (int i = 1; i + 1 < argc; i += 2) {
        char *out = NULL;
        if (argv[i][0] == 'r') {
            rc = PMIx_generate_regex(argv[i + 1], &out);
        } else {
            rc = PMIx_generate_ppn(argv[i + 1], &out);
        }
        if (rc != PMIX_SUCCESS || out == NULL) {
            printf("err %d\n", rc);
            continue;
        }
        fputs("ok ", stdout);
        for (const unsigned char *c = (const unsigned char *) out; *c; c++) {
            if (*c >= 32 && *c < 127 && *c != '\\') {
                putchar(*c);
            } else {
                printf("\\x%02x", *c);
            }
        }
        putchar('\n');
        free(out);
    }
    PMIx_server_finalize();
    return 0;
}
"#;

/// Inputs where our answer is libpmix2's.
const SAME_NODES: &[&str] = &[
    "n1,n2",
    "node01,node02,node03,node10",
    "localhost",
    "n01,n02,n10",
    "n9,n10,n11",
    "a1,b1,a2",
    "host1a,host2a,host3b",
    "c1n1,c1n2,c2n1",
    "node-1,node-2",
    "1,2,3",
    "n2,n1,n1",
    "n1,n2,",
    "",
];

const SAME_PPNS: &[&str] = &[
    "0,1,2,3;4,5,6,7",
    "0-3;4-7",
    "0;1",
    "0,1,2,3,7,8,9,10,11,12",
    "0,2,4,6,8,10;1,3,5,7,9,11",
    "0,1,2,3;;4,5,6,7",
];

/// Inputs where we differ on purpose: (input, libpmix2's answer, ours).
const DIFFERENT_NODES: &[(&str, &str, &str)] = &[
    (
        "n1,localhost,n2",
        "pmix[n[1:1-2],localhost]",
        "pmix[n[1:1],localhost,n[1:2]]",
    ),
    ("c1n[1-4]", "pmix[c1n[1-4]]", "raw:c1n[1-4]"),
    ("n1,,n2", "pmix[n[1:1-2],]", "pmix[n[1:1-2]]"),
];

const DIFFERENT_PPNS: &[(&str, &str, &str)] =
    &[("0-3,4-7,8,9,10,11", "pmix[0-4,8-11]", "pmix[0-11]")];

/// libpmix2's answers, one per `(kind, input)`.
fn libpmix2(calls: &[(char, String)]) -> Option<Vec<String>> {
    let cc_runs = Command::new("cc")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !cc_runs {
        peer_absent(
            "regex answers of libpmix2: cc not found",
            "apt-get install gcc",
        );
        return None;
    }
    let pmix = openpmix_for("regex answers of libpmix2")?;
    let dir = TempDir::new("regex-libpmix2");
    let src = dir.0.join("probe.c");
    let exe = dir.0.join("probe");
    std::fs::write(&src, PROBE).unwrap();
    compile(&src, &exe, &[&pmix.include_dir], &pmix.link);
    let mut cmd = clean_command(&exe);
    // PMIx_server_init writes its rendezvous files under the temporary directory.
    cmd.env("TMPDIR", &dir.0);
    for (kind, input) in calls {
        cmd.arg(kind.to_string()).arg(input);
    }
    let out = output(&mut cmd);
    assert_ok("the libpmix2 regex probe", &out);
    let text = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<String> = text.lines().map(str::to_owned).collect();
    assert_eq!(lines.len(), calls.len(), "probe output:\n{text}");
    Some(lines)
}

fn ours(kind: char, input: &str) -> String {
    let answer = if kind == 'r' {
        generate_node_regex(input)
    } else {
        generate_ppn(input)
    };
    format!("ok {}", answer.unwrap())
}

#[test]
fn generated_maps_match_libpmix2_except_where_documented() {
    let long_nodes = (1..=1000).map(|i| format!("n{i}")).collect::<Vec<_>>();
    let long_ranks = (0..=1500).map(|i| i.to_string()).collect::<Vec<_>>();
    let mut same: Vec<(char, String)> = SAME_NODES.iter().map(|s| ('r', s.to_string())).collect();
    same.extend(SAME_PPNS.iter().map(|s| ('p', s.to_string())));
    same.push(('r', long_nodes.join(",")));
    same.push(('p', long_ranks.join(",")));
    let mut calls = same.clone();
    calls.extend(DIFFERENT_NODES.iter().map(|(i, _, _)| ('r', i.to_string())));
    calls.extend(DIFFERENT_PPNS.iter().map(|(i, _, _)| ('p', i.to_string())));

    let Some(theirs) = libpmix2(&calls) else {
        return;
    };
    for ((kind, input), theirs) in same.iter().zip(&theirs) {
        assert_eq!(ours(*kind, input), *theirs, "{kind} {input:?}");
    }
    let different = DIFFERENT_NODES
        .iter()
        .map(|d| ('r', d))
        .chain(DIFFERENT_PPNS.iter().map(|d| ('p', d)));
    for ((kind, (input, libpmix2, mine)), theirs) in different.zip(&theirs[same.len()..]) {
        assert_eq!(
            *theirs,
            format!("ok {libpmix2}"),
            "libpmix2, {kind} {input:?}"
        );
        assert_eq!(
            ours(kind, input),
            format!("ok {mine}"),
            "ours, {kind} {input:?}"
        );
    }
}

#[test]
fn libpmix2_maps_parse_to_their_inputs() {
    let calls: Vec<(char, String)> = SAME_NODES
        .iter()
        .map(|s| ('r', s.to_string()))
        .chain(SAME_PPNS.iter().map(|s| ('p', s.to_string())))
        .collect();
    let Some(theirs) = libpmix2(&calls) else {
        return;
    };
    for ((kind, input), answer) in calls.iter().zip(&theirs) {
        let regex = answer.strip_prefix("ok ").expect("an answer");
        if *kind == 'r' {
            let names: Vec<&str> = input.split(',').filter(|n| !n.is_empty()).collect();
            assert_eq!(parse_nodes(regex).unwrap(), names, "{regex:?}");
        } else {
            let plain = parse_procs(input).unwrap();
            assert_eq!(parse_procs(regex).unwrap(), plain, "{regex:?}");
        }
    }
}
