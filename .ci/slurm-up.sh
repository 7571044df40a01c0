#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the tests that run C programs under
# `srun --mpi=pmix` (pmix-tools/tests/run_slurm.rs). Run as root; idempotent: a
# second run with the daemons up only checks them (and restarts them if the
# configuration it writes changed).
#
# Debian 12's slurm-wlm 22.05 and munge, no systemd needed (the daemons are started
# directly). Plugins that need neither cgroups nor accounting: proctrack/linuxproc,
# task/none, no accounting storage. `SlurmdParameters=config_overrides` lets the node
# declare 8 CPUs on a smaller machine.
#
# Two more nodes, ours1 and ours2 (partition `ours`), are this same host again
# (Debian's Slurm is built with multiple-slurmd: one slurmd per node name, each with
# its own port, spool, pid, log and TmpFS). Their slurmds run in one private mount
# namespace in which /usr/lib/x86_64-linux-gnu/pmix2/lib is a copy of itself whose
# `libpmix.so` — the file the plugin dlopens — is whatever library was installed at
# $overlay/libpmix.so (tests copy pmix-rs's libpmix_ffi there before each srun); the
# rest of the copy is OpenPMIx's, so tasks linked with libpmix2 still load OpenPMIx.
# `srun -p ours -N 1` / `-N 2` thus run pmix-rs's server inside Slurm's plugin on one
# and on two nodes, and the default partition runs OpenPMIx's, on the same machine. `srun --mpi=pmix` is the `mpi/pmix_v4` plugin
# (package slurm-wlm-basic-plugins), an OpenPMIx 4.2.2 server: it dlopens
# `libpmix.so` from /usr/lib/x86_64-linux-gnu/pmix2/lib, which only libpmix-dev
# ships (the unversioned link), so that package is installed too.
set -euo pipefail

die() {
  echo "slurm-up: $*" >&2
  for f in "$logdir"/slurmctld.log "$logdir"/slurmd.*.log; do
    [ -f "$f" ] && { echo "--- last lines of $f" >&2; tail -n 20 "$f" >&2; }
  done
  exit 1
}
say() { echo "slurm-up: $*"; }

[ "$(id -u)" -eq 0 ] || { echo "slurm-up: must run as root" >&2; exit 1; }

node=$(hostname -s)
cpus=8
logdir=/var/log/slurm-ci
spool=/var/spool/slurm-ci
conf=/etc/slurm/slurm.conf
ctld_pid=/run/slurmctld.pid
slurmd_pid=/run/slurmd.${node}.pid
overlay=/run/pmix-rs-slurm
libdir=/usr/lib/x86_64-linux-gnu/pmix2/lib
t0=$(date +%s)

# --- packages
pkgs=(slurm-wlm slurm-wlm-basic-plugins munge libpmix-dev)
missing=()
for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi
plugdir=/usr/lib/x86_64-linux-gnu/slurm-wlm
ls "$plugdir"/mpi_pmix*.so >/dev/null 2>&1 || die "no mpi_pmix plugin in $plugdir"

mkdir -p "$logdir" "$spool/ctld" "$spool/d.$node" "$spool/d.ours1" "$spool/d.ours2" /etc/slurm \
  "/tmp/slurm-ci.$node" /tmp/slurm-ci.ours1 /tmp/slurm-ci.ours2

# --- munge
# shellcheck source=.ci/munge-up.sh
. "$(dirname "$0")/munge-up.sh"
munge_up

# --- slurm.conf
# The node's memory in MB, less a margin (the node is refused if it declares more
# than it has; config_overrides makes that moot, but keep it honest).
mem=$(awk '/^MemTotal:/ { m = int($2 / 1024 * 0.9); print (m > 1024 ? m : 1024) }' /proc/meminfo)
new=$(mktemp)
cat >"$new" <<EOF
# Written by .ci/slurm-up.sh: a one-node cluster for the srun --mpi=pmix tests.
ClusterName=pmixci
SlurmctldHost=${node}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
StateSaveLocation=${spool}/ctld
SlurmdSpoolDir=${spool}/d.%n
SlurmctldPidFile=${ctld_pid}
SlurmdPidFile=/run/slurmd.%n.pid
SlurmctldLogFile=${logdir}/slurmctld.log
SlurmdLogFile=${logdir}/slurmd.%n.log
SlurmctldDebug=info
SlurmdDebug=info
SlurmctldPort=6817
SlurmdPort=6818
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SwitchType=switch/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
SlurmdParameters=config_overrides
ReturnToService=2
KillWait=5
MinJobAge=30
InactiveLimit=0
Waittime=0
TmpFS=/tmp/slurm-ci.%n
NodeName=${node} NodeAddr=127.0.0.1 CPUs=${cpus} RealMemory=${mem} State=UNKNOWN
NodeName=ours1 NodeHostname=${node} NodeAddr=127.0.0.1 Port=7821 CPUs=${cpus} RealMemory=${mem} State=UNKNOWN
NodeName=ours2 NodeHostname=${node} NodeAddr=127.0.0.1 Port=7822 CPUs=${cpus} RealMemory=${mem} State=UNKNOWN
PartitionName=debug Nodes=${node} Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
PartitionName=ours Nodes=ours1,ours2 MaxTime=INFINITE State=UP OverSubscribe=NO
EOF
changed=0
if ! cmp -s "$new" "$conf"; then
  say "writing $conf"
  install -m 0644 "$new" "$conf"
  changed=1
