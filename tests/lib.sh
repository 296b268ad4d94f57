# Shared helpers for shell tests.  Each check prints "PASS: name" or
# "FAIL: name"; tests/run.sh counts them.
TOP=$(cd "$(dirname "$0")/../.." && pwd)
VCLUSTER="$TOP/build/bin/vcluster"
FABRICCTL="$TOP/build/bin/fabricctl"

pass() { echo "PASS: $1"; }
fail() { echo "FAIL: $1${2:+ -- $2}"; }

# check NAME CMD...: pass when CMD succeeds.
check() {
	name=$1; shift
	if out=$("$@" 2>&1); then pass "$name"; else fail "$name" "$(echo "$out" | tail -n 5 | tr '\n' ' ')"; fi
}

# check_fails NAME CMD...: pass when CMD fails.
check_fails() {
	name=$1; shift
	if out=$("$@" 2>&1); then fail "$name" "unexpectedly succeeded: $(echo "$out" | tail -n 3 | tr '\n' ' ')"; else pass "$name"; fi
}

# retry N CMD...: run CMD up to N times, a second apart, until it succeeds.
retry() {
	n=$1; shift
	while [ "$n" -gt 0 ]; do
		"$@" >/dev/null 2>&1 && return 0
		n=$((n - 1)); [ "$n" -gt 0 ] && sleep 1
	done
	return 1
}
