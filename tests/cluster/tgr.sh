#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-or-later
# The Telegraphos NIC on 4 nodes: device (telegraphos), fabric (telegraphos
# kind), driver (tgr.ko) and libtgr together; guest tool tgrcheck
# (images/guest-tools/tgrtool/tgrcheck.c).
#   - every card up, node i of 4;
#   - remote enqueue: 3 senders put 100,000 REQs each into one queue of
#     256-byte buffers at node0 (61 items each: thousands of overflows):
#     every item dequeued exactly once, in per-sender order, the queue and
#     the card count overflows;
#   - fetch_and_increment from the 4 nodes at once on one counter: the
#     exact sum, and the results add up to 0 + 1 + ... + (total - 1), so
#     no two increments returned the same value;
#   - multicast on 4 nodes: every member gets every member's updates, and
#     all see the same last write to a word they all write;
#   - protection: importing a withdrawn segment fails with ENOENT, asking
#     WRITE of a read-only one with EACCES, a writable mapping of a
#     read-only import with EACCES; stores forced through the remote
#     export check are refused (VIOL_OUT / VIOL_IN on both sides) and the
#     exporter's memory stays untouched;
#   - a stale mapping (the exporter exited) and a remote read to a node
#     whose QEMU is stopped end in SIGBUS for the reader, within the read
#     timeout, and the reader's VM stays responsive;
#   - the driver's tool: refused ioctls, mmaps and shadow accesses, and
#     every operation in loopback on one card (tgrtest bad, tgrtest local);
#   - a local user (nobody) who holds do-not-preempt-me on a queue that
#     overflows stops its node's card only until the driver's bound
#     (stop_max_ms): the queue is withdrawn and the card serves others;
#   - drvfuzz: seeded random ioctls, ioctl numbers, mmaps, reads and writes
#     on /dev/tgr0 as nobody, with a root process's objects alongside: no
#     mapping of anything the driver did not give the fuzzer, the card
#     still works afterwards;
#   - clean guest dmesg, no QEMU left after down.
# Every FAIL line and every exit status of a tool fails a check.
# tests/cluster/tgr.sh direct|libvirt
# Env: TGR_REQ_ITEMS (100000 per sender), TGR_FINC_COUNT (2000 per node),
# TGR_FUZZ_OPS (10000), TGR_FUZZ_SEED (13).
set -u
. "$(dirname "$0")/../lib.sh"
cluster_test t-tgr "${1:-direct}"
items=${TGR_REQ_ITEMS:-100000}
finc=${TGR_FINC_COUNT:-2000}
fuzz_ops=${TGR_FUZZ_OPS:-10000}
fuzz_seed=${TGR_FUZZ_SEED:-13}
sysfs=/sys/class/misc/tgr0/device
start=$(date +%s)
plan 41
boot_cluster "4 nodes on the telegraphos fabric" -n 4 --fabric telegraphos

since() { echo "$(($(date +%s) - $1)) s"; }
# The ok/FAIL lines of a tool, FAIL lines last.
report() { echo "$1" | grep -v FAIL; echo "$1" | grep FAIL | head -n 8; }
# bgl NODE LOG CMD: background command in the guest, output to LOG, and
# its exit status as a last line "exit N"
bgl() { vc exec -d "$1" -- "$3 >$2 2>&1; echo exit \$? >>$2" > /dev/null; }
# wait_file NODE FILE [S]: FILE's content once it exists (empty on timeout)
wait_file() {
	_w=0 _lim=$((${3:-120} * 2))
	while [ $_w -lt $_lim ]; do
		_c=$(vc exec "$1" -- "cat $2 2>/dev/null; true" 2>/dev/null)
		[ -n "$_c" ] && { echo "$_c"; return 0; }
		sleep 0.5
		_w=$((_w + 1))
	done
	return 1
}
# wait_log NODE LOG PATTERN [S]: LOG once it has PATTERN or the tool ended
wait_log() {
	_w=0 _lim=$((${4:-300} * 2)) _log=""
	while [ $_w -lt $_lim ]; do
		_log=$(vc exec "$1" -- "cat $2 2>/dev/null; true" 2>/dev/null)
		printf '%s\n' "$_log" | grep -q -e "$3" -e '^exit ' && break
		sleep 0.5
		_w=$((_w + 1))
	done
	printf '%s\n' "$_log"
}
# counter NODE NAME: one of the card's counters
counter() { vc exec "$1" -- "cat $sysfs/counters/$2" 2>/dev/null | tr -dc 0-9; }
# has TEXT PATTERN: TEXT has a line matching PATTERN
has() { printf '%s\n' "$1" | grep -q -- "$2"; }
# clean LOG: a tool's whole log (bgl): no FAIL line, exit status 0
clean() { has "$1" '^exit 0$' && ! has "$1" '^FAIL'; }

