/*
 * The Telegraphos REQ queue end to end on the host: the device's receive
 * FSM (qemu-hw/telegraphos-req.c) enqueues into a queue region in a host
 * array; the kernel's overflow handler and RELINK and the user's dequeue
 * are the real code of include/vcluster/tgr_qlogic.h.
 *
 * - Stress: a NIC thread enqueues items sender << 24 | seq from 3
 *   simulated senders into small buffers (64..256 bytes) that overflow
 *   thousands of times; on OVERFLOW it stops and runs the overflow
 *   handler as the driver does (dnp set: deferred, full; no free copy:
 *   full), and resumes only when the handler or a RELINK copied the
 *   items. A consumer thread runs the user-level dequeue with its lock,
 *   dnp/busy handshake and RELINK, with random delays inside and outside
 *   its dnp window; now and then it waits, inside the window, for the
 *   NIC's next overflow (deferred), and outside it for an overflow
 *   without a free copy, so that every path runs whatever the host's
 *   speed. Every item must come out exactly once, in per-sender order,
 *   and the overflow, deferred and no-free-copy paths must all have run.
 * - Direct cases: tail wraps to 3; an overflow leaves size - 3 items,
 *   which the copy moves in order; the deferred and no-free-copy paths
 *   step by step; refused queues (unaligned, wrong size word, bad
 *   indices, bad size) and damaged chains touch nothing.
 * - libtgr: guest-lib/tgr/tgr_queue.c's tgr_q_create() and tgr_deq()
 *   against a simulated driver (its ioctls below), with the region mapped
 *   twice, like the kernel's and the user's views of the same pages.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#define _GNU_SOURCE
#include <glib.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static void test_deq_hook(void);
#define tgr_ql_deq_hook() test_deq_hook()
#include "vcluster/tgr_qlogic.h"
#include "telegraphos-req.h"
#include "tgr_int.h"            /* libtgr's internals, for its queue code */

#define PHYS_BASE 0x40000u  /* where the region "is" for the FSM: 64K-aligned */
#define REGION_MAX (1u << 20)
#define SENDERS 3

/* ---- the queue region in a host array ---- */

typedef struct Region {
    struct tgr_ql_layout lay;
    struct tgr_ql q;
    uint8_t *mem;           /* the kernel's view: REGION_MAX bytes */
    int fd;                 /* the memfd behind it */
    TgrMem tm;              /* the device's view: PHYS_BASE + offset */
    unsigned bad_access;    /* FSM accesses outside the region */
} Region;

static void *region_map(void *opaque, __u32 off, __u32 bytes)
{
    Region *r = opaque;

    if (off > r->lay.region_bytes || bytes > r->lay.region_bytes - off) {
        return NULL;
    }
    return r->mem + off;
}

/* The device's view: PHYS_BASE + offset, aligned words of the region. */
static uint32_t *dev_word(Region *r, uint64_t addr)
{
    if (addr < PHYS_BASE || addr + 4 > PHYS_BASE + r->lay.region_bytes ||
        (addr & 3)) {
        r->bad_access++;
        return NULL;
    }
    return (uint32_t *)(r->mem + (addr - PHYS_BASE));
}

static bool dev_load32(void *opaque, uint64_t addr, uint32_t *val)
{
    uint32_t *w = dev_word(opaque, addr);

    /* acquire: like the device's DMA read after the owner's head store */
    if (w) {
        *val = __atomic_load_n(w, __ATOMIC_ACQUIRE);
    }
    return w != NULL;
}

static bool dev_store32(void *opaque, uint64_t addr, uint32_t val)
{
    uint32_t *w = dev_word(opaque, addr);

    /* release: the device writes the item before the tail (smp_wmb) */
    if (w) {
        __atomic_store_n(w, val, __ATOMIC_RELEASE);
    }
    return w != NULL;
}

static void region_init(Region *r, uint32_t hw_bytes, uint32_t copies)
{
    memset(r, 0, sizeof(*r));
    g_assert_cmpint(tgr_ql_layout_init(&r->lay, hw_bytes, copies), ==, 0);
    g_assert_cmpuint(r->lay.region_bytes, <=, REGION_MAX);
    /* a memfd, so that libtgr can map a second view of it */
    r->fd = memfd_create("tgr-queue", 0);
    g_assert_cmpint(r->fd, >=, 0);
    g_assert_cmpint(ftruncate(r->fd, REGION_MAX), ==, 0);
    r->mem = mmap(NULL, REGION_MAX, PROT_READ | PROT_WRITE, MAP_SHARED,
                  r->fd, 0);
    g_assert_true(r->mem != MAP_FAILED);
    memset(r->mem, 0xa5, REGION_MAX);   /* the kernel must initialise it */
    r->q.lay = &r->lay;
    r->q.map = region_map;
    r->q.opaque = r;
    r->tm.load32 = dev_load32;
    r->tm.store32 = dev_store32;
    r->tm.opaque = r;
    g_assert_cmpint(tgr_ql_init(&r->q), ==, 0);
}

