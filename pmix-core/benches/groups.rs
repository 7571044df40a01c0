//! Group and process-state tracking costs (issue 6): leave handling at 1,024 and
//! 1,048,576 members (O(1): the two should match), `validate_local` with 10 new
//! failures, `get_state` / `get_num_state` and agreement combine on 1,048,576
//! members. Prints the tracker's and a group replica's memory per member against
//! the 16-byte budget first.
//!
//! `cargo bench -p pmix-core --bench groups` (short measurement times: the whole
//! run takes well under a minute on two cores).

// criterion_group! generates an undocumented public function.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use pmix_core::ftstate::{AgreeValue, Mask, RankInfo, Tracker, View};
use pmix_core::group::{Body, CollectiveOp, Group, GroupId, Nspace, ProcId, Roster};

const BIG: u32 = 1 << 20;

fn ns() -> Nspace {
    Nspace::new("job").unwrap()
}

fn proc(r: u32) -> ProcId {
    ProcId::new(ns(), r).unwrap()
}

/// Rank 0's replica of a constructed group of `n` members.
fn constructed(n: u32) -> Group {
    let mut g = Group::new(
        GroupId::new("bench").unwrap(),
        &proc(0),
        Roster::from_ranks(ns(), 0..n).unwrap(),
    )
    .unwrap();
    g.construct(Default::default()).unwrap();
    while g.poll_output().is_some() {}
    for r in 1..n {
        g.on_message(
            &proc(r),
            Body::Contribute {
                op: CollectiveOp::Construct,
                seq: 0,
            },
        )
        .unwrap();
    }
    while g.poll_output().is_some() {}
    g
}

fn print_memory() {
    let t = Tracker::new(BIG, 0).unwrap();
    let g = constructed(1024);
    let big = Group::new(
        GroupId::new("m").unwrap(),
        &proc(0),
        Roster::from_ranks(ns(), 0..BIG).unwrap(),
    )
    .unwrap();
    let v = AgreeValue::new(BIG).unwrap();
    let per = |bytes: usize| bytes as f64 / f64::from(BIG);
    println!("memory per member at {BIG} members (budget 16 bytes):");
    println!(
        "  ftstate::Tracker  {:6.3} bytes ({} bytes in all)",
        per(t.heap_bytes()),
        t.heap_bytes()
    );
    println!(
        "  group::Group      {:6.3} bytes ({} bytes in all)",
        per(big.heap_bytes()),
        big.heap_bytes()
    );
    println!(
        "  ftstate::AgreeValue (one exchange value) {:6.3} bytes",
        per(v.contributors().words().len() * 8 * 4)
    );
    println!(
        "  group::Group at 1024 members: {:.3} bytes per member",
        g.heap_bytes() as f64 / 1024.0
    );
}

/// Receiving `PMIX_GROUP_LEFT` and polling its event, one leaver per iteration.
fn leave_handling(c: &mut Criterion) {
    let mut grp = c.benchmark_group("leave handling (receiver: remove, account, event)");
    for n in [1024u32, BIG] {
        for fence_open in [false, true] {
            let template = {
                let mut g = constructed(n);
                if fence_open {
                    g.fence(false).unwrap();
                    while g.poll_output().is_some() {}
                }
                g
            };
            let label = if fence_open {
                "fence in flight"
            } else {
                "idle"
            };
            grp.bench_with_input(BenchmarkId::new(label, n), &n, |b, &n| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    let mut left = 0;
                    let mut g = template.clone();
                    while left < iters {
                        // Members 1..n-1 leave one by one; then a fresh group.
                        let batch = (iters - left).min(u64::from(n - 2));
                        let start = Instant::now();
                        for r in 1..=batch as u32 {
                            g.on_message(&proc(r), Body::Left).unwrap();
                            while let Some(o) = g.poll_output() {
                                black_box(o);
                            }
                        }
                        total += start.elapsed();
                        left += batch;
                        if left < iters {
                            g = template.clone();
                        }
                    }
                    total
                });
            });
        }
    }
    grp.finish();
}

fn validate_local(c: &mut Criterion) {
    let mut grp = c.benchmark_group("validate_local at 1048576 members");
    grp.bench_function("10 new failures (reports + validate_local)", |b| {
        b.iter_custom(|iters| {
            let mut t = Tracker::new(BIG, 0).unwrap();
            let mut next = 1;
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                if next + 10 >= BIG {
                    t = Tracker::new(BIG, 0).unwrap();
                    next = 1;
                }
                let start = Instant::now();
                for k in 0..10 {
                    // Always 10 members not reported before.
                    assert!(t.report_failure(next + k).unwrap());
                }
                black_box(t.validate_local());
                total += start.elapsed();
                next += 10;
            }
            total
        });
    });
    grp.bench_function("no new failure", |b| {
        let mut t = Tracker::new(BIG, 0).unwrap();
        for r in (1..BIG).step_by(101) {
            t.report_failure(r).unwrap();
        }
        t.validate_local();
        b.iter(|| black_box(t.validate_local()));
    });
    grp.finish();
}

