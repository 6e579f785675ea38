/* Benchmark (not a test), issue 29: the world step against MuJoCo 2.2.2's mj_step on the robot as
 * MuJoCo's own URDF importer reads it, and hilsim's cost with 1, 2, 4 and 8 robots in one world.
 *
 * MuJoCo side: the model is written with hs_model_write_urdf (what `hilsim model --urdf`
 * writes: same masses, inertias, geometry), loaded with mj_loadXML (MuJoCo's URDF importer), saved
 * back as MJCF with mj_saveLastXML, and given the one thing URDF cannot hold: a floor plane in
 * the worldbody and a 1 ms timestep (text inserted into MuJoCo's own output, no hand
 * conversion). hilsim side: the VRML model and floor.wrl with the default physics. Both robots
 * stand under the same explicit PD hold (kp, kd per joint, to the initial pose), both engines
 * stepped in interleaved rounds; each step is timed. Printed per engine: median, fast mode (p10)
 * and slow mode (p90: steps on these VMs are bimodal), and the ratio of medians. Then the
 * contact benchmark's accuracy goals at rest (tests/world/test_contact_accuracy.c) for both
 * engines over the same timed steps: each foot's contact load (its links with a ForceSensor;
 * hilsim: the sensor joint's ODE feedback plus the foot's weight, as the F/T reads it; MuJoCo:
 * the normal forces of the foot body's contacts) std <= 0.5 % and tick-to-tick jump <= 1 % of
 * that load, both feet's sum = the weight within 0.5 %, sinkage (deepest contact) <= 1 mm. Not
 * here: CoP against the exact solver, the accelerometer, the sway (contact_bench has them on
 * the project's own MJCF conversion).
 *   ./build/perf/mujoco_urdf_bench ROBOT.wrl FLOOR.wrl [ROUNDS=5] [STEPS=1000]
 * e.g. ../shared/models/openhrp/SR1.wrl ../shared/models/openhrp/floor.wrl */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <mujoco/mujoco.h>
#include <ode/ode.h>

#include "hilsim/model.h"
#include "hilsim/world.h"

#define KP 1000.0 /* N·m/rad */
#define KD 10.0   /* N·m·s/rad */
#define MAX_ROBOTS 8

#define MAX_FEET 2
/* Goals of the contact benchmark (tests/world/test_contact_accuracy.c) */
#define NOISE_PCT 0.5
#define JUMP_PCT 1.0
#define SUM_PCT 0.5
#define SINK_M 0.001

struct acc {
    int nfeet;
    double sum[MAX_FEET], sum2[MAX_FEET], prev[MAX_FEET], jump[MAX_FEET], total_sum;
    double sink;
    size_t n;
};

static void acc_add(struct acc *a, const double *load, double sink)
{
    double total = 0;
    for (int f = 0; f < a->nfeet; f++) {
        a->sum[f] += load[f];
        a->sum2[f] += load[f] * load[f];
        if (a->n && fabs(load[f] - a->prev[f]) > a->jump[f])
            a->jump[f] = fabs(load[f] - a->prev[f]);
        a->prev[f] = load[f];
        total += load[f];
    }
    a->total_sum += total;
    a->sink = fmax(a->sink, sink);
    a->n++;
}

static bool acc_print(const char *engine, const struct acc *a, double weight)
{
    bool ok = true;
    printf("  %-8s", engine);
    for (int f = 0; f < a->nfeet; f++) {
        double mean = a->sum[f] / (double)a->n;
        double sd = sqrt(fmax(0, a->sum2[f] / (double)a->n - mean * mean));
        double std_pct = 100 * sd / mean, jump_pct = 100 * a->jump[f] / mean;
        ok = ok && std_pct <= NOISE_PCT && jump_pct <= JUMP_PCT;
        printf(" %8.2f %7.3f %7.3f", mean, std_pct, jump_pct);
    }
    double sum_pct = 100 * (a->total_sum / (double)a->n - weight) / weight;
    ok = ok && fabs(sum_pct) <= SUM_PCT && a->sink <= SINK_M;
    printf(" %+8.3f %8.3f  %s\n", sum_pct, 1e3 * a->sink, ok ? "met" : "NOT met");
    return ok;
}

