#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# scripts/plot-hierarchy.sh OUT.png TSV [TITLE]: the protocol hierarchy of
# make bench-sockets (tests/bench/sockets.sh) as bars, drawn with gnuplot:
# on the left the latency at 8 bytes, on the right the bandwidth at 64 KiB,
# one group of bars per layer (hal, rawdata, ports, sockets, NetPIPE, MPI,
# PVM) and in each group one bar per NIC: ps1 (the ParaStation board), myri
# (the Myrinet card), eth (kernel TCP over virtio-net).  Both axes are
# logarithmic: the layers span three orders of magnitude.
#
# TSV is sockets.tsv: a header line, then nic, layer, size_bytes,
# latency_us, bandwidth_MBps (a paper column after them is not read).  The
# eth rows of layer tcp (tcpbench on the kernel) go into the sockets group,
# beside tcpbench under psrun on the NICs.  The first row of a (nic, layer,
# size) counts; a figure that is not a number ("-": the point failed) leaves
# its bar out.
# Exit status: 0 drawn, 1 nothing to draw or gnuplot failed, 2 usage.
set -eu
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
	echo "usage: $0 OUT.png TSV [TITLE]" >&2
	exit 2
fi
png=$1 tsv=$2 title=${3:-protocol hierarchy}
if ! command -v gnuplot >/dev/null 2>&1; then
	echo "plot-hierarchy: gnuplot not found (make deps installs gnuplot-nox): no $png" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# data: one line per layer, "LABEL lat_ps1 lat_myri lat_eth bw_ps1
# bw_myri bw_eth", "-" where there is no figure
awk -F'\t' '
	function num(v) { return v ~ /^[0-9]*\.?[0-9]+([eE][-+]?[0-9]+)?$/ && v + 0 > 0 }
	NR == 1 {
		for (i = 1; i <= NF; i++) c[$i] = i
		if (!c["nic"] || !c["layer"] || !c["size_bytes"] || !c["latency_us"] || !c["bandwidth_MBps"]) {
			print "plot-hierarchy: the TSV lacks a column of sockets.tsv" > "/dev/stderr"
			exit 1
		}
		next
	}
	{
		n = $c["nic"]; l = $c["layer"]; s = $c["size_bytes"]
		if (n == "eth" && l == "tcp") l = "sockets"
		if (s == 8 && !((n, l) in lat) && num($c["latency_us"])) { lat[n, l] = $c["latency_us"]; any = 1 }
		if (s == 65536 && !((n, l) in bw) && num($c["bandwidth_MBps"])) { bw[n, l] = $c["bandwidth_MBps"]; any = 1 }
	}
	END {
		if (!any) exit 0
		split("hal rawdata ports sockets netpipe mpi pvm", L, " ")
		split("HAL rawdata ports sockets NetPIPE MPI PVM", T, " ")
		split("ps1 myri eth", N, " ")
		for (i = 1; i <= 7; i++) {
			line = T[i]
			for (k = 1; k <= 3; k++) line = line " " (((N[k], L[i]) in lat) ? lat[N[k], L[i]] : "-")
			for (k = 1; k <= 3; k++) line = line " " (((N[k], L[i]) in bw) ? bw[N[k], L[i]] : "-")
			print line
		}
	}' "$tsv" > "$tmp/data"
[ -s "$tmp/data" ] || { echo "plot-hierarchy: nothing to draw in $tsv" >&2; exit 1; }

gtitle=$(printf '%s' "$title" | tr -d '"')
# the groups' names at their centres (0, 1, ...), whatever bars are missing;
# the bars of a group of 3 with a gap of 1 are 1/4 wide, their centres at
# -1/4, 0 and +1/4 from it: the figures above them go there
xt=$(awk '{ printf "%s\"%s\" %d", (NR > 1 ? ", " : ""), $1, NR - 1 }' "$tmp/data")
last=$(($(wc -l < "$tmp/data") - 1))
# each axis starts at the power of ten below half its smallest figure, so
# that the shortest bar still shows
ymin() {	# ymin FIRST_COLUMN
	awk -v c="$1" '{ for (i = c; i < c + 3; i++) if ($i != "-" && (m == "" || $i + 0 < m)) m = $i + 0 }
		END { if (m == "") { print "*"; exit }
			x = log(m / 2) / log(10); f = int(x); if (f > x) f--
			printf "%g\n", 10 ^ f }' "$tmp/data"
}
bars() {	# bars FIRST_COLUMN FORMAT: the plot clauses of one panel
	cat <<EOF
plot "$tmp/data" using $1 lc rgb "#1f77b4" title "ps1 (ParaStation board)", \\
     "" using $(($1 + 1)) lc rgb "#d62728" title "myri (Myrinet card)", \\
     "" using $(($1 + 2)) lc rgb "#7f7f7f" title "eth (kernel TCP, virtio-net)", \\
     "" using (\$0 - 0.25):$1:(sprintf("$2", \$$1)) with labels offset 0,0.6 font ",7" notitle, \\
     "" using 0:$(($1 + 1)):(sprintf("$2", \$$(($1 + 1)))) with labels offset 0,0.6 font ",7" notitle, \\
     "" using (\$0 + 0.25):$(($1 + 2)):(sprintf("$2", \$$(($1 + 2)))) with labels offset 0,0.6 font ",7" notitle
EOF
}
{
	cat <<EOF
set terminal pngcairo size 1400,650 noenhanced font ",10"
set output "$png"
set datafile missing "-"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set logscale y
set grid ytics mytics lc rgb "#dddddd"
set key below horizontal
set xtics ($xt) nomirror
set xrange [-0.6:$last.6]
set multiplot layout 1,2 title "$gtitle"
set title "latency at 8 bytes (half round trip; lower is better)"
set ylabel "us"
set yrange [$(ymin 2):*]
EOF
	bars 2 "%.0f"
	cat <<EOF
set title "bandwidth at 64 KiB (64 KiB / latency; higher is better)"
set ylabel "MB/s"
set yrange [$(ymin 5):*]
EOF
	bars 5 "%.1f"
	echo "unset multiplot"
} > "$tmp/gp"
mkdir -p "$(dirname "$png")"
if ! gnuplot "$tmp/gp" 2> "$tmp/err"; then
	echo "plot-hierarchy: gnuplot failed: $(tail -n 3 "$tmp/err" | tr '\n' ' ')" >&2
	exit 1
fi
echo "plot-hierarchy: $png (from $tsv)"
