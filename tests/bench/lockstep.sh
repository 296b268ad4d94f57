#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench-lockstep: the benchmarks in the modelled hardware's time
# (docs/lockstep.md, "Benchmarks").  Every workload is a `vcluster run`:
# each node runs its part from boot, nothing on the host is in its path.
#
# 1. Figures in virtual time.  Two nodes, --fabric eth,KIND, in lock-step:
#    ps1 and myrinet (PS_HAL=myri): pstest HAL and ports ping-pongs (8 B,
#    and 64 KiB for bandwidth); telegraphos: tgrbench remote read,
#    fetch_inc and the remote-write ping-pong; on each, kernel TCP over
#    virtio-net on the lock-step eth LAN (tcpbench ping-pong, 8 B and
#    64 KiB) as the baseline of the same run.  The guests' clocks run on
#    virtual time, so their figures are the model's.  latency = half the
#    round trip (read, fetch_inc: one access), MB/s = size / latency.
#    The papers' figures stand beside ours.
# 2. Slowdown.  The same runs free-running (TCG without icount): the
#    wall time of each measurement (node0 prints a marker before and after
#    it; the host notes when each marker reaches node0.out, to 50 ms),
#    lock-step over free-running, and of the whole run with boot.
# 3. Determinism.  For ps1, myrinet and telegraphos: LOCKSTEP_BENCH_RUNS
#    (3) runs of a 4-node workload under 5 % drop and 1 % corruption with
#    one seed must give one trace digest, and another seed another.
#    ps1 (no retransmission): nodes 1-3 send, node0 counts what came
#    (ps1test collect); myrinet: pings through RDP; telegraphos: posted
#    remote writes, node0 counts what landed (tgrbench tally/spray).
# 4. 16 nodes boot in lock-step on a ps1 torus:4x4 and run an all-to-all
#    of the ports layer (psstress all2all).
# Writes build/bench/lockstep.tsv (the table: one row per measurement) and
# build/bench/lockstep-runs.tsv (one row per run: wall time, digest,
# exits).  Targets are reported, never enforced.
# Env: LOCKSTEP_BENCH_ROUNDS (500 ping-pong rounds at 8 B),
# LOCKSTEP_BENCH_BIG_ROUNDS (10 at 64 KiB), LOCKSTEP_BENCH_RUNS, LOCKSTEP_BENCH_16=0 skips the
# 16-node run, LOCKSTEP_BENCH_KINDS (ps1 myrinet telegraphos).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
vc="$top/build/bin/vcluster"
out="$top/build/bench/lockstep.tsv"
runs_out="$top/build/bench/lockstep-runs.tsv"
rounds=${LOCKSTEP_BENCH_ROUNDS:-500}
big_rounds=${LOCKSTEP_BENCH_BIG_ROUNDS:-10}
det_runs=${LOCKSTEP_BENCH_RUNS:-3}
kinds=${LOCKSTEP_BENCH_KINDS:-"ps1 myrinet telegraphos"}
shift_n=3	# vcluster's default icount shift: 2^3 ns an instruction
name=bench-ls
. "$top/tests/bench/lib.sh"
bench_start "$out"
cur=$name	# bench_cleanup takes the cluster down
watcher=""
trap '[ -n "$watcher" ] && kill "$watcher" 2>/dev/null; bench_cleanup' EXIT
printf 'run\tkind\tmode\tnodes\tseed\twall_s\tdigest\texits\n' > "$tmp/runs"

# ---- the workloads ----------------------------------------------------------
# node0 times each measurement between "@begin NAME" and "@end NAME"; the
# servers on node1 run one after the other, each for one client.
timed='t() { n=$1; shift; sleep 1; echo "@begin $n"; "$@"; echo "@end $n"; }'
# a server gives up after 10 minutes, so a failed client cannot hold the run
tcp_server='timeout 600 tcpbench server -p 5001 -1; timeout 600 tcpbench server -p 5001 -1'
tcp_clients="t tcp-8 tcpbench client node1 -r 30 --pingpong -s 8 -n $((rounds - rounds / 10)) -w $((rounds / 10))
t tcp-65536 tcpbench client node1 -r 30 --pingpong -s 65536 -n $big_rounds -w 1 -b 65536"

