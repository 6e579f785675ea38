/* DBC nodes on the bench: a board described by a DBC file and the config's bindings.
 *
 * Receive: a frame whose ID (minus dbc.id_offset) is a DBC message with to: bindings is decoded
 * (physical values, multiplexing honoured) into the bound joints' commands; a frame shorter than
 * the message is counted bad and ignored. A remote frame for an on_request tx message, or a
 * message that is an on_receive trigger, schedules that tx message. Other IDs: not this node.
 * Joint command (at poll, written into the plant slot): the quantities a joint's bindings name
 * decide the mode: current_setpoint -> CURRENT; position_setpoint or kp -> POSITION (kp/kd the
 * bound values, else the bench's hold gains for that joint); velocity_setpoint -> VELOCITY;
 * torque_setpoint -> TORQUE; a bound enable that reads 0 -> DISABLED. seq advances and
 * rx_time_ns is the frame's time for every received message that carries one of its signals.
 * Transmit: cyclic messages every period_s (whole ticks, from the first poll), on_receive and
 * on_request ones at the poll after their trigger (one frame per trigger or request); from:
 * bindings fill the payload (zeros elsewhere; multiplexed signals are all written). Safe stop sends
 * nothing (a DBC board has no protocol-defined disable frame). */

#include <errno.h>
#include <stddef.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "can_protocol.h"
#include "dbc_config.h"
#include "hilsim/can_dbc.h"

#define CMD_Q_COUNT (HS_CFG_Q_ENABLE + 1) /* the to: quantities come first in the enum */

struct rx_sig {
    const struct hs_dbc_message *m;
    const struct hs_dbc_signal *s;
    uint32_t slot;
    enum hs_cfg_quantity q;
};

struct jslot {
    uint32_t joint;
    uint32_t mask; /* bit per bound to: quantity */
    double v[CMD_Q_COUNT];
    int64_t rx_ns;
    uint64_t seq;
};

struct from_sig {
    const struct hs_dbc_signal *s;
    bool sensor;
    uint32_t index;     /* bench joint or sensor */
    unsigned component; /* sensors: index into the reading's declared values */
    enum hs_cfg_quantity q;
};

/* A multiplexed message carries one page (multiplexor value) per frame; signals of different
 * pages may share bits. Each transmission sends the next page that has bound signals. */
#define TX_PAGES_MAX 32

struct tx_msg {
    const struct hs_dbc_message *m;
    enum hs_cfg_tx_schedule schedule;
    int64_t period_ns;
    const struct hs_dbc_message *trigger;
    uint8_t pending; /* triggers or requests since the last poll, each answered (saturates) */
    int64_t last_ns;
    uint32_t from_first, from_count;
    uint32_t pages[TX_PAGES_MAX]; /* ascending multiplexor values with bound signals */
    uint8_t npages, next_page;
};

struct hs__can_dbc_node {
    struct hs_can_port port; /* first: io_can.c's handle */
    struct hs_can_node base; /* the dispatcher hands us this pointer */
    struct hs_dbc *dbc;
    uint32_t id_offset;
    struct rx_sig *rx;
    uint32_t nrx;
    struct jslot *slots;
    uint32_t nslots;
    struct from_sig *from;
    uint32_t nfrom;
    struct tx_msg *tx;
    uint32_t ntx;
    bool started;
};

static struct tx_msg *tx_for(struct hs__can_dbc_node *n, const struct hs_dbc_message *m)
{
    for (uint32_t i = 0; i < n->ntx; i++)
        if (n->tx[i].m == m)
            return &n->tx[i];
    return NULL;
}

