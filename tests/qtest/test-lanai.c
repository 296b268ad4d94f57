/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * qtest device tests for -device lanai (docs/hw/lanai.md).  The test plays
 * fabricd on the card's chardev and loads tiny firmware, assembled here,
 * into SRAM.  Under qtest the virtual clock moves only by clock_step.
 */
#include "qtest-client.h"
#include "proto/myrinet.h"

#include <inttypes.h>
#include <string.h>
#include <zlib.h>

#include "vcluster/hw/lanai_regs.h"

#define BASE ((uint64_t)0xe1000000)
#define SRAM(off) (BASE + LANAI_SRAM_OFFSET + (off))
#define CFG(off) (BASE + LANAI_CONFIG_OFFSET + (off))
#define REG(off) (BASE + LANAI_HOST_REG(off))
#define DB(ctx, off) (BASE + LANAI_DOORBELL_OFFSET + \
                      (ctx) * LANAI_DOORBELL_PAGE + (off))
#define K FABRIC_KIND_MYRINET
#define NODE 3
#define HOST_RAM ((uint64_t)0x100000)        /* guest RAM for DMA tests */

/* ---- a tiny RV32I assembler ---------------------------------------- */

enum { ZERO, RA, SP, GP, TP, T0, T1, T2, S0, S1, A0, A1, A2, A3, A4, A5,
       A6, A7, S2, S3, S4, S5, S6, S7, S8, S9, S10, S11, T3, T4, T5, T6 };

typedef struct Prog {
    uint32_t w[128];
    int n;
} Prog;

static void emit(Prog *p, uint32_t insn)
{
    if (p->n >= (int)G_N_ELEMENTS(p->w)) {
        g_error("test firmware longer than %d words", p->n);
    }
    p->w[p->n++] = insn;
}

static uint32_t imm12(int32_t imm)
{
    g_assert_cmpint(imm, >=, -2048);
    g_assert_cmpint(imm, <=, 2047);
    return (uint32_t)imm & 0xfff;
}

static void op_i(Prog *p, uint32_t f3, int rd, int rs1, int32_t imm)
{
    emit(p, imm12(imm) << 20 | rs1 << 15 | f3 << 12 | rd << 7 | 0x13);
}

static void addi(Prog *p, int rd, int rs1, int32_t imm)
{
    op_i(p, 0, rd, rs1, imm);
}

static void andi(Prog *p, int rd, int rs1, int32_t imm)
{
    op_i(p, 7, rd, rs1, imm);
}

static void slli(Prog *p, int rd, int rs1, int sh)
{
    op_i(p, 1, rd, rs1, sh);
}

static void op_r(Prog *p, uint32_t f3, int rd, int rs1, int rs2)
{
    emit(p, rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | 0x33);
}

static void add(Prog *p, int rd, int rs1, int rs2)
{
    op_r(p, 0, rd, rs1, rs2);
}

static void and(Prog *p, int rd, int rs1, int rs2)
{
    op_r(p, 7, rd, rs1, rs2);
}

static void lui(Prog *p, int rd, uint32_t hi20)
{
    emit(p, hi20 << 12 | rd << 7 | 0x37);
}

static void li(Prog *p, int rd, uint32_t v)
{
    uint32_t hi = (v + 0x800) >> 12;

    lui(p, rd, hi & 0xfffff);
    addi(p, rd, rd, (int32_t)(v - (hi << 12)));
}

static void lw(Prog *p, int rd, int rs1, int32_t off)
{
    emit(p, imm12(off) << 20 | rs1 << 15 | 2 << 12 | rd << 7 | 0x03);
}

static void sw(Prog *p, int rs2, int rs1, int32_t off)
{
    uint32_t u = imm12(off);

    emit(p, (u >> 5) << 25 | rs2 << 20 | rs1 << 15 | 2 << 12 |
            (u & 0x1f) << 7 | 0x23);
}

/* A special register, one instruction away from x0 */
static int32_t io(uint32_t reg)
{
    return (int32_t)reg - 0x200;
}

static void lw_io(Prog *p, int rd, uint32_t reg)
{
    lw(p, rd, ZERO, io(reg));
}

static void sw_io(Prog *p, int rs2, uint32_t reg)
{
    sw(p, rs2, ZERO, io(reg));
}

/* Branch / jump to instruction index `to` */
static void branch(Prog *p, uint32_t f3, int rs1, int rs2, int to)
{
    uint32_t u = (uint32_t)(to - p->n) * 4;

    emit(p, (u >> 12 & 1) << 31 | (u >> 5 & 0x3f) << 25 | rs2 << 20 |
            rs1 << 15 | f3 << 12 | (u >> 1 & 0xf) << 8 |
            (u >> 11 & 1) << 7 | 0x63);
}

static void beq(Prog *p, int rs1, int rs2, int to)
{
    branch(p, 0, rs1, rs2, to);
}

/* A beq to a place not emitted yet: returns its index for beq_here(). */
static int beq_forward(Prog *p)
{
    emit(p, 0);
    return p->n - 1;
}

static void beq_here(Prog *p, int at, int rs1, int rs2)
{
    Prog tmp = { .n = at };

    beq(&tmp, rs1, rs2, p->n);
    p->w[at] = tmp.w[at];
}

static void jump(Prog *p, int to)
{
    uint32_t u = (uint32_t)(to - p->n) * 4;

    emit(p, (u >> 20 & 1) << 31 | (u >> 1 & 0x3ff) << 21 |
            (u >> 11 & 1) << 20 | (u >> 12 & 0xff) << 12 | 0x6f);
}

static void jalr(Prog *p, int rd, int rs1, int32_t off)
{
    emit(p, imm12(off) << 20 | rs1 << 15 | rd << 7 | 0x67);
}

static void wfi(Prog *p)
{
    emit(p, 0x10500073);
}

static void ebreak(Prog *p)
{
    emit(p, 0x00100073);
}

/* The usual end: sleep until an event in IMR, forever. */
static void sleep_forever(Prog *p)
{
    int loop = p->n;

    wfi(p);
    jump(p, loop);
}

/* ---- the card -------------------------------------------------------- */

typedef struct {
    QTest *qt;
    FakeFabric *ff;
    char *dir;
    int slot;
} Card;

static void expect_frame(Card *c, uint8_t type, FabricHdr *h, uint8_t **p)
{
    g_assert_true(ff_recv(c->ff, h, p));
    g_assert_cmpint(h->kind, ==, K);
    g_assert_cmpint(h->type, ==, type);
}

static void expect_hello(Card *c)
{
    FabricHdr h;
    g_autofree uint8_t *p = NULL;

    expect_frame(c, FABRIC_TYPE_CONTROL, &h, &p);
    g_assert_cmpuint(h.len, ==, FABRIC_HELLO_LEN);
    g_assert_cmpint(p[0], ==, FABRIC_CTL_HELLO);
    g_assert_cmpint(fabric_get_le16(p + 1), ==, NODE);
}

static void send_hello_ack(Card *c, uint16_t nodes)
{
    uint8_t ack[FABRIC_MYRI_HELLO_ACK_LEN] = { FABRIC_CTL_HELLO_ACK, 0, 0,
                                               1, 7 };

    fabric_put_le16(ack + 1, nodes);
    ff_send(c->ff, K, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, NODE, ack,
            sizeof(ack));
}

static Card *card_up_with(const char *extra)
{
    Card *c = g_new0(Card, 1);

    c->dir = g_dir_make_tmp("vclanai-XXXXXX", NULL);
    c->ff = ff_listen(c->dir, "fabric.sock");
    g_autofree char *chr = g_strdup_printf("socket,id=my,path=%s",
                                           c->ff->path);
    g_autofree char *dev = g_strdup_printf("lanai,chardev=my,node=%u%s",
                                           NODE, extra);
    const char *args[] = { "-chardev", chr, "-device", dev, NULL };
    c->qt = qt_start(args);
    ff_accept(c->ff);
    c->slot = qt_pci_map(c->qt, LANAI_PCI_VENDOR, LANAI_PCI_DEVICE, BASE);
    g_assert_cmpint(c->slot, >=, 0);
    expect_hello(c);
    send_hello_ack(c, 8);
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CFG_LINK), LANAI_LINK_UP,
                              LANAI_LINK_UP));
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
    g_free(c);
}

static void clock_step(Card *c, int64_t ns)
{
    g_free(qt_cmd(c->qt, "clock_step %" PRId64, ns));
}

static uint32_t rd(Card *c, uint64_t addr)
{
    return qt_readl(c->qt, addr);
}

static void wr(Card *c, uint64_t addr, uint32_t v)
{
    qt_writel(c->qt, addr, v);
}

static void control(Card *c, uint32_t bits)
{
    wr(c, CFG(LANAI_CFG_CONTROL), bits);
}

static uint32_t core_state(Card *c)
{
    return rd(c, CFG(LANAI_CFG_CORE_STATE));
}

