#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Test runner: tests/run.sh [--strict] unit|qtest|host|cluster|all
# Ends with "N passed, N failed, N skipped"; exits non-zero when a check
# failed (or nothing ran).
#
# A program or script counts as one whole: it must exit 0 and print as many
# checks as its plan declares (TAP's "1..N", a cluster script's "PLAN: N"),
# or the runner adds a failure for the checks it lost.  --strict (make check,
# where make deps has installed every tool) counts a skipped case as failed.
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
strict=0
if [ "${1:-}" = --strict ]; then
	strict=1
	shift
fi
what=${1:-all}
# A cluster script that runs longer than this is stuck (the slowest takes
# about 12 minutes under TCG on 2 cores).
script_limit=${VCLUSTER_TEST_LIMIT:-2400}
log=$(mktemp)
out=$(mktemp)
trap 'rm -f "$log" "$out"' EXIT

# record [shown]: add the result lines on stdin to the log and show them
# ("shown": they were shown already, as they came); in strict mode a skip
# becomes a failure.
record() {
	while IFS= read -r line; do
		case $line in
		SKIP:*)
			if [ "$strict" = 1 ]; then
				line="FAIL:${line#SKIP:} (skipped; make check runs every case: run make deps)"
				echo "$line"
			elif [ "${1:-}" != shown ]; then
				echo "$line"
			fi ;;
		*) [ "${1:-}" = shown ] || echo "$line" ;;
		esac
		printf '%s\n' "$line" >> "$log"
	done
}

# account NAME RC PLANNED COUNTED: the failures of a program as a whole.
account() {
	if [ "$2" -ne 0 ]; then
		if [ "$2" -eq 124 ] || [ "$2" -eq 137 ]; then
			echo "FAIL: $1 stopped after ${script_limit}s"
		else
			echo "FAIL: $1 exited with status $2"
		fi
	fi
	if [ -z "$3" ]; then
		echo "FAIL: $1 declares no plan"
	elif [ "$4" -lt "$3" ]; then
		echo "FAIL: $1 ended after $4 of its $3 checks"
	elif [ "$4" -gt "$3" ]; then
		echo "FAIL: $1 printed $4 checks but declares $3 (plan out of date)"
	fi
}

# run_tap SRCDIR BINDIR: the GLib test program of every SRCDIR/test-*.c;
# one that was not built (or not as a program) is a failure, not a gap.
run_tap() {
	for src in "$1"/test-*.c; do
		[ -e "$src" ] || continue
		name=$(basename "$src" .c)
		t=$2/$name
		echo "== $(basename "$1"): $name"
		if [ ! -f "$t" ] || [ ! -x "$t" ]; then
			echo "FAIL: $name was not built ($t)" | record
			continue
		fi
		"$t" --tap > "$out" 2>&1
		rc=$?
		# GLib tests speak TAP: each "ok"/"not ok" line is one check.
		sed -n -e "s/^ok [0-9]* \(.*\) # SKIP\(.*\)/SKIP: $name \1 --\2/p" \
			-e "/# SKIP/!s/^ok [0-9]* \(.*\)/PASS: $name \1/p" \
			-e "s/^not ok [0-9]* \(.*\)/FAIL: $name \1/p" "$out" | record
		planned=$(sed -n 's/^1\.\.\([0-9]*\).*/\1/p' "$out" | tail -n 1)
		counted=$(grep -c -e '^ok ' -e '^not ok ' "$out")
		account "$name" "$rc" "$planned" "$counted" | record
		[ "$rc" -ne 0 ] && tail -n 20 "$out"
	done
}

# run_script NAME SCRIPT ARGS...: one shell test script, counted against its plan.
run_script() {
	_name=$1; shift
	echo "== $_name"
	# The exit status travels as the last line; the output is shown as it comes.
	{
		timeout -k 60 "$script_limit" sh "$@" 2>&1
		echo "EXIT: $?"
	} | tee "$out" | grep -E '^(PASS|FAIL|SKIP|==|  )'
	grep -E '^(PASS|FAIL|SKIP): ' "$out" | record shown
	rc=$(sed -n 's/^EXIT: //p' "$out" | tail -n 1)
	planned=$(sed -n 's/^PLAN: //p' "$out" | tail -n 1)
	counted=$(grep -c -E '^(PASS|FAIL|SKIP): ' "$out")
	account "$_name" "${rc:-1}" "$planned" "$counted" | record
}

# run_host: tests of the build steps and of this runner (tests/host/).
run_host() {
	for t in tests/host/*.sh; do
		run_script "host: $(basename "$t")" "$t"
	done
}

# run_cluster MODE: every cluster script, in MODE (direct or libvirt).
run_cluster() {
	for t in tests/cluster/*.sh; do
		run_script "cluster: $(basename "$t") $1" "$t" "$1"
	done
}

case $what in
unit) run_tap tests/unit build/tests/unit ;;
qtest) run_tap tests/qtest build/tests/qtest ;;
host) run_host ;;
cluster) run_cluster direct; run_cluster libvirt ;;
all)
	run_host
	run_tap tests/unit build/tests/unit
	run_tap tests/qtest build/tests/qtest
	run_cluster direct
	run_cluster libvirt
	;;
*) echo "usage: tests/run.sh [--strict] unit|qtest|host|cluster|all" >&2; exit 2 ;;
esac

passed=$(grep -c '^PASS: ' "$log")
failed=$(grep -c '^FAIL: ' "$log")
skipped=$(grep -c '^SKIP: ' "$log")
if [ "$failed" -gt 0 ]; then
	echo "failures:"
	grep '^FAIL: ' "$log" | sed 's/^/  /'
fi
echo "$passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
