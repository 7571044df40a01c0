//! The host contract: [`Host`], everything the server asks of whoever hosts it (a
//! launcher such as `pmix-run`, or a resource manager's daemon through the C server
//! API), and [`Reply`], the one-shot handle an upcall that needs an answer is given
//! (docs/serving.md §4).
//!
//! The server makes every upcall from its own progress thread (`pmix-server`), in the
//! order its core decides them, so a method **must not block**: it hands the request
//! on (to a channel, to a C host's own callback-driven module) and returns. An answer
//! comes later, from any thread, through the request's [`Reply`], which queues it to
//! the progress thread; a [`Reply`] dropped without an answer answers
//! [`Reply::DROPPED`], so no client waits for ever on a host that forgot one.
//!
//! What the host does is declared once, when the server starts, by
//! [`Host::provides`] (a [`Provides`] flag set): whether the job spans nodes through
//! it, and which optional upcalls it has. An optional upcall whose flag is missing is
//! not made, and every method's default answers as OpenPMIx answers for a NULL entry
//! of the C `pmix_server_module_t`, so a host implements only what it has. Each
//! method, its flag, and what is done without it (also the method's default):
//!
//! - [`Host::client_connected`], [`Host::client_aborted`], [`Host::client_lost`]:
//!   always made; by default nothing is done;
//! - [`Host::client_finalized`]: always made; by default acknowledged at once;
//! - [`Host::fence`] ([`Provides::FENCE`]): `PMIX_ERR_NOT_SUPPORTED`;
//! - [`Host::direct_modex`] ([`Provides::DIRECT_MODEX`]): `PMIX_ERR_NOT_FOUND`;
//! - [`Host::notify`] ([`Provides::NOTIFY`]): the event stays on this node;
//! - [`Host::publish`], [`Host::lookup`], [`Host::unpublish`] ([`Provides::PUBSUB`]):
//!   without the flag the server keeps published data itself (the methods' defaults
//!   answer `PMIX_ERR_NOT_SUPPORTED`);
//! - [`Host::spawn`] ([`Provides::SPAWN`]): `PMIX_ERR_NOT_SUPPORTED`;
//! - [`Host::log`] ([`Provides::LOG`]): written to this process's stderr or stdout
//!   ([`write_log`]).
//!
//! The host's own request of the server, another node's ask for a local process's
//! data, is [`Server::dmodex_request`](super::Server::dmodex_request), which takes a
//! completion.
//!
//! A host embedded by the server-role library instance
//! ([`Pmix::serve`](crate::Pmix::serve), what `PMIx_server_init` uses) gets the
//! instance's rules on top: a client lost without finalizing is also raised as
//! `PMIX_ERR_LOST_CONNECTION` (range PROC_LOCAL, source the client) to the event
//! handlers registered in the host's process.

use std::sync::Arc;

use pmix_wire::{App, Info, Pdata, Status};

pub use super::core::Provides;
use super::core::{HostAnswer, LogStream, Upcall};

/// A process as the host is told of it: `(nspace, rank)`.
pub type ProcName = (String, u32);

/// Where a [`Reply`]'s answer goes.
type Answer<T> = Box<dyn FnOnce(Result<T, Status>) + Send>;

/// One answer owed to the server: [`Reply::send`] it once, from any thread. Dropped
/// without an answer, it answers `Err(`[`Reply::DROPPED`]`)`.
#[must_use = "a request's reply answers the clients that wait on it"]
pub struct Reply<T: 'static> {
    answer: Option<Answer<T>>,
}

impl<T: 'static> Reply<T> {
    /// What a reply dropped without an answer answers: `PMIX_ERROR`.
    pub const DROPPED: Status = Status::ERROR;

    /// A reply that hands its answer to `answer` (once, on the thread that sends
    /// it, or drops it unsent). The server makes its own; hosts make them in tests.
    pub fn new(answer: impl FnOnce(Result<T, Status>) + Send + 'static) -> Reply<T> {
        Reply {
            answer: Some(Box::new(answer)),
        }
    }

    /// A reply nobody waits for: its answer goes nowhere.
    pub fn ignored() -> Reply<T> {
        Reply { answer: None }
    }

    /// Answers the request: `Ok` with what it asked for, or `Err` with the status
    /// its clients get. It never fails: an answer that comes after the server
    /// stopped, or after the clients waiting for it left, is ignored.
    pub fn send(mut self, result: Result<T, Status>) {
        if let Some(f) = self.answer.take() {
            f(result);
        }
    }
}

impl<T: 'static> Drop for Reply<T> {
    fn drop(&mut self) {
        if let Some(f) = self.answer.take() {
            f(Err(Self::DROPPED));
        }
    }
}

