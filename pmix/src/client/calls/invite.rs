//! `PMIx_Group_invite` / `PMIx_Group_join` (and their `_nb` forms) the way OpenPMIx
//! 4.2 clients build them, from events (docs/wire.md §6.9): no group command goes to
//! the server.
//!
//! - The **inviter** registers, ahead of the user's handlers, a handler for
//!   `PMIX_GROUP_INVITE_ACCEPTED`, `_DECLINED` and `PMIX_EVENT_PROC_TERMINATED`
//!   (REGEVENTS to the server), then notifies `PMIX_GROUP_INVITED` to the invitees
//!   (range CUSTOM, `pmix.evrange` = the invitees, `pmix.evnondef`, `pmix.grp.id`).
//!   Each invitee's answer (or its termination) counts once; when every invitee has
//!   answered, the handler goes, the group (the inviter and the acceptors) is
//!   recorded here, and `PMIX_GROUP_CONSTRUCT_COMPLETE` goes to the invitees with the
//!   same infos (a server that sees it records the group: later fences, destructs
//!   and leaves over its id work). The invite completes with the members once that
//!   notification is sent.
//! - An **invitee** answers with `PMIX_GROUP_INVITE_ACCEPTED` or `_DECLINED` to the
//!   leader (range CUSTOM, `pmix.evrange` = the leader; without a leader, range
//!   SESSION) and completes once the notification is sent.
//!
//! Unlike libpmix2 4.2.2 (whose inviter completes once as many acceptances as
//! invitees are in, counting itself, and then ignores a later answer), the invite
//! completes only when every invitee has answered. `PMIX_TIMEOUT` is not honoured
//! (libpmix2 4.2.2 ignores it too): an invitee that never answers and never
//! terminates leaves the invite pending until finalize.

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use pmix_core::Status;
use pmix_wire::{DataArray, DataRange, DataType, Info, Proc, Rank, Value};

use crate::client::calls::wait;
use crate::client::events::{EventAction, EventHandler, EventInfo};
use crate::client::instance::progress::Job;
use crate::client::instance::{Mode, Pmix, lock_events};
use crate::client::membership::{check_grp, lock_groups};
use crate::client::{Client, Done};
use crate::error::Error;
use pmix_wire::keys;

/// The codes the inviter listens to.
const ANSWERS: [i32; 3] = [
    Status::GROUP_INVITE_ACCEPTED.0,
    Status::GROUP_INVITE_DECLINED.0,
    Status::EVENT_PROC_TERMINATED.0,
];

/// An invite in flight, shared by its handler and the steps that send it.
struct Invite {
    /// The invitees that have not answered yet.
    pending: BTreeSet<Proc>,
    /// The invitees that accepted, in the order they did.
    accepted: Vec<Proc>,
    /// The handler's registration (0 until registered).
    handler: usize,
    /// Where the outcome goes; taken once.
    finish: Option<Done<Vec<Proc>>>,
}

fn lock(m: &Mutex<Invite>) -> MutexGuard<'_, Invite> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What an invite needs to end itself: the connection, the instance's handlers and
/// groups, and the invite.
#[derive(Clone)]
struct Ctx {
    client: Arc<Client>,
    events: Arc<Mutex<crate::client::events::Registry>>,
    groups: Arc<Mutex<crate::client::membership::Membership>>,
    invite: Arc<Mutex<Invite>>,
    grp: String,
    me: Proc,
    /// The invitation's infos (`pmix.evrange`, `pmix.evnondef`, `pmix.grp.id`).
    info: Vec<Info>,
}

impl Ctx {
    /// Ends the invite with `r`: the handler goes (and the server hears that nobody
    /// here listens to its codes any more, if so), then the outcome is delivered.
    fn end(&self, r: Result<Vec<Proc>, Error>) {
        let (finish, id) = {
            let mut st = lock(&self.invite);
            (st.finish.take(), st.handler)
        };
        let gone = lock_events(&self.events).remove(id);
        if let Some(codes) = gone.filter(|c| !c.is_empty()) {
            // The server being gone changes nothing here.
            let _ = self.client.deregister_events(&codes);
        }
        if let Some(finish) = finish {
            finish(r);
        }
    }