/* Reset the core, load the program at SRAM 0 and start it. */
static void run_firmware(Card *c, const Prog *p)
{
    control(c, LANAI_CTRL_RESET_ON);
    for (int i = 0; i < p->n; i++) {
        wr(c, SRAM(4 * i), p->w[i]);
    }
    control(c, LANAI_CTRL_RESET_OFF);
}

static void run_sleeper(Card *c)
{
    Prog p = { .n = 0 };

    sleep_forever(&p);
    run_firmware(c, &p);
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CFG_CORE_STATE), ~0u,
                              LANAI_CORE_SLEEP));
}

static void route_irq(Card *c)
{
    /* No BIOS ran: route PIIX3's PIRQA-D to IRQ 11, as SeaBIOS would. */
    qt_pci_cfg_write(c->qt, 1, 0x60, 0x0b0b0b0b);
    qt_irq_intercept(c->qt);
}

/* A packet as fabricd delivers it: the packet, then its CRC-32. */
static uint8_t *wire_packet(const uint8_t *pkt, uint32_t len, uint32_t *out)
{
    uint8_t *p = g_malloc(len + 4);

    memcpy(p, pkt, len);
    fabric_put_le32(p + len, crc32(0, pkt, len));
    *out = len + 4;
    return p;
}

static void deliver(Card *c, const uint8_t *wire, uint32_t len)
{
    ff_send(c->ff, K, FABRIC_TYPE_DATA, 2, NODE, wire, len);
}

static void arm_receive(Card *c, uint32_t start, uint32_t limit)
{
    wr(c, REG(LANAI_REG_RMP), start);
    wr(c, REG(LANAI_REG_RML), limit);
}

/* ---- tests ------------------------------------------------------------ */

static void test_identity_and_bar(void)
{
    Card *c = card_up();
    QTest *qt = c->qt;

    g_assert_cmphex(qt_pci_cfg_read(qt, c->slot, 0x00), ==,
                    (uint32_t)LANAI_PCI_DEVICE << 16 | LANAI_PCI_VENDOR);
    g_assert_cmphex(qt_pci_cfg_read(qt, c->slot, 0x08) >> 8, ==, 0x028000);
    /* BAR0: 16 MiB, 64-bit memory */
    qt_pci_cfg_write(qt, c->slot, 0x10, 0xffffffff);
    g_assert_cmphex(qt_pci_cfg_read(qt, c->slot, 0x10), ==, 0xff000004);
    qt_pci_cfg_write(qt, c->slot, 0x10, (uint32_t)BASE);

    g_assert_cmphex(rd(c, CFG(LANAI_CFG_ID)), ==, LANAI_ID_VALUE);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_VERSION)), ==, LANAI_VERSION);
    g_assert_cmphex(rd(c, CFG(LANAI_CFG_SRAM_SIZE)), ==, 2 << 20);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_CLOCK_MHZ)), ==, 200);
    g_assert_cmpuint(rd(c, REG(LANAI_REG_CLOCK)), ==, 200);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_NODE)), ==, NODE);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_FABRIC_NODES)), ==, 8);
    g_assert_cmphex(rd(c, CFG(LANAI_CFG_FABRIC_PORT)), ==, 0x107);
    g_assert_cmphex(rd(c, CFG(LANAI_CFG_LINK)), ==,
                    LANAI_LINK_CONNECTED | LANAI_LINK_UP);
    g_assert_cmpuint(core_state(c), ==, LANAI_CORE_RESET);
    g_assert_cmphex(rd(c, CFG(LANAI_CFG_CONTROL)), ==, LANAI_CTRL_RESET_ON);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_WDOG_MS)), ==, 100);
    g_assert_cmphex(rd(c, REG(LANAI_REG_MYRINET)), ==, LANAI_MYRINET_CRC32);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)), ==, LANAI_ISR_SEND);
    g_assert_cmpuint(rd(c, CFG(LANAI_CNT_RX_QUEUED)), ==, 0);
    card_down(c);
}

/* SRAM from the host; holes and unknown registers are harmless. */
static void test_sram_and_bad_accesses(void)
{
    Card *c = card_up();
    QTest *qt = c->qt;

    wr(c, SRAM(0), 0x12345678);
    wr(c, SRAM((2 << 20) - 4), 0xcafef00d);
    g_assert_cmphex(rd(c, SRAM(0)), ==, 0x12345678);
    g_assert_cmphex(rd(c, SRAM((2 << 20) - 4)), ==, 0xcafef00d);
    g_free(qt_cmd(qt, "writeb 0x%" PRIx64 " 0xab", SRAM(1)));
    g_assert_cmphex(rd(c, SRAM(0)), ==, 0x1234ab78);

    /* Beyond SRAM, unknown registers, narrow register accesses */
    wr(c, SRAM(2 << 20), 0xdeadbeef);
    g_assert_cmphex(rd(c, SRAM(2 << 20)), ==, 0);
    g_assert_cmphex(rd(c, CFG(0x3c)), ==, 0);
    g_assert_cmphex(rd(c, REG(0x1fc)), ==, 0);
    g_assert_cmphex(rd(c, REG(0x3000)), ==, 0);
    wr(c, REG(0x1fc), 1);
    wr(c, REG(LANAI_REG_DB_PROD), 7);
    wr(c, CFG(LANAI_CFG_ID), 7);
    g_free(qt_cmd(qt, "writeb 0x%" PRIx64 " 0xff", CFG(LANAI_CFG_CONTROL)));
    g_free(qt_cmd(qt, "readw 0x%" PRIx64, REG(LANAI_REG_ISR)));
    g_assert_cmphex(rd(c, REG(LANAI_REG_DB_PROD)), ==, 0);
    g_assert_cmphex(rd(c, CFG(LANAI_CFG_ID)), ==, LANAI_ID_VALUE);
    g_assert_cmpuint(core_state(c), ==, LANAI_CORE_RESET);
    g_assert_cmphex(rd(c, BASE + LANAI_BAR0_SIZE - 4), ==, 0);
    card_down(c);
}

/* A system reset (PIIX3 reset control) zeroes SRAM and re-announces. */
static void test_pci_reset(void)
{
    Card *c = card_up();

    wr(c, SRAM(0x100), 0x55aa55aa);
    control(c, LANAI_CTRL_INT_EN);
    wr(c, CFG(LANAI_CFG_WDOG_MS), 7);
    g_free(qt_cmd(c->qt, "outb 0xcf9 0x6"));
    expect_hello(c);
    g_assert_cmpint(qt_pci_map(c->qt, LANAI_PCI_VENDOR, LANAI_PCI_DEVICE,
                               BASE), ==, c->slot);
    g_assert_cmphex(rd(c, SRAM(0x100)), ==, 0);
    g_assert_cmphex(rd(c, CFG(LANAI_CFG_CONTROL)), ==, LANAI_CTRL_RESET_ON);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_WDOG_MS)), ==, 100);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_FABRIC_NODES)), ==, 0);
    send_hello_ack(c, 4);
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CFG_FABRIC_NODES), ~0u, 4));
    card_down(c);
}

/* RESET_OFF starts at pc 0, RESET_ON stops the core and keeps SRAM. */
static void test_reset_on_off(void)
{
    Card *c = card_up();
    Prog p = { .n = 0 };
    int loop;
    uint32_t count;

    li(&p, S0, 0x1000);
    loop = p.n;
    lw(&p, T1, S0, 0);
    addi(&p, T1, T1, 1);
    sw(&p, T1, S0, 0);
    jump(&p, loop);
    run_firmware(c, &p);
    g_assert_cmpuint(core_state(c), ==, LANAI_CORE_RUN);
    g_assert_cmphex(rd(c, CFG(LANAI_CFG_CONTROL)), ==, 0);
    clock_step(c, 100 * 1000);
    control(c, LANAI_CTRL_RESET_ON);
    g_assert_cmpuint(core_state(c), ==, LANAI_CORE_RESET);
    count = rd(c, SRAM(0x1000));
    /* 100 us at 200 MHz, four instructions an iteration, and the lead */
    g_assert_cmpuint(count, >=, 5000);
    g_assert_cmpuint(count, <=, 7000);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_INSN_LO)), >=, 4 * count);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_INSN_HI)), ==, 0);
    clock_step(c, 100 * 1000);
    g_assert_cmpuint(rd(c, SRAM(0x1000)), ==, count);
    wr(c, SRAM(0x1000), 0);                 /* writable in reset */
    control(c, LANAI_CTRL_RESET_OFF);
    clock_step(c, 10 * 1000);
    g_assert_cmpuint(rd(c, SRAM(0x1000)), >, 0);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_INSN_LO)), <, 4 * count);
    /* RESET_ON wins over RESET_OFF */
    control(c, LANAI_CTRL_RESET_ON | LANAI_CTRL_RESET_OFF);
    g_assert_cmpuint(core_state(c), ==, LANAI_CORE_RESET);
    card_down(c);
}

