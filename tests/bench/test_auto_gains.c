/* Tuned PD gains are stable by construction, and torque limits default to finite values.
 *
 * The bound (src/bench/auto_gains.c) is checked against the explicit PD recurrence itself, the
 * inertia it is applied to (joint_inertia.c) against a three-link example worked by hand; the
 * whole bench against a model written for this test (tests/bench/light_palm.wrl: a 5 g palm
 * between a wrist and a 0.5 kg finger) that the unclamped gains drive unstable, and against the
 * bundled biped, which must stand under the quick look's tuning. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../src/bench/bench_internal.h"
#include "hilsim/bench.h"
#include "hilsim/config.h"
#include "hilsim/plant.h"

static bool run_sane(struct hs_bench *b, int from, int to);

/* The semi-implicit explicit-PD recurrence on inertia ie with gains for it, from x = 1: the
 * largest |x| seen over n steps. */
static double recurrence_peak(double kp, double kd, double ie, double h, int n)
{
    double x = 1, v = 0, peak = 1;
    for (int i = 0; i < n && peak < 1e6; i++) {
        v += h * (-kp * x - kd * v) / ie;
        x += h * v;
        peak = fmax(peak, fabs(x));
    }
    return peak;
}

static void test_bound_matches_recurrence(void **state)
{
    (void)state;
    const double ratios[] = {1, 10, 1e4}, steps[] = {1e-3, 1e-4};
    for (int i = 0; i < 3; i++)
        for (int k = 0; k < 2; k++) {
            double r = ratios[i], h = steps[k], ie = 0.01, it = r * ie;
            double w = hs__bench_pd_bandwidth_max(it, ie, h), x = w * h;
            /* Clamped to half the stable region: kp h²/Ie + 2 kd h/Ie = r x² + 4 r x = 2. */
            assert_true(fabs(r * x * x + 4 * r * x - 2.0) < 1e-9);
            /* At that bandwidth the recurrence decays; at 1.02 x the Jury limit (the region's
             * edge, r x² + 4 r x = 4) it grows without bound. */
            assert_true(recurrence_peak(w * w * it, 2 * w * it, ie, h, 200000) < 10.0);
            double wj = 1.02 * 2.0 * (sqrt(1.0 + 1.0 / r) - 1.0) / h;
            assert_true(recurrence_peak(wj * wj * it, 2 * wj * it, ie, h, 200000) >= 1e6);
        }
    assert_true(hs__bench_pd_bandwidth_max(1, 0, 1e-3) == 0.0);
    assert_true(isinf(hs__bench_pd_bandwidth_max(0, 1, 1e-3)));
}

/* Joint 1 (axis z through the origin) carries link 2 on a hinge at the same point whose axis is
 * at angle t from z; both links have isotropic tensors about the origin (I1, J) and their
 * centres of mass there, link 0 is fixed to the world. Link 2 turns at q1' z + q2' a2, so
 *   M = [[I1 + J, J cos t], [J cos t, J]],  1 / (M^-1)_11 = I1 + J - J cos² t = I1 + J sin² t:
 * a parallel neighbour (t = 0) leaves link 2 behind, a perpendicular one carries it whole. */
