/* The parameter table (types 17/18) and the protocol state a frame changes, shared by the node
 * (tick) and the reply thread's copy (robstride_reply.c), so both answer alike.
 *
 * Indices, types and default values:
 * - CyberGear: the instruction manual's parameter table (ch. 4.1.14: run_mode .. spd_ki, the
 *   defaults limit_spd 2 rad/s, limit_cur 23 A, loc_kp 30, spd_kp 1, spd_ki 0.002, cur_kp 0.125,
 *   cur_ki 0.0158, cur_filt_gain 0.1). It has no 0x3xxx reads and nothing above 0x7020.
 * - RS series: the vendor SDK's ParameterType (robstride_dynamics/protocol.py: every index and
 *   its type, incl. 0x3016 mechPos, 0x302C torque_fdb, 0x7021..0x7029) and the RS00 and RS04
 *   manuals' parameter tables as transcribed in public notes (RS00 firmware 0.0.3.22 read back:
 *   loc_kp 30, spd_kp 5, spd_ki 0.02, spd_filt_gain 0.05, acc_rad 100 rad/s², vel_max 10 rad/s,
 *   acc_set 10 rad/s², limit_cur 16 A, limit_spd the model's speed range; RS04: spd_kp 6,
 *   limit_cur 0..90 A). limit_cur for RS01..RS03, RS05, RS06 is the iq range commonly quoted
 *   for the model (23, 23, 43, 11, 36 A), not checked against a manual here: a host that cares
 *   writes it. run_mode 1 is PP and 5 CSP on the RS series (RS04 manual, "run mode switching").
 * Writes change RAM only (type 22, save, is not simulated). */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <string.h>

#include "robstride.h"

#define RS_SERIES(lim_cur, spd_kp_)                                                                \
    {                                                                                              \
        .limit_spd = 0, /* the model's speed range, set in hs_rs_config_init */                    \
            .limit_cur = (lim_cur), .loc_kp = 30, .spd_kp = (spd_kp_), .spd_ki = 0.02f,            \
        .cur_kp = 0.125f, .cur_ki = 0.0158f, .cur_filt_gain = 0.1f, .spd_filt_gain = 0.05f,        \
        .acc_rad = 100, .vel_max = 10, .acc_set = 10                                               \
    }

static const struct hs_rs_gains gains[HS_RS_MODEL_MAX] = {
    [HS_RS_MODEL_CYBERGEAR] = {.limit_spd = 2,
                               .limit_cur = 23,
                               .loc_kp = 30,
                               .spd_kp = 1,
                               .spd_ki = 0.002f,
                               .cur_kp = 0.125f,
                               .cur_ki = 0.0158f,
                               .cur_filt_gain = 0.1f},
    [HS_RS_MODEL_RS00] = RS_SERIES(16, 5),
    [HS_RS_MODEL_RS01] = RS_SERIES(23, 5),
    [HS_RS_MODEL_RS02] = RS_SERIES(23, 5),
    [HS_RS_MODEL_RS03] = RS_SERIES(43, 5),
    [HS_RS_MODEL_RS04] = RS_SERIES(90, 6),
    [HS_RS_MODEL_RS05] = RS_SERIES(11, 5),
    [HS_RS_MODEL_RS06] = RS_SERIES(36, 5),
};

const struct hs_rs_gains *hs_rs_model_gains(enum hs_rs_model m)
{
    return (unsigned)m < HS_RS_MODEL_MAX ? &gains[m] : &gains[HS_RS_MODEL_CYBERGEAR];
}

enum ptype { T_U8, T_U16, T_U32, T_I16, T_F32 };
enum psrc {
    S_REG, /* a register: off */
    S_POS,
    S_MOD_POS,
    S_VEL,
    S_TORQUE,
    S_IQ,
    S_VBUS,
    S_ROTATION,
    S_OFFSET,
    S_FAULTS,
    S_RUN_MODE,
};
enum { F_RO = 1, F_RS = 2 /* RS series only */, F_CG = 4 /* CyberGear only */ };

struct param {
    uint16_t index;
    uint8_t type, src, flags;
    uint16_t off; /* S_REG: offsetof(struct hs_rs_regs, field) */
};

#define REG(i, t, field, fl)                                                                       \
    {                                                                                              \
        i, t, S_REG, fl, offsetof(struct hs_rs_regs, field)                                        \
    }
#define MEAS(i, t, s, fl)                                                                          \
    {                                                                                              \
        i, t, s, (fl) | F_RO, 0                                                                    \
    }

