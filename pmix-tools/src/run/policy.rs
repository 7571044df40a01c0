//! The job's exit status (the rule): the status of the first `PMIx_Abort`,
//! else the first non-zero end of a rank in the order pmix-run saw them (a rank killed
//! by signal SIG counts as 128+SIG, as shells say), else 0. A job ended by `--timeout`
//! exits [`EXIT_TIMEOUT`] (124, as `timeout(1)`), whatever its ranks did. Ranks that
//! pmix-run itself killed (after the grace period, or at the timeout) never decide the
//! status: the failure that made it kill them does.

use std::process::ExitStatus;

/// Exit status of a job ended by `--timeout` (as `timeout(1)`).
pub const EXIT_TIMEOUT: i32 = 124;

/// How a rank ended, as the kernel said.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RankEnd {
    /// It exited with this status (0–255).
    Exited(i32),
    /// A signal ended it.
    Signaled(i32),
}

impl RankEnd {
    /// The end an [`ExitStatus`] reports (a status with neither code nor signal, which
    /// Linux never reports for an ended child, counts as exit 1).
    pub fn of(status: ExitStatus) -> RankEnd {
        use std::os::unix::process::ExitStatusExt;
        match (status.code(), status.signal()) {
            (Some(c), _) => RankEnd::Exited(c),
            (None, Some(s)) => RankEnd::Signaled(s),
            (None, None) => RankEnd::Exited(1),
        }
    }

    /// The status a shell would report: the exit status, or 128 + the signal.
    pub fn code(self) -> i32 {
        match self {
            RankEnd::Exited(c) => c,
            RankEnd::Signaled(s) => 128 + s,
        }
    }

    /// The status the server is told ([`super::job::JobServer::proc_exited`]): the
    /// exit status, or minus the signal.
    pub fn status(self) -> i32 {
        match self {
            RankEnd::Exited(c) => c,
            RankEnd::Signaled(s) => -s,
        }
    }

    /// One line's worth of words: `exited with status 1`, `was killed by signal 9
    /// (SIGKILL)`.
    pub fn describe(self) -> String {
        match self {
            RankEnd::Exited(c) => format!("exited with status {c}"),
            RankEnd::Signaled(s) => match signal_name(s) {
                Some(name) => format!("was killed by signal {s} ({name})"),
                None => format!("was killed by signal {s}"),
            },
        }
    }
}

/// The name of the common signals.
pub fn signal_name(sig: i32) -> Option<&'static str> {
    use signal_hook::consts::signal::*;
    Some(match sig {
        SIGHUP => "SIGHUP",
        SIGINT => "SIGINT",
        SIGQUIT => "SIGQUIT",
        SIGILL => "SIGILL",
        SIGABRT => "SIGABRT",
        SIGBUS => "SIGBUS",
        SIGFPE => "SIGFPE",
        SIGKILL => "SIGKILL",
        SIGSEGV => "SIGSEGV",
        SIGPIPE => "SIGPIPE",
        SIGTERM => "SIGTERM",
        _ => return None,
    })
}

/// What decides the job's exit status, gathered as the job runs.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Verdict {
    abort: Option<i32>,
    first_failure: Option<i32>,
    timed_out: bool,
}

impl Verdict {
    /// A rank called `PMIx_Abort` with `status` (only the first counts).
    pub fn aborted(&mut self, status: i32) {
        self.abort.get_or_insert(status);
    }

    /// A rank ended; `killed_by_us` when pmix-run had killed it.
    pub fn rank_ended(&mut self, end: RankEnd, killed_by_us: bool) {
        if !killed_by_us && end.code() != 0 {
            self.first_failure.get_or_insert(end.code());
        }
    }

    /// `--timeout` ended the job.
    pub fn timed_out(&mut self) {
        self.timed_out = true;
    }

    /// Whether `--timeout` ended the job.
    pub fn is_timed_out(&self) -> bool {
        self.timed_out
    }

    /// The exit status of pmix-run. An abort status outside 0–255 (a PMIx status is
    /// any `int`) exits 1, since a process cannot exit with it.
    pub fn code(&self) -> i32 {
        if self.timed_out {
            return EXIT_TIMEOUT;
        }
        match (self.abort, self.first_failure) {
            (Some(s), _) if (0..=255).contains(&s) => s,
            (Some(_), _) => 1,
            (None, Some(c)) => c,
            (None, None) => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use signal_hook::consts::signal::{SIGKILL, SIGSEGV};

    #[test]
    fn all_zero_is_zero() {
        let mut v = Verdict::default();
        v.rank_ended(RankEnd::Exited(0), false);
        v.rank_ended(RankEnd::Exited(0), false);
        assert_eq!(v.code(), 0);
    }

    #[test]
    fn the_first_non_zero_end_decides_and_a_signal_is_128_plus() {
        let mut v = Verdict::default();
        v.rank_ended(RankEnd::Exited(0), false);
        v.rank_ended(RankEnd::Signaled(SIGSEGV), false);
        v.rank_ended(RankEnd::Exited(3), false);
        assert_eq!(v.code(), 128 + SIGSEGV);
    }

    #[test]
    fn an_abort_status_wins_and_ranks_we_killed_never_count() {
        let mut v = Verdict::default();
        v.rank_ended(RankEnd::Signaled(SIGKILL), true);
        assert_eq!(v.code(), 0);
        v.rank_ended(RankEnd::Exited(1), false);
        v.aborted(42);
        v.aborted(7);
        assert_eq!(v.code(), 42);
        let mut w = Verdict::default();
        w.aborted(-1);
        assert_eq!(w.code(), 1);
    }

    #[test]
    fn a_timeout_is_124() {
        let mut v = Verdict::default();
        v.aborted(3);
        v.timed_out();
        assert_eq!(v.code(), EXIT_TIMEOUT);
    }

    #[test]
    fn ends_are_described_in_words() {
        assert_eq!(RankEnd::Exited(1).describe(), "exited with status 1");
        assert_eq!(
            RankEnd::Signaled(9).describe(),
            "was killed by signal 9 (SIGKILL)"
        );
        assert_eq!(RankEnd::Signaled(9).code(), 137);
    }
}
