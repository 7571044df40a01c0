//! The node store's segments between processes (docs/serving.md §5): a segment
//! written to a sealed memfd and to a file only its owner reads is mapped and read
//! by a child process (this test binary again), a reader killed while reading
//! leaves nothing behind, the seals and the file's mode are enforced, and a
//! job-level integer or string is read from a mapping without one allocation (a
//! counting global allocator, armed on the reading thread only).

use std::hint::black_box;
use std::io::Write;
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use pmix::os::{Mapping, seal_segment, write_segment_file};
use pmix_testkit::child::{child_test, output_within};
use pmix_testkit::counting::{Counting, allocations_during};
use pmix_wire::nodestore::{Segment, SegmentBuilder, WILDCARD};
use pmix_wire::{Rank, Value, keys};

#[global_allocator]
static GLOBAL: Counting = Counting;

const RANKS: u32 = 1000;
const SEGMENT_VAR: &str = "PMIXRS_TEST_SEGMENT";
const KIND_VAR: &str = "PMIXRS_TEST_SEGMENT_KIND";
const STARTED_VAR: &str = "PMIXRS_TEST_SEGMENT_STARTED";

/// A job segment of [`RANKS`] ranks with the keys our server's job information
/// gives (docs/serving.md §1(b)).
fn job_segment() -> Vec<u8> {
    let mut b = SegmentBuilder::new("pmrun.42", 0).unwrap();
    let job = [
        (keys::JOB_SIZE, Value::Uint32(RANKS)),
        (keys::NODE_LIST, Value::string("node0")),
        (keys::JOBID, Value::string("pmrun.42")),
        (keys::UNIV_SIZE, Value::Uint32(RANKS)),
        (keys::HOSTNAME, Value::string("node0")),
        (keys::LOCAL_SIZE, Value::Uint32(RANKS)),
        (keys::LOCALLDR, Value::from(Rank(0))),
        (keys::LOCAL_PEERS, Value::string(peers())),
    ];
    for (k, v) in &job {
        b.push(WILDCARD, k, v).unwrap();
    }
    for r in 0..RANKS {
        b.push(r, keys::GLOBAL_RANK, &Value::from(Rank(r))).unwrap();
        b.push(r, keys::LOCAL_RANK, &Value::Uint16(r as u16))
            .unwrap();
        b.push(r, keys::NODE_RANK, &Value::Uint16(r as u16))
            .unwrap();
        b.push(r, keys::NODEID, &Value::Uint32(0)).unwrap();
        b.push(r, keys::HOSTNAME, &Value::string("node0")).unwrap();
        b.push(r, keys::APPNUM, &Value::Uint32(0)).unwrap();
    }
    b.finish().unwrap()
}

