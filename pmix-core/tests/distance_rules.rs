//! Every rule of docs/design.md §3, pinned by name on hand-built topologies.
//!
//! Expected values are derived by hand from the tier tables; the reference machine is
//! drawn in `machines/mod.rs`. Depths: GPUs and eth0 sit under root port + switch up +
//! switch down (3), eth2/eth3, the HCA and the NVMe under a root port (1), hfi1_0 and
//! eth1 directly on their host bridge (0).

mod machines;

use machines::{cpus, dev, nic, pci, reference_machine};
use pmix_core::{
    CpuSet, DeviceDistance, DeviceTypes, DistanceError, PmixError, Query, Status, Topology,
    TopologyBuilder,
};

/// Runs a query and returns `(osname, mindist, maxdist)` in result order.
fn run(topo: &Topology, q: &Query<'_>) -> Result<Vec<(String, u16, u16)>, DistanceError> {
    let mut out = vec![DeviceDistance::EMPTY; 64];
    let n = topo.distances(q, &mut out)?;
    Ok(out[..n]
        .iter()
        .map(|d| {
            (
                topo.device(d.device).unwrap().name().to_string(),
                d.mindist,
                d.maxdist,
            )
        })
        .collect())
}

fn dist_of(rows: &[(String, u16, u16)], name: &str) -> (u16, u16) {
    rows.iter()
        .find(|r| r.0 == name)
        .map(|r| (r.1, r.2))
        .unwrap_or_else(|| panic!("{name} not in {rows:?}"))
}

fn names(rows: &[(String, u16, u16)]) -> Vec<&str> {
    rows.iter().map(|r| r.0.as_str()).collect()
}

#[test]
fn default_selection_is_network_openfabrics_gpu_coproc_in_pci_order() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_cpuset(&cpus("0"))).unwrap();
    assert_eq!(
        names(&rows),
        [
            "cuda0",
            "nvml0",
            "cuda1",
            "renderD129",
            "eth0",
            "eth2",
            "eth3",
            "ib0",
            "ib1",
            "mlx5_0",
            "hfi1_0",
            "eth1"
        ]
    );
}

#[test]
fn cpuset_tier0_local_device_distance_is_its_pcie_depth() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_cpuset(&cpus("0"))).unwrap();
    assert_eq!(dist_of(&rows, "nvml0"), (3, 3));
    assert_eq!(dist_of(&rows, "eth0"), (3, 3));
    assert_eq!(dist_of(&rows, "eth2"), (1, 1));
    let rows = run(&t, &Query::from_cpuset(&cpus("4"))).unwrap();
    assert_eq!(dist_of(&rows, "hfi1_0"), (0, 0));
}

#[test]
fn cpuset_tier1_same_package_other_numa() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_cpuset(&cpus("0"))).unwrap();
    assert_eq!(dist_of(&rows, "hfi1_0"), (16, 16));
}

#[test]
fn cpuset_tier2_other_package() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_cpuset(&cpus("0"))).unwrap();
    assert_eq!(dist_of(&rows, "eth1"), (32, 32));
    let rows = run(&t, &Query::from_cpuset(&cpus("8"))).unwrap();
    assert_eq!(dist_of(&rows, "nvml0"), (35, 35));
    assert_eq!(dist_of(&rows, "eth1"), (0, 0));
}

#[test]
fn cpuset_locality_spanning_packages_is_tier2_everywhere() {
    let t = reference_machine();
    let rows = run(
        &t,
        &Query::from_cpuset(&cpus("0,8")).types(DeviceTypes::DMA),
    )
    .unwrap();
    assert_eq!(rows, [("dma0chan0".to_string(), 32, 32)]);
}

#[test]
fn cpuset_spanning_packages_gives_min_below_max() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_cpuset(&cpus("0,8"))).unwrap();
    assert_eq!(dist_of(&rows, "nvml0"), (3, 35));
    assert_eq!(dist_of(&rows, "hfi1_0"), (16, 32));
    assert_eq!(dist_of(&rows, "eth1"), (0, 32));
    let rows = run(&t, &Query::from_cpuset(&cpus("0,4"))).unwrap();
    assert_eq!(dist_of(&rows, "hfi1_0"), (0, 16));
}

