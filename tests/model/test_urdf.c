/* The URDF loader on files the project wrote (tests/model/urdf): every element it reads, the
 * registry's choice of format, meshes written by the test (binary STL, OBJ), and bad files with
 * the file:line and the words of their error. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "hilsim/model.h"

#define assert_near(a, b, tol) assert_true(fabs((double)(a) - (double)(b)) <= (tol))

static void urdf_path(const char *name, char *buf, size_t size)
{
    const char *src = getenv("HS_SOURCE_DIR");
    snprintf(buf, size, "%s/tests/model/urdf/%s", src ? src : ".", name);
}

static struct hs_model *load_ok(const char *path)
{
    struct hs_model *m = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    int r = hs_model_load(path, &m, &d);
    if (r)
        print_error("%s: %s:%d: %s\n", path, d.file, d.line, d.msg);
    assert_int_equal(r, 0);
    return m;
}

static const struct hs_link *link_named(const struct hs_model *m, const char *name)
{
    int i = hs_model_find_link(m, name);
    assert_true(i >= 0);
    return &m->links[i];
}

static void test_full(void **state)
{
    (void)state;
    char path[PATH_MAX];
    urdf_path("full.urdf", path, sizeof path);
    struct hs_model *m = load_ok(path);
    assert_string_equal(m->name, "full");
    assert_int_equal(m->nlinks, 6);
    assert_int_equal(m->njoint_ids, 3); /* the mimic finger has none */
    assert_near(hs_model_total_mass(m), 5.8, 1e-12);

    /* The root floats; its inertia was given in a frame yawed 90°: R I Rᵀ. */
    const struct hs_link *base = &m->links[0];
    assert_string_equal(base->name, "base");
    assert_int_equal(base->parent, -1);
    assert_int_equal(base->joint_type, HS_JOINT_FREE);
    assert_int_equal(base->joint_id, -1);
    assert_near(base->mass, 4.0, 0);
    assert_near(base->com[0], 0.01, 1e-15);
    assert_near(base->com[2], 0.03, 1e-15);
    static const double Irot[9] = {0.2, -0.01, 0, -0.01, 0.1, 0, 0, 0, 0.3};
    for (int k = 0; k < 9; k++)
        assert_near(base->inertia[k], Irot[k], 1e-15);
    /* Two collisions: the box, then the sphere above it; the visual is not a geom. */
    assert_int_equal(base->geom_count, 2);
    const struct hs_geom *g = &m->geoms[base->geom_first];
    assert_int_equal(g[0].type, HS_GEOM_BOX);
    assert_near(g[0].u.box.size[0], 0.4, 0);
    assert_near(g[0].u.box.size[2], 0.2, 0);
    assert_int_equal(g[1].type, HS_GEOM_SPHERE);
    assert_near(g[1].u.sphere.radius, 0.05, 0);
    assert_near(g[1].pose.p[2], 0.15, 0);

    /* revolute: axis normalised, limits, effort, dynamics; named after the joint. */
    const struct hs_link *sh = link_named(m, "shoulder");
    assert_string_equal(sh->segment_name, "upper");
    assert_int_equal(sh->parent, 0);
    assert_int_equal(sh->joint_type, HS_JOINT_ROTATE);
    assert_int_equal(sh->joint_id, 0);
    assert_near(sh->axis[1], 1.0, 0);
    assert_near(sh->origin.p[1], 0.2, 0);
    assert_near(sh->llimit, -1.5, 0);
    assert_near(sh->ulimit, 2.0, 0);
    assert_near(sh->lvlimit, -3.5, 0);
    assert_near(sh->uvlimit, 3.5, 0);
    assert_near(sh->effort_max, 30, 0);
    assert_near(sh->damping, 0.7, 0);
    assert_near(sh->friction, 0.2, 0);
    assert_near(sh->gear_ratio, 100, 0); /* <transmission> mechanicalReduction */
    /* URDF cylinder along its z becomes the model's y-axis cylinder turned onto z. */
    assert_int_equal(sh->geom_count, 1);
    const struct hs_geom *cy = &m->geoms[sh->geom_first];
    assert_int_equal(cy->type, HS_GEOM_CYLINDER);
    assert_near(cy->u.cylinder.radius, 0.03, 0);
    assert_near(cy->u.cylinder.height, 0.4, 0);
    double y[3] = {0, 1, 0}, z[3];
    hs_rot_apply(cy->pose.R, y, z);
    assert_near(z[0], 0, 1e-15);
    assert_near(z[1], 0, 1e-15);
    assert_near(z[2], 1, 1e-15);
    assert_near(cy->pose.p[2], -0.2, 0);

    /* continuous: no position limits, velocity limit kept; ids follow document order. */
    const struct hs_link *wh = link_named(m, "wheel_joint");
    assert_int_equal(wh->joint_type, HS_JOINT_ROTATE);
    assert_int_equal(wh->joint_id, 1);
    assert_true(isinf(wh->llimit) && wh->llimit < 0 && isinf(wh->ulimit) && wh->ulimit > 0);
    assert_near(wh->uvlimit, 20, 0);
    assert_near(wh->effort_max, 5, 0);
    assert_int_equal(wh->parent, hs_model_find_link(m, "shoulder"));

    const struct hs_link *li = link_named(m, "lift");
    assert_int_equal(li->joint_type, HS_JOINT_SLIDE);
    assert_int_equal(li->joint_id, 2);
    assert_near(li->axis[2], 1, 0);
    assert_near(li->ulimit, 0.3, 0);
    assert_near(li->gear_ratio, -12.5, 0); /* old format, reduction outside <actuator> */
    assert_near(wh->gear_ratio, 1, 0);     /* no transmission: direct drive */
    /* default axis is x; a mimic joint is coupled to its leader and has no joint id */
    const struct hs_link *fi = link_named(m, "finger_joint");
    assert_int_equal(fi->joint_id, -1);
    assert_near(fi->axis[0], 1, 0);
    assert_true(fi->mimics);
    assert_int_equal(fi->mimic_of, hs_model_find_link(m, "lift"));
    assert_near(fi->mimic_multiplier, 0.1, 0);
    /* Gazebo friction on the URDF link "upper" (the shoulder's child), and a stiffness in the
     * `value` attribute form Gazebo also reads (Unitree's A1, Go1, Aliengo). */
    assert_int_equal(sh->surface_given, HS_SURFACE_MU1 | HS_SURFACE_MU2 | HS_SURFACE_KP);
    assert_near(sh->mu1, 0.8, 0);
    assert_near(sh->contact_kp, 1e6, 0);

    /* fixed with rpy: R = Ry(0.5); a link without inertial is massless. */
    const struct hs_link *cam = link_named(m, "camera_joint");
    assert_int_equal(cam->joint_type, HS_JOINT_FIXED);
    assert_int_equal(cam->joint_id, -1);
    assert_near(cam->origin.R[2], sin(0.5), 1e-15);
    assert_near(cam->origin.R[6], -sin(0.5), 1e-15);
    assert_near(cam->origin.R[0], cos(0.5), 1e-15);
    assert_near(cam->mass, 0, 0);

    /* Gazebo sensors: an IMU on a link (by its URDF name) becomes accel + gyro; a force-torque
     * sensor on a joint sits on the joint's child link; a camera is skipped with a warning. */
    assert_int_equal(m->nsensors, 3);
    int shi = hs_model_find_link(m, "shoulder");
    assert_string_equal(m->sensors[0].name, "arm_imu_accel");
    assert_int_equal(m->sensors[0].type, HS_SENSOR_ACCEL);
    assert_string_equal(m->sensors[1].name, "arm_imu_gyro");
    assert_int_equal(m->sensors[1].type, HS_SENSOR_GYRO);
    assert_string_equal(m->sensors[2].name, "shoulder_ft");
    assert_int_equal(m->sensors[2].type, HS_SENSOR_FORCE);
    for (int i = 0; i < 3; i++) {
        assert_int_equal(m->sensors[i].link, shi);
        assert_int_equal(m->sensors[i].sensor_id, 0);
    }
    assert_near(m->sensors[0].pose.p[2], -0.1, 0);
    assert_near(m->sensors[0].pose.R[3], 1, 1e-15); /* yaw 90°: x onto y */
    bool cam_warned = false;
    for (uint32_t i = 0; i < m->nwarnings; i++)
        cam_warned |= strstr(m->warnings[i], "sensor 'cam' of type 'camera' skipped") != NULL;
    assert_true(cam_warned);
    hs_model_free(m);
}

