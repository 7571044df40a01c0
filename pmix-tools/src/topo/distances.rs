//! `pmix-topo distances`: the distances from a process location (`--cpus`, default
//! this process's binding as the runtime resolves it) or from a device (`--origin`) to
//! the node's devices, as an aligned table with a legend or as one
//! [`DistancesReport`](super::report::DistancesReport). Also owns the one check the
//! command line makes against the topology: `--cpus` naming PUs the machine lacks.

use std::fmt::Write as _;

use pmix::{BindEnvelope, DistanceRequest, Service};
use pmix_core::{CpuSet, Status, Topology};

use super::args::{DistancesArgs, Format};
use super::report::{self, DistanceEntry, DistancesReport, MeasuredFrom};
use super::{Failure, topology};

/// The table's legend from a cpuset (docs/design.md §3.2).
pub(super) const LEGEND_FROM_CPUS: &str = "distance = 16 x tier + PCIe depth; tiers: 0 local (the cpu is in the device's locality), 1 same package, 2 another package\n";

/// The table's legend from a device (docs/design.md §3.3).
pub(super) const LEGEND_FROM_DEVICE: &str = "distance = 16 x tier + bridges; tiers: 0 same device, 1 same PCIe switch or root port, 2 same host bridge, 3 same package, 4 another package\n";

/// Answers `distances` with the service `svc` and renders the answer.
pub(super) fn run(svc: &Service, a: &DistancesArgs) -> Result<String, Failure> {
    let topo = topology(svc)?;
    let Measured { line, from, cpus } =
        measured_from(svc, &topo, a.cpus.as_ref(), a.origin.as_deref())?;
    let ids: Vec<&str> = a.ids.iter().map(String::as_str).collect();
    let req = DistanceRequest {
        topology: Some(&topo),
        cpuset: cpus.as_ref(),
        types: a.types,
        ids: &ids,
        origin: a.origin.as_deref(),
    };
    let distances = svc
        .answer(&req, |topo, entries| {
            entries
                .iter()
                .filter_map(|e| {
                    let dev = topo.device(e.device)?;
                    Some(DistanceEntry {
                        uuid: dev.uuid().to_owned(),
                        osname: dev.name().to_owned(),
                        kind: dev.kind().name().unwrap_or("?").to_owned(),
                        pci: dev.pci().map(|p| p.to_string()),
                        mindist: e.mindist,
                        maxdist: e.maxdist,
                    })
                })
                .collect::<Vec<_>>()
        })
        .map_err(|e| Failure::pmix(&e))?;
    let legend = if a.origin.is_some() {
        LEGEND_FROM_DEVICE
    } else {
        LEGEND_FROM_CPUS
    };
    Ok(match a.format {
        Format::Json => report::to_json(&DistancesReport {
            status: report::SUCCESS.to_owned(),
            from,
            distances,
        }),
        Format::Table => table(&line, &distances, legend),
    })
}

/// What a command measures from, resolved: the line the table opens with, the JSON key,
/// and the cpuset to ask with (`None` for a device).
pub(super) struct Measured {
    /// `from cpus 0-3 (this process's binding)`, `from device eth0`.
    pub(super) line: String,
    /// The JSON key.
    pub(super) from: MeasuredFrom,
    /// The cpuset: `--cpus`, or this process's binding; `None` with `--origin`.
    pub(super) cpus: Option<CpuSet>,
}

/// Resolves `--cpus` / `--origin` as `distances` and `draw` take them: a device when
/// `origin` is given; else `cpus`, checked against the machine; else this process's
/// binding, read now.
pub(super) fn measured_from(
    svc: &Service,
    topo: &Topology,
    cpus: Option<&CpuSet>,
    origin: Option<&str>,
) -> Result<Measured, Failure> {
    if let Some(c) = cpus {
        check_cpus_in_machine(c, topo)?;
    }
    Ok(match (origin, cpus) {
        (Some(o), _) => Measured {
            line: format!("from device {o}"),
            from: MeasuredFrom::Origin(o.to_owned()),
            cpus: None,
        },
        (None, Some(c)) => Measured {
            line: format!("from cpus {c}"),
            from: MeasuredFrom::Cpus(c.to_string()),
            cpus: Some(c.clone()),
        },
        (None, None) => {
            let c = svc
                .own_cpuset(BindEnvelope::Process)
                .map_err(|e| Failure::Pmix {
                    status: Status::ERR_NOT_FOUND,
                    message: format!("cannot read this process's binding ({e}): pass --cpus LIST"),
                })?;
            Measured {
                line: format!("from cpus {c} (this process's binding)"),
                from: MeasuredFrom::Cpus(c.to_string()),
                cpus: Some(c),
            }
        }
    })
}

/// `--cpus` naming PUs the machine lacks is a usage error naming them (a C caller's
/// cpuset may hold such PUs and they are ignored, docs/design.md §3.2; on the command line they
/// are a typo, and dropping them silently would answer another question).
fn check_cpus_in_machine(cpus: &CpuSet, topo: &Topology) -> Result<(), Failure> {
    let machine = topo.machine_cpus();
    if !cpus.has_outside(machine) {
        return Ok(());
    }
    let outside = CpuSet::from_pus(cpus.iter().filter(|&p| !machine.contains(p)));
    let (noun, verb) = if outside.len() == 1 {
        ("PU", "is")
    } else {
        ("PUs", "are")
    };
    Err(Failure::Usage(format!(
        "--cpus {cpus}: {noun} {outside} {verb} not in this machine, whose PUs are {machine}"
    )))
}

/// The table: `from` over aligned columns (numbers right-aligned, text left-aligned),
/// then `legend`.
fn table(from: &str, entries: &[DistanceEntry], legend: &str) -> String {
    let rows: Vec<[String; 6]> = entries
        .iter()
        .map(|d| {
            [
                d.kind.clone(),
                d.pci.clone().unwrap_or_else(|| "-".to_owned()),
                d.osname.clone(),
                d.uuid.clone(),
                d.mindist.to_string(),
                d.maxdist.to_string(),
            ]
        })
        .collect();
    let header = ["TYPE", "PCI", "OSNAME", "UUID", "MIN", "MAX"];
    let mut widths = header.map(str::len);
    for r in &rows {
        for (w, c) in widths.iter_mut().zip(r) {
            *w = (*w).max(c.chars().count());
        }
    }
    let mut out = format!("{from}\n");
    let line = |out: &mut String, cells: [&str; 6]| {
        let mut s = String::new();
        for (k, (c, w)) in cells.iter().zip(widths).enumerate() {
            if k > 0 {
                s.push_str("  ");
            }
            // Infallible: writing to a String.
            let _ = if k >= 4 {
                write!(s, "{c:>w$}")
            } else {
                write!(s, "{c:<w$}")
            };
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(&mut out, header);
    for r in &rows {
        line(&mut out, [&r[0], &r[1], &r[2], &r[3], &r[4], &r[5]]);
    }
    out.push_str(legend);
    out
}