#[test]
fn cpuset_pus_the_machine_lacks_are_ignored() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_cpuset(&cpus("0,100"))).unwrap();
    assert_eq!(dist_of(&rows, "eth1"), (32, 32));
}

#[test]
fn pcie_depth_breaks_ties_within_a_tier() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_cpuset(&cpus("0"))).unwrap();
    // Both local to package 0: the NIC one bridge deep beats the one three deep.
    assert!(dist_of(&rows, "eth2").0 < dist_of(&rows, "eth0").0);
}

#[test]
fn depth_saturates_at_15() {
    let mut b = TopologyBuilder::new(cpus("0-1"));
    let hb = b.host_bridge(b.machine());
    let mut parent = hb;
    for bus in 0..20u8 {
        parent = b.pci_bridge(parent, pci(bus, 0, 0), None);
    }
    let f = b.pci_function(parent, pci(200, 0, 0), None);
    b.os_device(f, nic("eth0", "00:00:00:00:00:01"));
    let t = b.build().unwrap();
    assert_eq!(t.devices()[0].depth(), 20);
    assert_eq!(run(&t, &Query::from_cpuset(&cpus("0"))).unwrap()[0].1, 15);
}

#[test]
fn same_place_same_depth_ties_across_host_bridges_from_a_cpuset() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_cpuset(&cpus("0"))).unwrap();
    // eth2 (host bridge A) and mlx5_0 (host bridge B): both package 0, depth 1.
    assert_eq!(dist_of(&rows, "eth2"), dist_of(&rows, "mlx5_0"));
}

#[test]
fn host_bridges_differ_from_a_device() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_device("eth0")).unwrap();
    // eth0 → eth2: same host bridge (tier 2), hops 3 + 1.
    assert_eq!(dist_of(&rows, "eth2"), (36, 36));
    // eth0 → mlx5_0: other host bridge, same package (tier 3), hops 3 + 1.
    assert_eq!(dist_of(&rows, "mlx5_0"), (52, 52));
}

#[test]
fn device_tier0_origin_and_its_sibling_os_devices() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_device("nvml0")).unwrap();
    assert_eq!(dist_of(&rows, "nvml0"), (0, 0));
    assert_eq!(dist_of(&rows, "cuda0"), (0, 0));
    let rows = run(&t, &Query::from_device("mlx5_0")).unwrap();
    assert_eq!(dist_of(&rows, "ib0"), (0, 0));
    assert_eq!(dist_of(&rows, "ib1"), (0, 0));
    assert_eq!(dist_of(&rows, "mlx5_0"), (0, 0));
}

#[test]
fn device_tier1_same_switch_counts_hops_below_the_common_bridge() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_device("nvml0")).unwrap();
    // Common ancestor: the switch's upstream port; one downstream port on each side.
    assert_eq!(dist_of(&rows, "renderD129"), (18, 18));
    assert_eq!(dist_of(&rows, "cuda1"), (18, 18));
    assert_eq!(dist_of(&rows, "eth0"), (18, 18));
}

#[test]
fn multi_function_device_functions_are_distinct_entries_at_tier1_zero_hops() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_device("eth2")).unwrap();
    assert_eq!(dist_of(&rows, "eth2"), (0, 0));
    assert_eq!(dist_of(&rows, "eth3"), (16, 16));
}

#[test]
fn device_tier2_same_host_bridge() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_device("nvml0")).unwrap();
    assert_eq!(dist_of(&rows, "eth2"), (36, 36));
    assert_eq!(dist_of(&rows, "eth3"), (36, 36));
}

#[test]
fn device_tier3_other_host_bridge_same_package() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_device("nvml0")).unwrap();
    assert_eq!(dist_of(&rows, "mlx5_0"), (52, 52));
    assert_eq!(dist_of(&rows, "hfi1_0"), (51, 51));
}

