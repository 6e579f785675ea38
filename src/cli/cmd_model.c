/* hilsim model FILE [--json]: load an OpenHRP VRML97 or URDF model and print its link tree, joints,
 * masses, sensors and extra joints. Warnings go to stderr. */
#include <errno.h>
#include <stdbool.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_args.h"
#include "commands.h"
#include "hilsim/model.h"

static void usage(FILE *out)
{
    fprintf(out, "usage: hilsim model [--json] [--urdf OUT.urdf] [--package-path NAME=DIR|DIR]...\n"
                 "                    [--mesh-collision exact|box] FILE\n\n"
                 "Loads an OpenHRP VRML97 model (.wrl; Inline URLs are resolved next to the file)\n"
                 "or a URDF (.urdf; meshes via package:// through --package-path, then\n"
                 "$HS_PACKAGE_PATH, $ROS_PACKAGE_PATH, then the file's parent directories)\n"
                 "and prints the link tree (indented by depth) with joint types, jointIds, axes,\n"
                 "limits and masses, then the total mass, the sensors with their links and the\n"
                 "extra (closed-loop) joints. Warnings, such as gaps in jointId, go to stderr.\n"
                 "Errors name file:line:column and what was expected.\n\n"
                 "  --json   machine-readable output: fixed key order, numbers as %%.9g,\n"
                 "           absent limits as null\n"
                 "  --urdf OUT.urdf  also write the model as URDF (meshes as binary STL in\n"
                 "           OUT_meshes/; accel, gyro and force sensors as Gazebo sensor tags);\n"
                 "           cameras, extra joints and motor fields but the gear ratio are\n"
                 "           left out\n"
                 "  --package-path NAME=DIR  package://NAME/ is DIR (repeatable); a bare DIR\n"
                 "           is a directory of packages, as a $ROS_PACKAGE_PATH entry\n"
                 "  --mesh-collision box  URDF collision meshes as their bounding boxes\n"
                 "           (faster contacts; default exact: triangle meshes)\n\n"
                 "exit codes: 0 loaded, 1 runtime failure, 2 bad usage or bad model file\n");
}

static int depth_of(const struct hs_model *m, uint32_t i)
{
    int d = 0;
    for (int32_t p = m->links[i].parent; p >= 0 && d < (int)m->nlinks; p = m->links[p].parent)
        d++;
    return d;
}

static void print_text(const struct hs_model *m)
{
    printf("model %s: %u links, %u joint ids, %u geoms, total mass %.6g kg\n", m->name, m->nlinks,
           m->njoint_ids, m->ngeoms, hs_model_total_mass(m));
    printf("links:\n");
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        printf("  %*s%s  %s", 2 * depth_of(m, i), "", l->name, hs_joint_type_name(l->joint_type));
        if (l->joint_id >= 0)
            printf(" id %d", l->joint_id);
        if (l->joint_type == HS_JOINT_ROTATE || l->joint_type == HS_JOINT_SLIDE ||
            l->joint_type == HS_JOINT_CRAWLER)
            printf(" axis (%g %g %g)", l->axis[0], l->axis[1], l->axis[2]);
        if (isfinite(l->llimit) || isfinite(l->ulimit))
            printf(" limits [%g, %g]", l->llimit, l->ulimit);
        if (isfinite(l->lvlimit) || isfinite(l->uvlimit))
            printf(" vlimits [%g, %g]", l->lvlimit, l->uvlimit);
        if (isfinite(l->climit))
            printf(" climit %g A", l->climit);
        if (l->mimics)
            printf(" mimics %s x %g %+g", m->links[l->mimic_of].name, l->mimic_multiplier,
                   l->mimic_offset);
        if (l->command_interfaces)
            printf(" commands%s%s%s",
                   l->command_interfaces & HS_IFACE_BIT(HS_IFACE_POSITION) ? " position" : "",
                   l->command_interfaces & HS_IFACE_BIT(HS_IFACE_VELOCITY) ? " velocity" : "",
                   l->command_interfaces & HS_IFACE_BIT(HS_IFACE_EFFORT) ? " effort" : "");
        if (l->surface_given & HS_SURFACE_MU1)
            printf(" mu %g", l->mu1);
        printf("  mass %g kg com (%g %g %g)  geoms %u\n", l->mass, l->com[0], l->com[1], l->com[2],
               l->geom_count);
    }
    printf("total mass: %.9g kg\n", hs_model_total_mass(m));
    if (m->nsensors) {
        printf("sensors:\n");
        for (uint32_t i = 0; i < m->nsensors; i++) {
            const struct hs_sensor *s = &m->sensors[i];
            printf("  %s  %s id %d on %s at (%g %g %g)\n", s->name, hs_sensor_type_name(s->type),
                   s->sensor_id, m->links[s->link].name, s->pose.p[0], s->pose.p[1], s->pose.p[2]);
        }
    }
    if (m->nextra_joints) {
        printf("extra joints:\n");
        for (uint32_t i = 0; i < m->nextra_joints; i++) {
            const struct hs_extra_joint *e = &m->extra_joints[i];
            printf("  %s  %s %s (%g %g %g) - %s (%g %g %g) axis (%g %g %g)\n", e->name,
                   e->type == HS_EXTRA_PISTON ? "piston" : "ball", m->links[e->link1].name,
                   e->pos1[0], e->pos1[1], e->pos1[2], m->links[e->link2].name, e->pos2[0],
                   e->pos2[1], e->pos2[2], e->axis[0], e->axis[1], e->axis[2]);
        }
    }
}

