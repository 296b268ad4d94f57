// SPDX-License-Identifier: GPL-2.0
/*
 * ps1test: exercise /dev/ps1 (ps1.ko) from user space, the way the
 * ParaStation HAL does: map the registers, drive the FIFOs directly, and
 * use the driver only to wait and for information.
 *
 *   ps1test info                      INFO, counters
 *   ps1test bad                       bad mmaps and ioctls must fail cleanly
 *   ps1test pool                      the pool is shared between openers
 *   ps1test poll                      poll() and PS1_IOC_WAIT on an idle board
 *   ps1test send DEST N [WORDS]       send N packets to DEST
 *   ps1test recv N [TIMEOUT_MS]       receive and check N packets
 *   ps1test echo N [TIMEOUT_MS]       send N packets back to their source
 *   ps1test collect N [TIMEOUT_MS]    receive up to N packets of "send" from
 *                                     any nodes; count lost packets and
 *                                     parity errors instead of failing
 *   ps1test ping PEER N [WORDS]       ping-pong with "echo" on PEER
 *   ps1test crash-tx DEST             die half-way through a TX packet
 *   ps1test crash-rx [TIMEOUT_MS]     die half-way through an RX packet
 *   ps1test unplug                    wait while the board is removed
 *   ps1test busy                      hold the device open (sleep 2 s)
 *   ps1test barrier LINE [MS [GOFILE]]
 *                                     take part in sync line LINE; with
 *                                     GOFILE, say "joined" and arrive only
 *                                     once GOFILE exists
 *   ps1test fuzz [N]                  N random ioctls and mmaps
 *   ps1test dmesg                     fail on kernel warnings in the log
 *   ps1test state                     print the state number (for scripts)
 *   ps1test expect-err BITS [MS]      sleep until SREG has error BITS
 *
 * Exit status 0 on success, 1 on a failed check, 2 on bad usage.
 * Built by mk/ps1-driver.mk.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/args.h"
#include "common/clock.h"
#include "common/driver_checks.h"
#include "common/fault.h"
#include "uapi/ps1_ioctl.h"
#include "vcluster/hw/ps1_regs.h"

static int fd = -1;
static volatile uint32_t *regs;
static struct ps1_info info;

static uint32_t rd(unsigned int off)
{
	return regs[off / 4];
}

static void wr(unsigned int off, uint32_t v)
{
	regs[off / 4] = v;
}

static void open_dev(int map)
{
	fd = open(PS1_DEVICE, O_RDWR);
	if (fd < 0) {
		perror(PS1_DEVICE);
		exit(1);
	}
	if (ioctl(fd, PS1_IOC_INFO, &info)) {
		perror("PS1_IOC_INFO");
		exit(1);
	}
	if (!map)
		return;
	regs = mmap(NULL, PS1_MMAP_REGS_LEN, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, PS1_MMAP_REGS_OFFSET);
	if (regs == MAP_FAILED) {
		perror("mmap registers");
		exit(1);
	}
}

/* Pattern of data word i of packet seq from node src. */
static uint32_t pattern(uint32_t src, uint32_t seq, uint32_t i)
{
	return 0x5a5a5a5au ^ (src << 24) ^ (seq * 0x10001u) ^ (i << 8);
}

static int wait_ev(uint32_t events, uint32_t timeout_ms, uint32_t *revents)
{
	struct ps1_wait w = { .events = events, .timeout_ms = timeout_ms };
	int ret = ioctl(fd, PS1_IOC_WAIT, &w);

	*revents = w.revents;
	if (ret)
		return -errno;
	if (w.revents & PS1_EV_ERR) {
		fprintf(stderr, "board error, SREG 0x%08x\n", w.sreg);
		return -EIO;
	}
	return 0;
}