#[test]
fn device_tier4_other_package_or_no_package() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_device("nvml0").types(DeviceTypes::ALL)).unwrap();
    assert_eq!(dist_of(&rows, "eth1"), (67, 67));
    assert_eq!(dist_of(&rows, "nvme0n1"), (68, 68));
    assert_eq!(dist_of(&rows, "dma0chan0"), (67, 67));
}

#[test]
fn origin_is_reported_only_when_its_type_is_selected() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_device("nvml0").types(DeviceTypes::NETWORK)).unwrap();
    assert!(!names(&rows).contains(&"nvml0"));
    assert!(
        names(&rows)
            .iter()
            .all(|n| n.starts_with("eth") || n.starts_with("ib"))
    );
}

#[test]
fn from_device_distances_are_symmetric_on_the_reference_machine() {
    let t = reference_machine();
    for a in t.devices() {
        let ra = run(&t, &Query::from_device(a.name()).types(DeviceTypes::ALL)).unwrap();
        for (name, d, _) in &ra {
            let rb = run(
                &t,
                &Query::from_device(name)
                    .types(DeviceTypes::ALL)
                    .ids(&[a.name()]),
            )
            .unwrap();
            assert_eq!(rb[0].1, *d, "{} <-> {}", a.name(), name);
        }
    }
}

#[test]
fn non_pci_origin_is_zero_only_to_itself() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_device("dma0chan0").types(DeviceTypes::ALL)).unwrap();
    assert_eq!(dist_of(&rows, "dma0chan0"), (0, 0));
    assert_eq!(dist_of(&rows, "eth1"), (64, 64));
}

#[test]
fn origin_by_pci_address_uuid_and_vendor_id() {
    let t = reference_machine();
    let by_name = run(&t, &Query::from_device("nvml0")).unwrap();
    for name in [
        "0000:03:00.0",
        "03:00.0",
        "GPU-AAAA",
        "gpu://node1::card1",
        "CUDA0",
    ] {
        assert_eq!(
            run(&t, &Query::from_device(name)).unwrap(),
            by_name,
            "{name}"
        );
    }
}

#[test]
fn origin_not_found_is_pmix_err_not_found() {
    let t = reference_machine();
    let e = run(&t, &Query::from_device("eth9")).unwrap_err();
    assert_eq!(e, DistanceError::OriginNotFound);
    assert_eq!(e.status(), Status::ERR_NOT_FOUND);
}

#[test]
fn origin_matching_two_functions_is_ambiguous_bad_param() {
    // Two PCI domains with the same bus/device/function: the short form names both.
    let mut b = TopologyBuilder::new(cpus("0-3"));
    let hb0 = b.host_bridge(b.machine());
    let hb1 = b.host_bridge(b.machine());
    let f0 = b.pci_function(hb0, pci(6, 0, 0), None);
    let f1 = b.pci_function(hb1, pmix_core::PciAddr::new(1, 6, 0, 0).unwrap(), None);
    // And a bonded pair: one MAC on two functions.
    b.os_device(f0, nic("eth0", "00:00:00:00:00:01"));
    b.os_device(f1, nic("eth1", "00:00:00:00:00:01"));
    let t = b.build().unwrap();
    for name in ["06:00.0", "ipv4://00:00:00:00:00:01"] {
        let e = run(&t, &Query::from_device(name)).unwrap_err();
        assert_eq!(e, DistanceError::AmbiguousOrigin, "{name}");
        assert_eq!(e.status(), Status::ERR_BAD_PARAM);
    }
    // The full address is not ambiguous.
    assert!(run(&t, &Query::from_device("0001:06:00.0")).is_ok());
}

#[test]
fn origin_naming_several_os_devices_of_one_function_is_not_ambiguous() {
    let t = reference_machine();
    // The HCA function carries mlx5_0, ib0 and ib1.
    let rows = run(&t, &Query::from_device("0000:21:00.0")).unwrap();
    assert_eq!(dist_of(&rows, "ib1"), (0, 0));
}

#[test]
fn origin_ignores_the_cpuset() {
    // There is no cpuset in a device query at all: the answer depends on the device only.
    let t = reference_machine();
    let a = run(&t, &Query::from_device("eth1")).unwrap();
    assert_eq!(dist_of(&a, "eth1"), (0, 0));
}

