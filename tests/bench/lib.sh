# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by the benchmarks (tests/bench/*.sh): one cluster at a time, guest
# commands, rows of the TSV, medians and the parsing of pstest/tcpbench.
# The script sets $vc (vcluster) first, then calls bench_start.

# bench_start OUT: rows go to a scratch TSV, copied to OUT by bench_save;
# whatever cluster is up ($cur) goes down on exit.
bench_start() {
	out=$1
	mkdir -p "$(dirname "$out")"
	tmp=$(mktemp -d)
	cur=""
	trap 'bench_cleanup' EXIT
	trap 'exit 130' INT TERM
	printf 'layer\tnodes\tsize_bytes\tlatency_us\tbandwidth_MBps\n' > "$tmp/tsv"
}
bench_cleanup() {
	[ -n "$cur" ] && "$vc" down --name "$cur" >/dev/null 2>&1
	rm -rf "$tmp"
}
bench_save() { cp "$tmp/tsv" "$out"; }

down() {
	"$vc" down --name "$cur" >/dev/null 2>&1 || true
	cur=""
}
ex() {	# ex NODE CMD: command in the guest, output on stdout
	"$vc" exec --name "$cur" "$1" -- "$2"
}
bg() {	# bg NODE CMD: background command in the guest
	"$vc" exec -d --name "$cur" "$1" -- "$2 >/tmp/bench-bg.log 2>&1" >/dev/null
}
row() {	# row LAYER NODES SIZE LAT: bandwidth = size / latency
	awk -v l="$1" -v n="$2" -v s="$3" -v t="$4" 'BEGIN {
		bw = (t > 0 && s > 0) ? s / t : 0
		printf "%s\t%s\t%s\t%.2f\t%.3f\n", l, n, s, t, bw }' >> "$tmp/tsv"
}
median() {	# median of the numbers on stdin
	sort -g | awk '{ v[NR] = $1 } END { if (NR) print v[int((NR + 1) / 2)] }'
}

# pair_latency LAYER SIZE OUTPUT: the latency that the output reports:
#   ping-pong (LAYER hal, rawdata, ports, tcp): half the round trip, from
#     pstest's ok line ("half round trip X us") or tcpbench's latency_us=X;
#   pairwise exchange (LAYER *-pairwise): half the time per exchange, the
#     paper's latency, from pstest's "time per exchange T us, half X us" or
#     tcpbench pairwise's latency_us=X (exchange_us=T).
# On a failure a note on stderr, nothing on stdout, and node1's side stopped.
pair_latency() {
	case $1 in
	tcp|tcp-pairwise)
		_lat=$(printf '%s\n' "$3" | sed -n 's/.*latency_us=\([0-9.]*\).*/\1/p' | head -n 1) ;;
	*-pairwise)
		_lat=$(printf '%s\n' "$3" | sed -n 's/^ok .*time per exchange [0-9.]* us, half \([0-9.]*\) us.*/\1/p' | head -n 1) ;;
	*)
		_lat=$(printf '%s\n' "$3" | sed -n 's/^ok .*half round trip \([0-9.]*\) us.*/\1/p' | head -n 1) ;;
	esac
	if [ -z "$_lat" ]; then
		echo "  $1 $2 bytes: FAILED: $(printf '%s' "$3" | tail -n 2 | tr '\n' ' ')" >&2
		# stop a stuck echo or peer before the next point (busybox has no
		# pkill; tcpbench's pairwise side left its pid, the server stays)
		ex 1 "killall -q pstest; p=\$(cat /tmp/bench-pair.pid 2>/dev/null) &&
			grep -q tcpbench /proc/\$p/comm 2>/dev/null && kill \$p; true" >/dev/null 2>&1 || true
		sleep 1
		return 0
	fi
	echo "$_lat"
}

# tcp_pairwise SIZE ROUNDS WARMUP [ARGS]: tcpbench pairwise between node0
# and node1 (port 5002, beside the ping-pong server on 5001); node1's side
# in the background, node0's output on stdout.
tcp_pairwise() {
	bg 1 "echo \$\$ > /tmp/bench-pair.pid; exec tcpbench pairwise node0 -r 20 -T 30 -s $1 -n $2 -w $3 ${4:-}"
	ex 0 "tcpbench pairwise node1 -r 20 -T 30 -s $1 -n $2 -w $3 ${4:-}" 2>&1 || true
}

# exchange_tables LABEL...: per layer L (LABEL is L=TEXT), ping-pong (rows
# L) beside the pairwise exchange (rows L-pairwise) from $out.  The TSV
# keeps half the time per exchange; the table shows the whole time too.
exchange_tables() {
	for _lt in "$@"; do
		_l=${_lt%%=*}
		echo "${_lt#*=}"
		echo "              ping-pong            pairwise exchange"
		echo "  size_bytes  half_rtt_us    MB/s  exchange_us    half_us    MB/s (both directions)"
		awk -F'\t' -v l="$_l" '
			$1 == l { pp[$3] = $4; ppb[$3] = $5; s[$3] = 1 }
			$1 == l "-pairwise" { x[$3] = $4; xb[$3] = $5; s[$3] = 1 }
			END { for (k in s) printf "  %10s  %11s  %6s  %11s  %9s  %6s\n", k,
				(k in pp) ? sprintf("%.1f", pp[k]) : "-",
				(k in pp) ? sprintf("%.3f", ppb[k]) : "-",
				(k in x) ? sprintf("%.1f", 2 * x[k]) : "-",
				(k in x) ? sprintf("%.1f", x[k]) : "-",
				(k in x) ? sprintf("%.3f", xb[k]) : "-" }' "$out" | sort -n
		echo
	done
}

# pair LAYER SIZE: one run of the script's pair_once, one row (2 nodes)
pair() {
	_lat=$(pair_once "$1" "$2")
	[ -z "$_lat" ] && return 0
	row "$1" 2 "$2" "$_lat"
	printf '  %-8s %8s bytes  %10s us\n' "$1" "$2" "$_lat"
}
