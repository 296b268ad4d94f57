# SPDX-License-Identifier: GPL-2.0-or-later
# Shared helpers for shell tests.  Each check prints "PASS: name", "FAIL: name"
# or "SKIP: name"; tests/run.sh counts them against the script's plan, so a
# script that stops early is a failure, not fewer passes.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
VCLUSTER="$TOP/build/bin/vcluster"
FABRICCTL="$TOP/build/bin/fabricctl"

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1${2:+ -- $2}"; }
# skip NAME WHY: a check that could not run (a failure under make check).
skip() { echo "SKIP: $1 -- $2"; }
# plan N: the number of checks this script prints, for tests/run.sh.
plan() { echo "PLAN: $1"; }

# check NAME CMD...: pass when CMD succeeds.
# (sh has no locals: the _lib_ names keep callers' variables intact.)
check() {
	_lib_name=$1; shift
	if _lib_out=$("$@" 2>&1); then pass "$_lib_name"; else fail "$_lib_name" "$(echo "$_lib_out" | tail -n 5 | tr '\n' ' ')"; fi
}

# check_fails NAME CMD...: pass when CMD fails.
check_fails() {
	_lib_name=$1; shift
	if _lib_out=$("$@" 2>&1); then fail "$_lib_name" "unexpectedly succeeded: $(echo "$_lib_out" | tail -n 3 | tr '\n' ' ')"; else pass "$_lib_name"; fi
}

# retry N CMD...: run CMD up to N times, a second apart, until it succeeds.
retry() {
	_lib_n=$1; shift
	while [ "$_lib_n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		_lib_n=$((_lib_n - 1)); [ "$_lib_n" -gt 0 ] && sleep 1
	done
	return 1
}

vc() { "$VCLUSTER" "$@"; }

# cluster_test PREFIX MODE: a test script's set-up.  Sets $mode (direct or
# libvirt), $name (PREFIX-MODE), $flags and a scratch dir $tmp; on exit the
# cluster is taken down and $tmp removed.
cluster_test() {
	mode=${2:-direct}
	name=$1-$mode
	flags=""
	[ "$mode" = libvirt ] && flags="--libvirt"
	tmp=$(mktemp -d)
	trap 'vc down --name "$name" >/dev/null 2>&1; rm -rf "$tmp"' EXIT INT TERM
}

# boot_cluster WHAT UP-ARGS...: boot cluster $name under TCG; one check
# "MODE: WHAT boots".  A script whose cluster does not boot ends there, with
# status 1: its other checks are lost, and the runner counts them as failed.
boot_cluster() {
	_lib_what=$1; shift
	vc down --name "$name" >/dev/null 2>&1
	# shellcheck disable=SC2086 # $flags is empty or one word
	if ! vc up --name "$name" --accel tcg $flags "$@" > "$tmp/up.log" 2>&1; then
		fail "$mode: $_lib_what boots" "$(tail -n 20 "$tmp/up.log" | tr '\n' ' ')"
		exit 1
	fi
	pass "$mode: $_lib_what boots"
	export VCLUSTER_NAME=$name
}

# pstest_pairwise ENV A B CMD ARGS...: pstest's pairwise exchange (the
# paper's benchmark) between nodes A and B at once, each naming the other
# (CMD's PEER comes first), with ENV (e.g. PS_HAL=myri, or "") before it.
# Both send, then both receive and check the peer's data; both must report
# "ok" and no FAIL.
pstest_pairwise() {
	_pw_env=$1 _pa=$2 _pb=$3 _pc=$4; shift 4
	vc exec -d "$_pb" -- "$_pw_env pstest $_pc $_pa $* > /tmp/pairwise.log 2>&1" >/dev/null
	_po=$(vc exec -t 120 "$_pa" -- "$_pw_env pstest $_pc $_pb $*") || { echo "$_po"; return 1; }
	echo "$_po" | grep -q '^ok' || { echo "$_po"; return 1; }
	retry 20 vc exec "$_pb" -- "grep -q '^ok' /tmp/pairwise.log && ! grep -q '^FAIL' /tmp/pairwise.log" ||
		{ vc exec "$_pb" -- cat /tmp/pairwise.log; return 1; }
}
