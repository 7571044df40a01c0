//! The job loop against a fake server, with real children (`sh -c`).

use super::*;
use signal_hook::consts::signal::{SIGKILL, SIGTERM};
use std::sync::{Arc, Mutex};

/// A server that records what it was told; its scripted events are on the loop's
/// channel before the loop starts ([`scripted`]).
#[derive(Default)]
struct Fake {
    exited: Mutex<Vec<(u32, i32)>>,
}

/// A fake that spawns: each spawn's processes run `program` with `args`; its
/// scripted events come with their job's index.
#[derive(Default)]
struct Spawner {
    events: Vec<(usize, Event)>,
    program: String,
    args: Vec<String>,
    jobs: Mutex<usize>,
    exited: Mutex<Vec<(usize, u32, i32)>>,
    answers: Mutex<Vec<(u64, Result<String, i32>)>>,
    ended: Mutex<Vec<(usize, i32)>>,
    failed: Mutex<Vec<usize>>,
}

/// The loop's channel with `events` queued on it, as a server whose host sent them.
fn scripted(events: impl IntoIterator<Item = (usize, Event)>) -> (Sender<Wake>, Receiver<Wake>) {
    let (tx, rx) = mpsc::channel();
    for ev in events {
        tx.send(Wake::Event(ev)).unwrap();
    }
    (tx, rx)
}

fn fake_env(rank: u32) -> Vec<(String, String)> {
    vec![("FAKE_RANK".into(), rank.to_string())]
}

impl JobServer for Spawner {
    fn client_env(&self, rank: u32) -> Vec<(String, String)> {
        fake_env(rank)
    }
    fn proc_exited(&self, job: usize, rank: u32, status: i32) {
        self.exited.lock().unwrap().push((job, rank, status));
    }
    fn start_job(&self, req: &SpawnRequest) -> Result<NewJob, i32> {
        let mut jobs = self.jobs.lock().unwrap();
        *jobs += 1;
        let n: i32 = req.apps.iter().map(|a| a.maxprocs).sum();
        Ok(NewJob {
            job: *jobs,
            nspace: format!("fake.{}", *jobs),
            procs: (0..n)
                .map(|r| Launch {
                    program: self.program.clone().into(),
                    args: self.args.iter().map(OsString::from).collect(),
                    env: vec![("FAKE_RANK".into(), r.to_string().into())],
                    ..Launch::default()
                })
                .collect(),
        })
    }
    fn spawn_done(&self, id: u64, result: Result<String, i32>) {
        self.answers.lock().unwrap().push((id, result));
    }
    fn job_ended(&self, job: usize, status: i32) {
        self.ended.lock().unwrap().push((job, status));
    }
    fn job_failed(&self, job: usize) {
        self.failed.lock().unwrap().push(job);
    }
}

fn spawn_request(id: u64, n: i32) -> Event {
    Event::Spawn(SpawnRequest {
        id,
        parent: ("fake.0".into(), 0),
        info: vec![],
        apps: vec![pmix::wire::App {
            cmd: Some("child".into()),
            maxprocs: n,
            ..Default::default()
        }],
    })
}

fn run_spawner(parent: &str, mut fake: Spawner) -> (i32, Spawner, String) {
    let err: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
    let sinks = Sinks {
        stdout: Arc::new(Mutex::new(Vec::<u8>::new())),
        stderr: err.clone(),
    };
    let wakes = scripted(std::mem::take(&mut fake.events));
    let code = run(&spec(1, parent), &fake, wakes, &sinks, &mut Vec::new);
    let text = String::from_utf8_lossy(&err.lock().unwrap()).into_owned();
    (code, fake, text)
}

impl JobServer for Fake {
    fn client_env(&self, rank: u32) -> Vec<(String, String)> {
        fake_env(rank)
    }
    fn proc_exited(&self, job: usize, rank: u32, status: i32) {
        assert_eq!(job, 0, "the fake has one job");
        self.exited.lock().unwrap().push((rank, status));
    }
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    exited: Vec<(u32, i32)>,
}

fn spec(n: usize, script: &str) -> JobSpec {
    JobSpec {
        command: ["sh", "-c", script].iter().map(OsString::from).collect(),
        cpusets: vec![None; n],
        tag_output: false,
        timeout: Some(Duration::from_secs(60)),
        grace: Duration::from_millis(300),
        keep_going: false,
        extra_env: vec![("EXTRA".into(), "x".into())],
    }
}

fn run_with(spec: &JobSpec, events: Vec<Event>, signals: Vec<i32>) -> Run {
    let fake = Fake::default();
    let wakes = scripted(events.into_iter().map(|e| (0, e)));
    let out: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
    let err: Arc<Mutex<Vec<u8>>> = Arc::new(Mutex::new(Vec::new()));
    let sinks = Sinks {
        stdout: out.clone(),
        stderr: err.clone(),
    };
    // The signals come once, after the ranks had time to start.
    let t0 = Instant::now();
    let mut pending = Some(signals);
    let mut sig = move || {
        if t0.elapsed() > Duration::from_millis(500) {
            pending.take().unwrap_or_default()
        } else {
            Vec::new()
        }
    };
    let code = run(spec, &fake, wakes, &sinks, &mut sig);
    let mut exited = fake.exited.lock().unwrap().clone();
    exited.sort();
    let text = |m: &Arc<Mutex<Vec<u8>>>| String::from_utf8_lossy(&m.lock().unwrap()).into_owned();
    Run {
        code,
        stdout: text(&out),
        stderr: text(&err),
        exited,
    }
}

