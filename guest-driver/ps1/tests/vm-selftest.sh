#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# ps1 driver self-test inside a vcluster guest. run-vms.sh puts it into a
# test initramfs as /sbin/ps1-selftest, started once from inittab; the
# scenario comes from ps1.test=pair|torus|linkdown|hotplug|parity.
exec > /dev/console 2>&1
role=$(sed -n 's/.*ps1\.test=\([a-z0-9]*\).*/\1/p' /proc/cmdline)
node=$(sed -n 's/.*vc\.node=\([0-9]*\).*/\1/p' /proc/cmdline)
[ -n "$role" ] || exit 0
T=/usr/bin/ps1test
fails=0
say() { echo "PS1TEST[$node]: $*"; }
run() { say "+ $*"; "$@"; rc=$?; [ $rc -eq 0 ] || { fails=$((fails+1)); say "FAILED rc=$rc: $*"; }; }
expect_fail() { say "+ (expect failure) $*"; if "$@"; then fails=$((fails+1)); say "FAILED: succeeded: $*"; fi; }
dev() { echo /sys/bus/pci/drivers/ps1/0000:*; }
show() { d=$(dev); for a in node nodes topology state pool_kb openers counters/*; do echo "  $a: $(cat $d/$a 2>&1 | tr '\n' ' ')"; done; }

sleep 1
run insmod /lib/modules/extra/ps1.ko node=$node
ls -l /dev/ps1
show

local_tests() {
	run $T info
	run $T bad
	run $T pool
	run $T poll
	# node is writable only while nobody has the device open
	$T busy & sleep 1
	expect_fail sh -c "echo $node > $(dev)/node"
	wait
	run sh -c "echo $node > $(dev)/node"
	expect_fail sh -c "echo 70000 > $(dev)/node"
	say "state after node write: $(cat $(dev)/state)"
}

unplug_tests() {
	d=$(dev)
	$T unplug & up=$!
	sleep 1
	expect_fail rmmod ps1
	say "removing $d while open"
	echo 1 > $d/remove
	wait $up || { fails=$((fails+1)); say "FAILED: unplug"; }
	ls -l /dev/ps1 2>&1
	echo 1 > /sys/bus/pci/rescan
	sleep 1
	ls -l /dev/ps1
	show
	run $T info
	run rmmod ps1
	run insmod /lib/modules/extra/ps1.ko node=$node pool_kb=64
	show
	run $T info
}

if [ "$role" = linkdown ]; then
	say "state at boot (fabric not running): $(cat $(dev)/state)"
	[ "$(cat $(dev)/state)" = down ] || { fails=$((fails+1)); say "FAILED: state not down"; }
	run $T bad
	# the host starts the fabric after 20 s; open retries the set-up
	for i in $(seq 60); do
		st=$($T state)
		[ "$st" = 1 ] && break
		sleep 1
	done
	say "state after the fabric came up: $(cat $(dev)/state) (after $i opens)"
	[ "$(cat $(dev)/state)" = up ] || { fails=$((fails+1)); say "FAILED: never came up"; }
	show
	run $T poll
elif [ "$role" = hotplug ]; then
	$T unplug & up=$!
	sleep 2
	say "HOTPLUG-READY"
	wait $up || { fails=$((fails+1)); say "FAILED: unplug"; }
	[ -e /dev/ps1 ] && { fails=$((fails+1)); say "FAILED: /dev/ps1 still there"; }
	lspci 2>/dev/null | grep -i 5053
	run rmmod ps1
elif [ "$role" = parity ]; then
	# the host corrupts link 0>1 while PARITY-READY is shown
	say "PARITY-READY"
	if [ "$node" = 0 ]; then
		sleep 12
		run $T send 1 3 16
	else
		run $T expect-err 0x10000 60000
		show
	fi
elif [ "$role" = torus ]; then
	# 2x2 torus: 0 pings 3 (x then y), 1 pings 2; 2 and 3 echo
	show
	case $node in
	0) run $T ping 3 100 32 ;;
	1) run $T ping 2 100 32 ;;
	2) run $T echo 100 120000 ;;
	3) run $T echo 100 120000 ;;
	esac
	run $T barrier 1 60000
	show
elif [ "$node" = 0 ]; then
	local_tests
	run $T ping 1 200 16
	run $T ping 1 50 127
	sleep 3
	run $T send 1 1 10           # for node1's crash-rx
	sleep 3
	say "crash in the middle of a TX packet"
	$T crash-tx 1
	sleep 1
	say "cleanup_resets: $(cat $(dev)/counters/cleanup_resets)"
	[ "$(cat $(dev)/counters/cleanup_resets)" -ge 1 ] || { fails=$((fails+1)); say "FAILED: no cleanup reset after crash-tx"; }
	run $T send 1 5 16
	run $T info
	run $T barrier 2
	run $T fuzz 3000
	unplug_tests
else
	run $T echo 250 120000
	say "crash in the middle of an RX packet"
	$T crash-rx 60000
	sleep 1
	say "cleanup_resets: $(cat $(dev)/counters/cleanup_resets)"
	[ "$(cat $(dev)/counters/cleanup_resets)" -ge 1 ] || { fails=$((fails+1)); say "FAILED: no cleanup reset after crash-rx"; }
	run $T recv 5 60000
	run $T barrier 2
	local_tests
	run $T fuzz 3000
	unplug_tests
fi

run $T dmesg
say "dmesg:"
dmesg | grep -iE "ps1|parastation|1234:5053" | sed 's/^/  /'
if dmesg | grep -E "WARNING|BUG|Oops|Call Trace|sleeping function|corruption|refcount_t"; then
	fails=$((fails+1)); say "FAILED: kernel warnings in dmesg"
fi
say "DONE fails=$fails"
sleep 1
poweroff -f