    /// Every invitee answered: record the group and tell the invitees (and the
    /// server) it is made; the invite ends once that is sent.
    fn complete(&self) {
        let members: Vec<Proc> = {
            let st = lock(&self.invite);
            std::iter::once(self.me.clone())
                .chain(st.accepted.iter().cloned())
                .collect()
        };
        lock_groups(&self.groups)
            .groups
            .insert(self.grp.clone(), members.clone());
        let ctx = self.clone();
        let sent = self.client.notify_then(
            Status::GROUP_CONSTRUCT_COMPLETE.0,
            DataRange::CUSTOM,
            &self.info,
            Box::new(move |r| ctx.end(r.map(|()| members))),
        );
        if let Err(e) = sent {
            self.end(Err(e));
        }
    }

    /// The handler: an answer (or the termination) of a pending invitee counts once
    /// and is consumed; anything else passes on.
    fn handler(self) -> EventHandler {
        Arc::new(move |_, ev: &EventInfo| {
            let who = if ev.status == Status::EVENT_PROC_TERMINATED.0 {
                ev.info.iter().find_map(|i| match &i.value {
                    Value::Proc(p) if i.key == keys::EVENT_AFFECTED_PROC => Some(p.clone()),
                    _ => None,
                })
            } else {
                Some(ev.source.clone())
            };
            let Some(who) = who else {
                return EventAction::Continue;
            };
            let done = {
                let mut st = lock(&self.invite);
                if st.finish.is_none() || !st.pending.remove(&who) {
                    return EventAction::Continue;
                }
                if ev.status == Status::GROUP_INVITE_ACCEPTED.0 {
                    st.accepted.push(who);
                }
                st.pending.is_empty()
            };
            if done {
                self.complete();
            }
            if ev.status == Status::EVENT_PROC_TERMINATED.0 {
                // The user's handlers still learn of the termination.
                EventAction::Continue
            } else {
                EventAction::Complete
            }
        })
    }
}

/// `procs` with each WILDCARD rank expanded to its job's ranks (`pmix.job.size`).
fn expand(client: &Client, procs: &[Proc]) -> Result<Vec<Proc>, Error> {
    let mut out = Vec::new();
    for p in procs {
        if p.rank != Rank::WILDCARD {
            out.push(p.clone());
            continue;
        }
        let ns = p
            .nspace
            .as_str()
            .ok_or_else(|| Error::BadParam("a namespace that is not UTF-8".into()))?;
        // Never a server round trip: an invite may be started from a handler.
        let size = client
            .get_local(ns, Rank::WILDCARD.0, keys::JOB_SIZE)
            .ok_or_else(|| Error::Status {
                status: Status::ERR_NOT_FOUND,
                why: format!("the size of job {ns} is not known to this process: list its ranks")
                    .into(),
            })??
            .as_u64()
            .ok_or_else(|| Error::BadParam(format!("no job size for {ns}").into()))?;
        out.extend((0..size).map(|r| Proc::new(ns, r as u32)));
    }
    Ok(out)
}

