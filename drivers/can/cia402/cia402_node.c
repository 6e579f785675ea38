/* The CiA 402 node: configuration, object dictionary defaults, and the node ops (frames in,
 * one drive cycle and frames out per poll). */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "cia402/cia402_defaults.h"
#include "cia402/cia402_internal.h"

static const struct hs_can_node_ops cia402_ops;

void hs_cia402_config_init(struct hs_cia402_config *cfg, uint8_t node_id)
{
    memset(cfg, 0, sizeof *cfg);
    cfg->node_id = node_id;
    cfg->counts_per_rev = HS_CIA402_DEFAULT_COUNTS_PER_REV;
    cfg->rated_torque_nm = HS_CIA402_DEFAULT_RATED_TORQUE_NM;
    cfg->rated_current_a = HS_CIA402_DEFAULT_RATED_CURRENT_A;
    cfg->torque_constant_nm_a = HS_CIA402_DEFAULT_TORQUE_CONSTANT_NM_A;
    cfg->max_torque_permille = HS_CIA402_DEFAULT_MAX_TORQUE_PERMILLE;
    cfg->position_kp_nm_rad = HS_CIA402_DEFAULT_POSITION_KP_NM_RAD;
    cfg->velocity_kd_nm_s_rad = HS_CIA402_DEFAULT_VELOCITY_KD_NM_S_RAD;
    cfg->velocity_ki_nm_rad = HS_CIA402_DEFAULT_VELOCITY_KI_NM_RAD;
    cfg->heartbeat_ms = HS_CIA402_DEFAULT_HEARTBEAT_MS;
    cfg->boot_time_ms = HS_CIA402_DEFAULT_BOOT_TIME_MS;
    cfg->following_error_window_counts = HS_CIA402_DEFAULT_FOLLOWING_ERROR_WINDOW_COUNTS;
    cfg->following_error_timeout_ms = HS_CIA402_DEFAULT_FOLLOWING_ERROR_TIMEOUT_MS;
    cfg->vendor_id = 0x00000000; /* unregistered: a simulator claims no vendor's id */
    cfg->product_code = 0x00000402;
    cfg->revision = 0x00010000;
    for (unsigned p = 0; p < HS_CIA402_PDO_N; p++) {
        cfg->rpdo[p].type = 255;
        cfg->tpdo[p].type = 255;
    }
    cfg->rpdo[0] =
        (struct hs_cia402_pdo_config){.valid = true, .type = 255, .n = 1, .map = {0x60400010}};
    cfg->tpdo[0] =
        (struct hs_cia402_pdo_config){.valid = true, .type = 255, .n = 1, .map = {0x60410010}};
}

static void od_defaults(struct hs_cia402_od *od, const struct hs_cia402_config *c)
{
    uint8_t id = c->node_id;
    double cpr = c->counts_per_rev;
    memset(od, 0, sizeof *od);
    od->device_type = 0x00020192; /* profile 402, servo drive */
    od->cob_id_sync = 0x80;
    od->cob_id_emcy = 0x80u + id;
    od->hb_consumer_n = HS_CIA402_HB_CONSUMERS;
    od->hb_producer_ms = c->heartbeat_ms;
    od->identity_n = 4;
    od->identity[0] = c->vendor_id, od->identity[1] = c->product_code;
    od->identity[2] = c->revision, od->identity[3] = c->serial;
    strcpy(od->device_name, "hilsim CiA 402 drive");
    strcpy(od->hw_version, "simulated");
    strcpy(od->sw_version, "hilsim");
    for (unsigned p = 0; p < HS_CIA402_PDO_N; p++) {
        /* PDOs start not valid; the config's are written in by the SDO rules */
        od->rpdo[p] = (struct hs_cia402_pdo_comm){
            .n_sub = 5, .cob_id = 0x80000000u | (0x200u + 0x100u * p + id), .type = 255};
        od->tpdo[p] = (struct hs_cia402_pdo_comm){
            .n_sub = 6, .cob_id = 0xC0000000u | (0x180u + 0x100u * p + id), .type = 255};
    }
    od->abort_connection_option = 1;
    od->quick_stop_option = 2;
    od->halt_option = 1;
    od->fault_reaction_option = 0; /* drive function off at once, the motor free */
    od->modes = od->modes_display = HS_CIA402_MODE_CSP;
    od->following_error_window = c->following_error_window_counts;
    od->following_error_timeout_ms = c->following_error_timeout_ms;
    od->position_window = (uint32_t)fmax(1, cpr / 1000);
    od->velocity_window = (uint16_t)fmin(65535, fmax(1, cpr / 100));
    od->velocity_threshold = od->velocity_window;
    od->max_torque = (uint16_t)c->max_torque_permille;
    od->rated_current_ma = (uint32_t)lround(c->rated_current_a * 1e3);
    od->rated_torque_mnm = (uint32_t)lround(c->rated_torque_nm * 1e3);
    od->sw_limit_n = 2;
    od->profile_velocity = (uint32_t)cpr;
    od->profile_acceleration = od->profile_deceleration = (uint32_t)fmin(4e9, 10 * cpr);
    od->quick_stop_deceleration = (uint32_t)fmin(4e9, 20 * cpr);
    od->homing_method = 37;
    od->interp_n = 2;
    od->supported_modes = 1u << (HS_CIA402_MODE_PP - 1) | 1u << (HS_CIA402_MODE_PV - 1) |
                          1u << (HS_CIA402_MODE_HM - 1) | 1u << (HS_CIA402_MODE_CSP - 1) |
                          1u << (HS_CIA402_MODE_CSV - 1) | 1u << (HS_CIA402_MODE_CST - 1);
}