static void test_world_root(void **state)
{
    (void)state;
    char path[PATH_MAX];
    urdf_path("pendulum.urdf", path, sizeof path);
    struct hs_model *m = load_ok(path);
    /* The 'world' link is dropped: the continuous joint is the root, hinged to the world. */
    assert_int_equal(m->nlinks, 1);
    assert_string_equal(m->links[0].name, "pivot");
    assert_string_equal(m->links[0].segment_name, "bob");
    assert_int_equal(m->links[0].joint_type, HS_JOINT_ROTATE);
    assert_int_equal(m->links[0].joint_id, 0);
    assert_near(m->links[0].com[2], -0.5, 0);
    hs_model_free(m);
}

static void test_registry(void **state)
{
    (void)state;
    static const char urdf[] = "<?xml version=\"1.0\"?>\n<!-- c -->\n<robot name=\"r\"><link "
                               "name=\"a\"/></robot>\n";
    assert_string_equal(hs_model_format_of(urdf, sizeof urdf - 1, "x.wrl"), "urdf");
    assert_string_equal(hs_model_format_of("#VRML V2.0 utf8\n", 16, "x.urdf"), "vrml");
    assert_string_equal(hs_model_format_of("", 0, "robot.URDF"), "urdf");
    assert_string_equal(hs_model_format_of("", 0, "robot.wrl"), "vrml");
    assert_string_equal(hs_model_format_of("junk", 4, "robot"), "vrml");
    struct hs_model *m = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    assert_int_equal(hs_model_load_buffer(urdf, sizeof urdf - 1, "buf", NULL, &m, &d), 0);
    assert_int_equal(m->nlinks, 1);
    assert_int_equal(m->links[0].joint_type, HS_JOINT_FREE);
    hs_model_free(m);
}

