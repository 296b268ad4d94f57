#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench-sockets: the protocol hierarchy of paper 004 (Table 3) and of
# ParaStation2 (000/003, section 5), on both NICs in one run, 2 nodes
# (--fabric eth,ps1,myrinet), node0 <-> node1:
#   - HAL, rawdata, ports (pstest) and ParaStation sockets (tcpbench under
#     psrun) on the ParaStation board (ps1) and the Myrinet card (myri),
#     and tcpbench on kernel TCP over virtio-net (eth) as the baseline;
#   - unmodified programs (docs/apps.md) on kernel TCP (eth) and on
#     ParaStation sockets on each NIC (LD_PRELOAD of libpsock.so with
#     PS_HAL): NetPIPE (Debian's NPtcp), Open MPI (mpipingpong, 2 ranks)
#     and PVM (pvmpingpong, a virtual machine of the 2 nodes, direct
#     task-to-task route);
#   - Socket (self), both ends on node0 over 127.0.0.1: through the
#     node's pool (PS_SOCK_LOCAL=1) on each NIC, and the kernel's loopback
#     (eth).
# Ping-pong: latency = half the round trip at 8 bytes, bandwidth = S /
# latency at 65536 bytes.  Each point is measured SOCK_BENCH_REPS (5)
# times, the layers (and the programs on the three paths) alternating,
# and the median kept.  NetPIPE reports its own figure per run: the
# fastest of its trials (NPtcp -o, restricted to one size by -l/-u, -p 0).
# Writes build/bench/sockets.tsv:
#   nic<TAB>layer<TAB>size_bytes<TAB>latency_us<TAB>bandwidth_MBps<TAB>paper
# ("-" in latency_us and bandwidth_MBps: no run of that point succeeded),
# prints it as a table with the ratios of the targets, and draws
# build/bench/sockets.png (scripts/plot-hierarchy.sh).
# Targets (reported, never enforced): sockets latency <= 1.3 x ports on
# the same NIC; over ParaStation sockets against kernel TCP, NetPIPE
# latency <= 0.5 x and 64 KiB bandwidth >= 2 x, MPI and PVM latency
# <= 0.5 x.
# Every run has a time limit (NetPIPE and the PVM start 60 s, the others
# 60 s + SOCK_BENCH_ROUNDS / 10 s: 120 s).  A point that fails leaves "-"
# and a line on stderr; a program that runs out of its time, or whose PVM
# virtual machine does not start, is not tried again on that path in this
# run.  Nothing waits for ever.
# Env: SOCK_BENCH_REPS (5, about 5 minutes; 1 for a quick run, about 1),
# SOCK_BENCH_ROUNDS (600 at 8 bytes, a tenth at 64 KiB), SOCK_BENCH_APPS
# (the programs, default "netpipe mpi pvm"; empty: none), SOCK_BENCH_NAME
# (the cluster's name, bench-sock).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
vc="$top/build/bin/vcluster"
name=${SOCK_BENCH_NAME:-bench-sock}
out="$top/build/bench/sockets.tsv"
png="$top/build/bench/sockets.png"
rounds=${SOCK_BENCH_ROUNDS:-600}
reps=${SOCK_BENCH_REPS:-5}
apps=${SOCK_BENCH_APPS-netpipe mpi pvm}
psock=/usr/lib/libpsock.so
t_start=$(date +%s)
. "$top/tests/bench/lib.sh"
. "$top/tests/bench/hierarchy.sh"
bench_start "$out"
hier_header "$tmp/tsv"

gx() {	# gx SECS NODE CMD: ex with a time limit (exit 124 when it ran out)
	"$vc" exec -t "$1" --name "$cur" "$2" -- "$3"
}

