//! `cargo bench -p pmix-tools --bench ft`: rank-state tracking's costs (issue 14).
//!
//! - **Combine at 1M members** (1,048,576), in this process, with 10 and 10,000
//!   failures known to every member: the bytes of one contribution (a list or a
//!   bitmap per set, whichever is shorter), decoding and adding one received
//!   contribution, and combining two partial values (a reduction step: 4
//!   members' contributions each). Target: under 10 ms each. Each is O(n / 64)
//!   (plus the listed ranks); a flat exchange, where every member adds every
//!   other's contribution, is n of them, so at this size the exchange would want
//!   a reduction tree (not built: jobs here are small).
//! - **Memory per member**: the tracker's and the exchange value's heap bytes over
//!   the group size. Target: at most 16 bytes.
//! - **validate_global latency** with 8 and 16 ranks under `pmix-run --keep-going`,
//!   0, 1 and 3 of them killed first (`benches/c/ft_latency.c` linked with
//!   libpmix_ffi): the mean of 200 back-to-back rounds, the median over 3 runs,
//!   with the same ranks' FT fence and (nobody killed) plain fence timed the same
//!   way beside it. A round is one FT fence carrying the contributions. Target at 8
//!   ranks: ≤ 300 µs.
//!
//! Medians over runs; a table is printed, and the bench exits 1 when a target is
//! missed. Every job is bounded (pmix-testkit's `output_within`, 60 s).

use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use pmix::ft::received;
use pmix_core::ftstate::{AgreeValue, Tracker};
use pmix_testkit::TempDir;
use pmix_testkit::child::output_within;
use pmix_testkit::cprog;
use pmix_wire::ft::{decode, encode};

const N: u32 = 1 << 20;
const MEMBERS: u32 = 8;

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// The median of `runs` timings of `f`, in milliseconds.
fn time_ms(runs: usize, mut f: impl FnMut()) -> f64 {
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed().as_secs_f64() * 1e3
            })
            .collect(),
    )
}

/// A member `me` of `N` that knows `failures` failures (spread over the ranks, none
/// of them 0..MEMBERS) and acknowledged half of them.
fn member(me: u32, failures: u32) -> Tracker {
    let mut t = Tracker::new(N, me).unwrap();
    let step = (N - MEMBERS) / failures;
    for i in 0..failures {
        t.report_failure(MEMBERS + i * step).unwrap();
    }
    t.ack_failed(failures / 2);
    t
}

fn contribution_bytes(t: &Tracker, round: u64) -> Vec<u8> {
    let k = t.known();
    encode(
        t.size(),
        t.my_rank(),
        round,
        1,
        [k.failed.words(), k.acked.words(), k.left.words()],
    )
    .unwrap()
}

struct Row {
    what: String,
    value: f64,
    unit: &'static str,
    target: Option<f64>,
}

fn combine_rows(failures: u32, rows: &mut Vec<Row>) {
    let members: Vec<Tracker> = (0..MEMBERS).map(|r| member(r, failures)).collect();
    let bytes: Vec<Vec<u8>> = members.iter().map(|t| contribution_bytes(t, 1)).collect();
    rows.push(Row {
        what: format!("{failures} failures: one contribution's bytes"),
        value: bytes[1].len() as f64,
        unit: "B",
        target: None,
    });
    let mut value = AgreeValue::new(N).unwrap();
    let one = time_ms(21, || {
        value.reset();
        let c = decode(&bytes[1]).unwrap();
        value.add(&received(&c)).unwrap();
    });
    rows.push(Row {
        what: format!("{failures} failures: decode + add one contribution"),
        value: one,
        unit: "ms",
        target: Some(10.0),
    });
    // Two partial combinations (a reduction step): members 0-3 and 4-7.
    let partial = |from: u32| {
        let mut v = AgreeValue::new(N).unwrap();
        for t in &members[from as usize..from as usize + 4] {
            t.contribute(1, &mut v).unwrap();
        }
        v
    };
    let (left, right) = (partial(0), partial(4));
    let mut copies: Vec<AgreeValue> = (0..21).map(|_| left.clone()).collect();
    let combine = time_ms(21, || {
        let mut v = copies.pop().unwrap();
        v.combine(&right).unwrap();
        assert_eq!(v.contributors().len(), MEMBERS);
    });
    rows.push(Row {
        what: format!("{failures} failures: combine two partial values"),
        value: combine,
        unit: "ms",
        target: Some(10.0),
    });
    let value = AgreeValue::new(N).unwrap();
    rows.push(Row {
        what: format!("{failures} failures: memory per member (tracker + value)"),
        value: (members[0].heap_bytes() + value.heap_bytes()) as f64 / f64::from(N),
        unit: "B",
        target: Some(16.0),
    });
}