impl<T: 'static> std::fmt::Debug for Reply<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.answer.is_some() {
            "Reply(pending)"
        } else {
            "Reply(ignored)"
        })
    }
}

/// Whoever hosts a server: the launcher or resource manager it asks to reach beyond
/// itself (module docs). Every method is called on the server's progress thread and
/// must not block; each has a default (module docs' table). A host that panics in a
/// method is caught: the server logs it and goes on (a [`Reply`] it held answers
/// [`Reply::DROPPED`]).
pub trait Host: Send + Sync {
    /// What this host does for the server ([`Provides`]); asked once, when the
    /// server starts. The default: nothing (one node; no optional upcall).
    fn provides(&self) -> Provides {
        Provides::NONE
    }

    /// Rank `proc` completed its handshake (C: `client_connected2`, else
    /// `client_connected`). The default does nothing.
    fn client_connected(&self, proc: ProcName) {
        let _ = proc;
    }

    /// Rank `proc` called `PMIx_Finalize` (C: `client_finalized`). With
    /// [`Provides::NODES`] the server answers the client's FINALIZE once `reply` is
    /// answered, whatever the answer (as OpenPMIx does); otherwise it has answered
    /// already and `reply` goes nowhere. The default acknowledges at once.
    fn client_finalized(&self, proc: ProcName, reply: Reply<()>) {
        let _ = proc;
        reply.send(Ok(()));
    }

    /// Rank `proc` called `PMIx_Abort` with `status` and `message` (C: `abort`, for
    /// the whole job): the job should end. The client was answered already. The
    /// default does nothing.
    fn client_aborted(&self, proc: ProcName, status: i32, message: Option<String>) {
        let _ = (proc, status, message);
    }

    /// Rank `proc`'s connection closed without FINALIZE, or the launcher reported
    /// its exit before it finalized ([`Server::proc_exited`](super::Server::proc_exited)).
    /// The other clients have been told (`PMIX_ERR_PROC_ABORTED`). The default does
    /// nothing.
    fn client_lost(&self, proc: ProcName) {
        let _ = proc;
    }

    /// A fence whose participants span nodes ([`Provides::NODES`],
    /// [`Provides::FENCE`]; C: `fence_nb`): this node's participants all joined (or
    /// are gone). `procs` are the participants, a whole namespace as `(nspace,
    /// PMIX_RANK_WILDCARD)`; `collect` whether they asked for their data to be
    /// collected (`pmix.collect`); `data` this node's blob (`pmix_wire::modex`,
    /// docs/wire.md §11; empty when it has none). `reply` gets the concatenation of
    /// every node's blob, ours included, in any order, or the status the fence fails
    /// with. The default answers `PMIX_ERR_NOT_SUPPORTED`.
    fn fence(&self, procs: Vec<ProcName>, collect: bool, data: Vec<u8>, reply: Reply<Vec<u8>>) {
        let _ = (procs, collect, data);
        reply.send(Err(Status::ERR_NOT_SUPPORTED));
    }

    /// A local client asks for data of `proc`, which runs on another node
    /// ([`Provides::NODES`], [`Provides::DIRECT_MODEX`]; C: `direct_modex`): the host
    /// asks that node's server (its
    /// [`Server::dmodex_request`](super::Server::dmodex_request)) and `reply` gets
    /// the blob it answers, or a status (the gets held on it then find nothing). The
    /// default answers `PMIX_ERR_NOT_FOUND`.
    fn direct_modex(&self, proc: ProcName, reply: Reply<Vec<u8>>) {
        let _ = proc;
        reply.send(Err(Status::ERR_NOT_FOUND));
    }

    /// A client notified event `code` from `source` whose range (`range`, a
    /// `pmix_data_range_t`) reaches beyond this node ([`Provides::NODES`],
    /// [`Provides::NOTIFY`]; C: `notify_event`): the host carries it to the other
    /// nodes, whose servers raise it among their clients. It was raised here
    /// already. `info` carries this server's origin mark (`pmixrs.evorigin`), by
    /// which it drops the event when the host hands it back. The default does
    /// nothing (the event stays on this node).
    fn notify(&self, code: i32, source: ProcName, range: u8, info: Vec<Info>) {
        let _ = (code, source, range, info);
    }

    /// `proc` publishes `info` (its data and directives as it sent them, its uid
    /// last as `pmix.euid`; [`Provides::PUBSUB`]; C: `publish`). `reply` gets the
    /// status the client gets. The default answers `PMIX_ERR_NOT_SUPPORTED`.
    fn publish(&self, proc: ProcName, info: Vec<Info>, reply: Reply<()>) {
        let _ = (proc, info);
        reply.send(Err(Status::ERR_NOT_SUPPORTED));
    }

