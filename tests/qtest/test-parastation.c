/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest device tests for -device parastation (docs/hw/parastation.md).
 * The test plays fabricd on the board's chardev.
 */
#include "qtest-client.h"
#include "proto/ps1.h"

#include <string.h>
#include <zlib.h>

#include "vcluster/hw/ps1_regs.h"

#define BASE 0xe1000000ull
#define R(off) (BASE + (off))
enum {
    ID = 0x00, SREG = 0x04, CREG = 0x08, ISR = 0x0c, NODE = 0x10,
    FABRIC = 0x14, RT_INDEX = 0x18, RT_ENTRY = 0x1c, NREG = 0x20,
    RX_HEAD = 0x24, TX_FREE = 0x28, RX_USED = 0x2c, BARRIER = 0x30,
    BARRIER_MASK = 0x34, RT_COMMIT = 0x38, PKT_STATE = 0x3c, CNT_TX = 0x40, CNT_RX = 0x44,
    CNT_PARITY = 0x48, CNT_BARRIERS = 0x4c,
    WAIT = 0x100,                   /* + 4 * cond */
};
#define WAIT_PKT 1u
#define WAIT_TX 2u
#define WAIT_BAR(line) (4u << (line))
#define TX_EMPTY (1u << 0)
#define TX_HALF (1u << 1)
#define TX_FULL (1u << 2)
#define RX_EMPTY (1u << 3)
#define RX_HALF (1u << 4)
#define RX_FULL (1u << 5)
#define PKT_READY (1u << 6)
#define LINK (1u << 7)
#define ERR_PARITY (1u << 16)
#define ERR_TX_HEADER (1u << 17)
#define ERR_TX_OVERFLOW (1u << 18)
#define ERR_RX_UNDERFLOW (1u << 19)
#define ERR_LINK (1u << 20)
#define ERR_CONFIG (1u << 21)
#define K FABRIC_KIND_PS1

typedef struct {
    QTest *qt;
    FakeFabric *ff;
    char *dir;
} Board;

static void expect_frame(Board *b, uint8_t type, FabricHdr *h, uint8_t **p)
{
    g_assert_true(ff_recv(b->ff, h, p));
    g_assert_cmpint(h->kind, ==, K);
    g_assert_cmpint(h->type, ==, type);
}

/* Boot a board as node `node` and take its HELLO; the link is not up yet. */
static Board *board_start(unsigned node)
{
    Board *b = g_new0(Board, 1);
    FabricHdr h;
    g_autofree uint8_t *p = NULL;

    b->dir = g_dir_make_tmp("vcps-XXXXXX", NULL);
    b->ff = ff_listen(b->dir, "fabric.sock");
    g_autofree char *chr = g_strdup_printf("socket,id=ps,path=%s",
                                           b->ff->path);
    g_autofree char *dev = g_strdup_printf("parastation,chardev=ps,node=%u",
                                           node);
    const char *args[] = { "-chardev", chr, "-device", dev, NULL };
    b->qt = qt_start(args);
    ff_accept(b->ff);
    g_assert_cmpint(qt_pci_map(b->qt, 0x1234, 0x5053, BASE), >=, 0);

    expect_frame(b, FABRIC_TYPE_CONTROL, &h, &p);
    g_assert_cmpint(p[0], ==, FABRIC_CTL_HELLO);
    g_assert_cmpint(fabric_get_le16(p + 1), ==, node);
    return b;
}

static void send_hello_ack(Board *b, unsigned node, unsigned nodes)
{
    uint8_t ack[5] = { FABRIC_CTL_HELLO_ACK, 0, 0, 0, 0 };

    fabric_put_le16(ack + 1, nodes);
    ff_send(b->ff, K, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, node, ack, 5);
}

/* Boot a board as node `node` of a `nodes`-node ring and bring its link up. */
static Board *board_up(unsigned node, unsigned nodes)
{
    Board *b = board_start(node);

    send_hello_ack(b, node, nodes);
    g_assert_true(qt_wait_reg(b->qt, R(SREG), LINK, LINK));
    return b;
}

static void board_down(Board *b)
{
    qt_quit(b->qt);
    ff_close(b->ff);
    rmdir(b->dir);
    g_free(b->dir);
    g_free(b);
}

