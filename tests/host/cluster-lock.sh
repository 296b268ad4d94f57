#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vcluster up, run and down hold the cluster's name (docs/user-guide.md,
# "down"): one that finds it held waits and says so, and gives up after
# its bound with a clear error; no VM is booted here.
# Needs the host tools built (make check builds them first).
set -u
. "$(dirname "$0")/../lib.sh"
plan 2
base=$(mktemp -d)
trap 'rm -rf "$base"' EXIT
vc="$TOP/build/bin/vcluster"

# held: until flock -n finds it taken (not a guess at how fast this host is)
held() { until ! flock -n "$1" true; do sleep 0.1; done; }
# another vcluster holds 'lk' for 2 s: down waits for it, then goes on
flock "$base/.lk.lock" sleep 2 &
held "$base/.lk.lock"
out=$(VCLUSTER_RUNDIR=$base "$vc" down --name lk 2>&1)
wait
said() { printf '%s\n' "$out" | grep -qF "$1"; }
check "down waits for another vcluster that holds the cluster's name" \
	said "waiting for another vcluster that starts or stops cluster 'lk'"
# a name held for longer than the bound: a clear error, not a hang
# (the bound is 600 s; the test holds the lock past a shortened one)
flock "$base/.lk2.lock" sleep 3 &
held "$base/.lk2.lock"
out=$(VCLUSTER_RUNDIR=$base VCLUSTER_LOCK_TIMEOUT_S=1 "$vc" down --name lk2 2>&1)
wait
check "down gives up on a held name after its bound, with a clear error" \
	said "another vcluster is starting or stopping cluster 'lk2'"
