/* SPDX-License-Identifier: GPL-2.0-or-later */
/* --libvirt: the same nodes as libvirt domains on qemu:///system. */
#include "vcluster.h"

#include <errno.h>
#include <pwd.h>
#include <stdarg.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define LIBVIRT_URI "qemu:///system"
#define QEMU_CONF "/etc/libvirt/qemu.conf"
#define CONF_BEGIN "# BEGIN vcluster"
#define CONF_END "# END vcluster"

/* Root without systemd, cgroups or AppArmor (docs/libvirt.md). */
static const char *const conf_settings[][2] = {
    { "user", "\"root\"" },
    { "group", "\"root\"" },
    { "dynamic_ownership", "0" },
    { "remember_owner", "0" },
    { "cgroup_controllers", "[ ]" },
    { "security_driver", "\"none\"" },
    { "namespaces", "[ ]" },
};

static gboolean virsh(char **out, GError **err, ...)
{
    GPtrArray *argv = g_ptr_array_new();
    va_list ap;
    const char *arg;

    g_ptr_array_add(argv, "virsh");
    g_ptr_array_add(argv, "-q");
    g_ptr_array_add(argv, "-c");
    g_ptr_array_add(argv, LIBVIRT_URI);
    va_start(ap, err);
    while ((arg = va_arg(ap, const char *))) {
        g_ptr_array_add(argv, (char *)arg);
    }
    va_end(ap);
    g_ptr_array_add(argv, NULL);

    g_autofree char *sout = NULL, *serr = NULL;
    int status;
    gboolean ok = g_spawn_sync(NULL, (char **)argv->pdata, NULL,
                               G_SPAWN_SEARCH_PATH |
                               G_SPAWN_STDIN_FROM_DEV_NULL,
                               NULL, NULL, &sout, &serr, &status, err);
    g_ptr_array_free(argv, TRUE);
    if (ok && !g_spawn_check_wait_status(status, NULL)) {
        g_set_error(err, VC_ERROR, 0, "virsh: %s", g_strstrip(serr));
        ok = FALSE;
    }
    if (ok && out) {
        *out = g_strdup(g_strstrip(sout));
    }
    return ok;
}

/* Put our settings in qemu.conf once, commenting out conflicting lines. */
static gboolean write_qemu_conf(GError **err)
{
    g_autofree char *old = NULL;
    g_file_get_contents(QEMU_CONF, &old, NULL, NULL);
    if (old && strstr(old, CONF_BEGIN)) {
        return TRUE;
    }
    GString *out = g_string_new(NULL);
    g_auto(GStrv) lines = g_strsplit(old ? old : "", "\n", -1);
    for (int i = 0; lines[i]; i++) {
        if (!lines[i + 1] && !*lines[i]) {
            break;
        }
        gboolean ours = FALSE;
        for (gsize s = 0; s < G_N_ELEMENTS(conf_settings); s++) {
            const char *key = conf_settings[s][0];
            const char *l = lines[i];
            while (*l == ' ' || *l == '\t') {
                l++;
            }
            gsize n = strlen(key);
            if (!strncmp(l, key, n) && (l[n] == ' ' || l[n] == '=')) {
                ours = TRUE;
            }
        }
        g_string_append_printf(out, "%s%s\n", ours ? "#vcluster# " : "",
                               lines[i]);
    }
    g_string_append(out, CONF_BEGIN
                    " (root without cgroups or AppArmor; docs/libvirt.md)\n");
    for (gsize s = 0; s < G_N_ELEMENTS(conf_settings); s++) {
        g_string_append_printf(out, "%s = %s\n", conf_settings[s][0],
                               conf_settings[s][1]);
    }
    g_string_append(out, CONF_END "\n");
    g_mkdir_with_parents("/etc/libvirt", 0755);
    gboolean ok = g_file_set_contents(QEMU_CONF, out->str, -1, err);
    g_string_free(out, TRUE);
    return ok;
}

static gboolean start_daemon(const char *bin, GError **err)
{
    char *argv[] = { (char *)bin, "--daemon", NULL };
    int status;
    if (!g_spawn_sync(NULL, argv, NULL,
                      G_SPAWN_SEARCH_PATH | G_SPAWN_STDIN_FROM_DEV_NULL,
                      NULL, NULL, NULL, NULL, &status, err)) {
        return FALSE;
    }
    if (!g_spawn_check_wait_status(status, NULL)) {
        g_set_error(err, VC_ERROR, 0, "%s --daemon failed", bin);
        return FALSE;
    }
    return TRUE;
}