/* The firmware writes SRAM and raises HOST_SIG: an interrupt. */
static void test_firmware_host_sig(void)
{
    Card *c = card_up();
    QTest *qt = c->qt;
    Prog p = { .n = 0 };

    route_irq(c);
    li(&p, S0, 0x1000);
    li(&p, T1, 0xc0ffee);
    sw(&p, T1, S0, 0);
    li(&p, T1, LANAI_ISR_HOST_SIG);
    sw_io(&p, T1, LANAI_REG_ISR);
    sleep_forever(&p);
    run_firmware(c, &p);
    wr(c, REG(LANAI_REG_EIMR), LANAI_ISR_HOST_SIG);
    g_assert_true(qt_wait_reg(qt, CFG(LANAI_CFG_CORE_STATE), ~0u,
                              LANAI_CORE_SLEEP));
    g_assert_cmphex(rd(c, SRAM(0x1000)), ==, 0xc0ffee);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_HOST_SIG, ==,
                    LANAI_ISR_HOST_SIG);
    g_assert_cmpint(qt->irq_raised, ==, 0);     /* INT_EN still off */
    control(c, LANAI_CTRL_INT_EN);
    g_assert_cmpint(qt->irq_raised, ==, 1);
    wr(c, REG(LANAI_REG_ISR), LANAI_ISR_HOST_SIG);  /* host ack */
    g_assert_cmpint(qt->irq_lowered, >=, 1);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_HOST_SIG, ==, 0);
    /* Asleep, the core executes nothing. */
    uint32_t insns = rd(c, CFG(LANAI_CFG_INSN_LO));
    clock_step(c, 1000 * 1000);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_INSN_LO)), ==, insns);
    g_assert_cmpuint(core_state(c), ==, LANAI_CORE_SLEEP);
    card_down(c);
}

/*
 * wfi sleeps until a doorbell or LANAI_SIG; the firmware drains the
 * doorbell FIFO and answers LANAI_SIG with HOST_NOTIFY for context 5.
 */
static void test_wfi_doorbell_and_notify(void)
{
    Card *c = card_up();
    Prog p = { .n = 0 };
    int loop, no_sig, drain;

    li(&p, T0, 0x2000);
    sw_io(&p, T0, LANAI_REG_DB_BASE);
    li(&p, T0, 16);
    sw_io(&p, T0, LANAI_REG_DB_SIZE);
    li(&p, T0, LANAI_ISR_DOORBELL | LANAI_ISR_LANAI_SIG);
    sw_io(&p, T0, LANAI_REG_IMR);
    li(&p, S0, 0x1000);             /* +0 wakes, +4 data, +8 sigs, +12 dbs */
    li(&p, S1, 0x2000);
    loop = p.n;
    wfi(&p);
    lw(&p, T0, S0, 0);
    addi(&p, T0, T0, 1);
    sw(&p, T0, S0, 0);
    lw_io(&p, T1, LANAI_REG_ISR);
    li(&p, T2, LANAI_ISR_LANAI_SIG);
    and(&p, T3, T1, T2);
    no_sig = beq_forward(&p);
    sw_io(&p, T2, LANAI_REG_ISR);
    addi(&p, T4, ZERO, 5);
    sw_io(&p, T4, LANAI_REG_HOST_NOTIFY);
    lw(&p, T0, S0, 8);
    addi(&p, T0, T0, 1);
    sw(&p, T0, S0, 8);
    beq_here(&p, no_sig, T3, ZERO);
    lw_io(&p, T1, LANAI_REG_DB_CONS);
    lw_io(&p, T2, LANAI_REG_DB_PROD);
    drain = p.n;
    beq(&p, T1, T2, loop);
    andi(&p, T3, T1, 15);
    slli(&p, T3, T3, 3);
    add(&p, T3, T3, S1);
    lw(&p, T5, T3, 4);
    sw(&p, T5, S0, 4);
    lw(&p, T6, S0, 12);
    addi(&p, T6, T6, 1);
    sw(&p, T6, S0, 12);
    addi(&p, T1, T1, 1);
    sw_io(&p, T1, LANAI_REG_DB_CONS);
    jump(&p, drain);
    run_firmware(c, &p);
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CFG_CORE_STATE), ~0u,
                              LANAI_CORE_SLEEP));
    g_assert_cmpuint(rd(c, SRAM(0x1000)), ==, 0);

    wr(c, DB(3, 0x10), 0xabc);
    g_assert_true(qt_wait_reg(c->qt, SRAM(0x100c), ~0u, 1));
    g_assert_cmphex(rd(c, SRAM(0x1004)), ==, 0xabc);
    g_assert_cmphex(rd(c, SRAM(0x2000)), ==, 3 << 12 | 0x10);
    g_assert_cmphex(rd(c, SRAM(0x2004)), ==, 0xabc);
    g_assert_cmpuint(rd(c, REG(LANAI_REG_DB_PROD)), ==, 1);
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CFG_CORE_STATE), ~0u,
                              LANAI_CORE_SLEEP));
    g_assert_cmpuint(rd(c, REG(LANAI_REG_DB_CONS)), ==, 1);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_DOORBELL, ==, 0);

    /* Three doorbells at once from two contexts */
    wr(c, DB(0, 0), 1);
    wr(c, DB(63, 0xffc), 2);
    wr(c, DB(7, 0x800), 3);
    g_assert_true(qt_wait_reg(c->qt, SRAM(0x100c), ~0u, 4));
    g_assert_cmphex(rd(c, SRAM(0x1004)), ==, 3);
    g_assert_cmphex(rd(c, SRAM(0x2010)), ==, 63 << 12 | 0xffc);
    g_assert_cmphex(rd(c, SRAM(0x2018)), ==, 7 << 12 | 0x800);

    /* LANAI_SIG from the host; the answer is a notify for context 5 */
    g_assert_cmpuint(rd(c, DB(5, LANAI_DB_NOTIFY_COUNT)), ==, 0);
    wr(c, REG(LANAI_REG_ISR), LANAI_ISR_LANAI_SIG);
    g_assert_true(qt_wait_reg(c->qt, SRAM(0x1008), ~0u, 1));
    g_assert_cmpuint(rd(c, DB(5, LANAI_DB_NOTIFY_COUNT)), ==, 1);
    g_assert_cmpuint(rd(c, DB(4, LANAI_DB_NOTIFY_COUNT)), ==, 0);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_LANAI_SIG, ==, 0);
    /* Without a vCPU a WAIT read never stalls: it returns the count. */
    g_assert_cmpuint(rd(c, DB(5, LANAI_DB_WAIT(0))), ==, 1);
    g_assert_cmpuint(rd(c, DB(5, LANAI_DB_WAIT(1))), ==, 1);
    g_assert_cmpuint(rd(c, DB(4, LANAI_DB_WAIT(0))), ==, 0);
    g_assert_cmpuint(rd(c, DB(5, 0x7fc)), ==, 0);
    card_down(c);
}

/* The doorbell FIFO itself: entries, fill level, overflow, bad setup. */
static void test_doorbell_fifo(void)
{
    Card *c = card_up();

    run_sleeper(c);                 /* IMR 0: never wakes */
    wr(c, DB(1, 0), 9);             /* no FIFO yet */
    g_assert_cmpuint(rd(c, CFG(LANAI_CNT_DB_DROPPED)), ==, 1);
    wr(c, REG(LANAI_REG_DB_BASE), 0x3000);
    wr(c, REG(LANAI_REG_DB_SIZE), 4);
    for (uint32_t i = 0; i < 5; i++) {
        wr(c, DB(2, 4 * i), 100 + i);
    }
    g_assert_cmpuint(rd(c, REG(LANAI_REG_DB_PROD)), ==, 4);
    g_assert_cmpuint(rd(c, CFG(LANAI_CNT_DB_DROPPED)), ==, 2);
    for (uint32_t i = 0; i < 4; i++) {
        g_assert_cmphex(rd(c, SRAM(0x3000 + 8 * i)), ==, 2 << 12 | 4 * i);
        g_assert_cmpuint(rd(c, SRAM(0x3004 + 8 * i)), ==, 100 + i);
    }
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_DOORBELL, ==,
                    LANAI_ISR_DOORBELL);
    wr(c, REG(LANAI_REG_ISR), LANAI_ISR_DOORBELL);     /* a level */
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_DOORBELL, ==,
                    LANAI_ISR_DOORBELL);
    wr(c, REG(LANAI_REG_DB_CONS), 2);
    wr(c, DB(2, 0), 200);           /* wraps to entry 0 */
    g_assert_cmpuint(rd(c, SRAM(0x3004)), ==, 200);
    wr(c, REG(LANAI_REG_DB_CONS), 5);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_DOORBELL, ==, 0);
    /* Not a power of two; outside SRAM; misaligned: all dropped */
    wr(c, REG(LANAI_REG_DB_SIZE), 3);
    wr(c, DB(2, 0), 1);
    wr(c, REG(LANAI_REG_DB_SIZE), 4);
    wr(c, REG(LANAI_REG_DB_BASE), (2 << 20) - 16);
    wr(c, DB(2, 0), 1);
    wr(c, REG(LANAI_REG_DB_BASE), 0x3004);
    wr(c, DB(2, 0), 1);
    g_assert_cmpuint(rd(c, REG(LANAI_REG_DB_PROD)), ==, 0);
    g_assert_cmpuint(rd(c, CFG(LANAI_CNT_DB_DROPPED)), ==, 5);
    card_down(c);
}

