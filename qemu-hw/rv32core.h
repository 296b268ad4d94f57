/*
 * RV32IM interpreter: the LANai-style card's on-board processor
 *
 * Base integer ISA plus the M extension, nothing else: no CSRs, no
 * compressed, atomic or floating-point instructions, no interrupts or
 * traps.  Anything the core cannot execute halts it, and it stays halted
 * until rv32_reset().  No QEMU headers: the lanai device links this file
 * into QEMU and the host unit tests link it too.
 *
 * The address space: SRAM at 0 (little-endian, fetch, load and store),
 * and a 512-byte I/O window at the top, reached by loads and stores only.
 * The window sits at 0xFFFFFE00 so that firmware addresses every register
 * with a 12-bit offset from x0.  Every other address faults, and so does
 * a misaligned load or store: it halts rather than being emulated.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef VCLUSTER_RV32CORE_H
#define VCLUSTER_RV32CORE_H

#include <stdbool.h>
#include <stdint.h>

#define RV32_IO_BASE 0xFFFFFE00u
#define RV32_IO_SIZE 0x200u

typedef struct Rv32Bus {
    uint8_t *sram;              /* mapped at address 0 */
    uint32_t sram_size;         /* a power of two, at least 4 */
    /*
     * Loads and stores in the I/O window, naturally aligned, with
     * offset = addr - RV32_IO_BASE and size 1, 2 or 4.  A read returns
     * the value in the low bits of *val.  Returning false is an access
     * fault.  A NULL callback faults every access.  During a call,
     * core->pc is the accessing instruction and core->insns counts the
     * instructions retired before it (for a device clock).  A callback
     * may write SRAM (nothing is decoded ahead) but not the core.
     */
    bool (*io_read)(void *opaque, uint32_t offset, unsigned size,
                    uint32_t *val);
    bool (*io_write)(void *opaque, uint32_t offset, unsigned size,
                     uint32_t val);
    void *opaque;
} Rv32Bus;

typedef enum Rv32Halt {
    RV32_HALT_NONE,
    RV32_HALT_FETCH,        /* pc outside SRAM or not 4-aligned */
    RV32_HALT_LOAD,         /* load outside SRAM, or refused by io_read */
    RV32_HALT_STORE,        /* store outside SRAM, or refused by io_write */
    RV32_HALT_MISALIGNED,   /* load or store not naturally aligned */
    RV32_HALT_ILLEGAL,      /* encoding outside RV32IM (CSRs, RVC, ...) */
    RV32_HALT_EBREAK,
    RV32_HALT_ECALL,
} Rv32Halt;

typedef enum Rv32Stop {
    RV32_STOP_BUDGET,       /* executed the whole budget */
    RV32_STOP_WFI,          /* retired a wfi; pc is past it */
    RV32_STOP_HALT,         /* the core is halted; see Rv32Core.halt */
} Rv32Stop;

typedef struct Rv32Core {
    uint32_t x[32];
    uint32_t pc;
    uint64_t insns;             /* retired since reset */
    Rv32Halt halt;
    /*
     * On a halt, pc and halt_pc are the instruction that did not retire
     * (for FETCH, the address that could not be fetched); halt_addr is
     * the load/store address (LOAD, STORE, MISALIGNED) or the fetch
     * address (FETCH), else 0.
     */
    uint32_t halt_pc, halt_addr;
} Rv32Core;

/* Everything zero, not halted, pc as given. */
void rv32_reset(Rv32Core *c, uint32_t pc);

/*
 * Execute at most @budget instructions.  *executed (if not NULL) gets the
 * number retired by this call, which c->insns also counts.  A halted core
 * returns RV32_STOP_HALT at once.
 */
Rv32Stop rv32_run(Rv32Core *c, const Rv32Bus *bus, uint64_t budget,
                  uint64_t *executed);

/* "fetch", "load", ... for logs; "none" for RV32_HALT_NONE. */
const char *rv32_halt_name(Rv32Halt h);

#endif
