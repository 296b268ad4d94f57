/* SPDX-License-Identifier: GPL-2.0-or-later */
/* vcluster: boots and drives an N-VM cluster (direct QEMU or libvirt). */
#ifndef VCLUSTER_H
#define VCLUSTER_H

#include <glib.h>
#include <json-glib/json-glib.h>
#include <sys/types.h>

#include "vcluster/hw/tgr_regs.h"

#define VC_MAX_NODES 64
#define VC_DEFAULT_NAME "vc"
#define VC_DEFAULT_MEM_MB 256
#define VC_BOOT_TIMEOUT_S 300           /* up and reboot wait this long */
#define VC_NET_PREFIX "10.77.0"         /* node I is VC_NET_PREFIX.(I+1) */
#define VC_ICOUNT_SHIFT_DEFAULT 3       /* lock-step: 8 ns an instruction */
#define VC_ICOUNT_SHIFT_MAX 10
#define VC_LOCKSTEP_QUANTUM_MAX_NS 1000000000ll
/* lock-step: every run starts from the same guest wall clock */
#define VC_LOCKSTEP_RTC_BASE "2026-01-01T00:00:00"

/* ---- jsonchan.c: newline-delimited JSON over a unix stream socket ---- */
typedef struct JsonChan JsonChan;

JsonChan *jsonchan_connect(const char *path, GError **err);
void jsonchan_close(JsonChan *ch);
gboolean jsonchan_send(JsonChan *ch, const char *prefix, JsonNode *msg,
                       GError **err);
/* Next JSON object, waiting until the monotonic deadline (g_get_monotonic_time). */
JsonNode *jsonchan_recv(JsonChan *ch, gint64 deadline_us, GError **err);
/* Send {"execute":cmd,"arguments":args}; return "return" member or error. */
JsonNode *jsonchan_call(JsonChan *ch, const char *cmd, JsonNode *args,
                        gint64 deadline_us, GError **err);

/* ---- agent.c: qemu-guest-agent client ---- */
typedef struct {
    int exitcode;               /* 128+signal when killed by a signal */
    GBytes *out;
    GBytes *err;
    gboolean truncated;
} AgentExecResult;

JsonChan *agent_open(const char *sock_path, gint64 deadline_us, GError **err);
gboolean agent_send_sync(JsonChan *ch, gint64 id, GError **err);
/* TRUE once the reply to our sync id arrives (older replies are skipped). */
gboolean agent_wait_sync(JsonChan *ch, gint64 id, gint64 deadline_us,
                         GError **err);
gint64 agent_exec_start(JsonChan *ch, char **argv, gboolean capture,
                        GBytes *input, GError **err);
/* TRUE when finished (res filled), FALSE while running, or on error. */
gboolean agent_exec_poll(JsonChan *ch, gint64 pid, AgentExecResult *res,
                         GError **err);
/* Start a command with its output captured and wait until it finishes. */
gboolean agent_exec_wait(JsonChan *ch, char **argv, gint64 deadline_us,
                         AgentExecResult *res, GError **err);
void agent_exec_result_clear(AgentExecResult *res);
/*
 * guest-file-*: open gives the agent's handle (-1 on error).  The agent
 * keeps a handle across connections until guest-file-close.  An agent's
 * error reads "guest-file-open: <the agent's text>".
 */
gint64 agent_file_open(JsonChan *ch, const char *path, const char *mode,
                       GError **err);
/* Up to `count` bytes (fewer, or none, at the end); NULL on error. */
GBytes *agent_file_read(JsonChan *ch, gint64 handle, gsize count,
                        gboolean *eof, GError **err);
/* All of `data`, or FALSE (a short write is an error). */
gboolean agent_file_write(JsonChan *ch, gint64 handle, const void *data,
                          gsize len, GError **err);
gboolean agent_file_close(JsonChan *ch, gint64 handle, GError **err);

/* ---- qmp.c ---- */
JsonChan *qmp_open(const char *sock_path, gint64 deadline_us, GError **err);
/* Skip messages until one of the events `names` comes; return its name. */
char *qmp_wait_event(JsonChan *ch, const char *const *names, gint64 deadline_us,
                     GError **err);

/* ---- cluster.c: run directory and state ---- */
typedef enum { VC_MODE_DIRECT, VC_MODE_LIBVIRT } VcMode;

typedef struct {
    char *name;
    char *dir;                  /* run directory */
    VcMode mode;
    int nodes;
    int mem_mb;
    char *accel;
    char **fabrics;             /* NULL-terminated kinds, e.g. {"eth"} */
    char *topology;             /* ps1: "ring" or "torus:WxH" */
    char *myri_topology;        /* myrinet: the run directory's copy of the
                                   switch file, NULL for one switch */
    int icount_shift;           /* lock-step: QEMU's -icount shift (2^N ns
                                   an instruction); -1 when free-running */
    gint64 quantum_ns;          /* lock-step: fabricd's --lockstep-quantum,
                                   -1 for its default */
    char *seed;                 /* every fabricd's --seed, NULL: random */
    char *faults;               /* fault file every fabricd loads, or NULL */
    char *run_dir;              /* `vcluster run`: its directory, or NULL */
    GKeyFile *state;
} Cluster;

