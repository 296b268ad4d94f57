#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# Cluster tests on 3 VMs over the eth fabric: tests/cluster/eth.sh direct|libvirt
set -u
. "$(dirname "$0")/../lib.sh"
cluster_test t-eth "${1:-direct}"
# The second cluster of the test below goes too.
trap 'vc down --name "$name" >/dev/null 2>&1; vc down --name t-eth-second >/dev/null 2>&1; rm -rf "$tmp"' EXIT INT TERM
# direct: 3 checks of a second cluster; libvirt: 2 of virsh
plan $((32 + $(test "$mode" = direct && echo 3 || echo 2)))
boot_cluster "3-node cluster" -n 3

# Every node answers and status says so.
check "$mode: status shows 3 answering nodes" \
	sh -c "$VCLUSTER status | grep -c answering | grep -qx 3"

if [ "$mode" = libvirt ]; then
	check "$mode: virsh list shows the nodes" \
		sh -c "virsh -q -c qemu:///system list --name | grep -c '^vc-$name-node' | grep -qx 3"
fi

# exec: output, stderr and exit codes come back like ssh.
out=$(vc exec 1 -- 'echo hello from $(hostname); echo to-stderr >&2; exit 7' 2>"$tmp/err")
rc=$?
if [ "$rc" = 7 ] && [ "$out" = "hello from node1" ] && grep -qx to-stderr "$tmp/err"; then
	pass "$mode: exec returns stdout, stderr and exit code"
else
	fail "$mode: exec returns stdout, stderr and exit code" "rc=$rc out='$out' err='$(cat "$tmp/err")'"
fi
check "$mode: exec true exits 0" vc exec node2 -- true
check_fails "$mode: exec false fails" vc exec 0 -- false
out=$(vc exec all -- hostname | sort | tr '\n' ' ')
if [ "$out" = "node0: node0 node1: node1 node2: node2 " ]; then
	pass "$mode: exec all runs on every node"
else
	fail "$mode: exec all runs on every node" "got '$out'"
fi
out=$(echo "piped input" | vc exec -i 0 -- cat)
[ "$out" = "piped input" ] && pass "$mode: exec -i passes stdin" ||
	fail "$mode: exec -i passes stdin" "got '$out'"
vc exec 5 -- true 2>/dev/null
[ $? = 2 ] && pass "$mode: exec on a node that does not exist is a usage error" ||
	fail "$mode: exec on a node that does not exist is a usage error"

# cp: binary files both ways through the agent, byte for byte.
head -c 3145728 /dev/urandom > "$tmp/cp.bin"
mkdir "$tmp/back"
if vc cp "$tmp/cp.bin" node1:/tmp/cp.bin && vc cp 1:/tmp/cp.bin "$tmp/back" &&
	cmp "$tmp/cp.bin" "$tmp/back/cp.bin"; then
	pass "$mode: cp of a 3 MiB binary file to a node and back"
else
	fail "$mode: cp of a 3 MiB binary file to a node and back"
fi
sum=$(sha256sum < "$tmp/cp.bin" | cut -d' ' -f1)
check "$mode: cp: the guest's sha256sum is the host's" \
	sh -c "$VCLUSTER exec 1 -- sha256sum /tmp/cp.bin | grep -q '^$sum '"
check "$mode: cp from a node to stdout" \
	sh -c "$VCLUSTER cp node1:/tmp/cp.bin - | cmp - '$tmp/cp.bin'"
: > "$tmp/empty"
if vc cp "$tmp/empty" node2:/tmp/empty && vc cp node2:/tmp/empty "$tmp/empty.back" &&
	[ -f "$tmp/empty.back" ] && [ ! -s "$tmp/empty.back" ] &&
	[ "$(vc exec 2 -- 'wc -c < /tmp/empty')" = 0 ]; then
	pass "$mode: cp of a 0-byte file both ways"
else
	fail "$mode: cp of a 0-byte file both ways"
fi
# Errors: the agent's reason, exit 1, and no half-written file.
vc cp node1:/nope "$tmp/nope" 2>"$tmp/err"
rc=$?
if [ "$rc" = 1 ] && [ ! -e "$tmp/nope" ] && ! ls -A "$tmp" | grep -q vcluster-cp &&
	grep -qx 'vcluster cp: node1:/nope: No such file or directory' "$tmp/err"; then
	pass "$mode: cp of a missing guest file fails with the agent's reason"
else
	fail "$mode: cp of a missing guest file fails with the agent's reason" "rc=$rc err='$(cat "$tmp/err")'"
fi
vc cp "$tmp/missing" node1:/tmp/missing 2>"$tmp/err"
rc=$?
if [ "$rc" = 1 ] && grep -qx "vcluster cp: $tmp/missing: No such file or directory" "$tmp/err"; then
	pass "$mode: cp of a missing local file fails"
else
	fail "$mode: cp of a missing local file fails" "rc=$rc err='$(cat "$tmp/err")'"
fi
vc cp "$tmp/cp.bin" node7:/tmp/x 2>"$tmp/err"
rc=$?
if [ "$rc" = 2 ] && grep -q "^vcluster cp: bad node 'node7'" "$tmp/err"; then
	pass "$mode: cp to a node that does not exist is a usage error"
