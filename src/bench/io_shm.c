#include "hilsim/io_shm.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hilsim/shm_abi.h"
#include "bench_internal.h"
#include "hilsim/shm_server.h"
#include "hilsim/rt/rt_clock.h"

struct shm_joint {
    bool commanded;     /* source shm: commands from the segment drive it */
    uint32_t modes;     /* HS_CFG_MODE_BIT set the actuator accepts */
    int64_t timeout_ns; /* the plant's command timeout */
    uint64_t last_seq;  /* shm command seq last written into the slot */
    uint32_t enc_bits;  /* encoder counter width, for unwrapping */
    uint64_t enc_raw;   /* previous raw count */
    int64_t enc_unwrapped;
    bool enc_started;
};

struct shm_imu {
    int32_t accel, gyro; /* bench sensor indices, -1: part absent (planning) */
    /* What the tick copies: the plants' readings, or a zero reading for an absent part (no
     * per-tick branch). */
    const struct hs_sensor_reading *accel_src, *gyro_src;
};

static const struct hs_sensor_reading zero_reading;

struct shm_reading {
    const struct hs_sensor_reading *src; /* samples and time */
    const double *values;                /* the layout's values */
    uint32_t nvalues, value_index;
};

struct hs_bench_shm {
    struct hs_shm_server *srv;
    uint32_t njoints;
    struct shm_joint *joints;
    const struct hs_joint_reading **joint_src;
    uint32_t nimus;
    struct shm_imu *imus;
    uint32_t nfts;
    const struct hs_sensor_reading **ft_src;
    /* The readings section: every bench sensor, as its kind's layout says (shm_abi.h). */
    uint32_t nreadings;
    struct shm_reading *readings;
    uint64_t tick_offset, last_tick; /* published tick = loop tick + 1 + tick_offset, increasing */
    bool sync_events; /* rt.clock sync with source shm: a new command is the clock's event */
    /* The server's clock: now_ns + time_offset, kept increasing. The runner's warm-up ticks
     * run on made-up times ahead of the clock, so the loop's first now_ns is earlier; commands
     * seen then must still age from that moment on, not wait for the clock to catch up. */
    int64_t time_offset, last_server_ns;
    bool time_started;
    bool warming; /* the last inputs phase was a warm-up tick */
    int64_t period_ns;
    bool lockstep; /* the bench runs in lockstep: the warm-up reads no command */
    struct hs_bench_shm_stats stats;
};

/* ---- per tick ---- */

/* shm mode -> plant mode; false when the actuator does not accept it. The ABI's velocity mode
 * with kd > 0 is its damping law kd (dq* - dq) + tau_ff, which is the plant's PD with kp = 0;
 * with kd = 0 the actuator's own velocity loop (velocity_gain) tracks dq*. */
static bool to_plant(const struct hs_shm_joint_command *in, uint32_t modes,
                     struct hs_joint_command *out)
{
    int need = -1;
    out->q = in->q;
    out->dq = in->dq;
    out->kp = in->kp;
    out->kd = in->kd;
    out->tau_ff = in->tau_ff;
    out->current = in->current_a;
    out->velocity = in->dq;
    switch (in->mode) {
    case HS_SHM_MODE_DISABLED:
        out->mode = HS_JOINT_MODE_DISABLED;
        break;
    case HS_SHM_MODE_TORQUE:
        out->mode = HS_JOINT_MODE_TORQUE;
        need = HS_CFG_MODE_TORQUE;
        break;
    case HS_SHM_MODE_CURRENT:
        out->mode = HS_JOINT_MODE_CURRENT;
        need = HS_CFG_MODE_CURRENT;
        break;
    case HS_SHM_MODE_VELOCITY:
        need = HS_CFG_MODE_VELOCITY;
        if (in->kd > 0) {
            out->mode = HS_JOINT_MODE_POSITION;
            out->kp = 0;
        } else {
            out->mode = HS_JOINT_MODE_VELOCITY;
        }
        break;
    case HS_SHM_MODE_POSITION_PD:
        out->mode = HS_JOINT_MODE_POSITION;
        need = HS_CFG_MODE_POSITION;
        break;
    case HS_SHM_MODE_BRAKE:
        out->mode = HS_JOINT_MODE_BRAKE;
        break;
    default:
        return false;
    }
    return need < 0 || (modes & HS_CFG_MODE_BIT(need));
}

