/* Export of a body model as URDF (hilsim model FILE --urdf OUT): links, joints, inertials and
 * collision geometry (and <visual> geometry when the model was loaded with it), so an OpenHRP
 * robot can be used in URDF tools (and loaded back here with the same links, joints, masses and
 * inertias). Meshes are written as binary STL in OUT_meshes/ beside the file. Colours
 * (hs_model.materials) are written as <robot>-level <material>s that each <visual> and
 * <collision> with a colour names (and repeats): a VRML model has no <visual>s, its collision
 * shapes are what is drawn, so its colours go on them (URDF tools other than hilsim and urdf-loader
 * ignore a <collision>'s <material>).
 *
 * Sensors, mimic couplings, link surfaces and ros2_control interfaces are written as the
 * loader reads them (write_gazebo). What URDF cannot say is left out and listed in the returned
 * warnings count: vision and range sensors, extra (closed-loop) joints, motor fields but the
 * gear ratio (written as a <transmission>: rotor inertia, torque constant, encoder pulses,
 * efficiency), crawler joints (written fixed) and cones. Actuated joints are written in jointId
 * order, so the loader's document-order numbering gives back the same ids when they had no gaps. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "hilsim/model.h"

#define ESC_MAX (HS_NAME_MAX * 6)
/* The model's colours are written once each at <robot> level, named this and their index, and
 * again, by name and colour, in each element that has one: urdfdom and urdf-loader resolve a
 * <visual>'s name to the <robot>-level definition, but urdf-loader reads a <collision>'s own
 * colour only. */
#define MATERIAL_PREFIX "hilsim_material_"

/* s with XML's special characters as entities (names from VRML may hold & < > " '). */
static const char *xesc(char buf[ESC_MAX], const char *s)
{
    size_t n = 0;
    for (; *s && n + 7 < ESC_MAX; s++) {
        const char *e = *s == '&'    ? "&amp;"
                        : *s == '<'  ? "&lt;"
                        : *s == '>'  ? "&gt;"
                        : *s == '"'  ? "&quot;"
                        : *s == '\'' ? "&apos;"
                                     : NULL;
        if (e) {
            memcpy(buf + n, e, strlen(e));
            n += strlen(e);
        } else {
            buf[n++] = *s;
        }
    }
    buf[n] = '\0';
    return buf;
}

static void rpy_of(const double R[9], double rpy[3])
{
    double c = sqrt(R[0] * R[0] + R[3] * R[3]);
    rpy[1] = atan2(-R[6], c);
    if (c > 1e-12) {
        rpy[0] = atan2(R[7], R[8]);
        rpy[2] = atan2(R[3], R[0]);
    } else { /* pitch ±90°: only roll ∓ yaw is defined; put it all in yaw */
        rpy[0] = 0;
        rpy[2] = atan2(-R[1], R[4]);
    }
}

static void origin(FILE *f, const char *indent, const double p[3], const double R[9])
{
    double rpy[3];
    rpy_of(R, rpy);
    fprintf(f, "%s<origin xyz=\"%.17g %.17g %.17g\" rpy=\"%.17g %.17g %.17g\"/>\n", indent, p[0],
            p[1], p[2], rpy[0], rpy[1], rpy[2]);
}

/* x in the fewest significant digits (6 to 9) that the loader reads back (strtod, then float)
 * as the same float: "0.85", not "0.850000024". */
static const char *float_text(char buf[32], float x)
{
    for (int p = 6; p <= 9; p++) {
        snprintf(buf, 32, "%.*g", p, (double)x);
        if ((float)strtod(buf, NULL) == x)
            break;
    }
    return buf;
}

/* Colour k of the model as a <material>. */
static void write_material(FILE *f, const struct hs_model *m, uint32_t k)
{
    const float *c = m->materials[k].rgba;
    char t[4][32];
    fprintf(f, "<material name=\"%s%u\"><color rgba=\"%s %s %s %s\"/></material>\n",
            MATERIAL_PREFIX, k, float_text(t[0], c[0]), float_text(t[1], c[1]),
            float_text(t[2], c[2]), float_text(t[3], c[3]));
}

