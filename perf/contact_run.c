/* See contact_run.h. */
#include "contact_run.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ode/ode.h>

#define NWIN (HS_CR_REST + HS_CR_SWAY) /* ticks recorded */
#define SWAY_PERIOD_S 4.0
#define SWAY_RAMP_S 1.0

struct hs_contact_run {
    struct hs_config *cfg; /* the base config with this variant's physics, noise zeroed */
    struct hs_bench *bench;
    uint32_t tick;
    int64_t period_ns;
    double sway_rad;
    int ft[2]; /* bench sensor index: left, right ankle F/T */
    int accel;
    int roll[4];                  /* bench joints: hip rolls (+a), ankle rolls (-a) */
    struct hs_contact_series ser; /* recorded from the end of the settling */
    double *step_ns;              /* NWIN: physics phase, when timed */
    uint32_t ntimed;
    double weight_above_n;
    uint64_t contacts;
    struct hs_world_health_summary health_rest, health_sway;
    unsigned long rand_seed; /* this run's state of ODE's global generator (QuickStep's row
                                shuffle), so interleaved runs do not draw from each other */
};

static const char *const roll_names[4][2] = {
    {"LLEG_HIP_R", "L_HIP_R"},
    {"RLEG_HIP_R", "R_HIP_R"},
    {"LLEG_ANKLE_R", "L_ANKLE_R"},
    {"RLEG_ANKLE_R", "R_ANKLE_R"},
};

const char *hs_contact_roll_joint(int k, int naming)
{
    return k >= 0 && k < 4 && naming >= 0 && naming < 2 ? roll_names[k][naming] : NULL;
}

static void zero_noise(struct hs_config *c)
{
    for (uint32_t i = 0; i < c->sensors.nforce; i++) {
        struct hs_cfg_force_sensor *f = &c->sensors.force[i];
        f->force_noise_n = f->torque_noise_nm = 0;
        memset(f->force_bias, 0, sizeof f->force_bias);
        memset(f->torque_bias, 0, sizeof f->torque_bias);
    }
    for (uint32_t i = 0; i < c->sensors.nimus; i++) {
        struct hs_cfg_imu *m = &c->sensors.imus[i];
        m->noise_density.accel = m->noise_density.gyro = 0;
        m->bias_random_walk.accel = m->bias_random_walk.gyro = 0;
        memset(m->accel_bias, 0, sizeof m->accel_bias);
        memset(m->gyro_bias, 0, sizeof m->gyro_bias);
        m->accel_lsb = m->gyro_lsb = 0;
    }
}

static void apply_variant(struct hs_world_params *p, const struct hs_contact_variant *v)
{
    if (v->config_physics)
        return;
    p->solver = v->solver;
    p->quick_iterations = v->iterations;
    p->contact_stiffness_n_m = v->stiffness_n_m;
    p->contact_damping_n_s_m = v->damping_n_s_m;
    if (v->stiffness_n_m <= 0) {
        p->contact_erp = v->erp;
        p->contact_cfm = v->cfm;
    }
    if (v->max_contacts)
        p->max_contacts = v->max_contacts;
    if (v->joint_cfm > 0)
        p->cfm = v->joint_cfm;
    p->quick_iterations_min = v->iterations_min;
    if (v->sor_w > 0)
        p->quick_w = v->sor_w;
    p->armature_joint_space = v->armature_rows;
    /* ODE's own shuffle unless the row asks for the same one every step. */
    p->quick_same_shuffle = v->same_shuffle;
}

/* The step memory lever: ODE's own policy keeps 1.2 x the need and at least 64 KiB, from
 * malloc. This variant keeps exactly the need, from a page-aligned allocator of ours, so any
 * difference in the step's speed would come from the arena's size or placement. */
static void *arena_alloc(size_t n)
{
    void *p = NULL;
    return posix_memalign(&p, 4096, n) ? NULL : p;
}

static void *arena_shrink(void *p, size_t cur, size_t smaller)
{
    (void)cur;
    (void)smaller;
    return p; /* keep the block: shrinking in place is allowed to do nothing */
}

static void arena_free(void *p, size_t cur)
{
    (void)cur;
    free(p);
}

