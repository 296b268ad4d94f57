/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Cluster run directory, saved state and build paths. */
#include "vcluster.h"

#include <fcntl.h>
#include <sys/file.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define STATE_FILE "cluster.ini"

const char *vc_run_base(void)
{
    static char *base;

    if (!base) {
        const char *env = g_getenv("VCLUSTER_RUNDIR");
        if (env && *env) {
            base = g_strdup(env);
        } else if (geteuid() == 0) {
            base = g_strdup("/run/vcluster");
        } else if (g_getenv("XDG_RUNTIME_DIR")) {
            base = g_build_filename(g_getenv("XDG_RUNTIME_DIR"), "vcluster",
                                    NULL);
        } else {
            base = g_strdup_printf("/tmp/vcluster-%u", (unsigned)geteuid());
        }
    }
    return base;
}

gboolean vc_name_valid(const char *name, GError **err)
{
    gsize len = strlen(name);
    gboolean ok = len > 0 && len <= 24 && g_ascii_isalnum(name[0]);

    for (gsize i = 0; ok && i < len; i++) {
        ok = g_ascii_isalnum(name[i]) || name[i] == '-' || name[i] == '_';
    }
    if (!ok) {
        g_set_error(err, VC_ERROR, 0,
                    "bad cluster name '%s': use 1-24 letters, digits, '-' "
                    "or '_', starting with a letter or digit", name);
    }
    return ok;
}

char *vc_cluster_dir(const char *name)
{
    return g_build_filename(vc_run_base(), name, NULL);
}

gboolean vc_cluster_lock(const char *name, int timeout_s, GError **err)
{
    g_autofree char *file = g_strdup_printf(".%s.lock", name);
    g_autofree char *path = g_build_filename(vc_run_base(), file, NULL);
    const char *env = g_getenv("VCLUSTER_LOCK_TIMEOUT_S");
    gboolean said = FALSE;
    int fd;

    if (env && *env) {
        timeout_s = atoi(env);
    }
    gint64 deadline = g_get_monotonic_time() +
                      (gint64)timeout_s * G_USEC_PER_SEC;
    g_mkdir_with_parents(vc_run_base(), 0755);
    /* close-on-exec: a QEMU or fabricd we start must not hold it */
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) {
        g_set_error(err, VC_ERROR, errno, "%s: %s", path, g_strerror(errno));
        return FALSE;
    }
    while (flock(fd, LOCK_EX | LOCK_NB) < 0) {
        if (errno != EWOULDBLOCK || g_get_monotonic_time() > deadline) {
            g_set_error(err, VC_ERROR, errno,
                        "another vcluster is starting or stopping cluster "
                        "'%s' (%s is locked)", name, path);
            close(fd);
            return FALSE;
        }
        if (!said) {
            g_printerr("vcluster: waiting for another vcluster that starts "
                       "or stops cluster '%s'\n", name);
            said = TRUE;
        }
        vc_sleep_ms(100);
    }
    return TRUE;    /* fd stays open: the lock is ours until we exit */
}

static char *find_top(void)
{
    const char *env = g_getenv("VCLUSTER_TOP");
    if (env && *env) {
        return g_strdup(env);
    }
    /* The binary lives in <top>/build/bin/. */
    g_autofree char *exe = g_file_read_link("/proc/self/exe", NULL);
    if (!exe) {
        return g_get_current_dir();
    }
    g_autofree char *bin = g_path_get_dirname(exe);
    g_autofree char *build = g_path_get_dirname(bin);
    return g_path_get_dirname(build);
}

static gboolean need_file(const char *path, const char *what, GError **err)
{
    if (g_file_test(path, G_FILE_TEST_EXISTS)) {
        return TRUE;
    }
    g_set_error(err, VC_ERROR, ENOENT, "%s missing (%s); run: make", what,
                path);
    return FALSE;
}

gboolean vc_paths_find(VcPaths *p, GError **err)
{
    memset(p, 0, sizeof(*p));
    p->top = find_top();
    p->qemu = g_build_filename(p->top, "build/qemu/qemu-system-x86_64", NULL);
    p->fabricd = g_build_filename(p->top, "build/bin/fabricd", NULL);
    p->fabricctl = g_build_filename(p->top, "build/bin/fabricctl", NULL);
    p->kernel = g_build_filename(p->top, "build/image/vmlinuz", NULL);
    p->initrd = g_build_filename(p->top, "build/image/initramfs.cpio.gz",
                                 NULL);
    return need_file(p->qemu, "our QEMU", err) &&
           need_file(p->fabricd, "fabricd", err) &&
           need_file(p->fabricctl, "fabricctl", err) &&
           need_file(p->kernel, "the guest kernel", err) &&
           need_file(p->initrd, "the guest image", err);
}

