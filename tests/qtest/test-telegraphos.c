/*
 * qtest device tests for -device telegraphos (docs/hw/telegraphos.md).
 * The test plays fabricd (and every peer node) on the card's chardev and
 * writes the driver's tables into guest RAM by qtest.  Without a vCPU,
 * remote reads are split-phase, and the virtual clock moves only by
 * clock_step.
 */
#include "qtest-client.h"

#include <inttypes.h>
#include <string.h>
#include <unistd.h>

#include "../../guest-driver/tgr/tgr_regs.h"

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

static uint32_t rd(Card *c, uint64_t addr)
{
    return qt_readl(c->qt, addr);
}

static void wr(Card *c, uint64_t addr, uint32_t v)
{
    qt_writel(c->qt, addr, v);
}

static uint64_t rdq(Card *c, uint64_t addr)
{
    g_autofree char *r = qt_cmd(c->qt, "readq 0x%" PRIx64, addr);
    return g_ascii_strtoull(r + 3, NULL, 0);
}

static void wrq(Card *c, uint64_t addr, uint64_t v)
{
    g_free(qt_cmd(c->qt, "writeq 0x%" PRIx64 " 0x%" PRIx64, addr, v));
}

static void wrw(Card *c, uint64_t addr, uint16_t v)
{
    g_free(qt_cmd(c->qt, "writew 0x%" PRIx64 " 0x%x", addr, v));
}

static void clock_step(Card *c, int64_t ns)
{
    g_free(qt_cmd(c->qt, "clock_step %" PRId64, ns));
}

static uint32_t counter(Card *c, int idx)
{
    return rd(c, CNT(idx));
}

static void wait_counter(Card *c, int idx, uint32_t want)
{
    if (!qt_wait_reg(c->qt, CNT(idx), ~0u, want)) {
        g_error("counter %d is %u, want %u", idx, counter(c, idx), want);
    }
}

/* A copy of guest memory, to prove a refused request touched nothing. */
static uint8_t *mem_snapshot(Card *c, uint64_t addr, size_t len)
{
    g_autofree char *r = qt_cmd(c->qt, "read 0x%" PRIx64 " 0x%zx", addr,
                                len);
    uint8_t *buf = g_malloc(len);

    g_assert_cmpuint(strlen(r), ==, 5 + 2 * len);
    for (size_t i = 0; i < len; i++) {
        char hex[3] = { r[5 + 2 * i], r[6 + 2 * i], 0 };
        buf[i] = strtoul(hex, NULL, 16);
    }
    return buf;
}

static void put_export(Card *c, uint32_t eidx, uint64_t page, uint32_t flags,
                       uint16_t gen, uint8_t ctx, uint8_t qlog2)
{
    uint64_t at = EXP_TABLE + TGR_EXP_ENTRY * eidx;

    wrq(c, at, page | flags);
    wr(c, at + 8, gen | (uint32_t)ctx << 16 | (uint32_t)qlog2 << 24);
    wr(c, at + 12, 0);
}

static uint32_t exp_rights(uint32_t rights)
{
    return TGR_EXP_VALID | rights << TGR_EXP_RIGHTS_SHIFT;
}

static void put_pte(Card *c, uint32_t page, uint32_t mode, uint32_t rights,
                    uint8_t ctx, uint16_t node, uint32_t w1, uint32_t w2,
                    uint32_t count)
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
static void put_remote_pte(Card *c, uint32_t page, uint32_t rights)
{
    put_pte(c, page, TGR_PTE_MODE_REMOTE, rights, 1, PEER, 9, 7, 0);
}

static void put_queue(Card *c, uint64_t buf, uint32_t words, uint32_t tail,
                      uint32_t head)
{
    wr(c, buf + 4 * TGR_Q_TAIL_WORD, words << TGR_Q_SIZE_SHIFT | tail);
    wr(c, buf + 4 * TGR_Q_HEAD_WORD, words << TGR_Q_SIZE_SHIFT | head);
}

/* ---- frames ------------------------------------------------------------ */

/* DATA from node `src`: the TGR header, then `body`; waits until taken. */
static void send_tgr(Card *c, uint16_t src, FabricTgrHdr *t,
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

static void send_req(Card *c, uint16_t src, uint32_t eidx, uint16_t gen,
                     uint16_t off, uint32_t item)
{
    FabricTgrHdr t = { .op = FABRIC_TGR_REQ, .size = 4, .eidx = eidx,
                       .gen = gen, .off = off };
    uint8_t b[4];

    fabric_put_le32(b, item);
    send_tgr(c, src, &t, b, sizeof(b));
}

static void send_write32(Card *c, uint32_t eidx, uint16_t gen, uint16_t off,
                         uint32_t v)
{
    FabricTgrHdr t = { .op = FABRIC_TGR_WRITE, .size = 4, .eidx = eidx,
                       .gen = gen, .off = off };
    uint8_t b[4];

    fabric_put_le32(b, v);
    send_tgr(c, PEER, &t, b, sizeof(b));
}

static void send_control(Card *c, const uint8_t *p, uint32_t len)
{
    ff_send(c->ff, K, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, NODE, p, len);
}

/* The next frame: DATA with op `op` from the card; returns its payload. */
static uint8_t *expect_tgr(Card *c, uint8_t op, FabricHdr *h, FabricTgrHdr *t)
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

static uint8_t *expect_control(Card *c, uint8_t op, FabricHdr *h)
{
    uint8_t *p;

    g_assert_true(ff_recv(c->ff, h, &p));
    g_assert_cmpint(h->kind, ==, K);
    g_assert_cmpint(h->type, ==, FABRIC_TYPE_CONTROL);
    g_assert_cmpint(p[0], ==, op);
    return p;
}

/* A NACK must come back for the refused frame, with the reason. */
static void expect_nack(Card *c, uint8_t op, uint8_t reason, uint32_t seq,
                        uint32_t tag)
{
    FabricHdr h;
    FabricTgrHdr t;
    g_autofree uint8_t *p = expect_tgr(c, FABRIC_TGR_NACK, &h, &t);

    g_assert_cmpuint(h.dst, ==, PEER);
    g_assert_cmpuint(h.len, ==, FABRIC_TGR_HDR_LEN + FABRIC_TGR_NACK_LEN);
    g_assert_cmpuint(t.tag, ==, tag);
    g_assert_cmpint(p[FABRIC_TGR_HDR_LEN], ==, op);
    g_assert_cmpint(p[FABRIC_TGR_HDR_LEN + 1], ==, reason);
    g_assert_cmpuint(fabric_get_le32(p + FABRIC_TGR_HDR_LEN + 4), ==, seq);
}

/* ---- events ------------------------------------------------------------ */

/*
 * Move the ring's new entries to c->events, as the driver would.  PROD
 * and CONS are indices in the ring.
 */
static void pull_events(Card *c)
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

/* The oldest event not yet checked. */
static gboolean next_event(Card *c, Event *e)
{
    pull_events(c);
    if (!c->events->len) {
        return FALSE;
    }
    *e = g_array_index(c->events, Event, 0);
    g_array_remove_index(c->events, 0);
    return TRUE;
}

/* The oldest unchecked event of `type`, in any order with other types. */
static Event expect_event(Card *c, uint8_t type, uint8_t reason)
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

static void drain_events(Card *c)
{
    pull_events(c);
    g_array_set_size(c->events, 0);
}

/* ---- the card ---------------------------------------------------------- */

static char *qemu_binary(void)
{
    const char *q = g_getenv("QTEST_QEMU_BINARY");
    return g_strdup(q ? q : "build/qemu/qemu-system-x86_64");
}

static void map_bars(Card *c)
{
    c->slot = qt_pci_map(c->qt, TGR_PCI_VENDOR, TGR_PCI_DEVICE, BAR0);
    g_assert_cmpint(c->slot, >=, 0);
    qt_pci_cfg_write(c->qt, c->slot, 0x18, (uint32_t)BAR2);
    qt_pci_cfg_write(c->qt, c->slot, 0x1c, BAR2 >> 32);
    qt_pci_cfg_write(c->qt, c->slot, 0x20, (uint32_t)BAR4);
    qt_pci_cfg_write(c->qt, c->slot, 0x24, BAR4 >> 32);
}

/* Boot the card, check HELLO and bring the link up: no driver state. */
static Card *card_boot(const char *extra)
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
    g_assert_cmpuint(h.len, ==, FABRIC_TGR_HELLO_LEN);
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
static Card *card_up_with(const char *extra)
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

static Card *card_up(void)
{
    return card_up_with("");
}

static void card_down(Card *c)
{
    qt_quit(c->qt);
    ff_close(c->ff);
    rmdir(c->dir);
    g_free(c->dir);
    g_array_free(c->events, TRUE);
    g_free(c);
}

static void route_irq(Card *c)
{
    /* No BIOS ran: route PIIX3's PIRQA-D to IRQ 11, as SeaBIOS would. */
    qt_pci_cfg_write(c->qt, 1, 0x60, 0x0b0b0b0b);
    qt_irq_intercept(c->qt);
}

/* ---- identity, properties, reset ---------------------------------------- */

static uint32_t bar_size_lo(Card *c, int reg)
{
    uint32_t old = qt_pci_cfg_read(c->qt, c->slot, reg), v;

    qt_pci_cfg_write(c->qt, c->slot, reg, 0xffffffff);
    v = qt_pci_cfg_read(c->qt, c->slot, reg);
    qt_pci_cfg_write(c->qt, c->slot, reg, old);
    return v;
}

static void test_identity_and_reset_state(void)
{
    Card *c = card_boot("");

    g_assert_cmphex(qt_pci_cfg_read(c->qt, c->slot, 0x00), ==,
                    (uint32_t)TGR_PCI_DEVICE << 16 | TGR_PCI_VENDOR);
    g_assert_cmphex(qt_pci_cfg_read(c->qt, c->slot, 0x08) >> 16, ==, 0x0280);
    g_assert_cmphex(bar_size_lo(c, 0x10), ==, (uint32_t)-TGR_BAR0_SIZE);
    g_assert_cmphex(bar_size_lo(c, 0x18), ==,
                    (uint32_t)-(TGR_WIN_PAGES_MAX * TGR_PAGE_SIZE) | 4);
    g_assert_cmphex(bar_size_lo(c, 0x20), ==, (uint32_t)-TGR_BAR4_SIZE | 4);

    g_assert_cmphex(rd(c, REG(TGR_REG_ID)), ==, TGR_ID_VALUE);
    g_assert_cmpuint(rd(c, REG(TGR_REG_VERSION)), ==, TGR_VERSION);
    g_assert_cmpuint(rd(c, REG(TGR_REG_NODE)), ==, NODE);
    g_assert_cmpuint(rd(c, REG(TGR_REG_NODES)), ==, NODES);
    g_assert_cmpuint(rd(c, REG(TGR_REG_WIN_PAGES)), ==, TGR_WIN_PAGES_MAX);
    g_assert_cmpuint(rd(c, REG(TGR_REG_MIRROR_MB)), ==, 512);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)), ==, TGR_STATUS_LINK_UP);
    g_assert_cmphex(rd(c, REG(TGR_REG_ISR)), ==, TGR_INT_LINK);
    g_assert_cmphex(rd(c, REG(TGR_REG_IMR)), ==, 0);
    g_assert_cmpuint(rd(c, REG(TGR_REG_EXP_COUNT)), ==, 0);
    g_assert_cmpuint(rd(c, REG(TGR_REG_EVQ_ENTRIES)), ==, 0);
    g_assert_cmpuint(rd(c, REG(TGR_REG_EVQ_PROD)), ==, 0);
    g_assert_cmpuint(rd(c, REG(TGR_REG_CUR_CTX)), ==, 0);
    g_assert_cmpuint(rd(c, REG(TGR_REG_RREAD_TIMEOUT_US)), ==, 100000);
    g_assert_cmpuint(rd(c, REG(TGR_REG_RD_STATUS)), ==, TGR_ERR_OK);
    g_assert_cmphex(rd(c, REG(TGR_REG_GROUP_EIDX)), ==, TGR_GROUP_NONE);
    g_assert_cmphex(rd(c, PTE(TGR_WIN_PAGES_MAX - 1, 0)), ==, 0);
    for (int i = TGR_CNT_WRITES; i < TGR_CNT_NUM; i++) {
        g_assert_cmpuint(counter(c, i), ==, 0);
    }
    /* Unknown registers read 0 and ignore writes. */
    wr(c, REG(0x3fc), 0x55);
    g_assert_cmphex(rd(c, REG(0x3fc)), ==, 0);
    wr(c, REG(TGR_REG_ID), 0);
    g_assert_cmphex(rd(c, REG(TGR_REG_ID)), ==, TGR_ID_VALUE);

    wr(c, REG(TGR_REG_EXP_COUNT), TGR_EXP_MAX + 1);         /* ignored */
    g_assert_cmpuint(rd(c, REG(TGR_REG_EXP_COUNT)), ==, 0);
    wr(c, REG(TGR_REG_EXP_COUNT), TGR_EXP_MAX);
    g_assert_cmpuint(rd(c, REG(TGR_REG_EXP_COUNT)), ==, TGR_EXP_MAX);
    wr(c, WIN(0, 0), 1);                                    /* no PTE */
    g_assert_cmpuint(counter(c, TGR_CNT_LOCAL_ERR), ==, 1);
    wr(c, REG(TGR_REG_CTRL), TGR_CTRL_CLR_STATS);
    g_assert_cmpuint(counter(c, TGR_CNT_LOCAL_ERR), ==, 0);

    /* SOFT_RESET clears the driver's state, not the link. */
    wr(c, REG(TGR_REG_EVQ_ENTRIES), 8);
    wr(c, REG(TGR_REG_CUR_CTX), 3);
    put_remote_pte(c, 5, RW);
    wr(c, REG(TGR_REG_CTRL), TGR_CTRL_SOFT_RESET);
    g_assert_cmphex(rd(c, PTE(5, 0)), ==, 0);
    g_assert_cmpuint(rd(c, REG(TGR_REG_EVQ_ENTRIES)), ==, 0);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)), ==, TGR_STATUS_LINK_UP);
    card_down(c);
}