static void region_free(Region *r)
{
    g_assert_cmpuint(r->bad_access, ==, 0);
    munmap(r->mem, REGION_MAX);
    close(r->fd);
}

static uint32_t *words(Region *r, uint32_t off)
{
    return (uint32_t *)(r->mem + off);
}

static struct tgr_ql_ctrl *ctrl(Region *r)
{
    return tgr_ql_ctrl(&r->q);
}

static TgrReqResult enq(Region *r, uint32_t item, int *reason)
{
    return tgr_req_enqueue(&r->tm, PHYS_BASE, r->lay.hw_bytes, item, reason);
}

static void enq_ok(Region *r, uint32_t item)
{
    int reason = -1;

    g_assert_cmpint(enq(r, item, &reason), ==, TGR_REQ_DONE);
    g_assert_cmpint(reason, ==, TGR_ERR_OK);
}

static void deq_expect(Region *r, uint32_t want)
{
    __u32 item = 0;

    g_assert_cmpint(tgr_ql_deq_step(&r->q, &item), ==, 1);
    g_assert_cmphex(item, ==, want);
}

static void deq_empty(Region *r)
{
    __u32 item = 0;

    g_assert_cmpint(tgr_ql_deq_step(&r->q, &item), ==, 0);
}

/* ---- direct cases ---- */

static void test_layout(void)
{
    struct tgr_ql_layout l;

    g_assert_cmpint(tgr_ql_layout_init(&l, 256, 4), ==, 0);
    g_assert_cmpuint(l.ctrl_off, ==, 4096);
    g_assert_cmpuint(l.pool_off, ==, 8192);
    g_assert_cmpuint(l.copy_bytes, ==, 512);
    g_assert_cmpuint(l.region_bytes, ==, 12288);
    g_assert_cmpint(tgr_ql_layout_init(&l, 65536, 2), ==, 0);
    g_assert_cmpuint(l.ctrl_off, ==, 65536);
    g_assert_cmpuint(l.region_bytes, ==, 65536 + 4096 + 2 * 131072);
    g_assert_cmpint(tgr_ql_layout_init(&l, 32, 4), ==, -EINVAL);
    g_assert_cmpint(tgr_ql_layout_init(&l, 96, 4), ==, -EINVAL);
    g_assert_cmpint(tgr_ql_layout_init(&l, 131072, 4), ==, -EINVAL);
    g_assert_cmpint(tgr_ql_layout_init(&l, 256, 0), ==, -EINVAL);
    g_assert_cmpint(tgr_ql_layout_init(&l, 256, TGR_QL_POOL_MAX + 1), ==,
                    -EINVAL);
}

static void test_init_and_ctrl_layout(void)
{
    Region r;
    struct tgr_ql_layout l2;
    uint32_t *a;

    region_init(&r, 128, 3);
    a = words(&r, 0);
    g_assert_cmphex(a[0], ==, 32u << 16 | 3);
    g_assert_cmphex(a[1], ==, 32u << 16 | 3);
    g_assert_cmphex(a[2], ==, 0);
    for (uint32_t i = 0; i < 3; i++) {
        g_assert_cmphex(words(&r, tgr_ql_copy_off(&r.q, i))[0], ==, 0);
    }
    g_assert_cmpint(tgr_ql_layout_from_ctrl(&l2, ctrl(&r)), ==, 0);
    g_assert_cmpmem(&l2, sizeof(l2), &r.lay, sizeof(r.lay));
    ctrl(&r)->pool_off += 4;
    g_assert_cmpint(tgr_ql_layout_from_ctrl(&l2, ctrl(&r)), ==, -EINVAL);
    region_free(&r);
}

static void test_tail_wraps_to_3(void)
{
    Region r;
    uint32_t *a;

    region_init(&r, 64, 2);             /* 16 words: items at 3..15 */
    a = words(&r, 0);
    a[0] = 16u << 16 | 13;
    a[1] = 16u << 16 | 13;
    enq_ok(&r, 0x100);                  /* at 13 */
    enq_ok(&r, 0x101);                  /* at 14 */
    enq_ok(&r, 0x102);                  /* at 15, tail wraps */
    g_assert_cmphex(a[0], ==, 16u << 16 | 3);
    g_assert_cmphex(a[15], ==, 0x102);
    enq_ok(&r, 0x103);                  /* at 3 */
    g_assert_cmphex(a[3], ==, 0x103);
    g_assert_cmphex(a[0], ==, 16u << 16 | 4);
    for (uint32_t i = 0; i < 4; i++) {
        deq_expect(&r, 0x100 + i);
    }
    g_assert_cmphex(a[1], ==, 16u << 16 | 4);   /* head wrapped too */
    deq_empty(&r);
    region_free(&r);
}

