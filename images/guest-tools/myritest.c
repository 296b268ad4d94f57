// SPDX-License-Identifier: GPL-2.0
/*
 * myritest: exercise /dev/myri0 (myri.ko) and the MCP from user space the
 * way the HAL does: open a context, map its send area, doorbell page and
 * receive region, post slots and read events, and use the driver only to
 * wait and for information.
 *
 *   myritest info                     INFO, state, contexts
 *   myritest counters                 every counter by name
 *   myritest state                    the sysfs state line (for scripts)
 *   myritest bad                      bad ioctls, mmaps and slots fail
 *                                     cleanly; the card stays up
 *   myritest excl                     EXCL/SHARED/JOIN rules of context 0
 *   myritest local N [SIZE]           N packets between two contexts of
 *                                     this node, both ways, checked
 *   myritest crash                    a child dies with a busy context;
 *                                     the driver cleans up
 *   myritest echo N [MS]              on context 1: send N packets back
 *   myritest ping PEER N [SIZE]       ping-pong with "echo" on PEER
 *   myritest send DEST N [SIZE [STOPFILE]]
 *                                     N packets to context 1 of DEST; with
 *                                     STOPFILE, go on until it exists, a
 *                                     slot may wait as long (DEST away),
 *                                     and every slot must come back 30 s
 *                                     after it
 *   myritest recv N [MS]              receive and check N packets
 *   myritest firmware FILE WORD [MS]  load a broken MCP (e.g.
 *                                     myri/mcp-loop.bin watchdog): the
 *                                     card must die saying WORD, contexts
 *                                     fail cleanly, myri/mcp.bin revives it
 *   myritest dmesg                    fail on kernel warnings in the log
 *
 * Exit status 0 on success, 1 on a failed check, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
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
#include "vcluster/hw/lanai_regs.h"
#include "uapi/myri_ioctl.h"
#include "vcluster/fw/myri_mcp_if.h"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define TEST_CTX	1	/* the raw context ping/echo/send/recv use */
#define SYSFS		"/sys/class/misc/myri0/device/"

/* An open context, mapped. */
struct ctx {
	int fd;
	struct myri_ctx_open lay;
	volatile struct myri_ctx_user *user;
	volatile uint8_t *slots;
	volatile uint32_t *db;
	const volatile uint8_t *rx;
	const volatile struct myri_event *ev;
	const volatile uint8_t *ring;
};

static int open_dev(void)
{
	int fd = open(MYRI_DEVICE, O_RDWR);

	if (fd < 0) {
		perror(MYRI_DEVICE);
		exit(1);
	}
	return fd;
}

static int get_info(int fd, struct myri_info *info)
{
	return ioctl(fd, MYRI_IOC_INFO, info) ? -errno : 0;
}

/* The sysfs file's first line, or "" */
static char *sysfs_read(const char *name, char *buf, size_t size)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), SYSFS "%s", name);
	buf[0] = 0;
	f = fopen(path, "r");
	if (!f)
		return buf;
	if (!fgets(buf, size, f))
		buf[0] = 0;
	fclose(f);
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/* write(2) of @text to a sysfs file: 0 or -errno */
static int sysfs_write(const char *name, const char *text)
{
	char path[256];
	int fd, ret = 0;

	snprintf(path, sizeof(path), SYSFS "%s", name);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	if (write(fd, text, strlen(text)) < 0)
		ret = -errno;
	close(fd);
	return ret;
}

static void ctx_unmap(struct ctx *c)
{
	if (c->user)
		munmap((void *)c->user, c->lay.send_size);
	if (c->db)
		munmap((void *)c->db, LANAI_DOORBELL_PAGE);
	if (c->rx)
		munmap((void *)c->rx, c->lay.rx_size);
	c->user = NULL;
	c->db = NULL;
	c->rx = NULL;
}

static void ctx_close(struct ctx *c)
{
	ctx_unmap(c);
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
}

/* Open context @n (or MYRI_CTX_ANY) and map it: 0 or -errno. */
static int ctx_open(struct ctx *c, uint32_t n, uint32_t flags)
{
	void *p;

	memset(c, 0, sizeof(*c));
	c->fd = open_dev();
	c->lay.ctx = n;
	c->lay.flags = flags;
	if (ioctl(c->fd, MYRI_IOC_OPEN_CTX, &c->lay)) {
		int err = errno;

		close(c->fd);
		c->fd = -1;
		return -err;
	}
	p = mmap(NULL, c->lay.send_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 c->fd, c->lay.mmap_send);
	if (p == MAP_FAILED)
		goto fail;
	c->user = p;
	c->slots = (volatile uint8_t *)p + 4096;
	p = mmap(NULL, LANAI_DOORBELL_PAGE, PROT_READ | PROT_WRITE, MAP_SHARED,
		 c->fd, c->lay.mmap_doorbell);
	if (p == MAP_FAILED)
		goto fail;
	c->db = p;
	p = mmap(NULL, c->lay.rx_size, PROT_READ, MAP_SHARED, c->fd,
		 c->lay.mmap_rx);
	if (p == MAP_FAILED)
		goto fail;
	c->rx = p;
	c->ev = p;
	c->ring = c->rx + c->lay.ring_off;
	return 0;
fail:
	perror("mmap of a context");
	ctx_close(c);
	return -EIO;
}

