#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The include rules of docs/architecture.md, checked on the tree: shared
# things come from include/ and proto/ only, every wire encoding that the
# devices and fabricd share is written once in proto/, and the host build
# does not hand every folder to every file.
set -u
. "$(dirname "$0")/../lib.sh"
plan 4
cd "$TOP" || exit 1

# The component a path belongs to: qemu-hw, host-cli, or the first two
# folders.
component() {
	case $1 in
	qemu-hw/*) echo qemu-hw ;;
	host-cli/*) echo host-cli ;;
	*) echo "$1" | cut -d/ -f1-2 ;;
	esac
}

# 1. Nothing reaches into a driver's folder.
hits=$(grep -rn '\.\./guest-driver' qemu-hw daemon host-lib host-cli guest-lib images 2>/dev/null)
check "nothing includes from guest-driver/ but the driver itself" test -z "$hits"
[ -z "$hits" ] || echo "$hits" | sed 's/^/  /'

# 2. An include of one of our files stays in its own component, or goes
#    through include/ ("vcluster/...", "uapi/...") or proto/.
bad=$(find qemu-hw daemon host-lib host-cli guest-driver guest-lib images -name '*.[ch]' | sort |
while read -r file; do
	dir=$(dirname "$file")
	sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file" |
	while read -r inc; do
		case $inc in proto/*|vcluster/*|uapi/*) continue ;; esac
		target=$(realpath -m --relative-to=. "$dir/$inc")
		if [ -e "$target" ]; then
			[ "$(component "$target")" = "$(component "$file")" ] ||
				echo "$file: \"$inc\" is $target, in another folder"
		elif [ -e "$inc" ]; then
			echo "$file: \"$inc\" reaches into $(component "$inc") through -I."
		fi
	done
done)
check "includes across folders go through include/ or proto/ only" test -z "$bad"
[ -z "$bad" ] || echo "$bad" | sed 's/^/  /'

# 3. The devices and fabricd build HELLO, HELLO_ACK, REJECT and the CRC-32
#    of the ps1 and Myrinet frames through proto/ only (an assignment or
#    initializer of the opcode, or the CRC polynomial, anywhere else is a
#    second encoder; the tests build their own frames on purpose).
built=$(grep -rnE '([^=!<>]= *|\{ *)FABRIC_CTL_(HELLO|HELLO_ACK|REJECT)\b|0xedb88320' \
	qemu-hw daemon 2>/dev/null)
check "HELLO, HELLO_ACK, REJECT and the CRC are encoded in proto/ only" test -z "$built"
[ -z "$built" ] || echo "$built" | sed 's/^/  /'

# 4. The host build gives every file include/ and proto/ only.
flags=$(sed -n 's/^HOST_CFLAGS *=//p' Makefile)
case $flags in
*-Iqemu-hw*|*-Idaemon*|*-Iguest-*|*-Iimages*|*-Ihost-*) narrow=no ;;
*) narrow=yes ;;
esac
check "HOST_CFLAGS names no component folder ($flags)" test "$narrow" = yes
