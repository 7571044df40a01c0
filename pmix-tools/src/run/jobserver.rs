//! What the job loop ([`super::job`]) and a PMIx server tell each other: the
//! events it acts on ([`Event`], a spawn request among them, which come on its
//! channel of [`super::wake::Wake`]s), how a process is started ([`Launch`], a
//! spawned job's [`NewJob`]), the [`JobServer`] trait the loop calls the server
//! through (the real server is [`super::server::Embedded`]; the loop's tests use
//! fakes, with real children), and the statuses a spawn fails with.

use std::ffi::OsString;

use pmix_core::{CpuSet, Status};

/// A job event the launcher acts on (one of the server's upcalls into its
/// [`pmix::server::Host`]); it comes with the index of the job it is about, as a
/// [`super::wake::Wake::Event`].
#[derive(Clone, Debug, PartialEq)]
pub enum Event {
    /// The rank completed its handshake.
    Connected(u32),
    /// The rank called `PMIx_Finalize`.
    Finalized(u32),
    /// The rank called `PMIx_Abort` with this status and message.
    Aborted {
        /// The rank.
        rank: u32,
        /// The status it gave.
        status: i32,
        /// Its message.
        message: Option<String>,
    },
    /// The rank's connection closed without FINALIZE.
    Lost(u32),
    /// A rank of the job asked for new processes (`PMIx_Spawn`).
    Spawn(SpawnRequest),
}

/// A client's `PMIx_Spawn`, as the server passed it on.
#[derive(Clone, Debug, PartialEq)]
pub struct SpawnRequest {
    /// The request, for [`JobServer::spawn_done`].
    pub id: u64,
    /// Who asked.
    pub parent: (String, u32),
    /// The job-level directives.
    pub info: Vec<pmix::wire::Info>,
    /// The applications (each with a program and at least one process).
    pub apps: Vec<pmix::wire::App>,
}

/// One process to start: what [`super::spawn::spawn_proc`] runs.
#[derive(Clone, Debug, Default)]
pub struct Launch {
    /// The program (searched in `PATH` when it has no `/`).
    pub program: OsString,
    /// Its `argv[0]`, when not the program.
    pub argv0: Option<OsString>,
    /// Its arguments after `argv[0]`.
    pub args: Vec<OsString>,
    /// Variables set after pmix-run's own (less the scrubbed ones).
    pub env: Vec<(OsString, OsString)>,
    /// Its working directory (pmix-run's when `None`).
    pub cwd: Option<std::path::PathBuf>,
    /// Its binding (`None`: unbound).
    pub cpus: Option<CpuSet>,
}

/// A job registered for a spawn ([`JobServer::start_job`]).
#[derive(Clone, Debug)]
pub struct NewJob {
    /// Its index (the next one: the first job is 0, each spawn's the next).
    pub job: usize,
    /// Its namespace.
    pub nspace: String,
    /// Its processes, rank by rank.
    pub procs: Vec<Launch>,
}

/// `PMIX_ERR_NOT_SUPPORTED`: what a server that cannot spawn answers.
pub const ERR_NOT_SUPPORTED: i32 = Status::ERR_NOT_SUPPORTED.0;
/// `PMIX_ERR_JOB_FAILED_TO_LAUNCH`: a spawned process ended before it connected.
pub const ERR_JOB_FAILED_TO_LAUNCH: i32 = Status::ERR_JOB_FAILED_TO_LAUNCH.0;
/// `PMIX_ERR_JOB_EXE_NOT_FOUND`: a spawned program does not exist.
pub const ERR_JOB_EXE_NOT_FOUND: i32 = Status::ERR_JOB_EXE_NOT_FOUND.0;
/// `PMIX_ERR_JOB_APP_NOT_EXECUTABLE`: a spawned program cannot be run.
pub const ERR_JOB_APP_NOT_EXECUTABLE: i32 = Status::ERR_JOB_APP_NOT_EXECUTABLE.0;
/// `PMIX_ERR_JOB_CANCELED`: a spawn asked for while the job is ending.
pub const ERR_JOB_CANCELED: i32 = Status::ERR_JOB_CANCELED.0;

/// What the job loop asks of a PMIx server (its events come the other way, on the
/// loop's channel): the real one is [`super::server::Embedded`]; tests use a fake.
/// Jobs are numbered: the first is 0, each spawned one the next number.
pub trait JobServer {
    /// The variables rank `rank` of the first job must be started with (the PMIx
    /// rendezvous).
    fn client_env(&self, rank: u32) -> Vec<(String, String)>;
    /// The launcher saw `rank` of job `job` end: `status` is its exit status, or
    /// minus the signal that killed it.
    fn proc_exited(&self, job: usize, rank: u32, status: i32);
    /// The socket a process about to be started inherits to speak to the server
    /// without connecting (its server's `client_channel`); `None` (the default)
    /// when the server offers none, or could not make one: the process then
    /// connects over TCP, as every client can.
    fn channel(&self) -> Option<std::os::unix::net::UnixStream> {
        None
    }
    /// Registers the job `req` asks for and says how to start its processes.
    ///
    /// # Errors
    /// The PMIx status the parent gets (by default `PMIX_ERR_NOT_SUPPORTED`).
    fn start_job(&self, req: &SpawnRequest) -> Result<NewJob, i32> {
        let _ = req;
        Err(ERR_NOT_SUPPORTED)
    }
    /// Answers spawn `id`: the new namespace, or the status the parent gets.
    fn spawn_done(&self, id: u64, result: Result<String, i32>) {
        let _ = (id, result);
    }
    /// Spawned job `job` failed to launch (its parent is told by
    /// [`JobServer::spawn_done`]): its namespace is forgotten, quietly, so that no
    /// other process hears of the processes it had.
    fn job_failed(&self, job: usize) {
        let _ = job;
    }
    /// Every process of spawned job `job` has ended; `status` is the first
    /// non-zero exit status among them (minus a signal), or 0.
    fn job_ended(&self, job: usize, status: i32) {
        let _ = (job, status);
    }
}
