/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest for the Myrinet firmware (MCP, guest-driver/myri/mcp/) running on
 * the real lanai device (docs/hw/myri-mcp.md).  No guest: the test loads
 * myri/mcp.bin into SRAM through BAR0 and plays the driver (mcp_global,
 * mailbox, contexts) and the user (slots, doorbells, the receive region
 * in guest RAM); on the fake fabric it plays the peer nodes, which speak
 * RDP with rdp.c's header codec.  Virtual time only moves by clock_step.
 */
#include "qtest-client.h"
#include "proto/myrinet.h"

#include <inttypes.h>
#include <poll.h>
#include <stddef.h>
#include <string.h>
#include <zlib.h>

#include "vcluster/hw/lanai_regs.h"
#include "vcluster/fw/myri_mcp_if.h"
#include "rdp.h"

#define BASE 0xe0000000ull          /* BAR0: 16 MiB aligned */
#define SRAM(off) (BASE + LANAI_SRAM_OFFSET + (off))
#define CFG(off) (BASE + LANAI_CONFIG_OFFSET + (off))
#define SPECIAL(reg) (BASE + LANAI_HOST_REG(reg))
#define DOORBELL(ctx) (BASE + LANAI_DOORBELL_OFFSET + \
                       (ctx) * LANAI_DOORBELL_PAGE)
#define K FABRIC_KIND_MYRINET

#define SRAM_SIZE (2u << 20)
#define NSLOTS 8
#define SLOT_SIZE 256               /* payloads up to 192 bytes */
#define RING 0x10000                /* data ring bytes */
#define RX_RAM 0x02000000u          /* guest RAM for receive regions */
#define PEER_EPOCH 0x5eed0001u
#define STEP_US 20
#define REFUSE_US 20000             /* MCP_P_REFUSE_US for the tests */

/* The firmware's panic codes (guest-driver/myri/mcp/mcp.h). */
#define PANIC_MAGIC 1
#define PANIC_NODES 3

#define G(field) (MCP_GLOBAL_OFF + offsetof(struct mcp_global, field))
#define GCTX(c, field) (G(ctx) + (c) * sizeof(struct mcp_ctx) + \
                        offsetof(struct mcp_ctx, field))
#define GCNT(name) (G(counters) + 4 * MCP_CNT_##name)
#define USER(c, field) (send_off(c) + offsetof(struct myri_ctx_user, field))
#define SLOT(c, i, field) (slot_off(c, i) + offsetof(struct myri_slot, field))

typedef struct Card {
    QTest *qt;
    FakeFabric *ff;
    char *dir;
    unsigned node, nodes;
    uint32_t cmd_seq;
} Card;

/* A node on the far side of the fake fabric, with its RDP streams. */
typedef struct Peer {
    uint16_t node;
    uint32_t out_connid, out_seq;   /* its stream to the card */
    uint32_t in_connid, in_next;    /* the card's stream to it */
} Peer;

static uint32_t send_off(unsigned ctx)
{
    return MCP_CTX_AREA_OFF + ctx * 0x10000;
}

static uint32_t slot_off(unsigned ctx, unsigned i)
{
    return send_off(ctx) + 4096 + i * SLOT_SIZE;
}

static uint64_t rx_bus(unsigned ctx)
{
    return RX_RAM + ctx * 0x100000ull;
}

static uint8_t route_byte(unsigned node)
{
    return LANAI_ROUTE_BIT | node;
}

/* ---- qtest access ---- */

static uint32_t sram_readl(Card *c, uint32_t off)
{
    return qt_readl(c->qt, SRAM(off));
}

static void sram_writel(Card *c, uint32_t off, uint32_t v)
{
    qt_writel(c->qt, SRAM(off), v);
}

static void mem_write(QTest *qt, uint64_t addr, const void *buf, size_t len)
{
    g_autofree char *b64 = g_base64_encode(buf, len);

    g_free(qt_cmd(qt, "b64write 0x%" PRIx64 " 0x%zx %s", addr, len, b64));
}

static void mem_read(QTest *qt, uint64_t addr, void *buf, size_t len)
{
    g_autofree char *reply = qt_cmd(qt, "b64read 0x%" PRIx64 " 0x%zx", addr,
                                    len);
    gsize n;
    g_autofree guchar *data = g_base64_decode(reply + 3, &n);

    g_assert_cmpuint(n, ==, len);
    memcpy(buf, data, len);
}

static void mem_zero(QTest *qt, uint64_t addr, size_t len)
{
    g_free(qt_cmd(qt, "memset 0x%" PRIx64 " 0x%zx 0", addr, len));
}

static void step(Card *c, uint32_t us)
{
    g_free(qt_cmd(c->qt, "clock_step %" PRIu64, (uint64_t)us * 1000));
}

/* Advance virtual time until SRAM word @off matches, for at most 100 ms. */
static gboolean wait_sram(Card *c, uint32_t off, uint32_t mask,
                          uint32_t want)
{
    for (int i = 0; i < 100000 / STEP_US; i++) {
        if ((sram_readl(c, off) & mask) == want) {
            return TRUE;
        }
        step(c, STEP_US);
    }
    return FALSE;
}

/* Run the core until it sleeps in wfi (all work done). */
static void wait_idle(Card *c)
{
    for (int i = 0; i < 1000; i++) {
        if (qt_readl(c->qt, CFG(LANAI_CFG_CORE_STATE)) == LANAI_CORE_SLEEP) {
            return;
        }
        step(c, STEP_US);
    }
    g_assert_not_reached();
}

static uint64_t insns(Card *c)
{
    uint32_t lo = qt_readl(c->qt, CFG(LANAI_CFG_INSN_LO));

    return (uint64_t)qt_readl(c->qt, CFG(LANAI_CFG_INSN_HI)) << 32 | lo;
}

/* ---- the card ---- */

static char *fw_path(const char *name)
{
    return g_strdup_printf("%s/%s", MYRI_FW_DIR, name);
}

static gboolean have_fw(void)
{
    g_autofree char *path = fw_path("mcp.bin");

    if (!g_file_test(path, G_FILE_TEST_EXISTS)) {
        g_test_skip("no myri/mcp.bin (riscv64-unknown-elf-gcc missing?)");
        return FALSE;
    }
    return TRUE;
}

static Card *card_new(unsigned node, unsigned nodes)
{
    Card *c = g_new0(Card, 1);
    FabricHdr h;
    g_autofree uint8_t *p = NULL;
    uint8_t ack[FABRIC_MYRI_HELLO_ACK_LEN] = { FABRIC_CTL_HELLO_ACK };

    c->node = node;
    c->nodes = nodes;
    c->dir = g_dir_make_tmp("vcmcp-XXXXXX", NULL);
    c->ff = ff_listen(c->dir, "fabric.sock");
    g_autofree char *chr = g_strdup_printf("socket,id=my,path=%s",
                                           c->ff->path);
    g_autofree char *dev = g_strdup_printf("lanai,chardev=my,node=%u", node);
    const char *args[] = { "-chardev", chr, "-device", dev, NULL };

    c->qt = qt_start(args);
    ff_accept(c->ff);
    g_assert_cmpint(qt_pci_map(c->qt, LANAI_PCI_VENDOR, LANAI_PCI_DEVICE,
                               BASE), >=, 0);
    g_assert_true(ff_recv(c->ff, &h, &p));
    g_assert_cmpint(h.kind, ==, K);
    g_assert_cmpint(h.type, ==, FABRIC_TYPE_CONTROL);
    g_assert_cmpint(p[0], ==, FABRIC_CTL_HELLO);
    fabric_put_le16(ack + 1, nodes);
    ack[4] = node;
    ff_send(c->ff, K, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, node, ack,
            sizeof(ack));
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CFG_LINK), LANAI_LINK_UP,
                              LANAI_LINK_UP));
    return c;
}

static void card_free(Card *c)
{
    qt_quit(c->qt);
    ff_close(c->ff);
    rmdir(c->dir);
    g_free(c->dir);
    g_free(c);
}