/* The sync clock's event (rt.clock.sync.source shm): when the client wrote the command, by its
 * own CLOCK_MONOTONIC stamp, not when a tick first saw it (that would be the tick's own time,
 * which no discipline can move). It was written after the tick before took its look and before
 * this one did: a stamp outside that period (a client's bad clock) is held to it. */
static int64_t write_time(const struct hs_shm_joint_command *cmd, int64_t seen_ns,
                          int64_t period_ns)
{
    if (cmd->stamp_ns > seen_ns)
        return seen_ns;
    return cmd->stamp_ns < seen_ns - period_ns ? seen_ns - period_ns : cmd->stamp_ns;
}

static int shm_inputs(void *ctx, struct hs_bench *b, int64_t now_ns)
{
    struct hs_bench_shm *s = ctx;
    struct hs_shm_command_report rep;
    /* Lockstep: the client's liveness and its commands count from the first real tick, on
     * simulated time; a client that attached early and waits through the warm-up is not
     * silent, it waits for its first tick. */
    if (s->lockstep && hs_bench_warming_up(b))
        return 0;
    /* The warm-up's ticks run back to back on made-up times ahead of the clock: the shm clock
     * stays on the real one meanwhile, or a client that claimed early would be declared lost
     * (and its commands go stale) after warm-up ticks that took no real time. The loop's first
     * tick then continues that clock one period on: the set-up between them (memory locking,
     * the RT thread) is not the client's silence either; it has had no tick to answer yet. */
    const bool warming = hs_bench_warming_up(b);
    if (s->warming && !warming)
        s->time_offset = s->last_server_ns + s->period_ns - now_ns;
    s->warming = warming;
    int64_t server_ns = (warming ? hs_rt_now_ns() : now_ns) + s->time_offset;
    if (s->time_started && server_ns <= s->last_server_ns) {
        s->time_offset += s->last_server_ns + s->period_ns - server_ns;
        server_ns = s->last_server_ns + s->period_ns;
    }
    s->last_server_ns = server_ns;
    s->time_started = true;
    hs_shm_server_read_commands(s->srv, server_ns, &rep);
    const struct hs_bench_tap *tap = hs_bench_tap(b);
    const struct hs_shm_joint_input *in = hs_shm_server_joint_inputs(s->srv);
    int64_t event_ns = INT64_MIN; /* the first new command's write time, for the sync clock */
    for (uint32_t i = 0; i < s->njoints; i++) {
        struct shm_joint *sj = &s->joints[i];
        if (!sj->commanded)
            continue;
        struct hs_joint_command *slot = hs_bench_joint(b, i)->cmd;
        if (in[i].status == HS_SHM_CMD_FRESH || in[i].status == HS_SHM_CMD_HELD) {
            if (in[i].cmd.seq == sj->last_seq)
                continue; /* already in the slot, with the time it was first seen */
            sj->last_seq = in[i].cmd.seq;
            struct hs_joint_command c = *slot;
            if (!to_plant(&in[i].cmd, sj->modes, &c)) {
                s->stats.commands_refused++;
                continue;
            }
            c.rx_time_ns = now_ns - in[i].age_ns;
            if (event_ns == INT64_MIN)
                event_ns = write_time(&in[i].cmd, c.rx_time_ns, s->period_ns);
            c.seq = slot->seq + 1;
            *slot = c;
            tap->slot_write(tap->ctx, i, in[i].cmd.mode, slot); /* recording (record.h) */
            s->stats.commands_applied++;
            continue;
        }
        /* No usable command: the slot keeps what it had, but the plant must see it stale from
         * now on even if its own timeout has not run out (lost client, new owner). */
        s->stats.stale_joint_ticks++;
        if (slot->seq != 0 && sj->timeout_ns > 0 && now_ns - slot->rx_time_ns <= sj->timeout_ns) {
            slot->rx_time_ns = now_ns - sj->timeout_ns - 1;
            tap->slot_write(tap->ctx, i, UINT32_MAX, slot);
        }
    }
    if (s->sync_events && event_ns != INT64_MIN)
        hs_bench_sync_event(b, event_ns);
    /* The bench's overrun safe hold overrides every source after this phase: tell the clients
     * their commands are not in effect. */
    if (hs_bench_in_safe_hold(b))
        hs_shm_server_set_stale_joints(s->srv, s->njoints);
    s->stats.lost_clients = rep.lost_total;
    s->stats.torn_reads = rep.torn_total;
    s->stats.invalid_commands = rep.rejected_total;
    s->stats.segment_repairs = rep.repaired_total;
    s->stats.client_status = rep.client_status;
    s->stats.client_pid = rep.client_pid;
    return 0;
}

