#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench-ps1: the ParaStation paper's benchmarks (section 5, Tables 1-3).
#   - node0 <-> node1 (1 hop) on a 4-node torus:2x2, HAL, rawdata, ports
#     and kernel TCP (eth fabric), two ways:
#     ping-pong (layers hal, rawdata, ports, tcp): node1 echoes; latency =
#       half the round trip, bandwidth = size / latency;
#     pairwise exchange (layers hal-pairwise, rawdata-pairwise,
#       ports-pairwise, tcp-pairwise; the paper's Table 1 and 3): both
#       nodes send at once, then both receive; latency = half the time per
#       exchange (Table 3; Table 1's "time per iteration" is twice it),
#       bandwidth = size / latency = 2 size / time per exchange (Table 1's
#       throughput, both directions together)
#   - barrier: hardware sync line vs a TCP dissemination barrier, on 2
#     (ring), 4 (torus:2x2) and 8 (torus:4x2) nodes
# Writes build/bench/ps1.tsv:
#   layer<TAB>nodes<TAB>size_bytes<TAB>latency_us<TAB>bandwidth_MBps
# The tables show ping-pong and exchange side by side, with the whole
# time per exchange.  Targets are reported, never enforced; they compare
# ping-pong rows (the exchange ratio at 8 bytes is shown beside them).
# The points the targets compare
# (ports and TCP at 8 bytes; hw and TCP barrier on 4 nodes) are measured
# PS1_BENCH_REPS (5) times, the two sides alternating, and the median is
# kept: 4-8 emulated VMs on 2 shared cores make single runs noisy, and
# alternating keeps a slow spell from favouring one side.
# Env: PS1_BENCH_ROUNDS (100), PS1_BENCH_BARRIERS (200), PS1_BENCH_REPS,
# PS1_BENCH_8=0 skips the 8-node cluster.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
vc="$top/build/bin/vcluster"
name=bench-ps1
out="$top/build/bench/ps1.tsv"
rounds=${PS1_BENCH_ROUNDS:-100}
bar_count=${PS1_BENCH_BARRIERS:-200}
reps=${PS1_BENCH_REPS:-5}
small="1 4 8 16 32 64 128 256 508"
frag="1024 4096 16384 65536"
. "$top/tests/bench/lib.sh"
bench_start "$out"

up() {	# up NAME N TOPOLOGY
	cur=$1
	"$vc" down --name "$1" >/dev/null 2>&1 || true
	"$vc" up -n "$2" --fabric eth,ps1 --topology "$3" --name "$1" $4
}
rounds_for() {	# fewer rounds for the biggest messages, more for the target
	if [ "$1" -ge 65536 ]; then echo $((rounds / 5 > 0 ? rounds / 5 : 1))
	elif [ "$1" = 8 ]; then echo $((rounds * 3))
	else echo "$rounds"; fi
}
# alternate NAME_A NAME_B CMD_A CMD_B: run CMD_A and CMD_B (each prints a
# latency) $reps times in turn; sets med_a / med_b to the medians.
alternate() {
	all_a="" all_b="" i=0
	while [ $i -lt "$reps" ]; do
		lat=$($3) && [ -n "$lat" ] && all_a="$all_a $lat"
		lat=$($4) && [ -n "$lat" ] && all_b="$all_b $lat"
		i=$((i + 1))
	done
	med_a=$(echo $all_a | tr ' ' '\n' | median)
	med_b=$(echo $all_b | tr ' ' '\n' | median)
	printf '  %-11s %10s us  (runs:%s)\n' "$1" "${med_a:--}" "$all_a"
	printf '  %-11s %10s us  (runs:%s)\n' "$2" "${med_b:--}" "$all_b"
}