/* A system reset: tables and counters cleared, a new epoch, HELLO again. */
static void test_system_reset(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t;
    uint8_t ack[FABRIC_TGR_HELLO_ACK_LEN] = { FABRIC_CTL_HELLO_ACK };

    put_remote_pte(c, 0, RW);
    wr(c, WIN(0, 0), 1);
    g_free(expect_tgr(c, FABRIC_TGR_WRITE, &h, &t));
    uint16_t epoch = t.epoch;

    g_free(qt_cmd(c->qt, "outb 0xcf9 0x6"));
    g_free(expect_control(c, FABRIC_CTL_HELLO, &h));
    map_bars(c);
    g_assert_cmpuint(rd(c, REG(TGR_REG_NODES)), ==, 0);
    g_assert_cmphex(rd(c, PTE(0, 0)), ==, 0);
    g_assert_cmpuint(rd(c, REG(TGR_REG_EXP_COUNT)), ==, 0);
    g_assert_cmpuint(rd(c, REG(TGR_REG_CUR_CTX)), ==, 0);
    g_assert_cmpuint(counter(c, TGR_CNT_WRITES), ==, 0);
    g_assert_cmpuint(counter(c, TGR_CNT_TX_FRAMES), ==, 0);
    fabric_put_le16(ack + 1, NODES);
    send_control(c, ack, sizeof(ack));
    g_assert_true(qt_wait_reg(c->qt, REG(TGR_REG_NODES), ~0u, NODES));

    wr(c, REG(TGR_REG_CUR_CTX), 1);
    put_remote_pte(c, 0, RW);
    wr(c, WIN(0, 0), 2);
    g_free(expect_tgr(c, FABRIC_TGR_WRITE, &h, &t));
    g_assert_cmpuint(t.epoch, !=, epoch);
    g_assert_cmpuint(t.seq, ==, 0);
    card_down(c);
}

/* Smaller windows work; bad values stop QEMU with a message naming them. */
static void test_properties(void)
{
    Card *c = card_boot(",window-pages=64,local-mirror-mb=256,"
                        "rread-timeout-us=5000");

    g_assert_cmpuint(rd(c, REG(TGR_REG_WIN_PAGES)), ==, 64);
    g_assert_cmpuint(rd(c, REG(TGR_REG_MIRROR_MB)), ==, 256);
    g_assert_cmpuint(rd(c, REG(TGR_REG_RREAD_TIMEOUT_US)), ==, 5000);
    g_assert_cmphex(bar_size_lo(c, 0x18), ==,
                    (uint32_t)-(64 * TGR_PAGE_SIZE) | 4);
    card_down(c);

    const struct {
        const char *props, *msg;
    } bad[] = {
        { "window-pages=3", "window-pages" },
        { "window-pages=0", "window-pages" },
        { "window-pages=32768", "window-pages" },
        { "local-mirror-mb=100", "local-mirror-mb" },
        { "local-mirror-mb=1024", "local-mirror-mb" },
        { "local-mirror-mb=64", "local-mirror-mb" },  /* < 128 MiB RAM */
        { "node=1024", "node" },
    };
    g_autofree char *qemu = qemu_binary();

    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autofree char *dev = g_strdup_printf("telegraphos,chardev=tg,%s",
                                               bad[i].props);
        const char *argv[] = {
            "timeout", "60", qemu, "-machine", "pc", "-m", "128",
            "-accel", "qtest", "-nodefaults", "-display", "none",
            "-no-user-config", "-L", "/usr/share/seabios",
            "-L", "/usr/share/qemu", "-chardev", "null,id=tg",
            "-device", dev, NULL
        };
        g_autofree char *out = NULL, *err = NULL;
        int status;

        g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL,
                                   G_SPAWN_SEARCH_PATH, NULL, NULL,
                                   &out, &err, &status, NULL));
        g_assert_false(g_spawn_check_wait_status(status, NULL));
        if (!strstr(err, bad[i].msg)) {
            g_error("%s: expected '%s' in: %s", dev, bad[i].msg, err);
        }
    }
}

/* ---- target side: the REQ FSM ------------------------------------------ */

/* A 16-word queue at QBUF, exported as eidx 3 (generation 5). */
#define QEIDX 3
#define QGEN 5
#define QWORDS 16

static void put_queue_export(Card *c)
{
    put_export(c, QEIDX, QBUF, exp_rights(TGR_R_REQ) | TGR_EXP_QHEAD, QGEN,
               1, 6);
}

static uint32_t qword(Card *c, uint32_t i)
{
    return rd(c, QBUF + 4 * i);
}

static void test_req_fsm_and_wrap(void)
{
    Card *c = card_up();

    put_queue_export(c);
    put_queue(c, QBUF, QWORDS, 3, 3);
    wr(c, QBUF + 4 * TGR_Q_NEXT_WORD, 0x5a5a5a5a);
    for (uint32_t i = 0; i < 4; i++) {
        send_req(c, PEER, QEIDX, QGEN, 0, 0x100 + i);
        g_assert_cmphex(qword(c, 3 + i), ==, 0x100 + i);
        g_assert_cmphex(qword(c, 0), ==, QWORDS << 16 | (4 + i));
    }
    g_assert_cmphex(qword(c, 1), ==, QWORDS << 16 | 3);      /* head: owner's */
    g_assert_cmphex(qword(c, 2), ==, 0x5a5a5a5a);          /* next: as it was */
    g_assert_cmpuint(counter(c, TGR_CNT_REQS_IN), ==, 4);

    /* The owner consumed up to 10; the tail wraps from 15 to 3. */
    put_queue(c, QBUF, QWORDS, 14, 10);
    send_req(c, PEER, QEIDX, QGEN, 0, 0xa);
    g_assert_cmphex(qword(c, 14), ==, 0xa);
    g_assert_cmphex(qword(c, 0), ==, QWORDS << 16 | 15);
    send_req(c, PEER, QEIDX, QGEN, 0, 0xb);
    g_assert_cmphex(qword(c, 15), ==, 0xb);
    g_assert_cmphex(qword(c, 0), ==, QWORDS << 16 | 3);
    send_req(c, 3, QEIDX, QGEN, 0, 0xc);                     /* another node */
    g_assert_cmphex(qword(c, 3), ==, 0xc);
    g_assert_cmphex(qword(c, 0), ==, QWORDS << 16 | 4);

    /* An 8 KiB queue (two pages, one export): the tail wraps at 2048. */
    uint64_t q8 = QBUF + 0x2000;
    put_export(c, 14, q8, exp_rights(TGR_R_REQ) | TGR_EXP_QHEAD, 1, 1, 13);
    put_queue(c, q8, 2048, 2046, 10);
    send_req(c, PEER, 14, 1, 0, 0x8a);
    send_req(c, PEER, 14, 1, 0, 0x8b);
    g_assert_cmphex(rd(c, q8 + 4 * 2046), ==, 0x8a);
    g_assert_cmphex(rd(c, q8 + 4 * 2047), ==, 0x8b);
    g_assert_cmphex(rd(c, q8), ==, 2048 << 16 | 3);

    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_STOPPED, ==, 0);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_IN), ==, 0);
    g_assert_true(ff_quiet(c->ff));                          /* REQ: no reply */
    card_down(c);
}

/*
 * Overflow: the item goes in, the tail does not, the NI stops and
 * interrupts.  Requests are held while replies pass; RESUME drains them.
 */