/* A DATA payload as a board sends it: header, words, parity, CRC-32. */
static uint8_t *data_frame(uint32_t header, const uint32_t *w, uint32_t n,
                           uint32_t *len)
{
    *len = 4 + 4 * n + n + 4;
    uint8_t *p = g_malloc(*len);
    fabric_put_le32(p, header);
    for (uint32_t i = 0; i < n; i++) {
        uint8_t par = 0;
        fabric_put_le32(p + 4 + 4 * i, w[i]);
        for (int byte = 0; byte < 4; byte++) {
            par |= (__builtin_popcount((w[i] >> (8 * byte)) & 0xff) & 1)
                   << byte;
        }
        p[4 + 4 * n + i] = par;
    }
    fabric_put_le32(p + *len - 4, crc32(0, p, 4 + 4 * n));
    return p;
}

static void send_packet(Board *b, uint16_t src, const uint32_t *w, uint32_t n)
{
    uint32_t len;
    g_autofree uint8_t *p = data_frame((uint32_t)src << 16 | n, w, n, &len);
    ff_send(b->ff, K, FABRIC_TYPE_DATA, src, 0, p, len);
}

static void write_packet(Board *b, uint16_t dest, uint32_t n, uint32_t seed)
{
    qt_writel(b->qt, R(NREG), (uint32_t)dest << 16 | n);
    for (uint32_t i = 0; i < n; i++) {
        qt_writel(b->qt, R(NREG), seed + i);
    }
}

static void test_identity_and_reset_state(void)
{
    Board *b = board_up(1, 2);
    QTest *qt = b->qt;

    g_assert_cmphex(qt_readl(qt, R(ID)), ==, 0x50530002);
    g_assert_cmphex(qt_readl(qt, R(SREG)), ==, TX_EMPTY | RX_EMPTY | LINK);
    g_assert_cmpuint(qt_readl(qt, R(NODE)), ==, 1);
    g_assert_cmpuint(qt_readl(qt, R(FABRIC)) & 0xffff, ==, 2);
    g_assert_cmpuint(qt_readl(qt, R(TX_FREE)), ==, 1024);
    g_assert_cmpuint(qt_readl(qt, R(RX_USED)), ==, 0);
    g_assert_cmpuint(qt_readl(qt, R(RX_HEAD)), ==, 0);
    qt_writel(qt, R(RT_INDEX), 5);
    g_assert_cmpuint(qt_readl(qt, R(RT_ENTRY)), ==, 3);
    g_assert_cmpuint(qt_readl(qt, R(0x3fc)), ==, 0);  /* unknown: 0 */
    board_down(b);
}

static void test_send_packet(void)
{
    Board *b = board_up(1, 2);
    FabricHdr h;
    g_autofree uint8_t *p = NULL;

    write_packet(b, 0, 3, 0xa0);
    expect_frame(b, FABRIC_TYPE_DATA, &h, &p);
    g_assert_cmpuint(h.src, ==, 1);
    g_assert_cmpuint(h.dst, ==, 0);
    g_assert_cmpuint(h.len, ==, 4 + 12 + 3 + 4);
    uint32_t words[3] = { 0xa0, 0xa1, 0xa2 }, len;
    g_autofree uint8_t *want = data_frame(3, words, 3, &len);
    g_assert_cmpmem(p, h.len, want, len);
    g_assert_cmpuint(qt_readl(b->qt, R(CNT_TX)), ==, 1);
    g_assert_cmphex(qt_readl(b->qt, R(SREG)) & TX_EMPTY, ==, TX_EMPTY);
    board_down(b);
}