fi
rm -f "$new"

# --- daemons
running() { # pidfile name
  [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null && [ "$(cat /proc/"$(cat "$1")"/comm 2>/dev/null)" = "$2" ]
}
stop() { # pidfile name
  if running "$1" "$2"; then
    local pid
    pid=$(cat "$1")
    say "stopping $2 (pid $pid): its configuration changed"
    kill "$pid"
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  fi
}
if [ "$changed" = 1 ]; then
  for n in "$node" ours1 ours2; do stop "/run/slurmd.$n.pid" slurmd; done
  stop "$ctld_pid" slurmctld
fi
if ! running "$ctld_pid" slurmctld; then
  say "starting slurmctld"
  # The pmix plugin's per-step directories of an earlier cluster would collide with
  # this one's job ids (a new state directory counts from 1 again): the step then
  # fails to launch ("Cannot create client cli tmpdir ... File exists").
  rm -rf /tmp/spmix_appdir_* /tmp/slurm-ci.*/spmix_appdir_*
  # -i: ignore state files that no longer match the configuration.
  /usr/sbin/slurmctld -i || die "slurmctld failed to start"
fi
for _ in $(seq 50); do scontrol ping 2>/dev/null | grep -q 'is UP' && break; sleep 0.2; done
scontrol ping | grep -q 'is UP' || die "slurmctld does not answer: $(scontrol ping 2>&1)"
if ! running "$slurmd_pid" slurmd; then
  say "starting slurmd"
  /usr/sbin/slurmd -N "$node" || die "slurmd failed to start"
fi

# --- the overlay for ours1 and ours2 (see the top): OpenPMIx's lib directory copied,
# its libpmix.so replaced by $overlay/libpmix.so (OpenPMIx's own until a test
# installs another).
mkdir -p "$overlay/lib"
if [ ! -e "$overlay/lib/pmix" ]; then
  cp -a "$libdir"/. "$overlay/lib/"
fi
[ -e "$overlay/libpmix.so" ] || cp "$libdir/libpmix.so.2.6.2" "$overlay/libpmix.so"
rm -f "$overlay/lib/libpmix.so"
ln -s "$overlay/libpmix.so" "$overlay/lib/libpmix.so"
for n in ours1 ours2; do
  if ! running "/run/slurmd.$n.pid" slurmd; then
    say "starting slurmd $n (private mount namespace, plugin library $overlay/libpmix.so)"
    unshare -m --propagation private sh -c \
      "mount --bind '$overlay/lib' '$libdir' && exec /usr/sbin/slurmd -N $n" ||
      die "slurmd $n failed to start"
  fi
done

# --- wait for the node, then a job (bounded: 60 s)
deadline=$((SECONDS + 60))
state=""
while [ $SECONDS -lt $deadline ]; do
  for n in ours1 ours2; do
    case "$(sinfo -h -n "$n" -o '%t' 2>/dev/null | head -n1)" in
      down* | drain* | drng* | fail*) scontrol update NodeName="$n" State=RESUME 2>/dev/null || true ;;
    esac
  done
  state=$(sinfo -h -n "$node" -o '%t' 2>/dev/null | head -n1)
  case "$state" in
    idle | mix | alloc) break ;;
    down* | drain* | drng* | fail*)
      scontrol update NodeName="$node" State=RESUME 2>/dev/null || true ;;
  esac
  sleep 1
done
case "$state" in
  idle | mix | alloc) ;;
  *) die "node $node is not idle after 60 s (state '${state:-none}'): $(sinfo -N -l 2>&1)" ;;
esac
left=$((deadline - SECONDS))
[ $left -gt 10 ] || left=10
timeout "$left" srun -n 1 true || die "srun -n 1 true failed"
timeout 20 srun -n 4 --mpi=pmix true || die "srun --mpi=pmix -n 4 true failed"

say "cluster up in $(($(date +%s) - t0)) s: node $node, $(sinfo -h -o '%P %t %c CPUs')"
say "pids: munged $(cat /run/munge/munged.pid 2>/dev/null || echo '?'), slurmctld $(cat "$ctld_pid"), slurmd $(cat "$slurmd_pid")"
srun --mpi=list