/* Load firmware file @name like the driver: check it, reset, copy. */
static void card_load(Card *c, const char *name)
{
    g_autofree char *path = fw_path(name);
    g_autofree uint8_t *file = NULL;
    struct mcp_image_hdr hdr;
    gsize len;

    g_assert_true(g_file_get_contents(path, (char **)&file, &len, NULL));
    g_assert_cmpuint(len, >=, sizeof(hdr));
    memcpy(&hdr, file, sizeof(hdr));
    g_assert_cmphex(hdr.magic, ==, MCP_IMAGE_MAGIC);
    g_assert_cmpuint(hdr.abi, ==, MCP_ABI);
    g_assert_cmpuint(hdr.load_size, ==, len - sizeof(hdr));
    g_assert_cmpuint(hdr.load_size % 4, ==, 0);
    g_assert_cmpuint(hdr.mem_end, >=, hdr.load_size);
    g_assert_cmpuint(hdr.mem_end, <=, MCP_CODE_MAX);
    g_assert_cmphex(hdr.crc32, ==, crc32(0, file + sizeof(hdr),
                                         hdr.load_size));
    g_autofree char *base = g_strndup(name, strlen(name) - strlen(".bin"));
    g_assert_cmpstr(hdr.name, ==, base);

    qt_writel(c->qt, CFG(LANAI_CFG_CONTROL), LANAI_CTRL_RESET_ON);
    mem_zero(c->qt, SRAM(0), MCP_CTX_AREA_OFF);
    for (uint32_t off = 0; off < hdr.load_size; off += 16384) {
        mem_write(c->qt, SRAM(off), file + sizeof(hdr) + off,
                  MIN(16384u, hdr.load_size - off));
    }
    c->cmd_seq = 0;
}

/* mcp_global and routes as the driver fills them; node 2 has no route. */
static void card_setup(Card *c, uint32_t magic)
{
    sram_writel(c, G(magic), magic);
    sram_writel(c, G(abi), MCP_ABI);
    sram_writel(c, G(node), c->node);
    sram_writel(c, G(nodes), c->nodes);
    sram_writel(c, G(nonce), 0x1234567 + c->node);
    sram_writel(c, G(sram_size), SRAM_SIZE);
    /* No retransmission the test does not expect, however slow the host
     * (card_recv() moves virtual time while it waits). */
    sram_writel(c, G(params) + 4 * MCP_P_RTO_US, 20000);
    /* Sends to a destination that takes nothing fail after 20 ms. */
    sram_writel(c, G(params) + 4 * MCP_P_REFUSE_US, REFUSE_US);
    for (unsigned n = 0; n < c->nodes; n++) {
        if (n != c->node && n != 2) {
            uint32_t r = MCP_ROUTES_OFF + n * sizeof(struct mcp_route);

            sram_writel(c, r, 1 | route_byte(n) << 8);
        }
    }
}

static void card_start(Card *c)
{
    qt_writel(c->qt, CFG(LANAI_CFG_CONTROL), LANAI_CTRL_RESET_OFF);
}

static Card *card_up(unsigned node, unsigned nodes)
{
    Card *c = card_new(node, nodes);

    card_load(c, "mcp.bin");
    card_setup(c, MCP_MAGIC);
    card_start(c);
    g_assert_true(wait_sram(c, G(state), ~0u, MCP_STATE_READY));
    wait_idle(c);
    return c;
}

static void mailbox_start(Card *c, uint32_t cmd, uint32_t arg)
{
    sram_writel(c, G(cmd), cmd);
    sram_writel(c, G(cmd_arg), arg);
    sram_writel(c, G(cmd_seq), ++c->cmd_seq);
    qt_writel(c->qt, SPECIAL(LANAI_REG_ISR), LANAI_ISR_LANAI_SIG);
}

static uint32_t mailbox(Card *c, uint32_t cmd, uint32_t arg)
{
    mailbox_start(c, cmd, arg);
    g_assert_true(wait_sram(c, G(cmd_done), ~0u, c->cmd_seq));
    return sram_readl(c, G(cmd_status));
}

static uint32_t ctx_open(Card *c, unsigned ctx, uint32_t nev)
{
    mem_zero(c->qt, SRAM(send_off(ctx)), 4096 + NSLOTS * SLOT_SIZE);
    mem_zero(c->qt, rx_bus(ctx), nev * 16 + RING);
    sram_writel(c, GCTX(ctx, send_off), send_off(ctx));
    sram_writel(c, GCTX(ctx, nslots), NSLOTS);
    sram_writel(c, GCTX(ctx, slot_size), SLOT_SIZE);
    sram_writel(c, GCTX(ctx, rx_bus_lo), rx_bus(ctx));
    sram_writel(c, GCTX(ctx, rx_bus_hi), 0);
    sram_writel(c, GCTX(ctx, rx_size), nev * 16 + RING);
    sram_writel(c, GCTX(ctx, nev), nev);
    sram_writel(c, GCTX(ctx, irq), 0);
    return mailbox(c, MCP_CMD_OPEN_CTX, ctx);
}

/* The user's side of a send: fill slot @i, post it, ring. */
static void post(Card *c, unsigned ctx, unsigned i, uint32_t dst_node,
                 uint32_t dst_ctx, uint32_t flags, const void *data,
                 uint32_t len, uint32_t cookie)
{
    if (len) {
        mem_write(c->qt, SRAM(slot_off(ctx, i) + MYRI_SLOT_HDR), data,
                  MIN(len, SLOT_SIZE - MYRI_SLOT_HDR));
    }
    sram_writel(c, slot_off(ctx, i), dst_node | dst_ctx << 16 | flags << 24);
    sram_writel(c, SLOT(ctx, i, len), len);
    sram_writel(c, SLOT(ctx, i, status), 0);
    sram_writel(c, SLOT(ctx, i, cookie), cookie);
    sram_writel(c, SLOT(ctx, i, state), MYRI_SLOT_POSTED);
    qt_writel(c->qt, DOORBELL(ctx), i);
}

static void wait_events(Card *c, unsigned ctx, uint32_t n)
{
    g_assert_true(wait_sram(c, USER(ctx, ev_prod), ~0u, n));
}

static void event_at(Card *c, unsigned ctx, uint32_t nev, uint32_t idx,
                     struct myri_event *ev)
{
    mem_read(c->qt, rx_bus(ctx) + (idx & (nev - 1)) * 16, ev, sizeof(*ev));
}

static void check_rx(Card *c, unsigned ctx, uint32_t nev, uint32_t idx,
                     unsigned src_node, unsigned src_ctx, const void *data,
                     uint32_t len, uint32_t pos)
{
    struct myri_event ev;
    g_autofree uint8_t *got = g_malloc(len);

    event_at(c, ctx, nev, idx, &ev);
    g_assert_cmpuint(ev.type, ==, MYRI_EV_RX);
    g_assert_cmpuint(ev.src_node, ==, src_node);
    g_assert_cmpuint(ev.src_ctx, ==, src_ctx);
    g_assert_cmpuint(ev.len, ==, len);
    g_assert_cmpuint(ev.pos, ==, pos);
    mem_read(c->qt, rx_bus(ctx) + nev * 16 + (pos & (RING - 1)), got, len);
    g_assert_cmpmem(got, len, data, len);
}

static void check_event(Card *c, unsigned ctx, uint32_t nev, uint32_t idx,
                        uint32_t type, uint32_t aux, uint32_t status)
{
    struct myri_event ev;

    event_at(c, ctx, nev, idx, &ev);
    g_assert_cmpuint(ev.type, ==, type);
    g_assert_cmpuint(ev.aux, ==, aux);
    g_assert_cmpuint(ev.status, ==, status);
}

/* ---- the fake peers' RDP ---- */

/* The next frame from the card, running the core until it comes. */
static gboolean card_recv(Card *c, FabricHdr *h, uint8_t **p)
{
    for (int i = 0; i < 2000; i++) {
        struct pollfd pfd = { .fd = c->ff->fd, .events = POLLIN };

        if (poll(&pfd, 1, i < 100 ? 0 : 2) == 1) {
            return ff_recv(c->ff, h, p);
        }
        step(c, STEP_US);
    }
    return FALSE;
}

