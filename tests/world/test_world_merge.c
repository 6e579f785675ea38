/* Fixed-link merging (src/world/world_merge.c) on hand-built models: the merged body's mass,
 * centre of mass and inertia are those of the parts (compared with the unmerged world's bodies,
 * to 1e-9 relative), link poses, velocities and geoms are where the unmerged world puts them
 * (1e-9 m), and the exceptions hold: a fixed joint carrying a force sensor keeps its body, and
 * links fixed to a fixed root become its scenery. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <ode/ode.h>

#include "hilsim/world.h"
#include "world/model_builders.h"

/* A free box, a heavy part fixed to it in a turned frame with its centre of mass off its
 * origin, and a small part fixed to that one (a chain of two fixed joints). */
static struct hs_model *tool_model(void)
{
    struct hs_model *m = mb_new("tool", 3, 3, 0);
    mb_mass(&m->links[0], 1.0, 0.01, 0, 0, 0.01, 0.02, 0.03);
    mb_box(m, 0, 0.2, 0.1, 0.1, 0, 0, 0);
    m->links[1].origin.p[0] = 0.2, m->links[1].origin.p[2] = 0.1;
    hs_rot_from_axis_angle((double[3]){M_SQRT1_2, M_SQRT1_2, 0}, 0.5, m->links[1].origin.R);
    mb_mass(&m->links[1], 2.0, 0.03, 0, -0.05, 0.002, 0.003, 0.004);
    mb_box(m, 1, 0.05, 0.05, 0.05, 0.01, 0, 0);
    m->links[2].origin.p[2] = -0.1;
    hs_rot_from_axis_angle((double[3]){0, 0, 1}, 0.3, m->links[2].origin.R);
    mb_mass(&m->links[2], 0.3, 0.01, 0.02, 0, 1e-4, 1.3e-4, 5e-5);
    mb_box(m, 2, 0.04, 0.02, 0.06, 0.01, 0.02, 0);
    return m;
}

static struct hs_world *make(struct hs_model *m, bool merge)
{
    struct hs_world_body_spec s;
    hs_world_spec_default(&s, m);
    s.root_pose.p[2] = 1.0;
    struct hs_world_params p;
    hs_world_params_default(&p);
    p.gravity[2] = 0;
    p.merge_fixed_links = merge;
    return mb_world(&p, &s, 1);
}