/* IT0 wakes the firmware after its time; IT1 counts down on the host. */
static void test_interval_timers(void)
{
    Card *c = card_up();
    QTest *qt = c->qt;
    Prog p = { .n = 0 };

    li(&p, S0, 0x1000);
    li(&p, T0, LANAI_ISR_TIME0);
    sw_io(&p, T0, LANAI_REG_IMR);
    addi(&p, T1, ZERO, 100);
    sw_io(&p, T1, LANAI_REG_IT0);
    lw_io(&p, T1, LANAI_REG_RTC);
    sw(&p, T1, S0, 8);
    wfi(&p);
    lw_io(&p, T1, LANAI_REG_RTC);
    sw(&p, T1, S0, 0);
    sw_io(&p, T0, LANAI_REG_ISR);
    addi(&p, T1, ZERO, 1);
    sw(&p, T1, S0, 4);
    sleep_forever(&p);
    run_firmware(c, &p);
    g_assert_true(qt_wait_reg(qt, CFG(LANAI_CFG_CORE_STATE), ~0u,
                              LANAI_CORE_SLEEP));
    clock_step(c, 60 * 1000);
    g_assert_cmpuint(rd(c, SRAM(0x1004)), ==, 0);
    clock_step(c, 60 * 1000);
    g_assert_true(qt_wait_reg(qt, SRAM(0x1004), ~0u, 1));
    g_assert_cmpuint(rd(c, SRAM(0x1000)) - rd(c, SRAM(0x1008)), >=, 100);
    g_assert_cmpuint(rd(c, SRAM(0x1000)) - rd(c, SRAM(0x1008)), <=, 101);
    g_assert_cmpuint(core_state(c), ==, LANAI_CORE_SLEEP);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_TIME0, ==, 0);

    /* The host's view of IT1, and TIME1 as a host interrupt */
    route_irq(c);
    wr(c, REG(LANAI_REG_EIMR), LANAI_ISR_TIME1);
    control(c, LANAI_CTRL_INT_EN);
    wr(c, REG(LANAI_REG_IT1), 300);
    g_assert_cmpuint(rd(c, REG(LANAI_REG_IT1)), ==, 300);
    clock_step(c, 100 * 1000);
    g_assert_cmpuint(rd(c, REG(LANAI_REG_IT1)), ==, 200);
    g_assert_cmpint(qt->irq_raised, ==, 0);
    clock_step(c, 200 * 1000);
    g_assert_cmpuint(rd(c, REG(LANAI_REG_IT1)), ==, 0);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_TIME1, ==,
                    LANAI_ISR_TIME1);
    g_assert_cmpint(qt->irq_raised, ==, 1);
    /* The firmware did not wake for it: TIME1 is not in its IMR. */
    g_assert_cmpuint(core_state(c), ==, LANAI_CORE_SLEEP);
    /* RTC counts microseconds of virtual time */
    uint32_t rtc = rd(c, REG(LANAI_REG_RTC));
    clock_step(c, 1000 * 1000);
    g_assert_cmpuint(rd(c, REG(LANAI_REG_RTC)) - rtc, ==, 1000);
    card_down(c);
}

static void put_desc(Card *c, uint32_t at, uint32_t next, uint32_t len,
                     uint32_t lar, uint64_t host)
{
    wr(c, SRAM(at + LANAI_DMA_DESC_NEXT), next);
    wr(c, SRAM(at + LANAI_DMA_DESC_CSUM), 0);
    wr(c, SRAM(at + LANAI_DMA_DESC_LEN), len);
    wr(c, SRAM(at + LANAI_DMA_DESC_LAR), lar);
    wr(c, SRAM(at + LANAI_DMA_DESC_EAH), host >> 32);
    wr(c, SRAM(at + LANAI_DMA_DESC_EAL), (uint32_t)host);
}

static uint32_t desc_status(Card *c, uint32_t at)
{
    return rd(c, SRAM(at + LANAI_DMA_DESC_CSUM)) >> 16;
}

/*
 * A chain host -> SRAM, SRAM -> host run by the firmware, which sleeps
 * until WAKE0; the last descriptor's NOTIFY raises HOST_SIG.
 */
static void test_dma_chain(void)
{
    Card *c = card_up();
    Prog p = { .n = 0 };

    for (uint32_t i = 0; i < 64; i += 4) {
        wr(c, HOST_RAM + i, 0x11110000 + i);
        wr(c, SRAM(0x6000 + i), 0x22220000 + i);
    }
    put_desc(c, 0x4000, 0x4018 | LANAI_DMA_NEXT_TO_SRAM, 64, 0x5000,
             HOST_RAM);
    put_desc(c, 0x4018, LANAI_DMA_NEXT_LAST | LANAI_DMA_NEXT_NOTIFY, 32,
             0x6000, HOST_RAM + 0x10000);
    li(&p, S0, 0x1000);
    li(&p, T0, LANAI_ISR_WAKE0);
    sw_io(&p, T0, LANAI_REG_IMR);
    li(&p, T1, 0x4000);
    sw_io(&p, T1, LANAI_REG_DMA_HEAD);
    addi(&p, T1, ZERO, LANAI_PULSE_DMA_START);
    sw_io(&p, T1, LANAI_REG_PULSE);
    wfi(&p);
    lw_io(&p, T1, LANAI_REG_DMA_STS);
    sw(&p, T1, S0, 0);
    sw_io(&p, T0, LANAI_REG_ISR);
    sleep_forever(&p);
    run_firmware(c, &p);
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CFG_CORE_STATE), ~0u,
                              LANAI_CORE_SLEEP));
    g_assert_cmphex(rd(c, SRAM(0x1000)), ==, LANAI_DMA_STS_DONE | 2 << 16);
    for (uint32_t i = 0; i < 64; i += 4) {
        g_assert_cmphex(rd(c, SRAM(0x5000 + i)), ==, 0x11110000 + i);
    }
    for (uint32_t i = 0; i < 32; i += 4) {
        g_assert_cmphex(rd(c, HOST_RAM + 0x10000 + i), ==, 0x22220000 + i);
    }
    g_assert_cmphex(rd(c, HOST_RAM + 0x10000 + 32), ==, 0);
    g_assert_cmphex(desc_status(c, 0x4000), ==, LANAI_DMA_DESC_DONE);
    g_assert_cmphex(desc_status(c, 0x4018), ==, LANAI_DMA_DESC_DONE);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) &
                    (LANAI_ISR_WAKE0 | LANAI_ISR_HOST_SIG | LANAI_ISR_DMA_ERR),
                    ==, LANAI_ISR_HOST_SIG);
    card_down(c);
}

