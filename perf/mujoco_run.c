/* See mujoco_run.h. */
#include "mujoco_run.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mujoco/mujoco.h>

#include "hilsim/plant.h"

#define NREST HS_CR_REST
#define NTICKS (HS_CR_SETTLE + HS_CR_REST)

struct hs_mujoco_run {
    mjModel *m;
    mjData *d;
    uint32_t tick;
    int ndof_joints; /* hinge joints */
    int *qadr, *dadr;
    double *kp, *kd, *q0;
    int foot_body[2]; /* left, right: the bodies of the links holding the ankle F/T sensors */
    int waist;
    double fz[2][NREST], az[NREST], step_ns[NTICKS];
    uint64_t contacts;
};

static void quat_of(const double R[9], double q[4])
{
    /* Row-major rotation matrix to (w, x, y, z). */
    double t = R[0] + R[4] + R[8];
    if (t > 0) {
        double s = sqrt(t + 1) * 2;
        q[0] = 0.25 * s, q[1] = (R[7] - R[5]) / s, q[2] = (R[2] - R[6]) / s,
        q[3] = (R[3] - R[1]) / s;
    } else if (R[0] > R[4] && R[0] > R[8]) {
        double s = sqrt(1 + R[0] - R[4] - R[8]) * 2;
        q[0] = (R[7] - R[5]) / s, q[1] = 0.25 * s, q[2] = (R[1] + R[3]) / s,
        q[3] = (R[2] + R[6]) / s;
    } else if (R[4] > R[8]) {
        double s = sqrt(1 + R[4] - R[0] - R[8]) * 2;
        q[0] = (R[2] - R[6]) / s, q[1] = (R[1] + R[3]) / s, q[2] = 0.25 * s,
        q[3] = (R[5] + R[7]) / s;
    } else {
        double s = sqrt(1 + R[8] - R[0] - R[4]) * 2;
        q[0] = (R[3] - R[1]) / s, q[1] = (R[2] + R[6]) / s, q[2] = (R[5] + R[7]) / s,
        q[3] = 0.25 * s;
    }
}

static void pose_attrs(FILE *f, const struct hs_pose *p)
{
    double q[4];
    quat_of(p->R, q);
    fprintf(f, " pos=\"%.17g %.17g %.17g\" quat=\"%.17g %.17g %.17g %.17g\"", p->p[0], p->p[1],
            p->p[2], q[0], q[1], q[2], q[3]);
}

static void geoms(FILE *f, const struct hs_model *m, uint32_t link, const struct hs_pose *base,
                  const char *collide)
{
    const struct hs_link *l = &m->links[link];
    for (uint32_t k = 0; k < l->geom_count; k++) {
        const struct hs_geom *g = &m->geoms[l->geom_first + k];
        struct hs_pose p = g->pose;
        if (base)
            hs_pose_mul(base, &g->pose, &p);
        if (g->type == HS_GEOM_BOX) {
            fprintf(f, "<geom type=\"box\" size=\"%.17g %.17g %.17g\"", g->u.box.size[0] / 2,
                    g->u.box.size[1] / 2, g->u.box.size[2] / 2);
        } else if (g->type == HS_GEOM_SPHERE) {
            fprintf(f, "<geom type=\"sphere\" size=\"%.17g\"", g->u.sphere.radius);
        } else if (g->type == HS_GEOM_CYLINDER) {
            /* VRML's cylinder axis is Y, MuJoCo's Z: turn Z onto Y, as world_geom.c does. */
            static const double zy[9] = {1, 0, 0, 0, 0, 1, 0, -1, 0};
            double R[9];
            hs_rot_mul(p.R, zy, R);
            memcpy(p.R, R, sizeof R);
            fprintf(f, "<geom type=\"cylinder\" size=\"%.17g %.17g\"", g->u.cylinder.radius,
                    g->u.cylinder.height / 2);
        } else {
            continue; /* cones and meshes: none on SR1 or the biped */
        }
        pose_attrs(f, &p);
        fprintf(f, " %s mass=\"0\"/>\n", collide);
    }
}

static void body(FILE *f, const struct hs_model *m, uint32_t i, const double *armature)
{
    const struct hs_link *l = &m->links[i];
    fprintf(f, "<body name=\"%s\"", l->name);
    pose_attrs(f, &l->origin);
    fprintf(f, ">\n");
    if (l->parent < 0)
        fprintf(f, "<freejoint/>\n");
    else if (l->joint_type == HS_JOINT_ROTATE)
        fprintf(
            f,
            "<joint name=\"%s\" type=\"hinge\" axis=\"%.17g %.17g %.17g\" armature=\"%.17g\"/>\n",
            l->name, l->axis[0], l->axis[1], l->axis[2], armature[i]);
    const double *I = l->inertia;
    double mass = l->mass > 1e-6 ? l->mass : 1e-6;
    fprintf(f,
            "<inertial pos=\"%.17g %.17g %.17g\" mass=\"%.17g\" fullinertia=\"%.17g %.17g %.17g "
            "%.17g %.17g %.17g\"/>\n",
            l->com[0], l->com[1], l->com[2], mass, fmax(I[0], 1e-9), fmax(I[4], 1e-9),
            fmax(I[8], 1e-9), I[1], I[2], I[5]);
    geoms(f, m, i, NULL, "contype=\"1\" conaffinity=\"2\"");
    for (uint32_t c = i + 1; c < m->nlinks; c++)
        if (m->links[c].parent == (int32_t)i)
            body(f, m, c, armature);
    fprintf(f, "</body>\n");
}