/* Locations of the build outputs this tool launches. */
typedef struct {
    char *top;
    char *qemu;
    char *fabricd;
    char *fabricctl;
    char *kernel;
    char *initrd;
} VcPaths;

const char *vc_run_base(void);
gboolean vc_name_valid(const char *name, GError **err);
char *vc_cluster_dir(const char *name);
/*
 * Hold cluster `name` against other vclusters that start or stop it
 * (up, run, down), until this process exits; wait at most timeout_s
 * (VCLUSTER_LOCK_TIMEOUT_S overrides it).
 * Without it, a `down` during an `up` removed the run directory under
 * the booting QEMUs, whose PIDs were then lost: orphan VMs.
 */
#define VC_LOCK_TIMEOUT_S 600
gboolean vc_cluster_lock(const char *name, int timeout_s, GError **err);
gboolean vc_paths_find(VcPaths *p, GError **err);
void vc_paths_clear(VcPaths *p);

Cluster *cluster_new(const char *name);
Cluster *cluster_load(const char *name, GError **err);
gboolean cluster_save(Cluster *c, GError **err);
void cluster_free(Cluster *c);
char *cluster_node_dir(Cluster *c, int node);
char *cluster_node_file(Cluster *c, int node, const char *file);
char *cluster_fabric_dir(Cluster *c, const char *kind);
char *cluster_domain_name(Cluster *c, int node);
char *cluster_node_ip(int node);
/* Pick the cluster: explicit name, $VCLUSTER_NAME, the only one, or "vc". */
char *cluster_default_name(const char *given);
/* Parse "3", "node3" or "all" into a list of node ids. */
GArray *cluster_parse_nodes(Cluster *c, const char *spec, GError **err);

/* ---- proc.c: processes ---- */
gboolean proc_alive(pid_t pid);
pid_t proc_read_pidfile(const char *path);
/* SIGTERM, wait up to timeout_ms, then SIGKILL.  TRUE if it is gone. */
gboolean proc_stop(pid_t pid, int timeout_ms);
pid_t proc_spawn_daemon(char **argv, const char *log_path, GError **err);
char *file_tail(const char *path, int lines);
void vc_sleep_ms(int ms);

/* ---- fabric.c: fabricd instances of a cluster ---- */
gboolean cluster_fabric_start(Cluster *c, const VcPaths *p,
                              const char *kind, GError **err);
void cluster_fabric_stop(Cluster *c, const char *kind);
gboolean cluster_fabric_alive(Cluster *c, const char *kind);
char *cluster_fabric_ctl_socket(Cluster *c, const char *kind);
gboolean cluster_has_fabric(Cluster *c, const char *kind);

/*
 * The telegraphos card's local mirror (in its shadow BAR) must cover guest
 * memory.  The device's default (TGR_MIRROR_DEFAULT_MB) and the shadow
 * address layout (bit 29 selects the remote shadow, which bounds the
 * largest mirror the card can have) are in include/vcluster/hw/tgr_regs.h.
 */
#define VC_TGR_MAX_MIRROR_MB ((int)(TGR_SHADOW_REMOTE >> 20))
/*
 * The local-mirror-mb a node with `mem_mb` of memory needs, for a card
 * whose mirror can be at most `max_mb` (VC_TGR_MAX_MIRROR_MB): 0 (the
 * device default) up to TGR_MIRROR_DEFAULT_MB, else the next power of 2; FALSE with err
 * when that exceeds `max_mb`.
 */
gboolean telegraphos_mirror_mb(int mem_mb, int max_mb, int *mirror_mb,
                               GError **err);

/* ---- myrinet.c: the myrinet fabric's topology and route files ---- */
/*
 * Copy `file` (NULL: the default switch) into RUN/fabric-myrinet/ for
 * fabricd and write every node's route file from it.
 */
gboolean myrinet_prepare(Cluster *c, const char *file, GError **err);
/* RUN/fabric-myrinet/routes/node<I>: what the guest gets through fw_cfg. */
char *myrinet_routes_file(Cluster *c, int node);

/* ---- node_args.c: what our cluster gives QEMU, direct or libvirt ---- */
GPtrArray *node_device_args(Cluster *c, const VcPaths *p, int node);
char *node_kernel_cmdline(Cluster *c, int node);

/* ---- node.c: the QEMU of each node ---- */
gboolean node_start_direct(Cluster *c, const VcPaths *p, int node,
                           GError **err);
void node_stop_direct(Cluster *c, int node);
gboolean node_alive(Cluster *c, int node);
const char *node_state(Cluster *c, int node);

/* ---- libvirt.c ---- */
gboolean libvirt_ensure_daemon(GError **err);
gboolean libvirt_start_node(Cluster *c, const VcPaths *p, int node,
                            GError **err);
