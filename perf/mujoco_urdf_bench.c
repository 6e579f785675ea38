/* Benchmark (not a test), issue 29: the world step against MuJoCo 2.2.2's mj_step on the robot as
 * MuJoCo's own URDF importer reads it, every contact-accuracy goal of the contact benchmark for
 * both engines on that URDF, and hilsim's cost with 1, 2, 4 and 8 robots in one world.
 *
 * The robot file is written out with hs_model_write_urdf (what `hilsim model --urdf` writes:
 * same masses, inertias, geometry, sensors). hilsim loads that URDF; MuJoCo imports it itself
 * (mujoco_urdf_import.h: only a floor plane and the 1 ms step added). Both use their default
 * physics.
 *
 * Speed: both robots stand under the same explicit PD hold (kp, kd per joint, to the initial
 * pose), both engines stepped in interleaved rounds; each step is timed. Printed per engine:
 * median, fast mode (p10) and slow mode (p90: steps on these VMs are bimodal), and the ratio
 * of medians; hilsim's mean quick-step iterations (adaptive by default: fewer while the scene
 * is calm, src/world/README.md). Then the same rounds with every hinge's target swinging
 * (MOVE_RAD at MOVE_HZ: slowly, feet put, which hilsim judges calm), and again ten times faster
 * (FAST_HZ: links turning faster than hilsim's calm bound, so it runs its full count): both
 * engines' cost in motion, not only standing still.
 *
 * Accuracy (mujoco_urdf_accuracy.h; robots with two ankle F/T sensors, an accelerometer and
 * hip and ankle roll joints, such as SR1): the contact benchmark's timeline in simulated time,
 * each engine's defaults against its own exact solve, the goals judged; HS_SWAY_RAD sets the
 * sway amplitude (0.03 rad, as the contact benchmark).
 *
 *   ./build/perf/mujoco_urdf_bench ROBOT FLOOR [ROUNDS=5] [STEPS=1000]
 * e.g. ../shared/models/openhrp/SR1.wrl ../shared/models/openhrp/floor.wrl */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ftw.h>
#include <limits.h>
#include <unistd.h>

#include <mujoco/mujoco.h>
#include <ode/ode.h>

#include "hilsim/model.h"
#include "hilsim/world.h"
#include "mujoco_urdf_accuracy.h"
#include "mujoco_urdf_import.h"

#define KP 1000.0 /* N·m/rad */
#define KD 10.0   /* N·m·s/rad */
#define MAX_ROBOTS 8

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
                                int nrobots, bool fixed_count)
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
    if (fixed_count) /* the defaults before adaptive iterations: quick_iterations every step */
        p.quick_iterations_min = 0;
    struct hs_world *w = NULL;
    struct hs_diag d = {0};
    if (hs_world_create(&p, s, (uint32_t)nrobots + 1, &w, &d)) {
        fprintf(stderr, "hs_world_create: %s\n", d.msg);
        exit(1);
    }
    return w;
}

/* The PD hold to the initial pose, every hinge's target offset by off (rad). */
static void hs_hold(struct hs_world *w, const struct hs_model *m, int nrobots, double off)
{
    for (int k = 0; k < nrobots; k++)
        for (uint32_t i = 1; i < m->nlinks; i++)
            if (m->links[i].joint_type == HS_JOINT_ROTATE)
                hs_world_set_joint_effort(
                    w, 1 + (uint32_t)k, i,
                    KP * (off - hs_world_joint_position(w, 1 + (uint32_t)k, i)) -
                        KD * hs_world_joint_velocity(w, 1 + (uint32_t)k, i));
}

static void mj_hold(const mjModel *m, mjData *d, const double *q0, double off)
{
    for (int j = 0; j < m->njnt; j++)
        if (m->jnt_type[j] == mjJNT_HINGE) {
            int qa = m->jnt_qposadr[j], da = m->jnt_dofadr[j];
            d->qfrc_applied[da] = KP * (q0[qa] + off - d->qpos[qa]) - KD * d->qvel[da];
        }
}

/* The moving rounds: every hinge's target swings MOVE_RAD at MOVE_HZ (the same offset for
 * every joint, so no joint has to be matched between the two engines' orderings), then at
 * FAST_HZ: slow, SR1's links turn under 0.3 rad/s with its feet put, which hilsim's adaptive
 * count judges quasi-static (src/world/README.md); fast, they turn faster and it runs its full
 * count. */
#define MOVE_RAD 0.01
#define MOVE_HZ 0.5
#define FAST_HZ 5.0

struct motion {
    double amp, hz; /* rad, Hz; amp 0: standing still */
};

static double swing(struct motion mo, double t)
{
    return mo.amp * sin(2 * M_PI * mo.hz * t);
}

struct timing {
    struct dist h, x, m, f;
    double iterations; /* hilsim's quick-step iterations per step, mean */
};