static void exact_step_memory(dWorldID w)
{
    const dWorldStepReserveInfo ri = {sizeof ri, 1.0f, 0};
    const dWorldStepMemoryFunctionsInfo mf = {sizeof mf, arena_alloc, arena_shrink, arena_free};
    dWorldSetStepMemoryReservationPolicy(w, &ri);
    dWorldSetStepMemoryManager(w, &mf);
    dWorldCleanupWorkingMemory(w); /* the next step allocates under the new policy */
}

/* The broadphase as it was: every dynamic geom on one category bit (2) colliding with all, so
 * dSpaceCollide hands each robot's overlapping link pairs to the near callback to drop. */
static void no_body_bits(dSpaceID space)
{
    for (int i = 0; i < dSpaceGetNumGeoms(space); i++) {
        dGeomID g = dSpaceGetGeom(space, i);
        if (dGeomGetBody(g)) {
            dGeomSetCategoryBits(g, 2);
            dGeomSetCollideBits(g, ~0ul);
        }
    }
}

/* Mass of link l and every link below it. */
static double subtree_mass(const struct hs_model *m, int32_t l)
{
    double s = 0;
    for (uint32_t i = 0; i < m->nlinks; i++)
        for (int32_t k = (int32_t)i; k >= 0; k = m->links[k].parent)
            if (k == l) {
                s += m->links[i].mass;
                break;
            }
    return s;
}

static int find_parts(struct hs_contact_run *r, struct hs_diag *diag)
{
    struct hs_world *w = hs_bench_world(r->bench);
    r->ft[0] = r->ft[1] = r->accel = -1;
    uint32_t body = 0;
    for (uint32_t i = 0; i < hs_bench_sensor_count(r->bench); i++) {
        const struct hs_bench_sensor *s = hs_bench_sensor(r->bench, i);
        const struct hs_model *m = hs_bench_model(r->bench, s->body);
        if (s->type == HS_SENSOR_ACCEL && r->accel < 0)
            r->accel = (int)i;
        if (s->type != HS_SENSOR_FORCE)
            continue;
        struct hs_pose pose;
        hs_world_link_pose(w, s->body, (uint32_t)m->sensors[s->model_sensor].link, &pose);
        int side = pose.p[1] > 0 ? 0 : 1; /* +y is the robot's left */
        if (r->ft[side] < 0)
            r->ft[side] = (int)i;
        body = s->body;
    }
    for (int k = 0; k < 4; k++) {
        r->roll[k] = hs_bench_find_joint(r->bench, hs_contact_roll_joint(k, 0));
        if (r->roll[k] < 0)
            r->roll[k] = hs_bench_find_joint(r->bench, hs_contact_roll_joint(k, 1));
    }
    if (r->ft[0] < 0 || r->ft[1] < 0 || r->accel < 0 || r->roll[0] < 0 || r->roll[1] < 0 ||
        r->roll[2] < 0 || r->roll[3] < 0)
        return hs_diag_set(diag, -ENOENT, r->cfg->path, 0, 0,
                           "the robot needs a left and a right ankle F/T sensor, an "
                           "accelerometer and hip/ankle roll joints");
    const struct hs_model *m = hs_bench_model(r->bench, body);
    double mass = 0;
    for (uint32_t i = 0; i < m->nlinks; i++)
        mass += m->links[i].mass;
    for (int f = 0; f < 2; f++) {
        const struct hs_bench_sensor *s = hs_bench_sensor(r->bench, (uint32_t)r->ft[f]);
        mass -= subtree_mass(m, m->sensors[s->model_sensor].link);
    }
    const double *g = r->cfg->physics.gravity;
    r->weight_above_n = mass * sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    for (int k = 0; k < 4; k++)
        hs_bench_claim_joint(r->bench, (uint32_t)r->roll[k]);
    return 0;
}

