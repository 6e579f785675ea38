/* Model builder: every Joint field, jointId rules, PROTO defaults reaching the model, sensors
 * and their poses, ExtraJoint, mass combination (analytic), unknown PROTO expansion. */
#include <setjmp.h>
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "model_test_util.h"

static struct hs_model *load_ok(const char *src)
{
    struct hs_model *m = NULL;
    struct hs_diag d;
    int r = load_src(src, &m, &d);
    if (r < 0)
        fprintf(stderr, "%s:%d:%d: %s\n", d.file, d.line, d.column, d.msg);
    assert_int_equal(r, 0);
    return m;
}

static void load_err(const char *src, int line, const char *word)
{
    struct hs_model *m = (struct hs_model *)0x1;
    struct hs_diag d;
    int r = load_src(src, &m, &d);
    assert_true(r < 0);
    assert_ptr_equal(m, (struct hs_model *)0x1); /* untouched on failure */
    if (d.line != line || !strstr(d.msg, word))
        fprintf(stderr, "got %d:%d: %s\n", d.line, d.column, d.msg);
    assert_int_equal(d.line, line);
    assert_non_null(strstr(d.msg, word));
}

static void test_joint_fields(void **state)
{
    (void)state;
    struct hs_model *m = load_ok(
        "DEF H Humanoid { name \"robo\" humanoidBody [\n"
        "DEF ROOT Joint { translation 0 0 1 children [\n"
        " DEF J Joint { jointType \"rotate\" jointId 0 jointAxis 0 2 0 translation 0 0.5 0\n"
        "   rotation 0 0 1 1.5707963267948966 ulimit [ 1.5 ] llimit [ -1.5 ] uvlimit 3\n"
        "   lvlimit -3 gearRatio 100 gearEfficiency 0.6 rotorInertia 1e-4 rotorResistor 2\n"
        "   torqueConst 0.05 encoderPulse 4096 children [\n"
        "   Joint { name \"S\" jointType \"slide\" jointId 1 jointAxis \"X\" ulimit [] } ] }\n"
        " Joint { jointType \"pseudoContinuousTrack\" jointId 2 jointAxis \"z\" }\n"
        "] } ] }");
    assert_string_equal(m->name, "robo");
    assert_int_equal(m->nlinks, 4);
    assert_int_equal(m->njoint_ids, 3);
    const struct hs_link *root = &m->links[0], *j = &m->links[1], *s = &m->links[2];
    assert_string_equal(root->name, "ROOT");
    assert_int_equal(root->joint_type, HS_JOINT_FREE); /* root without jointType */
    assert_int_equal(root->parent, -1);
    assert_near(root->origin.p[2], 1, 1e-12);
    assert_string_equal(j->name, "J");
    assert_int_equal(j->parent, 0);
    assert_int_equal(j->joint_type, HS_JOINT_ROTATE);
    assert_near(j->axis[1], 1, 1e-12);     /* normalised */
    assert_near(j->origin.R[1], -1, 1e-9); /* Rz(90deg) row-major: R[0][1] = -1 */
    assert_near(j->ulimit, 1.5, 0);
    assert_near(j->llimit, -1.5, 0);
    assert_near(j->uvlimit, 3, 0);
    assert_near(j->lvlimit, -3, 0);
    assert_near(j->gear_ratio, 100, 0);
    assert_near(j->gear_efficiency, 0.6, 0);
    assert_near(j->rotor_inertia, 1e-4, 0);
    assert_near(j->rotor_resistor, 2, 0);
    assert_near(j->torque_const, 0.05, 0);
    assert_near(j->encoder_pulse, 4096, 0);
    assert_int_equal(j->source_line, 3);
    assert_string_equal(s->name, "S");
    assert_int_equal(s->parent, 1);
    assert_int_equal(s->joint_type, HS_JOINT_SLIDE);
    assert_near(s->axis[0], 1, 0);
    assert_true(isinf(s->ulimit) && s->ulimit > 0);
    assert_true(isinf(s->llimit) && s->llimit < 0);
    assert_near(s->gear_ratio, 1, 0);
    assert_near(s->gear_efficiency, 1, 0);
    assert_near(s->torque_const, 1, 0);
    assert_int_equal(m->links[3].joint_type, HS_JOINT_CRAWLER);
    assert_near(m->links[3].axis[2], 1, 0);
    assert_int_equal(hs_model_find_link(m, "S"), 2);
    assert_int_equal(hs_model_find_link(m, "nope"), -ENOENT);
    assert_int_equal(hs_model_link_of_joint_id(m, 2), 3);
    assert_int_equal(hs_model_link_of_joint_id(m, 7), -ENOENT);
    for (uint32_t i = 0; i < m->nwarnings; i++) /* these links have no Segment */
        assert_non_null(strstr(m->warnings[i], "zero mass"));
    hs_model_free(m);
}