static const struct param params[] = {
    MEAS(HS_RS_P_MECH_OFFSET, T_F32, S_OFFSET, F_RS),
    MEAS(HS_RS_P_VBUS_3, T_F32, S_VBUS, F_RS),
    MEAS(HS_RS_P_MOD_POS, T_F32, S_MOD_POS, F_RS),
    MEAS(HS_RS_P_MECH_POS_3, T_F32, S_POS, F_RS),
    MEAS(HS_RS_P_MECH_VEL_3, T_F32, S_VEL, F_RS),
    MEAS(HS_RS_P_IQF_3, T_F32, S_IQ, F_RS),
    MEAS(HS_RS_P_FAULT_STA, T_U32, S_FAULTS, F_RS),
    MEAS(HS_RS_P_TORQUE_FDB, T_F32, S_TORQUE, F_RS),
    {HS_RS_P_RUN_MODE, T_U8, S_RUN_MODE, 0, 0},
    REG(HS_RS_P_IQ_REF, T_F32, iq_ref, 0),
    REG(HS_RS_P_SPD_REF, T_F32, spd_ref, 0),
    REG(HS_RS_P_LIMIT_TORQUE, T_F32, limit_torque, 0),
    REG(HS_RS_P_CUR_KP, T_F32, cur_kp, 0),
    REG(HS_RS_P_CUR_KI, T_F32, cur_ki, 0),
    REG(HS_RS_P_CUR_FILT_GAIN, T_F32, cur_filt_gain, 0),
    REG(HS_RS_P_LOC_REF, T_F32, loc_ref, 0),
    REG(HS_RS_P_LIMIT_SPD, T_F32, limit_spd, 0),
    REG(HS_RS_P_LIMIT_CUR, T_F32, limit_cur, 0),
    MEAS(HS_RS_P_MECH_POS, T_F32, S_POS, 0),
    MEAS(HS_RS_P_IQF, T_F32, S_IQ, 0),
    MEAS(HS_RS_P_MECH_VEL, T_F32, S_VEL, 0),
    MEAS(HS_RS_P_VBUS, T_F32, S_VBUS, 0),
    MEAS(HS_RS_P_ROTATION, T_I16, S_ROTATION, 0),
    REG(HS_RS_P_LOC_KP, T_F32, loc_kp, 0),
    REG(HS_RS_P_SPD_KP, T_F32, spd_kp, 0),
    REG(HS_RS_P_SPD_KI, T_F32, spd_ki, 0),
    REG(HS_RS_P_SPD_FILT_GAIN, T_F32, spd_filt_gain, F_RS),
    REG(HS_RS_P_ACC_RAD, T_F32, acc_rad, F_RS),
    REG(HS_RS_P_VEL_MAX, T_F32, vel_max, F_RS),
    REG(HS_RS_P_ACC_SET, T_F32, acc_set, F_RS),
    REG(HS_RS_P_EPSCAN_TIME, T_U16, epscan_time, F_RS),
    REG(HS_RS_P_CAN_TIMEOUT, T_U32, can_timeout, F_RS),
    REG(HS_RS_P_ZERO_STA, T_U8, zero_sta, F_RS),
    REG(HS_RS_P_DAMPER, T_U8, damper, F_RS),
    REG(HS_RS_P_ADD_OFFSET, T_F32, add_offset, F_RS),
};
#define NPARAMS (sizeof params / sizeof params[0])

static const struct param *find(const struct hs_rs_config *cfg, uint16_t index)
{
    bool rs = cfg->model != HS_RS_MODEL_CYBERGEAR;
    for (size_t i = 0; i < NPARAMS; i++)
        if (params[i].index == index)
            return (params[i].flags & F_RS) && !rs ? NULL : &params[i];
    return NULL;
}