/* hilsim's feet: the links that carry a ForceSensor (their joint's feedback is the F/T). */
static int feet_of(const struct hs_model *m, int32_t *ret)
{
    int n = 0;
    for (uint32_t i = 0; i < m->nsensors && n < MAX_FEET; i++)
        if (m->sensors[i].type == HS_SENSOR_FORCE)
            ret[n++] = m->sensors[i].link;
    return n;
}

/* A foot's contact load from its sensor joint's feedback: at rest the floor carries what the
 * joint passes down plus the foot's own weight. */
static double hs_foot_load(struct hs_world *w, int32_t link, const dJointFeedback *fb)
{
    dBodyID b = hs_world_ode_body(w, 1, (uint32_t)link);
    dJointID j = hs_world_ode_joint(w, 1, (uint32_t)link);
    dMass mass;
    dBodyGetMass(b, &mass);
    double on_foot = dJointGetBody(j, 1) == b ? fb->f2[2] : fb->f1[2];
    return mass.mass * 9.80665 - on_foot;
}

static double mj_foot_load(const mjModel *m, const mjData *d, int body, double *sink)
{
    double fz = 0;
    for (int i = 0; i < d->ncon; i++) {
        const mjContact *c = &d->contact[i];
        int b1 = m->geom_bodyid[c->geom1], b2 = m->geom_bodyid[c->geom2];
        *sink = fmax(*sink, -c->dist);
        if (b1 != body && b2 != body)
            continue;
        mjtNum f[6];
        mj_contactForce(m, d, i, f);
        /* f[0] is the normal force along frame row 0, which points from geom1 to geom2 */
        double up = f[0] * c->frame[2];
        fz += b2 == body ? up : -up;
    }
    return fz;
}

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

struct dist {
    double med, p10, p90;
};

static struct dist dist_of(double *us, size_t n)
{
    qsort(us, n, sizeof *us, cmp);
    return (struct dist){us[n / 2], us[n / 10], us[n * 9 / 10]};
}

/* hilsim: nrobots copies of model on a 1.5 m grid (4 per row) within the 10 m floor. */
static struct hs_world *hs_make(const struct hs_model *robot, const struct hs_model *floor,
                                int nrobots)
{
    struct hs_world_body_spec s[MAX_ROBOTS + 1];
    hs_world_spec_default(&s[0], floor);
    s[0].is_static = true;
    for (int k = 0; k < nrobots; k++) {
        hs_world_spec_default(&s[1 + k], robot);
        s[1 + k].root_pose.p[0] += 1.5 * (k % 4) - 2.25;
        int row = k / 4; /* four robots a row */
        s[1 + k].root_pose.p[1] += 1.5 * row;
        s[1 + k].rest_on_static = true;
    }
    struct hs_world_params p;
    hs_world_params_default(&p);
    struct hs_world *w = NULL;
    struct hs_diag d = {0};
    if (hs_world_create(&p, s, (uint32_t)nrobots + 1, &w, &d)) {
        fprintf(stderr, "hs_world_create: %s\n", d.msg);
        exit(1);
    }
    return w;
}

static void hs_hold(struct hs_world *w, const struct hs_model *m, int nrobots)
{
    for (int k = 0; k < nrobots; k++)
        for (uint32_t i = 1; i < m->nlinks; i++)
            if (m->links[i].joint_type == HS_JOINT_ROTATE)
                hs_world_set_joint_effort(w, 1 + (uint32_t)k, i,
                                          -KP * hs_world_joint_position(w, 1 + (uint32_t)k, i) -
                                              KD * hs_world_joint_velocity(w, 1 + (uint32_t)k, i));
}