static int hs_rounds(struct hs_world *w, const struct hs_model *robot, int steps, struct motion mo,
                     double *us, size_t *n)
{
    for (int i = 0; i < steps; i++) {
        hs_hold(w, robot, 1, swing(mo, hs_world_time(w)));
        double t0 = now_us();
        int rc = hs_world_step(w);
        us[(*n)++] = now_us() - t0;
        if (rc) {
            fprintf(stderr, "hilsim: step failed (%d)\n", rc);
            return -1;
        }
    }
    return 0;
}

/* Interleaved rounds of steps of hilsim (w), hilsim with the count fixed (wx), MuJoCo as
 * imported (mm) and robot-floor only (mf), each step timed, under the motion mo. */
static int time_rounds(struct hs_world *w, struct hs_world *wx, const struct hs_model *robot,
                       const mjModel *mm, mjData *md, const mjModel *mf, mjData *mdf, int rounds,
                       int steps, struct motion mo, double *const us[4], struct timing *ret)
{
    double *ush = us[0], *usx = us[1], *usm = us[2], *usf = us[3];
    size_t nh = 0, nx = 0, nm = 0, nf = 0;
    hs_world_health_reset(w); /* the quick-step iterations of the timed steps only */
    for (int r = 0; r < rounds; r++) {
        if (hs_rounds(w, robot, steps, mo, ush, &nh) || hs_rounds(wx, robot, steps, mo, usx, &nx))
            return -1;
        for (int i = 0; i < steps; i++) {
            mj_hold(mm, md, mm->qpos0, swing(mo, md->time));
            double t0 = now_us();
            mj_step(mm, md);
            usm[nm++] = now_us() - t0;
        }
        for (int i = 0; i < steps; i++) {
            mj_hold(mf, mdf, mf->qpos0, swing(mo, mdf->time));
            double t0 = now_us();
            mj_step(mf, mdf);
            usf[nf++] = now_us() - t0;
        }
    }
    struct hs_world_health_summary hh;
    hs_world_health_summary(w, &hh);
    *ret = (struct timing){dist_of(ush, nh), dist_of(usx, nx), dist_of(usm, nm), dist_of(usf, nf),
                           hh.quick_iterations_mean};
    return 0;
}

