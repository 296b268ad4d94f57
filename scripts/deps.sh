#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Install every Debian package the project needs (idempotent); enable deb-src for QEMU's source.
set -eu

PACKAGES="
build-essential ccache pkg-config git ninja-build meson python3 dpkg-dev
libglib2.0-dev libjson-glib-dev libpixman-1-dev zlib1g-dev libfdt-dev
seabios qemu-system-data ipxe-qemu
linux-image-amd64 linux-headers-amd64 kmod
busybox-static cpio zstd xz-utils qemu-guest-agent
libvirt-daemon libvirt-daemon-driver-qemu libvirt-clients
tshark iproute2 procps gnuplot-nox
gcc-riscv64-unknown-elf binutils-riscv64-unknown-elf
strace netpipe-tcp pvm pvm-examples pvm-dev openmpi-bin libopenmpi-dev dropbear-bin
hpcc iperf3 sockperf qperf
"

if [ "$(id -u)" != 0 ]; then
	echo "make deps: needs root to install packages; run: sudo make deps" >&2
	exit 1
fi

export DEBIAN_FRONTEND=noninteractive

# deb-src lets `apt-get source qemu` fetch Debian's QEMU 7.2 source.
need_update=0
for f in /etc/apt/sources.list.d/*.sources; do
	[ -f "$f" ] || continue
	if grep -q '^Types: deb$' "$f"; then
		sed -i 's/^Types: deb$/Types: deb deb-src/' "$f"
		need_update=1
	fi
done
if [ -f /etc/apt/sources.list ] && grep -q '^deb ' /etc/apt/sources.list &&
   ! grep -q '^deb-src ' /etc/apt/sources.list; then
	sed -n 's/^deb \(.*\)/deb-src \1/p' /etc/apt/sources.list >> /etc/apt/sources.list
	need_update=1
fi

missing=""
for p in $PACKAGES; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing="$missing $p"
done

if [ -z "$missing" ] && [ "$need_update" = 0 ]; then
	echo "make deps: all packages present"
	exit 0
fi
apt-get update -q
if [ -n "$missing" ]; then
	echo "make deps: installing$missing"
	apt-get install -y -q --no-install-recommends $missing
fi
