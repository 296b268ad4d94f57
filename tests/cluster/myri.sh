#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The Myrinet card on 4 nodes: device (lanai), fabric (myrinet kind),
# firmware (MCP, RDP), driver (myri.ko) and PS_HAL=myri together.
#   - every card up with the routes vcluster handed over through fw_cfg;
#     myritest info and bad;
#   - 100 MiB all-to-all (ports over PS_HAL=myri, checksummed) while the
#     fabric drops 5 % of the packets and corrupts 1 %: all there once and
#     in order, RDP retransmitted, the CRC caught the corruption;
#   - node2 rebooted while the others stream to each other and to it: the
#     survivors' streams intact, they see the restart (reconnects), and
#     node2 exchanges with all of them once it is back;
#   - firmware that loops or reaches outside SRAM is stopped with a clear
#     message in dmesg, the card is dead and contexts fail, and a reset
#     with myri/mcp.bin brings traffic back;
#   - a receiver that takes nothing (a stopped process) holds up only the
#     sends to it: node0 floods it and still serves node2 on another
#     context; the flood fails with NO_ROOM after refuse_us;
#   - clean guest dmesg, no QEMU left after down.
# tests/cluster/myri.sh direct|libvirt
# VCLUSTER_SEED seeds fabricd's fault PRNG and psstress's sizes (default:
# the time; printed).
set -u
. "$(dirname "$0")/../lib.sh"
cluster_test t-myri "${1:-direct}"
seed=${VCLUSTER_SEED:-$(date +%s)}
export VCLUSTER_SEED=$seed
echo "  seed $seed (VCLUSTER_SEED=$seed repeats the fault PRNG and the message sizes)"
start=$(date +%s)
# libvirt mode checks one more thing: its domains are gone after down
plan $((46 + $(test "$mode" = libvirt && echo 1 || echo 0)))
boot_cluster "4 nodes on eth and myrinet" -n 4 --fabric eth,myrinet

sysfs=/sys/class/misc/myri0/device
mf="--fabric myrinet"
# shellcheck disable=SC2086 # $mf is two words
fab() { vc fabric $mf "$@"; }
ps="PS_HAL=myri psstress -s $seed"
since() { echo "$(($(date +%s) - $1)) s"; }

# The ok/FAIL lines of a tool, FAIL lines last (check shows the tail).
report() { echo "$1" | grep -v FAIL; echo "$1" | grep FAIL | head -n 8; }

# ---------------------------------------------------------------- cards
out=$(vc exec all -- "cat $sysfs/state" | sort | tr '\n' ' ')
[ "$out" = "node0: up node1: up node2: up node3: up " ] &&
	pass "$mode: every card is up (driver state)" ||
	fail "$mode: every card is up (driver state)" "$out"

fab seed > "$tmp/seed"
[ "$(cat "$tmp/seed")" = "$(printf 'seed 0x%016x' "$seed")" ] &&
	pass "$mode: the myrinet fabric runs with seed $seed" ||
	fail "$mode: the myrinet fabric runs with seed $seed" "$(cat "$tmp/seed")"

# Each node's sysfs routes are fabricd's table for that source, as
# vc-sysinit copied them from fw_cfg.
routes_ok() {
	fab table | sed -n 's/^\([0-9]*\)>\([0-9]*\) \([0-9a-f]*\)$/node\1: \2 \3/p' |
		sort > "$tmp/table"
	vc exec all -- "cat $sysfs/routes" | sort > "$tmp/routes"
	[ "$(wc -l < "$tmp/table")" = 16 ] && cmp -s "$tmp/table" "$tmp/routes" ||
		{ diff "$tmp/table" "$tmp/routes"; return 1; }
}
check "$mode: every card has fabricd's routes (fw_cfg, vc-sysinit)" routes_ok
# vc-sysinit says "up" without errors only if no route was refused.
consoles_ok() {
	for _n in 0 1 2 3; do
		vc console --no-follow "$_n" | grep -q "vcluster: node$_n up, ip" ||
			{ vc console --no-follow "$_n" | grep 'vcluster:' | tail -n 3; return 1; }
	done
}
check "$mode: every node booted without errors (no route refused)" consoles_ok

