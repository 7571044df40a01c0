//! How many lines the server's log holds about refused and malformed connections:
//! a peer that opens thousands of bad connections must not fill the launcher's
//! stderr with a line each.
//!
//! Lines are counted in *windows*: the first line opens a window of
//! [`LOG_INTERVAL`]; the first [`LOG_BURST`] lines of a window are printed, the
//! others only counted; when the window has passed, one summary line says how many
//! were left out (`… N more refused or closed connections in the last Ns`), and the
//! next line opens a new window. The summary is printed by the first line after the
//! window, by the progress thread's timer ([`LogLimiter::deadline`],
//! [`LogLimiter::tick`]) when no line comes, and at shutdown
//! ([`LogLimiter::finish`]), so every line left out is counted in exactly one
//! summary. Time is passed in: the limiter never reads a clock.

use std::time::{Duration, Instant};

/// How long one window of the log limiter lasts.
pub(crate) const LOG_INTERVAL: Duration = Duration::from_secs(10);

/// How many lines of one window are printed before the rest are only counted.
pub(crate) const LOG_BURST: u32 = 10;

/// The log limiter (module docs).
#[derive(Debug)]
pub(crate) struct LogLimiter {
    interval: Duration,
    burst: u32,
    /// When the current window opened; `None` before the first line and after a
    /// window was closed.
    opened: Option<Instant>,
    printed: u32,
    suppressed: u64,
}

impl LogLimiter {
    /// A limiter printing `burst` lines per `interval`.
    pub(crate) fn new(interval: Duration, burst: u32) -> LogLimiter {
        LogLimiter {
            interval,
            burst,
            opened: None,
            printed: 0,
            suppressed: 0,
        }
    }

    /// A line `text` comes at `now`: the lines to print, in order (the summary of
    /// the window that passed, if any, then `text` unless its window's burst is
    /// spent).
    pub(crate) fn line(&mut self, now: Instant, text: String) -> Vec<String> {
        let mut out: Vec<String> = self.tick(now).into_iter().collect();
        if self.opened.is_none() {
            self.opened = Some(now);
            self.printed = 0;
        }
        if self.printed < self.burst {
            self.printed += 1;
            out.push(text);
        } else {
            self.suppressed += 1;
        }
        out
    }

    /// When the current window's summary is due: `None` when nothing was left out
    /// (no summary needed).
    pub(crate) fn deadline(&self) -> Option<Instant> {
        match self.opened {
            Some(t) if self.suppressed > 0 => Some(t + self.interval),
            _ => None,
        }
    }

    /// The timer: at or after the window's end, closes it, with its summary when
    /// lines were left out.
    pub(crate) fn tick(&mut self, now: Instant) -> Option<String> {
        let opened = self.opened?;
        if now.saturating_duration_since(opened) < self.interval {
            return None;
        }
        self.close(now)
    }

    /// At shutdown: the summary of what the open window left out, whatever its age.
    pub(crate) fn finish(&mut self, now: Instant) -> Option<String> {
        self.opened?;
        self.close(now)
    }

