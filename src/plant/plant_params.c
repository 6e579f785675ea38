#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/config.h"
#include "plant_internal.h"

bool hs__plant_is_joint(const struct hs_link *link)
{
    return link->joint_type == HS_JOINT_ROTATE || link->joint_type == HS_JOINT_SLIDE;
}

void hs__plant_range_from_model(const double max[3], double ret[3])
{
    for (int i = 0; i < 3; i++)
        ret[i] = max[i] > 0 ? max[i] : INFINITY;
}

int hs_plant_params_init(const struct hs_model *model, struct hs_plant_params *ret_params)
{
    uint32_t nj = 0;
    for (uint32_t i = 0; i < model->nlinks; i++)
        nj += hs__plant_is_joint(&model->links[i]);
    struct hs_plant_joint_params *joints = calloc(nj ? nj : 1, sizeof *joints);
    struct hs_plant_sensor_params *sensors =
        calloc(model->nsensors ? model->nsensors : 1, sizeof *sensors);
    if (!joints || !sensors) {
        free(joints);
        free(sensors);
        return -ENOMEM;
    }
    uint32_t j = 0;
    for (uint32_t i = 0; i < model->nlinks; i++) {
        const struct hs_link *l = &model->links[i];
        if (!hs__plant_is_joint(l))
            continue;
        hs_actuator_params_default(l, &joints[j].actuator);
        hs_encoder_params_default(l->encoder_pulse, l->gear_ratio, &joints[j].encoder);
        j++;
    }
    for (uint32_t s = 0; s < model->nsensors; s++) {
        const struct hs_sensor *ms = &model->sensors[s];
        struct hs_plant_sensor_params *sp = &sensors[s];
        sp->rate_divider = 1;
        for (int c = 0; c < 2; c++)
            for (int k = 0; k < 3; k++)
                sp->channel[c].range[k] = INFINITY;
        const struct hs__sensor_ops *o = hs__sensor_ops(ms->type);
        if (o->defaults)
            o->defaults(ms, sp);
    }
    *ret_params = (struct hs_plant_params){.seed = 0,
                                           .njoints = nj,
                                           .joints = joints,
                                           .nsensors = model->nsensors,
                                           .sensors = sensors};
    return 0;
}

void hs_plant_params_from_config(const struct hs_config *cfg, const struct hs_model *model,
                                 struct hs_plant_params *params)
{
    for (uint32_t s = 0; s < model->nsensors && s < params->nsensors; s++) {
        const struct hs__sensor_ops *o = hs__sensor_ops(model->sensors[s].type);
        if (o->from_config)
            o->from_config(cfg, model, s, &params->sensors[s]);
    }
}

static uint32_t rate_divider(const struct hs_config *cfg, double rate_hz)
{
    if (rate_hz <= 0)
        return 1;
    double tick_hz = 1e9 / (double)cfg->rt.period_ns;
    long d = lround(tick_hz / rate_hz);
    return d < 1 ? 1 : (uint32_t)d;
}

void hs__plant_imu_from_config(const struct hs_config *cfg, const struct hs_model *m,
                               uint32_t index, bool gyro, struct hs_plant_sensor_params *sp)
{
    for (uint32_t k = 0; k < cfg->sensors.nimus; k++) {
        const struct hs_cfg_imu *imu = &cfg->sensors.imus[k];
        if (hs_model_find_sensor_role(m, gyro ? imu->gyro : imu->accel,
                                      gyro ? HS_SENSOR_ROLE_IMU_GYRO : HS_SENSOR_ROLE_IMU_ACCEL) !=
            (int)index)
            continue;
        struct hs_channel_params *ch = &sp->channel[0];
        sp->rate_divider = rate_divider(cfg, imu->rate_hz);
        sp->delay_ticks = imu->delay_ticks;
        double fs = 1e9 / (double)cfg->rt.period_ns / sp->rate_divider;
        /* A noise density (unit/√Hz) sampled at fs has a per-sample std of density·√fs. */
        double density = gyro ? imu->noise_density.gyro : imu->noise_density.accel;
        ch->white_std = density * sqrt(fs);
        ch->bias_rw_std = gyro ? imu->bias_random_walk.gyro : imu->bias_random_walk.accel;
        memcpy(ch->bias, gyro ? imu->gyro_bias : imu->accel_bias, sizeof ch->bias);
        ch->quantum = gyro ? imu->gyro_lsb : imu->accel_lsb;
    }
}

void hs_plant_params_free(struct hs_plant_params *params)
{
    if (!params)
        return;
    free(params->joints);
    free(params->sensors);
    memset(params, 0, sizeof(*params));
}

int hs_plant_armature(const struct hs_model *model, const struct hs_plant_params *params,
                      double *ret_armature)
{
    uint32_t j = 0;
    for (uint32_t i = 0; i < model->nlinks; i++) {
        const struct hs_link *l = &model->links[i];
        ret_armature[i] = 0.0;
        if (!hs__plant_is_joint(l))
            continue;
        double n = l->gear_ratio, jr = l->rotor_inertia;
        if (params && j < params->njoints) {
            n = params->joints[j].actuator.gear_ratio;
            jr = params->joints[j].actuator.rotor_inertia;
        }
        if (l->joint_type == HS_JOINT_ROTATE && isfinite(n) && isfinite(jr) && jr > 0)
            ret_armature[i] = n * n * jr;
        j++;
    }
    return 0;
}