static volatile struct myri_slot *slot_at(struct ctx *c, uint32_t i)
{
	return (volatile struct myri_slot *)(c->slots + (i % c->lay.nslots) *
					     c->lay.slot_size);
}

static int ctx_wait(struct ctx *c, uint32_t events, uint32_t ms)
{
	struct myri_wait w = { .events = events, .timeout_ms = ms };

	return ioctl(c->fd, MYRI_IOC_WAIT, &w) ? -errno : (int)w.revents;
}

/* Post a slot as the user may, right or wrong; no doorbell. */
static volatile struct myri_slot *post(struct ctx *c, uint32_t i,
				       uint32_t node, uint32_t dctx,
				       const void *data, uint32_t len)
{
	volatile struct myri_slot *s = slot_at(c, i);
	uint32_t n = len;

	if (n > c->lay.slot_size - MYRI_SLOT_HDR)
		n = c->lay.slot_size - MYRI_SLOT_HDR;
	if (data)
		memcpy((void *)s->data, data, n);
	s->dst_node = node;
	s->dst_ctx = dctx;
	s->flags = 0;
	s->len = len;
	s->status = 0;
	s->cookie = i + 1;
	__atomic_store_n(&s->state, MYRI_SLOT_POSTED, __ATOMIC_RELEASE);
	return s;
}

static void ring_doorbell(struct ctx *c, uint32_t i)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	c->db[0] = i;
}

#define SLOT_WAIT_US	5e6	/* a slot busy longer: the send hangs */
#define STOP_WAIT_US	30e6	/* the same, once told to stop */

static double slot_wait_max;	/* the longest wait for a slot, us */

/*
 * Send a packet in the next slot, waiting up to SLOT_WAIT_US for it.
 * With @stop (a file), wait on while it does not exist (the peer may be
 * away, and RDP sends again once it is back), then up to STOP_WAIT_US.
 */
static int ctx_send_until(struct ctx *c, uint32_t node, uint32_t dctx,
			  const void *data, uint32_t len, const char *stop)
{
	uint32_t pos = c->user->slot_next, i = pos % c->lay.nslots;
	volatile struct myri_slot *s = slot_at(c, i);
	double t0 = now_us(), tw = t0, limit = SLOT_WAIT_US;
	int ret;

	while (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != MYRI_SLOT_FREE) {
		ret = ctx_wait(c, MYRI_WAIT_TX, 100);
		if (ret < 0 && ret != -ETIMEDOUT)
			return ret;
		if (stop && limit == SLOT_WAIT_US) {
			if (access(stop, F_OK)) {
				tw = now_us();
				continue;
			}
			limit = STOP_WAIT_US;
		}
		if (now_us() - tw > limit) {
			fprintf(stderr, "send: slot %u busy for %.0f s%s\n", i,
				limit / 1e6, stop ? " after the stop" : "");
			return -ETIMEDOUT;
		}
	}
	if (now_us() - t0 > slot_wait_max)
		slot_wait_max = now_us() - t0;
	post(c, i, node, dctx, data, len);
	c->user->slot_next = pos + 1;
	ring_doorbell(c, i);
	return 0;
}

static int ctx_send(struct ctx *c, uint32_t node, uint32_t dctx,
		    const void *data, uint32_t len)
{
	return ctx_send_until(c, node, dctx, data, len, NULL);
}

/*
 * The next event, within @ms: copies an RX payload (up to @size) to @buf
 * and frees it. Returns the event type, or -errno.
 */
static int ctx_event(struct ctx *c, struct myri_event *out, void *buf,
		     uint32_t size, uint32_t ms)
{
	uint32_t cons = c->user->ev_cons, spins = 0, n;
	double t0 = now_us();
	int ret;

	while (__atomic_load_n(&c->user->ev_prod, __ATOMIC_ACQUIRE) == cons) {
		if (spins++ < 1000)
			continue;
		if (now_us() - t0 > ms * 1e3)
			return -ETIMEDOUT;
		ret = ctx_wait(c, MYRI_WAIT_RX, 100);
		if (ret < 0 && ret != -ETIMEDOUT)
			return ret;
	}
	memcpy(out, (const void *)&c->ev[cons % c->lay.nev], sizeof(*out));
	if (out->type == MYRI_EV_RX) {
		n = out->len < size ? out->len : size;
		if (buf)
			memcpy(buf, (const void *)(c->ring + out->pos %
						   c->lay.ring_size), n);
		__atomic_store_n(&c->user->rx_cons,
				 out->pos + ((out->len + MYRI_RX_ALIGN - 1) &
					     ~(MYRI_RX_ALIGN - 1)),
				 __ATOMIC_RELEASE);
	}
	__atomic_store_n(&c->user->ev_cons, cons + 1, __ATOMIC_RELEASE);
	return out->type;
}

/* The next RX event, skipping SENT ones. */
static int ctx_recv(struct ctx *c, struct myri_event *ev, void *buf,
		    uint32_t size, uint32_t ms)
{
	int t;

	do {
		t = ctx_event(c, ev, buf, size, ms);
	} while (t == MYRI_EV_SENT);
	if (t > 0 && t != MYRI_EV_RX) {
		fprintf(stderr, "event %d (status %u, slot %u) instead of a packet\n",
			t, ev->status, ev->aux);
		return -EPROTO;
	}
	return t;
}

