# Sourced by .ci/slurm-up.sh and .ci/nodes.sh (which define say and die): a munge
# key, and munged answering, in the root namespaces.
munge_up() {
  install -d -o munge -g munge -m 0700 /etc/munge /var/lib/munge /var/log/munge
  install -d -o munge -g munge -m 0755 /run/munge
  if [ ! -s /etc/munge/munge.key ]; then
    say "creating /etc/munge/munge.key"
    dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
  fi
  chown munge:munge /etc/munge/munge.key
  chmod 0400 /etc/munge/munge.key
  if ! munge -n 2>/dev/null | unmunge >/dev/null 2>&1; then
    say "starting munged"
    runuser -u munge -- /usr/sbin/munged --force
    for _ in $(seq 50); do
      munge -n 2>/dev/null | unmunge >/dev/null 2>&1 && break
      sleep 0.2
    done
    munge -n | unmunge >/dev/null || die "munged does not answer (see /var/log/munge/munged.log)"
  fi
}