static int dbc_on_frame(struct hs_can_node *base, const struct hs_can_frame *f, int64_t now_ns)
{
    struct hs__can_dbc_node *n =
        (struct hs__can_dbc_node *)(void *)((char *)base - offsetof(struct hs__can_dbc_node, base));
    if ((f->flags & HS_CAN_FLAG_ERR) || f->id < n->id_offset)
        return -ENOENT;
    const struct hs_dbc_message *m =
        hs_dbc_find(n->dbc, f->id - n->id_offset, (f->flags & HS_CAN_FLAG_EXT) != 0);
    if (!m)
        return -ENOENT;
    bool mine = false, triggers = false;
    for (uint32_t i = 0; i < n->nrx && !mine; i++)
        mine = n->rx[i].m == m;
    for (uint32_t i = 0; i < n->ntx; i++)
        triggers |= n->tx[i].trigger == m;
    struct tx_msg *own = tx_for(n, m);
    if (f->flags & HS_CAN_FLAG_RTR) {
        if (own && own->schedule == HS_CFG_TX_ON_REQUEST) {
            own->pending += own->pending < UINT8_MAX;
            base->stats.frames_ok++;
            return 0;
        }
        if (!mine && !triggers)
            return -ENOENT;
        base->stats.frames_bad++;
        return -EBADMSG;
    }
    if (!mine && !triggers)
        return -ENOENT; /* another board's message, or one of ours echoed */
    if (f->len < m->length) {
        base->stats.frames_bad++;
        return -EBADMSG;
    }
    for (uint32_t i = 0; i < n->nrx; i++) {
        const struct rx_sig *r = &n->rx[i];
        double v;
        if (r->m != m || !hs_dbc_signal_present(m, r->s, f->data, f->len) ||
            hs_dbc_signal_decode(r->s, f->data, f->len, &v) < 0 || !isfinite(v))
            continue;
        struct jslot *s = &n->slots[r->slot];
        s->v[r->q] = v;
        if (s->rx_ns != now_ns || !s->seq) {
            s->rx_ns = now_ns;
            s->seq++;
        }
    }
    for (uint32_t i = 0; i < n->ntx; i++)
        if (n->tx[i].trigger == m)
            n->tx[i].pending += n->tx[i].pending < UINT8_MAX;
    base->stats.frames_ok++;
    return 0;
}

static int dbc_poll_stub(struct hs_can_node *node, int64_t now_ns,
                         const struct hs_can_joint_state *js, struct hs_can_joint_command *ret_cmd,
                         struct hs_can_frame *out, unsigned out_max)
{
    (void)node, (void)now_ns, (void)js, (void)ret_cmd, (void)out, (void)out_max;
    return 0; /* polled by hs__can_dbc_node_poll with the whole bench */
}

static const struct hs_can_node_ops dbc_ops = {
    .name = "dbc",
    .on_frame = dbc_on_frame,
    .poll = dbc_poll_stub,
};

static bool bound(const struct jslot *s, enum hs_cfg_quantity q)
{
    return s->mask & (1u << q);
}

static void write_command(const struct jslot *s, const struct hs_bench_joint *j)
{
    struct hs_joint_command *c = j->cmd;
    double tau = bound(s, HS_CFG_Q_TORQUE_SETPOINT) ? s->v[HS_CFG_Q_TORQUE_SETPOINT] : 0;
    c->kp = c->kd = c->q = c->dq = c->current = c->velocity = 0;
    c->tau_ff = tau;
    if (bound(s, HS_CFG_Q_ENABLE) && s->v[HS_CFG_Q_ENABLE] == 0) {
        c->mode = HS_JOINT_MODE_DISABLED;
    } else if (bound(s, HS_CFG_Q_CURRENT_SETPOINT)) {
        c->mode = HS_JOINT_MODE_CURRENT;
        c->current = s->v[HS_CFG_Q_CURRENT_SETPOINT];
    } else if (bound(s, HS_CFG_Q_POSITION_SETPOINT) || bound(s, HS_CFG_Q_KP)) {
        c->mode = HS_JOINT_MODE_POSITION;
        c->q = s->v[HS_CFG_Q_POSITION_SETPOINT];
        c->dq = s->v[HS_CFG_Q_VELOCITY_SETPOINT];
        c->kp = bound(s, HS_CFG_Q_KP) ? s->v[HS_CFG_Q_KP] : j->kp;
        c->kd = bound(s, HS_CFG_Q_KD) ? s->v[HS_CFG_Q_KD] : j->kd;
    } else if (bound(s, HS_CFG_Q_VELOCITY_SETPOINT)) {
        c->mode = HS_JOINT_MODE_VELOCITY;
        c->velocity = s->v[HS_CFG_Q_VELOCITY_SETPOINT];
    } else {
        c->mode = HS_JOINT_MODE_TORQUE;
    }
    c->rx_time_ns = s->rx_ns;
    c->seq = s->seq;
}