static void test_req_overflow_stop_resume(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t;
    uint8_t rep[FABRIC_TGR_REP_HDR_LEN + 4] = { TGR_ERR_OK };

    route_irq(c);
    wr(c, REG(TGR_REG_IMR), TGR_INT_OVF);
    put_queue_export(c);
    put_export(c, 4, PAGE(4), exp_rights(RW), 1, 1, 0);
    put_queue(c, QBUF, QWORDS, 4, 10);                       /* 6 free */
    for (uint32_t i = 0; i < 5; i++) {
        send_req(c, PEER, QEIDX, QGEN, 0, 0x200 + i);
    }
    g_assert_cmphex(qword(c, 0), ==, QWORDS << 16 | 9);
    g_assert_cmpint(c->qt->irq_raised, ==, 0);

    send_req(c, 3, QEIDX, QGEN, 0, 0x2ff);                   /* fills it */
    g_assert_cmphex(qword(c, 9), ==, 0x2ff);                 /* item written */
    g_assert_cmphex(qword(c, 0), ==, QWORDS << 16 | 9);      /* tail not */
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_STOPPED, ==,
                    TGR_STATUS_STOPPED);
    g_assert_cmphex(rd(c, REG(TGR_REG_ISR)) & TGR_INT_OVF, ==, TGR_INT_OVF);
    g_assert_cmpuint(rd(c, REG(TGR_REG_OVF_EIDX)), ==, QEIDX);
    g_assert_cmpuint(rd(c, REG(TGR_REG_OVF_SRC)), ==, 3);
    g_assert_cmpuint(counter(c, TGR_CNT_REQ_OVF), ==, 1);
    g_assert_cmpint(c->qt->irq_raised, ==, 1);

    /* A read of ours is outstanding while the NI is stopped. */
    put_remote_pte(c, 0, RW);
    g_assert_cmphex(rd(c, WIN(0, 0x20)), ==, 0xffffffff);
    g_autofree uint8_t *rq = expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t);

    /* Requests are held: memory stays as it was. */
    g_autofree uint8_t *before = mem_snapshot(c, QBUF, 64);
    send_req(c, PEER, QEIDX, QGEN, 0, 0x300);
    send_req(c, PEER, QEIDX, QGEN, 0, 0x301);
    send_req(c, PEER, QEIDX, QGEN, 0, 0x302);
    send_write32(c, 4, 1, 0x10, 0x77777777);
    g_assert_cmpuint(counter(c, TGR_CNT_HELD), ==, 4);
    g_autofree uint8_t *after = mem_snapshot(c, QBUF, 64);
    g_assert_cmpmem(before, 64, after, 64);
    g_assert_cmphex(rd(c, PAGE(4) + 0x10), ==, 0);

    /* ...while a reply passes. */
    FabricTgrHdr rt = { .op = FABRIC_TGR_READ_REP, .size = 4, .tag = t.tag,
                        .eidx = t.eidx, .gen = t.gen, .off = t.off };
    fabric_put_le32(rep + FABRIC_TGR_REP_HDR_LEN, 0x600d600d);
    send_tgr(c, PEER, &rt, rep, sizeof(rep));
    g_assert_cmphex(rd(c, WIN(0, 0x20)), ==, 0x600d600d);

    /* Resumed with room for one: the second held REQ overflows again. */
    put_queue(c, QBUF, QWORDS, 3, 5);
    wr(c, REG(TGR_REG_ISR), TGR_INT_OVF);
    wr(c, REG(TGR_REG_CTRL), TGR_CTRL_RESUME);
    clock_step(c, 1000);
    g_assert_true(qt_wait_reg(c->qt, REG(TGR_REG_CTRL), TGR_STATUS_STOPPED,
                              TGR_STATUS_STOPPED));
    g_assert_cmpuint(counter(c, TGR_CNT_REQ_OVF), ==, 2);
    g_assert_cmphex(qword(c, 3), ==, 0x300);
    g_assert_cmphex(qword(c, 4), ==, 0x301);
    g_assert_cmphex(qword(c, 0), ==, QWORDS << 16 | 4);
    g_assert_cmphex(rd(c, PAGE(4) + 0x10), ==, 0);         /* still held */
    g_assert_cmpint(c->qt->irq_raised, ==, 2);

    /* The driver copies the buffer out, empties it and resumes. */
    put_queue(c, QBUF, QWORDS, 3, 3);
    wr(c, REG(TGR_REG_ISR), TGR_INT_OVF);
    wr(c, REG(TGR_REG_CTRL), TGR_CTRL_RESUME);
    clock_step(c, 1000);
    g_assert_true(qt_wait_reg(c->qt, QBUF, ~0u, QWORDS << 16 | 4));
    g_assert_cmphex(qword(c, 3), ==, 0x302);
    g_assert_true(qt_wait_reg(c->qt, PAGE(4) + 0x10, ~0u, 0x77777777));
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_STOPPED, ==, 0);
    g_assert_cmphex(rd(c, REG(TGR_REG_ISR)) & TGR_INT_OVF, ==, 0);
    g_assert_cmpuint(counter(c, TGR_CNT_REQ_OVF), ==, 2);
    g_assert_cmpuint(counter(c, TGR_CNT_HELD), ==, 4);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_IN), ==, 0);
    card_down(c);
}

/*
 * With rx-hold-frames held, the card stops reading its socket (fabricd
 * then stops the senders); RESUME takes everything, in order.
 */
static void test_hold_back_pressure(void)
{
    Card *c = card_up_with(",rx-hold-frames=16");
    const uint32_t big = 13, n = 300;
    uint64_t qbig = QBUF + 0x8000;                          /* 2 KiB */

    put_queue_export(c);
    put_queue(c, QBUF, QWORDS, 3, 4);                       /* full at once */
    put_export(c, big, qbig, exp_rights(TGR_R_REQ) | TGR_EXP_QHEAD, 1, 1, 11);
    put_queue(c, qbig, 512, 3, 3);
    send_req(c, PEER, QEIDX, QGEN, 0, 0xf0);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_STOPPED, ==,
                    TGR_STATUS_STOPPED);

    /* A read request is held too: no reply while stopped. */
    put_export(c, 4, PAGE(4), exp_rights(RW), 1, 1, 0);
    wr(c, PAGE(4) + 8, 0xabad1dea);
    FabricTgrHdr rq = { .op = FABRIC_TGR_READ_REQ, .size = 4, .eidx = 4,
                        .gen = 1, .off = 8, .tag = 0x99 };
    uint8_t len[FABRIC_TGR_READ_REQ_LEN];
    fabric_put_le16(len, 4);
    send_tgr(c, PEER, &rq, len, sizeof(len));
    g_assert_true(ff_quiet(c->ff));

    /* One write: an AF_UNIX socket takes few small ones. */
    const uint32_t flen = FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN + 4;
    g_autofree uint8_t *burst = g_malloc(n * flen);
    for (uint32_t i = 0; i < n; i++) {
        FabricHdr h = { .kind = K, .type = FABRIC_TYPE_DATA, .src = PEER,
                        .dst = NODE, .len = FABRIC_TGR_HDR_LEN + 4 };
        FabricTgrHdr t = { .op = FABRIC_TGR_REQ, .size = 4, .eidx = big,
                           .gen = 1, .epoch = EPOCH, .seq = c->seq[PEER]++ };
        uint8_t *p = burst + i * flen;

        fabric_hdr_encode(&h, p);
        fabric_tgr_hdr_encode(&t, p + FABRIC_HDR_LEN);
        fabric_put_le32(p + FABRIC_HDR_LEN + FABRIC_TGR_HDR_LEN, 0x1000 + i);
    }
    ff_send_raw(c->ff, burst, n * flen);
    for (int i = 0; i < 500 && counter(c, TGR_CNT_HELD) < 16; i++) {
        g_usleep(10 * 1000);
    }
    g_usleep(200 * 1000);
    uint32_t held = counter(c, TGR_CNT_HELD);
    g_test_message("held %u of %u before RESUME", held, n);
    g_assert_cmpuint(held, >=, 16);
    g_assert_cmpuint(held, <, n);                          /* reading stopped */
    g_assert_cmpuint(counter(c, TGR_CNT_RX_FRAMES), ==, 1 + held);
    g_assert_cmphex(rd(c, qbig), ==, 512 << 16 | 3);

    put_queue(c, QBUF, QWORDS, 3, 3);
    wr(c, REG(TGR_REG_CTRL), TGR_CTRL_RESUME);
    clock_step(c, 1000);
    FabricHdr h;
    FabricTgrHdr rt;
    g_autofree uint8_t *rep = expect_tgr(c, FABRIC_TGR_READ_REP, &h, &rt);
    g_assert_cmpuint(rt.tag, ==, 0x99);
    g_assert_cmphex(fabric_get_le32(rep + FABRIC_TGR_HDR_LEN + 2), ==,
                    0xabad1dea);
    wait_counter(c, TGR_CNT_RX_FRAMES, 2 + n);
    g_assert_true(qt_wait_reg(c->qt, qbig, ~0u, 512 << 16 | (3 + n)));
    for (uint32_t i = 0; i < n; i++) {
        g_assert_cmphex(rd(c, qbig + 4 * (3 + i)), ==, 0x1000 + i);
    }
    g_assert_cmpuint(counter(c, TGR_CNT_REQS_IN), ==, 1 + n);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_STOPPED, ==, 0);
    card_down(c);
}

/* ---- target side: the export check -------------------------------------- */

/*
 * Send a request that must be refused: a NACK with the reason comes back,
 * VIOL_IN is counted and reported, and guest memory is byte for byte the
 * same (the data pages and the queue buffers).
 */
static void expect_refused(Card *c, FabricTgrHdr *t, const uint8_t *body,
                           uint32_t blen, uint8_t reason, uint8_t owner)
{
    uint32_t viol = counter(c, TGR_CNT_VIOL_IN);
    g_autofree uint8_t *pages = mem_snapshot(c, PAGE(0), 16 * 4096);
    g_autofree uint8_t *queues = mem_snapshot(c, QBUF, 0x5000);

    send_tgr(c, PEER, t, body, blen);
    expect_nack(c, t->op, reason, c->seq[PEER] - 1, t->tag);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_IN), ==, viol + 1);
    Event e = expect_event(c, TGR_EV_VIOL_IN, reason);
    g_assert_cmpuint(e.node, ==, PEER);
    g_assert_cmpuint(e.page, ==, t->eidx);
    g_assert_cmpuint(e.off, ==, t->off);
    g_assert_cmpuint(e.op, ==, t->op);
    g_assert_cmpuint(e.ctx, ==, owner);

    g_autofree uint8_t *pages2 = mem_snapshot(c, PAGE(0), 16 * 4096);
    g_autofree uint8_t *queues2 = mem_snapshot(c, QBUF, 0x5000);
    g_assert_cmpmem(pages, 16 * 4096, pages2, 16 * 4096);
    g_assert_cmpmem(queues, 0x5000, queues2, 0x5000);
}