/* Every bad chain stops with DMA_ERR and names the descriptor. */
static void test_dma_errors(void)
{
    Card *c = card_up();
    const struct {
        uint32_t head, next, len, lar;
        uint64_t host;
        uint32_t err, done;
    } cases[] = {
        { 0x4004, 0, 8, 0x5000, HOST_RAM, LANAI_DMA_ERR_DESC_ALIGN, 0 },
        { (2 << 20) - 16, 0, 8, 0x5000, HOST_RAM,
          LANAI_DMA_ERR_DESC_RANGE, 0 },
        { 0x4000, LANAI_DMA_NEXT_LAST, 0, 0x5000, HOST_RAM,
          LANAI_DMA_ERR_LEN, 0 },
        { 0x4000, LANAI_DMA_NEXT_LAST, LANAI_DMA_MAX_LEN + 1, 0x5000,
          HOST_RAM, LANAI_DMA_ERR_LEN, 0 },
        { 0x4000, LANAI_DMA_NEXT_LAST, 16, (2 << 20) - 8, HOST_RAM,
          LANAI_DMA_ERR_SRAM_RANGE, 0 },
        { 0x4000, LANAI_DMA_NEXT_LAST | LANAI_DMA_NEXT_TO_SRAM, 16, 0x5000,
          0x7f000000, LANAI_DMA_ERR_HOST, 0 },
        { 0x4000, LANAI_DMA_NEXT_LAST, 16, 0x5000, 0x10000000000ull,
          LANAI_DMA_ERR_HOST, 0 },
        /* the card's own registers: PULSE, through the bus */
        { 0x4000, LANAI_DMA_NEXT_LAST, 4, 0x5000,
          BASE + LANAI_HOST_REG(LANAI_REG_PULSE), LANAI_DMA_ERR_HOST, 0 },
        /* a descriptor that points to itself */
        { 0x4000, 0x4000, 4, 0x5000, HOST_RAM, LANAI_DMA_ERR_LOOP,
          LANAI_DMA_MAX_CHAIN },
    };

    for (unsigned i = 0; i < G_N_ELEMENTS(cases); i++) {
        uint32_t sts;

        wr(c, REG(LANAI_REG_ISR), LANAI_ISR_DMA_ERR);
        if (cases[i].head == 0x4000) {
            put_desc(c, 0x4000, cases[i].next, cases[i].len, cases[i].lar,
                     cases[i].host);
        }
        wr(c, SRAM(0x5000), LANAI_PULSE_DMA_START);
        wr(c, REG(LANAI_REG_DMA_HEAD), cases[i].head);
        wr(c, REG(LANAI_REG_PULSE), LANAI_PULSE_DMA_START);
        sts = rd(c, REG(LANAI_REG_DMA_STS));
        g_assert_cmphex(sts & 3, ==, LANAI_DMA_STS_ERR);
        g_assert_cmpuint(LANAI_DMA_STS_CODE(sts), ==, cases[i].err);
        g_assert_cmpuint(LANAI_DMA_STS_COUNT(sts), ==, cases[i].done);
        g_assert_cmphex(rd(c, REG(LANAI_REG_DMA_ERR_DESC)), ==,
                        cases[i].head);
        g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) &
                        (LANAI_ISR_DMA_ERR | LANAI_ISR_WAKE0), ==,
                        LANAI_ISR_DMA_ERR);
        if (cases[i].head == 0x4000) {
            g_assert_cmphex(desc_status(c, 0x4000), ==,
                            LANAI_DMA_DESC_ERR | cases[i].err);
        }
        g_assert_cmpuint(rd(c, CFG(LANAI_CNT_DMA_ERR)), ==, i + 1);
    }
    /* The card's registers are untouched, a host error moved nothing. */
    g_assert_cmpuint(core_state(c), ==, LANAI_CORE_RESET);
    /* Bus mastering off */
    put_desc(c, 0x4000, LANAI_DMA_NEXT_LAST, 16, 0x5000, HOST_RAM);
    qt_pci_cfg_write(c->qt, c->slot, 0x04, 0x2);
    wr(c, REG(LANAI_REG_PULSE), LANAI_PULSE_DMA_START);
    qt_pci_cfg_write(c->qt, c->slot, 0x04, 0x6);
    g_assert_cmpuint(LANAI_DMA_STS_CODE(rd(c, REG(LANAI_REG_DMA_STS))), ==,
                     LANAI_DMA_ERR_BUS_MASTER);
    /* and a good chain still works after all that */
    wr(c, REG(LANAI_REG_PULSE), LANAI_PULSE_DMA_START);
    g_assert_cmphex(rd(c, REG(LANAI_REG_DMA_STS)), ==,
                    LANAI_DMA_STS_DONE | 1 << 16);
    /* Bus addresses at and above 2 GiB: the card's own SRAM, via the BAR */
    wr(c, SRAM(0x6000), 0x600d600d);
    put_desc(c, 0x4000, LANAI_DMA_NEXT_LAST, 4, 0x6000, SRAM(0x7000));
    wr(c, REG(LANAI_REG_PULSE), LANAI_PULSE_DMA_START);
    g_assert_cmphex(rd(c, REG(LANAI_REG_DMA_STS)), ==,
                    LANAI_DMA_STS_DONE | 1 << 16);
    g_assert_cmphex(rd(c, SRAM(0x7000)), ==, 0x600d600d);
    card_down(c);
}

static const uint8_t test_route[] = { 0x81, 0xbf };
static const uint8_t test_packet[] = { 0x00, 0x03, 0x00, 0x00,
                                       'h', 'e', 'l', 'l', 'o', '!' };

static void put_bytes(Card *c, uint32_t at, const uint8_t *b, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        g_free(qt_cmd(c->qt, "writeb 0x%" PRIx64 " 0x%x", SRAM(at + i),
                      b[i]));
    }
}

static void expect_data(Card *c, const uint8_t *route, uint32_t rlen,
                        const uint8_t *pkt, uint32_t plen)
{
    FabricHdr h;
    g_autofree uint8_t *p = NULL;

    expect_frame(c, FABRIC_TYPE_DATA, &h, &p);
    g_assert_cmphex(h.flags, ==, FABRIC_F_ROUTED);
    g_assert_cmpuint(h.src, ==, NODE);
    g_assert_cmphex(h.dst, ==, FABRIC_NODE_NONE);
    g_assert_cmpuint(h.len, ==, rlen + plen + 4);
    g_assert_cmpmem(p, rlen, route, rlen);
    g_assert_cmpmem(p + rlen, plen, pkt, plen);
    g_assert_cmphex(fabric_get_le32(p + rlen + plen), ==,
                    crc32(0, pkt, plen));
}

/* The firmware sends a packet in one segment; the host in two. */
static void test_net_send(void)
{
    Card *c = card_up();
    Prog p = { .n = 0 };
    uint32_t n = sizeof(test_route) + sizeof(test_packet);

    put_bytes(c, 0x7000, test_route, sizeof(test_route));
    put_bytes(c, 0x7000 + sizeof(test_route), test_packet,
              sizeof(test_packet));
    li(&p, S0, 0x1000);
    li(&p, T0, 0x7000);
    sw_io(&p, T0, LANAI_REG_SMP);
    li(&p, T0, 0x7000 + n);
    sw_io(&p, T0, LANAI_REG_SMLT);
    lw_io(&p, T1, LANAI_REG_SSTAT);
    sw(&p, T1, S0, 0);
    sleep_forever(&p);
    run_firmware(c, &p);
    expect_data(c, test_route, sizeof(test_route), test_packet,
                sizeof(test_packet));
    g_assert_true(qt_wait_reg(c->qt, SRAM(0x1000), ~0u, LANAI_SSTAT_SENT));
    g_assert_cmpuint(rd(c, REG(LANAI_REG_SMP)), ==, 0x7000 + n);

    /* Gather: the route from one place, the packet from another */
    put_bytes(c, 0x7100, test_packet, sizeof(test_packet));
    wr(c, REG(LANAI_REG_SMP), 0x7000);
    wr(c, REG(LANAI_REG_SML), 0x7000 + sizeof(test_route));
    wr(c, REG(LANAI_REG_SMP), 0x7100);
    wr(c, REG(LANAI_REG_SMLT), 0x7100 + sizeof(test_packet));
    expect_data(c, test_route, sizeof(test_route), test_packet,
                sizeof(test_packet));
    g_assert_cmpuint(rd(c, CFG(LANAI_CNT_TX_PACKETS)), ==, 2);
    card_down(c);
}

static void send_range(Card *c, uint32_t from, uint32_t to)
{
    wr(c, REG(LANAI_REG_SMP), from);
    wr(c, REG(LANAI_REG_SMLT), to);
}

/*
 * A fabricd that stops reading neither stalls the card nor grows QEMU:
 * 2000 sends of 16 KiB (32 MiB) all complete, memory stays within the
 * link's bound, and once fabricd reads again it gets whole frames.
 */
static void test_net_send_fabric_stalled(void)
{
    enum { SENDS = 2000 };
    Card *c = card_up();
    const uint32_t at = 0x10000;
    uint64_t before = qt_rss_kb(c->qt), after;
    unsigned frames = 0;
    FabricHdr h;
    uint8_t *p;

    wr(c, SRAM(at), 0x80);                          /* route: loop back */
    for (unsigned i = 0; i < SENDS; i++) {
        send_range(c, at, at + 1 + LANAI_MAX_PACKET);
        g_assert_cmphex(rd(c, REG(LANAI_REG_SSTAT)), ==, LANAI_SSTAT_SENT);
    }
    after = qt_rss_kb(c->qt);
    g_test_message("QEMU RSS %" G_GUINT64_FORMAT " KiB before, %"
                   G_GUINT64_FORMAT " KiB after %u sends", before,
                   after, SENDS);
    g_assert_cmpuint(after, <, before + 3 * FABRIC_LINK_TXQ_MAX / 1024);
    g_assert_cmpuint(rd(c, CFG(LANAI_CNT_TX_PACKETS)), ==, SENDS);
    while (frames < SENDS && ff_recv(c->ff, &h, &p)) {
        g_assert_cmpuint(h.type, ==, FABRIC_TYPE_DATA);
        g_assert_cmpuint(h.len, ==, 1 + LANAI_MAX_PACKET + 4);
        g_free(p);
        frames++;
    }
    g_assert_cmpuint(frames, <, SENDS);
    g_assert_cmpuint(frames, >=, FABRIC_LINK_TXQ_MAX /
                     (FABRIC_HDR_LEN + 1 + LANAI_MAX_PACKET + 4));
    card_down(c);
}