static int write_stl(const char *path, const struct hs_mesh *m)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -errno;
    char header[80] = "hilsim export";
    uint32_t n = m->ntriangles;
    int ok = fwrite(header, 1, 80, f) == 80 && fwrite(&n, 4, 1, f) == 1;
    for (uint32_t t = 0; ok && t < n; t++) {
        float rec[12] = {0};
        for (int v = 0; v < 3; v++)
            for (int k = 0; k < 3; k++)
                rec[3 + 3 * v + k] = (float)m->vertices[3 * m->indices[3 * t + v] + k];
        /* The facet normal (a zero one draws black in viewers that trust it). */
        double a[3], b[3];
        for (int k = 0; k < 3; k++) {
            a[k] = (double)rec[6 + k] - rec[3 + k];
            b[k] = (double)rec[9 + k] - rec[3 + k];
        }
        double nx = a[1] * b[2] - a[2] * b[1], ny = a[2] * b[0] - a[0] * b[2],
               nz = a[0] * b[1] - a[1] * b[0], len = sqrt(nx * nx + ny * ny + nz * nz);
        if (len > 0) {
            rec[0] = (float)(nx / len);
            rec[1] = (float)(ny / len);
            rec[2] = (float)(nz / len);
        }
        uint16_t attr = 0;
        ok = fwrite(rec, 4, 12, f) == 12 && fwrite(&attr, 2, 1, f) == 1;
    }
    if (fclose(f) != 0 || !ok)
        return -EIO;
    return 0;
}

/* One <collision> (visual false) or <visual> element; a mesh as linkL_K.stl (a visual's as
 * linkL_vK.stl); its colour by name. */
static int write_geom(FILE *f, const struct hs_model *m, const struct hs_geom *g, bool visual,
                      const char *mesh_dir, const char *mesh_rel, uint32_t link, uint32_t k,
                      uint32_t *skipped, struct hs_diag *diag)
{
    const char *tag = visual ? "visual" : "collision", *v = visual ? "v" : "";
    /* The model's cylinders lie along y, URDF's along z: R_urdf = R yzᵀ. */
    static const double yz_t[9] = {1, 0, 0, 0, 0, 1, 0, -1, 0};
    double R[9];
    memcpy(R, g->pose.R, sizeof R);
    char path[PATH_MAX];
    switch (g->type) {
    case HS_GEOM_BOX:
    case HS_GEOM_SPHERE:
    case HS_GEOM_MESH:
        break;
    case HS_GEOM_CYLINDER:
        hs_rot_mul(g->pose.R, yz_t, R);
        break;
    default:
        (*skipped)++;
        return 0;
    }
    fprintf(f, "    <%s>\n", tag);
    origin(f, "      ", g->pose.p, R);
    fprintf(f, "      <geometry>");
    switch (g->type) {
    case HS_GEOM_BOX:
        fprintf(f, "<box size=\"%.17g %.17g %.17g\"/>", g->u.box.size[0], g->u.box.size[1],
                g->u.box.size[2]);
        break;
    case HS_GEOM_SPHERE:
        fprintf(f, "<sphere radius=\"%.17g\"/>", g->u.sphere.radius);
        break;
    case HS_GEOM_CYLINDER:
        fprintf(f, "<cylinder radius=\"%.17g\" length=\"%.17g\"/>", g->u.cylinder.radius,
                g->u.cylinder.height);
        break;
    default: {
        if (mkdir(mesh_dir, 0777) < 0 && errno != EEXIST)
            return hs_diag_set(diag, -errno, mesh_dir, 0, 0, "cannot create the mesh directory");
        if ((size_t)snprintf(path, sizeof path, "%s/link%u_%s%u.stl", mesh_dir, link, v, k) >=
            sizeof path)
            return hs_diag_set(diag, -ENAMETOOLONG, mesh_dir, 0, 0, "mesh path too long");
        int r = write_stl(path, &g->u.mesh);
        if (r < 0)
            return hs_diag_set(diag, r, path, 0, 0, "cannot write the mesh");
        char e[ESC_MAX];
        fprintf(f, "<mesh filename=\"%s/link%u_%s%u.stl\"/>", xesc(e, mesh_rel), link, v, k);
    }
    }
    fprintf(f, "</geometry>\n");
    if (g->material && g->material <= m->nmaterials) {
        fprintf(f, "      ");
        write_material(f, m, g->material - 1);
    }
    fprintf(f, "    </%s>\n", tag);
    return 0;
}

