/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vcluster: boot and drive a cluster of QEMU VMs linked by fabricd. */
#include "vcluster.h"

#include <stdio.h>
#include <string.h>

static const char usage[] =
    "usage: vcluster COMMAND [OPTIONS]\n"
    "\n"
    "  up [-n N] [--fabric eth,ps1,myrinet,telegraphos]\n"
    "     [--topology ring|torus:WxH] [--myrinet-topology FILE]\n"
    "     [--mem MB] [--accel auto|tcg|kvm]\n"
    "     [--libvirt] [--name NAME] [--timeout S]\n"
    "     [--lockstep [--icount-shift N] [--lockstep-quantum NS]]\n"
    "     [--seed S] [--faults FILE]                 boot a cluster\n"
    "  run [up's options] [--out DIR] -- COMMAND...  every node runs COMMAND\n"
    "                                                from boot; outputs,\n"
    "                                                exit codes, traces\n"
    "  replay RUNDIR                                 run it again, compare\n"
    "  exec [-d] [-i] [-t S] NODE|all -- CMD...      run a command on nodes\n"
    "  cp NODE:PATH LOCALPATH | LOCALPATH NODE:PATH  copy a file (- for\n"
    "                                                stdin/stdout)\n"
    "  mpirun [--timeout S] [--preload LIB] [--] ARGS...\n"
    "                                                Open MPI's mpirun on\n"
    "                                                node0\n"
    "  status                                        nodes, fabric, agents\n"
    "  console NODE [--no-follow]                    follow a serial log\n"
    "  reboot [--no-wait] [-t S] NODE|all            reset nodes, await boot\n"
    "  fault ARGS...      fault rules (fabricctl fault: add/del/list/clear/\n"
    "                     load FILE)\n"
    "  link down|up LINK  take a fabric link down or up\n"
    "  capture start FILE | stop | status            pcapng capture\n"
    "  fabric ARGS...     any fabricctl command (status, counters, table)\n"
    "  list                                          clusters on this host\n"
    "  trace digest FILE|RUNDIR...                   SHA-256 of a run's traces\n"
    "  trace diff RUN_A RUN_B                        their first difference\n"
    "  down [--all]                                  stop and clean up\n"
    "\n"
    "Every command takes --name NAME (default: $VCLUSTER_NAME, the only\n"
    "cluster, or 'vc').  NODE is 0..N-1, nodeI, a comma list, or all.\n"
    "See docs/user-guide.md.\n";

int main(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
        !strcmp(argv[1], "help")) {
        fputs(usage, argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    const char *cmd = argv[1];
    argv[1] = g_strdup_printf("vcluster %s", cmd);
    argc--;
    argv++;

    if (!strcmp(cmd, "up")) {
        return cmd_up(argc, argv);
    } else if (!strcmp(cmd, "down")) {
        return cmd_down(argc, argv);
    } else if (!strcmp(cmd, "run")) {
        return cmd_run(argc, argv);
    } else if (!strcmp(cmd, "replay")) {
        return cmd_replay(argc, argv);
    } else if (!strcmp(cmd, "exec")) {
        return cmd_exec(argc, argv);
    } else if (!strcmp(cmd, "cp")) {
        return cmd_cp(argc, argv);
    } else if (!strcmp(cmd, "mpirun")) {
        return cmd_mpirun(argc, argv);
    } else if (!strcmp(cmd, "status")) {
        return cmd_status(argc, argv);
    } else if (!strcmp(cmd, "console")) {
        return cmd_console(argc, argv);
    } else if (!strcmp(cmd, "reboot")) {
        return cmd_reboot(argc, argv);
    } else if (!strcmp(cmd, "list")) {
        return cmd_list(argc, argv);
    } else if (!strcmp(cmd, "trace")) {
        return cmd_trace(argc, argv);
    } else if (!strcmp(cmd, "fault") || !strcmp(cmd, "capture") ||
               !strcmp(cmd, "link") || !strcmp(cmd, "fabric")) {
        return cmd_fabricctl(cmd, argc, argv);
    }
    g_printerr("vcluster: unknown command '%s'; see: vcluster --help\n", cmd);
    return 2;
}
