//! The embedded server: [`pmix::server::Server`] started for one job, its namespace
//! registered with the ranks' bindings, and the [`JobServer`] face the job loop uses.

use std::sync::Arc;
use std::time::{Duration, Instant};

use pmix::server::{JobEvent, NamespaceSpec, Server, ServerConfig};
use pmix_core::CpuSet;

use super::job::{Event, JobServer};

/// A running server with one job's namespace.
pub struct Embedded {
    server: Server,
    nspace: String,
}

impl Embedded {
    /// Starts a server (the machine's topology `service` answers distance queries)
    /// and registers namespace `nspace` of `cpusets.len()` ranks, all on this node,
    /// run as this process's uid and gid; rank r has local and node rank r and, when
    /// bound, `pmix.cpuset` = `hwloc:LIST`. No `pmix.locstr` is given (it is optional,
    /// docs/serving.md §1(b), and Open MPI parses it as hwloc's locality grammar, which
    /// needs the object levels the topology model does not keep).
    ///
    /// # Errors
    /// A message naming what failed: starting the server, or registering the
    /// namespace.
    pub fn start(
        nspace: &str,
        cpusets: &[Option<CpuSet>],
        service: Option<Arc<pmix::Service>>,
    ) -> Result<Embedded, String> {
        let cfg = ServerConfig {
            service,
            ..ServerConfig::default()
        };
        let server =
            Server::start(cfg).map_err(|e| format!("cannot start the PMIx server: {e}"))?;
        let uid = rustix::process::getuid().as_raw();
        let gid = rustix::process::getgid().as_raw();
        let mut spec = NamespaceSpec::single_node(nspace, cpusets.len() as u32, uid, gid);
        for (r, cpus) in spec.ranks.iter_mut().zip(cpusets) {
            if let Some(c) = cpus {
                r.cpuset = Some(format!("hwloc:{c}"));
            }
        }
        server
            .add_namespace(spec)
            .map_err(|e| format!("cannot register namespace {nspace}: {e}"))?;
        Ok(Embedded {
            server,
            nspace: nspace.to_owned(),
        })
    }

    /// Stops the server (its temporary directory is removed).
    ///
    /// # Errors
    /// A message when the progress thread did not stop in time.
    pub fn shutdown(&self) -> Result<(), String> {
        self.server
            .shutdown()
            .map_err(|e| format!("stopping the PMIx server: {e}"))
    }
}

impl JobServer for Embedded {
    fn client_env(&self, rank: u32) -> Vec<(String, String)> {
        self.server.client_env(&self.nspace, rank)
    }

    fn next_event(&self, timeout: Duration) -> Option<Event> {
        let until = Instant::now() + timeout;
        loop {
            let left = until.saturating_duration_since(Instant::now());
            let Some(ev) = self.server.next_event(left) else {
                // A stopped server answers at once: keep the caller's pace.
                if !self.server.is_running() {
                    std::thread::sleep(until.saturating_duration_since(Instant::now()));
                }
                return None;
            };
            let (ns, e) = match ev {
                JobEvent::Connected { nspace, rank, .. } => (nspace, Event::Connected(rank)),
                JobEvent::Finalized { nspace, rank } => (nspace, Event::Finalized(rank)),
                JobEvent::Aborted {
                    nspace,
                    rank,
                    status,
                    message,
                } => (
                    nspace,
                    Event::Aborted {
                        rank,
                        status,
                        message,
                    },
                ),
                JobEvent::Lost { nspace, rank } => (nspace, Event::Lost(rank)),
                JobEvent::Log { stream, text, .. } => {
                    // A rank's PMIx_Log: written as it came, where it asked.
                    use std::io::Write;
                    let _ = match stream {
                        pmix::server::LogStream::Stderr => {
                            std::io::stderr().write_all(text.as_bytes())
                        }
                        pmix::server::LogStream::Stdout => {
                            std::io::stdout().write_all(text.as_bytes())
                        }
                    };
                    continue;
                }
                #[allow(unreachable_patterns)]
                _ => continue,
            };
            if ns == self.nspace {
                return Some(e);
            }
            if left.is_zero() {
                return None;
            }
        }
    }

    fn proc_exited(&self, rank: u32, status: i32) {
        // A stopped server has nobody left to tell.
        let _ = self.server.proc_exited(&self.nspace, rank, status);
    }
}
