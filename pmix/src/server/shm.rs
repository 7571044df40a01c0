//! OpenPMIx's ds21 store on this node (docs/serving.md §5.7): the files of one
//! namespace in a directory of the server's own, which libpmix2 clients map, and
//! the process-shared mutexes of its lock segment. The bytes are
//! [`pmix_wire::ds21`]'s; this file creates the files, writes the writer's
//! patches into them while it holds every reader's lock, and makes the mutexes
//! **robust**: a reader that dies holding one costs the writer `EOWNERDEAD`, which
//! it repairs, never a hang (OpenPMIx's own are not, and a reader killed mid-read
//! blocks its server for ever).

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::Duration;

use pmix_wire::ds21::{self, Ds21File, Patch};

/// How long the writer waits for one reader's lock before it gives the write up
/// (a reader stopped, not dead, holding it): the store is then left as it is and
/// written no more, its readers' gets of later values going by message.
const LOCK_WAIT: Duration = Duration::from_secs(2);

/// The ds21 files of one namespace, each mapped read-write: a batch is copied in
/// while the readers wait, with no system call.
pub(crate) struct Ds21Store {
    dir: PathBuf,
    nspace: String,
    initial: Region,
    metas: Vec<Region>,
    datas: Vec<Region>,
    locks: Locks,
    /// A write gave up on a lock: nothing more is written.
    stuck: bool,
}

/// A file mapped read-write and shared, whole.
struct Region {
    map: crate::os::SharedMap,
}

// SAFETY: shared memory its owner's thread accesses only by `Region::write`, under
// the store's locks, or (the lock segment) by pthread calls on its mutexes, which
// are made for use from any thread and process; the handle moves with the store.
unsafe impl Send for Region {}

impl Region {
    /// `file` (of `len` bytes) mapped read-write, shared.
    fn map(file: &File, len: usize) -> io::Result<Region> {
        use std::os::fd::AsFd;
        Ok(Region {
            map: crate::os::SharedMap::new(file.as_fd(), len, true)?,
        })
    }

    /// The mapping's first byte.
    fn ptr(&self) -> *mut u8 {
        self.map.as_ptr()
    }

    /// Copies `bytes` in at `at`.
    ///
    /// # Errors
    /// `InvalidInput` when they would pass the region's end.
    fn write(&self, at: usize, bytes: &[u8]) -> io::Result<()> {
        if at
            .checked_add(bytes.len())
            .is_none_or(|end| end > self.map.len())
        {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a ds21 patch past its file's end",
            ));
        }
        // SAFETY: `at + bytes.len()` lies inside the live mapping (checked above);
        // `bytes` is our own memory, not the mapping's; readers in other processes
        // read it only under the locks the caller holds.
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr().add(at), bytes.len());
        }
        Ok(())
    }
}

/// A new segment file of `len` zero bytes (sparse), mapped.
fn segment(path: &Path, len: usize) -> io::Result<Region> {
    Region::map(&create(path, len as u64)?, len)
}

fn create(path: &Path, len: u64) -> io::Result<File> {
    let f = OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_CLOEXEC | libc::O_NOFOLLOW)
        .open(path)?;
    f.set_len(len)?;
    Ok(f)
}