/* Oversized packets, bad routes and bad ranges are discarded. */
static void test_net_send_errors(void)
{
    Card *c = card_up();
    const uint32_t big = 0x10000;
    uint8_t route[LANAI_MAX_ROUTE + 1];
    uint32_t isr;

    memset(route, 0x80, sizeof(route));
    /* the largest packet behind the longest route goes */
    put_bytes(c, big, route, LANAI_MAX_ROUTE);
    send_range(c, big, big + LANAI_MAX_ROUTE + LANAI_MAX_PACKET);
    {
        FabricHdr h;
        g_autofree uint8_t *p = NULL;

        expect_frame(c, FABRIC_TYPE_DATA, &h, &p);
        g_assert_cmpuint(h.len, ==, LANAI_MAX_ROUTE + LANAI_MAX_PACKET + 4);
    }
    g_assert_cmphex(rd(c, REG(LANAI_REG_SSTAT)), ==, LANAI_SSTAT_SENT);
    /* one byte more */
    send_range(c, big, big + LANAI_MAX_ROUTE + LANAI_MAX_PACKET + 1);
    g_assert_cmphex(rd(c, REG(LANAI_REG_SSTAT)), ==, LANAI_SSTAT_TOO_LONG);
    isr = rd(c, REG(LANAI_REG_ISR));
    g_assert_cmphex(isr & LANAI_ISR_TX_TOO_LONG, ==, LANAI_ISR_TX_TOO_LONG);
    /* a short route but a packet over the maximum */
    send_range(c, big + LANAI_MAX_ROUTE - 1,
               big + LANAI_MAX_ROUTE + LANAI_MAX_PACKET + 1);
    g_assert_cmphex(rd(c, REG(LANAI_REG_SSTAT)), ==, LANAI_SSTAT_TOO_LONG);
    /* 25 route bytes; a packet of route bytes only */
    put_bytes(c, 0x8000, route, sizeof(route));
    wr(c, SRAM(0x8000 + sizeof(route)), 0);
    send_range(c, 0x8000, 0x8000 + sizeof(route) + 4);
    g_assert_cmphex(rd(c, REG(LANAI_REG_SSTAT)), ==, LANAI_SSTAT_BAD_ROUTE);
    send_range(c, 0x8000, 0x8004);
    g_assert_cmphex(rd(c, REG(LANAI_REG_SSTAT)), ==, LANAI_SSTAT_BAD_ROUTE);
    /* limit before the pointer, limit past SRAM */
    send_range(c, 0x8004, 0x8000);
    g_assert_cmphex(rd(c, REG(LANAI_REG_SSTAT)), ==, LANAI_SSTAT_BAD_RANGE);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_MEM, ==,
                    LANAI_ISR_MEM);
    send_range(c, 0x8000, (2 << 20) + 4);
    g_assert_cmphex(rd(c, REG(LANAI_REG_SSTAT)), ==, LANAI_SSTAT_BAD_RANGE);
    /* a gather with one bad segment poisons the whole packet */
    wr(c, REG(LANAI_REG_SMP), 0x7000);
    wr(c, REG(LANAI_REG_SML), 0x6000);
    put_bytes(c, 0x7000, test_route, sizeof(test_route));
    put_bytes(c, 0x7002, test_packet, sizeof(test_packet));
    send_range(c, 0x7000, 0x7000 + 12);
    g_assert_cmphex(rd(c, REG(LANAI_REG_SSTAT)), ==, LANAI_SSTAT_BAD_RANGE);
    g_assert_true(ff_quiet(c->ff));
    g_assert_cmpuint(rd(c, CFG(LANAI_CNT_TX_DISCARDED)), ==, 7);
    /* and the next good packet goes */
    send_range(c, 0x7000, 0x7000 + 12);
    expect_data(c, test_route, 2, test_packet, sizeof(test_packet));
    card_down(c);
}

/* A frame into the buffer the host armed, and one queued before arming */
static void test_net_receive(void)
{
    Card *c = card_up();
    uint32_t len;
    g_autofree uint8_t *w = wire_packet(test_packet, sizeof(test_packet),
                                        &len);

    /* In reset, frames are absorbed. */
    deliver(c, w, len);
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CNT_RX_IN_RESET), ~0u, 1));
    run_sleeper(c);
    arm_receive(c, 0x8000, 0x9000);
    g_assert_cmphex(rd(c, REG(LANAI_REG_RSTAT)), ==, LANAI_RSTAT_ARMED);
    deliver(c, w, len);
    g_assert_true(qt_wait_reg(c->qt, REG(LANAI_REG_RSTAT), ~0u,
                              LANAI_RSTAT_DONE));
    g_assert_cmpuint(rd(c, REG(LANAI_REG_RLEN)), ==, sizeof(test_packet));
    g_assert_cmphex(rd(c, REG(LANAI_REG_RMP)), ==,
                    0x8000 + sizeof(test_packet));
    g_assert_cmphex(rd(c, SRAM(0x8000)), ==, 0x00000300);
    g_assert_cmphex(rd(c, SRAM(0x8004)), ==, 0x6c6c6568);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_RECV, ==,
                    LANAI_ISR_RECV);
    wr(c, REG(LANAI_REG_ISR), LANAI_ISR_RECV);

    deliver(c, w, len);
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CNT_RX_QUEUED), ~0u, 1));
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_RECV, ==, 0);
    arm_receive(c, 0x9000, 0xa000);
    g_assert_cmphex(rd(c, REG(LANAI_REG_RSTAT)), ==, LANAI_RSTAT_DONE);
    g_assert_cmpuint(rd(c, CFG(LANAI_CNT_RX_QUEUED)), ==, 0);
    g_assert_cmphex(rd(c, SRAM(0x9004)), ==, 0x6c6c6568);
    g_assert_cmpuint(rd(c, CFG(LANAI_CNT_RX_PACKETS)), ==, 2);
    card_down(c);
}

/*
 * RMP moved after RML armed the receive: the frame that lands is checked
 * against [RMP, RML) again and refused, never copied past SRAM.
 */
static void test_receive_rmp_moved(void)
{
    static const uint32_t bad_rmp[] = { 0x9000, 0xfffffff0, 0x80000000 };
    Card *c = card_up();
    uint32_t len;
    g_autofree uint8_t *w = wire_packet(test_packet, sizeof(test_packet),
                                        &len);

    run_sleeper(c);
    for (unsigned i = 0; i < G_N_ELEMENTS(bad_rmp); i++) {
        arm_receive(c, 0x8000, 0x9000);
        g_assert_cmphex(rd(c, REG(LANAI_REG_RSTAT)), ==, LANAI_RSTAT_ARMED);
        wr(c, REG(LANAI_REG_RMP), bad_rmp[i]);
        deliver(c, w, len);
        g_assert_true(qt_wait_reg(c->qt, REG(LANAI_REG_RSTAT), ~0u,
                                  LANAI_RSTAT_BAD_RANGE));
        g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_MEM, ==,
                        LANAI_ISR_MEM);
        wr(c, REG(LANAI_REG_ISR), LANAI_ISR_MEM);
        /* the frame waits for a good buffer, and gets it */
        arm_receive(c, 0x8000, 0x9000);
        g_assert_cmphex(rd(c, REG(LANAI_REG_RSTAT)), ==, LANAI_RSTAT_DONE);
        g_assert_cmphex(rd(c, SRAM(0x8004)), ==, 0x6c6c6568);
        wr(c, SRAM(0x8004), 0);
    }
    g_assert_cmpuint(rd(c, CFG(LANAI_CNT_RX_PACKETS)), ==,
                     G_N_ELEMENTS(bad_rmp));
    card_down(c);
}

/* The firmware arms a receive and sleeps until RECV. */
static void test_firmware_receive(void)
{
    Card *c = card_up();
    Prog p = { .n = 0 };
    uint32_t len;
    g_autofree uint8_t *w = wire_packet(test_packet, sizeof(test_packet),
                                        &len);

    li(&p, S0, 0x1000);
    li(&p, T0, LANAI_ISR_RECV);
    sw_io(&p, T0, LANAI_REG_IMR);
    li(&p, T1, 0x8000);
    sw_io(&p, T1, LANAI_REG_RMP);
    li(&p, T1, 0x8100);
    sw_io(&p, T1, LANAI_REG_RML);
    wfi(&p);
    lw_io(&p, T1, LANAI_REG_RLEN);
    sw(&p, T1, S0, 0);
    lw_io(&p, T1, LANAI_REG_RSTAT);
    sw(&p, T1, S0, 4);
    sw_io(&p, T0, LANAI_REG_ISR);
    sleep_forever(&p);
    run_firmware(c, &p);
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CFG_CORE_STATE), ~0u,
                              LANAI_CORE_SLEEP));
    deliver(c, w, len);
    g_assert_true(qt_wait_reg(c->qt, SRAM(0x1004), ~0u, LANAI_RSTAT_DONE));
    g_assert_cmpuint(rd(c, SRAM(0x1000)), ==, sizeof(test_packet));
    g_assert_cmphex(rd(c, SRAM(0x8004)), ==, 0x6c6c6568);
    card_down(c);
}

