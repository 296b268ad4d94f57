/*
 * Unit tests for rv32core.c: every RV32IM instruction with its edge cases,
 * SRAM bounds and the I/O window, every halt cause, budgets and resuming,
 * wfi, random code and gcc-built firmware (tests/unit/rv32/).  Programs are
 * written with a tiny assembler.  With -m perf (a bench, not a test) it
 * also measures throughput: /rv32/perf/throughput reports MIPS.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <glib.h>
#include <string.h>

#include "rv32core.h"
#include "rv32/fw.h"

/* ---- the tiny assembler -------------------------------------------- */

enum { ZERO, RA, SP, GP, TP, T0, T1, T2, S0, S1, A0, A1, A2, A3, A4, A5 };

static uint32_t enc_r(uint32_t f7, unsigned rs2, unsigned rs1, uint32_t f3,
                      unsigned rd, uint32_t op)
{
    return f7 << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op;
}

static uint32_t enc_i(int32_t imm, unsigned rs1, uint32_t f3, unsigned rd,
                      uint32_t op)
{
    g_assert_cmpint(imm, >=, -2048);
    g_assert_cmpint(imm, <=, 2047);
    return (uint32_t)imm << 20 | rs1 << 15 | f3 << 12 | rd << 7 | op;
}

static uint32_t enc_s(int32_t imm, unsigned rs2, unsigned rs1, uint32_t f3)
{
    uint32_t u = imm;

    g_assert_cmpint(imm, >=, -2048);
    g_assert_cmpint(imm, <=, 2047);
    return (u >> 5 & 0x7f) << 25 | rs2 << 20 | rs1 << 15 | f3 << 12 |
           (u & 0x1f) << 7 | 0x23;
}

static uint32_t enc_b(int32_t off, unsigned rs2, unsigned rs1, uint32_t f3)
{
    uint32_t u = off;

    g_assert_cmpint(off, >=, -4096);
    g_assert_cmpint(off, <=, 4094);
    g_assert_cmpint(off & 1, ==, 0);
    return (u >> 12 & 1) << 31 | (u >> 5 & 0x3f) << 25 | rs2 << 20 |
           rs1 << 15 | f3 << 12 | (u >> 1 & 0xf) << 8 | (u >> 11 & 1) << 7 |
           0x63;
}

static uint32_t enc_j(int32_t off, unsigned rd)
{
    uint32_t u = off;

    g_assert_cmpint(off, >=, -(1 << 20));
    g_assert_cmpint(off, <, 1 << 20);
    return (u >> 20 & 1) << 31 | (u >> 1 & 0x3ff) << 21 |
           (u >> 11 & 1) << 20 | (u >> 12 & 0xff) << 12 | rd << 7 | 0x6f;
}

#define R_OP(name, f7, f3) \
    static uint32_t name(unsigned rd, unsigned rs1, unsigned rs2) \
    { \
        return enc_r(f7, rs2, rs1, f3, rd, 0x33); \
    }
R_OP(i_add, 0x00, 0) R_OP(i_sub, 0x20, 0) R_OP(i_sll, 0x00, 1)
R_OP(i_slt, 0x00, 2) R_OP(i_sltu, 0x00, 3) R_OP(i_xor, 0x00, 4)
R_OP(i_srl, 0x00, 5) R_OP(i_sra, 0x20, 5) R_OP(i_or, 0x00, 6)
R_OP(i_and, 0x00, 7)
R_OP(i_mul, 0x01, 0) R_OP(i_mulh, 0x01, 1) R_OP(i_mulhsu, 0x01, 2)
R_OP(i_mulhu, 0x01, 3) R_OP(i_div, 0x01, 4) R_OP(i_divu, 0x01, 5)
R_OP(i_rem, 0x01, 6) R_OP(i_remu, 0x01, 7)

#define I_OP(name, f3, op) \
    static uint32_t name(unsigned rd, unsigned rs1, int32_t imm) \
    { \
        return enc_i(imm, rs1, f3, rd, op); \
    }
I_OP(i_addi, 0, 0x13) I_OP(i_slti, 2, 0x13) I_OP(i_sltiu, 3, 0x13)
I_OP(i_xori, 4, 0x13) I_OP(i_ori, 6, 0x13) I_OP(i_andi, 7, 0x13)
I_OP(i_lb, 0, 0x03) I_OP(i_lh, 1, 0x03) I_OP(i_lw, 2, 0x03)
I_OP(i_lbu, 4, 0x03) I_OP(i_lhu, 5, 0x03) I_OP(i_jalr, 0, 0x67)

static uint32_t i_slli(unsigned rd, unsigned rs1, int32_t sh)
{
    return enc_i(sh, rs1, 1, rd, 0x13);
}

static uint32_t i_srli(unsigned rd, unsigned rs1, int32_t sh)
{
    return enc_i(sh, rs1, 5, rd, 0x13);
}

static uint32_t i_srai(unsigned rd, unsigned rs1, int32_t sh)
{
    return enc_i(sh | 0x400, rs1, 5, rd, 0x13);
}

/* sw rs2, imm(rs1) is i_sw(rs2, rs1, imm) */
static uint32_t i_sb(unsigned rs2, unsigned rs1, int32_t imm)
{
    return enc_s(imm, rs2, rs1, 0);
}

static uint32_t i_sh(unsigned rs2, unsigned rs1, int32_t imm)
{
    return enc_s(imm, rs2, rs1, 1);
}

static uint32_t i_sw(unsigned rs2, unsigned rs1, int32_t imm)
{
    return enc_s(imm, rs2, rs1, 2);
}

#define B_OP(name, f3) \
    static uint32_t name(unsigned rs1, unsigned rs2, int32_t off) \
    { \
        return enc_b(off, rs2, rs1, f3); \
    }
B_OP(i_beq, 0) B_OP(i_bne, 1) B_OP(i_blt, 4) B_OP(i_bge, 5)
B_OP(i_bltu, 6) B_OP(i_bgeu, 7)

static uint32_t i_lui(unsigned rd, uint32_t upper)
{
    return (upper & 0xfffff000u) | rd << 7 | 0x37;
}

static uint32_t i_auipc(unsigned rd, uint32_t upper)
{
    return (upper & 0xfffff000u) | rd << 7 | 0x17;
}

static uint32_t i_jal(unsigned rd, int32_t off)
{
    return enc_j(off, rd);
}

#define I_ECALL     0x00000073u
#define I_EBREAK    0x00100073u
#define I_WFI       0x10500073u
#define I_FENCE     0x0ff0000fu     /* fence iorw, iorw */
#define I_FENCE_I   0x0000100fu
#define I_NOP       0x00000013u     /* addi x0, x0, 0 */

/* ---- the fixture: one core, SRAM with guard bytes, a logging bus ---- */

#define SRAM_SIZE   (64 * 1024)
#define SRAM_MAX    (256 * 1024)
#define GUARD       64
#define GUARD_BYTE  0xa5

typedef struct IoAccess {
    bool write;
    uint32_t offset;
    unsigned size;
    uint32_t val;
    uint32_t pc;            /* core->pc during the callback */
    uint64_t insns;
} IoAccess;

static struct {
    uint8_t mem[SRAM_MAX + GUARD];
    Rv32Bus bus;
    Rv32Core core;
    uint32_t size;              /* the guard bytes start here */
    uint32_t at;                /* where emit() puts the next word */
    uint32_t io_in[RV32_IO_SIZE / 4];   /* what io_read answers */
    uint8_t io_out[RV32_IO_SIZE];       /* what io_write stored */
    IoAccess log[64];
    unsigned nlog;
    bool io_refuse;
} t;

static bool io_read(void *opaque, uint32_t offset, unsigned size,
                    uint32_t *val)
{
    g_assert_true(opaque == &t);
    g_assert_cmpuint(offset, <, RV32_IO_SIZE);
    g_assert_cmpuint(offset % size, ==, 0);
    if (t.nlog < G_N_ELEMENTS(t.log)) {
        t.log[t.nlog++] = (IoAccess) {
            false, offset, size, 0, t.core.pc, t.core.insns
        };
    }
    if (t.io_refuse) {
        return false;
    }
    /* The bytes above the access are left in: the core must drop them. */
    *val = t.io_in[offset / 4] >> (offset % 4 * 8);
    return true;
}

static bool io_write(void *opaque, uint32_t offset, unsigned size,
                     uint32_t val)
{
    g_assert_true(opaque == &t);
    g_assert_cmpuint(offset, <, RV32_IO_SIZE);
    g_assert_cmpuint(offset % size, ==, 0);
    if (size < 4) {
        g_assert_cmphex(val >> (size * 8), ==, 0);
    }
    if (t.nlog < G_N_ELEMENTS(t.log)) {
        t.log[t.nlog++] = (IoAccess) {
            true, offset, size, val, t.core.pc, t.core.insns
        };
    }
    if (t.io_refuse) {
        return false;
    }
    for (unsigned i = 0; i < size; i++) {
        t.io_out[offset + i] = val >> (8 * i);
    }
    return true;
}

static void setup_size(uint32_t size)
{
    g_assert_cmpuint(size, <=, SRAM_MAX);
    memset(&t, 0, sizeof(t));
    memset(t.mem + size, GUARD_BYTE, GUARD);
    t.size = size;
    t.bus = (Rv32Bus) {
        .sram = t.mem, .sram_size = size,
        .io_read = io_read, .io_write = io_write, .opaque = &t,
    };
    rv32_reset(&t.core, 0);
}

