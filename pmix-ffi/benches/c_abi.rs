//! `cargo bench -p pmix-ffi --bench c_abi`: the same C timing loop (`compare.c`:
//! blocking `PMIx_Compute_distances` + `PMIX_DEVICE_DIST_FREE`, cpu 0, NETWORK devices)
//! compiled and linked once against OpenPMIx 4.2.2 (`-lpmix`) and once against pmix-rs
//! (`-lpmix_ffi`), run on two real machines' hwloc XML exports given to both through
//! `PMIX_MCA_pmix_hwloc_topo_file`; prints ns per call and the ratio. Target: pmix-rs
//! at least 20× faster through the C ABI.
//!
//! Needs `cc`; the OpenPMIx half needs Debian's `libpmix-dev` (skipped with a notice
//! without it).

use std::path::{Path, PathBuf};
use std::process::Command;

const OPENPMIX_INCLUDE: &str = "/usr/lib/x86_64-linux-gnu/pmix2/include";
const TOPOLOGIES: [&str; 2] = ["24em64t-2n6c2t-pci.xml", "192em64t-12gr2n8c2t.xml"];
const SECONDS: &str = "0.6";

fn manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The directory of the `libpmix_ffi.so` cargo built for this bench run (`deps/`, next
/// to this executable).
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("current_exe");
    let deps = exe.parent().expect("deps").to_path_buf();
    let profile = deps.parent().expect("profile").to_path_buf();
    [deps, profile]
        .into_iter()
        .find(|d| d.join("libpmix_ffi.so").exists())
        .expect("libpmix_ffi.so not built")
}

fn cc(args: &[&str], what: &str) {
    let out = Command::new("cc").args(args).output().expect("cc");
    assert!(
        out.status.success(),
        "{what}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Runs the timing loop; returns (entries, ns per call).
fn time(exe: &Path, xml: &Path) -> Result<(usize, f64), String> {
    let out = Command::new(exe)
        .arg(SECONDS)
        .env_remove("LD_LIBRARY_PATH")
        .env_remove("PMIX_TOPOLOGY")
        .env("PMIX_MCA_pmix_hwloc_topo_file", xml)
        .output()
        .map_err(|e| e.to_string())?;
    let text = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if !out.status.success() {
        return Err(text);
    }
    let field = |k: &str| {
        text.split_whitespace()
            .find_map(|w| w.strip_prefix(k))
            .map(str::to_owned)
            .ok_or_else(|| format!("no {k} in {text:?}"))
    };
    let entries = field("entries=")?.parse().map_err(|_| text.clone())?;
    let ns = field("ns_per_call=")?.parse().map_err(|_| text.clone())?;
    Ok((entries, ns))
}

fn main() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("pmix-ffi-bench");
    std::fs::create_dir_all(&dir).unwrap();
    let src = manifest().join("benches/compare.c");
    let src = src.to_str().unwrap();
    let include = manifest().join("include");
    let lib = lib_dir();

    let ours = dir.join("compare-pmix-rs");
    cc(
        &[
            "-O2",
            "-I",
            include.to_str().unwrap(),
            src,
            "-o",
            ours.to_str().unwrap(),
            "-L",
            lib.to_str().unwrap(),
            "-lpmix_ffi",
            &format!("-Wl,-rpath,{}", lib.display()),
            "-Wl,--disable-new-dtags",
        ],
        "cc compare.c (pmix-rs)",
    );
    let theirs = dir.join("compare-openpmix");
    let have_openpmix = Path::new(OPENPMIX_INCLUDE).join("pmix.h").exists();
    if have_openpmix {
        cc(
            &[
                "-O2",
                "-I",
                OPENPMIX_INCLUDE,
                src,
                "-o",
                theirs.to_str().unwrap(),
                "-lpmix",
            ],
            "cc compare.c (OpenPMIx)",
        );
    } else {
        println!(
            "NOTICE: OpenPMIx headers absent ({OPENPMIX_INCLUDE}): timing pmix-rs only (apt-get install libpmix-dev)"
        );
    }

    println!(
        "blocking PMIx_Compute_distances + PMIX_DEVICE_DIST_FREE, cpu 0, PMIX_DEVTYPE_NETWORK, same C loop (benches/compare.c)"
    );
    println!(
        "{:<26} {:>8} {:>16} {:>12} {:>9}",
        "topology", "entries", "OpenPMIx 4.2.2", "pmix-rs", "speedup"
    );
    let mut all_met = true;
    for name in TOPOLOGIES {
        let xml = pmix_testkit::hwloc_xml(name);
        assert!(xml.exists(), "{} is missing", xml.display());
        let (n_ours, ns_ours) =
            time(&ours, &xml).unwrap_or_else(|e| panic!("pmix-rs on {name}: {e}"));
        let theirs_result = have_openpmix.then(|| time(&theirs, &xml));
        match theirs_result {
            Some(Ok((n_theirs, ns_theirs))) => {
                let ratio = ns_theirs / ns_ours;
                all_met &= ratio >= 20.0;
                let entries = if n_theirs == n_ours {
                    n_ours.to_string()
                } else {
                    format!("{n_theirs}/{n_ours}")
                };
                println!(
                    "{name:<26} {entries:>8} {:>13.0} ns {:>9.0} ns {ratio:>8.1}x",
                    ns_theirs, ns_ours
                );
            }
            Some(Err(e)) => {
                all_met = false;
                println!(
                    "{name:<26} {n_ours:>8} {:>16} {ns_ours:>9.0} ns  (OpenPMIx: {e})",
                    "failed"
                );
            }
            None => println!("{name:<26} {n_ours:>8} {:>16} {ns_ours:>9.0} ns", "-"),
        }
    }
    if have_openpmix {
        println!(
            "target: pmix-rs at least 20x faster: {}",
            if all_met { "met" } else { "NOT met" }
        );
    }
}
