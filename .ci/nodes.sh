#!/usr/bin/env bash
# The node test bed: N nodes on this machine that are nodes (issue 33, docs/nodes.md).
#
# Each node is a network namespace with one veth address on a private bridge, its own
# host name (UTS namespace) and its own /tmp, /dev/shm and /etc/hosts (mount
# namespace). The bridge lives in a namespace of its own (the fabric), so the root
# namespace gains no address and no route: traffic goes only between the nodes'
# addresses and each node's loopback.
#
# Slurm on it: two clusters over the same nodes (NodeName = the node's host name,
# NodeAddr = its address), each with its slurmctld in node1 and one slurmd per node:
#   openpmix  the plugin loads OpenPMIx's libpmix.so (Debian's), ports 6917/6918
#   ours      the plugin loads whatever file is at $STATE/ours/libpmix.so (the tests
#             copy pmix-rs's libpmix_ffi.so there), ports 6927/6928
# A slurmd loads one library per mount namespace and a node name is its host name, so
# the two servers cannot be two partitions of one cluster: two clusters give both the
# same node names and placement. `nodes.sh srun CLUSTER ARGS...` runs srun in node1.
#
# mpirun on it: $STATE/rsh is an rsh agent (plm_rsh_agent) that runs its command
# inside the named node's namespaces (nsenter), so each orted runs on its node.
#
# Usage (as root):
#   nodes.sh up [N]            build N >= 3 nodes (default 3) and start both clusters;
#                              idempotent (an up test bed is only checked)
#   nodes.sh down              stop every daemon and process of the nodes (by pid),
#                              remove the namespaces, mounts and files it made
#   nodes.sh status            exit 0 when the test bed is up, printing its nodes
#   nodes.sh exec NODE CMD...  run CMD on NODE (its namespaces)
#   nodes.sh srun CLUSTER ARGS...   srun ARGS on CLUSTER (openpmix | ours), from node1
#   nodes.sh pids NODE         the pids of every process on NODE
#   nodes.sh kill NODE         SIGKILL every process of NODE at once (a node lost whole)
#   nodes.sh revive NODE       restart NODE's slurmds after a kill; resume it in Slurm
#   nodes.sh link NODE up|down set NODE's link up or down (a cut cable)
#   nodes.sh slow NODE on|off  slow NODE's link (netem delay 50ms, or where the kernel
#                              has no netem, an htb rate limit of 4 Mbit/s)
set -euo pipefail

STATE=${PMIX_RS_NODES_STATE:-/run/pmix-rs-nodes}
PREFIX=pmixrs
SUBNET=10.213.77
SPOOL=/var/spool/pmix-rs-nodes
LOGDIR=/var/log/pmix-rs-nodes
CONFDIR=/etc/slurm-pmix-rs-nodes
LIBDIR=/usr/lib/x86_64-linux-gnu/pmix2/lib
CLUSTERS=(openpmix ours)
CPUS=8