/* Without insertion credit, packets wait in the TX FIFO and SREG shows it. */
static void test_tx_flow_control_and_fifo_flags(void)
{
    Board *b = board_up(1, 2);
    QTest *qt = b->qt;
    FabricHdr h;
    uint8_t *p;

    write_packet(b, 0, 127, 0);                     /* uses the one credit */
    expect_frame(b, FABRIC_TYPE_DATA, &h, &p);
    g_free(p);
    write_packet(b, 0, 127, 1000);                  /* waits: 512 bytes */
    g_assert_true(ff_quiet(b->ff));
    g_assert_cmpuint(qt_readl(qt, R(TX_FREE)), ==, 512);
    g_assert_cmphex(qt_readl(qt, R(SREG)) & (TX_EMPTY | TX_HALF | TX_FULL),
                    ==, TX_HALF);
    write_packet(b, 0, 1, 2000);                    /* 8 more bytes */
    g_assert_cmphex(qt_readl(qt, R(SREG)) & TX_FULL, ==, TX_FULL);

    uint8_t credit[4] = { 2, 0, 0, 0 };
    ff_send(b->ff, K, FABRIC_TYPE_CREDIT, FABRIC_NODE_NONE, 1, credit, 4);
    expect_frame(b, FABRIC_TYPE_DATA, &h, &p);
    g_assert_cmpuint(fabric_get_le32(p + 4), ==, 1000);
    g_free(p);
    expect_frame(b, FABRIC_TYPE_DATA, &h, &p);
    g_assert_cmpuint(fabric_get_le32(p + 4), ==, 2000);
    g_free(p);
    g_assert_true(qt_wait_reg(qt, R(SREG), TX_EMPTY, TX_EMPTY));
    g_assert_cmpuint(qt_readl(qt, R(CNT_TX)), ==, 3);
    board_down(b);
}

static void test_tx_errors(void)
{
    Board *b = board_up(1, 2);
    QTest *qt = b->qt;
    FabricHdr h;
    uint8_t *p;

    qt_writel(qt, R(NREG), 0 << 16 | 0);            /* no data words */
    g_assert_cmphex(qt_readl(qt, R(SREG)) & ERR_TX_HEADER, ==,
                    ERR_TX_HEADER);
    g_assert_cmphex(qt_readl(qt, R(ISR)) & 2, ==, 2);
    qt_writel(qt, R(CREG), 1 << 8);                 /* CLEAR_ERR */
    g_assert_cmphex(qt_readl(qt, R(SREG)) & 0xff0000, ==, 0);
    qt_writel(qt, R(NREG), 7 << 16 | 1);            /* node 7 of 2 */
    g_assert_cmphex(qt_readl(qt, R(SREG)) & ERR_TX_HEADER, ==,
                    ERR_TX_HEADER);
    qt_writel(qt, R(NREG), 0 << 16 | 128);          /* 512 data bytes */
    g_assert_cmpuint(qt_readl(qt, R(TX_FREE)), ==, 1024);
    qt_writel(qt, R(CREG), 1 << 8);

    /* Fill the FIFO without credit, then one word more. */
    write_packet(b, 0, 1, 0);
    expect_frame(b, FABRIC_TYPE_DATA, &h, &p);
    g_free(p);
    for (int i = 0; i < 2; i++) {
        write_packet(b, 0, 127, 0);
    }
    g_assert_cmpuint(qt_readl(qt, R(TX_FREE)), ==, 0);
    qt_writel(qt, R(NREG), 0xdead);
    g_assert_cmphex(qt_readl(qt, R(SREG)) & ERR_TX_OVERFLOW, ==,
                    ERR_TX_OVERFLOW);
    board_down(b);
}

