//! The calls a connected client makes through its server, in their non-blocking
//! forms and the blocking forms built on them: fence and get (`_nb`), event handlers
//! and notifications, groups (construct, destruct, leave), and publish / lookup /
//! unpublish (blocking only, for now). Each follows the
//! rules of docs/design.md §6 ([`Pmix::admit`]); a callback runs once, on the progress
//! thread, if and only if the call returned `Ok(())` (a ticket holds the engine for
//! it, see `client/instance/progress.rs`). Two families have files of their own:
//! group invite / join, built from events (`invite.rs`), and rank-state tracking
//! (`ft.rs`, public as `pmix::ft`).
//!
//! **Groups.** The instance keeps the groups this process belongs to and their
//! members as it knows them: a construct records the group, a destruct drops it, a
//! leave drops it at once (before the server is even asked, as the seed page says),
//! and a `PMIX_GROUP_LEFT` event naming another member removes that member.

pub mod ft;
mod invite;

use std::sync::Arc;

use crate::client::events::{EventHandler, EventInfo, run_chain};
use crate::client::instance::progress::{Job, Ticket};
use crate::client::instance::{Mode, Pmix, lock_events};
pub(crate) use crate::client::membership::check_grp;
use crate::client::membership::lock_groups;
use crate::client::{Client, Done, GroupOutcome};
use crate::error::Error;

impl Pmix {
    /// The server connection, for a call named `call` (already admitted).
    fn connected(&self) -> Result<&Client, Error> {
        self.inner
            .client
            .as_deref()
            .ok_or_else(|| Error::Unreach("not connected to a PMIx server".into()))
    }

    /// A ticket for a request accepted now, whose callback runs later.
    pub(crate) fn ticket(&self) -> Result<Ticket, Error> {
        self.inner
            .progress
            .reserve()
            .map_err(|e| if self.is_finalized() { Error::Init } else { e })
    }

