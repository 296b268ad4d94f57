#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# check-fresh.sh [TARGET...] (make check-fresh: demo, then check): a clone of
# HEAD in a scratch folder with
# every cache empty: Debian's QEMU source ($VCLUSTER_CACHE), ccache
# ($CCACHE_DIR), the build directory (QEMU's build, the guest image) and the
# run directory ($VCLUSTER_RUNDIR).  Then `make TARGET` there for each TARGET
# in turn, as a machine that has never seen the project would run the
# README's commands.  Prints each one's wall time; stops at the first failure.
# The packages stay: `make deps` from nothing is what .ci/run does first.
set -eu
top=$(cd "$(dirname "$0")/.." && pwd)
[ $# -gt 0 ] || set -- check
base=$(mktemp -d /var/tmp/vcluster-fresh.XXXXXX)
# Scratch goes unless KEEP=1 (to read the logs of a failed run).
trap '[ "${KEEP:-0}" = 1 ] || rm -rf "$base"' EXIT INT TERM

git -C "$top" diff --quiet HEAD ||
	echo "check-fresh: note: uncommitted changes are not in the clone (HEAD only)"
git clone -q "$top" "$base/tree"
mkdir -p "$base/cache" "$base/ccache" "$base/run"
echo "check-fresh: clone of $(git -C "$top" rev-parse --short HEAD) in $base/tree;" \
	"empty source cache, ccache and run directory"
for target in "$@"; do
	start=$(date +%s)
	rc=0
	(cd "$base/tree" && env VCLUSTER_CACHE="$base/cache" CCACHE_DIR="$base/ccache" \
		VCLUSTER_RUNDIR="$base/run" make "$target") || rc=$?
	echo "check-fresh: make $target exited $rc after $(($(date +%s) - start)) s"
	[ "$rc" = 0 ] || exit "$rc"
done