pair_once() {	# pair_once NIC LAYER SIZE: one run, its latency on stdout
	nic=$1 layer=$2 size=$3
	n=$rounds
	[ "$size" -gt 8 ] && n=$((rounds / 10))
	w=$((n / 10))
	ps="PS_HAL=$nic pstest"
	lim=$((60 + rounds / 10))	# seconds for one run, then exit 124
	case $layer in
	hal)	bg 1 "$ps hal-echo $n 20000 $size"
		sleep 0.3; res=$(gx $lim 0 "$ps hal-pingpong 1 $n $size" 2>&1) || true ;;
	rawdata) bg 1 "$ps raw-echo $n 20000"
		sleep 0.3; res=$(gx $lim 0 "$ps raw-pingpong 1 $n $size" 2>&1) || true ;;
	ports)	bg 1 "$ps port-echo 7 $n 20000 $size"
		sleep 0.5; res=$(gx $lim 0 "$ps port-pingpong 1 7 $n $size" 2>&1) || true ;;
	sockets)
		# a server for this one client: no ports user stays on node1,
		# since HAL and rawdata want the NIC alone
		bg 1 "echo \$\$ > /tmp/sock-srv.pid; exec psrun --hal $nic tcpbench server -p 5011 -1"
		res=$(gx $lim 0 "psrun --hal $nic tcpbench client node1 -p 5011 -r 20 --pingpong -s $size -n $((n - w)) -w $w -b 65536" 2>&1) || true
		ex 1 "p=\$(cat /tmp/sock-srv.pid); i=0; while [ -e /proc/\$p ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done; kill \$p 2>/dev/null; true" >/dev/null 2>&1 || true
		layer=tcp ;;	# its output is tcpbench's
	tcp)	res=$(gx $lim 0 "tcpbench client node1 -r 20 --pingpong -s $size -n $((n - w)) -w $w -b 65536" 2>&1) || true ;;
	self)	# both ends on node0 over 127.0.0.1: through the node's pool
		# (PS_SOCK_LOCAL=1), or, as eth, the kernel's loopback
		p=""
		[ "$nic" = eth ] || p="env PS_SOCK_LOCAL=1 psrun --hal $nic"
		bg 0 "echo \$\$ > /tmp/self-srv.pid; exec $p tcpbench server -p 5012 -1"
		sleep 0.5
		res=$(gx $lim 0 "$p tcpbench client 127.0.0.1 -p 5012 -r 20 --pingpong -s $size -n $((n - w)) -w $w -b 65536" 2>&1) || true
		ex 0 "p=\$(cat /tmp/self-srv.pid); i=0; while [ -e /proc/\$p ] && [ \$i -lt 100 ]; do sleep 0.1; i=\$((i + 1)); done; kill \$p 2>/dev/null; true" >/dev/null 2>&1 || true
		layer=tcp ;;
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
		hier_row "$tmp/tsv" "${p%%:*}" "${p#*:}" "$size" "$med"
	done
	return 0
}

# --- the unmodified programs: NetPIPE, MPI, PVM ---

# app_fail NIC APP RC OUTPUT WHAT: the line on stderr for a failed run; a
# run that ran out of time (124) is not tried again on that path
app_fail() {
	_why="exit $3"
	if [ "$3" = 124 ]; then
		_why="no end in its time; not tried again in this run"
		: > "$tmp/giveup-$1-$2"
	fi
	echo "  $2 on $1: $5 FAILED ($_why): $(printf '%s' "$4" | tail -n 3 | tr '\n' ' ')" >&2
}
# app_clean: stop what a failed run may have left on both nodes
app_clean() {
	gx 30 all 'killall -q NPtcp mpirun orterun orted mpipingpong pvmpingpong; true' >/dev/null 2>&1 || true
}
# pvm_halt: stop the virtual machine, by force if halt does not
pvm_halt() {
	gx 30 0 'pidof pvmd >/dev/null && (echo halt | timeout 20 pvm) >/dev/null 2>&1; true' >/dev/null 2>&1 || true
	gx 30 all 'i=0; while pidof pvmd >/dev/null && [ $i -lt 25 ]; do sleep 0.2; i=$((i + 1)); done
		killall -q -9 pvmd pvmpingpong; rm -f /tmp/pvmd.0; true' >/dev/null 2>&1 || true
}
# pingpong_lat SIZE OUTPUT: latency_us of mpipingpong's or pvmpingpong's
# line for SIZE
pingpong_lat() {
	printf '%s\n' "$2" | sed -n "s/^pingpong size=$1 .*latency_us=\([0-9.]*\).*/\1/p" | head -n 1
}