static void setup(void)
{
    setup_size(SRAM_SIZE);
}

static void check_guard(void)
{
    for (unsigned i = 0; i < GUARD; i++) {
        g_assert_cmphex(t.mem[t.size + i], ==, GUARD_BYTE);
    }
}

static void put32(uint32_t addr, uint32_t v)
{
    for (int i = 0; i < 4; i++) {
        t.mem[addr + i] = v >> (8 * i);
    }
}

static uint32_t get32(uint32_t addr)
{
    return t.mem[addr] | t.mem[addr + 1] << 8 | t.mem[addr + 2] << 16 |
           (uint32_t)t.mem[addr + 3] << 24;
}

static uint32_t emit(uint32_t insn)
{
    uint32_t addr = t.at;

    put32(addr, insn);
    t.at += 4;
    return addr;
}

/* Always two instructions, so programs have a fixed layout. */
static void li(unsigned rd, uint32_t v)
{
    uint32_t lo = v & 0xfff;
    int32_t slo = lo >= 0x800 ? (int32_t)lo - 0x1000 : (int32_t)lo;

    emit(i_lui(rd, v - slo));
    emit(i_addi(rd, rd, slo));
}

static Rv32Stop run(uint64_t budget, uint64_t *executed)
{
    uint64_t n = ~0ull;
    Rv32Stop s = rv32_run(&t.core, &t.bus, budget, &n);

    g_assert_cmpuint(n, <=, budget);
    if (executed) {
        *executed = n;
    }
    check_guard();
    return s;
}

/* Run until the program's ebreak; fail on anything else. */
static void run_to_ebreak(void)
{
    g_assert_cmpint(run(100000000, NULL), ==, RV32_STOP_HALT);
    if (t.core.halt != RV32_HALT_EBREAK) {
        g_error("halt %s at pc 0x%x addr 0x%x", rv32_halt_name(t.core.halt),
                t.core.halt_pc, t.core.halt_addr);
    }
}

static void expect_halt(Rv32Halt cause, uint32_t pc, uint32_t addr)
{
    uint64_t before = t.core.insns;

    g_assert_cmpint(run(1000, NULL), ==, RV32_STOP_HALT);
    g_assert_cmpstr(rv32_halt_name(t.core.halt), ==, rv32_halt_name(cause));
    g_assert_cmphex(t.core.halt_pc, ==, pc);
    g_assert_cmphex(t.core.pc, ==, pc);
    g_assert_cmphex(t.core.halt_addr, ==, addr);
    g_assert_cmpuint(t.core.insns, >=, before);
}

/* ---- single instructions ------------------------------------------- */

typedef uint32_t (*ROp)(unsigned rd, unsigned rs1, unsigned rs2);
typedef uint32_t (*IOp)(unsigned rd, unsigned rs1, int32_t imm);

/* x3 = op(x1 = a, x2 = b): one instruction, then ebreak. */
static uint32_t exec_r(ROp op, uint32_t a, uint32_t b)
{
    setup();
    emit(op(3, 1, 2));
    emit(I_EBREAK);
    t.core.x[1] = a;
    t.core.x[2] = b;
    run_to_ebreak();
    g_assert_cmphex(t.core.x[1], ==, a);
    g_assert_cmphex(t.core.x[2], ==, b);
    g_assert_cmpuint(t.core.insns, ==, 1);
    return t.core.x[3];
}

static uint32_t exec_i(IOp op, uint32_t a, int32_t imm)
{
    setup();
    emit(op(3, 1, imm));
    emit(I_EBREAK);
    t.core.x[1] = a;
    run_to_ebreak();
    return t.core.x[3];
}

typedef struct RCase {
    const char *name;
    ROp op;
    uint32_t a, b, want;
} RCase;

#define MIN32 0x80000000u
#define MAX32 0x7fffffffu
#define M1    0xffffffffu

static const RCase r_cases[] = {
    { "add", i_add, 1, 2, 3 },
    { "add", i_add, M1, 1, 0 },
    { "add", i_add, MAX32, 1, MIN32 },
    { "sub", i_sub, 0, 1, M1 },
    { "sub", i_sub, MIN32, 1, MAX32 },
    { "sll", i_sll, 1, 31, MIN32 },
    { "sll", i_sll, 1, 32, 1 },                 /* low 5 bits only */
    { "sll", i_sll, 3, 0xffffffe1u, 6 },
    { "slt", i_slt, M1, 0, 1 },
    { "slt", i_slt, 0, M1, 0 },
    { "slt", i_slt, 5, 5, 0 },
    { "slt", i_slt, MIN32, MAX32, 1 },
    { "sltu", i_sltu, M1, 0, 0 },
    { "sltu", i_sltu, 0, M1, 1 },
    { "sltu", i_sltu, 5, 5, 0 },
    { "xor", i_xor, 0xff00ff00u, 0x0ff00ff0u, 0xf0f0f0f0u },
    { "srl", i_srl, MIN32, 31, 1 },
    { "srl", i_srl, MIN32, 36, 0x08000000u },
    { "srl", i_srl, 0xf0000000u, 0, 0xf0000000u },
    { "sra", i_sra, MIN32, 31, M1 },
    { "sra", i_sra, MIN32, 4, 0xf8000000u },
    { "sra", i_sra, 0x70000000u, 4, 0x07000000u },
    { "sra", i_sra, MIN32, 33, 0xc0000000u },
    { "or", i_or, 0xff00ff00u, 0x0ff00ff0u, 0xfff0fff0u },
    { "and", i_and, 0xff00ff00u, 0x0ff00ff0u, 0x0f000f00u },
    { "mul", i_mul, 0x10000, 0x10000, 0 },
    { "mul", i_mul, M1, M1, 1 },
    { "mul", i_mul, 7, 0xfffffffdu, 0xffffffebu },
    { "mul", i_mul, 0x12345678u, 0x9abcdef0u, 0x242d2080u },
    { "mulh", i_mulh, M1, M1, 0 },
    { "mulh", i_mulh, M1, 1, M1 },
    { "mulh", i_mulh, 2, 3, 0 },
    { "mulh", i_mulh, MIN32, MIN32, 0x40000000u },
    { "mulh", i_mulh, MIN32, MAX32, 0xc0000000u },
    { "mulh", i_mulh, 0x12345678u, 0x9abcdef0u, 0xf8cc93d6u },
    { "mulhsu", i_mulhsu, M1, M1, M1 },
    { "mulhsu", i_mulhsu, MIN32, M1, MIN32 },
    { "mulhsu", i_mulhsu, MIN32, MIN32, 0xc0000000u },
    { "mulhsu", i_mulhsu, 1, M1, 0 },
    { "mulhsu", i_mulhsu, 0x12345678u, 0x9abcdef0u, 0x0b00ea4eu },
    { "mulhu", i_mulhu, M1, M1, 0xfffffffeu },
    { "mulhu", i_mulhu, MIN32, 2, 1 },
    { "mulhu", i_mulhu, MIN32, MIN32, 0x40000000u },
    { "mulhu", i_mulhu, MIN32, MAX32, 0x3fffffffu },
    { "div", i_div, 7, 2, 3 },
    { "div", i_div, -7u, 2, -3u },              /* rounds toward zero */
    { "div", i_div, 7, -2u, -3u },
    { "div", i_div, -7u, -2u, 3 },
    { "div", i_div, 12345, 0, M1 },             /* by zero: -1 */
    { "div", i_div, 0, 0, M1 },
    { "div", i_div, MIN32, M1, MIN32 },         /* overflow */
    { "div", i_div, MIN32, 1, MIN32 },
    { "divu", i_divu, 7, 2, 3 },
    { "divu", i_divu, M1, 2, MAX32 },
    { "divu", i_divu, 12345, 0, M1 },
    { "divu", i_divu, MIN32, M1, 0 },
    { "rem", i_rem, 7, 2, 1 },
    { "rem", i_rem, -7u, 2, M1 },               /* sign of the dividend */
    { "rem", i_rem, 7, -2u, 1 },
    { "rem", i_rem, -7u, -2u, M1 },
    { "rem", i_rem, -12345u, 0, -12345u },      /* by zero: dividend */
    { "rem", i_rem, MIN32, M1, 0 },             /* overflow */
    { "remu", i_remu, 7, 2, 1 },
    { "remu", i_remu, M1, 10, 5 },
    { "remu", i_remu, -12345u, 0, -12345u },
    { "remu", i_remu, MIN32, M1, MIN32 },
};

static void test_reg_ops(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(r_cases); i++) {
        const RCase *c = &r_cases[i];
        uint32_t got = exec_r(c->op, c->a, c->b);

        if (got != c->want) {
            g_error("%s 0x%x, 0x%x = 0x%x, want 0x%x", c->name, c->a, c->b,
                    got, c->want);
        }
    }
}

typedef struct ICase {
    const char *name;
    IOp op;
    uint32_t a;
    int32_t imm;
    uint32_t want;
} ICase;