#[test]
fn gpu_aliases_fold_into_one_entry_per_function_and_type() {
    let t = reference_machine();
    let rows = run(
        &t,
        &Query::from_cpuset(&cpus("0")).types(DeviceTypes::GPU | DeviceTypes::COPROC),
    )
    .unwrap();
    assert_eq!(names(&rows), ["cuda0", "nvml0", "cuda1", "renderD129"]);
}

/// One GPU function carrying `aliases`, and the name a query reports for it.
fn reported_alias(kind: DeviceTypes, aliases: &[&str]) -> String {
    let mut b = TopologyBuilder::new(cpus("0"));
    let hb = b.host_bridge(b.machine());
    let f = b.pci_function(hb, pci(1, 0, 0), Some(0x0302));
    for a in aliases {
        b.os_device(f, dev(a, kind));
    }
    let t = b.build().unwrap();
    let rows = run(&t, &Query::from_cpuset(&cpus("0")).types(kind)).unwrap();
    assert_eq!(rows.len(), 1, "{aliases:?} fold into one entry");
    rows[0].0.clone()
}

#[test]
fn gpu_alias_preference_nvml_rsmi_then_render_then_card_then_others() {
    let g = DeviceTypes::GPU;
    assert_eq!(
        reported_alias(g, &["card0", "renderD128", "nvml0", "opencl0d0"]),
        "nvml0"
    );
    assert_eq!(
        reported_alias(g, &["card0", "rsmi0", "renderD128"]),
        "rsmi0"
    );
    assert_eq!(
        reported_alias(g, &["rsmi0", "nvml0"]),
        "nvml0",
        "tie broken by lowest name"
    );
    assert_eq!(
        reported_alias(g, &["card0", "renderD128", "ve0"]),
        "renderD128"
    );
    assert_eq!(reported_alias(g, &["zz0", "card0"]), "card0");
    assert_eq!(reported_alias(g, &["zz0", "aa1"]), "aa1");
}

#[test]
fn coproc_alias_preference_cuda_then_others_then_opencl() {
    let c = DeviceTypes::COPROC;
    assert_eq!(reported_alias(c, &["opencl0d0", "cuda0", "mic0"]), "cuda0");
    assert_eq!(reported_alias(c, &["opencl0d0", "mic0"]), "mic0");
    assert_eq!(reported_alias(c, &["opencl0d1", "opencl0d0"]), "opencl0d0");
}

#[test]
fn named_alias_is_the_one_reported() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_cpuset(&cpus("0")).ids(&["card1"])).unwrap();
    assert_eq!(rows, [("card1".to_string(), 3, 3)]);
    let rows = run(
        &t,
        &Query::from_cpuset(&cpus("0")).ids(&["opencl0d0", "renderD128"]),
    )
    .unwrap();
    assert_eq!(names(&rows), ["opencl0d0", "renderD128"]);
}

#[test]
fn ports_of_one_hca_stay_separate_entries() {
    let t = reference_machine();
    let rows = run(
        &t,
        &Query::from_cpuset(&cpus("0")).types(DeviceTypes::NETWORK),
    )
    .unwrap();
    assert!(names(&rows).contains(&"ib0") && names(&rows).contains(&"ib1"));
}

#[test]
fn device_id_by_uuid_osname_vendor_and_pci_case_insensitive() {
    let t = reference_machine();
    let c = cpus("0");
    let one = |id: &str| names(&run(&t, &Query::from_cpuset(&c).ids(&[id])).unwrap()).join(",");
    assert_eq!(one("IPV4://00:11:22:33:44:50"), "eth0");
    assert_eq!(one("ETH2"), "eth2");
    assert_eq!(one("gpu-aaaa"), "nvml0");
    assert_eq!(one("GPU-BBBB"), "cuda1");
    assert_eq!(one("0000:05:00.0"), "eth0");
    assert_eq!(one("05:00.0"), "eth0");
    assert_eq!(one("0000:06:00.1"), "eth3");
    assert_eq!(
        one("fab://EC0D:9A03:00A4:C4C6::ec0d:9a03:00a4:c4c6"),
        "mlx5_0"
    );
    assert_eq!(one("fab://node1::hfi1_0"), "hfi1_0");
    assert_eq!(one("net://node1::eth1"), "eth1");
}

