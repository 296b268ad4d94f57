#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench-myri: the Myrinet card (LANai-style, the MCP running RDP,
# myri.ko, the ParaStation library with PS_HAL=myri) against kernel TCP.
# 2 nodes (--fabric eth,myrinet), node0 <-> node1 at the HAL, the ports
# layer and kernel TCP over the eth fabric, 1 B to 1 MiB, two ways: the
# ping-pong (pstest hal-pingpong, port-pingpong, tcpbench --pingpong) and
# the paper's pairwise exchange (pstest hal-pairwise, port-pairwise,
# tcpbench pairwise).
#
# Method, the same for the three layers:
#   - ping-pong: a message of S bytes goes node0 -> node1; node1 takes in
#     all of it, then sends S bytes back the same way.  latency = half that
#     round trip (mean over the timed rounds; filling and checking the data
#     are not timed), bandwidth = S / latency (MB/s = bytes per us), as in
#     ps1.sh.
#   - pairwise exchange: both nodes send S bytes at once, then both
#     receive the peer's S bytes.  latency = half the time per exchange
#     (the paper's Table 3; Table 1's time per iteration is twice it),
#     bandwidth = S / latency = 2 S / time per exchange (both directions).
#   - above a layer's largest unit a message is a burst: S bytes as
#     back-to-back units of the largest size, the last one holding the rest.
#     The HAL's unit is a packet of ps_hal_mtu() = 8192 bytes on myri; the
#     ports layer's a message of 65536 bytes (PS_PORT_MSG_MAX); TCP's a
#     write of 65536 bytes (tcpbench -b 65536), like ports.  So at 65536
#     bytes ports and TCP both move one 64 KiB message each way; the HAL a
#     burst of 8 packets.
# Writes build/bench/myri.tsv:
#   layer<TAB>nodes<TAB>size_bytes<TAB>latency_us<TAB>bandwidth_MBps
# with layers hal, ports, tcp (ping-pong) and hal-pairwise, ports-pairwise,
# tcp-pairwise (pairwise exchange).  Targets, as ratios of ping-pong rows
# within the run, are reported, never enforced (the exchange's ratios are
# shown beside them): bandwidth at 65536 bytes, ports >= 2 x TCP;
# latency at 8 bytes, ports <= 1/3 of TCP (hal/TCP is shown beside it).
# The target points (8 bytes: hal, ports, tcp; 65536 bytes: ports, tcp) are
# measured MYRI_BENCH_REPS (7) times, the layers alternating, and the
# median is kept: 2 emulated VMs on 2 shared cores make single runs noisy,
# and alternating keeps a slow spell from favouring one side.
# Env: MYRI_BENCH_ROUNDS (200: rounds per point; 3x at 8 bytes, fewer
# above 8 KiB), MYRI_BENCH_REPS, MYRI_BENCH_SIZES (the sweep's sizes).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
vc="$top/build/bin/vcluster"
name=bench-myri
out="$top/build/bench/myri.tsv"
rounds=${MYRI_BENCH_ROUNDS:-200}
reps=${MYRI_BENCH_REPS:-7}
sizes=${MYRI_BENCH_SIZES:-"1 8 64 512 4096 8192 16384 32768 65536 131072 262144 1048576"}
ps="PS_HAL=myri pstest"
. "$top/tests/bench/lib.sh"
bench_start "$out"

up() {	# up NAME N
	cur=$1
	"$vc" down --name "$1" >/dev/null 2>&1 || true
	"$vc" up -n "$2" --fabric eth,myrinet --name "$1"
}
rounds_for() {	# fewer rounds for the bursts, more for the 8-byte target
	if [ "$1" = 8 ]; then n=$((rounds * 3))
	elif [ "$1" -le 8192 ]; then n=$rounds
	elif [ "$1" -le 65536 ]; then n=$((rounds / 2))
	elif [ "$1" -le 262144 ]; then n=$((rounds / 4))
	else n=$((rounds / 5)); fi
	echo $((n > 0 ? n : 1))
}
pair_once() {	# pair_once LAYER SIZE: one run, its latency on stdout
	layer=$1 size=$2 n=$(rounds_for "$2")
	# pstest times all but its first tenth (>= 20 rounds); tcpbench the
	# same split, given as warm-up + timed rounds
	w=$((n >= 20 ? n / 10 : 0))
	case $layer in
	hal)	bg 1 "$ps hal-echo $n 20000 $size"
		sleep 0.3; res=$(ex 0 "$ps hal-pingpong 1 $n $size" 2>&1) || true ;;
	ports)	bg 1 "$ps port-echo 7 $n 20000 $size"
		sleep 0.5; res=$(ex 0 "$ps port-pingpong 1 7 $n $size" 2>&1) || true ;;
	tcp)	res=$(ex 0 "tcpbench client node1 -r 20 --pingpong -s $size -n $((n - w)) -w $w -b 65536" 2>&1) || true ;;
	# pairwise exchange: the same command on both nodes, a handshake
	# starts them together; bursts as for the ping-pong
	hal-pairwise)
		bg 1 "$ps hal-pairwise 0 $n $size"
		res=$(ex 0 "$ps hal-pairwise 1 $n $size" 2>&1) || true ;;
	ports-pairwise)
		bg 1 "$ps port-pairwise 0 7 $n $size"
		res=$(ex 0 "$ps port-pairwise 1 7 $n $size" 2>&1) || true ;;
	tcp-pairwise) res=$(tcp_pairwise "$size" $((n - w)) "$w" "-b 65536") ;;
	esac
	pair_latency "$layer" "$size" "$res"
}