static const char *joint_type(const struct hs_link *l)
{
    switch (l->joint_type) {
    case HS_JOINT_ROTATE:
        return isinf(l->llimit) && isinf(l->ulimit) ? "continuous" : "revolute";
    case HS_JOINT_SLIDE:
        return "prismatic";
    case HS_JOINT_FREE:
        return "floating";
    default:
        return "fixed";
    }
}

/* Joints the loader numbers again from document order: actuated ones that keep their type. */
static bool numbered_back(const struct hs_link *l)
{
    return l->joint_id >= 0 &&
           (l->joint_type == HS_JOINT_ROTATE || l->joint_type == HS_JOINT_SLIDE);
}

static void write_joint(FILE *f, const struct hs_model *m, uint32_t i)
{
    const struct hs_link *l = &m->links[i];
    char e1[ESC_MAX], e2[ESC_MAX];
    fprintf(f, "  <joint name=\"%s\" type=\"%s\">\n", xesc(e1, l->name), joint_type(l));
    fprintf(f, "    <parent link=\"%s\"/>\n    <child link=\"%s\"/>\n",
            xesc(e1, l->parent < 0 ? "world" : m->links[l->parent].name), xesc(e2, l->name));
    origin(f, "    ", l->origin.p, l->origin.R);
    if (l->joint_type == HS_JOINT_ROTATE || l->joint_type == HS_JOINT_SLIDE) {
        fprintf(f, "    <axis xyz=\"%.17g %.17g %.17g\"/>\n", l->axis[0], l->axis[1], l->axis[2]);
        fprintf(f, "    <limit");
        if (strcmp(joint_type(l), "continuous") != 0)
            fprintf(f, " lower=\"%.17g\" upper=\"%.17g\"", isinf(l->llimit) ? -1e300 : l->llimit,
                    isinf(l->ulimit) ? 1e300 : l->ulimit);
        /* OpenHRP gives no effort but a current limit: the torque it allows at the joint is
         * the limit hilsim applies (bench_plant_params.c), so it is the URDF effort. */
        double effort = l->effort_max;
        double motor = l->climit * fabs(l->torque_const) * fabs(l->gear_ratio);
        if (!(effort > 0) && l->climit > 0 && isfinite(motor) && motor > 0)
            effort = motor;
        fprintf(f, " effort=\"%.17g\" velocity=\"%.17g\"/>\n", effort,
                isfinite(l->uvlimit) ? l->uvlimit : 0.0);
        if (l->damping > 0 || l->friction > 0)
            fprintf(f, "    <dynamics damping=\"%.17g\" friction=\"%.17g\"/>\n", l->damping,
                    l->friction);
        if (l->mimics && l->mimic_of >= 0 && (uint32_t)l->mimic_of < m->nlinks)
            fprintf(f, "    <mimic joint=\"%s\" multiplier=\"%.17g\" offset=\"%.17g\"/>\n",
                    xesc(e1, m->links[l->mimic_of].name), l->mimic_multiplier, l->mimic_offset);
    }
    fprintf(f, "  </joint>\n");
}

static void pose_element(FILE *f, const struct hs_pose *p)
{
    double rpy[3];
    rpy_of(p->R, rpy);
    fprintf(f, "<pose>%.17g %.17g %.17g %.17g %.17g %.17g</pose>", p->p[0], p->p[1], p->p[2],
            rpy[0], rpy[1], rpy[2]);
}

/* Sensors as Gazebo sensor tags (the convention urdf_sensor.c reads back): an accelerometer is
 * an imu whose <imu> holds only <linear_acceleration>, a gyro one holding only
 * <angular_velocity>, each keeping its name; a force sensor is a force_torque sensor on its
 * link with its pose. Written per type in sensor id order, which the loader numbers back.
 * Link surfaces go back as mu1, mu2, kp, kd; joint interfaces as a <ros2_control> block. */