static int send_pkt(uint32_t dest, const uint32_t *data, uint32_t words)
{
	uint32_t ev, i;
	int ret;

	while (rd(PS1_REG_SREG) & PS1_SREG_TX_FULL) {
		ret = wait_ev(PS1_EV_TX | PS1_EV_ERR, 5000, &ev);
		if (ret) {
			fprintf(stderr, "send: waiting for TX room: %s\n",
				strerror(-ret));
			return ret;
		}
	}
	wr(PS1_REG_NREG, PS1_HDR(dest, words));
	for (i = 0; i < words; i++)
		wr(PS1_REG_NREG, data[i]);
	return 0;
}

/* Returns the number of data words, or -errno. */
static int recv_pkt(uint32_t *src, uint32_t *data, uint32_t timeout_ms)
{
	uint32_t head, hdr, words, i, ev;
	int ret;

	if (!(rd(PS1_REG_SREG) & PS1_SREG_PKT_READY)) {
		ret = wait_ev(PS1_EV_PKT | PS1_EV_ERR, timeout_ms, &ev);
		if (ret)
			return ret;
	}
	head = rd(PS1_REG_RX_HEAD);
	hdr = rd(PS1_REG_NREG);
	if (hdr != head) {
		fprintf(stderr, "recv: NREG header 0x%08x != RX_HEAD 0x%08x\n",
			hdr, head);
		return -EPROTO;
	}
	words = PS1_HDR_WORDS(hdr);
	if (!words || words > PS1_PKT_MAX_WORDS)
		return -EPROTO;
	for (i = 0; i < words; i++)
		data[i] = rd(PS1_REG_NREG);
	*src = PS1_HDR_NODE(hdr);
	return words;
}

static void print_info(void)
{
	struct ps1_counters c;

	printf("version %u.%u.%u id 0x%08x node %u nodes %u width %u height %u state %u pool %u openers %u\n",
	       info.version >> 16, (info.version >> 8) & 0xff,
	       info.version & 0xff, info.board_id, info.node, info.nodes,
	       info.width, info.height, info.state, info.pool_size,
	       info.openers);
	if (ioctl(fd, PS1_IOC_COUNTERS, &c) == 0)
		printf("counters tx %llu rx %llu parity %llu barriers %llu irq %llu (pkt %llu err %llu bar %llu tx %llu) opens %llu resets %llu cleanup %llu routes %llu\n",
		       (unsigned long long)c.tx_packets,
		       (unsigned long long)c.rx_packets,
		       (unsigned long long)c.parity_errors,
		       (unsigned long long)c.barriers,
		       (unsigned long long)c.interrupts,
		       (unsigned long long)c.irq_pkt,
		       (unsigned long long)c.irq_err,
		       (unsigned long long)c.irq_barrier,
		       (unsigned long long)c.irq_tx,
		       (unsigned long long)c.opens,
		       (unsigned long long)c.resets,
		       (unsigned long long)c.cleanup_resets,
		       (unsigned long long)c.route_loads);
}