static gboolean daemon_running(const char *name)
{
    char *argv[] = { "pgrep", "-x", (char *)name, NULL };
    int status;
    return g_spawn_sync(NULL, argv, NULL,
                        G_SPAWN_SEARCH_PATH | G_SPAWN_STDOUT_TO_DEV_NULL |
                        G_SPAWN_STDERR_TO_DEV_NULL,
                        NULL, NULL, NULL, NULL, &status, NULL) &&
           g_spawn_check_wait_status(status, NULL);
}

/*
 * What Debian's libvirt-daemon-system would set up, without pulling in its
 * systemd units and default NAT network: state directories and the
 * libvirt-qemu account that libvirtd looks up before reading qemu.conf.
 */
static gboolean prepare_host(GError **err)
{
    static const char *const dirs[] = {
        "/var/log/libvirt/qemu", "/var/lib/libvirt/qemu",
        "/var/cache/libvirt/qemu", "/run/libvirt",
    };
    for (gsize i = 0; i < G_N_ELEMENTS(dirs); i++) {
        if (g_mkdir_with_parents(dirs[i], 0755) < 0) {
            g_set_error(err, VC_ERROR, errno, "mkdir %s: %s", dirs[i],
                        g_strerror(errno));
            return FALSE;
        }
    }
    if (!getpwnam("libvirt-qemu")) {
        char *argv[] = { "useradd", "--system", "--user-group",
                         "--no-create-home", "--home-dir", "/var/lib/libvirt",
                         "--shell", "/usr/sbin/nologin", "libvirt-qemu",
                         NULL };
        int status;
        if (!g_spawn_sync(NULL, argv, NULL, G_SPAWN_SEARCH_PATH, NULL, NULL,
                          NULL, NULL, &status, err)) {
            return FALSE;
        }
        if (!g_spawn_check_wait_status(status, NULL)) {
            g_set_error(err, VC_ERROR, 0,
                        "useradd libvirt-qemu failed (libvirtd needs it)");
            return FALSE;
        }
    }
    return write_qemu_conf(err);
}

gboolean libvirt_ensure_daemon(GError **err)
{
    if (geteuid() != 0) {
        g_set_error(err, VC_ERROR, EPERM,
                    "--libvirt uses qemu:///system and needs root; "
                    "run: sudo vcluster up --libvirt ...");
        return FALSE;
    }
    g_autofree char *libvirtd = g_find_program_in_path("libvirtd");
    g_autofree char *virsh_bin = g_find_program_in_path("virsh");
    if (!libvirtd || !virsh_bin) {
        g_set_error(err, VC_ERROR, ENOENT,
                    "libvirt is not installed; run: make deps");
        return FALSE;
    }
    if (virsh(NULL, NULL, "uri", NULL)) {
        return TRUE;
    }
    if (!prepare_host(err)) {
        return FALSE;
    }
    if (!daemon_running("virtlogd") && !start_daemon("virtlogd", err)) {
        return FALSE;
    }
    /* A libvirtd that is still shutting down gets replaced once it is gone. */
    for (int waited = 0; waited < 30000; waited += 100) {
        if (!daemon_running("libvirtd")) {
            g_print("vcluster: starting libvirtd\n");
            if (!start_daemon("libvirtd", err)) {
                return FALSE;
            }
        }
        if (virsh(NULL, NULL, "uri", NULL)) {
            return TRUE;
        }
        vc_sleep_ms(100);
    }
    g_set_error(err, VC_ERROR, 0,
                "libvirtd does not answer on %s "
                "(see /var/log/libvirt/libvirtd.log)", LIBVIRT_URI);
    return FALSE;
}

char *libvirt_domain_xml(Cluster *c, const VcPaths *p, int node)
{
    g_autofree char *name = cluster_domain_name(c, node);
    g_autofree char *cmdline = node_kernel_cmdline(c, node);
    GString *x = g_string_new(NULL);
    gboolean kvm = g_strcmp0(c->accel, "kvm") == 0;
    /* a random UUID would reach the guest's entropy: make it the name's */
    g_autofree char *md5 = g_compute_checksum_for_string(G_CHECKSUM_MD5,
                                                         name, -1);
    g_autofree char *head = g_markup_printf_escaped(
        "<domain type='%s' "
        "xmlns:qemu='http://libvirt.org/schemas/domain/qemu/1.0'>\n"
        "  <name>%s</name>\n"
        "  <uuid>%.8s-%.4s-%.4s-%.4s-%.12s</uuid>\n"
        "  <description>vcluster %s node %d</description>\n"
        "  <memory unit='MiB'>%d</memory>\n"
        "  <vcpu>1</vcpu>\n"
        "  <os>\n"
        "    <type arch='x86_64' machine='pc'>hvm</type>\n"
        "    <kernel>%s</kernel>\n"
        "    <initrd>%s</initrd>\n"
        "    <cmdline>%s</cmdline>\n"
        "  </os>\n"
        "  <features><acpi/></features>\n"
        "%s"
        "  <on_poweroff>destroy</on_poweroff>\n"
        /* restart: else libvirt turns every reset, `virsh reset` too,
         * into a shutdown; direct mode resets in place as well */
        "  <on_reboot>restart</on_reboot>\n"
        "  <on_crash>destroy</on_crash>\n"
        "  <devices>\n"
        "    <emulator>%s</emulator>\n"
        "    <controller type='usb' model='none'/>\n"
        "    <memballoon model='none'/>\n"
        "  </devices>\n"
        "  <qemu:commandline>\n",
        kvm ? "kvm" : "qemu", name, md5, md5 + 8, md5 + 12, md5 + 16,
        md5 + 20, c->name, node, c->mem_mb, p->kernel,
        p->initrd, cmdline,
        kvm ? "  <cpu mode='host-passthrough'/>\n" : "", p->qemu);
    g_string_append(x, head);

    GPtrArray *args = node_device_args(c, p, node);
    for (guint i = 0; i < args->len; i++) {
        g_autofree char *arg = g_markup_printf_escaped(
            "    <qemu:arg value='%s'/>\n", (char *)args->pdata[i]);
        g_string_append(x, arg);
    }
    g_ptr_array_free(args, TRUE);
    g_string_append(x, "  </qemu:commandline>\n</domain>\n");
    return g_string_free(x, FALSE);
}

