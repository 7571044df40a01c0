//! The operating-system calls of the runtime: the process's and thread's cpu binding,
//! and taking the socket a launcher handed this process.

use std::io;

use pmix_core::CpuSet;

/// Whose binding a cpuset describes (`pmix_bind_envelope_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum BindEnvelope {
    /// `PMIX_CPUBIND_PROCESS` (0): the union of the bindings of every thread of the
    /// process.
    #[default]
    Process,
    /// `PMIX_CPUBIND_THREAD` (1): the calling thread's binding.
    Thread,
}

impl BindEnvelope {
    /// The envelope for a C `pmix_bind_envelope_t` value, or `None` for an unknown one.
    pub fn from_raw(raw: u8) -> Option<BindEnvelope> {
        match raw {
            0 => Some(BindEnvelope::Process),
            1 => Some(BindEnvelope::Thread),
            _ => None,
        }
    }
}

/// The PUs the process (every thread, [`BindEnvelope::Process`]) or the calling thread
/// ([`BindEnvelope::Thread`]) may run on, from `sched_getaffinity`.
///
/// For the process, the threads are listed from `/proc/self/task`; where that cannot be
/// read, the main thread's binding stands for the process's.
///
/// # Errors
/// The OS error of `sched_getaffinity` (none is expected on Linux).
pub fn binding(envelope: BindEnvelope) -> io::Result<CpuSet> {
    match envelope {
        BindEnvelope::Thread => affinity(0),
        BindEnvelope::Process => {
            let Ok(dir) = std::fs::read_dir("/proc/self/task") else {
                return affinity(std::process::id() as libc::pid_t);
            };
            let mut set = CpuSet::new();
            let mut any = false;
            for entry in dir.flatten() {
                let Some(tid) = entry
                    .file_name()
                    .to_str()
                    .and_then(|s| s.parse::<libc::pid_t>().ok())
                else {
                    continue;
                };
                // A thread may exit between the listing and the query: skip it.
                if let Ok(s) = affinity(tid) {
                    set.union_with(&s);
                    any = true;
                }
            }
            if any {
                Ok(set)
            } else {
                affinity(std::process::id() as libc::pid_t)
            }
        }
    }
}

/// `sched_getaffinity(tid)` with a mask grown until the kernel's fits.
fn affinity(tid: libc::pid_t) -> io::Result<CpuSet> {
    let mut words: Vec<u64> = vec![0; 16];
    loop {
        let bytes = words.len() * std::mem::size_of::<u64>();
        // SAFETY: `words` is a live, writable buffer of exactly `bytes` bytes, and
        // `sched_getaffinity` writes at most `cpusetsize` bytes into it; the kernel's
        // mask layout (an array of unsigned longs, bit i = cpu i) is that of `u64`
        // words on 64-bit Linux. `cpu_set_t` is only the pointer type of the prototype.
        let rc = unsafe {
            libc::sched_getaffinity(tid, bytes, words.as_mut_ptr().cast::<libc::cpu_set_t>())
        };
        if rc == 0 {
            break;
        }
        let err = io::Error::last_os_error();
        if err.raw_os_error() == Some(libc::EINVAL) && (bytes * 8) < CpuSet::MAX_PUS as usize {
            words = vec![0; words.len() * 2];
            continue;
        }
        return Err(err);
    }
    let pus = words.iter().enumerate().flat_map(|(i, &w)| {
        (0..64u32)
            .filter(move |b| w & (1u64 << b) != 0)
            .map(move |b| i as u32 * 64 + b)
    });
    Ok(CpuSet::from_pus(pus))
}

/// Whether this process took its launcher's socket already ([`take_channel`]).
static CHANNEL_TAKEN: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// An `int` socket option of `fd`.
fn sockopt_int(fd: std::os::fd::RawFd, name: libc::c_int) -> Option<libc::c_int> {
    let mut v: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `v` and `len` are valid for writes of the sizes given; a bad `fd` is
    // an error return, not undefined behaviour.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            name,
            (&raw mut v).cast(),
            &raw mut len,
        )
    };
    (rc == 0).then_some(v)
}

/// The socket its launcher made for this process (`PMIX_RS_SERVER_FD`, its server's
/// `client_channel`): descriptor `fd`, taken only if it is a Unix stream socket
/// whose pair process `launcher` made (its peer credentials), and only once per
/// process (a later init, or a descriptor number reused since, connects over TCP).
/// The descriptor becomes close-on-exec, so this process's children do not inherit
/// it. `None` when it is not that socket.
pub(crate) fn take_channel(
    fd: std::os::fd::RawFd,
    launcher: u32,
) -> Option<std::os::unix::net::UnixStream> {
    use std::sync::atomic::Ordering;
    if fd < 0 || CHANNEL_TAKEN.load(Ordering::Acquire) {
        return None;
    }
    if sockopt_int(fd, libc::SO_DOMAIN)? != libc::AF_UNIX
        || sockopt_int(fd, libc::SO_TYPE)? != libc::SOCK_STREAM
    {
        return None;
    }
    let mut cred = libc::ucred {
        pid: 0,
        uid: 0,
        gid: 0,
    };
    let mut len = std::mem::size_of::<libc::ucred>() as libc::socklen_t;
    // SAFETY: `cred` and `len` are valid for writes of the sizes given.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            libc::SO_PEERCRED,
            (&raw mut cred).cast(),
            &raw mut len,
        )
    };
    if rc != 0 || u32::try_from(cred.pid).ok() != Some(launcher) {
        return None;
    }
    // Checked first, taken once: a refused descriptor leaves the flag alone.
    if CHANNEL_TAKEN
        .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
        .is_err()
    {
        return None;
    }
    // SAFETY: plain fcntl on a descriptor just checked to be an open socket.
    if unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) } != 0 {
        return None;
    }
    // SAFETY: `fd` is an open Unix stream socket (checked above) that nothing else in
    // this process owns: the launcher handed it to this process for this purpose,
    // and `CHANNEL_TAKEN` makes this the only place that ever takes it.
    Some(unsafe { <std::os::unix::net::UnixStream as std::os::fd::FromRawFd>::from_raw_fd(fd) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binding_is_not_empty_and_thread_is_within_process() {
        let p = binding(BindEnvelope::Process).unwrap();
        let t = binding(BindEnvelope::Thread).unwrap();
        assert!(!p.is_empty());
        assert!(!t.is_empty());
        assert!(t.is_subset(&p), "thread {t} not within process {p}");
    }

    #[test]
    fn envelope_from_raw() {
        assert_eq!(BindEnvelope::from_raw(0), Some(BindEnvelope::Process));
        assert_eq!(BindEnvelope::from_raw(1), Some(BindEnvelope::Thread));
        assert_eq!(BindEnvelope::from_raw(2), None);
    }
}