pair_once() {	# pair_once LAYER SIZE: one run, its latency on stdout
	layer=$1 size=$2 n=$(rounds_for "$2")
	case $layer in
	hal)	bg 1 "pstest hal-echo $n 20000"
		sleep 0.3; res=$(ex 0 "pstest hal-pingpong 1 $n $size" 2>&1) || true ;;
	rawdata) bg 1 "pstest raw-echo $n 20000"
		sleep 0.3; res=$(ex 0 "pstest raw-pingpong 1 $n $size" 2>&1) || true ;;
	ports)	bg 1 "pstest port-echo 7 $n 20000"
		sleep 0.5; res=$(ex 0 "pstest port-pingpong 1 7 $n $size" 2>&1) || true ;;
	tcp)	res=$(ex 0 "tcpbench client node1 -r 20 --pingpong -s $size -n $n -w 10" 2>&1) || true ;;
	# pairwise exchange: the same command on both nodes, a handshake
	# starts them together
	hal-pairwise)
		bg 1 "pstest hal-pairwise 0 $n $size"
		res=$(ex 0 "pstest hal-pairwise 1 $n $size" 2>&1) || true ;;
	rawdata-pairwise)
		bg 1 "pstest raw-pairwise 0 $n $size"
		res=$(ex 0 "pstest raw-pairwise 1 $n $size" 2>&1) || true ;;
	ports-pairwise)
		bg 1 "pstest port-pairwise 0 7 $n $size"
		res=$(ex 0 "pstest port-pairwise 1 7 $n $size" 2>&1) || true ;;
	tcp-pairwise) res=$(tcp_pairwise "$size" "$n" 10) ;;
	esac
	pair_latency "$layer" "$size" "$res"
}

# barrier_once N PATTERN CMD: CMD (with @RANK@ replaced) on every node of
# $cur, rank 0 in the foreground; PATTERN (sed) picks the mean us.
barrier_once() {
	nn=$1 pat=$2 cmd=$3 i=1
	while [ $i -lt "$nn" ]; do
		bg $i "$(echo "$cmd" | sed "s/@RANK@/$i/g")"
		i=$((i + 1))
	done
	res=$(ex 0 "$(echo "$cmd" | sed 's/@RANK@/0/g')" 2>&1) || true
	lat=$(printf '%s\n' "$res" | sed -n "$pat" | head -n 1)
	if [ -z "$lat" ]; then
		echo "  $nn nodes: FAILED: $(printf '%s' "$res" | tail -n 2 | tr '\n' ' ')" >&2
	fi
	sleep 1	# let the background ranks finish and close their sockets
	echo "$lat"
}

hw_barrier() { barrier_once "$nn_cur" "$hw_pat" "pstest barrier-loop 0 $bar_count"; }
tcp_barrier() {
	barrier_once "$nn_cur" "$tcp_pat" \
		"tcpbench barrier --nodes $nn_cur --rank @RANK@ --count $bar_count -p 5099 -r 30"
}
hw_pat='s/^ok .*, \([0-9.]*\) us per barrier.*/\1/p'
tcp_pat='s/^barrier .*mean_us=\([0-9.]*\).*/\1/p'

barriers() {	# barriers N: hw and TCP barrier on all N nodes of $cur
	nn_cur=$1
	if [ "$1" = 4 ]; then
		alternate barrier-hw barrier-tcp hw_barrier tcp_barrier
	else
		med_a=$(hw_barrier) med_b=$(tcp_barrier)
		printf '  %-11s %10s us\n  %-11s %10s us\n' barrier-hw "${med_a:--}" barrier-tcp "${med_b:--}"
	fi
	[ -n "$med_a" ] && row barrier-hw "$1" 0 "$med_a"
	[ -n "$med_b" ] && row barrier-tcp "$1" 0 "$med_b"
}