# alternate SIZE LAYER...: run the layers in turn, $reps times; one row
# per layer with the median; sets med_LAYER.
alternate() {
	size=$1
	shift
	for l in "$@"; do eval "all_$l=''"; done
	i=0
	while [ $i -lt "$reps" ]; do
		for l in "$@"; do
			lat=$(pair_once "$l" "$size")
			[ -n "$lat" ] && eval "all_$l=\"\$all_$l \$lat\""
		done
		i=$((i + 1))
	done
	for l in "$@"; do
		eval "all=\$all_$l"
		med=$(echo $all | tr ' ' '\n' | median)
		eval "med_$l=\$med"
		printf '  %-6s %8s bytes  %10s us  (runs:%s)\n' "$l" "$size" "${med:--}" "$all"
		[ -n "$med" ] && row "$l" 2 "$size" "$med"
	done
	return 0
}

# counters NODE: the MCP's and the card's counters that say whether RDP
# had to work (retransmissions, full windows, receivers out of room)
cnt_names="sent retransmitted timeouts window_stalls cap_nacks_tx cap_nacks_rx seq_nacks_tx lag_drops"
counters() {
	ex "$1" "cd /sys/class/misc/myri0/device/counters && for c in $cnt_names; do printf '%s ' \$(cat \$c); done; echo" 2>/dev/null || true
}

echo "== 2 nodes, eth + myrinet: ping-pong node0 <-> node1"
up $name 2
if ! ex 0 "test -c /dev/myri0 && grep -q up /sys/class/misc/myri0/device/state"; then
	echo "bench-myri: the Myrinet card of node0 is not up (myri.ko, MCP firmware?)" >&2
	exit 1
fi
c0_before=$(counters 0) c1_before=$(counters 1)
bg 1 "tcpbench server -p 5001"
t_start=$(date +%s)
for s in $sizes; do [ "$s" = 8 ] || pair hal "$s"; done
for s in $sizes; do [ "$s" = 8 ] || [ "$s" = 65536 ] || pair ports "$s"; done
for s in $sizes; do [ "$s" = 8 ] || [ "$s" = 65536 ] || pair tcp "$s"; done
echo "== pairwise exchange node0 <-> node1"
for l in hal-pairwise ports-pairwise tcp-pairwise; do
	for s in $sizes; do pair $l "$s"; done
done
echo "== the target points, alternating ($reps runs each, medians)"
alternate 8 hal ports tcp
alternate 65536 ports tcp
c0_after=$(counters 0) c1_after=$(counters 1)
t_end=$(date +%s)
down

bench_save

# ---- tables like ps1.sh's --------------------------------------------------
echo
exchange_tables "hal=HAL, PS_HAL=myri, packets of <= 8192 bytes (bursts above)" \
	"ports=ports, PS_HAL=myri, messages of <= 65536 bytes (bursts above)" \
	"tcp=kernel TCP over the eth fabric, writes of <= 65536 bytes"
echo "MCP counters during the measurements ($((t_end - t_start)) s; node: $cnt_names)"
for nd in 0 1; do
	eval "b=\$c${nd}_before a=\$c${nd}_after"
	echo "$b|$a" | awk -v nd=$nd -F'|' '{
		nb = split($1, b, " "); na = split($2, a, " ")
		if (nb != na || na == 0) { printf "  node%s: not read\n", nd; exit }
		printf "  node%s:", nd
		for (i = 1; i <= na; i++) printf " %d", a[i] - b[i]
		printf "\n" }'
done
echo
awk -F'\t' '
	$1 == "hal" && $3 == 8 { h8 = $4 }
	$1 == "ports" && $3 == 8 { p8 = $4 }
	$1 == "tcp" && $3 == 8 { t8 = $4 }
	$1 == "ports" && $3 == 65536 { pb = $5 }
	$1 == "tcp" && $3 == 65536 { tb = $5 }
	$1 == "ports-pairwise" && $3 == 8 { xp8 = $4 }
	$1 == "tcp-pairwise" && $3 == 8 { xt8 = $4 }
	$1 == "ports-pairwise" && $3 == 65536 { xpb = $5 }
	$1 == "tcp-pairwise" && $3 == 65536 { xtb = $5 }
	END {
		if (pb > 0 && tb > 0) {
			r = pb / tb
			printf "ports/TCP bandwidth at 65536 bytes: %.2f (ping-pong; target >= 2): %s\n", r, ((r >= 2) ? "met" : "not met")
		} else
			print "ports/TCP bandwidth at 65536 bytes: not measured"
		if (xpb > 0 && xtb > 0)
			printf "ports/TCP bandwidth at 65536 bytes: %.2f (pairwise exchange, one run; for comparison)\n", xpb / xtb
		if (p8 > 0 && t8 > 0) {
			r = p8 / t8
			printf "ports/TCP latency at 8 bytes:       %.3f (ping-pong; target <= 0.333): %s\n", r, ((r <= 1 / 3) ? "met" : "not met")
		} else
			print "ports/TCP latency at 8 bytes:       not measured"
		if (xp8 > 0 && xt8 > 0)
			printf "ports/TCP latency at 8 bytes:       %.3f (pairwise exchange, one run; for comparison)\n", xp8 / xt8
		if (h8 > 0 && t8 > 0)
			printf "hal/TCP latency at 8 bytes:         %.3f (ping-pong, for comparison; the target is ports)\n", h8 / t8
	}' "$out"
echo "(written to $out)"
"$top/scripts/plot-latency.sh" "${out%.tsv}-latency.png" "$out" \
	"Myrinet card (PS_HAL=myri) vs kernel TCP: ping-pong and pairwise exchange" || true