static void json_str(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void json_num(double v)
{
    if (isfinite(v))
        printf("%.9g", v);
    else
        printf("null");
}

static void json_vec(const double *v, int n)
{
    putchar('[');
    for (int i = 0; i < n; i++) {
        if (i)
            putchar(',');
        json_num(v[i]);
    }
    putchar(']');
}

static void print_json(const struct hs_model *m)
{
    printf("{\"name\":");
    json_str(m->name);
    printf(",\"nlinks\":%u,\"njoint_ids\":%u,\"total_mass\":", m->nlinks, m->njoint_ids);
    json_num(hs_model_total_mass(m));
    printf(",\"links\":[");
    for (uint32_t i = 0; i < m->nlinks; i++) {
        const struct hs_link *l = &m->links[i];
        printf("%s\n{\"name\":", i ? "," : "");
        json_str(l->name);
        printf(",\"segment\":");
        json_str(l->segment_name);
        printf(",\"parent\":%d,\"depth\":%d,\"joint_type\":\"%s\",\"joint_id\":%d,\"origin_p\":",
               l->parent, depth_of(m, i), hs_joint_type_name(l->joint_type), l->joint_id);
        json_vec(l->origin.p, 3);
        printf(",\"origin_R\":");
        json_vec(l->origin.R, 9);
        printf(",\"axis\":");
        json_vec(l->axis, 3);
        printf(",\"llimit\":");
        json_num(l->llimit);
        printf(",\"ulimit\":");
        json_num(l->ulimit);
        printf(",\"lvlimit\":");
        json_num(l->lvlimit);
        printf(",\"uvlimit\":");
        json_num(l->uvlimit);
        printf(",\"gear_ratio\":");
        json_num(l->gear_ratio);
        printf(",\"gear_efficiency\":");
        json_num(l->gear_efficiency);
        printf(",\"rotor_inertia\":");
        json_num(l->rotor_inertia);
        printf(",\"rotor_resistor\":");
        json_num(l->rotor_resistor);
        printf(",\"torque_const\":");
        json_num(l->torque_const);
        printf(",\"encoder_pulse\":");
        json_num(l->encoder_pulse);
        printf(",\"climit\":"); /* null: no current limit */
        json_num(l->climit);
        printf(",\"effort_max\":"); /* 0: none given */
        json_num(l->effort_max);
        printf(",\"damping\":");
        json_num(l->damping);
        printf(",\"friction\":");
        json_num(l->friction);
        printf(",\"mimic\":");
        if (l->mimics) {
            printf("{\"joint\":");
            json_str(m->links[l->mimic_of].name);
            printf(",\"multiplier\":");
            json_num(l->mimic_multiplier);
            printf(",\"offset\":");
            json_num(l->mimic_offset);
            putchar('}');
        } else {
            printf("null");
        }
        static const char *const sn[4] = {"mu1", "mu2", "kp", "kd"};
        const double sv[4] = {l->mu1, l->mu2, l->contact_kp, l->contact_kd};
        printf(",\"surface\":{");
        for (int k = 0; k < 4; k++) {
            printf("%s\"%s\":", k ? "," : "", sn[k]);
            json_num(l->surface_given & (1u << k) ? sv[k] : NAN);
        }
        static const char *const ifn[HS_IFACE_MAX] = {"position", "velocity", "effort"};
        printf("},\"command_interfaces\":[");
        for (int k = 0, c = 0; k < HS_IFACE_MAX; k++)
            if (l->command_interfaces & HS_IFACE_BIT(k))
                printf("%s\"%s\"", c++ ? "," : "", ifn[k]);
        printf("],\"state_interfaces\":[");
        for (int k = 0, c = 0; k < HS_IFACE_MAX; k++)
            if (l->state_interfaces & HS_IFACE_BIT(k))
                printf("%s\"%s\"", c++ ? "," : "", ifn[k]);
        printf("],\"mass\":");
        json_num(l->mass);
        printf(",\"com\":");
        json_vec(l->com, 3);
        printf(",\"inertia\":");
        json_vec(l->inertia, 9);
        printf(",\"geoms\":[");
        for (uint32_t g = 0; g < l->geom_count; g++) {
            const struct hs_geom *ge = &m->geoms[l->geom_first + g];
            static const char *const gn[HS_GEOM_TYPE_MAX] = {"box", "sphere", "cylinder", "cone",
                                                             "mesh"};
            printf("%s{\"type\":\"%s\",\"p\":", g ? "," : "", gn[ge->type]);
            json_vec(ge->pose.p, 3);
            printf(",\"R\":");
            json_vec(ge->pose.R, 9);
            switch (ge->type) {
            case HS_GEOM_BOX:
                printf(",\"size\":");
                json_vec(ge->u.box.size, 3);
                break;
            case HS_GEOM_SPHERE:
                printf(",\"radius\":");
                json_num(ge->u.sphere.radius);
                break;
            case HS_GEOM_CYLINDER:
                printf(",\"radius\":");
                json_num(ge->u.cylinder.radius);
                printf(",\"height\":");
                json_num(ge->u.cylinder.height);
                break;
            case HS_GEOM_CONE:
                printf(",\"bottom_radius\":");
                json_num(ge->u.cone.bottom_radius);
                printf(",\"height\":");
                json_num(ge->u.cone.height);
                break;
            default:
                printf(",\"nvertices\":%u,\"ntriangles\":%u", ge->u.mesh.nvertices,
                       ge->u.mesh.ntriangles);
                break;
            }
            putchar('}');
        }
        printf("]}");
    }
    printf("],\n\"sensors\":[");
    for (uint32_t i = 0; i < m->nsensors; i++) {
        const struct hs_sensor *s = &m->sensors[i];
        printf("%s\n{\"name\":", i ? "," : "");
        json_str(s->name);
        printf(",\"type\":\"%s\",\"sensor_id\":%d,\"link\":", hs_sensor_type_name(s->type),
               s->sensor_id);
        json_str(m->links[s->link].name);
        printf(",\"p\":");
        json_vec(s->pose.p, 3);
        printf(",\"R\":");
        json_vec(s->pose.R, 9);
        printf(",\"max\":");
        json_vec(s->max, 3);
        if (s->type == HS_SENSOR_FORCE) {
            printf(",\"max_torque\":");
            json_vec(s->max_torque, 3);
        }
        putchar('}');
    }
    printf("],\n\"extra_joints\":[");
    for (uint32_t i = 0; i < m->nextra_joints; i++) {
        const struct hs_extra_joint *e = &m->extra_joints[i];
        printf("%s\n{\"name\":", i ? "," : "");
        json_str(e->name);
        printf(",\"type\":\"%s\",\"link1\":", e->type == HS_EXTRA_PISTON ? "piston" : "ball");
        json_str(m->links[e->link1].name);
        printf(",\"link2\":");
        json_str(m->links[e->link2].name);
        printf(",\"pos1\":");
        json_vec(e->pos1, 3);
        printf(",\"pos2\":");
        json_vec(e->pos2, 3);
        printf(",\"axis\":");
        json_vec(e->axis, 3);
        putchar('}');
    }
    printf("],\n\"warnings\":[");
    for (uint32_t i = 0; i < m->nwarnings; i++) {
        printf("%s", i ? "," : "");
        json_str(m->warnings[i]);
    }
    printf("]}\n");
}

#define HS_MODEL_MAX_PACKAGES 64

/* --package-path NAME=DIR (package NAME is DIR) or DIR (a directory of packages). The name is
 * cut out of the argument in place. */
static int add_package(char *arg, struct hs_model_package *pk, uint32_t *n)
{
    if (*n >= HS_MODEL_MAX_PACKAGES) {
        fprintf(stderr, "hilsim model: more than %d --package-path\n", HS_MODEL_MAX_PACKAGES);
        return HS_EXIT_USAGE;
    }
    char *eq = strchr(arg, '=');
    if (eq) {
        *eq = '\0';
        pk[*n] = (struct hs_model_package){.name = arg, .dir = eq + 1};
    } else {
        pk[*n] = (struct hs_model_package){.name = NULL, .dir = arg};
    }
    if (!pk[*n].dir[0] || (eq && !arg[0])) {
        fprintf(stderr, "hilsim model: --package-path needs NAME=DIR or DIR\n");
        return HS_EXIT_USAGE;
    }
    (*n)++;
    return 0;
}

int hs_cmd_model(int argc, char **argv)
{
    bool json = false;
    const char *file = NULL, *urdf_out = NULL;
    struct hs_model_package packages[HS_MODEL_MAX_PACKAGES];
    struct hs_model_options opts = {.packages = packages};
    /* Options with a value, which the shared flag parser does not take: out first. */
    char *args[64];
    int nargs = 0;
    for (int i = 0; i < argc; i++) {
        bool val =
            i >= 1 && (strcmp(argv[i], "--urdf") == 0 || strcmp(argv[i], "--package-path") == 0 ||
                       strcmp(argv[i], "--mesh-collision") == 0);
        if (val && i + 1 >= argc) {
            fprintf(stderr, "hilsim model: %s needs a value\n", argv[i]);
            return HS_EXIT_USAGE;
        }
        if (val && strcmp(argv[i], "--urdf") == 0) {
            urdf_out = argv[++i];
        } else if (val && strcmp(argv[i], "--package-path") == 0) {
            int rc = add_package(argv[++i], packages, &opts.npackages);
            if (rc)
                return rc;
        } else if (val) {
            const char *v = argv[++i];
            if (strcmp(v, "exact") == 0)
                opts.mesh_approx = HS_MESH_EXACT;
            else if (strcmp(v, "box") == 0)
                opts.mesh_approx = HS_MESH_BOX;
            else {
                fprintf(stderr, "hilsim model: --mesh-collision is exact or box, not '%s'\n", v);
                return HS_EXIT_USAGE;
            }
        } else if (nargs < (int)(sizeof args / sizeof args[0])) {
            args[nargs++] = argv[i];
        } else {
            fprintf(stderr, "hilsim model: too many arguments\n");
            return HS_EXIT_USAGE;
        }
    }
    const struct hs_cli_flag flags[] = {{"--json", NULL, &json}, {NULL, NULL, NULL}};
    int rc = hs__cli_one_file("model", nargs, args, 1, flags, usage, &file);
    if (rc)
        return rc < 0 ? HS_EXIT_OK : rc;
    struct hs_model *m = NULL;
    struct hs_diag diag = {0};
    int r = hs_model_load_opts(file, &opts, &m, &diag);
    if (r < 0) {
        hs__cli_print_diag("model", &diag);
        return r == -ENOMEM ? HS_EXIT_FAILURE : HS_EXIT_USAGE;
    }
    for (uint32_t i = 0; i < m->nwarnings; i++)
        fprintf(stderr, "hilsim model: warning: %s\n", m->warnings[i]);
    if (urdf_out) {
        uint32_t lost = 0;
        if (hs_model_write_urdf(m, urdf_out, &lost, &diag) < 0) {
            hs__cli_print_diag("model", &diag);
            hs_model_free(m);
            return HS_EXIT_FAILURE;
        }
        fprintf(stderr,
                "hilsim model: wrote %s (%u vision/range sensor, extra-joint, crawler or cone "
                "item%s not expressible in URDF left out; of the motor fields only gear ratios "
                "are written)\n",
                urdf_out, lost, lost == 1 ? "" : "s");
    }
    if (json)
        print_json(m);
    else
        print_text(m);
    rc = fflush(stdout) == 0 && !ferror(stdout) ? HS_EXIT_OK : HS_EXIT_FAILURE;
    hs_model_free(m);
    return rc;
}