static const ICase i_cases[] = {
    { "addi", i_addi, 1, -1, 0 },
    { "addi", i_addi, 0, -2048, 0xfffff800u },
    { "addi", i_addi, 0, 2047, 0x7ff },
    { "addi", i_addi, MAX32, 1, MIN32 },
    { "slti", i_slti, M1, 0, 1 },
    { "slti", i_slti, 0, -1, 0 },
    { "slti", i_slti, MIN32, -2048, 1 },
    { "sltiu", i_sltiu, 0, -1, 1 },             /* imm is 0xffffffff */
    { "sltiu", i_sltiu, 0xfffffffeu, -1, 1 },
    { "sltiu", i_sltiu, M1, -1, 0 },
    { "sltiu", i_sltiu, 0, 1, 1 },              /* seqz */
    { "sltiu", i_sltiu, 7, 1, 0 },
    { "xori", i_xori, 0x12345678u, -1, 0xedcba987u },     /* not */
    { "xori", i_xori, 0xff, 0x7ff, 0x700 },
    { "ori", i_ori, 0, -2048, 0xfffff800u },
    { "ori", i_ori, 0x12340000u, 0x123, 0x12340123u },
    { "andi", i_andi, M1, 0x7ff, 0x7ff },
    { "andi", i_andi, M1, -16, 0xfffffff0u },
    { "slli", i_slli, 1, 31, MIN32 },
    { "slli", i_slli, 0x12345678u, 0, 0x12345678u },
    { "slli", i_slli, 0x12345678u, 4, 0x23456780u },
    { "srli", i_srli, MIN32, 31, 1 },
    { "srli", i_srli, M1, 0, M1 },
    { "srli", i_srli, 0xf0000000u, 4, 0x0f000000u },
    { "srai", i_srai, MIN32, 31, M1 },
    { "srai", i_srai, 0xf0000000u, 4, 0xff000000u },
    { "srai", i_srai, 0x40000000u, 30, 1 },
    { "srai", i_srai, M1, 0, M1 },
};

static void test_imm_ops(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(i_cases); i++) {
        const ICase *c = &i_cases[i];
        uint32_t got = exec_i(c->op, c->a, c->imm);

        if (got != c->want) {
            g_error("%s 0x%x, %d = 0x%x, want 0x%x", c->name, c->a, c->imm,
                    got, c->want);
        }
    }
}

/*
 * A second opinion on every OP instruction, for random and edge operands.
 * The high products come from 16-bit limbs and sign corrections, not from
 * 64-bit multiplies as in the core.
 */
static uint32_t ref_mulhu(uint32_t a, uint32_t b)
{
    uint32_t al = a & 0xffff, ah = a >> 16, bl = b & 0xffff, bh = b >> 16;
    uint32_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
    uint32_t mid = (ll >> 16) + (lh & 0xffff) + (hl & 0xffff);

    return hh + (lh >> 16) + (hl >> 16) + (mid >> 16);
}

static uint32_t ref_op(int k, uint32_t a, uint32_t b)
{
    int64_t sa = (int32_t)a, sb = (int32_t)b;

    switch (k) {
    case 0: return a + b;
    case 1: return a - b;
    case 2: return a << (b % 32);
    case 3: return sa < sb;
    case 4: return a < b;
    case 5: return a ^ b;
    case 6: return a >> (b % 32);
    case 7: return (uint32_t)(sa >> (b % 32));
    case 8: return a | b;
    case 9: return a & b;
    case 10: return a * b;
    case 11: return ref_mulhu(a, b) - (sa < 0 ? b : 0) - (sb < 0 ? a : 0);
    case 12: return ref_mulhu(a, b) - (sa < 0 ? b : 0);
    case 13: return ref_mulhu(a, b);
    case 14: return b ? (uint32_t)(sa / sb) : M1;  /* 64-bit: no overflow */
    case 15: return b ? a / b : M1;
    case 16: return b ? (uint32_t)(sa % sb) : a;
    case 17: return b ? a % b : a;
    }
    g_assert_not_reached();
}

static const ROp ref_ops[] = {
    i_add, i_sub, i_sll, i_slt, i_sltu, i_xor, i_srl, i_sra, i_or, i_and,
    i_mul, i_mulh, i_mulhsu, i_mulhu, i_div, i_divu, i_rem, i_remu,
};

static uint32_t edgy(GRand *r)
{
    static const uint32_t edges[] = {
        0, 1, 2, 3, M1, -2u, MIN32, MAX32, MIN32 + 1, 0xffff, 0x10000,
        0x8000, 31, 32, 33,
    };

    if (g_rand_int_range(r, 0, 3) == 0) {
        return edges[g_rand_int_range(r, 0, G_N_ELEMENTS(edges))];
    }
    return g_rand_int(r);
}

static void test_random_vs_reference(void)
{
    GRand *r = g_rand_new_with_seed(20260401);

    for (int i = 0; i < 2000; i++) {
        uint32_t a = edgy(r), b = edgy(r);

        for (size_t k = 0; k < G_N_ELEMENTS(ref_ops); k++) {
            uint32_t want = ref_op(k, a, b), got = exec_r(ref_ops[k], a, b);

            if (got != want) {
                g_error("op %zu 0x%x, 0x%x = 0x%x, want 0x%x", k, a, b, got,
                        want);
            }
        }
        /* the immediate forms: as the register form with b = imm */
        int32_t imm = g_rand_int_range(r, -2048, 2048);
        int32_t sh = g_rand_int_range(r, 0, 32);

        g_assert_cmphex(exec_i(i_addi, a, imm), ==, ref_op(0, a, imm));
        g_assert_cmphex(exec_i(i_slti, a, imm), ==, ref_op(3, a, imm));
        g_assert_cmphex(exec_i(i_sltiu, a, imm), ==, ref_op(4, a, imm));
        g_assert_cmphex(exec_i(i_xori, a, imm), ==, ref_op(5, a, imm));
        g_assert_cmphex(exec_i(i_ori, a, imm), ==, ref_op(8, a, imm));
        g_assert_cmphex(exec_i(i_andi, a, imm), ==, ref_op(9, a, imm));
        g_assert_cmphex(exec_i(i_slli, a, sh), ==, ref_op(2, a, sh));
        g_assert_cmphex(exec_i(i_srli, a, sh), ==, ref_op(6, a, sh));
        g_assert_cmphex(exec_i(i_srai, a, sh), ==, ref_op(7, a, sh));
    }
    g_rand_free(r);
}

static void test_lui_auipc(void)
{
    setup();
    emit(i_lui(3, 0xfffff000u));            /* 0x00 */
    emit(i_lui(4, 0x12345000u));            /* 0x04 */
    emit(i_auipc(5, 0));                    /* 0x08 */
    emit(i_auipc(6, 0x1000));               /* 0x0c */
    emit(i_auipc(7, 0x80000000u));          /* 0x10 */
    emit(i_auipc(8, 0xfffff000u));          /* 0x14: pc - 4096 wraps */
    emit(I_EBREAK);
    run_to_ebreak();
    g_assert_cmphex(t.core.x[3], ==, 0xfffff000u);
    g_assert_cmphex(t.core.x[4], ==, 0x12345000u);
    g_assert_cmphex(t.core.x[5], ==, 0x08);
    g_assert_cmphex(t.core.x[6], ==, 0x100c);
    g_assert_cmphex(t.core.x[7], ==, 0x80000010u);
    g_assert_cmphex(t.core.x[8], ==, 0xfffff014u);
}

/* lui + addi: the addi's sign-extended immediate needs the rounding */
static void test_li(void)
{
    static const uint32_t vals[] = {
        0, 1, M1, 0x7ff, 0x800, 0xfff, 0x1000, 0x12345fffu, 0xfffff800u,
        0x7ffff800u, MIN32, MAX32, 0xdeadbeefu,
    };

    for (size_t i = 0; i < G_N_ELEMENTS(vals); i++) {
        setup();
        li(A0, vals[i]);
        emit(I_EBREAK);
        run_to_ebreak();
        g_assert_cmphex(t.core.x[A0], ==, vals[i]);
    }
}

/* ---- loads and stores ---------------------------------------------- */

static void test_load_sign_extension(void)
{
    setup();
    put32(0x1000, 0x8001ff80u);             /* bytes 80 ff 01 80 */
    put32(0x1004, 0x7f7f7fffu);
    li(A0, 0x1010);
    emit(i_lb(1, A0, -16));
    emit(i_lbu(2, A0, -16));
    emit(i_lb(3, A0, -15));
    emit(i_lb(4, A0, -14));
    emit(i_lh(5, A0, -16));
    emit(i_lhu(6, A0, -16));
    emit(i_lh(7, A0, -14));
    emit(i_lhu(8, A0, -14));
    emit(i_lw(9, A0, -16));
    emit(i_lh(11, A0, -10));                /* 0x7f7f: positive */
    emit(i_lb(12, A0, -12));                /* 0xff */
    emit(i_lbu(13, A0, -12));
    emit(i_lw(14, ZERO, 0x7fc));            /* x0 + positive offset */
    emit(I_EBREAK);
    put32(0x7fc, 0xcafef00du);
    run_to_ebreak();
    g_assert_cmphex(t.core.x[1], ==, 0xffffff80u);
    g_assert_cmphex(t.core.x[2], ==, 0x80);
    g_assert_cmphex(t.core.x[3], ==, M1);
    g_assert_cmphex(t.core.x[4], ==, 1);
    g_assert_cmphex(t.core.x[5], ==, 0xffffff80u);
    g_assert_cmphex(t.core.x[6], ==, 0xff80);
    g_assert_cmphex(t.core.x[7], ==, 0xffff8001u);
    g_assert_cmphex(t.core.x[8], ==, 0x8001);
    g_assert_cmphex(t.core.x[9], ==, 0x8001ff80u);
    g_assert_cmphex(t.core.x[11], ==, 0x7f7f);
    g_assert_cmphex(t.core.x[12], ==, M1);
    g_assert_cmphex(t.core.x[13], ==, 0xff);
    g_assert_cmphex(t.core.x[14], ==, 0xcafef00du);
}

