/* Checks the joint and sensor names a config uses against the loaded models. Uses only the
 * struct fields of hs_model so the config library does not depend on the model loader. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfg_can_proto.h"

struct mctx {
    const struct hs_config *cfg;
    const struct hs_model *const *models;
    uint32_t nmodels;
    struct hs_diag *diag;
};

static int err(const struct mctx *m, struct hs_cfg_src src, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int err(const struct mctx *m, struct hs_cfg_src src, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = hs_diag_vset(m->diag, -EINVAL, m->cfg->path, src.line, src.column, fmt, ap);
    va_end(ap);
    return r;
}

/* local spellings: the model library's name functions need it linked */
static const char *joint_type_word(enum hs_joint_type t)
{
    static const char *const w[] = {"fixed", "free", "rotate", "slide", "crawler"};
    return (unsigned)t < sizeof w / sizeof w[0] ? w[t] : "unknown";
}

/* what the config's sections call a sensor of each role (hilsim/sensor_kinds.h) */
static const char *role_word(enum hs_sensor_role r)
{
    static const char *const w[HS_SENSOR_ROLE_MAX] = {[HS_SENSOR_ROLE_NONE] = "unknown",
                                                      [HS_SENSOR_ROLE_IMU_ACCEL] = "acceleration",
                                                      [HS_SENSOR_ROLE_IMU_GYRO] = "rate gyro",
                                                      [HS_SENSOR_ROLE_FT] = "force"};
    return (unsigned)r < HS_SENSOR_ROLE_MAX ? w[r] : "unknown";
}

static int find_link(const struct hs_model *model, const char *name)
{
    for (uint32_t i = 0; i < model->nlinks; i++)
        if (!strcmp(model->links[i].name, name))
            return (int)i;
    return -ENOENT;
}

static bool movable(const struct hs_link *l)
{
    return l->joint_type == HS_JOINT_ROTATE || l->joint_type == HS_JOINT_SLIDE;
}

/* A movable joint of exactly one non-static model. */
static int check_joint(const struct mctx *m, const char *what, const char *joint,
                       struct hs_cfg_src src)
{
    int found = -1;
    for (uint32_t i = 0; i < m->nmodels; i++) {
        if (m->cfg->models[i].is_static)
            continue;
        int l = find_link(m->models[i], joint);
        if (l < 0)
            continue;
        if (!movable(&m->models[i]->links[l]))
            return err(m, src, "%s: joint '%s' of model '%s' is %s, not a rotate or slide joint",
                       what, joint, m->cfg->models[i].name,
                       joint_type_word(m->models[i]->links[l].joint_type));
        if (found >= 0)
            return err(m, src, "%s: joint '%s' is in models '%s' and '%s'; rename one", what, joint,
                       m->cfg->models[found].name, m->cfg->models[i].name);
        found = (int)i;
    }
    if (found < 0)
        return err(m, src, "%s: no movable joint '%s' in any robot model", what, joint);
    return 0;
}

/* Whether any robot model has a sensor of that name whose kind has that role
 * (hs_model_find_sensor_role per model). */
static bool any_sensor(const struct mctx *m, const char *name, enum hs_sensor_role role)
{
    for (uint32_t i = 0; i < m->nmodels; i++)
        if (hs_model_find_sensor_role(m->models[i], name, role) >= 0)
            return true;
    return false;
}

static int check_sensor(const struct mctx *m, const char *what, const char *name,
                        enum hs_sensor_role role, struct hs_cfg_src src)
{
    if (!name[0] || any_sensor(m, name, role))
        return 0;
    return err(m, src, "%s: no %s sensor '%s' in the models", what, role_word(role), name);
}

static int check_initial(const struct mctx *m)
{
    const struct hs_config *cfg = m->cfg;
    char what[160];
    for (uint32_t i = 0; i < cfg->nmodels; i++) {
        const struct hs_cfg_model *cm = &cfg->models[i];
        for (uint32_t k = 0; k < cm->initial_count; k++) {
            const struct hs_cfg_initial_joint *ij = &cfg->initial_joints[cm->initial_first + k];
            int l = find_link(m->models[i], ij->joint);
            hs__cfg_pathf(what, sizeof what, "models[%u].initial.joints.%s", i, ij->joint);
            if (l < 0)
                return err(m, ij->src, "%s: no joint '%s' in model '%s'", what, ij->joint,
                           cm->name);
            if (!movable(&m->models[i]->links[l]))
                return err(m, ij->src, "%s: joint '%s' is %s, not a rotate or slide joint", what,
                           ij->joint, joint_type_word(m->models[i]->links[l].joint_type));
        }
    }
    return 0;
}