/* MuJoCo's import of the URDF, plus a floor and the timestep. NULL on failure (printed). */
static mjModel *mj_make(const struct hs_model *robot, const char *dir)
{
    char urdf[512], xml[512], err[1000] = "";
    snprintf(urdf, sizeof urdf, "%s/robot.urdf", dir);
    snprintf(xml, sizeof xml, "%s/robot.xml", dir);
    struct hs_diag d = {0};
    if (hs_model_write_urdf(robot, urdf, NULL, &d)) {
        fprintf(stderr, "write urdf: %s\n", d.msg);
        return NULL;
    }
    mjModel *m = mj_loadXML(urdf, NULL, err, sizeof err);
    if (!m || !mj_saveLastXML(xml, m, err, sizeof err)) {
        fprintf(stderr, "MuJoCo URDF import: %s\n", err);
        return NULL;
    }
    mj_deleteModel(m);
    FILE *f = fopen(xml, "r");
    if (!f)
        return NULL;
    static char text[1 << 20];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    char *wb = strstr(text, "<worldbody>");
    char *mj = strstr(text, ">"); /* end of <mujoco ...> */
    if (!wb || !mj)
        return NULL;
    f = fopen(xml, "w");
    if (!f)
        return NULL;
    fwrite(text, 1, (size_t)(mj + 1 - text), f);
    fputs("\n  <option timestep=\"0.001\"/>", f);
    fwrite(mj + 1, 1, (size_t)(wb + strlen("<worldbody>") - (mj + 1)), f);
    fputs("\n    <geom name=\"floor\" type=\"plane\" size=\"5 5 0.1\"/>", f);
    fputs(wb + strlen("<worldbody>"), f);
    fclose(f);
    m = mj_loadXML(xml, NULL, err, sizeof err);
    if (!m)
        fprintf(stderr, "MuJoCo reload: %s\n", err);
    return m;
}