static void test_store_widths(void)
{
    static const uint8_t want[20] = {
        0x44, 0x33, 0x22, 0x11, 0xee, 0xee, 0x44, 0x33,
        0xee, 0x44, 0xee, 0x44, 0xee, 0xee, 0x44, 0x33,
        0x00, 0x00, 0x00, 0x00,
    };

    setup();
    memset(t.mem + 0x2000, 0xee, 16);
    li(A0, 0x2000);
    li(A1, 0x11223344);
    li(A2, 0x2010);
    emit(i_sw(A1, A0, 0));
    emit(i_sh(A1, A0, 6));
    emit(i_sb(A1, A0, 9));
    emit(i_sb(A1, A0, 11));
    emit(i_sh(A1, A2, -2));
    emit(I_EBREAK);
    run_to_ebreak();
    g_assert_cmpmem(t.mem + 0x2000, sizeof(want), want, sizeof(want));
}

/* Address arithmetic wraps modulo 2^32, back into SRAM at 0. */
static void test_address_wrap(void)
{
    setup();
    t.at = 0x100;
    rv32_reset(&t.core, 0x100);
    put32(0x10, 0xabcd1234u);
    t.mem[0] = 0x99;
    li(A0, 0xfffffff0u);
    li(A1, M1);
    li(A2, 0xfffff810u);
    li(A3, 0x5eed5eedu);
    emit(i_lw(3, A0, 0x20));                /* 0x10 */
    emit(i_lb(4, A1, 1));                   /* 0x0 */
    emit(i_sw(A3, A2, 0x7f0));              /* 0x0 */
    emit(I_EBREAK);
    run_to_ebreak();
    g_assert_cmphex(t.core.x[3], ==, 0xabcd1234u);
    g_assert_cmphex(t.core.x[4], ==, 0xffffff99u);
    g_assert_cmphex(get32(0), ==, 0x5eed5eedu);
    g_assert_cmpuint(t.nlog, ==, 0);
}

/* ---- control flow -------------------------------------------------- */

typedef uint32_t (*BOp)(unsigned rs1, unsigned rs2, int32_t off);

typedef struct BCase {
    const char *name;
    BOp op;
    uint32_t a, b;
    bool taken;
} BCase;

static const BCase b_cases[] = {
    { "beq", i_beq, 5, 5, true },
    { "beq", i_beq, 5, 6, false },
    { "bne", i_bne, 5, 6, true },
    { "bne", i_bne, 5, 5, false },
    { "blt", i_blt, M1, 0, true },
    { "blt", i_blt, 0, M1, false },
    { "blt", i_blt, 7, 7, false },
    { "blt", i_blt, MIN32, MAX32, true },
    { "bge", i_bge, 0, M1, true },
    { "bge", i_bge, M1, 0, false },
    { "bge", i_bge, 7, 7, true },
    { "bltu", i_bltu, 0, M1, true },
    { "bltu", i_bltu, M1, 0, false },
    { "bltu", i_bltu, 7, 7, false },
    { "bgeu", i_bgeu, M1, 0, true },
    { "bgeu", i_bgeu, 0, M1, false },
    { "bgeu", i_bgeu, 7, 7, true },
};

/* x3 = 2 where the branch went, 1 where it fell through. */
static bool exec_branch(BOp op, uint32_t a, uint32_t b, bool backward)
{
    setup();
    if (backward) {
        emit(i_jal(ZERO, 16));              /* 0x00 */
        emit(i_addi(3, ZERO, 2));           /* 0x04: target */
        emit(I_EBREAK);
        emit(I_NOP);
        emit(op(1, 2, -12));                /* 0x10 */
        emit(i_addi(3, ZERO, 1));
        emit(I_EBREAK);
    } else {
        emit(op(1, 2, 12));                 /* 0x00 */
        emit(i_addi(3, ZERO, 1));
        emit(I_EBREAK);
        emit(i_addi(3, ZERO, 2));           /* 0x0c: target */
        emit(I_EBREAK);
    }
    t.core.x[1] = a;
    t.core.x[2] = b;
    run_to_ebreak();
    g_assert_cmpuint(t.core.insns, ==, backward ? 3 : 2);
    g_assert_cmpuint(t.core.x[3], >=, 1);
    return t.core.x[3] == 2;
}

static void test_branches(void)
{
    for (size_t i = 0; i < G_N_ELEMENTS(b_cases); i++) {
        const BCase *c = &b_cases[i];

        for (int back = 0; back < 2; back++) {
            if (exec_branch(c->op, c->a, c->b, back) != c->taken) {
                g_error("%s 0x%x, 0x%x %s: taken should be %d", c->name,
                        c->a, c->b, back ? "backward" : "forward", c->taken);
            }
        }
    }
}

static void test_jal(void)
{
    setup_size(SRAM_MAX);
    t.at = 0x000;
    emit(i_jal(RA, 0x100));
    emit(I_EBREAK);                         /* 0x004: the end */
    t.at = 0x100;
    emit(i_jal(T0, 0x30000));               /* to 0x30100 */
    t.at = 0x110;
    emit(i_jal(ZERO, -0x10c));              /* to 0x004 */
    t.at = 0x30100;
    emit(i_jal(T1, -0x2fff0));              /* to 0x110 */
    run_to_ebreak();
    g_assert_cmphex(t.core.halt_pc, ==, 0x004);
    g_assert_cmphex(t.core.x[RA], ==, 0x004);
    g_assert_cmphex(t.core.x[T0], ==, 0x104);
    g_assert_cmphex(t.core.x[T1], ==, 0x30104);
    g_assert_cmpuint(t.core.insns, ==, 4);
}

static void test_jalr(void)
{
    setup();
    li(A0, 0x101);                          /* 0x000 */
    emit(i_jalr(RA, A0, 0));                /* 0x008: bit 0 cleared */
    t.at = 0x100;
    li(A1, 0x210);
    emit(i_jalr(T0, A1, -0x10));            /* 0x108: to 0x200 */
    t.at = 0x200;
    li(RA, 0x300);
    emit(i_jalr(RA, RA, 1));                /* 0x208: rd == rs1 */
    t.at = 0x300;
    li(A2, 0x402);
    emit(i_jalr(A3, A2, 0));                /* 0x308: misaligned */
    run(1000, NULL);
    g_assert_cmphex(t.core.x[RA], ==, 0x20c);
    g_assert_cmphex(t.core.x[T0], ==, 0x10c);
    /* the jump retired and linked; fetching its target halted */
    g_assert_cmphex(t.core.x[A3], ==, 0x30c);
    g_assert_cmpint(t.core.halt, ==, RV32_HALT_FETCH);
    g_assert_cmphex(t.core.halt_pc, ==, 0x402);
    g_assert_cmphex(t.core.halt_addr, ==, 0x402);
    g_assert_cmpuint(t.core.insns, ==, 12);
}

static void test_x0(void)
{
    setup();
    put32(0x400, M1);
    emit(i_addi(ZERO, ZERO, 5));            /* 0x00 */
    emit(i_lui(ZERO, 0x12345000));
    emit(i_add(3, ZERO, ZERO));
    emit(i_lw(ZERO, ZERO, 0x400));
    emit(i_jal(ZERO, 8));                   /* 0x10 */
    emit(I_EBREAK);
    emit(i_addi(4, ZERO, 0));               /* 0x18 */
    emit(i_mul(ZERO, 4, 4));
    emit(i_ori(5, ZERO, 7));
    emit(i_sltiu(ZERO, ZERO, 1));
    emit(i_or(6, ZERO, ZERO));
    emit(I_EBREAK);
    t.core.x[0] = 0x1234;                   /* even if the caller sets it */
    t.core.x[3] = t.core.x[4] = t.core.x[6] = 0x5555;
    run_to_ebreak();
    g_assert_cmphex(t.core.x[0], ==, 0);
    g_assert_cmphex(t.core.x[3], ==, 0);
    g_assert_cmphex(t.core.x[4], ==, 0);
    g_assert_cmphex(t.core.x[5], ==, 7);
    g_assert_cmphex(t.core.x[6], ==, 0);
}

static void test_fence_nop(void)
{
    setup();
    emit(I_FENCE);
    emit(I_FENCE_I);
    emit(0x0330000fu);                      /* fence rw, rw */
    emit(0x8330000fu);                      /* fence.tso */
    emit(i_addi(3, ZERO, 9));
    emit(I_EBREAK);
    run_to_ebreak();
    g_assert_cmpuint(t.core.insns, ==, 5);
    g_assert_cmphex(t.core.x[3], ==, 9);
}

/* ---- programs ------------------------------------------------------ */

static void test_sum_loop(void)
{
    setup();
    emit(i_addi(A0, ZERO, 0));
    emit(i_addi(A1, ZERO, 1));
    emit(i_addi(A2, ZERO, 1001));
    emit(i_add(A0, A0, A1));                /* 0x0c */
    emit(i_addi(A1, A1, 1));
    emit(i_bne(A1, A2, -8));
    emit(I_EBREAK);
    run_to_ebreak();
    g_assert_cmpuint(t.core.x[A0], ==, 500500);
    g_assert_cmpuint(t.core.insns, ==, 3 + 3 * 1000);
}

