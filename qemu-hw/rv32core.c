/*
 * RV32IM interpreter: the LANai-style card's on-board processor
 *
 * Threaded dispatch (every handler ends with its own fetch and indirect
 * jump, which the host predicts far better than one shared switch), the pc
 * and the budget in locals, fetch and SRAM loads/stores inline.  Nothing is
 * decoded ahead or cached: the host may write SRAM between two runs, and an
 * I/O callback may write it (DMA) in the middle of one.
 *
 * Misaligned loads and stores halt the core (RV32_HALT_MISALIGNED) instead
 * of being emulated: firmware built by gcc never issues them, and a halt
 * finds the bug at once.  Because of that an access never crosses the end
 * of SRAM or wraps past 0xFFFFFFFF: aligned inside a power-of-two region
 * means wholly inside it.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <string.h>

#include "rv32core.h"
#include "vcluster/le.h"

#define RV32_LIKELY(e) __builtin_expect(!!(e), 1)
#define RV32_UNLIKELY(e) __builtin_expect(!!(e), 0)

#define INSN_ECALL  0x00000073u
#define INSN_EBREAK 0x00100073u
#define INSN_WFI    0x10500073u

/*
 * The slow paths: an access that failed the inline "aligned and inside
 * SRAM" test.  The caller writes pc and insns back first, for the callback.
 */
static Rv32Halt __attribute__((noinline))
io_load(const Rv32Bus *bus, uint32_t addr, unsigned size, uint32_t *val)
{
    if (addr & (size - 1)) {
        return RV32_HALT_MISALIGNED;
    }
    if (addr < RV32_IO_BASE || !bus->io_read ||
        !bus->io_read(bus->opaque, addr - RV32_IO_BASE, size, val)) {
        return RV32_HALT_LOAD;
    }
    return RV32_HALT_NONE;
}

static Rv32Halt __attribute__((noinline))
io_store(const Rv32Bus *bus, uint32_t addr, unsigned size, uint32_t val)
{
    if (addr & (size - 1)) {
        return RV32_HALT_MISALIGNED;
    }
    if (size < 4) {
        val &= (1u << (size * 8)) - 1;
    }
    if (addr < RV32_IO_BASE || !bus->io_write ||
        !bus->io_write(bus->opaque, addr - RV32_IO_BASE, size, val)) {
        return RV32_HALT_STORE;
    }
    return RV32_HALT_NONE;
}

void rv32_reset(Rv32Core *c, uint32_t pc)
{
    memset(c, 0, sizeof(*c));
    c->pc = pc;
}

/* Fields of the instruction being executed, decoded where they are used */
#define F3      ((insn >> 12) & 7)
#define RD      (x[(insn >> 7) & 31])
#define RS1     (x[(insn >> 15) & 31])
#define RS2     (x[(insn >> 20) & 31])
#define IMM_I   ((uint32_t)((int32_t)insn >> 20))
#define IMM_S   ((uint32_t)((int32_t)(insn & 0xfe000000u) >> 20) | \
                 ((insn >> 7) & 0x1f))
#define IMM_B   ((uint32_t)((int32_t)(insn & 0x80000000u) >> 19) | \
                 ((insn & 0x80) << 4) | ((insn >> 20) & 0x7e0) | \
                 ((insn >> 7) & 0x1e))
#define IMM_J   ((uint32_t)((int32_t)(insn & 0x80000000u) >> 11) | \
                 (insn & 0xff000) | ((insn >> 9) & 0x800) | \
                 ((insn >> 20) & 0x7fe))

