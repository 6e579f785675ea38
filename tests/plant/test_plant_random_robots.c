/* Property: whatever small robot and gains it is given, hilsim never aborts. Random chains of
 * 1 to 6 links (masses log-uniform from 1 g to 10 kg, random sizes, offsets and joint axes,
 * hinge and slider joints, some with velocity limits, free or fixed roots) stand over a floor
 * and are driven by position PD commands with gains drawn across the documented config ranges
 * (kp 0..1e6, kd 0..1e5) and occasional huge feed-forward torques, for a few hundred ticks.
 * Every step must return 0, a guard trip (-ERANGE) or an ODE internal error caught in the step
 * (-EFAULT); a world that faulted stays latched; a world that did not has every body inside
 * the guard's bounds. An abort (ODE's assertions, the pre-guard behaviour) kills this binary
 * and fails the test. Seeded (HS_PROPERTY_SEED overrides) so a failure is reproducible. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <ode/ode.h>

#include "hilsim/plant.h"
#include "hilsim/world.h"
#include "world/model_builders.h"

enum { ROBOTS = 400, TICKS = 300 };

static uint64_t rng_state;

static double uniform(void)
{
    /* xorshift64*: small, seeded, the same sequence everywhere */
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53;
}

static double between(double lo, double hi)
{
    return lo + (hi - lo) * uniform();
}

static double log_between(double lo, double hi)
{
    return exp(between(log(lo), log(hi)));
}

static struct hs_model *random_robot(void)
{
    uint32_t n = 1 + (uint32_t)(uniform() * 6);
    struct hs_model *m = mb_new("random", n, n, 0);
    m->sensors = NULL;
    m->links[0].joint_type = uniform() < 0.5 ? HS_JOINT_FREE : HS_JOINT_FIXED;
    int32_t id = 0;
    for (uint32_t i = 0; i < n; i++) {
        struct hs_link *l = &m->links[i];
        double mass = log_between(1e-3, 10);
        double a = between(0.01, 0.2), b = between(0.01, 0.2), c = between(0.01, 0.2);
        mb_mass(l, mass, between(-0.02, 0.02), between(-0.02, 0.02), between(-0.02, 0.02),
                mass * (b * b + c * c) / 12, mass * (a * a + c * c) / 12,
                mass * (a * a + b * b) / 12);
        mb_box(m, i, a, b, c, 0, 0, 0);
        if (i == 0)
            continue;
        double ax[3] = {between(-1, 1), between(-1, 1), between(-1, 1)};
        double norm = sqrt(ax[0] * ax[0] + ax[1] * ax[1] + ax[2] * ax[2]);
        if (norm < 1e-3)
            ax[0] = 1, ax[1] = ax[2] = 0, norm = 1;
        mb_joint(l, uniform() < 0.75 ? HS_JOINT_ROTATE : HS_JOINT_SLIDE, ax[0] / norm, ax[1] / norm,
                 ax[2] / norm);
        l->joint_id = id++;
        l->origin.p[0] = between(-0.2, 0.2);
        l->origin.p[1] = between(-0.2, 0.2);
        l->origin.p[2] = between(-0.2, 0.2);
        if (uniform() < 0.5) {
            l->uvlimit = between(1, 50);
            l->lvlimit = -l->uvlimit;
        }
    }
    m->njoint_ids = (uint32_t)id;
    return m;
}

/* The documented ranges: kp [0, 1e6] N·m/rad, kd [0, 1e5] N·m·s/rad; zero and the extremes
 * are drawn on purpose. */
static double gain(double hi)
{
    double u = uniform();
    return u < 0.1 ? 0 : u < 0.2 ? hi : log_between(1e-3, hi);
}