static void test_proto_defaults_reach_model(void **state)
{
    (void)state;
    struct hs_model *m = load_ok(
        "PROTO Joint [ exposedField SFString jointType \"slide\" exposedField SFVec3f jointAxis"
        " 0 1 0\n exposedField SFFloat gearRatio 50 exposedField MFNode children []\n"
        " exposedField SFInt32 jointId -1 ] { Group { children IS children } }\n"
        "Joint { jointType \"free\" children Joint { jointId 0 } }");
    assert_int_equal(m->links[1].joint_type, HS_JOINT_SLIDE);
    assert_near(m->links[1].axis[1], 1, 0);
    assert_near(m->links[1].gear_ratio, 50, 0);
    hs_model_free(m);
}

static void test_joint_id_rules(void **state)
{
    (void)state;
    struct hs_model *m =
        load_ok("Joint { jointType \"free\" children [ Joint { jointType \"rotate\" jointId 0 }\n"
                "Joint { jointType \"rotate\" jointId 3 } ] }");
    assert_int_equal(m->njoint_ids, 4);
    /* One warning for the run of unused ids, at the Joint where the numbering jumps. */
    uint32_t gaps = 0;
    for (uint32_t i = 0; i < m->nwarnings; i++)
        if (strstr(m->warnings[i], "not used")) {
            gaps++;
            assert_non_null(strstr(m->warnings[i], "t.wrl:2:1: jointIds 1..2 are not used"));
        }
    assert_int_equal(gaps, 1);
    hs_model_free(m);
    load_err("Joint { jointType \"free\" children [ Joint { jointType \"rotate\" jointId 0 }\n"
             "Joint { jointType \"rotate\" jointId 0 } ] }",
             2, "duplicate jointId 0");
    load_err("Joint { jointType \"free\" children [\n Joint { jointId 0 } ] }", 2, "jointType");
    load_err("Joint { jointType \"free\" children [\n Joint { jointType \"free\" } ] }", 2, "root");
    load_err("Joint { jointType \"free\" children [\n Joint { jointType \"hinge\" } ] }", 2,
             "hinge");
    load_err("Joint { }\nJoint { }", 2, "second root");
    load_err("Joint { jointType \"free\" children [\n Joint { jointType \"rotate\" "
             "jointAxis \"W\" } ] }",
             2, "jointAxis");
    load_err("Joint { jointType \"free\" children [\n Joint { jointType \"rotate\" "
             "jointAxis 0 0 0 } ] }",
             2, "zero");
    load_err("Joint { jointType \"free\" children [\n Joint { jointType \"rotate\" "
             "ulimit 1 llimit 2 } ] }",
             2, "llimit");
    load_err("Group { }", 0, "no Joint");
    load_err("Segment { mass 1 }", 1, "outside any Joint");
    load_err("Joint { children Segment {\n mass -1 } }", 1, "negative");
    load_err("Joint { children Segment { mass 1\n momentsOfInertia [ 1 0 0 ] } }", 2, "9");
}

/* Two point-like Segments of 1 kg and 3 kg at x = -1 and x = +1 (the second under a Transform
 * rotated 90 deg about z, with its own diagonal tensor): com at x = 0.5; about the com the
 * parallel-axis terms add m d^2 = 1*1.5^2 + 3*0.5^2 = 3 on the y and z diagonals. */