/* Fill a fresh 16-word buffer whose head and tail start at `start`. */
static void overflow_from(Region *r, uint32_t start, uint32_t first_item)
{
    uint32_t *a = words(r, 0);
    int reason = -1;

    a[0] = 16u << 16 | start;
    a[1] = 16u << 16 | start;
    for (uint32_t i = 0; i < 12; i++) {
        enq_ok(r, first_item + i);
    }
    g_assert_cmpint(enq(r, first_item + 12, &reason), ==, TGR_REQ_OVERFLOW);
    /* the 13th item is written, the tail is not: it points at that item */
    g_assert_cmphex(a[0] & 0xffff, ==, start == 3 ? 15 : start - 1);
    g_assert_cmphex(a[a[0] & 0xffff], ==, first_item + 12);
    g_assert_cmphex(a[1], ==, 16u << 16 | start);
}

static void test_overflow_leaves_size_minus_3(void)
{
    static const uint32_t starts[] = { 3, 9, 15 };

    for (size_t k = 0; k < G_N_ELEMENTS(starts); k++) {
        Region r;
        uint32_t *a, *c;

        region_init(&r, 64, 2);
        a = words(&r, 0);
        overflow_from(&r, starts[k], 0x500);
        g_assert_cmpint(tgr_ql_handle_overflow(&r.q), ==, 0);
        g_assert_cmphex(a[0], ==, 16u << 16 | 3);
        g_assert_cmphex(a[1], ==, 16u << 16 | 3);
        g_assert_cmphex(a[2], ==, tgr_ql_copy_off(&r.q, 0));
        c = words(&r, a[2]);
        g_assert_cmphex(c[0], ==, 32u << 16 | (3 + 13));
        g_assert_cmphex(c[1], ==, 32u << 16 | 3);
        g_assert_cmpuint(ctrl(&r)->ovf_count, ==, 1);
        g_assert_cmpuint(ctrl(&r)->full, ==, 0);

        /* newer items go to the first buffer; the copy drains first */
        enq_ok(&r, 0x600);
        for (uint32_t i = 0; i < 13; i++) {
            deq_expect(&r, 0x500 + i);
        }
        deq_expect(&r, 0x600);
        g_assert_cmphex(a[2], ==, 0);               /* the copy unlinked */
        g_assert_cmphex(c[0], ==, 0);               /* and free */
        deq_empty(&r);
        region_free(&r);
    }
}

/* The chain is first -> newest copy -> ... -> oldest. */
static void test_two_overflows_chain_order(void)
{
    Region r;
    uint32_t *a;

    region_init(&r, 64, 3);
    a = words(&r, 0);
    overflow_from(&r, 3, 0x1000);
    g_assert_cmpint(tgr_ql_handle_overflow(&r.q), ==, 0);
    overflow_from(&r, 3, 0x2000);
    g_assert_cmpint(tgr_ql_handle_overflow(&r.q), ==, 0);
    g_assert_cmphex(a[2], ==, tgr_ql_copy_off(&r.q, 1));
    g_assert_cmphex(words(&r, a[2])[2], ==, tgr_ql_copy_off(&r.q, 0));
    enq_ok(&r, 0x3000);
    for (uint32_t i = 0; i < 13; i++) {
        deq_expect(&r, 0x1000 + i);
    }
    for (uint32_t i = 0; i < 13; i++) {
        deq_expect(&r, 0x2000 + i);
    }
    deq_expect(&r, 0x3000);
    deq_empty(&r);
    region_free(&r);
}

static void test_deferred_then_relink(void)
{
    Region r;
    uint8_t *before = g_malloc(65536);
    uint32_t *a;
    __u32 moved = 0;

    region_init(&r, 64, 2);
    a = words(&r, 0);
    overflow_from(&r, 3, 0x700);
    ctrl(&r)->dnp = 1;                  /* a dequeue is running */
    memcpy(before, r.mem, r.lay.pool_off);
    g_assert_cmpint(tgr_ql_handle_overflow(&r.q), ==, TGR_QL_DEFERRED);
    g_assert_cmpuint(ctrl(&r)->full, ==, 1);
    g_assert_cmpuint(ctrl(&r)->busy, ==, 0);
    g_assert_cmpuint(ctrl(&r)->deferred, ==, 1);
    g_assert_cmpmem(r.mem, 64, before, 64);     /* nothing copied */

    /* that dequeue takes two items: they leave the first buffer */
    deq_expect(&r, 0x700);
    deq_expect(&r, 0x701);
    g_assert_cmpint(tgr_ql_relink(&r.q, &moved), ==, -EBUSY);
    ctrl(&r)->dnp = 0;
    g_assert_cmpint(tgr_ql_relink(&r.q, &moved), ==, 0);
    g_assert_cmpuint(moved, ==, 11);
    g_assert_cmpuint(ctrl(&r)->full, ==, 0);
    g_assert_cmpuint(ctrl(&r)->relinks, ==, 1);
    g_assert_cmphex(a[0], ==, 16u << 16 | 3);
    for (uint32_t i = 2; i < 13; i++) {
        deq_expect(&r, 0x700 + i);
    }
    deq_empty(&r);
    g_free(before);
    region_free(&r);
}