/* The next RDP packet from the card to @p: route, CRC, addresses. */
static void expect_rdp(Card *c, const Peer *p, RdpHdr *h, uint8_t *payload)
{
    FabricHdr fh;
    g_autofree uint8_t *f = NULL;
    uint32_t n;

    g_assert_true(card_recv(c, &fh, &f));
    g_assert_cmpint(fh.kind, ==, K);
    g_assert_cmpint(fh.type, ==, FABRIC_TYPE_DATA);
    g_assert_cmphex(fh.flags, ==, FABRIC_F_ROUTED);
    g_assert_cmphex(fh.dst, ==, FABRIC_NODE_NONE);
    g_assert_cmpuint(fh.src, ==, c->node);
    g_assert_cmpuint(fh.len, >=, 1 + RDP_HDR_LEN + FABRIC_MYRI_CRC_LEN);
    g_assert_cmphex(f[0], ==, route_byte(p->node));
    n = fh.len - 1 - FABRIC_MYRI_CRC_LEN;
    g_assert_cmphex(fabric_get_le32(f + 1 + n), ==, crc32(0, f + 1, n));
    rdp_hdr_decode(h, f + 1);
    g_assert_cmphex(h->mtype, ==, RDP_MTYPE);
    g_assert_cmpuint(h->src, ==, c->node);
    g_assert_cmpuint(h->dst, ==, p->node);
    g_assert_cmpuint(h->len, ==, n - RDP_HDR_LEN);
    if (payload) {
        memcpy(payload, f + 1 + RDP_HDR_LEN, h->len);
    }
}

static void expect_op(Card *c, const Peer *p, RdpOp op, RdpHdr *h,
                      uint8_t *payload)
{
    expect_rdp(c, p, h, payload);
    g_assert_cmpuint(h->op, ==, op);
}

/* A packet from @p as the fabric delivers it: route gone, CRC after. */
static void send_frame(Card *c, uint16_t src, const uint8_t *pkt,
                       uint32_t n, bool corrupt)
{
    g_autofree uint8_t *buf = g_malloc(n + FABRIC_MYRI_CRC_LEN);

    memcpy(buf, pkt, n);
    fabric_put_le32(buf + n, crc32(0, buf, n));
    if (corrupt) {
        buf[n / 2] ^= 0x10;
    }
    ff_send(c->ff, K, FABRIC_TYPE_DATA, src, c->node, buf,
            n + FABRIC_MYRI_CRC_LEN);
}

static void send_rdp(Card *c, const Peer *p, const RdpHdr *h,
                     const void *payload, bool corrupt)
{
    uint8_t buf[RDP_HDR_LEN + 4 + MCP_MAX_PAYLOAD];

    g_assert_cmpuint(h->len, <=, sizeof(buf) - RDP_HDR_LEN);
    rdp_hdr_encode(buf, h);
    memcpy(buf + RDP_HDR_LEN, payload, h->len);
    send_frame(c, p->node, buf, RDP_HDR_LEN + h->len, corrupt);
}

static RdpHdr rdp_hdr(const Card *c, const Peer *p, RdpOp op)
{
    return (RdpHdr) { .mtype = RDP_MTYPE, .op = op, .src = p->node,
                      .dst = c->node };
}

/* The card opens its stream to @p: SYN, answered by SYNACK. */
static void peer_accept(Card *c, Peer *p)
{
    RdpHdr h, a = rdp_hdr(c, p, RDP_OP_SYNACK);

    expect_op(c, p, RDP_OP_SYN, &h, NULL);
    p->in_connid = h.connid;
    p->in_next = h.seq;
    a.connid = h.connid;
    a.seq = h.seq;
    a.ackno = PEER_EPOCH;
    send_rdp(c, p, &a, NULL, false);
}

/* Expect the card's DATA on its stream to @p: wire bytes and data. */
static void expect_data(Card *c, Peer *p, uint32_t dst_ctx, uint32_t src_ctx,
                        const void *data, uint32_t len)
{
    uint8_t payload[4 + MCP_MAX_PAYLOAD];
    RdpHdr h;

    expect_op(c, p, RDP_OP_DATA, &h, payload);
    g_assert_cmphex(h.connid, ==, p->in_connid);
    g_assert_cmphex(h.seq, ==, p->in_next);
    g_assert_cmpuint(h.len, ==, 4 + len);
    g_assert_cmpuint(payload[0], ==, dst_ctx);
    g_assert_cmpuint(payload[1], ==, src_ctx);
    g_assert_cmpmem(payload + 4, len, data, len);
    p->in_next++;
}

/* @p acknowledges everything the card sent it. */
static void peer_ack(Card *c, Peer *p)
{
    RdpHdr a = rdp_hdr(c, p, RDP_OP_ACK);

    a.connid = a.ack_connid = p->in_connid;
    a.ackno = p->in_next;
    send_rdp(c, p, &a, NULL, false);
}

/* @p opens its stream to the card. */
static void peer_connect(Card *c, Peer *p)
{
    RdpHdr h, s = rdp_hdr(c, p, RDP_OP_SYN);

    p->out_connid = 0xc0de0000u | p->node;
    p->out_seq = 1000;
    s.connid = p->out_connid;
    s.seq = p->out_seq;
    s.ackno = PEER_EPOCH;
    send_rdp(c, p, &s, NULL, false);
    expect_op(c, p, RDP_OP_SYNACK, &h, NULL);
    g_assert_cmphex(h.connid, ==, p->out_connid);
    g_assert_cmphex(h.seq, ==, p->out_seq);
}

/* DATA number @seq from @p for (dst_ctx) of the card. */
static void peer_data(Card *c, Peer *p, uint32_t seq, uint32_t dst_ctx,
                      uint32_t src_ctx, const void *data, uint32_t len,
                      bool corrupt)
{
    uint8_t payload[4 + MCP_MAX_PAYLOAD] = { dst_ctx, src_ctx };
    RdpHdr h = rdp_hdr(c, p, RDP_OP_DATA);

    memcpy(payload + 4, data, len);
    h.connid = p->out_connid;
    h.seq = seq;
    if (p->in_connid) {
        h.ack_connid = p->in_connid;
        h.ackno = p->in_next;
    }
    h.len = 4 + len;
    send_rdp(c, p, &h, payload, corrupt);
}

static uint32_t counter(Card *c, uint32_t off)
{
    wait_idle(c);       /* counters are copied before the core sleeps */
    return sram_readl(c, off);
}

static uint32_t rtc(Card *c)
{
    return qt_readl(c->qt, SPECIAL(LANAI_REG_RTC));
}

/* ---- peers that answer whatever comes, for tests with several ---- */

typedef struct FakePeer {
    Peer p;
    bool refuse;            /* no room: its next DATA gets a CAP_NACK */
    uint32_t cap_nacks;
    uint32_t first_nack_at; /* the card's RTC then */
    uint32_t ngot;
    uint32_t got[64];       /* the first data word of each it took */
} FakePeer;

/*
 * Answer the card's next frame as the peer it goes to; without a frame,
 * move virtual time on by a step.  False: there was none.
 */
static bool serve(Card *c, FakePeer *fp, unsigned n)
{
    struct pollfd pfd = { .fd = c->ff->fd, .events = POLLIN };
    FabricHdr fh;
    g_autofree uint8_t *f = NULL;
    FakePeer *to = NULL;
    RdpHdr h, a;
    uint32_t word;

    if (poll(&pfd, 1, 0) != 1) {
        step(c, STEP_US);
        return false;
    }
    g_assert_true(ff_recv(c->ff, &fh, &f));
    g_assert_cmpuint(fh.len, >=, 1 + RDP_HDR_LEN + FABRIC_MYRI_CRC_LEN);
    for (unsigned i = 0; i < n; i++) {
        if (f[0] == route_byte(fp[i].p.node)) {
            to = &fp[i];
        }
    }
    g_assert_nonnull(to);
    rdp_hdr_decode(&h, f + 1);
    a = rdp_hdr(c, &to->p, RDP_OP_ACK);
    if (h.op == RDP_OP_SYN) {
        to->p.in_connid = h.connid;
        to->p.in_next = h.seq;
        a.op = RDP_OP_SYNACK;
        a.connid = h.connid;
        a.seq = h.seq;
        a.ackno = PEER_EPOCH;
    } else if (h.op == RDP_OP_DATA && h.connid == to->p.in_connid &&
               h.seq == to->p.in_next) {
        a.connid = h.connid;
        if (to->refuse) {
            a.op = RDP_OP_CAP_NACK;
            a.seq = h.seq;
            if (!to->cap_nacks++) {
                to->first_nack_at = rtc(c);
            }
        } else {
            g_assert_cmpuint(h.len, >=, 8);
            memcpy(&word, f + 1 + RDP_HDR_LEN + 4, 4);
            g_assert_cmpuint(to->ngot, <, G_N_ELEMENTS(to->got));
            to->got[to->ngot++] = word;
            a.ack_connid = h.connid;
            a.ackno = ++to->p.in_next;
        }
    } else {
        return true;    /* past a refusal (dropped), or stale */
    }
    send_rdp(c, &to->p, &a, NULL, false);
    return true;
}

