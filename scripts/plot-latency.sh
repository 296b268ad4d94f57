#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/plot-latency.sh OUT.png TSV [TITLE]: latency against message size,
# log-log, one line per series, drawn with gnuplot.
#
# TSV has a header line naming its columns.  It needs size_bytes and
# latency_us; every other column except nodes and bandwidth_MBps names the
# series (the benches' "layer"; the demo's "nic layer measurement").
# Rows whose size is not positive (barriers) or whose latency is not a
# number (FAIL) are left out: the plot draws what was measured.
# Series whose name says "pairwise" are drawn dashed, ping-pongs solid,
# each pair in one colour.  The latency is what the TSV holds: half the
# round trip of a ping-pong, half the time per pairwise exchange.
# Exit status: 0 drawn, 1 nothing to draw or gnuplot failed, 2 usage.
set -eu
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 OUT.png TSV [TITLE]" >&2
	exit 2
fi
png=$1 tsv=$2 title=${3:-latency against message size}
if ! command -v gnuplot >/dev/null 2>&1; then
	echo "plot-latency: gnuplot not found (make deps installs gnuplot-nox): no $png" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One block per series ("# NAME", then "size latency" lines by size),
# blocks two blank lines apart: gnuplot's index.
awk -F'\t' -v dir="$tmp" '
	NR == 1 {
		for (i = 1; i <= NF; i++) {
			if ($i == "size_bytes") sc = i
			else if ($i == "latency_us") lc = i
			else if ($i != "nodes" && $i != "bandwidth_MBps") key[++nk] = i
		}
		if (!sc || !lc) { print "plot-latency: no size_bytes or latency_us column" > "/dev/stderr"; exit 1 }
		next
	}
	$sc + 0 > 0 && $lc ~ /^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ && $lc + 0 > 0 {
		name = ""
		for (k = 1; k <= nk; k++) name = name (k > 1 ? " " : "") $key[k]
		if (!(name in seen)) { seen[name] = 1; order[++ns] = name }
		pts[name] = pts[name] $sc " " $lc "\n"
	}
	END {
		for (s = 1; s <= ns; s++) {
			f = dir "/s" s
			printf "%s", pts[order[s]] > f
			close(f)
			print order[s] > (dir "/names")
		}
	}' "$tsv"
[ -s "$tmp/names" ] || { echo "plot-latency: nothing to draw in $tsv" >&2; exit 1; }

i=0
: > "$tmp/data"
while IFS= read -r name; do
	i=$((i + 1))
	[ "$i" -gt 1 ] && printf '\n\n' >> "$tmp/data"
	sort -g "$tmp/s$i" >> "$tmp/data"
done < "$tmp/names"

# plot clauses, each ping-pong beside its exchange: one colour per series
# without its measurement, dashed if pairwise
awk -v data="$tmp/data" '
	BEGIN { split("#1f77b4 #d62728 #2ca02c #9467bd #ff7f0e #8c564b #e377c2 #17becf #7f7f7f #bcbd22", rgb, " ") }
	{
		base = $0
		pw = base ~ /pairwise/
		sub(/[- ]pairwise( exchange)?$/, "", base)
		sub(/[- ]ping-pong$/, "", base)
		if (!(base in col)) { col[base] = ++nc; bases[nc] = base }
		label = base (pw ? ", pairwise exchange" : ", ping-pong")
		gsub(/"/, "", label)
		c = rgb[(col[base] - 1) % 10 + 1]
		cl[base, pw] = sprintf("\"%s\" index %d using 1:2 with linespoints lc rgb \"%s\" dt %d pt %d title \"%s\"",
			data, NR - 1, c, pw ? 2 : 1, pw ? 6 : 7, label)
	}
	END {
		n = 0
		for (i = 1; i <= nc; i++)
			for (pw = 0; pw <= 1; pw++)
				if ((bases[i], pw) in cl)
					printf "%s%s", (n++ ? ", \\\n  " : "plot "), cl[bases[i], pw]
		print ""
	}' "$tmp/names" > "$tmp/plot"

gtitle=$(printf '%s' "$title" | tr -d '"')
cat > "$tmp/gp" <<EOF
set terminal pngcairo size 1100,700 noenhanced font ",10"
set output "$png"
set title "$gtitle"
set logscale xy
set xlabel "message size (bytes)"
set ylabel "latency (us): half round trip (ping-pong), half time per exchange (pairwise)"
set format x "%.0s%c"
set grid xtics ytics mxtics mytics lc rgb "#dddddd"
set key outside right top
EOF
cat "$tmp/plot" >> "$tmp/gp"
mkdir -p "$(dirname "$png")"
if ! gnuplot "$tmp/gp" 2> "$tmp/err"; then
	echo "plot-latency: gnuplot failed: $(tail -n 3 "$tmp/err" | tr '\n' ' ')" >&2
	exit 1
fi
echo "plot-latency: $png ($i series from $tsv)"