static void test_inertia_combination_analytic(void **state)
{
    (void)state;
    struct hs_model *m = load_ok(
        "Joint { jointType \"free\" children [\n"
        " Segment { mass 1 centerOfMass -1 0 0 momentsOfInertia [ 0.1 0 0 0 0.2 0 0 0 0.3 ] }\n"
        " Transform { translation 1 0 0 rotation 0 0 1 1.5707963267948966 children\n"
        "  Segment { mass 3 momentsOfInertia [ 1 0 0 0 2 0 0 0 3 ] } }\n"
        "] }");
    const struct hs_link *l = &m->links[0];
    assert_near(l->mass, 4, 1e-12);
    assert_near(l->com[0], 0.5, 1e-12);
    assert_near(l->com[1], 0, 1e-12);
    /* Rotating diag(1,2,3) by 90 deg about z swaps the x and y moments: diag(2,1,3). */
    assert_near(l->inertia[0], 0.1 + 2, 1e-9);
    assert_near(l->inertia[4], 0.2 + 1 + 3, 1e-9);
    assert_near(l->inertia[8], 0.3 + 3 + 3, 1e-9);
    assert_near(l->inertia[1], 0, 1e-9);
    assert_near(l->inertia[3], 0, 1e-9);
    assert_near(hs_model_total_mass(m), 4, 1e-12);
    hs_model_free(m);
}

static void test_sensors_and_extra_joint(void **state)
{
    (void)state;
    struct hs_model *m = load_ok(
        "DEF W Joint { jointType \"free\" children [\n"
        " DEF A Joint { jointType \"rotate\" jointId 0 translation 0 0 1 children [\n"
        "  Transform { translation 0 0 0.5 rotation 1 0 0 1.5707963267948966 children [\n"
        "   DEF imu AccelerationSensor { sensorId 0 translation 0 0.1 0 maxAcceleration 1 2 3 }\n"
        "   DEF ft ForceSensor { sensorId 0 maxForce 10 20 30 maxTorque 1 2 3 } ] }\n"
        "  DEF g GyroSensor { maxAngularVelocity 5 5 5 }\n"
        "  DEF cam VisionSensor { type \"COLOR\" width 640 height 480 frameRate 15 }\n"
        "  DEF r RangeSensor { sensorId 0 scanAngle 2 scanStep 0.01 scanRate 20 maxDistance 30 }\n"
        " ] }\n"
        " DEF B Joint { jointType \"fixed\" }\n"
        "] }\n"
        "DEF EJ ExtraJoint { link1Name \"A\" link2Name \"B\" link1LocalPos 1 2 3 jointType "
        "\"ball\" }");
    assert_int_equal(m->nsensors, 5);
    const struct hs_sensor *imu = &m->sensors[0];
    assert_string_equal(imu->name, "imu");
    assert_int_equal(imu->type, HS_SENSOR_ACCEL);
    assert_int_equal(imu->link, 1);
    /* (0, 0.1, 0) rotated 90 deg about x is (0, 0, 0.1), plus the Transform's 0.5 on z. */
    assert_near(imu->pose.p[0], 0, 1e-9);
    assert_near(imu->pose.p[1], 0, 1e-9);
    assert_near(imu->pose.p[2], 0.6, 1e-9);
    assert_near(imu->pose.R[5], -1, 1e-9);
    assert_near(imu->max[2], 3, 0);
    assert_int_equal(m->sensors[1].type, HS_SENSOR_FORCE);
    assert_near(m->sensors[1].u.force.max_torque[1], 2, 0);
    assert_int_equal(m->sensors[2].type, HS_SENSOR_GYRO);
    assert_int_equal(m->sensors[2].sensor_id, -1);
    assert_string_equal(m->sensors[3].u.vision.vision_type, "COLOR");
    assert_int_equal(m->sensors[3].u.vision.width, 640);
    assert_near(m->sensors[3].u.vision.frame_rate, 15, 0);
    assert_near(m->sensors[3].u.vision.back_clip, 10, 0); /* default */
    assert_near(m->sensors[4].u.range.max_distance, 30, 0);
    /* the kinds' own fields' defaults (their lists in hilsim/sensor_kinds.h) */
    assert_near(m->sensors[3].u.vision.field_of_view, 0.785398, 0);
    assert_near(m->sensors[3].u.vision.front_clip, 0.01, 0);
    assert_near(m->sensors[4].u.range.min_distance, 0, 0);
    assert_int_equal(m->nextra_joints, 1);
    assert_string_equal(m->extra_joints[0].name, "EJ");
    assert_int_equal(m->extra_joints[0].type, HS_EXTRA_BALL);
    assert_int_equal(m->extra_joints[0].link1, 1);
    assert_int_equal(m->extra_joints[0].link2, 2);
    assert_near(m->extra_joints[0].pos1[2], 3, 0);
    hs_model_free(m);
    load_err("Joint { }\nExtraJoint { link1Name \"X\" link2Name \"JOINT0\" }", 2, "link1Name");
    load_err("Transform { children\n Gyro { } }", 2, "outside any Joint");
}