/* Encoder counters wrap at 2^bits; the ABI publishes them multi-turn. */
static int64_t unwrap(struct shm_joint *sj, uint64_t raw)
{
    if (!sj->enc_started) {
        sj->enc_started = true;
        sj->enc_raw = raw;
        sj->enc_unwrapped = (int64_t)raw;
        return sj->enc_unwrapped;
    }
    uint64_t delta = raw - sj->enc_raw;
    if (sj->enc_bits < 64) {
        uint64_t mask = (UINT64_C(1) << sj->enc_bits) - 1;
        delta &= mask;
        if (delta & (UINT64_C(1) << (sj->enc_bits - 1)))
            delta |= ~mask; /* sign-extend: the shorter way round */
    }
    sj->enc_raw = raw;
    sj->enc_unwrapped += (int64_t)delta;
    return sj->enc_unwrapped;
}

static void copy3(double *dst, const double *src)
{
    dst[0] = src[0];
    dst[1] = src[1];
    dst[2] = src[2];
}

static void publish(struct hs_bench_shm *s, struct hs_bench *b, uint64_t tick, int64_t mono_ns)
{
    struct hs_shm_joint_state *js = hs_shm_server_joints(s->srv);
    for (uint32_t i = 0; i < s->njoints; i++) {
        const struct hs_joint_reading *r = s->joint_src[i];
        js[i] = (struct hs_shm_joint_state){
            .q = r->q,
            .dq = r->dq,
            .tau = r->torque,
            .current_a = r->current,
            .encoder_count = unwrap(&s->joints[i], r->encoder_count),
        };
    }
    struct hs_shm_imu_state *imu = hs_shm_server_imus(s->srv);
    for (uint32_t k = 0; k < s->nimus; k++) {
        copy3(imu[k].accel_mps2, s->imus[k].accel_src->value);
        copy3(imu[k].gyro_rad_s, s->imus[k].gyro_src->value);
    }
    struct hs_shm_ft_state *ft = hs_shm_server_fts(s->srv);
    for (uint32_t k = 0; k < s->nfts; k++) {
        copy3(ft[k].force_n, s->ft_src[k]->value);
        copy3(ft[k].torque_nm, s->ft_src[k]->torque);
    }
    struct hs_shm_reading_stamp *stamp = hs_shm_server_reading_stamps(s->srv);
    double *values = hs_shm_server_reading_values(s->srv);
    for (uint32_t k = 0; k < s->nreadings; k++) {
        const struct shm_reading *sr = &s->readings[k];
        stamp[k] = (struct hs_shm_reading_stamp){sr->src->samples, sr->src->time_ns};
        memcpy(values + sr->value_index, sr->values, sr->nvalues * sizeof *values);
    }
    /* Warm-up ticks and the loop both count from 0: keep the published number increasing. */
    uint64_t t = tick + 1 + s->tick_offset;
    if (t <= s->last_tick) {
        s->tick_offset += s->last_tick + 1 - t;
        t = s->last_tick + 1;
    }
    s->last_tick = t;
    hs_shm_server_set_bench_flags(s->srv, hs_bench_state_flags(b));
    hs_shm_server_publish(s->srv, t, hs_world_time(hs_bench_world(b)), mono_ns);
    s->stats.published++;
}

static int shm_outputs(void *ctx, struct hs_bench *b, int64_t now_ns, uint64_t tick)
{
    (void)now_ns; /* offline runs pass simulated time; clients compare with their own clock */
    /* warm-up: clients see the attach-time state until the first real tick; a scenario's
     * freeze fault: they see the last state until it ends */
    if (hs_bench_warming_up(b) || hs_bench_shm_frozen(b))
        return 0;
    publish(ctx, b, tick, hs_rt_now_ns());
    return 0;
}

static void shm_safe_stop(void *ctx, struct hs_bench *b)
{
    struct hs_bench_shm *s = ctx;
    /* The state after the safe stop, so an observer sees where the bench was left. */
    publish(s, b, s->last_tick > s->tick_offset ? s->last_tick - s->tick_offset : 0,
            hs_rt_now_ns());
}