void vc_paths_clear(VcPaths *p)
{
    g_free(p->top);
    g_free(p->qemu);
    g_free(p->fabricd);
    g_free(p->fabricctl);
    g_free(p->kernel);
    g_free(p->initrd);
}

Cluster *cluster_new(const char *name)
{
    Cluster *c = g_new0(Cluster, 1);
    c->name = g_strdup(name);
    c->dir = vc_cluster_dir(name);
    c->state = g_key_file_new();
    c->mem_mb = VC_DEFAULT_MEM_MB;
    c->icount_shift = -1;
    c->quantum_ns = -1;
    return c;
}

void cluster_free(Cluster *c)
{
    if (!c) {
        return;
    }
    g_free(c->name);
    g_free(c->dir);
    g_free(c->accel);
    g_free(c->topology);
    g_free(c->myri_topology);
    g_strfreev(c->fabrics);
    g_free(c->seed);
    g_free(c->faults);
    g_free(c->run_dir);
    g_key_file_free(c->state);
    g_free(c);
}

gboolean cluster_save(Cluster *c, GError **err)
{
    GKeyFile *k = c->state;
    g_key_file_set_string(k, "cluster", "name", c->name);
    g_key_file_set_string(k, "cluster", "mode",
                          c->mode == VC_MODE_LIBVIRT ? "libvirt" : "direct");
    g_key_file_set_integer(k, "cluster", "nodes", c->nodes);
    g_key_file_set_integer(k, "cluster", "mem_mb", c->mem_mb);
    g_key_file_set_string(k, "cluster", "accel", c->accel ? c->accel : "");
    g_key_file_set_string(k, "cluster", "topology",
                          c->topology ? c->topology : "ring");
    if (c->myri_topology) {
        g_key_file_set_string(k, "cluster", "myrinet_topology",
                              c->myri_topology);
    }
    g_key_file_set_string_list(k, "cluster", "fabrics",
                               (const char *const *)c->fabrics,
                               g_strv_length(c->fabrics));
    g_key_file_set_integer(k, "cluster", "icount_shift", c->icount_shift);
    g_key_file_set_int64(k, "cluster", "quantum_ns", c->quantum_ns);
    if (c->seed) {
        g_key_file_set_string(k, "cluster", "seed", c->seed);
    }
    if (c->faults) {
        g_key_file_set_string(k, "cluster", "faults", c->faults);
    }
    if (c->run_dir) {
        g_key_file_set_string(k, "cluster", "run_dir", c->run_dir);
    }
    g_autofree char *path = g_build_filename(c->dir, STATE_FILE, NULL);
    return g_key_file_save_to_file(k, path, err);
}

Cluster *cluster_load(const char *name, GError **err)
{
    g_autofree char *dir = vc_cluster_dir(name);
    g_autofree char *path = g_build_filename(dir, STATE_FILE, NULL);
    Cluster *c = cluster_new(name);

    if (!g_key_file_load_from_file(c->state, path, G_KEY_FILE_NONE, NULL)) {
        g_set_error(err, VC_ERROR, ENOENT,
                    "no cluster named '%s' (no %s); see: vcluster list", name,
                    path);
        cluster_free(c);
        return NULL;
    }
    GKeyFile *k = c->state;
    g_autofree char *mode = g_key_file_get_string(k, "cluster", "mode", NULL);
    c->mode = g_strcmp0(mode, "libvirt") == 0 ? VC_MODE_LIBVIRT
                                              : VC_MODE_DIRECT;
    c->nodes = g_key_file_get_integer(k, "cluster", "nodes", NULL);
    c->mem_mb = g_key_file_get_integer(k, "cluster", "mem_mb", NULL);
    c->accel = g_key_file_get_string(k, "cluster", "accel", NULL);
    c->topology = g_key_file_get_string(k, "cluster", "topology", NULL);
    c->myri_topology = g_key_file_get_string(k, "cluster",
                                             "myrinet_topology", NULL);
    c->fabrics = g_key_file_get_string_list(k, "cluster", "fabrics", NULL,
                                            NULL);
    c->icount_shift = g_key_file_has_key(k, "cluster", "icount_shift", NULL)
        ? g_key_file_get_integer(k, "cluster", "icount_shift", NULL) : -1;
    c->quantum_ns = g_key_file_has_key(k, "cluster", "quantum_ns", NULL)
        ? g_key_file_get_int64(k, "cluster", "quantum_ns", NULL) : -1;
    c->seed = g_key_file_get_string(k, "cluster", "seed", NULL);
    c->faults = g_key_file_get_string(k, "cluster", "faults", NULL);
    c->run_dir = g_key_file_get_string(k, "cluster", "run_dir", NULL);
    if (!c->fabrics) {
        c->fabrics = g_new0(char *, 1);
    }
    if (c->nodes < 1 || c->nodes > VC_MAX_NODES) {
        g_set_error(err, VC_ERROR, EINVAL, "%s: corrupt state (nodes=%d)",
                    path, c->nodes);
        cluster_free(c);
        return NULL;
    }
    return c;
}