/// validate_global, FT fence and plain fence latency (µs, median of 3 runs of the
/// rank means; the plain fence `None` when ranks were killed) with `k` of `n`
/// ranks killed.
fn latency(exe: &std::path::Path, n: u32, k: u32) -> Result<(f64, f64, Option<f64>), String> {
    let mut vg = Vec::new();
    let mut fence = Vec::new();
    let mut plain = Vec::new();
    for _ in 0..3 {
        let out = output_within(
            Command::new(env!("CARGO_BIN_EXE_pmix-run"))
                .env_remove("LD_LIBRARY_PATH")
                .args(["-n", &n.to_string(), "--keep-going", "--timeout", "50"])
                .arg(exe)
                .arg(k.to_string()),
            Duration::from_secs(60),
        );
        let text = String::from_utf8_lossy(&out.stdout);
        let (mut a, mut b, mut c) = (Vec::new(), Vec::new(), Vec::new());
        for l in text.lines() {
            let w: Vec<&str> = l.split_whitespace().collect();
            if let [
                "timing",
                "rank",
                _,
                "validate_global_us",
                x,
                "fence_us",
                y,
                "plain_us",
                z,
                "failed",
                failed,
            ] = w.as_slice()
            {
                if failed.parse::<u32>().ok() != Some(k) {
                    return Err(format!("{l}: {k} failures expected"));
                }
                let num = |s: &str| s.parse::<f64>().map_err(|e| e.to_string());
                a.push(num(x)?);
                b.push(num(y)?);
                c.push(num(z)?);
            }
        }
        if a.len() != (n - k) as usize {
            return Err(format!(
                "{} survivors reported, {} expected:\n{text}\n{}",
                a.len(),
                n - k,
                String::from_utf8_lossy(&out.stderr)
            ));
        }
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len() as f64;
        vg.push(mean(&a));
        fence.push(mean(&b));
        plain.push(mean(&c));
    }
    let plain = median(plain);
    Ok((median(vg), median(fence), (plain >= 0.0).then_some(plain)))
}

fn main() -> ExitCode {
    let mut rows = Vec::new();
    for failures in [10, 10_000] {
        combine_rows(failures, &mut rows);
    }
    let dir = TempDir::new("bench-ft");
    let src = std::path::PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/benches/c"));
    let exe = cprog::build_ours(&src, "ft_latency", &dir.0);
    for n in [8, 16] {
        for k in [0, 1, 3] {
            match latency(&exe, n, k) {
                Ok((vg, fence, plain)) => {
                    rows.push(Row {
                        what: format!("{n} ranks, {k} killed: validate_global"),
                        value: vg,
                        unit: "µs",
                        target: (n == 8).then_some(300.0),
                    });
                    rows.push(Row {
                        what: format!("{n} ranks, {k} killed: an FT fence of the same ranks"),
                        value: fence,
                        unit: "µs",
                        target: None,
                    });
                    if let Some(plain) = plain {
                        rows.push(Row {
                            what: format!("{n} ranks, {k} killed: a plain fence of the same ranks"),
                            value: plain,
                            unit: "µs",
                            target: None,
                        });
                    }
                }
                Err(e) => {
                    eprintln!("ft bench: {e}");
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    println!("\n| measurement | value | target | met |");
    println!("| --- | --- | --- | --- |");
    let mut missed = 0;
    for r in &rows {
        let (target, met) = match r.target {
            Some(t) => {
                let ok = r.value <= t;
                missed += usize::from(!ok);
                (format!("≤ {t} {}", r.unit), if ok { "yes" } else { "NO" })
            }
            None => ("-".to_owned(), "-"),
        };
        println!(
            "| {} | {:.3} {} | {target} | {met} |",
            r.what, r.value, r.unit
        );
    }
    println!(
        "\n(1M = {N} members; {} CPUs; the ranks of a job share them)",
        std::thread::available_parallelism().map_or(0, |n| n.get())
    );
    if missed > 0 {
        eprintln!("ft bench: {missed} target(s) missed");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
