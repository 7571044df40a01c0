//! The index of the groups each process holds: a departure looks at the
//! departing process's groups alone, however many other groups the server keeps.

use super::*;
use crate::server::core::{CoreConfig, NamespaceSpec};

fn key(r: u32) -> ProcKey {
    ("job".to_string(), r)
}

/// A core serving job "job" of `n` ranks (none connected: every rank is local and
/// live), with one group `gR` over ranks {R, R+1} for every even R.
fn pairs(n: u32) -> Core {
    let mut core = Core::new(CoreConfig::new("srv", 0, "node0", 1000, 1000));
    core.add_namespace(NamespaceSpec::single_node("job", n, 1000, 1000))
        .unwrap();
    for r in (0..n).step_by(2) {
        open(
            &mut core,
            &format!("g{r}"),
            Vec::new(),
            vec![key(r), key(r + 1)],
        );
    }
    core
}

#[test]
fn a_departure_looks_only_at_the_groups_of_the_departing_process() {
    let mut core = pairs(2_000);
    assert_eq!(core.groups.records.len(), 1_000);
    assert_eq!(core.groups.by_proc.get(&key(0)).map(BTreeSet::len), Some(1));
    // Rank 0 also holds a group with rank 1999.
    open(&mut core, "x", Vec::new(), vec![key(0), key(1_999)]);
    assert_eq!(depart(&mut core, &key(0)), 2);
    assert!(!core.groups.by_proc.contains_key(&key(0)));
    for g in ["g0", "x"] {
        let rec = &core.groups.records[g];
        assert_eq!(rec.standing_of(&key(0)), Some(Standing::Lost), "{g}");
    }
    // Every other group is as it was.
    let rec = &core.groups.records["g2"];
    assert_eq!(rec.standing_of(&key(2)), Some(Standing::Holder));
    assert_eq!(rec.standing_of(&key(3)), Some(Standing::Holder));
    // A process that holds nothing looks at nothing.
    assert_eq!(depart(&mut core, &key(0)), 0);
}

#[test]
fn a_group_nobody_holds_any_more_is_forgotten_with_its_index_entries() {
    let mut core = pairs(4);
    assert_eq!(depart(&mut core, &key(0)), 1);
    assert_eq!(depart(&mut core, &key(1)), 1);
    assert!(!core.groups.records.contains_key("g0"));
    assert!(core.groups.records.contains_key("g2"));
    assert_eq!(core.groups.by_proc.len(), 2);
}

#[test]
fn a_constructed_group_whose_members_are_all_lost_is_forgotten() {
    let mut core = pairs(4);
    let rec = core.groups.records.get_mut("g0").unwrap();
    rec.contribute(0, None);
    rec.contribute(1, None);
    settle(&mut core, "g0");
    assert_eq!(core.groups.records["g0"].phase, Phase::Active);
    assert_eq!(depart(&mut core, &key(0)), 1);
    assert!(core.groups.records.contains_key("g0"));
    assert_eq!(depart(&mut core, &key(1)), 1);
    assert!(!core.groups.records.contains_key("g0"));
}
