#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ParaStation sockets (docs/psock.md): psocktest between two nodes, once on
# the kernel and once under psrun, on the ParaStation board and on the
# Myrinet card; the two runs must print the same lines, and the library run
# must really have moved its connections to ports (also across exec and in
# a daemon's child); psocktest's signal storm alone must have met the
# library's lock, and its spin case alone must have stalled on the NIC
# (but not beside tasks that want the CPU).  A program asleep on a
# connection beside a busy one is not woken by the busy one's packets.
# Then a node without its board's driver: the library falls back to the
# kernel.  Last, a reader whose peer's node restarts: the read ends
# (keepalives on the idle kernel connection), it does not wait for ever.
# tests/cluster/psock.sh direct|libvirt
set -u
. "$(dirname "$0")/../lib.sh"
cluster_test t-psock "${1:-direct}"
plan 27
boot_cluster "2 nodes on eth, ps1 and myrinet" -n 2 --fabric eth,ps1,myrinet

# run_pair TAG PORT PREFIX: psocktest server on node1, the client on node0,
# both started by PREFIX ("" or "psrun --hal HAL"); the client's lines in
# $tmp/TAG.out, the server's debug log in the guest's /tmp/TAG.srv.  Each
# run has its own server port: the last server may not be gone yet.
run_pair() {
	vc exec node1 -- "killall psocktest; true" >/dev/null 2>&1
	vc exec -d node1 -- "PS_SOCK_DEBUG=1 $3 psocktest server $2 > /tmp/$1.srv 2>&1" >/dev/null
	retry 20 vc exec node1 -- "grep -q listening /tmp/$1.srv" || return 1
	vc exec -t 180 node0 -- "PS_SOCK_DEBUG=1 $3 psocktest client node1 $2 2> /tmp/$1.dbg" > "$tmp/$1.out"
}

check "$mode: psocktest on the kernel: every case ok" run_pair kernel 7300 ""
# a server listens on PORT, PORT + 2 (fork) and PORT + 4 (forkserve)
port=7300
for hal in ps1 myri; do
	port=$((port + 20))
	check "$mode: $hal: psocktest under psrun: every case ok" \
		run_pair "$hal" $port "psrun --hal $hal"
	check "$mode: $hal: the library's lines are the kernel's" \
		diff "$tmp/kernel.out" "$tmp/$hal.out"
	# the client moved its connections to ports, the server answered
	check "$mode: $hal: the connections went over ports" \
		vc exec node0 -- "grep -q 'speaks ports' /tmp/$hal.dbg && grep -q 'sends over ports' /tmp/$hal.dbg"
	# ... kept a connection on ports across exec, and the daemon case's
	# child adopted its parent's port; UDP sockets were bound to markers
	check "$mode: $hal: exec kept the port, a daemon adopted it, UDP went over ports" \
		vc exec node0 -- "grep -q 'exec: port [0-9]* and [1-9][0-9]* connections kept' /tmp/$hal.dbg &&
			grep -q 'adopted: our parent has gone' /tmp/$hal.dbg &&
			grep -q 'udp [0-9]*: bound, ports port' /tmp/$hal.dbg"
	# sigstorm alone: its signals came while the library held its lock
	check "$mode: $hal: signals put off by the library's lock ran (sigstorm)" \
		vc exec -t 120 node0 -- "PS_SOCK_DEBUG=1 psrun --hal $hal psocktest client node1 $port sigstorm 2> /tmp/storm-$hal.dbg &&
			grep -q 'signals put off [1-9]' /tmp/storm-$hal.dbg"
	# spin alone: the spinning waits stalled on the NIC; not while every
	# CPU of the node has another task to run.  A wide gap, so that a
	# slow host still counts as spinning
	check "$mode: $hal: a program that spins in poll(0) stalls on the NIC (spin)" \
		vc exec -t 120 node0 -- "PS_SOCK_IDLE_GAP_US=1000 PS_SOCK_DEBUG=1 psrun --hal $hal psocktest client node1 $port spin 2> /tmp/spin-$hal.dbg &&
			grep -q 'stalls of a spinner [1-9][0-9]* (in epoll_wait [1-9]' /tmp/spin-$hal.dbg"
	check "$mode: $hal: ... but not while the node's CPUs are busy (spin)" \
		vc exec -t 180 node0 -- "pids=; for i in \$(seq \$(nproc)); do timeout 170 sh -c 'while :; do :; done' & pids=\"\$pids \$!\"; done
			PS_SOCK_IDLE_GAP_US=1000 PS_SOCK_DEBUG=1 psrun --hal $hal psocktest client node1 $port spin 2> /tmp/spin-busy-$hal.dbg; rc=\$?; kill \$pids
			[ \$rc = 0 ] && grep -q 'stats:' /tmp/spin-busy-$hal.dbg &&
			! grep -q 'stalls of a spinner [1-9]' /tmp/spin-busy-$hal.dbg"
	check "$mode: $hal: the server died, the client saw the end (death)" \
		vc exec -t 60 node0 -- "psrun --hal $hal psocktest client node1 $port death"
done