static uint8_t pattern(uint32_t src, uint32_t seq, uint32_t i)
{
	return (uint8_t)(0x5a ^ src * 7 ^ seq * 13 ^ i ^ i >> 8);
}

static void fill(uint8_t *p, uint32_t src, uint32_t seq, uint32_t len)
{
	uint32_t i;

	for (i = 0; i < len; i++)
		p[i] = pattern(src, seq, i);
	if (len >= 4)
		memcpy(p, &seq, 4);
}

/* Offset of the first wrong byte, or -1. */
static long verify(const uint8_t *p, uint32_t src, uint32_t seq, uint32_t len)
{
	uint32_t i;

	for (i = len >= 4 ? 4 : 0; i < len; i++)
		if (p[i] != pattern(src, seq, i))
			return i;
	return -1;
}

/* ---- info ---- */

static const char *const state_names[] = {
	"down", "loading", "up", "dead", "removed",
};

static int cmd_info(void)
{
	struct myri_info info;
	char buf[256];
	int fd = open_dev();

	if (get_info(fd, &info)) {
		perror("MYRI_IOC_INFO");
		return 1;
	}
	printf("version %u.%u.%u state %s node %u nodes %u sram %u KiB %u MHz link 0x%x\n",
	       info.version >> 16, (info.version >> 8) & 0xff,
	       info.version & 0xff,
	       info.state < 5 ? state_names[info.state] : "?", info.node,
	       info.nodes, info.sram_size / 1024, info.clock_mhz, info.link);
	printf("fw %s mcp \"%s\" abi %u loads %u contexts %u/%u openers %u pool %u\n",
	       info.fw, info.mcp_name, info.mcp_abi, info.loads, info.ctx_open,
	       info.ctx_max, info.openers, info.pool_size);
	if (info.reason[0])
		printf("reason: %s\n", info.reason);
	printf("state: %s\n", sysfs_read("state", buf, sizeof(buf)));
	printf("halt_reason: %s\n", sysfs_read("halt_reason", buf, sizeof(buf)));
	close(fd);
	return 0;
}

/* Every counter by name from sysfs, and the ioctl's view of a few. */
static int cmd_counters(void)
{
	struct myri_counters c;
	struct dirent **names;
	char path[300], buf[64];
	int fd = open_dev(), i, n;
	FILE *f;

	n = scandir(SYSFS "counters", &names, NULL, alphasort);
	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), SYSFS "counters/%s",
				 names[i]->d_name);
			f = fopen(path, "r");
			if (f && fgets(buf, sizeof(buf), f))
				printf("%-16s %s", names[i]->d_name, buf);
			if (f)
				fclose(f);
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
	if (ioctl(fd, MYRI_IOC_COUNTERS, &c)) {
		perror("MYRI_IOC_COUNTERS");
		return 1;
	}
	printf("ioctl: sent %llu received %llu tx_packets %llu rx_packets %llu interrupts %llu deaths %llu\n",
	       (unsigned long long)c.mcp[MCP_CNT_sent],
	       (unsigned long long)c.mcp[MCP_CNT_received],
	       (unsigned long long)c.tx_packets,
	       (unsigned long long)c.rx_packets,
	       (unsigned long long)c.interrupts,
	       (unsigned long long)c.deaths);
	close(fd);
	return 0;
}

/* ---- bad input ---- */

static void expect_open_ctx(int fd, const char *what,
			    struct myri_ctx_open req, int want)
{
	expect_ioctl(fd, what, MYRI_IOC_OPEN_CTX, &req, want);
}

/* Post slot i as given, ring it, expect CTX_ERR with @err. */
static void bad_slot(struct ctx *c, const char *what, uint32_t i,
		     uint32_t node, uint32_t dctx, uint32_t len, int post_it,
		     uint32_t err)
{
	struct myri_event ev;
	int t;

	if (post_it)
		post(c, i, node, dctx, NULL, len);
	ring_doorbell(c, i);
	t = ctx_event(c, &ev, NULL, 0, 2000);
	CHECK(t == MYRI_EV_CTX_ERR && ev.status == err && c->user->err == err,
	      "%s: event %d status %u, ctx err %u (want CTX_ERR %u)", what, t,
	      t > 0 ? ev.status : 0, c->user->err, err);
	if (post_it)
		CHECK(slot_at(c, i)->state == MYRI_SLOT_FREE &&
		      slot_at(c, i)->status == err,
		      "%s: slot %u back FREE with status %u", what, i,
		      slot_at(c, i)->status);
}

static int local_roundtrip(struct ctx *a, struct ctx *b, uint32_t seq,
			   uint32_t len);

