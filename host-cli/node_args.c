/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * The arguments of one node's QEMU that our cluster needs whatever starts
 * it: node.c (direct mode) and libvirt.c (the domain's XML) both use them.
 */
#include "vcluster.h"

#include <string.h>

#define ADD(...) g_ptr_array_add(a, g_strdup_printf(__VA_ARGS__))

char *node_kernel_cmdline(Cluster *c, int node)
{
    GString *s = g_string_new(NULL);

    g_string_printf(s, "console=ttyS0 quiet panic=-1 vc.node=%d vc.nodes=%d "
                    "vc.net=%s vc.cluster=%s", node, c->nodes, VC_NET_PREFIX,
                    c->name);
    /* Module parameters: the guest's init passes MODULE.PARAM to insmod. */
    if (cluster_has_fabric(c, "ps1")) {
        g_string_append_printf(s, " ps1.node=%d", node);
    }
    if (cluster_has_fabric(c, "myrinet")) {
        g_string_append_printf(s, " myri.node=%d", node);
    }
    return g_string_free(s, FALSE);
}

/*
 * Everything a node needs beyond machine, memory and kernel, which libvirt
 * models itself: serial log, QMP, guest agent and one NIC per fabric.
 */
GPtrArray *node_device_args(Cluster *c, const VcPaths *p, int node)
{
    GPtrArray *a = g_ptr_array_new_with_free_func(g_free);
    g_autofree char *serial = cluster_node_file(c, node, "serial.log");
    g_autofree char *qmp = cluster_node_file(c, node, "qmp.sock");
    g_autofree char *qga = cluster_node_file(c, node, "qga.sock");

    ADD("-L");
    ADD("/usr/share/seabios");
    ADD("-L");
    ADD("/usr/share/qemu");
    ADD("-chardev");
    ADD("file,id=vc-serial,path=%s", serial);
    ADD("-device");
    ADD("isa-serial,chardev=vc-serial");
    ADD("-chardev");
    ADD("socket,id=vc-qmp,path=%s,server=on,wait=off", qmp);
    ADD("-mon");
    ADD("chardev=vc-qmp,mode=control");
    ADD("-chardev");
    ADD("socket,id=vc-qga,path=%s,server=on,wait=off", qga);
    ADD("-device");
    /* 2 ports (0 is reserved) and no ioeventfds: the default 31 ports
     * put ~70 eventfds into every main-loop poll. */
    ADD("virtio-serial-pci,id=vc-vser,max_ports=2,ioeventfd=off");
    ADD("-device");
    ADD("virtserialport,bus=vc-vser.0,chardev=vc-qga,"
        "name=org.qemu.guest_agent.0");

    /*
     * Lock-step: the clock counts instructions and jumps over idle time;
     * the guest's wall clock and random numbers start the same every run.
     * A fabric link connects before the guest runs, so no reconnect.
     */
    gboolean lockstep = c->icount_shift >= 0;
    const char *reconnect = lockstep ? "" : ",reconnect=1";
    const char *sync = lockstep ? ",lockstep=on" : "";
    /* `vcluster run`: the command, and a second serial port for its output */
    if (c->run_dir) {
        g_autofree char *out = run_output_path(c->run_dir, node);

        ADD("-fw_cfg");
        ADD("name=opt/vcluster/run,file=%s/%s", c->run_dir, VC_RUN_SCRIPT);
        ADD("-chardev");
        ADD("file,id=vc-run,path=%s", out);
        ADD("-device");
        ADD("isa-serial,chardev=vc-run");
    }
    if (lockstep) {
        ADD("-icount");
        ADD("shift=%d,sleep=off", c->icount_shift);
        ADD("-rtc");
        ADD("base=%s,clock=vm", VC_LOCKSTEP_RTC_BASE);
        ADD("-seed");
        ADD("%d", node);
    }

    for (int f = 0; c->fabrics[f]; f++) {
        const char *kind = c->fabrics[f];
        g_autofree char *dir = cluster_fabric_dir(c, kind);
        if (g_strcmp0(kind, "eth") == 0 && lockstep) {
            /*
             * The NIC's netdev is a hub port that reaches nothing; the
             * vcluster-eth-link filter on it carries the frames, in step.
             * The NIC transmits from a virtual-clock timer 1 us after the
             * guest's kick (not from a bottom half, whose moment is the
             * host's), and takes the kicks in the vCPU thread.
             */
            ADD("-chardev");
            ADD("socket,id=vc-ethl,path=%s/node%d.sock", dir, node);
            ADD("-netdev");
            ADD("hubport,id=vc-eth,hubid=0");
            ADD("-device");
            ADD("virtio-net-pci,netdev=vc-eth,mac=52:54:00:77:%02x:%02x,"
                "romfile=,tx=timer,x-txtimer=1000,ioeventfd=off", node >> 8,
                node & 0xff);
            ADD("-device");
            ADD("vcluster-eth-link,netdev=vc-eth,chardev=vc-ethl,node=%d",
                node);
        } else if (g_strcmp0(kind, "eth") == 0) {
            ADD("-netdev");
            ADD("stream,id=vc-eth,server=off,addr.type=unix,"
                "addr.path=%s/node%d.sock", dir, node);
            ADD("-device");
            ADD("virtio-net-pci,netdev=vc-eth,mac=52:54:00:77:%02x:%02x,"
                "romfile=", node >> 8, node & 0xff);
        } else if (g_strcmp0(kind, "ps1") == 0) {
            /* reconnect: the board comes back if fabricd is restarted. */
            ADD("-chardev");
            ADD("socket,id=vc-ps1,path=%s/node%d.sock%s", dir, node,
                reconnect);
            ADD("-device");
            ADD("parastation,chardev=vc-ps1,node=%d%s", node, sync);
        } else if (g_strcmp0(kind, "myrinet") == 0) {
            g_autofree char *routes = myrinet_routes_file(c, node);

            ADD("-chardev");
            ADD("socket,id=vc-myri,path=%s/node%d.sock%s", dir, node,
                reconnect);
            ADD("-device");
            ADD("lanai,chardev=vc-myri,node=%d%s", node, sync);
            /* read at QEMU start: the routes survive a guest reboot */
            ADD("-fw_cfg");
            ADD("name=opt/vcluster/myri-routes,file=%s", routes);
        } else if (g_strcmp0(kind, "telegraphos") == 0) {
            g_autofree char *mirror = NULL;
            int mirror_mb;

            /* `up` refused a memory size the mirror cannot cover */
            if (telegraphos_mirror_mb(c->mem_mb, VC_TGR_MAX_MIRROR_MB,
                                      &mirror_mb, NULL) &&
                mirror_mb) {
                mirror = g_strdup_printf(",local-mirror-mb=%d", mirror_mb);
            }
            ADD("-chardev");
            ADD("socket,id=vc-tgr,path=%s/node%d.sock%s", dir, node,
                reconnect);
            ADD("-device");
            ADD("telegraphos,chardev=vc-tgr,node=%d%s%s", node,
                mirror ? mirror : "", sync);
        }
    }
    return a;
}
