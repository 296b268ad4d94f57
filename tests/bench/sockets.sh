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
bench_start "$out"
printf 'nic\tlayer\tsize_bytes\tlatency_us\tbandwidth_MBps\tpaper\n' > "$tmp/tsv"

# The papers' figures at the same level, latency at 8 bytes and bandwidth
# (MB/s) at 64 KiB.  004 Table 3 ("Performance of the protocol
# hierarchy"): a DEC Alpha 21064A at 275 MHz and a Pentium at 120 MHz
# (PC), ParaStation against the OS's sockets over Ethernet; its MPI figure
# is P4's, on the same sockets.  000/003 section 5 (ParaStation2, Myrinet):
# about 25 us for every interface, 100-150 MB/s, and the first PVM on
# ParaStation sockets (220 us on the OS's, about 90 us on ParaStation's).
paper() {	# paper NIC LAYER SIZE
	case "$1 $2 $3" in
	"ps1 hal 8") echo "1.24 us Alpha, 0.87 us PC (004 Table 3, hardware)" ;;
	"ps1 rawdata 8") echo "4.15 us Alpha, 3.05 us PC (004 Table 3)" ;;
	"ps1 ports 8") echo "10.7 us Alpha, 8.9 us PC (004 Table 3)" ;;
	"ps1 sockets 8"|"ps1 netpipe 8") echo "sockets: 11.4 us Alpha, 9.2 us PC (004 Table 3)" ;;
	"ps1 ports 65536") echo "8.9 MB/s Alpha, 10.8 MB/s PC (004 Table 3)" ;;
	"ps1 sockets 65536"|"ps1 netpipe 65536") echo "sockets: 8.8 MB/s Alpha, 10.7 MB/s PC (004 Table 3)" ;;
	"ps1 mpi 8") echo "P4: 108 us Alpha (004 Table 3)" ;;
	"ps1 mpi 65536") echo "P4: 7.5 MB/s Alpha (004 Table 3)" ;;
	"ps1 pvm 8") echo "129 us Alpha, 102 us PC (004 Table 3); about 90 us (000/003 sec. 5)" ;;
	"ps1 pvm 65536") echo "6.7 MB/s Alpha, 7.7 MB/s PC (004 Table 3)" ;;
	"myri ports 8"|"myri sockets 8"|"myri netpipe 8"|"myri mpi 8"|"myri pvm 8")
		echo "about 25 us, every interface (000/003, ParaStation2)" ;;
	"myri ports 65536"|"myri sockets 65536"|"myri netpipe 65536"|"myri mpi 65536"|"myri pvm 65536")
		echo "100-150 MB/s (000/003, ParaStation2)" ;;
	"eth tcp 8"|"eth netpipe 8") echo "OS sockets on Ethernet: 283 us Alpha, 159 us PC (004 Table 3)" ;;
	"eth tcp 65536"|"eth netpipe 65536") echo "OS sockets on Ethernet: 0.99 MB/s Alpha, 1.08 MB/s PC (004 Table 3)" ;;
	"eth mpi 8") echo "P4 on Ethernet: 344 us Alpha (004 Table 3)" ;;
	"eth mpi 65536") echo "P4 on Ethernet: 0.95 MB/s Alpha (004 Table 3)" ;;
	"eth pvm 8") echo "539 us Alpha, 388 us PC (004 Table 3); 220 us (000/003 sec. 5)" ;;
	"eth pvm 65536") echo "0.84 MB/s Alpha, 0.86 MB/s PC (004 Table 3)" ;;
	"ps1 self 8"|"myri self 8") echo "Socket (self): 6.4 us Alpha, 4.82 us PC (004 Table 3)" ;;
	"ps1 self 65536"|"myri self 65536") echo "Socket (self): 85 MB/s Alpha, 88 MB/s PC (004 Table 3)" ;;
	"eth self 8") echo "OS Socket (self): 195 us Alpha, 288 us PC (004 Table 3)" ;;
	"eth self 65536") echo "OS Socket (self): 33 MB/s Alpha, 30 MB/s PC (004 Table 3)" ;;
	*) echo "-" ;;
	esac
}

# sock_row NIC LAYER SIZE LATENCY: one row, bandwidth = size / latency;
# an empty LATENCY (no run succeeded) gives "-" for both figures
sock_row() {
	awk -v n="$1" -v l="$2" -v s="$3" -v t="$4" -v r="$(paper "$1" "$2" "$3")" 'BEGIN {
		if (t == "" || t + 0 <= 0)
			printf "%s\t%s\t%s\t-\t-\t%s\n", n, l, s, r
		else
			printf "%s\t%s\t%s\t%.2f\t%.3f\t%s\n", n, l, s, t, s / t, r }' >> "$tmp/tsv"
}

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
		sock_row "${p%%:*}" "${p#*:}" "$size" "$med"
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
		sock_row "$n" "$a" "$s" "$med"
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