static double from_value(const struct from_sig *fs, struct hs_bench *bench)
{
    if (fs->sensor) {
        if (fs->q == HS_CFG_Q_SENSOR_VALUE)
            return hs_bench_sensor(bench, fs->index)->values[fs->component];
        const struct hs_sensor_reading *r = hs_bench_sensor_reading(bench, fs->index);
        return fs->component < 3 ? r->value[fs->component] : r->torque[fs->component - 3];
    }
    const struct hs_joint_reading *r = hs_bench_joint_reading(bench, fs->index);
    switch (fs->q) {
    case HS_CFG_Q_POSITION:
        return r->q;
    case HS_CFG_Q_VELOCITY:
        return r->dq;
    case HS_CFG_Q_TORQUE:
        return r->torque;
    case HS_CFG_Q_CURRENT:
        return r->current;
    default:
        return (double)r->encoder_count;
    }
}

static void build_frame(struct hs__can_dbc_node *n, struct tx_msg *t, struct hs_bench *bench,
                        struct hs_can_frame *f)
{
    memset(f, 0, sizeof *f);
    f->id = t->m->id + n->id_offset;
    f->flags = (uint8_t)((t->m->extended ? HS_CAN_FLAG_EXT : 0) |
                         (t->m->length > HS_CAN_CLASSIC_MAX ? HS_CAN_FLAG_FD : 0));
    f->len = t->m->length;
    bool paged = t->npages > 0;
    uint32_t page = paged ? t->pages[t->next_page] : 0;
    if (paged) {
        (void)hs_dbc_signal_set_raw(&t->m->signals[t->m->multiplexor], f->data, f->len, page);
        t->next_page = (uint8_t)((t->next_page + 1) % t->npages);
    }
    for (uint32_t s = 0; s < t->from_count; s++) {
        const struct from_sig *fs = &n->from[t->from_first + s];
        if (paged && fs->s->mux == HS_DBC_MULTIPLEXED && fs->s->mux_value != page)
            continue; /* another page's signal: its bits may be this page's */
        /* saturation (-ERANGE) writes the clamped value, as a board would report */
        (void)hs_dbc_signal_encode(fs->s, from_value(fs, bench), f->data, f->len);
    }
    n->base.stats.tx_frames++;
}

static int dbc_node_poll(struct hs__can_dbc_node *n, struct hs_bench *bench, int64_t now_ns,
                         struct hs_can_frame *out, unsigned out_max)
{
    for (uint32_t i = 0; i < n->nslots; i++)
        if (n->slots[i].seq)
            write_command(&n->slots[i], hs_bench_joint(bench, n->slots[i].joint));
    if (!n->started) {
        n->started = true;
        for (uint32_t i = 0; i < n->ntx; i++)
            n->tx[i].last_ns = now_ns - n->tx[i].period_ns;
    }
    unsigned k = 0;
    for (uint32_t i = 0; i < n->ntx; i++) {
        struct tx_msg *t = &n->tx[i];
        unsigned want = t->pending;
        t->pending = 0;
        /* half a tick of slack: tick times jitter, the period is whole ticks */
        if (t->schedule == HS_CFG_TX_CYCLIC && now_ns - t->last_ns >= t->period_ns * 15 / 16) {
            want++;
            t->last_ns = now_ns;
        }
        for (unsigned w = 0; w < want; w++) {
            if (k == out_max) {
                n->base.stats.tx_overflow += want - w;
                break;
            }
            build_frame(n, t, bench, &out[k++]);
        }
    }
    return (int)k;
}

