#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Lock-step runs (docs/lockstep.md): tests/cluster/lockstep.sh direct|libvirt
#   - a 3-node run on each fabric kind (ps1, myrinet, telegraphos), replayed:
#     the same exit codes, outputs and trace digest;
#   - myrinet under 5 % loss and 1 % corruption: the trace records the
#     drops and the corrupted copies, RDP hides them, a replay is
#     identical, another seed gives another digest, and one rule changed
#     is reported at the first frame where the traces part;
#   - ps1 under the same faults (no retransmission): node0 counts what
#     came, never a damaged word, and the replay is identical;
#   - the eth LAN in step beside ps1: kernel ping, replayed identically;
#   - the traces open in tshark with virtual times;
#   - up --lockstep: an interactive cluster whose nodes answer exec.
set -u
. "$(dirname "$0")/../lib.sh"
cluster_test t-ls "${1:-direct}"
plan 21

# lsrun DIR KIND [RUN-ARGS...] -- CMD: a 3-node lock-step run into DIR
lsrun() {
	_d=$1 _k=$2; shift 2
	# shellcheck disable=SC2086 # $flags is empty or one word
	vc run --name "$name" $flags --lockstep -n 3 --fabric "$_k" --out "$_d" "$@" \
		> "$_d.log" 2>&1
}
# exits_ok DIR: every node of the run exited 0
exits_ok() { [ "$(grep -c '^node[0-9] exit 0$' "$1/result")" = 3 ]; }
digest() { sed -n 's/^digest //p' "$1/result"; }
# replayed DIR: `vcluster replay` says identical
replayed() {
	vc replay --name "$name" "$1" > "$1.replay.log" 2>&1
	grep -qx 'replay: identical' "$1.replay.log"
}

# --- ps1: node1 and node2 ping node0 in turn; nothing lost, all exit 0
ps1cmd='case $VC_NODE in
0) ps1test echo 40 60000 ;;
1) ps1test ping 0 20 16 ;;
2) sleep 1; ps1test ping 0 20 64 ;;
esac'
# a --timeout past 2^31 us (once cut the run short at once)
lsrun "$tmp/ps1" ps1 --seed 3 --timeout 3600 -- "$ps1cmd"
check "$mode: ps1: a 3-node lock-step run (--timeout 3600), every node exits 0" exits_ok "$tmp/ps1"
check "$mode: ps1: its replay is identical" replayed "$tmp/ps1"

# --- myrinet under loss and corruption
cat > "$tmp/faults" <<EOF
# 5 % loss and 1 % single-bit corruption on every link
* drop p=0.05
* corrupt p=0.01 bits=1
EOF
myricmd='case $VC_NODE in
0) myritest echo 60 60000 ;;
*) sleep $VC_NODE; myritest ping 0 30 256 ;;
esac'
lsrun "$tmp/myri" myrinet --seed 11 --faults "$tmp/faults" -- "$myricmd"
check "$mode: myrinet: 5 % loss, 1 % corruption: RDP hides them, every node exits 0" exits_ok "$tmp/myri"
comments() { tshark -r "$1" -T fields -e frame.comment 2>/dev/null; }
ndrop=$(comments "$tmp/myri/trace-myrinet.pcapng" | grep -c 'dropped rule=1')
[ "$ndrop" -gt 0 ] &&
	pass "$mode: myrinet: the trace records $ndrop copies dropped by rule 1" ||
	fail "$mode: myrinet: the trace records dropped copies" "none in $(comments "$tmp/myri/trace-myrinet.pcapng" | wc -l) records"
check "$mode: myrinet: its replay is identical" replayed "$tmp/myri"
lsrun "$tmp/myri8" myrinet --seed 12 --faults "$tmp/faults" -- "$myricmd"
d11=$(digest "$tmp/myri") d12=$(digest "$tmp/myri8")
[ -n "$d11" ] && [ -n "$d12" ] && [ "$d11" != "$d12" ] &&
	pass "$mode: myrinet: another seed gives another digest" ||
	fail "$mode: myrinet: another seed gives another digest" "$d11 / $d12"

# One rule changed (5 % -> 6 % loss): the traces part at the first record
# whose comment or time differs; tshark finds it on its own.
sed 's/drop p=0.05/drop p=0.06/' "$tmp/faults" > "$tmp/faults6"
lsrun "$tmp/myri6" myrinet --seed 11 --faults "$tmp/faults6" -- "$myricmd"
vc trace diff "$tmp/myri" "$tmp/myri6" > "$tmp/diff.log" 2>&1
tfields() { tshark -r "$1" -T fields -e frame.time_epoch -e frame.comment 2>/dev/null; }
tfields "$tmp/myri/trace-myrinet.pcapng" > "$tmp/a.txt"
tfields "$tmp/myri6/trace-myrinet.pcapng" > "$tmp/b.txt"
first=$(cmp "$tmp/a.txt" "$tmp/b.txt" 2>/dev/null | sed -n 's/.* line \([0-9]*\)$/\1/p')
said=$(sed -n 's/.*frame #\([0-9]*\).*/\1/p' "$tmp/diff.log" | head -n 1)
[ -n "$first" ] && [ -n "$said" ] && [ "$said" = "$first" ] &&
	pass "$mode: myrinet: one rule changed is reported at frame #$said, where the traces part" ||
	fail "$mode: myrinet: one rule changed is reported at the right frame" "tshark: line ${first:-none}; vcluster: $(head -n 2 "$tmp/diff.log" | tr '\n' ' ')"