static int cmd_bad(void)
{
	struct myri_ctx_open req = { 0 };
	struct myri_wait w = { 0 };
	struct myri_info info;
	struct ctx c, c2;
	int fd = open_dev(), ret;
	void *p;

	if (get_info(fd, &info) || info.state != MYRI_STATE_UP) {
		printf("FAIL card not up (state %u): %s\n", info.state,
		       info.reason);
		return 1;
	}
	expect_ioctl(fd, "unknown nr", _IO('M', 99), NULL, ENOTTY);
	expect_ioctl(fd, "other magic", _IOR('Q', 1, struct myri_info), &info,
		     ENOTTY);
	expect_ioctl(fd, "INFO size mismatch", _IOR('M', 1, int), &info,
		     ENOTTY);
	expect_ioctl(fd, "INFO NULL", MYRI_IOC_INFO, NULL, EFAULT);
	expect_ioctl(fd, "INFO bad pointer", MYRI_IOC_INFO, (void *)16, EFAULT);
	expect_ioctl(fd, "COUNTERS NULL", MYRI_IOC_COUNTERS, NULL, EFAULT);
	expect_ioctl(fd, "OPEN_CTX NULL", MYRI_IOC_OPEN_CTX, NULL, EFAULT);
	expect_ioctl(fd, "WAIT NULL", MYRI_IOC_WAIT, NULL, EFAULT);
	w.events = MYRI_WAIT_RX;
	w.timeout_ms = 10;
	expect_ioctl(fd, "WAIT without a context", MYRI_IOC_WAIT, &w, EINVAL);

	req.ctx = MYRI_CTX_ANY;
	expect_open_ctx(fd, "OPEN_CTX flags 0", req, EINVAL);
	req.flags = MYRI_CTX_EXCL | MYRI_CTX_SHARED;
	expect_open_ctx(fd, "OPEN_CTX EXCL|SHARED", req, EINVAL);
	req.flags = 0x80;
	expect_open_ctx(fd, "OPEN_CTX unknown flag", req, EINVAL);
	req.flags = MYRI_CTX_JOIN;
	expect_open_ctx(fd, "OPEN_CTX JOIN of ANY", req, EINVAL);
	req.flags = MYRI_CTX_EXCL;
	req.ctx = MCP_MAX_CTX;
	expect_open_ctx(fd, "OPEN_CTX ctx 16", req, EINVAL);
	req.ctx = MYRI_CTX_ANY;
	req.in_reserved[1] = 1;
	expect_open_ctx(fd, "OPEN_CTX reserved", req, EINVAL);
	req.in_reserved[1] = 0;
	req.nslots = 3;
	expect_open_ctx(fd, "OPEN_CTX 3 slots", req, EINVAL);
	req.nslots = 0;
	req.max_payload = MCP_MAX_PAYLOAD + 1;
	expect_open_ctx(fd, "OPEN_CTX payload 8193", req, EINVAL);
	req.max_payload = 0;
	req.ring_kb = 24;
	expect_open_ctx(fd, "OPEN_CTX ring 24 KiB", req, EINVAL);
	req.ring_kb = 8;
	expect_open_ctx(fd, "OPEN_CTX ring 8 KiB", req, EINVAL);
	req.ring_kb = 0;
	req.nev = 100;
	expect_open_ctx(fd, "OPEN_CTX 100 events", req, EINVAL);
	req.nev = 0;
	req.nslots = 256;
	req.max_payload = MCP_MAX_PAYLOAD;
	if (4096 + 256 * (MYRI_SLOT_HDR + MCP_MAX_PAYLOAD) >
	    info.sram_size - MCP_CTX_AREA_OFF)
		expect_open_ctx(fd, "OPEN_CTX 256 x 8 KiB slots (SRAM)", req,
				ENOSPC);

	expect_mmap(fd, "send area without a context", 4096,
		    PROT_READ | PROT_WRITE, MAP_SHARED, MYRI_MMAP_SEND(1),
		    EINVAL, EINVAL);
	expect_mmap(fd, "offset 4096", 4096, PROT_READ, MAP_SHARED, 4096,
		    EINVAL, EINVAL);
	expect_mmap(fd, "pool too long", info.pool_size + 4096, PROT_READ,
		    MAP_SHARED, MYRI_MMAP_POOL, EINVAL, EINVAL);
	expect_mmap(fd, "pool MAP_PRIVATE", 4096, PROT_READ, MAP_PRIVATE,
		    MYRI_MMAP_POOL, EINVAL, EINVAL);
	expect_mmap(fd, "pool PROT_EXEC", 4096, PROT_READ | PROT_EXEC,
		    MAP_SHARED, MYRI_MMAP_POOL, EINVAL, EPERM);
	p = mmap(NULL, info.pool_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 MYRI_MMAP_POOL);
	CHECK(p != MAP_FAILED, "mmap the whole pool (%u bytes)", info.pool_size);
	if (p != MAP_FAILED)
		munmap(p, info.pool_size);
	close(fd);

	/* with a context */
	ret = ctx_open(&c, MYRI_CTX_ANY, MYRI_CTX_EXCL);
	CHECK(!ret, "OPEN_CTX ANY: ctx %u, %u slots of %u, ring %u, %u events (%s)",
	      c.lay.ctx, c.lay.nslots, c.lay.slot_size, c.lay.ring_size,
	      c.lay.nev, ret ? strerror(-ret) : "ok");
	if (ret)
		return 1;
	req = (struct myri_ctx_open){ .ctx = MYRI_CTX_ANY,
				      .flags = MYRI_CTX_EXCL };
	expect_open_ctx(c.fd, "second OPEN_CTX on the file", req, EBUSY);
	expect_mmap(c.fd, "send area too long", c.lay.send_size + 4096,
		    PROT_READ, MAP_SHARED, c.lay.mmap_send, EINVAL, EINVAL);
	expect_mmap(c.fd, "doorbell 8 KiB", 8192, PROT_READ, MAP_SHARED,
		    c.lay.mmap_doorbell, EINVAL, EINVAL);
	expect_mmap(c.fd, "receive region writable", c.lay.rx_size,
		    PROT_READ | PROT_WRITE, MAP_SHARED, c.lay.mmap_rx, EPERM,
		    EACCES);
	expect_mmap(c.fd, "receive region too long", c.lay.rx_size + 8192,
		    PROT_READ, MAP_SHARED, c.lay.mmap_rx, EINVAL, EINVAL);
	expect_mmap(c.fd, "another context's send area", 4096, PROT_READ,
		    MAP_SHARED, MYRI_MMAP_SEND((c.lay.ctx + 1) % MCP_MAX_CTX),
		    EINVAL, EINVAL);
	CHECK(mprotect((void *)c.rx, 4096, PROT_READ | PROT_WRITE) == -1 &&
	      errno == EACCES, "mprotect of the receive region to writable refused");
	CHECK(mremap((void *)c.user, c.lay.send_size, c.lay.send_size + 4096,
		     MREMAP_MAYMOVE) == MAP_FAILED, "mremap of the send area refused");
	w = (struct myri_wait){ .events = 0, .timeout_ms = 10 };
	expect_ioctl(c.fd, "WAIT no events", MYRI_IOC_WAIT, &w, EINVAL);
	w = (struct myri_wait){ .events = 0x10, .timeout_ms = 10 };
	expect_ioctl(c.fd, "WAIT unknown event", MYRI_IOC_WAIT, &w, EINVAL);
	ret = ctx_wait(&c, MYRI_WAIT_RX, 50);
	CHECK(ret == -ETIMEDOUT, "WAIT RX 50 ms on an idle context times out (%s)",
	      ret < 0 ? strerror(-ret) : "returned");
	ret = ctx_wait(&c, MYRI_WAIT_TX, 0);
	CHECK(ret == MYRI_WAIT_TX, "WAIT TX: a free slot (%d)", ret);

	/* garbage in slots and doorbells: CTX_ERR, the card stays up */
	bad_slot(&c, "len 0", 0, c.lay.node, c.lay.ctx, 0, 1, MYRI_ERR_BAD_LEN);
	bad_slot(&c, "len > slot", 1, c.lay.node, c.lay.ctx,
		 c.lay.slot_size, 1, MYRI_ERR_BAD_LEN);
	bad_slot(&c, "node >= nodes", 2, c.lay.nodes, c.lay.ctx, 8, 1,
		 MYRI_ERR_BAD_DEST);
	bad_slot(&c, "ctx 16", 3, c.lay.node, MCP_MAX_CTX, 8, 1,
		 MYRI_ERR_BAD_DEST);
	bad_slot(&c, "doorbell past the slots", c.lay.nslots + 5, 0, 0, 0, 0,
		 MYRI_ERR_BAD_SLOT);
	bad_slot(&c, "doorbell of a FREE slot", 4, 0, 0, 0, 0,
		 MYRI_ERR_BAD_SLOT);
	fd = open_dev();
	CHECK(!get_info(fd, &info) && info.state == MYRI_STATE_UP,
	      "card still up after the garbage (state %u)", info.state);
	close(fd);

	/* and still delivers: to ourselves, through the MCP */
	c.user->slot_next = 0;
	ret = ctx_open(&c2, MYRI_CTX_ANY, MYRI_CTX_EXCL);
	CHECK(!ret, "a second context: %u", c2.lay.ctx);
	if (!ret) {
		CHECK(!local_roundtrip(&c, &c2, 1, 100),
		      "a packet each way between contexts %u and %u",
		      c.lay.ctx, c2.lay.ctx);
		ctx_close(&c2);
	}
	ctx_close(&c);
	return fails;
}

