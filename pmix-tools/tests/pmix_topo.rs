//! `pmix-topo`, run as a program on the hwloc XML files of `testdata/hwloc-xml/`:
//! table and JSON output (read back into the types that write it), every exit status
//! (0, 2 with each PMIx error, 64 for every kind of usage error, clap's own included),
//! and what its source may not do (read files itself).

use std::path::Path;
use std::process::Command;

use pmix_testkit::child::output_within;

use pmix_tools::topo::report::{DistancesReport, ErrorReport, MatrixReport, MeasuredFrom};

fn data(name: &str) -> String {
    pmix_testkit::hwloc_xml(name).display().to_string()
}

fn xml(name: &str) -> String {
    format!("xml:{}", data(name))
}

mod topo_cli;

use topo_cli::{LIMIT, run, text};

#[test]
fn distances_table_is_aligned_with_a_legend() {
    let (out, err, code) = text(&run(&[
        "distances",
        "--source",
        &xml("24em64t-2n6c2t-pci.xml"),
        "--cpus",
        "1",
        "--types",
        "all",
    ]));
    assert_eq!((code, err.as_str()), (0, ""));
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 1 + 1 + 6 + 1, "{out}");
    assert_eq!(lines[0], "from cpus 1");
    let lines = &lines[1..];
    let head = lines[0];
    assert!(head.starts_with("TYPE"), "{out}");
    for col in ["PCI", "OSNAME", "UUID", "MIN", "MAX"] {
        assert!(head.contains(col), "{col} in {head}");
    }
    // Columns line up: every row has its PCI address where the header says PCI.
    let pci_col = head.find("PCI").unwrap();
    let uuid_col = head.find("UUID").unwrap();
    let max_end = head.len();
    for row in &lines[1..7] {
        assert_eq!(&row[pci_col..pci_col + 5], "0000:", "{row}");
        assert!(
            row[uuid_col..].starts_with("ipv")
                || row[uuid_col..].starts_with("fab")
                || row[uuid_col..].starts_with("blk"),
            "{row}"
        );
        assert_eq!(row.len(), max_end, "numbers right-aligned under MAX: {row}");
    }
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        [
            "BLOCK",
            "0000:00:1f.2",
            "sda",
            "blk://mirage004::sda",
            "32",
            "32"
        ]
    );
    assert_eq!(
        lines[2].split_whitespace().collect::<Vec<_>>(),
        [
            "NETWORK",
            "0000:04:00.0",
            "eth0",
            "ipv4://78:e7:d1:21:55:30",
            "33",
            "33"
        ]
    );
    assert!(lines[7].contains("tier"), "legend: {}", lines[7]);
}

#[test]
fn distances_json_follows_design_section_7() {
    let (out, _, code) = text(&run(&[
        "distances",
        "--source",
        &xml("power8gpudistances.xml"),
        "--origin",
        "cuda0",
        "--types",
        "coproc",
        "--format",
        "json",
    ]));
    assert_eq!(code, 0);
    assert_eq!(
        out.trim_end(),
        concat!(
            r#"{"status": "SUCCESS", "origin": "cuda0", "distances": ["#,
            r#"{"uuid": "gpu://drac-12.grenoble.grid5000.fr::cuda0", "osname": "cuda0", "type": "COPROC", "pci": "0002:01:00.0", "mindist": 0, "maxdist": 0}, "#,
            r#"{"uuid": "gpu://drac-12.grenoble.grid5000.fr::cuda1", "osname": "cuda1", "type": "COPROC", "pci": "0003:01:00.0", "mindist": 50, "maxdist": 50}, "#,
            r#"{"uuid": "gpu://drac-12.grenoble.grid5000.fr::cuda2", "osname": "cuda2", "type": "COPROC", "pci": "000a:01:00.0", "mindist": 66, "maxdist": 66}, "#,
            r#"{"uuid": "gpu://drac-12.grenoble.grid5000.fr::cuda3", "osname": "cuda3", "type": "COPROC", "pci": "000b:01:00.0", "mindist": 66, "maxdist": 66}]}"#
        )
    );
    let report: DistancesReport = serde_json::from_str(&out).unwrap();
    assert_eq!(report.status, "SUCCESS");
    assert_eq!(report.from, MeasuredFrom::Origin("cuda0".into()));
    let dists: Vec<(&str, u16)> = report
        .distances
        .iter()
        .map(|d| (d.osname.as_str(), d.mindist))
        .collect();
    assert_eq!(
        dists,
        [("cuda0", 0), ("cuda1", 50), ("cuda2", 66), ("cuda3", 66)]
    );
}