static int write_def(struct hs_cia402_node *n, uint16_t index, uint8_t sub, uint32_t v,
                     unsigned size, struct hs_diag *d, const char *what, unsigned p)
{
    int i = hs__cia402_od_find_i(n, index, sub);
    uint8_t buf[4];
    put_le(buf, v, 4);
    uint32_t r =
        i < 0 ? HS_CIA402_ABORT_NO_OBJECT : hs__cia402_od_write(n, &n->od_def, i, buf, size);
    if (r)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0,
                           "cia402: %s%u: writing 0x%04X sub %u = 0x%08X refused (abort 0x%08X)",
                           what, p + 1, index, sub, v, r);
    return 0;
}

/* The config's PDOs, written the way a master does it so the same rules apply. */
static int config_pdos(struct hs_cia402_node *n, struct hs_diag *d)
{
    for (unsigned t = 0; t < 2; t++) {
        const struct hs_cia402_pdo_config *pc = t ? n->cfg.tpdo : n->cfg.rpdo;
        uint16_t comm = t ? 0x1800 : 0x1400, map = t ? 0x1A00 : 0x1600;
        const char *what = t ? "tpdo" : "rpdo";
        for (unsigned p = 0; p < HS_CIA402_PDO_N; p++) {
            const struct hs_cia402_pdo_config *c = &pc[p];
            uint16_t ci = (uint16_t)(comm + p), mi = (uint16_t)(map + p);
            struct hs_cia402_pdo_comm *cur = t ? &n->od_def.tpdo[p] : &n->od_def.rpdo[p];
            uint32_t cob = cur->cob_id | 0x80000000u;
            int r = write_def(n, mi, 0, 0, 1, d, what, p);
            if (c->n > HS_CIA402_PDO_MAP_MAX)
                return hs_diag_set(d, -EINVAL, NULL, 0, 0, "cia402: %s%u: %u entries, at most %u",
                                   what, p + 1, c->n, HS_CIA402_PDO_MAP_MAX);
            for (unsigned k = 0; !r && k < c->n; k++)
                r = write_def(n, mi, (uint8_t)(k + 1), c->map[k], 4, d, what, p);
            if (!r)
                r = write_def(n, mi, 0, c->n, 1, d, what, p);
            if (!r)
                r = write_def(n, ci, 2, c->type, 1, d, what, p);
            if (!r && t)
                r = write_def(n, ci, 3, c->inhibit_100us, 2, d, what, p);
            if (!r)
                r = write_def(n, ci, 5, c->event_ms, 2, d, what, p);
            if (!r && c->valid)
                r = write_def(n, ci, 1, cob & 0x7FFFFFFFu, 4, d, what, p);
            if (r)
                return r;
        }
    }
    return 0;
}