static void put_f32(FILE *f, float v)
{
    assert_int_equal(fwrite(&v, 4, 1, f), 1);
}

/* A unit cube as binary STL (little-endian floats, as x86 writes them): 12 triangles. */
static void write_stl_cube(const char *path)
{
    static const int quads[6][4] = {{0, 2, 3, 1}, {4, 5, 7, 6}, {0, 1, 5, 4},
                                    {2, 6, 7, 3}, {0, 4, 6, 2}, {1, 3, 7, 5}};
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    char header[80] = "hilsim test cube";
    assert_int_equal(fwrite(header, 1, 80, f), 80);
    uint32_t n = 12;
    assert_int_equal(fwrite(&n, 4, 1, f), 1);
    for (int q = 0; q < 6; q++)
        for (int t = 0; t < 2; t++) {
            int idx[3] = {quads[q][0], quads[q][1 + t], quads[q][2 + t]};
            for (int k = 0; k < 3; k++)
                put_f32(f, 0);
            for (int v = 0; v < 3; v++)
                for (int k = 0; k < 3; k++)
                    put_f32(f, (float)((idx[v] >> (2 - k)) & 1) - 0.5f);
            uint16_t attr = 0;
            assert_int_equal(fwrite(&attr, 2, 1, f), 1);
        }
    assert_int_equal(fclose(f), 0);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    assert_true(fputs(text, f) >= 0);
    assert_int_equal(fclose(f), 0);
}

static void bounds(const struct hs_mesh *me, double lo[3], double hi[3])
{
    for (int k = 0; k < 3; k++) {
        lo[k] = INFINITY;
        hi[k] = -INFINITY;
    }
    for (uint32_t i = 0; i < me->nvertices; i++)
        for (int k = 0; k < 3; k++) {
            lo[k] = fmin(lo[k], me->vertices[3 * i + k]);
            hi[k] = fmax(hi[k], me->vertices[3 * i + k]);
        }
}

