//! The operating-system calls of the runtime, for the client and the server alike: the
//! process's and thread's cpu binding, its effective ids and short host name, the
//! variable that names the socket a launcher handed a rank ([`SERVER_FD_VAR`]), how
//! the allocator maps large blocks, and the node store's segments
//! ([`pmix_wire::nodestore`], docs/serving.md §5) put in a sealed memfd
//! ([`seal_segment`]) or a file only their owner reads ([`write_segment_file`]) and
//! mapped read-only ([`Mapping`]).

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

/// The PUs process `pid` (its main thread) may run on, from `sched_getaffinity`.
///
/// # Errors
/// The OS error: `ESRCH` for a process that is gone, `EPERM` for one of another user.
pub fn process_binding(pid: u32) -> io::Result<CpuSet> {
    let pid = libc::pid_t::try_from(pid)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "a pid past pid_t"))?;
    affinity(pid)
}

/// How many descendants [`descendant_holding`] looks at, at most.
pub const MAX_DESCENDANTS: usize = 65_536;

/// Looks, among this process's descendants (its children, theirs, and so on, at
/// most [`MAX_DESCENDANTS`] of them, nearest first), for the one that holds the
/// socket whose inode is `inode` (one of its descriptors links to `socket:[INODE]`);
/// `None` when none does or `/proc` cannot tell (no `children` files: a kernel without
/// `CONFIG_PROC_CHILDREN`).
///
/// A launcher's ranks are its children (slurmstepd's tasks, orted's procs), so a
/// server hosted in the launcher finds the process at the other end of a loopback
/// connection without reading every process of the node. Only the descriptors of
/// the processes `wanted` gives something for are read (the caller skips those whose
/// answer would not matter: unbound ones), so the usual cost is one call of `wanted`
/// per descendant. Returns what `wanted` gave for the process holding the socket.
pub fn descendant_holding<T>(inode: u32, mut wanted: impl FnMut(u32) -> Option<T>) -> Option<T> {
    let target = format!("socket:[{inode}]");
    let mut queue = std::collections::VecDeque::new();
    children_of(std::process::id(), &mut queue);
    let mut seen = 0usize;
    while let Some(pid) = queue.pop_front() {
        seen += 1;
        if seen > MAX_DESCENDANTS {
            return None;
        }
        let Some(found) = wanted(pid) else {
            children_of(pid, &mut queue);
            continue;
        };
        if let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
            for fd in fds.flatten() {
                if std::fs::read_link(fd.path()).is_ok_and(|l| l.as_os_str() == target.as_str()) {
                    return Some(found);
                }
            }
        }
        children_of(pid, &mut queue);
    }
    None
}

/// Appends the children of every thread of `pid` (`/proc/PID/task/TID/children`).
fn children_of(pid: u32, out: &mut std::collections::VecDeque<u32>) {
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return;
    };
    for t in tasks.flatten() {
        if let Ok(text) = std::fs::read_to_string(t.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|w| w.parse::<u32>().ok()),
            );
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

/// Asks the allocator to give the pages it holds free back to the system
/// (glibc's `malloc_trim(0)`: every arena, free chunks in the middle too). glibc
/// raises its threshold for mapping large blocks after one is freed, so the blocks
/// of a peer that sent large messages end up in an arena's heap and stay in the
/// process's memory after they are freed. Elsewhere than glibc, nothing.
pub(crate) fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `malloc_trim` takes a size and touches only the allocator's own
        // free lists, under its locks; any thread may call it at any time.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}

/// The size from which [`map_large_allocations`] has glibc map each block on its own.
pub const LARGE_ALLOCATION: usize = 1 << 20;

