/* Round trip: SR1.wrl (from HS_SHARED_DIR; skipped when absent) and the project's full.urdf
 * written as URDF by hs_model_write_urdf and loaded back have the same links in the same order,
 * joints (type, id, axis, origin, limits, mimic), masses, centres of mass and inertias to 1e-9,
 * the same collision geometry kinds and sizes, the same accel, gyro and force sensors (Gazebo
 * sensor tags), link surfaces and ros2_control interfaces. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/model.h"

#define TOL 1e-9

static void near(double a, double b, const char *what, const char *link)
{
    if (isinf(a) && isinf(b) && (a > 0) == (b > 0))
        return;
    if (!(fabs(a - b) <= TOL)) {
        print_error("%s of %s: %.17g vs %.17g\n", what, link, a, b);
        fail();
    }
}

/* Writes a as URDF into a fresh directory, loads it back and compares everything URDF holds. */
static void roundtrip(const struct hs_model *a, uint32_t expect_lost)
{
    char out[] = "/tmp/hs_urdf_rtXXXXXX", urdf[PATH_MAX + 16];
    struct hs_model *b = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    assert_non_null(mkdtemp(out));
    snprintf(urdf, sizeof urdf, "%s/rt.urdf", out);
    uint32_t lost = 0;
    assert_int_equal(hs_model_write_urdf(a, urdf, &lost, &d), 0);
    assert_int_equal(lost, expect_lost);
    int r = hs_model_load(urdf, &b, &d);
    if (r)
        print_error("%s:%d: %s\n", d.file, d.line, d.msg);
    assert_int_equal(r, 0);
    assert_int_equal(b->nlinks, a->nlinks);
    assert_int_equal(b->njoint_ids, a->njoint_ids);
    assert_int_equal(b->ngeoms, a->ngeoms);
    for (uint32_t i = 0; i < a->nlinks; i++) {
        const struct hs_link *x = &a->links[i], *y = &b->links[i];
        assert_string_equal(y->name, x->name);
        assert_int_equal(y->parent, x->parent);
        assert_int_equal(y->joint_type, x->joint_type);
        assert_int_equal(y->joint_id, x->joint_id);
        near(y->mass, x->mass, "mass", x->name);
        for (int k = 0; k < 3; k++) {
            near(y->com[k], x->com[k], "com", x->name);
            near(y->origin.p[k], x->origin.p[k], "origin.p", x->name);
            if (x->joint_type == HS_JOINT_ROTATE || x->joint_type == HS_JOINT_SLIDE)
                near(y->axis[k], x->axis[k], "axis", x->name);
        }
        for (int k = 0; k < 9; k++) {
            near(y->inertia[k], x->inertia[k], "inertia", x->name);
            near(y->origin.R[k], x->origin.R[k], "origin.R", x->name);
        }
        near(y->gear_ratio, x->gear_ratio, "gear_ratio", x->name);
        near(y->llimit, x->llimit, "llimit", x->name);
        near(y->ulimit, x->ulimit, "ulimit", x->name);
        near(y->uvlimit, x->uvlimit, "uvlimit", x->name);
        /* OpenHRP's current limit goes out as the joint torque it allows (the URDF effort). */
        double motor = x->climit * fabs(x->torque_const) * fabs(x->gear_ratio), eff = x->effort_max;
        if ((x->joint_type == HS_JOINT_ROTATE || x->joint_type == HS_JOINT_SLIDE) && !(eff > 0) &&
            x->climit > 0 && isfinite(motor) && motor > 0)
            eff = motor;
        near(y->effort_max, eff, "effort_max", x->name);
        near(y->damping, x->damping, "damping", x->name);
        near(y->friction, x->friction, "friction", x->name);
        assert_int_equal(y->geom_count, x->geom_count);
        for (uint32_t k = 0; k < x->geom_count; k++) {
            const struct hs_geom *gx = &a->geoms[x->geom_first + k],
                                 *gy = &b->geoms[y->geom_first + k];
            assert_int_equal(gy->type, gx->type);
            for (int j = 0; j < 3; j++)
                near(gy->pose.p[j], gx->pose.p[j], "geom p", x->name);
            for (int j = 0; j < 9; j++)
                near(gy->pose.R[j], gx->pose.R[j], "geom R", x->name);
            if (gx->type == HS_GEOM_BOX)
                for (int j = 0; j < 3; j++)
                    near(gy->u.box.size[j], gx->u.box.size[j], "box size", x->name);
            if (gx->type == HS_GEOM_CYLINDER) {
                near(gy->u.cylinder.radius, gx->u.cylinder.radius, "radius", x->name);
                near(gy->u.cylinder.height, gx->u.cylinder.height, "height", x->name);
            }
            if (gx->type == HS_GEOM_SPHERE)
                near(gy->u.sphere.radius, gx->u.sphere.radius, "radius", x->name);
        }
    }
    /* Sensors URDF's Gazebo tags hold (accel, gyro, force) come back with name, type, id, link
     * and pose; mimic couplings and link surfaces too. */
    uint32_t kept = 0;
    for (uint32_t k = 0; k < a->nsensors; k++) {
        const struct hs_sensor *x = &a->sensors[k];
        if (x->type != HS_SENSOR_ACCEL && x->type != HS_SENSOR_GYRO && x->type != HS_SENSOR_FORCE)
            continue;
        kept++;
        const struct hs_sensor *y = NULL;
        for (uint32_t j = 0; j < b->nsensors; j++)
            if (strcmp(b->sensors[j].name, x->name) == 0)
                y = &b->sensors[j];
        assert_non_null(y);
        assert_int_equal(y->type, x->type);
        assert_int_equal(y->sensor_id, x->sensor_id);
        assert_int_equal(y->link, x->link);
        for (int j = 0; j < 3; j++)
            near(y->pose.p[j], x->pose.p[j], "sensor p", x->name);
        for (int j = 0; j < 9; j++)
            near(y->pose.R[j], x->pose.R[j], "sensor R", x->name);
    }
    assert_int_equal(b->nsensors, kept);
    for (uint32_t i = 0; i < a->nlinks; i++) {
        const struct hs_link *x = &a->links[i], *y = &b->links[i];
        assert_int_equal(y->mimics, x->mimics);
        if (x->mimics) {
            assert_int_equal(y->mimic_of, x->mimic_of);
            near(y->mimic_multiplier, x->mimic_multiplier, "mimic multiplier", x->name);
            near(y->mimic_offset, x->mimic_offset, "mimic offset", x->name);
        }
        assert_int_equal(y->surface_given, x->surface_given);
        near(y->mu1, x->mu1, "mu1", x->name);
        near(y->contact_kp, x->contact_kp, "kp", x->name);
        assert_int_equal(y->command_interfaces, x->command_interfaces);
        assert_int_equal(y->state_interfaces, x->state_interfaces);
    }
    print_message("%s round trip: %u links, %u joint ids, %u geoms, %u sensors equal to %g\n",
                  a->name, a->nlinks, a->njoint_ids, a->ngeoms, kept, TOL);
    hs_model_free(b);
    char cmd[PATH_MAX + 32];
    snprintf(cmd, sizeof cmd, "rm -rf %s", out);
    assert_int_equal(system(cmd), 0);
}