static void test_memcpy(void)
{
    GRand *r = g_rand_new_with_seed(7);

    setup();
    for (int i = 0; i < 4096; i++) {
        t.mem[0x4000 + i] = g_rand_int(r);
    }
    g_rand_free(r);
    /* words: 0x4000 -> 0x8000, 4096 bytes */
    li(A0, 0x4000);
    li(A1, 0x8000);
    li(A2, 0x5000);
    emit(i_lw(T0, A0, 0));                  /* 0x18 */
    emit(i_sw(T0, A1, 0));
    emit(i_addi(A0, A0, 4));
    emit(i_addi(A1, A1, 4));
    emit(i_bltu(A0, A2, -16));
    /* bytes, misaligned on both sides: 0x4001 -> 0x9003, 13 bytes */
    li(A0, 0x4001);
    li(A1, 0x9003);
    emit(i_addi(A2, ZERO, 13));
    emit(i_lbu(T0, A0, 0));
    emit(i_sb(T0, A1, 0));
    emit(i_addi(A0, A0, 1));
    emit(i_addi(A1, A1, 1));
    emit(i_addi(A2, A2, -1));
    emit(i_bne(A2, ZERO, -20));
    emit(I_EBREAK);
    run_to_ebreak();
    g_assert_cmpmem(t.mem + 0x8000, 4096, t.mem + 0x4000, 4096);
    g_assert_cmpmem(t.mem + 0x9003, 13, t.mem + 0x4001, 13);
    g_assert_cmphex(t.mem[0x9002], ==, 0);
    g_assert_cmphex(t.mem[0x9010], ==, 0);
}

static uint32_t host_crc32(const uint8_t *p, size_t len)
{
    uint32_t crc = M1;

    while (len--) {
        crc ^= *p++;
        for (int k = 0; k < 8; k++) {
            crc = crc & 1 ? (crc >> 1) ^ 0xedb88320u : crc >> 1;
        }
    }
    return ~crc;
}

/* Bitwise CRC-32 of len bytes at buf into a2, then ebreak; at 0. */
static void emit_crc32(uint32_t buf, uint32_t len)
{
    uint32_t loop, bit;

    t.at = 0;
    li(A0, buf);
    li(A1, len);
    li(A2, M1);
    li(T2, 0xedb88320u);
    loop = emit(0);                         /* beq a1, x0, done */
    emit(i_lbu(T0, A0, 0));
    emit(i_xor(A2, A2, T0));
    emit(i_addi(T1, ZERO, 8));
    bit = emit(i_andi(T0, A2, 1));
    emit(i_srli(A2, A2, 1));
    emit(i_beq(T0, ZERO, 8));
    emit(i_xor(A2, A2, T2));
    emit(i_addi(T1, T1, -1));
    emit(i_bne(T1, ZERO, bit - t.at));
    emit(i_addi(A0, A0, 1));
    emit(i_addi(A1, A1, -1));
    emit(i_jal(ZERO, loop - t.at));
    put32(loop, i_beq(A1, ZERO, t.at - loop));
    emit(i_xori(A2, A2, -1));
    emit(I_EBREAK);
}

static void test_crc32(void)
{
    GRand *r = g_rand_new_with_seed(32);

    setup();
    memcpy(t.mem + 0x1000, "123456789", 9);
    emit_crc32(0x1000, 9);
    run_to_ebreak();
    g_assert_cmphex(t.core.x[A2], ==, 0xcbf43926u);

    setup();
    for (int i = 0; i < 4096; i++) {
        t.mem[0x2000 + i] = g_rand_int(r);
    }
    g_rand_free(r);
    emit_crc32(0x2000, 4096);
    run_to_ebreak();
    g_assert_cmphex(t.core.x[A2], ==, host_crc32(t.mem + 0x2000, 4096));
}

/* ---- the I/O window ------------------------------------------------ */

static void expect_io(unsigned i, bool write, uint32_t offset, unsigned size,
                      uint32_t val, uint32_t pc)
{
    const IoAccess *a = &t.log[i];

    g_assert_cmpuint(i, <, t.nlog);
    g_assert_cmpint(a->write, ==, write);
    g_assert_cmphex(a->offset, ==, offset);
    g_assert_cmpuint(a->size, ==, size);
    if (write) {
        g_assert_cmphex(a->val, ==, val);
    }
    /* the callback sees the accessing instruction and the count before */
    g_assert_cmphex(a->pc, ==, pc);
    g_assert_cmpuint(a->insns, ==, pc / 4);
}

static void test_mmio_routing(void)
{
    setup();
    t.io_in[1] = 0x89abcdefu;
    t.io_in[0x7f] = 0x80017f80u;
    li(A1, 0x12345678);                     /* 0x00 */
    li(A0, 0xffffff00u);                    /* 0x08 */
    emit(i_sw(A1, ZERO, -512));             /* 0x10 */
    emit(i_sh(A1, ZERO, -506));
    emit(i_sb(A1, ZERO, -1));
    emit(i_lw(5, ZERO, -508));
    emit(i_lb(6, ZERO, -508));              /* 0x20 */
    emit(i_lbu(7, ZERO, -505));
    emit(i_lh(8, ZERO, -506));
    emit(i_lhu(9, ZERO, -508));
    emit(i_lw(14, A0, 0xfc));               /* 0x30: 0xfffffffc */
    emit(i_lh(15, A0, 0xfe));               /* 0xfffffffe */
    emit(i_lbu(16, A0, 0xff));              /* 0xffffffff */
    emit(i_lbu(17, A0, 0xfc));
    emit(I_EBREAK);                         /* 0x40 */
    run_to_ebreak();
    g_assert_cmpuint(t.nlog, ==, 12);
    expect_io(0, true, 0x000, 4, 0x12345678u, 0x10);
    expect_io(1, true, 0x006, 2, 0x5678, 0x14);
    expect_io(2, true, 0x1ff, 1, 0x78, 0x18);
    expect_io(3, false, 0x004, 4, 0, 0x1c);
    expect_io(4, false, 0x004, 1, 0, 0x20);
    expect_io(5, false, 0x007, 1, 0, 0x24);
    expect_io(6, false, 0x006, 2, 0, 0x28);
    expect_io(7, false, 0x004, 2, 0, 0x2c);
    expect_io(8, false, 0x1fc, 4, 0, 0x30);
    expect_io(9, false, 0x1fe, 2, 0, 0x34);
    expect_io(10, false, 0x1ff, 1, 0, 0x38);
    expect_io(11, false, 0x1fc, 1, 0, 0x3c);
    g_assert_cmphex(t.core.x[5], ==, 0x89abcdefu);
    g_assert_cmphex(t.core.x[6], ==, 0xffffffefu);
    g_assert_cmphex(t.core.x[7], ==, 0x89);
    g_assert_cmphex(t.core.x[8], ==, 0xffff89abu);
    g_assert_cmphex(t.core.x[9], ==, 0xcdef);
    g_assert_cmphex(t.core.x[14], ==, 0x80017f80u);
    g_assert_cmphex(t.core.x[15], ==, 0xffff8001u);
    g_assert_cmphex(t.core.x[16], ==, 0x80);
    g_assert_cmphex(t.core.x[17], ==, 0x80);
    g_assert_cmphex(t.io_out[0], ==, 0x78);
    g_assert_cmphex(t.io_out[3], ==, 0x12);
    g_assert_cmphex(t.io_out[6], ==, 0x78);
    g_assert_cmphex(t.io_out[7], ==, 0x56);
    g_assert_cmphex(t.io_out[0x1ff], ==, 0x78);
}

/* One load or store at 0x10, after li(A0, base) and li(A1, pattern). */
static void access_prog(uint32_t insn, uint32_t base)
{
    setup();
    li(A0, base);
    li(A1, 0xa5a5a5a5u);
    emit(insn);                             /* 0x10 */
    emit(I_EBREAK);
    t.core.x[3] = 0x5555;
}

/* It halts with cause at 0x10, its rd (x3) untouched. */
static void access_halts(Rv32Halt cause, uint32_t addr)
{
    expect_halt(cause, 0x10, addr);
    g_assert_cmphex(t.core.x[3], ==, 0x5555);
    g_assert_cmpuint(t.core.insns, ==, 4);
}

static void access_case(uint32_t insn, uint32_t base, Rv32Halt cause,
                        uint32_t addr)
{
    access_prog(insn, base);
    if (cause == RV32_HALT_NONE) {
        run_to_ebreak();
    } else {
        access_halts(cause, addr);
    }
}

static void test_mmio_fault(void)
{
    access_prog(i_lw(3, A0, 0), 0xfffffe04u);
    t.io_refuse = true;
    access_halts(RV32_HALT_LOAD, 0xfffffe04u);
    g_assert_cmpuint(t.nlog, ==, 1);

    access_prog(i_sh(A1, A0, 2), 0xfffffe04u);
    t.io_refuse = true;
    access_halts(RV32_HALT_STORE, 0xfffffe06u);
    g_assert_cmpuint(t.nlog, ==, 1);
    g_assert_cmphex(t.log[0].val, ==, 0xa5a5);

    access_prog(i_lbu(3, A0, 0), 0xffffffffu);
    t.bus.io_read = NULL;
    access_halts(RV32_HALT_LOAD, 0xffffffffu);

    access_prog(i_sw(A1, A0, 0), 0xfffffe00u);
    t.bus.io_write = NULL;
    access_halts(RV32_HALT_STORE, 0xfffffe00u);

    /* misaligned in the window: the callback never sees it */
    access_case(i_lw(3, A0, 0), 0xfffffe02u, RV32_HALT_MISALIGNED,
                0xfffffe02u);
    access_case(i_sh(A1, A0, 0), 0xffffff01u, RV32_HALT_MISALIGNED,
                0xffffff01u);
    g_assert_cmpuint(t.nlog, ==, 0);
}