# pstest_cmd ENV: the ps1 / myrinet workload, pstest run by `env ENV`
pstest_cmd() {
	cat <<EOF
$timed
case \$VC_NODE in
0)	t hal-8 env $1 pstest hal-pingpong 1 $rounds 8
	t ports-8 env $1 pstest port-pingpong 1 7 $rounds 8
	t ports-65536 env $1 pstest port-pingpong 1 7 $big_rounds 65536
	$tcp_clients ;;
1)	env $1 pstest hal-echo $rounds 120000 8
	env $1 pstest port-echo 7 $rounds 120000 8
	env $1 pstest port-echo 7 $big_rounds 120000 65536
	$tcp_server ;;
esac
EOF
}
# telegraphos: node1 exports a mailbox (segid 4096, the first export of a
# fresh node) for the loads, then serves the write ping-pong (its mailbox
# is the next export, 8193); node0 loads, then pings.
tgr_cmd() {
	cat <<EOF
$timed
case \$VC_NODE in
0)	# free-running, node1 may still be booting: wait for its export
	i=0; until tgrbench read 1 4096 1 > /dev/null 2>&1 || [ \$i = 120 ]; do sleep 0.5; i=\$((i + 1)); done
	t read tgrbench read 1 4096 $rounds
	t fetch_inc tgrbench fetch_inc 1 4096 $rounds
	t write tgrbench pp-peer write 1 8193 0 $rounds
	$tcp_clients ;;
1)	tgrbench host /tmp/h.seg 600 & h=\$!
	while [ ! -s /tmp/h.seg ]; do sleep 0.1; done
	tgrbench pp-host write /tmp/pp.seg $rounds
	read -r seg _ < /tmp/pp.seg; [ "\$seg" = 8193 ] || echo "FAIL pp segid \$seg, not 8193"
	$tcp_server
	kill \$h ;;
esac
EOF
}

# watch FILE LOG: append "MARKER NAME HOST-SECONDS" for each "@" line of
# FILE as it appears, until killed
watch() {
	_seen=0
	while :; do
		if [ -f "$1" ]; then
			_now=$(date +%s.%N)
			grep '^@' "$1" 2>/dev/null | tail -n +$((_seen + 1)) | while read -r _m _n; do
				echo "$_m $_n $_now"
			done >> "$2"
			_seen=$(wc -l < "$2")
		fi
		sleep 0.05
	done
}

# one_run RUN KIND MODE NODES SEED [RUN-ARGS...] -- CMD: a run into
# $tmp/RUN; a row of lockstep-runs.tsv; node0's markers in $tmp/RUN.marks
one_run() {
	_r=$1 _k=$2 _m=$3 _n=$4 _s=$5
	shift 5
	_ls=""
	[ "$_m" = lockstep ] && _ls=--lockstep
	: > "$tmp/$_r.marks"
	watch "$tmp/$_r/node0.out" "$tmp/$_r.marks" &
	watcher=$!
	_t0=$(date +%s.%N)
	_rc=0
	"$vc" run --name "$name" $_ls -n "$_n" --fabric "$_k" --seed "$_s" \
		--out "$tmp/$_r" "$@" > "$tmp/$_r.log" 2>&1 || _rc=$?
	_t1=$(date +%s.%N)
	sleep 0.1
	kill "$watcher" 2>/dev/null
	wait "$watcher" 2>/dev/null || true
	watcher=""
	_d=$(sed -n 's/^digest //p' "$tmp/$_r/result" 2>/dev/null)
	_e=$(sed -n 's/^node[0-9]* exit //p' "$tmp/$_r/result" 2>/dev/null | tr '\n' ',' | sed 's/,$//')
	_w=$(awk -v a="$_t0" -v b="$_t1" 'BEGIN { printf "%.1f", b - a }')
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$_r" "$_k" "$_m" "$_n" "$_s" \
		"$_w" "${_d:--}" "${_e:--}" >> "$tmp/runs"
	printf '  %-22s %-9s %3s nodes  %7s s  exits %s  %s\n' "$_r" "$_m" "$_n" \
		"$_w" "${_e:-none}" "${_d:-}"
	if [ "$_rc" != 0 ]; then
		echo "  $_r: vcluster run failed ($_rc): $(tail -n 2 "$tmp/$_r.log" | tr '\n' ' ')" >&2
	fi
	return 0
}