static int write_mjcf(struct hs_bench *b, uint32_t robot, const char *path, const double *arm)
{
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    const struct hs_config *cfg = hs_bench_config(b);
    const double *g = cfg->physics.gravity;
    fprintf(
        f,
        "<mujoco model=\"hilsim\">\n<compiler angle=\"radian\" inertiafromgeom=\"false\" "
        "boundmass=\"1e-6\" boundinertia=\"1e-9\"/>\n<option timestep=\"%.17g\" gravity=\"%.17g "
        "%.17g %.17g\"/>\n<worldbody>\n",
        cfg->physics.step_s, g[0], g[1], g[2]);
    for (uint32_t i = 0; i < hs_world_body_count(hs_bench_world(b)); i++) {
        if (i == robot)
            continue;
        const struct hs_model *m = hs_bench_model(b, i);
        /* A static model sits at its file placement moved by the config's pose (bench_create). */
        struct hs_pose root;
        hs_pose_mul(&cfg->models[i].pose, &m->links[0].origin, &root);
        for (uint32_t l = 0; l < m->nlinks; l++)
            geoms(f, m, l, &root, "contype=\"2\" conaffinity=\"1\"");
    }
    const struct hs_model *m = hs_bench_model(b, robot);
    body(f, m, 0, arm);
    fprintf(f, "</worldbody>\n</mujoco>\n");
    return fclose(f) == 0 ? 0 : -1;
}

int hs_mujoco_run_create(struct hs_bench *b, struct hs_mujoco_run **ret, char *err, size_t errsz)
{
    const struct hs_config *cfg = hs_bench_config(b);
    uint32_t robot = 0;
    while (robot < cfg->nmodels && cfg->models[robot].is_static)
        robot++;
    const struct hs_model *model = hs_bench_model(b, robot);
    double *arm = calloc(model->nlinks, sizeof *arm);
    struct hs_mujoco_run *r = calloc(1, sizeof *r);
    char path[] = "/tmp/hilsim-mjcf-XXXXXX";
    int fd = mkstemp(path);
    if (!arm || !r || fd < 0) {
        snprintf(err, errsz, "out of memory or no temporary file");
        goto fail;
    }
    close(fd);
    hs_plant_armature(model, NULL, arm);
    if (write_mjcf(b, robot, path, arm)) {
        snprintf(err, errsz, "cannot write %s", path);
        goto fail;
    }
    r->m = mj_loadXML(path, NULL, err, (int)errsz);
    unlink(path);
    if (!r->m || !(r->d = mj_makeData(r->m))) {
        if (r->m && errsz)
            snprintf(err, errsz, "mj_makeData failed");
        goto fail;
    }
    /* Hinges: the bench's PD gains and hold targets. */
    uint32_t nj = hs_bench_joint_count(b);
    r->qadr = calloc(nj + 1, sizeof *r->qadr);
    r->dadr = calloc(nj + 1, sizeof *r->dadr);
    r->kp = calloc(nj + 1, sizeof *r->kp);
    r->kd = calloc(nj + 1, sizeof *r->kd);
    r->q0 = calloc(nj + 1, sizeof *r->q0);
    if (!r->qadr || !r->dadr || !r->kp || !r->kd || !r->q0)
        goto fail;
    for (uint32_t i = 0; i < nj; i++) {
        const struct hs_bench_joint *j = hs_bench_joint(b, i);
        if (j->body != robot)
            continue;
        int id = mj_name2id(r->m, mjOBJ_JOINT, j->name);
        if (id < 0)
            continue;
        r->qadr[r->ndof_joints] = r->m->jnt_qposadr[id];
        r->dadr[r->ndof_joints] = r->m->jnt_dofadr[id];
        r->kp[r->ndof_joints] = j->kp;
        r->kd[r->ndof_joints] = j->kd;
        r->q0[r->ndof_joints] = j->q0;
        r->d->qpos[r->m->jnt_qposadr[id]] = j->q0;
        r->ndof_joints++;
    }
    r->foot_body[0] = r->foot_body[1] = -1;
    for (uint32_t s = 0; s < hs_bench_sensor_count(b); s++) {
        const struct hs_bench_sensor *bs = hs_bench_sensor(b, s);
        if (bs->type != HS_SENSOR_FORCE || bs->body != robot)
            continue;
        const struct hs_sensor *ms = &model->sensors[bs->model_sensor];
        struct hs_pose p;
        hs_world_link_pose(hs_bench_world(b), robot, (uint32_t)ms->link, &p);
        r->foot_body[p.p[1] > 0 ? 0 : 1] =
            mj_name2id(r->m, mjOBJ_BODY, model->links[ms->link].name);
    }
    r->waist = mj_name2id(r->m, mjOBJ_BODY, model->links[0].name);
    mj_forward(r->m, r->d);
    free(arm);
    *ret = r;
    return 0;
fail:
    free(arm);
    hs_mujoco_run_destroy(r);
    return -1;
}

