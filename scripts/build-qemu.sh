#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Build our QEMU: Debian's qemu 7.2 source (cached outside the tree) plus qemu-hw/.
# Incremental: the source is unpacked and configured once; ninja rebuilds what changed.
# --sanitize: the same source in build/qemu-asan with AddressSanitizer and
# UndefinedBehaviorSanitizer, for the device fuzzers.
set -eu

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${VCLUSTER_CACHE:-/var/cache/vcluster}/qemu-src
src=$top/build/qemu-src
bld=$top/build/qemu
variant=
case ${1:-} in
"") ;;
--sanitize) bld=$top/build/qemu-asan; variant=--enable-sanitizers ;;
*) echo "usage: build-qemu.sh [--sanitize]" >&2; exit 2 ;;
esac

die() { echo "build-qemu: $*" >&2; exit 1; }

dsc=$("$top/scripts/fetch-qemu-src.sh" "$cache") || die "no QEMU 7.2 source (see above)"

# The stamp holds the patch's checksum: a changed patch prepares the source again.
patch_sum=$(sha256sum < "$top/qemu-hw/qemu-patch/vcluster.patch" | cut -d' ' -f1)
if [ "$(cat "$src/.vcluster-prepared" 2>/dev/null)" != "$patch_sum" ]; then
	rm -rf "$src"
	mkdir -p "$top/build"
	echo "build-qemu: unpacking $(basename "$dsc")"
	# dpkg-source copies the tarballs beside the target; they are not needed after.
	dpkg-source -q -x "$dsc" "$src" > "$top/build/dpkg-source.log" 2>&1 ||
		die "dpkg-source -x $dsc failed (log: build/dpkg-source.log)"
	rm -f "$top"/build/qemu_7.2*
	patch -s -d "$src" -p1 < "$top/qemu-hw/qemu-patch/vcluster.patch" ||
		die "qemu-hw/qemu-patch/vcluster.patch does not apply"
	echo "$patch_sum" > "$src/.vcluster-prepared"
fi
# hw/vcluster points at this checkout's qemu-hw/, so edits there are built directly;
# include/vcluster at its include/vcluster/ and include/proto at its proto/, so
# the devices include the shared register headers as "vcluster/hw/..." and the
# wire protocol as "proto/<kind>.h" like everyone else, and ninja's
# dependencies on them name paths that exist (a "../" through the hw/vcluster
# link would not: ninja shortens it by text, and rebuilds on every run).
ln -sfn "$top/qemu-hw" "$src/hw/vcluster"
ln -sfn "$top/include/vcluster" "$src/include/vcluster"
ln -sfn "$top/proto" "$src/include/proto"

# Relative paths in ccache's hash: another clone of the tree reuses the cache.
export CCACHE_BASEDIR="$top" CCACHE_NOHASHDIR=1

if [ ! -f "$bld/build.ninja" ]; then
	mkdir -p "$bld"
	echo "build-qemu: configuring $bld (x86_64-softmmu, TCG and KVM${variant:+, sanitizers})"
	# Debian's python3 and meson, whatever python an environment puts first in PATH.
	(cd "$bld" && PATH=/usr/bin:/bin:$PATH "$src/configure" \
		--target-list=x86_64-softmmu \
		--without-default-features \
		--enable-tcg --enable-kvm --enable-fdt=system \
		--cc=/usr/lib/ccache/gcc --cxx=/usr/lib/ccache/g++ --objcc=/usr/lib/ccache/gcc \
		--disable-docs --disable-install-blobs --disable-werror \
		--with-git-submodules=ignore $variant \
		--prefix=/usr \
		--firmwarepath=/usr/share/qemu:/usr/share/seabios:/usr/lib/ipxe/qemu \
		> "$bld/configure.log" 2>&1) || {
		tail -n 30 "$bld/configure.log" >&2
		rm -f "$bld/build.ninja"
		die "configure failed (log: $bld/configure.log)"
	}
fi

# ninja's own lines go to the log; one progress line every few seconds here
# (V=1: every command, as ninja -v prints them).
echo "build-qemu: compiling (log: $bld/ninja.log)"
verbose=
[ "${V:-0}" = 1 ] && verbose=-v
rc_file=$bld/.ninja-rc
rm -f "$rc_file"
{
	NINJA_STATUS='[%f/%t] ' ninja $verbose -C "$bld" qemu-system-x86_64 2>&1
	echo $? > "$rc_file"
} | {
	last=$(date +%s)
	while IFS= read -r line; do
		printf '%s\n' "$line"
		[ -n "$verbose" ] && printf '%s\n' "$line" >&2
		case $line in
		\[*/*\]*)
			now=$(date +%s)
			if [ $((now - last)) -ge 5 ]; then
				last=$now
				step=${line%%]*}; step=${step#[}
				done_n=${step%/*}; total=${step#*/}
				echo "build-qemu: $step steps, $((done_n * 100 / total))%" >&2
			fi ;;
		esac
	done
} > "$bld/ninja.log"
if [ "$(cat "$rc_file" 2>/dev/null)" != 0 ]; then
	grep -v '^\[' "$bld/ninja.log" | tail -n 40 >&2
	die "ninja failed (log: $bld/ninja.log)"
fi
rm -f "$rc_file"
