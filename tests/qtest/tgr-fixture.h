/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The shared fixture of the qtest device tests for -device telegraphos
 * (docs/hw/telegraphos.md): test-telegraphos.c and test-telegraphos-target.c.
 * The test plays fabricd (and every peer node) on the card's chardev and
 * writes the driver's tables into guest RAM by qtest.  Without a vCPU,
 * remote reads are split-phase, and the virtual clock moves only by
 * clock_step.
 *
 * Header-only: every helper is static inline, so a program that does not
 * use one gets no warning.
 */
#ifndef TGR_FIXTURE_H
#define TGR_FIXTURE_H

#include "qtest-client.h"
#include "proto/telegraphos.h"

#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "vcluster/hw/tgr_regs.h"

#define K FABRIC_KIND_TELEGRAPHOS
#define NODE 1                  /* the card */
#define PEER 2                  /* a node played by the test */
#define NODES 4
#define EPOCH 1                 /* the peers' boot count */

#define BAR0 ((uint64_t)0xe1000000)
#define BAR2 ((uint64_t)0xe4000000)
#define BAR4 ((uint64_t)0x80000000)
#define REG(off) (BAR0 + (off))
#define CNT(i) REG(TGR_REG_COUNTERS + 8 * (i))
#define PTE(page, w) REG(TGR_PTE_TABLE + TGR_PTE_SIZE * (page) + 4 * (w))
#define WIN(page, off) (BAR2 + (uint64_t)(page) * TGR_PAGE_SIZE + (off))
#define SHADOW(op, page, off) (BAR4 + TGR_SHADOW_OFF(op, page, off))

/* Guest RAM (128 MiB) as the driver would lay it out. */
#define EXP_TABLE ((uint64_t)0x100000)
#define EXP_N 16
#define EVQ ((uint64_t)0x110000)
#define EVQ_N 64
#define CTX_STATUS ((uint64_t)0x120000)
#define ARG ((uint64_t)0x130000)     /* a local buffer for fetch / DMA */
#define PAGE(i) ((uint64_t)0x200000 + (uint64_t)(i) * TGR_PAGE_SIZE)
#define QBUF ((uint64_t)0x300000)    /* 64 KiB aligned */

#define RW (TGR_R_READ | TGR_R_WRITE)
/* A posted request's tag names its context and window page (for NACKs). */
#define POSTED_TAG(ctx, page) (0x80000000u | (ctx) << 16 | (page))

typedef struct {
    QTest *qt;
    FakeFabric *ff;
    char *dir;
    int slot;
    uint32_t seq[NODES];        /* next seq of each peer's frames to us */
    uint32_t mseq[NODES];       /* and of its multicast copies */
    uint32_t ev_cons;
    GArray *events;             /* read from the ring, not yet checked */
} Card;

typedef struct {
    uint8_t type, reason, ctx, op;
    uint16_t node, cpu;
    uint32_t page, off;
} Event;

/* ---- plumbing ---------------------------------------------------------- */

static inline uint32_t rd(Card *c, uint64_t addr)
{
    return qt_readl(c->qt, addr);
}

static inline void wr(Card *c, uint64_t addr, uint32_t v)
{
    qt_writel(c->qt, addr, v);
}

static inline uint64_t rdq(Card *c, uint64_t addr)
{
    g_autofree char *r = qt_cmd(c->qt, "readq 0x%" PRIx64, addr);
    return g_ascii_strtoull(r + 3, NULL, 0);
}

static inline void wrq(Card *c, uint64_t addr, uint64_t v)
{
    g_free(qt_cmd(c->qt, "writeq 0x%" PRIx64 " 0x%" PRIx64, addr, v));
}

static inline void clock_step(Card *c, int64_t ns)
{
    g_free(qt_cmd(c->qt, "clock_step %" PRId64, ns));
}

static inline uint32_t counter(Card *c, int idx)
{
    return rd(c, CNT(idx));
}

static inline void wait_counter(Card *c, int idx, uint32_t want)
{
    if (!qt_wait_reg(c->qt, CNT(idx), ~0u, want)) {
        g_error("counter %d is %u, want %u", idx, counter(c, idx), want);
    }
}

static inline void put_export(Card *c, uint32_t eidx, uint64_t page,
                              uint32_t flags, uint16_t gen, uint8_t ctx,
                              uint8_t qlog2)
{
    uint64_t at = EXP_TABLE + TGR_EXP_ENTRY * eidx;

    wrq(c, at, page | flags);
    wr(c, at + 8, gen | (uint32_t)ctx << 16 | (uint32_t)qlog2 << 24);
    wr(c, at + 12, 0);
}

static inline uint32_t exp_rights(uint32_t rights)
{
    return TGR_EXP_VALID | rights << TGR_EXP_RIGHTS_SHIFT;
}

