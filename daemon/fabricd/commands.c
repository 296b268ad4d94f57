/*
 * SPDX-License-Identifier: GPL-2.0-or-later
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "report.h"

G_DEFINE_QUARK(fabricd_command_error, fabric_command_error)

/* Every error of this file: one code, a message saying what is wrong. */
#define fail(err, ...) g_set_error(err, FABRIC_COMMAND_ERROR, 0, __VA_ARGS__)

static bool is_blank(char c)
{
    return c == ' ' || c == '\t';
}

/* Split off the next blank-separated word; *rest points after it. */
static char *next_word(const char **rest)
{
    const char *s = *rest, *end;

    while (is_blank(*s)) {
        s++;
    }
    end = s;
    while (*end && !is_blank(*end)) {
        end++;
    }
    *rest = end;
    return end > s ? g_strndup(s, end - s) : NULL;
}

/* The rest of the line without surrounding blanks ("" if nothing). */
static char *rest_of_line(const char *rest)
{
    return g_strstrip(g_strdup(rest));
}

static bool no_more_args(const char *cmd, const char *rest, GError **err)
{
    g_autofree char *extra = next_word(&rest);

    if (extra) {
        fail(err, "'%s' takes no argument (got '%s')", cmd, extra);
        return false;
    }
    return true;
}

/* Whether the set of links `l` holds a link of the topology. */
static bool link_in_topology(Fabric *f, const FaultLink *l)
{
    if (!l->sets) {
        return l->from == FAULT_ANY_NODE || l->to == FAULT_ANY_NODE ||
               fabric_has_link(f, l->from, l->to) ||
               (l->both && fabric_has_link(f, l->to, l->from));
    }
    for (unsigned from = 0; from < f->nodes; from++) {
        for (unsigned to = 0; to < f->nodes; to++) {
            if (fault_link_matches(l, from, to) &&
                fabric_has_link(f, from, to)) {
                return true;
            }
        }
    }
    return false;
}

/*
 * A link naming two nodes must exist in the topology (one direction of an
 * A-B pair is enough; a partition needs one link between its sides).
 * Wildcards match whatever links exist.
 */
static bool link_exists(Fabric *f, const FaultLink *l, GError **err)
{
    g_autoptr(GString) text = NULL;
    g_autoptr(GString) topo = NULL;

    if (link_in_topology(f, l)) {
        return true;
    }
    text = g_string_new(NULL);
    topo = g_string_new(NULL);
    fault_link_append(l, text);
    f->kind->describe_topology(f->kind_state, f->nodes, topo);
    fail(err, l->sets ? "%s holds no link of this fabric (%s)"
                      : "%s is not a link of this fabric (%s)",
         text->str, topo->str);
    return false;
}

/* What fault_rule_parse() cannot know: the topology, the kind's limits. */
static bool rule_fits_fabric(const FaultRule *r, void *opaque, GError **err)
{
    Fabric *f = opaque;

    return link_exists(f, &r->link, err) &&
           (!f->kind->check_fault || f->kind->check_fault(r, err));
}

/* Read a whole fault file: a regular file of at most 1 MiB. */
static char *read_fault_file(const char *path, size_t *len, GError **err)
{
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
    GString *text;
    struct stat st;
    char buf[16384];
    ssize_t n;

    if (fd < 0) {
        fail(err, "cannot read fault file %s: %s", path, g_strerror(errno));
        return NULL;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        fail(err, "fault file %s is not a regular file", path);
        return NULL;
    }
    text = g_string_new(NULL);
    while ((n = read(fd, buf, sizeof(buf))) != 0) {
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n < 0) {
            fail(err, "cannot read fault file %s: %s", path,
                 g_strerror(errno));
            break;
        }
        if (text->len + n > FABRIC_FAULT_FILE_MAX) {
            fail(err, "fault file %s is larger than %d bytes", path,
                 FABRIC_FAULT_FILE_MAX);
            n = -1;
            break;
        }
        g_string_append_len(text, buf, n);
    }
    close(fd);
    if (n < 0) {
        g_string_free(text, TRUE);
        return NULL;
    }
    *len = text->len;
    return g_string_free(text, FALSE);
}

