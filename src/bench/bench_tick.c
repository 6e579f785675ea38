#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "hilsim/shm_abi.h"

#include "bench_internal.h"

int hs__bench_io_no_inputs(void *ctx, struct hs_bench *b, int64_t now_ns)
{
    (void)ctx, (void)b, (void)now_ns;
    return 0;
}

int hs__bench_io_no_outputs(void *ctx, struct hs_bench *b, int64_t now_ns, uint64_t tick)
{
    (void)ctx, (void)b, (void)now_ns, (void)tick;
    return 0;
}

static void no_stage_commands(void *ctx, struct hs_bench *b, int64_t now_ns)
{
    (void)ctx, (void)b, (void)now_ns;
}

static void no_stage_substep(void *ctx, struct hs_bench *b, uint32_t substep)
{
    (void)ctx, (void)b, (void)substep;
}

static void no_stage_readings(void *ctx, struct hs_bench *b, int64_t now_ns, uint64_t tick)
{
    (void)ctx, (void)b, (void)now_ns, (void)tick;
}

void hs__bench_stage_none(struct hs_bench_stage *ret)
{
    *ret = (struct hs_bench_stage){
        .commands = no_stage_commands, .substep = no_stage_substep, .readings = no_stage_readings};
}

int hs_bench_inputs(struct hs_bench *b, int64_t now_ns)
{
    int first = 0;
    for (uint32_t k = 0; k < b->nio; k++) {
        int r = b->io[k].inputs(b->io[k].ctx, b, now_ns);
        if (r < 0 && !first)
            first = r;
    }
    return first;
}

/* Safe hold overrides every source with a PD hold where the joint is now: the leaky overrun
 * counter decided the timing can no longer be trusted to close anyone's loop. */
static void write_safe_hold(struct hs_bench *b, int64_t now_ns)
{
    for (uint32_t i = 0; i < b->njoints; i++) {
        struct hs_joint_command *cmd = b->joints[i].cmd;
        cmd->mode = HS_JOINT_MODE_POSITION;
        cmd->q = b->joints[i].hold_q;
        cmd->dq = 0;
        cmd->tau_ff = 0;
        cmd->kp = b->joints[i].kp;
        cmd->kd = b->joints[i].kd;
        cmd->rx_time_ns = now_ns;
        cmd->seq++;
    }
}

int hs_bench_actuation(struct hs_bench *b, int64_t now_ns)
{
    if (!b->started) {
        b->start_ns = now_ns;
        b->started = true;
    }
    if (b->safe_hold)
        write_safe_hold(b, now_ns);
    else
        hs__bench_demo_controller(b, now_ns);
    for (uint32_t k = 0; k < b->nstages; k++)
        b->stage[k].commands(b->stage[k].ctx, b, now_ns);
    for (uint32_t i = 0; i < b->nlive_plants; i++)
        hs_plant_apply_commands(b->live_plants[i], now_ns);
    return 0;
}

int hs_bench_physics(struct hs_bench *b, int64_t now_ns, uint64_t tick)
{
    if (b->fault_rc)
        return b->fault_rc;
    hs_world_set_tick(b->world, tick);
    uint32_t n = b->cfg->physics.substeps;
    for (uint32_t s = 0; s < n; s++) {
        /* Motor loops run at the physics rate: a stiff PD evaluated once per tick over several
         * substeps would act on a stale position. */
        if (s > 0)
            for (uint32_t i = 0; i < b->nlive_plants; i++)
                hs_plant_apply_commands(b->live_plants[i], now_ns);
        for (uint32_t k = 0; k < b->nstages; k++)
            b->stage[k].substep(b->stage[k].ctx, b, s);
        int r = hs_world_step(b->world);
        if (r < 0) {
            b->fault_rc = r;
            return r;
        }
    }
    return 0;
}

int hs_bench_sensors(struct hs_bench *b, int64_t now_ns, uint64_t tick)
{
    /* A step ODE abandoned left its bodies half integrated (possibly NaN): keep the last
     * readings. After a guard trip the state is finite and is read, so the log shows it. */
    if (b->fault_rc == -EFAULT)
        return 0;
    for (uint32_t i = 0; i < b->nlive_plants; i++)
        hs_plant_update_sensors(b->live_plants[i], now_ns, tick);
    for (uint32_t k = 0; k < b->nstages; k++)
        b->stage[k].readings(b->stage[k].ctx, b, now_ns, tick);
    return 0;
}