# results RUN: "LAYER SIZE LATENCY_US" from the run's outputs: each
# figure of node0's output belongs to the marker section it is in
results() {
	awk '$1 == "@begin" { sec = $2; next }
		$1 == "@end" { sec = ""; next }
		sec == "" { next }
		/^ok .*half round trip/ { v = $0; sub(/.*half round trip /, "", v) }
		/^ok .*: median / { v = $0; sub(/.*: median /, "", v) }
		/latency_us=/ { v = $0; sub(/.*latency_us=/, "", v) }
		v != "" { split(v, f, /[ ]/); n = split(sec, p, "-")
			print p[1], (n > 1) ? p[2] : 4, f[1]; v = "" }' "$tmp/$1/node0.out" 2>/dev/null
	# the write ping-pong's host (node1) reports it
	sed -n 's/^ok   write: half round trip \([0-9.]*\) us.*/write 4 \1/p' \
		"$tmp/$1/node1.out" 2>/dev/null
}
# walls RUN: "NAME SECONDS" per measurement, from the markers
walls() {
	awk '$1 == "@begin" { b[$2] = $3 } $1 == "@end" && ($2 in b) {
		printf "%s %.2f\n", $2, $3 - b[$2] }' "$tmp/$1.marks"
}

# ---- 1 and 2: the figures, lock-step and free-running ------------------------
echo "== 2 nodes: the benchmarks in lock-step and free-running ($rounds rounds at 8 B, $big_rounds at 64 KiB)"
for k in $kinds; do
	case $k in
	ps1) cmd=$(pstest_cmd "") ;;
	myrinet) cmd=$(pstest_cmd "PS_HAL=myri") ;;
	telegraphos) cmd=$(tgr_cmd) ;;
	*) echo "bench-lockstep: unknown kind $k" >&2; exit 2 ;;
	esac
	for m in lockstep free; do
		one_run "bench-$k-$m" "eth,$k" "$m" 2 1 -- "$cmd"
		results "bench-$k-$m" > "$tmp/$k-$m.res"
		walls "bench-$k-$m" > "$tmp/$k-$m.wall"
		if grep -q '^FAIL' "$tmp/bench-$k-$m"/node*.out 2>/dev/null; then
			grep -h '^FAIL' "$tmp/bench-$k-$m"/node*.out | head -n 3 | sed "s/^/  $k $m: /" >&2
		fi
	done
done

# the papers' figures, by kind and layer
paper() {
	case $1-$2-$3 in
	ps1-hal-8) echo "HAL 2 us (004)" ;;
	ps1-ports-8) echo "ports ~10 us (004)" ;;
	ps1-ports-65536) echo "15 MB/s (004)" ;;
	myrinet-ports-8) echo "~25 us (ParaStation2, 000/003)" ;;
	myrinet-ports-65536) echo "100-150 MB/s (ParaStation2, 000/003)" ;;
	telegraphos-write-4) echo "remote write < 1 us (Telegraphos, JPDC 1997)" ;;
	telegraphos-read-4) echo "remote read: slower than a write (same)" ;;
	telegraphos-fetch_inc-4) echo "software enqueue >= 1 round trip (002)" ;;
	*-tcp-8) echo "baseline: kernel TCP, same run" ;;
	*) echo "-" ;;
	esac
}
# the marker node0 printed around a result row
mark_of() {
	case $1 in
	tcp|hal|ports) echo "$1-$2" ;;
	*) echo "$1" ;;
	esac
}