/* A dequeue that emptied the first buffer down to the tail item. */
static void test_relink_after_draining_to_tail(void)
{
    Region r;
    __u32 moved = 0;

    region_init(&r, 64, 1);
    overflow_from(&r, 7, 0x800);
    ctrl(&r)->dnp = 1;
    g_assert_cmpint(tgr_ql_handle_overflow(&r.q), ==, TGR_QL_DEFERRED);
    for (uint32_t i = 0; i < 12; i++) {
        deq_expect(&r, 0x800 + i);
    }
    deq_empty(&r);                      /* the last item is hidden ... */
    ctrl(&r)->dnp = 0;
    g_assert_cmpint(tgr_ql_relink(&r.q, &moved), ==, 0);
    g_assert_cmpuint(moved, ==, 1);
    deq_expect(&r, 0x800 + 12);         /* ... until RELINK copies it */
    deq_empty(&r);
    region_free(&r);
}

static void test_no_free_copy(void)
{
    Region r;
    uint8_t *before = g_malloc(65536);
    __u32 moved = 0;

    region_init(&r, 64, 1);
    overflow_from(&r, 3, 0x900);
    g_assert_cmpint(tgr_ql_handle_overflow(&r.q), ==, 0);
    overflow_from(&r, 3, 0xa00);
    memcpy(before, r.mem, r.lay.region_bytes);
    g_assert_cmpint(tgr_ql_handle_overflow(&r.q), ==, -ENOSPC);
    g_assert_cmpuint(ctrl(&r)->full, ==, 1);
    g_assert_cmpuint(ctrl(&r)->nofree, ==, 1);
    g_assert_cmpmem(r.mem, r.lay.ctrl_off, before, r.lay.ctrl_off);
    g_assert_cmpmem(r.mem + r.lay.pool_off, r.lay.copy_bytes,
                    before + r.lay.pool_off, r.lay.copy_bytes);
    g_assert_cmpint(tgr_ql_relink(&r.q, &moved), ==, -ENOSPC);

    /* draining the copy frees it; RELINK then succeeds */
    for (uint32_t i = 0; i < 13; i++) {
        deq_expect(&r, 0x900 + i);
    }
    deq_expect(&r, 0xa00);      /* the first buffer, up to its tail */
    g_assert_cmphex(words(&r, r.lay.pool_off)[0], ==, 0);
    g_assert_cmpint(tgr_ql_relink(&r.q, &moved), ==, 0);
    g_assert_cmpuint(moved, ==, 12);
    g_assert_cmpuint(ctrl(&r)->full, ==, 0);
    for (uint32_t i = 1; i < 13; i++) {
        deq_expect(&r, 0xa00 + i);
    }
    deq_empty(&r);
    g_free(before);
    region_free(&r);
}

/* The FSM refuses a damaged queue before it writes anything. */
static void test_refused_queues_touch_nothing(void)
{
    static const struct {
        const char *what;
        uint32_t bytes, w0, w1, base_add;
        int reason;
    } cases[] = {
#define W(size, index) ((uint32_t)(size) << 16 | (index))
        { "unaligned buffer", 64, W(16, 3), W(16, 3), 32, TGR_ERR_BADQUEUE },
        { "size not a power of 2", 96, W(24, 3), W(24, 3), 0, TGR_ERR_BADSIZE },
        { "size below 64 bytes", 32, W(8, 3), W(8, 3), 0, TGR_ERR_BADSIZE },
        { "size above 64 KiB", 131072, 0, 0, 0, TGR_ERR_BADSIZE },
        { "size word (tail)", 64, W(32, 3), W(16, 3), 0, TGR_ERR_BADSIZE },
        { "size word (head)", 64, W(16, 3), W(8, 3), 0, TGR_ERR_BADSIZE },
        { "tail below 3", 64, W(16, 2), W(16, 3), 0, TGR_ERR_BADQUEUE },
        { "tail beyond", 64, W(16, 16), W(16, 3), 0, TGR_ERR_BADQUEUE },
        { "head below 3", 64, W(16, 3), W(16, 0), 0, TGR_ERR_BADQUEUE },
        { "head beyond", 64, W(16, 5), W(16, 40), 0, TGR_ERR_BADQUEUE },
#undef W
    };

    for (size_t k = 0; k < G_N_ELEMENTS(cases); k++) {
        Region r;
        uint8_t *before;
        int reason = -1;

        region_init(&r, 64, 1);
        words(&r, cases[k].base_add)[0] = cases[k].w0;
        words(&r, cases[k].base_add)[1] = cases[k].w1;
        before = g_memdup2(r.mem, r.lay.region_bytes);
        g_assert_cmpint(tgr_req_enqueue(&r.tm, PHYS_BASE + cases[k].base_add,
                                        cases[k].bytes, 0xdead, &reason),
                        ==, TGR_REQ_REFUSED);
        if (reason != cases[k].reason) {
            g_error("%s: reason %d, want %d", cases[k].what, reason,
                    cases[k].reason);
        }
        g_assert_cmpmem(r.mem, r.lay.region_bytes, before, r.lay.region_bytes);
        g_free(before);
        region_free(&r);
    }
}