void hs_rs_regs_init(struct hs_rs_regs *g, const struct hs_rs_config *cfg)
{
    const struct hs_rs_gains *k = &cfg->gains;
    memset(g, 0, sizeof *g);
    g->mode = HS_RS_MODE_RESET;
    g->run_mode = HS_RS_RUN_OPERATION;
    g->host_id = cfg->host_id;
    g->limit_torque = (float)cfg->limits.t_max;
    g->limit_spd = k->limit_spd, g->limit_cur = k->limit_cur;
    g->loc_kp = k->loc_kp, g->spd_kp = k->spd_kp, g->spd_ki = k->spd_ki;
    g->cur_kp = k->cur_kp, g->cur_ki = k->cur_ki, g->cur_filt_gain = k->cur_filt_gain;
    g->spd_filt_gain = k->spd_filt_gain, g->acc_rad = k->acc_rad;
    g->vel_max = k->vel_max, g->acc_set = k->acc_set;
    double t = (double)cfg->timeout_ns * 20000.0 / 1e9;
    g->can_timeout = t > 4e9 ? 4000000000u : (uint32_t)llround(t);
    g->epscan_time = 1;
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_u32(uint8_t *p, uint32_t u)
{
    p[0] = (uint8_t)u, p[1] = (uint8_t)(u >> 8), p[2] = (uint8_t)(u >> 16),
    p[3] = (uint8_t)(u >> 24);
}

static bool run_mode_ok(const struct hs_rs_config *cfg, unsigned m)
{
    if (cfg->model == HS_RS_MODEL_CYBERGEAR)
        return m <= HS_RS_RUN_CURRENT;
    return m <= HS_RS_RUN_CURRENT || m == HS_RS_RUN_CSP;
}

/* Type 18. 0: written; -ENOENT: no such writable parameter; -EINVAL: refused. */
static int write_param(struct hs_rs_regs *g, const struct hs_rs_config *cfg, uint16_t index,
                       const uint8_t *v)
{
    const struct param *p = find(cfg, index);
    if (!p || (p->flags & F_RO))
        return -ENOENT;
    if (p->src == S_RUN_MODE) {
        /* "the control mode cannot be switched while the joint is running" */
        if (!run_mode_ok(cfg, v[0]) || g->mode == HS_RS_MODE_RUN)
            return -EINVAL;
        g->run_mode = (enum hs_rs_run_mode)v[0];
        return 0;
    }
    uint8_t *dst = (uint8_t *)g + p->off;
    uint32_t u = get_u32(v);
    switch (p->type) {
    case T_U8:
        *dst = v[0];
        return 0;
    case T_U16: {
        uint16_t w = (uint16_t)u;
        memcpy(dst, &w, 2);
        return 0;
    }
    case T_U32:
        memcpy(dst, &u, 4);
        return 0;
    default: {
        float f;
        memcpy(&f, &u, 4);
        if (!isfinite(f))
            return -EINVAL;
        /* limits are magnitudes */
        if (index == HS_RS_P_LIMIT_TORQUE || index == HS_RS_P_LIMIT_SPD ||
            index == HS_RS_P_LIMIT_CUR || index == HS_RS_P_VEL_MAX || index == HS_RS_P_ACC_SET ||
            index == HS_RS_P_ACC_RAD)
            f = fabsf(f);
        memcpy(dst, &f, 4);
        return 0;
    }
    }
}

int hs_rs_regs_apply(struct hs_rs_regs *g, const struct hs_rs_config *cfg,
                     const struct hs_can_frame *f, unsigned *ret_effects)
{
    *ret_effects = 0;
    if (!(f->flags & HS_CAN_FLAG_EXT) || (f->flags & HS_CAN_FLAG_ERR) ||
        (f->id & 0xFF) != cfg->motor_id)
        return -ENOENT;
    enum hs_rs_type type = hs_rs_id_type(f->id);
    if (type == HS_RS_FEEDBACK || type == HS_RS_FAULT)
        return -ENOENT; /* another motor's answer to a host whose ID is ours */
    if ((f->flags & (HS_CAN_FLAG_RTR | HS_CAN_FLAG_FD)) || f->len != 8)
        return -EBADMSG;
    uint16_t index = (uint16_t)(f->data[0] | f->data[1] << 8);
    switch (type) {
    case HS_RS_GET_ID:
        g->host_id = (uint8_t)(f->id >> 8);
        return HS_RS_GET_ID;
    case HS_RS_MOTION: /* data area 2 is the torque: the host stays the last one named */
        if (g->mode == HS_RS_MODE_RUN && g->run_mode == HS_RS_RUN_OPERATION)
            *ret_effects = HS_RS_FX_COMMAND;
        return HS_RS_FEEDBACK;
    case HS_RS_ENABLE:
        g->host_id = (uint8_t)(f->id >> 8);
        if (!g->faults && !g->fault_word && g->mode != HS_RS_MODE_RUN) {
            g->mode = HS_RS_MODE_RUN;
            *ret_effects = HS_RS_FX_COMMAND | HS_RS_FX_ENABLED;
        }
        return HS_RS_FEEDBACK;
    case HS_RS_STOP:
        g->host_id = (uint8_t)(f->id >> 8);
        g->mode = HS_RS_MODE_RESET;
        if (f->data[0] == 1)
            g->faults = 0, g->fault_word = 0;
        *ret_effects = HS_RS_FX_COMMAND;
        return HS_RS_FEEDBACK;
    case HS_RS_SET_ZERO:
        g->host_id = (uint8_t)(f->id >> 8);
        if (f->data[0] == 1) {
            g->zeros++;
            *ret_effects = HS_RS_FX_ZERO;
        }
        return HS_RS_FEEDBACK;
    case HS_RS_PARAM_READ:
        g->host_id = (uint8_t)(f->id >> 8);
        return HS_RS_PARAM_READ;
    case HS_RS_PARAM_WRITE:
        g->host_id = (uint8_t)(f->id >> 8);
        if (write_param(g, cfg, index, f->data + 4) == 0 && index != HS_RS_P_RUN_MODE)
            *ret_effects = HS_RS_FX_COMMAND;
        return HS_RS_FEEDBACK;
    default: /* set CAN ID (it would leave the configured ID), baud rate, save, ...: not simulated
              */
        return -EOPNOTSUPP;
    }
}

static void put_f32(uint8_t *p, double x)
{
    float f = (float)x;
    uint32_t u;
    memcpy(&u, &f, 4);
    put_u32(p, u);
}

bool hs_rs_param_read(const struct hs_rs_regs *g, const struct hs_rs_config *cfg,
                      const struct hs_rs_measured *m, uint16_t index, uint8_t out[4])
{
    memset(out, 0, 4);
    const struct param *p = find(cfg, index);
    if (!p)
        return false;
    switch (p->src) {
    case S_REG: {
        const uint8_t *src = (const uint8_t *)g + p->off;
        if (p->type == T_U8)
            out[0] = src[0];
        else if (p->type == T_U16)
            memcpy(out, src, 2), out[2] = out[3] = 0; /* little-endian host (static_assert'd) */
        else
            memcpy(out, src, 4);
        return true;
    }
    case S_RUN_MODE:
        out[0] = (uint8_t)g->run_mode;
        return true;
    case S_POS:
        put_f32(out, m->q_rad);
        return true;
    case S_MOD_POS: {
        double a = fmod(m->q_rad, 2 * M_PI);
        put_f32(out, a < 0 ? a + 2 * M_PI : a);
        return true;
    }
    case S_VEL:
        put_f32(out, m->dq_rad_s);
        return true;
    case S_TORQUE:
        put_f32(out, m->tau_nm);
        return true;
    case S_IQ:
        put_f32(out, m->iq_a);
        return true;
    case S_VBUS:
        put_f32(out, m->vbus_v);
        return true;
    case S_OFFSET:
        put_f32(out, m->zero_offset_rad);
        return true;
    case S_FAULTS:
        put_u32(out, g->fault_word);
        return true;
    case S_ROTATION: {
        double t = floor(m->q_rad / (2 * M_PI));
        int16_t turns = (int16_t)(t > INT16_MAX ? INT16_MAX : t < INT16_MIN ? INT16_MIN : t);
        out[0] = (uint8_t)turns, out[1] = (uint8_t)((uint16_t)turns >> 8);
        return true;
    }
    default:
        return false;
    }
}

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "parameter bytes are copied as stored");

