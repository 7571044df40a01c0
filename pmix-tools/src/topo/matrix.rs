//! `pmix-topo matrix`: the device × device matrix, read from the runtime's answers
//! (every selected device from the whole machine, then each device's distances to the
//! others), in the words users know from `nvidia-smi topo -m` (docs/design.md §7), as a table
//! with a legend or as one [`MatrixReport`](super::report::MatrixReport).

use std::fmt::Write as _;

use pmix::{DistanceRequest, Service};
use pmix_core::{DeviceDistance, DeviceTypes};

use super::args::{Format, MatrixArgs};
use super::report::{self, MatrixDevice, MatrixReport};
use super::{Failure, topology};

/// What the matrix words mean.
const LEGEND: &str = "Legend: X = same device, PIX = same PCIe switch or root port (at most 2 bridges), \
     PXB = several PCIe bridges, PHB = same host bridge, NODE = same package, another host bridge, \
     SYS = another package\n";

/// The `nvidia-smi topo -m` word for a device-to-device distance: `X` tier 0, `PIX`
/// tier 1 with at most 2 hops, `PXB` tier 1 with more, `PHB` tier 2, `NODE` tier 3,
/// `SYS` beyond.
pub(super) fn tier_word(dist: u16) -> &'static str {
    match (dist / 16, dist % 16) {
        (0, _) => "X",
        (1, hops) if hops <= 2 => "PIX",
        (1, _) => "PXB",
        (2, _) => "PHB",
        (3, _) => "NODE",
        _ => "SYS",
    }
}

/// The entries of `req`'s answer.
fn entries(svc: &Service, req: &DistanceRequest<'_>) -> Result<Vec<DeviceDistance>, Failure> {
    svc.answer(req, |_, e| e.to_vec())
        .map_err(|e| Failure::pmix(&e))
}

/// Answers `matrix` with the service `svc` and renders the answer.
pub(super) fn run(svc: &Service, a: &MatrixArgs) -> Result<String, Failure> {
    let topo = topology(svc)?;
    let types = Some(a.types.unwrap_or(DeviceTypes::DEFAULT));
    let everything = topo.machine_cpus().clone();
    let devices = entries(
        svc,
        &DistanceRequest {
            topology: Some(&topo),
            cpuset: Some(&everything),
            types,
            ..Default::default()
        },
    )?;
    let devs: Vec<_> = devices
        .iter()
        .filter_map(|e| topo.device(e.device))
        .collect();
    let mut dist: Vec<Vec<Option<u16>>> = Vec::with_capacity(devs.len());
    for d in &devs {
        let row = entries(
            svc,
            &DistanceRequest {
                topology: Some(&topo),
                origin: Some(d.name()),
                types,
                ..Default::default()
            },
        )?;
        dist.push(
            devices
                .iter()
                .map(|e| row.iter().find(|r| r.device == e.device).map(|r| r.mindist))
                .collect(),
        );
    }
    if a.format == Format::Json {
        return Ok(report::to_json(&MatrixReport {
            status: report::SUCCESS.to_owned(),
            devices: devs
                .iter()
                .map(|d| MatrixDevice {
                    osname: d.name().to_owned(),
                    kind: d.kind().name().unwrap_or("?").to_owned(),
                    pci: d.pci().map(|p| p.to_string()),
                    uuid: d.uuid().to_owned(),
                })
                .collect(),
            matrix: dist
                .iter()
                .map(|row| {
                    row.iter()
                        .map(|v| v.map(|v| tier_word(v).to_owned()))
                        .collect()
                })
                .collect(),
            distances: dist,
        }));
    }
    let names: Vec<&str> = devs.iter().map(|d| d.name()).collect();
    let w = names.iter().map(|n| n.len()).max().unwrap_or(0).max(4);
    let mut out = String::new();
    let mut head = format!("{:w$}", "");
    for n in &names {
        // Infallible: writing to a String.
        let _ = write!(head, "  {n:<w$}");
    }
    out.push_str(head.trim_end());
    out.push('\n');
    for (n, row) in names.iter().zip(&dist) {
        let mut line = format!("{n:<w$}");
        for v in row {
            let _ = write!(line, "  {:<w$}", v.map_or("-", tier_word));
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out.push_str(LEGEND);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_follow_nvidia_smi() {
        assert_eq!(tier_word(0), "X");
        assert_eq!(tier_word(16), "PIX");
        assert_eq!(tier_word(18), "PIX");
        assert_eq!(tier_word(19), "PXB");
        assert_eq!(tier_word(33), "PHB");
        assert_eq!(tier_word(48), "NODE");
        assert_eq!(tier_word(70), "SYS");
    }
}