/// Has glibc map every allocation of [`LARGE_ALLOCATION`] bytes or more on its own
/// and unmap it when it is freed (`mallopt(M_MMAP_THRESHOLD)`), for a process whose
/// server takes large messages from its peers. Without it, glibc raises that
/// threshold to the size of the first mapped block freed (up to 32 MiB) and keeps
/// later blocks, once freed, in the heap of the thread that made them: a peer that
/// sent large messages and left would leave the server tens of MiB larger.
///
/// Process-wide: a launcher calls it from its `main` (`pmix-run` does), a library
/// in someone else's process never. Elsewhere than glibc it does nothing. Returns
/// whether the allocator took it.
pub fn map_large_allocations() -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: `mallopt` takes two integers and changes only the allocator's
        // parameters, under its lock.
        unsafe { libc::mallopt(libc::M_MMAP_THRESHOLD, LARGE_ALLOCATION as libc::c_int) == 1 }
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        false
    }
}

/// The process's effective uid and gid (`geteuid`, `getegid`).
pub fn effective_ids() -> (u32, u32) {
    // SAFETY: geteuid and getegid take no arguments, touch no memory of ours and
    // cannot fail.
    unsafe { (libc::geteuid(), libc::getegid()) }
}

/// This host's name as `gethostname` gives it, with the domain part removed (what
/// OpenPMIx uses when `PMIX_HOSTNAME` is not set); `localhost` when it cannot be read.
pub fn short_hostname() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: the pointer and length describe `buf`, which outlives the call;
    // gethostname writes at most that many bytes.
    let rc = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    if rc != 0 {
        return "localhost".to_owned();
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    let name = String::from_utf8_lossy(buf.get(..end).unwrap_or_default());
    match name.split('.').next() {
        Some(short) if !short.is_empty() => short.to_owned(),
        _ => "localhost".to_owned(),
    }
}

/// The variable that names, to a rank, the inherited end of its
/// [`Server::client_channel`](crate::Server::client_channel): `FD:PID`, the descriptor and the pid of the process
/// that made the pair (the launcher), which the client checks before using it.
pub const SERVER_FD_VAR: &str = "PMIX_RS_SERVER_FD";

/// The value of [`SERVER_FD_VAR`] for descriptor `fd` made by this process.
pub fn server_fd_value(fd: std::os::fd::RawFd) -> String {
    format!("{fd}:{}", std::process::id())
}

/// The seals a segment's memfd carries, all of them required by
/// [`Mapping::sealed`]: its size can neither shrink nor grow, nobody can write it
/// (through a descriptor or a new mapping), and no seal can be added or removed.
pub const SEGMENT_SEALS: libc::c_int =
    libc::F_SEAL_SHRINK | libc::F_SEAL_GROW | libc::F_SEAL_WRITE | libc::F_SEAL_SEAL;

fn invalid(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidInput, msg.into())
}

fn refused(msg: impl Into<String>) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, msg.into())
}

