//! Rank-state tracking between real processes through the Rust API (`pmix::ft`):
//! the same scenarios, steps and output lines as `tests/c/ft_state.c` (which uses
//! `pmix_ft.h`), so `tests/run_ft.rs` holds both to one expectation.
//!
//! `pmix-run -n 8 --keep-going target/debug/examples/ft_state`
//!
//! Every line is `R: TEXT` (R this rank). A failed check prints `FAIL` on stderr
//! and exits 1.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use pmix::ft::ERR_SIZE;
use pmix::{InitOptions, Pmix, PmixError, Role};
use pmix_core::ftstate::{Mask, Modifier, RankInfo, RankState, View};

fn fail(rank: u32, what: impl std::fmt::Display) -> ! {
    eprintln!("ft_state rank {rank}: FAIL: {what}");
    std::process::exit(1);
}

fn die() -> ! {
    let _ = rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::KILL);
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn state_name(i: &RankInfo) -> &'static str {
    match (i.state, i.modifier) {
        (RankState::Failed, Modifier::New) => "FAILED|NEW",
        (RankState::Failed, Modifier::Old) => "FAILED|OLD",
        (RankState::Null, Modifier::New) => "NULL|NEW",
        (RankState::Null, Modifier::Old) => "NULL|OLD",
        _ => "?",
    }
}

struct Run {
    p: Pmix,
    grp: String,
    rank: u32,
}

impl Run {
    fn say(&self, line: impl std::fmt::Display) {
        println!("{}: {line}", self.rank);
    }

    fn ok<T, E: std::fmt::Display>(&self, r: Result<T, E>, what: &str) -> T {
        r.unwrap_or_else(|e| fail(self.rank, format!("{what}: {e}")))
    }

    fn view(&self, what: &str, view: View, mask: Mask) {
        let n = self.ok(self.p.ft_get_state(&self.grp, view, mask, &mut []), "count");
        let mut out = vec![RankInfo::default(); n];
        if n > 0 {
            let got = self.ok(self.p.ft_get_state(&self.grp, view, mask, &mut out), "get");
            if got != n {
                fail(self.rank, format!("{what}: {got} of {n}"));
            }
        }
        let mut line = format!("{what}:");
        for i in &out {
            line += &format!(" {}:{}", i.rank, state_name(i));
        }
        self.say(line);
    }