static int check_joints(const struct mctx *m)
{
    const struct hs_config *cfg = m->cfg;
    char what[160];
    int r = 0;
    for (uint32_t i = 0; i < cfg->actuators.njoints && !r; i++) {
        hs__cfg_pathf(what, sizeof what, "actuators.joints.%s", cfg->actuators.joints[i].joint);
        r = check_joint(m, what, cfg->actuators.joints[i].joint, cfg->actuators.joints[i].src);
    }
    for (uint32_t i = 0; i < cfg->sensors.nencoders && !r; i++) {
        hs__cfg_pathf(what, sizeof what, "sensors.encoders.joints.%s",
                      cfg->sensors.encoders[i].joint);
        r = check_joint(m, what, cfg->sensors.encoders[i].joint, cfg->sensors.encoders[i].src);
    }
    for (uint32_t i = 0; i < cfg->controller.njoints && !r; i++) {
        hs__cfg_pathf(what, sizeof what, "controller.joints.%s", cfg->controller.joints[i].joint);
        r = check_joint(m, what, cfg->controller.joints[i].joint, cfg->controller.joints[i].src);
    }
    if (!r && cfg->controller.trajectory.joint[0])
        r = check_joint(m, "controller.trajectory.joint", cfg->controller.trajectory.joint,
                        (struct hs_cfg_src){0, 0}); /* not kept: reload compares sections */
    for (uint32_t i = 0; i < cfg->can.nnodes && !r; i++) {
        const struct hs_cfg_node *n = &cfg->can.nodes[i];
        hs__cfg_pathf(what, sizeof what, "can.nodes[%u].joint", i);
        if (hs__can_proto_cfgs[n->protocol]->single_joint)
            r = check_joint(m, what, n->joint, n->src);
    }
    return r;
}

static int check_sensors(const struct mctx *m)
{
    const struct hs_cfg_sensors *s = &m->cfg->sensors;
    char what[160];
    int r = 0;
    for (uint32_t i = 0; i < s->nimus && !r; i++) {
        hs__cfg_pathf(what, sizeof what, "sensors.imu.%s.accel", s->imus[i].name);
        r = check_sensor(m, what, s->imus[i].accel, HS_SENSOR_ROLE_IMU_ACCEL, s->imus[i].src);
        hs__cfg_pathf(what, sizeof what, "sensors.imu.%s.gyro", s->imus[i].name);
        if (!r)
            r = check_sensor(m, what, s->imus[i].gyro, HS_SENSOR_ROLE_IMU_GYRO, s->imus[i].src);
    }
    for (uint32_t i = 0; i < s->nforce && !r; i++) {
        hs__cfg_pathf(what, sizeof what, "sensors.force.%s", s->force[i].name);
        r = check_sensor(m, what, s->force[i].name, HS_SENSOR_ROLE_FT, s->force[i].src);
    }
    return r;
}

/* A sensor.<name>.<q> binding names an IMU of the config, or a force sensor (configured or
 * not) of the models; the quantity must suit it. */
static int check_bindings(const struct mctx *m)
{
    const struct hs_cfg_can *can = &m->cfg->can;
    const struct hs_cfg_sensors *s = &m->cfg->sensors;
    char what[160];
    for (uint32_t i = 0; i < can->nbindings; i++) {
        const struct hs_cfg_binding *b = &can->bindings[i];
        hs__cfg_pathf(what, sizeof what, "can binding %s.%s", b->message, b->signal);
        if (b->ref.kind == HS_CFG_REF_JOINT) {
            int r = check_joint(m, what, b->ref.name, b->src);
            if (r < 0)
                return r;
            continue;
        }
        enum hs_cfg_quantity q = b->ref.quantity;
        if (q == HS_CFG_Q_SENSOR_VALUE) {
            /* a value its kind declares: any model sensor; the bench checks the value name */
            bool found = false;
            for (uint32_t mi = 0; mi < m->nmodels && !found; mi++)
                for (int t = 0; t < HS_SENSOR_TYPE_MAX && !found; t++)
                    found = hs_model_find_sensor(m->models[mi], b->ref.name,
                                                 (enum hs_sensor_type)t) >= 0;
            if (!found)
                return err(m, b->src, "%s: no sensor '%s' in the models", what, b->ref.name);
            continue;
        }
        bool accel = q >= HS_CFG_Q_ACCEL_X && q <= HS_CFG_Q_ACCEL_Z;
        bool gyro = q >= HS_CFG_Q_GYRO_X && q <= HS_CFG_Q_GYRO_Z;
        const struct hs_cfg_imu *imu = NULL;
        for (uint32_t k = 0; k < s->nimus; k++)
            if (!strcmp(s->imus[k].name, b->ref.name))
                imu = &s->imus[k];
        if (imu) {
            if ((accel && !imu->accel[0]) || (gyro && !imu->gyro[0]) || (!accel && !gyro))
                return err(m, b->src, "%s: IMU '%s' has no %s reading", what, b->ref.name,
                           hs__names_quantity[q]);
            continue;
        }
        if (accel || gyro)
            return err(m, b->src, "%s: '%s' is not an IMU in sensors.imu", what, b->ref.name);
        if (!any_sensor(m, b->ref.name, HS_SENSOR_ROLE_FT))
            return err(m, b->src, "%s: no force sensor '%s' in the models", what, b->ref.name);
    }
    return 0;
}

