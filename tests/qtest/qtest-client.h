/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * A small client for QEMU's qtest protocol: starts our QEMU with
 * -accel qtest, finds a PCI device, maps its BAR and accesses registers.
 * Each device test also plays fabricd on the device's chardev socket.
 */
#ifndef QTEST_CLIENT_H
#define QTEST_CLIENT_H

#include <glib.h>
#include <stdint.h>
#include <sys/types.h>

#include "proto/base.h"

typedef struct QTest {
    pid_t pid;
    int fd;             /* qtest protocol */
    GString *in;
    int irq_raised;     /* "IRQ raise" lines seen since the last reset */
    int irq_lowered;
    char *dir;
} QTest;

/* Start QEMU with extra args (NULL-terminated); dies on failure. */
QTest *qt_start(const char *const *args);
/*
 * The same under another accelerator: "tcg" runs the firmware, with
 * -icount when a device needs a virtual clock that counts instructions.
 */
QTest *qt_start_accel(const char *accel, const char *const *args);
void qt_quit(QTest *qt);
char *qt_cmd(QTest *qt, const char *fmt, ...) G_GNUC_PRINTF(2, 3);
uint32_t qt_readl(QTest *qt, uint64_t addr);
void qt_writel(QTest *qt, uint64_t addr, uint32_t val);
uint32_t qt_pci_cfg_read(QTest *qt, int slot, int reg);
void qt_pci_cfg_write(QTest *qt, int slot, int reg, uint32_t val);
/* Find vendor:device on bus 0, map BAR0 at base, enable memory + master. */
int qt_pci_map(QTest *qt, uint16_t vendor, uint16_t device, uint64_t base);
/* Poll until (readl(addr) & mask) == want, or a bounded time passes. */
gboolean qt_wait_reg(QTest *qt, uint64_t addr, uint32_t mask, uint32_t want);
void qt_irq_intercept(QTest *qt);
/* QEMU's resident memory (VmRSS), in KiB. */
uint64_t qt_rss_kb(QTest *qt);

/* The fake fabricd end of a device's chardev. */
typedef struct FakeFabric {
    int listen_fd;
    int fd;
    char *path;
} FakeFabric;

FakeFabric *ff_listen(const char *dir, const char *name);
void ff_accept(FakeFabric *ff);
void ff_close(FakeFabric *ff);
void ff_send(FakeFabric *ff, uint8_t kind, uint8_t type, uint16_t src,
             uint16_t dst, const void *payload, uint32_t len);
void ff_send_raw(FakeFabric *ff, const void *buf, size_t len);
/* Next frame within a bounded time; payload is g_free'd by the caller. */
gboolean ff_recv(FakeFabric *ff, FabricHdr *h, uint8_t **payload);
/* TRUE when nothing arrives for a short while. */
gboolean ff_quiet(FakeFabric *ff);
/* TRUE when the peer closed the connection. */
gboolean ff_peer_closed(FakeFabric *ff);

#endif
