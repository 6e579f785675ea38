/* See mujoco_contact_run.h. */
#include "mujoco_contact_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hilsim/bench.h"
#include "hilsim/config.h"
#include "hilsim/model.h"
#include "mujoco_urdf_import.h"

#define NWIN (HS_CR_REST + HS_CR_SWAY)

struct frame {
    int body;          /* MuJoCo body of the sensor's link */
    double p[3], R[9]; /* sensor frame in that body's (= the link's) frame */
};

struct hinge {
    int qadr, dadr;
    double kp, kd, q0;
    double sway_sign; /* +1 hip roll, -1 ankle roll, 0 held */
};

struct hs_mujoco_contact_run {
    mjModel *m;
    mjData *d;
    uint32_t tick;
    double step_s, sway_rad, weight_above_n;
    struct frame ft[2], imu;
    struct hinge *hinges;
    int nhinges;
    int floor_geom;
    struct hs_contact_series ser;
    double sink;
    uint64_t contacts, iters_rest, iters_sway;
};

static int fail(char *err, size_t errsz, const char *what, const char *name)
{
    snprintf(err, errsz, "MuJoCo's import has no %s '%s'", what, name);
    return -1;
}

/* The sensor frame of bench sensor i in MuJoCo: its link's body and its pose there. */
static int sensor_frame(const mjModel *m, struct hs_bench *b, int i, struct frame *ret, char *err,
                        size_t errsz)
{
    const struct hs_bench_sensor *s = hs_bench_sensor(b, (uint32_t)i);
    const struct hs_model *model = hs_bench_model(b, s->body);
    const struct hs_sensor *ms = &model->sensors[s->model_sensor];
    const char *link = model->links[ms->link].name;
    ret->body = mj_name2id(m, mjOBJ_BODY, link);
    if (ret->body < 0)
        return fail(err, errsz, "body", link);
    memcpy(ret->p, ms->pose.p, sizeof ret->p);
    memcpy(ret->R, ms->pose.R, sizeof ret->R);
    return 0;
}

static int find_hinges(struct hs_mujoco_contact_run *r, struct hs_bench *b, uint32_t robot,
                       const struct hs_contact_parts *parts, char *err, size_t errsz)
{
    uint32_t nj = hs_bench_joint_count(b);
    r->hinges = calloc(nj + 1, sizeof *r->hinges);
    if (!r->hinges) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    for (uint32_t i = 0; i < nj; i++) {
        const struct hs_bench_joint *j = hs_bench_joint(b, i);
        if (j->body != robot)
            continue;
        int id = mj_name2id(r->m, mjOBJ_JOINT, j->name);
        if (id < 0 || r->m->jnt_type[id] != mjJNT_HINGE)
            return fail(err, errsz, "hinge", j->name);
        struct hinge *h = &r->hinges[r->nhinges++];
        h->qadr = r->m->jnt_qposadr[id];
        h->dadr = r->m->jnt_dofadr[id];
        h->kp = j->kp;
        h->kd = j->kd;
        h->q0 = j->q0;
        for (int k = 0; k < 4; k++)
            if (parts->roll[k] == (int)i)
                h->sway_sign = k < 2 ? 1 : -1;
        r->d->qpos[h->qadr] = j->q0;
    }
    int n = 0;
    for (int j = 0; j < r->m->njnt; j++)
        n += r->m->jnt_type[j] == mjJNT_HINGE;
    if (n != r->nhinges) {
        snprintf(err, errsz, "MuJoCo's import has %d hinges, hilsim's bench %d", n, r->nhinges);
        return -1;
    }
    return 0;
}

