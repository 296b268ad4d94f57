#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# fetch-qemu-src.sh DIR: put Debian's qemu 7.2 source package (.dsc and its
# tarballs) into DIR, unless DIR already holds a complete one.  Prints the
# .dsc's path on stdout; everything else goes to stderr.
#
# `apt-get source` wants an exact version, so the version is resolved from what
# the archive offers: the one matching the installed qemu-system-data (its
# firmware and keymaps are what our build uses) if offered, else the newest
# 7.2.  The download goes to a scratch folder and is moved in only when
# apt-get succeeded, so an interrupted fetch never leaves a half cache.
set -eu

die() { echo "fetch-qemu-src: $*" >&2; exit 1; }

[ $# -eq 1 ] || die "usage: fetch-qemu-src.sh DIR"
dir=$1

# A cached .dsc counts only with every file it lists beside it.
complete_dsc() {
	for d in "$dir"/qemu_7.2*.dsc; do
		[ -f "$d" ] || continue
		ok=1
		for f in $(sed -n '/^Files:/,/^[^ ]/s/^ [0-9a-f]* [0-9]* //p' "$d"); do
			[ -f "$dir/$f" ] || ok=0
		done
		[ "$ok" = 1 ] && echo "$d"
	done | sort -V | tail -n 1
}

dsc=$(complete_dsc)
if [ -n "$dsc" ]; then
	echo "$dsc"
	exit 0
fi

command -v apt-get >/dev/null || die "apt-get not found: this needs Debian 12"
command -v dpkg-source >/dev/null || die "dpkg-source not found; run: make deps (package dpkg-dev)"

offered=$(apt-cache showsrc qemu 2>/dev/null | sed -n 's/^Version: \(1:7\.2[^ ]*\)$/\1/p' | sort -u)
if [ -z "$offered" ]; then
	if ! apt-cache showsrc qemu >/dev/null 2>&1; then
		die "no source packages are known to apt (no deb-src entries, or apt-get update not run since); run: make deps"
	fi
	die "the archive offers no qemu 7.2 source (offered: $(apt-cache showsrc qemu | sed -n 's/^Version: //p' | tr '\n' ' '))"
fi

installed=$(dpkg-query -W -f='${Version}' qemu-system-data 2>/dev/null || true)
version=
for v in $offered; do
	[ "$v" = "$installed" ] && version=$v
done
if [ -z "$version" ]; then
	version=$(printf '%s\n' $offered | sort -V | tail -n 1)
	[ -n "$installed" ] &&
		echo "fetch-qemu-src: qemu-system-data $installed has no source in the archive; using $version" >&2
fi

mkdir -p "$dir" || die "cannot create $dir; run as root or set VCLUSTER_CACHE"
scratch=$(mktemp -d "$dir/.fetch.XXXXXX") || die "cannot write to $dir"
trap 'rm -rf "$scratch"' EXIT INT TERM

echo "fetch-qemu-src: downloading qemu $version source into $dir" >&2
# _apt cannot write into root's private folders; download as root instead.
if ! (cd "$scratch" && apt-get source --download-only -q -o APT::Sandbox::User=root \
		"qemu=$version" >"$scratch/apt.log" 2>&1); then
	sed 's/^/  /' "$scratch/apt.log" >&2
	die "apt-get source qemu=$version failed"
fi
# Verify the checksums before the files go in: dpkg-source checks them on
# extract, but a corrupt download should fail here, where it came from.
d=$(ls "$scratch"/qemu_*.dsc 2>/dev/null | head -n 1)
[ -n "$d" ] || die "apt-get source qemu=$version left no .dsc"
(cd "$scratch" && sed -n '/^Checksums-Sha256:/,/^[^ ]/s/^ \([0-9a-f]*\) [0-9]* \(.*\)/\1  \2/p' \
	"$(basename "$d")" | sha256sum -c --quiet -) >&2 ||
	die "downloaded qemu $version source fails its .dsc checksums"
rm -f "$scratch/apt.log"
mv "$scratch"/* "$dir"/
complete_dsc
