#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make demo: boot a 4-node cluster (eth LAN, ParaStation boards on a 2x2
# torus, LANai-style Myrinet cards on a crossbar switch, Telegraphos NICs on
# a crossbar), show it, run a ping matrix, a TCP throughput test, the
# latency of the ParaStation library's layers on both NICs versus TCP
# (ping-pong and pairwise exchange; build/demo/latency.tsv and a log-log
# plot build/demo/latency.png), a remote-enqueue run on the Telegraphos
# NICs, then shut down.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
vc="$top/build/bin/vcluster"
name=demo
res="$top/build/demo"
export VCLUSTER_NAME=$name
trap '"$vc" down --name $name >/dev/null 2>&1 || true' EXIT INT TERM

"$vc" down --name $name >/dev/null 2>&1 || true
echo "== booting a 4-node cluster"
"$vc" up -n 4 --name $name --fabric eth,ps1,myrinet,telegraphos --topology torus:2x2
echo
echo "== the cluster"
"$vc" status
echo
echo "== ping matrix (round trip in ms, over the eth fabric)"
printf '%-8s' ""
for b in 0 1 2 3; do printf '%-9s' "node$b"; done
echo
for a in 0 1 2 3; do
	printf '%-8s' "node$a"
	for b in 0 1 2 3; do
		if [ "$a" = "$b" ]; then printf '%-9s' "-"; continue; fi
		rtt=$("$vc" exec $a -- ping -c 3 -W 2 node$b 2>/dev/null |
			sed -n 's|.*min/avg/max = [0-9.]*/\([0-9.]*\)/.*|\1|p')
		printf '%-9s' "${rtt:-FAIL}"
	done
	echo
done
echo
echo "== TCP throughput node0 -> node1 (kernel TCP over virtio-net)"
"$vc" exec -d 1 -- tcpbench server >/dev/null
"$vc" exec -d 3 -- tcpbench server >/dev/null
sleep 1
"$vc" exec 0 -- tcpbench client node1 --stream -s 67108864
"$vc" exec 0 -- tcpbench client node1 --pingpong -s 8 -n 1000 || true
echo
echo "== latency node0 <-> node3 in us: ping-pong and pairwise exchange"
echo "   ParaStation board (2 hops on the torus), Myrinet card (PS_HAL=myri,"
echo "   one switch) and kernel TCP over virtio-net (eth fabric)."
echo "   ping-pong: node3 echoes, half the round trip; pairwise: both nodes"
echo "   send at once, then both receive (the paper's benchmark), half the"
echo "   time per exchange"
mkdir -p "$res"
printf 'size_bytes\tnic\tlayer\tmeasurement\tlatency_us\n' > "$res/latency.tsv"
# pp HAL NODE3-ARGS NODE0-ARGS: a ping-pong, pstest's echo on node3 and
# the pinger on node0; prints half the round trip, nothing on a failure.
pp() {
	"$vc" exec -d 3 -- "PS_HAL=$1 pstest $2 > /dev/null 2>&1" > /dev/null
	sleep 0.3
	"$vc" exec -t 120 0 -- "PS_HAL=$1 pstest $3" 2>/dev/null |
		sed -n 's/^ok .*half round trip \([0-9.]*\) us.*/\1/p'
}
# pw HAL CMD PORT...: a pairwise exchange, the same pstest command on
# node3 (naming node0) and node0 (naming node3); prints half the time per
# exchange, nothing on a failure.
pw() {
	_hal=$1 _cmd=$2; shift 2
	"$vc" exec -d 3 -- "PS_HAL=$_hal pstest $_cmd 0 $* > /dev/null 2>&1" > /dev/null
	"$vc" exec -t 120 0 -- "PS_HAL=$_hal pstest $_cmd 3 $*" 2>/dev/null |
		sed -n 's/^ok .*time per exchange [0-9.]* us, half \([0-9.]*\) us.*/\1/p'
}
# put SIZE NIC LAYER MEASUREMENT LATENCY: a row of the TSV (FAIL when
# empty; node3's side stopped then), the latency or FAIL on stdout
put() {
	if [ -z "$5" ]; then
		"$vc" exec 3 -- "killall -q pstest; killall -q tcpbench; true" > /dev/null 2>&1 || true
		"$vc" exec -d 3 -- tcpbench server > /dev/null 2>&1 || true
	fi
	printf '%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "${5:-FAIL}" >> "$res/latency.tsv"
	echo "${5:-FAIL}"
}
printf '%-7s %-9s %-9s %-9s %-9s %-9s %-10s %-9s %s\n' bytes measure ps1-hal \
	ps1-raw ps1-ports myri-hal myri-port tcp myri/tcp