static void test_export_check(void)
{
    Card *c = card_up();
    const uint32_t ro = 6, wo = 8, plain = 10, unaligned = 11, badsize = 12;
    const struct {
        const char *what;
        uint8_t op;
        uint32_t eidx;
        uint16_t gen, off;
        uint8_t reason;
    } cases[] = {
        { "unexported", FABRIC_TGR_WRITE, 7, 1, 0, TGR_ERR_UNEXPORTED },
        { "eidx >= EXP_COUNT", FABRIC_TGR_WRITE, EXP_N, 1, 0,
          TGR_ERR_RANGE },
        { "stale generation", FABRIC_TGR_WRITE, 4, 2, 0, TGR_ERR_STALE },
        { "write to read-only", FABRIC_TGR_WRITE, ro, 1, 0, TGR_ERR_RIGHTS },
        { "beyond the page", FABRIC_TGR_WRITE, 4, 1, 4094, TGR_ERR_RANGE },
        { "read of write-only", FABRIC_TGR_READ_REQ, wo, 1, 0,
          TGR_ERR_RIGHTS },
        { "atomic without right", FABRIC_TGR_ATOMIC_REQ, 4, 1, 0,
          TGR_ERR_RIGHTS },
        { "REQ without the right", FABRIC_TGR_REQ, 4, 1, 0, TGR_ERR_RIGHTS },
        { "REQ into a non-queue", FABRIC_TGR_REQ, plain, 1, 0,
          TGR_ERR_BADQUEUE },
        { "REQ not at offset 0", FABRIC_TGR_REQ, QEIDX, QGEN, 4,
          TGR_ERR_BADQUEUE },
        { "unaligned queue", FABRIC_TGR_REQ, unaligned, 1, 0,
          TGR_ERR_BADQUEUE },
        { "wrong queue size", FABRIC_TGR_REQ, badsize, 1, 0,
          TGR_ERR_BADSIZE },
    };

    put_export(c, 4, PAGE(4), exp_rights(RW), 1, 1, 0);
    put_export(c, ro, PAGE(ro), exp_rights(TGR_R_READ), 1, 1, 0);
    put_export(c, wo, PAGE(wo), exp_rights(TGR_R_WRITE), 1, 1, 0);
    put_export(c, plain, PAGE(plain), exp_rights(TGR_R_REQ), 1, 1, 0);
    put_queue_export(c);
    put_queue(c, QBUF, QWORDS, 3, 3);
    /* 8 KiB queue on an odd page; a 64-byte queue whose words say 128. */
    put_export(c, unaligned, QBUF + 0x1000,
               exp_rights(TGR_R_REQ) | TGR_EXP_QHEAD, 1, 1, 13);
    put_queue(c, QBUF + 0x1000, 2048, 3, 3);
    put_export(c, badsize, QBUF + 0x4000,
               exp_rights(TGR_R_REQ) | TGR_EXP_QHEAD, 1, 1, 6);
    put_queue(c, QBUF + 0x4000, 32, 3, 3);
    for (int i = 0; i < 16; i++) {
        wr(c, PAGE(4) + 4 * i, 0x44440000 + i);
        wr(c, PAGE(ro) + 4 * i, 0x66660000 + i);
    }

    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        uint8_t body[FABRIC_TGR_ATOMIC_REQ_LEN] = { 0 };
        uint32_t blen = 4;
        FabricTgrHdr t = { .op = cases[i].op, .size = 4,
                           .eidx = cases[i].eidx, .gen = cases[i].gen,
                           .off = cases[i].off };

        g_test_message("case: %s", cases[i].what);
        fabric_put_le32(body, 0xbad0bad0);
        if (t.op == FABRIC_TGR_READ_REQ) {
            t.tag = 0x1000 + i;
            fabric_put_le16(body, 4);
            blen = FABRIC_TGR_READ_REQ_LEN;
        } else if (t.op == FABRIC_TGR_ATOMIC_REQ) {
            t.tag = 0x1000 + i;
            body[0] = FABRIC_TGR_AOP_FADD;
            fabric_put_le64(body + 8, 1);
            blen = FABRIC_TGR_ATOMIC_REQ_LEN;
        }
        /* The owner is known when there is an entry to read. */
        expect_refused(c, &t, body, blen, cases[i].reason,
                       cases[i].eidx == 7 || cases[i].eidx >= EXP_N ? 0 : 1);
    }

    /* Frames that do not describe a valid access: refused unread (owner 0). */
    uint8_t body[FABRIC_TGR_ATOMIC_REQ_LEN] = { 0 };
    FabricTgrHdr t = { .op = FABRIC_TGR_WRITE, .size = 2, .eidx = 4,
                       .gen = 1 };
    g_test_message("case: WRITE size 2 with 4 data bytes");
    expect_refused(c, &t, body, 4, TGR_ERR_BADSIZE, 0);
    g_test_message("case: READ_REQ of 0 bytes");
    t = (FabricTgrHdr){ .op = FABRIC_TGR_READ_REQ, .size = 4, .eidx = 4,
                        .gen = 1, .tag = 0x77 };
    expect_refused(c, &t, body, FABRIC_TGR_READ_REQ_LEN, TGR_ERR_BADSIZE, 0);
    g_test_message("case: unaligned atomic");
    put_export(c, 5, PAGE(5), exp_rights(TGR_R_ATOMIC), 1, 1, 0);
    t = (FabricTgrHdr){ .op = FABRIC_TGR_ATOMIC_REQ, .size = 4, .eidx = 5,
                        .gen = 1, .off = 2, .tag = 0x78 };
    body[0] = FABRIC_TGR_AOP_FADD;
    expect_refused(c, &t, body, sizeof(body), TGR_ERR_BADSIZE, 0);
    g_test_message("case: unknown atomic op");
    t.off = 0;
    body[0] = 9;
    expect_refused(c, &t, body, sizeof(body), TGR_ERR_BADOP, 0);
    g_test_message("case: queue tail outside 3..size-1");
    put_export(c, 14, QBUF + 0x2000, exp_rights(TGR_R_REQ) | TGR_EXP_QHEAD,
               1, 1, 6);
    put_queue(c, QBUF + 0x2000, QWORDS, 1, 3);
    t = (FabricTgrHdr){ .op = FABRIC_TGR_REQ, .size = 4, .eidx = 14,
                        .gen = 1 };
    expect_refused(c, &t, body, 4, TGR_ERR_BADQUEUE, 1);
    g_test_message("case: queue above 64 KiB");
    put_export(c, 14, QBUF, exp_rights(TGR_R_REQ) | TGR_EXP_QHEAD, 1, 1, 17);
    expect_refused(c, &t, body, 4, TGR_ERR_BADSIZE, 1);
    g_test_message("case: export table not in memory");
    wr(c, REG(TGR_REG_EXP_BASE_LO), 0x7ff00000);
    t = (FabricTgrHdr){ .op = FABRIC_TGR_WRITE, .size = 4, .eidx = 4,
                        .gen = 1 };
    expect_refused(c, &t, body, 4, TGR_ERR_BADADDR, 0);
    wr(c, REG(TGR_REG_EXP_BASE_LO), (uint32_t)EXP_TABLE);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_STOPPED, ==, 0);

    /* Fixed up, the same requests go through. */
    send_write32(c, 4, 1, 0x10, 0x12345678);
    g_assert_cmphex(rd(c, PAGE(4) + 0x10), ==, 0x12345678);
    send_req(c, PEER, QEIDX, QGEN, 0, 0xfeed);
    g_assert_cmphex(qword(c, 3), ==, 0xfeed);
    g_assert_true(ff_quiet(c->ff));
    card_down(c);
}

/* ---- target side: reads and atomics ------------------------------------- */

static uint64_t target_atomic(Card *c, uint8_t aop, uint8_t size,
                              uint16_t off, uint64_t a, uint64_t b)
{
    uint8_t body[FABRIC_TGR_ATOMIC_REQ_LEN] = { aop };
    FabricTgrHdr t = { .op = FABRIC_TGR_ATOMIC_REQ, .size = size, .eidx = 4,
                       .gen = 1, .off = off, .tag = 0x5000 + off };
    FabricHdr h;
    FabricTgrHdr rt;

    fabric_put_le64(body + 8, a);
    fabric_put_le64(body + 16, b);
    send_tgr(c, PEER, &t, body, sizeof(body));
    g_autofree uint8_t *p = expect_tgr(c, FABRIC_TGR_ATOMIC_REP, &h, &rt);
    g_assert_cmpuint(h.dst, ==, PEER);
    g_assert_cmpuint(rt.tag, ==, t.tag);
    g_assert_cmpuint(h.len, ==, FABRIC_TGR_HDR_LEN +
                                FABRIC_TGR_ATOMIC_REP_LEN);
    g_assert_cmpint(p[FABRIC_TGR_HDR_LEN], ==, TGR_ERR_OK);
    return fabric_get_le64(p + FABRIC_TGR_HDR_LEN + 8);
}

static void test_target_read_write_atomics(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t = { .op = FABRIC_TGR_READ_REQ, .size = 8, .eidx = 4,
                       .gen = 1, .off = 0x18, .tag = 0x4242 };
    FabricTgrHdr rt;
    uint8_t len[2];

    put_export(c, 4, PAGE(4), exp_rights(TGR_R_ALL), 1, 1, 0);
    send_write32(c, 4, 1, 0x10, 0xa1b2c3d4);
    g_assert_cmphex(rd(c, PAGE(4) + 0x10), ==, 0xa1b2c3d4);

    /* A DMA chunk: size 0, the body's length, up to the page's end. */
    g_autofree uint8_t *chunk = g_malloc(TGR_PAGE_SIZE);
    for (int i = 0; i < TGR_PAGE_SIZE; i++) {
        chunk[i] = i * 7 + 1;
    }
    FabricTgrHdr wt = { .op = FABRIC_TGR_WRITE, .size = 0, .eidx = 5,
                        .gen = 1 };
    put_export(c, 5, PAGE(5), exp_rights(TGR_R_WRITE), 1, 1, 0);
    send_tgr(c, PEER, &wt, chunk, TGR_PAGE_SIZE);
    g_autofree uint8_t *got = mem_snapshot(c, PAGE(5), TGR_PAGE_SIZE);
    g_assert_cmpmem(got, TGR_PAGE_SIZE, chunk, TGR_PAGE_SIZE);
    wt.off = 8;                                             /* 8 too many */
    send_tgr(c, PEER, &wt, chunk, TGR_PAGE_SIZE);
    expect_nack(c, FABRIC_TGR_WRITE, TGR_ERR_RANGE, c->seq[PEER] - 1,
                wt.tag);
    g_assert_cmphex(rd(c, PAGE(6)), ==, 0);

    wrq(c, PAGE(4) + 0x18, 0x1122334455667788ull);
    fabric_put_le16(len, 8);
    send_tgr(c, PEER, &t, len, sizeof(len));
    g_autofree uint8_t *p = expect_tgr(c, FABRIC_TGR_READ_REP, &h, &rt);
    g_assert_cmpuint(rt.tag, ==, 0x4242);
    g_assert_cmpuint(h.len, ==,
                     FABRIC_TGR_HDR_LEN + FABRIC_TGR_REP_HDR_LEN + 8);
    g_assert_cmpint(p[FABRIC_TGR_HDR_LEN], ==, TGR_ERR_OK);
    g_assert_cmphex(fabric_get_le64(p + FABRIC_TGR_HDR_LEN + 2), ==,
                    0x1122334455667788ull);

    wr(c, PAGE(4) + 0x40, 41);
    g_assert_cmpuint(target_atomic(c, FABRIC_TGR_AOP_FADD, 4, 0x40, 1, 0),
                     ==, 41);
    g_assert_cmpuint(rd(c, PAGE(4) + 0x40), ==, 42);
    wrq(c, PAGE(4) + 0x48, 0xffffffffull);
    g_assert_cmphex(target_atomic(c, FABRIC_TGR_AOP_FADD, 8, 0x48, 1, 0),
                    ==, 0xffffffffull);
    g_assert_cmphex(rdq(c, PAGE(4) + 0x48), ==, 0x100000000ull);
    g_assert_cmpuint(target_atomic(c, FABRIC_TGR_AOP_SWAP, 4, 0x40, 7, 0),
                     ==, 42);
    g_assert_cmpuint(rd(c, PAGE(4) + 0x40), ==, 7);
    /* CAS: a = expected, b = new; a miss leaves memory alone. */
    g_assert_cmpuint(target_atomic(c, FABRIC_TGR_AOP_CAS, 4, 0x40, 8, 9),
                     ==, 7);
    g_assert_cmpuint(rd(c, PAGE(4) + 0x40), ==, 7);
    g_assert_cmpuint(target_atomic(c, FABRIC_TGR_AOP_CAS, 4, 0x40, 7, 9),
                     ==, 7);
    g_assert_cmpuint(rd(c, PAGE(4) + 0x40), ==, 9);
    g_assert_cmpuint(rd(c, PAGE(4) + 0x44), ==, 0);
    card_down(c);
}