/* ---- init ---- */

/* The pages of a multiplexed message: the multiplexor values of its bound signals. */
static int collect_pages(struct tx_msg *tm, const struct from_sig *fs, const struct hs_config *cfg,
                         const struct hs_cfg_src *src, uint32_t node, struct hs_diag *d)
{
    const struct hs_dbc_message *m = tm->m;
    if (m->multiplexor < 0)
        return 0;
    for (uint32_t i = 0; i < tm->from_count; i++) {
        const struct hs_dbc_signal *s = fs[i].s;
        if (s->mux != HS_DBC_MULTIPLEXED)
            continue;
        uint32_t k = 0;
        while (k < tm->npages && tm->pages[k] < s->mux_value)
            k++;
        if (k < tm->npages && tm->pages[k] == s->mux_value)
            continue;
        if (tm->npages == TX_PAGES_MAX)
            return hs_diag_set(d, -EINVAL, cfg->path, src->line, src->column,
                               "can.nodes[%u].dbc: message '%s' has bound signals on more than "
                               "%d multiplexor values",
                               node, m->name, TX_PAGES_MAX);
        memmove(&tm->pages[k + 1], &tm->pages[k], (tm->npages - k) * sizeof tm->pages[0]);
        tm->pages[k] = s->mux_value;
        tm->npages++;
    }
    return 0;
}

static int bind_err(struct hs_diag *d, const struct hs_config *cfg, const struct hs_cfg_src *src,
                    uint32_t node, const char *what, const char *name, const char *file)
{
    return hs_diag_set(d, -EINVAL, cfg->path, src->line, src->column,
                       "can.nodes[%u].dbc: %s '%s' is not in %s", node, what, name, file);
}

/* sensor.<name>.<value>: the bench sensor of that name (any kind) and the index of the value its
 * kind declares under that name (hs_sensor_value_name: accel x y z, force fx .. tz, range r0 ..).
 */
static int resolve_sensor_value(struct hs_bench *bench, const struct hs_cfg_ref *ref,
                                struct from_sig *fs)
{
    for (uint32_t i = 0; i < hs_bench_sensor_count(bench); i++) {
        const struct hs_bench_sensor *bs = hs_bench_sensor(bench, i);
        if (strcmp(bs->name, ref->name))
            continue;
        const struct hs_model *m = hs_bench_model(bench, bs->body);
        for (uint32_t k = 0; k < bs->layout.nvalues; k++) {
            char name[HS_NAME_MAX];
            hs_sensor_value_name(&m->sensors[bs->model_sensor], k, name, sizeof name);
            if (!strcmp(name, ref->value)) {
                fs->sensor = true;
                fs->index = i;
                fs->component = k;
                return 0;
            }
        }
        return -ERANGE; /* the sensor is there; its kind declares no such value */
    }
    return -ENOENT;
}

/* The bench sensor and component a sensor.<name>.<quantity> reference reads: the quantities
 * name a role (hilsim/sensor_kinds.h), accel_* and gyro_* through the config's sensors.imu. */
