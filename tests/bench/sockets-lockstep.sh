#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench-sockets-lockstep: the protocol hierarchy of make bench-sockets
# in the modelled hardware's time (docs/lockstep.md).  One lock-step run,
# `vcluster run --lockstep -n 2 --fabric eth,ps1,myrinet`: node0 runs every
# measurement in turn and starts its peer on node1 over ssh; node1 waits
# until node0 is done (an hour of virtual time at most).  Nothing on the
# host is in the path, so one run gives exact figures: no repetitions, no
# medians, no host noise.  The guests' CPUs run 8 ns an instruction
# (icount shift 3, a 125 MIPS CPU), so the software's cost counts as it
# would on a CPU of the papers' era.
#   - ports (pstest port-pingpong) on ps1 and myri;
#   - sockets: tcpbench under psrun on ps1 and myri, and tcp: tcpbench on
#     kernel TCP over virtio-net (eth), the baseline;
#   - NetPIPE (NPtcp, -n repetitions), Open MPI (mpipingpong, 2 ranks) and
#     PVM (pvmpingpong, direct route) on eth, ps1 and myri;
#   - Socket (self): both ends on node0 (PS_SOCK_LOCAL=1; eth: loopback).
# Each at 8 bytes (latency = half the round trip) and 64 KiB (bandwidth =
# size / latency).  Writes build/bench/sockets-lockstep.tsv (the columns of
# sockets.tsv), prints the report of tests/bench/hierarchy.sh with the
# targets' ratios, and draws build/bench/sockets-lockstep.png.  A point
# whose program failed or ran out of its 10 minutes gets "-" and a line on
# stderr.  About 15 minutes.
# Env: SOCK_LS_ROUNDS (200 at 8 bytes), SOCK_LS_BIG_ROUNDS (4 at 64 KiB),
# SOCK_LS_SEED (1), SOCK_LS_NAME (the cluster's name, bench-sockls).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
vc="$top/build/bin/vcluster"
out="$top/build/bench/sockets-lockstep.tsv"
png="$top/build/bench/sockets-lockstep.png"
rounds=${SOCK_LS_ROUNDS:-200}
big=${SOCK_LS_BIG_ROUNDS:-4}
seed=${SOCK_LS_SEED:-1}
name=${SOCK_LS_NAME:-bench-sockls}
t_start=$(date +%s)
. "$top/tests/bench/lib.sh"
. "$top/tests/bench/hierarchy.sh"
bench_start "$out"
hier_header "$tmp/tsv"