    /// Waits until `want` failures are detected (the log, read without validating),
    /// then validates the local view once.
    fn await_detection(&self, want: u32) {
        let until = Instant::now() + Duration::from_secs(20);
        loop {
            let known = self.ok(self.p.ft_get_failed(&self.grp), "get_failed").len();
            if known >= want as usize {
                break;
            }
            if Instant::now() > until {
                fail(self.rank, format!("only {known} of {want} detected"));
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let v = self.ok(self.p.ft_validate_local(&self.grp), "validate_local");
        if (v.num_failed, v.new_failures) != (want, want) {
            fail(self.rank, format!("validate_local: {v:?}"));
        }
    }
}

fn main() {
    let p = Pmix::init(Role::Client, InitOptions::default())
        .unwrap_or_else(|e| fail(u32::MAX, format!("init: {e}")));
    let id = *p.proc_id();
    let r = Run {
        grp: id.nspace.to_string(),
        rank: id.rank,
        p,
    };
    let (g, me) = (r.grp.clone(), r.rank);
    // PMIX_GROUP_LEFT events, counted (the tracker sees a leave before any handler).
    // On the progress thread, local calls answer and a collective would block.
    let lefts = Arc::new(AtomicUsize::new(0));
    let in_handler = Arc::new(Mutex::new(String::new()));
    let (seen, said, q) = (Arc::clone(&lefts), Arc::clone(&in_handler), r.p.clone());
    let name = |r: Result<(), pmix::Error>| match r {
        Ok(()) => "SUCCESS".to_owned(),
        Err(e) => e.status().text().to_owned(),
    };
    r.ok(
        r.p.register_event_handler(
            &[pmix_core::Status::GROUP_LEFT.0],
            &[],
            Arc::new(move |_, _| {
                let g = "ft-shrunk";
                *said.lock().unwrap() = format!(
                    "in a handler: validate_local {}, get_num_state {}, validate_global {}",
                    name(q.ft_validate_local(g).map(|_| ())),
                    name(
                        q.ft_get_num_state(g, View::Global, Mask::ANY_FAILED)
                            .map(|_| ())
                    ),
                    name(q.ft_validate_global(g).map(|_| ())),
                );
                seen.fetch_add(1, Ordering::SeqCst);
                pmix::EventAction::Continue
            }),
        ),
        "register_event_handler",
    );
    let (size, my) = r.ok(r.p.ft_size(&g), "size");
    if size != 8 || my != me {
        fail(me, format!("run me with -n 8 (size {size}, rank {my})"));
    }

    // 1.
    let v = r.ok(r.p.ft_validate_global(&g), "validate_global 1");
    r.say(format!(
        "round 1: {} failed, {} new",
        v.num_failed, v.new_failures
    ));

    // 2.
    if me == 3 || me == 5 {
        die();
    }
    r.await_detection(2);
    r.view("detected local", View::Local, Mask::FAILED | Mask::NEW);
    let n = r.ok(
        r.p.ft_get_num_state(&g, View::Global, Mask::ANY_FAILED),
        "num",
    );
    r.say(format!("global before validate: {n}"));
    let mut one = [RankInfo::default(); 1];
    match r.p.ft_get_state(&g, View::Local, Mask::FAILED, &mut one) {
        Err(e) if e.status() == ERR_SIZE => {
            let need = r.ok(r.p.ft_get_num_state(&g, View::Local, Mask::FAILED), "num");
            r.say(format!("incount 1: size error, outcount {need}"));
        }
        other => fail(me, format!("incount 1: {other:?}")),
    }
    let n = r.ok(
        r.p.ft_get_state(&g, View::Local, Mask::FAILED, &mut []),
        "count",
    );
    r.say(format!("incount 0: outcount {n}"));

    // 3.
    let v = r.ok(r.p.ft_validate_global(&g), "validate_global 2");
    r.say(format!(
        "round 2: {} failed, {} new",
        v.num_failed, v.new_failures
    ));
    r.view("global", View::Global, Mask::ANY_FAILED);
    r.view("local", View::Local, Mask::ANY_FAILED);
    let n = r.ok(r.p.ft_get_num_state(&g, View::Local, Mask::FAILED), "num");
    r.say(format!("local FAILED after validate_global: {n}"));
    let v = r.ok(r.p.ft_validate_global(&g), "validate_global 3");
    r.say(format!(
        "round 3: {} failed, {} new",
        v.num_failed, v.new_failures
    ));
    r.view("global", View::Global, Mask::NULL | Mask::NEW);
    r.view("global", View::Global, Mask::NULL | Mask::OLD);

    // 4.
    let flag = if me == 1 { 0x6 } else { 0x7 };
    match r.ok(r.p.ft_agree(&g, flag), "agree") {
        Err(pmix_core::ftstate::AgreeError::ProcFailed { flag, .. }) => {
            r.say(format!("agree unacked: proc failed, flag {flag:#x}"))
        }
        other => fail(me, format!("agree unacked: {other:?}")),
    }
    let failed = r.ok(r.p.ft_get_failed(&g), "get_failed");
    let acked = r.ok(r.p.ft_ack_failed(&g, failed.len() as u32), "ack");
    r.say(format!("acked {acked} of {}", failed.len()));
    match r.ok(r.p.ft_agree(&g, flag), "agree") {
        Ok(f) => r.say(format!("agree acked: SUCCESS, flag {f:#x}")),
        Err(e) => fail(me, format!("agree acked: {e}")),
    }

    // 5.
    let s = r.ok(r.p.ft_shrink(&g, "ft-shrunk"), "shrink");
    r.say(format!("shrink: size {}", s.size));
    r.say(format!("shrink: new rank {}", s.rank));

    // 6.
    if me == 0 {
        r.ok(r.p.ft_revoke(&g), "revoke");
    }
    let until = Instant::now() + Duration::from_secs(20);
    while !r.ok(r.p.ft_is_revoked(&g), "is_revoked") {
        if Instant::now() > until {
            fail(me, "the revoke never came");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    r.say("revoked");

    // 7.
    if me == 6 {
        let pid = std::process::id();
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(1 + u64::from(pid % 3)));
            die();
        });
        let _ = r.p.ft_validate_global(&g);
        die();
    }
    let n4 = r
        .ok(r.p.ft_validate_global(&g), "validate_global 4")
        .num_failed;
    let v = r.ok(r.p.ft_validate_global(&g), "validate_global 5");
    r.say(format!("round 4: {n4} failed"));
    r.say(format!("round 5: {} failed", v.num_failed));
    r.view("final global", View::Global, Mask::ANY_FAILED);

    // 8.
    let r = Run {
        grp: "ft-shrunk".into(),
        ..r
    };
    let (size, _) = r.ok(r.p.ft_size(&r.grp), "size ft-shrunk");
    r.say(format!("shrunk group: size {size}"));
    let v = r.ok(r.p.ft_validate_global(&r.grp), "validate_global ft-shrunk");
    r.say(format!(
        "shrunk round: {} failed, {} new",
        v.num_failed, v.new_failures
    ));
    r.view("shrunk global", View::Global, Mask::ANY_FAILED);

    // 9.
    if me == 7 {
        r.ok(r.p.group_leave(&r.grp, &[]), "group_leave");
        r.ok(r.p.finalize(), "finalize");
        return;
    }
    let until = Instant::now() + Duration::from_secs(20);
    while lefts.load(Ordering::SeqCst) < 1 {
        if Instant::now() > until {
            fail(me, "rank 7's leave never came");
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    r.say(in_handler.lock().unwrap().clone());
    let v = r.ok(
        r.p.ft_validate_global(&r.grp),
        "validate_global after the leave",
    );
    r.say(format!(
        "after the leave: {} failed, {} new",
        v.num_failed, v.new_failures
    ));
    r.view("shrunk global", View::Global, Mask::ANY_FAILED);
    r.ok(r.p.finalize(), "finalize");
}