say() { echo "nodes: $*"; }
die() {
  echo "nodes: $*" >&2
  for f in "$LOGDIR"/*.log; do
    [ -f "$f" ] && { echo "--- last lines of $f" >&2; tail -n 15 "$f" >&2; }
  done
  exit 1
}
[ "$(id -u)" -eq 0 ] || { echo "nodes: must run as root" >&2; exit 1; }

nodes() { cat "$STATE/nodes" 2>/dev/null; }
node_ns() { echo "$PREFIX-$1"; }
node_addr() { echo "$SUBNET.${1#node}"; }
port_of() { # cluster -> slurmctld port (slurmd: +1)
  case "$1" in openpmix) echo 6917 ;; ours) echo 6927 ;; *) die "no cluster $1" ;; esac
}
# Each cluster numbers its jobs from its own first id: Slurm's PMIx plugin names
# per-step directories in the node's /tmp by job id, which two clusters share.
first_job_of() {
  case "$1" in openpmix) echo 1 ;; ours) echo 500001 ;; esac
}
conf_of() { echo "$CONFDIR/$1.conf"; }

# Runs "$@" on NODE: in its network and UTS namespaces, and in a new mount namespace
# where /tmp, /dev/shm and /etc/hosts are the node's own (bind mounts of
# $STATE/NODE/{tmp,shm,hosts}, made in the root mount namespace when the node was
# built, so they are seen from every node: a node's processes may enter another node,
# as mpirun's rsh agent does). Extra mounts for this process: NODES_BIND="SRC:DST ...".
in_node() {
  local n=$1
  shift
  [ -e "/run/netns/$(node_ns "$n")" ] || die "no node $n (nodes: $(nodes | tr '\n' ' '))"
  nsenter --net="/run/netns/$(node_ns "$n")" --uts="$STATE/$n/uts" -- \
    unshare -m --propagation private sh -c '
      d=$1; shift
      mount --bind "$d/tmp" /tmp && mount --bind "$d/shm" /dev/shm &&
        mount --bind "$d/hosts" /etc/hosts || exit 125
      for b in $NODES_BIND; do mount --bind "${b%%:*}" "${b#*:}" || exit 125; done
      exec "$@"' sh "$STATE/$n" "$@"
}

# Every pid whose network namespace is NODE's.
node_pids() {
  ip netns pids "$(node_ns "$1")" 2>/dev/null || true
}

running() { # pidfile comm
  [ -s "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null &&
    [ "$(cat /proc/"$(cat "$1")"/comm 2>/dev/null)" = "$2" ]
}

write_slurm_conf() { # cluster
  local c=$1 port
  port=$(port_of "$c")
  local mem
  mem=$(awk '/^MemTotal:/ { m = int($2 / 1024 / 4); print (m > 1024 ? m : 1024) }' /proc/meminfo)
  mkdir -p "$CONFDIR" "$SPOOL/$c/ctld"
  {
    echo "# Written by .ci/nodes.sh: cluster $c of the node test bed."
    echo "ClusterName=pmixrs$c"
    echo "SlurmctldHost=node1($(node_addr node1))"
    echo "SlurmUser=root"
    echo "SlurmdUser=root"
    echo "AuthType=auth/munge"
    echo "CredType=cred/munge"
    echo "StateSaveLocation=$SPOOL/$c/ctld"
    echo "SlurmdSpoolDir=$SPOOL/$c/%n"
    echo "SlurmctldPidFile=$STATE/$c/slurmctld.pid"
    echo "SlurmdPidFile=$STATE/$c/slurmd.%n.pid"
    echo "SlurmctldLogFile=$LOGDIR/$c.slurmctld.log"
    echo "SlurmdLogFile=$LOGDIR/$c.slurmd.%n.log"
    echo "SlurmctldDebug=info"
    echo "SlurmdDebug=info"
    echo "SlurmctldPort=$port"
    echo "SlurmdPort=$((port + 1))"
    echo "FirstJobId=$(first_job_of "$c")"
    echo "ProctrackType=proctrack/linuxproc"
    echo "TaskPlugin=task/none"
    echo "JobAcctGatherType=jobacct_gather/none"
    echo "AccountingStorageType=accounting_storage/none"
    echo "JobCompType=jobcomp/none"
    echo "SwitchType=switch/none"
    echo "SchedulerType=sched/backfill"
    echo "SelectType=select/cons_tres"
    echo "SelectTypeParameters=CR_Core"
    echo "MpiDefault=none"
    echo "SlurmdParameters=config_overrides"
    echo "ReturnToService=2"
    echo "SlurmdTimeout=10"
    echo "MessageTimeout=5"
    echo "KillWait=2"
    echo "MinJobAge=10"
    echo "InactiveLimit=0"
    echo "Waittime=0"
    echo "TmpFS=/tmp"
    for n in $(nodes); do
      echo "NodeName=$n NodeAddr=$(node_addr "$n") CPUs=$CPUS RealMemory=$mem State=UNKNOWN"
    done
    echo "PartitionName=nodes Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO"
  } >"$(conf_of "$c")"
}

# Starts NODE's slurmd of CLUSTER unless it runs. The `ours` slurmd runs in a mount
# namespace of its own, a child of the node's, where OpenPMIx's lib directory is
# $STATE/ours/lib: a copy whose libpmix.so (what the plugin dlopens) is
# $STATE/ours/libpmix.so.
start_slurmd() { # cluster node
  local c=$1 n=$2 pidf
  pidf="$STATE/$c/slurmd.$n.pid"
  running "$pidf" slurmd && return 0
  mkdir -p "$SPOOL/$c/$n"
  if [ "$c" = ours ]; then
    NODES_BIND="$STATE/ours/lib:$LIBDIR" in_node "$n" /usr/sbin/slurmd -f "$(conf_of "$c")" ||
      die "slurmd $c on $n failed to start"
  else
    in_node "$n" /usr/sbin/slurmd -f "$(conf_of "$c")" || die "slurmd $c on $n failed to start"
  fi
}

start_slurmctld() { # cluster
  local c=$1
  running "$STATE/$c/slurmctld.pid" slurmctld && return 0
  in_node node1 /usr/sbin/slurmctld -i -f "$(conf_of "$c")" || die "slurmctld $c failed to start"
}

restart_slurmd() { # cluster node: the slurmd this script started there, anew
  local c=$1 n=$2 pidf pid
  pidf="$STATE/$c/slurmd.$n.pid"
  if running "$pidf" slurmd; then
    pid=$(cat "$pidf")
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  start_slurmd "$c" "$n"
}

wait_cluster() { # cluster: every node idle (bounded: 90 s)
  local c=$1 t0=$SECONDS want got kicked=0
  want=$(nodes | wc -l)
  while [ $SECONDS -lt $((t0 + 90)) ]; do
    got=$(in_node node1 env SLURM_CONF="$(conf_of "$c")" sinfo -h -N -o '%N %t' 2>/dev/null |
      awk '$2 ~ /^(idle|mix|alloc)$/' | wc -l)
    [ "$got" = "$want" ] && return 0
    in_node node1 env SLURM_CONF="$(conf_of "$c")" sinfo -h -N -o '%N %t' 2>/dev/null |
      awk '$2 ~ /^(down|drain|drng|fail)/ { print $1 }' |
      while read -r n; do
        in_node node1 env SLURM_CONF="$(conf_of "$c")" scontrol update NodeName="$n" State=RESUME 2>/dev/null || true
      done
    # A slurmd that registered while slurmctld was still declaring its killed
    # predecessor not responding stays "idle*": registering again clears it.
    if [ $kicked = 0 ] && [ $SECONDS -ge $((t0 + 15)) ]; then
      kicked=1
      for n in $(in_node node1 env SLURM_CONF="$(conf_of "$c")" sinfo -h -N -o '%N %t' 2>/dev/null |
        awk '$2 ~ /\*$/ { print $1 }'); do
        say "cluster $c: $n not responding, restarting its slurmd"
        restart_slurmd "$c" "$n"
      done
    fi
    sleep 1
  done
  die "cluster $c: $got of $want nodes idle after 90 s: $(in_node node1 env SLURM_CONF="$(conf_of "$c")" sinfo -N 2>&1)"
}

# shellcheck source=.ci/munge-up.sh
. "$(dirname "${BASH_SOURCE[0]}")/munge-up.sh"

packages() {
  local pkgs=(slurm-wlm slurm-wlm-basic-plugins munge libpmix-dev iproute2 util-linux) missing=()
  for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p"); done
  if [ ${#missing[@]} -gt 0 ]; then
    say "installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  fi
}

# A node: its network namespace (veth to the fabric's bridge), a UTS namespace kept
# by a bind mount on $STATE/NODE/uts ($STATE is a private mount, as that needs), its
# own /tmp and /dev/shm (two tmpfs under $STATE/NODE) and /etc/hosts (in_node).
make_node() { # node
  local n=$1 ns addr
  ns=$(node_ns "$n")
  addr=$(node_addr "$n")
  mkdir -p "$STATE/$n/tmp" "$STATE/$n/shm"
  if [ ! -e "/run/netns/$ns" ]; then
    ip netns add "$ns"
    ip link add "v-$n" netns "$PREFIX-fabric" type veth peer name eth0 netns "$ns"
    ip -n "$PREFIX-fabric" link set "v-$n" master br0 up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$addr/24" dev eth0
    ip -n "$ns" link set eth0 up
  fi
  # A node cut off is noticed in seconds, not in Linux's default 15 minutes (a TCP
  # connection with data unacknowledged is given up after tcp_retries2 = 15
  # retransmissions; a connect after tcp_syn_retries = 6, 2 minutes): 4 (about 6 s)
  # and 2 (7 s). mpirun's daemons learn of a lost peer only from TCP.
  ip netns exec "$ns" sysctl -q -w net.ipv4.tcp_retries2=4 net.ipv4.tcp_syn_retries=2
  {
    echo "127.0.0.1 localhost"
    for m in $(nodes); do echo "$(node_addr "$m") $m"; done
  } >"$STATE/$n/hosts"
  for d in tmp shm; do
    mountpoint -q "$STATE/$n/$d" || mount -t tmpfs -o mode=1777,size=2g tmpfs "$STATE/$n/$d"
  done
  if ! nsenter --uts="$STATE/$n/uts" true 2>/dev/null; then
    touch "$STATE/$n/uts"
    unshare --uts="$STATE/$n/uts" hostname "$n" || die "cannot make the UTS namespace of $n"
  fi
}

up() {
  local count=${1:-3}
  [ "$count" -ge 3 ] || die "a test bed has at least 3 nodes"
  packages
  mkdir -p "$STATE" "$LOGDIR" "$SPOOL"
  # The namespaces are kept as bind mounts on files under $STATE, which must be on
  # a private mount for that.
  if ! mountpoint -q "$STATE"; then
    mount --bind "$STATE" "$STATE"
    mount --make-private "$STATE"
  fi
  if [ -s "$STATE/nodes" ] && [ "$(nodes | wc -l)" != "$count" ]; then
    die "a test bed of $(nodes | wc -l) nodes is up: nodes.sh down first"
  fi
  seq 1 "$count" | sed 's/^/node/' >"$STATE/nodes"
  if [ ! -e "/run/netns/$PREFIX-fabric" ]; then
    ip netns add "$PREFIX-fabric"
    ip -n "$PREFIX-fabric" link add br0 type bridge
    ip -n "$PREFIX-fabric" link set br0 up
  fi
  for n in $(nodes); do make_node "$n"; done

  # A copy of this script where every node sees it (the repository may lie under
  # /tmp, which is each node's own), for the rsh agent of mpirun: options dropped,
  # the command run on the node.
  install -m 0755 "$0" "$STATE/nodes.sh"
  install -m 0644 "$(dirname "$0")/munge-up.sh" "$STATE/munge-up.sh"
  cat >"$STATE/rsh" <<EOF
#!/bin/sh
# plm_rsh_agent of the node test bed: [options] NODE COMMAND...
while [ \$# -gt 0 ]; do case "\$1" in -*) shift ;; *) break ;; esac; done
node=\$1
shift
exec $STATE/nodes.sh exec "\$node" /bin/sh -c "\$*"
EOF
  chmod 0755 "$STATE/rsh"

  munge_up
  # The `ours` cluster's lib directory (start_slurmd).
  mkdir -p "$STATE/ours/lib" "$STATE/openpmix"
  if [ ! -e "$STATE/ours/lib/pmix" ]; then cp -a "$LIBDIR"/. "$STATE/ours/lib/"; fi
  [ -e "$STATE/ours/libpmix.so" ] || cp "$(readlink -f "$LIBDIR/libpmix.so")" "$STATE/ours/libpmix.so"
  rm -f "$STATE/ours/lib/libpmix.so"
  ln -s "$STATE/ours/libpmix.so" "$STATE/ours/lib/libpmix.so"
  for c in "${CLUSTERS[@]}"; do
    write_slurm_conf "$c"
    start_slurmctld "$c"
  done
  for c in "${CLUSTERS[@]}"; do
    for n in $(nodes); do start_slurmd "$c" "$n"; done
  done
  for c in "${CLUSTERS[@]}"; do wait_cluster "$c"; done
  for c in "${CLUSTERS[@]}"; do
    timeout 30 "$0" srun "$c" -N "$count" -n "$count" hostname | sort | tr '\n' ' ' |
      grep -q "$(nodes | tr '\n' ' ')" || die "cluster $c: srun hostname does not name every node"
  done
  say "up: $(nodes | while read -r n; do printf '%s=%s ' "$n" "$(node_addr "$n")"; done)"
  say "clusters: ${CLUSTERS[*]} (nodes.sh srun CLUSTER ...); mpirun agent: $STATE/rsh"
}

down() {
  # Every process of every node, by pid (all were started here, in its namespaces).
  local pids
  for n in $(nodes); do
    pids=$(node_pids "$n")
    [ -n "$pids" ] && kill -9 $pids 2>/dev/null || true
  done
  sleep 0.3
  for n in $(nodes); do
    ip netns del "$(node_ns "$n")" 2>/dev/null || true
    for f in uts tmp shm; do umount "$STATE/$n/$f" 2>/dev/null || true; done
  done
  ip netns del "$PREFIX-fabric" 2>/dev/null || true
  if mountpoint -q "$STATE" 2>/dev/null; then umount -l "$STATE" || true; fi
  rm -rf "$STATE" "$SPOOL" "$CONFDIR"
  say "down"
}

status() {
  [ -s "$STATE/nodes" ] || { echo "nodes: not up"; return 1; }
  local ok=0
  for n in $(nodes); do
    [ -e "/run/netns/$(node_ns "$n")" ] || { echo "nodes: $n has no namespace"; ok=1; }
  done
  for c in "${CLUSTERS[@]}"; do
    running "$STATE/$c/slurmctld.pid" slurmctld || { echo "nodes: slurmctld $c is not running"; ok=1; }
    for n in $(nodes); do
      running "$STATE/$c/slurmd.$n.pid" slurmd || { echo "nodes: slurmd $c on $n is not running"; ok=1; }
    done
  done
  [ $ok = 0 ] && echo "nodes: up: $(nodes | tr '\n' ' ')state $STATE"
  return $ok
}

cmd=${1:-}
shift || true
case "$cmd" in
  up) up "$@" ;;
  down) down ;;
  status) status ;;
  exec)
    n=${1:?node}
    shift
    in_node "$n" "$@"
    ;;
  srun)
    c=${1:?cluster}
    shift
    in_node node1 env SLURM_CONF="$(conf_of "$c")" srun "$@"
    ;;
  pids) node_pids "${1:?node}" ;;
  kill)
    n=${1:?node}
    pids=$(node_pids "$n")
    [ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
    # Until they are gone (bounded: 10 s), so that a revive starts new daemons: a
    # dying process has left the namespace's list before it is gone, and a daemon
    # this script started is looked up by its pid file, so those pids too.
    daemons=$(cat "$STATE"/*/slurmd."$n".pid 2>/dev/null || true)
    [ "$n" != node1 ] || daemons="$daemons $(cat "$STATE"/*/slurmctld.pid 2>/dev/null || true)"
    for _ in $(seq 100); do
      alive=""
      for p in $daemons; do kill -0 "$p" 2>/dev/null && alive=1; done
      [ -z "$(node_pids "$n")" ] && [ -z "$alive" ] && break
      sleep 0.1
    done
    ;;
  revive)
    n=${1:?node}
    for c in "${CLUSTERS[@]}"; do
      [ "$n" = node1 ] && start_slurmctld "$c"
      start_slurmd "$c" "$n"
    done
    for c in "${CLUSTERS[@]}"; do wait_cluster "$c"; done
    ;;
  link)
    n=${1:?node}
    ip -n "$PREFIX-fabric" link set "v-$n" "${2:?up or down}"
    ;;
  slow)
    n=${1:?node}
    case "${2:?on or off}" in
      on)
        if ! ip netns exec "$(node_ns "$n")" tc qdisc replace dev eth0 root netem delay 50ms 2>/dev/null; then
          ip netns exec "$(node_ns "$n")" tc qdisc replace dev eth0 root handle 1: htb default 1
          ip netns exec "$(node_ns "$n")" tc class replace dev eth0 parent 1: classid 1:1 htb rate 4mbit ceil 4mbit
          # The daemons' own messages (slurmctld and slurmd ports of both clusters)
          # keep their pace: queued behind a job's megabytes at 4 Mbit/s, a slurmd's
          # answer to slurmctld's ping outlasts SlurmdTimeout (10 s) and Slurm ends the
          # step for a node failure, which is not the fault this row is about.
          ip netns exec "$(node_ns "$n")" tc class replace dev eth0 parent 1: classid 1:2 htb rate 1gbit quantum 60000
          for c in "${CLUSTERS[@]}"; do
            p=$(port_of "$c")
            for port in "$p" $((p + 1)); do
              for dir in sport dport; do
                ip netns exec "$(node_ns "$n")" tc filter add dev eth0 parent 1: protocol ip prio 1 \
                  u32 match ip "$dir" "$port" 0xffff flowid 1:2
              done
            done
          done
          echo "htb 4mbit"
        else
          echo "netem 50ms"
        fi
        ;;
      off) ip netns exec "$(node_ns "$n")" tc qdisc del dev eth0 root 2>/dev/null || true ;;
      *) die "slow NODE on|off" ;;
    esac
    ;;
  *)
    sed -n '2,/^set -euo/p' "$0" | sed '$d'
    exit 64
    ;;
esac