/* ---- initiator side ------------------------------------------------------ */

static void test_initiator_write_and_req(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t;
    uint8_t *p;

    put_remote_pte(c, 0, TGR_R_ALL);
    wr(c, WIN(0, 0x10), 0xdeadbeef);
    p = expect_tgr(c, FABRIC_TGR_WRITE, &h, &t);
    g_assert_cmpuint(h.dst, ==, PEER);
    g_assert_cmpuint(h.len, ==, FABRIC_TGR_HDR_LEN + 4);
    g_assert_cmpuint(t.size, ==, 4);
    g_assert_cmpuint(t.eidx, ==, 9);
    g_assert_cmpuint(t.gen, ==, 7);
    g_assert_cmpuint(t.off, ==, 0x10);
    g_assert_cmphex(t.tag, ==, POSTED_TAG(1, 0));
    g_assert_cmphex(fabric_get_le32(p + FABRIC_TGR_HDR_LEN), ==, 0xdeadbeef);
    uint32_t seq0 = t.seq;
    g_free(p);

    wrq(c, WIN(0, 0xff8), 0x0102030405060708ull);
    p = expect_tgr(c, FABRIC_TGR_WRITE, &h, &t);
    g_assert_cmpuint(t.size, ==, 8);
    g_assert_cmpuint(t.off, ==, 0xff8);
    g_assert_cmpuint(t.seq, ==, seq0 + 1);
    g_assert_cmphex(fabric_get_le64(p + FABRIC_TGR_HDR_LEN), ==,
                    0x0102030405060708ull);
    g_free(p);
    g_assert_cmpuint(counter(c, TGR_CNT_WRITES), ==, 2);

    /* REQ: one 4-byte store to the shadow of the queue's page. */
    wr(c, SHADOW(TGR_OP_REQ, 0, 0), 0xcafe0001);
    p = expect_tgr(c, FABRIC_TGR_REQ, &h, &t);
    g_assert_cmpuint(h.dst, ==, PEER);
    g_assert_cmpuint(t.eidx, ==, 9);
    g_assert_cmpuint(t.gen, ==, 7);
    g_assert_cmpuint(t.off, ==, 0);
    g_assert_cmpuint(t.seq, ==, seq0 + 2);
    g_assert_cmpuint(h.len, ==, FABRIC_TGR_HDR_LEN + FABRIC_TGR_REQ_LEN);
    g_assert_cmphex(fabric_get_le32(p + FABRIC_TGR_HDR_LEN), ==, 0xcafe0001);
    g_free(p);
    g_assert_cmpuint(counter(c, TGR_CNT_REQS), ==, 1);

    /* A 2-byte REQ store is refused at the sender. */
    wrw(c, SHADOW(TGR_OP_REQ, 0, 0), 0x1234);
    g_assert_true(ff_quiet(c->ff));
    Event e = expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_BADSIZE);
    g_assert_cmpuint(e.page, ==, 0);
    g_assert_cmpuint(e.ctx, ==, 1);
    g_assert_cmpuint(counter(c, TGR_CNT_LOCAL_ERR), ==, 1);
    g_assert_cmpuint(counter(c, TGR_CNT_REQS), ==, 1);

    /* The target refuses the first store: VIOL_OUT names ctx and page. */
    uint8_t nack[FABRIC_TGR_NACK_LEN] = { FABRIC_TGR_WRITE, TGR_ERR_STALE };
    FabricTgrHdr nt = { .op = FABRIC_TGR_NACK, .tag = POSTED_TAG(1, 0),
                        .eidx = 9, .gen = 7, .off = 0x10 };
    fabric_put_le32(nack + 4, seq0);
    send_tgr(c, PEER, &nt, nack, sizeof(nack));
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_OUT), ==, 1);
    e = expect_event(c, TGR_EV_VIOL_OUT, TGR_ERR_STALE);
    g_assert_cmpuint(e.ctx, ==, 1);
    g_assert_cmpuint(e.page, ==, 0);
    g_assert_cmpuint(e.node, ==, PEER);
    g_assert_cmpuint(e.op, ==, FABRIC_TGR_WRITE);
    g_assert_cmpuint(e.off, ==, 0x10);
    card_down(c);
}

/* Accesses a PTE refuses send nothing and queue an event. */
static void test_initiator_refusals(void)
{
    Card *c = card_up();

    put_remote_pte(c, 0, TGR_R_ALL);
    put_pte(c, 2, TGR_PTE_MODE_REMOTE, TGR_R_ALL, 2, PEER, 9, 7, 0);
    put_remote_pte(c, 3, TGR_R_READ);
    route_irq(c);
    wr(c, REG(TGR_REG_IMR), TGR_INT_EVQ);

    wr(c, WIN(1, 0), 1);                                    /* no PTE */
    g_assert_cmpint(c->qt->irq_raised, ==, 1);
    g_assert_cmphex(rd(c, REG(TGR_REG_ISR)), ==, TGR_INT_EVQ);
    Event e = expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_NOPTE);
    g_assert_cmpuint(e.page, ==, 1);
    g_assert_cmpuint(e.ctx, ==, 1);
    g_assert_cmpuint(e.op, ==, FABRIC_TGR_WRITE);
    wr(c, REG(TGR_REG_ISR), TGR_INT_EVQ);
    g_assert_cmpint(c->qt->irq_lowered, >=, 1);
    wr(c, WIN(2, 0), 1);                                    /* ctx 2's */
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_BADCTX);
    wr(c, WIN(3, 0), 1);                                    /* read-only */
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_RIGHTS);
    wr(c, SHADOW(TGR_OP_REQ, 3, 0), 1);                     /* no REQ right */
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_RIGHTS);
    g_assert_cmphex(rd(c, WIN(1, 0)), ==, 0xffffffff);      /* load, no PTE */
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_NOPTE);
    g_assert_cmphex(rd(c, SHADOW(TGR_OP_REQ, 0, 0)), ==, 0xffffffff);
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_BADOP);
    put_pte(c, 4, TGR_PTE_MODE_REMOTE, TGR_R_ALL, 1, NODES + 3, 9, 7, 0);
    wr(c, WIN(4, 0), 1);                                    /* no such node */
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_UNREACHABLE);

    /* The kernel (context 0) may not use a process's page, nor latch. */
    wr(c, REG(TGR_REG_CUR_CTX), 0);
    wr(c, WIN(0, 0), 1);
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_BADCTX);
    wr(c, BAR4 + ARG, 16);
    e = expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_NOCTX);
    g_assert_cmpuint(e.op, ==, 0);
    g_assert_cmpuint(e.page, ==, 0);
    g_assert_cmphex(e.off, ==, ARG);
    g_assert_cmpuint(e.node, ==, 0);                        /* no PTE */
    g_assert_cmpuint(rd(c, BAR4 + ARG), ==, TGR_ERR_NOCTX);
    g_assert_true(ff_quiet(c->ff));
    g_assert_cmpuint(counter(c, TGR_CNT_LOCAL_ERR), ==, 9);
    g_assert_cmpuint(counter(c, TGR_CNT_WRITES), ==, 0);
    g_assert_cmpuint(counter(c, TGR_CNT_TX_FRAMES), ==, 0);
    card_down(c);
}

/* Send a reply to a read (or atomic) request of the card. */
static void reply(Card *c, const FabricTgrHdr *req, uint8_t op,
                  uint64_t value, uint8_t size)
{
    FabricTgrHdr t = { .op = op, .size = size, .tag = req->tag,
                       .eidx = req->eidx, .gen = req->gen, .off = req->off };
    uint8_t body[FABRIC_TGR_ATOMIC_REP_LEN] = { TGR_ERR_OK };

    if (op == FABRIC_TGR_READ_REP) {
        fabric_put_le64(body + FABRIC_TGR_REP_HDR_LEN, value);
        send_tgr(c, PEER, &t, body, FABRIC_TGR_REP_HDR_LEN + size);
    } else {
        fabric_put_le64(body + 8, value);
        send_tgr(c, PEER, &t, body, FABRIC_TGR_ATOMIC_REP_LEN);
    }
}

static void test_remote_read_split_phase(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t;

    put_remote_pte(c, 0, TGR_R_ALL);
    g_assert_cmphex(rd(c, WIN(0, 0x20)), ==, 0xffffffff);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_RD_PENDING, ==,
                    TGR_STATUS_RD_PENDING);
    g_assert_cmpuint(rd(c, REG(TGR_REG_RD_STATUS)), ==, TGR_ERR_PENDING);
    g_autofree uint8_t *p = expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t);
    g_assert_cmpuint(h.dst, ==, PEER);
    g_assert_cmpuint(t.size, ==, 4);
    g_assert_cmpuint(t.eidx, ==, 9);
    g_assert_cmpuint(t.gen, ==, 7);
    g_assert_cmpuint(t.off, ==, 0x20);
    g_assert_cmpuint(t.tag, !=, 0);
    g_assert_cmpuint(h.len, ==, FABRIC_TGR_HDR_LEN + FABRIC_TGR_READ_REQ_LEN);
    g_assert_cmpuint(fabric_get_le16(p + FABRIC_TGR_HDR_LEN), ==, 4);

    /* Asking again before the reply sends nothing new. */
    g_assert_cmphex(rd(c, WIN(0, 0x20)), ==, 0xffffffff);
    g_assert_true(ff_quiet(c->ff));
    reply(c, &t, FABRIC_TGR_READ_REP, 0xcafe1234, 4);
    g_assert_cmphex(rd(c, WIN(0, 0x20)), ==, 0xcafe1234);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_RD_PENDING, ==, 0);
    g_assert_cmpuint(rd(c, REG(TGR_REG_RD_STATUS)), ==, TGR_ERR_OK);
    g_assert_cmpuint(counter(c, TGR_CNT_READS), ==, 1);

    /* The next load is a new read. */
    g_assert_cmphex(rd(c, WIN(0, 0x20)), ==, 0xffffffff);
    g_free(expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t));
    reply(c, &t, FABRIC_TGR_READ_REP, 0x0badf00d, 4);
    g_assert_cmphex(rd(c, WIN(0, 0x20)), ==, 0x0badf00d);
    g_assert_cmpuint(counter(c, TGR_CNT_READS), ==, 2);
    card_down(c);
}