# ---------------------------------------------------------------- cards
out=$(vc exec all -- tgrcheck info 2>&1)
rc=$?
[ "$rc" = 0 ] && [ "$(echo "$out" | grep -c '^node\([0-3]\): ok   info: node \1 of 4,')" = 4 ] &&
	pass "$mode: every card is up, node i of 4 (tgrcheck info)" ||
	fail "$mode: every card is up, node i of 4 (tgrcheck info)" "$(echo "$out" | tr '\n' ' ')"

# ------------------------------------------------- 3 x 100,000 REQs, overflows
t0=$(date +%s)
ovf0=$(counter 0 req_ovf)
vc exec 0 -- "rm -f /tmp/q.seg /tmp/q.log" > /dev/null
bgl 0 /tmp/q.log "tgrcheck req-recv /tmp/q.seg 256 16 3 $items 120"
qseg=$(wait_file 0 /tmp/q.seg)
if [ -z "$qseg" ]; then
	why="no queue: $(vc exec 0 -- cat /tmp/q.log 2>&1 | tr '\n' ' ')"
	fail "$mode: REQ queue of 256 bytes created on node0" "$why"
	fail "$mode: 3 senders enqueued $items REQs each" "$why"
	fail "$mode: node0 dequeued all $((3 * items)) items" "$why"
	fail "$mode: every item once, in per-sender order" "$why"
	fail "$mode: the queue overflowed and was relinked" "$why"
	fail "$mode: req-recv: 3 senders seen, no queue reset, no overflow pending, exit 0" "$why"
	fail "$mode: the card counted overflows (req_ovf)" "$why"
else
	pass "$mode: REQ queue of 256 bytes created on node0 (segid $qseg)"
	# every sender opens the queue first (an import reads node0's
	# directory, which a flooded node0 answers late), then all start
	vc exec 1,2,3 -- "rm -f /tmp/go /tmp/s.log" > /dev/null
	for n in 1 2 3; do
		bgl $n /tmp/s.log "tgrcheck req-send 0 $qseg $items /tmp/go"
	done
	for n in 1 2 3; do
		wait_log $n /tmp/s.log '^ready' 60 > /dev/null
	done
	vc exec 1,2,3 -- "touch /tmp/go" > /dev/null
	snd=""
	for n in 1 2 3; do
		snd="$snd$(wait_log $n /tmp/s.log '^exit ' 1200 | sed "s/^/node$n: /")