#[test]
fn a_job_whose_ranks_all_exit_0_exits_0_with_their_output_tagged() {
    let mut s = spec(3, "echo out $FAKE_RANK $EXTRA; echo err >&2");
    s.tag_output = true;
    let r = run_with(&s, vec![], vec![]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let mut lines: Vec<&str> = r.stdout.lines().collect();
    lines.sort();
    assert_eq!(lines, ["[0] out 0 x", "[1] out 1 x", "[2] out 2 x"]);
    assert_eq!(r.stderr.lines().filter(|l| l.ends_with("] err")).count(), 3);
    assert_eq!(r.exited, vec![(0, 0), (1, 0), (2, 0)]);
}

#[test]
fn a_failed_rank_ends_the_job_after_the_grace_and_its_status_is_the_jobs() {
    let r = run_with(
        &spec(
            2,
            r#"if [ "$FAKE_RANK" = 1 ]; then exit 3; fi; exec sleep 60"#,
        ),
        vec![],
        vec![],
    );
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert!(
        r.stderr.contains("pmix-run: rank 1 exited with status 3\n"),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr.contains("pmix-run: killing rank(s) 0:"),
        "{}",
        r.stderr
    );
    assert_eq!(r.exited, vec![(0, -SIGKILL), (1, 3)]);
}

#[test]
fn keep_going_lets_the_others_finish() {
    let mut s = spec(
        2,
        r#"if [ "$FAKE_RANK" = 1 ]; then exit 3; fi; sleep 1; echo finished"#,
    );
    s.keep_going = true;
    let r = run_with(&s, vec![], vec![]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    assert_eq!(r.stdout, "finished\n");
    assert_eq!(r.exited, vec![(0, 0), (1, 3)]);
    assert!(!r.stderr.contains("killing"), "{}", r.stderr);
}

#[test]
fn an_abort_decides_the_status_and_ends_the_job() {
    let r = run_with(
        &spec(2, "exec sleep 60"),
        vec![Event::Aborted {
            rank: 1,
            status: 42,
            message: Some("bad input".into()),
        }],
        vec![],
    );
    assert_eq!(r.code, 42, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("pmix-run: rank 1 called PMIx_Abort with status 42: bad input\n"),
        "{}",
        r.stderr
    );
    assert_eq!(r.exited, vec![(0, -SIGKILL), (1, -SIGKILL)]);
}

#[test]
fn a_connected_rank_that_is_lost_ends_the_job_but_one_that_never_connected_does_not() {
    let r = run_with(
        &spec(2, "exec sleep 60"),
        vec![Event::Lost(0), Event::Connected(1), Event::Lost(1)],
        vec![],
    );
    assert_eq!(r.code, 0, "ranks we killed do not decide: {}", r.stderr);
    assert!(!r.stderr.contains("rank 0 closed"), "{}", r.stderr);
    assert!(
        r.stderr
            .contains("pmix-run: rank 1 closed its PMIx connection without finalizing\n"),
        "{}",
        r.stderr
    );
    assert!(r.stderr.contains("killing rank(s) 0,1"), "{}", r.stderr);
}

#[test]
fn the_timeout_kills_the_job_with_124() {
    let mut s = spec(2, "exec sleep 60");
    s.timeout = Some(Duration::from_millis(300));
    let r = run_with(&s, vec![], vec![]);
    assert_eq!(r.code, 124);
    assert!(
        r.stderr
            .contains("ran past --timeout 0.3 s: killing rank(s) 0,1"),
        "{}",
        r.stderr
    );
}

#[test]
fn a_received_sigterm_is_forwarded_to_every_rank() {
    let mut s = spec(2, "exec sleep 60");
    s.grace = Duration::from_secs(30);
    let r = run_with(&s, vec![], vec![SIGTERM]);
    assert_eq!(r.code, 128 + SIGTERM, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("received SIGTERM: forwarding it to 2 rank(s)"),
        "{}",
        r.stderr
    );
    assert_eq!(r.exited, vec![(0, -SIGTERM), (1, -SIGTERM)]);
}

#[test]
fn a_program_that_does_not_exist_is_127() {
    let mut s = spec(2, "");
    s.command = vec!["/nonexistent/pmix-run-test".into()];
    let r = run_with(&s, vec![], vec![]);
    assert_eq!(r.code, spawn::EXIT_NOT_FOUND);
    assert!(
        r.stderr
            .starts_with("pmix-run: cannot start rank 0 (/nonexistent/pmix-run-test): "),
        "{}",
        r.stderr
    );
}

#[test]
fn an_outer_launchers_variables_are_scrubbed() {
    assert!(spawn::is_scrubbed("PMIX_SERVER_URI41"));
    assert!(spawn::is_scrubbed("PMIX_DSTORE_21_BASE_PATH"));
    assert!(spawn::is_scrubbed("OMPI_MCA_orte_hnp_uri"));
    assert!(!spawn::is_scrubbed("OMPI_MCA_btl"));
    assert!(!spawn::is_scrubbed("PATH"));
}

#[test]
fn a_users_libpmix2_parameters_reach_the_ranks() {
    assert!(!spawn::is_scrubbed("PMIX_MCA_pmix_client_get_verbose"));
    assert!(!spawn::is_scrubbed("PMIX_MCA_gds"));
}

#[test]
fn an_ended_rank_wakes_the_loop_without_waiting_for_a_tick() {
    // With a one-hour tick, no deadline and a server that never has an event, only
    // the SIGCHLD of the ranks' exits can wake the loop: a job that ends well within
    // the bound below was woken by them.
    let mut s = spec(2, "exit 0");
    s.timeout = None;
    let sinks = Sinks {
        stdout: Arc::new(Mutex::new(Vec::<u8>::new())),
        stderr: Arc::new(Mutex::new(Vec::<u8>::new())),
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let wakes = scripted([]);
        let hour = Duration::from_secs(3600);
        let code = run_paced(&s, &Fake::default(), wakes, &sinks, &mut Vec::new, hour);
        let _ = tx.send(code);
    });
    let code = rx
        .recv_timeout(Duration::from_secs(60))
        .expect("the job loop noticed its ranks' exits (SIGCHLD) within 60 s");
    assert_eq!(code, 0);
}

#[test]
fn a_spawn_is_answered_once_every_child_connected_and_its_end_is_reported() {
    let fake = Spawner {
        events: vec![
            (0, Event::Connected(0)),
            (0, spawn_request(7, 2)),
            (1, Event::Connected(0)),
            (1, Event::Connected(1)),
        ],
        program: "sh".into(),
        args: vec!["-c".into(), "sleep 0.3".into()],
        ..Spawner::default()
    };
    let (code, fake, err) = run_spawner("sleep 1", fake);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        *fake.answers.lock().unwrap(),
        [(7, Ok("fake.1".to_string()))]
    );
    assert_eq!(*fake.ended.lock().unwrap(), [(1, 0)]);
    let mut exited = fake.exited.lock().unwrap().clone();
    exited.sort();
    assert_eq!(exited, [(0, 0, 0), (1, 0, 0), (1, 1, 0)]);
}