static void test_remote_read_failures(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t;
    uint8_t nack[FABRIC_TGR_NACK_LEN] = { FABRIC_TGR_READ_REQ,
                                          TGR_ERR_RIGHTS };

    put_remote_pte(c, 0, TGR_R_ALL);

    /* Refused by the target: a NACK with the read's tag. */
    g_assert_cmphex(rd(c, WIN(0, 0x30)), ==, 0xffffffff);
    g_free(expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t));
    FabricTgrHdr nt = { .op = FABRIC_TGR_NACK, .tag = t.tag, .eidx = t.eidx,
                        .gen = t.gen, .off = t.off };
    fabric_put_le32(nack + 4, t.seq);
    send_tgr(c, PEER, &nt, nack, sizeof(nack));
    g_assert_cmpuint(rd(c, REG(TGR_REG_RD_STATUS)), ==, TGR_ERR_RIGHTS);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_OUT), ==, 1);
    g_assert_cmpuint(counter(c, TGR_CNT_RREAD_FAIL), ==, 1);
    Event e = expect_event(c, TGR_EV_RREAD_FAIL, TGR_ERR_RIGHTS);
    g_assert_cmpuint(e.node, ==, PEER);
    g_assert_cmpuint(e.ctx, ==, 1);
    /* The driver signalled the task and acknowledges: all-ones, once. */
    wr(c, REG(TGR_REG_RD_ACK), 0);
    g_assert_cmphex(rd(c, WIN(0, 0x30)), ==, 0xffffffff);
    g_assert_true(ff_quiet(c->ff));
    g_assert_cmphex(rd(c, WIN(0, 0x30)), ==, 0xffffffff);   /* a new read */
    g_free(expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t));
    reply(c, &t, FABRIC_TGR_READ_REP, 0x31, 4);
    g_assert_cmphex(rd(c, WIN(0, 0x30)), ==, 0x31);
    drain_events(c);

    /* No reply: the timeout (virtual time) fails it. */
    wr(c, REG(TGR_REG_RREAD_TIMEOUT_US), 1000);
    g_assert_cmphex(rd(c, WIN(0, 0x40)), ==, 0xffffffff);
    g_free(expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t));
    clock_step(c, 500 * 1000);
    g_assert_cmpuint(rd(c, REG(TGR_REG_RD_STATUS)), ==, TGR_ERR_PENDING);
    clock_step(c, 600 * 1000);
    g_assert_cmpuint(rd(c, REG(TGR_REG_RD_STATUS)), ==, TGR_ERR_TIMEOUT);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_RD_PENDING, ==, 0);
    g_assert_cmpuint(counter(c, TGR_CNT_RREAD_FAIL), ==, 2);
    e = expect_event(c, TGR_EV_RREAD_FAIL, TGR_ERR_TIMEOUT);
    g_assert_cmpuint(e.page, ==, 0);
    g_assert_cmpuint(e.off, ==, 0x40);
    g_assert_cmphex(rd(c, WIN(0, 0x40)), ==, 0xffffffff);
    wr(c, REG(TGR_REG_RD_ACK), 0);

    /* The late reply is nobody's. */
    reply(c, &t, FABRIC_TGR_READ_REP, 0x12345678, 4);
    g_assert_cmpuint(counter(c, TGR_CNT_STALE_REPLIES), ==, 1);

    /* fabricd answers for a node that is not there: outside any sequence. */
    put_pte(c, 1, TGR_PTE_MODE_REMOTE, TGR_R_ALL, 1, 3, 9, 7, 0);
    g_assert_cmphex(rd(c, WIN(1, 0)), ==, 0xffffffff);
    g_free(expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t));
    g_assert_cmpuint(h.dst, ==, 3);
    uint8_t un[FABRIC_TGR_HDR_LEN + FABRIC_TGR_NACK_LEN] = { 0 };
    FabricTgrHdr ut = { .op = FABRIC_TGR_NACK, .tag = t.tag, .eidx = t.eidx,
                        .gen = t.gen, .off = t.off };
    fabric_tgr_hdr_encode(&ut, un);
    un[FABRIC_TGR_HDR_LEN] = FABRIC_TGR_READ_REQ;
    un[FABRIC_TGR_HDR_LEN + 1] = TGR_ERR_UNREACHABLE;
    fabric_put_le32(un + FABRIC_TGR_HDR_LEN + 4, t.seq);
    uint32_t rx = counter(c, TGR_CNT_RX_FRAMES);
    ff_send(c->ff, K, FABRIC_TYPE_DATA, 3, NODE, un, sizeof(un));
    wait_counter(c, TGR_CNT_RX_FRAMES, rx + 1);
    g_assert_cmpuint(rd(c, REG(TGR_REG_RD_STATUS)), ==, TGR_ERR_UNREACHABLE);
    expect_event(c, TGR_EV_RREAD_FAIL, TGR_ERR_UNREACHABLE);
    g_assert_cmphex(rd(c, WIN(1, 0)), ==, 0xffffffff);
    wr(c, REG(TGR_REG_RD_ACK), 0);
    g_assert_cmpuint(counter(c, TGR_CNT_SEQ_GAPS), ==, 0);
    card_down(c);
}

/* fetch_inc is one load; FADD, SWAP, CAS store the operand, load the result */
static void test_initiator_atomics(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t;
    uint8_t *p;
    const struct {
        uint8_t op, aop, size, word;
        uint64_t stored, a, b;
    } ops[] = {
        { TGR_OP_FADD, FABRIC_TGR_AOP_FADD, 4, 4, 5, 5, 0 },
        { TGR_OP_FADD, FABRIC_TGR_AOP_FADD, 8, 8, 1ull << 40, 1ull << 40, 0 },
        { TGR_OP_SWAP, FABRIC_TGR_AOP_SWAP, 4, 4, 0x77, 0x77, 0 },
        { TGR_OP_CAS, FABRIC_TGR_AOP_CAS, 8, 4, 0x99ull << 32 | 0x88, 0x88,
          0x99 },
    };

    put_remote_pte(c, 0, TGR_R_ALL);
    g_assert_cmphex(rd(c, SHADOW(TGR_OP_FADD, 0, 0x40)), ==, 0xffffffff);
    p = expect_tgr(c, FABRIC_TGR_ATOMIC_REQ, &h, &t);
    g_assert_cmpuint(t.size, ==, 4);
    g_assert_cmpuint(t.off, ==, 0x40);
    g_assert_cmpuint(t.tag, !=, 0);
    g_assert_cmpuint(h.len, ==, FABRIC_TGR_HDR_LEN +
                                FABRIC_TGR_ATOMIC_REQ_LEN);
    g_assert_cmpint(p[FABRIC_TGR_HDR_LEN], ==, FABRIC_TGR_AOP_FADD);
    g_assert_cmpuint(fabric_get_le64(p + FABRIC_TGR_HDR_LEN + 8), ==, 1);
    g_free(p);
    reply(c, &t, FABRIC_TGR_ATOMIC_REP, 41, 4);
    g_assert_cmpuint(rd(c, SHADOW(TGR_OP_FADD, 0, 0x40)), ==, 41);

    for (unsigned i = 0; i < G_N_ELEMENTS(ops); i++) {
        uint16_t off = 0x80 + 8 * i;

        if (ops[i].size == 8) {
            wrq(c, SHADOW(ops[i].op, 0, off), ops[i].stored);
        } else {
            wr(c, SHADOW(ops[i].op, 0, off), ops[i].stored);
        }
        p = expect_tgr(c, FABRIC_TGR_ATOMIC_REQ, &h, &t);
        g_assert_cmpuint(t.off, ==, off);
        g_assert_cmpuint(t.size, ==, ops[i].word);
        g_assert_cmpint(p[FABRIC_TGR_HDR_LEN], ==, ops[i].aop);
        g_assert_cmphex(fabric_get_le64(p + FABRIC_TGR_HDR_LEN + 8), ==,
                        ops[i].a);
        g_assert_cmphex(fabric_get_le64(p + FABRIC_TGR_HDR_LEN + 16), ==,
                        ops[i].b);
        g_free(p);
        reply(c, &t, FABRIC_TGR_ATOMIC_REP, 0x1000 + i, ops[i].word);
        if (ops[i].word == 8) {
            g_assert_cmphex(rdq(c, SHADOW(ops[i].op, 0, off)), ==,
                            0x1000 + i);
        } else {
            g_assert_cmphex(rd(c, SHADOW(ops[i].op, 0, off)), ==, 0x1000 + i);
        }
    }
    g_assert_cmpuint(counter(c, TGR_CNT_ATOMICS), ==, 5);

    /* Wrong shapes: nothing is sent. */
    wr(c, SHADOW(TGR_OP_CAS, 0, 0xc0), 1);                  /* CAS is 8 */
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_BADSIZE);
    wr(c, SHADOW(TGR_OP_SWAP, 0, 0xc2), 1);                 /* unaligned */
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_BADSIZE);
    g_assert_cmphex(rd(c, SHADOW(TGR_OP_SWAP, 0, 0xc4)), ==, 0xffffffff);
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_NOARGS);     /* no store */
    g_assert_cmpuint(counter(c, TGR_CNT_ATOMICS), ==, 5);
    g_assert_true(ff_quiet(c->ff));
    card_down(c);
}

/*
 * A process preempted inside its atomic keeps its request: the other
 * context's atomic on the same vCPU does not make the device send the
 * first one again (fetch_and_increment must count once).
 */
static void test_atomics_across_context_switch(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr ta, tb;

    wr(c, REG(TGR_CTX_TABLE + TGR_CTX_ENTRY * 2 + 8), TGR_CTXF_VALID);
    put_remote_pte(c, 0, TGR_R_ALL);
    put_pte(c, 1, TGR_PTE_MODE_REMOTE, TGR_R_ALL, 2, PEER, 9, 7, 0);
    g_assert_cmphex(rd(c, SHADOW(TGR_OP_FADD, 0, 0x40)), ==, 0xffffffff);
    g_free(expect_tgr(c, FABRIC_TGR_ATOMIC_REQ, &h, &ta));
    wr(c, REG(TGR_REG_CUR_CTX), 0);                         /* switch */
    wr(c, REG(TGR_REG_CUR_CTX), 2);
    g_assert_cmphex(rd(c, SHADOW(TGR_OP_FADD, 1, 0x40)), ==, 0xffffffff);
    g_free(expect_tgr(c, FABRIC_TGR_ATOMIC_REQ, &h, &tb));
    g_assert_cmpuint(ta.tag, !=, tb.tag);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_RD_PENDING, ==,
                    TGR_STATUS_RD_PENDING);
    reply(c, &tb, FABRIC_TGR_ATOMIC_REP, 20, 4);
    reply(c, &ta, FABRIC_TGR_ATOMIC_REP, 10, 4);
    g_assert_cmpuint(rd(c, SHADOW(TGR_OP_FADD, 1, 0x40)), ==, 20);
    wr(c, REG(TGR_REG_CUR_CTX), 1);                         /* back to 1 */
    g_assert_cmpuint(rd(c, SHADOW(TGR_OP_FADD, 0, 0x40)), ==, 10);
    g_assert_true(ff_quiet(c->ff));
    g_assert_cmpuint(counter(c, TGR_CNT_ATOMICS), ==, 2);
    g_assert_cmpuint(counter(c, TGR_CNT_STALE_REPLIES), ==, 0);
    card_down(c);
}

