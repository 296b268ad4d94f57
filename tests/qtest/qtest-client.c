/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qtest protocol client and fake fabric endpoint for device tests. */
#define _GNU_SOURCE
#include "qtest-client.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#define WAIT_MS 5000

static int unix_listen(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpuint(strlen(path), <, sizeof(sa.sun_path));
    strcpy(sa.sun_path, path);
    unlink(path);
    g_assert_cmpint(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
    g_assert_cmpint(listen(fd, 1), ==, 0);
    return fd;
}

static int accept_within(int lfd, int ms)
{
    struct pollfd p = { .fd = lfd, .events = POLLIN };

    if (poll(&p, 1, ms) <= 0) {
        return -1;
    }
    return accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
}

QTest *qt_start(const char *const *args)
{
    return qt_start_accel("qtest", args);
}

QTest *qt_start_accel(const char *accel, const char *const *args)
{
    QTest *qt = g_new0(QTest, 1);
    const char *qemu = g_getenv("QTEST_QEMU_BINARY");
    g_autofree char *sock = NULL;
    GPtrArray *argv = g_ptr_array_new_with_free_func(g_free);
    int lfd;

    qt->dir = g_dir_make_tmp("vcqt-XXXXXX", NULL);
    g_assert_nonnull(qt->dir);
    sock = g_build_filename(qt->dir, "qtest.sock", NULL);
    lfd = unix_listen(sock);
    g_ptr_array_add(argv, g_strdup(qemu ? qemu
                                        : "build/qemu/qemu-system-x86_64"));
    for (const char *const *a = (const char *const[]){
             "-machine", "pc", "-accel", accel, "-nodefaults",
             "-display", "none", "-no-user-config", "-L",
             "/usr/share/seabios", "-L", "/usr/share/qemu", NULL };
         *a; a++) {
        g_ptr_array_add(argv, g_strdup(*a));
    }
    /* no log at all but under -accel qtest: it would go to stderr */
    g_ptr_array_add(argv, g_strdup("-qtest-log"));
    g_ptr_array_add(argv, g_strdup(strcmp(accel, "qtest") ? "none"
                                                           : "/dev/null"));
    g_ptr_array_add(argv, g_strdup("-qtest"));
    g_ptr_array_add(argv, g_strdup_printf("unix:%s", sock));
    for (; args && *args; args++) {
        g_ptr_array_add(argv, g_strdup(*args));
    }
    g_ptr_array_add(argv, NULL);

    qt->pid = fork();
    g_assert_cmpint(qt->pid, >=, 0);
    if (qt->pid == 0) {
        /* QEMU must not outlive a test that crashes or is killed. */
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        execv(argv->pdata[0], (char **)argv->pdata);
        fprintf(stderr, "exec %s: %s\n", (char *)argv->pdata[0],
                strerror(errno));
        _exit(127);
    }
    g_ptr_array_free(argv, TRUE);
    qt->fd = accept_within(lfd, 30000);
    close(lfd);
    unlink(sock);
    g_assert_cmpint(qt->fd, >=, 0);
    qt->in = g_string_new(NULL);
    return qt;
}

void qt_quit(QTest *qt)
{
    int status;

    close(qt->fd);
    kill(qt->pid, SIGTERM);
    for (int i = 0; i < 500 && waitpid(qt->pid, &status, WNOHANG) == 0;
         i++) {
        g_usleep(10000);
    }
    kill(qt->pid, SIGKILL);
    waitpid(qt->pid, &status, 0);
    rmdir(qt->dir);
    g_free(qt->dir);
    g_string_free(qt->in, TRUE);
    g_free(qt);
}

/* One reply line; asynchronous IRQ lines are counted and skipped. */
static char *qt_reply(QTest *qt)
{
    for (;;) {
        char *nl = memchr(qt->in->str, '\n', qt->in->len);
        if (nl) {
            char *line = g_strndup(qt->in->str, nl - qt->in->str);
            g_string_erase(qt->in, 0, nl - qt->in->str + 1);
            if (g_str_has_prefix(line, "IRQ raise")) {
                qt->irq_raised++;
            } else if (g_str_has_prefix(line, "IRQ lower")) {
                qt->irq_lowered++;
            } else {
                return line;
            }
            g_free(line);
            continue;
        }
        struct pollfd p = { .fd = qt->fd, .events = POLLIN };
        g_assert_cmpint(poll(&p, 1, 30000), ==, 1);
        char buf[4096];
        ssize_t n = read(qt->fd, buf, sizeof(buf));
        g_assert_cmpint(n, >, 0);
        g_string_append_len(qt->in, buf, n);
    }
}

char *qt_cmd(QTest *qt, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    g_autofree char *cmd = g_strdup_vprintf(fmt, ap);
    va_end(ap);
    g_autofree char *line = g_strconcat(cmd, "\n", NULL);
    g_assert_cmpint(write(qt->fd, line, strlen(line)), ==, strlen(line));
    char *reply = qt_reply(qt);
    if (!g_str_has_prefix(reply, "OK")) {
        g_error("qtest: '%s' answered '%s'", cmd, reply);
    }
    return reply;
}

static uint64_t reply_value(char *reply)
{
    uint64_t v = g_ascii_strtoull(reply + 3, NULL, 0);
    g_free(reply);
    return v;
}

uint32_t qt_readl(QTest *qt, uint64_t addr)
{
    return reply_value(qt_cmd(qt, "readl 0x%" G_GINT64_MODIFIER "x", addr));
}

void qt_writel(QTest *qt, uint64_t addr, uint32_t val)
{
    g_free(qt_cmd(qt, "writel 0x%" G_GINT64_MODIFIER "x 0x%x", addr, val));
}

static uint32_t cfg_addr(int slot, int reg)
{
    return 0x80000000u | (uint32_t)slot << 11 | (reg & 0xfc);
}

uint32_t qt_pci_cfg_read(QTest *qt, int slot, int reg)
{
    g_free(qt_cmd(qt, "outl 0xcf8 0x%x", cfg_addr(slot, reg)));
    return reply_value(qt_cmd(qt, "inl 0xcfc"));
}

void qt_pci_cfg_write(QTest *qt, int slot, int reg, uint32_t val)
{
    g_free(qt_cmd(qt, "outl 0xcf8 0x%x", cfg_addr(slot, reg)));
    g_free(qt_cmd(qt, "outl 0xcfc 0x%x", val));
}

int qt_pci_map(QTest *qt, uint16_t vendor, uint16_t device, uint64_t base)
{
    for (int slot = 0; slot < 32; slot++) {
        if (qt_pci_cfg_read(qt, slot, 0) == ((uint32_t)device << 16 |
                                             vendor)) {
            qt_pci_cfg_write(qt, slot, 0x10, (uint32_t)base);
            qt_pci_cfg_write(qt, slot, 0x04,
                             qt_pci_cfg_read(qt, slot, 0x04) | 0x6);
            return slot;
        }
    }
    return -1;
}

gboolean qt_wait_reg(QTest *qt, uint64_t addr, uint32_t mask, uint32_t want)
{
    for (int t = 0; t < WAIT_MS; t += 2) {
        if ((qt_readl(qt, addr) & mask) == want) {
            return TRUE;
        }
        g_usleep(2000);
    }
    return FALSE;
}

uint64_t qt_rss_kb(QTest *qt)
{
    g_autofree char *path = g_strdup_printf("/proc/%d/status", (int)qt->pid);
    g_autofree char *text = NULL;
    const char *at;

    g_assert_true(g_file_get_contents(path, &text, NULL, NULL));
    at = strstr(text, "VmRSS:");
    g_assert_nonnull(at);
    return g_ascii_strtoull(at + 6, NULL, 10);
}

void qt_irq_intercept(QTest *qt)
{
    g_free(qt_cmd(qt, "irq_intercept_in ioapic"));
}

FakeFabric *ff_listen(const char *dir, const char *name)
{
    FakeFabric *ff = g_new0(FakeFabric, 1);
    ff->path = g_build_filename(dir, name, NULL);
    ff->listen_fd = unix_listen(ff->path);
    ff->fd = -1;
    return ff;
}

void ff_accept(FakeFabric *ff)
{
    ff->fd = accept_within(ff->listen_fd, 30000);
    g_assert_cmpint(ff->fd, >=, 0);
}

void ff_close(FakeFabric *ff)
{
    if (ff->fd >= 0) {
        close(ff->fd);
    }
    close(ff->listen_fd);
    unlink(ff->path);
    g_free(ff->path);
    g_free(ff);
}

void ff_send_raw(FakeFabric *ff, const void *buf, size_t len)
{
    g_assert_cmpint(write(ff->fd, buf, len), ==, (ssize_t)len);
}

void ff_send(FakeFabric *ff, uint8_t kind, uint8_t type, uint16_t src,
             uint16_t dst, const void *payload, uint32_t len)
{
    FabricHdr h = { .kind = kind, .type = type, .src = src, .dst = dst,
                    .len = len };
    g_autofree uint8_t *buf = g_malloc(FABRIC_HDR_LEN + len);

    fabric_hdr_encode(&h, buf);
    memcpy(buf + FABRIC_HDR_LEN, payload, len);
    ff_send_raw(ff, buf, FABRIC_HDR_LEN + len);
}

static gboolean read_exact(int fd, uint8_t *buf, size_t len, int ms)
{
    for (size_t got = 0; got < len;) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        if (poll(&p, 1, ms) <= 0) {
            return FALSE;
        }
        ssize_t n = read(fd, buf + got, len - got);
        if (n <= 0) {
            return FALSE;
        }
        got += n;
    }
    return TRUE;
}

gboolean ff_recv(FakeFabric *ff, FabricHdr *h, uint8_t **payload)
{
    uint8_t hb[FABRIC_HDR_LEN];

    *payload = NULL;
    if (!read_exact(ff->fd, hb, sizeof(hb), WAIT_MS)) {
        return FALSE;
    }
    g_assert_cmpint(fabric_hdr_decode(hb, h), ==, FABRIC_HDR_OK);
    *payload = g_malloc0(h->len + 1);
    return read_exact(ff->fd, *payload, h->len, WAIT_MS);
}

gboolean ff_quiet(FakeFabric *ff)
{
    struct pollfd p = { .fd = ff->fd, .events = POLLIN };
    return poll(&p, 1, 200) == 0;
}

gboolean ff_peer_closed(FakeFabric *ff)
{
    char c;
    struct pollfd p = { .fd = ff->fd, .events = POLLIN };

    for (int t = 0; t < WAIT_MS; t += 50) {
        if (poll(&p, 1, 50) == 1) {
            ssize_t n = read(ff->fd, &c, 1);
            if (n == 0 || (n < 0 && errno != EAGAIN)) {
                return TRUE;
            }
        }
    }
    return FALSE;
}