int hs_mujoco_contact_run_create(const mjModel *model, struct hs_contact_run *twin, double sway_rad,
                                 unsigned flags, struct hs_mujoco_contact_run **ret, char *err,
                                 size_t errsz)
{
    struct hs_mujoco_contact_run *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errsz, "out of memory");
        return -1;
    }
    struct hs_bench *b = hs_contact_run_bench(twin);
    struct hs_contact_parts parts;
    hs_contact_run_parts(twin, &parts);
    r->weight_above_n = parts.weight_above_n;
    r->sway_rad = sway_rad;
    r->step_s = (double)hs_bench_config(b)->rt.period_ns * 1e-9;
    r->m = mj_copyModel(NULL, model);
    r->d = r->m ? mj_makeData(r->m) : NULL;
    for (int f = 0; f < 2; f++) {
        r->ser.fz[f] = calloc(NWIN, sizeof *r->ser.fz[f]);
        r->ser.cop[f] = calloc(2 * NWIN, sizeof *r->ser.cop[f]);
    }
    r->ser.imu_z = calloc(NWIN, sizeof *r->ser.imu_z);
    if (!r->d || !r->ser.fz[0] || !r->ser.fz[1] || !r->ser.cop[0] || !r->ser.cop[1] ||
        !r->ser.imu_z) {
        snprintf(err, errsz, "out of memory");
        goto out;
    }
    if (fabs(r->m->opt.timestep - r->step_s) > 1e-12) {
        snprintf(err, errsz, "MuJoCo's timestep %g s is not hilsim's tick %g s", r->m->opt.timestep,
                 r->step_s);
        goto out;
    }
    if (flags & HS_MJ_FLOOR_ONLY)
        hs_mujoco_floor_only(r->m);
    if (flags & HS_MJ_CONVERGED) {
        r->m->opt.tolerance = 1e-15;
        r->m->opt.iterations = 1000;
    }
    uint32_t robot = hs_bench_sensor(b, (uint32_t)parts.ft[0])->body;
    if (sensor_frame(r->m, b, parts.ft[0], &r->ft[0], err, errsz) ||
        sensor_frame(r->m, b, parts.ft[1], &r->ft[1], err, errsz) ||
        sensor_frame(r->m, b, parts.accel, &r->imu, err, errsz) ||
        find_hinges(r, b, robot, &parts, err, errsz))
        goto out;
    r->floor_geom = mj_name2id(r->m, mjOBJ_GEOM, "floor");
    if (r->floor_geom < 0) {
        fail(err, errsz, "geom", "floor");
        goto out;
    }
    mj_forward(r->m, r->d);
    *ret = r;
    return 0;
out:
    hs_mujoco_contact_run_destroy(r);
    return -1;
}

void hs_mujoco_contact_run_destroy(struct hs_mujoco_contact_run *r)
{
    if (!r)
        return;
    if (r->d)
        mj_deleteData(r->d);
    if (r->m)
        mj_deleteModel(r->m);
    for (int f = 0; f < 2; f++) {
        free(r->ser.fz[f]);
        free(r->ser.cop[f]);
    }
    free(r->ser.imu_z);
    free(r->hinges);
    free(r);
}

/* The sensor's origin and orientation in the world (row-major R, as MuJoCo's xmat). */
static void frame_world(const mjData *d, const struct frame *s, double p[3], double R[9])
{
    const double *xp = d->xpos + 3 * s->body, *xR = d->xmat + 9 * s->body;
    mju_mulMatVec(p, xR, s->p, 3, 3);
    mju_addTo3(p, xp);
    mju_mulMatMat(R, xR, s->R, 3, 3, 3);
}

/* What an F/T at s reads: the wrench the body's subtree passes to its parent, at s, in s. */
static void ft_reading(const mjModel *m, const mjData *d, const struct frame *s, double w[6])
{
    double p[3], R[9], neg[6];
    frame_world(d, s, p, R);
    mju_scl(neg, d->cfrc_int + 6 * s->body, -1, 6);
    mju_transformSpatial(w, neg, 1, p, d->subtree_com + 3 * m->body_rootid[s->body], R);
}