static void test_random_robots_never_abort(void **state)
{
    (void)state;
    const char *seed = getenv("HS_PROPERTY_SEED");
    rng_state = seed ? strtoull(seed, NULL, 0) : 0x9E3779B97F4A7C15ULL;
    if (!rng_state)
        rng_state = 1;
    struct hs_model *floor = mb_floor();
    unsigned counts[HS_WORLD_FAULT_MAX] = {0}, refused = 0;
    for (int r = 0; r < ROBOTS; r++) {
        struct hs_model *m = random_robot();
        struct hs_world_body_spec specs[2];
        hs_world_spec_default(&specs[0], m);
        specs[0].root_pose.p[2] = between(0.3, 1.0);
        hs_world_spec_default(&specs[1], floor);
        specs[1].is_static = true;
        struct hs_world_params p;
        hs_world_params_default(&p);
        p.solver = uniform() < 0.7 ? HS_SOLVER_QUICK : HS_SOLVER_STANDARD;
        struct hs_world *w = NULL;
        struct hs_diag d = {0};
        int rc = hs_world_create(&p, specs, 2, &w, &d);
        if (rc < 0) {
            /* Only a divergence during warm-up may refuse a random robot. */
            assert_int_equal(rc, -ERANGE);
            refused++;
            mb_free(m);
            continue;
        }
        struct hs_plant *pl = NULL;
        assert_int_equal(hs_plant_create(w, 0, m, NULL, &pl, &d), 0);
        uint32_t nj = hs_plant_joint_count(pl);
        double kp[8], kd[8], target[8], ff[8];
        for (uint32_t j = 0; j < nj; j++) {
            kp[j] = gain(1e6);
            kd[j] = gain(1e5);
            target[j] = between(-1, 1);
            ff[j] = uniform() < 0.05 ? between(-1e9, 1e9) : 0;
        }
        int step_rc = 0;
        for (int k = 1; k <= TICKS && step_rc == 0; k++) {
            int64_t now = (int64_t)k * 1000000;
            for (uint32_t j = 0; j < nj; j++) {
                struct hs_joint_command *c = hs_plant_command(pl, j);
                *c = (struct hs_joint_command){.mode = HS_JOINT_MODE_POSITION,
                                               .q = target[j],
                                               .kp = kp[j],
                                               .kd = kd[j],
                                               .tau_ff = ff[j],
                                               .rx_time_ns = now,
                                               .seq = c->seq + 1};
            }
            hs_plant_apply_commands(pl, now);
            hs_world_set_tick(w, (uint64_t)k);
            step_rc = hs_world_step(w);
            assert_true(step_rc == 0 || step_rc == -ERANGE || step_rc == -EFAULT);
            hs_plant_update_sensors(pl, now, (uint64_t)k);
        }
        const struct hs_world_fault *f = hs_world_fault(w);
        if (step_rc) {
            assert_int_equal(f->kind == HS_WORLD_FAULT_ODE_INTERNAL ? -EFAULT : -ERANGE, step_rc);
            assert_int_equal(hs_world_step(w), step_rc); /* latched */
        } else {
            assert_int_equal(f->kind, HS_WORLD_FAULT_NONE);
            for (uint32_t i = 0; i < m->nlinks; i++) {
                struct hs_pose pose;
                hs_world_link_pose(w, 0, i, &pose);
                for (int k = 0; k < 3; k++)
                    assert_true(isfinite(pose.p[k]) && fabs(pose.p[k]) < 1e4 + 1);
            }
        }
        counts[f->kind]++;
        hs_plant_destroy(pl);
        hs_world_destroy(w);
        mb_free(m);
    }
    print_message("%d random robots x %d ticks: %u ran through, %u refused at warm-up; guard "
                  "trips: position %u, linear velocity %u, angular velocity %u, joint rate %u; "
                  "ODE internal errors caught %u\n",
                  ROBOTS, TICKS, counts[HS_WORLD_FAULT_NONE], refused,
                  counts[HS_WORLD_FAULT_POSITION], counts[HS_WORLD_FAULT_LINEAR_VELOCITY],
                  counts[HS_WORLD_FAULT_ANGULAR_VELOCITY], counts[HS_WORLD_FAULT_JOINT_RATE],
                  counts[HS_WORLD_FAULT_ODE_INTERNAL]);
    /* The draw covers both outcomes, or the property was not exercised. */
    assert_true(counts[HS_WORLD_FAULT_NONE] > 0);
    assert_true(ROBOTS - counts[HS_WORLD_FAULT_NONE] - refused > 0);
    mb_free(floor);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_random_robots_never_abort),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