/* Bad frames land with their status; counters and ISR say what it was. */
static void test_net_receive_errors(void)
{
    Card *c = card_up();
    uint32_t len;
    g_autofree uint8_t *w = wire_packet(test_packet, sizeof(test_packet),
                                        &len);
    const uint8_t illegal[] = { 0x81, 0, 0, 0, 1, 2, 3, 4 };
    const uint8_t tiny[] = { 0, 3 };

    run_sleeper(c);
    /* CRC error: delivered, flagged */
    w[5] ^= 0x10;
    arm_receive(c, 0x8000, 0x9000);
    deliver(c, w, len);
    g_assert_true(qt_wait_reg(c->qt, REG(LANAI_REG_RSTAT), ~0u,
                              LANAI_RSTAT_DONE | LANAI_RSTAT_CRC_ERR));
    g_assert_cmpuint(rd(c, REG(LANAI_REG_RLEN)), ==, sizeof(test_packet));
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) &
                    (LANAI_ISR_RX_CRC | LANAI_ISR_RECV), ==,
                    LANAI_ISR_RX_CRC | LANAI_ISR_RECV);
    g_assert_cmpuint(rd(c, CFG(LANAI_CNT_RX_CRC)), ==, 1);
    /* a flipped CRC byte is the same */
    w[5] ^= 0x10;
    w[len - 1] ^= 0x80;
    arm_receive(c, 0x8000, 0x9000);
    deliver(c, w, len);
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CNT_RX_CRC), ~0u, 2));
    w[len - 1] ^= 0x80;

    /* Too long for the buffer: truncated */
    wr(c, REG(LANAI_REG_ISR), ~LANAI_ISR_LANAI_SIG);
    arm_receive(c, 0x8000, 0x8008);
    deliver(c, w, len);
    g_assert_true(qt_wait_reg(c->qt, REG(LANAI_REG_RSTAT), ~0u,
                              LANAI_RSTAT_DONE | LANAI_RSTAT_TOO_LONG));
    g_assert_cmpuint(rd(c, REG(LANAI_REG_RLEN)), ==, 8);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) &
                    (LANAI_ISR_BUFF | LANAI_ISR_RX_TOO_LONG), ==,
                    LANAI_ISR_BUFF | LANAI_ISR_RX_TOO_LONG);
    /* Too long for the card */
    {
        uint32_t blen;
        g_autofree uint8_t *pkt = g_malloc0(LANAI_MAX_PACKET + 1);
        g_autofree uint8_t *bw = wire_packet(pkt, LANAI_MAX_PACKET + 1,
                                             &blen);

        arm_receive(c, 0x10000, 0x20000);
        deliver(c, bw, blen);
        g_assert_true(qt_wait_reg(c->qt, REG(LANAI_REG_RSTAT), ~0u,
                                  LANAI_RSTAT_DONE | LANAI_RSTAT_TOO_LONG));
        g_assert_cmpuint(rd(c, REG(LANAI_REG_RLEN)), ==, LANAI_MAX_PACKET);
    }
    /* Short, illegal, and a frame without even a CRC */
    {
        uint32_t n;
        g_autofree uint8_t *sw_ = wire_packet(tiny, sizeof(tiny), &n);

        arm_receive(c, 0x8000, 0x9000);
        deliver(c, sw_, n);
        g_assert_true(qt_wait_reg(c->qt, REG(LANAI_REG_RSTAT), ~0u,
                                  LANAI_RSTAT_DONE | LANAI_RSTAT_SHORT));
    }
    {
        uint32_t n;
        g_autofree uint8_t *iw = wire_packet(illegal, sizeof(illegal), &n);

        arm_receive(c, 0x8000, 0x9000);
        deliver(c, iw, n);
        g_assert_true(qt_wait_reg(c->qt, REG(LANAI_REG_RSTAT), ~0u,
                                  LANAI_RSTAT_DONE | LANAI_RSTAT_ILLEGAL));
        g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) &
                        LANAI_ISR_ILLEGAL_RECEIVED, ==,
                        LANAI_ISR_ILLEGAL_RECEIVED);
    }
    arm_receive(c, 0x8000, 0x9000);
    deliver(c, tiny, 1);
    g_assert_true(qt_wait_reg(c->qt, REG(LANAI_REG_RSTAT), ~0u,
                              LANAI_RSTAT_DONE | LANAI_RSTAT_SHORT |
                              LANAI_RSTAT_CRC_ERR));
    g_assert_cmpuint(rd(c, CFG(LANAI_CNT_RX_LEN)), ==, 4);
    g_assert_cmpuint(rd(c, CFG(LANAI_CNT_RX_ILLEGAL)), ==, 1);
    /* A buffer outside SRAM or empty is not armed */
    wr(c, REG(LANAI_REG_ISR), ~LANAI_ISR_LANAI_SIG);
    arm_receive(c, 0x1ff000, 0x201000);
    g_assert_cmphex(rd(c, REG(LANAI_REG_RSTAT)), ==, LANAI_RSTAT_BAD_RANGE);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_MEM, ==,
                    LANAI_ISR_MEM);
    arm_receive(c, 0x8000, 0x8000);
    g_assert_cmphex(rd(c, REG(LANAI_REG_RSTAT)), ==, LANAI_RSTAT_BAD_RANGE);
    deliver(c, w, len);
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CNT_RX_QUEUED), ~0u, 1));
    card_down(c);
}

/*
 * With no receive armed, frames queue until the card's queue is full;
 * then the card stops reading its socket.  Nothing is lost or reordered.
 */
static void test_receive_back_pressure(void)
{
    Card *c = card_up();
    enum { FRAMES = 72, SIZE = 4096 };
    g_autofree uint8_t *pkt = g_malloc0(SIZE);
    uint32_t queued;

    run_sleeper(c);
    for (uint32_t i = 0; i < FRAMES; i++) {
        uint32_t len;
        g_autofree uint8_t *w = NULL;

        fabric_put_le32(pkt + 4, i);
        w = wire_packet(pkt, SIZE, &len);
        deliver(c, w, len);
    }
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CNT_RX_FULL), ~0u, 1));
    g_usleep(200 * 1000);
    queued = rd(c, CFG(LANAI_CNT_RX_QUEUED));
    g_assert_cmpuint(queued, >=, 64);
    g_assert_cmpuint(queued, <=, 65);
    for (uint32_t i = 0; i < FRAMES; i++) {
        arm_receive(c, 0x8000, 0x8000 + SIZE);
        g_assert_true(qt_wait_reg(c->qt, REG(LANAI_REG_RSTAT), ~0u,
                                  LANAI_RSTAT_DONE));
        g_assert_cmpuint(rd(c, SRAM(0x8004)), ==, i);
    }
    g_assert_cmpuint(rd(c, CFG(LANAI_CNT_RX_PACKETS)), ==, FRAMES);
    card_down(c);
}

/* A firmware that never sleeps nor kicks is stopped by the watchdog. */
static void test_watchdog(void)
{
    Card *c = card_up();
    QTest *qt = c->qt;
    Prog loop = { .n = 0 }, kick = { .n = 0 };

    route_irq(c);
    control(c, LANAI_CTRL_INT_EN);
    /* kicking keeps it alive */
    sw_io(&kick, ZERO, LANAI_REG_WDOG_KICK);
    jump(&kick, 0);
    wr(c, CFG(LANAI_CFG_WDOG_MS), 2);
    run_firmware(c, &kick);
    clock_step(c, 10 * 1000 * 1000);
    g_assert_cmpuint(core_state(c), ==, LANAI_CORE_RUN);

    jump(&loop, 0);
    run_firmware(c, &loop);
    wr(c, REG(LANAI_REG_EIMR), LANAI_ISR_CORE_HALT);
    clock_step(c, 1000 * 1000);
    g_assert_cmpuint(core_state(c), ==, LANAI_CORE_RUN);
    g_assert_cmpint(qt->irq_raised, ==, 0);
    clock_step(c, 2 * 1000 * 1000);
    g_assert_cmpuint(core_state(c), ==, LANAI_CORE_HALT);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_HALT_CAUSE)), ==, LANAI_HALT_WDOG);
    g_assert_cmphex(rd(c, CFG(LANAI_CFG_HALT_PC)), ==, 0);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_CORE_HALT, ==,
                    LANAI_ISR_CORE_HALT);
    g_assert_cmpint(qt->irq_raised, ==, 1);
    /* A halted core stays halted; RESET_OFF alone does not restart it. */
    control(c, LANAI_CTRL_RESET_OFF);
    g_assert_cmpuint(core_state(c), ==, LANAI_CORE_HALT);
    control(c, LANAI_CTRL_RESET_ON);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_HALT_CAUSE)), ==, LANAI_HALT_WDOG);
    control(c, LANAI_CTRL_RESET_OFF);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_HALT_CAUSE)), ==, LANAI_HALT_NONE);
    /* wdog-ms 0 turns it off */
    wr(c, CFG(LANAI_CFG_WDOG_MS), 0);
    clock_step(c, 10 * 1000 * 1000);
    g_assert_cmpuint(core_state(c), ==, LANAI_CORE_RUN);
    card_down(c);
}