/* What an accelerometer at s reads along its z: the acceleration at its origin less gravity. */
static double accel_z(const mjModel *m, const mjData *d, const struct frame *s)
{
    double p[3], R[9], vel[6], acc[6], r[3], t[3], a[3], loc[3];
    frame_world(d, s, p, R);
    mj_objectVelocity(m, d, mjOBJ_XBODY, s->body, vel, 0);     /* (ω, v) at the body origin */
    mj_objectAcceleration(m, d, mjOBJ_XBODY, s->body, acc, 0); /* (α, a), a less g */
    mju_sub3(r, p, d->xpos + 3 * s->body);
    mju_copy3(a, acc + 3);
    mju_cross(t, acc, r); /* α × r */
    mju_addTo3(a, t);
    double wr[3];
    mju_cross(wr, vel, r);
    mju_cross(t, vel, wr); /* ω × (ω × r) */
    mju_addTo3(a, t);
    mju_mulMatTVec(loc, R, a, 3, 3);
    return loc[2];
}

static void record(struct hs_mujoco_contact_run *r, uint32_t i)
{
    const mjModel *m = r->m;
    mjData *d = r->d;
    mj_rnePostConstraint(m, d); /* cacc, cfrc_int of the step just taken */
    for (int f = 0; f < 2; f++) {
        double w[6]; /* torque, force */
        ft_reading(m, d, &r->ft[f], w);
        double fz = w[5];
        r->ser.fz[f][i] = fz;
        r->ser.cop[f][2 * i] = fz != 0 ? -w[1] / fz : 0;
        r->ser.cop[f][2 * i + 1] = fz != 0 ? w[0] / fz : 0;
    }
    r->ser.imu_z[i] = accel_z(m, d, &r->imu);
    r->contacts += (uint64_t)d->ncon;
    if (i < HS_CR_REST) {
        r->iters_rest += (uint64_t)d->solver_iter;
        for (int c = 0; c < d->ncon; c++)
            if (d->contact[c].geom1 == r->floor_geom || d->contact[c].geom2 == r->floor_geom)
                r->sink = fmax(r->sink, -d->contact[c].dist);
    } else {
        r->iters_sway += (uint64_t)d->solver_iter;
    }
}

void hs_mujoco_contact_run_all(struct hs_mujoco_contact_run *r)
{
    for (; r->tick < HS_CR_TICKS; r->tick++) {
        double a, da;
        hs_contact_sway(r->tick, r->step_s, r->sway_rad, &a, &da);
        for (int j = 0; j < r->nhinges; j++) {
            const struct hinge *h = &r->hinges[j];
            double q = h->q0 + h->sway_sign * a, dq = h->sway_sign * da;
            r->d->qfrc_applied[h->dadr] =
                h->kp * (q - r->d->qpos[h->qadr]) + h->kd * (dq - r->d->qvel[h->dadr]);
        }
        mj_step(r->m, r->d);
        if (r->tick >= HS_CR_SETTLE)
            record(r, r->tick - HS_CR_SETTLE);
    }
}

const struct hs_contact_series *hs_mujoco_contact_run_series(const struct hs_mujoco_contact_run *r)
{
    return &r->ser;
}

void hs_mujoco_contact_run_metrics(const struct hs_mujoco_contact_run *r,
                                   struct hs_contact_metrics *ret)
{
    memset(ret, 0, sizeof *ret);
    hs_contact_series_metrics(&r->ser, r->weight_above_n, ret);
    ret->contacts_mean = (double)r->contacts / NWIN;
}

double hs_mujoco_contact_run_sinkage(const struct hs_mujoco_contact_run *r)
{
    return r->sink;
}

void hs_mujoco_contact_run_iterations(const struct hs_mujoco_contact_run *r, double *ret_rest,
                                      double *ret_sway)
{
    *ret_rest = (double)r->iters_rest / HS_CR_REST;
    *ret_sway = (double)r->iters_sway / HS_CR_SWAY;
}