"
	done
	[ "$(echo "$snd" | grep -c '^node[1-3]: ok   req-send:')" = 3 ] &&
		[ "$(echo "$snd" | grep -c '^node[1-3]: exit 0$')" = 3 ] &&
		! has "$snd" '^node[1-3]: FAIL' &&
		pass "$mode: 3 senders enqueued $items REQs each" ||
		fail "$mode: 3 senders enqueued $items REQs each" "$(echo "$snd" | grep -v '^node[1-3]: ok' | tail -n 4 | tr '\n' ' ')"
	log=$(wait_log 0 /tmp/q.log '^exit ' 600)
	report "$log"
	has "$log" "^ok   req-recv: $((3 * items)) of $((3 * items)) items" &&
		pass "$mode: node0 dequeued all $((3 * items)) items" ||
		fail "$mode: node0 dequeued all $((3 * items)) items" "$(echo "$log" | grep 'items dequeued')"
	has "$log" '^ok   req-recv: each item once, in per-sender order' &&
		pass "$mode: every item once, in per-sender order" ||
		fail "$mode: every item once, in per-sender order" "$(echo "$log" | grep 'per-sender' | tr '\n' ' ')"
	has "$log" '^ok   req-recv: the queue overflowed' &&
		pass "$mode: the queue overflowed and was relinked ($(echo "$log" | sed -n 's/.*overflowed \([0-9]*\) times.*/\1/p') times)" ||
		fail "$mode: the queue overflowed and was relinked" "$(echo "$log" | grep overflow | tr '\n' ' ')"
	has "$log" '^ok   req-recv: 3 senders seen' &&
		has "$log" '^ok   req-recv: no queue reset, no overflow left pending' && clean "$log" &&
		pass "$mode: req-recv: 3 senders seen, no queue reset, no overflow pending, exit 0" ||
		fail "$mode: req-recv: 3 senders seen, no queue reset, no overflow pending, exit 0" \
			"$(echo "$log" | grep -e '^FAIL' -e '^exit' | tr '\n' ' ')"
	ovf1=$(counter 0 req_ovf)
	[ "${ovf1:-0}" -gt "${ovf0:-0}" ] &&
		pass "$mode: the card counted $((ovf1 - ovf0)) overflows (req_ovf)" ||
		fail "$mode: the card counted overflows (req_ovf)" "before ${ovf0:-?} after ${ovf1:-?}"
fi
echo "  REQ run: $(since "$t0"); node0's driver: $(vc exec 0 -- "cat $sysfs/driver_stats" 2>/dev/null | tr '\n' ' ')"

# ---------------------------------------------------------- fetch_inc x 4 nodes
t0=$(date +%s)
total=$((4 * finc))
vc exec 0 -- "rm -f /tmp/f.seg /tmp/f.log" > /dev/null
vc exec 0 -- "rm -f /tmp/fdone" > /dev/null
bgl 0 /tmp/f.log "tgrcheck finc-host /tmp/f.seg $total /tmp/fdone 1200"
fseg=$(wait_file 0 /tmp/f.seg)
fout=$(vc exec -t 900 all -- "tgrcheck finc 0 ${fseg:-0} $finc" 2>&1)
rc=$?
# every finc has exited: the host may look at the counter now
vc exec 0 -- "touch /tmp/fdone" > /dev/null
report "$fout"
[ "$rc" = 0 ] && ! has "$fout" 'FAIL' &&
	[ "$(echo "$fout" | grep -c '^node[0-3]: ok   finc: [0-9]* fetch_incs')" = 4 ] &&
	pass "$mode: fetch_inc from 4 nodes: each node saw rising results" ||
	fail "$mode: fetch_inc from 4 nodes: each node saw rising results" "$(echo "$fout" | grep -v '^node[0-3]: ok' | head -n 3 | tr '\n' ' ')"