gboolean libvirt_start_node(Cluster *c, const VcPaths *p, int node,
                            GError **err)
{
    g_autofree char *name = cluster_domain_name(c, node);
    g_autofree char *xml = libvirt_domain_xml(c, p, node);
    g_autofree char *path = cluster_node_file(c, node, "domain.xml");
    g_autofree char *group = g_strdup_printf("node%d", node);

    /* A leftover domain of the same name (crashed run) goes first. */
    libvirt_remove_node(c, node);
    if (!g_file_set_contents(path, xml, -1, err) ||
        !virsh(NULL, err, "define", path, NULL)) {
        return FALSE;
    }
    g_key_file_set_string(c->state, group, "domain", name);
    /*
     * Lock-step: a node waits for the others from its first instruction,
     * holding QEMU's big lock, so libvirt could not finish starting it:
     * start every node paused, then resume them (libvirt_resume_node).
     */
    if (c->icount_shift >= 0) {
        return virsh(NULL, err, "start", "--paused", name, NULL);
    }
    return virsh(NULL, err, "start", name, NULL);
}

void libvirt_remove_node(Cluster *c, int node)
{
    g_autofree char *name = cluster_domain_name(c, node);
    g_autofree char *state = libvirt_node_state(c, node);

    if (!state) {
        return;
    }
    if (g_strcmp0(state, "shut off") != 0) {
        virsh(NULL, NULL, "destroy", name, NULL);
    }
    g_autoptr(GError) err = NULL;
    if (!virsh(NULL, &err, "undefine", name, NULL)) {
        g_printerr("vcluster: %s\n", err->message);
    }
}

/*
 * All at once: a resumed lock-step node waits for the others holding its
 * big lock, so libvirt could not finish one `resume` before the next.
 */
gboolean libvirt_resume_nodes(Cluster *c, GError **err)
{
    g_autofree GPid *pids = g_new0(GPid, c->nodes);
    gboolean ok = TRUE;

    for (int i = 0; i < c->nodes && ok; i++) {
        g_autofree char *name = cluster_domain_name(c, i);
        const char *argv[] = { "virsh", "-q", "-c", LIBVIRT_URI, "resume",
                               name, NULL };

        ok = g_spawn_async(NULL, (char **)argv, NULL,
                           G_SPAWN_SEARCH_PATH | G_SPAWN_DO_NOT_REAP_CHILD |
                           G_SPAWN_STDOUT_TO_DEV_NULL,
                           NULL, NULL, &pids[i], err);
    }
    for (int i = 0; i < c->nodes; i++) {
        int status;

        if (pids[i] > 0 && waitpid(pids[i], &status, 0) == pids[i] && ok &&
            !g_spawn_check_wait_status(status, NULL)) {
            g_set_error(err, VC_ERROR, 0, "virsh resume of node%d failed",
                        i);
            ok = FALSE;
        }
    }
    return ok;
}

gboolean libvirt_reset_node(Cluster *c, int node, GError **err)
{
    g_autofree char *name = cluster_domain_name(c, node);
    return virsh(NULL, err, "reset", name, NULL);
}

/* "running", "shut off", ..., or NULL when there is no such domain. */
char *libvirt_node_state(Cluster *c, int node)
{
    g_autofree char *name = cluster_domain_name(c, node);
    char *state = NULL;
    if (!virsh(&state, NULL, "domstate", name, NULL)) {
        return NULL;
    }
    return state;
}