int hs_bench_outputs(struct hs_bench *b, int64_t now_ns, uint64_t tick)
{
    int first = 0;
    for (uint32_t k = 0; k < b->nio; k++) {
        int r = b->io[k].outputs(b->io[k].ctx, b, now_ns, tick);
        if (r < 0 && !first)
            first = r;
    }
    return first;
}

int hs_bench_wait_release(struct hs_bench *b, int64_t deadline_ns)
{
    if (b->ngates == 0)
        return -ENODEV;
    /* Every source must release (all controllers are done); a source that already released
     * answers 0 at once, so waiting on them in turn against one deadline is enough. */
    for (uint32_t k = 0; k < b->ngates; k++) {
        const struct hs_bench_io *io = b->gates[k];
        int r = io->ops->wait_release(io->ctx, b, deadline_ns);
        if (r < 0)
            return r;
    }
    return 0;
}

uint32_t hs_bench_release_sources(const struct hs_bench *b)
{
    return b->ngates;
}

void hs_bench_set_clock_mode(struct hs_bench *b, enum hs_clock_mode mode)
{
    b->clock_mode = mode;
}

void hs_bench_sync_event(struct hs_bench *b, int64_t event_ns)
{
    if (b->nsync_ev < HS_BENCH_SYNC_EVENTS_MAX)
        b->sync_ev[b->nsync_ev] = event_ns;
    if (b->nsync_ev < UINT32_MAX)
        b->nsync_ev++;
}

uint32_t hs_bench_sync_take(struct hs_bench *b, int64_t *ret, uint32_t max)
{
    uint32_t n = b->nsync_ev;
    uint32_t kept = n < HS_BENCH_SYNC_EVENTS_MAX ? n : HS_BENCH_SYNC_EVENTS_MAX;
    // cppcheck-suppress knownConditionTrueFalse ; nsync_ev is written by the inputs phase
    for (uint32_t i = 0; i < kept && i < max; i++)
        ret[i] = b->sync_ev[i];
    b->nsync_ev = 0;
    return n;
}

void hs_bench_set_planned(struct hs_bench *b, int64_t planned_ns)
{
    b->planned_ns = planned_ns;
}

int64_t hs_bench_planned(const struct hs_bench *b)
{
    return b->planned_ns;
}

enum hs_clock_mode hs_bench_clock_mode(const struct hs_bench *b)
{
    return b->clock_mode;
}

static void keep_first(int *first, int r)
{
    if (r < 0 && *first == 0)
        *first = r;
}

int hs_bench_tick(struct hs_bench *b, int64_t now_ns, uint64_t tick)
{
    /* One statement per phase: the order is the contract (sequenced, unlike the evaluations
     * of an initializer list, C17 6.7.9p23). */
    int first = 0;
    keep_first(&first, hs_bench_inputs(b, now_ns));
    keep_first(&first, hs_bench_actuation(b, now_ns));
    keep_first(&first, hs_bench_physics(b, now_ns, tick));
    keep_first(&first, hs_bench_sensors(b, now_ns, tick));
    keep_first(&first, hs_bench_outputs(b, now_ns, tick));
    return first;
}

const struct hs_world_fault *hs_bench_fault(const struct hs_bench *b)
{
    return b->fault_rc ? hs_world_fault(b->world) : NULL;
}

int hs_bench_fault_format(const struct hs_bench *b, char *buf, size_t size)
{
    const struct hs_world_fault *f = hs_bench_fault(b);
    if (!f)
        return snprintf(buf, size, "no plant fault");
    const char *body = f->body < b->nmodels ? b->cfg->models[f->body].name : NULL;
    return hs_world_fault_format(b->world, f, body, buf, size);
}

uint64_t hs_bench_state_flags(const struct hs_bench *b)
{
    return (b->safe_hold ? HS_SHM_BENCH_SAFE_HOLD : 0) | (b->fault_rc ? HS_SHM_BENCH_FAULT : 0);
}

void hs_bench_enter_safe_hold(struct hs_bench *b)
{
    if (b->safe_hold)
        return;
    for (uint32_t i = 0; i < b->njoints; i++)
        b->joints[i].hold_q =
            hs_world_joint_position(b->world, b->joints[i].body, b->joints[i].link);
    b->safe_hold = true;
}

