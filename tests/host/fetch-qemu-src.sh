#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The first step of every build, from nothing: scripts/fetch-qemu-src.sh
# into an empty temporary cache, against the real package archive, so that
# a warm /var/cache/vcluster can never hide a broken fetch again.  Then the
# cache's own rules (a complete cache needs no network, an incomplete one is
# fetched again) and the errors when the archive has no 7.2 source, with a
# fake apt-cache/apt-get first in PATH.
set -u
. "$(dirname "$0")/../lib.sh"
plan 12
fetch=$TOP/scripts/fetch-qemu-src.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
cache=$tmp/cache

# The download itself.
if dsc=$("$fetch" "$cache" 2>"$tmp/err"); then
	pass "fetch into an empty cache succeeds"
else
	fail "fetch into an empty cache succeeds" "$(tail -n 5 "$tmp/err" | tr '\n' ' ')"
fi
case $dsc in
"$cache"/qemu_7.2*.dsc) [ -f "$dsc" ] && pass "it prints the .dsc it put in the cache" ||
	fail "it prints the .dsc it put in the cache" "no file $dsc" ;;
*) fail "it prints the .dsc it put in the cache" "printed '$dsc'" ;;
esac

# The version: the installed qemu-system-data's if the archive has its source.
version=$(sed -n 's/^Version: //p' "$dsc" 2>/dev/null)
installed=$(dpkg-query -W -f='${Version}' qemu-system-data 2>/dev/null)
offered=$(apt-cache showsrc qemu 2>/dev/null | sed -n 's/^Version: //p')
if printf '%s\n' "$offered" | grep -qxF "$installed"; then
	want=$installed
else
	want=$(printf '%s\n' "$offered" | grep '^1:7\.2' | sort -V | tail -n 1)
fi
[ -n "$version" ] && [ "$version" = "$want" ] &&
	pass "the version is the installed qemu-system-data's, or the newest 7.2 ($version)" ||
	fail "the version is the installed qemu-system-data's, or the newest 7.2" \
		"got '$version', want '$want' (installed '$installed')"

# Every file the .dsc names is there with its checksum.
sums=$(sed -n '/^Checksums-Sha256:/,/^[^ ]/s/^ \([0-9a-f]*\) [0-9]* \(.*\)/\1  \2/p' "$dsc" 2>/dev/null)
if [ "$(printf '%s\n' "$sums" | grep -c .)" -ge 2 ] &&
   (cd "$cache" && printf '%s\n' "$sums" | sha256sum -c --quiet - >/dev/null 2>&1); then
	pass "every file the .dsc lists is in the cache with its sha256"
else
	fail "every file the .dsc lists is in the cache with its sha256" "$(ls "$cache" | tr '\n' ' ')"
fi
left=$(find "$cache" -name '.fetch.*' | wc -l)
[ "$left" = 0 ] && pass "no scratch folder is left behind" ||
	fail "no scratch folder is left behind" "$left left"

# dpkg-source accepts it (what build-qemu.sh does next), unpacking a 7.2 tree.
if dpkg-source -q -x "$dsc" "$tmp/src" >"$tmp/x.log" 2>&1 &&
   grep -qx '7\.2\.[0-9]*' "$tmp/src/VERSION"; then
	pass "dpkg-source unpacks it into a QEMU $(cat "$tmp/src/VERSION") tree"
else
	fail "dpkg-source unpacks it into a QEMU 7.2 tree" "$(tail -n 3 "$tmp/x.log" | tr '\n' ' ')"
fi
rm -rf "$tmp/src"

