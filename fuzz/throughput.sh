#!/usr/bin/env bash
# Runs every fuzz target (or the ones named) for a fixed time and prints per target:
# runs, seconds, runs/s, runs per CPU-second, crashes, and the 1-minute load average
# when it finished (on a loaded machine runs/s says more about the load than the
# target; runs per CPU-second much less so).
#
#   fuzz/throughput.sh [--check] [--min RATE] [--jobs N] [--defaults] [SECONDS] [TARGET...] [-- LIBFUZZER_ARGS...]
#
# SECONDS (default 30) is libFuzzer's -max_total_time. Each target runs over its
# corpus (fuzz/corpus/TARGET, which grows as it finds new coverage) with
# -rss_limit_mb=2048, exactly as `cargo +nightly fuzz run FLAGS TARGET` would; the
# arguments after `--` go to libFuzzer. Targets run one at a time, or N at a time
# with --jobs N (each then gets less of the machine).
#
# Build flags (FLAGS below; the script prints the command line of each run):
# every target is built with `--sanitizer none`: the fuzzed crates are safe Rust
# (`#![forbid(unsafe_code)]`), AddressSanitizer finds nothing there and halves the
# speed; debug assertions and overflow checks stay on (cargo-fuzz's default). The
# state-machine targets are also built with `--no-trace-compares`: their inputs are
# derived `Arbitrary` operations, whose every value (an index taken modulo, a
# variant) is reached by plain mutation, and comparison tracing took three quarters
# of their time. --defaults builds and runs everything with cargo-fuzz's defaults
# instead (AddressSanitizer and comparison tracing, what `cargo fuzz run TARGET`
# does, in fuzz/target). Each other set of flags has its own target directory,
# fuzz/target/<flags>.
#
# runs/s is libFuzzer's final `Done N runs in S second(s)` line (S includes loading
# the corpus). A run that stopped early (a crash, a leak, out of memory, a timeout)
# has no such line: its runs come from the last status line, and it counts as one
# crash, with the input libFuzzer saved under fuzz/artifacts/TARGET/.
#
# Exit status: 1 when a target crashed; with --check also when a target ran fewer
# than RATE runs/s (default 10000); 2 on a usage or build error.
# Logs: fuzz/target/throughput/TARGET.log.
set -uo pipefail
cd "$(dirname "$0")"

# The flags each target is built and run with (see above).
declare -A FLAGS=(
  [distances]="--sanitizer none"
  [hwloc_xml]="--sanitizer none"
  [sysfs]="--sanitizer none --no-trace-compares"
  [group_ops]="--sanitizer none --no-trace-compares"
  [ftstate_ops]="--sanitizer none --no-trace-compares"
  [wire_decode]="--sanitizer none"
  [wire_roundtrip]="--sanitizer none --no-trace-compares"
  [ft_contribution]="--sanitizer none"
)
triple=x86_64-unknown-linux-gnu

check=0
min=10000
secs=30
jobs=1
defaults=0
targets=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1 ;;
    --min) min="$2"; shift ;;
    --jobs) jobs="$2"; shift ;;
    --defaults) defaults=1 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) sed -n '2,37p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "throughput.sh: unknown option $1" >&2; exit 2 ;;
    *)
      if [[ "$1" =~ ^[0-9]+$ ]]; then secs="$1"; else targets+=("$1"); fi ;;
  esac
  shift
done

if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi

# flags_of TARGET: its cargo-fuzz flags, with the target directory for them.
flags_of() {
  local f=""
  [ "$defaults" -eq 1 ] || f="${FLAGS[$1]:-}"
  local dir=target
  [ -z "$f" ] || dir=target/$(sed -e 's/--//g' -e 's/ /_/g' <<<"$f")
  echo "$f --target-dir $dir"
}

# Build every target (grouped by flags, so each directory builds once).
for t in "${targets[@]}"; do
  f=$(flags_of "$t")
  # shellcheck disable=SC2086
  if ! out=$(cargo +nightly fuzz build $f "$t" 2>&1); then
    echo "throughput.sh: cargo +nightly fuzz build $f $t failed:" >&2
    tail -20 <<<"$out" >&2
    exit 2
  fi