static int channel_check(const struct hs_channel_params *c, const char **field)
{
    for (int k = 0; k < 3; k++)
        if (!isfinite(c->bias[k])) {
            *field = "bias";
            return -EINVAL;
        }
    if (!(c->white_std >= 0) || !isfinite(c->white_std))
        *field = "white_std";
    else if (!(c->bias_rw_std >= 0) || !isfinite(c->bias_rw_std))
        *field = "bias_rw_std";
    else if (!(c->quantum >= 0) || !isfinite(c->quantum))
        *field = "quantum";
    else if (isnan(c->range[0]) || isnan(c->range[1]) || isnan(c->range[2]))
        *field = "range";
    else
        return 0;
    return -EINVAL;
}

/* The j-th joint's link: an error about it names the joint and where the model defines it. */
static const struct hs_link *joint_link(const struct hs_model *model, uint32_t j)
{
    for (uint32_t i = 0; i < model->nlinks; i++)
        if (hs__plant_is_joint(&model->links[i]) && j-- == 0)
            return &model->links[i];
    return NULL;
}

/* "plant params: joint NAME of model 'M': joints[j].<detail>" at the Joint's file:line:column. */
static int joint_error(struct hs_diag *d, const struct hs_model *model, uint32_t j, const char *fmt,
                       ...) __attribute__((format(printf, 4, 5)));
static int joint_error(struct hs_diag *d, const struct hs_model *model, uint32_t j, const char *fmt,
                       ...)
{
    char detail[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(detail, sizeof detail, fmt, ap);
    va_end(ap);
    const struct hs_link *l = joint_link(model, j);
    if (!l)
        return hs_diag_set(d, -EINVAL, "", 0, 0, "plant params: joints[%u].%s", j, detail);
    const char *file = l->source_file ? l->source_file : model->path ? model->path : "";
    return hs_diag_set(
        d, -EINVAL, file, file[0] ? l->source_line : 0, file[0] ? l->source_column : 0,
        "plant params: joint %s of model '%s': joints[%u].%s", l->name, model->name, j, detail);
}

int hs__plant_params_check(const struct hs_model *model, const struct hs_plant_params *p,
                           struct hs_diag *d)
{
    uint32_t nj = 0;
    for (uint32_t i = 0; i < model->nlinks; i++)
        nj += hs__plant_is_joint(&model->links[i]);
    if (p->njoints != nj)
        return hs_diag_set(d, -EINVAL, "", 0, 0,
                           "plant params: njoints is %u but model '%s' has %u joints", p->njoints,
                           model->name, nj);
    if (p->nsensors != model->nsensors)
        return hs_diag_set(d, -EINVAL, "", 0, 0,
                           "plant params: nsensors is %u but model '%s' has %u sensors",
                           p->nsensors, model->name, model->nsensors);
    if ((nj && !p->joints) || (p->nsensors && !p->sensors))
        return hs_diag_set(d, -EINVAL, "", 0, 0, "plant params: joints or sensors array missing");
    for (uint32_t j = 0; j < nj; j++) {
        const char *field = NULL;
        const struct hs_plant_joint_params *jp = &p->joints[j];
        if (hs_actuator_params_check(&jp->actuator, &field))
            return joint_error(d, model, j, "actuator.%s invalid", field);
        const struct hs_encoder_params *e = &jp->encoder;
        if (!(e->counts_per_motor_rev > 0) || !isfinite(e->counts_per_motor_rev))
            field = "counts_per_motor_rev";
        else if (!isfinite(e->gear_ratio) || e->gear_ratio == 0)
            field = "gear_ratio";
        else if (e->bits < 1 || e->bits > HS_ENCODER_BITS_MAX)
            field = "bits";
        else if (e->velocity_window < 1 || e->velocity_window > HS_ENCODER_WINDOW_MAX)
            field = "velocity_window";
        if (field)
            return joint_error(d, model, j, "encoder.%s invalid", field);
        if (jp->command_delay_ticks > HS_DELAY_TICKS_MAX ||
            jp->reading_delay_ticks > HS_DELAY_TICKS_MAX)
            return joint_error(d, model, j, "%s_delay_ticks %u above %u",
                               jp->command_delay_ticks > HS_DELAY_TICKS_MAX ? "command" : "reading",
                               jp->command_delay_ticks > HS_DELAY_TICKS_MAX
                                   ? jp->command_delay_ticks
                                   : jp->reading_delay_ticks,
                               HS_DELAY_TICKS_MAX);
    }
    for (uint32_t s = 0; s < p->nsensors; s++) {
        const struct hs_plant_sensor_params *sp = &p->sensors[s];
        const char *field = NULL;
        for (int c = 0; c < 2; c++)
            if (channel_check(&sp->channel[c], &field))
                return hs_diag_set(d, -EINVAL, "", 0, 0,
                                   "plant params: sensors[%u].channel[%d].%s invalid", s, c, field);
        if (sp->rate_divider < 1)
            return hs_diag_set(d, -EINVAL, "", 0, 0,
                               "plant params: sensors[%u].rate_divider must be >= 1", s);
        if (sp->delay_ticks > HS_DELAY_TICKS_MAX)
            return hs_diag_set(d, -EINVAL, "", 0, 0,
                               "plant params: sensors[%u].delay_ticks above %u", s,
                               HS_DELAY_TICKS_MAX);
    }
    return 0;
}
