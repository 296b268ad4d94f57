#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# Boot NODES guests on a `fabricd --kind ps1` fabric with a test initramfs
# (the project image + ps1.ko + ps1test + vm-selftest.sh) and wait for the
# self-test. Build first: make -C guest-driver/ps1 modules test
#
#   ROLE=pair     (2 nodes) ping-pong, crash clean-up, barrier, fuzz, remove
#   ROLE=torus    NODES=4 FABARGS="--topology torus:2x2"
#   ROLE=linkdown NODES=1 DELAY=25: fabric started after the guest
#   ROLE=hotplug  NODES=1, then `device_del ps0` on the monitor of node 0
#   ROLE=parity   corrupt link 0>1 (fabricctl fault add) when PARITY-READY
#   APPEND=pci=nomsi  to test INTx
set -u
TOP=$(cd "$(dirname "$0")/../../.." && pwd)
HERE=$TOP/guest-driver/ps1
Q=$TOP/build/qemu/qemu-system-x86_64
D=${D:-$(mktemp -d /tmp/ps1-vms.XXXXXX)}
NODES=${NODES:-2}; ROLE=${ROLE:-pair}; DELAY=${DELAY:-0}; TMO=${TMO:-400}
mkdir -p $D/fab $D/root

cleanup() {
	for n in $(seq 0 $((NODES - 1))); do
		[ -f $D/n$n.pid ] && kill "$(cat $D/n$n.pid)" 2>/dev/null
	done
	[ -f $D/fabric.pid ] && kill "$(cat $D/fabric.pid)" 2>/dev/null
}
trap cleanup EXIT

# test initramfs; /dev/console is added here because the image keeps it
# in a second archive that cpio -i does not read
(cd $D/root && zcat $TOP/build/image/initramfs.cpio.gz | cpio -id 2>/dev/null)
cp $HERE/ps1.ko $D/root/lib/modules/extra/
cp $HERE/tests/ps1test $D/root/usr/bin/
cp $HERE/tests/vm-selftest.sh $D/root/sbin/ps1-selftest
chmod 755 $D/root/sbin/ps1-selftest
mkdir -p $D/root/dev && mknod $D/root/dev/console c 5 1
echo "::once:/sbin/ps1-selftest" >> $D/root/etc/inittab
(cd $D/root && find . | sort | cpio -o -H newc 2>/dev/null | gzip -1 > $D/initramfs.cpio.gz)

start_fabric() {
	$TOP/build/bin/fabricd --kind ps1 --nodes $NODES --dir $D/fab ${FABARGS:-} \
		> $D/fabric.log 2>&1 &
	echo $! > $D/fabric.pid
	for i in $(seq 50); do [ -S $D/fab/node$((NODES - 1)).sock ] && break; sleep 0.1; done
}
[ "$DELAY" = 0 ] && start_fabric
for n in $(seq 0 $((NODES - 1))); do
	$Q -M pc -accel tcg -m 256 -nodefaults -nographic -no-user-config \
	  -L /usr/share/seabios -L /usr/share/qemu \
	  -kernel $TOP/build/image/vmlinuz -initrd $D/initramfs.cpio.gz \
	  -append "console=ttyS0 quiet panic=-1 vc.node=$n vc.nodes=$NODES vc.net=10.77.0 ps1.test=$ROLE ${APPEND:-}" \
	  -serial file:$D/n$n.log -device virtio-serial-pci \
	  -chardev socket,id=qga,path=$D/n$n-qga.sock,server=on,wait=off \
	  -device virtserialport,chardev=qga,name=org.qemu.guest_agent.0 \
	  -netdev stream,id=n0,server=on,addr.type=unix,addr.path=$D/n$n-net.sock \
	  -device virtio-net-pci,netdev=n0,mac=52:54:00:77:00:0$((n + 1)),romfile= \
	  -chardev socket,id=ps,path=$D/fab/node$n.sock,reconnect=1 \
	  -device parastation,chardev=ps,id=ps0 \
	  -monitor unix:$D/n$n-mon.sock,server=on,wait=off \
	  -display none -daemonize -pidfile $D/n$n.pid
done
[ "$DELAY" != 0 ] && { sleep $DELAY; start_fabric; }
for i in $(seq $TMO); do
	done=0
	for n in $(seq 0 $((NODES - 1))); do
		grep -q "DONE fails" $D/n$n.log 2>/dev/null && done=$((done + 1))
	done
	[ $done = $NODES ] && break
	sleep 1
done
sleep 2
echo "logs in $D"
grep -H "DONE fails" $D/n*.log
# every node finished (a hung guest is a failure too) with no failure
[ $done = $NODES ] || { echo "only $done of $NODES nodes finished within ${TMO} s"; exit 1; }
[ "$(grep -h "DONE fails=0" $D/n*.log | wc -l)" = $NODES ] && ! grep -h "FAIL" $D/n*.log
