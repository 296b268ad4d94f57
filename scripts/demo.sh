#!/bin/sh
# make demo: boot a 4-node cluster (eth LAN, ParaStation boards on a 2x2
# torus, LANai-style Myrinet cards on a crossbar switch, Telegraphos NICs on
# a crossbar), show it, run a ping matrix, a TCP throughput test, the
# pairwise exchange over the ParaStation library's layers on both NICs
# versus TCP, a remote-enqueue run on the Telegraphos NICs, then shut down.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
vc="$top/build/bin/vcluster"
name=demo
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
echo "== pairwise exchange node0 <-> node3: half round trip in us"
echo "   ParaStation board (2 hops on the torus), Myrinet card (PS_HAL=myri,"
echo "   one switch) and kernel TCP over virtio-net (eth fabric)"
lat() { sed -n 's/.*half round trip \([0-9.]*\) us.*/\1/p'; }
# echo_on HAL SERVER-ARGS: a pstest echo server on node3 over backend HAL.
echo_on() {
	_hal=$1; shift
	"$vc" exec -d 3 -- "PS_HAL=$_hal pstest $* > /dev/null 2>&1" > /dev/null
}
# ping_with HAL ARGS: pstest on node0 over backend HAL; prints the latency.
ping_with() {
	_hal=$1; shift
	"$vc" exec 0 -- "PS_HAL=$_hal pstest $*" | lat
}
printf '%-7s %-9s %-9s %-9s %-9s %-9s %-9s %s\n' bytes ps1-hal ps1-raw \
	ps1-ports myri-hal myri-port tcp myri/tcp
for size in 8 508 4096 65536; do
	hal=- mhal=-
	if [ "$size" -le 508 ]; then
		echo_on ps1 hal-echo 50
		hal=$(ping_with ps1 hal-pingpong 3 50 $size)
	fi
	if [ "$size" -le 8192 ]; then
		echo_on myri hal-echo 50
		mhal=$(ping_with myri hal-pingpong 3 50 $size)
	fi
	echo_on ps1 raw-echo 50
	raw=$(ping_with ps1 raw-pingpong 3 50 $size)
	echo_on ps1 port-echo 7 50
	ports=$(ping_with ps1 port-pingpong 3 7 50 $size)
	echo_on myri port-echo 7 50
	mports=$(ping_with myri port-pingpong 3 7 50 $size)
	tcp=$("$vc" exec 0 -- tcpbench client node3 --pingpong -s $size -n 50 2>/dev/null |
		sed -n 's/.*latency_us=\([0-9.]*\).*/\1/p')
	ratio=$(echo "$mports $tcp" | awk '$1 > 0 && $2 > 0 { printf "%.2f", $1 / $2 }')
	printf '%-7s %-9s %-9s %-9s %-9s %-9s %-9s %s\n' "$size" "${hal:-FAIL}" \
		"${raw:-FAIL}" "${ports:-FAIL}" "${mhal:-FAIL}" "${mports:-FAIL}" \
		"${tcp:-FAIL}" "${ratio:--}"
done
echo "(under TCG all sides are emulated; make bench-ps1 and make bench-myri measure"
echo " every size, bandwidth and the barrier)"

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