#[test]
fn json_pci_is_null_without_pci_and_the_hostname_option_applies() {
    let (out, _, code) = text(&run(&[
        "distances",
        "--source",
        &xml("cxlmem+dax.v3.xml"),
        "--cpus",
        "0-3",
        "--types",
        "0x1",
        "--id",
        "dax0.0",
        "--id",
        "sda",
        "--hostname",
        "n\"1",
        "--format",
        "json",
    ]));
    assert_eq!(code, 0, "{out}");
    assert_eq!(
        out.trim_end(),
        concat!(
            r#"{"status": "SUCCESS", "cpus": "0-3", "distances": ["#,
            r#"{"uuid": "blk://n\"1::sda", "osname": "sda", "type": "BLOCK", "pci": "0000:00:1f.2", "mindist": 0, "maxdist": 0}, "#,
            r#"{"uuid": "blk://n\"1::dax0.0", "osname": "dax0.0", "type": "BLOCK", "pci": null, "mindist": 0, "maxdist": 0}]}"#
        )
    );
}

#[test]
fn cpus_spanning_packages_give_min_and_max() {
    let (out, _, code) = text(&run(&[
        "distances",
        "--source",
        &xml("16intel64-manyVFs.xml"),
        "--cpus",
        "0,8",
        "--types",
        "network",
    ]));
    assert_eq!(code, 0);
    let eth0: Vec<&str> = out
        .lines()
        .find(|l| l.contains(" eth0 "))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(&eth0[eth0.len() - 2..], ["1", "33"], "{out}");
}

#[test]
fn default_cpus_are_the_process_binding() {
    // Packages of this machine alternate cpus (even, odd): on a test machine bound to
    // cpus 0-1, cpu 0 alone, cpu 1 alone and both give three different answers.
    let f = xml("24em64t-2n6c2t-pci.xml");
    let json = ["--types", "all", "--format", "json"];
    let unbound = run(&[&["distances", "--source", &f][..], &json].concat());
    let given = run(&[
        &[
            "distances",
            "--source",
            &f,
            "--cpus",
            &pmix_testkit::kernel_cpus_allowed_list(),
        ][..],
        &json,
    ]
    .concat());
    assert_eq!(text(&unbound).2, 0, "{}", text(&unbound).1);
    assert_eq!(text(&unbound).0, text(&given).0);
    let report: DistancesReport = serde_json::from_str(&text(&unbound).0).unwrap();
    assert_eq!(
        report.from,
        MeasuredFrom::Cpus(pmix_testkit::kernel_cpus_allowed_list())
    );
    // Pinned with taskset to the last cpu it may use, it reports from that cpu alone.
    let last = pmix_testkit::kernel_cpus_allowed_list()
        .rsplit([',', '-'])
        .next()
        .unwrap()
        .to_owned();
    let mut pinned = Command::new("taskset");
    pinned
        .args([
            "-c",
            &last,
            env!("CARGO_BIN_EXE_pmix-topo"),
            "distances",
            "--source",
            &f,
        ])
        .args(json);
    let pinned = output_within(&mut pinned, LIMIT);
    let given = run(&[&["distances", "--source", &f, "--cpus", &last][..], &json].concat());
    assert_eq!(text(&pinned).0, text(&given).0);
}