check "$mode: myrinet: replaying the changed run is identical to it" replayed "$tmp/myri6"

# --- ps1 under the same faults: the board has no retransmission, so node0
# counts the packets that came; a damaged one is a parity error, never data
ps1lossy='case $VC_NODE in 0) ps1test collect 200 2000 ;; *) ps1test send 0 100 16 ;; esac'
lsrun "$tmp/ps1f" ps1 --seed 4 --faults "$tmp/faults" -- "$ps1lossy"
got=$(sed -n 's/^collect: \([0-9]*\) of 200 packets.*/\1/p' "$tmp/ps1f/node0.out")
exits_ok "$tmp/ps1f" && [ -n "$got" ] && [ "$got" -lt 200 ] && [ "$got" -gt 100 ] &&
	grep -q '^ok .*(0 bad words)' "$tmp/ps1f/node0.out" &&
	pass "$mode: ps1: 5 % loss, 1 % corruption: $got of 200 packets came, none damaged" ||
	fail "$mode: ps1: under loss and corruption, node0 counts what came" \
		"$(grep -e collect -e FAIL "$tmp/ps1f/node0.out" | head -n 2 | tr '\n' ' ')"
check "$mode: ps1: the lossy run's replay is identical" replayed "$tmp/ps1f"

# --- telegraphos: a remote-write ping-pong between node0 and node1, node2
# reads node0's memory
tgrcmd='case $VC_NODE in
0) tgrbench pp-host write /tmp/pp.seg 40 ;;
1) sleep 2; tgrbench pp-peer write 0 4096 0 40 ;;
2) sleep 3; tgrtest local > /dev/null && echo local ok ;;
esac'
lsrun "$tmp/tgr" telegraphos --seed 5 -- "$tgrcmd"
check "$mode: telegraphos: a 3-node lock-step run, every node exits 0" exits_ok "$tmp/tgr"
check "$mode: telegraphos: its replay is identical" replayed "$tmp/tgr"
lat=$(sed -n 's/^ok .*half round trip \([0-9.]*\) us.*/\1/p' "$tmp/tgr/node0.out")
[ -n "$lat" ] && pass "$mode: telegraphos: remote-write half round trip $lat us in virtual time" ||
	fail "$mode: telegraphos: ping-pong result" "$(head -n 3 "$tmp/tgr/node0.out" | tr '\n' ' ')"

# --- the eth LAN in step beside ps1: kernel ICMP over virtio-net
ethcmd='case $VC_NODE in 0) ping -c 3 node1 ;; 1) ping -c 3 node2 ;; *) sleep 3 ;; esac'
lsrun "$tmp/eth" eth,ps1 --seed 9 -- "$ethcmd"
check "$mode: eth,ps1: kernel ping over the lock-step LAN, every node exits 0" exits_ok "$tmp/eth"
check "$mode: eth,ps1: its replay is identical" replayed "$tmp/eth"

# --- traces: tshark reads them; the times are virtual (seconds of guest
# time since the VMs started, not today's date)
t=$(tshark -r "$tmp/ps1/trace-ps1.pcapng" -T fields -e frame.time_epoch 2>/dev/null | tail -n 1)
n=$(tshark -r "$tmp/ps1/trace-ps1.pcapng" 2>/dev/null | wc -l)
[ "$n" -gt 40 ] && [ "${t%%.*}" -lt 100000 ] &&
	pass "$mode: ps1: tshark reads $n frames, the last at virtual time $t s" ||
	fail "$mode: ps1: tshark reads the trace with virtual times" "frames=$n last=$t"
check "$mode: the run directory keeps each node's output" \
	grep -q 'ping-pong with node 0: 20 rounds' "$tmp/ps1/node1.out"

# --- an interactive lock-step cluster
boot_cluster "lock-step cluster on myrinet" --lockstep -n 2 --fabric myrinet
check "$mode: up --lockstep: exec answers on every node" vc exec all -- true
check "$mode: up --lockstep: fabricd keeps time (lockstep line in status)" \
	sh -c "$VCLUSTER fabric status | grep -q '^lockstep: grant=[1-9]'"
vc down --name "$name" > /dev/null 2>&1
left=$(pgrep -f "vc-$name-node" | wc -l)
[ "$left" = 0 ] && pass "$mode: down leaves no QEMU of a lock-step cluster" ||
	fail "$mode: down leaves no QEMU of a lock-step cluster" "$left left"
