#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# ParaStation board on a 2x2 torus: device, ps1 fabric and ps1.ko together.
# tests/cluster/ps1.sh direct|libvirt
set -u
. "$(dirname "$0")/../lib.sh"
cluster_test t-ps1 "${1:-direct}"
plan 18
boot_cluster "ps1 2x2 torus" -n 4 --fabric ps1 --topology torus:2x2

out=$(vc exec all -- 'cat /sys/bus/pci/drivers/ps1/0000:*/state /sys/bus/pci/drivers/ps1/0000:*/topology' | sort | tr '\n' ' ')
case $out in
*"node0: up"*"node1: up"*"node2: up"*"node3: up"*) pass "$mode: every board links up with its routes" ;;
*) fail "$mode: every board links up with its routes" "$out" ;;
esac
check "$mode: bad mmaps and ioctls fail with clear errors" vc exec 1 -- ps1test bad
check "$mode: the message pool is shared" vc exec 2 -- ps1test pool
check "$mode: poll and wait on an idle board" vc exec 3 -- ps1test poll

# Ping-pong across the torus: one hop (0->1), two hops (0->3), and back.
pingpong() { # FROM TO ROUNDS WORDS
	vc exec -d "$2" -- "ps1test echo $3 30000 > /tmp/echo.log 2>&1" >/dev/null
	vc exec "$1" -- ps1test ping "$2" "$3" "$4" >/dev/null &&
		retry 10 vc exec "$2" -- "grep -q '^ok' /tmp/echo.log"
}
check "$mode: ping-pong node0 <-> node1 (1 hop, 16 words)" pingpong 0 1 50 16
check "$mode: ping-pong node0 <-> node3 (2 hops, 127 words)" pingpong 0 3 50 127
check "$mode: ping-pong node2 <-> node1" pingpong 2 1 20 64

counter() { # NODE NAME
	vc exec "$1" -- cat /sys/bus/pci/drivers/ps1/0000:*/counters/"$2"
}

# The hardware barrier: every node takes part in sync line 0.  A node that
# arrived before another had joined would complete the line without it,
# so they arrive only once fabricd counts all 4 participants.
bar_line() { vc fabric counters | sed -n 's/^barrier 0 participants=\([0-9]*\) arrived=[0-9]* completions=\([0-9]*\)$/\1 \2/p'; }
all_joined() { [ "$(bar_line | cut -d' ' -f1)" = 4 ]; }
barrier() {
	_c0=$(bar_line | cut -d' ' -f2)
	vc exec all -- "rm -f /tmp/bgo /tmp/bar.log" > /dev/null
	vc exec -d all -- "ps1test barrier 0 60000 /tmp/bgo > /tmp/bar.log 2>&1; echo exit \$? >> /tmp/bar.log" > /dev/null
	retry 60 all_joined || echo "fabricd: barrier 0 participants and completions: $(bar_line)"
	vc exec all -- "touch /tmp/bgo" > /dev/null
	retry 90 vc exec all -- "grep -q '^exit ' /tmp/bar.log"
	_o=$(vc exec all -- cat /tmp/bar.log 2>&1)
	_c1=$(bar_line | cut -d' ' -f2)
	echo "$_o" | grep -v '^node[0-3]: ok '
	echo "barrier 0 completions ${_c0:-?} -> ${_c1:-?}"
	[ "$(echo "$_o" | grep -c '^node[0-3]: exit 0$')" = 4 ] && ! echo "$_o" | grep -q FAIL &&
		[ "${_c1:-0}" = $((${_c0:-0} + 1)) ]
}
check "$mode: 4-node hardware barrier completes, once, for all 4" barrier

# A process that dies in the middle of a packet: abort() after the header
# and 2 of its 10 words.  At the last close the driver finds the packet
# half written (PKT_STATE 8 words), resets the board and reloads its
# routes; nothing reaches node1, and the board works after it.
cr0=$(counter 0 cleanup_resets)
rx0=$(counter 1 rx_packets)
out=$(vc exec 0 -- ps1test crash-tx 1 2>&1)
rc=$?
[ "$rc" = 134 ] && echo "$out" | grep -q '^crash-tx: SREG 0x[0-9a-f]* TX_FREE [0-9]*, dying$' &&
	pass "$mode: crash in the middle of a TX packet: the process died by SIGABRT" ||
	fail "$mode: crash in the middle of a TX packet: the process died by SIGABRT" "status $rc, want 134: $out"