static int resolve_sensor(struct hs_bench *bench, const struct hs_cfg_ref *ref, struct from_sig *fs)
{
    const struct hs_config *cfg = hs_bench_config(bench);
    enum hs_cfg_quantity q = ref->quantity;
    int idx = -ENOENT;
    if (q == HS_CFG_Q_SENSOR_VALUE)
        return resolve_sensor_value(bench, ref, fs);
    if (q >= HS_CFG_Q_ACCEL_X && q <= HS_CFG_Q_GYRO_Z) {
        bool accel = q <= HS_CFG_Q_ACCEL_Z;
        for (uint32_t i = 0; i < cfg->sensors.nimus; i++)
            if (!strcmp(cfg->sensors.imus[i].name, ref->name))
                idx = hs_bench_find_sensor_role(
                    bench, accel ? cfg->sensors.imus[i].accel : cfg->sensors.imus[i].gyro,
                    accel ? HS_SENSOR_ROLE_IMU_ACCEL : HS_SENSOR_ROLE_IMU_GYRO);
        fs->component = (unsigned)(q - (accel ? HS_CFG_Q_ACCEL_X : HS_CFG_Q_GYRO_X));
    } else {
        idx = hs_bench_find_sensor_role(bench, ref->name, HS_SENSOR_ROLE_FT);
        fs->component = (unsigned)(q - HS_CFG_Q_FORCE_X); /* force x..z, torque x..z */
    }
    if (idx < 0)
        return idx;
    fs->sensor = true;
    fs->index = (uint32_t)idx;
    return 0;
}

static int add_to(struct hs__can_dbc_node *n, struct hs_bench *bench,
                  const struct hs_cfg_binding *b, const struct hs_dbc_message *m,
                  const struct hs_dbc_signal *s)
{
    int j = hs_bench_find_joint(bench, b->ref.name);
    if (j < 0)
        return j;
    uint32_t slot = 0;
    while (slot < n->nslots && n->slots[slot].joint != (uint32_t)j)
        slot++;
    if (slot == n->nslots) {
        n->slots[n->nslots++].joint = (uint32_t)j;
        hs_bench_claim_joint(bench, (uint32_t)j);
    }
    n->slots[slot].mask |= 1u << b->ref.quantity;
    n->rx[n->nrx++] = (struct rx_sig){m, s, slot, b->ref.quantity};
    return 0;
}

