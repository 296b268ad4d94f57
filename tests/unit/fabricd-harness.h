/*
 * Harness for test-fabricd.c: start fabricd in a temporary directory, talk
 * to its control socket, and play fake QEMU ports speaking the eth kind's
 * framing.  Every wait is bounded, and the daemon gets PR_SET_PDEATHSIG so
 * it dies with the test even when an assertion aborts before teardown.
 *
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#ifndef TESTS_UNIT_FABRICD_HARNESS_H
#define TESTS_UNIT_FABRICD_HARNESS_H

#include <errno.h>
#include <fcntl.h>
#include <glib.h>
#include <glib/gstdio.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

/* A test may run another build of the daemon (the fuzzer: ASan's). */
#ifndef FABRICD
#define FABRICD "build/bin/fabricd"
#endif
#define FABRICCTL "build/bin/fabricctl"
#define TSHARK "/usr/bin/tshark"
#define NODES 3
#define WAIT_MS 5000
/* How long "nothing arrives" is watched after fabricd has processed. */
#define QUIET_MS 100
#define ETHERTYPE_TEST 0x88b5   /* IEEE local experimental */

static const uint8_t mac[NODES][6] = {
    { 0x52, 0x54, 0x00, 0x12, 0x34, 0x00 },
    { 0x52, 0x54, 0x00, 0x12, 0x34, 0x01 },
    { 0x52, 0x54, 0x00, 0x12, 0x34, 0x02 },
};
static const uint8_t mac_bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
static const uint8_t mac_nobody[6] = { 0x52, 0x54, 0x00, 0x99, 0x99, 0x99 };

typedef struct Fixture {
    char *dir;
    GPid pid;
    bool reaped;
    int wait_status;
    int out_fd;             /* fabricd's stdout */
    int ctl;                /* a control connection kept open */
    GString *ctl_buf;
    int port[NODES];
} Fixture;

typedef struct Frame {
    uint8_t data[1600];
    size_t len;
} Frame;

static gint64 deadline_after(int ms)
{
    return g_get_monotonic_time() + (gint64)ms * 1000;
}

static int ms_left(gint64 deadline)
{
    gint64 left = deadline - g_get_monotonic_time();

    return left > 0 ? (int)((left + 999) / 1000) : 0;
}

/* Read exactly n bytes before the deadline: 1 ok, 0 timeout, -1 EOF/error. */
static int read_exact(int fd, void *buf, size_t n, gint64 deadline)
{
    uint8_t *p = buf;

    while (n) {
        struct pollfd pfd = { .fd = fd, .events = POLLIN };
        int r = poll(&pfd, 1, ms_left(deadline));
        ssize_t got;

        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r <= 0) {
            return 0;
        }
        got = read(fd, p, n);
        if (got < 0 && errno == EINTR) {
            continue;
        }
        if (got <= 0) {
            return -1;
        }
        p += got;
        n -= got;
    }
    return 1;
}

static void write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;

    while (n) {
        ssize_t put = send(fd, p, n, MSG_NOSIGNAL);

        if (put < 0 && errno == EINTR) {
            continue;
        }
        g_assert_cmpint(put, >, 0);
        p += put;
        n -= put;
    }
}