/* Damaged by its owner: the kernel side refuses, then empties it. */
static void test_damaged_queue(void)
{
    Region r;
    uint8_t *before;
    uint32_t *a;
    __u32 item;

    /* `next` outside the pool: the dequeue refuses and changes nothing */
    region_init(&r, 64, 2);
    a = words(&r, 0);
    enq_ok(&r, 1);
    a[2] = r.lay.pool_off + 4;
    before = g_memdup2(r.mem, r.lay.region_bytes);
    g_assert_cmpint(tgr_ql_deq_step(&r.q, &item), ==, -EIO);
    g_assert_cmpmem(r.mem, r.lay.region_bytes, before, r.lay.region_bytes);
    g_free(before);

    /* a cycle between two copies */
    a[2] = tgr_ql_copy_off(&r.q, 0);
    words(&r, a[2])[2] = tgr_ql_copy_off(&r.q, 1);
    words(&r, tgr_ql_copy_off(&r.q, 1))[2] = tgr_ql_copy_off(&r.q, 0);
    g_assert_cmpint(tgr_ql_deq_step(&r.q, &item), ==, -EIO);

    /* an overflow into a damaged queue: emptied, counted, resumable */
    overflow_from(&r, 3, 0x10);
    a[1] = 7u << 16 | 3;
    g_assert_cmpint(tgr_ql_handle_overflow(&r.q), ==, -EIO);
    g_assert_cmpuint(ctrl(&r)->lost, ==, 1);
    g_assert_cmphex(a[0], ==, 16u << 16 | 3);
    g_assert_cmphex(a[1], ==, 16u << 16 | 3);
    g_assert_cmphex(a[2], ==, 0);
    deq_empty(&r);
    enq_ok(&r, 0x42);
    deq_expect(&r, 0x42);

    /* an accessor that refuses the region: no crash, an error */
    r.lay.region_bytes = 64;
    g_assert_cmpint(tgr_ql_handle_overflow(&r.q), ==, -EFAULT);
    r.lay.region_bytes = 0;
    region_free(&r);
}

/* ---- a simulated tgr.ko for libtgr's queue code ---- */

#define LIB_QID 7
#define LIB_SEGID 70
#define LIB_COOKIE TGR_MMAP_COOKIE(TGR_MMAP_QUEUE_KIND, 0, LIB_QID)

typedef struct Stress Stress;
static int stress_relink(void *opaque);
static Region *lib_region;      /* the queue REQ_CREATE makes */
static Stress *lib_stress;      /* its RELINK goes there, if set */
static bool lib_lie;            /* REQ_CREATE reports a wrong layout */
static bool lib_pending;        /* an overflow waits for RELINK */
static unsigned lib_creates, lib_destroys, lib_relinks;

int tgr_ioctl(const tgr_t *t, unsigned long req, void *arg)
{
    struct tgr_req_create *rc = arg;
    struct tgr_req_relink *rl = arg;
    struct tgr_id *id = arg;
    struct tgr_ql_layout l;

    switch (req) {
    case TGR_IOC_REQ_CREATE:
        if (tgr_ql_layout_init(&l, rc->bytes,
                               rc->copies ? rc->copies : 4)) {
            return -EINVAL;
        }
        region_init(lib_region, rc->bytes, l.pool_count);
        lib_creates++;
        rc->qid = LIB_QID;
        rc->segid = LIB_SEGID;
        rc->cookie = LIB_COOKIE;
        rc->region_bytes = l.region_bytes;
        rc->hw_off = 0;
        rc->ctrl_off = l.ctrl_off;
        rc->pool_off = l.pool_off + (lib_lie ? 4096 : 0);
        rc->copy_bytes = l.copy_bytes;
        return 0;
    case TGR_IOC_REQ_RELINK:
        g_assert_cmpuint(rl->qid, ==, LIB_QID);
        lib_relinks++;
        if (lib_stress) {
            return stress_relink(lib_stress);
        }
        if (lib_pending) {      /* what tgr.ko does */
            __u32 moved;
            int ret = tgr_ql_relink(&lib_region->q, &moved);

            lib_pending = ret != 0 && ret != -EIO;
            return ret;
        }
        return 0;
    case TGR_IOC_REQ_DESTROY:
        g_assert_cmpuint(id->id, ==, LIB_QID);
        lib_destroys++;
        return 0;
    }
    return -ENOTTY;
}

/* The user's view: a second mapping of the kernel's pages. */
void *tgr_map(const tgr_t *t, uint64_t cookie, size_t len, int prot,
              int *err)
{
    void *p;

    if (cookie != LIB_COOKIE || len != lib_region->lay.region_bytes) {
        *err = -EINVAL;
        return NULL;
    }
    p = mmap(NULL, len, prot, MAP_SHARED, lib_region->fd, 0);
    g_assert_true(p != MAP_FAILED);
    return p;
}

/* No handle list: the tests release what they make. */
void tgr_obj_add(tgr_t *t, struct tgr_obj *o,
                 void (*release)(struct tgr_obj *))
{
    o->release = release;
}

void tgr_obj_del(tgr_t *t, struct tgr_obj *o) {}