/// A tracker of 1,048,576 members with ~1% failures in `L` (validated locally,
/// then 10 more failures validated as NEW).
fn loaded_tracker() -> Tracker {
    let mut t = Tracker::new(BIG, 0).unwrap();
    for r in (1..BIG).step_by(97) {
        t.report_failure(r).unwrap();
    }
    t.validate_local();
    for r in (3..BIG).step_by(BIG as usize / 10) {
        let _ = t.report_failure(r);
    }
    t.validate_local();
    t
}

/// The worst case for output size: a global validate in which only ranks 0 and 1
/// contributed, so `G` (and `L`) hold every other member as NULL, NEW.
fn all_but_two_failed() -> Tracker {
    let mut t = Tracker::new(BIG, 0).unwrap();
    let mut v = AgreeValue::new(BIG).unwrap();
    t.contribute(1, &mut v).unwrap();
    Tracker::new(BIG, 1).unwrap().contribute(1, &mut v).unwrap();
    t.validate_global(&v.decide()).unwrap();
    t
}

fn get_state(c: &mut Criterion) {
    let t = loaded_tracker();
    let worst = all_but_two_failed();
    let mut out = vec![RankInfo::default(); BIG as usize];
    let mut grp = c.benchmark_group("get_state at 1048576 members");
    for (name, t, view, mask) in [
        (
            "1% failed, L FAILED|NEW",
            &t,
            View::Local,
            Mask::FAILED | Mask::NEW,
        ),
        ("1% failed, L any failed", &t, View::Local, Mask::ANY_FAILED),
        ("1% failed, L OK", &t, View::Local, Mask::OK),
        (
            "all but 2 failed, G NULL|NEW",
            &worst,
            View::Global,
            Mask::NULL | Mask::NEW,
        ),
    ] {
        let n = t.get_num_state(view, mask);
        grp.bench_function(format!("{name} ({n} results)"), |b| {
            b.iter(|| black_box(t.get_state(view, mask, &mut out).unwrap()));
        });
    }
    grp.finish();
    let mut grp = c.benchmark_group("get_num_state at 1048576 members");
    grp.bench_function("one call (L, FAILED|NEW)", |b| {
        b.iter(|| black_box(t.get_num_state(View::Local, black_box(Mask::FAILED | Mask::NEW))));
    });
    grp.bench_function("every mask, both views (64 calls)", |b| {
        b.iter(|| {
            let mut s = 0;
            for view in [View::Local, View::Global] {
                for bits in 0..32 {
                    s += t.get_num_state(view, Mask::from_bits(black_box(bits)).unwrap());
                }
            }
            black_box(s)
        });
    });
    grp.finish();
}

fn agreement(c: &mut Criterion) {
    let mut a_t = Tracker::new(BIG, 0).unwrap();
    let mut b_t = Tracker::new(BIG, 1).unwrap();
    for r in (2..BIG).step_by(997) {
        a_t.report_failure(r).unwrap();
        b_t.report_failure(r + 1).unwrap();
    }
    let mut a = AgreeValue::new(BIG).unwrap();
    a_t.contribute(3, &mut a).unwrap();
    let mut b = AgreeValue::new(BIG).unwrap();
    b_t.contribute(1, &mut b).unwrap();
    let mut acc = AgreeValue::new(BIG).unwrap();
    let mut grp = c.benchmark_group("agreement at 1048576 members");
    grp.bench_function("combine (two contributions)", |bench| {
        bench.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            for _ in 0..iters {
                acc.reset();
                acc.combine(&a).unwrap();
                let start = Instant::now();
                acc.combine(black_box(&b)).unwrap();
                total += start.elapsed();
            }
            total
        });
    });
    acc.reset();
    acc.combine(&a).unwrap();
    acc.combine(&b).unwrap();
    grp.bench_function(
        "decide: failed count and uniform-error check (full scans)",
        |bench| {
            bench.iter(|| {
                let d = acc.decide();
                black_box((d.failed_count(), d.unacked()))
            });
        },
    );
    grp.bench_function(
        "apply (validate_global) learning 1048574 new failures: worst case, 2 contributors",
        |bench| {
            bench.iter_custom(|iters| {
                let mut total = Duration::ZERO;
                for _ in 0..iters {
                    let mut t = a_t.clone();
                    let start = Instant::now();
                    black_box(t.validate_global(&acc.decide()).unwrap());
                    total += start.elapsed();
                }
                total
            });
        },
    );
    grp.finish();
}

fn benches(c: &mut Criterion) {
    print_memory();
    leave_handling(c);
    validate_local(c);
    get_state(c);
    agreement(c);
}

criterion_group! {
    name = groups;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(Duration::from_millis(300))
        .measurement_time(Duration::from_secs(1));
    targets = benches
}
criterion_main!(groups);