int hs_contact_run_create(const struct hs_config *base, const struct hs_contact_variant *v,
                          double sway_rad, struct hs_contact_run **ret, struct hs_diag *diag)
{
    struct hs_contact_run *r = calloc(1, sizeof *r);
    if (!r || !(r->cfg = malloc(sizeof *r->cfg))) {
        free(r);
        return hs_diag_set(diag, -ENOMEM, "", 0, 0, "out of memory");
    }
    memcpy(r->cfg, base, sizeof *r->cfg); /* shallow: the path strings stay base's */
    zero_noise(r->cfg);
    apply_variant(&r->cfg->physics, v);
    r->sway_rad = sway_rad;
    r->period_ns = (int64_t)r->cfg->rt.period_ns;
    struct hs_contact_series *ser = &r->ser;
    for (int f = 0; f < 2; f++) {
        ser->fz[f] = calloc(NWIN, sizeof *ser->fz[f]);
        ser->cop[f] = calloc(2 * NWIN, sizeof *ser->cop[f]);
    }
    ser->imu_z = calloc(NWIN, sizeof *ser->imu_z);
    r->step_ns = calloc(NWIN, sizeof *r->step_ns);
    if (!ser->fz[0] || !ser->fz[1] || !ser->cop[0] || !ser->cop[1] || !ser->imu_z || !r->step_ns) {
        hs_contact_run_destroy(r);
        return hs_diag_set(diag, -ENOMEM, "", 0, 0, "out of memory");
    }
    /* QuickStep shuffles rows with ODE's global generator: every variant starts alike. */
    dRandSetSeed(0);
    int rc = hs_bench_create(r->cfg, &r->bench, diag);
    if (rc == 0) {
        if (v->no_body_bits)
            no_body_bits(hs_world_ode_space(hs_bench_world(r->bench)));
        if (v->exact_step_memory)
            exact_step_memory(hs_world_ode_world(hs_bench_world(r->bench)));
        rc = find_parts(r, diag);
    }
    r->rand_seed = dRandGetSeed();
    if (rc) {
        hs_contact_run_destroy(r);
        return rc;
    }
    *ret = r;
    return 0;
}

void hs_contact_run_destroy(struct hs_contact_run *r)
{
    if (!r)
        return;
    hs_bench_destroy(r->bench);
    for (int f = 0; f < 2; f++) {
        free(r->ser.fz[f]);
        free(r->ser.cop[f]);
    }
    free(r->ser.imu_z);
    free(r->step_ns);
    free(r->cfg);
    free(r);
}

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

void hs_contact_sway(uint32_t tick, double period_s, double sway_rad, double *ret_a, double *ret_da)
{
    double t = (double)((int64_t)tick - (HS_CR_SETTLE + HS_CR_REST)) * period_s;
    double a = 0, da = 0;
    if (t > 0) {
        /* Smoothstep ramp: the set point's velocity has no step (a step would kick the PD). */
        double w = 2 * M_PI / SWAY_PERIOD_S, u = t < SWAY_RAMP_S ? t / SWAY_RAMP_S : 1;
        double ramp = u * u * (3 - 2 * u),
               dramp = t < SWAY_RAMP_S ? 6 * u * (1 - u) / SWAY_RAMP_S : 0;
        a = sway_rad * ramp * sin(w * t);
        da = sway_rad * (dramp * sin(w * t) + ramp * w * cos(w * t));
    }
    *ret_a = a;
    *ret_da = da;
}

/* The sway command: both legs' roll joints, hips +a, ankles -a, from the end of the rest. */
static void sway_commands(struct hs_contact_run *r, int64_t now)
{
    double a, da;
    hs_contact_sway(r->tick, (double)r->period_ns * 1e-9, r->sway_rad, &a, &da);
    for (int k = 0; k < 4; k++) {
        const struct hs_bench_joint *j = hs_bench_joint(r->bench, (uint32_t)r->roll[k]);
        double s = k < 2 ? 1 : -1;
        struct hs_joint_command *c = j->cmd;
        c->mode = HS_JOINT_MODE_POSITION;
        c->q = j->q0 + s * a;
        c->dq = s * da;
        c->kp = j->kp;
        c->kd = j->kd;
        c->tau_ff = 0;
        c->rx_time_ns = now;
        c->seq++;
    }
}