#[test]
fn a_spawned_child_that_dies_before_connecting_fails_the_spawn_not_the_job() {
    let fake = Spawner {
        events: vec![(0, spawn_request(3, 2))],
        program: "sh".into(),
        args: vec!["-c".into(), "exit 5".into()],
        ..Spawner::default()
    };
    let (code, fake, err) = run_spawner("sleep 1", fake);
    assert_eq!(code, 0, "the parent job decides: {err}");
    assert_eq!(
        *fake.answers.lock().unwrap(),
        [(3, Err(ERR_JOB_FAILED_TO_LAUNCH))]
    );
    assert!(fake.ended.lock().unwrap().is_empty());
    // The server forgets the job instead of hearing of its processes.
    assert_eq!(*fake.failed.lock().unwrap(), [1]);
    let exited = fake.exited.lock().unwrap().clone();
    assert!(exited.iter().all(|e| e.0 == 0), "{exited:?}");
    assert!(err.contains("spawned rank fake.1:"), "{err}");
}

#[test]
fn a_spawned_program_that_does_not_exist_is_exe_not_found() {
    let fake = Spawner {
        events: vec![(0, spawn_request(4, 1))],
        program: "/nonexistent/pmix-run-child".into(),
        ..Spawner::default()
    };
    let (code, fake, err) = run_spawner("sleep 0.5", fake);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        *fake.answers.lock().unwrap(),
        [(4, Err(ERR_JOB_EXE_NOT_FOUND))]
    );
    assert_eq!(*fake.failed.lock().unwrap(), [1]);
    assert!(
        err.contains("cannot start spawned rank fake.1:0 (/nonexistent/pmix-run-child)"),
        "{err}"
    );
}

#[test]
fn a_spawned_rank_that_fails_after_connecting_ends_the_whole_job() {
    let fake = Spawner {
        events: vec![(0, spawn_request(9, 1)), (1, Event::Connected(0))],
        program: "sh".into(),
        args: vec!["-c".into(), "sleep 0.3; exit 4".into()],
        ..Spawner::default()
    };
    let (code, fake, err) = run_spawner("exec sleep 60", fake);
    assert_eq!(code, 4, "{err}");
    assert!(err.contains("rank fake.1:0 exited with status 4"), "{err}");
    assert!(err.contains("killing rank(s) 0:"), "{err}");
    assert_eq!(*fake.ended.lock().unwrap(), [(1, 4)]);
}
