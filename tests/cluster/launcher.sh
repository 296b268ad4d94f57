#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vcluster's handling of bad input and failed boots: tests/cluster/launcher.sh MODE
set -u
. "$(dirname "$0")/../lib.sh"
cluster_test t-fail "${1:-direct}"
# direct: 13 checks of bad input first; libvirt: its domains at the end
plan $(test "$mode" = direct && echo 15 || echo 3)

# usage_error NAME EXPECTED-TEXT ARGS...: exit 2 and a message naming the problem.
usage_error() {
	_ue_name=$1 _ue_text=$2; shift 2
	vc "$@" > "$tmp/out" 2>&1
	rc=$?
	if [ "$rc" = 2 ] && grep -q -- "$_ue_text" "$tmp/out" && [ "$(wc -l < "$tmp/out")" -le 3 ]; then
		pass "$mode: $_ue_name"
	else
		fail "$mode: $_ue_name" "rc=$rc: $(head -c 300 "$tmp/out")"
	fi
}

if [ "$mode" = direct ]; then
	usage_error "up -n 0 is rejected" "1 to 64 nodes" up -n 0
	usage_error "unknown fabric kind is rejected" "fabric kind" up --fabric nosuch
	usage_error "bad --accel is rejected" "use auto, tcg or kvm" up --accel foo --name "$name"
	usage_error "a torus that does not fit -n is rejected" "W\*H must equal the node count" \
		up -n 4 --fabric ps1 --topology torus:3x3
	usage_error "a malformed topology is rejected" "use ring or torus" \
		up -n 4 --fabric ps1 --topology mesh
	usage_error "17 myrinet nodes without a switch file are rejected" \
		"16 ports of the default switch" up -n 17 --fabric eth,myrinet
	usage_error "a myrinet switch file without myrinet is rejected" \
		"needs --fabric myrinet" up -n 2 --myrinet-topology /dev/null
	usage_error "a bad myrinet switch file is rejected" "no \[switch0\] group" \
		up -n 2 --fabric myrinet --myrinet-topology /dev/null
	usage_error "bad cluster name is rejected" "bad cluster name" up --name 'a/b'
	usage_error "unknown command is rejected" "unknown command" frobnicate
	usage_error "exec without -- is rejected" "usage" exec 0 ls
	vc exec --name nosuch 0 -- true > "$tmp/out" 2>&1
	[ $? = 255 ] && grep -q "no cluster named 'nosuch'" "$tmp/out" &&
		pass "$mode: exec on a missing cluster names it" ||
		fail "$mode: exec on a missing cluster names it" "$(cat "$tmp/out")"
	"$FABRICCTL" -s "$tmp/none.sock" status > "$tmp/out" 2>&1
	[ $? = 2 ] && grep -q "is the fabric running" "$tmp/out" &&
		pass "$mode: fabricctl without a fabric says so" ||
		fail "$mode: fabricctl without a fabric says so" "$(cat "$tmp/out")"
fi

# A guest that never boots: reported with its serial log, then everything
# is removed.  Its image's /init is busybox init with nothing to start, so
# the guest runs but no agent ever answers, however fast the host (a real
# image can come up within a short --timeout).  VCLUSTER_TOP points
# vcluster at that image, next to our QEMU, fabricd and kernel.
mkdir -p "$tmp/top/build/qemu" "$tmp/top/build/bin" "$tmp/top/build/image" "$tmp/img"
ln -s "$TOP/build/qemu/qemu-system-x86_64" "$tmp/top/build/qemu/"
ln -s "$TOP/build/bin/fabricd" "$TOP/build/bin/fabricctl" "$tmp/top/build/bin/"
ln -s "$TOP/build/image/vmlinuz" "$tmp/top/build/image/"
(cd "$tmp/img" && zcat "$TOP/build/image/initramfs.cpio.gz" | cpio -id --quiet bin/busybox &&
	mv bin/busybox init && echo init | cpio -o -H newc --quiet | gzip) > "$tmp/top/build/image/initramfs.cpio.gz"
VCLUSTER_TOP=$tmp/top vc up -n 2 --name "$name" --accel tcg --timeout 5 $flags > "$tmp/out" 2>&1
rc=$?
if [ "$rc" = 1 ] && grep -q "failed to boot" "$tmp/out" && grep -q -- "--- last lines of" "$tmp/out"; then
	pass "$mode: failed boot is reported with the serial log tail"
else
	fail "$mode: failed boot is reported with the serial log tail" "rc=$rc $(tail -n 5 "$tmp/out" | tr '\n' ' ')"
fi
left=$(pgrep -f "vc-$name-node" | wc -l)
fab=$(pgrep -f "fabricd.*/$name/" | wc -l)
[ "$left" = 0 ] && [ "$fab" = 0 ] && [ ! -e "${VCLUSTER_RUNDIR:-/run/vcluster}/$name" ] &&
	pass "$mode: failed boot leaves no QEMU, fabricd or run directory" ||
	fail "$mode: failed boot leaves no QEMU, fabricd or run directory" "qemu=$left fabricd=$fab"
if [ "$mode" = libvirt ]; then
	check_fails "$mode: failed boot leaves no libvirt domain" \
		sh -c "virsh -q -c qemu:///system list --all --name | grep '^vc-$name-'"
fi