static void mj_hold(const mjModel *m, mjData *d, const double *q0)
{
    for (int j = 0; j < m->njnt; j++)
        if (m->jnt_type[j] == mjJNT_HINGE) {
            int qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
            d->qfrc_applied[da] = KP * (q0[qa] - d->qpos[qa]) - KD * d->qvel[da];
        }
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s ROBOT.wrl FLOOR.wrl [ROUNDS] [STEPS]\n", argv[0]);
        return 2;
    }
    int rounds = argc > 3 ? atoi(argv[3]) : 5, steps = argc > 4 ? atoi(argv[4]) : 1000;
    if (rounds < 1 || steps < 1)
        return 2;
    struct hs_model *robot = NULL, *floor = NULL;
    struct hs_diag d = {0};
    if (hs_model_load(argv[1], &robot, &d) || hs_model_load(argv[2], &floor, &d)) {
        fprintf(stderr, "%s\n", d.msg);
        return 1;
    }
    char dir[] = "/tmp/hs_mjurdf_XXXXXX";
    if (!mkdtemp(dir))
        return 1;
    mjModel *mm = mj_make(robot, dir);
    if (!mm)
        return 1;
    mjData *md = mj_makeData(mm);
    struct hs_world *w = hs_make(robot, floor, 1);
    size_t total = (size_t)rounds * (size_t)steps;
    double *ush = malloc(total * sizeof *ush), *usm = malloc(total * sizeof *usm);
    if (!ush || !usm)
        return 1;
    for (int i = 0; i < 500; i++) { /* settle both */
        hs_hold(w, robot, 1);
        hs_world_step(w);
        mj_hold(mm, md, mm->qpos0);
        mj_step(mm, md);
    }
    int32_t feet[MAX_FEET];
    int mj_feet[MAX_FEET];
    struct acc ah = {.nfeet = feet_of(robot, feet)}, am = {.nfeet = ah.nfeet};
    static dJointFeedback fb[MAX_FEET];
    for (int f = 0; f < ah.nfeet; f++) {
        dJointSetFeedback(hs_world_ode_joint(w, 1, (uint32_t)feet[f]), &fb[f]);
        mj_feet[f] = mj_name2id(mm, mjOBJ_BODY, robot->links[feet[f]].name);
        if (mj_feet[f] < 0) {
            fprintf(stderr, "MuJoCo's import has no body '%s'\n", robot->links[feet[f]].name);
            return 1;
        }
    }
    hs_world_health_reset(w);
    size_t nh = 0, nm = 0;
    for (int r = 0; r < rounds; r++) {
        for (int i = 0; i < steps; i++) {
            hs_hold(w, robot, 1);
            double t0 = now_us();
            int rc = hs_world_step(w);
            ush[nh++] = now_us() - t0;
            if (rc) {
                fprintf(stderr, "hilsim: step failed (%d)\n", rc);
                return 1;
            }
            double load[MAX_FEET];
            for (int f = 0; f < ah.nfeet; f++)
                load[f] = hs_foot_load(w, feet[f], &fb[f]);
            acc_add(&ah, load, 0);
        }
        for (int i = 0; i < steps; i++) {
            mj_hold(mm, md, mm->qpos0);
            double t0 = now_us();
            mj_step(mm, md);
            usm[nm++] = now_us() - t0;
            double load[MAX_FEET], sink = 0;
            for (int f = 0; f < am.nfeet; f++)
                load[f] = mj_foot_load(mm, md, mj_feet[f], &sink);
            acc_add(&am, load, sink);
        }
    }
    struct hs_world_health_summary hh;
    hs_world_health_summary(w, &hh);
    ah.sink = hh.penetration_m.max;
    struct hs_pose root;
    hs_world_link_pose(w, 1, 0, &root);
    struct dist dh = dist_of(ush, nh), dm = dist_of(usm, nm);
    printf("%s: hilsim (defaults) against MuJoCo %s on its own URDF import, %d rounds x %d "
           "steps, interleaved\n",
           robot->name, mj_versionString(), rounds, steps);
    printf("  %-8s %10s %10s %10s  %s\n", "engine", "median us", "fast p10", "slow p90",
           "root z after, m");
    printf("  %-8s %10.1f %10.1f %10.1f  %.4f\n", "hilsim", dh.med, dh.p10, dh.p90, root.p[2]);
    printf("  %-8s %10.1f %10.1f %10.1f  %.4f (%d contacts)\n", "mujoco", dm.med, dm.p10, dm.p90,
           md->qpos[2], md->ncon);
    printf("  hilsim / MuJoCo (medians): %.2f\n", dh.med / dm.med);
    if (ah.nfeet) {
        double weight = hs_model_total_mass(robot) * 9.80665;
        printf("%s at rest over the same steps: contact accuracy against the contact benchmark's "
               "goals (std <= %.1f %%, jump <= %.1f %% of each foot's load, sum = weight %.1f N "
               "within %.1f %%, sinkage <= %.1f mm)\n",
               robot->name, NOISE_PCT, JUMP_PCT, weight, SUM_PCT, 1e3 * SINK_M);
        printf("  %-8s", "engine");
        for (int f = 0; f < ah.nfeet; f++)
            printf(" %8s %7s %7s", f ? "load2 N" : "load1 N", "std %", "jump %");
        printf(" %8s %8s  %s\n", "sum %", "sink mm", "goals");
        acc_print("hilsim", &ah, weight);
        acc_print("mujoco", &am, weight);
    }
    hs_world_destroy(w);
    mj_deleteData(md);
    mj_deleteModel(mm);

    /* Scaling: 1, 2, 4, 8 robots in one hilsim world. */
    printf("%s: robots in one hilsim world, %d steps each\n", robot->name, steps);
    printf("  %-6s %10s %14s %8s %14s\n", "robots", "median us", "per robot us", "ratio",
           "narrow-ph. us");
    double one = 0;
    for (int n = 1; n <= MAX_ROBOTS; n *= 2) {
        struct hs_world *wn = hs_make(robot, floor, n);
        for (int i = 0; i < 300; i++) {
            hs_hold(wn, robot, n);
            hs_world_step(wn);
        }
        hs_world_health_reset(wn);
        size_t k = 0;
        for (int i = 0; i < steps; i++) {
            hs_hold(wn, robot, n);
            double t0 = now_us();
            int rc = hs_world_step(wn);
            ush[k++] = now_us() - t0;
            if (rc) {
                fprintf(stderr, "%d robots: step failed (%d)\n", n, rc);
                return 1;
            }
        }
        struct dist dn = dist_of(ush, k);
        if (n == 1)
            one = dn.med;
        struct hs_world_health_summary h;
        hs_world_health_summary(wn, &h);
        double coll = 0;
        for (uint32_t i = 0; i < h.npair_costs; i++)
            coll += h.pair_costs[i].total_s;
        printf("  %-6d %10.1f %14.1f %8.2f %14.1f\n", n, dn.med, dn.med / n, dn.med / n / one,
               h.steps ? 1e6 * coll / (double)h.steps : 0);
        hs_world_destroy(wn);
    }
    free(ush);
    free(usm);
    hs_model_free(robot);
    hs_model_free(floor);
    return 0;
}
