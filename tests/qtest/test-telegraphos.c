/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest device tests for -device telegraphos (docs/hw/telegraphos.md).
 * The test plays fabricd (and every peer node) on the card's chardev and
 * writes the driver's tables into guest RAM by qtest.  Without a vCPU,
 * remote reads are split-phase, and the virtual clock moves only by
 * clock_step.
 *
 * The target side's cases are in test-telegraphos-target.c, the shared
 * fixture in tgr-fixture.h.
 */
#include "tgr-fixture.h"

/* ---- plumbing ---------------------------------------------------------- */

static void wrw(Card *c, uint64_t addr, uint16_t v)
{
    g_free(qt_cmd(c->qt, "writew 0x%" PRIx64 " 0x%x", addr, v));
}

/* ---- events ------------------------------------------------------------ */

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
    g_assert_cmpuint(rd(c, REG(TGR_REG_RREAD_TIMEOUT_US)), ==, 1000000);
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

/*
 * A forging peer (issue 13, finding 4): node FORGER sees, or guesses, the
 * tag of a request the card sent to PEER.  Its replies and NACKs answer
 * nothing: they must come from the node the request went to.  fabricd
 * stamps the source, so the forger cannot claim to be PEER.
 */
#define FORGER 3

static void send_nack(Card *c, uint16_t src, uint32_t tag, uint8_t op,
                      uint8_t reason, uint32_t eidx, uint16_t gen,
                      uint16_t off)
{
    uint8_t nack[FABRIC_TGR_NACK_LEN] = { op, reason };
    FabricTgrHdr nt = { .op = FABRIC_TGR_NACK, .tag = tag, .eidx = eidx,
                        .gen = gen, .off = off };

    send_tgr(c, src, &nt, nack, sizeof(nack));
}

