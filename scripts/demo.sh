#!/bin/sh
# make demo: boot a 4-node cluster (eth LAN plus ParaStation boards on a 2x2
# torus), show it, run a ping matrix, a TCP throughput test, a ParaStation
# versus TCP ping-pong table, then shut it down.
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
echo "== ping-pong node0 <-> node3, half round trip in us (ParaStation: 2 hops on the torus)"
"$vc" exec -d 3 -- 'ps1test echo 400 60000 > /dev/null 2>&1' >/dev/null
printf '%-8s %-12s %-12s %s\n' bytes parastation tcp ratio
for words in 1 16 64 127; do
	bytes=$((4 * words))
	ps=$("$vc" exec 0 -- ps1test ping 3 100 $words |
		sed -n 's/.*half round trip \([0-9.]*\) us.*/\1/p')
	tcp=$("$vc" exec 0 -- tcpbench client node3 --pingpong -s $bytes -n 100 2>/dev/null |
		sed -n 's/.*latency_us=\([0-9.]*\).*/\1/p')
	ratio=$(echo "$ps $tcp" | awk '$1 > 0 && $2 > 0 { printf "%.2f", $1 / $2 }')
	printf '%-8s %-12s %-12s %s\n' "$bytes" "${ps:-FAIL}" "${tcp:-FAIL}" "${ratio:--}"
done
echo "(under TCG both sides are emulated; the ParaStation library's own benchmarks come with make bench-ps1)"

echo
echo "== fabric counters"
"$vc" fabric status | head -n 12
echo
"$vc" fabric --fabric ps1 status | head -n 16
echo
echo "== shutting down"
"$vc" down --name $name
trap - EXIT INT TERM
