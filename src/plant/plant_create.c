#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "plant_internal.h"

/* ODE's hinge angle is continuous only inside (-pi, pi), so a stop pair is usable there. The
 * world builds every joint at the model's zero pose, so hinge angle and model position agree.
 * A hinge with a limit beyond ±pi or only one limit gets soft stops instead, enforced
 * on the unwrapped position through the motor row (plant_actuate.c). */
static void set_stops(struct hs__plant_joint *j)
{
    double lo = j->p.actuator.q_min, hi = j->p.actuator.q_max;
    if (j->type == HS_JOINT_ROTATE) {
        /* Both finite: with one side open the joint could wrap past ±pi onto the other stop. */
        if (isfinite(lo) && isfinite(hi) && lo >= -M_PI && hi <= M_PI) {
            dJointSetHingeParam(j->joint, dParamLoStop, lo);
            dJointSetHingeParam(j->joint, dParamHiStop, hi);
        } else {
            j->soft_stops = isfinite(lo) || isfinite(hi);
        }
    } else {
        if (isfinite(lo))
            dJointSetSliderParam(j->joint, dParamLoStop, lo);
        if (isfinite(hi))
            dJointSetSliderParam(j->joint, dParamHiStop, hi);
    }
}

static int init_joint(struct hs_plant *pl, struct hs__plant_joint *j, uint32_t link,
                      const struct hs_plant_joint_params *p, double tick_s)
{
    j->link = link;
    j->type = pl->model->links[link].joint_type;
    j->joint = hs_world_ode_joint(pl->world, pl->body, link);
    j->feedback = &pl->feedback[link];
    j->p = *p;
    if (!j->joint)
        return -EINVAL;
    dJointSetFeedback(j->joint, j->feedback);
    set_stops(j);
    /* The guard bounds the rate by the limit this drive enforces, not only the model's. */
    int r = hs_world_set_joint_rate_limit(pl->world, pl->body, link,
                                          fmax(fabs(p->actuator.dq_min), fabs(p->actuator.dq_max)));
    if (r)
        return r;
    double q0 = hs_world_joint_position(pl->world, pl->body, link);
    r = hs_encoder_init(&j->encoder, &p->encoder, q0, tick_s);
    if (r)
        return r;
    r = hs_delay_line_init(&j->cmd_delay, sizeof(struct hs_joint_command), p->command_delay_ticks,
                           &j->slot);
    if (r)
        return r;
    j->reading.q = q0;
    j->reading.dq = hs_world_joint_velocity(pl->world, pl->body, link);
    j->reading.encoder_count = j->encoder.last_raw;
    j->reading.encoder_position = q0;
    return hs_delay_line_init(&j->reading_delay, sizeof(struct hs_joint_reading),
                              p->reading_delay_ticks, &j->reading);
}

static int init_sensor(struct hs_plant *pl, struct hs__plant_sensor *s, uint32_t index,
                       const struct hs_plant_sensor_params *p, uint64_t seed)
{
    const struct hs_sensor *ms = &pl->model->sensors[index];
    s->type = ms->type;
    s->ops = hs__sensor_ops(ms->type);
    s->link = (uint32_t)ms->link;
    s->pose = ms->pose;
    s->p = *p;
    s->body = hs_world_ode_body(pl->world, pl->body, s->link);
    s->values = s->reading.v;
    s->nvalues = s->ops->simulated ? s->ops->nvalues(ms) : 0;
    for (int c = 0; c < 2; c++)
        hs_channel_init(&s->channel[c], &p->channel[c], seed, (uint64_t)index * 2 + (uint64_t)c);
    s->last_sample_time_s = hs_world_time(pl->world);
    int r = s->ops->init(pl, s);
    if (r)
        return r;
    return hs_delay_line_init(&s->delay, sizeof(struct hs_sensor_reading), p->delay_ticks,
                              &s->reading);
}