impl Ds21Store {
    /// Creates `dir` (mode 0700; it must not exist) and, in it, `nspace`'s lock
    /// segment for `locks` clients, its initial segment and its first meta and data
    /// segments (sparse, zero), owned by this process's user, readable (and the
    /// lock segment writable) by it alone.
    ///
    /// # Errors
    /// A namespace the store cannot name; the OS error of any step (what was
    /// created is removed).
    pub(crate) fn create(dir: &Path, nspace: &str, locks: u32) -> io::Result<Ds21Store> {
        let initial = ds21::initial_segment(nspace)
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e.to_string()))?;
        {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new().mode(0o700).create(dir)?;
        }
        let made = (|| {
            let locks = Locks::create(&dir.join(ds21::lock_file(nspace)), locks.max(1))?;
            let meta = segment(&dir.join(ds21::meta_file(nspace, 0)), ds21::META_SEG_SIZE)?;
            let data = segment(&dir.join(ds21::data_file(nspace, 0)), ds21::DATA_SEG_SIZE)?;
            // The initial segment last: a client that finds it finds the rest.
            let init = create(&dir.join(ds21::INITIAL_FILE), initial.len() as u64)?;
            init.write_all_at(&initial, 0)?;
            Ok(Ds21Store {
                dir: dir.to_path_buf(),
                nspace: nspace.to_owned(),
                initial: Region::map(&init, initial.len())?,
                metas: vec![meta],
                datas: vec![data],
                locks,
                stuck: false,
            })
        })();
        if made.is_err() {
            let _ = std::fs::remove_dir_all(dir);
        }
        made
    }

    /// The directory (what the namespace's clients get as
    /// `PMIX_DSTORE_21_BASE_PATH`).
    pub(crate) fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `patches` while holding every reader's lock (segments they name that
    /// do not exist yet are created first).
    ///
    /// # Errors
    /// The OS error of a write; `TimedOut` when a reader's lock was held past
    /// [`LOCK_WAIT`] (the store is written no more after that).
    pub(crate) fn write(&mut self, patches: &[Patch]) -> io::Result<()> {
        if self.stuck {
            return Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "the store was given up",
            ));
        }
        if patches.is_empty() {
            return Ok(());
        }
        // New segments, whole and zero, before anything names them.
        for p in patches {
            match p.file {
                Ds21File::Meta(k) => {
                    while self.metas.len() <= k as usize {
                        let n = self.metas.len() as u32;
                        let path = self.dir.join(ds21::meta_file(&self.nspace, n));
                        self.metas.push(segment(&path, ds21::META_SEG_SIZE)?);
                    }
                }
                Ds21File::Data(k) => {
                    while self.datas.len() <= k as usize {
                        let n = self.datas.len() as u32;
                        let path = self.dir.join(ds21::data_file(&self.nspace, n));
                        self.datas.push(segment(&path, ds21::DATA_SEG_SIZE)?);
                    }
                }
                Ds21File::Initial => {}
            }
        }
        let hold = match self.locks.hold() {
            Ok(h) => h,
            Err(e) => {
                self.stuck = true;
                return Err(e);
            }
        };
        let mut result = Ok(());
        for p in patches {
            let f = match p.file {
                Ds21File::Initial => &self.initial,
                Ds21File::Meta(k) => &self.metas[k as usize],
                Ds21File::Data(k) => &self.datas[k as usize],
            };
            if let Err(e) = f.write(p.at, &p.bytes) {
                result = Err(e);
                break;
            }
        }
        drop(hold);
        result
    }
}

impl std::fmt::Debug for Ds21Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ds21Store")
            .field("dir", &self.dir)
            .field("nspace", &self.nspace)
            .finish()
    }
}

/// The lock segment, mapped read-write: `2 * n` robust process-shared mutexes.
struct Locks {
    map: Region,
    n: usize,
    first: usize,
}