/* ---- tests ---- */

static void test_boot(void)
{
    Card *c;
    uint32_t beat;

    if (!have_fw()) {
        return;
    }
    c = card_up(0, 2);
    g_assert_cmpuint(sram_readl(c, G(panic_code)), ==, 0);
    g_assert_cmphex(qt_readl(c->qt, SPECIAL(LANAI_REG_DB_BASE)), ==,
                    MCP_DB_OFF);
    g_assert_cmpuint(qt_readl(c->qt, SPECIAL(LANAI_REG_DB_SIZE)), ==,
                     MCP_DB_ENTRIES);
    g_assert_cmphex(qt_readl(c->qt, SPECIAL(LANAI_REG_RSTAT)), ==,
                    LANAI_RSTAT_ARMED);
    for (int i = 0; i < MCP_MAX_CTX; i++) {
        g_assert_cmpuint(sram_readl(c, GCTX(i, state)), ==, MCP_CTX_CLOSED);
    }
    g_test_message("boot: %" PRIu64 " instructions", insns(c));
    /* Idle, the heartbeat still moves (IT1) and the watchdog keeps still. */
    beat = sram_readl(c, G(heartbeat));
    step(c, 600000);
    g_assert_cmpuint(sram_readl(c, G(heartbeat)), >, beat);
    g_assert_cmpuint(qt_readl(c->qt, CFG(LANAI_CFG_CORE_STATE)), ==,
                     LANAI_CORE_SLEEP);
    card_free(c);
}

static void expect_panic(Card *c, uint32_t magic, uint32_t code,
                         uint32_t arg)
{
    card_load(c, "mcp.bin");
    card_setup(c, magic);
    card_start(c);
    g_assert_true(wait_sram(c, G(state), ~0u, MCP_STATE_PANIC));
    g_assert_cmpuint(sram_readl(c, G(panic_code)), ==, code);
    g_assert_cmphex(sram_readl(c, G(panic_arg)), ==, arg);
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CFG_CORE_STATE), ~0u,
                              LANAI_CORE_HALT));
    g_assert_cmpuint(qt_readl(c->qt, CFG(LANAI_CFG_HALT_CAUSE)), ==,
                     LANAI_HALT_EBREAK);
    g_assert_cmpuint(qt_readl(c->qt, CFG(LANAI_CFG_HALT_ADDR)), ==, code);
}

static void test_panic(void)
{
    Card *c;

    if (!have_fw()) {
        return;
    }
    c = card_new(0, 2);
    expect_panic(c, 0xdeadbeef, PANIC_MAGIC, 0xdeadbeef);
    c->node = 5;                /* node 5 of 2 */
    expect_panic(c, MCP_MAGIC, PANIC_NODES, 5 << 16 | 2);
    card_free(c);
}

/* The driver tests' broken firmware: the card stops it, clearly. */
static void test_bad_firmware(void)
{
    Card *c;

    if (!have_fw()) {
        return;
    }
    c = card_new(0, 2);
    card_load(c, "mcp-loop.bin");
    card_start(c);
    step(c, 150000);            /* wdog-ms 100 */
    g_assert_cmpuint(qt_readl(c->qt, CFG(LANAI_CFG_CORE_STATE)), ==,
                     LANAI_CORE_HALT);
    g_assert_cmpuint(qt_readl(c->qt, CFG(LANAI_CFG_HALT_CAUSE)), ==,
                     LANAI_HALT_WDOG);

    card_load(c, "mcp-wild.bin");
    card_start(c);
    step(c, 100);
    g_assert_cmpuint(qt_readl(c->qt, CFG(LANAI_CFG_CORE_STATE)), ==,
                     LANAI_CORE_HALT);
    g_assert_cmpuint(qt_readl(c->qt, CFG(LANAI_CFG_HALT_CAUSE)), ==,
                     LANAI_HALT_LOAD);
    g_assert_cmphex(qt_readl(c->qt, CFG(LANAI_CFG_HALT_ADDR)), ==,
                    0x40000000);
    card_free(c);
}

/* Sends to this node go from slot to receive region, no network. */
static void test_local(void)
{
    static const char a[] = "to myself", b[100] = "the second one";
    Card *c;

    if (!have_fw()) {
        return;
    }
    c = card_up(0, 2);
    g_assert_cmpuint(ctx_open(c, 1, 16), ==, 0);
    g_assert_cmpuint(ctx_open(c, 2, 16), ==, 0);
    g_assert_cmpuint(sram_readl(c, GCTX(2, state)), ==, MCP_CTX_OPEN);
    g_assert_cmpuint(ctx_open(c, 2, 16), ==, 7);        /* open already */

    post(c, 1, 0, 0, 2, MYRI_SLOT_F_EVENT, a, sizeof(a), 0xc00c1e);
    wait_events(c, 2, 1);
    check_rx(c, 2, 16, 0, 0, 1, a, sizeof(a), 0);
    wait_events(c, 1, 1);
    check_event(c, 1, 16, 0, MYRI_EV_SENT, 0, 0);
    struct myri_event ev;
    event_at(c, 1, 16, 0, &ev);
    g_assert_cmphex(ev.pos, ==, 0xc00c1e);
    g_assert_cmpuint(sram_readl(c, SLOT(1, 0, state)), ==, MYRI_SLOT_FREE);
    g_assert_cmpuint(sram_readl(c, SLOT(1, 0, status)), ==, 0);

    /* Notify: want_notify is cleared, the count and HOST_SIG go up. */
    sram_writel(c, USER(2, want_notify), 1);
    sram_writel(c, GCTX(2, irq), 1);
    post(c, 1, 1, 0, 2, 0, b, sizeof(b), 0);
    wait_events(c, 2, 2);
    check_rx(c, 2, 16, 1, 0, 1, b, sizeof(b), 64);  /* 64-byte aligned */
    g_assert_cmpuint(sram_readl(c, USER(2, want_notify)), ==, 0);
    g_assert_cmpuint(sram_readl(c, GCTX(2, notifies)), ==, 1);
    g_assert_cmpuint(qt_readl(c->qt, DOORBELL(2) + LANAI_DB_NOTIFY_COUNT),
                     ==, 1);
    g_assert_cmphex(qt_readl(c->qt, SPECIAL(LANAI_REG_ISR)) &
                    LANAI_ISR_HOST_SIG, ==, LANAI_ISR_HOST_SIG);
    g_assert_cmpuint(sram_readl(c, USER(1, ev_prod)), ==, 1);   /* no SENT */

    g_assert_cmpuint(counter(c, GCNT(sent)), ==, 2);
    g_assert_cmpuint(counter(c, GCNT(received)), ==, 2);
    g_assert_cmpuint(counter(c, GCNT(doorbells)), ==, 2);
    g_assert_true(ff_quiet(c->ff));
    card_free(c);
}

/* Both directions with a peer on the fabric, and the cost of each. */
static void test_peer(void)
{
    static const char a[8] = "8 bytes", b[8] = "8 again", r[] = "reply";
    Peer p = { .node = 1 };
    Card *c;
    RdpHdr h;
    uint64_t t0;

    if (!have_fw()) {
        return;
    }
    c = card_up(0, 2);
    g_assert_cmpuint(ctx_open(c, 1, 16), ==, 0);

    post(c, 1, 0, 1, 2, MYRI_SLOT_F_EVENT, a, sizeof(a), 77);
    peer_accept(c, &p);
    expect_data(c, &p, 2, 1, a, sizeof(a));
    g_assert_cmpuint(sram_readl(c, SLOT(1, 0, state)), ==, MYRI_SLOT_BUSY);
    peer_ack(c, &p);
    wait_events(c, 1, 1);
    check_event(c, 1, 16, 0, MYRI_EV_SENT, 0, 0);
    g_assert_cmpuint(sram_readl(c, SLOT(1, 0, state)), ==, MYRI_SLOT_FREE);

    /* A small send on an open connection: doorbell to packet. */
    wait_idle(c);
    t0 = insns(c);
    post(c, 1, 1, 1, 2, 0, b, sizeof(b), 0);
    expect_data(c, &p, 2, 1, b, sizeof(b));
    wait_idle(c);
    g_test_message("send 8 bytes: %" PRIu64 " instructions", insns(c) - t0);
    peer_ack(c, &p);
    g_assert_true(wait_sram(c, SLOT(1, 1, state), ~0u, MYRI_SLOT_FREE));

    /* The other way: packet to event, then the delayed ACK. */
    peer_connect(c, &p);
    wait_idle(c);
    t0 = insns(c);
    peer_data(c, &p, p.out_seq++, 1, 5, r, sizeof(r), false);
    wait_events(c, 1, 2);
    wait_idle(c);
    g_test_message("receive 6 bytes: %" PRIu64 " instructions",
                   insns(c) - t0);
    check_rx(c, 1, 16, 1, 1, 5, r, sizeof(r), 0);
    expect_op(c, &p, RDP_OP_ACK, &h, NULL);
    g_assert_cmphex(h.ack_connid, ==, p.out_connid);
    g_assert_cmphex(h.ackno, ==, p.out_seq);

    g_assert_cmpuint(counter(c, GCNT(sent)), ==, 2);
    g_assert_cmpuint(counter(c, GCNT(received)), ==, 1);
    g_assert_cmpuint(counter(c, GCNT(acks_sent)), ==, 1);
    g_assert_cmpuint(counter(c, GCNT(acks_rcvd)), ==, 2);
    card_free(c);
}

