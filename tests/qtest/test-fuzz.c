/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Seeded fuzzing of each device through qtest, on the QEMU built with
 * AddressSanitizer and UndefinedBehaviorSanitizer (build/qemu-asan, see
 * scripts/build-qemu.sh --sanitize).  The test plays fabricd and the guest
 * at once: random register reads and writes, guest memory that DMA reads
 * (descriptor chains, tables), fabric frames of every type (well-formed
 * and not), clock steps, and on the LANai card random firmware.  A run
 * passes when QEMU is alive at the end and printed no sanitizer report.
 *
 * FUZZ_OPS (default 100000 per device) and FUZZ_SEED (default: from the
 * clock, printed) choose the run; a failure prints both and the last
 * operations, so that `FUZZ_SEED=S FUZZ_OPS=N test-fuzz -p /fuzz/DEVICE`
 * replays it.  FUZZ_QEMU names another QEMU binary.
 */
#include "qtest-client.h"
#include "proto/myrinet.h"
#include "proto/ps1.h"
#include "proto/telegraphos.h"

#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "vcluster/hw/lanai_regs.h"
#include "vcluster/hw/ps1_regs.h"
#include "vcluster/hw/tgr_regs.h"

#define BAR0            ((uint64_t)0xe1000000)
#define RAM_WINDOW      ((uint64_t)0x100000)    /* DMA targets live here */
#define RAM_WINDOW_SIZE 0x40000u
#define TRACE_LEN       48
#define NODE            1
#define NODES           4

typedef struct Region {
    uint64_t base;
    uint64_t size;
    uint64_t hot;       /* the first `hot` bytes get half the accesses */
} Region;

typedef struct Fuzz Fuzz;

typedef struct Device {
    const char *name;
    const char *qdev;           /* -device NAME,chardev=fz,node=1 */
    uint16_t vendor, device;
    uint8_t kind;
    Region region[4];
    unsigned regions;
    unsigned ack_extra;         /* HELLO_ACK fields after the node count */
    void (*map)(Fuzz *fz);      /* extra BARs, after BAR0 */
    void (*frame)(Fuzz *fz, uint8_t *pl, uint32_t *len);   /* a DATA */
    void (*special)(Fuzz *fz);  /* a device's own operation */
    void (*start)(Fuzz *fz);    /* after the link is up */
    const uint64_t *regs;       /* known registers: a write hits one */
    unsigned nregs;             /* of them half of the time */
    uint32_t ptr_lo, ptr_hi;    /* device-side addresses (LANai SRAM) */
} Device;

struct Fuzz {
    const Device *dev;
    QTest *qt;
    FakeFabric *ff;
    char *dir;
    char *log;                  /* QEMU's stderr */
    int slot;
    uint64_t rng;
    uint64_t op;
    char trace[TRACE_LEN][96];
};

static Fuzz *current;