static void test_receive_and_packet_ready(void)
{
    Board *b = board_up(0, 2);
    QTest *qt = b->qt;
    FabricHdr h;
    uint8_t *p;
    uint32_t w1[3] = { 11, 12, 13 }, w2[1] = { 21 };

    send_packet(b, 1, w1, 3);
    send_packet(b, 1, w2, 1);
    g_assert_true(qt_wait_reg(qt, R(RX_USED), ~0u, 24));
    g_assert_cmphex(qt_readl(qt, R(SREG)) & (PKT_READY | RX_EMPTY), ==,
                    PKT_READY);
    g_assert_cmphex(qt_readl(qt, R(RX_HEAD)), ==, 1 << 16 | 3);
    g_assert_cmphex(qt_readl(qt, R(ISR)) & 1, ==, 1);
    g_assert_cmphex(qt_readl(qt, R(NREG)), ==, 1 << 16 | 3);
    g_assert_cmphex(qt_readl(qt, R(PKT_STATE)), ==, 3 << 16);
    for (int i = 0; i < 3; i++) {
        g_assert_cmpuint(qt_readl(qt, R(NREG)), ==, w1[i]);
    }
    g_assert_cmphex(qt_readl(qt, R(PKT_STATE)), ==, 0);
    /* Its 16 bytes are owed, not credited yet: less than a max packet. */
    g_assert_true(ff_quiet(b->ff));
    g_assert_cmphex(qt_readl(qt, R(RX_HEAD)), ==, 1 << 16 | 1);
    g_assert_cmphex(qt_readl(qt, R(NREG)), ==, 1 << 16 | 1);
    g_assert_cmpuint(qt_readl(qt, R(NREG)), ==, 21);
    g_assert_cmphex(qt_readl(qt, R(SREG)) & (PKT_READY | RX_EMPTY), ==,
                    RX_EMPTY);
    g_assert_cmpuint(qt_readl(qt, R(CNT_RX)), ==, 2);

    /* A max packet read makes the 24 + 512 owed bytes one credit frame. */
    uint32_t big[127];
    for (int i = 0; i < 127; i++) {
        big[i] = 0x1000 + i;
    }
    send_packet(b, 1, big, 127);
    g_assert_true(qt_wait_reg(qt, R(SREG), PKT_READY, PKT_READY));
    for (int i = 0; i < 128; i++) {
        qt_readl(qt, R(NREG));
    }
    expect_frame(b, FABRIC_TYPE_CREDIT, &h, &p);
    g_assert_cmpuint(fabric_get_le32(p), ==, 24 + 512);
    g_free(p);

    qt_readl(qt, R(NREG));                          /* empty FIFO */
    g_assert_cmphex(qt_readl(qt, R(SREG)) & ERR_RX_UNDERFLOW, ==,
                    ERR_RX_UNDERFLOW);
    board_down(b);
}

static void test_rx_fifo_half_and_full(void)
{
    Board *b = board_up(0, 2);
    uint32_t w[127];

    for (int i = 0; i < 127; i++) {
        w[i] = i;
    }
    send_packet(b, 1, w, 127);
    g_assert_true(qt_wait_reg(b->qt, R(SREG), RX_HALF | RX_FULL, RX_HALF));
    send_packet(b, 1, w, 127);
    g_assert_true(qt_wait_reg(b->qt, R(SREG), RX_HALF | RX_FULL,
                              RX_HALF | RX_FULL));
    g_assert_cmpuint(qt_readl(b->qt, R(RX_USED)), ==, 1024);
    board_down(b);
}

/* Corrupt frames are reported and never reach the RX FIFO. */
static void test_parity_error(void)
{
    Board *b = board_up(0, 2);
    QTest *qt = b->qt;
    FabricHdr h;
    uint8_t *credit;
    uint32_t w[2] = { 0x12345678, 0x9abcdef0 }, len;
    /*
     * A data bit; a parity bit; two bits of one byte (parity cannot see
     * it, the CRC does); an unused parity bit; a CRC bit; the word count
     * (2 -> 3 and 2 -> 0) and the node field of the header.
     */
    const struct { uint32_t byte; uint8_t mask; } flips[] = {
        { 4, 0x01 }, { 12, 0x02 }, { 8, 0x03 }, { 13, 0x80 }, { 15, 0x10 },
        { 0, 0x01 }, { 0, 0x02 }, { 2, 0x04 },
    };

    qt_writel(qt, R(CREG), 0x2);                    /* IE_ERR */
    for (unsigned i = 0; i < G_N_ELEMENTS(flips); i++) {
        g_autofree uint8_t *p = data_frame(1 << 16 | 2, w, 2, &len);
        p[flips[i].byte] ^= flips[i].mask;
        ff_send(b->ff, K, FABRIC_TYPE_DATA, 1, 0, p, len);
        g_assert_true(qt_wait_reg(qt, R(CNT_PARITY), ~0u, i + 1));
        expect_frame(b, FABRIC_TYPE_CREDIT, &h, &credit);
        g_assert_cmpuint(fabric_get_le32(credit), ==, 12);
        g_free(credit);
    }
    g_assert_cmphex(qt_readl(qt, R(SREG)) & (ERR_PARITY | RX_EMPTY), ==,
                    ERR_PARITY | RX_EMPTY);
    g_assert_cmphex(qt_readl(qt, R(ISR)) & 2, ==, 2);
    g_assert_cmpuint(qt_readl(qt, R(CNT_RX)), ==, 0);
    /* A good packet after that is delivered. */
    send_packet(b, 1, w, 2);
    g_assert_true(qt_wait_reg(qt, R(SREG), PKT_READY, PKT_READY));
    board_down(b);
}

