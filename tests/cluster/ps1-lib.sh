#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ParaStation user-level library (libps: HAL, rawdata, ports) on a 2x2 torus,
# through pstest in the guests.
# tests/cluster/ps1-lib.sh direct|libvirt
set -u
. "$(dirname "$0")/../lib.sh"
cluster_test t-pslib "${1:-direct}"
plan 26
boot_cluster "ps1 2x2 torus" -n 4 --fabric ps1 --topology torus:2x2

# A background server on node $1 (its output in /tmp/$2.log), then the
# client on node $3; both must report only "ok".
server_client() { # SNODE SNAME SCMD CNODE CCMD
	vc exec -d "$1" -- "pstest $3 > /tmp/$2.log 2>&1" >/dev/null
	vc exec -t 120 "$4" -- pstest $5 || return 1
	retry 20 vc exec "$1" -- "grep -q '^ok' /tmp/$2.log && ! grep -q '^FAIL' /tmp/$2.log" ||
		{ vc exec "$1" -- cat "/tmp/$2.log"; return 1; }
}

# Ping-pong: one hop (0->1), two hops (0->3: x then y).
check "$mode: hal ping-pong node0 <-> node1 (1 hop, 64 bytes)" \
	server_client 1 halecho "hal-echo 200" 0 "hal-pingpong 1 200 64"
check "$mode: hal ping-pong node0 <-> node3 (2 hops, 508 bytes)" \
	server_client 3 halecho "hal-echo 200" 0 "hal-pingpong 3 200 508"
check "$mode: hal ping-pong, odd size 13 bytes" \
	server_client 2 halecho "hal-echo 50" 1 "hal-pingpong 2 50 13"
check "$mode: rawdata ping-pong node0 <-> node1 (1 hop, 64 bytes)" \
	server_client 1 rawecho "raw-echo 200" 0 "raw-pingpong 1 200 64"
check "$mode: rawdata ping-pong node0 <-> node3 (2 hops, 5000 bytes)" \
	server_client 3 rawecho "raw-echo 50" 0 "raw-pingpong 3 50 5000"
check "$mode: rawdata ping-pong node2 <-> node1 (0 bytes)" \
	server_client 1 rawecho "raw-echo 50" 2 "raw-pingpong 1 50 0"

# Both directions at once, random sizes up to 64 KiB plus the edges.
check "$mode: rawdata exchange node0 <-> node3, random sizes, checksummed" \
	server_client 3 xchg "raw-exchange 0 r20 65536 0 1 496 497" \
	0 "raw-exchange 3 r20 65536 0 1 496 497"
check "$mode: rawdata exchange node1 <-> node2, random sizes, checksummed" \
	server_client 2 xchg "raw-exchange 1 r30" 1 "raw-exchange 2 r30"

# Two senders into one receiver, which takes one message from each in turn
# (receive from a given node): the other's fragments must be queued.
interleave() {
	vc exec -d 1 -- "pstest raw-send 0 r15 65536 > /tmp/send.log 2>&1" >/dev/null
	vc exec -d 2 -- "pstest raw-send 0 r15 65536 > /tmp/send.log 2>&1" >/dev/null
	vc exec -t 120 0 -- pstest raw-recv 1 2 || return 1
	retry 20 vc exec 1,2 -- "grep -q '^ok' /tmp/send.log && ! grep -q '^FAIL' /tmp/send.log"
}
check "$mode: fragments of two senders interleaved into one receiver" interleave

check "$mode: a second rawdata user gets EBUSY" vc exec 2 -- pstest raw-busy
check "$mode: bad sizes and nodes fail with clear errnos" vc exec 3 -- pstest bad

# Ports: many processes per node share the board through the pool.
check "$mode: ports ping-pong node0 <-> node1 (1 hop, 64 bytes)" \
	server_client 1 portecho "port-echo 5 200" 0 "port-pingpong 1 5 200 64"
check "$mode: ports ping-pong node0 <-> node3 (2 hops, 5000 bytes)" \
	server_client 3 portecho "port-echo 5 50" 0 "port-pingpong 3 5 50 5000"
check "$mode: 4 processes per node on ports 10-13, fragmented messages" \
	server_client 2 portmulti "port-echo-multi 4 30" 1 "port-multi 2 4 30 3000"
check "$mode: a taken port gives EADDRINUSE, ports and rawdata exclude each other" \
	vc exec 0 -- pstest port-busy
check "$mode: ports: bad input fails with clear errnos" vc exec 1 -- pstest port-bad

# Pairwise exchange (the paper's benchmark): the same command on nodes A
# and B at once, each naming the other; both send, then both receive and
# check the peer's data.  Both must report only "ok".
pairwise() { pstest_pairwise "" "$@"; }
check "$mode: hal pairwise exchange node0 <-> node1 (64 bytes), both sides ok" \
	pairwise 0 1 hal-pairwise 200 64
check "$mode: hal pairwise exchange node0 <-> node3 (2 hops, 5000 bytes: bursts of 10 packets)" \
	pairwise 0 3 hal-pairwise 50 5000
check "$mode: rawdata pairwise exchange node0 <-> node1 (64 bytes), both sides ok" \
	pairwise 0 1 raw-pairwise 200 64
check "$mode: rawdata pairwise exchange node0 <-> node3 (2 hops, 5000 bytes: 11 fragments)" \
	pairwise 0 3 raw-pairwise 50 5000
check "$mode: ports pairwise exchange node0 <-> node1 (64 bytes), both sides ok" \
	pairwise 0 1 port-pairwise 5 200 64
check "$mode: ports pairwise exchange node0 <-> node3 (2 hops, 5000 bytes: 11 fragments)" \
	pairwise 0 3 port-pairwise 5 50 5000

# 10,000 hardware barriers: every node takes part in every one.
out=$(vc exec -t 600 all -- pstest barrier-loop 1 10000 2>&1)
rc=$?
n=$(echo "$out" | grep -c ': ok .*10000 barriers of 4 nodes')
[ "$rc" = 0 ] && [ "$n" = 4 ] && ! echo "$out" | grep -q FAIL && pass "$mode: 10000 hardware barriers across 4 nodes" ||
	fail "$mode: 10000 hardware barriers across 4 nodes" "$(echo "$out" | tail -n 4 | tr '\n' ' ')"

check "$mode: guest dmesg is clean" vc exec all -- ps1test dmesg
vc down > /dev/null
check_fails "$mode: down leaves no QEMU" pgrep -f "vc-$name-node"
