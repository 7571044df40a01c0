//! Event handlers of an instance (PMIx_Register_event_handler and friends): who is
//! registered for which codes, and the chain an event runs through.
//!
//! **The chain.** An event runs, on the progress thread, through the handlers
//! registered for its code, in registration order, then through the default
//! handlers (registered with no code), unless it carries `pmix.evnondef` = true
//! (`PMIX_EVENT_NON_DEFAULT`). A handler that answers [`EventAction::Complete`] ends
//! the chain. (OpenPMIx also lets a handler finish later, asynchronously; here a
//! handler's answer is what it returns, and the C layer maps its `cbfunc` call made
//! before returning to it.)
//!
//! **The server.** A connected client tells its server about the codes it listens to
//! (REGEVENTS, with every code of a registration, or none for a default handler) and
//! when the last registration of a code goes away (DEREGEVENTS, docs/wire.md §6.7).

use std::sync::Arc;

use pmix_wire::keys;
use pmix_wire::{Info, Proc, Value};

/// What an event handler sees.
#[derive(Clone, Debug, PartialEq)]
pub struct EventInfo {
    /// The event's code.
    pub status: i32,
    /// Who raised it.
    pub source: Proc,
    /// Its information (`pmix.evproc`, …).
    pub info: Vec<Info>,
}

impl EventInfo {
    /// The group the event names (`pmix.grp.id`), if any.
    pub fn group_id(&self) -> Option<&str> {
        self.info
            .iter()
            .find(|i| i.key == keys::GROUP_ID)
            .and_then(|i| i.value.as_str())
    }

    /// The process the event is about (`pmix.evproc`), if any.
    pub fn affected_proc(&self) -> Option<&Proc> {
        self.info.iter().find_map(|i| match (&i.key, &i.value) {
            (k, Value::Proc(p)) if *k == keys::EVENT_AFFECTED_PROC => Some(p),
            _ => None,
        })
    }
}

/// How a handler ends its part of the chain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventAction {
    /// Pass the event to the next handler.
    Continue,
    /// The event is handled: no later handler sees it
    /// (`PMIX_EVENT_ACTION_COMPLETE`).
    Complete,
}

/// An event handler: called on the progress thread with its registration id and the
/// event.
pub type EventHandler = Arc<dyn Fn(usize, &EventInfo) -> EventAction + Send + Sync>;

struct Registration {
    id: usize,
    /// Empty: a default handler.
    codes: Vec<i32>,
    handler: EventHandler,
}

/// The registrations of one instance.
#[derive(Default)]
pub(crate) struct Registry {
    last_id: usize,
    regs: Vec<Registration>,
    /// The events this process raised itself, newest last, for handlers registered
    /// later ([`Registry::take_cached`]); at most [`MAX_CACHED`].
    cached: std::collections::VecDeque<EventInfo>,
}

/// How many events a process keeps for handlers registered after them.
pub(crate) const MAX_CACHED: usize = 64;

impl Registry {
    /// Registers `handler` for `codes` (none: a default handler); its id (from 1).
    pub(crate) fn add(&mut self, codes: &[i32], handler: EventHandler) -> usize {
        self.last_id += 1;
        self.regs.push(Registration {
            id: self.last_id,
            codes: codes.to_vec(),
            handler,
        });
        self.last_id
    }

    /// As [`Registry::add`], ahead of every handler registered so far (the library's
    /// own handlers that consume events before the user's, as OpenPMIx prepends).
    pub(crate) fn add_first(&mut self, codes: &[i32], handler: EventHandler) -> usize {
        let id = self.add(codes, handler);
        if let Some(r) = self.regs.pop() {
            self.regs.insert(0, r);
        }
        id
    }

    /// Keeps `ev`, an event this process raised, for handlers registered later (the
    /// oldest kept one goes when [`MAX_CACHED`] are kept).
    pub(crate) fn cache(&mut self, ev: EventInfo) {
        if self.cached.len() == MAX_CACHED {
            self.cached.pop_front();
        }
        self.cached.push_back(ev);
    }

    /// The kept events a handler registered now for `codes` gets (none: a default
    /// handler, which gets those not marked `PMIX_EVENT_NON_DEFAULT`), oldest first,
    /// each taken out of the cache: a late registrant gets a kept event once, as
    /// OpenPMIx's client checks a cached event out when it delivers it.
    pub(crate) fn take_cached(&mut self, codes: &[i32]) -> Vec<EventInfo> {
        let (take, keep): (Vec<EventInfo>, Vec<EventInfo>) =
            self.cached.drain(..).partition(|ev| {
                if codes.is_empty() {
                    !non_default(ev)
                } else {
                    codes.contains(&ev.status)
                }
            });
        self.cached = keep.into();
        take
    }