/* Every way out of the firmware halts with cause, pc and address. */
static void test_halts(void)
{
    Card *c = card_up();

    for (int i = 0; i < 8; i++) {
        Prog p = { .n = 0 };
        uint32_t cause, pc, addr;

        li(&p, T0, 0x400000);           /* 2 words */
        li(&p, A0, 0x1234);
        switch (i) {
        case 0:
            lw(&p, T1, T0, 8);
            cause = LANAI_HALT_LOAD, addr = 0x400008;
            break;
        case 1:
            sw(&p, T1, T0, 0);
            cause = LANAI_HALT_STORE, addr = 0x400000;
            break;
        case 2:
            jalr(&p, ZERO, T0, 0);
            cause = LANAI_HALT_FETCH, addr = 0x400000;
            break;
        case 3:
            lw(&p, T1, ZERO, 0x102);
            cause = LANAI_HALT_MISALIGNED, addr = 0x102;
            break;
        case 4:
            emit(&p, 0);
            cause = LANAI_HALT_ILLEGAL, addr = 0;
            break;
        case 5:
            ebreak(&p);
            cause = LANAI_HALT_EBREAK, addr = 0x1234;
            break;
        case 6:
            /* an unknown register, and a byte store to a known one */
            sw_io(&p, T1, 0x1fc);
            cause = LANAI_HALT_STORE, addr = 0xfffffffc;
            break;
        default:
            emit(&p, (uint32_t)(io(LANAI_REG_ISR) & 0xfe0) << 20 |
                     ZERO << 15 | 0 << 12 | (io(LANAI_REG_ISR) & 0x1f) << 7 |
                     0x23);
            cause = LANAI_HALT_STORE, addr = LANAI_CORE_REG(LANAI_REG_ISR);
            break;
        }
        /* FETCH reports the address it could not fetch as the pc */
        pc = cause == LANAI_HALT_FETCH ? addr : 4 * (uint32_t)(p.n - 1);
        run_firmware(c, &p);
        g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CFG_CORE_STATE), ~0u,
                                  LANAI_CORE_HALT));
        g_assert_cmpuint(rd(c, CFG(LANAI_CFG_HALT_CAUSE)), ==, cause);
        g_assert_cmphex(rd(c, CFG(LANAI_CFG_HALT_PC)), ==, pc);
        g_assert_cmphex(rd(c, CFG(LANAI_CFG_HALT_ADDR)), ==, addr);
        g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_CORE_HALT, ==,
                        LANAI_ISR_CORE_HALT);
    }
    card_down(c);
}

static void test_fabric_reject_and_loss(void)
{
    Card *c = card_up();
    const char reject[] = "\x03node 3 is not on this socket";
    uint32_t len;
    g_autofree uint8_t *w = wire_packet(test_packet, sizeof(test_packet),
                                        &len);

    run_sleeper(c);
    arm_receive(c, 0x8000, 0x9000);
    ff_send(c->ff, K, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE, NODE, reject,
            sizeof(reject) - 1);
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CFG_LINK), ~0u,
                              LANAI_LINK_CONNECTED | LANAI_LINK_REJECTED));
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_FABRIC_NODES)), ==, 0);
    g_assert_cmphex(rd(c, REG(LANAI_REG_ISR)) & LANAI_ISR_LINK_DOWN, ==,
                    LANAI_ISR_LINK_DOWN);
    /* without an acknowledged link, frames are absorbed */
    deliver(c, w, len);
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CNT_RX_IN_RESET), ~0u, 1));
    g_assert_cmphex(rd(c, REG(LANAI_REG_RSTAT)), ==, LANAI_RSTAT_ARMED);
    /* a send without a link is dropped and says so */
    put_bytes(c, 0x7000, test_route, 2);
    put_bytes(c, 0x7002, test_packet, sizeof(test_packet));
    send_range(c, 0x7000, 0x7000 + 12);
    g_assert_cmphex(rd(c, REG(LANAI_REG_SSTAT)), ==, LANAI_SSTAT_NO_LINK);
    /* garbage from the fabric drops the connection; QEMU survives */
    uint8_t junk[64];
    memset(junk, 0xee, sizeof(junk));
    ff_send_raw(c->ff, junk, sizeof(junk));
    g_assert_true(ff_peer_closed(c->ff));
    g_assert_true(qt_wait_reg(c->qt, CFG(LANAI_CFG_LINK),
                              LANAI_LINK_CONNECTED, 0));
    g_assert_cmphex(rd(c, CFG(LANAI_CFG_ID)), ==, LANAI_ID_VALUE);
    card_down(c);
}

/* Other SRAM sizes work; bad properties stop QEMU with a clear message. */
static void test_properties(void)
{
    Card *c = card_up_with(",sram-size=256K,clock-mhz=100,wdog-ms=5");

    g_assert_cmphex(rd(c, CFG(LANAI_CFG_SRAM_SIZE)), ==, 256 << 10);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_CLOCK_MHZ)), ==, 100);
    g_assert_cmpuint(rd(c, CFG(LANAI_CFG_WDOG_MS)), ==, 5);
    wr(c, SRAM(0x3fffc), 0x5a5a5a5a);
    g_assert_cmphex(rd(c, SRAM(0x3fffc)), ==, 0x5a5a5a5a);
    g_assert_cmphex(rd(c, SRAM(0x40000)), ==, 0);
    card_down(c);

    const struct {
        const char *dev, *msg;
    } bad[] = {
        { "lanai,sram-size=3M", "sram-size=3145728 must be a power of two" },
        { "lanai,sram-size=128K", "must be a power of two from 256 KiB" },
        { "lanai,sram-size=16M", "to 8 MiB" },
        { "lanai,clock-mhz=0", "clock-mhz=0 is out of range" },
        { "lanai,node=1024", "node=1024 is out of range" },
        { "lanai,wait-timeout-us=2000000", "wait-timeout-us=2000000" },
    };
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");

    for (unsigned i = 0; i < G_N_ELEMENTS(bad); i++) {
        const char *argv[] = {
            "timeout", "60", qemu ? qemu : "build/qemu/qemu-system-x86_64",
            "-machine", "pc", "-accel", "qtest", "-nodefaults",
            "-display", "none", "-no-user-config",
            "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
            "-device", bad[i].dev, NULL
        };
        g_autofree char *out = NULL, *err = NULL;
        int status;

        g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL,
                                   G_SPAWN_SEARCH_PATH, NULL, NULL,
                                   &out, &err, &status, NULL));
        g_assert_false(g_spawn_check_wait_status(status, NULL));
        if (!strstr(err, bad[i].msg)) {
            g_error("%s: expected '%s' in: %s", bad[i].dev, bad[i].msg, err);
        }
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/lanai/identity-and-bar", test_identity_and_bar);
    g_test_add_func("/lanai/sram-and-bad-accesses",
                    test_sram_and_bad_accesses);
    g_test_add_func("/lanai/pci-reset", test_pci_reset);
    g_test_add_func("/lanai/reset-on-off", test_reset_on_off);
    g_test_add_func("/lanai/firmware-host-sig", test_firmware_host_sig);
    g_test_add_func("/lanai/wfi-doorbell-and-notify",
                    test_wfi_doorbell_and_notify);
    g_test_add_func("/lanai/doorbell-fifo", test_doorbell_fifo);
    g_test_add_func("/lanai/interval-timers", test_interval_timers);
    g_test_add_func("/lanai/dma-chain", test_dma_chain);
    g_test_add_func("/lanai/dma-errors", test_dma_errors);
    g_test_add_func("/lanai/net-send", test_net_send);
    g_test_add_func("/lanai/net-send-errors", test_net_send_errors);
    g_test_add_func("/lanai/net-receive", test_net_receive);
    g_test_add_func("/lanai/firmware-receive", test_firmware_receive);
    g_test_add_func("/lanai/net-receive-errors", test_net_receive_errors);
    g_test_add_func("/lanai/receive-back-pressure",
                    test_receive_back_pressure);
    g_test_add_func("/lanai/receive-rmp-moved", test_receive_rmp_moved);
    g_test_add_func("/lanai/net-send-fabric-stalled",
                    test_net_send_fabric_stalled);
    g_test_add_func("/lanai/watchdog", test_watchdog);
    g_test_add_func("/lanai/halts", test_halts);
    g_test_add_func("/lanai/fabric-reject-and-loss",
                    test_fabric_reject_and_loss);
    g_test_add_func("/lanai/properties", test_properties);
    return g_test_run();
}
