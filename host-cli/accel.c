/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * Accelerator choice.  /dev/kvm can exist and still hang the guest after the
 * BIOS (nested KVM here), so "auto" boots the guest kernel once under KVM and
 * uses it only if the kernel reaches user space.  The verdict is cached per
 * host kernel and QEMU build.
 */
#include "vcluster.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#define PROBE_TIMEOUT_MS 15000
#define PROBE_MARK "Run /init as init process"

/* Beside the QEMU source cache, so that make check-fresh starts without it. */
static char *probe_cache_path(void)
{
    const char *env = g_getenv("VCLUSTER_CACHE");

    if (env && *env) {
        return g_build_filename(env, "kvm-probe", NULL);
    }
    if (geteuid() == 0) {
        return g_strdup("/var/cache/vcluster/kvm-probe");
    }
    return g_build_filename(g_get_user_cache_dir(), "vcluster-kvm-probe",
                            NULL);
}

static char *probe_key(const VcPaths *p)
{
    struct utsname u;
    struct stat st = { 0 };
    uname(&u);
    stat(p->qemu, &st);
    return g_strdup_printf("%s %s %lld", u.release, u.machine,
                           (long long)st.st_mtime);
}

/* TRUE if a guest kernel booted to user space under KVM. */
static gboolean kvm_boots(const VcPaths *p)
{
    g_autofree char *dir = g_dir_make_tmp("vcluster-kvm-XXXXXX", NULL);
    if (!dir) {
        return FALSE;
    }
    g_autofree char *log = g_build_filename(dir, "serial.log", NULL);
    g_autofree char *serial = g_strdup_printf("file:%s", log);
    char *argv[] = {
        p->qemu, "-machine", "pc,accel=kvm", "-cpu", "host", "-m", "256",
        "-nodefaults", "-no-user-config", "-display", "none", "-no-reboot",
        "-L", "/usr/share/seabios", "-L", "/usr/share/qemu",
        "-kernel", p->kernel, "-initrd", p->initrd,
        "-append", "console=ttyS0 panic=-1", "-serial", serial, NULL
    };
    GPid pid;
    gboolean booted = FALSE;

    if (g_spawn_async(NULL, argv, NULL,
                      G_SPAWN_DO_NOT_REAP_CHILD | G_SPAWN_STDIN_FROM_DEV_NULL |
                      G_SPAWN_STDOUT_TO_DEV_NULL | G_SPAWN_STDERR_TO_DEV_NULL,
                      NULL, NULL, &pid, NULL)) {
        for (int t = 0; t < PROBE_TIMEOUT_MS && !booted; t += 100) {
            g_autofree char *text = NULL;
            if (g_file_get_contents(log, &text, NULL, NULL)) {
                booted = strstr(text, PROBE_MARK) != NULL;
            }
            if (!booted && !proc_alive(pid)) {
                break;
            }
            vc_sleep_ms(100);
        }
        kill(pid, SIGKILL);
        proc_stop(pid, 2000);
        g_spawn_close_pid(pid);
    }
    unlink(log);
    rmdir(dir);
    return booted;
}

char *accel_choose(const char *requested, const VcPaths *p, char **why,
                   GError **err)
{
    if (g_strcmp0(requested, "tcg") == 0) {
        *why = g_strdup("requested");
        return g_strdup("tcg");
    }
    gboolean have_kvm = access("/dev/kvm", R_OK | W_OK) == 0;
    if (g_strcmp0(requested, "kvm") == 0) {
        if (!have_kvm) {
            g_set_error(err, VC_ERROR, ENODEV,
                        "--accel kvm: /dev/kvm is not usable (%s); "
                        "use --accel tcg", g_strerror(errno));
            return NULL;
        }
        *why = g_strdup("requested");
        return g_strdup("kvm");
    }
    if (g_strcmp0(requested, "auto") != 0) {
        g_set_error(err, VC_ERROR, EINVAL,
                    "bad --accel '%s': use auto, tcg or kvm", requested);
        return NULL;
    }
    if (!have_kvm) {
        *why = g_strdup("no usable /dev/kvm");
        return g_strdup("tcg");
    }

    g_autofree char *cache = probe_cache_path();
    g_autofree char *key = probe_key(p);
    g_autofree char *cached = NULL;
    gboolean works;
    if (g_file_get_contents(cache, &cached, NULL, NULL) &&
        g_str_has_prefix(cached, key) && cached[strlen(key)] == '=') {
        works = g_str_has_prefix(cached + strlen(key) + 1, "works");
        *why = g_strdup_printf("KVM probe (cached in %s): guest %s", cache,
                               works ? "boots" : "hangs");
    } else {
        g_print("vcluster: probing KVM (boots the guest kernel once, "
                "up to %d s)\n", PROBE_TIMEOUT_MS / 1000);
        works = kvm_boots(p);
        g_autofree char *dir = g_path_get_dirname(cache);
        g_mkdir_with_parents(dir, 0755);
        g_autofree char *line = g_strdup_printf("%s=%s\n", key,
                                                works ? "works" : "hangs");
        g_file_set_contents(cache, line, -1, NULL);
        *why = g_strdup_printf("KVM probe: guest %s under KVM",
                               works ? "boots" : "hangs");
    }
    return g_strdup(works ? "kvm" : "tcg");
}