Rv32Stop rv32_run(Rv32Core *c, const Rv32Bus *bus, uint64_t budget,
                  uint64_t *executed)
{
    /*
     * A handler per major opcode, indexed by the low 7 bits so that the
     * compressed encodings (low bits not 11) land on ILL with no test.
     */
#define ILL (&&illegal)
    static const void *const handler[128] = {
        ILL, ILL, ILL, &&load, ILL, ILL, ILL, ILL,              /* 0x00 */
        ILL, ILL, ILL, ILL, ILL, ILL, ILL, &&misc_mem,
        ILL, ILL, ILL, &&op_imm, ILL, ILL, ILL, &&auipc,        /* 0x10 */
        ILL, ILL, ILL, ILL, ILL, ILL, ILL, ILL,
        ILL, ILL, ILL, &&store, ILL, ILL, ILL, ILL,             /* 0x20 */
        ILL, ILL, ILL, ILL, ILL, ILL, ILL, ILL,
        ILL, ILL, ILL, &&op_reg, ILL, ILL, ILL, &&lui,          /* 0x30 */
        ILL, ILL, ILL, ILL, ILL, ILL, ILL, ILL,
        ILL, ILL, ILL, ILL, ILL, ILL, ILL, ILL,                 /* 0x40 */
        ILL, ILL, ILL, ILL, ILL, ILL, ILL, ILL,
        ILL, ILL, ILL, ILL, ILL, ILL, ILL, ILL,                 /* 0x50 */
        ILL, ILL, ILL, ILL, ILL, ILL, ILL, ILL,
        ILL, ILL, ILL, &&branch, ILL, ILL, ILL, &&jalr,         /* 0x60 */
        ILL, ILL, ILL, ILL, ILL, ILL, ILL, &&jal,
        ILL, ILL, ILL, &&system, ILL, ILL, ILL, ILL,            /* 0x70 */
        ILL, ILL, ILL, ILL, ILL, ILL, ILL, ILL,
    };
#undef ILL
    uint32_t *x = c->x;
    uint8_t *sram = bus->sram;
    /* Address bits that must be 0 in SRAM; | 1 or | 3 adds alignment. */
    uint32_t out = ~(bus->sram_size - 1);
    uint32_t pc = c->pc, insn = 0, addr = 0, a, b, v;
    /* left drops as an instruction starts; a halt gives it back. */
    uint64_t left = budget, insns0 = c->insns;
    uint64_t last = insns0 + budget - 1;    /* last - left: retired before */
    Rv32Halt cause = RV32_HALT_NONE;
    Rv32Stop stop = RV32_STOP_BUDGET;

    if (c->halt != RV32_HALT_NONE) {
        goto out;
    }
    x[0] = 0;
    /* The masks need a power of two: otherwise halt, never read wild. */
    if (bus->sram_size < 4 || (bus->sram_size & (bus->sram_size - 1))) {
        cause = RV32_HALT_FETCH;
        addr = pc;
        left--;
        goto halt;
    }

    /* Every handler writes x[rd] unconditionally; x0 is zeroed here. */
#define NEXT() \
    do { \
        x[0] = 0; \
        if (RV32_UNLIKELY(!left)) { \
            goto out; \
        } \
        left--; \
        if (RV32_UNLIKELY(pc & (out | 3))) { \
            goto fetch_fault; \
        } \
        insn = ld_le32(sram + pc); \
        goto *handler[insn & 0x7f]; \
    } while (0)

    NEXT();

lui:
    RD = insn & 0xfffff000u;
    pc += 4;
    NEXT();
auipc:
    RD = pc + (insn & 0xfffff000u);
    pc += 4;
    NEXT();
jal:
    RD = pc + 4;
    pc += IMM_J;
    NEXT();
jalr:
    if (F3) {
        goto illegal;
    }
    v = (RS1 + IMM_I) & ~1u;
    RD = pc + 4;
    pc = v;
    NEXT();
branch: {
        bool taken;

        a = RS1;
        b = RS2;
        switch (F3) {
        case 0:
            taken = a == b;
            break;
        case 1:
            taken = a != b;
            break;
        case 4:
            taken = (int32_t)a < (int32_t)b;
            break;
        case 5:
            taken = (int32_t)a >= (int32_t)b;
            break;
        case 6:
            taken = a < b;
            break;
        case 7:
            taken = a >= b;
            break;
        default:
            goto illegal;
        }
        pc += taken ? IMM_B : 4;
        NEXT();
    }
load:
    addr = RS1 + IMM_I;
    switch (F3) {
    case 0:
        if (RV32_UNLIKELY(addr & out)) {
            goto load_slow;
        }
        v = (int8_t)sram[addr];
        break;
    case 1:
        if (RV32_UNLIKELY(addr & (out | 1))) {
            goto load_slow;
        }
        v = (int16_t)ld_le16(sram + addr);
        break;
    case 2:
        if (RV32_UNLIKELY(addr & (out | 3))) {
            goto load_slow;
        }
        v = ld_le32(sram + addr);
        break;
    case 4:
        if (RV32_UNLIKELY(addr & out)) {
            goto load_slow;
        }
        v = sram[addr];
        break;
    case 5:
        if (RV32_UNLIKELY(addr & (out | 1))) {
            goto load_slow;
        }
        v = ld_le16(sram + addr);
        break;
    default:
        goto illegal;
    }
    RD = v;
    pc += 4;
    NEXT();
store:
    addr = RS1 + IMM_S;
    b = RS2;
    switch (F3) {
    case 0:
        if (RV32_UNLIKELY(addr & out)) {
            goto store_slow;
        }
        sram[addr] = b;
        break;
    case 1:
        if (RV32_UNLIKELY(addr & (out | 1))) {
            goto store_slow;
        }
        st_le16(sram + addr, b);
        break;
    case 2:
        if (RV32_UNLIKELY(addr & (out | 3))) {
            goto store_slow;
        }
        st_le32(sram + addr, b);
        break;
    default:
        goto illegal;
    }
    pc += 4;
    NEXT();
op_imm:
    a = RS1;
    b = IMM_I;
    switch (F3) {
    case 0:
        v = a + b;
        break;
    case 1:
        if (insn >> 25) {
            goto illegal;
        }
        v = a << (b & 31);
        break;
    case 2:
        v = (int32_t)a < (int32_t)b;
        break;
    case 3:
        v = a < b;
        break;
    case 4:
        v = a ^ b;
        break;
    case 5:
        if (insn >> 25 == 0) {
            v = a >> (b & 31);
        } else if (insn >> 25 == 0x20) {
            v = (int32_t)a >> (b & 31);
        } else {
            goto illegal;
        }
        break;
    case 6:
        v = a | b;
        break;
    default:
        v = a & b;
        break;
    }
    RD = v;
    pc += 4;
    NEXT();
op_reg:
    a = RS1;
    b = RS2;
    /* funct7 << 3 | funct3: base 0x00-0x07, M 0x08-0x0f, sub/sra 0x10x */
    switch (((insn >> 22) & 0x3f8) | F3) {
    case 0x000:
        v = a + b;
        break;
    case 0x100:
        v = a - b;
        break;
    case 0x001:
        v = a << (b & 31);
        break;
    case 0x002:
        v = (int32_t)a < (int32_t)b;
        break;
    case 0x003:
        v = a < b;
        break;
    case 0x004:
        v = a ^ b;
        break;
    case 0x005:
        v = a >> (b & 31);
        break;
    case 0x105:
        v = (int32_t)a >> (b & 31);
        break;
    case 0x006:
        v = a | b;
        break;
    case 0x007:
        v = a & b;
        break;
    case 0x008:
        v = a * b;
        break;
    case 0x009:
        v = (uint64_t)((int64_t)(int32_t)a * (int32_t)b) >> 32;
        break;
    case 0x00a:
        /* signed x unsigned: |product| < 2^63 fits int64_t */
        v = (uint64_t)((int64_t)(int32_t)a * (int64_t)b) >> 32;
        break;
    case 0x00b:
        v = ((uint64_t)a * b) >> 32;
        break;
    case 0x00c:
        /* the spec's results for / 0 and INT32_MIN / -1: no host trap */
        if (b == 0) {
            v = ~0u;
        } else if (a == 0x80000000u && b == ~0u) {
            v = a;
        } else {
            v = (int32_t)a / (int32_t)b;
        }
        break;
    case 0x00d:
        v = b ? a / b : ~0u;
        break;
    case 0x00e:
        if (b == 0) {
            v = a;
        } else if (a == 0x80000000u && b == ~0u) {
            v = 0;
        } else {
            v = (int32_t)a % (int32_t)b;
        }
        break;
    case 0x00f:
        v = b ? a % b : a;
        break;
    default:
        goto illegal;
    }
    RD = v;
    pc += 4;
    NEXT();
misc_mem:
    /*
     * fence, fence.i: nothing is decoded ahead, but SRAM is shared with
     * vCPU threads, so a fence orders this host thread's accesses too:
     * the firmware's "write a word, then read the user's" needs that.
     */
    if (F3 > 1) {
        goto illegal;
    }
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    pc += 4;
    NEXT();
system:
    addr = 0;
    if (insn == INSN_WFI) {
        pc += 4;
        stop = RV32_STOP_WFI;
        goto out;
    } else if (insn == INSN_EBREAK) {
        cause = RV32_HALT_EBREAK;
        goto halt;
    } else if (insn == INSN_ECALL) {
        cause = RV32_HALT_ECALL;
        goto halt;
    }
    goto illegal;

load_slow:
    c->pc = pc;
    c->insns = last - left;
    cause = io_load(bus, addr, 1u << (F3 & 3), &v);
    if (cause != RV32_HALT_NONE) {
        goto halt;
    }
    RD = F3 == 0 ? (uint32_t)(int8_t)v :
         F3 == 1 ? (uint32_t)(int16_t)v :
         F3 == 4 ? (uint8_t)v :
         F3 == 5 ? (uint16_t)v : v;
    pc += 4;
    NEXT();
store_slow:
    c->pc = pc;
    c->insns = last - left;
    cause = io_store(bus, addr, 1u << F3, RS2);
    if (cause != RV32_HALT_NONE) {
        goto halt;
    }
    pc += 4;
    NEXT();

fetch_fault:
    cause = RV32_HALT_FETCH;
    addr = pc;
    goto halt;
illegal:
    cause = RV32_HALT_ILLEGAL;
    addr = 0;
halt:
    left++;                                 /* it did not retire */
    c->halt = cause;
    c->halt_pc = pc;
    c->halt_addr = addr;
    x[0] = 0;
out:
    if (c->halt != RV32_HALT_NONE) {
        stop = RV32_STOP_HALT;
    }
    c->pc = pc;
    c->insns = insns0 + (budget - left);
    if (executed) {
        *executed = budget - left;
    }
    return stop;
}

const char *rv32_halt_name(Rv32Halt h)
{
    static const char *const names[] = {
        [RV32_HALT_NONE] = "none",
        [RV32_HALT_FETCH] = "fetch",
        [RV32_HALT_LOAD] = "load",
        [RV32_HALT_STORE] = "store",
        [RV32_HALT_MISALIGNED] = "misaligned",
        [RV32_HALT_ILLEGAL] = "illegal",
        [RV32_HALT_EBREAK] = "ebreak",
        [RV32_HALT_ECALL] = "ecall",
    };

    if ((unsigned)h < sizeof(names) / sizeof(names[0])) {
        return names[h];
    }
    return "?";
}