int hs_config_check_against_models(const struct hs_config *config,
                                   const struct hs_model *const *models, uint32_t nmodels,
                                   struct hs_diag *diag)
{
    if (nmodels != config->nmodels)
        return hs_diag_set(diag, -EINVAL, config->path, 0, 0,
                           "%u models given for a config with %u models", nmodels, config->nmodels);
    struct mctx m = {config, models, nmodels, diag};
    int r = check_initial(&m);
    if (!r)
        r = check_joints(&m);
    if (!r)
        r = check_sensors(&m);
    if (!r)
        r = check_bindings(&m);
    return r;
}

/* The link a sensor entry names: the URDF link name (hs_link.segment_name) first, then the name
 * hilsim gives links (the joint above). */
static int sensor_link(const struct hs_model *m, const char *name)
{
    for (uint32_t i = 0; i < m->nlinks; i++)
        if (strcmp(m->links[i].segment_name, name) == 0)
            return (int)i;
    for (uint32_t i = 0; i < m->nlinks; i++)
        if (strcmp(m->links[i].name, name) == 0)
            return (int)i;
    return -1;
}

/* hs_model_add_sensor's rule, on the struct alone (this library does not link the loader): the
 * next id of its type; the array is the model's (freed by hs_model_free). */
static int add_sensor(struct hs_model *m, const struct hs_sensor *s)
{
    int32_t id = 0;
    for (uint32_t k = 0; k < m->nsensors; k++) {
        if (strcmp(m->sensors[k].name, s->name) == 0)
            return -EEXIST;
        if (m->sensors[k].type == s->type && m->sensors[k].sensor_id >= id)
            id = m->sensors[k].sensor_id + 1;
    }
    struct hs_sensor *a = realloc(m->sensors, (m->nsensors + 1) * sizeof *a);
    if (!a)
        return -ENOMEM;
    m->sensors = a;
    m->sensors[m->nsensors] = *s;
    m->sensors[m->nsensors++].sensor_id = id;
    return 0;
}

int hs_config_add_model_sensors(const struct hs_config *config, uint32_t index,
                                struct hs_model *model, struct hs_diag *diag)
{
    const struct hs_cfg_model *cm = &config->models[index];
    for (uint32_t k = 0; k < cm->sensor_count; k++) {
        const struct hs_cfg_model_sensor *e = &config->model_sensors[cm->sensor_first + k];
        int li = sensor_link(model, e->link);
        if (li < 0)
            return hs_diag_set(diag, -EINVAL, config->path, e->src.line, e->src.column,
                               "models[%u].sensors.%s.link: '%s' is no link of %s", index, e->name,
                               e->link, model->path ? model->path : model->name);
        struct hs_sensor s = {.link = li};
        hs_sensor_kind_defaults(&s, e->type);
        snprintf(s.name, sizeof s.name, "%s", e->name);
        memcpy(s.pose.p, e->position, sizeof s.pose.p);
        hs_rot_from_axis_angle(e->rotation, e->rotation[3], s.pose.R);
        int r = add_sensor(model, &s);
        if (r == -EEXIST)
            return hs_diag_set(diag, r, config->path, e->src.line, e->src.column,
                               "models[%u].sensors.%s: the model already has a sensor of that "
                               "name",
                               index, e->name);
        if (r < 0)
            return hs_diag_set(diag, r, config->path, e->src.line, e->src.column, "out of memory");
    }
    return 0;
}