static int connect_unix(const char *path)
{
    struct sockaddr_un sa = { .sun_family = AF_UNIX };
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpuint(strlen(path), <, sizeof(sa.sun_path));
    strcpy(sa.sun_path, path);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

/* ---- the daemon ---- */

static void child_dies_with_parent(gpointer unused)
{
    prctl(PR_SET_PDEATHSIG, SIGKILL);
}

static char *make_short_tmpdir(void)
{
    char *dir = g_dir_make_tmp("fabricd-XXXXXX", NULL);

    /* sun_path is 108 bytes: a long $TMPDIR would not fit. */
    if (!dir || strlen(dir) > 60) {
        if (dir) {
            g_rmdir(dir);
            g_free(dir);
        }
        dir = g_strdup("/tmp/fabricd-XXXXXX");
        g_assert_nonnull(g_mkdtemp(dir));
    }
    return dir;
}

static char *path_in(Fixture *fx, const char *name)
{
    return g_build_filename(fx->dir, name, NULL);
}

/* Start fabricd with `extra` arguments appended; returns its stdout banner. */
static char *start_fabricd(Fixture *fx, const char *const *extra)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_autoptr(GError) err = NULL;
    g_auto(GStrv) wrapper = NULL;
    g_autofree char *log = path_in(fx, "fabricd.log");
    int log_fd = open(log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    char line[256];
    size_t len = 0;
    gint64 deadline = deadline_after(WAIT_MS);

    g_assert_true(g_file_test(FABRICD, G_FILE_TEST_IS_EXECUTABLE));
    /* e.g. FABRICD_TEST_WRAPPER="valgrind --log-file=/tmp/vg.%p" */
    if (g_getenv("FABRICD_TEST_WRAPPER")) {
        g_assert_true(g_shell_parse_argv(g_getenv("FABRICD_TEST_WRAPPER"),
                                         NULL, &wrapper, NULL));
        for (char **w = wrapper; *w; w++) {
            g_ptr_array_add(argv, *w);
        }
    }
    g_ptr_array_add(argv, (char *)FABRICD);
    g_ptr_array_add(argv, "--kind");
    g_ptr_array_add(argv, "eth");
    g_ptr_array_add(argv, "--nodes");
    g_ptr_array_add(argv, "3");
    g_ptr_array_add(argv, "--dir");
    g_ptr_array_add(argv, fx->dir);
    g_ptr_array_add(argv, "--seed");
    g_ptr_array_add(argv, "0x2a");
    for (; extra && *extra; extra++) {
        g_ptr_array_add(argv, (char *)*extra);
    }
    g_ptr_array_add(argv, NULL);
    g_assert_cmpint(log_fd, >=, 0);
    g_assert_true(g_spawn_async_with_pipes_and_fds(
        NULL, (const char *const *)argv->pdata, NULL,
        G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_SEARCH_PATH,
        child_dies_with_parent, NULL,
        -1, -1, log_fd, NULL, NULL, 0, &fx->pid, NULL, &fx->out_fd, NULL,
        &err));
    g_assert_no_error(err);
    close(log_fd);

    /* The banner line comes once the sockets are ready. */
    while (len < sizeof(line) - 1) {
        if (read_exact(fx->out_fd, line + len, 1, deadline) != 1) {
            break;
        }
        if (line[len++] == '\n') {
            break;
        }
    }
    line[len] = '\0';
    g_assert_true(len > 0 && line[len - 1] == '\n');
    line[len - 1] = '\0';

    /* ctl.sock is created last: once it answers, everything is up. */
    g_autofree char *ctl_path = path_in(fx, "ctl.sock");

    while ((fx->ctl = connect_unix(ctl_path)) < 0) {
        g_assert_cmpint(ms_left(deadline), >, 0);
        g_usleep(10000);
    }
    return g_strdup(line);
}

/* A fresh directory, nothing started or connected yet. */
static void fixture_init(Fixture *fx)
{
    memset(fx, 0, sizeof(*fx));
    fx->dir = make_short_tmpdir();
    fx->ctl = -1;
    fx->out_fd = -1;
    fx->ctl_buf = g_string_new(NULL);
    for (int i = 0; i < NODES; i++) {
        fx->port[i] = -1;
    }
}

/* g_test_add() setup: `extra` is a NULL-terminated argument list or NULL. */
static void fixture_setup(Fixture *fx, gconstpointer extra)
{
    fixture_init(fx);
    g_free(start_fabricd(fx, extra));
}

/* Reap the daemon, waiting at most `ms`; true if it exited. */
static bool reap(Fixture *fx, int ms)
{
    gint64 deadline = deadline_after(ms);

    while (!fx->reaped) {
        pid_t r = waitpid(fx->pid, &fx->wait_status, WNOHANG);

        if (r == fx->pid) {
            fx->reaped = true;
            break;
        }
        if (ms_left(deadline) == 0) {
            return false;
        }
        g_usleep(5000);
    }
    return true;
}

static void remove_tree(const char *dir)
{
    GDir *d = g_dir_open(dir, 0, NULL);
    const char *name;

    if (!d) {
        return;
    }
    while ((name = g_dir_read_name(d))) {
        g_autofree char *p = g_build_filename(dir, name, NULL);

        g_unlink(p);
    }
    g_dir_close(d);
    g_rmdir(dir);
}

static void fixture_teardown(Fixture *fx, gconstpointer unused)
{
    if (fx->pid && !fx->reaped) {
        /* Whatever a test did, the daemon must still shut down cleanly. */
        kill(fx->pid, SIGTERM);
        if (!reap(fx, WAIT_MS)) {
            kill(fx->pid, SIGKILL);
            reap(fx, WAIT_MS);
            g_test_message("fabricd ignored SIGTERM");
            g_test_fail();
        } else if (!WIFEXITED(fx->wait_status) ||
                   WEXITSTATUS(fx->wait_status) != 0) {
            g_test_message("fabricd exited with status 0x%x",
                           fx->wait_status);
            g_test_fail();
        }
    }
    if (fx->pid) {
        g_spawn_close_pid(fx->pid);
    }
    if (g_test_verbose()) {
        g_autofree char *log = path_in(fx, "fabricd.log");
        g_autofree char *text = NULL;

        if (g_file_get_contents(log, &text, NULL, NULL)) {
            g_test_message("fabricd log:\n%s", text);
        }
    }
    for (int i = 0; i < NODES; i++) {
        if (fx->port[i] >= 0) {
            close(fx->port[i]);
        }
    }
    if (fx->ctl >= 0) {
        close(fx->ctl);
    }
    if (fx->out_fd >= 0) {
        close(fx->out_fd);
    }
    g_string_free(fx->ctl_buf, TRUE);
    remove_tree(fx->dir);
    g_free(fx->dir);
}

/* ---- control socket ---- */

/* Read one answer; lines go to *answer.  True on OK, false on ERR. */
static bool ctl_answer(Fixture *fx, char **answer)
{
    GString *out = g_string_new(NULL);
    gint64 deadline = deadline_after(WAIT_MS);

    for (;;) {
        char *nl = memchr(fx->ctl_buf->str, '\n', fx->ctl_buf->len);

        if (!nl) {
            char c;

            g_assert_cmpint(read_exact(fx->ctl, &c, 1, deadline), ==, 1);
            g_string_append_c(fx->ctl_buf, c);
            continue;
        }
        g_autofree char *line = g_strndup(fx->ctl_buf->str,
                                          nl - fx->ctl_buf->str);

        g_string_erase(fx->ctl_buf, 0, nl - fx->ctl_buf->str + 1);
        if (strcmp(line, "OK") == 0 || g_str_has_prefix(line, "ERR ")) {
            bool ok = line[0] == 'O';

            if (!ok) {
                g_string_assign(out, line + 4);
            }
            if (answer) {
                *answer = g_string_free(out, FALSE);
            } else {
                g_string_free(out, TRUE);
            }
            return ok;
        }
        g_string_append_printf(out, "%s\n", line);
    }
}

/* Send one command on the fixture's control connection. */
static bool ctl_try(Fixture *fx, const char *command, char **answer)
{
    write_all(fx->ctl, command, strlen(command));
    write_all(fx->ctl, "\n", 1);
    return ctl_answer(fx, answer);
}

/* A command that must succeed; returns its answer lines. */
static char *ctl(Fixture *fx, const char *command)
{
    char *answer = NULL;

    if (!ctl_try(fx, command, &answer)) {
        g_test_message("'%s' failed: %s", command, answer);
        g_assert_not_reached();
    }
    return answer;
}

static void ctl_ok(Fixture *fx, const char *command)
{
    g_free(ctl(fx, command));
}

/* A command that must fail with a message containing `fragment`. */
static void ctl_err(Fixture *fx, const char *command, const char *fragment)
{
    g_autofree char *answer = NULL;

    g_assert_false(ctl_try(fx, command, &answer));
    if (!strstr(answer, fragment)) {
        g_test_message("'%s' -> ERR %s; expected '%s'", command, answer,
                       fragment);
    }
    g_assert_nonnull(strstr(answer, fragment));
}

/* A field of one `counters` record, e.g. ("link 0>1", "dropped"). */
static guint64 counter(Fixture *fx, const char *record, const char *key)
{
    g_autofree char *all = ctl(fx, "counters");
    g_auto(GStrv) lines = g_strsplit(all, "\n", -1);
    g_autofree char *prefix = g_strdup_printf("%s ", record);
    g_autofree char *needle = g_strdup_printf(" %s=", key);

    for (char **l = lines; *l; l++) {
        if (g_str_has_prefix(*l, prefix)) {
            const char *at = strstr(*l, needle);

            g_assert_nonnull(at);
            return g_ascii_strtoull(at + strlen(needle), NULL, 10);
        }
    }
    g_test_message("no '%s' record in:\n%s", record, all);
    g_assert_not_reached();
}

static void wait_counter(Fixture *fx, const char *record, const char *key,
                         guint64 want)
{
    gint64 deadline = deadline_after(WAIT_MS);
    guint64 got;

    while ((got = counter(fx, record, key)) != want && ms_left(deadline)) {
        g_usleep(5000);
    }
    if (got != want) {
        g_test_message("%s %s: got %" G_GUINT64_FORMAT ", want %"
                       G_GUINT64_FORMAT, record, key, got, want);
    }
    g_assert_cmpuint(got, ==, want);
}

static void wait_port_rx(Fixture *fx, int port, guint64 frames)
{
    g_autofree char *record = g_strdup_printf("port %d", port);

    wait_counter(fx, record, "rx_frames", frames);
}

/* ---- fake QEMU ports ---- */

static int connect_port(Fixture *fx, int i)
{
    g_autofree char *name = g_strdup_printf("node%d.sock", i);
    g_autofree char *path = path_in(fx, name);
    int fd = connect_unix(path);

    g_assert_cmpint(fd, >=, 0);
    return fd;
}

static void connect_all(Fixture *fx)
{
    for (int i = 0; i < NODES; i++) {
        g_autofree char *record = g_strdup_printf("port %d", i);

        fx->port[i] = connect_port(fx, i);
        wait_counter(fx, record, "connected", 1);
    }
}

static Frame make_frame(const uint8_t *dst, const uint8_t *src, uint8_t tag,
                        size_t len)
{
    Frame f = { .len = len };

    g_assert_cmpuint(len, <=, sizeof(f.data));
    memcpy(f.data, dst, 6);
    memcpy(f.data + 6, src, 6);
    f.data[12] = ETHERTYPE_TEST >> 8;
    f.data[13] = ETHERTYPE_TEST & 0xff;
    for (size_t i = 14; i < len; i++) {
        f.data[i] = tag + i;
    }
    return f;
}

static void send_raw_len(int fd, uint32_t len, const void *data, size_t n)
{
    uint8_t be[4] = { len >> 24, len >> 16, len >> 8, len };

    write_all(fd, be, 4);
    if (n) {
        write_all(fd, data, n);
    }
}

static void send_frame(int fd, const Frame *f)
{
    send_raw_len(fd, f->len, f->data, f->len);
}

/* Receive one frame; false on timeout or EOF. */
static bool recv_frame(int fd, Frame *f, int ms)
{
    gint64 deadline = deadline_after(ms);
    uint8_t be[4];
    uint32_t len;

    if (read_exact(fd, be, 4, deadline) != 1) {
        return false;
    }
    len = (uint32_t)be[0] << 24 | be[1] << 16 | be[2] << 8 | be[3];
    g_assert_cmpuint(len, <=, sizeof(f->data));
    f->len = len;
    return read_exact(fd, f->data, len, deadline) == 1;
}

static void expect_frame(int fd, const Frame *want)
{
    Frame got;

    g_assert_true(recv_frame(fd, &got, WAIT_MS));
    g_assert_cmpmem(got.data, got.len, want->data, want->len);
}

static void expect_nothing(int fd)
{
    struct pollfd pfd = { .fd = fd, .events = POLLIN };

    g_assert_cmpint(poll(&pfd, 1, QUIET_MS), ==, 0);
}

/* Teach the switch every node's MAC with one broadcast each. */
static void learn_all(Fixture *fx)
{
    for (int i = 0; i < NODES; i++) {
        Frame hello = make_frame(mac_bcast, mac[i], 0x10 + i, 60);

        send_frame(fx->port[i], &hello);
        for (int j = 0; j < NODES; j++) {
            if (j != i) {
                expect_frame(fx->port[j], &hello);
            }
        }
    }
}

/* ---- other programs ---- */

/*
 * One line per packet of a capture, the `fields` (NULL-terminated)
 * separated by tabs; NULL if tshark is missing.
 */
static char **tshark_lines(const char *path, const char *const *fields)
{
    g_autoptr(GPtrArray) argv = g_ptr_array_new();
    g_autofree char *out = NULL;
    int status;

    if (!g_file_test(TSHARK, G_FILE_TEST_IS_EXECUTABLE)) {
        return NULL;
    }
    g_ptr_array_add(argv, TSHARK);
    g_ptr_array_add(argv, "-r");
    g_ptr_array_add(argv, (char *)path);
    g_ptr_array_add(argv, "-T");
    g_ptr_array_add(argv, "fields");
    for (; *fields; fields++) {
        g_ptr_array_add(argv, "-e");
        g_ptr_array_add(argv, (char *)*fields);
    }
    g_ptr_array_add(argv, NULL);
    g_assert_true(g_spawn_sync(NULL, (char **)argv->pdata, NULL,
                               G_SPAWN_STDERR_TO_DEV_NULL, NULL, NULL, &out,
                               NULL, &status, NULL));
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    g_strchomp(out);
    return *out ? g_strsplit(out, "\n", -1) : g_new0(char *, 1);
}

/* Lines tshark prints for one field of a capture, or NULL without tshark. */
static char **tshark_fields(const char *path, const char *field)
{
    const char *const fields[] = { field, NULL };

    return tshark_lines(path, fields);
}

/* Run a program from the repository root; returns its exit status. */
static int run(const char *const *argv, const char *cwd, char **out,
               char **err)
{
    g_autoptr(GError) error = NULL;
    int status;

    g_assert_true(g_spawn_sync(cwd, (char **)argv, NULL, 0, NULL, NULL, out,
                               err, &status, &error));
    g_assert_no_error(error);
    g_assert_true(WIFEXITED(status));
    return WEXITSTATUS(status);
}

/* fabricd refuses `argv`: exit 2 and one line that contains `message`. */
static void expect_refused(const char *const *argv, const char *message)
{
    g_autofree char *out = NULL, *err = NULL;

    g_assert_cmpint(run(argv, NULL, &out, &err), ==, 2);
    if (!strstr(err, message)) {
        g_test_message("stderr '%s', expected '%s'", err, message);
    }
    g_assert_nonnull(strstr(err, message));
    g_assert_true(g_str_has_prefix(err, "fabricd: "));
    g_assert_cmpint(strchr(err, '\n') - err, ==, strlen(err) - 1);
}

#endif