static int cmd_bad(void)
{
	struct ps1_wait w;
	uint32_t ev;
	int fd2, ret;
	void *p;

	open_dev(0);
	expect_mmap(fd, "regs len 8192", 8192, PROT_READ, MAP_SHARED, 0,
			 EINVAL, EINVAL);
	expect_mmap(fd, "regs len 12288",
			 4096 * 3, PROT_READ, MAP_SHARED, 0, EINVAL, EINVAL);
	expect_mmap(fd, "offset 8192", 4096, PROT_READ, MAP_SHARED, 8192,
			 EINVAL, EINVAL);
	expect_mmap(fd, "offset 1 GiB", 4096, PROT_READ, MAP_SHARED,
			 1L << 30, EINVAL, EINVAL);
	expect_mmap(fd, "regs MAP_PRIVATE", 4096, PROT_READ, MAP_PRIVATE,
			 0, EINVAL, EINVAL);
	expect_mmap(fd, "regs PROT_EXEC", 4096, PROT_READ | PROT_EXEC,
			 MAP_SHARED, 0, EINVAL, EPERM);
	expect_mmap(fd, "pool too long", info.pool_size + 4096, PROT_READ,
			 MAP_SHARED, 4096, EINVAL, EINVAL);
	expect_mmap(fd, "pool MAP_PRIVATE", 4096, PROT_READ, MAP_PRIVATE,
			 4096, EINVAL, EINVAL);

	p = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	CHECK(p != MAP_FAILED, "mmap regs 4096 at 0");
	if (p != MAP_FAILED) {
		regs = p;
		CHECK(rd(PS1_REG_ID) == PS1_ID_VALUE, "ID reads 0x%08x",
		      rd(PS1_REG_ID));
		/* mremap must not grow it */
		CHECK(mremap(p, 4096, 8192, MREMAP_MAYMOVE) == MAP_FAILED,
		      "mremap of registers refused");
	}
	p = mmap(NULL, info.pool_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 4096);
	CHECK(p != MAP_FAILED, "mmap whole pool (%u bytes)", info.pool_size);
	if (p != MAP_FAILED)
		munmap(p, info.pool_size);

	expect_ioctl(fd, "unknown nr", _IO('P', 99), NULL, ENOTTY);
	expect_ioctl(fd, "other magic", _IOR('Q', 1, struct ps1_info),
			  &info, ENOTTY);
	expect_ioctl(fd, "INFO size mismatch", _IOR('P', 1, int), &info,
			  ENOTTY);
	expect_ioctl(fd, "INFO NULL", PS1_IOC_INFO, NULL, EFAULT);
	expect_ioctl(fd, "INFO bad pointer", PS1_IOC_INFO, (void *)16,
			  EFAULT);
	expect_ioctl(fd, "COUNTERS NULL", PS1_IOC_COUNTERS, NULL, EFAULT);
	expect_ioctl(fd, "WAIT NULL", PS1_IOC_WAIT, NULL, EFAULT);
	w = (struct ps1_wait){ .events = 0, .timeout_ms = 10 };
	expect_ioctl(fd, "WAIT no events", PS1_IOC_WAIT, &w, EINVAL);
	w = (struct ps1_wait){ .events = 0x100, .timeout_ms = 10 };
	expect_ioctl(fd, "WAIT unknown event", PS1_IOC_WAIT, &w, EINVAL);
	expect_ioctl(fd, "TIOCGWINSZ", TIOCGWINSZ, &w, ENOTTY);

	/* nothing arrives: a short wait times out */
	ret = wait_ev(PS1_EV_BARRIER, 50, &ev);
	CHECK(ret == -ETIMEDOUT && ev == 0, "WAIT barrier 50 ms times out (%s)",
	      strerror(-ret));

	fd2 = open(PS1_DEVICE, O_RDWR);
	CHECK(fd2 >= 0, "second open");
	expect_ioctl(fd, "RESET with two openers", PS1_IOC_RESET, NULL,
			  EBUSY);
	close(fd2);
	ret = ioctl(fd, PS1_IOC_RESET);
	if (info.state == PS1_STATE_DOWN) {
		/* the reset happens, the route load cannot */
		CHECK(ret == -1 && errno == ENOLINK,
		      "RESET as the only opener, link down (%s)",
		      ret ? strerror(errno) : "ok");
		return fails;
	}
	CHECK(ret == 0, "RESET as the only opener (%s)",
	      ret ? strerror(errno) : "ok");
	if (regs)
		CHECK(rd(PS1_REG_SREG) & PS1_SREG_LINK,
		      "link up after RESET, SREG 0x%08x", rd(PS1_REG_SREG));
	return fails;
}