#[test]
fn device_id_by_pci_address_reports_every_entry_of_the_function() {
    let t = reference_machine();
    let rows = run(&t, &Query::from_cpuset(&cpus("0")).ids(&["0000:03:00.0"])).unwrap();
    assert_eq!(names(&rows), ["cuda0", "nvml0"]);
    let rows = run(&t, &Query::from_cpuset(&cpus("0")).ids(&["21:00.0"])).unwrap();
    assert_eq!(names(&rows), ["ib0", "ib1", "mlx5_0"]);
}

#[test]
fn device_id_without_type_selects_whatever_type() {
    let t = reference_machine();
    let rows = run(
        &t,
        &Query::from_cpuset(&cpus("8")).ids(&["nvme0n1", "dma0chan0"]),
    )
    .unwrap();
    assert_eq!(
        rows,
        [
            ("nvme0n1".to_string(), 1, 1),
            ("dma0chan0".to_string(), 32, 32)
        ]
    );
}

#[test]
fn device_id_with_type_is_the_intersection() {
    let t = reference_machine();
    let c = cpus("0");
    let q = Query::from_cpuset(&c)
        .ids(&["nvme0n1", "eth0"])
        .types(DeviceTypes::NETWORK);
    assert_eq!(names(&run(&t, &q).unwrap()), ["eth0"]);
    let q = Query::from_cpuset(&c)
        .ids(&["nvme0n1"])
        .types(DeviceTypes::NETWORK);
    assert_eq!(run(&t, &q).unwrap_err(), DistanceError::NoDevices);
}

#[test]
fn unknown_ids_are_ignored_when_others_match() {
    let t = reference_machine();
    let c = cpus("0");
    let q = Query::from_cpuset(&c).ids(&["eth0", "eth99"]);
    assert_eq!(names(&run(&t, &q).unwrap()), ["eth0"]);
    let q = Query::from_cpuset(&c).ids(&["eth99"]);
    assert_eq!(run(&t, &q).unwrap_err().status(), Status::ERR_NOT_FOUND);
}

#[test]
fn many_device_ids_match_as_few_do() {
    // A query parses its first ids as PCI addresses once, on the stack, and any further
    // ones where they are matched: the answer must not depend on where an id sits.
    let t = reference_machine();
    let c = cpus("0");
    let filler: Vec<String> = (0..40).map(|i| format!("nope{i}")).collect();
    for at in [0, 15, 16, 17, 40] {
        let mut ids: Vec<&str> = filler.iter().map(String::as_str).collect();
        ids.insert(at, "21:00.0");
        ids.insert(at, "card1");
        let rows = run(&t, &Query::from_cpuset(&c).ids(&ids)).unwrap();
        assert_eq!(
            names(&rows),
            ["card1", "ib0", "ib1", "mlx5_0"],
            "ids at {at}"
        );
    }
}

#[test]
fn empty_cpuset_is_bad_param() {
    let t = reference_machine();
    let e = run(&t, &Query::from_cpuset(&CpuSet::new())).unwrap_err();
    assert_eq!(e, DistanceError::EmptyCpuset);
    assert_eq!(e.status(), Status::ERR_BAD_PARAM);
}

#[test]
fn cpuset_with_no_pu_of_the_machine_is_bad_param() {
    let t = reference_machine();
    let e = run(&t, &Query::from_cpuset(&cpus("16-31"))).unwrap_err();
    assert_eq!(
        e,
        DistanceError::CpusetOutsideTopology {
            pus: 16,
            first: 0,
            last: 15
        }
    );
    assert_eq!(e.status(), Status::ERR_BAD_PARAM);
}

