//! The host trace: what a host registers, for whoever debugs a host.

/// `PMIX_RS_HOST_TRACE`: a directory where a hosted server appends, to
/// `<dir>/host.<pid>.trace`, one line per host call that describes the job
/// (`PMIx_server_init`, `PMIx_server_register_nspace`), with its infos decoded: what
/// a host (Slurm's plugin, `mpirun`, `orted`) registers, for whoever debugs a host.
/// Unset (the default), nothing is written; a directory that cannot be written to is
/// ignored.
pub const HOST_TRACE_VAR: &str = "PMIX_RS_HOST_TRACE";

/// Appends `call` and `infos` to the host trace (see [`HOST_TRACE_VAR`]).
pub(super) fn trace_host(call: &str, infos: &[pmix::wire::Info]) {
    if std::env::var_os(HOST_TRACE_VAR).is_none() {
        return;
    }
    let mut line = format!("{call}:");
    for i in infos {
        line.push_str(&format!(
            " {}={:?};",
            i.key.as_str().unwrap_or("?"),
            i.value
        ));
    }
    trace_line(line);
}

/// Appends `line` to the host trace (see [`HOST_TRACE_VAR`]), after the wall-clock
/// time.
pub(super) fn trace_line(line: String) {
    let Some(dir) = std::env::var_os(HOST_TRACE_VAR) else {
        return;
    };
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0.0, |d| d.as_secs_f64());
    let mut line = format!("{t:.3} {line}");
    let path = std::path::Path::new(&dir).join(format!("host.{}.trace", std::process::id()));
    line.push('\n');
    let _ = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
}