static void test_meshes(void **state)
{
    (void)state;
    char dir[] = "/tmp/hs_urdf_meshXXXXXX", p[PATH_MAX + 64], pkg[PATH_MAX];
    assert_non_null(mkdtemp(dir));
    /* The package's directory is not its name: ROS (and hilsim) go by package.xml's <name>. */
    snprintf(pkg, sizeof pkg, "%s/pkgs/cubebot_src/meshes", dir);
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "mkdir -p %s", pkg);
    assert_int_equal(system(cmd), 0);
    snprintf(p, sizeof p, "%s/cube.stl", pkg);
    write_stl_cube(p);
    snprintf(p, sizeof p, "%s/pkgs/cubebot_src/package.xml", dir);
    write_text(p, "<package format=\"3\">\n  <name>cubebot</name>\n</package>\n");
    snprintf(p, sizeof p, "%s/tri.obj", dir);
    write_text(p, "v 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nf 1 2 3 4\n");
    /* COLLADA in millimetres with Z_UP: the unit applies, the up axis does not. */
    snprintf(p, sizeof p, "%s/tri.dae", dir);
    write_text(
        p, "<?xml version=\"1.0\"?>\n"
           "<COLLADA xmlns=\"http://www.collada.org/2005/11/COLLADASchema\" version=\"1.4.1\">\n"
           " <asset><unit name=\"millimeter\" meter=\"0.001\"/><up_axis>Z_UP</up_axis></asset>\n"
           " <library_geometries>\n"
           "  <geometry id=\"g\"><mesh>\n"
           "   <source id=\"p\"><float_array id=\"pa\" count=\"9\">0 0 0 1000 0 0 0 2000 "
           "500</float_array>\n"
           "    <technique_common><accessor source=\"#pa\" count=\"3\" stride=\"3\"><param "
           "name=\"X\" type=\"float\"/><param name=\"Y\" type=\"float\"/><param name=\"Z\" "
           "type=\"float\"/></accessor></technique_common></source>\n"
           "   <vertices id=\"v\"><input semantic=\"POSITION\" source=\"#p\"/></vertices>\n"
           "   <triangles count=\"1\"><input semantic=\"VERTEX\" source=\"#v\" offset=\"0\"/><p>0 "
           "1 2</p></triangles>\n"
           "  </mesh></geometry>\n"
           " </library_geometries>\n"
           " <library_visual_scenes><visual_scene id=\"s\"><node id=\"n\"><instance_geometry "
           "url=\"#g\"/></node></visual_scene></library_visual_scenes>\n"
           " <scene><instance_visual_scene url=\"#s\"/></scene>\n"
           "</COLLADA>\n");
    snprintf(p, sizeof p, "%s/robot.urdf", dir);
    char text[4096];
    snprintf(text, sizeof text,
             "<robot name=\"m\">\n"
             "  <link name=\"a\">\n"
             "    <collision><geometry>\n"
             "      <mesh filename=\"package://cubebot/meshes/cube.stl\" scale=\"0.1 0.2 "
             "0.3\"/>\n"
             "    </geometry></collision>\n"
             "    <collision><origin xyz=\"0 0 1\"/><geometry>\n"
             "      <mesh filename=\"tri.obj\"/>\n"
             "    </geometry></collision>\n"
             "    <collision><geometry>\n"
             "      <mesh filename=\"file://%s/tri.dae\"/>\n"
             "    </geometry></collision>\n"
             "  </link>\n"
             "</robot>\n",
             dir);
    write_text(p, text);
    snprintf(pkg, sizeof pkg, "%s/pkgs", dir);
    assert_int_equal(setenv(HS_PACKAGE_PATH_ENV, pkg, 1), 0);
    struct hs_model *m = load_ok(p);
    assert_int_equal(m->ngeoms, 3);
    const struct hs_mesh *cube = &m->geoms[0].u.mesh;
    assert_int_equal(m->geoms[0].type, HS_GEOM_MESH);
    assert_int_equal(cube->ntriangles, 12);
    assert_int_equal(cube->nvertices, 8); /* identical corners joined */
    double lo[3], hi[3];
    bounds(cube, lo, hi);
    static const double s[3] = {0.1, 0.2, 0.3};
    for (int k = 0; k < 3; k++) {
        assert_near(lo[k], -0.5 * s[k], 1e-7);
        assert_near(hi[k], 0.5 * s[k], 1e-7);
    }
    const struct hs_mesh *quad = &m->geoms[1].u.mesh;
    assert_int_equal(quad->ntriangles, 2); /* the OBJ quad triangulated */
    assert_near(m->geoms[1].pose.p[2], 1, 0);
    const struct hs_mesh *tri = &m->geoms[2].u.mesh;
    assert_int_equal(tri->ntriangles, 1);
    bounds(tri, lo, hi);
    assert_near(hi[0], 1.0, 1e-6); /* 1000 mm */
    assert_near(hi[1], 2.0, 1e-6); /* y stays y: Z_UP is not turned into Y_UP */
    assert_near(hi[2], 0.5, 1e-6);
    assert_near(lo[0], 0, 1e-9);
    hs_model_free(m);

    /* Without the search path the package is not found, and the error says where it looked. */
    assert_int_equal(unsetenv(HS_PACKAGE_PATH_ENV), 0);
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    m = NULL;
    assert_int_equal(hs_model_load(p, &m, &d), -ENOENT);
    assert_null(m);
    assert_int_equal(d.line, 4);
    assert_non_null(strstr(d.msg, "package 'cubebot' holding meshes/cube.stl not found"));
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

static bool warned(const struct hs_model *m, const char *words)
{
    for (uint32_t i = 0; i < m->nwarnings; i++)
        if (strstr(m->warnings[i], words))
            return true;
    return false;
}

/* A floating root without <inertial> (Bullet's KUKA iiwa: massless link_0, no 'world' link)
 * loads with a warning at the link naming the way out; with a 'world' link or a mass it does
 * not warn. */
static void test_massless_floating_root_warns(void **state)
{
    (void)state;
    static const char floating[] =
        "<?xml version=\"1.0\"?>\n<robot name=\"arm\">\n"
        "  <link name=\"link_0\"/>\n"
        "  <link name=\"link_1\"><inertial><mass value=\"4\"/><inertia ixx=\"0.1\" "
        "iyy=\"0.1\" izz=\"0.1\"/></inertial></link>\n"
        "  <joint name=\"j1\" type=\"continuous\"><parent link=\"link_0\"/><child "
        "link=\"link_1\"/></joint>\n</robot>\n";
    struct hs_model *m = NULL;
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    assert_int_equal(hs_model_load_buffer(floating, sizeof floating - 1, "iiwa.urdf", NULL, &m, &d),
                     0);
    assert_true(warned(m, "iiwa.urdf:3: link 'link_0' is the robot's root: it floats (no 'world' "
                          "link fixes it) and has no <inertial>"));
    hs_model_free(m);
    /* Bolted down through a 'world' link: no warning. */
    char fixed[sizeof floating + 128];
    snprintf(fixed, sizeof fixed, "%s", floating);
    char *at = strstr(fixed, "  <link name=\"link_0\"/>");
    assert_non_null(at);
    static const char world[] = "  <link name=\"world\"/><joint name=\"base\" type=\"fixed\">"
                                "<parent link=\"world\"/><child link=\"link_0\"/></joint>\n";
    memmove(at + strlen(world), at, strlen(at) + 1);
    memcpy(at, world, strlen(world));
    m = NULL;
    assert_int_equal(hs_model_load_buffer(fixed, strlen(fixed), "iiwa.urdf", NULL, &m, &d), 0);
    assert_false(warned(m, "is the robot's root"));
    hs_model_free(m);
}