# app_once NIC APP: one run of APP (netpipe, mpi, pvm) on NIC (eth: kernel
# TCP; ps1, myri: ParaStation sockets on it); "LAT8 LAT64K" on stdout,
# "-" for a size without a figure
app_once() {
	nic=$1 app=$2 l8="" l64="" rc=0 res=""
	r64=$((rounds / 10))
	pre="" mx="" penv=""
	if [ "$nic" != eth ]; then
		pre="psrun --hal $nic"
		mx="-x LD_PRELOAD=$psock -x PS_HAL=$nic"
		penv="VC_SSH_ENV='LD_PRELOAD PS_HAL' LD_PRELOAD=$psock PS_HAL=$nic"
	fi
	case $app in
	netpipe)
		# one NPtcp pair per size: -l = -u = SIZE, no perturbation;
		# the transmitter's output file has "bytes Mbps seconds", the
		# seconds being half the round trip of its fastest trial
		for s in 8 65536; do
			rc=0
			bg 1 "cd /tmp && exec $pre NPtcp -P 5010 -l $s -u $s -p 0"
			res=$(gx 20 1 'i=0; until netstat -ltn | grep -q ":5010 "; do [ $i -lt 100 ] || { echo "NPtcp does not listen"; exit 1; }; sleep 0.1; i=$((i + 1)); done' 2>&1) || rc=$?
			[ "$rc" = 0 ] && { res=$(gx 60 0 "cd /tmp && rm -f np.out && $pre NPtcp -h node1 -P 5010 -l $s -u $s -p 0 -o np.out > np.log 2>&1; r=\$?; cat np.out np.log; exit \$r" 2>&1) || rc=$?; }
			lat=$(printf '%s\n' "$res" | awk -v s="$s" '$1 == s && NF == 3 && $3 + 0 > 0 { printf "%.2f\n", $3 * 1e6; exit }')
			if [ "$rc" != 0 ] || [ -z "$lat" ]; then
				app_fail "$nic" "$app" "$rc" "$res" "$s bytes:"
				app_clean
				[ "$rc" = 124 ] && break
				continue
			fi
			[ "$s" = 8 ] && l8=$lat || l64=$lat
		done ;;
	mpi)
		res=$(gx $((60 + rounds / 10)) 0 "mpirun $mx --host node0,node1 -n 2 mpipingpong 8:$rounds 65536:$r64 2>&1") || rc=$?
		# a size's line counts even if a later size failed
		printf '%s\n' "$res" | grep -q '^mpipingpong: rank 0 on node0, rank 1 on node1$' &&
			l8=$(pingpong_lat 8 "$res") l64=$(pingpong_lat 65536 "$res")
		if [ "$rc" != 0 ] || [ -z "$l8" ] || [ -z "$l64" ]; then
			app_fail "$nic" "$app" "$rc" "$res" "mpirun -n 2 mpipingpong:"
			app_clean
		fi ;;
	pvm)
		# the virtual machine of node0 and node1 (/etc/pvm/hostfile),
		# its pvmds (and so the spawned echo task) on the same path as
		# the task on node0
		hosts=$(gx 60 0 "(echo quit | $penv pvm /etc/pvm/hostfile) > /tmp/pvm-start.log 2>&1; echo conf | timeout 20 pvm 2>/dev/null | grep -c -E '^ +node[01] '; true" 2>/dev/null) || rc=$?
		if [ "$rc" != 0 ] || [ "$hosts" != 2 ]; then
			: > "$tmp/giveup-$nic-$app"
			why="exit $rc, hosts in conf: ${hosts:-none}"
			[ "$rc" = 124 ] && why="no end in 60 s"
			res=$(gx 20 0 'tail -n 3 /tmp/pvm-start.log' 2>&1) || true
			echo "  pvm on $nic: the virtual machine of node0 and node1 did not start ($why); no PVM figures on $nic in this run; pvm said: $(printf '%s' "$res" | tr '\n' ' ')" >&2
		else
			res=$(gx $((60 + rounds / 10)) 0 "$pre pvmpingpong -t 30 8:$rounds 65536:$r64 2>&1") || rc=$?
			printf '%s\n' "$res" | grep -q '^pvmpingpong: .* on node0, .* on node1, route direct$' &&
				l8=$(pingpong_lat 8 "$res") l64=$(pingpong_lat 65536 "$res")
			if [ "$rc" != 0 ] || [ -z "$l8" ] || [ -z "$l64" ]; then
				app_fail "$nic" "$app" "$rc" "$res" "pvmpingpong:"
			fi
		fi
		pvm_halt ;;
	esac
	echo "${l8:--} ${l64:--}"
}