sum=$(echo "$fout" | sed -n 's/.*(sum \([0-9]*\)).*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
want=$(awk -v n="$total" 'BEGIN { printf "%.0f", n * (n - 1) / 2 }')
[ "$sum" = "$want" ] &&
	pass "$mode: the $total results are 0..$((total - 1)), each once (sum $sum)" ||
	fail "$mode: the $total results are 0..$((total - 1)), each once" "sum $sum, want $want"
flog=$(wait_log 0 /tmp/f.log '^exit ' 120)
has "$flog" "^ok   finc-host: the counter is $total" && clean "$flog" &&
	pass "$mode: the counter ends at exactly $total" ||
	fail "$mode: the counter ends at exactly $total" "$(echo "$flog" | tail -n 2 | tr '\n' ' ')"
echo "  fetch_inc run: $(since "$t0")"

# ------------------------------------------------------- multicast x 4 nodes
vc exec all -- "rm -f /tmp/go /tmp/m.log" > /dev/null
for n in 0 1 2 3; do
	bgl $n /tmp/m.log "tgrcheck mcast 5 4 200 /tmp/go 120"
done
for n in 0 1 2 3; do
	wait_log $n /tmp/m.log '^ready' 60 > /dev/null
done
vc exec all -- "touch /tmp/go" > /dev/null
mout=""
for n in 0 1 2 3; do
	mout="$mout$(wait_log $n /tmp/m.log '^exit ' 180 | sed "s/^/node$n: /")
"
done
[ "$(echo "$mout" | grep -c '^node[0-3]: ok   mcast: the last update of 4 of 4')" = 4 ] &&
	[ "$(echo "$mout" | grep -c '^node[0-3]: exit 0$')" = 4 ] && ! has "$mout" '^node[0-3]: FAIL' &&
	pass "$mode: multicast: every member got every member's updates" ||
	fail "$mode: multicast: every member got every member's updates" "$(echo "$mout" | grep -e FAIL -e exit | head -n 4 | tr '\n' ' ')"
words=$(echo "$mout" | sed -n 's/.*shared word \(0x[0-9a-f]*\).*/\1/p' | sort -u)
[ "$(echo "$mout" | grep -c 'shared word')" = 4 ] && [ "$(echo "$words" | wc -l)" = 1 ] &&
	pass "$mode: multicast: all 4 members see the same last write ($words)" ||
	fail "$mode: multicast: all 4 members see the same last write" "$(echo "$words" | tr '\n' ' ')"

# ------------------------------------------------------------------ protection
vin0=$(counter 1 viol_in) vout0=$(counter 2 viol_out)
vc exec 1 -- "rm -f /tmp/g.seg /tmp/g.log" > /dev/null
bgl 1 /tmp/g.log "tgrcheck guard /tmp/g.seg 30"
gseg=$(wait_file 1 /tmp/g.seg)
# shellcheck disable=SC2086 # two ids
set -- ${gseg:-0 0}
att=$(vc exec -t 120 2 -- "tgrcheck attack 1 $1 $2" 2>&1)
report "$att"
has "$att" '^ok   attack: import of a withdrawn segment refused: no such segment' &&
	pass "$mode: importing a withdrawn segment fails with a clear error (ENOENT)" ||
	fail "$mode: importing a withdrawn segment fails with a clear error (ENOENT)" "$(echo "$att" | grep withdrawn | head -n 1)"
has "$att" '^ok   attack: import asking WRITE of a read-only segment refused' &&
	pass "$mode: asking WRITE of a read-only export fails (EACCES)" ||
	fail "$mode: asking WRITE of a read-only export fails (EACCES)" "$(echo "$att" | grep 'asking WRITE')"
has "$att" '^ok   attack: a plain import gets READ only' &&
	pass "$mode: a plain import of a read-only export gets READ only" ||
	fail "$mode: a plain import of a read-only export gets READ only" "$(echo "$att" | grep 'plain import')"
has "$att" '^ok   attack: the read-only import reads the exporter.s data' &&
	pass "$mode: node2 reads node1's read-only export (cross-node read)" ||
	fail "$mode: node2 reads node1's read-only export (cross-node read)" "$(echo "$att" | grep 'reads the exporter')"
has "$att" '^ok   attack: a writable mapping of the read-only import refused' &&
	pass "$mode: a writable mmap of a read-only import fails (EACCES)" ||
	fail "$mode: a writable mmap of a read-only import fails (EACCES)" "$(echo "$att" | grep 'writable mapping')"
has "$att" '^ok   attack: forced store into the read-only segment refused remotely: RIGHTS' &&
	pass "$mode: a store forced past the importer is refused by the exporter (RIGHTS)" ||
	fail "$mode: a store forced past the importer is refused by the exporter (RIGHTS)" "$(echo "$att" | grep 'read-only segment refused remotely\|forced store into the read-only')"
has "$att" '^ok   attack: forced store into the withdrawn segment refused' &&
	pass "$mode: a store into a withdrawn segment is refused" ||
	fail "$mode: a store into a withdrawn segment is refused" "$(echo "$att" | grep 'withdrawn segment' | tail -n 1)"
glog=$(wait_log 1 /tmp/g.log '^exit ' 60)
report "$glog"
has "$glog" '^ok   guard: both pages untouched' &&
	pass "$mode: the exporter's memory is untouched" ||
	fail "$mode: the exporter's memory is untouched" "$(echo "$glog" | grep untouched)"
nref=$(echo "$glog" | sed -n 's/^ok   guard: \([0-9]*\) refused requests.*/\1/p')
[ "${nref:-0}" -ge 1 ] && clean "$glog" &&
	pass "$mode: the exporter saw the refused requests as events ($nref)" ||
	fail "$mode: the exporter saw the refused requests as events" "$(echo "$glog" | grep -e refused -e FAIL -e exit | tr '\n' ' ')"
vin1=$(counter 1 viol_in) vout1=$(counter 2 viol_out)
[ "${vin1:-0}" -gt "${vin0:-0}" ] && [ "${vout1:-0}" -gt "${vout0:-0}" ] &&
	pass "$mode: both cards counted the violation (viol_in on node1, viol_out on node2)" ||
	fail "$mode: both cards counted the violation" "viol_in ${vin0:-?}->${vin1:-?} viol_out ${vout0:-?}->${vout1:-?}"

# ------------------------------------------------------- stale mapping: SIGBUS
vc exec 1 -- "rm -f /tmp/h.seg /tmp/h.log" > /dev/null
vc exec 2 -- "rm -f /tmp/go /tmp/r.log" > /dev/null
bgl 1 /tmp/h.log "tgrcheck hold /tmp/h.seg 600"
hseg=$(wait_file 1 /tmp/h.seg)
bgl 2 /tmp/r.log "tgrcheck read-after 1 ${hseg:-0} /tmp/go 10"
wait_log 2 /tmp/r.log '^ready' 60 > /dev/null
# the exporter is gone (its exit withdrew the export) before the read
vc exec 1 -- "killall -q tgrcheck; true" > /dev/null
wait_log 1 /tmp/h.log '^exit ' 60 > /dev/null
vc exec 2 -- "touch /tmp/go" > /dev/null
rlog=$(wait_log 2 /tmp/r.log '^exit ' 60)
report "$rlog"
has "$rlog" '^ok   read-after: the first remote read works' &&
	pass "$mode: node2's first remote read of node1's export works" ||
	fail "$mode: node2's first remote read of node1's export works" "$(echo "$rlog" | grep 'first remote read')"
has "$rlog" '^ok   read-after: SIGBUS' && has "$rlog" '^ok   read-after: SIGBUS within' && clean "$rlog" &&
	pass "$mode: access through a stale import (exporter exited) gets SIGBUS" ||
	fail "$mode: access through a stale import (exporter exited) gets SIGBUS" "$(echo "$rlog" | tail -n 3 | tr '\n' ' ')"

# --------------------------------------------- remote read to a stopped node
tmo_us=$(vc exec 0 -- "cat $sysfs/rread_timeout_us" 2>/dev/null | tr -dc 0-9)
vc exec 3 -- "rm -f /tmp/h.seg /tmp/h.log" > /dev/null
vc exec 0 -- "rm -f /tmp/go /tmp/r.log" > /dev/null
bgl 3 /tmp/h.log "tgrcheck hold /tmp/h.seg 600"
hseg=$(wait_file 3 /tmp/h.seg)
# the read's limit: the card's timeout (default 1 s) plus slack
lim=$(( ${tmo_us:-1000000} / 1000000 + 10 ))
bgl 0 /tmp/r.log "tgrcheck read-after 3 ${hseg:-0} /tmp/go $lim"
wait_log 0 /tmp/r.log '^ready' 60 > /dev/null
qpid=$(pgrep -f "vc-$name-node3( |,|\$)" | head -n 1)
if [ -z "$qpid" ]; then
	why="no process vc-$name-node3 to stop"
	fail "$mode: node0's first remote read of node3's export works" "$why"
	fail "$mode: a remote read to a stopped node ends in SIGBUS after the timeout" "$why"
	fail "$mode: node0 stays responsive while node3 is stopped" "$why"
	fail "$mode: node0's card counted the failed read" "$why"
	fail "$mode: node3 answers again after SIGCONT" "$why"
else
	fails0=$(counter 0 rread_fail)
	kill -STOP "$qpid"
	t0=$(date +%s)
	vc exec 0 -- "touch /tmp/go" > /dev/null
	rlog=$(wait_log 0 /tmp/r.log '^exit ' $((lim + 30)))
	report "$rlog"
	has "$rlog" '^ok   read-after: the first remote read works' &&
		pass "$mode: node0's first remote read of node3's export works" ||
		fail "$mode: node0's first remote read of node3's export works" "$(echo "$rlog" | grep 'first remote read')"
	ms=$(echo "$rlog" | sed -n 's/^ok   read-after: SIGBUS .* after \([0-9]*\) ms.*/\1/p')
	has "$rlog" '^ok   read-after: SIGBUS within' && clean "$rlog" &&
		[ "${ms:-0}" -ge $(( ${tmo_us:-1000000} / 1000 )) ] &&
		pass "$mode: a remote read to a stopped node ends in SIGBUS after the timeout ($ms ms, rread_timeout_us ${tmo_us:-?})" ||
		fail "$mode: a remote read to a stopped node ends in SIGBUS after the timeout" "${ms:-no SIGBUS} ms: $(echo "$rlog" | tail -n 3 | tr '\n' ' ')"
	check "$mode: node0 stays responsive while node3 is stopped" vc exec -t 20 0 -- "cat $sysfs/node"
	fails1=$(counter 0 rread_fail)
	[ "${fails1:-0}" -gt "${fails0:-0}" ] &&
		pass "$mode: node0's card counted the failed read (rread_fail $fails0 -> $fails1)" ||
		fail "$mode: node0's card counted the failed read" "rread_fail ${fails0:-?} -> ${fails1:-?}"
	kill -CONT "$qpid"
	echo "  node3 stopped for $(since "$t0")"
	check "$mode: node3 answers again after SIGCONT" vc exec -t 60 3 -- true
fi

# ------------------------------------------------ the driver's own checks
# tgrtest (images/guest-tools/tgrtest/): refused ioctls and mmaps (bad queue
# sizes, bad cookies, rights, shadow accesses outside a mapping), and the
# loopback run of every operation on one card (REQ overflows, multicast,
# DMA, access counters, stale imports)
for sub in bad local; do
	out=$(vc exec -t 300 2 -- "tgrtest $sub" 2>&1)
	rc=$?
	nok=$(echo "$out" | grep -c '^ok ')
	[ "$rc" = 0 ] && ! echo "$out" | grep -q '^FAIL' && [ "$nok" -gt 5 ] &&
		pass "$mode: tgrtest $sub: $nok checks on node2" ||
		fail "$mode: tgrtest $sub on node2" "exit $rc: $(echo "$out" | grep -v '^ok ' | head -n 4 | tr '\n' ' ')"
done

# ----------------------------- a local user holds do-not-preempt-me (issue 13)
# node1's card serves a page; nobody on node1 sets dnp in its own queue and
# overflows it through the loopback: the card stops for every node until
# the driver withdraws the queue (stop_max_ms, default 2 s)
stop_ms=$(vc exec 1 -- "cat /sys/module/tgr/parameters/stop_max_ms" 2>/dev/null | tr -dc 0-9)
vc exec 1 -- "rm -f /tmp/sv.log /tmp/hog.log" > /dev/null
bgl 1 /tmp/sv.log "tgrtest serve 1 rw 300"
sseg=$(wait_log 1 /tmp/sv.log '^segid' 60 | sed -n 's/^segid //p')
wd0=$(vc exec 1 -- "cat $sysfs/driver_stats" 2>/dev/null | sed -n 's/^withdrawn //p')
bgl 1 /tmp/hog.log "TGRTEST_AS=65534 tgrtest qhog 64 30"
_w=0 seen=0
while [ $_w -lt 40 ]; do
	[ "$(vc exec 1 -- "cat $sysfs/stopped" 2>/dev/null | tr -dc 0-9)" = 1 ] && { seen=1; break; }
	has "$(vc exec 1 -- "cat /tmp/hog.log" 2>/dev/null)" '^exit ' && break
	sleep 0.25
	_w=$((_w + 1))
done
hlog=$(wait_log 1 /tmp/hog.log '^exit ' 60)
report "$hlog"
{ [ $seen = 1 ] || has "$hlog" '^ok qhog: a held dnp stopped the NI'; } &&
	pass "$mode: nobody holding dnp on an overflowing queue stops node1's card" ||
	fail "$mode: nobody holding dnp on an overflowing queue stops node1's card" "$(echo "$hlog" | tail -n 3 | tr '\n' ' ')"
hms=$(echo "$hlog" | sed -n 's/^ok qhog: a held dnp stopped the NI for \([0-9]*\) ms.*/\1/p')
[ -n "$hms" ] && [ "$hms" -le $(( ${stop_ms:-2000} + 3000 )) ] && clean "$hlog" &&
	pass "$mode: the driver resumed the card after $hms ms (stop_max_ms ${stop_ms:-?}) and withdrew the queue" ||
	fail "$mode: the driver resumes the card within stop_max_ms and withdraws the queue" "${hms:-never} ms: $(echo "$hlog" | grep -e FAIL -e exit | tr '\n' ' ')"
wd1=$(vc exec 1 -- "cat $sysfs/driver_stats" 2>/dev/null | sed -n 's/^withdrawn //p')
[ "${wd1:-0}" -gt "${wd0:-0}" ] &&
	pass "$mode: node1's driver counted the withdrawal (withdrawn ${wd0:-?} -> $wd1)" ||
	fail "$mode: node1's driver counted the withdrawal" "withdrawn ${wd0:-?} -> ${wd1:-?}"
out=$(vc exec -t 60 2 -- "tgrtest write 1 ${sseg:-0} 16 0x7e57 && tgrtest read 1 ${sseg:-0} 16" 2>&1)
has "$out" '0x7e57\|7e57' &&
	pass "$mode: node1's card serves node2 again (remote write, then read)" ||
	fail "$mode: node1's card serves node2 again (remote write, then read)" "$(echo "$out" | tail -n 3 | tr '\n' ' ')"

# ------------------------------------------------ drvfuzz on /dev/tgr0 as nobody
t0=$(date +%s)
out=$(vc exec -t 600 2 -- "drvfuzz tgr $fuzz_seed $fuzz_ops" 2>&1)
rc=$?
report "$out"
[ "$rc" = 0 ] && has "$out" "^ok   drvfuzz tgr: $fuzz_ops ops, seed $fuzz_seed, uid 65534" &&
	pass "$mode: drvfuzz tgr: $fuzz_ops random ioctls, mmaps, reads and writes as nobody (seed $fuzz_seed): nothing mapped it was not given ($(since "$t0"))" ||
	fail "$mode: drvfuzz tgr (seed $fuzz_seed, $fuzz_ops ops)" "exit $rc: $(echo "$out" | tail -n 4 | tr '\n' ' ')"
out=$(vc exec -t 60 2 -- "tgrtest write 1 ${sseg:-0} 20 0xf00d && tgrtest read 1 ${sseg:-0} 20" 2>&1)
has "$out" 'f00d' &&
	pass "$mode: node2's card still works after the fuzz" ||
	fail "$mode: node2's card still works after the fuzz" "$(echo "$out" | tail -n 3 | tr '\n' ' ')"
vc exec 1 -- "killall -q tgrtest; true" > /dev/null 2>&1

# ------------------------------------------------------------ clean up, dmesg
vc exec all -- "killall -q tgrcheck; true" > /dev/null 2>&1
# (the driver's notes about refused requests and failed reads are expected)
check "$mode: no kernel warning or oops in any guest" vc exec all -- tgrtest dmesg

vc down --name "$name" > /dev/null 2>&1
check_fails "$mode: down leaves no QEMU" pgrep -f "vc-$name-node"
echo "  total: $(since "$start")"