printf 'kind\tlayer\tsize_bytes\tlatency_us\tbandwidth_MBps\tfree_latency_us\tfree_bandwidth_MBps\tlockstep_wall_s\tfree_wall_s\tslowdown\tpaper\n' > "$tmp/tsv"
for k in $kinds; do
	while read -r lay size lat; do
		[ -n "$lat" ] || continue
		fl=$(awk -v l="$lay" -v s="$size" '$1 == l && $2 == s { print $3 }' "$tmp/$k-free.res")
		mk=$(mark_of "$lay" "$size")
		wl=$(awk -v n="$mk" '$1 == n { print $2 }' "$tmp/$k-lockstep.wall")
		wf=$(awk -v n="$mk" '$1 == n { print $2 }' "$tmp/$k-free.wall")
		awk -v k="$k" -v l="$lay" -v s="$size" -v t="$lat" -v f="${fl:-0}" \
			-v wl="${wl:-0}" -v wf="${wf:-0}" -v p="$(paper "$k" "$lay" "$size")" 'BEGIN {
			printf "%s\t%s\t%s\t%.2f\t%.3f\t%s\t%s\t%s\t%s\t%s\t%s\n", k, l, s, t,
				s / t, (f > 0) ? sprintf("%.2f", f) : "-",
				(f > 0) ? sprintf("%.3f", s / f) : "-",
				(wl > 0) ? wl : "-", (wf > 0) ? wf : "-",
				(wl > 0 && wf > 0) ? sprintf("%.1f", wl / wf) : "-", p }' >> "$tmp/tsv"
	done < "$tmp/$k-lockstep.res"
done

# ---- 3: determinism under faults ----------------------------------------------
cat > "$tmp/faults" <<EOF
# 5 % loss and 1 % single-bit corruption on every link
* drop p=0.05
* corrupt p=0.01 bits=1
EOF
det_cmd() {
	case $1 in
	ps1) echo 'case $VC_NODE in 0) ps1test collect 600 2000 ;; *) ps1test send 0 200 16 ;; esac' ;;
	myrinet) echo 'case $VC_NODE in 0) myritest echo 90 60000 ;; *) sleep $VC_NODE; myritest ping 0 30 256 ;; esac' ;;
	telegraphos) echo 'case $VC_NODE in 0) tgrbench tally /tmp/t.seg 4 300 3 ;; *) sleep 1; tgrbench spray 0 4096 300 ;; esac' ;;
	esac
}
echo "== determinism: $det_runs runs x 4 nodes per kind, 5 % drop + 1 % corruption, seed 42; then seed 43"
for k in $kinds; do
	i=1
	while [ $i -le "$det_runs" ]; do
		one_run "det-$k-$i" "$k" lockstep 4 42 --faults "$tmp/faults" -- "$(det_cmd "$k")"
		i=$((i + 1))
	done
	one_run "det-$k-seed43" "$k" lockstep 4 43 --faults "$tmp/faults" -- "$(det_cmd "$k")"
	one_run "det-$k-free" "$k" free 4 42 --faults "$tmp/faults" -- "$(det_cmd "$k")"
	sed -n 's/^\(collect\|tally\|ok   ping\).*/    &/p' "$tmp/det-$k-1"/node*.out 2>/dev/null | head -n 4
done

# ---- 4: 16 nodes ------------------------------------------------------------------
if [ "${LOCKSTEP_BENCH_16:-1}" = 0 ]; then
	echo "== 16 nodes: skipped (LOCKSTEP_BENCH_16=0)"
else
	echo "== 16 nodes, ps1 torus:4x4, lock-step: boot and a ports all-to-all"
	one_run "all2all-16" ps1 lockstep 16 7 --topology torus:4x4 --mem 160 -- \
		'psstress -t 600 all2all 16 1 1'
	grep -h '^ok\|^FAIL' "$tmp/all2all-16/node0.out" 2>/dev/null | head -n 3 | sed 's/^/    node0: /'
fi

bench_save
cp "$tmp/runs" "$runs_out"

# ---- the tables -------------------------------------------------------------------
mips=$(awk -v s=$shift_n 'BEGIN { printf "%d", 1000 / 2 ^ s }')
echo
echo "In the modelled hardware's time (lock-step, icount shift $shift_n: $((1 << shift_n)) ns an instruction, a $mips MIPS CPU)"
echo "free: the same benchmark free-running (host time); slowdown: its wall time in lock-step / free-running"
printf '  %-12s %-10s %6s  %10s %9s  %10s %9s  %8s  %s\n' kind layer bytes lat_us MB/s free_us free_MB/s slowdown paper
awk -F'\t' 'NR > 1 { printf "  %-12s %-10s %6s  %10s %9s  %10s %9s  %8s  %s\n",
	$1, $2, $3, $4, $5, $6, $7, $10, $11 }' "$out"