void hs_rs_build_answer(const struct hs_rs_regs *g, const struct hs_rs_config *cfg,
                        const struct hs_rs_measured *m, int type, uint16_t index,
                        struct hs_can_frame *f)
{
    uint8_t mid = cfg->motor_id;
    memset(f, 0, sizeof *f);
    f->flags = HS_CAN_FLAG_EXT;
    f->len = 8;
    if (type == HS_RS_FEEDBACK) {
        struct hs_rs_feedback fb = {
            .motor_id = mid,
            .host_id = g->host_id,
            .mode = g->mode,
            .faults = g->faults,
            .p_rad = m->q_rad,
            .v_rad_s = m->dq_rad_s,
            .t_nm = m->tau_nm,
            .temp_c = m->temp_c,
        };
        f->id = hs_rs_pack_feedback(&cfg->limits, &fb, f->data);
    } else if (type == HS_RS_PARAM_READ) {
        bool ok = hs_rs_param_read(g, cfg, m, index, f->data + 4);
        f->data[0] = (uint8_t)index, f->data[1] = (uint8_t)(index >> 8);
        f->id = hs_rs_can_id(HS_RS_PARAM_READ, (uint16_t)((ok ? 0 : 1) << 8 | mid), g->host_id);
    } else {
        f->id = hs_rs_can_id(HS_RS_GET_ID, mid, 0xFE);
        for (int b = 0; b < 8; b++)
            f->data[b] = (uint8_t)(cfg->mcu_uid >> (8 * b));
    }
}