void hs_mujoco_run_destroy(struct hs_mujoco_run *r)
{
    if (!r)
        return;
    if (r->d)
        mj_deleteData(r->d);
    if (r->m)
        mj_deleteModel(r->m);
    free(r->qadr);
    free(r->dadr);
    free(r->kp);
    free(r->kd);
    free(r->q0);
    free(r);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

void hs_mujoco_run_ticks(struct hs_mujoco_run *r, uint32_t n)
{
    mjModel *m = r->m;
    mjData *d = r->d;
    for (uint32_t k = 0; k < n && r->tick < NTICKS; k++, r->tick++) {
        for (int j = 0; j < r->ndof_joints; j++)
            d->qfrc_applied[r->dadr[j]] =
                r->kp[j] * (r->q0[j] - d->qpos[r->qadr[j]]) - r->kd[j] * d->qvel[r->dadr[j]];
        double t0 = now_ns();
        mj_step(m, d);
        r->step_ns[r->tick] = now_ns() - t0;
        if (r->tick < HS_CR_SETTLE)
            continue;
        uint32_t i = r->tick - HS_CR_SETTLE;
        double fz[2] = {0, 0};
        for (int c = 0; c < d->ncon; c++) {
            double f[6];
            mj_contactForce(m, d, c, f);
            int b1 = m->geom_bodyid[d->contact[c].geom1], b2 = m->geom_bodyid[d->contact[c].geom2];
            for (int s = 0; s < 2; s++)
                if (b1 == r->foot_body[s] || b2 == r->foot_body[s])
                    fz[s] += f[0];
        }
        r->fz[0][i] = fz[0];
        r->fz[1][i] = fz[1];
        /* cacc: (angular, linear) acceleration at the world origin; the waist's z is close
         * enough to the IMU's for a noise figure (the waist barely turns at rest). mj_step
         * fills cacc only for a model with acceleration sensors (this one has none): without
         * mj_rnePostConstraint it stayed 0 and the row's IMU noise read 0. */
        mj_rnePostConstraint(m, d);
        r->az[i] = d->cacc[6 * r->waist + 5];
        r->contacts += (uint64_t)d->ncon;
    }
}

bool hs_mujoco_run_done(const struct hs_mujoco_run *r)
{
    return r->tick >= NTICKS;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void hs_mujoco_run_metrics(struct hs_mujoco_run *r, struct hs_contact_metrics *ret)
{
    memset(ret, 0, sizeof *ret);
    double jump = 0;
    for (int s = 0; s < 2; s++) {
        double mean = 0, var = 0;
        for (int i = 0; i < NREST; i++)
            mean += r->fz[s][i] / NREST;
        for (int i = 0; i < NREST; i++)
            var += (r->fz[s][i] - mean) * (r->fz[s][i] - mean) / (NREST - 1);
        for (int i = 1; i < NREST; i++)
            jump = fmax(jump, 100 * fabs(r->fz[s][i] - r->fz[s][i - 1]) / fabs(mean));
        ret->load_n[s] = mean;
        ret->rest_std_pct[s] = 100 * sqrt(var) / fabs(mean);
    }
    ret->rest_jump_pct = jump;
    double mean = 0, var = 0;
    for (int i = 0; i < NREST; i++)
        mean += r->az[i] / NREST;
    for (int i = 0; i < NREST; i++)
        var += (r->az[i] - mean) * (r->az[i] - mean) / (NREST - 1);
    ret->imu_z_std = sqrt(var);
    ret->contacts_mean = (double)r->contacts / NREST;
    /* Time the steps after the settling, like hilsim's rows (they time the rest and sway). */
    double *t = r->step_ns + HS_CR_SETTLE;
    qsort(t, NREST, sizeof *t, cmp_double);
    ret->step_median_us = t[NREST / 2] / 1e3;
    ret->step_p99_us = t[(int)(0.99 * (NREST - 1))] / 1e3;
}

const char *hs_mujoco_version(void)
{
    return mj_versionString();
}