#[test]
fn no_pu_error_says_which_pus_the_machine_has() {
    let t = reference_machine();
    let e = run(&t, &Query::from_cpuset(&cpus("16-31"))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the cpuset names no PU of this topology, whose PUs are 0-15"
    );
    // A machine whose PUs have a gap says how many there are and their bounds.
    let gappy = TopologyBuilder::new(cpus("0-3,8-11")).build().unwrap();
    let e = run(&gappy, &Query::from_cpuset(&cpus("4-7"))).unwrap_err();
    assert_eq!(
        e.to_string(),
        "the cpuset names no PU of this topology, whose 8 PUs lie between 0 and 11"
    );
}

#[test]
fn empty_result_is_not_found() {
    let mut b = TopologyBuilder::new(cpus("0-3"));
    let hb = b.host_bridge(b.machine());
    let f = b.pci_function(hb, pci(1, 0, 0), None);
    b.os_device(f, dev("sda", DeviceTypes::BLOCK));
    let t = b.build().unwrap();
    let e = run(&t, &Query::from_cpuset(&cpus("0"))).unwrap_err();
    assert_eq!(e, DistanceError::NoDevices);
    assert_eq!(e.status(), Status::ERR_NOT_FOUND);
}

#[test]
fn bad_type_masks_and_empty_names_are_bad_param() {
    let t = reference_machine();
    let c = cpus("0");
    for mask in [0u64, 0x40, 0x8000_0000_0000_0000] {
        let e = run(&t, &Query::from_cpuset(&c).types(DeviceTypes(mask))).unwrap_err();
        assert_eq!(e, DistanceError::BadDeviceTypes(mask));
        assert_eq!(e.status(), Status::ERR_BAD_PARAM);
    }
    assert_eq!(
        run(&t, &Query::from_cpuset(&c).ids(&[""]))
            .unwrap_err()
            .status(),
        Status::ERR_BAD_PARAM
    );
    assert_eq!(
        run(&t, &Query::from_device("")).unwrap_err().status(),
        Status::ERR_BAD_PARAM
    );
}

#[test]
fn too_small_buffer_reports_the_length_and_writes_nothing() {
    let t = reference_machine();
    let c = cpus("0");
    let q = Query::from_cpuset(&c);
    let mut out = [DeviceDistance::EMPTY; 3];
    assert_eq!(
        t.distances(&q, &mut out),
        Err(DistanceError::BufferTooSmall { needed: 12 })
    );
    assert!(out.iter().all(|d| *d == DeviceDistance::EMPTY));
    assert_eq!(t.distances_len(&q), Ok(12));
}

#[test]
fn uuids_use_the_hostname_given_later() {
    let t = reference_machine().with_hostname("other").unwrap();
    let rows = run(
        &t,
        &Query::from_cpuset(&cpus("0")).ids(&["gpu://other::nvml0"]),
    )
    .unwrap();
    assert_eq!(names(&rows), ["nvml0"]);
    assert!(reference_machine().with_hostname("").is_err());
}

#[test]
fn hostname_rule_is_caller_then_topology_then_localhost() {
    use pmix_core::topology::{DEFAULT_HOSTNAME, check_hostname};
    // The topology's own name stands when the caller gives none.
    let own = reference_machine();
    let own_name = own.hostname().to_owned();
    assert_ne!(own_name, DEFAULT_HOSTNAME);
    assert_eq!(own.with_caller_hostname(None).unwrap().hostname(), own_name);
    // The caller's name wins, in every uuid.
    let t = reference_machine()
        .with_caller_hostname(Some("caller"))
        .unwrap();
    assert_eq!(t.hostname(), "caller");
    assert!(t.devices().iter().all(|d| !d.uuid().contains(&*own_name)));
    // A topology without a name of its own says localhost.
    let bare = TopologyBuilder::new(cpus("0-3")).build().unwrap();
    assert_eq!(bare.hostname(), DEFAULT_HOSTNAME);
    // A bad caller's name is refused, by the check and by the rule alike.
    for bad in ["", "a\0b", &"x".repeat(256)] {
        assert!(check_hostname(bad).is_err(), "{bad:?}");
        assert!(reference_machine().with_caller_hostname(Some(bad)).is_err());
    }
    assert!(check_hostname(&"x".repeat(255)).is_ok());
}
