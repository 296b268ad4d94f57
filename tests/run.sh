#!/bin/sh
# Test runner: tests/run.sh unit|qtest|cluster|all.  Ends with "N passed, N failed".
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
what=${1:-all}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# run_tap DIR: every GLib test program in DIR.
run_tap() {
	for t in "$1"/test-*; do
		[ -x "$t" ] || continue
		name=$(basename "$t")
		echo "== $(basename "$1"): $name"
		out=$(mktemp)
		"$t" --tap > "$out" 2>&1
		rc=$?
		# GLib tests speak TAP: each "ok"/"not ok" line is one check.
		sed -n -e "s/^ok [0-9]* \(.*\)/PASS: $name \1/p" \
			-e "s/^not ok [0-9]* \(.*\)/FAIL: $name \1/p" "$out" | tee -a "$log"
		if [ "$rc" -ne 0 ] && ! grep -q '^not ok' "$out"; then
			echo "FAIL: $name exited with status $rc" | tee -a "$log"
			tail -n 20 "$out"
		fi
		rm -f "$out"
	done
}

run_cluster() {
	for t in tests/cluster/*.sh; do
		echo "== cluster: $(basename "$t") $*"
		sh "$t" "$@" 2>&1 | tee -a "$log" | grep -E '^(PASS|FAIL|==|  )' || true
	done
}

case $what in
unit) run_tap build/tests/unit ;;
qtest) run_tap build/tests/qtest ;;
cluster) run_cluster direct; run_cluster libvirt ;;
all)
	run_tap build/tests/unit
	run_tap build/tests/qtest
	run_cluster direct
	run_cluster libvirt
	;;
*) echo "usage: tests/run.sh unit|qtest|cluster|all" >&2; exit 2 ;;
esac

passed=$(grep -c '^PASS: ' "$log")
failed=$(grep -c -e '^FAIL: ' -e '^Bail out' "$log")
if [ "$failed" -gt 0 ]; then
	echo "failures:"
	grep -e '^FAIL: ' -e '^Bail out' "$log" | sed 's/^/  /'
fi
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ] && [ "$passed" -gt 0 ]