/* A sensor made without a node (URDF, the config) gets what a bare node of its kind reads:
 * hs_sensor_kind_defaults against the loader, for every kind of the registry, with the role
 * each kind declares. */
static void test_kind_defaults_match_bare_nodes(void **state)
{
    (void)state;
    for (int t = 0; t < HS_SENSOR_TYPE_MAX; t++) {
        char text[256];
        snprintf(text, sizeof text, "Joint { jointType \"free\" children [ DEF s %s { } ] }",
                 hs_sensor_type_node((enum hs_sensor_type)t));
        struct hs_model *m = load_ok(text);
        assert_int_equal(m->nsensors, 1);
        struct hs_sensor d = m->sensors[0];
        memset(&d.u, 0x55, sizeof d.u); /* whatever was there before */
        d.max[1] = 7;
        hs_sensor_kind_defaults(&d, (enum hs_sensor_type)t);
        assert_int_equal(d.type, t);
        assert_memory_equal(&d, &m->sensors[0], sizeof d);
        hs_model_free(m);
    }
    /* the roles the bench's fixed sections look kinds up by */
    assert_int_equal(hs_sensor_type_role(HS_SENSOR_ACCEL), HS_SENSOR_ROLE_IMU_ACCEL);
    assert_int_equal(hs_sensor_type_role(HS_SENSOR_GYRO), HS_SENSOR_ROLE_IMU_GYRO);
    assert_int_equal(hs_sensor_type_role(HS_SENSOR_FORCE), HS_SENSOR_ROLE_FT);
    assert_int_equal(hs_sensor_type_role(HS_SENSOR_RANGE), HS_SENSOR_ROLE_NONE);
    assert_int_equal(hs_sensor_type_role(HS_SENSOR_TYPE_MAX), HS_SENSOR_ROLE_NONE);
}

static void test_unknown_proto_body_is_walked(void **state)
{
    (void)state;
    struct hs_model *m = load_ok(
        "PROTO Leg [ exposedField SFVec3f at 0 0 0 exposedField SFInt32 id 0 ]\n"
        "{ Transform { translation IS at children Joint { jointType \"rotate\" jointId IS id\n"
        "  children Segment { mass 2 } } } }\n"
        "PROTO Pair [ exposedField SFInt32 first 0 ] { Group { children [ Leg { id IS first } ] } "
        "}\n"
        "Joint { jointType \"free\" children [ Leg { at 0 1 0 id 1 } Pair { } ] }");
    assert_int_equal(m->nlinks, 3);
    assert_near(m->links[1].origin.p[1], 1, 0);
    assert_int_equal(m->links[1].joint_id, 1);
    assert_int_equal(m->links[2].joint_id, 0); /* IS through two levels, then the default */
    assert_near(hs_model_total_mass(m), 4, 1e-12);
    hs_model_free(m);
}

static void test_use_explosion_is_bounded(void **state)
{
    (void)state;
    char src[4096];
    size_t k = (size_t)sprintf(src, "DEF G0 Group { }\n");
    for (int i = 1; i < 40; i++)
        k += (size_t)sprintf(src + k, "DEF G%d Group { children [ USE G%d USE G%d ] }\n", i, i - 1,
                             i - 1);
    sprintf(src + k, "Joint { children USE G39 }");
    struct hs_model *m = NULL;
    struct hs_diag d;
    assert_true(load_src(src, &m, &d) < 0);
    assert_non_null(strstr(d.msg, "too large"));
    assert_null(m);
}

