#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) alone for a fixed time, one after the
# other, and prints per target: runs, runs/s, crashes, and the 1-minute load average
# when it finished (the numbers mean little on a loaded machine).
#
#   fuzz/throughput.sh [--check] [--min RATE] [--sanitizer S] [SECONDS] [TARGET...] [-- LIBFUZZER_ARGS...]
#
# SECONDS (default 30) is libFuzzer's -max_total_time. Each target runs with
# `cargo +nightly fuzz run` over its corpus (fuzz/corpus/TARGET, which grows as it
# finds new coverage) and -rss_limit_mb=2048; arguments after `--` go to libFuzzer.
# runs/s is libFuzzer's final `Done N runs in S second(s)` line (S includes loading
# the corpus); a run that stopped early (a crash, a leak, an out-of-memory or a
# timeout) has no such line: its runs come from the last status line, and it counts
# as one crash, with the input libFuzzer saved under fuzz/artifacts/TARGET/.
#
# Exit status: 1 when a target crashed; with --check also when a target ran fewer
# than RATE runs/s (default 10000); 2 on a usage or build error.
# --sanitizer is cargo-fuzz's (address, the default, or none, ...).
# Logs: fuzz/target/throughput/TARGET.log.
set -uo pipefail
cd "$(dirname "$0")"

check=0
min=10000
secs=30
san=()
targets=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1 ;;
    --min) min="$2"; shift ;;
    --sanitizer) san=(--sanitizer "$2"); shift ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "throughput.sh: unknown option $1" >&2; exit 2 ;;
    *)
      if [[ "$1" =~ ^[0-9]+$ ]]; then secs="$1"; else targets+=("$1"); fi ;;
  esac
  shift
done

cargo +nightly fuzz build "${san[@]}" >/dev/null 2>&1 || {
  echo "throughput.sh: cargo +nightly fuzz build ${san[*]} failed" >&2
  cargo +nightly fuzz build "${san[@]}" 2>&1 | tail -20 >&2
  exit 2
}
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi

logs=target/throughput
mkdir -p "$logs"
status=0
printf '%-12s %10s %6s %9s %8s %6s  %s\n' target runs secs runs/s crashes load note
for t in "${targets[@]}"; do
  mkdir -p "corpus/$t"
  log="$logs/$t.log"
  cargo +nightly fuzz run "${san[@]}" "$t" -- \
    -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 "${extra[@]}" \
    >"$log" 2>&1
  rc=$?
  load=$(cut -d' ' -f1 /proc/loadavg)
  # "Done 123456 runs in 30 second(s)"
  done_line=$(grep -E '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1)
  note=""
  if [ -n "$done_line" ]; then
    runs=$(awk '{print $2}' <<<"$done_line")
    took=$(awk '{print $5}' <<<"$done_line")
  else
    # "#123456	NEW    cov: ... exec/s: 880 rss: 51Mb" (or pulse/REDUCE/...).
    runs=$(grep -aoE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    runs=${runs:-0}
    took=$secs
    note="stopped early"
  fi
  rate=$(awk -v r="$runs" -v s="$took" 'BEGIN { printf "%d", (s > 0 ? r / s : r) }')
  crashes=0
  if [ $rc -ne 0 ] || [ -z "$done_line" ]; then
    crashes=1
    status=1
    art=$(grep -aoE 'Test unit written to [^ ]+' "$log" | tail -1 | awk '{print $5}')
    why=$(grep -aE '^==[0-9]+== ERROR|^SUMMARY|panicked at|ERROR: libFuzzer' "$log" | head -1)
    note="rc=$rc ${why:-no summary} ${art:+input: $art} log: fuzz/$log"
  elif [ "$check" -eq 1 ] && [ "$rate" -lt "$min" ]; then
    status=1
    note="below $min runs/s"
  fi
  printf '%-12s %10s %6s %9s %8s %6s  %s\n' "$t" "$runs" "$took" "$rate" "$crashes" "$load" "$note"
done
exit $status