# apps_alternate: every program on eth, ps1 and myri in turn, $reps
# times; one row per program, path and size with the median
apps_alternate() {
	for a in $apps; do for n in eth ps1 myri; do
		eval "app_${n}_${a}_8='' app_${n}_${a}_65536=''"
	done; done
	i=0
	while [ $i -lt "$reps" ]; do
		for a in $apps; do
			for n in eth ps1 myri; do
				[ -e "$tmp/giveup-$n-$a" ] && continue
				res=$(app_once "$n" "$a")
				for v in ${res%% *}:8 ${res##* }:65536; do
					[ "${v%%:*}" = - ] && continue
					eval "app_${n}_${a}_${v#*:}=\"\$app_${n}_${a}_${v#*:} ${v%%:*}\""
				done
			done
		done
		i=$((i + 1))
	done
	for a in $apps; do for n in eth ps1 myri; do for s in 8 65536; do
		eval "all=\$app_${n}_${a}_$s"
		med=$(echo $all | tr ' ' '\n' | median)
		printf '  %-14s %6s bytes  %10s us  (runs:%s)\n' "$n:$a" "$s" "${med:--}" "$all"
		hier_row "$tmp/tsv" "$n" "$a" "$s" "$med"
	done; done; done
	return 0
}

for a in $apps; do
	case $a in
	netpipe|mpi|pvm) ;;
	*) echo "SOCK_BENCH_APPS: unknown program '$a' (netpipe, mpi, pvm)" >&2; exit 2 ;;
	esac
done

echo "== 2 nodes, eth + ps1 + myrinet: ping-pong node0 <-> node1, $reps run(s) per point"
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
echo "== Socket (self): both ends on node0"
alternate 8 "ps1:self" "myri:self" "eth:self"
alternate 65536 "ps1:self" "myri:self" "eth:self"
if [ -n "$apps" ]; then
	echo "== $apps: kernel TCP (eth) and ParaStation sockets (ps1, myri)"
	# the first ssh of a node may wait for the kernel's entropy
	gx 60 0 'ssh node1 true' >/dev/null 2>&1 || true
	apps_alternate
fi
down
bench_save

hier_report "$out" "medians of $reps run(s) per point, alternating"
echo "(written to $out; $(( ($(date +%s) - t_start + 30) / 60 )) min)"
"$top/scripts/plot-hierarchy.sh" "$png" "$out" \
	"Protocol hierarchy, ParaStation board (ps1), Myrinet card (myri), kernel TCP (eth); $reps runs per point, medians" || true