void hs_bench_safe_stop(struct hs_bench *b)
{
    if (b->stopped)
        return;
    b->stopped = true;
    /* seq 0 is "no command": the plant executes each joint's configured safe behaviour. */
    for (uint32_t i = 0; i < b->njoints; i++)
        b->joints[i].cmd->seq = 0;
    for (uint32_t k = 0; k < b->nio; k++)
        if (b->io[k].ops->safe_stop)
            b->io[k].ops->safe_stop(b->io[k].ctx, b);
}

const struct hs_config *hs_bench_config(const struct hs_bench *b)
{
    return b->cfg;
}

struct hs_world *hs_bench_world(struct hs_bench *b)
{
    return b->world;
}

const struct hs_model *hs_bench_model(const struct hs_bench *b, uint32_t body)
{
    return body < b->nmodels ? b->models[body] : NULL;
}

uint32_t hs_bench_joint_count(const struct hs_bench *b)
{
    return b->njoints;
}

const struct hs_bench_joint *hs_bench_joint(const struct hs_bench *b, uint32_t i)
{
    return &b->joints[i];
}

int hs_bench_find_joint(const struct hs_bench *b, const char *name)
{
    for (uint32_t i = 0; i < b->njoints; i++)
        if (!strcmp(b->joints[i].name, name))
            return (int)i;
    return -ENOENT;
}

int hs_bench_find_sensor(const struct hs_bench *b, const char *name, enum hs_sensor_type type)
{
    if (!name || !name[0])
        return -ENOENT;
    for (uint32_t i = 0; i < b->nsensors; i++)
        if (b->sensors[i].type == type && !strcmp(b->sensors[i].name, name))
            return (int)i;
    return -ENOENT;
}

int hs_bench_find_sensor_role(const struct hs_bench *b, const char *name, enum hs_sensor_role role)
{
    if (!name || !name[0] || role == HS_SENSOR_ROLE_NONE)
        return -ENOENT;
    for (uint32_t i = 0; i < b->nsensors; i++)
        if (hs_sensor_type_role(b->sensors[i].type) == role && !strcmp(b->sensors[i].name, name))
            return (int)i;
    return -ENOENT;
}

uint32_t hs_bench_sensor_count(const struct hs_bench *b)
{
    return b->nsensors;
}

const struct hs_bench_sensor *hs_bench_sensor(const struct hs_bench *b, uint32_t i)
{
    return &b->sensors[i];
}

const struct hs_joint_reading *hs_bench_joint_reading(const struct hs_bench *b, uint32_t i)
{
    return hs_plant_joint_reading(b->joints[i].plant, b->joints[i].plant_joint);
}

const struct hs_sensor_reading *hs_bench_sensor_reading(const struct hs_bench *b, uint32_t i)
{
    return hs_plant_sensor_reading(b->sensors[i].plant, b->sensors[i].model_sensor);
}

int64_t hs_bench_tick_period_ns(const struct hs_bench *b)
{
    return b->period_ns;
}

bool hs_bench_in_safe_hold(const struct hs_bench *b)
{
    return b->safe_hold;
}

void hs_bench_set_warming_up(struct hs_bench *b, bool on)
{
    b->warming_up = on;
}

bool hs_bench_warming_up(const struct hs_bench *b)
{
    return b->warming_up;
}

static void noop_slot_write(void *ctx, uint32_t joint, uint32_t src_mode,
                            const struct hs_joint_command *slot)
{
    (void)ctx, (void)joint, (void)src_mode, (void)slot;
}

static void noop_event(void *ctx, uint32_t kind, int64_t a, int64_t b, const char *text)
{
    (void)ctx, (void)kind, (void)a, (void)b, (void)text;
}

const struct hs_bench_tap hs__bench_noop_tap = {.slot_write = noop_slot_write, .event = noop_event};

void hs_bench_set_tap(struct hs_bench *b, const struct hs_bench_tap *tap)
{
    b->tap = tap ? tap : &hs__bench_noop_tap;
}

const struct hs_bench_tap *hs_bench_tap(const struct hs_bench *b)
{
    return b->tap;
}

void hs_bench_set_shm_freeze(struct hs_bench *b, bool on)
{
    b->shm_frozen = on;
}

bool hs_bench_shm_frozen(const struct hs_bench *b)
{
    return b->shm_frozen;
}