struct bad {
    const char *file;
    int line;
    const char *words;
};

/* ros2_control: interfaces onto the joints, interface limits tighten the joint's, what hilsim
 * does not map is a warning naming it. */
static void test_ros2_control(void **state)
{
    (void)state;
    char path[PATH_MAX];
    urdf_path("ros2.urdf", path, sizeof path);
    struct hs_model *m = load_ok(path);
    const struct hs_link *j1 = link_named(m, "j1"), *j2 = link_named(m, "j2"),
                         *j3 = link_named(m, "j3");
    assert_int_equal(j1->command_interfaces,
                     HS_IFACE_BIT(HS_IFACE_POSITION) | HS_IFACE_BIT(HS_IFACE_VELOCITY));
    assert_int_equal(j1->state_interfaces,
                     HS_IFACE_BIT(HS_IFACE_POSITION) | HS_IFACE_BIT(HS_IFACE_VELOCITY));
    assert_near(j1->uvlimit, 1.5, 0); /* velocity interface max 1.5 < <limit velocity=3> */
    assert_near(j1->lvlimit, -1.5, 0);
    assert_near(j1->effort_max, 40, 0);
    assert_near(j1->ulimit, 2, 0); /* the position command range does not move the joint's */
    assert_int_equal(j2->command_interfaces, HS_IFACE_BIT(HS_IFACE_EFFORT));
    assert_int_equal(j2->state_interfaces,
                     HS_IFACE_BIT(HS_IFACE_POSITION) | HS_IFACE_BIT(HS_IFACE_EFFORT));
    assert_near(j2->effort_max, 12, 0); /* effort interface max 12 < <limit effort=20> */
    assert_near(j2->uvlimit, 2, 0);
    assert_near(j2->gear_ratio, 80, 0); /* ros2_control <transmission> mechanical_reduction */
    assert_int_equal(j3->command_interfaces, 0);
    for (uint32_t i = 0; i < m->nwarnings; i++)
        print_message("  %s\n", m->warnings[i]);
    assert_true(warned(m, "ros2.urdf:29: joint 'j1': position command range [-2.5, 2.5] reaches "
                          "beyond the joint's <limit> [-2, 2]"));
    assert_true(warned(m, "joint 'j1': initial_value is not used"));
    assert_true(warned(m, "joint 'j2': command interface 'acceleration' is not supported"));
    assert_true(warned(m, "ros2_control sensor: its state interfaces are not mapped"));
    assert_true(warned(m, "ros2_control gpio is not supported"));
    assert_true(warned(m, "joint 'j3' is in no <ros2_control> block"));
    assert_true(warned(m, "Gazebo plugin 'libgazebo_ros_p3d.so' is not run"));
    assert_false(warned(m, "libgazebo_ros2_control.so"));
    hs_model_free(m);
}