static inline void put_pte(Card *c, uint32_t page, uint32_t mode,
                           uint32_t rights, uint8_t ctx, uint16_t node,
                           uint32_t w1, uint32_t w2, uint32_t count)
{
    wr(c, PTE(page, 1), w1);
    wr(c, PTE(page, 2), w2);
    wr(c, PTE(page, 3), count);
    wr(c, PTE(page, 0), TGR_PTE_VALID | mode << TGR_PTE_MODE_SHIFT |
                        rights << TGR_PTE_RIGHTS_SHIFT |
                        (uint32_t)ctx << TGR_PTE_CTX_SHIFT |
                        (uint32_t)node << TGR_PTE_NODE_SHIFT);
}

/* A remote page of PEER: eidx 9, generation 7, owned by context 1. */
static inline void put_remote_pte(Card *c, uint32_t page, uint32_t rights)
{
    put_pte(c, page, TGR_PTE_MODE_REMOTE, rights, 1, PEER, 9, 7, 0);
}

static inline void put_queue(Card *c, uint64_t buf, uint32_t words,
                             uint32_t tail, uint32_t head)
{
    wr(c, buf + 4 * TGR_Q_TAIL_WORD, words << TGR_Q_SIZE_SHIFT | tail);
    wr(c, buf + 4 * TGR_Q_HEAD_WORD, words << TGR_Q_SIZE_SHIFT | head);
}

/* ---- frames ------------------------------------------------------------ */

/* DATA from node `src`: the TGR header, then `body`; waits until taken. */
static inline void send_tgr(Card *c, uint16_t src, FabricTgrHdr *t,
                            const void *body, uint32_t blen)
{
    g_autofree uint8_t *p = g_malloc(FABRIC_TGR_HDR_LEN + blen);
    uint32_t rx = counter(c, TGR_CNT_RX_FRAMES);

    t->epoch = EPOCH;
    t->seq = t->op == FABRIC_TGR_MCAST_WRITE ? c->mseq[src]++
                                             : c->seq[src]++;
    fabric_tgr_hdr_encode(t, p);
    memcpy(p + FABRIC_TGR_HDR_LEN, body, blen);
    ff_send(c->ff, K, FABRIC_TYPE_DATA, src, NODE, p,
            FABRIC_TGR_HDR_LEN + blen);
    wait_counter(c, TGR_CNT_RX_FRAMES, rx + 1);
}

static inline void send_control(Card *c, const uint8_t *p, uint32_t len)
{
    ff_send(c->ff, K, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, NODE, p, len);
}

/* The next frame: DATA with op `op` from the card; returns its payload. */
static inline uint8_t *expect_tgr(Card *c, uint8_t op, FabricHdr *h,
                                  FabricTgrHdr *t)
{
    uint8_t *p;

    g_assert_true(ff_recv(c->ff, h, &p));
    g_assert_cmpint(h->kind, ==, K);
    g_assert_cmpint(h->type, ==, FABRIC_TYPE_DATA);
    g_assert_cmpuint(h->src, ==, NODE);
    g_assert_true(fabric_tgr_hdr_decode(p, h->len, t));
    g_assert_cmpint(t->op, ==, op);
    return p;
}

static inline uint8_t *expect_control(Card *c, uint8_t op, FabricHdr *h)
{
    uint8_t *p;

    g_assert_true(ff_recv(c->ff, h, &p));
    g_assert_cmpint(h->kind, ==, K);
    g_assert_cmpint(h->type, ==, FABRIC_TYPE_CONTROL);
    g_assert_cmpint(p[0], ==, op);
    return p;
}

/* ---- events ------------------------------------------------------------ */

/*
 * Move the ring's new entries to c->events, as the driver would.  PROD
 * and CONS are indices in the ring.
 */
static inline void pull_events(Card *c)
{
    uint32_t prod = rd(c, REG(TGR_REG_EVQ_PROD));

    g_assert_cmpuint(prod, <, EVQ_N);
    for (; c->ev_cons != prod; c->ev_cons = (c->ev_cons + 1) % EVQ_N) {
        uint64_t at = EVQ + TGR_EV_ENTRY * c->ev_cons;
        uint32_t w0 = rd(c, at), w1 = rd(c, at + 4);
        Event e = { .type = w0, .reason = w0 >> 8, .ctx = w0 >> 16,
                    .op = w0 >> 24, .node = w1, .cpu = w1 >> 16,
                    .page = rd(c, at + 8), .off = rd(c, at + 12) };

        g_array_append_val(c->events, e);
    }
    wr(c, REG(TGR_REG_EVQ_CONS), c->ev_cons);
}

/* The oldest unchecked event of `type`, in any order with other types. */
static inline Event expect_event(Card *c, uint8_t type, uint8_t reason)
{
    pull_events(c);
    for (guint i = 0; i < c->events->len; i++) {
        Event e = g_array_index(c->events, Event, i);
        if (e.type == type) {
            g_array_remove_index(c->events, i);
            g_assert_cmpint(e.reason, ==, reason);
            return e;
        }
    }
    g_error("no event of type %d (reason %d) among %u", type, reason,
            c->events->len);
}