static void test_effective_inertia_three_links(void **state)
{
    (void)state;
    const double I1 = 1e-4, J = 0.2, ts[] = {0.0, M_PI / 6, M_PI / 3, M_PI / 2, 2.0};
    for (int n = 0; n < 5; n++) {
        double t = ts[n];
        struct hs_link links[3];
        memset(links, 0, sizeof links);
        for (int k = 0; k < 3; k++) {
            links[k].parent = k - 1;
            links[k].mass = k == 0 ? 10.0 : 1.0;
            links[k].gear_ratio = 1.0;
            for (int c = 0; c < 9; c += 4)
                links[k].inertia[c] = k == 0 ? 1.0 : k == 1 ? I1 : J;
            links[k].origin.R[0] = links[k].origin.R[4] = links[k].origin.R[8] = 1.0;
        }
        links[0].joint_type = HS_JOINT_FIXED;
        links[1].joint_type = links[2].joint_type = HS_JOINT_ROTATE;
        links[1].axis[2] = 1.0;
        links[2].axis[0] = sin(t);
        links[2].axis[2] = cos(t);
        struct hs_model m = {.links = links, .nlinks = 3};
        struct hs_pose poses[3];
        double eff[3];
        hs__bench_model_poses(&m, poses);
        assert_int_equal(hs__bench_effective_inertias(&m, poses, eff), 0);
        double expect = I1 + J * sin(t) * sin(t);
        assert_true(fabs(eff[1] - expect) < 1e-9 * expect);
        assert_true(eff[0] == 0.0);
        /* Link 2's own joint: its link alone, whatever t (link 1 behind it is the only thing
         * that can turn about a2 besides it, and it cannot: (M^-1)_22 = (I1+J) / det). */
        double det = (I1 + J) * J - J * J * cos(t) * cos(t);
        assert_true(fabs(eff[2] - det / (I1 + J)) < 1e-9 * eff[2]);
        /* With a rotor on joint 2 (N² J_rotor = Ja taken about a2 only, joint_inertia.c's
         * add_armature) the neighbour's hinge is heavier about its own axis only. */
        links[2].rotor_inertia = 0.05;
        links[2].gear_ratio = 2.0;
        assert_int_equal(hs__bench_effective_inertias(&m, poses, eff), 0);
        double Ja = 0.2; /* N² J_rotor */
        /* Link 2's tensor J 1 + Ja a2 a2ᵀ: z·(..)z = J + Ja cos² t, z·(..)a2 = (J + Ja) cos t,
         * a2·(..)a2 = J + Ja. */
        double m11 = I1 + J + Ja * cos(t) * cos(t), m12 = (J + Ja) * cos(t), m22 = J + Ja;
        double e2 = m11 - m12 * m12 / m22;
        assert_true(fabs(eff[1] - e2) < 1e-9 * e2);
    }
}

/* The bundled biped under the quick look's tuning (critically damped at 30 rad/s, clamped where
 * needed) on the floor: no joint is clamped (its hip links are small, but each hinge's axis
 * keeps the pieces beyond it turning with it), and it stands for 5 s: the root within 5 mm of
 * its settled height at 0.1 s, bounded every tick. */
/* A hinge (link 1, I1 about the axis through the origin) carrying a heavy link (J, centre of
 * mass on the axis) by a fixed joint: rigid, the torque meets I1 + J; under the quick-step
 * solver the fixed joint counts as a ball, so it meets I1 only (RH2's pan-tilt). */
static void test_effective_inertia_loose_fixed(void **state)
{
    (void)state;
    const double I1 = 2e-7, J = 0.1;
    struct hs_link links[3];
    memset(links, 0, sizeof links);
    for (int k = 0; k < 3; k++) {
        links[k].parent = k - 1;
        links[k].mass = 0.005;
        links[k].gear_ratio = 1.0;
        for (int c = 0; c < 9; c += 4)
            links[k].inertia[c] = k == 1 ? I1 : J;
        links[k].origin.R[0] = links[k].origin.R[4] = links[k].origin.R[8] = 1.0;
    }
    links[0].joint_type = links[2].joint_type = HS_JOINT_FIXED;
    links[1].joint_type = HS_JOINT_ROTATE;
    links[1].axis[1] = 1.0;
    struct hs_model m = {.links = links, .nlinks = 3};
    struct hs_pose poses[3];
    double eff[3];
    hs__bench_model_poses(&m, poses);
    assert_int_equal(hs__bench_effective_inertias_as(&m, poses, true, eff), 0);
    assert_true(fabs(eff[1] - (I1 + J)) < 1e-9 * (I1 + J));
    assert_int_equal(hs__bench_effective_inertias_as(&m, poses, false, eff), 0);
    assert_true(fabs(eff[1] - I1) < 1e-6 * I1);
    assert_true(eff[2] == 0.0);
}