/* ---- halts --------------------------------------------------------- */

static void test_halt_load_store(void)
{
    const uint32_t end = SRAM_SIZE;

    /* the last bytes of SRAM are fine */
    access_case(i_lw(3, A0, -4), end, RV32_HALT_NONE, 0);
    access_case(i_lh(3, A0, -2), end, RV32_HALT_NONE, 0);
    access_case(i_lbu(3, A0, -1), end, RV32_HALT_NONE, 0);
    access_case(i_sw(A1, A0, -4), end, RV32_HALT_NONE, 0);
    g_assert_cmphex(get32(end - 4), ==, 0xa5a5a5a5u);
    access_case(i_sb(A1, A0, -1), end, RV32_HALT_NONE, 0);
    /* one past is not */
    access_case(i_lw(3, A0, 0), end, RV32_HALT_LOAD, end);
    access_case(i_lb(3, A0, 0), end, RV32_HALT_LOAD, end);
    access_case(i_lhu(3, A0, 2), end, RV32_HALT_LOAD, end + 2);
    access_case(i_sw(A1, A0, 0), end, RV32_HALT_STORE, end);
    access_case(i_sb(A1, A0, 0), end, RV32_HALT_STORE, end);
    access_case(i_sh(A1, A0, 0), end, RV32_HALT_STORE, end);
    access_case(i_lw(3, A0, 0), 0x80000000u, RV32_HALT_LOAD, 0x80000000u);
    access_case(i_sb(A1, A0, 0), 0x80000000u, RV32_HALT_STORE, 0x80000000u);
    /* just below the I/O window */
    access_case(i_lw(3, A0, 0), 0xfffffdfcu, RV32_HALT_LOAD, 0xfffffdfcu);
    access_case(i_sb(A1, A0, 0), 0xfffffdffu, RV32_HALT_STORE, 0xfffffdffu);
    /* a load into x0 still accesses memory */
    access_case(i_lw(ZERO, A0, 0), end, RV32_HALT_LOAD, end);
    /* check_guard() in run() saw every store stay inside SRAM */
}

static void test_halt_misaligned(void)
{
    const uint32_t end = SRAM_SIZE;

    access_case(i_lw(3, A0, 2), 0x1000, RV32_HALT_MISALIGNED, 0x1002);
    access_case(i_lw(3, A0, 1), 0x1000, RV32_HALT_MISALIGNED, 0x1001);
    access_case(i_lh(3, A0, 1), 0x1000, RV32_HALT_MISALIGNED, 0x1001);
    access_case(i_lhu(3, A0, 3), 0x1000, RV32_HALT_MISALIGNED, 0x1003);
    access_case(i_sw(A1, A0, 1), 0x1000, RV32_HALT_MISALIGNED, 0x1001);
    access_case(i_sh(A1, A0, 3), 0x1000, RV32_HALT_MISALIGNED, 0x1003);
    g_assert_cmphex(get32(0x1000), ==, 0);
    /* straddling the end of SRAM */
    access_case(i_lw(3, A0, -2), end, RV32_HALT_MISALIGNED, end - 2);
    access_case(i_sw(A1, A0, -1), end, RV32_HALT_MISALIGNED, end - 1);
    /* wrapping past 0xffffffff */
    access_case(i_lh(3, A0, 0), M1, RV32_HALT_MISALIGNED, M1);
    access_case(i_lw(3, A0, 0), 0xfffffffeu, RV32_HALT_MISALIGNED,
                0xfffffffeu);
    access_case(i_sw(A1, A0, 0), 0xfffffffdu, RV32_HALT_MISALIGNED,
                0xfffffffdu);
    g_assert_cmphex(get32(0), !=, 0xa5a5a5a5u);
}

static void test_halt_fetch(void)
{
    /* running off the end of SRAM */
    setup();
    t.at = SRAM_SIZE - 8;
    rv32_reset(&t.core, SRAM_SIZE - 8);
    emit(I_NOP);
    emit(I_NOP);
    expect_halt(RV32_HALT_FETCH, SRAM_SIZE, SRAM_SIZE);
    g_assert_cmpuint(t.core.insns, ==, 2);

    /* a start address outside SRAM, or misaligned */
    setup();
    rv32_reset(&t.core, 0x100000);
    expect_halt(RV32_HALT_FETCH, 0x100000, 0x100000);
    setup();
    rv32_reset(&t.core, 2);
    expect_halt(RV32_HALT_FETCH, 2, 2);

    /* jal backwards past 0 wraps to the top */
    setup();
    t.at = 0x10;
    rv32_reset(&t.core, 0x10);
    emit(i_jal(RA, -0x20));
    expect_halt(RV32_HALT_FETCH, 0xfffffff0u, 0xfffffff0u);
    g_assert_cmphex(t.core.x[RA], ==, 0x14);

    /* the I/O window is not executable */
    setup();
    li(A0, RV32_IO_BASE);
    emit(i_jalr(ZERO, A0, 0));
    expect_halt(RV32_HALT_FETCH, RV32_IO_BASE, RV32_IO_BASE);
    g_assert_cmpuint(t.nlog, ==, 0);

    /* an SRAM size that is not a power of two runs nothing */
    setup();
    emit(I_NOP);
    t.bus.sram_size = 3000;
    expect_halt(RV32_HALT_FETCH, 0, 0);
    g_assert_cmpuint(t.core.insns, ==, 0);
}

static void test_halt_illegal(void)
{
    static const uint32_t bad[] = {
        0x00000000u, 0xffffffffu,
        0x00004501u,                        /* c.li a0, 0 (compressed) */
        0x00000513u & ~3u,                  /* addi with RVC low bits */
        0x30009073u,                        /* csrw mstatus, x1 */
        0xc00022f3u,                        /* rdcycle t0 */
        0x3000d073u,                        /* csrwi mstatus, 1 */
        0x30200073u,                        /* mret */
        0x10200073u,                        /* sret */
        0x12000073u,                        /* sfence.vma */
        0x105000f3u,                        /* wfi with rd != 0 */
        0x00008073u,                        /* ecall with rs1 != 0 */
        0x0000b183u,                        /* ld */
        0x0000e183u,                        /* lwu */
        0x0000f183u,                        /* load funct3 7 */
        0x0020b023u,                        /* sd */
        0x0020c023u,                        /* store funct3 4 */
        0x02009193u,                        /* slli by 32 (RV64) */
        0x0200d193u,                        /* srli by 32 */
        0x4200d193u,                        /* srai by 32 */
        0x0400d193u,                        /* srli, funct7 0x02 */
        0x402091b3u,                        /* sll with funct7 0x20 */
        0x802081b3u,                        /* add with funct7 0x40 */
        0x042081b3u,                        /* funct7 0x02 */
        0x000091e7u,                        /* jalr funct3 1 */
        0x0020a063u,                        /* branch funct3 2 */
        0x0020b063u,                        /* branch funct3 3 */
        0x0000200fu,                        /* misc-mem funct3 2 */
        0x0010819bu,                        /* addiw (RV64) */
        0x002081bbu,                        /* addw */
        0x1000a2afu,                        /* lr.w */
        0x0000a187u,                        /* flw */
        0x0020a027u,                        /* fsw */
        0x00208053u,                        /* fadd.s */
    };

    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        setup();
        emit(I_NOP);
        emit(bad[i]);
        emit(I_EBREAK);
        t.core.x[3] = 0x5555;
        g_assert_cmpint(run(100, NULL), ==, RV32_STOP_HALT);
        if (t.core.halt != RV32_HALT_ILLEGAL) {
            g_error("0x%08x: halt %s, want illegal", bad[i],
                    rv32_halt_name(t.core.halt));
        }
        g_assert_cmphex(t.core.halt_pc, ==, 4);
        g_assert_cmphex(t.core.pc, ==, 4);
        g_assert_cmphex(t.core.halt_addr, ==, 0);
        g_assert_cmpuint(t.core.insns, ==, 1);
        g_assert_cmphex(t.core.x[3], ==, 0x5555);
    }
}

static void test_halt_ebreak_ecall(void)
{
    uint64_t n;

    setup();
    put32(0x100, 0x1234);
    emit(i_lw(3, ZERO, 0x100));
    emit(I_ECALL);
    g_assert_cmpint(run(100, &n), ==, RV32_STOP_HALT);
    g_assert_cmpint(t.core.halt, ==, RV32_HALT_ECALL);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmphex(t.core.halt_pc, ==, 4);
    g_assert_cmphex(t.core.pc, ==, 4);
    g_assert_cmphex(t.core.halt_addr, ==, 0);   /* not the lw's 0x100 */

    setup();
    emit(I_NOP);
    emit(I_NOP);
    emit(I_EBREAK);
    g_assert_cmpint(run(100, &n), ==, RV32_STOP_HALT);
    g_assert_cmpint(t.core.halt, ==, RV32_HALT_EBREAK);
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmphex(t.core.halt_pc, ==, 8);
    g_assert_cmpstr(rv32_halt_name(RV32_HALT_EBREAK), ==, "ebreak");
    g_assert_cmpstr(rv32_halt_name(RV32_HALT_NONE), ==, "none");
}