    /// Removes registration `id`: `None` if there is none, else the codes no other
    /// registration listens to any more (`i32::MIN` for the last default handler).
    pub(crate) fn remove(&mut self, id: usize) -> Option<Vec<i32>> {
        let at = self.regs.iter().position(|r| r.id == id)?;
        let gone = self.regs.remove(at);
        let mut codes = Vec::new();
        if gone.codes.is_empty() {
            if !self.regs.iter().any(|r| r.codes.is_empty()) {
                codes.push(i32::MIN);
            }
        } else {
            for c in gone.codes {
                if !self.regs.iter().any(|r| r.codes.contains(&c)) && !codes.contains(&c) {
                    codes.push(c);
                }
            }
        }
        Some(codes)
    }

    /// The handlers `ev` runs through, in order.
    pub(crate) fn chain(&self, ev: &EventInfo) -> Vec<(usize, EventHandler)> {
        let nondefault = non_default(ev);
        let specific = self.regs.iter().filter(|r| r.codes.contains(&ev.status));
        let default = self
            .regs
            .iter()
            .filter(|r| r.codes.is_empty() && !nondefault);
        specific
            .chain(default)
            .map(|r| (r.id, Arc::clone(&r.handler)))
            .collect()
    }
}

/// Whether `ev` is marked not to go to default handlers (`PMIX_EVENT_NON_DEFAULT`).
fn non_default(ev: &EventInfo) -> bool {
    ev.info
        .iter()
        .any(|i| i.key == keys::EVENT_NON_DEFAULT && i.value == Value::Bool(true))
}

/// Runs `ev` through `chain` until a handler completes it.
pub(crate) fn run_chain(chain: &[(usize, EventHandler)], ev: &EventInfo) {
    for (id, h) in chain {
        if h(*id, ev) == EventAction::Complete {
            break;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    fn ev(status: i32, nondefault: bool) -> EventInfo {
        EventInfo {
            status,
            source: Proc::new("ns", 0),
            info: if nondefault {
                vec![Info::new("pmix.evnondef", true)]
            } else {
                Vec::new()
            },
        }
    }

    #[test]
    fn code_handlers_run_before_defaults_and_complete_ends_the_chain() {
        let log = Arc::new(Mutex::new(Vec::new()));
        let h = |name: &'static str, action| -> EventHandler {
            let log = Arc::clone(&log);
            Arc::new(move |_, _| {
                log.lock().unwrap().push(name);
                action
            })
        };
        let mut r = Registry::default();
        r.add(&[], h("default", EventAction::Continue));
        r.add(&[-3001], h("a", EventAction::Continue));
        r.add(&[-3001, -3002], h("ab", EventAction::Complete));
        run_chain(&r.chain(&ev(-3001, false)), &ev(-3001, false));
        assert_eq!(*log.lock().unwrap(), ["a", "ab"]);
        log.lock().unwrap().clear();
        run_chain(&r.chain(&ev(-3003, false)), &ev(-3003, false));
        assert_eq!(*log.lock().unwrap(), ["default"]);
        log.lock().unwrap().clear();
        run_chain(&r.chain(&ev(-3003, true)), &ev(-3003, true));
        assert!(
            log.lock().unwrap().is_empty(),
            "non-default: no default handler"
        );
    }

    #[test]
    fn a_kept_event_goes_to_the_first_late_registrant_that_matches_it_once() {
        let mut r = Registry::default();
        r.cache(ev(-147, true));
        r.cache(ev(-3001, false));
        // A default handler: only what is not marked non-default.
        let got: Vec<i32> = r.take_cached(&[]).iter().map(|e| e.status).collect();
        assert_eq!(got, [-3001]);
        assert!(r.take_cached(&[-3001]).is_empty(), "taken already");
        assert_eq!(r.take_cached(&[-147, -5]).len(), 1);
        assert!(r.take_cached(&[-147]).is_empty(), "once");
        // At most MAX_CACHED are kept, the oldest going first.
        for k in 0..MAX_CACHED + 3 {
            r.cache(ev(-(k as i32) - 1000, false));
        }
        let kept = r.take_cached(&[]);
        assert_eq!(kept.len(), MAX_CACHED);
        assert_eq!(kept[0].status, -1003);
    }

    #[test]
    fn removing_the_last_registration_of_a_code_reports_it() {
        let h: EventHandler = Arc::new(|_, _| EventAction::Continue);
        let mut r = Registry::default();
        let a = r.add(&[1, 2], Arc::clone(&h));
        let b = r.add(&[2], Arc::clone(&h));
        let d = r.add(&[], Arc::clone(&h));
        assert_eq!(r.remove(a), Some(vec![1]));
        assert_eq!(r.remove(b), Some(vec![2]));
        assert_eq!(r.remove(d), Some(vec![i32::MIN]));
        assert_eq!(r.remove(d), None);
    }
}