static void test_biped_stands_under_quick_look(void **state)
{
    (void)state;
    const char *src = getenv("HS_SOURCE_DIR"), *shared = getenv("HS_SHARED_DIR");
    char floor[4096];
    snprintf(floor, sizeof floor, "%s/models/openhrp/floor.wrl", shared ? shared : "");
    if (!src || !shared || access(floor, R_OK) != 0)
        skip();
    char *y = NULL;
    assert_true(asprintf(&y,
                         "bench: {name: biped}\n"
                         "models:\n"
                         "  - {name: robot, file: \"%s/models/biped.wrl\"}\n"
                         "  - {name: env, file: \"%s\", static: true}\n"
                         "controller: {type: pd_hold, bandwidth_rad_s: 30}\n",
                         src, floor) > 0);
    const struct hs_config *cfg = NULL;
    struct hs_diag d = {0};
    int r = hs_config_load_buffer(y, strlen(y), "biped.yaml", NULL, &cfg, &d);
    free(y);
    assert_int_equal(r, 0);
    struct hs_bench *b = NULL;
    r = hs_bench_create(cfg, &b, &d);
    if (r)
        print_error("%s:%d: %s\n", d.file, d.line, d.msg);
    assert_int_equal(r, 0);
    for (uint32_t i = 0; i < hs_bench_warning_count(b); i++) {
        if (strstr(hs_bench_warning(b, i), "clamped"))
            print_error("%s\n", hs_bench_warning(b, i));
        assert_null(strstr(hs_bench_warning(b, i), "clamped"));
    }
    struct hs_pose start, end;
    assert_true(run_sane(b, 0, 100));
    hs_world_link_pose(hs_bench_world(b), 0, 0, &start);
    assert_true(run_sane(b, 100, 5000));
    hs_world_link_pose(hs_bench_world(b), 0, 0, &end);
    print_message("biped root z %.4f m at 0.1 s, %.4f m at 5 s\n", start.p[2], end.p[2]);
    assert_true(start.p[2] > 0.5);
    assert_true(fabs(end.p[2] - start.p[2]) < 0.005);
    hs_bench_destroy(b);
    hs_config_free(cfg);
}

static char *palm_yaml(const char *extra)
{
    const char *src = getenv("HS_SOURCE_DIR"), *shared = getenv("HS_SHARED_DIR");
    char floor[4096];
    snprintf(floor, sizeof floor, "%s/models/openhrp/floor.wrl", shared ? shared : "");
    if (!src || !shared || access(floor, R_OK) != 0)
        return NULL;
    char *y = NULL;
    int n = asprintf(&y,
                     "bench: {name: palm}\n"
                     "models:\n"
                     "  - {name: robot, file: \"%s/tests/bench/light_palm.wrl\"}\n"
                     "  - {name: env, file: \"%s\", static: true}\n"
                     "controller: {type: pd_hold, bandwidth_rad_s: 30}\n%s",
                     src, floor, extra);
    return n < 0 ? NULL : y;
}

static struct hs_bench *palm_bench(const char *extra, const struct hs_config **ret_cfg)
{
    char *y = palm_yaml(extra);
    if (!y)
        return NULL;
    struct hs_diag d = {0};
    int r = hs_config_load_buffer(y, strlen(y), "palm.yaml", NULL, ret_cfg, &d);
    free(y);
    if (r)
        print_error("%s:%d: %s\n", d.file, d.line, d.msg);
    assert_int_equal(r, 0);
    struct hs_bench *b = NULL;
    r = hs_bench_create(*ret_cfg, &b, &d);
    if (r)
        print_error("%s:%d: %s\n", d.file, d.line, d.msg);
    assert_int_equal(r, 0);
    return b;
}

/* Runs ticks from..to-1; false as soon as a link pose or rate is not finite or is beyond bounds no
 * standing model reaches (10 m from the origin, 1000 rad/s), checked every tick. */
static bool run_sane(struct hs_bench *b, int from, int to)
{
    int64_t period = hs_bench_tick_period_ns(b);
    struct hs_world *w = hs_bench_world(b);
    const struct hs_model *m = hs_bench_model(b, 0);
    for (int t = from; t < to; t++) {
        int64_t now = (int64_t)t * period;
        if (hs_bench_inputs(b, now) || hs_bench_actuation(b, now) ||
            hs_bench_physics(b, now, (uint64_t)t) || hs_bench_sensors(b, now, (uint64_t)t))
            return false;
        for (uint32_t k = 0; k < m->nlinks; k++) {
            struct hs_pose p;
            double v[3], om[3];
            hs_world_link_pose(w, 0, k, &p);
            hs_world_link_velocity(w, 0, k, v, om);
            for (int c = 0; c < 3; c++)
                if (!(fabs(p.p[c]) < 10.0) || !(fabs(om[c]) < 1000.0) || !(fabs(v[c]) < 100.0))
                    return false;
        }
    }
    return true;
}