void libvirt_remove_node(Cluster *c, int node);
/* Lock-step starts domains paused: let them all run. */
gboolean libvirt_resume_nodes(Cluster *c, GError **err);
/* `virsh reset`: a hardware reset of the node's domain. */
gboolean libvirt_reset_node(Cluster *c, int node, GError **err);
char *libvirt_node_state(Cluster *c, int node);
char *libvirt_domain_xml(Cluster *c, const VcPaths *p, int node);

/* ---- accel.c ---- */
/* Resolve "auto"|"tcg"|"kvm" to the accelerator to use; *why says why. */
char *accel_choose(const char *requested, const VcPaths *p, char **why,
                   GError **err);

/* ---- commands ---- */
/* Remove a file, or a directory and everything in it (cmd_up.c). */
void rm_rf(const char *path);
/* Stop every node and fabric of `c`, then remove its run directory. */
void cluster_teardown(Cluster *c);

/* What `up` and `run` make a cluster of (cmd_up.c). */
typedef struct UpOptions {
    int nodes, mem, timeout;
    char *fabric, *accel, *name, *topology, *myri_topology;
    gboolean use_libvirt, lockstep;
    int icount_shift;           /* -1: the default (with --lockstep) */
    gint64 quantum_ns;          /* -1: fabricd's default */
    char *seed, *faults;
    char *run_dir;              /* `run`: the run directory */
    char *run_script;           /* `run`: the command file, for fw_cfg */
    gboolean wait_agents;       /* `up` waits for every guest agent */
} UpOptions;

void up_options_init(UpOptions *o);
void up_option_entries(UpOptions *o, GOptionContext *ctx);
void up_options_clear(UpOptions *o);
int up_cluster(const UpOptions *o, const char *cmd, Cluster **out);

/*
 * The files of a `vcluster run` directory (cluster.c), which the node and
 * fabric starters name too (cmd_run.c runs the experiment).
 */
#define VC_RUN_SCRIPT "command.sh"
char *run_trace_path(const char *run_dir, const char *kind);
char *run_output_path(const char *run_dir, int node);

/* What wait_for_agents waits for and what it prints. */
typedef struct {
    const char *verb;           /* "nodeI: VERB in T s" */
    gboolean show_address;      /* ... " (10.77.0.I+1)" */
    const char *failure;        /* "vcluster: nodeI FAILURE: why" */
    /* NULL, or whether an answering agent is the boot we wait for */
    gboolean (*ready)(JsonChan *agent, int node, gpointer opaque);
    gpointer opaque;
} AgentWait;

/*
 * Wait until the guest agent of every node in `nodes` answers (cmd_up.c).
 * A QEMU that exits, or silence until start_us + timeout_s, is reported
 * with the node's serial log tail and returns FALSE.
 */
gboolean wait_for_agents(Cluster *c, GArray *nodes, gint64 start_us,
                         int timeout_s, const AgentWait *how);
int cmd_up(int argc, char **argv);
int cmd_down(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_replay(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_cp(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_console(int argc, char **argv);
int cmd_reboot(int argc, char **argv);
int cmd_list(int argc, char **argv);
int cmd_fabricctl(const char *what, int argc, char **argv);
int cmd_trace(int argc, char **argv);   /* cmd_trace.c */

/* ---- cmd_cp.c: `vcluster cp` ---- */
typedef struct {
    gboolean to_guest;          /* LOCAL NODE:PATH */
    char *node;                 /* as given: "2" or "node2" */
    char *remote;               /* the path in the guest */
    char *local;                /* the path on the host, or "-" */
} CpArgs;

/*
 * Split "NODE:PATH": remote when the part before the first ':' is not
 * empty and holds no '/', so "./a:b" and "/tmp/a:b" are local paths.
 */
gboolean cp_split_remote(const char *arg, char **node, char **path);
/*
 * Exactly one of SRC and DST must be NODE:PATH, with a non-empty PATH.
 * A guest PATH that ends in '/' gets the local file's name.  FALSE with
 * err is a usage error.
 */
gboolean cp_parse_args(const char *src, const char *dst, CpArgs *a,
                       GError **err);
void cp_args_clear(CpArgs *a);
/*
 * The host file for a copy of `remote` to `dest`: dest/basename if dest
 * is a directory or ends in '/', else dest itself.
 */
char *cp_local_dest(const char *dest, const char *remote);

/* ---- cmd_mpirun.c: `vcluster mpirun` ---- */
int cmd_mpirun(int argc, char **argv);
/*
 * `vcluster exec`'s argv (NULL-terminated, g_strfreev) for `vcluster
 * mpirun`'s: node 0, mpirun and each of its arguments shell-quoted,
 * --preload LIB as mpirun -x LD_PRELOAD=LIB. NULL with err on a usage
 * error.
 */
char **mpirun_exec_argv(int argc, char **argv, GError **err);

#define VC_ERROR (vc_error_quark())
GQuark vc_error_quark(void);

#endif
