/* Contact forces a balance controller can trust (issue 16): a statistical accuracy check in
 * simulated time (lockstep ticks, no wall clock), with the solver's own noise measured where a
 * controller sees it: both ankle F/T sensors and the waist accelerometer, sensor noise zeroed.
 * The runs and the figures are perf/contact_run.c's, the same the contact benchmark prints.
 *
 * Stated tolerances, over 1 s at rest after 2 s of settling, then over 4 s of a hip sway that
 * moves the load from foot to foot (hip roll +a, ankle roll -a on both legs, 0.25 Hz; a = 0.03
 * rad on SR1, 0.07 rad on the biped):
 *   - each ankle's Fz std at rest <= 0.5 % of its static load, and no tick-to-tick jump over 1 %;
 *   - the sum of both ankles' Fz = the weight above the sensors within 0.5 %;
 *   - the waist accelerometer's z std <= 0.02 m/s²;
 *   - each foot's CoP from its F/T within 2 mm of the exact solver's (dWorldStep, same contact);
 *   - while swaying: Fz noise (second-difference estimate) <= 0.5 %, jumps <= 1 % of the static
 *     load, accelerometer noise <= 0.02 m/s², CoP within 2 mm of the exact solver's at the same
 *     tick, and the sway really moved the load (the left foot's Fz swings by >= 25 % of it);
 *   - SR1's sinkage (deepest contact point, surface layer included) <= 1 mm.
 * SR1 (the workplace's model, skipped without $HS_SHARED_DIR) runs the default physics, quick
 * step at 12 iterations, 8 while calm (at rest and through the slow sway: src/world/README.md),
 * with the default contact damping (5e3 N·s/m); the bundled biped runs its
 * own config (the exact solver on rigid joints and a near-rigid contact: config/biped-stand.yaml
 * says why). A negative control shows the check can fail: the old contact (ERP 0.2 / CFM 1e-5 per
 * point, rigid joints) breaks the noise bound on SR1. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "contact_run.h"

#define NOISE_PCT 0.5
#define JUMP_PCT 1.0
#define SUM_PCT 0.5
#define IMU_STD 0.02
#define COP_M 0.002
#define SINK_M 0.001
#define SWAY_SR1 0.03   /* rad: SR1's load swings by 65 % */
#define SWAY_BIPED 0.07 /* rad: the biped's (stiffer contact) by ~30 % */

static const struct hs_contact_variant defaults = {.name = "defaults", .config_physics = true};

