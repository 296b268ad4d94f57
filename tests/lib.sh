# Shared helpers for shell tests.  Each check prints "PASS: name" or
# "FAIL: name"; tests/run.sh counts them.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
VCLUSTER="$TOP/build/bin/vcluster"
FABRICCTL="$TOP/build/bin/fabricctl"

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1${2:+ -- $2}"; }

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