/* ---- context 0: the HAL's rules ---- */

static int cmd_excl(void)
{
	struct ctx a, b, x;
	int ret;

	ret = ctx_open(&a, MCP_HAL_CTX, MYRI_CTX_SHARED);
	CHECK(!ret, "ctx 0 SHARED (%s)", ret ? strerror(-ret) : "ok");
	if (ret)
		return 1;
	ret = ctx_open(&b, MCP_HAL_CTX, MYRI_CTX_SHARED);
	CHECK(!ret && b.lay.users == 2 && b.lay.mmap_send == a.lay.mmap_send,
	      "a second SHARED joins it (users %u)", b.lay.users);
	ret = ctx_open(&x, MCP_HAL_CTX, MYRI_CTX_EXCL);
	CHECK(ret == -EBUSY, "EXCL while SHARED users: %s", strerror(-ret));
	if (!ret)
		ctx_close(&x);
	ret = ctx_open(&x, MCP_HAL_CTX, MYRI_CTX_JOIN);
	CHECK(!ret, "JOIN always works (%s)", ret ? strerror(-ret) : "ok");
	if (!ret) {
		/* all of them see the same user page */
		a.user->user_reserved[0] = 0x1234;
		CHECK(x.user->user_reserved[0] == 0x1234,
		      "the joiner sees the same send area");
		a.user->user_reserved[0] = 0;
		ctx_close(&x);
	}
	ctx_close(&a);
	ctx_close(&b);

	ret = ctx_open(&a, MCP_HAL_CTX, MYRI_CTX_EXCL);
	CHECK(!ret && a.lay.users == 1, "ctx 0 EXCL once the others left (%s)",
	      ret ? strerror(-ret) : "ok");
	if (ret)
		return fails;
	ret = ctx_open(&b, MCP_HAL_CTX, MYRI_CTX_SHARED);
	CHECK(ret == -EBUSY, "SHARED while EXCL: %s", strerror(-ret));
	if (!ret)
		ctx_close(&b);
	ret = ctx_open(&b, MCP_HAL_CTX, MYRI_CTX_EXCL);
	CHECK(ret == -EBUSY, "a second EXCL: %s", strerror(-ret));
	if (!ret)
		ctx_close(&b);
	ctx_close(&a);
	return fails;
}

