//! Starting one rank: its command, environment, standard streams, and what the child
//! does to itself between fork and exec.
//!
//! **Each child** gets, before it runs the program (`pre_exec`: system calls only,
//! through rustix, nothing allocated): its own process group (so a terminal's Ctrl-C
//! reaches pmix-run alone, which forwards it once), `PR_SET_PDEATHSIG` = SIGKILL (a
//! pmix-run killed without warning takes its ranks with it: no rank outlives its
//! launcher), and its binding ([`Mask`]). Its standard input is `/dev/null`, its
//! standard output and error are pipes to pmix-run ([`super::output`]). Its
//! environment is pmix-run's, less every inherited `PMIX_*` variable (an outer
//! launcher's rendezvous would mislead the client) and Open MPI's `OMPI_MCA_orte_*`
//! ones (an outer mpirun's daemon), plus its [`Launch`]'s variables (the PMIx
//! rendezvous, the job's extra variables, a spawned app's own).

use std::os::fd::{AsFd, AsRawFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

use pmix_core::CpuSet;

use super::bind::Mask;
use super::jobserver::Launch;

/// Exit status when a rank's program cannot be started: 127 when it was not found,
/// 126 otherwise (as shells say).
pub const EXIT_NOT_FOUND: i32 = 127;
/// See [`EXIT_NOT_FOUND`].
pub const EXIT_CANNOT_EXEC: i32 = 126;

/// Whether an inherited variable is left out of a rank's environment: an outer
/// launcher's `PMIX_*` (its server's address, its store) and `OMPI_MCA_orte_*`, but
/// not the user's `PMIX_MCA_*` parameters of libpmix2 (its verbosity, its
/// components), which reach the ranks as they do under `mpirun`.
pub fn is_scrubbed(name: &str) -> bool {
    (name.starts_with("PMIX_") && !name.starts_with("PMIX_MCA_"))
        || name.starts_with("OMPI_MCA_orte_")
}

/// Starts one process as `l` says (a rank of the first job, or of a spawned one);
/// with `channel`, the process inherits that socket (the only descriptor beyond
/// its standard streams) and [`pmix::server::SERVER_FD_VAR`] names it.
///
/// # Errors
/// The OS error of starting it (the program not found, not executable, its working
/// directory missing), or of a step before exec (binding to PUs it may not use).
pub fn spawn_proc(l: &Launch, channel: Option<&UnixStream>) -> std::io::Result<Child> {
    let mut cmd = Command::new(&l.program);
    if let Some(a) = &l.argv0 {
        cmd.arg0(a);
    }
    cmd.args(&l.args);
    for (k, _) in std::env::vars_os() {
        if is_scrubbed(&k.to_string_lossy()) {
            cmd.env_remove(k);
        }
    }
    cmd.envs(l.env.iter().map(|(k, v)| (k, v)));
    let inherit = channel.map(|c| c.as_fd().as_raw_fd());
    if let Some(fd) = inherit {
        cmd.env(
            pmix::server::SERVER_FD_VAR,
            pmix::server::server_fd_value(fd),
        );
    }
    if let Some(d) = &l.cwd {
        cmd.current_dir(d);
    }
    let cpus: Option<&CpuSet> = l.cpus.as_ref();
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mask = cpus.map(Mask::new);
    let launcher = rustix::process::getpid();
    // SAFETY: the closure runs in the child between fork and exec and makes only
    // async-signal-safe system calls (setpgid, prctl, getppid, sched_setaffinity,
    // fcntl: each one raw system call through rustix), allocating nothing: the mask
    // was built before the fork, and errors are plain OS error codes. The borrowed
    // descriptor is `channel`'s, open in the parent (which holds it until the spawn
    // returns) and so in the child.
    unsafe {
        cmd.pre_exec(move || {
            use rustix::process::{Signal, getppid, set_parent_process_death_signal, setpgid};
            setpgid(None, None)?;
            set_parent_process_death_signal(Some(Signal::KILL))?;
            // The launcher died before the line above: do not run orphaned.
            if getppid() != Some(launcher) {
                let gone = rustix::io::Errno::SRCH.raw_os_error();
                return Err(std::io::Error::from_raw_os_error(gone));
            }
            if let Some(m) = &mask {
                m.apply()?;
            }
            if let Some(fd) = inherit {
                // The socket survives the exec: this one descriptor, in this child.
                let fd = std::os::fd::BorrowedFd::borrow_raw(fd);
                rustix::io::fcntl_setfd(fd, rustix::io::FdFlags::empty())?;
            }
            Ok(())
        });
    }
    cmd.spawn()
}
