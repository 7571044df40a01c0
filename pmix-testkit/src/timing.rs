//! What the benches' C timing clients print, read back: rank 0's lines
//! `timing NAME MEDIAN_US P90_US`, and on failure a line with `FAIL` or `error`.

use std::process::Output;

/// The medians of `measures`, in that order, from a finished timing run `out`.
///
/// # Errors
/// When the run failed or a measure is missing: its exit code and the first line
/// of its stdout or stderr naming `FAIL` or `error` (else "no timing lines").
pub fn medians(out: &Output, measures: &[&str]) -> Result<Vec<f64>, String> {
    let text = String::from_utf8_lossy(&out.stdout);
    let median = |m: &str| {
        text.lines()
            .filter_map(|l| l.strip_prefix("timing "))
            .find_map(|l| {
                let mut f = l.split_whitespace();
                (f.next() == Some(m)).then(|| f.next()?.parse::<f64>().ok())?
            })
    };
    match measures
        .iter()
        .map(|m| median(m))
        .collect::<Option<Vec<f64>>>()
    {
        Some(v) if out.status.success() => Ok(v),
        _ => {
            let err = String::from_utf8_lossy(&out.stderr);
            let why = text
                .lines()
                .chain(err.lines())
                .find(|l| l.contains("FAIL") || l.contains("error"))
                .unwrap_or("no timing lines")
                .to_owned();
            Err(format!("exit {:?}: {why}", out.status.code()))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;
    use std::process::ExitStatus;

    fn output(code: i32, stdout: &str, stderr: &str) -> Output {
        Output {
            status: ExitStatus::from_raw(code << 8),
            stdout: stdout.as_bytes().to_vec(),
            stderr: stderr.as_bytes().to_vec(),
        }
    }

    #[test]
    fn medians_come_in_the_order_asked_and_a_failure_names_its_line() {
        let ok = output(0, "x\ntiming b 2.5 9\ntiming a 1.0 3\n", "");
        assert_eq!(medians(&ok, &["a", "b"]), Ok(vec![1.0, 2.5]));
        assert_eq!(
            medians(&ok, &["a", "c"]),
            Err("exit Some(0): no timing lines".to_owned())
        );
        let bad = output(1, "timing FAIL rank 3: PMIx_Get: -46\n", "");
        assert_eq!(
            medians(&bad, &["a"]),
            Err("exit Some(1): timing FAIL rank 3: PMIx_Get: -46".to_owned())
        );
    }
}