    /// `proc` looks up `keys` with directives `info` (`pmix.wait`, `pmix.timeout`,
    /// `pmix.range`, …, its uid last; [`Provides::PUBSUB`]; C: `lookup`). `reply`
    /// gets what the host found, one PDATA per key it has (a key it lacks the
    /// client gets as NOT_FOUND), or a status. The default answers
    /// `PMIX_ERR_NOT_SUPPORTED`.
    fn lookup(&self, proc: ProcName, keys: Vec<String>, info: Vec<Info>, reply: Reply<Vec<Pdata>>) {
        let _ = (proc, keys, info);
        reply.send(Err(Status::ERR_NOT_SUPPORTED));
    }

    /// `proc` unpublishes `keys` (none: all it published) with directives `info`
    /// ([`Provides::PUBSUB`]; C: `unpublish`). `reply` gets the status the client
    /// gets. The default answers `PMIX_ERR_NOT_SUPPORTED`.
    fn unpublish(&self, proc: ProcName, keys: Vec<String>, info: Vec<Info>, reply: Reply<()>) {
        let _ = (proc, keys, info);
        reply.send(Err(Status::ERR_NOT_SUPPORTED));
    }

    /// `parent` called `PMIx_Spawn` with job-level directives `info` and `apps` (each
    /// with a program and `maxprocs ≥ 1`; [`Provides::SPAWN`]): the host starts them
    /// in a new namespace, registers it
    /// ([`Server::add_namespace`](super::Server::add_namespace)) and `reply` gets its
    /// name (the parent then gets that job's information), or the status the parent
    /// gets. The default answers `PMIX_ERR_NOT_SUPPORTED`.
    fn spawn(&self, parent: ProcName, info: Vec<Info>, apps: Vec<App>, reply: Reply<String>) {
        let _ = (parent, info, apps);
        reply.send(Err(Status::ERR_NOT_SUPPORTED));
    }

    /// `proc` called `PMIx_Log` with `text` for `stream` ([`Provides::LOG`]; C:
    /// `log`): the host writes it where it writes its jobs' output. The default
    /// writes it to this process's stream ([`write_log`]).
    fn log(&self, proc: ProcName, stream: LogStream, text: String) {
        let _ = proc;
        write_log(stream, &text);
    }
}

/// The host of a server started without one ([`Server::start`](super::Server::start)):
/// every method's default.
#[derive(Clone, Copy, Debug, Default)]
pub struct NoHost;

impl Host for NoHost {}

/// Writes a client's `PMIx_Log` `text` as it came to this process's stderr or
/// stdout (what a server whose host has no `log` does). A failed write is ignored:
/// the client was answered already.
pub fn write_log(stream: LogStream, text: &str) {
    use std::io::Write;
    let _ = match stream {
        LogStream::Stderr => std::io::stderr().write_all(text.as_bytes()),
        LogStream::Stdout => std::io::stdout().write_all(text.as_bytes()),
    };
}

/// Where the answers to the upcalls go: to the server's progress thread, as
/// [`Core::host_answer`](super::core::Core::host_answer) `id`.
pub(crate) type AnswerSink = Arc<dyn Fn(u64, HostAnswer) + Send + Sync>;

/// A reply to upcall `id` whose answer `wrap` makes a [`HostAnswer`] for `sink`.
fn reply_to<T: Send + 'static>(
    sink: &AnswerSink,
    id: u64,
    wrap: fn(Result<T, Status>) -> HostAnswer,
) -> Reply<T> {
    let sink = Arc::clone(sink);
    Reply::new(move |r| sink(id, wrap(r)))
}

