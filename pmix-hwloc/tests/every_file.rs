//! Every hwloc XML file of `shared/data/hwloc-xml/` imports.

use std::path::PathBuf;

fn data_dir() -> PathBuf {
    PathBuf::from(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/data/hwloc-xml"
    ))
}

#[test]
fn dump() {
    let mut files: Vec<_> = std::fs::read_dir(data_dir())
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        if f.extension().is_none_or(|e| e != "xml") {
            continue;
        }
        match pmix_hwloc::from_path(&f) {
            Ok(t) => println!(
                "{}: ok {} nodes {} devices host {}",
                f.display(),
                t.nodes().len(),
                t.devices().len(),
                t.hostname()
            ),
            Err(e) => println!("{}: ERR {e}", f.display()),
        }
    }
}
