//! Links the library with the soname `libpmix.so.2` and makes
//! `target/<profile>/dropin/libpmix.so.2` a symbolic link to it (the file the
//! dynamic loader looks for under that name).

use std::path::{Path, PathBuf};

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libpmix.so.2");
    // OUT_DIR is <target>/<profile>/build/pmix-dropin-<hash>/out.
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        return;
    };
    let Some(profile_dir) = out.ancestors().nth(3) else {
        return;
    };
    if let Err(e) = link(profile_dir) {
        println!("cargo:warning=cannot make dropin/libpmix.so.2: {e}");
    }
}

fn link(profile_dir: &Path) -> std::io::Result<()> {
    let dir = profile_dir.join("dropin");
    std::fs::create_dir_all(&dir)?;
    for name in ["libpmix.so.2", "libpmix.so"] {
        let at = dir.join(name);
        if std::fs::symlink_metadata(&at).is_ok() {
            std::fs::remove_file(&at)?;
        }
        std::os::unix::fs::symlink("../libpmix_dropin.so", &at)?;
    }
    Ok(())
}