#[test]
fn cpus_outside_the_machine_are_a_usage_error_naming_them() {
    let f = xml("24em64t-2n6c2t-pci.xml");
    let (out, err, code) = text(&run(&["distances", "--source", &f, "--cpus", "1,999999"]));
    assert_eq!(code, 64, "{out}{err}");
    assert!(
        err.starts_with(
            "pmix-topo: --cpus 1,999999: PU 999999 is not in this machine, whose PUs are 0-23\n"
        ),
        "{err}"
    );
    let (_, err, code) = text(&run(&["distances", "--source", &f, "--cpus", "100-103"]));
    assert_eq!(code, 64);
    assert!(
        err.contains("PUs 100-103 are not in this machine, whose PUs are 0-23"),
        "{err}"
    );
    // The matrix and tree take no --cpus; a list inside the machine is accepted.
    let (_, _, code) = text(&run(&["distances", "--source", &f, "--cpus", "0-23"]));
    assert_eq!(code, 0);
}

#[test]
fn default_binding_outside_the_topology_is_bad_param_naming_its_pus() {
    // A one-package machine whose PUs are 8-11: this test process is bound to cpus
    // the machine does not have only if its binding misses 8-11, so pin it to cpu 0.
    let dir = pmix_testkit::TempDir::new("topo-pus-8-11");
    let file = dir.0.join("pus-8-11.xml");
    std::fs::write(
        &file,
        r#"<?xml version="1.0" encoding="UTF-8"?>
<topology version="2.0">
  <object type="Machine" os_index="0" cpuset="0x00000f00" complete_cpuset="0x00000f00">
    <object type="Package" os_index="0" cpuset="0x00000f00">
      <object type="Bridge" bridge_type="0-1" depth="0" bridge_pci="0000:[00-01]">
        <object type="PCIDev" pci_busid="0000:00:02.0" pci_type="0200 [8086:1521] [0000:0000] 01">
          <object type="OSDev" name="eth0" osdev_type="2"/>
        </object>
      </object>
    </object>
  </object>
</topology>
"#,
    )
    .unwrap();
    let source = format!("xml:{}", file.display());
    let out = output_within(
        Command::new("taskset")
            .args(["-c", "0", env!("CARGO_BIN_EXE_pmix-topo"), "distances"])
            .args(["--source", &source, "--format", "json"]),
        LIMIT,
    );
    let (out, err, code) = text(&out);
    assert_eq!(code, 2, "{out}{err}");
    assert!(
        out.starts_with(r#"{"status": "PMIX_ERR_BAD_PARAM", "code": -27, "message": "#),
        "{out}"
    );
    assert!(out.contains("whose PUs are 8-11"), "{out}");
    // Given on the command line, the same cpu is a usage error instead.
    let (_, err, code) = text(&run(&["distances", "--source", &source, "--cpus", "0"]));
    assert_eq!(code, 64);
    assert!(
        err.contains("PU 0 is not in this machine, whose PUs are 8-11"),
        "{err}"
    );
}

#[test]
fn the_table_says_what_it_measured_from() {
    let f = xml("24em64t-2n6c2t-pci.xml");
    let (out, _, code) = text(&run(&["distances", "--source", &f, "--cpus", "0,2"]));
    assert_eq!(code, 0);
    assert_eq!(out.lines().next(), Some("from cpus 0,2"), "{out}");
    let (out, _, code) = text(&run(&["distances", "--source", &f, "--origin", "eth0"]));
    assert_eq!(code, 0);
    assert_eq!(out.lines().next(), Some("from device eth0"), "{out}");
    let (out, _, code) = text(&run(&["distances", "--source", &f]));
    assert_eq!(code, 0);
    let first = out.lines().next().unwrap();
    assert_eq!(
        first,
        format!(
            "from cpus {} (this process's binding)",
            pmix_testkit::kernel_cpus_allowed_list()
        ),
        "{out}"
    );
    // In JSON, the same fact is a key.
    let json = ["--format", "json"];
    let (out, _, _) = text(&run(&[
        &["distances", "--source", &f, "--cpus", "0-1"][..],
        &json,
    ]
    .concat()));
    assert!(
        out.starts_with(r#"{"status": "SUCCESS", "cpus": "0-1", "distances": ["#),
        "{out}"
    );
    let (out, _, _) = text(&run(&[
        &["distances", "--source", &f, "--origin", "eth0"][..],
        &json,
    ]
    .concat()));
    assert!(
        out.starts_with(r#"{"status": "SUCCESS", "origin": "eth0", "distances": ["#),
        "{out}"
    );
}

#[test]
fn matrix_uses_nvidia_smi_words_with_a_legend() {
    let (out, _, code) = text(&run(&[
        "matrix",
        "--source",
        &xml("192em64t-12gr2n8c2t.xml"),
        "--types",
        "network",
    ]));
    assert_eq!(code, 0);
    let row = |name: &str| -> Vec<String> {
        out.lines()
            .find(|l| l.starts_with(name))
            .unwrap()
            .split_whitespace()
            .map(str::to_owned)
            .collect()
    };
    let head: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        head,
        ["eth0", "eth1", "eth2", "eth3", "eth4", "eth5", "ib0"]
    );
    // eth0-eth1: one root port (PIX); eth0-eth2: another package (SYS); eth2-eth4: the
    // same switch below two common bridges (PIX, 16 + 2); eth2-eth3: same root port.
    assert_eq!(
        row("eth0"),
        ["eth0", "X", "PIX", "SYS", "SYS", "SYS", "SYS", "SYS"]
    );
    assert_eq!(
        row("eth2"),
        ["eth2", "SYS", "SYS", "X", "PIX", "PIX", "PIX", "SYS"]
    );
    assert!(
        out.lines()
            .last()
            .unwrap()
            .starts_with("Legend: X = same device, PIX"),
        "{out}"
    );
    let (out, _, _) = text(&run(&[
        "matrix",
        "--source",
        &xml("cxlmem+dax.v2.xml"),
        "--types",
        "block",
    ]));
    assert!(
        out.lines().any(|l| l.split_whitespace().collect::<Vec<_>>()
            == ["mem2", "NODE", "NODE", "X", "PIX", "PXB", "PXB", "NODE"]),
        "{out}"
    );
    let (out, _, _) = text(&run(&[
        "matrix",
        "--source",
        &xml("96em64t-4n4d3ca2co-pci.xml"),
        "--types",
        "block,gpu",
    ]));
    assert!(
        out.lines()
            .any(|l| l.starts_with("sr0") && l.contains("PHB") && l.contains("SYS")),
        "{out}"
    );
}

#[test]
fn matrix_json() {
    let (out, _, code) = text(&run(&[
        "matrix",
        "--source",
        &xml("24em64t-2n6c2t-pci.xml"),
        "--format",
        "json",
        "--types",
        "network",
    ]));
    assert_eq!(code, 0);
    assert!(out.starts_with(r#"{"status": "SUCCESS", "devices": [{"osname": "eth0", "type": "NETWORK", "pci": "0000:04:00.0", "uuid": "ipv4://78:e7:d1:21:55:30"}"#), "{out}");
    assert!(out.contains(r#""matrix": [["X", "PIX", "PHB", "PHB"], ["PIX", "X", "PHB", "PHB"], ["PHB", "PHB", "X", "X"], ["PHB", "PHB", "X", "X"]]"#), "{out}");
    assert!(
        out.contains(
            r#""distances": [[0, 16, 34, 34], [16, 0, 34, 34], [34, 34, 0, 0], [34, 34, 0, 0]]}"#
        ),
        "{out}"
    );
    let report: MatrixReport = serde_json::from_str(&out).unwrap();
    assert_eq!(report.devices.len(), 4);
    assert_eq!(report.devices[0].osname, "eth0");
    assert_eq!(report.matrix[0][1].as_deref(), Some("PIX"));
    assert_eq!(report.distances[2][0], Some(34));
}

#[test]
fn tree_shows_the_io_hierarchy() {
    let (out, _, code) = text(&run(&[
        "tree",
        "--source",
        &xml("8em64t-2p2ca2co-nonodesets.v1.xml"),
    ]));
    assert_eq!(code, 0);
    let expected_tail = "\
  HostBridge locality 0-7
    PCIBridge 0000:00:02.0 class 0604
      PCIBridge 0000:04:00.0 class 0604
        PCIBridge 0000:05:00.0 class 0604
          PCIBridge 0000:06:00.0 class 0604
            PCI 0000:07:00.0 class 0200
              eth1 NETWORK ipv4://00:22:19:4f:ee:09
";
    assert!(
        out.starts_with(
            "Machine cpus 0-7 host bonobo001\n  Package cpus 0,2,4,6\n  Package cpus 1,3,5,7\n"
        ),
        "{out}"
    );
    assert!(out.contains(expected_tail), "{out}");
    assert!(
        out.contains("      mlx4_0 OPENFABRICS fab://0002:c903:0002:a0ce::0002:c903:0002:a0d1\n"),
        "{out}"
    );
}

#[test]
fn pmix_errors_exit_2_with_their_status() {
    let f = xml("24em64t-2n6c2t-pci.xml");
    let empty_dir = pmix_testkit::TempDir::new("topo-empty");
    let empty_tree = format!("sysfs:{}", empty_dir.0.display());
    let cases: &[(&[&str], &str, i32)] = &[
        (
            &["distances", "--source", &f, "--origin", "nothing"],
            "PMIX_ERR_NOT_FOUND",
            -46,
        ),
        (
            &[
                "distances",
                "--source",
                &f,
                "--origin",
                "04:00.0",
                "--types",
                "gpu",
            ],
            "PMIX_ERR_NOT_FOUND",
            -46,
        ),
        (
            &[
                "distances",
                "--source",
                &f,
                "--cpus",
                "0",
                "--types",
                "0x40",
            ],
            "PMIX_ERR_BAD_PARAM",
            -27,
        ),
        (
            &["distances", "--source", &f, "--cpus", "0", "--types", "0"],
            "PMIX_ERR_BAD_PARAM",
            -27,
        ),
        (
            &["distances", "--source", &f, "--cpus", ""],
            "PMIX_ERR_BAD_PARAM",
            -27,
        ),
        (
            &["distances", "--source", &f, "--origin", ""],
            "PMIX_ERR_BAD_PARAM",
            -27,
        ),
        (
            &["distances", "--source", &f, "--cpus", "0", "--hostname", ""],
            "PMIX_ERR_BAD_PARAM",
            -27,
        ),
        (
            &["distances", "--source", &f, "--cpus", "0", "--types", "gpu"],
            "PMIX_ERR_NOT_FOUND",
            -46,
        ),
        (
            &[
                "distances",
                "--source",
                "xml:/nonexistent/x.xml",
                "--cpus",
                "0",
            ],
            "PMIX_ERR_NOT_FOUND",
            -46,
        ),
        (
            // A directory with no sys/devices/system/cpu: no cpus to build a machine from.
            &["distances", "--source", &empty_tree, "--cpus", "0"],
            "PMIX_ERR_NOT_FOUND",
            -46,
        ),
        // A cpuset naming no PU of the machine is BAD_PARAM when it is this process's
        // binding (default_binding_outside_the_topology_is_bad_param_naming_its_pus);
        // given with --cpus it is a usage error (cpus_outside_the_machine_are_…).
        (
            &["matrix", "--source", &xml("16amd64-4distances.xml")],
            "PMIX_ERR_NOT_FOUND",
            -46,
        ),
    ];
    #[cfg(not(feature = "native"))]
    let cases = &[
        cases,
        &[(
            &["distances", "--source", "hwloc", "--cpus", "0"][..],
            "PMIX_ERR_NOT_SUPPORTED",
            -47,
        )][..],
    ]
    .concat();
    for (args, status, code) in cases {
        let mut json_args = args.to_vec();
        json_args.extend(["--format", "json"]);
        let (out, err, exit) = text(&run(&json_args));
        assert_eq!(exit, 2, "{args:?}: {out}{err}");
        let head = format!(r#"{{"status": "{status}", "code": {code}, "message": ""#);
        assert!(
            out.starts_with(&head) && out.ends_with("\"}\n"),
            "{args:?}: {out}"
        );
        let report: ErrorReport = serde_json::from_str(&out).unwrap();
        assert_eq!((report.status.as_str(), report.code), (*status, *code));
        assert!(!report.message.is_empty(), "{args:?}: {out}");
        let (out, err, exit) = text(&run(args));
        assert_eq!((exit, out.as_str()), (2, ""), "{args:?}");
        assert!(
            err.starts_with(&format!("pmix-topo: {status} ({code}): ")),
            "{args:?}: {err}"
        );
    }
    // The file's problem is named with its line.
    let bad = empty_dir.0.join("bad.xml");
    std::fs::write(
        &bad,
        "<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n<object type=\"Machine\" cpuset=\"0x1\">\n<object type=\"Bogus\"/>\n</object>\n</topology>\n",
    )
    .unwrap();
    let source = format!("xml:{}", bad.display());
    let (_, err, exit) = text(&run(&["tree", "--source", &source]));
    assert_eq!(exit, 2);
    assert!(err.contains("hwloc XML line 4"), "{err}");
}

#[test]
fn usage_errors_exit_64() {
    let f = xml("24em64t-2n6c2t-pci.xml");
    for args in [
        &[][..],
        &["nonsense"],
        &["distances", "--source"],
        &["distances", "--source", "floppy:/a"],
        &["distances", "--source", &f, "--cpus", "0-x"],
        &[
            "distances",
            "--source",
            &f,
            "--cpus",
            "0",
            "--origin",
            "eth0",
        ],
        &["distances", "--source", &f, "--types", "nic"],
        &["distances", "--source", &f, "--format", "xml"],
        &["distances", "--source", &f, "--bogus"],
        &["matrix", "--source", &f, "--origin", "eth0"],
        &["tree", "--source", &f, "--format", "json"],
        &["tree", "--source", &f, "--source", &f],
    ] {
        let (out, err, code) = text(&run(args));
        assert_eq!(code, 64, "{args:?}: {out}{err}");
        assert!(
            out.is_empty()
                && err.starts_with("pmix-topo: ")
                && err.contains("usage: pmix-topo distances"),
            "{args:?}: {err}"
        );
    }
    let (out, _, code) = text(&run(&["--help"]));
    assert_eq!(code, 0);
    assert!(out.starts_with("usage: pmix-topo distances"));
}

#[cfg(feature = "native")]
#[test]
fn the_hwloc_source_reads_this_machine_and_an_xml_file() {
    let (out, err, code) = text(&run(&["tree", "--source", "hwloc"]));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Machine cpus "), "{out}");
    // HWLOC_XMLFILE points libhwloc at a file: the same answers as the importer.
    let args = [
        "distances",
        "--source",
        "hwloc",
        "--cpus",
        "0",
        "--types",
        "all",
        "--format",
        "json",
    ];
    let native = output_within(
        Command::new(env!("CARGO_BIN_EXE_pmix-topo"))
            .args(args)
            .env("HWLOC_XMLFILE", data("24em64t-2n6c2t-pci.xml")),
        LIMIT,
    );
    let x = xml("24em64t-2n6c2t-pci.xml");
    let ours = run(&[
        "distances",
        "--source",
        &x,
        "--cpus",
        "0",
        "--types",
        "all",
        "--format",
        "json",
    ]);
    assert_eq!(text(&native).0, text(&ours).0);
}

/// The default source is this machine's sysfs: `pmix-topo distances` and `matrix` work
/// out of the box (a machine without network, OpenFabrics, GPU or coprocessor devices
/// answers PMIX_ERR_NOT_FOUND, which is still a scan that worked).
#[test]
fn default_source_scans_this_machine() {
    for cmd in ["distances", "matrix"] {
        let (out, err, exit) = text(&run(&[cmd, "--types", "all", "--format", "json"]));
        assert!(
            (exit == 0 && out.starts_with(r#"{"status": "SUCCESS""#))
                || (exit == 2 && out.starts_with(r#"{"status": "PMIX_ERR_NOT_FOUND""#)),
            "{cmd}: {exit} {out}{err}"
        );
    }
    let (out, _, exit) = text(&run(&["tree"]));
    assert_eq!(exit, 0);
    assert!(out.starts_with("Machine cpus "), "{out}");
}

/// Every captured sysfs tree of `testdata/` answers `distances` (from each package's
/// first cpu, all types) and `matrix` through `--source sysfs:DIR`.
#[test]
fn every_fixture_tree_answers_through_sysfs_dir() {
    let mut trees = 0;
    for (folder, ext) in [("hwloc-linux", ".tar.bz2"), ("ghw-snapshots", ".tar.gz")] {
        for (_, tarball) in pmix_testkit::tarballs(folder, ext) {
            let tree = pmix_testkit::unpack(&tarball);
            let root = tree.tree_root();
            let source = format!("sysfs:{}", root.display());
            let (listing, _, exit) = text(&run(&["tree", "--source", &source]));
            assert_eq!(exit, 0, "{}: tree", tarball.display());
            let first_cpus: Vec<String> = listing
                .lines()
                .filter_map(|l| l.trim().strip_prefix("Package cpus "))
                .map(|c| c.split([',', '-', ' ']).next().unwrap().to_owned())
                .collect();
            let types = ["BLOCK", "GPU", "NETWORK", "OPENFABRICS", "DMA", "COPROC"];
            let has_devices = listing.lines().any(|l| {
                l.split_whitespace()
                    .nth(1)
                    .is_some_and(|t| types.contains(&t))
            });
            // A tree without OS devices (nvidiagpunumanodes) answers NOT_FOUND.
            let expect = if has_devices {
                r#"{"status": "SUCCESS""#
            } else {
                r#"{"status": "PMIX_ERR_NOT_FOUND""#
            };
            for cpu in first_cpus.iter().take(4) {
                let (out, err, exit) = text(&run(&[
                    "distances",
                    "--source",
                    &source,
                    "--cpus",
                    cpu,
                    "--types",
                    "all",
                    "--format",
                    "json",
                ]));
                assert!(
                    exit == if has_devices { 0 } else { 2 } && out.starts_with(expect),
                    "{} cpu {cpu}: {out}{err}",
                    tarball.display()
                );
            }
            assert!(!first_cpus.is_empty(), "{}: packages", tarball.display());
            let (out, err, exit) = text(&run(&["matrix", "--source", &source, "--types", "all"]));
            assert_eq!(
                exit,
                if has_devices { 0 } else { 2 },
                "{}: {out}{err}",
                tarball.display()
            );
            trees += 1;
        }
    }
    assert_eq!(trees, 9, "every tarball was tried");
}

/// Every way the command line can be refused (clap's own kinds included: an unknown
/// command or flag, a missing or repeated value, a conflict, a value a parser refuses,
/// a missing positional) exits 64, never clap's default 2 (pmix-topo's PMIx error),
/// with pmix-topo's message and synopsis instead of clap's.
#[test]
fn every_kind_of_command_line_refusal_exits_64_never_2() {
    let f = xml("24em64t-2n6c2t-pci.xml");
    for args in [
        &["frobnicate"][..],
        &["distances", "--bogus"],
        &["distances", "--cpus"],
        &["matrix", "--types", "gpu", "--types", "gpu"],
        &["distances", "--cpus", "0", "--origin", "eth0"],
        &["distances", "--format", "yaml"],
        &["distances", "--source", &f, "--types", "nic"],
        &["distances", "--source", &f, "--cpus", "0-x"],
        &["tree", "--source", "floppy:/a"],
        &["completions"],
        &["completions", "tcsh"],
        &["completions", "bash", "zsh"],
        &["tree", "extra"],
        &["-x"],
    ] {
        let (out, err, code) = text(&run(args));
        assert_eq!(code, 64, "{args:?}: {out}{err}");
        assert!(out.is_empty(), "{args:?}: {out}");
        assert!(
            err.starts_with("pmix-topo: ") && err.contains("\nusage: pmix-topo distances"),
            "{args:?}: {err}"
        );
        assert!(
            !err.contains("error:") && !err.contains("Usage:"),
            "clap's own framing leaked: {args:?}: {err}"
        );
    }
}

#[test]
fn help_lists_every_subcommand_and_flag_and_version_prints_exit_0() {
    for help in ["--help", "-h"] {
        let (out, err, code) = text(&run(&[help]));
        assert_eq!((code, err.as_str()), (0, ""), "{help}");
        for word in [
            "distances",
            "matrix",
            "tree",
            "draw",
            "completions",
            "--source",
            "--cpus",
            "--origin",
            "--types",
            "--id",
            "--hostname",
            "--format",
            "--out",
            "--png",
            "--version",
        ] {
            assert!(out.contains(word), "{help} lacks {word}: {out}");
        }
    }
    // Each command's page describes each of its flags.
    for (cmd, flags) in [
        (
            "distances",
            &[
                "--source",
                "--cpus",
                "--origin",
                "--types",
                "--id",
                "--hostname",
                "--format",
            ][..],
        ),
        ("matrix", &["--source", "--types", "--format"]),
        ("tree", &["--source"]),
        (
            "draw",
            &["--source", "--cpus", "--origin", "--out", "--png"],
        ),
    ] {
        let (out, _, code) = text(&run(&[cmd, "--help"]));
        assert_eq!(code, 0, "{cmd}");
        assert!(out.starts_with(&format!("usage: pmix-topo {cmd}")), "{out}");
        for flag in flags {
            assert!(
                out.contains(&format!("{flag} <")),
                "{cmd} --help lacks {flag}: {out}"
            );
        }
    }
    let (out, _, code) = text(&run(&["--version"]));
    assert_eq!(
        (code, out),
        (0, format!("pmix-topo {}\n", env!("CARGO_PKG_VERSION")))
    );
}

#[test]
fn completions_are_printed_for_every_shell() {
    for shell in ["bash", "zsh", "fish", "elvish", "powershell"] {
        let (out, err, code) = text(&run(&["completions", shell]));
        assert_eq!((code, err.as_str()), (0, ""), "{shell}");
        for word in ["distances", "matrix", "hostname", "origin"] {
            assert!(out.contains(word), "{shell} completion lacks {word}");
        }
    }
}

/// pmix-topo asks the runtime for everything it prints: it reads no file, no `/proc`
/// and no sysfs of its own, and makes no system call. (The program writes the files
/// `draw --out` and `--png` name, with `std::fs::write` in `bin/pmix-topo.rs`, and
/// nothing else; the PNG renderer's font database reads the system's fonts.) Its files
/// stay small enough to read in one sitting, each opening with what it owns.
#[test]
fn the_source_reads_nothing_itself_and_stays_small() {
    fn visit(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                visit(&p, files);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let mut files = Vec::new();
    visit(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    assert!(files.len() >= 8, "{files:?}");
    let forbidden = [
        "/proc",
        "/sys",
        "std::fs",
        "fs::",
        "File::",
        "read_to_string",
        "read_dir",
        "libc",
        "OpenOptions",
    ];
    // The no-reading rule is pmix-topo's (its topology, binding and host name come
    // from the runtime); pmix-wiredump reads capture logs and pmix-run spawns jobs.
    // The size and opening-doc rules hold for every file.
    let src_dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let is_topo =
        |f: &Path| f.starts_with(src_dir.join("topo")) || f == src_dir.join("bin/pmix-topo.rs");
    assert!(files.iter().filter(|f| is_topo(f)).count() >= 6);
    for f in &files {
        let mut src = std::fs::read_to_string(f).unwrap();
        if f == &src_dir.join("bin/pmix-topo.rs") {
            assert_eq!(src.matches("std::fs::write(").count(), 1, "{}", f.display());
            src = src.replace("std::fs::write(", "write(");
        }
        if is_topo(f) {
            for word in forbidden {
                assert!(!src.contains(word), "{} uses {word}", f.display());
            }
        }
        let lines = src.lines().count();
        assert!(lines <= 500, "{} has {lines} lines", f.display());
        assert!(
            src.starts_with("//!"),
            "{} opens without saying what it owns",
            f.display()
        );
    }
}