static void print_timing(const struct timing *t, struct hs_world *w, const mjData *md,
                         const mjData *mdf)
{
    struct hs_pose root;
    hs_world_link_pose(w, 1, 0, &root);
    printf("  %-8s %10s %10s %10s  %s\n", "engine", "median us", "fast p10", "slow p90",
           "root z after, m");
    printf("  %-8s %10.1f %10.1f %10.1f  %.4f (quick-step iterations %u..%u, mean %.2f)\n",
           "hilsim", t->h.med, t->h.p10, t->h.p90, root.p[2],
           hs_world_params(w)->quick_iterations_min, hs_world_params(w)->quick_iterations,
           t->iterations);
    printf("  %-8s %10.1f %10.1f %10.1f  (quick-step iterations %u every step: the defaults "
           "before)\n",
           "hilsim", t->x.med, t->x.p10, t->x.p90, hs_world_params(w)->quick_iterations);
    printf("  %-8s %10.1f %10.1f %10.1f  %.4f (%d contacts)\n", "mujoco", t->m.med, t->m.p10,
           t->m.p90, md->qpos[2], md->ncon);
    printf("  %-8s %10.1f %10.1f %10.1f  %.4f (%d contacts; robot-floor contacts only)\n", "mujoco",
           t->f.med, t->f.p10, t->f.p90, mdf->qpos[2], mdf->ncon);
    printf("  hilsim / MuJoCo (medians): %.2f as imported, %.2f with robot-floor contacts only; "
           "fixed count: %.2f, %.2f\n",
           t->h.med / t->m.med, t->h.med / t->f.med, t->x.med / t->m.med, t->x.med / t->f.med);
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

/* Robots the accuracy runs can drive: two F/T sensors and an accelerometer. */
static bool has_contact_parts(const struct hs_model *m)
{
    int ft = 0, acc = 0;
    for (uint32_t i = 0; i < m->nsensors; i++) {
        ft += m->sensors[i].type == HS_SENSOR_FORCE;
        acc += m->sensors[i].type == HS_SENSOR_ACCEL;
    }
    return ft >= 2 && acc >= 1;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s ROBOT FLOOR [ROUNDS] [STEPS]\n", argv[0]);
        return 2;
    }
    int rounds = argc > 3 ? atoi(argv[3]) : 5, steps = argc > 4 ? atoi(argv[4]) : 1000;
    const char *sway = getenv("HS_SWAY_RAD");
    double sway_rad = sway ? atof(sway) : 0.03;
    if (rounds < 1 || steps < 1 || !(sway_rad > 0))
        return 2;
    char floor_path[PATH_MAX], dir[] = "/tmp/hs_mjurdf_XXXXXX", urdf[PATH_MAX], xml[PATH_MAX];
    struct hs_model *source = NULL, *robot = NULL, *floor = NULL;
    struct hs_diag d = {0};
    if (!realpath(argv[2], floor_path) || !mkdtemp(dir)) {
        perror(argv[2]);
        return 1;
    }
    snprintf(urdf, sizeof urdf, "%s/robot.urdf", dir);
    snprintf(xml, sizeof xml, "%s/robot.xml", dir);
    if (hs_model_load(argv[1], &source, &d) || hs_model_write_urdf(source, urdf, NULL, &d) ||
        hs_model_load(urdf, &robot, &d) || hs_model_load(floor_path, &floor, &d)) {
        fprintf(stderr, "%s:%d: %s\n", d.file, d.line, d.msg);
        return 1;
    }
    hs_model_free(source);
    char err[1000] = "";
    struct hs_world_params wp;
    hs_world_params_default(&wp);
    mjModel *mm = hs_mujoco_import_urdf(urdf, xml, wp.step_s, wp.gravity, err, sizeof err);
    if (!mm) {
        fprintf(stderr, "MuJoCo's URDF import: %s\n", err);
        return 1;
    }
    const char *keep = getenv("HS_KEEP_IMPORT");
    if (keep && *keep)
        printf("%s written as URDF to %s; MuJoCo's import with its floor: %s\n", argv[1], urdf,
               xml);
    mjData *md = mj_makeData(mm);
    /* The same import with robot-floor contacts only, as hilsim collides one robot. */
    mjModel *mf = mj_copyModel(NULL, mm);
    if (!mf)
        return 1;
    hs_mujoco_floor_only(mf);
    mjData *mdf = mj_makeData(mf);
    struct hs_world *w = hs_make(robot, floor, 1, false), *wx = hs_make(robot, floor, 1, true);
    size_t total = (size_t)rounds * (size_t)steps;
    double *ush = malloc(total * sizeof *ush), *usm = malloc(total * sizeof *usm),
           *usf = malloc(total * sizeof *usf), *usx = malloc(total * sizeof *usx);
    if (!ush || !usm || !usf || !usx || !mdf)
        return 1;
    double *const us[4] = {ush, usx, usm, usf};
    for (int i = 0; i < 500; i++) { /* settle both */
        hs_hold(w, robot, 1, 0);
        hs_world_step(w);
        hs_hold(wx, robot, 1, 0);
        hs_world_step(wx);
        mj_hold(mm, md, mm->qpos0, 0);
        mj_step(mm, md);
        mj_hold(mf, mdf, mf->qpos0, 0);
        mj_step(mf, mdf);
    }
    /* standing still, then moving slowly, then faster: the same rounds each */
    const struct {
        struct motion m;
        const char *what; /* NULL: standing (the run's header) */
    } phases[] = {
        {{0, 0}, NULL}, {{MOVE_RAD, MOVE_HZ}, "moving"}, {{MOVE_RAD, FAST_HZ}, "moving faster"}};
    for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++) {
        struct timing t;
        if (time_rounds(w, wx, robot, mm, md, mf, mdf, rounds, steps, phases[i].m, us, &t))
            return 1;
        if (!phases[i].what)
            printf("%s: hilsim (defaults) against MuJoCo %s (defaults), both on the URDF, %d "
                   "rounds x %d steps, interleaved\n",
                   robot->name, mj_versionString(), rounds, steps);
        else
            printf("%s %s (every hinge's target %+.2f rad at %.1f Hz), the same rounds next\n",
                   robot->name, phases[i].what, phases[i].m.amp, phases[i].m.hz);
        print_timing(&t, w, md, mdf);
    }
    hs_world_destroy(w);
    hs_world_destroy(wx);
    mj_deleteData(md);
    mj_deleteData(mdf);
    mj_deleteModel(mf);
    int acc = 0;
    if (has_contact_parts(robot))
        acc = hs_mujoco_urdf_accuracy(urdf, robot, floor_path, mm, sway_rad, stdout);
    else
        printf("contact accuracy: skipped (%s has no two F/T sensors and accelerometer)\n",
               robot->name);
    mj_deleteModel(mm);
    if (acc < 0)
        return 1;

    /* Scaling: 1, 2, 4, 8 robots in one hilsim world. */
    printf("%s: robots in one hilsim world, %d steps each\n", robot->name, steps);
    printf("  %-6s %10s %14s %8s %14s\n", "robots", "median us", "per robot us", "ratio",
           "narrow-ph. us");
    double one = 0;
    for (int n = 1; n <= MAX_ROBOTS; n *= 2) {
        struct hs_world *wn = hs_make(robot, floor, n, false);
        for (int i = 0; i < 300; i++) {
            hs_hold(wn, robot, n, 0);
            hs_world_step(wn);
        }
        hs_world_health_reset(wn);
        size_t k = 0;
        for (int i = 0; i < steps; i++) {
            hs_hold(wn, robot, n, 0);
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
    free(usf);
    free(usx);
    hs_model_free(robot);
    hs_model_free(floor);
    if (!(keep && *keep))
        nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
    return 0;
}