static int resolve(struct hs__can_dbc_node *n, struct hs_bench *bench, uint32_t node,
                   struct hs_diag *d)
{
    const struct hs_config *cfg = hs_bench_config(bench);
    const struct hs_cfg_node *cn = &cfg->can.nodes[node];
    const char *file = hs_cfg_dbc(cn)->file;
    for (uint32_t k = 0; k < hs_cfg_dbc(cn)->binding_count; k++) {
        const struct hs_cfg_binding *b = &cfg->can.bindings[hs_cfg_dbc(cn)->binding_first + k];
        const struct hs_dbc_message *m = hs_dbc_find_by_name(n->dbc, b->message);
        if (!m)
            return bind_err(d, cfg, &b->src, node, "message", b->message, file);
        const struct hs_dbc_signal *s = hs_dbc_signal_by_name(m, b->signal);
        if (!s)
            return bind_err(d, cfg, &b->src, node, "signal", b->signal, file);
        if (b->dir == HS_CFG_BIND_TO && add_to(n, bench, b, m, s) < 0)
            return bind_err(d, cfg, &b->src, node, "joint", b->ref.name, "the bench");
    }
    for (uint32_t k = 0; k < hs_cfg_dbc(cn)->tx_count; k++) {
        const struct hs_cfg_tx *t = &cfg->can.tx[hs_cfg_dbc(cn)->tx_first + k];
        struct tx_msg *tm = &n->tx[n->ntx++];
        tm->m = hs_dbc_find_by_name(n->dbc, t->message);
        if (!tm->m)
            return bind_err(d, cfg, &t->src, node, "message", t->message, file);
        if (tm->m->length > HS_CAN_CLASSIC_MAX && !cfg->can.buses[cn->bus_index].fd)
            return hs_diag_set(d, -EINVAL, cfg->path, t->src.line, t->src.column,
                               "can.nodes[%u].dbc: message '%s' is %u bytes on a classic bus", node,
                               t->message, tm->m->length);
        tm->schedule = t->schedule;
        tm->period_ns = (int64_t)llround(t->period_s * 1e9);
        if (t->schedule == HS_CFG_TX_ON_RECEIVE) {
            tm->trigger = hs_dbc_find_by_name(n->dbc, t->trigger);
            if (!tm->trigger)
                return bind_err(d, cfg, &t->src, node, "trigger message", t->trigger, file);
        }
        tm->from_first = n->nfrom;
        for (uint32_t i = 0; i < hs_cfg_dbc(cn)->binding_count; i++) {
            const struct hs_cfg_binding *b = &cfg->can.bindings[hs_cfg_dbc(cn)->binding_first + i];
            if (b->dir != HS_CFG_BIND_FROM || strcmp(b->message, t->message))
                continue;
            struct from_sig *fs = &n->from[n->nfrom];
            memset(fs, 0, sizeof *fs);
            fs->s = hs_dbc_signal_by_name(tm->m, b->signal);
            fs->q = b->ref.quantity;
            int r;
            if (b->ref.kind == HS_CFG_REF_SENSOR) {
                r = resolve_sensor(bench, &b->ref, fs);
            } else {
                r = hs_bench_find_joint(bench, b->ref.name);
                fs->index = (uint32_t)(r < 0 ? 0 : r);
            }
            if (r == -ERANGE && fs->s)
                return hs_diag_set(d, -EINVAL, cfg->path, b->src.line, b->src.column,
                                   "can.nodes[%u].dbc: sensor '%s' declares no value '%s' (see "
                                   "src/plant/sensors/README.md for each kind's value names)",
                                   node, b->ref.name, b->ref.value);
            if (r < 0 || !fs->s)
                return bind_err(d, cfg, &b->src, node, fs->s ? "joint or sensor" : "signal",
                                fs->s ? b->ref.name : b->signal, fs->s ? "the bench" : file);
            if (fs->s->mux == HS_DBC_MULTIPLEXOR)
                return hs_diag_set(d, -EINVAL, cfg->path, b->src.line, b->src.column,
                                   "can.nodes[%u].dbc.bindings: '%s.%s' is the multiplexor: "
                                   "hilsim sets it, sending the next page of bound signals in "
                                   "each frame",
                                   node, b->message, b->signal);
            n->nfrom++;
        }
        tm->from_count = n->nfrom - tm->from_first;
        int r = collect_pages(tm, n->from + tm->from_first, cfg, &t->src, node, d);
        if (r < 0)
            return r;
    }
    return 0;
}

static void dbc_destroy(struct hs_can_port *port);
extern const struct hs_can_protocol hs_can_dbc_protocol;

static int dbc_create(struct hs_bench *bench, uint32_t node_index, struct hs_can_port **ret_port,
                      struct hs_diag *d)
{
    const struct hs_config *cfg = hs_bench_config(bench);
    const struct hs_cfg_node *cn = &cfg->can.nodes[node_index];
    uint32_t nb = hs_cfg_dbc(cn)->binding_count ? hs_cfg_dbc(cn)->binding_count : 1;
    struct hs__can_dbc_node *n = calloc(1, sizeof *n);
    if (n) {
        n->rx = calloc(nb, sizeof *n->rx);
        n->slots = calloc(nb, sizeof *n->slots);
        n->from = calloc(nb, sizeof *n->from);
        n->tx = calloc(hs_cfg_dbc(cn)->tx_count ? hs_cfg_dbc(cn)->tx_count : 1, sizeof *n->tx);
    }
    if (!n || !n->rx || !n->slots || !n->from || !n->tx) {
        dbc_destroy(n ? &n->port : NULL);
        return hs_diag_set(d, -ENOMEM, cfg->path, 0, 0, "can: out of memory");
    }
    n->base.ops = &dbc_ops;
    n->port.proto = &hs_can_dbc_protocol;
    n->port.node = &n->base;
    n->port.cfg = cn;
    n->port.index = node_index;
    n->id_offset = hs_cfg_dbc(cn)->id_offset;
    struct hs_diag dd = {0};
    int r = hs_dbc_load_file(hs_cfg_dbc(cn)->file, &n->dbc, &dd);
    if (r < 0) {
        char where[HS_DIAG_MSG_MAX];
        hs_diag_format(&dd, where, sizeof where);
        r = hs_diag_set(d, r, cfg->path, cn->src.line, cn->src.column, "can.nodes[%u].dbc.file: %s",
                        node_index, where);
    } else {
        r = resolve(n, bench, node_index, d);
    }
    if (r < 0) {
        dbc_destroy(&n->port);
        return r;
    }
    *ret_port = &n->port;
    return 0;
}