static int cmd_pool(void)
{
	volatile uint32_t *a, *b;
	int fd2, status;
	pid_t pid;

	open_dev(0);
	a = mmap(NULL, info.pool_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 PS1_MMAP_POOL_OFFSET);
	CHECK(a != MAP_FAILED, "map pool");
	if (a == MAP_FAILED)
		return fails;
	a[0] = 0x12345678;
	a[info.pool_size / 4 - 1] = 0xcafef00d;

	fd2 = open(PS1_DEVICE, O_RDWR);
	b = mmap(NULL, info.pool_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd2, PS1_MMAP_POOL_OFFSET);
	CHECK(b != MAP_FAILED && b[0] == 0x12345678 &&
	      b[info.pool_size / 4 - 1] == 0xcafef00d,
	      "second opener sees the pool");

	/* another process that opens the device on its own */
	pid = fork();
	if (pid == 0) {
		int f = open(PS1_DEVICE, O_RDWR);
		volatile uint32_t *c = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
					    MAP_SHARED, f, 4096);

		if (c == MAP_FAILED || c[0] != 0x12345678)
			_exit(1);
		c[1] = 0xabcd;
		_exit(0);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0 && a[1] == 0xabcd,
	      "a child process shares the pool");
	return fails;
}

static int cmd_poll(void)
{
	struct pollfd pfd;
	uint32_t ev;
	int ret;

	open_dev(1);
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN | POLLPRI };
	ret = poll(&pfd, 1, 100);
	CHECK(ret == 0 || (pfd.revents & POLLIN),
	      "poll POLLIN|POLLPRI on an idle board: %d revents 0x%x", ret,
	      pfd.revents);
	pfd = (struct pollfd){ .fd = fd, .events = POLLOUT };
	ret = poll(&pfd, 1, 100);
	CHECK(ret == 1 && (pfd.revents & POLLOUT), "poll POLLOUT: revents 0x%x",
	      pfd.revents);
	ret = wait_ev(PS1_EV_TX, 0, &ev);
	CHECK(ret == 0 && ev == PS1_EV_TX, "WAIT TX with timeout 0");

	/* an error bit: a bad TX header sets ERR_TX_HEADER */
	wr(PS1_REG_NREG, PS1_HDR(0, 0));
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	ret = poll(&pfd, 1, 1000);
	CHECK(ret == 1 && (pfd.revents & POLLERR),
	      "poll reports POLLERR after a bad header (SREG 0x%08x)",
	      rd(PS1_REG_SREG));
	ret = wait_ev(PS1_EV_ERR, 100, &ev);
	CHECK(ret == -EIO && (ev & PS1_EV_ERR), "WAIT returns ERR");
	wr(PS1_REG_CREG, PS1_CREG_CLEAR_ERR | (rd(PS1_REG_CREG) & 0xf));
	CHECK(!(rd(PS1_REG_SREG) & PS1_SREG_ERR_MASK), "CLEAR_ERR clears it");
	return fails;
}

static int cmd_send(uint32_t dest, uint32_t n, uint32_t words)
{
	uint32_t data[PS1_PKT_MAX_WORDS], s, i;
	double t0;

	open_dev(1);
	t0 = now_us();
	for (s = 0; s < n; s++) {
		for (i = 0; i < words; i++)
			data[i] = pattern(info.node, s, i);
		if (send_pkt(dest, data, words))
			return 1;
	}
	/* let the FIFO drain before close, or the driver resets the board */
	while (!(rd(PS1_REG_SREG) & PS1_SREG_TX_EMPTY) && now_us() - t0 < 5e6)
		usleep(1000);
	CHECK(rd(PS1_REG_SREG) & PS1_SREG_TX_EMPTY,
	      "sent %u packets of %u words to node %u in %.0f us", n, words,
	      dest, now_us() - t0);
	return fails;
}

static int cmd_recv(uint32_t n, uint32_t timeout_ms)
{
	uint32_t data[PS1_PKT_MAX_WORDS], src, s, i, bad = 0;
	int words;

	open_dev(1);
	for (s = 0; s < n; s++) {
		words = recv_pkt(&src, data, timeout_ms);
		if (words < 0) {
			CHECK(0, "recv packet %u: %s", s, strerror(-words));
			return fails;
		}
		for (i = 0; i < (uint32_t)words; i++)
			if (data[i] != pattern(src, s, i))
				bad++;
	}
	CHECK(!bad, "received %u packets from node %u, %u bad words", n, src,
	      bad);
	return fails;
}

