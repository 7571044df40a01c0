//! The server core's LOG and MONITOR (heartbeats), driven by fake clients.

mod server_core_common;

use std::time::{Duration, Instant};

use pmix::server::core::{LogStream, Output, Upcall};
use pmix_wire::frame::TAG_HEARTBEAT;
use pmix_wire::msg::{Log, Monitor, RegEvents};
use pmix_wire::{Command, Frame, Info, Request, Status, Value};
use server_core_common::*;

const ALERT: Status = Status(-100);

fn log(data: Vec<Info>) -> Request {
    Request::Log(Log {
        timestamp: pmix_wire::value::Time(0),
        data,
        directives: Vec::new(),
    })
}

fn beat_monitor(period: u32, drops: u32) -> Request {
    Request::Monitor(Monitor {
        monitor: Info::new("pmix.monitor.mbeat", Value::Pointer),
        error: ALERT,
        directives: vec![
            Info::new("pmix.monitor.id", "m1"),
            Info::new("pmix.monitor.btime", period),
            Info::new("pmix.monitor.bdrop", drops),
        ],
    })
}

#[test]
fn a_log_to_stderr_goes_to_the_launcher_and_one_to_syslog_alone_is_not_supported() {
    let now = Instant::now();
    let mut core = core_with("job", 2);
    let mut f = connect(&mut core, 1, "job", 0, now);
    drain(&mut core);
    let t = f.send(
        &mut core,
        &log(vec![Info::new("pmix.log.stderr", "hello\n")]),
        now,
    );
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f, t, Command::Log), 0);
    let logged: Vec<_> = outs
        .iter()
        .filter_map(|o| match o {
            Output::Host(Upcall::Log {
                rank, stream, text, ..
            }) => Some((*rank, *stream, text.clone())),
            _ => None,
        })
        .collect();
    assert_eq!(logged, [(0, LogStream::Stderr, "hello\n".to_string())]);
    let t = f.send(
        &mut core,
        &log(vec![Info::new("pmix.log.syslog", "x")]),
        now,
    );
    let outs = drain(&mut core);
    assert_eq!(
        status(&outs, &f, t, Command::Log),
        Status::ERR_NOT_SUPPORTED.0
    );
    assert!(
        !outs
            .iter()
            .any(|o| matches!(o, Output::Host(Upcall::Log { .. })))
    );
}

#[test]
fn a_missed_heartbeat_raises_the_monitors_event_and_a_beat_rearms_it() {
    let now = Instant::now();
    let mut core = core_with("job", 2);
    let mut f = connect(&mut core, 1, "job", 0, now);
    let mut watcher = connect(&mut core, 2, "job", 1, now);
    let reg = Request::RegEvents(RegEvents {
        codes: vec![ALERT],
        info: Vec::new(),
    });
    watcher.send(&mut core, &reg, now);
    drain(&mut core);
    let t = f.send(&mut core, &beat_monitor(1, 1), now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f, t, Command::Monitor), 0);
    // A beat at 1.5 s re-arms the 2 s window: nothing at 3 s.
    let beat = Frame::new(f.index as i32, TAG_HEARTBEAT, Vec::new()).unwrap();
    core.frame(f.conn, &beat, now + Duration::from_millis(1500));
    core.tick(now + Duration::from_secs(3));
    assert!(events(&drain(&mut core), &watcher).is_empty());
    // No beat until 3.5 s: the alert, from rank 0, with the monitor's id.
    assert!(core.next_deadline().is_some());
    core.tick(now + Duration::from_millis(3600));
    let evs = events(&drain(&mut core), &watcher);
    assert_eq!(evs.len(), 1, "{evs:?}");
    assert_eq!(evs[0].status, ALERT);
    assert_eq!(evs[0].source.rank.0, 0);
    assert!(evs[0].info.iter().any(|i| i.key == "pmix.monitor.id"));
}

#[test]
fn a_cancelled_or_closed_monitor_raises_nothing_and_file_monitors_are_not_supported() {
    let now = Instant::now();
    let mut core = core_with("job", 2);
    let mut f = connect(&mut core, 1, "job", 0, now);
    drain(&mut core);
    f.send(&mut core, &beat_monitor(1, 0), now);
    let cancel = Request::Monitor(Monitor {
        monitor: Info::new("pmix.monitor.cancel", "m1"),
        error: ALERT,
        directives: Vec::new(),
    });
    let t = f.send(&mut core, &cancel, now);
    let outs = drain(&mut core);
    assert_eq!(status(&outs, &f, t, Command::Monitor), 0);
    assert_eq!(core.next_deadline(), None);
    let file = Request::Monitor(Monitor {
        monitor: Info::new("pmix.monitor.fmon", "/tmp/x"),
        error: ALERT,
        directives: Vec::new(),
    });
    let t = f.send(&mut core, &file, now);
    let outs = drain(&mut core);
    assert_eq!(
        status(&outs, &f, t, Command::Monitor),
        Status::ERR_NOT_SUPPORTED.0
    );
    f.send(&mut core, &beat_monitor(1, 0), now);
    drain(&mut core);
    core.closed(f.conn, now);
    drain(&mut core);
    assert_eq!(core.next_deadline(), None);
}