static void test_bad_files(void **state)
{
    (void)state;
    static const struct bad bad[] = {
        {"xacro.urdf", 3, "xacro file: expand it first"},
        {"planar.urdf", 4, "type 'planar' is not supported"},
        {"bad_number.urdf", 5, "<inertia>: attribute 'iyy' needs 1 finite number"},
        {"unknown_link.urdf", 6, "<child>: joint 'j': no <link name=\"c\">"},
        {"two_roots.urdf", 4, "links 'a' and 'c' both have no parent joint"},
        {"missing_mesh.urdf", 4, "<mesh>: filename \"package://nowhere_pkg/meshes/a.stl\""},
        {"bad_cylinder.urdf", 5, "<cylinder>: attribute 'radius' must be positive"},
        {"limits_reversed.urdf", 6, "<limit>: joint 'j': 'lower' 1 is above 'upper' -1"},
        {"bad_joint_type.urdf", 4, "attribute 'type' is \"hinge\""},
        {"floating_inside.urdf", 6, "a floating joint is only allowed at the root"},
        {"not_xml.urdf", 9, "XML: "},
        {"duplicate_link.urdf", 3, "link name 'a' used twice"},
        {"cycle.urdf", 3, "not connected to the root"},
        {"unknown_geometry.urdf", 4, "<capsule>: unknown geometry"},
        {"bad_transmission.urdf", 8, "transmission names no actuated joint 'j2'"},
        {"bad_reduction.urdf", 7, "<mechanicalReduction>: expected one finite number"},
        {"bad_sensor_pose.urdf", 5, "<pose>: expected six numbers"},
        {"ros2_unknown_joint.urdf", 4, "<joint>: ros2_control names no movable joint 'nope'"},
        {"ros2_min_max.urdf", 6, "<command_interface>: param min 2 is above max 1"},
        {"mimic_unknown.urdf", 4, "<mimic>: joint 'j' mimics 'ghost', which is no movable"},
        {"bad_mu.urdf", 4, "<mu1>: link 'a': mu1 -0.5 must be >= 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char path[PATH_MAX], name[64];
        snprintf(name, sizeof name, "bad/%s", bad[i].file);
        urdf_path(name, path, sizeof path);
        struct hs_model *m = NULL;
        struct hs_diag d;
        memset(&d, 0, sizeof d);
        int r = hs_model_load(path, &m, &d);
        print_message("%s:%d: %s\n", bad[i].file, d.line, d.msg);
        assert_true(r < 0);
        assert_null(m);
        assert_string_equal(d.file, path);
        assert_int_equal(d.line, bad[i].line);
        assert_non_null(strstr(d.msg, bad[i].words));
    }
}

/* A glTF whose buffer is a file beside it, written here: a tetrahedron with corners (0,0,0),
 * (1,0,0), (0,2,0), (0,0,3): 4 float VEC3 positions (48 bytes) then 12 uint16 indices. */
static void write_gltf(const char *dir, const char *name, const char *uri)
{
    char p[PATH_MAX + 64], text[2048];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    snprintf(text, sizeof text,
             "{\"asset\": {\"version\": \"2.0\"}, \"scene\": 0, \"scenes\": [{\"nodes\": [0]}],\n"
             " \"nodes\": [{\"mesh\": 0}],\n"
             " \"meshes\": [{\"primitives\": [{\"attributes\": {\"POSITION\": 0}, "
             "\"indices\": 1}]}],\n"
             " \"buffers\": [{\"uri\": \"%s\", \"byteLength\": 72}],\n"
             " \"bufferViews\": [{\"buffer\": 0, \"byteOffset\": 0, \"byteLength\": 48},\n"
             "                 {\"buffer\": 0, \"byteOffset\": 48, \"byteLength\": 24}],\n"
             " \"accessors\": [{\"bufferView\": 0, \"componentType\": 5126, \"count\": 4, "
             "\"type\": \"VEC3\", \"min\": [0, 0, 0], \"max\": [1, 2, 3]},\n"
             "               {\"bufferView\": 1, \"componentType\": 5123, \"count\": 12, "
             "\"type\": \"SCALAR\"}]}\n",
             uri);
    write_text(p, text);
}

static void write_tet_bin(const char *path)
{
    static const float v[12] = {0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3};
    static const uint16_t t[12] = {0, 2, 1, 0, 1, 3, 0, 3, 2, 1, 2, 3};
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    assert_int_equal(fwrite(v, sizeof v, 1, f), 1);
    assert_int_equal(fwrite(t, sizeof t, 1, f), 1);
    assert_int_equal(fclose(f), 0);
}

static int load_gltf(const char *dir, const char *gltf, struct hs_model **ret, struct hs_diag *d)
{
    char p[PATH_MAX + 64], text[1024];
    snprintf(p, sizeof p, "%s/robot.urdf", dir);
    snprintf(text, sizeof text,
             "<robot name=\"g\">\n  <link name=\"a\">\n    <collision><geometry>\n"
             "      <mesh filename=\"%s\" scale=\"0.5 0.5 0.5\"/>\n"
             "    </geometry></collision>\n  </link>\n</robot>\n",
             gltf);
    write_text(p, text);
    memset(d, 0, sizeof *d);
    *ret = NULL;
    return hs_model_load(p, ret, d);
}

/* A glTF with its buffer in a .bin beside it loads (assimp reads it through the loader's own
 * file access: a regular file in the mesh's directory, a link that stays there too); a buffer
 * named out of the directory (.., an absolute path, a link leading out), a FIFO or a file past
 * the mesh's 512 MiB budget is refused at once with the reference named, and nothing waits. */
static void test_gltf_external_buffers(void **state)
{
    (void)state;
    char top[] = "/tmp/hs_urdf_gltfXXXXXX", dir[PATH_MAX], p[PATH_MAX + 64];
    assert_non_null(mkdtemp(top));
    snprintf(dir, sizeof dir, "%s/meshes", top);
    assert_int_equal(mkdir(dir, 0755), 0);
    snprintf(p, sizeof p, "%s/tet.bin", dir);
    write_tet_bin(p);
    snprintf(p, sizeof p, "%s/outside.bin", top);
    write_tet_bin(p);
    snprintf(p, sizeof p, "%s/alias.bin", dir);
    assert_int_equal(symlink("tet.bin", p), 0);
    snprintf(p, sizeof p, "%s/out.bin", dir);
    assert_int_equal(symlink("../outside.bin", p), 0);
    snprintf(p, sizeof p, "%s/fifo.bin", dir);
    assert_int_equal(mkfifo(p, 0644), 0);
    snprintf(p, sizeof p, "%s/big.bin", dir);
    FILE *big = fopen(p, "wb");
    assert_non_null(big);
    assert_int_equal(ftruncate(fileno(big), 600ll << 20), 0); /* sparse: no disk used */
    assert_int_equal(fclose(big), 0);

    static const char *const good[] = {"tet.bin", "alias.bin"};
    for (size_t i = 0; i < 2; i++) {
        write_gltf(dir, "tet.gltf", good[i]);
        struct hs_model *m;
        struct hs_diag d;
        int r = load_gltf(dir, "tet.gltf", &m, &d);
        if (r)
            print_error("%s: %s\n", good[i], d.msg);
        assert_int_equal(r, 0);
        assert_int_equal(m->ngeoms, 1);
        const struct hs_mesh *tet = &m->geoms[0].u.mesh;
        assert_int_equal(tet->nvertices, 4);
        assert_int_equal(tet->ntriangles, 4);
        double lo[3], hi[3];
        bounds(tet, lo, hi);
        for (int k = 0; k < 3; k++) {
            assert_near(lo[k], 0, 1e-9);
            assert_near(hi[k], 0.5 * (k + 1), 1e-6); /* scale 0.5 */
        }
        hs_model_free(m);
    }
    char absolute[PATH_MAX + 64];
    snprintf(absolute, sizeof absolute, "%s/outside.bin", top);
    const struct {
        const char *uri, *words;
    } bad[] = {
        {"../outside.bin", "referenced file '../outside.bin': leaves the mesh's directory (..)"},
        {absolute, "an absolute path"},
        {"out.bin", "referenced file 'out.bin': leaves the mesh's directory (through a symbolic "
                    "link)"},
        {"fifo.bin", "referenced file 'fifo.bin': not a regular file"},
        {"big.bin", "referenced file 'big.bin': 629145600 bytes, more than the"},
        {"none.bin", "referenced file 'none.bin': No such file or directory"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_gltf(dir, "bad.gltf", bad[i].uri);
        struct hs_model *m;
        struct hs_diag d;
        int r = load_gltf(dir, "bad.gltf", &m, &d);
        print_message("%s: %s\n", bad[i].uri, d.msg);
        assert_true(r < 0);
        assert_null(m);
        assert_int_equal(d.line, 4);
        assert_non_null(strstr(d.msg, "bad.gltf: "));
        if (!strstr(d.msg, bad[i].words))
            fail_msg("expected '%s' in '%s'", bad[i].words, d.msg);
    }
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", top);
    assert_int_equal(system(cmd), 0);
}

/* An OBJ's material library is checked, then not used: hilsim reads collision geometry, which
 * has no appearance. A model whose OBJs name materials is told so once, however many OBJs. */
static void test_obj_materials_said_once(void **state)
{
    (void)state;
    char dir[] = "/tmp/hs_urdf_mtlXXXXXX", p[PATH_MAX + 64];
    assert_non_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/a.obj", dir);
    write_text(p, "mtllib a.mtl\nusemtl red\nv 0 0 0\nv 1 0 0\nv 0 1 0\nv 0 0 1\n"
                  "f 1 3 2\nf 1 2 4\nf 1 4 3\nf 2 3 4\n");
    snprintf(p, sizeof p, "%s/a.mtl", dir);
    write_text(p, "newmtl red\nKd 1 0 0\n");
    snprintf(p, sizeof p, "%s/robot.urdf", dir);
    write_text(p, "<robot name=\"o\">\n  <link name=\"a\">\n"
                  "    <collision><geometry><mesh filename=\"a.obj\"/></geometry></collision>\n"
                  "    <collision><geometry><mesh filename=\"a.obj\"/></geometry></collision>\n"
                  "  </link>\n</robot>\n");
    struct hs_model *m = load_ok(p);
    assert_int_equal(m->ngeoms, 2);
    uint32_t said = 0;
    for (uint32_t i = 0; i < m->nwarnings; i++)
        if (strstr(m->warnings[i], "its materials (mtllib) are not used")) {
            print_message("%s\n", m->warnings[i]);
            said++;
        }
    assert_int_equal(said, 1);
    hs_model_free(m);
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

/* <visual> geometry: read only when asked (hs_model_options.visuals, the web view), in the link
 * frame like collision geometry, never into the geoms the world collides; one that cannot be read
 * is a warning; the URDF export writes the visuals back as <visual> and they load again. */
static void test_visuals(void **state)
{
    (void)state;
    char dir[] = "/tmp/hs_urdf_visXXXXXX", p[PATH_MAX + 64], out[PATH_MAX + 64];
    assert_non_null(mkdtemp(dir));
    snprintf(p, sizeof p, "%s/cube.stl", dir);
    write_stl_cube(p);
    snprintf(p, sizeof p, "%s/robot.urdf", dir);
    write_text(
        p, "<robot name=\"v\">\n"
           "  <link name=\"a\">\n"
           "    <inertial><mass value=\"1\"/><inertia ixx=\"1\" iyy=\"1\" izz=\"1\"/></inertial>\n"
           "    <collision><geometry><box size=\"1 2 3\"/></geometry></collision>\n"
           "    <visual><origin xyz=\"0 0 0.5\"/>\n"
           "      <geometry><mesh filename=\"cube.stl\" scale=\"2 2 2\"/></geometry>\n"
           "      <material name=\"red\"><color rgba=\"1 0 0 1\"/></material></visual>\n"
           "    <visual><geometry><cylinder radius=\"0.1\" length=\"0.4\"/></geometry></visual>\n"
           "    <visual><geometry><mesh filename=\"missing.stl\"/></geometry></visual>\n"
           "  </link>\n"
           "</robot>\n");
    struct hs_model *m = load_ok(p); /* the bench's load: no visuals, no word about them */
    assert_int_equal(m->ngeoms, 1);
    assert_int_equal(m->nvisuals, 0);
    assert_false(warned(m, "<visual> not drawn"));
    hs_model_free(m);

    struct hs_model_options o = {.visuals = true};
    struct hs_diag d;
    memset(&d, 0, sizeof d);
    m = NULL;
    assert_int_equal(hs_model_load_opts(p, &o, &m, &d), 0);
    assert_int_equal(m->ngeoms, 1); /* the world's geometry is unchanged */
    assert_int_equal(m->geoms[0].type, HS_GEOM_BOX);
    assert_int_equal(m->nvisuals, 2);
    assert_int_equal(m->links[0].visual_first, 0);
    assert_int_equal(m->links[0].visual_count, 2);
    const struct hs_geom *cube = &m->visuals[0];
    assert_int_equal(cube->type, HS_GEOM_MESH);
    assert_int_equal(cube->u.mesh.ntriangles, 12);
    assert_near(cube->pose.p[2], 0.5, 0);
    double lo[3], hi[3];
    bounds(&cube->u.mesh, lo, hi);
    for (int k = 0; k < 3; k++) {
        assert_near(lo[k], -1, 1e-7); /* the scale applies */
        assert_near(hi[k], 1, 1e-7);
    }
    assert_int_equal(m->visuals[1].type, HS_GEOM_CYLINDER);
    assert_near(m->visuals[1].u.cylinder.height, 0.4, 0);
    assert_true(warned(m, "<visual> not drawn"));
    assert_true(warned(m, "missing.stl"));

    /* Written back as <visual> (meshes as STL beside the file) and read again. */
    snprintf(out, sizeof out, "%s/out.urdf", dir);
    uint32_t lost = 0;
    assert_int_equal(hs_model_write_urdf(m, out, &lost, &d), 0);
    hs_model_free(m);
    /* Facet normals written (unit length), not zeros: some viewers draw zero ones black. */
    snprintf(p, sizeof p, "%s/out_meshes/link0_v0.stl", dir);
    FILE *stl = fopen(p, "rb");
    assert_non_null(stl);
    float rec[3];
    assert_int_equal(fseek(stl, 84, SEEK_SET), 0);
    assert_int_equal(fread(rec, 4, 3, stl), 3);
    fclose(stl);
    assert_near(sqrt((double)rec[0] * rec[0] + (double)rec[1] * rec[1] + (double)rec[2] * rec[2]),
                1, 1e-6);
    m = NULL;
    assert_int_equal(hs_model_load_opts(out, &o, &m, &d), 0);
    assert_int_equal(m->ngeoms, 1);
    assert_int_equal(m->nvisuals, 2);
    assert_int_equal(m->visuals[0].u.mesh.ntriangles, 12);
    assert_near(m->visuals[0].pose.p[2], 0.5, 1e-12);
    assert_int_equal(m->visuals[1].type, HS_GEOM_CYLINDER);
    assert_near(m->visuals[1].u.cylinder.radius, 0.1, 1e-12);
    hs_model_free(m);
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    assert_int_equal(system(cmd), 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_full),
        cmocka_unit_test(test_world_root),
        cmocka_unit_test(test_registry),
        cmocka_unit_test(test_meshes),
        cmocka_unit_test(test_bad_files),
        cmocka_unit_test(test_ros2_control),
        cmocka_unit_test(test_massless_floating_root_warns),
        cmocka_unit_test(test_gltf_external_buffers),
        cmocka_unit_test(test_obj_materials_said_once),
        cmocka_unit_test(test_visuals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