static void test_libtgr_queue(void)
{
    tgr_t *t = g_new0(tgr_t, 1);
    Region r;
    tgr_q_t *q = NULL;
    struct tgr_q_stats st;
    uint32_t item;

    lib_region = &r;
    lib_stress = NULL;
    /* bad sizes never reach the driver */
    g_assert_cmpint(tgr_q_create(t, 100, 0, &q), ==, -EINVAL);
    g_assert_cmpint(tgr_q_create(t, 131072, 0, &q), ==, -EINVAL);
    g_assert_cmpint(tgr_q_create(t, 256, TGR_REQ_MAX_COPIES + 1, &q), ==,
                    -EINVAL);
    g_assert_cmpuint(lib_creates, ==, 0);
    /* a driver whose layout differs from tgr_qlogic.h's is refused */
    lib_lie = true;
    g_assert_cmpint(tgr_q_create(t, 256, 2, &q), ==, -EPROTO);
    g_assert_null(q);
    g_assert_cmpuint(lib_destroys, ==, 1);
    lib_lie = false;
    region_free(&r);

    g_assert_cmpint(tgr_q_create(t, 64, 2, &q), ==, 0);
    g_assert_cmpuint(tgr_q_segid(q), ==, LIB_SEGID);
    g_assert_cmpint(tgr_deq(q, &item), ==, 0);
    enq_ok(&r, 0x11);
    enq_ok(&r, 0x12);
    g_assert_cmpint(tgr_deq(q, &item), ==, 1);
    g_assert_cmphex(item, ==, 0x11);
    /* an overflow the kernel deferred: tgr_deq() must RELINK */
    overflow_from(&r, 3, 0x300);
    ctrl(&r)->dnp = 1;
    g_assert_cmpint(tgr_ql_handle_overflow(&r.q), ==, TGR_QL_DEFERRED);
    ctrl(&r)->dnp = 0;
    lib_pending = true;
    lib_relinks = 0;
    for (uint32_t i = 0; i < 13; i++) {
        g_assert_cmpint(tgr_deq(q, &item), ==, 1);
        g_assert_cmphex(item, ==, 0x300 + i);
        if (i == 0) {
            /* the first deq saw `full` and ran RELINK, lock held */
            g_assert_cmpuint(lib_relinks, ==, 1);
            g_assert_false(lib_pending);
        }
    }
    tgr_q_stats(q, &st);
    g_assert_cmpuint(st.deferred, ==, 1);
    g_assert_cmpuint(st.relinks, ==, 1);
    g_assert_cmpuint(st.full, ==, 0);
    g_assert_cmpuint(lib_relinks, ==, 1);
    g_assert_cmpint(tgr_deq(q, &item), ==, 0);
    g_assert_cmpuint(ctrl(&r)->lock, ==, 0);
    tgr_q_destroy(q);
    g_assert_cmpuint(lib_destroys, ==, 2);
    region_free(&r);
    g_free(t);
}

/* ---- the stress run ---- */

struct Stress {
    Region r;
    uint32_t per_sender;
    pthread_mutex_t kmutex;     /* the driver's per-queue mutex */
    bool pending;               /* an overflow waits for RELINK (atomic) */
    int stopped;                /* the NIC holds requests */
    int done;                   /* NIC: all items enqueued */
    int failed;                 /* a thread found an error */
    char why[256];
    unsigned overflows, deferred, nofree;       /* NIC's; read atomically */
    unsigned relinks, relink_nospc, empties;
    uint32_t seed;
    tgr_q_t *libq;              /* dequeue through libtgr's tgr_deq() */
};

static __thread uint32_t hook_rng;     /* consumer's delays */
static __thread bool hook_on;
static __thread Stress *hook_stress;   /* the consumer's run */

static uint32_t rng_next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static void spin(uint32_t n)
{
    for (volatile uint32_t i = 0; i < n; i++) {
    }
}

static void stress_fail(Stress *s, const char *msg)
{
    if (!__atomic_exchange_n(&s->failed, 1, __ATOMIC_SEQ_CST)) {
        g_strlcpy(s->why, msg, sizeof(s->why));
    }
}

/*
 * The consumer waits until the NIC counted one more in *counter, or can
 * count no more: it is done, or it waits for a RELINK.  Waiting, not a
 * sleep: the path runs however fast either thread is.
 */
static void wait_nic(Stress *s, const unsigned *counter, const char *what)
{
    unsigned was = __atomic_load_n(counter, __ATOMIC_ACQUIRE);
    gint64 end = g_get_monotonic_time() + 20 * G_USEC_PER_SEC;
    char msg[100];

    while (__atomic_load_n(counter, __ATOMIC_ACQUIRE) == was &&
           !__atomic_load_n(&s->done, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE) &&
           !__atomic_load_n(&s->pending, __ATOMIC_ACQUIRE)) {
        if (g_get_monotonic_time() > end) {
            snprintf(msg, sizeof(msg), "no %s from the NIC for 20 s", what);
            stress_fail(s, msg);
            return;
        }
        sched_yield();
    }
}

/*
 * Inside the dnp window: short delays, and now and then stay until the
 * NIC's next overflow, which the handler must defer.
 */
