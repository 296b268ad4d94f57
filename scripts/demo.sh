#!/bin/sh
# make demo: boot a 4-node cluster, show it, run a ping matrix and a TCP
# throughput test between two nodes, then shut it down.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
vc="$top/build/bin/vcluster"
name=demo
export VCLUSTER_NAME=$name
trap '"$vc" down --name $name >/dev/null 2>&1 || true' EXIT INT TERM

"$vc" down --name $name >/dev/null 2>&1 || true
echo "== booting a 4-node cluster"
"$vc" up -n 4 --name $name
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
sleep 1
"$vc" exec 0 -- tcpbench client node1 --stream -s 67108864
"$vc" exec 0 -- tcpbench client node1 --pingpong -s 8 -n 1000 || true
echo
echo "== fabric counters"
"$vc" fabric status
echo
echo "== shutting down"
"$vc" down --name $name
trap - EXIT INT TERM