# The table: latency at 8 bytes and bandwidth at 64 KiB per layer and
# path (the first row of each; eth's sockets are tcpbench on the kernel)
echo
echo "Protocol hierarchy, node0 <-> node1: medians of $reps run(s) per point, alternating"
echo "(latency: half the round trip at 8 bytes; bandwidth: 64 KiB / its latency)"
awk -F'\t' '
	NR > 1 {
		l = ($1 == "eth" && $2 == "tcp") ? "sockets" : $2
		if ($3 == 8 && !(($1, l) in lat)) lat[$1, l] = $4
		if ($3 == 65536 && !(($1, l) in bw)) bw[$1, l] = $5
	}
	function f(v, p) { return (v == "" || v == "-") ? "-" : sprintf(p, v) }
	END {
		printf "  %-9s %21s %21s %21s\n", "", "ps1 (board)", "myri (Myrinet)", "eth (kernel TCP)"
		printf "  %-9s %10s %10s %10s %10s %10s %10s\n", "layer", "us", "MB/s", "us", "MB/s", "us", "MB/s"
		split("hal rawdata ports sockets netpipe mpi pvm self", L, " ")
		split("ps1 myri eth", N, " ")
		for (i = 1; i <= 8; i++) {
			line = sprintf("  %-9s", L[i])
			for (k = 1; k <= 3; k++)
				line = line sprintf(" %10s %10s", f(lat[N[k], L[i]], "%.1f"), f(bw[N[k], L[i]], "%.2f"))
			print line
		}
	}' "$out"
echo
echo "Every row, with the papers' figures (004 Table 3: Alpha 21064A 275 MHz, Pentium 120 MHz)"
awk -F'\t' 'NR > 1 {
	printf "  %-5s %-8s %6s B  %9s us  %9s MB/s   paper: %s\n", $1, $2, $3, $4, $5, $6 }' "$out"
echo
echo "Targets (reported, never enforced; ratios of medians from this run):"
awk -F'\t' '
	function num(v) { return v != "" && v != "-" && v + 0 > 0 }
	NR > 1 && num($4) {
		k = $1 SUBSEP $2 SUBSEP $3
		if (!(k in lat)) { lat[k] = $4; bw[k] = $5 }
	}
	# ratio TEXT A B TARGET OP: A / B against the target (OP "<=" or ">=")
	function ratio(text, a, b, target, op, paper,   r, met, m) {
		if (!(a in lat) || !(b in lat)) {
			split(!(a in lat) ? a : b, m, SUBSEP)
			printf "  %-52s not measured (no %s %s figure at %s bytes)\n", text, m[1], m[2], m[3]
			return
		}
		r = (op == "bw") ? bw[a] / bw[b] : lat[a] / lat[b]
		if (target == "")
			printf "  %-52s %6.2f%s\n", text, r, paper
		else {
			met = (op == "bw") ? r >= target : r <= target
			printf "  %-52s %6.2f  (target %s %s): %s%s\n", text, r, (op == "bw") ? ">=" : "<=", target, met ? "met" : "not met", paper
		}
	}
	END {
		split("ps1 myri", N, " ")
		for (i = 1; i <= 2; i++) {
			n = N[i]
			ratio(n ": sockets/ports latency at 8 bytes", n SUBSEP "sockets" SUBSEP 8, n SUBSEP "ports" SUBSEP 8, 1.3, "lat", "")
			ratio(n ": NetPIPE psock/kernel latency at 8 bytes", n SUBSEP "netpipe" SUBSEP 8, "eth" SUBSEP "netpipe" SUBSEP 8, 0.5, "lat", "")
			ratio(n ": NetPIPE psock/kernel bandwidth at 64 KiB", n SUBSEP "netpipe" SUBSEP 65536, "eth" SUBSEP "netpipe" SUBSEP 65536, 2, "bw", "")
			ratio(n ": MPI psock/kernel latency at 8 bytes", n SUBSEP "mpi" SUBSEP 8, "eth" SUBSEP "mpi" SUBSEP 8, 0.5, "lat",
				(n == "ps1") ? "; P4 in 004 Table 3: 0.31" : "")
			ratio(n ": PVM psock/kernel latency at 8 bytes", n SUBSEP "pvm" SUBSEP 8, "eth" SUBSEP "pvm" SUBSEP 8, 0.5, "lat",
				(n == "ps1") ? "; papers: 0.41 (000/003), 0.24 Alpha, 0.26 PC (004)" : "")
		}
		print "Beside them (no target):"
		for (i = 1; i <= 2; i++) {
			n = N[i]
			ratio(n ": sockets/TCP latency at 8 bytes (tcpbench)", n SUBSEP "sockets" SUBSEP 8, "eth" SUBSEP "tcp" SUBSEP 8, "", "lat", "")
			ratio(n ": sockets/TCP bandwidth at 64 KiB (tcpbench)", n SUBSEP "sockets" SUBSEP 65536, "eth" SUBSEP "tcp" SUBSEP 65536, "", "bw", "")
			ratio(n ": MPI psock/kernel bandwidth at 64 KiB", n SUBSEP "mpi" SUBSEP 65536, "eth" SUBSEP "mpi" SUBSEP 65536, "", "bw", "")
			ratio(n ": PVM psock/kernel bandwidth at 64 KiB", n SUBSEP "pvm" SUBSEP 65536, "eth" SUBSEP "pvm" SUBSEP 65536, "", "bw", "")
		}
	}' "$out"
echo "(written to $out; $(( ($(date +%s) - t_start + 30) / 60 )) min)"
"$top/scripts/plot-hierarchy.sh" "$png" "$out" \
	"Protocol hierarchy, ParaStation board (ps1), Myrinet card (myri), kernel TCP (eth); $reps runs per point, medians" || true