/* Argument store to the local mirror, then the trigger. */
static void test_fetch_dma_and_bad_shadow(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t;
    uint8_t *p;

    put_remote_pte(c, 0, TGR_R_ALL);
    for (int i = 0; i < 4; i++) {
        wr(c, ARG + 4 * i, 0xd0d0d000 + i);
    }
    wr(c, BAR4 + ARG, 16);                                  /* latch */
    g_assert_cmpuint(rd(c, BAR4 + ARG), ==, 0);
    g_assert_cmpuint(rd(c, SHADOW(TGR_OP_DMA_PUT, 0, 0x100)), ==, 0);
    p = expect_tgr(c, FABRIC_TGR_WRITE, &h, &t);
    g_assert_cmpuint(t.eidx, ==, 9);
    g_assert_cmpuint(t.off, ==, 0x100);
    g_assert_cmpuint(t.size, ==, 0);
    g_assert_cmpuint(h.len, ==, FABRIC_TGR_HDR_LEN + 16);
    for (int i = 0; i < 4; i++) {
        g_assert_cmphex(fabric_get_le32(p + FABRIC_TGR_HDR_LEN + 4 * i), ==,
                        0xd0d0d000 + i);
    }
    g_free(p);
    g_assert_cmpuint(rd(c, CTX_STATUS + TGR_STATUS_DONE), ==, 1);
    /* Refused at the target later: the context's errors word counts it. */
    uint8_t nack[FABRIC_TGR_NACK_LEN] = { FABRIC_TGR_WRITE, TGR_ERR_RIGHTS };
    FabricTgrHdr nt = { .op = FABRIC_TGR_NACK, .tag = t.tag, .eidx = 9,
                        .gen = 7, .off = 0x100 };
    fabric_put_le32(nack + 4, t.seq);
    send_tgr(c, PEER, &nt, nack, sizeof(nack));
    g_assert_cmpuint(rd(c, CTX_STATUS + TGR_STATUS_ERRORS), ==, 1);
    expect_event(c, TGR_EV_VIOL_OUT, TGR_ERR_RIGHTS);
    /* The latch was consumed. */
    g_assert_cmpuint(rd(c, SHADOW(TGR_OP_DMA_PUT, 0, 0x100)), ==,
                     TGR_ERR_NOARGS);
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_NOARGS);
    g_assert_true(ff_quiet(c->ff));

    /* FETCH: the remote word lands at the latched address. */
    wr(c, BAR4 + ARG + 0x40, 0);
    wr(c, SHADOW(TGR_OP_FETCH, 0, 0x200), 0);
    p = expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t);
    g_assert_cmpuint(t.off, ==, 0x200);
    g_assert_cmpuint(fabric_get_le16(p + FABRIC_TGR_HDR_LEN), ==, 4);
    g_free(p);
    reply(c, &t, FABRIC_TGR_READ_REP, 0xfe7c4ed0, 4);
    g_assert_true(qt_wait_reg(c->qt, ARG + 0x40, ~0u, 0xfe7c4ed0));
    g_assert_true(qt_wait_reg(c->qt, CTX_STATUS + TGR_STATUS_DONE, ~0u, 2));
    g_assert_cmpuint(rd(c, CTX_STATUS + TGR_STATUS_ERRORS), ==, 1);

    /* DMA_GET: the latched length from the remote page to P. */
    wr(c, BAR4 + ARG + 0x80, 8);
    g_assert_cmpuint(rd(c, SHADOW(TGR_OP_DMA_GET, 0, 0x300)), ==, 0);
    p = expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t);
    g_assert_cmpuint(t.off, ==, 0x300);
    g_assert_cmpuint(t.size, ==, 0);
    g_assert_cmpuint(fabric_get_le16(p + FABRIC_TGR_HDR_LEN), ==, 8);
    g_free(p);
    reply(c, &t, FABRIC_TGR_READ_REP, 0x8877665544332211ull, 8);
    g_assert_true(qt_wait_reg(c->qt, CTX_STATUS + TGR_STATUS_DONE, ~0u, 3));
    g_assert_cmphex(rdq(c, ARG + 0x80), ==, 0x8877665544332211ull);
    g_assert_cmpuint(counter(c, TGR_CNT_DMA), ==, 3);

    /* A context that goes away (its file closed) drops its transfers. */
    wr(c, ARG + 0xc0, 0x11111111);
    wr(c, BAR4 + ARG + 0xc0, 0);
    wr(c, SHADOW(TGR_OP_FETCH, 0, 0x210), 0);
    g_free(expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t));
    wr(c, REG(TGR_CTX_TABLE + TGR_CTX_ENTRY * 1 + 8), 0);
    uint32_t stale = counter(c, TGR_CNT_STALE_REPLIES);
    reply(c, &t, FABRIC_TGR_READ_REP, 0x22222222, 4);
    g_assert_cmpuint(counter(c, TGR_CNT_STALE_REPLIES), ==, stale + 1);
    g_assert_cmphex(rd(c, ARG + 0xc0), ==, 0x11111111);
    wr(c, REG(TGR_CTX_TABLE + TGR_CTX_ENTRY * 1 + 8), TGR_CTXF_VALID);
    drain_events(c);

    /* One transfer never crosses a page, local or remote. */
    wr(c, BAR4 + ARG, 0x200);
    g_assert_cmpuint(rd(c, SHADOW(TGR_OP_DMA_PUT, 0, 0xf00)), ==,
                     TGR_ERR_RANGE);
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_RANGE);
    wr(c, BAR4 + ARG + 0xff8, 16);
    g_assert_cmpuint(rd(c, SHADOW(TGR_OP_DMA_GET, 0, 0)), ==, TGR_ERR_RANGE);
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_RANGE);
    g_assert_true(ff_quiet(c->ff));

    /* A CUR_CTX write (a context switch) drops a latch. */
    wr(c, BAR4 + ARG, 16);
    wr(c, REG(TGR_REG_CUR_CTX), 1);
    g_assert_cmpuint(rd(c, BAR4 + ARG), !=, 0);
    drain_events(c);

    /* Bad shadow accesses: no frame, an event each. */
    wr(c, SHADOW(7, 0, 0), 1);
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_BADOP);
    g_assert_cmphex(rd(c, SHADOW(7, 0, 0)), ==, 0xffffffff);
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_BADOP);
    wr(c, BAR4 + 0x10000000, 16);                           /* above RAM */
    g_assert_cmpuint(rd(c, BAR4 + 0x10000000), !=, 0);
    Event e = { 0 };
    g_assert_true(next_event(c, &e));
    g_assert_cmpint(e.type, ==, TGR_EV_LOCAL_ERR);
    g_assert_true(e.reason == TGR_ERR_BADADDR || e.reason == TGR_ERR_RANGE);
    drain_events(c);
    g_assert_cmpuint(rd(c, SHADOW(TGR_OP_DMA_GET, 0, 0)), ==,
                     TGR_ERR_NOARGS);
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_NOARGS);
    g_assert_true(ff_quiet(c->ff));
    card_down(c);
}

/* A ring of 4 holds 3 events; the next is lost and counted. */
static void test_event_ring_full(void)
{
    Card *c = card_up();

    wr(c, REG(TGR_REG_EVQ_ENTRIES), 4);
    for (int i = 0; i < 4; i++) {
        wr(c, WIN(1, 4 * i), 1);                            /* no PTE */
    }
    g_assert_cmpuint(rd(c, REG(TGR_REG_EVQ_PROD)), ==, 3);
    g_assert_cmpuint(counter(c, TGR_CNT_EVQ_LOST), ==, 1);
    g_assert_cmphex(rd(c, REG(TGR_REG_ISR)) & (TGR_INT_EVQ | TGR_INT_EVQ_LOST),
                    ==, TGR_INT_EVQ | TGR_INT_EVQ_LOST);
    for (int i = 0; i < 3; i++) {
        g_assert_cmphex(rd(c, EVQ + TGR_EV_ENTRY * i) & 0xffff, ==,
                        TGR_ERR_NOPTE << 8 | TGR_EV_LOCAL_ERR);
        g_assert_cmpuint(rd(c, EVQ + TGR_EV_ENTRY * i + 12), ==, 4 * i);
    }
    wr(c, REG(TGR_REG_EVQ_CONS), 3);
    wr(c, WIN(1, 0x40), 1);
    g_assert_cmpuint(rd(c, REG(TGR_REG_EVQ_PROD)), ==, 0);  /* wrapped */
    g_assert_cmpuint(rd(c, EVQ + TGR_EV_ENTRY * 3 + 12), ==, 0x40);
    g_assert_cmpuint(counter(c, TGR_CNT_EVQ_LOST), ==, 1);
    card_down(c);
}

/* ---- multicast, counters, loopback -------------------------------------- */

