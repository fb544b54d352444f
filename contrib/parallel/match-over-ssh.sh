#!/usr/bin/env bash
# An agon match split over machines reached by ssh, with GNU parallel.
#
#   contrib/parallel/match-over-ssh.sh hosts.txt 8 -engine cmd=agon name=new \
#       -engine cmd=agon-old name=old -each tc=10+0.1 -rounds 4000 -games 2 \
#       -repeat -openings random plies=6 seed=1
#
# hosts.txt lists one ssh login per line (GNU parallel's --sshloginfile:
# "2/user@host" runs two shards at once there). Every host needs agon and
# the engines on its PATH and the same working directory on a shared file
# system (NFS): shard K of N writes state.shard-K-of-N.json and
# games.shard-K-of-N.jsonl there, and with -sprt every shard reads the
# others' states and stops once the merged test is decided. Without a
# shared file system, drop -sprt, copy the state files back and merge them
# the same way:
#
#   agon stats state.shard-*-of-8.json
#
# A shard that fails is retried (--retries), and running the script again
# with the same arguments continues every shard where it stopped
# (-resume auto).
set -euo pipefail
hosts=$1
shards=$2
shift 2
# {} is the 1-based shard number; --workdir . runs it in this directory on every host.
parallel --quote --sshloginfile "$hosts" --workdir . --line-buffer --tagstring 'shard {}' \
    --retries 3 \
    agon match "$@" -jsonl games.jsonl -state state.json -shard "{}/$shards" -resume auto \
    ::: $(seq 1 "$shards")
agon stats $(for k in $(seq 1 "$shards"); do echo "state.shard-$k-of-$shards.json"; done)