static void test_interrupts(void)
{
    Board *b = board_up(0, 2);
    QTest *qt = b->qt;
    uint32_t w[1] = { 5 };

    /* No BIOS ran: route PIIX3's PIRQA-D to IRQ 11, as SeaBIOS would. */
    qt_pci_cfg_write(qt, 1, 0x60, 0x0b0b0b0b);
    qt_irq_intercept(qt);
    send_packet(b, 1, w, 1);                        /* IE_PKT is off */
    g_assert_true(qt_wait_reg(qt, R(ISR), 1, 1));
    g_assert_cmpint(qt->irq_raised, ==, 0);
    qt_writel(qt, R(CREG), 0x1);                    /* enable: asserts */
    g_assert_cmpint(qt->irq_raised, ==, 1);
    qt_writel(qt, R(ISR), 1);                       /* ack: deasserts */
    g_assert_cmpint(qt->irq_lowered, >=, 1);
    g_assert_cmphex(qt_readl(qt, R(ISR)), ==, 0);
    board_down(b);
}

static void test_board_reset(void)
{
    Board *b = board_up(1, 2);
    QTest *qt = b->qt;
    FabricHdr h;
    uint8_t *p;
    uint32_t w[1] = { 5 };

    send_packet(b, 0, w, 1);
    g_assert_true(qt_wait_reg(qt, R(SREG), PKT_READY, PKT_READY));
    qt_writel(qt, R(NREG), 0 << 16 | 2);            /* half a packet */
    g_assert_cmphex(qt_readl(qt, R(PKT_STATE)), ==, 2);
    qt_writel(qt, R(CREG), 0xf);
    qt_writel(qt, R(RT_INDEX), 0);
    qt_writel(qt, R(RT_ENTRY), 1);
    qt_writel(qt, R(CREG), 1u << 31);
    g_assert_cmphex(qt_readl(qt, R(SREG)), ==, TX_EMPTY | RX_EMPTY);
    g_assert_cmphex(qt_readl(qt, R(CREG)), ==, 0);
    g_assert_cmpuint(qt_readl(qt, R(RT_ENTRY)), ==, 3);
    g_assert_cmpuint(qt_readl(qt, R(NODE)), ==, 1);
    /* The board announces itself again; the fabric answers. */
    expect_frame(b, FABRIC_TYPE_CONTROL, &h, &p);
    g_assert_cmpint(p[0], ==, FABRIC_CTL_HELLO);
    g_free(p);
    uint8_t ack[5] = { FABRIC_CTL_HELLO_ACK, 2, 0, 0, 0 };
    ff_send(b->ff, K, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, 1, ack, 5);
    g_assert_true(qt_wait_reg(qt, R(SREG), LINK, LINK));
    board_down(b);
}

static void test_routes_and_barrier(void)
{
    Board *b = board_up(1, 2);
    QTest *qt = b->qt;
    FabricHdr h;
    uint8_t *p;

    qt_writel(qt, R(RT_INDEX), 0);
    qt_writel(qt, R(RT_ENTRY), 1);
    qt_writel(qt, R(RT_INDEX), 1);
    qt_writel(qt, R(RT_ENTRY), 0);
    qt_writel(qt, R(RT_COMMIT), 1);
    expect_frame(b, FABRIC_TYPE_CONTROL, &h, &p);
    const uint8_t routes[] = { 16, 1, 0, 2, 0, 1, 0 };
    g_assert_cmpmem(p, h.len, routes, sizeof(routes));
    g_free(p);

    qt_writel(qt, R(BARRIER_MASK), 0x5);
    expect_frame(b, FABRIC_TYPE_BARRIER, &h, &p);
    g_assert_cmpuint(p[0], ==, 2);
    g_assert_cmpuint(p[1], ==, 0x5);
    g_free(p);
    qt_writel(qt, R(BARRIER), 0x3);                 /* line 1 not masked */
    expect_frame(b, FABRIC_TYPE_BARRIER, &h, &p);
    g_assert_cmpuint(p[0], ==, 1);
    g_assert_cmpuint(p[1], ==, 0x1);
    g_free(p);
    g_assert_cmphex(qt_readl(qt, R(SREG)) & 0xff00, ==, 0x0100);
    uint8_t release[2] = { 3, 0x1 };
    ff_send(b->ff, K, FABRIC_TYPE_BARRIER, FABRIC_NODE_NONE, 1, release, 2);
    g_assert_true(qt_wait_reg(qt, R(BARRIER), 0xf0f, 0x100));
    g_assert_cmphex(qt_readl(qt, R(ISR)) & 4, ==, 4);
    g_assert_cmpuint(qt_readl(qt, R(CNT_BARRIERS)), ==, 1);
    qt_writel(qt, R(BARRIER), 0x100);               /* acknowledge */
    g_assert_cmphex(qt_readl(qt, R(BARRIER)), ==, 0);
    board_down(b);
}