/*
 * The board has no retransmission, so a workload under fault rules counts
 * what a lost or damaged packet costs instead of failing on it (lock-step
 * runs, tests/bench/lockstep.sh).  A damaged packet never reaches the FIFO
 * (parity error); one that does must carry its sender's pattern intact.
 */
static int cmd_collect(uint32_t n, uint32_t timeout_ms)
{
	uint32_t data[PS1_PKT_MAX_WORDS], src, seq, got = 0, parity = 0;
	uint32_t bad = 0, from = 0, ev, i;
	int words;

	open_dev(1);
	while (got < n) {
		if (!(rd(PS1_REG_SREG) & PS1_SREG_PKT_READY)) {
			int ret = wait_ev(PS1_EV_PKT | PS1_EV_ERR, timeout_ms, &ev);

			if (ret == -EIO &&
			    (rd(PS1_REG_SREG) & PS1_SREG_ERR_MASK) ==
			    PS1_SREG_ERR_PARITY) {
				parity++;
				wr(PS1_REG_CREG, PS1_CREG_CLEAR_ERR |
				   (rd(PS1_REG_CREG) & 0xf));
				continue;
			}
			if (ret == -ETIMEDOUT)
				break;
			if (ret) {
				CHECK(0, "collect after %u packets: %s", got,
				      strerror(-ret));
				return fails;
			}
		}
		words = recv_pkt(&src, data, timeout_ms);
		if (words < 0) {
			CHECK(0, "collect packet %u: %s", got, strerror(-words));
			return fails;
		}
		/* pattern() keeps the sequence number in the low half */
		seq = (data[0] ^ pattern(src, 0, 0)) & 0xffff;
		for (i = 0; i < (uint32_t)words; i++)
			if (data[i] != pattern(src, seq, i))
				bad++;
		if (src < 32)
			from |= 1u << src;
		got++;
	}
	printf("collect: %u of %u packets from nodes 0x%x, %u lost, %u parity errors\n",
	       got, n, from, n - got, parity);
	CHECK(!bad, "collected packets carry their senders' data (%u bad words)",
	      bad);
	return fails;
}

static int cmd_echo(uint32_t n, uint32_t timeout_ms)
{
	uint32_t data[PS1_PKT_MAX_WORDS], src, s, i;
	int words;

	open_dev(1);
	printf("echo: node %u ready\n", info.node);
	fflush(stdout);
	for (s = 0; s < n; s++) {
		words = recv_pkt(&src, data, timeout_ms);
		if (words < 0) {
			CHECK(0, "echo packet %u: %s", s, strerror(-words));
			return fails;
		}
		if (send_pkt(src, data, words))
			return 1;
	}
	/* let the FIFO drain before close, or the driver resets the board */
	for (i = 0; i < 5000 && !(rd(PS1_REG_SREG) & PS1_SREG_TX_EMPTY); i++)
		usleep(1000);
	CHECK(rd(PS1_REG_SREG) & PS1_SREG_TX_EMPTY,
	      "echoed %u packets, TX FIFO drained", n);
	return fails;
}

static int cmd_ping(uint32_t peer, uint32_t n, uint32_t words)
{
	uint32_t data[PS1_PKT_MAX_WORDS], back[PS1_PKT_MAX_WORDS], src, s, i;
	uint32_t bad = 0;
	double t0, lat;
	int got;

	open_dev(1);
	t0 = now_us();
	for (s = 0; s < n; s++) {
		for (i = 0; i < words; i++)
			data[i] = pattern(info.node, s, i);
		if (send_pkt(peer, data, words))
			return 1;
		got = recv_pkt(&src, back, 10000);
		if (got < 0) {
			CHECK(0, "ping %u: no answer: %s", s, strerror(-got));
			return fails;
		}
		if (src != peer || (uint32_t)got != words ||
		    memcmp(data, back, 4 * words))
			bad++;
	}
	lat = (now_us() - t0) / n / 2;
	CHECK(!bad, "ping-pong with node %u: %u rounds of %u words, %u bad, half round trip %.1f us",
	      peer, n, words, bad, lat);
	return fails;
}

