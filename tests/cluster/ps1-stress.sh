#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Stress of the ParaStation ports layer on a 2x2 torus, through psstress in
# the guests: a flood into one slow receiver, 8 senders of 64 KiB messages
# into one late receiver, an all-to-all exchange of 8 processes with random
# sizes, and a sender whose own messages fill the pool.  All with the
# driver's default pool (256 KiB).
# tests/cluster/ps1-stress.sh direct|libvirt
# PSSTRESS_SEED picks the message sizes (default: the time; printed).
# PSSTRESS_POOL_KB reloads ps1.ko with a pool of that size first.
set -u
. "$(dirname "$0")/../lib.sh"
cluster_test t-psstress "${1:-direct}"
# one more with PSSTRESS_POOL_KB: the reload
plan $((10 + $(test -n "${PSSTRESS_POOL_KB:-}" && echo 1 || echo 0)))
boot_cluster "ps1 2x2 torus" -n 4 --fabric ps1 --topology torus:2x2

seed=${PSSTRESS_SEED:-$(date +%s)}
echo "  psstress seed $seed (PSSTRESS_SEED=$seed gives the same sizes)"
ps="psstress -s $seed -t 150"

# The ok/FAIL lines of psstress, FAIL lines last (check shows the tail).
report() { echo "$1" | grep -v FAIL; echo "$1" | grep FAIL | head -n 8; }

if [ -n "${PSSTRESS_POOL_KB:-}" ]; then
	reload='rmmod ps1 && insmod /lib/modules/extra/ps1.ko $(tr " " "\n" < /proc/cmdline | sed -n "s/^ps1\.//p") pool_kb='$PSSTRESS_POOL_KB
	reloaded() {
		vc exec all -- "$reload" &&
			retry 30 vc exec all -- 'test "$(cat /sys/bus/pci/drivers/ps1/0*/state)" = up'
	}
	check "$mode: ps1 reloaded with a pool of $PSSTRESS_POOL_KB KiB, every board up" reloaded
fi
echo "  pool: $(vc exec 0 -- cat /sys/bus/pci/drivers/ps1/0*/pool_kb 2>/dev/null) KiB"

# A sender that fills the pool with messages to itself must move them out
# of the pool instead of waiting for room (credit) that only it could make.
check "$mode: a sender whose own messages fill the pool goes on (6 x 64 KiB to itself)" \
	vc exec -t 120 2 -- $ps self 40 6

# 3 nodes flood port 30 of node 0 with 1000 messages each (mostly small,
# some up to 64 KiB); the receiver sleeps 2 ms per message, so the
# senders run out of credit, and the FIFOs and the network fill up while
# it sleeps: both hold the senders back.  It starts to read only once
# fabricd held packets for node 0 (at most 60 s), so that happens however
# fast the host is.
held() { vc fabric counters | sed -n 's/^node 0 .* held=\([0-9]*\).*/\1/p'; }
held_grew() { [ "$(held)" -gt "${h0:-0}" ]; }
flood() {
	vc exec 0 -- "rm -f /tmp/fgo" > /dev/null
	vc exec -d 0 -- "$ps -g /tmp/fgo flood-recv 30 1000 2000 1 1 2 3 > /tmp/flood.log 2>&1" >/dev/null
	vc exec -t 300 1,2,3 -- $ps flood-send 0 30 1000 > "$tmp/fsend" 2>&1 &
	_p=$!
	retry 60 held_grew
	vc exec 0 -- "touch /tmp/fgo" > /dev/null
	wait $_p
	_rc=$?
	_s=$(cat "$tmp/fsend")
	retry 60 vc exec 0 -- '! pidof psstress'
	_r=$(vc exec 0 -- cat /tmp/flood.log 2>&1)
	report "$_s
$_r"
	[ $_rc = 0 ] && [ "$(echo "$_s" | grep -c ': ok ')" = 3 ] &&
		echo "$_r" | grep -q '^ok' && ! echo "$_r" | grep -q FAIL
}
h0=$(held)
t0=$(date +%s)
check "$mode: flood of 3 x 1000 messages into one slow receiver: all there once, in order, none dropped" flood
h1=$(held)
echo "  flood: $(($(date +%s) - t0)) s, $((${h1:-0} - ${h0:-0})) packets held back at node 0"
[ "${h1:-0}" -gt "${h0:-0}" ] && pass "$mode: the flood was held back by the network (node 0 held count grew)" ||
	fail "$mode: the flood was held back by the network (node 0 held count grew)" "held $h0 -> $h1"