# idle_beside HAL PORT: psocktest's idle case on node0 (a connection on
# ports, asleep in poll() on it and stdin) while tcpbench ping-pongs 2000
# rounds over ports from node0.  The idle process must sleep without the
# NIC, on its doorbell: woken by every reply it would sleep 2000 times or
# more; it sleeps a few times per 20 ms instead (docs/parastation-lib.md,
# "Who watches the NIC").
idle_beside() {
	vc exec node1 -- "killall psocktest tcpbench; true" >/dev/null 2>&1
	vc exec -d node1 -- "psrun --hal $1 psocktest server $2 > /tmp/idle-$1.srv 2>&1" >/dev/null
	vc exec -d node1 -- "psrun --hal $1 timeout 120 tcpbench server -p $(($2 + 1)) -1 > /dev/null 2>&1" >/dev/null
	retry 20 vc exec node1 -- "grep -q listening /tmp/idle-$1.srv" || return 1
	vc exec node0 -- "rm -f /tmp/idle.in /tmp/idle.stop /tmp/idle-$1.dbg /tmp/idle-$1.out && mkfifo /tmp/idle.in" || return 1
	vc exec -d node0 -- "PS_SOCK_DEBUG=/tmp/idle-$1.dbg psrun --hal $1 psocktest client node1 $2 idle < /tmp/idle.in > /tmp/idle-$1.out 2>&1" >/dev/null
	# the fifo's writer: stdin ends when it goes
	vc exec -d node0 -- "exec 3> /tmp/idle.in; until [ -e /tmp/idle.stop ]; do sleep 0.2; done" >/dev/null
	retry 20 vc exec node0 -- "grep -q 'speaks ports' /tmp/idle-$1.dbg" || return 1
	vc exec -t 120 node0 -- "psrun --hal $1 tcpbench client node1 -p $(($2 + 1)) --pingpong -s 8 -n 2000 -w 100" || return 1
	vc exec node0 -- "touch /tmp/idle.stop" || return 1
	retry 20 vc exec node0 -- "grep -q 'stats:' /tmp/idle-$1.dbg" || return 1
	vc exec node0 -- "cat /tmp/idle-$1.out; grep 'stats:' /tmp/idle-$1.dbg" > "$tmp/idle-$1" || return 1
	cat "$tmp/idle-$1"
	grep -q '^ok   idle:' "$tmp/idle-$1" &&
		awk '/stats:/ { s = $0; sub(/.*slept /, "", s); split(s, a, "[ ,)]");
			b = $0; sub(/.*doorbell alone /, "", b); split(b, c, "[ ,)]");
			ok = a[1] + 0 < 500 && c[1] + 0 > 0 }
			END { exit !ok }' "$tmp/idle-$1"
}
for hal in ps1 myri; do
	check "$mode: $hal: a program asleep beside a busy one sleeps on its doorbell, not woken by the other's packets" \
		idle_beside "$hal" $((7340 + 10 * ${#hal}))
done

# Both ends on node0: by default the kernel's loopback (the faster local
# path here), with PS_SOCK_LOCAL=1 through the node's pool.
run_self() {
	vc exec node0 -- "killall psocktest; true" >/dev/null 2>&1
	vc exec -d node0 -- "PS_SOCK_DEBUG=1 $3 psocktest server $2 > /tmp/$1.srv 2>&1" >/dev/null
	retry 20 vc exec node0 -- "grep -q listening /tmp/$1.srv" || return 1
	vc exec -t 180 node0 -- "PS_SOCK_DEBUG=1 $3 psocktest client $4 $2 2> /tmp/$1.dbg" > "$tmp/$1.out" ||
		{ grep -v '^ok ' "$tmp/$1.out"; return 1; }
	diff "$tmp/kernel.out" "$tmp/$1.out"
}
check "$mode: same node, default: every case as on the kernel" \
	run_self self 7320 "psrun --hal ps1" 127.0.0.1
check_fails "$mode: same node, default: the kernel's loopback carried it" \
	vc exec node0 -- "grep -q 'sends over ports' /tmp/self.dbg"
self_pool() {
	run_self pool 7330 "PS_SOCK_LOCAL=1 psrun --hal myri" node0 &&
		vc exec node0 -- "grep -q 'speaks ports' /tmp/pool.dbg && grep -q 'a peer on this node' /tmp/pool.dbg"
}
check "$mode: same node, PS_SOCK_LOCAL=1: every case as on the kernel, over the node's pool" self_pool
# A node without its NIC's driver: the library passes everything through.
check "$mode: node1 without ps1.ko" vc exec node1 -- "rmmod ps1 && ! test -e /dev/ps1"
check "$mode: no board: psocktest under psrun: every case ok, on the kernel" \
	run_pair noboard 7310 "psrun --hal ps1"
check "$mode: no board: the same lines, no connection on ports" sh -c "
	diff '$tmp/kernel.out' '$tmp/noboard.out' &&
	! vc exec node0 -- \"grep -q 'sends over ports' /tmp/noboard.dbg\""

# nodedeath: the server on node1 waits for ever; node1 restarts while the
# client on node0 waits in a read on a connection over myrinet.
node_dies() {
	vc exec node1 -- "killall psocktest; true" >/dev/null 2>&1
	vc exec -d node1 -- "psrun --hal myri psocktest server 7380 > /tmp/nd.srv 2>&1" >/dev/null
	retry 20 vc exec node1 -- "grep -q listening /tmp/nd.srv" || return 1
	vc exec -d node0 -- "PS_SOCK_DEBUG=/tmp/nd.dbg psrun --hal myri psocktest client node1 7380 nodedeath > /tmp/nd.out 2>&1" >/dev/null
	retry 30 vc exec node0 -- "grep -q '^ok   nodedeath: 100 bytes' /tmp/nd.out" || return 1
	vc exec node0 -- "grep -q 'speaks ports' /tmp/nd.dbg" || return 1
	vc reboot node1 > /dev/null || return 1
	retry 120 vc exec node0 -- "grep -q 'nodedeath: then' /tmp/nd.out" || return 1
	vc exec node0 -- "cat /tmp/nd.out"
	vc exec node0 -- "grep -q '^ok   nodedeath: then the read ends' /tmp/nd.out"
}
check "$mode: myri: a reader whose peer's node restarts gets the end, not a hang" node_dies
