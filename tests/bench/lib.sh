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

# pair_latency LAYER SIZE OUTPUT: the latency that pstest's ok line
# ("half round trip X us") or tcpbench's (latency_us=X) reports; on a
# failure a note on stderr, nothing on stdout, and node1's echo stopped.
pair_latency() {
	if [ "$1" = tcp ]; then
		_lat=$(printf '%s\n' "$3" | sed -n 's/.*latency_us=\([0-9.]*\).*/\1/p' | head -n 1)
	else
		_lat=$(printf '%s\n' "$3" | sed -n 's/^ok .*half round trip \([0-9.]*\) us.*/\1/p' | head -n 1)
	fi
	if [ -z "$_lat" ]; then
		echo "  $1 $2 bytes: FAILED: $(printf '%s' "$3" | tail -n 2 | tr '\n' ' ')" >&2
		# stop a stuck echo before the next point (busybox has no pkill)
		ex 1 "killall -q pstest; true" >/dev/null 2>&1 || true
		sleep 1
		return 0
	fi
	echo "$_lat"
}

# pair LAYER SIZE: one run of the script's pair_once, one row (2 nodes)
pair() {
	_lat=$(pair_once "$1" "$2")
	[ -z "$_lat" ] && return 0
	row "$1" 2 "$2" "$_lat"
	printf '  %-8s %8s bytes  %10s us\n' "$1" "$2" "$_lat"
}