static void test_sr1_roundtrip(void **state)
{
    (void)state;
    const char *shared = getenv("HS_SHARED_DIR");
    char src[PATH_MAX];
    snprintf(src, sizeof src, "%s/models/openhrp/SR1.wrl", shared ? shared : "");
    if (!shared || access(src, R_OK) != 0)
        skip();
    struct hs_model *a = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    assert_int_equal(hs_model_load(src, &a, &d), 0);
    uint32_t lost = a->nextra_joints; /* SR1's cameras are left out */
    for (uint32_t k = 0; k < a->nsensors; k++)
        lost += a->sensors[k].type == HS_SENSOR_VISION || a->sensors[k].type == HS_SENSOR_RANGE;
    roundtrip(a, lost);
    hs_model_free(a);
}

/* The project's full.urdf: gear ratios, limits, effort, dynamics, every primitive geometry. */
static void test_full_roundtrip(void **state)
{
    (void)state;
    const char *src = getenv("HS_SOURCE_DIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/tests/model/urdf/full.urdf", src ? src : ".");
    struct hs_model *a = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    assert_int_equal(hs_model_load(path, &a, &d), 0);
    /* VRML names may hold XML's special characters: the writer escapes them. */
    snprintf(a->links[1].name, sizeof a->links[1].name, "%s", "sh&<\"'>");
    roundtrip(a, 0); /* sensors, mimic, surfaces as Gazebo tags and <mimic> */
    hs_model_free(a);
}

/* A file that cannot be created is an error: negative errno, the diag naming the path (and
 * nothing left behind). */
static void test_write_into_missing_dir_fails(void **state)
{
    (void)state;
    const char *src = getenv("HS_SOURCE_DIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/tests/model/urdf/full.urdf", src ? src : ".");
    struct hs_model *a = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    assert_int_equal(hs_model_load(path, &a, &d), 0);
    char out[] = "/tmp/hs_urdf_noXXXXXX", urdf[PATH_MAX + 32];
    assert_non_null(mkdtemp(out));
    snprintf(urdf, sizeof urdf, "%s/missing/rt.urdf", out);
    uint32_t lost = 0;
    memset(&d, 0, sizeof d);
    assert_int_equal(hs_model_write_urdf(a, urdf, &lost, &d), -ENOENT);
    assert_string_equal(d.file, urdf);
    assert_int_equal(rmdir(out), 0);
    hs_model_free(a);
}

int main(void)
{
    const struct CMUnitTest tests[] = {cmocka_unit_test(test_sr1_roundtrip),
                                       cmocka_unit_test(test_full_roundtrip),
                                       cmocka_unit_test(test_write_into_missing_dir_fails)};
    return cmocka_run_group_tests(tests, NULL, NULL);
}