/* splitmix64: the same stream for the same seed, on any host. */
static uint64_t next(Fuzz *fz)
{
    uint64_t z = (fz->rng += 0x9e3779b97f4a7c15ull);

    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint64_t below(Fuzz *fz, uint64_t n)
{
    return n ? next(fz) % n : 0;
}

static void trace(Fuzz *fz, const char *fmt, ...) G_GNUC_PRINTF(2, 3);

static void trace(Fuzz *fz, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    g_vsnprintf(fz->trace[fz->op % TRACE_LEN], sizeof(fz->trace[0]), fmt,
                ap);
    va_end(ap);
}

/* The sanitizer's report (or whatever QEMU said last), 30 lines of it. */
static void print_qemu_error(const char *log)
{
    g_autofree char *text = NULL;
    const char *at;
    unsigned lines = 0;

    if (!g_file_get_contents(log, &text, NULL, NULL)) {
        return;
    }
    at = strstr(text, "ERROR: ");
    at = at ? at : strstr(text, "runtime error");
    for (at = at ? at : text; *at && lines < 30; at++) {
        fputc(*at, stderr);
        lines += *at == '\n';
    }
}

/* On an assertion (QEMU gone, most often): how to replay, what came last. */
static void dump_trace(int sig)
{
    Fuzz *fz = current;

    if (fz) {
        fprintf(stderr, "fuzz: %s failed at operation %" PRIu64 "; replay "
                "with FUZZ_SEED=%s FUZZ_OPS=%" PRIu64 "\nlast operations:\n",
                fz->dev->name, fz->op, g_getenv("FUZZ_SEED"), fz->op + 1);
        for (uint64_t i = fz->op > TRACE_LEN ? fz->op - TRACE_LEN : 0;
             i <= fz->op; i++) {
            fprintf(stderr, "  %" PRIu64 ": %s\n", i,
                    fz->trace[i % TRACE_LEN]);
        }
        fprintf(stderr, "QEMU's stderr (%s), from its first error:\n",
                fz->log);
        print_qemu_error(fz->log);
    }
    signal(sig, SIG_DFL);
    raise(sig);
}

/* A value a register write might get: edges more often than chance. */
static uint32_t value(Fuzz *fz)
{
    switch (below(fz, 8)) {
    case 0:
        return 0;
    case 1:
        return ~0u;
    case 2:
        return 1u << below(fz, 32);
    case 3:
        return below(fz, 64);
    case 4:
        return RAM_WINDOW + below(fz, RAM_WINDOW_SIZE);
    case 5:
        return (uint32_t)next(fz) & 0xfffff;
    case 6:
        if (fz->dev->ptr_hi) {
            return fz->dev->ptr_lo + below(fz, fz->dev->ptr_hi -
                                              fz->dev->ptr_lo) / 4 * 4;
        }
        return next(fz);
    default:
        return next(fz);
    }
}

static uint64_t address(Fuzz *fz, unsigned width)
{
    const Region *r = &fz->dev->region[below(fz, fz->dev->regions)];

    if (width == 4 && fz->dev->nregs && below(fz, 2)) {
        return fz->dev->regs[below(fz, fz->dev->nregs)];
    }
    uint64_t span = below(fz, 2) && r->hot ? r->hot : r->size;

    return r->base + (below(fz, span) & ~(uint64_t)(width - 1));
}

static void op_mmio(Fuzz *fz, bool write)
{
    static const char *const sfx = "bwlq";
    unsigned lg = below(fz, 4) ? 2 : below(fz, 4);
    uint64_t addr = address(fz, 1u << lg);
    uint64_t v = lg == 3 ? next(fz) : value(fz);

    if (lg < 2) {
        v &= (1u << (8 << lg)) - 1;
    }
    if (write) {
        trace(fz, "write%c 0x%" PRIx64 " 0x%" PRIx64, sfx[lg], addr, v);
        g_free(qt_cmd(fz->qt, "write%c 0x%" PRIx64 " 0x%" PRIx64, sfx[lg],
                      addr, v));
    } else {
        trace(fz, "read%c 0x%" PRIx64, sfx[lg], addr);
        g_free(qt_cmd(fz->qt, "read%c 0x%" PRIx64, sfx[lg], addr));
    }
}

/* Guest memory that a DMA engine or a table walk may read. */
static void op_ram(Fuzz *fz)
{
    unsigned len = 4 + below(fz, 60);
    uint64_t addr = RAM_WINDOW + below(fz, RAM_WINDOW_SIZE - len);
    GString *hex = g_string_new("0x");

    for (unsigned i = 0; i < len; i++) {
        uint8_t b = below(fz, 3) ? (uint8_t)next(fz) : (uint8_t)value(fz);

        g_string_append_printf(hex, "%02x", b);
    }
    trace(fz, "write 0x%" PRIx64 " %u", addr, len);
    g_free(qt_cmd(fz->qt, "write 0x%" PRIx64 " %u %s", addr, len, hex->str));
    g_string_free(hex, TRUE);
}

static void random_bytes(Fuzz *fz, uint8_t *p, uint32_t len)
{
    for (uint32_t i = 0; i < len; i++) {
        p[i] = next(fz);
    }
}

/* A frame as fabricd could send it, well-formed or not. */
static void op_frame(Fuzz *fz)
{
    static uint8_t pl[FABRIC_MYRI_MAX_PACKET + 64];
    uint8_t type = 1 + below(fz, FABRIC_TYPE_MAX);
    uint32_t len = below(fz, 8) ? below(fz, 80) : below(fz, sizeof(pl));
    uint16_t src = below(fz, 4) ? below(fz, NODES) : (uint16_t)next(fz);

    random_bytes(fz, pl, len);
    if (type == FABRIC_TYPE_DATA && below(fz, 2)) {
        fz->dev->frame(fz, pl, &len);
    } else if (type == FABRIC_TYPE_CONTROL && len && below(fz, 2)) {
        pl[0] = below(fz, 40);      /* a known opcode more often */
    }
    trace(fz, "frame type %u from %u, %u bytes", type, src, len);
    ff_send(fz->ff, fz->dev->kind, type, src, NODE, pl, len);
}

/* Read (and forget) what the device sent, sometimes. */
static void op_drain(Fuzz *fz)
{
    uint8_t buf[65536];

    trace(fz, "drain");
    while (read(fz->ff->fd, buf, sizeof(buf)) > 0) {
        /* the device's frames are not checked here */
    }
}

static void op_clock(Fuzz *fz)
{
    uint64_t ns = 1 + below(fz, below(fz, 4) ? 100000 : 50000000);

    trace(fz, "clock_step %" PRIu64, ns);
    g_free(qt_cmd(fz->qt, "clock_step %" PRIu64, ns));
}

static void hello_ack(Fuzz *fz, uint16_t nodes)
{
    uint8_t ack[FABRIC_HELLO_ACK_BASE_LEN + FABRIC_HELLO_ACK_EXTRA_MAX] = {
        0
    };
    FabricHelloAck a = { .nodes = nodes, .extra_len = fz->dev->ack_extra };

    ff_send(fz->ff, fz->dev->kind, FABRIC_TYPE_CONTROL, FABRIC_NODE_NONE,
            NODE, ack, fabric_hello_ack_encode(&a, ack));
}

/* ---- the devices ---- */

static void ps1_frame(Fuzz *fz, uint8_t *pl, uint32_t *len)
{
    uint32_t words[FABRIC_PS1_MAX_WORDS];
    unsigned count = 1 + below(fz, FABRIC_PS1_MAX_WORDS);

    for (unsigned i = 0; i < count; i++) {
        words[i] = next(fz);
    }
    *len = fabric_ps1_data_encode(fabric_ps1_header_word(below(fz, NODES),
                                                         count), words, pl);
    if (!below(fz, 8)) {
        pl[below(fz, *len)] ^= 1u << below(fz, 8);     /* a line fault */
    }
}

static void lanai_frame(Fuzz *fz, uint8_t *pl, uint32_t *len)
{
    uint32_t pkt = 1 + (below(fz, 4) ? below(fz, 256)
                                     : below(fz, FABRIC_MYRI_MAX_PACKET));

    random_bytes(fz, pl, pkt);
    pl[0] &= ~FABRIC_MYRI_ROUTE_BIT;
    fabric_put_le32(pl + pkt, fabric_crc32(pl, pkt));
    *len = pkt + FABRIC_MYRI_CRC_LEN;
}

/* Random words as firmware, and the core let go. */
static void lanai_firmware(Fuzz *fz)
{
    uint64_t control = BAR0 + LANAI_CONFIG_OFFSET + LANAI_CFG_CONTROL;

    trace(fz, "random firmware");
    g_free(qt_cmd(fz->qt, "writel 0x%" PRIx64 " 0x%x", control,
                  LANAI_CTRL_RESET_ON));
    for (unsigned i = 0; i < 64; i++) {
        g_free(qt_cmd(fz->qt, "writel 0x%" PRIx64 " 0x%x",
                      BAR0 + 4 * below(fz, 1024), value(fz)));
    }
    g_free(qt_cmd(fz->qt, "writel 0x%" PRIx64 " 0x%x", control,
                  LANAI_CTRL_RESET_OFF));
}

/* A core that sleeps: frames are then received, not absorbed in reset. */
static void lanai_start(Fuzz *fz)
{
    uint64_t control = BAR0 + LANAI_CONFIG_OFFSET + LANAI_CFG_CONTROL;

    g_free(qt_cmd(fz->qt, "writel 0x%" PRIx64 " 0x%x", BAR0, 0x10500073));
    g_free(qt_cmd(fz->qt, "writel 0x%" PRIx64 " 0x%x", BAR0 + 4,
                  0xffdff06f));                 /* wfi; j .-4 */
    g_free(qt_cmd(fz->qt, "writel 0x%" PRIx64 " 0x%x", control,
                  LANAI_CTRL_RESET_OFF));
}

#define LREG(r) (BAR0 + LANAI_HOST_REG(r))
#define LCFG(r) (BAR0 + LANAI_CONFIG_OFFSET + (r))
static const uint64_t lanai_regs[] = {
    LREG(LANAI_REG_ISR), LREG(LANAI_REG_EIMR), LREG(LANAI_REG_IMR),
    LREG(LANAI_REG_IT0), LREG(LANAI_REG_IT1), LREG(LANAI_REG_IT2),
    LREG(LANAI_REG_RTC), LREG(LANAI_REG_PULSE), LREG(LANAI_REG_RMP),
    LREG(LANAI_REG_RML), LREG(LANAI_REG_RMP), LREG(LANAI_REG_RML),
    LREG(LANAI_REG_SMP), LREG(LANAI_REG_SML), LREG(LANAI_REG_SMLT),
    LREG(LANAI_REG_SMP), LREG(LANAI_REG_SMLT), LREG(LANAI_REG_DMA_HEAD),
    LREG(LANAI_REG_DB_BASE), LREG(LANAI_REG_DB_SIZE),
    LREG(LANAI_REG_DB_CONS), LREG(LANAI_REG_HOST_NOTIFY),
    LREG(LANAI_REG_WDOG_KICK), LCFG(LANAI_CFG_CONTROL),
    BAR0 + LANAI_DOORBELL_OFFSET, BAR0 + LANAI_DOORBELL_OFFSET + 0x1004,
};

static const uint64_t ps1_regs[] = {
    BAR0 + PS1_REG_CREG, BAR0 + PS1_REG_ISR, BAR0 + PS1_REG_NODE,
    BAR0 + PS1_REG_RT_INDEX, BAR0 + PS1_REG_RT_ENTRY, BAR0 + PS1_REG_NREG,
    BAR0 + PS1_REG_NREG, BAR0 + PS1_REG_NREG, BAR0 + PS1_REG_BARRIER,
    BAR0 + PS1_REG_BARRIER_MASK, BAR0 + PS1_REG_RT_COMMIT,
};

static const uint64_t tgr_regs[] = {
    BAR0 + TGR_REG_CTRL, BAR0 + TGR_REG_ISR, BAR0 + TGR_REG_IMR,
    BAR0 + TGR_REG_EXP_BASE_LO, BAR0 + TGR_REG_EXP_BASE_HI,
    BAR0 + TGR_REG_EXP_COUNT, BAR0 + TGR_REG_EVQ_BASE_LO,
    BAR0 + TGR_REG_EVQ_BASE_HI, BAR0 + TGR_REG_EVQ_ENTRIES,
    BAR0 + TGR_REG_EVQ_CONS, BAR0 + TGR_REG_CUR_CTX, BAR0 + TGR_REG_RD_ACK,
    BAR0 + TGR_REG_RREAD_TIMEOUT_US, BAR0 + TGR_REG_GROUP_EIDX,
    BAR0 + TGR_REG_GROUP_EIDX + 4, BAR0 + TGR_CTX_TABLE,
    BAR0 + TGR_CTX_TABLE + 4, BAR0 + TGR_CTX_TABLE + 16 + 8,
    BAR0 + TGR_PTE_TABLE, BAR0 + TGR_PTE_TABLE + 4, BAR0 + TGR_PTE_TABLE + 8,
    BAR0 + TGR_PTE_TABLE + 12, BAR0 + TGR_PTE_TABLE + TGR_PTE_SIZE,
};

static void tgr_frame(Fuzz *fz, uint8_t *pl, uint32_t *len)
{
    FabricTgrHdr t = {
        .op = 1 + below(fz, FABRIC_TGR_OP_MAX),
        .size = 1u << below(fz, 4),
        .epoch = below(fz, 3),
        .seq = below(fz, 4) ? below(fz, 16) : (uint32_t)next(fz),
        .tag = below(fz, 2) ? below(fz, 64) : (uint32_t)next(fz),
        .eidx = below(fz, 2) ? below(fz, 16) : (uint32_t)next(fz),
        .gen = below(fz, 4),
        .off = below(fz, 2) ? below(fz, TGR_PAGE_SIZE) : (uint16_t)next(fz),
    };
    uint32_t body = below(fz, 4) ? below(fz, 32)
                                 : below(fz, FABRIC_TGR_MAX_DATA + 8);

    fabric_tgr_hdr_encode(&t, pl);
    random_bytes(fz, pl + FABRIC_TGR_HDR_LEN, body);
    *len = FABRIC_TGR_HDR_LEN + body;
}

#define TGR_BAR2 ((uint64_t)0xe4000000)
#define TGR_BAR4 ((uint64_t)0x80000000)

/* A remote shadow access: an operation on a window page. */
static void tgr_shadow(Fuzz *fz)
{
    uint64_t addr = TGR_BAR4 + TGR_SHADOW_OFF((uint32_t)below(fz, 8),
                                              (uint32_t)below(fz, 20),
                                              (uint32_t)below(fz, 4096) & ~7u);
    unsigned lg = 2 + below(fz, 2);

    if (below(fz, 2)) {
        trace(fz, "shadow write%c 0x%" PRIx64, lg == 2 ? 'l' : 'q', addr);
        g_free(qt_cmd(fz->qt, "write%c 0x%" PRIx64 " 0x%x",
                      lg == 2 ? 'l' : 'q', addr, value(fz)));
    } else {
        trace(fz, "shadow read%c 0x%" PRIx64, lg == 2 ? 'l' : 'q', addr);
        g_free(qt_cmd(fz->qt, "read%c 0x%" PRIx64, lg == 2 ? 'l' : 'q',
                      addr));
    }
}
static void tgr_map(Fuzz *fz)
{
    qt_pci_cfg_write(fz->qt, fz->slot, 0x18, (uint32_t)TGR_BAR2);
    qt_pci_cfg_write(fz->qt, fz->slot, 0x1c, TGR_BAR2 >> 32);
    qt_pci_cfg_write(fz->qt, fz->slot, 0x20, (uint32_t)TGR_BAR4);
    qt_pci_cfg_write(fz->qt, fz->slot, 0x24, TGR_BAR4 >> 32);
}

static const Device devices[] = {
    {
        .name = "parastation", .qdev = "parastation",
        .vendor = PS1_PCI_VENDOR, .device = PS1_PCI_DEVICE,
        .kind = FABRIC_KIND_PS1, .ack_extra = FABRIC_PS1_HELLO_ACK_EXTRA,
        .region = { { BAR0, PS1_REGS_SIZE, 0x60 } }, .regions = 1,
        .frame = ps1_frame,
        .regs = ps1_regs, .nregs = G_N_ELEMENTS(ps1_regs),
    },
    {
        .name = "lanai", .qdev = "lanai,sram-size=262144",
        .vendor = LANAI_PCI_VENDOR, .device = LANAI_PCI_DEVICE,
        .kind = FABRIC_KIND_MYRINET,
        .ack_extra = FABRIC_MYRI_HELLO_ACK_EXTRA,
        .region = {
            { BAR0 + LANAI_CONFIG_OFFSET, LANAI_CONFIG_SIZE, 0x100 },
            { BAR0 + LANAI_SPECIAL_OFFSET, LANAI_SPECIAL_SIZE, 0x200 },
            { BAR0, 262144, 0x1000 },
            { BAR0 + LANAI_DOORBELL_OFFSET,
              LANAI_DOORBELL_CTXS * LANAI_DOORBELL_PAGE, 0x20 },
        },
        .regions = 4,
        .frame = lanai_frame, .special = lanai_firmware,
        .start = lanai_start,
        .regs = lanai_regs, .nregs = G_N_ELEMENTS(lanai_regs),
        .ptr_lo = 0, .ptr_hi = 262144 + 64,
    },
    {
        .name = "telegraphos", .qdev = "telegraphos,window-pages=16",
        .vendor = TGR_PCI_VENDOR, .device = TGR_PCI_DEVICE,
        .kind = FABRIC_KIND_TELEGRAPHOS,
        .region = {
            { BAR0, TGR_BAR0_SIZE, 0x200 },
            { TGR_BAR2, 16 * TGR_PAGE_SIZE, TGR_PAGE_SIZE },
            { TGR_BAR4, TGR_SHADOW_REMOTE, RAM_WINDOW + RAM_WINDOW_SIZE },
        },
        .regions = 3,
        .map = tgr_map, .frame = tgr_frame, .special = tgr_shadow,
        .regs = tgr_regs, .nregs = G_N_ELEMENTS(tgr_regs),
    },
};

/* ---- a run ---- */

static Fuzz *fuzz_start(const Device *dev, uint64_t seed)
{
    Fuzz *fz = g_new0(Fuzz, 1);
    g_autofree char *chr = NULL, *qdev = NULL;
    int saved_err, log_fd;
    FabricHdr h;
    g_autofree uint8_t *p = NULL;

    fz->dev = dev;
    fz->rng = seed;
    fz->dir = g_dir_make_tmp("vcfuzz-XXXXXX", NULL);
    fz->log = g_build_filename(fz->dir, "qemu.err", NULL);
    fz->ff = ff_listen(fz->dir, "fabric.sock");
    chr = g_strdup_printf("socket,id=fz,path=%s", fz->ff->path);
    qdev = g_strdup_printf("%s,chardev=fz,node=%u", dev->qdev, NODE);
    const char *args[] = { "-chardev", chr, "-device", qdev, NULL };

    /* QEMU's stderr goes to a file that the run scans at its end. */
    saved_err = dup(STDERR_FILENO);
    log_fd = open(fz->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    g_assert_cmpint(log_fd, >=, 0);
    dup2(log_fd, STDERR_FILENO);
    fz->qt = qt_start(args);
    dup2(saved_err, STDERR_FILENO);
    close(saved_err);
    close(log_fd);

    ff_accept(fz->ff);
    fz->slot = qt_pci_map(fz->qt, dev->vendor, dev->device, BAR0);
    g_assert_cmpint(fz->slot, >=, 0);
    if (dev->map) {
        dev->map(fz);
    }
    g_assert_true(ff_recv(fz->ff, &h, &p));
    g_assert_cmpuint(p[0], ==, FABRIC_CTL_HELLO);
    hello_ack(fz, NODES);
    if (dev->start) {
        dev->start(fz);
    }
    fcntl(fz->ff->fd, F_SETFL, fcntl(fz->ff->fd, F_GETFL) | O_NONBLOCK);
    return fz;
}

static void fuzz_run(Fuzz *fz, uint64_t ops)
{
    for (fz->op = 0; fz->op < ops; fz->op++) {
        unsigned pick = below(fz, 100);

        if (pick < 40) {
            op_mmio(fz, true);
        } else if (pick < 62) {
            op_mmio(fz, false);
        } else if (pick < 72) {
            op_ram(fz);
        } else if (pick < 88) {
            op_frame(fz);
        } else if (pick < 93) {
            op_clock(fz);
        } else if (pick < 98) {
            op_drain(fz);
        } else if (pick < 99 && fz->dev->special) {
            /* firmware, shadow operations: the device's own entry points */
            fz->dev->special(fz);
        } else {
            trace(fz, "HELLO_ACK");
            hello_ack(fz, below(fz, 2) ? NODES : (uint16_t)next(fz));
        }
    }
}

static unsigned count_lines(const char *s)
{
    unsigned n = 0;

    for (; *s; s++) {
        n += *s == '\n';
    }
    return n;
}

/* QEMU alive, and no sanitizer report in what it printed. */
static void fuzz_finish(Fuzz *fz)
{
    g_autofree char *err = NULL;

    trace(fz, "the check that QEMU is alive");
    qt_pci_cfg_read(fz->qt, fz->slot, 0);
    qt_quit(fz->qt);
    ff_close(fz->ff);
    g_assert_true(g_file_get_contents(fz->log, &err, NULL, NULL));
    if (*err) {
        /* warnings a hostile fabric earns are expected: show the first */
        g_test_message("%s: QEMU printed %u lines, first: %.*s",
                       fz->dev->name, count_lines(err),
                       (int)strcspn(err, "\n"), err);
    }
    if (strstr(err, "Sanitizer") || strstr(err, "runtime error")) {
        g_printerr("%s", err);
        g_error("fuzz: %s: sanitizer report (seed %s)", fz->dev->name,
                g_getenv("FUZZ_SEED"));
    }
    unlink(fz->log);
    rmdir(fz->dir);
    g_free(fz->log);
    g_free(fz->dir);
    g_free(fz);
}

static void test_device(gconstpointer data)
{
    const Device *dev = data;
    uint64_t ops = g_ascii_strtoull(g_getenv("FUZZ_OPS"), NULL, 10);
    uint64_t seed = g_ascii_strtoull(g_getenv("FUZZ_SEED"), NULL, 0);
    gint64 start = g_get_monotonic_time();

    g_test_message("%s: seed %" PRIu64 ", %" PRIu64 " operations",
                   dev->name, seed, ops);
    current = fuzz_start(dev, seed);
    fuzz_run(current, ops);
    fuzz_finish(current);
    current = NULL;
    g_test_message("%s: %" PRIu64 " operations in %.1f s", dev->name, ops,
                   (g_get_monotonic_time() - start) / 1e6);
}

int main(int argc, char **argv)
{
    g_autofree char *seed = NULL;
    const char *qemu = g_getenv("FUZZ_QEMU");

    g_test_init(&argc, &argv, NULL);
    if (!g_getenv("FUZZ_OPS")) {
        g_setenv("FUZZ_OPS", "100000", TRUE);
    }
    if (!g_getenv("FUZZ_SEED")) {
        seed = g_strdup_printf("%" PRId64, g_get_real_time());
        g_setenv("FUZZ_SEED", seed, TRUE);
    }
    g_setenv("QTEST_QEMU_BINARY",
             qemu ? qemu : "build/qemu-asan/qemu-system-x86_64", TRUE);
    /* Reports end the run; QEMU's exit-time leaks are not this test's. */
    g_setenv("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1", TRUE);
    g_setenv("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1", TRUE);
    signal(SIGABRT, dump_trace);
    signal(SIGTRAP, dump_trace);
    for (size_t i = 0; i < G_N_ELEMENTS(devices); i++) {
        g_autofree char *path = g_strdup_printf("/fuzz/%s", devices[i].name);

        g_test_add_data_func(path, &devices[i], test_device);
    }
    return g_test_run();
}