static void write_gazebo(FILE *f, const struct hs_model *m)
{
    char e1[ESC_MAX], e2[ESC_MAX];
    static const enum hs_sensor_type order[3] = {HS_SENSOR_ACCEL, HS_SENSOR_GYRO, HS_SENSOR_FORCE};
    for (int t = 0; t < 3; t++)
        for (int32_t id = -1; id < 1024; id++)
            for (uint32_t k = 0; k < m->nsensors; k++) {
                const struct hs_sensor *s = &m->sensors[k];
                if (s->type != order[t] || s->sensor_id != id || s->link < 0 ||
                    (uint32_t)s->link >= m->nlinks)
                    continue;
                fprintf(f, "  <gazebo reference=\"%s\">\n    <sensor type=\"%s\" name=\"%s\">",
                        xesc(e1, m->links[s->link].name),
                        s->type == HS_SENSOR_FORCE ? "force_torque" : "imu", xesc(e2, s->name));
                pose_element(f, &s->pose);
                if (s->type == HS_SENSOR_ACCEL)
                    fprintf(f, "<imu><linear_acceleration/></imu>");
                else if (s->type == HS_SENSOR_GYRO)
                    fprintf(f, "<imu><angular_velocity/></imu>");
                fprintf(f, "</sensor>\n  </gazebo>\n");
            }
    static const struct {
        uint32_t bit;
        const char *tag;
        size_t off;
    } sf[] = {{HS_SURFACE_MU1, "mu1", offsetof(struct hs_link, mu1)},
              {HS_SURFACE_MU2, "mu2", offsetof(struct hs_link, mu2)},
              {HS_SURFACE_KP, "kp", offsetof(struct hs_link, contact_kp)},
              {HS_SURFACE_KD, "kd", offsetof(struct hs_link, contact_kd)}};
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        if (!l->surface_given)
            continue;
        fprintf(f, "  <gazebo reference=\"%s\">", xesc(e1, l->name));
        for (size_t k = 0; k < sizeof sf / sizeof sf[0]; k++)
            if (l->surface_given & sf[k].bit)
                fprintf(f, "<%s>%.17g</%s>", sf[k].tag,
                        *(const double *)((const char *)l + sf[k].off), sf[k].tag);
        fprintf(f, "</gazebo>\n");
    }
    static const char *const iface[HS_IFACE_MAX] = {"position", "velocity", "effort"};
    bool any = false;
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        if (!l->command_interfaces && !l->state_interfaces)
            continue;
        if (!any)
            fprintf(f,
                    "  <ros2_control name=\"%s\" type=\"system\">\n"
                    "    <hardware><plugin>hilsim</plugin></hardware>\n",
                    xesc(e1, m->name));
        any = true;
        fprintf(f, "    <joint name=\"%s\">\n", xesc(e1, l->name));
        for (int k = 0; k < HS_IFACE_MAX; k++)
            if (l->command_interfaces & HS_IFACE_BIT(k))
                fprintf(f, "      <command_interface name=\"%s\"/>\n", iface[k]);
        for (int k = 0; k < HS_IFACE_MAX; k++)
            if (l->state_interfaces & HS_IFACE_BIT(k))
                fprintf(f, "      <state_interface name=\"%s\"/>\n", iface[k]);
        fprintf(f, "    </joint>\n");
    }
    if (any)
        fprintf(f, "  </ros2_control>\n");
}