static void shm_destroy(void *ctx)
{
    struct hs_bench_shm *s = ctx;
    if (!s)
        return;
    hs_shm_server_destroy(s->srv);
    free(s->joints);
    free(s->joint_src);
    free(s->imus);
    free(s->ft_src);
    free(s->readings);
    free(s);
}

/* Lockstep: the client that answered the last published state releases the next tick. */
static int shm_wait_release(void *ctx, struct hs_bench *b, int64_t deadline_ns)
{
    (void)b;
    struct hs_bench_shm *s = ctx;
    return hs_shm_server_wait_release(s->srv, s->last_tick, deadline_ns);
}

static const struct hs_bench_io_ops shm_ops = {
    .name = "shm",
    .inputs = shm_inputs,
    .outputs = shm_outputs,
    .safe_stop = shm_safe_stop,
    .destroy = shm_destroy,
    .wait_release = shm_wait_release,
};

/* Outside lockstep the module gates nothing (the bench counts release sources by this op). */
static const struct hs_bench_io_ops shm_ops_free = {
    .name = "shm",
    .inputs = shm_inputs,
    .outputs = shm_outputs,
    .safe_stop = shm_safe_stop,
    .destroy = shm_destroy,
};

/* ---- attach ---- */

static int32_t sensor_link(const struct hs_bench *b, uint32_t i)
{
    const struct hs_bench_sensor *bs = hs_bench_sensor(b, i);
    return hs_bench_model(b, bs->body)->sensors[bs->model_sensor].link;
}

/* The IMU rule of io_shm.h. descs gets the IMU names; returns the IMU count. */
static uint32_t plan_imus(const struct hs_bench *b, struct shm_imu *imus,
                          struct hs_shm_sensor_desc *descs)
{
    const struct hs_config *cfg = hs_bench_config(b);
    uint32_t n = 0;
    if (cfg->sensors.nimus > 0) {
        for (uint32_t k = 0; k < cfg->sensors.nimus; k++) {
            const struct hs_cfg_imu *ci = &cfg->sensors.imus[k];
            int a = hs_bench_find_sensor_role(b, ci->accel, HS_SENSOR_ROLE_IMU_ACCEL),
                g = hs_bench_find_sensor_role(b, ci->gyro, HS_SENSOR_ROLE_IMU_GYRO);
            imus[n] = (struct shm_imu){.accel = a < 0 ? -1 : a, .gyro = g < 0 ? -1 : g};
            descs[n++] = (struct hs_shm_sensor_desc){ci->name, HS_SHM_KIND_IMU};
        }
        return n;
    }
    uint32_t ns = hs_bench_sensor_count(b);
    bool *paired = calloc(ns ? ns : 1, sizeof *paired);
    if (!paired)
        return UINT32_MAX;
    for (uint32_t i = 0; i < ns; i++) {
        const struct hs_bench_sensor *a = hs_bench_sensor(b, i);
        if (hs_sensor_type_role(a->type) != HS_SENSOR_ROLE_IMU_ACCEL)
            continue;
        int gyro = -1;
        for (uint32_t g = 0; g < ns && gyro < 0; g++) {
            const struct hs_bench_sensor *gs = hs_bench_sensor(b, g);
            if (hs_sensor_type_role(gs->type) == HS_SENSOR_ROLE_IMU_GYRO && !paired[g] &&
                gs->body == a->body && sensor_link(b, g) == sensor_link(b, i))
                gyro = (int)g;
        }
        if (gyro >= 0)
            paired[gyro] = true;
        imus[n] = (struct shm_imu){.accel = (int32_t)i, .gyro = gyro};
        descs[n++] = (struct hs_shm_sensor_desc){a->name, HS_SHM_KIND_IMU};
    }
    for (uint32_t g = 0; g < ns; g++) {
        const struct hs_bench_sensor *gs = hs_bench_sensor(b, g);
        if (hs_sensor_type_role(gs->type) == HS_SENSOR_ROLE_IMU_GYRO && !paired[g]) {
            imus[n] = (struct shm_imu){.accel = -1, .gyro = (int32_t)g};
            descs[n++] = (struct hs_shm_sensor_desc){gs->name, HS_SHM_KIND_IMU};
        }
    }
    free(paired);
    return n;
}