/* ---- the card ---------------------------------------------------------- */

static inline void map_bars(Card *c)
{
    c->slot = qt_pci_map(c->qt, TGR_PCI_VENDOR, TGR_PCI_DEVICE, BAR0);
    g_assert_cmpint(c->slot, >=, 0);
    qt_pci_cfg_write(c->qt, c->slot, 0x18, (uint32_t)BAR2);
    qt_pci_cfg_write(c->qt, c->slot, 0x1c, BAR2 >> 32);
    qt_pci_cfg_write(c->qt, c->slot, 0x20, (uint32_t)BAR4);
    qt_pci_cfg_write(c->qt, c->slot, 0x24, BAR4 >> 32);
}

/* Boot the card, check HELLO and bring the link up: no driver state. */
static inline Card *card_boot(const char *extra)
{
    Card *c = g_new0(Card, 1);
    FabricHdr h;
    uint8_t ack[FABRIC_TGR_HELLO_ACK_LEN] = { FABRIC_CTL_HELLO_ACK };

    c->events = g_array_new(FALSE, FALSE, sizeof(Event));
    c->dir = g_dir_make_tmp("vctgr-XXXXXX", NULL);
    c->ff = ff_listen(c->dir, "fabric.sock");
    g_autofree char *chr = g_strdup_printf("socket,id=tg,path=%s",
                                           c->ff->path);
    g_autofree char *dev = g_strdup_printf("telegraphos,chardev=tg,node=%u%s",
                                           NODE, extra);
    const char *args[] = { "-chardev", chr, "-device", dev, NULL };
    c->qt = qt_start(args);
    ff_accept(c->ff);
    map_bars(c);

    g_autofree uint8_t *p = expect_control(c, FABRIC_CTL_HELLO, &h);
    g_assert_cmpuint(h.len, ==, FABRIC_HELLO_LEN);
    g_assert_cmpuint(fabric_get_le16(p + 1), ==, NODE);
    g_assert_cmpuint(rd(c, REG(TGR_REG_NODES)), ==, 0);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_LINK_UP, ==, 0);
    fabric_put_le16(ack + 1, NODES);
    send_control(c, ack, sizeof(ack));
    g_assert_true(qt_wait_reg(c->qt, REG(TGR_REG_CTRL), TGR_STATUS_LINK_UP,
                              TGR_STATUS_LINK_UP));
    return c;
}

/* Boot, then set the tables up as tgr.ko does; the vCPU runs context 1. */
static inline Card *card_up_with(const char *extra)
{
    Card *c = card_boot(extra);

    wr(c, REG(TGR_REG_EXP_BASE_LO), (uint32_t)EXP_TABLE);
    wr(c, REG(TGR_REG_EXP_BASE_HI), EXP_TABLE >> 32);
    wr(c, REG(TGR_REG_EXP_COUNT), EXP_N);
    wr(c, REG(TGR_REG_EVQ_BASE_LO), (uint32_t)EVQ);
    wr(c, REG(TGR_REG_EVQ_BASE_HI), EVQ >> 32);
    wr(c, REG(TGR_REG_EVQ_ENTRIES), EVQ_N);
    wr(c, REG(TGR_CTX_TABLE + TGR_CTX_ENTRY * 1), (uint32_t)CTX_STATUS);
    wr(c, REG(TGR_CTX_TABLE + TGR_CTX_ENTRY * 1 + 8), TGR_CTXF_VALID);
    wr(c, REG(TGR_REG_CUR_CTX), 1);
    wr(c, REG(TGR_REG_ISR), ~0u);
    return c;
}

static inline Card *card_up(void)
{
    return card_up_with("");
}

static inline void card_down(Card *c)
{
    qt_quit(c->qt);
    ff_close(c->ff);
    rmdir(c->dir);
    g_free(c->dir);
    g_array_free(c->events, TRUE);
    g_free(c);
}

static inline void route_irq(Card *c)
{
    /* No BIOS ran: route PIIX3's PIRQA-D to IRQ 11, as SeaBIOS would. */
    qt_pci_cfg_write(c->qt, 1, 0x60, 0x0b0b0b0b);
    qt_irq_intercept(c->qt);
}

/* ---- the target's receive queue ---------------------------------------- */

/* A 16-word queue at QBUF, exported as eidx 3 (generation 5). */
#define QEIDX 3
#define QGEN 5
#define QWORDS 16

static inline void put_queue_export(Card *c)
{
    put_export(c, QEIDX, QBUF, exp_rights(TGR_R_REQ) | TGR_EXP_QHEAD, QGEN,
               1, 6);
}

static inline uint32_t qword(Card *c, uint32_t i)
{
    return rd(c, QBUF + 4 * i);
}

#endif /* TGR_FIXTURE_H */