/* ---- traffic ---- */

/* A packet of @len from a to b and back, checked. */
static int local_roundtrip(struct ctx *a, struct ctx *b, uint32_t seq,
			   uint32_t len)
{
	uint8_t out[MCP_MAX_PAYLOAD], in[MCP_MAX_PAYLOAD];
	struct myri_event ev;
	struct ctx *from = a, *to = b;
	int dir, t;
	long bad;

	for (dir = 0; dir < 2; dir++) {
		fill(out, from->lay.ctx, seq, len);
		if (ctx_send(from, to->lay.node, to->lay.ctx, out, len))
			return -1;
		t = ctx_recv(to, &ev, in, sizeof(in), 5000);
		if (t != MYRI_EV_RX) {
			fprintf(stderr, "ctx %u: no packet from ctx %u: %s\n",
				to->lay.ctx, from->lay.ctx,
				t < 0 ? strerror(-t) : "?");
			return -1;
		}
		bad = verify(in, from->lay.ctx, seq, len);
		if (ev.len != len || ev.src_ctx != from->lay.ctx ||
		    ev.src_node != from->lay.node || bad >= 0) {
			fprintf(stderr, "packet %u: len %u/%u, from %u:%u, first bad byte %ld\n",
				seq, ev.len, len, ev.src_node, ev.src_ctx, bad);
			return -1;
		}
		from = b;
		to = a;
	}
	return 0;
}

static int cmd_local(uint32_t n, uint32_t size)
{
	struct ctx a, b;
	uint32_t i, len;
	double t0;
	int ret;

	ret = ctx_open(&a, MYRI_CTX_ANY, MYRI_CTX_EXCL);
	if (!ret)
		ret = ctx_open(&b, MYRI_CTX_ANY, MYRI_CTX_EXCL);
	CHECK(!ret, "two contexts (%s)", ret ? strerror(-ret) : "ok");
	if (ret)
		return 1;
	t0 = now_us();
	for (i = 0; i < n; i++) {
		/* every length from 1 byte up when no size is given */
		len = size ? size : 1 + i % MCP_MAX_PAYLOAD;
		if (local_roundtrip(&a, &b, i, len))
			break;
	}
	CHECK(i == n, "%u of %u round trips between contexts %u and %u, %.1f us each",
	      i, n, a.lay.ctx, b.lay.ctx, i ? (now_us() - t0) / i : 0.0);
	ctx_close(&a);
	ctx_close(&b);
	return fails;
}

static int cmd_echo(uint32_t n, uint32_t ms)
{
	uint8_t buf[MCP_MAX_PAYLOAD];
	struct myri_event ev;
	struct ctx c;
	uint32_t i;
	int ret;

	ret = ctx_open(&c, TEST_CTX, MYRI_CTX_EXCL);
	if (ret) {
		printf("FAIL open context %u: %s\n", TEST_CTX, strerror(-ret));
		return 1;
	}
	printf("echo: node %u context %u ready\n", c.lay.node, c.lay.ctx);
	for (i = 0; i < n; i++) {
		ret = ctx_recv(&c, &ev, buf, sizeof(buf), ms);
		if (ret < 0)
			break;
		if (ctx_send(&c, ev.src_node, ev.src_ctx, buf, ev.len))
			break;
	}
	CHECK(i == n, "echoed %u of %u packets", i, n);
	ctx_close(&c);
	return fails;
}

static int cmd_ping(uint32_t peer, uint32_t n, uint32_t size)
{
	uint8_t out[MCP_MAX_PAYLOAD], in[MCP_MAX_PAYLOAD];
	struct myri_event ev;
	double t0, best = 1e12, t;
	uint32_t i;
	struct ctx c;
	int ret;
	long bad;

	if (size < 4 || size > MCP_MAX_PAYLOAD)
		size = 64;
	ret = ctx_open(&c, TEST_CTX, MYRI_CTX_EXCL);
	if (ret) {
		printf("FAIL open context %u: %s\n", TEST_CTX, strerror(-ret));
		return 1;
	}
	t0 = now_us();
	for (i = 0; i < n; i++) {
		t = now_us();
		fill(out, c.lay.node, i, size);
		if (ctx_send(&c, peer, TEST_CTX, out, size))
			break;
		ret = ctx_recv(&c, &ev, in, sizeof(in), 10000);
		if (ret < 0) {
			fprintf(stderr, "ping %u: %s\n", i, strerror(-ret));
			break;
		}
		bad = verify(in, c.lay.node, i, size);
		if (ev.len != size || ev.src_node != peer || bad >= 0 ||
		    memcmp(in, &i, 4)) {
			fprintf(stderr, "ping %u: len %u from %u, first bad byte %ld\n",
				i, ev.len, ev.src_node, bad);
			break;
		}
		t = now_us() - t;
		if (t < best)
			best = t;
	}
	t = i ? (now_us() - t0) / i : 0;
	CHECK(i == n, "ping %u: %u of %u round trips of %u bytes, half round trip %.1f us (best %.1f)",
	      peer, i, n, size, t / 2, best / 2);
	ctx_close(&c);
	return fails;
}