/* Mass, centre of mass (world) and inertia about it (world axes) of the given ODE bodies. */
static void bodies_mass(dBodyID *b, int n, double *ret_m, double c[3], double I[9])
{
    double mt = 0;
    memset(c, 0, 3 * sizeof *c);
    memset(I, 0, 9 * sizeof *I);
    for (int i = 0; i < n; i++) {
        dMass m;
        dBodyGetMass(b[i], &m);
        const dReal *p = dBodyGetPosition(b[i]);
        mt += m.mass;
        for (int k = 0; k < 3; k++)
            c[k] += m.mass * p[k];
    }
    for (int k = 0; k < 3; k++)
        c[k] /= mt;
    for (int i = 0; i < n; i++) {
        dMass m;
        dBodyGetMass(b[i], &m);
        const dReal *p = dBodyGetPosition(b[i]), *R = dBodyGetRotation(b[i]);
        double d[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
        double d2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        for (int r = 0; r < 3; r++)
            for (int q = 0; q < 3; q++) {
                double rir = 0; /* (R I Rᵀ)_rq */
                for (int a = 0; a < 3; a++)
                    for (int e = 0; e < 3; e++)
                        rir += R[r * 4 + a] * m.I[a * 4 + e] * R[q * 4 + e];
                I[r * 3 + q] += rir + m.mass * ((r == q ? d2 : 0) - d[r] * d[q]);
            }
    }
    *ret_m = mt;
}

static void assert_near(double a, double b, double tol)
{
    if (!(fabs(a - b) <= tol))
        fail_msg("%.12g != %.12g (tolerance %g)", a, b, tol);
}

static void test_mass_and_frames_match_the_parts(void **state)
{
    (void)state;
    struct hs_model *m = tool_model();
    struct hs_world *wu = make(m, false), *wm = make(m, true);
    assert_int_equal(hs_world_merged_links(wu), 0);
    assert_int_equal(hs_world_merged_links(wm), 2);
    for (uint32_t i = 0; i < 3; i++) {
        assert_int_equal(hs_world_link_body_link(wm, 0, i), 0);
        assert_int_equal(hs_world_link_body_link(wu, 0, i), i);
        assert_ptr_equal(hs_world_ode_body(wm, 0, i), hs_world_ode_body(wm, 0, 0));
    }
    assert_null(hs_world_ode_joint(wm, 0, 1));
    dBodyID ub[3] = {hs_world_ode_body(wu, 0, 0), hs_world_ode_body(wu, 0, 1),
                     hs_world_ode_body(wu, 0, 2)};
    dBodyID mb[1] = {hs_world_ode_body(wm, 0, 0)};
    double mu, mm, cu[3], cm[3], Iu[9], Im[9];
    bodies_mass(ub, 3, &mu, cu, Iu);
    bodies_mass(mb, 1, &mm, cm, Im);
    assert_near(mm, 3.3, 1e-12);
    assert_near(mm, mu, 1e-12);
    for (int k = 0; k < 3; k++)
        assert_near(cm[k], cu[k], 1e-9);
    for (int k = 0; k < 9; k++)
        assert_near(Im[k], Iu[k], 1e-9 * Iu[0]);
    for (uint32_t i = 0; i < 3; i++) {
        struct hs_pose a, b;
        hs_world_link_pose(wu, 0, i, &a);
        hs_world_link_pose(wm, 0, i, &b);
        for (int k = 0; k < 3; k++)
            assert_near(a.p[k], b.p[k], 1e-9);
        for (int k = 0; k < 9; k++)
            assert_near(a.R[k], b.R[k], 1e-9);
    }
    /* Geoms: created in the same order in both worlds, at the same places. */
    dSpaceID su = hs_world_ode_space(wu), sm = hs_world_ode_space(wm);
    assert_int_equal(dSpaceGetNumGeoms(su), 3);
    assert_int_equal(dSpaceGetNumGeoms(sm), 3);
    for (int g = 0; g < 3; g++) {
        const dReal *pu = dGeomGetPosition(dSpaceGetGeom(su, g));
        const dReal *pm = dGeomGetPosition(dSpaceGetGeom(sm, g));
        const dReal *Ru = dGeomGetRotation(dSpaceGetGeom(su, g));
        const dReal *Rm = dGeomGetRotation(dSpaceGetGeom(sm, g));
        for (int k = 0; k < 3; k++)
            assert_near(pm[k], pu[k], 1e-9);
        for (int k = 0; k < 12; k++)
            assert_near(Rm[k], Ru[k], 1e-9);
    }
    /* A spinning, moving body: the merged links' velocities are the rigid body's at their
     * origins. */
    dBodySetAngularVel(mb[0], 0.3, -2.0, 1.1);
    dBodySetLinearVel(mb[0], 0.5, 0.1, -0.2);
    const dReal *pc = dBodyGetPosition(mb[0]);
    for (uint32_t i = 0; i < 3; i++) {
        struct hs_pose p;
        double v[3], om[3], d[3], want[3];
        hs_world_link_pose(wm, 0, i, &p);
        hs_world_link_velocity(wm, 0, i, v, om);
        for (int k = 0; k < 3; k++)
            d[k] = p.p[k] - pc[k];
        hs_vec_cross((double[3]){0.3, -2.0, 1.1}, d, want);
        assert_near(v[0], 0.5 + want[0], 1e-12);
        assert_near(v[1], 0.1 + want[1], 1e-12);
        assert_near(v[2], -0.2 + want[2], 1e-12);
        assert_near(om[1], -2.0, 0);
    }
    hs_world_destroy(wu);
    hs_world_destroy(wm);
    mb_free(m);
}

/* A force sensor on link 1 measures its fixed joint: link 1 keeps its body and joint; link 2
 * still merges into link 1. */
static void test_force_sensor_joint_stays(void **state)
{
    (void)state;
    struct hs_model *m = tool_model();
    struct hs_sensor ft = {.type = HS_SENSOR_FORCE, .link = 1};
    hs_pose_identity(&ft.pose);
    m->sensors = &ft;
    m->nsensors = 1;
    struct hs_world *w = make(m, true);
    assert_int_equal(hs_world_merged_links(w), 1);
    assert_int_equal(hs_world_link_body_link(w, 0, 1), 1);
    assert_int_equal(hs_world_link_body_link(w, 0, 2), 1);
    assert_non_null(hs_world_ode_joint(w, 0, 1));
    assert_ptr_not_equal(hs_world_ode_body(w, 0, 1), hs_world_ode_body(w, 0, 0));
    dMass mass;
    dBodyGetMass(hs_world_ode_body(w, 0, 1), &mass);
    assert_near(mass.mass, 2.3, 1e-12);
    hs_world_destroy(w);
    m->sensors = NULL;
    m->nsensors = 0;
    mb_free(m);
}

/* Fixed to a fixed root: scenery, where the model puts it, moved by nothing. */
static void test_fixed_root_takes_its_fixed_links(void **state)
{
    (void)state;
    struct hs_model *m = tool_model();
    m->links[0].joint_type = HS_JOINT_FIXED;
    struct hs_world *wu = make(m, false), *wm = make(m, true);
    assert_int_equal(hs_world_merged_links(wm), 2);
    assert_null(hs_world_ode_body(wm, 0, 1));
    assert_null(hs_world_ode_body(wm, 0, 2));
    assert_non_null(hs_world_ode_body(wu, 0, 1));
    for (uint32_t i = 0; i < 3; i++) {
        struct hs_pose a, b;
        hs_world_link_pose(wu, 0, i, &a);
        hs_world_link_pose(wm, 0, i, &b);
        for (int k = 0; k < 3; k++)
            assert_near(a.p[k], b.p[k], 1e-9);
    }
    hs_world_destroy(wu);
    hs_world_destroy(wm);
    mb_free(m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_mass_and_frames_match_the_parts),
        cmocka_unit_test(test_force_sensor_joint_stays),
        cmocka_unit_test(test_fixed_root_takes_its_fixed_links),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
