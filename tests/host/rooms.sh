#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The rooms of docs/architecture.md, checked on the tree and the build: the
# launcher has a folder of its own and links the fabric library, not
# fabricd's models; images/ holds only what builds and fills the guest
# image; the pcapng format is defined once; no two files of the launcher
# or of fabricd call each other; every component that `make help` names is
# a target; psock waits in one engine.
# Needs the host tools built (make check builds them first).
set -u
. "$(dirname "$0")/../lib.sh"
plan 7
cd "$TOP" || exit 1

# 1. The launcher's sources are in host-cli/, none in images/.
stray=$(find images -name '*.c' -not -path 'images/guest-tools/*' | sort)
check "images/ holds no host program (the launcher is in host-cli/)" \
	test -z "$stray" -a -f host-cli/main.c
[ -z "$stray" ] || echo "$stray" | sed 's/^/  /'

# 2. The launcher's link line: the fabric library, and nothing of fabricd.
link=$(make -n -B V=1 build/bin/vcluster 2>/dev/null | grep -e '-o build/bin/vcluster ')
case $link in
*libvcfabric.a*) lib=yes ;;
*) lib=no ;;
esac
case $link in
*daemon/fabricd*|*libfabricd.a*|*libfabric.a*) models=yes ;;
*) models=no ;;
esac
check "vcluster links the fabric library and none of fabricd's parts" \
	test "$lib" = yes -a "$models" = no
[ "$lib" = yes ] && [ "$models" = no ] || echo "  link line: $link"

# 3. ... and the binary holds no symbol of fabricd's parts.
both=""
if [ -f build/lib/libfabricd.a ] && [ -f build/bin/vcluster ]; then
	nm --defined-only build/lib/libfabricd.a 2>/dev/null |
		awk 'NF == 3 && $2 ~ /[TDRB]/ { print $3 }' | sort -u > "$TOP/build/.rooms-fabricd"
	nm --defined-only build/bin/vcluster |
		awk 'NF == 3 && $2 ~ /[TDRB]/ { print $3 }' | sort -u > "$TOP/build/.rooms-vcluster"
	both=$(comm -12 "$TOP/build/.rooms-fabricd" "$TOP/build/.rooms-vcluster" | head -n 5)
	rm -f "$TOP/build/.rooms-fabricd" "$TOP/build/.rooms-vcluster"
	built=yes
else
	built=no
fi
check "the vcluster binary carries no fabricd code (built: $built)" \
	test "$built" = yes -a -z "$both"
[ -z "$both" ] || echo "$both" | sed 's/^/  fabricd symbol in vcluster: /'

# 4. The pcapng format's constants are defined in its header only.
defs=$(grep -rnE '^[[:space:]]*#[[:space:]]*define[[:space:]]+[A-Z_]*(BT_(SHB|IDB|EPB|PB|SPB)|BYTE_ORDER|OPT_(ENDOFOPT|COMMENT|IF_|EPB_|SHB_)|LINKTYPE|EPB_(INBOUND|CRC))' \
	--include='*.[ch]' qemu-hw daemon host-lib host-cli guest-lib images include tests proto |
	grep -v '^include/vcluster/fabric/pcapng.h:')
check "the pcapng format is defined in include/vcluster/fabric/pcapng.h only" test -z "$defs"
[ -z "$defs" ] || echo "$defs" | sed 's/^/  /'

# 5. No two files of the launcher, nor two of fabricd, call each other:
#    the commands call the launcher's cores (cluster, node, fabric, agent,
#    ...), fabricd's core calls its ports and kinds, never the other way.
#    Functions only: a registry that names a kind's ops table is how the
#    layer below is plugged in, not a call up.
# mutual_calls OBJECTS...: "a.c <-> b.c" for each pair that call each other.
mutual_calls() {
	for o in "$@"; do
		n=$(basename "$o" .o)
		nm "$o" | awk -v n="$n" 'NF == 3 && $2 == "T" { print "D", n, $3 }
			NF == 2 && $1 == "U" { print "U", n, $2 }'
	done | awk '$1 == "D" { def[$3] = $2 }
		$1 == "U" { use[NR] = $2 " " $3 }
		END {
			for (i in use) {
				split(use[i], u, " ")
				if ((u[2] in def) && def[u[2]] != u[1])
					edge[u[1] " " def[u[2]]] = 1
			}
			for (e in edge) {
				split(e, p, " ")
				if ((p[2] " " p[1]) in edge && p[1] < p[2])
					print p[1] ".c <-> " p[2] ".c"
			}
		}'
}
cli_objs=$(ls build/obj/host-cli/*.o 2>/dev/null)
fabricd_objs=$(ls build/obj/daemon/fabricd/*.o 2>/dev/null)
mutual=""
if [ -n "$cli_objs" ] && [ -n "$fabricd_objs" ]; then
	# shellcheck disable=SC2086 # one word per object file
	mutual="$(mutual_calls $cli_objs | sed 's|^|host-cli: |')
$(mutual_calls $fabricd_objs | sed 's|^|daemon/fabricd: |')"
	mutual=$(echo "$mutual" | sed '/^$/d')
fi
check "no two files of the launcher or of fabricd call each other" \
	test -n "$cli_objs" -a -n "$fabricd_objs" -a -z "$mutual"
[ -z "$mutual" ] || echo "$mutual" | sed 's/^/  /'

# 6. Each component in `make help` is a target make knows.
#    From make's database, without running anything: `make -n` would run
#    kbuild's recursive make for a module that is not built yet.
names=$(make --no-print-directory help | sed -n 's/^  \([a-z0-9-]*\) .*/\1/p')
# a rule that builds something: prerequisites or a recipe (not a bare .PHONY)
rules=$(make -pq --no-print-directory .DEFAULT 2>/dev/null | awk '
	/^[a-z0-9-]+:/ { if (t != "" && has) print t
		t = $1; sub(/:.*/, "", t); rest = $0; sub(/^[^:]*:+/, "", rest)
		has = rest ~ /[^ \t]/; next }
	/^\t/ { has = 1; next }
	/^$/ { if (t != "" && has) print t; t = "" }
	END { if (t != "" && has) print t }' | sort -u)
missing=""
for c in $names; do
	echo "$rules" | grep -qx "$c" || missing="$missing $c"
done
check "every component make help names is a target ($(echo $names | wc -w) named)" \
	test -n "$names" -a -z "$missing"
[ -z "$missing" ] || echo "  not targets:$missing"

# 7. psock waits in one engine: only wait.c sleeps or stalls on the NIC
#    (and block.c's blocking read, with the stall alone); port.c, which
#    defines those waits, aside.
waiters=$(grep -lE '\<psock_(nic_sleep|nic_awake|sleep_ms|port_wait)\(' \
	guest-lib/parastation/psock/*.c | sed 's|.*/||' | grep -vx port.c | sort | tr '\n' ' ')
check "psock waits in one engine (wait.c; block.c's read on the port)" \
	test "$waiters" = "block.c wait.c "
[ "$waiters" = "block.c wait.c " ] || echo "  files that wait on the NIC: $waiters"
