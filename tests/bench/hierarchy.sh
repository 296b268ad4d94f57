# SPDX-License-Identifier: GPL-2.0-or-later
# Shared by make bench-sockets (tests/bench/sockets.sh, free-running) and
# make bench-sockets-lockstep (tests/bench/sockets-lockstep.sh, virtual
# time): the papers' figures for each row of the protocol hierarchy, and
# the report of a sockets TSV (nic, layer, size_bytes, latency_us,
# bandwidth_MBps, paper): the table, every row, and the targets' ratios.

# The papers' figures at the same level, latency at 8 bytes and bandwidth
# (MB/s) at 64 KiB.  004 Table 3 ("Performance of the protocol
# hierarchy"): a DEC Alpha 21064A at 275 MHz and a Pentium at 120 MHz
# (PC), ParaStation against the OS's sockets over Ethernet; its MPI figure
# is P4's, on the same sockets.  000/003 section 5 (ParaStation2, Myrinet):
# about 25 us for every interface, 100-150 MB/s, and the first PVM on
# ParaStation sockets (220 us on the OS's, about 90 us on ParaStation's).
hier_paper() {	# hier_paper NIC LAYER SIZE
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

# hier_header TSV: the TSV's first line
hier_header() {
	printf 'nic\tlayer\tsize_bytes\tlatency_us\tbandwidth_MBps\tpaper\n' > "$1"
}
# hier_row TSV NIC LAYER SIZE LATENCY: one row, bandwidth = size /
# latency; an empty LATENCY (no run succeeded) gives "-" for both figures
hier_row() {
	awk -v n="$2" -v l="$3" -v s="$4" -v t="$5" -v r="$(hier_paper "$2" "$3" "$4")" 'BEGIN {
		if (t == "" || t + 0 <= 0)
			printf "%s\t%s\t%s\t-\t-\t%s\n", n, l, s, r
		else
			printf "%s\t%s\t%s\t%.2f\t%.3f\t%s\n", n, l, s, t, s / t, r }' >> "$1"
}

# hier_report TSV WHAT: the table (latency at 8 bytes, bandwidth at 64 KiB
# per layer and path: the first row of each; eth's sockets are tcpbench on
# the kernel), every row with the papers' figures, and the targets; WHAT
# says where the figures come from
hier_report() {
	echo
	echo "Protocol hierarchy, node0 <-> node1: $2"
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
		}' "$1"
	echo
	echo "Every row, with the papers' figures (004 Table 3: Alpha 21064A 275 MHz, Pentium 120 MHz)"
	awk -F'\t' 'NR > 1 {
		printf "  %-5s %-8s %6s B  %9s us  %9s MB/s   paper: %s\n", $1, $2, $3, $4, $5, $6 }' "$1"
	echo
	echo "Targets (reported, never enforced; ratios of figures from this run):"
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
		}' "$1"
}