static void record(struct hs_contact_run *r)
{
    if (r->tick < HS_CR_SETTLE)
        return;
    uint32_t i = r->tick - HS_CR_SETTLE;
    for (int f = 0; f < 2; f++) {
        const struct hs_sensor_reading *s = hs_bench_sensor_reading(r->bench, (uint32_t)r->ft[f]);
        double fz = s->value[2];
        r->ser.fz[f][i] = fz;
        /* CoP in the sensor frame from the wrench about its origin (sole below it). */
        r->ser.cop[f][2 * i] = fz != 0 ? -s->torque[1] / fz : 0;
        r->ser.cop[f][2 * i + 1] = fz != 0 ? s->torque[0] / fz : 0;
    }
    r->ser.imu_z[i] = hs_bench_sensor_reading(r->bench, (uint32_t)r->accel)->value[2];
    r->contacts += hs_world_contact_count(hs_bench_world(r->bench));
}

int hs_contact_run_ticks(struct hs_contact_run *r, uint32_t n, bool timed)
{
    struct hs_world *w = hs_bench_world(r->bench);
    dRandSetSeed(r->rand_seed);
    for (uint32_t k = 0; k < n && r->tick < HS_CR_TICKS; k++) {
        if (r->tick == HS_CR_SETTLE || r->tick == HS_CR_SETTLE + HS_CR_REST) {
            if (r->tick > HS_CR_SETTLE)
                hs_world_health_summary(w, &r->health_rest);
            hs_world_health_reset(w);
        }
        int64_t now = (int64_t)r->tick * r->period_ns;
        sway_commands(r, now);
        int rc = hs_bench_inputs(r->bench, now);
        if (rc == 0)
            rc = hs_bench_actuation(r->bench, now);
        double t0 = timed ? now_ns() : 0;
        if (rc == 0)
            rc = hs_bench_physics(r->bench, now, r->tick);
        double t1 = timed ? now_ns() : 0;
        if (rc == 0)
            rc = hs_bench_sensors(r->bench, now, r->tick);
        if (rc)
            return rc;
        if (timed && r->ntimed < NWIN)
            r->step_ns[r->ntimed++] = t1 - t0;
        record(r);
        r->tick++;
    }
    r->rand_seed = dRandGetSeed();
    if (r->tick == HS_CR_TICKS)
        hs_world_health_summary(w, &r->health_sway);
    return 0;
}

bool hs_contact_run_done(const struct hs_contact_run *r)
{
    return r->tick >= HS_CR_TICKS;
}

struct hs_bench *hs_contact_run_bench(struct hs_contact_run *r)
{
    return r->bench;
}

const char *hs_contact_run_robot(const struct hs_contact_run *r)
{
    return r->cfg->bench.name;
}

const struct hs_contact_series *hs_contact_run_series(const struct hs_contact_run *r)
{
    return &r->ser;
}

void hs_contact_run_parts(const struct hs_contact_run *r, struct hs_contact_parts *ret)
{
    memcpy(ret->ft, r->ft, sizeof ret->ft);
    ret->accel = r->accel;
    memcpy(ret->roll, r->roll, sizeof ret->roll);
    ret->weight_above_n = r->weight_above_n;
}

static double mean(const double *x, uint32_t n, uint32_t stride)
{
    double s = 0;
    for (uint32_t i = 0; i < n; i++)
        s += x[i * stride];
    return s / n;
}

static double stdev(const double *x, uint32_t n)
{
    double m = mean(x, n, 1), s = 0;
    for (uint32_t i = 0; i < n; i++)
        s += (x[i] - m) * (x[i] - m);
    return sqrt(s / (n - 1));
}

static double max_jump(const double *x, uint32_t n)
{
    double j = 0;
    for (uint32_t i = 1; i < n; i++)
        j = fmax(j, fabs(x[i] - x[i - 1]));
    return j;
}

/* White noise of std s gives x_i - (x_{i-1} + x_{i+1}) / 2 a std of s sqrt(1.5); a slow
 * signal (the sway) nearly cancels in it. */