/* Whatever the user writes wrong comes back as CTX_ERR, and no packet. */
static void test_bad_requests(void)
{
    static const struct {
        uint32_t slot, dst_node, dst_ctx, len, err;
    } bad[] = {
        { 1, 1, 0, 0, MYRI_ERR_BAD_LEN },
        { 2, 1, 0, SLOT_SIZE - MYRI_SLOT_HDR + 1, MYRI_ERR_BAD_LEN },
        { 3, 7, 0, 8, MYRI_ERR_BAD_DEST },      /* node 7 of 3 */
        { 4, 2, 0, 8, MYRI_ERR_BAD_DEST },      /* no route */
        { 5, 1, MCP_MAX_CTX, 8, MYRI_ERR_BAD_DEST },
    };
    static const uint8_t data[SLOT_SIZE];
    Card *c;
    uint32_t n = 0;

    if (!have_fw()) {
        return;
    }
    c = card_up(0, 3);
    g_assert_cmpuint(ctx_open(c, 1, 16), ==, 0);

    qt_writel(c->qt, DOORBELL(1), 99);          /* no such slot */
    wait_events(c, 1, ++n);
    check_event(c, 1, 16, n - 1, MYRI_EV_CTX_ERR, 99, MYRI_ERR_BAD_SLOT);
    qt_writel(c->qt, DOORBELL(1), 0);           /* not posted */
    wait_events(c, 1, ++n);
    check_event(c, 1, 16, n - 1, MYRI_EV_CTX_ERR, 0, MYRI_ERR_BAD_SLOT);
    g_assert_cmpuint(sram_readl(c, USER(1, err)), ==, MYRI_ERR_BAD_SLOT);
    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        post(c, 1, bad[i].slot, bad[i].dst_node, bad[i].dst_ctx, 0, data,
             bad[i].len, 0);
        wait_events(c, 1, ++n);
        check_event(c, 1, 16, n - 1, MYRI_EV_CTX_ERR, bad[i].slot,
                    bad[i].err);
        g_assert_cmpuint(sram_readl(c, SLOT(1, bad[i].slot, state)), ==,
                         MYRI_SLOT_FREE);
        g_assert_cmpuint(sram_readl(c, SLOT(1, bad[i].slot, status)), ==,
                         bad[i].err);
    }
    qt_writel(c->qt, DOORBELL(3), 0);           /* a closed context */
    qt_writel(c->qt, DOORBELL(40), 0);          /* beyond MCP_MAX_CTX */
    g_assert_cmpuint(counter(c, GCNT(ctx_errors)), ==, n + 2);
    g_assert_cmpuint(counter(c, GCNT(doorbells)), ==, n + 2);
    g_assert_cmpuint(sram_readl(c, USER(1, ev_prod)), ==, n);
    g_assert_true(ff_quiet(c->ff));

    /* Bad OPEN_CTX arguments and commands. */
    g_assert_cmpuint(mailbox(c, MCP_CMD_OPEN_CTX, MCP_MAX_CTX), ==, 7);
    g_assert_cmpuint(mailbox(c, 99, 1), ==, 7);
    sram_writel(c, GCTX(4, send_off), 0x1000);  /* over the firmware */
    g_assert_cmpuint(mailbox(c, MCP_CMD_OPEN_CTX, 4), ==, 7);
    g_assert_cmpuint(sram_readl(c, GCTX(4, state)), ==, MCP_CTX_CLOSED);
    card_free(c);
}

/* Receive errors are counted and dropped; the MCP carries on. */
static void test_rx_errors(void)
{
    static const uint8_t tiny[3] = { 0 }, ten[10] = { 0 };
    static const uint8_t routed[40] = { 0x81, 0 };
    Peer p = { .node = 1 };
    Card *c;

    if (!have_fw()) {
        return;
    }
    c = card_up(0, 2);
    g_assert_cmpuint(ctx_open(c, 1, 16), ==, 0);
    peer_connect(c, &p);

    peer_data(c, &p, p.out_seq, 1, 0, "bad crc", 7, true);
    g_assert_cmpuint(counter(c, GCNT(crc_drops)), ==, 1);
    send_frame(c, 1, tiny, sizeof(tiny), false);        /* card: SHORT */
    send_frame(c, 1, ten, sizeof(ten), false);          /* RDP: < header */
    send_frame(c, 1, routed, sizeof(routed), false);    /* card: ILLEGAL */
    g_assert_cmpuint(counter(c, GCNT(sanity_drops)), ==, 3);
    g_assert_cmpuint(sram_readl(c, USER(1, ev_prod)), ==, 0);

    peer_data(c, &p, p.out_seq++, 1, 0, "good", 4, false);
    wait_events(c, 1, 1);
    check_rx(c, 1, 16, 0, 1, 0, "good", 4, 0);
    card_free(c);
}

/* A full event ring refuses with a capacity NACK until the user frees. */
static void test_capacity(void)
{
    Peer p = { .node = 1 };
    Card *c;
    RdpHdr h;
    uint32_t seq0;

    if (!have_fw()) {
        return;
    }
    c = card_up(0, 2);
    g_assert_cmpuint(ctx_open(c, 1, 4), ==, 0);
    peer_connect(c, &p);
    seq0 = p.out_seq;
    for (uint32_t i = 0; i < 5; i++) {
        peer_data(c, &p, seq0 + i, 1, 0, &i, 4, false);
    }
    wait_events(c, 1, 4);
    expect_op(c, &p, RDP_OP_ACK, &h, NULL);     /* 4 packets: at once */
    g_assert_cmphex(h.ackno, ==, seq0 + 4);
    expect_op(c, &p, RDP_OP_CAP_NACK, &h, NULL);
    g_assert_cmphex(h.connid, ==, p.out_connid);
    g_assert_cmphex(h.seq, ==, seq0 + 4);

    sram_writel(c, USER(1, ev_cons), 4);
    sram_writel(c, USER(1, rx_cons), 4 * MYRI_RX_ALIGN);
    uint32_t v = 4;
    peer_data(c, &p, seq0 + 4, 1, 0, &v, 4, false);
    wait_events(c, 1, 5);
    check_rx(c, 1, 4, 4, 1, 0, &v, 4, 4 * MYRI_RX_ALIGN);
    g_assert_cmpuint(counter(c, GCNT(cap_nacks_tx)), ==, 1);
    card_free(c);
}

/*
 * CLOSE_CTX waits for RDP to finish the context's sends, which meanwhile
 * carry filler, not the data; later packets for it are undeliverable.
 */