static void test_deq_hook(void)
{
    uint32_t x;

    if (!hook_on) {
        return;
    }
    x = rng_next(&hook_rng) % 64;
    if (x == 0) {
        wait_nic(hook_stress, &hook_stress->deferred, "deferred overflow");
    } else if (x < 8) {
        spin(2000);
    }
}

static int stress_relink(void *opaque)
{
    Stress *s = opaque;
    __u32 moved;
    int ret = 0;

    pthread_mutex_lock(&s->kmutex);
    if (__atomic_load_n(&s->pending, __ATOMIC_ACQUIRE)) {
        ret = tgr_ql_relink(&s->r.q, &moved);
        if (ret == 0 || ret == -EIO) {
            __atomic_store_n(&s->pending, false, __ATOMIC_RELEASE);
            s->relinks++;
            __atomic_store_n(&s->stopped, 0, __ATOMIC_RELEASE);
        } else if (ret == -ENOSPC) {
            s->relink_nospc++;
        }
    }
    pthread_mutex_unlock(&s->kmutex);
    if (ret == -EIO || ret == -EBUSY) {
        stress_fail(s, ret == -EIO ? "relink: queue damaged" :
                    "relink: dnp set under the lock");
    }
    return ret;
}

static void *nic_thread(void *opaque)
{
    Stress *s = opaque;
    uint32_t seq[SENDERS] = { 0 };
    uint32_t rng = s->seed * 2654435761u | 1;
    uint32_t left = SENDERS * s->per_sender;

    while (left && !__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE)) {
        uint32_t who = rng_next(&rng) % SENDERS, item;
        TgrReqResult res;
        int reason, h;

        if (__atomic_load_n(&s->stopped, __ATOMIC_ACQUIRE)) {
            sched_yield();
            continue;
        }
        while (seq[who] == s->per_sender) {
            who = (who + 1) % SENDERS;
        }
        item = who << 24 | seq[who];
        res = enq(&s->r, item, &reason);
        if (res == TGR_REQ_REFUSED) {
            stress_fail(s, "the FSM refused the queue");
            break;
        }
        seq[who]++;
        left--;
        if (res == TGR_REQ_DONE) {
            if ((rng_next(&rng) & 255) == 0) {
                usleep(50);        /* now and then let the consumer catch up */
            }
            continue;
        }
        /* OVERFLOW: stop accepting, interrupt the host */
        __atomic_add_fetch(&s->overflows, 1, __ATOMIC_RELEASE);
        __atomic_store_n(&s->stopped, 1, __ATOMIC_RELEASE);
        pthread_mutex_lock(&s->kmutex);
        h = tgr_ql_handle_overflow(&s->r.q);
        if (h == 0) {
            __atomic_store_n(&s->stopped, 0, __ATOMIC_RELEASE);
        } else if (h == TGR_QL_DEFERRED || h == -ENOSPC) {
            __atomic_store_n(&s->pending, true, __ATOMIC_RELEASE);
            __atomic_add_fetch(h == TGR_QL_DEFERRED ? &s->deferred :
                               &s->nofree, 1, __ATOMIC_RELEASE);
        } else {
            stress_fail(s, "overflow handler: queue damaged");
        }
        pthread_mutex_unlock(&s->kmutex);
    }
    __atomic_store_n(&s->done, 1, __ATOMIC_RELEASE);
    return NULL;
}

static void *consumer_thread(void *opaque)
{
    Stress *s = opaque;
    uint32_t next[SENDERS] = { 0 };
    uint32_t got = 0, total = SENDERS * s->per_sender;
    gint64 last_progress = g_get_monotonic_time();
    char msg[200];

    hook_rng = s->seed * 747796405u | 1;
    hook_stress = s;
    hook_on = true;
    while (got < total && !__atomic_load_n(&s->failed, __ATOMIC_ACQUIRE)) {
        __u32 item = 0;
        int ret = s->libq ? tgr_deq(s->libq, &item) :
                  tgr_ql_user_deq(&s->r.q, 1, &item, stress_relink, s);
        uint32_t who, seq;

        if (ret < 0) {
            snprintf(msg, sizeof(msg), "deq: error %d after %u items", ret,
                     got);
            stress_fail(s, msg);
            break;
        }
        if (ret == 0) {
            s->empties++;
            if (g_get_monotonic_time() - last_progress > 20 * G_USEC_PER_SEC) {
                snprintf(msg, sizeof(msg),
                         "no item for 20 s after %u of %u (stopped %d)", got,
                         total, s->stopped);
                stress_fail(s, msg);
                break;
            }
            sched_yield();
            continue;
        }
        last_progress = g_get_monotonic_time();
        who = item >> 24;
        seq = item & 0xffffff;
        if (who >= SENDERS || seq != next[who]) {
            snprintf(msg, sizeof(msg),
                     "item %#x: sender %u expected seq %u (item %u of %u)",
                     item, who, who < SENDERS ? next[who] : 0, got, total);
            stress_fail(s, msg);
            break;
        }
        next[who]++;
        got++;
        if ((rng_next(&hook_rng) & 15) == 0) {
            spin(rng_next(&hook_rng) % 20000);
        }
        /* now and then stay out until every copy is used */
        if ((rng_next(&hook_rng) & 63) == 0) {
            wait_nic(s, &s->nofree, "overflow without a free copy");
        }
    }
    hook_on = false;
    return NULL;
}