static void test_light_palm_clamped_and_stable(void **state)
{
    (void)state;
    const struct hs_config *cfg = NULL;
    /* The exact solver: quick-step (20 iterations) does not converge on the 5 g palm between
     * two joints whatever the gains (limp, the finger chatters past 60 rad/s within 1.2 s); on
     * it these gains let the wrist grow from 1 s on to 208 rad/s and chatter on its stop,
     * which the guard's bound (10 x the default 2 pi rad/s) now stops at 2.2 s. */
    struct hs_bench *b = palm_bench("physics: {solver: standard}\n", &cfg);
    if (!b)
        skip();
    /* One clamp warning per joint that needs it: both (the palm is what each moves alone). */
    uint32_t wrist = 0, finger = 0;
    for (uint32_t i = 0; i < hs_bench_warning_count(b); i++) {
        const char *s = hs_bench_warning(b, i);
        wrist += strncmp(s, "WRIST: tuned PD bandwidth 30 rad/s clamped", 42) == 0;
        finger += strncmp(s, "FINGER: tuned PD bandwidth 30 rad/s clamped", 43) == 0;
    }
    assert_int_equal(wrist, 1);
    assert_int_equal(finger, 1);
    /* Every joint's gains keep the explicit PD within half its stable region on the inertia its
     * torque meets within a tick, recomputed here from the model at the initial pose. */
    const struct hs_model *m = hs_bench_model(b, 0);
    struct hs_pose poses[8];
    double eff[8];
    assert_true(m->nlinks <= 8);
    for (uint32_t k = 0; k < m->nlinks; k++)
        hs_world_link_pose(hs_bench_world(b), 0, k, &poses[k]);
    assert_int_equal(hs__bench_effective_inertias(m, poses, eff), 0);
    double h = (double)hs_bench_tick_period_ns(b) * 1e-9;
    for (uint32_t j = 0; j < hs_bench_joint_count(b); j++) {
        const struct hs_bench_joint *bj = hs_bench_joint(b, j);
        double ie = eff[bj->link];
        assert_true(ie > 0);
        double a = bj->kp * h * h / ie, bb = bj->kd * h / ie;
        assert_true(bj->kp > 0 && bj->kd > 0);
        assert_true(a + 2 * bb <= 2.0 + 1e-9);
    }
    /* 10 s standing on the floor under the clamped gains: finite and bounded every tick, and
     * the block has not left the spot it stands on. */
    assert_true(run_sane(b, 0, 10000));
    struct hs_pose root;
    hs_world_link_pose(hs_bench_world(b), 0, 0, &root);
    assert_true(fabs(root.p[0]) < 0.1 && fabs(root.p[1]) < 0.1 && fabs(root.p[2] - 0.1) < 0.01);
    hs_bench_destroy(b);
    hs_config_free(cfg);
}

/* The same bench with the gains as they were tuned before the bound (critically damped at
 * 30 rad/s on the subtree): it diverges. Run in a child process, since a diverging ODE world
 * may end in ODE's own assertion; the child reports divergence by its exit status. */