char *cluster_node_dir(Cluster *c, int node)
{
    g_autofree char *leaf = g_strdup_printf("node%d", node);
    return g_build_filename(c->dir, leaf, NULL);
}

char *cluster_node_file(Cluster *c, int node, const char *file)
{
    g_autofree char *dir = cluster_node_dir(c, node);
    return g_build_filename(dir, file, NULL);
}

char *cluster_fabric_dir(Cluster *c, const char *kind)
{
    g_autofree char *leaf = g_strdup_printf("fabric-%s", kind);
    return g_build_filename(c->dir, leaf, NULL);
}

char *cluster_domain_name(Cluster *c, int node)
{
    return g_strdup_printf("vc-%s-node%d", c->name, node);
}

char *cluster_node_ip(int node)
{
    return g_strdup_printf("%s.%d", VC_NET_PREFIX, node + 1);
}

char *cluster_default_name(const char *given)
{
    if (given) {
        return g_strdup(given);
    }
    const char *env = g_getenv("VCLUSTER_NAME");
    if (env && *env) {
        return g_strdup(env);
    }
    /* Exactly one cluster exists: that one. */
    g_autoptr(GDir) d = g_dir_open(vc_run_base(), 0, NULL);
    char *only = NULL;
    int count = 0;
    const char *entry;
    while (d && (entry = g_dir_read_name(d))) {
        g_autofree char *ini = g_build_filename(vc_run_base(), entry,
                                                STATE_FILE, NULL);
        if (g_file_test(ini, G_FILE_TEST_EXISTS)) {
            count++;
            g_free(only);
            only = g_strdup(entry);
        }
    }
    if (count == 1) {
        return only;
    }
    g_free(only);
    return g_strdup(VC_DEFAULT_NAME);
}

GArray *cluster_parse_nodes(Cluster *c, const char *spec, GError **err)
{
    GArray *ids = g_array_new(FALSE, FALSE, sizeof(int));

    if (g_strcmp0(spec, "all") == 0) {
        for (int i = 0; i < c->nodes; i++) {
            g_array_append_val(ids, i);
        }
        return ids;
    }
    g_auto(GStrv) parts = g_strsplit(spec, ",", -1);
    for (int i = 0; parts[i]; i++) {
        const char *s = parts[i];
        if (g_str_has_prefix(s, "node")) {
            s += 4;
        }
        guint64 id;
        if (!g_ascii_string_to_unsigned(s, 10, 0, c->nodes - 1, &id, NULL)) {
            g_set_error(err, VC_ERROR, EINVAL,
                        "bad node '%s': cluster '%s' has nodes 0..%d "
                        "(or 'all')", parts[i], c->name, c->nodes - 1);
            g_array_free(ids, TRUE);
            return NULL;
        }
        int n = (int)id;
        g_array_append_val(ids, n);
    }
    return ids;
}

char *run_trace_path(const char *run_dir, const char *kind)
{
    return g_strdup_printf("%s/trace-%s.pcapng", run_dir, kind);
}

char *run_output_path(const char *run_dir, int node)
{
    return g_strdup_printf("%s/node%d.out", run_dir, node);
}