int hs_cia402_node_init(struct hs_cia402_node *node, const struct hs_cia402_config *cfg,
                        struct hs_diag *d)
{
    if (cfg->node_id < 1 || cfg->node_id > 127)
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "cia402: node_id %u not in 1..127",
                           cfg->node_id);
    if (!cfg->counts_per_rev || cfg->counts_per_rev > (1u << 30))
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "cia402: counts_per_rev %u not in 1..2^30",
                           cfg->counts_per_rev);
    if (!(cfg->rated_torque_nm > 0 && cfg->rated_torque_nm < 4e6) ||
        !(cfg->rated_current_a > 0 && cfg->rated_current_a < 4e6) ||
        !(cfg->torque_constant_nm_a > 0) || !isfinite(cfg->torque_constant_nm_a))
        return hs_diag_set(d, -EINVAL, NULL, 0, 0,
                           "cia402: rated_torque, rated_current and torque_constant must be > 0");
    if (!(cfg->max_torque_permille >= 0 && cfg->max_torque_permille <= 65535))
        return hs_diag_set(d, -EINVAL, NULL, 0, 0,
                           "cia402: max_torque %g not in 0..65535 per mille",
                           cfg->max_torque_permille);
    if (!(cfg->position_kp_nm_rad >= 0) || !isfinite(cfg->position_kp_nm_rad) ||
        !(cfg->velocity_kd_nm_s_rad >= 0) || !isfinite(cfg->velocity_kd_nm_s_rad) ||
        !(cfg->velocity_ki_nm_rad >= 0) || !isfinite(cfg->velocity_ki_nm_rad))
        return hs_diag_set(d, -EINVAL, NULL, 0, 0, "cia402: loop gains must be finite and >= 0");
    memset(node, 0, sizeof *node);
    node->base.ops = &cia402_ops;
    node->cfg = *cfg;
    hs__cia402_od_build(node);
    od_defaults(&node->od_def, cfg);
    int r = config_pdos(node, d);
    if (r < 0)
        return r;
    node->od = node->od_def;
    hs__cia402_drive_reset(node);
    hs__cia402_reset_comm(node);
    return 0;
}

static int bad(struct hs_can_node *base)
{
    base->stats.frames_bad++;
    return -EBADMSG;
}

static void accepted(struct hs_cia402_node *n, int64_t now_ns)
{
    n->base.stats.frames_ok++;
    n->base.cmd.seq++;
    n->base.cmd.rx_time_ns = now_ns;
}

static int cia402_on_frame(struct hs_can_node *base, const struct hs_can_frame *f, int64_t now_ns)
{
    struct hs_cia402_node *n = (struct hs_cia402_node *)base;
    if (f->flags & (HS_CAN_FLAG_EXT | HS_CAN_FLAG_ERR))
        return -ENOENT;
    uint8_t id = n->cfg.node_id;
    bool classic = !(f->flags & (HS_CAN_FLAG_FD | HS_CAN_FLAG_RTR)) && f->len <= 8;
    bool live = n->nmt == HS_CIA402_NMT_PRE_OPERATIONAL || n->nmt == HS_CIA402_NMT_OPERATIONAL;
    if (f->id == 0) {
        if (f->len >= 2 && f->data[1] != 0 && f->data[1] != id)
            return -ENOENT;
        if (!classic || f->len != 2)
            return bad(base);
        hs__cia402_nmt_command(n, f->data[0], now_ns);
        return f->data[1] == 0 ? HS_CAN_NODE_BROADCAST : 0;
    }
    if (f->id == (n->od.cob_id_sync & 0x7FF)) {
        if (!classic || f->len > 1)
            return bad(base);
        if (live)
            hs__cia402_sync(n, now_ns);
        accepted(n, now_ns);
        return HS_CAN_NODE_BROADCAST; /* every synchronous node on the bus needs it */
    }
    if ((f->flags & HS_CAN_FLAG_RTR) && hs__cia402_tpdo_rtr(n, f, now_ns)) {
        base->stats.frames_ok++;
        return 0;
    }
    if (f->id == 0x600u + id) {
        if (!classic || f->len != 8)
            return bad(base);
        n->sdo_requests++;
        if (live)
            hs__cia402_sdo_frame(n, f);
        accepted(n, now_ns);
        return 0;
    }
    if (f->id > 0x700 && f->id < 0x780 && f->id != 0x700u + id) {
        for (unsigned i = 0; i < HS_CIA402_HB_CONSUMERS; i++) {
            uint32_t c = n->od.hb_consumer[i];
            if ((c & 0xFFFF) && (uint8_t)(c >> 16) == f->id - 0x700) {
                if (!classic || f->len != 1)
                    return bad(base);
                hs__cia402_heartbeat_rx(n, (uint8_t)(f->id - 0x700), f->data[0], now_ns);
                base->stats.frames_ok++;
                return HS_CAN_NODE_BROADCAST; /* other consumers may watch the same producer */
            }
        }
        return -ENOENT;
    }
    for (unsigned p = 0; p < HS_CIA402_PDO_N; p++) {
        const struct hs_cia402_pdo_comm *c = &n->od.rpdo[p];
        if ((c->cob_id & 0x80000000u) || (c->cob_id & 0x7FF) != f->id)
            continue;
        if (!classic)
            return bad(base);
        if (n->nmt != HS_CIA402_NMT_OPERATIONAL) {
            base->stats.frames_unknown++; /* PDOs are not processed outside operational */
            return -EOPNOTSUPP;
        }
        int r = hs__cia402_rpdo_frame(n, f);
        if (r == -EBADMSG)
            return bad(base);
        if (r < 0) {
            base->stats.frames_unknown++; /* valid COB-ID, empty mapping */
            return -EOPNOTSUPP;
        }
        accepted(n, now_ns);
        return 0;
    }
    return -ENOENT;
}

