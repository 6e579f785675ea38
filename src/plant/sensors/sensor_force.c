/* ForceSensor: the wrench the link's joint carries, moved to the sensor frame: force (N) and
 * torque (N·m about the sensor origin). Six values fx fy fz tx ty tz in two groups ("N,Nm");
 * ranges from maxForce and maxTorque. Needs an ODE joint on its link (a sensor on a root or
 * a merged link stays idle). Home of the kind (hilsim/sensor_kinds.h); the frame change is in
 * ft_math.c. */
#include <string.h>

#include "hilsim/config.h"
#include "hilsim/ft_sensor.h"
#include "plant_internal.h"

static const char *const fields[] = {"fx", "fy", "fz", "tx", "ty", "tz"};

static uint32_t nvalues(const struct hs_sensor *ms)
{
    (void)ms;
    return 6;
}

static void defaults(const struct hs_sensor *ms, struct hs_plant_sensor_params *sp)
{
    hs__plant_range_from_model(ms->max, sp->channel[0].range);
    hs__plant_range_from_model(ms->u.force.max_torque, sp->channel[1].range);
}

/* sensors.force.<name>: noise, bias and delay of this sensor. */
static void from_config(const struct hs_config *cfg, const struct hs_model *m, uint32_t index,
                        struct hs_plant_sensor_params *sp)
{
    for (uint32_t k = 0; k < cfg->sensors.nforce; k++) {
        const struct hs_cfg_force_sensor *f = &cfg->sensors.force[k];
        if (hs_model_find_sensor_role(m, f->name, HS_SENSOR_ROLE_FT) != (int)index)
            continue;
        sp->delay_ticks = f->delay_ticks;
        sp->channel[0].white_std = f->force_noise_n;
        sp->channel[1].white_std = f->torque_noise_nm;
        memcpy(sp->channel[0].bias, f->force_bias, sizeof f->force_bias);
        memcpy(sp->channel[1].bias, f->torque_bias, sizeof f->torque_bias);
    }
}

static int init(struct hs_plant *pl, struct hs__plant_sensor *s)
{
    s->joint = hs_world_ode_joint(pl->world, pl->body, s->link);
    s->active = s->joint != NULL && s->body != NULL;
    if (s->active) {
        int j = hs_plant_find_joint(pl, s->link);
        s->actuated = j >= 0 ? &pl->joints[j] : NULL;
        s->feedback = &pl->feedback[s->link];
        dJointSetFeedback(s->joint, s->feedback);
    }
    return 0;
}

static void sample(struct hs_plant *pl, struct hs__plant_sensor *s, double ret_f[3],
                   double ret_t[3])
{
    double R[9], p[3], f[3], t[3];
    const dJointFeedback *fb = s->feedback;
    /* The world attaches each joint as (link, parent), so the link's side is body 1; read the
     * other side if that ever changes. */
    bool link_is_1 = dJointGetBody(s->joint, 0) == s->body;
    for (int k = 0; k < 3; k++) {
        f[k] = link_is_1 ? fb->f1[k] : fb->f2[k];
        t[k] = link_is_1 ? fb->t1[k] : fb->t2[k];
    }
    /* The actuator's explicit effort (dJointAddHingeTorque / AddSliderForce, applied as body
     * forces) passes through the joint too, but ODE's feedback holds only constraint rows:
     * add it, or an ankle sensor would miss the ankle torque. It acts +axis on body 1. */
    if (s->actuated) {
        const struct hs__plant_joint *j = s->actuated;
        double e = link_is_1 ? j->out.effort : -j->out.effort;
        dVector3 axis;
        if (j->type == HS_JOINT_ROTATE) {
            dJointGetHingeAxis(j->joint, axis);
            for (int k = 0; k < 3; k++)
                t[k] += e * axis[k];
        } else {
            dJointGetSliderAxis(j->joint, axis);
            for (int k = 0; k < 3; k++)
                f[k] += e * axis[k];
        }
    }
    const dReal *c = dBodyGetPosition(s->body);
    double cv[3] = {c[0], c[1], c[2]};
    hs__plant_sensor_frame(pl, s, R, p);
    hs_ft_from_joint_wrench(f, t, cv, p, R, ret_f, ret_t);
}

static void update(struct hs_plant *pl, struct hs__plant_sensor *s, const struct hs__sense_tick *t)
{
    if (t->tick % s->p.rate_divider == 0) {
        double f[3] = {0, 0, 0}, tq[3] = {0, 0, 0};
        sample(pl, s, f, tq);
        hs__plant_sensor_hold(s, f, tq, t);
    }
    hs__plant_sensor_publish(s);
}

const struct hs__sensor_ops hs__sensor_ops_force = {
    .unit = "N,Nm",
    .group = 3,
    .fields = fields,
    .simulated = true,
    .nvalues = nvalues,
    .defaults = defaults,
    .from_config = from_config,
    .init = init,
    .update = update,
};
