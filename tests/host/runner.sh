#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# tests/run.sh itself, on a scratch tree of fixture tests: a script that
# dies half way, one that prints fewer checks than it declares, a skip, a
# TAP program that stops early.  Each must count the way the runner's
# header says, and turn the run red.
set -u
. "$(dirname "$0")/../lib.sh"
plan 11
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

# fixture NAME: a scratch tree with the real runner and lib.sh; the caller
# adds tests to $tree/tests/cluster and $tree/build/tests/unit.
fixture() {
	tree=$tmp/$1
	mkdir -p "$tree/tests/cluster" "$tree/tests/host" "$tree/tests/unit" "$tree/tests/qtest" \
		"$tree/build/tests/unit" "$tree/build/tests/qtest"
	cp "$TOP/tests/run.sh" "$TOP/tests/lib.sh" "$tree/tests/"
}
cluster_script() { # NAME BODY: a cluster-style script in $tree
	printf '#!/bin/sh\n. "$(dirname "$0")/../lib.sh"\n%s\n' "$2" > "$tree/tests/cluster/$1"
}
tap_program() { # NAME BODY: a TAP-speaking program in $tree/build/tests/unit
	: > "$tree/tests/unit/$1.c"
	printf '#!/bin/sh\n%s\n' "$2" > "$tree/build/tests/unit/$1"
	chmod +x "$tree/build/tests/unit/$1"
}
runner() { # ARGS: run the scratch runner; output in $tmp/out, status in $rc
	sh "$tree/tests/run.sh" "$@" > "$tmp/out" 2>&1
	rc=$?
}
last_line() { tail -n 1 "$tmp/out"; }

# A healthy script: 2 of 2, green.
fixture good
cluster_script a.sh 'plan 2
pass "one"
pass "two"'
runner cluster
[ "$rc" = 0 ] && [ "$(last_line)" = "4 passed, 0 failed, 0 skipped" ] &&
	pass "a script that keeps its plan passes (both modes)" ||
	fail "a script that keeps its plan passes (both modes)" "rc=$rc $(last_line)"

# Exit 1 half way: red, and the lost checks are named.
fixture dies
cluster_script a.sh 'plan 3
pass "one"
exit 1
pass "two"
pass "three"'
runner cluster
[ "$rc" != 0 ] && grep -q '^FAIL: cluster: a.sh direct exited with status 1' "$tmp/out" &&
	grep -q '^FAIL: cluster: a.sh direct ended after 1 of its 3 checks' "$tmp/out" &&
	pass "a script that exits 1 half way turns the run red" ||
	fail "a script that exits 1 half way turns the run red" "rc=$rc $(tr '\n' ' ' < "$tmp/out")"

# Exit 0 but fewer checks than declared.
fixture short
cluster_script a.sh 'plan 3
pass "one"
exit 0'
runner cluster
[ "$rc" != 0 ] && [ "$(last_line)" = "2 passed, 2 failed, 0 skipped" ] &&
	pass "a script with fewer checks than its plan fails" ||
	fail "a script with fewer checks than its plan fails" "rc=$rc $(last_line)"

# More checks than declared: the plan is out of date.
fixture long
cluster_script a.sh 'plan 1
pass "one"
pass "two"'
runner cluster
[ "$rc" != 0 ] && grep -q 'printed 2 checks but declares 1' "$tmp/out" &&
	pass "a script with more checks than its plan fails" ||
	fail "a script with more checks than its plan fails" "rc=$rc $(last_line)"

# No plan at all.
fixture noplan
cluster_script a.sh 'pass "one"'
runner cluster
[ "$rc" != 0 ] && grep -q '^FAIL: cluster: a.sh direct declares no plan' "$tmp/out" &&
	pass "a script without a plan fails" ||
	fail "a script without a plan fails" "rc=$rc $(last_line)"

# A skip: counted apart, never as a pass; a failure under --strict.
fixture skip
cluster_script a.sh 'plan 2
pass "one"
skip "two" "no tshark"'
runner cluster
[ "$rc" = 0 ] && [ "$(last_line)" = "2 passed, 0 failed, 2 skipped" ] &&
	pass "a skip is counted as skipped, not passed" ||
	fail "a skip is counted as skipped, not passed" "rc=$rc $(last_line)"
runner --strict cluster
[ "$rc" != 0 ] && [ "$(last_line)" = "2 passed, 2 failed, 0 skipped" ] &&
	grep -q '^FAIL: two -- no tshark (skipped' "$tmp/out" &&
	pass "under --strict (make check) a skip is a failure" ||
	fail "under --strict (make check) a skip is a failure" "rc=$rc $(last_line)"

# TAP: a GLib-style skip, and a program that stops before its plan.
fixture tap
tap_program test-skip 'echo 1..2; echo "ok 1 /x"; echo "ok 2 /y # SKIP tshark is not installed"'
tap_program test-stops 'echo 1..3; echo "ok 1 /p"; kill -SEGV $$'
runner unit
[ "$(last_line)" = "2 passed, 2 failed, 1 skipped" ] &&
	grep -q '^SKIP: test-skip /y -- tshark is not installed' "$tmp/out" &&
	grep -q '^FAIL: test-stops ended after 1 of its 3 checks' "$tmp/out" &&
	grep -q '^FAIL: test-stops exited with status' "$tmp/out" &&
	pass "TAP: a skip is skipped, a crash before the plan's end fails" ||
	fail "TAP: a skip is skipped, a crash before the plan's end fails" "$(tr '\n' ' ' < "$tmp/out")"

# A test whose program was not built (or not as a program) fails.
fixture unbuilt
tap_program test-ok 'echo 1..1; echo "ok 1 /a"'
: > "$tree/tests/unit/test-gone.c"
: > "$tree/tests/unit/test-half.c"
printf 'not a program' > "$tree/build/tests/unit/test-half"
runner unit
[ "$rc" != 0 ] && [ "$(last_line)" = "1 passed, 2 failed, 0 skipped" ] &&
	grep -q '^FAIL: test-gone was not built' "$tmp/out" &&
	grep -q '^FAIL: test-half was not built' "$tmp/out" &&
	pass "a test program that was not built fails" ||
	fail "a test program that was not built fails" "rc=$rc $(tr '\n' ' ' < "$tmp/out")"

# A script that hangs is stopped at the limit and counted as failed.
fixture hang
cluster_script a.sh 'plan 1
sleep 30
pass "one"'
VCLUSTER_TEST_LIMIT=2 runner cluster
[ "$rc" != 0 ] && grep -q '^FAIL: cluster: a.sh direct stopped after 2s' "$tmp/out" &&
	pass "a script past the time limit is stopped and fails" ||
	fail "a script past the time limit is stopped and fails" "rc=$rc $(tr '\n' ' ' < "$tmp/out")"

# Nothing ran at all is not a success.
fixture empty
runner unit
[ "$rc" != 0 ] && [ "$(last_line)" = "0 passed, 0 failed, 0 skipped" ] &&
	pass "a run with no checks is not green" ||
	fail "a run with no checks is not green" "rc=$rc $(last_line)"