bool fabric_faults_load(Fabric *f, const char *path, GString *out,
                        GError **err)
{
    size_t len;
    g_autofree char *text = read_fault_file(path, &len, err);
    GPtrArray *rules;
    unsigned room = FAULT_MAX_RULES - fault_rules_count(f->rules);

    if (!text) {
        return false;
    }
    rules = fault_file_parse(text, len, path, f->nodes, rule_fits_fabric, f,
                             err);
    if (!rules) {
        return false;
    }
    if (rules->len > room) {
        fail(err, "%s has %u rules but only %u more fit (limit "
             G_STRINGIFY(FAULT_MAX_RULES) "); delete some first", path,
             rules->len, room);
        g_ptr_array_free(rules, TRUE);
        return false;
    }
    /* the array gives up its rules: fault_rules_add() owns them now */
    g_ptr_array_set_free_func(rules, NULL);
    for (unsigned i = 0; i < rules->len; i++) {
        g_string_append_printf(out, "rule %u\n",
                               fault_rules_add(f->rules, rules->pdata[i]));
    }
    if (rules->len) {
        fabric_config_changed(f);
    }
    g_ptr_array_free(rules, TRUE);
    return true;
}

static bool cmd_fault(Fabric *f, const char *rest, GString *out, GError **err)
{
    g_autofree char *sub = next_word(&rest);

    if (!sub) {
        fail(err, "fault needs add, load, del, list or clear");
        return false;
    }
    if (strcmp(sub, "add") == 0) {
        g_autofree char *text = rest_of_line(rest);
        FaultRule *r = fault_rule_parse(text, f->nodes, err);

        if (!r) {
            return false;
        }
        if (!rule_fits_fabric(r, f, err)) {
            fault_rule_free(r);
            return false;
        }
        /* every copy runs every rule: their number is bounded too */
        if (fault_rules_count(f->rules) >= FAULT_MAX_RULES) {
            fault_rule_free(r);
            fail(err, "too many fault rules (limit " G_STRINGIFY(
                 FAULT_MAX_RULES) "); delete some first");
            return false;
        }
        g_string_append_printf(out, "rule %u\n", fault_rules_add(f->rules, r));
        fabric_config_changed(f);
        return true;
    }
    if (strcmp(sub, "load") == 0) {
        g_autofree char *path = rest_of_line(rest);

        if (!*path) {
            fail(err, "fault load needs a file name");
            return false;
        }
        return fabric_faults_load(f, path, out, err);
    }
    if (strcmp(sub, "del") == 0) {
        g_autofree char *id_text = next_word(&rest);
        guint64 id;

        if (!id_text || !g_ascii_isdigit(id_text[0]) ||
            !g_ascii_string_to_unsigned(id_text, 10, 1, G_MAXUINT, &id,
                                        NULL)) {
            fail(err, "fault del needs a rule id (see fault list)");
            return false;
        }
        if (!no_more_args("fault del ID", rest, err)) {
            return false;
        }
        if (!fault_rules_del(f->rules, id)) {
            fail(err, "no fault rule %" G_GUINT64_FORMAT " (see fault list)",
                 id);
            return false;
        }
        fabric_config_changed(f);
        return true;
    }
    if (strcmp(sub, "list") == 0) {
        if (!no_more_args("fault list", rest, err)) {
            return false;
        }
        report_rules(f, out);
        return true;
    }
    if (strcmp(sub, "clear") == 0) {
        if (!no_more_args("fault clear", rest, err)) {
            return false;
        }
        fault_rules_clear(f->rules);
        fabric_config_changed(f);
        return true;
    }
    fail(err, "unknown fault command '%s' (expected add, load, del, list or "
         "clear)", sub);
    return false;
}