static int cmd_send(uint32_t dest, uint32_t n, uint32_t size,
		    const char *stop)
{
	uint8_t out[MCP_MAX_PAYLOAD];
	struct ctx c;
	uint32_t i, j, busy = 0;
	double t0;
	int ret, err = 0;

	if (!size || size > MCP_MAX_PAYLOAD)
		size = MCP_MAX_PAYLOAD;
	ret = ctx_open(&c, MYRI_CTX_ANY, MYRI_CTX_EXCL);
	if (ret) {
		printf("FAIL open a context: %s\n", strerror(-ret));
		return 1;
	}
	t0 = now_us();
	/* with a stop file: at least n, then until told (every 16 packets) */
	for (i = 0; i < n || (stop && (i % 16 || access(stop, F_OK))); i++) {
		fill(out, c.lay.node, i, size);
		err = ctx_send_until(&c, dest, TEST_CTX, out, size, stop);
		if (err)
			break;
	}
	/* all slots back: everything arrived (or failed: SEND_ERR) */
	for (ret = 0; ret < (stop ? STOP_WAIT_US : SLOT_WAIT_US) / 1000; ret++) {
		for (busy = 0, j = 0; j < c.lay.nslots; j++)
			busy += slot_at(&c, j)->state != MYRI_SLOT_FREE;
		if (!busy)
			break;
		usleep(1000);
	}
	t0 = now_us() - t0;
	CHECK(!err && i >= n && !busy,
	      "sent %u packets of %u bytes to %u (%u asked%s), %u slots still busy at the end, longest wait for a slot %.1f s: %.1f MB/s%s%s",
	      i, size, dest, n, stop ? ", then until told" : "", busy,
	      slot_wait_max / 1e6, t0 > 0 ? (double)i * size / t0 : 0.0,
	      err ? ": " : "", err ? strerror(-err) : "");
	ctx_close(&c);
	return fails;
}

static int cmd_recv(uint32_t n, uint32_t ms)
{
	uint8_t buf[MCP_MAX_PAYLOAD];
	uint32_t i, expect[MCP_MAX_NODES] = { 0 };
	struct myri_event ev;
	struct ctx c;
	int ret;
	long bad;

	ret = ctx_open(&c, TEST_CTX, MYRI_CTX_EXCL);
	if (ret) {
		printf("FAIL open context %u: %s\n", TEST_CTX, strerror(-ret));
		return 1;
	}
	printf("recv: node %u context %u ready\n", c.lay.node, c.lay.ctx);
	for (i = 0; i < n; i++) {
		ret = ctx_recv(&c, &ev, buf, sizeof(buf), ms);
		if (ret < 0) {
			fprintf(stderr, "recv %u: %s\n", i, strerror(-ret));
			break;
		}
		bad = verify(buf, ev.src_node, expect[ev.src_node % MCP_MAX_NODES],
			     ev.len);
		if (bad >= 0 || (ev.len >= 4 &&
				 memcmp(buf, &expect[ev.src_node % MCP_MAX_NODES], 4))) {
			fprintf(stderr, "packet %u from %u: out of order or bad at byte %ld\n",
				i, ev.src_node, bad);
			break;
		}
		expect[ev.src_node % MCP_MAX_NODES]++;
	}
	CHECK(i == n, "received %u of %u packets, in order and intact", i, n);
	ctx_close(&c);
	return fails;
}

/* ---- process crash ---- */

static int cmd_crash(void)
{
	struct myri_info before, after;
	uint8_t out[256];
	int fd = open_dev(), status, i;
	struct ctx c;
	pid_t pid;

	get_info(fd, &before);
	pid = fork();
	if (pid == 0) {
		if (ctx_open(&c, MYRI_CTX_ANY, MYRI_CTX_EXCL))
			_exit(3);
		/* posted sends to ourselves and a peer, a notify armed */
		for (i = 0; i < 4; i++) {
			fill(out, c.lay.node, i, sizeof(out));
			ctx_send(&c, (c.lay.node + i) % c.lay.nodes, c.lay.ctx,
				 out, sizeof(out));
		}
		c.user->want_notify = 1;
		kill(getpid(), SIGKILL);
		_exit(4);
	}
	waitpid(pid, &status, 0);
	CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
	      "child with a busy context killed");
	for (i = 0; i < 50; i++) {
		get_info(fd, &after);
		if (after.ctx_open == before.ctx_open)
			break;
		usleep(100000);
	}
	CHECK(after.ctx_open == before.ctx_open && after.state == MYRI_STATE_UP,
	      "its context is closed (%u open, as before), the card up (state %u)",
	      after.ctx_open, after.state);
	close(fd);
	return fails;
}

/* ---- broken firmware ---- */

static int state_is(const char *prefix, const char *word, uint32_t ms,
		    char *buf, size_t size)
{
	double t0 = now_us();

	for (;;) {
		sysfs_read("state", buf, size);
		if (!strncmp(buf, prefix, strlen(prefix)) &&
		    (!word || strstr(buf, word)))
			return 1;
		if (now_us() - t0 > ms * 1e3)
			return 0;
		usleep(50000);
	}
}