    /// `PMIx_Fence_nb`: starts a fence over `procs` (none: this job) with directives
    /// `info` ([`Client::fence`]); `callback` runs once, on the progress thread, with
    /// its result, if and only if this returns `Ok(())`.
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a non-blocking call; [`Error::Unreach`] when not
    /// connected to a server, or when the request cannot be sent.
    #[doc(alias = "PMIx_Fence_nb")]
    pub fn fence_nb(
        &self,
        procs: &[pmix_wire::Proc],
        info: &[pmix_wire::Info],
        callback: impl FnOnce(Result<(), Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Fence_nb", Mode::NonBlocking)?;
        let client = self.connected()?;
        let ticket = self.ticket()?;
        client.fence_then(
            procs,
            info,
            Box::new(move |r| ticket.post(Job::request(move || r, callback))),
        )
    }

    /// `PMIx_Get_nb`: asks for `key` of `nspace`:`rank` ([`Client::get`]); `callback`
    /// runs once, on the progress thread, with the value or the error, if and only if
    /// this returns `Ok(())`.
    ///
    /// # Errors
    /// As [`Pmix::fence_nb`].
    #[doc(alias = "PMIx_Get_nb")]
    pub fn get_nb(
        &self,
        nspace: &str,
        rank: u32,
        key: &str,
        info: &[pmix_wire::Info],
        callback: impl FnOnce(Result<pmix_wire::Value, Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Get_nb", Mode::NonBlocking)?;
        let client = self.connected()?;
        let ticket = self.ticket()?;
        client.get_then(
            nspace,
            rank,
            key,
            info,
            Box::new(move |r| ticket.post(Job::request(move || r, callback))),
        )
    }

    /// `PMIx_Register_event_handler`: registers `handler` for `codes` (none: a
    /// default handler, for every code) and, when connected, tells the server
    /// (REGEVENTS with `info`); `callback` gets the registration's id (from 1), once,
    /// on the progress thread, if and only if this returns `Ok(())`. The handler
    /// runs on the progress thread ([`crate::events`]); it is registered at once, so
    /// an event can reach it before `callback` runs.
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a non-blocking call; [`Error::Unreach`] when the
    /// request cannot be sent. The server's refusal goes to `callback` (and the
    /// handler is removed again).
    #[doc(alias = "PMIx_Register_event_handler")]
    pub fn register_event_handler_nb(
        &self,
        codes: &[i32],
        info: &[pmix_wire::Info],
        handler: EventHandler,
        callback: impl FnOnce(Result<usize, Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Register_event_handler", Mode::NonBlocking)?;
        let ticket = self.ticket()?;
        let (id, kept) = {
            let mut events = lock_events(&self.inner.events);
            let id = events.add(codes, Arc::clone(&handler));
            (id, events.take_cached(codes))
        };
        // The events this process raised before (its model declaration at init), to
        // this handler alone, once each (OpenPMIx's client delivers its cached events
        // to a new registration so).
        for ev in kept {
            let h = Arc::clone(&handler);
            // Refused only once a stop has begun: the event then reaches nobody.
            let _ = self.inner.progress.post(Job::plain(move || {
                run_chain(&[(id, h)], &ev);
            }));
        }
        let Some(client) = &self.inner.client else {
            ticket.post(Job::request(move || Ok(id), callback));
            return Ok(());
        };
        let events = Arc::clone(&self.inner.events);
        let sent = client.register_events_then(
            codes,
            info,
            Box::new(move |r| {
                let r = r.map(|()| id);
                if r.is_err() {
                    lock_events(&events).remove(id);
                }
                ticket.post(Job::request(move || r, callback));
            }),
        );
        if sent.is_err() {
            lock_events(&self.inner.events).remove(id);
        }
        sent
    }

    /// [`Pmix::register_event_handler_nb`], waiting for the id.
    ///
    /// # Errors
    /// As [`Pmix::register_event_handler_nb`] for a blocking call, and the server's
    /// refusal.
    pub fn register_event_handler(
        &self,
        codes: &[i32],
        info: &[pmix_wire::Info],
        handler: EventHandler,
    ) -> Result<usize, Error> {
        self.admit("PMIx_Register_event_handler", Mode::Blocking)?;
        wait(|cb| self.register_event_handler_nb(codes, info, handler, cb))
    }

    /// `PMIx_Deregister_event_handler`: removes registration `id`; a connected client
    /// tells the server about the codes nobody listens to any more (DEREGEVENTS, no
    /// reply). An event already on its way may still reach the handler once.
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a non-blocking call; `PMIX_ERR_BAD_PARAM` for an id
    /// that is not registered.
    #[doc(alias = "PMIx_Deregister_event_handler")]
    pub fn deregister_event_handler(&self, id: usize) -> Result<(), Error> {
        self.admit("PMIx_Deregister_event_handler", Mode::NonBlocking)?;
        let gone = lock_events(&self.inner.events)
            .remove(id)
            .ok_or_else(|| Error::BadParam(format!("no event handler {id}").into()))?;
        if let Some(c) = &self.inner.client
            && !gone.is_empty()
        {
            // The server being gone changes nothing here.
            let _ = c.deregister_events(&gone);
        }
        Ok(())
    }

    /// `PMIx_Notify_event`: raises event `status` from `source` (this process when
    /// `None`) in `range` with `info`. This process's own handlers get it (unless the
    /// range is CUSTOM and `pmix.evrange` does not name it); a connected client sends
    /// it to the server too unless the range is PROC_LOCAL. `callback` gets the
    /// server's answer (or success at once when nothing is sent), once, on the
    /// progress thread, if and only if this returns `Ok(())`.
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a non-blocking call; [`Error::Unreach`] when the
    /// request cannot be sent.
    #[doc(alias = "PMIx_Notify_event")]
    pub fn notify_event(
        &self,
        status: i32,
        source: Option<pmix_wire::Proc>,
        range: pmix_wire::DataRange,
        info: &[pmix_wire::Info],
        callback: impl FnOnce(Result<(), Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Notify_event", Mode::NonBlocking)?;
        let me = pmix_wire::Proc::from(&self.inner.proc_id);
        let ticket = self.ticket()?;
        let proc_local = range == pmix_wire::DataRange::PROC_LOCAL;
        if let Some(c) = &self.inner.client
            && !proc_local
        {
            c.notify_then(
                status,
                range,
                info,
                Box::new(move |r| ticket.post(Job::request(move || r, callback))),
            )?;
        } else if let Some(server) = self.embedded().filter(|_| !proc_local) {
            // A host's notification: to the clients of the server it embeds.
            let r = server.raise_event(status, source.as_ref(), info, range);
            ticket.post(Job::request(move || r, callback));
        } else {
            ticket.post(Job::request(|| Ok(()), callback));
        }
        if reaches_me(range, info, &me) {
            let ev = EventInfo {
                status,
                source: source.unwrap_or(me),
                info: info.to_vec(),
            };
            lock_events(&self.inner.events).cache(ev.clone());
            let events = Arc::clone(&self.inner.events);
            // Refused only once a stop has begun: the event then reaches nobody.
            let _ = self.inner.progress.post(Job::plain(move || {
                let chain = lock_events(&events).chain(&ev);
                run_chain(&chain, &ev);
            }));
        }
        Ok(())
    }

    /// The members of group `grp` as this process knows them (`None`: it is not a
    /// member).
    pub fn group_members(&self, grp: &str) -> Option<Vec<pmix_wire::Proc>> {
        lock_groups(&self.inner.groups).groups.get(grp).cloned()
    }

    /// `PMIx_Group_construct_nb`: constructs group `grp` of `procs` (a collective:
    /// every member calls it) with directives `info` (`PMIX_GROUP_ASSIGN_CONTEXT_ID`,
    /// `PMIX_GROUP_FT_COLLECTIVE`, …); `callback` gets the outcome, once, on the
    /// progress thread, if and only if this returns `Ok(())`. On success the group is
    /// recorded with its members.
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a non-blocking call; [`Error::BadParam`] for a group id
    /// that is empty, over 255 bytes or holds a NUL, or no members;
    /// [`Error::Unreach`] when not connected. The server's status goes to `callback`.
    #[doc(alias = "PMIx_Group_construct_nb")]
    pub fn group_construct_nb(
        &self,
        grp: &str,
        procs: &[pmix_wire::Proc],
        info: &[pmix_wire::Info],
        callback: impl FnOnce(Result<GroupOutcome, Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Group_construct_nb", Mode::NonBlocking)?;
        check_grp(grp)?;
        if procs.is_empty() {
            return Err(Error::BadParam("a group needs members".into()));
        }
        let client = self.connected()?;
        let ticket = self.ticket()?;
        let (groups, id, members) = (
            Arc::clone(&self.inner.groups),
            grp.to_owned(),
            procs.to_vec(),
        );
        client.group_construct_then(
            grp,
            procs,
            info,
            Box::new(move |r| {
                if let Ok(o) = &r {
                    let members = o.members.clone().unwrap_or(members);
                    lock_groups(&groups).groups.insert(id, members);
                }
                ticket.post(Job::request(move || r, callback));
            }),
        )
    }

    /// [`Pmix::group_construct_nb`], waiting for the outcome.
    ///
    /// # Errors
    /// As [`Pmix::group_construct_nb`] for a blocking call, and the server's status.
    #[doc(alias = "PMIx_Group_construct")]
    pub fn group_construct(
        &self,
        grp: &str,
        procs: &[pmix_wire::Proc],
        info: &[pmix_wire::Info],
    ) -> Result<GroupOutcome, Error> {
        self.admit("PMIx_Group_construct", Mode::Blocking)?;
        wait(|cb| self.group_construct_nb(grp, procs, info, cb))
    }

    /// `PMIx_Group_destruct_nb`: destructs group `grp` (a collective of its
    /// members); on success the record goes.
    ///
    /// # Errors
    /// As [`Pmix::group_construct_nb`].
    #[doc(alias = "PMIx_Group_destruct_nb")]
    pub fn group_destruct_nb(
        &self,
        grp: &str,
        info: &[pmix_wire::Info],
        callback: impl FnOnce(Result<(), Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Group_destruct_nb", Mode::NonBlocking)?;
        check_grp(grp)?;
        let client = self.connected()?;
        let ticket = self.ticket()?;
        let (groups, id) = (Arc::clone(&self.inner.groups), grp.to_owned());
        client.group_destruct_then(
            grp,
            info,
            Box::new(move |r| {
                if r.is_ok() {
                    lock_groups(&groups).groups.remove(&id);
                }
                ticket.post(Job::request(move || r, callback));
            }),
        )
    }

    /// [`Pmix::group_destruct_nb`], waiting for the answer.
    ///
    /// # Errors
    /// As [`Pmix::group_destruct_nb`] for a blocking call, and the server's status.
    #[doc(alias = "PMIx_Group_destruct")]
    pub fn group_destruct(&self, grp: &str, info: &[pmix_wire::Info]) -> Result<(), Error> {
        self.admit("PMIx_Group_destruct", Mode::Blocking)?;
        wait(|cb| self.group_destruct_nb(grp, info, cb))
    }

    /// `PMIx_Group_leave_nb` (seed `001`): drops `grp` from this process's groups at
    /// once and asks the server to raise `PMIX_GROUP_LEFT` to the other current
    /// members; `callback` gets the server's answer (sent once the event is
    /// generated, not when members receive it), once, on the progress thread, if
    /// and only if this returns `Ok(())`. An in-flight construct or destruct of the
    /// group completes on the survivors (the server's business).
    ///
    /// # Errors
    /// As [`Pmix::group_construct_nb`]; `PMIX_ERR_NOT_SUPPORTED` from a server without
    /// group operations (every OpenPMIx 4.2 one) goes to `callback`.
    #[doc(alias = "PMIx_Group_leave_nb")]
    pub fn group_leave_nb(
        &self,
        grp: &str,
        info: &[pmix_wire::Info],
        callback: impl FnOnce(Result<(), Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Group_leave_nb", Mode::NonBlocking)?;
        check_grp(grp)?;
        let client = self.connected()?;
        let ticket = self.ticket()?;
        lock_groups(&self.inner.groups).groups.remove(grp);
        client.group_leave_then(
            grp,
            info,
            Box::new(move |r| ticket.post(Job::request(move || r, callback))),
        )
    }

    /// [`Pmix::group_leave_nb`], waiting for the answer.
    ///
    /// # Errors
    /// As [`Pmix::group_leave_nb`] for a blocking call (`PMIX_ERR_WOULD_BLOCK` on the
    /// progress thread, nothing done), and the server's status.
    #[doc(alias = "PMIx_Group_leave")]
    pub fn group_leave(&self, grp: &str, info: &[pmix_wire::Info]) -> Result<(), Error> {
        self.admit("PMIx_Group_leave", Mode::Blocking)?;
        wait(|cb| self.group_leave_nb(grp, info, cb))
    }
}

impl Pmix {
    /// `PMIx_Put`: files `value` under `key` in `scope` ([`Client::put`]; sent to the
    /// server at the next commit).
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a blocking call; [`Error::Unreach`] when not connected;
    /// [`Client::put`]'s `PMIX_ERR_BAD_PARAM`.
    #[doc(alias = "PMIx_Put")]
    pub fn put(
        &self,
        scope: pmix_wire::Scope,
        key: &str,
        value: pmix_wire::Value,
    ) -> Result<(), Error> {
        self.admit("PMIx_Put", Mode::Blocking)?;
        self.connected()?.put(scope, key, value)
    }

    /// `PMIx_Store_internal`: files `value` under `key` for `nspace`:`rank` in this
    /// process only ([`Client::store_internal`]); a process with no server keeps it
    /// for its own gets. Never waits.
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a non-blocking call; `PMIX_ERR_BAD_PARAM` for an empty
    /// key, one over 511 bytes or holding a NUL.
    #[doc(alias = "PMIx_Store_internal")]
    pub fn store_internal(
        &self,
        nspace: &str,
        rank: u32,
        key: &str,
        value: pmix_wire::Value,
    ) -> Result<(), Error> {
        self.admit("PMIx_Store_internal", Mode::NonBlocking)?;
        if let Some(c) = self.client() {
            return c.store_internal(nspace, rank, key, value);
        }
        if !pmix_wire::keys::is_valid(key) {
            return Err(Error::bad_key());
        }
        self.inner
            .internal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert((nspace.to_owned(), rank, key.to_owned()), value);
        Ok(())
    }

    /// `PMIx_Commit`: sends every value put so far to the server.
    ///
    /// # Errors
    /// As [`Pmix::put`]; the server's status.
    #[doc(alias = "PMIx_Commit")]
    pub fn commit(&self) -> Result<(), Error> {
        self.admit("PMIx_Commit", Mode::Blocking)?;
        self.connected()?.commit()
    }

    /// `PMIx_Fence`: waits until every process of `procs` (none: this job) has
    /// entered the fence ([`Client::fence`]).
    ///
    /// # Errors
    /// As [`Pmix::put`]; the server's status (`PMIX_ERR_LOST_CONNECTION` when a
    /// participant died without `PMIX_GROUP_FT_COLLECTIVE`, `PMIX_ERR_TIMEOUT`, …).
    #[doc(alias = "PMIx_Fence")]
    pub fn fence(&self, procs: &[pmix_wire::Proc], info: &[pmix_wire::Info]) -> Result<(), Error> {
        self.admit("PMIx_Fence", Mode::Blocking)?;
        self.connected()?.fence(procs, info)
    }

    /// `PMIx_Get`: the value of `key` for `nspace`:`rank` ([`Client::get`]). A
    /// process that is not a launched client still knows its own namespace and rank
    /// (`pmix.nspace`, `pmix.rank`).
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a blocking call; [`Client::get`]'s; without a server,
    /// `PMIX_ERR_NOT_FOUND` for any other key of this namespace and
    /// [`Error::Unreach`] for another namespace.
    #[doc(alias = "PMIx_Get")]
    pub fn get(
        &self,
        nspace: &str,
        rank: u32,
        key: &str,
        info: &[pmix_wire::Info],
    ) -> Result<pmix_wire::Value, Error> {
        self.admit("PMIx_Get", Mode::Blocking)?;
        if let Some(c) = self.client() {
            return c.get(nspace, rank, key, info);
        }
        let stored = self
            .inner
            .internal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get(&(nspace.to_owned(), rank, key.to_owned()))
            .cloned();
        if let Some(v) = stored {
            return Ok(v);
        }
        let me = self.proc_id();
        if nspace == me.nspace && rank == me.rank {
            match key {
                pmix_wire::keys::NSPACE => {
                    return Ok(pmix_wire::Value::string(me.nspace.to_string()));
                }
                pmix_wire::keys::RANK => return Ok(pmix_wire::Value::ProcRank(me.rank)),
                _ => {}
            }
        }
        if nspace == me.nspace {
            Err(Error::Status {
                status: pmix_core::Status::ERR_NOT_FOUND,
                why: format!("{key} is not known without a server").into(),
            })
        } else {
            Err(Error::Unreach("not connected to a PMIx server".into()))
        }
    }

    /// `PMIx_Get` with a NULL key in a process that is not a connected client (a
    /// host's server library, a singleton): every value [`Pmix::store_internal`] kept
    /// for `nspace`:`rank`, as a data array of infos in key order, as libpmix2 answers
    /// a host (Open MPI's `mpirun` asks so for all it stored about an `orted` before
    /// launching ranks there).
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a blocking call; `PMIX_ERR_NOT_SUPPORTED` in a connected
    /// client (a NULL-key get from the server is not implemented);
    /// `PMIX_ERR_NOT_FOUND` when nothing is stored for the process.
    #[doc(alias = "PMIx_Get")]
    pub fn get_all_stored(&self, nspace: &str, rank: u32) -> Result<pmix_wire::Value, Error> {
        self.admit("PMIx_Get", Mode::Blocking)?;
        if self.client().is_some() {
            return Err(Error::NotSupported(
                "PMIx_Get without a key from a client".into(),
            ));
        }
        let mut found: Vec<pmix_wire::Info> = self
            .inner
            .internal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .filter(|((ns, r, _), _)| ns == nspace && *r == rank)
            .map(|((_, _, k), v)| pmix_wire::Info::new(k.as_str(), v.clone()))
            .collect();
        if found.is_empty() {
            return Err(Error::Status {
                status: pmix_core::Status::ERR_NOT_FOUND,
                why: format!("nothing stored for {nspace}:{rank}").into(),
            });
        }
        found.sort_by(|a, b| a.key.as_bytes().cmp(b.key.as_bytes()));
        Ok(pmix_wire::Value::DataArray(pmix_wire::DataArray::infos(
            found,
        )))
    }

    /// `PMIx_Publish`: publishes `info` (key and value each) for other processes'
    /// lookups, waiting for the server's answer.
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a blocking call; [`Error::Unreach`] when not connected;
    /// the server's status (a key already published: `PMIX_ERR_DUPLICATE_KEY`, …).
    #[doc(alias = "PMIx_Publish")]
    pub fn publish(&self, info: &[pmix_wire::Info]) -> Result<(), Error> {
        self.admit("PMIx_Publish", Mode::Blocking)?;
        let client = self.connected()?;
        wait(|cb| client.publish_then(info, cb))
    }

    /// `PMIx_Lookup`: what was published under `keys` (publisher, key, value), waiting
    /// for the server's answer.
    ///
    /// # Errors
    /// As [`Pmix::publish`]; `PMIX_ERR_NOT_FOUND` when nothing was found.
    #[doc(alias = "PMIx_Lookup")]
    pub fn lookup(
        &self,
        keys: &[&str],
        info: &[pmix_wire::Info],
    ) -> Result<Vec<pmix_wire::value::Pdata>, Error> {
        self.admit("PMIx_Lookup", Mode::Blocking)?;
        let client = self.connected()?;
        wait(|cb| client.lookup_then(keys, info, cb))
    }

    /// `PMIx_Publish_nb`: [`Pmix::publish`], with the server's answer passed to
    /// `callback`, once, on the progress thread, if and only if this returns `Ok(())`.
    ///
    /// # Errors
    /// As [`Pmix::fence_nb`].
    #[doc(alias = "PMIx_Publish_nb")]
    pub fn publish_nb(
        &self,
        info: &[pmix_wire::Info],
        callback: impl FnOnce(Result<(), Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Publish_nb", Mode::NonBlocking)?;
        let client = self.connected()?;
        let ticket = self.ticket()?;
        client.publish_then(
            info,
            Box::new(move |r| ticket.post(Job::request(move || r, callback))),
        )
    }

    /// `PMIx_Lookup_nb`: [`Pmix::lookup`], with what was found passed to `callback`,
    /// once, on the progress thread, if and only if this returns `Ok(())`.
    ///
    /// # Errors
    /// As [`Pmix::fence_nb`].
    #[doc(alias = "PMIx_Lookup_nb")]
    pub fn lookup_nb(
        &self,
        keys: &[&str],
        info: &[pmix_wire::Info],
        callback: impl FnOnce(Result<Vec<pmix_wire::value::Pdata>, Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Lookup_nb", Mode::NonBlocking)?;
        let client = self.connected()?;
        let ticket = self.ticket()?;
        client.lookup_then(
            keys,
            info,
            Box::new(move |r| ticket.post(Job::request(move || r, callback))),
        )
    }

    /// `PMIx_Unpublish_nb`: [`Pmix::unpublish`], with the server's answer passed to
    /// `callback`, once, on the progress thread, if and only if this returns `Ok(())`.
    ///
    /// # Errors
    /// As [`Pmix::fence_nb`].
    #[doc(alias = "PMIx_Unpublish_nb")]
    pub fn unpublish_nb(
        &self,
        keys: &[&str],
        info: &[pmix_wire::Info],
        callback: impl FnOnce(Result<(), Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Unpublish_nb", Mode::NonBlocking)?;
        let client = self.connected()?;
        let ticket = self.ticket()?;
        client.unpublish_then(
            keys,
            info,
            Box::new(move |r| ticket.post(Job::request(move || r, callback))),
        )
    }

    /// `PMIx_Unpublish`: withdraws what this process published under `keys` (none:
    /// everything), waiting for the server's answer.
    ///
    /// # Errors
    /// As [`Pmix::publish`].
    #[doc(alias = "PMIx_Unpublish")]
    pub fn unpublish(&self, keys: &[&str], info: &[pmix_wire::Info]) -> Result<(), Error> {
        self.admit("PMIx_Unpublish", Mode::Blocking)?;
        let client = self.connected()?;
        wait(|cb| client.unpublish_then(keys, info, cb))
    }
}

impl Pmix {
    /// `PMIx_Query_info_nb`: answers `queries` ([`Client::query_then`]: from this
    /// process's store when it can, else from the server); `callback` gets the
    /// answers, once, on the progress thread, if and only if this returns `Ok(())`.
    ///
    /// # Errors
    /// As [`Pmix::admit`] ([`Mode::NonBlocking`]); `PMIX_ERR_BAD_PARAM` for no
    /// queries; [`Error::Unreach`] when not connected.
    #[doc(alias = "PMIx_Query_info_nb")]
    pub fn query_info_nb(
        &self,
        queries: &[pmix_wire::Query],
        callback: impl FnOnce(Result<Vec<pmix_wire::Info>, Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Query_info_nb", Mode::NonBlocking)?;
        if queries.is_empty() {
            return Err(Error::BadParam("no queries".into()));
        }
        self.connected_nb(|c, done| c.query_then(queries, done), callback)
    }

    /// `PMIx_Query_info`: [`Pmix::query_info_nb`], waiting for the answers.
    ///
    /// # Errors
    /// As [`Pmix::query_info_nb`] for a blocking call, and the server's status.
    #[doc(alias = "PMIx_Query_info")]
    pub fn query_info(&self, queries: &[pmix_wire::Query]) -> Result<Vec<pmix_wire::Info>, Error> {
        self.admit("PMIx_Query_info", Mode::Blocking)?;
        wait(|cb| self.query_info_nb(queries, cb))
    }

    /// `PMIx_Resolve_peers` ([`Client::resolve_peers`]).
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a blocking call; [`Error::Unreach`] when not
    /// connected; as [`Client::resolve_peers`].
    #[doc(alias = "PMIx_Resolve_peers")]
    pub fn resolve_peers(
        &self,
        nodename: Option<&str>,
        nspace: Option<&str>,
    ) -> Result<Vec<pmix_wire::Proc>, Error> {
        self.admit("PMIx_Resolve_peers", Mode::Blocking)?;
        self.connected()?.resolve_peers(nodename, nspace)
    }

    /// `PMIx_Resolve_nodes` ([`Client::resolve_nodes`]).
    ///
    /// # Errors
    /// As [`Pmix::resolve_peers`]; as [`Client::resolve_nodes`].
    #[doc(alias = "PMIx_Resolve_nodes")]
    pub fn resolve_nodes(&self, nspace: Option<&str>) -> Result<String, Error> {
        self.admit("PMIx_Resolve_nodes", Mode::Blocking)?;
        self.connected()?.resolve_nodes(nspace)
    }
}

impl Pmix {
    /// Starts a request `start` hands `done` to, for call `call` (already admitted):
    /// `callback` gets the outcome once, on the progress thread, if and only if this
    /// returns `Ok(())`.
    fn connected_nb<T: Send + 'static>(
        &self,
        start: impl FnOnce(&Client, Done<T>) -> Result<(), Error>,
        callback: impl FnOnce(Result<T, Error>) + Send + 'static,
    ) -> Result<(), Error> {
        let client = self.connected()?;
        let ticket = self.ticket()?;
        start(
            client,
            Box::new(move |r| ticket.post(Job::request(move || r, callback))),
        )
    }

    /// `PMIx_Connect_nb` (`connect` true) or `PMIx_Disconnect_nb`: connects this
    /// process with `procs` or disconnects it from them (a collective of them, at
    /// the server); `callback` gets the outcome, as [`Pmix::log_nb`].
    ///
    /// # Errors
    /// As [`Pmix::log_nb`]; `PMIX_ERR_BAD_PARAM` for no procs.
    #[doc(alias = "PMIx_Connect_nb")]
    #[doc(alias = "PMIx_Disconnect_nb")]
    pub fn connect_nb(
        &self,
        connect: bool,
        procs: &[pmix_wire::Proc],
        info: &[pmix_wire::Info],
        callback: impl FnOnce(Result<(), Error>) + Send + 'static,
    ) -> Result<(), Error> {
        let call = if connect {
            "PMIx_Connect_nb"
        } else {
            "PMIx_Disconnect_nb"
        };
        self.admit(call, Mode::NonBlocking)?;
        if procs.is_empty() {
            return Err(Error::BadParam("no processes to connect with".into()));
        }
        self.connected_nb(
            |c, done| {
                if connect {
                    c.connect_then(procs, info, done)
                } else {
                    c.disconnect_then(procs, info, done)
                }
            },
            callback,
        )
    }

    /// `PMIx_Connect` / `PMIx_Disconnect`: [`Pmix::connect_nb`], waiting for the
    /// outcome.
    ///
    /// # Errors
    /// As [`Pmix::connect_nb`] for a blocking call, and the server's status.
    #[doc(alias = "PMIx_Connect")]
    #[doc(alias = "PMIx_Disconnect")]
    pub fn connect(
        &self,
        connect: bool,
        procs: &[pmix_wire::Proc],
        info: &[pmix_wire::Info],
    ) -> Result<(), Error> {
        self.admit(
            if connect {
                "PMIx_Connect"
            } else {
                "PMIx_Disconnect"
            },
            Mode::Blocking,
        )?;
        wait(|cb| self.connect_nb(connect, procs, info, cb))
    }

    /// `PMIx_Spawn_nb`: asks the server to start `apps` with job-level directives
    /// `info`; `callback` gets the new job's namespace, once, on the progress thread,
    /// if and only if this returns `Ok(())`.
    ///
    /// # Errors
    /// As [`Pmix::log_nb`]; `PMIX_ERR_BAD_PARAM` for no apps.
    #[doc(alias = "PMIx_Spawn_nb")]
    pub fn spawn_nb(
        &self,
        info: &[pmix_wire::Info],
        apps: &[pmix_wire::App],
        callback: impl FnOnce(Result<String, Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Spawn_nb", Mode::NonBlocking)?;
        if apps.is_empty() {
            return Err(Error::BadParam("no apps to spawn".into()));
        }
        self.connected_nb(|c, done| c.spawn_then(info, apps, done), callback)
    }

    /// `PMIx_Spawn`: [`Pmix::spawn_nb`], waiting for the new job's namespace.
    ///
    /// # Errors
    /// As [`Pmix::spawn_nb`] for a blocking call, and the server's status.
    #[doc(alias = "PMIx_Spawn")]
    pub fn spawn(
        &self,
        info: &[pmix_wire::Info],
        apps: &[pmix_wire::App],
    ) -> Result<String, Error> {
        self.admit("PMIx_Spawn", Mode::Blocking)?;
        wait(|cb| self.spawn_nb(info, apps, cb))
    }

    /// `PMIx_Log_nb`: asks the server to log `data` with `directives`; `callback`
    /// gets its answer, once, on the progress thread, if and only if this returns
    /// `Ok(())`.
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a non-blocking call; [`Error::Unreach`] when not
    /// connected. The server's status (`PMIX_ERR_NOT_SUPPORTED` from ours) goes to
    /// `callback`.
    #[doc(alias = "PMIx_Log_nb")]
    pub fn log_nb(
        &self,
        data: &[pmix_wire::Info],
        directives: &[pmix_wire::Info],
        callback: impl FnOnce(Result<(), Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Log_nb", Mode::NonBlocking)?;
        self.connected_nb(|c, done| c.log_then(data, directives, done), callback)
    }

    /// `PMIx_Log`: [`Pmix::log_nb`], waiting for the answer.
    ///
    /// # Errors
    /// As [`Pmix::log_nb`] for a blocking call, and the server's status.
    #[doc(alias = "PMIx_Log")]
    pub fn log(
        &self,
        data: &[pmix_wire::Info],
        directives: &[pmix_wire::Info],
    ) -> Result<(), Error> {
        self.admit("PMIx_Log", Mode::Blocking)?;
        wait(|cb| self.log_nb(data, directives, cb))
    }

    /// `PMIx_Job_control_nb`: asks the server for job control of `targets` with
    /// `directives`; `callback` gets the infos it answers with, as [`Pmix::log_nb`].
    ///
    /// # Errors
    /// As [`Pmix::log_nb`] (our server accepts cleanup registrations only).
    #[doc(alias = "PMIx_Job_control_nb")]
    pub fn job_control_nb(
        &self,
        targets: &[pmix_wire::Proc],
        directives: &[pmix_wire::Info],
        callback: impl FnOnce(Result<Vec<pmix_wire::Info>, Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Job_control_nb", Mode::NonBlocking)?;
        self.connected_nb(
            |c, done| c.job_control_then(targets, directives, done),
            callback,
        )
    }

    /// `PMIx_Job_control`: [`Pmix::job_control_nb`], waiting for the answer.
    ///
    /// # Errors
    /// As [`Pmix::job_control_nb`] for a blocking call, and the server's status.
    #[doc(alias = "PMIx_Job_control")]
    pub fn job_control(
        &self,
        targets: &[pmix_wire::Proc],
        directives: &[pmix_wire::Info],
    ) -> Result<Vec<pmix_wire::Info>, Error> {
        self.admit("PMIx_Job_control", Mode::Blocking)?;
        wait(|cb| self.job_control_nb(targets, directives, cb))
    }

    /// `PMIx_Process_monitor_nb`: asks the server to monitor `monitor` (a heartbeat,
    /// a file, …), raising `error` when it fails; `callback` gets the infos it
    /// answers with, as [`Pmix::log_nb`].
    ///
    /// # Errors
    /// As [`Pmix::log_nb`].
    #[doc(alias = "PMIx_Process_monitor_nb")]
    pub fn process_monitor_nb(
        &self,
        monitor: &pmix_wire::Info,
        error: i32,
        directives: &[pmix_wire::Info],
        callback: impl FnOnce(Result<Vec<pmix_wire::Info>, Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Process_monitor_nb", Mode::NonBlocking)?;
        self.connected_nb(
            |c, done| c.monitor_then(monitor, error, directives, done),
            callback,
        )
    }

    /// `PMIx_Process_monitor`: [`Pmix::process_monitor_nb`], waiting for the answer.
    ///
    /// # Errors
    /// As [`Pmix::process_monitor_nb`] for a blocking call, and the server's status.
    #[doc(alias = "PMIx_Process_monitor")]
    pub fn process_monitor(
        &self,
        monitor: &pmix_wire::Info,
        error: i32,
        directives: &[pmix_wire::Info],
    ) -> Result<Vec<pmix_wire::Info>, Error> {
        self.admit("PMIx_Process_monitor", Mode::Blocking)?;
        wait(|cb| self.process_monitor_nb(monitor, error, directives, cb))
    }
}

/// [`crate::client::wait`] for the instance's calls, whose callbacks a ticket
/// guarantees: a dropped one means the engine stopped.
pub(crate) fn wait<T: Send + 'static>(
    start: impl FnOnce(Done<T>) -> Result<(), Error>,
) -> Result<T, Error> {
    crate::client::wait(start, || Error::NotAvailable)
}

/// Whether an event this process raises in `range` with `info` reaches its own
/// handlers: always, except a CUSTOM range (6) whose `pmix.evrange` does not name it.
fn reaches_me(range: pmix_wire::DataRange, info: &[pmix_wire::Info], me: &pmix_wire::Proc) -> bool {
    if range.0 != 6 {
        return true;
    }
    info.iter()
        .filter(|i| i.key == pmix_wire::keys::EVENT_CUSTOM_RANGE)
        .any(|i| match &i.value {
            pmix_wire::Value::Proc(p) => covers(p, me),
            pmix_wire::Value::DataArray(a) => a.items.iter().any(|v| match v {
                pmix_wire::Value::Proc(p) => covers(p, me),
                _ => false,
            }),
            _ => false,
        })
}

/// Whether `p` (a rank, or WILDCARD) names `me`.
fn covers(p: &pmix_wire::Proc, me: &pmix_wire::Proc) -> bool {
    p.nspace == me.nspace && (p.rank == me.rank || p.rank == pmix_wire::Rank::WILDCARD)
}