    fn close(&mut self, now: Instant) -> Option<String> {
        let opened = self.opened.take()?;
        self.printed = 0;
        let n = std::mem::take(&mut self.suppressed);
        if n == 0 {
            return None;
        }
        // The span the summary covers: the window, or less when shut down early;
        // at least 1 s, rounded up.
        let span = now.saturating_duration_since(opened).min(self.interval);
        let secs = span.as_secs() + u64::from(span.subsec_nanos() > 0);
        Some(format!(
            "… {n} more refused or closed connections in the last {}s",
            secs.max(1)
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(i: u32) -> String {
        format!("refused connection {i}")
    }

    /// The number a summary line reports.
    fn count(summary: &str) -> u64 {
        summary
            .split_whitespace()
            .nth(1)
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no count in {summary:?}"))
    }

    #[test]
    fn the_first_lines_of_a_window_print_and_the_rest_are_summarized_once_it_passes() {
        let t0 = Instant::now();
        let mut l = LogLimiter::new(Duration::from_secs(10), 3);
        let mut printed = Vec::new();
        for i in 0..1000 {
            printed.extend(l.line(t0 + Duration::from_millis(u64::from(i)), text(i)));
        }
        assert_eq!(printed, vec![text(0), text(1), text(2)]);
        assert_eq!(l.deadline(), Some(t0 + Duration::from_secs(10)));
        assert_eq!(l.tick(t0 + Duration::from_millis(9_999)), None);
        let s = l.tick(t0 + Duration::from_secs(10)).expect("a summary");
        assert_eq!(
            s,
            "… 997 more refused or closed connections in the last 10s"
        );
        assert_eq!(count(&s), 997);
        // Once summarized, nothing more is due, and the next line opens a new window.
        assert_eq!(l.deadline(), None);
        assert_eq!(l.tick(t0 + Duration::from_secs(60)), None);
        assert_eq!(l.line(t0 + Duration::from_secs(61), text(7)), vec![text(7)]);
    }

    #[test]
    fn a_line_after_the_window_prints_its_summary_first() {
        let t0 = Instant::now();
        let mut l = LogLimiter::new(Duration::from_secs(5), 1);
        assert_eq!(l.line(t0, text(0)), vec![text(0)]);
        assert!(l.line(t0, text(1)).is_empty());
        assert!(l.line(t0 + Duration::from_secs(4), text(2)).is_empty());
        let out = l.line(t0 + Duration::from_secs(6), text(3));
        assert_eq!(
            out,
            vec![
                "… 2 more refused or closed connections in the last 5s".to_owned(),
                text(3)
            ]
        );
    }

    #[test]
    fn a_window_with_nothing_left_out_needs_no_summary() {
        let t0 = Instant::now();
        let mut l = LogLimiter::new(Duration::from_secs(5), 2);
        assert_eq!(l.line(t0, text(0)), vec![text(0)]);
        assert_eq!(l.line(t0, text(1)), vec![text(1)]);
        assert_eq!(l.deadline(), None);
        assert_eq!(l.tick(t0 + Duration::from_secs(5)), None);
        assert_eq!(l.finish(t0 + Duration::from_secs(9)), None);
    }

    #[test]
    fn shutdown_summarizes_what_the_open_window_left_out() {
        let t0 = Instant::now();
        let mut l = LogLimiter::new(Duration::from_secs(10), 2);
        for i in 0..5 {
            l.line(t0, text(i));
        }
        let s = l
            .finish(t0 + Duration::from_millis(1_500))
            .expect("a summary");
        assert_eq!(s, "… 3 more refused or closed connections in the last 2s");
        assert_eq!(l.finish(t0 + Duration::from_secs(3)), None);
    }

    #[test]
    fn every_line_is_printed_or_counted_in_exactly_one_summary() {
        // Lines at irregular times over a minute: printed + summarized = sent.
        let t0 = Instant::now();
        let mut l = LogLimiter::new(Duration::from_secs(3), 4);
        let (mut printed, mut summarized, mut sent) = (0u64, 0u64, 0u64);
        let mut ms = 0u64;
        for i in 0..5000u32 {
            ms += u64::from(i * 7919 % 31);
            let now = t0 + Duration::from_millis(ms);
            if i % 97 == 0
                && let Some(s) = l.tick(now)
            {
                summarized += count(&s);
            }
            for out in l.line(now, text(i)) {
                if out.starts_with('…') {
                    summarized += count(&out);
                } else {
                    printed += 1;
                }
            }
            sent += 1;
        }
        if let Some(s) = l.finish(t0 + Duration::from_millis(ms)) {
            summarized += count(&s);
        }
        assert_eq!(printed + summarized, sent);
        // A minute and a half of lines at 4 per 3 s window: about 120 printed.
        assert!(printed <= 4 * (ms / 3000 + 1), "{printed} in {ms} ms");
    }
}
