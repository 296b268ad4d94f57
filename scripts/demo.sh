#!/bin/sh
# make demo: boot a 4-node cluster (eth LAN plus ParaStation boards on a 2x2
# torus), show it, run a ping matrix, a TCP throughput test, the pairwise
# exchange over the ParaStation library's layers versus TCP, then shut down.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
vc="$top/build/bin/vcluster"
name=demo
export VCLUSTER_NAME=$name
trap '"$vc" down --name $name >/dev/null 2>&1 || true' EXIT INT TERM

"$vc" down --name $name >/dev/null 2>&1 || true
echo "== booting a 4-node cluster"
"$vc" up -n 4 --name $name --fabric eth,ps1 --topology torus:2x2
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
echo "== pairwise exchange node0 <-> node3 (2 hops on the torus): half round trip in us"
lat() { sed -n 's/.*half round trip \([0-9.]*\) us.*/\1/p'; }
# echo_on SERVER-ARGS: a pstest echo server on node3.
echo_on() { "$vc" exec -d 3 -- "pstest $* > /dev/null 2>&1" > /dev/null; }
printf '%-8s %-10s %-10s %-10s %-10s %s\n' bytes hal rawdata ports tcp ports/tcp
for size in 8 64 508 4096; do
	hal=-
	if [ "$size" -le 508 ]; then
		echo_on hal-echo 50
		hal=$("$vc" exec 0 -- pstest hal-pingpong 3 50 $size | lat)
	fi
	echo_on raw-echo 50
	raw=$("$vc" exec 0 -- pstest raw-pingpong 3 50 $size | lat)
	echo_on port-echo 7 50
	ports=$("$vc" exec 0 -- pstest port-pingpong 3 7 50 $size | lat)
	tcp=$("$vc" exec 0 -- tcpbench client node3 --pingpong -s $size -n 50 2>/dev/null |
		sed -n 's/.*latency_us=\([0-9.]*\).*/\1/p')
	ratio=$(echo "$ports $tcp" | awk '$1 > 0 && $2 > 0 { printf "%.2f", $1 / $2 }')
	printf '%-8s %-10s %-10s %-10s %-10s %s\n' "$size" "${hal:-FAIL}" "${raw:-FAIL}" \
		"${ports:-FAIL}" "${tcp:-FAIL}" "${ratio:--}"
done
echo "(under TCG both sides are emulated; make bench-ps1 measures every size and the barrier)"

echo
echo "== fabric counters"
"$vc" fabric status | head -n 12
echo
"$vc" fabric --fabric ps1 status | head -n 16
echo
echo "== shutting down"
"$vc" down --name $name
trap - EXIT INT TERM
