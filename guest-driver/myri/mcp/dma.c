/*
 * The MCP's host DMA: chains of descriptors in SRAM, run to completion.
 *
 * The engine runs a chain in order and makes each descriptor's writes
 * visible before the next starts, so a chain "payload, then event" never
 * shows the event without its payload.  A failed chain means a bad host
 * address or bus mastering off: the driver's setup is broken and nothing
 * the firmware does can repair it, so it panics.
 *
 * Copyright (c) 2026 The vcluster authors
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include "mcp.h"

/* One SRAM -> host descriptor; @next is an address | LANAI_DMA_NEXT_*. */
void dma_desc(DmaDesc *d, uint32_t next, uint32_t sram, uint32_t bus_lo,
              uint32_t bus_hi, uint32_t len)
{
    d->next = next;
    d->len = len;
    d->lar = sram;
    d->eah = bus_hi;
    d->eal = bus_lo;
}

/*
 * Run the chain at @head and wait for it.  This device finishes a chain
 * within the PULSE write; the wait is for an engine that takes its time.
 */
void dma_run(const DmaDesc *head)
{
    uint32_t isr;

    reg_write(LANAI_REG_DMA_HEAD, (uint32_t)head);
    reg_write(LANAI_REG_PULSE, LANAI_PULSE_DMA_START);
    for (;;) {
        isr = reg_read(LANAI_REG_ISR);
        if (isr & LANAI_ISR_DMA_ERR) {
            mcp_panic(MCP_PANIC_DMA, reg_read(LANAI_REG_DMA_STS));
        }
        if (isr & LANAI_ISR_WAKE0) {
            break;
        }
        /* The main loop sets IMR again before it sleeps. */
        reg_write(LANAI_REG_IMR, LANAI_ISR_WAKE0 | LANAI_ISR_DMA_ERR);
        wait_for_interrupt();
    }
    reg_write(LANAI_REG_ISR, LANAI_ISR_WAKE0);
}