static int32_t sat32(double v)
{
    if (!(v == v))
        return 0;
    return (int32_t)fmax(fmin(round(v), INT32_MAX), INT32_MIN);
}

static int16_t sat16(double v)
{
    if (!(v == v))
        return 0;
    return (int16_t)fmax(fmin(round(v), INT16_MAX), INT16_MIN);
}

static void update_actuals(struct hs_cia402_node *n, const struct hs_can_joint_state *js)
{
    n->q_rad = isfinite(js->q_rad) ? js->q_rad : 0;
    n->dq_rad_s = isfinite(js->dq_rad_s) ? js->dq_rad_s : 0;
    n->od.position_actual = sat32(hs__cia402_rad_to_counts(n, n->q_rad - n->zero_rad));
    n->od.velocity_actual = sat32(hs__cia402_rad_to_counts(n, n->dq_rad_s));
    double tau = n->base.cmd.enabled ? js->tau_nm : 0;
    double rated = n->od.rated_torque_mnm * 1e-3, irated = n->od.rated_current_ma * 1e-3;
    n->od.torque_actual = sat16(rated > 0 ? tau / rated * 1e3 : 0);
    n->od.current_actual = sat16(irated > 0 ? tau / n->cfg.torque_constant_nm_a / irated * 1e3 : 0);
}

static int cia402_poll(struct hs_can_node *base, int64_t now_ns,
                       const struct hs_can_joint_state *js, struct hs_can_joint_command *ret_cmd,
                       struct hs_can_frame *out, unsigned out_max)
{
    struct hs_cia402_node *n = (struct hs_cia402_node *)base;
    if (!n->polled) {
        n->polled = true;
        n->last_poll_ns = now_ns;
    }
    double dt_s = (double)(now_ns - n->last_poll_ns) * 1e-9;
    if (!(dt_s > 0) || dt_s > 1.0)
        dt_s = 0; /* a stalled or reversed clock moves no profile */
    n->last_poll_ns = now_ns;
    update_actuals(n, js);
    hs__cia402_drive_cycle(n, now_ns, dt_s);
    hs__cia402_comm_poll(n, now_ns);
    hs__cia402_tpdo_poll(n, now_ns);
    unsigned k = n->txq_n < out_max ? n->txq_n : out_max;
    memcpy(out, n->txq, k * sizeof *out);
    // cppcheck-suppress knownConditionTrueFalse ; out_max may be below the queue length
    if (k < n->txq_n) {
        /* the rest go out at the next poll, in order */
        base->stats.tx_overflow++;
        memmove(n->txq, n->txq + k, (n->txq_n - k) * sizeof n->txq[0]);
    }
    n->txq_n -= k;
    base->stats.tx_frames += k;
    *ret_cmd = base->cmd;
    return (int)k;
}

static const struct hs_can_node_ops cia402_ops = {
    .name = "cia402",
    .on_frame = cia402_on_frame,
    .poll = cia402_poll,
};