static void test_multicast(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t;
    uint8_t *p;
    const uint32_t group = 3, leidx = 5;

    put_export(c, leidx, PAGE(leidx), exp_rights(RW) | TGR_EXP_MCAST, 1, 1,
               0);
    wr(c, REG(TGR_REG_GROUP_EIDX + 4 * group), leidx);
    p = expect_control(c, FABRIC_CTL_TGR_JOIN, &h);
    g_assert_cmpuint(h.len, ==, FABRIC_TGR_GROUP_LEN);
    g_assert_cmpuint(fabric_get_le16(p + 1), ==, group);
    g_free(p);

    put_pte(c, 4, TGR_PTE_MODE_MCAST, RW, 1, group, 0, leidx << 16, 0);
    wr(c, WIN(4, 0x8), 0xabcd);
    p = expect_tgr(c, FABRIC_TGR_MCAST_WRITE, &h, &t);
    g_assert_cmpuint(h.dst, ==, FABRIC_NODE_ALL);
    g_assert_cmphex(t.eidx, ==, FABRIC_TGR_MCAST_EIDX(group, 0));
    g_assert_cmpuint(t.off, ==, 8);
    g_assert_cmpuint(t.size, ==, 4);
    g_assert_cmphex(fabric_get_le32(p + FABRIC_TGR_HDR_LEN), ==, 0xabcd);
    g_assert_cmpuint(counter(c, TGR_CNT_MCAST), ==, 1);
    /* The writer's copy changes when fabricd's echo comes back. */
    g_assert_cmphex(rd(c, PAGE(leidx) + 8), ==, 0);
    uint32_t rx = counter(c, TGR_CNT_RX_FRAMES);
    ff_send(c->ff, K, FABRIC_TYPE_DATA, NODE, FABRIC_NODE_ALL, p, h.len);
    wait_counter(c, TGR_CNT_RX_FRAMES, rx + 1);
    g_free(p);
    g_assert_cmphex(rd(c, PAGE(leidx) + 8), ==, 0xabcd);

    /* Another member's write; loads read the local copy at once. */
    FabricTgrHdr mt = { .op = FABRIC_TGR_MCAST_WRITE, .size = 4,
                        .eidx = FABRIC_TGR_MCAST_EIDX(group, 0),
                        .off = 0x10 };
    uint8_t data[4];
    fabric_put_le32(data, 0x5eed);
    send_tgr(c, PEER, &mt, data, sizeof(data));
    g_assert_cmphex(rd(c, PAGE(leidx) + 0x10), ==, 0x5eed);
    g_assert_cmphex(rd(c, WIN(4, 0x10)), ==, 0x5eed);
    g_assert_cmphex(rd(c, REG(TGR_REG_CTRL)) & TGR_STATUS_RD_PENDING, ==, 0);
    g_assert_true(ff_quiet(c->ff));

    /* Unicast and multicast from one peer are numbered apart. */
    put_export(c, 4, PAGE(4), exp_rights(RW), 1, 1, 0);
    send_write32(c, 4, 1, 0, 0x4444);
    mt.off = 0x14;
    send_tgr(c, PEER, &mt, data, sizeof(data));
    g_assert_cmphex(rd(c, PAGE(leidx) + 0x14), ==, 0x5eed);
    g_assert_cmpuint(counter(c, TGR_CNT_SEQ_GAPS), ==, 0);

    /* A group bound to a page that is not a multicast copy: refused. */
    wr(c, REG(TGR_REG_GROUP_EIDX + 4 * 7), 4);
    g_free(expect_control(c, FABRIC_CTL_TGR_JOIN, &h));
    FabricTgrHdr bad = { .op = FABRIC_TGR_MCAST_WRITE, .size = 4,
                         .eidx = FABRIC_TGR_MCAST_EIDX(7, 0), .off = 0 };
    send_tgr(c, PEER, &bad, data, sizeof(data));
    g_assert_cmphex(rd(c, PAGE(4)), ==, 0x4444);
    expect_event(c, TGR_EV_VIOL_IN, TGR_ERR_RIGHTS);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_IN), ==, 1);
    g_assert_true(ff_quiet(c->ff));                         /* no NACK */

    /* Leaving: a LEAVE, and later copies are not applied. */
    wr(c, REG(TGR_REG_GROUP_EIDX + 4 * group), TGR_GROUP_NONE);
    g_free(expect_control(c, FABRIC_CTL_TGR_LEAVE, &h));
    fabric_put_le32(data, 0xdead);
    mt.off = 0x10;
    send_tgr(c, PEER, &mt, data, sizeof(data));
    g_assert_cmphex(rd(c, PAGE(leidx) + 0x10), ==, 0x5eed);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_IN), ==, 1);
    card_down(c);
}

static void test_access_counter(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t;

    put_pte(c, 6, TGR_PTE_MODE_REMOTE, TGR_R_ALL, 1, PEER, 9, 7, 2);
    wr(c, WIN(6, 0), 1);
    g_free(expect_tgr(c, FABRIC_TGR_WRITE, &h, &t));
    g_assert_cmpuint(rd(c, PTE(6, 3)), ==, 1);
    g_assert_cmpuint(counter(c, TGR_CNT_CNT_ZERO), ==, 0);
    wr(c, SHADOW(TGR_OP_REQ, 6, 0), 2);                     /* shadow counts */
    g_free(expect_tgr(c, FABRIC_TGR_REQ, &h, &t));
    g_assert_cmpuint(rd(c, PTE(6, 3)), ==, 0);
    g_assert_cmpuint(counter(c, TGR_CNT_CNT_ZERO), ==, 1);
    Event e = expect_event(c, TGR_EV_CNT_ZERO, TGR_ERR_OK);
    g_assert_cmpuint(e.page, ==, 6);
    g_assert_cmpuint(e.ctx, ==, 1);
    /* Off now: accesses go on, no more events. */
    wr(c, WIN(6, 4), 3);
    g_free(expect_tgr(c, FABRIC_TGR_WRITE, &h, &t));
    g_assert_cmpuint(counter(c, TGR_CNT_CNT_ZERO), ==, 1);
    g_assert_false(next_event(c, &e));
    card_down(c);
}

static void test_loopback(void)
{
    Card *c = card_up();

    put_export(c, 4, PAGE(4), exp_rights(TGR_R_ALL), 1, 1, 0);
    put_pte(c, 0, TGR_PTE_MODE_REMOTE, TGR_R_ALL, 1, NODE, 4, 1, 0);
    wr(c, WIN(0, 0x20), 0x100b);
    clock_step(c, 1000);
    g_assert_true(qt_wait_reg(c->qt, PAGE(4) + 0x20, ~0u, 0x100b));

    /* A read of our own page: request and reply through the loop. */
    g_assert_cmphex(rd(c, WIN(0, 0x20)), ==, 0xffffffff);
    clock_step(c, 1000);
    g_assert_cmphex(rd(c, WIN(0, 0x20)), ==, 0x100b);
    g_assert_cmpuint(rd(c, REG(TGR_REG_RD_STATUS)), ==, TGR_ERR_OK);

    /* A REQ into our own queue. */
    put_queue_export(c);
    put_queue(c, QBUF, QWORDS, 3, 3);
    put_pte(c, 1, TGR_PTE_MODE_REMOTE, TGR_R_REQ, 1, NODE, QEIDX, QGEN, 0);
    wr(c, SHADOW(TGR_OP_REQ, 1, 0), 0x5e1f);
    clock_step(c, 1000);
    g_assert_true(qt_wait_reg(c->qt, QBUF, ~0u, QWORDS << 16 | 4));
    g_assert_cmphex(qword(c, 3), ==, 0x5e1f);
    g_assert_cmpuint(counter(c, TGR_CNT_REQS_IN), ==, 1);
    g_assert_true(ff_quiet(c->ff));
    card_down(c);
}

/* Losing fabricd fails what waits on the network; nothing more is sent. */
static void test_link_loss(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t;

    put_remote_pte(c, 0, TGR_R_ALL);
    g_assert_cmphex(rd(c, WIN(0, 0)), ==, 0xffffffff);
    g_free(expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t));
    wr(c, REG(TGR_REG_ISR), ~0u);
    close(c->ff->fd);
    c->ff->fd = -1;
    g_assert_true(qt_wait_reg(c->qt, REG(TGR_REG_CTRL), TGR_STATUS_LINK_UP,
                              0));
    g_assert_cmpuint(rd(c, REG(TGR_REG_NODES)), ==, 0);
    g_assert_cmphex(rd(c, REG(TGR_REG_ISR)) & TGR_INT_LINK, ==, TGR_INT_LINK);
    g_assert_cmpuint(rd(c, REG(TGR_REG_RD_STATUS)), ==, TGR_ERR_UNREACHABLE);
    expect_event(c, TGR_EV_RREAD_FAIL, TGR_ERR_UNREACHABLE);
    g_assert_cmphex(rd(c, WIN(0, 0)), ==, 0xffffffff);
    wr(c, WIN(0, 4), 1);
    expect_event(c, TGR_EV_LOCAL_ERR, TGR_ERR_UNREACHABLE);
    g_assert_cmpuint(counter(c, TGR_CNT_WRITES), ==, 0);
    card_down(c);
}

/* ---- sequence gaps, peer resets ------------------------------------------ */

static void test_seq_gap_and_peer_reset(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t;
    uint8_t reset[FABRIC_TGR_GROUP_LEN] = { FABRIC_CTL_TGR_PEER_RESET };

    put_export(c, 4, PAGE(4), exp_rights(RW), 1, 1, 0);
    send_write32(c, 4, 1, 0, 1);
    c->seq[PEER] += 3;                                      /* 3 lost */
    send_write32(c, 4, 1, 4, 2);
    g_assert_cmpuint(rd(c, PAGE(4) + 4), ==, 2);            /* still applied */
    g_assert_cmpuint(counter(c, TGR_CNT_SEQ_GAPS), ==, 1);
    Event e = expect_event(c, TGR_EV_SEQ_GAP, TGR_ERR_OK);
    g_assert_cmpuint(e.node, ==, PEER);
    g_assert_cmpuint(e.page, ==, 1);                        /* expected */
    g_assert_cmpuint(e.off, ==, 4);                         /* got */

    /* PEER restarts while our read waits for it. */
    put_remote_pte(c, 0, TGR_R_ALL);
    g_assert_cmphex(rd(c, WIN(0, 0)), ==, 0xffffffff);
    g_free(expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t));
    fabric_put_le16(reset + 1, PEER);
    send_control(c, reset, sizeof(reset));
    g_assert_true(qt_wait_reg(c->qt, REG(TGR_REG_RD_STATUS), ~0u,
                              TGR_ERR_PEER_RESET));
    g_assert_cmpuint(counter(c, TGR_CNT_RREAD_FAIL), ==, 1);
    g_assert_cmpuint(expect_event(c, TGR_EV_PEER_RESET,
                                  TGR_ERR_PEER_RESET).node, ==, PEER);
    expect_event(c, TGR_EV_RREAD_FAIL, TGR_ERR_PEER_RESET);
    wr(c, REG(TGR_REG_RD_ACK), 0);

    /* Its new life starts at seq 0 again, without a gap. */
    c->seq[PEER] = 0;
    send_write32(c, 4, 1, 8, 3);
    g_assert_cmpuint(rd(c, PAGE(4) + 8), ==, 3);
    g_assert_cmpuint(counter(c, TGR_CNT_SEQ_GAPS), ==, 1);
    card_down(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/telegraphos/identity-and-reset-state",
                    test_identity_and_reset_state);
    g_test_add_func("/telegraphos/system-reset", test_system_reset);
    g_test_add_func("/telegraphos/properties", test_properties);
    g_test_add_func("/telegraphos/req-fsm-and-wrap", test_req_fsm_and_wrap);
    g_test_add_func("/telegraphos/req-overflow-stop-resume",
                    test_req_overflow_stop_resume);
    g_test_add_func("/telegraphos/hold-back-pressure",
                    test_hold_back_pressure);
    g_test_add_func("/telegraphos/export-check", test_export_check);
    g_test_add_func("/telegraphos/target-read-write-atomics",
                    test_target_read_write_atomics);
    g_test_add_func("/telegraphos/initiator-write-and-req",
                    test_initiator_write_and_req);
    g_test_add_func("/telegraphos/initiator-refusals",
                    test_initiator_refusals);
    g_test_add_func("/telegraphos/remote-read-split-phase",
                    test_remote_read_split_phase);
    g_test_add_func("/telegraphos/remote-read-failures",
                    test_remote_read_failures);
    g_test_add_func("/telegraphos/initiator-atomics", test_initiator_atomics);
    g_test_add_func("/telegraphos/atomics-across-context-switch",
                    test_atomics_across_context_switch);
    g_test_add_func("/telegraphos/fetch-dma-and-bad-shadow",
                    test_fetch_dma_and_bad_shadow);
    g_test_add_func("/telegraphos/multicast", test_multicast);
    g_test_add_func("/telegraphos/access-counter", test_access_counter);
    g_test_add_func("/telegraphos/loopback", test_loopback);
    g_test_add_func("/telegraphos/link-loss", test_link_loss);
    g_test_add_func("/telegraphos/event-ring-full", test_event_ring_full);
    g_test_add_func("/telegraphos/seq-gap-and-peer-reset",
                    test_seq_gap_and_peer_reset);
    return g_test_run();
}