static bool cmd_link(Fabric *f, const char *rest, GString *out, GError **err)
{
    g_autofree char *sub = next_word(&rest);
    g_autofree char *spec = next_word(&rest);
    FaultLink link;
    bool down;

    if (!sub || (strcmp(sub, "down") && strcmp(sub, "up"))) {
        fail(err, "link needs up or down, then a link such as 0>1, 0-1 or *");
        return false;
    }
    down = strcmp(sub, "down") == 0;
    if (!spec) {
        fail(err, "link %s needs a link such as 0>1, 0-1, *>2 or *", sub);
        return false;
    }
    if (!no_more_args("link up|down LINK", rest, err) ||
        !fault_link_parse(spec, f->nodes, &link, err) ||
        !link_exists(f, &link, err)) {
        return false;
    }
    for (unsigned from = 0; from < f->nodes; from++) {
        for (unsigned to = 0; to < f->nodes; to++) {
            if (fabric_has_link(f, from, to) &&
                fault_link_matches(&link, from, to)) {
                fabric_link(f, from, to)->admin_down = down;
            }
        }
    }
    fabric_config_changed(f);
    return true;
}

static bool cmd_capture(Fabric *f, const char *rest, GString *out,
                        GError **err)
{
    g_autofree char *sub = next_word(&rest);

    if (sub && strcmp(sub, "start") == 0) {
        g_autofree char *path = rest_of_line(rest);

        if (!*path) {
            fail(err, "capture start needs a file name");
            return false;
        }
        return fabric_capture_start(f, path, err);
    }
    if (sub && strcmp(sub, "stop") == 0) {
        uint64_t frames = 0;

        if (!no_more_args("capture stop", rest, err)) {
            return false;
        }
        if (!fabric_capture_stop(f, &frames, err)) {
            return false;
        }
        g_string_append_printf(out, "frames %" G_GUINT64_FORMAT "\n", frames);
        return true;
    }
    if (sub && strcmp(sub, "status") == 0) {
        if (!no_more_args("capture status", rest, err)) {
            return false;
        }
        if (f->capture) {
            g_string_append_printf(out,
                                   "capture on %s frames %"
                                   G_GUINT64_FORMAT "\n",
                                   capture_path(f->capture),
                                   capture_frames(f->capture));
        } else {
            g_string_append(out, "capture off\n");
        }
        return true;
    }
    fail(err, "capture needs start FILE, stop or status");
    return false;
}

bool fabric_command(Fabric *f, const char *line, GString *out, GError **err)
{
    const char *rest = line;
    g_autofree char *cmd = next_word(&rest);

    if (!cmd) {
        fail(err, "empty command (try help)");
        return false;
    }
    if (strcmp(cmd, "status") == 0) {
        if (!no_more_args(cmd, rest, err)) {
            return false;
        }
        report_status(f, out);
        return true;
    }
    if (strcmp(cmd, "counters") == 0) {
        if (!no_more_args(cmd, rest, err)) {
            return false;
        }
        report_counters(f, out);
        return true;
    }
    if (strcmp(cmd, "table") == 0) {
        if (!no_more_args(cmd, rest, err)) {
            return false;
        }
        if (!f->kind->dump_table) {
            fail(err, "fabric kind %s has no forwarding table",
                 f->kind->name);
            return false;
        }
        f->kind->dump_table(f->kind_state, fabric_time_ns(f), out);
        return true;
    }
    if (strcmp(cmd, "seed") == 0) {
        if (!no_more_args(cmd, rest, err)) {
            return false;
        }
        g_string_append_printf(out, "seed 0x%016" G_GINT64_MODIFIER "x\n",
                               f->seed);
        return true;
    }
    if (strcmp(cmd, "time") == 0) {
        if (!no_more_args(cmd, rest, err)) {
            return false;
        }
        g_string_append_printf(out, "time %" G_GUINT64_FORMAT "ns\n",
                               fabric_time_ns(f));
        return true;
    }
    if (strcmp(cmd, "help") == 0) {
        g_string_append(out, fabric_command_help);
        return true;
    }
    if (strcmp(cmd, "fault") == 0) {
        return cmd_fault(f, rest, out, err);
    }
    if (strcmp(cmd, "link") == 0) {
        return cmd_link(f, rest, out, err);
    }
    if (strcmp(cmd, "capture") == 0) {
        return cmd_capture(f, rest, out, err);
    }
    fail(err, "unknown command '%s' (try help)", cmd);
    return false;
}