int hs_model_write_urdf(const struct hs_model *m, const char *path, uint32_t *ret_lost,
                        struct hs_diag *diag)
{
    char mesh_dir[PATH_MAX], mesh_rel[PATH_MAX];
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    size_t stem = dot && (!slash || dot > slash) ? (size_t)(dot - path) : strlen(path);
    if ((size_t)snprintf(mesh_dir, sizeof mesh_dir, "%.*s_meshes", (int)stem, path) >=
        sizeof mesh_dir)
        return hs_diag_set(diag, -ENAMETOOLONG, path, 0, 0, "path too long");
    const char *rel = strrchr(mesh_dir, '/');
    snprintf(mesh_rel, sizeof mesh_rel, "%s", rel ? rel + 1 : mesh_dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        int e = errno;
        return hs_diag_set(diag, -e, path, 0, 0, "cannot create the file: %s", strerror(e));
    }
    uint32_t lost = m->nextra_joints;
    for (uint32_t k = 0; k < m->nsensors; k++)
        lost += m->sensors[k].type == HS_SENSOR_VISION || m->sensors[k].type == HS_SENSOR_RANGE;
    char name[ESC_MAX];
    fprintf(
        f,
        "<?xml version=\"1.0\"?>\n<!-- exported by hilsim (hilsim model with the urdf option) -->\n"
        "<robot name=\"%s\">\n",
        xesc(name, m->name));
    for (uint32_t k = 0; k < m->nmaterials; k++) {
        fprintf(f, "  ");
        write_material(f, m, k);
    }
    fprintf(f, "  <link name=\"world\"/>\n");
    int r = 0;
    for (uint32_t i = 0; r == 0 && i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        lost += l->joint_type == HS_JOINT_CRAWLER;
        char e[ESC_MAX];
        fprintf(f, "  <link name=\"%s\">\n    <inertial>\n", xesc(e, l->name));
        static const double I3[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        origin(f, "      ", l->com, I3);
        fprintf(f, "      <mass value=\"%.17g\"/>\n", l->mass);
        fprintf(f,
                "      <inertia ixx=\"%.17g\" ixy=\"%.17g\" ixz=\"%.17g\" iyy=\"%.17g\" "
                "iyz=\"%.17g\" izz=\"%.17g\"/>\n    </inertial>\n",
                l->inertia[0], l->inertia[1], l->inertia[2], l->inertia[4], l->inertia[5],
                l->inertia[8]);
        for (uint32_t k = 0; r == 0 && k < l->geom_count; k++)
            r = write_geom(f, m, &m->geoms[l->geom_first + k], false, mesh_dir, mesh_rel, i, k,
                           &lost, diag);
        for (uint32_t k = 0; r == 0 && k < l->visual_count && l->visual_first + k < m->nvisuals;
             k++)
            r = write_geom(f, m, &m->visuals[l->visual_first + k], true, mesh_dir, mesh_rel, i, k,
                           &lost, diag);
        fprintf(f, "  </link>\n");
    }
    /* Actuated joints first, in jointId order, so that they are numbered back the same; then
     * every other joint once (a crawler has an id but is written fixed, so it goes there). */
    for (int32_t id = 0; r == 0 && id < (int32_t)m->njoint_ids; id++) {
        int i = hs_model_link_of_joint_id(m, id);
        if (i >= 0 && numbered_back(&m->links[i]))
            write_joint(f, m, (uint32_t)i);
    }
    for (uint32_t i = 0; r == 0 && i < m->nlinks; i++)
        if (!numbered_back(&m->links[i]))
            write_joint(f, m, i);
    /* Gear ratios as transmissions (the loader reads mechanicalReduction back). */
    char e1[ESC_MAX];
    for (uint32_t i = 0; r == 0 && i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        if (l->joint_id >= 0 && l->gear_ratio != 1 &&
            (l->joint_type == HS_JOINT_ROTATE || l->joint_type == HS_JOINT_SLIDE))
            fprintf(f,
                    "  <transmission name=\"%s_transmission\">\n"
                    "    <type>transmission_interface/SimpleTransmission</type>\n"
                    "    <joint name=\"%s\"/>\n"
                    "    <actuator name=\"%s_motor\"><mechanicalReduction>%.17g"
                    "</mechanicalReduction></actuator>\n  </transmission>\n",
                    xesc(e1, l->name), e1, e1, l->gear_ratio);
    }
    if (r == 0)
        write_gazebo(f, m);
    fprintf(f, "</robot>\n");
    if (fclose(f) != 0 && r == 0)
        r = hs_diag_set(diag, -EIO, path, 0, 0, "cannot write the file");
    if (ret_lost)
        *ret_lost = lost;
    return r;
}