/* Garbage from the fabric drops the link; QEMU survives and says so. */
static void test_fabric_garbage_and_loss(void)
{
    Board *b = board_up(0, 2);
    QTest *qt = b->qt;
    uint8_t junk[64];

    memset(junk, 0xee, sizeof(junk));
    ff_send_raw(b->ff, junk, sizeof(junk));
    g_assert_true(ff_peer_closed(b->ff));
    g_assert_true(qt_wait_reg(qt, R(SREG), LINK | ERR_LINK, ERR_LINK));
    g_assert_cmphex(qt_readl(qt, R(ID)), ==, 0x50530002);
    board_down(b);
}

/*
 * qtest accesses come from no vCPU, so WAIT reads must never stall: they
 * return SREG at once and, unlike NREG, consume nothing.
 */
static void test_wait_window_without_vcpu(void)
{
    Board *b = board_up(0, 2);
    QTest *qt = b->qt;
    uint32_t w[2] = { 5, 6 };

    g_assert_cmphex(qt_readl(qt, R(WAIT + 4 * WAIT_PKT)), ==,
                    qt_readl(qt, R(SREG)));
    g_assert_cmphex(qt_readl(qt, R(WAIT + 4 * WAIT_PKT)) & PKT_READY, ==, 0);
    g_assert_cmphex(qt_readl(qt, R(WAIT + 4 * WAIT_BAR(3))), ==,
                    TX_EMPTY | RX_EMPTY | LINK);
    g_assert_cmphex(qt_readl(qt, R(WAIT + 4 * WAIT_TX)) & TX_FULL, ==, 0);
    g_assert_cmphex(qt_readl(qt, R(WAIT + 4 * 63)), ==,
                    TX_EMPTY | RX_EMPTY | LINK);

    send_packet(b, 1, w, 2);
    g_assert_true(qt_wait_reg(qt, R(SREG), PKT_READY, PKT_READY));
    for (int i = 0; i < 3; i++) {
        g_assert_cmphex(qt_readl(qt, R(WAIT + 4 * WAIT_PKT)) & PKT_READY, ==,
                        PKT_READY);
    }
    g_assert_cmpuint(qt_readl(qt, R(RX_USED)), ==, 12);
    g_assert_cmphex(qt_readl(qt, R(NREG)), ==, 1 << 16 | 2);
    g_assert_cmphex(qt_readl(qt, R(PKT_STATE)), ==, 2 << 16);
    board_down(b);
}

static void test_fabric_reject(void)
{
    Board *b = board_up(0, 2);
    const char reject[] = "\x03node id does not match the socket";

    ff_send(b->ff, K, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, 0, reject,
            sizeof(reject) - 1);
    g_assert_true(qt_wait_reg(b->qt, R(SREG), ERR_CONFIG, ERR_CONFIG));
    board_down(b);
}

/*
 * The node count in HELLO_ACK sizes the route table the board sends: a
 * count beyond the table (or one that leaves out this node) is refused,
 * never read past the table.
 */