static void test_close(void)
{
    static const char secret[8] = "secret!", zero[8] = { 0 };
    Peer p = { .node = 1 };
    Card *c;
    RdpHdr h;

    if (!have_fw()) {
        return;
    }
    c = card_up(0, 2);
    g_assert_cmpuint(ctx_open(c, 1, 16), ==, 0);
    post(c, 1, 0, 1, 3, 0, secret, sizeof(secret), 0);
    expect_op(c, &p, RDP_OP_SYN, &h, NULL);

    mailbox_start(c, MCP_CMD_CLOSE_CTX, 1);
    step(c, 1000);
    g_assert_cmpuint(sram_readl(c, G(cmd_done)), !=, c->cmd_seq);

    p.in_connid = h.connid;
    p.in_next = h.seq;
    RdpHdr a = rdp_hdr(c, &p, RDP_OP_SYNACK);
    a.connid = h.connid;
    a.seq = h.seq;
    a.ackno = PEER_EPOCH;
    send_rdp(c, &p, &a, NULL, false);
    expect_data(c, &p, 0xff, 0xff, zero, sizeof(zero));
    peer_ack(c, &p);
    g_assert_true(wait_sram(c, G(cmd_done), ~0u, c->cmd_seq));
    g_assert_cmpuint(sram_readl(c, G(cmd_status)), ==, 0);
    g_assert_cmpuint(sram_readl(c, GCTX(1, state)), ==, MCP_CTX_CLOSED);
    g_assert_cmpuint(mailbox(c, MCP_CMD_CLOSE_CTX, 1), ==, 0);  /* again */

    peer_connect(c, &p);
    peer_data(c, &p, p.out_seq++, 1, 0, "late", 4, false);
    expect_op(c, &p, RDP_OP_ACK, &h, NULL);     /* taken, dropped */
    g_assert_cmphex(h.ackno, ==, p.out_seq);
    g_assert_cmpuint(counter(c, GCNT(undeliverable)), ==, 1);

    /* Reopened, it works again. */
    g_assert_cmpuint(ctx_open(c, 1, 16), ==, 0);
    peer_data(c, &p, p.out_seq++, 1, 0, "again", 5, false);
    wait_events(c, 1, 1);
    check_rx(c, 1, 16, 0, 1, 0, "again", 5, 0);
    card_free(c);
}

/*
 * A receiver without room holds the sends to it until it frees some;
 * meanwhile the core sleeps, and the sends to other contexts go on (they
 * waited behind it in the doorbell FIFO before).
 */
static void test_local_back_pressure(void)
{
    Card *c;

    if (!have_fw()) {
        return;
    }
    c = card_up(0, 2);
    g_assert_cmpuint(ctx_open(c, 1, 16), ==, 0);
    g_assert_cmpuint(ctx_open(c, 2, 4), ==, 0);
    g_assert_cmpuint(ctx_open(c, 3, 16), ==, 0);
    for (uint32_t i = 0; i < 5; i++) {
        post(c, 1, i, 0, 2, 0, &i, 4, 0);
    }
    post(c, 3, 0, 0, 3, 0, "behind", 6, 0);
    post(c, 1, 5, 0, 3, 0, "other", 5, 0);
    wait_events(c, 2, 4);
    wait_events(c, 3, 2);
    check_rx(c, 3, 16, 0, 0, 3, "behind", 6, 0);
    check_rx(c, 3, 16, 1, 0, 1, "other", 5, MYRI_RX_ALIGN);
    step(c, 3000);
    g_assert_cmpuint(qt_readl(c->qt, CFG(LANAI_CFG_CORE_STATE)), ==,
                     LANAI_CORE_SLEEP);
    g_assert_cmpuint(sram_readl(c, USER(2, ev_prod)), ==, 4);
    g_assert_cmpuint(sram_readl(c, SLOT(1, 4, state)), ==, MYRI_SLOT_BUSY);
    g_assert_cmpuint(qt_readl(c->qt, SPECIAL(LANAI_REG_DB_CONS)), ==, 7);

    sram_writel(c, USER(2, ev_cons), 4);
    sram_writel(c, USER(2, rx_cons), 4 * MYRI_RX_ALIGN);
    wait_events(c, 2, 5);
    uint32_t v = 4;
    check_rx(c, 2, 4, 4, 0, 1, &v, 4, 4 * MYRI_RX_ALIGN);
    g_assert_true(wait_sram(c, SLOT(1, 4, state), ~0u, MYRI_SLOT_FREE));
    g_assert_cmpuint(sram_readl(c, SLOT(1, 4, status)), ==, 0);
    g_assert_cmpuint(counter(c, GCNT(parked)), ==, 1);
    g_assert_cmpuint(counter(c, GCNT(noroom)), ==, 0);
    card_free(c);
}

/*
 * A context that never frees its receive region: after REFUSE_US the
 * send to it fails with NO_ROOM (SEND_ERR), not before; so do the sends
 * it refuses after, at once, until it takes one again.
 */
static void test_local_stalled(void)
{
    Card *c;
    uint32_t t0, t, v;

    if (!have_fw()) {
        return;
    }
    c = card_up(0, 2);
    g_assert_cmpuint(ctx_open(c, 1, 16), ==, 0);
    g_assert_cmpuint(ctx_open(c, 2, 4), ==, 0);
    for (uint32_t i = 0; i < 4; i++) {
        post(c, 1, i, 0, 2, 0, &i, 4, 0);
    }
    wait_events(c, 2, 4);
    t0 = qt_readl(c->qt, SPECIAL(LANAI_REG_RTC));
    v = 4;
    post(c, 1, 4, 0, 2, 0, &v, 4, 0);
    step(c, REFUSE_US - 2000);
    g_assert_cmpuint(sram_readl(c, SLOT(1, 4, state)), ==, MYRI_SLOT_BUSY);
    g_assert_cmpuint(sram_readl(c, USER(1, ev_prod)), ==, 0);
    g_assert_true(wait_sram(c, SLOT(1, 4, state), ~0u, MYRI_SLOT_FREE));
    t = qt_readl(c->qt, SPECIAL(LANAI_REG_RTC)) - t0;
    g_test_message("local send refused: failed after %u us (bound %u us)",
                   t, REFUSE_US);
    g_assert_cmpuint(t, >=, REFUSE_US);
    g_assert_cmpuint(t, <=, REFUSE_US + 2000);   /* retried every CTO */
    g_assert_cmpuint(sram_readl(c, SLOT(1, 4, status)), ==, MYRI_ERR_NO_ROOM);
    wait_events(c, 1, 1);
    check_event(c, 1, 16, 0, MYRI_EV_SEND_ERR, 4, MYRI_ERR_NO_ROOM);

    /* Refused again before it took anything: fails at once. */
    post(c, 1, 5, 0, 2, 0, &v, 4, 0);
    g_assert_true(wait_sram(c, SLOT(1, 5, state), ~0u, MYRI_SLOT_FREE));
    g_assert_cmpuint(sram_readl(c, SLOT(1, 5, status)), ==, MYRI_ERR_NO_ROOM);
    g_assert_cmpuint(qt_readl(c->qt, SPECIAL(LANAI_REG_RTC)) - t0 - t, <,
                     2000);

    /* Room again: delivered. */
    sram_writel(c, USER(2, ev_cons), 4);
    sram_writel(c, USER(2, rx_cons), 4 * MYRI_RX_ALIGN);
    post(c, 1, 6, 0, 2, 0, &v, 4, 0);
    wait_events(c, 2, 5);
    check_rx(c, 2, 4, 4, 0, 1, &v, 4, 4 * MYRI_RX_ALIGN);
    g_assert_true(wait_sram(c, SLOT(1, 6, state), ~0u, MYRI_SLOT_FREE));
    g_assert_cmpuint(sram_readl(c, SLOT(1, 6, status)), ==, 0);
    g_assert_cmpuint(counter(c, GCNT(noroom)), ==, 2);
    g_assert_cmpuint(counter(c, GCNT(undeliverable)), ==, 2);
    card_free(c);
}

/*
 * More sends to a peer than RDP queues: the rest wait in the peer's
 * queue and go, in order, once ACKs make room.  40 sends: window 16,
 * queue 32.
 */