else
	fail "$mode: cp to a node that does not exist is a usage error" "rc=$rc err='$(cat "$tmp/err")'"
fi

check "$mode: console shows the node's boot line" \
	sh -c "$VCLUSTER console --no-follow 2 | grep -q 'vcluster: node2 up'"

# A second cluster runs beside the first, with its own run directory and LAN.
if [ "$mode" = direct ]; then
	second=t-eth-second
	if vc up -n 1 --name "$second" --accel tcg > "$tmp/up2.log" 2>&1; then
		check "$mode: two clusters are listed" \
			sh -c "$VCLUSTER list | grep -q '^$name ' && $VCLUSTER list | grep -q '^$second '"
		check "$mode: the second cluster runs commands" \
			sh -c "$VCLUSTER exec --name $second 0 -- hostname | grep -qx node0"
		check_fails "$mode: the clusters' LANs are separate" \
			vc exec --name "$second" 0 -- ping -c 1 -W 2 10.77.0.2
		vc down --name "$second" > /dev/null
	else
		why="the second cluster did not boot: $(tail -n 5 "$tmp/up2.log" | tr '\n' ' ')"
		fail "$mode: two clusters are listed" "$why"
		fail "$mode: the second cluster runs commands" "$why"
		fail "$mode: the clusters' LANs are separate" "$why"
	fi
fi

# Ping matrix: every node reaches every other over the eth fabric.
matrix_ok=1
for a in 0 1 2; do
	for b in 0 1 2; do
		[ "$a" = "$b" ] && continue
		if ! vc exec "$a" -- ping -c 1 -W 3 "node$b" >/dev/null 2>&1; then
			matrix_ok=0
			echo "  node$a cannot ping node$b"
		fi
	done
done
[ "$matrix_ok" = 1 ] && pass "$mode: ping matrix 3x3" || fail "$mode: ping matrix 3x3"
check_fails "$mode: no default route off the cluster LAN" \
	sh -c "$VCLUSTER exec all -- ip route | grep default"

# A 100% drop rule on link 0-1 breaks exactly that pair.
pings() { vc exec "$1" -- ping -c 2 -W 2 "node$2" >/dev/null 2>&1; }
rule=$(vc fault add '0-1 drop p=1' | sed -n 's/^rule //p')
if [ -n "$rule" ]; then pass "$mode: fault rule added"; else fail "$mode: fault rule added"; fi
check_fails "$mode: drop rule breaks node0 -> node1" pings 0 1
check_fails "$mode: drop rule breaks node1 -> node0" pings 1 0
check "$mode: drop rule leaves node0 -> node2" pings 0 2
check "$mode: drop rule leaves node1 -> node2" pings 1 2
check "$mode: counters show the dropped frames" \
	sh -c "$VCLUSTER fault list | grep -E '^$rule .*fired=[1-9]'"
vc fault del "$rule" >/dev/null
check "$mode: removing the rule heals node0 -> node1" retry 5 pings 0 1

# Link down and up.
vc link down 1-2 >/dev/null
check_fails "$mode: link down breaks node1 -> node2" pings 1 2
check "$mode: link down leaves node0 -> node2" pings 0 2
vc link up 1-2 >/dev/null
check "$mode: link up heals node1 -> node2" retry 5 pings 1 2

# Capture: 3 echo requests and 3 replies between node0 and node2.
vc capture start "$tmp/cap.pcapng" >/dev/null
vc exec 0 -- ping -c 3 -W 2 node2 >/dev/null
vc capture stop >/dev/null
n=$(tshark -r "$tmp/cap.pcapng" -Y icmp 2>/dev/null | wc -l)
[ "$n" = 6 ] && pass "$mode: capture opens in tshark with 6 ICMP frames" ||
	fail "$mode: capture opens in tshark with 6 ICMP frames" "got $n"

# No kernel warnings, oopses or bugs in any guest.
bad=$(vc exec all -- "dmesg | grep -E 'WARNING:|BUG:|Oops|Call Trace' || true" 2>&1)
rc=$?
# (the exit status: an exec that could not run is no clean log)
[ "$rc" = 0 ] && [ -z "$bad" ] && pass "$mode: guest dmesg is clean" || fail "$mode: guest dmesg is clean" "exit $rc: $bad"

# down removes everything.
rundir=$(vc status | sed -n 's/^run directory: //p')
vc down > /dev/null
left=$(pgrep -f "vc-$name-node" | wc -l)
[ "$left" = 0 ] && [ ! -e "$rundir" ] && pass "$mode: down leaves no QEMU and no run directory" ||
	fail "$mode: down leaves no QEMU and no run directory" "qemu=$left dir=$rundir"
if [ "$mode" = libvirt ]; then
	check_fails "$mode: down removes the libvirt domains" \
		sh -c "virsh -q -c qemu:///system list --all --name | grep '^vc-$name-'"
fi
check_fails "$mode: down leaves no fabricd" pgrep -f "fabricd.*$name/fabric-eth"