cleaned() {
	[ "$(counter 0 cleanup_resets)" = $((cr0 + 1)) ] &&
		vc exec 0 -- "grep -q '^up' /sys/bus/pci/drivers/ps1/0000:*/state &&
			dmesg | grep 'last user left the board busy' | tail -n 1 | grep -q 'PKT_STATE 0x00000008,'"
}
if retry 10 cleaned && [ "$(counter 1 rx_packets)" = "$rx0" ]; then
	pass "$mode: the driver reset the board it left half a packet in (cleanup_resets +1), nothing reached node1"
else
	fail "$mode: the driver reset the board it left half a packet in (cleanup_resets +1), nothing reached node1" \
		"cleanup_resets $cr0 -> $(counter 0 cleanup_resets), node1 rx_packets $rx0 -> $(counter 1 rx_packets): $(vc exec 0 -- "dmesg | grep 'left the board busy' | tail -n 1; cat /sys/bus/pci/drivers/ps1/0000:*/state" 2>&1 | tr '\n' ' ')"
fi
check "$mode: the board works after the crash" pingpong 0 1 10 8

# Corruption on link 0>1 is detected by parity/CRC, never delivered.
rx_before=$(counter 1 rx_packets)
parity_before=$(counter 1 parity_errors)
vc fault add '0>1 corrupt p=1 bits=1' > /dev/null
vc exec -d 1 -- 'ps1test expect-err 0x10000 20000 > /tmp/err.log 2>&1; echo exit $? >> /tmp/err.log' > /dev/null
vc exec 0 -- ps1test send 1 3 > /dev/null
# every check of expect-err (error seen, counted, cleared) passed
err_seen() { vc exec 1 -- "grep -qx 'exit 0' /tmp/err.log && ! grep -q '^FAIL' /tmp/err.log"; }
err_log() { retry 20 err_seen || { vc exec 1 -- cat /tmp/err.log; return 1; }; }
check "$mode: a corrupted packet raises the parity error" err_log
# The sender may exit before its TX FIFO drains: wait for all three.
parity_is() { [ "$(counter 1 parity_errors)" -eq "$1" ]; }
retry 15 parity_is $((parity_before + 3))
rx_after=$(counter 1 rx_packets)
parity_after=$(counter 1 parity_errors)
if [ "$rx_after" = "$rx_before" ] && [ "$parity_after" -eq $((parity_before + 3)) ]; then
	pass "$mode: the 3 corrupted packets were counted, none delivered"
else
	fail "$mode: the 3 corrupted packets were counted, none delivered" \
		"rx $rx_before->$rx_after parity $parity_before->$parity_after"
fi
vc fault clear > /dev/null

# drvfuzz: seeded random ioctls, ioctl numbers, mmaps, reads and writes on
# /dev/ps1 as root (the device is root-only), with another root process
# holding the board open; every mmap that works must be one the driver gave.
fuzz_ops=${PS1_FUZZ_OPS:-10000}
fuzz_seed=${PS1_FUZZ_SEED:-17}
out=$(vc exec -t 600 2 -- "drvfuzz ps1 $fuzz_seed $fuzz_ops 0" 2>&1)
rc=$?
[ "$rc" = 0 ] && echo "$out" | grep -q "^ok   drvfuzz ps1: $fuzz_ops ops, seed $fuzz_seed, uid 0" &&
	pass "$mode: drvfuzz ps1: $fuzz_ops random ioctls, mmaps, reads and writes (seed $fuzz_seed): nothing mapped it was not given" ||
	fail "$mode: drvfuzz ps1 (seed $fuzz_seed, $fuzz_ops ops)" "exit $rc: $(echo "$out" | tail -n 4 | tr '\n' ' ')"
check "$mode: the board works after drvfuzz" pingpong 2 3 10 8

check "$mode: guest dmesg is clean" vc exec all -- ps1test dmesg
vc down > /dev/null
check_fails "$mode: down leaves no QEMU" pgrep -f "vc-$name-node"
