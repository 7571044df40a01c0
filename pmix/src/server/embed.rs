//! The server a [`Role::Server`](crate::client::instance::Role::Server) instance
//! embeds: the one place that joins the instance (`client/instance/`) to [`Server`].
//!
//! A host that calls `PMIx_server_init` gets an instance of its own (its event
//! handlers, its distance queries) and a [`Server`]; [`Pmix::attach_server`] hands the
//! server to the instance, after which a notification the host raises beyond its own
//! process goes to that server's clients. The instance holds the server as an
//! [`Embedded`], so the client side imports nothing of the server; this module, which
//! belongs with the server's host interface, implements it.

use std::any::Any;
use std::sync::Arc;

use super::hosted::event_info_from_host;
use crate::client::instance::{Embedded, Pmix, Role, WeakPmix};
use crate::error::Error;
use crate::server::Server;

impl Embedded for Arc<Server> {
    fn raise_event(
        &self,
        status: i32,
        source: Option<&pmix_wire::Proc>,
        info: &[pmix_wire::Info],
        range: pmix_wire::DataRange,
    ) -> Result<(), Error> {
        let src = source.map(|p| (p.nspace.as_str().unwrap_or_default(), p.rank.0));
        let (info, range) = event_info_from_host(info.to_vec(), range);
        Server::raise_event(self, status, src, info, range)
            .map_err(|_| Error::Unreach("the embedded server has stopped".into()))
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

impl Pmix {
    /// Makes `server` the one this [`Role::Server`](crate::client::instance::Role::Server) instance
    /// embeds: from now on a [`Pmix::notify_event`] whose range reaches beyond this
    /// process is raised among that server's clients.
    ///
    /// # Errors
    /// [`Error::BadParam`] when the instance is not a server or has a server already.
    pub fn attach_server(&self, server: Arc<Server>) -> Result<(), Error> {
        self.embed(Box::new(server))
    }

    /// The server [`Pmix::attach_server`] attached, if any.
    pub fn server(&self) -> Option<&Arc<Server>> {
        self.embedded()?.as_any().downcast_ref::<Arc<Server>>()
    }

    /// Starts the server this [`Role::Server`] instance embeds, hosted by `host`
    /// ([`Server::start_with_host`](crate::server::Server::start_with_host)), and
    /// attaches it ([`Pmix::attach_server`]). The instance adds its rule to the
    /// host's: a client lost without finalizing ([`Host::client_lost`]) is also
    /// raised as `PMIX_ERR_LOST_CONNECTION` (range PROC_LOCAL, source the client) to
    /// the handlers registered in this process, as OpenPMIx reports it (Slurm's
    /// default handler then ends the step); every other upcall goes to `host` as it
    /// is. What `PMIx_server_init` uses.
    ///
    /// # Errors
    /// [`Error::BadParam`] when the instance is not a server or has a server already;
    /// [`Error::Os`] when the server cannot be started (the OS error of its
    /// listener, its directory or its thread).
    ///
    /// [`Host::client_lost`]: crate::server::Host::client_lost
    #[doc(alias = "PMIx_server_init")]
    pub fn serve(
        &self,
        cfg: crate::server::ServerConfig,
        host: Arc<dyn crate::server::Host>,
    ) -> Result<Arc<crate::server::Server>, Error> {
        if self.role() != Role::Server || self.embedded().is_some() {
            return Err(Error::BadParam(
                "only a server instance without a server starts one".into(),
            ));
        }
        let host = Arc::new(ServerRole {
            host,
            inst: self.downgrade(),
        });
        let server = crate::server::Server::start_with_host(cfg, host)
            .map_err(|e| Error::Os(format!("cannot start the server: {e}")))?;
        let server = Arc::new(server);
        self.attach_server(Arc::clone(&server))?;
        Ok(server)
    }
}

/// The host of a server a [`Role::Server`] instance embeds ([`Pmix::serve`]): the
/// instance's rules around the host's own upcalls.
struct ServerRole {
    host: Arc<dyn crate::server::Host>,
    /// The instance (not kept alive by its server's thread).
    inst: WeakPmix,
}

impl crate::server::Host for ServerRole {
    fn provides(&self) -> crate::server::Provides {
        self.host.provides()
    }

    fn client_connected(&self, proc: crate::server::ProcName) {
        self.host.client_connected(proc);
    }

    fn client_finalized(&self, proc: crate::server::ProcName, reply: crate::server::Reply<()>) {
        self.host.client_finalized(proc, reply);
    }

    fn client_aborted(&self, proc: crate::server::ProcName, status: i32, message: Option<String>) {
        self.host.client_aborted(proc, status, message);
    }

    fn client_lost(&self, proc: crate::server::ProcName) {
        if let Some(inst) = self.inst.upgrade() {
            let source = pmix_wire::Proc::new(proc.0.as_str(), proc.1);
            let _ = inst.notify_event(
                pmix_core::Status::ERR_LOST_CONNECTION.0,
                Some(source),
                pmix_wire::DataRange::PROC_LOCAL,
                &[],
                |_| {},
            );
        }
        self.host.client_lost(proc);
    }

    fn fence(
        &self,
        procs: Vec<crate::server::ProcName>,
        collect: bool,
        data: Vec<u8>,
        reply: crate::server::Reply<Vec<u8>>,
    ) {
        self.host.fence(procs, collect, data, reply);
    }

    fn direct_modex(&self, proc: crate::server::ProcName, reply: crate::server::Reply<Vec<u8>>) {
        self.host.direct_modex(proc, reply);
    }

    fn notify(
        &self,
        code: i32,
        source: crate::server::ProcName,
        range: u8,
        info: Vec<pmix_wire::Info>,
    ) {
        self.host.notify(code, source, range, info);
    }

    fn publish(
        &self,
        proc: crate::server::ProcName,
        info: Vec<pmix_wire::Info>,
        reply: crate::server::Reply<()>,
    ) {
        self.host.publish(proc, info, reply);
    }

    fn lookup(
        &self,
        proc: crate::server::ProcName,
        keys: Vec<String>,
        info: Vec<pmix_wire::Info>,
        reply: crate::server::Reply<Vec<pmix_wire::Pdata>>,
    ) {
        self.host.lookup(proc, keys, info, reply);
    }

    fn unpublish(
        &self,
        proc: crate::server::ProcName,
        keys: Vec<String>,
        info: Vec<pmix_wire::Info>,
        reply: crate::server::Reply<()>,
    ) {
        self.host.unpublish(proc, keys, info, reply);
    }

    fn spawn(
        &self,
        parent: crate::server::ProcName,
        info: Vec<pmix_wire::Info>,
        apps: Vec<pmix_wire::App>,
        reply: crate::server::Reply<String>,
    ) {
        self.host.spawn(parent, info, apps, reply);
    }

    fn log(&self, proc: crate::server::ProcName, stream: crate::server::LogStream, text: String) {
        self.host.log(proc, stream, text);
    }
}