# Fake apt tools, first in PATH: each logs its call and does what $FAKE says.
mkdir -p "$tmp/bin"
cat > "$tmp/bin/apt-get" <<'EOF'
#!/bin/sh
echo "apt-get $*" >> "$FAKE_LOG"
echo "E: Failed to fetch qemu (fake outage)" >&2
exit 100
EOF
cat > "$tmp/bin/apt-cache" <<'EOF'
#!/bin/sh
echo "apt-cache $*" >> "$FAKE_LOG"
case $FAKE in
no-deb-src) echo "E: You must put some 'deb-src' URIs in your sources.list" >&2; exit 100 ;;
no-72) printf 'Package: qemu\nVersion: 1:8.0+dfsg-1\n\n' ;;
*) exec /usr/bin/apt-cache "$@" ;;
esac
EOF
chmod +x "$tmp/bin/apt-get" "$tmp/bin/apt-cache"
export FAKE_LOG="$tmp/fake.log"
fake() { # FAKE-MODE CACHE: the fetch with the fake tools; output in $tmp/out
	: > "$FAKE_LOG"
	FAKE=$1 PATH="$tmp/bin:$PATH" "$fetch" "$2" > "$tmp/out" 2>&1
}

# A complete cache needs nothing from the network.
if fake outage "$cache" && [ "$(cat "$tmp/out")" = "$dsc" ] && [ ! -s "$FAKE_LOG" ]; then
	pass "a complete cache is used without apt"
else
	fail "a complete cache is used without apt" "$(cat "$tmp/out" "$FAKE_LOG" | tr '\n' ' ')"
fi

# A cache that lost its tarball is incomplete: fetched again, here failing.
orig=$(ls "$cache"/qemu_7.2*.orig.tar.* | head -n 1)
mv "$orig" "$tmp/orig.saved"
if ! fake outage "$cache" && grep -q 'fake outage' "$tmp/out" &&
   grep -q "apt-get source .*qemu=$version" "$FAKE_LOG"; then
	pass "an incomplete cache is fetched again, and apt's error is shown"
else
	fail "an incomplete cache is fetched again, and apt's error is shown" "$(cat "$tmp/out" "$FAKE_LOG" | tr '\n' ' ')"
fi
left=$(find "$cache" -name '.fetch.*' | wc -l)
[ "$left" = 0 ] && [ ! -e "$orig" ] && pass "a failed fetch leaves no scratch and no partial file" ||
	fail "a failed fetch leaves no scratch and no partial file" "$(ls -a "$cache" | tr '\n' ' ')"
mv "$tmp/orig.saved" "$orig"

# No 7.2 in the archive, and no source entries at all: say which.
if ! fake no-72 "$tmp/empty1" && grep -q 'offers no qemu 7.2 source (offered: 1:8.0+dfsg-1' "$tmp/out"; then
	pass "no 7.2 source offered: a clear error naming what is offered"
else
	fail "no 7.2 source offered: a clear error naming what is offered" "$(cat "$tmp/out" | tr '\n' ' ')"
fi
if ! fake no-deb-src "$tmp/empty2" && grep -q 'deb-src.*make deps' "$tmp/out"; then
	pass "no source entries: the error says to run make deps"
else
	fail "no source entries: the error says to run make deps" "$(cat "$tmp/out" | tr '\n' ' ')"
fi

# build-qemu.sh fetches into $VCLUSTER_CACHE (what make check-fresh sets) and
# stops, with the reason, before it touches the build when the fetch fails.
: > "$FAKE_LOG"
if ! FAKE=outage VCLUSTER_CACHE="$tmp/vc" PATH="$tmp/bin:$PATH" \
		"$TOP/scripts/build-qemu.sh" > "$tmp/out" 2>&1 &&
   grep -q 'fake outage' "$tmp/out" && grep -q '^build-qemu: no QEMU 7.2 source' "$tmp/out" &&
   [ -d "$tmp/vc/qemu-src" ] && [ -s "$FAKE_LOG" ]; then
	pass "build-qemu.sh fetches into \$VCLUSTER_CACHE and stops on a failed fetch"
else
	fail "build-qemu.sh fetches into \$VCLUSTER_CACHE and stops on a failed fetch" "$(cat "$tmp/out" | tr '\n' ' ')"
fi