static void test_halt_sticky(void)
{
    uint64_t n = 99;

    setup();
    emit(i_addi(3, 3, 1));
    emit(I_EBREAK);
    run_to_ebreak();
    g_assert_cmpuint(t.core.insns, ==, 1);
    put32(4, I_NOP);                        /* fixing the code is not enough */
    for (int i = 0; i < 3; i++) {
        g_assert_cmpint(run(100, &n), ==, RV32_STOP_HALT);
        g_assert_cmpuint(n, ==, 0);
        g_assert_cmpint(t.core.halt, ==, RV32_HALT_EBREAK);
        g_assert_cmphex(t.core.pc, ==, 4);
        g_assert_cmpuint(t.core.insns, ==, 1);
        g_assert_cmpuint(t.core.x[3], ==, 1);
    }
    g_assert_cmpint(rv32_run(&t.core, &t.bus, 0, NULL), ==, RV32_STOP_HALT);

    rv32_reset(&t.core, 0);
    g_assert_cmpint(t.core.halt, ==, RV32_HALT_NONE);
    g_assert_cmpuint(t.core.x[3], ==, 0);
    g_assert_cmpuint(t.core.insns, ==, 0);
    g_assert_cmpint(run(2, &n), ==, RV32_STOP_BUDGET);
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmpuint(t.core.x[3], ==, 1);
}

/* ---- budgets and wfi ----------------------------------------------- */

static void test_budget_resume(void)
{
    static const uint64_t budgets[] = { 1, 2, 7, 1000, 3002 };
    uint32_t want_regs[32];
    uint64_t want_insns, n;

    setup();
    g_assert_cmpint(run(0, &n), ==, RV32_STOP_BUDGET);
    g_assert_cmpuint(n, ==, 0);
    g_assert_cmphex(t.core.pc, ==, 0);

    test_sum_loop();
    memcpy(want_regs, t.core.x, sizeof(want_regs));
    want_insns = t.core.insns;

    for (size_t i = 0; i < G_N_ELEMENTS(budgets); i++) {
        uint64_t total = 0, calls = 0;
        Rv32Stop s;

        rv32_reset(&t.core, 0);
        while ((s = run(budgets[i], &n)) == RV32_STOP_BUDGET) {
            g_assert_cmpuint(n, ==, budgets[i]);
            total += n;
            calls++;
            g_assert_cmpuint(t.core.insns, ==, total);
        }
        total += n;
        g_assert_cmpint(s, ==, RV32_STOP_HALT);
        g_assert_cmpint(t.core.halt, ==, RV32_HALT_EBREAK);
        g_assert_cmpuint(total, ==, want_insns);
        g_assert_cmpuint(t.core.insns, ==, want_insns);
        g_assert_cmpmem(t.core.x, sizeof(want_regs), want_regs,
                        sizeof(want_regs));
        g_assert_cmpuint(calls, ==, want_insns / budgets[i]);
    }
}

static void test_wfi(void)
{
    uint64_t n;

    setup();
    emit(i_addi(3, ZERO, 1));
    emit(I_WFI);
    emit(i_addi(3, 3, 1));                  /* 0x08 */
    emit(I_WFI);
    emit(I_EBREAK);                         /* 0x10 */
    g_assert_cmpint(run(2, &n), ==, RV32_STOP_WFI);   /* within budget */
    g_assert_cmpuint(n, ==, 2);
    g_assert_cmphex(t.core.pc, ==, 0x08);
    g_assert_cmpuint(t.core.x[3], ==, 1);
    g_assert_cmpuint(t.core.insns, ==, 2);
    g_assert_cmpint(t.core.halt, ==, RV32_HALT_NONE);

    g_assert_cmpint(run(1, &n), ==, RV32_STOP_BUDGET);
    g_assert_cmpint(run(100, &n), ==, RV32_STOP_WFI);
    g_assert_cmpuint(n, ==, 1);
    g_assert_cmphex(t.core.pc, ==, 0x10);
    g_assert_cmpuint(t.core.x[3], ==, 2);
    g_assert_cmpuint(t.core.insns, ==, 4);
    expect_halt(RV32_HALT_EBREAK, 0x10, 0);
}

/* A random instruction, mostly a valid one. */
static uint32_t random_insn(GRand *r)
{
    static const uint32_t opcodes[] = {
        0x03, 0x0f, 0x13, 0x17, 0x23, 0x33, 0x37, 0x63, 0x67, 0x6f, 0x73,
    };
    static const uint32_t f7[] = { 0x00, 0x20, 0x01 };
    static const uint32_t sys[] = { I_EBREAK, I_ECALL, I_WFI };
    uint32_t w = g_rand_int(r), op, f3 = (w >> 12) & 7;

    if (g_rand_int_range(r, 0, 10) == 0) {
        return w;
    }
    op = opcodes[g_rand_int_range(r, 0, G_N_ELEMENTS(opcodes))];
    w = (w & ~0x7fu) | op;
    switch (op) {
    case 0x03:
        f3 = f3 == 3 || f3 > 5 ? 2 : f3;
        break;
    case 0x23:
        f3 %= 3;
        break;
    case 0x33:
        w = (w & 0x01ffffffu) | f7[g_rand_int_range(r, 0, 3)] << 25;
        break;
    case 0x63:
        f3 = f3 == 2 || f3 == 3 ? 0 : f3;
        break;
    case 0x73:
        return sys[g_rand_int_range(r, 0, 3)];
    }
    return (w & ~0x7000u) | f3 << 12;
}

/*
 * Random code and registers: whatever the guest runs, the host survives,
 * every access stays in SRAM or the window (ASan and the guard bytes watch)
 * and a halt says where and why.
 */
static void test_random_code(void)
{
    GRand *r = g_rand_new_with_seed(99);
    unsigned halts[16] = { 0 };

    for (int round = 0; round < 300; round++) {
        setup_size(round % 2 ? SRAM_SIZE : 4096);
        for (uint32_t a = 0; a < t.size; a += 4) {
            put32(a, random_insn(r));
        }
        for (int i = 1; i < 32; i++) {
            t.core.x[i] = g_rand_boolean(r) ? edgy(r) :
                          (uint32_t)g_rand_int_range(r, 0, t.size);
        }
        t.core.pc = g_rand_int_range(r, 0, t.size) & ~3u;
        t.io_refuse = g_rand_int_range(r, 0, 4) == 0;
        for (int slice = 0; slice < 4; slice++) {
            Rv32Stop s = run(2500, NULL);

            g_assert_cmphex(t.core.x[0], ==, 0);
            if (s == RV32_STOP_HALT) {
                Rv32Halt h = t.core.halt;

                g_assert_cmpint(h, >, RV32_HALT_NONE);
                g_assert_cmpint(h, <=, RV32_HALT_ECALL);
                halts[h & 15]++;
                g_assert_cmphex(t.core.pc, ==, t.core.halt_pc);
                if (h != RV32_HALT_FETCH) {
                    g_assert_cmpuint(t.core.halt_pc, <, t.size);
                }
                break;
            }
            g_assert_cmpint(t.core.halt, ==, RV32_HALT_NONE);
        }
    }
    g_rand_free(r);
    /* the mix reaches every kind of halt */
    for (int h = RV32_HALT_FETCH; h <= RV32_HALT_ECALL; h++) {
        g_test_message("%s: %u", rv32_halt_name(h), halts[h]);
        g_assert_cmpuint(halts[h], >, 0);
    }
}

/* ---- gcc-built firmware -------------------------------------------- */

#define FW_SRAM     (256 * 1024)
#define FW_BUF      0x10000u
#define FW_LEN      4096u
#define FW_DIV      0x20000u
#define FW_NDIV     64u
#define FW_DIV_OUT  0x21000u
#define FW_FIB      20u

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;

    return (x > y) - (x < y);
}

static uint32_t host_fib(uint32_t n)
{
    uint32_t a = 0, b = 1;

    while (n--) {
        uint32_t c = a + b;

        a = b;
        b = c;
    }
    return a;
}

static void put64(uint32_t addr, uint64_t v)
{
    put32(addr, v);
    put32(addr + 4, v >> 32);
}

static uint64_t get64(uint32_t addr)
{
    return get32(addr) | (uint64_t)get32(addr + 4) << 32;
}