static int plan_joints(struct hs_bench *b, struct hs_bench_shm *s, struct hs_shm_joint_desc *jd,
                       uint64_t *ret_timeout_ns, struct hs_diag *d)
{
    const struct hs_config *cfg = hs_bench_config(b);
    uint64_t timeout = 0;
    for (uint32_t i = 0; i < s->njoints; i++) {
        const struct hs_bench_joint *j = hs_bench_joint(b, i);
        const struct hs_model *m = hs_bench_model(b, j->body);
        const struct hs_cfg_actuator *a = hs_config_actuator(cfg, j->name);
        struct shm_joint *sj = &s->joints[i];
        jd[i] = (struct hs_shm_joint_desc){
            .name = j->name, .unit = m->links[j->link].joint_type == HS_JOINT_SLIDE ? "m" : "rad"};
        sj->enc_bits = hs_config_encoder(cfg, j->name)->counter_bits;
        if (j->source != HS_CFG_SOURCE_SHM)
            continue;
        if (!(a->command_timeout_s > 0))
            return hs_diag_set(d, -EINVAL, cfg->path, a->src.line, a->src.column,
                               "actuators.%s.command_timeout_s: a joint commanded over shm "
                               "needs a timeout > 0 (a dead client's command would never "
                               "stop)",
                               j->name);
        sj->commanded = true;
        sj->modes = hs__bench_command_modes(a, &m->links[j->link]); /* config or ros2_control */
        sj->timeout_ns = (int64_t)llround(a->command_timeout_s * 1e9);
        if ((uint64_t)sj->timeout_ns > timeout)
            timeout = (uint64_t)sj->timeout_ns;
    }
    /* No shm joint: the segment is read-only in effect; any positive value will do. */
    *ret_timeout_ns = timeout ? timeout : (uint64_t)hs_bench_tick_period_ns(b);
    return 0;
}