static void test_forged_replies_and_nacks(void)
{
    Card *c = card_up();
    FabricHdr h;
    FabricTgrHdr t, ft;
    uint8_t body[FABRIC_TGR_REP_HDR_LEN + 4] = { TGR_ERR_OK };

    put_remote_pte(c, 0, TGR_R_ALL);

    /* A read waits for PEER; the forger answers it first. */
    g_assert_cmphex(rd(c, WIN(0, 0x20)), ==, 0xffffffff);
    g_free(expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t));
    ft = (FabricTgrHdr) { .op = FABRIC_TGR_READ_REP, .size = 4,
                          .tag = t.tag, .eidx = t.eidx, .gen = t.gen,
                          .off = t.off };
    fabric_put_le32(body + FABRIC_TGR_REP_HDR_LEN, 0x666);
    send_tgr(c, FORGER, &ft, body, sizeof(body));
    g_assert_cmpuint(counter(c, TGR_CNT_STALE_REPLIES), ==, 1);
    g_assert_cmphex(rd(c, WIN(0, 0x20)), ==, 0xffffffff);   /* still waits */
    g_assert_cmpuint(rd(c, REG(TGR_REG_RD_STATUS)), ==, TGR_ERR_PENDING);

    /* A forged STALE NACK for it: no failure, no VIOL_OUT, no event. */
    send_nack(c, FORGER, t.tag, FABRIC_TGR_READ_REQ, TGR_ERR_STALE, t.eidx,
              t.gen, t.off);
    g_assert_cmpuint(counter(c, TGR_CNT_STALE_REPLIES), ==, 2);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_OUT), ==, 0);
    g_assert_cmpuint(counter(c, TGR_CNT_RREAD_FAIL), ==, 0);
    g_assert_cmpuint(rd(c, REG(TGR_REG_RD_STATUS)), ==, TGR_ERR_PENDING);

    /* PEER's own reply of the wrong kind does not count either. */
    ft.op = FABRIC_TGR_ATOMIC_REP;
    uint8_t arep[FABRIC_TGR_ATOMIC_REP_LEN] = { TGR_ERR_OK };
    send_tgr(c, PEER, &ft, arep, sizeof(arep));
    g_assert_cmpuint(counter(c, TGR_CNT_STALE_REPLIES), ==, 3);
    g_assert_cmpuint(rd(c, REG(TGR_REG_RD_STATUS)), ==, TGR_ERR_PENDING);

    /* PEER's reply completes it with PEER's value. */
    reply(c, &t, FABRIC_TGR_READ_REP, 0xcafe, 4);
    g_assert_cmphex(rd(c, WIN(0, 0x20)), ==, 0xcafe);
    pull_events(c);
    g_assert_cmpuint(c->events->len, ==, 0);

    /* A posted store to PEER: the forger's STALE NACK would revoke it. */
    wr(c, WIN(0, 0x10), 1);
    g_free(expect_tgr(c, FABRIC_TGR_WRITE, &h, &t));
    g_assert_cmphex(t.tag, ==, POSTED_TAG(1, 0));
    send_nack(c, FORGER, t.tag, FABRIC_TGR_WRITE, TGR_ERR_STALE, 9, 7,
              0x10);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_OUT), ==, 0);
    g_assert_cmpuint(counter(c, TGR_CNT_STALE_REPLIES), ==, 4);
    pull_events(c);
    g_assert_cmpuint(c->events->len, ==, 0);
    /* PEER's NACK for another export (an old mapping of the page): no. */
    send_nack(c, PEER, t.tag, FABRIC_TGR_WRITE, TGR_ERR_STALE, 9, 6, 0x10);
    send_nack(c, PEER, t.tag, FABRIC_TGR_WRITE, TGR_ERR_STALE, 8, 7, 0x10);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_OUT), ==, 0);
    g_assert_cmpuint(counter(c, TGR_CNT_STALE_REPLIES), ==, 6);
    /* PEER's own NACK counts. */
    send_nack(c, PEER, t.tag, FABRIC_TGR_WRITE, TGR_ERR_STALE, 9, 7, 0x10);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_OUT), ==, 1);
    Event e = expect_event(c, TGR_EV_VIOL_OUT, TGR_ERR_STALE);
    g_assert_cmpuint(e.ctx, ==, 1);
    g_assert_cmpuint(e.page, ==, 0);
    g_assert_cmpuint(e.node, ==, PEER);

    /*
     * The page is unmapped before the NACK comes (the driver's one-store
     * kernel pages): PEER's NACK still counts, the forger's still not.
     */
    wr(c, WIN(0, 0x14), 2);
    g_free(expect_tgr(c, FABRIC_TGR_WRITE, &h, &t));
    wr(c, PTE(0, 0), 0);
    send_nack(c, FORGER, t.tag, FABRIC_TGR_WRITE, TGR_ERR_RIGHTS, 9, 7,
              0x14);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_OUT), ==, 1);
    send_nack(c, PEER, t.tag, FABRIC_TGR_WRITE, TGR_ERR_RIGHTS, 9, 7, 0x14);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_OUT), ==, 2);
    expect_event(c, TGR_EV_VIOL_OUT, TGR_ERR_RIGHTS);
    /* Mapped again, to another export: the old mapping's NACK is stale. */
    put_pte(c, 0, TGR_PTE_MODE_REMOTE, TGR_R_ALL, 1, PEER, 10, 3, 0);
    send_nack(c, PEER, t.tag, FABRIC_TGR_WRITE, TGR_ERR_STALE, 9, 7, 0x14);
    g_assert_cmpuint(counter(c, TGR_CNT_VIOL_OUT), ==, 2);
    g_assert_cmpuint(counter(c, TGR_CNT_STALE_REPLIES), ==, 8);
    put_remote_pte(c, 0, TGR_R_ALL);

    /*
     * Tags are not a counter: the same record's tags of 32 reads in a
     * row differ in random bits, so a node that saw one cannot name the
     * next.
     */
    uint32_t prev = 0, steps = 0;
    GHashTable *seen = g_hash_table_new(NULL, NULL);
    for (int i = 0; i < 32; i++) {
        g_assert_cmphex(rd(c, WIN(0, 0x30)), ==, 0xffffffff);
        g_free(expect_tgr(c, FABRIC_TGR_READ_REQ, &h, &t));
        g_assert_cmphex(t.tag & 0x80000000u, ==, 0);
        g_assert_false(g_hash_table_contains(seen, GUINT_TO_POINTER(t.tag)));
        g_hash_table_add(seen, GUINT_TO_POINTER(t.tag));
        if (i && (t.tag >> 10) - (prev >> 10) <= 2) {
            steps++;
        }
        prev = t.tag;
        reply(c, &t, FABRIC_TGR_READ_REP, i, 4);
        g_assert_cmphex(rd(c, WIN(0, 0x30)), ==, i);
    }
    g_hash_table_destroy(seen);
    g_test_message("%u of 31 tags followed their predecessor", steps);
    g_assert_cmpuint(steps, <, 4);
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

/* ---- counters, loopback, link loss ------------------------------------- */

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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/telegraphos/identity-and-reset-state",
                    test_identity_and_reset_state);
    g_test_add_func("/telegraphos/system-reset", test_system_reset);
    g_test_add_func("/telegraphos/properties", test_properties);
    g_test_add_func("/telegraphos/initiator-write-and-req",
                    test_initiator_write_and_req);
    g_test_add_func("/telegraphos/initiator-refusals",
                    test_initiator_refusals);
    g_test_add_func("/telegraphos/remote-read-split-phase",
                    test_remote_read_split_phase);
    g_test_add_func("/telegraphos/remote-read-failures",
                    test_remote_read_failures);
    g_test_add_func("/telegraphos/initiator-atomics", test_initiator_atomics);
    g_test_add_func("/telegraphos/forged-replies-and-nacks",
                    test_forged_replies_and_nacks);
    g_test_add_func("/telegraphos/atomics-across-context-switch",
                    test_atomics_across_context_switch);
    g_test_add_func("/telegraphos/fetch-dma-and-bad-shadow",
                    test_fetch_dma_and_bad_shadow);
    g_test_add_func("/telegraphos/access-counter", test_access_counter);
    g_test_add_func("/telegraphos/loopback", test_loopback);
    g_test_add_func("/telegraphos/link-loss", test_link_loss);
    g_test_add_func("/telegraphos/event-ring-full", test_event_ring_full);
    return g_test_run();
}