static void stress_run(uint32_t hw_bytes, uint32_t copies,
                       uint32_t per_sender, uint32_t seed, bool lib)
{
    Stress *s = g_new0(Stress, 1);
    tgr_t *t = g_new0(tgr_t, 1);
    pthread_t nic, consumer;
    __u32 item;

    if (lib) {
        lib_region = &s->r;
        lib_stress = s;
        g_assert_cmpint(tgr_q_create(t, hw_bytes, copies, &s->libq), ==, 0);
    } else {
        region_init(&s->r, hw_bytes, copies);
    }
    s->per_sender = per_sender;
    s->seed = seed;
    pthread_mutex_init(&s->kmutex, NULL);
    g_assert_cmpint(pthread_create(&consumer, NULL, consumer_thread, s), ==, 0);
    g_assert_cmpint(pthread_create(&nic, NULL, nic_thread, s), ==, 0);
    pthread_join(nic, NULL);
    pthread_join(consumer, NULL);
    if (s->failed) {
        g_error("%u-byte buffers, %u copies, seed %u: %s", hw_bytes, copies,
                seed, s->why);
    }
    g_test_message("%u-byte buffers, %u copies: %u items, %u overflows "
                   "(%u deferred by dnp, %u without a free copy), %u RELINKs "
                   "(%u found no copy), %u empty dequeues",
                   hw_bytes, copies, SENDERS * per_sender, s->overflows,
                   s->deferred, s->nofree, s->relinks, s->relink_nospc,
                   s->empties);
    /* everything out, nothing left, the paths all taken */
    g_assert_cmpint(tgr_ql_deq_step(&s->r.q, &item), ==, 0);
    g_assert_cmphex(words(&s->r, 0)[2], ==, 0);
    g_assert_cmpuint(s->overflows, >=, 1000);
    g_assert_cmpuint(s->nofree, >, 0);
    if (!lib) {     /* libtgr's copy has no delay hook in its dnp window */
        g_assert_cmpuint(s->deferred, >, 0);
    }
    g_assert_cmpuint(s->relinks, ==, s->deferred + s->nofree);
    g_assert_cmpuint(ctrl(&s->r)->ovf_count, ==,
                     s->overflows - s->deferred - s->nofree + s->relinks);
    g_assert_cmpuint(ctrl(&s->r)->deferred, ==, s->deferred);
    g_assert_cmpuint(ctrl(&s->r)->lost, ==, 0);
    g_assert_cmpuint(ctrl(&s->r)->full, ==, 0);
    g_assert_cmpuint(ctrl(&s->r)->dnp, ==, 0);
    g_assert_cmpuint(ctrl(&s->r)->lock, ==, 0);
    pthread_mutex_destroy(&s->kmutex);
    if (s->libq) {
        tgr_q_destroy(s->libq);
        lib_stress = NULL;
    }
    region_free(&s->r);
    g_free(t);
    g_free(s);
}

typedef struct StressCase {
    const char *path;
    uint32_t hw_bytes, copies, per_sender, seed;
    bool lib;
} StressCase;

static const StressCase stress_cases[] = {
    { "/tgr-queue/stress-64", 64, 3, 20000, 1, false },
    { "/tgr-queue/stress-128", 128, 4, 20000, 2, false },
    { "/tgr-queue/stress-256", 256, 2, 30000, 3, false },
    { "/tgr-queue/stress-libtgr", 128, 3, 20000, 4, true },
};

static void test_stress(gconstpointer data)
{
    const StressCase *c = data;

    stress_run(c->hw_bytes, c->copies, c->per_sender, c->seed, c->lib);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/tgr-queue/layout", test_layout);
    g_test_add_func("/tgr-queue/init", test_init_and_ctrl_layout);
    g_test_add_func("/tgr-queue/tail-wraps-to-3", test_tail_wraps_to_3);
    g_test_add_func("/tgr-queue/overflow-leaves-size-3",
                    test_overflow_leaves_size_minus_3);
    g_test_add_func("/tgr-queue/chain-order", test_two_overflows_chain_order);
    g_test_add_func("/tgr-queue/deferred-relink", test_deferred_then_relink);
    g_test_add_func("/tgr-queue/relink-tail-item",
                    test_relink_after_draining_to_tail);
    g_test_add_func("/tgr-queue/no-free-copy", test_no_free_copy);
    g_test_add_func("/tgr-queue/refused-touch-nothing",
                    test_refused_queues_touch_nothing);
    g_test_add_func("/tgr-queue/damaged", test_damaged_queue);
    g_test_add_func("/tgr-queue/libtgr", test_libtgr_queue);
    for (size_t i = 0; i < G_N_ELEMENTS(stress_cases); i++) {
        g_test_add_data_func(stress_cases[i].path, &stress_cases[i],
                             test_stress);
    }
    return g_test_run();
}