for size in 8 64 508 4096 65536; do
	for m in ping-pong pairwise; do
		hal=- mhal=-
		if [ $m = ping-pong ]; then
			[ "$size" -le 508 ] &&
				hal=$(put $size ps1 hal $m "$(pp ps1 "hal-echo 50" "hal-pingpong 3 50 $size")")
			[ "$size" -le 8192 ] &&
				mhal=$(put $size myri hal $m "$(pp myri "hal-echo 50" "hal-pingpong 3 50 $size")")
			raw=$(put $size ps1 rawdata $m "$(pp ps1 "raw-echo 50" "raw-pingpong 3 50 $size")")
			ports=$(put $size ps1 ports $m "$(pp ps1 "port-echo 7 50" "port-pingpong 3 7 50 $size")")
			mports=$(put $size myri ports $m "$(pp myri "port-echo 7 50" "port-pingpong 3 7 50 $size")")
			tcp=$(put $size eth tcp $m "$("$vc" exec -t 120 0 -- tcpbench client node3 --pingpong -s $size -n 50 2>/dev/null |
				sed -n 's/.*latency_us=\([0-9.]*\).*/\1/p')")
		else
			[ "$size" -le 508 ] &&
				hal=$(put $size ps1 hal $m "$(pw ps1 hal-pairwise 50 $size)")
			[ "$size" -le 8192 ] &&
				mhal=$(put $size myri hal $m "$(pw myri hal-pairwise 50 $size)")
			raw=$(put $size ps1 rawdata $m "$(pw ps1 raw-pairwise 50 $size)")
			ports=$(put $size ps1 ports $m "$(pw ps1 port-pairwise 7 50 $size)")
			mports=$(put $size myri ports $m "$(pw myri port-pairwise 7 50 $size)")
			"$vc" exec -d 3 -- "tcpbench pairwise node0 -r 20 -T 30 -s $size -n 50 > /dev/null 2>&1" > /dev/null
			tcp=$(put $size eth tcp $m "$("$vc" exec -t 120 0 -- tcpbench pairwise node3 -r 20 -T 30 -s $size -n 50 2>/dev/null |
				sed -n 's/.*latency_us=\([0-9.]*\).*/\1/p')")
		fi
		ratio=$(echo "$mports $tcp" | awk '$1 > 0 && $2 > 0 { printf "%.2f", $1 / $2 }')
		printf '%-7s %-9s %-9s %-9s %-9s %-9s %-10s %-9s %s\n' "$size" "$m" "$hal" \
			"$raw" "$ports" "$mhal" "$mports" "$tcp" "${ratio:--}"
	done
done
echo "(under TCG all sides are emulated; make bench-ps1 and make bench-myri measure"
echo " every size, bandwidth and the barrier)"
echo "results: $res/latency.tsv"
if "$top/scripts/plot-latency.sh" "$res/latency.png" "$res/latency.tsv" \
	"node0 <-> node3: ping-pong (half round trip) and pairwise exchange (half the time per exchange)" > /dev/null; then
	echo "plot:    $res/latency.png (log-log; open it in an image viewer)"
else
	echo "plot:    not drawn (see above)"
fi

echo
echo "== remote enqueue (Telegraphos): nodes 1-3 put items into one queue at node0"
echo "   req: one store per item (REQ); soft_enq: the paper's software queue,"
echo "   fetch_and_increment of the remote tail, then two remote writes"
# rate RUN ITEMS: tgrbench's receiver on node0, senders on nodes 1-3;
# prints the receiver's "items/s" line
rate() {
	"$vc" exec 0 -- "rm -f /tmp/rate.seg" > /dev/null
	"$vc" exec -d 0 -- "tgrbench rate-recv $1 /tmp/rate.seg 3 $2 4096 > /tmp/rate.log 2>&1" > /dev/null
	_ids=""
	for _i in $(seq 120); do
		_ids=$("$vc" exec 0 -- "cat /tmp/rate.seg 2>/dev/null; true")
		[ -n "$_ids" ] && break
		sleep 0.5
	done
	for _n in 1 2 3; do
		"$vc" exec -d $_n -- "tgrbench rate-send $1 0 $_ids $2 > /dev/null 2>&1" > /dev/null
	done
	for _i in $(seq 600); do
		_l=$("$vc" exec 0 -- "cat /tmp/rate.log 2>/dev/null; true")
		case $_l in *items/s*|*FAIL*) break ;; esac
		sleep 0.5
	done
	printf '%s\n' "$_l" | grep -e 'items/s' -e FAIL -e overflows | sed 's/^/   /'
}
req=$(rate req 20000)
soft=$(rate soft 1000)
printf '%s\n%s\n' "$req" "$soft"
printf '%s\n%s\n' "$req" "$soft" | awk '
	/rate-recv req: .* items\/s/ { r = $(NF - 6) }
	/rate-recv soft: .* items\/s/ { s = $(NF - 6) }
	END { if (r > 0 && s > 0) printf "   REQ enqueues %.1f times faster than the software queue\n", r / s }'
echo
echo "== fabric counters"
"$vc" fabric status | head -n 12
echo
"$vc" fabric --fabric ps1 status | head -n 16
echo
"$vc" fabric --fabric myrinet status | head -n 16
echo
"$vc" fabric --fabric telegraphos status | head -n 16
echo
echo "== shutting down"
"$vc" down --name $name
trap - EXIT INT TERM
