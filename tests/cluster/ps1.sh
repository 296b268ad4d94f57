#!/bin/sh
# ParaStation board on a 2x2 torus: device, ps1 fabric and ps1.ko together.
# tests/cluster/ps1.sh direct|libvirt
set -u
. "$(dirname "$0")/../lib.sh"
cluster_test t-ps1 "${1:-direct}"
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

# The hardware barrier: every node takes part in sync line 0.
check "$mode: 4-node hardware barrier completes" vc exec -t 60 all -- ps1test barrier 0 20000

# A process that dies in the middle of a packet leaves a usable board.
check "$mode: crash in the middle of a TX packet" sh -c "$VCLUSTER exec 0 -- ps1test crash-tx 1; true"
check "$mode: the board works after the crash" pingpong 0 1 10 8

# Corruption on link 0>1 is detected by parity/CRC, never delivered.
counter() { # NODE NAME
	vc exec "$1" -- cat /sys/bus/pci/drivers/ps1/0000:*/counters/"$2"
}
rx_before=$(counter 1 rx_packets)
parity_before=$(counter 1 parity_errors)
vc fault add '0>1 corrupt p=1 bits=1' > /dev/null
vc exec -d 1 -- 'ps1test expect-err 0x10000 20000 > /tmp/err.log 2>&1' > /dev/null
vc exec 0 -- ps1test send 1 3 > /dev/null
err_seen() { vc exec 1 -- cat /tmp/err.log | grep -q '^ok'; }
check "$mode: a corrupted packet raises the parity error" retry 20 err_seen
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

check "$mode: guest dmesg is clean" vc exec all -- ps1test dmesg
vc down > /dev/null
check_fails "$mode: down leaves no QEMU" pgrep -f "vc-$name-node"
