#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# make bench-rv32: how fast the LANai-style card's RV32IM core
# (qemu-hw/rv32core.c) runs firmware built by gcc, in the slices the device
# gives it, on this host.  Writes build/bench/rv32.tsv.  The figure is the
# host's speed, not the modelled card's: the device paces the core by the
# virtual clock.  The LANai 9 beside it ran at 133-200 MHz
# (../shared/reference/hardware.md).
set -eu
top=$(cd "$(dirname "$0")/../.." && pwd)
out=$top/build/bench/rv32.tsv
mkdir -p "$(dirname "$out")"
line=$("$top/build/tests/unit/test-rv32" -m perf -p /rv32/perf/throughput 2>&1 |
	sed -n 's/^# max perf: .*: \([0-9.]*\) MIPS in slices of \([0-9]*\).*/\1 \2/p')
[ -n "$line" ] || { echo "bench-rv32: test-rv32 printed no figure" >&2; exit 1; }
set -- $line
printf 'what\tslice_insns\tmips\n' > "$out"
printf 'rv32_gcc_firmware\t%s\t%s\n' "$2" "$1" >> "$out"
echo "RV32IM core, gcc-built firmware, slices of $2 instructions"
printf '  %-28s %8s MIPS\n' "rv32core.c on this host" "$1"
printf '  %-28s %8s MHz\n' "LANai 9 (PCI64B / PCI64C)" "133-200"
echo "(written to $out)"