# ---- 4 nodes: ping-pong, pairwise exchange and the 4-node barrier --------
echo "== 4 nodes, torus:2x2: ping-pong node0 <-> node1"
up ${name}4 4 torus:2x2 ""
for s in $small; do pair hal "$s"; done
for s in $small $frag; do pair rawdata "$s"; done
for s in $small $frag; do [ "$s" = 8 ] || pair ports "$s"; done
bg 1 "tcpbench server -p 5001"
for s in $small $frag; do [ "$s" = 8 ] || pair tcp "$s"; done
echo "== pairwise exchange node0 <-> node1"
for s in $small; do pair hal-pairwise "$s"; done
for s in $small $frag; do pair rawdata-pairwise "$s"; done
for s in $small $frag; do pair ports-pairwise "$s"; done
for s in $small $frag; do pair tcp-pairwise "$s"; done
echo "== the target points, alternating"
ports8() { pair_once ports 8; }
tcp8() { pair_once tcp 8; }
alternate "ports 8 B" "tcp 8 B" ports8 tcp8
[ -n "$med_a" ] && row ports 2 8 "$med_a"
[ -n "$med_b" ] && row tcp 2 8 "$med_b"
echo "== barrier, 4 nodes"
barriers 4
down

echo "== barrier, 2 nodes (ring)"
up ${name}2 2 ring ""
barriers 2
down

if [ "${PS1_BENCH_8:-1}" = 0 ]; then
	echo "== barrier, 8 nodes: skipped (PS1_BENCH_8=0)"
else
	echo "== barrier, 8 nodes (torus:4x2, 192 MiB each)"
	if up ${name}8 8 torus:4x2 "--mem 192"; then
		barriers 8
	else
		echo "  8-node cluster did not come up: 8-node barrier skipped" >&2
	fi
	down
fi

bench_save

# ---- tables like the paper's ------------------------------------------------
echo
exchange_tables "hal=HAL (node0 <-> node1, 1 hop)" "rawdata=rawdata (node0 <-> node1, 1 hop)" \
	"ports=ports (node0 <-> node1, 1 hop)" "tcp=kernel TCP over the eth fabric (node0 <-> node1)"
echo "Barrier (mean per barrier)"
echo "  nodes       hw_us      tcp_us   tcp/hw"
for nn in 2 4 8; do
	awk -F'\t' -v n=$nn '
		$1 == "barrier-hw" && $2 == n { hw = $4 }
		$1 == "barrier-tcp" && $2 == n { tcp = $4 }
		END { if (hw == "" && tcp == "") exit
		      printf "  %5s  %10s  %10s  %7s\n", n, hw == "" ? "-" : hw,
		             tcp == "" ? "-" : tcp,
		             (hw > 0 && tcp > 0) ? sprintf("%.1f", tcp / hw) : "-" }' "$out"
done
echo
awk -F'\t' '
	$1 == "ports" && $3 == 8 { p8 = $4 }
	$1 == "tcp" && $3 == 8 { t8 = $4 }
	$1 == "barrier-hw" && $2 == 4 { bh = $4 }
	$1 == "barrier-tcp" && $2 == 4 { bt = $4 }
	$1 == "ports-pairwise" && $3 == 8 { xp8 = $4 }
	$1 == "tcp-pairwise" && $3 == 8 { xt8 = $4 }
	END {
		if (p8 > 0 && t8 > 0) {
			r = p8 / t8
			printf "ports/TCP latency at 8 bytes:   %.3f (ping-pong; target <= 0.2): %s\n", r, ((r <= 0.2) ? "met" : "not met")
		} else
			print "ports/TCP latency at 8 bytes:   not measured"
		if (xp8 > 0 && xt8 > 0)
			printf "ports/TCP latency at 8 bytes:   %.3f (pairwise exchange, one run; for comparison)\n", xp8 / xt8
		if (bh > 0 && bt > 0) {
			r = bt / bh
			printf "TCP/hw barrier on 4 nodes:      %.1f (target >= 20): %s\n", r, ((r >= 20) ? "met" : "not met")
		} else
			print "TCP/hw barrier on 4 nodes:      not measured"
	}' "$out"
echo "(written to $out)"
"$top/scripts/plot-latency.sh" "${out%.tsv}-latency.png" "$out" \
	"ParaStation board, node0 <-> node1: ping-pong and pairwise exchange" || true