echo
echo "Ratios to kernel TCP over virtio-net in the same lock-step run (8 B latency; 64 KiB bandwidth)"
awk -F'\t' 'NR > 1 { lat[$1 "/" $2 "/" $3] = $4; bw[$1 "/" $2 "/" $3] = $5; k[$1] = 1 }
	END { for (x in k) {
		t8 = lat[x "/tcp/8"]; t64 = bw[x "/tcp/65536"]
		if (x == "telegraphos") { a = "write"; s = 4 } else { a = "ports"; s = 8 }
		l = lat[x "/" a "/" s]
		printf "  %-12s %s/TCP latency %s", x, a, (l > 0 && t8 > 0) ? sprintf("%.3f", l / t8) : "-"
		if (x != "telegraphos")
			printf ", ports/TCP bandwidth %s", (bw[x "/ports/65536"] > 0 && t64 > 0) ? sprintf("%.2f", bw[x "/ports/65536"] / t64) : "-"
		printf "\n" } }' "$out" | sort
echo
echo "Runs (wall time with boot and power-off)"
printf '  %-22s %-12s %-9s %5s %5s %8s  %-20s %s\n' run kind mode nodes seed wall_s exits digest
awk -F'\t' 'NR > 1 { printf "  %-22s %-12s %-9s %5s %5s %8s  %-20s %s\n",
	$1, $2, $3, $4, $5, $6, $8, ($7 == "-") ? "-" : substr($7, 1, 23) "..." }' "$runs_out"
echo
# targets
awk -F'\t' 'NR > 1 && $3 == "lockstep" && $1 ~ /^det-/ {
		split($1, p, "-"); k = p[2]
		if ($1 ~ /seed43$/) other[k] = $7
		else { n[k]++; d[k, n[k]] = $7 } }
	END {
		for (k in n) {
			same = 1
			for (i = 2; i <= n[k]; i++) same = same && d[k, i] == d[k, 1]
			same = same && d[k, 1] != "-"
			diff = (k in other) && other[k] != "-" && other[k] != d[k, 1]
			printf "determinism %-12s %d runs one digest: %s; another seed another digest: %s\n",
				k, n[k], same ? "yes" : "NO", diff ? "yes" : "NO"
		} }' "$runs_out" | sort
awk -F'\t' 'NR > 1 && $1 ~ /^bench-/ { split($1, p, "-"); w[p[2], $3] = $6; k[p[2]] = 1 }
	END { for (x in k) if (w[x, "free"] > 0)
		printf "slowdown %-12s whole 2-node run, with boot: %.1fx (target <= 3)\n", x, w[x, "lockstep"] / w[x, "free"] }' "$runs_out" | sort
awk -F'\t' 'NR > 1 && $1 ~ /^det-/ && $1 !~ /seed43$/ { split($1, p, "-")
		if ($3 == "free") f[p[2]] = $6; else if (!(p[2] in l)) l[p[2]] = $6 }
	END { for (k in f) if (f[k] > 0 && l[k] > 0)
		printf "slowdown %-12s the 4-node fault workload, with boot: %.1fx (target <= 3)\n", k, l[k] / f[k] }' "$runs_out" | sort
awk -F'\t' 'NR > 1 && $10 != "-" { printf "slowdown %-12s %-10s %6s B: %sx (lock-step %s s, free %s s)\n", $1, $2, $3, $10, $8, $9 }' "$out"
if [ "${LOCKSTEP_BENCH_16:-1}" != 0 ]; then
	awk -F'\t' '$1 == "all2all-16" { ok = ($8 ~ /^(0,)*0$/)
		printf "16 nodes in lock-step, ps1 all-to-all: %s (%s s, exits %s)\n", ok ? "done" : "NOT DONE", $6, $8 }' "$runs_out"
fi
echo "(written to $out and $runs_out)"