static void test_light_palm_unclamped_diverges(void **state)
{
    (void)state;
    char *y = palm_yaml("");
    if (!y)
        skip();
    free(y);
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        /* As before the finite default torque limits too (which alone keep this bounded). */
        const struct hs_config *cfg = NULL;
        struct hs_bench *b = palm_bench("actuators: {defaults: {torque_limit_nm: .inf}}\n", &cfg);
        const struct hs_model *m = hs_bench_model(b, 0);
        struct hs_pose poses[8];
        double scratch[8];
        assert_true(m->nlinks <= 8);
        for (uint32_t k = 0; k < m->nlinks; k++)
            hs_world_link_pose(hs_bench_world(b), 0, k, &poses[k]);
        for (uint32_t j = 0; j < b->njoints; j++) {
            struct hs__joint_inertia in;
            hs__bench_joint_inertia(m, poses, b->joints[j].link, scratch, &in);
            b->joints[j].kp = 900.0 * in.moved;
            b->joints[j].kd = 60.0 * in.moved;
        }
        _exit(run_sane(b, 0, 10000) ? 0 : 3);
    }
    int st = 0;
    assert_int_equal(waitpid(pid, &st, 0), pid);
    /* Diverged: caught by the bounds (3) or ended by ODE's assertion (a signal). */
    assert_true((WIFEXITED(st) && WEXITSTATUS(st) == 3) || WIFSIGNALED(st));
}

/* A pendulum-like model: the default torque limit is the analytic value of the documented
 * rule; an explicit .inf stays and is warned about with its line; a number is taken as is. */
/* The model's own limits come before the derived rule: URDF's effort, else OpenHRP's climit
 * through torqueConst and gearRatio (on a copy of the palm model's links). */
static void test_torque_limit_from_the_model(void **state)
{
    (void)state;
    const struct hs_config *cfg = NULL;
    struct hs_bench *b = palm_bench("", &cfg);
    if (!b)
        skip();
    const struct hs_model *m = hs_bench_model(b, 0);
    struct hs_model copy = *m;
    struct hs_link links[8];
    assert_true(m->nlinks <= 8);
    memcpy(links, m->links, m->nlinks * sizeof *links);
    copy.links = links;
    struct hs_pose poses[8];
    double scratch[8];
    for (uint32_t k = 0; k < m->nlinks; k++)
        hs_world_link_pose(hs_bench_world(b), 0, k, &poses[k]);
    double derived = hs__bench_default_torque_limit(&copy, poses, 2, scratch, NAN, 9.80665);
    links[2].climit = 2.0;        /* A */
    links[2].torque_const = 0.05; /* N·m/A */
    links[2].gear_ratio = -30.0;  /* a reversing gear: the limit is a magnitude */
    assert_true(fabs(hs__bench_default_torque_limit(&copy, poses, 2, scratch, NAN, 9.80665) - 3.0) <
                1e-12);
    links[2].effort_max = 7.5; /* URDF <limit effort>: taken as given */
    assert_true(hs__bench_default_torque_limit(&copy, poses, 2, scratch, NAN, 9.80665) == 7.5);
    links[2].effort_max = 0.0;  /* none given */
    links[2].climit = INFINITY; /* absent in the file */
    assert_true(hs__bench_default_torque_limit(&copy, poses, 2, scratch, NAN, 9.80665) == derived);
    hs_bench_destroy(b);
    hs_config_free(cfg);
}

static void test_torque_limit_defaults(void **state)
{
    (void)state;
    const struct hs_config *cfg = NULL;
    struct hs_bench *b = palm_bench("", &cfg);
    if (!b)
        skip();
    const struct hs_model *m = hs_bench_model(b, 0);
    struct hs_plant_params pp;
    struct hs_diag d = {0};
    assert_int_equal(hs__bench_plant_params(cfg, m, &pp, &d), 0);
    /* FINGER (link 2): moves the finger, I = 1.68e-3 + 0.5 * 0.1² = 6.68e-3 kg·m² about its
     * axis; no velocity limit in the file, so 2π rad/s reached in 0.1 s; gravity moments about
     * the axis at the zero pose: the finger 0.5 kg x 0.1 m = 0.05 kg·m, the rest (block 2 kg
     * 0.17 m below, palm 5 g 0.02 m below) 2 x 0.17 + 0.005 x 0.02 = 0.3401 kg·m, the larger. */
    double g = 9.80665;
    double expect = 6.68e-3 * 2 * M_PI / 0.1 + g * 0.3401;
    assert_true(fabs(pp.joints[1].actuator.torque_max - expect) < 1e-6 * expect);
    assert_true(isfinite(pp.joints[0].actuator.torque_max) &&
                pp.joints[0].actuator.torque_max >= 1.0);
    for (uint32_t i = 0; i < hs_bench_warning_count(b); i++)
        assert_null(strstr(hs_bench_warning(b, i), "torque_limit_nm"));
    hs_plant_params_free(&pp);
    hs_bench_destroy(b);
    hs_config_free(cfg);

    b = palm_bench("actuators:\n  joints:\n    WRIST: {torque_limit_nm: .inf}\n"
                   "    FINGER: {torque_limit_nm: 3.5}\n",
                   &cfg);
    assert_int_equal(hs__bench_plant_params(cfg, hs_bench_model(b, 0), &pp, &d), 0);
    assert_true(isinf(pp.joints[0].actuator.torque_max));
    assert_true(pp.joints[1].actuator.torque_max == 3.5);
    uint32_t inf_warnings = 0;
    for (uint32_t i = 0; i < hs_bench_warning_count(b); i++) {
        const char *s = hs_bench_warning(b, i);
        if (strstr(s, "torque_limit_nm of WRIST is .inf")) {
            inf_warnings++;
            assert_true(strncmp(s, "palm.yaml:8:", 12) == 0);
        }
    }
    assert_int_equal(inf_warnings, 1);
    hs_plant_params_free(&pp);
    hs_bench_destroy(b);
    hs_config_free(cfg);
}