# No process left packets unread or a packet half done.
clean() { vc exec all -- 'test "$(cat /sys/bus/pci/drivers/ps1/0*/counters/cleanup_resets)" = 0'; }
check "$mode: self and flood left every board clean (no cleanup reset)" clean

# Fan-in: 8 processes (2 per node, node 0 too) each send 3 messages of
# 64 KiB (134 fragments) to port 40 of node 0, whose receiver starts to
# read only once all 8 have their "go" (so every one of them is sending
# or waiting for room), not after a sleep that hopes so.  Without flow
# control their half-received messages filled the pool (~500 blocks) and
# none could ever complete: the old library hung on it.  Now a message
# goes only with room for all of it.
gone() { # how many senders have their go
	vc exec all -- "grep -c ': go from node 0 port 40' /tmp/fs.log" 2>/dev/null |
		awk -F': ' '{ s += $2 } END { print s + 0 }'
}
all_go() { [ "$(gone)" = 8 ]; }
fanin() {
	vc exec all -- "rm -f /tmp/fgo /tmp/fs.log" > /dev/null
	vc exec -d 0 -- "$ps -g /tmp/fgo fanin-recv 40 3 0 2 0 1 2 3 > /tmp/fanin.log 2>&1" >/dev/null
	vc exec -d all -- "$ps fanin-send 0 40 2 3 > /tmp/fs.log 2>&1; echo exit \$? >> /tmp/fs.log" >/dev/null
	retry 60 all_go || echo "only $(gone) of 8 senders had their go"
	vc exec 0 -- "touch /tmp/fgo" > /dev/null
	retry 200 vc exec all -- "grep -q '^exit ' /tmp/fs.log"
	_s=$(vc exec all -- cat /tmp/fs.log 2>&1)
	retry 60 vc exec 0 -- '! pidof psstress'
	_r=$(vc exec 0 -- cat /tmp/fanin.log 2>&1)
	report "$_s
$_r"
	[ "$(echo "$_s" | grep -c '^node[0-3]: exit 0$')" = 4 ] &&
		[ "$(echo "$_s" | grep -c '^node[0-3]: ok   fanin-send:')" = 4 ] &&
		echo "$_r" | grep -q '^ok' && ! echo "$_r" | grep -q FAIL
}
t0=$(date +%s)
check "$mode: fan-in of 8 senders x 3 messages of 64 KiB into one late receiver: no deadlock, all there once, in order" fanin
echo "  fan-in: $(($(date +%s) - t0)) s"

# Every process sends 20 messages to each of the 7 others (its own node's
# other process too), sizes random up to 64 KiB and 0, 1, 492, 493, 65536,
# interleaving sends and receives.
all2all() {
	_o=$(vc exec -t 300 all -- $ps all2all 4 2 20 2>&1)
	report "$_o"
	[ "$(echo "$_o" | grep -c '^node[0-3]: ok ')" = 12 ] && ! echo "$_o" | grep -q FAIL
}
t0=$(date +%s)
check "$mode: all-to-all of 8 processes on 4 nodes, 20 random-size messages per pair, checksummed, in order" all2all
echo "  all-to-all: $(($(date +%s) - t0)) s"
check "$mode: fan-in and all-to-all left every board clean (no cleanup reset)" clean

check "$mode: guest dmesg is clean" vc exec all -- ps1test dmesg
vc down > /dev/null
check_fails "$mode: down leaves no QEMU" pgrep -f "vc-$name-node"