impl Locks {
    /// Creates the lock segment at `path` for `n` clients: its header, zero slots,
    /// and `2 * n` mutexes initialized process-shared and robust.
    fn create(path: &Path, n: u32) -> io::Result<Locks> {
        // SAFETY: sysconf reads a constant of the system.
        let page = usize::try_from(unsafe { libc::sysconf(libc::_SC_PAGESIZE) }).unwrap_or(4096);
        let (len, first) = ds21::lock_layout(n, page);
        let f = create(path, len as u64)?;
        f.write_all_at(&ds21::lock_header(n, page), 0)?;
        let locks = Locks {
            map: Region::map(&f, len)?,
            n: n as usize,
            first,
        };
        // SAFETY: a zeroed attribute object is initialized by pthread_mutexattr_init
        // before any other use, and destroyed after.
        let mut attr: libc::pthread_mutexattr_t = unsafe { std::mem::zeroed() };
        // SAFETY: `attr` is ours, on the stack; the calls only set its fields.
        let rc = unsafe {
            let mut rc = libc::pthread_mutexattr_init(&mut attr);
            if rc == 0 {
                rc = libc::pthread_mutexattr_setpshared(&mut attr, libc::PTHREAD_PROCESS_SHARED);
            }
            if rc == 0 {
                rc = libc::pthread_mutexattr_setrobust(&mut attr, libc::PTHREAD_MUTEX_ROBUST);
            }
            rc
        };
        let mut rc = rc;
        for j in 0..2 * locks.n {
            if rc != 0 {
                break;
            }
            // SAFETY: `mutex(j)` lies inside the mapping (lock_layout sizes it for
            // 2n mutexes `MUTEX_STRIDE` apart, each smaller than the stride), is
            // aligned (the stride and `first` are multiples of 64, the mapping of a
            // page), and nobody else maps the file yet.
            rc = unsafe { libc::pthread_mutex_init(locks.mutex(j), &attr) };
        }
        // SAFETY: `attr` was initialized above (or the init failed and destroy is
        // a no-op on its zeroed bytes).
        unsafe { libc::pthread_mutexattr_destroy(&mut attr) };
        if rc != 0 {
            return Err(io::Error::from_raw_os_error(rc));
        }
        Ok(locks)
    }

    /// Mutex `j` (`0 .. 2n`).
    fn mutex(&self, j: usize) -> *mut libc::pthread_mutex_t {
        debug_assert!(j < 2 * self.n);
        // SAFETY: the offset is inside the mapping (`j < 2n`, laid out by
        // `Locks::create` for 2n mutexes `MUTEX_STRIDE` apart from `first`).
        unsafe {
            self.map
                .ptr()
                .add(self.first + ds21::MUTEX_STRIDE * j)
                .cast()
        }
    }

    /// Takes mutex `j`, waiting at most [`LOCK_WAIT`]; a mutex whose owner died is
    /// made consistent and taken.
    fn lock(&self, j: usize) -> io::Result<()> {
        let mut now: libc::timespec = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes the timespec we own.
        unsafe { libc::clock_gettime(libc::CLOCK_REALTIME, &mut now) };
        let deadline = libc::timespec {
            tv_sec: now.tv_sec + LOCK_WAIT.as_secs() as libc::time_t,
            tv_nsec: now.tv_nsec,
        };
        // SAFETY: mutex `j` was initialized by `create` and lives as long as `self`.
        let rc = unsafe { libc::pthread_mutex_timedlock(self.mutex(j), &deadline) };
        match rc {
            0 => Ok(()),
            libc::EOWNERDEAD => {
                // SAFETY: we hold it now (EOWNERDEAD hands it over); marking it
                // consistent is what its new owner must do.
                unsafe { libc::pthread_mutex_consistent(self.mutex(j)) };
                Ok(())
            }
            e => Err(io::Error::from_raw_os_error(e)),
        }
    }

    fn unlock(&self, j: usize) {
        // SAFETY: called only for a mutex this thread took in `hold`.
        unsafe { libc::pthread_mutex_unlock(self.mutex(j)) };
    }

    /// Every reader's two mutexes, as OpenPMIx's writer takes them: every even
    /// one, then every odd one. Released when the hold is dropped.
    fn hold(&self) -> io::Result<Hold<'_>> {
        let order: Vec<usize> = (0..self.n)
            .map(|i| 2 * i)
            .chain((0..self.n).map(|i| 2 * i + 1))
            .collect();
        let mut taken = Vec::with_capacity(order.len());
        for j in order {
            if let Err(e) = self.lock(j) {
                for &t in taken.iter().rev() {
                    self.unlock(t);
                }
                return Err(e);
            }
            taken.push(j);
        }
        Ok(Hold { locks: self })
    }
}

/// Every mutex of a lock segment, held.
struct Hold<'a> {
    locks: &'a Locks,
}

impl Drop for Hold<'_> {
    fn drop(&mut self) {
        for i in 0..self.locks.n {
            self.locks.unlock(2 * i);
            self.locks.unlock(2 * i + 1);
        }
    }
}