/// Makes the upcall `up` into `host`, which `provides` what it said (module docs):
/// an optional upcall it lacks is answered here as its default answers; answers go
/// to `sink`.
pub(crate) fn deliver(host: &dyn Host, provides: Provides, up: Upcall, sink: &AnswerSink) {
    let has = |f: Provides| provides.contains(f);
    match up {
        Upcall::Connected { nspace, rank, .. } => host.client_connected((nspace, rank)),
        Upcall::Finalized { id, nspace, rank } => {
            let reply = match id {
                Some(id) => reply_to(sink, id, |_| HostAnswer::ClientFinalized),
                None => Reply::ignored(),
            };
            host.client_finalized((nspace, rank), reply);
        }
        Upcall::Aborted {
            nspace,
            rank,
            status,
            message,
        } => host.client_aborted((nspace, rank), status, message),
        Upcall::Lost { nspace, rank } => host.client_lost((nspace, rank)),
        Upcall::Log {
            nspace,
            rank,
            stream,
            text,
        } => {
            if has(Provides::LOG) {
                host.log((nspace, rank), stream, text);
            } else {
                write_log(stream, &text);
            }
        }
        Upcall::Spawn {
            id,
            parent,
            info,
            apps,
        } => {
            let reply = reply_to(sink, id, HostAnswer::Spawn);
            if has(Provides::SPAWN) {
                host.spawn(parent, info, apps, reply);
            } else {
                NoHost.spawn(parent, info, apps, reply);
            }
        }
        Upcall::Fence {
            id,
            procs,
            collect,
            data,
        } => {
            let reply = reply_to(sink, id, HostAnswer::Fence);
            if has(Provides::FENCE) {
                host.fence(procs, collect, data, reply);
            } else {
                NoHost.fence(procs, collect, data, reply);
            }
        }
        Upcall::DirectModex { id, proc } => {
            let reply = reply_to(sink, id, HostAnswer::DirectModex);
            if has(Provides::DIRECT_MODEX) {
                host.direct_modex(proc, reply);
            } else {
                NoHost.direct_modex(proc, reply);
            }
        }
        Upcall::Notify {
            code,
            source,
            range,
            info,
        } => {
            if has(Provides::NOTIFY) {
                host.notify(code, source, range, info);
            }
        }
        Upcall::Publish { id, proc, info } => {
            let reply = reply_to(sink, id, HostAnswer::Publish);
            if has(Provides::PUBSUB) {
                host.publish(proc, info, reply);
            } else {
                NoHost.publish(proc, info, reply);
            }
        }
        Upcall::Lookup {
            id,
            proc,
            keys,
            info,
        } => {
            let reply = reply_to(sink, id, HostAnswer::Lookup);
            if has(Provides::PUBSUB) {
                host.lookup(proc, keys, info, reply);
            } else {
                NoHost.lookup(proc, keys, info, reply);
            }
        }
        Upcall::Unpublish {
            id,
            proc,
            keys,
            info,
        } => {
            let reply = reply_to(sink, id, HostAnswer::Unpublish);
            if has(Provides::PUBSUB) {
                host.unpublish(proc, keys, info, reply);
            } else {
                NoHost.unpublish(proc, keys, info, reply);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// What a [`recorder`] was given.
    type Seen = Arc<Mutex<Vec<(u64, HostAnswer)>>>;

    /// A sink that records what it is given.
    fn recorder() -> (AnswerSink, Seen) {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = Arc::clone(&seen);
        let sink: AnswerSink = Arc::new(move |id, a| s.lock().unwrap().push((id, a)));
        (sink, seen)
    }

    #[test]
    fn a_reply_dropped_unanswered_answers_an_error_and_one_sent_answers_once() {
        let (sink, seen) = recorder();
        drop(reply_to(&sink, 1, HostAnswer::Fence));
        reply_to(&sink, 2, HostAnswer::Fence).send(Ok(vec![7]));
        Reply::<()>::ignored().send(Ok(()));
        assert_eq!(
            *seen.lock().unwrap(),
            [
                (1, HostAnswer::Fence(Err(Reply::<()>::DROPPED))),
                (2, HostAnswer::Fence(Ok(vec![7]))),
            ]
        );
    }

    #[test]
    fn an_upcall_the_host_does_not_provide_is_answered_as_a_null_module_entry() {
        let (sink, seen) = recorder();
        let calls = [
            Upcall::Fence {
                id: 1,
                procs: vec![],
                collect: false,
                data: vec![],
            },
            Upcall::DirectModex {
                id: 2,
                proc: ("ns".into(), 3),
            },
            Upcall::Spawn {
                id: 3,
                parent: ("ns".into(), 0),
                info: vec![],
                apps: vec![],
            },
            Upcall::Finalized {
                id: Some(4),
                nspace: "ns".into(),
                rank: 0,
            },
            Upcall::Finalized {
                id: None,
                nspace: "ns".into(),
                rank: 1,
            },
        ];
        for c in calls {
            deliver(&NoHost, Provides::NONE, c, &sink);
        }
        assert_eq!(
            *seen.lock().unwrap(),
            [
                (1, HostAnswer::Fence(Err(Status::ERR_NOT_SUPPORTED))),
                (2, HostAnswer::DirectModex(Err(Status::ERR_NOT_FOUND))),
                (3, HostAnswer::Spawn(Err(Status::ERR_NOT_SUPPORTED))),
                (4, HostAnswer::ClientFinalized),
            ]
        );
    }
}