static int cmd_crash_tx(uint32_t dest)
{
	open_dev(1);
	/* header for 10 words, then only 2 of them */
	wr(PS1_REG_NREG, PS1_HDR(dest, 10));
	wr(PS1_REG_NREG, 1);
	wr(PS1_REG_NREG, 2);
	printf("crash-tx: SREG 0x%08x TX_FREE %u, dying\n", rd(PS1_REG_SREG),
	       rd(PS1_REG_TX_FREE));
	fflush(stdout);
	abort();
}

static int cmd_crash_rx(uint32_t timeout_ms)
{
	uint32_t ev;
	int ret;

	open_dev(1);
	ret = wait_ev(PS1_EV_PKT, timeout_ms, &ev);
	if (ret) {
		CHECK(0, "crash-rx: no packet: %s", strerror(-ret));
		return fails;
	}
	rd(PS1_REG_NREG);		/* header */
	rd(PS1_REG_NREG);		/* one data word */
	printf("crash-rx: SREG 0x%08x RX_USED %u, dying\n", rd(PS1_REG_SREG),
	       rd(PS1_REG_RX_USED));
	fflush(stdout);
	abort();
}

static int cmd_unplug(void)
{
	volatile uint32_t *pool;
	struct ps1_wait w = { .events = PS1_EV_BARRIER,
			      .timeout_ms = PS1_WAIT_FOREVER };
	struct pollfd pfd;
	int ret, err, sig;

	open_dev(1);
	pool = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		    PS1_MMAP_POOL_OFFSET);
	if (pool == MAP_FAILED) {
		perror("mmap pool");
		return 1;
	}
	pool[0] = 42;
	printf("unplug: waiting; remove the board now\n");
	fflush(stdout);
	ret = ioctl(fd, PS1_IOC_WAIT, &w);
	err = errno;
	CHECK(ret == -1 && err == ENODEV, "WAIT ends with ENODEV (%s)",
	      ret ? strerror(err) : "success");
	pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
	ret = poll(&pfd, 1, 0);
	CHECK(ret == 1 && (pfd.revents & (POLLERR | POLLHUP)),
	      "poll after removal: revents 0x%x", pfd.revents);
	CHECK(ioctl(fd, PS1_IOC_INFO, &info) == -1 && errno == ENODEV,
	      "INFO after removal: ENODEV");
	CHECK(mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, 0) == MAP_FAILED,
	      "new register mapping refused");

	fault_catch(SIGBUS);
	fault_catch(SIGSEGV);
	sig = sigsetjmp(fault_jmp, 1);
	if (!sig)
		(void)rd(PS1_REG_ID);
	CHECK(sig == SIGBUS, "old register mapping faults with SIGBUS (%d)",
	      sig);
	CHECK(pool[0] == 42, "pool mapping still valid");
	return fails;
}