/// The local peers: every rank, comma-separated.
fn peers() -> String {
    (0..RANKS)
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

/// Reads every rank's keys from a mapped segment; panics on a wrong answer.
fn read_all(bytes: &[u8]) {
    let seg = Segment::parse(bytes).expect("the mapped segment parses");
    assert_eq!(seg.nspace(), "pmrun.42");
    assert_eq!(seg.get_u32(WILDCARD, keys::JOB_SIZE), Some(Ok(RANKS)));
    assert_eq!(seg.get_str(WILDCARD, keys::NODE_LIST), Some(Ok("node0")));
    for r in 0..RANKS {
        assert_eq!(seg.get_u32(r, keys::GLOBAL_RANK), Some(Ok(r)));
        assert_eq!(seg.get_u32(r, keys::LOCAL_RANK), Some(Ok(r)));
        assert_eq!(seg.get(r, keys::HOSTNAME), Some(Ok(Value::string("node0"))));
    }
    seg.check_values().unwrap();
}

/// A fresh directory of this test's own under the system's temporary directory.
fn scratch_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("pmixrs-nodestore-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir(&d).unwrap();
    d
}

/// The path another process opens this process's descriptor `fd` by.
fn proc_fd_path(fd: &impl AsRawFd) -> PathBuf {
    PathBuf::from(format!(
        "/proc/{}/fd/{}",
        std::process::id(),
        fd.as_raw_fd()
    ))
}

/// Maps what the parent named: a memfd through `/proc/PID/fd/N` (a descriptor of
/// its own, opened read-only) or a segment file by its path.
fn map_named(kind: &str, path: &Path) -> Mapping {
    match kind {
        "memfd" => {
            let f = std::fs::File::open(path).expect("open the parent's memfd");
            Mapping::sealed(f.as_fd()).expect("map the sealed memfd")
        }
        "file" => Mapping::file(path).expect("map the segment file"),
        other => panic!("unknown kind {other}"),
    }
}

/// Run by the tests below in a child process: maps the segment the parent named and
/// reads every rank; with [`STARTED_VAR`], says so in that file and then reads on
/// until it is killed.
#[test]
#[ignore = "run in a child process by the tests of this file"]
fn child_maps_and_reads() {
    let path = PathBuf::from(std::env::var_os(SEGMENT_VAR).expect("the segment's path"));
    let kind = std::env::var(KIND_VAR).expect("memfd or file");
    let map = map_named(&kind, &path);
    read_all(&map);
    match std::env::var_os(STARTED_VAR) {
        None => println!(
            "child read {RANKS} ranks from a {kind} of {} bytes",
            map.len()
        ),
        Some(started) => {
            std::fs::write(started, b"reading").unwrap();
            let deadline = Instant::now() + Duration::from_secs(60);
            while Instant::now() < deadline {
                read_all(&map);
            }
        }
    }
}

fn run_child(kind: &str, path: &Path) {
    let mut cmd = child_test("child_maps_and_reads");
    cmd.env(SEGMENT_VAR, path).env(KIND_VAR, kind);
    let out = output_within(&mut cmd, Duration::from_secs(120));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains(&format!("child read {RANKS} ranks from a {kind}")),
        "{}\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn a_sealed_memfd_is_mapped_and_read_by_a_child_process_and_a_thread() {
    let bytes = job_segment();
    let fd = seal_segment("pmrun.42.0", &bytes).unwrap();
    run_child("memfd", &proc_fd_path(&fd));
    // In this process: one mapping shared with another thread.
    let map = Mapping::sealed(fd.as_fd()).unwrap();
    drop(fd); // the mapping outlives the descriptor
    assert_eq!(&map[..], &bytes[..]);
    std::thread::scope(|s| {
        s.spawn(|| read_all(&map));
        read_all(&map);
    });
}

#[test]
fn a_segment_file_is_mapped_and_read_by_a_child_process_and_outlives_its_removal() {
    let dir = scratch_dir("file");
    let bytes = job_segment();
    let path = write_segment_file(&dir, "pmrun.42.0", &bytes).unwrap();
    assert_eq!(path, dir.join("pmrun.42.0"));
    let meta = std::fs::metadata(&path).unwrap();
    assert_eq!(
        std::os::unix::fs::PermissionsExt::mode(&meta.permissions()) & 0o777,
        0o400
    );
    // Only the segment is left: the temporary name is gone.
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["pmrun.42.0"]);
    run_child("file", &path);
    let map = Mapping::file(&path).unwrap();
    std::fs::remove_file(&path).unwrap();
    read_all(&map);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_reader_killed_while_reading_leaves_nothing_behind() {
    let dir = scratch_dir("kill");
    let bytes = job_segment();
    let path = write_segment_file(&dir, "seg", &bytes).unwrap();
    let fd = seal_segment("seg", &bytes).unwrap();
    for (kind, target) in [("file", path.clone()), ("memfd", proc_fd_path(&fd))] {
        let started = dir.join(format!("started-{kind}"));
        let mut child = child_test("child_maps_and_reads")
            .env(SEGMENT_VAR, &target)
            .env(KIND_VAR, kind)
            .env(STARTED_VAR, &started)
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !started.exists() {
            assert!(Instant::now() < deadline, "the {kind} reader never started");
            assert!(
                child.try_wait().unwrap().is_none(),
                "the {kind} reader ended early"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        // Killed in the middle of its reads: SIGKILL, only the child we started.
        child.kill().unwrap();
        child.wait().unwrap();
        std::fs::remove_file(&started).unwrap();
        // Nothing to clean: no lock, no other file; the segment reads as before.
        read_all(&map_named(kind, &target));
    }
    let names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["seg"]);
    std::fs::remove_file(&path).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn nobody_can_change_a_sealed_segment_and_unsealed_descriptors_are_refused() {
    let bytes = job_segment();
    let fd = seal_segment("sealed", &bytes).unwrap();
    // Even opened for writing (through /proc), it cannot be written or resized.
    let mut w = std::fs::OpenOptions::new()
        .write(true)
        .open(proc_fd_path(&fd))
        .unwrap();
    let e = w.write_all(b"x").unwrap_err();
    assert_eq!(e.raw_os_error(), Some(libc::EPERM), "{e}");
    assert_eq!(w.set_len(1).unwrap_err().raw_os_error(), Some(libc::EPERM));
    assert_eq!(
        w.set_len(1 << 30).unwrap_err().raw_os_error(),
        Some(libc::EPERM)
    );
    let map = Mapping::sealed(fd.as_fd()).unwrap();
    assert_eq!(&map[..], &bytes[..]);
    // A regular file and a pipe carry no seals.
    let dir = scratch_dir("unsealed");
    let path = write_segment_file(&dir, "seg", &bytes).unwrap();
    let f = std::fs::File::open(&path).unwrap();
    let e = Mapping::sealed(f.as_fd()).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData, "{e}");
    let (r, _w) = std::io::pipe().unwrap();
    assert_eq!(
        Mapping::sealed(r.as_fd()).unwrap_err().kind(),
        std::io::ErrorKind::InvalidData
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn a_segment_file_is_mapped_only_when_its_owner_alone_reads_it_and_nobody_writes_it() {
    use std::os::unix::fs::PermissionsExt;
    let dir = scratch_dir("modes");
    let bytes = job_segment();
    let path = write_segment_file(&dir, "seg", &bytes).unwrap();
    assert!(Mapping::file(&path).is_ok());
    for mode in [0o600, 0o440, 0o404, 0o644] {
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(mode)).unwrap();
        let e = Mapping::file(&path).unwrap_err();
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::InvalidData,
            "mode {mode:o}: {e}"
        );
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o400)).unwrap();
    // A link to it is not followed.
    let link = dir.join("link");
    std::os::unix::fs::symlink(&path, &link).unwrap();
    assert!(Mapping::file(&link).is_err());
    // An empty file is no segment.
    let empty = write_segment_file(&dir, "empty", b"").unwrap();
    assert_eq!(
        Mapping::file(&empty).unwrap_err().kind(),
        std::io::ErrorKind::InvalidData
    );
    // The writer never replaces a file, and takes plain names only.
    let e = write_segment_file(&dir, "seg", &bytes).unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::AlreadyExists, "{e}");
    for name in ["", ".", "..", "a/b", "a\0b"] {
        let e = write_segment_file(&dir, name, &bytes).unwrap_err();
        assert_eq!(e.kind(), std::io::ErrorKind::InvalidInput, "{name:?}");
    }
    let mut names: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    names.sort();
    assert_eq!(names, ["empty", "link", "seg"]);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn job_level_integers_and_strings_are_read_from_a_mapping_without_allocating() {
    let bytes = job_segment();
    let fd = seal_segment("noalloc", &bytes).unwrap();
    let map = Mapping::sealed(fd.as_fd()).unwrap();
    let seg = Segment::parse(&*map).unwrap();
    let id = seg.key_id(keys::GLOBAL_RANK).unwrap();
    let mut sum = 0u64;
    let allocated = allocations_during(|| {
        for _ in 0..100 {
            sum += u64::from(seg.get_u32(WILDCARD, keys::JOB_SIZE).unwrap().unwrap());
            sum += seg
                .get_str(WILDCARD, keys::NODE_LIST)
                .unwrap()
                .unwrap()
                .len() as u64;
            sum += u64::from(seg.get_u32(RANKS / 2, keys::LOCAL_RANK).unwrap().unwrap());
            sum += seg
                .get_str(RANKS - 1, keys::HOSTNAME)
                .unwrap()
                .unwrap()
                .len() as u64;
            sum += seg.raw_by_id(7, id).unwrap().len() as u64;
            sum += u64::from(seg.get_u32(WILDCARD, keys::LOCALLDR).unwrap().unwrap());
            sum += seg
                .get_str(WILDCARD, keys::LOCAL_PEERS)
                .unwrap()
                .unwrap()
                .len() as u64;
            assert!(seg.get_u32(WILDCARD, keys::SERVER_URI).is_none());
        }
    });
    assert_eq!(allocated, 0, "reads allocated {allocated} times");
    let peers = peers().len() as u64;
    assert_eq!(
        sum,
        100 * (u64::from(RANKS) + 5 + u64::from(RANKS / 2) + 5 + 2 + peers)
    );
    // The counter does see an allocation: a decoded string longer than a `WStr`
    // holds in place is one.
    let allocated = allocations_during(|| {
        black_box(seg.get(WILDCARD, keys::LOCAL_PEERS));
    });
    assert!(allocated >= 1);
    // Parsing allocates nothing either.
    assert_eq!(
        allocations_during(|| {
            black_box(Segment::parse(&*map).unwrap());
        }),
        0
    );
}