info_ok() {
	_o=$(vc exec all -- myritest info) || { echo "$_o"; return 1; }
	echo "$_o"
	[ "$(echo "$_o" | grep -c '^node\([0-3]\): version .* state up node \1 nodes 4 ')" = 4 ] &&
		[ "$(echo "$_o" | grep -c 'fw myri/mcp.bin mcp "mcp" abi 1 loads 1 ')" = 4 ]
}
check "$mode: myritest info: up, node i of 4, mcp.bin loaded once" info_ok
check "$mode: myritest bad: bad ioctls, mmaps and slots fail cleanly on every node" \
	vc exec -t 120 all -- myritest bad

# Pairwise exchange over PS_HAL=myri (the paper's benchmark): the same
# pstest command on nodes A and B at once, each naming the other; both
# send, then both receive and check the peer's data.  Both must say "ok".
pairwise() { pstest_pairwise "PS_HAL=myri" "$@"; }
check "$mode: PS_HAL=myri hal pairwise exchange node0 <-> node1 (64 bytes), both sides ok" \
	pairwise 0 1 hal-pairwise 200 64
check "$mode: PS_HAL=myri hal pairwise exchange node2 <-> node3 (20000 bytes: bursts of 3 packets)" \
	pairwise 2 3 hal-pairwise 50 20000
check "$mode: PS_HAL=myri rawdata pairwise exchange node0 <-> node1 (64 bytes), both sides ok" \
	pairwise 0 1 raw-pairwise 200 64
check "$mode: PS_HAL=myri rawdata pairwise exchange node2 <-> node3 (20000 bytes: 3 fragments)" \
	pairwise 2 3 raw-pairwise 50 20000
check "$mode: PS_HAL=myri ports pairwise exchange node0 <-> node1 (64 bytes), both sides ok" \
	pairwise 0 1 port-pairwise 5 200 64
check "$mode: PS_HAL=myri ports pairwise exchange node2 <-> node3 (20000 bytes: 3 fragments)" \
	pairwise 2 3 port-pairwise 5 50 20000