static int cmd_barrier(uint32_t line, uint32_t timeout_ms, const char *go)
{
	uint32_t bit = 1u << line, sreg, ev;
	struct pollfd pfd;
	int ret;

	if (line >= PS1_BARRIER_LINES)
		return 2;
	open_dev(1);
	wr(PS1_REG_BARRIER_MASK, bit);
	if (go) {
		/*
		 * A node that arrives before another joined completes the
		 * line without it: the caller says go only once fabricd
		 * counts every participant.
		 */
		printf("barrier line %u: joined\n", line);
		fflush(stdout);
		if (wait_file(go, now_s() + timeout_ms / 1e3, 10)) {
			CHECK(0, "barrier line %u: no %s after %u ms", line, go,
			      timeout_ms);
			return fails;
		}
	} else {
		/* by hand: give the other nodes time to join the line */
		sleep(2);
	}
	wr(PS1_REG_BARRIER, bit);
	if (info.node & 1) {
		pfd = (struct pollfd){ .fd = fd, .events = POLLPRI };
		ret = poll(&pfd, 1, timeout_ms);
		CHECK(ret == 1 && (pfd.revents & POLLPRI),
		      "barrier line %u: poll POLLPRI (revents 0x%x)", line,
		      pfd.revents);
	} else {
		ret = wait_ev(PS1_EV_BARRIER | PS1_EV_ERR, timeout_ms, &ev);
		CHECK(ret == 0 && (ev & PS1_EV_BARRIER),
		      "barrier line %u: WAIT BARRIER (%s)", line,
		      strerror(-ret));
	}
	sreg = rd(PS1_REG_SREG);
	CHECK((sreg >> PS1_SREG_BAR_DONE_SHIFT) & bit,
	      "BAR_DONE has line %u (SREG 0x%08x)", line, sreg);
	wr(PS1_REG_BARRIER, bit << PS1_BARRIER_DONE_SHIFT);
	sreg = rd(PS1_REG_SREG);
	CHECK(!(sreg & (PS1_SREG_BAR_DONE | PS1_SREG_BAR_WAIT)),
	      "acknowledged (SREG 0x%08x)", sreg);
	wr(PS1_REG_BARRIER_MASK, 0);
	return fails;
}