static int cmd_firmware(const char *file, const char *word, uint32_t ms)
{
	volatile uint32_t *old_user;
	struct pollfd pfd;
	char buf[256], fw[128];
	struct ctx c, d;
	int ret;

	sysfs_read("fw", fw, sizeof(fw));
	ret = ctx_open(&c, MYRI_CTX_ANY, MYRI_CTX_EXCL);
	CHECK(!ret, "a context on the running MCP (%s, fw %s)",
	      ret ? strerror(-ret) : "ok", fw);
	if (ret)
		return 1;

	ret = sysfs_write("reset", file);
	CHECK(ret < 0, "loading %s fails (%s)", file,
	      ret < 0 ? strerror(-ret) : "loaded!");
	CHECK(state_is("dead", word, ms, buf, sizeof(buf)),
	      "state: %s (want dead, \"%s\")", buf, word);
	printf("halt_reason: %s\n", sysfs_read("halt_reason", buf, sizeof(buf)));

	/* the old context is gone: errors, and SIGBUS on its SRAM */
	ret = ctx_wait(&c, MYRI_WAIT_RX, 10);
	CHECK(ret == -ENODEV, "WAIT on the lost context: %s",
	      ret < 0 ? strerror(-ret) : "ok");
	pfd = (struct pollfd){ .fd = c.fd, .events = POLLIN | POLLOUT };
	ret = poll(&pfd, 1, 100);
	CHECK(ret == 1 && (pfd.revents & (POLLERR | POLLHUP)),
	      "poll of the lost context: revents 0x%x", pfd.revents);
	old_user = (volatile uint32_t *)c.user;
	fault_catch(SIGBUS);
	if (!sigsetjmp(fault_jmp, 1)) {
		(void)old_user[0];
		CHECK(0, "the lost context's send area is still mapped");
	} else {
		CHECK(1, "SIGBUS on the lost context's send area");
	}
	signal(SIGBUS, SIG_DFL);
	ctx_close(&c);

	ret = ctx_open(&d, MYRI_CTX_ANY, MYRI_CTX_EXCL);
	CHECK(ret == -EIO || ret == -ENETDOWN,
	      "a new context on the dead card: %s",
	      ret < 0 ? strerror(-ret) : "opened!");
	if (!ret)
		ctx_close(&d);

	ret = sysfs_write("reset", "myri/mcp.bin");
	CHECK(!ret, "reset with myri/mcp.bin (%s)", ret ? strerror(-ret) : "ok");
	CHECK(state_is("up", NULL, 2000, buf, sizeof(buf)), "state: %s", buf);
	ret = ctx_open(&d, MYRI_CTX_ANY, MYRI_CTX_EXCL);
	CHECK(!ret, "contexts work again (%s)", ret ? strerror(-ret) : "ok");
	if (!ret)
		ctx_close(&d);
	return fails;
}

static int usage(void)
{
	fprintf(stderr, "usage: %s info|counters|state|bad|excl|crash|dmesg|local N [SIZE]|echo N [MS]|ping PEER N [SIZE]|send DEST N [SIZE [STOPFILE]]|recv N [MS]|firmware FILE WORD [MS]\n",
		program_invocation_short_name);
	return 2;
}

int main(int argc, char **argv)
{
	const char *cmd = argc > 1 ? argv[1] : "";
	char buf[256];

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(cmd, "info"))
		return cmd_info();
	if (!strcmp(cmd, "counters"))
		return cmd_counters();
	if (!strcmp(cmd, "state")) {
		printf("%s\n", sysfs_read("state", buf, sizeof(buf)));
		return 0;
	}
	if (!strcmp(cmd, "bad"))
		return !!cmd_bad();
	if (!strcmp(cmd, "excl"))
		return !!cmd_excl();
	if (!strcmp(cmd, "crash"))
		return !!cmd_crash();
	if (!strcmp(cmd, "dmesg"))
		return !!check_kernel_log();
	if (!strcmp(cmd, "local") && argc >= 3)
		return !!cmd_local(arg_or(argc, argv, 2, 1),
				   arg_or(argc, argv, 3, 0));
	if (!strcmp(cmd, "echo") && argc >= 3)
		return !!cmd_echo(arg_or(argc, argv, 2, 1),
				  arg_or(argc, argv, 3, 30000));
	if (!strcmp(cmd, "ping") && argc >= 4)
		return !!cmd_ping(arg_or(argc, argv, 2, 0),
				  arg_or(argc, argv, 3, 1),
				  arg_or(argc, argv, 4, 64));
	if (!strcmp(cmd, "send") && argc >= 4)
		return !!cmd_send(arg_or(argc, argv, 2, 0),
				  arg_or(argc, argv, 3, 1),
				  arg_or(argc, argv, 4, 0),
				  argc > 5 ? argv[5] : NULL);
	if (!strcmp(cmd, "recv") && argc >= 3)
		return !!cmd_recv(arg_or(argc, argv, 2, 1),
				  arg_or(argc, argv, 3, 10000));
	if (!strcmp(cmd, "firmware") && argc >= 4)
		return !!cmd_firmware(argv[2], argv[3],
				      arg_or(argc, argv, 4, 5000));
	return usage();
}