static void dbc_destroy(struct hs_can_port *port)
{
    struct hs__can_dbc_node *n = (struct hs__can_dbc_node *)port;
    if (!n)
        return;
    hs_dbc_free(n->dbc);
    free(n->rx);
    free(n->slots);
    free(n->from);
    free(n->tx);
    free(n);
}

/* One frame per tx message per poll at most; never fewer slots than the default. */
static unsigned dbc_tx_max(const struct hs_can_port *port)
{
    unsigned n = ((const struct hs__can_dbc_node *)port)->ntx;
    return n > HS_CAN_PORT_TX_DEFAULT ? n : HS_CAN_PORT_TX_DEFAULT;
}

static bool add_filter(struct hs_can_config *cfg, const struct hs_dbc_message *m, uint32_t off)
{
    for (unsigned i = 0; i < cfg->n_filters; i++)
        if (cfg->filters[i].id == m->id + off && cfg->filters[i].ext == m->extended)
            return true;
    if (cfg->n_filters == HS_CAN_FILTER_MAX)
        return false;
    cfg->filters[cfg->n_filters++] = (struct hs_can_filter){
        .id = m->id + off,
        .mask = m->extended ? HS_CAN_EFF_MASK : HS_CAN_SFF_MASK,
        .ext = m->extended,
    };
    return true;
}

/* One exact-ID filter per received message, trigger and requested message. */
static bool dbc_filters(const struct hs_can_port *port, struct hs_can_config *cfg)
{
    const struct hs__can_dbc_node *n = (const struct hs__can_dbc_node *)port;
    bool ok = true;
    for (uint32_t i = 0; i < n->nrx; i++)
        ok &= add_filter(cfg, n->rx[i].m, n->id_offset);
    for (uint32_t i = 0; i < n->ntx; i++) {
        if (n->tx[i].trigger)
            ok &= add_filter(cfg, n->tx[i].trigger, n->id_offset);
        if (n->tx[i].schedule == HS_CFG_TX_ON_REQUEST)
            ok &= add_filter(cfg, n->tx[i].m, n->id_offset);
    }
    return ok;
}

static int dbc_poll(struct hs_can_port *port, struct hs_bench *bench, int64_t now_ns,
                    struct hs_can_frame *out, unsigned out_max)
{
    return dbc_node_poll((struct hs__can_dbc_node *)port, bench, now_ns, out, out_max);
}

/* Lockstep: a node with to: bindings takes a per-cycle command (any of its received messages);
 * one that only sends takes none. */
static int dbc_command_heard(const struct hs_can_port *port)
{
    const struct hs__can_dbc_node *n = (const struct hs__can_dbc_node *)port;
    if (!n->nrx)
        return -ENOSYS;
    return n->base.stats.frames_ok != port->frames_ok_at_poll;
}

/* Safe stop sends nothing: a DBC board has no protocol-defined disable frame. */
const struct hs_can_protocol hs_can_dbc_protocol = {
    .name = "dbc",
    .create = dbc_create,
    .destroy = dbc_destroy,
    .filters = dbc_filters,
    .tx_max = dbc_tx_max,
    .poll = dbc_poll,
    .command_heard = dbc_command_heard,
};