/// A memfd named `name` (what `/proc/PID/fd` shows: `/memfd:NAME`) holding `bytes`,
/// sealed with [`SEGMENT_SEALS`]: from then on nobody, its creator included, can
/// change it, so every process that maps it reads the same bytes for as long as
/// its mapping lives. The descriptor is close-on-exec (it is handed to a client
/// over a socket, never inherited); the memory goes when the last descriptor and
/// the last mapping are gone.
///
/// # Errors
/// A name holding a NUL, or the OS error of `memfd_create`, the write or the seal
/// (`EINVAL` where the kernel has no sealing).
pub fn seal_segment(name: &str, bytes: &[u8]) -> io::Result<std::os::fd::OwnedFd> {
    use std::io::Write;
    use std::os::fd::FromRawFd;
    let cname = std::ffi::CString::new(name).map_err(|_| invalid("a memfd name holding a NUL"))?;
    // SAFETY: `cname` is a NUL-terminated string that outlives the call; the flags
    // are the two the kernel defines for it.
    let fd =
        unsafe { libc::memfd_create(cname.as_ptr(), libc::MFD_CLOEXEC | libc::MFD_ALLOW_SEALING) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` was just returned by `memfd_create`, is open, and nothing else
    // owns it.
    let mut file = unsafe { std::fs::File::from_raw_fd(fd) };
    file.write_all(bytes)?;
    // SAFETY: plain fcntl on the descriptor `file` owns; it reads no memory of ours.
    if unsafe { libc::fcntl(fd, libc::F_ADD_SEALS, SEGMENT_SEALS) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(file.into())
}

/// Writes `bytes` to the file `dir/name`, which must not exist, for a node-store
/// segment handed over by path (where no memfd could be handed over): created
/// under a temporary name with mode 0600 (its owner alone may read it), written,
/// made read-only (0400), then linked under `name`, so a reader never sees it
/// half written and an existing file is never replaced. Returns its path. Removing
/// it later (`std::fs::remove_file`) leaves every mapping of it valid.
///
/// # Errors
/// A `name` that is not a plain file name; `AlreadyExists` when `dir/name` exists;
/// the OS error of any step (the temporary file is removed then).
pub fn write_segment_file(
    dir: &std::path::Path,
    name: &str,
    bytes: &[u8],
) -> io::Result<std::path::PathBuf> {
    use std::io::Write;
    use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
    if name.is_empty() || name == "." || name == ".." || name.contains(['/', '\0']) {
        return Err(invalid(format!("{name:?} is not a plain file name")));
    }
    let path = dir.join(name);
    let tmp = dir.join(format!(".{name}.{}.tmp", std::process::id()));
    let written = (|| {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .open(&tmp)?;
        f.write_all(bytes)?;
        f.set_permissions(std::fs::Permissions::from_mode(0o400))?;
        std::fs::hard_link(&tmp, &path)
    })();
    let removed = std::fs::remove_file(&tmp);
    written?;
    removed?;
    Ok(path)
}

/// A read-only shared mapping of a whole node-store segment (`mmap` with
/// `PROT_READ`, `MAP_SHARED`): its bytes, through `Deref<Target = [u8]>`, unmapped
/// when it is dropped. It holds no lock and no descriptor: a process killed while
/// reading leaves nothing behind, and the memory goes with the last mapping.
///
/// Its bytes cannot change while it lives: a memfd is mapped only with every seal of
/// [`SEGMENT_SEALS`] ([`Mapping::sealed`]), and a file only when nobody may write it
/// and no one but its owner, this process's user, may read it ([`Mapping::file`]).
/// (A file's owner can still make it writable again and rewrite or truncate it; a
/// process of that user can as well rewrite this process's memory, so that is no
/// weaker than the process itself.)
pub struct Mapping {
    map: SharedMap,
}

/// A shared mapping of the first `len` bytes of a file (`mmap` with `MAP_SHARED`, at
/// an address the kernel picks), unmapped when it is dropped: what a read-only
/// [`Mapping`] and the server's read-write ds21 files are made of.
pub(crate) struct SharedMap {
    ptr: std::ptr::NonNull<u8>,
    len: usize,
}

impl SharedMap {
    /// Maps `len` bytes of `fd` from its start, readable, and writable when
    /// `writable`.
    ///
    /// # Errors
    /// The OS error of `mmap`.
    pub(crate) fn new(
        fd: std::os::fd::BorrowedFd<'_>,
        len: usize,
        writable: bool,
    ) -> io::Result<SharedMap> {
        use std::os::fd::AsRawFd;
        let prot = if writable {
            libc::PROT_READ | libc::PROT_WRITE
        } else {
            libc::PROT_READ
        };
        // SAFETY: a new mapping at an address the kernel picks (nothing of ours is
        // replaced), of a descriptor that is open for the call; the kernel checks
        // the descriptor, its access mode and the length.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                prot,
                libc::MAP_SHARED,
                fd.as_raw_fd(),
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return Err(io::Error::last_os_error());
        }
        let ptr = std::ptr::NonNull::new(p.cast::<u8>())
            .ok_or_else(|| io::Error::other("mmap gave a null address"))?;
        Ok(SharedMap { ptr, len })
    }

    /// The mapping's first byte.
    pub(crate) fn as_ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    /// Its length.
    pub(crate) fn len(&self) -> usize {
        self.len
    }
}

impl Drop for SharedMap {
    fn drop(&mut self) {
        // SAFETY: `ptr` and `len` describe the mapping made by `new`, not unmapped
        // since; no borrow of it outlives `self` (its owners' borrows end first).
        unsafe {
            libc::munmap(self.ptr.as_ptr().cast(), self.len);
        }
    }
}

// SAFETY: the mapping is read-only memory that nothing in this process writes and
// that stays mapped until `drop`; sharing or moving the handle across threads only
// shares reads of immutable bytes.
unsafe impl Send for Mapping {}
// SAFETY: as for `Send`: `&Mapping` gives only `&[u8]` of immutable memory.
unsafe impl Sync for Mapping {}

impl Mapping {
    /// Maps the sealed memfd `fd` (a descriptor [`seal_segment`] made, here or in
    /// another process): refused unless it carries every seal of
    /// [`SEGMENT_SEALS`], so that nobody can write, shrink or grow it while it is
    /// mapped. The descriptor may be closed afterwards.
    ///
    /// # Errors
    /// `InvalidData` for a descriptor without those seals (a file, a pipe, an
    /// unsealed memfd) or of length 0; the OS error of `fcntl`, `fstat` or `mmap`.
    pub fn sealed(fd: std::os::fd::BorrowedFd<'_>) -> io::Result<Mapping> {
        use std::os::fd::AsRawFd;
        // SAFETY: plain fcntl on a borrowed, open descriptor; it reads no memory of
        // ours. A descriptor that cannot be sealed answers EINVAL.
        let seals = unsafe { libc::fcntl(fd.as_raw_fd(), libc::F_GET_SEALS) };
        if seals < 0 || seals & SEGMENT_SEALS != SEGMENT_SEALS {
            return Err(refused(format!(
                "the descriptor is not a sealed memfd (seals {seals:#x}, {SEGMENT_SEALS:#x} needed)"
            )));
        }
        // Sealed against shrinking and growing: the size read now is for good.
        let len = std::fs::File::from(fd.try_clone_to_owned()?)
            .metadata()?
            .len();
        Mapping::map(fd, len)
    }

    /// Maps the segment file at `path`: refused unless it is a regular file (not a
    /// link) owned by this process's effective user, that nobody may write and that
    /// nobody else may read (mode 0400, what [`write_segment_file`] leaves).
    ///
    /// # Errors
    /// `InvalidData` for a file that is not such a file or is empty; the OS error of
    /// `open`, `fstat` or `mmap`.
    pub fn file(path: &std::path::Path) -> io::Result<Mapping> {
        use std::os::fd::AsFd;
        use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
        let f = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
            .open(path)?;
        let meta = f.metadata()?;
        let (uid, _) = effective_ids();
        if !meta.file_type().is_file() || meta.uid() != uid || meta.mode() & 0o277 != 0 {
            return Err(refused(format!(
                "{}: not a segment file (a regular file of uid {uid} with mode 0400; found \
                 uid {} mode {:o})",
                path.display(),
                meta.uid(),
                meta.mode() & 0o7777
            )));
        }
        Mapping::map(f.as_fd(), meta.len())
    }

    fn map(fd: std::os::fd::BorrowedFd<'_>, len: u64) -> io::Result<Mapping> {
        let len = usize::try_from(len)
            .ok()
            .filter(|&l| l > 0 && l <= isize::MAX as usize)
            .ok_or_else(|| refused(format!("a segment of {len} bytes cannot be mapped")))?;
        Ok(Mapping {
            map: SharedMap::new(fd, len, false)?,
        })
    }
}

impl std::ops::Deref for Mapping {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        // SAFETY: the start of a live mapping of `len` readable bytes (made by
        // `map`, unmapped only when `self` is dropped, which `&self` excludes);
        // nothing writes them (the constructors' checks, the type's docs); `len`
        // fits `isize` (checked by `map`).
        unsafe { std::slice::from_raw_parts(self.map.as_ptr(), self.map.len()) }
    }
}

impl AsRef<[u8]> for Mapping {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl std::fmt::Debug for Mapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mapping")
            .field("len", &self.map.len())
            .finish()
    }
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