/* Garbage in, errors out: the kernel must survive, the board keep working. */
static int cmd_fuzz(uint32_t n)
{
	static const unsigned long cmds[] = {
		PS1_IOC_INFO, PS1_IOC_WAIT, PS1_IOC_RESET, PS1_IOC_COUNTERS,
	};
	unsigned char *buf;
	uint32_t i, ok = 0, j;
	unsigned long cmd;
	void *argp, *p;
	size_t len;
	off_t off;

	open_dev(0);
	/* a page followed by an unmapped one, for arguments that straddle */
	buf = mmap(NULL, 8192, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(buf + 4096, 4096);
	srandom(1234);
	for (i = 0; i < n; i++) {
		switch (random() % 4) {
		case 0:
			cmd = random();
			break;
		case 1:
			cmd = _IOC(random() % 4, 'P', random() % 16,
				   random() % 64);
			break;
		default:
			cmd = cmds[random() % 4];
			break;
		}
		for (j = 0; j < 4096; j++)
			buf[j] = random();
		switch (random() % 4) {
		case 0:
			argp = NULL;
			break;
		case 1:
			argp = (void *)(long)random();
			break;
		case 2:
			argp = buf + 4096 - random() % 24;
			break;
		default:
			argp = buf;
			break;
		}
		/* no endless sleeps: bound any WAIT that can be decoded */
		if (cmd == PS1_IOC_WAIT && (unsigned char *)argp >= buf &&
		    (unsigned char *)argp + sizeof(struct ps1_wait) <= buf + 4096)
			((struct ps1_wait *)argp)->timeout_ms = random() % 20;
		if (ioctl(fd, cmd, argp) == 0)
			ok++;

		len = (random() % 4) ? 4096 * (random() % 80) : random();
		off = (random() % 2) ? 4096 * (random() % 4) : random();
		p = mmap(NULL, len, random() % 8, (random() % 2) ? MAP_SHARED :
			 MAP_PRIVATE, fd, off);
		if (p != MAP_FAILED) {
			if (off == 0 && len == 4096 && (random() % 2))
				(void)((volatile uint32_t *)p)[1];
			munmap(p, len);
		}
	}
	/* surviving is the point: the check is that INFO still works */
	printf("fuzz: %u ioctls (%u succeeded) and mmaps done\n", n, ok);
	CHECK(ioctl(fd, PS1_IOC_INFO, &info) == 0,
	      "after the fuzz INFO still works, state %u", info.state);
	return fails;
}

/* Sleep until an error arrives (interrupt driven), check it, clear it. */
static int cmd_expect_err(uint32_t bits, uint32_t timeout_ms)
{
	struct ps1_counters c;
	uint32_t ev, sreg;
	int ret;

	open_dev(1);
	ret = wait_ev(PS1_EV_ERR, timeout_ms, &ev);
	sreg = rd(PS1_REG_SREG);
	CHECK(ret == -EIO && (sreg & bits) == bits,
	      "error arrived while waiting: SREG 0x%08x", sreg);
	ioctl(fd, PS1_IOC_COUNTERS, &c);
	CHECK(!(bits & PS1_SREG_ERR_PARITY) || c.parity_errors > 0,
	      "CNT_PARITY %llu, error interrupts %llu",
	      (unsigned long long)c.parity_errors,
	      (unsigned long long)c.irq_err);
	wr(PS1_REG_CREG, PS1_CREG_CLEAR_ERR | (rd(PS1_REG_CREG) & 0xf));
	CHECK(!(rd(PS1_REG_SREG) & PS1_SREG_ERR_MASK), "cleared");
	return fails;
}

static int usage(void)
{
	fprintf(stderr, "usage: ps1test info|bad|pool|poll|send DEST N [WORDS]|recv N [MS]|collect N [MS]|echo N [MS]|ping PEER N [WORDS]|crash-tx DEST|crash-rx [MS]|unplug|busy|barrier LINE [MS [GOFILE]]|fuzz [N]|dmesg|state|expect-err BITS [MS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "info")) {
		open_dev(0);
		print_info();
		return 0;
	}
	if (!strcmp(cmd, "bad"))
		return !!cmd_bad();
	if (!strcmp(cmd, "pool"))
		return !!cmd_pool();
	if (!strcmp(cmd, "poll"))
		return !!cmd_poll();
	if (!strcmp(cmd, "send") && argc >= 4)
		return !!cmd_send(arg_or(argc, argv, 2, 0),
				  arg_or(argc, argv, 3, 1),
				  arg_or(argc, argv, 4, 16));
	if (!strcmp(cmd, "recv") && argc >= 3)
		return !!cmd_recv(arg_or(argc, argv, 2, 1),
				  arg_or(argc, argv, 3, 10000));
	if (!strcmp(cmd, "collect") && argc >= 3)
		return !!cmd_collect(arg_or(argc, argv, 2, 1),
				     arg_or(argc, argv, 3, 2000));
	if (!strcmp(cmd, "echo") && argc >= 3)
		return !!cmd_echo(arg_or(argc, argv, 2, 1),
				  arg_or(argc, argv, 3, 30000));
	if (!strcmp(cmd, "ping") && argc >= 4)
		return !!cmd_ping(arg_or(argc, argv, 2, 1),
				  arg_or(argc, argv, 3, 1),
				  arg_or(argc, argv, 4, 16));
	if (!strcmp(cmd, "crash-tx") && argc >= 3)
		return cmd_crash_tx(arg_or(argc, argv, 2, 1));
	if (!strcmp(cmd, "crash-rx"))
		return cmd_crash_rx(arg_or(argc, argv, 2, 10000));
	if (!strcmp(cmd, "unplug"))
		return !!cmd_unplug();
	if (!strcmp(cmd, "barrier") && argc >= 3)
		return !!cmd_barrier(arg_or(argc, argv, 2, 0),
				     arg_or(argc, argv, 3, 30000),
				     argc > 4 ? argv[4] : NULL);
	if (!strcmp(cmd, "fuzz"))
		return !!cmd_fuzz(arg_or(argc, argv, 2, 2000));
	if (!strcmp(cmd, "expect-err") && argc >= 3)
		return !!cmd_expect_err(arg_or(argc, argv, 2, 0),
					arg_or(argc, argv, 3, 60000));
	if (!strcmp(cmd, "dmesg"))
		return !!check_kernel_log();
	if (!strcmp(cmd, "state")) {
		open_dev(0);
		printf("%u\n", info.state);
		return 0;
	}
	if (!strcmp(cmd, "busy")) {
		open_dev(1);
		sleep(2);
		return 0;
	}
	return usage();
}