impl Pmix {
    /// `PMIx_Group_invite_nb`: invites `procs` (WILDCARD ranks: their whole job; this
    /// process is the leader and is left out) to group `grp` (module docs);
    /// `callback` gets the members (this process first, then the acceptors in the
    /// order they accepted) once every invitee has answered, once, on the progress
    /// thread, if and only if this returns `Ok(())`.
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a non-blocking call; `PMIX_ERR_BAD_PARAM` for a bad
    /// group id or no one to invite; [`Error::Unreach`] when not connected. The
    /// server's refusal of the registration or of the invitation goes to `callback`.
    #[doc(alias = "PMIx_Group_invite_nb")]
    pub fn group_invite_nb(
        &self,
        grp: &str,
        procs: &[Proc],
        info: &[Info],
        callback: impl FnOnce(Result<Vec<Proc>, Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Group_invite_nb", Mode::NonBlocking)?;
        check_grp(grp)?;
        let _ = info;
        let client = self
            .inner
            .client
            .clone()
            .ok_or_else(|| Error::Unreach("not connected to a PMIx server".into()))?;
        let me = Proc::from(&self.inner.proc_id);
        let mut invitees = expand(&client, procs)?;
        invitees.retain(|p| *p != me);
        let mut seen = BTreeSet::new();
        invitees.retain(|p| seen.insert(p.clone()));
        if invitees.is_empty() {
            return Err(Error::BadParam("nobody to invite".into()));
        }
        let ticket = self.ticket()?;
        let range = DataArray::new(
            DataType::Proc,
            invitees.iter().cloned().map(Value::Proc).collect(),
        )
        .ok_or_else(|| Error::Internal("an array of processes".into()))?;
        let ctx = Ctx {
            client: Arc::clone(&client),
            events: Arc::clone(&self.inner.events),
            groups: Arc::clone(&self.inner.groups),
            invite: Arc::new(Mutex::new(Invite {
                pending: seen,
                accepted: Vec::new(),
                handler: 0,
                finish: Some(Box::new(move |r| {
                    ticket.post(Job::request(move || r, callback));
                })),
            })),
            grp: grp.to_owned(),
            me,
            info: vec![
                Info::new(keys::EVENT_CUSTOM_RANGE, Value::DataArray(range)),
                Info::new(keys::EVENT_NON_DEFAULT, true),
                Info::new(keys::GROUP_ID, grp),
            ],
        };
        let id = lock_events(&self.inner.events).add_first(&ANSWERS, ctx.clone().handler());
        lock(&ctx.invite).handler = id;
        let step = ctx.clone();
        let sent = client.register_events_then(
            &ANSWERS,
            &[],
            Box::new(move |r| {
                if let Err(e) = r {
                    return step.end(Err(e));
                }
                let on_sent = step.clone();
                let sent = step.client.notify_then(
                    Status::GROUP_INVITED.0,
                    DataRange::CUSTOM,
                    &step.info,
                    Box::new(move |r| {
                        if let Err(e) = r {
                            on_sent.end(Err(e));
                        }
                    }),
                );
                if let Err(e) = sent {
                    step.end(Err(e));
                }
            }),
        );
        if let Err(e) = sent {
            ctx.end(Err(e));
        }
        Ok(())
    }

    /// `PMIx_Group_invite`: [`Pmix::group_invite_nb`], waiting for the members.
    ///
    /// # Errors
    /// As [`Pmix::group_invite_nb`] for a blocking call.
    #[doc(alias = "PMIx_Group_invite")]
    pub fn group_invite(
        &self,
        grp: &str,
        procs: &[Proc],
        info: &[Info],
    ) -> Result<Vec<Proc>, Error> {
        self.admit("PMIx_Group_invite", Mode::Blocking)?;
        wait(|cb| self.group_invite_nb(grp, procs, info, cb))
    }

    /// `PMIx_Group_join_nb`: answers an invitation to `grp` from `leader` (`None`:
    /// to the whole session), accepting or declining (module docs); `callback` gets
    /// the server's answer to the notification, once, on the progress thread, if and
    /// only if this returns `Ok(())`.
    ///
    /// # Errors
    /// As [`Pmix::admit`] for a non-blocking call; `PMIX_ERR_BAD_PARAM` for a bad
    /// group id; [`Error::Unreach`] when not connected.
    #[doc(alias = "PMIx_Group_join_nb")]
    pub fn group_join_nb(
        &self,
        grp: &str,
        leader: Option<&Proc>,
        accept: bool,
        info: &[Info],
        callback: impl FnOnce(Result<(), Error>) + Send + 'static,
    ) -> Result<(), Error> {
        self.admit("PMIx_Group_join_nb", Mode::NonBlocking)?;
        check_grp(grp)?;
        let _ = info;
        let client = self
            .inner
            .client
            .as_deref()
            .ok_or_else(|| Error::Unreach("not connected to a PMIx server".into()))?;
        let ticket = self.ticket()?;
        let code = if accept {
            Status::GROUP_INVITE_ACCEPTED
        } else {
            Status::GROUP_INVITE_DECLINED
        };
        let (range, info) = match leader {
            Some(l) => (
                DataRange::CUSTOM,
                vec![Info::new(keys::EVENT_CUSTOM_RANGE, Value::Proc(l.clone()))],
            ),
            None => (DataRange::SESSION, Vec::new()),
        };
        client.notify_then(
            code.0,
            range,
            &info,
            Box::new(move |r| ticket.post(Job::request(move || r, callback))),
        )
    }

    /// `PMIx_Group_join`: [`Pmix::group_join_nb`], waiting for the answer.
    ///
    /// # Errors
    /// As [`Pmix::group_join_nb`] for a blocking call.
    #[doc(alias = "PMIx_Group_join")]
    pub fn group_join(
        &self,
        grp: &str,
        leader: Option<&Proc>,
        accept: bool,
        info: &[Info],
    ) -> Result<(), Error> {
        self.admit("PMIx_Group_join", Mode::Blocking)?;
        wait(|cb| self.group_join_nb(grp, leader, accept, info, cb))
    }
}
