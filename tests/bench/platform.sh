#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench-platform: 4-node boot time and exec round trip.
# Writes build/bench/platform.tsv (metric<TAB>value).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
vc="$top/build/bin/vcluster"
name=bench-platform
out="$top/build/bench/platform.tsv"
mkdir -p "$(dirname "$out")"
trap '"$vc" down --name $name >/dev/null 2>&1 || true' EXIT INT TERM
"$vc" down --name $name >/dev/null 2>&1 || true

log=$(mktemp)
"$vc" up -n 4 --name $name | tee "$log"
boot=$(sed -n 's/^cluster .*: 4 nodes up in \([0-9.]*\) s.*/\1/p' "$log")
rm -f "$log"

rounds=20
start=$(date +%s.%N)
i=0
while [ $i -lt $rounds ]; do
	"$vc" exec --name $name 0 -- true
	i=$((i + 1))
done
end=$(date +%s.%N)
exec_rt=$(echo "$start $end $rounds" | awk '{printf "%.3f", ($2 - $1) / $3}')

"$vc" down --name $name >/dev/null
trap - EXIT INT TERM

printf 'boot_4_nodes_s\t%s\nexec_roundtrip_s\t%s\n' "$boot" "$exec_rt" > "$out"
echo
echo "metric            value    target"
printf 'boot_4_nodes_s    %-8s <= 60\n' "$boot"
printf 'exec_roundtrip_s  %-8s <  0.5\n' "$exec_rt"
echo "(written to $out)"
