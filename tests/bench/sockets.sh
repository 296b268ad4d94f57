#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench-sockets: the protocol hierarchy of paper 004 (Table 3) and of
# ParaStation2 (000, section 5), on both NICs in one run: HAL, rawdata,
# ports and ParaStation sockets (tcpbench under psrun, docs/psock.md), and
# kernel TCP over virtio-net between the same two VMs as the baseline.
# 2 nodes (--fabric eth,ps1,myrinet), node0 <-> node1, ping-pong: latency =
# half the round trip at 8 bytes, bandwidth = S / latency at 65536 bytes
# (the methods of ps1.sh and myri.sh).  Each point is measured
# SOCK_BENCH_REPS (5) times, the layers alternating, and the median kept.
# Writes build/bench/sockets.tsv:
#   nic<TAB>layer<TAB>size_bytes<TAB>latency_us<TAB>bandwidth_MBps<TAB>paper
# Targets (reported, never enforced): sockets latency <= 1.3 x ports on the
# same NIC.  Env: SOCK_BENCH_ROUNDS (600 at 8 bytes, a tenth at 64 KiB),
# SOCK_BENCH_REPS.
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
vc="$top/build/bin/vcluster"
name=bench-sock
out="$top/build/bench/sockets.tsv"
rounds=${SOCK_BENCH_ROUNDS:-600}
reps=${SOCK_BENCH_REPS:-5}
. "$top/tests/bench/lib.sh"
bench_start "$out"
printf 'nic\tlayer\tsize_bytes\tlatency_us\tbandwidth_MBps\tpaper\n' > "$tmp/tsv"

# The papers' figures at the same level (004 Table 3 for ps1; ParaStation2
# (000/003) for Myrinet): latency in us at 8 bytes, MB/s at 64 KiB.
paper() {	# paper NIC LAYER SIZE
	case "$1 $2 $3" in
	"ps1 hal 8") echo "2 us" ;;
	"ps1 rawdata 8") echo "5 us" ;;
	"ps1 ports 8") echo "9-10 us" ;;
	"ps1 sockets 8") echo "10-12 us (004 Table 3)" ;;
	"ps1 "*" 65536") echo "15 MB/s (004)" ;;
	"myri ports 8") echo "~25 us (ParaStation2)" ;;
	"myri sockets 8") echo "~25 us, socket = port (000 sec. 5)" ;;
	"myri "*" 65536") echo "100-150 MB/s (ParaStation2)" ;;
	*) echo "-" ;;
	esac
}

pair_once() {	# pair_once NIC LAYER SIZE: one run, its latency on stdout
	nic=$1 layer=$2 size=$3
	n=$rounds
	[ "$size" -gt 8 ] && n=$((rounds / 10))
	w=$((n / 10))
	ps="PS_HAL=$nic pstest"
	case $layer in
	hal)	bg 1 "$ps hal-echo $n 20000 $size"
		sleep 0.3; res=$(ex 0 "$ps hal-pingpong 1 $n $size" 2>&1) || true ;;
	rawdata) bg 1 "$ps raw-echo $n 20000"
		sleep 0.3; res=$(ex 0 "$ps raw-pingpong 1 $n $size" 2>&1) || true ;;
	ports)	bg 1 "$ps port-echo 7 $n 20000 $size"
		sleep 0.5; res=$(ex 0 "$ps port-pingpong 1 7 $n $size" 2>&1) || true ;;
	sockets)
		# a server for this one client: no ports user stays on node1,
		# since HAL and rawdata want the NIC alone
		bg 1 "echo \$\$ > /tmp/sock-srv.pid; exec psrun --hal $nic tcpbench server -p 5011 -1"
		res=$(ex 0 "psrun --hal $nic tcpbench client node1 -p 5011 -r 20 --pingpong -s $size -n $((n - w)) -w $w -b 65536" 2>&1) || true
		ex 1 "p=\$(cat /tmp/sock-srv.pid); i=0; while [ -e /proc/\$p ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done; kill \$p 2>/dev/null; true" >/dev/null 2>&1 || true
		layer=tcp ;;	# its output is tcpbench's
	tcp)	res=$(ex 0 "tcpbench client node1 -r 20 --pingpong -s $size -n $((n - w)) -w $w -b 65536" 2>&1) || true ;;
	esac
	pair_latency "$layer" "$size" "$res"
}

# alternate SIZE NIC:LAYER...: the points in turn, $reps times; one row
# each with the median.
alternate() {
	size=$1
	shift
	for p in "$@"; do eval "all_$(echo "$p" | tr ':' '_')=''"; done
	i=0
	while [ $i -lt "$reps" ]; do
		for p in "$@"; do
			lat=$(pair_once "${p%%:*}" "${p#*:}" "$size")
			v=all_$(echo "$p" | tr ':' '_')
			[ -n "$lat" ] && eval "$v=\"\$$v \$lat\""
		done
		i=$((i + 1))
	done
	for p in "$@"; do
		eval "all=\$all_$(echo "$p" | tr ':' '_')"
		med=$(echo $all | tr ' ' '\n' | median)
		printf '  %-14s %6s bytes  %10s us  (runs:%s)\n' "$p" "$size" "${med:--}" "$all"
		[ -n "$med" ] || continue
		awk -v n="${p%%:*}" -v l="${p#*:}" -v s="$size" -v t="$med" \
		    -v r="$(paper "${p%%:*}" "${p#*:}" "$size")" 'BEGIN {
			printf "%s\t%s\t%s\t%.2f\t%.3f\t%s\n", n, l, s, t, s / t, r }' >> "$tmp/tsv"
	done
	return 0
}

echo "== 2 nodes, eth + ps1 + myrinet: ping-pong node0 <-> node1"
cur=$name
"$vc" down --name "$name" >/dev/null 2>&1 || true
"$vc" up -n 2 --fabric eth,ps1,myrinet --name "$name"
bg 1 "tcpbench server -p 5001"
sleep 1
for nic in ps1 myri; do
	echo "== $nic"
	alternate 8 "$nic:hal" "$nic:rawdata" "$nic:ports" "$nic:sockets" "eth:tcp"
	alternate 65536 "$nic:ports" "$nic:sockets" "eth:tcp"
done
down
bench_save

echo
echo "Protocol hierarchy (medians; paper figures beside)"
awk -F'\t' 'NR > 1 { printf "  %-5s %-8s %6s B  %9.2f us  %8.3f MB/s   paper: %s\n", $1, $2, $3, $4, $5, $6 }' "$out"
echo
awk -F'\t' '
	$2 == "ports" && $3 == 8 { p[$1] = $4 }
	$2 == "sockets" && $3 == 8 { s[$1] = $4 }
	$2 == "tcp" && $3 == 8 { t = t ? t : $4 }
	$2 == "sockets" && $3 == 65536 { sb[$1] = $5 }
	$2 == "tcp" && $3 == 65536 { tb = tb ? tb : $5 }
	END {
		for (n in s) {
			if (p[n] > 0)
				printf "%s: sockets/ports latency at 8 bytes: %.2f (target <= 1.3): %s\n", n, s[n] / p[n], (s[n] / p[n] <= 1.3) ? "met" : "not met"
			if (t > 0)
				printf "%s: sockets/TCP latency at 8 bytes: %.2f\n", n, s[n] / t
			if (tb > 0 && sb[n] > 0)
				printf "%s: sockets/TCP bandwidth at 65536 bytes: %.2f\n", n, sb[n] / tb
		}
	}' "$out"
echo "(written to $out)"