static void test_hello_ack_bounds(void)
{
    static const unsigned bad[] = { 0, FABRIC_MAX_NODES + 1, 0xffff, 3 };
    Board *b = board_start(3);
    QTest *qt = b->qt;
    FabricHdr h;
    uint8_t *p;

    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        send_hello_ack(b, 3, bad[i]);
        g_assert_true(qt_wait_reg(qt, R(SREG), ERR_CONFIG, ERR_CONFIG));
        g_assert_cmphex(qt_readl(qt, R(SREG)) & LINK, ==, 0);
        qt_writel(qt, R(CREG), PS1_CREG_CLEAR_ERR);
    }
    /* a route commit now sends a table of the board's own size at most */
    qt_writel(qt, R(RT_COMMIT), 1);
    expect_frame(b, FABRIC_TYPE_CONTROL, &h, &p);
    g_assert_cmpuint(p[0], ==, FABRIC_CTL_ROUTES);
    g_assert_cmpuint(fabric_get_le16(p + 3), <=, FABRIC_MAX_NODES);
    g_free(p);
    /* a good one still brings the link up */
    send_hello_ack(b, 3, 4);
    g_assert_true(qt_wait_reg(qt, R(SREG), LINK, LINK));
    board_down(b);
}

/*
 * A fabricd that stops reading stalls nothing: route commits (about 1 KiB
 * each for 1024 nodes) keep being taken, the vCPU side keeps answering,
 * QEMU's memory stays within the link's bound, and what was queued leaves
 * in order once fabricd reads again.
 */
static void test_fabric_stalled(void)
{
    enum { COMMITS = 12000 };
    Board *b = board_up(0, FABRIC_MAX_NODES);
    QTest *qt = b->qt;
    uint64_t before = qt_rss_kb(qt), after;
    unsigned frames = 0;
    FabricHdr h;
    uint8_t *p;
    uint32_t w[1] = { 7 };

    for (unsigned i = 0; i < COMMITS; i++) {
        qt_writel(qt, R(RT_COMMIT), 1);
    }
    g_assert_cmphex(qt_readl(qt, R(ID)), ==, 0x50530002);
    after = qt_rss_kb(qt);
    g_test_message("QEMU RSS %" G_GUINT64_FORMAT " KiB before, %"
                   G_GUINT64_FORMAT " KiB after %u commits",
                   before, after, COMMITS);
    g_assert_cmpuint(after, <, before + 3 * FABRIC_LINK_TXQ_MAX / 1024);
    /* fabricd reads again: whole ROUTES frames, then the link works */
    while (ff_recv(b->ff, &h, &p)) {
        g_assert_cmpuint(h.type, ==, FABRIC_TYPE_CONTROL);
        g_assert_cmpuint(p[0], ==, FABRIC_CTL_ROUTES);
        g_assert_cmpuint(h.len, ==, FABRIC_PS1_ROUTES_HDR_LEN +
                         FABRIC_MAX_NODES);
        g_free(p);
        if (++frames == COMMITS) {
            break;
        }
    }
    g_assert_cmpuint(frames, <, COMMITS);
    g_assert_cmpuint(frames, >=, FABRIC_LINK_TXQ_MAX /
                     (FABRIC_HDR_LEN + FABRIC_PS1_ROUTES_HDR_LEN +
                      FABRIC_MAX_NODES));
    send_packet(b, 1, w, 1);
    g_assert_true(qt_wait_reg(qt, R(SREG), PKT_READY, PKT_READY));
    board_down(b);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/parastation/identity-and-reset-state",
                    test_identity_and_reset_state);
    g_test_add_func("/parastation/send-packet", test_send_packet);
    g_test_add_func("/parastation/tx-flow-control-and-fifo-flags",
                    test_tx_flow_control_and_fifo_flags);
    g_test_add_func("/parastation/tx-errors", test_tx_errors);
    g_test_add_func("/parastation/receive-and-packet-ready",
                    test_receive_and_packet_ready);
    g_test_add_func("/parastation/rx-fifo-half-and-full",
                    test_rx_fifo_half_and_full);
    g_test_add_func("/parastation/parity-error", test_parity_error);
    g_test_add_func("/parastation/interrupts", test_interrupts);
    g_test_add_func("/parastation/board-reset", test_board_reset);
    g_test_add_func("/parastation/routes-and-barrier",
                    test_routes_and_barrier);
    g_test_add_func("/parastation/fabric-garbage-and-loss",
                    test_fabric_garbage_and_loss);
    g_test_add_func("/parastation/fabric-reject", test_fabric_reject);
    g_test_add_func("/parastation/hello-ack-bounds", test_hello_ack_bounds);
    g_test_add_func("/parastation/fabric-stalled", test_fabric_stalled);
    g_test_add_func("/parastation/wait-window-without-vcpu",
                    test_wait_window_without_vcpu);
    return g_test_run();
}