int hs_plant_create(struct hs_world *world, uint32_t body, const struct hs_model *model,
                    const struct hs_plant_params *params, struct hs_plant **ret_plant,
                    struct hs_diag *diag)
{
    if (body >= hs_world_body_count(world) || hs_world_body_model(world, body) != model)
        return hs_diag_set(diag, -EINVAL, "", 0, 0, "plant: body %u of the world is not model '%s'",
                           body, model->name);
    if (hs_world_body_is_static(world, body))
        return hs_diag_set(diag, -EINVAL, "", 0, 0, "plant: body %u ('%s') is static", body,
                           model->name);
    struct hs_plant_params defaults = {0};
    int r;
    if (!params) {
        r = hs_plant_params_init(model, &defaults);
        if (r)
            return hs_diag_set(diag, r, "", 0, 0, "plant: out of memory");
        params = &defaults;
    }
    r = hs__plant_params_check(model, params, diag);
    if (r) {
        hs_plant_params_free(&defaults);
        return r;
    }
    struct hs_plant *pl = calloc(1, sizeof *pl);
    r = -ENOMEM;
    if (!pl)
        goto fail;
    pl->world = world;
    pl->body = body;
    pl->model = model;
    const struct hs_world_params *wp = hs_world_params(world);
    double tick_s = wp->step_s * (wp->substeps ? wp->substeps : 1);
    pl->tick_ns = llround(tick_s * 1e9);
    pl->stop_gain = wp->erp / wp->step_s;
    pl->last_update_time_s = hs_world_time(world);
    pl->njoints = params->njoints;
    pl->nsensors = params->nsensors;
    pl->feedback = calloc(model->nlinks ? model->nlinks : 1, sizeof *pl->feedback);
    pl->joints = calloc(pl->njoints ? pl->njoints : 1, sizeof *pl->joints);
    pl->sensors = calloc(pl->nsensors ? pl->nsensors : 1, sizeof *pl->sensors);
    if (!pl->feedback || !pl->joints || !pl->sensors)
        goto fail;
    uint32_t j = 0;
    for (uint32_t i = 0; i < model->nlinks; i++) {
        if (!hs__plant_is_joint(&model->links[i]))
            continue;
        r = init_joint(pl, &pl->joints[j], i, &params->joints[j], tick_s);
        if (r)
            goto fail;
        j++;
    }
    for (uint32_t s = 0; s < pl->nsensors; s++) {
        r = init_sensor(pl, &pl->sensors[s], s, &params->sensors[s], params->seed);
        if (r)
            goto fail;
    }
    hs_plant_params_free(&defaults);
    *ret_plant = pl;
    return 0;
fail:
    hs_plant_params_free(&defaults);
    hs_plant_destroy(pl);
    return hs_diag_set(diag, r, "", 0, 0, "plant: cannot set up model '%s'", model->name);
}

void hs_plant_destroy(struct hs_plant *pl)
{
    if (!pl)
        return;
    for (uint32_t j = 0; pl->joints && j < pl->njoints; j++) {
        struct hs__plant_joint *jt = &pl->joints[j];
        /* ODE would write through the feedback pointer after we free it. */
        if (jt->joint)
            dJointSetFeedback(jt->joint, NULL);
        hs_delay_line_free(&jt->cmd_delay);
        hs_delay_line_free(&jt->reading_delay);
    }
    for (uint32_t s = 0; pl->sensors && s < pl->nsensors; s++) {
        struct hs__plant_sensor *ps = &pl->sensors[s];
        if (ps->feedback)
            dJointSetFeedback(ps->joint, NULL);
        hs_delay_line_free(&ps->delay);
        if (ps->ops && ps->ops->destroy)
            ps->ops->destroy(ps);
    }
    free(pl->joints);
    free(pl->sensors);
    free(pl->feedback);
    free(pl);
}

struct hs_joint_command *hs_plant_command(struct hs_plant *pl, uint32_t j)
{
    return &pl->joints[j].slot;
}

uint32_t hs_plant_joint_count(const struct hs_plant *pl)
{
    return pl->njoints;
}

uint32_t hs_plant_joint_link(const struct hs_plant *pl, uint32_t j)
{
    return pl->joints[j].link;
}

int hs_plant_find_joint(const struct hs_plant *pl, uint32_t link)
{
    for (uint32_t j = 0; j < pl->njoints; j++)
        if (pl->joints[j].link == link)
            return (int)j;
    return -ENOENT;
}

int hs_plant_find_joint_id(const struct hs_plant *pl, int32_t joint_id)
{
    for (uint32_t j = 0; j < pl->njoints; j++)
        if (joint_id >= 0 && pl->model->links[pl->joints[j].link].joint_id == joint_id)
            return (int)j;
    return -ENOENT;
}

const struct hs_joint_reading *hs_plant_joint_reading(const struct hs_plant *pl, uint32_t j)
{
    return &pl->joints[j].reading;
}

const struct hs_sensor_reading *hs_plant_sensor_reading(const struct hs_plant *pl, uint32_t s)
{
    return &pl->sensors[s].reading;
}

const double *hs_plant_sensor_values(const struct hs_plant *pl, uint32_t s)
{
    return pl->sensors[s].values;
}

struct hs_joint_reading *hs_plant_joint_reading_edit(struct hs_plant *pl, uint32_t j)
{
    return &pl->joints[j].reading;
}

struct hs_sensor_reading *hs_plant_sensor_reading_edit(struct hs_plant *pl, uint32_t s)
{
    return &pl->sensors[s].reading;
}

double *hs_plant_sensor_values_edit(struct hs_plant *pl, uint32_t s)
{
    return pl->sensors[s].values;
}

void hs_plant_joint_counters(const struct hs_plant *pl, uint32_t j,
                             struct hs_plant_joint_counters *ret)
{
    const struct hs_actuator_state *st = &pl->joints[j].state;
    *ret = (struct hs_plant_joint_counters){
        .stale = st->stale,
        .stale_events = st->stale_events,
        .stale_ticks = st->stale_ticks,
        .torque_saturations = st->torque_saturations,
        .current_saturations = st->current_saturations,
        .velocity_limits = st->velocity_limits,
        .invalid_commands = st->invalid_commands,
    };
}

uint64_t hs_plant_sensor_saturations(const struct hs_plant *pl, uint32_t s)
{
    return pl->sensors[s].channel[0].saturations + pl->sensors[s].channel[1].saturations;
}