static void test_peer_queue_full(void)
{
    Peer p = { .node = 1 };
    Card *c;
    RdpHdr h, a;
    uint32_t sent = 0;

    if (!have_fw()) {
        return;
    }
    c = card_up(0, 2);
    for (unsigned ctx = 1; ctx <= 5; ctx++) {
        g_assert_cmpuint(ctx_open(c, ctx, 16), ==, 0);
        for (uint32_t i = 0; i < NSLOTS; i++) {
            uint32_t tag = ctx << 8 | i;

            post(c, ctx, i, 1, 0, 0, &tag, 4, 0);
        }
    }
    expect_op(c, &p, RDP_OP_SYN, &h, NULL);
    wait_idle(c);
    /* The 8 RDP has no room for wait parked, not in the doorbell FIFO. */
    g_assert_cmpuint(qt_readl(c->qt, SPECIAL(LANAI_REG_DB_PROD)) -
                     qt_readl(c->qt, SPECIAL(LANAI_REG_DB_CONS)), ==, 0);
    g_assert_cmpuint(sram_readl(c, SLOT(5, 7, state)), ==, MYRI_SLOT_BUSY);
    g_assert_cmpuint(counter(c, GCNT(parked)), ==, 8);

    p.in_connid = h.connid;
    p.in_next = h.seq;
    a = rdp_hdr(c, &p, RDP_OP_SYNACK);
    a.connid = h.connid;
    a.seq = h.seq;
    a.ackno = PEER_EPOCH;
    send_rdp(c, &p, &a, NULL, false);
    for (unsigned burst = 0; burst < 3; burst++) {
        for (unsigned n = 0; n < (burst < 2 ? 16u : 8u); n++, sent++) {
            uint32_t tag = (1 + sent / NSLOTS) << 8 | sent % NSLOTS;

            expect_data(c, &p, 0, 1 + sent / NSLOTS, &tag, 4);
        }
        peer_ack(c, &p);
    }
    for (unsigned ctx = 1; ctx <= 5; ctx++) {
        for (uint32_t i = 0; i < NSLOTS; i++) {
            g_assert_true(wait_sram(c, SLOT(ctx, i, state), ~0u,
                                    MYRI_SLOT_FREE));
        }
    }
    g_assert_cmpuint(counter(c, GCNT(sent)), ==, 40);
    g_assert_cmpuint(counter(c, GCNT(retransmitted)), ==, 0);
    card_free(c);
}

/*
 * Node 1 has no room and never makes any.  Sends to it from contexts 1-5
 * fill RDP's queue for it (32) and more; the doorbells behind them, to
 * node 3 from context 5 (the same context) and 6, and to this node, go at
 * once (they waited behind the stalled ones in the doorbell FIFO
 * before).  After REFUSE_US the sends to node 1 fail with NO_ROOM, and
 * once it has room again it gets the next one.
 */
static void test_stalled_peer(void)
{
    FakePeer fp[2] = { { .p.node = 1, .refuse = true }, { .p.node = 3 } };
    static const uint32_t behind[3] = { 5 << 8 | 4, 5 << 8 | 5, 6 << 8 };
    uint32_t tag, t_first = 0, t_done, ev5, n;
    Card *c;

    if (!have_fw()) {
        return;
    }
    c = card_up(0, 4);
    for (unsigned ctx = 1; ctx <= 6; ctx++) {
        g_assert_cmpuint(ctx_open(c, ctx, 16), ==, 0);
    }
    for (unsigned ctx = 1; ctx <= 5; ctx++) {
        for (uint32_t i = 0; i < (ctx < 5 ? NSLOTS : 4u); i++) {
            tag = ctx << 8 | i;
            post(c, ctx, i, 1, 0, MYRI_SLOT_F_EVENT, &tag, 4, tag);
        }
    }
    for (unsigned i = 0; i < 3; i++) {
        post(c, behind[i] >> 8, behind[i] & 0xff, 3, 0, 0, &behind[i], 4, 0);
    }
    post(c, 6, 1, 0, 6, 0, "local", 5, 0);

    for (n = 0; fp[1].ngot < 3 && n < 5000; n++) {
        serve(c, fp, 2);
    }
    g_assert_cmpuint(fp[1].ngot, ==, 3);
    g_assert_cmpmem(fp[1].got, sizeof(behind), behind, sizeof(behind));
    wait_events(c, 6, 1);
    check_rx(c, 6, 16, 0, 0, 6, "local", 5, 0);
    g_assert_cmpuint(fp[0].cap_nacks, >, 0);
    g_assert_cmpuint(sram_readl(c, SLOT(1, 0, state)), ==, MYRI_SLOT_BUSY);
    g_assert_cmpuint(sram_readl(c, SLOT(5, 3, state)), ==, MYRI_SLOT_BUSY);
    g_assert_cmpuint(rtc(c) - fp[0].first_nack_at, <, REFUSE_US / 4);

    /* Node 1 keeps refusing: every send to it fails, none before the bound. */
    for (n = 0; (ev5 = sram_readl(c, USER(5, ev_prod))) < 4 && n < 20000;
         n++) {
        if (!t_first && sram_readl(c, USER(1, ev_prod))) {
            t_first = rtc(c);
        }
        serve(c, fp, 2);
    }
    g_assert_cmpuint(ev5, ==, 4);
    t_done = rtc(c);
    g_test_message("stalled peer: first NO_ROOM %u us after its first "
                   "refusal, all 36 after %u us (bound %u us)",
                   t_first - fp[0].first_nack_at,
                   t_done - fp[0].first_nack_at, REFUSE_US);
    g_assert_cmpuint(t_first - fp[0].first_nack_at, >=, REFUSE_US);
    g_assert_cmpuint(t_first - fp[0].first_nack_at, <=, REFUSE_US + 1500);
    g_assert_cmpuint(t_done - t_first, <=, 36 * 500);
    for (unsigned ctx = 1; ctx <= 5; ctx++) {
        for (uint32_t i = 0; i < (ctx < 5 ? NSLOTS : 4u); i++) {
            g_assert_true(wait_sram(c, SLOT(ctx, i, state), ~0u,
                                    MYRI_SLOT_FREE));
            g_assert_cmpuint(sram_readl(c, SLOT(ctx, i, status)), ==,
                             MYRI_ERR_NO_ROOM);
            check_event(c, ctx, 16, i, MYRI_EV_SEND_ERR, i, MYRI_ERR_NO_ROOM);
        }
    }
    g_assert_cmpuint(counter(c, GCNT(noroom)), ==, 36);
    g_assert_cmpuint(counter(c, GCNT(undeliverable)), ==, 36);
    g_assert_cmpuint(counter(c, GCNT(timeouts)), ==, 0);

    /* Room again: the next send is delivered. */
    fp[0].refuse = false;
    tag = 0x600d;
    post(c, 1, 0, 1, 0, 0, &tag, 4, 0);
    for (n = 0; fp[0].ngot < 1 && n < 5000; n++) {
        serve(c, fp, 2);
    }
    g_assert_cmpuint(fp[0].ngot, ==, 1);
    g_assert_cmpuint(fp[0].got[0], ==, tag);
    g_assert_true(wait_sram(c, SLOT(1, 0, state), ~0u, MYRI_SLOT_FREE));
    g_assert_cmpuint(sram_readl(c, SLOT(1, 0, status)), ==, 0);
    card_free(c);
}

/* Contexts 1-4 fill RDP's queue to node 1 (32), context 5 parks 4 more. */
static void fill_peer_queue(Card *c)
{
    for (unsigned ctx = 1; ctx <= 5; ctx++) {
        g_assert_cmpuint(ctx_open(c, ctx, 16), ==, 0);
        for (uint32_t i = 0; i < (ctx < 5 ? NSLOTS : 4u); i++) {
            uint32_t tag = ctx << 8 | i;

            post(c, ctx, i, 1, 0, 0, &tag, 4, tag);
        }
    }
}

/*
 * CLOSE_CTX of a context whose sends are all parked: they are dropped,
 * never sent, and the close is acknowledged at once; the others go, in
 * order.
 */
static void test_close_parked(void)
{
    FakePeer fp[1] = { { .p.node = 1 } };
    Card *c;
    uint32_t tag;
    unsigned n;

    if (!have_fw()) {
        return;
    }
    c = card_up(0, 2);
    fill_peer_queue(c);
    /*
     * A slot the MCP holds, in RDP or parked, rung again after the user
     * wrote POSTED into it: BAD_SLOT, so it is never queued twice.
     */
    tag = 3 << 8;                               /* the same data */
    post(c, 3, 0, 1, 0, 0, &tag, 4, tag);
    wait_events(c, 3, 1);
    check_event(c, 3, 16, 0, MYRI_EV_CTX_ERR, 0, MYRI_ERR_BAD_SLOT);
    post(c, 5, 3, 1, 0, 0, "x", 1, 0);
    wait_events(c, 5, 1);
    check_event(c, 5, 16, 0, MYRI_EV_CTX_ERR, 3, MYRI_ERR_BAD_SLOT);
    g_assert_cmpuint(counter(c, GCNT(parked)), ==, 4);
    g_assert_cmpuint(mailbox(c, MCP_CMD_CLOSE_CTX, 5), ==, 0);
    g_assert_cmpuint(sram_readl(c, GCTX(5, state)), ==, MCP_CTX_CLOSED);

    for (n = 0; fp[0].ngot < 32 && n < 5000; n++) {
        serve(c, fp, 1);
    }
    g_assert_cmpuint(fp[0].ngot, ==, 32);
    for (uint32_t k = 0; k < 32; k++) {
        g_assert_cmphex(fp[0].got[k], ==, (1 + k / NSLOTS) << 8 | k % NSLOTS);
    }
    for (n = 0; n < 200; n++) {
        serve(c, fp, 1);
    }
    g_assert_cmpuint(fp[0].ngot, ==, 32);       /* nothing of context 5 */
    g_assert_cmpuint(counter(c, GCNT(sent)), ==, 32);
    card_free(c);
}