# counters FILE: every node's MCP counters we look at, "nodeI: NAME VALUE".
counters() {
	vc exec all -- "cd $sysfs/counters && for c in sent retransmitted timeouts dup_drops crc_drops reconnects; do echo \$c \$(cat \$c); done" > "$1"
}
# delta NAME BEFORE AFTER [NODE...]: the sum over the nodes (default all)
# of the counter's growth.
delta() {
	_d_name=$1 _d_a=$2 _d_b=$3; shift 3
	_d_nodes=${*:-0 1 2 3}
	_d_sum=0
	for _d_n in $_d_nodes; do
		_d_x=$(sed -n "s/^node$_d_n: $_d_name //p" "$_d_a")
		_d_y=$(sed -n "s/^node$_d_n: $_d_name //p" "$_d_b")
		_d_sum=$((_d_sum + ${_d_y:-0} - ${_d_x:-0}))
	done
	echo "$_d_sum"
}
# rule ACTION: "matched fired" of the myrinet fault rule with that action.
rule() { sed -n "s/^[0-9]* \* $1 .* matched=\([0-9]*\) fired=\([0-9]*\)$/\1 \2/p" "$tmp/rules"; }
# between X LO HI: LO <= X <= HI (decimals).
between() { awk -v x="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(x >= lo && x <= hi) }'; }

# ------------------------------------------------ 100 MiB through faults
t0=$(date +%s)
counters "$tmp/c0"
# shellcheck disable=SC2086
vc fault $mf add '* drop p=0.05' > /dev/null &&
	vc fault $mf add '* corrupt p=0.01 bits=1' > /dev/null
check "$mode: fault rules on the myrinet fabric: drop 5 %, corrupt 1 %" \
	sh -c "$VCLUSTER fault $mf list | grep -c '^[0-9]* \* ' | grep -qx 2"
# -v 100M: as many rounds as make 100 MiB over the 12 pairs of nodes.
a2a=$(vc exec -t 400 all -- "$ps -t 300 -v 100M all2all 4 1 1" 2>&1)
# shellcheck disable=SC2086
vc fault $mf list > "$tmp/rules"
counters "$tmp/c1"
report "$a2a"
[ "$(echo "$a2a" | grep -c '^node[0-3]: ok ')" = 8 ] && ! echo "$a2a" | grep -q FAIL &&
	pass "$mode: all-to-all through drops and corruption: every message once, in order, checksums right" ||
	fail "$mode: all-to-all through drops and corruption: every message once, in order, checksums right" \
		"$(echo "$a2a" | grep FAIL | head -n 3 | tr '\n' ' ')"
# The receivers' bytes add up to the volume planned from the seed.
planned=$(echo "$a2a" | sed -n 's/^node0: ok .*(\([0-9]*\) bytes in all pairs).*/\1/p')
got=$(echo "$a2a" | sed -n 's/^node[0-3]: ok   all2all: .*: received [0-9]* of [0-9]* messages (\([0-9]*\) bytes).*/\1/p' |
	awk '{ s += $1 } END { print s + 0 }')
[ "${planned:-0}" -ge 104857600 ] && [ "$got" = "$planned" ] &&
	pass "$mode: the all-to-all moved $got bytes (>= 100 MiB)" ||
	fail "$mode: the all-to-all moved >= 100 MiB" "received $got of ${planned:-?} planned"
echo "  all-to-all with faults: $(since "$t0")"
set -- $(rule drop)
dm=${1:-0} df=${2:-0}
set -- $(rule corrupt)
cm=${1:-0} cf=${2:-0}
echo "  drop rule: $df of $dm packets; corrupt rule: $cf of $cm"
[ "$dm" -gt 0 ] && between "$((df * 10000 / dm))" 400 600 &&
	[ "$cm" -gt 0 ] && between "$((cf * 10000 / cm))" 50 150 &&
	pass "$mode: the rules fired on the myrinet links as asked (about 5 % and 1 %)" ||
	fail "$mode: the rules fired on the myrinet links as asked (about 5 % and 1 %)" \
		"drop $df of $dm, corrupt $cf of $cm"
retx=$(delta retransmitted "$tmp/c0" "$tmp/c1")
sent=$(delta sent "$tmp/c0" "$tmp/c1")
tmo=$(delta timeouts "$tmp/c0" "$tmp/c1")
dup=$(delta dup_drops "$tmp/c0" "$tmp/c1")
crc=$(delta crc_drops "$tmp/c0" "$tmp/c1")
echo "  MCPs: sent $sent, retransmitted $retx, timeouts $tmo, dup_drops $dup, crc_drops $crc"
[ "$retx" -gt 0 ] && pass "$mode: RDP retransmitted ($retx packets over all nodes)" ||
	fail "$mode: RDP retransmitted" "retransmitted grew by $retx"
# Every CRC drop is a packet the corrupt rule changed (some of those are
# lost to congestion after the rule, so not all arrive).
[ "$crc" -gt 0 ] && [ "$crc" -le "$cf" ] &&
	pass "$mode: the cards' CRC caught the corrupted packets ($crc crc_drops, $cf corrupted)" ||
	fail "$mode: the cards' CRC caught the corrupted packets" "crc_drops grew by $crc, corrupt rule fired $cf"
# shellcheck disable=SC2086
vc fault $mf clear > /dev/null
check "$mode: fault clear leaves no rule" \
	sh -c "test -z \"\$($VCLUSTER fault $mf list)\""
check_fails "$mode: a fault rule without --fabric on two fabrics is refused" \
	vc fault add '* drop p=1'
check "$mode: ... and reaches neither fabric" \
	sh -c "test -z \"\$($VCLUSTER fault --fabric eth list)\$($VCLUSTER fault $mf list)\""

# ------------------------------------------------ node2 reboots mid-stream
# Nodes 0, 1 and 3 run an all-to-all among themselves (ports, HAL
# context 0), and each streams 8 KiB packets to context 1 of node2
# (myritest).  Once both flow, node2 is reset.  What was on its way to
# or from node2 may be lost (RDP fails it with PEER_RESET, or PEER_DEAD
# while node2 boots, or sends it again to node2's new MCP, where context
# 1 is closed), so the streams to node2 are only bounded; the
# survivors' own streams must come through whole.  All of them stream
# until /tmp/stop exists on their node, made only once the survivors
# moved 1 MiB more after fabricd saw the reset and node2 is back: they
# overlap it by construction, however fast the host.  node2 says stop
# over eth (nc): while PS_HAL=myri streams, a node's guest agent does not
# answer, so vc exec cannot make the file there.
t0=$(date +%s)
# linkbytes LINK...: bytes delivered on these myrinet links so far
# (printf: awk prints a sum above 2^31 as 1.5e+10).
linkbytes() {
	fab counters > "$tmp/fc"
	for _l in "$@"; do
		sed -n "s/^link $_l state=[a-z]* frames=[0-9]* bytes=\([0-9]*\) .*/\1/p" "$tmp/fc"
	done | awk '{ s += $1 } END { printf "%.0f\n", s }'
}
node2_resets() { fab counters | sed -n 's/^node 2 .* resets=\([0-9]*\) .*/\1/p'; }
surv="0>1 1>0 0>3 3>0 1>3 3>1"
to2="0>2 1>2 3>2"
old2=$(vc exec 2 -- cat /proc/sys/kernel/random/boot_id)
counters "$tmp/r0"
r2=$(node2_resets)
b0=$(linkbytes $surv)
t2=$(linkbytes $to2)
vc exec 0,1,3 -- "rm -f /tmp/stop" > /dev/null
vc exec -d 0,1,3 -- "nc -l -p 5999 | { read -r _w; touch /tmp/stop; }" > /dev/null
vc exec -d 2 -- "myritest recv 100000 60000 > /tmp/recv.log 2>&1" > /dev/null
vc exec -d 0,1,3 -- "myritest send 2 128 8192 /tmp/stop > /tmp/send2.log 2>&1; echo exit \$? >> /tmp/send2.log" > /dev/null
vc exec -t 400 0,1,3 -- "$ps -t 300 -u /tmp/stop all2all 0,1,3 1 1" > "$tmp/surv" 2>&1 &
a2a_pid=$!
# Reset node2 once 2 MiB have crossed among the survivors and 1 MiB to
# node2 (at most 60 s).
flowing() { [ $(($(linkbytes $surv) - b0)) -ge 2097152 ] && [ $(($(linkbytes $to2) - t2)) -ge 1048576 ]; }
retry 60 flowing
b1=$(linkbytes $surv)
vc reboot 2 > "$tmp/reboot" 2>&1 &
rb_pid=$!
# fabricd counts the card's HELLO after the reset: from then on node2 is
# gone.
reset_seen() { [ "$(node2_resets)" -gt "$r2" ]; }
retry 60 reset_seen && reset_ok=1 || reset_ok=0
b2=$(linkbytes $surv)
# 1 MiB more among the survivors after the reset (at most 60 s); once
# node2 is back, it tells them to stop
moved_after() { [ $(($(linkbytes $surv) - b2)) -ge 1048576 ]; }
retry 60 moved_after
wait "$rb_pid"
rb_rc=$?
vc exec 2 -- 'for n in 0 1 3; do echo stop | nc -w 5 node$n 5999 || exit 1; done' > /dev/null 2>&1 ||
	vc exec 0,1,3 -- "touch /tmp/stop" > /dev/null 2>&1
wait "$a2a_pid"
b3=$(linkbytes $surv)
echo "  survivors' links: $(((b1 - b0) / 1024)) KiB before node2's reset, $(((b3 - b2) / 1024)) KiB after it"
[ "$rb_rc" = 0 ] && grep -Eq '^node2: rebooted in [0-9.]+ s$' "$tmp/reboot" &&
	pass "$mode: node2 was reset and booted again ($(cat "$tmp/reboot"))" ||
	fail "$mode: node2 was reset and booted again" "rc=$rb_rc $(tail -n 3 "$tmp/reboot" | tr '\n' ' ')"
[ "$reset_ok" = 1 ] && [ $((b1 - b0)) -ge 2097152 ] && [ $((b3 - b2)) -ge 1048576 ] &&
	pass "$mode: the survivors streamed to each other across node2's reset" ||
	fail "$mode: the survivors streamed to each other across node2's reset" \
		"reset seen by fabricd: $reset_ok, bytes before $((b1 - b0)), after $((b3 - b2))"
surv_out=$(cat "$tmp/surv")
report "$surv_out"
[ "$(echo "$surv_out" | grep -c '^node[013]: ok ')" = 6 ] && ! echo "$surv_out" | grep -q FAIL &&
	pass "$mode: the survivors' streams among themselves came through whole, once, in order" ||
	fail "$mode: the survivors' streams among themselves came through whole, once, in order" \
		"$(echo "$surv_out" | grep FAIL | head -n 3 | tr '\n' ' ')"
new2=$(vc exec 2 -- cat /proc/sys/kernel/random/boot_id)
[ -n "$new2" ] && [ "$new2" != "$old2" ] && pass "$mode: node2 runs a new boot" ||
	fail "$mode: node2 runs a new boot" "boot_id '$old2' -> '$new2'"
node2_ok() {
	_o=$(vc exec 2 -- myritest info) || return 1
	echo "$_o"
	echo "$_o" | grep -q 'state up node 2 nodes 4 ' &&
		echo "$_o" | grep -q 'fw myri/mcp.bin mcp "mcp" abi 1 loads 1 ' &&
		routes_ok
}
check "$mode: node2's driver loaded the MCP again at boot, with its routes" node2_ok
# The streams to node2 end once told (node2 is back by then): how much of
# them was lost is by design, but every send must come back, sent or
# failed, within 30 s of the stop (myritest send), not hang.
streams_ended() {
	retry 45 vc exec 0,1,3 -- "grep -q '^exit ' /tmp/send2.log" &&
		vc exec 0,1,3 -- "grep -qx 'exit 0' /tmp/send2.log && ! grep -q '^FAIL' /tmp/send2.log"
}
check "$mode: the streams to node2 ended (lost packets failed, not hung)" streams_ended
echo "  streams to node2: $(vc exec 0,1,3 -- cat /tmp/send2.log 2>&1 | tr '\n' ' ')"
# A fresh exchange of every node with every other, node2 included.
a2a=$(vc exec -t 300 all -- "$ps -t 200 -v 8M all2all 4 1 1" 2>&1)
report "$a2a"
[ "$(echo "$a2a" | grep -c '^node[0-3]: ok ')" = 8 ] && ! echo "$a2a" | grep -q FAIL &&
	pass "$mode: after its reboot node2 exchanges with every node (all-to-all, 8 MiB)" ||
	fail "$mode: after its reboot node2 exchanges with every node (all-to-all, 8 MiB)" \
		"$(echo "$a2a" | grep FAIL | head -n 3 | tr '\n' ' ')"
counters "$tmp/r1"
seen=""
for n in 0 1 3; do
	[ "$(delta reconnects "$tmp/r0" "$tmp/r1" "$n")" -gt 0 ] && seen="$seen $n"
done
[ "$seen" = " 0 1 3" ] &&
	pass "$mode: every survivor saw node2 restart (counters/reconnects grew on nodes 0, 1, 3)" ||
	fail "$mode: every survivor saw node2 restart (counters/reconnects grew on nodes 0, 1, 3)" \
		"grew on:${seen:- none}"
echo "  reboot phase: $(since "$t0")"

# ------------------------------------------------------ broken firmware
t0=$(date +%s)
check "$mode: firmware that loops forever: card dead (watchdog), contexts fail cleanly, mcp.bin revives it" \
	vc exec -t 60 1 -- myritest firmware myri/mcp-loop.bin watchdog
check "$mode: firmware that reaches outside SRAM: card dead, contexts fail cleanly, mcp.bin revives it" \
	vc exec -t 60 1 -- myritest firmware myri/mcp-wild.bin "load outside SRAM"
vc exec 1 -- dmesg > "$tmp/dmesg1" 2>&1
check "$mode: dmesg: the watchdog stopped the looping MCP, with its pc" \
	grep -Eq 'myri .*: MCP stopped by the watchdog \(loops without sleeping\) at pc 0x[0-9a-f]{8}$' "$tmp/dmesg1"
check "$mode: dmesg: the MCP halted on a load outside SRAM, with pc and address" \
	grep -Eq 'myri .*: MCP halted: load outside SRAM at pc 0x[0-9a-f]{8}, address 0x40000000$' "$tmp/dmesg1"
# A corrupt image (4 bytes changed after the header): refused, card not up.
corrupt_fw() {
	vc exec 1 -- "cp /lib/firmware/myri/mcp.bin /lib/firmware/myri/corrupt.bin &&
		printf '\\001\\002\\003\\004' | dd of=/lib/firmware/myri/corrupt.bin bs=1 seek=300 conv=notrunc 2>/dev/null &&
		! echo myri/corrupt.bin 2>/dev/null > $sysfs/reset &&
		! grep -q '^up' $sysfs/state &&
		dmesg | grep -q 'corrupt.bin: bad CRC' &&
		echo myri/mcp.bin > $sysfs/reset"
}
check "$mode: a corrupt firmware image is refused (bad CRC in dmesg), mcp.bin loads after it" corrupt_fw
check "$mode: node1's card is up again on myri/mcp.bin" \
	vc exec 1 -- "test \"\$(cat $sysfs/state)\" = up && test \"\$(cat $sysfs/fw)\" = myri/mcp.bin"
# The first packets to node1 after its reload: node1 only receives, node0
# sends, so node0's RDP learns of the new MCP from these very packets.
# Every one of them must arrive, in order (myritest recv checks).
stream_to_1() {
	vc exec -d 1 -- "myritest recv 200 20000 > /tmp/recv1.log 2>&1" > /dev/null
	retry 20 vc exec 1 -- "grep -q 'context 1 ready' /tmp/recv1.log" || return 1
	vc exec -t 60 0 -- myritest send 1 200 8192 || return 1
	retry 30 vc exec 1 -- '! pidof myritest'
	vc exec 1 -- cat /tmp/recv1.log
	vc exec 0 -- "echo node0: undeliverable \$(cat $sysfs/counters/undeliverable) reconnects \$(cat $sysfs/counters/reconnects)"
	vc exec 1 -- "grep -q '^ok' /tmp/recv1.log"
}
check "$mode: after the reset node1 receives node0's first 200 packets of 8 KiB, all in order (context 1)" stream_to_1
check "$mode: after the reset node1 exchanges over PS_HAL=myri (all-to-all with node0, 2 MiB)" \
	vc exec -t 120 0,1 -- "$ps -t 100 -v 2M all2all 0,1 1 1"
echo "  firmware phase: $(since "$t0")"

# ------------------------------------- a receiver that takes nothing
# Issue 13, finding 8.  node3's context 1 belongs to a stopped process, so
# its ring fills and its MCP refuses for room.  node0 floods it from 5
# contexts (40 slots: more than RDP queues for a peer), and meanwhile
# answers node2's pings from context 1: the doorbells of those replies
# must not wait behind the flood.  refuse_us is 6 s here, so the pings
# run inside the bound; after it the flood fails with NO_ROOM and every
# sender gets its slots back.
t0=$(date +%s)
cnt0() { vc exec 0 -- "cat $sysfs/counters/$1" | sed 's/^node0: //'; }
# shellcheck disable=SC2016 # the guest's shell expands $$ and $(...)
flood_stalled() {
	vc exec 0 -- "echo 6000000 > /sys/module/myri/parameters/refuse_us &&
		echo 1 > $sysfs/reset && rm -f /tmp/stop /tmp/flood*.log" || return 1
	# node2 learns of node0's new MCP now, not with a PEER_RESET event
	# to the ping below (nobody listens on node2's context 1 yet).
	vc exec -t 30 0 -- myritest send 2 1 64 > /dev/null || return 1
	vc exec -d 3 -- 'echo $$ > /tmp/stalled.pid; exec myritest recv 1000000 600000 > /tmp/stalled.log 2>&1' > /dev/null
	retry 20 vc exec 3 -- "grep -q 'context 1 ready' /tmp/stalled.log" || return 1
	vc exec 3 -- 'kill -STOP $(cat /tmp/stalled.pid)' || return 1
	vc exec -d 0 -- "myritest echo 300 30000 > /tmp/echo0.log 2>&1" > /dev/null
	retry 20 vc exec 0 -- "grep -q 'context 1 ready' /tmp/echo0.log" || return 1
	for _k in 1 2 3 4 5; do
		vc exec -d 0 -- "myritest send 3 40 8192 /tmp/stop > /tmp/flood$_k.log 2>&1" > /dev/null
	done
	retry 20 vc exec 0 -- "test \$(cat $sysfs/counters/cap_nacks_rx) -gt 0 &&
		test \$(cat $sysfs/counters/parked) -gt 0" || return 1
	echo "node0: cap_nacks_rx $(cnt0 cap_nacks_rx) parked $(cnt0 parked)"
}
check "$mode: node3's receiver stopped: node0 floods it from 5 contexts, node3 refuses, node0 parks what RDP cannot queue" \
	flood_stalled
served() {
	vc exec -t 60 2 -- myritest ping 0 300 8192 || return 1
	_nr=$(cnt0 noroom)
	echo "node0: noroom $_nr after the pings ($(since "$t0") into the flood)"
	[ "$_nr" = 0 ]
}
check "$mode: meanwhile node2 pings node0's context 1: 300 round trips while node3 refuses (the doorbell FIFO is not held)" \
	served
flood_fails() {
	vc exec 0 -- "touch /tmp/stop"
	retry 60 vc exec 0 -- '! pidof myritest' || { vc exec 0 -- 'cat /tmp/flood*.log'; return 1; }
	vc exec 0 -- 'cat /tmp/flood*.log /tmp/echo0.log'
	echo "node0: noroom $(cnt0 noroom) undeliverable $(cnt0 undeliverable)"
	[ "$(cnt0 noroom)" -gt 0 ] &&
		[ "$(vc exec 0 -- 'cat /tmp/flood*.log' | grep -c '^ok ')" = 5 ] &&
		vc exec 0 -- "grep -q '^ok ' /tmp/echo0.log"
}
check "$mode: after refuse_us the flood fails with NO_ROOM, and every sender gets its slots back" \
	flood_fails
# shellcheck disable=SC2016 # expands in the guest
vc exec 3 -- 'kill -KILL $(cat /tmp/stalled.pid)' > /dev/null 2>&1
vc exec 0 -- "echo 0 > /sys/module/myri/parameters/refuse_us" > /dev/null 2>&1
echo "  stalled-receiver phase: $(since "$t0")"

# ------------------------------------------------------------ drvfuzz
# Seeded random ioctls, ioctl numbers, mmaps, reads and writes on /dev/myri0
# as root (the device is root-only), beside another root process's
# contexts; every mmap that works must be one the driver gave this file.
fuzz_ops=${MYRI_FUZZ_OPS:-10000}
fuzz_seed=${MYRI_FUZZ_SEED:-19}
out=$(vc exec -t 600 1 -- "drvfuzz myri $fuzz_seed $fuzz_ops 0" 2>&1)
rc=$?
[ "$rc" = 0 ] && echo "$out" | grep -q "^ok   drvfuzz myri: $fuzz_ops ops, seed $fuzz_seed, uid 0" &&
	pass "$mode: drvfuzz myri: $fuzz_ops random ioctls, mmaps, reads and writes (seed $fuzz_seed): nothing mapped it was not given" ||
	fail "$mode: drvfuzz myri (seed $fuzz_seed, $fuzz_ops ops)" "exit $rc: $(echo "$out" | tail -n 4 | tr '\n' ' ')"
served_after_fuzz() {
	vc exec -d 1 -- "myritest echo 1000 30000 > /tmp/echo1.log 2>&1" > /dev/null
	retry 20 vc exec -t 60 2 -- myritest ping 1 50 64
}
check "$mode: the card works after drvfuzz: node2 pings node1's echo" served_after_fuzz

# ------------------------------------------------------------ the end
check "$mode: guest dmesg is clean" vc exec all -- myritest dmesg
check "$mode: no leak reported in guest dmesg" vc exec all -- '! dmesg | grep -i leak'
echo "  total: $(since "$start")"
vc down > /dev/null
check_fails "$mode: down leaves no QEMU" pgrep -f "vc-$name-node"
if [ "$mode" = libvirt ]; then
	check_fails "$mode: down removes the libvirt domains" \
		sh -c "virsh -q -c qemu:///system list --all --name | grep '^vc-$name-'"
fi
