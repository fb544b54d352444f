#!/usr/bin/env bash
# Installs and starts a single-node Slurm (munge, slurmctld, slurmd) on this
# machine, as root, with no network needed beyond the Debian archive: enough
# to run job arrays of agon match shards, as CI does. Idempotent.
set -euo pipefail
if ! command -v sbatch >/dev/null || ! command -v slurmd >/dev/null; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
        slurm-wlm munge >/dev/null
fi
node=$(hostname -s)
hardware=$(slurmd -C | head -1 | sed -e 's/^NodeName=[^ ]* //' -e 's/ RealMemory=.*//')
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
cat >/etc/slurm/slurm.conf <<CONF
ClusterName=agon
SlurmctldHost=${node}
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
NodeName=${node} ${hardware} State=UNKNOWN
PartitionName=debug Nodes=${node} Default=YES MaxTime=INFINITE State=UP
CONF
chown munge:munge /run/munge
pgrep -x munged >/dev/null || runuser -u munge -- /usr/sbin/munged
pgrep -x slurmctld >/dev/null || /usr/sbin/slurmctld
pgrep -x slurmd >/dev/null || /usr/sbin/slurmd
for _ in $(seq 60); do
    if sinfo -h -o %t 2>/dev/null | grep -qE '^(idle|mix|alloc)'; then
        sinfo
        exit 0
    fi
    scontrol update nodename="${node}" state=resume >/dev/null 2>&1 || true
    sleep 1
done
echo "Slurm did not come up; logs in /var/log/slurm" >&2
tail -20 /var/log/slurm/*.log >&2 || true
exit 1