# The nodes' command.  node0 prints "@begin NAME", the program's output,
# "@end NAME EXIT" around each measurement, NAME = NIC-LAYER[-SIZE].
cat > "$tmp/cmd" <<EOF
R=$rounds B=$big
EOF
cat >> "$tmp/cmd" <<'EOF'
t() { _sec=$1; shift; echo "@begin $_sec"; timeout 600 "$@"; echo "@end $_sec $?"; }
# listen PORT: until node1 listens on PORT
listen() { i=0; until ssh node1 "netstat -ltn | grep -q ':$1 '"; do [ $i -lt 300 ] || return 1; sleep 0.1; i=$((i + 1)); done; }
peer() { ssh node1 "$1" > /dev/null 2>&1 & }
sizes() { echo "8:$R 65536:$B"; }
case $VC_NODE in
0)	i=0; until ssh node1 true 2>/dev/null || [ $i = 120 ]; do sleep 0.5; i=$((i + 1)); done
	for nic in ps1 myri; do for sn in $(sizes); do s=${sn%:*} n=${sn#*:}
		# the echo's port open before the first round (no warm-up)
		peer "PS_HAL=$nic exec timeout 600 pstest port-echo 7 $n 60000 $s"
		i=0; until ssh node1 'pidof pstest' > /dev/null || [ $i = 100 ]; do sleep 0.1; i=$((i + 1)); done; sleep 1
		t $nic-ports-$s env PS_HAL=$nic pstest port-pingpong 1 7 $n $s; wait
	done; done
	for nic in eth ps1 myri; do
		pre="" lay=tcp self=""
		[ $nic = eth ] || { pre="psrun --hal $nic"; lay=sockets; self="env PS_SOCK_LOCAL=1 $pre"; }
		for sn in $(sizes); do s=${sn%:*} n=${sn#*:} w=$((${sn#*:} / 10 + 1))
			peer "exec timeout 600 $pre tcpbench server -p 5011 -1"; listen 5011
			t $nic-$lay-$s $pre tcpbench client node1 -p 5011 -r 20 --pingpong -s $s -n $n -w $w -b 65536; wait
			timeout 600 $self tcpbench server -p 5012 -1 > /dev/null 2>&1 & sleep 1
			t $nic-self-$s $self tcpbench client 127.0.0.1 -p 5012 -r 20 --pingpong -s $s -n $n -w $w -b 65536; wait
			peer "cd /tmp && exec timeout 600 $pre NPtcp -P 5010 -l $s -u $s -p 0 -n $n"; listen 5010
			t $nic-netpipe-$s sh -c "cd /tmp && rm -f np.out && $pre NPtcp -h node1 -P 5010 -l $s -u $s -p 0 -n $n -o np.out > np.log 2>&1 && cat np.out"; wait
		done
		mx=""
		[ $nic = eth ] || mx="-x LD_PRELOAD=/usr/lib/libpsock.so -x PS_HAL=$nic"
		t $nic-mpi mpirun $mx --host node0,node1 -n 2 mpipingpong $(sizes)
		penv=""
		[ $nic = eth ] || penv="VC_SSH_ENV='LD_PRELOAD PS_HAL' LD_PRELOAD=/usr/lib/libpsock.so PS_HAL=$nic"
		sh -c "(echo quit | $penv timeout 120 pvm /etc/pvm/hostfile) > /tmp/pvm-start.log 2>&1"
		t $nic-pvm $pre pvmpingpong -t 30 $(sizes)
		(echo halt | timeout 30 pvm) > /dev/null 2>&1; sleep 1
		killall -q -9 pvmd; ssh node1 'killall -q -9 pvmd; rm -f /tmp/pvmd.0'; rm -f /tmp/pvmd.0
	done
	ssh node1 'touch /tmp/bench-done' ;;
*)	# an hour of virtual time at most (idle time costs little), so a
	# node0 that failed cannot hold the run
	i=0; while [ ! -e /tmp/bench-done ] && [ $i -lt 3600 ]; do sleep 1; i=$((i + 1)); done ;;
esac
EOF

echo "== 2 nodes in lock-step, eth + ps1 + myrinet: $rounds rounds at 8 bytes, $big at 64 KiB"
run="$tmp/run"
rc=0
"$vc" run --name "$name" --lockstep -n 2 --fabric eth,ps1,myrinet --seed "$seed" \
	--timeout 7200 --out "$run" -- "$(cat "$tmp/cmd")" > "$tmp/run.log" 2>&1 || rc=$?
[ "$rc" = 0 ] || echo "  vcluster run: exit $rc: $(tail -n 3 "$tmp/run.log" | tr '\n' ' ')" >&2

# NAME SIZE LATENCY_US per figure: pstest's half round trip, tcpbench's,
# mpipingpong's and pvmpingpong's latency_us (their size=), NPtcp's
# "bytes Mbps seconds" line; a failed section on stderr
awk '$1 == "@begin" { sec = $2; next }
	$1 == "@end" { if ($3 != 0) print "  " sec ": exit " $3 > "/dev/stderr"; sec = ""; next }
	sec == "" { next }
	/half round trip/ { v = $0; sub(/.*half round trip /, "", v); split(v, f, " ")
		n = split(sec, p, "-"); print p[1] "-" p[2], p[n], f[1]; next }
	/size=[0-9]+ .*latency_us=/ { s = $0; sub(/.*size=/, "", s); split(s, a, " ")
		v = $0; sub(/.*latency_us=/, "", v); split(v, f, " ")
		n = split(sec, p, "-"); print p[1] "-" p[2], a[1], f[1]; next }
	NF == 3 && $1 ~ /^[0-9]+$/ && $3 ~ /^[0-9.]+$/ {
		n = split(sec, p, "-"); printf "%s-%s %s %.2f\n", p[1], p[2], $1, $3 * 1e6 }' \
	"$run/node0.out" > "$tmp/figs" || true

for nic in ps1 myri eth; do
	for lay in ports sockets tcp netpipe mpi pvm self; do
		case $nic-$lay in
		eth-ports|eth-sockets|ps1-tcp|myri-tcp) continue ;;
		esac
		for s in 8 65536; do
			lat=$(awk -v k="$nic-$lay" -v s="$s" '$1 == k && $2 == s { print $3; exit }' "$tmp/figs")
			[ -n "$lat" ] || echo "  $nic $lay $s bytes: no figure" >&2
			printf '  %-14s %6s bytes  %10s us\n' "$nic:$lay" "$s" "${lat:--}"
			hier_row "$tmp/tsv" "$nic" "$lay" "$s" "$lat"
		done
	done
done
bench_save
hier_report "$out" "one lock-step run, virtual time (8 ns an instruction)"
echo "(written to $out; $(( ($(date +%s) - t_start + 30) / 60 )) min)"
"$top/scripts/plot-hierarchy.sh" "$png" "$out" \
	"Protocol hierarchy in virtual time (lock-step), ps1, myri, kernel TCP (eth)" || true