static const struct hs_config *load_sr1(void)
{
    const char *shared = getenv("HS_SHARED_DIR");
    char dir[4096], probe[4200];
    if (!shared || !*shared)
        return NULL;
    snprintf(dir, sizeof dir, "%s/models/openhrp", shared);
    snprintf(probe, sizeof probe, "%s/SR1.wrl", dir);
    FILE *f = fopen(probe, "r");
    if (!f)
        return NULL;
    fclose(f);
    /* perf/sr1-floor.yaml's robot, with every physics key at its default. */
    static const char yaml[] = "bench: {name: sr1-contact}\n"
                               "models:\n"
                               "  - {name: sr1, file: SR1.wrl}\n"
                               "  - {name: floor, file: floor.wrl, static: true}\n"
                               "controller: {type: pd_hold, bandwidth_rad_s: 30}\n"
                               "sensors:\n"
                               "  imu:\n"
                               "    waist: {accel: WaistAccelSensor, gyro: WaistGyro}\n";
    const struct hs_config *cfg = NULL;
    struct hs_diag d = {0};
    if (hs_config_load_buffer(yaml, sizeof yaml - 1, "sr1-contact.yaml", dir, &cfg, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    return cfg;
}

static struct hs_contact_run *run(const struct hs_config *cfg, const struct hs_contact_variant *v,
                                  double sway)
{
    struct hs_contact_run *r = NULL;
    struct hs_diag d = {0};
    if (hs_contact_run_create(cfg, v, sway, &r, &d) < 0)
        fail_msg("%s: %s", v->name, d.msg);
    assert_int_equal(hs_contact_run_ticks(r, HS_CR_TICKS, false), 0);
    return r;
}

/* The exact solver on the same physics as cfg. */
static struct hs_contact_variant exact_of(const struct hs_config *cfg)
{
    const struct hs_world_params *p = &cfg->physics;
    return (struct hs_contact_variant){.name = "exact",
                                       .solver = HS_SOLVER_STANDARD,
                                       .iterations = p->quick_iterations,
                                       .stiffness_n_m = p->contact_stiffness_n_m,
                                       .damping_n_s_m = p->contact_damping_n_s_m,
                                       .erp = p->contact_erp,
                                       .cfm = p->contact_cfm,
                                       .joint_cfm = p->cfm};
}

static void check(const char *robot, struct hs_contact_run *r, struct hs_contact_run *exact,
                  bool sinkage)
{
    struct hs_contact_metrics m;
    hs_contact_run_metrics(r, &m);
    double cop_rest = exact ? hs_contact_run_cop_diff_rest(r, exact) : 0;
    double cop_sway = exact ? hs_contact_run_cop_diff_sway(r, exact) : 0;
    print_message("%s: load %.1f / %.1f N (weight above %.1f N, sum %+.4f %%); rest: Fz std "
                  "%.4f / %.4f %%, jump %.4f %%, IMU z std %.5f m/s², CoP vs exact %.3f mm, "
                  "sinkage %.3f mm; sway (load swing %.0f %%): noise %.4f / %.4f %%, jump "
                  "%.4f %%, IMU %.5f m/s², CoP vs exact %.3f mm\n",
                  robot, m.load_n[0], m.load_n[1], m.weight_above_n, m.sum_err_pct,
                  m.rest_std_pct[0], m.rest_std_pct[1], m.rest_jump_pct, m.imu_z_std,
                  1e3 * cop_rest, 1e3 * m.health_rest.penetration_m.max, 100 * m.sway_load_swing,
                  m.sway_noise_pct[0], m.sway_noise_pct[1], m.sway_jump_pct, m.sway_imu_noise,
                  1e3 * cop_sway);
    for (int f = 0; f < 2; f++) {
        assert_true(m.load_n[f] > 0.3 * m.weight_above_n / 2); /* standing on both feet */
        assert_true(m.rest_std_pct[f] <= NOISE_PCT);
        assert_true(m.sway_noise_pct[f] <= NOISE_PCT);
    }
    assert_true(m.rest_jump_pct <= JUMP_PCT);
    assert_true(fabs(m.sum_err_pct) <= SUM_PCT);
    assert_true(m.imu_z_std <= IMU_STD);
    assert_true(m.sway_load_swing >= 0.25);
    assert_true(m.sway_jump_pct <= JUMP_PCT);
    assert_true(m.sway_imu_noise <= IMU_STD);
    assert_true(cop_rest <= COP_M);
    assert_true(cop_sway <= COP_M);
    if (sinkage)
        assert_true(m.health_rest.penetration_m.max <= SINK_M);
}

static void test_sr1_default_contact_is_converged(void **state)
{
    (void)state;
    const struct hs_config *cfg = load_sr1();
    if (!cfg)
        skip();
    struct hs_contact_variant ex = exact_of(cfg);
    struct hs_contact_run *r = run(cfg, &defaults, SWAY_SR1), *e = run(cfg, &ex, SWAY_SR1);
    assert_int_equal(cfg->physics.solver, HS_SOLVER_QUICK);
    assert_int_equal(cfg->physics.quick_iterations, 12);
    assert_true(cfg->physics.quick_w == 1.2);
    assert_true(cfg->physics.contact_damping_n_s_m == 5e3);
    check("SR1, default physics (quick 12, 8 while calm, SOR w 1.2, contact damping 5e3)", r, e,
          true);
    check("SR1, exact solver", e, NULL, true);
    hs_contact_run_destroy(r);
    hs_contact_run_destroy(e);
    hs_config_free(cfg);
}

/* A negative control on SR1: the figures of variant v, printed (skipped without SR1). */
static void sr1_control(const struct hs_contact_variant *v, struct hs_contact_metrics *m)
{
    const struct hs_config *cfg = load_sr1();
    if (!cfg)
        skip();
    struct hs_contact_run *r = run(cfg, v, SWAY_SR1);
    hs_contact_run_metrics(r, m);
    print_message("SR1, %s: Fz std %.3f / %.3f %%, jump %.3f %% (sway %.3f %%), IMU z std %.4f\n",
                  v->name, m->rest_std_pct[0], m->rest_std_pct[1], m->rest_jump_pct,
                  m->sway_jump_pct, m->imu_z_std);
    hs_contact_run_destroy(r);
    hs_config_free(cfg);
}

static void test_sr1_old_contact_fails_the_bound(void **state)
{
    (void)state;
    const struct hs_contact_variant old = {.name = "old contact",
                                           .solver = HS_SOLVER_QUICK,
                                           .iterations = 20,
                                           .sor_w = 1.3,
                                           .erp = 0.2,
                                           .cfm = 1e-5,
                                           .joint_cfm = 1e-10};
    struct hs_contact_metrics m;
    sr1_control(&old, &m);
    assert_true(m.rest_jump_pct > JUMP_PCT || m.imu_z_std > IMU_STD);
}

/* The default's 12 iterations converge because of its contact damping: at the damping before
 * (1e4 N·s/m, the contact rows' CFM 1.7x smaller) the same iterations break the jump bound
 * (measured 1.24 % at rest, 1.6 % swaying). */
static void test_sr1_twelve_iterations_need_the_softer_damping(void **state)
{
    (void)state;
    const struct hs_contact_variant stiff = {.name = "quick 12 at damping 1e4",
                                             .solver = HS_SOLVER_QUICK,
                                             .iterations = 12,
                                             .stiffness_n_m = 2e6,
                                             .damping_n_s_m = 1e4,
                                             .joint_cfm = 1e-4};
    struct hs_contact_metrics m;
    sr1_control(&stiff, &m);
    assert_true(m.rest_jump_pct > JUMP_PCT || m.sway_jump_pct > JUMP_PCT);
}

static void test_biped_config_is_converged(void **state)
{
    (void)state;
    const char *src = getenv("HS_SOURCE_DIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/config/biped-stand.yaml", src ? src : ".");
    const struct hs_config *cfg = NULL;
    struct hs_diag d = {0};
    if (hs_config_load(path, &cfg, &d) < 0)
        fail_msg("%s:%d:%d: %s", d.file, d.line, d.column, d.msg);
    struct hs_contact_run *r = run(cfg, &defaults, SWAY_BIPED);
    /* Its config runs the exact solver itself: no other reference. */
    assert_int_equal(cfg->physics.solver, HS_SOLVER_STANDARD);
    check("biped, its config (exact solver)", r, NULL, false);
    hs_contact_run_destroy(r);
    hs_config_free(cfg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sr1_default_contact_is_converged),
        cmocka_unit_test(test_sr1_old_contact_fails_the_bound),
        cmocka_unit_test(test_sr1_twelve_iterations_need_the_softer_damping),
        cmocka_unit_test(test_biped_config_is_converged),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