done

logs=target/throughput
mkdir -p "$logs"

# run_one TARGET: runs it, writes its result line to $logs/TARGET.result.
run_one() {
  local t=$1 f dir log rc
  f=$(flags_of "$t")
  dir=${f##*--target-dir }
  log="$logs/$t.log"
  mkdir -p "corpus/$t" "artifacts/$t"
  {
    echo "cargo +nightly fuzz run $f $t -- -max_total_time=$secs -rss_limit_mb=2048 ${extra[*]}"
  } >"$log"
  local TIMEFORMAT='%R %U %S'
  local times
  times=$( { time "$dir/$triple/release/$t" -artifact_prefix="artifacts/$t/" \
    -max_total_time="$secs" -rss_limit_mb=2048 -print_final_stats=1 "${extra[@]}" \
    "corpus/$t" >>"$log" 2>&1; echo "rc $?" >"$logs/$t.rc"; } 2>&1 )
  rc=$(awk '{print $2}' "$logs/$t.rc")
  local load cpu done_line runs took note="" crashes=0 rate cpurate
  load=$(cut -d' ' -f1 /proc/loadavg)
  cpu=$(awk '{printf "%.2f", $2 + $3}' <<<"$times")
  # "Done 123456 runs in 30 second(s)"
  done_line=$(grep -aE '^Done [0-9]+ runs in [0-9]+ second' "$log" | tail -1)
  if [ -n "$done_line" ]; then
    runs=$(awk '{print $2}' <<<"$done_line")
    took=$(awk '{print $5}' <<<"$done_line")
  else
    # "#123456	NEW    cov: ... exec/s: 880 rss: 51Mb" (or pulse, REDUCE, ...).
    runs=$(grep -aoE '^#[0-9]+' "$log" | tail -1 | tr -d '#')
    runs=${runs:-0}
    took=$(awk '{printf "%d", $1}' <<<"$times")
  fi
  rate=$(awk -v r="$runs" -v s="$took" 'BEGIN { printf "%d", (s > 0 ? r / s : r) }')
  cpurate=$(awk -v r="$runs" -v s="$cpu" 'BEGIN { printf "%d", (s > 0 ? r / s : r) }')
  if [ "$rc" -ne 0 ] || [ -z "$done_line" ]; then
    crashes=1
    local art why
    art=$(grep -aoE 'Test unit written to [^ ]+' "$log" | tail -1 | awk '{print $5}')
    why=$(grep -aE '^==[0-9]+== ERROR|^SUMMARY|panicked at|ERROR: libFuzzer' "$log" | head -1)
    note="rc=$rc ${why:-no summary}${art:+ input: fuzz/$art} log: fuzz/$log"
  elif [ "$check" -eq 1 ] && [ "$rate" -lt "$min" ]; then
    note="below $min runs/s"
  fi
  printf '%-12s %11s %6s %9s %10s %8s %6s  %s\n' \
    "$t" "$runs" "$took" "$rate" "$cpurate" "$crashes" "$load" "$note" >"$logs/$t.result"
}

printf '%-12s %11s %6s %9s %10s %8s %6s  %s\n' target runs secs runs/s runs/cpu-s crashes load note
running=0
for t in "${targets[@]}"; do
  rm -f "$logs/$t.result"
  if [ "$jobs" -le 1 ]; then
    run_one "$t"
    cat "$logs/$t.result"
  else
    run_one "$t" &
    running=$((running + 1))
    if [ "$running" -ge "$jobs" ]; then
      wait -n
      running=$((running - 1))
    fi
  fi
done
wait
status=0
for t in "${targets[@]}"; do
  r="$logs/$t.result"
  [ "$jobs" -le 1 ] || cat "$r"
  if grep -q ' rc=' "$r"; then
    status=1
  elif [ "$check" -eq 1 ] && grep -q 'below ' "$r"; then
    status=1
  fi
done
echo "($(uptime | sed 's/.*load/load/'); flags: $([ "$defaults" -eq 1 ] && echo "cargo-fuzz defaults" || echo "per target, see $logs/TARGET.log"))"
exit $status