static void fw_setup(const uint8_t *fw, size_t len)
{
    static const uint64_t edge[][2] = {
        { UINT64_MAX, 1 }, { UINT64_MAX, UINT64_MAX }, { 1ull << 63, 3 },
        { 1, UINT64_MAX }, { 0, 5 }, { 0x123456789abcdefull, 0x10000 },
        { 0xfedcba9876543210ull, 0x100000001ull }, { 1000, 7 },
    };
    GRand *r = g_rand_new_with_seed(64);

    setup_size(FW_SRAM);
    g_assert_cmpuint(len, <, FW_BUF);
    memcpy(t.mem, fw, len);
    for (uint32_t i = 0; i < FW_LEN; i++) {
        t.mem[FW_BUF + i] = g_rand_int(r);
    }
    for (uint32_t i = 0; i < FW_NDIV; i++) {
        uint64_t n, d;

        if (i < G_N_ELEMENTS(edge)) {
            n = edge[i][0];
            d = edge[i][1];
        } else {
            n = (uint64_t)g_rand_int(r) << 32 | g_rand_int(r);
            d = (uint64_t)g_rand_int(r) << 32 | g_rand_int(r);
            d >>= g_rand_int_range(r, 0, 64);   /* every divisor size */
            d += d == 0;
        }
        put64(FW_DIV + 32 * i, n);
        put64(FW_DIV + 32 * i + 8, d);
        /* signed: never INT64_MIN / -1 */
        if ((int64_t)n == INT64_MIN && (int64_t)d == -1) {
            d = 1;
        }
        put64(FW_DIV + 32 * i + 16, n);
        put64(FW_DIV + 32 * i + 24, d);
    }
    g_rand_free(r);
    t.io_in[FW_IN_SRAM_SIZE] = FW_SRAM;
    t.io_in[FW_IN_BUF] = FW_BUF;
    t.io_in[FW_IN_LEN] = FW_LEN;
    t.io_in[FW_IN_FIB] = FW_FIB;
    t.io_in[FW_IN_DIV] = FW_DIV;
    t.io_in[FW_IN_NDIV] = FW_NDIV;
    t.io_in[FW_IN_DIV_OUT] = FW_DIV_OUT;
}

static uint32_t fw_out(unsigned i)
{
    uint32_t v;

    memcpy(&v, t.io_out + 0x100 + 4 * i, 4);
    return GUINT32_FROM_LE(v);
}

/* Runs to the final wfi in slices; returns the instructions executed. */
static uint64_t fw_run(uint64_t slice)
{
    uint64_t total = 0, n;
    Rv32Stop s;

    do {
        s = run(slice, &n);
        total += n;
        g_assert_cmpuint(total, <, 100000000);
    } while (s == RV32_STOP_BUDGET);
    if (s == RV32_STOP_HALT) {
        g_error("firmware halted: %s at pc 0x%x addr 0x%x",
                rv32_halt_name(t.core.halt), t.core.halt_pc,
                t.core.halt_addr);
    }
    g_assert_cmpuint(t.core.insns, ==, total);
    return total;
}

static void fw_check(void)
{
    int32_t sorted[FW_SORT_MAX];
    uint32_t sum = 0;

    g_assert_cmphex(fw_out(FW_OUT_DONE), ==, FW_DONE_MAGIC);
    g_assert_cmphex(fw_out(FW_OUT_CRC_BITWISE), ==,
                    host_crc32(t.mem + FW_BUF, FW_LEN));
    g_assert_cmphex(fw_out(FW_OUT_CRC_TABLE), ==,
                    host_crc32(t.mem + FW_BUF, FW_LEN));
    g_assert_cmpuint(fw_out(FW_OUT_FIB), ==, host_fib(FW_FIB));
    for (unsigned i = 0; i < FW_SORT_MAX; i++) {
        sorted[i] = get32(FW_BUF + 4 * i);
    }
    qsort(sorted, FW_SORT_MAX, sizeof(sorted[0]), cmp_i32);
    for (unsigned i = 0; i < FW_SORT_MAX; i++) {
        sum = sum * 31 + (uint32_t)sorted[i];
    }
    g_assert_cmphex(fw_out(FW_OUT_SORT), ==, sum);
    for (uint32_t i = 0; i < FW_NDIV; i++) {
        uint32_t in = FW_DIV + 32 * i, out = FW_DIV_OUT + 40 * i;
        uint64_t un = get64(in), ud = get64(in + 8);
        int64_t sn = get64(in + 16), sd = get64(in + 24);

        g_assert_cmphex(get64(out), ==, un / ud);
        g_assert_cmphex(get64(out + 8), ==, un % ud);
        g_assert_cmphex(get64(out + 16), ==, (uint64_t)(sn / sd));
        g_assert_cmphex(get64(out + 24), ==, (uint64_t)(sn % sd));
        g_assert_cmphex(get64(out + 32), ==, un * ud);
    }
}

/* The Makefile passes the path when the riscv64 toolchain is there. */
#ifdef RV32_FW_BIN
static const char *const fw_path = RV32_FW_BIN;
#else
static const char *const fw_path;
#endif

/* The firmware image, or NULL when it was not built. */
static const uint8_t *fw_image(gsize *len)
{
    static gchar *data;
    static gsize size;
    GError *err = NULL;

    if (!data && fw_path &&
        !g_file_get_contents(fw_path, &data, &size, &err)) {
        g_error("%s", err->message);
    }
    *len = size;
    return (const uint8_t *)data;
}

static void test_firmware(void)
{
    gsize len;
    const uint8_t *fw = fw_image(&len);
    uint64_t whole, sliced;
    uint8_t out[RV32_IO_SIZE];

    if (!fw) {
        g_test_skip("riscv64-unknown-elf-gcc missing at build time "
                    "(make deps)");
        return;
    }
    fw_setup(fw, len);
    whole = fw_run(1ull << 40);
    fw_check();
    g_test_message("firmware: %zu bytes, %" G_GUINT64_FORMAT " instructions",
                   (size_t)len, whole);
    memcpy(out, t.io_out, sizeof(out));

    /* again in slices of 7, as QEMU would run it: the same everything */
    fw_setup(fw, len);
    sliced = fw_run(7);
    fw_check();
    g_assert_cmpuint(sliced, ==, whole);
    g_assert_cmpmem(t.io_out, sizeof(out), out, sizeof(out));
}

/* ---- throughput: -m perf only, a figure for benches, no check ------- */

/* The best of many runs (others share this machine), for 0.2 s or more. */
static double mips(uint64_t slice, uint64_t *insns)
{
    gint64 start = g_get_monotonic_time(), t0, t1;
    double best = 0;

    *insns = 0;
    do {
        uint64_t n;

        rv32_reset(&t.core, 0);
        t0 = g_get_monotonic_time();
        n = fw_run(slice);
        t1 = g_get_monotonic_time();
        best = MAX(best, (double)n / MAX(t1 - t0, 1));
        *insns += n;
    } while (t1 - start < 200000);
    return best;
}

static void test_throughput(void)
{
    const uint8_t *fw;
    gsize len;
    uint64_t n1, n2;
    double m1, m2;

    setup();
    for (int i = 0; i < 16384; i++) {
        t.mem[0x8000 + i] = i * 7;
    }
    emit_crc32(0x8000, 16384);
    put32(t.at - 4, I_WFI);                 /* fw_run() stops at wfi */
    m1 = mips(1ull << 40, &n1);
    m2 = mips(10000, &n2);
    g_test_maximized_result(m1, "rv32 crc32 loop: %.0f MIPS unsliced (best "
                            "of runs, %" G_GUINT64_FORMAT " instructions in "
                            "all)", m1, n1);
    g_test_maximized_result(m2, "rv32 crc32 loop: %.0f MIPS in slices of "
                            "10000 (best of runs, %" G_GUINT64_FORMAT
                            " instructions in all)", m2, n2);
    fw = fw_image(&len);
    if (fw) {
        fw_setup(fw, len);
        m1 = mips(10000, &n1);
        g_test_maximized_result(m1, "rv32 gcc firmware: %.0f MIPS in slices "
                                "of 10000 (best of runs, %" G_GUINT64_FORMAT
                                " instructions in all)", m1, n1);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/rv32/alu/reg", test_reg_ops);
    g_test_add_func("/rv32/alu/imm", test_imm_ops);
    g_test_add_func("/rv32/alu/random-vs-reference", test_random_vs_reference);
    g_test_add_func("/rv32/lui-auipc", test_lui_auipc);
    g_test_add_func("/rv32/li", test_li);
    g_test_add_func("/rv32/load/sign-extension", test_load_sign_extension);
    g_test_add_func("/rv32/store/widths", test_store_widths);
    g_test_add_func("/rv32/address-wrap", test_address_wrap);
    g_test_add_func("/rv32/branches", test_branches);
    g_test_add_func("/rv32/jal", test_jal);
    g_test_add_func("/rv32/jalr", test_jalr);
    g_test_add_func("/rv32/x0", test_x0);
    g_test_add_func("/rv32/fence-nop", test_fence_nop);
    g_test_add_func("/rv32/program/sum", test_sum_loop);
    g_test_add_func("/rv32/program/memcpy", test_memcpy);
    g_test_add_func("/rv32/program/crc32", test_crc32);
    g_test_add_func("/rv32/mmio/routing", test_mmio_routing);
    g_test_add_func("/rv32/mmio/fault", test_mmio_fault);
    g_test_add_func("/rv32/halt/load-store", test_halt_load_store);
    g_test_add_func("/rv32/halt/misaligned", test_halt_misaligned);
    g_test_add_func("/rv32/halt/fetch", test_halt_fetch);
    g_test_add_func("/rv32/halt/illegal", test_halt_illegal);
    g_test_add_func("/rv32/halt/ebreak-ecall", test_halt_ebreak_ecall);
    g_test_add_func("/rv32/halt/sticky", test_halt_sticky);
    g_test_add_func("/rv32/budget-resume", test_budget_resume);
    g_test_add_func("/rv32/wfi", test_wfi);
    g_test_add_func("/rv32/random-code", test_random_code);
    g_test_add_func("/rv32/firmware", test_firmware);
    /* a measurement, not a check: only in GLib's perf mode (-m perf) */
    if (g_test_perf()) {
        g_test_add_func("/rv32/perf/throughput", test_throughput);
    }
    return g_test_run();
}
