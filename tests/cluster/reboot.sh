#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# vcluster reboot on 2 VMs over the eth fabric: tests/cluster/reboot.sh direct|libvirt
set -u
. "$(dirname "$0")/../lib.sh"
cluster_test t-reboot "${1:-direct}"
# libvirt: one more, its domains are gone after down
plan $(test "$mode" = libvirt && echo 15 || echo 14)
boot_cluster "2-node cluster" -n 2

boot_id() { vc exec "$1" -- cat /proc/sys/kernel/random/boot_id; }
old0=$(boot_id 0)
old1=$(boot_id 1)

# A hardware reset of node1; the command returns once the new boot answers.
vc reboot 1 > "$tmp/out" 2>&1
rc=$?
if [ "$rc" = 0 ] && grep -Eqx 'node1: rebooted in [0-9.]+ s' "$tmp/out"; then
	pass "$mode: reboot 1 waits for the new boot"
else
	fail "$mode: reboot 1 waits for the new boot" "rc=$rc $(tr '\n' ' ' < "$tmp/out")"
fi
new1=$(boot_id 1)
[ -n "$old1" ] && [ -n "$new1" ] && [ "$new1" != "$old1" ] &&
	pass "$mode: node1 runs a new boot" ||
	fail "$mode: node1 runs a new boot" "boot_id '$old1' -> '$new1'"
new0=$(boot_id 0)
[ -n "$old0" ] && [ "$new0" = "$old0" ] && pass "$mode: node0 was not rebooted" ||
	fail "$mode: node0 was not rebooted" "boot_id '$old0' -> '$new0'"
check "$mode: exec works on the rebooted node" vc exec 1 -- true
check "$mode: the console shows node1's second boot" \
	sh -c "$VCLUSTER console --no-follow 1 | grep -c 'vcluster: node1 up' | grep -qx 2"
check "$mode: status shows 2 running, answering nodes" \
	sh -c "$VCLUSTER status | grep -Ec '^node[01] +running .*answering$' | grep -qx 2"
check "$mode: node0 pings the rebooted node1 over eth" \
	retry 5 vc exec 0 -- ping -c 1 -W 2 node1
check "$mode: node1 pings node0 over eth" vc exec 1 -- ping -c 1 -W 2 node0

vc reboot 7 > "$tmp/out" 2>&1
rc=$?
[ "$rc" = 2 ] && grep -q "bad node '7'" "$tmp/out" &&
	pass "$mode: reboot of a node that does not exist is a usage error" ||
	fail "$mode: reboot of a node that does not exist is a usage error" "rc=$rc $(cat "$tmp/out")"
# No guest boots in 1 s: the timeout names the node and the time.
vc reboot -t 1 1 > "$tmp/out" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q "node1 did not boot again after the reset: guest agent silent after 1 s" "$tmp/out" &&
	pass "$mode: reboot -t 1 times out naming node and time" ||
	fail "$mode: reboot -t 1 times out naming node and time" "rc=$rc $(head -n 3 "$tmp/out" | tr '\n' ' ')"
# --no-wait returns after the reset, before the new boot: the console has
# no new boot line yet (a kernel takes seconds to boot, a console read
# milliseconds).  The boot that -t 1 gave up on comes first, so that its
# line cannot fall in between.
retry 120 vc exec 1 -- true
boots() { vc console --no-follow 1 | grep -c 'vcluster: node1 up'; }
before=$(boots)
out=$(vc reboot --no-wait 1 2>&1)
rc=$?
after=$(boots)
[ "$rc" = 0 ] && [ "$out" = "node1: reset" ] && [ "$after" = "$before" ] &&
	pass "$mode: reboot --no-wait returns after the reset, before the new boot" ||
	fail "$mode: reboot --no-wait returns after the reset, before the new boot" "rc=$rc '$out', boot lines $before -> $after"

# down while node1 boots again: no QEMU is left behind.
vc down > /dev/null
left=$(pgrep -f "vc-$name-node" | wc -l)
[ "$left" = 0 ] && pass "$mode: down after reboots leaves no QEMU" ||
	fail "$mode: down after reboots leaves no QEMU" "qemu=$left"
if [ "$mode" = libvirt ]; then
	check_fails "$mode: down removes the libvirt domains" \
		sh -c "virsh -q -c qemu:///system list --all --name | grep '^vc-$name-'"
fi
vc reboot 1 > "$tmp/out" 2>&1
rc=$?
[ "$rc" = 1 ] && grep -q "no cluster named '$name'" "$tmp/out" &&
	pass "$mode: reboot without a cluster says so" ||
	fail "$mode: reboot without a cluster says so" "rc=$rc $(cat "$tmp/out")"