static double noise_2nd_diff(const double *x, uint32_t n)
{
    double s = 0;
    for (uint32_t i = 1; i + 1 < n; i++) {
        double d = x[i] - 0.5 * (x[i - 1] + x[i + 1]);
        s += d * d;
    }
    return sqrt(s / (n - 2) / 1.5);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void hs_contact_series_metrics(const struct hs_contact_series *ser, double weight_above_n,
                               struct hs_contact_metrics *ret)
{
    double jump = 0, sjump = 0;
    for (int f = 0; f < 2; f++) {
        double load = mean(ser->fz[f], HS_CR_REST, 1);
        ret->load_n[f] = load;
        ret->rest_std_pct[f] = 100 * stdev(ser->fz[f], HS_CR_REST) / fabs(load);
        jump = fmax(jump, 100 * max_jump(ser->fz[f], HS_CR_REST) / fabs(load));
        ret->cop_m[f][0] = mean(ser->cop[f], HS_CR_REST, 2);
        ret->cop_m[f][1] = mean(ser->cop[f] + 1, HS_CR_REST, 2);
        const double *sw = ser->fz[f] + HS_CR_REST;
        ret->sway_noise_pct[f] = 100 * noise_2nd_diff(sw, HS_CR_SWAY) / fabs(load);
        sjump = fmax(sjump, 100 * max_jump(sw, HS_CR_SWAY) / fabs(load));
        if (f == 0) {
            double lo = sw[0], hi = sw[0];
            for (uint32_t i = 0; i < HS_CR_SWAY; i++)
                lo = fmin(lo, sw[i]), hi = fmax(hi, sw[i]);
            ret->sway_load_swing = (hi - lo) / fabs(load);
        }
    }
    ret->rest_jump_pct = jump;
    ret->sway_jump_pct = sjump;
    ret->imu_z_std = stdev(ser->imu_z, HS_CR_REST);
    ret->sway_imu_noise = noise_2nd_diff(ser->imu_z + HS_CR_REST, HS_CR_SWAY);
    ret->weight_above_n = weight_above_n;
    ret->sum_err_pct = 100 * (ret->load_n[0] + ret->load_n[1] - weight_above_n) / weight_above_n;
}

void hs_contact_run_metrics(struct hs_contact_run *r, struct hs_contact_metrics *ret)
{
    memset(ret, 0, sizeof *ret);
    hs_contact_series_metrics(&r->ser, r->weight_above_n, ret);
    if (r->ntimed) {
        qsort(r->step_ns, r->ntimed, sizeof *r->step_ns, cmp_double);
        ret->step_median_us = r->step_ns[r->ntimed / 2] / 1e3;
        ret->step_p99_us = r->step_ns[(uint32_t)(0.99 * (r->ntimed - 1))] / 1e3;
    }
    ret->health_rest = r->health_rest;
    ret->health_sway = r->health_sway;
    ret->contacts_mean = (double)r->contacts / NWIN;
}

double hs_contact_series_cop_diff_rest(const struct hs_contact_series *a,
                                       const struct hs_contact_series *b)
{
    double d = 0;
    for (int f = 0; f < 2; f++) {
        double dx = mean(a->cop[f], HS_CR_REST, 2) - mean(b->cop[f], HS_CR_REST, 2);
        double dy = mean(a->cop[f] + 1, HS_CR_REST, 2) - mean(b->cop[f] + 1, HS_CR_REST, 2);
        d = fmax(d, hypot(dx, dy));
    }
    return d;
}

double hs_contact_series_cop_diff_sway(const struct hs_contact_series *a,
                                       const struct hs_contact_series *b)
{
    double d = 0;
    for (int f = 0; f < 2; f++) {
        double load = fabs(mean(b->fz[f], HS_CR_REST, 1));
        for (uint32_t i = HS_CR_REST; i < NWIN; i++) {
            if (fabs(a->fz[f][i]) < 0.2 * load || fabs(b->fz[f][i]) < 0.2 * load)
                continue;
            d = fmax(d, hypot(a->cop[f][2 * i] - b->cop[f][2 * i],
                              a->cop[f][2 * i + 1] - b->cop[f][2 * i + 1]));
        }
    }
    return d;
}

double hs_contact_run_cop_diff_rest(const struct hs_contact_run *a, const struct hs_contact_run *b)
{
    return hs_contact_series_cop_diff_rest(&a->ser, &b->ser);
}

double hs_contact_run_cop_diff_sway(const struct hs_contact_run *a, const struct hs_contact_run *b)
{
    return hs_contact_series_cop_diff_sway(&a->ser, &b->ser);
}