/* An initial joint position outside the model's limits is accepted with a warning naming the
 * config line, and the joint starts at the nearest limit (a real joint cannot start beyond its
 * stops; ODE would snap it back at a rate the guard calls a fault); one inside is left alone. */
static void test_initial_outside_limits_warns(void **state)
{
    (void)state;
    const char *src = getenv("HS_SOURCE_DIR");
    if (!src)
        skip();
    const struct hs_config *cfg = NULL;
    struct hs_bench *b = NULL;
    char *y = NULL;
    assert_true(asprintf(&y,
                         "bench: {name: palm}\n"
                         "models:\n"
                         "  - name: robot\n"
                         "    file: \"%s/tests/bench/light_palm.wrl\"\n"
                         "    initial:\n"
                         "      joints:\n"
                         "        WRIST: {q: 1.4}\n"
                         "        FINGER: {q: 6}\n",
                         src) > 0);
    struct hs_diag d = {0};
    int r = hs_config_load_buffer(y, strlen(y), "init.yaml", NULL, &cfg, &d);
    free(y);
    if (r)
        print_error("%s:%d: %s\n", d.file, d.line, d.msg);
    assert_int_equal(r, 0);
    assert_int_equal(hs_bench_create(cfg, &b, &d), 0);
    uint32_t found = 0;
    for (uint32_t i = 0; i < hs_bench_warning_count(b); i++) {
        const char *s = hs_bench_warning(b, i);
        assert_null(strstr(s, "WRIST starts"));
        if (strstr(s, "FINGER starts at 6, 4.5 outside the model's limits [-1.5, 1.5]") &&
            strstr(s, "it starts at the nearest limit, 1.5")) {
            found++;
            assert_true(strncmp(s, "init.yaml:8:", 12) == 0);
        }
    }
    assert_int_equal(found, 1);
    int finger = hs_bench_find_joint(b, "FINGER"), wrist = hs_bench_find_joint(b, "WRIST");
    assert_true(finger >= 0 && wrist >= 0);
    assert_true(fabs(hs_bench_joint_reading(b, (uint32_t)finger)->q - 1.5) < 1e-9);
    assert_true(fabs(hs_bench_joint_reading(b, (uint32_t)wrist)->q - 1.4) < 1e-9);
    hs_bench_destroy(b);
    hs_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_bound_matches_recurrence),
        cmocka_unit_test(test_effective_inertia_three_links),
        cmocka_unit_test(test_effective_inertia_loose_fixed),
        cmocka_unit_test(test_biped_stands_under_quick_look),
        cmocka_unit_test(test_light_palm_clamped_and_stable),
        cmocka_unit_test(test_light_palm_unclamped_diverges),
        cmocka_unit_test(test_torque_limit_defaults),
        cmocka_unit_test(test_torque_limit_from_the_model),
        cmocka_unit_test(test_initial_outside_limits_warns),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