int hs_bench_shm_attach(struct hs_bench *b, struct hs_bench_shm **ret_shm, struct hs_diag *d)
{
    const struct hs_config *cfg = hs_bench_config(b);
    uint32_t nj = hs_bench_joint_count(b), ns = hs_bench_sensor_count(b);
    struct hs_bench_shm *s = calloc(1, sizeof *s);
    struct hs_shm_joint_desc *jd = calloc(nj ? nj : 1, sizeof *jd);
    struct hs_shm_sensor_desc *sd = calloc(ns ? ns : 1, sizeof *sd);
    uint64_t timeout_ns = 0;
    int r = -ENOMEM;
    const bool lockstep = hs_bench_clock_mode(b) == HS_CLOCK_LOCKSTEP;
    /* CAN lockstep (rt.clock.lockstep_source can_frame or can_commands): the bus releases the
     * ticks; shm clients then follow them, read-only views included, and release nothing. */
    const bool gate = lockstep && hs_config_lockstep_source(cfg) == HS_CFG_LOCKSTEP_SHM;
    if (!s || !jd || !sd)
        goto nomem;
    s->njoints = nj;
    s->lockstep = lockstep;
    s->period_ns = hs_bench_tick_period_ns(b);
    s->joints = calloc(nj ? nj : 1, sizeof *s->joints);
    uint32_t nimu_max = cfg->sensors.nimus > ns ? cfg->sensors.nimus : ns;
    s->imus = calloc(nimu_max ? nimu_max : 1, sizeof *s->imus);
    s->joint_src = calloc(nj ? nj : 1, sizeof *s->joint_src);
    s->ft_src = calloc(ns ? ns : 1, sizeof *s->ft_src);
    if (!s->joints || !s->joint_src || !s->imus || !s->ft_src)
        goto nomem;
    for (uint32_t i = 0; i < nj; i++)
        s->joint_src[i] = hs_bench_joint_reading(b, i);

    if ((r = plan_joints(b, s, jd, &timeout_ns, d)) < 0)
        goto fail;
    struct hs_shm_sensor_desc *imu_descs = calloc(nimu_max ? nimu_max : 1, sizeof *imu_descs);
    if (!imu_descs)
        goto nomem;
    s->nimus = plan_imus(b, s->imus, imu_descs);
    if (s->nimus == UINT32_MAX) {
        free(imu_descs);
        goto nomem;
    }
    /* The server orders sensors by kind in layout order: IMUs first, then F/T. */
    uint32_t nsd = 0;
    for (uint32_t k = 0; k < s->nimus; k++)
        sd[nsd++] = imu_descs[k];
    free(imu_descs);
    for (uint32_t k = 0; k < s->nimus; k++) {
        struct shm_imu *u = &s->imus[k];
        u->accel_src =
            u->accel >= 0 ? hs_bench_sensor_reading(b, (uint32_t)u->accel) : &zero_reading;
        u->gyro_src = u->gyro >= 0 ? hs_bench_sensor_reading(b, (uint32_t)u->gyro) : &zero_reading;
    }
    for (uint32_t i = 0; i < ns; i++) {
        const struct hs_bench_sensor *bs = hs_bench_sensor(b, i);
        if (hs_sensor_type_role(bs->type) == HS_SENSOR_ROLE_FT) {
            s->ft_src[s->nfts++] = hs_bench_sensor_reading(b, i);
            sd[nsd++] = (struct hs_shm_sensor_desc){bs->name, HS_SHM_KIND_FORCE};
        }
    }
    struct hs_shm_reading_desc *rd = calloc(ns ? ns : 1, sizeof *rd);
    s->readings = calloc(ns ? ns : 1, sizeof *s->readings);
    if (!rd || !s->readings) {
        free(rd);
        goto nomem;
    }
    uint32_t vi = 0;
    for (uint32_t i = 0; i < ns; i++) {
        const struct hs_bench_sensor *bs = hs_bench_sensor(b, i);
        struct hs_shm_reading_desc *rdesc = &rd[i];
        snprintf(rdesc->name, sizeof rdesc->name, "%s", bs->name);
        snprintf(rdesc->kind, sizeof rdesc->kind, "%s", bs->layout.kind);
        snprintf(rdesc->unit, sizeof rdesc->unit, "%s", bs->layout.unit);
        rdesc->value_count = bs->layout.nvalues;
        rdesc->group = bs->layout.group;
        memcpy(rdesc->param, bs->layout.param, sizeof rdesc->param);
        s->readings[i] = (struct shm_reading){.src = hs_bench_sensor_reading(b, i),
                                              .values = bs->values,
                                              .nvalues = bs->layout.nvalues,
                                              .value_index = vi};
        vi += bs->layout.nvalues;
    }
    s->nreadings = ns;
    struct hs_shm_layout layout = {
        .readings = rd,
        .reading_count = ns,
        .joints = jd,
        .joint_count = nj,
        .sensors = sd,
        .sensor_count = nsd,
        .tick_period_ns = (uint64_t)hs_bench_tick_period_ns(b),
        .command_timeout_ns = timeout_ns,
        .client_timeout_ns = (uint64_t)llround(cfg->shm.client_timeout_s * 1e9),
        .clock_mode = lockstep                                  ? HS_SHM_CLOCK_LOCKSTEP
                      : hs_bench_clock_mode(b) == HS_CLOCK_SYNC ? HS_SHM_CLOCK_SYNC
                                                                : HS_SHM_CLOCK_WALL,
    };
    r = hs_shm_server_create(cfg->bench.name, &layout, cfg->shm.group[0] ? cfg->shm.group : NULL,
                             (mode_t)cfg->shm.mode, &s->srv, d);
    free(rd);
    if (r < 0)
        goto fail;
    s->sync_events =
        hs_bench_clock_mode(b) == HS_CLOCK_SYNC && cfg->rt.clock.sync.source == HS_CFG_SYNC_SHM;
    if ((r = hs_bench_add_io(b, gate ? &shm_ops : &shm_ops_free, s)) < 0) {
        hs_diag_set(d, r, cfg->path, 0, 0, "shm: too many I/O modules on the bench");
        goto fail;
    }
    for (uint32_t i = 0; i < nj; i++)
        if (s->joints[i].commanded)
            hs_bench_claim_joint(b, i);
    free(jd);
    free(sd);
    *ret_shm = s;
    return 0;
nomem:
    r = hs_diag_set(d, -ENOMEM, cfg->path, 0, 0, "shm: out of memory");
fail:
    free(jd);
    free(sd);
    shm_destroy(s);
    return r;
}

void hs_bench_shm_stats(const struct hs_bench_shm *s, struct hs_bench_shm_stats *ret)
{
    *ret = s->stats;
}

const char *hs_bench_shm_note(const struct hs_bench_shm *s)
{
    return hs_shm_server_note(s->srv);
}

void hs_bench_shm_mark_stopped(struct hs_bench_shm *s)
{
    hs_shm_server_mark_stopped(s->srv);
}