static void test_humanoid_transform_places_root(void **state)
{
    (void)state;
    struct hs_model *m = load_ok("DEF Bot Humanoid { translation 1 0 0 rotation 0 0 1 "
                                 "1.5707963267948966\n"
                                 " humanoidBody Joint { translation 0 2 0 } }");
    assert_string_equal(m->name, "Bot"); /* DEF name when the name field is empty */
    /* root origin = T(1,0,0) * Rz(90) * (0,2,0) = (-1, 0, 0) */
    assert_near(m->links[0].origin.p[0], -1, 1e-12);
    assert_near(m->links[0].origin.p[1], 0, 1e-12);
    assert_near(m->links[0].origin.R[3], 1, 1e-12);
    hs_model_free(m);
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* Inline URLs resolve relative to the including file, nested files included; each file has
 * its own DEF names; a buffer without base path refuses Inline. */
static void test_inline_relative_and_nested(void **state)
{
    (void)state;
    char dir[] = "/tmp/hs_model_inlineXXXXXX", path[256];
    assert_non_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/parts", dir);
    assert_int_equal(mkdir(path, 0700), 0);
    snprintf(path, sizeof path, "%s/parts/leg.wrl", dir);
    write_file(path, "DEF A Transform { translation 0 0 -1 children [\n"
                     " Shape { geometry Box { size 1 1 1 } } Inline { url \"foot.wrl\" } ] }");
    snprintf(path, sizeof path, "%s/parts/foot.wrl", dir);
    write_file(path, "DEF A Shape { geometry Sphere { radius 0.25 } }");
    snprintf(path, sizeof path, "%s/robot.wrl", dir);
    write_file(path,
               "DEF A Joint { jointType \"free\" children [ Inline { url \"parts/leg.wrl\" }\n"
               " Joint { jointType \"rotate\" jointId 0 children Inline { url "
               "\"parts/foot.wrl\" } } ] }");
    struct hs_model *m = NULL;
    struct hs_diag d;
    int r = hs_model_load(path, &m, &d);
    if (r < 0)
        fprintf(stderr, "%s:%d: %s\n", d.file, d.line, d.msg);
    assert_int_equal(r, 0);
    assert_int_equal(m->nlinks, 2);
    assert_int_equal(m->links[0].geom_count, 2);
    assert_int_equal(m->geoms[0].type, HS_GEOM_BOX);
    assert_near(m->geoms[0].pose.p[2], -1, 0);
    assert_int_equal(m->geoms[1].type, HS_GEOM_SPHERE);
    assert_near(m->geoms[1].pose.p[2], -1, 0); /* nested Inline inherits the Transform */
    assert_int_equal(m->links[1].geom_count, 1);
    hs_model_free(m);
    const char *src = "Joint { children Inline { url \"parts/leg.wrl\" } }";
    m = NULL;
    assert_true(hs_model_load_buffer(src, strlen(src), "buf", NULL, &m, &d) < 0);
    assert_null(m);
    assert_non_null(strstr(d.msg, "base path"));
    assert_int_equal(hs_model_load_buffer(src, strlen(src), "buf", dir, &m, &d), 0);
    hs_model_free(m);
    const char *names[] = {"robot.wrl", "parts/leg.wrl", "parts/foot.wrl", "parts", ""};
    for (int i = 0; i < 5; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        if (i < 3)
            unlink(path);
        else
            rmdir(path);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_joint_fields),
        cmocka_unit_test(test_proto_defaults_reach_model),
        cmocka_unit_test(test_joint_id_rules),
        cmocka_unit_test(test_inertia_combination_analytic),
        cmocka_unit_test(test_sensors_and_extra_joint),
        cmocka_unit_test(test_kind_defaults_match_bare_nodes),
        cmocka_unit_test(test_unknown_proto_body_is_walked),
        cmocka_unit_test(test_use_explosion_is_bounded),
        cmocka_unit_test(test_humanoid_transform_places_root),
        cmocka_unit_test(test_inline_relative_and_nested),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