/*
 * A node that never answers: after MRC retransmissions RDP's 32 sends
 * fail with PEER_DEAD, and so do the 4 parked behind them, at once (not
 * after another MRC on a new connection).
 */
static void test_lost_parked(void)
{
    Card *c;
    uint32_t t0;

    if (!have_fw()) {
        return;
    }
    c = card_new(0, 2);
    card_load(c, "mcp.bin");
    card_setup(c, MCP_MAGIC);
    sram_writel(c, G(params) + 4 * MCP_P_MRC, 3);
    card_start(c);
    g_assert_true(wait_sram(c, G(state), ~0u, MCP_STATE_READY));
    fill_peer_queue(c);
    t0 = rtc(c);
    step(c, 5 * 20000);         /* (MRC + 1) SYNs an RTO apart, and some */
    for (unsigned ctx = 1; ctx <= 5; ctx++) {
        for (uint32_t i = 0; i < (ctx < 5 ? NSLOTS : 4u); i++) {
            g_assert_cmpuint(sram_readl(c, SLOT(ctx, i, state)), ==,
                             MYRI_SLOT_FREE);
            g_assert_cmpuint(sram_readl(c, SLOT(ctx, i, status)), ==,
                             MYRI_ERR_PEER_DEAD);
        }
    }
    g_test_message("lost peer: 36 sends failed within %u us",
                   rtc(c) - t0);
    g_assert_cmpuint(counter(c, GCNT(undeliverable)), ==, 36);
    card_free(c);
}

/*
 * A peer that boots again: PEER_RESET, and what was in flight goes again
 * to the new incarnation, on a new connection.
 */
static void test_peer_reset(void)
{
    Peer p = { .node = 1 };
    Card *c;
    RdpHdr h, s, a;
    uint32_t old_connid;
    struct myri_event ev;

    if (!have_fw()) {
        return;
    }
    c = card_up(0, 2);
    g_assert_cmpuint(ctx_open(c, 1, 16), ==, 0);
    g_assert_cmpuint(ctx_open(c, 2, 16), ==, 0);
    post(c, 1, 0, 1, 0, 0, "again", 5, 0x5107);
    peer_accept(c, &p);
    expect_data(c, &p, 0, 1, "again", 5);
    old_connid = p.in_connid;
    /* The user scribbles on its busy slot's wire bytes: resends ignore it. */
    sram_writel(c, SLOT(1, 0, dst_ctx_wire), 9 << 8);

    s = rdp_hdr(c, &p, RDP_OP_SYN);            /* a new incarnation */
    s.connid = 0xbeef0001;
    s.seq = 1;
    s.ackno = PEER_EPOCH + 1;
    send_rdp(c, &p, &s, NULL, false);
    expect_op(c, &p, RDP_OP_SYNACK, &h, NULL);
    g_assert_cmphex(h.connid, ==, s.connid);

    wait_events(c, 1, 1);
    check_event(c, 1, 16, 0, MYRI_EV_PEER_RESET, 0, 0);
    event_at(c, 1, 16, 0, &ev);
    g_assert_cmpuint(ev.src_node, ==, 1);
    wait_events(c, 2, 1);
    check_event(c, 2, 16, 0, MYRI_EV_PEER_RESET, 0, 0);

    /* The unacknowledged send goes again, on a new connection. */
    expect_op(c, &p, RDP_OP_SYN, &h, NULL);
    g_assert_cmphex(h.connid, !=, old_connid);
    p.in_connid = h.connid;
    p.in_next = h.seq;
    a = rdp_hdr(c, &p, RDP_OP_SYNACK);
    a.connid = h.connid;
    a.seq = h.seq;
    a.ackno = PEER_EPOCH + 1;
    send_rdp(c, &p, &a, NULL, false);
    expect_data(c, &p, 0, 1, "again", 5);
    g_assert_cmpuint(sram_readl(c, SLOT(1, 0, state)), ==, MYRI_SLOT_BUSY);
    peer_ack(c, &p);
    g_assert_true(wait_sram(c, SLOT(1, 0, state), ~0u, MYRI_SLOT_FREE));
    g_assert_cmpuint(sram_readl(c, SLOT(1, 0, status)), ==, 0);
    g_assert_cmpuint(counter(c, GCNT(reconnects)), ==, 1);
    g_assert_cmpuint(counter(c, GCNT(undeliverable)), ==, 0);
    card_free(c);
}

/*
 * Largest payloads fill the data ring; one that does not fit before the
 * ring's end starts at its beginning, once the user has freed that.
 */
static void test_ring_wrap(void)
{
    static uint8_t big[MCP_MAX_PAYLOAD];
    Peer p = { .node = 1 };
    Card *c;
    RdpHdr h;
    uint32_t seq;

    if (!have_fw()) {
        return;
    }
    for (uint32_t i = 0; i < sizeof(big); i++) {
        big[i] = i * 7 + (i >> 8);
    }
    c = card_up(0, 2);
    g_assert_cmpuint(ctx_open(c, 1, 16), ==, 0);
    peer_connect(c, &p);
    seq = p.out_seq;
    for (uint32_t i = 0; i < 7; i++) {
        big[0] = i;
        peer_data(c, &p, seq++, 1, 0, big, sizeof(big), false);
    }
    peer_data(c, &p, seq++, 1, 0, "small", 5, false);
    big[0] = 0xee;
    peer_data(c, &p, seq, 1, 0, big, sizeof(big), false);
    wait_events(c, 1, 8);
    big[0] = 6;
    check_rx(c, 1, 16, 6, 1, 0, big, sizeof(big), 6 * 8192);
    check_rx(c, 1, 16, 7, 1, 0, "small", 5, 7 * 8192);
    for (;;) {                  /* ACKs of 4 at once, then the refusal */
        expect_rdp(c, &p, &h, NULL);
        if (h.op == RDP_OP_CAP_NACK) {
            break;
        }
        g_assert_cmpuint(h.op, ==, RDP_OP_ACK);
    }
    g_assert_cmphex(h.seq, ==, seq);

    sram_writel(c, USER(1, ev_cons), 1);
    sram_writel(c, USER(1, rx_cons), 8192);
    big[0] = 0xee;
    peer_data(c, &p, seq, 1, 0, big, sizeof(big), false);
    wait_events(c, 1, 9);
    check_rx(c, 1, 16, 8, 1, 0, big, sizeof(big), RING);
    card_free(c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/mcp/boot", test_boot);
    g_test_add_func("/mcp/panic", test_panic);
    g_test_add_func("/mcp/bad-firmware", test_bad_firmware);
    g_test_add_func("/mcp/local", test_local);
    g_test_add_func("/mcp/local-back-pressure", test_local_back_pressure);
    g_test_add_func("/mcp/local-stalled", test_local_stalled);
    g_test_add_func("/mcp/peer", test_peer);
    g_test_add_func("/mcp/peer-queue-full", test_peer_queue_full);
    g_test_add_func("/mcp/stalled-peer", test_stalled_peer);
    g_test_add_func("/mcp/close-parked", test_close_parked);
    g_test_add_func("/mcp/lost-parked", test_lost_parked);
    g_test_add_func("/mcp/peer-reset", test_peer_reset);
    g_test_add_func("/mcp/bad-requests", test_bad_requests);
    g_test_add_func("/mcp/rx-errors", test_rx_errors);
    g_test_add_func("/mcp/capacity", test_capacity);
    g_test_add_func("/mcp/ring-wrap", test_ring_wrap);
    g_test_add_func("/mcp/close", test_close);
    return g_test_run();
}
